"""Did B beat A? ``paired_delta``: the paired difference on shared clustered items.

The adapters match the items of the two sides (two frames, two columns, two Datasets);
the builder below computes the interval on the per-item differences, the same for every
backend.
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np

from clusterstats import _display as fmt
from clusterstats import _options as opt
from clusterstats import adapters
from clusterstats._design import PairedDesign, PairedItems
from clusterstats._plotting import paired_difference
from clusterstats._result import GroupedResults, Result, label_of, one_number
from clusterstats.core import intervals as iv
from clusterstats.core.crossed import crossed_variance
from clusterstats.core.grouping import cluster_sums
from clusterstats.core.missing import hajek_cluster_propensity
from clusterstats.core.paired import summarize_paired
from clusterstats.core.strata import stratified_variance
from clusterstats.core.weighted import weighted_sums
from clusterstats.errors import InvalidOptionError
from clusterstats.stats import _policies as policy
from clusterstats.stats._variance import design_interval
from clusterstats.stats.mean import grouped

__all__ = ["PairedDelta", "build_paired_delta", "paired_delta"]


@dataclass(frozen=True, kw_only=True, repr=False)
class PairedDelta(Result):
    """A paired difference ``A - B`` between two sets of results on the same clustered items
    (returned by ``paired_delta``).

    The fields are the columns of ``to_frame()``, in this order.

    Attributes
    ----------
    label_a, label_b : str
        Names of the two sides.
    outcome : str or None
        What was compared (None for the two-column layout).
    by : tuple of str
        The cluster column(s).
    estimand : {"pooled", "cluster_mean"}
        ``"pooled"``: every item counts once; ``"cluster_mean"``: every cluster counts once.
    method : str
        The interval method actually used (``"auto"`` resolved; with strata
        ``"stratified_cr1"`` or ``"stratified_bootstrap_percentile"``; ``"ipw_t"`` with
        ``missing="ipw"``; ``"discordance_bound_fallback"`` when the sides agree on every
        item).
    confidence : float
        Nominal coverage.
    delta : float
        The difference of the two sides' estimates.
    se : float
        Its standard error.
    low, high : float
        The interval: cluster-robust on the per-item differences, or a paired cluster
        bootstrap.
    df : float
        Degrees of freedom of the reference t (NaN for the bootstraps; for ``cr2_ik`` and
        ``cr3_ik``, the df of uneven cluster sizes).
    p_value : float
        Two-sided test of no difference.
    test : str
        The test behind ``p_value``: ``"cr1_t"``, ``"cr2_t"``, ``"cr2_ik_t"``, ``"cr3_t"``
        or ``"cr3_ik_t"``, the cluster-robust t test of the method's own variance and df (the
        percentile, BCa and naive methods report the jackknife test with the df of uneven
        sizes, ``"cr3_ik_t"``);
        ``"bootstrap_t"``: the larger of that test's and the bootstrap-t p-value, so that
        ``p_value < 1 - confidence`` exactly when the interval excludes 0 (up to one
        replicate); ``"bootstrap_t_or_score"``: the largest of those and the score test's;
        ``"score_t"``: the cluster-robust t test with its variance under the null, which the
        ``"score"`` interval inverts;
        ``"stratified_t"`` with strata, ``"ipw_t"`` with ``missing="ipw"``.
    mean_a, mean_b : float
        Each side's estimate on the matched items.
    se_unpaired : float
        What pairing bought: the standard error if the two sides were independent samples
        (each still clustered).
    correlation : float
        The correlation of the two sides' per-item values.
    naive_low, naive_high : float
        The paired interval that ignores clusters (t on the per-item differences).
    icc : float
        ICC of the per-item differences.
    mcnemar_a_only, mcnemar_b_only : int or None
        Discordant items (A passed and B failed; B passed and A failed), for binary items
        with one run on each side (else None).
    mcnemar_statistic, mcnemar_p_value, mcnemar_exact_p_value : float
        McNemar's test, chi-square and exact binomial; it ignores clusters.
    clustered_mcnemar_statistic, clustered_mcnemar_p_value : float
        Obuchowski's (1998) clustered McNemar test.
    rerun_variance_share : float
        The share of the per-item differences' variance that rerun noise contributes
        (Miller 2024); NaN without reruns.
    n_items : int
        Matched items.
    n_clusters : int
        Their clusters.
    n_dropped_a, n_dropped_b : int
        Items on one side only, left out (``how="inner"``).
    n_missing_items : int
        Items left out (or handled) for a missing outcome.
    max_runs : int
        The most runs averaged into one item.
    n_resamples : int or None
        Bootstrap replicates, for bootstrap methods.
    notes : tuple of str
        Everything a reader should know.
    crossed : bool
        Whether ``by`` names crossed groupings (``crossed=True``): the interval then comes
        from the multi-way variance of the per-item differences, and ``n_clusters`` is the
        smallest grouping's.
    weights : str or None
        The weight column of a weighted difference (``weights=``), else None; ``delta``,
        ``mean_a`` and ``mean_b`` are then weighted means (``correlation`` is not).
    """

    label_a: str = "A"
    label_b: str = "B"
    outcome: str | None = None
    by: tuple[str, ...] = ()
    estimand: str
    method: str
    confidence: float
    delta: float
    se: float
    low: float
    high: float
    df: float
    p_value: float
    test: str
    mean_a: float
    mean_b: float
    se_unpaired: float
    correlation: float
    naive_low: float
    naive_high: float
    icc: float
    mcnemar_a_only: int | None
    mcnemar_b_only: int | None
    mcnemar_statistic: float
    mcnemar_p_value: float
    mcnemar_exact_p_value: float
    clustered_mcnemar_statistic: float
    clustered_mcnemar_p_value: float
    rerun_variance_share: float
    n_items: int
    n_clusters: int
    n_dropped_a: int = 0
    n_dropped_b: int = 0
    n_missing_items: int = 0
    max_runs: int = 1
    n_resamples: int | None = None
    notes: tuple[str, ...] = ()
    crossed: bool = False
    weights: str | None = None

    _html: ClassVar[tuple[tuple[str, str], ...]] = tuple(
        (f, f)
        for f in (
            "delta",
            "low",
            "high",
            "p_value",
            "mean_a",
            "mean_b",
            "se",
            "se_unpaired",
            "correlation",
            "n_items",
            "n_clusters",
        )
    )

    estimate = one_number("delta", "the paired difference, A − B")

    def _label(self) -> str:
        if self.crossed:
            text = f"{self.outcome or 'outcome'} by {' × '.join(self.by)} (crossed)"
        else:
            text = label_of(self.outcome, self.by)
        return text if self.weights is None else f"{text}, weighted by {self.weights}"

    def plot(
        self, *, margin: float | None = None, ax: Any = None, percent: bool | None = None
    ) -> Any:
        """The paired difference: its clustered interval above the naive one (items taken
        as independent), zero, and a gate's margin when given (needs matplotlib, as
        ``ClusterCI.plot``).

        Parameters
        ----------
        margin : float, optional
            A gate's margin (``gate(..., margin=...)``), drawn as dashed lines at ±margin:
            the difference is decided when its interval clears them.
        {plot_ax}
        percent : bool, optional
            Show the difference in percentage points. By default it is when the difference
            and its bounds lie in [-1, 1] (a difference of pass rates).

        {plot_returns}

        {plot_examples_head}
        >>> import clusterstats
        >>> df = clusterstats.load_demo_data()
        >>> a = df[df["model"] == "Meta-Llama-3.1-70B-Instruct"]
        >>> b = df[df["model"] == "gemini-1.5-flash-002"]
        >>> d = clusterstats.paired_delta(a, b, "correct", by="src", on="question_id")
        >>> ax = d.plot(margin=0.02)
        >>> ax.get_xlabel()
        'difference in correct (Meta-Llama-3.1-70B-Instruct − gemini-1.5-flash-002), 95% CI'
        """
        if margin is not None and not (isinstance(margin, (int, float)) and margin >= 0):
            raise InvalidOptionError(f"margin must be a non-negative number, got {margin!r}")
        what = self.outcome or "outcome"
        pair = f"{self.label_a} − {self.label_b}"
        return paired_difference(
            delta=self.delta,
            low=self.low,
            high=self.high,
            naive_low=self.naive_low,
            naive_high=self.naive_high,
            label=pair,
            xlabel=f"difference in {what} ({pair}), {self.confidence:.0%} CI",
            title=f"{what}: {pair}, paired on items, clustered by {' + '.join(self.by) or 'item'}",
            margin=None if margin is None else float(margin),
            percent=percent,
            ax=ax,
        )

    def _lines(self) -> list[str]:
        pct = f"{self.confidence:.0%}"
        lines = [
            f"PairedDelta({self.label_a} - {self.label_b}: {self._label()}; "
            f"estimand={self.estimand}, method={self.method})",
            f"  delta {fmt.number(self.delta)}  {pct} CI {fmt.interval(self.low, self.high)}  "
            f"se {fmt.number(self.se)}  p {fmt.number(self.p_value)} ({self.test})",
            f"  {self.label_a} {fmt.number(self.mean_a)}  {self.label_b} "
            f"{fmt.number(self.mean_b)}  on {fmt.count(self.n_items, 'item')} in "
            f"{fmt.count(self.n_clusters, 'cluster')}",
            f"  pairing: se {fmt.number(self.se)} paired vs {fmt.number(self.se_unpaired)} "
            f"unpaired (correlation {fmt.proportion(self.correlation)})"
            + (
                ""
                if math.isnan(self.naive_low)
                else f"; naive paired CI {fmt.interval(self.naive_low, self.naive_high)}"
            ),
        ]
        if self.mcnemar_a_only is not None:
            lines.append(
                f"  discordant items: {self.mcnemar_a_only:,} only {self.label_a}, "
                f"{self.mcnemar_b_only:,} only {self.label_b}; McNemar p "
                f"{fmt.number(self.mcnemar_p_value)}, clustered (Obuchowski) p "
                f"{fmt.number(self.clustered_mcnemar_p_value)}"
            )
        if self.max_runs > 1:
            lines.append(
                f"  up to {self.max_runs} runs per item averaged; rerun noise is "
                f"{fmt.proportion(self.rerun_variance_share)} of the differences' variance"
            )
        return lines


# -- the builder -----------------------------------------------------------------------------


def _item_fields(items: PairedItems, label_a: str, label_b: str, design: PairedDesign):
    return {
        "n_items": int(items.a.shape[0]),
        "n_dropped_a": items.n_dropped_a,
        "n_dropped_b": items.n_dropped_b,
        "n_missing_items": items.n_missing_items,
        "max_runs": items.max_runs,
        "label_a": label_a,
        "label_b": label_b,
        "outcome": design.outcome,
        "by": design.by,
    }


def _ipw_paired(
    items: PairedItems, labels: tuple[str, str], design: PairedDesign, options: opt.PairedOptions
) -> PairedDelta:
    """A ``PairedDelta`` by inverse-probability weighting of the items answered on both
    sides, with cluster response propensities and the stacked sandwich variance."""

    label_a, label_b = labels
    codes = items.codes
    g = int(codes.max()) + 1
    n_g = np.concatenate([items.cluster_items, items.lost_cluster_items])
    r_g = np.concatenate(
        [
            np.bincount(codes, minlength=g).astype(np.float64),
            np.zeros(items.lost_cluster_items.size),
        ]
    )

    def fit(values: np.ndarray):
        totals = np.concatenate(
            [
                np.bincount(codes, weights=values, minlength=g),
                np.zeros(items.lost_cluster_items.size),
            ]
        )
        return hajek_cluster_propensity(n_g, r_g, totals, shrink=False)

    diff, side_a, side_b = fit(items.a - items.b), fit(items.a), fit(items.b)
    se = math.sqrt(diff.variance)
    low, high = iv.t_interval(diff.estimate, diff.variance, diff.df, options.confidence)
    p_value = iv.t_test_p_value(diff.estimate, se, diff.df)
    a, b = items.a, items.b
    correlation = float(np.corrcoef(a, b)[0, 1]) if np.ptp(a) > 0 and np.ptp(b) > 0 else math.nan
    notes = [
        f"{items.n_missing_items} items with a missing outcome on a side were handled by "
        "inverse-probability weighting (Hájek, each cluster's rate of being answered on both "
        "sides); the variance accounts for the estimated propensities",
        f"effective n of the weights (Kish): {diff.kish_n:.1f} items",
    ]
    if diff.n_lost_clusters:
        notes.append(
            f"{diff.n_lost_clusters} clusters had no item answered on both sides: nothing "
            "observed can stand in for them"
        )
    if diff.truncated_weight_share > 0:
        notes.append(f"{diff.truncated_weight_share:.1%} of the weight was cut by the floor")
    if items.n_dropped_a or items.n_dropped_b:
        notes.append(
            f"how='inner': {items.n_dropped_a} items only in {label_a} and "
            f"{items.n_dropped_b} only in {label_b} were left out"
        )
    nan = math.nan
    return PairedDelta(
        delta=diff.estimate,
        se=se,
        low=low,
        high=high,
        df=diff.df,
        method="ipw_t",
        p_value=p_value,
        test="ipw_t" if se > 0 else "none",
        mean_a=side_a.estimate,
        mean_b=side_b.estimate,
        se_unpaired=math.sqrt(side_a.variance + side_b.variance),
        correlation=correlation,
        naive_low=nan,
        naive_high=nan,
        icc=nan,
        mcnemar_a_only=None,
        mcnemar_b_only=None,
        mcnemar_statistic=nan,
        mcnemar_p_value=nan,
        mcnemar_exact_p_value=nan,
        clustered_mcnemar_statistic=nan,
        clustered_mcnemar_p_value=nan,
        rerun_variance_share=nan,
        n_resamples=None,
        notes=tuple(notes),
        confidence=options.confidence,
        estimand="pooled",
        **_item_fields(items, label_a, label_b, design),
        n_clusters=diff.n_clusters,
    )


def _stratified(s: Any, items: PairedItems, options: opt.PairedOptions) -> Any:
    """Replace the interval, test and unpaired SE of a paired summary by their stratified
    versions (R survey's linearisation of the per-item differences)."""

    strata = items.strata
    policy.check_lonely(strata, items.strata_labels, options.lonely)
    sums = cluster_sums(items.a - items.b, items.codes)
    chosen = "cr1" if options.method == "auto" else options.method
    interval = design_interval(
        "stratified",
        sums,
        strata=strata,
        estimand=options.estimand,
        method=chosen,
        confidence=options.confidence,
        is_binary=False,
        lonely=options.lonely,
        n_resamples=options.n_resamples,
        rng=options.rng.generator(),
    )
    variance = stratified_variance(sums, strata, options.estimand, lonely=options.lonely)
    se = math.sqrt(variance.variance)
    p_value = iv.t_test_p_value(interval.estimate, se, variance.df)
    unpaired = sum(
        stratified_variance(
            cluster_sums(side, items.codes), strata, options.estimand, lonely=options.lonely
        ).variance
        for side in (items.a, items.b)
    )
    return s._replace(
        se=interval.se,
        low=interval.low,
        high=interval.high,
        df=interval.df,
        method=f"stratified_{interval.method}",
        p_value=p_value,
        test="stratified_t",
        se_unpaired=math.sqrt(unpaired),
        n_resamples=interval.n_resamples,
        notes=(*interval.notes, *(n for n in s.notes if "estimand" not in n)),
    )


def _clipped(interval: Any, items: PairedItems) -> tuple[float, float, list[str]]:
    """A difference of 0/1 outcomes lies in [-1, 1]: the bounds clipped to it, and the
    interval's notes (with one more when clipping changed them)."""
    low, high, notes = interval.low, interval.high, list(interval.notes)
    if items.single_run_binary and (low < -1.0 or high > 1.0):
        low, high = max(low, -1.0), min(high, 1.0)
        notes.append("the symmetric interval crossed [-1, 1] and was clipped")
    return low, high, notes


def _weighted(s: Any, items: PairedItems, options: opt.PairedOptions) -> Any:
    """Replace the estimate, interval, test and side means of a paired summary by their
    weighted (Hájek) versions: the weighted mean of the per-item differences, with its
    linearised cluster-robust variance (stratified with ``strata``)."""

    if items.weights is None:  # pragma: no cover - the adapter sets them with weights
        raise InvalidOptionError("weights= needs the items' weights")
    method = "cr1" if options.method == "auto" else options.method
    interval = design_interval(
        "weighted",
        weighted_sums(items.a - items.b, items.weights, items.codes),
        method=method,
        confidence=options.confidence,
        is_binary=False,
        strata=items.strata,
        lonely=options.lonely,
    )
    sides = [
        design_interval(
            "weighted",
            weighted_sums(side, items.weights, items.codes),
            method="cr1",
            confidence=options.confidence,
            is_binary=False,
            strata=items.strata,
            lonely=options.lonely,
        )
        for side in (items.a, items.b)
    ]
    low, high, notes = _clipped(interval, items)
    return s._replace(
        delta=interval.estimate,
        mean_a=sides[0].estimate,
        mean_b=sides[1].estimate,
        se=interval.se,
        low=low,
        high=high,
        df=interval.df,
        method=interval.method,
        p_value=iv.t_test_p_value(interval.estimate, interval.se, interval.df),
        test="weighted_t",
        se_unpaired=math.sqrt(sides[0].se ** 2 + sides[1].se ** 2),
        naive_low=interval.naive_low,
        naive_high=interval.naive_high,
        # the McNemar tests count discordant items without weights
        mcnemar_statistic=math.nan,
        mcnemar_p_value=math.nan,
        mcnemar_exact_p_value=math.nan,
        clustered_mcnemar_statistic=math.nan,
        clustered_mcnemar_p_value=math.nan,
        n_resamples=None,
        notes=(*notes, *(n for n in s.notes if "estimand" not in n)),
    )


def _crossed(s: Any, items: PairedItems, design: PairedDesign, options: opt.PairedOptions) -> Any:
    """Replace the interval, test and unpaired SE of a paired summary by their crossed
    versions: the multi-way variance of the per-item differences (Cameron, Gelbach & Miller
    2011)."""

    if items.members is None:
        raise InvalidOptionError(
            "crossed=True needs by= with two or more groupings, each a column of the items"
        )
    sums = cluster_sums(items.a - items.b, items.codes)
    interval = design_interval(
        "crossed",
        sums,
        members=items.members,
        names=design.by,
        method="cr1" if options.method == "auto" else options.method,
        confidence=options.confidence,
        is_binary=False,
    )
    low, high, notes = _clipped(interval, items)
    unpaired = sum(
        crossed_variance(cluster_sums(side, items.codes), items.members, names=design.by).variance
        for side in (items.a, items.b)
    )
    return s._replace(
        se=interval.se,
        low=low,
        high=high,
        df=interval.df,
        method=interval.method,
        p_value=iv.t_test_p_value(interval.estimate, interval.se, interval.df),
        test="crossed_t",
        se_unpaired=math.sqrt(unpaired),
        # Obuchowski's clustered McNemar test clusters by the combination: not crossed
        clustered_mcnemar_statistic=math.nan,
        clustered_mcnemar_p_value=math.nan,
        n_resamples=None,
        notes=(*notes, *(n for n in s.notes if "estimand" not in n)),
    )


def _paired_of(
    items: PairedItems, labels: tuple[str, str], design: PairedDesign, options: opt.PairedOptions
) -> PairedDelta:

    label_a, label_b = labels
    stratified = items.strata is not None
    if design.weights is not None:
        policy.check_weighted_clusters(int(items.codes.max()) + 1, design.weights, [])
    s = summarize_paired(
        items.a,
        items.b,
        items.codes,
        estimand=options.estimand,
        # with strata or crossed groupings the interval is replaced below: skip a bootstrap
        method="cr1"
        if stratified or options.crossed or design.weights is not None
        else options.method,
        confidence=options.confidence,
        single_run_binary=items.single_run_binary,
        within_a=items.within_a,
        runs_a=items.runs_a,
        within_b=items.within_b,
        runs_b=items.runs_b,
        n_resamples=options.n_resamples,
        rng=options.rng.generator(),
    )
    if stratified and design.weights is None:
        s = _stratified(s, items, options)
    if options.crossed:
        s = _crossed(s, items, design, options)
    if design.weights is not None:
        s = _weighted(s, items, options)
    notes = list(s.notes)
    if items.n_dropped_a or items.n_dropped_b:
        notes.insert(
            0,
            f"how='inner': {items.n_dropped_a} items only in {label_a} and "
            f"{items.n_dropped_b} only in {label_b} were left out",
        )
    zero_weight = policy.zero_weight_note(items.n_zero_weight_items, 0, rows="items")
    if zero_weight:
        notes.insert(0, zero_weight)
    if items.n_missing_items:
        verb = "dropped" if options.missing == "drop" else "handled"
        notes.insert(
            0, f"{items.n_missing_items} items with a missing outcome on one side were {verb}"
        )
    n_clusters = int(items.codes.max()) + 1
    if options.crossed and items.members is not None:
        n_clusters = min(int(codes.max()) + 1 for codes in items.members)
    return PairedDelta(
        **{**s._asdict(), "notes": tuple(notes)},
        confidence=options.confidence,
        estimand=options.estimand,
        **_item_fields(items, label_a, label_b, design),
        n_clusters=n_clusters,
        crossed=options.crossed,
        weights=design.weights,
    )


@policy.warns_once
def build_paired_delta(
    design: PairedDesign, options: opt.PairedOptions, *, labels: tuple[str, str] | None = None
) -> PairedDelta | GroupedResults[PairedDelta]:
    """``paired_delta`` on a design: one difference per group."""
    names = labels if labels is not None else design.default_labels
    build = _ipw_paired if options.missing == "ipw" else _paired_of
    return grouped(design, [build(items, names, design, options) for _, items in design.groups])


def paired_delta(
    data: Any,
    other: Any,
    outcome: Hashable,
    by: opt.By | None = None,
    *,
    on: Hashable | Sequence[Hashable] | None = None,
    rerun: Hashable | None = None,
    how: opt.How = "strict",
    estimand: opt.Estimand = "pooled",
    method: opt.PairedMethod = "auto",
    confidence: float = 0.95,
    missing: opt.MissingOrIPW = "drop",
    responded: Hashable | None = None,
    strata: Hashable | None = None,
    nest: bool = False,
    lonely: opt.Lonely = "fail",
    labels: tuple[str, str] | None = None,
    n_resamples: int = 9999,
    rng: int | np.random.Generator | None = None,
    case: Hashable = "case",
    crossed: bool = False,
    weights: Hashable | None = None,
    over: Hashable | Sequence[Hashable] | None = None,
) -> PairedDelta | GroupedResults[PairedDelta]:
    """Paired difference between two sets of results on the same clustered items.

    Three layouts:

    * **two frames** (``other`` is a DataFrame): ``delta = data - other`` on column
      ``outcome``, items matched on ``on`` (column(s), or the index when ``None``);
    * **two columns** (``other`` is a column label of ``data``): ``delta = data[other] -
      data[outcome]``, each row (or each ``on`` key) an item. So
      ``df.eval.paired_delta("passed_b", "passed_a", by="doc")`` is B - A;
    * **two Datasets** laid out as (case, rerun): the cases are the items, matched by their
      label; extra dims (the same on both) give one difference each.

    Several rows with one key are an error unless ``rerun`` names the column of the run id:
    then they are reruns of the item and are averaged first (the result reports the largest
    number of runs and the share of variance that rerun noise contributes; Miller 2024).
    Items are then paired; the interval is cluster-robust on the per-item differences
    (``cr2`` by default, ``cr1``, ``naive`` ignoring clusters) or a paired cluster
    bootstrap (both sides' items of a drawn cluster go together).

    Parameters
    ----------
    data : pandas.DataFrame, xarray.Dataset or dask DataFrame
        Side A (or, with ``other`` a column label, both sides).
    other : DataFrame, Dataset, or column label
        Side B: a second frame (or Dataset) of the same items, or the column of ``data``
        holding side A (the difference is then ``data[other] - data[outcome]``).
    outcome : column label
        The outcome (0/1 or a score).
    by : column label or list of labels, optional
        The cluster of each item (for Datasets a coordinate along ``case``; default: each
        case is its own cluster).
    on : column label(s), optional
        The item key of frames: a column, a list of columns, or None (the index). Two dask
        DataFrames are matched on columns, so they need ``on``. Two frames whose indexes are
        both row positions (an unnamed ``RangeIndex`` from 0, as ``read_csv`` gives) are
        never paired by them: reordered rows would pair different items, so ``on`` is then
        required (``AlignmentError``).
    rerun : column label, optional
        The run id of frames whose items have several rows (reruns): they are averaged per
        item. Without it, several rows with one key raise ``AlignmentError``.
    how : {"strict", "inner"}
        ``"strict"`` (default): an item on one side only raises ``AlignmentError`` with counts
        and examples; ``"inner"``: compare the common items, counting those dropped per side.
        An item in different clusters on the two sides, or in several clusters on one side,
        always raises ``AlignmentError``.
    over : column label or list of labels, optional
        One difference per value of this frame column (a task, a slice), or per combination
        of several columns, as ``cluster_ci``'s ``over``: a :class:`GroupedResults`. Both
        frames need the column(s); a group only the second frame has raises
        ``AlignmentError`` with ``how="strict"`` and is left out with ``how="inner"``.
        Frames only (a Dataset's extra dims are its groups already). The intervals are
        marginal, one per group; ``gate(over=...)`` adjusts them for multiplicity.
    estimand : {"pooled", "cluster_mean"}
        ``"pooled"``: every item counts once; ``"cluster_mean"``: every cluster counts once.
    method : str
        One of ``"auto"``, ``"naive"``, ``"cr1"``, ``"cr2"``, ``"cr2_ik"`` (CR2 with the df
        of uneven cluster sizes), ``"cr3"``, ``"cr3_ik"`` (the same with the jackknife
        variance), ``"bootstrap"``, ``"bootstrap_bca"``,
        ``"bootstrap_percentile"``, ``"bootstrap_t"``, ``"score"`` (the cluster-robust t
        test with its variance under each candidate difference, inverted; Saha, Miller &
        Wang 2016) and ``"bootstrap_t_or_score"`` (the union of the two intervals).
        ``"auto"`` is ``"bootstrap_t"`` up to 2,000 clusters and ``"cr2"`` above (``"cr1"``
        with strata; see the paired coverage study);
        ``"naive"`` ignores the clusters; the bootstraps are a paired cluster bootstrap (both
        sides' items of a drawn cluster go together); ``"bootstrap_t"`` is the studentized
        one, never narrower than ``"cr3_ik"`` (Hall 1992), clipped to [-1, 1] for 0/1
        outcomes. With
        strata: ``"auto"``, ``"cr1"``,
        ``"bootstrap"`` or ``"bootstrap_percentile"``.
    confidence : float
        Nominal coverage.
    missing : {"drop", "fail", "pass", "raise", "ipw"}
        As in ``cluster_ci``. With ``"drop"``, an item with no non-missing run on a side is
        dropped from the comparison and counted in ``n_missing_items``: comparing a model's
        answered questions with another model's all questions would not be paired.
        ``"fail"``/``"pass"`` count a missing outcome as 0/1 on that side. ``"ipw"`` weights
        the items answered on both sides by the inverse of their cluster's rate of being
        answered on both (Hájek), with the cluster-robust (stacked) variance and a t interval
        on ``G - 1`` df (method ``"ipw_t"``); ``estimand`` and ``method`` then stay at their
        defaults, and ``strata`` cannot be combined with it yet.
    responded : column label, optional
        A response indicator (bool; True = a usable response) in each frame (or, for two
        columns, for both): where it is False the outcome counts as missing.
    strata : column label, optional
        A stratified design, as in ``cluster_ci``: the variance of the differences is the
        stratified linearised one with ``clusters - strata`` df (method ``"cr1"``, or the
        Rao–Wu bootstrap within strata).
    nest : bool
        With ``strata``: cluster ids are local to their stratum.
    lonely : {"fail", "adjust", "average", "certainty"}
        With ``strata``: what to do with a stratum of a single cluster.
    labels : (str, str), optional
        Names of the two sides in the output. By default the data's own: the two column
        names when ``other`` is a column; for two tables, the values of the first of the
        columns ``model``, ``model_name``, ``system``, ``condition``, ``arm``, ``variant``,
        ``agent``, ``checkpoint``, ``config`` or ``run`` (of a Dataset, a scalar
        coordinate so named) that holds one value on each side, different on the two;
        else "A" and "B".
    n_resamples : int
        Bootstrap replicates.
    rng : int, numpy.random.Generator or None
        Seed or generator for the bootstrap (None: a fixed default seed, as in ``cluster_ci``).
    case : dim name
        For Datasets: the case dim.
    crossed : bool
        The ``by`` columns are crossed groupings (question × template), each counted on its
        own, rather than one cluster made of their combination: the interval is the t
        interval (``cr1``, ``min(G_j) - 1`` df) on the multi-way variance of the per-item
        differences (Cameron, Gelbach & Miller 2011), as in ``cluster_ci(crossed=True)``;
        methods ``auto`` (= ``cr1``), ``cr1`` and ``naive``; not with ``strata`` or
        ``missing="ipw"``.
    weights : column name, optional
        A weight per item (the column of ``data``; an item's rows, its reruns, must share
        it): the weighted (Hájek) mean of the per-item differences, with its linearised
        cluster-robust variance (stratified with ``strata``), as in ``cluster_ci``'s
        ``weights``; methods ``auto`` (= ``cr1``), ``cr1`` and ``naive``; the McNemar
        tests, which count items without weights, are not given. Items of weight zero are
        left out and counted in a note; at least two clusters must carry weight. pandas,
        polars, pyarrow and dask frames.

    Returns
    -------
    PairedDelta, or GroupedResults of PairedDelta for Datasets with extra dims.

    Raises
    ------
    AlignmentError
        The items cannot be paired: items on one side only (``how="strict"``), an item in
        different clusters, or several rows per key without ``rerun``.
    DimensionError
        Two Datasets with different extra dims, or without the case dim.
    InvalidOptionError
        An invalid option value or combination.
    TypeError
        ``data`` is not a DataFrame or a Dataset.

    Warns
    -----
    FewClustersWarning
        Fewer than 20 clusters.
    DegenerateDataWarning
        The two sides agree on every item: the interval bounds the share of discordant items
        (``"discordance_bound_fallback"``).

    Examples
    --------
    >>> import pandas as pd, clusterstats
    >>> df = pd.DataFrame({"doc": [d for d in range(24) for _ in range(3)],
    ...                    "new": [int((d + i) % 4 != 0) for d in range(24) for i in range(3)],
    ...                    "old": [int((d + i) % 3 != 0) for d in range(24) for i in range(3)]})
    >>> d = df.eval.paired_delta("new", "old", by="doc")
    >>> d.label_a, d.label_b, round(d.delta, 4), d.method
    ('new', 'old', 0.0833, 'bootstrap_t')
    """
    columns = adapters.columns_of(
        data, outcome, by, on=on, rerun=rerun, responded=responded, strata=strata,
        weights=weights, over=over, layout=(case, "rerun"),
    )  # fmt: skip
    options = opt.paired_options(
        columns,
        how=how,
        estimand=estimand,
        method=method,
        confidence=confidence,
        missing=missing,
        nest=nest,
        lonely=lonely,
        n_resamples=n_resamples,
        rng=rng,
        crossed=crossed,
    )
    labels = opt.check_side_labels(labels)
    design = matched_design(data, other, columns, options, labels=labels)
    return build_paired_delta(design, options, labels=labels)


def matched_design(
    data: Any,
    other: Any,
    columns: Any,
    options: opt.PairedOptions,
    *,
    labels: tuple[str, str] | None = None,
    arrivals: bool = False,
) -> PairedDesign:
    """The design ``paired_delta`` reduces two sets of results to for ``options`` (also the
    gate's and the paired pilot plan's; ``arrivals`` for a watching gate)."""
    return adapters.paired_design(
        data, other, columns, how=options.how, missing=options.missing, nest=options.nest,
        labels=labels, arrivals=arrivals,
    )  # fmt: skip
