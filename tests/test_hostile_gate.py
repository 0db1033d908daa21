"""Hostile input for the gate (issue 25): its numeric options and its Markdown report.

Each case states the exact error and a message naming the option at fault, or what must come
back. A gate given numpy scalars must decide exactly as with the same Python numbers (the
reference is the same call with ``float``/``int``); a Markdown report must keep one cell per
column whatever its labels hold. The harness (``tests/hostile.py``) checks that no input
changed.
"""

from __future__ import annotations

import re

import numpy as np
import pandas as pd
import pytest
from hostile import Case, Raises, Returns, params, run

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
]


@pytest.mark.parametrize("case", params(CASES))
def test_hostile(case: Case) -> None:
    run(case)
