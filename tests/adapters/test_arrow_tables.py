"""polars and pyarrow tables in the functional API: the same numbers as the pandas frame
they hold (``clusterstats.adapters.arrow`` converts the named columns only)."""

from __future__ import annotations

import warnings

import pandas as pd
import pytest

import clusterstats as cs

pa = pytest.importorskip("pyarrow")


def _kinds():
    kinds = {"pyarrow": pa.Table.from_pandas}
    try:
        import polars as pl
    except ImportError:  # polars is optional; the pyarrow cases still run
        return kinds
    kinds["polars"] = pl.from_pandas
    kinds["polars lazy"] = lambda frame: pl.from_pandas(frame).lazy()
    return kinds


KINDS = _kinds()


def same(a, b):
    pd.testing.assert_frame_equal(a.to_frame(), b.to_frame())


@pytest.mark.parametrize("kind", list(KINDS))
def test_statistics_on_tables_equal_pandas(kind, bbh, tau, mmlu):
    table = KINDS[kind]
    cot, direct = bbh[bbh.condition == "cot"], bbh[bbh.condition == "direct"]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", cs.ClusterStatsWarning)
        same(cs.cluster_ci(table(cot), "correct", "task"), cs.cluster_ci(cot, "correct", "task"))
        same(
            cs.cluster_ci(table(mmlu), "correct", "src", over="model", strata="category"),
            cs.cluster_ci(mmlu, "correct", "src", over="model", strata="category"),
        )
        same(
            cs.paired_delta(table(cot), table(direct), "correct", "task", on="item_id"),
            cs.paired_delta(cot, direct, "correct", "task", on="item_id"),
        )
        same(
            cs.compare(table(bbh), "correct", "task", model="condition", on="item_id"),
            cs.compare(bbh, "correct", "task", model="condition", on="item_id"),
        )
        runs = {"k": 2, "case": "task_id", "rerun": "trial"}
        same(cs.pass_at_k(table(tau), "reward", **runs), cs.pass_at_k(tau, "reward", **runs))
        same(
            cs.check_clustering(table(mmlu), "correct", ["src", "category"]),
            cs.check_clustering(mmlu, "correct", ["src", "category"]),
        )
        same(
            cs.missing_report(table(mmlu), "correct", "src"),
            cs.missing_report(mmlu, "correct", "src"),
        )
        same(
            cs.gate(table(cot), "correct", "task", baseline=table(direct), on="item_id", margin=0),
            cs.gate(cot, "correct", "task", baseline=direct, on="item_id", margin=0),
        )


@pytest.mark.parametrize("kind", list(KINDS))
def test_tables_have_no_index_to_match_on_and_name_missing_columns(kind, bbh):
    table = KINDS[kind]
    cot, direct = bbh[bbh.condition == "cot"], bbh[bbh.condition == "direct"]
    with pytest.raises(cs.InvalidOptionError, match="table has no index to match items by"):
        cs.paired_delta(table(cot), table(direct), "correct", "task")
    with pytest.raises(cs.InvalidOptionError, match="pass on="):
        cs.compare(table(bbh), "correct", "task", model="condition")
    with pytest.raises(cs.ColumnNotFoundError, match=r"column 'nope' not found.*'item_id'"):
        cs.cluster_ci(table(cot), "nope", "task")


def test_only_the_named_columns_are_converted(bbh, monkeypatch):
    from clusterstats.adapters import arrow

    seen = []
    original = arrow.to_pandas

    def spy(data, names, **options):
        converted = original(data, names, **options)
        seen.append(list(converted.columns))
        return converted

    monkeypatch.setattr(arrow, "to_pandas", spy)
    cs.cluster_ci(pa.Table.from_pandas(bbh), "correct", "task", over="condition")
    assert seen == [["correct", "task", "condition"]]
