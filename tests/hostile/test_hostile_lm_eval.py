"""Hostile input for the lm-evaluation-harness table (issue 25): never an empty table without
a word, and one bad task never loses the others.

The inputs are copies of the committed harness output (``tests/fixtures/lm_eval/``, see
``tests/integrations/test_lm_eval_logs.py``) broken the way real output folders are: a results
file from another run than the samples, a newest run stopped before it wrote its results file, one
task whose documents all share one passage or lack the passage field. Each case states the
exact error naming the tasks and runs at fault, or the rows that must come back (the runs
are the fixture files' dates). The harness (``tests/hostile/hostile.py``) checks that no input
changed.
"""

from __future__ import annotations

import contextlib
import io
import json
import re
import shutil
import tempfile
from pathlib import Path
from typing import Any

import pytest
from hostile import Case, Raises, Returns, Warns, params, quiet, run

import clusterstats as cs
from clusterstats.cli import main

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "lm_eval"
FIRST_RUN = "2026-12-01T20-28-37.679740"  # dummy-a, every task
B_RUN = "2026-12-01T20-31-30.495750"  # dummy-b, every task
LATER = "2026-12-02T09-00-00.000000"  # a run that never wrote its results file


def copied(model: str) -> Path:
    """A fresh copy of one model's folder of harness output."""
    folder = Path(tempfile.mkdtemp()) / model
    shutil.copytree(FIXTURES / model, folder)
    return folder


def results_of_another_run() -> dict[str, Any]:
    folder = copied("dummy-b")
    (results,) = folder.glob("results_*.json")
    results.rename(results.with_name("results_2026-11-30T10-00-00.000000.json"))
    return {"path": folder}


def killed_newest_run() -> dict[str, Any]:
    """dummy-a's cs_gen run again later, stopped before its results file was written."""
    folder = copied("dummy-a")
    shutil.copy(
        folder / f"samples_cs_gen_{FIRST_RUN}.jsonl", folder / f"samples_cs_gen_{LATER}.jsonl"
    )
    return {"path": folder}


def edited_task(edit) -> dict[str, Any]:
    """dummy-b with each document of its cs_mc task changed by ``edit``."""
    folder = copied("dummy-b")
    file = folder / f"samples_cs_mc_{B_RUN}.jsonl"
    records = [json.loads(line) for line in file.read_text().splitlines()]
    for record in records:
        edit(record["doc"])
    file.write_text("".join(json.dumps(record) + "\n" for record in records))
    return {"path": folder}


def table(path: Path, **options: Any) -> Any:
    return cs.lm_eval_table(path, by="passage", **options)


def frame_check(check):
    """``check`` on the table's frame (a ``Warns`` check; ``Returns(frame_check(...))`` for a
    ``Returns`` one)."""
    return lambda result: check(result.to_frame())


def gen_from_first_run(frame) -> None:
    gen = frame[frame["task"] == "cs_gen"]
    assert len(gen) == 4
    assert set(gen["run"]) == {FIRST_RUN}
    assert gen.loc[gen["metric"] == "exact_match", "low"].notna().all()


def cs_mc_noted(pattern: str):
    def check(frame) -> None:
        mc = frame[frame["task"] == "cs_mc"]
        assert len(mc) == 2
        assert mc["low"].isna().all()
        assert mc["notes"].str.contains(pattern, regex=True).all(), mc["notes"].tolist()
        others = frame[(frame["task"] != "cs_mc") & frame["metric"].isin(["acc", "exact_match"])]
        assert len(others) == 3
        assert others["low"].notna().all()

    return check


def cli(argv: list[str]) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(argv)
    return code, out.getvalue(), err.getvalue()


def warned_once(pattern: str) -> Returns:
    """Exit status 0, and exactly one ``warning:`` line matching ``pattern`` on stderr."""

    def check(ran: tuple[int, str, str]) -> None:
        code, _, err = ran
        assert code == 0, err
        lines = [line for line in err.splitlines() if line.startswith("warning: ")]
        assert sum(bool(re.search(pattern, line)) for line in lines) == 1, err

    return Returns(check)


CASES = [
    Case(
        "a results file from another run than the samples",
        results_of_another_run,
        quiet(table),
        Raises(
            cs.EmptyDataError,
            rf"no run has both its samples and its results file.*task 'cs_mc' of model "
            rf"'dummy-b': samples of run {B_RUN}, results of run 2026-11-30T10-00-00\.000000",
        ),
    ),
    Case(
        "the newest run stopped before its results file: the table reads the complete run",
        killed_newest_run,
        lambda path: table(path, runs="latest"),
        Warns(
            cs.IncompleteLogWarning,
            rf"task 'cs_gen' of model 'dummy-a': the samples of run {LATER} have no results "
            rf"file of their run .* reads run {FIRST_RUN}",
            frame_check(gen_from_first_run),
        ),
    ),
    Case(
        "runs='all' with a run that has no results file leaves it out, and says so",
        killed_newest_run,
        lambda path: table(path, runs="all"),
        Warns(
            cs.IncompleteLogWarning,
            rf"the samples of run {LATER} have no results file of their run .* left out",
            frame_check(gen_from_first_run),
        ),
    ),
    Case(
        "one task whose documents share one passage keeps its row, with the reason",
        lambda: edited_task(lambda doc: doc.update(passage="one")),
        quiet(table),
        Returns(frame_check(cs_mc_noted(r"no clustered interval: found 1 cluster"))),
    ),
    Case(
        "one task whose documents lack the passage field keeps its row, with the reason",
        lambda: edited_task(lambda doc: doc.pop("passage")),
        quiet(table),
        Returns(
            frame_check(
                cs_mc_noted(r"no clustered interval: cluster column 'doc_passage' has 12 miss")
            )
        ),
    ),
    Case(
        "an invalid method is the call's error, not every row's note",
        lambda: {"path": copied("dummy-b")},
        lambda path: table(path, method="nonsense"),
        Raises(cs.InvalidOptionError, r"method"),
    ),
    Case(
        "clusterstats lm-eval prints the intervals' few-clusters warning, once",
        lambda: {"path": copied("dummy-b")},
        lambda path: cli(["lm-eval", str(path), "--by", "passage"]),
        warned_once(r"only 4 clusters: the korn_graubard_hybrid interval"),
    ),
    Case(
        "clusterstats lm-eval on a folder whose newest run was stopped",
        killed_newest_run,
        lambda path: cli(["lm-eval", str(path), "--by", "passage", "--runs", "latest"]),
        warned_once(rf"the samples of run {LATER} have no results file"),
    ),
]


@pytest.mark.parametrize("case", params(CASES))
def test_hostile(case: Case) -> None:
    run(case)
