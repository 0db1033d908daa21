"""The gaps between backends that the single design closed, each as a user met it."""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest

import clusterstats as cs

dd = pytest.importorskip("dask.dataframe")


@pytest.fixture(scope="module")
def mixtral(mmlu):
    return mmlu[mmlu.model == "Mixtral-8x7B-Instruct-v0.1"].reset_index(drop=True)


def test_dask_strata_gives_the_r_survey_answer(mixtral):
    # R survey: svymean(~correct, svydesign(ids=~src, strata=~category, data=d)); the value
    # is printed by tests/r/strata.R and checked against pandas in tests/stats/test_strata.py.
    lazy = dd.from_pandas(mixtral, npartitions=4)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", cs.ClusterStatsWarning)
        got = lazy.eval.cluster_ci("correct", by="src", strata="category", method="cr1")
        expected = cs.cluster_ci(mixtral, "correct", by="src", strata="category", method="cr1")
    assert got.se == pytest.approx(0.0238146963086566, rel=1e-12)
    assert got.to_frame().equals(expected.to_frame()) or np.allclose(
        got.to_frame().select_dtypes("number"), expected.to_frame().select_dtypes("number")
    )
    assert got.notes == expected.notes


def test_dask_responded_in_paired_delta_and_compare(mmlu):
    marked = mmlu.assign(answered=mmlu.pred_missing.eq(0))
    lazy = dd.from_pandas(marked, npartitions=6)
    a, b = "Meta-Llama-3.1-8B-Instruct", "Mixtral-8x7B-Instruct-v0.1"
    options = {"by": "src", "on": "question_id", "responded": "answered", "how": "inner"}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", cs.ClusterStatsWarning)
        expected = cs.paired_delta(
            marked[marked.model == a], marked[marked.model == b], "correct", **options
        )
        got = lazy[lazy.model == a].eval.paired_delta(lazy[lazy.model == b], "correct", **options)
        assert got.delta == pytest.approx(expected.delta, rel=1e-12)
        assert got.n_missing_items == expected.n_missing_items > 0
        compared = lazy.eval.compare("correct", model="model", rng=0, n_resamples=99, **options)
        reference = cs.compare(marked, "correct", model="model", rng=0, n_resamples=99, **options)
    assert compared.delta == pytest.approx(reference.delta, rel=1e-12)
    assert compared.n_missing_items == reference.n_missing_items > 0


def test_dask_results_carry_the_missingness_note(mmlu):
    lazy = dd.from_pandas(mmlu, npartitions=5)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", cs.ClusterStatsWarning)
        got = lazy.eval.cluster_ci("correct", by="src", over="model", responded=None)
        expected = cs.cluster_ci(mmlu, "correct", by="src", over="model")
    flash = got["gemini-1.5-flash-002"]
    assert flash.n_missing == 20
    assert flash.notes == expected["gemini-1.5-flash-002"].notes
    assert any("missing" in note for note in flash.notes)


def test_missing_outcome_through_to_case_rerun_is_counted():
    frame = pd.DataFrame(
        {
            "task": np.repeat(np.arange(30), 3),
            "trial": np.tile([0, 1, 2], 30),
            "reward": np.random.default_rng(5).integers(0, 2, 90).astype(float),
        }
    )
    frame.loc[4, "reward"] = np.nan  # a run that errored: it happened, its outcome is missing
    ds = cs.to_case_rerun(frame, case="task", rerun="trial", outcome="reward")
    assert ds["reward"].attrs["ran"] == "ran"
    assert int(ds["ran"].sum()) == 90
    from_frame = cs.cluster_ci(frame, "reward", by="task")
    from_dataset = ds.eval.cluster_ci("reward")
    assert from_dataset.n_missing == from_frame.n_missing == 1
    assert from_dataset.notes == from_frame.notes
    assert from_dataset.notes[0].startswith("1 row with a missing outcome (in 1 cluster) was")
    fail = ds.eval.cluster_ci("reward", missing="fail")
    assert fail.n_rows == 90
    assert fail.estimate == pytest.approx(
        cs.cluster_ci(frame, "reward", "task", missing="fail").estimate
    )


@pytest.mark.parametrize("name", ["_y", "_missing", "rows", "answered", "key0", "total"])
def test_dask_cluster_columns_cannot_collide_with_internal_names(name):
    rng = np.random.default_rng(1)
    frame = pd.DataFrame({name: np.repeat(np.arange(40), 5), "passed": rng.integers(0, 2, 200)})
    expected = cs.cluster_ci(frame, "passed", by=name)
    got = dd.from_pandas(frame, npartitions=3).eval.cluster_ci("passed", by=name)
    assert got.estimate == pytest.approx(expected.estimate, rel=1e-12)
    assert (got.low, got.high) == pytest.approx((expected.low, expected.high), rel=1e-12)
    assert got.n_clusters == 40


def test_datasets_take_strata_compare_report_plan_and_check_clustering(cruxeval):
    crux = cruxeval.assign(block=cruxeval["problem_id"].str[7:].astype(int) // 100)
    ds = cs.to_case_rerun(
        crux, case="problem_id", rerun="sample_index", outcome="correct", dims=["task"]
    )
    one = ds.sel(task="input_prediction")
    frame = crux[crux.task == "input_prediction"]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", cs.ClusterStatsWarning)
        stratified = one.eval.cluster_ci("correct", strata="block", method="cr1")
        reference = cs.cluster_ci(frame, "correct", "problem_id", strata="block", method="cr1")
        assert stratified.se == pytest.approx(reference.se, rel=1e-12)
        comparison = ds.eval.compare("correct", model="task", rng=0, n_resamples=99)
        expected = cs.compare(
            crux,
            "correct",
            "problem_id",
            model="task",
            on="problem_id",
            rerun="sample_index",
            rng=0,
            n_resamples=99,
        )
        assert comparison.delta == pytest.approx(expected.delta, rel=1e-12)
        # the Dataset's cases are named by the column to_case_rerun made them from
        by_case = cs.report(crux, "correct", "problem_id", over="task")
        assert ds.eval.report("correct").to_markdown() == by_case.to_markdown()
        plan = one.eval.plan("correct", target_half_width=0.02)
        assert plan.icc == pytest.approx(cs.pilot_plan(frame, "correct", "problem_id").icc)
        check = one.eval.check_clustering("correct", ["case", "block"])
        assert [c["grouping"] for c in check.candidates] == ["case", "block"]


def test_over_is_refused_on_datasets_with_the_reason(tau):
    ds = cs.to_case_rerun(tau, case="task_id", rerun="trial", outcome="reward")
    with pytest.raises(cs.InvalidOptionError, match="extra dims are used as they are"):
        ds.eval.cluster_ci("reward", over="user_id")
    with pytest.raises(cs.InvalidOptionError, match="on= is for DataFrames"):
        ds.eval.paired_delta(ds, "reward", on="task_id")
    with pytest.raises(cs.InvalidOptionError, match="by= names the cluster column"):
        cs.cluster_ci(tau, "reward")
