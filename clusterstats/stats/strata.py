"""Stratified benchmarks: per-stratum estimates beside the overall micro and macro ones
(``stratum_table``). The stratified variance itself is the ``strata=`` option of every
statistic (R survey's linearisation; :mod:`clusterstats.core.strata`).
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Hashable
from typing import Any

import numpy as np
import pandas as pd

from clusterstats import _options as opt
from clusterstats import adapters
from clusterstats._design import MeanDesign
from clusterstats.core.intervals import Method
from clusterstats.core.variance import estimate
from clusterstats.core.weighted import subset
from clusterstats.stats import _policies as policy
from clusterstats.stats.mean import build_cluster_ci

__all__ = ["stratum_table"]


def _per_stratum(design: MeanDesign) -> MeanDesign:
    """The design split by stratum: one group per stratum, without the strata."""
    group = design.groups[0]
    assert group.strata is not None
    groups = []
    for code in np.unique(group.strata):
        inside = group.strata == code
        weighted, weighted_ids = group.weighted, group.weighted_ids
        if weighted is not None and weighted_ids is not None:
            chosen = np.isin(weighted_ids, group.cluster_ids[inside])
            weighted, weighted_ids = subset(weighted, chosen), weighted_ids[chosen]
        groups.append(
            dataclasses.replace(
                group,
                label=design.strata_labels[code],
                table=group.table.subset(inside),
                cluster_ids=group.cluster_ids[inside],
                strata=None,
                weighted=weighted,
                weighted_ids=weighted_ids,
            )
        )
    return dataclasses.replace(design, groups=tuple(groups), over="stratum", strata_labels=())


@dataclasses.dataclass(frozen=True)
class _LonelyRow:
    estimate: float
    low: float
    high: float
    method: str
    n_rows: int
    n_clusters: int
    note: str


def _lonely_row(label: Any, sums: Any, strata: Hashable, lonely: str, n_rows: int) -> _LonelyRow:
    """The row of a stratum with a single cluster: its mean (weighted, for the weighted
    sums), and no interval of its own."""

    return _LonelyRow(
        estimate=estimate(sums, "pooled"),
        low=float("nan"),
        high=float("nan"),
        method="undefined (single cluster)",
        n_rows=n_rows,
        n_clusters=int(sums.n_clusters),
        note=(
            f"stratum {label!r} of {strata!r} has a single cluster: its own row has no "
            f"interval (the overall rows handle it with lonely={lonely!r})"
        ),
    )


def stratum_table(
    data: Any,
    outcome: Hashable,
    by: opt.By | None = None,
    *,
    strata: Hashable,
    nest: bool = False,
    lonely: opt.Lonely = "fail",
    method: Method = "auto",
    confidence: float = 0.95,
    missing: opt.Missing = "drop",
    responded: Hashable | None = None,
    case: Hashable = "case",
    rerun: Hashable = "rerun",
    weights: Hashable | None = None,
) -> pd.DataFrame:
    """Per-stratum estimates and the overall ones, in one table.

    One row per stratum (its pooled estimate and clustered interval, rows, clusters, and the
    weight it carries in each overall estimand), then one row per overall estimand of the
    stratified design: ``pooled`` (micro: every row counts once), ``cluster_mean`` and
    ``stratum_mean`` (macro: every stratum counts once). The data are reduced once; every
    row is computed from that one design.

    Parameters
    ----------
    data : pandas.DataFrame, xarray.Dataset or dask DataFrame
        As in ``cluster_ci``.
    outcome : column label
        The outcome.
    by : column label or list of labels, optional
        The cluster (for a Dataset, a coordinate along ``case``; default: the cases).
    strata : column label
        The stratum of each cluster (for a Dataset, a coordinate along ``case``).
    nest : bool
        Cluster ids are local to their stratum (R survey's ``nest=TRUE``).
    lonely : {"fail", "adjust", "average", "certainty"}
        A stratum with a single cluster, in the overall rows (R survey's
        ``survey.lonely.psu``).
    method : str
        Interval method, as in ``cluster_ci``.
    confidence : float
        Nominal coverage.
    missing : {"drop", "fail", "pass", "raise"}
        As in ``cluster_ci``.
    responded : column label, optional
        Explicit response indicator, as in ``cluster_ci``.
    case, rerun : dim names
        For a Dataset: its case and rerun dims.
    weights : column label, optional
        Row weights, as in ``cluster_ci``: every row is a weighted (Hájek) mean, the only
        overall row is the weighted ``pooled`` one, and ``weight_pooled`` is a stratum's
        share of the total weight (the other weight columns are NaN).

    Returns
    -------
    pandas.DataFrame
        Columns ``stratum``, ``estimand``, ``estimate``, ``low``, ``high``, ``method``,
        ``n_rows``, ``n_clusters``, ``weight_pooled`` (a stratum's share of the rows),
        ``weight_cluster_mean`` (its share of the clusters) and ``weight_stratum_mean``
        (``1/H`` for ``H`` strata); the strata come in sorted order, then the three overall
        rows, whose ``stratum`` is ``"(all)"``. The warnings of the per-stratum intervals (few
        clusters, by nature) are kept in ``table.attrs["notes"]`` rather than emitted.

    Examples
    --------
    >>> import clusterstats
    >>> demo = clusterstats.load_demo_data()
    >>> llama = demo[demo.model == "Meta-Llama-3.1-70B-Instruct"]
    >>> table = clusterstats.stratum_table(llama, "correct", by="src", strata="category")
    >>> table["estimand"].tolist()[-3:]
    ['pooled', 'cluster_mean', 'stratum_mean']
    """
    opt.check_choice("missing", missing, opt.MISSING)
    columns = adapters.columns_of(
        data, outcome, by, responded=responded, strata=strata, weights=weights,
        layout=(case, rerun),
    )  # fmt: skip
    base = opt.interval_options(
        columns, method=method, confidence=confidence, missing=missing, nest=nest, lonely=lonely
    )
    design = adapters.mean_design(data, columns, nest=base.nest)
    estimands = ("pooled",) if design.weights is not None else opt.STRATIFIED_ESTIMANDS
    with policy.once(reemit=False) as notes:
        # The overall rows first: they apply the lonely-stratum policy (lonely="fail" names
        # the strata with a single cluster).
        overall = {
            estimand: build_cluster_ci(design, dataclasses.replace(base, estimand=estimand))
            for estimand in estimands
        }
        per_design = _per_stratum(design)
        lonely_groups = [g for g in per_design.groups if g.table.n_clusters < 2]
        kept = tuple(g for g in per_design.groups if g.table.n_clusters >= 2)
        per = build_cluster_ci(dataclasses.replace(per_design, groups=kept), base) if kept else None
    summaries = [] if per is None else list(zip(per.groups, per.results, strict=True))
    weight_of: dict[Any, float] = {}
    for group in per_design.groups:
        if group.weighted is not None:
            weight_of[group.label] = float(group.weighted.weighted.counts.sum())
    for group in lonely_groups:  # no interval of its own; its rows still count overall
        if group.weighted is not None:
            sums, n_rows = group.weighted.weighted, int(group.weighted.rows.sum())
        else:
            sums = policy.apply_missing(group, design, missing).sums
            n_rows = int(sums.n_rows)
        summaries.append((group.label, _lonely_row(group.label, sums, strata, lonely, n_rows)))
        notes.append(summaries[-1][1].note)
    n_total = sum(r.n_rows for _, r in summaries)
    g_total = sum(r.n_clusters for _, r in summaries)
    h = len(summaries)
    w_total = sum(weight_of.values())
    weighted = bool(weight_of)
    rows = [
        _table_row(
            label, "pooled", r,
            weight_of[label] / w_total if weighted else r.n_rows / n_total,
            math.nan if weighted else r.n_clusters / g_total,
            math.nan if weighted else 1.0 / h,
        )
        for label, r in sorted(summaries, key=lambda item: str(item[0]))
    ]  # fmt: skip
    overall_weight = math.nan if weighted else 1.0
    rows += [
        _table_row("(all)", estimand, r, 1.0, overall_weight, overall_weight)
        for estimand, r in overall.items()
    ]
    table = pd.DataFrame(rows)
    # Per-stratum intervals rest on few clusters by nature: their warnings become notes.
    table.attrs["notes"] = tuple(notes)
    return table


def _table_row(
    stratum: Any, estimand: str, r: Any, pooled: float, cluster_mean: float, stratum_mean: float
) -> dict[str, Any]:
    """One row of the stratum table: an interval and the weight of its stratum in each
    estimand (1 for the overall rows; NaN where weights make them undefined)."""
    return {
        "stratum": stratum, "estimand": estimand, "estimate": r.estimate, "low": r.low,
        "high": r.high, "method": r.method, "n_rows": r.n_rows, "n_clusters": r.n_clusters,
        "weight_pooled": pooled, "weight_cluster_mean": cluster_mean,
        "weight_stratum_mean": stratum_mean,
    }  # fmt: skip
