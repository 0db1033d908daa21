"""Result types: one frozen dataclass per concept, the same from every entry point.

Values are stored unrounded; rounding happens only when a result is displayed. Every result
has a readable ``repr``, an HTML table for Jupyter (``_repr_html_``), ``to_dict()`` and a tidy
one-row ``to_frame()`` whose columns never depend on the options used.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar, Generic, TypeVar

from clusterstats import _display as fmt

__all__ = [
    "ICC",
    "ClusterCI",
    "DesignEffect",
    "Flakiness",
    "GroupedResults",
    "MissingReport",
    "PassAtK",
    "Plan",
    "Report",
]


def _label(outcome: str | None, by: tuple[str, ...]) -> str:
    what = outcome if outcome is not None else "outcome"
    return f"{what} by {' + '.join(by)}" if by else what


class _Result:
    """Shared behaviour: dict / frame conversion and the notes footer."""

    #: Columns of ``to_frame()``, in order (also the keys of ``to_dict()``).
    columns: ClassVar[tuple[str, ...]]

    def to_dict(self) -> dict[str, Any]:
        """The result as a flat dict of plain Python values (``by`` and ``notes`` as tuples)."""
        return {f.name: getattr(self, f.name) for f in dataclasses.fields(self)}  # type: ignore[arg-type]

    def _row(self) -> dict[str, Any]:
        row = self.to_dict()
        row["by"] = ", ".join(row["by"])
        row["notes"] = "; ".join(row["notes"])
        return {c: row[c] for c in self.columns}

    def to_frame(self):
        """A one-row :class:`pandas.DataFrame` with fixed snake_case columns."""
        import pandas as pd

        return pd.DataFrame([self._row()], columns=list(self.columns))

    def _notes_text(self) -> str:
        return "".join(f"\n  note: {n}" for n in self.notes)  # type: ignore[attr-defined]


@dataclass(frozen=True, kw_only=True, repr=False)
class ClusterCI(_Result):
    """A confidence interval for the mean of clustered outcomes.

    Attributes
    ----------
    estimate, se, low, high : float
        The point estimate, its standard error and the interval. ``se`` is NaN when the
        interval comes from a fallback that has no standard error (degenerate data).
    confidence : float
        Nominal coverage, e.g. 0.95.
    method : str
        The interval method actually used (``"auto"`` is resolved, e.g. ``"korn_graubard"``).
    estimand : {"pooled", "cluster_mean"}
        ``"pooled"``: the share over all rows (large clusters weigh more);
        ``"cluster_mean"``: the mean of the cluster means (each cluster counts once).
    df : float
        Degrees of freedom of the reference t distribution (NaN for bootstrap/fallbacks).
    n_rows, n_clusters : int
        Rows and clusters used (after dropping missing outcomes).
    cluster_size_mean, cluster_size_min, cluster_size_max : float
        Summary of the rows per cluster.
    icc : float
        One-way ANOVA intraclass correlation (raw; can be negative; NaN if undefined).
    design_effect, n_eff : float
        Empirical design effect (clustered variance ÷ iid variance, as R survey's
        ``deff="replace"``) and the effective number of independent rows ``n_rows / deff``.
    naive_low, naive_high : float
        The interval that treats rows as independent (Wilson for binary outcomes, t otherwise).
    widening : float
        Clustered width ÷ naive width.
    n_missing, n_missing_clusters : int
        Rows with a missing outcome, and the clusters they belong to.
    n_resamples : int or None
        Bootstrap replicates, for bootstrap methods.
    outcome : str or None; by : tuple of str
        What was analysed.
    notes : tuple of str
        Everything a reader should know: fallbacks, few clusters, estimand differences.
    """

    estimate: float
    se: float
    low: float
    high: float
    confidence: float
    method: str
    estimand: str
    df: float
    n_rows: int
    n_clusters: int
    cluster_size_mean: float
    cluster_size_min: int
    cluster_size_max: int
    icc: float
    design_effect: float
    n_eff: float
    naive_low: float
    naive_high: float
    widening: float
    n_missing: int = 0
    n_missing_clusters: int = 0
    n_resamples: int | None = None
    outcome: str | None = None
    by: tuple[str, ...] = ()
    notes: tuple[str, ...] = ()

    columns: ClassVar[tuple[str, ...]] = (
        "outcome",
        "by",
        "estimand",
        "method",
        "confidence",
        "estimate",
        "se",
        "low",
        "high",
        "df",
        "n_rows",
        "n_clusters",
        "cluster_size_mean",
        "cluster_size_min",
        "cluster_size_max",
        "icc",
        "design_effect",
        "n_eff",
        "naive_low",
        "naive_high",
        "widening",
        "n_missing",
        "n_missing_clusters",
        "n_resamples",
        "notes",
    )

    def __repr__(self) -> str:
        pct = f"{self.confidence:.0%}"
        if self.cluster_size_min == self.cluster_size_max:
            sizes = f"{fmt.count(self.cluster_size_min, 'row')} each"
        else:
            sizes = (
                f"size {self.cluster_size_min:,}–{self.cluster_size_max:,}, "
                f"mean {fmt.number(self.cluster_size_mean, 3)}"
            )
        missing = (
            f"; {fmt.count(self.n_missing, 'row')} had a missing outcome" if self.n_missing else ""
        )
        return (
            f"ClusterCI({_label(self.outcome, self.by)}; estimand={self.estimand}, "
            f"method={self.method})\n"
            f"  estimate {fmt.number(self.estimate)}  {pct} CI "
            f"{fmt.interval(self.low, self.high)}  se {fmt.number(self.se)}\n"
            f"  naive (iid rows) CI {fmt.interval(self.naive_low, self.naive_high)}  "
            f"widening ×{fmt.number(self.widening, 3)}\n"
            f"  {fmt.count(self.n_rows, 'row')} in {fmt.count(self.n_clusters, 'cluster')} "
            f"({sizes}){missing}\n"
            f"  ICC {fmt.number(self.icc, 3)}  design effect "
            f"{fmt.number(self.design_effect, 3)}  effective n {fmt.number(self.n_eff, 4)}"
            + self._notes_text()
        )

    def _repr_html_(self) -> str:
        return _grouped_html([self], None, ())

    @property
    def interval(self) -> tuple[float, float]:
        """``(low, high)``."""
        return (self.low, self.high)

    def plot(self, *, ax: Any = None) -> Any:
        """Forest plot of the clustered interval beside the naive one (needs matplotlib).
        Returns the matplotlib Axes."""
        from clusterstats._plotting import forest

        return forest(
            [_label(self.outcome, self.by)],
            [self.estimate],
            [self.low],
            [self.high],
            [self.naive_low],
            [self.naive_high],
            title=f"{self.confidence:.0%} CI, {self.method}",
            ax=ax,
        )


_CI_HTML_HEADER = (
    "estimate",
    "low",
    "high",
    "naive low",
    "naive high",
    "widening",
    "ICC",
    "design effect",
    "n_eff",
    "rows",
    "clusters",
)


def _ci_html_row(r: ClusterCI) -> list[object]:
    return [
        r.estimate,
        r.low,
        r.high,
        r.naive_low,
        r.naive_high,
        r.widening,
        r.icc,
        r.design_effect,
        r.n_eff,
        r.n_rows,
        r.n_clusters,
    ]


def _grouped_html(results: Sequence[ClusterCI], over: str | None, groups: Sequence[object]) -> str:
    first = results[0]
    caption = (
        f"{_label(first.outcome, first.by)} — {first.confidence:.0%} CI, "
        f"estimand {first.estimand}, method {first.method}"
    )
    header = ([over] if over else []) + list(_CI_HTML_HEADER)
    labelled = zip(groups or [None], results, strict=True)
    rows = [([g] if over else []) + _ci_html_row(r) for g, r in labelled]
    notes = [n for r in results for n in r.notes]
    return fmt.html_table(header, rows, caption, list(dict.fromkeys(notes)))


@dataclass(frozen=True, kw_only=True, repr=False)
class ICC(_Result):
    """One-way ANOVA intraclass correlation with its confidence interval.

    Attributes
    ----------
    icc : float
        The raw estimate ``(MSB - MSW) / (MSB + (n0 - 1) MSW)``; it can be negative.
    icc_truncated : float
        ``max(icc, 0)``: the value design effects use.
    low, high, confidence : float
        Interval from the F ratio: Searle's exact interval for balanced clusters
        (``"searle_f"``), the same formula with ``n0`` for unbalanced ones (``"searle_f_n0"``,
        as R's ``ICC::ICCest``); it always contains the estimate.
    n0 : float
        The ANOVA "average" cluster size ``(N - sum n^2 / N) / (G - 1)``.
    msb, msw, var_between, var_within : float
        Mean squares and the variance components they imply.
    """

    icc: float
    icc_truncated: float
    low: float
    high: float
    confidence: float
    method: str
    ci_method: str
    n_rows: int
    n_clusters: int
    cluster_size_mean: float
    n0: float
    msb: float
    msw: float
    var_between: float
    var_within: float
    outcome: str | None = None
    by: tuple[str, ...] = ()
    notes: tuple[str, ...] = ()

    columns: ClassVar[tuple[str, ...]] = (
        "outcome",
        "by",
        "method",
        "ci_method",
        "confidence",
        "icc",
        "icc_truncated",
        "low",
        "high",
        "n_rows",
        "n_clusters",
        "cluster_size_mean",
        "n0",
        "msb",
        "msw",
        "var_between",
        "var_within",
        "notes",
    )

    def __repr__(self) -> str:
        return (
            f"ICC({_label(self.outcome, self.by)}; method={self.method})\n"
            f"  icc {fmt.number(self.icc)}  {self.confidence:.0%} CI "
            f"{fmt.interval(self.low, self.high)} ({self.ci_method})\n"
            f"  {fmt.count(self.n_rows, 'row')} in {fmt.count(self.n_clusters, 'cluster')} "
            f"(mean size {fmt.number(self.cluster_size_mean, 3)}, n0 {fmt.number(self.n0, 4)})"
            + self._notes_text()
        )

    def _repr_html_(self) -> str:
        return _generic_html(
            [self], None, (), ("icc", "low", "high", "ci_method", "n_rows", "n_clusters", "n0")
        )

    def __float__(self) -> float:
        return float(self.icc)


@dataclass(frozen=True, kw_only=True, repr=False)
class DesignEffect(_Result):
    """Design effects of clustered data, and the effective sample size they imply.

    Attributes
    ----------
    empirical : float
        Cluster-robust (CR1) variance of the estimate ÷ its variance if rows were independent
        (``s^2 / N``): R survey's ``deff="replace"``.
    kish : float
        ``1 + (m̄ - 1) * icc_truncated`` (pooled estimand only).
    unequal_sizes : float
        The exchangeable-correlation value that accounts for unequal sizes:
        ``1 + icc (sum n^2 / N - 1)`` for the pooled mean, ``N/G^2 sum (1 + (n_g-1) icc)/n_g``
        for the mean of cluster means.
    n_eff : float
        ``n_rows / empirical``.
    widening : float
        ``sqrt(empirical)``: how much wider than the naive interval an honest one is.
    """

    empirical: float
    kish: float
    unequal_sizes: float
    icc: float
    icc_truncated: float
    n_eff: float
    widening: float
    estimand: str
    n_rows: int
    n_clusters: int
    cluster_size_mean: float
    outcome: str | None = None
    by: tuple[str, ...] = ()
    notes: tuple[str, ...] = ()

    columns: ClassVar[tuple[str, ...]] = (
        "outcome",
        "by",
        "estimand",
        "empirical",
        "kish",
        "unequal_sizes",
        "icc",
        "icc_truncated",
        "n_eff",
        "widening",
        "n_rows",
        "n_clusters",
        "cluster_size_mean",
        "notes",
    )

    def __repr__(self) -> str:
        return (
            f"DesignEffect({_label(self.outcome, self.by)}; estimand={self.estimand})\n"
            f"  empirical {fmt.number(self.empirical)}  kish {fmt.number(self.kish)}  "
            f"unequal sizes {fmt.number(self.unequal_sizes)}  (icc {fmt.number(self.icc, 3)})\n"
            f"  {fmt.count(self.n_rows, 'row')} worth {fmt.number(self.n_eff)} independent rows; "
            f"intervals ×{fmt.number(self.widening, 3)} wider than naive" + self._notes_text()
        )

    def _repr_html_(self) -> str:
        return _generic_html(
            [self],
            None,
            (),
            (
                "empirical",
                "kish",
                "unequal_sizes",
                "icc",
                "n_eff",
                "widening",
                "n_rows",
                "n_clusters",
            ),
        )

    def __float__(self) -> float:
        return float(self.empirical)


def _generic_html(results, over, groups, fields: Sequence[str]) -> str:
    first = results[0]
    header = ([over] if over else []) + list(fields)
    rows = [
        ([g] if over else []) + [getattr(r, f) for f in fields]
        for g, r in zip(groups or [None], results, strict=True)
    ]
    caption = f"{type(first).__name__}: {_label(first.outcome, first.by)}"
    notes = list(dict.fromkeys(n for r in results for n in r.notes))
    return fmt.html_table(header, rows, caption, notes)


R = TypeVar("R", bound=_Result)


@dataclass(frozen=True, repr=False)
class GroupedResults(Generic[R]):
    """One result per group: per value of an ``over=`` column (pandas), or per combination of
    a Dataset's extra dims (xarray, e.g. ``model``). Groups of an ``over=`` column come in sorted
    label order (labels of mixed types that cannot be sorted keep their order of first
    appearance); a Dataset's groups follow its coordinates.

    Behaves like a read-only mapping from group label to result (a tuple of labels when there
    are several dims); ``to_frame()`` stacks the groups' rows under one leading column per
    dim, ``sel(model=...)`` picks one result by name, and ``to_xarray()`` lays the numbers out
    as an :class:`xarray.Dataset` over the dims.
    """

    over: str | tuple[str, ...]
    groups: tuple[Any, ...]
    results: tuple[R, ...]

    @property
    def dims(self) -> tuple[str, ...]:
        """The names of the grouping column or dims."""
        return self.over if isinstance(self.over, tuple) else (self.over,)

    def _keys(self) -> list[tuple[Any, ...]]:
        return [g if isinstance(self.over, tuple) else (g,) for g in self.groups]

    def __len__(self) -> int:
        return len(self.results)

    def __iter__(self) -> Iterator[Any]:
        return iter(self.groups)

    def __getitem__(self, group: Any) -> R:
        try:
            return self.results[self.groups.index(group)]
        except ValueError:
            raise KeyError(f"no group {group!r}; groups are {list(self.groups)}") from None

    def items(self) -> Iterator[tuple[Any, R]]:
        return iter(zip(self.groups, self.results, strict=True))

    def sel(self, **labels: Any) -> R:
        """The result of one group, named by dim: ``res.sel(model="gpt-4o")``."""
        if set(labels) != set(self.dims):
            raise KeyError(f"name one label for each of {list(self.dims)}, got {list(labels)}")
        key = tuple(labels[d] for d in self.dims)
        return self[key if isinstance(self.over, tuple) else key[0]]

    def to_frame(self):
        """A DataFrame with one row per group: one column per dim, then the result's columns."""
        import pandas as pd

        rows = [
            {**dict(zip(self.dims, key, strict=True)), **r._row()}
            for key, r in zip(self._keys(), self.results, strict=True)
        ]
        columns = [*self.dims, *type(self.results[0]).columns] if self.results else [*self.dims]
        return pd.DataFrame(rows, columns=columns)

    def to_xarray(self):
        """An :class:`xarray.Dataset` over the dims: one variable per numeric column
        (``estimate``, ``low``, ``high``, ...); text columns that are the same for every group
        (``method``, ``estimand``, ...) and ``confidence`` become attributes."""
        import numpy as np
        import xarray as xr

        keys = self._keys()
        coords = {d: list(dict.fromkeys(k[i] for k in keys)) for i, d in enumerate(self.dims)}
        shape = tuple(len(c) for c in coords.values())
        positions = [tuple(coords[d].index(k[i]) for i, d in enumerate(self.dims)) for k in keys]
        rows = [r._row() for r in self.results]
        variables, attrs = {}, {}
        for column in type(self.results[0]).columns:
            values = [row[column] for row in rows]
            distinct = set(map(repr, values))
            if column == "confidence" or (
                len(distinct) == 1 and not isinstance(values[0], (int, float))
            ):
                attrs[column] = values[0] if values[0] is not None else "none"
                continue
            numeric = all(
                v is None or (isinstance(v, (int, float)) and not isinstance(v, bool))
                for v in values
            )
            grid = np.full(shape, np.nan if numeric else None, dtype=float if numeric else object)
            for position, value in zip(positions, values, strict=True):
                grid[position] = np.nan if value is None else value
            variables[column] = (self.dims, grid)
        return xr.Dataset(variables, coords=coords, attrs=attrs)

    def plot(self, *, ax: Any = None) -> Any:
        """Forest plot, one row per group: the clustered interval beside the naive one
        (results of ``cluster_ci`` only; needs matplotlib). Returns the matplotlib Axes."""
        from clusterstats._plotting import forest

        if not self.results or not isinstance(self.results[0], ClusterCI):
            raise TypeError("plot() draws intervals: it needs results of cluster_ci")
        first = self.results[0]
        return forest(
            [", ".join(map(str, key)) for key in self._keys()],
            [r.estimate for r in self.results],
            [r.low for r in self.results],
            [r.high for r in self.results],
            [r.naive_low for r in self.results],
            [r.naive_high for r in self.results],
            title=(f"{_label(first.outcome, first.by)}: {first.confidence:.0%} CI, {first.method}"),
            ax=ax,
        )

    def _table(self) -> tuple[list[str], list[list[object]]]:
        first = self.results[0]
        if isinstance(first, ClusterCI):
            header = [*self.dims, *_CI_HTML_HEADER]
            body = [_ci_html_row(r) for r in self.results]
        else:
            fields = [c for c in first.columns if c not in ("outcome", "by", "notes")]
            header = [*self.dims, *fields]
            body = [[getattr(r, f) for f in fields] for r in self.results]
        rows = [[*key, *row] for key, row in zip(self._keys(), body, strict=True)]
        return header, rows

    def _title(self) -> str:
        first = self.results[0]
        over = ", ".join(self.dims)
        if isinstance(first, ClusterCI):
            return (
                f"ClusterCI over {over}: {_label(first.outcome, first.by)}; "
                f"{first.confidence:.0%} CI, estimand={first.estimand}, "
                f"method={first.method}"
            )
        return f"{type(first).__name__} over {over}: {_label(first.outcome, first.by)}"

    def _notes(self) -> list[str]:
        return list(
            dict.fromkeys(
                f"{', '.join(map(str, key))}: {n}"
                for key, r in zip(self._keys(), self.results, strict=True)
                for n in r.notes
            )
        )

    def __repr__(self) -> str:
        if not self.results:
            return f"GroupedResults(over={self.over!r}, empty)"
        header, rows = self._table()
        return (
            self._title()
            + "\n"
            + fmt.text_table(header, rows)
            + "".join(f"\n  note: {n}" for n in self._notes())
        )

    def _repr_html_(self) -> str:
        if not self.results:
            return "<p>GroupedResults (empty)</p>"
        header, rows = self._table()
        first = self.results[0]
        caption = (
            f"{_label(first.outcome, first.by)} — {first.confidence:.0%} CI, "
            f"estimand {first.estimand}, method {first.method}"
            if isinstance(first, ClusterCI)
            else f"{type(first).__name__}: {_label(first.outcome, first.by)}"
        )
        return fmt.html_table(header, rows, caption, self._notes())


@dataclass(frozen=True, kw_only=True, repr=False)
class PassAtK(_Result):
    """pass@k or pass^k of test cases run several times, with a clustered interval.

    Attributes
    ----------
    statistic : {"pass@k", "pass^k"}
        ``pass@k``: the chance that at least one of ``k`` runs passes (Chen et al. 2021);
        ``pass^k``: the chance that all ``k`` runs pass (Yao et al. 2024, τ-bench).
    k : int
    estimate, se, low, high, df : float
        The mean over cases of the per-case unbiased estimator, its standard error and
        interval (clustered by case, or by ``by``), and the df of the reference t.
    estimand : str
        ``"case_mean"``: every case counts once, as the published figures are defined.
    n_cases, n_clusters : int
        Cases used, and the clusters they fall in (``n_clusters == n_cases`` without ``by``).
    runs_min, runs_max : int
        Fewest and most runs of a case used.
    n_excluded : int
        Cases left out for having fewer than ``k`` runs (only with ``fewer_runs="drop"``).
    """

    statistic: str
    k: int
    estimate: float
    se: float
    low: float
    high: float
    confidence: float
    method: str
    estimand: str
    df: float
    n_cases: int
    n_clusters: int
    runs_min: int
    runs_max: int
    n_excluded: int = 0
    n_resamples: int | None = None
    outcome: str | None = None
    by: tuple[str, ...] = ()
    notes: tuple[str, ...] = ()

    columns: ClassVar[tuple[str, ...]] = (
        "outcome",
        "by",
        "statistic",
        "k",
        "estimand",
        "method",
        "confidence",
        "estimate",
        "se",
        "low",
        "high",
        "df",
        "n_cases",
        "n_clusters",
        "runs_min",
        "runs_max",
        "n_excluded",
        "n_resamples",
        "notes",
    )

    @property
    def name(self) -> str:
        """``"pass@5"``, ``"pass^3"``, ..."""
        return self.statistic.replace("k", str(self.k))

    def __repr__(self) -> str:
        runs = (
            f"{self.runs_min}"
            if self.runs_min == self.runs_max
            else f"{self.runs_min}–{self.runs_max}"
        )
        return (
            f"PassAtK({self.name} of {_label(self.outcome, self.by)}; estimand={self.estimand}, "
            f"method={self.method})\n"
            f"  {self.name} {fmt.number(self.estimate)}  {self.confidence:.0%} CI "
            f"{fmt.interval(self.low, self.high)}  se {fmt.number(self.se)}\n"
            f"  {fmt.count(self.n_cases, 'case')} ({runs} runs each) in "
            f"{fmt.count(self.n_clusters, 'cluster')}"
            + (
                f"; {self.n_excluded} cases with fewer than k runs left out"
                if self.n_excluded
                else ""
            )
            + self._notes_text()
        )

    def _repr_html_(self) -> str:
        return _generic_html(
            [self],
            None,
            (),
            ("statistic", "k", "estimate", "low", "high", "se", "method", "n_cases", "n_clusters"),
        )

    def __float__(self) -> float:
        return float(self.estimate)


@dataclass(frozen=True, kw_only=True, repr=False)
class Flakiness(_Result):
    """How often reruns of a test case disagree, and what a rerun is worth.

    Attributes
    ----------
    flaky_rate, low, high : float
        Share of cases that are flaky (some runs pass, some fail), with its clustered
        interval (each case counts once; cases grouped by ``by`` when given).
    n_flaky, n_cases, n_clusters : int
    disagreement : float
        Mean over cases of the share of runs that disagree with the case's majority outcome
        (``min(c, n - c) / n``; 0.5 for a tie).
    runs_mean, runs_min, runs_max : float, int, int
        Runs per case.
    icc, icc_low, icc_high : float
        The ICC of the runs within cases (one-way ANOVA, Searle's interval): 1 when every
        case's runs agree (at temperature 0, 30 reruns are one run copied 30 times).
    effective_runs : float
        What one case's runs are worth as independent runs:
        ``runs_mean / (1 + (runs_mean - 1) * max(icc, 0))``.
    """

    flaky_rate: float
    low: float
    high: float
    confidence: float
    method: str
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
    outcome: str | None = None
    by: tuple[str, ...] = ()
    notes: tuple[str, ...] = ()
    case_labels: tuple[Any, ...] = dataclasses.field(default=(), compare=False)
    case_runs: tuple[int, ...] = dataclasses.field(default=(), compare=False)
    case_passes: tuple[int, ...] = dataclasses.field(default=(), compare=False)

    columns: ClassVar[tuple[str, ...]] = (
        "outcome",
        "by",
        "method",
        "confidence",
        "flaky_rate",
        "low",
        "high",
        "n_flaky",
        "n_cases",
        "n_clusters",
        "disagreement",
        "runs_mean",
        "runs_min",
        "runs_max",
        "icc",
        "icc_low",
        "icc_high",
        "effective_runs",
        "notes",
    )

    def to_dict(self) -> dict[str, Any]:
        """The summary as a flat dict (the per-case table is :meth:`per_case`)."""
        return {c: getattr(self, c) for c in (*self.columns[2:], "outcome", "by", "notes")}

    def per_case(self):
        """One row per case: ``case``, ``runs``, ``passes``, ``disagreement``, ``flaky``."""
        import numpy as np
        import pandas as pd

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

    def __repr__(self) -> str:
        return (
            f"Flakiness({_label(self.outcome, self.by)}; method={self.method})\n"
            f"  flaky cases {self.n_flaky:,} of {self.n_cases:,}: "
            f"{fmt.number(self.flaky_rate)}  {self.confidence:.0%} CI "
            f"{fmt.interval(self.low, self.high)}\n"
            f"  runs disagreeing with their case's majority: {fmt.number(self.disagreement)}\n"
            f"  icc across reruns {fmt.number(self.icc)} "
            f"{fmt.interval(self.icc_low, self.icc_high)}"
            f": {fmt.number(self.runs_mean, 3)} runs per case are worth "
            f"{fmt.number(self.effective_runs, 3)} independent runs" + self._notes_text()
        )

    def _repr_html_(self) -> str:
        return _generic_html(
            [self],
            None,
            (),
            (
                "flaky_rate",
                "low",
                "high",
                "n_flaky",
                "n_cases",
                "disagreement",
                "icc",
                "effective_runs",
            ),
        )


@dataclass(frozen=True, kw_only=True, repr=False)
class PairedDelta(_Result):
    """A paired difference ``A - B`` between two sets of results on the same clustered items.

    Attributes
    ----------
    delta, se, low, high, df : float
        The difference of the chosen estimand, its standard error and interval (cluster-robust
        on the per-item differences, or a paired cluster bootstrap).
    p_value, test : float, str
        Two-sided test of "no difference" (``"cr2_t"`` or ``"cr1_t"``: the cluster-robust t).
    mean_a, mean_b : float
        The two sides' estimates on the matched items.
    se_unpaired, correlation : float
        What pairing bought: the SE if the two sides were independent samples (each still
        clustered), and the correlation of the two sides' per-item values.
    naive_low, naive_high : float
        The paired interval that ignores clusters (t on per-item differences).
    mcnemar_a_only, mcnemar_b_only : int or None
        Discordant items (A passed and B failed; B passed and A failed), for binary items
        with one run on each side.
    mcnemar_statistic, mcnemar_p_value, mcnemar_exact_p_value : float
        Plain McNemar (chi-square and exact binomial), which ignores clusters.
    clustered_mcnemar_statistic, clustered_mcnemar_p_value : float
        Obuchowski's (1998) clustered McNemar.
    rerun_variance_share : float
        Share of the per-item differences' variance due to rerun noise (NaN without reruns).
    n_items, n_clusters, n_dropped_a, n_dropped_b, n_missing_items, max_runs : int
        Matched items and clusters; items only on one side (``how="inner"``); items dropped
        for a missing outcome; the largest number of runs averaged into one item.
    """

    delta: float
    se: float
    low: float
    high: float
    confidence: float
    method: str
    estimand: str
    df: float
    p_value: float
    test: str
    mean_a: float
    mean_b: float
    se_unpaired: float
    correlation: float
    naive_low: float
    naive_high: float
    icc: float
    mcnemar_a_only: int | None
    mcnemar_b_only: int | None
    mcnemar_statistic: float
    mcnemar_p_value: float
    mcnemar_exact_p_value: float
    clustered_mcnemar_statistic: float
    clustered_mcnemar_p_value: float
    rerun_variance_share: float
    n_items: int
    n_clusters: int
    n_dropped_a: int = 0
    n_dropped_b: int = 0
    n_missing_items: int = 0
    max_runs: int = 1
    n_resamples: int | None = None
    label_a: str = "A"
    label_b: str = "B"
    outcome: str | None = None
    by: tuple[str, ...] = ()
    notes: tuple[str, ...] = ()

    columns: ClassVar[tuple[str, ...]] = (
        "label_a",
        "label_b",
        "outcome",
        "by",
        "estimand",
        "method",
        "confidence",
        "delta",
        "se",
        "low",
        "high",
        "df",
        "p_value",
        "test",
        "mean_a",
        "mean_b",
        "se_unpaired",
        "correlation",
        "naive_low",
        "naive_high",
        "icc",
        "mcnemar_a_only",
        "mcnemar_b_only",
        "mcnemar_statistic",
        "mcnemar_p_value",
        "mcnemar_exact_p_value",
        "clustered_mcnemar_statistic",
        "clustered_mcnemar_p_value",
        "rerun_variance_share",
        "n_items",
        "n_clusters",
        "n_dropped_a",
        "n_dropped_b",
        "n_missing_items",
        "max_runs",
        "n_resamples",
        "notes",
    )

    def __repr__(self) -> str:
        pct = f"{self.confidence:.0%}"
        lines = [
            f"PairedDelta({self.label_a} - {self.label_b}: {_label(self.outcome, self.by)}; "
            f"estimand={self.estimand}, method={self.method})",
            f"  delta {fmt.number(self.delta)}  {pct} CI {fmt.interval(self.low, self.high)}  "
            f"se {fmt.number(self.se)}  p {fmt.number(self.p_value, 3)} ({self.test})",
            f"  {self.label_a} {fmt.number(self.mean_a)}  {self.label_b} "
            f"{fmt.number(self.mean_b)}  on {fmt.count(self.n_items, 'item')} in "
            f"{fmt.count(self.n_clusters, 'cluster')}",
            f"  pairing: se {fmt.number(self.se)} paired vs {fmt.number(self.se_unpaired)} "
            f"unpaired (correlation {fmt.number(self.correlation, 3)})"
            + (
                ""
                if math.isnan(self.naive_low)
                else f"; naive paired CI {fmt.interval(self.naive_low, self.naive_high)}"
            ),
        ]
        if self.mcnemar_a_only is not None:
            lines.append(
                f"  discordant items: {self.mcnemar_a_only:,} only {self.label_a}, "
                f"{self.mcnemar_b_only:,} only {self.label_b}; McNemar p "
                f"{fmt.number(self.mcnemar_p_value, 3)}, clustered (Obuchowski) p "
                f"{fmt.number(self.clustered_mcnemar_p_value, 3)}"
            )
        if self.max_runs > 1:
            lines.append(
                f"  up to {self.max_runs} runs per item averaged; rerun noise is "
                f"{fmt.number(self.rerun_variance_share, 3)} of the differences' variance"
            )
        return "\n".join(lines) + self._notes_text()

    def _repr_html_(self) -> str:
        return _generic_html(
            [self],
            None,
            (),
            (
                "delta",
                "low",
                "high",
                "p_value",
                "mean_a",
                "mean_b",
                "se",
                "se_unpaired",
                "correlation",
                "n_items",
                "n_clusters",
            ),
        )


@dataclass(frozen=True, kw_only=True, repr=False)
class Comparison:
    """Many models on the same clustered items: a leaderboard and pairwise differences.

    ``leaderboard()`` has one row per model: its score with a clustered interval, its rank
    and a bootstrap interval of the rank (one set of cluster draws shared by all models).
    ``pairs()`` (also ``to_frame()``) has one row per comparison ``a - b``: the difference,
    its cluster-robust SE and interval, and p-values raw and adjusted across the family
    (``adjust``: Holm or Benjamini–Hochberg).
    """

    models: tuple[Any, ...]
    score: tuple[float, ...]
    score_low: tuple[float, ...]
    score_high: tuple[float, ...]
    score_method: str
    rank: tuple[float, ...]
    rank_low: tuple[float, ...]
    rank_high: tuple[float, ...]
    pair_a: tuple[Any, ...]
    pair_b: tuple[Any, ...]
    delta: tuple[float, ...]
    se: tuple[float, ...]
    low: tuple[float, ...]
    high: tuple[float, ...]
    p_value: tuple[float, ...]
    p_adjusted: tuple[float, ...]
    df: float
    method: str
    adjust: str
    estimand: str
    confidence: float
    baseline: Any
    n_items: int
    n_clusters: int
    n_resamples: int
    n_dropped_items: int = 0
    n_missing_items: int = 0
    outcome: str | None = None
    by: tuple[str, ...] = ()
    notes: tuple[str, ...] = ()

    LEADERBOARD_COLUMNS: ClassVar[tuple[str, ...]] = (
        "model",
        "score",
        "low",
        "high",
        "rank",
        "rank_low",
        "rank_high",
        "method",
    )
    PAIR_COLUMNS: ClassVar[tuple[str, ...]] = (
        "model_a",
        "model_b",
        "delta",
        "se",
        "low",
        "high",
        "df",
        "p_value",
        "p_adjusted",
        "adjust",
        "method",
        "estimand",
        "confidence",
    )

    def leaderboard(self):
        """One row per model, best first."""
        import pandas as pd

        frame = pd.DataFrame(
            {
                "model": list(self.models),
                "score": self.score,
                "low": self.score_low,
                "high": self.score_high,
                "rank": self.rank,
                "rank_low": self.rank_low,
                "rank_high": self.rank_high,
                "method": self.score_method,
            },
            columns=list(self.LEADERBOARD_COLUMNS),
        )
        return frame.sort_values(["rank", "model"], kind="stable").reset_index(drop=True)

    def pairs(self):
        """One row per comparison ``model_a - model_b``."""
        import pandas as pd

        n = len(self.delta)
        return pd.DataFrame(
            {
                "model_a": list(self.pair_a),
                "model_b": list(self.pair_b),
                "delta": self.delta,
                "se": self.se,
                "low": self.low,
                "high": self.high,
                "df": [self.df] * n,
                "p_value": self.p_value,
                "p_adjusted": self.p_adjusted,
                "adjust": self.adjust,
                "method": self.method,
                "estimand": self.estimand,
                "confidence": self.confidence,
            },
            columns=list(self.PAIR_COLUMNS),
        )

    def to_frame(self):
        """The pairwise comparisons (tidy): same as ``pairs()``."""
        return self.pairs()

    def __repr__(self) -> str:
        board = self.leaderboard()
        rows = [
            [
                r.model,
                r.score,
                fmt.interval(r.low, r.high),
                int(r.rank),
                f"{int(r.rank_low)}–{int(r.rank_high)}",
            ]
            for r in board.itertuples()
        ]
        pairs = self.pairs().sort_values("p_adjusted", kind="stable").head(10)
        prow = [
            [
                f"{r.model_a} - {r.model_b}",
                r.delta,
                fmt.interval(r.low, r.high),
                r.p_value,
                r.p_adjusted,
            ]
            for r in pairs.itertuples()
        ]
        pct = f"{self.confidence:.0%}"
        head = (
            f"Comparison({_label(self.outcome, self.by)}; {len(self.models)} models on "
            f"{fmt.count(self.n_items, 'item')} in {fmt.count(self.n_clusters, 'cluster')}; "
            f"estimand={self.estimand})"
        )
        return (
            head
            + "\n"
            + fmt.text_table(["model", "score", f"{pct} CI", "rank", f"rank {pct} CI"], rows)
            + f"\n\npairwise ({self.method}, p adjusted by {self.adjust}; "
            f"{min(10, len(self.delta))} of {len(self.delta)} shown):\n"
            + fmt.text_table(["a - b", "delta", f"{pct} CI", "p", "p adjusted"], prow)
            + "".join(f"\n  note: {n}" for n in self.notes)
        )

    def _repr_html_(self) -> str:
        board = self.leaderboard()
        pairs = self.pairs()
        return fmt.html_table(
            list(board.columns),
            board.itertuples(index=False),
            f"Leaderboard: {_label(self.outcome, self.by)}",
            self.notes,
        ) + fmt.html_table(
            list(pairs.columns),
            pairs.itertuples(index=False),
            f"Pairwise differences (p adjusted by {self.adjust})",
        )


@dataclass(frozen=True, kw_only=True, repr=False)
class MissingReport:
    """How much of an outcome is missing, where, why, and how much it matters.

    Attributes
    ----------
    n_rows, n_missing, missing_rate : int, int, float
    n_clusters, n_clusters_with_missing, n_clusters_all_missing : int
    chi_square, chi_square_df, chi_square_p : float
        Pearson's test that every cluster has the same missing rate; a small p-value means
        the missing rows concentrate in some clusters (which is what biases complete-case).
    missing_icc : float
        ICC of the missing indicator within clusters.
    reasons : tuple of (reason, rows, clusters)
        Missing rows by ``reason=`` label, most frequent first.
    analyses : tuple of (name, ClusterCI)
        The sensitivity table: ``complete_case``, ``ipw`` and, for a binary outcome,
        ``missing_as_fail`` and ``missing_as_pass`` (the bounds).
    deltas : tuple of (δ, estimate)
        The pooled mean with missing rows imputed at their cluster's observed rate shifted by
        δ (logit scale for a binary outcome, outcome scale otherwise); δ = 0 is missing at
        random within clusters.
    tipping_low, tipping_high : float
        The δ below (above) which the adjusted estimate leaves the IPW interval: how far from
        missing at random the missing rows must be before the conclusion moves by more than
        the sampling uncertainty (±inf: never within |δ| ≤ 20).
    threshold, tipping_threshold : float or None
        With ``threshold=``: the δ at which the adjusted estimate crosses it.
    """

    outcome: str
    by: tuple[str, ...]
    n_rows: int
    n_missing: int
    missing_rate: float
    n_clusters: int
    n_clusters_with_missing: int
    n_clusters_all_missing: int
    chi_square: float
    chi_square_df: float
    chi_square_p: float
    missing_icc: float
    reasons: tuple[tuple[Any, int, int], ...]
    analyses: tuple[tuple[str, ClusterCI], ...]
    deltas: tuple[tuple[float, float], ...]
    tipping_low: float
    tipping_high: float
    threshold: float | None = None
    tipping_threshold: float | None = None
    notes: tuple[str, ...] = ()
    cluster_labels: tuple[Any, ...] = dataclasses.field(default=(), compare=False)
    cluster_rows: tuple[int, ...] = dataclasses.field(default=(), compare=False)
    cluster_missing: tuple[int, ...] = dataclasses.field(default=(), compare=False)

    columns: ClassVar[tuple[str, ...]] = (
        "analysis",
        "estimate",
        "low",
        "high",
        "method",
        "n_rows",
        "n_missing",
    )

    def to_frame(self):
        """The sensitivity table: one row per analysis, with the columns of ``columns``."""
        import pandas as pd

        rows = [
            {
                "analysis": name,
                "estimate": r.estimate,
                "low": r.low,
                "high": r.high,
                "method": r.method,
                "n_rows": r.n_rows,
                "n_missing": r.n_missing,
            }
            for name, r in self.analyses
        ]
        return pd.DataFrame(rows, columns=list(self.columns))

    def per_cluster(self):
        """One row per cluster: ``cluster``, ``rows``, ``missing``, ``missing_rate``."""
        import numpy as np
        import pandas as pd

        rows = np.asarray(self.cluster_rows)
        missing = np.asarray(self.cluster_missing)
        return pd.DataFrame(
            {
                "cluster": list(self.cluster_labels),
                "rows": rows,
                "missing": missing,
                "missing_rate": missing / rows,
            }
        )

    def by_reason(self):
        """Missing rows per reason: ``reason``, ``rows``, ``share`` (of the missing rows),
        ``clusters``."""
        import pandas as pd

        frame = pd.DataFrame(list(self.reasons), columns=["reason", "rows", "clusters"])
        frame.insert(2, "share", frame["rows"] / max(self.n_missing, 1))
        return frame

    def delta_table(self):
        """The δ-adjusted estimates: ``delta``, ``estimate``."""
        import pandas as pd

        return pd.DataFrame(list(self.deltas), columns=["delta", "estimate"])

    def _lines(self) -> list[str]:
        lines = [
            f"MissingReport({_label(self.outcome, self.by)})",
            f"  {self.n_missing:,} of {fmt.count(self.n_rows, 'row')} missing "
            f"({self.missing_rate:.1%}), in {self.n_clusters_with_missing} of "
            f"{fmt.count(self.n_clusters, 'cluster')} "
            f"({self.n_clusters_all_missing} entirely missing)",
            f"  same missing rate in every cluster? chi-square {fmt.number(self.chi_square)} on "
            f"{self.chi_square_df:g} df, p {fmt.number(self.chi_square_p)}; ICC of "
            f"missingness {fmt.number(self.missing_icc)}",
        ]
        if self.reasons:
            shown = ", ".join(f"{reason}: {rows:,}" for reason, rows, _ in self.reasons)
            lines.append(f"  by reason: {shown}")
        lines.append("  sensitivity:")
        width = max(len(name) for name, _ in self.analyses)
        for name, r in self.analyses:
            lines.append(
                f"    {name:<{width}}  {fmt.number(r.estimate)}  "
                f"{r.confidence:.0%} CI {fmt.interval(r.low, r.high)}  ({r.method})"
            )

        def side(delta: float) -> str:
            return "never for |δ| ≤ 20" if math.isinf(delta) else f"at δ = {fmt.number(delta, 3)}"

        lines.append(
            "  tipping points (missing rows shifted by δ from their cluster's observed rate, "
            "on the logit scale for 0/1 outcomes): the estimate leaves the IPW interval "
            f"downwards {side(self.tipping_low)}, upwards {side(self.tipping_high)}"
        )
        if self.threshold is not None:
            lines.append(
                f"  it crosses {fmt.number(self.threshold)} at δ = "
                f"{fmt.number(self.tipping_threshold, 3)}"
            )
        return lines

    def __repr__(self) -> str:
        return "\n".join(self._lines()) + "".join(f"\n  note: {n}" for n in self.notes)

    def _repr_html_(self) -> str:
        header = ["analysis", "estimate", "low", "high", "method"]
        rows = [[name, r.estimate, r.low, r.high, r.method] for name, r in self.analyses]
        caption = (
            f"MissingReport: {_label(self.outcome, self.by)} — {self.n_missing:,} of "
            f"{self.n_rows:,} missing ({self.missing_rate:.1%}); chi-square p "
            f"{fmt.number(self.chi_square_p)}; tipping δ {fmt.number(self.tipping_low, 3)} / "
            f"{fmt.number(self.tipping_high, 3)}"
        )
        return fmt.html_table(header, rows, caption, list(self.notes))


@dataclass(frozen=True, kw_only=True, repr=False)
class Plan:
    """What a clustered eval design buys, and what the next budget should buy.

    Attributes
    ----------
    n_clusters, cluster_size, icc, variance : float
        The design (``K`` clusters of ``m`` rows) and the assumptions: the ICC ``ρ`` and the
        row variance ``σ²`` (``p(1 − p)`` for a pass rate).
    icc_low, icc_high : float
        A plausible range of ρ (from a pilot's ICC interval, or given); NaN if none.
    se, half_width, design_effect, n_eff, n_eff_ceiling : float
        ``sqrt(σ² (1 + (m − 1) ρ)/(K m))``, its ``t_{K−1}`` half-width, ``1 + (m − 1) ρ``,
        ``K m / deff`` and the ceiling ``K / ρ`` that deeper clusters never pass.
    options : tuple of (option, K, m, rows, n_eff, half_width)
        The current design and the ways to spend a new budget: double the depth, double the
        clusters, and (with costs) the cost-optimal depth at the same cost.
    optimal_cluster_size : float or None
        ``m* = sqrt(c_cluster / c_row · (1 − ρ)/ρ)`` when costs are given.
    target_half_width, clusters_needed : float or None
        Clusters of ``m`` rows for the target half-width (``t`` quantile, unrounded).
    effect, power, difference_variance, difference_icc : float or None
        For a paired comparison: the effect to detect and the pilot's variance and ICC of the
        per-item differences.
    minimum_detectable_effect, clusters_for_power : float or None
    by_icc : tuple of (icc, n_eff, half_width, clusters_needed)
        The answers at the low, estimated and high ICC.
    """

    n_clusters: float
    cluster_size: float
    icc: float
    variance: float
    confidence: float
    icc_low: float
    icc_high: float
    se: float
    half_width: float
    design_effect: float
    n_eff: float
    n_eff_ceiling: float
    options: tuple[tuple[str, float, float, float, float, float], ...]
    optimal_cluster_size: float | None = None
    cost_per_cluster: float | None = None
    cost_per_row: float | None = None
    target_half_width: float | None = None
    clusters_needed: float | None = None
    effect: float | None = None
    power: float = 0.8
    difference_variance: float | None = None
    difference_icc: float | None = None
    minimum_detectable_effect: float | None = None
    clusters_for_power: float | None = None
    by_icc: tuple[tuple[float, float, float, float | None], ...] = ()
    source: str = "numbers"
    notes: tuple[str, ...] = ()

    columns: ClassVar[tuple[str, ...]] = (
        "option",
        "n_clusters",
        "cluster_size",
        "rows",
        "n_eff",
        "half_width",
    )

    def to_frame(self):
        """The options table: one row per design, with the columns of ``columns``."""
        import pandas as pd

        return pd.DataFrame(list(self.options), columns=list(self.columns))

    def icc_table(self):
        """How the answers move over the plausible ICC range: ``icc``, ``n_eff``,
        ``half_width``, ``clusters_needed``."""
        import pandas as pd

        return pd.DataFrame(
            list(self.by_icc), columns=["icc", "n_eff", "half_width", "clusters_needed"]
        )

    def _lines(self) -> list[str]:
        k, m = self.n_clusters, self.cluster_size
        lines = [
            f"Plan({self.source})",
            f"  {k:g} clusters x {fmt.number(m, 3)} rows, icc {fmt.number(self.icc, 3)}"
            + (
                f" (range {fmt.interval(self.icc_low, self.icc_high, 3)})"
                if not math.isnan(self.icc_low)
                else ""
            )
            + f", row variance {fmt.number(self.variance)}",
            f"  Var = σ²(ρ/K + (1−ρ)/(Km)): se {fmt.number(self.se)}, "
            f"{self.confidence:.0%} half-width ±{fmt.number(self.half_width)}; design effect "
            f"{fmt.number(self.design_effect, 3)}; effective n {fmt.number(self.n_eff, 4)} "
            f"(ceiling K/ρ = {fmt.number(self.n_eff_ceiling, 4)})",
            "  options:",
        ]
        width = max(len(o[0]) for o in self.options)
        for option, kk, mm, rows, neff, half in self.options:
            lines.append(
                f"    {option:<{width}}  K {kk:>8,.1f}  m {mm:>7.2f}  rows {rows:>10,.0f}  "
                f"n_eff {neff:>9.1f}  ±{fmt.number(half)}"
            )
        if self.optimal_cluster_size is not None:
            lines.append(
                f"  cost-optimal rows per cluster m* = {fmt.number(self.optimal_cluster_size, 3)}"
            )
        if self.clusters_needed is not None:
            lines.append(
                f"  for ±{fmt.number(self.target_half_width)}: {math.ceil(self.clusters_needed):,} "
                f"clusters of {fmt.number(m, 3)} rows"
            )
        if self.minimum_detectable_effect is not None:
            lines.append(
                f"  paired: minimum detectable effect {fmt.number(self.minimum_detectable_effect)}"
                f" at {self.power:.0%} power"
                + (
                    f"; {math.ceil(self.clusters_for_power):,} clusters to detect "
                    f"{fmt.number(self.effect)}"
                    if self.clusters_for_power is not None
                    else ""
                )
            )
        for icc, neff, half, need in self.by_icc:
            extra = "" if need is None else f", {math.ceil(need):,} clusters for the target"
            lines.append(
                f"  if icc = {fmt.number(icc, 3)}: n_eff {neff:,.1f}, ±{fmt.number(half)}{extra}"
            )
        return lines

    def __repr__(self) -> str:
        return "\n".join(self._lines()) + "".join(f"\n  note: {n}" for n in self.notes)

    def _repr_html_(self) -> str:
        rows = [list(o) for o in self.options]
        caption = (
            f"Plan ({self.source}): icc {fmt.number(self.icc, 3)}, effective n "
            f"{fmt.number(self.n_eff, 4)} of ceiling {fmt.number(self.n_eff_ceiling, 4)}"
        )
        return fmt.html_table(list(self.columns), rows, caption, list(self.notes))

    def plot(self, *, ax: Any = None) -> Any:
        """The budget curve: effective n against rows per cluster, for the current clusters
        (with the ceiling K/ρ) and for the current total rows, with the current design
        marked (needs matplotlib). Returns the matplotlib Axes."""
        from clusterstats._plotting import budget_curve

        return budget_curve(
            self.n_clusters,
            self.cluster_size,
            self.icc,
            title=f"Effective n at icc {self.icc:.3g}",
            ax=ax,
        )


@dataclass(frozen=True, kw_only=True, repr=False)
class Report:
    """What to report about a clustered eval result (seed 003): per group, the clusters and
    their sizes, the ICC with its interval, the clustered interval and how it was computed,
    the naive interval beside it, the design effect, the effective n, missing rows, and a
    sentence a reader can quote."""

    results: tuple[ClusterCI, ...]
    iccs: tuple[ICC, ...]
    groups: tuple[Any, ...]
    over: str | None
    cluster_size_median: tuple[float, ...]

    columns: ClassVar[tuple[str, ...]] = (
        "group",
        "n_rows",
        "n_clusters",
        "cluster_size_min",
        "cluster_size_median",
        "cluster_size_max",
        "icc",
        "icc_low",
        "icc_high",
        "estimate",
        "low",
        "high",
        "method",
        "estimand",
        "naive_low",
        "naive_high",
        "design_effect",
        "n_eff",
        "n_missing",
        "sentence",
    )

    def sentences(self) -> tuple[str, ...]:
        """One quotable sentence per group."""
        out = []
        for group, r in zip(self.groups, self.results, strict=True):
            unit = " + ".join(r.by) if r.by else "clusters"
            half = 100 * (r.high - r.low) / 2
            naive = 100 * (r.naive_high - r.naive_low) / 2
            who = "" if group is None else f"{group}: "
            out.append(
                f"{who}{fmt.count(r.n_rows, 'example')} in {r.n_clusters:,} {unit} "
                f"{'cluster' if r.n_clusters == 1 else 'clusters'} are worth about "
                f"{r.n_eff:,.0f} independent examples; the {r.confidence:.0%} interval is "
                f"±{half:.1f} points, not ±{naive:.1f}"
            )
        return tuple(out)

    def to_frame(self):
        """One row per group with the columns of ``columns``."""
        import pandas as pd

        rows = []
        for group, r, icc, median, sentence in zip(
            self.groups,
            self.results,
            self.iccs,
            self.cluster_size_median,
            self.sentences(),
            strict=True,
        ):
            rows.append(
                {
                    "group": group,
                    "n_rows": r.n_rows,
                    "n_clusters": r.n_clusters,
                    "cluster_size_min": r.cluster_size_min,
                    "cluster_size_median": median,
                    "cluster_size_max": r.cluster_size_max,
                    "icc": icc.icc,
                    "icc_low": icc.low,
                    "icc_high": icc.high,
                    "estimate": r.estimate,
                    "low": r.low,
                    "high": r.high,
                    "method": r.method,
                    "estimand": r.estimand,
                    "naive_low": r.naive_low,
                    "naive_high": r.naive_high,
                    "design_effect": r.design_effect,
                    "n_eff": r.n_eff,
                    "n_missing": r.n_missing,
                    "sentence": sentence,
                }
            )
        return pd.DataFrame(rows, columns=list(self.columns))

    def _table_rows(self) -> tuple[list[str], list[list[object]]]:
        header = [
            self.over or "",
            "estimate",
            "clustered CI",
            "naive CI",
            "K",
            "m (min/median/max)",
            "ICC [CI]",
            "deff",
            "n_eff",
            "missing",
        ]
        rows = []
        for group, r, icc, median in zip(
            self.groups, self.results, self.iccs, self.cluster_size_median, strict=True
        ):
            rows.append(
                [
                    "" if group is None else group,
                    fmt.number(r.estimate),
                    fmt.interval(r.low, r.high),
                    fmt.interval(r.naive_low, r.naive_high),
                    r.n_clusters,
                    f"{r.cluster_size_min}/{fmt.number(median, 3)}/{r.cluster_size_max}",
                    f"{fmt.number(icc.icc, 3)} {fmt.interval(icc.low, icc.high, 3)}",
                    fmt.number(r.design_effect, 3),
                    fmt.number(r.n_eff, 4),
                    r.n_missing,
                ]
            )
        return header, rows

    def _method_line(self) -> str:
        r = self.results[0]
        return (
            f"{r.confidence:.0%} intervals by {r.method} (estimand {r.estimand}), clustered by "
            f"{' + '.join(r.by)}; the naive interval treats rows as independent"
        )

    def __repr__(self) -> str:
        header, rows = self._table_rows()
        return (
            f"Report({_label(self.results[0].outcome, self.results[0].by)})\n"
            + fmt.text_table(header, rows)
            + f"\n  {self._method_line()}"
            + "".join(f"\n  {s}." for s in self.sentences())
        )

    def _repr_html_(self) -> str:
        header, rows = self._table_rows()
        return fmt.html_table(
            header, rows, self._method_line(), [s + "." for s in self.sentences()]
        )

    def to_markdown(self) -> str:
        """A Markdown table and the sentences, for a pull-request description."""
        header, rows = self._table_rows()
        if not self.over:
            header, rows = header[1:], [row[1:] for row in rows]
        lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
        lines += ["| " + " | ".join(str(c) for c in row) + " |" for row in rows]
        lines += ["", self._method_line() + "."]
        lines += ["", *[f"- {s}." for s in self.sentences()]]
        return "\n".join(lines)

    def plot(self, *, ax: Any = None) -> Any:
        """Forest plot: the clustered and naive intervals, one row per group."""
        from clusterstats._plotting import forest

        first = self.results[0]
        return forest(
            [_label(first.outcome, first.by) if g is None else str(g) for g in self.groups],
            [r.estimate for r in self.results],
            [r.low for r in self.results],
            [r.high for r in self.results],
            [r.naive_low for r in self.results],
            [r.naive_high for r in self.results],
            title=self._method_line(),
            ax=ax,
        )
