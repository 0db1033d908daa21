"""clusterstats as an Inspect extension: a clustered metric, and annotating existing logs.

Installed with ``pip install "clusterstats[inspect]"``, the metric is registered with Inspect
as ``clusterstats/cluster_ci`` (through the ``inspect_ai`` entry point), so a task can use it
like Inspect's own metrics, and :func:`annotate` adds it to a log that has already run,
recomputing its metrics from the logged scores without calling a model.

Inspect's metrics see the scores of the samples that were scored: a sample that errored has
no score and is not among them (nor is a score of NaN). The metric therefore answers "among
the samples that were scored"; for an answer that accounts for the rest, read the log with
:func:`clusterstats.read_inspect` (one row per sample and epoch, errored ones with a missing
score) and pass ``missing=`` to ``cluster_ci`` (``"fail"``, ``"ipw"``, ...).
"""

from __future__ import annotations

import logging
import math
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pandas as pd

try:
    from inspect_ai.scorer import Metric, SampleScore, metric, value_to_float
except ImportError as error:  # pragma: no cover - exercised without inspect_ai installed
    raise ImportError(
        "clusterstats.inspect needs inspect_ai, an optional dependency: "
        'pip install "clusterstats[inspect]"'
    ) from error

from clusterstats.errors import (
    ClusterStatsError,
    EmptyDataError,
    FileReadError,
    InvalidInputError,
    InvalidOptionError,
)
from clusterstats.readers import read_inspect, sample_scores, score_entry
from clusterstats.stats.mean import cluster_ci as interval
from clusterstats.stats.paired import paired_delta as difference

__all__ = [
    "METRIC_NAME",
    "SequentialStopping",
    "annotate",
    "annotated_path",
    "cluster_ci",
    "metric_values",
    "paired_delta",
    "scores_frame",
]

#: The name Inspect knows the metric by.
METRIC_NAME = "clusterstats/cluster_ci"

#: The keys of the metric group, in order.
METRIC_KEYS = (
    "estimate",
    "lower",
    "upper",
    "se",
    "df",
    "n_clusters",
    "n_eff",
    "design_effect",
    "icc",
)


def scores_frame(
    scores: Sequence[SampleScore],
    *,
    cluster: str | None = None,
    strata: str | None = None,
    key: str | None = None,
) -> pd.DataFrame:
    """One row per score (a sample and epoch, unreduced): ``value``, ``sample`` and the
    ``cluster`` (the sample metadata field ``cluster``, else the sample) and ``stratum``.

    A dict-valued score needs ``key``, the entry to read; values convert as Inspect's own
    metrics convert them (``value_to_float``: ``"C"`` is 1, ``"I"`` is 0, ``"P"`` is 0.5).
    """
    rows = []
    for number, sample_score in enumerate(scores):
        value = score_entry(
            sample_score.score.value, key, what=f"the score of sample {sample_score.sample_id!r}"
        )
        metadata = sample_score.sample_metadata or {}
        row = {"value": value_to_float()(value), "sample": str(sample_score.sample_id)}
        for name, field in (("cluster", cluster), ("stratum", strata)):
            if field is None:
                continue
            if field not in metadata:
                raise InvalidInputError(
                    f"sample {sample_score.sample_id!r} (score {number}) has no metadata field "
                    f"{field!r}; its fields: {sorted(metadata)}"
                )
            row[name] = metadata[field]
        rows.append(row)
    frame = pd.DataFrame(rows)
    if cluster is None and len(frame):
        frame["cluster"] = frame["sample"]
    return frame


_logger = logging.getLogger("clusterstats")


def _not_computed(
    name: str, keys: Sequence[str], cause: BaseException, logged: set[str]
) -> dict[str, float]:
    """NaN for every value of the group, and one logged warning naming the cause: a metric
    that cannot be computed (one cluster, no scores, a missing metadata field) must never
    end the user's eval, whose own metrics then stand beside it. Inspect also computes
    metrics on the samples finished so far while the eval runs, so each metric logs each
    cause once (``logged`` holds what it has logged)."""
    message = f"clusterstats/{name}: no value ({type(cause).__name__}: {cause})"
    if message not in logged:
        logged.add(message)
        _logger.warning(message)
    return dict.fromkeys(keys, math.nan)


#: The keys of the paired metric group, in order.
PAIRED_KEYS = ("delta", "lower", "upper", "se", "p_value", "n_items", "n_clusters")


def metric_values(result: Any) -> dict[str, float | None]:
    """The metric group of a :class:`~clusterstats.ClusterCI`: ``estimate``, ``lower``,
    ``upper``, ``se``, ``df``, ``n_clusters``, ``n_eff``, ``design_effect``, ``icc``; a value
    that the method does not have (e.g. ``df`` of a bootstrap) is None, which Inspect leaves
    out of the log."""
    values = (
        result.estimate,
        result.low,
        result.high,
        result.se,
        result.df,
        result.n_clusters,
        result.n_eff,
        result.design_effect,
        result.icc,
    )
    return _finite(dict(zip(METRIC_KEYS, values, strict=True)))


def _finite(values: dict[str, Any]) -> dict[str, float | None]:
    """Floats, with None for a value the method does not have (Inspect leaves it out)."""
    return {k: (float(v) if math.isfinite(float(v)) else None) for k, v in values.items()}


def _registered_name(name: str) -> str:
    """The name to give ``@metric`` so that Inspect registers ``clusterstats/<name>``.

    Inspect prefixes the package itself when it recognises the defining module as part of an
    installed package; it does not for an editable install seen from its source folder
    (where a build leaves a ``clusterstats.egg-info`` without install records), and then the
    prefix must be in the name. Either way the metric is found as ``clusterstats/<name>``,
    which is what Inspect's entry-point lookup needs."""
    try:
        from inspect_ai._util.registry import get_installed_package_name
    except ImportError:  # an Inspect without it: name the package ourselves
        return f"clusterstats/{name}"
    return name if get_installed_package_name(_registered_name) else f"clusterstats/{name}"


@metric(name=_registered_name("cluster_ci"), scores="unreduced")
def cluster_ci(
    cluster: str | None = None,
    strata: str | None = None,
    estimand: str = "pooled",
    method: str = "auto",
    confidence: float = 0.95,
    key: str | None = None,
) -> Metric:
    """A clustered confidence interval as an Inspect metric (``clusterstats/cluster_ci``).

    It receives the unreduced scores (one per sample and epoch, so the epochs of a sample are
    reruns of one case), clusters them by the sample metadata field ``cluster`` (default:
    each sample is its own cluster, its epochs the cluster's rows), and returns the metric
    group of ``clusterstats.cluster_ci`` on them (see :func:`metric_values`). The method
    actually used (``"auto"`` resolved) and the estimand are added to the logged params
    (``method_used``, ``estimand``).

    Parameters
    ----------
    cluster : str, optional
        A sample metadata field naming the cluster (a document, a task family).
    strata : str, optional
        A sample metadata field naming the stratum, for a stratified design.
    estimand : {"pooled", "cluster_mean"}
        As in ``cluster_ci``.
    method : str
        As in ``cluster_ci`` (default ``"auto"``).
    confidence : float
        Nominal coverage.
    key : str, optional
        For dict-valued scores: the entry to read.

    Returns
    -------
    Metric
        An Inspect metric. When it cannot be computed (one cluster, no scores, a metadata
        field a sample lacks) its values are NaN and a warning naming the cause is logged:
        the eval, and Inspect's own metrics, are never lost to it.

    Examples
    --------
    >>> from clusterstats.inspect import cluster_ci
    >>> metric = cluster_ci(cluster="doc")  # e.g. Task(..., metrics=[metric])
    >>> callable(metric)
    True
    """

    logged: set[str] = set()

    def compute(scores: list[SampleScore]) -> dict[str, float | None]:

        try:
            if not scores:
                raise EmptyDataError("no sample was scored")
            frame = scores_frame(scores, cluster=cluster, strata=strata, key=key)
            result = interval(
                frame,
                "value",
                "cluster",
                strata="stratum" if strata is not None else None,
                estimand=estimand,
                method=method,
                confidence=confidence,
            )
        except ClusterStatsError as error:
            return _not_computed("cluster_ci", METRIC_KEYS, error, logged)
        _log_method(compute, result.method, estimand)
        return metric_values(result)

    return compute


@metric(name=_registered_name("paired_delta"), scores="unreduced")
def paired_delta(
    baseline: str,
    cluster: str | None = None,
    estimand: str = "pooled",
    method: str = "auto",
    confidence: float = 0.95,
    score: str | None = None,
    key: str | None = None,
) -> Metric:
    """This task's scores minus a baseline log's, paired on the samples both scored, as an
    Inspect metric (``clusterstats/paired_delta``).

    The baseline is another log of the same samples (a file or a directory, read by
    :func:`clusterstats.read_inspect` when the metric is created); each sample's epochs are
    averaged on both sides, the samples that both logs scored are compared, and the clusters
    are the sample metadata field ``cluster`` (default: each sample). Returns the group
    ``delta``, ``lower``, ``upper``, ``se``, ``p_value``, ``n_items``, ``n_clusters`` of
    ``paired_delta``; the method used and the estimand are added to the logged params.

    Parameters
    ----------
    baseline : str
        Path of the baseline log (or a directory of logs of one task).
    cluster : str, optional
        A sample metadata field naming the cluster.
    estimand : {"pooled", "cluster_mean"}
        As in ``paired_delta``.
    method : str
        As in ``paired_delta`` (default ``"auto"``).
    confidence : float
        Nominal coverage.
    score : str, optional
        The baseline log's scorer to compare with, when its samples carry several (as
        ``read_inspect``'s ``score``).
    key : str, optional
        For a dict-valued scorer: the entry to read, in the baseline's scores and in this
        task's when they are dicts too.

    Returns
    -------
    Metric
        An Inspect metric. When it cannot be computed (one cluster, no scores, a metadata
        field a sample lacks) its values are NaN and a warning naming the cause is logged:
        the eval, and Inspect's own metrics, are never lost to it.

    Examples
    --------
    >>> from clusterstats.inspect import paired_delta
    >>> # in a task: Task(..., metrics=[paired_delta("logs/baseline.eval", cluster="doc")])
    """

    # Read the baseline now, when the task is defined: Inspect computes metrics inside its
    # event loop, where reading another log would nest one loop in another.
    old = read_inspect(baseline, score=score, key=key, cluster=cluster).rename(
        columns={"sample_id": "sample", "epoch": "run", "score": "value"}
    )
    old = old[old["value"].notna()].assign(sample=lambda d: d["sample"].astype(str))
    old["cluster"] = old["sample"] if cluster is None else old[cluster]
    old = old[["sample", "run", "cluster", "value"]]

    logged: set[str] = set()

    def compute(scores: list[SampleScore]) -> dict[str, float | None]:

        try:
            if not scores:
                raise EmptyDataError("no sample was scored")
            # the same entry of this task's scores when they are dicts too
            dicts = any(isinstance(one.score.value, dict) for one in scores)
            new = scores_frame(scores, cluster=cluster, key=key if dicts else None)
            new["run"] = new.groupby("sample").cumcount()
            result = difference(
                new,
                old,
                "value",
                "cluster",
                on="sample",
                rerun="run",
                how="inner",
                estimand=estimand,
                method=method,
                confidence=confidence,
            )
        except ClusterStatsError as error:  # as in cluster_ci: never end the eval
            return _not_computed("paired_delta", PAIRED_KEYS, error, logged)
        _log_method(compute, result.method, estimand)
        values = (
            result.delta,
            result.low,
            result.high,
            result.se,
            result.p_value,
            result.n_items,
            result.n_clusters,
        )
        return _finite(dict(zip(PAIRED_KEYS, values, strict=True)))

    return compute


def _log_method(metric_function: Any, used: str, estimand: str) -> None:
    """Add the method actually used, and the estimand, to the params Inspect logs beside the
    metric (it reads them from the metric's registry tag after calling it)."""
    try:
        from inspect_ai._util.registry import registry_params

        params = registry_params(metric_function)
        params["method_used"] = used
        params["estimand"] = estimand
    except (ImportError, ValueError):  # an Inspect without the tag: the params stay as given
        pass


def annotate(
    log: Any,
    metric: Metric | None = None,
    *,
    cluster: str | None = None,
    scorer: str | None = None,
    output: str | Path | None = None,
    in_place: bool = False,
) -> Any:
    """Add the clustered metric to an existing Inspect log and recompute its metrics from the
    logged scores (Inspect's ``recompute_metrics``; no model is called), keeping the log's
    own metrics.

    Annotating again replaces the metric added before (the same registered name) instead of
    adding a second group beside it. A log given by path is written to a new file by default
    (``<name>-clustered.eval`` beside it), never half-written: the file is written under a
    temporary name in the same folder and then renamed over the target.

    Parameters
    ----------
    log : EvalLog, str or path
        The log, or the path of a ``.eval``/``.json`` log file.
    metric : Metric, optional
        The metric to add (default ``cluster_ci(cluster=cluster)``).
    cluster : str, optional
        With the default metric: the sample metadata field naming the cluster.
    scorer : str, optional
        The scorer whose scores the metric is about (default: every scorer with a list of
        metrics; one whose metrics are a dict per score key, as a dict-valued scorer's are,
        is left as it is).
    output : str or path, optional
        Where to write the annotated log. Default: for a path, a new file beside it
        (``<stem>-clustered<suffix>``); an ``EvalLog`` given as such is annotated in memory
        and not written.
    in_place : bool
        For a path: write the annotated log back to it (atomically) instead of a new file.

    Returns
    -------
    EvalLog
        The log, with the metric group in ``results.scores[...].metrics``; its ``location``
        is the file written, if any.

    Raises
    ------
    FileReadError
        A path that is not an Inspect log (a text file named ``.eval``, a CSV).
    InvalidInputError
        A log without samples (a header-only read), whose scores cannot be recomputed; an
        unknown ``scorer``; only dict-valued scorers.
    InvalidOptionError
        Both ``output`` and ``in_place``.
    """
    from inspect_ai._util.registry import registry_log_name, registry_params
    from inspect_ai.log import recompute_metrics
    from inspect_ai.log._log import EvalMetricDefinition

    if output is not None and in_place:
        raise InvalidOptionError("annotate writes to output= or in place (in_place=True), not both")
    source = None
    if isinstance(log, (str, Path)):
        source = Path(log)
        log = _read_log(source)
    if not log.samples:
        raise InvalidInputError(
            "the log has no samples (read with header_only?): its metrics cannot be recomputed"
        )
    chosen = metric if metric is not None else cluster_ci(cluster=cluster)
    name = registry_log_name(chosen)
    definition = EvalMetricDefinition(name=name, options=dict(registry_params(chosen)))

    def replaced(metrics: Any) -> list[Any]:
        """The metric list with this metric's earlier definition (a previous annotate) out
        and the new one at the end."""
        kept = [m for m in (metrics or []) if getattr(m, "name", None) != name]
        return [*kept, definition]

    if log.eval.metrics is not None:
        if not isinstance(log.eval.metrics, list):
            raise InvalidInputError(
                "the log's metrics are a dict per score key; annotate a log whose metrics are "
                "a list (or give the metric in the task)"
            )
        log.eval.metrics = replaced(log.eval.metrics)
    else:
        scorers = list(log.eval.scorers or [])
        if scorer is not None:
            names = [s.name for s in scorers]
            if scorer not in names:
                raise InvalidInputError(f"no scorer {scorer!r} in the log; its scorers: {names}")
            scorers = [s for s in scorers if s.name == scorer]
        chosen_scorers = [s for s in scorers if not isinstance(s.metrics, dict)]
        if not chosen_scorers:
            raise InvalidInputError(
                "the scorers' metrics are dicts per score key (dict-valued scores): give the "
                "metric in the task, with key= to pick the entry"
            )
        for entry in chosen_scorers:
            entry.metrics = replaced(entry.metrics)
    recompute_metrics(log)
    target = Path(output) if output is not None else None
    if target is None and source is not None:
        target = source if in_place else annotated_path(source)
    if target is not None:
        _write_atomically(log, target)
        log.location = str(target)
    return log


def annotated_path(source: str | Path) -> Path:
    """Where ``annotate`` writes the annotated copy of a log by default:
    ``<stem>-clustered<suffix>`` beside it (annotating that copy again writes back to it)."""
    source = Path(source)
    if source.stem.endswith("-clustered"):
        return source
    return source.with_name(f"{source.stem}-clustered{source.suffix}")


def _read_log(path: Path) -> Any:
    """The Inspect log at ``path``, or a FileReadError that says what the file is not."""
    from inspect_ai.log import read_eval_log

    if not path.is_file():
        raise FileReadError(path, "no such log file (a .eval or .json inspect_ai log)")
    try:
        return read_eval_log(str(path))
    except Exception as error:  # zip, JSON and schema errors of a file that is not a log
        first = str(error).strip().splitlines()[0] if str(error).strip() else ""
        raise FileReadError(
            path,
            f"not an inspect_ai log ({type(error).__name__}{': ' + first[:120] if first else ''})",
        ) from None


def _write_atomically(log: Any, target: Path) -> None:
    """Write ``log`` to ``target`` through a temporary file in the same folder and a rename,
    so that a failure never leaves a half-written log (nor touches an existing one)."""
    from inspect_ai.log import write_eval_log

    temporary = target.with_name(f".{target.stem}.{os.getpid()}.partial{target.suffix}")
    try:
        write_eval_log(log, str(temporary))
        os.replace(temporary, target)
    finally:
        if temporary.exists():
            temporary.unlink()


class SequentialStopping:
    """Stop an Inspect eval as soon as it is decided: an implementation of Inspect's
    ``EarlyStopping`` protocol (``Task(..., early_stopping=SequentialStopping(...))``) that
    watches a confidence sequence over **completed clusters** and stops scheduling samples
    once it decides.

    Two questions, as ``clusterstats.gate`` asks them:

    * ``at_least=T``: the pass rate (or mean score) of this run, decided once the sequence
      lies wholly at or above ``T`` (pass) or below it (fail);
    * ``baseline=LOG, margin=M``: this run against a stored run of the same samples (an
      Inspect log, or a frame read by ``clusterstats.read_inspect``), paired by sample id:
      the sequence of the per-sample difference ``new - baseline`` (epochs averaged per
      sample), decided once it lies at or above ``-M`` (pass) or below it (fail).

    A cluster (the sample metadata field ``cluster``; default: each sample, its epochs the
    rows) completes when all of its samples and epochs are scored; a partial cluster never
    counts. The sequence is ``clusterstats.confidence_sequence``'s (betting with hedged
    capital, Waudby-Smith & Ramdas 2024), valid however often it is looked at, so stopping
    at the first look that decides keeps its level: a run at the threshold passes with
    probability at most ``(1 - confidence) / 2``. The bound on cluster sizes that the pooled
    estimand's bets need is known before the run (its largest cluster), and each completed
    cluster costs the same time however long the run. Validity assumes clusters complete in
    an order that does not depend on their outcomes (Inspect schedules samples in dataset
    order; a dataset sorted by cluster completes cluster by cluster).

    Nothing raises inside the eval. A problem found while it runs (a score outside
    ``bounds``, several scorers and no ``scorer=``, a sample without the ``cluster`` field)
    is logged on the ``clusterstats`` logger and recorded as ``problem`` in the log's
    ``early_stopping`` summary, and the stopper stops watching: the eval runs to its end. A
    sequence that goes empty (no value is consistent with every cluster so far, e.g. the
    model's API began to fail part-way, seen in the samples still running after a decision or
    before one) never stops the eval, and the summary's verdict is then ``"void"``, whatever
    was decided before (kept as ``decided_before_empty``). A sample scored again (a retry)
    replaces nothing: its first score counts. The summary records the verdict, the final
    bounds, the clusters and samples used, and the samples saved.

    Parameters
    ----------
    at_least : float, optional
        The threshold of the pass rate (or mean score), within ``bounds``.
    baseline : path, EvalLog or DataFrame, optional
        The stored run to compare with: an Inspect log (``.eval`` or ``.json``) or the frame
        ``clusterstats.read_inspect`` gives (columns ``sample_id`` and ``score``).
    margin : float, optional
        With ``baseline``: how much worse than the baseline is still acceptable (0 or more,
        less than the width of ``bounds``).
    cluster : str, optional
        A sample metadata field naming the cluster.
    scorer : str, optional
        The scorer whose score is the outcome (default: the only one); also the scorer read
        from a baseline log.
    key : str, optional
        For dict-valued scores: the entry to read.
    estimand : {"pooled", "cluster_mean"}
        As in ``confidence_sequence``.
    confidence : float
        The sequence's confidence.
    bounds : (float, float)
        The range of the scores (values convert as Inspect's metrics convert them: ``"C"``
        is 1, ``"I"`` is 0).
    method : {"betting_mixture", "betting_predictable"}
        How the sequence bets, as in ``confidence_sequence``.
    target : {"population", "benchmark"}
        As in ``confidence_sequence``: the population the samples' clusters are drawn from,
        or this benchmark's own full-run score. With ``"benchmark"`` the sequence shrinks to
        the exact score as the dataset runs out; it is valid when the clusters run in a
        random order (``Task(dataset=..., shuffle=True)``, or a dataset shuffled by cluster).

    Raises
    ------
    InvalidOptionError
        Neither or both of ``at_least`` and ``baseline``; ``margin`` missing or negative; a
        threshold outside ``bounds`` (``at_least=55`` for a 0/1 score) or a margin as wide
        as them: such a stopper would decide whatever the eval does.

    Examples
    --------
    >>> from clusterstats.inspect import SequentialStopping
    >>> stopping = SequentialStopping(at_least=0.6, cluster="doc")
    >>> stopping.decision is None
    True
    """

    def __init__(
        self,
        at_least: float | None = None,
        *,
        baseline: Any = None,
        margin: float | None = None,
        cluster: str | None = None,
        scorer: str | None = None,
        key: str | None = None,
        estimand: str = "pooled",
        confidence: float = 0.95,
        bounds: tuple[float, float] = (0.0, 1.0),
        method: str = "betting_mixture",
        target: str = "population",
    ) -> None:
        from clusterstats import _options as opt

        if (at_least is None) == (baseline is None):
            raise InvalidOptionError(
                "SequentialStopping asks one question: at_least= (a pass rate of at least a "
                "threshold) or baseline= with margin= (not worse than a stored run)"
            )
        self.options = opt.sequence_options(
            estimand=estimand, confidence=confidence, bounds=bounds, method=method, target=target
        )
        low, high = self.options.bounds or (0.0, 1.0)
        self.cluster, self.scorer, self.key = cluster, scorer, key
        self.at_least: float | None = None
        self.margin: float | None = None
        self._baseline: dict[str, float] | None = None
        if at_least is not None:
            if margin is not None:
                raise InvalidOptionError("margin= goes with baseline=; a threshold is at_least=")
            self.at_least = opt.check_plan_number("at_least", at_least)
            if not low <= self.at_least <= high:
                meant = self.at_least / 100
                raise InvalidOptionError(
                    f"at_least={self.at_least:g} lies outside bounds=({low:g}, {high:g}), the "
                    "range of the scores, so the stopper would "
                    f"{'fail' if self.at_least > high else 'pass'} whatever the eval does"
                    + (f" (did you mean {meant:g}?)" if low <= meant <= high else "")
                )
            self.boundary = self.at_least
            self._bounds = (low, high)
        else:
            if margin is None:
                raise InvalidOptionError(
                    "baseline= needs margin=: how much worse than the baseline is still "
                    "acceptable (0 or more; 0 asks for no loss at all)"
                )
            self.margin = opt.check_plan_number(
                "margin", margin, at_least=0, why="it is how much worse is still acceptable"
            )
            if self.margin >= high - low:
                meant = self.margin / 100
                raise InvalidOptionError(
                    f"margin={self.margin:g} is as wide as the range of a difference of "
                    f"scores in ({low:g}, {high:g}), so the stopper would pass whatever the "
                    "eval does" + (f" (did you mean {meant:g}?)" if meant < high - low else "")
                )
            self.boundary = -self.margin + 0.0
            self._baseline = sample_scores(baseline, score=scorer, key=key)
            self._bounds = (low - high, high - low)
        self._score_bounds = (low, high)
        self.decision: str | None = None
        self.problem: str | None = None
        self.sequence: Any = None
        self._state: Any = None
        self._cluster_of: dict[Any, Any] = {}
        self._expected: dict[Any, int] = {}
        self._seen: dict[Any, dict[Any, list[float]]] = {}
        self._scored_runs: set[tuple[Any, int]] = set()
        self._completed = 0
        self._stops: list[Any] = []
        self._scored = 0
        self._planned = 0
        self._unpaired = 0

    async def start_task(self, task: Any, samples: list[Any], epochs: int) -> str:
        """Register the samples: each one's cluster, and each cluster's rows."""
        from clusterstats.core.sequential import SEQUENCE_METHODS, BettingState

        paired_sizes: dict[Any, int] = {}
        for sample in samples:
            metadata = sample.metadata or {}
            if self.cluster is not None and self.cluster not in metadata:
                self._give_up(
                    f"sample {sample.id!r} has no metadata field {self.cluster!r} (cluster=); "
                    f"its fields: {sorted(metadata)}"
                )
                break
            label = sample.id if self.cluster is None else metadata[self.cluster]
            self._cluster_of[sample.id] = label
            self._expected[label] = self._expected.get(label, 0) + epochs
            if self._baseline is None or str(sample.id) in self._baseline:
                paired_sizes[label] = paired_sizes.get(label, 0) + 1
            else:
                self._unpaired += 1
        self._planned = len(samples) * epochs
        if self.problem is None:
            # a cluster's rows: its samples and epochs, or its samples in the baseline
            rows = self._expected if self._baseline is None else paired_sizes
            benchmark = self.options.target == "benchmark"
            chosen = SEQUENCE_METHODS[self.options.method]
            self._state = BettingState(
                estimand=self.options.estimand,
                confidence=self.options.confidence,
                bounds=self._bounds,
                max_cluster_size=float(max(rows.values(), default=1)),
                breaks=self.options.breaks,
                schedules=chosen.schedules,
                truncation=chosen.truncation,
                population_size=len(rows) if benchmark else None,
                population_rows=float(sum(rows.values())) if benchmark else None,
            )
        return "clusterstats/sequential_stopping"

    async def schedule_sample(self, id: str | int, epoch: int) -> Any:
        """Stop every sample scheduled after the sequence decided."""
        if self.decision is None:
            return None
        from inspect_ai.util import EarlyStop

        stop = EarlyStop(id=id, epoch=epoch, reason=self._reason())
        self._stops.append(stop)
        return stop

    async def complete_sample(self, id: str | int, epoch: int, scores: dict[str, Any]) -> None:
        """Add a scored sample to its cluster; when the cluster is complete, look again."""
        if not scores or self.problem is not None or self._state is None:
            return
        if (id, epoch) in self._scored_runs:
            return  # a retry scored again: the first score counts
        try:
            value = self._value(id, scores)
        except ClusterStatsError as error:
            self._give_up(str(error))
            return
        self._scored_runs.add((id, epoch))
        label = self._cluster_of.get(id, id)
        runs = self._seen.setdefault(label, {})
        runs.setdefault(id, []).append(value)
        self._scored += 1
        if sum(len(v) for v in runs.values()) == self._expected.get(label, 1):
            self._look(runs)

    def _value(self, id: Any, scores: dict[str, Any]) -> float:
        if self.scorer is None and len(scores) > 1:
            raise InvalidOptionError(
                f"the task has several scorers {sorted(scores)}: pass scorer= to say which "
                "one's score the sequence follows"
            )
        name = self.scorer if self.scorer is not None else next(iter(scores))
        if name not in scores:
            raise InvalidOptionError(f"scorer={name!r} is not one of {sorted(scores)}")
        raw = score_entry(scores[name].score.value, self.key, what=f"the score of {id!r}")
        value = float(value_to_float()(raw))
        low, high = self._score_bounds
        if not low <= value <= high:
            raise InvalidOptionError(
                f"sample {id!r} scored {value:g}, outside bounds=({low:g}, {high:g}) that the "
                "sequence relies on"
            )
        return value

    def _look(self, runs: dict[Any, list[float]]) -> None:
        """A cluster is complete: its sum and size enter the sequence."""
        if self._baseline is None:
            values = [v for scored in runs.values() for v in scored]
        else:
            values = [
                sum(scored) / len(scored) - self._baseline[str(sample)]
                for sample, scored in runs.items()
                if str(sample) in self._baseline
            ]
            if not values:
                return  # no sample of this cluster is in the baseline
        self._completed += 1
        self.sequence = self._state.add(float(sum(values)), float(len(values)))
        if bool(self.sequence.empty[-1]):
            self._give_up(
                f"the confidence sequence went empty after {self._completed} completed "
                "clusters: no value is consistent with every cluster so far (the outcome "
                "drifted, or the run broke part-way); no decision is taken",
                verdict="void",
            )
            return
        low, high = float(self.sequence.low[-1]), float(self.sequence.high[-1])
        if self.decision is None and low >= self.boundary:
            self.decision = "pass"
        elif self.decision is None and high < self.boundary:
            self.decision = "fail"

    def _give_up(self, problem: str, *, verdict: str = "error") -> None:
        """Stop watching: log the problem and let the eval run on."""
        self.problem = problem
        self._verdict_on_problem = verdict
        _logger.warning("clusterstats SequentialStopping stopped watching: %s", problem)

    def _question(self) -> str:
        if self.at_least is not None:
            return f"at_least={self.at_least:g}"
        return f"margin={self.margin:g} against the baseline"

    def _reason(self) -> str:
        assert self.sequence is not None
        low, high = float(self.sequence.low[-1]), float(self.sequence.high[-1])
        return (
            f"clusterstats: the {self.options.confidence:.0%} confidence sequence over "
            f"{self._completed} completed clusters, [{low:.4f}, {high:.4f}], decided "
            f"{self.decision} for {self._question()}"
        )

    async def complete_task(self) -> dict[str, Any]:
        """What the log records: the verdict and the sequence's final bounds."""
        verdict = self.decision or "continue"
        if self.problem is not None and (
            self.decision is None or self._verdict_on_problem == "void"
        ):
            verdict = self._verdict_on_problem
        summary: dict[str, Any] = {
            "verdict": verdict,
            "at_least": self.at_least,
            "margin": self.margin,
            "confidence": self.options.confidence,
            "estimand": self.options.estimand,
            "method": self.options.method,
            "target": self.options.target,
            "clusters_completed": self._completed,
            "clusters_planned": len(self._expected),
            "samples_scored": self._scored,
            "samples_planned": self._planned,
            "samples_saved": len(self._stops),
        }
        if self._baseline is not None:
            summary["samples_not_in_baseline"] = self._unpaired
        if self.problem is not None:
            summary["problem"] = self.problem
            if self.decision is not None and verdict == "void":
                summary["decided_before_empty"] = self.decision
        if self.sequence is not None:
            summary["estimate"] = float(self.sequence.estimate[-1])
            low, high = float(self.sequence.low[-1]), float(self.sequence.high[-1])
            summary["low"] = None if math.isnan(low) else low
            summary["high"] = None if math.isnan(high) else high
        return summary
