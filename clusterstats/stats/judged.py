"""A judge on every row, human labels on a few: prediction-powered intervals with clusters.

``judged_ci`` combines an LLM judge's score, which every row has, with human labels, which a
few rows have: the judge's mean over every row, corrected by the human-minus-judge difference
on the labelled rows (prediction-powered inference; Angelopoulos et al. 2023). The rows are
clustered, so the variance is taken over clusters, and the labels may be whole clusters,
rows inside clusters, or drawn with stated probabilities.
"""

from __future__ import annotations

import math
from collections.abc import Hashable
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np

from clusterstats import _display as fmt
from clusterstats import _options as opt
from clusterstats import adapters
from clusterstats._design import JudgedDesign
from clusterstats._plotting import forest
from clusterstats._result import Result, label_of
from clusterstats.core import judged as core
from clusterstats.core.intervals import FEW_CLUSTERS
from clusterstats.errors import (
    DegenerateDataError,
    FewClustersWarning,
    InvalidDataError,
    InvalidOptionError,
    JudgeScaleWarning,
    TooFewClustersError,
    warn,
)

__all__ = ["JudgedCI", "build_judged_ci", "judge_scale_note", "judged_ci", "judged_delta"]

#: Below this many labelled clusters, ``weight="auto"`` cross-fits the judge's weight
#: (each labelled cluster's residual uses the weight tuned without it): with few labelled
#: clusters a weight tuned on the same clusters makes the interval too short
#: (``studies/coverage_judged.py``).
CROSS_FIT_BELOW = 50

#: How far (a share of the judge's span) the human labels may run past the judge's scores
#: before ``JudgeScaleWarning`` says the two are on different scales.
SCALE_SLACK = 0.1

#: The peers' constructions ``method=`` names, with the ddof of their variances: glide's
#: sample variances, ppi_py's population variances.
_PEERS = {"glide": 1, "ppi_py": 0}

_LABELLING = {
    "clusters": "whole clusters labelled",
    "rows": "rows labelled inside every cluster",
    "clusters, then rows": "some rows of some clusters labelled",
    "every row": "every row labelled",
    "stated": "labelled with stated probabilities",
}


@dataclass(frozen=True, kw_only=True, repr=False)
class JudgedCI(Result):
    """A prediction-powered interval from a judge's scores and human labels (returned by
    ``judged_ci``), with what the judge bought beside it.

    The property ``interval`` is ``(low, high)``. The fields are also the keys of
    ``to_dict()`` and the columns of ``to_frame()``, in this order.

    Attributes
    ----------
    outcome : str
        The human label column (missing where unlabelled).
    judge : str
        The judge's score column.
    by : tuple of str
        The cluster column(s).
    estimand : {"pooled", "cluster_mean"}
        The mean over rows, or the mean of cluster means, of the human label.
    target : {"population", "benchmark"}
        What is estimated: the population the clusters are drawn from (documents like
        these), or this benchmark's own full-run score (the mean the human labels would have
        on every row of this run).
    method : {"cr2", "cr1", "bootstrap", "glide", "ppi_py"}
        The construction: ``"cr2"`` and ``"cr1"`` take the labelled rows as a subsample of
        the judged run (the two-phase variance, with CR2's or CR1's small-sample
        correction); ``"bootstrap"`` the two-phase design's cluster bootstrap (studentised,
        the weight re-tuned in each draw); ``"glide"`` and ``"ppi_py"`` are those
        peers', labelled and unlabelled clusters as two independent samples, a normal
        quantile.
    labelling : str
        The labelling design the labels show: ``"clusters"`` (whole clusters),
        ``"rows"`` (rows inside every cluster), ``"clusters, then rows"``, ``"every row"``
        or ``"stated"`` (stated inclusion probabilities).
    confidence : float
        The confidence level.
    estimate, se, low, high, df : float
        The estimate of the human labels' mean, its standard error, the interval and the
        degrees of freedom of its t quantile (those of the labelled clusters: their number
        less the labelling strata; infinite for the peers' methods and for the bootstrap,
        whose standard error is its draws' standard deviation).
    weight : float
        The judge's weight (PPI++'s lambda): 0 ignores the judge, 1 is plain
        prediction-powered inference; cross-fitted, the mean of the labelled clusters'
        weights.
    weight_method : str
        How the weight was chosen: ``"given"``, ``"tuned"`` or ``"cross-fitted"``.
    n_rows, n_labelled : int
        Rows (every one judged), and rows with a human label.
    n_clusters, n_labelled_clusters : int
        Clusters, and clusters with at least one label.
    human_estimate, human_low, human_high : float
        The human labels alone: the same construction with weight 0 (the clustered interval
        of the labelled rows, weighted by their inverse inclusion probabilities).
    judge_estimate, judge_low, judge_high : float
        The judge alone: its mean over every row with its clustered interval (on the
        judge's scale, with its bias).
    judge_bias, bias_low, bias_high : float
        The judge's estimated bias, judge minus human on the labelled rows, with its
        interval.
    effective_labels : float
        How many labelled rows the human labels alone would need for the same variance:
        ``n_labelled * human variance / variance``.
    strata : str or None
        The labelling strata column.
    inclusion : str or None
        The column of stated inclusion probabilities.
    sides : tuple of str, or None
        ``judged_delta``: the two runs, the estimate being the first minus the second (every
        estimate, bound and bias is of the difference); None for one run.
    notes : tuple of str
        The design read, the weight, and anything to know.
    """

    outcome: str
    judge: str
    by: tuple[str, ...] = ()
    estimand: str
    target: str
    method: str
    labelling: str
    confidence: float
    estimate: float
    se: float
    low: float
    high: float
    df: float
    weight: float
    weight_method: str
    n_rows: int
    n_labelled: int
    n_clusters: int
    n_labelled_clusters: int
    human_estimate: float
    human_low: float
    human_high: float
    judge_estimate: float
    judge_low: float
    judge_high: float
    judge_bias: float
    bias_low: float
    bias_high: float
    effective_labels: float
    strata: str | None = None
    inclusion: str | None = None
    sides: tuple[str, str] | None = None
    notes: tuple[str, ...] = ()

    _html: ClassVar[tuple[tuple[str, str], ...]] = (
        ("estimate", "estimate"),
        ("low", "low"),
        ("high", "high"),
        ("se", "se"),
        ("human_low", "humans alone: low"),
        ("human_high", "humans alone: high"),
        ("judge_estimate", "judge alone"),
        ("judge_bias", "judge bias"),
        ("weight", "judge weight"),
        ("effective_labels", "effective labels"),
        ("n_labelled", "labelled rows"),
        ("n_labelled_clusters", "labelled clusters"),
        ("n_clusters", "clusters"),
    )

    @property
    def interval(self) -> tuple[float, float]:
        """``(low, high)``."""
        return (self.low, self.high)

    def _label(self) -> str:
        what = label_of(self.outcome, self.by)
        if self.sides is not None:
            what = f"{what}: {self.sides[0]} - {self.sides[1]}"
        return f"{what}, judged by {self.judge}"

    def _caption(self) -> str:
        return (
            f"{self._label()} — {self.confidence:.0%} CI, estimand {self.estimand}, "
            f"target {self.target}, method {self.method}"
        )

    def _lines(self) -> list[str]:
        pct = f"{self.confidence:.0%}"
        gained = self.effective_labels - self.n_labelled
        return [
            f"JudgedCI({self._label()}; estimand={self.estimand}, target={self.target}, "
            f"method={self.method})",
            f"  estimate {fmt.number(self.estimate)}  {pct} CI "
            f"{fmt.interval(self.low, self.high)}  se {fmt.number(self.se)}",
            f"  humans alone {fmt.number(self.human_estimate)} "
            f"{fmt.interval(self.human_low, self.human_high)}; judge alone "
            f"{fmt.number(self.judge_estimate)} {fmt.interval(self.judge_low, self.judge_high)}",
            f"  judge bias {fmt.number(self.judge_bias)} "
            f"{fmt.interval(self.bias_low, self.bias_high)}; judge weight "
            f"{fmt.number(self.weight)} ({self.weight_method})",
            f"  {fmt.count(self.n_labelled, 'labelled row')} of {self.n_rows:,} in "
            f"{self.n_labelled_clusters:,} of {fmt.count(self.n_clusters, 'cluster')} "
            f"({_LABELLING[self.labelling]}); as precise as "
            f"{fmt.number(self.effective_labels)} labels alone ({gained:+,.0f})",
        ]

    def _value_label(self) -> str:
        mean = "mean of cluster means" if self.estimand == "cluster_mean" else "pooled mean"
        return f"{self.outcome}: {mean}, {self.confidence:.0%} CI"

    def plot(self, *, ax: Any = None, values: bool = False, percent: bool | None = None) -> Any:
        """The combined interval beside the human labels alone and the judge alone.

        Parameters
        ----------
        {plot_ax}
        values : bool, default False
            Print each estimate above its interval.
        percent : bool, optional
            Show the values as percentages. By default they are when every estimate and
            bound lies in [0, 1].

        {plot_returns}

        {plot_examples_head}
        >>> import clusterstats
        >>> coh = clusterstats.datasets.load("hanna").query("criterion == 'Coherence'")
        >>> coh = coh.assign(human=coh["human_score"].where(coh["cluster"] < 24))
        >>> res = coh.eval.judged_ci("human", by="cluster", judge="judge_score")
        >>> [t.get_text() for t in res.plot().get_yticklabels()]
        ['judge alone', 'humans alone', 'judge + humans']
        """
        return forest(
            ["judge + humans", "humans alone", "judge alone"],
            [self.estimate, self.human_estimate, self.judge_estimate],
            [self.low, self.human_low, self.judge_low],
            [self.high, self.human_high, self.judge_high],
            None,
            None,
            title=f"{self.outcome}, judged by {self.judge}, clustered by {' + '.join(self.by)}",
            xlabel=self._value_label(),
            order="label",
            values=values,
            percent=percent,
            ax=ax,
        )


def check_design(design: JudgedDesign, options: opt.JudgedOptions) -> core.Labelling:
    """Refuse a design the estimate cannot be formed from, naming what is missing."""
    sums = design.sums
    labelling = core.labelling_of(sums)
    n_labelled = int(sums.labelled.sum())
    if n_labelled == 0:
        raise InvalidDataError(
            f"no row of {design.outcome!r} holds a human label (every value is missing): "
            f"the judge alone is cluster_ci(data, {design.judge!r}, by=...), which estimates "
            "the judge's mean, not the humans'"
        )
    if sums.rows.size < 2:
        raise TooFewClustersError(f"found 1 cluster in {design.by}: a clustered interval needs 2")
    for stratum, (labelled, clusters) in enumerate(
        zip(labelling.labelled_clusters, labelling.clusters, strict=True)
    ):
        where = (
            f" in stratum {design.strata_labels[stratum]!r} of {design.strata!r}"
            if design.strata is not None
            else ""
        )
        if labelled < 2 and not sums.stated:
            raise TooFewClustersError(
                f"{int(labelled)} of {int(clusters)} clusters{where} hold a human label: the "
                "labels' spread between clusters, which sets the interval's width, needs "
                "labels in at least 2 clusters"
            )
    if sums.stated and int(np.count_nonzero(sums.labelled)) < 2:
        raise TooFewClustersError(
            "fewer than 2 clusters hold a human label: the labels' spread between clusters "
            "needs at least 2"
        )
    if options.method in _PEERS:
        if labelling.kind in ("rows", "every row"):
            raise InvalidOptionError(
                f"method={options.method!r} takes the unlabelled clusters as a sample of their "
                "own, "
                f"but every cluster holds labels ({_LABELLING[labelling.kind]}); use "
                "method='cr2'"
            )
        if options.estimand == "pooled" and np.any(sums.rows > 1):
            raise InvalidOptionError(
                f"method={options.method!r} takes each cluster as one unit (glide's cluster "
                "means, ppi_py's rows): pass estimand='cluster_mean', or clusters of one row"
            )
    if options.target == "benchmark":
        if sums.stated and np.any((sums.labelled > 0) & (sums.labelled < sums.rows)):
            raise InvalidOptionError(
                "target='benchmark' with stated inclusion probabilities takes whole clusters "
                "labelled (each cluster's rows all labelled or none); with rows labelled "
                "inside clusters use target='population'"
            )
        lone = (sums.labelled == 1) & (sums.rows > 1)
        if not sums.stated and lone.any():
            raise InvalidDataError(
                f"{int(lone.sum())} clusters hold one human label among several rows: "
                "target='benchmark' estimates the spread of the labels inside each partly "
                "labelled cluster, which needs two labels there; label a second row, or use "
                "target='population' (whose variance does not need it)"
            )
    return labelling


def _weight_method(weight: float | str, method: str) -> str:
    """How the weight was chosen, as the result reports it: the peers tune theirs by their
    own formula, never cross-fitted."""
    if isinstance(weight, float):
        return "given"
    return "tuned" if method in _PEERS else weight


def _weight_choice(options: opt.JudgedOptions, labelled_clusters: int) -> float | str:
    if options.weight != "auto":
        return options.weight
    return "cross-fitted" if labelled_clusters < CROSS_FIT_BELOW else "tuned"


def build_judged_ci(
    design: JudgedDesign,
    options: opt.JudgedOptions,
    *,
    sides: tuple[str, str] | None = None,
    one_side: int = 0,
) -> JudgedCI:
    """``judged_ci`` on a design; with ``sides``, the difference of two runs
    (``judged_delta``), ``one_side`` items of which were labelled on one side only."""
    labelling = check_design(design, options)
    sums = design.sums
    n_labelled_clusters = int(np.count_nonzero(sums.labelled))
    weight = _weight_choice(options, n_labelled_clusters)
    every_row = labelling.kind == "every row"
    common = {"estimand": options.estimand, "target": options.target}
    if options.method == "bootstrap":
        drawn = core.bootstrap(
            sums,
            estimand=options.estimand,
            weight=weight,
            confidence=options.confidence,
            n_resamples=options.n_resamples,
            rng=options.rng.generator(),
        )
        fitted, human, judge, residual = drawn.fitted, drawn.human, drawn.judge, drawn.residual
    else:
        if options.method in _PEERS:
            ddof = _PEERS[options.method]
            fitted = core.independent(sums, weight=weight, confidence=options.confidence, ddof=ddof)
            human = core.independent(sums, weight=0.0, confidence=options.confidence, ddof=ddof)
        else:
            common["small_sample"] = options.method
            fitted = core.fit(sums, **common, weight=weight, confidence=options.confidence)
            human = core.fit(sums, **common, weight=0.0, confidence=options.confidence)
        small_sample = "cr1" if options.method == "cr1" else "cr2"
        judge = core.judge_only(
            sums,
            estimand=options.estimand,
            confidence=options.confidence,
            small_sample=small_sample,
        )
        residual = core.fit(
            sums,
            estimand=options.estimand,
            target="population",
            weight=1.0,
            confidence=options.confidence,
            small_sample=small_sample,
            judge_part=False,
        )
    if not fitted.variance > 0:
        what = "the two runs differ by the same amount" if sides else "the estimate's parts agree"
        raise DegenerateDataError(
            f"{what} in every cluster (the judge's scores and the labelled residuals carry no "
            f"spread between clusters), so the variance is 0 and no interval can be given: "
            f"the estimate is {fmt.number(fitted.estimate)}"
        )
    notes = _notes(design, labelling, options.method, weight, n_labelled_clusters, every_row)
    if options.method == "bootstrap":
        notes.append(
            f"bootstrap-t: {options.n_resamples:,} draws of the clusters, labelled and "
            "unlabelled drawn apart (in each stratum), each draw studentised by its own "
            "standard error; "
            + (
                "the judge weight kept at the number given"
                if isinstance(weight, float)
                else "the judge weight re-tuned in each draw"
            )
        )
    if one_side:
        notes.append(
            f"{one_side:,} items carry a human label in one run only: the difference needs "
            "both, so those labels are not used"
        )
    n_labelled = int(sums.labelled.sum())
    effective = core.effective_labels(n_labelled, human.variance, fitted.variance)
    return JudgedCI(
        outcome=design.outcome,
        judge=design.judge,
        by=design.by,
        estimand=options.estimand,
        target=options.target,
        method=options.method,
        labelling=labelling.kind,
        confidence=options.confidence,
        estimate=fitted.estimate,
        se=math.sqrt(fitted.variance),
        low=fitted.lower,
        high=fitted.upper,
        df=fitted.df,
        weight=fitted.weight,
        weight_method=_weight_method(weight, options.method),
        n_rows=int(sums.rows.sum()),
        n_labelled=n_labelled,
        n_clusters=int(sums.rows.size),
        n_labelled_clusters=n_labelled_clusters,
        human_estimate=human.estimate,
        human_low=human.lower,
        human_high=human.upper,
        judge_estimate=judge.estimate,
        judge_low=judge.lower,
        judge_high=judge.upper,
        judge_bias=-residual.estimate,
        bias_low=-residual.upper,
        bias_high=-residual.lower,
        effective_labels=effective,
        strata=design.strata,
        inclusion=design.inclusion,
        sides=sides,
        notes=tuple(notes),
    )


def _notes(
    design: JudgedDesign,
    labelling: core.Labelling,
    method: str,
    weight: float | str,
    n_labelled_clusters: int,
    every_row: bool,
) -> list[str]:
    notes = [f"labelling read from the data: {_LABELLING[labelling.kind]}"]
    if every_row:
        notes.append(
            "every row holds a human label: the judge adds nothing, and this is the clustered "
            "interval of the labels"
        )
    if weight == "cross-fitted" and method not in _PEERS:
        notes.append(
            f"judge weight cross-fitted: fewer than {CROSS_FIT_BELOW} labelled clusters, so "
            "each labelled cluster's correction uses the weight tuned without it"
        )
        if np.any(labelling.labelled_clusters == 2):
            notes.append(
                "2 labelled clusters (in a stratum) leave one to tune a weight on without the "
                "other: their judge weight is 0, the labels alone"
            )
    if n_labelled_clusters < FEW_CLUSTERS:
        message = (
            f"only {n_labelled_clusters} clusters hold human labels: the interval's width is "
            f"itself uncertain with fewer than {FEW_CLUSTERS}; labels in more clusters, not "
            "more labels per cluster, fix this"
        )
        warn(message, FewClustersWarning)
        notes.append(message)
    scale = judge_scale_note(design)
    return notes if scale is None else [*notes, scale]


def judge_scale_note(design: JudgedDesign) -> str | None:
    """Warn (``JudgeScaleWarning``) when the human labels run past the judge's range of
    scores by more than ``SCALE_SLACK`` of that range, and return the message (None when
    they do not)."""
    low, high = design.judge_range
    human_low, human_high = design.human_range
    # a tenth of the judge's span of slack: continuous scores of one scale rarely span the
    # same range exactly, scores of another scale (0-1 against 1-5) miss it by far more
    slack = SCALE_SLACK * (high - low)
    if not (human_low < low - slack or human_high > high + slack):
        return None
    message = (
        f"the human labels run {fmt.number(human_low)} to {fmt.number(human_high)}, "
        f"outside the judge's {fmt.number(low)} to {fmt.number(high)}: the judge is meant "
        "to score on the labels' scale (a weight near 1 then corrects only its bias); "
        "rescale the judge to the labels' scale if they differ"
    )
    warn(message, JudgeScaleWarning)
    return message


def judged_ci(
    data: Any,
    outcome: Hashable,
    by: opt.By | None = None,
    *,
    judge: Hashable,
    estimand: opt.Estimand = "pooled",
    target: opt.Target = "population",
    weight: opt.JudgeWeight | float = "auto",
    method: opt.JudgedMethod = "cr2",
    confidence: float = 0.95,
    n_resamples: int = 9999,
    rng: int | np.random.Generator | None = None,
    strata: Hashable | None = None,
    inclusion: Hashable | None = None,
    labels: Any = None,
    on: Hashable | list[Hashable] | None = None,
    nest: bool = False,
    case: Hashable = "case",
    rerun: Hashable = "rerun",
) -> JudgedCI:
    """Confidence interval for the human labels' mean from a judge on every row and human
    labels on a few, when rows are clustered (prediction-powered inference, PPI++).

    The estimate is the judge's mean over every row, corrected by the mean of
    ``label - weight * judge`` over the labelled rows (Angelopoulos et al. 2023; the weight
    of PPI++, Angelopoulos, Duchi & Zrnic 2023). It is the survey regression estimator of a
    two-phase design, the judge its auxiliary (Särndal, Swensson & Wretman 1992, ch. 9): with
    the weight set to the labelled rows' regression slope, it equals R survey's
    ``svymean(~label, calibrate(twophase(...), phase = 2, ~judge))``. Its variance is taken
    over clusters: a judge lenient on one document is lenient on all its answers, which an
    interval over independent rows misses.

    Parameters
    ----------
    data : pandas DataFrame, polars or pyarrow table, dask DataFrame or xarray Dataset
        One row per judged item (a Dataset: the judge and the labels as (case, rerun)
        variables, the cases the clusters unless ``by`` is given).
    outcome : str
        The human label column: a number on every labelled row, missing elsewhere.
    by : str or list of str
        The cluster column(s): the document, prompt or conversation the rows share.
    judge : str
        The judge's score column, on the labels' scale, present on every row.
    estimand : {"pooled", "cluster_mean"}, default "pooled"
        The mean over every row, or the mean of the clusters' means.
    target : {"population", "benchmark"}, default "population"
        What is estimated. ``"population"``: the population the clusters are drawn from
        (documents like these); its variance holds the clusters' spread and the labelling's.
        ``"benchmark"``: this benchmark's own full-run score, the mean the human labels
        would have on every row of this run; its variance is the labelling's alone.
    weight : {"auto", "tuned", "cross-fitted"} or float, default "auto"
        The judge's weight. ``"tuned"`` minimises the estimated variance (a quadratic in the
        weight, over cluster sums), clipped to [0, 1]. ``"cross-fitted"`` tunes each labelled
        cluster's weight without that cluster (cross-prediction, Zrnic & Candès 2024; when
        every cluster carries labels, each cluster's judge is centred on its own judge
        total, so that its weight corrects only the gap between its labelled and its other
        rows). ``"auto"`` cross-fits below 50 labelled
        clusters and tunes above. A number is used as given: 0 ignores the judge (the human
        labels alone), 1 is plain prediction-powered inference.
    method : {"cr2", "cr1", "bootstrap", "glide", "ppi_py"}, default "cr2"
        ``"cr2"``: the labelled rows are a subsample of the judged run, drawn as the design
        shows (whole clusters, rows inside clusters, by stratum) or with the stated
        probabilities; the variance is the two-phase variance with CR2's bias reduction
        (Bell & McCaffrey 2002: each cluster's unit divided by the square root of one minus
        its leverage) and, for the pooled mean, clubSandwich's Satterthwaite degrees of
        freedom of the labelled clusters' sizes (else their number less the labelling
        strata); at ``target="benchmark"`` with clusters labelled from among more, the
        pooled mean takes the df of uneven sizes of ``cluster_ci(method="cr2_ik")``
        (Imbens & Kolesár 2016) from the labelled residuals, never more than those.
        ``"cr1"``: the same with CR1's ``G/(G-1)``. A stated design takes CR1's.
        ``"glide"``: glide's ``ClusteredPPIMeanEstimator``, each cluster one unit (its
        means, whole clusters labelled), the labelled and unlabelled clusters two
        independent samples, the judge's mean over the unlabelled ones, sample
        variances and a normal quantile. ``"ppi_py"``: the same with population variances,
        which with clusters of one row is ``ppi_py.ppi_mean_ci``. Both ignore that the
        labelled clusters were drawn from the judged ones; they are here to compare with.
        ``"bootstrap"``: the cluster bootstrap of the two-phase design, studentised (the
        bootstrap-t; Efron & Tibshirani 1993, section 12.5): each draw resamples the
        labelled and the unlabelled clusters of each stratum separately, with replacement,
        keeping their counts (Rao & Wu 1988; Shao & Tu 1995, section 6.2), re-tunes the
        weight by plain tuning (a number is kept), and divides its departure from the
        estimate by its own CR1 two-phase standard error; the bounds scale the full
        sample's CR1 standard error by those ratios' quantiles. The estimate is ``"cr1"``'s,
        with the full sample's weight (cross-fitted when ``weight`` says so); ``se`` is the
        draws' standard deviation. The draws' percentile interval covered 88-90% with 10
        labelled clusters where this one covered 91-96% (the documentation's coverage
        page). The humans alone, the judge alone and the bias come from the same draws.
        Target ``"population"`` only, without ``inclusion=``.
    confidence : float, default 0.95
        Two-sided confidence level.
    n_resamples : int, default 9999
        ``method="bootstrap"``: the draws, at least ``2 / (1 - confidence)`` (40 at 95%).
    rng : int, numpy.random.Generator or None
        ``method="bootstrap"``: seed or generator of the draws; None is the fixed seed
        ``clusterstats.core.bootstrap.DEFAULT_SEED`` (0), so that the interval is the same on
        every call and every backend.
    strata : str, optional
        A column constant within each cluster whose strata were labelled separately (a
        share of clusters in each): the labels are expanded stratum by stratum.
    inclusion : str, optional
        The probability each labelled row had of being labelled, when the labelling was
        drawn with known unequal probabilities (rows or clusters labelled independently).
        Without it the probabilities are read from the counts: labelled clusters among the
        clusters of their stratum, labelled rows among the rows of their cluster.
    labels : pandas, polars, pyarrow or dask table, optional
        The human labels in a table of their own (a file of labels beside an eval log),
        matched to the judged rows ``on=`` a key: its ``outcome`` column holds the labels.
        Every label must name a judged row, each key once on either side; a judged row
        without a label is unlabelled.
    on : str or list of str, optional
        The key that identifies a row in ``data`` and in ``labels`` (e.g. ``"sample_id"``,
        or ``["sample_id", "epoch"]``); with ``labels=`` only.
    nest : bool, default False
        Cluster ids are local to their stratum (R survey's ``nest=TRUE``).
    case, rerun : str, default "case", "rerun"
        The dims of a (case, rerun) Dataset.

    Returns
    -------
    JudgedCI
        The interval, the human labels alone and the judge alone beside it, the judge's bias
        with its interval, the weight, and the labels the judge was worth.

    Raises
    ------
    InvalidDataError
        No row labelled; a judge score missing on some row; an inclusion probability
        outside (0, 1] or missing on a labelled row.
    AlignmentError
        ``labels=`` holds a key no judged row has, or a key repeats in either table.
    TooFewClustersError
        Fewer than 2 clusters (in some stratum) hold labels.

    Warns
    -----
    FewClustersWarning
        Fewer than 20 clusters hold labels.
    JudgeScaleWarning
        The human labels run past the judge's range of scores by more than a tenth of
        that range: the two look to be on different scales.

    Notes
    -----
    Every row labelled gives ``cluster_ci`` of the labels (with ``method="cr2"`` or
    ``"cr1"`` alike) for any weight; weight 0 gives ``cluster_ci`` of the labelled rows alone
    (with ``method="cr1"``, weighted by their inverse inclusion probabilities when the rates
    differ between clusters). Coverage on simulated grids and on HANNA and Topical-Chat used
    as populations is in the documentation's *Judge and humans* page.

    Examples
    --------
    HANNA's stories, 96 writing prompts of 11 stories each, rated by humans and by ChatGPT;
    suppose humans had rated only the stories of 24 prompts:

    >>> import clusterstats
    >>> coh = clusterstats.datasets.load("hanna").query("criterion == 'Coherence'")
    >>> coh = coh.assign(human=coh["human_score"].where(coh["cluster"] < 24))
    >>> res = coh.eval.judged_ci("human", by="cluster", judge="judge_score")
    >>> res.labelling, res.n_labelled, res.n_labelled_clusters, res.weight_method
    ('clusters', 264, 24, 'cross-fitted')
    >>> res.high - res.low < res.human_high - res.human_low
    True
    """
    columns = adapters.columns_of(
        data, outcome, by, judge=judge, strata=strata, inclusion=inclusion, on=on,
        layout=(case, rerun),
    )  # fmt: skip
    options = opt.judged_options(
        columns, estimand=estimand, target=target, weight=weight, method=method,
        confidence=confidence, nest=nest, n_resamples=n_resamples, rng=rng,
    )  # fmt: skip
    if on is not None and labels is None:
        raise InvalidOptionError("on= matches labels= to the judged rows: pass labels= too")
    design = adapters.judged_design(data, columns, nest=options.nest, labels=labels)
    return build_judged_ci(design, options)


def judged_delta(
    data: Any,
    other: Any,
    outcome: Hashable,
    by: opt.By | None = None,
    *,
    judge: Hashable,
    on: Hashable | list[Hashable],
    how: opt.How = "strict",
    estimand: opt.Estimand = "pooled",
    target: opt.Target = "population",
    weight: opt.JudgeWeight | float = "auto",
    method: opt.JudgedMethod = "cr2",
    confidence: float = 0.95,
    n_resamples: int = 9999,
    rng: int | np.random.Generator | None = None,
    strata: Hashable | None = None,
    nest: bool = False,
) -> JudgedCI:
    """Paired difference of two models' human-label means, from a judge on every shared item
    and human labels on a shared few (prediction-powered, clustered).

    Both runs are judged on the same items, matched ``on=`` a key; an item's judge
    difference is known everywhere, its human difference where both runs' answers are
    labelled. The difference is then :func:`judged_ci`'s estimate of those differences, with
    the same construction, weight and options: a judge whose bias is the same for both
    models cancels in the difference, and the weight is tuned on the differences.

    Parameters
    ----------
    data, other : pandas, polars, pyarrow or dask DataFrame
        The two runs (the difference is ``data`` minus ``other``), one row per item; the
        clusters (and strata) are read from ``data``.
    outcome : str
        The human label column of both runs (missing where unlabelled).
    by : str or list of str
        The cluster column(s).
    judge : str
        The judge's score column of both runs, on every item.
    on : str or list of str
        The item key matching the two runs.
    how : {"strict", "inner"}, default "strict"
        ``"strict"`` refuses an item judged in one run only; ``"inner"`` keeps the shared
        items.
    estimand, target, weight, method, confidence, n_resamples, rng, strata, nest
        As for :func:`judged_ci`.

    Returns
    -------
    JudgedCI
        Of the difference, with ``sides`` naming the two runs.

    Raises
    ------
    AlignmentError
        A key repeats in a run, or (``how="strict"``) an item is judged in one run only.

    Examples
    --------
    Two of HANNA's story generators answer the same 96 prompts; humans rated both stories of
    30 prompts:

    >>> import clusterstats
    >>> coh = clusterstats.datasets.load("hanna").query("criterion == 'Coherence'")
    >>> coh = coh.assign(human=coh["human_score"].where(coh["cluster"] < 30))
    >>> gpt2, human = (coh[coh["system"] == s] for s in ("GPT-2", "Human"))
    >>> res = clusterstats.judged_delta(gpt2, human, "human", "cluster", judge="judge_score",
    ...                                 on="cluster")
    >>> res.sides, res.n_labelled, res.high < 0
    (('GPT-2', 'Human'), 30, True)
    """
    columns = adapters.columns_of(data, outcome, by, judge=judge, strata=strata, on=on)
    options = opt.judged_options(
        columns, estimand=estimand, target=target, weight=weight, method=method,
        confidence=confidence, nest=nest, n_resamples=n_resamples, rng=rng,
    )  # fmt: skip
    how = opt.check_choice("how", how, ("strict", "inner"))
    design, one_side = adapters.judged_paired_design(
        data, other, columns, how=how, nest=options.nest
    )
    sides = adapters.side_names(data, other, columns) or ("data", "other")
    return build_judged_ci(design, options, sides=sides, one_side=one_side)
