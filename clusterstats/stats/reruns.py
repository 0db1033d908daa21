"""Test cases run several times: the (case, rerun) layout, pass@k, pass^k and flakiness.

``to_case_rerun`` turns long results (one row per run) into an xarray Dataset with dims
``(case, rerun)``; ``pass_at_k``, ``pass_hat_k`` and ``flakiness`` take such a Dataset (or a
long DataFrame, pandas or dask, laid out the same way) and return results with clustered
intervals, the cases being the clusters unless ``by`` names a coarser grouping along ``case``.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar, Literal

import numpy as np
import pandas as pd

from clusterstats import _display as fmt
from clusterstats import _options as opt
from clusterstats import adapters
from clusterstats._design import CaseDesign
from clusterstats._result import GroupedResults, Result, label_of, one_number
from clusterstats.adapters.layout import from_frame
from clusterstats.core.grouping import cluster_sums
from clusterstats.core.reruns import case_sums, effective_runs, flaky_cases
from clusterstats.core.reruns import pass_at_k as _pass_at_k_per_case
from clusterstats.core.reruns import pass_hat_k as _pass_hat_k_per_case
from clusterstats.core.summary import summarize_icc, summarize_interval
from clusterstats.errors import (
    EmptyDataError,
    InvalidInputError,
    InvalidOptionError,
    InvalidOutcomeError,
    TooFewClustersError,
)
from clusterstats.stats import _policies as policy

__all__ = ["Flakiness", "PassAtK", "flakiness", "pass_at_k", "pass_hat_k", "to_case_rerun"]


@dataclass(frozen=True)
class PassOptions:
    """Options of ``pass_at_k``, ``pass_hat_k`` and ``flakiness``."""

    k: int = 1
    method: str = "auto"
    confidence: float = 0.95
    fewer_runs: str = "raise"
    n_resamples: int = 9999
    rng: opt.Seed = field(default_factory=lambda: opt.Seed(None))


def pass_options(
    *,
    k: Any,
    method: Any = "auto",
    confidence: Any = 0.95,
    fewer_runs: Any = "raise",
    n_resamples: Any = 9999,
    rng: Any = None,
) -> PassOptions:
    """Validate the options of ``pass_at_k`` and ``pass_hat_k``."""
    level = opt.check_confidence(confidence)
    if isinstance(k, bool) or not (isinstance(k, (int, np.integer)) and k >= 1):
        raise InvalidOptionError(f"k must be a positive integer, got {k!r}")
    opt.check_choice("method", method, opt.PASS_METHODS)
    opt.check_choice("fewer_runs", fewer_runs, opt.FEWER_RUNS)
    return PassOptions(
        k=int(k),
        method=method,
        confidence=level,
        fewer_runs=fewer_runs,
        n_resamples=opt.check_n_resamples(
            n_resamples, level, resampling=str(method).startswith("bootstrap")
        ),
        rng=opt.check_seed(rng),
    )


def flakiness_options(*, method: Any = "auto", confidence: Any = 0.95) -> PassOptions:
    """Validate the options of ``flakiness``."""
    level = opt.check_confidence(confidence)
    opt.check_choice("method", method, opt.METHODS)
    return PassOptions(method=method, confidence=level)


@dataclass(frozen=True, kw_only=True, repr=False)
class PassAtK(Result):
    """pass@k or pass^k of test cases run several times, with a clustered interval (returned
    by ``pass_at_k`` and ``pass_hat_k``).

    The property ``name`` is e.g. ``"pass^3"``; ``float(result)`` is the estimate. The fields
    are the columns of ``to_frame()``, in this order.

    Attributes
    ----------
    outcome : str or None
        The outcome variable.
    by : tuple of str
        The clusters of cases (empty: every case is its own cluster).
    statistic : {"pass@k", "pass^k"}
        ``pass@k``: the chance that at least one of ``k`` runs passes (Chen et al. 2021);
        ``pass^k``: the chance that all ``k`` runs pass (Yao et al. 2024, τ-bench).
    k : int
        Runs per draw.
    estimand : str
        ``"case_mean"``: every case counts once, as the published figures are defined.
    method : str
        The interval method actually used (``"auto"`` resolved).
    confidence : float
        Nominal coverage.
    estimate : float
        The mean over cases of the per-case unbiased estimator.
    se : float
        Its standard error (clustered by case, or by ``by``).
    low, high : float
        The interval, clipped to [0, 1] (with a note) where a t interval would cross a bound.
    df : float
        Degrees of freedom of the reference t (NaN for the bootstraps).
    n_cases : int
        Cases used.
    n_clusters : int
        The clusters they fall in (``n_clusters == n_cases`` without ``by``).
    runs_min, runs_max : int
        Fewest and most runs of a case used.
    n_excluded : int
        Cases left out for having fewer than ``k`` runs (only with ``fewer_runs="drop"``).
    n_resamples : int or None
        Bootstrap replicates, for bootstrap methods.
    notes : tuple of str
        Everything a reader should know.
    """

    outcome: str | None = None
    by: tuple[str, ...] = ()
    statistic: str
    k: int
    estimand: str
    method: str
    confidence: float
    estimate: float
    se: float
    low: float
    high: float
    df: float
    n_cases: int
    n_clusters: int
    runs_min: int
    runs_max: int
    n_excluded: int = 0
    n_resamples: int | None = None
    notes: tuple[str, ...] = ()

    _html: ClassVar[tuple[tuple[str, str], ...]] = tuple(
        (f, f)
        for f in (
            "statistic",
            "k",
            "estimate",
            "low",
            "high",
            "se",
            "method",
            "n_cases",
            "n_clusters",
        )
    )

    @property
    def name(self) -> str:
        """``"pass@5"``, ``"pass^3"``, ..."""
        return self.statistic.replace("k", str(self.k))

    def _lines(self) -> list[str]:
        runs = (
            f"{self.runs_min}"
            if self.runs_min == self.runs_max
            else f"{self.runs_min}–{self.runs_max}"
        )
        return [
            f"PassAtK({self.name} of {label_of(self.outcome, self.by)}; "
            f"estimand={self.estimand}, method={self.method})",
            f"  {self.name} {fmt.number(self.estimate)}  {self.confidence:.0%} CI "
            f"{fmt.interval(self.low, self.high)}  se {fmt.number(self.se)}",
            f"  {fmt.count(self.n_cases, 'case')} ({runs} runs each) in "
            f"{fmt.count(self.n_clusters, 'cluster')}"
            + (
                f"; {self.n_excluded} cases with fewer than k runs left out"
                if self.n_excluded
                else ""
            ),
        ]

    def __float__(self) -> float:
        return float(self.estimate)


@dataclass(frozen=True, kw_only=True, repr=False)
class Flakiness(Result):
    """How often reruns of a test case disagree, and what a rerun is worth (returned by
    ``flakiness``).

    The fields are the columns of ``to_frame()``, in this order, except the per-case data
    at the end; ``per_case()`` gives those as a table.

    Attributes
    ----------
    outcome : str or None
        The outcome variable.
    by : tuple of str
        The clusters of cases (empty: every case is its own cluster).
    method : str
        The interval method of the flaky rate (``"auto"`` resolved).
    confidence : float
        Nominal coverage.
    flaky_rate : float
        Share of cases that are flaky (some runs pass, some fail: ``0 < passes < runs``).
    low, high : float
        Its clustered interval (each case counts once; cases grouped by ``by`` when given).
    n_flaky : int
        Flaky cases.
    n_cases : int
        Cases with at least two runs.
    n_clusters : int
        The clusters they fall in.
    disagreement : float
        Mean over cases of the share of runs that disagree with the case's majority outcome
        (``min(c, n - c) / n``; 0.5 for a tie).
    runs_mean : float
        Mean runs per case.
    runs_min, runs_max : int
        Fewest and most runs of a case.
    icc : float
        The ICC of the runs within cases (one-way ANOVA): 1 when every case's runs agree (at
        temperature 0, 30 reruns are one run copied 30 times).
    icc_low, icc_high : float
        Its interval (Searle's).
    effective_runs : float
        What one case's runs are worth as independent runs:
        ``runs_mean / (1 + (runs_mean - 1) * max(icc, 0))``.
    notes : tuple of str
        Everything a reader should know.
    case_labels, case_runs, case_passes : tuple
        Each case's label, runs and passing runs: the data of ``per_case()`` (not columns
        of ``to_frame()``).
    """

    outcome: str | None = None
    by: tuple[str, ...] = ()
    method: str
    confidence: float
    flaky_rate: float
    low: float
    high: float
    n_flaky: int
    n_cases: int
    n_clusters: int
    disagreement: float
    runs_mean: float
    runs_min: int
    runs_max: int
    icc: float
    icc_low: float
    icc_high: float
    effective_runs: float
    notes: tuple[str, ...] = ()
    case_labels: tuple[Any, ...] = dataclasses.field(
        default=(), compare=False, metadata={"frame": False}
    )
    case_runs: tuple[int, ...] = dataclasses.field(
        default=(), compare=False, metadata={"frame": False}
    )
    case_passes: tuple[int, ...] = dataclasses.field(
        default=(), compare=False, metadata={"frame": False}
    )

    _html: ClassVar[tuple[tuple[str, str], ...]] = tuple(
        (f, f)
        for f in (
            "flaky_rate",
            "low",
            "high",
            "n_flaky",
            "n_cases",
            "disagreement",
            "icc",
            "effective_runs",
        )
    )

    estimate = one_number("flaky_rate", "the share of flaky cases")

    def per_case(self):
        """One row per case: ``case``, ``runs``, ``passes``, ``disagreement``, ``flaky``."""

        runs = np.asarray(self.case_runs, dtype=float)
        passes = np.asarray(self.case_passes, dtype=float)
        return pd.DataFrame(
            {
                "case": list(self.case_labels),
                "runs": np.asarray(self.case_runs, dtype=int),
                "passes": np.asarray(self.case_passes, dtype=int),
                "disagreement": np.minimum(passes, runs - passes) / runs,
                "flaky": (passes > 0) & (passes < runs),
            }
        )

    def _lines(self) -> list[str]:
        return [
            f"Flakiness({label_of(self.outcome, self.by)}; method={self.method})",
            f"  flaky cases {self.n_flaky:,} of {self.n_cases:,}: "
            f"{fmt.number(self.flaky_rate)}  {self.confidence:.0%} CI "
            f"{fmt.interval(self.low, self.high)}",
            f"  runs disagreeing with their case's majority: {fmt.number(self.disagreement)}",
            f"  icc across reruns {fmt.number(self.icc)} "
            f"{fmt.interval(self.icc_low, self.icc_high)}"
            f": {fmt.size(self.runs_mean)} runs per case are worth "
            f"{fmt.number(self.effective_runs)} independent runs",
        ]


def to_case_rerun(
    data: Any,
    *,
    case: Hashable,
    rerun: Hashable | None = None,
    outcome: Hashable | Sequence[Hashable],
    dims: Sequence[Hashable] = (),
    coords: Literal["auto"] | Sequence[Hashable] = "auto",
) -> Any:
    """Long results (one row per run) as an xarray Dataset with dims ``(*dims, case, rerun)``.

    The ``case`` and ``rerun`` coordinates carry the original column names in their
    ``column`` attribute. Booleans become 0.0/1.0, so that a cell with no run can hold NaN.

    Parameters
    ----------
    data : pandas.DataFrame
        One row per run of a case.
    case : column label
        The test case; its labels become the ``case`` coordinate (sorted).
    rerun : column label, optional
        The run id, shared across cases (e.g. trial 0..k-1); its labels become the ``rerun``
        coordinate. ``None`` numbers the runs of each case 0, 1, ... in row order. Labels
        that are not shared across cases (timestamps) would make a mostly empty grid and
        raise ``AlignmentError``.
    outcome : column label or list of labels
        The variables (0/1 or scores). A combination of case and rerun with no row is NaN,
        which means "no run" (cases may have unequal rerun counts). When some row's outcome
        is missing, the Dataset also holds a boolean variable ``ran`` (``ran_1``, ... if the
        name is taken) that is True where a row existed, named in each outcome's ``ran``
        attribute: a missing outcome is then told apart from no run, as in the frame.
    dims : column labels
        Further columns that become dims, e.g. ``["model"]`` (a single label, or None for
        none, is accepted too). A dim column cannot be the case, rerun or outcome column, nor
        be named ``"case"`` or ``"rerun"``.
    coords : "auto", a column label or a list of column labels
        Columns to attach as coordinates along ``case`` (e.g. ``user_id``, to cluster by it
        later). ``"auto"`` attaches every other column that is constant within each case
        (and holds labels: a column of lists is left out); a listed column that varies
        within a case raises ``AlignmentError``.

    Returns
    -------
    xarray.Dataset
        The outcome variables and the coordinates are named by their column labels; the
        frame is not changed.

    Raises
    ------
    AlignmentError
        Two rows with the same (dims, case, rerun), missing ids, rerun labels not shared
        across cases, or a listed coordinate that varies within a case.
    ColumnNotFoundError
        A named column is not in the frame.
    InvalidOptionError
        One column in two roles (``case`` and ``rerun``, the outcome and an id, a dim twice),
        or a name that would collide with the dims of the Dataset.
    InvalidInputError
        ``data`` is not a pandas DataFrame, or a Series or list is given where a column label
        is expected.
    InvalidDataError
        An id column (or a listed coordinate) whose values are not labels (lists, dicts).
    InvalidOutcomeError
        An outcome column that is not numeric, or holds infinite values.
    EmptyDataError
        The frame has no rows.

    Examples
    --------
    >>> import pandas as pd, clusterstats
    >>> df = pd.DataFrame({"task": [1, 1, 2, 2, 2], "trial": [0, 1, 0, 1, 2],
    ...                    "user": ["u1", "u1", "u2", "u2", "u2"], "reward": [1, 0, 1, 1, 1]})
    >>> ds = clusterstats.to_case_rerun(df, case="task", rerun="trial", outcome="reward")
    >>> dict(ds.sizes), ds["user"].values.tolist(), ds["case"].attrs["column"]
    ({'case': 2, 'rerun': 3}, ['u1', 'u2'], 'task')

    Task 1 has no trial 2: that cell is NaN, "no run". A missing outcome adds ``ran``:

    >>> df.loc[1, "reward"] = float("nan")  # trial 1 of task 1 ran but was not graded
    >>> ds = clusterstats.to_case_rerun(df, case="task", rerun="trial", outcome="reward")
    >>> ds["reward"].attrs["ran"], ds["ran"].values.tolist()
    ('ran', [[True, True, False], [True, True, True]])
    """
    return from_frame(data, case=case, rerun=rerun, outcome=outcome, dims=dims, coords=coords)


# -- builders --------------------------------------------------------------------------------


def _grouped(design: CaseDesign, results: list[Any]) -> Any:
    if design.over is None:
        return results[0]
    return GroupedResults(
        over=design.over,
        groups=tuple(label for label, _ in design.groups()),
        results=tuple(results),
    )


def _where(design: CaseDesign, label: Any) -> str:
    """`` for model='b'`` (or nothing without extra dims): the group, for messages."""
    if not design.extra_dims:
        return ""
    values = label if len(design.extra_dims) > 1 else (label,)
    return " for " + ", ".join(
        f"{dim}={value!r}" for dim, value in zip(design.extra_dims, values, strict=True)
    )


def _examples(labels: Callable[[], np.ndarray], mask: np.ndarray) -> list[Any]:
    return np.asarray(labels())[mask][:3].tolist()


def _check_design(statistic: str, design: CaseDesign) -> None:
    """Refuse what no group can be computed on: an empty extra dim, infinite values, an
    outcome that is not 0/1; each message names the outcome, the cases and the group."""
    for dim, labels in zip(design.extra_dims, design.extra_labels, strict=True):
        if not labels:
            raise EmptyDataError(
                f"the {dim!r} dim of {design.outcome!r} is empty: there is no group to compute "
                f"{statistic} for"
            )
    every = design.moments
    if np.isfinite(every[..., 1]).all() and not every[..., 3].any():
        return
    for label, moments in design.groups():
        ran = moments[:, 0] > 0
        infinite = ran & ~np.isfinite(moments[:, 1])
        if infinite.any():
            raise InvalidOutcomeError(
                f"outcome {design.outcome!r} has infinite values in "
                f"{fmt.count(int(infinite.sum()), 'case')}{_where(design, label)} (e.g. "
                f"{_examples(design.case_labels_of, infinite)}); {statistic} needs 0/1 per run"
            )
        other = ran & (moments[:, 3] > 0)
        if other.any():
            raise InvalidOutcomeError(
                f"{statistic} needs a binary outcome (0/1 per run); {design.outcome!r} has "
                f"other values in {fmt.count(int(other.sum()), 'case')}{_where(design, label)} "
                f"(e.g. {_examples(design.case_labels_of, other)})"
            )


def _present(
    design: CaseDesign, moments: np.ndarray
) -> tuple[np.ndarray, Callable[[], np.ndarray], np.ndarray | None]:
    """The moments, a function giving the labels, and the cluster codes of the cases that
    have a run in this group (a case with no run at all, e.g. absent for one model, is not a
    case of the group). The labels are read only if a message or a table needs them."""
    has = moments[:, 0] > 0
    if has.all():
        return moments, design.case_labels_of, design.codes
    codes = None if design.codes is None else design.codes[has]
    return moments[has], lambda: design.case_labels_of()[has], codes


def _require_clusters(
    statistic: str, design: CaseDesign, label: Any, n_cases: int, n_clusters: int, what: str
) -> None:
    """At least two cases, in at least two clusters, for a between-cluster variance."""
    where = _where(design, label)
    if n_cases < 2:
        raise EmptyDataError(
            f"{statistic} needs at least two cases {what}; {design.outcome!r} has {n_cases}{where}"
        )
    if n_clusters < 2:
        by = design.by[0] if len(design.by) == 1 else list(design.by)
        raise TooFewClustersError(
            f"the {n_cases} cases {what}{where} all fall in one cluster of by={by!r}: at least "
            "2 clusters are needed to estimate the between-cluster variance"
        )


def _missing_note(moments: np.ndarray) -> str | None:
    """What became of runs whose outcome is missing (they count as no run), if any."""
    missing = moments[:, 4]
    n_missing = int(missing.sum())
    if not n_missing:
        return None
    return (
        f"{fmt.count(n_missing, 'run')} with a missing outcome (in "
        f"{fmt.count(int((missing > 0).sum()), 'case')}) {'was' if n_missing == 1 else 'were'} "
        "left out, as if it had not run (missing_report() shows where)"
    )


def _lead_notes(notes: list[str], moments: np.ndarray, n_short: int, short: str) -> None:
    """Put first in ``notes`` what was left out: the runs with a missing outcome, and the
    ``n_short`` cases with ``short`` (e.g. "fewer than 2 runs")."""
    if n_short:
        notes.insert(
            0,
            f"{fmt.count(n_short, 'case')} with {short} "
            f"{'was' if n_short == 1 else 'were'} left out",
        )
    missing_note = _missing_note(moments)
    if missing_note:
        notes.insert(0, missing_note)


def _is_one_k(k: Any) -> bool:
    return not isinstance(k, (list, tuple, range, np.ndarray))


def _ks(k: Any) -> list[Any]:
    """The values of ``k``: itself, or the distinct values of a list of them (each is
    checked by ``pass_options``)."""
    if _is_one_k(k):
        return [k]
    values = list(k)
    if not values or len({repr(v) for v in values}) != len(values):
        raise InvalidOptionError(
            f"k takes a positive integer or a list of distinct ones, got {values!r}"
        )
    return values


def _pass_statistic(
    statistic: str,
    data: Any,
    outcome: Hashable,
    k: Any,
    columns: dict[str, Any],
    options: dict[str, Any],
) -> PassAtK | GroupedResults[PassAtK]:
    """The front of ``pass_at_k`` and ``pass_hat_k``: the options checked for each ``k``,
    the labels checked, the data reduced once, the statistic built for each ``k``."""
    per_k = [pass_options(k=each, **options) for each in _ks(k)]
    design = _case_design(data, outcome, columns)
    return build_over_k(statistic, design, per_k, several=not _is_one_k(k))


@policy.warns_once
def build_over_k(
    statistic: str, design: CaseDesign, options: Sequence[PassOptions], *, several: bool
) -> PassAtK | GroupedResults[PassAtK]:
    """pass@k or pass^k for one ``k``, or (``several``) for each ``k`` of ``options``: one
    result per k, within each group of the design, as a ``GroupedResults`` whose last dim is
    ``k`` (the table of a benchmark's pass^1 ... pass^k in one call)."""
    built = [build_pass_statistic(statistic, design, o) for o in options]
    if not several:
        return built[0]
    ks = tuple(o.k for o in options)
    if not isinstance(built[0], GroupedResults):
        return GroupedResults(over="k", groups=ks, results=tuple(built))
    first = built[0]
    keys, results = [], []
    for position, key in enumerate(first._keys()):
        for k, grouped in zip(ks, built, strict=True):
            keys.append((*key, k))
            results.append(grouped.results[position])
    return GroupedResults(over=(*first.dims, "k"), groups=tuple(keys), results=tuple(results))


def build_pass_statistic(
    statistic: str, design: CaseDesign, options: PassOptions
) -> PassAtK | GroupedResults[PassAtK]:
    """pass@k or pass^k on a design of per-case moments."""
    _check_design(statistic, design)
    per_case = _pass_at_k_per_case if statistic == "pass@k" else _pass_hat_k_per_case
    k = options.k

    def build(label: Any, all_moments: np.ndarray) -> PassAtK:
        moments, labels, codes = _present(design, all_moments)
        where = _where(design, label)
        if moments.shape[0] == 0:
            raise EmptyDataError(f"no case has a run of {design.outcome!r}{where}")
        runs, passes = moments[:, 0], moments[:, 1]
        short = runs < k
        if short.all():
            raise EmptyDataError(
                f"no case has k={k} runs{where} (the most is {int(runs.max())}); lower k"
            )
        if short.any() and options.fewer_runs == "raise":
            n_short = int(short.sum())
            lost = int((moments[short, 4] > 0).sum())
            because = f"; {lost} of them lost runs to missing outcomes" if lost else ""
            raise InvalidOptionError(
                f"{fmt.count(n_short, 'case')} {'has' if n_short == 1 else 'have'} fewer than "
                f"k={k} runs{where} (e.g. {labels()[short][:3].tolist()}, with "
                f"{sorted(set(runs[short].astype(int).tolist()))[:5]} runs{because}); pass "
                "fewer_runs='drop' to leave them out (they are counted in the result)"
            )
        keep = ~short
        values = per_case(runs[keep], passes[keep], k)
        sums = cluster_sums(values, None if codes is None else codes[keep])
        _require_clusters(
            statistic, design, label, int(keep.sum()), sums.n_clusters, f"with k={k} runs"
        )
        # Per-case pass probabilities are proportions: when every case has the same one
        # (each passes 1 of 2 runs), the between-case variance is zero and the interval
        # falls back to Clopper-Pearson on the cases, as cluster_ci does for 0/1 runs.
        is_binary = bool(np.all((values == 0.0) | (values == 1.0))) or bool(np.ptp(values) == 0)
        s = summarize_interval(
            sums,
            estimand="pooled",
            method=options.method,
            confidence=options.confidence,
            is_binary=is_binary,
            n_resamples=options.n_resamples,
            rng=options.rng.generator(),
            outcome_range=(0.0, 1.0),
        )
        notes = [n for n in s.notes if "estimand" not in n]
        low, high = max(s.low, 0.0), min(s.high, 1.0)
        if (low, high) != (s.low, s.high):
            notes.append("the interval was clipped to [0, 1]")
        _lead_notes(notes, all_moments, int(short.sum()), f"fewer than {k} runs")
        return PassAtK(
            statistic=statistic,
            k=k,
            estimate=s.estimate,
            se=s.se,
            low=low,
            high=high,
            confidence=options.confidence,
            method=s.method,
            estimand="case_mean",
            df=s.df,
            n_cases=int(keep.sum()),
            n_clusters=sums.n_clusters,
            runs_min=int(runs[keep].min()),
            runs_max=int(runs[keep].max()),
            n_excluded=int(short.sum()),
            n_resamples=s.n_resamples,
            outcome=design.outcome,
            by=design.by,
            notes=tuple(notes),
        )

    return _grouped(design, [build(label, m) for label, m in design.groups()])


@policy.warns_once
def build_flakiness(
    design: CaseDesign, options: PassOptions
) -> Flakiness | GroupedResults[Flakiness]:
    """``flakiness`` on a design of per-case moments."""
    _check_design("flakiness", design)

    def build(label: Any, all_moments: np.ndarray) -> Flakiness:
        moments, labels, codes = _present(design, all_moments)
        runs, passes = moments[:, 0], moments[:, 1]
        keep = runs >= 2
        codes = None if codes is None else codes[keep]
        n_clusters = int(keep.sum() if codes is None else np.unique(codes).size)
        _require_clusters(
            "flakiness", design, label, int(keep.sum()), n_clusters, "with two or more runs"
        )
        runs_k, passes_k = runs[keep], passes[keep]
        summary = flaky_cases(runs_k, passes_k)
        s = summarize_interval(
            cluster_sums(summary.flaky.astype(np.float64), codes),
            estimand="pooled",
            method=options.method,
            confidence=options.confidence,
            is_binary=True,
        )
        icc_s = summarize_icc(
            case_sums(runs_k, passes_k, moments[keep, 2]), confidence=options.confidence
        )
        runs_mean = float(runs_k.mean())
        notes = [n for n in s.notes if "estimand" not in n] + list(icc_s.notes)
        _lead_notes(notes, all_moments, int((~keep).sum()), "fewer than two runs")
        return Flakiness(
            flaky_rate=s.estimate,
            low=s.low,
            high=s.high,
            confidence=options.confidence,
            method=s.method,
            n_flaky=int(summary.flaky.sum()),
            n_cases=int(keep.sum()),
            n_clusters=n_clusters,
            disagreement=float(summary.disagreement.mean()),
            runs_mean=runs_mean,
            runs_min=int(runs_k.min()),
            runs_max=int(runs_k.max()),
            icc=icc_s.icc,
            icc_low=icc_s.low,
            icc_high=icc_s.high,
            effective_runs=effective_runs(runs_mean, icc_s.icc),
            outcome=design.outcome,
            by=design.by,
            notes=tuple(dict.fromkeys(notes)),
            case_labels=tuple(labels()[keep].tolist()),
            case_runs=tuple(runs_k.astype(int).tolist()),
            case_passes=tuple(passes_k.astype(int).tolist()),
        )

    return _grouped(design, [build(label, m) for label, m in design.groups()])


def _case_design(data: Any, outcome: Any, roles: dict[str, Any]) -> CaseDesign:
    """The data of a rerun statistic reduced once, its names (``roles``: by, case, rerun,
    over) checked first."""
    _check_labels(outcome, **{role: roles[role] for role in ("case", "rerun", "over")})
    return adapters.case_design(data, adapters.columns_of(data, outcome, **roles))


def _check_labels(outcome: Any, *, case: Any, rerun: Any, over: Any) -> None:
    """The names given to a rerun statistic: one label each (``by`` and ``over`` may list
    several, which the adapters check), and distinct case and rerun."""
    overs = list(over) if isinstance(over, (list, tuple)) else [over]
    named = [("outcome", outcome), ("case", case), ("rerun", rerun)]
    for role, value in named + [("over", o) for o in overs]:
        try:
            hash(value)
        except TypeError:
            name = getattr(value, "name", None)
            hint = f" (pass its name, {name!r})" if name is not None else ""
            raise InvalidInputError(
                f"{role}= takes one variable or column label, not a {type(value).__name__}{hint}"
            ) from None
    if rerun is not None and rerun == case:
        raise InvalidOptionError(
            f"case= and rerun= both name {case!r}; rerun= names the runs of each case (a dim of "
            "a Dataset, or for a frame a column, or None to number the rows of each case)"
        )


# -- the public functions --------------------------------------------------------------------


def pass_at_k(
    data: Any,
    outcome: Hashable,
    *,
    k: int,
    by: Hashable | None = None,
    case: Hashable = "case",
    rerun: Hashable | None = "rerun",
    over: Hashable | Sequence[Hashable] | None = None,
    method: str = "auto",
    confidence: float = 0.95,
    fewer_runs: Literal["raise", "drop"] = "raise",
    n_resamples: int = 9999,
    rng: int | np.random.Generator | None = None,
) -> PassAtK | GroupedResults[PassAtK]:
    """pass@k: the chance that at least one of ``k`` runs of a case passes, averaged over
    cases, with a clustered interval.

    Per case, the unbiased estimator ``1 - C(n-c, k) / C(n, k)`` of Chen et al. (2021) from
    its ``n`` runs with ``c`` passes; the mean over cases (each case counts once, estimand
    ``"case_mean"``); an interval clustered by case (or by ``by``, a coordinate along
    ``case``): CR2 by default, or a bootstrap of whole clusters of cases. With cases as
    clusters the CR2 standard error is ``sd / sqrt(P)`` over the ``P`` cases, on ``P - 1``
    df. Runs within a case are never resampled (that would change ``c`` and bias the
    estimator). The interval is clipped to [0, 1] (with a note) when a t interval would
    cross a bound.

    Parameters
    ----------
    data : xarray.Dataset with dims (case, rerun), or a long DataFrame (pandas or dask)
        Dataset: NaN is "no run". Frame: one row per run, laid out with ``to_case_rerun``.
    outcome : variable or column label
        0/1 per run.
    k : int or list of int
        Runs per draw, at least 1. A list of distinct values gives one result per value,
        as a ``GroupedResults`` whose last dim is ``k`` (within each group of ``over`` or of
        a Dataset's extra dims): a benchmark's table of k = 1, 2, ... in one call.
    by : coordinate along case (column of a frame), optional
        Clusters of cases (e.g. ``user_id``; for a frame, a column constant within each
        case); default: every case is its own cluster.
    case, rerun : dim names of a Dataset, or columns of a frame
        ``rerun=None`` (frames only) numbers the runs of each case in row order.
    over : column label or list of labels, optional
        For frames: one result per value of a column (e.g. ``"model"``), in sorted label
        order, or per combination of several columns; a Dataset's extra dims play this part.
    method : str
        One of ``"auto"``, ``"cr2"``, ``"cr1"``, ``"naive"``, ``"bootstrap"``,
        ``"bootstrap_bca"``, ``"bootstrap_percentile"`` and ``"bootstrap_t"``.
        ``"auto"`` follows ``cluster_ci``: the studentized bootstrap on per-case pass
        probabilities (CR2 above 2,000 clusters), and the binary rule when every per-case
        value is 0 or 1 (e.g. pass^k with ``k`` equal to the runs).
    confidence : float
        Nominal coverage.
    fewer_runs : {"raise", "drop"}
        Cases with fewer than ``k`` runs: ``InvalidOptionError`` with the count and examples
        (default), or left out, counted in ``n_excluded``, with a note.
    n_resamples : int
        Bootstrap replicates.
    rng : int, numpy.random.Generator or None
        Seed or generator for the bootstrap (None: a fixed default seed, as in ``cluster_ci``).

    Returns
    -------
    PassAtK, or GroupedResults of PassAtK over extra dims or ``over`` (and ``k`` for a list).

    Raises
    ------
    InvalidOutcomeError
        The outcome is not binary, or holds infinite values (the message names the cases).
    DimensionError
        A Dataset variable lacks the case or rerun dim, or ``by`` is not a coordinate along
        the case dim.
    ColumnNotFoundError
        A named column (or variable) is not in the data.
    InvalidOptionError
        An invalid option, ``case`` and ``rerun`` naming the same dim or column, or cases
        with fewer than ``k`` runs under ``fewer_runs="raise"``.
    InvalidInputError
        A list or a Series where one outcome (or case, rerun, over) label is expected.
    EmptyDataError
        No case with ``k`` runs, fewer than two, or an empty extra dim (the message names
        the group).
    TooFewClustersError
        The cases with ``k`` runs all fall in one cluster of ``by``.
    InvalidClusterError
        Missing labels in ``by``.

    Notes
    -----
    A run whose outcome is missing (NaN where the Dataset's ``ran`` variable, or the frame's
    row, says the run happened) counts as no run: a case's estimator uses its graded runs
    (``missing_report`` shows where outcomes are missing). A case with no run in a group
    (e.g. absent for one model) is not a case of that group.

    Examples
    --------
    >>> import pandas as pd, clusterstats
    >>> runs = [1, 0, 0, 0,  1, 1, 0, 0,  0, 0, 0, 0,  1, 1, 1, 1,  0, 1, 0, 1,  1, 0, 1, 1]
    >>> df = pd.DataFrame({"case": [c for c in range(24) for _ in range(4)],
    ...                    "passed": runs * 4})  # 24 cases of 4 runs
    >>> res = clusterstats.pass_at_k(df, "passed", k=2, rerun=None)
    >>> res.name, round(res.estimate, 4), res.n_cases
    ('pass@2', 0.6944, 24)
    """
    options = dict(
        method=method,
        confidence=confidence,
        fewer_runs=fewer_runs,
        n_resamples=n_resamples,
        rng=rng,
    )
    columns = {"by": by, "case": case, "rerun": rerun, "over": over}
    return _pass_statistic("pass@k", data, outcome, k, columns, options)


def pass_hat_k(
    data: Any,
    outcome: Hashable,
    *,
    k: int,
    by: Hashable | None = None,
    case: Hashable = "case",
    rerun: Hashable | None = "rerun",
    over: Hashable | Sequence[Hashable] | None = None,
    method: str = "auto",
    confidence: float = 0.95,
    fewer_runs: Literal["raise", "drop"] = "raise",
    n_resamples: int = 9999,
    rng: int | np.random.Generator | None = None,
) -> PassAtK | GroupedResults[PassAtK]:
    """pass^k: the chance that all ``k`` runs of a case pass (τ-bench's reliability metric),
    averaged over cases, with a clustered interval.

    Per case the unbiased ``C(c, k) / C(n, k)`` (Yao et al. 2024), from its ``n`` runs with
    ``c`` passes; everything else (the interval, the options, the errors) as ``pass_at_k``.

    Parameters
    ----------
    data : xarray.Dataset with dims (case, rerun), or a long DataFrame (pandas or dask)
        Dataset: NaN is "no run". Frame: one row per run.
    outcome : variable or column label
        0/1 per run.
    k : int or list of int
        Runs per draw, at least 1. A list of distinct values gives one result per value,
        as a ``GroupedResults`` whose last dim is ``k`` (within each group of ``over`` or of
        a Dataset's extra dims): a benchmark's table of k = 1, 2, ... in one call.
    by : coordinate along case (column of a frame), optional
        Clusters of cases; default: every case is its own cluster.
    case, rerun : dim names of a Dataset, or columns of a frame
        ``rerun=None`` (frames only) numbers the runs of each case in row order.
    over : column label or list of labels, optional
        For frames: one result per value of a column, or per combination of several.
    method : str
        As in ``pass_at_k``: ``"auto"``, ``"cr2"``, ``"cr1"``, ``"naive"``, ``"bootstrap"``,
        ``"bootstrap_bca"``, ``"bootstrap_percentile"`` or ``"bootstrap_t"``.
    confidence : float
        Nominal coverage.
    fewer_runs : {"raise", "drop"}
        Cases with fewer than ``k`` runs: an error, or left out and counted.
    n_resamples : int
        Bootstrap replicates.
    rng : int, numpy.random.Generator or None
        Seed or generator for the bootstrap (None: a fixed default seed, as in ``cluster_ci``).

    Returns
    -------
    PassAtK, or GroupedResults of PassAtK over extra dims or ``over`` (and ``k`` for a list).

    Raises
    ------
    InvalidOutcomeError, DimensionError, ColumnNotFoundError, InvalidOptionError
        As in ``pass_at_k``.
    InvalidInputError, EmptyDataError, TooFewClustersError, InvalidClusterError
        As in ``pass_at_k``.

    Examples
    --------
    >>> import pandas as pd, clusterstats
    >>> runs = [1, 0, 0, 0,  1, 1, 0, 0,  0, 0, 0, 0,  1, 1, 1, 1,  0, 1, 0, 1,  1, 0, 1, 1]
    >>> df = pd.DataFrame({"case": [c for c in range(24) for _ in range(4)],
    ...                    "passed": runs * 4})  # 24 cases of 4 runs
    >>> res = clusterstats.pass_hat_k(df, "passed", k=2, rerun=None)
    >>> res.name, round(res.estimate, 4)
    ('pass^2', 0.3056)

    On the bundled τ-bench airline runs it gives the published pass^1..4:

    >>> tau = clusterstats.datasets.load("tau_bench_airline")
    >>> ds = clusterstats.to_case_rerun(tau, case="task_id", rerun="trial", outcome="reward")
    >>> [round(clusterstats.pass_hat_k(ds, "reward", k=k).estimate, 3) for k in (1, 2, 3, 4)]
    [0.42, 0.273, 0.22, 0.2]

    The same table in one call, one row per k, with its intervals:

    >>> table = clusterstats.pass_hat_k(ds, "reward", k=[1, 2, 3, 4]).to_frame()
    >>> table[["k", "estimate"]].round(3).to_dict("list")
    {'k': [1, 2, 3, 4], 'estimate': [0.42, 0.273, 0.22, 0.2]}
    """
    options = dict(
        method=method,
        confidence=confidence,
        fewer_runs=fewer_runs,
        n_resamples=n_resamples,
        rng=rng,
    )
    columns = {"by": by, "case": case, "rerun": rerun, "over": over}
    return _pass_statistic("pass^k", data, outcome, k, columns, options)


def flakiness(
    data: Any,
    outcome: Hashable,
    *,
    by: Hashable | None = None,
    case: Hashable = "case",
    rerun: Hashable | None = "rerun",
    over: Hashable | Sequence[Hashable] | None = None,
    method: str = "auto",
    confidence: float = 0.95,
) -> Flakiness | GroupedResults[Flakiness]:
    """How often reruns of a case disagree, and what a rerun is worth.

    Per case (with at least two runs): the share of runs that disagree with the case's
    majority, and whether it is flaky (``0 < passes < runs``). Overall: the flaky-case rate
    with its clustered interval (each case counts once; the ``cluster_ci`` methods for a
    binary outcome, clustered by ``by`` when given), and the ICC of the runs within cases,
    which says what the reruns of a case are worth as independent runs
    (``effective_runs``). ``per_case()`` on the result gives the table.

    Cases with a single run cannot show flakiness and are left out (with a note).

    Parameters
    ----------
    data : xarray.Dataset with dims (case, rerun), or a long DataFrame (pandas or dask)
        Dataset: NaN is "no run". Frame: one row per run.
    outcome : variable or column label
        0/1 per run.
    by : coordinate along case (column of a frame), optional
        Clusters of cases; default: every case is its own cluster.
    case, rerun : dim names of a Dataset, or columns of a frame
        ``rerun=None`` (frames only) numbers the runs of each case in row order.
    over : column label or list of labels, optional
        For frames: one result per value of a column, or per combination of several.
    method : str
        An interval method of ``cluster_ci`` for the flaky rate (a binary mean over cases).
    confidence : float
        Nominal coverage.

    Returns
    -------
    Flakiness, or GroupedResults of Flakiness.

    Raises
    ------
    InvalidOutcomeError
        The outcome is not binary, or holds infinite values.
    EmptyDataError
        Fewer than two cases with two or more runs (in some group), or an empty extra dim.
    TooFewClustersError
        Those cases all fall in one cluster of ``by``.
    DimensionError, ColumnNotFoundError, InvalidOptionError, InvalidInputError
        As in ``pass_at_k``.

    Examples
    --------
    >>> import pandas as pd, clusterstats
    >>> runs = [1, 0, 0, 0,  1, 1, 0, 0,  0, 0, 0, 0,  1, 1, 1, 1,  0, 1, 0, 1,  1, 0, 1, 1]
    >>> df = pd.DataFrame({"case": [c for c in range(24) for _ in range(4)],
    ...                    "passed": runs * 4})  # 24 cases of 4 runs
    >>> res = clusterstats.flakiness(df, "passed", rerun=None)
    >>> res.n_flaky, res.n_cases, round(res.disagreement, 4)
    (16, 24, 0.25)
    """
    options = flakiness_options(method=method, confidence=confidence)
    columns = {"by": by, "case": case, "rerun": rerun, "over": over}
    return build_flakiness(_case_design(data, outcome, columns), options)
