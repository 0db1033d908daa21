"""Assertions for test suites: an eval gate inside ``pytest`` (or any test runner).

Each helper runs :func:`clusterstats.gate` and turns its verdict into the test's outcome:
a pass returns the report, a fail raises ``AssertionError`` whose message is the gate's
report, and an inconclusive run is never silently passed: by default it is reported as a
skipped test with the report as the reason (``pytest -rs`` prints it), or it fails with
``inconclusive="fail"``.
"""

from __future__ import annotations

from collections.abc import Hashable
from typing import Any, Literal

from clusterstats import _options as opt
from clusterstats.errors import InvalidOptionError
from clusterstats.gating import GateReport, gate

__all__ = ["GateFailed", "GateInconclusive", "assert_not_worse", "assert_pass_rate_at_least"]

Inconclusive = Literal["skip", "fail"]


class GateFailed(AssertionError):
    """The gate failed; the message is its report."""


class GateInconclusive(AssertionError):
    """The gate could not decide (raised with ``inconclusive="fail"``); the message is its
    report, with the clusters a plan says would decide."""


def _settle(report: GateReport, inconclusive: Inconclusive) -> GateReport:
    if report.verdict == "pass":
        return report
    if report.verdict == "fail":
        raise GateFailed(f"\n{report!r}")
    if inconclusive == "fail":
        raise GateInconclusive(f"\n{report!r}")
    try:
        import pytest
    except ImportError:  # another runner: an inconclusive gate must not pass silently
        raise GateInconclusive(f"\n{report!r}") from None
    pytest.skip(f"clusterstats gate inconclusive:\n{report!r}")
    raise AssertionError("unreachable")  # pytest.skip raises


def _check_inconclusive(value: Any) -> Inconclusive:
    opt.check_choice("inconclusive", value, ("skip", "fail"))
    return value


def assert_pass_rate_at_least(
    data: Any,
    outcome: Hashable,
    threshold: float,
    *,
    by: opt.By | None = None,
    inconclusive: Inconclusive = "skip",
    **options: Any,
) -> GateReport:
    """Assert that the pass rate of ``data`` is at least ``threshold``, from its clustered
    interval (``gate(data, outcome, by, at_least=threshold, ...)``).

    Parameters
    ----------
    data : DataFrame (pandas, polars, pyarrow or dask) or xarray.Dataset
        The results, as in ``cluster_ci``.
    outcome : column label
        The outcome (0/1 or a score).
    threshold : float
        The pass rate to clear.
    by : column label or list of labels, optional
        The cluster column(s).
    inconclusive : {"skip", "fail"}
        What an inconclusive gate does: skip the test with the report as the reason
        (pytest), or fail with :class:`GateInconclusive`. Outside pytest, ``"skip"``
        raises :class:`GateInconclusive` too.
    **options
        Any other option of ``gate`` (``over``, ``method``, ``confidence``, ``missing``,
        ``strata``, ...).

    Returns
    -------
    GateReport
        When every gate passes.

    Raises
    ------
    GateFailed
        A gate failed (an ``AssertionError``; its message is the report).
    GateInconclusive
        A gate was inconclusive and ``inconclusive="fail"`` (or no pytest).

    Examples
    --------
    >>> import clusterstats
    >>> from clusterstats.testing import assert_pass_rate_at_least
    >>> bbh = clusterstats.datasets.load("bbh")
    >>> cot = bbh[bbh.condition == "cot"]
    >>> assert_pass_rate_at_least(cot, "correct", 0.6, by="task").verdict
    'pass'
    """
    mode = _check_inconclusive(inconclusive)
    if "at_least" in options or "baseline" in options:
        raise InvalidOptionError("give the threshold as threshold=, without at_least/baseline")
    return _settle(gate(data, outcome, by, at_least=threshold, **options), mode)


def assert_not_worse(
    candidate: Any,
    baseline: Any,
    outcome: Hashable,
    *,
    margin: float,
    by: opt.By | None = None,
    inconclusive: Inconclusive = "skip",
    **options: Any,
) -> GateReport:
    """Assert that ``candidate`` is not worse than ``baseline`` by more than ``margin`` on
    their shared items, from the clustered paired interval (``gate(candidate, outcome, by,
    baseline=baseline, margin=margin, ...)``).

    Parameters
    ----------
    candidate, baseline : DataFrame (pandas, polars, pyarrow or dask) or Dataset
        The two models' results on the same items (matched on ``on=``, as in
        ``paired_delta``).
    outcome : column label
        The outcome (higher is better).
    margin : float
        How much worse is still acceptable (0 or more).
    by : column label or list of labels, optional
        The cluster column(s).
    inconclusive : {"skip", "fail"}
        As in :func:`assert_pass_rate_at_least`.
    **options
        Any other option of ``gate`` (``on``, ``rerun``, ``over``, ``method``, ...).

    Returns
    -------
    GateReport
        When every gate passes.

    Raises
    ------
    GateFailed
        A gate failed.
    GateInconclusive
        A gate was inconclusive and ``inconclusive="fail"`` (or no pytest).

    Examples
    --------
    >>> import clusterstats
    >>> from clusterstats.testing import GateFailed, assert_not_worse
    >>> bbh = clusterstats.datasets.load("bbh")
    >>> cot, direct = bbh[bbh.condition == "cot"], bbh[bbh.condition == "direct"]
    >>> assert_not_worse(cot, direct, "correct", margin=0.02, by="task", on="item_id").verdict
    'pass'
    >>> try:
    ...     assert_not_worse(direct, cot, "correct", margin=0.02, by="task", on="item_id")
    ... except GateFailed as failure:
    ...     print(str(failure).splitlines()[1])
    GateReport: FAIL (not worse than the baseline by more than 0.02; correct by task)
    """
    mode = _check_inconclusive(inconclusive)
    if "at_least" in options:
        raise InvalidOptionError(
            "assert_not_worse compares two models; at_least= is the other gate"
        )
    report = gate(candidate, outcome, by, baseline=baseline, margin=margin, **options)
    return _settle(report, mode)
