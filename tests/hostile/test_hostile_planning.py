"""Hostile input for planning: ``plan``, ``pilot_plan`` and the formula helpers (issue 15).

Each case states the exact error and a message naming the offending option, or the right
number. Sources of the expected numbers are in the comments: closed forms (the Cauchy
quantile ``t_{1, 0.975} = tan(0.475 π)``, Wilson's formula, the rule of three
``1 − α^{1/n}``), hand computation, or scipy's t and normal quantiles.
"""

from __future__ import annotations

import math
import warnings

import numpy as np
import pandas as pd
import pytest
from hostile import Case, Raises, Returns, Warns, params, run
from scipy import stats

import clusterstats as cs

nan, inf = math.nan, math.inf
Option = cs.InvalidOptionError

#: A valid plan: 30 clusters of 10 rows, ρ = 0.1, a pass rate of 0.5.
BASE = {"n_clusters": 30, "cluster_size": 10, "icc": 0.1, "proportion": 0.5}
PAIRED = {"difference_variance": 0.2, "difference_icc": 0.1}


DROP = object()  # an option left out


def planned(**changes):
    """``plan`` on ``BASE`` with some options changed (``DROP`` leaves one out)."""
    options = {**BASE, **changes}
    return cs.plan(**{k: v for k, v in options.items() if v is not DROP})


def raises(name: str, match: str, error: type[BaseException] = Option, **changes) -> Case:
    return Case(name, lambda: {}, lambda: planned(**changes), Raises(error, match))


def t_half_width(k: float, m: float, icc: float, sigma2: float) -> float:
    """``t_{K−1, 0.975} sqrt(σ² (1 + (m − 1) ρ) / (K m))`` with scipy's t quantile."""
    return stats.t.ppf(0.975, k - 1) * math.sqrt(sigma2 * (1 + (m - 1) * icc) / (k * m))


def wilson_closed_form(successes: float, n: float) -> tuple[float, float]:
    """Wilson (1927): ``(p + z²/2n ± z sqrt(p(1−p)/n + z²/4n²)) / (1 + z²/n)``."""
    z = stats.norm.ppf(0.975)
    p = successes / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return centre - half, centre + half


def pilot(
    y=None, *, clusters: int = 10, size: int = 5, seed: int = 0, rate: float = 0.6
) -> pd.DataFrame:
    """A binary pilot of ``clusters`` clusters of ``size`` rows, passing at ``rate``."""
    rng = np.random.default_rng(seed)
    n = clusters * size
    if y is None:
        y = (rng.random(n) < rate).astype(float)
    return pd.DataFrame(
        {"y": np.asarray(y, dtype=float), "c": np.repeat(np.arange(clusters), size)}
    )


def pilot_case(name, expect, frame=None, **options) -> Case:
    build = (lambda: {"data": pilot()}) if frame is None else (lambda: {"data": frame()})
    return Case(name, build, lambda data: cs.pilot_plan(data, "y", "c", **options), expect)


def _check_two_clusters(p):
    # the smallest design: t_{1, 0.975} = tan(0.475 π) (Cauchy), σ² = 0.25, deff = 1.9
    # (1e-10: scipy 1.11's t quantile at one df is 2e-11 from the closed form)
    expected = math.tan(0.475 * math.pi) * math.sqrt(0.25 * 1.9 / 20)
    assert p.half_width == pytest.approx(expected, rel=1e-10)
    assert p.n_clusters == 2


def _check_icc_zero(p):
    # ρ = 0: no ceiling (K/ρ), no bounded cost-optimal depth, n_eff = K m = 300
    assert p.n_eff_ceiling == inf
    assert p.optimal_cluster_size == inf
    assert [o[0] for o in p.options] == ["current", "double the depth", "double the clusters"]
    assert p.n_eff == pytest.approx(300, rel=1e-12)
    assert any("unbounded" in note for note in p.notes)


def _check_icc_one(p):
    # ρ = 1: every cluster counts once, however deep: n_eff = K = 30, deff = m = 10
    options = {o[0]: o for o in p.options}
    assert options["current"][4] == pytest.approx(30, rel=1e-12)
    assert options["double the depth"][4] == pytest.approx(30, rel=1e-12)
    assert p.design_effect == pytest.approx(10, rel=1e-12)


def _check_m_star_below_one(p):
    # m* = sqrt(c1/c2 (1 − ρ)/ρ) = sqrt(0.1) < 1; same budget 30 (1 + 10·10) = 3030 spent on
    # clusters of 1 row: 3030 / (1 + 10) clusters
    assert p.optimal_cluster_size == pytest.approx(math.sqrt(0.1), rel=1e-12)
    name, k, m, *_ = p.options[-1]
    assert name == "cost-optimal depth, same cost"
    assert (k, m) == (pytest.approx(3030 / 11, rel=1e-12), 1.0)
    assert any("below 1 row per cluster" in note for note in p.notes)


def _check_too_few_clusters_at_same_cost(p):
    # K = 2, m = 1, ρ = 0.01, c1 = 100, c2 = 1: m* = sqrt(100 · 99) = 99.5 and the budget
    # 2 (100 + 1) = 202 buys 202 / (100 + 99.5) = 1.01 clusters: not a design
    assert p.optimal_cluster_size == pytest.approx(math.sqrt(9900), rel=1e-12)
    assert len(p.options) == 3
    assert any("fewer than 2" in note for note in p.notes)


def _check_target_met_by_two(p):
    # at K = 2 the half-width is tan(0.475 π) sqrt(0.25 · 1.9 / 20) = 1.958 <= 2
    assert p.clusters_needed == 2.0
    assert any("minimum of 2 clusters" in note for note in p.notes)


def _check_wide_target(p):
    # ±0.3 needs K with t_{K−1} sqrt(0.25 · 1.9 / (10 K)) = 0.3: 4.528 (scipy's t); the
    # former fixed-point iteration stopped at 2.13, where the half-width is 1.44
    assert t_half_width(p.clusters_needed, 10, 0.1, 0.25) == pytest.approx(0.3, rel=1e-9)
    assert p.clusters_needed == pytest.approx(4.528284342671, rel=1e-9)


def _check_negative_effect(p):
    # (z_{0.975} + z_{0.8})² σ²_d (1 + (m − 1) ρ_d) / (m δ²) with δ = |−0.05|
    z = stats.norm.ppf(0.975) + stats.norm.ppf(0.8)
    assert p.clusters_for_power == pytest.approx(z * z * 0.2 * 1.9 / (10 * 0.05**2), rel=1e-12)


def _check_numpy_numbers(p):
    assert p.half_width == pytest.approx(planned().half_width, rel=0, abs=0)


def _pilot_interval(data):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", cs.ClusterStatsWarning)
        return cs.cluster_ci(data, "y", by="c")


def _check_negative_pilot_icc(p):
    # seed 0: ANOVA ICC −0.022 is shown as 0; the current row is the pilot's own interval,
    # whose few-clusters warning becomes a note of the plan
    ci = _pilot_interval(pilot(clusters=12, size=5, seed=0, rate=0.5))
    assert p.icc == 0.0
    assert p.half_width == pytest.approx((ci.high - ci.low) / 2, rel=1e-12)
    assert p.design_effect == pytest.approx(ci.design_effect, rel=1e-12)
    assert p.icc_low == 0.0
    assert any("negative" in note for note in p.notes)
    assert any("only 12 clusters" in note for note in p.notes)


def _check_between_only_pilot(p):
    # each cluster constant: ICC 1, no interval (so no range); the design effect is the
    # interval's: the CR2 variance 10 * 2.5^2 / 0.9 / 50^2 over s^2 / N = 0.25 * 50/49 / 50,
    # which is 49 / 9, so n_eff = 50 * 9 / 49
    assert p.icc == 1.0
    assert math.isnan(p.icc_low)
    assert p.n_eff == pytest.approx(450 / 49, rel=1e-12)
    assert p.n_eff == pytest.approx(_pilot_interval(_all_same_in_clusters()).n_eff, rel=1e-12)
    assert any("no interval" in note for note in p.notes)


def _check_two_cluster_pilot(p):
    ci = _pilot_interval(pilot(clusters=2, size=20, seed=1))
    assert p.n_clusters == 2
    assert p.half_width == pytest.approx((ci.high - ci.low) / 2, rel=1e-12)


def holds(predicate):
    """A ``check`` that asserts ``predicate(result)``, showing the result if it fails."""

    def check(result):
        assert predicate(result), result

    return check


def _interval_close(expected, rel=1e-12):
    def check(result):
        assert result == pytest.approx(expected, rel=rel)

    return check


def _all_same_in_clusters() -> pd.DataFrame:
    return pilot(np.repeat(np.arange(10) % 2, 5))


PLAN_CASES = [
    # -- the design ---------------------------------------------------------------------------
    raises(
        "plan: one cluster", r"n_clusters must be a whole number, at least 2, got 1", n_clusters=1
    ),
    raises("plan: zero clusters", r"n_clusters must be .*at least 2, got 0", n_clusters=0),
    raises(
        "plan: fractional clusters", r"n_clusters must be a whole number.*got 30.5", n_clusters=30.5
    ),
    raises("plan: bool clusters", r"n_clusters must be a number, got True", n_clusters=True),
    raises("plan: string clusters", r"n_clusters must be a number, got '30'", n_clusters="30"),
    raises("plan: NaN clusters", r"n_clusters must be a number, got nan", n_clusters=nan),
    raises("plan: infinite clusters", r"n_clusters must be finite", n_clusters=inf),
    raises(
        "plan: design beyond floating-point range",
        r"n_clusters=1e\+200 clusters of cluster_size=1e\+200 rows are beyond floating-point",
        n_clusters=1e200,
        cluster_size=1e200,
    ),
    raises(
        "plan: cluster_size below 1", r"cluster_size must be at least 1, got 0.5", cluster_size=0.5
    ),
    raises("plan: infinite cluster_size", r"cluster_size must be finite", cluster_size=inf),
    raises(
        "plan: list cluster_size", r"cluster_size must be a number, got \[10\]", cluster_size=[10]
    ),
    # -- the ICC ------------------------------------------------------------------------------
    raises(
        "plan: negative icc",
        r"icc must be between 0 and 1, got -0.05; use 0 for a negative",
        icc=-0.05,
    ),
    raises("plan: icc above 1", r"icc must be between 0 and 1, got 1.2", icc=1.2),
    raises("plan: bool icc", r"icc must be a number, got True", icc=True),
    raises("plan: NaN icc", r"icc must be a number, got nan", icc=nan),
    # -- the row variance ---------------------------------------------------------------------
    raises(
        "plan: proportion 0",
        r"proportion must be strictly between 0 and 1, got 0; "
        r"a pass rate of 0 or 1 has no row variance",
        proportion=0,
    ),
    raises(
        "plan: proportion 1", r"proportion must be strictly between 0 and 1, got 1;", proportion=1
    ),
    raises(
        "plan: proportion in a list", r"proportion must be a number, got \[0.5\]", proportion=[0.5]
    ),
    raises("plan: zero variance", r"variance must be positive, got 0", proportion=DROP, variance=0),
    raises("plan: infinite variance", r"variance must be finite", proportion=DROP, variance=inf),
    raises(
        "plan: variance and proportion",
        r"variance= or a pass rate as proportion= \(one of them, not both\)",
        variance=0.2,
    ),
    raises(
        "plan: neither variance nor proportion",
        r"variance= or a pass rate as proportion=",
        proportion=DROP,
    ),
    raises(
        "plan: variance whose half-width overflows",
        r"half-width of 'current' is inf, beyond floating-point range for .*variance=1e\+308",
        proportion=DROP,
        variance=1e308,
    ),
    # -- confidence and power -----------------------------------------------------------------
    raises("plan: confidence 0", r"confidence must be strictly between 0 and 1", confidence=0),
    raises("plan: confidence 1", r"confidence must be strictly between 0 and 1", confidence=1),
    raises(
        "plan: confidence 95",
        r"confidence must be strictly between 0 and 1 \(e.g. 0.95\), got 95",
        confidence=95,
    ),
    raises(
        "plan: confidence as a string",
        r"confidence must be a number such as 0.95, got '0.95'",
        confidence="0.95",
    ),
    raises(
        "plan: confidence whose quantile is 0",
        r"confidence=1e-300 is too close to 0 for its interval to have a width",
        confidence=1e-300,
    ),
    raises(
        "plan: power above 1 without a paired plan",
        r"power must be strictly between 0 and 1, got 1.5",
        power=1.5,
    ),
    raises("plan: power None", r"power must be a number, got None", power=None),
    # -- icc_range ----------------------------------------------------------------------------
    raises(
        "plan: icc_range reversed",
        r"icc_range must be \(low, high\) with low <= high, got \(0.4, 0.05\)",
        icc_range=(0.4, 0.05),
    ),
    raises(
        "plan: icc_range without icc",
        r"icc=0.3 lies outside icc_range=\(0.05, 0.2\)",
        icc=0.3,
        icc_range=(0.05, 0.2),
    ),
    raises(
        "plan: icc_range of three values",
        r"icc_range must be a pair \(low, high\), got 3 values",
        icc_range=(0.0, 0.1, 0.2),
    ),
    raises(
        "plan: icc_range a number",
        r"icc_range must be a pair \(low, high\), got 0.2",
        icc_range=0.2,
    ),
    raises(
        "plan: icc_range a string",
        r"icc_range must be a pair \(low, high\), got 'ab'",
        icc_range="ab",
    ),
    raises(
        "plan: icc_range with NaN",
        r"icc_range\[0\] must be a number, got nan",
        icc_range=(nan, 0.5),
    ),
    raises(
        "plan: icc_range above 1",
        r"icc_range\[1\] must be between 0 and 1, got 1.5",
        icc_range=(0.05, 1.5),
    ),
    # -- costs --------------------------------------------------------------------------------
    raises("plan: one cost only", r"give both cost_per_cluster and cost_per_row", cost_per_row=1),
    raises(
        "plan: zero cost per cluster",
        r"cost_per_cluster must be positive, got 0",
        cost_per_cluster=0,
        cost_per_row=1,
    ),
    raises(
        "plan: negative cost per row",
        r"cost_per_row must be positive, got -1",
        cost_per_cluster=10,
        cost_per_row=-1,
    ),
    raises(
        "plan: string cost",
        r"cost_per_cluster must be a number, got '10'",
        cost_per_cluster="10",
        cost_per_row=1,
    ),
    raises(
        "plan: costs whose ratio overflows",
        r"cost-optimal depth m\* is inf, beyond floating-point range for "
        r"cost_per_cluster=1e\+308 and cost_per_row=1e-308",
        cost_per_cluster=1e308,
        cost_per_row=1e-308,
    ),
    # -- targets and effects ------------------------------------------------------------------
    raises("plan: zero target", r"target_half_width must be positive, got 0", target_half_width=0),
    raises(
        "plan: NaN target", r"target_half_width must be a number, got nan", target_half_width=nan
    ),
    raises(
        "plan: target whose square underflows",
        r"number of clusters for the target is inf, beyond floating-point range for "
        r"target_half_width=1e-200",
        target_half_width=1e-200,
    ),
    raises(
        "plan: effect without a paired plan",
        r"effect= needs difference_variance= and difference_icc=",
        effect=0.1,
    ),
    raises("plan: zero effect", r"effect must be nonzero", effect=0, **PAIRED),
    raises("plan: string effect", r"effect must be a number, got '0.1'", effect="0.1", **PAIRED),
    raises(
        "plan: effect whose square underflows",
        r"number of clusters to detect the effect is inf.*effect=1e-200",
        effect=1e-200,
        **PAIRED,
    ),
    raises(
        "plan: negative difference_icc",
        r"difference_icc must be between 0 and 1, got -0.1; use 0 for a negative",
        difference_variance=0.2,
        difference_icc=-0.1,
    ),
    raises(
        "plan: NaN difference_icc",
        r"difference_icc must be a number, got nan",
        difference_variance=0.2,
        difference_icc=nan,
    ),
    raises(
        "plan: difference_icc above 1",
        r"difference_icc must be between 0 and 1, got 1.5",
        difference_variance=0.2,
        difference_icc=1.5,
    ),
    raises(
        "plan: difference_variance alone",
        r"a paired plan needs difference_variance and difference_icc",
        difference_variance=0.2,
    ),
    raises(
        "plan: paired power 1", r"power must be strictly between 0 and 1, got 1", power=1, **PAIRED
    ),
    # -- designs that are valid but awkward: the right number ---------------------------------
    Case(
        "plan: two clusters",
        lambda: {},
        lambda: planned(n_clusters=2),
        Returns(_check_two_clusters),
    ),
    Case(
        "plan: icc 0 with costs",
        lambda: {},
        lambda: planned(icc=0, cost_per_cluster=50, cost_per_row=1),
        Returns(_check_icc_zero),
    ),
    Case("plan: icc 1", lambda: {}, lambda: planned(icc=1), Returns(_check_icc_one)),
    Case(
        "plan: cost-optimal depth below one row",
        lambda: {},
        lambda: planned(icc=0.5, cost_per_cluster=1, cost_per_row=10),
        Returns(_check_m_star_below_one),
    ),
    Case(
        "plan: cost-optimal design with fewer than 2 clusters",
        lambda: {},
        lambda: planned(
            n_clusters=2, cluster_size=1, icc=0.01, cost_per_cluster=100, cost_per_row=1
        ),
        Returns(_check_too_few_clusters_at_same_cost),
    ),
    Case(
        "plan: target met by 2 clusters",
        lambda: {},
        lambda: planned(target_half_width=2.0),
        Returns(_check_target_met_by_two),
    ),
    Case(
        "plan: wide target",
        lambda: {},
        lambda: planned(target_half_width=0.3),
        Returns(_check_wide_target),
    ),
    Case(
        "plan: huge target",
        lambda: {},
        lambda: planned(target_half_width=1e308),
        Returns(lambda p: _check_target_met_by_two(p)),
    ),
    Case(
        "plan: negative effect",
        lambda: {},
        lambda: planned(effect=-0.05, **PAIRED),
        Returns(_check_negative_effect),
    ),
    Case(
        "plan: huge effect",
        lambda: {},
        lambda: planned(effect=5.0, **PAIRED),
        # the closed form gives 0.012 clusters; the plan says the minimum of 2
        Returns(holds(lambda p: p.clusters_for_power == 2.0)),
    ),
    Case(
        "plan: numpy numbers",
        lambda: {},
        lambda: planned(
            n_clusters=np.int64(30), cluster_size=np.float64(10.0), icc=np.float32(0.1)
        ),
        # np.float32(0.1) is not 0.1 exactly: compare with the same float
        Returns(holds(lambda p: p.icc == float(np.float32(0.1)) and p.n_clusters == 30)),
    ),
    Case(
        "plan: icc_range given as an array",
        lambda: {"icc_range": np.array([0.05, 0.2])},
        lambda icc_range: planned(icc_range=icc_range),
        Returns(holds(lambda p: [row[0] for row in p.by_icc] == [0.05, 0.1, 0.2])),
    ),
]

PILOT_CASES = [
    pilot_case(
        "pilot_plan: all pass",
        Raises(
            cs.DegenerateDataError,
            r"the pilot \('y' by 'c'\) has no variation.*all pass.*plan\(n_clusters=",
        ),
        frame=lambda: pilot(np.ones(50)),
    ),
    pilot_case(
        "pilot_plan: a constant score",
        Raises(cs.DegenerateDataError, r"the pilot \('y' by 'c'\) has no variation"),
        frame=lambda: pilot(np.full(50, 0.3)),
    ),
    pilot_case(
        "pilot_plan: one cluster",
        Raises(
            cs.TooFewClustersError,
            r"found 1 cluster in the pilot \('y' by 'c'\): an ICC needs at least 2",
        ),
        frame=lambda: pilot(clusters=1, size=20),
    ),
    pilot_case(
        "pilot_plan: one row per cluster",
        Raises(
            cs.DegenerateDataError, r"every cluster in the pilot \('y' by 'c'\) has a single row"
        ),
        frame=lambda: pilot(clusters=30, size=1),
    ),
    pilot_case(
        "pilot_plan: every outcome missing",
        Raises(cs.EmptyDataError, r"every outcome 'y' of the pilot is missing"),
        frame=lambda: pilot(np.full(50, nan)),
    ),
    Case(
        "pilot_plan: other identical to data",
        lambda: {"data": pilot().assign(i=range(50)), "other": pilot().assign(i=range(50))},
        lambda data, other: cs.pilot_plan(data, "y", "c", other=other, on="i", effect=0.1),
        Raises(
            cs.DegenerateDataError,
            r"per-item differences of 'y' between data and other do not vary",
        ),
    ),
    pilot_case(
        "pilot_plan: effect without other is the distance to a boundary",
        Returns(holds(lambda p: p.clusters_for_power > 2 and p.minimum_detectable_effect > 0)),
        effect=0.1,
    ),
    pilot_case("pilot_plan: effect zero", Raises(Option, r"effect must be nonzero"), effect=0.0),
    pilot_case(
        "pilot_plan: power 2",
        Raises(Option, r"power must be strictly between 0 and 1, got 2"),
        power=2,
    ),
    pilot_case(
        "pilot_plan: confidence 95",
        Raises(Option, r"confidence must be strictly between 0 and 1"),
        confidence=95,
    ),
    pilot_case(
        "pilot_plan: negative target",
        Raises(Option, r"target_half_width must be positive, got -0.1"),
        target_half_width=-0.1,
    ),
    pilot_case(
        "pilot_plan: missing policy", Raises(Option, r"missing must be one of"), missing="ipw"
    ),
    Case(
        "pilot_plan: unknown cluster column",
        lambda: {"data": pilot()},
        lambda data: cs.pilot_plan(data, "y", "zz"),
        Raises(cs.ColumnNotFoundError, r"column 'zz' not found"),
    ),
    Case(
        "pilot_plan: clustered by the outcome",
        lambda: {"data": pilot()},
        lambda data: cs.pilot_plan(data, "y", "y"),
        Raises(Option, r"column 'y' is both the outcome and by="),
    ),
    pilot_case(
        "pilot_plan: missing cluster labels",
        Raises(cs.InvalidClusterError, r"cluster column 'c' has 5 missing ids"),
        frame=lambda: pilot().assign(c=lambda d: d.c.where(d.c != 3)),
    ),
    pilot_case(
        "pilot_plan: negative ICC",
        Returns(_check_negative_pilot_icc),
        frame=lambda: pilot(clusters=12, size=5, seed=0, rate=0.5),
    ),
    pilot_case(
        "pilot_plan: two clusters",
        Returns(_check_two_cluster_pilot),
        frame=lambda: pilot(clusters=2, size=20, seed=1),
    ),
    pilot_case(
        "pilot_plan: ICC without an interval",
        Warns(
            cs.DegenerateDataWarning,
            r"no within-cluster variation",
            check=_check_between_only_pilot,
        ),
        frame=_all_same_in_clusters,
    ),
]

HELPER_CASES = [
    Case(
        "wilson_interval: infinite n",
        lambda: {},
        lambda: cs.wilson_interval(5, inf),
        Raises(Option, r"n must be finite"),
    ),
    Case(
        "wilson_interval: NaN n",
        lambda: {},
        lambda: cs.wilson_interval(5, nan),
        Raises(Option, r"n must be a number, got nan"),
    ),
    Case(
        "wilson_interval: zero n",
        lambda: {},
        lambda: cs.wilson_interval(0, 0),
        Raises(Option, r"n must be positive, got 0"),
    ),
    Case(
        "wilson_interval: bool successes",
        lambda: {},
        lambda: cs.wilson_interval(True, 10),
        Raises(Option, r"successes must be a number, got True"),
    ),
    Case(
        "wilson_interval: string successes",
        lambda: {},
        lambda: cs.wilson_interval("5", 10),
        Raises(Option, r"successes must be a number, got '5'"),
    ),
    Case(
        "wilson_interval: more successes than trials",
        lambda: {},
        lambda: cs.wilson_interval(11, 10),
        Raises(Option, r"successes must be at most n, got successes=11 and n=10"),
    ),
    Case(
        "wilson_interval: negative successes",
        lambda: {},
        lambda: cs.wilson_interval(-1, 10),
        Raises(Option, r"successes must be at least 0, got -1"),
    ),
    Case(
        "wilson_interval: n too large to compute",
        lambda: {},
        lambda: cs.wilson_interval(1e200, 1e200),
        Raises(Option, r"n must be at most 1e\+150 trials, got 1e\+200"),
    ),
    Case(
        "wilson_interval: confidence whose quantile is 0",
        lambda: {},
        lambda: cs.wilson_interval(5, 10, confidence=1e-300),
        Raises(Option, r"confidence=1e-300 is too close to 0"),
    ),
    Case(
        "wilson_interval: fractional trials",
        lambda: {},
        lambda: cs.wilson_interval(2.5, 7.5),
        Returns(_interval_close(wilson_closed_form(2.5, 7.5))),
    ),
    Case(
        "wilson_interval: large n keeps its width",
        lambda: {},
        lambda: cs.wilson_interval(5e19, 1e20),
        # p = 0.5: the half-width tends to z / (2 sqrt(n)) = 1.96 / 2e10
        Returns(holds(lambda ci: (ci[1] - ci[0]) / 2 == pytest.approx(1.959963984540054 / 2e10))),
    ),
    Case(
        "rule_of_three: infinite n_rows",
        lambda: {},
        lambda: cs.rule_of_three(inf),
        Raises(Option, r"n_rows must be finite"),
    ),
    Case(
        "rule_of_three: fractional n_rows",
        lambda: {},
        lambda: cs.rule_of_three(2.5),
        Raises(Option, r"n_rows must be a whole number, at least 1, got 2.5"),
    ),
    Case(
        "rule_of_three: bool n_rows",
        lambda: {},
        lambda: cs.rule_of_three(True),
        Raises(Option, r"n_rows must be a number, got True"),
    ),
    Case(
        "rule_of_three: more clusters than rows",
        lambda: {},
        lambda: cs.rule_of_three(300, n_clusters=301),
        Raises(Option, r"n_clusters must be at most n_rows, got n_clusters=301 and n_rows=300"),
    ),
    Case(
        "rule_of_three: fractional clusters",
        lambda: {},
        lambda: cs.rule_of_three(300, n_clusters=2.5),
        Raises(Option, r"n_clusters must be a whole number"),
    ),
    Case(
        "rule_of_three: string icc",
        lambda: {},
        lambda: cs.rule_of_three(300, n_clusters=30, icc="0.3"),
        Raises(Option, r"icc must be a number, got '0.3'"),
    ),
    Case(
        "rule_of_three: huge n_rows",
        lambda: {},
        lambda: cs.rule_of_three(10**30),
        # 1 − 0.05^(1/n) = −expm1(ln 0.05 / n) = ln 20 / n to first order (it was 0.0)
        Returns(holds(lambda bound: bound == pytest.approx(math.log(20) / 1e30, rel=1e-12))),
    ),
    Case(
        "rule_of_three: one cluster",
        lambda: {},
        lambda: cs.rule_of_three(300, n_clusters=1),
        # one cluster counts once: 1 − 0.05^(1/1)
        Returns(holds(lambda bound: bound == pytest.approx(0.95, rel=1e-12))),
    ),
    Case(
        "kish_design_effect: bool icc",
        lambda: {},
        lambda: cs.kish_design_effect(10, True),
        Raises(Option, r"icc must be a number, got True"),
    ),
    Case(
        "kish_design_effect: infinite cluster_size",
        lambda: {},
        lambda: cs.kish_design_effect(inf, 0.3),
        Raises(Option, r"cluster_size must be finite"),
    ),
    Case(
        "kish_design_effect: NaN cluster_size",
        lambda: {},
        lambda: cs.kish_design_effect(nan, 0.3),
        Raises(Option, r"cluster_size must be a number, got nan"),
    ),
    Case(
        "effective_n: negative rows",
        lambda: {},
        lambda: cs.effective_n(-100, 2),
        Raises(Option, r"n must be at least 0, got -100"),
    ),
    Case(
        "effective_n: infinite design effect",
        lambda: {},
        lambda: cs.effective_n(100, inf),
        Raises(Option, r"design_effect must be finite"),
    ),
    Case(
        "effective_n: string rows",
        lambda: {},
        lambda: cs.effective_n("100", 2),
        Raises(Option, r"n must be a number, got '100'"),
    ),
    Case(
        "adjusted_wilson_interval: clusters larger than the rows",
        lambda: {},
        lambda: cs.adjusted_wilson_interval(30, 300, cluster_size=500, icc=0.3),
        Raises(Option, r"cluster_size=500 exceeds n=300"),
    ),
    Case(
        "adjusted_wilson_interval: infinite rows",
        lambda: {},
        lambda: cs.adjusted_wilson_interval(30, inf, cluster_size=10, icc=0.3),
        Raises(Option, r"n must be finite"),
    ),
    Case(
        "adjusted_wilson_interval: icc 1",
        lambda: {},
        lambda: cs.adjusted_wilson_interval(30, 300, cluster_size=10, icc=1),
        # ρ = 1: n_eff = 300 / 10 = 30 clusters, p = 0.1 kept: Wilson for 3 of 30
        Returns(_interval_close(wilson_closed_form(3, 30))),
    ),
]

CASES = PLAN_CASES + PILOT_CASES + HELPER_CASES


@pytest.mark.parametrize("case", params(CASES))
def test_hostile(case):
    run(case)


def test_catalogue_size():
    assert len(CASES) >= 60
