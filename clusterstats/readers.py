"""Readers for eval logs: inspect_ai logs and lm-evaluation-harness ``--log_samples`` files.

Both return ordinary long DataFrames (one row per graded run), so everything else is
``df.eval...``. inspect_ai is an optional dependency, imported only by :func:`read_inspect`.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from clusterstats.errors import ColumnNotFoundError, EmptyDataError, InvalidOptionError

__all__ = ["read_inspect", "read_lm_eval"]

INSPECT_HINT = "read_inspect needs inspect_ai, an optional extra: pip install inspect-ai"
# lm-evaluation-harness (v0.4) names its per-sample files samples_<task>_<ISO date>.jsonl
_LM_EVAL_FILE = re.compile(r"^samples_(?P<task>.+)_(?P<date>\d{4}-\d{2}-\d{2}T[\d\-.]+)\.jsonl$")


def _log_files(logs: Any) -> list[Any]:
    items = logs if isinstance(logs, (list, tuple)) else [logs]
    found: list[Any] = []
    for item in items:
        if isinstance(item, (str, Path)):
            path = Path(item)
            if path.is_dir():
                found += sorted(p for p in path.rglob("*") if p.suffix in (".eval", ".json"))
            elif path.exists():
                found.append(path)
            else:
                raise FileNotFoundError(f"no inspect log at {str(path)!r}")
        else:
            found.append(item)  # an EvalLog already read
    if not found:
        raise EmptyDataError(f"no inspect logs (.eval or .json) found in {logs!r}")
    return found


def read_inspect(
    logs: Any,
    *,
    score: str | None = None,
    cluster: str | Sequence[str] | None = None,
) -> pd.DataFrame:
    """One row per (sample, epoch) of inspect_ai eval logs.

    It needs inspect_ai (``pip install "clusterstats[inspect]"``), imported only here. The
    frame is an ordinary DataFrame, so everything else is ``df.eval...``; the command line
    reads such logs too (``clusterstats ci logs/ --format inspect --outcome score --by
    doc``).

    Parameters
    ----------
    logs : path, directory, EvalLog, or a list of these
        ``.eval`` or ``.json`` logs (a directory is searched recursively), or an ``EvalLog``
        already read.
    score : str, optional
        Which scorer's value becomes ``score`` when samples carry several (default: the
        only one; an error lists them otherwise).
    cluster : column name(s), optional
        Metadata fields the caller will cluster by; checked to exist, and to have a value,
        in every row.

    Returns
    -------
    pandas.DataFrame
        Columns ``task``, ``model``, ``log``, ``sample_id`` (the case), ``epoch`` (the
        rerun), ``score`` (numeric, through inspect's ``value_to_float``: C/I/P/N, bools and
        numbers), ``missing_reason`` and one column per sample metadata field. A sample that
        errored or hit a limit is kept with ``score`` NaN and ``missing_reason`` saying why
        (``"error: ..."``, ``"limit: <type>"``), so ``missing=`` and ``missing_report`` see
        it; inspect's own metrics drop such samples.

    Raises
    ------
    ImportError
        inspect_ai is not installed.
    FileNotFoundError
        A path that does not exist.
    EmptyDataError
        No log, or logs without samples.
    InvalidOptionError
        Several scores without ``score``, an unknown ``score``, or a ``cluster`` field
        missing in some rows.
    ColumnNotFoundError
        A ``cluster`` field that no sample has.
    """
    try:
        from inspect_ai.log import read_eval_log
        from inspect_ai.scorer import value_to_float
    except ImportError as error:  # pragma: no cover - exercised without inspect_ai
        raise ImportError(INSPECT_HINT) from error
    to_float = value_to_float()
    rows: list[dict[str, Any]] = []
    for item in _log_files(logs):
        log = read_eval_log(str(item)) if isinstance(item, Path) else item
        name = item.name if isinstance(item, Path) else getattr(log, "location", "")
        for sample in log.samples or []:
            scores = sample.scores or {}
            reason = None
            if sample.error is not None:
                reason = "error: " + str(sample.error.message).splitlines()[0][:200]
            elif sample.limit is not None:
                reason = f"limit: {sample.limit.type}"
            value = np.nan
            if reason is None and scores:
                if score is None and len(scores) > 1:
                    raise InvalidOptionError(
                        f"samples carry several scores {sorted(scores)}; pick one with score="
                    )
                key = score if score is not None else next(iter(scores))
                if key not in scores:
                    raise InvalidOptionError(f"no score {key!r}; the samples have {sorted(scores)}")
                value = float(to_float(scores[key].value))
            elif reason is None:
                reason = "not scored"
            row = {
                "task": log.eval.task,
                "model": log.eval.model,
                "log": str(name),
                "sample_id": sample.id,
                "epoch": sample.epoch,
                "score": value,
                "missing_reason": reason,
            }
            for key, field in (sample.metadata or {}).items():
                row[key if key not in row else f"metadata_{key}"] = field
            rows.append(row)
    frame = pd.DataFrame(rows)
    if frame.empty:
        raise EmptyDataError("the inspect logs hold no samples")
    for column in [cluster] if isinstance(cluster, str) else list(cluster or []):
        if column not in frame.columns:
            raise ColumnNotFoundError(column, list(frame.columns))
        if frame[column].isna().any():
            raise InvalidOptionError(
                f"cluster field {column!r} is missing in {int(frame[column].isna().sum())} rows"
            )
    return frame


def _sample_files(path: Any) -> list[Path]:
    paths = [Path(p) for p in (path if isinstance(path, (list, tuple)) else [path])]
    found: list[Path] = []
    for p in paths:
        if p.is_dir():
            found += sorted(q for q in p.rglob("samples_*.jsonl"))
        elif p.exists():
            found.append(p)
        else:
            raise FileNotFoundError(f"no lm-evaluation-harness samples at {str(p)!r}")
    if not found:
        raise EmptyDataError(f"no samples_*.jsonl files under {path!r}")
    return found


def _scalar(value: Any) -> bool:
    return value is None or isinstance(value, (str, int, float, bool))


def read_lm_eval(path: Any) -> pd.DataFrame:
    """The per-sample files that lm-evaluation-harness writes with ``--log_samples``, as one
    long frame.

    The format followed is lm-evaluation-harness v0.4 (``samples_<task>_<date>.jsonl`` in a
    directory per model, one JSON object per line with ``doc_id``, ``doc``, ``target``,
    ``filter``, ``metrics`` and one field per metric, e.g. ``"acc": 1.0``). The command line
    reads them too (``--format lm-eval``).

    Parameters
    ----------
    path : path, directory, or a list of these
        ``samples_*.jsonl`` files, or directories searched for them (recursively).

    Returns
    -------
    pandas.DataFrame
        Columns ``model`` (the directory name), ``task`` (from the file name), ``doc_id``,
        ``filter``, ``target``, one column per metric listed in ``metrics``, and one
        ``doc_<field>`` column per scalar field of the document, to cluster by (e.g. a
        subject or source field).

    Raises
    ------
    InvalidOptionError
        A line that is not JSON or has no ``doc_id`` (not an lm-evaluation-harness sample).
    EmptyDataError
        A directory without sample files, or files without samples.
    FileNotFoundError
        A path that does not exist.

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
    for file in _sample_files(path):
        match = _LM_EVAL_FILE.match(file.name)
        task = match.group("task") if match else file.stem.removeprefix("samples_")
        records = []
        with open(file, encoding="utf-8") as handle:
            for number, line in enumerate(handle, 1):
                if not line.strip():
                    continue
                try:
                    record = json.loads(line)
                except json.JSONDecodeError as error:
                    raise InvalidOptionError(f"{file}:{number} is not JSON: {error}") from None
                if "doc_id" not in record:
                    raise InvalidOptionError(
                        f"{file}:{number} has no doc_id: not an lm-evaluation-harness sample"
                    )
                row: dict[str, Any] = {
                    "model": file.parent.name,
                    "task": task,
                    "doc_id": record["doc_id"],
                    "filter": record.get("filter"),
                    "target": record.get("target"),
                }
                for metric in record.get("metrics", []):
                    value = record.get(metric)
                    row[metric] = float(value) if isinstance(value, (int, float, bool)) else np.nan
                for key, value in (record.get("doc") or {}).items():
                    if _scalar(value):
                        row[f"doc_{key}"] = value
                records.append(row)
        frames.append(pd.DataFrame(records))
    frame = pd.concat(frames, ignore_index=True)
    if frame.empty:
        raise EmptyDataError("the lm-evaluation-harness files hold no samples")
    return frame
