"""dask: chunked Datasets and dask DataFrames give the numbers of the in-memory paths.

Expected numbers come from the numpy/pandas paths on the same data (themselves tested against
R and statsmodels elsewhere).
"""

from __future__ import annotations

import subprocess
import sys
import warnings

import numpy as np
import pandas as pd
import pytest

import clusterstats as cs
from clusterstats.core.intervals import METHODS

dd = pytest.importorskip("dask.dataframe")
pytest.importorskip("dask.array")


def quiet(fn, *args, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", cs.ClusterStatsWarning)
        return fn(*args, **kwargs)


def same(got, expected, rtol=1e-10):
    a, b = got.to_frame(), expected.to_frame()
    assert list(a.columns) == list(b.columns)
    for column in a.columns:
        if pd.api.types.is_float_dtype(a[column]):
            np.testing.assert_allclose(a[column], b[column], rtol=rtol, atol=1e-13, err_msg=column)
        else:
            assert a[column].tolist() == b[column].tolist(), column


@pytest.fixture(scope="module")
def crux_ds(cruxeval):
    return cs.to_case_rerun(
        cruxeval, case="problem_id", rerun="sample_index", outcome="correct", dims=["task"]
    )


@pytest.mark.parametrize("method", METHODS)
def test_chunked_dataset_gives_the_in_memory_numbers(crux_ds, method):
    chunked = crux_ds.chunk({"case": 97, "rerun": 3})  # uneven chunks, runs split too
    options = {"method": method, "n_resamples": 499, "rng": 2}
    got = quiet(chunked.eval.cluster_ci, "correct", **options)
    expected = quiet(crux_ds.eval.cluster_ci, "correct", **options)
    for task in expected.groups:
        same(got[task], expected[task])
    assert chunked["correct"].chunks is not None  # the caller's Dataset stays lazy


def test_chunked_dataset_every_statistic(crux_ds, tau):
    chunked = crux_ds.chunk({"case": 128})
    for name, options in [
        ("icc", {}),
        ("design_effect", {}),
        ("pass_at_k", {"k": 5}),
        ("pass_hat_k", {"k": 3}),
        ("flakiness", {}),
    ]:
        got = getattr(chunked.eval, name)("correct", **options)
        expected = getattr(crux_ds.eval, name)("correct", **options)
        for task in expected.groups:
            same(got[task], expected[task])
    tau_ds = cs.to_case_rerun(tau, case="task_id", rerun="trial", outcome="reward")
    lazy = tau_ds.chunk({"case": 7})
    same(lazy.eval.cluster_ci("reward", "user_id"), tau_ds.eval.cluster_ci("reward", "user_id"))
    one = crux_ds.sel(task="input_prediction", drop=True)
    other = crux_ds.sel(task="output_prediction", drop=True)
    same(
        one.chunk({"case": 50}).eval.paired_delta(other.chunk({"case": 64}), "correct"),
        one.eval.paired_delta(other, "correct"),
    )


def test_under_a_distributed_client(crux_ds):
    distributed = pytest.importorskip("distributed")
    with (
        distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=False) as cluster,
        distributed.Client(cluster),
    ):
        got = crux_ds.chunk({"case": 100}).eval.pass_at_k("correct", k=5)
    same(got["output_prediction"], crux_ds.eval.pass_at_k("correct", k=5)["output_prediction"])


@pytest.fixture(scope="module")
def mmlu_dask(mmlu):
    return dd.from_pandas(mmlu, npartitions=5)


@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize("missing", ["drop", "fail"])
def test_dask_dataframe_gives_the_pandas_numbers(mmlu, mmlu_dask, method, missing):
    options = {"method": method, "missing": missing, "n_resamples": 499, "rng": 4}
    got = quiet(mmlu_dask.eval.cluster_ci, "correct", "src", over="model", **options)
    expected = quiet(mmlu.eval.cluster_ci, "correct", by="src", over="model", **options)
    assert list(got.groups) == sorted(expected.groups)
    for model in expected.groups:
        same(got[model], expected[model])


def test_dask_dataframe_other_methods(mmlu, mmlu_dask, cruxeval):
    # the four models pooled on purpose (pandas warns RepeatedItemsWarning; dask is not
    # read twice to look): the same numbers from both
    same(mmlu_dask.eval.icc("correct", "src"), quiet(mmlu.eval.icc, "correct", by="src"))
    same(
        mmlu_dask.eval.design_effect("correct", ["category", "src"]),
        quiet(mmlu.eval.design_effect, "correct", by=["category", "src"]),
    )
    options = {"by": "src", "model": "model", "on": "question_id", "how": "inner", "rng": 0}
    pd.testing.assert_frame_equal(
        quiet(mmlu_dask.eval.compare, "correct", **options).to_frame(),
        quiet(mmlu.eval.compare, "correct", **options).to_frame(),
    )
    crux = dd.from_pandas(cruxeval, npartitions=3)
    options = {"k": 4, "case": "problem_id", "rerun": "sample_index", "over": "task"}
    got = crux.eval.pass_hat_k("correct", **options)
    expected = cruxeval.eval.pass_hat_k("correct", **options)
    for task in expected.groups:
        same(got[task], expected[task])
    assert float(mmlu_dask.eval("correct * 2").sum().compute()) == 2 * mmlu["correct"].sum()


def test_dask_dataframe_errors(mmlu_dask):
    with pytest.raises(cs.ColumnNotFoundError, match="'nope' not found"):
        mmlu_dask.eval.cluster_ci("correct", "nope")
    with pytest.raises(cs.MissingOutcomeError, match="missing values"):
        mmlu_dask.eval.cluster_ci("correct", "src", missing="raise")
    with pytest.raises(cs.InvalidOutcomeError, match="not numeric"):
        mmlu_dask.eval.cluster_ci("model", "src")


def test_accessor_registered_when_dask_is_imported_after_clusterstats():
    code = (
        "import sys, clusterstats\n"
        "assert 'dask.dataframe' not in sys.modules\n"
        "import pandas as pd, dask.dataframe as dd\n"
        "df = dd.from_pandas(pd.DataFrame({'g': [1, 1, 2, 2, 3, 3] * 4, "
        "'y': [1, 0, 1, 1, 0, 0] * 4}), npartitions=2)\n"
        "print(type(df.eval).__name__, df.eval.icc('y', 'g').n_clusters)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["DaskEvalAccessor", "3"]


def test_dask_dataframe_missing_policies(mmlu, mmlu_dask):
    marked = mmlu.assign(answered=mmlu.pred_missing.eq(0))
    lazy = dd.from_pandas(marked, npartitions=4)
    for missing in ("pass", "ipw"):
        got = quiet(lazy.eval.cluster_ci, "correct", "src", missing=missing, responded="answered")
        expected = quiet(
            marked.eval.cluster_ci, "correct", by="src", missing=missing, responded="answered"
        )
        same(got, expected)
    same(
        mmlu_dask.eval.cluster_ci("correct", "src", missing="pass"),
        quiet(mmlu.eval.cluster_ci, "correct", by="src", missing="pass"),
    )
    report = quiet(lazy.eval.missing_report, "correct", "src", responded="answered")
    assert report.n_missing == int((~marked.answered).sum())
