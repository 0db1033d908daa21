"""``judged_plan``: how many human labels, in how many clusters.

The projection is the two-phase variance of ``judged_ci`` written as a function of the
labelled clusters and rows per cluster (Cochran 1977, section 10.2); at the pilot's own
design it must give back the pilot's own variance (``method="cr1"``, the pilot's weight).
Whether a plan delivers its promise on real data is measured by
``studies/coverage_judged.py``.
"""

from __future__ import annotations

import math
import warnings

import numpy as np
import pandas as pd
import pytest

import clusterstats as cs
from clusterstats import adapters
from clusterstats.core import judged as core


def _pilot(labelling: str, seed: int = 3) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    rows = []
    for doc in range(60):
        level, lean = rng.normal(0, 0.5), rng.normal(0.3, 0.3)
        for item in range(int(rng.integers(3, 9))):
            human = min(max(3 + level + rng.normal(0, 0.8), 1.0), 5.0)
            judge = min(max(0.8 * human + 0.6 + lean + rng.normal(0, 0.4), 1.0), 5.0)
            rows.append((f"doc{doc:02d}", item, human, judge))
    frame = pd.DataFrame(rows, columns=["doc", "item", "human_full", "judge"])
    if labelling == "clusters":
        keep = frame["doc"].isin(rng.choice(frame["doc"].unique(), 20, replace=False))
    else:
        keep = frame.sample(frac=1, random_state=seed).groupby("doc").head(2).index
        keep = frame.index.isin(keep)
    return frame.assign(human=frame["human_full"].where(keep))


def _quiet(call):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", cs.FewClustersWarning)
        return call()


@pytest.mark.parametrize("target", ["population", "benchmark"])
@pytest.mark.parametrize("estimand", ["pooled", "cluster_mean"])
@pytest.mark.parametrize(("labelling", "per_cluster"), [("clusters", math.inf), ("rows", 2)])
def test_the_projection_at_the_pilots_design_is_the_pilots_variance(
    labelling, per_cluster, estimand, target
):
    data = _pilot(labelling)
    fitted = _quiet(
        lambda: cs.judged_ci(data, "human", "doc", judge="judge", estimand=estimand,
                             target=target, weight="tuned", method="cr1")
    )  # fmt: skip
    design = adapters.judged_design(data, adapters.columns_of(data, "human", "doc", judge="judge"))
    parts = core.plan_parts(design.sums, estimand=estimand, weight=fitted.weight)
    projected = core.projected_variance(
        parts, clusters=60, labelled=fitted.n_labelled_clusters, per_cluster=per_cluster,
        target=target,
    )  # fmt: skip
    if target == "benchmark" and labelling == "rows":
        # the pilot's second stage uses each cluster's own spread of labels, the projection
        # their pooled spread (which is what a cluster not yet labelled can be given)
        assert projected == pytest.approx(fitted.se**2, rel=0.25)
    else:
        assert projected == pytest.approx(fitted.se**2, rel=1e-9)


def test_a_plan_recommends_the_cheapest_design_that_reaches_the_width():
    plan = _quiet(
        lambda: cs.judged_plan(_pilot("clusters"), "human", "doc", judge="judge",
                               target_half_width=0.18, cost_per_cluster=4)
    )  # fmt: skip
    best = plan.designs[plan.recommended]
    assert best.half_width <= 0.18
    assert all(d.cost >= best.cost for d in plan.designs if d.clusters)
    # one fewer cluster of the same design would not reach the width
    assert best.clusters > 10
    fewer = core.projected_variance(
        core.plan_parts(
            adapters.judged_design(_pilot("clusters"), adapters.columns_of(
                _pilot("clusters"), "human", "doc", judge="judge")).sums,
            estimand="pooled", weight=plan.weight, upper=0.9,
        ),
        clusters=60, labelled=best.clusters - 1, per_cluster=best.per_cluster,
        target="population",
    )  # fmt: skip
    assert core.t_half_width(fewer, best.clusters - 2, 0.95) > 0.18
    frame = plan.to_frame()
    assert frame["recommended"].sum() == 1
    assert "cheapest:" in str(plan)


def test_the_floor_no_judge_removes():
    plan = _quiet(
        lambda: cs.judged_plan(_pilot("rows"), "human", "doc", judge="judge",
                               target_half_width=0.01)
    )  # fmt: skip
    assert plan.recommended is None
    assert plan.floor_half_width > 0.01
    assert any("no labelling of 60 clusters reaches the goal" in n for n in plan.notes)
    more = _quiet(
        lambda: cs.judged_plan(_pilot("rows"), "human", "doc", judge="judge",
                               target_half_width=0.01, clusters=5000)
    )  # fmt: skip
    assert more.floor_half_width < plan.floor_half_width


def test_power_for_an_effect():
    plan = _quiet(
        lambda: cs.judged_plan(_pilot("clusters"), "human", "doc", judge="judge", effect=0.3,
                               power=0.9)
    )  # fmt: skip
    best = plan.designs[plan.recommended]
    assert best.power >= 0.9
    assert plan.power == 0.9


@pytest.mark.parametrize(
    ("options", "error", "match"),
    [
        ({}, cs.InvalidOptionError, "plans for one goal"),
        ({"target_half_width": 0.1, "effect": 0.2}, cs.InvalidOptionError, "plans for one goal"),
        ({"target_half_width": -0.1}, cs.InvalidOptionError, "target_half_width must be"),
        ({"target_half_width": 0.1, "cost_per_label": -1}, cs.InvalidOptionError, "cost_per_label"),
        ({"target_half_width": 0.1, "cost_per_label": 0}, cs.InvalidOptionError, "both be 0"),
        ({"effect": 0}, cs.InvalidOptionError, "other than 0"),
        ({"target_half_width": 0.1, "clusters": 1.5}, cs.InvalidOptionError, "clusters"),
    ],
)
def test_bad_plan_options(options, error, match):
    with pytest.raises(error, match=match):
        cs.judged_plan(_pilot("clusters"), "human", "doc", judge="judge", **options)


def test_a_pilot_with_one_label_per_cluster_is_refused():
    data = _pilot("clusters")
    first = data.groupby("doc").cumcount() == 0
    data = data.assign(human=data["human_full"].where(first))
    with pytest.raises(cs.InvalidDataError, match="holds one label"):
        cs.judged_plan(data, "human", "doc", judge="judge", target_half_width=0.1)


def test_a_plan_labels_at_least_ten_clusters_and_plans_on_upper_limits():
    pilot = _pilot("clusters")
    easy = _quiet(
        lambda: cs.judged_plan(pilot, "human", "doc", judge="judge", target_half_width=5.0)
    )
    assert all(d.clusters == 10 for d in easy.designs)
    at_estimates = _quiet(
        lambda: cs.judged_plan(pilot, "human", "doc", judge="judge", target_half_width=0.18,
                               pilot_limit=None)
    )  # fmt: skip
    at_limits = _quiet(
        lambda: cs.judged_plan(pilot, "human", "doc", judge="judge", target_half_width=0.18)
    )
    assert at_limits.designs[-1].clusters > at_estimates.designs[-1].clusters


def test_a_pilot_whose_labels_run_past_the_judges_scale_warns() -> None:
    pilot = _pilot("rows")
    span = pilot["judge"].max() - pilot["judge"].min()
    pilot["judge"] = (pilot["judge"] - pilot["judge"].min()) / span
    with pytest.warns(cs.JudgeScaleWarning, match="outside the judge's"):
        plan = cs.judged_plan(pilot, "human", "doc", judge="judge", target_half_width=0.2)
    assert any("outside the judge's" in note for note in plan.notes)
    with warnings.catch_warnings():
        warnings.simplefilter("error", cs.JudgeScaleWarning)
        plain = cs.judged_plan(_pilot("rows"), "human", "doc", judge="judge", target_half_width=0.2)
    assert not any("outside the judge's" in note for note in plain.notes)


def test_the_between_cluster_limit_is_the_modified_large_sample_bound():
    limit = core._difference_upper_limit
    chi_square_limit = core._upper_limit(0.5, 14, 0.9)
    # with nothing to subtract it is the spread's own chi-square limit
    assert math.isclose(limit(0.5, 14, 0.0, 30, 0.9), chi_square_limit, rel_tol=1e-12)
    assert limit(0.5, 14, 0.2, 30, None) == pytest.approx(0.3, abs=1e-15)
    # two estimates that cancel leave a positive limit, not 0
    assert limit(0.4, 14, 0.4, 30, 0.9) > 0
    assert limit(0.4, 14, 0.5, 30, None) == 0.0
    # and it covers: theta1 - theta2 = 0.2 under the chi-square laws of the two estimates
    rng = np.random.default_rng(8)
    first = 1.0 * rng.chisquare(14, 20_000) / 14
    second = 0.8 * rng.chisquare(30, 20_000) / 30
    covered = np.mean([limit(a, 14, b, 30, 0.9) >= 0.2 for a, b in zip(first, second, strict=True)])
    assert 0.88 <= covered <= 0.95  # Graybill & Wang's bound is near nominal, a little above
