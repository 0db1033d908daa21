"""Hostile input for pairing two frames (issue 25): never by row position unasked.

Two frames whose indexes are both row positions (an unnamed ``RangeIndex`` from 0, what
``read_csv`` and every table reader give) carry no item key; pairing them by the index would
pair row i with row i, and a reordered frame would give a wrong difference without a word.
Each case states the exact error naming ``on=``, or the right McNemar counts (counted by hand
in ``two_runs``). The harness (``tests/hostile/hostile.py``) checks that no input changed.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hostile import Case, Raises, Returns, params, quiet, run

import clusterstats as cs

Alignment = cs.AlignmentError
NAMES_ON = r"both indexes are row positions .* pass on='<item id column>'"


def two_runs(reverse: bool = False) -> dict[str, pd.DataFrame]:
    """100 items ``id`` in 25 docs; ``new`` passes item i when i % 3 == 0, ``old`` when i is
    odd: 17 items pass new only (i % 6 == 0), 33 old only (the 50 odd but the 17 with
    i % 6 == 3). With ``reverse`` the old run's rows come in reverse order."""
    items = np.arange(100)
    new = pd.DataFrame({"id": items, "doc": items % 25, "y": (items % 3 == 0).astype(int)})
    old = pd.DataFrame({"id": items, "doc": items % 25, "y": (items % 2 == 1).astype(int)})
    if reverse:
        old = old.iloc[::-1].reset_index(drop=True)
    return {"data": new, "other": old}


def mcnemar(a_only: int, b_only: int) -> Returns:
    def check(result) -> None:
        assert (result.mcnemar_a_only, result.mcnemar_b_only) == (a_only, b_only)

    return Returns(check)


CASES = [
    Case(
        "paired_delta of two position-indexed frames",
        two_runs,
        quiet(lambda data, other: cs.paired_delta(data, other, "y", "doc")),
        Raises(Alignment, NAMES_ON),
    ),
    Case(
        "the accessor, the same",
        two_runs,
        quiet(lambda data, other: data.eval.paired_delta(other, "y", "doc")),
        Raises(Alignment, NAMES_ON),
    ),
    Case(
        "gate(baseline=) of two position-indexed frames",
        two_runs,
        quiet(lambda data, other: cs.gate(data, "y", "doc", baseline=other, margin=0.1)),
        Raises(Alignment, NAMES_ON),
    ),
    Case(
        "pilot_plan(other=) of two position-indexed frames",
        two_runs,
        quiet(lambda data, other: cs.pilot_plan(data, "y", "doc", other=other, effect=0.1)),
        Raises(Alignment, NAMES_ON),
    ),
    Case(
        "on= pairs a reversed frame by its key",
        lambda: two_runs(reverse=True),
        quiet(lambda data, other: cs.paired_delta(data, other, "y", "doc", on="id")),
        mcnemar(17, 33),
    ),
    Case(
        "an index that names the items pairs a reversed frame by it",
        lambda: {k: v.set_index("id") for k, v in two_runs(reverse=True).items()},
        quiet(lambda data, other: cs.paired_delta(data, other, "y", "doc")),
        mcnemar(17, 33),
    ),
    Case(
        "a named row index is the caller's key",
        lambda: {k: v.rename_axis("row") for k, v in two_runs().items()},
        quiet(lambda data, other: cs.paired_delta(data, other, "y", "doc")),
        mcnemar(17, 33),
    ),
    Case(
        "two columns of one frame are paired row by row, as they share their rows",
        lambda: {"data": two_runs()["data"].assign(old=two_runs()["other"]["y"])},
        quiet(lambda data: cs.paired_delta(data, "y", "old", "doc")),
        mcnemar(17, 33),
    ),
]


@pytest.mark.parametrize("case", params(CASES))
def test_hostile(case: Case) -> None:
    run(case)
