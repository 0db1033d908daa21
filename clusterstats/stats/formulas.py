"""Closed-form helpers for planning by hand: Kish's design effect, the effective n, the
Wilson interval (plain and on the effective n) and the rule of three for clustered runs.
None of them looks at data; :func:`clusterstats.plan` and :func:`clusterstats.pilot_plan`
are the planners."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from clusterstats import _options as opt
from clusterstats.core import intervals as iv
from clusterstats.core.variance import design_effect_kish
from clusterstats.errors import InvalidOptionError

__all__ = [
    "adjusted_wilson_interval",
    "checked_icc",
    "effective_n",
    "kish_design_effect",
    "rule_of_three",
    "wilson_interval",
]


def checked_icc(name: str, value: Any) -> float:
    """An ICC of the planning formulas: a number in [0, 1]."""
    return opt.check_plan_number(
        name,
        value,
        at_least=0,
        at_most=1,
        why="use 0 for a negative estimate: it means no detectable clustering",
    )


def kish_design_effect(cluster_size: float, icc: float) -> float:
    """Kish's design effect ``1 + (m - 1) * icc`` for clusters of (average) size ``m``
    (Kish 1965). It does planning arithmetic by hand, as the other formula helpers do: none
    of them looks at data.

    Parameters
    ----------
    cluster_size : float
        ``m``, at least 1 (finite).
    icc : float
        ``ρ`` in [0, 1] (use 0 for a negative estimate: it means no detectable clustering).

    Returns
    -------
    float

    Raises
    ------
    InvalidOptionError
        ``cluster_size`` below 1 or not finite, ``icc`` outside [0, 1], or either not a
        number (a bool or a string).

    Examples
    --------
    >>> round(kish_design_effect(5, 0.3), 10), round(kish_design_effect(10, 0.5), 10)
    (2.2, 5.5)
    """
    m = opt.check_plan_number(
        "cluster_size", cluster_size, at_least=1, why="it is the mean number of rows per cluster"
    )
    rho = checked_icc("icc", icc)
    return design_effect_kish(m, rho)


def effective_n(n: float, design_effect: float) -> float:
    """The number of independent rows that ``n`` clustered rows are worth: ``n / deff``.

    Parameters
    ----------
    n : float
        Rows (finite, at least 0).
    design_effect : float
        The design effect (positive and finite).

    Returns
    -------
    float

    Raises
    ------
    InvalidOptionError
        A negative or non-finite ``n``, a design effect that is not positive and finite, or
        either not a number (a bool or a string).

    Examples
    --------
    >>> round(effective_n(200, 2.2), 1), round(effective_n(1000, 5.5), 1)
    (90.9, 181.8)
    """
    rows = opt.check_plan_number("n", n, at_least=0)
    deff = opt.check_plan_number("design_effect", design_effect, above=0)
    return rows / deff


def wilson_interval(successes: float, n: float, *, confidence: float = 0.95) -> tuple[float, float]:
    """Wilson score interval for ``successes`` out of ``n``, treating the trials as
    independent (both may be fractional; Wilson 1927).

    Parameters
    ----------
    successes : float
        Successes, between 0 and ``n``.
    n : float
        Trials: positive and finite, at most 1e150 (an effective n may be fractional).
    confidence : float
        Nominal coverage.

    Returns
    -------
    (float, float)
        The interval ``(low, high)``.

    Raises
    ------
    InvalidOptionError
        Unless ``0 <= successes <= n`` and ``0 < n <= 1e150`` are finite numbers (not bools
        or strings), or if the interval would have no width in floating point.

    Examples
    --------
    >>> [round(b, 3) for b in wilson_interval(30, 300)]
    [0.071, 0.139]
    """
    x, trials = _successes_of(successes, n)
    return _wilson(x / trials, trials, opt.check_confidence(confidence), f"n={n!r}")


#: Above this many trials the Wilson half-width's ``z²/(4n²)`` term falls below the
#: floating-point range, and the computed bounds are no longer accurate.
_MAX_TRIALS = 1e150


def _successes_of(successes: Any, n: Any) -> tuple[float, float]:
    """``successes`` and ``n`` checked: finite numbers, ``0 < n <= 1e150`` and
    ``0 <= successes <= n``."""
    trials = opt.check_plan_number(
        "n", n, above=0, why="the number of trials (an effective n may be fractional)"
    )
    if trials > _MAX_TRIALS:
        raise InvalidOptionError(
            f"n must be at most {_MAX_TRIALS:g} trials, got {n!r}: beyond it the interval is "
            "narrower than floating-point arithmetic can compute"
        )
    x = opt.check_plan_number("successes", successes, at_least=0)
    if x > trials:
        raise InvalidOptionError(
            f"successes must be at most n, got successes={successes!r} and n={n!r}"
        )
    return x, trials


def _wilson(proportion: float, n: float, confidence: float, what: str) -> tuple[float, float]:
    """The Wilson interval, refused if it has no width in floating point."""
    with np.errstate(over="ignore", invalid="ignore"):  # n -> 0 tends to (0, 1)
        low, high = iv.wilson(proportion, n, confidence)
    if not high > low:
        raise InvalidOptionError(
            f"{what} gives an interval of zero width in floating point, [{low!r}, {high!r}]; "
            "use a smaller n or a larger confidence"
        )
    return low, high


def adjusted_wilson_interval(
    successes: float, n: float, *, cluster_size: float, icc: float, confidence: float = 0.95
) -> tuple[float, float]:
    """Wilson interval on the Kish effective n, keeping the observed proportion.

    ``n_eff = n / (1 + (cluster_size - 1) * icc)`` (Kish 1965); the proportion
    ``successes / n`` is kept and the normal quantile is used.

    Parameters
    ----------
    successes : float
        Successes among the ``n`` rows.
    n : float
        Rows.
    cluster_size : float
        ``m``, the rows per cluster.
    icc : float
        ``ρ`` in [0, 1].
    confidence : float
        Nominal coverage.

    Returns
    -------
    (float, float)
        The interval ``(low, high)``.

    Raises
    ------
    InvalidOptionError
        Unless ``0 <= successes <= n`` and ``0 < n <= 1e150`` (as ``wilson_interval``), for an
        invalid ``cluster_size`` or ``icc`` (as ``kish_design_effect``), or a
        ``cluster_size`` larger than ``n``.

    Examples
    --------
    30 cases × 10 reruns, 30 failures, ρ = 0.3, against the naive ``wilson_interval``
    [7.1%, 13.9%]:

    >>> [round(b, 3) for b in adjusted_wilson_interval(30, 300, cluster_size=10, icc=0.3)]
    [0.052, 0.184]
    """
    x, rows = _successes_of(successes, n)
    deff = kish_design_effect(cluster_size, icc)
    if float(cluster_size) > rows:
        raise InvalidOptionError(
            f"cluster_size={cluster_size!r} exceeds n={n!r}: a cluster cannot hold more rows "
            "than there are"
        )
    n_eff = rows / deff
    return _wilson(
        x / rows, n_eff, opt.check_confidence(confidence), f"an effective n of {n_eff:g}"
    )


def rule_of_three(
    n_rows: int,
    *,
    n_clusters: int | None = None,
    icc: float | None = None,
    confidence: float = 0.95,
) -> float:
    """Upper confidence bound on a failure rate when no failure was seen, for clustered runs.

    With ``n`` independent runs and no failure, the exact one-sided bound is
    ``1 - (1 - confidence)^(1/n)``, about ``3/n`` at 95% (the rule of three). Clustered runs
    are worth fewer independent ones, so ``n`` is replaced by an effective n:

    * with ``icc``: ``n_rows / (1 + (m̄ - 1) icc)``, ``m̄ = n_rows / n_clusters``;
    * without it: ``n_clusters`` (each cluster counts once: the conservative ρ = 1);
    * with neither: ``n_rows`` (independent runs).

    Parameters
    ----------
    n_rows : int
        Runs, none of which failed.
    n_clusters : int, optional
        The test cases (clusters) the runs come from.
    icc : float, optional
        ``ρ`` of the runs within a case (needs ``n_clusters``).
    confidence : float
        One-sided confidence of the bound.

    Returns
    -------
    float
        The upper bound.

    Raises
    ------
    InvalidOptionError
        ``n_rows`` not a whole number of at least 1 (or not finite), ``n_clusters`` not a
        whole number in ``[1, n_rows]``, an invalid ``icc``, or ``icc`` without
        ``n_clusters``.

    See Also
    --------
    cluster_ci : on data without a failure, it uses the two-sided version of the same bound
        (Clopper–Pearson on the effective n).

    Examples
    --------
    300 passing runs of 30 test cases (10 reruns each):

    >>> round(rule_of_three(300), 4)  # as if independent: about 3/300
    0.0099
    >>> round(rule_of_three(300, n_clusters=30, icc=0.3), 4)  # about 3/81
    0.0363
    >>> round(rule_of_three(300, n_clusters=30), 4)  # about 3/30
    0.095
    """
    confidence = opt.check_confidence(confidence)
    rows = opt.check_plan_number("n_rows", n_rows, at_least=1, whole=True)
    if n_clusters is None:
        if icc is not None:
            raise InvalidOptionError("icc needs n_clusters (to know the cluster size)")
        n_eff = rows
    else:
        clusters = opt.check_plan_number("n_clusters", n_clusters, at_least=1, whole=True)
        if clusters > rows:
            raise InvalidOptionError(
                f"n_clusters must be at most n_rows, got n_clusters={n_clusters!r} and "
                f"n_rows={n_rows!r}: every cluster holds at least one run"
            )
        n_eff = clusters if icc is None else rows / kish_design_effect(rows / clusters, icc)
    # 1 - (1 - confidence)^(1/n), accurate when the bound is tiny (a large n)
    bound = -math.expm1(math.log1p(-confidence) / n_eff)
    if not bound > 0:
        raise InvalidOptionError(
            f"the bound for an effective n of {n_eff:g} at confidence={confidence!r} is below "
            "floating-point range"
        )
    return bound
