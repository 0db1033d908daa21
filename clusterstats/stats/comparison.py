"""Many models on the same items: ``compare``, a leaderboard with rank intervals and every
pairwise difference with p-values adjusted across the family.
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar, Literal

import numpy as np
import pandas as pd

from clusterstats import _display as fmt
from clusterstats import _options as opt
from clusterstats import adapters
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
from clusterstats.core.crossed import summarize_crossed
from clusterstats.core.grouping import ClusterSums
from clusterstats.core.paired import higher_minus_lower, summarize_comparison
from clusterstats.core.strata import summarize_stratified
from clusterstats.core.summary import summarize_interval
from clusterstats.core.weighted import summarize_weighted
from clusterstats.errors import DegenerateDataWarning, InvalidOptionError, warn
from clusterstats.stats import _policies as policy

__all__ = ["Comparison", "build_comparison", "compare"]


@dataclass(frozen=True, kw_only=True, repr=False)
class Comparison(TableResult):
    """Many models on the same clustered items: a leaderboard and pairwise differences
    (returned by ``compare``).

    ``leaderboard()`` returns one row per model, best first, with columns ``model``,
    ``score``, ``low``, ``high`` (its ``cluster_ci`` interval), ``rank``, ``rank_low``,
    ``rank_high`` (the bootstrap interval of its rank, 1 = best, from one set of cluster draws
    shared by all models), ``method``, ``naive_low`` and ``naive_high`` (the interval that
    treats rows as independent). ``pairs()`` (also ``to_frame()``) returns one row
    per comparison ``model_a - model_b`` with columns ``model_a``, ``model_b``, ``delta``,
    ``se``, ``low``, ``high``, ``df``, ``p_value``, ``p_adjusted``, ``adjust``, ``method``,
    ``estimand`` and ``confidence``: the difference, its cluster-robust SE and interval, and
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
        The bootstrap interval of each rank.
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
        Replicates of the rank bootstrap.
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
        the smallest grouping's, and the ranks have no interval.
    weights : str or None
        The weight column (``weights=``): scores and differences are then weighted means.
    orientation : {"as_given", "higher_minus_lower"}
        How each pair is turned: ``"as_given"``, ``model_a`` before ``model_b`` in the
        models' order (each model minus ``baseline`` when there is one); or
        ``"higher_minus_lower"``, the higher-scoring model first, so every ``delta`` is
        at least 0.
    """

    models: tuple[Any, ...]
    score: tuple[float, ...]
    score_low: tuple[float, ...]
    score_high: tuple[float, ...]
    score_method: str
    rank: tuple[float, ...]
    rank_low: tuple[float, ...]
    rank_high: tuple[float, ...]
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

    LEADERBOARD_COLUMNS: ClassVar[tuple[str, ...]] = (
        "model",
        "score",
        "low",
        "high",
        "rank",
        "rank_low",
        "rank_high",
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
        each model's ``score``, ``score_low``, ``score_high``, ``rank``, ``rank_low`` and
        ``rank_high`` keyed ``prefix + model + "/" + name``, each pair's ``delta``, ``se``,
        ``low``, ``high``, ``p_value``, ``p_adjusted`` and ``df`` keyed
        ``prefix + "A - B/" + name``, and ``n_items`` and ``n_clusters``.

        Parameters
        ----------
        prefix : str
            Put before every key.

        Returns
        -------
        dict of str to float

        Raises
        ------
        MetricKeyError
            Two models (or a model and a pair) whose labels give the same key.
        """
        board = ("score", "score_low", "score_high", "rank", "rank_low", "rank_high")
        pairs = ("delta", "se", "low", "high", "p_value", "p_adjusted", "df")
        counts = (("n_items", self.n_items), ("n_clusters", self.n_clusters))
        groups = [("the comparison", numeric_metrics(prefix, counts))]
        groups += [
            (model, numeric_metrics(f"{prefix}{model}/", ((f, getattr(self, f)[i]) for f in board)))
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
            the right, its rank interval (marginal: each model's alone, from the cluster
            bootstrap). ``"pairs"``: one row per comparison ``a - b``, largest difference at
            the top, its interval (each pair's own, at the confidence level) against zero
            and, at the right, the p-value adjusted across the pairs (``adjust``), which is
            what says whether the pair differs once every pair is looked at.
        ax : matplotlib Axes, optional
            Where to draw (a new figure by default).
        values : bool, default False
            Print each score (or difference) above its interval.
        percent : bool, optional
            Show scores as percentages (differences in percentage points). By default they
            are when every score and bound lies in [0, 1] (pass rates).

        Returns
        -------
        matplotlib Axes

        Examples
        --------
        >>> import matplotlib
        >>> matplotlib.use("Agg")
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
                f"rank {lo}" if lo == hi else f"rank {lo}–{hi}"
                for lo, hi in zip(self.rank_low, self.rank_high, strict=True)
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
                "–" if np.isnan(r.rank_low) else f"{int(r.rank_low)}–{int(r.rank_high)}",
            )
            for r in self.leaderboard().itertuples()
        )
        pairs = self.pairs().sort_values("p_adjusted", kind="stable").head(10)
        shown = tuple(
            (
                f"{r.model_a} - {r.model_b}",
                r.delta,
                fmt.interval(r.low, r.high),
                r.p_value,
                r.p_adjusted,
            )
            for r in pairs.itertuples()
        )
        turned = ", higher minus lower" if self.orientation == "higher_minus_lower" else ""
        title = (
            f"pairwise ({self.method}{turned}, p adjusted by {self.adjust}; "
            f"{min(10, len(self.delta))} of {len(self.delta)} shown)"
        )
        return [
            Table(("model", "score", f"{pct} CI", "naive CI", "rank", f"rank {pct} CI"), board),
            Table(("a - b", "delta", f"{pct} CI", "p", "p adjusted"), shown, title),
        ]


def build_comparison(
    design: ComparisonDesign, options: opt.PairedOptions, *, baseline: Any = None
) -> Comparison:
    """``compare`` on a design."""

    if design.strata is not None:
        policy.check_lonely(design.strata, design.strata_labels, options.lonely)
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
    if options.weights is not None:
        policy.check_weighted_clusters(n_clusters, options.weights, [])
    counts, totals, squares = design.counts, design.totals, design.squares
    # missing="ipw": each cluster's items answered by every model stand for all its items
    # (weights n_g / r_g, cluster fixed-effect propensities, for which the cluster-robust
    # variance of the weighted sums is exactly the stacked sandwich).
    weighted = design.weighted if options.weights is not None else None
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
    )
    if options.orientation == "higher_minus_lower":
        s = higher_minus_lower(s)
    is_binary = design.is_binary
    score_low, score_high, score_method = [], [], ""
    naive_low, naive_high = [], []
    with policy.once() as warned:
        for j in range(len(design.models)):
            sums = ClusterSums(counts, totals[:, j], squares[:, j])
            if weighted is not None:
                ci = summarize_weighted(
                    weighted[j],
                    method="auto",
                    confidence=options.confidence,
                    is_binary=is_binary,
                    strata=design.strata,
                    lonely=options.lonely,
                )
            elif members is not None:
                ci = summarize_crossed(
                    sums,
                    members,
                    names=design.by,
                    method="auto",
                    confidence=options.confidence,
                    is_binary=is_binary,
                )
            elif design.strata is not None:
                ci = summarize_stratified(
                    sums,
                    design.strata,
                    estimand=options.estimand,
                    method="auto",
                    confidence=options.confidence,
                    is_binary=is_binary,
                    lonely=options.lonely,
                )
            else:
                ci = summarize_interval(
                    sums,
                    estimand=options.estimand,
                    method="auto",
                    confidence=options.confidence,
                    is_binary=is_binary,
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
        rank_low=tuple(s.rank_low),
        rank_high=tuple(s.rank_high),
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
        weights=None if options.weights is None else str(options.weights),
        orientation=options.orientation,
    )


def compare(
    data: Any,
    outcome: Hashable,
    by: opt.By | None = None,
    *,
    model: Hashable,
    on: Hashable | Sequence[Hashable] | None = None,
    rerun: Hashable | None = None,
    baseline: Any = None,
    how: opt.How = "strict",
    estimand: opt.Estimand = "pooled",
    method: opt.CompareMethod = "auto",
    adjust: opt.Adjust = "holm",
    confidence: float = 0.95,
    missing: opt.MissingOrIPW = "drop",
    responded: Hashable | None = None,
    strata: Hashable | None = None,
    nest: bool = False,
    lonely: opt.Lonely = "fail",
    n_resamples: int = 9999,
    rng: int | np.random.Generator | None = None,
    case: Hashable = "case",
    crossed: bool = False,
    weights: Hashable | None = None,
    orientation: opt.Orientation = "as_given",
) -> Comparison:
    """Compare many models on the same clustered items.

    ``data`` is long: one row per (model, item, run), the model in column ``model`` and the
    item key in ``on`` (column(s), or the index); rows sharing the model and the item are an
    error unless ``rerun`` names the run-id column, and then are averaged. A (case, rerun)
    Dataset holds the models along a ``model`` dim and its cases are the items. Returns a
    ``Comparison`` with every pairwise difference (or each model against ``baseline``),
    cluster-robust (CR2 by default) with p-values adjusted across the family
    (``adjust="holm"`` controls the family-wise error, Holm 1979; ``"bh"`` the false
    discovery rate, Benjamini & Hochberg 1995), and a leaderboard: each model's score with
    its ``cluster_ci`` interval (``method="auto"``) and the interval of its rank from one
    cluster bootstrap whose draws all models share. Models come in sorted label order (in
    order of first appearance if the labels cannot be sorted) and each pair is
    ``model_a - model_b`` in that order, so the result does not depend on the order of the
    rows. Rows that arrive as one block per model, each block listing the same items in the
    same order, are reduced without hashing every row; any other order gives the same
    result by the general path.

    Parameters
    ----------
    data : pandas.DataFrame, xarray.Dataset or dask DataFrame
        Long results, or a (case, rerun) Dataset with a model dim.
    outcome : column label
        The outcome (0/1 or a score).
    by : column label or list of labels, optional
        The cluster of each item (for a Dataset a coordinate along ``case``; default: the
        cases).
    model : column label (dim name for a Dataset)
        Which model a row belongs to.
    on : column label(s), optional
        The item key of a frame (default: the index; a dask DataFrame needs ``on``).
    rerun : column label, optional
        The run id, when items have several rows per model.
    baseline : model label, optional
        Compare every model with this one only.
    how : {"strict", "inner"}
        Items some model lacks: ``AlignmentError`` (default), or left out and counted in
        ``n_dropped_items``.
    estimand : {"pooled", "cluster_mean", "stratum_mean"}
        As in ``cluster_ci`` (``"stratum_mean"`` with strata).
    method : {"auto", "cr1", "cr2", "cr2_ik", "cr3", "cr3_ik", "bootstrap", \
"bootstrap_percentile", "bootstrap_t"}
        ``"auto"`` is ``"bootstrap_t"`` up to 2,000 clusters and ``"cr2"`` above, as in
        ``paired_delta`` (the stratified linearisation with strata, CR2 with
        ``missing="ipw"``). The bootstraps reuse the
        rank bootstrap's draws; ``"bootstrap_t"`` studentises each pair by its own replicate
        standard error and is never narrower than ``"cr3_ik"`` (the jackknife with the df of uneven
        cluster sizes of the pair's differences), so each pair's interval and p-value equal
        ``paired_delta``'s with the same ``rng``.
    adjust : {"holm", "bh", "none"}
        Multiplicity adjustment of the p-values.
    confidence : float
        Nominal coverage.
    missing : {"drop", "fail", "pass", "raise", "ipw"}
        As in ``paired_delta``, over all models: with ``"drop"``, an item missing for any
        model leaves the comparison for all of them; with ``"ipw"``, the items every model
        answered stand for all the items of their cluster (cluster fixed-effect propensities,
        for which the cluster-robust variance is exactly the stacked sandwich).
    responded : column label, optional
        A response indicator (True = a usable response).
    strata : column label, optional
        A stratified design, as in ``cluster_ci``: every pair gets the stratified linearised
        variance (all pairs from one matrix product), and the rank intervals come from Rao–Wu
        draws within strata shared by every model. ``method`` is then ``"auto"``, ``"cr1"``
        or a bootstrap, not ``"cr2"``.
    nest : bool
        With ``strata``: cluster ids are local to their stratum.
    lonely : {"fail", "adjust", "average", "certainty"}
        With ``strata``: a stratum with a single cluster.
    n_resamples : int
        Replicates of the rank bootstrap.
    rng : int, numpy.random.Generator or None
        Seed or generator of the bootstraps (None: a fixed default seed, as in ``cluster_ci``).
    case : dim name
        For a Dataset: the case dim.
    crossed : bool
        The ``by`` columns are crossed groupings (question × template), each counted on its
        own: every pair's variance is the multi-way sum (Cameron, Gelbach & Miller 2011) of
        its per-item differences, with t on ``min(G_j) - 1`` df, and every model's score
        interval is ``cluster_ci(crossed=True)``'s; method ``auto`` (= ``cr1``) or
        ``cr1``; the ranks have no interval (their cluster bootstrap has no crossed form).
    weights : column name, optional
        A weight per item, which every row of the item (each model, each run) must share:
        every score and every difference is a weighted (Hájek) mean with its linearised
        variance (t, ``cr1``), as in ``cluster_ci`` and ``paired_delta``, and the rank
        intervals come from the cluster bootstrap of the weighted means; method ``auto``
        (= ``cr1``) or ``cr1``. Items of weight zero are left out and counted in a note;
        at least two clusters must carry weight. pandas, polars, pyarrow and dask frames.
    orientation : {"as_given", "higher_minus_lower"}
        How each pair is turned. ``"as_given"`` (default): ``model_a`` comes before
        ``model_b`` in the models' order, or each model minus ``baseline``. With
        ``"higher_minus_lower"`` the higher-scoring model of each pair comes first, so every
        difference is at least 0 and reads as a lead; the standard errors, p-values and
        degrees of freedom do not change, and each interval is the other's negated.
        (``paired_delta`` takes its two models in the order they are passed.)

    Returns
    -------
    Comparison

    Raises
    ------
    AlignmentError
        Items some model lacks (``how="strict"``), an item in different clusters, or several
        rows per model and item without ``rerun``.
    InvalidOptionError
        An invalid option value or combination, or a ``baseline`` that is not a model.

    Examples
    --------
    >>> import clusterstats
    >>> demo = clusterstats.load_demo_data()
    >>> res = demo.eval.compare("correct", by="src", model="model", on="question_id",
    ...                         how="inner", rng=0)
    >>> res.leaderboard()["model"].tolist()[0]
    'gemini-1.5-flash-002'
    >>> len(res.pairs())
    6
    """
    options = opt.compare_options(
        how=how,
        estimand=estimand,
        method=method,
        adjust=adjust,
        confidence=confidence,
        missing=missing,
        strata=strata,
        nest=nest,
        lonely=lonely,
        n_resamples=n_resamples,
        rng=rng,
        crossed=crossed,
        by=by,
        weights=weights,
        orientation=orientation,
    )
    design = adapters.comparison_design(
        data,
        outcome,
        by,
        model=model,
        on=on,
        rerun=rerun,
        how=options.how,
        missing=options.missing,
        responded=responded,
        strata=strata,
        nest=options.nest,
        case=case,
        weights=options.weights,
    )
    return build_comparison(design, options, baseline=baseline)
