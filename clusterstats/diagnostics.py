"""Which grouping matters (``check_clustering``) and what to report (``report``)."""

from __future__ import annotations

import math
import warnings
from collections.abc import Hashable, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np
import pandas as pd

from clusterstats import _display as fmt
from clusterstats import api
from clusterstats._frame import (
    MISSING_POLICIES,
    _as_labels,
    _require_columns,
    check_binary,
    cluster_codes,
    impute_missing,
    outcome_values,
    prepare,
)
from clusterstats.core.grouping import cluster_sums
from clusterstats.core.summary import summarize_icc
from clusterstats.core.variance import (
    cluster_robust,
    iid_variance,
    nested_variance_shares,
    two_way_variance,
)
from clusterstats.errors import ClusterStatsWarning, InvalidOptionError, MissingOutcomeError
from clusterstats.results import GroupedResults, Report

__all__ = ["ClusteringCheck", "check_clustering", "report"]


def report(
    data: Any,
    outcome: Hashable,
    by: Hashable | Sequence[Hashable],
    *,
    over: Hashable | None = None,
    estimand: str = "pooled",
    method: str = "auto",
    confidence: float = 0.95,
    missing: str = "drop",
) -> Report:
    """Everything seed 003 says to report about a clustered result, per ``over`` group: the
    number of clusters and the distribution of their sizes, the ICC with its interval, the
    clustered interval and how it was computed, the naive interval beside it, the design
    effect and effective n, missing rows, and a sentence a reader can quote. Renders as
    text, HTML, Markdown (``to_markdown()``) and a frame (``to_frame()``); ``plot()`` draws
    the forest plot.

    Examples
    --------
    >>> import clusterstats
    >>> demo = clusterstats.load_demo_data()
    >>> rep = clusterstats.report(demo, "correct", by="src", over="model")
    >>> print(rep.sentences()[0])  # doctest: +ELLIPSIS
    Meta-Llama-3.1-70B-Instruct: 2,173 examples in 91 src clusters are worth about 835 ...
    """
    cis = api.cluster_ci(
        data,
        outcome,
        by,
        over=over,
        estimand=estimand,
        method=method,
        confidence=confidence,
        missing=missing,
        rng=0,
    )
    iccs = api.icc(data, outcome, by, over=over, confidence=confidence, missing=missing)
    prepared = prepare(data, outcome, by, over=over, missing=missing)
    medians = tuple(float(np.median(p.sums.counts)) for p in prepared)
    if isinstance(cis, GroupedResults):
        return Report(
            results=cis.results,
            iccs=iccs.results,
            groups=cis.groups,
            over=str(over),
            cluster_size_median=medians,
        )
    return Report(
        results=(cis,), iccs=(iccs,), groups=(None,), over=None, cluster_size_median=medians
    )


@dataclass(frozen=True, kw_only=True, repr=False)
class ClusteringCheck:
    """Candidate groupings side by side, nested levels decomposed, crossed pairs combined,
    and a recommendation.

    Attributes
    ----------
    candidates : tuple of dict
        Per grouping: ``grouping``, ``n_clusters``, ``size_min``, ``size_mean``,
        ``size_max``, ``icc``, ``icc_low``, ``icc_high``, ``design_effect``, ``se``,
        ``widening`` (clustered ÷ naive interval width).
    nested : tuple of (grouping, variance_share)
        For groupings nested in one another, coarse to fine: the share of the outcome
        variance at each level (ICC increments of the one-way ANOVA), then ``within``.
    crossed : tuple of dict
        For groupings that cross (neither nests in the other): the two-way
        (Cameron–Gelbach–Miller) standard error beside each one-way one.
    recommendation : str
    """

    outcome: str
    candidates: tuple[dict[str, Any], ...]
    nested: tuple[tuple[str, float], ...]
    crossed: tuple[dict[str, Any], ...]
    recommendation: str
    notes: tuple[str, ...] = ()

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

    def __repr__(self) -> str:
        header = ["grouping", "K", "sizes", "ICC [CI]", "deff", "se", "widening"]
        rows = [
            [
                c["grouping"],
                c["n_clusters"],
                f"{c['size_min']}–{c['size_max']} (mean {fmt.number(c['size_mean'], 3)})",
                f"{fmt.number(c['icc'], 3)} {fmt.interval(c['icc_low'], c['icc_high'], 3)}",
                fmt.number(c["design_effect"], 3),
                fmt.number(c["se"]),
                fmt.number(c["widening"], 3),
            ]
            for c in self.candidates
        ]
        lines = [f"ClusteringCheck({self.outcome})", fmt.text_table(header, rows)]
        if self.nested:
            shares = ", ".join(f"{level} {share:.1%}" for level, share in self.nested)
            lines.append(f"  nested levels, share of variance: {shares}")
        for c in self.crossed:
            lines.append(
                f"  crossed {c['groupings']}: two-way se {fmt.number(c['se_two_way'])} "
                f"(one-way {fmt.number(c['se_first'])} and {fmt.number(c['se_second'])})"
            )
        lines.append(f"  recommendation: {self.recommendation}")
        return "\n".join(lines) + "".join(f"\n  note: {n}" for n in self.notes)

    def _repr_html_(self) -> str:
        rows = [[c[k] for k in self.columns] for c in self.candidates]
        return fmt.html_table(
            list(self.columns), rows, f"ClusteringCheck: {self.outcome}", [self.recommendation]
        )


def _nests_in(fine: np.ndarray, coarse: np.ndarray) -> bool:
    """Whether every cluster of ``fine`` lies inside one cluster of ``coarse``."""
    pairs = pd.DataFrame({"fine": fine, "coarse": coarse}).drop_duplicates()
    return bool(pairs["fine"].is_unique)


def check_clustering(
    data: Any,
    outcome: Hashable,
    candidates: Sequence[Hashable | Sequence[Hashable]] = (),
    *,
    time: Hashable | None = None,
    window: str | None = None,
    confidence: float = 0.95,
    missing: str = "drop",
) -> ClusteringCheck:
    """Which grouping to cluster by: every candidate side by side.

    For each candidate grouping (a column, or a list of columns combined) and, with
    ``time=``/``window=``, for windows of a timestamp column (failures bunching in time,
    e.g. an API outage): the number of clusters, their sizes, the ICC with its interval,
    the design effect and the widening of the interval. Groupings nested in one another
    (question within document) are decomposed into the variance share of each level;
    groupings that cross (document × template) get the two-way cluster-robust standard error
    (Cameron, Gelbach & Miller 2011). The recommendation names the grouping whose standard
    error is largest, since clustering at a finer level than the true dependence
    understates it, and the two-way one when two crossed groupings both matter.

    Examples
    --------
    >>> import clusterstats
    >>> demo = clusterstats.load_demo_data()
    >>> llama = demo[demo.model == "Meta-Llama-3.1-70B-Instruct"]
    >>> check = clusterstats.check_clustering(llama, "correct", ["src", "category"])
    >>> check.recommendation.split(":")[0]
    'cluster by category'
    """
    confidence = api._check_confidence(confidence)
    if not isinstance(data, pd.DataFrame):
        raise TypeError(f"data must be a pandas DataFrame, got {type(data).__name__}")
    frame = data
    groupings: list[tuple[str, list[Hashable]]] = []
    for candidate in candidates:
        labels = _as_labels(candidate)
        groupings.append((" + ".join(map(str, labels)), labels))
    if time is not None:
        if window is None:
            raise InvalidOptionError("time= needs window= (a pandas frequency, e.g. '10min')")
        _require_columns(data, [time])
        stamps = pd.to_datetime(data[time], errors="raise")
        try:
            bins = stamps.dt.floor(window)
        except ValueError as error:
            raise InvalidOptionError(
                f"window={window!r} is not a pandas frequency: {error}"
            ) from None
        name = f"{time} per {window}"
        frame = data.assign(**{name: bins})
        groupings.append((name, [name]))
    if not groupings:
        raise InvalidOptionError("name at least one candidate grouping (or time= and window=)")
    rows = []
    codes_of: dict[str, np.ndarray] = {}
    if missing not in MISSING_POLICIES:
        raise InvalidOptionError(f"missing must be one of {MISSING_POLICIES}, got {missing!r}")
    raw = outcome_values(frame[outcome], outcome)
    if missing == "raise" and np.isnan(raw).any():
        raise MissingOutcomeError(
            f"outcome {outcome!r} has {int(np.isnan(raw).sum())} missing values"
        )
    keep = ~np.isnan(raw) if missing == "drop" else np.ones(raw.size, dtype=bool)
    values = raw[keep] if missing == "drop" else impute_missing(raw, missing, check_binary(raw))
    undefined = []
    for name, labels in groupings:
        codes = cluster_codes(frame, labels)[keep]
        codes = pd.factorize(codes, sort=True)[0]
        codes_of[name] = codes
        sums = cluster_sums(values, codes)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ClusterStatsWarning)
            icc = summarize_icc(sums, confidence=confidence) if sums.n_clusters > 1 else None
        if icc is None or not np.isfinite(icc.icc):
            undefined.append(name)
        variance = (
            cluster_robust(sums, "pooled", "CR1").variance if sums.n_clusters > 1 else math.nan
        )
        iid = iid_variance(sums)
        rows.append(
            {
                "grouping": name,
                "n_clusters": sums.n_clusters,
                "size_min": int(sums.counts.min()),
                "size_mean": float(sums.counts.mean()),
                "size_max": int(sums.counts.max()),
                "icc": math.nan if icc is None else icc.icc,
                "icc_low": math.nan if icc is None else icc.low,
                "icc_high": math.nan if icc is None else icc.high,
                "design_effect": variance / iid if iid > 0 else math.nan,
                "se": math.sqrt(variance) if variance >= 0 else math.nan,
                "widening": math.sqrt(variance / iid) if iid > 0 else math.nan,
            }
        )
    names = [name for name, _ in groupings]
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
            v, va, vb, _ = two_way_variance(values, codes_of[a], codes_of[b])
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
    for c in crossed:
        if c["se_two_way"] > best["se"] * 1.05:
            recommendation = (
                f"cluster two-way by {c['groupings']}: the two crossed groupings each carry "
                f"dependence, and the two-way standard error ({c['se_two_way']:.4f}) exceeds "
                f"every one-way one"
            )
    notes = []
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
