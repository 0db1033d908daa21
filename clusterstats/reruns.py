"""Test cases run several times: the (case, rerun) layout, pass@k, pass^k and flakiness.

``to_case_rerun`` turns long results (one row per run) into an xarray Dataset with dims
``(case, rerun)``; ``pass_at_k``, ``pass_hat_k`` and ``flakiness`` take such a Dataset (or a
long DataFrame, converted the same way) and return results with clustered intervals, the
cases being the clusters unless ``by`` names a coarser grouping along ``case``.
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from typing import Any, Literal

import numpy as np
import pandas as pd
import xarray as xr

from clusterstats import api
from clusterstats._dataset import CaseMoments, reduce_cases
from clusterstats._dataset_api import group_results
from clusterstats._frame import _as_labels, _require_columns
from clusterstats.core.grouping import cluster_sums
from clusterstats.core.reruns import case_sums, effective_runs, flaky_cases
from clusterstats.core.reruns import pass_at_k as _pass_at_k_per_case
from clusterstats.core.reruns import pass_hat_k as _pass_hat_k_per_case
from clusterstats.core.summary import summarize_icc, summarize_interval
from clusterstats.errors import (
    AlignmentError,
    EmptyDataError,
    InvalidOptionError,
    InvalidOutcomeError,
)
from clusterstats.results import Flakiness, GroupedResults, PassAtK

__all__ = ["flakiness", "pass_at_k", "pass_hat_k", "to_case_rerun"]

PASS_METHODS = ("auto", "naive", "cr1", "cr2", "bootstrap", "bootstrap_bca", "bootstrap_percentile")
# A Dataset bigger than this many times the rows of the frame is almost surely a rerun column
# whose labels are not shared across cases (e.g. timestamps).
_MAX_FILL_RATIO = 4


def to_case_rerun(
    data: pd.DataFrame,
    *,
    case: Hashable,
    rerun: Hashable | None = None,
    outcome: Hashable | Sequence[Hashable],
    dims: Sequence[Hashable] = (),
    coords: Literal["auto"] | Sequence[Hashable] = "auto",
) -> xr.Dataset:
    """Long results (one row per run) as an xarray Dataset with dims ``(*dims, case, rerun)``.

    Parameters
    ----------
    data : pandas.DataFrame
        One row per run of a case.
    case : column label
        The test case; its labels become the ``case`` coordinate.
    rerun : column label, optional
        The run id (shared across cases, e.g. 0..k-1); its labels become the ``rerun``
        coordinate. ``None`` numbers the runs of each case 0, 1, ... in row order.
    outcome : column label or list of labels
        The variables (0/1 or scores). A missing combination of case and rerun is NaN, which
        means "no run" (cases may have unequal rerun counts).
    dims : column labels
        Further columns that become dims, e.g. ``["model"]``.
    coords : "auto" or list of column labels
        Columns to attach as coordinates along ``case`` (e.g. ``user_id``, to cluster by it
        later). ``"auto"`` attaches every other column that is constant within each case; a
        listed column that varies within a case is an error.

    Examples
    --------
    >>> import pandas as pd, clusterstats
    >>> df = pd.DataFrame({"task": [1, 1, 2, 2, 2], "trial": [0, 1, 0, 1, 2],
    ...                    "user": ["u1", "u1", "u2", "u2", "u2"], "reward": [1, 0, 1, 1, 1]})
    >>> ds = clusterstats.to_case_rerun(df, case="task", rerun="trial", outcome="reward")
    >>> dict(ds.sizes), ds["user"].values.tolist()
    ({'case': 2, 'rerun': 3}, ['u1', 'u2'])
    """
    if not isinstance(data, pd.DataFrame):
        raise TypeError(f"data must be a pandas DataFrame, got {type(data).__name__}")
    outcomes = _as_labels(outcome)
    dim_columns = list(dims)
    _require_columns(data, [case, *outcomes, *dim_columns] + ([rerun] if rerun else []))
    if len(data) == 0:
        raise EmptyDataError("the frame has no rows")
    for label in (case, *dim_columns):
        if data[label].isna().any():
            raise AlignmentError(
                f"column {label!r} has {int(data[label].isna().sum())} missing ids"
            )
    keys = [*dim_columns, case]
    if rerun is None:
        run_ids = data.groupby(keys, sort=False).cumcount().to_numpy()
    else:
        if data[rerun].isna().any():
            raise AlignmentError(f"rerun column {rerun!r} has missing ids")
        run_ids = data[rerun].to_numpy()
    index = pd.MultiIndex.from_arrays(
        [*(data[k].to_numpy() for k in keys), run_ids],
        names=[*map(str, dim_columns), "case", "rerun"],
    )
    if index.has_duplicates:
        repeated = index[index.duplicated()].unique()
        raise AlignmentError(
            f"{len(repeated)} (case, rerun) combinations have more than one row (e.g. "
            f"{list(repeated[:3])}); each run of a case needs its own rerun id"
        )
    size = int(np.prod([len(level) for level in index.levels]))
    if size > _MAX_FILL_RATIO * len(data) + 1024:
        raise AlignmentError(
            f"the (case, rerun) grid would hold {size:,} cells for {len(data):,} rows: the "
            f"rerun labels of {rerun!r} are not shared across cases; pass rerun=None to number "
            "the runs of each case 0, 1, ... instead"
        )
    frame = pd.DataFrame(
        {str(o): pd.to_numeric(data[o], errors="raise").to_numpy() for o in outcomes},
        index=index,
    )
    dataset = xr.Dataset.from_dataframe(frame)
    dataset["case"].attrs["column"] = str(case)
    dataset["rerun"].attrs["column"] = "row order" if rerun is None else str(rerun)
    used = {case, *outcomes, *dim_columns} | ({rerun} if rerun is not None else set())
    candidates = [c for c in data.columns if c not in used] if coords == "auto" else list(coords)
    _require_columns(data, candidates)
    if candidates:
        per_case = data.groupby(case, sort=False)[candidates]
        varying = per_case.nunique(dropna=False).max() > 1
        if coords != "auto" and varying.any():
            raise AlignmentError(
                f"coordinates must be constant within each case; {list(varying[varying].index)} "
                "vary"
            )
        constant = [c for c in candidates if not varying[c]]
        if constant:
            firsts = per_case.first()[constant] if constant else None
            firsts = firsts.reindex(dataset["case"].values)
            for column in constant:
                dataset = dataset.assign_coords({str(column): ("case", firsts[column].to_numpy())})
    return dataset


def _as_dataset(
    data: Any, outcome: Hashable, case: Hashable, rerun: Hashable | None, over: Hashable | None
) -> tuple[Any, Hashable, Hashable]:
    """A Dataset and the names of its case and rerun dims (converting a long DataFrame)."""
    if isinstance(data, pd.DataFrame):
        dims = [] if over is None else [over]
        return (
            to_case_rerun(data, case=case, rerun=rerun, outcome=outcome, dims=dims),
            "case",
            "rerun",
        )
    if over is not None:
        raise InvalidOptionError(
            "over= is for DataFrames; a Dataset's extra dims are used as they are"
        )
    if rerun is None:
        raise InvalidOptionError(
            "rerun=None (number the runs) is for DataFrames; name the rerun dim"
        )
    return data, case, rerun


def _binary_moments(data, outcome, by, case, rerun, over, what: str) -> CaseMoments:
    dataset, case_dim, rerun_dim = _as_dataset(data, outcome, case, rerun, over)
    reduced = reduce_cases(dataset, outcome, by=by, case=case_dim, rerun=rerun_dim)
    if not reduced.is_binary:
        raise InvalidOutcomeError(f"{what} needs a binary outcome (0/1 per run)")
    return reduced


def _pass_statistic(
    statistic: str,
    data: Any,
    outcome: Hashable,
    *,
    k: int,
    by: Hashable | None,
    case: Hashable,
    rerun: Hashable | None,
    over: Hashable | None,
    method: str,
    confidence: float,
    fewer_runs: str,
    n_resamples: int,
    rng: int | np.random.Generator | None,
) -> PassAtK | GroupedResults[PassAtK]:
    confidence = api._check_confidence(confidence)
    if not (isinstance(k, (int, np.integer)) and k >= 1):
        raise InvalidOptionError(f"k must be a positive integer, got {k!r}")
    if method not in PASS_METHODS:
        raise InvalidOptionError(f"method must be one of {PASS_METHODS}, got {method!r}")
    if fewer_runs not in ("raise", "drop"):
        raise InvalidOptionError(f"fewer_runs must be 'raise' or 'drop', got {fewer_runs!r}")
    reduced = _binary_moments(data, outcome, by, case, rerun, over, statistic)
    per_case = _pass_at_k_per_case if statistic == "pass@k" else _pass_hat_k_per_case

    def build(group: tuple[Any, np.ndarray]) -> PassAtK:
        label, moments = group
        runs, passes = moments[:, 0], moments[:, 1]
        short = runs < k
        if short.all():
            raise EmptyDataError(f"no case has {k} runs (the most is {int(runs.max())})")
        if short.any() and fewer_runs == "raise":
            where = "" if label is None else f" for {label!r}"
            examples = reduced.case_labels[short][:3].tolist()
            raise InvalidOptionError(
                f"{int(short.sum())} cases have fewer than k={k} runs{where} (e.g. {examples}, "
                f"with {sorted(set(runs[short].astype(int).tolist()))[:5]} runs); pass "
                "fewer_runs='drop' to leave them out (they are counted in the result)"
            )
        keep = ~short
        values = per_case(runs[keep], passes[keep], k)
        sums = cluster_sums(values, None if reduced.codes is None else reduced.codes[keep])
        if sums.n_clusters < 2:
            raise EmptyDataError("a pass statistic needs at least two cases with enough runs")
        is_binary = bool(np.all((values == 0.0) | (values == 1.0)))
        s = summarize_interval(
            sums,
            estimand="pooled",
            method="cr2" if method == "auto" and not is_binary else method,
            confidence=confidence,
            is_binary=is_binary,
            n_resamples=int(n_resamples),
            rng=rng if isinstance(rng, np.random.Generator) else np.random.default_rng(rng),
        )
        notes = [n for n in s.notes if "estimand" not in n]
        low, high = max(s.low, 0.0), min(s.high, 1.0)
        if (low, high) != (s.low, s.high):
            notes.append("the interval was clipped to [0, 1]")
        if short.any():
            notes.insert(0, f"{int(short.sum())} cases with fewer than {k} runs were left out")
        return PassAtK(
            statistic=statistic,
            k=int(k),
            estimate=s.estimate,
            se=s.se,
            low=low,
            high=high,
            confidence=confidence,
            method=s.method,
            estimand="case_mean",
            df=s.df,
            n_cases=int(keep.sum()),
            n_clusters=sums.n_clusters,
            runs_min=int(runs[keep].min()),
            runs_max=int(runs[keep].max()),
            n_excluded=int(short.sum()),
            n_resamples=s.n_resamples,
            outcome=reduced.outcome,
            by=reduced.by,
            notes=tuple(notes),
        )

    return group_results(reduced, list(reduced.groups()), build)


def pass_at_k(
    data: Any,
    outcome: Hashable,
    *,
    k: int,
    by: Hashable | None = None,
    case: Hashable = "case",
    rerun: Hashable | None = "rerun",
    over: Hashable | None = None,
    method: str = "auto",
    confidence: float = 0.95,
    fewer_runs: Literal["raise", "drop"] = "raise",
    n_resamples: int = 9999,
    rng: int | np.random.Generator | None = None,
) -> PassAtK | GroupedResults[PassAtK]:
    """pass@k: the chance that at least one of ``k`` runs of a case passes, averaged over
    cases, with a clustered interval.

    Per case, the unbiased estimator ``1 - C(n-c, k) / C(n, k)`` of Chen et al. (2021) from
    its ``n`` runs with ``c`` passes; the mean over cases (each case counts once); an interval
    clustered by case (or by ``by``, a coordinate along ``case``): CR2 by default, or a
    bootstrap of whole clusters. Runs within a case are never resampled (that would change
    ``c`` and bias the estimator).

    Parameters
    ----------
    data : xarray.Dataset with dims (case, rerun), or a long pandas.DataFrame
        Dataset: NaN is "no run". DataFrame: one row per run; ``case`` and ``rerun`` are
        columns (``rerun=None`` numbers the runs of each case in row order) and ``over``
        gives one result per value of a column (e.g. ``"model"``).
    k : int
    by : coordinate along case, optional
        Clusters of cases (e.g. ``user_id``); default: every case is its own cluster.
    case, rerun : dim names of a Dataset, or columns of a DataFrame.
    method : {"auto", "cr2", "cr1", "naive", "bootstrap", "bootstrap_percentile"}
        ``"auto"`` is CR2; when every case's estimate is 0 or 1 the per-case values are
        binary and ``"auto"`` uses the binary rule of :func:`clusterstats.cluster_ci`.
    fewer_runs : {"raise", "drop"}
        Cases with fewer than ``k`` runs: an error naming them (default), or left out and
        counted in ``n_excluded``.

    Examples
    --------
    >>> import pandas as pd, clusterstats
    >>> runs = [1, 0, 0, 0,  1, 1, 0, 0,  0, 0, 0, 0,  1, 1, 1, 1,  0, 1, 0, 1,  1, 0, 1, 1]
    >>> df = pd.DataFrame({"case": [c for c in range(24) for _ in range(4)],
    ...                    "passed": runs * 4})  # 24 cases of 4 runs
    >>> res = clusterstats.pass_at_k(df, "passed", k=2, rerun=None)
    >>> res.name, round(res.estimate, 4), res.n_cases
    ('pass@2', 0.6944, 24)
    """
    return _pass_statistic(
        "pass@k",
        data,
        outcome,
        k=k,
        by=by,
        case=case,
        rerun=rerun,
        over=over,
        method=method,
        confidence=confidence,
        fewer_runs=fewer_runs,
        n_resamples=n_resamples,
        rng=rng,
    )


def pass_hat_k(
    data: Any,
    outcome: Hashable,
    *,
    k: int,
    by: Hashable | None = None,
    case: Hashable = "case",
    rerun: Hashable | None = "rerun",
    over: Hashable | None = None,
    method: str = "auto",
    confidence: float = 0.95,
    fewer_runs: Literal["raise", "drop"] = "raise",
    n_resamples: int = 9999,
    rng: int | np.random.Generator | None = None,
) -> PassAtK | GroupedResults[PassAtK]:
    """pass^k: the chance that all ``k`` runs of a case pass (τ-bench's reliability metric),
    averaged over cases, with a clustered interval.

    Per case the unbiased ``C(c, k) / C(n, k)`` (Yao et al. 2024); everything else as
    :func:`pass_at_k`.

    Examples
    --------
    >>> import pandas as pd, clusterstats
    >>> runs = [1, 0, 0, 0,  1, 1, 0, 0,  0, 0, 0, 0,  1, 1, 1, 1,  0, 1, 0, 1,  1, 0, 1, 1]
    >>> df = pd.DataFrame({"case": [c for c in range(24) for _ in range(4)],
    ...                    "passed": runs * 4})  # 24 cases of 4 runs
    >>> res = clusterstats.pass_hat_k(df, "passed", k=2, rerun=None)
    >>> res.name, round(res.estimate, 4)
    ('pass^2', 0.3056)
    """
    return _pass_statistic(
        "pass^k",
        data,
        outcome,
        k=k,
        by=by,
        case=case,
        rerun=rerun,
        over=over,
        method=method,
        confidence=confidence,
        fewer_runs=fewer_runs,
        n_resamples=n_resamples,
        rng=rng,
    )


def flakiness(
    data: Any,
    outcome: Hashable,
    *,
    by: Hashable | None = None,
    case: Hashable = "case",
    rerun: Hashable | None = "rerun",
    over: Hashable | None = None,
    method: str = "auto",
    confidence: float = 0.95,
) -> Flakiness | GroupedResults[Flakiness]:
    """How often reruns of a case disagree, and what a rerun is worth.

    Per case (with at least two runs): the share of runs that disagree with the case's
    majority, and whether it is flaky (``0 < passes < runs``). Overall: the flaky-case rate
    with its clustered interval (each case counts once; the ``cluster_ci`` methods for a
    binary outcome, clustered by ``by`` when given), and the ICC of the runs within cases,
    which says what the reruns of a case are worth as independent runs
    (``effective_runs``). ``per_case()`` on the result gives the table.

    Cases with a single run cannot show flakiness and are left out (with a note).

    Examples
    --------
    >>> import pandas as pd, clusterstats
    >>> runs = [1, 0, 0, 0,  1, 1, 0, 0,  0, 0, 0, 0,  1, 1, 1, 1,  0, 1, 0, 1,  1, 0, 1, 1]
    >>> df = pd.DataFrame({"case": [c for c in range(24) for _ in range(4)],
    ...                    "passed": runs * 4})  # 24 cases of 4 runs
    >>> res = clusterstats.flakiness(df, "passed", rerun=None)
    >>> res.n_flaky, res.n_cases, round(res.disagreement, 4)
    (16, 24, 0.25)
    """
    from clusterstats.core import intervals as iv

    confidence = api._check_confidence(confidence)
    if method not in iv.METHODS:
        raise InvalidOptionError(f"method must be one of {iv.METHODS}, got {method!r}")
    reduced = _binary_moments(data, outcome, by, case, rerun, over, "flakiness")

    def build(group: tuple[Any, np.ndarray]) -> Flakiness:
        _, moments = group
        runs, passes = moments[:, 0], moments[:, 1]
        keep = runs >= 2
        if keep.sum() < 2:
            raise EmptyDataError("flakiness needs at least two cases with two or more runs")
        runs_k, passes_k = runs[keep], passes[keep]
        codes = None if reduced.codes is None else reduced.codes[keep]
        summary = flaky_cases(runs_k, passes_k)
        s = summarize_interval(
            cluster_sums(summary.flaky.astype(np.float64), codes),
            estimand="pooled",
            method=method,
            confidence=confidence,
            is_binary=True,
        )
        icc_s = summarize_icc(case_sums(runs_k, passes_k, moments[keep, 2]), confidence=confidence)
        runs_mean = float(runs_k.mean())
        notes = [n for n in s.notes if "estimand" not in n] + list(icc_s.notes)
        if (~keep).any():
            notes.insert(0, f"{int((~keep).sum())} cases with fewer than two runs were left out")
        return Flakiness(
            flaky_rate=s.estimate,
            low=s.low,
            high=s.high,
            confidence=confidence,
            method=s.method,
            n_flaky=int(summary.flaky.sum()),
            n_cases=int(keep.sum()),
            n_clusters=int(keep.sum() if codes is None else np.unique(codes).size),
            disagreement=float(summary.disagreement.mean()),
            runs_mean=runs_mean,
            runs_min=int(runs_k.min()),
            runs_max=int(runs_k.max()),
            icc=icc_s.icc,
            icc_low=icc_s.low,
            icc_high=icc_s.high,
            effective_runs=effective_runs(runs_mean, icc_s.icc),
            outcome=reduced.outcome,
            by=reduced.by,
            notes=tuple(dict.fromkeys(notes)),
            case_labels=tuple(reduced.case_labels[keep].tolist()),
            case_runs=tuple(runs_k.astype(int).tolist()),
            case_passes=tuple(passes_k.astype(int).tolist()),
        )

    return group_results(reduced, list(reduced.groups()), build)
