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

from clusterstats import _display as fmt
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
    MissingReport,
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
    "missing_report",
    "paired_delta",
    "rule_of_three",
    "stratum_table",
    "wilson_interval",
]

Estimand = Literal["pooled", "cluster_mean"]
Missing = Literal["drop", "fail", "pass", "raise"]
MissingOrIPW = Literal["drop", "fail", "pass", "raise", "ipw"]
Propensity = Literal["shrunk", "cluster", "logistic"]
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
    lonely: str = "fail",
) -> ClusterCI:
    """One ``ClusterCI`` from one group's reduced data (shared by the pandas and xarray paths)."""
    # An int seed (or None) gives every group its own generator from that seed, so a
    # group's interval is the same as for that group alone; a Generator is shared.
    generator = rng if isinstance(rng, np.random.Generator) else np.random.default_rng(rng)
    if p.strata is not None:
        s = _stratified_summary(p, estimand, method, confidence, lonely, n_resamples, generator)
    else:
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
        verb = {"fail": "counted as failures", "pass": "counted as passes"}.get(missing, "dropped")
        notes.insert(
            0,
            f"{fmt.count(p.n_missing, 'row')} with a missing outcome (in "
            f"{fmt.count(p.n_missing_clusters, 'cluster')}) "
            f"{'was' if p.n_missing == 1 else 'were'} {verb}",
        )
        if p.missing_p_value < 0.05:
            notes.insert(1, _varying_missingness_note(p.missing_p_value))
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


def _stratified_summary(
    p: Prepared,
    estimand: str,
    method: str,
    confidence: float,
    lonely: str,
    n_resamples: int,
    rng: np.random.Generator,
) -> Any:
    from clusterstats.core.strata import summarize_stratified
    from clusterstats.errors import TooFewClustersError

    counts = np.bincount(p.strata)
    lonely_labels = [p.strata_labels[i] for i in np.flatnonzero(counts == 1)]
    if lonely_labels and lonely == "fail":
        raise TooFewClustersError(
            f"{len(lonely_labels)} strata have a single cluster, so they cannot estimate their "
            f"own variance: {lonely_labels[:5]}; choose lonely='adjust' (centre it on the "
            "overall mean), 'average' (give it the other strata's average) or 'certainty' (it "
            "contributes nothing), as R survey's survey.lonely.psu"
        )
    try:
        return summarize_stratified(
            p.sums,
            p.strata,
            estimand=estimand,
            method=method,
            confidence=confidence,
            is_binary=p.is_binary,
            lonely=lonely,
            n_resamples=int(n_resamples),
            rng=rng,
        )
    except ValueError as error:
        raise InvalidOptionError(str(error)) from None


def _varying_missingness_note(p_value: float) -> str:
    shown = f"= {p_value:.2g}" if p_value > 1e-16 else "< 1e-16"
    return (
        f"the missing rate varies across clusters (chi-square p {shown}): missing rows "
        "concentrate in some clusters, which can bias the complete-case estimate; see "
        "missing_report() and missing='ipw'"
    )


def _build_ipw_ci(
    rows: Any,
    *,
    propensity: str,
    min_propensity: float,
    method: str,
    confidence: float,
) -> ClusterCI:
    """One ``ClusterCI`` by inverse-probability weighting (``missing="ipw"``)."""
    from clusterstats.core import missing as mi
    from clusterstats.core.grouping import cluster_sums
    from clusterstats.core.variance import icc_anova, iid_variance
    from clusterstats.errors import FewClustersWarning, warn

    values, codes = rows.values, rows.codes
    responded = ~np.isnan(values)
    n_missing = int((~responded).sum())
    g = int(codes.max()) + 1
    n_g = np.bincount(codes, minlength=g).astype(np.float64)
    r_g = np.bincount(codes, weights=responded.astype(np.float64), minlength=g)
    if not responded.any():
        raise InvalidOutcomeError("no row has a usable response")
    notes: list[str] = []
    try:
        if propensity == "logistic":
            fit, logistic = mi.hajek_logistic_propensity(
                values,
                responded.astype(np.float64),
                codes,
                rows.covariates,
                min_propensity=min_propensity,
            )
            described = (
                f"logistic response model with cluster effects and {rows.covariates.shape[1]} "
                f"covariates ({logistic.iterations} Newton steps)"
            )
        else:
            totals = np.bincount(codes[responded], weights=values[responded], minlength=g)
            fit = mi.hajek_cluster_propensity(
                n_g,
                r_g,
                totals,
                min_propensity=min_propensity,
                shrink=propensity == "shrunk",
            )
            described = (
                "cluster response rates shrunk towards the overall rate"
                if propensity == "shrunk"
                else "each cluster's own response rate"
            )
        interval = mi.ipw_interval(
            fit,
            method=method,
            confidence=confidence,
            is_binary=rows.is_binary,
            n_rows=int(responded.sum()),
        )
    except ValueError as error:
        raise InvalidOptionError(str(error)) from None
    notes.append(
        f"inverse-probability weighted (Hájek) with {described}; the variance accounts for the "
        "estimated propensities"
    )
    if fit.n_lost_clusters:
        lost = [rows.cluster_labels[i] for i in np.flatnonzero(r_g == 0)]
        shown = ", ".join(map(repr, lost[:5])) + (", ..." if len(lost) > 5 else "")
        notes.append(
            f"{fit.n_lost_clusters} clusters had no usable response at all ({shown}): nothing "
            "observed can stand in for them, so the estimate covers the other clusters"
        )
    if fit.truncated_weight_share > 0:
        notes.append(
            f"propensities below {min_propensity} were raised to it: "
            f"{fit.truncated_weight_share:.1%} of the total weight was cut"
        )
    notes.append(f"effective n of the weights (Kish): {fit.kish_n:.1f} responding rows")
    notes.extend(interval.notes)
    if fit.n_clusters < iv.FEW_CLUSTERS:
        message = (
            f"only {fit.n_clusters} clusters: the {interval.method} interval is itself "
            f"uncertain with fewer than {iv.FEW_CLUSTERS} clusters"
        )
        warn(message, FewClustersWarning)
        notes.append(message)
    observed = cluster_sums(values[responded], codes[responded])
    naive = summarize_interval(
        observed,
        estimand="pooled",
        method="naive",
        confidence=confidence,
        is_binary=rows.is_binary,
    )
    iid = iid_variance(observed)
    deff = fit.variance / iid if iid > 0 else math.nan
    n_rows = int(responded.sum())
    widths = (naive.high - naive.low, interval.high - interval.low)
    return ClusterCI(
        estimate=interval.estimate,
        se=interval.se,
        low=interval.low,
        high=interval.high,
        confidence=confidence,
        method=interval.method,
        estimand="pooled",
        df=interval.df,
        n_rows=n_rows,
        n_clusters=fit.n_clusters,
        cluster_size_mean=float(observed.counts.mean()),
        cluster_size_min=int(observed.counts.min()),
        cluster_size_max=int(observed.counts.max()),
        icc=icc_anova(observed).icc,
        design_effect=deff,
        n_eff=n_rows / deff if deff > 0 else math.nan,
        naive_low=naive.low,
        naive_high=naive.high,
        widening=widths[1] / widths[0] if widths[0] > 0 else math.nan,
        n_missing=n_missing,
        n_missing_clusters=int(((n_g - r_g) > 0).sum()),
        outcome=rows.outcome,
        by=rows.by,
        notes=tuple(notes),
    )


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
    missing: MissingOrIPW = "drop",
    responded: Hashable | None = None,
    propensity: Propensity = "cluster",
    covariates: Sequence[Hashable] | None = None,
    min_propensity: float = 0.05,
    strata: Hashable | None = None,
    nest: bool = False,
    lonely: Literal["fail", "adjust", "average", "certainty"] = "fail",
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
    missing : {"drop", "fail", "pass", "raise", "ipw"}
        A missing outcome (NaN, or ``responded`` False) is dropped (complete case; counted in
        the result, with a note when the missing rate varies across clusters), counted as a
        failure or as a pass (binary outcomes: the two bounds), raises
        :class:`~clusterstats.errors.MissingOutcomeError`, or is handled by inverse-probability
        weighting (``"ipw"``): the normalised (Hájek) mean of the responses weighted by
        ``1/π``, with response propensities ``π`` that include the cluster, and a stacked
        sandwich variance that accounts for their estimation.
    responded : column label, optional
        Explicit response indicator (bool; True = a usable response). Where it is False the
        outcome is a placeholder and is ignored.
    propensity : {"cluster", "shrunk", "logistic"}
        With ``missing="ipw"``: each cluster's own response rate (cluster fixed effects, the
        default: the weighted responses of a cluster then stand exactly for its rows), the
        rates shrunk towards the overall rate (empirical Bayes: steadier weights, but biased
        towards complete case when missingness depends on the cluster; see the missing-data
        study), or a logistic model with cluster effects plus ``covariates``.
    covariates : list of column labels, optional
        Numeric columns for ``propensity="logistic"``.
    min_propensity : float
        With ``missing="ipw"``, propensities are floored at this value (weights capped at its
        inverse); the share of weight cut is reported.
    strata : column label, optional
        A stratified design: clusters are independent within fixed strata (e.g. benchmark
        categories), strata independent. The variance is R survey's linearised one for
        ``svydesign(ids=~by, strata=~strata)`` with ``clusters - strata`` df. Adds the
        estimand ``"stratum_mean"`` (every stratum counts once, "macro" accuracy).
    nest : bool
        With ``strata``: cluster ids are local to their stratum (R's ``nest=TRUE``); without
        it, an id found in two strata is an error.
    lonely : {"fail", "adjust", "average", "certainty"}
        With ``strata``: what to do with a stratum that has a single cluster (R survey's
        ``survey.lonely.psu``); the default raises an error that names those strata.
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
    if strata is None or estimand != "stratum_mean":
        _check_estimand(estimand)
    _check_ci_options(method, icc, n_resamples)
    if lonely not in ("fail", "adjust", "average", "certainty"):
        raise InvalidOptionError(
            f"lonely must be 'fail', 'adjust', 'average' or 'certainty', got {lonely!r}"
        )
    if strata is not None and missing == "ipw":
        raise InvalidOptionError("strata= and missing='ipw' cannot be combined yet")
    if missing == "ipw":
        return _ipw_cluster_ci(
            data,
            outcome,
            by,
            over=over,
            estimand=estimand,
            method=method,
            confidence=confidence,
            responded=responded,
            propensity=propensity,
            covariates=covariates,
            min_propensity=min_propensity,
        )
    if covariates is not None or propensity != "cluster":
        raise InvalidOptionError("propensity= and covariates= apply to missing='ipw' only")
    prepared = prepare(
        data,
        outcome,
        by,
        over=over,
        missing=missing,
        responded=responded,
        strata=strata,
        nest=nest,
    )
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
            lonely=lonely,
        )

    return _group_or_single(prepared, over, build)


def _ipw_cluster_ci(
    data: Any,
    outcome: Any,
    by: By,
    *,
    over: Hashable | None,
    estimand: str,
    method: str,
    confidence: float,
    responded: Hashable | None,
    propensity: str,
    covariates: Sequence[Hashable] | None,
    min_propensity: float,
) -> ClusterCI | GroupedResults[ClusterCI]:
    from clusterstats._frame import response_rows
    from clusterstats.core.missing import IPW_METHODS

    if estimand != "pooled":
        raise InvalidOptionError(
            "missing='ipw' estimates the pooled mean of every row, answered or not; for the "
            "mean of cluster means use missing='drop' (with cluster-level propensities each "
            "cluster's weighted mean is its observed mean)"
        )
    if method not in IPW_METHODS:
        raise InvalidOptionError(
            f"with missing='ipw' the variance is a stacked sandwich; method must be one of "
            f"{IPW_METHODS}, got {method!r}"
        )
    if propensity not in ("shrunk", "cluster", "logistic"):
        raise InvalidOptionError(
            f"propensity must be 'shrunk', 'cluster' or 'logistic', got {propensity!r}"
        )
    if propensity == "logistic" and not covariates:
        raise InvalidOptionError("propensity='logistic' needs covariates=[...] columns")
    if propensity != "logistic" and covariates:
        raise InvalidOptionError("covariates= need propensity='logistic'")
    if not 0.0 <= float(min_propensity) < 1.0:
        raise InvalidOptionError(f"min_propensity must be in [0, 1), got {min_propensity!r}")
    groups = response_rows(
        data, outcome, by, over=over, responded=responded, covariates=covariates or ()
    )

    def build(rows: Any) -> ClusterCI:
        return _build_ipw_ci(
            rows,
            propensity=propensity,
            min_propensity=float(min_propensity),
            method=method,
            confidence=confidence,
        )

    results = tuple(build(rows) for rows in groups)
    if over is None:
        return results[0]
    return GroupedResults(
        over=str(over), groups=tuple(rows.group for rows in groups), results=results
    )


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
    missing: MissingOrIPW = "drop",
    responded: Hashable | None = None,
    strata: Hashable | None = None,
    nest: bool = False,
    lonely: Literal["fail", "adjust", "average", "certainty"] = "fail",
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
    missing : {"drop", "fail", "pass", "raise", "ipw"}
        As in ``cluster_ci``. With ``"drop"``, an item with no non-missing run on a side is
        dropped from the comparison and counted in ``n_missing_items``: comparing a model's
        answered questions with another model's all questions would not be paired.
        ``"fail"``/``"pass"`` count a missing outcome as 0/1 on that side. ``"ipw"`` weights
        the items answered on both sides by the inverse of their cluster's rate of being
        answered on both (Hájek), with the cluster-robust (stacked) variance and a t interval
        on ``G - 1`` df (method ``"ipw_t"``).
    responded : column label, optional
        A response indicator (bool; True = a usable response) in each frame (or, for two
        columns, for both): where it is False the outcome counts as missing.
    strata, nest, lonely
        A stratified design, as in ``cluster_ci``: the variance of the differences is the
        stratified linearised one with ``clusters - strata`` df (method ``"cr1"``, or the
        Rao–Wu bootstrap within strata).
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
    if responded is not None:
        data = _mask_unanswered(
            data, [outcome_a] if frame_b is not data else [outcome_a, outcome_b], responded
        )
        frame_b = (
            data if frame_b is not other else _mask_unanswered(frame_b, [outcome_b], responded)
        )
    items = align(
        data,
        frame_b,
        outcome_a,
        outcome_b,
        by,
        on=on,
        how=how,
        missing="drop" if missing == "ipw" else missing,
        rerun=rerun,
        strata=strata,
        nest=nest,
    )
    if strata is not None and missing == "ipw":
        raise InvalidOptionError("strata= and missing='ipw' cannot be combined yet")
    if missing == "ipw":
        if estimand != "pooled" or method != "auto":
            raise InvalidOptionError(
                "missing='ipw' estimates the pooled difference with its stacked sandwich "
                "variance: leave estimand and method at their defaults"
            )
        return _build_paired_ipw(
            items,
            label_a=label_a,
            label_b=label_b,
            outcome=str(outcome_b) if isinstance(other, pd.DataFrame) else None,
            by=tuple(str(b) for b in _as_labels(by)),
            confidence=confidence,
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
        lonely=lonely,
    )


def _build_paired_ipw(
    items: Any,
    *,
    label_a: str,
    label_b: str,
    outcome: str | None,
    by: tuple[str, ...],
    confidence: float,
) -> PairedDelta:
    """A ``PairedDelta`` by inverse-probability weighting of the items answered on both
    sides, with cluster response propensities and the stacked sandwich variance."""
    from clusterstats.core.missing import hajek_cluster_propensity

    codes = items.codes
    g = int(codes.max()) + 1
    n_g = np.concatenate([items.cluster_items, items.lost_cluster_items])
    r_g = np.concatenate(
        [
            np.bincount(codes, minlength=g).astype(np.float64),
            np.zeros(items.lost_cluster_items.size),
        ]
    )

    def fit(values: np.ndarray):
        totals = np.concatenate(
            [
                np.bincount(codes, weights=values, minlength=g),
                np.zeros(items.lost_cluster_items.size),
            ]
        )
        return hajek_cluster_propensity(n_g, r_g, totals, shrink=False)

    diff, side_a, side_b = fit(items.a - items.b), fit(items.a), fit(items.b)
    se = math.sqrt(diff.variance)
    low, high = iv.t_interval(diff.estimate, diff.variance, diff.df, confidence)

    p_value = iv.t_test_p_value(diff.estimate, se, diff.df)
    a, b = items.a, items.b
    correlation = float(np.corrcoef(a, b)[0, 1]) if np.ptp(a) > 0 and np.ptp(b) > 0 else math.nan
    notes = [
        f"{items.n_missing_items} items with a missing outcome on a side were handled by "
        "inverse-probability weighting (Hájek, each cluster's rate of being answered on both "
        "sides); the variance accounts for the estimated propensities",
        f"effective n of the weights (Kish): {diff.kish_n:.1f} items",
    ]
    if diff.n_lost_clusters:
        notes.append(
            f"{diff.n_lost_clusters} clusters had no item answered on both sides: nothing "
            "observed can stand in for them"
        )
    if diff.truncated_weight_share > 0:
        notes.append(f"{diff.truncated_weight_share:.1%} of the weight was cut by the floor")
    if items.n_dropped_a or items.n_dropped_b:
        notes.append(
            f"how='inner': {items.n_dropped_a} items only in {label_a} and "
            f"{items.n_dropped_b} only in {label_b} were left out"
        )
    return PairedDelta(
        delta=diff.estimate,
        se=se,
        low=low,
        high=high,
        df=diff.df,
        method="ipw_t",
        p_value=p_value,
        test="ipw_t" if se > 0 else "none",
        mean_a=side_a.estimate,
        mean_b=side_b.estimate,
        se_unpaired=math.sqrt(side_a.variance + side_b.variance),
        correlation=correlation,
        naive_low=math.nan,
        naive_high=math.nan,
        icc=math.nan,
        mcnemar_a_only=None,
        mcnemar_b_only=None,
        mcnemar_statistic=math.nan,
        mcnemar_p_value=math.nan,
        mcnemar_exact_p_value=math.nan,
        clustered_mcnemar_statistic=math.nan,
        clustered_mcnemar_p_value=math.nan,
        rerun_variance_share=math.nan,
        n_resamples=None,
        notes=tuple(notes),
        confidence=confidence,
        estimand="pooled",
        **_paired_item_fields(items, label_a, label_b, outcome, by),
        n_clusters=diff.n_clusters,
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
    lonely: str = "fail",
) -> PairedDelta:
    """One ``PairedDelta`` from matched per-item values (shared by the pandas and xarray
    paths); ``items`` is a ``_pairing.PairedItems``."""
    from clusterstats.core.paired import summarize_paired

    strata = getattr(items, "strata", None)
    if strata is not None and method not in ("auto", "cr1", "bootstrap", "bootstrap_percentile"):
        raise InvalidOptionError(
            "with strata, a paired difference takes method 'auto' (= 'cr1', the stratified "
            f"linearised variance), 'cr1' or 'bootstrap' (Rao–Wu within strata), not {method!r}"
        )
    s = summarize_paired(
        items.a,
        items.b,
        items.codes,
        estimand=estimand,
        # with strata the interval is replaced below: skip an unstratified bootstrap
        method="cr1" if strata is not None else method,
        confidence=confidence,
        single_run_binary=items.single_run_binary,
        within_a=items.within_a,
        runs_a=items.runs_a,
        within_b=items.within_b,
        runs_b=items.runs_b,
        n_resamples=int(n_resamples),
        rng=rng if isinstance(rng, np.random.Generator) else np.random.default_rng(rng),
    )
    if strata is not None:
        s = _stratified_paired(s, items, estimand, method, confidence, lonely, n_resamples, rng)
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
        **_paired_item_fields(items, label_a, label_b, outcome, by),
        n_clusters=int(items.codes.max()) + 1,
    )


def _stratified_paired(
    s: Any,
    items: Any,
    estimand: str,
    method: str,
    confidence: float,
    lonely: str,
    n_resamples: int,
    rng: Any,
) -> Any:
    """Replace the interval, test and unpaired SE of a paired summary by their stratified
    versions (R survey's linearisation of the per-item differences)."""

    from clusterstats.core.grouping import cluster_sums
    from clusterstats.core.strata import stratified_variance

    strata = items.strata
    prepared = Prepared(
        group=None,
        sums=cluster_sums(items.a - items.b, items.codes),
        is_binary=False,
        n_missing=0,
        n_missing_clusters=0,
        outcome=None,
        by=(),
        strata=strata,
        strata_labels=items.strata_labels,
    )
    generator = rng if isinstance(rng, np.random.Generator) else np.random.default_rng(rng)
    chosen = "cr1" if method == "auto" else method
    interval = _stratified_summary(
        prepared, estimand, chosen, confidence, lonely, n_resamples, generator
    )
    variance = stratified_variance(prepared.sums, strata, estimand, lonely=lonely)
    se = math.sqrt(variance.variance)
    p_value = iv.t_test_p_value(interval.estimate, se, variance.df)
    unpaired = sum(
        stratified_variance(
            cluster_sums(side, items.codes), strata, estimand, lonely=lonely
        ).variance
        for side in (items.a, items.b)
    )
    return s._replace(
        se=interval.se,
        low=interval.low,
        high=interval.high,
        df=interval.df,
        method=f"stratified_{interval.method}",
        p_value=p_value,
        test="stratified_t",
        se_unpaired=math.sqrt(unpaired),
        n_resamples=interval.n_resamples,
        notes=(*interval.notes, *(n for n in s.notes if "estimand" not in n)),
    )


def _mask_unanswered(
    frame: pd.DataFrame, outcomes: Sequence[Hashable], responded: Hashable
) -> pd.DataFrame:
    """A shallow copy whose outcome columns are NaN where ``responded`` is False."""
    from clusterstats._frame import outcome_with_responses

    masked = frame.copy(deep=False)
    for label in outcomes:
        masked[label] = outcome_with_responses(frame, label, responded)
    return masked


def _paired_item_fields(
    items: Any, label_a: str, label_b: str, outcome: str | None, by: tuple[str, ...]
) -> dict[str, Any]:
    """The fields of a ``PairedDelta`` that describe the matched items."""
    return {
        "n_items": int(items.a.shape[0]),
        "n_dropped_a": items.n_dropped_a,
        "n_dropped_b": items.n_dropped_b,
        "n_missing_items": items.n_missing_items,
        "max_runs": items.max_runs,
        "label_a": label_a,
        "label_b": label_b,
        "outcome": outcome,
        "by": by,
    }


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
    missing: MissingOrIPW = "drop",
    responded: Hashable | None = None,
    strata: Hashable | None = None,
    nest: bool = False,
    lonely: Literal["fail", "adjust", "average", "certainty"] = "fail",
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
    if strata is None or estimand != "stratum_mean":
        _check_estimand(estimand)
    methods = ("auto", "cr1", "cr2", "bootstrap", "bootstrap_percentile")
    if method not in methods:
        raise InvalidOptionError(f"method must be one of {methods}, got {method!r}")
    if strata is not None and method == "cr2":
        raise InvalidOptionError(
            "with strata, compare uses the stratified linearised variance (method 'auto' or "
            "'cr1') or the Rao–Wu bootstrap within strata ('bootstrap'), not 'cr2'"
        )
    if strata is not None and missing == "ipw":
        raise InvalidOptionError("strata= and missing='ipw' cannot be combined yet")
    if adjust not in ("holm", "bh", "none"):
        raise InvalidOptionError(f"adjust must be 'holm', 'bh' or 'none', got {adjust!r}")
    if not isinstance(data, pd.DataFrame):
        raise TypeError(f"data must be a pandas DataFrame, got {type(data).__name__}")
    if missing == "ipw" and estimand != "pooled":
        raise InvalidOptionError("missing='ipw' estimates pooled scores; use estimand='pooled'")
    if responded is not None:
        data = _mask_unanswered(data, [outcome], responded)
    mm = model_matrix(
        data,
        outcome,
        by,
        model=model,
        on=on,
        how=how,
        missing="drop" if missing == "ipw" else missing,
        rerun=rerun,
        strata=strata,
        nest=nest,
    )
    if mm.strata is not None and (np.bincount(mm.strata) == 1).any() and lonely == "fail":
        from clusterstats.errors import TooFewClustersError

        raise TooFewClustersError(
            "some strata have a single cluster, so they cannot estimate their own variance; "
            "choose lonely='adjust', 'average' or 'certainty' (R survey's survey.lonely.psu)"
        )
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
    # missing="ipw": each cluster's items answered by every model stand for all its items
    # (weights n_g / r_g, cluster fixed-effect propensities, for which the cluster-robust
    # variance of the weighted sums is exactly the stacked sandwich; REPORT §6).
    scale = np.ones(n_clusters)
    if missing == "ipw":
        scale = mm.cluster_items / counts
        counts = mm.cluster_items.copy()
        totals = totals * scale[:, None]
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
        strata=mm.strata,
        lonely=lonely,
    )
    is_binary = check_binary(mm.values.ravel())  # a view: values is C-contiguous
    score_low, score_high, score_method, warned = [], [], "", {}
    with _warnings.catch_warnings(record=True) as caught:
        _warnings.simplefilter("always", ClusterStatsWarning)
        for j, row in enumerate(mm.values):
            squares = (
                totals[:, j]  # 0/1 values are their own squares
                if is_binary
                else np.bincount(mm.codes, weights=row * row, minlength=n_clusters) * scale
            )
            if mm.strata is not None:
                from clusterstats.core.strata import summarize_stratified

                ci = summarize_stratified(
                    ClusterSums(counts, totals[:, j], squares),
                    mm.strata,
                    estimand=estimand,
                    method="auto",
                    confidence=confidence,
                    is_binary=is_binary,
                    lonely=lonely,
                )
            else:
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
    if mm.n_missing_items and missing == "ipw":
        notes.append(
            f"{mm.n_missing_items} items with a missing outcome for some model were handled by "
            "inverse-probability weighting: in each cluster the items every model answered "
            "stand for all its items (cluster fixed-effect propensities)"
        )
        if mm.lost_cluster_items.size:
            notes.append(
                f"{mm.lost_cluster_items.size} clusters had no item answered by every model: "
                "nothing observed can stand in for them"
            )
    elif mm.n_missing_items:
        verb = {"fail": "counted as failures", "pass": "counted as passes"}.get(missing, "dropped")
        notes.append(
            f"{mm.n_missing_items} items with a missing outcome for some model were {verb}"
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


def missing_report(
    data: Any,
    outcome: Hashable,
    by: By,
    *,
    reason: Hashable | None = None,
    responded: Hashable | None = None,
    confidence: float = 0.95,
    threshold: float | None = None,
    deltas: Sequence[float] = (-2.0, -1.0, -0.5, 0.0, 0.5, 1.0, 2.0),
) -> MissingReport:
    """Where the missing outcomes are, why, and how much they could change the answer.

    Reports the missing rate overall and per cluster (``per_cluster()``), Pearson's test that
    every cluster has the same missing rate, the breakdown by ``reason`` (a column naming
    why each missing row is missing: refusal, timeout, parse failure, ...), and the
    sensitivity table (``to_frame()``): complete case, inverse-probability weighting
    (cluster propensities) and, for a binary outcome, missing-as-fail and
    missing-as-pass, each with its clustered interval. Then the δ-adjustment: missing rows
    imputed at their cluster's observed rate shifted by δ on the logit scale (the outcome
    scale for scores), and the tipping points, the δ at which the adjusted estimate leaves
    the IPW interval (or crosses ``threshold``).

    Examples
    --------
    >>> import numpy as np, pandas as pd, clusterstats
    >>> rng = np.random.default_rng(0)
    >>> doc = np.repeat(np.arange(40), 10)
    >>> hard = rng.normal(size=40)[doc]
    >>> passed = (rng.normal(size=400) > hard).astype(float)
    >>> passed[(hard > 0.5) & (rng.random(400) < 0.5)] = np.nan  # hard documents time out
    >>> df = pd.DataFrame({"doc": doc, "passed": passed})
    >>> rep = clusterstats.missing_report(df, "passed", by="doc")
    >>> rep.chi_square_p < 0.05, [name for name, _ in rep.analyses]
    (True, ['complete_case', 'ipw', 'missing_as_fail', 'missing_as_pass'])
    """
    import warnings as _warnings

    from clusterstats._frame import (
        _factorize_sorted,
        _require_columns,
        outcome_with_responses,
    )
    from clusterstats.core.grouping import ClusterSums
    from clusterstats.core.missing import (
        delta_adjusted_mean,
        missingness_chi_square,
        tipping_delta,
    )
    from clusterstats.core.variance import icc_anova
    from clusterstats.errors import ClusterStatsWarning, warn

    confidence = _check_confidence(confidence)
    if not isinstance(data, pd.DataFrame):
        raise TypeError(f"data must be a pandas DataFrame, got {type(data).__name__}")
    by_labels = _as_labels(by)
    _require_columns(data, [outcome, *by_labels] + ([reason] if reason is not None else []))
    values = outcome_with_responses(data, outcome, responded)
    from clusterstats._frame import cluster_codes

    codes = cluster_codes(data, by_labels)
    is_missing = np.isnan(values)
    n_missing = int(is_missing.sum())
    if n_missing == 0:
        raise InvalidOptionError(f"outcome {outcome!r} has no missing values: nothing to report")
    g = int(codes.max()) + 1
    n_g = np.bincount(codes, minlength=g).astype(np.float64)
    present = n_g > 0
    m_g = np.bincount(codes[is_missing], minlength=g).astype(np.float64)
    r_g = n_g - m_g
    s_g = np.bincount(codes[~is_missing], weights=values[~is_missing], minlength=g)
    n_g, m_g, r_g, s_g = n_g[present], m_g[present], r_g[present], s_g[present]
    statistic, df, p_value = missingness_chi_square(n_g, m_g)
    miss_icc = icc_anova(ClusterSums(n_g, m_g, m_g, 0.0)).icc
    is_binary = check_binary(values)

    frame = data.copy(deep=False)
    frame["__outcome__"] = values
    analyses: list[tuple[str, ClusterCI]] = []
    warned: dict[str, type[Warning]] = {}
    with _warnings.catch_warnings(record=True) as caught:
        _warnings.simplefilter("always", ClusterStatsWarning)
        runs = [("complete_case", {"missing": "drop"}), ("ipw", {"missing": "ipw"})]
        if is_binary:
            runs.append(("missing_as_fail", {"missing": "fail"}))
            runs.append(("missing_as_pass", {"missing": "pass"}))
        for name, options in runs:
            result = cluster_ci(frame, "__outcome__", by_labels, confidence=confidence, **options)
            result = ClusterCI(**{**result.to_dict(), "outcome": str(outcome)})
            analyses.append((name, result))
    for w in caught:
        warned.setdefault(str(w.message), w.category)
    for message, category in warned.items():
        warn(message, category)

    def adjusted(delta: float) -> float:
        return delta_adjusted_mean(n_g, r_g, s_g, delta, binary=is_binary)

    ipw = analyses[1][1]
    tipping_low = tipping_delta(n_g, r_g, s_g, ipw.low, binary=is_binary, low=-20.0, high=0.0)
    tipping_high = tipping_delta(n_g, r_g, s_g, ipw.high, binary=is_binary, low=0.0, high=20.0)
    tipping_threshold = (
        None
        if threshold is None
        else tipping_delta(n_g, r_g, s_g, float(threshold), binary=is_binary)
    )

    reasons: list[tuple[Any, int, int]] = []
    if reason is not None:
        labels = pd.Series(data[reason].to_numpy()[is_missing])
        where = codes[is_missing]
        for label, rows in labels.value_counts(dropna=False).items():
            in_reason = labels.isna().to_numpy() if pd.isna(label) else labels.eq(label).to_numpy()
            reasons.append((label, int(rows), int(np.unique(where[in_reason]).size)))
    _, uniques = _factorize_sorted(data[by_labels[0]] if len(by_labels) == 1 else pd.Series(codes))
    cluster_labels = tuple(np.flatnonzero(present).tolist()) if uniques is None else tuple(uniques)
    notes = []
    if p_value < 0.05:
        notes.append(
            "missingness varies across clusters: the complete-case estimate can be biased; "
            "the IPW row reweights each cluster's responses to stand for its missing rows"
        )
    notes.extend(dict.fromkeys(warned))
    return MissingReport(
        outcome=str(outcome),
        by=tuple(str(b) for b in by_labels),
        n_rows=int(values.size),
        n_missing=n_missing,
        missing_rate=n_missing / values.size,
        n_clusters=int(present.sum()),
        n_clusters_with_missing=int((m_g > 0).sum()),
        n_clusters_all_missing=int((r_g == 0).sum()),
        chi_square=statistic,
        chi_square_df=df,
        chi_square_p=p_value,
        missing_icc=miss_icc,
        reasons=tuple(reasons),
        analyses=tuple(analyses),
        deltas=tuple((float(d), adjusted(float(d))) for d in deltas),
        tipping_low=tipping_low,
        tipping_high=tipping_high,
        threshold=None if threshold is None else float(threshold),
        tipping_threshold=tipping_threshold,
        notes=tuple(notes),
        cluster_labels=cluster_labels,
        cluster_rows=tuple(n_g.astype(int).tolist()),
        cluster_missing=tuple(m_g.astype(int).tolist()),
    )


def stratum_table(
    data: Any,
    outcome: Hashable,
    by: By,
    *,
    strata: Hashable,
    nest: bool = False,
    lonely: Literal["fail", "adjust", "average", "certainty"] = "fail",
    method: Method = "auto",
    confidence: float = 0.95,
    missing: Missing = "drop",
) -> pd.DataFrame:
    """Per-stratum estimates and the overall ones, in one table.

    One row per stratum (its pooled estimate and clustered interval, rows, clusters, and the
    weight it carries in each overall estimand), then one row per overall estimand of the
    stratified design: ``pooled`` (micro: every row counts once), ``cluster_mean`` and
    ``stratum_mean`` (macro: every stratum counts once). Columns: ``stratum``, ``estimand``,
    ``estimate``, ``low``, ``high``, ``method``, ``n_rows``, ``n_clusters``,
    ``weight_pooled``, ``weight_cluster_mean``, ``weight_stratum_mean``. The warnings of the
    per-stratum intervals (few clusters, by nature) are kept in ``table.attrs["notes"]``.

    Examples
    --------
    >>> import clusterstats
    >>> demo = clusterstats.load_demo_data()
    >>> llama = demo[demo.model == "Meta-Llama-3.1-70B-Instruct"]
    >>> table = clusterstats.stratum_table(llama, "correct", by="src", strata="category")
    >>> table["estimand"].tolist()[-3:]
    ['pooled', 'cluster_mean', 'stratum_mean']
    """
    import warnings as _warnings

    from clusterstats.errors import ClusterStatsWarning

    rows = []
    with _warnings.catch_warnings(record=True) as caught:
        _warnings.simplefilter("always", ClusterStatsWarning)
        per = cluster_ci(
            data, outcome, by, over=strata, method=method, confidence=confidence, missing=missing
        )
        overall = {
            estimand: cluster_ci(
                data,
                outcome,
                by,
                strata=strata,
                nest=nest,
                lonely=lonely,
                estimand=estimand,
                method=method,
                confidence=confidence,
                missing=missing,
            )
            for estimand in ("pooled", "cluster_mean", "stratum_mean")
        }
    notes = list(dict.fromkeys(str(w.message) for w in caught))
    n_total = sum(r.n_rows for r in per.results)
    g_total = sum(r.n_clusters for r in per.results)
    h = len(per.results)
    for label, r in sorted(per.items(), key=lambda item: str(item[0])):
        rows.append(
            {
                "stratum": label,
                "estimand": "pooled",
                "estimate": r.estimate,
                "low": r.low,
                "high": r.high,
                "method": r.method,
                "n_rows": r.n_rows,
                "n_clusters": r.n_clusters,
                "weight_pooled": r.n_rows / n_total,
                "weight_cluster_mean": r.n_clusters / g_total,
                "weight_stratum_mean": 1.0 / h,
            }
        )
    for estimand, r in overall.items():
        rows.append(
            {
                "stratum": "(all)",
                "estimand": estimand,
                "estimate": r.estimate,
                "low": r.low,
                "high": r.high,
                "method": r.method,
                "n_rows": r.n_rows,
                "n_clusters": r.n_clusters,
                "weight_pooled": 1.0,
                "weight_cluster_mean": 1.0,
                "weight_stratum_mean": 1.0,
            }
        )
    table = pd.DataFrame(rows)
    # Per-stratum intervals rest on few clusters by nature: their warnings become notes.
    table.attrs["notes"] = tuple(notes)
    return table
