"""Hostile input for the watching gate (issue 43): no wrong verdict on any input.

Every case the issue lists as a wrong verdict is here, in Python, on the command line and in
``SequentialStopping``: a percent-scale margin or threshold, a threshold outside the
outcome's bounds, a run that broke part-way (the sequence goes empty: ``void``, never pass or
fail), scores outside their bounds inside an eval (logged, never raised), and labels that are
not two names. The expected verdicts follow from the data's construction (stated per test).
"""

from __future__ import annotations

import asyncio
import logging
import subprocess
import sys

import numpy as np
import pandas as pd
import pytest

import clusterstats as cs
from clusterstats.core.sequential import SEQUENCE_METHODS, BettingState, betting_sequence

inspect = pytest.importorskip("clusterstats.inspect")


def broken_run(n_good: int = 50, n_bad: int = 500, size: int = 10) -> pd.DataFrame:
    """A run whose first ``n_good`` documents all pass and whose next ``n_bad`` all fail:
    an API that broke mid-run."""
    doc = np.repeat(np.arange(n_good + n_bad), size)
    return pd.DataFrame({"doc": doc, "ok": (doc < n_good).astype(int)})


@pytest.fixture
def sides(bbh):
    return bbh[bbh.condition == "cot"], bbh[bbh.condition == "direct"]


def test_a_percent_scale_margin_is_refused_when_watching(sides):
    cot, direct = sides
    with pytest.raises(cs.InvalidOptionError, match=r"margin=2 .*did you mean 0\.02\?"):
        cs.gate(direct, "correct", by="task", baseline=cot, on="item_id", margin=2,
                sequential=True)  # fmt: skip


def test_a_percent_scale_threshold_is_refused_when_watching(sides):
    cot, _ = sides
    with pytest.raises(cs.InvalidOptionError, match=r"at_least=55 .*did you mean 0\.55\?"):
        cs.gate(cot, "correct", by="task", at_least=55, sequential=True)


def test_a_threshold_outside_a_scores_bounds_is_refused():
    frame = pd.DataFrame({"doc": np.repeat(np.arange(30), 3), "score": np.linspace(1, 4, 90)})
    with pytest.raises(cs.InvalidOptionError, match=r"outside bounds=\(0, 5\)"):
        cs.gate(frame, "score", by="doc", at_least=7, sequential=True, bounds=(0, 5))
    other = frame.assign(score=frame["score"][::-1].to_numpy())
    frame["item"] = other["item"] = np.arange(90)
    with pytest.raises(cs.InvalidOptionError, match="as wide as bounds"):
        cs.gate(frame, "score", by="doc", baseline=other, on="item", margin=10,
                sequential=True, bounds=(-5, 5))  # fmt: skip


def test_the_command_line_refuses_them_too(tmp_path, sides):
    cot, direct = sides
    cot.to_csv(tmp_path / "cot.csv", index=False)
    direct.to_csv(tmp_path / "direct.csv", index=False)
    base = [sys.executable, "-m", "clusterstats", "gate"]
    for words in (
        [str(tmp_path / "direct.csv"), "--baseline", str(tmp_path / "cot.csv"), "--on",
         "item_id", "--margin", "2"],
        [str(tmp_path / "cot.csv"), "--at-least", "55"],
    ):  # fmt: skip
        done = subprocess.run(
            [*base, *words, "--outcome", "correct", "--by", "task", "--sequential"],
            capture_output=True,
            text=True,
        )
        assert done.returncode == 3, done.stdout
        assert "did you mean" in done.stderr


def test_a_run_that_broke_part_way_empties_the_sequence_and_gets_no_verdict():
    run = broken_run()
    seq = cs.confidence_sequence(run, "ok", by="doc")
    assert seq.empty_from is not None
    assert 50 < seq.empty_from < 550
    frame = seq.to_frame()
    after = frame["n_clusters"] >= seq.empty_from
    assert frame.loc[after, ["low", "high"]].isna().all().all()
    assert frame.loc[~after, ["low", "high"]].notna().all().all()
    last = seq.last_interval
    assert last is not None
    assert last.n_clusters == seq.empty_from - 1
    assert last.low <= last.high
    assert "went EMPTY" in repr(seq)
    assert "no verdict" in repr(seq)
    # the fixed gate fails this run; the watching gate must neither pass nor fail it
    fixed = cs.gate(run, "ok", by="doc", at_least=0.6)
    assert fixed.verdict == "fail"
    watching = cs.gate(run, "ok", by="doc", at_least=0.6, sequential=True)
    assert watching.verdict == "void"
    assert watching.exit_code == 4
    assert np.isnan(watching.gates[0].low)
    assert np.isnan(watching.gates[0].decided_at)
    assert "empty" in repr(watching)
    assert "⛔" in watching.to_markdown()


def test_the_command_line_exits_4_on_a_void_gate(tmp_path):
    broken_run().to_csv(tmp_path / "run.csv", index=False)
    done = subprocess.run(
        [sys.executable, "-m", "clusterstats", "gate", str(tmp_path / "run.csv"), "--outcome",
         "ok", "--by", "doc", "--at-least", "0.6", "--sequential"],
        capture_output=True, text=True,
    )  # fmt: skip
    assert done.returncode == 4, done.stderr
    assert "VOID" in done.stdout


def test_the_core_marks_an_empty_sequence():
    totals = np.r_[np.full(50, 10.0), np.zeros(500)]
    seq = betting_sequence(totals, np.full(550, 10.0), estimand="pooled")
    first = int(np.argmax(seq.empty))
    assert seq.empty[first:].all()
    assert not seq.empty[:first].any()
    assert np.isnan(seq.low[first:]).all()
    assert np.isnan(seq.high[first:]).all()


def test_side_labels_must_be_two_names(sides):
    cot, direct = sides
    for bad in (("a",), ("a", "a"), "ab", ("a", "")):
        with pytest.raises(cs.InvalidOptionError, match="labels"):
            cs.confidence_sequence(cot, "correct", by="task", other=direct, on="item_id",
                                   labels=bad)  # fmt: skip
        with pytest.raises(cs.InvalidOptionError, match="labels"):
            cs.paired_delta(cot, direct, "correct", by="task", on="item_id", labels=bad)


# --- SequentialStopping, driven as Inspect drives it


class _Sample:
    def __init__(self, id, metadata):
        self.id, self.metadata = id, metadata


class _Value:
    def __init__(self, value):
        self.value = value


class _Scored:
    def __init__(self, value):
        self.score = _Value(value)


def _drive(stopping, values, *, per_cluster=4, epochs=1, repeat=()):
    """Start a task of ``len(values)`` samples in clusters of ``per_cluster``, then score
    them in order (sample ``i`` gets ``values[i]``; the samples in ``repeat`` are scored
    twice, as a retry does)."""
    samples = [_Sample(i, {"doc": i // per_cluster}) for i in range(len(values))]

    async def run():
        await stopping.start_task(None, samples, epochs)
        for i, value in enumerate(values):
            for epoch in range(1, epochs + 1):
                await stopping.complete_sample(i, epoch, {"s": _Scored(value)})
                if i in repeat:
                    await stopping.complete_sample(i, epoch, {"s": _Scored(1 - value)})
        return await stopping.complete_task()

    return asyncio.run(run())


def test_sequential_stopping_refuses_a_percent_threshold():
    with pytest.raises(cs.InvalidOptionError, match=r"did you mean 0\.55\?"):
        inspect.SequentialStopping(55, cluster="doc")
    with pytest.raises(cs.InvalidOptionError, match="one question"):
        inspect.SequentialStopping()
    with pytest.raises(cs.InvalidOptionError, match="needs margin"):
        inspect.SequentialStopping(baseline=pd.DataFrame({"sample_id": [1], "score": [1.0]}))


@pytest.mark.parametrize("value", [2.0, -1.0])
def test_scores_outside_the_bounds_stop_the_watching_not_the_eval(value, caplog):
    stopping = inspect.SequentialStopping(0.5, cluster="doc")
    with caplog.at_level(logging.WARNING, logger="clusterstats"):
        summary = _drive(stopping, [value] * 8)
    assert stopping.decision is None
    assert summary["verdict"] == "error"
    assert "outside bounds" in summary["problem"]
    assert "outside bounds" in caplog.text


def test_a_missing_cluster_field_is_logged_not_raised(caplog):
    stopping = inspect.SequentialStopping(0.5, cluster="nope")
    with caplog.at_level(logging.WARNING, logger="clusterstats"):
        summary = _drive(stopping, [1.0] * 8)
    assert summary["verdict"] == "error"
    assert "no metadata field 'nope'" in summary["problem"]


def test_a_broken_eval_is_void_and_never_stopped():
    stopping = inspect.SequentialStopping(0.95, cluster="doc")
    summary = _drive(stopping, [1.0] * 200 + [0.0] * 2000)
    assert summary["verdict"] == "void"
    assert "went empty" in summary["problem"]
    # the failures decided 'fail' before the sequence went empty; the record keeps it
    assert summary["decided_before_empty"] == "fail"


def test_a_retried_sample_counts_once():
    values = [1.0, 0.0, 1.0, 1.0] * 10
    once = _drive(inspect.SequentialStopping(0.5, cluster="doc"), values)
    retried = _drive(inspect.SequentialStopping(0.5, cluster="doc"), values, repeat={1, 5})
    assert once == retried


def test_the_stoppers_state_is_the_whole_sequence():
    """Each completed cluster enters in constant time; the bounds are those of the whole
    sequence computed at once on the same clusters."""
    rng = np.random.default_rng(43)
    values = (rng.random(400) < 0.7).astype(float)
    stopping = inspect.SequentialStopping(0.99, cluster="doc")
    _drive(stopping, values)
    totals = values.reshape(100, 4).sum(axis=1)
    default = SEQUENCE_METHODS["betting_mixture"]._asdict()
    whole = betting_sequence(
        totals, np.full(100, 4.0), estimand="pooled", max_cluster_size=4, **default
    )
    assert stopping.sequence.low[-1] == whole.low[-1]
    assert stopping.sequence.high[-1] == whole.high[-1]
    state = BettingState(estimand="pooled", max_cluster_size=4, **default)
    parts = [state.add(totals[i : i + 7], np.full(len(totals[i : i + 7]), 4.0))
             for i in range(0, 100, 7)]  # fmt: skip
    np.testing.assert_array_equal(np.concatenate([p.low for p in parts]), whole.low)
    np.testing.assert_array_equal(np.concatenate([p.high for p in parts]), whole.high)


def test_sequential_stopping_against_a_baseline():
    """The new run passes every sample the baseline failed and vice versa on a quarter of
    the samples, else matches it: the difference is +0.5 on the samples where the baseline
    failed (every fourth), so the stopper decides pass at margin 0."""
    n = 400
    base = np.where(np.arange(n) % 4 == 0, 0.0, 1.0)
    baseline = pd.DataFrame({"sample_id": np.arange(n), "score": base})
    stopping = inspect.SequentialStopping(baseline=baseline, margin=0.0, cluster="doc")
    summary = _drive(stopping, np.ones(n))
    assert summary["verdict"] == "pass"
    assert summary["margin"] == 0.0
    assert summary["low"] >= 0.0
    worse = inspect.SequentialStopping(baseline=baseline, margin=0.05, cluster="doc")
    assert _drive(worse, np.zeros(n))["verdict"] == "fail"
    with pytest.raises(cs.InvalidOptionError, match=r"did you mean 0\.05\?"):
        inspect.SequentialStopping(baseline=baseline, margin=5)


def test_sequential_stopping_for_this_benchmarks_score():
    """target="benchmark": the clusters of the dataset are the whole list, so the sequence is
    the without-replacement one and ends at the exact score if the eval runs to its end."""
    values = np.tile([1.0, 1.0, 0.0, 1.0], 100)  # every doc of 4 scores 3/4
    stopping = inspect.SequentialStopping(0.99, cluster="doc", target="benchmark")
    summary = _drive(stopping, values)
    assert summary["target"] == "benchmark"
    assert summary["verdict"] == "fail"
    # had nothing stopped it, the last look is the exact score
    assert stopping.sequence.low[-1] == pytest.approx(0.75)
    assert stopping.sequence.high[-1] == pytest.approx(0.75)
    with pytest.raises(cs.InvalidOptionError, match="target"):
        inspect.SequentialStopping(0.5, target="documents")
