"""Numerical precision of the core (issue 15): a differential test against an exact
implementation of the pooled and cluster-mean estimates, the CR1 (and CR2) variance, the iid
variance, the one-way ANOVA ICC and the design effects.

The reference
-------------
Every float input is an exact binary fraction, so the reference works on the exact values:
each outcome is written ``M_i / L`` with integer ``M_i`` and one power of two ``L``, every
sum is a Python integer, and every statistic a ``fractions.Fraction``. Square roots (the
standard errors) are taken with ``decimal`` at 50 digits. The formulas are the ones the
library documents (``clusterstats.core.variance``): ``CR1 = G/(G-1) * sum(e_g^2) / N^2``
with ``e_g = T_g - n_g * mean`` (Stata's and R ``sandwich::vcovCL(type="HC1")``'s factor
``G/(G-1) * (N-1)/(N-K)`` with ``K = 1``), CR1 of the mean of cluster means
``sum((m_g - mean)^2) / (G (G-1))``, CR2 ``sum(e_g^2 / (1 - n_g/N)) / N^2``, the iid variance
``s^2 / N``, the ICC ``(MSB - MSW) / (MSB + (n0 - 1) MSW)`` with Snedecor & Cochran's
``n0 = (N - sum(n_g^2)/N) / (G - 1)``, Kish's ``1 + (N/G - 1) icc`` and the unequal-size
design effects, both with the ICC truncated at 0.

The data
--------
2..60 clusters of 1..30 rows; binary, continuous (ICC from 0 to 0.8) and near-constant
outcomes (one value, a few rows off it by a relative 2^-1..2^-45); an offset of 0, ±1e3,
1e6, ±1e9 or 1e12 added to every score and the result multiplied by 10^k,
``-150 <= k <= 150``. Examples are derandomized (the same every run).

The bound, and why
------------------
Asserted: relative error at most ``TOL = 1e-12`` for the variances, standard errors and
empirical design effects; for the location quantities (estimates, bounds) an error at most
``TOL * (|exact| + range of the outcomes)``; for the ICC and the model-based design effects,
which are differences, at most ``TOL * (|exact| + scale)`` with ``scale`` the sensitivity
of the ratio to relative errors in MSB and MSW, ``(MSB + MSW) / (MSB + (n0 - 1) MSW)``
(times the design effect's coefficient of the ICC).

Why 1e-12 holds: the deviations ``y - shift`` the core sums are exact (``shift`` is one of
the outcomes, and Sterbenz' lemma makes ``y - shift`` exact for values within a factor of
two of it, which any offset much larger than the spread ensures), so offsets and the scale
10^k do not enter the error at all (a power-of-ten scale changes the inputs, which the
reference sees exactly, not the conditioning). What remains is float summation of at most
N = 1800 terms: the standard forward bound is ``gamma_N * kappa`` with
``gamma_N = N u / (1 - N u) ~ 2e-13`` and ``kappa`` the condition number of the statistic
on these data (``sum |terms| / |sum|``, a few for variances of these data, because
residuals are formed from centred sums). In practice float errors grow like ``sqrt(N) u``:
the largest error seen over all the examples here is 5e-14 (a design effect of two clusters
whose means nearly coincide, where the CR1 variance is itself a small difference), most are
below 1e-15, so the bound leaves a factor of 20 for platforms' summation orders. Before the
fix the CR1 standard error's relative error was 1e-8 at an offset of 1e9 and 1e-5 at 1e12
(the shift was added to the estimate and subtracted again), and a Dataset's case means kept
only the digits of their rounded totals.

Outside float64's range
-----------------------
Outcomes whose squared deviations leave the normal float64 range cannot be summed to full
precision, and the sums must stay in the outcome's units (every consumer expects that): the
core raises ``InvalidOutcomeError`` saying by how much to rescale
(``clusterstats.core.grouping.check_magnitude``) instead of reporting "all outcomes equal".
The test asserts results wherever the data are comfortably inside the range, an error
wherever they are clearly outside it, and accepts either within a factor of 2^8 of the
limits (the library measures deviations from its own shift, the test from the mean).
"""

from __future__ import annotations

import math
import warnings
from decimal import Decimal, localcontext
from fractions import Fraction
from typing import NamedTuple

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st
from scipy import special

import clusterstats as cs
from clusterstats.core.grouping import MAX_SQUARES, MIN_NORMAL, grouped_cluster_tables
from clusterstats.core.reruns import case_moments, case_table
from clusterstats.core.summary import (
    summarize_design_effect,
    summarize_icc,
    summarize_interval,
)
from clusterstats.core.variance import cluster_robust
from clusterstats.errors import DegenerateDataError, InvalidOutcomeError

TOL = 1e-12
CONFIDENCE = 0.95
OFFSETS = [0.0, 1e3, -1e3, 1e6, 1e9, -1e9, 1e12]
# a margin of 2^8 around the limits of the accepted range, where either outcome is right
MARGIN = 2**8

SETTINGS = settings(
    max_examples=400,
    derandomize=True,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)


# -- the exact reference ---------------------------------------------------------------------


class Exact(NamedTuple):
    """Exact statistics of one outcome; variances in the outcome's units squared."""

    n_rows: int
    n_clusters: int
    counts: tuple[int, ...]
    pooled: Fraction
    cluster_mean: Fraction
    cr1_pooled: Fraction
    cr1_cluster_mean: Fraction
    cr2_pooled: Fraction
    iid: Fraction
    msb: Fraction | None
    msw: Fraction | None
    n0: Fraction | None
    icc: Fraction | None  # None: undefined
    ss: Fraction  # sum of squares around the mean
    spread: Fraction  # largest |y_i - y_j|
    largest: Fraction  # largest |y_i|
    all_equal: bool


def exact_statistics(y: np.ndarray, g: np.ndarray) -> Exact:
    """The exact statistics of outcomes ``y`` (floats, taken at their exact binary values) in
    clusters ``g``."""
    ratios = [float(v).as_integer_ratio() for v in y]
    unit = max(q for _, q in ratios)  # every denominator is a power of two: it divides this
    m = [p * (unit // q) for p, q in ratios]
    clusters: dict[int, list[int]] = {}
    for value, c in zip(m, g.tolist(), strict=True):
        clusters.setdefault(c, []).append(value)
    n = [len(v) for v in clusters.values()]
    t = [sum(v) for v in clusters.values()]
    q2 = [sum(x * x for x in v) for v in clusters.values()]
    big_n, big_g = sum(n), len(n)
    total, squares = sum(t), sum(q2)
    u1, u2 = Fraction(1, unit), Fraction(1, unit * unit)
    pooled = Fraction(total, big_n)
    means = [Fraction(a, b) for a, b in zip(t, n, strict=True)]
    cluster_mean = sum(means, Fraction(0)) / big_g
    # e_g * N = T_g N - T n_g: integers
    e_n = [a * big_n - total * b for a, b in zip(t, n, strict=True)]
    cr1 = Fraction(big_g, big_g - 1) * Fraction(sum(e * e for e in e_n), big_n**4)
    cr1_cm = sum(((x - cluster_mean) ** 2 for x in means), Fraction(0)) / (big_g * (big_g - 1))
    cr2 = sum(
        (Fraction(e * e, big_n**4) / (1 - Fraction(b, big_n)) for e, b in zip(e_n, n, strict=True)),
        Fraction(0),
    )
    ss = Fraction(squares * big_n - total * total, big_n)
    iid = ss / (big_n - 1) / big_n
    between_raw = sum((Fraction(a * a, b) for a, b in zip(t, n, strict=True)), Fraction(0))
    msb = msw = n0 = icc = None
    if big_n > big_g:
        msb = (between_raw - Fraction(total * total, big_n)) / (big_g - 1)
        msw = (squares - between_raw) / (big_n - big_g)
        n0 = (big_n - Fraction(sum(b * b for b in n), big_n)) / (big_g - 1)
        denominator = msb + (n0 - 1) * msw
        if denominator > 0 and ss > 0:
            icc = (msb - msw) / denominator
        msb, msw = msb * u2, msw * u2
    return Exact(
        n_rows=big_n,
        n_clusters=big_g,
        counts=tuple(n),
        pooled=pooled * u1,
        cluster_mean=cluster_mean * u1,
        cr1_pooled=cr1 * u2,
        cr1_cluster_mean=cr1_cm * u2,
        cr2_pooled=cr2 * u2,
        iid=iid * u2,
        msb=msb,
        msw=msw,
        n0=n0,
        icc=icc,
        ss=ss * u2,
        spread=Fraction(max(m) - min(m), unit),
        largest=Fraction(max(abs(x) for x in m), unit),
        all_equal=max(m) == min(m),
    )


def exact_sqrt(value: Fraction) -> Decimal:
    with localcontext() as context:
        context.prec = 50
        return (Decimal(value.numerator) / Decimal(value.denominator)).sqrt()


def relative_error(got: float, want: Fraction) -> float:
    if want == 0:
        return 0.0 if got == 0.0 else math.inf
    return float(abs(Fraction(got) - want) / abs(want))


def assert_relative(got: float, want: Fraction, what: str) -> float:
    """``|got - want| <= TOL * |want|``; returns the relative error."""
    error = relative_error(got, want)
    assert error <= TOL, f"{what}: got {got!r}, exact {float(want)!r}, relative error {error:.2e}"
    return error


def assert_scaled(got: float, want: Fraction, scale: Fraction, what: str) -> float:
    """``|got - want| <= TOL * (|want| + scale)``; returns the error relative to that."""
    bound = abs(want) + abs(scale)
    error = float(abs(Fraction(got) - want) / bound) if bound else abs(got)
    assert error <= TOL, f"{what}: got {got!r}, exact {float(want)!r}, scaled error {error:.2e}"
    return error


def assert_se(got: float, variance: Fraction, what: str) -> float:
    """A standard error against the square root of the exact variance; returns the relative
    error."""
    want = exact_sqrt(variance)
    if want == 0:
        assert got == 0.0, what
        return 0.0
    with localcontext() as context:
        context.prec = 50
        error = float(abs(Decimal(got) - want) / want)
    assert error <= TOL, f"{what}: got {got!r}, exact {float(want)!r}, relative error {error:.2e}"
    return error


# -- the data --------------------------------------------------------------------------------


class Outcomes(NamedTuple):
    y: np.ndarray
    g: np.ndarray  # cluster codes
    r: np.ndarray  # rerun index within the cluster
    kind: str


@st.composite
def outcomes(draw, max_clusters: int = 60) -> Outcomes:
    n_clusters = draw(st.integers(2, max_clusters))
    largest = draw(st.sampled_from([1, 2, 5, 30]))  # 1: every cluster a single row
    kind = draw(st.sampled_from(["binary", "continuous", "near_constant"]))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    sizes = rng.integers(1, largest + 1, n_clusters)
    g = np.repeat(np.arange(sizes.size), sizes)
    r = np.concatenate([np.arange(s) for s in sizes])
    if kind == "binary":
        p = rng.choice([0.0, 0.05, 0.5, 0.95, 1.0], size=sizes.size)[g]
        x = (rng.random(g.size) < p).astype(np.float64)
    elif kind == "continuous":
        between = draw(st.sampled_from([0.0, 0.5, 2.0]))
        x = between * rng.normal(size=sizes.size)[g] + rng.normal(size=g.size)
    else:
        x = np.full(g.size, rng.normal())
        odd = rng.choice(g.size, size=min(g.size, draw(st.integers(1, 5))), replace=False)
        x[odd] *= 1.0 + rng.choice([-1.0, 1.0], size=odd.size) * 2.0 ** -rng.integers(
            1, 46, odd.size
        )
    if kind == "binary" and draw(st.booleans()):
        return Outcomes(x, g, r, kind)  # 0/1: the binary paths (clipping, fallbacks)
    offset = draw(st.sampled_from(OFFSETS))
    exponent = draw(st.sampled_from([0, -150, 150]) | st.integers(-150, 150))
    y = (x + offset) * 10.0**exponent
    return Outcomes(y, g, r, kind)


def in_range(exact: Exact) -> bool | None:
    """True where the library must give results, False where it must raise
    ``InvalidOutcomeError``, None where either is right (near the limits)."""
    n = exact.n_rows
    if exact.all_equal:
        return True
    # the library's sum of squares S lies between the one around the mean and N * spread^2
    low, high = exact.ss, n * exact.spread**2
    floor, ceiling = Fraction(MIN_NORMAL) * n * n, Fraction(MAX_SQUARES)
    if low >= floor * MARGIN and high * MARGIN <= ceiling:
        return True
    if high < floor or low > ceiling:
        return False
    return None


def quietly(fn, *args, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", cs.ClusterStatsWarning)
        return fn(*args, **kwargs)


# -- the comparisons -------------------------------------------------------------------------


def check_interval(result, exact: Exact, estimand: str, binary: bool) -> None:
    """A ``cluster_ci(method="cr1")`` result (or its IntervalSummary) against the exact
    values."""
    point = exact.pooled if estimand == "pooled" else exact.cluster_mean
    variance = exact.cr1_pooled if estimand == "pooled" else exact.cr1_cluster_mean
    assert_scaled(result.estimate, point, exact.spread, f"{estimand} estimate")
    if variance == 0:
        assert result.method in ("naive_fallback", "clopper_pearson_fallback"), result.method
        if result.method == "naive_fallback":
            assert_se(result.se, exact.iid, "fallback standard error")
        return
    assert result.method == "cr1", result.method
    assert_se(result.se, variance, f"{estimand} CR1 standard error")
    q = Fraction(float(special.stdtrit(exact.n_clusters - 1, 0.5 + CONFIDENCE / 2)))
    half = q * Fraction(exact_sqrt(variance))
    low, high = point - half, point + half
    if binary and (low < 0 or high > 1):
        low, high = max(low, Fraction(0)), min(high, Fraction(1))
    for got, want, which in ((result.low, low, "low"), (result.high, high, "high")):
        assert_scaled(got, want, exact.spread, f"{estimand} CR1 {which} bound")
    if exact.iid > 0:
        deff = variance / exact.iid
        assert_relative(result.design_effect, deff, f"{estimand} design effect")


def icc_scale(exact: Exact) -> Fraction:
    return (exact.msb + exact.msw) / (exact.msb + (exact.n0 - 1) * exact.msw)


def check_icc(icc: float, exact: Exact) -> None:
    if exact.icc is None:
        assert math.isnan(icc), icc
        return
    assert_scaled(icc, exact.icc, icc_scale(exact), "ICC")


def check_design_effect(result, exact: Exact, estimand: str) -> None:
    variance = exact.cr1_pooled if estimand == "pooled" else exact.cr1_cluster_mean
    if exact.iid > 0 and variance > 0:
        assert_relative(result.linearized, variance / exact.iid, "linearized deff")
    if exact.icc is None or all(c == 1 for c in exact.counts):
        return  # undefined, or 1 by definition
    rho = max(exact.icc, Fraction(0))
    n, g = exact.n_rows, exact.n_clusters
    if estimand == "pooled":
        coefficient = Fraction(n, g) - 1
        scale = coefficient * icc_scale(exact)
        assert_scaled(result.kish, 1 + coefficient * rho, scale, "kish")
        coefficient = Fraction(sum(c * c for c in exact.counts), n) - 1
        unequal = 1 + coefficient * rho
    else:
        coefficient = Fraction(n, g * g) * sum(Fraction(c - 1, c) for c in exact.counts)
        base = Fraction(n, g * g) * sum(Fraction(1, c) for c in exact.counts)
        unequal = base + coefficient * rho
    scale = coefficient * icc_scale(exact)
    assert_scaled(result.unequal_sizes, unequal, scale, "unequal deff")


def check_rejected(call) -> None:
    with pytest.raises(InvalidOutcomeError, match="differ by about") as info:
        quietly(call)
    assert "all outcomes equal" not in str(info.value)


def public_calls(data, outcome, by) -> dict:
    """``cluster_ci`` (CR1, both estimands), ``icc`` and ``design_effect`` (both) on one
    input."""
    return {
        "ci_pooled": lambda: cs.cluster_ci(data, outcome, by, method="cr1"),
        "ci_cluster_mean": lambda: cs.cluster_ci(
            data, outcome, by, method="cr1", estimand="cluster_mean"
        ),
        "cr2_pooled": lambda: cs.cluster_ci(data, outcome, by, method="cr2"),
        "icc": lambda: cs.icc(data, outcome, by),
        "deff_pooled": lambda: cs.design_effect(data, outcome, by),
        "deff_cluster_mean": lambda: cs.design_effect(data, outcome, by, estimand="cluster_mean"),
    }


def core_calls(make_sums, binary: bool) -> dict:
    """The same from the core: ``make_sums()`` then the summaries the public functions wrap."""

    def interval(estimand):
        return lambda: summarize_interval(
            make_sums(), estimand=estimand, method="cr1", confidence=CONFIDENCE, is_binary=binary
        )

    return {
        "ci_pooled": interval("pooled"),
        "ci_cluster_mean": interval("cluster_mean"),
        "cr2_pooled": lambda: summarize_interval(
            make_sums(), estimand="pooled", method="cr2", confidence=CONFIDENCE, is_binary=binary
        ),
        "icc": lambda: summarize_icc(make_sums(), confidence=CONFIDENCE),
        "deff_pooled": lambda: summarize_design_effect(
            make_sums(), estimand="pooled", is_binary=binary
        ),
        "deff_cluster_mean": lambda: summarize_design_effect(
            make_sums(), estimand="cluster_mean", is_binary=binary
        ),
    }


def equal_up_to_rounding(exact: Exact) -> bool:
    """Whether the outcomes may count as equal up to rounding, as
    ``clusterstats.core.summary.constant_up_to_rounding`` decides (a standard deviation of at
    most 16 units in the last place of their magnitude), with a factor of 2 to spare."""
    if exact.all_equal:
        return True
    variance = exact.ss / (exact.n_rows - 1)
    limit = 2 * 16 * Fraction(float(np.finfo(float).eps)) * exact.largest
    return variance <= limit * limit


def check_all(calls: dict, exact: Exact, binary: bool) -> None:
    """Run ``calls`` and compare what they return with the exact statistics: results where
    the outcomes are in float64's range, an ``InvalidOutcomeError`` where they are not, a
    ``DegenerateDataError`` for a continuous outcome only where its values are equal (or
    equal up to rounding)."""
    verdict = in_range(exact)
    if verdict is False:
        for call in calls.values():
            check_rejected(call)
        return
    results = {}
    for key, call in calls.items():
        try:
            results[key] = quietly(call)
        except (InvalidOutcomeError, DegenerateDataError) as error:
            results[key] = error
    rejected = [r for r in results.values() if isinstance(r, InvalidOutcomeError)]
    if rejected:
        if verdict is None:
            return
        raise rejected[0]
    for estimand in ("pooled", "cluster_mean"):
        result = results[f"ci_{estimand}"]
        if isinstance(result, DegenerateDataError):
            assert not binary, str(result)
            assert equal_up_to_rounding(exact), str(result)
            assert "outcomes equal" in str(result)
            continue
        assert binary or not exact.all_equal, "equal outcomes, yet an interval"
        check_interval(result, exact, estimand, binary)
        check_design_effect(results[f"deff_{estimand}"], exact, estimand)
    cr2 = results["cr2_pooled"]
    if not isinstance(cr2, DegenerateDataError) and exact.cr1_pooled > 0:
        assert cr2.method == "cr2", cr2.method
        assert_se(cr2.se, exact.cr2_pooled, "pooled CR2 standard error")
    check_icc(results["icc"].icc, exact)


def is_binary(y: np.ndarray) -> bool:
    return bool(np.all((y == 0.0) | (y == 1.0)))


# -- the tests -------------------------------------------------------------------------------


@SETTINGS
@given(data=outcomes())
def test_arrays_agree_with_the_exact_statistics(data):
    """``cluster_ci(None, y, g, method="cr1")``, ``icc`` and ``design_effect`` on arrays."""
    exact = exact_statistics(data.y, data.g)
    check_all(public_calls(None, data.y, data.g), exact, is_binary(data.y))


def _grid(data: Outcomes) -> np.ndarray:
    grid = np.full((int(data.g.max()) + 1, int(data.r.max()) + 1), np.nan)
    grid[data.g, data.r] = data.y
    return grid


@SETTINGS
@given(data=outcomes())
def test_case_moments_agree_with_the_exact_statistics(data):
    """The (case, rerun) core: ``case_moments`` then ``case_table`` with the residual moment,
    each case its own cluster, as a Dataset is reduced."""
    exact = exact_statistics(data.y, data.g)
    moments = case_moments(_grid(data))

    def make_sums():
        table, _ = case_table(
            moments[:, 0], moments[:, 1], moments[:, 2], moments[:, 4], residual=moments[:, 5]
        )
        return table.complete_case()

    binary = not bool(moments[:, 3].any())
    check_all(core_calls(make_sums, binary), exact, binary)


@settings(SETTINGS, max_examples=60, phases=[Phase.explicit, Phase.reuse, Phase.generate])
@given(data=outcomes(max_clusters=40))
def test_datasets_agree_with_the_exact_statistics(data):
    """The same through ``to_case_rerun`` and the public functions on the Dataset."""
    exact = exact_statistics(data.y, data.g)
    frame = pd.DataFrame({"task": data.g, "trial": data.r, "score": data.y})
    dataset = cs.to_case_rerun(frame, case="task", rerun="trial", outcome="score")
    check_all(public_calls(dataset, "score", None), exact, is_binary(data.y))


@settings(SETTINGS, max_examples=150)
@given(first=outcomes(max_clusters=30), second=outcomes(max_clusters=30))
def test_groups_far_apart_each_keep_their_precision(first, second):
    """``grouped_cluster_tables``: two groups (e.g. two models) reduced together, a group far
    from the shared shift reduced again around its own value, match each group's exact
    statistics."""
    n_clusters = int(max(first.g.max(), second.g.max())) + 1
    values = np.concatenate([first.y, second.y])
    codes = np.concatenate([first.g, second.g])
    groups = np.repeat([0, 1], [first.y.size, second.y.size])
    exacts = [exact_statistics(data.y, data.g) for data in (first, second)]
    verdicts = [in_range(exact) for exact in exacts]

    def make_sums(index):
        tables = grouped_cluster_tables(values, codes, n_clusters, groups, 2)
        return tables[index][0].complete_case()

    if False in verdicts:  # each group is checked: one out of range is an error
        check_rejected(lambda: make_sums(0))
        return
    for index, data in enumerate((first, second)):
        if None in verdicts:
            try:
                make_sums(index)
            except InvalidOutcomeError:
                return
        binary = is_binary(data.y)
        check_all(core_calls(lambda i=index: make_sums(i), binary), exacts[index], binary)


@pytest.mark.parametrize("offset", [1e9, 1e12])
def test_over_groups_far_apart_each_keep_their_precision(offset):
    rng = np.random.default_rng(15)
    sizes = rng.integers(1, 31, 40)
    g = np.repeat(np.arange(40), sizes)
    x = 0.5 * rng.normal(size=40)[g] + rng.normal(size=g.size)
    frame = pd.concat(
        [
            pd.DataFrame({"model": "a", "doc": g, "score": x}),
            pd.DataFrame({"model": "b", "doc": g, "score": x + offset}),
        ]
    )
    result = quietly(cs.cluster_ci, frame, "score", by="doc", over="model", method="cr1")
    exact = exact_statistics(x + offset, g)
    assert_se(result.results[1].se, exact.cr1_pooled, "group b's CR1 standard error")


OUT_OF_RANGE = [
    pytest.param(1e155, id="1e155 (squares overflow)"),
    pytest.param(1e200, id="1e200"),
    pytest.param(1e-155, id="1e-155 (squares subnormal)"),
    pytest.param(1e-170, id="1e-170 (squares underflow to 0)"),
    pytest.param(1e-300, id="1e-300"),
]


@pytest.mark.parametrize("scale", OUT_OF_RANGE)
@pytest.mark.parametrize("offset", [0.0, 1e9])
def test_outcomes_outside_float64_range_raise_a_precise_error(scale, offset):
    """Never "all outcomes equal" for outcomes that differ: an InvalidOutcomeError that gives
    the magnitude and the rescaling, through arrays, Datasets and the core."""
    rng = np.random.default_rng(3)
    g = np.repeat(np.arange(12), 5)
    r = np.tile(np.arange(5), 12)
    y = (rng.normal(size=g.size) + offset) * scale
    assert len(np.unique(y)) > 1
    frame = pd.DataFrame({"task": g, "trial": r, "score": y})
    dataset = cs.to_case_rerun(frame, case="task", rerun="trial", outcome="score")
    for call in (
        lambda: cs.cluster_ci(None, y, g, method="cr1"),
        lambda: cs.icc(None, y, g),
        lambda: cs.design_effect(None, y, g),
        lambda: cs.cluster_ci(frame, "score", by="task"),
        lambda: cs.cluster_ci(dataset, "score"),
        lambda: cs.icc(dataset, "score"),
    ):
        check_rejected(call)
    exponent = round(math.log10(float(np.max(np.abs(y - y[0])))))
    with pytest.raises(InvalidOutcomeError, match=f"1e[+-]?0*{abs(exponent)}\\b"):
        quietly(cs.cluster_ci, None, y, g)


@pytest.mark.parametrize("value", [1e200, -1e-200, 1e-320, 1e12])
def test_equal_outcomes_of_any_magnitude_are_still_equal(value):
    g = np.repeat(np.arange(6), 4)
    y = np.full(g.size, value)
    with pytest.raises(DegenerateDataError, match="outcomes equal"):
        quietly(cs.cluster_ci, None, y, g, method="cr1")


def test_residual_sums_of_squares_are_rescaled_not_overflowed():
    """CR1 and CR2 whose sums of squared residuals leave the float64 range (while the
    variance itself does not) are computed on residuals scaled by a power of two."""
    from clusterstats.core.grouping import ClusterSums

    for size, deviation in ((1e7, 1e150), (1e7, 2.0**-500)):
        counts = np.array([size, size, 2 * size])
        totals = np.array([size * deviation, -size * deviation, 0.0])
        sums = ClusterSums(counts, totals, np.abs(totals) * deviation)
        n = Fraction(4 * size)
        e = [Fraction(t) for t in totals]  # the pooled centred mean is 0
        cr1 = Fraction(3, 2) * sum(x * x for x in e) / n**2
        cr2 = sum(x * x / (1 - Fraction(c) / n) for x, c in zip(e, counts, strict=True)) / n**2
        assert_relative(cluster_robust(sums, "pooled", "CR1").variance, cr1, "CR1")
        assert_relative(cluster_robust(sums, "pooled", "CR2").variance, cr2, "CR2")
