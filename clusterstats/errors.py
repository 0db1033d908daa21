"""Exceptions and warnings raised by clusterstats.

Every exception subclasses ``ClusterStatsError`` *and* the builtin exception that a
user would already catch (``ValueError``, ``KeyError`` or ``TypeError``), so both
``except ValueError`` and ``except clusterstats.ClusterStatsError`` work.
"""

from __future__ import annotations

import contextlib
import os
import sys
import warnings
from collections.abc import Iterator
from contextlib import contextmanager

__all__ = [
    "AlignmentError",
    "ClusterStatsError",
    "ClusterStatsWarning",
    "ColumnNotFoundError",
    "DegenerateDataError",
    "DegenerateDataWarning",
    "DimensionError",
    "EmptyDataError",
    "FewClustersWarning",
    "FileReadError",
    "GroupNotFoundError",
    "IncompleteLogWarning",
    "InvalidClusterError",
    "InvalidDataError",
    "InvalidInputError",
    "InvalidOptionError",
    "InvalidOutcomeError",
    "JudgeScaleWarning",
    "MetricKeyError",
    "MissingOutcomeError",
    "MixedMetricsWarning",
    "OverBudgetWarning",
    "RepeatedItemsWarning",
    "SingletonClustersWarning",
    "SupersededRunWarning",
    "TooFewClustersError",
    "warn",
]


class ClusterStatsError(Exception):
    """Base class of every exception raised by clusterstats."""


class ColumnNotFoundError(ClusterStatsError, KeyError):
    """A column named by the caller is not in the frame (also a ``KeyError``); the message
    lists the available columns.

    Attributes
    ----------
    column : object
        The label that was not found.
    available : list
        The columns the frame has.
    """

    def __init__(self, column: object, available: list[object], *, where: str = "") -> None:
        shown = ", ".join(repr(c) for c in available[:20])
        more = f" (and {len(available) - 20} more)" if len(available) > 20 else ""
        self.column = column
        self.available = list(available)
        super().__init__(f"column {column!r} not found{where}; available columns: {shown}{more}")

    def __str__(self) -> str:  # KeyError would otherwise repr() the message
        return str(self.args[0])


class DimensionError(ClusterStatsError, ValueError):
    """A Dataset lacks the dims a method needs (``case``, ``rerun``), or a coordinate named by
    the caller does not lie along the case dim."""


class InvalidOutcomeError(ClusterStatsError, ValueError):
    """The outcome is not numeric, or not binary where a binary-only method was asked for."""


class AlignmentError(ClusterStatsError, ValueError):
    """Two sets of results cannot be paired item by item (items on one side only, an item in
    different clusters on the two sides, ...)."""


class MissingOutcomeError(ClusterStatsError, ValueError):
    """The outcome has missing values and ``missing="raise"`` was requested."""


class InvalidClusterError(ClusterStatsError, ValueError):
    """Cluster ids are missing (NaN/None/NA) or otherwise unusable."""


class EmptyDataError(ClusterStatsError, ValueError):
    """There are no rows to analyse (before or after dropping missing outcomes)."""


class TooFewClustersError(ClusterStatsError, ValueError):
    """Fewer than two clusters: a between-cluster variance cannot be estimated."""


class InvalidInputError(ClusterStatsError, TypeError):
    """An argument has a type the function does not take: data that is not a DataFrame or a
    Dataset, a Series where a column label is expected, arrays where a frame is needed."""


class InvalidDataError(ClusterStatsError, ValueError):
    """The data cannot be read as one value per row: duplicate column labels, arrays of
    unequal length, or values that are not one-dimensional."""


class MetricKeyError(ClusterStatsError, ValueError):
    """Two groups of a result would share one key of ``to_metrics()`` (labels that differ
    only in characters a tracker does not accept, or in where a ``/`` falls, or in type, as
    ``1`` and ``"1"``); the message names both groups and the key."""


class GroupNotFoundError(ClusterStatsError, KeyError):
    """A group asked of grouped results (``results[label]``) is not one of its groups."""

    def __str__(self) -> str:  # KeyError would quote the whole message
        return str(self.args[0]) if self.args else ""


class InvalidOptionError(ClusterStatsError, ValueError):
    """An option (method, estimand, confidence, ...) has an invalid value."""


class DegenerateDataError(ClusterStatsError, ValueError):
    """The data carry no information about the spread (e.g. a constant continuous outcome)."""


class FileReadError(ClusterStatsError, ValueError):
    """A file cannot be read as a table of graded rows (missing, empty, malformed, in an
    unexpected encoding, ...); the message names the file and the problem. The command line
    prints it as its one-line error.

    Attributes
    ----------
    path : str
        The file.
    problem : str
        What is wrong with it.
    """

    def __init__(self, path: object, problem: str) -> None:
        self.path = str(path)
        self.problem = problem
        super().__init__(f"cannot read {self.path!r}: {problem}")


class ClusterStatsWarning(UserWarning):
    """Base class (a ``UserWarning``) of every warning emitted by clusterstats."""


class FewClustersWarning(ClusterStatsWarning):
    """Fewer than 20 clusters: cluster-robust intervals are themselves uncertain."""


class DegenerateDataWarning(ClusterStatsWarning):
    """The data are degenerate (all outcomes equal, zero variance, undefined ICC); a fallback
    was used and is named in the result's notes."""


class IncompleteLogWarning(ClusterStatsWarning):
    """An eval log holds fewer (sample, epoch) runs than its task planned (a failed,
    cancelled or partial run): the runs that never happened are not rows of the frame; or
    an lm-evaluation-harness run's samples have no results file of their run (a run stopped
    before it finished): ``lm_eval_table`` does not read that run."""


class SingletonClustersWarning(ClusterStatsWarning):
    """``by`` names several columns, so the cluster is their combination, and most of those
    clusters hold a single row: rows that share only one of the columns are taken as
    independent. If each column moves outcomes on its own, the groupings are crossed."""


class SupersededRunWarning(ClusterStatsWarning):
    """A task was run more than once into one folder (lm-evaluation-harness writes each run
    beside the others): only the newest run was read."""


class MixedMetricsWarning(ClusterStatsWarning):
    """Tasks read together report different metrics: a metric's column is empty (NaN) on
    the rows of the tasks that do not report it, which is not a missing value."""


class OverBudgetWarning(ClusterStatsWarning):
    """A watching gate (``gate(sequential=True, budget=...)``) has read more than twice the
    clusters its budget planned: the plan's assumptions (the effect, the spread) deserve a
    second look before the run goes on."""


class JudgeScaleWarning(ClusterStatsWarning):
    """Human labels outside the range of the judge's scores (``judged_ci``): the judge is
    meant to score on the labels' scale."""


class RepeatedItemsWarning(ClusterStatsWarning):
    """A clustered statistic was asked of rows that repeat every cluster's items for each
    value of another column that looks like a model or condition label (a text column named
    ``model``, ``system``, ``condition``, ``run``... whose every value holds the same number
    of rows in every cluster): the statistic pools them, each item counted once per value.
    Pass ``over=`` that column for one result per value or keep one value's rows; filter the
    warning when pooling is meant."""


_PACKAGE_DIR = os.path.dirname(os.path.abspath(__file__)) + os.sep


def warn(message: str, category: type[Warning]) -> None:
    """Emit ``message`` attributed to the first caller outside the clusterstats package.

    Attributing the warning to user code (as pandas' ``find_stack_level`` does) makes the
    default warning filter show it once per call site, where the user can act on it.
    """
    frame = sys._getframe(0)
    level = 1
    # contextlib's frames sit between a `with` block of ours and the code it wraps
    while frame is not None and (
        os.path.abspath(frame.f_code.co_filename).startswith(_PACKAGE_DIR)
        or frame.f_code.co_filename == contextlib.__file__
    ):
        frame = frame.f_back
        level += 1
    warnings.warn(message, category, stacklevel=level)


@contextmanager
def held_back() -> Iterator[None]:
    """Hold back clusterstats' warnings inside a computation whose notes belong to another
    (e.g. the rate that bounds a paired difference): the caller reports what matters."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ClusterStatsWarning)
        yield
