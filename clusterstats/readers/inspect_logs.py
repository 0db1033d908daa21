"""inspect_ai logs as one row per (sample, epoch): :func:`read_inspect`.

inspect_ai is an optional dependency, imported only when a log is read.
"""

from __future__ import annotations

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
from clusterstats.readers._files import listed, unique

__all__ = ["read_inspect", "sample_scores", "score_entry"]

INSPECT_HINT = "read_inspect needs inspect_ai, an optional extra: pip install inspect-ai"
# inspect_ai's own rule for the logs in a folder (inspect_ai.log.list_eval_logs): every
# .eval file, and the .json files named by a timestamp, so that other JSON in a log folder
# (the viewer's logs.json listing, a config file) is not mistaken for a log.
_INSPECT_JSON_LOG = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}[:-]\d{2}[:-]\d{2}.*\.json$")
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


def is_inspect_log(path: Path) -> bool:
    """Whether a file is named as inspect_ai names its logs (its own rule, as above)."""
    return path.suffix == ".eval" or bool(_INSPECT_JSON_LOG.match(path.name))


def _log_files(logs: Any) -> list[Any]:
    found: list[Any] = []
    items = logs if isinstance(logs, (list, tuple)) else [logs]
    for item in items:
        if isinstance(item, (str, os.PathLike)):
            path = Path(item)
            if path.is_dir():
                found += sorted(p for p in path.rglob("*") if p.is_file() and is_inspect_log(p))
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
        where = "logs is an empty list" if not items else f"none in {listed(logs)}"
        raise EmptyDataError(
            f"no inspect logs: {where}; a folder is searched for .eval files and for .json "
            "files named by a timestamp, as inspect_ai names its logs; give other files by name"
        )
    return unique(found)


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
                f"{what} is a dict (keys {sorted(value)}); pass key= (--key on the command "
                "line) to say which entry is the outcome"
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
                f"samples carry several scores {sorted(scores)}; pick one with score= "
                "(--score on the command line)"
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


def sample_scores(
    logs: Any, *, score: str | None = None, key: str | None = None
) -> dict[str, float]:
    """Each sample's score in a stored run (its epochs averaged), keyed by the sample id as a
    string: from inspect_ai logs (as :func:`read_inspect` reads them) or from the frame it
    returns (columns ``sample_id`` and ``score``). Unscored samples are left out."""
    frame = logs if isinstance(logs, pd.DataFrame) else read_inspect(logs, score=score, key=key)
    missing = [c for c in ("sample_id", "score") if c not in frame.columns]
    if missing:
        raise InvalidInputError(
            f"the baseline frame has no column {missing[0]!r}: give an Inspect log or the frame "
            "clusterstats.read_inspect reads from one"
        )
    scored = frame.dropna(subset=["score"])
    if scored.empty:
        raise EmptyDataError("the baseline has no scored sample")
    means = scored.groupby(scored["sample_id"].astype(str))["score"].mean()
    return {str(k): float(v) for k, v in means.items()}
