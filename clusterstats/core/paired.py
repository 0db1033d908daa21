"""Paired comparisons of models evaluated on the same clustered items.

Everything works on per-item values (reruns already averaged): pairing removes item
difficulty, and the cluster-robust variance of the per-item differences keeps the clustering.
For many models at once (``compare``) the same algebra is done for every pair with one matrix
product on per-cluster residual totals, and one set of bootstrap draws serves every model.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import NamedTuple

import numpy as np
from numpy.typing import NDArray

from clusterstats.core._lazy import special, stats
from clusterstats.core.bootstrap import CHUNK_ELEMENTS
from clusterstats.core.crossed import crossed_pairwise
from clusterstats.core.grouping import ClusterSums, cluster_sums
from clusterstats.core.intervals import auto_method
from clusterstats.core.ranks import RankSummary, score_ranks, summarize_ranks
from clusterstats.core.strata import rao_wu_weights, stratified_pairwise, weighted_means
from clusterstats.core.summary import summarize_interval, uneven_sizes_df
from clusterstats.core.variance import (
    cluster_robust,
    estimate,
    satterthwaite_df_cr2,
    working_model_df,
)
from clusterstats.errors import (
    DegenerateDataError,
    DegenerateDataWarning,
    TooFewClustersError,
    held_back,
    warn,
)

__all__ = [
    "McNemar",
    "adjust_p_values",
    "clustered_mcnemar",
    "higher_minus_lower",
    "mcnemar",
    "pairwise_cluster_robust",
    "rerun_variance_share",
    "without_degenerate",
]


class McNemar(NamedTuple):
    a_only: int  # items passed by A and failed by B
    b_only: int
    statistic: float
    p_value: float
    exact_p_value: float


def mcnemar(a: NDArray[np.float64], b: NDArray[np.float64]) -> McNemar:
    """McNemar's test on paired binary items: ``(n_ab - n_ba)^2 / (n_ab + n_ba)`` on chi2(1),
    and the exact binomial version (as ``statsmodels.stats.contingency_tables.mcnemar``)."""
    a_only = int(np.count_nonzero((a == 1) & (b == 0)))
    b_only = int(np.count_nonzero((a == 0) & (b == 1)))
    discordant = a_only + b_only
    if discordant == 0:
        return McNemar(a_only, b_only, 0.0, 1.0, 1.0)
    statistic = (a_only - b_only) ** 2 / discordant
    exact = float(stats.binomtest(min(a_only, b_only), discordant, 0.5).pvalue)
    return McNemar(a_only, b_only, statistic, float(special.chdtrc(1, statistic)), exact)


def clustered_mcnemar(
    a: NDArray[np.float64], b: NDArray[np.float64], codes: NDArray[np.intp], n_clusters: int
) -> tuple[float, float]:
    """Obuchowski (1998): ``(K-1)/K (sum_k (b_k - c_k))^2 / sum_k (b_k - c_k)^2`` on chi2(1),
    with ``b_k, c_k`` the discordant counts of cluster k. It equals the null-centred CR1 Wald
    statistic of the mean difference."""
    diff = np.bincount(codes, weights=(a == 1) & (b == 0), minlength=n_clusters) - np.bincount(
        codes, weights=(a == 0) & (b == 1), minlength=n_clusters
    )
    denominator = float(diff @ diff)
    if denominator == 0.0:
        return 0.0, 1.0
    k = n_clusters
    statistic = (k - 1) / k * float(diff.sum()) ** 2 / denominator
    return statistic, float(special.chdtrc(1, statistic))


def rerun_variance_share(
    within_a: NDArray[np.float64],
    runs_a: NDArray[np.float64],
    within_b: NDArray[np.float64],
    runs_b: NDArray[np.float64],
    diff: NDArray[np.float64],
) -> float:
    """Share of the per-item differences' variance that comes from rerun noise.

    Miller (2024): the per-item mean of ``k`` runs has variance ``Var(x_i) + sigma_i^2 / k``.
    ``within_*`` are the unbiased within-item variances (NaN for items with one run); the
    share is ``(mean(sigma_A^2 / k_A) + mean(sigma_B^2 / k_B)) / Var(d)``, NaN without reruns.
    """
    parts = []
    for within, runs in ((within_a, runs_a), (within_b, runs_b)):
        ok = ~np.isnan(within)
        if not ok.any():
            return math.nan
        parts.append(float(np.mean(within[ok] / runs[ok])))
    total = float(np.var(diff, ddof=1)) if diff.shape[0] > 1 else math.nan
    if not total > 0:
        return math.nan
    return min(1.0, sum(parts) / total)


def pairwise_cluster_robust(
    cluster_totals: NDArray[np.float64], counts: NDArray[np.float64], kind: str
) -> tuple[NDArray[np.float64], NDArray[np.float64], float, NDArray[np.float64]]:
    """Means of M models and the cluster-robust variance of every pairwise difference.

    ``cluster_totals`` is ``(G, M)``: per cluster, the sum over its items of each model's
    per-item value; ``counts`` is items per cluster. Returns ``(means (M,), variance of
    mean_a - mean_b (M, M), df, variance of each model's mean (M,))``, the pooled
    (item-weighted) estimand, CR1, CR2 or CR3.
    """
    n_items = float(counts.sum())
    g = counts.shape[0]
    means = cluster_totals.sum(axis=0) / n_items
    resid = cluster_totals - np.outer(counts, means)
    if kind == "CR1":
        weights = np.full(g, g / (g - 1.0))
        df = g - 1.0
    elif kind == "CR2":
        weights = 1.0 / (1.0 - counts / n_items)
        df = satterthwaite_df_cr2(counts, n_items)
    else:  # CR3, the jackknife
        weights = 1.0 / (1.0 - counts / n_items) ** 2
        df = working_model_df(counts, 0.0, "pooled", jackknife=True)
    cross = (resid * weights[:, None]).T @ resid / n_items**2
    diag = np.diag(cross)
    variance = diag[:, None] + diag[None, :] - 2.0 * cross
    return means, np.maximum(variance, 0.0), df, diag


def adjust_p_values(p_values: NDArray[np.float64], method: str) -> NDArray[np.float64]:
    """Holm (family-wise error) or Benjamini–Hochberg (false discovery rate) adjustment."""
    p = np.asarray(p_values, dtype=np.float64)
    m = p.shape[0]
    if m == 0:
        return p
    order = np.argsort(p, kind="stable")
    ranked = p[order]
    if method == "holm":
        adjusted = np.maximum.accumulate((m - np.arange(m)) * ranked)
    elif method in ("bh", "fdr_bh"):
        adjusted = np.minimum.accumulate(m / np.arange(m, 0, -1) * ranked[::-1])[::-1]
    elif method == "none":
        adjusted = ranked
    else:
        raise ValueError(f"unknown p-value adjustment {method!r}; expected 'holm', 'bh', 'none'")
    out = np.empty(m)
    out[order] = np.minimum(adjusted, 1.0)
    return out


#: Draw counts kept (replicates x clusters) for compare's bootstrap-t to go through once per
#: block of pairs; above this many the draws are made again from the generator's saved state.
KEPT_DRAW_ELEMENTS = 1 << 24
#: Elements of one per-pair replicate array (replicates x pairs) in compare's bootstrap-t:
#: the pairs are studentised a block at a time, so memory does not grow with the models.
PAIR_BLOCK_ELEMENTS = 1 << 21
#: Pairs in one matrix product of the draws with the pairs' squared differences. A product's
#: rounding depends on its shape, so every pair's sums come from a product of this width
#: (the last padded), and a block is a whole number of them: the answers do not depend on the
#: block size.
PAIR_PANEL = 128


def _draw_counts(rng: np.random.Generator, g: int, n_resamples: int):
    """The cluster draws of :func:`shared_replicates`, chunk by chunk: ``(start, stop, counts
    (rows, g))``, each row how often each cluster was drawn in one replicate."""
    chunk = max(1, CHUNK_ELEMENTS // g)
    offsets = (np.arange(chunk) * g)[:, None]
    for start in range(0, n_resamples, chunk):
        stop = min(start + chunk, n_resamples)
        rows = stop - start
        drawn = rng.integers(0, g, size=(rows, g))
        drawn += offsets[:rows]  # replicate r counts into cells r*g .. r*g + g - 1
        yield start, stop, np.bincount(drawn.ravel(), minlength=rows * g).reshape(rows, g)


class ClusterDraws:
    """The shared cluster draws of one ``compare``, to be gone through once per block of pairs.

    The first pass draws from the caller's generator (advancing it as one pass would); later
    passes give the same counts, kept when they are few (:data:`KEPT_DRAW_ELEMENTS`) and
    otherwise drawn again from a copy of the generator's state, so memory stays bounded by a
    chunk of draws whatever the number of clusters.
    """

    def __init__(self, rng: np.random.Generator, n_clusters: int, n_resamples: int) -> None:
        self.n_clusters, self.n_resamples = n_clusters, n_resamples
        self._rng = rng
        self._state = rng.bit_generator.state
        self._bit_generator = type(rng.bit_generator)
        keep = n_resamples * n_clusters <= KEPT_DRAW_ELEMENTS
        self._kept: list[NDArray[np.floating]] | None = [] if keep else None

    def first(self):
        """The draws, from the caller's generator."""
        for start, stop, draws in _draw_counts(self._rng, self.n_clusters, self.n_resamples):
            if self._kept is not None:  # counts of at most G are exact in single precision
                self._kept.append(draws.astype(np.float32))
            yield start, stop, draws

    def again(self, dtype: type = np.float64):
        """The same draws once more, in ``dtype`` (kept ones in one piece, converted once, for
        one product per panel)."""
        if self._kept is not None:
            if len(self._kept) > 1 or self._kept[0].dtype != dtype:
                self._kept = [np.concatenate(self._kept).astype(dtype, copy=False)]
            yield 0, self.n_resamples, self._kept[0]
            return
        replay = self._bit_generator()
        replay.state = self._state
        yield from _draw_counts(np.random.Generator(replay), self.n_clusters, self.n_resamples)


def _exact_single(values: NDArray[np.float64], n_clusters: int) -> bool:
    """Whole numbers whose drawn sums stay below 2^24: exact in single precision."""
    return (
        bool(np.all(values == np.rint(values)))
        and n_clusters * float(np.abs(values).max(initial=0.0)) < 2**24
    )


def shared_replicates(
    cluster_totals: NDArray[np.float64],
    counts: NDArray[np.float64],
    *,
    n_resamples: int,
    rng: np.random.Generator,
    extra: NDArray[np.float64] | None = None,
    draws: ClusterDraws | None = None,
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """Cluster bootstrap replicates of every model's mean from one set of cluster draws
    shared by all models. Returns ``(replicate means (B, M), replicate sums of the
    ``extra`` per-cluster columns (B, k))`` (``k = 0`` without ``extra``).

    Each chunk of draws becomes a count matrix ``C`` (replicates x clusters), and every
    model's resampled total is ``C @ cluster_totals``: one matrix product, no loop over models.
    The draws are those of :func:`clusterstats.core.bootstrap.resample_cluster_sums` from the
    same generator state, so one model pair's replicates are ``paired_delta``'s. With
    ``draws`` (made on ``rng``), they are taken from there, to be gone through again.
    """
    g, m = cluster_totals.shape
    extra = np.empty((g, 0)) if extra is None else extra
    stacked = np.column_stack([cluster_totals, counts, extra])
    # Whole-number sums that stay below 2^24 are exact in single precision: the product of
    # the draw counts and the totals (most of the cost) then runs at twice the speed and
    # gives the same numbers bit for bit.
    dtype = np.float32 if _exact_single(stacked, g) else np.float64
    operand = stacked.astype(dtype)
    means = np.empty((n_resamples, m))
    extra_sums = np.empty((n_resamples, extra.shape[1]))
    chunks = _draw_counts(rng, g, n_resamples) if draws is None else draws.first()
    for start, stop, drawn in chunks:
        sums = (drawn.astype(dtype) @ operand).astype(np.float64)
        means[start:stop] = sums[:, :m] / sums[:, m : m + 1]
        extra_sums[start:stop] = sums[:, m + 1 :]
    return means, extra_sums


def stratified_replicates(
    cluster_totals: NDArray[np.float64],
    counts: NDArray[np.float64],
    strata: NDArray[np.intp],
    estimand: str,
    *,
    n_resamples: int,
    rng: np.random.Generator,
) -> NDArray[np.float64]:
    """As :func:`shared_replicates`, with Rao–Wu replicate weights drawn within strata."""

    g, m = cluster_totals.shape
    chunk = max(1, CHUNK_ELEMENTS // g)
    means = np.empty((n_resamples, m))
    for start in range(0, n_resamples, chunk):
        rows = min(chunk, n_resamples - start)
        weights = rao_wu_weights(strata, rows, rng)
        means[start : start + rows] = weighted_means(
            weights, cluster_totals, counts, strata, estimand
        )
    return means


class PairedSummary(NamedTuple):
    delta: float
    se: float
    low: float
    high: float
    df: float
    method: str
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
    n_resamples: int | None
    notes: tuple[str, ...]


def summarize_paired(
    a: NDArray[np.float64],
    b: NDArray[np.float64],
    codes: NDArray[np.intp],
    *,
    estimand: str,
    method: str,
    confidence: float,
    single_run_binary: bool,
    within_a: NDArray[np.float64],
    runs_a: NDArray[np.float64],
    within_b: NDArray[np.float64],
    runs_b: NDArray[np.float64],
    n_resamples: int = 9999,
    rng: np.random.Generator | None = None,
) -> PairedSummary:
    """Everything ``paired_delta`` reports, from per-item values of A and B (``delta = A - B``).

    ``method`` is one of ``auto`` (see :func:`clusterstats.core.intervals.auto_method`: the
    studentized bootstrap up to 2,000 clusters, CR2 above), ``naive``, ``cr1``, ``cr2``,
    ``bootstrap_bca`` (or ``bootstrap``), ``bootstrap_percentile`` and ``bootstrap_t``; the
    bootstraps resample whole clusters, both models' items together, which is the cluster
    bootstrap of the per-item differences.
    """

    n_clusters = int(codes.max()) + 1
    if n_clusters < 2:
        # before any variance: a paired eval still running (Inspect's live metrics) has one
        raise TooFewClustersError(
            f"found {n_clusters} cluster with items on both sides; at least 2 are needed to "
            "estimate the between-cluster variance of the difference"
        )
    diff = a - b
    notes: list[str] = []
    if method == "auto":
        method = auto_method(is_binary=False, n_clusters=n_clusters)
    kind = "CR1" if method == "cr1" else "CR2"
    sums_a = cluster_sums(a, codes, n_clusters)
    sums_b = cluster_sums(b, codes, n_clusters)
    var_a = cluster_robust(sums_a, estimand, kind).variance
    var_b = cluster_robust(sums_b, estimand, kind).variance
    se_unpaired = math.sqrt(var_a + var_b)
    correlation = float(np.corrcoef(a, b)[0, 1]) if np.ptp(a) > 0 and np.ptp(b) > 0 else math.nan
    if single_run_binary:
        mc = mcnemar(a, b)
        cm_stat, cm_p = clustered_mcnemar(a, b, codes, n_clusters)
        mc_fields = (
            mc.a_only,
            mc.b_only,
            mc.statistic,
            mc.p_value,
            mc.exact_p_value,
            cm_stat,
            cm_p,
        )
    else:
        mc_fields = (None, None, math.nan, math.nan, math.nan, math.nan, math.nan)
    share = rerun_variance_share(within_a, runs_a, within_b, runs_b, diff)

    binary_values = single_run_binary or bool(np.all(np.isin(np.concatenate([a, b]), (0.0, 1.0))))
    magnitude = max(float(np.max(np.abs(a))), float(np.max(np.abs(b))))
    constant = float(np.ptp(diff)) <= 16.0 * np.finfo(float).eps * magnitude
    if constant and not (binary_values and float(diff[0]) in (-1.0, 0.0, 1.0)):
        if not np.any(diff != 0.0):
            raise DegenerateDataError(
                "the two sides have identical values on every item: no difference, and no "
                "information about how large one could be"
            )
        exactly = "" if not np.any(diff != diff[0]) else " (up to rounding)"
        raise DegenerateDataError(
            f"A - B is {float(np.mean(diff)):g} on every item{exactly}: a constant difference "
            "has no spread, so no interval can be estimated for it"
        )
    if constant:
        # Binary sides that agree everywhere (or disagree everywhere, the same way): bound
        # the share of items where they differ (or agree), which bounds delta, with
        # Clopper-Pearson on 0 events in G clusters (the clustered rule of three).
        sign = float(diff[0])
        bound = 1.0 - ((1.0 - confidence) / 2.0) ** (1.0 / n_clusters)
        if sign == 0.0:
            low, high = -bound, bound
            what = "agree on every item, so the difference has no variance; the interval bounds"
            events = "the share of discordant items"
        else:
            low, high = (1.0 - bound, 1.0) if sign > 0 else (-1.0, bound - 1.0)
            side = "first" if sign > 0 else "second"
            what = f"differ on every item (the {side} side passes each one), so the "
            what += "difference has no variance; the interval bounds"
            events = "the share of items where they agree"
        message = f"the two {what} {events} by Clopper-Pearson on 0 of {n_clusters} clusters"
        warn(message, DegenerateDataWarning)
        return PairedSummary(
            sign,
            math.nan,
            low,
            high,
            math.nan,
            "discordance_bound_fallback",
            1.0 if sign == 0.0 else math.nan,  # see the McNemar tests for the other
            "none",
            estimate(sums_a, estimand),
            estimate(sums_b, estimand),
            se_unpaired,
            correlation,
            math.nan,  # the naive interval would be zero-width too
            math.nan,
            math.nan,
            *mc_fields,
            share,
            None,
            (message,),
        )

    interval = summarize_interval(
        cluster_sums(diff, codes, n_clusters),
        estimand=estimand,
        method=method,
        confidence=confidence,
        is_binary=False,
        n_resamples=n_resamples,
        rng=rng,
        outcome_range=(-1.0, 1.0) if binary_values else None,
        null_value=0.0,
        unbounded_fallback=(
            (
                *discordance_bounds(
                    np.bincount(codes, weights=(diff > 0).astype(float), minlength=n_clusters),
                    np.bincount(codes, weights=(diff < 0).astype(float), minlength=n_clusters),
                    np.bincount(codes, minlength=n_clusters).astype(float),
                    estimand=estimand,
                    confidence=confidence,
                ),
                *DISCORDANCE_SOURCES,
            )
            if binary_values
            else None
        ),
    )
    notes.extend(interval.notes)
    if interval.method in ("cr1", "cr2", "cr2_ik", "cr3", "cr3_ik"):
        se_test, df_test, test = interval.se, interval.df, f"{interval.method}_t"
    else:
        # the jackknife (CR3) with the df of uneven sizes: the interval bootstrap_t never
        # falls inside
        diff_sums = cluster_sums(diff, codes, n_clusters)
        cr3 = cluster_robust(diff_sums, estimand, "CR3")
        se_test = math.sqrt(cr3.variance)
        df_test = uneven_sizes_df(diff_sums, estimand, jackknife=True)
        test = "cr3_ik_t"
    if se_test > 0 and math.isfinite(df_test):
        t_stat = interval.estimate / se_test
        p_value = float(2.0 * special.stdtr(df_test, -abs(t_stat)))
    else:
        p_value, test = math.nan, "none"
    if interval.method == "score":
        # the test the interval inverts
        p_value, test = interval.p_value, "score_t"
    elif interval.method in ("bootstrap_t", "bootstrap_t_or_score") and not math.isnan(
        interval.p_value
    ):
        # The interval is the union of the jackknife's and the bootstrap-t's (and the score
        # interval), so it excludes 0 only if every test rejects: the largest p-value agrees
        # with it.
        p_value, test = max(p_value, interval.p_value), interval.method
    return PairedSummary(
        delta=interval.estimate,
        se=interval.se,
        low=interval.low,
        high=interval.high,
        df=interval.df,
        method=interval.method,
        p_value=p_value,
        test=test,
        mean_a=estimate(sums_a, estimand),
        mean_b=estimate(sums_b, estimand),
        se_unpaired=se_unpaired,
        correlation=correlation,
        naive_low=interval.naive_low,
        naive_high=interval.naive_high,
        icc=interval.icc,
        mcnemar_a_only=mc_fields[0],
        mcnemar_b_only=mc_fields[1],
        mcnemar_statistic=mc_fields[2],
        mcnemar_p_value=mc_fields[3],
        mcnemar_exact_p_value=mc_fields[4],
        clustered_mcnemar_statistic=mc_fields[5],
        clustered_mcnemar_p_value=mc_fields[6],
        rerun_variance_share=share,
        n_resamples=interval.n_resamples,
        notes=tuple(notes),
    )


class ComparisonSummary(NamedTuple):
    pair_a: NDArray[np.intp]
    pair_b: NDArray[np.intp]
    delta: NDArray[np.float64]
    se: NDArray[np.float64]
    low: NDArray[np.float64]
    high: NDArray[np.float64]
    df: float
    p_value: NDArray[np.float64]
    p_adjusted: NDArray[np.float64]
    method: str
    means: NDArray[np.float64]
    rank: NDArray[np.float64]
    ranks: RankSummary  # the rank confidence sets and tiers
    degenerate: NDArray[np.bool_]  # pairs whose difference has no spread across clusters
    notes: tuple[str, ...] = ()


def higher_minus_lower(summary: ComparisonSummary) -> ComparisonSummary:
    """The same comparisons, each turned so that the higher-scoring model comes first and
    ``delta >= 0``; a pair whose models tie keeps its order.

    Turning a pair negates its difference and swaps and negates its bounds; the standard
    error, the degrees of freedom and the p-values (two-sided) are unchanged, and so is a
    percentile bootstrap interval, whose quantiles of the negated draws are the negated
    quantiles of the draws.

    >>> import numpy as np
    >>> s = ComparisonSummary(
    ...     pair_a=np.array([0]), pair_b=np.array([1]), delta=np.array([-0.1]),
    ...     se=np.array([0.04]), low=np.array([-0.2]), high=np.array([0.02]), df=9.0,
    ...     p_value=np.array([0.03]), p_adjusted=np.array([0.03]), method="cr2",
    ...     means=np.array([0.4, 0.5]), rank=np.array([2.0, 1.0]), ranks=None,
    ...     degenerate=np.array([False]))
    >>> t = higher_minus_lower(s)
    >>> t.pair_a.tolist(), t.pair_b.tolist(), t.delta.tolist(), t.low.tolist(), t.high.tolist()
    ([1], [0], [0.1], [-0.02], [0.2])
    """
    turn = summary.delta < 0
    return summary._replace(
        pair_a=np.where(turn, summary.pair_b, summary.pair_a),
        pair_b=np.where(turn, summary.pair_a, summary.pair_b),
        delta=np.where(turn, -summary.delta, summary.delta),
        low=np.where(turn, -summary.high, summary.low),
        high=np.where(turn, -summary.low, summary.high),
    )


#: Where :func:`discordance_bounds` come from, for the notes: the lower bound, the upper.
DISCORDANCE_SOURCES = (
    "minus the upper bound of the clustered rate of items where B alone passes (delta = "
    "A − B is at least minus that share)",
    "the upper bound of the clustered rate of items where A alone passes (delta = A − B "
    "is at most that share)",
)


def discordance_bounds(
    a_only: NDArray[np.float64],
    b_only: NDArray[np.float64],
    counts: NDArray[np.float64],
    *,
    estimand: str,
    confidence: float,
) -> tuple[float, float]:
    """Bounds on ``delta = p₊ − p₋`` of two 0/1 systems from the items where A alone passes
    (share ``p₊``) and where B alone does (``p₋``): ``−U(p₋) ≤ delta ≤ U(p₊)``.

    ``a_only`` and ``b_only`` are per-cluster counts of those items (or upper bounds on
    them), ``counts`` the items per cluster; ``U`` is the upper bound of ``cluster_ci``'s
    default interval for a clustered binary rate. Where the discordant items are so few
    that most bootstrap draws hold none on one side, the studentized bootstrap cannot bound
    that side; this bounds it by counting them, as a rare rate is bounded, and never claims
    more than the rate of discordance in that direction allows.

    >>> import numpy as np
    >>> low, high = discordance_bounds(
    ...     np.array([1.0, 0, 0, 0]), np.zeros(4), np.full(4, 10.0),
    ...     estimand="pooled", confidence=0.95)
    >>> low < 0 < high < 1
    True
    """

    def upper(events: NDArray[np.float64]) -> float:
        with held_back():  # the rate's own notes are not the difference's
            return summarize_interval(
                ClusterSums(counts, events, events, 0.0),  # 0/1 events: squares = totals
                estimand=estimand,
                method="auto",
                confidence=confidence,
                is_binary=True,
                n_resamples=0,
            ).high

    return -upper(b_only), upper(a_only)


def degenerate_pairs(
    cluster_totals: NDArray[np.float64],
    counts: NDArray[np.float64],
    pair_a: NDArray[np.intp],
    pair_b: NDArray[np.intp],
    pair_variance: NDArray[np.float64],
    own_variance: NDArray[np.float64],
    strata: NDArray[np.intp] | None = None,
) -> NDArray[np.bool_]:
    """The pairs whose per-cluster mean difference is the same in every cluster (of each
    stratum) up to rounding: their cluster-robust variance is zero, and what the
    difference-of-variances arithmetic returns for them is rounding residue, not a variance.

    Only pairs whose variance is already tiny next to the two models' own variances are
    examined, so the check costs nothing on ordinary data.
    """
    scale = own_variance[pair_a] + own_variance[pair_b]
    suspects = np.flatnonzero(~(pair_variance > 1e-8 * scale))
    flags = np.zeros(pair_a.shape[0], dtype=bool)
    if suspects.size == 0:
        return flags
    means = cluster_totals / counts[:, None]
    groups = np.zeros(counts.shape[0], dtype=np.intp) if strata is None else strata
    eps = np.finfo(float).eps
    for start in range(0, suspects.size, 256):  # bounded (G, 256) temporaries
        chosen = suspects[start : start + 256]
        a, b = means[:, pair_a[chosen]], means[:, pair_b[chosen]]
        difference = a - b
        magnitude = np.maximum(np.abs(a).max(axis=0), np.abs(b).max(axis=0))
        spread = np.zeros(chosen.size)
        for h in np.unique(groups):
            inside = difference[groups == h]
            spread = np.maximum(spread, inside.max(axis=0) - inside.min(axis=0))
        flags[chosen] = spread <= 16.0 * eps * magnitude
    return flags


def summarize_comparison(
    cluster_totals: NDArray[np.float64],
    counts: NDArray[np.float64],
    *,
    estimand: str,
    method: str,
    adjust: str,
    confidence: float,
    baseline: int | None,
    n_resamples: int,
    rng: np.random.Generator,
    strata: NDArray[np.intp] | None = None,
    lonely: str = "fail",
    outcome_range: tuple[float, float] | None = None,
    memberships: Sequence[NDArray[np.intp]] | None = None,
    names: Sequence[str] = (),
    item_products: NDArray[np.float64] | None = None,
    binary_items: bool = False,
    rank_method: str = "bootstrap",
) -> ComparisonSummary:
    """Every pairwise difference (or each model against ``baseline``) and rank sets.

    With ``memberships`` (each cell's code in every crossed grouping, named ``names``), the
    pairs' variances are multi-way (:func:`clusterstats.core.crossed.crossed_pairwise`),
    their intervals t on ``min(G_j) - 1`` df, and the rank sets draw their critical values
    from the multi-way covariance (``rank_method="bootstrap"`` becomes ``"guarded"``: the cluster
    bootstrap has no crossed form).

    ``cluster_totals`` is ``(G, M)`` per-cluster sums of per-item values; ``counts`` the
    items per cluster. For the ``cluster_mean`` estimand each cluster's mean is one unit.
    Analytic methods (``cr2``, ``cr1``) use one matrix product for all pairs; the bootstrap
    (percentile) reuses the rank bootstrap's replicates, so one set of draws serves every
    model and every pair. ``bootstrap_t`` studentises each pair's replicates by their own
    CR1 standard error, from the same draws, and is never narrower than the jackknife (CR3)
    with the df of uneven cluster sizes (as in ``paired_delta``, whose interval it equals on
    the same seed);
    it is clipped to ``outcome_range``. ``item_products`` (``(M, M)``, the sums over items of
    the products of two models' per-item values) gives each pair's Moulton ICC, which that
    df needs (:func:`clusterstats.core.summary.uneven_sizes_df`); without it, CR2's
    Satterthwaite df is used. ``binary_items``: ``cluster_totals`` count the passes of 0/1
    items (one run each, unweighted), so a pairwise bound the bootstrap-t cannot give comes
    from the discordant items (:func:`discordance_bounds`).

    The rank sets (:func:`clusterstats.core.ranks.summarize_ranks`: simultaneous, marginal
    and tiers) studentise each pair by the same cluster-robust variance as the pairs, with
    critical values from ``rank_method``: ``"bootstrap"`` (the shared replicates),
    ``"normal"``, ``"t"`` or ``"guarded"`` (on the pairs' df).
    """
    n_clusters = int(np.asarray(counts).shape[0])
    if n_clusters < 2:
        raise TooFewClustersError(
            f"found {n_clusters} cluster with items for every model; at least 2 are needed to "
            "estimate the between-cluster variance of the differences"
        )
    if memberships is not None:
        return _crossed_comparison(
            cluster_totals,
            counts,
            memberships,
            names=names,
            method=method,
            adjust=adjust,
            confidence=confidence,
            baseline=baseline,
            outcome_range=outcome_range,
            rng=rng,
            n_draws=n_resamples,
            rank_method="guarded" if rank_method == "bootstrap" else rank_method,
        )
    if method == "auto" and strata is None:
        method = auto_method(is_binary=False, n_clusters=int(counts.shape[0]))
    item_counts, item_totals = counts, cluster_totals
    if strata is not None:
        means, covariance, df = stratified_pairwise(
            cluster_totals, counts, strata, estimand, lonely=lonely
        )
        own = np.diag(covariance)
        variance = own[:, None] + own[None, :] - 2.0 * covariance
        kind = "stratified_CR1"
    elif estimand == "cluster_mean":
        cluster_totals = cluster_totals / counts[:, None]
        counts = np.ones_like(counts)
    m = cluster_totals.shape[1]
    if strata is None:
        kind = {"cr1": "CR1", "cr3": "CR3", "cr3_ik": "CR3", "bootstrap_t": "CR3"}.get(
            method, "CR2"
        )
        means, variance, df, own = pairwise_cluster_robust(cluster_totals, counts, kind)
    if baseline is None:
        pair_a, pair_b = np.triu_indices(m, k=1)
    else:
        pair_b = np.full(m - 1, baseline)
        pair_a = np.array([i for i in range(m) if i != baseline])
    delta = means[pair_a] - means[pair_b]
    se = np.sqrt(variance[pair_a, pair_b])
    with np.errstate(divide="ignore", invalid="ignore"):
        p_value = np.where(se > 0, 2.0 * special.stdtr(df, -np.abs(delta / se)), np.nan)
    q = special.stdtrit(df, 0.5 + confidence / 2)
    uneven = ("bootstrap_t", "cr2_ik", "cr3_ik")
    if strata is None and method in uneven and item_products is not None:
        # each pair's df of uneven sizes, for its interval (bootstrap_t's floor) and test
        df = pairwise_uneven_df(
            item_totals,
            item_counts,
            item_products,
            pair_a,
            pair_b,
            estimand=estimand,
            jackknife=kind == "CR3",
        )
        with np.errstate(divide="ignore", invalid="ignore"):
            p_value = np.where(se > 0, 2.0 * special.stdtr(df, -np.abs(delta / se)), np.nan)
        q = special.stdtrit(df, 0.5 + confidence / 2)
    if strata is None:
        extra = draws = None
        if method == "bootstrap_t":
            # The counts squared and the counts; each pair's own sums are drawn a block of
            # pairs at a time from the same draws (_pairwise_studentized).
            extra = np.column_stack([counts * counts, counts])
            draws = ClusterDraws(rng, n_clusters, n_resamples)
        replicates, extra_sums = shared_replicates(
            cluster_totals, counts, n_resamples=n_resamples, rng=rng, extra=extra, draws=draws
        )
    else:
        replicates = stratified_replicates(
            cluster_totals, counts, strata, estimand, n_resamples=n_resamples, rng=rng
        )
    ranks = summarize_ranks(
        means,
        variance,
        own,
        confidence=confidence,
        method=rank_method,
        rng=rng,
        n_draws=n_resamples,
        replicates=replicates,
        df=float(np.min(df)),
    )
    notes: list[str] = []
    if method in ("bootstrap", "bootstrap_percentile"):
        alpha = 1.0 - confidence
        boot = replicates[:, pair_a] - replicates[:, pair_b]
        low, high = np.quantile(boot, [alpha / 2, 1 - alpha / 2], axis=0)
        used = "bootstrap_percentile"
    elif method == "bootstrap_t":
        low, high, p_value, notes = _pairwise_studentized(
            delta,
            se,
            p_value,
            q,
            extra_sums,
            draws,
            cluster_totals,
            counts,
            pair_a,
            pair_b,
            confidence=confidence,
            outcome_range=outcome_range,
            estimand=estimand,
            binary_items=binary_items,
        )
        used = "bootstrap_t"
    else:
        low, high = delta - q * se, delta + q * se
        used = (
            method if method in ("cr2_ik", "cr3_ik") and item_products is not None else kind.lower()
        )
    degenerate = degenerate_pairs(
        cluster_totals, counts, pair_a, pair_b, variance[pair_a, pair_b], own, strata=strata
    )
    se, low, high, p_value, p_adjusted = without_degenerate(
        degenerate, se, low, high, p_value, adjust
    )
    rank = score_ranks(means)
    return ComparisonSummary(
        pair_a,
        pair_b,
        delta,
        se,
        low,
        high,
        df,
        p_value,
        p_adjusted,
        used,
        means,
        rank,
        ranks,
        degenerate,
        tuple(notes),
    )


def pairwise_uneven_df(
    cluster_totals: NDArray[np.float64],
    counts: NDArray[np.float64],
    item_products: NDArray[np.float64],
    pair_a: NDArray[np.intp],
    pair_b: NDArray[np.intp],
    *,
    estimand: str,
    jackknife: bool = False,
) -> NDArray[np.float64]:
    """The df of uneven cluster sizes (:func:`clusterstats.core.summary.uneven_sizes_df`) of
    each pair's per-item differences: its Moulton ICC from the clusters' totals of the
    differences and the sum of their squares over items, ``P_aa + P_bb - 2 P_ab``; of the
    CR3 variance with ``jackknife``."""
    n_items = float(counts.sum())
    if estimand == "pooled":
        own = working_model_df(counts, 0.0, "pooled", jackknife=jackknife)
    else:
        own = counts.shape[0] - 1.0
    g = counts.shape[0]
    n_pairs = pair_a.shape[0]
    by_model = np.ascontiguousarray(cluster_totals.T)
    diagonal = np.diag(item_products)
    # moulton_icc_of, for a block of pairs at once (one row each)
    pair_count = float(counts @ counts) - n_items
    out = np.empty(n_pairs)
    block = max(1, CHUNK_ELEMENTS // max(1, g))
    for first in range(0, n_pairs, block):
        a, b = pair_a[first : first + block], pair_b[first : first + block]
        totals = by_model[a] - by_model[b]
        delta = totals.sum(axis=1) / n_items
        squares = diagonal[a] + diagonal[b] - 2.0 * item_products[a, b]
        residual_squares = squares - n_items * delta**2
        residual_totals = totals - delta[:, None] * counts
        rho = np.zeros(a.shape[0])
        if pair_count > 0:
            spread = residual_squares > 0
            covariance = (
                np.einsum("ij,ij->i", residual_totals, residual_totals) - residual_squares
            ) / pair_count
            with np.errstate(divide="ignore", invalid="ignore"):
                ratio = covariance / (residual_squares / n_items)
            rho = np.where(spread, np.minimum(np.maximum(ratio, 0.0), 1.0), 0.0)
        working = working_model_df(
            np.broadcast_to(counts, (a.shape[0], g)), rho[:, None], estimand, jackknife=jackknife
        )
        # as uneven_sizes_df: within rounding of the independent rows' df, that df
        out[first : first + block] = np.where(working >= own * (1.0 - 1e-12), own, working)
    return out


def without_degenerate(
    degenerate: NDArray[np.bool_],
    se: NDArray[np.float64],
    low: NDArray[np.float64],
    high: NDArray[np.float64],
    p_value: NDArray[np.float64],
    adjust: str,
) -> tuple[NDArray[np.float64], ...]:
    """No interval (NaN) rather than a zero-width one for the degenerate pairs, and the
    p-values adjusted across the pairs that have one."""
    if degenerate.any():
        se, low, high, p_value = (np.where(degenerate, np.nan, x) for x in (se, low, high, p_value))
    finite = ~np.isnan(p_value)
    p_adjusted = np.full_like(p_value, np.nan)
    p_adjusted[finite] = adjust_p_values(p_value[finite], adjust)
    return se, low, high, p_value, p_adjusted


def _crossed_comparison(
    cluster_totals: NDArray[np.float64],
    counts: NDArray[np.float64],
    memberships: Sequence[NDArray[np.intp]],
    *,
    names: Sequence[str],
    method: str,
    adjust: str,
    confidence: float,
    baseline: int | None,
    outcome_range: tuple[float, float] | None,
    rng: np.random.Generator,
    n_draws: int,
    rank_method: str,
) -> ComparisonSummary:
    """``summarize_comparison`` under crossed clustering (see there)."""

    if method not in ("auto", "cr1"):
        raise ValueError(
            f"method {method!r} has no crossed form for compare; use 'auto' (= 'cr1') or 'cr1'"
        )
    found = crossed_pairwise(cluster_totals, counts, memberships, names=names)
    m = cluster_totals.shape[1]
    if baseline is None:
        pair_a, pair_b = np.triu_indices(m, k=1)
    else:
        pair_b = np.full(m - 1, baseline)
        pair_a = np.array([i for i in range(m) if i != baseline])
    delta = found.means[pair_a] - found.means[pair_b]
    se = np.sqrt(found.variance[pair_a, pair_b])
    df = found.df
    with np.errstate(divide="ignore", invalid="ignore"):
        p_value = np.where(se > 0, 2.0 * special.stdtr(df, -np.abs(delta / se)), np.nan)
    q = special.stdtrit(df, 0.5 + confidence / 2)
    low, high = delta - q * se, delta + q * se
    counts_of = ", ".join(f"{names[s[0]]} {g:,}" for s, g in found.terms if len(s) == 1)
    notes = [
        f"crossed clustering by {' and '.join(names)} (Cameron, Gelbach & Miller 2011): each "
        f"pair's variance is the multi-way sum over the groupings ({counts_of} clusters) and "
        f"their intersections, each CR1; t on {df:g} df; the rank sets take their critical "
        "values from draws of the multi-way covariance (the cluster bootstrap has no crossed "
        "form)"
    ]
    fallen = int(found.fallback[pair_a, pair_b].sum())
    if fallen:
        notes.append(
            f"for {fallen} pairs the multi-way variance was not positive; their largest term "
            "is used instead"
        )
    if outcome_range is not None:
        outside = (low < outcome_range[0]) | (high > outcome_range[1])
        if outside.any():
            low = np.maximum(low, outcome_range[0])
            high = np.minimum(high, outcome_range[1])
            notes.append(
                f"{int(outside.sum())} of the {pair_a.shape[0]} pairwise intervals reached "
                f"beyond [{outcome_range[0]:g}, {outcome_range[1]:g}] and were clipped"
            )
    degenerate = degenerate_pairs(
        cluster_totals, counts, pair_a, pair_b, found.variance[pair_a, pair_b], found.own
    )
    se, low, high, p_value, p_adjusted = without_degenerate(
        degenerate, se, low, high, p_value, adjust
    )
    rank = score_ranks(found.means)
    ranks = summarize_ranks(
        found.means,
        found.variance,
        found.own,
        confidence=confidence,
        method=rank_method,
        rng=rng,
        n_draws=n_draws,
        df=float(df),
    )
    return ComparisonSummary(
        pair_a,
        pair_b,
        delta,
        se,
        low,
        high,
        df,
        p_value,
        p_adjusted,
        "cr1",
        found.means,
        rank,
        ranks,
        degenerate,
        tuple(notes),
    )


def _pairwise_studentized(
    delta: NDArray[np.float64],
    se: NDArray[np.float64],
    p_value: NDArray[np.float64],
    quantile: float | NDArray[np.float64],
    extra_sums: NDArray[np.float64],
    draws: ClusterDraws,
    cluster_totals: NDArray[np.float64],
    counts: NDArray[np.float64],
    pair_a: NDArray[np.intp],
    pair_b: NDArray[np.intp],
    *,
    confidence: float,
    outcome_range: tuple[float, float] | None,
    estimand: str = "pooled",
    binary_items: bool = False,
    block_elements: int | None = None,
) -> tuple[NDArray[np.float64], NDArray[np.float64], NDArray[np.float64], list[str]]:
    """Each pair's bootstrap-t interval joined with its floor (the ``cr3_ik`` interval), the
    larger of the two p-values, and the notes; ``extra_sums`` ends with the replicate sums of the
    counts squared and of the counts, and ``draws`` are the draws they came from. Each
    replicate's t is ``paired_delta``'s: from the difference of the two models' replicate
    sums and one drawn sum of squared differences per pair, or, for the pairs with a cluster
    at their estimate (:func:`_near_estimate`), from the per-cluster differences centred at
    the estimate, their squares and their products with the counts, summed over the same
    draws, so that a replicate drawing only such clusters keeps t = 0 exactly.
    With ``binary_items`` (``cluster_totals`` count the passes of 0/1 items), a side the
    bootstrap cannot bound is bounded by :func:`discordance_bounds`, with the counts of
    discordant items bounded by the passes (A alone passes at most ``min(T_A, n − T_B)`` items
    of a cluster).

    The pairs are studentised a block at a time (``block_elements`` replicate values per
    array, :data:`PAIR_BLOCK_ELEMENTS` by default, a whole number of :data:`PAIR_PANEL`
    pairs), so memory is bounded whatever the number of models, and the answers are the same
    whatever the block.
    """
    if block_elements is None:
        block_elements = PAIR_BLOCK_ELEMENTS
    n_pairs = delta.shape[0]
    n_resamples = extra_sums.shape[0]
    cr1_se = np.sqrt(pairwise_cluster_robust(cluster_totals, counts, "CR1")[1][pair_a, pair_b])
    quantile = np.broadcast_to(np.asarray(quantile, dtype=np.float64), (n_pairs,))
    low, high = delta - quantile * se, delta + quantile * se
    p_value = p_value.copy()
    block = max(1, block_elements // max(1, n_resamples) // PAIR_PANEL) * PAIR_PANEL
    alpha = 1.0 - confidence
    # the order statistics np.quantile(method="inverted_cdf") takes: those quantiles of the
    # ranks 0 .. B-1 are the ranks themselves
    places = tuple(
        int(x)
        for x in np.quantile(
            np.arange(n_resamples, dtype=np.float64),
            [alpha / 2, 1 - alpha / 2],
            method="inverted_cdf",
        )
    )
    near = _near_estimate(cluster_totals, counts, pair_a, pair_b, delta)
    special, ordinary = np.flatnonzero(near), np.flatnonzero(~near)
    rows = min(block, max(ordinary.size, PAIR_PANEL if special.size else 0))
    replicate_t = _ReplicateT(cluster_totals, counts, draws, extra_sums, rows)

    def finish(chosen: NDArray[np.intp], t_stat: NDArray[np.float64]) -> None:
        """The bootstrap-t bounds and p-value of the ``chosen`` pairs from their replicates'
        t, joined with the floor."""
        own_se, shift = cr1_se[chosen], delta[chosen]
        has_se = own_se > 0
        mask = replicate_t.mask(chosen.size)
        with np.errstate(divide="ignore", invalid="ignore"):
            t_null = (shift / own_se)[:, None]
        tail = np.minimum(
            np.count_nonzero(np.greater_equal(t_stat, t_null, out=mask), axis=1),
            np.count_nonzero(np.less_equal(t_stat, t_null, out=mask), axis=1),
        )
        # the quantiles, as np.quantile's inverted_cdf picks them
        t_low, t_high = _order_statistics(t_stat, *places)
        with np.errstate(invalid="ignore"):  # an infinite quantile times a zero se
            found_low = np.where(has_se, shift - t_high * own_se, shift)
            found_high = np.where(has_se, shift - t_low * own_se, shift)
        found_p = np.where(has_se, np.minimum(1.0, 2.0 * (tail / n_resamples)), np.nan)
        low[chosen] = np.where(found_low < low[chosen], found_low, low[chosen])
        high[chosen] = np.where(found_high > high[chosen], found_high, high[chosen])
        p_value[chosen] = np.where(found_p > p_value[chosen], found_p, p_value[chosen])

    # Pairs with a cluster at their estimate: a replicate that draws only such clusters has
    # t = 0 exactly (nothing departs from the estimate), which the sums of the centred
    # differences keep and the difference of two replicate means loses to rounding. These
    # few pairs are drawn from their centred differences, each at its own place in a panel
    # (a product's rounding depends on the row's place), so their numbers are those of
    # drawing every pair that way.
    for slots, chosen in _panels_in_place(special):
        t_stat = replicate_t.centred(pair_a[chosen], pair_b[chosen], delta[chosen], slots)
        finish(chosen, t_stat[slots])
    # the others from the models' replicate sums and one drawn sum of squares per pair
    for first in range(0, ordinary.size, block):
        chosen = ordinary[first : first + block]
        finish(chosen, replicate_t.summed(pair_a[chosen], pair_b[chosen], delta[chosen]))
    counted = 0
    if binary_items:
        for k in np.flatnonzero(np.isinf(low) | np.isinf(high)):
            passes_a, passes_b = cluster_totals[:, pair_a[k]], cluster_totals[:, pair_b[k]]
            bound_low, bound_high = discordance_bounds(
                np.minimum(passes_a, counts - passes_b),
                np.minimum(passes_b, counts - passes_a),
                counts,
                estimand=estimand,
                confidence=confidence,
            )
            low[k] = bound_low if math.isinf(low[k]) else low[k]
            high[k] = bound_high if math.isinf(high[k]) else high[k]
            counted += 1
    unbounded = clipped = 0
    if outcome_range is None:
        unbounded = int(np.count_nonzero(np.isinf(low) | np.isinf(high)))
    else:
        below, above = low < outcome_range[0], high > outcome_range[1]
        clipped = int(np.count_nonzero(below | above))
        low = np.where(below, outcome_range[0], low)
        high = np.where(above, outcome_range[1], high)
    notes = []
    if counted:
        notes.append(
            f"the studentized bootstrap cannot bound {counted} of the {n_pairs} pairs on one "
            "side (too many replicates have no spread): such a lower bound is "
            f"{DISCORDANCE_SOURCES[0]}, such an upper bound {DISCORDANCE_SOURCES[1]}"
        )
    if unbounded:
        notes.append(
            f"the studentized bootstrap cannot bound {unbounded} of the {n_pairs} pairs on one "
            "side (too many replicates have no spread), so those bounds are infinite; more "
            "clusters would pin them down"
        )
    if clipped:
        notes.append(
            f"{clipped} of the {n_pairs} pairwise intervals reached beyond "
            f"[{outcome_range[0]:g}, {outcome_range[1]:g}] and were clipped"
        )
    return low, high, p_value, notes


def _order_statistics(
    values: NDArray[np.float64], low: int, high: int
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """Each row's ``low``-th and ``high``-th smallest value (from 0; no NaN), as
    ``partition((low, high), axis=1)`` finds them, partitioning only the values beyond a
    cut each side.

    A tail's cut is an order statistic of every eighth column, chosen so that about twice the
    needed values lie beyond it (all of them when enough do: the order statistic is then
    among them). A row whose cut leaves too few is partitioned whole, as are tails too wide
    for a cut to pay.
    """
    rows, n = values.shape
    step = 8
    width = -(-n // step)
    # the cuts' ranks in the sample: twice the needed values beyond them on average
    below = 2 * (low + 1) // step + 8
    above = 2 * (n - high) // step + 8
    if max(below, above) >= width // 4:
        whole = values.copy()
        whole.partition((low, high), axis=1)
        return whole[:, low], whole[:, high]
    sample = values[:, ::step].copy()
    sample.partition((below, width - 1 - above), axis=1)
    found = []
    for cut, lower in ((sample[:, below], True), (sample[:, width - 1 - above], False)):
        beyond = np.less_equal(values, cut[:, None]) if lower else values >= cut[:, None]
        count = np.count_nonzero(beyond, axis=1)
        place = low if lower else n - 1 - high  # from its own end of the row
        enough = count > place
        if not enough.all():
            beyond[~enough] = False
            count[~enough] = 0
        taken = values[beyond]  # row by row
        padded = np.full((rows, int(count.max(initial=1))), np.inf if lower else -np.inf)
        row = np.repeat(np.arange(rows), count)
        padded[row, np.arange(taken.shape[0]) - (np.cumsum(count) - count)[row]] = taken
        at = place if lower else padded.shape[1] - 1 - place
        padded.partition(at, axis=1)
        picked = padded[:, at]
        if not enough.all():
            rest = values[~enough]
            rest.partition(low if lower else high, axis=1)
            picked[~enough] = rest[:, low if lower else high]
        found.append(picked)
    return found[0], found[1]


def _drawn_sums(
    draws: ClusterDraws,
    values: NDArray[np.float64],
    out: NDArray[np.float64],
    scratch: NDArray[np.floating],
) -> None:
    """Each replicate's sum of every column of ``values`` (clusters x columns) over its drawn
    clusters, into ``out`` ``(columns, n_resamples)``, in products of :data:`PAIR_PANEL`
    columns in the precision of ``scratch`` ``(PAIR_PANEL, n_resamples)``."""
    g, n = values.shape
    panels = -(-n // PAIR_PANEL)
    operand = np.zeros((panels * PAIR_PANEL, g), dtype=scratch.dtype)
    operand[:n] = values.T
    for start, stop, drawn in draws.again(scratch.dtype):
        drawn = drawn.astype(scratch.dtype, copy=False)
        product = scratch[:, : stop - start]
        for k in range(panels):
            first = k * PAIR_PANEL
            np.matmul(operand[first : first + PAIR_PANEL], drawn.T, out=product)
            last = min(first + PAIR_PANEL, n)
            out[first:last, start:stop] = product[: last - first]


#: A cluster whose centred difference is within this share of its terms sits at the
#: pair's estimate (exactly, or but for the rounding of the estimate).
AT_ESTIMATE = 1e-9


def _near_estimate(
    cluster_totals: NDArray[np.float64],
    counts: NDArray[np.float64],
    pair_a: NDArray[np.intp],
    pair_b: NDArray[np.intp],
    delta: NDArray[np.float64],
) -> NDArray[np.bool_]:
    """The pairs with a cluster whose per-cluster difference sits at the pair's estimate
    (``D_k = n_k delta`` within :data:`AT_ESTIMATE`), a block of pairs at a time."""
    g = counts.shape[0]
    flags = np.empty(pair_a.shape[0], dtype=bool)
    step = max(1, CHUNK_ELEMENTS // max(1, g))
    for first in range(0, pair_a.shape[0], step):
        part = slice(first, first + step)
        difference = cluster_totals[:, pair_a[part]] - cluster_totals[:, pair_b[part]]
        expected = np.outer(counts, delta[part])
        size = np.maximum(np.abs(difference), np.abs(expected))
        flags[part] = (np.abs(difference - expected) <= AT_ESTIMATE * size).any(axis=0)
    return flags


def _panels_in_place(pairs: NDArray[np.intp]):
    """``pairs`` (ascending) in panels of :data:`PAIR_PANEL` rows, each pair at the row
    ``pair % PAIR_PANEL`` it has when every pair is drawn in order: ``(rows, pairs)``."""
    place = pairs % PAIR_PANEL
    order = np.argsort(place, kind="stable")
    ordered = place[order]
    rounds = np.empty_like(pairs)
    rounds[order] = np.arange(pairs.size) - np.searchsorted(ordered, ordered)
    for k in range(int(rounds.max(initial=-1)) + 1):
        chosen = pairs[rounds == k]
        yield chosen % PAIR_PANEL, chosen


#: Rounding noise of a replicate's sum of squared residuals, as a share of the squares.
NOISE_SHARE = 64.0 * np.finfo(float).eps


class _ReplicateT:
    """The replicates' t of blocks of pairs, from one ``compare``'s cluster totals
    ``(G, M)``, counts, draws and the replicate sums of the counts and of their squares,
    in work arrays ``(rows, B)`` reused by every block (fresh arrays this large cost more in
    first-touch page faults than the arithmetic done on them)."""

    def __init__(
        self,
        cluster_totals: NDArray[np.float64],
        counts: NDArray[np.float64],
        draws: ClusterDraws,
        extra_sums: NDArray[np.float64],
        rows: int,
    ) -> None:
        self.totals, self.counts, self.draws = cluster_totals, counts, draws
        self.count_square_sum = extra_sums[:, -2].copy()
        self.count_sum = extra_sums[:, -1].copy()
        shape = (rows, extra_sums.shape[0])
        self._work = [np.empty(shape) for _ in range(5)]
        self._mask = np.empty(shape, dtype=bool)
        # the models' replicate sums, made by the first call of summed()
        self.model_sums: NDArray[np.floating] | None = None
        self._scratch: NDArray[np.floating] | None = None

    def mask(self, rows: int) -> NDArray[np.bool_]:
        """A work mask of ``rows`` rows."""
        return self._mask[:rows]

    def _finish(
        self,
        gap: NDArray[np.float64],
        spread: NDArray[np.float64],
        noise: NDArray[np.float64],
        out: NDArray[np.float64],
    ) -> NDArray[np.float64]:
        """``gap / se`` into ``out``, from the replicates' departures from the estimate and
        their sums of squared residuals ``spread`` (worked in place; one that cancels to
        within ``noise`` is zero): ``+-inf`` on the side of the gap where the replicate has
        no spread, 0 where it has neither."""
        mask = self._mask[: gap.shape[0]]
        g = self.counts.shape[0]
        np.copyto(spread, 0.0, where=np.logical_not(np.greater(spread, noise, out=mask), out=mask))
        spread *= g / (g - 1.0)
        np.sqrt(spread, out=spread)
        spread /= self.count_sum  # the replicate's own CR1 standard error
        # the spread is 0 or positive: a gap over no spread is +-inf by IEEE division, and
        # no gap over no spread (NaN) is 0
        with np.errstate(divide="ignore", invalid="ignore"):
            np.divide(gap, spread, out=out)
        np.copyto(out, 0.0, where=np.isnan(out, out=mask))
        return out

    def centred(
        self,
        a: NDArray[np.intp],
        b: NDArray[np.intp],
        delta: NDArray[np.float64],
        slots: NDArray[np.intp],
    ) -> NDArray[np.float64]:
        """The t of one panel ``(PAIR_PANEL, B)``, the pairs ``(a, b)`` at rows ``slots``
        (the other rows are zero): each pair's per-cluster differences centred at its
        estimate ``delta``, their squares and their products with the counts, summed over
        every replicate's drawn clusters."""
        counts = self.counts
        centred = np.zeros((counts.shape[0], PAIR_PANEL))
        centred[:, slots] = self.totals[:, a] - self.totals[:, b] - np.outer(counts, delta)
        gap, square, cross, other, spread = (w[:PAIR_PANEL] for w in self._work)
        scratch = np.empty((PAIR_PANEL, gap.shape[1]))
        _drawn_sums(self.draws, centred, gap, scratch)
        _drawn_sums(self.draws, centred * centred, square, scratch)
        _drawn_sums(self.draws, centred * counts[:, None], cross, scratch)
        gap /= self.count_sum
        # square - 2 gap cross + gap^2 sum(n^2), in place
        np.subtract(
            square, np.multiply(np.multiply(gap, 2.0, out=other), cross, out=other), out=spread
        )
        spread += np.multiply(np.multiply(gap, gap, out=other), self.count_square_sum, out=other)
        return self._finish(gap, spread, np.multiply(square, NOISE_SHARE, out=other), cross)

    def summed(
        self, a: NDArray[np.intp], b: NDArray[np.intp], delta: NDArray[np.float64]
    ) -> NDArray[np.float64]:
        """The t of the pairs ``(a, b)`` ``(pairs, B)``, from the models' replicate sums of
        their totals and of their totals times the counts and each pair's drawn sum of
        squared differences: ``sum (D - mean n)^2 = sum D^2 - mean (2 sum D n - mean sum
        n^2)``."""
        totals = self.totals
        g, m = totals.shape
        if self.model_sums is None:
            columns = np.column_stack([totals, totals * self.counts[:, None]])
            # whole-number sums below 2^24 are exact in single precision (twice the speed)
            widest = float(np.max(totals.max(axis=1) - totals.min(axis=1)))
            exact = _exact_single(columns, g) and g * widest**2 < 2**24
            dtype = np.float32 if exact else np.float64
            self._scratch = np.empty((PAIR_PANEL, self.count_sum.shape[0]), dtype=dtype)
            # per model (rows) and replicate (columns), so that a block of pairs reads rows
            # (in the products' precision: exact sums take half the memory)
            self.model_sums = np.empty((2 * m, self.count_sum.shape[0]), dtype=dtype)
            _drawn_sums(self.draws, columns, self.model_sums, self._scratch)
        sums = self.model_sums
        rows = a.shape[0]
        spread, drawn_mean, work, other, _ = (w[:rows] for w in self._work)
        difference = totals[:, a] - totals[:, b]
        _drawn_sums(self.draws, difference * difference, spread, self._scratch)
        # the replicate's difference of means, and mean (2 sum D n - mean sum n^2)
        _row_differences(sums, a, b, drawn_mean)
        drawn_mean /= self.count_sum
        _row_differences(sums[m:], a, b, work)
        work *= 2.0
        work -= np.multiply(drawn_mean, self.count_square_sum, out=other)
        work *= drawn_mean
        noise = np.multiply(spread, NOISE_SHARE, out=other)
        spread -= work
        gap = drawn_mean
        gap -= delta[:, None]
        return self._finish(gap, spread, noise, work)


def _row_differences(
    rows: NDArray[np.float64], a: NDArray[np.intp], b: NDArray[np.intp], out: NDArray[np.float64]
) -> None:
    """``out[i] = rows[a[i]] - rows[b[i]]``, a run of pairs with one ``a`` and consecutive
    ``b`` at a time (the order of ``np.triu_indices``): views of ``rows``, no gathers."""
    n = a.shape[0]
    breaks = np.flatnonzero((np.diff(a) != 0) | (np.diff(b) != 1)) + 1
    for start, stop in zip(np.r_[0, breaks], np.r_[breaks, n], strict=True):
        first = b[start]
        stretch = rows[first : first + stop - start]
        np.subtract(rows[a[start]], stretch, out=out[start:stop], dtype=np.float64)
