"""Anytime-valid confidence sequences over completed clusters (``confidence_sequence``).

A fixed-sample interval is valid when it is looked at once. Looked at after every batch, and
the eval stopped as soon as it excludes a threshold, it passes a system at the threshold far
more often than its level says. A confidence sequence is valid at every look at once: the
chance that any of its intervals ever misses the truth is at most ``1 - confidence``, so a
run can be watched as it grows and stopped as soon as it decides. The numbers live in
:mod:`clusterstats.core.sequential`.
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar, NamedTuple

import numpy as np
import pandas as pd

from clusterstats import _display as fmt
from clusterstats import _options as opt
from clusterstats import adapters
from clusterstats._design import MeanDesign, MeanGroup, PairedDesign, PairedItems
from clusterstats._plotting import sequence_bounds
from clusterstats._result import GroupedResults, Lines, Result, Table, TableResult, label_of
from clusterstats.core._lazy import special
from clusterstats.core.sequential import (
    SEQUENCE_METHODS,
    betting_sequence,
    decision_looks,
)
from clusterstats.errors import InvalidDataError, InvalidOptionError
from clusterstats.stats import _policies as policy
from clusterstats.stats.mean import grouped

__all__ = [
    "ConfidenceSequence",
    "SequenceLook",
    "build_confidence_sequence",
    "build_paired_sequence",
    "confidence_sequence",
    "paired_sequence_of",
    "sequence_of",
]

#: Looks shown in the printed table (the last one always among them).
_SHOWN_LOOKS = 10


class SequenceLook(NamedTuple):
    """The sequence at one look: after ``n_clusters`` completed clusters."""

    n_clusters: int
    n_rows: int
    estimate: float
    low: float
    high: float

    def __repr__(self) -> str:
        # the library's number format, not float noise (0.5650000000000001); the fields keep
        # every digit
        return (
            f"SequenceLook(n_clusters={self.n_clusters}, n_rows={self.n_rows}, "
            f"estimate={fmt.number(float(self.estimate))}, low={fmt.number(float(self.low))}, "
            f"high={fmt.number(float(self.high))})"
        )


@dataclass(frozen=True, kw_only=True, repr=False)
class ConfidenceSequence(TableResult):
    """A confidence sequence over completed clusters (returned by ``confidence_sequence``).

    ``to_frame()`` has one row per completed cluster, in order of arrival, with the columns
    of ``COLUMNS``: ``n_clusters``, ``n_rows``, ``estimate``, ``low``, ``high`` (and
    ``cluster``, the cluster that completed). Every row's interval holds the truth, all rows
    at once, with probability at least ``confidence``: the last row is the current answer,
    and any row may be acted on. ``current`` is that last row. ``plot()`` draws the running
    bounds.

    Attributes
    ----------
    clusters : tuple
        The clusters in their order of arrival.
    n_clusters, n_rows : tuple of int
        Completed clusters and their rows after each arrival.
    estimate : tuple of float
        The point estimate after each arrival (the ``estimand``'s).
    low, high : tuple of float
        The confidence sequence after each arrival (intersected with every earlier one, so
        the bounds never move back).
    confidence : float
        ``1 - alpha``: the chance that every interval holds the truth.
    estimand : {"pooled", "cluster_mean"}
        The mean of all rows or the mean of the cluster means.
    bounds : (float, float)
        The range the outcome is known to lie in, which the bets rely on.
    max_cluster_size : float or None
        The bound on the cluster sizes (``"pooled"``).
    order : str
        How the clusters arrived: the ``order`` column, or a seeded random order.
    n_held_back : int
        Clusters not yet complete (fewer rows than ``cluster_size``), left out.
    empty_from : int or None
        The completed clusters at the first look at which no candidate survived, if any. A
        valid sequence goes empty with probability at most ``1 - confidence``, so an empty
        sequence is evidence against its assumptions (the clusters drifted, the run broke
        part-way, or their order of arrival depends on their outcomes): ``low`` and ``high``
        are NaN from that look on, ``last_interval`` is the last look that had an interval,
        and no decision should be read from it.
    method : {"betting_mixture", "betting_predictable"}
        The construction: betting with hedged capital (Waudby-Smith & Ramdas 2024), its
        bets a mixture of schedules tuned to several run lengths, or the predictable
        plug-in bets.
    target : {"population", "benchmark"}
        What the sequence estimates: the population the clusters are drawn from, or this
        benchmark's own full-run score (its clusters drawn without replacement).
    benchmark_clusters : int or None
        With ``target="benchmark"``: the clusters of the whole benchmark.
    outcome : str or None
        The outcome column.
    by : tuple of str
        The cluster column(s).
    notes : tuple of str
        Everything a reader should know.
    compared : (str, str) or None
        For a paired difference (``other=``): the two sides, ``A - B``.
    """

    clusters: tuple[Any, ...]
    n_clusters: tuple[int, ...]
    n_rows: tuple[int, ...]
    estimate: tuple[float, ...]
    low: tuple[float, ...]
    high: tuple[float, ...]
    confidence: float
    estimand: str
    bounds: tuple[float, float]
    max_cluster_size: float | None
    order: str
    n_held_back: int = 0
    empty_from: int | None = None
    method: str = "betting_mixture"
    target: str = "population"
    benchmark_clusters: int | None = None
    outcome: str | None = None
    by: tuple[str, ...] = ()
    notes: tuple[str, ...] = ()
    compared: tuple[str, str] | None = None

    COLUMNS: ClassVar[tuple[str, ...]] = (
        "n_clusters",
        "n_rows",
        "cluster",
        "estimate",
        "low",
        "high",
    )
    _metric_labels: ClassVar[tuple[str, ...]] = ("n_clusters",)
    #: The columns of one sequence's row in a table over groups (``over=``): its current look.
    GROUP_COLUMNS: ClassVar[tuple[str, ...]] = (
        "outcome",
        "by",
        "n_clusters",
        "n_rows",
        "estimate",
        "low",
        "high",
        "empty_from",
        "estimand",
        "confidence",
        "method",
        "target",
        "order",
        "notes",
    )

    def _look(self, i: int) -> SequenceLook:
        return SequenceLook(
            self.n_clusters[i], self.n_rows[i], self.estimate[i], self.low[i], self.high[i]
        )

    @property
    def current(self) -> SequenceLook:
        """The sequence after the last completed cluster: the current answer (NaN bounds
        when the sequence has gone empty: see ``empty_from``)."""
        return self._look(-1)

    @property
    def last_interval(self) -> SequenceLook | None:
        """The last look that had an interval (``current`` unless the sequence went empty;
        None when it was empty from the first look)."""
        if self.empty_from is None:
            return self.current
        last = self.n_clusters.index(self.empty_from) - 1
        return self._look(last) if last >= 0 else None

    def decided_at(self, threshold: float) -> SequenceLook | None:
        """The first look whose interval lies wholly at or above ``threshold`` (a gate at
        ``threshold`` passes there) or wholly below it (it fails there); None when no look
        before the sequence went empty decides.

        Parameters
        ----------
        threshold : float
            The boundary of the question: a gate's ``at_least``, or ``-margin`` for a paired
            difference.

        Returns
        -------
        SequenceLook or None

        Examples
        --------
        >>> import clusterstats
        >>> bbh = clusterstats.datasets.load("bbh")
        >>> cot = bbh[bbh["condition"] == "cot"]
        >>> seq = clusterstats.confidence_sequence(cot, "correct", by="task")
        >>> seq.decided_at(0.5).n_clusters, seq.decided_at(0.7) is None
        (21, True)
        """
        bound = opt.check_plan_number("threshold", threshold)
        low, high = np.asarray(self.low), np.asarray(self.high)
        decided = np.flatnonzero((low >= bound) | (high < bound))
        return self._look(int(decided[0])) if decided.size else None

    def _group_row(self) -> dict[str, Any]:
        now = self.current
        return {
            "outcome": self.outcome,
            "by": ", ".join(self.by),
            **now._asdict(),
            "empty_from": self.empty_from,
            "estimand": self.estimand,
            "confidence": self.confidence,
            "method": self.method,
            "target": self.target,
            "order": self.order,
            "notes": "; ".join(self.notes),
        }

    @classmethod
    def _table_columns(cls) -> tuple[tuple[str, str], ...]:
        return tuple((c, c) for c in cls.GROUP_COLUMNS if c not in ("outcome", "by", "notes"))

    def to_frame(self) -> pd.DataFrame:
        """One row per completed cluster, in order of arrival (columns ``COLUMNS``)."""
        return pd.DataFrame(
            {
                "n_clusters": self.n_clusters,
                "n_rows": self.n_rows,
                "cluster": list(self.clusters),
                "estimate": self.estimate,
                "low": self.low,
                "high": self.high,
            },
            columns=list(self.COLUMNS),
        )

    def to_metrics(self, prefix: str = "") -> dict[str, float]:
        """The current answer as a flat dict of floats, for an experiment tracker:
        ``n_clusters``, ``n_rows``, ``estimate``, ``low`` and ``high``, each keyed
        ``prefix + name``.

        {metrics_parameters}
        """
        return {f"{prefix}{k}": float(v) for k, v in self.current._asdict().items()}

    def plot(self, *, threshold: float | None = None, ax: Any = None) -> Any:
        """The running bounds against the completed clusters (needs matplotlib).

        Parameters
        ----------
        threshold : float, optional
            A value to draw as a line (a gate's threshold): the sequence decides once its
            interval leaves it.
        {plot_ax}

        {plot_returns}
        """
        if threshold is not None:
            threshold = opt.check_plan_number("threshold", threshold)
        what = self.outcome or "outcome"
        return sequence_bounds(
            list(self.n_clusters),
            list(self.estimate),
            list(self.low),
            list(self.high),
            threshold=threshold,
            title=f"{what}: confidence sequence over completed clusters",
            ylabel=f"{what}: {self.estimand} mean, {self.confidence:.0%} sequence",
            ax=ax,
        )

    def _heading(self) -> str:
        what = label_of(self.outcome, self.by)
        if self.compared is not None:
            what += f", {self.compared[0]} - {self.compared[1]}"
        target = "" if self.target == "population" else ", target=benchmark"
        return (
            f"ConfidenceSequence({what}; estimand={self.estimand}{target}, "
            f"{self.confidence:.0%}, valid at every look)"
        )

    def _blocks(self) -> list[Lines | Table]:
        now = self.current
        if self.empty_from is None:
            answer = f"{self.confidence:.0%} sequence {fmt.interval(now.low, now.high)}"
        else:
            last = self.last_interval
            answer = f"the {self.confidence:.0%} sequence went EMPTY after " + fmt.count(
                self.empty_from, "cluster"
            )
            if last is not None:
                answer += (
                    f" (its last interval, after {fmt.count(last.n_clusters, 'cluster')}: "
                    f"{fmt.interval(last.low, last.high)}); no decision can be read from it"
                )
        lines = (
            f"after {fmt.count(now.n_clusters, 'completed cluster')} "
            f"({fmt.count(now.n_rows, 'row')}): estimate {fmt.number(now.estimate)}  {answer}",
            f"arrival order: {self.order}; outcome bounds {fmt.interval(*self.bounds)}"
            + (
                f"; cluster sizes at most {fmt.size(self.max_cluster_size)}"
                if self.max_cluster_size is not None
                else ""
            ),
        )
        total = len(self.n_clusters)
        picks = np.unique(np.linspace(0, total - 1, min(total, _SHOWN_LOOKS)).round().astype(int))
        rows = tuple(
            (
                self.n_clusters[i],
                self.n_rows[i],
                self.estimate[i],
                "empty" if math.isnan(self.low[i]) else fmt.interval(self.low[i], self.high[i]),
            )
            for i in picks
        )
        title = f"looks ({len(picks)} of {total} shown)"
        return [
            Lines(lines),
            Table(("clusters", "rows", "estimate", f"{self.confidence:.0%} sequence"), rows, title),
        ]


def _arrival_order(n: int, arrivals: np.ndarray | None, options: opt.SequenceOptions) -> np.ndarray:
    """The positions of the clusters in order of arrival: by their arrival (ties by label),
    or a random order from ``rng``."""
    if arrivals is None:
        return options.rng.generator().permutation(n)
    return np.lexsort((np.arange(n), arrivals))


@policy.warns_once
def build_confidence_sequence(
    design: MeanDesign, options: opt.SequenceOptions
) -> ConfidenceSequence | GroupedResults[ConfidenceSequence]:
    """``confidence_sequence`` on a design, one sequence per group (in order of the groups'
    ``arrivals``, or at random without them)."""
    return grouped(design, [sequence_of(g, design, options) for g in design.groups])


@policy.warns_once
def build_paired_sequence(
    design: PairedDesign, options: opt.SequenceOptions, *, labels: tuple[str, str] = ("A", "B")
) -> ConfidenceSequence | GroupedResults[ConfidenceSequence]:
    """``confidence_sequence(..., other=...)`` on a paired design, one sequence per group."""
    return grouped(
        design,
        [paired_sequence_of(items, design, options, labels=labels) for _, items in design.groups],
    )


def sequence_of(
    group: MeanGroup, design: MeanDesign, options: opt.SequenceOptions
) -> ConfidenceSequence:
    """The sequence of one group of a design (the gate runs one per slice), its clusters in
    order of the group's ``arrivals`` (at random without them)."""
    applied = policy.apply_missing(group, design, options.missing)
    sums = applied.sums
    ids = group.cluster_ids[applied.kept]
    notes: list[str] = []
    if applied.n_missing:
        notes.append(
            policy.missing_note(applied.n_missing, applied.n_missing_clusters, options.missing)
        )
    return _sequence(
        totals=sums.totals + sums.shift * sums.counts,
        sizes=sums.counts,
        present=group.table.rows[applied.kept],
        labels=lambda picked: design.cluster_names(ids[picked]),
        arrivals=None if group.arrivals is None else group.arrivals[applied.kept],
        default_bounds=(0.0, 1.0) if group.is_binary else None,
        what=f"outcome {design.outcome!r} is not 0/1",
        options=options,
        order=design.order,
        outcome=design.outcome,
        by=design.by,
        notes=notes,
    )


def paired_sequence_of(
    items: PairedItems,
    design: PairedDesign,
    options: opt.SequenceOptions,
    *,
    labels: tuple[str, str] = ("A", "B"),
) -> ConfidenceSequence:
    """The sequence of a paired difference ``A - B``: each cluster's sum of the per-item
    differences (runs of an item averaged first), on the items both sides have, in order
    of the items' ``arrivals`` (at random without them)."""
    codes = items.codes
    n = int(codes.max()) + 1
    sizes = np.bincount(codes, minlength=n).astype(float)
    totals = np.bincount(codes, weights=items.a - items.b, minlength=n)
    names = items.cluster_labels if items.cluster_labels is not None else tuple(range(n))
    notes = []
    if items.n_dropped_a or items.n_dropped_b:
        notes.append(
            f"how='inner': {items.n_dropped_a} items only in {labels[0]} and "
            f"{items.n_dropped_b} only in {labels[1]} were left out"
        )
    if items.n_missing_items:
        notes.append(
            f"{fmt.count(items.n_missing_items, 'item')} with a missing outcome on a side "
            "left the comparison on both sides"
        )
    return _sequence(
        totals=totals,
        sizes=sizes,
        present=sizes,
        labels=lambda picked: [names[i] for i in np.asarray(picked)],
        arrivals=items.arrivals,
        default_bounds=(-1.0, 1.0) if items.single_run_binary else None,
        what="the two sides are not 0/1 with one run per item (a difference of 0/1 runs "
        "averaged lies in [-1, 1])",
        options=options,
        order=design.order,
        outcome=design.outcome,
        by=design.by,
        notes=notes,
        compared=labels,
    )


def _sequence(
    *,
    totals: np.ndarray,
    sizes: np.ndarray,
    present: np.ndarray,
    labels: Any,
    arrivals: np.ndarray | None,
    default_bounds: tuple[float, float] | None,
    what: str,
    options: opt.SequenceOptions,
    order: Hashable | None,
    outcome: str | None,
    by: tuple[str, ...],
    notes: list[str],
    compared: tuple[str, str] | None = None,
) -> ConfidenceSequence:
    """The sequence on per-cluster sums (``labels``: positions to cluster labels)."""
    kept = np.arange(sizes.shape[0])
    held_back = 0
    if options.cluster_size is not None:
        over = present > options.cluster_size
        if over.any():
            raise InvalidDataError(
                f"{int(over.sum())} clusters have more than cluster_size={options.cluster_size} "
                f"rows (e.g. {labels(kept[over][:3])}): a complete cluster has exactly that many"
            )
        complete = present == options.cluster_size
        held_back = int((~complete).sum())
        kept = kept[complete]
        if held_back:
            notes.append(
                f"{fmt.count(held_back, 'cluster')} with fewer than {options.cluster_size} rows "
                f"{'is' if held_back == 1 else 'are'} not complete yet and left out: a partial "
                "cluster never enters the sequence"
            )
    if kept.size == 0:
        raise InvalidDataError("no cluster is complete yet: the sequence has nothing to start from")
    totals, sizes = totals[kept], sizes[kept]
    bounds = options.bounds if options.bounds is not None else default_bounds
    if bounds is None:
        raise InvalidOptionError(
            f"{what}: give bounds=(low, high), the range every cluster's mean is known to lie "
            "in before the data are seen (the bets rely on it)"
        )
    means = totals / sizes
    outside = (means < bounds[0]) | (means > bounds[1])
    if outside.any():
        raise InvalidDataError(
            f"{int(outside.sum())} clusters have a mean outside bounds={bounds} (e.g. "
            f"{labels(kept[outside][:3])}): the sequence is valid only for outcomes within the "
            "bounds given"
        )
    largest = options.max_cluster_size
    if largest is not None and sizes.max() > largest:
        raise InvalidDataError(
            f"a cluster has {int(sizes.max())} rows, more than max_cluster_size={largest:g}"
        )
    position = _arrival_order(kept.size, None if arrivals is None else arrivals[kept], options)
    if arrivals is None:
        seed = options.rng.value
        how = f"shuffled (rng={seed!r})" if seed is not None else "shuffled (the default seed)"
    elif order is None:
        how = "in the order of their last rows in the data"
    else:
        how = f"by {order!r} (each cluster when its last row arrived)"
    if options.estimand == "pooled" and largest is None:
        notes.append(
            f"the pooled estimand's bets need a bound on the cluster sizes; the largest size "
            f"seen, {int(sizes.max()):,}, is used"
            + " (give max_cluster_size= to fix it in advance)"
        )
    population_size = population_rows = None
    if options.target == "benchmark":
        population_size, population_rows = _benchmark(options, kept.size + held_back, present)
        if population_size < kept.size:
            raise InvalidOptionError(
                f"benchmark_clusters={population_size} but {kept.size} clusters are complete: "
                "the benchmark has at least as many clusters as the run"
            )
        notes.append(
            f"target: this benchmark's full-run score over its {population_size:,} clusters; "
            "valid when the clusters run in a random order (e.g. a shuffled dataset)"
        )
    chosen = SEQUENCE_METHODS[options.method]
    trajectory = betting_sequence(
        totals[position],
        sizes[position],
        estimand=options.estimand,
        confidence=options.confidence,
        bounds=bounds,
        max_cluster_size=largest,
        breaks=options.breaks,
        schedules=chosen.schedules,
        truncation=chosen.truncation,
        population_size=population_size,
        population_rows=population_rows,
    )
    empty_from = None
    if trajectory.empty.any():
        empty_from = int(trajectory.n_clusters[int(np.argmax(trajectory.empty))])
        notes.append(
            f"the sequence went empty after {fmt.count(empty_from, 'completed cluster')}: no "
            "value is consistent with every cluster so far, which a valid sequence allows with "
            f"probability at most {1 - options.confidence:.2g}. The clusters are not behaving "
            "as independent draws from one population: the outcome drifted, the run broke "
            "part-way (e.g. an API that began to fail), or the order of arrival depends on the "
            "outcomes. Look at the run; no verdict is read from this sequence"
        )
    return ConfidenceSequence(
        clusters=tuple(labels(kept[position])),
        n_clusters=tuple(int(v) for v in trajectory.n_clusters),
        n_rows=tuple(round(float(v)) for v in trajectory.n_rows),
        estimate=tuple(float(v) for v in trajectory.estimate),
        low=tuple(float(v) for v in trajectory.low),
        high=tuple(float(v) for v in trajectory.high),
        confidence=options.confidence,
        estimand=options.estimand,
        bounds=(float(bounds[0]), float(bounds[1])),
        max_cluster_size=largest if options.estimand == "pooled" else None,
        order=how,
        n_held_back=held_back,
        empty_from=empty_from,
        method=options.method,
        target=options.target,
        benchmark_clusters=population_size,
        outcome=outcome,
        by=by,
        notes=tuple(notes),
        compared=compared,
    )


def _benchmark(
    options: opt.SequenceOptions, n_clusters: int, present: np.ndarray
) -> tuple[int, float | None]:
    """The size of the benchmark (its clusters, and its rows when known): as given, else the
    clusters in the data (a whole run looked at as if it streamed in); its rows are then the
    data's, or every cluster at ``cluster_size``."""
    clusters = options.benchmark_clusters
    rows = options.benchmark_rows
    if rows is None and options.cluster_size is not None:
        rows = float((clusters or n_clusters) * options.cluster_size)
    if clusters is None:
        clusters = n_clusters
        if rows is None:
            rows = float(np.sum(present))
    return clusters, rows


def confidence_sequence(
    data: Any,
    outcome: Hashable,
    by: opt.By | None = None,
    *,
    order: Hashable | None = None,
    shuffle: bool = False,
    over: Hashable | Sequence[Hashable] | None = None,
    other: Any = None,
    on: Hashable | Sequence[Hashable] | None = None,
    how: opt.How = "strict",
    labels: tuple[str, str] | None = None,
    estimand: opt.Estimand = "pooled",
    confidence: float = 0.95,
    bounds: tuple[float, float] | None = None,
    max_cluster_size: float | None = None,
    cluster_size: int | None = None,
    method: str = "betting_mixture",
    target: str = "population",
    benchmark_clusters: int | None = None,
    benchmark_rows: int | None = None,
    missing: opt.Missing = "drop",
    rng: int | np.random.Generator | None = None,
    breaks: int = 1000,
    case: Hashable = "case",
    rerun: Hashable | None = None,
) -> ConfidenceSequence | GroupedResults[ConfidenceSequence]:
    """A confidence sequence over completed clusters: an interval after every cluster that
    holds the truth at every look at once, so a run may be watched and stopped as soon as
    it decides.

    The cluster is the unit of the sequence: a cluster enters when it is complete, and its
    rows enter together. Each completed cluster's sum is a bet against every candidate mean
    (Waudby-Smith & Ramdas 2024, hedged capital with predictable plug-in bets); the
    candidates whose wealth stays below ``1/(1 - confidence)`` form the interval, valid over
    all looks by Ville's inequality (Howard, Ramdas, McAuliffe & Sekhon 2021). Clusters are
    taken as independent draws from a population of clusters; rows within a cluster may be
    dependent in any way.

    Parameters
    ----------
    data : pandas.DataFrame, polars or pyarrow table, dask DataFrame or xarray.Dataset
        One row per item (a (case, rerun) Dataset: one cell per run).
    outcome : column label
        The outcome: 0/1, or a score within ``bounds``.
    by : column label or list of labels, optional
        The cluster of each row (a Dataset defaults to its cases).
    order : column label, optional
        When each row arrived (a time, or a completion index); a cluster arrives with its
        last row (on either side, with ``other``). Without it, the clusters arrive in the
        order of their last rows in the data (in ``data`` with ``other``: the run that
        grows), as ``gate(sequential=True)`` reads them: a results file that grows by
        appending.
    shuffle : bool
        Ignore the data's order and let the clusters arrive in a random order drawn from
        ``rng``: a finished run looked at as if it had streamed in.
    over : column label or list of labels, optional
        One sequence per value of this column (or combination of columns), each over its
        own clusters: a :class:`~clusterstats.GroupedResults` whose table shows each
        sequence's current look. (A Dataset's extra dims are its groups already.)
    other : DataFrame, Dataset or column label, optional
        A second set of results on the same items: the sequence is then that of the paired
        difference ``data - other``, as in ``paired_delta`` (items matched by ``on``, never by
        position; the runs of an item averaged first; a 0/1 outcome with one run per item is
        bounded by (-1, 1)). A column label of ``data`` gives, as in ``paired_delta``,
        ``data[other] - data[outcome]``.
    on : column label(s), optional
        With ``other``: the item key of the frames (default: their index).
    how : {"strict", "inner"}
        With ``other``: items one side lacks raise ``AlignmentError`` or are left out.
    labels : (str, str), optional
        With ``other``: the names of the two sides in the output (by default the data's own,
        as in ``paired_delta``).
    estimand : {"pooled", "cluster_mean"}
        The mean of all rows (each cluster weighted by its size) or the mean of the cluster
        means.
    confidence : float
        The chance that every interval of the sequence holds the truth.
    bounds : (float, float), optional
        The range every cluster's mean is known to lie in, before the data (default: (0, 1)
        for a 0/1 outcome; required for a score). The sequence is valid only within it.
    max_cluster_size : float, optional
        For ``"pooled"``: a bound on the cluster sizes fixed in advance (default: the
        largest size in the data, which a note states).
    cluster_size : int, optional
        The rows of a complete cluster: clusters with fewer are not complete yet and are
        left out (counted in ``n_held_back``), as a run still in progress has them.
    method : {"betting_mixture", "betting_predictable"}
        How the sequence bets. Both are valid at every look. ``"betting_mixture"`` (the
        default) averages the wealth of five bet schedules tuned to 50, 100, 200, 400 and
        800 clusters (truncated at ``c = 0.9``); it decides sooner, most of all where cluster
        sizes are uneven. ``"betting_predictable"`` is Waudby-Smith & Ramdas's predictable
        plug-in bets, equal to their ``confseq`` implementation.
    target : {"population", "benchmark"}
        What is estimated. ``"population"``: the population the clusters are drawn from
        (documents like these), clusters taken as independent draws. ``"benchmark"``: this
        benchmark's own full-run score, its known list of clusters arriving in a uniformly
        random order without replacement (Waudby-Smith & Ramdas 2020); the sequence shrinks
        to the exact score as the list runs out, so an eval stopped early saves compute. It is
        valid only when the clusters run in a random order (shuffle the dataset).
    benchmark_clusters : int, optional
        With ``target="benchmark"``: the clusters of the whole benchmark (default: the
        clusters in the data, a whole run looked at as if it streamed in).
    benchmark_rows : int, optional
        With ``target="benchmark"`` and the pooled estimand: the rows of the whole benchmark
        (default: the data's, or ``benchmark_clusters * cluster_size``), so that the sequence
        also keeps to the scores the benchmark can still reach.
    missing : {"drop", "fail", "pass", "raise"}
        Rows with a missing outcome, as in ``cluster_ci``.
    rng : int, numpy.random.Generator or None
        Seed of the random order (None: a fixed default seed).
    breaks : int
        The candidate means are a grid of ``breaks + 1`` points over ``bounds``; each bound
        is rounded outwards to it.
    case : dim name
        For a Dataset: its case dim.
    rerun : column label or dim name, optional
        For a Dataset: its rerun dim (default ``"rerun"``). With ``other`` on frames, as in
        ``paired_delta``: the run id of frames whose items have several rows, averaged per
        item.

    Returns
    -------
    ConfidenceSequence

    Raises
    ------
    InvalidOptionError
        An invalid option, or a score without ``bounds``.
    InvalidDataError
        A cluster mean outside ``bounds``, a cluster larger than ``cluster_size`` or
        ``max_cluster_size``, or an ``order`` value missing.

    References
    ----------
    Howard, S. R., Ramdas, A., McAuliffe, J., & Sekhon, J. (2021). Time-uniform,
    nonparametric, nonasymptotic confidence sequences. *Annals of Statistics*, 49(2).

    Waudby-Smith, I., & Ramdas, A. (2024). Estimating means of bounded random variables by
    betting. *Journal of the Royal Statistical Society, Series B*, 86(1), 1-27.

    Waudby-Smith, I., & Ramdas, A. (2020). Confidence sequences for sampling without
    replacement. *Advances in Neural Information Processing Systems*, 33.

    Examples
    --------
    >>> import clusterstats
    >>> bbh = clusterstats.datasets.load("bbh")
    >>> cot = bbh[bbh["condition"] == "cot"]
    >>> seq = clusterstats.confidence_sequence(cot, "correct", by="task")
    >>> now = seq.current
    >>> now.n_clusters, bool(now.low < now.estimate < now.high)
    (27, True)
    """
    if opt.check_flag("shuffle", shuffle) and order is not None:
        raise InvalidOptionError(
            "order= names when the clusters arrived and shuffle=True draws a random order: "
            "give one of them"
        )
    labels = opt.check_side_labels(labels)
    options = opt.sequence_options(
        method=method,
        target=target,
        benchmark_clusters=benchmark_clusters,
        benchmark_rows=benchmark_rows,
        estimand=estimand,
        confidence=confidence,
        bounds=bounds,
        max_cluster_size=max_cluster_size,
        cluster_size=cluster_size,
        missing=missing,
        rng=rng,
        breaks=breaks,
    )
    paired = other is not None
    columns = adapters.columns_of(
        data, outcome, by, over=over, order=order, on=on, rerun=rerun if paired else None,
        layout=(case, "rerun" if rerun is None else rerun),
    )  # fmt: skip
    if paired:
        opt.check_choice("how", how, opt.ALIGNMENTS)
        design = adapters.paired_design(
            data, other, columns, how=how, missing=options.missing, labels=labels,
            arrivals=not shuffle,
        )  # fmt: skip
        return build_paired_sequence(design, options, labels=labels or design.default_labels)
    if on is not None or labels is not None or how != "strict":
        raise InvalidOptionError("on=, how= and labels= go with other= (a paired difference)")
    return build_confidence_sequence(
        adapters.mean_design(data, columns, arrivals=not shuffle), options
    )


# -- how many clusters a watching decision needs ----------------------------------------------


@dataclass(frozen=True, kw_only=True, repr=False)
class SequencePlan(Result):
    """How many clusters a watching gate needs to decide, beside a fixed gate (returned by
    ``sequence_plan``; the watching gate prints it when it is inconclusive).

    The fields are the columns of ``to_frame()``, in this order.

    Attributes
    ----------
    outcome : str or None
        The outcome column.
    by : tuple of str
        The cluster column(s).
    estimand, target, method : str
        The sequence planned, as in ``confidence_sequence``.
    boundary : float
        The gate's threshold (``at_least``, or ``-margin`` for a paired difference).
    estimate : float
        The pilot's estimate, taken as the truth of the plan.
    n_clusters : int
        The pilot's clusters.
    horizon : int
        The clusters the plan looks through: the benchmark's (``target="benchmark"``), the
        ``budget``, or by default enough for a fixed gate several times over.
    watching_clusters : float
        The median over simulated runs of the completed clusters at which the sequence
        decides (``inf`` when fewer than half of the runs decide within ``horizon``).
    watching_clusters_80 : float
        The clusters by which 80% of the runs have decided (``inf`` likewise).
    decided_share : float
        The share of runs that decide within ``horizon``.
    fixed_clusters : float
        The clusters at which a fixed interval at the same confidence is as narrow as the
        distance from the estimate to the boundary (half its runs decide there).
    fixed_clusters_80 : float
        The clusters at which a fixed gate, run once, decides with 80% power.
    price : float
        ``watching_clusters / fixed_clusters``: what watching costs.
    cluster_mean_clusters : float
        For the pooled estimand with uneven cluster sizes: ``watching_clusters`` of the
        sequence of the mean of cluster means, which uneven sizes slow far less (NaN
        otherwise).
    recommendation : str
        The plain answer: watch, or gate once, or watch the mean of cluster means.
    confidence : float
        The gate's confidence.
    notes : tuple of str
        How the plan was made.
    """

    outcome: str | None = None
    by: tuple[str, ...] = ()
    estimand: str
    target: str
    method: str
    boundary: float
    estimate: float
    n_clusters: int
    horizon: int
    watching_clusters: float
    watching_clusters_80: float
    decided_share: float
    fixed_clusters: float
    fixed_clusters_80: float
    price: float
    cluster_mean_clusters: float = math.nan
    recommendation: str
    confidence: float
    notes: tuple[str, ...] = ()

    _html: ClassVar[tuple[tuple[str, str], ...]] = (
        ("boundary", "boundary"),
        ("estimate", "estimate"),
        ("watching_clusters", "watching: clusters"),
        ("fixed_clusters", "fixed: clusters"),
        ("fixed_clusters_80", "fixed, 80% power"),
    )

    def _lines(self) -> list[str]:
        def clusters(value: float) -> str:
            return "never" if math.isinf(value) else "–" if math.isnan(value) else f"{value:,.0f}"

        if math.isinf(self.watching_clusters):
            watching = (
                f"  watching: most runs do not decide within {self.horizon:,} clusters "
                f"({self.decided_share:.0%} do)"
            )
        else:
            watching = (
                f"  watching decides after {clusters(self.watching_clusters)} clusters (median; "
                f"80% of runs by {clusters(self.watching_clusters_80)}; "
                f"{self.decided_share:.0%} within {self.horizon:,})"
            )
        lines = [
            f"SequencePlan({label_of(self.outcome, self.by)}; estimand={self.estimand}, "
            f"target={self.target}, boundary {self.boundary:g}, estimate "
            f"{fmt.number(self.estimate)})",
            watching,
            f"  a fixed gate run once: {clusters(self.fixed_clusters)} clusters "
            f"({clusters(self.fixed_clusters_80)} for 80% power); price of watching "
            + ("–" if not math.isfinite(self.price) else f"×{self.price:.1f}"),
        ]
        if not math.isnan(self.cluster_mean_clusters):
            lines.append(
                "  the mean of cluster means, watched: "
                f"{clusters(self.cluster_mean_clusters)} clusters"
            )
        lines.append(f"  {self.recommendation}")
        return lines


def _fixed_clusters(influence: np.ndarray, distance: float, confidence: float) -> tuple[float, ...]:
    """Clusters at which a fixed t interval's half-width is ``distance`` (half of its runs
    decide), and at which it decides with 80% power, from the pilot's influence values."""
    if distance == 0:
        return math.inf, math.inf
    sd = float(np.std(influence, ddof=1)) if influence.size > 1 else math.nan
    if not sd > 0:
        return 2.0, 2.0
    quantile = 0.5 + confidence / 2

    def needed(power: float) -> float:
        n = 2.0
        while True:
            t = float(special.stdtrit(n - 1, quantile)) + (
                float(special.stdtrit(n - 1, power)) if power > 0.5 else 0.0
            )
            if t * sd / math.sqrt(n) <= distance or n >= 1e7:
                return n
            n = max(n + 1, math.floor(n * 1.02))

    return needed(0.5), needed(0.8)


def plan_of_sums(
    totals: np.ndarray,
    sizes: np.ndarray,
    *,
    bounds: tuple[float, float],
    boundary: float,
    options: opt.SequenceOptions,
    budget: float | None = None,
    runs: int = 200,
    outcome: str | None = None,
    by: tuple[str, ...] = (),
) -> SequencePlan:
    """The plan from a pilot's per-cluster sums (the gate calls it for an inconclusive
    watching gate)."""
    lower, upper = bounds
    span = upper - lower
    scaled = (totals - lower * sizes) / span
    pooled = options.estimand == "pooled"
    estimate = float(totals.sum() / sizes.sum()) if pooled else float(np.mean(totals / sizes))
    distance = abs(estimate - boundary)
    influence = (totals - estimate * sizes) / sizes.mean() if pooled else totals / sizes
    fixed, fixed_80 = _fixed_clusters(influence, distance, options.confidence)
    benchmark = options.target == "benchmark"
    if benchmark:
        horizon = int(options.benchmark_clusters or sizes.shape[0])
    elif budget is not None:
        horizon = math.ceil(budget)
    else:
        horizon = int(min(max(4 * fixed_80, 200), 5000)) if math.isfinite(fixed_80) else 5000
    chosen = SEQUENCE_METHODS[options.method]
    bound = float(options.max_cluster_size or sizes.max())
    rng = np.random.default_rng(options.rng.value if options.rng.value is not None else 43)

    def median_looks(estimand: str) -> tuple[float, float, float]:
        if estimand == "pooled":
            x, u = scaled / bound, sizes / bound
        else:
            x, u = scaled / sizes, np.ones_like(sizes)
        looks = decision_looks(
            x, u, boundary=(boundary - lower) / span, runs=runs, horizon=horizon, rng=rng,
            confidence=options.confidence, truncation=chosen.truncation,
            schedules=chosen.schedules, population_size=horizon if benchmark else None,
        )  # fmt: skip
        return (
            float(np.quantile(looks, 0.5, method="higher")),
            float(np.quantile(looks, 0.8, method="higher")),
            float(np.isfinite(looks).mean()),
        )

    watching, watching_80, share = (math.inf, math.inf, 0.0)
    if distance > 0:
        watching, watching_80, share = median_looks(options.estimand)
    alternative = math.nan
    if pooled and distance > 0 and not np.all(sizes == sizes[0]):
        mean_of_means = float(np.mean(totals / sizes))
        if (mean_of_means - boundary) * (estimate - boundary) > 0:
            alternative, _, _ = median_looks("cluster_mean")
    price = watching / fixed if math.isfinite(watching) and fixed > 0 else math.inf
    where = f"the {horizon:,} clusters of the benchmark" if benchmark else f"{horizon:,} clusters"
    if distance == 0:
        advice = "the estimate is on the boundary: no number of clusters decides it"
    elif math.isfinite(watching) and price <= 2:
        advice = (
            f"watch: a decision is likely after about {watching:,.0f} clusters; a fixed gate "
            f"needs {fixed_80:,.0f} for 80% power, run once at the end"
        )
    elif math.isfinite(watching):
        advice = (
            f"watching decides late, after about {watching:,.0f} clusters ({price:.1f} times "
            f"a fixed gate's {fixed:,.0f}): run the fixed gate once, after about "
            f"{fixed_80:,.0f} clusters (80% power)"
        )
        if math.isfinite(alternative) and alternative < watching / 2:
            advice += (
                f", or watch the mean of cluster means (estimand='cluster_mean'), which "
                f"decides after about {alternative:,.0f}"
            )
    else:
        advice = (
            f"watching is unlikely to decide within {where}: run the fixed gate once, after "
            f"about {fixed_80:,.0f} clusters (80% power)"
        )
        if math.isfinite(alternative):
            advice += (
                f", or watch the mean of cluster means (estimand='cluster_mean'), which "
                f"decides after about {alternative:,.0f}"
            )
    notes = (
        f"simulated: {runs} runs of clusters drawn with replacement from the pilot's "
        f"{sizes.shape[0]:,}, its estimate taken as the truth",
    )
    return SequencePlan(
        outcome=outcome,
        by=by,
        estimand=options.estimand,
        target=options.target,
        method=options.method,
        boundary=float(boundary),
        estimate=estimate,
        n_clusters=int(sizes.shape[0]),
        horizon=horizon,
        watching_clusters=watching,
        watching_clusters_80=watching_80,
        decided_share=share,
        fixed_clusters=fixed,
        fixed_clusters_80=fixed_80,
        price=price,
        cluster_mean_clusters=alternative,
        recommendation=advice,
        confidence=options.confidence,
        notes=notes,
    )


def group_sums(
    group: MeanGroup, design: MeanDesign, options: opt.SequenceOptions
) -> tuple[np.ndarray, np.ndarray, tuple[float, float] | None]:
    """Each cluster's sum and size after the missing policy, and the bounds a 0/1 outcome
    has."""
    sums = policy.apply_missing(group, design, options.missing).sums
    default = (0.0, 1.0) if group.is_binary else None
    return sums.totals + sums.shift * sums.counts, sums.counts.astype(float), default


def paired_sums(items: PairedItems) -> tuple[np.ndarray, np.ndarray, tuple[float, float] | None]:
    """Each cluster's sum of per-item differences and its items, and the bounds a difference
    of 0/1 outcomes with one run per item has."""
    n = int(items.codes.max()) + 1
    sizes = np.bincount(items.codes, minlength=n).astype(float)
    totals = np.bincount(items.codes, weights=items.a - items.b, minlength=n)
    return totals, sizes, (-1.0, 1.0) if items.single_run_binary else None


def sequence_plan(
    data: Any,
    outcome: Hashable,
    by: opt.By | None = None,
    *,
    at_least: float | None = None,
    baseline: Any = None,
    margin: float | None = None,
    on: Hashable | Sequence[Hashable] | None = None,
    how: opt.How = "strict",
    estimand: opt.Estimand = "pooled",
    target: str = "population",
    method: str = "betting_mixture",
    benchmark_clusters: int | None = None,
    budget: float | None = None,
    confidence: float = 0.95,
    bounds: tuple[float, float] | None = None,
    max_cluster_size: float | None = None,
    missing: opt.Missing = "drop",
    runs: int = 200,
    rng: int | np.random.Generator | None = None,
    case: Hashable = "case",
    rerun: Hashable | None = None,
) -> SequencePlan:
    """How many clusters a watching gate needs to decide, beside a fixed gate: a plain
    answer before a run (from a pilot) or during one (from the clusters so far).

    The pilot's clusters are drawn with replacement into ``runs`` simulated runs, its
    estimate taken as the truth, and the confidence sequence of ``confidence_sequence``
    (the same method, estimand and target) is run on each: the median of the clusters at
    which it first decides the gate, against the clusters a fixed interval needs for the
    same distance. So the data's own cluster sizes and spread decide the answer, and where
    watching cannot decide within the benchmark (very uneven cluster sizes, a threshold
    close to the score) the plan says so and recommends the fixed gate, or the mean of
    cluster means, which uneven sizes slow far less.

    Parameters
    ----------
    data : pandas.DataFrame, polars or pyarrow table, dask DataFrame or xarray.Dataset
        The pilot, or the run so far.
    outcome : column label
        The outcome: 0/1, or a score within ``bounds``.
    by : column label or list of labels, optional
        The cluster column(s).
    at_least : float, optional
        The gate's threshold (a pass rate of at least it).
    baseline : DataFrame or Dataset, optional
        With ``margin``: a paired gate, not worse than this by more than ``margin``, on the
        items matched by ``on`` (as ``gate`` asks it).
    margin : float, optional
        With ``baseline``: how much worse is still acceptable.
    on, how : optional
        With ``baseline``: the item key, and what to do with items one side lacks, as in
        ``paired_delta``.
    estimand, target, method, benchmark_clusters, confidence, bounds, max_cluster_size, missing
        As in ``confidence_sequence``.
    budget : float, optional
        The clusters the run can afford: the plan looks that far (default: the benchmark's
        clusters for ``target="benchmark"``, else enough for a fixed gate several times
        over, at most 5,000).
    runs : int
        Simulated runs.
    rng : int, numpy.random.Generator or None
        Seed of the simulation (None: a fixed default seed).
    case, rerun
        For a Dataset: its case and rerun dims, as in ``confidence_sequence``.

    Returns
    -------
    SequencePlan

    Examples
    --------
    >>> import clusterstats
    >>> crux = clusterstats.datasets.load("cruxeval")
    >>> pilot = crux[crux["task"] == "input_prediction"].head(1000)  # 100 problems
    >>> plan = clusterstats.sequence_plan(pilot, "correct", by="problem_id", at_least=0.25,
    ...                                   runs=50)
    >>> bool(plan.fixed_clusters < plan.watching_clusters < 3 * plan.fixed_clusters_80)
    True
    """
    if (baseline is None) == (at_least is None):
        raise InvalidOptionError(
            "a plan asks the gate's question: at_least= (a pass rate of at least a threshold) "
            "or baseline= with margin= (not worse than the baseline)"
        )
    options = opt.sequence_options(
        method=method,
        target=target,
        benchmark_clusters=benchmark_clusters,
        estimand=estimand,
        confidence=confidence,
        bounds=bounds,
        max_cluster_size=max_cluster_size,
        missing=missing,
        rng=rng,
    )
    count = int(opt.check_plan_number("runs", runs, at_least=10, at_most=100_000, whole=True))
    planned = None if budget is None else opt.check_plan_number("budget", budget, at_least=1)
    paired = baseline is not None
    columns = adapters.columns_of(
        data, outcome, by, on=on, rerun=rerun if paired else None,
        layout=(case, "rerun" if rerun is None else rerun),
    )  # fmt: skip
    if baseline is None:
        if margin is not None:
            raise InvalidOptionError("margin= goes with baseline=; a threshold is at_least=")
        boundary = opt.check_plan_number("at_least", at_least)
        design = adapters.mean_design(data, columns)
        totals, sizes, default = group_sums(design.groups[0], design, options)
        what = f"outcome {design.outcome!r} is not 0/1"
        labels = (design.outcome, design.by)
    else:
        if margin is None:
            raise InvalidOptionError("baseline= needs margin=: how much worse is still acceptable")
        boundary = -opt.check_plan_number("margin", margin, at_least=0) + 0.0
        opt.check_choice("how", how, opt.ALIGNMENTS)
        matched = adapters.paired_design(data, baseline, columns, how=how, missing=options.missing)
        totals, sizes, default = paired_sums(matched.groups[0][1])
        what = "the two sides are not 0/1 with one run per item"
        labels = (matched.outcome, matched.by)
    chosen_bounds = options.bounds if options.bounds is not None else default
    if chosen_bounds is None:
        raise InvalidOptionError(f"{what}: give bounds=(low, high), as in confidence_sequence")
    if not chosen_bounds[0] <= boundary <= chosen_bounds[1]:
        raise InvalidOptionError(
            f"the boundary {boundary:g} lies outside bounds={chosen_bounds}: the gate would "
            "decide whatever the data"
        )
    return plan_of_sums(
        np.asarray(totals, dtype=float),
        np.asarray(sizes, dtype=float),
        bounds=chosen_bounds,
        boundary=boundary,
        options=options,
        budget=planned,
        runs=count,
        outcome=labels[0],
        by=labels[1],
    )
