"""``compare``, the entry point of many models on shared items: one leaderboard
(``Comparison``), or with ``over=`` a leaderboard on every slice at once
(``SliceComparison``), with the error of the whole family of slices x pairs controlled, so
that "model A leads on subset X" is said only when it survives every slice looked at.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Hashable, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar, Literal

import numpy as np
import pandas as pd

from clusterstats import _display as fmt
from clusterstats import _options as opt
from clusterstats import adapters
from clusterstats._design import ComparisonDesign
from clusterstats._result import Lines, Table, TableResult, merged_metrics
from clusterstats.core.paired import adjust_p_values
from clusterstats.errors import (
    GroupNotFoundError,
)
from clusterstats.stats import _policies as policy
from clusterstats.stats.comparison import Comparison, build_comparison

__all__ = ["SliceComparison", "build_slice_comparison", "compare", "family_p_values"]


def family_p_values(p_values: list[tuple[float, ...]], adjust: str) -> list[tuple[float, ...]]:
    """Each slice's raw p-values adjusted over the family of every slice's pairs (a pair
    without a p-value, NaN, stays NaN and does not count in the family)."""
    flat = np.concatenate([np.asarray(p, dtype=float) for p in p_values]) if p_values else []
    flat = np.asarray(flat, dtype=float)
    adjusted = np.full(flat.shape, np.nan)
    finite = np.isfinite(flat)
    adjusted[finite] = adjust_p_values(flat[finite], adjust)
    out, start = [], 0
    for p in p_values:
        out.append(tuple(adjusted[start : start + len(p)].tolist()))
        start += len(p)
    return out


@dataclass(frozen=True, kw_only=True, repr=False)
class SliceComparison(TableResult):
    """Many models on the same items, slice by slice (returned by ``compare(..., over=)``).

    Every slice (a category, task or language: a value of the ``over`` column) gets its own
    ``Comparison`` on its own items and clusters. Two things make the slices one family:

    - every pair's p-value is adjusted over all slices' pairs together (``p_family``,
      ``adjust``: Holm's family-wise error by default), so a lead reported on one slice has
      survived the search through every slice;
    - each slice's intervals, rank sets and tiers are at ``slice_confidence``
      = 1 − (1 − ``confidence``) / S (Bonferroni over the S slices), so the rank sets of
      every slice hold together at ``confidence``.

    ``leads()`` lists the pairs that survive the family, leader first. ``leaderboard()`` and
    ``pairs()`` (also ``to_frame()``) stack the slices' tables with a ``slice`` column;
    ``result[label]`` is one slice's ``Comparison``.

    Attributes
    ----------
    over : str or tuple of str
        The slicing column(s).
    slices : tuple
        The slice labels, in sorted order.
    comparisons : tuple of Comparison
        Each slice's comparison, in the order of ``slices``.
    p_family : tuple of tuple of float
        Per slice, each pair's p-value adjusted over the family of all slices' pairs.
    adjust : {"holm", "bh", "none"}
        The adjustment of ``p_family``.
    confidence : float
        The family's coverage.
    slice_confidence : float
        The level of each slice's intervals and rank sets.
    n_family : int
        The number of pairs with a p-value in the family.
    notes : tuple of str
        Everything a reader should know.
    """

    over: Any
    slices: tuple[Any, ...]
    comparisons: tuple[Comparison, ...]
    p_family: tuple[tuple[float, ...], ...]
    adjust: str
    confidence: float
    slice_confidence: float
    n_family: int
    notes: tuple[str, ...] = ()

    LEADERBOARD_COLUMNS: ClassVar[tuple[str, ...]] = ("slice", *Comparison.LEADERBOARD_COLUMNS)
    PAIR_COLUMNS: ClassVar[tuple[str, ...]] = ("slice", *Comparison.PAIR_COLUMNS, "p_family")
    LEAD_COLUMNS: ClassVar[tuple[str, ...]] = (
        "slice", "leader", "trailer", "delta", "low", "high", "p_value", "p_family",
    )  # fmt: skip

    def __getitem__(self, label: Any) -> Comparison:
        if label not in self.slices:
            raise GroupNotFoundError(f"{label!r} is not one of the slices {list(self.slices)}")
        return self.comparisons[self.slices.index(label)]

    def leaderboard(self):
        """Each slice's leaderboard, stacked, with the columns of ``LEADERBOARD_COLUMNS``."""
        frames = [c.leaderboard().assign(slice=[s] * len(c.models)) for s, c in self._each()]
        return pd.concat(frames, ignore_index=True)[list(self.LEADERBOARD_COLUMNS)]

    def pairs(self):
        """Each slice's pairs, stacked, with ``p_family``: the columns of ``PAIR_COLUMNS``."""
        frames = [
            c.pairs().assign(slice=[s] * len(c.delta), p_family=list(p))
            for (s, c), p in zip(self._each(), self.p_family, strict=True)
        ]
        return pd.concat(frames, ignore_index=True)[list(self.PAIR_COLUMNS)]

    def leads(self):
        """The pairs whose family-adjusted p-value is below 1 − ``confidence``, each turned
        so that the leader comes first (``delta`` > 0, its interval at
        ``slice_confidence``), largest lead first: the columns of ``LEAD_COLUMNS``."""
        pairs = self.pairs()
        pairs = pairs[pairs["p_family"] < 1.0 - self.confidence]
        turn = (pairs["delta"] < 0).to_numpy()
        frame = pd.DataFrame(
            {
                "slice": pairs["slice"].to_numpy(),
                "leader": np.where(turn, pairs["model_b"], pairs["model_a"]),
                "trailer": np.where(turn, pairs["model_a"], pairs["model_b"]),
                "delta": np.abs(pairs["delta"].to_numpy()),
                "low": np.where(turn, -pairs["high"], pairs["low"]),
                "high": np.where(turn, -pairs["low"], pairs["high"]),
                "p_value": pairs["p_value"].to_numpy(),
                "p_family": pairs["p_family"].to_numpy(),
            },
            columns=list(self.LEAD_COLUMNS),
        )
        return frame.sort_values(["delta", "slice"], ascending=[False, True], kind="stable")

    def to_frame(self):
        """The pairs of every slice (tidy): same as ``pairs()``."""
        return self.pairs()

    def to_metrics(self, prefix: str = "") -> dict[str, float]:
        """Every slice's ``Comparison.to_metrics``, keyed ``prefix + slice + "/" + ...``.

        {metrics_parameters}
        """
        return merged_metrics((s, c.to_metrics(prefix=f"{prefix}{s}/")) for s, c in self._each())

    def plot(self, *, slice: Any, kind: Literal["leaderboard", "pairs"] = "leaderboard",
             **options: Any) -> Any:  # fmt: skip
        """One slice's picture: ``Comparison.plot`` of ``result[slice]``.

        Parameters
        ----------
        slice : label
            Which slice.
        kind : {"leaderboard", "pairs"}
            As in ``Comparison.plot``.
        **options
            ``ax``, ``values``, ``percent``, as in ``Comparison.plot``.

        {plot_returns}
        """
        return self[slice].plot(kind=kind, **options)

    def _each(self):
        return zip(self.slices, self.comparisons, strict=True)

    def _heading(self) -> str:
        first = self.comparisons[0]
        over = " × ".join(self.over) if isinstance(self.over, tuple) else self.over
        what = first.outcome or "outcome"
        by = " + ".join(first.by)
        return (
            f"SliceComparison({what} by {by} over {over}; {len(first.models)} models in "
            f"{fmt.count(len(self.slices), 'slice')}; {self.n_family:,} pairs in one family, "
            f"p adjusted by {self.adjust})"
        )

    def _blocks(self) -> list[Lines | Table]:
        rows = []
        for s, c in self._each():
            board = c.leaderboard()  # best first
            chosen = [str(m) for m in board.loc[board["in_top_set"], "model"]]
            shown = ", ".join(chosen[:4]) + (f" (+{len(chosen) - 4})" if len(chosen) > 4 else "")
            rows.append(
                (s, c.n_items, c.n_clusters, board["model"].iloc[0], board["score"].iloc[0],
                 shown, int(np.nanmax(c.tier)),
                 f"{c.n_separated_neighbours} of {len(c.models) - 1}")
            )  # fmt: skip
        leads = self.leads().head(15)
        pct = f"{100 * self.slice_confidence:.3g}%"
        shown_leads = tuple(
            (r.slice, f"{r.leader} > {r.trailer}", r.delta, fmt.interval(r.low, r.high),
             r.p_value, r.p_family)
            for r in leads.itertuples()
        )  # fmt: skip
        n_leads = int((self.pairs()["p_family"] < 1.0 - self.confidence).sum())
        top = self.comparisons[0].top
        title = (
            f"leads that survive the family ({n_leads} of {self.n_family:,}; "
            f"{min(15, n_leads)} shown, largest first)"
        )
        return [
            Table(
                (
                    "slice",
                    "items",
                    "clusters",
                    "best",
                    "score",
                    "could be first" if top == 1 else f"could be among the best {top}",
                    "tiers",
                    "separated neighbours",
                ),
                tuple(rows),
            ),
            Lines(
                (
                    f"each slice at {pct} confidence (Bonferroni over {len(self.slices)} "
                    "slices), so the rank sets and tiers of every slice hold together at "
                    f"{self.confidence:.0%}",
                ),
            ),
            Table(("slice", "lead", "delta", f"{pct} CI", "p", "p family"), shown_leads, title),
        ]


@policy.warns_once
def build_slice_comparison(
    parts: Sequence[tuple[Any, ComparisonDesign]],
    options: opt.PairedOptions,
    *,
    baseline: Any,
    over: Any,
) -> SliceComparison:
    """``compare(..., over=)`` on one design per slice."""
    level = 1.0 - (1.0 - options.confidence) / len(parts)
    each = dataclasses.replace(options, confidence=level)
    comparisons = []
    for label, design in parts:
        with adapters.in_slice(over, label):
            comparisons.append(build_comparison(design, each, baseline=baseline))
    p_family = family_p_values([c.p_value for c in comparisons], options.adjust)
    n_family = int(sum(np.isfinite(p).sum() for p in map(np.asarray, p_family)))
    notes = [
        f"{len(parts)} slices of {over!r}; every pair's p-value adjusted by {options.adjust} "
        f"over all {n_family:,} pairs of every slice (p_family); each slice's intervals, rank "
        f"sets and tiers at {100 * level:.3g}% confidence, Bonferroni over the slices"
    ]
    models = {c.models for c in comparisons}
    if len(models) > 1:
        notes.append("the slices do not all hold the same models: each ranks its own")
    return SliceComparison(
        over=tuple(str(o) for o in over) if isinstance(over, (list, tuple)) else str(over),
        slices=tuple(label for label, _ in parts),
        comparisons=tuple(comparisons),
        p_family=tuple(p_family),
        adjust=options.adjust,
        confidence=options.confidence,
        slice_confidence=level,
        n_family=n_family,
        notes=tuple(notes),
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
    rank_method: opt.RankMethod = "auto",
    top: int = 1,
    over: Hashable | Sequence[Hashable] | None = None,
) -> Comparison | SliceComparison:
    """Compare many models on the same clustered items.

    ``data`` is long: one row per (model, item, run), the model in column ``model`` and the
    item key in ``on`` (column(s), or the index); rows sharing the model and the item are an
    error unless ``rerun`` names the run-id column, and then are averaged. A (case, rerun)
    Dataset holds the models along a ``model`` dim and its cases are the items. Returns a
    ``Comparison`` with every pairwise difference (or each model against ``baseline``),
    cluster-robust (CR2 by default) with p-values adjusted across the family
    (``adjust="holm"`` controls the family-wise error, Holm 1979; ``"bh"`` the false
    discovery rate, Benjamini & Hochberg 1995), and a leaderboard: each model's score with
    its ``cluster_ci`` interval (``method="auto"``), its rank with a simultaneous and a
    marginal rank set, its tier and whether it could be among the best ``top``. Models come
    in sorted label order (in
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
        ``missing="ipw"``). The bootstraps share one set of cluster draws over all
        models; ``"bootstrap_t"`` studentises each pair by its own replicate
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
        variance (all pairs from one matrix product), and the bootstraps (and
        ``rank_method="bootstrap"``) use Rao–Wu draws within strata shared by every model.
        ``method`` is then ``"auto"``, ``"cr1"`` or a bootstrap, not ``"cr2"``.
    nest : bool
        With ``strata``: cluster ids are local to their stratum.
    lonely : {"fail", "adjust", "average", "certainty"}
        With ``strata``: a stratum with a single cluster.
    n_resamples : int
        Replicates of the shared cluster bootstrap, and draws of the rank sets' critical
        values.
    rng : int, numpy.random.Generator or None
        Seed or generator of the bootstraps (None: a fixed default seed, as in ``cluster_ci``).
    case : dim name
        For a Dataset: the case dim.
    crossed : bool
        The ``by`` columns are crossed groupings (question × template), each counted on its
        own: every pair's variance is the multi-way sum (Cameron, Gelbach & Miller 2011) of
        its per-item differences, with t on ``min(G_j) - 1`` df, and every model's score
        interval is ``cluster_ci(crossed=True)``'s; method ``auto`` (= ``cr1``) or
        ``cr1``; the rank sets draw from the multi-way covariance (``rank_method="guarded"``;
        the cluster bootstrap has no crossed form).
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
    rank_method : {"auto", "guarded", "t", "normal", "bootstrap"}
        Where the critical values of the rank sets come from (Mogstad, Romano, Shaikh &
        Wilhelm 2024; every ordered pair of models a one-sided test, studentised by the
        pairs' cluster-robust variance, with Romano & Wolf's step-down). ``"t"``: the
        maximum over pairs in ``n_resamples`` draws from the multivariate t on the
        clusters' df with the cluster-robust joint covariance of the scores;
        ``"guarded"``: the same, never below Holm's bound (the t quantile at
        ``1 - alpha / n`` for the ``n`` pairs still open), which holds the family's level
        where the draws cannot (fewer clusters than models); ``"normal"``: draws from the
        normal law of that covariance, as R ``csranks``; ``"bootstrap"``: the replicates of
        the cluster bootstrap that every model shares (Rao–Wu within strata). ``"auto"``
        is ``"guarded"``, the choice of the coverage study (``docs/coverage-ranks.md``,
        ``docs/coverage-ranks-tied.md``).
    top : int, default 1
        ``in_top_set`` marks the models that could be among the best ``top`` (their
        simultaneous lower rank bound is at most ``top``): with 1, the models that could
        be first.
    over : column label or list of labels, optional
        Compare slice by slice (a category, task or language column; for a Dataset a
        coordinate along ``case``), with one family over every slice's pairs: returns a
        ``SliceComparison`` whose ``p_family`` adjusts every pair's p-value over all
        slices (``adjust``) and whose slices' intervals and rank sets are each at
        1 − (1 − ``confidence``) / S (Bonferroni over the S slices), so a lead on one slice
        is reported only when it survives the search through all of them.

    Returns
    -------
    Comparison, or SliceComparison with ``over``

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
    columns = adapters.columns_of(
        data, outcome, by, model=model, on=on, rerun=rerun, responded=responded, strata=strata,
        weights=weights, over=over, layout=(case, "rerun"),
    )  # fmt: skip
    options = opt.compare_options(
        columns,
        how=how,
        estimand=estimand,
        method=method,
        adjust=adjust,
        confidence=confidence,
        missing=missing,
        nest=nest,
        lonely=lonely,
        n_resamples=n_resamples,
        rng=rng,
        crossed=crossed,
        orientation=orientation,
        rank_method=rank_method,
        top=top,
    )
    parts = adapters.comparison_designs(
        data, columns, how=options.how, missing=options.missing, nest=options.nest
    )
    if over is None:
        return build_comparison(parts[0][1], options, baseline=baseline)
    return build_slice_comparison(parts, options, baseline=baseline, over=over)
