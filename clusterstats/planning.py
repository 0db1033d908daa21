"""Planning the next eval budget: ``plan`` from numbers, ``pilot_plan`` from pilot data.

The formulas live in :mod:`clusterstats.core.planning`; this module gathers them into a
:class:`~clusterstats.Plan` and, for a pilot, estimates ρ and σ² (with the ICC's interval
as the plausible range) first.
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Sequence
from typing import Any

import numpy as np

from clusterstats import api
from clusterstats.core import planning as pl
from clusterstats.errors import InvalidOptionError
from clusterstats.results import Plan

__all__ = ["pilot_plan", "plan"]


def _positive(name: str, value: Any) -> float:
    try:
        number = float(value)
    except (TypeError, ValueError):
        raise InvalidOptionError(f"{name} must be a number, got {value!r}") from None
    if not number > 0 or math.isinf(number):
        raise InvalidOptionError(f"{name} must be positive and finite, got {value!r}")
    return number


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

    Examples
    --------
    Seed 003's budget (K = 100, m = 10, ρ = 0.5): doubling the depth buys 190.5 effective
    rows, doubling the clusters 363.6.

    >>> p = plan(n_clusters=100, cluster_size=10, icc=0.5, proportion=0.5)
    >>> [(o[0], round(o[4], 1)) for o in p.options]
    [('current', 181.8), ('double the depth', 190.5), ('double the clusters', 363.6)]
    """
    k = _positive("n_clusters", n_clusters)
    m = _positive("cluster_size", cluster_size)
    if not 0.0 <= float(icc) <= 1.0:
        raise InvalidOptionError(
            f"icc must be between 0 and 1 for planning, got {icc!r} (use 0 for a negative estimate)"
        )
    rho = float(icc)
    confidence = api._check_confidence(confidence)
    if (variance is None) == (proportion is None):
        raise InvalidOptionError("give the row variance as variance= or a pass rate as proportion=")
    if proportion is not None:
        if not 0.0 < float(proportion) < 1.0:
            raise InvalidOptionError(
                f"proportion must be strictly between 0 and 1, got {proportion!r}"
            )
        sigma2 = float(proportion) * (1.0 - float(proportion))
    else:
        sigma2 = _positive("variance", variance)

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
    if (cost_per_cluster is None) != (cost_per_row is None):
        raise InvalidOptionError("give both cost_per_cluster and cost_per_row, or neither")
    if cost_per_cluster is not None:
        c1 = _positive("cost_per_cluster", cost_per_cluster)
        c2 = _positive("cost_per_row", cost_per_row)
        m_star = pl.optimal_cluster_size(c1, c2, rho)
        if math.isfinite(m_star):
            budget = k * (c1 + c2 * m)
            m_use = max(m_star, 1.0)
            options.append(
                option("cost-optimal depth, same cost", budget / (c1 + c2 * m_use), m_use)
            )
    needed = None
    if target_half_width is not None:
        h = _positive("target_half_width", target_half_width)
        needed = pl.clusters_for_half_width(sigma2, rho, m, h, confidence, t_quantile=True)
    paired = difference_variance is not None or difference_icc is not None
    mde = k_power = None
    if paired:
        if difference_variance is None or difference_icc is None:
            raise InvalidOptionError("a paired plan needs difference_variance and difference_icc")
        s2d = _positive("difference_variance", difference_variance)
        rho_d = min(max(float(difference_icc), 0.0), 1.0)
        if not 0.0 < float(power) < 1.0:
            raise InvalidOptionError(f"power must be strictly between 0 and 1, got {power!r}")
        mde = pl.minimum_detectable_effect(s2d, rho_d, k, m, power, confidence)
        if effect is not None:
            k_power = pl.clusters_for_power(
                s2d, rho_d, m, _positive("effect", abs(effect)), power, confidence
            )
    elif effect is not None:
        raise InvalidOptionError("effect= needs difference_variance= and difference_icc=")
    low, high = (math.nan, math.nan) if icc_range is None else map(float, icc_range)
    by_icc = []
    for value in [] if icc_range is None else [low, rho, high]:
        value = min(max(value, 0.0), 1.0)
        by_icc.append(
            (
                value,
                pl.effective_n(k, m, value),
                pl.half_width(sigma2, value, k, m, confidence),
                None
                if target_half_width is None
                else pl.clusters_for_half_width(
                    sigma2, value, m, float(target_half_width), confidence, t_quantile=True
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
    by: Hashable | Sequence[Hashable],
    *,
    other: Any = None,
    on: Hashable | Sequence[Hashable] | None = None,
    missing: str = "drop",
    confidence: float = 0.95,
    cost_per_cluster: float | None = None,
    cost_per_row: float | None = None,
    target_half_width: float | None = None,
    effect: float | None = None,
    power: float = 0.8,
) -> Plan:
    """A :func:`plan` from pilot data: ``K``, the mean cluster size, the ICC (its
    confidence interval becomes the plausible range, truncated at 0) and the row variance
    are estimated first. With ``other`` (a second frame of the same items, matched on
    ``on``) the plan covers the paired comparison ``data − other``: the pilot's variance and
    ICC of the per-item differences give the minimum detectable effect and the clusters
    needed to detect ``effect``.

    Examples
    --------
    >>> import clusterstats
    >>> demo = clusterstats.load_demo_data()
    >>> pilot = demo[demo.model == "Mixtral-8x7B-Instruct-v0.1"]
    >>> p = clusterstats.pilot_plan(pilot, "correct", by="src", target_half_width=0.02)
    >>> p.n_clusters, round(p.icc, 3), p.clusters_needed > p.n_clusters
    (91.0, 0.105, True)
    """
    from clusterstats._frame import prepare
    from clusterstats.core.summary import summarize_icc
    from clusterstats.core.variance import row_variance

    confidence = api._check_confidence(confidence)
    prepared = prepare(data, outcome, by, missing=missing)[0]
    sums = prepared.sums
    icc_summary = summarize_icc(sums, confidence=confidence)
    rho = max(icc_summary.icc, 0.0)
    sigma2 = row_variance(sums)
    notes = []
    if icc_summary.icc < 0:
        notes.append(f"the pilot's ICC is negative ({icc_summary.icc:.3g}); planned with 0")
    options: dict[str, Any] = {}
    if other is not None:
        from clusterstats._pairing import align

        items = align(
            data, other, outcome, outcome, by, on=on, how="inner", missing=missing, rerun=None
        )
        from clusterstats.core.grouping import cluster_sums

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
    from dataclasses import replace

    source = f"pilot: {outcome} by {' + '.join(map(str, api._as_labels(by)))}"
    return replace(result, source=source, notes=tuple(notes))
