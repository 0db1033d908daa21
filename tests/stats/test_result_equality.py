"""Results compare equal when their fields are equal, NaN included, on every Python.

Python's generated dataclass ``__eq__`` compared fields as one tuple before 3.13 (a NaN was
equal only to the very same NaN object) and one by one since (a NaN equal to nothing), so a
copy of a result with a NaN field compared unequal on 3.13 and a recomputed one on every
Python. These tests build their NaNs afresh, so they fail under either generated ``__eq__``.
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pandas as pd
import pytest
import xarray as xr

import clusterstats as cs
from clusterstats._result import same_value


@pytest.fixture(scope="module")
def demo() -> pd.DataFrame:
    return cs.load_demo_data()


@pytest.fixture(scope="module")
def unweighted(demo) -> cs.ClusterCI:
    result = cs.cluster_ci(demo[demo["model"] == demo["model"].iloc[0]], "correct", by="src")
    # without weights the weighting design effect is NaN: the field these tests are about
    assert math.isnan(result.weighting_design_effect)
    return result


def test_a_copy_with_a_fresh_nan_is_equal_and_hashes_alike(unweighted):
    copy = dataclasses.replace(unweighted, weighting_design_effect=float("nan"))
    assert copy.weighting_design_effect is not unweighted.weighting_design_effect
    assert copy == unweighted
    assert (copy != unweighted) is False
    assert hash(copy) == hash(unweighted)
    assert len({copy, unweighted}) == 1
    assert cs.ClusterCI(**unweighted.to_dict()) == unweighted
    numpy_nan = dataclasses.replace(unweighted, weighting_design_effect=np.float64("nan"))
    assert numpy_nan == unweighted
    assert hash(numpy_nan) == hash(unweighted)


def test_a_result_recomputed_is_equal(demo):
    rows = demo[demo["model"] == demo["model"].iloc[0]]
    assert cs.cluster_ci(rows, "correct", by="src") == cs.cluster_ci(rows, "correct", by="src")
    first = demo.eval.cluster_ci("correct", by="src", over="model")
    again = demo.eval.cluster_ci("correct", by="src", over="model")
    assert first == again
    assert hash(first) == hash(again)


def test_a_different_field_makes_results_unequal(unweighted):
    assert dataclasses.replace(unweighted, estimate=unweighted.estimate + 1e-12) != unweighted
    assert dataclasses.replace(unweighted, weighting_design_effect=1.0) != unweighted
    assert dataclasses.replace(unweighted, notes=(*unweighted.notes, "x")) != unweighted
    # None (no value) is not NaN (a value that is not a number)
    no_value = dataclasses.replace(unweighted, weighting_design_effect=None)
    assert no_value != unweighted
    # another type with the same numbers is not the same result
    assert unweighted != unweighted.to_dict()
    assert unweighted.__eq__(unweighted.to_dict()) is NotImplemented


def test_table_results_compare_nan_inside_their_tuples(demo):
    comparison = demo.eval.compare("correct", by="src", model="model", on="question_id")
    n = len(comparison.p_value)
    left = dataclasses.replace(comparison, p_value=tuple(float("nan") for _ in range(n)))
    right = dataclasses.replace(comparison, p_value=tuple(float("nan") for _ in range(n)))
    assert left == right
    assert hash(left) == hash(right)
    assert left != comparison
    shifted = (comparison.p_value[0] + 1e-9, *comparison.p_value[1:])
    assert dataclasses.replace(comparison, p_value=shifted) != comparison


@pytest.mark.parametrize(
    ("a", "b", "equal"),
    [
        (float("nan"), float("nan"), True),
        (float("nan"), np.float64("nan"), True),
        (float("nan"), None, False),
        (float("nan"), 0.0, False),
        (pd.NaT, pd.NaT, True),
        (np.datetime64("NaT", "ns"), np.datetime64("NaT", "ns"), True),
        (pd.NaT, float("nan"), False),
        ((1.0, float("nan")), (1.0, float("nan")), True),
        ((1.0, float("nan")), [1.0, float("nan")], False),
        ((1.0, float("nan")), (1.0, float("nan"), 2.0), False),
        ({"a": float("nan")}, {"a": float("nan")}, True),
        ({"a": float("nan")}, {"b": float("nan")}, False),
        (np.array([1.0, np.nan]), np.array([1.0, np.nan]), True),
        (np.array([1.0, np.nan]), np.array([1.0, 2.0]), False),
        (np.array([1.0, np.nan]), np.array([[1.0, np.nan]]), False),
        (np.array([1.0, np.nan]), [1.0, float("nan")], False),
        (pd.Series([1.0, np.nan]), pd.Series([1.0, np.nan]), True),
        (pd.Series([1.0, np.nan]), pd.Series([1.0, 2.0]), False),
        (pd.DataFrame({"x": [np.nan]}), pd.DataFrame({"x": [np.nan]}), True),
        (pd.DataFrame({"x": [np.nan]}), pd.Series([np.nan]), False),
        (xr.DataArray([1.0, np.nan]), xr.DataArray([1.0, np.nan]), True),
        (xr.DataArray([1.0, np.nan]), xr.DataArray([1.0, np.nan], attrs={"u": 1}), False),
        ("nan", float("nan"), False),
        (1, 1.0, True),
    ],
)
def test_same_value_takes_missing_values_of_one_kind_as_equal(a, b, equal):
    assert same_value(a, b) is equal
    assert same_value(b, a) is equal
