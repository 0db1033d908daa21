"""Planning: what a clustered eval design buys and what the next budget should buy (``plan``
from numbers, ``pilot_plan`` from pilot data), and the formulas for planning by hand.

The formulas live in :mod:`clusterstats.core.planning`; ``pilot_plan`` first estimates ρ and
σ² from a pilot (with the ICC's interval as the plausible range).
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Sequence
from dataclasses import dataclass, replace
from typing import Any, ClassVar

import numpy as np

from clusterstats import _display as fmt
from clusterstats import _options as opt
from clusterstats import _policies as policy
from clusterstats import adapters
from clusterstats.core import intervals as iv
from clusterstats.core import planning as pl
from clusterstats.core.variance import design_effect_kish
from clusterstats.errors import InvalidOptionError

__all__ = [
    "Plan",
    "adjusted_wilson_interval",
    "effective_n",
    "kish_design_effect",
    "pilot_plan",
    "plan",
    "rule_of_three",
    "wilson_interval",
]


@dataclass(frozen=True, kw_only=True, repr=False)
class Plan:
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
        The standard error of the mean, ``sqrt(σ² (1 + (m − 1) ρ) / (K m))``.
    half_width : float
        Its ``t_{K−1}`` half-width.
    design_effect : float
        ``1 + (m − 1) ρ``.
    n_eff : float
        ``K m / design_effect``.
    n_eff_ceiling : float
        ``K / ρ``, which deeper clusters never pass.
    options : tuple of (option, K, m, rows, n_eff, half_width)
        The current design and the ways to spend a new budget: double the depth, double the
        clusters, and (with costs) the cost-optimal depth at the same cost.
    optimal_cluster_size : float or None
        ``m* = sqrt(c_cluster / c_row · (1 − ρ)/ρ)``, when costs are given.
    cost_per_cluster, cost_per_row : float or None
        The costs given.
    target_half_width : float or None
        The half-width planned for.
    clusters_needed : float or None
        Clusters of ``m`` rows for that half-width (``t`` quantile iterated; unrounded).
    effect : float or None
        For a paired comparison: the difference to detect.
    power : float
        The power to detect it.
    difference_variance, difference_icc : float or None
        For a paired comparison: the variance and ICC of the per-item differences.
    minimum_detectable_effect : float or None
        The smallest paired difference detectable at ``power`` with the current design.
    clusters_for_power : float or None
        Clusters of ``m`` items needed to detect ``effect`` (unrounded).
    by_icc : tuple of (icc, n_eff, half_width, clusters_needed)
        The answers at the low, estimated and high ICC.
    source : str
        ``"numbers"``, or the pilot it was estimated from.
    notes : tuple of str
        E.g. a negative pilot ICC planned as 0.
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
    by_icc: tuple[tuple[float, float, float, float | None], ...] = ()
    source: str = "numbers"
    notes: tuple[str, ...] = ()

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
        import pandas as pd

        return pd.DataFrame(list(self.options), columns=list(self.columns))

    def icc_table(self):
        """How the answers move over the plausible ICC range: ``icc``, ``n_eff``,
        ``half_width``, ``clusters_needed``."""
        import pandas as pd

        return pd.DataFrame(
            list(self.by_icc), columns=["icc", "n_eff", "half_width", "clusters_needed"]
        )

    def _lines(self) -> list[str]:
        k, m = self.n_clusters, self.cluster_size
        lines = [
            f"Plan({self.source})",
            f"  {k:g} clusters x {fmt.number(m, 3)} rows, icc {fmt.number(self.icc, 3)}"
            + (
                f" (range {fmt.interval(self.icc_low, self.icc_high, 3)})"
                if not math.isnan(self.icc_low)
                else ""
            )
            + f", row variance {fmt.number(self.variance)}",
            f"  Var = σ²(ρ/K + (1−ρ)/(Km)): se {fmt.number(self.se)}, "
            f"{self.confidence:.0%} half-width ±{fmt.number(self.half_width)}; design effect "
            f"{fmt.number(self.design_effect, 3)}; effective n {fmt.number(self.n_eff, 4)} "
            f"(ceiling K/ρ = {fmt.number(self.n_eff_ceiling, 4)})",
            "  options:",
        ]
        width = max(len(o[0]) for o in self.options)
        for option, kk, mm, rows, neff, half in self.options:
            lines.append(
                f"    {option:<{width}}  K {kk:>8,.1f}  m {mm:>7.2f}  rows {rows:>10,.0f}  "
                f"n_eff {neff:>9.1f}  ±{fmt.number(half)}"
            )
        if self.optimal_cluster_size is not None:
            lines.append(
                f"  cost-optimal rows per cluster m* = {fmt.number(self.optimal_cluster_size, 3)}"
            )
        if self.clusters_needed is not None:
            lines.append(
                f"  for ±{fmt.number(self.target_half_width)}: {math.ceil(self.clusters_needed):,} "
                f"clusters of {fmt.number(m, 3)} rows"
            )
        if self.minimum_detectable_effect is not None:
            lines.append(
                f"  paired: minimum detectable effect {fmt.number(self.minimum_detectable_effect)}"
                f" at {self.power:.0%} power"
                + (
                    f"; {math.ceil(self.clusters_for_power):,} clusters to detect "
                    f"{fmt.number(self.effect)}"
                    if self.clusters_for_power is not None
                    else ""
                )
            )
        for icc, neff, half, need in self.by_icc:
            extra = "" if need is None else f", {math.ceil(need):,} clusters for the target"
            lines.append(
                f"  if icc = {fmt.number(icc, 3)}: n_eff {neff:,.1f}, ±{fmt.number(half)}{extra}"
            )
        return lines

    def __repr__(self) -> str:
        return "\n".join(self._lines()) + "".join(f"\n  note: {n}" for n in self.notes)

    def _repr_html_(self) -> str:
        rows = [list(o) for o in self.options]
        caption = (
            f"Plan ({self.source}): icc {fmt.number(self.icc, 3)}, effective n "
            f"{fmt.number(self.n_eff, 4)} of ceiling {fmt.number(self.n_eff_ceiling, 4)}"
        )
        return fmt.html_table(list(self.columns), rows, caption, list(self.notes))

    def plot(self, *, ax: Any = None) -> Any:
        """The budget curve: effective n against rows per cluster, for the current clusters
        (with the ceiling K/ρ) and for the current total rows, with the current design
        marked (needs matplotlib, as ``ClusterCI.plot``).

        Parameters
        ----------
        ax : matplotlib Axes, optional
            Where to draw (a new figure by default).

        Returns
        -------
        matplotlib Axes
        """
        from clusterstats._plotting import budget_curve

        return budget_curve(
            self.n_clusters,
            self.cluster_size,
            self.icc,
            title=f"Effective n at icc {self.icc:.3g}",
            ax=ax,
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
    ``t_{K−1}`` quantile, iterated), and for a paired comparison the minimum detectable
    effect ``(z_{1−α/2} + z_{power}) sqrt(σ²_d (1 + (m − 1) ρ_d) / (K m))``.

    Parameters
    ----------
    n_clusters : float
        ``K``, the clusters of the design (positive).
    cluster_size : float
        ``m``, the rows per cluster (its mean for unequal sizes).
    icc : float
        ``ρ`` in [0, 1] (a negative estimate means no detectable clustering: use 0).
    variance : float, optional
        The row variance ``σ²`` of a score.
    proportion : float, optional
        For a pass rate: ``p``, giving ``σ² = p(1 − p)``.
    confidence : float
        Coverage of the planned intervals.
    icc_range : (float, float), optional
        A plausible range of ρ (e.g. a pilot's ICC interval): the answers at its ends.
    cost_per_cluster, cost_per_row : float, optional
        Costs of a new cluster and of a row, for the cost-optimal depth.
    target_half_width : float, optional
        The half-width to plan the clusters for.
    effect : float, optional
        For a paired comparison: the difference to detect.
    power : float
        The power to detect ``effect``, strictly between 0 and 1.
    difference_variance, difference_icc : float, optional
        For a paired comparison: the variance and ICC of the per-item differences (both, or
        neither; ``effect`` needs them).

    Returns
    -------
    Plan

    Raises
    ------
    InvalidOptionError
        A non-positive ``n_clusters``, ``cluster_size`` or cost, ``icc`` outside [0, 1],
        neither or both of ``variance`` and ``proportion``, one cost without the other, or a
        paired option without the others it needs.

    Examples
    --------
    100 conversations of 10 turns at ρ = 0.5 (K = 100, m = 10): doubling the depth buys
    190.5 effective rows, doubling the clusters 363.6.

    >>> p = plan(n_clusters=100, cluster_size=10, icc=0.5, proportion=0.5)
    >>> [(o[0], round(o[4], 1)) for o in p.options]
    [('current', 181.8), ('double the depth', 190.5), ('double the clusters', 363.6)]
    """
    o = opt.plan_options(
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
    )
    k, m, rho, sigma2, confidence = o.n_clusters, o.cluster_size, o.icc, o.variance, o.confidence

    def option(name: str, kk: float, mm: float) -> tuple[str, float, float, float, float, float]:
        return (
            name,
            kk,
            mm,
            kk * mm,
            pl.effective_n(kk, mm, rho),
            pl.half_width(sigma2, rho, kk, mm, confidence),
        )

    options = [option("current", k, m), option("double the depth", k, 2 * m)]
    options.append(option("double the clusters", 2 * k, m))
    m_star = None
    if o.costs is not None:
        c1, c2 = o.costs
        m_star = pl.optimal_cluster_size(c1, c2, rho)
        if math.isfinite(m_star):
            budget = k * (c1 + c2 * m)
            m_use = max(m_star, 1.0)
            options.append(
                option("cost-optimal depth, same cost", budget / (c1 + c2 * m_use), m_use)
            )
    needed = None
    if o.target_half_width is not None:
        needed = pl.clusters_for_half_width(
            sigma2, rho, m, o.target_half_width, confidence, t_quantile=True
        )
    mde = k_power = None
    if o.difference is not None:
        s2d, rho_d = o.difference
        mde = pl.minimum_detectable_effect(s2d, rho_d, k, m, o.power, confidence)
        if o.effect is not None:
            k_power = pl.clusters_for_power(s2d, rho_d, m, o.effect, o.power, confidence)
    low, high = (math.nan, math.nan) if o.icc_range is None else o.icc_range
    by_icc = []
    for value in [] if o.icc_range is None else [low, rho, high]:
        value = min(max(value, 0.0), 1.0)
        by_icc.append(
            (
                value,
                pl.effective_n(k, m, value),
                pl.half_width(sigma2, value, k, m, confidence),
                None
                if o.target_half_width is None
                else pl.clusters_for_half_width(
                    sigma2, value, m, o.target_half_width, confidence, t_quantile=True
                ),
            )
        )
    return Plan(
        n_clusters=k,
        cluster_size=m,
        icc=rho,
        variance=sigma2,
        confidence=confidence,
        icc_low=low,
        icc_high=high,
        se=math.sqrt(pl.variance_of_mean(sigma2, rho, k, m)),
        half_width=pl.half_width(sigma2, rho, k, m, confidence),
        design_effect=1.0 + (m - 1.0) * rho,
        n_eff=pl.effective_n(k, m, rho),
        n_eff_ceiling=k / rho if rho > 0 else math.inf,
        options=tuple(options),
        optimal_cluster_size=m_star,
        cost_per_cluster=cost_per_cluster,
        cost_per_row=cost_per_row,
        target_half_width=target_half_width,
        clusters_needed=needed,
        effect=effect,
        power=float(power),
        difference_variance=difference_variance,
        difference_icc=difference_icc,
        minimum_detectable_effect=mde,
        clusters_for_power=k_power,
        by_icc=tuple(by_icc),
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
    """A ``plan`` from pilot data (also ``df.eval.plan(outcome, by, ...)``).

    The pilot's number of clusters ``K``, mean cluster size, ICC and row variance are
    estimated first; the ICC's confidence interval becomes the plausible range
    (``icc_range``, truncated at 0), and a negative ICC is planned as 0, with a note. With
    ``other`` (a second frame or Dataset of the same items, matched on ``on``) the plan
    covers the paired comparison ``data − other``: the pilot's variance and ICC of the
    per-item differences give the minimum detectable effect and the clusters needed to
    detect ``effect``.

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
        compared, as ``paired_delta(how="inner")``).
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
        With ``other``: the difference to detect.
    power : float
        With ``effect``: the power to detect it.
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
        ``effect`` without ``other``, or an invalid option.

    Examples
    --------
    >>> import clusterstats
    >>> demo = clusterstats.load_demo_data()
    >>> pilot = demo[demo.model == "Mixtral-8x7B-Instruct-v0.1"]
    >>> p = clusterstats.pilot_plan(pilot, "correct", by="src", target_half_width=0.02)
    >>> p.n_clusters, round(p.icc, 3), p.clusters_needed > p.n_clusters
    (91.0, 0.105, True)
    """
    from clusterstats.core.grouping import cluster_sums
    from clusterstats.core.summary import summarize_icc
    from clusterstats.core.variance import row_variance

    confidence = opt.check_confidence(confidence)
    opt.check_choice("missing", missing, opt.MISSING)
    design = adapters.mean_design(data, outcome, by, responded=responded, case=case, rerun=rerun)
    sums = policy.apply_missing(design.groups[0], design, missing).sums
    icc_summary = summarize_icc(sums, confidence=confidence)
    rho = max(icc_summary.icc, 0.0)
    sigma2 = row_variance(sums)
    notes = []
    if icc_summary.icc < 0:
        notes.append(f"the pilot's ICC is negative ({icc_summary.icc:.3g}); planned with 0")
    options: dict[str, Any] = {}
    if other is not None:
        paired = adapters.paired_design(
            data,
            other,
            outcome,
            by,
            on=on,
            how="inner",
            missing=missing,
            responded=responded,
            case=case,
        )
        items = paired.groups[0][1]
        diff_sums = cluster_sums(items.a - items.b, items.codes)
        diff_icc = summarize_icc(diff_sums, confidence=confidence).icc
        options = {
            "difference_variance": row_variance(diff_sums),
            "difference_icc": 0.0 if not np.isfinite(diff_icc) else max(diff_icc, 0.0),
            "effect": effect,
            "power": power,
        }
    elif effect is not None:
        raise InvalidOptionError("effect= plans a paired comparison: pass other= (and on=)")
    result = plan(
        n_clusters=float(sums.n_clusters),
        cluster_size=float(sums.counts.mean()),
        icc=min(rho, 1.0),
        variance=sigma2,
        confidence=confidence,
        icc_range=(max(icc_summary.low, 0.0), min(max(icc_summary.high, 0.0), 1.0)),
        cost_per_cluster=cost_per_cluster,
        cost_per_row=cost_per_row,
        target_half_width=target_half_width,
        **options,
    )
    source = f"pilot: {outcome} by {' + '.join(design.by)}"
    return replace(result, source=source, notes=tuple(notes))


# -- formula helpers for planning by hand ---------------------------------------------------


def kish_design_effect(cluster_size: float, icc: float) -> float:
    """Kish's design effect ``1 + (m - 1) * icc`` for clusters of (average) size ``m``
    (Kish 1965). It does planning arithmetic by hand, as the other formula helpers do: none
    of them looks at data.

    Parameters
    ----------
    cluster_size : float
        ``m``, at least 1.
    icc : float
        ``ρ`` in [0, 1] (use 0 for a negative estimate: it means no detectable clustering).

    Returns
    -------
    float

    Raises
    ------
    InvalidOptionError
        ``cluster_size < 1``, or ``icc`` outside [0, 1].

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

    Parameters
    ----------
    n : float
        Rows.
    design_effect : float
        The design effect (positive).

    Returns
    -------
    float

    Raises
    ------
    InvalidOptionError
        A design effect that is not positive.

    Examples
    --------
    >>> round(effective_n(200, 2.2), 1), round(effective_n(1000, 5.5), 1)
    (90.9, 181.8)
    """
    if not design_effect > 0:
        raise InvalidOptionError(f"design_effect must be positive, got {design_effect!r}")
    return float(n) / float(design_effect)


def wilson_interval(successes: float, n: float, *, confidence: float = 0.95) -> tuple[float, float]:
    """Wilson score interval for ``successes`` out of ``n``, treating the trials as
    independent (both may be fractional; Wilson 1927).

    Parameters
    ----------
    successes : float
        Successes, between 0 and ``n``.
    n : float
        Trials (positive; an effective n may be fractional).
    confidence : float
        Nominal coverage.

    Returns
    -------
    (float, float)
        The interval ``(low, high)``.

    Raises
    ------
    InvalidOptionError
        Unless ``0 <= successes <= n`` and ``n > 0``.

    Examples
    --------
    >>> [round(b, 3) for b in wilson_interval(30, 300)]
    [0.071, 0.139]
    """
    if not n > 0 or not 0 <= successes <= n:
        raise InvalidOptionError(f"need 0 <= successes <= n and n > 0, got {successes}, {n}")
    return iv.wilson(float(successes) / float(n), float(n), opt.check_confidence(confidence))


def adjusted_wilson_interval(
    successes: float, n: float, *, cluster_size: float, icc: float, confidence: float = 0.95
) -> tuple[float, float]:
    """Wilson interval on the Kish effective n, keeping the observed proportion.

    ``n_eff = n / (1 + (cluster_size - 1) * icc)`` (Kish 1965); the proportion
    ``successes / n`` is kept and the normal quantile is used.

    Parameters
    ----------
    successes : float
        Successes among the ``n`` rows.
    n : float
        Rows.
    cluster_size : float
        ``m``, the rows per cluster.
    icc : float
        ``ρ`` in [0, 1].
    confidence : float
        Nominal coverage.

    Returns
    -------
    (float, float)
        The interval ``(low, high)``.

    Raises
    ------
    InvalidOptionError
        Unless ``0 <= successes <= n`` and ``n > 0``, or for an invalid ``cluster_size`` or
        ``icc`` (as ``kish_design_effect``).

    Examples
    --------
    30 cases × 10 reruns, 30 failures, ρ = 0.3, against the naive ``wilson_interval``
    [7.1%, 13.9%]:

    >>> [round(b, 3) for b in adjusted_wilson_interval(30, 300, cluster_size=10, icc=0.3)]
    [0.052, 0.184]
    """
    n_eff = effective_n(n, kish_design_effect(cluster_size, icc))
    if not n > 0 or not 0 <= successes <= n:
        raise InvalidOptionError(f"need 0 <= successes <= n and n > 0, got {successes}, {n}")
    if math.isnan(n_eff):
        raise InvalidOptionError("the effective n is undefined")
    return iv.wilson(float(successes) / float(n), n_eff, opt.check_confidence(confidence))


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

    Parameters
    ----------
    n_rows : int
        Runs, none of which failed.
    n_clusters : int, optional
        The test cases (clusters) the runs come from.
    icc : float, optional
        ``ρ`` of the runs within a case (needs ``n_clusters``).
    confidence : float
        One-sided confidence of the bound.

    Returns
    -------
    float
        The upper bound.

    Raises
    ------
    InvalidOptionError
        ``n_rows < 1``, ``n_clusters`` outside ``[1, n_rows]``, or ``icc`` without
        ``n_clusters``.

    See Also
    --------
    cluster_ci : on data without a failure, it uses the two-sided version of the same bound
        (Clopper–Pearson on the effective n).

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
    confidence = opt.check_confidence(confidence)
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
