"""``over=`` with several columns: one result per combination that occurs, labelled by
tuples, in sorted order, each equal to the result for that combination alone, on pandas and
dask, in the rerun statistics, the gate and the command line."""

from __future__ import annotations

import json
import warnings

import numpy as np
import pandas as pd
import pytest

import clusterstats as cs
from clusterstats.cli import main


@pytest.fixture(scope="module")
def two_slices(mmlu):
    keep = mmlu.category.isin(["math", "physics", "law"])
    return mmlu[keep & mmlu.model.isin(["gemini-1.5-flash-002", "Meta-Llama-3.1-8B-Instruct"])]


def quiet(fn, *args, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", cs.ClusterStatsWarning)
        return fn(*args, **kwargs)


def test_every_combination_equals_its_rows_alone(two_slices):
    grouped = quiet(cs.cluster_ci, two_slices, "correct", "src", over=["model", "category"])
    assert grouped.over == ("model", "category")
    assert grouped.dims == ("model", "category")
    expected = sorted(set(zip(two_slices.model, two_slices.category, strict=True)))
    assert list(grouped.groups) == expected
    for (model, category), result in grouped.items():
        rows = two_slices[(two_slices.model == model) & (two_slices.category == category)]
        alone = quiet(cs.cluster_ci, rows, "correct", "src")
        assert result.estimate == pytest.approx(alone.estimate, rel=1e-12)
        assert (result.low, result.high) == pytest.approx((alone.low, alone.high), rel=1e-9)
        assert result.n_clusters == alone.n_clusters
    one = grouped.sel(model="gemini-1.5-flash-002", category="math")
    assert one is grouped[("gemini-1.5-flash-002", "math")]
    frame = grouped.to_frame()
    assert list(frame.columns[:2]) == ["model", "category"]
    assert len(frame) == len(expected)


def test_dask_gives_the_same_groups(two_slices):
    dd = pytest.importorskip("dask.dataframe")
    lazy = dd.from_pandas(two_slices, npartitions=3)
    for function in (cs.cluster_ci, cs.icc, cs.design_effect):
        expected = quiet(function, two_slices, "correct", "src", over=["category", "model"])
        got = quiet(function, lazy, "correct", "src", over=["category", "model"])
        pd.testing.assert_frame_equal(expected.to_frame(), got.to_frame())


def test_report_rerun_statistics_and_gate_take_several_columns(two_slices, tau):
    report = quiet(cs.report, two_slices, "correct", "src", over=["model", "category"])
    assert report.to_frame()["group"].iloc[0] == "Meta-Llama-3.1-8B-Instruct, law"
    assert report.over == "model, category"
    runs = tau.assign(half=tau.task_id % 2, third=tau.task_id % 3)
    grouped = quiet(
        cs.pass_at_k, runs, "reward", k=2, case="task_id", rerun="trial", over=["half", "third"]
    )
    assert list(grouped.groups) == [(h, t) for h in (0, 1) for t in (0, 1, 2)]
    rows = runs[(runs.half == 1) & (runs.third == 2)]
    alone = quiet(cs.pass_at_k, rows, "reward", k=2, case="task_id", rerun="trial")
    assert (grouped[(1, 2)].low, grouped[(1, 2)].high) == (alone.low, alone.high)
    gates = quiet(cs.gate, two_slices, "correct", "src", at_least=0.3, over=["model", "category"])
    assert [g.group for g in gates.gates][:2] == [
        "Meta-Llama-3.1-8B-Instruct, law",
        "Meta-Llama-3.1-8B-Instruct, math",
    ]
    a = two_slices[two_slices.model == "gemini-1.5-flash-002"].assign(arm="x")
    b = two_slices[two_slices.model == "Meta-Llama-3.1-8B-Instruct"].assign(arm="x")
    paired = quiet(
        cs.gate,
        a,
        "correct",
        "src",
        baseline=b,
        on="question_id",
        margin=0.0,
        over=["category", "arm"],
    )
    assert [g.group for g in paired.gates] == ["law, x", "math, x", "physics, x"]


def test_bad_over_lists_are_precise_errors(two_slices):
    with pytest.raises(cs.InvalidOptionError, match="over= needs at least one column"):
        cs.cluster_ci(two_slices, "correct", "src", over=[])
    with pytest.raises(cs.ColumnNotFoundError, match="'nope'"):
        cs.cluster_ci(two_slices, "correct", "src", over=["model", "nope"])
    holes = two_slices.assign(category=two_slices.category.mask(np.arange(len(two_slices)) < 3))
    with pytest.raises(cs.InvalidClusterError, match=r"column 'category' \(over=\) has 3 missing"):
        cs.cluster_ci(holes, "correct", "src", over=["model", "category"])
    with pytest.raises(cs.InvalidOptionError, match="is also a cluster column"):
        cs.report(two_slices, "correct", "src", over=["model", "src"])


def test_cli_over_repeated(two_slices, tmp_path, capsys):
    path = tmp_path / "slices.csv"
    two_slices.to_csv(path, index=False)
    words = ["ci", str(path), "--outcome", "correct", "--by", "src", "--over", "model"]
    assert main([*words, "--over", "category", "--output", "json"]) == 0
    records = json.loads(capsys.readouterr().out)
    assert records[0]["group"] == {"model": "Meta-Llama-3.1-8B-Instruct", "category": "law"}
    assert len(records) == 6
    assert main([*words, "--over", "category", "--output", "table"]) == 0
    assert "Meta-Llama-3.1-8B-Instruct, law" in capsys.readouterr().out
