"""The variance designs by name: the one place the statistics reach the core's interval of
each design (one-way clusters, strata, row weights, crossed groupings), with the core's
errors turned into the library's on the way.

``cluster_ci`` (each group), ``paired_delta`` (the per-item differences and each side) and
``compare`` (each model's score) name the design they need; each reads the same table, so a
design's options are passed in one way everywhere.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, Literal

import numpy as np

from clusterstats.core.crossed import summarize_crossed
from clusterstats.core.strata import summarize_stratified
from clusterstats.core.summary import IntervalSummary, summarize_interval
from clusterstats.core.weighted import summarize_weighted
from clusterstats.stats import _policies as policy

__all__ = ["VARIANCE_DESIGNS", "VarianceDesign", "design_interval", "variance_design"]

VarianceDesign = Literal["one_way", "stratified", "weighted", "crossed"]


def variance_design(*, crossed: bool, weighted: bool, stratified: bool) -> VarianceDesign:
    """The name of a design: crossed groupings first (their own multi-way variance), then
    row weights (stratified or not), then strata, else one-way clusters."""
    if crossed:
        return "crossed"
    if weighted:
        return "weighted"
    return "stratified" if stratified else "one_way"


def _one_way(sums: Any, *, common: dict[str, Any], **_: Any) -> IntervalSummary:
    return summarize_interval(sums, **common)


def _stratified(sums: Any, *, strata: Any, lonely: str, common: dict[str, Any], **_: Any):
    return summarize_stratified(sums, strata, lonely=lonely, **common)


def _weighted(sums: Any, *, strata: Any, lonely: str, common: dict[str, Any], **_: Any):
    # a weighted mean has one estimand and no bootstrap: those options do not reach it
    kept = {k: v for k, v in common.items() if k not in ("estimand", "n_resamples", "rng")}
    return summarize_weighted(sums, strata=strata, lonely=lonely, **kept)


def _crossed(sums: Any, *, members: Any, names: Sequence[str], common: dict[str, Any], **_: Any):
    kept = {k: v for k, v in common.items() if k not in ("estimand", "n_resamples", "rng")}
    return summarize_crossed(sums, members, names=names, **kept)


#: Each design's interval, by name.
VARIANCE_DESIGNS: dict[str, Callable[..., IntervalSummary]] = {
    "one_way": _one_way,
    "stratified": _stratified,
    "weighted": _weighted,
    "crossed": _crossed,
}


def design_interval(
    name: str,
    sums: Any,
    *,
    method: str,
    confidence: float,
    is_binary: bool,
    estimand: str = "pooled",
    strata: np.ndarray | None = None,
    members: Sequence[np.ndarray] | None = None,
    names: Sequence[str] = (),
    lonely: str = "fail",
    n_resamples: int = 9999,
    rng: np.random.Generator | None = None,
    cap_n_eff: bool = True,
    **one_way: Any,
) -> IntervalSummary:
    """The interval of design ``name`` from the clusters' sums (a ``WeightedSums`` for
    ``"weighted"``): ``strata`` for the stratified and weighted designs, ``members`` and
    ``names`` for the crossed one, and ``one_way`` options (``icc_prior``,
    ``n_empty_clusters``) for the one-way design only."""
    common = {
        "estimand": estimand,
        "method": method,
        "confidence": confidence,
        "is_binary": is_binary,
        "n_resamples": n_resamples,
        "rng": rng,
        "cap_n_eff": cap_n_eff,
    }
    if name == "one_way":
        common.update(one_way)
    with policy.core_errors():
        return VARIANCE_DESIGNS[name](
            sums, strata=strata, members=members, names=names, lonely=lonely, common=common
        )
