"""Hostile input for the gate (issue 25): its numeric options, its Markdown report, and every
input and option the statistics take.

Each case states the exact error and a message naming the option at fault, or what must come
back. A gate given numpy scalars must decide exactly as with the same Python numbers (the
reference is the same call with ``float``/``int``); a Markdown report must keep one cell per
column whatever its labels hold. A gate on a polars, pyarrow or dask table, or with
``weights=`` or ``crossed=``, reads the interval that ``cluster_ci`` or ``paired_delta`` gives
on the same input with the same options (the reference, computed in the check), at the Holm
level the gate reports. The harness (``tests/hostile/hostile.py``) checks that no input changed.
"""

from __future__ import annotations

import re

import numpy as np
import pandas as pd
import pytest
import xarray as xr
from hostile import Case, Raises, Returns, params, quiet, run

import clusterstats as cs

Option = cs.InvalidOptionError


def runs(labels: tuple[str, ...] = ("a", "b")) -> dict[str, pd.DataFrame]:
    """Two runs on 300 items in 75 docs of 4, drawn with a fixed seed: ``new`` passes at a
    doc's rate plus 0.1, ``old`` at the doc's rate (uniform in 0.2 to 0.8); ``task`` cycles
    through ``labels`` by doc (at least 25 docs each)."""
    rng = np.random.default_rng(25)
    items = np.arange(300)
    doc = items // 4
    rate = rng.uniform(0.2, 0.8, size=75)[doc]
    frame = pd.DataFrame({"item": items, "doc": doc, "task": np.array(labels)[doc % len(labels)]})
    new = frame.assign(passed=(rng.random(300) < rate + 0.1).astype(int))
    old = frame.assign(passed=(rng.random(300) < rate).astype(int))
    return {"data": new, "baseline": old}


def gate(**options):
    def call(data, baseline):
        return cs.gate(data, "passed", "doc", baseline=baseline, on="item", **options)

    return call


def at_least(**options):
    def call(data, baseline):
        return cs.gate(data, "passed", "doc", **options)

    return call


def same_as(reference) -> Returns:
    """The same verdict, bounds and boundary as ``reference`` gives on fresh inputs."""

    def check(report) -> None:
        expected = reference(**runs())
        assert report.verdict == expected.verdict
        for mine, theirs in zip(report.gates, expected.gates, strict=True):
            assert (mine.low, mine.high, mine.boundary) == (
                theirs.low,
                theirs.high,
                theirs.boundary,
            )

    return Returns(check)


def markdown_keeps_its_columns(n_gates: int) -> Returns:
    """Every table row of ``to_markdown()`` has as many unescaped ``|`` as the header."""

    def check(report) -> None:
        table = [line for line in report.to_markdown().splitlines() if line.startswith("|")]
        bars = [len(re.findall(r"(?<!\\)\|", line)) for line in table]
        assert len(table) == n_gates + 2, table
        assert set(bars) == {bars[0]}, table

    return Returns(check)


def as_polars(inputs: dict[str, pd.DataFrame]) -> dict[str, object]:
    pl = pytest.importorskip("polars")
    return {k: pl.from_pandas(v) for k, v in inputs.items()}


def as_arrow(inputs: dict[str, pd.DataFrame]) -> dict[str, object]:
    pa = pytest.importorskip("pyarrow")
    return {k: pa.Table.from_pandas(v, preserve_index=False) for k, v in inputs.items()}


def as_dask(inputs: dict[str, pd.DataFrame]) -> dict[str, object]:
    dd = pytest.importorskip("dask.dataframe")
    return {k: dd.from_pandas(v, npartitions=2) for k, v in inputs.items()}


def same_as_pandas(call) -> Returns:
    """The same gates (labels, verdicts, bounds, levels) as ``call`` on the pandas frames."""

    def check(report) -> None:
        expected = quiet(call)(**runs())
        assert [g.group for g in report.gates] == [g.group for g in expected.gates]
        for mine, theirs in zip(report.gates, expected.gates, strict=True):
            assert (mine.verdict, mine.confidence) == (theirs.verdict, theirs.confidence)
            assert (mine.low, mine.high) == pytest.approx((theirs.low, theirs.high), rel=1e-12)

    return Returns(check)


def reads(statistic) -> Returns:
    """A single gate whose bounds are ``statistic(level)``'s on fresh inputs, at its level."""

    def check(report) -> None:
        (only,) = report.gates
        expected = quiet(statistic)(level=only.confidence, **runs())
        assert (only.low, only.high) == pytest.approx((expected.low, expected.high), rel=1e-12)
        assert only.method == expected.method

    return Returns(check)


def weighted(inputs: dict[str, pd.DataFrame]) -> dict[str, pd.DataFrame]:
    """Each item weighs 1, 2 or 3 (by item number), the same in both runs."""
    return {k: v.assign(w=1.0 + v["item"] % 3) for k, v in inputs.items()}


def tasks_dataset(dims: tuple[str, ...] = ("task",)) -> dict[str, xr.Dataset]:
    """A (…, case, rerun) Dataset of 60 cases of 3 runs per extra-dim label."""
    rng = np.random.default_rng(26)
    labels = {"task": ["alpha", "beta"], "model": ["m1", "m2"]}
    shape = (*(len(labels[d]) for d in dims), 60, 3)
    y = (rng.random(shape) < 0.7).astype(float)
    return {
        "data": xr.Dataset(
            {"y": ((*dims, "case", "rerun"), y)},
            coords={**{d: labels[d] for d in dims}, "case": np.arange(60)},
        )
    }


def labelled(*expected: str) -> Returns:
    return Returns(lambda report: [g.group for g in report.gates] == list(expected))


CASES = [
    # -- numeric options given as numpy scalars are numbers like any other
    Case(
        "margin as np.float32",
        runs,
        gate(margin=np.float32(0.25)),
        same_as(gate(margin=float(np.float32(0.25)))),
    ),
    Case("margin as np.int64", runs, gate(margin=np.int64(0)), same_as(gate(margin=0))),
    Case(
        "at_least as np.float32",
        runs,
        at_least(at_least=np.float32(0.5)),
        same_as(at_least(at_least=0.5)),
    ),
    Case(
        "power as np.float64 and margin as a 0-d array's item",
        runs,
        gate(margin=np.array(0.1).item(), power=np.float64(0.9)),
        same_as(gate(margin=0.1, power=0.9)),
    ),
    # -- and what is not a finite number is named
    Case("margin as a bool", runs, gate(margin=True), Raises(Option, "margin must be a number")),
    Case(
        "margin as np.bool_",
        runs,
        gate(margin=np.bool_(False)),
        Raises(Option, "margin must be a number"),
    ),
    Case(
        "margin too large for a float",
        runs,
        gate(margin=10**400),
        Raises(Option, r"margin must be finite \(at least 0\), got an integer of 401 digits"),
    ),
    Case(
        "at_least as np.nan",
        runs,
        at_least(at_least=np.float32("nan")),
        Raises(Option, r"at_least must be a number, got np.float32\(nan\)"),
    ),
    Case("power as a string", runs, gate(margin=0.1, power="0.8"), Raises(Option, "power must")),
    Case(
        "power as np.float32 outside (0, 1)",
        runs,
        gate(margin=0.1, power=np.float32(1.5)),
        Raises(Option, r"power must be strictly between 0 and 1, got np.float32\(1\.5\)"),
    ),
    # -- labels holding the Markdown table's separator, or a line break
    Case(
        "over= labels with '|'",
        lambda: runs(("a|b", "c || d", "|")),
        gate(margin=0.1, over="task"),
        markdown_keeps_its_columns(3),
    ),
    Case(
        "over= labels with a line break",
        lambda: runs(("line\nbreak", "plain")),
        gate(margin=0.1, over="task"),
        markdown_keeps_its_columns(2),
    ),
    # -- every input the statistics take, with over=
    Case(
        "polars tables, not worse, over=",
        lambda: as_polars(runs()),
        quiet(gate(margin=0.1, over="task")),
        same_as_pandas(gate(margin=0.1, over="task")),
    ),
    Case(
        "polars table, at least, over=",
        lambda: as_polars(runs()),
        quiet(at_least(at_least=0.5, over="task")),
        same_as_pandas(at_least(at_least=0.5, over="task")),
    ),
    Case(
        "pyarrow tables, not worse, over=",
        lambda: as_arrow(runs()),
        quiet(gate(margin=0.1, over="task")),
        same_as_pandas(gate(margin=0.1, over="task")),
    ),
    Case(
        "dask frames, not worse, over=",
        lambda: as_dask(runs()),
        quiet(gate(margin=0.1, over="task")),
        same_as_pandas(gate(margin=0.1, over="task")),
    ),
    Case(
        "clusterstats.testing on a polars table with over=",
        lambda: as_polars(runs()),
        lambda data, baseline: __import__("clusterstats.testing").testing.assert_pass_rate_at_least(
            data, "passed", 0.3, by="doc", over="task"
        ),
        same_as_pandas(at_least(at_least=0.3, over="task")),
    ),
    Case(
        "a Dataset with one extra dim names each gate by its label, not letter by letter",
        tasks_dataset,
        quiet(lambda data: cs.gate(data, "y", at_least=0.5)),
        labelled("task=alpha", "task=beta"),
    ),
    Case(
        "a Dataset with two extra dims",
        lambda: tasks_dataset(("model", "task")),
        quiet(lambda data: cs.gate(data, "y", at_least=0.5)),
        labelled(
            "model=m1, task=alpha",
            "model=m1, task=beta",
            "model=m2, task=alpha",
            "model=m2, task=beta",
        ),
    ),
    # -- every option the statistics take
    Case(
        "weights= on the at-least gate",
        lambda: weighted(runs()),
        quiet(at_least(at_least=0.3, weights="w")),
        reads(
            lambda level, data, baseline: cs.cluster_ci(
                weighted({"d": data})["d"], "passed", "doc", weights="w", confidence=level
            )
        ),
    ),
    Case(
        "weights= on the not-worse gate",
        lambda: weighted(runs()),
        quiet(gate(margin=0.1, weights="w")),
        reads(
            lambda level, data, baseline: cs.paired_delta(
                *weighted({"a": data, "b": baseline}).values(),
                "passed",
                "doc",
                on="item",
                weights="w",
                confidence=level,
            )
        ),
    ),
    Case(
        "crossed= on the at-least gate",
        runs,
        quiet(
            lambda data, baseline: cs.gate(
                data, "passed", ["doc", "task"], at_least=0.3, crossed=True
            )
        ),
        reads(
            lambda level, data, baseline: cs.cluster_ci(
                data, "passed", ["doc", "task"], crossed=True, confidence=level
            )
        ),
    ),
    # -- a percent where a proportion belongs
    Case(
        "at_least=60 on a 0/1 outcome",
        runs,
        at_least(at_least=60),
        Raises(Option, r"at_least=60 on a 0/1 outcome.*did you mean 0\.6\?"),
    ),
    Case(
        "margin=2 on a 0/1 outcome",
        runs,
        gate(margin=2),
        Raises(Option, r"margin=2 on an outcome in \[0, 1\].*did you mean 0\.02\?"),
    ),
    # -- one reduction: over= slices never lose the key
    Case(
        "over= with two position-indexed frames and no on=",
        runs,
        lambda data, baseline: cs.gate(
            data, "passed", "doc", baseline=baseline, margin=0.1, over="task"
        ),
        Raises(cs.AlignmentError, r"both indexes are row positions"),
    ),
    Case(
        "over= column only in the first frame",
        lambda: {**runs(), "baseline": runs()["baseline"].drop(columns="task")},
        gate(margin=0.1, over="task"),
        Raises(cs.ColumnNotFoundError, r"'task' not found in the second frame"),
    ),
    Case(
        "over= group only in the second frame",
        lambda: {**runs(), "data": runs()["data"].query("task == 'a'")},
        gate(margin=0.1, over="task"),
        Raises(cs.AlignmentError, r"over='task': groups only in the second frame: \['b'\]"),
    ),
]


@pytest.mark.parametrize("case", params(CASES))
def test_hostile(case: Case) -> None:
    run(case)
