"""The typed functional API: ``cluster_ci``, ``icc``, ``design_effect`` and formula helpers.

Each function validates its options, reduces the data to per-cluster sums (``_frame``), calls
the numeric core (``clusterstats.core``) and wraps the numbers in a result dataclass. The
``.eval`` accessors call these functions and nothing else.
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Sequence
from typing import Any, Literal

import numpy as np
import pandas as pd

from clusterstats._frame import Prepared, _as_labels, check_binary, prepare
from clusterstats.core import intervals as iv
from clusterstats.core.intervals import Method
from clusterstats.core.summary import summarize_design_effect, summarize_icc, summarize_interval
from clusterstats.core.variance import ESTIMANDS, design_effect_kish
from clusterstats.errors import InvalidOptionError, InvalidOutcomeError
from clusterstats.results import (
    ICC,
    ClusterCI,
    Comparison,
    DesignEffect,
    GroupedResults,
    PairedDelta,
)

__all__ = [
    "adjusted_wilson_interval",
    "cluster_ci",
    "compare",
    "design_effect",
    "effective_n",
    "icc",
    "kish_design_effect",
    "paired_delta",
    "rule_of_three",
    "wilson_interval",
]

Estimand = Literal["pooled", "cluster_mean"]
Missing = Literal["drop", "fail", "raise"]
By = Hashable | Sequence[Hashable]


def _check_confidence(confidence: float) -> float:
    try:
        value = float(confidence)
    except (TypeError, ValueError):
        raise InvalidOptionError(f"confidence must be a number, got {confidence!r}") from None
    if not 0.0 < value < 1.0:
        raise InvalidOptionError(
            f"confidence must be strictly between 0 and 1 (e.g. 0.95), got {confidence!r}"
        )
    return value


def _check_estimand(estimand: str) -> str:
    if estimand not in ESTIMANDS:
        raise InvalidOptionError(f"estimand must be one of {ESTIMANDS}, got {estimand!r}")
    return estimand


def _group_or_single(prepared: list[Prepared], over: Hashable | None, build):
    results = tuple(build(p) for p in prepared)
    if over is None:
        return results[0]
    return GroupedResults(over=str(over), groups=tuple(p.group for p in prepared), results=results)


def _size_summary(p: Prepared) -> dict[str, Any]:
    counts = p.sums.counts
    return {
        "n_rows": p.sums.n_rows,
        "n_clusters": p.sums.n_clusters,
        "cluster_size_mean": float(counts.mean()),
    }


def _check_ci_options(method: str, icc: float | None, n_resamples: int) -> None:
    if method not in iv.METHODS:
        raise InvalidOptionError(f"method must be one of {iv.METHODS}, got {method!r}")
    if icc is not None and not 0.0 <= float(icc) <= 1.0:
        raise InvalidOptionError(f"icc must be between 0 and 1, got {icc!r}")
    if not (isinstance(n_resamples, (int, np.integer)) and n_resamples >= 2):
        raise InvalidOptionError(f"n_resamples must be an integer >= 2, got {n_resamples!r}")


def _check_binary_method(method: str, is_binary: bool) -> None:
    if method in iv.BINARY_ONLY_METHODS and not is_binary:
        raise InvalidOutcomeError(
            f"method {method!r} needs a binary outcome (values 0/1), but the outcome has other "
            "values; use 'cr2', 'cr1' or a bootstrap method for continuous scores"
        )


def _build_ci(
    p: Prepared,
    *,
    estimand: str,
    method: str,
    confidence: float,
    icc: float | None,
    n_resamples: int,
    rng: int | np.random.Generator | None,
    missing: str,
) -> ClusterCI:
    """One ``ClusterCI`` from one group's reduced data (shared by the pandas and xarray paths)."""
    # An int seed (or None) gives every group its own generator from that seed, so a
    # group's interval is the same as for that group alone; a Generator is shared.
    generator = rng if isinstance(rng, np.random.Generator) else np.random.default_rng(rng)
    s = summarize_interval(
        p.sums,
        estimand=estimand,
        method=method,
        confidence=confidence,
        is_binary=p.is_binary,
        icc_prior=None if icc is None else float(icc),
        n_resamples=int(n_resamples),
        rng=generator,
    )
    notes = list(s.notes)
    if p.n_missing:
        verb = "counted as failures" if missing == "fail" else "dropped"
        notes.insert(
            0,
            f"{p.n_missing} rows with a missing outcome (in "
            f"{p.n_missing_clusters} clusters) were {verb}",
        )
    return ClusterCI(
        **{**s._asdict(), "notes": tuple(notes)},
        confidence=confidence,
        estimand=estimand,
        **_size_summary(p),
        cluster_size_min=int(p.sums.counts.min()),
        cluster_size_max=int(p.sums.counts.max()),
        n_missing=p.n_missing,
        n_missing_clusters=p.n_missing_clusters,
        outcome=p.outcome,
        by=p.by,
    )


PAIRED_METHODS = (
    "auto",
    "naive",
    "cr1",
    "cr2",
    "bootstrap",
    "bootstrap_bca",
    "bootstrap_percentile",
)


def _check_paired_method(method: str) -> None:
    if method not in PAIRED_METHODS:
        raise InvalidOptionError(f"method must be one of {PAIRED_METHODS}, got {method!r}")


def _build_icc(p: Prepared, *, confidence: float) -> ICC:
    s = summarize_icc(p.sums, confidence=confidence)
    return ICC(
        **s._asdict(),
        confidence=confidence,
        method="anova",
        **_size_summary(p),
        outcome=p.outcome,
        by=p.by,
    )


def _build_design_effect(p: Prepared, *, estimand: str) -> DesignEffect:
    s = summarize_design_effect(p.sums, estimand=estimand)
    return DesignEffect(
        **s._asdict(), estimand=estimand, **_size_summary(p), outcome=p.outcome, by=p.by
    )


def cluster_ci(
    data: Any,
    outcome: Any,
    by: By,
    *,
    estimand: Estimand = "pooled",
    method: Method = "auto",
    confidence: float = 0.95,
    over: Hashable | None = None,
    missing: Missing = "drop",
    icc: float | None = None,
    n_resamples: int = 9999,
    rng: int | np.random.Generator | None = None,
) -> ClusterCI | GroupedResults[ClusterCI]:
    """Confidence interval for a mean (pass rate or score) of clustered rows.

    Parameters
    ----------
    data : pandas.DataFrame or None
        One row per graded example. With ``None``, ``outcome`` and ``by`` are array-likes.
    outcome : column label (or array-like)
        Binary (0/1, bool) or continuous outcome.
    by : column label, list of labels (or array-like)
        The cluster; several columns are combined (a cluster is one combination).
    estimand : {"pooled", "cluster_mean"}
        ``"pooled"`` (default): share over all rows, ``sum(y) / n``. ``"cluster_mean"``: mean
        of the cluster means, each cluster counting once. Always named in the result.
    method : str
        ``"auto"`` (default; see :func:`clusterstats.core.intervals.auto_method`),
        ``"naive"`` (iid rows, for comparison), ``"cr1"`` (cluster-robust, ``t(G-1)``),
        ``"cr2"`` (Bell–McCaffrey, Satterthwaite df), ``"wilson"`` (Wilson on the effective
        n, binary), ``"korn_graubard"`` (Clopper–Pearson on the df-adjusted effective n,
        binary), ``"bootstrap"``/``"bootstrap_bca"`` and ``"bootstrap_percentile"`` (cluster
        bootstrap; whole clusters are resampled).
    confidence : float
        Nominal coverage, strictly between 0 and 1.
    over : column label, optional
        Compute one interval per value of this column (e.g. ``"model"``).
    missing : {"drop", "fail", "raise"}
        Missing outcomes are dropped (counted in the result), counted as failures (binary
        outcomes), or raise :class:`~clusterstats.errors.MissingOutcomeError`.
    icc : float, optional
        An ICC from a pilot; used only when the data have no variance (e.g. no failures) to
        set the effective n of the fallback interval to ``n / (1 + (m̄ - 1) icc)``.
    n_resamples : int
        Bootstrap replicates.
    rng : int or numpy.random.Generator, optional
        Seed or generator for the bootstrap. With ``over=``, an int seed seeds each group's
        bootstrap alike, so each group's interval equals the one computed for that group alone.

    Returns
    -------
    ClusterCI, or GroupedResults of ClusterCI when ``over`` is given.

    Warns
    -----
    FewClustersWarning
        Fewer than 20 clusters.
    DegenerateDataWarning
        Zero variance (e.g. every outcome passed); a Clopper–Pearson fallback is used.

    Examples
    --------
    >>> import pandas as pd, clusterstats
    >>> df = pd.DataFrame({"doc": [d for d in range(30) for _ in range(4)],
    ...                    "passed": [int((d * 7 + i) % 5 > 1) for d in range(30)
    ...                               for i in range(4)]})
    >>> res = clusterstats.cluster_ci(df, "passed", by="doc")
    >>> res.method, res.estimand, round(res.estimate, 3)
    ('korn_graubard_guarded', 'pooled', 0.6)
    """
    confidence = _check_confidence(confidence)
    _check_estimand(estimand)
    _check_ci_options(method, icc, n_resamples)
    prepared = prepare(data, outcome, by, over=over, missing=missing)
    _check_binary_method(method, prepared[0].is_binary)

    def build(p: Prepared) -> ClusterCI:
        return _build_ci(
            p,
            estimand=estimand,
            method=method,
            confidence=confidence,
            icc=icc,
            n_resamples=n_resamples,
            rng=rng,
            missing=missing,
        )

    return _group_or_single(prepared, over, build)


def icc(
    data: Any,
    outcome: Any,
    by: By,
    *,
    confidence: float = 0.95,
    over: Hashable | None = None,
    missing: Missing = "drop",
) -> ICC | GroupedResults[ICC]:
    """Intraclass correlation: the share of outcome variance that lies between clusters.

    One-way ANOVA estimator with the ``n0`` average cluster size (valid for unequal sizes and
    binary outcomes), with Searle's F interval (exact for balanced clusters; with ``n0`` in
    place of the common size for unbalanced ones, as R's ``ICC::ICCest``).
    The raw estimate can be negative; ``icc_truncated`` is ``max(icc, 0)``. When the ICC is
    undefined (all outcomes equal, every cluster of size 1) the result holds NaN and a
    :class:`~clusterstats.errors.DegenerateDataWarning` is emitted.

    Examples
    --------
    >>> import pandas as pd, clusterstats
    >>> df = pd.DataFrame({"g": [1, 1, 2, 2, 3, 3], "y": [1.0, 1.2, 2.0, 2.2, 3.1, 2.9]})
    >>> round(clusterstats.icc(df, "y", by="g").icc, 3)
    0.978
    """
    confidence = _check_confidence(confidence)
    prepared = prepare(data, outcome, by, over=over, missing=missing)

    return _group_or_single(prepared, over, lambda p: _build_icc(p, confidence=confidence))


def design_effect(
    data: Any,
    outcome: Any,
    by: By,
    *,
    estimand: Estimand = "pooled",
    over: Hashable | None = None,
    missing: Missing = "drop",
) -> DesignEffect | GroupedResults[DesignEffect]:
    """Design effect of clustering: how much it inflates the variance of the mean.

    Reports the empirical design effect (CR1 variance ÷ iid variance, R survey's
    ``deff="replace"``), Kish's ``1 + (m̄ - 1) ρ̂`` and the unequal-size value
    ``1 + ρ̂ (Σn²/N - 1)``, the effective n and the widening factor ``sqrt(deff)``.

    Examples
    --------
    >>> import pandas as pd, clusterstats
    >>> df = pd.DataFrame({"g": [1, 1, 2, 2, 3, 3], "y": [1.0, 1.2, 2.0, 2.2, 3.1, 2.9]})
    >>> d = clusterstats.design_effect(df, "y", by="g")
    >>> round(d.empirical, 3), round(d.n_eff, 2)
    (2.459, 2.44)
    """
    _check_estimand(estimand)
    prepared = prepare(data, outcome, by, over=over, missing=missing)

    return _group_or_single(prepared, over, lambda p: _build_design_effect(p, estimand=estimand))


# -- formula helpers for planning by hand ---------------------------------------------------


def kish_design_effect(cluster_size: float, icc: float) -> float:
    """Kish's design effect ``1 + (m - 1) * icc`` for clusters of (average) size ``m``.

    Examples
    --------
    >>> round(kish_design_effect(5, 0.3), 10), round(kish_design_effect(10, 0.5), 10)
    (2.2, 5.5)
    """
    if cluster_size < 1:
        raise InvalidOptionError(f"cluster_size must be at least 1, got {cluster_size!r}")
    if not 0.0 <= icc <= 1.0:
        raise InvalidOptionError(
            f"icc must be between 0 and 1 for planning, got {icc!r} (use 0 for a negative "
            "estimate: it means no detectable clustering)"
        )
    return design_effect_kish(float(cluster_size), float(icc))


def effective_n(n: float, design_effect: float) -> float:
    """The number of independent rows that ``n`` clustered rows are worth: ``n / deff``.

    Examples
    --------
    >>> round(effective_n(200, 2.2), 1), round(effective_n(1000, 5.5), 1)
    (90.9, 181.8)
    """
    if not design_effect > 0:
        raise InvalidOptionError(f"design_effect must be positive, got {design_effect!r}")
    return float(n) / float(design_effect)


def wilson_interval(successes: float, n: float, *, confidence: float = 0.95) -> tuple[float, float]:
    """Wilson score interval for ``successes`` out of ``n`` (both may be fractional).

    Examples
    --------
    >>> [round(b, 3) for b in wilson_interval(30, 300)]
    [0.071, 0.139]
    """
    if not n > 0 or not 0 <= successes <= n:
        raise InvalidOptionError(f"need 0 <= successes <= n and n > 0, got {successes}, {n}")
    return iv.wilson(float(successes) / float(n), float(n), _check_confidence(confidence))


def adjusted_wilson_interval(
    successes: float, n: float, *, cluster_size: float, icc: float, confidence: float = 0.95
) -> tuple[float, float]:
    """Wilson interval on the Kish effective n, keeping the observed proportion.

    ``n_eff = n / (1 + (cluster_size - 1) * icc)``; the proportion ``successes / n`` is kept
    and the normal quantile is used (the convention of the seed articles' worked example).

    Examples
    --------
    30 cases × 10 reruns, 30 failures, ρ = 0.3:

    >>> [round(b, 3) for b in adjusted_wilson_interval(30, 300, cluster_size=10, icc=0.3)]
    [0.052, 0.184]
    """
    n_eff = effective_n(n, kish_design_effect(cluster_size, icc))
    if not n > 0 or not 0 <= successes <= n:
        raise InvalidOptionError(f"need 0 <= successes <= n and n > 0, got {successes}, {n}")
    if math.isnan(n_eff):
        raise InvalidOptionError("the effective n is undefined")
    return iv.wilson(float(successes) / float(n), n_eff, _check_confidence(confidence))


def rule_of_three(
    n_rows: int,
    *,
    n_clusters: int | None = None,
    icc: float | None = None,
    confidence: float = 0.95,
) -> float:
    """Upper confidence bound on a failure rate when no failure was seen, for clustered runs.

    With ``n`` independent runs and no failure, the exact one-sided bound is
    ``1 - (1 - confidence)^(1/n)``, about ``3/n`` at 95% (the rule of three). Clustered runs
    are worth fewer independent ones, so ``n`` is replaced by an effective n:

    * with ``icc``: ``n_rows / (1 + (m̄ - 1) icc)``, ``m̄ = n_rows / n_clusters``;
    * without it: ``n_clusters`` (each cluster counts once: the conservative ρ = 1);
    * with neither: ``n_rows`` (independent runs).

    Examples
    --------
    300 passing runs of 30 test cases (10 reruns each):

    >>> round(rule_of_three(300), 4)  # as if independent: about 3/300
    0.0099
    >>> round(rule_of_three(300, n_clusters=30, icc=0.3), 4)  # about 3/81
    0.0363
    >>> round(rule_of_three(300, n_clusters=30), 4)  # about 3/30
    0.095
    """
    confidence = _check_confidence(confidence)
    if not n_rows >= 1:
        raise InvalidOptionError(f"n_rows must be at least 1, got {n_rows!r}")
    if n_clusters is None:
        if icc is not None:
            raise InvalidOptionError("icc needs n_clusters (to know the cluster size)")
        n_eff = float(n_rows)
    elif not 1 <= n_clusters <= n_rows:
        raise InvalidOptionError(f"need 1 <= n_clusters <= n_rows, got {n_clusters!r}")
    elif icc is None:
        n_eff = float(n_clusters)
    else:
        n_eff = effective_n(n_rows, kish_design_effect(n_rows / n_clusters, icc))
    return 1.0 - (1.0 - confidence) ** (1.0 / n_eff)


def paired_delta(
    data: Any,
    other: Any,
    outcome: Hashable,
    by: By,
    *,
    on: Hashable | Sequence[Hashable] | None = None,
    rerun: Hashable | None = None,
    how: Literal["strict", "inner"] = "strict",
    estimand: Estimand = "pooled",
    method: Literal[
        "auto", "naive", "cr1", "cr2", "bootstrap", "bootstrap_bca", "bootstrap_percentile"
    ] = "auto",
    confidence: float = 0.95,
    missing: Missing = "drop",
    labels: tuple[str, str] | None = None,
    n_resamples: int = 9999,
    rng: int | np.random.Generator | None = None,
) -> PairedDelta:
    """Paired difference between two sets of results on the same clustered items.

    Two layouts:

    * **two frames** (``other`` is a DataFrame): ``delta = data - other`` on column
      ``outcome``, items matched on ``on`` (column(s), or the index when ``None``);
    * **two columns** (``other`` is a column label of ``data``): ``delta = data[other] -
      data[outcome]``, each row (or each ``on`` key) an item. So
      ``df.eval.paired_delta("passed_b", "passed_a", by="doc")`` is B - A.

    Several rows with one key are an error unless ``rerun`` names the column of the run id:
    then they are reruns of the item and are averaged first (the result reports the largest
    number of runs and the share of variance that rerun noise contributes). Items are then
    paired; the interval is cluster-robust on the per-item differences (``cr2`` by
    default, ``cr1``, ``naive`` ignoring clusters) or a paired cluster bootstrap (both sides'
    items of a drawn cluster go together).

    Parameters
    ----------
    how : {"strict", "inner"}
        ``"strict"``: items present on one side only are an error naming counts and examples;
        ``"inner"``: compare the common items and report how many were dropped per side.
        An item in different clusters on the two sides is always an error.
    estimand : {"pooled", "cluster_mean"}
        ``"pooled"``: every item counts once; ``"cluster_mean"``: every cluster counts once.
    missing : {"drop", "fail", "raise"}
        As in ``cluster_ci``. With ``"drop"``, an item with no non-missing run on a side is
        dropped from the comparison and counted in ``n_missing_items``: comparing a model's
        answered questions with another model's all questions would not be paired.
    labels : (str, str), optional
        Names of the two sides in the output (default: "A", "B", or the two column names).

    Examples
    --------
    >>> import pandas as pd, clusterstats
    >>> df = pd.DataFrame({"doc": [d for d in range(24) for _ in range(3)],
    ...                    "new": [int((d + i) % 4 != 0) for d in range(24) for i in range(3)],
    ...                    "old": [int((d + i) % 3 != 0) for d in range(24) for i in range(3)]})
    >>> d = df.eval.paired_delta("new", "old", by="doc")
    >>> d.label_a, d.label_b, round(d.delta, 4), d.method
    ('new', 'old', 0.0833, 'cr2')
    """
    from clusterstats._pairing import align

    confidence = _check_confidence(confidence)
    _check_estimand(estimand)
    _check_paired_method(method)
    if not isinstance(data, pd.DataFrame):
        raise TypeError(f"data must be a pandas DataFrame, got {type(data).__name__}")
    if isinstance(other, pd.DataFrame):
        frame_b, outcome_a, outcome_b = other, outcome, outcome
        default_labels = ("A", "B")
    else:
        frame_b, outcome_a, outcome_b = data, other, outcome
        default_labels = (str(other), str(outcome))
    label_a, label_b = labels if labels is not None else default_labels
    items = align(
        data, frame_b, outcome_a, outcome_b, by, on=on, how=how, missing=missing, rerun=rerun
    )
    return _build_paired(
        items,
        label_a=label_a,
        label_b=label_b,
        outcome=str(outcome_b) if isinstance(other, pd.DataFrame) else None,
        by=tuple(str(b) for b in _as_labels(by)),
        estimand=estimand,
        method=method,
        confidence=confidence,
        missing=missing,
        n_resamples=n_resamples,
        rng=rng,
    )


def _build_paired(
    items: Any,
    *,
    label_a: str,
    label_b: str,
    outcome: str | None,
    by: tuple[str, ...],
    estimand: str,
    method: str,
    confidence: float,
    missing: str,
    n_resamples: int,
    rng: int | np.random.Generator | None,
) -> PairedDelta:
    """One ``PairedDelta`` from matched per-item values (shared by the pandas and xarray
    paths); ``items`` is a ``_pairing.PairedItems``."""
    from clusterstats.core.paired import summarize_paired

    s = summarize_paired(
        items.a,
        items.b,
        items.codes,
        estimand=estimand,
        method=method,
        confidence=confidence,
        single_run_binary=items.single_run_binary,
        within_a=items.within_a,
        runs_a=items.runs_a,
        within_b=items.within_b,
        runs_b=items.runs_b,
        n_resamples=int(n_resamples),
        rng=rng if isinstance(rng, np.random.Generator) else np.random.default_rng(rng),
    )
    notes = list(s.notes)
    if items.n_dropped_a or items.n_dropped_b:
        notes.insert(
            0,
            f"how='inner': {items.n_dropped_a} items only in {label_a} and "
            f"{items.n_dropped_b} only in {label_b} were left out",
        )
    if items.n_missing_items:
        verb = "dropped" if missing == "drop" else "handled"
        notes.insert(
            0, f"{items.n_missing_items} items with a missing outcome on one side were {verb}"
        )
    return PairedDelta(
        **{**s._asdict(), "notes": tuple(notes)},
        confidence=confidence,
        estimand=estimand,
        n_items=int(items.a.shape[0]),
        n_clusters=int(items.codes.max()) + 1,
        n_dropped_a=items.n_dropped_a,
        n_dropped_b=items.n_dropped_b,
        n_missing_items=items.n_missing_items,
        max_runs=items.max_runs,
        label_a=label_a,
        label_b=label_b,
        outcome=outcome,
        by=by,
    )


def compare(
    data: Any,
    outcome: Hashable,
    by: By,
    *,
    model: Hashable,
    on: Hashable | Sequence[Hashable] | None = None,
    rerun: Hashable | None = None,
    baseline: Any = None,
    how: Literal["strict", "inner"] = "strict",
    estimand: Estimand = "pooled",
    method: Literal["auto", "cr1", "cr2", "bootstrap", "bootstrap_percentile"] = "auto",
    adjust: Literal["holm", "bh", "none"] = "holm",
    confidence: float = 0.95,
    missing: Missing = "drop",
    n_resamples: int = 9999,
    rng: int | np.random.Generator | None = None,
) -> Comparison:
    """Compare many models on the same clustered items.

    ``data`` is long: one row per (model, item, run), the model in column ``model`` and the
    item key in ``on`` (column(s), or the index); rows sharing the model and the item are an
    error unless ``rerun`` names the run-id column, and then are averaged. Returns a
    :class:`~clusterstats.Comparison` with every pairwise difference (or each model against
    ``baseline``), cluster-robust (CR2 by default) with p-values adjusted across the family
    (``adjust="holm"`` controls the family-wise error; ``"bh"`` the false discovery rate),
    and a leaderboard: each model's score with its ``cluster_ci`` interval and the interval
    of its rank from one cluster bootstrap whose draws all models share. Models come in
    sorted label order and each pair is ``model_a - model_b`` in that order, whatever the
    order of the rows.

    Examples
    --------
    >>> import clusterstats
    >>> demo = clusterstats.load_demo_data()
    >>> res = demo.eval.compare("correct", by="src", model="model", on="question_id",
    ...                         how="inner", rng=0)
    >>> res.leaderboard()["model"].tolist()[0]
    'Meta-Llama-3.1-70B-Instruct'
    >>> len(res.pairs())
    6
    """
    import warnings as _warnings

    from clusterstats._pairing import model_matrix
    from clusterstats.core.grouping import ClusterSums
    from clusterstats.core.paired import summarize_comparison
    from clusterstats.errors import ClusterStatsWarning, warn

    confidence = _check_confidence(confidence)
    _check_estimand(estimand)
    methods = ("auto", "cr1", "cr2", "bootstrap", "bootstrap_percentile")
    if method not in methods:
        raise InvalidOptionError(f"method must be one of {methods}, got {method!r}")
    if adjust not in ("holm", "bh", "none"):
        raise InvalidOptionError(f"adjust must be 'holm', 'bh' or 'none', got {adjust!r}")
    if not isinstance(data, pd.DataFrame):
        raise TypeError(f"data must be a pandas DataFrame, got {type(data).__name__}")
    mm = model_matrix(data, outcome, by, model=model, on=on, how=how, missing=missing, rerun=rerun)
    baseline_index = None
    if baseline is not None:
        if baseline not in mm.models:
            raise InvalidOptionError(
                f"baseline {baseline!r} is not one of the models {list(mm.models)}"
            )
        baseline_index = mm.models.index(baseline)
    n_clusters = int(mm.codes.max()) + 1
    counts = np.bincount(mm.codes, minlength=n_clusters).astype(np.float64)
    totals = np.column_stack(
        [np.bincount(mm.codes, weights=row, minlength=n_clusters) for row in mm.values]
    )
    generator = rng if isinstance(rng, np.random.Generator) else np.random.default_rng(rng)
    s = summarize_comparison(
        totals,
        counts,
        estimand=estimand,
        method=method,
        adjust=adjust,
        confidence=confidence,
        baseline=baseline_index,
        n_resamples=int(n_resamples),
        rng=generator,
    )
    is_binary = check_binary(mm.values.ravel())  # a view: values is C-contiguous
    score_low, score_high, score_method, warned = [], [], "", {}
    with _warnings.catch_warnings(record=True) as caught:
        _warnings.simplefilter("always", ClusterStatsWarning)
        for j, row in enumerate(mm.values):
            squares = (
                totals[:, j]  # 0/1 values are their own squares
                if is_binary
                else np.bincount(mm.codes, weights=row * row, minlength=n_clusters)
            )
            ci = summarize_interval(
                ClusterSums(counts, totals[:, j], squares),
                estimand=estimand,
                method="auto",
                confidence=confidence,
                is_binary=is_binary,
            )
            score_low.append(ci.low)
            score_high.append(ci.high)
            score_method = score_method or ci.method
    for w in caught:  # one warning per distinct message, not one per model
        warned.setdefault(str(w.message), w.category)
    for message, category in warned.items():
        warn(message, category)
    notes = list(warned)
    if mm.n_dropped_items:
        notes.append(
            f"how='inner': {mm.n_dropped_items} items missing for some model were left out"
        )
    if mm.n_missing_items:
        notes.append(
            f"{mm.n_missing_items} items with a missing outcome for some model were dropped"
        )
    labels = mm.models
    return Comparison(
        models=labels,
        score=tuple(s.means),
        score_low=tuple(score_low),
        score_high=tuple(score_high),
        score_method=score_method,
        rank=tuple(s.rank),
        rank_low=tuple(s.rank_low),
        rank_high=tuple(s.rank_high),
        pair_a=tuple(labels[i] for i in s.pair_a),
        pair_b=tuple(labels[i] for i in s.pair_b),
        delta=tuple(s.delta),
        se=tuple(s.se),
        low=tuple(s.low),
        high=tuple(s.high),
        p_value=tuple(s.p_value),
        p_adjusted=tuple(s.p_adjusted),
        df=s.df,
        method=s.method,
        adjust=adjust,
        estimand=estimand,
        confidence=confidence,
        baseline=baseline,
        n_items=int(mm.values.shape[1]),
        n_clusters=n_clusters,
        n_resamples=int(n_resamples),
        n_dropped_items=mm.n_dropped_items,
        n_missing_items=mm.n_missing_items,
        outcome=str(outcome),
        by=tuple(str(b) for b in _as_labels(by)),
        notes=tuple(notes),
    )
