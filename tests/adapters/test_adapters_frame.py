"""Bad input gets a precise exception; every supported dtype gives the same numbers."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import clusterstats as cs


@pytest.fixture
def frame() -> pd.DataFrame:
    rng = np.random.default_rng(0)
    clusters = np.repeat(np.arange(30), 5)
    passed = (rng.random(150) < np.repeat(rng.uniform(0.2, 0.9, 30), 5)).astype(int)
    return pd.DataFrame(
        {
            "doc": clusters,
            "passed": passed,
            "score": rng.normal(size=150),
            "label": np.where(passed == 1, "pass", "fail"),
        }
    )


def test_unknown_column_lists_the_available_ones(frame):
    with pytest.raises(cs.ColumnNotFoundError, match=r"'pased' not found.*'passed'") as info:
        cs.cluster_ci(frame, "pased", by="doc")
    assert isinstance(info.value, KeyError)
    assert "doc" in info.value.available
    with pytest.raises(cs.ColumnNotFoundError, match="'document'"):
        frame.eval.icc("passed", by="document")
    with pytest.raises(cs.ColumnNotFoundError, match="'model'"):
        frame.eval.design_effect("passed", by="doc", over="model")


def test_non_numeric_outcome(frame):
    with pytest.raises(cs.InvalidOutcomeError, match=r"'label'.*not numeric"):
        cs.cluster_ci(frame, "label", by="doc")
    with pytest.raises(ValueError, match="not numeric"):
        cs.icc(frame.assign(label=pd.Categorical(frame["label"])), "label", by="doc")


def test_non_binary_outcome_with_binary_only_method(frame):
    for method in ("wilson", "korn_graubard"):
        with pytest.raises(cs.InvalidOutcomeError, match="binary"):
            cs.cluster_ci(frame, "score", by="doc", method=method)
    # a continuous outcome is fine with the other methods, and auto picks the studentized
    # bootstrap
    assert cs.cluster_ci(frame, "score", by="doc").method == "bootstrap_t"


def test_missing_cluster_ids(frame):
    bad = frame.assign(doc=frame["doc"].astype(float))
    bad.loc[[3, 7], "doc"] = np.nan
    with pytest.raises(cs.InvalidClusterError, match=r"2 missing ids \(rows \[3, 7\]"):
        cs.cluster_ci(bad, "passed", by="doc")
    with pytest.raises(cs.InvalidClusterError):
        cs.cluster_ci(
            frame.assign(doc=frame["doc"].astype("Int64").mask(frame.index == 0)),
            "passed",
            by="doc",
        )


def test_empty_frame_and_all_missing(frame):
    with pytest.raises(cs.EmptyDataError, match="no rows"):
        cs.cluster_ci(frame.iloc[:0], "passed", by="doc")
    with pytest.raises(cs.EmptyDataError, match="no non-missing"):
        cs.cluster_ci(frame.assign(passed=np.nan), "passed", by="doc")


@pytest.mark.parametrize("confidence", [0, 1, 1.5, -0.1, 95, float("nan"), "high"])
def test_confidence_outside_unit_interval(frame, confidence):
    with pytest.raises(cs.InvalidOptionError, match="confidence"):
        cs.cluster_ci(frame, "passed", by="doc", confidence=confidence)
    with pytest.raises(ValueError, match="confidence"):
        cs.icc(frame, "passed", by="doc", confidence=confidence)


def test_invalid_options(frame):
    with pytest.raises(cs.InvalidOptionError, match="estimand"):
        cs.cluster_ci(frame, "passed", by="doc", estimand="micro")
    with pytest.raises(cs.InvalidOptionError, match="method"):
        cs.cluster_ci(frame, "passed", by="doc", method="wald")
    with pytest.raises(cs.InvalidOptionError, match="missing"):
        cs.cluster_ci(frame, "passed", by="doc", missing="impute")
    with pytest.raises(cs.InvalidOptionError, match="icc"):
        cs.cluster_ci(frame, "passed", by="doc", icc=1.5)
    with pytest.raises(cs.InvalidOptionError, match="n_resamples"):
        cs.cluster_ci(frame, "passed", by="doc", method="bootstrap", n_resamples=1)
    with pytest.raises(TypeError, match="DataFrame"):
        cs.cluster_ci({"passed": [1]}, "passed", by="doc")


def test_one_cluster_is_an_error(frame):
    with pytest.raises(cs.TooFewClustersError, match="1 cluster"):
        cs.cluster_ci(frame[frame.doc == 3], "passed", by="doc")
    with pytest.raises(cs.TooFewClustersError):
        cs.icc(frame[frame.doc == 3], "passed", by="doc")


def test_missing_outcomes_policies(frame):
    holed = frame.astype({"passed": "float64"})
    holed.loc[[0, 1, 40], "passed"] = np.nan
    dropped = cs.cluster_ci(holed, "passed", by="doc")
    assert (dropped.n_rows, dropped.n_missing, dropped.n_missing_clusters) == (147, 3, 2)
    assert "3 rows with a missing outcome (in 2 clusters) were dropped" in dropped.notes[0]
    assert dropped.to_dict() == {
        **cs.cluster_ci(holed.dropna(), "passed", by="doc").to_dict(),
        "n_missing": 3,
        "n_missing_clusters": 2,
        "notes": dropped.notes,
    }
    failed = cs.cluster_ci(holed, "passed", by="doc", missing="fail")
    assert (failed.n_rows, failed.n_missing) == (150, 3)
    expected = cs.cluster_ci(holed.fillna({"passed": 0}), "passed", by="doc")
    assert failed.estimate == expected.estimate
    assert failed.low == expected.low
    assert "counted as failures" in failed.notes[0]
    with pytest.raises(cs.MissingOutcomeError, match="3 missing values"):
        cs.cluster_ci(holed, "passed", by="doc", missing="raise")
    with pytest.raises(cs.InvalidOutcomeError, match="binary"):
        cs.cluster_ci(
            frame.assign(score=frame.score.mask(frame.index == 0)),
            "score",
            by="doc",
            missing="fail",
        )


# -- dtypes: nullable, Arrow-backed, strings, categoricals, several columns --------------------


def _same_numbers(a: cs.ClusterCI, b: cs.ClusterCI, ignore: tuple[str, ...] = ()) -> None:
    fields = (
        "estimate",
        "se",
        "low",
        "high",
        "icc",
        "design_effect",
        "n_rows",
        "n_clusters",
        "n_missing",
    )
    for field in (f for f in fields if f not in ignore):
        assert getattr(a, field) == pytest.approx(getattr(b, field), rel=1e-12), field


@pytest.mark.parametrize(
    "outcome_dtype",
    [
        "int64",
        "float64",
        "bool",
        "Int64",
        "Float64",
        "boolean",
        "int64[pyarrow]",
        "bool[pyarrow]",
        "double[pyarrow]",
        "object",
    ],
)
def test_outcome_dtypes(frame, outcome_dtype):
    if "pyarrow" in outcome_dtype:
        pytest.importorskip("pyarrow")
    source = frame["passed"].astype(bool) if "bool" in outcome_dtype else frame["passed"]
    converted = frame.assign(passed=source.astype(outcome_dtype))
    _same_numbers(
        cs.cluster_ci(converted, "passed", by="doc"), cs.cluster_ci(frame, "passed", by="doc")
    )


@pytest.mark.parametrize("dtype", ["Int64", "Float64", "boolean", "int64[pyarrow]"])
def test_nullable_outcomes_with_pd_na(frame, dtype):
    if "pyarrow" in dtype:
        pytest.importorskip("pyarrow")
    source = frame["passed"].astype(bool) if dtype == "boolean" else frame["passed"]
    holed = frame.assign(passed=source.astype(dtype))
    holed.loc[[5, 6], "passed"] = pd.NA
    res = cs.cluster_ci(holed, "passed", by="doc")
    assert res.n_missing == 2
    _same_numbers(
        res, cs.cluster_ci(frame.drop(index=[5, 6]), "passed", by="doc"), ignore=("n_missing",)
    )


@pytest.mark.parametrize(
    "cluster_dtype",
    ["str", "string", "string[pyarrow]", "category", "object", "Int64", "large_string[pyarrow]"],
)
def test_cluster_id_dtypes(frame, cluster_dtype):
    if "pyarrow" in cluster_dtype:
        pytest.importorskip("pyarrow")
    labels = "doc-" + frame["doc"].astype(str) if cluster_dtype != "Int64" else frame["doc"]
    converted = frame.assign(doc=labels.astype(cluster_dtype))
    _same_numbers(
        cs.cluster_ci(converted, "passed", by="doc"), cs.cluster_ci(frame, "passed", by="doc")
    )


def test_several_by_columns_form_one_cluster(frame):
    split = frame.assign(part=frame["doc"] % 3, doc=frame["doc"] // 3)
    combined = cs.cluster_ci(split, "passed", by=["doc", "part"])
    assert combined.by == ("doc", "part")
    _same_numbers(combined, cs.cluster_ci(frame, "passed", by="doc"))


def test_arrays_without_a_frame(frame):
    res = cs.cluster_ci(None, frame["passed"].to_numpy(), frame["doc"].to_numpy())
    _same_numbers(res, cs.cluster_ci(frame, "passed", by="doc"))
    assert res.outcome is None


def test_over_groups_come_in_sorted_label_order_whatever_the_row_order(frame):
    tagged = frame.assign(model=np.where(frame.index % 2 == 0, "zeta", "alpha"))
    grouped = cs.cluster_ci(tagged, "passed", by="doc", over="model")
    assert grouped.groups == ("alpha", "zeta")
    assert list(grouped.to_frame()["model"]) == ["alpha", "zeta"]
    reversed_rows = cs.cluster_ci(tagged.iloc[::-1], "passed", by="doc", over="model")
    assert reversed_rows.groups == ("alpha", "zeta")
    assert reversed_rows.to_frame().equals(grouped.to_frame())
    with pytest.raises(KeyError, match="no group 'beta'"):
        grouped["beta"]


@pytest.mark.parametrize(
    "transform",
    [
        lambda d: d * 7 + 3,  # gaps: small ints used directly as codes
        lambda d: d * 10**9,  # too large to use directly: hashed
        lambda d: d - 100,  # negative: hashed (same label order)
        lambda d: (d * 7 + 3).astype("uint32"),
    ],
)
def test_integer_cluster_ids_fast_path_and_fallback_agree(frame, transform):
    renamed = frame.assign(doc=transform(frame["doc"]))
    options = {"method": "bootstrap_percentile", "n_resamples": 300, "rng": 4}
    _same_numbers(
        cs.cluster_ci(renamed, "passed", by="doc", **options),
        cs.cluster_ci(frame, "passed", by="doc", **options),
    )
