"""The interval constructions of a clustered mean, as a table of named functions.

``summarize_interval`` (:mod:`clusterstats.core.summary`) resolves ``method``, handles a
design-based variance that is zero, and then calls ``CONSTRUCTIONS[method]``: each entry
builds the bounds, standard error and df of one family of intervals from a
:class:`Setting` (the per-cluster sums and what every construction shares, computed once),
and returns a :class:`Built`. A new interval is one function and one table entry; the
context every result reports (the naive interval, the design effect, the notes on few
clusters and on the estimands) stays in ``summarize_interval``.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, NamedTuple

import numpy as np

from clusterstats.core import intervals as iv
from clusterstats.core._lazy import special
from clusterstats.core.beta_binomial import MAX_ICC, inverted_korn_graubard
from clusterstats.core.bootstrap import bootstrap_interval, generator, studentized_interval
from clusterstats.core.grouping import ClusterSums
from clusterstats.core.score import cluster_score_interval, cluster_score_test
from clusterstats.core.variance import (
    centred_estimate,
    cluster_robust,
    design_effect_unequal,
    iid_variance,
    moulton_icc,
    working_model_df,
)
from clusterstats.errors import DegenerateDataWarning, warn

__all__ = [
    "CONSTRUCTIONS",
    "UNBOUNDED_SCORE",
    "Built",
    "DesignFloor",
    "Setting",
    "design_based_floor",
    "guarded_variance",
    "naive_interval",
    "score_bounds",
    "uneven_sizes_df",
    "zero_variance_interval",
]


@dataclass(frozen=True)
class Setting:
    """What every construction of one interval shares, computed once.

    ``point`` is the estimate, ``cr1`` its CR1 variance (with R survey's factor for empty
    clusters applied), ``iid_var`` the variance of the rows taken as independent, ``icc``
    the ANOVA ICC, ``successes`` the per-cluster passes for the inverted Korn–Graubard
    methods (else None); the rest are ``summarize_interval``'s options.
    """

    sums: ClusterSums
    estimand: str
    confidence: float
    is_binary: bool
    point: float
    cr1: Any
    iid_var: float
    icc: float
    successes: np.ndarray | None
    cap_n_eff: bool = True
    n_resamples: int = 9999
    rng: np.random.Generator | None = None
    bootstrap_indices: np.ndarray | None = None
    outcome_range: tuple[float, float] | None = None
    null_value: float | None = None
    unbounded_fallback: tuple[float, float, str, str] | None = None

    @property
    def n_rows(self) -> float:
        return float(self.sums.counts.sum())


@dataclass
class Built:
    """What a construction returns: the bounds, ``se`` and ``df`` (NaN where the
    construction has none), its notes, and what it sets itself: the design effect and
    effective n (model-based tests; None: ``summarize_interval`` derives them from ``se``),
    the bootstrap draws used, the p-value of ``null_value``, and the method actually used
    when it differs from the one asked (a fallback)."""

    low: float
    high: float
    se: float
    df: float
    notes: list[str] = field(default_factory=list)
    design_effect: float | None = None
    n_eff: float | None = None
    n_resamples: int | None = None
    p_value: float = math.nan
    method: str | None = None


def naive_interval(sums: ClusterSums, point: float, is_binary: bool, confidence: float):
    """The interval that treats the rows as independent: Wilson for a 0/1 outcome, t for a
    score (the comparison every result shows)."""
    n_rows = float(sums.counts.sum())
    if is_binary:
        return iv.wilson(point, n_rows, confidence)
    return iv.t_interval(point, iid_variance(sums), n_rows - 1.0, confidence)


def zero_variance_interval(
    point: float,
    iid_var: float,
    n_rows: float,
    confidence: float,
    *,
    is_binary: bool,
    n_eff: float,
    basis: str,
    unit: str,
    variance: str,
) -> tuple[float, float, float, float, str, str]:
    """The interval when the design-based variance is zero (every ``unit`` has the same
    mean), never a zero-width one: a binary outcome gets Clopper–Pearson on ``n_eff`` (from
    ``basis``), a continuous one the iid t interval; both warn. Returns ``(low, high, se,
    df, method, message)``."""
    if not is_binary:
        low, high = iv.t_interval(point, iid_var, n_rows - 1.0, confidence)
        message = (
            f"the between-{unit} variance is exactly zero (every {unit} has the same mean); "
            "the interval falls back to treating rows as independent and may be too narrow"
        )
        warn(message, DegenerateDataWarning)
        return low, high, math.sqrt(iid_var), n_rows - 1.0, "naive_fallback", message
    if point in (0.0, 1.0):
        what = f"all {int(n_rows)} outcomes are {int(point)}"
    else:
        what = f"every {unit} has the same pass rate"
    low, high, message = iv.clopper_pearson_fallback(
        point, n_eff, confidence, reason=f"{what}, so the {variance} is zero", basis=basis
    )
    return low, high, math.nan, math.nan, "clopper_pearson_fallback", message


UNBOUNDED_SCORE = (
    "the cluster score interval is unbounded: the clusters carry fewer than about t^2 "
    "clusters' worth of rows (a few clusters hold most of them), so no value on that side "
    "can be rejected; more clusters would bound it"
)


def score_bounds(
    sums: ClusterSums,
    estimand: str,
    confidence: float,
    is_binary: bool,
    outcome_range: tuple[float, float] | None,
) -> tuple[float, float]:
    """The cluster score interval, clipped to the range the mean cannot leave."""
    low, high = cluster_score_interval(sums, estimand, confidence)
    limits = (0.0, 1.0) if is_binary else outcome_range
    if limits is not None:
        low, high = max(low, limits[0]), min(high, limits[1])
    return low, high


def uneven_sizes_df(sums: ClusterSums, estimand: str, *, jackknife: bool = False) -> float:
    """Degrees of freedom of the CR2 (``jackknife``: CR3) variance that reflect uneven
    cluster sizes: the Satterthwaite df under a random-effects working model with the
    Moulton ICC (Imbens & Kolesár 2016; :func:`~clusterstats.core.variance.working_model_df`),
    never more than the variance's own (independent-rows) Satterthwaite df, so that
    ``cr2_ik`` and ``cr3_ik`` are never narrower than ``cr2`` and ``cr3``. Equal sizes give
    ``G - 1``; a few large clusters that carry the pooled mean give about as many df as there
    are such clusters."""
    working = working_model_df(sums.counts, moulton_icc(sums), estimand, jackknife=jackknife)
    kind = "CR3" if jackknife else "CR2"
    own = cluster_robust(sums, estimand, kind).df if estimand == "pooled" else sums.n_clusters - 1
    # within rounding of the variance's own df (equal sizes: both G - 1) it is that, to the bit
    return float(own if working >= own * (1.0 - 1e-12) else working)


class DesignFloor(NamedTuple):
    """The design-based part of ``korn_graubard_hybrid`` at the estimate."""

    design_effect: float  # the CR2 variance over p (1 - p) / N
    df: float  # the df of uneven sizes (uneven_sizes_df)
    floor: float  # design_effect * (t_df / t_{G-1})^2: the smallest design effect tested


def design_based_floor(
    sums: ClusterSums, estimand: str, point: float, confidence: float
) -> DesignFloor:
    """The smallest design effect ``korn_graubard_hybrid`` lets its test use at any
    candidate rate: the design effect of the CR2 variance, ``N V_CR2 / (p (1 - p))``,
    widened by ``(t_df / t_{G-1})^2`` with the df of uneven sizes (:func:`uneven_sizes_df`).

    The beta-binomial test of ``korn_graubard_inverted`` is calibrated for ``G`` clusters
    that are alike; the design-based variance describes what the model misses (clusters
    whose heterogeneity grows with their size, as in real benchmarks), and the stretch is
    the loss of degrees of freedom when a few large clusters carry the estimate, in the way
    Korn & Graubard (1998) stretch their effective n. With equal cluster sizes there is no
    stretch. The floor is 0 when the estimate is 0 or 1 (the model alone speaks there).
    """
    g = sums.n_clusters
    df = uneven_sizes_df(sums, estimand)
    spread = point * (1.0 - point)
    if not spread > 0:
        return DesignFloor(0.0, df, 0.0)
    n_rows = float(sums.counts.sum())
    design_effect = n_rows * cluster_robust(sums, estimand, "CR2").variance / spread
    alpha = 1.0 - confidence
    # at least 1: the df never exceed G - 1 (equal sizes: CR2's df is G - 1 up to rounding)
    stretch = max(special.stdtrit(df, alpha / 2) / special.stdtrit(g - 1.0, alpha / 2), 1.0)
    return DesignFloor(design_effect, df, float(design_effect * stretch**2))


def guarded_variance(sums: ClusterSums, estimand: str, icc: float) -> tuple[float, float]:
    """Variance and df of ``korn_graubard_guarded``.

    The variance is the larger of the CR2 variance and the variance a binary mean would have
    under exchangeable correlation with the estimated (ANOVA, truncated at 0) ICC,
    ``p (1 - p) deff / N`` with the unequal-size design effect. The design-based variance
    alone is blind to what the sample did not show: when the few clusters with a rare outcome
    happen to be small, it is tiny although a large cluster could as easily have carried the
    outcome. The df is CR2's Satterthwaite df, reduced by ``effective_clusters_df`` when a
    few clusters carry the residuals.
    """
    cr2 = cluster_robust(sums, estimand, "CR2")
    p = cr2.estimate
    rho = icc if icc > 0 else 0.0  # NaN (undefined) and negative ICCs count as 0
    n_rows = float(sums.counts.sum())
    model = p * (1.0 - p) * design_effect_unequal(sums.counts, rho, estimand) / n_rows
    centred = centred_estimate(sums, estimand)
    if estimand == "pooled":
        residuals = sums.totals - centred * sums.counts
    else:
        residuals = sums.centred_means - centred
    return max(cr2.variance, model), iv.effective_clusters_df(residuals, cr2.df)


def _naive(s: Setting, method: str) -> Built:
    low, high = naive_interval(s.sums, s.point, s.is_binary, s.confidence)
    return Built(low, high, math.sqrt(s.iid_var), s.n_rows - 1.0)


def _sandwich(s: Setting, method: str) -> Built:
    """t on a cluster-robust variance: CR1, CR2 (Bell–McCaffrey), CR3 (jackknife), and
    ``_ik`` with the df of uneven cluster sizes."""
    kind = method[:3].upper()
    pv = s.cr1 if method == "cr1" else cluster_robust(s.sums, s.estimand, kind)
    if method.endswith("_ik"):
        pv = pv._replace(df=uneven_sizes_df(s.sums, s.estimand, jackknife=method == "cr3_ik"))
    low, high = iv.t_interval(s.point, pv.variance, pv.df, s.confidence)
    built = Built(low, high, math.sqrt(pv.variance), pv.df)
    if s.is_binary and (low < 0.0 or high > 1.0):
        built.low, built.high = max(low, 0.0), min(high, 1.0)
        built.notes.append("the symmetric interval crossed [0, 1] and was clipped")
    return built


def _effective_n(s: Setting, method: str) -> Built:
    """Wilson or Korn–Graubard on the design-based effective n of the CR1 variance."""
    low, high, cap_note = iv.effective_n_interval(
        method, s.point, s.cr1.variance, s.cr1.df, s.n_rows, s.confidence, cap=s.cap_n_eff
    )
    return Built(low, high, math.sqrt(s.cr1.variance), s.cr1.df, [cap_note] if cap_note else [])


def _guarded(s: Setting, method: str) -> Built:
    """Korn–Graubard on the larger of the CR2 and the exchangeable-model variance."""
    variance, df = guarded_variance(s.sums, s.estimand, s.icc)
    low, high, cap_note = iv.effective_n_interval(
        "korn_graubard", s.point, variance, df, s.n_rows, s.confidence, cap=s.cap_n_eff
    )
    return Built(low, high, math.sqrt(variance), df, [cap_note] if cap_note else [])


def _inverted(s: Setting, method: str) -> Built:
    """The Korn–Graubard test inverted with the beta-binomial ICC re-estimated under each
    candidate rate; ``korn_graubard_hybrid`` floors its design effect at the design-based
    (CR2) one, stretched for the df of uneven sizes."""
    sums, estimand, point, confidence = s.sums, s.estimand, s.point, s.confidence
    successes, n_rows = s.successes, s.n_rows
    notes: list[str] = []
    design = None
    if method == "korn_graubard_hybrid":
        design = design_based_floor(sums, estimand, point, confidence)
    found = inverted_korn_graubard(
        successes,
        sums.counts,
        point,
        estimand=estimand,
        confidence=confidence,
        min_design_effect=0.0 if design is None else design.floor,
    )
    low, high, df = found.low, found.high, math.nan
    if point in (0.0, 1.0) and found.icc == MAX_ICC:
        message = (
            f"all {int(n_rows)} outcomes are {int(point)}: the data cannot show how "
            f"strongly they cluster, so the interval assumes the largest ICC searched "
            f"({found.icc:g}), about one independent observation per cluster; pass "
            "icc= (e.g. from a pilot) to use a known ICC instead"
        )
        warn(message, DegenerateDataWarning)
        notes.append(message)
    # The design effect the test used at the estimate, on its binomial scale
    # (p (1 - p) / N): the model's, or (hybrid) the design-based one where it is larger.
    tested = design_effect_unequal(sums.counts, found.icc, estimand)
    model = tested
    if design is not None and design.floor > tested:
        df = design.df
        tested = max(tested, design.design_effect)
    n0 = n_rows / tested
    se = math.sqrt(point * (1.0 - point) / n0)
    # Reported like every other method's, over s^2 / N = p (1 - p) / (N - 1).
    design_effect = tested * (n_rows - 1.0) / n_rows
    n_eff = n_rows / design_effect
    if design is not None and design.design_effect > 1.25 * model:
        to_reported = (n_rows - 1.0) / n_rows
        notes.append(
            f"the design-based (CR2) variance is {design.design_effect / model:.3g} times "
            f"the beta-binomial model's at the estimate (design effect "
            f"{design.design_effect * to_reported:.4g} against {model * to_reported:.4g}): "
            f"the interval uses it, referred to t with {df:.3g} df for the uneven cluster "
            "sizes"
        )
    # Say so when the design effect under a bound differs by more than a quarter from
    # the one at the estimate: that is what makes the interval lopsided or wide.
    at_bounds = [v for v in (found.icc_low, found.icc_high) if not math.isnan(v)]
    deffs = [design_effect_unequal(sums.counts, v, estimand) for v in at_bounds]
    if df != df and any(not 0.8 <= d / tested <= 1.25 for d in deffs):
        notes.append(
            "the interval re-estimates the ICC under each candidate rate (beta-binomial "
            f"maximum likelihood): {found.icc:.3f} at the estimate, "
            + ", ".join(
                f"{v:.3f} at the {side} bound"
                for side, v in (("lower", found.icc_low), ("upper", found.icc_high))
                if not math.isnan(v)
            )
        )
    return Built(low, high, se, df, notes, design_effect=design_effect, n_eff=n_eff)


def _score(s: Setting, method: str) -> Built:
    """The cluster score interval: the cluster-robust test with its variance evaluated
    under each candidate value, inverted."""
    low, high = score_bounds(s.sums, s.estimand, s.confidence, s.is_binary, s.outcome_range)
    built = Built(low, high, math.sqrt(s.cr1.variance), s.sums.n_clusters - 1.0)
    if s.null_value is not None:
        built.p_value = cluster_score_test(s.sums, s.estimand, s.null_value)
    if math.isinf(low) or math.isinf(high):
        built.notes.append(UNBOUNDED_SCORE)
    return built


def _bootstrap(s: Setting, method: str) -> Built:
    """The percentile or BCa cluster bootstrap."""
    boot = bootstrap_interval(
        s.sums,
        s.estimand,
        kind=method.removeprefix("bootstrap_"),
        confidence=s.confidence,
        n_resamples=s.n_resamples,
        rng=generator(s.rng),
        indices=s.bootstrap_indices,
    )
    return Built(
        boot.low,
        boot.high,
        boot.standard_error,
        math.nan,
        [boot.note] if boot.note else [],
        n_resamples=s.n_resamples,
    )


def _bootstrap_t(s: Setting, method: str) -> Built:
    """The studentized cluster bootstrap, never narrower than ``cr3_ik``."""
    sums, estimand, point, confidence = s.sums, s.estimand, s.point, s.confidence
    is_binary, outcome_range = s.is_binary, s.outcome_range
    unbounded_fallback = s.unbounded_fallback
    notes: list[str] = []
    # The studentised bootstrap widens the jackknife (CR3) interval, with the df of
    # uneven sizes, on the side where the estimate's distribution is skewed; it never
    # narrows it, so its coverage is at least that interval's (and CR2's).
    pv = cluster_robust(sums, estimand, "CR3")
    cr2_low, cr2_high = iv.t_interval(
        point, pv.variance, uneven_sizes_df(sums, estimand, jackknife=True), confidence
    )
    boot_t = studentized_interval(
        sums,
        estimand,
        confidence=confidence,
        n_resamples=s.n_resamples,
        rng=generator(s.rng),
        indices=s.bootstrap_indices,
        null=s.null_value,
    )
    p_value = boot_t.p_value
    low, high = min(boot_t.low, cr2_low), max(boot_t.high, cr2_high)
    se, df = math.sqrt(pv.variance), math.nan
    limits = (0.0, 1.0) if is_binary else outcome_range
    unbounded = [side for side, v in (("lower", low), ("upper", high)) if math.isinf(v)]
    if unbounded and unbounded_fallback is not None:
        fallback_low, fallback_high, low_source, high_source = unbounded_fallback
        sources = []
        if math.isinf(low):
            low = fallback_low
            sources.append(f"the lower bound, {fallback_low:.4g}, is {low_source}")
        if math.isinf(high):
            high = fallback_high
            sources.append(f"the upper bound, {fallback_high:.4g}, is {high_source}")
        notes.append(
            f"{boot_t.degenerate_share:.1%} of the bootstrap replicates have no spread "
            "(every drawn cluster alike), so the studentized bootstrap cannot bound the "
            f"{' and '.join(unbounded)} side: {'; '.join(sources)}"
        )
    elif unbounded and limits is None:
        notes.append(
            f"the studentized bootstrap cannot bound the {' and '.join(unbounded)} side: "
            f"{boot_t.degenerate_share:.1%} of the replicates have no spread (every drawn "
            "cluster alike), so the bound is infinite; more clusters would pin it down"
        )
    if limits is not None and (low < limits[0] or high > limits[1]):
        low, high = max(low, limits[0]), min(high, limits[1])
        notes.append(f"the interval reached beyond [{limits[0]:g}, {limits[1]:g}] and was clipped")
    return Built(low, high, se, df, notes, n_resamples=s.n_resamples, p_value=p_value)


#: Each interval method's construction (``auto``, ``bootstrap`` and the unions with the
#: score interval are resolved before: see ``summarize_interval``).
CONSTRUCTIONS: dict[str, Callable[[Setting, str], Built]] = {
    "naive": _naive,
    "cr1": _sandwich,
    "cr2": _sandwich,
    "cr2_ik": _sandwich,
    "cr3": _sandwich,
    "cr3_ik": _sandwich,
    "wilson": _effective_n,
    "korn_graubard": _effective_n,
    "korn_graubard_guarded": _guarded,
    "korn_graubard_inverted": _inverted,
    "korn_graubard_hybrid": _inverted,
    "score": _score,
    "bootstrap_bca": _bootstrap,
    "bootstrap_percentile": _bootstrap,
    "bootstrap_t": _bootstrap_t,
}
