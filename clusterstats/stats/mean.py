"""The mean of clustered outcomes: ``cluster_ci``, ``icc``, ``design_effect`` and their results.

Each public function validates its options once (:mod:`clusterstats._options`), asks the
adapters for one design whatever the input (:mod:`clusterstats.adapters`), and hands both to
the builder below, which every backend shares; the numbers come from
:mod:`clusterstats.core`.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Hashable, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar, Literal

import numpy as np

from clusterstats import _display as fmt
from clusterstats import _options as opt
from clusterstats import adapters
from clusterstats._design import MeanDesign, MeanGroup
from clusterstats._plotting import intervals_forest
from clusterstats._result import GroupedResults, Result, label_of, one_number
from clusterstats.core import intervals as iv
from clusterstats.core import missing as mi
from clusterstats.core.crossed import memberships_of
from clusterstats.core.grouping import dense_codes
from clusterstats.core.intervals import Method
from clusterstats.core.summary import (
    few_clusters_notes,
    summarize_design_effect,
    summarize_icc,
)
from clusterstats.core.summary import summarize_interval as interval
from clusterstats.core.variance import icc_anova, iid_variance
from clusterstats.core.weighted import kish_effect
from clusterstats.errors import FewClustersWarning, InvalidOptionError, warn
from clusterstats.stats import _policies as policy
from clusterstats.stats._variance import design_interval, variance_design

__all__ = [
    "ICC",
    "ClusterCI",
    "DesignEffect",
    "build_cluster_ci",
    "build_design_effect",
    "build_icc",
    "cluster_ci",
    "design_effect",
    "grouped",
    "icc",
]


@dataclass(frozen=True, kw_only=True, repr=False)
class ClusterCI(Result):
    """A confidence interval for the mean of clustered outcomes (returned by ``cluster_ci``).

    The property ``interval`` is ``(low, high)``. The fields below are also the keys of
    ``to_dict()`` and the columns of ``to_frame()``, in this order (see ``Result``).

    Attributes
    ----------
    outcome : str or None
        The outcome column (None for plain arrays).
    by : tuple of str
        The cluster column(s).
    estimand : {"pooled", "cluster_mean", "stratum_mean"}
        ``"pooled"``: the share over all rows (large clusters weigh more);
        ``"cluster_mean"``: the mean of the cluster means (each cluster counts once);
        ``"stratum_mean"`` (with strata): the mean of the stratum means.
    method : str
        The method actually used: ``"auto"`` is resolved (e.g. to
        ``"korn_graubard_hybrid"``), ``"bootstrap"`` becomes ``"bootstrap_bca"`` (with
        strata, ``"bootstrap_percentile"``: the Rao–Wu bootstrap), degenerate data give
        ``"clopper_pearson_fallback"`` or ``"naive_fallback"``, and ``missing="ipw"`` gives
        ``"ipw_korn_graubard"``, ``"ipw_wilson"`` or ``"ipw_t"``.
    confidence : float
        Nominal coverage, e.g. 0.95.
    estimate : float
        The point estimate.
    se : float
        Its standard error: the square root of the variance the interval uses (NaN for the
        Clopper–Pearson fallback; for ``korn_graubard_inverted`` and
        ``korn_graubard_hybrid``, ``sqrt(p(1 - p) / n_eff)`` with the design effect they
        test with at the estimate).
    low, high : float
        The interval.
    df : float
        Degrees of freedom of the reference t distribution (for ``korn_graubard_hybrid``,
        the df of uneven sizes when its design-based floor binds; NaN for the bootstraps,
        ``korn_graubard_inverted``, the hybrid where the model binds, and the
        Clopper–Pearson fallback).
    n_rows : int
        Rows used (after dropping missing outcomes).
    n_clusters : int
        Clusters used.
    cluster_size_mean : float
        Mean rows per cluster.
    cluster_size_min, cluster_size_max : int
        The smallest and the largest cluster.
    icc : float
        One-way ANOVA intraclass correlation, raw (it can be negative; NaN if undefined).
    design_effect : float
        The variance of the estimate that the interval uses ÷ the variance of the same rows
        taken as independent (``s^2 / N``): CR1's for ``cr1``, ``wilson`` and
        ``korn_graubard`` (R survey's ``deff="replace"``), CR2's for ``cr2`` and ``cr2_ik``,
        CR3's (the jackknife) for ``cr3``, ``cr3_ik`` and ``bootstrap_t``, the bootstrap
        variance for the percentile and BCa bootstraps, 1 for ``naive``; for
        ``korn_graubard_inverted`` the beta-binomial model's at the estimate, and for
        ``korn_graubard_hybrid`` the larger of that and the CR2 one (over ``p (1 - p) / N``).
        The one definition used by every result (see ``DesignEffect``).
    n_eff : float
        Effective number of independent rows, ``n_rows / design_effect``; for the
        Clopper–Pearson fallback, the effective n it used.
    naive_low, naive_high : float
        The interval that treats rows as independent (Wilson for binary outcomes, t
        otherwise).
    widening : float
        Width of the interval ÷ width of the naive interval.
    n_missing : int
        Rows with a missing outcome.
    n_missing_clusters : int
        Clusters that contain such rows.
    n_resamples : int or None
        Bootstrap replicates, for bootstrap methods.
    notes : tuple of str
        Everything a reader should know: fallbacks, few clusters, estimand differences,
        missing rows.
    crossed : bool
        Whether ``by`` names crossed groupings (``crossed=True``: each column a grouping of
        its own, the variance Cameron–Gelbach–Miller's) rather than one cluster made of
        their combination. Crossed, ``n_clusters`` and the cluster sizes are those of the
        grouping with the fewest clusters, which sets the degrees of freedom; ``icc`` is
        NaN (a one-way ICC does not describe two groupings).
    weights : str or None
        The weight column of a weighted (Hájek) mean (``weights=``), else None. Weighted,
        ``design_effect`` is the clustering's (the linearised variance ÷ that of the same
        weighted rows taken as independent) and ``icc`` is NaN.
    weighting_design_effect : float
        Kish's design effect of the weights, ``1 + CV²`` (``n Σw² / (Σw)²``); NaN without
        weights.
    """

    outcome: str | None = None
    by: tuple[str, ...] = ()
    estimand: str
    method: str
    confidence: float
    estimate: float
    se: float
    low: float
    high: float
    df: float
    n_rows: int
    n_clusters: int
    cluster_size_mean: float
    cluster_size_min: int
    cluster_size_max: int
    icc: float
    design_effect: float
    n_eff: float
    naive_low: float
    naive_high: float
    widening: float
    n_missing: int = 0
    n_missing_clusters: int = 0
    n_resamples: int | None = None
    notes: tuple[str, ...] = ()
    crossed: bool = False
    weights: str | None = None
    weighting_design_effect: float = math.nan

    _html: ClassVar[tuple[tuple[str, str], ...]] = (
        ("estimate", "estimate"),
        ("low", "low"),
        ("high", "high"),
        ("se", "se"),
        ("naive_low", "naive low"),
        ("naive_high", "naive high"),
        ("widening", "widening"),
        ("icc", "ICC"),
        ("design_effect", "design effect"),
        ("n_eff", "n_eff"),
        ("n_rows", "rows"),
        ("n_clusters", "clusters"),
    )
    _grouped: ClassVar[tuple[tuple[str, str], ...]] = _html

    @property
    def interval(self) -> tuple[float, float]:
        """``(low, high)``."""
        return (self.low, self.high)

    def _label(self) -> str:
        """``"passed by doc"``; crossed groupings as ``"passed by question × template"``."""
        if self.crossed:
            text = f"{self.outcome or 'outcome'} by {' × '.join(self.by)} (crossed)"
        else:
            text = label_of(self.outcome, self.by)
        return text if self.weights is None else f"{text}, weighted by {self.weights}"

    def _caption(self) -> str:
        return (
            f"{self._label()} — {self.confidence:.0%} CI, "
            f"estimand {self.estimand}, method {self.method}"
        )

    def _grouped_heading(self, over: str) -> str:
        return (
            f"ClusterCI over {over}: {self._label()}; "
            f"{self.confidence:.0%} CI, estimand={self.estimand}, method={self.method}"
        )

    def _grouped_title(self) -> str:
        return f"{self._label()}: {self.confidence:.0%} CI, {self.method}"

    def _lines(self) -> list[str]:
        pct = f"{self.confidence:.0%}"
        if self.cluster_size_min == self.cluster_size_max:
            sizes = f"{fmt.count(self.cluster_size_min, 'row')} each"
        else:
            sizes = (
                f"size {self.cluster_size_min:,}–{self.cluster_size_max:,}, "
                f"mean {fmt.size(self.cluster_size_mean)}"
            )
        missing = (
            f"; {fmt.count(self.n_missing, 'row')} had a missing outcome" if self.n_missing else ""
        )
        return [
            f"ClusterCI({self._label()}; estimand={self.estimand}, method={self.method})",
            f"  estimate {fmt.number(self.estimate)}  {pct} CI "
            f"{fmt.interval(self.low, self.high)}  se {fmt.number(self.se)}",
            f"  naive (iid rows) CI {fmt.interval(self.naive_low, self.naive_high)}  "
            f"widening ×{fmt.number(self.widening)}",
            f"  {fmt.count(self.n_rows, 'row')} in {fmt.count(self.n_clusters, 'cluster')} "
            f"{'of the smallest grouping ' if self.crossed else ''}({sizes}){missing}",
            f"  ICC {fmt.proportion(self.icc)}  design effect "
            f"{fmt.number(self.design_effect)}  effective n {fmt.number(self.n_eff)}",
        ]

    def _value_label(self) -> str:
        """The value axis of a plot: what is measured, and how."""
        what = self.outcome if self.outcome is not None else "outcome"
        mean = "mean of cluster means" if self.estimand == "cluster_mean" else "pooled mean"
        return f"{what}: {mean}, {self.confidence:.0%} CI"

    def _plot_title(self) -> str:
        return f"{self.outcome or 'outcome'}, clustered by {' + '.join(self.by) or 'cluster'}"

    def plot(self, *, ax: Any = None, values: bool = False, percent: bool | None = None) -> Any:
        """Forest plot: the clustered interval (thick) above the naive one (thin, faint).

        matplotlib is an optional extra (``pip install "clusterstats[plot]"``), imported only
        when a plot is drawn; without it the call raises an ImportError that says what to
        install. The other plots (``GroupedResults.plot``, ``Report.plot``, ``Plan.plot``,
        ``PairedDelta.plot``, ``Comparison.plot``) work the same way.

        Parameters
        ----------
        {plot_ax}
        values : bool, default False
            Print the estimate above its interval.
        percent : bool, optional
            Show the values as percentages. By default they are when the estimate and every
            bound lie in [0, 1] (a pass rate).

        {plot_returns}

        {plot_examples_head}
        >>> import clusterstats
        >>> df = clusterstats.load_demo_data()
        >>> mixtral = df[df["model"] == "Mixtral-8x7B-Instruct-v0.1"]
        >>> ax = clusterstats.cluster_ci(mixtral, "correct", by="src").plot(values=True)
        >>> ax.get_title(), ax.get_xlabel()
        ('correct, clustered by src', 'correct: pooled mean, 95% CI')
        """

        return intervals_forest(
            [self],
            [label_of(self.outcome, self.by)],
            title=self._plot_title(),
            values=values,
            percent=percent,
            ax=ax,
        )


@dataclass(frozen=True, kw_only=True, repr=False)
class ICC(Result):
    """One-way ANOVA intraclass correlation with its confidence interval (returned by ``icc``).

    ``float(result)`` is ``result.icc``. The fields are the columns of ``to_frame()``, in this
    order.

    Attributes
    ----------
    outcome : str or None
        The outcome column (None for plain arrays).
    by : tuple of str
        The cluster column(s).
    method : str
        ``"anova"``.
    ci_method : str
        ``"searle_f"``: Searle's exact interval, for balanced clusters; ``"searle_f_n0"``: the
        same formula with ``n0`` in place of the common size, for unbalanced ones (as R's
        ``ICC::ICCest``); ``"degenerate (no within-cluster variation)"`` (every cluster
        constant, clusters differ: the interval is [1, 1]); or ``"undefined"``. The interval
        always contains the estimate.
    confidence : float
        Nominal coverage.
    icc : float
        The raw estimate ``(MSB - MSW) / (MSB + (n0 - 1) MSW)``; it can be negative.
    icc_truncated : float
        ``max(icc, 0)``: the value design effects use.
    low, high : float
        The interval.
    n_rows, n_clusters : int
        Rows and clusters used.
    cluster_size_mean : float
        Mean rows per cluster.
    n0 : float
        The ANOVA average cluster size ``(N - sum n_g^2 / N) / (G - 1)``.
    msb, msw : float
        Between- and within-cluster mean squares.
    var_between, var_within : float
        The variance components they imply: ``(MSB - MSW) / n0`` and ``MSW``.
    notes : tuple of str
        E.g. a negative estimate, an undefined ICC.
    """

    outcome: str | None = None
    by: tuple[str, ...] = ()
    method: str
    ci_method: str
    confidence: float
    icc: float
    icc_truncated: float
    low: float
    high: float
    n_rows: int
    n_clusters: int
    cluster_size_mean: float
    n0: float
    msb: float
    msw: float
    var_between: float
    var_within: float
    notes: tuple[str, ...] = ()

    _html: ClassVar[tuple[tuple[str, str], ...]] = tuple(
        (f, f) for f in ("icc", "low", "high", "ci_method", "n_rows", "n_clusters", "n0")
    )

    estimate = one_number("icc", "the intraclass correlation")

    def _lines(self) -> list[str]:
        return [
            f"ICC({label_of(self.outcome, self.by)}; method={self.method})",
            f"  icc {fmt.proportion(self.icc)}  {self.confidence:.0%} CI "
            f"{fmt.interval(self.low, self.high)} ({self.ci_method})",
            f"  {fmt.count(self.n_rows, 'row')} in {fmt.count(self.n_clusters, 'cluster')} "
            f"(mean size {fmt.size(self.cluster_size_mean)}, n0 {fmt.number(self.n0)})",
        ]

    def __float__(self) -> float:
        return float(self.icc)


@dataclass(frozen=True, kw_only=True, repr=False)
class DesignEffect(Result):
    """Design effects of clustered data, and the effective sample size they imply (returned
    by ``design_effect``).

    ``design_effect`` is the one the library reports everywhere (``ClusterCI``, ``Plan``,
    ``Report``, ``check_clustering``): the variance of the estimate that the default interval
    uses, over its variance if the rows were independent; ``n_eff`` and ``widening`` follow
    from it. The other figures carry their own names. ``float(result)`` is
    ``result.design_effect``. The fields are the columns of ``to_frame()``, in this order.

    Attributes
    ----------
    outcome : str or None
        The outcome column (None for plain arrays).
    by : tuple of str
        The cluster column(s).
    estimand : {"pooled", "cluster_mean"}
        Whose variance is inflated: the pooled mean or the mean of the cluster means.
    design_effect : float
        The variance that ``cluster_ci``'s default interval (``method``) uses ÷ the variance
        of the same rows taken as independent (``s^2 / N``; ``p (1 - p) / N`` for a binary
        outcome under ``korn_graubard_hybrid``): equal to that interval's ``design_effect``.
    method : str
        That interval's method: ``korn_graubard_hybrid`` (binary: the larger of the
        beta-binomial model's and the CR2 variance), ``bootstrap_t`` or ``cr2`` (CR2).
    linearized : float
        The CR1 (linearised) variance ÷ ``s^2 / N``: R survey's ``deff="replace"``.
    kish : float
        ``1 + (m̄ - 1) * icc_truncated`` (Kish 1965), at the mean cluster size ``m̄``; NaN for
        ``"cluster_mean"``, which it does not describe. A model, not a measurement.
    unequal_sizes : float
        The exchangeable-correlation value for the observed sizes:
        ``1 + icc_truncated (sum n_g^2 / N - 1)`` for the pooled mean (Eldridge, Ashby &
        Kerry 2006), ``N/G^2 sum (1 + (n_g - 1) icc_truncated) / n_g`` for the mean of the
        cluster means. A model too: below ``design_effect`` when the large clusters differ
        more than the ANOVA ICC says.
    icc, icc_truncated : float
        The raw and the truncated (``max(icc, 0)``) ANOVA ICC.
    n_eff : float
        ``n_rows / design_effect``: the independent rows the data are worth.
    widening : float
        ``sqrt(design_effect)``: the ratio of the default interval's standard error to the
        naive one.
    n_rows, n_clusters : int
        Rows and clusters used.
    cluster_size_mean : float
        Mean rows per cluster.
    notes : tuple of str
        E.g. an undefined design effect.
    """

    outcome: str | None = None
    by: tuple[str, ...] = ()
    estimand: str
    design_effect: float
    method: str
    linearized: float
    kish: float
    unequal_sizes: float
    icc: float
    icc_truncated: float
    n_eff: float
    widening: float
    n_rows: int
    n_clusters: int
    cluster_size_mean: float
    notes: tuple[str, ...] = ()

    _html: ClassVar[tuple[tuple[str, str], ...]] = tuple(
        (f, f.replace("_", " "))
        for f in (
            "design_effect",
            "linearized",
            "kish",
            "unequal_sizes",
            "icc",
            "n_eff",
            "widening",
            "n_rows",
            "n_clusters",
        )
    )

    estimate = one_number("design_effect", "the design effect")

    def _lines(self) -> list[str]:
        return [
            f"DesignEffect({label_of(self.outcome, self.by)}; estimand={self.estimand})",
            f"  design effect {fmt.number(self.design_effect)} (the {self.method} interval's)  "
            f"linearized {fmt.number(self.linearized)}  kish {fmt.number(self.kish)}  "
            f"unequal sizes {fmt.number(self.unequal_sizes)}  (icc {fmt.proportion(self.icc)})",
            f"  {fmt.count(self.n_rows, 'row')} in {fmt.count(self.n_clusters, 'cluster')} "
            f"worth {fmt.number(self.n_eff)} independent rows; standard error "
            f"×{fmt.number(self.widening)} the naive one",
        ]

    def __float__(self) -> float:
        return float(self.design_effect)

    @property
    def empirical(self) -> float:
        """The former name of ``linearized`` (the CR1 design effect), kept for code written
        before ``design_effect`` became the one the library reports; it warns."""
        warnings.warn(
            "DesignEffect.empirical is now named linearized (R survey's deff='replace'); "
            "design_effect is the one design effect every result reports",
            DeprecationWarning,
            stacklevel=2,
        )
        return self.linearized


# -- builders: the same for every backend ----------------------------------------------------


def grouped(design: Any, results: Sequence[Any]) -> Any:
    """One result without grouping, else a :class:`GroupedResults` over the design's groups."""
    if design.over is None:
        return results[0]
    labels = design.group_labels if hasattr(design, "group_labels") else None
    if labels is None:
        labels = tuple(label for label, _ in design.groups)
    return GroupedResults(over=design.over, groups=tuple(labels), results=tuple(results))


def _size_summary(sums: Any) -> dict[str, Any]:
    counts = sums.counts
    return {
        "n_rows": sums.n_rows,
        "n_clusters": sums.n_clusters,
        "cluster_size_mean": float(counts.mean()),
    }


@dataclass(frozen=True)
class _Route:
    """What one variance design gives an interval: the core's summary, the sizes the result
    reports (of the clusters that set its df), the notes before and after the summary's
    own, fields of its design (``weights``, ``crossed``...), and whether a missing rate
    that varies across clusters is noted."""

    summary: Any
    sizes: dict[str, Any]
    before: tuple[str, ...] = ()
    after: tuple[str, ...] = ()
    fields: dict[str, Any] = field(default_factory=dict)
    varying_missing: bool = False


def _sizes(counts: np.ndarray, n_rows: int, n_clusters: int) -> dict[str, Any]:
    return {
        "n_rows": n_rows,
        "n_clusters": n_clusters,
        "cluster_size_mean": float(counts.mean()),
        "cluster_size_min": int(counts.min()),
        "cluster_size_max": int(counts.max()),
    }


def _n_empty(applied: Any, options: opt.IntervalOptions) -> int:
    """Clusters left without a row by ``missing="drop"``."""
    return int((~applied.kept).sum()) if options.missing == "drop" else 0


def _unweighted(s: Any, applied: Any, options: opt.IntervalOptions, n_empty: int) -> _Route:
    """The route of a design on the clusters' own sums (one-way or stratified): their sizes,
    and the note of the clusters ``missing="drop"`` emptied."""
    sums = applied.sums
    empty = (policy.empty_clusters_note(n_empty, sums.n_clusters, options),) if n_empty else ()
    return _Route(s, _sizes(sums.counts, sums.n_rows, sums.n_clusters), empty, varying_missing=True)


def _one_way(group: MeanGroup, design: MeanDesign, options: opt.IntervalOptions, applied: Any):
    """Clusters of one grouping: the cluster-robust interval of the pooled or cluster-mean
    estimand (the default design)."""
    n_empty = _n_empty(applied, options)
    s = design_interval(
        "one_way",
        applied.sums,
        estimand=options.estimand,
        method=options.method,
        confidence=options.confidence,
        is_binary=group.is_binary,
        icc_prior=options.icc,
        n_resamples=options.n_resamples,
        rng=options.rng.generator(),
        cap_n_eff=options.cap_n_eff,
        n_empty_clusters=n_empty if options.empty_clusters == "keep" else 0,
    )
    return _unweighted(s, applied, options, n_empty)


def _stratified(group: MeanGroup, design: MeanDesign, options: opt.IntervalOptions, applied: Any):
    """Clusters nested in strata (``strata=``): the stratified (survey) variance."""
    policy.check_lonely(applied.strata, applied.strata_labels, options.lonely)
    n_empty = _n_empty(applied, options)
    s = design_interval(
        "stratified",
        applied.sums,
        strata=applied.strata,
        estimand=options.estimand,
        method=options.method,
        confidence=options.confidence,
        is_binary=group.is_binary,
        lonely=options.lonely,
        n_resamples=options.n_resamples,
        rng=options.rng.generator(),
        cap_n_eff=options.cap_n_eff,
    )
    return _unweighted(s, applied, options, n_empty)


def _weighted(group: MeanGroup, design: MeanDesign, options: opt.IntervalOptions, applied: Any):
    """Row weights (``weights=``): the weighted (Hájek) mean of the clusters with a usable
    outcome, stratified when the design is."""
    ws, ids = group.weighted, group.weighted_ids
    if ws is None or ids is None:  # pragma: no cover - the adapter sets both with weights
        raise InvalidOptionError("weights= needs the weighted sums of the design")
    policy.check_weighted_clusters(
        ws.weighted.n_clusters, design.weights, list(design.cluster_names(ids))
    )
    strata = None
    if group.strata is not None:
        # the strata of the clusters that carry weight: zero weights can leave one alone
        used, strata = np.unique(group.strata[np.isin(group.cluster_ids, ids)], return_inverse=True)
        strata = strata.ravel()
        labels = tuple(design.strata_labels[i] for i in used)
        policy.check_lonely(strata, labels, options.lonely)
    s = design_interval(
        "weighted",
        ws,
        method=options.method,
        confidence=options.confidence,
        is_binary=group.is_binary,
        strata=strata,
        lonely=options.lonely,
        cap_n_eff=options.cap_n_eff,
    )
    # Here, not in the core: paired_delta and compare reuse the weighted summary for each
    # side and score, where the warning would repeat.
    g = ws.weighted.n_clusters
    answered = group.table.answered
    zero_weight = policy.zero_weight_note(
        int(answered.sum() - ws.rows.sum()), int((answered > 0).sum()) - g
    )
    return _Route(
        s,
        _sizes(ws.rows, int(ws.rows.sum()), g),
        (zero_weight,) if zero_weight else (),
        tuple(few_clusters_notes(g, s.method)),
        {"weights": design.weights, "weighting_design_effect": kish_effect(ws)},
    )


def _crossed(group: MeanGroup, design: MeanDesign, options: opt.IntervalOptions, applied: Any):
    """Crossed clustering (``crossed=True``): the design's clusters are the cells,
    combinations of the groupings; each cell's code in every grouping comes from the
    adapter's codes, or from its label when the adapter has none."""
    cells = group.cluster_ids[applied.kept]
    if design.cluster_groupings is not None:
        memberships = [dense_codes(codes[cells]) for codes in design.cluster_groupings]
    else:
        memberships = memberships_of(design.cluster_names(cells), len(design.by))
    s = design_interval(
        "crossed",
        applied.sums,
        members=memberships,
        names=design.by,
        method=options.method,
        confidence=options.confidence,
        is_binary=group.is_binary,
        cap_n_eff=options.cap_n_eff,
    )
    # the grouping with the fewest clusters sets the df: its counts describe the result
    fewest = min(memberships, key=lambda codes: int(codes.max()))  # codes are 0 .. G - 1
    smallest = np.bincount(fewest, weights=applied.sums.counts)
    return _Route(s, _sizes(smallest, applied.sums.n_rows, len(smallest)), fields={"crossed": True})


#: What each variance design (``stats._variance``) adds to a ``ClusterCI``, by its name.
_ROUTES = {
    "one_way": _one_way,
    "stratified": _stratified,
    "weighted": _weighted,
    "crossed": _crossed,
}


def _interval_of(group: MeanGroup, design: MeanDesign, options: opt.IntervalOptions) -> ClusterCI:
    """One ``ClusterCI``: the group's clusters after the missing-data policy, through the
    variance design of the options, with the fields every design shares."""
    applied = policy.apply_missing(group, design, options.missing)
    name = variance_design(
        crossed=bool(options.crossed),
        weighted=design.weights is not None,
        stratified=applied.strata is not None,
    )
    with policy.core_errors():  # the checks of each route (lonely strata, weights)
        route = _ROUTES[name](group, design, options, applied)
    notes = [*route.before, *route.summary.notes, *route.after]
    if applied.n_missing:
        notes.insert(
            0, policy.missing_note(applied.n_missing, applied.n_missing_clusters, options.missing)
        )
        if route.varying_missing and applied.missing_p_value < 0.05:
            notes.insert(
                1, policy.varying_missingness_note(applied.missing_p_value, options.missing)
            )
    # cluster_ci tests no null value, so the summary's p_value (for paired_delta) is dropped.
    fields = {k: v for k, v in route.summary._asdict().items() if k != "p_value"}
    return ClusterCI(
        **{**fields, "notes": tuple(notes)},
        confidence=options.confidence,
        estimand=options.estimand,
        **route.sizes,
        n_missing=applied.n_missing,
        n_missing_clusters=applied.n_missing_clusters,
        outcome=design.outcome,
        by=design.by,
        **route.fields,
    )


def _ipw_interval_of(
    group: MeanGroup, index: int, design: MeanDesign, options: opt.IntervalOptions
) -> ClusterCI:
    """One ``ClusterCI`` by inverse-probability weighting (``missing="ipw"``)."""

    rows = None if design.responses is None else design.responses[index]
    fitted = policy.ipw_fit(
        group,
        design,
        rows,
        propensity=options.propensity,
        min_propensity=options.min_propensity,
    )
    fit, observed = fitted.fit, fitted.observed
    n_rows = observed.n_rows
    with policy.core_errors():
        result = mi.ipw_interval(
            fit,
            method=options.method,
            confidence=options.confidence,
            is_binary=group.is_binary,
            n_rows=n_rows,
            cap_n_eff=options.cap_n_eff,
        )
    notes = [
        f"inverse-probability weighted (Hájek) with {fitted.described}; the variance accounts "
        "for the estimated propensities"
    ]
    if fit.n_lost_clusters:
        lost = fitted.lost_clusters
        shown = ", ".join(map(repr, lost[:5])) + (", ..." if len(lost) > 5 else "")
        notes.append(
            f"{fit.n_lost_clusters} clusters had no usable response at all ({shown}): nothing "
            "observed can stand in for them, so the estimate covers the other clusters"
        )
    if fit.truncated_weight_share > 0:
        notes.append(
            f"propensities below {options.min_propensity} were raised to it: "
            f"{fit.truncated_weight_share:.1%} of the total weight was cut"
        )
    notes.append(f"effective n of the weights (Kish): {fit.kish_n:.1f} responding rows")
    notes.extend(result.notes)
    if fit.n_clusters < iv.FEW_CLUSTERS:
        message = (
            f"only {fit.n_clusters} clusters: the {result.method} interval is itself "
            f"uncertain with fewer than {iv.FEW_CLUSTERS} clusters"
        )
        warn(message, FewClustersWarning)
        notes.append(message)
    naive = interval(
        observed,
        estimand="pooled",
        method="naive",
        confidence=options.confidence,
        is_binary=group.is_binary,
    )
    iid = iid_variance(observed)
    deff = fit.variance / iid if iid > 0 else math.nan
    widths = (naive.high - naive.low, result.high - result.low)
    return ClusterCI(
        estimate=result.estimate,
        se=result.se,
        low=result.low,
        high=result.high,
        confidence=options.confidence,
        method=result.method,
        estimand="pooled",
        df=result.df,
        n_rows=n_rows,
        n_clusters=fit.n_clusters,
        cluster_size_mean=float(observed.counts.mean()),
        cluster_size_min=int(observed.counts.min()),
        cluster_size_max=int(observed.counts.max()),
        icc=icc_anova(observed).icc,
        design_effect=deff,
        n_eff=n_rows / deff if deff > 0 else math.nan,
        naive_low=naive.low,
        naive_high=naive.high,
        widening=widths[1] / widths[0] if widths[0] > 0 else math.nan,
        n_missing=fitted.n_missing,
        n_missing_clusters=fitted.n_missing_clusters,
        outcome=design.outcome,
        by=design.by,
        notes=tuple(notes),
    )


@policy.warns_once
def build_cluster_ci(
    design: MeanDesign, options: opt.IntervalOptions
) -> ClusterCI | GroupedResults[ClusterCI]:
    """``cluster_ci`` on a design: one interval per group."""
    for group in design.groups:
        policy.check_binary_method(options.method, group.is_binary, group.label, design.over)
    if len(design.by) > 1 and not options.crossed:
        policy.warn_singleton_combinations(design)
    results = []
    for index, group in enumerate(design.groups):
        with policy.naming_group(group.label, design.over):
            if options.missing == "ipw":
                results.append(_ipw_interval_of(group, index, design, options))
            else:
                results.append(_interval_of(group, design, options))
    return grouped(design, results)


@policy.warns_once
def build_icc(design: MeanDesign, *, confidence: float, missing: str) -> ICC | GroupedResults:
    """``icc`` on a design."""
    results = []
    for group in design.groups:
        with policy.naming_group(group.label, design.over):
            sums = policy.apply_missing(group, design, missing).sums
            s = summarize_icc(sums, confidence=confidence)
        results.append(
            ICC(
                **s._asdict(),
                confidence=confidence,
                method="anova",
                **_size_summary(sums),
                outcome=design.outcome,
                by=design.by,
            )
        )
    return grouped(design, results)


@policy.warns_once
def build_design_effect(
    design: MeanDesign, *, estimand: str, missing: str
) -> DesignEffect | GroupedResults:
    """``design_effect`` on a design."""
    results = []
    for group in design.groups:
        with policy.naming_group(group.label, design.over):
            sums = policy.apply_missing(group, design, missing).sums
            s = summarize_design_effect(sums, estimand=estimand, is_binary=group.is_binary)
        results.append(
            DesignEffect(
                **s._asdict(),
                estimand=estimand,
                **_size_summary(sums),
                outcome=design.outcome,
                by=design.by,
            )
        )
    return grouped(design, results)


# -- the public functions --------------------------------------------------------------------


def cluster_ci(
    data: Any,
    outcome: Any,
    by: opt.By | None = None,
    *,
    estimand: opt.Estimand | Literal["stratum_mean"] = "pooled",
    method: Method = "auto",
    confidence: float = 0.95,
    over: Hashable | Sequence[Hashable] | None = None,
    missing: opt.MissingOrIPW = "drop",
    responded: Hashable | None = None,
    propensity: opt.Propensity = "cluster",
    covariates: Sequence[Hashable] | None = None,
    min_propensity: float = 0.05,
    strata: Hashable | None = None,
    nest: bool = False,
    lonely: opt.Lonely = "fail",
    icc: float | None = None,
    n_resamples: int = 9999,
    rng: int | np.random.Generator | None = None,
    case: Hashable = "case",
    rerun: Hashable = "rerun",
    cap_n_eff: bool = True,
    empty_clusters: opt.EmptyClusters = "drop",
    crossed: bool = False,
    weights: Hashable | None = None,
) -> ClusterCI | GroupedResults[ClusterCI]:
    """Confidence interval for a mean (pass rate or score) of clustered rows.

    Parameters
    ----------
    data : pandas.DataFrame, xarray.Dataset, dask DataFrame, or None
        One row per graded example (a DataFrame, pandas or dask); a Dataset laid out as
        ``(case, rerun)`` (each variable's runs of a case along ``rerun``, other dims such
        as ``model`` giving one result each); or None, with ``outcome`` and ``by`` array-likes
        of equal length.
    outcome : column label (or array-like)
        A binary (0/1, bool) or continuous outcome; a variable of a Dataset. Missing values
        are handled by ``missing``.
    by : column label, list of labels (or array-like), optional
        The cluster; several columns are combined (a cluster is one combination of values).
        Required for frames; for a Dataset, a coordinate along ``case`` (default: each case is
        a cluster of its runs).
    estimand : {"pooled", "cluster_mean", "stratum_mean"}
        ``"pooled"`` (default): share over all rows, ``sum(y) / n``. ``"cluster_mean"``: mean
        of the cluster means, each cluster counting once. ``"stratum_mean"`` (with
        ``strata``): mean of the stratum means ("macro" accuracy). Always named in the result.
    method : str
        ``"auto"`` (default): ``"korn_graubard_hybrid"`` for a binary outcome;
        ``"bootstrap_t"`` otherwise, or ``"cr2"`` above 2,000 clusters, where the skewness
        the bootstrap corrects has faded (the rule the coverage studies, on simulated grids
        and on real benchmarks drawn as populations, support; its draws come from ``rng``, a
        fixed seed when not given, so the default is reproducible).
        ``"naive"`` (iid rows, for comparison), ``"cr1"`` (cluster-robust, ``t(G-1)``),
        ``"cr2"`` (Bell & McCaffrey 2002, Satterthwaite df), ``"cr2_ik"`` (CR2 with the df
        of uneven cluster sizes: Satterthwaite under a random-effects working model, Imbens
        & Kolesár 2016), ``"cr3"`` and ``"cr3_ik"`` (the leave-one-cluster-out jackknife
        variance, clubSandwich's CR3, with its Satterthwaite df, or the df of uneven sizes),
        ``"wilson"`` (Wilson on the effective n), ``"korn_graubard"`` (Korn
        & Graubard 1998: Clopper–Pearson on the df-adjusted effective n),
        ``"korn_graubard_guarded"`` (the same with a variance floor from the ICC model and
        df from the clusters that carry the variance), ``"korn_graubard_inverted"`` (the
        Korn–Graubard test inverted with the ICC re-estimated by beta-binomial maximum
        likelihood under each candidate rate, mid-p tails), ``"korn_graubard_hybrid"`` (that
        test with a design effect never below the CR2 one, stretched for the df of uneven
        sizes), ``"bootstrap"``/``"bootstrap_bca"`` and ``"bootstrap_percentile"`` (cluster
        bootstrap: whole clusters are resampled), ``"bootstrap_t"`` (the studentized cluster
        bootstrap, Hall 1992, whose bounds are never inside ``"cr3_ik"``'s: for skewed and
        zero-inflated scores), ``"score"`` (the cluster-robust t test with its CR1 variance
        evaluated under each candidate value, inverted: Saha, Miller & Wang 2016; Fieller
        1954 for the pooled ratio; it leans towards the side large clusters pull, but has
        no model to lean on when a rare outcome is seen in a few clusters), and the unions
        ``"korn_graubard_hybrid_or_score"`` and ``"bootstrap_t_or_score"`` (the lower of the
        two lower bounds, the higher of the two upper bounds; see the real-data coverage
        study). ``"wilson"`` and the ``"korn_graubard*"`` methods need a binary outcome.
    confidence : float
        Nominal coverage, strictly between 0 and 1.
    over : column label or list of labels, optional
        One interval per value of this column (e.g. ``"model"``), in sorted label order, or
        per combination of several columns that occurs (labelled by tuples, e.g.
        ``over=["model", "task"]``). A Dataset's extra dims play this part.
    missing : {"drop", "fail", "pass", "raise", "ipw"}
        What a missing outcome (NaN, or ``responded`` False) means. ``"drop"`` (complete
        case): those rows are left out and counted in the result, with a note pointing to
        ``missing_report`` when the missing rate varies across clusters. ``"fail"`` /
        ``"pass"``: they count as 0 / 1 (binary outcomes only: the lower and upper bounds of
        a pass rate). ``"raise"``: ``MissingOutcomeError``. ``"ipw"``: inverse-probability
        weighting, the normalised (Hájek) mean of the responses weighted by ``1/π``, with
        response propensities ``π`` that include the cluster, and a stacked sandwich variance
        that accounts for their estimation (method ``"ipw_korn_graubard"`` for a binary
        outcome, ``"ipw_t"`` for scores). ``"ipw"`` estimates the pooled mean, takes
        ``method`` ``"auto"``, ``"cr1"``, ``"wilson"`` or ``"korn_graubard"``, and cannot be
        combined with ``strata`` yet.
    responded : column label, optional
        The response indicator (bool, or 0/1 integers; True = a usable response). Where it is
        False the outcome is a placeholder and is ignored; any other dtype raises
        ``InvalidOptionError``. For a Dataset, a variable with the outcome's dims (NaN where
        no run happened).
    propensity : {"cluster", "shrunk", "logistic"}
        With ``missing="ipw"``. ``"cluster"`` (default): each cluster's own response rate
        (cluster fixed effects); the Hájek mean is then ``sum(n_g ȳ_g,obs) / sum(n_g)``, each
        cluster's responses standing for all its rows, and the propensity correction to the
        variance is exactly zero. ``"shrunk"``: the rates shrunk towards the overall rate
        (empirical Bayes): steadier weights, but pulled towards complete case when
        missingness depends on the cluster. ``"logistic"``: a logistic regression with one
        intercept per cluster plus ``covariates``.
    covariates : list of column labels, optional
        With ``propensity="logistic"``: numeric columns (for a Dataset, coordinates along
        ``case``) of the response model; missing values in them raise
        ``InvalidOptionError``.
    min_propensity : float
        With ``missing="ipw"``: propensities are floored at this value (default 0.05, so no
        weight exceeds 20); the share of weight cut is reported in ``notes``.
    strata : column label, optional
        A stratified design: clusters are independent within fixed strata (e.g. benchmark
        categories), strata independent. The variance is R survey's linearised
        ``svymean(~y, svydesign(ids=~by, strata=~strata))`` with ``clusters - strata`` df
        (Lumley 2010). ``method`` may then be ``"auto"`` (binary: ``korn_graubard_guarded``;
        scores: ``cr1``), ``"naive"``, ``"cr1"``, ``"wilson"``, ``"korn_graubard"``,
        ``"korn_graubard_guarded"`` or ``"bootstrap"`` (the Rao–Wu rescaled bootstrap within
        strata, percentile), and ``estimand`` may be ``"stratum_mean"``.
    nest : bool
        With ``strata``: cluster ids are local to their stratum (R's ``nest=TRUE``); without
        it, an id found in two strata raises ``InvalidClusterError``.
    lonely : {"fail", "adjust", "average", "certainty"}
        With ``strata``: a stratum with a single cluster cannot estimate its own variance.
        ``"fail"`` (default) raises ``TooFewClustersError`` naming those strata; the others
        do what R survey's ``survey.lonely.psu`` options of those names do.
    icc : float, optional
        An ICC between 0 and 1, e.g. from a pilot. It is used only when the data have zero
        variance (e.g. no failures), to set the effective n of the fallback interval to
        ``n / (1 + (m̄ - 1) icc)`` instead of the number of clusters.
        ``korn_graubard_inverted`` and ``korn_graubard_hybrid`` need no fallback: they give
        such data their own interval, unless ``icc`` is passed, which selects the fallback.
    n_resamples : int
        Bootstrap replicates: at least ``2 / (1 - confidence)`` (40 at 95%) for the bootstrap
        methods, so that each tail holds a replicate.
    rng : int, numpy.random.Generator or None
        Seed or generator for the bootstrap; None is the fixed seed
        ``clusterstats.core.bootstrap.DEFAULT_SEED`` (0), so that a bootstrap interval is the
        same on every call and every backend. With groups, an int seed seeds each group's
        bootstrap alike, so each group's interval equals the one computed for that group alone.
    case, rerun : dim names
        For a Dataset: its case and rerun dims.
    cap_n_eff : bool
        The Korn–Graubard and Wilson intervals rest on a design-based effective n. When the
        design effect is below 1 that n exceeds the rows; by default it is capped at the rows
        (an interval never narrower than the rows would give if independent), and a note
        says so. ``cap_n_eff=False`` is R survey's ``svyciprop`` convention, which does not
        cap (Korn & Graubard 1998).
    empty_clusters : {"drop", "keep"}
        A cluster whose every outcome is missing (``missing="drop"``): ``"drop"`` leaves it
        out of the design (``G`` counts the clusters with data, a note says how many were
        dropped); ``"keep"`` keeps it as a sampled cluster with no rows, R survey's
        ``svymean(na.rm=TRUE)`` convention, which changes the CR1 factor from ``G/(G-1)`` to
        ``G'/(G'-1)`` over all sampled clusters (methods ``cr1``, ``korn_graubard`` and
        ``wilson``; the degrees of freedom still count the clusters with data, as survey's).
    crossed : bool
        ``False`` (default): several ``by`` columns make one cluster of their combination.
        ``True``: each ``by`` column is a grouping of its own, crossed with the others
        (question × template, item × judge), and the variance of the pooled mean is
        Cameron, Gelbach & Miller's (2011) multi-way sum ``V_a + V_b - V_ab`` (with three
        or more groupings, the inclusion–exclusion over every set of them), each term CR1
        with its own ``G/(G-1)``, as R ``sandwich::vcovCL(cluster = ~a + b, multi0 =
        FALSE)``; the df are ``min(G_j) - 1``. Methods ``auto`` (``korn_graubard`` for a
        binary outcome, ``cr1`` otherwise), ``cr1``, ``korn_graubard``, ``wilson`` and
        ``naive``; estimand ``pooled``; not with ``strata`` or ``missing="ipw"``. A sum that
        is not positive falls back to its largest term, with a note.
    weights : column name, optional
        Non-negative weights of the rows (sampling weights, or weights to a target mix from
        ``weights_for_mix``): the estimate is the weighted (Hájek) mean ``Σ w y / Σ w`` and
        its variance the linearised cluster-robust one (Binder 1983), with and without
        ``strata``, as R survey's ``svymean(~y, svydesign(ids = ~cluster, strata = ...,
        weights = ~w))``; ``korn_graubard`` with ``cap_n_eff=False`` is its
        ``svyciprop(method = "beta")``. Methods ``auto`` (``korn_graubard`` for a binary
        outcome, ``cr1`` otherwise), ``cr1``, ``korn_graubard``, ``wilson``, ``naive``;
        estimand ``pooled``; ``missing`` ``"drop"`` or ``"raise"``; pandas, polars, pyarrow
        and dask frames, and xarray Datasets (a weight per case: a coordinate along the case
        dim). The result names the column and reports Kish's design effect of the weights
        beside the clustering one. The weights are scale-free (divided by their largest);
        rows of weight zero are left out and counted in a note, and at least two clusters
        must carry weight (``TooFewClustersError`` otherwise).

    Returns
    -------
    ClusterCI, or GroupedResults of ClusterCI over the groups.

    Raises
    ------
    ColumnNotFoundError
        A named column (or variable) is not in the data.
    InvalidOptionError
        An invalid option value, or a combination of options that does not go together.
    InvalidOutcomeError
        A non-numeric outcome, infinite values, or a binary-only method or missing policy on
        another outcome.
    MissingOutcomeError
        Missing outcomes with ``missing="raise"``.
    InvalidClusterError
        Missing cluster ids, or (with ``strata``, without ``nest``) an id in two strata.
    EmptyDataError
        No rows, or a group without a non-missing outcome.
    TooFewClustersError
        Fewer than two clusters, or a lonely stratum with ``lonely="fail"``.
    DegenerateDataError
        A continuous outcome with no variation at all.
    TypeError
        ``data`` is none of the inputs above.

    Warns
    -----
    FewClustersWarning
        Fewer than 20 clusters (every method but ``"naive"``; crossed, in the grouping with
        the fewest).
    SingletonClustersWarning
        Several ``by`` columns without ``crossed=True`` whose combination leaves most
        clusters with a single row.
    DegenerateDataWarning
        Zero variance (e.g. every outcome passed): a fallback interval is used and named in
        ``method`` and ``notes``.

    Examples
    --------
    >>> import pandas as pd, clusterstats
    >>> df = pd.DataFrame({"doc": [d for d in range(30) for _ in range(4)],
    ...                    "passed": [int((d * 7 + i) % 5 > 1) for d in range(30)
    ...                               for i in range(4)]})
    >>> res = clusterstats.cluster_ci(df, "passed", by="doc")
    >>> res.method, res.estimand, round(res.estimate, 3)
    ('korn_graubard_hybrid', 'pooled', 0.6)
    """
    columns = adapters.columns_of(
        data, outcome, by, over=over, responded=responded, strata=strata, weights=weights,
        covariates=covariates, layout=(case, rerun),
    )  # fmt: skip
    options = opt.interval_options(
        columns,
        estimand=estimand,
        method=method,
        confidence=confidence,
        missing=missing,
        propensity=propensity,
        min_propensity=min_propensity,
        nest=nest,
        lonely=lonely,
        icc=icc,
        n_resamples=n_resamples,
        rng=rng,
        cap_n_eff=cap_n_eff,
        empty_clusters=empty_clusters,
        crossed=crossed,
    )
    return build_cluster_ci(adapters.mean_design(data, columns, nest=options.nest), options)


def icc(
    data: Any,
    outcome: Any,
    by: opt.By | None = None,
    *,
    confidence: float = 0.95,
    over: Hashable | Sequence[Hashable] | None = None,
    missing: opt.Missing = "drop",
    responded: Hashable | None = None,
    case: Hashable = "case",
    rerun: Hashable = "rerun",
) -> ICC | GroupedResults[ICC]:
    """Intraclass correlation: the share of outcome variance that lies between clusters.

    One-way ANOVA estimator with the ``n0`` average cluster size (valid for unequal sizes and
    binary outcomes), with Searle's F interval (Searle 1971; exact for balanced clusters;
    with ``n0`` in place of the common size for unbalanced ones, as R's ``ICC::ICCest``).
    The raw estimate can be negative (a small negative value means no detectable
    clustering); ``icc_truncated`` is ``max(icc, 0)``.

    Parameters
    ----------
    data : pandas.DataFrame, xarray.Dataset, dask DataFrame, or None
        As in ``cluster_ci``.
    outcome : column label (or array-like)
        Binary or continuous outcome.
    by : column label, list of labels (or array-like), optional
        The cluster (for a Dataset, a coordinate along ``case``; default: the cases).
    confidence : float
        Coverage of the interval.
    over : column label or list of labels, optional
        One result per value of this column, or per combination of several columns.
    missing : {"drop", "fail", "pass", "raise"}
        As in ``cluster_ci``.
    responded : column label, optional
        Explicit response indicator, as in ``cluster_ci``.
    case, rerun : dim names
        For a Dataset: its case and rerun dims.

    Returns
    -------
    ICC, or GroupedResults of ICC.

    Warns
    -----
    DegenerateDataWarning
        The ICC is undefined (all outcomes equal, or every cluster a single row): its fields
        are NaN.

    Examples
    --------
    >>> import pandas as pd, clusterstats
    >>> df = pd.DataFrame({"g": [1, 1, 2, 2, 3, 3], "y": [1.0, 1.2, 2.0, 2.2, 3.1, 2.9]})
    >>> round(clusterstats.icc(df, "y", by="g").icc, 3)
    0.978
    """
    level = opt.check_confidence(confidence)
    opt.check_choice("missing", missing, opt.MISSING)
    columns = adapters.columns_of(
        data, outcome, by, over=over, responded=responded, layout=(case, rerun)
    )
    return build_icc(adapters.mean_design(data, columns), confidence=level, missing=missing)


def design_effect(
    data: Any,
    outcome: Any,
    by: opt.By | None = None,
    *,
    estimand: opt.Estimand = "pooled",
    over: Hashable | Sequence[Hashable] | None = None,
    missing: opt.Missing = "drop",
    responded: Hashable | None = None,
    case: Hashable = "case",
    rerun: Hashable = "rerun",
) -> DesignEffect | GroupedResults[DesignEffect]:
    """Design effect of clustering: how much it inflates the variance of the mean.

    Reports ``design_effect``, the variance inflation of the interval ``cluster_ci`` gives by
    default (the same number as its ``design_effect``), with the effective n and the
    standard-error ratio ``sqrt(design_effect)`` that follow from it; beside it, under their
    own names, the linearised one (CR1 variance ÷ iid variance, R survey's
    ``deff="replace"``), Kish's ``1 + (m̄ - 1) ρ̂`` (Kish 1965) and the unequal-size value
    ``1 + ρ̂ (Σn²/N - 1)``.

    Parameters
    ----------
    data : pandas.DataFrame, xarray.Dataset, dask DataFrame, or None
        As in ``cluster_ci``.
    outcome : column label (or array-like)
        Binary or continuous outcome.
    by : column label, list of labels (or array-like), optional
        The cluster (for a Dataset, a coordinate along ``case``; default: the cases).
    estimand : {"pooled", "cluster_mean"}
        Whose variance is inflated: the pooled mean or the mean of cluster means.
    over : column label or list of labels, optional
        One result per value of this column, or per combination of several columns.
    missing : {"drop", "fail", "pass", "raise"}
        As in ``cluster_ci``.
    responded : column label, optional
        Explicit response indicator, as in ``cluster_ci``.
    case, rerun : dim names
        For a Dataset: its case and rerun dims.

    Returns
    -------
    DesignEffect, or GroupedResults of DesignEffect.

    Warns
    -----
    DegenerateDataWarning
        The design effect is undefined: all outcomes equal, every cluster a single row (then
        every design effect is 1), or a zero cluster-robust variance.

    Examples
    --------
    >>> import pandas as pd, clusterstats
    >>> df = pd.DataFrame({"g": [1, 1, 2, 2, 3, 3], "y": [1.0, 1.2, 2.0, 2.2, 3.1, 2.9]})
    >>> d = clusterstats.design_effect(df, "y", by="g")

    The default for a continuous score is the studentized bootstrap, whose design effect is
    the jackknife's (CR3); with three clusters it is well above the linearized (CR1) one:

    >>> round(d.design_effect, 3), round(d.linearized, 3), round(d.n_eff, 2), d.method
    (3.689, 2.459, 1.63, 'bootstrap_t')
    """
    opt.check_choice("estimand", estimand, opt.ESTIMANDS)
    opt.check_choice("missing", missing, opt.MISSING)
    columns = adapters.columns_of(
        data, outcome, by, over=over, responded=responded, layout=(case, rerun)
    )
    return build_design_effect(
        adapters.mean_design(data, columns), estimand=estimand, missing=missing
    )
