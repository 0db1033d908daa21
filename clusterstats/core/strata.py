"""Stratified designs: clusters independent within fixed strata, strata independent.

The linearised variance of R survey's ``svymean(~y, svydesign(ids=~cluster, strata=~h))``:
each cluster's total of the estimate's influence values ``x_g`` is centred on its stratum's
mean, squared, and scaled by ``G_h / (G_h - 1)``; strata add up. The reference df is
``G - H`` (survey's ``degf``). A stratum with a single cluster ("lonely") cannot estimate
its own variance: ``lonely`` selects what R's ``options(survey.lonely.psu=)`` offers.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np
from numpy.typing import NDArray

from clusterstats.core import intervals as iv
from clusterstats.core.bootstrap import generator
from clusterstats.core.grouping import ClusterSums
from clusterstats.core.summary import IntervalSummary, naive_interval
from clusterstats.core.variance import design_effect_unequal, icc_anova, iid_variance
from clusterstats.errors import DegenerateDataError

__all__ = [
    "LONELY",
    "StratifiedVariance",
    "influence_totals",
    "stratified_estimate",
    "stratified_variance",
]

#: What to do with a stratum that has a single cluster (R survey's ``survey.lonely.psu``).
LONELY = ("fail", "adjust", "average", "certainty")
ESTIMANDS = ("pooled", "cluster_mean", "stratum_mean")


class StratifiedVariance(NamedTuple):
    estimate: float
    variance: float
    df: float  # clusters - strata
    n_strata: int
    lonely_strata: tuple[int, ...]  # stratum codes with a single cluster


def stratified_estimate(sums: ClusterSums, strata: NDArray[np.intp], estimand: str) -> float:
    """The pooled mean, the mean of cluster means, or the mean of stratum means."""
    if estimand == "pooled":
        return float(sums.totals.sum() / sums.counts.sum()) + sums.shift
    if estimand == "cluster_mean":
        return float(sums.centred_means.mean()) + sums.shift
    if estimand == "stratum_mean":
        h = int(strata.max()) + 1
        totals = np.bincount(strata, weights=sums.totals, minlength=h)
        counts = np.bincount(strata, weights=sums.counts, minlength=h)
        present = counts > 0
        return float((totals[present] / counts[present]).mean()) + sums.shift
    raise ValueError(f"unknown estimand {estimand!r}; expected one of {ESTIMANDS}")


def influence_totals(
    sums: ClusterSums, strata: NDArray[np.intp], estimand: str
) -> NDArray[np.float64]:
    """Each cluster's total of the influence values of the estimate (the linearisation that
    survey's ``svymean`` and ``svycontrast`` use)."""
    if estimand == "pooled":
        n = float(sums.counts.sum())
        centred = float(sums.totals.sum()) / n
        return (sums.totals - centred * sums.counts) / n
    if estimand == "cluster_mean":
        means = sums.centred_means
        return (means - means.mean()) / means.size
    if estimand == "stratum_mean":
        h = int(strata.max()) + 1
        totals = np.bincount(strata, weights=sums.totals, minlength=h)
        counts = np.bincount(strata, weights=sums.counts, minlength=h)
        present = counts > 0
        stratum_mean = np.where(present, totals / np.where(present, counts, 1.0), 0.0)
        n_strata = int(present.sum())
        return (sums.totals - stratum_mean[strata] * sums.counts) / (counts[strata] * n_strata)
    raise ValueError(f"unknown estimand {estimand!r}; expected one of {ESTIMANDS}")


def stratified_variance(
    sums: ClusterSums,
    strata: NDArray[np.intp],
    estimand: str,
    *,
    lonely: str = "fail",
) -> StratifiedVariance:
    """Linearised variance of the estimate under a stratified cluster design, as survey.

    ``strata`` gives each cluster's stratum code (0..H-1). Lonely strata (one cluster):
    ``"fail"`` raises ``ValueError`` naming them; ``"certainty"`` lets them contribute
    nothing; ``"adjust"`` centres their cluster on the overall mean rather than the
    stratum's; ``"average"`` gives them the average contribution of the other strata.

    Examples
    --------
    Two strata of two clusters: each stratum's centred influence totals, squared, times 2.

    >>> t = np.array([1.0, 2, 0, 1])
    >>> s = ClusterSums(np.array([2.0, 2, 2, 2]), t, t)
    >>> round(stratified_variance(s, np.array([0, 0, 1, 1]), "pooled").variance, 6)
    0.03125
    """
    if lonely not in LONELY:
        raise ValueError(f"lonely must be one of {LONELY}, got {lonely!r}")
    x = influence_totals(sums, strata, estimand)
    h = int(strata.max()) + 1
    per_stratum = np.bincount(strata, minlength=h)
    present = per_stratum > 0
    lonely_codes = np.flatnonzero(per_stratum == 1)
    if lonely_codes.size and lonely == "fail":
        raise ValueError(f"lonely strata: {lonely_codes.tolist()}")
    means = np.bincount(strata, weights=x, minlength=h) / np.maximum(per_stratum, 1)
    centred = x - means[strata]
    is_lonely = per_stratum[strata] == 1
    if lonely == "adjust":
        centred = np.where(is_lonely, x, centred)  # deviation from the overall mean, 0
    scale = np.where(per_stratum > 1, per_stratum / np.maximum(per_stratum - 1, 1), 1.0)
    contributions = np.bincount(strata, weights=centred * centred, minlength=h) * scale
    if lonely == "average" and lonely_codes.size:
        ok = present & (per_stratum > 1)
        variance = float(contributions[ok].sum()) * int(present.sum()) / max(int(ok.sum()), 1)
    else:
        variance = float(contributions.sum())
    g = int(strata.size)
    return StratifiedVariance(
        estimate=stratified_estimate(sums, strata, estimand),
        variance=variance,
        df=float(g - int(present.sum())),
        n_strata=int(present.sum()),
        lonely_strata=tuple(int(c) for c in lonely_codes),
    )


def rao_wu_bootstrap(
    sums: ClusterSums,
    strata: NDArray[np.intp],
    estimand: str,
    *,
    n_resamples: int,
    confidence: float,
    rng: np.random.Generator,
) -> tuple[float, float, float]:
    """Percentile interval from the Rao–Wu rescaled bootstrap: in each stratum, draw
    ``G_h - 1`` of its ``G_h`` clusters with replacement and weight each draw by
    ``G_h / (G_h - 1)``, so that the bootstrap variance of a linear statistic matches the
    linearised one. Returns ``(low, high, standard error)``."""
    h = int(strata.max()) + 1
    per_stratum = np.bincount(strata, minlength=h)
    members = [np.flatnonzero(strata == stratum) for stratum in range(h)]
    replicates = np.empty(n_resamples)
    chunk = max(1, (1 << 20) // max(strata.size, 1))  # bounds the weight matrix in memory
    for start in range(0, n_resamples, chunk):
        rows = min(chunk, n_resamples - start)
        weights = np.ones((rows, strata.size))  # a lonely cluster is kept as it is
        for stratum in np.flatnonzero(per_stratum > 1):
            size = int(per_stratum[stratum])
            drawn = rng.integers(0, size, size=(rows, size - 1))
            offsets = (np.arange(rows) * size)[:, None]
            counts = np.bincount((drawn + offsets).ravel(), minlength=rows * size)
            weights[:, members[stratum]] = counts.reshape(rows, size) * (size / (size - 1))
        if estimand == "pooled":
            values = (weights @ sums.totals) / (weights @ sums.counts)
        elif estimand == "cluster_mean":
            values = (weights @ sums.centred_means) / weights.sum(axis=1)
        else:
            values = np.mean(
                [
                    (weights[:, m] @ sums.totals[m]) / (weights[:, m] @ sums.counts[m])
                    for m in members
                    if m.size
                ],
                axis=0,
            )
        replicates[start : start + rows] = values + sums.shift
    alpha = 1.0 - confidence
    low, high = np.quantile(replicates, [alpha / 2, 1 - alpha / 2])
    return float(low), float(high), float(replicates.std(ddof=1))


def within_strata_icc(sums: ClusterSums, strata: NDArray[np.intp]) -> float:
    """One-way ANOVA ICC with the stratum means removed: the between-cluster mean square
    uses each cluster's deviation from its stratum's mean (``G − H`` df), so fixed
    differences between strata do not count as clustering."""
    h = int(strata.max()) + 1
    n = sums.counts
    n_total = float(n.sum())
    g = sums.n_clusters
    if g - h < 1 or n_total - g < 1:
        return math.nan
    stratum_totals = np.bincount(strata, weights=sums.totals, minlength=h)
    stratum_counts = np.bincount(strata, weights=n, minlength=h)
    stratum_means = stratum_totals / np.maximum(stratum_counts, 1.0)
    means = sums.centred_means
    ssb = float(np.sum(n * (means - stratum_means[strata]) ** 2))
    ssw = max(float(np.sum(sums.squares - sums.totals * means)), 0.0)
    msb, msw = ssb / (g - h), ssw / (n_total - g)
    n0 = (
        n_total
        - float(
            np.sum(
                np.bincount(strata, weights=n * n, minlength=h) / np.maximum(stratum_counts, 1.0)
            )
        )
    ) / (g - h)
    denom = msb + (n0 - 1.0) * msw
    return (msb - msw) / denom if denom > 0 else math.nan


def _model_variance(sums: ClusterSums, strata: NDArray[np.intp], estimand: str) -> float:
    """The variance a binary mean would have under exchangeable correlation within strata,
    with the within-strata ICC: ``Σ_h w_h² p_h (1 − p_h) deff_h / N_h`` with the estimand's
    stratum weights ``w_h`` (rows, clusters, or ``1/H``)."""
    rho = within_strata_icc(sums, strata)
    rho = rho if rho > 0 else 0.0  # NaN (undefined) and negative ICCs count as 0
    h = int(strata.max()) + 1
    present = np.bincount(strata, minlength=h) > 0
    n_total, g_total, h_total = float(sums.counts.sum()), sums.n_clusters, int(present.sum())
    total = 0.0
    for stratum in np.flatnonzero(present):
        members = strata == stratum
        counts = sums.counts[members]
        n_h = float(counts.sum())
        p_h = float(sums.totals[members].sum()) / n_h + sums.shift
        if estimand == "pooled":
            weight, kind = n_h / n_total, "pooled"
        elif estimand == "cluster_mean":
            weight, kind = counts.size / g_total, "cluster_mean"
        else:
            weight, kind = 1.0 / h_total, "pooled"
        deff = design_effect_unequal(counts, rho, kind)
        total += weight**2 * p_h * (1.0 - p_h) * deff / n_h
    return total


STRATIFIED_METHODS = (
    "auto",
    "naive",
    "cr1",
    "wilson",
    "korn_graubard",
    "korn_graubard_guarded",
    "bootstrap",
    "bootstrap_percentile",
)


def summarize_stratified(
    sums: ClusterSums,
    strata: NDArray[np.intp],
    *,
    estimand: str,
    method: str,
    confidence: float,
    is_binary: bool,
    lonely: str = "fail",
    n_resamples: int = 9999,
    rng: np.random.Generator | None = None,
    cap_n_eff: bool = True,
) -> IntervalSummary:
    """The interval of the mean under a stratified cluster design, with its context.

    ``cr1`` is survey's linearised variance with a ``t_{G−H}`` interval; ``wilson`` and
    ``korn_graubard`` use that variance and df (as ``svyciprop``); ``korn_graubard_guarded``
    (the binary ``auto``) takes the larger of it and the exchangeable-model variance;
    ``bootstrap`` is the Rao–Wu rescaled bootstrap within strata (percentile).
    """

    if method not in STRATIFIED_METHODS:
        raise ValueError(
            f"with strata, method must be one of {STRATIFIED_METHODS} (CR2 and BCa are not "
            f"available for stratified designs), got {method!r}"
        )
    if method == "auto":
        method = "korn_graubard_guarded" if is_binary else "cr1"
    if method == "bootstrap":
        method = "bootstrap_percentile"
    if method in ("wilson", "korn_graubard", "korn_graubard_guarded") and not is_binary:
        raise ValueError(f"method {method!r} needs a binary (0/1) outcome")
    sv = stratified_variance(sums, strata, estimand, lonely=lonely)
    point, variance, df = sv.estimate, sv.variance, sv.df
    n_rows = float(sums.counts.sum())
    iid = iid_variance(sums)
    icc = icc_anova(sums).icc
    naive_low, naive_high = naive_interval(sums, point, is_binary, confidence)
    notes: list[str] = []
    used_resamples = None
    if not variance > 1e-24 * max(float(sums.squares.sum()) / n_rows**2, 1e-300):
        if not is_binary:
            raise DegenerateDataError(
                "within every stratum the clusters have the same mean: the stratified variance "
                "is zero and no interval can be estimated from it"
            )
        g = float(strata.size)
        low, high, message = iv.clopper_pearson_fallback(
            point,
            g,
            confidence,
            reason="within every stratum the clusters agree, so the stratified variance is zero",
            basis=f"the number of clusters ({g:g})",
        )
        naive_width = naive_high - naive_low
        return IntervalSummary(
            estimate=point,
            se=math.nan,
            low=float(low),
            high=float(high),
            df=math.nan,
            method="clopper_pearson_fallback",
            icc=icc,
            design_effect=math.nan,
            n_eff=g,
            naive_low=float(naive_low),
            naive_high=float(naive_high),
            widening=(high - low) / naive_width if naive_width > 0 else math.nan,
            n_resamples=None,
            notes=(message,),
        )
    se = math.sqrt(variance)
    if method == "naive":
        low, high, se, df = naive_low, naive_high, math.sqrt(iid), n_rows - 1.0
    elif method == "cr1":
        low, high = iv.t_interval(point, variance, df, confidence)
        if is_binary:
            low, high = max(low, 0.0), min(high, 1.0)
    elif method in ("wilson", "korn_graubard"):
        low, high, cap_note = iv.effective_n_interval(
            method, point, variance, df, n_rows, confidence, cap=cap_n_eff
        )
        if cap_note:
            notes.append(cap_note)
    elif method == "korn_graubard_guarded":
        guarded = max(variance, _model_variance(sums, strata, estimand))
        x = influence_totals(sums, strata, estimand)
        df = iv.effective_clusters_df(x, df)
        se = math.sqrt(guarded)
        low, high, cap_note = iv.effective_n_interval(
            "korn_graubard", point, guarded, df, n_rows, confidence, cap=cap_n_eff
        )
        if cap_note:
            notes.append(cap_note)
    else:
        low, high, se = rao_wu_bootstrap(
            sums,
            strata,
            estimand,
            n_resamples=n_resamples,
            confidence=confidence,
            rng=generator(rng),
        )
        df = math.nan
        used_resamples = n_resamples
    if sv.lonely_strata:
        notes.append(
            f"{len(sv.lonely_strata)} strata have a single cluster; lonely='{lonely}' was "
            "applied to them"
        )
    notes.append(
        f"stratified design: {sv.n_strata} strata, {strata.size} clusters, df = clusters − strata"
    )
    design_effect = variance / iid if iid > 0 else math.nan
    naive_width = naive_high - naive_low
    return IntervalSummary(
        estimate=point,
        se=se,
        low=float(low),
        high=float(high),
        df=float(df),
        method=method,
        icc=icc,
        design_effect=design_effect,
        n_eff=n_rows / design_effect if design_effect > 0 else math.nan,
        naive_low=float(naive_low),
        naive_high=float(naive_high),
        widening=(high - low) / naive_width if naive_width > 0 else math.nan,
        n_resamples=used_resamples,
        notes=tuple(notes),
    )


def rao_wu_weights(
    strata: NDArray[np.intp], rows: int, rng: np.random.Generator
) -> NDArray[np.float64]:
    """``rows`` Rao–Wu replicate weights per cluster (``rows x G``): in each stratum,
    ``G_h - 1`` draws with replacement from its ``G_h`` clusters, times ``G_h/(G_h - 1)``;
    a lonely cluster keeps weight 1."""
    h = int(strata.max()) + 1
    per_stratum = np.bincount(strata, minlength=h)
    weights = np.ones((rows, strata.size))
    for stratum in np.flatnonzero(per_stratum > 1):
        members = np.flatnonzero(strata == stratum)
        size = int(per_stratum[stratum])
        drawn = rng.integers(0, size, size=(rows, size - 1))
        offsets = (np.arange(rows) * size)[:, None]
        counts = np.bincount((drawn + offsets).ravel(), minlength=rows * size)
        weights[:, members] = counts.reshape(rows, size) * (size / (size - 1))
    return weights


def weighted_means(
    weights: NDArray[np.float64],
    cluster_totals: NDArray[np.float64],
    counts: NDArray[np.float64],
    strata: NDArray[np.intp],
    estimand: str,
) -> NDArray[np.float64]:
    """Each model's estimate under replicate cluster weights (``rows x M``); the totals are
    ``(G, M)``, uncentred."""
    if estimand == "pooled":
        return (weights @ cluster_totals) / (weights @ counts)[:, None]
    if estimand == "cluster_mean":
        return (weights @ (cluster_totals / counts[:, None])) / weights.sum(axis=1)[:, None]
    h = int(strata.max()) + 1
    parts = []
    for stratum in range(h):
        members = strata == stratum
        if members.any():
            w = weights[:, members]
            parts.append((w @ cluster_totals[members]) / (w @ counts[members])[:, None])
    return np.mean(parts, axis=0)


def stratified_pairwise(
    cluster_totals: NDArray[np.float64],
    counts: NDArray[np.float64],
    strata: NDArray[np.intp],
    estimand: str,
    *,
    lonely: str = "fail",
) -> tuple[NDArray[np.float64], NDArray[np.float64], float]:
    """Every model's estimate and the stratified covariance matrix of the estimates
    (``(M, M)``; the variance of ``a − b`` is ``V_aa + V_bb − 2 V_ab``), from one matrix
    product on the centred influence totals; and the df ``G − H``."""
    m = cluster_totals.shape[1]
    means = np.empty(m)
    columns = []
    for j in range(m):
        sums = ClusterSums(counts, cluster_totals[:, j], cluster_totals[:, j], 0.0)
        means[j] = stratified_estimate(sums, strata, estimand)
        columns.append(influence_totals(sums, strata, estimand))
    x = np.column_stack(columns)
    h = int(strata.max()) + 1
    per_stratum = np.bincount(strata, minlength=h)
    lonely_members = per_stratum[strata] == 1
    if lonely_members.any() and lonely == "fail":
        raise ValueError(f"lonely strata: {np.flatnonzero(per_stratum == 1).tolist()}")
    stratum_means = (
        np.column_stack([np.bincount(strata, weights=x[:, j], minlength=h) for j in range(m)])
        / np.maximum(per_stratum, 1)[:, None]
    )
    centred = x - stratum_means[strata]
    scale = np.where(per_stratum > 1, per_stratum / np.maximum(per_stratum - 1, 1), 1.0)[strata]
    if lonely == "adjust":
        centred[lonely_members] = x[lonely_members]
    covariance = centred.T @ (centred * scale[:, None])
    if lonely == "average" and lonely_members.any():
        present = per_stratum > 0
        ok = per_stratum > 1
        keep = ~lonely_members
        covariance = (centred[keep].T @ (centred[keep] * scale[keep, None])) * (
            int(present.sum()) / max(int(ok.sum()), 1)
        )
    return means, covariance, float(strata.size - int((per_stratum > 0).sum()))
