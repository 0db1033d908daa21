"""The lm-evaluation-harness results table with clustered intervals: ``lm_eval_table``."""

from __future__ import annotations

import math
import warnings
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np
import pandas as pd

from clusterstats import _display as fmt
from clusterstats import _options as opt
from clusterstats._result import Lines, Table, TableResult, merged_metrics, numeric_metrics
from clusterstats.core.intervals import t_interval
from clusterstats.errors import (
    ClusterStatsError,
    ColumnNotFoundError,
    EmptyDataError,
    IncompleteLogWarning,
    InvalidOptionError,
    MixedMetricsWarning,
    SupersededRunWarning,
    warn,
)
from clusterstats.readers import read_lm_eval, read_lm_eval_results
from clusterstats.stats import _policies as policy
from clusterstats.stats.mean import ClusterCI, cluster_ci

__all__ = ["LmEvalTable", "lm_eval_table"]

# the harness's group rows and per-sample pairs have no per-sample mean to cluster
_CORPUS_NOTE = "corpus-level metric: not a mean of per-sample scores, no clustered interval"


@dataclass(frozen=True, kw_only=True, repr=False)
class LmEvalTable(TableResult):
    """The harness's results table with a clustered interval beside each mean metric
    (returned by ``lm_eval_table``).

    Each row is one (model, task, filter, metric) of the harness's results: its value and
    standard error as the harness reported them, the naive interval they imply for a mean
    metric (value ± z·stderr, the rows taken as independent; none where the stderr is 0),
    and the clustered interval of the same metric from the samples (``cluster_ci``), with
    its standard error, its ratio to the harness's, the clusters and the design effect.
    Corpus-level metrics (f1, mcc, bleu, perplexities) and rows without samples keep the
    harness's numbers and say why they have no clustered interval.

    It prints as text, renders as HTML in Jupyter, and gives ``to_frame()`` (the columns
    of ``columns``) and ``to_markdown()`` (for a CI job summary).

    Attributes
    ----------
    rows : tuple of dict
        One mapping per row, with the keys of ``columns``.
    by : tuple of str
        The cluster columns.
    confidence : float
        The confidence level of both intervals.
    results : tuple of ClusterCI
        The clustered intervals behind the rows that have one, in row order.
    """

    rows: tuple[dict[str, Any], ...]
    by: tuple[str, ...]
    confidence: float
    results: tuple[ClusterCI, ...]

    columns: ClassVar[tuple[str, ...]] = (
        "model",
        "task",
        "run",
        "filter",
        "metric",
        "n_samples",
        "value",
        "stderr",
        "naive_low",
        "naive_high",
        "estimate",
        "low",
        "high",
        "se",
        "se_ratio",
        "n_clusters",
        "design_effect",
        "method",
        "notes",
    )

    def to_metrics(self, prefix: str = "") -> dict[str, float]:
        """The numeric columns of every row as a flat dict of floats, for an experiment
        tracker: keyed ``prefix + model/task/filter/metric/ + column`` (with the run after
        the task when a task has several runs), as :meth:`ClusterCI.to_metrics` keys them.

        {metrics_parameters}

        {metrics_row_clash}
        """
        parts = ("model", "task", "run", "filter", "metric")
        if not self._several_runs():
            parts = tuple(p for p in parts if p != "run")
        numeric = [c for c in self.columns if c not in (*parts, "run", "method", "notes")]
        groups = []
        for row in self.rows:
            label = tuple(row[p] for p in parts)
            where = f"{prefix}{'/'.join(map(str, label))}/"
            groups.append((label, numeric_metrics(where, ((c, row[c]) for c in numeric))))
        return merged_metrics(groups)

    def to_frame(self) -> pd.DataFrame:
        """One row per (model, task, filter, metric), with the columns of ``columns``."""
        frame = pd.DataFrame(list(self.rows), columns=list(self.columns))
        return frame.astype({"n_clusters": "Int64", "n_samples": "Int64"})

    def _several_runs(self) -> bool:
        runs = {(row["model"], row["task"], row["run"]) for row in self.rows}
        return len(runs) > len({(row["model"], row["task"]) for row in self.rows})

    def _heading(self) -> str:
        return f"LmEvalTable(by {' + '.join(self.by)})"

    def _blocks(self) -> list[Lines | Table]:
        level = f"{self.confidence:.0%}"
        runs = self._several_runs()
        header = (
            "model",
            "task",
            *(["run"] if runs else []),
            "filter",
            "metric",
            "value",
            "± stderr",
            f"naive {level} CI",
            f"clustered {level} CI",
            "se ×",
            "clusters",
            "deff",
        )
        body = []
        for row in self.rows:
            clustered = not math.isnan(row["low"])
            body.append(
                (
                    row["model"],
                    row["task"],
                    *([row["run"]] if runs else []),
                    row["filter"],
                    row["metric"],
                    row["value"],
                    "N/A" if math.isnan(row["stderr"]) else row["stderr"],
                    fmt.interval(row["naive_low"], row["naive_high"])
                    if not math.isnan(row["naive_low"])
                    else "–",
                    fmt.interval(row["low"], row["high"]) if clustered else "–",
                    f"×{row['se_ratio']:.2f}" if not math.isnan(row["se_ratio"]) else "–",
                    row["n_clusters"] if clustered else "–",
                    row["design_effect"] if clustered else "–",
                )
            )
        caption = (
            f"lm-evaluation-harness results, clustered by {' + '.join(self.by)}: the naive "
            "interval is the harness's value ± z·stderr"
        )
        return [Table(header, tuple(body)), Lines((caption,))]

    def _notes(self) -> list[str]:
        """Each note once, with the (task, metric) pairs it is about."""
        about: dict[str, list[str]] = {}
        for row in self.rows:
            if row["notes"]:
                about.setdefault(row["notes"], []).append(f"{row['task']} {row['metric']}")
        return [f"{', '.join(dict.fromkeys(pairs))}: {note}" for note, pairs in about.items()]


def _complete_runs(
    samples: pd.DataFrame, results: pd.DataFrame, runs: str | None
) -> set[tuple[Any, Any, Any]]:
    """The (model, task, run) read into the table: a run with both its samples and its
    results file (the harness writes them with one date), each task's newest such run (or
    every one, ``runs="all"``). A run whose samples have no results file (a run stopped
    before it finished, or a results file from elsewhere) is never read, and is named."""
    keys = ["model", "task", "run"]
    sampled: dict[tuple[Any, Any], set[Any]] = {}
    for model, task, run in samples[keys].drop_duplicates().itertuples(index=False, name=None):
        sampled.setdefault((model, task), set()).add(run)
    reported: dict[tuple[Any, Any], set[Any]] = {}
    for model, task, run in results[keys].drop_duplicates().itertuples(index=False, name=None):
        reported.setdefault((model, task), set()).add(run)
    chosen: set[tuple[Any, Any, Any]] = set()
    apart = []
    for (model, task), have in sorted(sampled.items(), key=lambda item: str(item[0])):
        both = sorted(have & reported.get((model, task), set()), key=str)
        lacking = sorted(have - set(both), key=str)
        where = f"task {task!r} of model {model!r}"
        if not both:
            apart.append(
                f"{where}: samples of run {', '.join(map(str, lacking))}, results of run "
                f"{', '.join(map(str, sorted(reported.get((model, task), ()), key=str))) or 'none'}"
            )
            continue
        if runs == "all":
            chosen.update((model, task, run) for run in both)
        else:
            chosen.add((model, task, both[-1]))
            older = both[:-1]
            if older and runs is None:
                warn(
                    f"{where} was run {len(both)} times into one folder; the table reads the "
                    f"newest run ({both[-1]}) and sets aside {', '.join(map(str, older))}; "
                    "runs='all' gives each run its own rows, runs='latest' reads the newest "
                    "without this warning",
                    SupersededRunWarning,
                )
        newer = [run for run in lacking if str(run) > str(both[-1])]
        if newer or (runs == "all" and lacking):
            named = newer if runs != "all" else lacking
            warn(
                f"{where}: the samples of run {', '.join(map(str, named))} have no results "
                f"file of their run (results_<date>.json; a run stopped before it finished?), "
                f"so the table reads run {both[-1]}, the newest with both"
                if runs != "all"
                else f"{where}: the samples of run {', '.join(map(str, named))} have no "
                "results file of their run (results_<date>.json) and are left out",
                IncompleteLogWarning,
            )
    if not chosen:
        raise EmptyDataError(
            "no run has both its samples and its results file (the harness writes "
            "samples_<task>_<date>.jsonl and results_<date>.json with one date): "
            + "; ".join(apart[:5])
            + ("; ..." if len(apart) > 5 else "")
        )
    for line in apart:
        warn(f"{line}: no run has both, so it is not in the table", IncompleteLogWarning)
    return chosen


def _cluster_columns(frame: pd.DataFrame, by: opt.By) -> list[str]:
    """Each name as a column of the samples, or as a document field (``doc_<name>``)."""
    names = [by] if isinstance(by, str) else list(by)
    columns = []
    for name in names:
        if name in frame.columns:
            columns.append(name)
        elif f"doc_{name}" in frame.columns:
            columns.append(f"doc_{name}")
        else:
            raise ColumnNotFoundError(name, list(frame.columns))
    return columns


def lm_eval_table(
    path: Any,
    *,
    by: str | Sequence[str],
    confidence: float = 0.95,
    method: str = "auto",
    estimand: str = "pooled",
    runs: str | None = None,
    rng: Any = None,
) -> LmEvalTable:
    """The results table of lm-evaluation-harness with each metric's clustered interval
    beside the naive one the harness's standard error implies.

    The harness reports each metric with the standard error of independent documents;
    when documents share a passage, a source or a template, that error is too small. This
    reads the run's results and samples (``--output_path ... --log_samples``), and for
    each (model, task, filter, metric) computes :func:`~clusterstats.cluster_ci` of the
    per-sample values clustered by ``by``. The clustered estimate equals the harness's
    value for a mean metric (a note says so if not).

    Parameters
    ----------
    path : path, directory, or a list of these
        The harness's output folder (or model folders, or samples files).
    by : str or sequence of str
        The cluster: a column of :func:`~clusterstats.read_lm_eval`'s frame or a document
        field (``"passage"`` for ``doc_passage``); several names for their combination.
    confidence : float
        Confidence level of both intervals.
    method : str
        Interval method of ``cluster_ci`` (``"auto"`` by default).
    estimand : {"pooled", "cluster_mean"}
        ``"pooled"`` (default) is the harness's mean over documents.
    runs : {"latest", "all"}, optional
        As in :func:`~clusterstats.read_lm_eval`; with ``"all"`` each run is its own row.
        Only a run with both its samples and its results file (written with one date) is
        read: when a task's newest samples have no results file of their run (a run
        stopped before it finished), the table reads the newest run that has both, with an
        :class:`~clusterstats.IncompleteLogWarning`.
    rng : int or numpy Generator, optional
        Seed of the bootstrap methods (a fixed seed by default).

    Returns
    -------
    LmEvalTable

    Raises
    ------
    ColumnNotFoundError
        ``by`` names neither a column nor a document field.
    EmptyDataError
        No results file, no samples, or no run with both (the message names each task's
        runs of samples and of results).

    Notes
    -----
    A task whose samples cannot give a clustered interval (all its documents in one
    passage, a passage field it lacks) keeps its row, with the reason in ``notes``; the
    other tasks are unaffected.

    Examples
    --------
    >>> import json, tempfile, pathlib, clusterstats
    >>> folder = pathlib.Path(tempfile.mkdtemp()) / "my-model"
    >>> folder.mkdir()
    >>> lines = [{"doc_id": i, "doc": {"passage": f"p{i // 4}"}, "filter": "none",
    ...           "metrics": ["acc"], "acc": float(i % 4 != 0)} for i in range(80)]
    >>> text = "".join(json.dumps(line) + chr(10) for line in lines)
    >>> _ = (folder / "samples_qa_2024-06-01T12-00-00.jsonl").write_text(text)
    >>> results = {"results": {"qa": {"alias": "qa", "sample_len": 80, "acc,none": 0.75,
    ...                               "acc_stderr,none": 0.04871}}}
    >>> _ = (folder / "results_2024-06-01T12-00-00.json").write_text(json.dumps(results))
    >>> table = clusterstats.lm_eval_table(folder, by="passage")
    >>> table.to_frame()[["task", "metric", "value", "estimate", "n_clusters"]]
      task metric  value  estimate  n_clusters
    0   qa    acc   0.75      0.75          20
    """
    level = opt.check_confidence(confidence)
    opt.check_choice("runs", "latest" if runs is None else runs, opt.LM_EVAL_RUNS)
    # the options of every row's interval, checked once: an error here is the call's
    opt.interval_options(method=method, estimand=estimand, confidence=level, rng=rng)
    with warnings.catch_warnings():
        # each metric is read from the tasks that report it, below; every run is read, and
        # the runs the table uses are chosen below, where the results files are known
        warnings.simplefilter("ignore", MixedMetricsWarning)
        samples = read_lm_eval(path, filter="all", runs="all")
    results = read_lm_eval_results(path)
    if results.empty:
        raise EmptyDataError(
            "no lm-evaluation-harness results files (results_<date>.json) beside the samples; "
            "the harness writes them with --output_path"
        )
    columns = _cluster_columns(samples, by)
    keys = ["model", "task", "run"]
    chosen = _complete_runs(samples, results, runs)
    results = results[[key in chosen for key in results[keys].itertuples(index=False, name=None)]]
    by_run = {
        key: part for key, part in samples.groupby(["model", "run", "task", "filter"], sort=False)
    }
    rows, found = [], []
    # one warning per message for the whole table, not one per row
    with policy.once():
        for record in results.to_dict("records"):
            stderr = record["stderr"]
            row = {
                **{key: record[key] for key in ("model", "task", "run", "filter", "metric")},
                "n_samples": record["n_samples"],
                "value": record["value"],
                "stderr": stderr,
                "naive_low": np.nan,
                "naive_high": np.nan,
                **dict.fromkeys(
                    ("estimate", "low", "high", "se", "se_ratio", "design_effect"), np.nan
                ),
                "n_clusters": None,
                "method": None,
                "notes": "",
            }
            key = (record["model"], record["run"], record["task"], record["filter"])
            picked = by_run.get(key)
            metric = record["metric"]
            if picked is None or metric not in picked.columns:
                row["notes"] = "no samples (a group of tasks, or a run without --log_samples)"
            elif picked[metric].map(lambda value: isinstance(value, list)).any():
                row["notes"] = _CORPUS_NOTE
            else:
                try:
                    result = cluster_ci(
                        picked.assign(**{metric: picked[metric].astype(float)}),
                        metric,
                        by=columns[0] if len(columns) == 1 else columns,
                        confidence=level,
                        method=method,
                        estimand=estimand,
                        rng=rng,
                    )
                except InvalidOptionError:
                    raise
                except ClusterStatsError as error:
                    # one task's samples that cannot give an interval (one passage, no passage,
                    # scores for a 0/1 method): its row says why, and the others keep theirs
                    row["notes"] = f"no clustered interval: {error}"
                    rows.append(row)
                    continue
                found.append(result)
                if stderr > 0:  # a zero stderr (every document scored alike) is no interval
                    low, high = t_interval(record["value"], stderr**2, math.inf, level)
                    row.update(naive_low=low, naive_high=high)
                row.update(
                    estimate=result.estimate,
                    low=result.low,
                    high=result.high,
                    se=result.se,
                    se_ratio=result.se / stderr if stderr > 0 else np.nan,
                    n_clusters=result.n_clusters,
                    design_effect=result.design_effect,
                    method=result.method,
                )
                if estimand == "pooled" and not math.isclose(
                    result.estimate, record["value"], rel_tol=1e-9, abs_tol=1e-12
                ):
                    row["notes"] = (
                        f"the samples give {result.estimate:.6g}, the harness reported "
                        f"{record['value']:.6g} (a --limit, or samples from another run?)"
                    )
            rows.append(row)
    return LmEvalTable(rows=tuple(rows), by=tuple(columns), confidence=level, results=tuple(found))
