"""lm-evaluation-harness ``--log_samples`` output as one long frame: :func:`read_lm_eval`."""

from __future__ import annotations

import json
import os
import re
import reprlib
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from clusterstats._options import LM_EVAL_RUNS, check_choice
from clusterstats.errors import (
    EmptyDataError,
    FileReadError,
    InvalidInputError,
    InvalidOptionError,
    InvalidOutcomeError,
    MixedMetricsWarning,
    SupersededRunWarning,
    warn,
)
from clusterstats.readers._files import (
    UTF8_BOM,
    UTF16_BOMS,
    kind_of,
    listed,
    load_json,
    paths,
    shown,
    unique,
)

__all__ = ["read_lm_eval", "read_lm_eval_results"]

# lm-evaluation-harness (v0.4) names its per-sample files samples_<task>_<ISO date>.jsonl
_LM_EVAL_FILE = re.compile(r"^samples_(?P<task>.+)_(?P<date>\d{4}-\d{2}-\d{2}T[\d\-.]+)\.jsonl$")
# lm-evaluation-harness writes other JSON beside the samples (results_<date>.json)
_SAMPLES_HINT = (
    " (lm-evaluation-harness writes them as samples_<task>_<date>.jsonl with --log_samples)"
)
# The columns read_lm_eval writes itself; a metric or document field may not overwrite them.
_LM_EVAL_COLUMNS = ("model", "task", "run", "doc_id", "filter", "target", "repeats")


def is_samples_file(path: Path) -> bool:
    """Whether a file is named as lm-evaluation-harness names its samples."""
    return bool(_LM_EVAL_FILE.match(path.name))


def _expand(path: Any, pattern: str, what: str) -> list[Path]:
    """The files given, and those matching ``pattern`` in the folders given (recursively)."""
    found: list[Path] = []
    for item in paths(path, "path"):
        if not isinstance(item, (str, os.PathLike)):
            raise InvalidInputError(
                f"path must be a path, a folder or a list of these; the list holds "
                f"{reprlib.repr(item)} (of type {type(item).__name__})"
            )
        p = Path(item)
        if p.is_dir():
            found += sorted(q for q in p.rglob(pattern) if q.is_file())
        elif p.exists():
            found.append(p)
        else:
            raise FileNotFoundError(f"no lm-evaluation-harness {what} at {str(p)!r}")
    return found


def _sample_files(path: Any) -> list[Path]:
    found = _expand(path, "samples_*.jsonl", "samples")
    if not found:
        where = "path is an empty list" if not paths(path, "path") else f"none in {listed(path)}"
        raise EmptyDataError(f"no samples_*.jsonl files: {where}")
    return unique(found)


def _scalar(value: Any) -> bool:
    return value is None or isinstance(value, (str, int, float, bool))


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
            if raw.startswith(UTF16_BOMS):
                raise FileReadError(
                    file,
                    "it is UTF-16 text; lm-evaluation-harness writes UTF-8: convert the file "
                    "(e.g. iconv -f UTF-16 -t UTF-8)",
                )
            raw = raw.removeprefix(UTF8_BOM)
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
        f"{where}: metric {metric!r} is {kind_of(value)} ({shown(value)}), not a number; "
        'lm-evaluation-harness writes metric values as numbers: write 1.0, not "1.0"',
    )


def _repeats(responses: Any) -> int | None:
    """How many responses the model gave each request of a document (the task's
    ``repeats``), or None when ``resps`` is absent or not the harness's list of lists."""
    if not isinstance(responses, list) or not responses:
        return None
    if not all(isinstance(request, list) for request in responses):
        return None
    counts = {len(request) for request in responses}
    return counts.pop() if len(counts) == 1 else None


def _lm_eval_row(
    file: Path, number: int, record: dict[str, Any], model: str, task: str, run: str | None
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
            f"{where}: doc_id is {shown(doc_id)}, not an integer (nor a string); "
            "lm-evaluation-harness numbers the documents of a task 0, 1, 2, ...",
        )
    filter_ = record.get("filter")
    if filter_ is not None and not isinstance(filter_, str):
        raise FileReadError(
            file, f"{where}: filter is {shown(filter_)}, not a string (the filter's name)"
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
            f"{where}: metrics is {shown(metrics)}, not a list of metric names (such as "
            '["acc", "acc_norm"])',
        )
    row: dict[str, Any] = {
        "model": model,
        "task": task,
        "run": run,
        "doc_id": doc_id,
        "filter": filter_,
        "target": record.get("target"),
        "repeats": _repeats(record.get("resps")),
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
    row["_metrics"] = tuple(metrics)
    row["_responses"] = record.get("resps")
    row["_where"] = (file, number)
    return row


def _file_rows(file: Path) -> tuple[str, str | None, str, list[dict[str, Any]]]:
    """(model, run, task, rows) of one samples file; a (doc_id, filter) pair on two lines
    is an error, as is a file without samples."""
    match = _LM_EVAL_FILE.match(file.name)
    task = match.group("task") if match else file.stem.removeprefix("samples_")
    run = match.group("date") if match else None
    # abspath, so that a bare "samples_x.jsonl" or "model/run/../samples_x.jsonl" still
    # names the model's folder
    model = os.path.basename(os.path.dirname(os.path.abspath(file)))
    rows = []
    seen: dict[tuple[Any, Any], int] = {}  # (filter, doc_id) -> line
    for number, record in _lm_eval_records(file):
        row = _lm_eval_row(file, number, record, model, task, run)
        key = (row["filter"], row["doc_id"])
        if key in seen:
            raise FileReadError(
                file,
                f"line {number} repeats doc_id {row['doc_id']!r} (filter {row['filter']!r}) "
                f"of line {seen[key]}; a document is graded once per filter: remove the "
                "repeated lines",
            )
        seen[key] = number
        rows.append(row)
    if not rows:
        raise EmptyDataError(
            f"{str(file)!r} holds no samples (it has no JSON lines); remove it or rerun its task"
        )
    return model, run, task, rows


def _chosen_runs(
    files: dict[tuple[str, str], list[tuple[str | None, Path]]], runs: str | None
) -> set[Path]:
    """The files to read: every run with ``runs="all"``, else each task's newest."""
    kept: set[Path] = set()
    for (model, task), found in files.items():
        if len(found) > 1:
            undated = [file for run, file in found if run is None]
            if undated:
                raise FileReadError(
                    undated[0],
                    f"task {task!r} of model {model!r} has {len(found)} samples files, and "
                    "this one's name has no date (samples_<task>_<date>.jsonl), so the runs "
                    "cannot be told apart or ordered; read the runs one at a time",
                )
            dates = [run for run, _ in found]
            if len(set(dates)) < len(dates):
                twice = sorted(str(file) for run, file in found if dates.count(run) > 1)
                raise FileReadError(
                    twice[0],
                    f"it is the run {dates[0]!r} of task {task!r} and model {model!r}, as "
                    f"{twice[1]!r} is; a run read twice would count every sample twice",
                )
        if runs == "all":
            kept.update(file for _, file in found)
            continue
        found = sorted(found, key=lambda pair: str(pair[0]))
        kept.add(found[-1][1])
        if len(found) > 1 and runs is None:
            older = ", ".join(str(run) for run, _ in found[:-1])
            warn(
                f"task {task!r} of model {model!r} was run {len(found)} times into one folder; "
                f"read the newest run ({found[-1][0]}) and set aside {older}; runs='all' reads "
                "every run (with its date in the run column, e.g. as reruns of each document), "
                "runs='latest' reads the newest without this warning",
                SupersededRunWarning,
            )
    return kept


def _filters_of(frame: pd.DataFrame) -> dict[tuple[Any, ...], list[Any]]:
    """The filters of each (model, task, run), in the order the file lists them."""
    return {
        key: list(dict.fromkeys(group["filter"]))
        for key, group in frame.groupby(["model", "task", "run"], sort=False, dropna=False)
    }


def _select_filters(frame: pd.DataFrame, filter_: Any) -> pd.DataFrame:
    """The rows of the filter each task is read under (see ``filter`` of read_lm_eval)."""
    if isinstance(filter_, str) and filter_ == "all":
        return frame
    if filter_ is not None and not isinstance(filter_, (str, Mapping)):
        raise InvalidOptionError(
            f"filter must be a filter name, a mapping of task to filter name, 'all' or None; "
            f"got {reprlib.repr(filter_)}"
        )
    if isinstance(filter_, Mapping):
        unknown = sorted(set(filter_) - set(frame["task"]))
        if unknown:
            raise InvalidOptionError(
                f"filter names task(s) {unknown} that the samples do not hold; the tasks are "
                f"{sorted(set(frame['task']))}"
            )
    keep = np.ones(len(frame), dtype=bool)
    matched = False
    for (model, task, _), filters in _filters_of(frame).items():
        wanted = filter_.get(task) if isinstance(filter_, Mapping) else filter_
        if wanted is None and len(filters) == 1:
            continue
        if wanted is None:
            raise InvalidOptionError(
                f"task {task!r} of model {model!r} is scored under {len(filters)} filters "
                f"({', '.join(map(repr, filters))}): each document has one row per filter, "
                "and pooling them would count it once per filter; choose one with "
                f"filter={filters[0]!r} (or a mapping task -> filter), or keep every "
                "filter's rows with filter='all' and analyse them apart (over='filter')"
            )
        if wanted not in filters:
            if len(filters) == 1 and not isinstance(filter_, Mapping):
                continue  # a task with one filter keeps it
            raise InvalidOptionError(
                f"task {task!r} of model {model!r} has no filter {wanted!r}; its filters "
                f"are {', '.join(map(repr, filters))}"
            )
        matched = True
        rows = (frame["model"] == model) & (frame["task"] == task)
        keep &= ~(rows & (frame["filter"] != wanted)).to_numpy()
    if isinstance(filter_, str) and not matched:
        every = sorted({f for filters in _filters_of(frame).values() for f in filters}, key=str)
        raise InvalidOptionError(
            f"no task has filter {filter_!r}; the filters are {', '.join(map(repr, every))}"
        )
    return frame[keep]


def _metric_sets(frame: pd.DataFrame) -> dict[str, tuple[str, ...]]:
    return {
        task: tuple(dict.fromkeys(m for metrics in group for m in metrics))
        for task, group in frame.groupby("task", sort=True)["_metrics"]
    }


def _corpus_level(frame: pd.DataFrame, metric: str) -> str | None:
    """The first task whose per-sample values of ``metric`` are lists (a corpus-level
    metric), or None."""
    lists = frame[metric].map(lambda value: isinstance(value, list))
    return None if not lists.any() else str(frame.loc[lists, "task"].iloc[0])


def _select_metric(frame: pd.DataFrame, metric: Any) -> pd.DataFrame:
    if not isinstance(metric, str):
        raise InvalidOptionError(f"metric must be a metric name; got {reprlib.repr(metric)}")
    sets = _metric_sets(frame)
    if not any(metric in metrics for metrics in sets.values()):
        listed_sets = "; ".join(f"{task}: {', '.join(m)}" for task, m in sets.items())
        raise InvalidOptionError(f"no task reports metric {metric!r}; they report {listed_sets}")
    frame = frame[frame["_metrics"].map(lambda metrics: metric in metrics)]
    task = _corpus_level(frame, metric)
    if task is not None:
        raise InvalidOutcomeError(
            f"metric {metric!r} of task {task!r} is corpus-level: lm-evaluation-harness logs "
            "its per-sample value as a pair (a reference and a prediction for f1, mcc and "
            "bleu; a log-likelihood and a word or byte count for the perplexities) and "
            "computes the metric once over the whole task, so it is not a mean of per-sample "
            "scores and has no cluster-mean interval; read the pairs with metric=None, or use "
            "a per-sample metric (acc, exact_match)"
        )
    others = [m for metrics in sets.values() for m in metrics if m != metric]
    return frame.drop(columns=[m for m in dict.fromkeys(others) if m in frame.columns])


def _warn_mixed_metrics(frame: pd.DataFrame) -> None:
    sets = _metric_sets(frame)
    every = list(dict.fromkeys(m for metrics in sets.values() for m in metrics))
    lacking = {m: [t for t, ms in sets.items() if m not in ms] for m in every}
    lacking = {m: tasks for m, tasks in lacking.items() if tasks}
    if not lacking:
        return
    metric, tasks = next(iter(lacking.items()))
    reported = "; ".join(f"{task}: {', '.join(metrics)}" for task, metrics in sets.items())
    warn(
        f"the tasks report different metrics ({reported}): "
        f"a metric's column is NaN on the rows of tasks that do not report it (e.g. "
        f"{metric!r} on {', '.join(map(repr, tasks))}), which is not a missing value; read "
        f"one metric with metric={metric!r} (only the tasks that report it), or one task "
        "at a time",
        MixedMetricsWarning,
    )


def _repeat_rows(frame: pd.DataFrame) -> pd.DataFrame:
    """One row per response: the responses are those of the document, before any filter,
    so the first filter's row of each document gives them."""
    documents = frame.drop_duplicates(subset=["model", "task", "run", "doc_id"])
    doc_columns = [c for c in frame.columns if c.startswith("doc_") and c != "doc_id"]
    rows = []
    for record in documents.to_dict("records"):
        responses = record["_responses"]
        count = _repeats(responses)
        if count is None:
            file, number = record["_where"]
            raise FileReadError(
                file,
                f"line {number} has no responses list (resps: one list of responses per "
                "request, as lm-evaluation-harness logs them with --log_samples); "
                "rows='repeats' needs them",
            )
        for repeat in range(count):
            response = (
                responses[0][repeat]
                if len(responses) == 1
                else [request[repeat] for request in responses]
            )
            rows.append(
                {
                    **{c: record[c] for c in ("model", "task", "run", "doc_id")},
                    "repeat": repeat,
                    "response": response,
                    "target": record["target"],
                    **{c: record[c] for c in doc_columns},
                }
            )
    return pd.DataFrame(rows)


def read_lm_eval(
    path: Any,
    *,
    metric: str | None = None,
    filter: str | Mapping[str, str] | None = None,
    runs: str | None = None,
    rows: str = "documents",
) -> pd.DataFrame:
    """The per-sample files that lm-evaluation-harness writes with ``--log_samples``, as one
    long frame.

    The format followed is that of lm-evaluation-harness 0.4 (checked on the output of
    0.4.13): ``<output_path>/<model>/samples_<task>_<date>.jsonl``, one UTF-8 JSON object
    per line and per (document, filter), with ``doc_id``, ``doc``, ``target``, ``resps``
    (the model's responses), ``filter``, ``metrics`` and one field per metric (e.g. ``"acc":
    1.0``). The command line reads them too (``--format lm-eval``, or by the file names).

    Parameters
    ----------
    path : path, directory, or a list of these
        ``samples_*.jsonl`` files, or directories searched for them (recursively). A file
        given twice is read once.
    metric : str, optional
        Read one metric: only the tasks that report it, and only its column. Without it,
        every metric is a column, and tasks that report different metrics raise a
        :class:`~clusterstats.MixedMetricsWarning` (a metric's column is NaN on the rows of
        a task that lacks it, which is not a missing value).
    filter : str, mapping of task to str, "all", or None
        Which of a task's filters to read (the harness scores a task once per entry of its
        ``filter_list``, e.g. ``strict-match`` and ``flexible-extract``, writing one row per
        document and filter). None (default): a task with one filter is read; a task with
        several is an error naming them, since pooling its rows would count each document
        once per filter. A name: the tasks with several filters are read under it (each
        must have it), a task with one filter keeps its own. A mapping: a filter per task.
        ``"all"``: every filter's rows (analyse them apart, e.g. ``over="filter"``).
    runs : {"latest", "all"}, optional
        A task run more than once into the same folder leaves one samples file per run
        (their names differ by the date). ``"latest"`` reads each task's newest run;
        ``"all"`` reads every run, told apart by the ``run`` column (so that two runs can be
        analysed as reruns of each document). None (default) is ``"latest"`` and raises a
        :class:`~clusterstats.SupersededRunWarning` naming the runs set aside.
    rows : {"documents", "repeats"}
        ``"documents"`` (default): one row per document and filter, with the harness's
        metrics. ``"repeats"``: one row per response of a task with ``repeats: k`` (and one
        per document otherwise), with the ``repeat`` index and the raw ``response``, for
        rerun statistics (``pass_at_k``, ``flakiness``) on a score you compute from them:
        the harness scores only the filtered response of each document (the first, or the
        majority vote), so these rows have no metric columns. ``metric`` and ``filter``
        are for document rows.

    Returns
    -------
    pandas.DataFrame
        Columns ``model`` (the directory name), ``task`` (from the file name), ``run`` (the
        date in the file name), ``doc_id``, ``filter``, ``target``, ``repeats`` (how many
        responses the model gave each request: a task's ``repeats``; missing without
        ``resps``), one column per metric listed in ``metrics``, and one ``doc_<field>``
        column per scalar field of the document, to cluster by (e.g. a subject or passage
        field). A metric value is a float (booleans as 0/1; ``null`` and ``NaN`` as
        missing), except the pairs the harness logs for corpus-level metrics (f1, mcc,
        bleu: a reference and a prediction; the perplexities and ``bits_per_byte``: a
        log-likelihood and a count), which are kept as written: they are not per-sample
        scores (``metric=`` refuses them by name). With ``rows="repeats"``: ``model``,
        ``task``, ``run``, ``doc_id``, ``repeat``, ``response`` (a string for
        ``generate_until``; for a document of several requests, the list of each
        request's response), ``target`` and the ``doc_<field>`` columns.

    Raises
    ------
    FileReadError
        A file that is not lm-evaluation-harness samples, naming the file and line: a line
        that is not UTF-8, not JSON or not a JSON object, or has a key twice; no ``doc_id``
        or one that is not an integer or string; no ``metrics`` list, or a listed metric
        without its field; a metric value that is a string; a metric named like another
        column; a ``doc`` that is not an object; a ``(doc_id, filter)`` pair on two lines;
        two samples files of one task and model that cannot be told apart as runs (a name
        without a date, or the same date twice); with ``rows="repeats"``, a line without
        its responses.
    EmptyDataError
        A directory without sample files, or a file without samples.
    FileNotFoundError
        A path that does not exist.
    InvalidInputError
        ``path`` is not a path, a directory or a list of these.
    InvalidOptionError
        A task with several filters and no ``filter``; a filter or metric that no task
        has; an unknown ``runs`` or ``rows``; ``metric`` or ``filter`` with
        ``rows="repeats"``.
    InvalidOutcomeError
        ``metric`` names a corpus-level metric.

    Warns
    -----
    SupersededRunWarning
        With ``runs=None``, a task run more than once into one folder.
    MixedMetricsWarning
        With ``metric=None``, tasks that report different metrics.

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
    if runs is not None:
        check_choice("runs", runs, LM_EVAL_RUNS)
    check_choice("rows", rows, ("documents", "repeats"))
    if rows == "repeats" and (metric is not None or filter is not None):
        given = "metric" if metric is not None else "filter"
        raise InvalidOptionError(
            f"{given}= is for rows='documents': rows='repeats' holds the responses before "
            "any filter, without the harness's metrics"
        )
    files: dict[tuple[str, str], list[tuple[str | None, Path]]] = {}
    parsed = []
    for file in _sample_files(path):
        model, run, task, file_rows = _file_rows(file)
        files.setdefault((model, task), []).append((run, file))
        parsed.append((file, file_rows))
    kept = _chosen_runs(files, runs)
    frame = pd.DataFrame([row for file, file_rows in parsed if file in kept for row in file_rows])
    frame["repeats"] = frame["repeats"].astype("Int64")
    if rows == "repeats":
        return _repeat_rows(frame).reset_index(drop=True)
    if metric is not None:
        frame = _select_metric(frame, metric)
        # the document fields of the tasks left out
        empty = [c for c in frame.columns if c.startswith("doc_") and frame[c].isna().all()]
        frame = frame.drop(columns=empty)
    frame = _select_filters(frame, filter)
    if metric is None:
        _warn_mixed_metrics(frame)
    frame = frame.drop(columns=["_metrics", "_responses", "_where"])
    return frame.reset_index(drop=True)


_RESULTS_FILE = re.compile(r"^results_(?P<date>\d{4}-\d{2}-\d{2}T[\d\-.]+)\.json$")


def _results_files(path: Any) -> list[Path]:
    found = []
    for file in _expand(path, "results_*.json", "results"):
        # a samples file given by name: the results file of its run sits beside it
        match = _LM_EVAL_FILE.match(file.name)
        twin = file.with_name(f"results_{match.group('date')}.json") if match else file
        if twin.exists():
            found.append(twin)
    return unique(found)


def _number(value: Any) -> float:
    """A value of the results table as a float; the harness writes "N/A" for a standard
    error it did not compute."""
    return (
        float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else np.nan
    )


def read_lm_eval_results(path: Any) -> pd.DataFrame:
    """The results table that lm-evaluation-harness prints and saves
    (``results_<date>.json`` beside the samples), one row per task, filter and metric.

    Parameters
    ----------
    path : path, directory, or a list of these
        Results files, folders searched for them (recursively), or samples files (the
        results file of the same run is read).

    Returns
    -------
    pandas.DataFrame
        Columns ``model`` (the directory name), ``run`` (the date in the file name),
        ``task``, ``alias`` (as the harness prints it: a group's subtasks start with
        ``" - "``), ``filter``, ``metric``, ``value``, ``stderr`` (NaN where the harness
        writes ``"N/A"``) and ``n_samples`` (the task's ``sample_len``). Empty, with these
        columns, when there is no results file.

    Raises
    ------
    FileReadError
        A results file that is not JSON, or has no ``results`` object.

    Examples
    --------
    >>> import json, tempfile, pathlib, clusterstats
    >>> folder = pathlib.Path(tempfile.mkdtemp()) / "my-model"
    >>> folder.mkdir()
    >>> results = {"results": {"mmlu": {"alias": "mmlu", "sample_len": 6, "acc,none": 0.5,
    ...                                 "acc_stderr,none": 0.2236}}}
    >>> _ = (folder / "results_2024-06-01T12-00-00.json").write_text(json.dumps(results))
    >>> clusterstats.read_lm_eval_results(folder)[["task", "filter", "metric", "value"]]
       task filter metric  value
    0  mmlu   none    acc    0.5
    """
    columns = ["model", "run", "task", "alias", "filter", "metric", "value", "stderr"]
    rows = []
    for file in _results_files(path):
        match = _RESULTS_FILE.match(file.name)
        run = match.group("date") if match else None
        model = os.path.basename(os.path.dirname(os.path.abspath(file)))
        try:
            document = load_json(file.read_text(encoding="utf-8"), file, "the file")
        except (json.JSONDecodeError, UnicodeDecodeError) as error:
            raise FileReadError(
                file, f"not an lm-evaluation-harness results file ({error})"
            ) from None
        results = document.get("results") if isinstance(document, dict) else None
        if not isinstance(results, dict):
            raise FileReadError(
                file, "it has no 'results' object: not an lm-evaluation-harness results file"
            )
        for task, entries in results.items():
            if not isinstance(entries, dict):
                continue
            for key, value in entries.items():
                metric, _, filter_ = key.partition(",")
                if not filter_ or metric.endswith("_stderr"):
                    continue
                rows.append(
                    {
                        "model": model,
                        "run": run,
                        "task": task,
                        "alias": entries.get("alias", task),
                        "filter": filter_,
                        "metric": metric,
                        "value": _number(value),
                        "stderr": _number(entries.get(f"{metric}_stderr,{filter_}")),
                        "n_samples": entries.get("sample_len"),
                    }
                )
    if not rows:
        return pd.DataFrame(columns=[*columns, "n_samples"])
    return pd.DataFrame(rows)
