"""Hostile input for the command line: the catalogue of issue 15.

Each case writes its files afresh, runs ``clusterstats.cli.main`` in-process with standard
output and error captured, and states what must happen: exit status 2 with nothing on
standard output and exactly one ``clusterstats: error: ...`` line naming the file, line,
column or option at fault, or exit status 0 with the numbers stated (and their source) in the
case's comment. The harness (``tests/hostile/hostile.py``) checks that no input file changed.
"""

from __future__ import annotations

import contextlib
import importlib.util
import io
import json
import re
import sys
import tempfile
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from unittest import mock

import pytest
from hostile import Case, Returns, params, run

from clusterstats.cli import main

CI = ("--outcome", "passed", "--by", "doc")
NEEDS_INSPECT = (
    pytest.mark.skipif(importlib.util.find_spec("inspect_ai") is None, reason="needs inspect_ai"),
)


@dataclass(frozen=True)
class Ran:
    code: int
    out: str
    err: str


def cli(argv: list[str]) -> Ran:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(argv)
    return Ran(code, out.getvalue(), err.getvalue())


def fails(pattern: str, *, code: int = 2) -> Returns:
    """Exit status 2 (``gate``: 3), nothing printed, one error line matching ``pattern``."""

    def check(ran: Ran) -> None:
        assert ran.code == code, ran
        assert ran.out == "", ran
        lines = ran.err.splitlines()
        assert len(lines) == 1, ran.err
        assert lines[0].startswith("clusterstats: error: "), ran.err
        assert re.search(pattern, lines[0]), f"{lines[0]!r} does not match {pattern!r}"

    return Returns(check)


def result(**expected: Any) -> Returns:
    """Exit status 0 and a ``--output json`` record with these fields."""

    def check(ran: Ran) -> None:
        assert ran.code == 0, ran.err
        record = json.loads(ran.out)
        for key, value in expected.items():
            assert record[key] == pytest.approx(value, rel=1e-12), (key, record[key])

    return Returns(check)


def rows_csv(n: int = 100, clusters: int = 25) -> str:
    """``passed`` = i % 2 and ``doc`` = i % clusters for i < n: with n = 100 and 25 clusters,
    50 of the 100 rows pass (estimate 0.5), each doc holding 4 rows."""
    return "passed,doc\n" + "".join(f"{i % 2},{i % clusters}\n" for i in range(n))


def rows_jsonl(n: int = 100, clusters: int = 25) -> str:
    return "".join(json.dumps({"passed": i % 2, "doc": i % clusters}) + "\n" for i in range(n))


def table(name: str, content: str | bytes, *args: str) -> dict[str, Any]:
    """Inputs running ``clusterstats ci FILE *args`` on a fresh file ``name``."""
    path = Path(tempfile.mkdtemp()) / name
    path.write_bytes(content if isinstance(content, bytes) else content.encode("utf-8"))
    return {"argv": ["ci", str(path), *args], "path": path}


def command(*args: str) -> dict[str, Any]:
    return {"argv": list(args)}


def case(
    name: str, inputs: Callable[[], dict[str, Any]], expect: Returns, marks: tuple[Any, ...] = ()
) -> Case:
    return Case(name, inputs, lambda argv, **files: cli(argv), expect, marks)


def lm_eval_folder(metric: Any = None) -> dict[str, Any]:
    """40 documents of one task, ``acc`` = doc_id % 2, subject s0..s7 (doc_id % 8); with
    ``metric`` the value of document 3's ``acc``."""
    root = Path(tempfile.mkdtemp()) / "pythia"
    root.mkdir()
    lines = []
    for doc_id in range(40):
        value = metric if doc_id == 3 and metric is not None else float(doc_id % 2)
        record = {
            "doc_id": doc_id,
            "doc": {"subject": f"s{doc_id % 8}"},
            "target": "A",
            "filter": "none",
            "metrics": ["acc"],
            "acc": value,
        }
        lines.append(json.dumps(record) + "\n")
    path = root / "samples_arc_2024-07-01T12-30-45.jsonl"
    path.write_text("".join(lines))
    return {"argv": ["ci", str(root), "--format", "lm-eval"], "path": path}


def with_args(inputs: dict[str, Any], *args: str) -> dict[str, Any]:
    return {**inputs, "argv": [*inputs["argv"], *args]}


def without_inspect(argv: list[str], **files: Any) -> Ran:
    # a None entry in sys.modules makes "import inspect_ai..." raise ImportError
    blocked = dict.fromkeys(("inspect_ai", "inspect_ai.log", "inspect_ai.scorer"))
    with mock.patch.dict(sys.modules, blocked):
        return cli(argv)


def to_nowhere() -> dict[str, Any]:
    target = Path(tempfile.mkdtemp()) / "no-such-folder" / "tau.csv"
    return {"argv": ["datasets", "tau_bench_airline", "--to", str(target)], "target": target}


def to_xlsx() -> dict[str, Any]:
    target = Path(tempfile.mkdtemp()) / "tau.xlsx"
    return {"argv": ["datasets", "tau_bench_airline", "--to", str(target)], "target": target}


def a_folder() -> dict[str, Any]:
    return {"argv": ["ci", tempfile.mkdtemp(), *CI]}


def pair_rows(rule: Callable[[int], int], order: Callable[[int], int] = lambda i: i) -> str:
    """100 items ``id`` = i in 25 docs (``doc`` = i % 25) with ``passed`` = rule(i), written
    in the order ``order`` gives (row r holds item order(r))."""
    rows = (order(r) for r in range(100))
    return "id,doc,passed\n" + "".join(f"{i},{i % 25},{rule(i)}\n" for i in rows)


def two_files(command: str, new: str, old: str, *args: str) -> dict[str, Any]:
    """``clusterstats COMMAND new.csv --baseline old.csv *args``: ``paired``, ``gate`` and
    ``plan`` take the second file alike."""
    folder = Path(tempfile.mkdtemp())
    path_a, path_b = folder / "new.csv", folder / "old.csv"
    path_a.write_text(new)
    path_b.write_text(old)
    second = ["--baseline", str(path_b)]  # every command that takes a baseline
    return {"argv": [command, str(path_a), *second, *args], "a": path_a, "b": path_b}


def mcnemar(a_only: int, b_only: int) -> Returns:
    """Exit status 0 and McNemar's discordant counts as stated."""

    def check(ran: Ran) -> None:
        assert ran.code == 0, ran.err
        record = json.loads(ran.out)
        assert (record["mcnemar_a_only"], record["mcnemar_b_only"]) == (a_only, b_only), record

    return Returns(check)


def retarget(inputs: dict[str, Any], command: str) -> dict[str, Any]:
    """``table``'s inputs, run by ``command`` instead of ``ci``."""
    return {**inputs, "argv": [command, *inputs["argv"][1:]]}


def verdict(expected: str) -> Returns:
    """Exit status 0 and a gate ``--output json`` report with this verdict."""

    def check(ran: Ran) -> None:
        assert ran.code == 0, ran.err
        assert json.loads(ran.out)["verdict"] == expected, ran.out

    return Returns(check)


# new passes item i when i % 3 == 0, old when i is odd: 17 items pass new only (i % 6 == 0)
# and 33 old only (the 50 odd items but the 17 with i % 6 == 3), counted by hand
NEW, OLD = (lambda i: int(i % 3 == 0)), (lambda i: int(i % 2 == 1))
# the same items, the second file's rows reversed within each doc (doc labels still agree
# row by row: row r holds item 75 + r % 25 - 25 * (r // 25))
WITHIN_DOCS = lambda r: 75 + r % 25 - 25 * (r // 25)  # noqa: E731
PAIRED = ("--outcome", "passed", "--by", "doc")
# the committed log of three scorers (includes, flaky and the dict-valued details) on 12
# samples in 4 documents, 3 epochs (tools/make_inspect_fixtures.py)
INSPECT_LOG = next((Path(__file__).parents[1] / "fixtures" / "inspect" / "complete").glob("*.eval"))

# 100 items in 25 docs, crossed with 4 templates (i % 4), weights 1..3 (i % 3 + 1); passed
# when i % 3 == 0 (NEW's rule)
WEIGHTED_ROWS = "id,doc,tmpl,w,passed\n" + "".join(
    f"{i},{i % 25},{i % 4},{i % 3 + 1},{int(i % 3 == 0)}\n" for i in range(100)
)


def gate_reads(**options: Any) -> Returns:
    """The exit status and the one gate's bounds that ``clusterstats.gate`` gives on the same
    rows with the same options (the Python API as the reference)."""
    import pandas as pd

    import clusterstats as cs

    def check(ran: Ran) -> None:
        frame = pd.read_csv(io.StringIO(WEIGHTED_ROWS))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", cs.ClusterStatsWarning)
            report = cs.gate(frame, "passed", **options)
        assert ran.code == report.exit_code, ran.err
        (only,) = json.loads(ran.out)["gates"]
        expected = report.gates[0]
        assert (only["low"], only["high"]) == pytest.approx((expected.low, expected.high))
        assert only["method"] == expected.method

    return Returns(check)


# rows_csv with a model column, empty (missing) in the first row only
MODEL_MISSING_ONCE = "passed,doc,model\n" + "".join(
    f"{i % 2},{i % 25},{'' if i == 0 else 'm'}\n" for i in range(100)
)
# (doc, passed): docs "007" (rows 0-3), "7" (rows 4-7) and "102" ... "124" (4 rows each): 25
# clusters as text, 24 as numbers; passed = i % 2, 50 of 100
ZERO_PADDED = [("007" if i < 4 else "7" if i < 8 else str(100 + i // 4), i % 2) for i in range(100)]

CASES = [
    # -- the command line itself: argparse used to print its usage and raise SystemExit(2)
    case(
        "an unknown option",
        lambda: table("runs.csv", rows_csv(), *CI, "--bogus"),
        fails(r"unrecognized arguments: --bogus \(see clusterstats --help\)"),
    ),
    case(
        "an unknown --method",
        lambda: table("runs.csv", rows_csv(), *CI, "--method", "exact"),
        fails(r"argument --method: invalid choice: 'exact' \(choose from 'auto',"),
    ),
    case(
        "an unknown --estimand",
        lambda: table("runs.csv", rows_csv(), *CI, "--estimand", "median"),
        fails(r"argument --estimand: invalid choice: 'median'"),
    ),
    case(
        "an unknown --output",
        lambda: table("runs.csv", rows_csv(), *CI, "--output", "xml"),
        fails(r"argument --output: invalid choice: 'xml'"),
    ),
    case(
        "an unknown --format",
        lambda: table("runs.csv", rows_csv(), *CI, "--format", "csv"),
        fails(r"argument --format: invalid choice: 'csv'"),
    ),
    case(
        "--confidence not a number",
        lambda: table("runs.csv", rows_csv(), *CI, "--confidence", "95%"),
        fails(r"argument --confidence: invalid float value: '95%' \(see clusterstats ci --help\)"),
    ),
    case(
        "--n-resamples not an integer",
        lambda: table("runs.csv", rows_csv(), *CI, "--n-resamples", "1e3"),
        fails(r"argument --n-resamples: invalid int value: '1e3'"),
    ),
    case(
        "--seed not an integer",
        lambda: table("runs.csv", rows_csv(), *CI, "--seed", "abc"),
        fails(r"argument --seed: invalid int value: 'abc'"),
    ),
    case(
        "no --outcome",
        lambda: table("runs.csv", rows_csv(), "--by", "doc"),
        fails(r"the following arguments are required: --outcome"),
    ),
    case(
        "no command",
        lambda: command(),
        fails(r"the following arguments are required: command \(see clusterstats --help\)"),
    ),
    case(
        "an unknown command",
        lambda: command("interval"),
        fails(r"argument command: invalid choice: 'interval'"),
    ),
    case(
        "an unknown dataset",
        lambda: command("datasets", "nosuch"),
        fails(r"argument name: invalid choice: 'nosuch' .*\(see clusterstats datasets --help\)"),
    ),
    case(
        "--outcome given twice (argparse kept the last silently)",
        lambda: table("runs.csv", rows_csv(), *CI, "--outcome", "doc"),
        fails(r"argument --outcome: given twice; give it once"),
    ),
    case(
        # --over repeats (a combination of columns), so the outcome among them is named
        "--over given twice, one of them the outcome",
        lambda: table("runs.csv", rows_csv(), *CI, "--over", "passed", "--over", "doc"),
        fails(r"--outcome 'passed' is also the --over column"),
    ),
    case(
        "--confidence given twice (argparse kept the last silently)",
        lambda: table("runs.csv", rows_csv(), *CI, "--confidence", "0.9", "--confidence", "0.99"),
        fails(r"argument --confidence: given twice"),
    ),
    # -- option values the statistics refuse
    case(
        "--outcome the --by column (an interval of the cluster ids before)",
        lambda: table("runs.csv", rows_csv(), "--outcome", "doc", "--by", "doc"),
        fails(r"--outcome 'doc' is also the --by column"),
    ),
    case(
        "--outcome the --over column",
        lambda: table("runs.csv", rows_csv(), *CI, "--over", "passed"),
        fails(r"--outcome 'passed' is also the --over column"),
    ),
    case(
        "--over the --by column (one cluster per group)",
        lambda: table("runs.csv", rows_csv(), *CI, "--over", "doc"),
        fails(r"group 0 of 'doc': found 1 cluster"),
    ),
    case(
        "--over a column with a missing label",
        lambda: table("runs.csv", MODEL_MISSING_ONCE, *CI, "--over", "model"),
        fails(r"column 'model' \(--over\) has 1 missing label"),
    ),
    case(
        "a JSON Lines outcome of Infinity",
        lambda: table(
            "runs.jsonl", rows_jsonl().replace('"passed": 1', '"passed": Infinity', 1), *CI
        ),
        fails(r"outcome column 'passed' contains infinite values"),
    ),
    case(
        "the path - (no reading from standard input)",
        lambda: command("ci", "-", *CI),
        fails(r"cannot read '-': no such file"),
    ),
    case(
        "--confidence 95 (a percentage)",
        lambda: table("runs.csv", rows_csv(), *CI, "--confidence", "95"),
        fails(r"confidence must be strictly between 0 and 1 \(e\.g\. 0\.95\), got 95"),
    ),
    case(
        "--confidence nan",
        lambda: table("runs.csv", rows_csv(), *CI, "--confidence", "nan"),
        fails(r"confidence must be strictly between 0 and 1 .*got nan"),
    ),
    case(
        "--n-resamples 1 for a bootstrap",
        lambda: table("runs.csv", rows_csv(), *CI, "--method", "bootstrap", "--n-resamples", "1"),
        fails(r"--n-resamples 1 is too few"),
    ),
    case(
        "--seed negative",
        lambda: table("runs.csv", rows_csv(), *CI, "--method", "bootstrap", "--seed", "-1"),
        fails(r"rng must be None, a non-negative integer seed .*got -1"),
    ),
    case(
        "--outcome a missing column",
        lambda: table("runs.csv", rows_csv(), "--outcome", "correct", "--by", "doc"),
        fails(r"column 'correct' not found; available columns: 'passed', 'doc'"),
    ),
    case(
        "--by a missing column",
        lambda: table("runs.csv", rows_csv(), "--outcome", "passed", "--by", "task"),
        fails(r"column 'task' not found; available columns: 'passed', 'doc'"),
    ),
    case(
        "--over a missing column",
        lambda: table("runs.csv", rows_csv(), *CI, "--over", "model"),
        fails(r"column 'model' not found; available columns: 'passed', 'doc'"),
    ),
    case(
        "--by two columns joined by a comma",
        lambda: table("runs.csv", rows_csv(), "--outcome", "passed", "--by", "passed,doc"),
        fails(r"--by 'passed,doc': no such column; .*repeat --by: --by passed --by doc"),
    ),
    case(
        "an outcome of yes/no text",
        lambda: table(
            "runs.csv", rows_csv().replace("\n1,", "\nyes,").replace("\n0,", "\nno,"), *CI
        ),
        fails(r"outcome column 'passed' has dtype \w+, which is not numeric"),
    ),
    case(
        "an infinite outcome",
        lambda: table("runs.csv", rows_csv().replace("\n1,", "\ninf,", 1), *CI),
        fails(r"outcome column 'passed' contains infinite values"),
    ),
    case(
        "--missing raise with a missing outcome",
        lambda: table("runs.csv", rows_csv().replace("\n1,", "\n,", 1), *CI, "--missing", "raise"),
        fails(r"outcome column 'passed' has 1 missing value"),
    ),
    case(
        "a single cluster",
        lambda: table("runs.csv", rows_csv(clusters=1), *CI),
        fails(r"1 cluster"),
    ),
    case(
        "cluster ids that are JSON objects",
        lambda: table("runs.jsonl", '{"passed": 1, "doc": {"id": 1}}\n' * 4, *CI),
        fails(r"column 'doc' holds dict values"),
    ),
    # -- files that cannot be read as a table
    case("a folder without --format", a_folder, fails(r"cannot read '.*': it is a folder")),
    case(
        "a CSV header naming a column twice (pandas read the first, renamed the second)",
        lambda: table("runs.csv", "passed,passed,doc\n1,0,1\n0,1,2\n", *CI),
        fails(r"cannot read '.*runs\.csv': the header names column 'passed' 2 times"),
    ),
    case(
        "a semicolon-separated CSV (Excel in many locales)",
        lambda: table("runs.csv", rows_csv().replace(",", ";"), *CI),
        fails(r"runs\.csv': the header 'passed;doc' is one column: .*separated by ';'"),
    ),
    case(
        "a tab-separated file named .csv",
        lambda: table("runs.csv", rows_csv().replace(",", "\t"), *CI),
        fails(r"runs\.csv': the header 'passed\\tdoc' is one column: .*separated by '\\t'"),
    ),
    case(
        "cluster ids 7 and 007 in a CSV (pandas read both as the number 7)",
        lambda: table(
            "runs.csv", "passed,doc\n" + "".join(f"{p},{d}\n" for d, p in ZERO_PADDED), *CI
        ),
        fails(r"runs\.csv': column 'doc' holds ids '007' and '7', different text but the same"),
    ),
    case(
        "an unclosed quote in a CSV",
        lambda: table("runs.csv", 'passed,doc\n1,"a\n0,b\n', *CI),
        fails(r"runs\.csv': malformed CSV \(.*EOF inside string"),
    ),
    case(
        "a UTF-16 CSV (PowerShell's > writes one)",
        lambda: table("runs.csv", rows_csv().encode("utf-16"), *CI),
        fails(r"runs\.csv': it is UTF-16 text .*pass --encoding utf-16"),
    ),
    case(
        "an unknown --encoding",
        lambda: table("runs.csv", rows_csv(), *CI, "--encoding", "utf-9"),
        fails(r"runs\.csv': unknown encoding 'utf-9'"),
    ),
    case(
        "a JSON Lines key given twice (JSON kept the last value silently)",
        lambda: table("runs.jsonl", '{"passed": 1, "doc": 1, "passed": 0}\n', *CI),
        fails(r"runs\.jsonl': line 1 has the key 'passed' twice"),
    ),
    case(
        "a JSON array saved as .jsonl",
        lambda: table("runs.jsonl", '[\n  {"passed": 1, "doc": 1}\n]\n', *CI),
        fails(r"runs\.jsonl': line 1 is not valid JSON .*name the file \.json"),
    ),
    case(
        "a JSON key given twice in a .json table",
        lambda: table("runs.json", '[{"passed": 1, "doc": 1, "doc": 2}]', *CI),
        fails(r"runs\.json': an object has the key 'doc' twice"),
    ),
    case(
        "a JSON array holding a list (read as columns 0 and 1 before)",
        lambda: table("runs.json", '[{"passed": 1, "doc": 1}, [0, 2]]', *CI),
        fails(r"runs\.json': item 2 of the JSON array is a list, not an object"),
    ),
    case(
        "a JSON file holding a string",
        lambda: table("runs.json", '"passed,doc"', *CI),
        fails(r"runs\.json': the file holds a string, not a JSON table"),
    ),
    case(
        "JSON Lines saved as .json",
        lambda: table("runs.json", rows_jsonl(), *CI),
        fails(r"runs\.json': not a JSON table \(Extra data at line 2 column 1\)"),
    ),
    case(
        "numbers written as text in a .json table (pandas read them as numbers before)",
        lambda: table(
            "runs.json",
            json.dumps([{"passed": str(i % 2), "doc": i % 25} for i in range(100)]),
            *CI,
        ),
        fails(r"outcome column 'passed' has dtype \w+, which is not numeric"),
    ),
    # -- the log formats
    case(
        "--encoding with --format lm-eval (was ignored)",
        lambda: with_args(
            lm_eval_folder(), "--encoding", "latin-1", "--outcome", "acc", "--by", "doc_id"
        ),
        fails(r"--encoding is for \.csv, \.tsv, \.json and \.jsonl tables; --format lm-eval"),
    ),
    case(
        "--format lm-eval with a metric stored as text",
        lambda: with_args(lm_eval_folder("1.0"), "--outcome", "acc", "--by", "doc_subject"),
        fails(r"samples_arc_2024-07-01T12-30-45\.jsonl': line 4: metric 'acc' is a string"),
    ),
    case(
        "--format lm-eval on a CSV file",
        lambda: with_args(table("runs.csv", rows_csv()), "--format", "lm-eval", *CI),
        fails(r"runs\.csv': line 1 is not valid JSON .*samples_<task>_<date>\.jsonl"),
    ),
    case(
        "--format lm-eval on a folder without samples",
        lambda: {"argv": ["ci", tempfile.mkdtemp(), "--format", "lm-eval", *CI]},
        fails(r"no samples_\*\.jsonl files: none in '.*'"),
    ),
    case(
        "--format inspect on a file that is not a log",
        lambda: with_args(
            table("2024-01-01T00-00-00_x.eval", b"PK\x03\x04"), "--format", "inspect", *CI
        ),
        fails(r"_x\.eval': not an inspect_ai log"),
        NEEDS_INSPECT,
    ),
    Case(
        "--format inspect without inspect_ai installed (was an ImportError traceback)",
        lambda: with_args(table("2024-01-01T00-00-00_x.eval", b"PK"), "--format", "inspect", *CI),
        without_inspect,
        fails(r"--format inspect: read_inspect needs inspect_ai, .*pip install inspect-ai"),
    ),
    # -- the datasets command
    case(
        "datasets --to an unknown file type",
        to_xlsx,
        fails(r"--to '.*tau\.xlsx': unknown file type '\.xlsx'; write a \.csv"),
    ),
    case(
        "datasets --to a folder that does not exist",
        to_nowhere,
        fails(r"non-existent directory: '.*no-such-folder'"),
    ),
    # -- awkward input that is read, with the right numbers (rows_csv: 50 of 100 pass)
    case(
        "a UTF-8 CSV with a byte-order mark (Excel's CSV UTF-8)",
        lambda: table("runs.csv", b"\xef\xbb\xbf" + rows_csv().encode(), *CI, "--output", "json"),
        result(estimate=0.5, n_rows=100, n_clusters=25),
    ),
    case(
        "JSON Lines with a byte-order mark (was a JSON error on line 1)",
        lambda: table("runs.jsonl", "\ufeff" + rows_jsonl(), *CI, "--output", "json"),
        result(estimate=0.5, n_rows=100, n_clusters=25),
    ),
    case(
        "a UTF-16 CSV with --encoding utf-16",
        lambda: table(
            "runs.csv", rows_csv().encode("utf-16"), *CI, "--encoding", "utf-16", "--output", "json"
        ),
        result(estimate=0.5, n_rows=100, n_clusters=25),
    ),
    # true/false outcomes are 1/0 (docs/cli.md); the same 50 of 100 rows are true
    case(
        "an outcome of TRUE/FALSE",
        lambda: table(
            "runs.csv",
            rows_csv().replace("\n1,", "\nTRUE,").replace("\n0,", "\nFALSE,"),
            *CI,
            "--output",
            "json",
        ),
        result(estimate=0.5, n_rows=100, n_clusters=25),
    ),
    # JSON is typed: "007" and "7" stay two clusters, 25 in all (ZERO_PADDED)
    case(
        "cluster ids 7 and 007 in a .json table stay two clusters (were merged as 7)",
        lambda: table(
            "runs.json",
            json.dumps([{"passed": p, "doc": d} for d, p in ZERO_PADDED]),
            *CI,
            "--output",
            "json",
        ),
        result(estimate=0.5, n_rows=100, n_clusters=25),
    ),
    # -- pairing by a key (issue 25): the rows of a file carry no key, so two files are
    # paired by --on, or by position only when asked (--on-position) and the --by labels
    # agree row by row
    case(
        "paired without --on names --on",
        lambda: two_files("paired", pair_rows(NEW), pair_rows(OLD), *PAIRED),
        fails(r"new\.csv and .*old\.csv must be paired item by item: pass --on"),
    ),
    case(
        "gate --baseline without --on names --on",
        lambda: two_files("gate", pair_rows(NEW), pair_rows(OLD), *PAIRED, "--margin", "0.1"),
        fails(r"must be paired item by item: pass --on", code=3),
    ),
    case(
        "plan --baseline without --on names --on",
        lambda: two_files("plan", pair_rows(NEW), pair_rows(OLD), *PAIRED, "--effect", "0.1"),
        fails(r"must be paired item by item: pass --on"),
    ),
    case(
        "paired --on with one file reordered within its docs pairs by the key",
        lambda: two_files(
            "paired",
            pair_rows(NEW),
            pair_rows(OLD, WITHIN_DOCS),
            *PAIRED,
            "--on",
            "id",
            "--output",
            "json",
        ),
        mcnemar(17, 33),
    ),
    case(
        "gate --baseline --on with one file reordered within its docs pairs by the key",
        lambda: two_files(
            "gate",
            pair_rows(NEW),
            pair_rows(OLD, lambda r: 99 - r),
            *PAIRED,
            "--on",
            "id",
            "--margin",
            "0.5",
            "--output",
            "json",
        ),
        # delta -0.16 (17 - 33 of 100 items), its interval well above -0.5
        verdict("pass"),
    ),
    case(
        "paired --on-position pairs row i with row i when the docs agree",
        lambda: two_files(
            "paired", pair_rows(NEW), pair_rows(OLD), *PAIRED, "--on-position", "--output", "json"
        ),
        mcnemar(17, 33),
    ),
    case(
        "paired --on-position refuses rows whose docs differ",
        lambda: two_files(
            "paired", pair_rows(NEW), pair_rows(OLD, lambda r: 99 - r), *PAIRED, "--on-position"
        ),
        fails(r"--on-position: the cluster column 'doc' differs in 96 rows \(first at row 1: 0 "),
    ),
    case(
        "paired --on-position refuses files of different lengths",
        lambda: two_files(
            "paired", pair_rows(NEW), pair_rows(OLD)[: -len("99,24,1\n")], *PAIRED, "--on-position"
        ),
        fails(r"new\.csv has 100 rows and .*old\.csv 99"),
    ),
    case(
        "paired with --on and --on-position asks for one",
        lambda: two_files(
            "paired", pair_rows(NEW), pair_rows(OLD), *PAIRED, "--on", "id", "--on-position"
        ),
        fails(r"--on COLUMN or --on-position, not both"),
    ),
    case(
        "gate --on-position without --baseline says it pairs two files",
        lambda: retarget(
            table("new.csv", pair_rows(NEW), *PAIRED, "--at-least", "0.2", "--on-position"),
            "gate",
        ),
        fails(r"--on-position pairs two files: it needs --baseline", code=3),
    ),
    case(
        "gate --weights reads the weighted interval",
        lambda: retarget(
            table(
                "w.csv",
                WEIGHTED_ROWS,
                *PAIRED,
                "--at-least",
                "0.2",
                "--weights",
                "w",
                "--output",
                "json",
            ),
            "gate",
        ),
        gate_reads(by="doc", at_least=0.2, weights="w"),
    ),
    case(
        "gate --crossed reads the two-way interval",
        lambda: retarget(
            table(
                "w.csv",
                WEIGHTED_ROWS,
                "--outcome",
                "passed",
                "--by",
                "doc",
                "--by",
                "tmpl",
                "--crossed",
                "--at-least",
                "0.2",
                "--output",
                "json",
            ),
            "gate",
        ),
        gate_reads(by=["doc", "tmpl"], crossed=True, at_least=0.2),
    ),
    case(
        "gate --margin 2 on a 0/1 outcome asks whether 0.02 was meant",
        lambda: two_files(
            "gate", pair_rows(NEW), pair_rows(OLD), *PAIRED, "--on", "id", "--margin", "2"
        ),
        fails(r"--margin 2 on an outcome in \[0, 1\].*did you mean 0\.02\?", code=3),
    ),
    case(
        "gate --at-least 60 on a 0/1 outcome asks whether 0.6 was meant",
        lambda: retarget(table("new.csv", pair_rows(NEW), *PAIRED, "--at-least", "60"), "gate"),
        fails(r"--at-least 60 on a 0/1 outcome.*did you mean 0\.6\?", code=3),
    ),
    case(
        "an inspect log with several scorers without --score names --score",
        lambda: command("ci", str(INSPECT_LOG), "--outcome", "score", "--by", "doc"),
        fails(r"several scores \['details', 'flaky', 'includes'\]; pick one with --score$"),
        NEEDS_INSPECT,
    ),
    case(
        "--score picks the scorer of an inspect log",
        lambda: command(
            "ci",
            str(INSPECT_LOG),
            "--outcome",
            "score",
            "--by",
            "doc",
            "--score",
            "includes",
            "--output",
            "json",
        ),
        # the fixture's includes scores (tests/integrations/test_inspect_logs.py reads them):
        # 21 of the 33 scored (sample, epoch) runs pass, the 3 others errored
        result(estimate=21 / 33, n_rows=33, n_clusters=4),
        NEEDS_INSPECT,
    ),
    case(
        "a dict-valued score without --key names --key",
        lambda: command(
            "ci", str(INSPECT_LOG), "--outcome", "score", "--by", "doc", "--score", "details"
        ),
        fails(r"keys \['correct', 'length'\]\); pass --key to say which entry"),
        NEEDS_INSPECT,
    ),
    case(
        "--score on a CSV says it is for inspect logs",
        lambda: table("rows.csv", rows_csv(), *CI, "--score", "includes"),
        fails(r"--score is for inspect_ai logs \(--format inspect\)"),
    ),
    case(
        "annotate on a text file named .eval",
        lambda: retarget(table("run.eval", "not a log at all\n"), "annotate"),
        fails(r"run\.eval': not an inspect_ai log", code=2),
        NEEDS_INSPECT,
    ),
    case(
        "annotate on a CSV",
        lambda: retarget(table("rows.csv", rows_csv()), "annotate"),
        fails(r"rows\.csv': not an inspect_ai log", code=2),
        NEEDS_INSPECT,
    ),
    # lm_eval_folder: acc = doc_id % 2 over 40 documents, 20 pass; subjects s0..s7
    case(
        "--format lm-eval reads a folder",
        lambda: with_args(
            lm_eval_folder(), "--outcome", "acc", "--by", "doc_subject", "--output", "json"
        ),
        result(estimate=0.5, n_rows=40, n_clusters=8),
    ),
]


@pytest.mark.parametrize("case", params(CASES))
def test_hostile(case: Case) -> None:
    run(case)
