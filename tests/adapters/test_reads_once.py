"""Each call reduces its data once: one adapter entry per call, whatever the slices, the order
of arrival or the pairing, and a dask DataFrame computed once.

The gate's own test is ``tests/integrations/test_gate.py::test_the_gate_reduces_its_data_once``.
Before the arrivals were carried in the designs, ``confidence_sequence(order=)`` read its
data twice (a design, then the arrivals through an entry of their own), and ``compare(over=)``
read it once to slice and once per slice (a dask DataFrame computed once per slice, plus
once for the slices' labels).
"""

from __future__ import annotations

import warnings

import pytest

import clusterstats as cs
import clusterstats.adapters as adapters
from clusterstats.adapters import dask as dask_adapter

ENTRIES = [
    "mean_design",
    "paired_design",
    "comparison_designs",
    "case_design",
    "rows_design",
    "missing_reasons",
]


@pytest.fixture
def entries(monkeypatch):
    """The calls to every public design entry of ``clusterstats.adapters``, by name."""
    calls = dict.fromkeys(ENTRIES, 0)
    for name in ENTRIES:
        original = getattr(adapters, name)

        def counted(*args, _original=original, _name=name, **kwargs):
            calls[_name] += 1
            return _original(*args, **kwargs)

        monkeypatch.setattr(adapters, name, counted)
    return calls


@pytest.fixture
def computes(monkeypatch):
    """How many times a dask DataFrame's columns are computed into pandas."""
    count = {"compute_columns": 0}
    original = dask_adapter.compute_columns

    def counted(*args, **kwargs):
        count["compute_columns"] += 1
        return original(*args, **kwargs)

    monkeypatch.setattr(dask_adapter, "compute_columns", counted)
    return count


def only(calls, name):
    return {entry: int(entry == name) for entry in ENTRIES} == calls


@pytest.fixture
def bbh_sliced(bbh):
    return bbh.assign(half=bbh["task"].astype(str).str[0] < "m")


def test_a_confidence_sequence_in_order_of_arrival_reads_its_data_once(bbh, entries):
    cot = bbh[bbh.condition == "cot"]
    seq = cs.confidence_sequence(cot, "correct", by="task", order="item_index")
    assert only(entries, "mean_design")
    assert seq.order.startswith("by 'item_index'")
    assert seq.current.n_clusters == cot["task"].nunique()


def test_a_sliced_sequence_reads_once_and_each_slice_orders_its_own_rows(bbh_sliced, entries):
    cot = bbh_sliced[bbh_sliced.condition == "cot"]
    grouped = cs.confidence_sequence(cot, "correct", by="task", order="item_index", over="half")
    assert only(entries, "mean_design")
    for label in grouped.groups:
        alone = cs.confidence_sequence(
            cot[cot.half == label], "correct", by="task", order="item_index"
        )
        assert grouped[label].clusters == alone.clusters
        assert grouped[label].low == alone.low


def test_a_paired_sequence_in_order_of_arrival_reads_its_data_once(bbh, entries):
    cot, direct = bbh[bbh.condition == "cot"], bbh[bbh.condition == "direct"]
    cs.confidence_sequence(
        cot, "correct", by="task", other=direct, on="item_id", order="item_index"
    )
    assert only(entries, "paired_design")


@pytest.mark.filterwarnings("ignore::clusterstats.FewClustersWarning")
def test_a_sliced_leaderboard_reads_its_data_once(bbh_sliced, entries):
    board = cs.compare(
        bbh_sliced, "correct", by="task", model="condition", on="item_id", over="half", rng=0,
        n_resamples=199,
    )  # fmt: skip
    assert len(board.slices) == 2
    assert only(entries, "comparison_designs")


def test_a_sliced_dask_leaderboard_is_computed_once(bbh_sliced, entries, computes):
    dd = pytest.importorskip("dask.dataframe")
    lazy = dd.from_pandas(bbh_sliced, npartitions=3)
    options = {"by": "task", "model": "condition", "on": "item_id", "rng": 0}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", cs.ClusterStatsWarning)
        board = cs.compare(lazy, "correct", over="half", n_resamples=199, **options)
        eager = cs.compare(bbh_sliced, "correct", over="half", n_resamples=199, **options)
    assert computes == {"compute_columns": 1}
    assert only(entries, "comparison_designs") is False  # two calls: the lazy and the eager
    assert entries["comparison_designs"] == 2
    for lazy_one, eager_one in zip(board.comparisons, eager.comparisons, strict=True):
        assert lazy_one.leaderboard().equals(eager_one.leaderboard())


def test_a_watching_gate_reads_its_data_once_with_its_arrivals(bbh_sliced, entries):
    cot = bbh_sliced[bbh_sliced.condition == "cot"]
    cs.gate(cot, "correct", "task", at_least=0.5, sequential=True, order="item_index", over="half")
    assert only(entries, "mean_design")
