"""How many human labels to buy, and in how many clusters, beside a judge on every row.

``judged_plan`` reads a pilot (the judge on every row, humans on some) and projects the
two-phase variance of ``judged_ci`` to other labelling designs: a few labelled rows in many
clusters, or whole clusters, with a cost per label and per cluster, until an interval is
narrow enough or a difference is found with enough power.
"""

from __future__ import annotations

import math
from collections.abc import Hashable
from dataclasses import dataclass, replace
from typing import Any, ClassVar

import numpy as np
import pandas as pd

from clusterstats import _display as fmt
from clusterstats import _options as opt
from clusterstats import adapters
from clusterstats._result import Lines, Table, TableResult, label_of
from clusterstats.core import judged as core
from clusterstats.errors import InvalidDataError, InvalidOptionError
from clusterstats.stats.judged import check_design, judge_scale_note

__all__ = ["LabelPlan", "judged_plan"]

#: The labelled rows per cluster a plan compares (``inf``: every row of a cluster).
PER_CLUSTER = (1, 2, 3, 4, 5, 8, 10, 15, 20, 30, 50, math.inf)
#: A plan labels at least this many clusters: with fewer, the interval's own width rests on
#: a handful of degrees of freedom and swings from run to run (``docs/plans-judged.md``).
FEWEST_CLUSTERS = 10


@dataclass(frozen=True, kw_only=True, repr=False)
class LabelPlan(TableResult):
    """Labelling designs that reach a plan's goal, cheapest first (returned by
    ``judged_plan``).

    Attributes
    ----------
    outcome, judge : str
        The human label and judge columns of the pilot.
    by : tuple of str
        The cluster column(s).
    estimand, target : str
        As ``judged_ci``'s.
    confidence : float
        The confidence level of the intervals (and of the test, for power).
    weight : float
        The judge's weight tuned on the pilot, which the projections keep.
    clusters : int
        Clusters of the run to be labelled (every row judged).
    pilot_clusters, pilot_labelled_clusters : int
        The pilot's clusters, and those holding labels.
    target_half_width : float or None
        The half-width asked for.
    effect, power : float or None
        The difference to detect and the power asked for (``effect=``).
    cost_per_label, cost_per_cluster : float
        What a label costs, and what opening a cluster to labellers costs.
    designs : tuple of LabelDesign
        For each number of labelled rows per cluster (``inf``: whole clusters), the fewest
        labelled clusters that meet the goal (0: none does), the labels, the cost, the
        projected half-width and power.
    recommended : int or None
        The index in ``designs`` of the cheapest that meets the goal.
    floor_half_width : float
        The half-width with every row of every cluster labelled (population target): the
        between-cluster spread of the human labels, which no judge removes.
    humans_alone_labels : float
        The labels the cheapest design would need without the judge (weight 0), NaN when
        none reaches the goal.
    notes : tuple of str
    """

    outcome: str
    judge: str
    by: tuple[str, ...]
    estimand: str
    target: str
    confidence: float
    weight: float
    clusters: int
    pilot_clusters: int
    pilot_labelled_clusters: int
    target_half_width: float | None
    effect: float | None
    power: float | None
    cost_per_label: float
    cost_per_cluster: float
    designs: tuple[core.LabelDesign, ...]
    recommended: int | None
    floor_half_width: float
    humans_alone_labels: float
    notes: tuple[str, ...] = ()

    _metric_labels: ClassVar[tuple[str, ...]] = ("per_cluster",)

    def _goal(self) -> str:
        if self.target_half_width is not None:
            return f"a {self.confidence:.0%} interval of ±{fmt.number(self.target_half_width)}"
        return (
            f"power {self.power:.0%} to detect {fmt.number(self.effect)} at "
            f"{1 - self.confidence:.0%}"
        )

    def _heading(self) -> str:
        return (
            f"LabelPlan({label_of(self.outcome, self.by)}, judged by {self.judge}; "
            f"{self._goal()}, {self.clusters:,} clusters judged)"
        )

    def _blocks(self) -> list[Lines | Table]:
        lines = [
            f"judge weight {fmt.number(self.weight)} from a pilot of "
            f"{self.pilot_labelled_clusters} labelled clusters of {self.pilot_clusters}; "
            f"with every row labelled the half-width is ±{fmt.number(self.floor_half_width)} "
            "(the human labels' spread between clusters, which no judge removes)",
        ]
        if self.recommended is not None:
            best = self.designs[self.recommended]
            alone = (
                f"{self.humans_alone_labels:,.0f} at their cheapest"
                if math.isfinite(self.humans_alone_labels)
                else "no number of clusters"
            )
            lines.append(
                f"cheapest: {_rows(best.per_cluster)} in each of {best.clusters:,} clusters, "
                f"{best.labels:,.0f} labels, cost {fmt.number(best.cost)}; the human labels "
                f"alone would need {alone}"
            )
        header: tuple[str, ...] = ("labelled per cluster", "clusters", "labels", "cost")
        header += ("half-width",) if self.effect is None else ("half-width", "power")
        rows = tuple(
            (
                _rows(d.per_cluster),
                d.clusters if d.clusters else "none reach",
                round(d.labels) if d.clusters else "-",
                d.cost if d.clusters else "-",
                d.half_width,
                *(() if self.effect is None else (d.power,)),
            )
            for d in self.designs
        )
        return [Lines(tuple(lines)), Table(header, rows)]

    def to_frame(self) -> pd.DataFrame:
        """One row per design: ``per_cluster`` (``inf`` for whole clusters), ``clusters``,
        ``labels``, ``cost``, ``half_width``, ``power`` and ``recommended``."""
        frame = pd.DataFrame([d._asdict() for d in self.designs])
        return frame.assign(recommended=[i == self.recommended for i in range(len(frame))])


def _rows(per_cluster: float) -> str:
    if math.isinf(per_cluster):
        return "every row"
    return f"{per_cluster:g} row" + ("" if per_cluster == 1 else "s")


def judged_plan(
    data: Any,
    outcome: Hashable,
    by: opt.By | None = None,
    *,
    judge: Hashable,
    target_half_width: float | None = None,
    effect: float | None = None,
    power: float = 0.8,
    cost_per_label: float = 1.0,
    cost_per_cluster: float = 0.0,
    clusters: int | None = None,
    estimand: opt.Estimand = "pooled",
    target: opt.Target = "population",
    confidence: float = 0.95,
    pilot_limit: float | None = 0.9,
    labels: Any = None,
    on: Hashable | list[Hashable] | None = None,
) -> LabelPlan:
    """How many human labels, in how many clusters, a run judged on every row needs.

    From a pilot (the judge on every row, human labels on some), the two-phase variance of
    :func:`judged_ci` is projected to other labelling designs at the pilot's judge weight:
    ``r`` labelled rows in each of ``m`` clusters drawn at random from the run's ``C``,

        (S2_g + 2 S_ge + S2_e + w(r)) / C + (1/m - 1/C) (S2_e + w(r))

    (the benchmark target: ``(1/m - 1/C) S2_e + w(r) / m``), where ``S2_e`` is the spread
    of the clusters' true residuals and ``w(r)`` the within-cluster noise of ``r`` labels
    (the classic two-stage variance, Cochran 1977, section 10.2). For each ``r`` the plan
    gives the fewest clusters that reach the goal (never fewer than 10, or the whole run)
    and what they cost. With labels in every
    cluster the variance cannot fall below ``(S2_g + 2 S_ge + S2_e) / C``: the spread of
    the human labels between clusters, which no judge removes; only judging more clusters
    does.

    Parameters
    ----------
    data : pandas DataFrame, polars or pyarrow table, dask DataFrame or xarray Dataset
        The pilot, as :func:`judged_ci` takes it.
    outcome : str
        The human label column (missing where unlabelled).
    by : str or list of str
        The cluster column(s).
    judge : str
        The judge's score column.
    target_half_width : float, optional
        The half-width the interval should reach.
    effect : float, optional
        Instead, a difference (from a reference value, or between two models with the
        pilot's differences) the test should detect with ``power``.
    power : float, default 0.8
        The power for ``effect``.
    cost_per_label, cost_per_cluster : float, default 1 and 0
        What a human label costs, and what bringing a cluster to the labellers costs (the
        document read once, the context explained).
    clusters : int, optional
        The clusters of the run to be labelled, every row of them judged (default: the
        pilot's).
    estimand, target, confidence
        As for :func:`judged_ci`.
    pilot_limit : float or None, default 0.9
        Plan on the pilot's spreads of the labels at their one-sided upper confidence limits
        of this level (Browne 1995): the within-cluster spread's chi-square limit, and the
        between-cluster spread's modified large-sample limit (Graybill & Wang 1980), which
        stays above 0 when the pilot's within-cluster noise accounts for all of its
        between-cluster spread. A plan on the point estimates falls short about half the
        time, by more when the pilot is small; at 0.9 every cell of the committed study on
        HANNA and Topical-Chat kept its promise within 5 points (the 80% limits used before,
        without the modified bound, kept it in 130 of 136 with about 12% fewer labels). None
        plans on the estimates themselves.
    labels, on
        The pilot's human labels in a table of their own, as for :func:`judged_ci`.

    Returns
    -------
    LabelPlan

    Raises
    ------
    InvalidOptionError
        Neither or both of ``target_half_width`` and ``effect``; costs that are negative or
        both zero.
    InvalidDataError
        A pilot labelled with stated probabilities or by strata (a plan draws labels
        simply at random), or whose labelled clusters hold one row each (no within-cluster
        spread to project from, and rows per cluster are then moot).

    Warns
    -----
    JudgeScaleWarning
        The pilot's human labels run past the judge's range of scores by more than a tenth
        of that range (as in ``judged_ci``): a plan on a judge of another scale keeps a
        weight that corrects little.

    Examples
    --------
    HANNA's coherence ratings, the humans' kept for 24 prompts as a pilot:

    >>> import clusterstats
    >>> coh = clusterstats.datasets.load("hanna").query("criterion == 'Coherence'")
    >>> pilot = coh.assign(human=coh["human_score"].where(coh["cluster"] < 24))
    >>> plan = clusterstats.judged_plan(pilot, "human", "cluster", judge="judge_score",
    ...                                 target_half_width=0.06)
    >>> best = plan.designs[plan.recommended]
    >>> best.half_width <= 0.06, best.labels < plan.humans_alone_labels + 1
    (True, True)
    """
    columns = adapters.columns_of(data, outcome, by, judge=judge, on=on)
    options = opt.judged_options(
        columns,
        estimand=estimand,
        target=target,
        weight="tuned",
        method="cr1",
        confidence=confidence,
        nest=False,
    )
    if (target_half_width is None) == (effect is None):
        raise InvalidOptionError(
            "judged_plan plans for one goal: pass target_half_width= (an interval this "
            "narrow) or effect= (a difference to detect with power=)"
        )
    goal = {
        "half_width": None
        if target_half_width is None
        else opt.check_plan_number("target_half_width", target_half_width, above=0),
        "effect": 0.0 if effect is None else abs(opt.check_plan_number("effect", effect)),
        "power": opt.check_plan_number("power", power, above=0, below=1),
    }
    if effect is not None and goal["effect"] == 0:
        raise InvalidOptionError("effect must be a difference other than 0, got 0")
    costs = (
        opt.check_plan_number("cost_per_label", cost_per_label, at_least=0),
        opt.check_plan_number("cost_per_cluster", cost_per_cluster, at_least=0),
    )
    if costs == (0.0, 0.0):
        raise InvalidOptionError("cost_per_label and cost_per_cluster cannot both be 0")
    design = adapters.judged_design(data, columns, labels=labels)
    check_design(design, options)
    scale = judge_scale_note(design)
    sums = design.sums
    if sums.stated or design.strata is not None:
        raise InvalidDataError("judged_plan plans simple random labelling: the pilot's labels "
                               "must not carry stated probabilities or strata")  # fmt: skip
    if not np.any(sums.labelled > 1):
        raise InvalidDataError(
            "every labelled cluster of the pilot holds one label: the spread of labels inside "
            "a cluster, which sets how many rows per cluster are worth labelling, cannot be "
            "read; label two or more rows in some clusters"
        )
    run = int(
        sums.rows.size
        if clusters is None
        else opt.check_plan_number("clusters", clusters, at_least=2, whole=True)
    )
    fitted = core.fit(sums, estimand=estimand, target=target, weight="tuned",
                      confidence=confidence, small_sample="cr1")  # fmt: skip
    limit = (
        None
        if pilot_limit is None
        else opt.check_plan_number("pilot_limit", pilot_limit, above=0.5, below=1)
    )
    plan = _plan(sums, fitted.weight, run, options, goal, costs, limit)
    alone = _plan(sums, 0.0, run, options, goal, costs, limit)
    result = _result(design, options, fitted.weight, run, goal, costs, plan, alone, limit)
    return result if scale is None else replace(result, notes=(*result.notes, scale))


def _plan(
    sums: core.JudgedSums,
    weight: float,
    run: int,
    options: opt.JudgedOptions,
    goal: dict[str, Any],
    costs: tuple[float, float],
    limit: float | None,
) -> tuple[list[core.LabelDesign], float]:
    parts = core.plan_parts(sums, estimand=options.estimand, weight=weight, upper=limit)
    per_cluster = tuple(r for r in PER_CLUSTER if r < sums.rows.max() or math.isinf(r))
    designs = core.label_designs(
        parts, clusters=run, target=options.target, confidence=options.confidence,
        per_cluster=per_cluster, cost_per_label=costs[0], cost_per_cluster=costs[1],
        half_width=goal["half_width"], effect=goal["effect"], power=goal["power"],
        fewest=FEWEST_CLUSTERS,
    )  # fmt: skip
    floor = core.projected_variance(
        parts, clusters=run, labelled=run, per_cluster=math.inf, target="population"
    )
    return designs, core.t_half_width(floor, run - 1, options.confidence)


def _result(
    design: Any,
    options: opt.JudgedOptions,
    weight: float,
    run: int,
    goal: dict[str, Any],
    costs: tuple[float, float],
    plan: tuple[list[core.LabelDesign], float],
    alone: tuple[list[core.LabelDesign], float],
    limit: float | None,
) -> LabelPlan:
    designs, floor = plan
    feasible = [i for i, d in enumerate(designs) if d.clusters]
    recommended = min(feasible, key=lambda i: designs[i].cost) if feasible else None
    notes = []
    if recommended is None:
        notes.append(
            f"no labelling of {run:,} clusters reaches the goal: the human labels' spread "
            f"between clusters keeps the half-width at ±{fmt.number(floor)} or more even "
            "with every row labelled; judge more clusters (clusters=)"
        )
    reachable = [d for d in alone[0] if d.clusters]
    humans = min(reachable, key=lambda d: d.cost).labels if reachable else math.nan
    notes.append(
        "projections keep the pilot's judge weight, and take the labels' spreads at their "
        f"{limit:.0%} upper confidence limits (pilot_limit=); a plan labels at least "
        f"{FEWEST_CLUSTERS} clusters"
        if limit is not None
        else "projections keep the pilot's judge weight and its spreads (pilot_limit=None: "
        f"the estimates themselves); a plan labels at least {FEWEST_CLUSTERS} clusters"
    )
    sums = design.sums
    return LabelPlan(
        outcome=design.outcome,
        judge=design.judge,
        by=design.by,
        estimand=options.estimand,
        target=options.target,
        confidence=options.confidence,
        weight=weight,
        clusters=run,
        pilot_clusters=int(sums.rows.size),
        pilot_labelled_clusters=int(np.count_nonzero(sums.labelled)),
        target_half_width=goal["half_width"],
        effect=goal["effect"] if goal["half_width"] is None else None,
        power=goal["power"] if goal["half_width"] is None else None,
        cost_per_label=costs[0],
        cost_per_cluster=costs[1],
        designs=tuple(designs),
        recommended=recommended,
        floor_half_width=floor,
        humans_alone_labels=humans,
        notes=tuple(notes),
    )
