"""Result types: one frozen dataclass per concept, the same from every entry point.

Values are stored unrounded; rounding happens only when a result is displayed. Every result
has a readable ``repr``, an HTML table for Jupyter (``_repr_html_``), ``to_dict()`` and a tidy
one-row ``to_frame()`` whose columns never depend on the options used.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar, Generic, TypeVar

from clusterstats import _display as fmt

__all__ = ["ICC", "ClusterCI", "DesignEffect", "GroupedResults"]


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
            sizes = f"{self.cluster_size_min:,} rows each"
        else:
            sizes = (
                f"size {self.cluster_size_min:,}–{self.cluster_size_max:,}, "
                f"mean {fmt.number(self.cluster_size_mean, 3)}"
            )
        missing = f"; {self.n_missing:,} rows had a missing outcome" if self.n_missing else ""
        return (
            f"ClusterCI({_label(self.outcome, self.by)}; estimand={self.estimand}, "
            f"method={self.method})\n"
            f"  estimate {fmt.number(self.estimate)}  {pct} CI "
            f"{fmt.interval(self.low, self.high)}  se {fmt.number(self.se)}\n"
            f"  naive (iid rows) CI {fmt.interval(self.naive_low, self.naive_high)}  "
            f"widening ×{fmt.number(self.widening, 3)}\n"
            f"  {self.n_rows:,} rows in {self.n_clusters:,} clusters ({sizes}){missing}\n"
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
            f"  {self.n_rows:,} rows in {self.n_clusters:,} clusters "
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
            f"  {self.n_rows:,} rows worth {fmt.number(self.n_eff)} independent rows; "
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


R = TypeVar("R", ClusterCI, ICC, DesignEffect)


@dataclass(frozen=True, repr=False)
class GroupedResults(Generic[R]):
    """One result per group of an ``over=`` column, in order of first appearance.

    Behaves like a read-only mapping from group label to result; ``to_frame()`` stacks the
    groups' rows under a leading column named after ``over``.
    """

    over: str
    groups: tuple[Any, ...]
    results: tuple[R, ...]

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

    def to_frame(self):
        """A DataFrame with one row per group: the ``over`` column, then the result's columns."""
        import pandas as pd

        rows = [{self.over: g, **r._row()} for g, r in self.items()]
        columns = [self.over, *type(self.results[0]).columns] if self.results else [self.over]
        return pd.DataFrame(rows, columns=columns)

    def __repr__(self) -> str:
        if not self.results:
            return f"GroupedResults(over={self.over!r}, empty)"
        first = self.results[0]
        if isinstance(first, ClusterCI):
            header = [self.over, *_CI_HTML_HEADER]
            rows = [[g, *_ci_html_row(r)] for g, r in self.items()]
            title = (
                f"ClusterCI over {self.over}: {_label(first.outcome, first.by)}; "
                f"{first.confidence:.0%} CI, estimand={first.estimand}, "
                f"method={first.method}"
            )
        else:
            fields = [c for c in first.columns if c not in ("outcome", "by", "notes")]
            header = [self.over, *fields]
            rows = [[g, *(getattr(r, f) for f in fields)] for g, r in self.items()]
            title = f"{type(first).__name__} over {self.over}: {_label(first.outcome, first.by)}"
        notes = list(dict.fromkeys(f"{g}: {n}" for g, r in self.items() for n in r.notes))
        return (
            title + "\n" + fmt.text_table(header, rows) + "".join(f"\n  note: {n}" for n in notes)
        )

    def _repr_html_(self) -> str:
        if not self.results:
            return "<p>GroupedResults (empty)</p>"
        first = self.results[0]
        if isinstance(first, ClusterCI):
            return _grouped_html(self.results, self.over, self.groups)
        fields = [c for c in first.columns if c not in ("outcome", "by", "notes")]
        return _generic_html(self.results, self.over, self.groups, fields)
