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
from clusterstats import adapters
from clusterstats.core.crossed import crossed_variance_of_rows, memberships_of

DATA = os.path.join(os.path.dirname(os.path.dirname(__file__)), "reference", "data")


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


@pytest.fixture(scope="module")
def two_models():
    """Two models on a 40-question x 10-template eval, each item once."""
    rng = np.random.default_rng(5)
    question, template = np.repeat(np.arange(40), 10), np.tile(np.arange(10), 40)
    ease = rng.normal(0, 1, 40)[question] + rng.normal(0, 0.6, 10)[template]
    return pd.DataFrame(
        {
            "question": question,
            "template": template,
            "item": np.arange(400),
            "new": (rng.random(400) < 1 / (1 + np.exp(-(ease + 0.3)))).astype(int),
            "old": (rng.random(400) < 1 / (1 + np.exp(-ease))).astype(int),
        }
    )


def test_paired_delta_crossed_is_the_crossed_interval_of_the_differences(two_models):
    by = ["question", "template"]
    paired = quiet(cs.paired_delta, two_models, "new", "old", by=by, crossed=True)
    differences = two_models.assign(d=two_models["new"] - two_models["old"])
    alone = quiet(cs.cluster_ci, differences, "d", by=by, crossed=True)
    assert (paired.low, paired.high, paired.se, paired.df) == pytest.approx(
        (alone.low, alone.high, alone.se, alone.df), rel=1e-12
    )
    assert paired.method == "cr1"
    assert paired.test == "crossed_t"
    assert paired.crossed
    assert paired.n_clusters == 10
    assert np.isnan(paired.clustered_mcnemar_p_value)  # Obuchowski's test is one-way
    assert "(crossed)" in repr(paired)
    # two frames matched on an item key, and dask, give the same interval
    a = two_models[[*by, "item", "new"]].rename(columns={"new": "y"})
    b = two_models[[*by, "item", "old"]].rename(columns={"old": "y"})
    frames = quiet(cs.paired_delta, a, b, "y", by=by, on="item", crossed=True)
    import dask.dataframe as dd

    lazy = quiet(
        cs.paired_delta,
        dd.from_pandas(two_models, npartitions=3),
        "new",
        "old",
        by=by,
        crossed=True,
    )
    for other in (frames, lazy):
        assert (other.low, other.high) == pytest.approx((paired.low, paired.high), rel=1e-12)
    with pytest.raises(cs.InvalidOptionError, match=r"method 'bootstrap_t' has no crossed"):
        cs.paired_delta(two_models, "new", "old", by=by, crossed=True, method="bootstrap_t")


def test_cli_paired_crossed(two_models, tmp_path):
    by = ["question", "template"]
    new, old = tmp_path / "new.csv", tmp_path / "old.csv"
    two_models[[*by, "item", "new"]].rename(columns={"new": "y"}).to_csv(new, index=False)
    two_models[[*by, "item", "old"]].rename(columns={"old": "y"}).to_csv(old, index=False)
    argv = ["paired", str(new), str(old), "--outcome", "y", "--on", "item"]
    argv += ["--by", "question", "--by", "template", "--crossed", "--output", "json"]
    proc = subprocess.run(
        [sys.executable, "-m", "clusterstats", *argv], capture_output=True, text=True, check=False
    )
    assert proc.returncode == 0, proc.stderr
    import json

    record = json.loads(proc.stdout)
    expected = quiet(cs.paired_delta, two_models, "new", "old", by=by, crossed=True)
    assert record["high"] == pytest.approx(expected.high, rel=1e-12)
    assert record["crossed"] is True


def test_paired_datasets_with_two_cluster_coordinates(two_models):
    """Two Datasets with two cluster coordinates (was a raw numpy ValueError), combined and
    crossed, equal the frames."""
    import xarray as xr

    by = ["question", "template"]

    def dataset(column):
        return xr.Dataset(
            {"y": (("case", "rerun"), two_models[[column]].to_numpy(dtype=float))},
            coords={
                "case": two_models["item"].to_numpy(),
                "question": ("case", two_models["question"].to_numpy()),
                "template": ("case", two_models["template"].to_numpy()),
            },
        )

    for crossed in (False, True):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", cs.ClusterStatsWarning)
            arrays = cs.paired_delta(dataset("new"), dataset("old"), "y", by=by, crossed=crossed)
            frame = cs.paired_delta(two_models, "new", "old", by=by, crossed=crossed, method="cr1")
            if not crossed:
                arrays = cs.paired_delta(dataset("new"), dataset("old"), "y", by=by, method="cr1")
        assert (arrays.low, arrays.high) == pytest.approx((frame.low, frame.high), rel=1e-12)


@pytest.fixture(scope="module")
def three_models(two_models):
    rng = np.random.default_rng(8)
    frames = []
    for k, shift in enumerate((0.0, 0.3, 0.5)):
        ease = rng.normal(0, 1, 40)[two_models["question"]] + shift
        frames.append(
            two_models[["question", "template", "item"]].assign(
                model=f"m{k}", y=(rng.random(400) < 1 / (1 + np.exp(-ease))).astype(int)
            )
        )
    return pd.concat(frames, ignore_index=True)


def test_compare_crossed_pairs_and_scores_are_the_crossed_intervals(three_models):
    by = ["question", "template"]
    res = quiet(cs.compare, three_models, "y", by=by, model="model", on="item", crossed=True)
    assert res.crossed
    assert res.method == "cr1"
    assert res.n_clusters == 10
    board = res.leaderboard().set_index("model")
    # no crossed bootstrap: the rank sets draw from the multi-way covariance (t on its df)
    assert res.rank_method == "guarded"
    assert (board["rank_low"] <= board["rank"]).all()
    assert (board["rank"] <= board["rank_high"]).all()
    wide = three_models.pivot(index="item", columns="model", values="y")
    wide = wide.join(three_models.groupby("item")[by].first())
    for row in res.pairs().itertuples():
        alone = quiet(cs.paired_delta, wide, row.model_a, row.model_b, by=by, crossed=True)
        assert (row.delta, row.low, row.high, row.se) == pytest.approx(
            (alone.delta, alone.low, alone.high, alone.se), rel=1e-12
        )
    for model, row in board.iterrows():
        alone = quiet(
            cs.cluster_ci, three_models[three_models["model"] == model], "y", by=by, crossed=True
        )
        assert (row["low"], row["high"]) == pytest.approx((alone.low, alone.high), rel=1e-12)
    assert "(crossed)" in repr(res)
    with pytest.raises(cs.InvalidOptionError, match=r"method 'bootstrap' has no crossed"):
        cs.compare(
            three_models, "y", by=by, model="model", on="item", crossed=True, method="bootstrap"
        )


def test_compare_crossed_on_every_backend(three_models, tmp_path):
    import dask.dataframe as dd
    import xarray as xr

    by = ["question", "template"]
    options = {"by": by, "model": "model", "on": "item", "crossed": True}
    reference = quiet(cs.compare, three_models, "y", **options).pairs()
    lazy = quiet(cs.compare, dd.from_pandas(three_models, npartitions=3), "y", **options)
    wide = three_models.pivot(index="item", columns="model", values="y")
    first = three_models.groupby("item")[by].first()
    ds = xr.Dataset(
        {"y": (("model", "case", "rerun"), wide.to_numpy().T[:, :, None].astype(float))},
        coords={
            "model": list(wide.columns),
            "case": wide.index.to_numpy(),
            "question": ("case", first["question"].to_numpy()),
            "template": ("case", first["template"].to_numpy()),
        },
    )
    arrays = quiet(cs.compare, ds, "y", by=by, model="model", crossed=True)
    for other in (lazy.pairs(), arrays.pairs()):
        np.testing.assert_allclose(other["high"], reference["high"], rtol=1e-12)
    path = tmp_path / "models.csv"
    three_models.to_csv(path, index=False)
    argv = ["compare", str(path), "--outcome", "y", "--model", "model", "--on", "item"]
    argv += ["--by", "question", "--by", "template", "--crossed", "--output", "csv"]
    proc = subprocess.run(
        [sys.executable, "-m", "clusterstats", *argv], capture_output=True, text=True, check=False
    )
    assert proc.returncode == 0, proc.stderr
    printed = pd.read_csv(pd.io.common.StringIO(proc.stdout))
    np.testing.assert_allclose(printed["high"], reference["high"], rtol=1e-12)


@pytest.mark.parametrize("seed", range(4))
def test_the_adapters_grouping_codes_are_the_labels_groupings(seed):
    """The frame adapter hands crossed clustering each cluster's code in every ``by``
    column; they must partition the clusters as the clusters' labels do (integer ids with
    gaps, string ids, three columns), and give the interval the labels give."""
    rng = np.random.default_rng(seed)
    n = 400
    frame = pd.DataFrame(
        {
            "q": rng.integers(0, 12, n) * 7,  # gaps between the ids
            "t": np.array([f"t{k}" for k in rng.integers(0, 5, n)]),
            "s": rng.integers(0, 3, n),
            "y": (rng.random(n) < 0.4).astype(float),
        }
    )
    by = ["q", "t", "s"]
    design = adapters.mean_design(frame, adapters.columns_of(frame, "y", by))
    ids = design.groups[0].cluster_ids
    from_labels = memberships_of(design.cluster_names(ids), 3)
    for column, labelled in zip(design.cluster_groupings, from_labels, strict=True):
        codes = column[ids]
        # the same partition: each label's code is one adapter code, and back
        pairs = set(zip(codes.tolist(), labelled.tolist(), strict=True))
        assert len(pairs) == len(set(codes.tolist()))
        assert len(set(codes.tolist())) == len(set(labelled.tolist()))
    by_codes = quiet(cs.cluster_ci, frame, "y", by=by, crossed=True, method="cr1")
    # a Dataset reaches crossed clustering through the labels alone
    dataset = cs.to_case_rerun(frame.assign(case=np.arange(n)), case="case", outcome="y")
    by_labels = quiet(cs.cluster_ci, dataset, "y", by=by, crossed=True, method="cr1")
    assert (by_codes.low, by_codes.high) == pytest.approx(
        (by_labels.low, by_labels.high), rel=1e-12
    )
