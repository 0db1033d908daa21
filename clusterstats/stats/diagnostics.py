"""Which grouping matters (``check_clustering``) and what to report (``report``)."""

from __future__ import annotations

import math
import warnings
from collections.abc import Hashable, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar, Literal

import numpy as np
import pandas as pd
from pandas.tseries.frequencies import to_offset

from clusterstats import _display as fmt
from clusterstats import _options as opt
from clusterstats import adapters
from clusterstats._plotting import intervals_forest
from clusterstats._result import Lines, Table, TableResult, label_of
from clusterstats.core.crossed import crossed_variance_of_rows
from clusterstats.core.grouping import cluster_sums
from clusterstats.core.summary import (
    constant_up_to_rounding,
    default_design_effect,
    summarize_icc,
)
from clusterstats.core.variance import (
    cluster_robust,
    iid_variance,
    nested_variance_shares,
)
from clusterstats.errors import (
    ClusterStatsWarning,
    DegenerateDataError,
    EmptyDataError,
    InvalidClusterError,
    InvalidOptionError,
    TooFewClustersError,
)
from clusterstats.stats import _policies as policy
from clusterstats.stats.mean import ICC, ClusterCI, build_cluster_ci, build_icc

__all__ = ["ClusteringCheck", "Report", "check_clustering", "report"]


@dataclass(frozen=True, kw_only=True, repr=False)
class Report(TableResult):
    """What to report about a clustered eval result, per group (returned by ``report``).

    For each group: the clusters and the distribution of their sizes, the ICC with its
    interval, the clustered interval and how it was computed, the naive interval beside it,
    the design effect, the effective n, missing rows, and a sentence a reader can quote (the
    items Campbell et al. 2012 ask a cluster trial to report). It prints as text, renders
    as HTML in Jupyter, and gives:

    - ``sentences()``: one quotable sentence per group, e.g. "2,173 examples in 91 src
      clusters are worth about 649 independent examples; the 95% interval is ±3.8 points,
      not ±2.1";
    - ``to_frame()``: one row per group, with the columns of ``columns``: ``group``,
      ``n_rows``, ``n_clusters``, ``cluster_size_min``, ``cluster_size_median``,
      ``cluster_size_max``, ``icc``, ``icc_low``, ``icc_high``, ``estimate``, ``low``,
      ``high``, ``method``, ``estimand``, ``naive_low``, ``naive_high``, ``design_effect``,
      ``n_eff``, ``n_missing``, ``sentence``;
    - ``to_markdown()``: a table and the sentences, for a pull-request description;
    - ``plot()``: the forest plot.

    Attributes
    ----------
    results : tuple of ClusterCI
        The clustered interval of each group.
    iccs : tuple of ICC
        The ICC of each group.
    groups : tuple
        The group labels (``(None,)`` without groups).
    over : str or None
        The grouping column (or dims, joined with ", "), or None.
    cluster_size_median : tuple of float
        The median cluster size of each group.
    """

    results: tuple[ClusterCI, ...]
    iccs: tuple[ICC, ...]
    groups: tuple[Any, ...]
    over: str | None
    cluster_size_median: tuple[float, ...]

    _metric_labels: ClassVar[tuple[str, ...]] = ("group",)
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
            who = "" if group is None else f"{_group_text(group)}: "
            out.append(
                f"{who}{fmt.count(r.n_rows, 'example')} in {r.n_clusters:,} {unit} "
                f"{'cluster' if r.n_clusters == 1 else 'clusters'} are worth about "
                f"{r.n_eff:,.0f} independent examples; the {r.confidence:.0%} interval is "
                f"±{half:.1f} points, not ±{naive:.1f}"
            )
        return tuple(out)

    def to_frame(self):
        """One row per group with the columns of ``columns``."""

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
                    "group": _group_text(group),
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

    def _heading(self) -> str:
        return f"Report({label_of(self.results[0].outcome, self.results[0].by)})"

    def _blocks(self) -> list[Lines | Table]:
        header = (
            "estimate",
            "clustered CI",
            "naive CI",
            "K",
            "m (min/median/max)",
            "ICC [CI]",
            "deff",
            "n_eff",
            "missing",
        )
        rows = []
        for group, r, icc, median in zip(
            self.groups, self.results, self.iccs, self.cluster_size_median, strict=True
        ):
            row = (
                fmt.number(r.estimate),
                fmt.interval(r.low, r.high),
                fmt.interval(r.naive_low, r.naive_high),
                r.n_clusters,
                f"{r.cluster_size_min:,}/{fmt.size(median)}/{r.cluster_size_max:,}",
                f"{fmt.proportion(icc.icc)} {fmt.interval(icc.low, icc.high)}",
                fmt.number(r.design_effect),
                fmt.number(r.n_eff),
                r.n_missing,
            )
            # the group column only when there are groups
            rows.append(row if not self.over else (_group_text(group), *row))
        if self.over:
            header = (self.over, *header)
        sentences = (self._method_line(), *(f"{s}." for s in self.sentences()))
        return [Table(header, tuple(rows)), Lines(sentences)]

    def _method_line(self) -> str:
        r = self.results[0]
        return (
            f"{r.confidence:.0%} intervals by {r.method} (estimand {r.estimand}), clustered by "
            f"{' + '.join(r.by)}; the naive interval treats rows as independent"
        )

    def _notes(self) -> list[str]:
        return list(
            dict.fromkeys(
                f"{_group_text(group)}: {n}" if self.over else n
                for group, r in zip(self.groups, self.results, strict=True)
                for n in r.notes
            )
        )

    def plot(
        self,
        *,
        ax: Any = None,
        order: Literal["estimate", "label"] = "estimate",
        values: bool = False,
        percent: bool | None = None,
    ) -> Any:
        """Forest plot: the clustered and naive intervals, one row per group (needs
        matplotlib, as ``ClusterCI.plot``).

        {group_forest_parameters}

        {plot_returns}

        {plot_examples_head}
        >>> import clusterstats
        >>> df = clusterstats.load_demo_data()
        >>> ax = clusterstats.report(df, "correct", by="src", over="model").plot(order="label")
        >>> ax.get_yticklabels()[-1].get_text()  # the first group at the top
        'Meta-Llama-3.1-70B-Instruct'
        """

        first = self.results[0]
        title = first._plot_title()
        if self.over:
            title = f"{first.outcome or 'outcome'} by {self.over}, clustered by " + (
                " + ".join(first.by) or "cluster"
            )
        return intervals_forest(
            self.results,
            [
                label_of(first.outcome, first.by) if g is None else str(_group_text(g))
                for g in self.groups
            ],
            title=title,
            order=order,
            values=values,
            percent=percent,
            ax=ax,
        )


def report(
    data: Any,
    outcome: Hashable,
    by: opt.By | None = None,
    *,
    over: Hashable | Sequence[Hashable] | None = None,
    estimand: str = "pooled",
    method: str = "auto",
    confidence: float = 0.95,
    missing: opt.Missing = "drop",
    responded: Hashable | None = None,
    case: Hashable = "case",
    rerun: Hashable = "rerun",
) -> Report:
    """What to report about a clustered result, per group: the number of clusters and the
    distribution of their sizes, the ICC with its interval, the clustered interval and how it
    was computed, the naive interval beside it, the design effect and effective n, missing
    rows, and a sentence a reader can quote (the items of the CONSORT extension to cluster
    trials, Campbell et al. 2012). The data are reduced once.

    Parameters
    ----------
    data : pandas.DataFrame, xarray.Dataset or dask DataFrame
        As in ``cluster_ci``.
    outcome : column label
        The outcome.
    by : column label or list of labels, optional
        The cluster (for a Dataset, a coordinate along ``case``; default: the cases).
    over : column label or list of labels, optional
        One row per value of this column, or per combination of several columns (a
        Dataset's extra dims play this part).
    estimand : {"pooled", "cluster_mean"}
        As in ``cluster_ci``.
    method : str
        As in ``cluster_ci`` (bootstraps are seeded with 0, so the report is reproducible).
    confidence : float
        Nominal coverage.
    missing : {"drop", "fail", "pass", "raise"}
        As in ``cluster_ci``.
    responded : column label, optional
        Explicit response indicator, as in ``cluster_ci``.
    case, rerun : dim names
        For a Dataset: its case and rerun dims.

    Returns
    -------
    Report

    Raises
    ------
    InvalidOptionError
        An invalid option (as in ``cluster_ci``), ``by`` that names the outcome, or ``over``
        that is the outcome or one of the ``by`` columns.
    TooFewClustersError
        A group (named in the message) with fewer than 2 clusters.
    DegenerateDataError
        A group (named in the message) whose continuous outcome has no variation.

    Examples
    --------
    >>> import clusterstats
    >>> demo = clusterstats.load_demo_data()
    >>> rep = clusterstats.report(demo, "correct", by="src", over="model")
    >>> print(rep.sentences()[0])  # doctest: +ELLIPSIS
    Meta-Llama-3.1-70B-Instruct: 12,032 examples in 91 src clusters are worth about 387 ...
    """

    opt.check_choice("missing", missing, opt.MISSING)
    options = opt.interval_options(
        estimand=estimand, method=method, confidence=confidence, missing=missing, rng=0
    )
    columns = adapters.columns_of(
        data, outcome, by, over=over, responded=responded, layout=(case, rerun)
    )
    design = adapters.mean_design(data, columns)
    by_labels = [] if by is None else opt.check_labels("by", by)
    if any(_same_label(label, outcome) for label in by_labels):
        raise InvalidOptionError(
            f"by= names the outcome column {outcome!r} itself: cluster by the columns the rows "
            "share (a document, a task), not by the outcome"
        )
    if over is not None and _same_label(over, outcome):
        raise InvalidOptionError(
            f"over={over!r} is the outcome column: group by a column that is not the outcome"
        )
    over_labels = [] if over is None else over if isinstance(over, (list, tuple)) else [over]
    if any(_same_label(label, o) for label in by_labels for o in over_labels):
        raise InvalidOptionError(
            f"over={over!r} is also a cluster column (by=): every group would hold a single "
            "cluster; group over a column that is not part of by"
        )
    medians = []
    for group in design.groups:
        sums = policy.apply_missing(group, design, missing).sums
        where = "" if design.over is None else f"group {group.label!r} of {design.over!r}: "
        if sums.n_clusters < 2:
            raise TooFewClustersError(
                f"{where}found {sums.n_clusters} cluster of {' + '.join(map(repr, design.by))}; "
                "at least 2 are needed to estimate the between-cluster variance"
                + (" (leave the group out of the report)" if where else "")
            )
        n_rows = float(sums.counts.sum())
        point = sums.shift + float(sums.totals.sum()) / n_rows
        if not group.is_binary and constant_up_to_rounding(sums, point):
            raise DegenerateDataError(
                f"{where}the {int(n_rows)} outcomes of {outcome!r} are all equal: a continuous "
                "outcome with no variation has no estimable uncertainty"
            )
        medians.append(float(np.median(sums.counts)))
    cis = build_cluster_ci(design, options)
    iccs = build_icc(design, confidence=options.confidence, missing=missing)
    medians = tuple(medians)
    if design.over is not None:
        return Report(
            results=cis.results,
            iccs=iccs.results,
            groups=cis.groups,
            over=", ".join(cis.dims),
            cluster_size_median=medians,
        )
    return Report(
        results=(cis,), iccs=(iccs,), groups=(None,), over=None, cluster_size_median=medians
    )


@dataclass(frozen=True, kw_only=True, repr=False)
class ClusteringCheck(TableResult):
    """Candidate groupings side by side, nested levels decomposed, crossed pairs combined,
    and a recommendation (returned by ``check_clustering``).

    ``to_frame()`` has one row per candidate, with the columns of ``columns`` (the keys of
    each ``candidates`` dict); ``nested_frame()`` and ``crossed_frame()`` give the other two
    tables.

    Attributes
    ----------
    outcome : str
        The outcome column.
    candidates : tuple of dict
        Per grouping: ``grouping`` (its name), ``n_clusters``, ``size_min``, ``size_mean``,
        ``size_max``, ``icc``, ``icc_low``, ``icc_high`` (the ICC and its interval),
        ``design_effect`` (that of the interval ``cluster_ci`` gives by default with this
        grouping, as everywhere in the library), ``se`` (that interval's standard error),
        ``widening`` (``se`` ÷ the naive standard error) and ``se_linearized`` (the CR1
        standard error, which the two-way comparison uses).
    nested : tuple of (level, variance_share)
        For groupings nested in one another, coarse to fine: the share of the outcome
        variance at each level (increments of the one-way ICCs), then ``within``.
    crossed : tuple of dict
        One dict per crossed pair (neither nests in the other): ``groupings``,
        ``se_two_way`` (the two-way cluster-robust standard error of Cameron, Gelbach &
        Miller 2011), ``se_first`` and ``se_second`` (the one-way ones).
    recommendation : str
        The grouping to cluster by, and why.
    notes : tuple of str
        E.g. an undefined ICC, or fewer than 20 clusters in a grouping.
    """

    outcome: str
    candidates: tuple[dict[str, Any], ...]
    nested: tuple[tuple[str, float], ...]
    crossed: tuple[dict[str, Any], ...]
    recommendation: str
    notes: tuple[str, ...] = ()

    _metric_labels: ClassVar[tuple[str, ...]] = ("grouping",)
    columns: ClassVar[tuple[str, ...]] = (
        "grouping",
        "n_clusters",
        "size_min",
        "size_mean",
        "size_max",
        "icc",
        "icc_low",
        "icc_high",
        "design_effect",
        "se",
        "widening",
        "se_linearized",
    )

    def to_frame(self) -> pd.DataFrame:
        """One row per candidate grouping, with the columns of ``columns``."""
        return pd.DataFrame(list(self.candidates), columns=list(self.columns))

    def nested_frame(self) -> pd.DataFrame:
        """``level``, ``variance_share`` (coarse to fine, then ``within``)."""
        return pd.DataFrame(list(self.nested), columns=["level", "variance_share"])

    def crossed_frame(self) -> pd.DataFrame:
        """One row per crossed pair: ``groupings``, ``se_two_way``, ``se_first``,
        ``se_second``."""
        return pd.DataFrame(
            list(self.crossed), columns=["groupings", "se_two_way", "se_first", "se_second"]
        )

    def _heading(self) -> str:
        return f"ClusteringCheck({self.outcome})"

    def _blocks(self) -> list[Lines | Table]:
        header = ("grouping", "K", "sizes", "ICC [CI]", "deff", "se", "widening")
        rows = tuple(
            (
                c["grouping"],
                c["n_clusters"],
                f"{c['size_min']:,}–{c['size_max']:,} (mean {fmt.size(c['size_mean'])})",
                fmt.proportion(c["icc"])
                + " "
                + fmt.proportion_interval(c["icc_low"], c["icc_high"]),
                fmt.number(c["design_effect"]),
                fmt.number(c["se"]),
                fmt.number(c["widening"]),
            )
            for c in self.candidates
        )
        lines = []
        if self.nested:
            shares = ", ".join(f"{level} {share:.1%}" for level, share in self.nested)
            lines.append(f"nested levels, share of variance: {shares}")
        for c in self.crossed:
            lines.append(
                f"crossed {c['groupings']}: two-way se {fmt.number(c['se_two_way'])} "
                f"(one-way {fmt.number(c['se_first'])} and {fmt.number(c['se_second'])})"
            )
        lines.append(f"recommendation: {self.recommendation}")
        return [Table(header, rows), Lines(tuple(lines))]


def _nests_in(fine: np.ndarray, coarse: np.ndarray) -> bool:
    """Whether every cluster of ``fine`` lies inside one cluster of ``coarse``."""
    pairs = pd.DataFrame({"fine": fine, "coarse": coarse}).drop_duplicates()
    return bool(pairs["fine"].is_unique)


def _same_label(a: Any, b: Any) -> bool:
    """Whether two column labels are the same (labels that do not compare are not)."""
    try:
        return bool(a == b)
    except (TypeError, ValueError):
        return False


def _check_window(window: Any) -> None:
    """A window must be a fixed, positive pandas frequency (``"10min"``, ``"1h"``, ``"2D"``)."""

    if not isinstance(window, str):
        raise InvalidOptionError(
            f"window must be a pandas frequency string such as '10min' or '1h', got {window!r}"
        )
    try:
        offset = to_offset(window)
    except ValueError:
        raise InvalidOptionError(
            f"window={window!r} is not a pandas frequency; use e.g. '30s', '10min', '1h' or '1D'"
        ) from None
    try:
        length = pd.Timedelta(offset)
    except ValueError:
        raise InvalidOptionError(
            f"window={window!r} has no fixed length (weeks, months and years vary); use a "
            "fixed one such as '7D' or '30D'"
        ) from None
    if not length > pd.Timedelta(0):
        raise InvalidOptionError(f"window must be a positive length, got {window!r}")


def check_clustering(
    data: Any,
    outcome: Hashable,
    candidates: Sequence[Hashable | Sequence[Hashable]] = (),
    *,
    time: Hashable | None = None,
    window: str | None = None,
    confidence: float = 0.95,
    missing: opt.Missing = "drop",
    case: Hashable = "case",
    rerun: Hashable = "rerun",
) -> ClusteringCheck:
    """Which grouping to cluster by: every candidate side by side.

    For each candidate grouping (a column, or a list of columns combined) and, with
    ``time=``/``window=``, for windows of a timestamp column (failures bunching in time,
    e.g. an API outage): the number of clusters, their sizes, the ICC with its interval,
    the design effect and the standard error of the interval ``cluster_ci`` gives by default
    with that grouping, and the widening. Groupings nested in one
    another (question within document) are decomposed into the variance share of each
    level: increments of the one-way ICCs, coarse to fine, then ``within``. Groupings that
    cross (document × template) get the two-way cluster-robust standard error of Cameron,
    Gelbach & Miller (2011), ``V_A + V_B − V_{A∩B}`` (statsmodels' ``cov_cluster_2groups``).
    The recommendation names the grouping whose standard error is largest, since
    clustering at a finer level than the true dependence understates it, or the two-way one
    when it exceeds every one-way standard error by more than 5%.

    Parameters
    ----------
    data : pandas.DataFrame, xarray.Dataset or dask DataFrame
        As in ``cluster_ci``. For a Dataset, candidates are its ``case`` and ``rerun``
        dims (or the frame columns they came from) and any coordinate with the outcome's dims.
    outcome : column label
        The outcome.
    candidates : sequence of column labels (or lists of labels)
        The groupings to compare; a list is one grouping of combined columns, and a single
        label is one candidate. Each must differ from the outcome and from the others, and
        have at least 2 clusters among the rows used.
    time : column label, optional
        Timestamps, to test windows of ``window`` as a grouping: a datetime column (naive or
        in one time zone), or strings that ``pandas.to_datetime`` parses. Numbers are
        refused, since their unit would be a guess (convert epoch seconds with
        ``pd.to_datetime(df[col], unit="s")``), as are durations, booleans, timestamps that
        mix time zones (convert with ``utc=True``), and missing timestamps among the rows
        used.
    window : str, optional
        A fixed, positive pandas frequency (``"30s"``, ``"10min"``, ``"1h"``, ``"1D"``), with
        ``time``.
    confidence : float
        Coverage of the ICC intervals.
    missing : {"drop", "fail", "pass", "raise"}
        As in ``cluster_ci``.
    case, rerun : dim names
        For a Dataset: its case and rerun dims.

    Returns
    -------
    ClusteringCheck

    Raises
    ------
    InvalidOptionError
        No candidate (and no ``time``), a candidate named twice or that is the outcome,
        ``time`` without ``window`` (or ``window`` without ``time``), or a window that is not
        a fixed positive frequency.
    ColumnNotFoundError
        An outcome, candidate or ``time`` column that is not in the data.
    InvalidClusterError
        Missing labels in a candidate, or a ``time`` column that does not hold timestamps
        (above).
    TooFewClustersError
        A candidate, or the time windows, with a single cluster among the rows used.
    EmptyDataError
        No row with a non-missing outcome.
    DegenerateDataError
        An outcome with the same value in every row used (no grouping changes its zero
        standard error).

    Examples
    --------
    >>> import clusterstats
    >>> demo = clusterstats.load_demo_data()
    >>> llama = demo[demo.model == "Meta-Llama-3.1-70B-Instruct"]
    >>> check = clusterstats.check_clustering(llama, "correct", ["src", "category"])
    >>> check.recommendation.split(":")[0]
    'cluster by category'
    """
    confidence = opt.check_confidence(confidence)
    opt.check_choice("missing", missing, opt.MISSING)
    if candidates is None:
        candidates = ()
    elif isinstance(candidates, (str, bytes)) or not isinstance(candidates, (list, tuple)):
        candidates = [candidates]  # one label is one candidate
    groupings: list[tuple[str, list[Hashable]]] = []
    for candidate in candidates:
        labels = opt.check_labels("candidates", candidate)
        name = " + ".join(map(str, labels))
        if len({str(label) for label in labels}) < len(labels):
            raise InvalidOptionError(f"candidate {candidate!r} names a column twice")
        if name in (n for n, _ in groupings):
            raise InvalidOptionError(f"candidate {name!r} is named twice in candidates")
        groupings.append((name, labels))
    if time is not None and window is None:
        raise InvalidOptionError("time= needs window= (a pandas frequency, e.g. '10min')")
    if window is not None:
        if time is None:
            raise InvalidOptionError(
                f"window={window!r} needs time= (the timestamp column to cut into windows)"
            )
        _check_window(window)
    if not groupings and time is None:
        raise InvalidOptionError("name at least one candidate grouping (or time= and window=)")
    candidates = [label for _, labels in groupings for label in labels]
    columns = adapters.columns_of(
        data, outcome, time=time, groupings=candidates, layout=(case, rerun)
    )
    design = adapters.rows_design(data, columns, groupings, missing=missing, window=window)
    for name, labels in groupings:
        if any(_same_label(label, outcome) for label in labels):
            raise InvalidOptionError(
                f"candidate {name!r} is the outcome column {outcome!r} itself: a grouping by the "
                "outcome makes every cluster constant; name the columns the rows share"
            )
    values = design.values
    binary = bool(np.isin(values, (0.0, 1.0)).all())
    if values.size == 0:
        raise EmptyDataError(f"no rows with a non-missing outcome {outcome!r} to check")
    everything = cluster_sums(values, np.zeros(values.size, dtype=np.intp))
    if constant_up_to_rounding(everything, float(values.mean())):
        raise DegenerateDataError(
            f"the outcome {outcome!r} has the same value ({float(values[0]):g}) in every row "
            f"used, so no grouping changes its standard error (it is 0 whatever the "
            "clustering); check_clustering needs an outcome that varies"
        )
    rows = []
    codes_of: dict[str, np.ndarray] = {}
    undefined = []
    flat = []
    for index, (name, codes) in enumerate(design.groupings):
        is_time = time is not None and index == len(design.groupings) - 1
        if is_time and (codes < 0).any():
            raise InvalidClusterError(
                f"time column {time!r} has {int((codes < 0).sum())} missing timestamps (NaT) "
                "among the rows used; give those rows a timestamp or drop them"
            )
        codes_of[name] = codes
        sums = cluster_sums(values, codes)
        if sums.n_clusters < 2:
            what = (
                f"time column {time!r} in windows of {window!r} puts every row in one window"
                if is_time
                else f"candidate {name!r} puts every row in one cluster"
            )
            hint = (
                "use a shorter window, or check the timestamps"
                if is_time
                else "drop it from candidates (a single cluster has no between-cluster variance)"
            )
            raise TooFewClustersError(
                f"{what} ({values.size} rows used): a grouping needs at least 2 clusters; {hint}"
            )
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ClusterStatsWarning)
            icc = summarize_icc(sums, confidence=confidence)
        if not np.isfinite(icc.icc):
            undefined.append(name)
        variance = cluster_robust(sums, "pooled", "CR1").variance
        if not variance > 0:
            flat.append(name)
        iid = iid_variance(sums)
        # the design effect of the interval cluster_ci would give with this grouping
        deff = default_design_effect(sums, "pooled", binary)[0] if variance > 0 else math.nan
        rows.append(
            {
                "grouping": name,
                "n_clusters": sums.n_clusters,
                "size_min": int(sums.counts.min()),
                "size_mean": float(sums.counts.mean()),
                "size_max": int(sums.counts.max()),
                "icc": icc.icc,
                "icc_low": icc.low,
                "icc_high": icc.high,
                "design_effect": deff,
                "se": math.sqrt(deff * iid) if deff > 0 else math.nan,
                "widening": math.sqrt(deff) if deff > 0 else math.nan,
                "se_linearized": math.sqrt(variance) if variance >= 0 else math.nan,
            }
        )
    names = [name for name, _ in design.groupings]
    nested_chain: list[str] = []
    crossed: list[dict[str, Any]] = []
    for i, a in enumerate(names):
        for b in names[i + 1 :]:
            a_in_b = _nests_in(codes_of[a], codes_of[b])
            b_in_a = _nests_in(codes_of[b], codes_of[a])
            if a_in_b or b_in_a:
                for level in (b, a) if a_in_b else (a, b):
                    if level not in nested_chain:
                        nested_chain.append(level)
                continue
            two_way = crossed_variance_of_rows(values, [codes_of[a], codes_of[b]])
            v = two_way.variance
            va, vb = (variance for subset, _, variance in two_way.terms if len(subset) == 1)
            crossed.append(
                {
                    "groupings": f"{a} x {b}",
                    "se_two_way": math.sqrt(v),
                    "se_first": math.sqrt(va),
                    "se_second": math.sqrt(vb),
                }
            )
    by_name = {r["grouping"]: r for r in rows}
    nested: list[tuple[str, float]] = []
    if len(nested_chain) > 1:
        ordered = sorted(nested_chain, key=lambda n: by_name[n]["n_clusters"])
        shares = nested_variance_shares([by_name[level]["icc"] for level in ordered])
        nested = list(zip([*ordered, "within"], shares, strict=True))
    best = max(rows, key=lambda r: r["se"] if np.isfinite(r["se"]) else -1.0)
    recommendation = (
        f"cluster by {best['grouping']}: its standard error ({best['se']:.4f}) is the largest "
        f"of the candidates (design effect {best['design_effect']:.2f}); clustering by a finer "
        "grouping would understate the dependence"
    )
    one_way = max(r["se_linearized"] for r in rows if np.isfinite(r["se_linearized"]))
    for c in crossed:
        # like with like: the two-way variance is a sum of CR1 (linearised) terms
        if c["se_two_way"] > one_way * 1.05:
            recommendation = (
                f"cluster two-way by {c['groupings']}: the two crossed groupings each carry "
                f"dependence, and the two-way standard error ({c['se_two_way']:.4f}) exceeds "
                f"every one-way one (cluster_ci(..., by={c['groupings'].split(' x ')!r}, "
                "crossed=True))"
            )
    notes = []
    if flat:
        notes.append(
            f"the cluster-robust variance is zero for {', '.join(flat)} (every cluster has the "
            "same mean)"
        )
    if undefined:
        notes.append(
            f"the ICC is undefined for {', '.join(undefined)} (one row per cluster, or no "
            "variation)"
        )
    small = [r["grouping"] for r in rows if r["n_clusters"] < 20]
    if small:
        notes.append(
            f"fewer than 20 clusters in {', '.join(small)}: their standard errors are "
            "themselves uncertain"
        )
    return ClusteringCheck(
        outcome=str(outcome),
        candidates=tuple(rows),
        nested=tuple(nested),
        crossed=tuple(crossed),
        recommendation=recommendation,
        notes=tuple(notes),
    )


def _group_text(group: Any) -> Any:
    """A group's label for a table: the labels of several ``over=`` columns joined."""
    return ", ".join(map(str, group)) if isinstance(group, tuple) else group
