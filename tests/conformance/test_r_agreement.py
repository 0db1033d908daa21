"""Agreement with R on real, unbalanced eval data.

Every expected number below was printed by ``tests/r/verify.R`` (R 4.2.2, survey 4.1.1,
clubSandwich 0.5.8); the R call is named beside each. The suite does not need R.
"""

from __future__ import annotations

import pytest

import clusterstats as cs

#: Estimates, standard errors, design effects and degrees of freedom: arithmetic on the data,
#: equal to R's to the last digits R printed.
TOL = {"rel": 1e-12}
#: Bounds pass through t and beta quantiles, which libraries compute to fewer digits. scipy
#: 1.11's t quantile differs from R's qt and from later scipy by up to 3e-9 relatively (at
#: a non-integer df: CR2's Satterthwaite df), and moves Korn-Graubard's bounds, whose
#: effective n is scaled by a ratio of t quantiles, by up to 1.3e-9; later scipy agrees with
#: R to about 1e-11 (beta quantiles). 1e-8 holds on every declared stack, while a wrong df or
#: confidence level moves the 3rd to 5th digit.
BOUND_TOL = {"rel": 1e-8}


@pytest.fixture(scope="module")
def mixtral(mmlu):
    return mmlu[mmlu.model == "Mixtral-8x7B-Instruct-v0.1"]


def test_mmlu_pro_mixtral_by_source(mixtral):
    # svymean(~correct, svydesign(ids=~src, data=d), deff="replace")
    cr1 = cs.cluster_ci(mixtral, "correct", by="src", method="cr1")
    assert cr1.estimate == pytest.approx(0.418882978723404, **TOL)
    assert cr1.se == pytest.approx(0.0261675251497997, **TOL)
    assert cr1.df == 90
    assert cs.design_effect(mixtral, "correct", by="src").linearized == pytest.approx(
        33.8431452364008, **TOL
    )
    # svyciprop(~correct, des, method="beta", df=degf(des))
    kg = cs.cluster_ci(mixtral, "correct", by="src", method="korn_graubard")
    assert (kg.low, kg.high) == (
        pytest.approx(0.366347945510568, **BOUND_TOL),
        pytest.approx(0.472818194213529, **BOUND_TOL),
    )
    # clubSandwich::coef_test(lm(correct ~ 1), vcov="CR2", cluster=src, test="Satterthwaite")
    cr2 = cs.cluster_ci(mixtral, "correct", by="src", method="cr2")
    assert cr2.se == pytest.approx(0.0265160936590013, **TOL)
    assert cr2.df == pytest.approx(42.0605844727484, **TOL)
    assert (cr2.low, cr2.high) == (
        pytest.approx(0.365373618743577, **BOUND_TOL),
        pytest.approx(0.472392338703195, **BOUND_TOL),
    )


@pytest.mark.parametrize(
    ("outcome", "mean", "se_cr1", "deff", "cr2_se", "cr2_ci", "kg"),
    [
        (
            "reward",
            0.42,
            0.0520856171620488,
            2.21621260884709,
            0.0521710965216641,
            (0.312214165515016, 0.527785834484983),
            (0.31331604843147, 0.532467383078336),
        ),
        (
            "n_messages",
            26.54,
            1.76966858325096,
            3.87117116521777,
            1.79120311819128,
            (22.8393623730684, 30.2406376269316),
            None,
        ),
    ],
)
def test_tau_bench_by_user(tau, outcome, mean, se_cr1, deff, cr2_se, cr2_ci, kg):
    cr1 = cs.cluster_ci(tau, outcome, by="user_id", method="cr1")
    assert cr1.estimate == pytest.approx(mean, **TOL)
    assert cr1.se == pytest.approx(se_cr1, **TOL)
    assert cs.design_effect(tau, outcome, by="user_id").linearized == pytest.approx(deff, **TOL)
    cr2 = cs.cluster_ci(tau, outcome, by="user_id", method="cr2")
    assert cr2.se == pytest.approx(cr2_se, **TOL)
    assert cr2.df == pytest.approx(23.5459604140019, **TOL)
    assert (cr2.low, cr2.high) == (
        pytest.approx(cr2_ci[0], **BOUND_TOL),
        pytest.approx(cr2_ci[1], **BOUND_TOL),
    )
    if kg is not None:
        res = cs.cluster_ci(tau, outcome, by="user_id", method="korn_graubard")
        assert (res.low, res.high) == (
            pytest.approx(kg[0], **BOUND_TOL),
            pytest.approx(kg[1], **BOUND_TOL),
        )
