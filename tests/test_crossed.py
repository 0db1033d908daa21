"""Crossed (multi-way) clustering: ``cluster_ci(..., by=[a, b], crossed=True)``.

Expected values: R sandwich, printed by ``tests/r/crossed.R`` (each value below sits beside
the call that printed it; the script writes the data it uses to ``tests/reference/data/``),
and statsmodels' ``cov_cluster_2groups`` (a test extra), called here."""

from __future__ import annotations

import os
import subprocess
import sys
import warnings

import numpy as np
import pandas as pd
import pytest

import clusterstats as cs
from clusterstats.core.crossed import crossed_variance_of_rows

DATA = os.path.join(os.path.dirname(__file__), "reference", "data")


@pytest.fixture(scope="module")
def verbagg():
    return pd.read_csv(os.path.join(DATA, "verbagg.csv.xz"))


@pytest.fixture(scope="module")
def three_way():
    return pd.read_csv(os.path.join(DATA, "three_way.csv.xz"))


def quiet(function, *args, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", cs.FewClustersWarning)
        return function(*args, **kwargs)


def test_verbagg_two_way_standard_error_equals_r_sandwich(verbagg):
    assert verbagg.shape == (7584, 3)
    res = cs.cluster_ci(verbagg, "y", by=["id", "item"], crossed=True, method="cr1")
    # R: vcovCL(lm(y ~ 1, VerbAgg), cluster = ~ id + item, type = "HC1", multi0 = FALSE)
    assert res.se == pytest.approx(0.040573015504600914, rel=1e-12)
    assert res.estimate == pytest.approx(0.47613396624472876, rel=1e-12)  # coef(lm(y ~ 1))
    assert res.df == 23  # min(316 persons, 24 items) - 1
    assert res.crossed
    # the one-way terms: vcovCL(..., cluster = ~ id) and ~ item
    one_way = {by: cs.cluster_ci(verbagg, "y", by=by, method="cr1").se for by in ("id", "item")}
    assert one_way["id"] == pytest.approx(0.013312668919132275, rel=1e-12)
    assert one_way["item"] == pytest.approx(0.038753526313964101, rel=1e-12)


def test_three_crossed_groupings_equal_r_sandwich(three_way):
    res = quiet(
        cs.cluster_ci,
        three_way,
        "y",
        by=["question", "template", "judge"],
        crossed=True,
        method="cr1",
    )
    # R: vcovCL(fit, cluster = ~ question + template + judge, type = "HC1", multi0 = FALSE)
    assert res.se == pytest.approx(0.056937058899882029, rel=1e-12)
    assert res.df == 3  # four judges
    two = quiet(
        cs.cluster_ci, three_way, "y", by=["question", "template"], crossed=True, method="cr1"
    )
    # R: vcovCL(fit, cluster = ~ question + template, type = "HC1", multi0 = FALSE)
    assert two.se == pytest.approx(0.036961035738087011, rel=1e-12)
    assert "+ V[question ∩ template ∩ judge] (700 clusters)" in res.notes[0]


def test_petersen_two_way_equals_statsmodels():
    sm = pytest.importorskip("statsmodels.api")
    import statsmodels
    from statsmodels.stats.sandwich_covariance import cov_cluster_2groups

    path = os.path.join(os.path.dirname(statsmodels.__file__), "stats", "tests", "test_data.txt")
    firm, year, _, y = np.loadtxt(path).T
    fit = sm.OLS(y, np.ones_like(y)).fit()
    both, _, _ = cov_cluster_2groups(fit, firm.astype(int), year.astype(int))
    frame = pd.DataFrame({"firm": firm.astype(int), "year": year.astype(int), "y": y})
    res = quiet(cs.cluster_ci, frame, "y", by=["firm", "year"], crossed=True)
    assert res.se == pytest.approx(np.sqrt(both[0, 0]), rel=1e-10)
    # statsmodels 0.15.0 printed 0.07425070728881342 for the same call; R sandwich on its own
    # copy of these data (PetersenCL, more digits) 0.074250707250447592 (tests/r/crossed.R)
    assert res.se == pytest.approx(0.07425070728881342, rel=1e-10)
    assert res.method == "cr1"  # the default for a continuous outcome
    assert res.df == 9  # ten years


def test_the_default_interval_and_the_result(verbagg):
    res = cs.cluster_ci(verbagg, "y", by=["id", "item"], crossed=True)
    assert res.method == "korn_graubard"  # binary: the effective n from the two-way variance
    same = cs.cluster_ci(verbagg, "y", by=["id", "item"], crossed=True, method="korn_graubard")
    assert (res.low, res.high) == (same.low, same.high)
    assert res.n_clusters == 24  # the grouping with the fewest clusters
    assert (res.cluster_size_min, res.cluster_size_max) == (316, 316)
    assert np.isnan(res.icc)
    iid = verbagg["y"].var(ddof=1) / len(verbagg)  # the variance of independent rows
    assert res.design_effect == pytest.approx(res.se**2 / iid, rel=1e-12)
    text = repr(res)
    assert "y by id × item (crossed)" in text
    assert "24 clusters of the smallest grouping" in text
    assert res.to_frame()["crossed"].iloc[0]


def test_every_entry_point_gives_the_same_interval(verbagg, tmp_path):
    import dask.dataframe as dd
    import xarray as xr

    reference = cs.cluster_ci(verbagg, "y", by=["id", "item"], crossed=True)
    results = {
        "accessor": verbagg.eval.cluster_ci("y", by=["id", "item"], crossed=True),
        "dask": cs.cluster_ci(
            dd.from_pandas(verbagg, npartitions=4), "y", by=["id", "item"], crossed=True
        ),
    }
    # a Dataset with one run per case, the groupings as coordinates along the case dim
    ds = xr.Dataset(
        {"y": (("case", "rerun"), verbagg[["y"]].to_numpy())},
        coords={"id": ("case", verbagg["id"]), "item": ("case", verbagg["item"])},
    )
    results["xarray"] = cs.cluster_ci(ds, "y", by=["id", "item"], crossed=True)
    for name, res in results.items():
        assert (res.low, res.high, res.se, res.df) == pytest.approx(
            (reference.low, reference.high, reference.se, reference.df), rel=1e-12, abs=1e-15
        ), name
    path = tmp_path / "verbagg.csv"
    verbagg.to_csv(path, index=False)
    argv = ["ci", str(path), "--outcome", "y", "--by", "id", "--by", "item", "--crossed"]
    proc = subprocess.run(
        [sys.executable, "-m", "clusterstats", *argv, "--output", "csv"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    printed = pd.read_csv(pd.io.common.StringIO(proc.stdout))
    assert printed["high"].iloc[0] == pytest.approx(reference.high, rel=1e-12)
    assert bool(printed["crossed"].iloc[0])


def test_crossed_with_groups_equals_each_group_alone(three_way):
    both = quiet(
        cs.cluster_ci, three_way, "y", by=["question", "template"], crossed=True, over="judge"
    )
    for judge, res in both.items():
        alone = quiet(
            cs.cluster_ci,
            three_way[three_way["judge"] == judge],
            "y",
            by=["question", "template"],
            crossed=True,
        )
        assert (res.low, res.high) == pytest.approx((alone.low, alone.high), rel=1e-12)


def test_a_non_positive_two_way_variance_falls_back_to_the_largest_term():
    # a question x template interaction without main effects: each question's and each
    # template's mean is 1/2, so V_question and V_template are 0 and V_cell carries everything
    rng = np.random.default_rng(3)
    q, t = np.meshgrid(np.arange(24), np.arange(24), indexing="ij")
    cell = ((q + t) % 2).ravel().astype(float)
    frame = pd.DataFrame(
        {
            "question": np.repeat(q.ravel(), 3),
            "template": np.repeat(t.ravel(), 3),
            "passed": np.repeat(cell, 3),
        }
    )
    frame["score"] = frame["passed"] + rng.normal(0, 0.01, len(frame))
    res = cs.cluster_ci(frame, "score", by=["question", "template"], crossed=True)
    two_way = crossed_variance_of_rows(
        frame["score"].to_numpy(), [frame["question"].to_numpy(), frame["template"].to_numpy()]
    )
    assert two_way.fallback
    largest = max(v for _, _, v in two_way.terms)
    assert res.se == pytest.approx(np.sqrt(largest), rel=1e-12)
    assert "the multi-way variance is not positive" in res.notes[1]
    assert "question ∩ template" in res.notes[1]


def test_the_combination_of_columns_warns_when_most_clusters_are_one_row(verbagg):
    with pytest.warns(cs.SingletonClustersWarning, match=r"7,584 clusters, 100% of them a single"):
        combined = cs.cluster_ci(verbagg, "y", by=["id", "item"])
    assert combined.n_clusters == 7584
    # no warning where the combination makes real clusters
    frame = verbagg.assign(half=verbagg["item"] % 2)
    with warnings.catch_warnings():
        warnings.simplefilter("error", cs.SingletonClustersWarning)
        cs.cluster_ci(frame, "y", by=["id", "half"])


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"method": "cr2"}, r"method 'cr2' has no crossed form"),
        ({"method": "bootstrap_t"}, r"method 'bootstrap_t' has no crossed form"),
        ({"estimand": "cluster_mean"}, r"a cluster mean is not defined"),
        ({"missing": "ipw"}, r"crossed=True and missing='ipw' cannot be combined"),
        ({"strata": "item"}, r"crossed=True and strata= cannot be combined"),
        ({"crossed": "yes"}, r"crossed must be True or False"),
        ({"by": "id"}, r"crossed=True needs by= with two or more groupings"),
    ],
)
def test_options_that_do_not_go_with_crossed(verbagg, options, message):
    call = {"by": ["id", "item"], "crossed": True, **options}
    with pytest.raises(cs.InvalidOptionError, match=message):
        cs.cluster_ci(verbagg, "y", **call)


def test_zero_crossed_variance_is_never_a_zero_width_interval():
    # every question passes 3 of its 4 templates' rows alike: each cell has the same mean
    frame = pd.DataFrame(
        {
            "question": np.repeat(np.arange(30), 8),
            "template": np.tile(np.repeat(np.arange(4), 2), 30),
            "passed": np.tile([1, 0], 120),
        }
    )
    with pytest.warns(cs.DegenerateDataWarning, match="the crossed variance is zero"):
        res = quiet(cs.cluster_ci, frame, "passed", by=["question", "template"], crossed=True)
    assert res.method == "clopper_pearson_fallback"
    assert res.low < 0.5 < res.high
    assert "effective n of 4, from the smaller number of clusters (4)" in res.notes[-2]
