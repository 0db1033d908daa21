"""Hostile input for the rerun statistics (issue 15): ``pass_at_k``, ``pass_hat_k``,
``flakiness``, the (case, rerun) layout (``to_case_rerun`` and Datasets), ``simulate`` and the
bundled datasets.

Each case states the exact error and a message naming the offending option, column, dim,
variable or group, or the right number with its warning; the harness (``tests/hostile/hostile.py``)
also checks that no input was changed. Sources of the expected numbers are in the comments:
the unbiased per-case estimators ``1 - C(n-c, k) / C(n, k)`` (pass@k, Chen et al. 2021) and
``C(c, k) / C(n, k)`` (pass^k, Yao et al. 2024) averaged over cases; the CR2 interval with
every case its own cluster, ``mean ± t_{P-1} sd / sqrt(P)`` (scipy's t quantile); and the
Clopper-Pearson bounds ``beta.ppf(α/2, x, n-x+1)``, ``beta.ppf(1-α/2, x+1, n-x)``, which for
``x = 0`` or ``x = n`` are ``1 - (α/2)^(1/n)`` and ``(α/2)^(1/n)``.
"""

from __future__ import annotations

import math
import warnings

import numpy as np
import pandas as pd
import pytest
import xarray as xr
from hostile import Case, Raises, Returns, Warns, params, run
from scipy import stats

import clusterstats as cs

nan, inf = math.nan, math.inf
Option = cs.InvalidOptionError

#: 24 cases of 4 runs: passes per case c = 1, 2, 0, 4, 2, 3 (four times over).
PATTERN = [1, 0, 0, 0, 1, 1, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 0, 1, 0, 1, 1, 0, 1, 1]
PASSES = [1, 2, 0, 4, 2, 3] * 4


def runs(cases: int = 24, n: int = 4, y=None) -> pd.DataFrame:
    """``cases`` cases of ``n`` runs each (columns ``case``, ``rerun``, ``y``)."""
    if y is None:
        y = (PATTERN * (cases * n // len(PATTERN) + 1))[: cases * n]
    return pd.DataFrame(
        {"case": np.repeat(np.arange(cases), n), "rerun": np.tile(np.arange(n), cases), "y": y}
    )


def grid(frame: pd.DataFrame | None = None, **options) -> xr.Dataset:
    """The (case, rerun) Dataset of ``runs()`` (or of ``frame``)."""
    frame = runs() if frame is None else frame
    return cs.to_case_rerun(frame, case="case", rerun="rerun", outcome="y", **options)


def two_models() -> xr.Dataset:
    """``grid()`` for models "a" (the pattern) and "b" (every run flipped), as floats."""
    a = runs().astype({"y": float})
    b = a.assign(y=1.0 - a["y"])
    long = pd.concat([a.assign(model="a"), b.assign(model="b")], ignore_index=True)
    return cs.to_case_rerun(long, case="case", rerun="rerun", outcome="y", dims=["model"])


def closed_form(passes, n: int, k: int, statistic: str = "pass@k") -> np.ndarray:
    """The per-case unbiased estimator, with ``n`` runs (int or per case) and ``passes``."""
    n = np.broadcast_to(n, np.shape(passes))
    if statistic == "pass@k":
        return np.array(
            [1 - math.comb(m - c, k) / math.comb(m, k) for c, m in zip(passes, n, strict=True)]
        )
    return np.array([math.comb(c, k) / math.comb(m, k) for c, m in zip(passes, n, strict=True)])


def cr3_case_se(values: np.ndarray) -> float:
    """CR3 (Bell and McCaffrey's jackknife) of a mean of P per-case values, in closed form:
    each residual is inflated by 1 / (1 - 1/P), so the variance is sum(e^2) / (P - 1)^2 =
    sd^2 / (P - 1)."""
    return float(np.std(values, ddof=1) / math.sqrt(len(values) - 1))


def cr3_case_interval(values: np.ndarray) -> tuple[float, float, float]:
    """Cases as clusters: mean ± t_{P-1} × the CR3 standard error (equal weights make the
    Satterthwaite degrees of freedom exactly P - 1)."""
    p = len(values)
    half = stats.t.ppf(0.975, p - 1) * cr3_case_se(values)
    return values.mean(), values.mean() - half, values.mean() + half


def expect_pass(values: np.ndarray, **fields):
    """A ``check``: the estimate of these per-case values, CR3's standard error (mean ± t
    sd / sqrt(P - 1) in closed form, which the default studentized bootstrap never narrows), the
    default interval of ``cluster_ci`` on the values themselves (each case a cluster, the
    same default seed), and ``fields``."""
    values = np.asarray(values, dtype=float)
    estimate, low, high = cr3_case_interval(values)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", cs.ClusterStatsWarning)
        direct = cs.cluster_ci(None, values, np.arange(values.size))

    def check(result):
        assert result.estimate == pytest.approx(estimate, rel=1e-12)
        assert result.se == pytest.approx(cr3_case_se(values))
        assert result.method == "bootstrap_t"
        assert result.low <= low + 1e-12
        assert result.high >= high - 1e-12
        assert result.low == pytest.approx(max(direct.low, 0.0), rel=1e-9)
        assert result.high == pytest.approx(min(direct.high, 1.0), rel=1e-9)
        for name, value in fields.items():
            assert getattr(result, name) == value, (name, getattr(result, name), value)

    return check


def fields(**expected):
    """A ``check``: each named field of the result equals (or approximates) its value."""

    def check(result):
        for name, value in expected.items():
            assert getattr(result, name) == value, (name, getattr(result, name), value)

    return check


def has_note(fragment: str, then=None):
    def check(result):
        assert any(fragment in note for note in result.notes), result.notes
        if then is not None:
            then(result)

    return check


PASS_AT_2 = closed_form(PASSES, 4, 2)  # mean 0.6944 (the pass_at_k docstring)
PASS_HAT_2 = closed_form(PASSES, 4, 2, "pass^k")  # mean 0.3056


def pass_case(name, expect, frame=runs, k=2, function=cs.pass_at_k, marks=(), **options) -> Case:
    return Case(
        name,
        lambda: {"data": frame()},
        lambda data: function(data, "y", k=k, **options),
        expect,
        marks=marks,
    )


# -- k and the options ------------------------------------------------------------------------

OPTION_CASES = [
    pass_case("k=0", Raises(Option, r"k must be a positive integer, got 0"), k=0),
    pass_case("k=-1", Raises(Option, r"k must be a positive integer, got -1"), k=-1),
    pass_case("k=1.5", Raises(Option, r"k must be a positive integer, got 1.5"), k=1.5),
    pass_case("k=2.0 (a float)", Raises(Option, r"k must be a positive integer, got 2.0"), k=2.0),
    pass_case("k=True", Raises(Option, r"k must be a positive integer, got True"), k=True),
    pass_case("k='2'", Raises(Option, r"k must be a positive integer, got '2'"), k="2"),
    pass_case("k=None", Raises(Option, r"k must be a positive integer, got None"), k=None),
    pass_case("k=nan", Raises(Option, r"k must be a positive integer, got nan"), k=nan),
    pass_case(
        "k huge",
        Raises(cs.EmptyDataError, r"no case has k=10{30} runs \(the most is 4\); lower k"),
        k=10**30,
    ),
    pass_case(
        "k above every case's runs, fewer_runs='drop'",
        Raises(cs.EmptyDataError, r"no case has k=5 runs \(the most is 4\)"),
        k=5,
        fewer_runs="drop",
    ),
    pass_case(
        "k as numpy integer",
        # the pass_at_k docstring's 0.6944: mean of 1 - C(4-c, 2)/C(4, 2) over the 24 cases
        Returns(expect_pass(PASS_AT_2, k=2, n_cases=24)),
        k=np.int64(2),
    ),
    pass_case(
        "fewer_runs typo",
        Raises(Option, r"fewer_runs must be one of \('raise', 'drop'\), got 'skip'"),
        fewer_runs="skip",
    ),
    pass_case("method typo", Raises(Option, r"method must be one of .*got 'cr4'"), method="cr4"),
    pass_case(
        "method of cluster_ci only (wilson) for pass@k",
        Raises(Option, r"method must be one of .*got 'wilson'"),
        method="wilson",
    ),
    pass_case(
        "confidence 95",
        Raises(Option, r"confidence must be strictly between 0 and 1 \(e.g. 0.95\), got 95"),
        confidence=95,
    ),
    pass_case(
        "rng of the wrong type",
        Raises(Option, r"rng must be None, a non-negative integer seed.*got 'x'"),
        method="bootstrap",
        rng="x",
    ),
    pass_case(
        "too few bootstrap replicates",
        Raises(Option, r"n_resamples=10 is too few for a 0.95 interval"),
        method="bootstrap",
        n_resamples=10,
    ),
    Case(
        "flakiness: method typo",
        lambda: {"data": runs()},
        lambda data: cs.flakiness(data, "y", method="boot"),
        Raises(Option, r"method must be one of .*got 'boot'"),
    ),
    Case(
        "flakiness: confidence 1",
        lambda: {"data": runs()},
        lambda data: cs.flakiness(data, "y", confidence=1.0),
        Raises(Option, r"confidence must be strictly between 0 and 1"),
    ),
]


# -- cases with fewer runs than k -----------------------------------------------------------


def _short_cases() -> pd.DataFrame:
    """``runs()`` plus three cases (100, 101, 102) with 2 runs each (1, 1 and 0 passes)."""
    extra = pd.DataFrame(
        {"case": [100, 100, 101, 101, 102, 102], "rerun": [0, 1] * 3, "y": [1, 0, 0, 1, 0, 0]}
    )
    return pd.concat([runs(), extra], ignore_index=True)


def _one_short_case() -> pd.DataFrame:
    return runs().drop(index=[0])  # case 0 keeps 3 runs


FEWER_RUNS_CASES = [
    pass_case(
        "fewer_runs='raise' with three short cases",
        Raises(
            Option,
            r"3 cases have fewer than k=4 runs \(e.g. \[100, 101, 102\], with \[2\] runs\); "
            r"pass fewer_runs='drop'",
        ),
        frame=_short_cases,
        k=4,
    ),
    pass_case(
        "fewer_runs='raise' with one short case",
        Raises(Option, r"1 case has fewer than k=4 runs \(e.g. \[0\], with \[3\] runs\)"),
        frame=_one_short_case,
        k=4,
    ),
    pass_case(
        "fewer_runs='drop' leaves the short cases out",
        # pass^4 of the 24 cases with 4 runs: C(c, 4)/C(4, 4) = 1 only for c = 4 (4 of 24);
        # binary per-case values, so "auto" is the binary rule: compare the estimate only
        Returns(
            has_note(
                "3 cases with fewer than 4 runs were left out",
                fields(estimate=pytest.approx(4 / 24, rel=1e-12), n_excluded=3, n_cases=24),
            )
        ),
        frame=_short_cases,
        k=4,
        fewer_runs="drop",
        function=cs.pass_hat_k,
    ),
    pass_case(
        "fewer_runs='drop' leaves one case",
        Raises(cs.EmptyDataError, r"pass@k needs at least two cases with k=4 runs; 'y' has 1"),
        frame=lambda: pd.concat(
            [runs(cases=1), runs(cases=3, n=2).assign(case=lambda d: d["case"] + 10)]
        ),
        k=4,
        fewer_runs="drop",
    ),
    pass_case(
        "pass@1 is the mean per-case pass rate",
        # pass@1 = 1 - (n - c)/n = c/n per case: c/4 averaged over cases, CR2 over 24 cases
        Returns(expect_pass(np.array(PASSES) / 4, n_cases=24, runs_min=4, runs_max=4)),
        k=1,
    ),
]


# -- the outcome ------------------------------------------------------------------------------


def _with(column_values) -> callable:
    return lambda: runs().assign(y=column_values(runs()["y"]))


def _first_missing(dtype):
    def build():
        frame = runs()
        y = frame["y"].astype(dtype)
        y.iloc[0] = pd.NA if dtype in ("Int64", "boolean") else nan
        return frame.assign(y=y)

    return build


# case 0 passes 1 of 4 runs (1, 0, 0, 0); its first run missing leaves 0 of 3 runs: pass@2
# of case 0 is then 1 - C(3, 2)/C(3, 2) = 0, the other cases as before
_MISSING_FIRST = closed_form([0, *PASSES[1:]], [3] + [4] * 23, 2)

OUTCOME_CASES = [
    pass_case(
        "scores in (0, 1)",
        Raises(
            cs.InvalidOutcomeError,
            r"pass@k needs a binary outcome \(0/1 per run\); 'y' has other values in 20 cases "
            r"\(e.g. \[0, 1, 3\]\)",
        ),
        frame=_with(lambda y: y * 0.5),
    ),
    pass_case(
        "one value of 2",
        Raises(
            cs.InvalidOutcomeError, r"pass\^k needs a binary outcome.* in 1 case \(e.g. \[5\]\)"
        ),
        frame=lambda: runs().assign(y=lambda d: d["y"].where(d.index != 20, 2)),
        function=cs.pass_hat_k,
    ),
    Case(
        "flakiness: scores",
        lambda: {"data": _with(lambda y: y * 2)()},
        lambda data: cs.flakiness(data, "y"),
        Raises(cs.InvalidOutcomeError, r"flakiness needs a binary outcome.*'y' has other values"),
    ),
    pass_case(
        "text outcome",
        Raises(cs.InvalidOutcomeError, r"outcome column 'y' has dtype .*not numeric"),
        frame=_with(lambda y: y.map({0: "fail", 1: "pass"})),
    ),
    pass_case(
        "infinite outcome in a frame",
        Raises(cs.InvalidOutcomeError, r"outcome column 'y' contains infinite values"),
        frame=_with(lambda y: y.astype(float).where(y.index != 3, inf)),
    ),
    pass_case(
        "boolean outcome",
        Returns(expect_pass(PASS_AT_2, n_cases=24)),  # True/False are 1/0: the 0.6944 above
        frame=_with(lambda y: y.astype(bool)),
    ),
    pass_case(
        "nullable Int64 outcome with a missing run",
        # the missing run counts as no run: case 0 has 0 of 3 runs
        Returns(expect_pass(_MISSING_FIRST, n_cases=24, runs_min=3)),
        frame=_first_missing("Int64"),
    ),
    pass_case(
        "nullable boolean outcome with a missing run",
        Returns(expect_pass(_MISSING_FIRST, runs_min=3)),
        frame=_first_missing("boolean"),
    ),
    pass_case(
        "a missing outcome is noted",
        # cluster_ci notes the rows it drops; the rerun statistics should say so too
        Returns(has_note("1 run with a missing outcome (in 1 case) was left out")),
        frame=_first_missing(float),
    ),
    pass_case(
        "a missing outcome makes a case short of k runs",
        Raises(
            Option,
            r"1 case has fewer than k=4 runs \(e.g. \[0\], with \[3\] runs; 1 of them lost "
            r"runs to missing outcomes\)",
        ),
        frame=_first_missing(float),
        k=4,
    ),
    Case(
        "flakiness: a missing outcome counts as no run",
        lambda: {"data": _first_missing(float)()},
        lambda data: cs.flakiness(data, "y"),
        # case 0 becomes 0 of 3 runs, not flaky: 15 flaky cases (c = 1, 2, 2, 3 in 4 blocks,
        # less case 0) of 24
        Returns(fields(n_flaky=15, n_cases=24, runs_min=3)),
    ),
]


# -- degenerate data: the right number with its warning ---------------------------------------


# One row per case: the default (the inverted Korn-Graubard interval) is the mid-p binomial
# interval on the 24 cases with weight 0.7 on the observed count (see
# docs/estimands-and-methods.md). With 0 of 24 the upper bound solves 0.7 (1 - mu)^24 = 0.025.
NO_SUCCESS_HIGH = 1 - (0.025 / 0.7) ** (1 / 24)


def _check_cp_upper_zero(result):
    # 0 of 24 flaky cases: upper bound 1 - (0.025 / 0.7)^(1/24); never zero-width
    assert result.flaky_rate == 0.0
    assert result.low == 0.0
    assert result.high == pytest.approx(NO_SUCCESS_HIGH, rel=1e-9)


def _check_temperature_zero(result):
    # every case's runs agree, cases differ: ICC 1, four runs are worth one
    _check_cp_upper_zero(result)
    assert result.icc == 1.0
    assert result.effective_runs == pytest.approx(1.0, rel=1e-12)


def _check_all_identical(result):
    # all 96 runs pass: no flaky case, and the ICC is 0/0 (undefined), so is the worth of a run
    _check_cp_upper_zero(result)
    assert math.isnan(result.icc)
    assert math.isnan(result.effective_runs)


def _check_all_flaky(result):
    # each case passes 1 of 2 runs: 24 of 24 flaky, lower bound 1 - NO_SUCCESS_HIGH; the
    # ANOVA ICC is at its minimum -1 and the effective runs 2 / (1 + 1 * max(-1, 0)) = 2
    assert result.flaky_rate == 1.0
    assert result.low == pytest.approx(1 - NO_SUCCESS_HIGH, rel=1e-9)
    assert result.high == 1.0
    assert result.icc == pytest.approx(-1.0, rel=1e-12)
    assert result.effective_runs == pytest.approx(2.0, rel=1e-12)


def _check_all_pass(result):
    # pass@2 = 1 in every case: 24 of 24, lower bound 1 - NO_SUCCESS_HIGH
    assert result.estimate == 1.0
    assert result.low == pytest.approx(1 - NO_SUCCESS_HIGH, rel=1e-9)
    assert result.high == 1.0


def _check_same_per_case(result):
    # each case passes 3 of 4: pass^2 = C(3, 2)/C(4, 2) = 0.5 in every case, zero variance:
    # Clopper-Pearson on 12 of 24 cases
    assert result.estimate == pytest.approx(0.5, rel=1e-12)
    assert result.low == pytest.approx(stats.beta.ppf(0.025, 12, 13), rel=1e-9)
    assert result.high == pytest.approx(stats.beta.ppf(0.975, 13, 12), rel=1e-9)


def _check_hat_k_equals_n(result):
    # pass^4 with 4 runs: 1 for the 4 cases with c = 4, else 0; binary values, so "auto" is
    # the binary rule, whose interval is cluster_ci's on those 24 per-case indicators
    indicators = pd.DataFrame({"v": (np.array(PASSES) == 4).astype(float), "g": range(24)})
    reference = cs.cluster_ci(indicators, "v", "g")
    assert result.estimate == pytest.approx(4 / 24, rel=1e-12)
    assert result.method == reference.method == "korn_graubard_hybrid"
    assert (result.low, result.high) == pytest.approx((reference.low, reference.high), rel=1e-12)


DEGENERATE_CASES = [
    Case(
        "flakiness: temperature 0 (runs agree within each case)",
        lambda: {"data": runs(y=np.repeat(np.arange(24) % 2, 4))},
        lambda data: cs.flakiness(data, "y"),
        Warns(
            cs.DegenerateDataWarning,
            r"the ICC has no interval: there is no within-cluster variation",
            _check_temperature_zero,
        ),
    ),
    Case(
        "flakiness: all runs identical",
        lambda: {"data": runs(y=1)},
        lambda data: cs.flakiness(data, "y"),
        Warns(cs.DegenerateDataWarning, r"the ICC is undefined", _check_all_identical),
    ),
    Case(
        "flakiness: every case flaky",
        lambda: {"data": runs(n=2, y=[0, 1] * 24)},
        lambda data: cs.flakiness(data, "y"),
        Warns(
            cs.DegenerateDataWarning,
            r"the ICC has no interval: every cluster has the same mean",
            _check_all_flaky,
        ),
    ),
    Case(
        "flakiness: one run per case",
        lambda: {"data": runs(n=1)},
        lambda data: cs.flakiness(data, "y"),
        Raises(
            cs.EmptyDataError,
            r"flakiness needs at least two cases with two or more runs; 'y' has 0",
        ),
    ),
    Case(
        "flakiness: some cases with one run",
        lambda: {"data": pd.concat([runs(), runs(cases=2, n=1).assign(case=[50, 51])])},
        lambda data: cs.flakiness(data, "y"),
        # 16 of the 24 cases with 4 runs are flaky (c = 1, 2, 2, 3 in each block of six)
        Returns(
            has_note(
                "2 cases with fewer than two runs were left out",
                fields(n_flaky=16, n_cases=24),
            )
        ),
    ),
    pass_case(
        # one row per case: the mid-p interval on 24 of 24 needs no ICC, so nothing to warn
        "every run passes",
        Returns(_check_all_pass),
        frame=lambda: runs(y=1),
    ),
    pass_case(
        "the same pass^2 in every case",
        Warns(
            cs.DegenerateDataWarning, r"every cluster has the same pass rate", _check_same_per_case
        ),
        frame=lambda: runs(y=[0, 1, 1, 1] * 24),
        function=cs.pass_hat_k,
    ),
    pass_case(
        # pass^k per case is a fraction, not a count of successes: the rate intervals that
        # need 0/1 rows are refused by name
        "pass^2 with the inverted rate interval",
        Raises(Option, r"method must be one of .*got 'korn_graubard_inverted'"),
        function=cs.pass_hat_k,
        method="korn_graubard_inverted",
    ),
    pass_case(
        "pass^k with k equal to the runs",
        Returns(_check_hat_k_equals_n),
        k=4,
        function=cs.pass_hat_k,
    ),
]


# -- the (case, rerun) Dataset ---------------------------------------------------------------


def ds_case(
    name, build, expect, k=2, function=cs.pass_at_k, marks=(), outcome="y", **options
) -> Case:
    call = (
        (lambda data: function(data, outcome, **options))
        if function is cs.flakiness
        else (lambda data: function(data, outcome, k=k, **options))
    )
    return Case(name, lambda: {"data": build()}, call, expect, marks=marks)


def _check_groups(result):
    # model "a" is the pattern (0.6944); "b" flips every run, c -> 4 - c
    assert result.groups == ("a", "b")
    expect_pass(PASS_AT_2)(result["a"])
    expect_pass(closed_form([4 - c for c in PASSES], 4, 2))(result["b"])


def _b_never_ran() -> xr.Dataset:
    ds = two_models()
    return ds.assign(y=ds["y"].where(ds["model"] != "b"))


def _b_lacks_case_3() -> xr.Dataset:
    ds = two_models()
    return ds.assign(y=ds["y"].where((ds["model"] != "b") | (ds["case"] != 3)))


def _check_b_without_case_3(result):
    # case 3 has no run for model b, so b has 23 cases; a keeps all 24
    assert (result["a"].n_cases, result["b"].n_cases) == (24, 23)
    flipped = [4 - c for i, c in enumerate(PASSES) if i != 3]
    expect_pass(closed_form(flipped, 4, 2))(result["b"])


def _with_user(labels) -> callable:
    return lambda: grid().assign_coords(user=("case", np.asarray(labels, dtype=object)))


def _with_ran() -> xr.Dataset:
    frame = runs().astype({"y": float})
    frame.loc[0, "y"] = nan
    return grid(frame)


def _inf_grid(value: float) -> xr.Dataset:
    ds = grid(runs().astype({"y": float}))
    return ds.assign(y=ds["y"].where(ds["case"] != 5, value))


DATASET_CASES = [
    ds_case(
        "no rerun dim",
        lambda: grid().isel(rerun=0),
        Raises(cs.DimensionError, r"variable 'y' has dims \('case',\) but no rerun dim 'rerun'"),
        k=1,
    ),
    ds_case(
        "no case dim",
        lambda: grid().isel(case=0),
        Raises(cs.DimensionError, r"variable 'y' has dims \('rerun',\) but no case dim 'case'"),
        k=1,
    ),
    ds_case(
        "dims renamed, not named in the call",
        lambda: grid().rename(case="task", rerun="trial"),
        Raises(cs.DimensionError, r"dims \('task', 'trial'\) but no case dim 'case'; name it"),
    ),
    ds_case(
        "dims renamed and named",
        lambda: grid().rename(case="task", rerun="trial"),
        Returns(expect_pass(PASS_AT_2)),
        case="task",
        rerun="trial",
    ),
    ds_case(
        "dims in the other order",
        lambda: grid().transpose("rerun", "case"),
        Returns(expect_pass(PASS_AT_2)),
    ),
    ds_case(
        "extra dim model, dims in another order",
        lambda: two_models().transpose("case", "rerun", "model"),
        Returns(_check_groups),
    ),
    ds_case(
        "a model that never ran",
        _b_never_ran,
        Raises(cs.EmptyDataError, r"no case has a run of 'y' for model='b'"),
    ),
    ds_case(
        "flakiness: a model that never ran",
        _b_never_ran,
        Raises(cs.EmptyDataError, r"flakiness needs at least two cases .*'y' has 0 for model='b'"),
        function=cs.flakiness,
    ),
    ds_case(
        "a case that never ran for one model",
        _b_lacks_case_3,
        Returns(_check_b_without_case_3),
    ),
    ds_case(
        "fewer_runs='raise' names the model",
        lambda: two_models().assign(
            y=lambda d: d["y"].where(~((d["model"] == "b") & (d["case"] == 7) & (d["rerun"] == 0)))
        ),
        Raises(Option, r"1 case has fewer than k=4 runs for model='b' \(e.g. \[7\]"),
        k=4,
    ),
    ds_case(
        "an empty model dim",
        lambda: two_models().isel(model=slice(0, 0)),
        Raises(cs.EmptyDataError, r"the 'model' dim of 'y' is empty"),
    ),
    ds_case(
        "no case at all",
        lambda: grid().isel(case=slice(0, 0)),
        Raises(cs.EmptyDataError, r"the case dim 'case' of 'y' is empty"),
    ),
    ds_case(
        "no rerun at all",
        lambda: grid().isel(rerun=slice(0, 0)),
        Raises(cs.EmptyDataError, r"'rerun'"),
    ),
    ds_case(
        "infinite values",
        lambda: _inf_grid(inf),
        Raises(cs.InvalidOutcomeError, r"outcome 'y' has infinite values in 1 case \(e.g. \[5\]\)"),
    ),
    ds_case(
        "flakiness: minus infinity",
        lambda: _inf_grid(-inf),
        Raises(cs.InvalidOutcomeError, r"outcome 'y' has infinite values in 1 case"),
        function=cs.flakiness,
    ),
    ds_case(
        "nearly binary values",
        lambda: grid().assign(y=lambda d: d["y"] + 1e-12),
        Raises(cs.InvalidOutcomeError, r"pass@k needs a binary outcome.*in 24 cases"),
    ),
    ds_case(
        "dates as the outcome",
        lambda: grid().assign(y=(("case", "rerun"), np.full((24, 4), np.datetime64("2024-01-01")))),
        Raises(cs.InvalidOutcomeError, r"outcome 'y' has dtype datetime64"),
    ),
    ds_case(
        "a variable that is not there",
        grid,
        Raises(cs.ColumnNotFoundError, r"column 'passed' not found; available columns: 'y'"),
        outcome="passed",
    ),
    ds_case(
        "by along rerun",
        grid,
        Raises(cs.DimensionError, r"by='rerun' must be a coordinate along the case dim 'case'"),
        by="rerun",
    ),
    ds_case(
        "by along (case, rerun)",
        lambda: grid().assign_coords(user=(("case", "rerun"), np.zeros((24, 4)))),
        Raises(cs.DimensionError, r"by='user' .* it has dims \('case', 'rerun'\)"),
        by="user",
    ),
    ds_case(
        "by with missing labels",
        _with_user(["u1", None, "u2", np.nan] + [f"u{i % 6}" for i in range(20)]),
        Raises(cs.InvalidClusterError, r"'user' has 2 missing cluster ids along 'case'"),
        by="user",
    ),
    ds_case(
        "by with one cluster",
        _with_user(["u1"] * 24),
        Raises(
            cs.TooFewClustersError,
            r"the 24 cases with k=2 runs all fall in one cluster of by='user'",
        ),
        by="user",
    ),
    ds_case(
        "flakiness: by with one cluster",
        _with_user(["u1"] * 24),
        Raises(cs.TooFewClustersError, r"cases with two or more runs all fall in one cluster of "),
        function=cs.flakiness,
        by="user",
    ),
    ds_case(
        "by not in the Dataset",
        grid,
        Raises(cs.ColumnNotFoundError, r"column 'user' not found"),
        by="user",
    ),
    ds_case(
        "over= on a Dataset",
        grid,
        Raises(Option, r"over= is for DataFrames; a Dataset's extra dims are used"),
        over="model",
    ),
    ds_case(
        "rerun=None on a Dataset",
        grid,
        Raises(Option, r"rerun=None \(number the runs\) is for DataFrames; name the rerun dim"),
        rerun=None,
    ),
    ds_case(
        "case and rerun the same dim",
        grid,
        Raises(Option, r"case= and rerun= both name 'rerun'"),
        case="rerun",
    ),
    ds_case(
        "chunked with dask",
        lambda: grid().chunk({"case": 5, "rerun": 3}),
        Returns(expect_pass(PASS_AT_2)),  # the eager numbers: 0.6944 and its CR2 interval
    ),
    ds_case(
        "chunked with dask, infinite values",
        lambda: _inf_grid(inf).chunk({"case": 5}),
        Raises(cs.InvalidOutcomeError, r"outcome 'y' has infinite values in 1 case"),
    ),
    ds_case(
        "a ran variable: a missing outcome counts as no run",
        _with_ran,
        Returns(expect_pass(_MISSING_FIRST, runs_min=3)),  # as the frame with the NaN row
    ),
    ds_case(
        "the ran variable named by the outcome is gone",
        lambda: _with_ran().drop_vars("ran"),
        Raises(cs.ColumnNotFoundError, r"column 'ran' not found"),
    ),
    ds_case(
        "the same case label twice",
        # 12 labels, each twice: they were merged silently into 12 clusters of 2 "cases"
        lambda: xr.concat([grid().isel(case=slice(0, 12))] * 2, dim="case"),
        Raises(cs.AlignmentError, r"'case'"),
    ),
    ds_case(
        "the outcome is a coordinate",
        lambda: grid().set_coords("y"),
        Raises(cs.InvalidOptionError, r"'y' is a coordinate of the Dataset, not a data variable"),
    ),
    ds_case(
        "a ran variable with a dim the outcome lacks",
        lambda: _with_ran().assign(ran=("x", [True, False])),
        Raises(cs.DimensionError, r"'ran'"),
    ),
]


# -- data, names and roles ------------------------------------------------------------------


def _two_groups(drop_case: int | None = None) -> pd.DataFrame:
    a = runs().assign(model="a")
    b = runs().assign(model="b", y=lambda d: 1 - d["y"])
    if drop_case is not None:
        b = b[b["case"] != drop_case]
    return pd.concat([a, b], ignore_index=True)


def _check_over_without_case(result):
    # case 0 has no row for model b: b has 23 cases, each flipped (c -> 4 - c)
    assert result.groups == ("a", "b")
    assert (result["a"].n_cases, result["b"].n_cases) == (24, 23)
    expect_pass(closed_form([4 - c for c in PASSES[1:]], 4, 2))(result["b"])


def _int_labels() -> pd.DataFrame:
    return runs().rename(columns={"case": 0, "rerun": 1, "y": 2})


def _mixed_case_labels() -> pd.DataFrame:
    frame = runs()
    labels = (
        frame["case"].astype(object).where(frame["case"] >= 12, "t" + frame["case"].astype(str))
    )
    return frame.assign(case=labels)


FRAME_CASES = [
    pass_case(
        "a duplicated (case, rerun) row",
        Raises(
            cs.AlignmentError,
            r"1 \(case, rerun\) combinations have more than one row \(e.g. \[\(0, 0\)\], in "
            r"columns 'case', 'rerun'\)",
        ),
        frame=lambda: pd.concat([runs(), runs().iloc[:1]], ignore_index=True),
    ),
    pass_case(
        "a missing case id",
        Raises(cs.AlignmentError, r"the case column 'case' has 1 missing id \(e.g. at index 4\)"),
        frame=lambda: runs().assign(case=lambda d: d["case"].where(d.index != 4)),
    ),
    pass_case(
        "a missing rerun id",
        Raises(cs.AlignmentError, r"the rerun column 'rerun' has 2 missing ids"),
        frame=lambda: runs().assign(rerun=lambda d: d["rerun"].where(d.index > 1)),
    ),
    pass_case(
        "a missing over= label",
        Raises(cs.AlignmentError, r"a dims column 'model' has 1 missing id"),
        frame=lambda: _two_groups().assign(model=lambda d: d["model"].where(d.index != 9)),
        over="model",
    ),
    pass_case(
        "over= is the case column",
        Raises(Option, r"column 'case' is both a dim \(dims= or over=\) and case="),
        over="case",
    ),
    pass_case(
        "over= is the outcome",
        Raises(Option, r"column 'y' is both the outcome and over="),
        over="y",
    ),
    pass_case(
        # a list names several columns (one result per combination); one column is over=model
        "over= a list of one column",
        Returns(_check_groups),
        frame=_two_groups,
        over=["model"],
    ),
    pass_case(
        "over= a list with an unhashable entry",
        Raises(cs.InvalidInputError, r"over= takes one variable or column label, not a list"),
        frame=_two_groups,
        over=[["model"]],
    ),
    pass_case(
        "over= a case missing from one group",
        Returns(_check_over_without_case),
        frame=lambda: _two_groups(drop_case=0),
        over="model",
    ),
    Case(
        "the outcome is the rerun column",
        lambda: {"data": runs()},
        lambda data: cs.pass_at_k(data, "rerun", k=1),
        Raises(Option, r"column 'rerun' is both the outcome and rerun="),
    ),
    pass_case(
        "case and rerun the same column",
        Raises(Option, r"case= and rerun= both name 'case'"),
        rerun="case",
    ),
    Case(
        "outcome given as a list",
        lambda: {"data": runs()},
        lambda data: cs.pass_at_k(data, ["y"], k=2),
        Raises(cs.InvalidInputError, r"outcome= takes one variable or column label, not a list"),
    ),
    Case(
        "outcome given as a Series",
        lambda: {"data": runs()},
        lambda data: cs.pass_hat_k(data, data["y"], k=2),
        Raises(cs.InvalidInputError, r"outcome= takes one .*not a Series \(pass its name, 'y'\)"),
    ),
    Case(
        "integer column labels",
        lambda: {"data": _int_labels()},
        lambda data: cs.pass_at_k(data, 2, k=2, case=0, rerun=1),
        Returns(expect_pass(PASS_AT_2)),  # the labels are kept: variable 2, not "2"
    ),
    pass_case(
        "rerun= an integer label that is not a column",
        Raises(cs.ColumnNotFoundError, r"column 0 not found"),
        rerun=0,
    ),
    pass_case(
        "case labels of mixed types",
        # the same 24 values, in the cases' sorted label order (12..23, then "t0", "t1",
        # "t10", "t11", "t2", ...), the order in which the bootstrap draws them
        Returns(expect_pass(PASS_AT_2[np.r_[12:24, sorted(range(12), key=lambda i: f"t{i}")]])),
        frame=_mixed_case_labels,
    ),
    pass_case(
        "by varies within a case",
        # today: "column 'u' not found", though the frame has it
        Raises(cs.AlignmentError, r"'u'"),
        frame=lambda: runs().assign(u=lambda d: d.index % 3),
        by="u",
    ),
    pass_case(
        "an empty frame",
        Raises(cs.EmptyDataError, r"the frame has no rows"),
        frame=lambda: runs().iloc[:0],
    ),
    pass_case(
        "data is None",
        Raises(cs.InvalidInputError, r"the rerun statistics need a DataFrame or a \(case, rerun\)"),
        frame=lambda: None,
    ),
    pass_case(
        "data is an array",
        Raises(cs.InvalidInputError, r"got ndarray"),
        frame=lambda: runs().to_numpy(),
    ),
    pass_case(
        "data is a DataArray",
        Raises(cs.InvalidInputError, r"got DataArray"),
        frame=lambda: grid()["y"],
    ),
]


# -- to_case_rerun ------------------------------------------------------------------------------


def layout_case(name, expect, frame=runs, **options) -> Case:
    arguments = {"case": "case", "rerun": "rerun", "outcome": "y", **options}
    return Case(
        name, lambda: {"data": frame()}, lambda data: cs.to_case_rerun(data, **arguments), expect
    )


def holds(predicate):
    def check(result):
        assert predicate(result), result

    return check


def _with_tags() -> pd.DataFrame:
    return runs().assign(tags=[["a"]] * 96, user=lambda d: "u" + (d["case"] // 4).astype(str))


TO_CASE_RERUN_CASES = [
    layout_case(
        "not a frame",
        Raises(cs.InvalidInputError, r"data must be a pandas DataFrame, got dict"),
        frame=lambda: runs().to_dict(),
    ),
    layout_case(
        "no outcome",
        Raises(Option, r"outcome= needs at least one column label, got \[\]"),
        outcome=[],
    ),
    Case(
        "case given as a Series",
        lambda: {"data": runs()},
        lambda data: cs.to_case_rerun(data, case=data["case"], rerun="rerun", outcome="y"),
        Raises(cs.InvalidInputError, r"case= takes column labels, not a Series \(pass its name"),
    ),
    Case(
        "rerun given as a Series",
        lambda: {"data": runs()},
        lambda data: cs.to_case_rerun(data, case="case", rerun=data["rerun"], outcome="y"),
        Raises(cs.InvalidInputError, r"rerun= takes column labels, not a Series"),
    ),
    layout_case(
        "dims as one label",
        Returns(holds(lambda ds: ds["y"].dims == ("model", "case", "rerun"))),
        frame=lambda: runs().assign(model="m"),
        dims="model",
    ),
    layout_case(
        "the same dim twice",
        Raises(Option, r"dims= names column 'model' twice"),
        frame=lambda: runs().assign(model="m"),
        dims=["model", "model"],
    ),
    layout_case(
        "a dims column named rerun",
        Raises(Option, r"column 'rerun' \(dims= or over=\) would become a dim named 'rerun'"),
        frame=lambda: runs().rename(columns={"rerun": "trial"}).assign(rerun="x"),
        rerun="trial",
        dims=["rerun"],
    ),
    layout_case(
        "an outcome column named case",
        Raises(Option, r"outcome column 'case' has the name of a dim of the Dataset to build"),
        frame=lambda: runs().rename(columns={"case": "task", "y": "case"}),
        case="task",
        outcome="case",
    ),
    layout_case(
        "coords as one label",
        Returns(holds(lambda ds: list(ds["user"].dims) == ["case"] and "tags" not in ds.coords)),
        frame=_with_tags,
        coords="user",
    ),
    layout_case(
        "coords=None",
        Raises(Option, r"coords= takes 'auto' or a list of column labels, got None"),
        coords=None,
    ),
    layout_case(
        "a listed coordinate that varies within a case",
        Raises(cs.AlignmentError, r"coordinates must be constant within each case; \['u'\] vary"),
        frame=lambda: runs().assign(u=lambda d: d.index),
        coords=["u"],
    ),
    layout_case(
        "a coordinate named like the outcome",
        Raises(Option, r"coordinate 'y' \(coords=\) has the name of a dim or variable"),
        coords=["y"],
    ),
    layout_case(
        "a column of lists with coords='auto'",
        Returns(holds(lambda ds: "tags" not in ds.coords and ds["user"].dims == ("case",))),
        frame=_with_tags,
    ),
    layout_case(
        "a column of lists listed in coords",
        Raises(cs.InvalidDataError, r"coordinate column 'tags' \(coords=\) holds values"),
        frame=_with_tags,
        coords=["tags"],
    ),
    layout_case(
        "case ids that are lists",
        Raises(cs.InvalidDataError, r"the case column 'case' holds values that cannot be labels"),
        frame=lambda: runs().assign(case=lambda d: [[c] for c in d["case"]]),
    ),
    layout_case(
        "rerun labels not shared across cases",
        Raises(cs.AlignmentError, r"the rerun labels of 'rerun' are not shared.*rerun=None"),
        frame=lambda: runs(cases=600).assign(rerun=np.arange(2400)),
    ),
    layout_case(
        "a column named ran is kept",
        # a missing outcome adds the ran flags, named ran_1 because 'ran' is taken
        Returns(holds(lambda ds: ds["y"].attrs["ran"] == "ran_1" and int(ds["ran_1"].sum()) == 96)),
        frame=lambda: _first_missing(float)().assign(ran="yes"),
    ),
    layout_case(
        "nullable Int64 outcome",
        Returns(
            holds(
                lambda ds: (
                    ds["y"].dtype == np.float64
                    and int(ds["y"].isnull().sum()) == 1
                    and bool(ds["ran"].all())
                )
            )
        ),
        frame=_first_missing("Int64"),
    ),
    layout_case(
        "integer labels name the variable",
        Returns(holds(lambda ds: list(ds.data_vars) == [2])),
        frame=_int_labels,
        case=0,
        rerun=1,
        outcome=2,
    ),
]


# -- simulate ---------------------------------------------------------------------------------


def sim_case(name, expect, **changes) -> Case:
    options = {"n_clusters": 30, "cluster_size": 10, "mean": 0.5, "icc": 0.1, "seed": 0}
    options.update(changes)
    return Case(name, lambda: {}, lambda: cs.simulate(**options), expect)


def _check_reproducible(frame):
    # a list seed is a seed: the same as numpy's default_rng([1, 2])
    same = cs.simulate(30, 10, mean=0.5, icc=0.1, seed=np.random.default_rng([1, 2]))
    pd.testing.assert_frame_equal(frame, same)


def _check_padding(ds):
    # the Dataset holds the long layout's rows, NaN where a case has fewer reruns
    long = cs.simulate(5, 4, mean=0.5, icc=0.2, size_cv=0.8, seed=2)
    assert int(ds["y"].notnull().sum()) == len(long)
    assert float(ds["y"].sum()) == pytest.approx(float(long["y"].sum()), rel=0, abs=0)


SIMULATE_CASES = [
    sim_case("icc below 0", Raises(Option, r"icc must be in \[0, 1\), got -0.1"), icc=-0.1),
    sim_case("icc of 1", Raises(Option, r"icc must be in \[0, 1\), got 1"), icc=1),
    sim_case("icc NaN", Raises(Option, r"icc must be a number, got nan"), icc=nan),
    sim_case("icc as text", Raises(Option, r"icc must be a number, got '0.1'"), icc="0.1"),
    sim_case("icc None", Raises(Option, r"icc must be a number, got None"), icc=None),
    sim_case(
        "binary mean of 0",
        Raises(Option, r"a binary mean must be strictly between 0 and 1, got 0"),
        mean=0,
    ),
    sim_case(
        "binary mean above 1",
        Raises(Option, r"a binary mean must be strictly between 0 and 1, got 1.5"),
        mean=1.5,
    ),
    sim_case(
        "continuous mean NaN",
        Raises(Option, r"mean must be a number, got nan"),
        mean=nan,
        outcome="continuous",
    ),
    sim_case(
        "continuous mean infinite",
        Raises(Option, r"mean must be finite, got inf"),
        mean=inf,
        outcome="continuous",
    ),
    sim_case(
        "mean True",
        Raises(Option, r"mean must be a number, got True"),
        mean=True,
        outcome="continuous",
    ),
    sim_case(
        "no clusters",
        Raises(Option, r"n_clusters must be a whole number, at least 1, got 0"),
        n_clusters=0,
    ),
    sim_case(
        "fractional clusters", Raises(Option, r"n_clusters must be a whole number"), n_clusters=2.5
    ),
    sim_case(
        "clusters True", Raises(Option, r"n_clusters must be a number, got True"), n_clusters=True
    ),
    sim_case(
        "clusters None", Raises(Option, r"n_clusters must be a number, got None"), n_clusters=None
    ),
    sim_case("infinite clusters", Raises(Option, r"n_clusters must be finite"), n_clusters=inf),
    sim_case(
        "too many rows",
        Raises(Option, r"n_clusters \* cluster_size = 1e\+21 rows is more than 1e\+10"),
        n_clusters=10**20,
    ),
    sim_case(
        "one cluster",
        # a single cluster is data (of 10 rows), though no interval can be computed from it
        Returns(holds(lambda f: f.shape == (10, 3) and set(f["cluster"]) == {0})),
        n_clusters=1,
    ),
    sim_case(
        "clusters as a whole float",
        Returns(holds(lambda f: f.shape == (30, 3) and f["cluster"].nunique() == 3)),
        n_clusters=3.0,
    ),
    sim_case(
        "cluster_size 0", Raises(Option, r"cluster_size must be at least 1, got 0"), cluster_size=0
    ),
    sim_case(
        "cluster_size infinite", Raises(Option, r"cluster_size must be finite"), cluster_size=inf
    ),
    sim_case(
        "cluster_size as text",
        Raises(Option, r"cluster_size must be a number, got '10'"),
        cluster_size="10",
    ),
    sim_case(
        "fractional cluster_size with equal sizes",
        Raises(Option, r"with size_cv=0 every cluster has cluster_size rows: give an integer"),
        cluster_size=2.5,
    ),
    sim_case(
        "negative size_cv", Raises(Option, r"size_cv must be at least 0, got -0.5"), size_cv=-0.5
    ),
    sim_case("infinite size_cv", Raises(Option, r"size_cv must be finite"), size_cv=inf),
    sim_case("size_cv None", Raises(Option, r"size_cv must be a number, got None"), size_cv=None),
    sim_case(
        "size_cv too small for the negative binomial",
        Raises(Option, r"size_cv=0.1 is too small for sizes of mean 10"),
        size_cv=0.1,
    ),
    sim_case(
        "layout typo",
        Raises(Option, r"layout must be 'long' or 'case_rerun', got 'case-rerun'"),
        layout="case-rerun",
    ),
    sim_case(
        "outcome typo",
        Raises(Option, r"outcome must be 'binary' or 'continuous', got 'Binary'"),
        outcome="Binary",
    ),
    sim_case(
        "size_difficulty as text",
        Raises(Option, r"size_difficulty must be True or False, got 'yes'"),
        size_difficulty="yes",
    ),
    sim_case(
        "size_difficulty for a continuous outcome",
        Raises(Option, r"size_difficulty is defined for binary outcomes"),
        size_difficulty=True,
        outcome="continuous",
    ),
    sim_case(
        "negative seed", Raises(Option, r"seed must be None, a non-negative integer.*-1"), seed=-1
    ),
    sim_case("fractional seed", Raises(Option, r"seed must be None.*got 1.5"), seed=1.5),
    sim_case("text seed", Raises(Option, r"seed must be None.*got 'abc'"), seed="abc"),
    sim_case("seed True", Raises(Option, r"seed must be None.*got True"), seed=True),
    sim_case("a list seed", Returns(_check_reproducible), seed=[1, 2]),
    Case(
        "case_rerun layout with unequal sizes",
        lambda: {},
        lambda: cs.simulate(5, 4, mean=0.5, icc=0.2, size_cv=0.8, layout="case_rerun", seed=2),
        Returns(_check_padding),
    ),
]


# -- the bundled datasets ---------------------------------------------------------------------


def _check_fresh_copy(frame):
    # load returns a new frame: changing one does not change the next
    first = int(frame.loc[0, "reward"])
    frame.loc[0, "reward"] = 99
    assert int(cs.datasets.load("tau_bench_airline").loc[0, "reward"]) == first
    assert len(frame) == cs.datasets.info("tau_bench_airline").n_rows == 200


DATASETS_CASES = [
    Case(
        "datasets.load: a typo",
        lambda: {},
        lambda: cs.datasets.load("mmlu"),
        Raises(
            Option, r"no bundled dataset 'mmlu'; the datasets are bbh, .*did you mean 'mmlu_pro'"
        ),
    ),
    Case(
        "datasets.load: upper case",
        lambda: {},
        lambda: cs.datasets.load("BBH"),
        Raises(Option, r"no bundled dataset 'BBH'.*did you mean 'bbh'"),
    ),
    Case(
        "datasets.load: a file name",
        lambda: {},
        lambda: cs.datasets.load("bbh.csv.xz"),
        Raises(Option, r"no bundled dataset 'bbh.csv.xz'; the datasets are"),
    ),
    Case(
        "datasets.info: unknown",
        lambda: {},
        lambda: cs.datasets.info("imagenet"),
        Raises(Option, r"no bundled dataset 'imagenet'; the datasets are bbh, cruxeval"),
    ),
    Case(
        "datasets.load: None",
        lambda: {},
        lambda: cs.datasets.load(None),
        Raises(
            cs.InvalidInputError, r"name must be the name of a bundled dataset \(a str\), got None"
        ),
    ),
    Case(
        "datasets.load: a list",
        lambda: {},
        lambda: cs.datasets.load(["bbh"]),
        Raises(cs.InvalidInputError, r"got \['bbh'\] \(of type list\)"),
    ),
    Case(
        "datasets.info: bytes",
        lambda: {},
        lambda: cs.datasets.info(b"bbh"),
        Raises(cs.InvalidInputError, r"got b'bbh' \(of type bytes\)"),
    ),
    Case(
        "datasets.load: a new frame each time",
        lambda: {},
        lambda: cs.datasets.load("tau_bench_airline"),
        Returns(_check_fresh_copy),
    ),
    Case(
        "load_demo_data: the documented slice",
        lambda: {},
        cs.load_demo_data,
        Returns(holds(lambda f: f.shape == (48128, 5) and f["src"].nunique() == 91)),
    ),
]


CASES = (
    OPTION_CASES
    + FEWER_RUNS_CASES
    + OUTCOME_CASES
    + DEGENERATE_CASES
    + DATASET_CASES
    + FRAME_CASES
    + TO_CASE_RERUN_CASES
    + SIMULATE_CASES
    + DATASETS_CASES
)


@pytest.mark.parametrize("case", params(CASES))
def test_hostile(case):
    run(case)


def test_catalogue_size():
    assert len(CASES) >= 100
