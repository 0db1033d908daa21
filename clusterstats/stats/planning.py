"""Planning: what a clustered eval design buys and what the next budget should buy (``plan``
from numbers, ``pilot_plan`` from pilot data), and the formulas for planning by hand.

The formulas live in :mod:`clusterstats.core.planning` (the closed-form helpers for planning
by hand in :mod:`clusterstats.stats.formulas`); ``pilot_plan`` first estimates ρ and σ² from
a pilot (with the ICC's interval as the plausible range).
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Hashable, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar, Literal

import numpy as np
import pandas as pd

from clusterstats import _display as fmt
from clusterstats import _options as opt
from clusterstats import adapters
from clusterstats._design import MeanDesign, PairedDesign
from clusterstats._plotting import budget_curve, half_width_curve
from clusterstats._result import Lines, Table, TableResult
from clusterstats.core import intervals as iv
from clusterstats.core import planning as pl
from clusterstats.core.grouping import cluster_sums
from clusterstats.core.score import cluster_score_interval
from clusterstats.core.summary import (
    constant_up_to_rounding,
    default_design_effect,
    summarize_icc,
    summarize_interval,
    uneven_sizes_df,
)
from clusterstats.core.variance import moulton_icc, row_variance
from clusterstats.errors import (
    ClusterStatsWarning,
    DegenerateDataError,
    EmptyDataError,
    InvalidOptionError,
    TooFewClustersError,
)
from clusterstats.stats import _policies as policy
from clusterstats.stats.formulas import checked_icc
from clusterstats.stats.mean import build_cluster_ci
from clusterstats.stats.paired import build_paired_delta, matched_design

__all__ = ["Plan", "build_pilot_plan", "pilot_plan", "plan"]


@dataclass(frozen=True, kw_only=True, repr=False)
class Plan(TableResult):
    """What a clustered eval design buys, and what the next budget should buy (returned by
    ``plan`` and ``pilot_plan``).

    ``to_frame()`` is the options table, with the columns of ``columns``: ``option``,
    ``n_clusters``, ``cluster_size``, ``rows``, ``n_eff``, ``half_width``. ``icc_table()``
    lists the answers over the ICC range, and ``plot()`` draws the budget curve. It prints as
    text and renders as an HTML table in Jupyter.

    Attributes
    ----------
    n_clusters, cluster_size : float
        The design: ``K`` clusters of ``m`` rows.
    icc : float
        The assumed ICC ``ρ``.
    variance : float
        The row variance ``σ²`` (``p(1 − p)`` for a pass rate).
    confidence : float
        Coverage of the planned intervals.
    icc_low, icc_high : float
        A plausible range of ρ (a pilot's ICC interval, or ``icc_range``); NaN if none.
    se : float
        The standard error of the planned quantity: from numbers,
        ``sqrt(σ² deff / (K m))``; from a pilot, that of the pilot's own interval.
    half_width : float
        The half-width of the current design: from numbers, ``t_{K−1} se``; from a pilot,
        the half-width of the interval ``cluster_ci`` (or, with ``other``, ``paired_delta``)
        gives on the pilot itself.
    design_effect : float
        The design effect of the planned interval, the one definition used everywhere: from
        numbers ``1 + (m − 1) ρ`` (with ``size_cv``, ``1 + ((1 + CV²) m − 1) ρ``); from a
        pilot, the ``design_effect`` of the pilot's own interval.
    n_eff : float
        ``K m / design_effect``.
    n_eff_ceiling : float
        What deeper clusters never pass: ``K / ρ`` for equal sizes; from a pilot,
        ``N² / (Σ n_g² ρ*)`` with ``ρ*`` the ICC that gives the pilot's design effect.
    options : tuple of (option, K, m, rows, n_eff, half_width)
        The current design and the ways to spend a new budget: double the depth, double the
        clusters, and (with costs) the cost-optimal depth at the same cost.
    optimal_cluster_size : float or None
        ``m* = sqrt(c_cluster / c_row · (1 − ρ)/ρ)``, when costs are given (``inf`` at
        ρ = 0, where no cost-optimal option is listed; below 1, the option uses 1 row).
    cost_per_cluster, cost_per_row : float or None
        The costs given.
    target_half_width : float or None
        The half-width planned for.
    clusters_needed : float or None
        Clusters of ``m`` rows for that half-width (``t_{K−1}`` quantile; unrounded), at
        least 2 (a note says when 2 clusters already meet the target); from a pilot, at least
        20, the number below which every interval warns that it is itself uncertain (a note
        gives the smaller projection).
    effect : float or None
        For a paired comparison: the difference to detect.
    power : float
        The power to detect it.
    difference_variance, difference_icc : float or None
        For a paired comparison: the variance and ICC of the per-item differences.
    minimum_detectable_effect : float or None
        The smallest paired difference detectable at ``power`` with the current design.
    clusters_for_power : float or None
        Clusters of ``m`` items needed to detect ``effect`` (unrounded), at least 2; from a
        pilot, at least 20, as ``clusters_needed``.
    power_at_clusters : float or None
        From a pilot: the projected power at ``clusters_for_power`` rounded up, the whole
        number of clusters a user draws (at or above ``power``; a plan of few clusters
        gains several points by the rounding).
    by_icc : tuple of (icc, n_eff, half_width, clusters_needed)
        The answers at the low, estimated and high ICC.
    source : str
        ``"numbers"``, or the pilot it was estimated from.
    notes : tuple of str
        E.g. a negative pilot ICC planned as 0, a target met by the minimum of 2 clusters, or
        an unbounded cost-optimal depth at ρ = 0.
    quantity : {"mean", "paired difference"}
        What the half-widths describe: the mean, or (a pilot with ``other``) the paired
        difference ``data − other``.
    estimate : float
        From a pilot: its estimate of that quantity; NaN from numbers.
    df : float
        The degrees of freedom of the current half-width: ``K − 1`` from numbers; from a
        pilot, the df of its uneven cluster sizes (``K − 1`` when sizes are equal). The
        projections move them with the clusters: ``K′ − 1`` for equal sizes, else in
        proportion to the median df of ``K′`` clusters drawn from the pilot's sizes (for a
        pilot of more than 400 clusters, beyond 256, to the df of the draw's expected sums;
        :class:`clusterstats.core.planning.ScaledDesign`).
    method : str
        From a pilot: the method of its interval (``"auto"`` resolved).
    size_cv : float
        The coefficient of variation of the cluster sizes planned with (0: equal sizes).
    projection : tuple of (n_clusters, half_width)
        The half-width projected, by the plan's own rule, at a range of cluster counts
        from 2 to beyond the current and the needed ones (the curve ``plot`` draws; not in
        ``to_frame()``).
    """

    n_clusters: float
    cluster_size: float
    icc: float
    variance: float
    confidence: float
    icc_low: float
    icc_high: float
    se: float
    half_width: float
    design_effect: float
    n_eff: float
    n_eff_ceiling: float
    options: tuple[tuple[str, float, float, float, float, float], ...]
    optimal_cluster_size: float | None = None
    cost_per_cluster: float | None = None
    cost_per_row: float | None = None
    target_half_width: float | None = None
    clusters_needed: float | None = None
    effect: float | None = None
    power: float = 0.8
    difference_variance: float | None = None
    difference_icc: float | None = None
    minimum_detectable_effect: float | None = None
    clusters_for_power: float | None = None
    power_at_clusters: float | None = None
    by_icc: tuple[tuple[float, float, float, float | None], ...] = ()
    source: str = "numbers"
    notes: tuple[str, ...] = ()
    quantity: str = "mean"
    estimate: float = math.nan
    df: float = math.nan
    method: str = ""
    size_cv: float = 0.0
    projection: tuple[tuple[float, float], ...] = field(
        default=(), compare=False, metadata={"frame": False}
    )

    _metric_labels: ClassVar[tuple[str, ...]] = ("option",)
    columns: ClassVar[tuple[str, ...]] = (
        "option",
        "n_clusters",
        "cluster_size",
        "rows",
        "n_eff",
        "half_width",
    )

    def to_frame(self):
        """The options table: one row per design, with the columns of ``columns``."""

        return pd.DataFrame(list(self.options), columns=list(self.columns))

    @property
    def more_clusters_needed(self) -> int | None:
        """Clusters to add to the current ones for ``target_half_width`` (whole clusters)."""
        if self.clusters_needed is None:
            return None
        return max(math.ceil(self.clusters_needed) - int(self.n_clusters), 0)

    @property
    def more_clusters_for_power(self) -> int | None:
        """Clusters to add to the current ones to detect ``effect`` (whole clusters)."""
        if self.clusters_for_power is None:
            return None
        return max(math.ceil(self.clusters_for_power) - int(self.n_clusters), 0)

    def icc_table(self):
        """How the answers move over the plausible ICC range: ``icc``, ``n_eff``,
        ``half_width``, ``clusters_needed``."""

        return pd.DataFrame(
            list(self.by_icc), columns=["icc", "n_eff", "half_width", "clusters_needed"]
        )

    def _more(self, total: float) -> str:
        more = max(math.ceil(total) - int(self.n_clusters), 0)
        return f"{math.ceil(total):,} clusters ({more:,} more than the {int(self.n_clusters):,})"

    def _heading(self) -> str:
        return f"Plan({self.source})"

    def _blocks(self) -> list[Lines | Table]:
        k, m = self.n_clusters, self.cluster_size
        what = "the paired difference" if self.quantity == "paired difference" else "the mean"
        design = (
            f"{fmt.size(k)} clusters x {fmt.size(m)} rows, icc {fmt.proportion(self.icc)}"
            + (
                f" (range {fmt.proportion_interval(self.icc_low, self.icc_high)})"
                if not math.isnan(self.icc_low)
                else ""
            )
            + f", row variance {fmt.number(self.variance)}"
            + (f", size CV {fmt.number(self.size_cv)}" if self.size_cv else "")
        )
        if self.source == "numbers":
            how = (
                f"Var = σ² deff/(Km): se {fmt.number(self.se)}, {self.confidence:.0%} "
                f"half-width ±{fmt.number(self.half_width)}"
            )
        else:
            how = (
                f"{what} {fmt.number(self.estimate)}: the pilot's {self.confidence:.0%} "
                f"interval ({self.method}) is ±{fmt.number(self.half_width)}, se "
                f"{fmt.number(self.se)}, {fmt.dof(self.df)} df; projected to K′ clusters "
                "like these as se·√(K/K′), with the df of K′ clusters"
                + (
                    " (with the jackknife's bias, the bootstrap's widening and the residuals' "
                    "skewness at K′)"
                    if self.method in ("bootstrap_t", "cr3", "cr3_ik")
                    else ""
                )
            )
        before = (
            design,
            how,
            f"design effect {fmt.number(self.design_effect)}; effective n "
            f"{fmt.number(self.n_eff)} (ceiling {fmt.number(self.n_eff_ceiling)} however "
            "deep the clusters)",
        )
        options = Table(
            ("option", "K", "m", "rows", "n_eff", "half-width"),
            tuple(
                (
                    option,
                    fmt.size(kk),
                    fmt.size(mm),
                    round(rows),
                    float(neff),
                    f"±{fmt.number(half)}",
                )
                for option, kk, mm, rows, neff, half in self.options
            ),
            f"options ({what})",
        )
        after = []
        if self.optimal_cluster_size is not None:
            after.append(
                f"cost-optimal rows per cluster m* = {fmt.size(self.optimal_cluster_size)}"
            )
        if self.clusters_needed is not None:
            after.append(
                f"for ±{fmt.number(self.target_half_width)}: {self._more(self.clusters_needed)}"
                f" of {fmt.size(m)} rows"
            )
        if self.minimum_detectable_effect is not None:
            after.append(
                f"paired: minimum detectable effect {fmt.number(self.minimum_detectable_effect)}"
                f" at {self.power:.0%} power"
                + (
                    f"; {self._more(self.clusters_for_power)} to detect {fmt.number(self.effect)}"
                    if self.clusters_for_power is not None
                    else ""
                )
                + (
                    f" (power {self.power_at_clusters:.0%} at that whole number)"
                    if self.power_at_clusters is not None
                    else ""
                )
            )
        for icc, neff, half, need in self.by_icc:
            extra = "" if need is None else f", {math.ceil(need):,} clusters for the target"
            after.append(
                f"if icc = {fmt.proportion(icc)}: n_eff {neff:,.1f}, ±{fmt.number(half)}{extra}"
            )
        return [Lines(before), options, Lines(tuple(after))]

    def plot(self, *, kind: Literal["clusters", "depth"] = "clusters", ax: Any = None) -> Any:
        """What more clusters (or deeper ones) buy (needs matplotlib, as ``ClusterCI.plot``).

        Parameters
        ----------
        kind : {"clusters", "depth"}, default "clusters"
            ``"clusters"``: the half-width projected by this plan against the number of
            clusters (log scale), with the target as a line and today's design and the
            recommended number of clusters marked. ``"depth"``: the effective n against
            rows per cluster, for today's clusters (flattening towards the ceiling K/ρ:
            deeper clusters stop helping) and for today's total rows spread over fewer,
            deeper clusters.
        {plot_ax}

        {plot_returns}

        {plot_examples_head}
        >>> import clusterstats
        >>> p = clusterstats.plan(n_clusters=40, cluster_size=10, icc=0.1, proportion=0.7,
        ...                       target_half_width=0.03)
        >>> ax = p.plot()
        >>> ax.get_title()
        '±0.0300 needs 173 clusters of 10 rows (today 40)'
        >>> p.plot(kind="depth").get_xlabel()
        'rows per cluster (m)'
        """
        opt.check_choice("kind", kind, ("clusters", "depth"))
        if kind == "depth":
            return budget_curve(
                self.n_clusters,
                self.cluster_size,
                self.icc,
                title=f"Effective n by depth at icc {fmt.proportion(self.icc)}",
                ax=ax,
            )
        needed = None if self.clusters_needed is None else math.ceil(self.clusters_needed)
        rows = fmt.size(self.cluster_size)
        powered = None
        if self.effect is not None and self.clusters_for_power is not None:
            buys = f"{self.power:.0%} power to detect {fmt.number(self.effect)}"
            powered = (self.clusters_for_power, buys)
        if needed is not None:
            title = (
                f"±{fmt.number(self.target_half_width)} needs {needed:,} clusters of {rows} "
                f"rows (today {self.n_clusters:,.0f})"
            )
        elif powered is not None and math.isfinite(powered[0]):
            title = (
                f"{powered[1]} needs {math.ceil(powered[0]):,} clusters of {rows} rows "
                f"(today {self.n_clusters:,.0f})"
            )
        else:
            title = f"Half-width by clusters of {rows} rows (today {self.n_clusters:,.0f})"
        return half_width_curve(
            [k for k, _ in self.projection],
            [h for _, h in self.projection],
            current=(self.n_clusters, self.half_width),
            target=self.target_half_width,
            needed=self.clusters_needed,
            ylabel=f"half-width of the {self.confidence:.0%} interval",
            title=title,
            powered=powered,
            ax=ax,
        )


# -- the options of plan, validated ----------------------------------------------------------


def check_plan_costs(cost_per_cluster: Any, cost_per_row: Any) -> tuple[float, float] | None:
    """Both costs (positive numbers) or neither: ``(per cluster, per row)`` or None."""
    if (cost_per_cluster is None) != (cost_per_row is None):
        raise InvalidOptionError("give both cost_per_cluster and cost_per_row, or neither")
    if cost_per_cluster is None:
        return None
    return (
        opt.check_plan_number("cost_per_cluster", cost_per_cluster, above=0),
        opt.check_plan_number("cost_per_row", cost_per_row, above=0),
    )


def check_plan_effect(effect: Any) -> float:
    """The magnitude of an effect to detect: a nonzero finite number (its sign is dropped)."""
    magnitude = abs(opt.check_plan_number("effect", effect))
    if magnitude == 0:
        raise InvalidOptionError(
            "effect must be nonzero (the difference to detect; its sign does not matter), "
            f"got {effect!r}"
        )
    return magnitude


@dataclass(frozen=True)
class PlanOptions:
    """Options of ``plan``, validated: the design, the row variance, and what to plan for."""

    n_clusters: float
    cluster_size: float
    icc: float
    variance: float
    confidence: float
    icc_range: tuple[float, float] | None
    costs: tuple[float, float] | None  # (per cluster, per row)
    target_half_width: float | None
    effect: float | None  # the magnitude to detect
    power: float
    difference: tuple[float, float] | None  # (variance, ICC) of the paired differences
    size_cv: float = 0.0  # coefficient of variation of the cluster sizes


def plan_options(
    *,
    n_clusters: Any,
    cluster_size: Any,
    icc: Any,
    variance: Any = None,
    proportion: Any = None,
    confidence: Any = 0.95,
    icc_range: Any = None,
    cost_per_cluster: Any = None,
    cost_per_row: Any = None,
    target_half_width: Any = None,
    effect: Any = None,
    power: Any = 0.8,
    difference_variance: Any = None,
    difference_icc: Any = None,
    size_cv: Any = 0.0,
) -> PlanOptions:
    """Validate the options of ``plan``: every number finite and in its range (at least 2
    clusters, a mean cluster size of at least 1, ICCs in [0, 1], proportions strictly
    between 0 and 1, positive variances, costs and half-widths, a power strictly between 0
    and 1), an ``icc_range`` that contains ``icc``, and the options that go together."""
    k = opt.check_plan_number(
        "n_clusters",
        n_clusters,
        at_least=2,
        whole=True,
        why="one cluster has no estimable between-cluster variance, so plan for 2 or more",
    )
    m = opt.check_plan_number(
        "cluster_size", cluster_size, at_least=1, why="it is the mean number of rows per cluster"
    )
    if not math.isfinite(2.0 * k * m):
        raise InvalidOptionError(
            f"n_clusters={opt.shown(n_clusters)} clusters of "
            f"cluster_size={opt.shown(cluster_size)} rows are beyond floating-point range; plan "
            "a smaller design"
        )
    rho = checked_icc("icc", icc)
    level = opt.check_confidence(confidence)
    if (variance is None) == (proportion is None):
        raise InvalidOptionError(
            "give the row variance as variance= or a pass rate as proportion= (one of them, "
            "not both)"
        )
    if proportion is not None:
        p = opt.check_plan_number(
            "proportion",
            proportion,
            above=0,
            below=1,
            why="a pass rate of 0 or 1 has no row variance; plan with the rate you expect "
            "(0.5 gives the widest interval)",
        )
        sigma2 = p * (1.0 - p)
    else:
        sigma2 = opt.check_plan_number("variance", variance, above=0)
    span = None
    if icc_range is not None:
        if isinstance(icc_range, (str, bytes)) or not isinstance(icc_range, (Sequence, np.ndarray)):
            raise InvalidOptionError(f"icc_range must be a pair (low, high), got {icc_range!r}")
        if len(icc_range) != 2:
            raise InvalidOptionError(
                f"icc_range must be a pair (low, high), got {len(icc_range)} values: {icc_range!r}"
            )
        low, high = (
            opt.check_plan_number(f"icc_range[{i}]", bound, at_least=0, at_most=1)
            for i, bound in enumerate(icc_range)
        )
        if low > high:
            raise InvalidOptionError(
                f"icc_range must be (low, high) with low <= high, got {icc_range!r}"
            )
        if not low <= rho <= high:
            raise InvalidOptionError(
                f"icc={icc!r} lies outside icc_range={icc_range!r}: the plausible range must "
                "contain the planned icc"
            )
        span = (low, high)
    costs = check_plan_costs(cost_per_cluster, cost_per_row)
    target = None
    if target_half_width is not None:
        target = opt.check_plan_number("target_half_width", target_half_width, above=0)
    strength = opt.check_plan_number("power", power, above=0, below=1)
    difference = None
    if difference_variance is not None or difference_icc is not None:
        if difference_variance is None or difference_icc is None:
            raise InvalidOptionError("a paired plan needs difference_variance and difference_icc")
        difference = (
            opt.check_plan_number("difference_variance", difference_variance, above=0),
            checked_icc("difference_icc", difference_icc),
        )
    elif effect is not None:
        raise InvalidOptionError("effect= needs difference_variance= and difference_icc=")
    magnitude = None if effect is None else check_plan_effect(effect)
    cv = opt.check_plan_number(
        "size_cv",
        size_cv,
        at_least=0,
        why="it is the coefficient of variation of the cluster sizes (0 for equal sizes)",
    )
    return PlanOptions(
        n_clusters=k,
        cluster_size=m,
        icc=rho,
        variance=sigma2,
        confidence=level,
        icc_range=span,
        costs=costs,
        target_half_width=target,
        effect=magnitude,
        power=strength,
        difference=difference,
        size_cv=cv,
    )


def plan(
    *,
    n_clusters: float,
    cluster_size: float,
    icc: float,
    variance: float | None = None,
    proportion: float | None = None,
    confidence: float = 0.95,
    icc_range: tuple[float, float] | None = None,
    cost_per_cluster: float | None = None,
    cost_per_row: float | None = None,
    target_half_width: float | None = None,
    effect: float | None = None,
    power: float = 0.8,
    difference_variance: float | None = None,
    difference_icc: float | None = None,
    size_cv: float = 0.0,
) -> Plan:
    """What a design of ``n_clusters`` clusters of ``cluster_size`` rows buys, and what the
    next budget should buy.

    The budget identity ``Var = σ² (ρ/K + (1 − ρ)/(K m))``, the effective n and its ceiling
    ``K/ρ``; side-by-side options for a new budget (double the depth, double the clusters,
    and with ``cost_per_cluster``/``cost_per_row`` the cost-optimal depth
    ``m* = sqrt(c_cluster/c_row · (1 − ρ)/ρ)`` at the same cost); the clusters needed for
    ``target_half_width``; for a paired comparison (``difference_variance``,
    ``difference_icc``), the minimum detectable effect and the clusters needed to detect
    ``effect`` with ``power``; and how the answers move over ``icc_range``.

    Give the row variance as ``variance`` or, for a pass rate, ``proportion`` (σ² = p(1−p)).
    The formulas are the closed forms of a two-stage design (Donner & Klar 2000, ch. 5):
    ``Var = σ² (1 + (m − 1) ρ) / (K m)`` with the ``t_{K−1}`` quantile for the half-width,
    ``K = q² σ² (1 + (m − 1) ρ) / (m h²)`` for a target half-width ``h`` (``q`` the
    ``t_{K−1}`` quantile, solved for ``K``, at least 2), and for a paired comparison the
    minimum detectable effect ``(z_{1−α/2} + z_{power}) sqrt(σ²_d (1 + (m − 1) ρ_d) / (K m))``.
    With unequal cluster sizes (``size_cv``, the coefficient of variation of the sizes) the
    design effect is ``1 + ((1 + CV²) m − 1) ρ`` (Eldridge, Ashby & Kerry 2006) in every
    formula; the t quantile keeps ``K − 1`` df, which very uneven sizes (a few large clusters
    carrying the mean) overstate: plan from a pilot with ``pilot_plan``, which projects the
    pilot's own interval and its df.

    Parameters
    ----------
    n_clusters : float
        ``K``, the clusters of the design: a whole number, at least 2 (one cluster has no
        estimable between-cluster variance).
    cluster_size : float
        ``m``, the rows per cluster (its mean for unequal sizes), at least 1.
    icc : float
        ``ρ`` in [0, 1] (a negative estimate means no detectable clustering: use 0).
    variance : float, optional
        The row variance ``σ²`` of a score.
    proportion : float, optional
        For a pass rate: ``p``, strictly between 0 and 1, giving ``σ² = p(1 − p)``.
    confidence : float
        Coverage of the planned intervals, strictly between 0 and 1.
    icc_range : (float, float), optional
        A plausible range ``(low, high)`` of ρ within [0, 1] that contains ``icc`` (e.g. a
        pilot's ICC interval): the answers at its ends.
    cost_per_cluster, cost_per_row : float, optional
        Costs (positive) of a new cluster and of a row, for the cost-optimal depth.
    target_half_width : float, optional
        The half-width (positive) to plan the clusters for.
    effect : float, optional
        For a paired comparison: the difference to detect (nonzero; its sign does not
        matter).
    power : float
        The power to detect ``effect``, strictly between 0 and 1.
    difference_variance, difference_icc : float, optional
        For a paired comparison: the variance (positive) and the ICC (in [0, 1]) of the
        per-item differences (both, or neither; ``effect`` needs them).
    size_cv : float
        The coefficient of variation of the cluster sizes (sd ÷ mean, at least 0; 0 for
        equal sizes).

    Returns
    -------
    Plan

    Raises
    ------
    InvalidOptionError
        A number that is not a finite real number (a bool, a string, NaN or inf) or lies
        outside its range (above), neither or both of ``variance`` and ``proportion``, an
        ``icc_range`` that is not a pair around ``icc``, one cost without the other, a paired
        option without the others it needs, or inputs so extreme that a planned quantity
        leaves floating-point range (the message names them).

    Examples
    --------
    100 conversations of 10 turns at ρ = 0.5 (K = 100, m = 10): doubling the depth buys
    190.5 effective rows, doubling the clusters 363.6.

    >>> p = plan(n_clusters=100, cluster_size=10, icc=0.5, proportion=0.5)
    >>> [(o[0], round(o[4], 1)) for o in p.options]
    [('current', 181.8), ('double the depth', 190.5), ('double the clusters', 363.6)]
    """
    o = plan_options(
        n_clusters=n_clusters,
        cluster_size=cluster_size,
        icc=icc,
        variance=variance,
        proportion=proportion,
        confidence=confidence,
        icc_range=icc_range,
        cost_per_cluster=cost_per_cluster,
        cost_per_row=cost_per_row,
        target_half_width=target_half_width,
        effect=effect,
        power=power,
        difference_variance=difference_variance,
        difference_icc=difference_icc,
        size_cv=size_cv,
    )
    k, m, rho, sigma2, confidence = o.n_clusters, o.cluster_size, o.icc, o.variance, o.confidence
    notes: list[str] = []
    design = f"n_clusters={k:g}, cluster_size={m:g}, variance={sigma2:g}"
    spread = 1.0 + o.size_cv**2

    def equal_size_icc(value: float, mm: float) -> float:
        return pl.equal_size_icc(value, mm, o.size_cv)

    def option(name: str, kk: float, mm: float) -> tuple[str, float, float, float, float, float]:
        half = pl.half_width(sigma2, equal_size_icc(rho, mm), kk, mm, confidence)
        _in_range(f"half-width of {name!r}", half, design)
        return (name, kk, mm, kk * mm, pl.effective_n(kk, mm, equal_size_icc(rho, mm)), half)

    options = [option("current", k, m), option("double the depth", k, 2 * m)]
    options.append(option("double the clusters", 2 * k, m))
    m_star = None
    if o.costs is not None:
        c1, c2 = o.costs
        m_star = pl.optimal_cluster_size(c1, c2, rho)
        if rho == 0:
            notes.append(
                "at icc 0 the cost-optimal depth is unbounded (fewest clusters, deepest "
                "clusters): no cost-optimal option is listed"
            )
        else:
            costs = f"cost_per_cluster={c1:g} and cost_per_row={c2:g}"
            _in_range("cost-optimal depth m*", m_star, costs)
            m_use = max(m_star, 1.0)
            if m_star < 1:
                notes.append(
                    f"the cost-optimal depth m* = {m_star:.3g} is below 1 row per cluster: the "
                    "cost-optimal option uses 1"
                )
            k_use = pl.clusters_at_same_cost(k, m, m_use, c1, c2)
            _in_range("cost-optimal clusters", k_use, costs)
            if k_use >= 2:
                options.append(option("cost-optimal depth, same cost", k_use, m_use))
            else:
                notes.append(
                    f"at the same cost the cost-optimal depth m* = {m_star:.3g} leaves "
                    f"{k_use:.3g} clusters, fewer than 2: no cost-optimal option is listed"
                )
    needed = None
    if o.target_half_width is not None:
        needed = _clusters_needed(
            sigma2, equal_size_icc(rho, m), m, o.target_half_width, confidence, notes
        )
    mde = k_power = None
    if o.difference is not None:
        s2d, rho_d = o.difference
        rho_d = equal_size_icc(rho_d, m)
        mde = pl.minimum_detectable_effect(s2d, rho_d, k, m, o.power, confidence)
        _in_range(
            "minimum detectable effect",
            mde,
            f"difference_variance={s2d:g}, n_clusters={k:g}, cluster_size={m:g}",
        )
        if o.effect is not None:
            k_power = pl.clusters_for_power(s2d, rho_d, m, o.effect, o.power, confidence)
            if not math.isfinite(k_power):
                _in_range("number of clusters to detect the effect", k_power, f"effect={effect!r}")
            if k_power < 2:
                notes.append(
                    f"an effect of {o.effect:g} is detectable with the minimum of 2 clusters"
                )
                k_power = 2.0
    low, high = (math.nan, math.nan) if o.icc_range is None else o.icc_range
    by_icc = []
    for value in [] if o.icc_range is None else [low, rho, high]:
        equal = equal_size_icc(value, m)
        by_icc.append(
            (
                value,
                pl.effective_n(k, m, equal),
                _checked_half_width(sigma2, equal, k, m, confidence, design),
                None
                if o.target_half_width is None
                else _clusters_needed(sigma2, equal, m, o.target_half_width, confidence, None),
            )
        )
    se = math.sqrt(pl.variance_of_mean(sigma2, equal_size_icc(rho, m), k, m))
    _in_range("standard error", se, design)
    return Plan(
        n_clusters=k,
        cluster_size=m,
        icc=rho,
        variance=sigma2,
        confidence=confidence,
        icc_low=low,
        icc_high=high,
        se=se,
        half_width=options[0][5],
        design_effect=1.0 + (m - 1.0) * equal_size_icc(rho, m),
        n_eff=pl.effective_n(k, m, equal_size_icc(rho, m)),
        n_eff_ceiling=k / (rho * spread) if rho > 0 else math.inf,
        options=tuple(options),
        optimal_cluster_size=m_star,
        cost_per_cluster=cost_per_cluster,
        cost_per_row=cost_per_row,
        target_half_width=target_half_width,
        clusters_needed=needed,
        effect=effect,
        power=o.power,
        difference_variance=difference_variance,
        difference_icc=difference_icc,
        minimum_detectable_effect=mde,
        clusters_for_power=k_power,
        by_icc=tuple(by_icc),
        df=k - 1.0,
        size_cv=o.size_cv,
        notes=tuple(notes),
        projection=_projection(
            lambda kk: pl.half_width(sigma2, equal_size_icc(rho, m), kk, m, confidence), k, needed
        ),
    )


def _projection(
    half_width_at: Any, n_clusters: float, needed: float | None, *, prepare: Any = None
) -> tuple[tuple[float, float], ...]:
    """``(K, half-width at K)`` on a geometric grid from a quarter of the current (or the
    needed, if fewer) clusters, at least 2, to three times the current ones (or 1.25 times
    the needed ones, if more), the current and needed counts included exactly; ``prepare``,
    if given, is handed the whole grid first (:meth:`ScaledDesign.prepare`)."""
    fewest = min(n_clusters, needed) if needed is not None else n_clusters
    bottom = max(2.0, fewest / 4.0)
    top = max(3.0 * n_clusters, 1.25 * needed if needed is not None else 0.0, 2.0 * bottom)
    grid = set(np.geomspace(bottom, top, 60).tolist()) | {float(n_clusters)}
    if needed is not None:
        grid.add(float(needed))
    if prepare is not None:
        prepare(grid)
    return tuple((k, float(half_width_at(k))) for k in sorted(grid))


def _in_range(quantity: str, value: float, inputs: str) -> None:
    """Raise unless a planned quantity is a positive finite number: extreme inputs can take
    it beyond floating-point range (overflow to inf, underflow to 0, a zero-width interval)."""
    if not (math.isfinite(value) and value > 0):
        raise InvalidOptionError(
            f"the planned {quantity} is {value!r}, beyond floating-point range for {inputs}; "
            "plan with values of ordinary magnitude (rescale the score, or a less extreme "
            "target)"
        )


def _checked_half_width(
    sigma2: float, icc: float, k: float, m: float, confidence: float, design: str
) -> float:
    half = pl.half_width(sigma2, icc, k, m, confidence)
    _in_range(f"half-width at icc {icc:g}", half, design)
    return half


def _clusters_needed(
    sigma2: float,
    icc: float,
    cluster_size: float,
    target: float,
    confidence: float,
    notes: list[str] | None,
) -> float:
    """Clusters of ``cluster_size`` rows for the half-width ``target`` (``t`` quantile), at
    least 2: a target that 2 clusters already meet needs 2 (a note says so)."""
    needed = pl.clusters_for_half_width(
        sigma2, icc, cluster_size, target, confidence, t_quantile=True
    )
    if not math.isfinite(needed):
        _in_range("number of clusters for the target", needed, f"target_half_width={target:g}")
    if needed <= 2.0 and notes is not None:  # the t root is never below 2
        notes.append(f"the target ±{target:g} is met with the minimum of 2 clusters")
    return needed


#: The fewest clusters a pilot plan asks for: the number below which every interval warns
#: that it is itself uncertain (:data:`clusterstats.core.intervals.FEW_CLUSTERS`).
FEWEST_PLANNED = iv.FEW_CLUSTERS
_FEW_REASON = (
    "with fewer clusters the interval is itself uncertain, and a projection to so few "
    "clusters rests on large-sample approximations; even at 20, when a few clusters hold "
    "most of the rows, the power projected can be several points high"
)


def pilot_plan(
    data: Any,
    outcome: Hashable,
    by: opt.By | None = None,
    *,
    other: Any = None,
    on: Hashable | Sequence[Hashable] | None = None,
    missing: opt.Missing = "drop",
    confidence: float = 0.95,
    cost_per_cluster: float | None = None,
    cost_per_row: float | None = None,
    target_half_width: float | None = None,
    effect: float | None = None,
    power: float = 0.8,
    responded: Hashable | None = None,
    case: Hashable = "case",
    rerun: Hashable = "rerun",
) -> Plan:
    """A plan from pilot data (also ``df.eval.plan(outcome, by, ...)``): the pilot's own
    interval, projected to other numbers of clusters like the pilot's.

    The current design is the interval ``cluster_ci`` gives on the pilot with its default
    method (with ``other``, the interval ``paired_delta`` gives for ``data − other`` on the
    items both have): its half-width is the plan's current row, and its design effect the
    plan's. Drawing ``K′`` clusters like the pilot's (the same spread of sizes, the same
    heterogeneity) scales the standard error by ``sqrt(K / K′)``, and the degrees of freedom
    of uneven cluster sizes (Imbens & Kolesár 2016; ``K − 1`` for equal sizes) move to those
    of ``K′`` clusters drawn from the pilot's sizes
    (:class:`clusterstats.core.planning.ScaledDesign`). Nothing here assumes equal sizes or
    an exchangeable model: a pilot whose large clusters differ most (real benchmarks do) gets
    the design effect its interval has, not the one a mean cluster size and an ICC predict.
    Deeper clusters are projected with the ICC that gives the pilot's design effect under
    the unequal-size formula ``1 + ρ (Σ n² / N − 1)``. The ICC and its interval are shown,
    and move the answers over their range (``icc_table()``).

    Parameters
    ----------
    data : pandas.DataFrame, xarray.Dataset or dask DataFrame
        The pilot, as in ``cluster_ci``.
    outcome : column label
        The outcome.
    by : column label or list of labels, optional
        The cluster (for a Dataset, a coordinate along ``case``; default: the cases).
    other : DataFrame or Dataset, optional
        The second side of a paired comparison on the same items (the common items are
        compared, as ``paired_delta(how="inner")``): the plan then describes the paired
        difference ``data − other``.
    on : column label(s), optional
        The item key of frames, with ``other``.
    missing : {"drop", "fail", "pass", "raise"}
        As in ``cluster_ci``.
    confidence : float
        Coverage of the planned intervals.
    cost_per_cluster, cost_per_row : float, optional
        Costs, for the cost-optimal depth.
    target_half_width : float, optional
        The half-width to plan for.
    effect : float, optional
        The difference to detect: with ``other``, a paired difference; without it, the
        distance between the mean and a boundary it is to be told from (a gate's
        ``at_least``). Its sign does not matter.
    power : float
        With ``effect``: the chance to detect it, strictly between 0 and 1.
    responded : column label, optional
        Explicit response indicator, as in ``cluster_ci``.
    case, rerun : dim names
        For a Dataset: its case and rerun dims.

    Returns
    -------
    Plan

    Raises
    ------
    InvalidOptionError
        ``by`` that names the outcome, or an invalid option (as in ``plan``).
    EmptyDataError
        A pilot whose every outcome is missing (with ``missing="drop"``).
    TooFewClustersError
        A pilot (or a set of common items) with fewer than 2 clusters.
    DegenerateDataError
        A pilot whose ICC cannot be estimated: an outcome with no variation (all pass, all
        fail, or one constant score), a single row in every cluster, or per-item
        differences that do not vary (``other`` agrees with ``data`` on every item). The
        message says what to do instead (e.g. ``plan`` from numbers).

    Examples
    --------
    >>> import clusterstats
    >>> mmlu = clusterstats.datasets.load("mmlu_pro")
    >>> pilot = mmlu[mmlu.model == "Mixtral-8x7B-Instruct-v0.1"]
    >>> p = clusterstats.pilot_plan(pilot, "correct", by="src", target_half_width=0.02)
    >>> ci = clusterstats.cluster_ci(pilot, "correct", by="src")
    >>> p.half_width == (ci.high - ci.low) / 2, p.design_effect == ci.design_effect
    (True, True)
    >>> p.n_clusters, p.clusters_needed > p.n_clusters
    (91.0, True)
    """
    confidence = opt.check_confidence(confidence)
    opt.check_choice("missing", missing, opt.MISSING)
    plan_options = _pilot_options(
        power=power,
        cost_per_cluster=cost_per_cluster,
        cost_per_row=cost_per_row,
        target_half_width=target_half_width,
        effect=effect,
    )
    columns = adapters.columns_of(
        data, outcome, by, on=None if other is None else on, responded=responded,
        layout=(case, rerun),
    )  # fmt: skip
    if other is None:
        design: MeanDesign | PairedDesign = adapters.mean_design(data, columns)
    else:
        options = opt.paired_options(columns, how="inner", missing=missing)
        design = matched_design(data, other, columns, options)
    if by is not None and any(_is_label(label, outcome) for label in opt.check_labels("by", by)):
        raise InvalidOptionError(
            f"by= names the outcome column {outcome!r} itself: cluster the pilot by the columns "
            "its rows share (a document, a task), not by the outcome"
        )
    return build_pilot_plan(
        design, outcome=outcome, missing=missing, confidence=confidence, **plan_options
    )


def _pilot_options(
    *,
    power: Any,
    cost_per_cluster: Any,
    cost_per_row: Any,
    target_half_width: Any,
    effect: Any,
) -> dict[str, Any]:
    """The checked planning options of ``pilot_plan``, as ``build_pilot_plan`` takes them."""
    target_width = None
    if target_half_width is not None:
        target_width = opt.check_plan_number("target_half_width", target_half_width, above=0)
    return {
        "power": opt.check_plan_number("power", power, above=0, below=1),
        "costs": check_plan_costs(cost_per_cluster, cost_per_row),
        "cost_per_cluster": cost_per_cluster,
        "cost_per_row": cost_per_row,
        "target_half_width": target_half_width,
        "target_width": target_width,
        "effect": effect,
        "size": None if effect is None else check_plan_effect(effect),
    }


def build_pilot_plan(
    design: MeanDesign | PairedDesign,
    *,
    outcome: Hashable,
    missing: str,
    confidence: float,
    power: float,
    costs: tuple[float, float] | None = None,
    cost_per_cluster: float | None = None,
    cost_per_row: float | None = None,
    target_half_width: float | None = None,
    target_width: float | None = None,
    effect: float | None = None,
    size: float | None = None,
) -> Plan:
    """``pilot_plan`` on a design of one group: a :class:`MeanDesign` plans its mean, a
    :class:`PairedDesign` (matched with ``how="inner"``) its paired difference. The gate
    plans each of its slices from the design it reads the slice's interval from."""

    level = power
    paired = isinstance(design, PairedDesign)
    if not paired:
        try:
            target = policy.apply_missing(design.groups[0], design, missing).sums
        except EmptyDataError:
            raise EmptyDataError(
                f"every outcome {outcome!r} of the pilot is missing: there is nothing to plan "
                "from; pilot on answered rows, or plan from numbers with plan(...)"
            ) from None
        pilot = f"the pilot ({outcome!r} by {' + '.join(map(repr, design.by))})"
        summary, variance = _pilot_moments(target, pilot, confidence, paired=False)
    else:
        items = design.groups[0][1]
        target = cluster_sums(items.a - items.b, items.codes)
        differences = f"the per-item differences of {outcome!r} between data and other"
        summary, variance = _pilot_moments(target, differences, confidence, paired=True)
    notes: list[str] = []
    # the pilot's own interval: what it warns (few clusters) becomes a note of the plan
    with warnings.catch_warnings(record=True) as warned:
        warnings.simplefilter("always", ClusterStatsWarning)
        if not paired:
            ci = build_cluster_ci(
                design, opt.interval_options(confidence=confidence, missing=missing)
            )
        else:
            delta = build_paired_delta(
                design, opt.paired_options(how="inner", confidence=confidence, missing=missing)
            )
    notes.extend(dict.fromkeys(f"the pilot's interval: {w.message}" for w in warned))
    if not paired:
        estimate, low, high = ci.estimate, ci.low, ci.high
        se, method, design_effect = ci.se, ci.method, ci.design_effect
        quantity, what = "mean", "the ICC"
    else:
        estimate, low, high, se, method = delta.delta, delta.low, delta.high, delta.se, delta.method
        design_effect = default_design_effect(target, "pooled", False)[0]
        quantity, what = "paired difference", "the ICC of the per-item differences"
    rho = min(max(summary.icc, 0.0), 1.0)
    if summary.icc < 0:
        notes.append(f"{what} is negative ({summary.icc:.3g}); shown as 0")
    icc_range = None
    if math.isfinite(summary.low) and math.isfinite(summary.high):
        # the interval, truncated to [0, 1], and widened to the shown ICC if it misses it
        icc_range = (min(max(summary.low, 0.0), rho), max(min(max(summary.high, 0.0), 1.0), rho))
    else:
        notes.append(f"{what} has no interval: no plausible range is shown")

    g = target.n_clusters
    counts = target.counts
    n_rows = float(counts.sum())
    mean_size = n_rows / g
    half = (high - low) / 2.0
    # the studentized bootstrap and CR3 intervals stand on the jackknife variance
    jackknife = method in ("bootstrap_t", "cr3", "cr3_ik")
    skewness, kurtosis = pl.residual_shape(counts, target.totals) if jackknife else (0.0, 1.0)
    # oriented towards the effect, taken in the direction of the pilot's estimate
    skewness *= math.copysign(1.0, estimate) if estimate else 0.0
    base_half = None
    if not paired and method in iv.SCORE_UNIONS and _score_reaches(target, confidence, low, high):
        # Where the cluster score interval reaches beyond the interval it is united with,
        # that reach is a small-sample term: the spread projected is the base interval's.
        base = summarize_interval(
            target,
            estimand="pooled",
            method=iv.SCORE_UNIONS[method],
            confidence=confidence,
            is_binary=design.groups[0].is_binary,
        )
        base_half = (base.high - base.low) / 2.0
    scaled = pl.ScaledDesign(
        half_width=half,
        df=uneven_sizes_df(target, "pooled", jackknife=jackknife),
        n_clusters=g,
        confidence=confidence,
        sizes=None if target.is_balanced else counts,
        icc=moulton_icc(target),
        jackknife=jackknife,
        se=se if jackknife else None,
        skewness=skewness,
        kurtosis=kurtosis,
        base_half_width=base_half,
    )
    concentration = float(counts @ counts) / n_rows  # Σ n² / N
    # the ICC that gives the pilot's design effect under the unequal-size formula
    rho_star = pl.icc_of_design_effect(design_effect, concentration)

    def deeper(factor: float) -> float:
        return pl.deepened_design_effect(design_effect, rho_star, factor, concentration)

    def option(name: str, clusters: float, factor: float) -> tuple:
        width = scaled.half_width(clusters) * math.sqrt(deeper(factor) / (factor * design_effect))
        rows = clusters * mean_size * factor
        return (name, clusters, mean_size * factor, rows, rows / deeper(factor), width)

    options = [
        ("current", float(g), mean_size, n_rows, n_rows / design_effect, half),
        option("double the depth", g, 2.0),
        option("double the clusters", 2.0 * g, 1.0),
    ]
    m_star = None
    if costs is not None:
        c1, c2 = costs
        m_star = pl.optimal_cluster_size(c1, c2, rho_star)
        if rho_star == 0:
            notes.append(
                "the pilot's design effect shows no clustering: the cost-optimal depth is "
                "unbounded and no cost-optimal option is listed"
            )
        else:
            m_use = max(m_star, 1.0)
            k_use = pl.clusters_at_same_cost(g, mean_size, m_use, c1, c2)
            if k_use >= 2:
                options.append(option("cost-optimal depth, same cost", k_use, m_use / mean_size))
    needed = None if target_width is None else scaled.clusters_for_half_width(target_width)
    if needed is not None and needed < FEWEST_PLANNED:
        notes.append(
            f"the projection meets ±{fmt.number(target_width)} with "
            f"{math.ceil(needed):,} clusters; the plan asks for {FEWEST_PLANNED}, where it "
            f"projects ±{fmt.number(scaled.half_width(FEWEST_PLANNED))} ({_FEW_REASON})"
        )
        needed = float(FEWEST_PLANNED)
    mde = k_power = power_at_clusters = None
    if size is not None:
        k_power = scaled.clusters_for_power(size, power=level)
        projected = k_power
        k_power = max(k_power, float(FEWEST_PLANNED))
        if math.isfinite(k_power):
            power_at_clusters = scaled.power(size, math.ceil(k_power))
        if projected < FEWEST_PLANNED:
            notes.append(
                f"the projection reaches {level:.0%} power with {math.ceil(projected):,} "
                f"clusters; the plan asks for {FEWEST_PLANNED}, where it projects "
                f"{power_at_clusters:.1%} ({_FEW_REASON})"
            )
    if effect is not None or paired:
        mde = scaled.detectable_effect(g, level)
    by_icc = []
    for value in [] if icc_range is None else [icc_range[0], rho, icc_range[1]]:
        # the model's relative change of the design effect, applied to the pilot's own
        ratio = pl.design_effect_ratio(value, rho, concentration)
        moved = pl.ScaledDesign(
            half_width=half * math.sqrt(ratio),
            df=scaled.df,
            n_clusters=g,
            confidence=confidence,
            sizes=None if target.is_balanced else counts,
            icc=moulton_icc(target),
            jackknife=jackknife,
            se=se * math.sqrt(ratio) if jackknife else None,
            skewness=skewness,
            kurtosis=kurtosis,
            base_half_width=None if base_half is None else base_half * math.sqrt(ratio),
        )
        by_icc.append(
            (
                value,
                n_rows / (design_effect * ratio),
                moved.half_width(g),
                None if target_width is None else moved.clusters_for_half_width(target_width),
            )
        )
    return Plan(
        n_clusters=float(g),
        cluster_size=mean_size,
        icc=rho,
        variance=variance,
        confidence=confidence,
        icc_low=math.nan if icc_range is None else icc_range[0],
        icc_high=math.nan if icc_range is None else icc_range[1],
        se=se,
        half_width=half,
        design_effect=design_effect,
        n_eff=n_rows / design_effect,
        n_eff_ceiling=(n_rows * n_rows / (float(counts @ counts) * rho_star))
        if rho_star > 0
        else math.inf,
        options=tuple(options),
        optimal_cluster_size=m_star,
        cost_per_cluster=cost_per_cluster,
        cost_per_row=cost_per_row,
        target_half_width=target_half_width,
        clusters_needed=needed,
        effect=effect,
        power=power,
        difference_variance=variance if paired else None,
        difference_icc=rho if paired else None,
        minimum_detectable_effect=mde,
        clusters_for_power=k_power,
        power_at_clusters=power_at_clusters,
        by_icc=tuple(by_icc),
        source=f"pilot: {outcome} by {' + '.join(design.by)}",
        quantity=quantity,
        estimate=estimate,
        df=scaled.df,
        method=method,
        notes=tuple(notes),
        projection=_projection(scaled.half_width, float(g), needed, prepare=scaled.prepare),
    )


def _score_reaches(sums: Any, confidence: float, low: float, high: float) -> bool:
    """Whether the cluster score interval may reach an end of the union ``[low, high]``.

    Where it lies strictly inside on both sides, the union is its base interval to the bit,
    and the base need not be computed again. The bounds are taken unclipped: clipping to
    the outcome's range only moves them inwards, so the answer errs towards computing it."""
    score_low, score_high = cluster_score_interval(sums, "pooled", confidence)
    return not (score_low > low and score_high < high)


def _is_label(a: Any, b: Any) -> bool:
    """Whether two column labels are the same (labels that do not compare are not)."""
    try:
        return bool(a == b)
    except (TypeError, ValueError):
        return False


def _pilot_moments(sums: Any, what: str, confidence: float, *, paired: bool) -> tuple[Any, float]:
    """The ICC summary and the row variance of a pilot (or of its per-item differences), or
    the error that says why the pilot cannot give them and what to do instead."""

    instead = (
        "or plan from numbers with plan(..., difference_variance=..., difference_icc=...)"
        if paired
        else "or plan from numbers with plan(n_clusters=..., cluster_size=..., icc=..., "
        "proportion=...)"
    )
    if sums.n_clusters < 2:
        raise TooFewClustersError(
            f"found {sums.n_clusters} cluster in {what}: an ICC needs at least 2 clusters; "
            f"pilot on 2 or more clusters, {instead}"
        )
    n_rows = float(sums.counts.sum())
    if n_rows <= sums.n_clusters:
        raise DegenerateDataError(
            f"every cluster in {what} has a single row, so no ICC can be estimated (there is "
            f"no within-cluster variation to compare); pilot with 2 or more rows per cluster, "
            f"{instead}"
        )
    sigma2 = row_variance(sums)
    point = sums.shift + float(sums.totals.sum()) / n_rows
    if constant_up_to_rounding(sums, point):  # the rule of cluster_ci's intervals
        if paired:
            raise DegenerateDataError(
                f"{what} do not vary: the two sides agree on every common item (or differ by "
                "the same amount), so no variance or ICC of the differences can be estimated; "
                f"check that other holds the other system's results, {instead}"
            )
        raise DegenerateDataError(
            f"{what} has no variation (every row has the same outcome, e.g. all pass or all "
            f"fail), so no ICC or row variance can be estimated from it; pilot on results "
            f"that vary, {instead}"
        )
    return summarize_icc(sums, confidence=confidence), sigma2
