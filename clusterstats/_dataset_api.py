"""The statistics of ``Dataset.eval``: the functional API on (case, rerun) Datasets.

Each function reduces the Dataset to per-case moments (``_dataset``), then builds the same
result types as the pandas path with the same builders (``api._build_*``). Extra dims (e.g.
``model``) give one result per combination, in a :class:`~clusterstats.GroupedResults`
(``to_xarray()`` lays it out over those dims).
"""

from __future__ import annotations

from collections.abc import Callable, Hashable
from typing import Any, Literal

import numpy as np
import pandas as pd

from clusterstats import api
from clusterstats._dataset import CaseMoments, _case_codes, prepared_groups, reduce_cases
from clusterstats._frame import _factorize_sorted
from clusterstats.core.intervals import Method
from clusterstats.errors import AlignmentError, DimensionError, EmptyDataError
from clusterstats.results import ICC, ClusterCI, DesignEffect, GroupedResults, PairedDelta

__all__ = ["cluster_ci", "design_effect", "group_results", "icc", "paired_delta"]


def group_results(reduced: CaseMoments, items: list[Any], build: Callable[[Any], Any]) -> Any:
    """One result when the Dataset has no extra dims, else a GroupedResults over them."""
    results = tuple(build(item) for item in items)
    if reduced.over is None:
        return results[0]
    return GroupedResults(
        over=reduced.over, groups=tuple(label for label, _ in reduced.groups()), results=results
    )


def cluster_ci(
    data: Any,
    outcome: Hashable,
    by: Hashable | None = None,
    *,
    case: Hashable = "case",
    rerun: Hashable = "rerun",
    estimand: Literal["pooled", "cluster_mean"] = "pooled",
    method: Method = "auto",
    confidence: float = 0.95,
    icc: float | None = None,
    n_resamples: int = 9999,
    rng: int | np.random.Generator | None = None,
) -> ClusterCI | GroupedResults[ClusterCI]:
    """Clustered interval of the mean of the runs; cases are the clusters unless ``by`` names
    a coordinate along ``case`` (higher-level clusters). Same numbers as
    :func:`clusterstats.cluster_ci` on the long frame."""
    confidence = api._check_confidence(confidence)
    api._check_estimand(estimand)
    api._check_ci_options(method, icc, n_resamples)
    reduced = reduce_cases(data, outcome, by=by, case=case, rerun=rerun)
    api._check_binary_method(method, reduced.is_binary)
    options = {
        "estimand": estimand,
        "method": method,
        "confidence": confidence,
        "icc": icc,
        "n_resamples": n_resamples,
        "rng": rng,
        "missing": "drop",
    }
    return group_results(reduced, prepared_groups(reduced), lambda p: api._build_ci(p, **options))


def icc(
    data: Any,
    outcome: Hashable,
    by: Hashable | None = None,
    *,
    case: Hashable = "case",
    rerun: Hashable = "rerun",
    confidence: float = 0.95,
) -> ICC | GroupedResults[ICC]:
    """ICC of the runs within clusters (cases, or ``by``); see :func:`clusterstats.icc`."""
    confidence = api._check_confidence(confidence)
    reduced = reduce_cases(data, outcome, by=by, case=case, rerun=rerun)
    return group_results(
        reduced, prepared_groups(reduced), lambda p: api._build_icc(p, confidence=confidence)
    )


def design_effect(
    data: Any,
    outcome: Hashable,
    by: Hashable | None = None,
    *,
    case: Hashable = "case",
    rerun: Hashable = "rerun",
    estimand: Literal["pooled", "cluster_mean"] = "pooled",
) -> DesignEffect | GroupedResults[DesignEffect]:
    """Design effect of the clustering of runs; see :func:`clusterstats.design_effect`."""
    api._check_estimand(estimand)
    reduced = reduce_cases(data, outcome, by=by, case=case, rerun=rerun)
    return group_results(
        reduced,
        prepared_groups(reduced),
        lambda p: api._build_design_effect(p, estimand=estimand),
    )


def _show(labels: np.ndarray, k: int = 3) -> list[Any]:
    return np.asarray(labels)[:k].tolist()


def paired_delta(
    data: Any,
    other: Any,
    outcome: Hashable,
    by: Hashable | None = None,
    *,
    case: Hashable = "case",
    rerun: Hashable = "rerun",
    how: Literal["strict", "inner"] = "strict",
    estimand: Literal["pooled", "cluster_mean"] = "pooled",
    method: str = "auto",
    confidence: float = 0.95,
    labels: tuple[str, str] | None = None,
    n_resamples: int = 9999,
    rng: int | np.random.Generator | None = None,
) -> PairedDelta | GroupedResults[PairedDelta]:
    """Paired difference ``data - other`` on cases matched by their label along ``case``;
    the runs of a case are averaged first. See :func:`clusterstats.paired_delta`."""
    from clusterstats._frame import check_binary
    from clusterstats._pairing import ALIGNMENTS, PairedItems

    confidence = api._check_confidence(confidence)
    api._check_estimand(estimand)
    api._check_paired_method(method)
    if how not in ALIGNMENTS:
        raise api.InvalidOptionError(f"how must be one of {ALIGNMENTS}, got {how!r}")
    label_a, label_b = labels if labels is not None else ("A", "B")
    sides = [reduce_cases(d, outcome, by=None, case=case, rerun=rerun) for d in (data, other)]
    if sides[0].extra_dims != sides[1].extra_dims or (
        sides[0].extra_labels != sides[1].extra_labels
    ):
        raise DimensionError(
            f"the two Datasets must have the same extra dims and labels; got "
            f"{dict(zip(sides[0].extra_dims, sides[0].extra_labels, strict=True))} and "
            f"{dict(zip(sides[1].extra_dims, sides[1].extra_labels, strict=True))}"
        )
    case_a, case_b = (pd.Index(s.case_labels) for s in sides)
    only_a, only_b = case_a.difference(case_b), case_b.difference(case_a)
    if how == "strict" and (len(only_a) or len(only_b)):
        raise AlignmentError(
            f"{len(only_a)} cases only in {label_a} (e.g. {_show(only_a)}) and {len(only_b)} "
            f"only in {label_b} (e.g. {_show(only_b)}); pass how='inner' to compare the "
            "common cases"
        )
    common = case_a.intersection(case_b, sort=False)
    if len(common) == 0:
        raise AlignmentError(f"the two Datasets share no {case!r} label")
    pos_a, pos_b = case_a.get_indexer(common), case_b.get_indexer(common)
    cluster_a = _cluster_labels(data, case, by, case_a)
    cluster_b = _cluster_labels(other, case, by, case_b)
    clusters = cluster_a[pos_a]
    differs = pd.Series(clusters).ne(pd.Series(cluster_b[pos_b])).to_numpy()
    if differs.any():
        raise AlignmentError(
            f"{int(differs.sum())} cases are in a different {by!r} cluster in the two "
            f"Datasets (e.g. {_show(np.asarray(common)[differs])})"
        )

    def items_of(moments_a: np.ndarray, moments_b: np.ndarray) -> PairedItems:
        ma, mb = moments_a[pos_a], moments_b[pos_b]
        runs_a, runs_b = ma[:, 0], mb[:, 0]
        usable = (runs_a > 0) & (runs_b > 0)
        if not usable.any():
            raise EmptyDataError("no case has runs on both sides")
        ma, mb, runs_a, runs_b = ma[usable], mb[usable], runs_a[usable], runs_b[usable]
        with np.errstate(invalid="ignore", divide="ignore"):
            within_a = np.where(runs_a > 1, ma[:, 2] / (runs_a - 1), np.nan)
            within_b = np.where(runs_b > 1, mb[:, 2] / (runs_b - 1), np.nan)
        mean_a, mean_b = ma[:, 1] / runs_a, mb[:, 1] / runs_b
        codes, _ = _factorize_sorted(pd.Series(clusters[usable]))
        single = bool(
            (runs_a == 1).all()
            and (runs_b == 1).all()
            and check_binary(mean_a)
            and check_binary(mean_b)
        )
        return PairedItems(
            a=mean_a,
            b=mean_b,
            codes=np.asarray(codes, dtype=np.intp),
            runs_a=runs_a,
            runs_b=runs_b,
            within_a=within_a,
            within_b=within_b,
            single_run_binary=single,
            n_dropped_a=len(only_a),
            n_dropped_b=len(only_b),
            n_missing_items=int((~usable).sum()),
            max_runs=int(max(runs_a.max(), runs_b.max())),
        )

    pairs = [
        items_of(ma, mb)
        for (_, ma), (_, mb) in zip(sides[0].groups(), sides[1].groups(), strict=True)
    ]
    options = {
        "label_a": label_a,
        "label_b": label_b,
        "outcome": str(outcome),
        "by": (str(case),) if by is None else (str(by),),
        "estimand": estimand,
        "method": method,
        "confidence": confidence,
        "missing": "drop",
        "n_resamples": n_resamples,
        "rng": rng,
    }
    return group_results(sides[0], pairs, lambda items: api._build_paired(items, **options))


def _cluster_labels(data: Any, case: Hashable, by: Hashable | None, cases: pd.Index) -> np.ndarray:
    """The cluster label of each case (the case itself without ``by``)."""
    if by is None:
        return np.asarray(cases, dtype=object)
    _case_codes(data, data[case], case, by)  # validates: a coordinate along case, no NaN
    return np.asarray(data[by].values, dtype=object)
