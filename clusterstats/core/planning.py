"""Planning formulas for clustered evals: the budget identity of a two-stage design
(Donner & Klar 2000, ch. 5).

``K`` clusters of ``m`` rows each, ICC ``ρ`` and row variance ``σ²``:
``Var(mean) = σ² (ρ/K + (1 − ρ)/(K m)) = σ² (1 + (m − 1) ρ) / (K m)``.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from clusterstats.core._lazy import optimize, special
from clusterstats.core.variance import working_model_bias, working_model_df

__all__ = [
    "ScaledDesign",
    "clusters_at_same_cost",
    "clusters_for_half_width",
    "clusters_for_power",
    "deepened_design_effect",
    "design_effect_ratio",
    "effective_n",
    "equal_size_icc",
    "half_width",
    "icc_of_design_effect",
    "minimum_detectable_effect",
    "optimal_cluster_size",
    "variance_of_mean",
]


def _quantiles(confidence: float, power: float) -> tuple[float, float]:
    """``z_{1−α/2}`` of the two-sided level and ``z_{power}``."""
    return float(special.ndtri(0.5 + confidence / 2.0)), float(special.ndtri(power))


def _ratio(numerator: float, denominator: float) -> float:
    """``numerator / denominator``, infinite rather than an error when the denominator has
    underflowed to 0 (a target so small that its square is below floating-point range)."""
    return numerator / denominator if denominator > 0 else math.inf


def variance_of_mean(sigma2: float, icc: float, n_clusters: float, cluster_size: float) -> float:
    """``σ² (1 + (m − 1) ρ) / (K m)``.

    >>> round(variance_of_mean(0.25, 0.3, 30, 10), 10)  # 0.25 * 3.7 / 300
    0.0030833333
    """
    return sigma2 * (1.0 + (cluster_size - 1.0) * icc) / (n_clusters * cluster_size)


def half_width(
    sigma2: float, icc: float, n_clusters: float, cluster_size: float, confidence: float = 0.95
) -> float:
    """The ``t_{K−1}`` half-width of the interval for a mean under the budget identity.

    >>> round(half_width(0.25, 0.3, 30, 10), 4)
    0.1136
    """
    q = float(special.stdtrit(max(n_clusters - 1.0, 1.0), 0.5 + confidence / 2.0))
    return q * math.sqrt(variance_of_mean(sigma2, icc, n_clusters, cluster_size))


def effective_n(n_clusters: float, cluster_size: float, icc: float) -> float:
    """``K m / (1 + (m − 1) ρ)``; it never exceeds ``K / ρ``, however deep the clusters.

    >>> [round(effective_n(k, m, 0.5), 1) for k, m in ((100, 10), (100, 20), (200, 10))]
    [181.8, 190.5, 363.6]
    """
    return n_clusters * cluster_size / (1.0 + (cluster_size - 1.0) * icc)


def optimal_cluster_size(cost_per_cluster: float, cost_per_row: float, icc: float) -> float:
    """Rows per cluster that minimise the variance for a budget ``K (c_cluster + c_row m)``:
    ``m* = sqrt(c_cluster / c_row · (1 − ρ) / ρ)`` (Cochran 1977; Raudenbush 1997).

    >>> [round(optimal_cluster_size(*a), 2) for a in ((10, 1, 0.3), (1, 1, 0.5), (100, 1, 0.05))]
    [4.83, 1.0, 43.59]
    """
    if icc <= 0:
        return math.inf
    return math.sqrt(cost_per_cluster / cost_per_row * (1.0 - icc) / icc)


def clusters_for_half_width(
    sigma2: float,
    icc: float,
    cluster_size: float,
    half_width: float,
    confidence: float = 0.95,
    *,
    t_quantile: bool = False,
) -> float:
    """Clusters needed for a confidence-interval half-width ``h``:
    ``K = z² σ² (1 + (m − 1) ρ) / (m h²)`` with the normal quantile, or, with the
    ``t_{K−1}`` quantile, the ``K`` at which ``t_{K−1} sqrt(σ² (1 + (m − 1) ρ) / (K m))``
    equals ``h`` (unrounded; round up to plan). The t half-width falls strictly as ``K``
    grows, so the root is bracketed and solved; the t answer is at least 2 (fewer clusters
    have no between-cluster variance), and exactly 2 when 2 clusters already meet ``h``.

    For p = 0.5, ρ = 0.3, m = 10, h = 0.05: 142.13, so 143 clusters with z, and 145 with
    the t quantile (one t step gives 144.59; the root is 144.56):

    >>> round(clusters_for_half_width(0.25, 0.3, 10, 0.05), 2)
    142.13
    >>> k = clusters_for_half_width(0.25, 0.3, 10, 0.05, t_quantile=True)
    >>> round(k, 2), math.ceil(k)
    (144.56, 145)

    A wide target needs few clusters, where t and z differ most: ±0.3 at ρ = 0.1 takes
    4.53 clusters (z would say 2.13), and ±2 is met by the minimum of 2:

    >>> round(clusters_for_half_width(0.25, 0.1, 10, 0.3, t_quantile=True), 2)
    4.53
    >>> clusters_for_half_width(0.25, 0.1, 10, 2.0, t_quantile=True)
    2.0
    """
    base = _ratio(
        sigma2 * (1.0 + (cluster_size - 1.0) * icc), cluster_size * half_width * half_width
    )
    p = 0.5 + confidence / 2.0
    k = float(special.ndtri(p)) ** 2 * base
    if not t_quantile or not math.isfinite(k):
        return k

    def excess(clusters: float) -> float:
        # (t_{K-1} / h)^2 sigma2 deff / (K m) - 1, in the scale-free form q^2 base / K - 1
        q = float(special.stdtrit(clusters - 1.0, p))
        return q * q * base / clusters - 1.0

    if excess(2.0) <= 0.0:
        return 2.0
    high = max(2.0 * k, 4.0)  # the t root lies above the z one
    while excess(high) > 0.0:
        high *= 2.0
    return float(optimize.brentq(excess, 2.0, high, xtol=1e-12, rtol=4 * np.finfo(float).eps))


def clusters_for_power(
    sigma2_diff: float,
    icc_diff: float,
    cluster_size: float,
    effect: float,
    power: float = 0.8,
    confidence: float = 0.95,
) -> float:
    """Clusters needed to detect a paired difference ``δ`` with the given power:
    ``K = (z_{1−α/2} + z_{power})² σ²_d (1 + (m − 1) ρ_d) / (m δ²)``, with ``σ²_d`` and ``ρ_d``
    the variance and ICC of the per-item differences.

    For σ²_d = 0.2, ρ_d = 0.2, m = 5, δ = 0.03 and 80% power, and unclustered (m = 1):

    >>> round(clusters_for_power(0.2, 0.2, 5, 0.03), 1)
    627.9
    >>> round(clusters_for_power(0.2, 0.2, 1, 0.03), 1)
    1744.2
    """
    z = sum(_quantiles(confidence, power))
    numerator = z * z * sigma2_diff * (1.0 + (cluster_size - 1.0) * icc_diff)
    return _ratio(numerator, cluster_size * effect * effect)


def minimum_detectable_effect(
    sigma2_diff: float,
    icc_diff: float,
    n_clusters: float,
    cluster_size: float,
    power: float = 0.8,
    confidence: float = 0.95,
) -> float:
    """The smallest paired difference detectable with the given power at ``K`` clusters of
    ``m`` items: ``(z_{1−α/2} + z_{power}) sqrt(σ²_d (1 + (m − 1) ρ_d) / (K m))``.

    >>> round(minimum_detectable_effect(0.2, 0.2, 627.9, 5), 4)
    0.03
    """
    z = sum(_quantiles(confidence, power))
    return z * math.sqrt(variance_of_mean(sigma2_diff, icc_diff, n_clusters, cluster_size))


# Draws of cluster sizes behind the projected df of uneven sizes (ScaledDesign.df_at).
_DRAWS = 256
_DRAW_SEED = 20261206
# A pilot of up to this many clusters is projected from draws at every number of clusters;
# a larger one only at few clusters (at most _FEW_DRAWN), where a draw seldom holds the
# largest clusters, and from its expected sums beyond (the median drawn df is 2-3% above
# the expected sums' at 257 clusters, under 0.5% from 1,000, the factor within 1e-4;
# drawing 256 sets of up to 3 K clusters at each of 62 counts took seconds from 1,000
# clusters up).
_DRAWN_PILOT = 400
_FEW_DRAWN = 256


def equal_size_icc(icc: float, cluster_size: float, size_cv: float) -> float:
    """The ICC whose equal-size design effect ``1 + (m − 1) ρ'`` equals the unequal-size one
    ``1 + ((1 + CV²) m − 1) ρ`` (Eldridge, Ashby & Kerry 2006), so that the equal-size closed
    forms take clusters whose sizes vary with coefficient of variation ``size_cv``.

    >>> round(equal_size_icc(0.1, 10, 0.5), 6)  # 0.1 * (1.25 * 10 - 1) / 9
    0.127778
    """
    spread = 1.0 + size_cv**2
    if cluster_size <= 1.0 or spread == 1.0:
        return icc
    return icc * (spread * cluster_size - 1.0) / (cluster_size - 1.0)


def icc_of_design_effect(design_effect: float, concentration: float) -> float:
    """The ICC that gives ``design_effect`` under the unequal-size formula
    ``1 + (Σn²/N − 1) ρ``, with ``concentration = Σn²/N``; 0 without clustering, at most 1.

    >>> icc_of_design_effect(5.5, 10.0)  # (5.5 - 1) / (10 - 1)
    0.5
    """
    if concentration > 1.0 and design_effect > 1.0:
        return min((design_effect - 1.0) / (concentration - 1.0), 1.0)
    return 0.0


def deepened_design_effect(
    design_effect: float, icc: float, factor: float, concentration: float
) -> float:
    """The design effect once every cluster is ``factor`` times as deep: each ``n_g`` scaled
    by ``factor`` adds ``ρ (factor − 1) Σn²/N`` to ``1 + (Σn²/N − 1) ρ``.

    >>> deepened_design_effect(5.5, 0.5, 2.0, 10.0)  # 5.5 + 0.5 * 1 * 10
    10.5
    """
    return design_effect + icc * (factor - 1.0) * concentration


def design_effect_ratio(icc: float, reference_icc: float, concentration: float) -> float:
    """How much the unequal-size design effect changes when the ICC moves from
    ``reference_icc`` to ``icc``: ``(1 + ρ (Σn²/N − 1)) / (1 + ρ₀ (Σn²/N − 1))``.

    >>> design_effect_ratio(0.5, 0.0, 10.0)
    5.5
    """
    return (1.0 + icc * (concentration - 1.0)) / (1.0 + reference_icc * (concentration - 1.0))


def clusters_at_same_cost(
    n_clusters: float,
    cluster_size: float,
    new_cluster_size: float,
    cost_per_cluster: float,
    cost_per_row: float,
) -> float:
    """How many clusters of ``new_cluster_size`` rows the budget of ``n_clusters`` clusters of
    ``cluster_size`` rows buys, at ``cost_per_cluster`` a cluster and ``cost_per_row`` a row.

    >>> clusters_at_same_cost(30, 10, 20, 100.0, 5.0)  # 30 * 150 / 200
    22.5
    """
    budget = n_clusters * (cost_per_cluster + cost_per_row * cluster_size)
    return budget / (cost_per_cluster + cost_per_row * new_cluster_size)


def residual_shape(counts: np.ndarray, totals: np.ndarray) -> tuple[float, float]:
    """Skewness and kurtosis of the clusters' residual contributions to a pooled mean.

    ``e_g = T_g - n_g * mean`` with ``mean = sum T / sum n`` (the terms of the linearised
    estimate and of its sandwich variance); moments with divisor ``G``, the kurtosis not in
    excess (3 for normal contributions). ``(0, 1)`` when the residuals have no spread.

    >>> import numpy as np
    >>> skewness, kurtosis = residual_shape(np.ones(4), np.array([0.0, 0.0, 0.0, 4.0]))
    >>> round(skewness, 6), round(kurtosis, 6)  # 6 / 3^1.5 and 21 / 3^2
    (1.154701, 2.333333)
    """
    n = np.asarray(counts, dtype=np.float64)
    t = np.asarray(totals, dtype=np.float64)
    e = t - n * (t.sum() / n.sum())
    variance = float(np.mean(e * e))
    if not variance > 0.0:
        return 0.0, 1.0
    return float(np.mean(e**3) / variance**1.5), float(np.mean(e**4) / variance**2)


def expected_working_model_terms(
    sizes: np.ndarray,
    icc: float,
    estimand: str,
    clusters: Sequence[float] | np.ndarray,
    *,
    jackknife: bool = False,
) -> tuple[np.ndarray, np.ndarray]:
    """The working-model df and variance factor of ``K′`` clusters drawn from ``sizes``,
    from the draw's expected sums, at each ``K′`` of ``clusters`` at once.

    :func:`clusterstats.core.variance.working_model_df` and
    :func:`~clusterstats.core.variance.working_model_bias` are ratios of sums over the
    clusters. Drawn with replacement, each distinct size ``v`` (a share ``s_v`` of the
    clusters) is expected ``K′ s_v`` times, the totals ``A`` are ``K′`` times the mean, and
    a cluster's weight ``1 / (1 − a_g / A) = A / (A − a_g)`` is taken with the other
    clusters' total at its expectation, ``1 + a_g / ((K′ − 1) ā)`` (squared for the
    jackknife). The sums are those of the distinct sizes, so the cost is the number of
    distinct sizes times the number of ``K′``, whatever ``K′``. The ratio of expected sums
    is the median draw's to within ``O(1 / K′)``; with few clusters it is not (the
    products of sums differ from the products of their expectations), and
    :class:`ScaledDesign` draws there.

    At ``K′`` a multiple of the sizes given, the sums are those of the sizes repeated, and
    the answer is the working model's of the repeated sizes but for each weight's own
    cluster (``1 / (1 − a_g / A)`` against ``1 + a_g / (A − ā)``):

    >>> import numpy as np
    >>> from clusterstats.core.variance import working_model_bias, working_model_df
    >>> sizes = np.array([20, 25, 30, 40, 50, 60, 80, 120, 400, 900.0])
    >>> df, bias = expected_working_model_terms(sizes, 0.1, "pooled", [1000], jackknife=True)
    >>> repeated, options = np.tile(sizes, 100), (0.1, "pooled")
    >>> round(float(df[0]), 2), round(working_model_df(repeated, *options, jackknife=True), 2)
    (147.4, 147.4)
    >>> round(float(bias[0]), 4), round(working_model_bias(repeated, *options, jackknife=True), 4)
    (1.0033, 1.0034)
    """
    values, multiplicity = np.unique(np.asarray(sizes, dtype=np.float64), return_counts=True)
    share = multiplicity / float(multiplicity.sum())
    k = np.asarray(clusters, dtype=np.float64)[:, None]
    if estimand == "pooled":
        a, lam = values, values * (1.0 + (values - 1.0) * icc)
    elif estimand == "cluster_mean":
        a, lam = np.ones_like(values), icc + (1.0 - icc) / values
    else:
        raise ValueError(f"unknown estimand {estimand!r}")
    a_mean, lam_mean = float(share @ a), float(share @ lam)
    expected = k * share  # clusters of each distinct size
    w = 1.0 + a / ((k - 1.0) * a_mean)
    if jackknife:
        w = w * w
    a_total, lam_total = k[:, 0] * a_mean, k[:, 0] * lam_mean
    # the rank-two part of Cov(r), as in working_model_df
    c00, c01 = lam_total / a_total**2, -1.0 / a_total
    q_diag = c00[:, None] * a * a + 2.0 * c01[:, None] * a * lam
    weighted = expected * w
    expectation = np.sum(weighted * (lam + q_diag), axis=1)
    s00, s01, s11 = (weighted @ x for x in (a * a, a * lam, lam * lam))
    cs00, cs01, cs10, cs11 = c00 * s00 + c01 * s01, c00 * s01 + c01 * s11, c01 * s00, c01 * s01
    squares = np.sum(weighted * w * lam * (lam + 2.0 * q_diag), axis=1)
    squares = squares + cs00 * cs00 + 2.0 * cs01 * cs10 + cs11 * cs11
    df = np.where(squares > 0, expectation**2 / np.where(squares > 0, squares, 1.0), k[:, 0] - 1)
    if values.shape[0] == 1:  # equal sizes: G - 1, as working_model_df
        df = k[:, 0] - 1.0
    return df, expectation / lam_total


class ScaledDesign:
    """A pilot's own interval, projected to other numbers of clusters like its own.

    A pilot of ``K`` clusters gave an interval of half-width ``h`` whose design-based part
    has ``df`` degrees of freedom (the df of uneven cluster sizes; ``K - 1`` when sizes are
    equal). Drawing ``K'`` clusters from the same population of clusters (the same spread
    of sizes, the same heterogeneity) scales the standard error by ``sqrt(K / K')`` and the
    degrees of freedom plus one by ``K' / K`` (equal sizes: ``K' - 1``), so the half-width
    becomes ``h sqrt(K / K') t_{df'} / t_{df}`` with ``df' = (df + 1) K' / K - 1``. Nothing
    is assumed about how sizes, rates and correlation relate: the pilot's design effect,
    whatever made it, is kept. At ``K' = K`` the projection is the pilot's interval itself.

    With the pilot's cluster ``sizes`` the projection also follows how the df and, for a
    ``jackknife`` (CR3) variance, its upward bias change as more clusters dilute the largest
    ones (:meth:`df_at`, :meth:`bias_at`): power is then computed from the true spread of the
    estimate, not from the pilot's inflated standard error, so a plan made from a jackknife
    interval is not over-powered. Given the ``se`` of the pilot's variance, an interval
    wider than ``t_df · se`` (a studentized bootstrap's) keeps its excess width only as a
    small-sample term (:meth:`widening_at`). The same holds for an interval that widens
    another (a union with the cluster score interval): given the ``base_half_width`` of the
    interval it widens, the spread projected is that interval's and the excess fades.

    A pilot of 91 clusters with a half-width of 0.03 on 9 df has se ``0.03 / t_9 = 0.013262``;
    at four times the clusters the se halves (0.006631), the df grow to ``10 * 4 - 1 = 39``
    and the half-width is ``t_39 * 0.006631 = 2.022691 * 0.006631 = 0.0134``; an effect of
    0.03 is then found with chance ``F_t39(0.03 / 0.006631 - 2.022691) = F_t39(2.5015)``:

    >>> d = ScaledDesign(half_width=0.03, df=9.0, n_clusters=91, confidence=0.95)
    >>> round(d.se, 6), round(d.half_width(91), 6), round(d.half_width(364), 4)
    (0.013262, 0.03, 0.0134)
    >>> round(d.power(0.03, 364), 3)
    0.992
    >>> k = d.clusters_for_power(0.03, power=0.8); round(k, 1), round(d.power(0.03, k), 3)
    (157.9, 0.8)
    >>> k = d.clusters_for_half_width(0.015); round(k, 1), round(d.half_width(k), 6)
    (295.5, 0.015)
    """

    def __init__(
        self,
        *,
        half_width: float,
        df: float,
        n_clusters: float,
        confidence: float,
        sizes: np.ndarray | None = None,
        icc: float = 0.0,
        estimand: str = "pooled",
        jackknife: bool = False,
        se: float | None = None,
        skewness: float = 0.0,
        kurtosis: float | None = None,
        base_half_width: float | None = None,
    ):
        self.half_width_now = float(half_width)
        self.df = float(df)
        self.n_clusters = float(n_clusters)
        self.confidence = float(confidence)
        self._upper = 0.5 + self.confidence / 2.0
        t_now = float(special.stdtrit(self.df, self._upper))
        if se is not None:
            self.se = float(se)
        elif base_half_width is not None:
            self.se = float(base_half_width) / t_now
        else:
            self.se = self.half_width_now / t_now
        # how much wider than t * se the pilot's interval is (a studentized bootstrap's)
        self._widening_now = self.half_width_now / (t_now * self.se)
        self._skewness = float(skewness)
        # Pearson's bound: no distribution of skewness g has a kurtosis below 1 + g^2
        least = 1.0 + self._skewness**2
        self._kurtosis = least if kurtosis is None else max(float(kurtosis), least)
        self._sizes = None if sizes is None else np.asarray(sizes, dtype=np.float64)
        self._icc, self._estimand, self._jackknife = float(icc), estimand, bool(jackknife)
        self._drawn: dict[int, tuple[float, float]] = {}
        self._bias_now = 1.0
        if self._sizes is not None:
            self._bias_now = float(
                working_model_bias(self._sizes, self._icc, estimand, jackknife=self._jackknife)
            )

    def df_at(self, clusters: float) -> float:
        """The projected degrees of freedom at ``clusters``, at least 1.

        Without ``sizes``: ``(df + 1) K′ / K − 1``. With the pilot's cluster ``sizes`` (and
        the ``icc`` of the working model), the df of uneven sizes grows more slowly than the
        clusters, since a draw of few clusters seldom holds the few largest: it is the
        pilot's df times the ratio of the median working-model df
        (:func:`clusterstats.core.variance.working_model_df`) of ``K′`` and of ``K`` clusters
        drawn from the pilot's sizes with replacement (a fixed seed). A pilot of more than
        400 clusters draws only up to 256; beyond, the median draw's df is taken as its
        expected sums' (:func:`expected_working_model_terms`; 2-3% below it at 257 clusters,
        under 0.5% from 1,000).
        """
        if self._sizes is None:
            return max((self.df + 1.0) * clusters / self.n_clusters - 1.0, 1.0)
        ratio = self._drawn_terms(clusters)[0] / self._drawn_terms(self.n_clusters)[0]
        return max(self.df * ratio, 1.0)

    def bias_at(self, clusters: float) -> float:
        """The expected estimated variance over the true one at ``clusters`` (1 without
        ``sizes``).

        The jackknife (CR3) variance over-estimates by a factor that shrinks as the largest
        clusters hold a smaller share of the rows
        (:func:`clusterstats.core.variance.working_model_bias`): the pilot's factor, scaled
        by the ratio of the median factor of ``K′`` and of ``K`` drawn clusters.
        """
        if self._sizes is None:
            return 1.0
        ratio = self._drawn_terms(clusters)[1] / self._drawn_terms(self.n_clusters)[1]
        return self._bias_now * ratio

    def _drawn_terms(self, clusters: float) -> tuple[float, float]:
        k = max(math.floor(clusters + 0.5), 2)
        if k not in self._drawn and self._sizes.shape[0] > _DRAWN_PILOT and k > _FEW_DRAWN:
            self.prepare([k])
        if k not in self._drawn:
            rng = np.random.default_rng(_DRAW_SEED)
            drawn = self._sizes[rng.integers(0, self._sizes.shape[0], size=(_DRAWS, k))]
            options = (self._icc, self._estimand)
            found = working_model_df(drawn, *options, jackknife=self._jackknife)
            bias = working_model_bias(drawn, *options, jackknife=self._jackknife)
            self._drawn[k] = (
                float(np.median(np.minimum(found, k - 1.0))),
                float(np.median(bias)),
            )
        return self._drawn[k]

    def prepare(self, clusters: Sequence[float]) -> None:
        """Compute the projected df and jackknife factor at several numbers of clusters at
        once, where a large pilot takes them from its expected sums (see
        :func:`expected_working_model_terms`); the other counts are left to :meth:`df_at`."""
        if self._sizes is None or self._sizes.shape[0] <= _DRAWN_PILOT:
            return
        wanted = sorted(
            {max(math.floor(float(k) + 0.5), 2) for k in clusters}
            - self._drawn.keys()
            - set(range(_FEW_DRAWN + 1))
        )
        if not wanted:
            return
        df, bias = expected_working_model_terms(
            self._sizes,
            self._icc,
            self._estimand,
            np.asarray(wanted, dtype=np.float64),
            jackknife=self._jackknife,
        )
        for k, found, factor in zip(wanted, df.tolist(), bias.tolist(), strict=True):
            self._drawn[k] = (min(found, k - 1.0), factor)

    def sd_at(self, clusters: float) -> float:
        """The projected true standard deviation of the estimate at ``clusters``."""
        return (
            self.se
            / math.sqrt(self.bias_at(self.n_clusters))
            * math.sqrt(self.n_clusters / clusters)
        )

    def se_at(self, clusters: float) -> float:
        """The projected estimated standard error at ``clusters`` (the pilot's at ``K``)."""
        return self.sd_at(clusters) * math.sqrt(self.bias_at(clusters))

    def widening_at(self, clusters: float) -> float:
        """The projected ratio of the half-width to ``t_df · se`` at ``clusters``.

        1 when the pilot's interval is ``t_df · se`` (neither ``se`` nor ``base_half_width``
        given). A studentized bootstrap widens the t interval by a small-sample term of order
        ``1 / K`` (Hall 1992, ch. 3), and a score interval differs from the Wald interval by
        a term of the same order, which fades as the clusters grow: the pilot's excess is
        scaled by ``df / df′``.
        """
        return 1.0 + (self._widening_now - 1.0) * self.df / self.df_at(clusters)

    def half_width(self, clusters: float) -> float:
        """The projected half-width at ``clusters`` clusters."""
        q = float(special.stdtrit(self.df_at(clusters), self._upper))
        return q * self.se_at(clusters) * self.widening_at(clusters)

    def test_sd_at(self, clusters: float) -> float:
        """The projected standard deviation of ``estimate - half-width`` at ``clusters``.

        The interval's lower end moves with the estimate and, through the estimated se, with
        the cluster residuals' squares. For ``K`` clusters drawn alike, with residual
        contributions ``e_g`` of skewness ``γ`` (oriented towards the effect) and kurtosis
        ``κ``, the delta method gives ``Cov(Σ e, Σ e²) = K E[e³]`` and
        ``Var(Σ e²) = K (E[e⁴] − E[e²]²)``, so that ``Var(estimate − q se) / Var(estimate)``
        is ``1 − q γ / √K + q² (κ − 1) / (4 K)``. Skewed contributions that come with a
        larger se when the estimate is larger make the test decide more often than the
        estimate's spread alone suggests; a heavy-tailed se makes it decide less often. The
        second term matters where few clusters of very uneven sizes are drawn: on the
        bundled MMLU-Pro sources (``κ`` near 16), at 20 clusters, it is what brings the
        projected spread of the interval's end to the one drawn. By Pearson's inequality
        ``κ ≥ 1 + γ²`` the ratio is never negative; it is kept within ``[1/4, 4]``.
        """
        k = max(float(clusters), 2.0)
        q = float(special.stdtrit(self.df_at(clusters), self._upper)) * self.widening_at(clusters)
        factor = (
            1.0 - q * self._skewness / math.sqrt(k) + q * q * (self._kurtosis - 1.0) / (4.0 * k)
        )
        return self.sd_at(clusters) * math.sqrt(min(max(factor, 0.25), 4.0))

    def power(self, effect: float, clusters: float) -> float:
        """The chance that the interval at ``clusters`` excludes 0 when the truth is
        ``effect`` (the far tail is negligible and left out)."""
        shift = (abs(effect) - self.half_width(clusters)) / self.test_sd_at(clusters)
        return float(special.stdtr(self.df_at(clusters), shift))

    def detectable_effect(self, clusters: float, power: float) -> float:
        """The smallest effect found with ``power`` at ``clusters`` clusters."""
        quantile = float(special.stdtrit(self.df_at(clusters), power))
        return self.half_width(clusters) + quantile * self.test_sd_at(clusters)

    def clusters_for_half_width(self, target: float) -> float:
        """Clusters whose projected half-width is ``target`` (unrounded, at least 2)."""
        return self._solve(lambda k: self.half_width(k) - target)

    def clusters_for_power(self, effect: float, *, power: float) -> float:
        """Clusters at which ``effect`` is found with ``power`` (unrounded, at least 2)."""
        return self._solve(lambda k: self.detectable_effect(k, power) - abs(effect))

    def _solve(self, excess) -> float:
        """The root of a function that falls as the clusters grow, at least 2."""
        if excess(2.0) <= 0.0:
            return 2.0
        high = max(4.0, 2.0 * self.n_clusters)
        while excess(high) > 0.0:
            high *= 2.0
            if high > 1e15:
                return math.inf
        return float(optimize.brentq(excess, 2.0, high, xtol=1e-10, rtol=1e-12))
