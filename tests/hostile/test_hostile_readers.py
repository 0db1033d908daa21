"""Hostile input for the readers (``read_lm_eval``, ``read_inspect``): the catalogue of issue 15.

Every case builds its files afresh in a temporary folder and states what must happen: a
:class:`FileReadError` (or another precise error of the library) whose message names the file
and the line or field, or a frame whose values are stated with their source. The harness
(``tests/hostile/hostile.py``) also checks that no input file changed.

lm-evaluation-harness samples follow its v0.4 ``--log_samples`` format (one JSON object per
line: ``doc_id``, ``doc``, ``target``, ``filter``, ``metrics`` and one field per metric);
inspect logs are written by inspect_ai itself, from one small task run on its offline mock
model and then edited.
"""

from __future__ import annotations

import functools
import gzip
import json
import math
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest
from hostile import Case, Raises, Returns, Warns, params, run

import clusterstats as cs

SAMPLES = "samples_t_2024-01-01T00-00-00.jsonl"

try:
    import inspect_ai  # noqa: F401

    HAVE_INSPECT = True
except ImportError:  # pragma: no cover - inspect_ai is a test extra
    HAVE_INSPECT = False
NEEDS_INSPECT = (pytest.mark.skipif(not HAVE_INSPECT, reason="needs inspect_ai"),)


def files_in(values: Any) -> list[Path]:
    """Every file under the paths in ``values`` (folders walked, lists opened)."""
    found: list[Path] = []
    for value in values:
        if isinstance(value, (list, tuple)):
            found += files_in(value)
        elif isinstance(value, Path) and value.is_dir():
            found += sorted(p for p in value.rglob("*") if p.is_file())
        elif isinstance(value, Path) and value.is_file():
            found.append(value)
    return found


def case(
    name: str,
    inputs: Callable[[], dict[str, Any]],
    call: Callable[..., Any],
    expect: Raises | Returns,
    marks: tuple[Any, ...] = (),
) -> Case:
    """A catalogue case whose inputs also list every file it reads, one by one, so that the
    harness compares each of them byte for byte after the call (a folder alone is not)."""

    def build() -> dict[str, Any]:
        given = inputs()
        return {**given, **{f"file {i}": p for i, p in enumerate(files_in(given.values()))}}

    def invoke(**given: Any) -> Any:
        return call(**{k: v for k, v in given.items() if not k.startswith("file ")})

    return Case(name, build, invoke, expect, marks)


# -- lm-evaluation-harness files ------------------------------------------------------------


def line(doc_id: Any = 0, **fields: Any) -> str:
    """One v0.4 sample line; ``fields`` replace or add fields (``acc`` is the metric)."""
    record: dict[str, Any] = {
        "doc_id": doc_id,
        "doc": {"subject": f"s{doc_id % 2}" if isinstance(doc_id, int) else "s0"},
        "target": "A",
        "filter": "none",
        "metrics": ["acc"],
        "acc": float(doc_id % 2) if isinstance(doc_id, int) else 1.0,
    }
    record.update(fields)
    return json.dumps(record)


def good(n: int = 4) -> str:
    """``n`` good lines, doc_id 0..n-1, acc = doc_id % 2."""
    return "".join(line(i) + "\n" for i in range(n))


def folder(*files: tuple[str, str | bytes], model: str = "m") -> Path:
    """A fresh model folder holding ``files`` (name, content)."""
    root = Path(tempfile.mkdtemp()) / model
    root.mkdir()
    for name, content in files:
        data = content if isinstance(content, bytes) else content.encode("utf-8")
        (root / name).write_bytes(data)
    return root


def samples(content: str | bytes, name: str = SAMPLES) -> dict[str, Any]:
    """Inputs of a case reading one samples file."""
    return {"path": folder((name, content)) / name}


def read(path: Any) -> pd.DataFrame:
    return cs.read_lm_eval(path)


def lm_raises(message: str, error: type[BaseException] = cs.FileReadError) -> Raises:
    """The error, with a message naming the samples file and then ``message``."""
    return Raises(error, r"samples_t_2024-01-01T00-00-00\.jsonl'?:? " + message)


def column(name: str, expected: list[Any]) -> Callable[[pd.DataFrame], None]:
    def check(frame: pd.DataFrame) -> None:
        assert name in frame.columns, list(frame.columns)
        got = frame[name].tolist()
        assert len(got) == len(expected), got
        for a, b in zip(got, expected, strict=True):
            if isinstance(b, float) and math.isnan(b):
                assert isinstance(a, float), got
                assert math.isnan(a), got
            else:
                assert a == b, (got, expected)
                assert type(a) is type(b), (got, expected)

    return check


def equals(expected: Any) -> Callable[[Any], None]:
    def check(got: Any) -> None:
        assert got == expected, got

    return check


def rows(n: int, **columns: list[Any]) -> Callable[[pd.DataFrame], None]:
    def check(frame: pd.DataFrame) -> None:
        assert len(frame) == n, frame
        for name, expected in columns.items():
            column(name, expected)(frame)

    return check


def two_runs() -> dict[str, Any]:
    newer = "".join(line(i, acc=1.0) + "\n" for i in range(2))  # acc 1, 1: the newer run
    root = folder((SAMPLES, good(2)), ("samples_t_2024-02-01T00-00-00.jsonl", newer))
    return {"path": root}


def two_runs_one_undated() -> dict[str, Any]:
    return {"path": folder((SAMPLES, good(2)), ("samples_t.jsonl", good(2)))}


def two_tasks() -> dict[str, Any]:
    """Task t reports acc; task u reports exact_match."""
    other = "".join(
        line(i, metrics=["exact_match"], exact_match=1.0, acc=None) + "\n" for i in range(3)
    )
    other = other.replace(', "acc": null', "")
    return {"path": folder((SAMPLES, good(2)), ("samples_u_2024-01-01T00-00-00.jsonl", other))}


def two_filters() -> dict[str, Any]:
    return samples(good(2) + line(0, filter="strict") + "\n" + line(1, filter="strict"))


def read_with(**options: Any) -> Callable[[Any], pd.DataFrame]:
    return lambda path: cs.read_lm_eval(path, **options)


def two_models() -> dict[str, Any]:
    a, b = folder((SAMPLES, good(2)), model="a"), folder((SAMPLES, good(2)), model="b")
    return {"path": [a, b]}


def through_dotdot() -> dict[str, Any]:
    root = folder((SAMPLES, good(2)), model="pythia")
    (root / "sub").mkdir()
    return {"path": root / "sub" / ".." / SAMPLES}


def folder_named_like_samples() -> dict[str, Any]:
    root = Path(tempfile.mkdtemp())
    (root / SAMPLES).mkdir()
    return {"path": root}


def empty_beside_good() -> dict[str, Any]:
    return {"path": folder((SAMPLES, ""), ("samples_u_2024-01-01T00-00-00.jsonl", good(2)))}


def file_and_its_folder() -> dict[str, Any]:
    root = folder((SAMPLES, good(3)))
    return {"path": [root, root / SAMPLES]}


def cluster_on(metric: str) -> Callable[[Path], Any]:
    return lambda path: cs.read_lm_eval(path).eval.cluster_ci(metric, by="doc_subject")


LM_EVAL = [
    case(
        "lm_eval: a line that is a JSON list",
        lambda: samples(good(1) + "[1, 2]\n"),
        read,
        lm_raises(r"line 2 is a list, not an object"),
    ),
    case(
        "lm_eval: a line that is a number (was a TypeError)",
        lambda: samples(good(1) + "5\n"),
        read,
        lm_raises(r"line 2 is an integer, not an object"),
    ),
    case(
        "lm_eval: a line that is the string doc_id (was a TypeError)",
        lambda: samples(good(1) + '"doc_id"\n'),
        read,
        lm_raises(r"line 2 is a string, not an object"),
    ),
    case(
        "lm_eval: a line that is null (was a TypeError)",
        lambda: samples(good(1) + "null\n"),
        read,
        lm_raises(r"line 2 is null, not an object"),
    ),
    case(
        "lm_eval: a metric stored as the string 1.0 (was NaN)",
        lambda: samples(line(0, acc="1.0") + "\n"),
        read,
        lm_raises(r"line 1: metric 'acc' is a string \(\"1\.0\"\), not a number"),
    ),
    case(
        "lm_eval: a metric stored as the string yes (was NaN)",
        lambda: samples(good(2) + line(2, acc="yes") + "\n"),
        read,
        lm_raises(r"line 3: metric 'acc' is a string \(\"yes\"\), not a number"),
    ),
    # booleans are 0/1 (the docstring); doc 0 true, doc 1 false
    case(
        "lm_eval: boolean metric values read as 1.0 and 0.0",
        lambda: samples(line(0, acc=True) + "\n" + line(1, acc=False) + "\n"),
        read,
        Returns(column("acc", [1.0, 0.0])),
    ),
    # null is documented as missing: NaN, the rest as written
    case(
        "lm_eval: a null metric value is missing",
        lambda: samples(line(0, acc=None) + "\n" + line(1) + "\n"),
        read,
        Returns(column("acc", [float("nan"), 1.0])),
    ),
    # json.dumps writes float("nan") as the literal NaN, which Python's json reads back
    case(
        "lm_eval: a NaN literal metric value is missing",
        lambda: samples(line(0, acc=float("nan")) + "\n" + line(1) + "\n"),
        read,
        Returns(column("acc", [float("nan"), 1.0])),
    ),
    case(
        "lm_eval: an Infinity metric value is refused when used as an outcome",
        lambda: samples(good(3) + line(3, acc=float("inf")) + "\n"),
        cluster_on("acc"),
        Raises(cs.InvalidOutcomeError, r"outcome column 'acc' contains infinite values"),
    ),
    # lm-evaluation-harness logs corpus-level metrics (f1, mcc) as (gold, prediction) lists
    case(
        "lm_eval: a corpus-level metric list is kept as written (was NaN)",
        lambda: samples(line(0, metrics=["f1"], f1=[1, 0]) + "\n"),
        read,
        Returns(column("f1", [[1, 0]])),
    ),
    case(
        "lm_eval: a corpus-level metric is not a per-sample outcome",
        lambda: samples("".join(line(i, metrics=["f1"], f1=[1, i % 2]) + "\n" for i in range(4))),
        cluster_on("f1"),
        Raises(cs.InvalidOutcomeError, r"outcome column 'f1' has dtype object, which is not"),
    ),
    case(
        "lm_eval: a metric listed in metrics but absent (was NaN)",
        lambda: samples(line(0, metrics=["acc", "acc_norm"]) + "\n"),
        read,
        lm_raises(r"line 1 lists metric 'acc_norm' in metrics but has no 'acc_norm' field"),
    ),
    case(
        "lm_eval: metrics a string, not a list (was one NaN column per letter)",
        lambda: samples(line(0, metrics="acc") + "\n"),
        read,
        lm_raises(r"line 1: metrics is \"acc\", not a list of metric names"),
    ),
    case(
        "lm_eval: metrics null (was a TypeError)",
        lambda: samples(line(0, metrics=None) + "\n"),
        read,
        lm_raises(r"line 1: metrics is null, not a list of metric names"),
    ),
    case(
        "lm_eval: metrics a nested list (was a TypeError)",
        lambda: samples(line(0, metrics=[["acc"]]) + "\n"),
        read,
        lm_raises(r"line 1: metrics is \[\[\"acc\"\]\], not a list of metric names"),
    ),
    case(
        "lm_eval: no metrics list (was a frame without metric columns)",
        lambda: samples(json.dumps({"doc_id": 0, "doc": {}, "acc": 1.0}) + "\n"),
        read,
        lm_raises(r"line 1 has no 'metrics' list"),
    ),
    case(
        "lm_eval: a metric named model (overwrote the model column)",
        lambda: samples(line(0, metrics=["model"], model=1.0) + "\n"),
        read,
        lm_raises(r"line 1: metric 'model' is named like a column the reader writes"),
    ),
    case(
        "lm_eval: a metric listed twice",
        lambda: samples(line(0, metrics=["acc", "acc"]) + "\n"),
        read,
        lm_raises(r"line 1 lists metric 'acc' twice in metrics"),
    ),
    case(
        "lm_eval: a metric named like a document field column (one overwrote the other)",
        lambda: samples(line(0, metrics=["doc_subject"], doc_subject=1.0) + "\n"),
        read,
        lm_raises(r"line 1: document field 'subject' and metric 'doc_subject' would both be"),
    ),
    case(
        "lm_eval: doc a string (was an AttributeError)",
        lambda: samples(line(0, doc="What is 2 + 2?") + "\n"),
        read,
        lm_raises(r"line 1: doc is a string, not an object"),
    ),
    case(
        "lm_eval: doc a list (was an AttributeError)",
        lambda: samples(line(0, doc=[1, 2]) + "\n"),
        read,
        lm_raises(r"line 1: doc is a list, not an object"),
    ),
    case(
        "lm_eval: doc_id null (was a row with no id)",
        lambda: samples(line(None) + "\n"),
        read,
        lm_raises(r"line 1: doc_id is null, not an integer"),
    ),
    case(
        "lm_eval: doc_id a list (was an unhashable id)",
        lambda: samples(line([0]) + "\n"),
        read,
        lm_raises(r"line 1: doc_id is \[0\], not an integer"),
    ),
    case(
        "lm_eval: doc_id a boolean",
        lambda: samples(line(True) + "\n"),
        read,
        lm_raises(r"line 1: doc_id is true, not an integer"),
    ),
    case(
        "lm_eval: doc_id a fraction",
        lambda: samples(line(1.5) + "\n"),
        read,
        lm_raises(r"line 1: doc_id is 1\.5, not an integer"),
    ),
    case(
        "lm_eval: filter a list",
        lambda: samples(line(0, filter=["none"]) + "\n"),
        read,
        lm_raises(r"line 1: filter is \[\"none\"\], not a string"),
    ),
    case(
        "lm_eval: a key twice on one line (JSON kept the last value silently)",
        lambda: samples(line(0)[:-1] + ', "acc": 0.0}\n'),
        read,
        lm_raises(r"line 1 has the key 'acc' twice"),
    ),
    case(
        "lm_eval: a truncated last line (a killed run)",
        lambda: samples(good(2) + line(2)[:25]),
        read,
        lm_raises(r"line 3 is not valid JSON \(.* at column \d+\)"),
    ),
    case(
        "lm_eval: text after the object on a line",
        lambda: samples(line(0) + " trailing\n"),
        read,
        lm_raises(r"line 1 is not valid JSON \(Extra data at column \d+\)"),
    ),
    case(
        "lm_eval: an empty file",
        lambda: samples(""),
        read,
        lm_raises(r"holds no samples", cs.EmptyDataError),
    ),
    case(
        "lm_eval: a file of blank lines",
        lambda: samples("\n \n\n"),
        read,
        lm_raises(r"holds no samples", cs.EmptyDataError),
    ),
    case(
        "lm_eval: an empty file beside a good one (its task vanished silently)",
        empty_beside_good,
        read,
        lm_raises(r"holds no samples", cs.EmptyDataError),
    ),
    # a UTF-8 byte-order mark (Windows editors) is skipped: the same two rows as without it
    case(
        "lm_eval: a UTF-8 byte-order mark",
        lambda: samples(b"\xef\xbb\xbf" + good(2).encode()),
        read,
        Returns(rows(2, doc_id=[0, 1], acc=[0.0, 1.0])),
    ),
    case(
        "lm_eval: a latin-1 byte on line 2 (was a UnicodeDecodeError)",
        lambda: samples(
            good(1).encode() + line(1, doc={"city": "@"}).replace("@", "Zürich").encode("latin-1")
        ),
        read,
        lm_raises(r"line 2 is not UTF-8 text \(byte 0xfc at column \d+\)"),
    ),
    case(
        "lm_eval: a UTF-16 file (was a UnicodeDecodeError)",
        lambda: samples(good(2).encode("utf-16")),
        read,
        lm_raises(r"it is UTF-16 text"),
    ),
    case(
        "lm_eval: a gzip-compressed samples file",
        lambda: samples(gzip.compress(good(2).encode())),
        read,
        lm_raises(r"it is gzip-compressed"),
    ),
    # Windows line ends: the same three rows as with \n
    case(
        "lm_eval: CRLF line ends",
        lambda: samples(good(3).replace("\n", "\r\n")),
        read,
        Returns(rows(3, doc_id=[0, 1, 2], acc=[0.0, 1.0, 0.0])),
    ),
    case(
        "lm_eval: one document twice in one file (counted twice before)",
        lambda: samples(good(2) + line(0) + "\n"),
        read,
        lm_raises(r"line 3 repeats doc_id 0 \(filter 'none'\) of line 1"),
    ),
    # lm-evaluation-harness writes every run of a task into the model's folder, dated
    case(
        "lm_eval: two runs of one task in one folder (every sample counted twice before)",
        two_runs,
        read,
        Warns(
            cs.SupersededRunWarning,
            r"task 't' of model 'm' was run 2 times into one folder; read the newest run "
            r"\(2024-02-01T00-00-00\) and set aside 2024-01-01T00-00-00",
            rows(2, acc=[1.0, 1.0], run=["2024-02-01T00-00-00"] * 2),
        ),
    ),
    case(
        "lm_eval: runs='latest' reads the newest run without a warning",
        two_runs,
        read_with(runs="latest"),
        Returns(rows(2, acc=[1.0, 1.0])),
    ),
    case(
        "lm_eval: runs='all' keeps both runs, told apart by the run column",
        two_runs,
        read_with(runs="all"),
        Returns(
            rows(
                4,
                run=["2024-01-01T00-00-00"] * 2 + ["2024-02-01T00-00-00"] * 2,
                acc=[0.0, 1.0, 1.0, 1.0],
            )
        ),
    ),
    case(
        "lm_eval: two files of one task, one without a date, cannot be ordered",
        two_runs_one_undated,
        read,
        Raises(cs.FileReadError, r"samples_t\.jsonl': task 't' of model 'm' has 2 samples files"),
    ),
    case(
        "lm_eval: runs= an unknown value",
        two_runs,
        read_with(runs="newest"),
        Raises(cs.InvalidOptionError, r"runs must be one of \('latest', 'all'\)"),
    ),
    # lm-evaluation-harness writes each document once per filter: two filters, two rows each
    case(
        "lm_eval: one document under two filters (was two rows, pooled silently)",
        two_filters,
        read,
        Raises(
            cs.InvalidOptionError,
            r"task 't' of model 'm' is scored under 2 filters \('none', 'strict'\).*"
            r"choose one with filter='none'",
        ),
    ),
    case(
        "lm_eval: filter= picks one filter's rows",
        two_filters,
        read_with(filter="strict"),
        Returns(rows(2, doc_id=[0, 1], filter=["strict", "strict"])),
    ),
    case(
        "lm_eval: filter='all' keeps one row per document and filter",
        two_filters,
        read_with(filter="all"),
        Returns(rows(4, doc_id=[0, 1, 0, 1], filter=["none", "none", "strict", "strict"])),
    ),
    case(
        "lm_eval: filter= a name no task has",
        two_filters,
        read_with(filter="flexible"),
        Raises(cs.InvalidOptionError, r"task 't' of model 'm' has no filter 'flexible'"),
    ),
    case(
        "lm_eval: filter= a mapping naming a task that is not there",
        two_filters,
        read_with(filter={"gsm8k": "strict"}),
        Raises(cs.InvalidOptionError, r"filter names task\(s\) \['gsm8k'\]"),
    ),
    case(
        "lm_eval: filter= of another type",
        two_filters,
        read_with(filter=1),
        Raises(cs.InvalidOptionError, r"filter must be a filter name"),
    ),
    # a metric that one task reports and another does not
    case(
        "lm_eval: tasks reporting different metrics (NaN read as missing before)",
        two_tasks,
        read,
        Warns(cs.MixedMetricsWarning, r"\(t: acc; u: exact_match\).*'acc' on 'u'", rows(5)),
    ),
    case(
        "lm_eval: metric= reads the tasks that report it, and only that metric",
        two_tasks,
        read_with(metric="exact_match"),
        Returns(rows(3, task=["u"] * 3, exact_match=[1.0] * 3)),
    ),
    case(
        "lm_eval: metric= a metric no task reports",
        two_tasks,
        read_with(metric="f1"),
        Raises(cs.InvalidOptionError, r"no task reports metric 'f1'; they report t: acc; u: "),
    ),
    case(
        "lm_eval: metric= a corpus-level metric (its per-sample values are pairs)",
        lambda: samples(line(0, metrics=["f1"], f1=[1, 0]) + "\n"),
        read_with(metric="f1"),
        Raises(cs.InvalidOutcomeError, r"metric 'f1' of task 't' is corpus-level"),
    ),
    case(
        "lm_eval: metric= not a name",
        two_tasks,
        read_with(metric=["acc"]),
        Raises(cs.InvalidOptionError, r"metric must be a metric name"),
    ),
    # one row per response of a task with repeats
    case(
        "lm_eval: rows='repeats' gives one row per response",
        lambda: samples(line(0, resps=[["a", "b", "c"]]) + "\n" + line(1, resps=[["d"] * 3])),
        read_with(rows="repeats"),
        Returns(rows(6, repeat=[0, 1, 2, 0, 1, 2], response=["a", "b", "c", "d", "d", "d"])),
    ),
    case(
        "lm_eval: rows='repeats' on samples without responses",
        lambda: samples(good(2)),
        read_with(rows="repeats"),
        lm_raises(r"line 1 has no responses list"),
    ),
    case(
        "lm_eval: rows='repeats' with metric=",
        lambda: samples(good(2)),
        read_with(rows="repeats", metric="acc"),
        Raises(cs.InvalidOptionError, r"metric= is for rows='documents'"),
    ),
    case(
        "lm_eval: repeats counts the responses of each request",
        lambda: samples(line(0, resps=[["a", "b"]]) + "\n" + line(1, resps=[["x"], ["y"]])),
        read,
        Returns(rows(2, repeats=[2, 1])),
    ),
    case(
        "lm_eval: one task in two model folders is two models",
        two_models,
        read,
        Returns(rows(4, model=["a", "a", "b", "b"], doc_id=[0, 1, 0, 1])),
    ),
    case(
        "lm_eval: a file given twice is read once",
        lambda: {"path": [samples(good(3))["path"]] * 2},
        read,
        Returns(rows(3, doc_id=[0, 1, 2])),
    ),
    case(
        "lm_eval: a folder and a file in it are read once",
        file_and_its_folder,
        read,
        Returns(rows(3, doc_id=[0, 1, 2])),
    ),
    case(
        "lm_eval: a folder named like a samples file is not a file (was an IsADirectoryError)",
        folder_named_like_samples,
        read,
        Raises(cs.EmptyDataError, r"no samples_\*\.jsonl files: none in '.*'"),
    ),
    # the model is the name of the folder holding the file, however the path spells it
    case(
        "lm_eval: a path through .. names the model folder (was the model '..')",
        through_dotdot,
        read,
        Returns(rows(2, model=["pythia", "pythia"])),
    ),
    # non-scalar document fields are skipped, scalar ones become doc_<field> (the docstring)
    case(
        "lm_eval: nested document fields are skipped",
        lambda: samples(line(0, doc={"subject": "law", "choices": ["a", "b"], "n": 3}) + "\n"),
        lambda path: sorted(
            c for c in read(path).columns if c.startswith("doc_") and c != "doc_id"
        ),
        Returns(equals(["doc_n", "doc_subject"])),
    ),
    case(
        "lm_eval: the aggregated results JSON given instead of samples",
        lambda: samples('{\n  "results": {"t": {"acc": 0.5}}\n}\n', "results_2024-01-01.json"),
        read,
        Raises(
            cs.FileReadError,
            r"results_2024-01-01\.json': line 1 is not valid JSON .*samples_<task>_<date>\.jsonl",
        ),
    ),
    case(
        "lm_eval: a JSON object per line without doc_id",
        lambda: samples('{"no": 1}\n'),
        read,
        lm_raises(r"line 1 has no doc_id: not an lm-evaluation-harness sample"),
    ),
    case(
        "lm_eval: path None (was a TypeError)",
        lambda: {"path": None},
        read,
        Raises(cs.InvalidInputError, r"path must be a path, a folder or a list .*got None"),
    ),
    case(
        "lm_eval: path a number (was a TypeError)",
        lambda: {"path": 123},
        read,
        Raises(cs.InvalidInputError, r"path must be .*got 123 \(of type int\)"),
    ),
    case(
        "lm_eval: a list holding None",
        lambda: {"path": [samples(good(1))["path"], None]},
        read,
        Raises(cs.InvalidInputError, r"the list holds None"),
    ),
    case(
        "lm_eval: an empty list of paths",
        lambda: {"path": []},
        read,
        Raises(cs.EmptyDataError, r"no samples_\*\.jsonl files: path is an empty list"),
    ),
    case(
        "lm_eval: a path that does not exist",
        lambda: {"path": Path(tempfile.mkdtemp()) / "nope"},
        read,
        Raises(FileNotFoundError, r"no lm-evaluation-harness samples at '.*nope'"),
    ),
]


# -- inspect_ai logs ------------------------------------------------------------------------


@functools.cache
def base_log() -> Any:
    """A 6-sample task on ``mockllm/model``: its fixed reply ("Default output from
    mockllm/model") contains the target of samples q1, q2, q4, q5 (score C = 1) and not of
    q0, q3 (I = 0); metadata ``doc`` d0, d0, d1, d1, d2, d2."""
    import inspect_ai
    from inspect_ai.dataset import Sample
    from inspect_ai.model import _model
    from inspect_ai.scorer import includes

    dataset = [
        Sample(
            input=f"question {i}",
            target="Default" if i % 3 else "never said",
            id=f"q{i}",
            metadata={"doc": f"d{i // 2}"},
        )
        for i in range(6)
    ]
    task = inspect_ai.Task(dataset=dataset, scorer=includes())
    # the mock provider counts tokens with a vocabulary it would download: count characters
    original = _model.count_text_tokens
    _model.count_text_tokens = lambda text: max(1, len(text) // 4)
    try:
        (log,) = inspect_ai.eval(
            task, model="mockllm/model", log_dir=tempfile.mkdtemp(), display="none"
        )
    finally:
        _model.count_text_tokens = original
    assert log.status == "success"
    return log


BASE_SCORES = [0.0, 1.0, 1.0, 0.0, 1.0, 1.0]


def log_file(
    edit: Callable[[Any], None] = lambda log: None,
    name: str = "2024-01-01T00-00-00_task_x.eval",
    where: Path | None = None,
) -> Path:
    """The base log, edited, written by inspect_ai to a fresh folder (or ``where``)."""
    from inspect_ai.log import write_eval_log

    log = base_log().model_copy(deep=True)
    edit(log)
    path = (where or Path(tempfile.mkdtemp())) / name
    write_eval_log(log, str(path))
    return path


def first_score(value: Any) -> Callable[[Any], None]:
    def edit(log: Any) -> None:
        log.samples[0].scores["includes"].value = value

    return edit


def logs(*edits: Callable[[Any], None]) -> dict[str, Any]:
    path = log_file(*edits)
    return {"path": path}


def raw_file(name: str, content: bytes) -> dict[str, Any]:
    path = Path(tempfile.mkdtemp()) / name
    path.write_bytes(content)
    return {"path": path}


def truncated_log() -> dict[str, Any]:
    data = log_file().read_bytes()
    return raw_file("2024-01-01T00-00-00_cut.eval", data[: len(data) // 2])


def folder_with_listing() -> dict[str, Any]:
    path = log_file()
    (path.parent / "logs.json").write_text('{"2024-01-01T00-00-00_task_x.eval": {}}')
    (path.parent / "config.json").write_text("[1, 2]")
    return {"path": path.parent}


def folder_without_logs() -> dict[str, Any]:
    root = Path(tempfile.mkdtemp())
    (root / "logs.json").write_text("{}")
    return {"path": root}


def log_and_conversion() -> dict[str, Any]:
    path = log_file()
    log_file(name="2024-01-01T00-00-00_task_x.json", where=path.parent)
    return {"path": path.parent}


def object_and_file() -> dict[str, Any]:
    return {"log": base_log().model_copy(deep=True), "path": log_file()}


def error_without_message(log: Any) -> None:
    from inspect_ai._util.error import EvalError

    log.samples[0].error = EvalError(message="", traceback="", traceback_ansi="")
    log.samples[0].scores = {}


def metadata(**fields: Any) -> Callable[[Any], None]:
    def edit(log: Any) -> None:
        log.samples[0].metadata = fields

    return edit


def second_scorer(log: Any) -> None:
    from inspect_ai.scorer import Score

    for sample in log.samples:
        sample.scores["other"] = Score(value=1)


def no_samples(log: Any) -> None:
    log.samples = []


def read_log(path: Any) -> pd.DataFrame:
    return cs.read_inspect(path)


def inspect_case(name: str, inputs: Any, call: Any, expect: Any) -> Case:
    return case(name, inputs, call, expect, marks=NEEDS_INSPECT)


def scores(expected: list[float], reasons: list[Any] | None = None) -> Callable[[Any], None]:
    def check(frame: pd.DataFrame) -> None:
        np.testing.assert_array_equal(frame["score"].to_numpy(float), expected)
        if reasons is not None:
            got = [None if not isinstance(r, str) else r for r in frame["missing_reason"]]
            assert got == reasons, got

    return check


INSPECT = [
    inspect_case(
        "inspect: a JSON object that is not a log (was a pydantic ValidationError)",
        lambda: raw_file("a.json", b"{}"),
        read_log,
        Raises(cs.FileReadError, r"a\.json': not an inspect_ai log"),
    ),
    inspect_case(
        "inspect: an .eval file that is not a zip (was a ValueError: EOCD not found)",
        lambda: raw_file("b.eval", b"this is not a log"),
        read_log,
        Raises(cs.FileReadError, r"b\.eval': not an inspect_ai log"),
    ),
    inspect_case(
        "inspect: an empty .eval file",
        lambda: raw_file("c.eval", b""),
        read_log,
        Raises(cs.FileReadError, r"c\.eval': not an inspect_ai log"),
    ),
    inspect_case(
        "inspect: half of a real .eval log",
        truncated_log,
        read_log,
        Raises(cs.FileReadError, r"_cut\.eval': not an inspect_ai log"),
    ),
    inspect_case(
        "inspect: an empty .json file",
        lambda: raw_file("2024-01-01T00-00-00_e.json", b""),
        read_log,
        Raises(cs.FileReadError, r"_e\.json': not an inspect_ai log"),
    ),
    inspect_case(
        "inspect: a CSV file given as a log",
        lambda: raw_file("runs.csv", b"score,doc\n1,a\n"),
        read_log,
        Raises(cs.FileReadError, r"runs\.csv': not an inspect_ai log"),
    ),
    # inspect's own folder rule skips logs.json and config.json: the base log's six rows
    inspect_case(
        "inspect: a folder with the viewer's logs.json beside a log (was a raw error)",
        folder_with_listing,
        read_log,
        Returns(scores(BASE_SCORES)),
    ),
    inspect_case(
        "inspect: a folder whose only JSON file is not a log",
        folder_without_logs,
        read_log,
        Raises(cs.EmptyDataError, r"no inspect logs: none in '.*'; .*named by a timestamp"),
    ),
    inspect_case(
        "inspect: the same log given twice is read once",
        lambda: {"path": [log_file()] * 2},
        read_log,
        Returns(scores(BASE_SCORES)),
    ),
    inspect_case(
        "inspect: a log and its .json conversion (every sample counted twice before)",
        log_and_conversion,
        read_log,
        Raises(
            cs.FileReadError,
            r"task_x\.json': it holds the same evaluation \(eval_id \w+\) as '.*task_x\.eval'",
        ),
    ),
    inspect_case(
        "inspect: an EvalLog and its own file",
        object_and_file,
        lambda log, path: cs.read_inspect([log, path]),
        Raises(cs.FileReadError, r"it holds the same evaluation .* count twice"),
    ),
    inspect_case(
        # a dict-valued score needs key= to pick an entry (before: inspect counted it as 0)
        "inspect: a score that is a dict, without key=",
        lambda: logs(first_score({"a": 1})),
        read_log,
        Raises(
            cs.InvalidOptionError,
            r"task_x\.eval: score 'includes' of sample 'q0' is a dict \(keys \['a'\]\); pass key=",
        ),
    ),
    inspect_case(
        "inspect: a score that is a list (inspect counted it as 0)",
        lambda: logs(first_score([1, 0])),
        read_log,
        Raises(cs.InvalidOutcomeError, r"score 'includes' of sample 'q0' \(epoch 1\) is \[1, 0\]"),
    ),
    inspect_case(
        "inspect: a score 'maybe' (inspect counted it as 0)",
        lambda: logs(first_score("maybe")),
        read_log,
        Raises(cs.InvalidOutcomeError, r"sample 'q0' \(epoch 1\) is 'maybe', neither a number"),
    ),
    inspect_case(
        "inspect: a score 'nan' as text (inspect counted it as 0)",
        lambda: logs(first_score("nan")),
        read_log,
        Raises(cs.InvalidOutcomeError, r"sample 'q0' \(epoch 1\) is 'nan', neither a number"),
    ),
    # inspect's value_to_float: P (partial) is 0.5, "yes" 1, numeric strings their number
    inspect_case(
        "inspect: a score P is partial credit 0.5",
        lambda: logs(first_score("P")),
        read_log,
        Returns(scores([0.5, *BASE_SCORES[1:]])),
    ),
    inspect_case(
        "inspect: a score 'yes' is 1",
        lambda: logs(first_score("yes")),
        read_log,
        Returns(scores([1.0, *BASE_SCORES[1:]])),
    ),
    inspect_case(
        "inspect: a score '0.25' is 0.25",
        lambda: logs(first_score("0.25")),
        read_log,
        Returns(scores([0.25, *BASE_SCORES[1:]])),
    ),
    inspect_case(
        "inspect: a NaN score is missing, with a reason (was missing without one)",
        lambda: logs(first_score(float("nan"))),
        read_log,
        Returns(scores([np.nan, *BASE_SCORES[1:]], ["not scored (NaN)"] + [None] * 5)),
    ),
    inspect_case(
        "inspect: an infinite score is refused when used as an outcome",
        lambda: logs(first_score(float("inf"))),
        lambda path: cs.read_inspect(path).eval.cluster_ci("score", by="doc"),
        Raises(cs.InvalidOutcomeError, r"outcome column 'score' contains infinite values"),
    ),
    inspect_case(
        "inspect: an error without a message (was an IndexError)",
        lambda: logs(error_without_message),
        read_log,
        Returns(scores([np.nan, *BASE_SCORES[1:]], ["error: (no message)"] + [None] * 5)),
    ),
    inspect_case(
        "inspect: metadata fields score and metadata_score (one overwrote the other)",
        lambda: logs(metadata(score=1, metadata_score=2)),
        read_log,
        Raises(
            cs.InvalidDataError,
            r"sample 'q0' has metadata fields 'score' and 'metadata_score', which would both",
        ),
    ),
    # a metadata field named like a column is prefixed (the docstring); the score is kept
    inspect_case(
        "inspect: a metadata field named score becomes metadata_score",
        lambda: logs(metadata(score=7, doc="d0")),
        lambda path: cs.read_inspect(path).iloc[0][["score", "metadata_score"]].tolist(),
        Returns(equals([0.0, 7])),
    ),
    inspect_case(
        "inspect: logs a number (was an AttributeError)",
        lambda: {"path": 5},
        read_log,
        Raises(cs.InvalidInputError, r"logs must be paths .* got 5 \(of type int\)"),
    ),
    inspect_case(
        "inspect: logs None (was an AttributeError)",
        lambda: {"path": None},
        read_log,
        Raises(cs.InvalidInputError, r"logs must be paths .* got None"),
    ),
    inspect_case(
        "inspect: an empty list of logs",
        lambda: {"path": []},
        read_log,
        Raises(cs.EmptyDataError, r"no inspect logs: logs is an empty list"),
    ),
    inspect_case(
        "inspect: a path that does not exist",
        lambda: {"path": Path(tempfile.mkdtemp()) / "nope.eval"},
        read_log,
        Raises(FileNotFoundError, r"no inspect log at '.*nope\.eval'"),
    ),
    inspect_case(
        "inspect: cluster a number (was a TypeError)",
        lambda: logs(),
        lambda path: cs.read_inspect(path, cluster=5),
        Raises(cs.InvalidInputError, r"cluster must be a field name or a list of names; got 5"),
    ),
    inspect_case(
        "inspect: a cluster field no sample has",
        lambda: logs(),
        lambda path: cs.read_inspect(path, cluster="topic"),
        Raises(cs.ColumnNotFoundError, r"column 'topic' not found; available columns: .*'doc'"),
    ),
    inspect_case(
        "inspect: a cluster field one sample lacks",
        lambda: logs(metadata()),
        lambda path: cs.read_inspect(path, cluster="doc"),
        Raises(cs.InvalidOptionError, r"cluster field 'doc' is missing in 1 rows"),
    ),
    inspect_case(
        "inspect: two scorers and no score=",
        lambda: logs(second_scorer),
        read_log,
        Raises(cs.InvalidOptionError, r"several scores \['includes', 'other'\]; pick one"),
    ),
    inspect_case(
        "inspect: a score= no sample has",
        lambda: logs(),
        lambda path: cs.read_inspect(path, score="exact"),
        Raises(cs.InvalidOptionError, r"no score 'exact'; the samples have \['includes'\]"),
    ),
    inspect_case(
        "inspect: a log without samples",
        lambda: logs(no_samples),
        read_log,
        Raises(cs.EmptyDataError, r"the inspect logs hold no samples"),
    ),
]

CASES = LM_EVAL + INSPECT


@pytest.mark.parametrize("case", params(CASES))
def test_hostile(case: Case) -> None:
    run(case)
