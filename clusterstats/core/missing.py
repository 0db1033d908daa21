"""Missing responses under cluster dependence: response propensities that respect the
clusters, the normalised (Hájek) inverse-probability-weighted mean with a stacked sandwich
variance, bounds, and the δ-adjustment for departures from missing at random.

Notation: row ``i`` of cluster ``g`` has response indicator ``R_i``, outcome
``y_i`` (used only when ``R_i = 1``) and response propensity ``π_i``; ``w_i = 1/π_i``.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np
from numpy.typing import NDArray

from clusterstats.core import intervals as iv
from clusterstats.core._lazy import special
from clusterstats.core.grouping import ClusterSums
from clusterstats.core.variance import icc_anova
from clusterstats.errors import DegenerateDataError

__all__ = [
    "DEFAULT_MIN_PROPENSITY",
    "IPWEstimate",
    "delta_adjusted_mean",
    "hajek_cluster_propensity",
    "hajek_logistic_propensity",
    "missingness_chi_square",
    "shrunk_cluster_propensities",
    "tipping_delta",
]

#: Propensities are floored here before weighting (weights capped at 20).
DEFAULT_MIN_PROPENSITY = 0.05


class IPWEstimate(NamedTuple):
    estimate: float
    variance: float  # stacked sandwich, times G/(G-1)
    variance_ignoring_propensity: float  # as if the propensities were known
    df: float  # G - 1
    n_clusters: int  # clusters with at least one response
    n_lost_clusters: int  # clusters where no row responded: nothing can stand in for them
    truncated_weight_share: float  # share of the total weight removed by the floor
    kish_n: float  # (Σw)² / Σw² over responders: the effective n of the weights
    propensity_min: float


def shrunk_cluster_propensities(
    responded: NDArray[np.float64], rows: NDArray[np.float64]
) -> tuple[NDArray[np.float64], float, float]:
    """Cluster response rates shrunk towards the overall rate (empirical Bayes).

    With ``r_g`` responses among ``n_g`` rows, ``π_g = (r_g + κ p̄) / (n_g + κ)``: a
    beta-binomial posterior mean whose prior strength ``κ = 1/ρ - 1`` comes from the one-way
    ANOVA ICC ``ρ`` of the response indicator (so strongly clustered missingness keeps each
    cluster's own rate, and unclustered missingness pools towards ``p̄``). Returns
    ``(π_g, κ, p̄)``; ``κ`` is inf (every ``π_g = p̄``) when ``ρ ≤ 0``.

    >>> r, n = np.array([9.0, 1.0, 5.0]), np.array([10.0, 10.0, 10.0])
    >>> pi, kappa, p = shrunk_cluster_propensities(r, n)
    >>> np.round(pi, 3), round(kappa, 3), p
    (array([0.86, 0.14, 0.5 ]), 1.105, 0.5)
    """
    r = np.asarray(responded, dtype=np.float64)
    n = np.asarray(rows, dtype=np.float64)
    p_bar = float(r.sum() / n.sum())
    rho = icc_anova(ClusterSums(n, r, r, 0.0)).icc if r.size > 1 else math.nan
    if not (np.isfinite(rho) and rho > 0):
        return np.full(r.shape, p_bar), math.inf, p_bar
    kappa = 1.0 / min(rho, 1.0) - 1.0
    return (r + kappa * p_bar) / (n + kappa), kappa, p_bar


def _weights(pi: NDArray[np.float64], floor: float) -> tuple[NDArray[np.float64], NDArray]:
    """``1 / max(π, floor)`` and the mask of rows whose propensity was floored."""
    floored = pi < floor
    return 1.0 / np.maximum(pi, floor), floored


def _finish(
    influence: NDArray[np.float64],
    influence_ignoring: NDArray[np.float64],
    estimate: float,
    n_clusters: int,
    n_lost: int,
    weights: NDArray[np.float64],
    raw_weights: NDArray[np.float64],
    pi_min: float,
    multiplicity: NDArray[np.float64] | None = None,
) -> IPWEstimate:
    """``weights``/``raw_weights`` per responding row, or per cluster with ``multiplicity``
    responding rows each."""
    k = np.ones_like(weights) if multiplicity is None else multiplicity
    g = n_clusters
    scale = g / (g - 1.0) if g > 1 else math.nan
    return IPWEstimate(
        estimate=float(estimate),
        variance=float(influence @ influence) * scale,
        variance_ignoring_propensity=float(influence_ignoring @ influence_ignoring) * scale,
        df=float(g - 1),
        n_clusters=g,
        n_lost_clusters=n_lost,
        truncated_weight_share=float(1.0 - (k @ weights) / (k @ raw_weights)),
        kish_n=float((k @ weights) ** 2 / (k @ (weights * weights))),
        propensity_min=pi_min,
    )


def hajek_cluster_propensity(
    rows: NDArray[np.float64],
    responded: NDArray[np.float64],
    totals: NDArray[np.float64],
    *,
    min_propensity: float = DEFAULT_MIN_PROPENSITY,
    shrink: bool = True,
) -> IPWEstimate:
    """Hájek IPW mean with cluster-level propensities, from per-cluster sums.

    ``rows`` (``n_g``), ``responded`` (``r_g``) and ``totals`` (``Σ_{responders} y``) per
    cluster. The propensities are :func:`shrunk_cluster_propensities` (``shrink=True``) or
    the raw rates ``r_g/n_g`` (cluster fixed effects, which make the Hájek mean
    ``Σ n_g ȳ_g,obs / Σ n_g``). The variance stacks the estimating equation of
    ``p̄`` with that of the mean (``κ`` held fixed), clustered, times ``G/(G-1)``; with
    fixed effects the correction is exactly zero.
    """
    n = np.asarray(rows, dtype=np.float64)
    r = np.asarray(responded, dtype=np.float64)
    s = np.asarray(totals, dtype=np.float64)
    if shrink:
        pi, kappa, p_bar = shrunk_cluster_propensities(r, n)
    else:
        with np.errstate(invalid="ignore", divide="ignore"):
            pi = np.where(n > 0, r / n, 0.0)
        kappa, p_bar = 0.0, float(r.sum() / n.sum())
    has = r > 0
    lost = int((~has).sum())
    pi, r_h, s_h, n_h = pi[has], r[has], s[has], n[has]
    w, floored = _weights(pi, min_propensity)
    mu = float((s_h * w).sum() / (r_h * w).sum())
    psi_mu = (s_h - mu * r_h) * w  # per cluster
    a_mumu = float((r_h * w).sum())
    ignoring = psi_mu / a_mumu
    if shrink and math.isfinite(kappa) and kappa > 0:
        # ∂w_g/∂p̄ = -w_g² κ/(n_g + κ) where the floor is not binding
        dw = np.where(floored, 0.0, -(w * w) * kappa / (n_h + kappa))
        a_mup = -float(((s_h - mu * r_h) * dw).sum())
        psi_p = r_h - p_bar * n_h
        influence = (psi_mu - a_mup / float(n.sum()) * psi_p) / a_mumu
    elif shrink and math.isinf(kappa):  # π_g = p̄ for every cluster: w is a constant
        influence = ignoring
    else:
        influence = ignoring  # fixed effects: each cluster's score is zero at the MLE
    return _finish(influence, ignoring, mu, int(has.sum()), lost, w, 1.0 / pi, float(pi.min()), r_h)


class LogisticFit(NamedTuple):
    pi: NDArray[np.float64]  # per row
    coefficients: NDArray[np.float64]  # covariate slopes
    cluster_effects: NDArray[np.float64]  # logit intercept of each fitted cluster (NaN if not)
    iterations: int


def fit_logistic_propensity(
    responded: NDArray[np.float64],
    codes: NDArray[np.intp],
    covariates: NDArray[np.float64],
    *,
    max_iterations: int = 100,
) -> LogisticFit:
    """Logistic regression of response on covariates with one intercept per cluster
    (cluster fixed effects), by Newton's method on the block-structured information matrix.

    Clusters where every row (or no row) responded have the MLE ``π = 1`` (``0``) and are
    left out of the fit. Covariates that are constant within every cluster are absorbed by
    the cluster effects and raise ``ValueError``.
    """
    r = np.asarray(responded, dtype=np.float64)
    x = np.asarray(covariates, dtype=np.float64)
    g = int(codes.max()) + 1
    n_g = np.bincount(codes, minlength=g).astype(np.float64)
    r_g = np.bincount(codes, weights=r, minlength=g)
    mixed = (r_g > 0) & (r_g < n_g)
    pi = np.where(r_g[codes] > 0, 1.0, 0.0)
    effects = np.full(g, np.nan)
    p = x.shape[1]
    rows = mixed[codes]
    if not rows.any():
        return LogisticFit(pi, np.zeros(p), effects, 0)
    cr, rr, xr = codes[rows], r[rows], x[rows]
    if p:
        # Slopes are identified by variation within clusters only.
        counts = np.bincount(cr, minlength=g)[cr][:, None]
        means = np.column_stack([np.bincount(cr, weights=xr[:, j], minlength=g) for j in range(p)])
        within = xr - means[cr] / counts
        if np.linalg.matrix_rank(within) < p:
            raise ValueError(
                "a covariate is constant within every cluster (or collinear with others): the "
                "cluster effects already absorb it"
            )
    u = special.logit((r_g + 0.5) / (n_g + 1.0))
    beta = np.zeros(p)
    iterations = 0
    for iterations in range(1, max_iterations + 1):  # noqa: B007 - reported after the loop
        eta = u[cr] + xr @ beta
        prob = special.expit(eta)
        wt = prob * (1.0 - prob)
        resid = rr - prob
        d = np.bincount(cr, weights=wt, minlength=g)[mixed]
        s_u = np.bincount(cr, weights=resid, minlength=g)[mixed]
        c = np.column_stack([np.bincount(cr, weights=wt * xr[:, j], minlength=g) for j in range(p)])
        c = c[mixed] if p else np.zeros((int(mixed.sum()), 0))
        e = (xr * wt[:, None]).T @ xr
        s_b = xr.T @ resid
        schur = e - c.T @ (c / d[:, None])
        d_beta = np.linalg.solve(schur, s_b - c.T @ (s_u / d)) if p else np.zeros(0)
        d_u = (s_u - c @ d_beta) / d
        u[mixed] += d_u
        beta += d_beta
        if max(np.abs(d_u).max(initial=0.0), np.abs(d_beta).max(initial=0.0)) < 1e-10:
            break
    else:
        raise ValueError(
            f"the response model did not converge in {max_iterations} iterations (a covariate "
            "may separate responders from non-responders within clusters)"
        )
    pi[rows] = special.expit(u[cr] + xr @ beta)
    effects[mixed] = u[mixed]
    return LogisticFit(pi, beta, effects, iterations)


def hajek_logistic_propensity(
    y: NDArray[np.float64],
    responded: NDArray[np.float64],
    codes: NDArray[np.intp],
    covariates: NDArray[np.float64],
    *,
    min_propensity: float = DEFAULT_MIN_PROPENSITY,
) -> tuple[IPWEstimate, LogisticFit]:
    """Hájek IPW mean with propensities from :func:`fit_logistic_propensity`, and its stacked
    sandwich variance (the estimating equations ``ψ = [R w (y - μ); S(α)]`` stacked, the
    meat summed within
    clusters, times ``G/(G-1)``). ``y`` may hold anything where ``responded`` is 0."""
    r = np.asarray(responded, dtype=np.float64)
    x = np.asarray(covariates, dtype=np.float64)
    fit = fit_logistic_propensity(r, codes, x)
    g = int(codes.max()) + 1
    has = np.bincount(codes, weights=r, minlength=g) > 0
    resp = r > 0
    pi = fit.pi
    w_all, floored = _weights(np.where(resp, pi, 1.0), min_propensity)
    w = np.where(resp, w_all, 0.0)
    yy = np.where(resp, y, 0.0)
    mu = float((w * yy).sum() / w.sum())
    a_mumu = float(w.sum())
    psi_mu_rows = w * (yy - mu)
    psi_mu = np.bincount(codes, weights=psi_mu_rows, minlength=g)
    ignoring = psi_mu / a_mumu
    # Parameters: one intercept per fitted ("mixed") cluster, then the covariate slopes.
    n_g = np.bincount(codes, minlength=g)
    r_g = np.bincount(codes, weights=r, minlength=g)
    mixed = (r_g > 0) & (r_g < n_g)
    rows = mixed[codes]
    p = x.shape[1]
    influence = ignoring
    if rows.any():
        cr = codes[rows]
        pr = pi[rows]
        wt = pr * (1.0 - pr)
        # -∂ψ_μ/∂η_i = R_i (y_i - μ)(1 - π_i)/π_i where the floor does not bind
        grad = np.where(resp & ~floored, (yy - mu) * (1.0 - pi) / np.maximum(pi, 1e-300), 0.0)
        grad = grad[rows]
        a_mu_u = np.bincount(cr, weights=grad, minlength=g)[mixed]
        a_mu_b = grad @ x[rows]
        d = np.bincount(cr, weights=wt, minlength=g)[mixed]
        c = np.column_stack(
            [np.bincount(cr, weights=wt * x[rows][:, j], minlength=g) for j in range(p)]
        )
        c = c[mixed] if p else np.zeros((int(mixed.sum()), 0))
        e = (x[rows] * wt[:, None]).T @ x[rows]
        # Solve [[D, C], [C', E]] [k_u; k_b] = [a_mu_u; a_mu_b] by the Schur complement.
        if p:
            schur = e - c.T @ (c / d[:, None])
            k_b = np.linalg.solve(schur, a_mu_b - c.T @ (a_mu_u / d))
        else:
            k_b = np.zeros(0)
        k_u = (a_mu_u - c @ k_b) / d
        # Scores per cluster: the intercept's is zero at the MLE; the slopes' are not.
        score_rows = (r - pi)[rows]
        s_b = (
            np.column_stack(
                [np.bincount(cr, weights=score_rows * x[rows][:, j], minlength=g) for j in range(p)]
            )
            if p
            else np.zeros((g, 0))
        )
        s_u = np.zeros(g)
        s_u[mixed] = np.bincount(cr, weights=score_rows, minlength=g)[mixed]
        k_u_full = np.zeros(g)
        k_u_full[mixed] = k_u
        influence = (psi_mu - s_u * k_u_full - s_b @ k_b) / a_mumu
    raw = np.where(resp, 1.0 / np.maximum(pi, 1e-300), 0.0)
    estimate = _finish(
        influence[has],
        ignoring[has],
        mu,
        int(has.sum()),
        int((~has).sum()),
        w[resp],
        raw[resp],
        float(pi[resp].min()),
    )
    return estimate, fit


def missingness_chi_square(
    rows: NDArray[np.float64], missing: NDArray[np.float64]
) -> tuple[float, float, float]:
    """Pearson's chi-square test that the missing rate is the same in every cluster
    (the G x 2 table of missing and present rows), as ``scipy.stats.chi2_contingency``
    without continuity correction. Returns ``(statistic, df, p_value)``.

    >>> missingness_chi_square(np.array([10.0, 10.0]), np.array([1.0, 7.0]))[2] < 0.05
    True
    """
    n = np.asarray(rows, dtype=np.float64)
    m = np.asarray(missing, dtype=np.float64)
    q = float(m.sum() / n.sum())
    if q <= 0.0 or q >= 1.0 or n.size < 2:
        return 0.0, float(n.size - 1), 1.0
    statistic = float(((m - n * q) ** 2 / (n * q * (1.0 - q))).sum())
    df = float(n.size - 1)
    return statistic, df, float(special.chdtrc(df, statistic))


def delta_adjusted_mean(
    rows: NDArray[np.float64],
    responded: NDArray[np.float64],
    totals: NDArray[np.float64],
    delta: float,
    *,
    binary: bool,
) -> float:
    """The pooled mean when each missing row is imputed at its cluster's observed mean
    shifted by ``δ``: on the logit scale for a binary outcome (``expit(logit(p̂_g) + δ)``), on
    the outcome scale otherwise. ``δ = 0`` is missing at random within clusters. A cluster
    observed at 0% or 100% uses ``(Σ y + 0.5)/(r_g + 1)`` so that ``δ`` can move it, and a
    cluster with no response uses the overall observed mean.

    >>> round(delta_adjusted_mean(np.array([4., 4.]), np.array([2., 4.]), np.array([1., 3.]),
    ...                           0.0, binary=True), 4)
    0.625
    """
    n = np.asarray(rows, dtype=np.float64)
    r = np.asarray(responded, dtype=np.float64)
    s = np.asarray(totals, dtype=np.float64)
    overall = float(s.sum() / r.sum())
    if binary:
        with np.errstate(invalid="ignore", divide="ignore"):
            rate = s / r
        # a cluster observed at 0% or 100% gets half a success or failure, so δ can move it
        extreme = (r > 0) & ((s <= 0) | (s >= r))
        p_obs = np.where(r > 0, np.where(extreme, (s + 0.5) / (r + 1.0), rate), overall)
        p_obs = np.clip(p_obs, 1e-12, 1 - 1e-12)
        imputed = special.expit(special.logit(p_obs) + delta)
    else:
        imputed = np.where(r > 0, s / np.maximum(r, 1.0), overall) + delta
    return float((s.sum() + ((n - r) * imputed).sum()) / n.sum())


class IPWInterval(NamedTuple):
    estimate: float
    se: float
    low: float
    high: float
    df: float
    method: str
    n_eff: float
    notes: tuple[str, ...]


IPW_METHODS = ("auto", "cr1", "wilson", "korn_graubard")


def ipw_interval(
    fit: IPWEstimate,
    *,
    method: str,
    confidence: float,
    is_binary: bool,
    n_rows: int,
    cap_n_eff: bool = True,
) -> IPWInterval:
    """The interval around a Hájek IPW mean from its stacked sandwich variance and ``G - 1``
    df: Korn–Graubard on the effective n for a binary outcome (``auto``), Wilson on the
    effective n, or the symmetric t interval (``cr1``, the only one for scores)."""

    if method not in IPW_METHODS:
        raise ValueError(f"method must be one of {IPW_METHODS} with inverse-probability weights")
    if method == "auto":
        method = "korn_graubard" if is_binary else "cr1"
    if method in ("wilson", "korn_graubard") and not is_binary:
        raise ValueError(f"method {method!r} needs a binary outcome")

    mu, var, df = fit.estimate, fit.variance, fit.df
    se = math.sqrt(var) if var >= 0 else math.nan
    notes: list[str] = []
    p = min(max(mu, 0.0), 1.0)
    if not var > 1e-24 * max(mu * mu, 1e-300):
        if not is_binary:
            raise DegenerateDataError(
                "the weighted responses have no spread across clusters: no interval can be "
                "estimated from them"
            )
        g = float(fit.n_clusters)
        low, high, message = iv.clopper_pearson_fallback(
            p,
            g,
            confidence,
            reason="the weighted responses have no spread across clusters, so their variance "
            "is zero",
            basis=f"the number of clusters ({fit.n_clusters})",
        )
        return IPWInterval(
            mu, math.nan, low, high, math.nan, "ipw_clopper_pearson_fallback", g, (message,)
        )
    if method == "cr1" or p in (0.0, 1.0):
        low, high = iv.t_interval(mu, var, df, confidence)
        n_eff = math.nan
        used = "ipw_t"
    else:
        fn = iv.korn_graubard if method == "korn_graubard" else iv.wilson_effective_n
        n_eff = fn(p, var, df, n_rows, confidence, cap=cap_n_eff)[2]
        low, high, cap_note = iv.effective_n_interval(
            method, p, var, df, n_rows, confidence, cap=cap_n_eff
        )
        if cap_note:
            notes.append(cap_note)
        used = f"ipw_{method}"
    if is_binary:
        low, high = max(low, 0.0), min(high, 1.0)
    return IPWInterval(mu, se, low, high, df, used, n_eff, tuple(notes))


def tipping_delta(
    rows: NDArray[np.float64],
    responded: NDArray[np.float64],
    totals: NDArray[np.float64],
    target: float,
    *,
    binary: bool,
    low: float = -20.0,
    high: float = 20.0,
) -> float:
    """The δ in ``[low, high]`` at which :func:`delta_adjusted_mean` reaches ``target``
    (by bisection; the adjusted mean increases with δ); ``-inf`` or ``inf`` when it stays
    above or below the target over the whole range.

    >>> n, r, s = np.array([4.0, 4.0]), np.array([2.0, 4.0]), np.array([1.0, 3.0])
    >>> d = tipping_delta(n, r, s, 0.7, binary=True)
    >>> round(delta_adjusted_mean(n, r, s, d, binary=True), 6)
    0.7
    """

    def gap(delta: float) -> float:
        return delta_adjusted_mean(rows, responded, totals, delta, binary=binary) - target

    gap_low, gap_high = gap(low), gap(high)
    if gap_low > 0:
        return -math.inf
    if gap_high < 0:
        return math.inf
    for _ in range(100):
        middle = 0.5 * (low + high)
        if gap(middle) < 0:
            low = middle
        else:
            high = middle
    return 0.5 * (low + high)
