"""Missing responses: where the missing outcomes are, why, and how much they could change the
answer (``missing_report``). The missing-data policies themselves (drop, count as 0 or 1,
inverse-probability weighting) are options of every statistic, applied in
:mod:`clusterstats.stats._policies`.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Hashable, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np
import pandas as pd

from clusterstats import _display as fmt
from clusterstats import _options as opt
from clusterstats import adapters
from clusterstats._result import Lines, Table, TableResult, label_of
from clusterstats.core.grouping import ClusterSums
from clusterstats.core.missing import delta_adjusted_mean, missingness_chi_square, tipping_delta
from clusterstats.core.variance import icc_anova
from clusterstats.errors import InvalidOptionError
from clusterstats.stats import _policies as policy
from clusterstats.stats.mean import ClusterCI, build_cluster_ci

__all__ = ["MissingReport", "missing_report"]


@dataclass(frozen=True, kw_only=True, repr=False)
class MissingReport(TableResult):
    """How much of an outcome is missing, where, why, and how much it matters (returned by
    ``missing_report``).

    It prints as text and renders as an HTML table in Jupyter. ``to_frame()`` is the
    sensitivity table, with the columns of ``columns``: ``analysis``, ``estimate``, ``low``,
    ``high``, ``method``, ``n_rows``, ``n_missing``. ``per_cluster()``, ``by_reason()`` and
    ``delta_table()`` give the other tables.

    Attributes
    ----------
    outcome : str
        The outcome column.
    by : tuple of str
        The cluster column(s).
    n_rows, n_missing : int
        Rows, and rows with a missing outcome.
    missing_rate : float
        ``n_missing / n_rows``.
    n_clusters, n_clusters_with_missing, n_clusters_all_missing : int
        Clusters; those with a missing row; those with no usable response at all.
    chi_square, chi_square_df, chi_square_p : float
        Pearson's test that every cluster has the same missing rate (``G - 1`` df); a small
        p-value means the missing rows concentrate in some clusters, which is what biases
        complete case.
    missing_icc : float
        ICC of the missing indicator within clusters.
    reasons : tuple of (reason, rows, clusters)
        Missing rows by ``reason=`` label, most frequent first (empty without ``reason``).
    analyses : tuple of (name, ClusterCI)
        The sensitivity table: ``complete_case``, ``ipw`` (cluster propensities) and, for a
        binary outcome, ``missing_as_fail`` and ``missing_as_pass`` (the bounds).
    deltas : tuple of (δ, estimate)
        The pooled mean with the missing rows imputed at their cluster's observed rate
        shifted by δ (logit scale for a binary outcome, outcome scale otherwise); δ = 0 is
        missing at random within clusters.
    tipping_low, tipping_high : float
        The δ below (above) which the adjusted estimate leaves the IPW interval: how far from
        missing at random the missing rows must be before the conclusion moves by more than
        the sampling uncertainty (``-inf`` / ``inf``: never within |δ| ≤ 20).
    threshold, tipping_threshold : float or None
        With ``threshold=``: that value, and the δ at which the adjusted estimate crosses it.
    notes : tuple of str
        Everything a reader should know.
    cluster_labels, cluster_rows, cluster_missing : tuple
        Each cluster's label, rows and missing rows: the data of ``per_cluster()``.
    """

    outcome: str
    by: tuple[str, ...]
    n_rows: int
    n_missing: int
    missing_rate: float
    n_clusters: int
    n_clusters_with_missing: int
    n_clusters_all_missing: int
    chi_square: float
    chi_square_df: float
    chi_square_p: float
    missing_icc: float
    reasons: tuple[tuple[Any, int, int], ...]
    analyses: tuple[tuple[str, ClusterCI], ...]
    deltas: tuple[tuple[float, float], ...]
    tipping_low: float
    tipping_high: float
    threshold: float | None = None
    tipping_threshold: float | None = None
    notes: tuple[str, ...] = ()
    cluster_labels: tuple[Any, ...] = dataclasses.field(default=(), compare=False)
    cluster_rows: tuple[int, ...] = dataclasses.field(default=(), compare=False)
    cluster_missing: tuple[int, ...] = dataclasses.field(default=(), compare=False)

    _metric_labels: ClassVar[tuple[str, ...]] = ("analysis",)
    columns: ClassVar[tuple[str, ...]] = (
        "analysis",
        "estimate",
        "low",
        "high",
        "method",
        "n_rows",
        "n_missing",
    )

    def to_frame(self):
        """The sensitivity table: one row per analysis, with the columns of ``columns``."""

        rows = [
            {
                "analysis": name,
                "estimate": r.estimate,
                "low": r.low,
                "high": r.high,
                "method": r.method,
                "n_rows": r.n_rows,
                "n_missing": r.n_missing,
            }
            for name, r in self.analyses
        ]
        return pd.DataFrame(rows, columns=list(self.columns))

    def per_cluster(self):
        """One row per cluster: ``cluster``, ``rows``, ``missing``, ``missing_rate``."""

        rows = np.asarray(self.cluster_rows)
        missing = np.asarray(self.cluster_missing)
        return pd.DataFrame(
            {
                "cluster": list(self.cluster_labels),
                "rows": rows,
                "missing": missing,
                "missing_rate": missing / rows,
            }
        )

    def by_reason(self):
        """Missing rows per reason: ``reason``, ``rows``, ``share`` (of the missing rows),
        ``clusters`` (empty without ``reason=``)."""

        frame = pd.DataFrame(list(self.reasons), columns=["reason", "rows", "clusters"])
        frame.insert(2, "share", frame["rows"] / max(self.n_missing, 1))
        return frame

    def delta_table(self):
        """The δ-adjusted estimates: ``delta``, ``estimate``."""

        return pd.DataFrame(list(self.deltas), columns=["delta", "estimate"])

    def _heading(self) -> str:
        return f"MissingReport({label_of(self.outcome, self.by)})"

    def _blocks(self) -> list[Lines | Table]:
        summary = [
            f"{self.n_missing:,} of {fmt.count(self.n_rows, 'row')} missing "
            f"({self.missing_rate:.1%}), in {self.n_clusters_with_missing} of "
            f"{fmt.count(self.n_clusters, 'cluster')} "
            f"({self.n_clusters_all_missing} entirely missing)",
            f"same missing rate in every cluster? chi-square {fmt.number(self.chi_square)} on "
            f"{self.chi_square_df:g} df, p {fmt.number(self.chi_square_p)}; ICC of "
            f"missingness {fmt.number(self.missing_icc)}",
        ]
        if self.reasons:
            shown = ", ".join(f"{reason}: {rows:,}" for reason, rows, _ in self.reasons)
            summary.append(f"by reason: {shown}")
        level = f"{self.analyses[0][1].confidence:.0%} CI"
        analyses = tuple(
            (name, r.estimate, fmt.interval(r.low, r.high), r.method) for name, r in self.analyses
        )

        def side(delta: float) -> str:
            return "never for |δ| ≤ 20" if math.isinf(delta) else f"at δ = {fmt.number(delta)}"

        tipping = [
            "tipping points (missing rows shifted by δ from their cluster's observed rate, "
            "on the logit scale for 0/1 outcomes): the estimate leaves the IPW interval "
            f"downwards {side(self.tipping_low)}, upwards {side(self.tipping_high)}"
        ]
        if self.threshold is not None:
            tipping.append(
                f"it crosses {fmt.number(self.threshold)} at δ = "
                f"{fmt.number(self.tipping_threshold)}"
            )
        return [
            Lines(tuple(summary)),
            Table(("analysis", "estimate", level, "method"), analyses, "sensitivity"),
            Lines(tuple(tipping)),
        ]


def missing_report(
    data: Any,
    outcome: Hashable,
    by: opt.By | None = None,
    *,
    reason: Hashable | None = None,
    responded: Hashable | None = None,
    confidence: float = 0.95,
    threshold: float | None = None,
    deltas: Sequence[float] = (-2.0, -1.0, -0.5, 0.0, 0.5, 1.0, 2.0),
    case: Hashable = "case",
    rerun: Hashable = "rerun",
) -> MissingReport:
    """Where the missing outcomes are, why, and how much they could change the answer.

    Reports the missing rate overall and per cluster (``per_cluster()``), Pearson's test that
    every cluster has the same missing rate, the breakdown by ``reason`` (a column naming
    why each missing row is missing: refusal, timeout, parse failure, ...), and the
    sensitivity table (``to_frame()``): complete case, inverse-probability weighting
    (cluster propensities) and, for a binary outcome, missing-as-fail and
    missing-as-pass, each with its clustered interval. Then the δ-adjustment (the pattern-
    mixture sensitivity analysis of Little 1993): missing rows imputed at their cluster's
    observed rate shifted by δ on the logit scale (the outcome scale for scores), and the
    tipping points, the δ at which the adjusted estimate leaves the IPW interval (or
    crosses ``threshold``).

    A missing outcome is a NaN, or a row whose ``responded`` indicator is False.

    Parameters
    ----------
    data : pandas.DataFrame, xarray.Dataset or dask DataFrame
        As in ``cluster_ci``. In a Dataset a missing outcome is a cell where a run happened
        but has no outcome: the outcome's ``ran`` variable (added by ``to_case_rerun``) or
        ``responded`` tells it from "no run".
    outcome : column label
        The outcome, NaN (or ``responded`` False) where missing.
    by : column label or list of labels, optional
        The cluster (for a Dataset, a coordinate along ``case``; default: the cases).
    reason : column label, optional
        Why each missing row is missing (any labels); a variable of the outcome's dims for
        a Dataset.
    responded : column label, optional
        Explicit response indicator, as in ``cluster_ci``.
    confidence : float
        Coverage of every interval.
    threshold : float, optional
        A value of interest (e.g. a target pass rate): the δ at which the adjusted estimate
        crosses it is reported.
    deltas : sequence of float
        The δ grid of ``delta_table()``.
    case, rerun : dim names
        For a Dataset: its case and rerun dims.

    Returns
    -------
    MissingReport

    Raises
    ------
    InvalidOptionError
        The outcome has no missing value: there is nothing to report.

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
    level = opt.check_confidence(confidence)
    columns = adapters.columns_of(
        data, outcome, by, responded=responded, reason=reason, layout=(case, rerun)
    )
    design = adapters.mean_design(data, columns)
    group = design.groups[0]
    table = group.table
    n_missing = table.n_missing
    if n_missing == 0:
        raise InvalidOptionError(f"outcome {outcome!r} has no missing values: nothing to report")
    n_g, r_g, m_g = table.rows, table.answered, table.missing
    s_g = table.totals + table.shift * r_g
    if design.is_binary:  # counts of passes: whole numbers, whatever the centring rounded
        s_g = np.rint(s_g)
    statistic, df, p_value = missingness_chi_square(n_g, m_g)
    miss_icc = icc_anova(ClusterSums(n_g, m_g, m_g, 0.0)).icc
    is_binary = design.is_binary
    runs = [("complete_case", "drop"), ("ipw", "ipw")]
    if is_binary:
        runs += [("missing_as_fail", "fail"), ("missing_as_pass", "pass")]
    analyses: list[tuple[str, ClusterCI]] = []
    with policy.once() as warned:
        for name, missing in runs:
            options = opt.interval_options(confidence=level, missing=missing)
            analyses.append((name, build_cluster_ci(design, options)))

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
    reasons: tuple[tuple[Any, int, int], ...] = ()
    if reason is not None:
        reasons = adapters.missing_reasons(data, columns)
    notes = []
    if p_value < 0.05:
        notes.append(
            "missingness varies across clusters: the complete-case estimate can be biased; "
            "the IPW row reweights each cluster's responses to stand for its missing rows"
        )
    notes.extend(warned)
    return MissingReport(
        outcome=str(outcome),
        by=design.by,
        n_rows=round(float(n_g.sum())),
        n_missing=n_missing,
        missing_rate=n_missing / float(n_g.sum()),
        n_clusters=table.n_clusters,
        n_clusters_with_missing=int((m_g > 0).sum()),
        n_clusters_all_missing=int((r_g == 0).sum()),
        chi_square=statistic,
        chi_square_df=df,
        chi_square_p=p_value,
        missing_icc=miss_icc,
        reasons=reasons,
        analyses=tuple(analyses),
        deltas=tuple((float(d), adjusted(float(d))) for d in deltas),
        tipping_low=tipping_low,
        tipping_high=tipping_high,
        threshold=None if threshold is None else float(threshold),
        tipping_threshold=tipping_threshold,
        notes=tuple(notes),
        cluster_labels=tuple(design.cluster_names(group.cluster_ids)),
        cluster_rows=tuple(n_g.astype(int).tolist()),
        cluster_missing=tuple(m_g.astype(int).tolist()),
    )
