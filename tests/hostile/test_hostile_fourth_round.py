"""Hostile input, fourth round (issue 44): leaderboards, slices, sequences, plots and labels.

Each case the issue lists as a raw exception or a silent oddity is here with the error of
the library's own that names the problem, or the documented result. The expected numbers
follow from the data's construction, stated per case. The harness
(``tests/hostile/hostile.py``) checks that no input changed.
"""

from __future__ import annotations

import subprocess
import sys
import warnings

import matplotlib
import numpy as np
import pandas as pd
import pytest
from hostile import Case, Raises, Returns, Warns, params, quiet, run

import clusterstats as cs

matplotlib.use("Agg")

MIXTRAL, FLASH = "Mixtral-8x7B-Instruct-v0.1", "gemini-1.5-flash-002"


def mmlu() -> pd.DataFrame:
    return cs.datasets.load("mmlu_pro")


def one_source() -> dict[str, pd.DataFrame]:
    """Every model's answers on the questions of a single source: one cluster."""
    frame = mmlu()
    return {"data": frame[frame["src"] == frame["src"].iloc[0]]}


def three_sources() -> dict[str, pd.DataFrame]:
    """Three sources, each its own slice with ``over="src"``: one cluster per slice."""
    frame = mmlu()
    return {"data": frame[frame["src"].isin(frame["src"].unique()[:3])]}


def sliced() -> dict[str, object]:
    frame = mmlu()
    small = frame[frame["src"].isin(frame["src"].unique()[:20])]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", cs.ClusterStatsWarning)
        result = small.eval.compare(
            "correct", by="src", model="model", on="question_id", over="category"
        )
    return {"result": result}


def repoqa() -> dict[str, pd.DataFrame]:
    """RepoQA as read from its file: the index is the row numbers, the key is instance_id."""
    return {"data": cs.datasets.load("repoqa_snf")}


def a_sequence() -> dict[str, object]:
    frame = mmlu()
    return {"seq": cs.confidence_sequence(frame[frame["model"] == MIXTRAL], "correct", by="src")}


def newline_model() -> dict[str, pd.DataFrame]:
    frame = mmlu()
    frame = frame[frame["model"].isin([MIXTRAL, FLASH])].copy()
    frame["model"] = frame["model"].str.replace("Mixtral", "Mix\ntral", regex=False)
    return {"data": frame}


def text_table_rows_keep_their_columns(result) -> None:
    # every line of the printed leaderboard and pairs tables: a label with a line break is
    # written as the escape \n, so no row spills onto a line of its own
    text = repr(result)
    assert "Mix\\ntral" in text
    assert not any(line.startswith("tral") for line in text.split("\n"))


def stacked_models() -> dict[str, pd.DataFrame]:
    return {"data": cs.load_demo_data()}


def mmlu_sides() -> dict[str, pd.DataFrame]:
    frame = mmlu()
    return {"a": frame[frame["model"] == MIXTRAL], "b": frame[frame["model"] == FLASH]}


def named_sides(result) -> None:
    # each side holds one value of its model column: those values name the sides
    assert repr(result).startswith(f"PairedDelta({MIXTRAL} - {FLASH}:")


CASES = [
    Case(
        "compare with one cluster",
        one_source,
        quiet(lambda data: data.eval.compare("correct", by="src", model="model", on="question_id")),
        Raises(cs.TooFewClustersError, r"found 1 cluster .*at least 2"),
    ),
    Case(
        "compare(over=) with a slice of one cluster names the slice",
        three_sources,
        quiet(
            lambda data: data.eval.compare(
                "correct", by="src", model="model", on="question_id", over="src"
            )
        ),
        Raises(cs.TooFewClustersError, r"slice src='ori_mmlu-.*found 1 cluster"),
    ),
    Case(
        "a slice that is not one",
        sliced,
        lambda result: result["nope"],
        Raises(cs.GroupNotFoundError, r"'nope' is not one of the slices \['biology'"),
    ),
    Case(
        "the plot of a slice that is not one",
        sliced,
        lambda result: result.plot(slice="nope"),
        Raises(cs.GroupNotFoundError, r"'nope' is not one of the slices"),
    ),
    Case(
        "a sequence's plot at a NaN threshold",
        a_sequence,
        lambda seq: seq.plot(threshold=float("nan")),
        Raises(cs.InvalidOptionError, r"threshold"),
    ),
    Case(
        "a sequence's plot at a threshold that is text",
        a_sequence,
        lambda seq: seq.plot(threshold="x"),
        Raises(cs.InvalidOptionError, r"threshold"),
    ),
    Case(
        "a sequence's plot on something that is not an Axes",
        a_sequence,
        lambda seq: seq.plot(ax=3),
        Raises(cs.InvalidOptionError, r"ax must be a matplotlib Axes .*got int"),
    ),
    Case(
        "a leaderboard's plot with values= that is not a flag",
        sliced,
        lambda result: result.plot(slice="law", values="no"),
        Raises(cs.InvalidOptionError, r"values must be True or False, got 'no'"),
    ),
    Case(
        "a leaderboard's plot with percent= that is not a flag",
        sliced,
        lambda result: result.plot(slice="law", percent=3),
        Raises(cs.InvalidOptionError, r"percent must be True or False, got 3"),
    ),
    Case(
        "compare(weights=0) where 0 is not a column",
        lambda: {"data": mmlu()},
        quiet(
            lambda data: data.eval.compare(
                "correct", by="src", model="model", on="question_id", weights=0
            )
        ),
        Raises(cs.ColumnNotFoundError, r"column 0 not found; available columns: 'model'"),
    ),
    Case(
        "compare without on= on a frame read from a file names on=",
        repoqa,
        quiet(lambda data: data.eval.compare("correct", by="repo", model="system")),
        Raises(cs.AlignmentError, r"name the item key column with on=, e\.g\. on='instance_id'"),
    ),
    Case(
        "compare without on= and how='inner' names on= too",
        repoqa,
        quiet(lambda data: data.eval.compare("correct", by="repo", model="system", how="inner")),
        Raises(cs.AlignmentError, r"on='instance_id'"),
    ),
    Case(
        "a newline in a model name keeps the text table's rows",
        newline_model,
        quiet(lambda data: data.eval.compare("correct", by="src", model="model", on="question_id")),
        Returns(text_table_rows_keep_their_columns),
    ),
    Case(
        "icc of four models stacked warns that it pools them",
        stacked_models,
        lambda data: data.eval.icc("correct", by="src"),
        Warns(cs.RepeatedItemsWarning, r"column 'model' repeats .* its 4 values .*over='model'"),
    ),
    Case(
        "cluster_ci over= the model column does not warn",
        stacked_models,
        lambda data: data.eval.cluster_ci("correct", by="src", over="model"),
        Returns(lambda result: len(result) == 4),
    ),
    Case(
        "paired_delta names its sides from the model column",
        mmlu_sides,
        quiet(lambda a, b: cs.paired_delta(a, b, "correct", by="src", on="question_id")),
        Returns(named_sides),
    ),
]


@pytest.mark.parametrize("case", params(CASES))
def test_hostile(case: Case) -> None:
    run(case)


def test_a_watching_gate_far_over_its_budget_warns():
    # 60 documents of 4 rows passing 3 times in 4: the sequence of a threshold of 0.74
    # cannot leave 0.75's neighbourhood, so the gate stays inconclusive; the budget is 5
    # clusters, so 60 is 12 times over (the warning starts past twice the budget)
    frame = pd.DataFrame(
        {"doc": np.repeat(np.arange(60), 4), "ok": np.tile([1, 1, 1, 0], 60).astype(float)}
    )
    with pytest.warns(cs.OverBudgetWarning, match=r"12\.0 times its budget of 5 clusters"):
        report = cs.gate(frame, "ok", by="doc", at_least=0.74, sequential=True, budget=5)
    assert any("times its budget" in note for note in report.gates[0].notes)
    with warnings.catch_warnings():
        warnings.simplefilter("error", cs.OverBudgetWarning)
        cs.gate(frame, "ok", by="doc", at_least=0.74, sequential=True, budget=40)


def test_each_slice_of_a_watching_gate_reads_its_own_arrivals():
    # two slices share their 60 document labels but meet them in different orders: each
    # slice's gate must equal that slice's own gate at the Bonferroni level (before, each
    # read the arrivals of both slices: a document arrived when its last row anywhere did)
    rng = np.random.default_rng(1)
    rows = []
    for name, rate in (("a", 0.9), ("b", 0.6)):
        for doc in rng.permutation(60):
            rows += [(name, f"d{doc:02d}", float(rng.random() < rate)) for _ in range(4)]
    frame = pd.DataFrame(rows, columns=["slice", "doc", "y"])
    together = cs.gate(frame, "y", by="doc", at_least=0.5, over="slice", sequential=True)
    for name, gate in zip(("a", "b"), together.gates, strict=True):
        alone = cs.gate(
            frame[frame["slice"] == name], "y", by="doc", at_least=0.5, sequential=True,
            confidence=1 - 0.05 / 2,
        ).gates[0]  # fmt: skip
        assert gate.group == name
        assert (gate.low, gate.high, gate.decided_at) == (alone.low, alone.high, alone.decided_at)


@pytest.mark.parametrize("sequential", [False, True])
def test_a_gate_whose_baseline_lacks_items_can_take_the_advice_it_gives(bbh, sequential):
    # the baseline lacks the last 50 items: strict refuses and names how='inner', which the
    # gate takes (before, gate() had no how=: the advice was a dead end)
    cot, direct = bbh[bbh.condition == "cot"], bbh[bbh.condition == "direct"].iloc[:-50]
    options = {"baseline": direct, "on": "item_id", "margin": 0.02, "sequential": sequential}
    with pytest.raises(cs.AlignmentError, match="pass how='inner'"):
        quiet(cs.gate)(data=cot, outcome="correct", by="task", **options)
    report = quiet(cs.gate)(data=cot, outcome="correct", by="task", how="inner", **options)
    notes = report.gates[0].notes
    assert "how='inner': 50 items only in cot and 0 only in direct were left out" in notes
    with pytest.raises(cs.InvalidOptionError, match="how= goes with baseline="):
        cs.gate(cot, "correct", by="task", at_least=0.5, how="inner")


def test_the_command_line_gate_names_and_takes_how_inner(bbh, tmp_path):
    cot, direct = bbh[bbh.condition == "cot"], bbh[bbh.condition == "direct"].iloc[:-50]
    cot.to_csv(tmp_path / "cot.csv", index=False)
    direct.to_csv(tmp_path / "direct.csv", index=False)
    words = [sys.executable, "-m", "clusterstats", "gate", str(tmp_path / "cot.csv"),
             "--baseline", str(tmp_path / "direct.csv"), "--on", "item_id", "--margin",
             "0.02", "--outcome", "correct", "--by", "task"]  # fmt: skip
    strict = subprocess.run(words, capture_output=True, text=True)
    assert strict.returncode == 3
    assert "pass --how inner to compare the common items" in strict.stderr
    inner = subprocess.run([*words, "--how", "inner"], capture_output=True, text=True)
    assert inner.returncode == 0, inner.stderr
    assert "50 items only in cot and 0 only in direct were left out" in inner.stdout


def test_every_backend_names_the_sides_from_the_data():
    # the same two models as pandas, polars, pyarrow, dask and a Dataset with a scalar
    # ``model`` coordinate: each names its sides from the data, with the same numbers
    import dask.dataframe as dd
    import polars as pl

    frame = mmlu()
    a, b = frame[frame["model"] == MIXTRAL], frame[frame["model"] == FLASH]
    options = {"by": "src", "on": "question_id", "method": "cr2"}
    results = {
        "pandas": cs.paired_delta(a, b, "correct", **options),
        "polars": cs.paired_delta(pl.from_pandas(a), pl.from_pandas(b), "correct", **options),
        "pyarrow": cs.paired_delta(
            pl.from_pandas(a).to_arrow(), pl.from_pandas(b).to_arrow(), "correct", **options
        ),
        "dask": cs.paired_delta(
            dd.from_pandas(a, npartitions=3),
            dd.from_pandas(b, npartitions=2),
            "correct",
            **options,
        ),
    }
    for name, result in results.items():
        assert (result.label_a, result.label_b) == (MIXTRAL, FLASH), name
        assert result.delta == pytest.approx(results["pandas"].delta, rel=1e-12), name
        assert result.se == pytest.approx(results["pandas"].se, rel=1e-12), name
    runs = cs.to_case_rerun(
        frame.assign(run=0), case="question_id", rerun="run", outcome="correct", dims=["model"]
    )
    paired = cs.paired_delta(
        runs.sel(model=MIXTRAL), runs.sel(model=FLASH), "correct", by="src", method="cr2"
    )
    assert (paired.label_a, paired.label_b) == (MIXTRAL, FLASH)
