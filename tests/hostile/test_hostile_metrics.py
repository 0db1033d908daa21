"""Hostile input for ``to_metrics()`` (issue 25): distinct groups never share a key.

Keys are made for experiment trackers (letters, digits, ``_ - . /`` and spaces; a ``/`` joins
the labels of several dims), so distinct labels can meet in one key. Each case states that
such labels are refused with ``MetricKeyError`` naming both groups, or that the metrics are
the numbers of the result's own ``to_frame()`` (the reference). The harness
(``tests/hostile/hostile.py``) checks that no input changed.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hostile import Case, Raises, Returns, params, quiet, run

import clusterstats as cs

Collision = cs.MetricKeyError
FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "lm_eval"


def graded(**labels: tuple) -> dict[str, pd.DataFrame]:
    """400 rows in 100 docs of 4, ``y`` drawn with a fixed seed at a doc's rate; each
    keyword a column cycling through its labels row by row (every label in every doc)."""
    rng = np.random.default_rng(7)
    doc = np.arange(400) // 4
    frame = pd.DataFrame({"doc": doc, "item": np.arange(400) % 200})
    frame["y"] = (rng.random(400) < rng.uniform(0.2, 0.8, size=100)[doc]).astype(int)
    for name, values in labels.items():
        frame[name] = np.array(values, dtype=object)[np.arange(400) % len(values)]
    return {"data": frame}


def models(*names: str) -> dict[str, pd.DataFrame]:
    """Each model graded on the same 200 items in 50 docs of 4 (a fixed seed), long form."""
    rng = np.random.default_rng(11)
    item = np.arange(200)
    rate = rng.uniform(0.2, 0.8, size=50)[item // 4]
    frames = [
        pd.DataFrame(
            {"doc": item // 4, "item": item, "m": name, "y": (rng.random(200) < rate).astype(int)}
        )
        for name in names
    ]
    return {"data": pd.concat(frames, ignore_index=True)}


@quiet
def over_metrics(data):
    over = [c for c in data.columns if c not in ("doc", "item", "y")]
    return data.eval.cluster_ci("y", "doc", over=over if len(over) > 1 else over[0]).to_metrics()


@quiet
def gate_metrics(data):
    return cs.gate(data, "y", "doc", at_least=0.1, over="m").to_metrics()


@quiet
def compare_metrics(data):
    return cs.compare(data, "y", "doc", model="m", on="item").to_metrics()


def collides(*labels: str) -> Raises:
    return Raises(Collision, r"the groups .*" + r".* and .*".join(labels) + r".* both give")


def comparison_as_frames() -> Returns:
    """The comparison's metrics are its leaderboard's and its pairs' numbers."""

    def check(metrics: dict[str, float]) -> None:
        again = quiet(lambda data: cs.compare(data, "y", "doc", model="m", on="item"))(
            **models("a", "b", "c")
        )
        board = again.leaderboard()
        for row in board.itertuples(index=False):
            assert metrics[f"{row.model}/score"] == row.score
        for a, b, delta in zip(again.pair_a, again.pair_b, again.delta, strict=True):
            assert metrics[f"{a} - {b}/delta"] == delta
        assert metrics["n_clusters"] == again.n_clusters

    return Returns(check)


def lm_eval_as_frame() -> Returns:
    """Every number of ``to_frame()`` is a metric under its row's labels."""

    def check(metrics: dict[str, float]) -> None:
        frame = quiet(lambda: cs.lm_eval_table(FIXTURES, by="passage", runs="latest"))()
        frame = frame.to_frame()
        seen = 0
        for row in frame.itertuples(index=False):
            key = f"lm/{row.model}/{row.task}/{row.filter}/{row.metric}/value"
            assert metrics[cs._result.metric_key(key)] == row.value
            seen += 1
        assert seen == len(frame) > 0

    return Returns(check)


def fixture_files() -> dict[str, Path]:
    return {f"file_{hashlib.md5(str(p).encode()).hexdigest()[:8]}": p for p in FIXTURES.rglob("*")}


CASES = [
    # -- over= labels that meet in one key
    Case(
        "over= labels ':' and '?' both become '_'",
        lambda: graded(m=("gpt:4", "gpt?4")),
        over_metrics,
        collides("gpt:4", "gpt\\?4"),
    ),
    Case("over= labels 1 and '1'", lambda: graded(m=(1, "1")), over_metrics, collides("1", "'1'")),
    Case(
        "two over= dims whose '/' falls differently",
        lambda: graded(a=("a", "a/b"), b=("b/c", "c")),
        over_metrics,
        collides(r"\('a', 'b/c'\)", r"\('a/b', 'c'\)"),
    ),
    Case(
        "gate over= labels that meet in one key",
        lambda: graded(m=("x:y", "x;y")),
        gate_metrics,
        collides("x:y", "x;y"),
    ),
    Case(
        "compare: models that meet in one key",
        lambda: models("gpt:4", "gpt?4", "o1"),
        compare_metrics,
        collides("gpt:4", "gpt\\?4"),
    ),
    # -- and labels that stay apart keep every group
    Case(
        "over= labels that differ only in case stay apart",
        lambda: graded(m=("GPT", "gpt")),
        over_metrics,
        Returns(lambda metrics: {"GPT/estimate", "gpt/estimate"} <= set(metrics)),
    ),
    # -- the results the docs say have to_metrics, as their own frames give them
    Case(
        "Comparison.to_metrics",
        lambda: models("a", "b", "c"),
        compare_metrics,
        comparison_as_frames(),
    ),
    Case(
        "LmEvalTable.to_metrics",
        fixture_files,
        lambda **files: quiet(
            lambda: cs.lm_eval_table(FIXTURES, by="passage", runs="latest").to_metrics("lm/")
        )(),
        lm_eval_as_frame(),
    ),
]


@pytest.mark.parametrize("case", params(CASES))
def test_hostile(case: Case) -> None:
    run(case)
