"""Confidence intervals from an estimate, its variance and degrees of freedom.

The binary-outcome intervals accept a *non-integer* effective sample size: that is how a
design effect enters Wilson and Clopper–Pearson (R survey's ``svyciprop``).
"""

from __future__ import annotations

import math
from typing import Literal, get_args

import numpy as np
from numpy.typing import NDArray

from clusterstats.core._lazy import special
from clusterstats.errors import DegenerateDataWarning, warn

__all__ = [
    "AUTO_BOOTSTRAP_MAX_CLUSTERS",
    "METHODS",
    "Method",
    "auto_method",
    "clopper_pearson",
    "clopper_pearson_fallback",
    "effective_clusters_df",
    "effective_n_interval",
    "korn_graubard",
    "t_interval",
    "wilson",
    "wilson_effective_n",
]

#: Interval methods understood by ``cluster_ci`` (``"bootstrap"`` is an alias of
#: ``"bootstrap_bca"``).
Method = Literal[
    "auto",
    "naive",
    "cr1",
    "cr2",
    "cr2_ik",
    "cr3",
    "cr3_ik",
    "wilson",
    "korn_graubard",
    "korn_graubard_guarded",
    "korn_graubard_inverted",
    "korn_graubard_hybrid",
    "bootstrap",
    "bootstrap_bca",
    "bootstrap_percentile",
    "bootstrap_t",
    "score",
    "korn_graubard_hybrid_or_score",
    "bootstrap_t_or_score",
]
METHODS: tuple[str, ...] = get_args(Method)
#: The unions with the cluster score interval (``clusterstats.core.score``), and the method
#: each unites it with.
SCORE_UNIONS: dict[str, str] = {
    "korn_graubard_hybrid_or_score": "korn_graubard_hybrid",
    "bootstrap_t_or_score": "bootstrap_t",
}
BINARY_ONLY_METHODS = (
    "wilson",
    "korn_graubard",
    "korn_graubard_guarded",
    "korn_graubard_inverted",
    "korn_graubard_hybrid",
    "korn_graubard_hybrid_or_score",
)

#: Below this many clusters a FewClustersWarning is emitted: cluster-robust variances are
#: biased downwards and the bootstrap distribution is lumpy (Cameron & Miller 2015).
FEW_CLUSTERS = 20

#: Up to this many clusters the default interval of a continuous outcome is the studentized
#: bootstrap; above it, CR2 (see :func:`auto_method`).
AUTO_BOOTSTRAP_MAX_CLUSTERS = 2000


def auto_method(*, is_binary: bool, n_clusters: int, uneven_ratio: bool = False) -> str:
    """The interval method that ``method="auto"`` resolves to.

    The rule follows the coverage studies, on simulated grids (``docs/coverage-rates.md``,
    ``docs/coverage.md``, ``docs/coverage-paired.md``) and on the bundled real benchmarks
    drawn as populations (``docs/coverage-real-data.md``), all produced by the scripts in
    ``studies/``:

    * binary outcomes: ``"korn_graubard_hybrid"``, the Korn–Graubard test inverted with the
      beta-binomial ICC re-estimated under each candidate rate (``"korn_graubard_inverted"``),
      whose design effect is never below the design-based (CR2) one, stretched for the
      degrees of freedom that uneven cluster sizes lose. The model alone keeps rare outcomes
      seen in one or two clusters honest on simulated grids, but on real benchmarks, where a
      few large clusters differ most (MMLU-Pro's largest source holds 8% of the questions and
      answers 20 points below the rest), its likelihood ICC is set by the many small clusters
      and it covers 83–92%; the design-based floor brings those cells to 93–96%;
    * binary outcomes whose estimate is a ratio of totals over clusters of uneven sizes (the
      ``pooled`` estimand, ``uneven_ratio=True``) on :data:`FEW_CLUSTERS` or more clusters:
      ``"korn_graubard_hybrid_or_score"``, the union of that interval with the cluster score
      interval, which evaluates the sandwich variance under each candidate rate (Fieller
      1954 for a ratio; Saha, Miller & Wang 2016) and so sees the covariance of cluster size
      and outcome that a variance at the estimate misses. On real benchmarks the hybrid alone
      covers 93.3% in its worst cells (MMLU-Pro by source, BBH by task); with the union for
      these ratios the default covers at least 94.25% in every rate cell with 20 or more
      clusters. It costs width only where that covariance can arise, and over-covers where
      it does not (on simulated rates with sizes unrelated to outcomes, a mean gap to 95% of
      2.3 points for the pooled rate, the hybrid's 1.9); with fewer clusters the score
      interval is often unbounded;
    * continuous outcomes (scores, and paired differences) with at most
      :data:`AUTO_BOOTSTRAP_MAX_CLUSTERS` clusters: ``"bootstrap_t"``, the studentized
      cluster bootstrap, never narrower than the jackknife (CR3) interval with the df of
      uneven sizes (``"cr3_ik"``), which is never narrower than CR2's.
      On skewed and zero-inflated eval scores (judge scores, ROUGE, rewards) and on paired
      differences of rare outcomes, CR2 falls to 74–93% with 10 to 100 clusters, where
      ``"bootstrap_t"`` stays at or above 93%;
    * continuous outcomes with more clusters: ``"cr2"``, Bell–McCaffrey with Satterthwaite
      df. The skewness that CR2 misses shrinks as ``1/sqrt(G)``: on the most skewed score
      model studied (one zero-inflated lognormal reward per cluster) CR2 covers 89.6% at
      G = 100, 94.0% at G = 1,000 and 94.5% at G = 2,000, and at least 94.1% on every
      score and paired model studied from 2,000 clusters on (``docs/coverage-many-clusters.md``,
      ``studies/coverage_many_clusters.py``), while the bootstrap's cost grows with ``G``.

    Parameters
    ----------
    is_binary : bool
        Whether every outcome is 0 or 1.
    n_clusters : int
        The number of clusters with data.
    uneven_ratio : bool
        Whether the estimate is a ratio of cluster totals over clusters of different sizes
        (the ``pooled`` estimand on uneven clusters).
    """
    if is_binary:
        if uneven_ratio and n_clusters >= FEW_CLUSTERS:
            return "korn_graubard_hybrid_or_score"
        return "korn_graubard_hybrid"
    return "bootstrap_t" if n_clusters <= AUTO_BOOTSTRAP_MAX_CLUSTERS else "cr2"


def is_uneven_ratio(estimand: str, counts: NDArray[np.float64]) -> bool:
    """Whether an estimate is a ratio of cluster totals over clusters of different sizes:
    the ``pooled`` estimand on clusters whose row counts differ (see :func:`auto_method`)."""
    return estimand == "pooled" and counts.size > 0 and bool(np.ptp(counts) > 0)


def _check_confidence(confidence: float) -> float:
    if not (0.0 < confidence < 1.0):
        raise ValueError(f"confidence must be strictly between 0 and 1, got {confidence!r}")
    return float(confidence)


def t_interval(
    estimate: float, variance: float, df: float, confidence: float
) -> tuple[float, float]:
    """Symmetric interval ``estimate ± t_{df} * sqrt(variance)`` (normal when df is inf)."""
    q = special.stdtrit(df, 0.5 + _check_confidence(confidence) / 2)
    half = float(q) * math.sqrt(variance)
    return estimate - half, estimate + half


def t_test_p_value(estimate: float, se: float, df: float) -> float:
    """Two-sided p-value of ``estimate / se`` against ``t_df`` (NaN when se is not positive).

    >>> round(t_test_p_value(2.0, 1.0, 10), 6)
    0.073388
    """
    if not se > 0:
        return math.nan
    return float(2.0 * special.stdtr(df, -abs(estimate) / se))


def wilson(
    proportion: float, n: float, confidence: float, *, quantile: float | None = None
) -> tuple[float, float]:
    """Wilson score interval for a proportion observed on ``n`` (possibly fractional) trials.

    ``quantile`` replaces the normal quantile (the design-adjusted version uses the t quantile
    with the design df).

    Examples
    --------
    300 runs with 30 failures, as if independent:

    >>> [round(b, 6) for b in wilson(0.1, 300, 0.95)]
    [0.070948, 0.139166]
    """
    conf = _check_confidence(confidence)
    z = special.ndtri(0.5 + conf / 2) if quantile is None else float(quantile)
    p = float(proportion)
    z2n = z * z / n
    center = (p + z2n / 2) / (1 + z2n)
    # sqrt(p(1-p)/n + z^2/(4n^2)) written so that neither term underflows for huge n
    half = z * math.sqrt(p * (1 - p) + z2n / 4) / math.sqrt(n) / (1 + z2n)
    # At p = 0 (1) the bound is exactly 0 (1); computed, it is off by rounding.
    low = 0.0 if p <= 0.0 else max(0.0, float(center - half))
    high = 1.0 if p >= 1.0 else min(1.0, float(center + half))
    return low, high


def clopper_pearson(successes: float, n: float, confidence: float) -> tuple[float, float]:
    """Clopper–Pearson interval through the beta quantiles; ``successes`` may be fractional."""
    alpha = 1.0 - _check_confidence(confidence)
    x, n = float(successes), float(n)
    low = 0.0 if x <= 0 else float(special.betaincinv(x, n - x + 1, alpha / 2))
    high = 1.0 if x >= n else float(special.betaincinv(x + 1, n - x, 1 - alpha / 2))
    return low, high


def clopper_pearson_fallback(
    proportion: float, n_eff: float, confidence: float, *, reason: str, basis: str
) -> tuple[float, float, str]:
    """The interval of a binary outcome whose design-based variance is zero.

    A zero variance would give a zero-width interval; instead the interval is Clopper–Pearson
    on an effective sample size ``n_eff`` (the number of clusters unless a prior ICC says
    otherwise), and a ``DegenerateDataWarning`` says so. ``reason`` says why the variance is
    zero and ``basis`` where ``n_eff`` comes from; both go into the message, which is returned
    with the bounds as ``(low, high, message)``.
    """

    low, high = clopper_pearson(proportion * n_eff, n_eff, confidence)
    message = (
        f"{reason}; the interval is Clopper-Pearson on an effective n of {n_eff:.4g}, from {basis}"
    )
    warn(message, DegenerateDataWarning)
    return low, high, message


def korn_graubard(
    proportion: float,
    variance: float,
    df: float,
    n_rows: float,
    confidence: float,
    *,
    cap: bool = True,
) -> tuple[float, float, float]:
    """Korn & Graubard (1998): Clopper–Pearson on the df-adjusted design-based effective n.

    ``n_eff = p(1-p)/variance * (t_{N-1} / t_{df})^2``; this is R survey's
    ``svyciprop(method="beta", df=degf(design))``. With ``cap`` (the default) the effective n
    is capped at ``n_rows``, so a design effect below 1 never makes the interval narrower
    than treating the rows as independent would; survey does not cap (``cap=False``).
    Returns ``(low, high, n_eff used)``.
    """
    alpha = 1.0 - _check_confidence(confidence)
    p = float(proportion)
    n_eff = p * (1 - p) / variance
    n_eff *= (special.stdtrit(n_rows - 1, alpha / 2) / special.stdtrit(df, alpha / 2)) ** 2
    if cap:
        n_eff = min(n_eff, float(n_rows))
    low, high = clopper_pearson(p * n_eff, n_eff, confidence)
    return low, high, n_eff


def wilson_effective_n(
    proportion: float,
    variance: float,
    df: float,
    n_rows: float,
    confidence: float,
    *,
    cap: bool = True,
) -> tuple[float, float, float]:
    """Wilson interval on the design-based effective n ``p(1-p)/variance`` (capped at N unless
    ``cap=False``), with the ``t_{df}`` quantile in place of z. R survey (4.1) has no Wilson
    method; this is the Wilson analogue of its ``svyciprop(method="beta")`` (Korn & Graubard
    1998).

    Returns ``(low, high, n_eff used)``.
    """
    conf = _check_confidence(confidence)
    p = float(proportion)
    n_eff = p * (1 - p) / variance
    if cap:
        n_eff = min(n_eff, float(n_rows))
    q = special.stdtrit(df, 0.5 + conf / 2)
    low, high = wilson(p, n_eff, conf, quantile=q)
    return low, high, n_eff


def effective_n_interval(
    method: str,
    proportion: float,
    variance: float,
    df: float,
    n_rows: float,
    confidence: float,
    *,
    cap: bool,
) -> tuple[float, float, str | None]:
    """``korn_graubard`` or ``wilson`` (``method``) with the effective-n cap applied as asked,
    and the note that says when the cap changed the interval (``None`` otherwise)."""
    fn = korn_graubard if method == "korn_graubard" else wilson_effective_n
    low, high, used = fn(proportion, variance, df, n_rows, confidence, cap=cap)
    if not cap or used < n_rows:
        return low, high, None
    raw = fn(proportion, variance, df, n_rows, confidence, cap=False)[2]
    if not raw > n_rows:
        return low, high, None
    note = (
        f"the design effect is below 1, so the design-based effective n ({raw:.4g}) exceeds "
        f"the {n_rows:g} rows; the {method} interval uses {n_rows:g} (R survey's svyciprop "
        "does not cap it: pass cap_n_eff=False for its convention)"
    )
    return low, high, note


def effective_clusters_df(residual_totals, df: float) -> float:
    """Reference df reduced when a few clusters carry the variance estimate.

    A cluster-robust variance is a sum of ``G`` squared cluster residuals ``e_g^2``; when a
    few of them dominate (a rare outcome seen in one or two clusters), the variance estimate
    has far fewer than ``G - 1`` degrees of freedom. With ``r = (sum e^2)^2 / (G sum e^4)``
    (1 when all ``|e_g|`` are equal, ``1/G`` when one cluster carries everything, about 1/3
    for normal residuals) the df is ``(G - 1) * min(1, 3 r)``, at least 1, and never more
    than ``df``. The idea is Carter, Schnepel & Steigerwald's (2017) effective number of
    clusters, measured here on the residuals rather than on the design.
    """
    e2 = np.asarray(residual_totals, dtype=np.float64) ** 2
    g = e2.shape[0]
    fourth = float(e2 @ e2)
    if not fourth > 0:
        return df
    ratio = float(e2.sum()) ** 2 / (g * fourth)
    return float(min(df, max(1.0, (g - 1) * min(1.0, 3.0 * ratio))))
