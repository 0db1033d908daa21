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
from clusterstats.core._lazy import special
from clusterstats.core.beta_binomial import (
    MAX_ICC,
    inverted_korn_graubard,
    restricted_icc,
    tail_counts,
)
from clusterstats.core.bootstrap import bootstrap_interval, generator, studentized_interval
from clusterstats.core.grouping import ClusterSums
from clusterstats.core.score import cluster_score_interval, cluster_score_test
from clusterstats.core.variance import (
    ICCEstimate,
    centred_estimate,
    cluster_robust,
    design_effect_kish,
    design_effect_unequal,
    estimate,
    icc_anova,
    icc_interval,
    iid_variance,
    moulton_icc,
    row_variance,
    working_model_df,
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
    "ICCSummary",
    "IntervalSummary",
    "default_design_effect",
    "summarize_design_effect",
    "summarize_icc",
    "summarize_interval",
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


def naive_interval(sums: ClusterSums, point: float, is_binary: bool, confidence: float):
    n_rows = float(sums.counts.sum())
    if is_binary:
        return iv.wilson(point, n_rows, confidence)
    return iv.t_interval(point, iid_variance(sums), n_rows - 1.0, confidence)


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

    degenerate = _is_zero_variance(cr1.variance, sums)
    design_effect = n_eff = math.nan
    # The design effect is that of the variance the interval uses (se^2 over s^2 / N), set
    # below from se unless a branch sets it itself (the model-based tests, the fallbacks).
    effect_set = False
    used_resamples: int | None = None
    p_value = math.nan

    if not is_binary and constant_up_to_rounding(sums, point):
        exactly = "" if iid_var == 0.0 else " up to rounding"
        raise DegenerateDataError(
            f"all {int(n_rows)} outcomes equal {point:g}{exactly}: a continuous outcome with "
            "no variation has no estimable uncertainty"
        )
    # The naive interval is the iid comparison as is; the inverted interval needs no variance
    # (unless a pilot ICC is supplied for degenerate data: then the fallback uses it).
    # Its likelihood needs whole successes: per-case pass probabilities that are all equal
    # (flagged binary by the rerun statistics so that they get the fallback) do not qualify.
    if method in ("korn_graubard_inverted", "korn_graubard_hybrid"):
        successes = sums.totals + sums.shift * sums.counts
        whole = bool(np.all(np.abs(successes - np.rint(successes)) <= 1e-9 * sums.counts))
    else:
        successes, whole = None, False
    inverted_copes = whole and icc_prior is None
    if degenerate and method != "naive" and not inverted_copes:
        if icc_prior is None:
            n_eff, basis = float(g), f"the number of clusters ({g})"
        else:
            n_eff = n_rows / design_effect_kish(n_rows / g, icc_prior)
            basis = f"n / (1 + (m - 1) * icc) with the supplied icc={icc_prior:g}"
        low, high, se, df, method, message = zero_variance_interval(
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
        notes.append(message)
        effect_set = True
    elif method in ("naive", "cr1", "cr2", "cr2_ik", "cr3", "cr3_ik"):
        if method == "naive":
            low, high = naive_low, naive_high
            se, df = math.sqrt(iid_var), n_rows - 1.0
        else:
            pv = cr1 if method == "cr1" else cluster_robust(sums, estimand, method[:3].upper())
            if method.endswith("_ik"):
                pv = pv._replace(df=uneven_sizes_df(sums, estimand, jackknife=method == "cr3_ik"))
            se, df = math.sqrt(pv.variance), pv.df
            low, high = iv.t_interval(point, pv.variance, pv.df, confidence)
            if is_binary and (low < 0.0 or high > 1.0):
                low, high = max(low, 0.0), min(high, 1.0)
                notes.append("the symmetric interval crossed [0, 1] and was clipped")
    elif method in ("wilson", "korn_graubard"):
        se, df = math.sqrt(cr1.variance), cr1.df
        low, high, cap_note = iv.effective_n_interval(
            method, point, cr1.variance, cr1.df, n_rows, confidence, cap=cap_n_eff
        )
        if cap_note:
            notes.append(cap_note)
    elif method == "korn_graubard_guarded":
        variance, df = guarded_variance(sums, estimand, icc_est.icc)
        se = math.sqrt(variance)
        low, high, cap_note = iv.effective_n_interval(
            "korn_graubard", point, variance, df, n_rows, confidence, cap=cap_n_eff
        )
        if cap_note:
            notes.append(cap_note)
    elif method in ("korn_graubard_inverted", "korn_graubard_hybrid"):
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
        effect_set = True
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
    elif method == "score":
        low, high = _score_bounds(sums, estimand, confidence, is_binary, outcome_range)
        se, df = math.sqrt(cr1.variance), g - 1.0
        if null_value is not None:
            p_value = cluster_score_test(sums, estimand, null_value)
        if math.isinf(low) or math.isinf(high):
            notes.append(_UNBOUNDED_SCORE)
    elif method in ("bootstrap_bca", "bootstrap_percentile"):
        boot = bootstrap_interval(
            sums,
            estimand,
            kind=method.removeprefix("bootstrap_"),
            confidence=confidence,
            n_resamples=n_resamples,
            rng=generator(rng),
            indices=bootstrap_indices,
        )
        low, high, se, df = boot.low, boot.high, boot.standard_error, math.nan
        used_resamples = n_resamples
        if boot.note:
            notes.append(boot.note)
    elif method == "bootstrap_t":
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
            n_resamples=n_resamples,
            rng=generator(rng),
            indices=bootstrap_indices,
            null=null_value,
        )
        p_value = boot_t.p_value
        low, high = min(boot_t.low, cr2_low), max(boot_t.high, cr2_high)
        se, df = math.sqrt(pv.variance), math.nan
        used_resamples = n_resamples
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
            notes.append(
                f"the interval reached beyond [{limits[0]:g}, {limits[1]:g}] and was clipped"
            )
    else:
        raise ValueError(f"unknown method {method!r}; expected one of {iv.METHODS}")

    notes.extend(few_clusters_notes(g, method))
    if not effect_set and iid_var > 0 and math.isfinite(se) and se > 0:
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
            notes.append(
                f"the {estimand} estimate ({point:.4g}) and the {other} estimate "
                f"({other_point:.4g}) differ by more than one standard error and cluster sizes "
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
        n_resamples=used_resamples,
        notes=tuple(notes),
        p_value=p_value,
    )


_UNBOUNDED_SCORE = (
    "the cluster score interval is unbounded: the clusters carry fewer than about t^2 "
    "clusters' worth of rows (a few clusters hold most of them), so no value on that side "
    "can be rejected; more clusters would bound it"
)


def _score_bounds(
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
    score_low, score_high = _score_bounds(sums, estimand, confidence, is_binary, outcome_range)
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
        notes.append(_UNBOUNDED_SCORE)
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
