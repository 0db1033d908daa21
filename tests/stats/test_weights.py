"""Weighted (Hájek) means, ``cluster_ci(..., weights=...)``, and ``weights_for_mix``.

Expected values: R survey on its own California API data, printed by
``tests/r/weights.R`` (each value below sits beside the call that printed it; the script
writes the columns it uses to ``tests/reference/data/``)."""

from __future__ import annotations

import os
import warnings

import numpy as np
import pandas as pd
import pytest

import clusterstats as cs

#: R survey's bounds pass through t and beta quantiles, which libraries compute to fewer
#: digits than the arithmetic of the estimates and standard errors (compared at 1e-12):
#: scipy 1.11 moves these Korn-Graubard bounds by 1.3e-9 relatively (its t quantiles, which
#: scale the effective n), later scipy's beta quantile differs from R's qbeta by 4e-12. 1e-8
#: holds on every declared stack, while a wrong df or level moves the 3rd to 5th digit.
BOUND_TOL = {"rel": 1e-8}

DATA = os.path.join(os.path.dirname(os.path.dirname(__file__)), "reference", "data")


@pytest.fixture(scope="module")
def apiclus2():
    return pd.read_csv(os.path.join(DATA, "apiclus2.csv.xz"))


@pytest.fixture(scope="module")
def apistrat():
    return pd.read_csv(os.path.join(DATA, "apistrat.csv.xz"))


def test_clustered_weighted_mean_equals_r_survey(apiclus2):
    # des <- svydesign(ids = ~dnum, weights = ~pw, data = apiclus2)
    res = cs.cluster_ci(apiclus2, "api00", by="dnum", weights="pw")
    assert res.estimate == pytest.approx(670.8118081180811, rel=1e-12)  # svymean(~api00, des)
    assert res.se == pytest.approx(30.711576309328848, rel=1e-12)  # SE(svymean(...))
    assert res.df == 39  # degf(des)
    assert res.method == "cr1"
    assert res.weights == "pw"
    share = cs.cluster_ci(apiclus2, "wide", by="dnum", weights="pw", cap_n_eff=False)
    assert share.estimate == pytest.approx(0.75129151291512908, rel=1e-12)  # svymean(~wide)
    assert share.se == pytest.approx(0.066719064395364264, rel=1e-12)
    # svyciprop(~wide, des, method = "beta", df = degf(des))
    assert share.method == "korn_graubard"
    assert (share.low, share.high) == pytest.approx(
        (0.58987426104824248, 0.87380858232616043), **BOUND_TOL
    )


def test_stratified_weighted_mean_equals_r_survey(apistrat):
    # des <- svydesign(ids = ~1, strata = ~stype, weights = ~pw, data = apistrat)
    options = {"by": "snum", "strata": "stype", "weights": "pw"}
    res = cs.cluster_ci(apistrat, "api00", **options)
    assert res.estimate == pytest.approx(662.28736315932076, rel=1e-12)
    assert res.se == pytest.approx(9.5361322969251585, rel=1e-12)
    assert res.df == 197  # degf(des): 200 schools - 3 strata
    share = cs.cluster_ci(apistrat, "wide", **options, cap_n_eff=False)
    assert share.se == pytest.approx(0.024756802875456112, rel=1e-12)
    assert (share.low, share.high) == pytest.approx(
        (0.77315746131603724, 0.87415669403971064), **BOUND_TOL
    )
    assert "within 3 strata" in share.notes[0]


def test_kish_design_effect_and_the_clustering_one(apiclus2):
    res = cs.cluster_ci(apiclus2, "api00", by="dnum", weights="pw")
    w = apiclus2["pw"]
    assert res.weighting_design_effect == pytest.approx(len(w) * (w**2).sum() / w.sum() ** 2)
    # the clustering design effect: the variance over that of the same weighted rows taken
    # as independent (CR1 with every row its own cluster)
    rows = cs.cluster_ci(
        apiclus2.assign(row=np.arange(len(apiclus2))),
        "api00",
        by="row",
        weights="pw",
        method="cr1",
    )
    assert res.design_effect == pytest.approx(res.se**2 / rows.se**2, rel=1e-12)
    assert (res.naive_low, res.naive_high) == pytest.approx((rows.low, rows.high), rel=1e-12)
    assert "weighted by pw" in repr(res)
    assert np.isnan(cs.cluster_ci(apiclus2, "api00", by="dnum").weighting_design_effect)


def test_equal_weights_give_the_unweighted_interval(apiclus2):
    ones = apiclus2.assign(one=2.5)
    weighted = cs.cluster_ci(ones, "api00", by="dnum", weights="one", method="cr1")
    plain = cs.cluster_ci(ones, "api00", by="dnum", method="cr1")
    assert (weighted.low, weighted.high, weighted.se) == pytest.approx(
        (plain.low, plain.high, plain.se), rel=1e-12
    )
    assert weighted.weighting_design_effect == pytest.approx(1.0)


def test_weights_with_groups_and_missing_outcomes(apiclus2):
    frame = apiclus2.assign(half=np.arange(len(apiclus2)) % 2)
    frame.loc[frame.index[:5], "api00"] = np.nan
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", cs.FewClustersWarning)
        both = cs.cluster_ci(frame, "api00", by="dnum", weights="pw", over="half")
        for half, res in both.items():
            alone = cs.cluster_ci(
                frame[frame["half"] == half].dropna(subset=["api00"]),
                "api00",
                by="dnum",
                weights="pw",
            )
            assert (res.low, res.high) == pytest.approx((alone.low, alone.high), rel=1e-12)
    assert both.results[0].n_missing + both.results[1].n_missing == 5


@pytest.mark.parametrize(
    ("change", "options", "message"),
    [
        ({"pw": -1.0}, {}, r"weights column 'pw' has 1 negative values"),
        ({"pw": np.nan}, {}, r"weights column 'pw' has 1 missing values"),
        ({"pw": np.inf}, {}, r"weights column 'pw' has infinite values"),
        ("zero", {}, r"weights column 'pw' is zero on every row"),
        ("text", {}, r"weights column 'pw' has dtype"),
        (None, {"method": "cr2"}, r"method 'cr2' has no weighted form"),
        (None, {"method": "bootstrap_t"}, r"method 'bootstrap_t' has no weighted form"),
        (None, {"estimand": "cluster_mean"}, r"with weights, estimand must be 'pooled'"),
        (None, {"missing": "fail"}, r"with weights=, missing must be 'drop' or 'raise'"),
        (None, {"weights": ["pw"]}, r"weights= names one column of weights"),
        (None, {"weights": "nope"}, r"nope"),
    ],
)
def test_bad_weights_are_precise_errors(apiclus2, change, options, message):
    frame = apiclus2.copy()
    if change == "zero":
        frame["pw"] = 0.0
    elif change == "text":
        frame["pw"] = frame["pw"].astype(str)
    elif change is not None:
        frame.loc[frame.index[0], "pw"] = change["pw"]
    call = {"by": "dnum", "weights": "pw", **options}
    error = cs.ColumnNotFoundError if options.get("weights") == "nope" else cs.InvalidOptionError
    with pytest.raises(error, match=message):
        cs.cluster_ci(frame, "api00", **call)


def test_weights_on_every_frame_backend(apiclus2, apistrat):
    import dask.dataframe as dd

    for frame, options in (
        (apiclus2, {"by": "dnum"}),
        (apistrat, {"by": "snum", "strata": "stype"}),
        (apiclus2.assign(half=np.arange(len(apiclus2)) % 2), {"by": "dnum", "over": "half"}),
    ):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", cs.FewClustersWarning)
            eager = cs.cluster_ci(frame, "wide", weights="pw", **options)
            lazy = cs.cluster_ci(
                dd.from_pandas(frame, npartitions=3), "wide", weights="pw", **options
            )
            accessor = frame.eval.cluster_ci("wide", weights="pw", **options)
        pairs = (
            [(eager, lazy), (eager, accessor)]
            if "over" not in options
            else [(a, b) for a, b in zip(eager.results, lazy.results, strict=True)]
        )
        for a, b in pairs:
            assert (a.low, a.high, a.se, a.weighting_design_effect) == pytest.approx(
                (b.low, b.high, b.se, b.weighting_design_effect), rel=1e-12
            )
    bad = apiclus2.assign(pw=-apiclus2["pw"])
    with pytest.raises(cs.InvalidOptionError, match=r"weights column 'pw' has 126 negative"):
        cs.cluster_ci(dd.from_pandas(bad, npartitions=2), "api00", by="dnum", weights="pw")


def test_weights_on_a_dataset_equal_the_long_frame():
    """A Dataset laid out as (model, case, rerun) with a weight per case (a coordinate along
    the case dim), a run missing, equals the long frame of its runs."""
    import xarray as xr

    rng = np.random.default_rng(0)
    n = 60
    doc, w = np.repeat(np.arange(20), 3), rng.uniform(0.5, 2, n)
    y = (rng.random((2, n, 3)) < 0.6).astype(float)
    y[0, 5, 2] = np.nan  # a run that did not happen
    ds = xr.Dataset(
        {"passed": (("model", "case", "rerun"), y)},
        coords={"model": ["b", "a"], "case": np.arange(n), "doc": ("case", doc), "w": ("case", w)},
    )
    rows = [
        {"model": m, "doc": doc[c], "w": w[c], "passed": y[i, c, k]}
        for i, m in enumerate(["b", "a"])
        for c in range(n)
        for k in range(3)
        if not np.isnan(y[i, c, k])
    ]
    frame = pd.DataFrame(rows)
    arrays = cs.cluster_ci(ds, "passed", by="doc", weights="w")
    long = cs.cluster_ci(frame, "passed", by="doc", weights="w", over="model")
    for label in ("a", "b"):
        assert (arrays[label].low, arrays[label].high) == pytest.approx(
            (long[label].low, long[label].high), rel=1e-12
        )
    assert arrays["a"].n_rows == 180
    assert arrays["b"].n_rows == 179
    with pytest.raises(cs.DimensionError, match=r"weights='score' must be a coordinate"):
        cs.cluster_ci(
            ds.sel(model="a").assign(score=ds["passed"]), "passed", by="doc", weights="score"
        )
    # every backend refuses the outcome as its own weights, at the front
    with pytest.raises(cs.InvalidOptionError, match=r"'passed' is both the outcome and weights="):
        cs.cluster_ci(ds.sel(model="a"), "passed", by="doc", weights="passed")


def test_weights_for_mix_reaches_the_target_and_reweights_the_mean():
    mmlu = cs.datasets.load("mmlu_pro")
    one = mmlu[mmlu["model"] == mmlu["model"].iloc[0]]
    categories = sorted(one["category"].unique())
    target = {c: (2.0 if c in ("math", "law") else 1.0) for c in categories}
    w = cs.weights_for_mix(one, "category", target)
    assert w.index.equals(one.index)
    assert w.sum() == pytest.approx(len(one))
    shares = w.groupby(one["category"]).sum() / w.sum()
    total = sum(target.values())
    for c in categories:
        assert shares[c] == pytest.approx(target[c] / total, rel=1e-12)
    frame = one.assign(w=w)
    res = cs.cluster_ci(frame, "correct", by="src", strata="category", weights="w")
    by_category = one.groupby("category")["correct"].mean()
    expected = sum(target[c] / total * by_category[c] for c in categories)
    assert res.estimate == pytest.approx(expected, rel=1e-12)
    # an equal mix is macro accuracy, the mean of the category means
    equal = cs.weights_for_mix(one, "category", dict.fromkeys(categories, 1))
    macro = cs.cluster_ci(one.assign(w=equal), "correct", by="src", weights="w")
    assert macro.estimate == pytest.approx(by_category.mean(), rel=1e-12)


@pytest.mark.parametrize(
    ("target", "message"),
    [
        ({"a": 1.0}, r"categories \['b'\] of 'category' are not in target"),
        ({"a": 1.0, "b": 1.0, "c": 1.0}, r"target gives a share to \['c'\], which"),
        ({"a": -1.0, "b": 1.0}, r"target share of 'a' is -1.0"),
        ({"a": "half", "b": 1.0}, r"target share of 'a' is 'half'"),
        ({"a": 0.0, "b": 0.0}, r"the target shares are all zero"),
    ],
)
def test_weights_for_mix_errors(target, message):
    frame = pd.DataFrame({"category": ["a", "a", "b"], "correct": [1, 0, 1]})
    with pytest.raises(cs.InvalidOptionError, match=message):
        cs.weights_for_mix(frame, "category", target)


def test_weights_for_mix_leaves_the_data_alone():
    frame = pd.DataFrame({"category": ["a", "a", "b"], "correct": [1, 0, 1]})
    before = frame.copy()
    w = cs.weights_for_mix(frame, "category", {"a": 0.5, "b": 0.5, "c": 0.0})
    pd.testing.assert_frame_equal(frame, before)
    assert w.tolist() == pytest.approx([0.75, 0.75, 1.5])


def test_cli_weights(apiclus2, tmp_path):
    import json
    import subprocess
    import sys

    path = tmp_path / "apiclus2.csv"
    apiclus2.to_csv(path, index=False)
    argv = ["ci", str(path), "--outcome", "api00", "--by", "dnum", "--weights", "pw"]
    proc = subprocess.run(
        [sys.executable, "-m", "clusterstats", *argv, "--output", "json"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    record = json.loads(proc.stdout)
    assert record["se"] == pytest.approx(30.711576309328848, rel=1e-12)  # R survey, above
    assert record["weights"] == "pw"


def test_stratum_table_with_weights(apistrat):
    frame = apistrat.assign(w=apistrat["pw"] * (1 + (apistrat["snum"] % 3)))  # varies within
    table = cs.stratum_table(frame, "api00", by="snum", strata="stype", weights="w")
    assert table["estimand"].tolist() == ["pooled"] * 4
    overall = table.iloc[-1]
    alone = cs.cluster_ci(frame, "api00", by="snum", strata="stype", weights="w")
    assert (overall["estimate"], overall["low"], overall["high"]) == pytest.approx(
        (alone.estimate, alone.low, alone.high), rel=1e-12
    )
    for row in table.iloc[:-1].itertuples():
        part = frame[frame["stype"] == row.stratum]
        own = cs.cluster_ci(part, "api00", by="snum", weights="w")
        assert (row.estimate, row.low, row.high) == pytest.approx(
            (own.estimate, own.low, own.high), rel=1e-12
        )
        assert row.weight_pooled == pytest.approx(part["w"].sum() / frame["w"].sum())
    assert table["weight_stratum_mean"].isna().all()


@pytest.fixture(scope="module")
def weighted_pairs():
    rng = np.random.default_rng(2)
    doc = np.repeat(np.arange(40), 5)
    ease = rng.normal(0, 1, 40)[doc]
    return pd.DataFrame(
        {
            "doc": doc,
            "item": np.arange(200),
            "stratum": doc % 4,
            "new": (rng.random(200) < 1 / (1 + np.exp(-(ease + 0.3)))).astype(int),
            "old": (rng.random(200) < 1 / (1 + np.exp(-ease))).astype(int),
            "w": rng.uniform(0.5, 2.0, 200),
        }
    )


@pytest.mark.parametrize("strata", [None, "stratum"])
def test_paired_delta_weighted_is_the_weighted_interval_of_the_differences(weighted_pairs, strata):
    import dask.dataframe as dd

    frame = weighted_pairs
    paired = cs.paired_delta(frame, "new", "old", by="doc", weights="w", strata=strata)
    differences = frame.assign(d=frame["new"] - frame["old"])
    alone = cs.cluster_ci(differences, "d", by="doc", weights="w", strata=strata)
    assert (paired.delta, paired.low, paired.high, paired.se, paired.df) == pytest.approx(
        (alone.estimate, alone.low, alone.high, alone.se, alone.df), rel=1e-12
    )
    w = frame["w"]
    assert paired.mean_a == pytest.approx((w * frame["new"]).sum() / w.sum(), rel=1e-12)
    assert paired.weights == "w"
    assert paired.test == "weighted_t"
    lazy = cs.paired_delta(
        dd.from_pandas(frame, npartitions=2), "new", "old", by="doc", weights="w", strata=strata
    )
    a = frame[["doc", "item", "stratum", "new", "w"]].rename(columns={"new": "y"})
    b = frame[["doc", "item", "stratum", "old"]].rename(columns={"old": "y"})
    frames = cs.paired_delta(a, b, "y", by="doc", on="item", weights="w", strata=strata)
    for other in (lazy, frames):
        assert (other.low, other.high) == pytest.approx((paired.low, paired.high), rel=1e-12)


def test_paired_weights_errors(weighted_pairs):
    runs = pd.concat([weighted_pairs, weighted_pairs.assign(w=weighted_pairs["w"] + 1)])
    runs = runs.assign(run=np.repeat([0, 1], len(weighted_pairs)))
    a = runs[["doc", "item", "run", "new", "w"]].rename(columns={"new": "y"})
    b = runs[["doc", "item", "run", "old"]].rename(columns={"old": "y"})
    with pytest.raises(cs.InvalidOptionError, match=r"differs between the rows of 200 items"):
        cs.paired_delta(a, b, "y", by="doc", on="item", rerun="run", weights="w")
    with pytest.raises(cs.InvalidOptionError, match=r"method 'bootstrap_t' has no weighted"):
        cs.paired_delta(weighted_pairs, "new", "old", by="doc", weights="w", method="bootstrap_t")


@pytest.fixture(scope="module")
def weighted_models(weighted_pairs):
    rng = np.random.default_rng(4)
    frames = []
    for k, shift in enumerate((0.0, 0.3, 0.5)):
        ease = rng.normal(0, 1, 40)[weighted_pairs["doc"]] + shift
        frames.append(
            weighted_pairs[["doc", "item", "w"]].assign(
                model=f"m{k}", y=(rng.random(200) < 1 / (1 + np.exp(-ease))).astype(int)
            )
        )
    return pd.concat(frames, ignore_index=True)


def test_compare_weighted_pairs_and_scores(weighted_models):
    import dask.dataframe as dd

    options = {"by": "doc", "model": "model", "on": "item", "weights": "w"}
    res = cs.compare(weighted_models, "y", **options)
    assert res.weights == "w"
    assert res.method == "cr1"
    wide = weighted_models.pivot(index="item", columns="model", values="y")
    wide = wide.join(weighted_models.groupby("item")[["doc", "w"]].first())
    for row in res.pairs().itertuples():
        alone = cs.paired_delta(wide, row.model_a, row.model_b, by="doc", weights="w")
        assert (row.delta, row.low, row.high) == pytest.approx(
            (alone.delta, alone.low, alone.high), rel=1e-12
        )
    for model, row in res.leaderboard().set_index("model").iterrows():
        own = cs.cluster_ci(
            weighted_models[weighted_models["model"] == model], "y", by="doc", weights="w"
        )
        assert (row["score"], row["low"], row["high"]) == pytest.approx(
            (own.estimate, own.low, own.high), rel=1e-12
        )
    lazy = cs.compare(dd.from_pandas(weighted_models, npartitions=2), "y", **options)
    np.testing.assert_allclose(lazy.pairs()["high"], res.pairs()["high"], rtol=1e-12)
    with pytest.raises(cs.InvalidOptionError, match=r"no weighted form in compare"):
        cs.compare(weighted_models, "y", **options, method="bootstrap")
    varying = weighted_models.assign(
        w=weighted_models["w"] * (1 + (weighted_models["model"] == "m1"))
    )
    with pytest.raises(cs.InvalidOptionError, match=r"differs between the rows of 200 items"):
        cs.compare(varying, "y", **options)


def test_paired_and_compare_weights_on_datasets_equal_the_frames():
    import xarray as xr

    rng = np.random.default_rng(0)
    n = 60
    doc, w = np.repeat(np.arange(20), 3), rng.uniform(0.5, 2, n)
    runs = (rng.random((3, n, 2)) < 0.6).astype(float)
    coords = {"case": np.arange(n), "doc": ("case", doc), "w": ("case", w)}
    sides = [xr.Dataset({"y": (("case", "rerun"), runs[j])}, coords=coords) for j in (0, 1)]
    paired = cs.paired_delta(sides[0], sides[1], "y", by="doc", weights="w")
    items = pd.DataFrame({"doc": doc, "w": w, "a": runs[0].mean(axis=1), "b": runs[1].mean(axis=1)})
    frame = cs.paired_delta(items, "a", "b", by="doc", weights="w")
    assert (paired.delta, paired.low, paired.high) == pytest.approx(
        (frame.delta, frame.low, frame.high), rel=1e-12
    )
    models = xr.Dataset(
        {"y": (("model", "case", "rerun"), runs)}, coords={"model": ["x", "y", "z"], **coords}
    )
    arrays = cs.compare(models, "y", by="doc", model="model", weights="w")
    rows = pd.DataFrame(
        [
            {"model": m, "item": i, "doc": doc[i], "w": w[i], "run": k, "y": runs[j, i, k]}
            for j, m in enumerate("xyz")
            for i in range(n)
            for k in range(2)
        ]
    )
    long = cs.compare(rows, "y", by="doc", model="model", on="item", rerun="run", weights="w")
    np.testing.assert_allclose(arrays.pairs()["high"], long.pairs()["high"], rtol=1e-12)
    with pytest.raises(cs.InvalidOptionError, match=r"extra dims \['model'\]"):
        cs.paired_delta(models, models, "y", by="doc", weights="w")


def test_stratum_table_with_weights_on_a_dataset_equals_the_frame():
    import xarray as xr

    rng = np.random.default_rng(0)
    n = 120
    doc, w = np.repeat(np.arange(40), 3), rng.uniform(0.5, 2, n)
    y = (rng.random((n, 2)) < 0.6).astype(float)
    ds = xr.Dataset(
        {"passed": (("case", "rerun"), y)},
        coords={
            "case": np.arange(n),
            "doc": ("case", doc),
            "w": ("case", w),
            "s": ("case", doc % 4),
        },
    )
    frame = pd.DataFrame(
        {
            "doc": np.repeat(doc, 2),
            "w": np.repeat(w, 2),
            "s": np.repeat(doc % 4, 2),
            "passed": y.ravel(),
        }
    )
    options = {"by": "doc", "strata": "s", "weights": "w"}
    arrays = cs.stratum_table(ds, "passed", **options)
    long = cs.stratum_table(frame, "passed", **options)
    np.testing.assert_allclose(arrays["low"], long["low"], rtol=1e-12)
    np.testing.assert_allclose(arrays["weight_pooled"], long["weight_pooled"], rtol=1e-12)
