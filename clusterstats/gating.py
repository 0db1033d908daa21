"""A release gate from an interval: pass, fail or inconclusive (``gate``).

A gate asks one of two questions of an eval run and answers it from a confidence interval,
never from the point estimate alone:

* **not worse**: is the new model no worse than the baseline by more than ``margin``, on the
  items both ran (``paired_delta``, clustered)? It passes when the interval of ``new −
  baseline`` lies above ``−margin``, fails when it lies below, and is inconclusive when it
  contains ``−margin``;
* **at least**: is the pass rate (or mean score) at least ``at_least`` (``cluster_ci``)? It
  passes when the interval lies at or above the threshold, fails when it lies below, and is
  inconclusive otherwise.

Several gates at once (one per slice: ``over=``, or the extra dims of a Dataset) control the
family-wise error of the passes by Holm's step-down procedure (Holm 1979) on the interval
tests. An inconclusive gate says how many clusters a plan (``pilot_plan``) puts at 80% power
to decide, were the truth what this run estimates.
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Sequence
from dataclasses import dataclass, replace
from typing import Any, ClassVar, Literal

import numpy as np
import pandas as pd

from clusterstats import _display as fmt
from clusterstats import _options as opt
from clusterstats import adapters
from clusterstats._design import MeanDesign, PairedDesign
from clusterstats._result import (
    GroupedResults,
    Lines,
    Result,
    Table,
    TableResult,
    label_of,
    merged_metrics,
    metric_key,
)
from clusterstats.core._lazy import special
from clusterstats.core.planning import ScaledDesign
from clusterstats.errors import ClusterStatsError, InvalidOptionError, OverBudgetWarning, warn
from clusterstats.stats.mean import build_cluster_ci
from clusterstats.stats.paired import build_paired_delta, matched_design
from clusterstats.stats.planning import build_pilot_plan
from clusterstats.stats.sequential import (
    group_sums,
    paired_sequence_of,
    paired_sums,
    plan_of_sums,
    sequence_of,
)

__all__ = ["EXIT_CODES", "Gate", "GateReport", "gate"]

Verdict = Literal["pass", "fail", "inconclusive", "void"]

#: The exit status of ``clusterstats gate`` for each overall verdict (an error exits 3).
EXIT_CODES: dict[str, int] = {"pass": 0, "fail": 1, "inconclusive": 2, "void": 4}

#: The overall verdict is the first of these that any gate has.
_PRECEDENCE = ("void", "fail", "inconclusive", "pass")


@dataclass(frozen=True, kw_only=True, repr=False)
class Gate(Result):
    """One gate's verdict (an entry of :class:`GateReport`).

    The fields are the columns of ``GateReport.to_frame()``, in this order.

    Attributes
    ----------
    group : str or None
        The slice (a value of ``over=``, or a Dataset's extra-dim labels), None for one gate.
    kind : {"not_worse", "at_least"}
        The question.
    outcome : str or None
        The outcome column.
    by : tuple of str
        The cluster column(s).
    verdict : {"pass", "fail", "inconclusive", "void"}
        ``"pass"``: the interval clears the boundary; ``"fail"``: it lies on the wrong side
        of it; ``"inconclusive"``: it contains it; ``"void"`` (``sequential=True`` only):
        the confidence sequence went empty, so the data contradict its assumptions (a run
        that broke part-way, drift) and no verdict is read from it.
    estimate : float
        ``new − baseline`` (not worse) or the pass rate (at least).
    low, high : float
        The interval the verdict was read from, at ``confidence``.
    boundary : float
        ``−margin`` (not worse) or ``at_least``.
    confidence : float
        The confidence of that interval: the family's, adjusted by Holm's procedure when
        there are several gates.
    method, estimand : str
        The interval method actually used, and the estimand.
    n_clusters : int
        Clusters in the run.
    clusters_needed : float
        For an inconclusive gate: the clusters like the run's (the same spread of sizes and
        heterogeneity) at which a plan from this run (``pilot_plan``, which projects the
        run's own interval) has 80% power to decide, were the truth the estimate (``inf``
        when the estimate is on the boundary); NaN for a decided gate or when no plan could
        be made (a note says why). For ``sequential=True``: the median clusters at which
        the sequence decides in runs simulated from this run's clusters
        (``sequence_plan``; ``inf`` when fewer than half decide within the budget or the
        benchmark).
    notes : tuple of str
        The statistic's notes, and the plan's.
    decided_at : float
        For ``sequential=True``: the completed clusters at the first look whose interval
        cleared the boundary or lay below it (NaN while undecided, and for a fixed gate).
    """

    group: str | None = None
    kind: str
    outcome: str | None = None
    by: tuple[str, ...] = ()
    verdict: str
    estimate: float
    low: float
    high: float
    boundary: float
    confidence: float
    method: str
    estimand: str
    n_clusters: int
    clusters_needed: float = math.nan
    notes: tuple[str, ...] = ()
    decided_at: float = math.nan

    _html: ClassVar[tuple[tuple[str, str], ...]] = (
        ("verdict", "verdict"),
        ("estimate", "estimate"),
        ("low", "low"),
        ("high", "high"),
        ("boundary", "boundary"),
        ("confidence", "confidence"),
        ("n_clusters", "clusters"),
        ("clusters_needed", "clusters needed"),
    )

    @property
    def question(self) -> str:
        """The question, in words."""
        if self.kind == "not_worse":
            return f"not worse than the baseline by more than {-self.boundary + 0.0:g}"
        return f"at least {self.boundary:g}"

    def _lines(self) -> list[str]:
        where = "" if self.group is None else f" [{self.group}]"
        interval = "empty" if math.isnan(self.low) else fmt.interval(self.low, self.high)
        lines = [
            f"Gate{where}: {self.verdict.upper()} — {label_of(self.outcome, self.by)}: "
            f"{self.question}",
            f"  estimate {fmt.number(self.estimate)}  {self.confidence:.4g} CI "
            f"{interval}  ({self.method}, {self.n_clusters:,} clusters)",
        ]
        if self.verdict == "inconclusive" and not math.isnan(self.clusters_needed):
            lines.append(
                f"  to decide: about {_clusters(self.clusters_needed)} clusters (80% power, "
                "if the truth is the estimate)"
            )
        return lines


@dataclass(frozen=True, repr=False)
class GateReport(TableResult):
    """The verdicts of one or more gates (returned by ``gate``).

    ``verdict`` is ``"void"`` if any gate is (a watching gate whose sequence went empty),
    else ``"fail"`` if any gate fails, else ``"inconclusive"`` if any is, else ``"pass"``;
    ``exit_code`` is what ``clusterstats gate`` exits with (0 pass, 1 fail, 2
    inconclusive, 4 void; an error exits 3). It prints as text, renders as an HTML table in Jupyter,
    ``to_markdown()`` gives a CI job summary and ``to_frame()`` one row per gate (the
    columns of :class:`Gate`).

    Attributes
    ----------
    gates : tuple of Gate
        One per slice, in order.
    verdict : {"pass", "fail", "inconclusive", "void"}
        The overall verdict.
    confidence : float
        The family's confidence: with several gates, the chance that any gate that should
        not pass passes is at most ``(1 − confidence) / 2``.
    adjust : {"holm", "bonferroni", "none"}
        How the gates' intervals were adjusted (``"none"`` for a single gate;
        ``"bonferroni"`` for the confidence sequences of ``sequential=True``).
    """

    gates: tuple[Gate, ...]
    verdict: str
    confidence: float
    adjust: str

    @property
    def exit_code(self) -> int:
        """0 pass, 1 fail, 2 inconclusive, 4 void."""
        return EXIT_CODES[self.verdict]

    @property
    def passed(self) -> bool:
        """Whether every gate passed."""
        return self.verdict == "pass"

    def to_metrics(self, prefix: str = "") -> dict[str, float]:
        """A flat dict of floats for an experiment tracker: ``prefix + "exit_code"`` and each
        gate's numeric fields, keyed ``prefix + group + "/" + name`` (no group for a single
        gate), as :meth:`Result.to_metrics`.

        {metrics_parameters}
        """
        return merged_metrics(
            [
                ("the report", {metric_key(f"{prefix}exit_code"): float(self.exit_code)}),
                *(
                    (g.group, g.to_metrics(prefix if g.group is None else f"{prefix}{g.group}/"))
                    for g in self.gates
                ),
            ]
        )

    def to_frame(self):
        """One row per gate, the columns of :class:`Gate` (``by`` joined with ``", "``,
        ``notes`` with ``"; "``)."""

        return pd.DataFrame([g._row() for g in self.gates], columns=list(Gate.columns))

    def _adjust_line(self) -> str:
        watching = any(g.method.startswith("sequence_") for g in self.gates)
        if watching and self.adjust == "none":
            return (
                f"one gate, read from its {self.confidence:.4g} confidence sequence: valid at "
                "every look, however often the gate is run"
            )
        if watching:
            return (
                f"{len(self.gates)} gates, each read from its confidence sequence at "
                f"{1 - (1 - self.confidence) / len(self.gates):.4g} (Bonferroni): the chance "
                f"that any gate ever passes that should not, at any look, is at most "
                f"{(1 - self.confidence) / 2:.3g}"
            )
        if self.adjust == "none":
            return f"one gate, read from its {self.confidence:.4g} interval"
        return (
            f"{len(self.gates)} gates, Holm's step-down on the interval tests: the chance that "
            f"any gate passes that should not is at most {(1 - self.confidence) / 2:.3g}"
        )

    def _heading(self) -> str:
        first = self.gates[0]
        return (
            f"GateReport: {self.verdict.upper()} ({first.question}; "
            f"{label_of(first.outcome, first.by)})"
        )

    def _blocks(self) -> list[Lines | Table]:
        header = ("gate", "verdict", "estimate", "interval", "boundary", "level", "clusters")
        rows = tuple(
            (
                g.group if g.group is not None else label_of(g.outcome, g.by),
                g.verdict,
                fmt.number(g.estimate),
                "empty" if math.isnan(g.low) else fmt.interval(g.low, g.high),
                f"{g.boundary:g}",
                f"{g.confidence:.4g}",
                f"{g.n_clusters:,}",
                _clusters(g.clusters_needed) if g.verdict == "inconclusive" else "",
            )
            for g in self.gates
        )
        return [Table((*header, "clusters needed"), rows), Lines((self._adjust_line(),))]

    def _notes(self) -> list[str]:
        return list(
            dict.fromkeys(
                f"{g.group}: {n}" if g.group is not None else n for g in self.gates for n in g.notes
            )
        )

    def _markdown_heading(self) -> list[str]:
        icon = {"pass": "✅", "fail": "❌", "inconclusive": "⚠️", "void": "⛔"}[self.verdict]
        first = self.gates[0]
        return [
            f"### {icon} clusterstats gate: {self.verdict.upper()}",
            "",
            f"**{label_of(first.outcome, first.by)}**: {first.question}.",
        ]


def _clusters(value: float) -> str:
    if math.isnan(value):
        return "–"
    if math.isinf(value):
        return "∞"
    return f"{math.ceil(value):,}"


def _decide(low: float, high: float, boundary: float) -> str:
    if low >= boundary:
        return "pass"
    if high < boundary:
        return "fail"
    return "inconclusive"


def gate(
    data: Any,
    outcome: Hashable,
    by: opt.By | None = None,
    *,
    baseline: Any = None,
    margin: float | None = None,
    at_least: float | None = None,
    over: Hashable | Sequence[Hashable] | None = None,
    on: Hashable | Sequence[Hashable] | None = None,
    how: opt.How = "strict",
    rerun: Hashable | None = None,
    estimand: opt.Estimand = "pooled",
    method: str = "auto",
    confidence: float = 0.95,
    missing: opt.MissingOrIPW = "drop",
    responded: Hashable | None = None,
    strata: Hashable | None = None,
    nest: bool = False,
    lonely: opt.Lonely = "fail",
    power: float = 0.8,
    n_resamples: int = 9999,
    rng: int | np.random.Generator | None = None,
    case: Hashable = "case",
    crossed: bool = False,
    weights: Hashable | None = None,
    sequential: bool = False,
    order: Hashable | None = None,
    budget: float | None = None,
    bounds: tuple[float, float] | None = None,
    max_cluster_size: float | None = None,
    cluster_size: int | None = None,
    target: str = "population",
    benchmark_clusters: int | None = None,
    benchmark_rows: int | None = None,
) -> GateReport:
    """Pass, fail or inconclusive: a release gate read from a clustered interval.

    With ``baseline`` and ``margin``: is ``data`` (the new model) not worse than
    ``baseline`` by more than ``margin``? The interval of the paired difference ``new −
    baseline`` on the shared items (``paired_delta``) passes when it lies at or above
    ``−margin``, fails when it lies below, and is inconclusive when it contains it. With
    ``at_least``: is the pass rate (or mean score) of ``data`` at least that? The interval of
    ``cluster_ci`` passes when it lies at or above the threshold, fails when it lies below,
    and is inconclusive otherwise. A two-sided interval at ``confidence`` is a one-sided test
    at ``(1 − confidence) / 2``, the convention of non-inferiority trials (Piaggio et al.
    2012, CONSORT extension for non-inferiority trials).

    With several gates (``over=``, or a Dataset's extra dims), Holm's (1979) step-down
    procedure controls the family-wise error of the passes: with ``r`` gates still
    undecided, every one is read from its interval at confidence ``1 − (1 − confidence) /
    r``; those that pass are removed and the rest are read again at the next level, until
    none passes. The gates left then fail if their interval (at the last level) lies beyond
    the boundary, else they are inconclusive. The chance that any gate passes that should
    not is at most ``(1 − confidence) / 2``.

    An inconclusive gate reports ``clusters_needed``: the clusters like the run's at which
    ``pilot_plan`` puts the power to tell the estimate from the boundary at ``power`` (its
    ``clusters_for_power`` with ``effect = d``, the distance between them: for ``at_least``
    the plan of the rate, for ``not_worse`` the paired plan, items with several runs
    averaged first as ``paired_delta`` does), were the truth the estimate. The plan
    projects the run's own interval, with the degrees of freedom of its uneven cluster
    sizes, so it delivers the power it promises on real benchmarks (docs:
    ``power-real-data.md``). Where no pilot plan can be made (one row per cluster leaves no
    ICC to estimate), the run's own standard error is scaled instead, ``se sqrt(K / K')``
    with ``t_{K'-1}`` quantiles, with a note.

    With ``sequential=True`` the gate watches a run as it grows: its interval is the current
    one of ``confidence_sequence`` over the completed clusters (of the paired difference,
    against a baseline) in their order of arrival, valid however often the gate is run. So
    a run may be stopped as soon as it passes or fails, and continued while it is
    inconclusive ("continue", exit code 2). Several gates share the family's error by
    Bonferroni's inequality (each sequence at ``1 − (1 − confidence) / k``), which holds over
    every look. ``budget`` (the clusters the run plans) adds the share of it used. An
    inconclusive watching gate's ``clusters_needed`` comes from ``sequence_plan`` on the
    run's own clusters, and its note says whether watching can decide within the budget or
    the benchmark, or whether a fixed gate (or the mean of cluster means) should be used.

    Parameters
    ----------
    data : DataFrame (pandas, polars, pyarrow or dask) or xarray.Dataset
        The new model's results, as in ``cluster_ci`` (at least) or as ``paired_delta``'s
        first side (not worse).
    outcome : column label
        The outcome (0/1 or a score; higher is better).
    by : column label or list of labels, optional
        The cluster column(s).
    baseline : DataFrame (pandas, polars, pyarrow or dask) or Dataset, optional
        The baseline's results on the same items, matched on ``on``: the not-worse gate.
    margin : float, optional
        With ``baseline``: how much worse than the baseline is still acceptable (0 or more,
        in the outcome's units: 0.02 is two points of pass rate).
    at_least : float, optional
        Without ``baseline``: the threshold the pass rate must clear.
    over : column label or list of labels, optional
        One gate per value of this column (e.g. a task or a slice), or per combination of
        several columns, with Holm's adjustment. For the not-worse gate both frames need
        the columns.
    on, rerun : column label(s), optional
        As in ``paired_delta`` (the item key and the run id of frames).
    how : {"strict", "inner"}
        With ``baseline``: items one run lacks raise ``AlignmentError`` (``"strict"``) or
        are left out, and counted in the notes (``"inner"``), as in ``paired_delta``.
    estimand : {"pooled", "cluster_mean"}
        As in ``cluster_ci``.
    method : str
        The interval method, as in ``cluster_ci`` or ``paired_delta`` (default ``"auto"``).
        With ``sequential``: ``"auto"`` (``"betting_mixture"``) or a sequence method of
        ``confidence_sequence``.
    confidence : float
        The family's confidence, strictly between 0 and 1.
    missing : {"drop", "fail", "pass", "raise", "ipw"}
        As in ``cluster_ci`` and ``paired_delta``.
    responded : column label, optional
        A response indicator.
    strata, nest, lonely
        A stratified design, as in ``cluster_ci``.
    power : float
        The power at which ``clusters_needed`` is planned, strictly between 0 and 1.
    n_resamples : int
        Bootstrap replicates of the bootstrap methods.
    rng : int, numpy.random.Generator or None
        Seed or generator for the bootstrap (None: a fixed default seed, as in ``cluster_ci``).
    case : dim name
        For a Dataset: the case dim.
    crossed : bool
        Crossed clustering by the ``by`` columns, as in ``cluster_ci`` and ``paired_delta``.
    weights : column label, optional
        A weighted (Hájek) pass rate or difference, as in ``cluster_ci`` and
        ``paired_delta``. With ``weights`` or ``crossed``, the clusters needed by an
        inconclusive gate scale the run's standard error (the pilot plan projects
        unweighted, one-way clustered intervals), with a note.
    sequential : bool
        Read the gate from a confidence sequence over completed clusters (see above).
    order : column label, optional
        With ``sequential``: when each row arrived (a time or a completion index), as in
        ``confidence_sequence``. Without it, the clusters arrive in the order of their last
        rows in ``data``, which suits a results file that grows by appending.
    budget : float, optional
        With ``sequential``: the clusters the run plans, for the share used.
    bounds : (float, float), optional
        With ``sequential``: the range of a score's cluster means, as in
        ``confidence_sequence`` (a 0/1 outcome needs none). A threshold outside it (or a
        margin as wide as it) is refused: the gate would decide whatever the data.
    max_cluster_size : float, optional
        With ``sequential`` and the pooled estimand: the bound on the cluster sizes that
        the bets rely on, fixed before the first look (as in ``confidence_sequence``). Give
        it when the gate watches a growing file: without it the largest cluster seen so far
        is used, so a later, larger cluster changes every earlier look (a note says so).
    cluster_size : int, optional
        With ``sequential``: the rows of a complete cluster; clusters with fewer are still
        running and wait (as in ``confidence_sequence``).
    target : {"population", "benchmark"}
        With ``sequential``: what the gate asks about, as in ``confidence_sequence``: the
        population the clusters are drawn from, or this benchmark's own full-run score (its
        clusters run in a random order; a run stopped early saves compute).
    benchmark_clusters, benchmark_rows : int, optional
        With ``target="benchmark"``: the size of the whole benchmark, as in
        ``confidence_sequence``.

    Returns
    -------
    GateReport

    Raises
    ------
    InvalidOptionError
        Neither or both of ``baseline`` and ``at_least``; ``baseline`` without ``margin``;
        a negative or non-finite ``margin`` or ``at_least``; ``power`` outside (0, 1);
        ``over`` on a Dataset (its extra dims are the slices); and every error of
        ``cluster_ci`` and ``paired_delta`` for the data and the other options.

    Examples
    --------
    >>> import clusterstats
    >>> bbh = clusterstats.datasets.load("bbh")
    >>> cot, direct = bbh[bbh.condition == "cot"], bbh[bbh.condition == "direct"]
    >>> g = clusterstats.gate(cot, "correct", by="task", baseline=direct, on="item_id",
    ...                       margin=0.0)
    >>> g.verdict, g.exit_code
    ('pass', 0)
    >>> clusterstats.gate(cot, "correct", by="task", at_least=0.9).verdict
    'fail'
    """
    question = _question(
        data, baseline=baseline, margin=margin, at_least=at_least, how=how, power=power,
        confidence=confidence, over=over,
    )  # fmt: skip
    columns = adapters.columns_of(
        data, outcome, by, over=over, on=on, rerun=rerun, responded=responded, strata=strata,
        weights=weights, order=order, layout=(case, "rerun"),
    )  # fmt: skip
    watching = _watching(
        sequential, columns, crossed=crossed, missing=missing,
        later={
            "budget": budget, "bounds": bounds,
            "max_cluster_size": max_cluster_size, "cluster_size": cluster_size,
            "benchmark_clusters": benchmark_clusters, "benchmark_rows": benchmark_rows,
            "target": None if target == "population" else target,
        },
    )  # fmt: skip
    shared = {
        "estimand": estimand, "confidence": question.confidence, "missing": missing,
        "nest": nest, "lonely": lonely, "n_resamples": n_resamples, "rng": rng,
        "crossed": crossed,
        # a watching gate names its sequence in method=; its design needs none
        "method": "auto" if watching else method,
    }  # fmt: skip
    # One reduction of the data into a design, as cluster_ci and paired_delta make it: every
    # backend and option of the statistics is the gate's too, watching or not.
    design: MeanDesign | PairedDesign
    if baseline is None:
        options: Any = opt.interval_options(columns, **shared)
        design = adapters.mean_design(data, columns, nest=options.nest, arrivals=watching)
    else:
        options = opt.paired_options(columns, how=question.how, **shared)
        design = matched_design(data, baseline, columns, options, arrivals=watching)
    _check_scale(design, question.kind, question.bound)
    if watching:
        return _sequential_gate(
            data, columns, design, question, baseline=baseline, budget=budget, bounds=bounds,
            max_cluster_size=max_cluster_size, cluster_size=cluster_size,
            method="betting_mixture" if method == "auto" else method, target=target,
            benchmark_clusters=benchmark_clusters, benchmark_rows=benchmark_rows,
            estimand=estimand, missing=missing,
        )  # fmt: skip
    return _fixed_gate(design, options, question, outcome=outcome, missing=missing)


@dataclass(frozen=True)
class _Question:
    """What a gate asks, validated once before the data are read: ``kind`` (``"at_least"``
    or ``"not_worse"``), ``bound`` (the threshold or the margin as given), ``boundary``
    (where an interval must lie at or above to pass: the threshold, or ``-margin``)."""

    kind: str
    bound: float
    boundary: float
    confidence: float
    power: float
    how: str
    dataset: bool


def _question(
    data: Any,
    *,
    baseline: Any,
    margin: Any,
    at_least: Any,
    how: Any,
    power: Any,
    confidence: Any,
    over: Any,
) -> _Question:
    """The gate's question, or an error that says what it lacks."""
    confidence = opt.check_confidence(confidence)
    if (baseline is None) == (at_least is None):
        raise InvalidOptionError(
            "a gate asks one question: pass baseline= and margin= (not worse than the "
            "baseline by more than the margin) or at_least= (a pass rate of at least a "
            "threshold)"
        )
    if baseline is not None and margin is None:
        raise InvalidOptionError(
            "baseline= needs margin=: how much worse than the baseline is still acceptable "
            "(0 or more, in the outcome's units; 0 asks for no loss at all)"
        )
    if baseline is None and margin is not None:
        raise InvalidOptionError("margin= goes with baseline=; a threshold is at_least=")
    how = opt.check_choice("how", how, opt.ALIGNMENTS)
    if baseline is None and how != "strict":
        raise InvalidOptionError("how= goes with baseline= (which items the two runs share)")
    if baseline is not None:
        bound = opt.check_plan_number(
            "margin", margin, at_least=0, why="it is how much worse is still acceptable"
        )
    else:
        bound = opt.check_plan_number("at_least", at_least)
    dataset = adapters.is_dataset(data)
    if over is not None and dataset:
        raise InvalidOptionError(
            "over= slices a frame; a Dataset's extra dims (e.g. task) are its slices already"
        )
    return _Question(
        kind="at_least" if baseline is None else "not_worse",
        bound=float(bound),
        boundary=float(bound) if baseline is None else -float(bound) + 0.0,  # no -0.0
        confidence=confidence,
        power=opt.check_plan_number("power", power, above=0, below=1),
        how=how,
        dataset=dataset,
    )


def _watching(
    sequential: Any, columns: Any, *, crossed: Any, missing: Any, later: dict[str, Any]
) -> bool:
    """Whether the gate watches a growing run (``sequential``); the options only a watching
    gate takes (``later``, and ``order=``) are refused without it, and the designs it does
    not take yet with it."""
    if opt.check_flag("sequential", sequential):
        unsupported = {
            "strata": columns.strata is not None,
            "weights": columns.weights is not None,
            "crossed": bool(crossed),
            "responded": columns.responded is not None,
            "missing='ipw'": missing == "ipw",
        }
        refused = [name for name, given in unsupported.items() if given]
        if refused:
            raise InvalidOptionError(
                "sequential=True reads a confidence sequence over completed clusters and does "
                f"not take {', '.join(refused)} yet"
            )
        return True
    later = {"order": columns.order, **later}
    given = [f"{name}=" for name, value in later.items() if value is not None]
    if given:
        raise InvalidOptionError(f"{', '.join(given)} go with sequential=True")
    return False


def _fixed_gate(
    design: MeanDesign | PairedDesign,
    options: Any,
    question: _Question,
    *,
    outcome: Hashable,
    missing: Any,
) -> GateReport:
    """The gate read once from each group's interval, the groups by Holm's step-down
    procedure: each level reads only the gates still undecided (a single gate: at
    ``confidence``), and each plan of an inconclusive gate is built from the same design."""
    kind, boundary = question.kind, question.boundary

    def evaluate(level: float, indices: list[int]) -> dict[int, Any]:
        """The results of the gates ``indices`` at ``level``."""
        part = _only(design, indices)
        chosen = replace(options, confidence=level)
        if isinstance(part, PairedDesign):
            result = build_paired_delta(part, chosen)
        else:
            result = build_cluster_ci(part, chosen)
        found = list(result.results) if isinstance(result, GroupedResults) else [result]
        return dict(zip(indices, found, strict=True))

    alpha = 1.0 - question.confidence
    n_gates = len(design.groups)
    decided: dict[int, tuple[str, Any, float]] = {}
    while True:
        undecided = [i for i in range(n_gates) if i not in decided]
        if not undecided:
            break
        level = 1.0 - alpha / len(undecided)
        current = evaluate(level, undecided)
        passing = [i for i in undecided if _decide(*_bounds(current[i]), boundary) == "pass"]
        if not passing:
            for i in undecided:
                decided[i] = (_decide(*_bounds(current[i]), boundary), current[i], level)
            break
        for i in passing:
            decided[i] = ("pass", current[i], level)
    labels = _gate_labels(design, dataset=question.dataset)
    gates = []
    for i in range(n_gates):
        verdict, result, level = decided[i]
        estimate = result.delta if kind == "not_worse" else result.estimate
        low, high = _bounds(result)
        needed, plan_notes = math.nan, ()
        if verdict == "inconclusive":
            needed, plan_notes = _clusters_needed(
                _only(design, [i]),
                estimate=estimate,
                se=float(result.se),
                n_clusters=int(result.n_clusters),
                boundary=boundary,
                level=level,
                power=question.power,
                outcome=outcome,
                missing=missing,
                scaled_only=_plan_scaled_only(design, options),
            )
        gates.append(
            Gate(
                group=labels[i],
                kind=kind,
                outcome=result.outcome,
                by=result.by,
                verdict=verdict,
                estimate=float(estimate),
                low=float(low),
                high=float(high),
                boundary=boundary,
                confidence=level,
                method=result.method,
                estimand=result.estimand,
                n_clusters=int(result.n_clusters),
                clusters_needed=needed,
                notes=(*result.notes, *plan_notes),
            )
        )
    verdicts = {g.verdict for g in gates}
    overall = next(v for v in _PRECEDENCE if v in verdicts)
    return GateReport(
        gates=tuple(gates),
        verdict=overall,
        confidence=question.confidence,
        adjust="holm" if n_gates > 1 else "none",
    )


def _sequential_gate(
    data: Any,
    columns: Any,
    design: MeanDesign | PairedDesign,
    question: _Question,
    *,
    baseline: Any,
    budget: Any,
    bounds: Any,
    max_cluster_size: Any,
    cluster_size: Any,
    method: Any,
    target: Any,
    benchmark_clusters: Any,
    benchmark_rows: Any,
    estimand: Any,
    missing: Any,
) -> GateReport:
    """``gate(..., sequential=True)``: each slice's confidence sequence over its completed
    clusters, the family's error split by Bonferroni."""
    planned = None
    if budget is not None:
        planned = opt.check_plan_number("budget", budget, at_least=1)
    kind, boundary, bound = question.kind, question.boundary, question.bound
    confidence = question.confidence
    k = len(design.groups)
    options = opt.sequence_options(
        method=method,
        target=target,
        benchmark_clusters=benchmark_clusters,
        benchmark_rows=benchmark_rows,
        estimand=estimand,
        confidence=1 - (1 - confidence) / k,
        bounds=bounds,
        max_cluster_size=max_cluster_size,
        cluster_size=cluster_size,
        missing=missing,
    )
    _check_within_bounds(kind, bound, options.bounds)
    labels = _gate_labels(design, dataset=question.dataset)
    gates = []
    for group, label in zip(design.groups, labels, strict=True):
        if baseline is None:
            seq = sequence_of(group, design, options)
        else:
            seq = paired_sequence_of(group[1], design, options, labels=design.default_labels)
        now = seq.current
        notes = list(seq.notes)
        needed = math.nan
        decided = seq.decided_at(boundary)
        empty = seq.empty_from is not None
        verdict = "void" if empty else _decide(now.low, now.high, boundary)
        if verdict == "inconclusive":
            if baseline is None:
                totals, sizes, default = group_sums(group, design, options)
            else:
                totals, sizes, default = paired_sums(group[1])
            plan = plan_of_sums(
                totals,
                sizes,
                bounds=options.bounds or default or (0.0, 1.0),
                boundary=boundary,
                options=options,
                budget=planned,
                runs=100,
            )
            needed = plan.watching_clusters
            notes.append(
                "continue: the sequence still contains the threshold. From this run's "
                f"clusters, were its estimate the truth: watching decides after about "
                f"{_clusters(needed)} clusters in all (median of 100 simulated runs), a fixed "
                f"gate run once needs {_clusters(plan.fixed_clusters_80)} for 80% power; "
                f"{plan.recommendation}"
            )
        if planned is not None:
            notes.append(
                f"{now.n_clusters:,} of the {math.ceil(planned):,} clusters planned are "
                f"complete ({now.n_clusters / planned:.0%} of the budget)"
            )
            if now.n_clusters > 2 * planned:
                over_budget = (
                    f"the run is {now.n_clusters / planned:.1f} times its budget of "
                    f"{math.ceil(planned):,} clusters: look again at the plan"
                )
                notes.append(over_budget)
                warn(("" if label is None else f"{label}: ") + over_budget, OverBudgetWarning)
        notes.append(
            f"anytime-valid: read from the confidence sequence after {now.n_clusters:,} "
            f"completed clusters, arrived {seq.order}"
        )
        gates.append(
            Gate(
                group=label,
                kind=kind,
                outcome=design.outcome,
                by=design.by,
                verdict=verdict,
                estimate=now.estimate,
                low=now.low,
                high=now.high,
                boundary=boundary,
                confidence=options.confidence,
                method=f"sequence_{seq.method}",
                estimand=seq.estimand,
                n_clusters=now.n_clusters,
                decided_at=math.nan
                if decided is None or verdict == "void"
                else float(decided.n_clusters),
                clusters_needed=needed,
                notes=tuple(notes),
            )
        )
    verdicts = {g.verdict for g in gates}
    overall = next(v for v in _PRECEDENCE if v in verdicts)
    return GateReport(
        gates=tuple(gates),
        verdict=overall,
        confidence=confidence,
        adjust="bonferroni" if k > 1 else "none",
    )


def _check_within_bounds(kind: str, bound: float, bounds: tuple[float, float] | None) -> None:
    """A threshold outside the range the outcome is known to lie in, or a margin as wide as
    it, decides a watching gate whatever the data: refused."""
    if bounds is None:
        return
    low, high = bounds
    if kind == "at_least" and not low <= bound <= high:
        raise InvalidOptionError(
            f"at_least={bound:g} lies outside bounds=({low:g}, {high:g}), the range every "
            "outcome lies in, so this gate "
            f"{'fails' if bound > high else 'passes'} whatever the data"
        )
    if kind == "not_worse" and bound >= high - low:
        raise InvalidOptionError(
            f"margin={bound:g} is as wide as bounds=({low:g}, {high:g}), the range of the "
            "difference, so this gate passes whatever the data"
        )


def _check_scale(design: Any, kind: str, bound: float) -> None:
    """A margin or threshold on the percent scale, given for an outcome in [0, 1], decides
    the gate whatever the data: refused, with the number it probably meant."""
    if kind == "at_least":
        if not design.is_binary or 0.0 <= bound <= 1.0:
            return
        what = "fails" if bound > 1 else "passes"
        raise InvalidOptionError(
            f"at_least={bound:g} on a 0/1 outcome: a pass rate lies in [0, 1], so this gate "
            f"{what} whatever the data; give the threshold as a proportion"
            + (f" (did you mean {bound / 100:g}?)" if 1 < bound <= 100 else "")
        )
    if bound < 1.0:
        return
    values = [side for _, items in design.groups for side in (items.a, items.b)]
    if all(float(v.min()) >= 0.0 and float(v.max()) <= 1.0 for v in values):
        raise InvalidOptionError(
            f"margin={bound:g} on an outcome in [0, 1]: a difference of two such rates lies in "
            "[-1, 1], so this gate passes whatever the data; give the margin as a proportion"
            + (f" (did you mean {bound / 100:g}?)" if bound <= 100 else "")
        )


def _only(design: Any, indices: list[int]) -> Any:
    """The design of the groups ``indices`` (for a single group, without its grouping: the
    builders then return one result, and a plan is made of it)."""
    groups = tuple(design.groups[i] for i in indices)
    over = design.over if len(indices) > 1 else None
    if isinstance(design, PairedDesign):
        return replace(design, groups=groups, over=over)
    responses = design.responses
    if responses is not None:
        responses = tuple(responses[i] for i in indices)
    return replace(design, groups=groups, over=over, responses=responses)


def _gate_labels(design: Any, *, dataset: bool) -> list[str | None]:
    """Each gate's label: the ``over=`` value (values joined with ", "), or for a Dataset
    ``dim=value`` for each extra dim; None for a single gate."""
    if design.over is None:
        return [None] * len(design.groups)
    dims = design.over if isinstance(design.over, tuple) else (design.over,)
    labels = []
    for group in design.groups:
        label = group[0] if isinstance(design, PairedDesign) else group.label
        values = label if isinstance(design.over, tuple) else (label,)
        if dataset:
            labels.append(", ".join(f"{d}={v}" for d, v in zip(dims, values, strict=True)))
        else:
            labels.append(", ".join(map(str, values)))
    return labels


def _plan_scaled_only(design: Any, options: Any) -> str | None:
    """Why the plan of an inconclusive gate scales the run's standard error instead of
    projecting a pilot plan (the pilot plans neither weighted means nor crossed groupings)."""
    if design.weights is not None:
        return "weights="
    if options.crossed:
        return "crossed=True"
    return None


def _bounds(result: Any) -> tuple[float, float]:
    return float(result.low), float(result.high)


def _clusters_needed(
    design: Any,
    *,
    estimate: float,
    se: float,
    n_clusters: int,
    boundary: float,
    level: float,
    power: float,
    outcome: Hashable,
    missing: str,
    scaled_only: str | None,
) -> tuple[float, tuple[str, ...]]:
    """Clusters at which a plan from this gate's design (one group) has ``power`` to decide
    (see ``gate``)."""
    distance = abs(estimate - boundary)
    if distance == 0:
        return math.inf, ("the estimate is on the boundary: no number of clusters decides it",)
    try:
        if scaled_only is not None:
            raise InvalidOptionError(f"the pilot plan does not take {scaled_only} yet")
        plan = build_pilot_plan(
            _unstratified(design),
            outcome=outcome,
            missing="drop" if missing == "ipw" else missing,
            confidence=level,
            power=power,
            effect=distance,
            size=distance,
        )
        return _checked_needed(float(plan.clusters_for_power), plan.n_clusters)
    except ClusterStatsError as exc:
        # No pilot plan (e.g. one row per cluster, so no ICC): scale this run's standard
        # error instead, se * sqrt(K / K'), which holds the design effect fixed.
        if not se > 0:
            return math.nan, (f"no plan for the clusters needed: {exc}",)
        half = float(special.stdtrit(n_clusters - 1.0, 0.5 + level / 2.0)) * se
        scaled = ScaledDesign(
            half_width=half, df=n_clusters - 1.0, n_clusters=n_clusters, confidence=level
        )
        needed = scaled.clusters_for_power(distance, power=power)
        return needed, (
            "clusters needed scaled from this run's standard error (se·√(K/K′)), since a "
            f"pilot plan could not be made: {exc}",
        )


def _unstratified(design: Any) -> Any:
    """The design without its strata: the pilot plan projects the unstratified interval."""
    if isinstance(design, PairedDesign):
        return replace(
            design,
            groups=tuple((label, replace(items, strata=None)) for label, items in design.groups),
        )
    return replace(design, groups=tuple(replace(g, strata=None) for g in design.groups))


def _checked_needed(needed: float, n_clusters: float) -> tuple[float, tuple[str, ...]]:
    if needed > n_clusters:
        return needed, ()
    # The plan's normal-theory answer assumes an interval as narrow as a design effect
    # predicts; with few clusters the interval is wider than that.
    return needed, (
        f"the plan's {_clusters(needed)} clusters are no more than the {int(n_clusters):,} "
        "this run has: its interval is wider than the plan's normal theory assumes (few "
        "clusters, or a skewed difference), so more clusters than that are needed",
    )
