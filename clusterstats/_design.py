"""Designs: what an adapter hands to a statistic.

A design is the validated, reduced form of one call's input, the same whatever the backend
(pandas, plain arrays, an xarray Dataset, a dask DataFrame): per-cluster sufficient
statistics, the cluster labels and strata, and the counts of what was dropped. As R survey's
``svydesign`` object, it is built once per call, and every statistic reads it. Nothing here
computes a statistic.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Hashable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from numpy.typing import NDArray

from clusterstats.core.grouping import ClusterTable
from clusterstats.core.weighted import WeightedSums

__all__ = [
    "CaseDesign",
    "ComparisonDesign",
    "Groupings",
    "MeanDesign",
    "MeanGroup",
    "PairedDesign",
    "PairedItems",
    "ResponseRows",
    "RowsDesign",
]

#: ``check_clustering``'s candidate groupings: ``(name, its cluster columns)`` each.
Groupings = Sequence[tuple[str, Sequence[Hashable]]]


@dataclass(frozen=True)
class ResponseRows:
    """One group's rows for a response model (``propensity="logistic"``): the outcome (NaN
    where there is no usable response), the cluster of each row (0..G-1 in the order of the
    group's clusters) and the covariates."""

    values: NDArray[np.float64]
    codes: NDArray[np.intp]
    covariates: NDArray[np.float64]  # (rows, p)


@dataclass(frozen=True)
class MeanGroup:
    """One group's per-cluster statistics (every cluster with at least one row).

    ``cluster_ids`` are the clusters' codes across the whole design (in sorted label order),
    which :attr:`MeanDesign.cluster_names` turns into labels for messages; ``strata`` the
    stratum code of each cluster, when the design is stratified.
    """

    label: Any
    table: ClusterTable
    cluster_ids: NDArray[np.intp]
    is_binary: bool
    strata: NDArray[np.intp] | None = None
    # With weights: the weighted sums of the clusters with a usable outcome, which are the
    # ``weighted_ids`` among ``cluster_ids``.
    weighted: WeightedSums | None = None
    weighted_ids: NDArray[np.intp] | None = None
    # When asked for (a confidence sequence's order of arrival): when each cluster of
    # ``cluster_ids`` was complete, read from this group's own rows: the largest value of
    # the design's ``order`` column among them, or without one its last row's position.
    arrivals: NDArray[np.float64] | None = None


@dataclass(frozen=True)
class MeanDesign:
    """The input of ``cluster_ci``, ``icc``, ``design_effect`` and everything built on them.

    Attributes
    ----------
    outcome : str or None
        The outcome's name (None for plain arrays).
    by : tuple of str
        The cluster's name(s).
    over : str, tuple of str or None
        The grouping: an ``over=`` column, or a Dataset's extra dims.
    groups : tuple of MeanGroup
        One per group (one without grouping), in the groups' order.
    strata_labels : tuple
        The label of each stratum code.
    cluster_names : callable
        Cluster codes to cluster labels.
    cluster_groupings : tuple of ndarray, or None
        With several ``by`` columns, each cluster's code in every column (indexed by the
        cluster code): crossed clustering's memberships, without reading labels back. None
        when the adapter does not give them (the labels are read then).
    responses : tuple of ResponseRows, or None
        Row-level inputs of a response model, one per group, when covariates were asked for.
    weights : str or None
        The weight column, when the groups carry weighted sums.
    """

    outcome: str | None
    by: tuple[str, ...]
    over: str | tuple[str, ...] | None
    groups: tuple[MeanGroup, ...]
    strata_labels: tuple[Any, ...] = ()
    cluster_names: Callable[[NDArray[np.intp]], list[Any]] = field(
        default=lambda codes: np.asarray(codes).tolist(), repr=False
    )
    responses: tuple[ResponseRows, ...] | None = field(default=None, repr=False)
    weights: str | None = None
    cluster_groupings: tuple[NDArray[np.intp], ...] | None = field(default=None, repr=False)
    order: Hashable | None = None  # the column the groups' ``arrivals`` were read from

    @property
    def is_binary(self) -> bool:
        """Whether every usable outcome of every group is 0 or 1."""
        return all(g.is_binary for g in self.groups)

    @property
    def group_labels(self) -> tuple[Any, ...]:
        return tuple(g.label for g in self.groups)


@dataclass(frozen=True)
class PairedItems:
    """Per-item values of both sides of a paired comparison, on the matched items."""

    a: NDArray[np.float64]
    b: NDArray[np.float64]
    codes: NDArray[np.intp]  # cluster index per item, 0..G-1
    runs_a: NDArray[np.float64]
    runs_b: NDArray[np.float64]
    within_a: NDArray[np.float64]  # unbiased within-item variance of the runs (NaN: one run)
    within_b: NDArray[np.float64]
    single_run_binary: bool
    n_dropped_a: int  # items only on side A (how="inner")
    n_dropped_b: int
    n_missing_items: int  # items dropped because an outcome was missing on a side
    max_runs: int
    # For missing="ipw": items per cluster (usable or not) in the order of ``codes``, and the
    # item counts of clusters where no item is usable.
    cluster_items: NDArray[np.float64] | None = None
    lost_cluster_items: NDArray[np.float64] | None = None
    strata: NDArray[np.intp] | None = None  # stratum code of each cluster (``codes`` order)
    strata_labels: tuple[Any, ...] = ()
    # With several ``by`` columns: each cluster's code (``codes`` order) in every column, for
    # crossed clustering.
    members: tuple[NDArray[np.intp], ...] | None = None
    weights: NDArray[np.float64] | None = None  # each item's weight (``weights=``)
    n_zero_weight_items: int = 0  # items of weight zero, left out of a weighted difference
    # The label of each cluster code (None with strata, which renumber the clusters).
    cluster_labels: tuple[Any, ...] | None = None
    # When asked for: when each cluster code was complete, on either side (as
    # :attr:`MeanGroup.arrivals`; without an order column, by the first side's positions).
    arrivals: NDArray[np.float64] | None = None


@dataclass(frozen=True)
class PairedDesign:
    """The input of ``paired_delta``: matched items, one set per group (a Dataset's extra
    dims; a single group for frames)."""

    outcome: str | None
    by: tuple[str, ...]
    over: str | tuple[str, ...] | None
    groups: tuple[tuple[Any, PairedItems], ...]
    default_labels: tuple[str, str] = ("A", "B")
    weights: str | None = None  # the weight column, when the items carry weights
    order: Hashable | None = None  # the column the items' ``arrivals`` were read from


@dataclass(frozen=True)
class ComparisonDesign:
    """The input of ``compare``: per-cluster sums of every model's per-item values, on the
    items every model has (a model's value on an item is the mean of its runs)."""

    totals: NDArray[np.float64]  # (clusters, models): each cluster's sum of each model's values
    squares: NDArray[np.float64]  # (clusters, models): the same for the squared values
    counts: NDArray[np.float64]  # (clusters,): items per cluster
    models: tuple[Any, ...]
    is_binary: bool  # every per-item value is 0 or 1
    n_items: int
    n_dropped_items: int  # items some model lacks (how="inner")
    n_missing_items: int  # items dropped because a model's outcome was missing
    outcome: str = ""
    by: tuple[str, ...] = ()
    # For missing="ipw": items per cluster (usable or not) in the order of ``totals``, and the
    # item counts of clusters where no item is usable.
    cluster_items: NDArray[np.float64] | None = None
    lost_cluster_items: NDArray[np.float64] | None = None
    strata: NDArray[np.intp] | None = None  # stratum code of each cluster (``totals`` order)
    strata_labels: tuple[Any, ...] = ()
    # The adapter's code of each cluster (``totals`` order), and, with several ``by``
    # columns, each cluster's code in every column, for crossed clustering.
    cluster_ids: NDArray[np.intp] | None = None
    members: tuple[NDArray[np.intp], ...] | None = None
    # With weights: each model's weighted sums by cluster (``totals`` order).
    weighted: tuple[WeightedSums, ...] | None = None
    # (models, models): over the items, the sums of the products of two models' per-item
    # values; each pair's sum of squared differences, for its Moulton ICC.
    products: NDArray[np.float64] | None = None
    n_zero_weight_items: int = 0  # items of weight zero, left out of weighted scores
    weights: str | None = None  # the weight column, when ``weighted`` is given


def over_of(extra_dims: tuple[str, ...]) -> str | tuple[str, ...] | None:
    """What a result's ``over`` says for these extra dims: None, one name, or the names."""
    if not extra_dims:
        return None
    return extra_dims if len(extra_dims) > 1 else extra_dims[0]


def moment_groups(
    moments: NDArray[np.float64],
    extra_dims: tuple[str, ...],
    extra_labels: tuple[tuple[Any, ...], ...],
) -> Iterator[tuple[Any, NDArray[np.float64]]]:
    """``(group label, (case, k) moments)`` for each combination of the extra dims (one
    group labelled None when there are none)."""
    if not extra_dims:
        yield None, moments
        return
    shape = moments.shape[: len(extra_dims)]
    for index in itertools.product(*(range(n) for n in shape)):
        labels = tuple(extra_labels[d][i] for d, i in enumerate(index))
        yield (labels if len(labels) > 1 else labels[0]), moments[index]


@dataclass(frozen=True)
class CaseDesign:
    """The input of the rerun statistics: per-case moments of one outcome for every
    combination of the extra dims (a long frame's ``over=`` column becomes one)."""

    moments: NDArray[np.float64]  # (*extra, case, len(MOMENTS)): see core.reruns.MOMENTS
    extra_dims: tuple[str, ...]
    extra_labels: tuple[tuple[Any, ...], ...]  # the labels along each extra dim
    # the case labels, read when asked for: ten million of them are 80 MB that most calls
    # never look at
    case_labels_of: Callable[[], NDArray[Any]]
    codes: NDArray[np.intp] | None  # cluster of each case, sorted label order (None: itself)
    outcome: str
    by: tuple[str, ...]

    def groups(self) -> Iterator[tuple[Any, NDArray[np.float64]]]:
        """``(group label, (case, moment) moments)`` for each combination of the extra dims."""
        return moment_groups(self.moments, self.extra_dims, self.extra_labels)

    @property
    def over(self) -> str | tuple[str, ...] | None:
        return over_of(self.extra_dims)

    @property
    def is_binary(self) -> bool:
        return not bool(self.moments[..., 3].any())


@dataclass(frozen=True)
class RowsDesign:
    """The input of ``check_clustering``: the usable outcomes, row by row, with each
    candidate grouping's cluster code of every row."""

    outcome: str
    values: NDArray[np.float64]
    groupings: tuple[tuple[str, NDArray[np.intp]], ...]


@dataclass(frozen=True)
class JudgedDesign:
    """The input of ``judged_ci``: a run whose every row a judge scored and some rows a
    human labelled, reduced to per-cluster sums (:class:`~clusterstats.core.judged.JudgedSums`).

    Attributes
    ----------
    outcome, judge : str
        The human label column (missing where unlabelled) and the judge's score column.
    by : tuple of str
        The cluster column(s).
    sums : JudgedSums
        Per-cluster rows, judge totals and the labelled rows' sums.
    strata : str or None
        The labelling strata column.
    strata_labels : tuple
        The label of each stratum code.
    inclusion : str or None
        The column of stated inclusion probabilities.
    judge_range, human_range : tuple of float
        The smallest and largest judge score (every row) and human label (labelled rows).
    """

    outcome: str
    judge: str
    by: tuple[str, ...]
    sums: Any
    strata: str | None = None
    strata_labels: tuple[Any, ...] = ()
    inclusion: str | None = None
    judge_range: tuple[float, float] = (math.nan, math.nan)
    human_range: tuple[float, float] = (math.nan, math.nan)


@dataclass(frozen=True)
class JudgedComparisonDesign:
    """The input of ``judged_compare``: many models judged on the same items, some of their
    answers labelled by humans, as one :class:`JudgedDesign` per model and per pair.

    Attributes
    ----------
    models : tuple
        The model labels, in sorted order.
    scores : tuple of JudgedDesign
        Each model's judged run.
    rows : tuple of JudgedDesign
        Each model's judged run with every row its own cluster (the interval that treats
        rows as independent, shown beside the clustered one).
    pairs : dict
        ``(i, j)`` with ``i < j``: the design of ``models[i] - models[j]`` item by item (the
        judges' difference on every item, the labels' where both answers are labelled), and
        how many items carry a label for one of the two only.
    n_items : int
        Items every model was judged on.
    n_dropped_items : int
        Items some model lacks, left out (``how="inner"``).
    """

    models: tuple[Any, ...]
    scores: tuple[JudgedDesign, ...]
    rows: tuple[JudgedDesign, ...]
    pairs: dict[tuple[int, int], tuple[JudgedDesign, int]]
    n_items: int
    n_dropped_items: int = 0
