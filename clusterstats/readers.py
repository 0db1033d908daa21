"""Readers for eval logs: inspect_ai logs and lm-evaluation-harness ``--log_samples`` files.

Both return ordinary long DataFrames (one row per graded run), so everything else is
``df.eval...``. inspect_ai is an optional dependency, imported only by :func:`read_inspect`.
A file that is not what its reader expects raises :class:`FileReadError` naming the file (and
the line, for lm-evaluation-harness): a reader never returns a silently wrong number.
"""

from __future__ import annotations

import json
import math
import os
import re
import reprlib
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from clusterstats._options import check_choice
from clusterstats.errors import (
    ColumnNotFoundError,
    EmptyDataError,
    FileReadError,
    IncompleteLogWarning,
    InvalidDataError,
    InvalidInputError,
    InvalidOptionError,
    InvalidOutcomeError,
    warn,
)

__all__ = ["read_inspect", "read_lm_eval"]

INSPECT_HINT = "read_inspect needs inspect_ai, an optional extra: pip install inspect-ai"
# lm-evaluation-harness (v0.4) names its per-sample files samples_<task>_<ISO date>.jsonl
_LM_EVAL_FILE = re.compile(r"^samples_(?P<task>.+)_(?P<date>\d{4}-\d{2}-\d{2}T[\d\-.]+)\.jsonl$")
# inspect_ai's own rule for the logs in a folder (inspect_ai.log.list_eval_logs): every
# .eval file, and the .json files named by a timestamp, so that other JSON in a log folder
# (the viewer's logs.json listing, a config file) is not mistaken for a log.
_INSPECT_JSON_LOG = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}[:-]\d{2}[:-]\d{2}.*\.json$")
# lm-evaluation-harness writes other JSON beside the samples (results_<date>.json)
_SAMPLES_HINT = (
    " (lm-evaluation-harness writes them as samples_<task>_<date>.jsonl with --log_samples)"
)
_UTF8_BOM = b"\xef\xbb\xbf"
_UTF16_BOMS = (b"\xff\xfe", b"\xfe\xff")
# The columns each reader writes itself; a metadata field named like one is prefixed.
_INSPECT_COLUMNS = (
    "task",
    "model",
    "log",
    "sample_id",
    "epoch",
    "score",
    "missing_reason",
    "limit",
)
# The columns read_lm_eval writes itself; a metric or document field may not overwrite them.
_LM_EVAL_COLUMNS = ("model", "task", "doc_id", "filter", "target")


def _paths(value: Any, parameter: str) -> list[Any]:
    """The items of a path-or-list argument."""
    if isinstance(value, (list, tuple)):
        return list(value)
    if isinstance(value, (str, os.PathLike)):
        return [value]
    raise InvalidInputError(
        f"{parameter} must be a path, a folder or a list of these; got {reprlib.repr(value)} (of "
        f"type {type(value).__name__})"
    )


def _listed(value: Any) -> str:
    """Paths for a message: one quoted, or a list of quoted ones."""
    if isinstance(value, (list, tuple)):
        return ", ".join(repr(str(item)) for item in value)
    return repr(str(value))


def _unique(files: list[Any]) -> list[Any]:
    """Each file once, however often (and by whichever path) it was given: a file read twice
    would count every sample twice."""
    seen: set[Any] = set()
    kept = []
    for file in files:
        key = os.path.realpath(file) if isinstance(file, Path) else id(file)
        if key not in seen:
            seen.add(key)
            kept.append(file)
    return kept


def _log_files(logs: Any) -> list[Any]:
    found: list[Any] = []
    items = logs if isinstance(logs, (list, tuple)) else [logs]
    for item in items:
        if isinstance(item, (str, os.PathLike)):
            path = Path(item)
            if path.is_dir():
                found += sorted(
                    p
                    for p in path.rglob("*")
                    if p.is_file() and (p.suffix == ".eval" or _INSPECT_JSON_LOG.match(p.name))
                )
            elif path.exists():
                found.append(path)
            else:
                raise FileNotFoundError(f"no inspect log at {str(path)!r}")
        elif hasattr(item, "eval") and hasattr(item, "samples"):
            found.append(item)  # an EvalLog already read
        else:
            raise InvalidInputError(
                f"logs must be paths or folders of inspect logs, or EvalLog objects; got "
                f"{reprlib.repr(item)} (of type {type(item).__name__})"
            )
    if not found:
        where = "logs is an empty list" if not items else f"none in {_listed(logs)}"
        raise EmptyDataError(
            f"no inspect logs: {where}; a folder is searched for .eval files and for .json "
            "files named by a timestamp, as inspect_ai names its logs; give other files by name"
        )
    return _unique(found)


def _read_log(path: Path) -> Any:
    from inspect_ai.log import read_eval_log

    try:
        return read_eval_log(str(path))
    except Exception as error:  # inspect raises zip, JSON, pydantic and value errors alike
        summary = " ".join(str(error).split())[:200]
        raise FileReadError(
            path,
            f"not an inspect_ai log ({type(error).__name__}: {summary}); give .eval or .json "
            "logs written by inspect_ai",
        ) from None


def _inspect_value(value: Any, to_float: Any) -> float | None:
    """The float inspect's ``value_to_float`` gives, or None where it would guess 0.0.

    inspect maps a value it cannot read (a list, a dict, ``"maybe"``) to 0.0 and only logs a
    warning; here such a value is an error, never a silent zero.
    """
    if isinstance(value, (bool, int, float)):
        return float(to_float(value))
    if isinstance(value, str):
        text = value.lower()
        if value in ("C", "I", "P", "N") or text in ("yes", "no", "true", "false"):
            return float(to_float(value))
        try:
            number = float(value)
        except ValueError:
            return None
        return float(to_float(value)) if math.isfinite(number) else None
    return None


def score_entry(value: Any, key: str | None, *, what: str) -> Any:
    """``value[key]`` for a dict-valued score, ``value`` itself otherwise; ``key`` given for
    a score that is not a dict, or missing for one that is, is an error naming ``what``."""
    if isinstance(value, dict):
        if key is None:
            raise InvalidOptionError(
                f"{what} is a dict (keys {sorted(value)}); pass key= to say which entry is "
                "the outcome"
            )
        if key not in value:
            raise InvalidOptionError(f"{what}: key={key!r} is not one of its keys {sorted(value)}")
        return value[key]
    if key is not None:
        raise InvalidOptionError(
            f"{what}: key={key!r} is for dict-valued scores; this one is {type(value).__name__}"
        )
    return value


def _inspect_row(
    log: Any,
    sample: Any,
    name: str,
    where: str,
    score: str | None,
    to_float: Any,
    *,
    key: str | None = None,
    limits: str = "score",
) -> dict[str, Any]:
    """The row of one sample of :func:`read_inspect`."""
    scores = sample.scores or {}
    reason = None
    limit = None if sample.limit is None else str(sample.limit.type)
    if sample.error is not None:
        lines = str(sample.error.message).splitlines()
        reason = "error: " + (lines[0][:200] if lines else "(no message)")
    elif limit is not None and (limits == "missing" or not scores):
        reason = f"limit: {limit}"
    value = np.nan
    if reason is None and scores:
        if score is None and len(scores) > 1:
            raise InvalidOptionError(
                f"samples carry several scores {sorted(scores)}; pick one with score="
            )
        scorer = score if score is not None else next(iter(scores))
        if scorer not in scores:
            raise InvalidOptionError(f"no score {scorer!r}; the samples have {sorted(scores)}")
        raw = score_entry(
            scores[scorer].value, key, what=f"{where}: score {scorer!r} of sample {sample.id!r}"
        )
        converted = _inspect_value(raw, to_float)
        if converted is None:
            raise InvalidOutcomeError(
                f"{where}: score {scorer!r} of sample {sample.id!r} (epoch {sample.epoch}) is "
                f"{raw!r}, neither a number nor one of C/I/P/N, yes/no, true/false (inspect "
                "would count it as 0); give such samples a numeric score, or pick another "
                "scorer with score="
            )
        value = converted
        if math.isnan(value):
            reason = "not scored (NaN)"
    elif reason is None:
        reason = "not scored"
    row = {
        "task": log.eval.task,
        "model": log.eval.model,
        "log": name,
        "sample_id": sample.id,
        "epoch": sample.epoch,
        "score": value,
        "missing_reason": reason,
        "limit": limit,
    }
    fields: dict[str, str] = {}  # column -> the metadata field it came from
    for field_name, field in (sample.metadata or {}).items():
        column = f"metadata_{field_name}" if field_name in _INSPECT_COLUMNS else field_name
        if column in fields:
            raise InvalidDataError(
                f"{where}: sample {sample.id!r} has metadata fields {fields[column]!r} and "
                f"{field_name!r}, which would both be column {column!r}; rename one"
            )
        fields[column] = field_name
        row[column] = field
    return row


def _planned_runs(log: Any) -> int:
    """The (sample, epoch) runs a log's task planned: its dataset's samples (or the
    ``--limit``/``--sample-id`` selection) times the epochs."""
    dataset = getattr(log.eval, "dataset", None)
    n_samples = getattr(dataset, "samples", None) or 0
    config = getattr(log.eval, "config", None)
    limit = getattr(config, "limit", None)
    if isinstance(limit, int):
        n_samples = min(n_samples, limit)
    elif isinstance(limit, (list, tuple)) and len(limit) == 2:
        n_samples = min(n_samples, int(limit[1]) - int(limit[0]))
    chosen = getattr(config, "sample_id", None)
    if isinstance(chosen, (list, tuple)):
        n_samples = len(chosen)
    elif chosen is not None:
        n_samples = 1
    return int(n_samples) * int(getattr(config, "epochs", None) or 1)


def _latest_runs(frame: pd.DataFrame) -> pd.DataFrame:
    """One row per (task, sample, epoch): the newest log's (a retry supersedes the run it
    retries, whose completed samples it carries over)."""
    ordered = frame.sort_values("_created", kind="stable")
    keys = ["_task_id", "sample_id", "epoch"]
    latest = ordered.drop_duplicates(subset=keys, keep="last")
    return latest.sort_index()


def _warn_incomplete(frame: pd.DataFrame, planned: dict[tuple[str, str], int]) -> None:
    """An IncompleteLogWarning per task whose runs, after retries, fall short of the plan."""
    for task_id, runs in frame.groupby("_task_id", sort=False):
        plans = {n: count for (t, n), count in planned.items() if t == task_id}
        expected = max(plans.values(), default=0)
        if len(runs) < expected:
            logs = ", ".join(sorted(plans))
            warn(
                f"inspect log {logs}: {len(runs)} of the {expected} (sample, epoch) runs its "
                f"task planned are in the log; the {expected - len(runs)} that never ran "
                "(a failed or cancelled run) are not rows of the frame; retry the run "
                "(inspect eval-retry) and read both logs, or count them as missing",
                IncompleteLogWarning,
            )


def read_inspect(
    logs: Any,
    *,
    score: str | None = None,
    key: str | None = None,
    cluster: str | Sequence[str] | None = None,
    limits: str = "score",
) -> pd.DataFrame:
    """One row per (sample, epoch) of inspect_ai eval logs.

    It needs inspect_ai (``pip install "clusterstats[inspect]"``), imported only here. The
    frame is an ordinary DataFrame, so everything else is ``df.eval...``; the command line
    reads such logs too (``clusterstats ci logs/ --format inspect --outcome score --by
    doc``).

    Parameters
    ----------
    logs : path, directory, EvalLog, or a list of these
        ``.eval`` or ``.json`` logs, or an ``EvalLog`` already read. A directory is
        searched recursively with inspect_ai's own rule: every ``.eval`` file, and the
        ``.json`` files whose names start with a timestamp (as inspect names its logs), so
        other JSON files in a log folder are skipped. A file given twice is read once.
    score : str, optional
        Which scorer's value becomes ``score`` when samples carry several (default: the
        only one; an error lists them otherwise).
    key : str, optional
        For a scorer whose value is a dict (``{"correct": 1, "length": 40}``): the entry
        that becomes ``score`` (an error lists the keys when it is needed and not given).
    cluster : column name(s), optional
        Metadata fields the caller will cluster by; checked to exist, and to have a value,
        in every row.
    limits : {"score", "missing"}
        A sample that hit a limit (messages, tokens, time) but was scored: ``"score"``
        (default) keeps the score inspect gave it, as inspect's own metrics count it;
        ``"missing"`` treats it as missing (``missing_reason`` ``"limit: <type>"``). Either
        way the ``limit`` column names the limit.

    Returns
    -------
    pandas.DataFrame
        Columns ``task``, ``model``, ``log``, ``sample_id`` (the case), ``epoch`` (the
        rerun), ``score`` (numeric, through inspect's ``value_to_float``: C/I/P/N,
        yes/no/true/false, numbers and numeric strings), ``missing_reason``, ``limit`` (the
        limit a sample hit, else None) and one column per sample metadata field
        (``metadata_<field>`` for a field named like one of the other columns). A sample
        that errored (or hit a limit without a score) is kept with ``score`` NaN and
        ``missing_reason`` saying why (``"error: ..."``, ``"limit: <type>"``, ``"not
        scored"``, ``"not scored (NaN)"``), so ``missing=`` and ``missing_report`` see it;
        inspect's own metrics drop such samples.

        Logs of a failed run and of its ``inspect eval-retry`` (the same task, so the same
        ``task_id``) hold the same (sample, epoch) twice: the run of the newest log is kept,
        which is what the retry reports. A log that holds fewer runs than its task planned
        (a failed, cancelled or partial run that no log read with it completes) raises an
        :class:`~clusterstats.IncompleteLogWarning` naming how many never ran.

    Raises
    ------
    ImportError
        inspect_ai is not installed.
    FileNotFoundError
        A path that does not exist.
    FileReadError
        A file that is not an inspect_ai log; two logs of the same evaluation (e.g. a
        ``.eval`` log and its ``.json`` conversion), which would count every sample twice.
    EmptyDataError
        No log, or logs without samples.
    InvalidInputError
        ``logs`` or ``cluster`` of a type the function does not take.
    InvalidOptionError
        Several scores without ``score``, an unknown ``score``, or a ``cluster`` field
        missing in some rows.
    InvalidDataError
        Two metadata fields that would be one column (``score`` and ``metadata_score``).
    InvalidOutcomeError
        A score value that is not a number and none of the values inspect maps to one (a
        list, ``"maybe"``): inspect itself would count it as 0.

    Warns
    -----
    IncompleteLogWarning
        A log with runs that never happened (see Returns).
    ColumnNotFoundError
        A ``cluster`` field that no sample has.
    """
    try:
        from inspect_ai.scorer import value_to_float
    except ImportError as error:  # pragma: no cover - exercised without inspect_ai
        raise ImportError(INSPECT_HINT) from error
    if cluster is None:
        clusters: list[Any] = []
    elif isinstance(cluster, str):
        clusters = [cluster]
    elif isinstance(cluster, (list, tuple)) and all(isinstance(c, str) for c in cluster):
        clusters = list(cluster)
    else:
        raise InvalidInputError(
            f"cluster must be a field name or a list of names; got {reprlib.repr(cluster)}"
        )
    check_choice("limits", limits, ("score", "missing"))
    to_float = value_to_float()
    rows: list[dict[str, Any]] = []
    evals: dict[str, str] = {}  # eval_id -> the log that holds it
    planned: dict[tuple[str, str], int] = {}  # (task_id, log) -> runs the task planned
    for item in _log_files(logs):
        log = _read_log(item) if isinstance(item, Path) else item
        where = str(item if isinstance(item, Path) else getattr(log, "location", "") or "")
        eval_id = getattr(log.eval, "eval_id", "") or ""
        if eval_id and eval_id in evals:
            raise FileReadError(
                where,
                f"it holds the same evaluation (eval_id {eval_id}) as {evals[eval_id]!r}, so "
                "every sample would count twice; read only one of them",
            )
        evals[eval_id] = where
        name = item.name if isinstance(item, Path) else where
        task_id = str(getattr(log.eval, "task_id", "") or eval_id or name)
        planned[(task_id, name)] = _planned_runs(log)
        rows += [
            {
                **_inspect_row(log, sample, name, where, score, to_float, key=key, limits=limits),
                "_task_id": task_id,
                "_created": str(getattr(log.eval, "created", "") or ""),
            }
            for sample in log.samples or []
        ]
    frame = pd.DataFrame(rows)
    if frame.empty:
        raise EmptyDataError("the inspect logs hold no samples")
    frame = _latest_runs(frame)
    _warn_incomplete(frame, planned)
    frame = frame.drop(columns=["_task_id", "_created"]).reset_index(drop=True)
    for column in clusters:
        if column not in frame.columns:
            raise ColumnNotFoundError(column, list(frame.columns))
        if frame[column].isna().any():
            raise InvalidOptionError(
                f"cluster field {column!r} is missing in {int(frame[column].isna().sum())} rows"
            )
    return frame


def _sample_files(path: Any) -> list[Path]:
    found: list[Path] = []
    for item in _paths(path, "path"):
        if not isinstance(item, (str, os.PathLike)):
            raise InvalidInputError(
                f"path must be a path, a folder or a list of these; the list holds "
                f"{reprlib.repr(item)} (of type {type(item).__name__})"
            )
        p = Path(item)
        if p.is_dir():
            found += sorted(q for q in p.rglob("samples_*.jsonl") if q.is_file())
        elif p.exists():
            found.append(p)
        else:
            raise FileNotFoundError(f"no lm-evaluation-harness samples at {str(p)!r}")
    if not found:
        where = "path is an empty list" if not _paths(path, "path") else f"none in {_listed(path)}"
        raise EmptyDataError(f"no samples_*.jsonl files: {where}")
    return _unique(found)


def _scalar(value: Any) -> bool:
    return value is None or isinstance(value, (str, int, float, bool))


class _DuplicateKey(ValueError):
    """A JSON object that names one key twice (raised while parsing, turned into a
    :class:`FileReadError` by the caller, which knows the file and line)."""

    def __init__(self, key: str) -> None:
        super().__init__(key)
        self.key = key


def _object_without_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """``json.loads(..., object_pairs_hook=...)`` that refuses a key given twice: JSON would
    keep only the last value, and the other would be lost unseen."""
    found: dict[str, Any] = {}
    for key, value in pairs:
        if key in found:
            raise _DuplicateKey(key)
        found[key] = value
    return found


def _shown(value: Any) -> str:
    """A value as JSON writes it (``null``, not ``None``), cut short: for messages."""
    text = json.dumps(value, ensure_ascii=False, default=str)
    return text if len(text) <= 60 else text[:57] + "..."


def load_json(text: str, path: Any, where: str) -> Any:
    """``json.loads`` that refuses an object naming one key twice (JSON would keep only the
    last value, and the other would be lost unseen): a :class:`FileReadError` naming the
    file and ``where`` ("line 3"). Malformed JSON still raises ``json.JSONDecodeError``, for
    the caller to describe."""
    try:
        return json.loads(text, object_pairs_hook=_object_without_duplicates)
    except _DuplicateKey as duplicate:
        raise FileReadError(
            path,
            f"{where} has the key {duplicate.key!r} twice (JSON would keep only the last "
            "value); keep one",
        ) from None


def kind_of(value: Any) -> str:
    """A JSON value's kind for messages: "an object", "a list", "null", ..."""
    names = {
        dict: "an object",
        list: "a list",
        str: "a string",
        bool: "a boolean",
        int: "an integer",
    }
    return "null" if value is None else names.get(type(value), f"a {type(value).__name__}")


def _lm_eval_records(file: Path) -> list[tuple[int, dict[str, Any]]]:
    """``(line number, object)`` per non-blank line; FileReadError naming the line otherwise."""
    try:
        with open(file, "rb") as handle:
            return _parse_lines(file, handle)
    except OSError as error:
        raise FileReadError(file, f"cannot open it ({error.strerror})") from None


def _parse_lines(file: Path, handle: Any) -> list[tuple[int, dict[str, Any]]]:
    # Lines are decoded one at a time (in binary, a newline never splits a UTF-8 character),
    # so that an encoding error names its line.
    records = []
    for number, raw in enumerate(handle, 1):
        if number == 1:
            if raw.startswith(b"\x1f\x8b"):
                raise FileReadError(file, "it is gzip-compressed; decompress it first (gunzip)")
            if raw.startswith(_UTF16_BOMS):
                raise FileReadError(
                    file,
                    "it is UTF-16 text; lm-evaluation-harness writes UTF-8: convert the file "
                    "(e.g. iconv -f UTF-16 -t UTF-8)",
                )
            raw = raw.removeprefix(_UTF8_BOM)
        try:
            line = raw.decode("utf-8")
        except UnicodeDecodeError as error:
            byte = raw[error.start : error.start + 1].hex()
            raise FileReadError(
                file,
                f"line {number} is not UTF-8 text (byte 0x{byte} at column {error.start + 1}); "
                "lm-evaluation-harness writes UTF-8: convert the file",
            ) from None
        if not line.strip():
            continue
        try:
            record = load_json(line, file, f"line {number}")
        except json.JSONDecodeError as error:
            raise FileReadError(
                file,
                f"line {number} is not valid JSON ({error.msg} at column {error.colno}); each "
                "line of a samples file is one JSON object"
                + ("" if file.name.startswith("samples_") else _SAMPLES_HINT),
            ) from None
        if not isinstance(record, dict):
            raise FileReadError(
                file,
                f"line {number} is {kind_of(record)}, not an object; each line of an "
                "lm-evaluation-harness samples file is one JSON object",
            )
        records.append((number, record))
    return records


def _metric_value(file: Path, where: str, metric: str, value: Any) -> Any:
    if value is None:
        return np.nan  # an explicit null: a missing value, as NaN is
    if isinstance(value, (bool, int, float)):
        return float(value)
    if isinstance(value, (list, dict)):
        # lm-evaluation-harness logs the inputs of a corpus-level metric (f1, mcc, bleu:
        # aggregated over the whole task, not per sample) as a list: kept as written, so that
        # using it as an outcome fails as not numeric instead of reading as all missing
        return value
    raise FileReadError(
        file,
        f"{where}: metric {metric!r} is {kind_of(value)} ({_shown(value)}), not a number; "
        'lm-evaluation-harness writes metric values as numbers: write 1.0, not "1.0"',
    )


def _lm_eval_row(
    file: Path, number: int, record: dict[str, Any], model: str, task: str
) -> dict[str, Any]:
    """One row of :func:`read_lm_eval`, every field checked against the v0.4 format."""
    where = f"line {number}"
    if "doc_id" not in record:
        raise FileReadError(
            file,
            f"{where} has no doc_id: not an lm-evaluation-harness sample"
            + ("" if file.name.startswith("samples_") else _SAMPLES_HINT),
        )
    doc_id = record["doc_id"]
    if isinstance(doc_id, bool) or not isinstance(doc_id, (int, str)):
        raise FileReadError(
            file,
            f"{where}: doc_id is {_shown(doc_id)}, not an integer (nor a string); "
            "lm-evaluation-harness numbers the documents of a task 0, 1, 2, ...",
        )
    filter_ = record.get("filter")
    if filter_ is not None and not isinstance(filter_, str):
        raise FileReadError(
            file, f"{where}: filter is {_shown(filter_)}, not a string (the filter's name)"
        )
    if "metrics" not in record:
        raise FileReadError(
            file,
            f"{where} has no 'metrics' list naming its metric fields (lm-evaluation-harness "
            "v0.4 writes one)",
        )
    metrics = record["metrics"]
    if not isinstance(metrics, list) or not all(isinstance(m, str) for m in metrics):
        raise FileReadError(
            file,
            f"{where}: metrics is {_shown(metrics)}, not a list of metric names (such as "
            '["acc", "acc_norm"])',
        )
    row: dict[str, Any] = {
        "model": model,
        "task": task,
        "doc_id": doc_id,
        "filter": filter_,
        "target": record.get("target"),
    }
    for metric in metrics:
        if metric in _LM_EVAL_COLUMNS:
            raise FileReadError(
                file,
                f"{where}: metric {metric!r} is named like a column the reader writes "
                f"({', '.join(_LM_EVAL_COLUMNS)}); rename the metric",
            )
        if metric in row:
            raise FileReadError(file, f"{where} lists metric {metric!r} twice in metrics")
        if metric not in record:
            raise FileReadError(
                file, f"{where} lists metric {metric!r} in metrics but has no {metric!r} field"
            )
        row[metric] = _metric_value(file, where, metric, record[metric])
    doc = record.get("doc")
    if doc is not None and not isinstance(doc, dict):
        raise FileReadError(
            file,
            f"{where}: doc is {kind_of(doc)}, not an object (lm-evaluation-harness writes the "
            "document's fields)",
        )
    for key, value in (doc or {}).items():
        if _scalar(value):
            column = f"doc_{key}"
            if column in row:
                raise FileReadError(
                    file,
                    f"{where}: document field {key!r} and metric {column!r} would both be "
                    f"column {column!r}; rename the metric",
                )
            row[column] = value
    return row


def read_lm_eval(path: Any) -> pd.DataFrame:
    """The per-sample files that lm-evaluation-harness writes with ``--log_samples``, as one
    long frame.

    The format followed is lm-evaluation-harness v0.4 (``samples_<task>_<date>.jsonl`` in a
    directory per model, one UTF-8 JSON object per line with ``doc_id``, ``doc``,
    ``target``, ``filter``, ``metrics`` and one field per metric, e.g. ``"acc": 1.0``). The
    command line reads them too (``--format lm-eval``).

    Parameters
    ----------
    path : path, directory, or a list of these
        ``samples_*.jsonl`` files, or directories searched for them (recursively). A file
        given twice is read once.

    Returns
    -------
    pandas.DataFrame
        Columns ``model`` (the directory name), ``task`` (from the file name), ``doc_id``,
        ``filter``, ``target``, one column per metric listed in ``metrics``, and one
        ``doc_<field>`` column per scalar field of the document, to cluster by (e.g. a
        subject or source field). A metric value is a float (booleans as 0/1; ``null`` and
        ``NaN`` as missing), except the lists that lm-evaluation-harness logs for
        corpus-level metrics (``f1``, ``mcc``, ``bleu``: pairs of gold and prediction, not
        per-sample scores), which are kept as written.

    Raises
    ------
    FileReadError
        A file that is not lm-evaluation-harness samples, naming the file and line: a line
        that is not UTF-8, not JSON or not a JSON object, or has a key twice; no ``doc_id``
        or one that is not an integer or string; no ``metrics`` list, or a listed metric
        without its field; a metric value that is a string; a metric named like another
        column; a ``doc`` that is not an object; a ``(doc_id, filter)`` pair on two lines,
        or a document of one task and model in two files (two runs of one task, which
        would count every sample twice).
    EmptyDataError
        A directory without sample files, or a file without samples.
    FileNotFoundError
        A path that does not exist.
    InvalidInputError
        ``path`` is not a path, a directory or a list of these.

    Examples
    --------
    >>> import json, tempfile, pathlib, clusterstats
    >>> folder = pathlib.Path(tempfile.mkdtemp()) / "my-model"
    >>> folder.mkdir()
    >>> lines = [{"doc_id": i, "doc": {"subject": f"s{i % 3}"}, "target": "A", "filter": "none",
    ...           "metrics": ["acc"], "acc": float(i % 2)} for i in range(6)]
    >>> text = "".join(json.dumps(line) + chr(10) for line in lines)  # one object per line
    >>> _ = (folder / "samples_mmlu_2024-06-01T12-00-00.jsonl").write_text(text)
    >>> frame = clusterstats.read_lm_eval(folder)
    >>> frame[["model", "task", "doc_id", "acc", "doc_subject"]].head(2)
          model  task  doc_id  acc doc_subject
    0  my-model  mmlu       0  0.0          s0
    1  my-model  mmlu       1  1.0          s1
    """
    frames = []
    # (model, task, filter, doc_id) -> (file, line): a document of a task is graded once
    seen: dict[tuple[Any, ...], tuple[Path, int]] = {}
    for file in _sample_files(path):
        match = _LM_EVAL_FILE.match(file.name)
        task = match.group("task") if match else file.stem.removeprefix("samples_")
        # abspath, so that a bare "samples_x.jsonl" or "model/run/../samples_x.jsonl" still
        # names the model's folder
        model = os.path.basename(os.path.dirname(os.path.abspath(file)))
        rows = []
        for number, record in _lm_eval_records(file):
            row = _lm_eval_row(file, number, record, model, task)
            key = (model, task, row["filter"], row["doc_id"])
            if key in seen:
                other, line = seen[key]
                sample = f"doc_id {row['doc_id']!r} (filter {row['filter']!r})"
                if other == file:
                    raise FileReadError(
                        file,
                        f"line {number} repeats {sample} of line {line}; a document is graded "
                        "once per filter: remove the repeated lines",
                    )
                raise FileReadError(
                    file,
                    f"line {number} repeats {sample} of task {task!r} and model {model!r} "
                    f"from {str(other)!r} line {line}: two runs of one task would count every "
                    "sample twice; read the runs one at a time",
                )
            seen[key] = (file, number)
            rows.append(row)
        if not rows:
            raise EmptyDataError(
                f"{str(file)!r} holds no samples (it has no JSON lines); remove it or rerun "
                "its task"
            )
        frames.append(pd.DataFrame(rows))
    return pd.concat(frames, ignore_index=True)
