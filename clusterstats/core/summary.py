"""Everything ``cluster_ci``, ``icc`` and ``design_effect`` report, from per-cluster sums.

This is the numeric heart of the public API: the adapters (functional API, pandas and xarray
accessors, CLI) only turn their input into a :class:`ClusterSums` and wrap these numbers in a
result dataclass.
"""

from __future__ import annotations

import math
from typing import Any, NamedTuple

import numpy as np

from clusterstats.core import intervals as iv
from clusterstats.core.beta_binomial import (
    restricted_icc,
    tail_counts,
)
from clusterstats.core.constructions import (
    CONSTRUCTIONS,
    UNBOUNDED_SCORE,
    Built,
    DesignFloor,
    Setting,
    design_based_floor,
    guarded_variance,
    naive_interval,
    score_bounds,
    uneven_sizes_df,
    zero_variance_interval,
)
from clusterstats.core.grouping import ClusterSums
from clusterstats.core.score import cluster_score_test
from clusterstats.core.variance import (
    ICCEstimate,
    cluster_robust,
    design_effect_kish,
    design_effect_unequal,
    estimate,
    icc_anova,
    icc_interval,
    iid_variance,
    row_variance,
)
from clusterstats.errors import (
    DegenerateDataError,
    DegenerateDataWarning,
    FewClustersWarning,
    TooFewClustersError,
    warn,
)

__all__ = [
    "DesignEffectSummary",
    "DesignFloor",
    "ICCSummary",
    "IntervalSummary",
    "default_design_effect",
    "design_based_floor",
    "guarded_variance",
    "naive_interval",
    "summarize_design_effect",
    "summarize_icc",
    "summarize_interval",
    "uneven_sizes_df",
    "zero_variance_interval",
]


class IntervalSummary(NamedTuple):
    estimate: float
    se: float
    low: float
    high: float
    df: float
    method: str
    icc: float
    design_effect: float
    n_eff: float
    naive_low: float
    naive_high: float
    widening: float
    n_resamples: int | None
    notes: tuple[str, ...]
    # Two-sided p-value of null_value, for the methods that test it themselves (bootstrap_t).
    p_value: float = math.nan


class ICCSummary(NamedTuple):
    icc: float
    icc_truncated: float
    low: float
    high: float
    ci_method: str
    msb: float
    msw: float
    n0: float
    var_between: float
    var_within: float
    notes: tuple[str, ...]


class DesignEffectSummary(NamedTuple):
    design_effect: float
    method: str
    linearized: float
    kish: float
    unequal_sizes: float
    icc: float
    icc_truncated: float
    n_eff: float
    widening: float
    notes: tuple[str, ...]


def _require_clusters(sums: ClusterSums) -> None:
    if sums.n_clusters < 2:
        raise TooFewClustersError(
            f"found {sums.n_clusters} cluster; at least 2 are needed to estimate the "
            "between-cluster variance (with one cluster the rows' dependence cannot be measured)"
        )


def _is_zero_variance(variance: float, sums: ClusterSums) -> bool:
    """Whether a variance of the mean is zero up to rounding, relative to the rows' spread.

    Sums are centred on an observed value, so constant data give exact zeros; the tolerance
    only absorbs rounding residue (e.g. cluster means of 1/3), far below any real variance.
    """
    n_rows = float(sums.counts.sum())
    scale = float(sums.squares.sum()) / n_rows**2
    return not variance > 1e-24 * scale


def few_clusters_notes(g: int, method: str, *, unit: str = "clusters") -> list[str]:
    """A :class:`FewClustersWarning`, and its message as the one note, when fewer than
    :data:`~clusterstats.core.intervals.FEW_CLUSTERS` clusters (``unit`` names them) carry
    an interval other than the naive one; no note otherwise."""
    if g >= iv.FEW_CLUSTERS or method == "naive":
        return []
    message = (
        f"only {g} {unit}: the {method} interval is itself uncertain with fewer than "
        f"{iv.FEW_CLUSTERS} clusters; more clusters, not more rows per cluster, fix this"
    )
    warn(message, FewClustersWarning)
    return [message]


def design_variance_summary(
    point: float,
    variance: float,
    df: float,
    *,
    reference_variance: float,
    naive_bounds: tuple[float, float],
    n_rows: float,
    method: str,
    confidence: float,
    is_binary: bool,
    cap_n_eff: bool,
    notes: list[str],
    zero: dict[str, Any],
    scale: float,
) -> IntervalSummary:
    """The ``IntervalSummary`` of a mean from a design-based variance and its df, for the
    designs whose variance is one number (crossed groupings, weights): ``naive``, ``cr1``
    (t, clipped to [0, 1] for a binary outcome), ``korn_graubard`` or ``wilson`` (the
    effective n). ``reference_variance`` is that of the rows taken as independent (the
    naive interval's, and the design effect's denominator); a variance that is zero up to
    rounding against ``scale`` gets :func:`zero_variance_interval` with the ``zero``
    arguments (``n_eff``, ``basis``, ``unit``, ``variance``). ``notes`` is extended."""
    naive_low, naive_high = naive_bounds
    if not variance > 1e-24 * scale:
        low, high, se, df, method, message = zero_variance_interval(
            point, reference_variance, n_rows, confidence, is_binary=is_binary, **zero
        )
        notes.append(message)
        design_effect = n_eff = math.nan
    else:
        se = math.sqrt(variance)
        if method == "naive":
            low, high = naive_low, naive_high
            se, df = math.sqrt(reference_variance), n_rows - 1.0
        elif method == "cr1":
            low, high = iv.t_interval(point, variance, df, confidence)
            if is_binary and (low < 0.0 or high > 1.0):
                low, high = max(low, 0.0), min(high, 1.0)
                notes.append("the symmetric interval crossed [0, 1] and was clipped")
        else:
            low, high, cap_note = iv.effective_n_interval(
                method, point, variance, df, n_rows, confidence, cap=cap_n_eff
            )
            if cap_note:
                notes.append(cap_note)
        design_effect = variance / reference_variance if reference_variance > 0 else math.nan
        n_eff = n_rows / design_effect if design_effect > 0 else math.nan
    widths = (naive_high - naive_low, high - low)
    return IntervalSummary(
        estimate=point,
        se=se,
        low=low,
        high=high,
        df=df,
        method=method,
        icc=math.nan,
        design_effect=design_effect,
        n_eff=n_eff,
        naive_low=naive_low,
        naive_high=naive_high,
        widening=widths[1] / widths[0] if widths[0] > 0 else math.nan,
        n_resamples=None,
        notes=tuple(notes),
    )


# Values whose spread is below this many units in the last place of their magnitude are
# equal up to rounding (0.1 * 3 and 0.3 differ by one unit): no spread can be estimated.
_ROUNDING_ULPS = 16.0


def constant_up_to_rounding(sums: ClusterSums, point: float) -> bool:
    """Whether every row equals ``point`` up to the rounding of numbers of its magnitude.

    Exact constants give a zero row variance; values that differ only in their last bits
    (``np.tile([0.1 * 3, 0.3], 60)``) give a tiny positive one, which would otherwise become
    a zero-width interval. The comparison is with the magnitude of the values, not with
    their spread, so that it cannot flag real variation, however small, of values near zero.
    """
    spread = math.sqrt(max(row_variance(sums), 0.0))
    magnitude = max(abs(point), abs(sums.shift))
    return spread <= _ROUNDING_ULPS * np.finfo(float).eps * magnitude


def summarize_interval(
    sums: ClusterSums,
    *,
    estimand: str,
    method: str,
    confidence: float,
    is_binary: bool,
    icc_prior: float | None = None,
    n_resamples: int = 9999,
    rng: np.random.Generator | None = None,
    bootstrap_indices: np.ndarray | None = None,
    cap_n_eff: bool = True,
    n_empty_clusters: int = 0,
    outcome_range: tuple[float, float] | None = None,
    null_value: float | None = None,
    unbounded_fallback: tuple[float, float, str, str] | None = None,
) -> IntervalSummary:
    """Confidence interval of the mean of clustered data, with the context around it.

    Parameters
    ----------
    sums : ClusterSums
    estimand : {"pooled", "cluster_mean"}
    method : str
        One of :data:`clusterstats.core.intervals.METHODS`.
    confidence : float
    is_binary : bool
        Whether every outcome is 0 or 1.
    icc_prior : float, optional
        An ICC from a pilot, used only when the data are degenerate (zero variance).
    n_resamples, rng, bootstrap_indices
        Bootstrap settings (``bootstrap_indices`` fixes the draws, for tests).
    cap_n_eff : bool
        Cap the effective n of the Korn–Graubard and Wilson intervals at N (see
        :func:`clusterstats.core.intervals.korn_graubard`).
    n_empty_clusters : int
        Sampled clusters with no observed row, kept in the CR1 factor ``G/(G-1)`` (R survey's
        ``svymean(na.rm=TRUE)``); only the CR1-based methods use it.
    outcome_range : (float, float), optional
        The range the mean cannot leave (e.g. ``(-1, 1)`` for a difference of 0/1 outcomes);
        ``bootstrap_t`` clips to it (binary outcomes: ``(0, 1)`` without being told).
    null_value : float, optional
        A value to test (e.g. 0 for a paired difference): ``bootstrap_t`` reports its
        bootstrap-t p-value in ``p_value``.
    unbounded_fallback : (float, float, str, str), optional
        Bounds known by another argument, for a side that ``bootstrap_t`` cannot bound
        (replicates without spread make its t quantile infinite there): the lower bound, the
        upper bound, and a phrase for each saying where it comes from.
    """
    _require_clusters(sums)
    g = sums.n_clusters
    n_rows = float(sums.counts.sum())
    if method == "auto":
        method = iv.auto_method(
            is_binary=is_binary,
            n_clusters=g,
            uneven_ratio=iv.is_uneven_ratio(estimand, sums.counts),
        )
    if method == "bootstrap":
        method = "bootstrap_bca"
    if method in iv.BINARY_ONLY_METHODS and not is_binary:
        raise ValueError(f"method {method!r} needs a binary (0/1) outcome")
    if method in iv.SCORE_UNIONS:
        base = summarize_interval(
            sums,
            estimand=estimand,
            method=iv.SCORE_UNIONS[method],
            confidence=confidence,
            is_binary=is_binary,
            icc_prior=icc_prior,
            n_resamples=n_resamples,
            rng=rng,
            bootstrap_indices=bootstrap_indices,
            cap_n_eff=cap_n_eff,
            n_empty_clusters=n_empty_clusters,
            outcome_range=outcome_range,
            null_value=null_value,
            unbounded_fallback=unbounded_fallback,
        )
        return _united_with_score(
            base, sums, estimand, method, confidence, is_binary, outcome_range, null_value
        )

    notes: list[str] = []
    point = estimate(sums, estimand)
    cr1 = cluster_robust(sums, estimand, "CR1")
    if n_empty_clusters:
        # R survey's svymean(na.rm=TRUE): clusters with no observed row stay in the design,
        # so the linearisation factor is G'/(G'-1) over all G' sampled clusters (its
        # degrees of freedom still count the clusters with data).
        kept = g + n_empty_clusters
        cr1 = cr1._replace(variance=cr1.variance * (kept / (kept - 1.0)) / (g / (g - 1.0)))
    iid_var = iid_variance(sums)
    icc_est = icc_anova(sums)
    naive_low, naive_high = naive_interval(sums, point, is_binary, confidence)

    if not is_binary and constant_up_to_rounding(sums, point):
        exactly = "" if iid_var == 0.0 else " up to rounding"
        raise DegenerateDataError(
            f"all {int(n_rows)} outcomes equal {point:g}{exactly}: a continuous outcome with "
            "no variation has no estimable uncertainty"
        )
    if method not in CONSTRUCTIONS:
        raise ValueError(f"unknown method {method!r}; expected one of {iv.METHODS}")
    # The inverted interval needs no variance (unless a pilot ICC is supplied for degenerate
    # data: then the fallback uses it). Its likelihood needs whole successes: per-case pass
    # probabilities that are all equal (flagged binary by the rerun statistics so that they
    # get the fallback) do not qualify.
    successes, whole = None, False
    if method in ("korn_graubard_inverted", "korn_graubard_hybrid"):
        successes = sums.totals + sums.shift * sums.counts
        whole = bool(np.all(np.abs(successes - np.rint(successes)) <= 1e-9 * sums.counts))
    inverted_copes = whole and icc_prior is None
    if _is_zero_variance(cr1.variance, sums) and method != "naive" and not inverted_copes:
        if icc_prior is None:
            n_eff, basis = float(g), f"the number of clusters ({g})"
        else:
            n_eff = n_rows / design_effect_kish(n_rows / g, icc_prior)
            basis = f"n / (1 + (m - 1) * icc) with the supplied icc={icc_prior:g}"
        low, high, se, df, fallback, message = zero_variance_interval(
            point,
            iid_var,
            n_rows,
            confidence,
            is_binary=is_binary,
            n_eff=n_eff,
            basis=basis,
            unit="cluster",
            variance="cluster-robust variance",
        )
        # the fallback's effective n is the one its interval used; no design effect
        built = Built(low, high, se, df, [message], math.nan, n_eff, method=fallback)
    else:
        setting = Setting(
            sums=sums,
            estimand=estimand,
            confidence=confidence,
            is_binary=is_binary,
            point=point,
            cr1=cr1,
            iid_var=iid_var,
            icc=icc_est.icc,
            successes=successes,
            cap_n_eff=cap_n_eff,
            n_resamples=n_resamples,
            rng=rng,
            bootstrap_indices=bootstrap_indices,
            outcome_range=outcome_range,
            null_value=null_value,
            unbounded_fallback=unbounded_fallback,
        )
        built = CONSTRUCTIONS[method](setting, method)
    method = built.method or method
    low, high, se, df = built.low, built.high, built.se, built.df
    notes.extend(built.notes)

    notes.extend(few_clusters_notes(g, method))
    # The design effect is that of the variance the interval uses (se^2 over s^2 / N),
    # unless the construction set it itself (the model-based tests, the fallbacks).
    design_effect = math.nan if built.design_effect is None else built.design_effect
    n_eff = math.nan if built.n_eff is None else built.n_eff
    if built.design_effect is None and iid_var > 0 and math.isfinite(se) and se > 0:
        design_effect = se * se / iid_var
        n_eff = n_rows / design_effect

    if estimand == "cluster_mean" and method == "cr2" and not sums.is_balanced:
        notes.append(
            "cluster_mean with CR2 treats each cluster's mean as one unit (df G - 1): in R it "
            "is clubSandwich's CR2 on the cluster means, or vcovCR(..., inverse_var = TRUE) on "
            "the rows, not a row-level lm(y ~ 1, weights = 1/n) with its default working model"
        )
    if not sums.is_balanced and not math.isnan(se) and se > 0:
        other = "cluster_mean" if estimand == "pooled" else "pooled"
        other_point = estimate(sums, other)
        if abs(other_point - point) > se:
            # the two side by side in one format: four decimals, as the estimates print
            shown = ".4f" if max(abs(point), abs(other_point)) < 1000 else ",.1f"
            notes.append(
                f"the {estimand} estimate ({point:{shown}}) and the {other} estimate "
                f"({other_point:{shown}}) differ by more than one standard error and cluster sizes "
                "vary: cluster size is related to the outcome, so pick the estimand that answers "
                "your question"
            )

    naive_width = naive_high - naive_low
    widening = (high - low) / naive_width if naive_width > 0 else math.nan
    return IntervalSummary(
        estimate=point,
        se=se,
        low=float(low),
        high=float(high),
        df=float(df),
        method=method,
        icc=icc_est.icc,
        design_effect=design_effect,
        n_eff=n_eff,
        naive_low=float(naive_low),
        naive_high=float(naive_high),
        widening=widening,
        n_resamples=built.n_resamples,
        notes=tuple(notes),
        p_value=built.p_value,
    )


def _united_with_score(
    base: IntervalSummary,
    sums: ClusterSums,
    estimand: str,
    method: str,
    confidence: float,
    is_binary: bool,
    outcome_range: tuple[float, float] | None,
    null_value: float | None,
) -> IntervalSummary:
    """``base`` widened to its union with the cluster score interval.

    The score bounds are taken as the inversion gives them, also where every outcome is
    alike (``method="score"`` alone falls back there instead); a union never narrows
    ``base``. Where ``base`` itself fell back, that fallback stands. The df stay ``base``'s.
    The score interval has no single variance (it re-evaluates the sandwich under every
    candidate), so where it widens ``base`` the standard error is ``base``'s scaled by the
    ratio of the widths, and the design effect and effective n by its square: they describe
    the interval reported."""
    if base.method != iv.SCORE_UNIONS[method]:
        return base
    score_low, score_high = score_bounds(sums, estimand, confidence, is_binary, outcome_range)
    low, high = min(base.low, score_low), max(base.high, score_high)
    notes = list(base.notes)
    widened = [
        side for side, wider in (("lower", low < base.low), ("upper", high > base.high)) if wider
    ]
    if widened:
        notes.append(
            f"the cluster score interval (the cluster-robust test with its variance under each "
            f"candidate value) reaches beyond the {base.method} interval on the "
            f"{' and '.join(widened)} side; the interval is their union, "
            f"[{low:.4g}, {high:.4g}] instead of [{base.low:.4g}, {base.high:.4g}]"
        )
    if math.isinf(low) or math.isinf(high):
        notes.append(UNBOUNDED_SCORE)
    p_value = base.p_value
    if null_value is not None:
        # The union excludes the null only when both tests reject it: the larger p-value.
        score_p = cluster_score_test(sums, estimand, null_value)
        p_value = score_p if math.isnan(p_value) else max(p_value, score_p)
    naive_width = base.naive_high - base.naive_low
    se, design_effect, n_eff = base.se, base.design_effect, base.n_eff
    base_width = base.high - base.low
    if widened and math.isfinite(high - low) and base_width > 0 and base.se > 0:
        inflation = (float(high - low) / base_width) ** 2
        se = base.se * math.sqrt(inflation)
        design_effect, n_eff = base.design_effect * inflation, base.n_eff / inflation
        notes.append(
            f"its se ({se:.4g}) and design effect ({design_effect:.4g}) are the "
            f"{base.method} interval's scaled by the union's width: an interval "
            f"{math.sqrt(inflation):.3g} times as wide carries {inflation:.3g} times the variance"
        )
    return base._replace(
        low=float(low),
        high=float(high),
        se=se,
        design_effect=design_effect,
        n_eff=n_eff,
        method=method,
        widening=(high - low) / naive_width if naive_width > 0 else math.nan,
        notes=tuple(notes),
        p_value=p_value,
    )


def _icc_undefined_reason(sums: ClusterSums) -> str | None:
    if sums.n_clusters < 2:
        return "fewer than two clusters"
    if float(sums.counts.sum()) <= sums.n_clusters:
        return "every cluster has a single row, so there is no within-cluster variation to compare"
    if _is_zero_variance(iid_variance(sums), sums):
        return "all outcomes are equal"
    return None


def _icc_degenerate_reason(est: ICCEstimate) -> str | None:
    """Why the ANOVA ICC sits at a bound of its range with no sampling interval, or None.

    No within-cluster variation (MSW = 0 up to rounding) puts it at 1; clusters with equal
    means (MSB = 0) at its minimum ``-1 / (n0 - 1)``. Either way the F ratio is 0 or
    infinite and the F-based interval is a single point.
    """
    total = est.msb + est.msw
    tolerance = 64.0 * np.finfo(float).eps * total
    if est.msw <= tolerance:
        return (
            "there is no within-cluster variation (the rows of each cluster are equal), so it is 1"
        )
    if est.msb <= tolerance:
        return (
            f"every cluster has the same mean, so it is at its minimum {est.icc:.4g} "
            "(-1 / (n0 - 1))"
        )
    return None


def summarize_icc(sums: ClusterSums, *, confidence: float) -> ICCSummary:
    """One-way ANOVA ICC with its interval; NaN with a DegenerateDataWarning if undefined."""
    _require_clusters(sums)
    est = icc_anova(sums)
    notes: list[str] = []
    reason = _icc_undefined_reason(sums)
    if reason is not None:
        message = f"the ICC is undefined: {reason}"
        warn(message, DegenerateDataWarning)
        notes.append(message)
        nan = math.nan
        return ICCSummary(
            nan, nan, nan, nan, "undefined", est.msb, est.msw, est.n0, nan, nan, tuple(notes)
        )
    degenerate = _icc_degenerate_reason(est)
    if degenerate is not None:
        # The F-ratio interval collapses to a point here ([1, 1] or [-1/(n0-1), ...]):
        # an interval of zero width would claim a certainty the data do not give.
        message = f"the ICC has no interval: {degenerate}"
        warn(message, DegenerateDataWarning)
        notes.append(message)
        low, high, ci_method = math.nan, math.nan, "undefined"
    else:
        low, high, ci_method = icc_interval(sums, est, confidence)
    if est.icc < 0:
        notes.append(
            f"the estimate is negative ({est.icc:.3g}): indistinguishable from no clustering at "
            "this sample size; 0 is used for design effects"
        )
    return ICCSummary(
        icc=est.icc,
        icc_truncated=max(est.icc, 0.0),
        low=low,
        high=high,
        ci_method=ci_method,
        msb=est.msb,
        msw=est.msw,
        n0=est.n0,
        var_between=est.var_between,
        var_within=est.var_within,
        notes=tuple(notes),
    )


def default_design_effect(sums: ClusterSums, estimand: str, is_binary: bool) -> tuple[float, str]:
    """The design effect of the interval ``method="auto"`` gives, and that method: the
    variance the interval uses over ``s^2 / N``.

    ``korn_graubard_hybrid`` uses the larger of the beta-binomial model's (at the restricted
    ICC of the estimate) and the CR2 one; ``bootstrap_t`` the jackknife (CR3) variance of its
    floor, ``cr2`` (above 2,000 clusters) CR2. A union with the score interval reports the
    design effect of its 95% interval, as its result does: its first part's, scaled by the
    square of the ratio of the widths where the score interval widens it. NaN where the outcome
    does not vary (all 0 or all 1) or the cluster-robust variance is zero.
    """
    method = iv.auto_method(
        is_binary=is_binary,
        n_clusters=sums.n_clusters,
        uneven_ratio=iv.is_uneven_ratio(estimand, sums.counts),
    )
    base = iv.SCORE_UNIONS.get(method, method)
    n_rows = float(sums.counts.sum())
    variance = cluster_robust(sums, estimand, "CR3" if base == "bootstrap_t" else "CR2").variance
    if _is_zero_variance(variance, sums):
        return math.nan, method
    if method in iv.SCORE_UNIONS:
        # the union's design effect follows from its width (see _united_with_score): take
        # it from the interval itself
        united = summarize_interval(
            sums, estimand=estimand, method=method, confidence=0.95, is_binary=is_binary
        )
        found = united.design_effect
        return (found if found > 0 else math.nan), method
    if base != "korn_graubard_hybrid":
        iid_var = iid_variance(sums)
        return (variance / iid_var if iid_var > 0 else math.nan), method
    point = estimate(sums, estimand)
    if not 0.0 < point < 1.0:
        return math.nan, method
    successes = sums.totals + sums.shift * sums.counts
    rho = float(restricted_icc(tail_counts(successes, sums.counts), point)[0])
    model = design_effect_unequal(sums.counts, rho, estimand)
    tested = max(model, n_rows * variance / (point * (1.0 - point)))
    return tested * (n_rows - 1.0) / n_rows, method  # over s^2 / N, as every method's


def summarize_design_effect(
    sums: ClusterSums, *, estimand: str, is_binary: bool
) -> DesignEffectSummary:
    """The design effect of the default interval (:func:`default_design_effect`), with the
    linearised one (R survey's ``deff="replace"``) and the model-based ones beside it."""
    _require_clusters(sums)
    notes: list[str] = []
    cr1 = cluster_robust(sums, estimand, "CR1")
    iid_var = iid_variance(sums)
    n_rows = float(sums.counts.sum())
    icc_raw = icc_anova(sums).icc
    reason = _icc_undefined_reason(sums)
    if reason is not None or _is_zero_variance(cr1.variance, sums):
        message = (
            "the design effect is undefined: "
            f"{reason or 'the cluster-robust variance is zero (every cluster has the same mean)'}"
        )
        if reason is not None and float(sums.counts.sum()) <= sums.n_clusters and iid_var > 0:
            message = None  # singletons: the linearised value is still defined (and is ~1)
        if message:
            warn(message, DegenerateDataWarning)
            notes.append(message)
    linearized = cr1.variance / iid_var if iid_var > 0 else math.nan
    if not linearized > 0:
        linearized = math.nan
    design_effect, method = default_design_effect(sums, estimand, is_binary)
    if not design_effect > 0:
        design_effect = math.nan
    icc_truncated = max(icc_raw, 0.0) if not math.isnan(icc_raw) else math.nan
    mean_size = n_rows / sums.n_clusters
    if estimand == "pooled":
        kish = design_effect_kish(mean_size, icc_truncated)
    else:
        kish = math.nan
        notes.append("Kish's formula describes the pooled mean; see unequal_sizes instead")
    unequal = design_effect_unequal(sums.counts, icc_truncated, estimand)
    return DesignEffectSummary(
        design_effect=design_effect,
        method=method,
        linearized=linearized,
        kish=kish,
        unequal_sizes=unequal,
        icc=icc_raw,
        icc_truncated=icc_truncated,
        n_eff=n_rows / design_effect if design_effect > 0 else math.nan,
        widening=math.sqrt(design_effect) if design_effect > 0 else math.nan,
        notes=tuple(notes),
    )
