"""Many models on the same items: ``Comparison``, a leaderboard with rank sets and tiers and
every pairwise difference with p-values adjusted across the family, and its builder.
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass
from typing import Any, ClassVar, Literal

import numpy as np
import pandas as pd

from clusterstats import _display as fmt
from clusterstats import _options as opt
from clusterstats._design import ComparisonDesign
from clusterstats._plotting import forest, is_rate
from clusterstats._result import (
    Lines,
    Table,
    TableResult,
    label_of,
    merged_metrics,
    numeric_metrics,
)
from clusterstats.core.grouping import ClusterSums
from clusterstats.core.paired import higher_minus_lower, summarize_comparison
from clusterstats.core.ranks import separable_neighbours
from clusterstats.errors import DegenerateDataWarning, InvalidOptionError, warn
from clusterstats.stats import _policies as policy
from clusterstats.stats._variance import design_interval, variance_design

__all__ = ["Comparison", "build_comparison"]


@dataclass(frozen=True, kw_only=True, repr=False)
class Comparison(TableResult):
    """Many models on the same clustered items: a leaderboard and pairwise differences
    (returned by ``compare``).

    ``leaderboard()`` returns one row per model, best first, with columns ``model``,
    ``score``, ``low``, ``high`` (its ``cluster_ci`` interval), ``rank`` (1 = best),
    ``rank_low`` and ``rank_high`` (its simultaneous rank set: all models' true ranks lie in
    their sets together with probability ``confidence``), ``marginal_rank_low`` and
    ``marginal_rank_high`` (its marginal rank set, which covers its own rank alone),
    ``tier`` and ``in_top_set`` (see below), ``method``, ``naive_low`` and ``naive_high``
    (the interval that treats rows as independent). ``pairs()`` (also ``to_frame()``)
    returns one row per comparison ``model_a - model_b`` with columns ``model_a``,
    ``model_b``, ``delta``, ``se``, ``low``, ``high``, ``df``, ``p_value``, ``p_adjusted``,
    ``adjust``, ``method``, ``estimand`` and ``confidence``: the difference, its
    cluster-robust SE and interval, and
    the p-values raw and adjusted across the family. The class attributes
    ``LEADERBOARD_COLUMNS`` and ``PAIR_COLUMNS`` list those columns. It prints both tables,
    and in Jupyter renders both as HTML.

    Attributes
    ----------
    models : tuple
        The model labels, in sorted order.
    score : tuple of float
        Each model's estimate (``estimand``), in the order of ``models``.
    score_low, score_high : tuple of float
        Each model's ``cluster_ci`` interval (``method="auto"``).
    naive_low, naive_high : tuple of float
        Each model's naive interval, which treats the rows as independent (as
        ``ClusterCI.naive_low`` and ``naive_high``): shown beside the clustered one to say
        how much the clustering widens it.
    score_method : str
        The method of those intervals.
    rank : tuple of float
        Each model's rank by score (1 = best).
    rank_low, rank_high : tuple of float
        Each model's simultaneous rank set (Mogstad, Romano, Shaikh & Wilhelm 2024): the
        step-down max-t family over every ordered pair of models, studentised by the pairs'
        cluster-robust variance, so every set covers together.
    marginal_rank_low, marginal_rank_high : tuple of float
        Each model's marginal rank set: the same construction with a family of that model's
        own pairs only, so each covers its own rank alone (narrower; read one model at a
        time, never several together).
    tier : tuple of float
        Each model's tier: 1 when no model is separated above it by the simultaneous
        family; otherwise one more than the lowest tier of the models separated above it.
        No two models of a tier are separated; each model below tier 1 is separated below
        some model of the tier above. All the tiers hold together at ``confidence``.
    in_top_set : tuple of bool
        Whether the model could be among the best ``top`` (its simultaneous lower rank bound
        is at most ``top``): the confidence set for the ``top``-best (``csranks``'s
        ``cstaubest``).
    top : int
        The ``top`` of ``in_top_set``.
    rank_method : str
        Where the rank sets' critical values come from: ``"guarded"``, ``"t"`` or
        ``"normal"`` (draws from the cluster-robust joint covariance of the scores; see
        ``compare``), or ``"bootstrap"`` (the cluster bootstrap's shared replicates).
    n_separated_neighbours : int
        How many of the ``len(models) - 1`` adjacent places of the order by score the
        simultaneous family separates.
    separated : tuple of (model, model)
        Every pair ``(a, b)`` the simultaneous family separated, ``a`` above ``b``: all of
        them hold together at ``confidence``.
    pair_a, pair_b : tuple
        The two models of each comparison, ``pair_a - pair_b``.
    delta, se, low, high : tuple of float
        Each comparison's difference, standard error and interval.
    p_value, p_adjusted : tuple of float
        Each comparison's two-sided p-value, raw and adjusted by ``adjust``.
    df : tuple of float
        Each comparison's degrees of freedom of the reference t: CR2's Satterthwaite df, or
        for ``bootstrap_t``, ``cr2_ik`` and ``cr3_ik`` the df of uneven cluster sizes of the pair's
        differences (the t interval ``bootstrap_t`` never falls inside).
    method : str
        The method of the pairwise intervals (``"auto"`` resolved).
    adjust : {"holm", "bh", "none"}
        The multiplicity adjustment: Holm (family-wise error) or Benjamini–Hochberg (false
        discovery rate).
    estimand : str
        As in ``cluster_ci``.
    confidence : float
        Nominal coverage.
    baseline : model label or None
        The model every other one was compared with (None: every pair).
    n_items, n_clusters : int
        Items compared and their clusters.
    n_resamples : int
        Replicates of the cluster bootstrap (and draws of the rank sets' critical values).
    n_dropped_items : int
        Items some model lacks, left out (``how="inner"``).
    n_missing_items : int
        Items with a missing outcome for some model.
    outcome : str or None
        The outcome column.
    by : tuple of str
        The cluster column(s).
    notes : tuple of str
        Everything a reader should know.
    crossed : bool
        Whether ``by`` names crossed groupings (``crossed=True``); ``n_clusters`` is then
        the smallest grouping's, and the rank sets draw from the multi-way covariance.
    weights : str or None
        The weight column (``weights=``): scores and differences are then weighted means.
    orientation : {"as_given", "higher_minus_lower"}
        How each pair is turned: ``"as_given"``, ``model_a`` before ``model_b`` in the
        models' order (each model minus ``baseline`` when there is one); or
        ``"higher_minus_lower"``, the higher-scoring model first, so every ``delta`` is
        at least 0.
    judge : str or None
        ``judged_compare``: the judge's score column (each score then estimates the human
        labels' mean from the judge on every item and the labels on a few); None otherwise.
    target : str or None
        ``judged_compare``: ``"population"`` or ``"benchmark"``, as in ``judged_ci``.
    """

    models: tuple[Any, ...]
    score: tuple[float, ...]
    score_low: tuple[float, ...]
    score_high: tuple[float, ...]
    score_method: str
    rank: tuple[float, ...]
    rank_low: tuple[float, ...]
    rank_high: tuple[float, ...]
    marginal_rank_low: tuple[float, ...]
    marginal_rank_high: tuple[float, ...]
    tier: tuple[float, ...]
    in_top_set: tuple[bool, ...]
    top: int
    rank_method: str
    n_separated_neighbours: int
    separated: tuple[tuple[Any, Any], ...]
    pair_a: tuple[Any, ...]
    pair_b: tuple[Any, ...]
    delta: tuple[float, ...]
    se: tuple[float, ...]
    low: tuple[float, ...]
    high: tuple[float, ...]
    p_value: tuple[float, ...]
    p_adjusted: tuple[float, ...]
    df: tuple[float, ...]
    method: str
    adjust: str
    estimand: str
    confidence: float
    baseline: Any
    n_items: int
    n_clusters: int
    n_resamples: int
    n_dropped_items: int = 0
    n_missing_items: int = 0
    outcome: str | None = None
    by: tuple[str, ...] = ()
    notes: tuple[str, ...] = ()
    crossed: bool = False
    weights: str | None = None
    naive_low: tuple[float, ...]
    naive_high: tuple[float, ...]
    orientation: str = "as_given"
    judge: str | None = None
    target: str | None = None

    LEADERBOARD_COLUMNS: ClassVar[tuple[str, ...]] = (
        "model",
        "score",
        "low",
        "high",
        "rank",
        "rank_low",
        "rank_high",
        "marginal_rank_low",
        "marginal_rank_high",
        "tier",
        "in_top_set",
        "method",
        "naive_low",
        "naive_high",
    )
    PAIR_COLUMNS: ClassVar[tuple[str, ...]] = (
        "model_a",
        "model_b",
        "delta",
        "se",
        "low",
        "high",
        "df",
        "p_value",
        "p_adjusted",
        "adjust",
        "method",
        "estimand",
        "confidence",
    )

    def leaderboard(self):
        """One row per model, best first, with the columns of ``LEADERBOARD_COLUMNS``."""

        frame = pd.DataFrame(
            {
                "model": list(self.models),
                "score": self.score,
                "low": self.score_low,
                "high": self.score_high,
                "rank": self.rank,
                "rank_low": self.rank_low,
                "rank_high": self.rank_high,
                "marginal_rank_low": self.marginal_rank_low,
                "marginal_rank_high": self.marginal_rank_high,
                "tier": self.tier,
                "in_top_set": self.in_top_set,
                "method": self.score_method,
                "naive_low": self.naive_low,
                "naive_high": self.naive_high,
            },
            columns=list(self.LEADERBOARD_COLUMNS),
        )
        return frame.sort_values(["rank", "model"], kind="stable").reset_index(drop=True)

    def pairs(self):
        """One row per comparison ``model_a - model_b``, with the columns of
        ``PAIR_COLUMNS``."""

        return pd.DataFrame(
            {
                "model_a": list(self.pair_a),
                "model_b": list(self.pair_b),
                "delta": self.delta,
                "se": self.se,
                "low": self.low,
                "high": self.high,
                "df": list(self.df),
                "p_value": self.p_value,
                "p_adjusted": self.p_adjusted,
                "adjust": self.adjust,
                "method": self.method,
                "estimand": self.estimand,
                "confidence": self.confidence,
            },
            columns=list(self.PAIR_COLUMNS),
        )

    def to_metrics(self, prefix: str = "") -> dict[str, float]:
        """The leaderboard and the pairs as a flat dict of floats, for an experiment tracker:
        each model's ``score``, ``score_low``, ``score_high``, ``rank``, ``rank_low``,
        ``rank_high``, ``marginal_rank_low``, ``marginal_rank_high``, ``tier`` and
        ``in_top_set`` (1 or 0) keyed ``prefix + model + "/" + name``, each pair's
        ``delta``, ``se``, ``low``, ``high``, ``p_value``, ``p_adjusted`` and ``df`` keyed
        ``prefix + "A - B/" + name``, and ``n_items`` and ``n_clusters``.

        {metrics_parameters}

        Raises
        ------
        MetricKeyError
            Two models (or a model and a pair) whose labels give the same key.
        """
        board = (
            "score", "score_low", "score_high", "rank", "rank_low", "rank_high",
            "marginal_rank_low", "marginal_rank_high", "tier", "in_top_set",
        )  # fmt: skip
        pairs = ("delta", "se", "low", "high", "p_value", "p_adjusted", "df")
        counts = (("n_items", self.n_items), ("n_clusters", self.n_clusters))
        groups = [("the comparison", numeric_metrics(prefix, counts))]
        groups += [
            (
                model,
                numeric_metrics(
                    f"{prefix}{model}/", ((f, _number(getattr(self, f)[i])) for f in board)
                ),
            )
            for i, model in enumerate(self.models)
        ]
        groups += [
            (
                (a, b),
                numeric_metrics(f"{prefix}{a} - {b}/", ((f, getattr(self, f)[i]) for f in pairs)),
            )
            for i, (a, b) in enumerate(zip(self.pair_a, self.pair_b, strict=True))
        ]
        return merged_metrics(groups)

    def to_frame(self):
        """The pairwise comparisons (tidy): same as ``pairs()``."""
        return self.pairs()

    def plot(
        self,
        *,
        kind: Literal["leaderboard", "pairs"] = "leaderboard",
        ax: Any = None,
        values: bool = False,
        percent: bool | None = None,
    ) -> Any:
        """The leaderboard as a forest, or every pairwise difference against zero (needs
        matplotlib, as ``ClusterCI.plot``).

        Parameters
        ----------
        kind : {"leaderboard", "pairs"}, default "leaderboard"
            ``"leaderboard"``: one row per model, best at the top, its clustered interval
            (thick) above its naive interval (thin and faint, rows as independent) and, at
            the right, its simultaneous rank set and tier; dashed lines separate the tiers.
            ``"pairs"``: one row per comparison ``a - b``, largest difference at
            the top, its interval (each pair's own, at the confidence level) against zero
            and, at the right, the p-value adjusted across the pairs (``adjust``), which is
            what says whether the pair differs once every pair is looked at.
        {plot_ax}
        values : bool, default False
            Print each score (or difference) above its interval.
        percent : bool, optional
            Show scores as percentages (differences in percentage points). By default they
            are when every score and bound lies in [0, 1] (pass rates).

        {plot_returns}

        {plot_examples_head}
        >>> import clusterstats
        >>> df = clusterstats.load_demo_data()
        >>> c = clusterstats.compare(df, "correct", by="src", model="model", on="question_id")
        >>> [t.get_text() for t in c.plot().get_yticklabels()][::-1][:2]  # the top two
        ['gemini-1.5-flash-002', 'Meta-Llama-3.1-70B-Instruct']
        >>> len(c.plot(kind="pairs").get_yticklabels())
        6
        """
        opt.check_choice("kind", kind, ("leaderboard", "pairs"))
        what = self.outcome or "outcome"
        by = " + ".join(self.by) or "cluster"
        level = f"{self.confidence:.0%}"
        rate = is_rate(
            [*self.score, *self.score_low, *self.score_high, *self.naive_low, *self.naive_high],
            percent,
        )
        if kind == "leaderboard":
            ranks = [
                _rank_text(lo, hi) + ("" if math.isnan(t) else f" · tier {int(t)}")
                for lo, hi, t in zip(self.rank_low, self.rank_high, self.tier, strict=True)
            ]
            return forest(
                [str(m) for m in self.models],
                list(self.score),
                list(self.score_low),
                list(self.score_high),
                list(self.naive_low),
                list(self.naive_high),
                title=f"{what}: {len(self.models)} models, clustered by {by}",
                xlabel=f"{what}: {self.estimand} mean, {level} CI",
                values=values,
                percent=rate,
                notes=ranks,
                groups=list(self.tier),
                ax=ax,
            )
        adjusted = [
            f"p {fmt.number(p)} ({self.adjust})" if math.isfinite(p) else ""
            for p in self.p_adjusted
        ]
        return forest(
            [f"{a} − {b}" for a, b in zip(self.pair_a, self.pair_b, strict=True)],
            list(self.delta),
            list(self.low),
            list(self.high),
            None,
            None,
            title=f"{what}: every pair's difference, clustered by {by}",
            xlabel=f"difference in {what}, {level} CI of each pair",
            values=values,
            percent=False,
            notes=adjusted,
            reference=0.0,
            ax=ax,
            points=rate,
        )

    def _heading(self) -> str:
        what = label_of(self.outcome, self.by)
        if self.crossed:
            what = f"{self.outcome or 'outcome'} by {' × '.join(self.by)} (crossed)"
        if self.weights is not None:
            what += f", weighted by {self.weights}"
        if self.judge is not None:
            what += f", judged by {self.judge} (target {self.target})"
        return (
            f"Comparison({what}; {len(self.models)} models on "
            f"{fmt.count(self.n_items, 'item')} in {fmt.count(self.n_clusters, 'cluster')}; "
            f"estimand={self.estimand})"
        )

    def _blocks(self) -> list[Lines | Table]:
        pct = f"{self.confidence:.0%}"
        board = tuple(
            (
                r.model,
                r.score,
                fmt.interval(r.low, r.high),
                fmt.interval(r.naive_low, r.naive_high),
                int(r.rank),
                _rank_text(r.rank_low, r.rank_high, bare=True),
                _rank_text(r.marginal_rank_low, r.marginal_rank_high, bare=True),
                "–" if np.isnan(r.tier) else int(r.tier),
            )
            for r in self.leaderboard().itertuples()
        )
        header = (
            "model", "score", f"{pct} CI", "naive CI", "rank", "ranks (all)", "rank (alone)",
            "tier",
        )  # fmt: skip
        return [Table(header, board), Lines(self._rank_sentences()), self._pairs_table()]

    def _pairs_table(self) -> Table:
        """The pairs a reader asks about first: each model against the baseline, or else each
        place of the order by score against the next, higher minus lower, with whether the
        simultaneous family separates them (every pair: ``pairs()``)."""
        pct = f"{self.confidence:.0%}"
        found = {(a, b): i for i, (a, b) in enumerate(zip(self.pair_a, self.pair_b, strict=True))}
        if self.baseline is not None:
            order = self.leaderboard()["model"]
            chosen = [(model, self.baseline) for model in order if model != self.baseline]
            what = f"each model - {self.baseline}"
        else:
            order = list(self.leaderboard()["model"])
            chosen = list(itertools.pairwise(order))
            what = "adjacent places, higher minus lower"
        rows = []
        for higher, lower in chosen:
            if (higher, lower) in found:
                i, sign = found[(higher, lower)], 1.0
            else:
                i, sign = found[(lower, higher)], -1.0
            low, high = sorted((sign * self.low[i], sign * self.high[i]))
            rows.append(
                (
                    f"{higher} - {lower}",
                    sign * self.delta[i] + 0.0,
                    fmt.interval(low, high),
                    self.p_adjusted[i],
                    "yes" if {(higher, lower), (lower, higher)} & set(self.separated) else "no",
                )
            )
        turned = ", higher minus lower" if self.orientation == "higher_minus_lower" else ""
        title = (
            f"{what} ({self.method}, p adjusted by {self.adjust} over all "
            f"{len(self.delta)} pairs; separated: by the simultaneous family; every "
            f"pair{turned}: .pairs())"
        )
        header = ("pair", "delta", f"{pct} CI", "p adjusted", "separated")
        return Table(header, tuple(rows), title)

    def _rank_sentences(self) -> tuple[str, ...]:
        if not self.rank_method:
            return ()
        pct = f"{self.confidence:.0%}"
        m = len(self.models)
        board = self.leaderboard()  # best first
        chosen = [str(model) for model in board.loc[board["in_top_set"], "model"]]
        place = "first" if self.top == 1 else f"among the best {self.top}"
        n_tiers = int(np.nanmax(self.tier)) if m else 0
        return (
            f"could be {place} ({pct}, all models at once): {len(chosen)} of {m}: "
            + ", ".join(chosen),
            f"{n_tiers} {'tier' if n_tiers == 1 else 'tiers'}; adjacent places separated: "
            f"{self.n_separated_neighbours} of {m - 1}",
            f"ranks (all): simultaneous sets, every model's true rank inside together with "
            f"probability {pct} (Mogstad, Romano, Shaikh & Wilhelm 2024; step-down max-t over "
            f"all ordered pairs, critical values from the {_RANK_SOURCES[self.rank_method]}); "
            "rank (alone): the same for one model at a time; tier 1: no model is separated "
            "above; tier t: separated below some model of tier t − 1, from none of its own",
        )


_RANK_SOURCES = {
    "bootstrap": "cluster bootstrap",
    "normal": "normal law of the cluster-robust covariance",
    "t": "multivariate t on the clusters' df with the cluster-robust covariance",
}
_RANK_SOURCES["guarded"] = _RANK_SOURCES["t"] + ", never below Holm's bound"


def _number(value: Any) -> Any:
    """A flag as 1 or 0 for the metrics (which keep numbers, not flags)."""
    return int(value) if isinstance(value, (bool, np.bool_)) else value


def _rank_text(low: float, high: float, *, bare: bool = False) -> str:
    """A rank set as text: ``rank 3`` or ``rank 2–5`` (``bare``: ``3``, ``2–5``), ``–``
    when there is none."""
    if math.isnan(low):
        return "–"
    word = "" if bare else "rank "
    return f"{word}{int(low)}" if low == high else f"{word}{int(low)}–{int(high)}"


#: The rank sets' critical values by default, chosen by the coverage study
#: (``studies/coverage_ranks.py``: ``docs/coverage-ranks.md`` and
#: ``docs/coverage-ranks-tied.md``).
DEFAULT_RANK_METHOD = "guarded"


def rank_method_of(options: opt.PairedOptions) -> str:
    """The rank method ``options`` ask for, ``"auto"`` resolved."""
    if options.rank_method != "auto":
        return options.rank_method
    return DEFAULT_RANK_METHOD


def build_comparison(
    design: ComparisonDesign, options: opt.PairedOptions, *, baseline: Any = None
) -> Comparison:
    """``compare`` on a design."""

    if design.strata is not None:
        policy.check_lonely(design.strata, design.strata_labels, options.lonely)
    if options.top > len(design.models):
        raise InvalidOptionError(
            f"top={options.top} is more places than the {len(design.models)} models compared"
        )
    members = None
    if options.crossed:
        members = design.members
        if members is None:
            raise InvalidOptionError(
                "crossed=True needs by= with two or more groupings, each a column of the items"
            )
    baseline_index = None
    if baseline is not None:
        if baseline not in design.models:
            raise InvalidOptionError(
                f"baseline {baseline!r} is not one of the models {list(design.models)}"
            )
        baseline_index = design.models.index(baseline)
    n_clusters = int(design.counts.shape[0])
    if design.weights is not None:
        policy.check_weighted_clusters(n_clusters, design.weights, [])
    counts, totals, squares = design.counts, design.totals, design.squares
    # missing="ipw": each cluster's items answered by every model stand for all its items
    # (weights n_g / r_g, cluster fixed-effect propensities, for which the cluster-robust
    # variance of the weighted sums is exactly the stacked sandwich).
    weighted = design.weighted if design.weights is not None else None
    if weighted is not None:
        # the linearised variances of weighted means are those of the weighted sums
        counts = weighted[0].weighted.counts
        totals = np.column_stack([w.weighted.totals for w in weighted])
        squares = np.column_stack([w.weighted.squares for w in weighted])
    scale = np.ones(n_clusters)
    if options.missing == "ipw":
        scale = design.cluster_items / counts
        counts = design.cluster_items.copy()
        totals = totals * scale[:, None]
        squares = squares * scale[:, None]
    s = summarize_comparison(
        totals,
        counts,
        estimand=options.estimand,
        # The inverse-probability weighted sums keep the linearised (stacked sandwich)
        # variance by default: the paired coverage study did not cover weighted designs;
        # with weights=, the t interval on the linearised variance, as paired_delta's.
        method=(
            "cr2"
            if options.missing == "ipw" and options.method == "auto"
            else "cr1"
            if weighted is not None
            else options.method
        ),
        adjust=options.adjust,
        confidence=options.confidence,
        baseline=baseline_index,
        n_resamples=options.n_resamples,
        rng=options.rng.generator(),
        strata=design.strata,
        lonely=options.lonely,
        outcome_range=(-1.0, 1.0) if design.is_binary else None,
        memberships=members,
        names=design.by,
        # unweighted per-item values only: the IPW and weighted sums are other quantities
        item_products=design.products if weighted is None and options.missing != "ipw" else None,
        binary_items=design.is_binary and weighted is None and options.missing != "ipw",
        rank_method=rank_method_of(options),
    )
    if options.orientation == "higher_minus_lower":
        s = higher_minus_lower(s)
    is_binary = design.is_binary
    score_low, score_high, score_method = [], [], ""
    naive_low, naive_high = [], []
    with policy.once() as warned:
        for j in range(len(design.models)):
            sums = ClusterSums(counts, totals[:, j], squares[:, j])
            name = variance_design(
                crossed=members is not None,
                weighted=weighted is not None,
                stratified=design.strata is not None,
            )
            ci = design_interval(
                name,
                weighted[j] if weighted is not None else sums,
                estimand=options.estimand,
                method="auto",
                confidence=options.confidence,
                is_binary=is_binary,
                strata=design.strata,
                members=members,
                names=design.by,
                lonely=options.lonely,
            )
            score_low.append(ci.low)
            score_high.append(ci.high)
            naive_low.append(ci.naive_low)
            naive_high.append(ci.naive_high)
            score_method = score_method or ci.method
        if s.degenerate.any():
            shown = [
                f"{design.models[a]!r} - {design.models[b]!r}"
                for a, b in zip(s.pair_a[s.degenerate], s.pair_b[s.degenerate], strict=True)
            ]
            more = f" (and {len(shown) - 5} more)" if len(shown) > 5 else ""
            warn(
                f"{len(shown)} {'pair has' if len(shown) == 1 else 'pairs have'} the same "
                "difference in every cluster, so the cluster-robust variance is zero and no "
                "interval is given: "
                f"{', '.join(shown[:5])}{more}; compare such a pair item by item with "
                "paired_delta",
                DegenerateDataWarning,
            )
    notes = list(warned) + list(s.notes)
    if design.n_dropped_items:
        notes.append(
            f"how='inner': {design.n_dropped_items} items missing for some model were left out"
        )
    if design.n_missing_items and options.missing == "ipw":
        notes.append(
            f"{design.n_missing_items} items with a missing outcome for some model were handled "
            "by inverse-probability weighting: in each cluster the items every model answered "
            "stand for all its items (cluster fixed-effect propensities)"
        )
        if design.lost_cluster_items.size:
            notes.append(
                f"{design.lost_cluster_items.size} clusters had no item answered by every model: "
                "nothing observed can stand in for them"
            )
    elif design.n_missing_items:
        verb = {"fail": "counted as failures", "pass": "counted as passes"}.get(
            options.missing, "dropped"
        )
        notes.append(
            f"{design.n_missing_items} items with a missing outcome for some model were {verb}"
        )
    zero_weight = policy.zero_weight_note(design.n_zero_weight_items, 0, rows="items")
    if zero_weight:
        notes.append(zero_weight)
    labels = design.models
    return Comparison(
        models=labels,
        score=tuple(s.means),
        score_low=tuple(score_low),
        score_high=tuple(score_high),
        naive_low=tuple(naive_low),
        naive_high=tuple(naive_high),
        score_method=score_method,
        rank=tuple(s.rank),
        rank_low=tuple(s.ranks.low),
        rank_high=tuple(s.ranks.high),
        marginal_rank_low=tuple(s.ranks.marginal_low),
        marginal_rank_high=tuple(s.ranks.marginal_high),
        tier=tuple(s.ranks.tier),
        in_top_set=tuple(bool(low <= options.top) for low in s.ranks.low),
        top=options.top,
        rank_method=s.ranks.method,
        n_separated_neighbours=separable_neighbours(s.means, s.ranks.above),
        separated=tuple(
            (labels[a], labels[b]) for a, b in zip(*np.nonzero(s.ranks.above), strict=True)
        ),
        pair_a=tuple(labels[i] for i in s.pair_a),
        pair_b=tuple(labels[i] for i in s.pair_b),
        delta=tuple(s.delta),
        se=tuple(s.se),
        low=tuple(s.low),
        high=tuple(s.high),
        p_value=tuple(s.p_value),
        p_adjusted=tuple(s.p_adjusted),
        df=tuple(np.broadcast_to(np.asarray(s.df, dtype=float), np.shape(s.delta)).tolist()),
        method=s.method,
        adjust=options.adjust,
        estimand=options.estimand,
        confidence=options.confidence,
        baseline=baseline,
        n_items=design.n_items,
        # crossed: the grouping with the fewest clusters, which sets the df
        n_clusters=n_clusters if members is None else min(int(c.max()) + 1 for c in members),
        n_resamples=options.n_resamples,
        n_dropped_items=design.n_dropped_items,
        n_missing_items=design.n_missing_items,
        outcome=design.outcome,
        by=design.by,
        notes=tuple(notes),
        crossed=options.crossed,
        weights=design.weights,
        orientation=options.orientation,
    )
