"""Point estimates, cluster-robust variances, the one-way ANOVA ICC and design effects.

All functions take a :class:`~clusterstats.core.grouping.ClusterSums` and return plain floats
or small named tuples. Formulas and the trusted implementations they agree with are listed in
``docs/estimands-and-methods.md``; the short version:

* pooled mean ``sum(T) / sum(n)``; CR1 is R survey / sandwich / statsmodels / Stata's clustered
  variance, ``G/(G-1) * sum(e_g^2) / N^2`` with ``e_g = T_g - mean * n_g``;
* CR2 is Bell & McCaffrey's bias-reduced variance with clubSandwich's Satterthwaite df, which
  for an intercept-only model has the closed forms used below;
* the mean of cluster means treats each cluster mean as one observation, so its CR1 and CR2
  coincide: ``var(cluster means) / G`` with ``G - 1`` df.

Precision. Everything is computed from the sums centred on ``sums.shift`` and stays centred:
residuals are formed from the centred estimate (:func:`centred_estimate`), never from the
reported one, which has the shift added back (near 1e12 floats are 1.2e-4 apart, so residuals
formed from it would be off by that much in every cluster: a relative error of 1e-5 in a CR1
standard error, against 1e-16 now). A sum of squared residuals that would overflow or leave
the normal float64 range is recomputed on residuals rescaled by a power of two, which is
exact, and the scale is undone on the result (internal rescaling, invisible to callers). The
outcome's own range is checked once, when the sums are formed
(:func:`clusterstats.core.grouping.check_magnitude`).
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np

from clusterstats.core._lazy import special
from clusterstats.core.grouping import ClusterSums

__all__ = [
    "ESTIMANDS",
    "ICCEstimate",
    "PointVariance",
    "cluster_robust",
    "design_effect_kish",
    "design_effect_unequal",
    "estimate",
    "icc_anova",
    "icc_interval",
    "iid_variance",
    "moulton_icc",
    "moulton_icc_of",
    "row_variance",
    "working_model_bias",
    "working_model_df",
]

ESTIMANDS = ("pooled", "cluster_mean")


class PointVariance(NamedTuple):
    """An estimate with its variance and the degrees of freedom of its reference t."""

    estimate: float
    variance: float
    df: float


def estimate(sums: ClusterSums, estimand: str) -> float:
    """The point estimate of ``estimand`` ("pooled" or "cluster_mean")."""
    return centred_estimate(sums, estimand) + sums.shift


def centred_estimate(sums: ClusterSums, estimand: str) -> float:
    """The point estimate of ``estimand`` minus ``sums.shift``: what residuals are formed
    from, to full precision however far the outcomes are from zero."""
    if estimand == "pooled":
        return float(sums.totals.sum() / sums.counts.sum())
    if estimand == "cluster_mean":
        return float(sums.centred_means.mean())
    raise ValueError(f"unknown estimand {estimand!r}; expected one of {ESTIMANDS}")


# Sums of squares of residuals between these bounds are used as they are; outside, they are
# recomputed on residuals scaled by a power of two (see _sum_of_squares).
_SAFE_LOW, _SAFE_HIGH = 2.0**-900, 2.0**1000


def _sum_of_squares(values: np.ndarray, divisor: float, weights: np.ndarray | None = None) -> float:
    """``sum(values^2 / weights) / divisor`` without intermediate overflow or underflow.

    The plain sum is used when it lies well inside the float64 range (the usual case: no
    extra pass over ``values``). Otherwise the values are scaled by a power of two ``2^-k``
    (exact), summed, divided, and the result multiplied back by ``2^(2k)``, so that only a
    result that is itself outside the float64 range overflows or underflows.
    """
    with np.errstate(over="ignore"):  # an overflow is redone below
        if weights is None:
            total = float(values @ values)
        else:
            total = float(np.sum(np.square(values) / weights))
    if _SAFE_LOW <= total <= _SAFE_HIGH:
        return total / divisor
    return _rescaled_sum_of_squares(values, divisor, weights, total)


def _rescaled_sum_of_squares(
    values: np.ndarray, divisor: float, weights: np.ndarray | None, plain: float
) -> float:
    """:func:`_sum_of_squares` on values scaled by a power of two; ``plain`` (the unscaled
    sum) is returned divided when there is nothing to rescale (zeros, or NaN)."""
    largest = float(np.max(np.abs(values))) if values.size else 0.0
    if largest == 0.0 or not math.isfinite(largest):
        return plain / divisor
    k = math.frexp(largest)[1]
    scaled = np.ldexp(values, -k)
    if weights is None:
        total = float(scaled @ scaled)
    else:
        total = float(np.sum(np.square(scaled) / weights))
    return math.ldexp(total / divisor, 2 * k)


def cluster_robust(sums: ClusterSums, estimand: str, kind: str = "CR1") -> PointVariance:
    """Cluster-robust variance of the estimate, with its reference degrees of freedom.

    Parameters
    ----------
    sums : ClusterSums
    estimand : {"pooled", "cluster_mean"}
    kind : {"CR0", "CR1", "CR2", "CR3"}
        CR0 is the uncorrected sandwich (Miller 2024); CR1 multiplies it by ``G/(G-1)`` and
        uses ``G-1`` df; CR2 is Bell–McCaffrey with Satterthwaite df (clubSandwich); CR3 is
        the leave-one-cluster-out jackknife ``sum_g (mean_(g) - mean)^2`` (clubSandwich's
        ``vcovCR(type = "CR3")``, MacKinnon, Nielsen & Webb's CV3 times ``G/(G-1)``), which
        for a pooled mean is ``sum e_g^2 / (1 - n_g/N)^2 / N^2``, with its Satterthwaite df
        (clubSandwich's ``coef_test(test = "Satterthwaite")``).

    Notes
    -----
    Pooled: ``CR1 = G/(G-1) * sum(e_g^2) / N^2`` with ``e_g = T_g - n_g * mean``, which is
    Stata's and R ``sandwich::vcovCL(type="HC1")``'s small-sample factor
    ``G/(G-1) * (N-1)/(N-K)`` for an intercept-only model (``K = 1``). Cluster mean:
    ``sum((m_g - mean)^2) / (G (G-1))``. The residuals are formed from centred sums and the
    centred estimate (see the module's notes on precision).

    Examples
    --------
    Dataset D1 of the methods reference (8 clusters; values checked against R):

    >>> import numpy as np
    >>> from clusterstats.core.grouping import ClusterSums, cluster_sums
    >>> n = np.array([2, 3, 5, 4, 6, 1, 8, 3.0]); t = np.array([1, 3, 2, 4, 1, 1, 6, 0.0])
    >>> s = ClusterSums(n, t, t)
    >>> round(cluster_robust(s, "pooled", "CR1").variance, 10)
    0.0182931083
    >>> v = cluster_robust(s, "pooled", "CR2"); round(v.variance, 10), round(v.df, 6)
    (0.0190254549, 5.286318)
    """
    g = sums.n_clusters
    if g < 2:
        raise ValueError("a cluster-robust variance needs at least two clusters")
    if kind not in ("CR0", "CR1", "CR2", "CR3"):
        raise ValueError(f"unknown cluster-robust variance {kind!r}")
    centred_mu = centred_estimate(sums, estimand)
    mu = centred_mu + sums.shift

    if estimand == "cluster_mean":
        # Each cluster mean is one observation, so every CR flavour reduces to the sample
        # variance of the means over G (CR0 keeps the 1/G divisor of the plain sandwich).
        resid = sums.centred_means - centred_mu
        divisor = {"CR0": g**2, "CR3": (g - 1) ** 2}.get(kind, g * (g - 1))
        var = _sum_of_squares(resid, float(divisor))
        return PointVariance(mu, var, float(g - 1))

    n_total = float(sums.counts.sum())
    resid_totals = sums.totals - centred_mu * sums.counts
    if kind in ("CR0", "CR1"):
        var = _sum_of_squares(resid_totals, n_total**2)
        if kind == "CR1":
            var *= g / (g - 1)
        return PointVariance(mu, var, float(g - 1))

    # In place: with millions of clusters each temporary is tens of MB. CR3 (the jackknife)
    # divides by the leverage complement squared, CR2 by the complement.
    leverage_complement = sums.counts / -n_total
    leverage_complement += 1.0
    if kind == "CR3":
        leverage_complement *= leverage_complement
    with np.errstate(over="ignore"):  # an overflow is redone below
        squared = np.square(resid_totals, out=resid_totals)
        squared /= leverage_complement
        total = float(squared.sum())
    del resid_totals, squared
    if _SAFE_LOW <= total <= _SAFE_HIGH:
        var = total / n_total**2
    else:  # rare: the residuals again, rescaled
        resid_totals = sums.totals - centred_mu * sums.counts
        var = _rescaled_sum_of_squares(resid_totals, n_total**2, leverage_complement, total)
    del leverage_complement
    if kind == "CR3":
        return PointVariance(mu, var, working_model_df(sums.counts, 0.0, "pooled", jackknife=True))
    return PointVariance(mu, var, satterthwaite_df_cr2(sums.counts, n_total))


def satterthwaite_df_cr2(counts: np.ndarray, n_total: float) -> float:
    """clubSandwich's Satterthwaite df for CR2 of an unweighted intercept-only model.

    The P matrix is ``diag(a) - v v' / N`` with ``a_j = n_j/(1 - n_j/N)`` and
    ``v_j = n_j / sqrt(1 - n_j/N)``; tr(P)^2 / ||P||_F^2 is evaluated in O(G).
    """
    comp = counts / -n_total
    comp += 1.0
    a = np.divide(counts, comp, out=comp)  # comp is not needed after this
    v2 = a * counts  # n_j^2 / (1 - n_j/N)
    v2_sum = float(v2.sum())
    trace = float(a.sum()) - v2_sum / n_total
    frob2 = float(a @ a) - 2.0 * float(a @ v2) / n_total + v2_sum**2 / n_total**2
    return float(trace**2 / frob2)


def moulton_icc(sums: ClusterSums) -> float:
    """The share of the residual variance that lies between clusters, from within-cluster
    pairs of rows: the Moulton (1986) random-effects model fitted by moments, as Imbens &
    Kolesár (2016) do for their degrees of freedom, truncated to [0, 1].

    ``cov = (sum_g e_g^2 - sum_i u_i^2) / (sum_g n_g^2 - N)`` is the mean product of the
    residuals ``u_i = y_i - mean`` of two rows of one cluster (``e_g`` their cluster total) and
    ``sum_i u_i^2 / N`` their variance; the ICC is their ratio. Every pair of rows counts
    once, so a cluster of ``n`` rows weighs ``n (n - 1)``: unlike the ANOVA ICC, it describes
    the large clusters that the pooled mean's variance rests on. 0 when no cluster has two
    rows or no row varies. R: ``dfadjust::dfadjustSE(lm(y ~ 1), cl)$rho`` over its ``rho +
    sig``.

    >>> import numpy as np
    >>> n = np.array([2, 3, 5, 4, 6, 1, 8, 3.0]); t = np.array([1, 3, 2, 4, 1, 1, 6, 0.0])
    >>> round(moulton_icc(ClusterSums(n, t, t)), 6)
    0.262145
    """
    centred_mu = centred_estimate(sums, "pooled")
    residual_totals = sums.totals - centred_mu * sums.counts
    n_total = float(sums.counts.sum())
    # the squared row residuals, from each cluster's centred sums
    squares = float(np.sum(sums.squares - 2.0 * centred_mu * sums.totals)) + centred_mu**2 * n_total
    return moulton_icc_of(sums.counts, residual_totals, squares)


def moulton_icc_of(
    counts: np.ndarray, residual_totals: np.ndarray, residual_squares: float
) -> float:
    """:func:`moulton_icc` from the cluster sizes, the clusters' residual totals and the sum
    of the rows' squared residuals."""
    n_total = float(np.sum(counts))
    pairs = float(counts @ counts) - n_total
    if not pairs > 0 or not residual_squares > 0:
        return 0.0
    covariance = (float(residual_totals @ residual_totals) - residual_squares) / pairs
    return float(min(max(covariance / (residual_squares / n_total), 0.0), 1.0))


def working_model_df(
    counts: np.ndarray, icc: float, estimand: str, *, jackknife: bool = False
) -> float | np.ndarray:
    """Satterthwaite degrees of freedom of the CR2 variance of a mean under an exchangeable
    working model with intraclass correlation ``icc``.

    Bell & McCaffrey (2002) compute the df of their bias-reduced variance under a working
    model; with independent rows (``icc = 0``) this is clubSandwich's df
    (:func:`satterthwaite_df_cr2`). Imbens & Kolesár (2016, section 5) take the working model
    from the data instead, a random cluster effect with the Moulton ICC
    (:func:`moulton_icc`): when a few large clusters carry most of the variance, the df falls
    towards the number of clusters that matter, however many small clusters there are. R's
    ``dfadjust::dfadjustSE(..., IK = TRUE, rho0 = TRUE)`` gives the same df for
    ``lm(y ~ 1)``.

    The variance is ``sum_g w_g r_g^2`` over cluster residuals ``r = (I - a 1'/A) z`` of
    independent cluster statistics ``z_g`` with means ``a_g mu`` and variances ``lambda_g``:
    pooled, ``z_g`` the cluster total, ``a_g = n_g``, ``lambda_g = n_g (1 + (n_g - 1) icc)``,
    cluster mean, ``z_g`` the cluster mean, ``a_g = 1``, ``lambda_g = icc + (1 - icc) / n_g``;
    in both ``w_g = 1 / (1 - a_g / A)`` with ``A = sum_g a_g`` (CR2; squared with
    ``jackknife``, the CR3 variance). With ``P = Cov(r)`` the df is
    ``(sum_g w_g P_gg)^2 / sum_gh w_g w_h P_gh^2``, evaluated in O(G) because ``P`` is
    diagonal plus rank two. ``counts`` may hold several designs along its last axis (shape
    ``(..., G)``): the df of each is returned.

    >>> import numpy as np
    >>> n = np.array([2, 3, 5, 4, 6, 1, 8, 3.0])
    >>> round(working_model_df(n, 0.0, "pooled"), 6)  # clubSandwich's CR2 df
    5.286318
    >>> round(working_model_df(np.full(8, 4.0), 0.3, "pooled"), 6)  # equal sizes: G - 1
    7.0
    """
    n = np.asarray(counts, dtype=np.float64)
    a, lam, w, c00, c01, q_diag = _working_model_terms(n, icc, estimand, jackknife)
    expectation = np.sum(w * (lam + q_diag), axis=-1)
    s00, s01, s11 = (np.sum(w * x, axis=-1) for x in (a * a, a * lam, lam * lam))
    # tr((C S)^2) for the 2 x 2 product
    cs00, cs01, cs10, cs11 = c00 * s00 + c01 * s01, c00 * s01 + c01 * s11, c01 * s00, c01 * s01
    squares = np.sum(w * w * lam * lam, axis=-1) + 2.0 * np.sum(w * w * lam * q_diag, axis=-1)
    squares = squares + cs00 * cs00 + 2.0 * cs01 * cs10 + cs11 * cs11
    df = np.where(
        squares > 0, expectation**2 / np.where(squares > 0, squares, 1.0), n.shape[-1] - 1.0
    )
    # equal sizes give G - 1 exactly, whatever the ICC; computed, it is off by rounding
    df = np.where(np.all(n == n[..., :1], axis=-1), n.shape[-1] - 1.0, df)
    return float(df) if df.ndim == 0 else df


def working_model_bias(
    counts: np.ndarray, icc: float, estimand: str, *, jackknife: bool = False
) -> float | np.ndarray:
    """The expected CR2 (``jackknife``: CR3) variance of a mean over its true variance,
    under the exchangeable working model of :func:`working_model_df`.

    CR2 is unbiased when rows are independent (1 at ``icc = 0``); the jackknife
    over-estimates, the more so the more of the rows the largest clusters hold (Bell &
    McCaffrey 2002; MacKinnon, Nielsen & Webb 2023). With ``P = Cov(r)`` of the cluster
    residuals and weights ``w_g = 1 / (1 - a_g / A)`` (squared for CR3) it is
    ``sum_g w_g P_gg / sum_g lambda_g``. ``counts`` may hold several designs along its last
    axis.

    >>> import numpy as np
    >>> n = np.array([2, 3, 5, 4, 6, 1, 8, 3.0])
    >>> round(float(working_model_bias(n, 0.0, "pooled")), 12)
    1.0
    >>> round(float(working_model_bias(n, 0.0, "pooled", jackknife=True)), 6)  # sum n/(1-n/N)/N
    1.197966
    """
    n = np.asarray(counts, dtype=np.float64)
    _, lam, w, _, _, q_diag = _working_model_terms(n, icc, estimand, jackknife)
    bias = np.sum(w * (lam + q_diag), axis=-1) / lam.sum(axis=-1)
    return float(bias) if bias.ndim == 0 else bias


def _working_model_terms(n: np.ndarray, icc: float, estimand: str, jackknife: bool):
    """The cluster statistics' means ``a`` and variances ``lam`` under the working model, the
    variance's weights ``w``, the rank-two part ``C = [[c00, c01], [c01, 0]]`` of
    ``P = Cov(r) = diag(lam) + [a, lam] C [a, lam]'`` and its diagonal ``q_diag``."""
    if estimand == "pooled":
        a = n
        lam = n * (1.0 + (n - 1.0) * icc)
    elif estimand == "cluster_mean":
        a = np.ones_like(n)
        lam = icc + (1.0 - icc) / n
    else:
        raise ValueError(f"unknown estimand {estimand!r}; expected one of {ESTIMANDS}")
    a_total, lam_total = a.sum(axis=-1), lam.sum(axis=-1)
    w = 1.0 / (1.0 - a / a_total[..., None])
    if jackknife:
        w = w * w
    c00, c01 = lam_total / a_total**2, -1.0 / a_total
    q_diag = c00[..., None] * a * a + 2.0 * c01[..., None] * a * lam
    return a, lam, w, c00, c01, q_diag


def row_variance(sums: ClusterSums) -> float:
    """Sample variance of the N rows (divisor N - 1); NaN when N < 2."""
    n = float(sums.counts.sum())
    if n < 2:
        return math.nan
    total = float(sums.totals.sum())
    ss = float(sums.squares.sum()) - total * (total / n)  # total^2 could overflow
    return max(ss, 0.0) / (n - 1.0)


def iid_variance(sums: ClusterSums) -> float:
    """The variance of the row mean if the N rows were independent: ``s^2 / N``."""
    return row_variance(sums) / float(sums.counts.sum())


class ICCEstimate(NamedTuple):
    """One-way ANOVA intraclass correlation and its ingredients."""

    icc: float
    msb: float
    msw: float
    n0: float
    var_between: float
    var_within: float


def icc_anova(sums: ClusterSums) -> ICCEstimate:
    """One-way ANOVA ICC with unequal cluster sizes (the ``n0`` of Snedecor & Cochran).

    ``rho = (MSB - MSW) / (MSB + (n0 - 1) MSW)``, raw (it can be negative). Returns NaN when
    it is undefined: fewer than two clusters, every cluster of size one (no within-cluster
    degrees of freedom), or no variation at all.

    Examples
    --------
    >>> import numpy as np
    >>> from clusterstats.core.grouping import ClusterSums, cluster_sums
    >>> n = np.array([2, 3, 5, 4, 6, 1, 8, 3.0]); t = np.array([1, 3, 2, 4, 1, 1, 6, 0.0])
    >>> round(icc_anova(ClusterSums(n, t, t)).icc, 7)
    0.3711171
    """
    g = sums.n_clusters
    n_total = float(sums.counts.sum())
    nan = ICCEstimate(math.nan, math.nan, math.nan, math.nan, math.nan, math.nan)
    if g < 2 or n_total - g < 1:
        return nan
    grand = float(sums.totals.sum()) / n_total
    means = sums.centred_means
    ssb = float(np.sum(sums.counts * (means - grand) ** 2))
    ssw = float(np.sum(sums.squares - sums.totals * means))
    ssw = max(ssw, 0.0)
    msb = ssb / (g - 1)
    msw = ssw / (n_total - g)
    n0 = (n_total - float(sums.counts @ sums.counts) / n_total) / (g - 1)
    denom = msb + (n0 - 1.0) * msw
    if denom <= 0.0:
        return ICCEstimate(math.nan, msb, msw, n0, math.nan, msw)
    rho = (msb - msw) / denom
    return ICCEstimate(rho, msb, msw, n0, (msb - msw) / n0, msw)


def icc_interval(
    sums: ClusterSums, est: ICCEstimate, confidence: float
) -> tuple[float, float, str]:
    """Confidence interval for the ANOVA ICC from the F ratio ``MSB / MSW``.

    Balanced clusters: Searle's (1971) exact interval under normality (as irr, pingouin and
    R's ICC package). Unbalanced: the same formula with ``n0`` in place of the common size
    (R ``ICC::ICCest(CI.type="THD")``), an approximation. Because the estimate is itself
    ``(F - 1) / (F + n0 - 1)``, this interval always contains it. Thomas & Hultquist's
    (1978) unbalanced interval was not chosen: it is built on the *unweighted* cluster means
    and, when sizes are related to the outcome, can exclude the ANOVA estimate.

    Returns ``(low, high, name_of_method)``; NaNs where the ICC is undefined.
    """
    if math.isnan(est.icc):
        return math.nan, math.nan, "undefined"
    if est.msw == 0.0:
        return 1.0, 1.0, "degenerate (no within-cluster variation)"
    g = sums.n_clusters
    df_between, df_within = g - 1.0, float(sums.counts.sum()) - g
    alpha = 1.0 - confidence
    size = float(sums.counts[0]) if sums.is_balanced else est.n0
    f_obs = est.msb / est.msw
    f_low = f_obs / special.fdtri(df_between, df_within, 1 - alpha / 2)
    f_high = f_obs * special.fdtri(df_within, df_between, 1 - alpha / 2)
    low = (f_low - 1) / (f_low + size - 1)
    high = (f_high - 1) / (f_high + size - 1)
    # The interval contains the estimate exactly; the two are computed along different
    # routes, so guard against a last-bit difference when a quantile is close to 1.
    low, high = min(low, est.icc), max(high, est.icc)
    return low, high, "searle_f" if sums.is_balanced else "searle_f_n0"


def design_effect_kish(mean_cluster_size: float, icc: float) -> float:
    """Kish's design effect ``1 + (m - 1) * icc``.

    Exactly 1 for clusters of one row, even where the ICC itself is undefined (NaN).
    """
    if mean_cluster_size == 1.0:
        return 1.0
    return 1.0 + (mean_cluster_size - 1.0) * icc


def design_effect_unequal(counts: np.ndarray, icc: float, estimand: str = "pooled") -> float:
    """Model-based design effect with unequal cluster sizes, under exchangeable correlation.

    Pooled: ``1 + icc * (sum n^2 / N - 1)`` (Eldridge, Ashby & Kerry 2006 with the population
    CV, which is exact for this model). Mean of cluster means:
    ``N / G^2 * sum((1 + (n_g - 1) icc) / n_g)``.
    """
    counts = np.asarray(counts, dtype=np.float64)
    if np.all(counts == 1.0):
        return 1.0  # no pairs of rows share a cluster, whatever the (undefined) ICC
    n_total = float(counts.sum())
    if estimand == "pooled":
        return 1.0 + icc * (float(counts @ counts) / n_total - 1.0)
    g = counts.shape[0]
    return n_total / g**2 * float(np.sum((1.0 + (counts - 1.0) * icc) / counts))


def nested_variance_shares(iccs: list[float]) -> list[float]:
    """Variance shares of nested levels from their one-way ICCs, coarse to fine: each
    level's share is the increase of the ICC over the coarser levels (negative and undefined
    ICCs count as 0), and the last share is what lies within the finest clusters. Exact for
    balanced designs, an approximation otherwise.

    >>> [round(x, 2) for x in nested_variance_shares([0.04, 0.1])]
    [0.04, 0.06, 0.9]
    """
    shares, previous = [], 0.0
    for icc in iccs:
        rho = icc if icc > 0 else 0.0  # NaN and negative ICCs count as 0
        shares.append(max(rho - previous, 0.0))
        previous = max(previous, rho)
    return [*shares, 1.0 - previous]
