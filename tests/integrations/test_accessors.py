"""The `.eval` accessors: they add clustered statistics without breaking pandas or xarray."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pandas as pd
import pytest
import xarray as xr

import clusterstats as cs


@pytest.fixture
def frame() -> pd.DataFrame:
    return pd.DataFrame({"a": [1, 2, 3, 4], "b": [10.0, 20.0, 30.0, 40.0]})


def test_import_prints_no_warning():
    code = "import warnings; warnings.simplefilter('error'); import clusterstats"
    proc = subprocess.run(
        [sys.executable, "-W", "error", "-c", code], capture_output=True, text=True, check=False
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr == ""


def test_dataframe_eval_assignment_still_works(frame):
    out = frame.eval("c = a + b")
    assert out["c"].tolist() == [11.0, 22.0, 33.0, 44.0]
    assert "c" not in frame.columns  # not in place


def test_dataframe_eval_expression_with_local_variable(frame):
    x = 5  # noqa: F841 (read by pandas through "@x")
    assert frame.eval("a + @x").tolist() == [6, 7, 8, 9]


def test_dataframe_eval_local_inside_nested_function(frame):
    def inner():
        threshold = 2  # noqa: F841 (read by pandas through "@threshold")
        return frame.eval("a > @threshold").tolist()

    assert inner() == [False, False, True, True]


def test_dataframe_query_with_local_variable(frame):
    x = 2  # noqa: F841 (read by pandas through "@x")
    assert frame.query("a > @x")["a"].tolist() == [3, 4]
    assert frame.query("b < 25 and a >= 2")["a"].tolist() == [2]


def test_dataframe_eval_explicit_local_dict_and_keywords(frame):
    assert frame.eval("a * @k", local_dict={"k": 3}).tolist() == [3, 6, 9, 12]
    assert frame.eval("a + 1", engine="python").tolist() == [2, 3, 4, 5]


def test_dataframe_eval_behaves_like_the_unpatched_method(frame):
    from clusterstats import _accessors

    original = _accessors._ORIGINAL["pandas"]
    x = 1.5  # noqa: F841 (read by pandas through "@x")
    expected = original(frame, "b / a + @x", level=0)  # called directly from this frame
    pd.testing.assert_series_equal(frame.eval("b / a + @x"), expected)


def test_dataset_eval_still_works():
    ds = xr.Dataset({"a": ("x", np.arange(3.0)), "b": ("x", np.array([1.0, 2.0, 3.0]))})
    np.testing.assert_array_equal(ds.eval("a + b").values, [1.0, 3.0, 5.0])
    assert "c" in ds.eval("c = a * b").data_vars


def test_accessor_is_stateless_and_exposes_methods(frame):
    acc = frame.eval
    assert not hasattr(acc, "__dict__")  # __slots__: nothing but the frame
    assert callable(acc)
    for name in ("cluster_ci", "icc", "design_effect"):
        assert callable(getattr(acc, name))


def test_accessor_methods_delegate_to_the_functional_api(mmlu):
    part = mmlu[mmlu.model == mmlu.model.iloc[0]]
    assert (
        part.eval.cluster_ci("correct", by="src").to_dict()
        == cs.cluster_ci(part, "correct", by="src").to_dict()
    )
    assert part.eval.icc("correct", by="src").to_dict() == cs.icc(part, "correct", "src").to_dict()
    assert part.eval.design_effect("correct", by="src", estimand="cluster_mean").to_dict() == (
        cs.design_effect(part, "correct", "src", estimand="cluster_mean").to_dict()
    )
    grouped = mmlu.eval.cluster_ci("correct", by="src", over="model", method="cr2")
    assert grouped.to_frame().equals(
        cs.cluster_ci(mmlu, "correct", "src", over="model", method="cr2").to_frame()
    )


def test_accessor_methods_never_modify_the_frame(bbh):
    frame = bbh.copy()
    before = frame.copy(deep=True)
    frame.eval.cluster_ci(
        "correct", by="task", over="condition", method="bootstrap", n_resamples=200, rng=0
    )
    frame.eval.icc("correct", by=["task", "condition"])
    frame.eval.design_effect("correct", by="task", over="condition", missing="fail")
    pd.testing.assert_frame_equal(frame, before)
