"""The Dataset accessor on (case, rerun) Datasets: the same numbers as the pandas path.

Sources of expected numbers: the pandas path on the same rows (every method), the τ-bench
README's published pass^k (quoted in ``clusterstats/data/PROVENANCE.md``), REPORT §8's pass@k
examples and closed forms (SE across problems = sd/sqrt(P) with t(P-1)), and brute-force
enumeration.
"""

from __future__ import annotations

import itertools
import math
import warnings

import numpy as np
import pandas as pd
import pytest
import xarray as xr

import clusterstats as cs
from clusterstats.core.intervals import METHODS


def quiet(fn, *args, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", cs.ClusterStatsWarning)
        return fn(*args, **kwargs)


@pytest.fixture(scope="module")
def tau_ds(tau):
    return cs.to_case_rerun(tau, case="task_id", rerun="trial", outcome="reward")


@pytest.fixture(scope="module")
def crux_ds(cruxeval):
    return cs.to_case_rerun(
        cruxeval, case="problem_id", rerun="sample_index", outcome="correct", dims=["task"]
    )


def assert_same_result(got, expected, rtol=1e-10):
    """Every column of two results' frames equal (floats to rtol, the rest exactly)."""
    a, b = got.to_frame(), expected.to_frame()
    assert list(a.columns) == list(b.columns)
    for column in a.columns:
        if pd.api.types.is_float_dtype(a[column]):
            np.testing.assert_allclose(a[column], b[column], rtol=rtol, atol=1e-13, err_msg=column)
        else:
            assert a[column].tolist() == b[column].tolist(), column


ANALYTIC = [m for m in METHODS if not m.startswith("bootstrap")]


@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize("by", [None, "user_id"])
def test_cluster_ci_equals_the_pandas_path(tau, tau_ds, method, by):
    options = {"method": method, "n_resamples": 999, "rng": 5}
    got = quiet(tau_ds.eval.cluster_ci, "reward", by, **options)
    # without by, the Dataset's clusters are its cases, named by the column to_case_rerun
    # made them from
    expected = quiet(tau.eval.cluster_ci, "reward", by=by or "task_id", **options)
    assert_same_result(got, expected)


@pytest.mark.parametrize("estimand", ["pooled", "cluster_mean"])
def test_icc_and_design_effect_equal_the_pandas_path(tau, tau_ds, estimand):
    assert_same_result(tau_ds.eval.icc("reward", "user_id"), tau.eval.icc("reward", by="user_id"))
    assert_same_result(
        tau_ds.eval.design_effect("reward", "user_id", estimand=estimand),
        tau.eval.design_effect("reward", by="user_id", estimand=estimand),
    )


def test_extra_dims_give_one_result_each(cruxeval, crux_ds):
    got = crux_ds.eval.cluster_ci("correct", method="cr2")
    expected = cruxeval.eval.cluster_ci("correct", by="problem_id", over="task", method="cr2")
    assert isinstance(got, cs.GroupedResults)
    assert got.dims == ("task",)
    assert list(got.groups) == sorted(expected.groups)
    for task in got.groups:
        row, ref = got[task], expected[task]
        assert row.estimate == pytest.approx(ref.estimate, rel=1e-12)
        assert row.se == pytest.approx(ref.se, rel=1e-10)
        assert (row.low, row.high) == pytest.approx((ref.low, ref.high), rel=1e-10)
    assert got.sel(task="input_prediction") is got["input_prediction"]
    table = got.to_xarray()
    assert set(table.dims) == {"task"}
    assert {"estimate", "low", "high", "se"} <= set(table.data_vars)
    assert table.attrs["method"] == "cr2"
    assert table.attrs["estimand"] == "pooled"
    assert table.attrs["confidence"] == 0.95
    np.testing.assert_allclose(
        table["estimate"].sel(task="output_prediction"), got["output_prediction"].estimate
    )
    frame = got.to_frame()
    assert frame.columns[0] == "task"
    assert len(frame) == 2


def test_two_extra_dims(cruxeval):
    doubled = pd.concat([cruxeval.assign(seed=0), cruxeval.assign(seed=1)])
    ds = cs.to_case_rerun(
        doubled,
        case="problem_id",
        rerun="sample_index",
        outcome="correct",
        dims=["task", "seed"],
    )
    res = ds.eval.icc("correct")
    assert res.dims == ("task", "seed")
    assert len(res) == 4
    assert res.sel(task="output_prediction", seed=1).icc == pytest.approx(
        res[("output_prediction", 0)].icc
    )
    assert res.to_xarray()["icc"].shape == (2, 2)


def test_tau_bench_pass_hat_k_reproduces_the_published_figures(tau_ds):
    # tau-bench README, "TC (gpt-4o)" airline row (quoted in clusterstats/data/PROVENANCE.md)
    published = {1: 0.420, 2: 0.273, 3: 0.220, 4: 0.200}
    for k, value in published.items():
        res = tau_ds.eval.pass_hat_k("reward", k=k)
        assert round(res.estimate, 3) == value
        assert res.n_cases == 50
        assert res.low < res.estimate < res.high


def test_pass_k_report_examples():
    # REPORT section 8, passk.examples: (n, c) per problem
    examples = [(10, 0), (10, 1), (10, 3), (10, 7), (10, 10), (5, 2)]
    rows = [(case, run, int(run < c)) for case, (n, c) in enumerate(examples) for run in range(n)]
    df = pd.DataFrame(rows, columns=["case", "rerun", "passed"])
    ds = cs.to_case_rerun(df, case="case", rerun="rerun", outcome="passed")
    assert ds["passed"].isnull().sum() == 5  # the 5-run problem: NaN means no run
    ds = ds.assign_attrs(note="6 problems: fewer than 20 clusters warn")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", cs.FewClustersWarning)
        check_report_examples(ds, df)


def check_report_examples(ds, df):
    assert ds.eval.pass_at_k("passed", k=2).estimate == pytest.approx(0.56111, abs=5e-6)
    assert ds.eval.pass_hat_k("passed", k=2).estimate == pytest.approx(0.27222, abs=5e-6)
    assert ds.eval.pass_at_k("passed", k=5).estimate == pytest.approx(0.73611, abs=5e-6)
    assert df.eval.pass_at_k("passed", k=5).estimate == pytest.approx(0.73611, abs=5e-6)


def test_pass_at_k_matches_enumeration_and_its_se_is_sd_over_root_p(cruxeval):
    one = cruxeval[cruxeval.task == "output_prediction"]
    res = one.eval.pass_at_k("correct", k=3, case="problem_id", rerun="sample_index")
    per_case = []
    for _, runs in one.groupby("problem_id"):
        outcomes = runs["correct"].to_numpy()
        draws = list(itertools.combinations(outcomes, 3))
        per_case.append(np.mean([max(d) for d in draws]))
    per_case = np.asarray(per_case)
    n_cases = per_case.size
    assert res.estimate == pytest.approx(per_case.mean(), rel=1e-12)
    # the default is the studentized bootstrap, whose reported se is CR3's (the jackknife
    # floor it never narrows): sum(e^2) / (P - 1)^2 = sd^2 / (P - 1) for P case means
    assert res.se == pytest.approx(per_case.std(ddof=1) / math.sqrt(n_cases - 1), rel=1e-10)
    assert res.method == "bootstrap_t"
    assert math.isnan(res.df)
    cr2 = one.eval.pass_at_k("correct", k=3, case="problem_id", rerun="sample_index", method="cr2")
    assert cr2.se == pytest.approx(per_case.std(ddof=1) / math.sqrt(n_cases), rel=1e-10)
    assert cr2.df == pytest.approx(n_cases - 1)
    assert (res.low, res.high) != (cr2.low, cr2.high)
    assert res.low <= cr2.low
    assert res.high >= cr2.high
    assert res.estimand == "case_mean"


def test_fewer_runs_than_k(tau):
    short = tau[~((tau.task_id < 3) & (tau.trial == 3))]
    with pytest.raises(cs.InvalidOptionError, match=r"3 cases have fewer than k=4 runs"):
        short.eval.pass_hat_k("reward", k=4, case="task_id", rerun="trial")
    res = short.eval.pass_hat_k("reward", k=4, case="task_id", rerun="trial", fewer_runs="drop")
    assert res.n_excluded == 3
    assert res.n_cases == 47
    assert "3 cases with fewer than 4 runs were left out" in res.notes
    three = short.eval.pass_hat_k("reward", k=3, case="task_id", rerun="trial")
    assert (three.runs_min, three.runs_max) == (3, 4)


def test_flakiness_on_tau_bench(tau, tau_ds):
    res = tau_ds.eval.flakiness("reward")
    # PROVENANCE section 4: successes per task (0..4 of 4) = 14, 12, 10, 4, 10 tasks
    assert res.n_flaky == 12 + 10 + 4
    assert res.n_cases == 50
    assert res.disagreement == pytest.approx((12 * 0.25 + 10 * 0.5 + 4 * 0.25) / 50)
    assert res.icc == pytest.approx(tau.eval.icc("reward", by="task_id").icc, rel=1e-12)
    assert res.effective_runs == pytest.approx(4 / (1 + 3 * res.icc))
    table = res.per_case()
    assert table["flaky"].sum() == 26
    assert len(table) == 50
    assert list(table.columns) == ["case", "runs", "passes", "disagreement", "flaky"]
    ci = cs.cluster_ci(table.assign(f=table["flaky"].astype(int)), "f", by="case")
    assert (res.low, res.high) == pytest.approx((ci.low, ci.high), rel=1e-12)


def test_reruns_copied_at_temperature_zero_are_worth_one_run():
    # seed 002: at temperature 0, 30 reruns are one run copied 30 times
    rng = np.random.default_rng(0)
    first = rng.integers(0, 2, 40).astype(float)
    ds = xr.Dataset({"passed": (("case", "rerun"), np.repeat(first[:, None], 30, axis=1))})
    with pytest.warns(cs.DegenerateDataWarning):
        res = ds.eval.flakiness("passed")
    assert res.n_flaky == 0
    assert res.icc == pytest.approx(1.0)
    assert res.effective_runs == pytest.approx(1.0)
    assert res.high > 0  # never a zero-width interval: an upper bound on the flaky rate


def test_bad_inputs(tau_ds):
    renamed = tau_ds.rename({"case": "task"})
    with pytest.raises(cs.DimensionError, match=r"dims \('task', 'rerun'\) but no case dim"):
        renamed.eval.cluster_ci("reward")
    assert renamed.eval.cluster_ci("reward", case="task").n_clusters == 50
    with pytest.raises(cs.ColumnNotFoundError, match="'score' not found"):
        tau_ds.eval.cluster_ci("score")
    with pytest.raises(cs.DimensionError, match="must be a coordinate along the case dim"):
        tau_ds.eval.cluster_ci("reward", by="rerun")
    scores = tau_ds.assign(score=tau_ds["reward"] * 0.5)
    with pytest.raises(cs.InvalidOutcomeError, match="binary"):
        scores.eval.pass_at_k("score", k=2)
    with pytest.raises(cs.InvalidOptionError, match="k must be a positive integer"):
        tau_ds.eval.pass_at_k("reward", k=0)
    before = tau_ds.copy(deep=True)
    tau_ds.eval.flakiness("reward")
    tau_ds.eval.cluster_ci("reward", "user_id")
    xr.testing.assert_identical(tau_ds, before)
    assert float(tau_ds.eval("reward * 2").sum()) == 2 * float(tau_ds["reward"].sum())


def test_to_case_rerun_checks_its_input(tau):
    with pytest.raises(cs.AlignmentError, match=r"1 \(case, rerun\) combinations"):
        cs.to_case_rerun(
            pd.concat([tau, tau.iloc[:1]]), case="task_id", rerun="trial", outcome="reward"
        )
    stamped = tau.assign(started=np.arange(len(tau)))
    with pytest.raises(cs.AlignmentError, match="rerun=None to number"):
        cs.to_case_rerun(stamped, case="task_id", rerun="started", outcome="reward")
    numbered = cs.to_case_rerun(stamped, case="task_id", outcome="reward", coords=["user_id"])
    assert list(numbered.coords) == ["case", "rerun", "user_id"]
    with pytest.raises(cs.AlignmentError, match="constant within each case"):
        cs.to_case_rerun(tau, case="task_id", outcome="reward", coords=["n_messages"])


def test_paired_delta_on_datasets_equals_the_pandas_path(cruxeval, crux_ds):
    one_task = crux_ds.sel(task="input_prediction", drop=True)
    other_task = crux_ds.sel(task="output_prediction", drop=True)
    frame_a = cruxeval[cruxeval.task == "input_prediction"]
    frame_b = cruxeval[cruxeval.task == "output_prediction"]
    for method in ("cr2", "cr1", "naive", "bootstrap"):
        got = one_task.eval.paired_delta(
            other_task, "correct", method=method, n_resamples=999, rng=1
        )
        expected = cs.paired_delta(
            frame_a,
            frame_b,
            "correct",
            by="problem_id",
            on="problem_id",
            rerun="sample_index",
            method=method,
            n_resamples=999,
            rng=1,
        )
        assert got.delta == pytest.approx(expected.delta, rel=1e-12)
        assert got.se == pytest.approx(expected.se, rel=1e-10)
        assert (got.low, got.high) == pytest.approx((expected.low, expected.high), rel=1e-10)
        assert got.rerun_variance_share == pytest.approx(expected.rerun_variance_share, rel=1e-10)
        assert got.max_runs == 10
        assert got.n_items == 800


def test_paired_delta_alignment_on_datasets(tau_ds):
    fewer = tau_ds.isel(case=slice(0, 45)).copy(deep=True)
    fewer["reward"][0, :] = 1 - fewer["reward"][0, :]  # case 0 now differs
    with pytest.raises(cs.AlignmentError, match=r"0 cases only in A .* 5 only in B"):
        fewer.eval.paired_delta(tau_ds, "reward")
    res = fewer.eval.paired_delta(tau_ds, "reward", how="inner")
    assert res.n_items == 45
    assert res.n_dropped_b == 5
    assert res.delta == pytest.approx(1 / 45)
    assert res.low < res.delta < res.high
    moved = tau_ds.assign_coords(user_id=tau_ds["user_id"].where(tau_ds["case"] != 3, "x"))
    with pytest.raises(cs.AlignmentError, match="1 cases are in a different 'user_id'"):
        moved.eval.paired_delta(tau_ds, "reward", "user_id")


def test_new_results_display_and_convert(tau_ds, crux_ds):
    res = tau_ds.eval.pass_hat_k("reward", k=2)
    text = repr(res)
    assert text.startswith("PassAtK(pass^2 of reward by task_id")
    assert "50 cases (4 runs each) in 50 clusters" in text
    assert "<table" in res._repr_html_()
    assert list(res.to_frame().columns) == list(cs.PassAtK.columns)
    assert float(res) == res.estimate
    flaky = tau_ds.eval.flakiness("reward")
    assert "26 of 50" in repr(flaky)
    assert "<table" in flaky._repr_html_()
    assert set(flaky.to_dict()) == set(cs.Flakiness.columns)
    assert list(flaky.to_frame().columns) == list(cs.Flakiness.columns)
    grouped = crux_ds.eval.pass_at_k("correct", k=1)
    assert "PassAtK over task" in repr(grouped)
    assert grouped._repr_html_().count("<tr") == 3
    # pass@1 is the mean of the runs when every case has the same number of them, and its
    # default (studentized bootstrap) reports the jackknife (CR3) standard error
    means = crux_ds.eval.cluster_ci("correct", estimand="cluster_mean", method="cr3")
    for task in grouped.groups:
        assert grouped[task].estimate == pytest.approx(means[task].estimate, rel=1e-12)
        assert grouped[task].se == pytest.approx(means[task].se, rel=1e-10)
