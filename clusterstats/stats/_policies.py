"""Policies applied to a design, once for every statistic: missing outcomes (drop, count as
0 or 1, raise, weight by inverse response propensities), lonely strata, and warnings that
several computations share.

The arithmetic lives in the numeric core (``ClusterTable``, ``core.missing``,
``core.strata``); this module turns a policy name and a design into the core's inputs, and
writes the notes that say what was done.
"""

from __future__ import annotations

import functools
import math
import warnings
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, ParamSpec, TypeVar

import numpy as np
import pandas as pd
from numpy.typing import NDArray

from clusterstats import _display as fmt
from clusterstats._design import MeanDesign, MeanGroup, ResponseRows
from clusterstats.core import missing as mi
from clusterstats.core.grouping import ClusterSums, ClusterTable
from clusterstats.core.intervals import BINARY_ONLY_METHODS
from clusterstats.errors import (
    ClusterStatsError,
    ClusterStatsWarning,
    DegenerateDataError,
    EmptyDataError,
    InvalidOptionError,
    InvalidOutcomeError,
    MissingOutcomeError,
    SingletonClustersWarning,
    TooFewClustersError,
    warn,
)

__all__ = [
    "Applied",
    "apply_missing",
    "check_binary_method",
    "check_lonely",
    "empty_clusters_note",
    "ipw_fit",
    "missing_note",
    "naming_group",
    "once",
    "varying_missingness_note",
    "warns_once",
]

_VERB = {"fail": "counted as failures", "pass": "counted as passes"}


@dataclass(frozen=True)
class Applied:
    """One group's sums after a missing-data policy, and what the policy did."""

    sums: ClusterSums
    kept: NDArray[np.bool_]  # which of the group's clusters the sums keep
    n_missing: int
    n_missing_clusters: int
    missing_p_value: float  # Pearson's test of equal missing rates (NaN: nothing missing)
    strata: NDArray[np.intp] | None  # stratum codes of the kept clusters, 0..H-1
    strata_labels: tuple[Any, ...]


def apply_missing(
    group: MeanGroup,
    design: MeanDesign,
    missing: str,
    *,
    is_binary: bool | None = None,
) -> Applied:
    """The group's sums under ``missing`` ("drop", "fail", "pass" or "raise")."""
    table = group.table
    binary = group.is_binary if is_binary is None else is_binary
    n_missing = table.n_missing
    if n_missing and missing == "raise":
        raise MissingOutcomeError(
            f"outcome column {design.outcome!r} has {_total_missing(design)} missing values; "
            "use missing='drop' or missing='fail' to handle them"
        )
    if missing in ("fail", "pass") and n_missing:
        if not binary:
            fill = "0" if missing == "fail" else "1"
            raise InvalidOutcomeError(
                f"missing={missing!r} counts a missing outcome as {fill}, which needs a binary "
                "(0/1) outcome"
            )
        sums = table.imputed(0.0 if missing == "fail" else 1.0)
        kept = np.ones(table.n_clusters, dtype=bool)
    else:
        sums = table.complete_case()
        kept = table.answered_clusters
        if sums.n_clusters == 0:
            over = design.over
            where = "" if over is None else f" in group {group.label!r} of {over!r}"
            raise EmptyDataError(f"outcome {design.outcome!r} has no non-missing values{where}")
    missing_clusters = int((table.missing > 0).sum()) if n_missing else 0
    p_value = mi.missingness_chi_square(table.rows, table.missing)[2] if n_missing else math.nan
    codes, labels = None, ()
    if group.strata is not None:
        used = group.strata[kept]
        codes = pd.factorize(used, sort=True)[0]
        labels = tuple(design.strata_labels[i] for i in np.unique(used))
    return Applied(sums, kept, n_missing, missing_clusters, p_value, codes, labels)


def _total_missing(design: MeanDesign) -> int:
    return sum(g.table.n_missing for g in design.groups)


def missing_note(n_missing: int, n_clusters: int, missing: str) -> str:
    """``"12 rows with a missing outcome (in 3 clusters) were dropped"``."""
    return (
        f"{fmt.count(n_missing, 'row')} with a missing outcome (in "
        f"{fmt.count(n_clusters, 'cluster')}) "
        f"{'was' if n_missing == 1 else 'were'} {_VERB.get(missing, 'dropped')}"
    )


def empty_clusters_note(n_empty: int, n_kept: int, options: Any) -> str:
    """What happened to the clusters whose every outcome is missing, in either convention."""
    which = fmt.count(n_empty, "cluster")
    if options.empty_clusters == "keep":
        return (
            f"{which} whose every outcome is missing {'is' if n_empty == 1 else 'are'} kept as "
            f"sampled (R survey's svymean(na.rm=TRUE)): the CR1 factor counts {n_kept + n_empty} "
            "clusters"
        )
    return (
        f"{which} whose every outcome is missing {'was' if n_empty == 1 else 'were'} dropped: "
        f"the variance counts the {n_kept} clusters with data (R survey's "
        "svymean(na.rm=TRUE) keeps them: empty_clusters='keep')"
    )


def varying_missingness_note(p_value: float, missing: str) -> str:
    """The missing rate varies across clusters: what that means for the estimate made, a
    complete-case one (``missing="drop"``) or one that scores every missing row
    (``"fail"``, ``"pass"``)."""
    shown = f"= {p_value:.2g}" if p_value > 1e-16 else "< 1e-16"
    if missing in _VERB:
        return (
            f"the missing rate varies across clusters (chi-square p {shown}): the clusters "
            f"where rows are missing score {'lower' if missing == 'fail' else 'higher'} "
            f"because those rows were {_VERB[missing]}; see missing_report() for the "
            "complete-case and IPW estimates"
        )
    return (
        f"the missing rate varies across clusters (chi-square p {shown}): missing rows "
        "concentrate in some clusters, which can bias the complete-case estimate; see "
        "missing_report() and missing='ipw'"
    )


def check_weighted_clusters(
    n_clusters: int, weights: Any, cluster_labels: list[Any], *, unit: str = "cluster"
) -> None:
    """At least two clusters must carry weight: one informative cluster cannot show how
    clusters vary, however many rows it has or however many clusters weigh zero."""
    if n_clusters < 2:
        which = f" ({cluster_labels[0]!r})" if cluster_labels else ""
        raise TooFewClustersError(
            f"weights column {weights!r} is positive in only {n_clusters} {unit}{which}: "
            "every other "
            f"{unit} weighs zero, and at least 2 must carry weight to estimate the "
            "between-cluster variance"
        )


def zero_weight_note(n_rows: int, n_clusters: int, *, rows: str = "rows") -> str | None:
    """The note for rows (or items) of weight zero, which the weighted sample leaves out."""
    if not n_rows:
        return None
    whole = f", {n_clusters} cluster{'s' if n_clusters != 1 else ''} entirely" if n_clusters else ""
    return (
        f"{n_rows:,} {rows} weigh zero and are not in the weighted sample{whole}; the counts, "
        f"the variance and its degrees of freedom are those of the {rows} that carry weight"
    )


@contextmanager
def core_errors() -> Iterator[None]:
    """The core's errors as the library's: its own precise errors pass as they are (e.g.
    ``DegenerateDataError``), and a ``ValueError`` from its checks of an option becomes an
    ``InvalidOptionError`` with the same message."""
    try:
        yield
    except ClusterStatsError:
        raise
    except ValueError as error:
        raise InvalidOptionError(str(error)) from None


@contextmanager
def naming_group(label: Any, over: Any, *, kind: str = "group") -> Iterator[None]:
    """Errors about one ``over=`` group (or stratum) name it: "group 'b' of 'task': found 1
    cluster..." rather than a message that could be about any of them."""
    try:
        yield
    except (
        TooFewClustersError,
        DegenerateDataError,
        EmptyDataError,
        InvalidOutcomeError,
        MissingOutcomeError,
    ) as error:
        named = f"{kind} {label!r} of {over!r}"
        if over is None or named in str(error):
            raise
        raise type(error)(f"{named}: {error}") from None


def check_binary_method(method: str, is_binary: bool, group: Any = None, over: Any = None) -> None:
    """Methods for 0/1 outcomes refuse scores (naming the ``over=`` group that has them)."""

    if method in BINARY_ONLY_METHODS and not is_binary:
        where = "" if over is None else f" in group {group!r} of {over!r}"
        raise InvalidOutcomeError(
            f"method {method!r} needs a binary outcome (values 0/1), but the outcome has other "
            f"values{where}; use 'cr2', 'cr1' or a bootstrap method for continuous scores"
        )


def check_lonely(strata: NDArray[np.intp], labels: tuple[Any, ...], lonely: str) -> None:
    """``lonely="fail"``: a stratum with a single cluster is an error that names it."""
    counts = np.bincount(strata)
    lonely_labels = [labels[i] for i in np.flatnonzero(counts == 1)]
    if lonely_labels and lonely == "fail":
        raise TooFewClustersError(
            f"{len(lonely_labels)} "
            + (
                "stratum has a single cluster, so it cannot estimate its own variance: "
                if len(lonely_labels) == 1
                else "strata have a single cluster, so they cannot estimate their own variance: "
            )
            + f"{lonely_labels[:5]}; choose lonely='adjust' (centre it on the "
            "overall mean), 'average' (give it the other strata's average) or 'certainty' (it "
            "contributes nothing), as R survey's survey.lonely.psu"
        )


@dataclass(frozen=True)
class IPWFit:
    """A Hájek IPW fit of one group, with the words that describe it."""

    fit: mi.IPWEstimate
    described: str
    observed: ClusterSums  # the answered rows' sums (naive interval, ICC)
    lost_clusters: tuple[Any, ...]
    n_missing: int
    n_missing_clusters: int


def ipw_fit(
    group: MeanGroup,
    design: MeanDesign,
    rows: ResponseRows | None,
    *,
    propensity: str,
    min_propensity: float,
) -> IPWFit:
    """Fit the response model of one group: cluster rates (fixed effects), the rates shrunk
    towards the overall rate, or a logistic model with cluster effects and covariates."""
    table: ClusterTable = group.table
    if not (table.answered > 0).any():
        raise InvalidOutcomeError("no row has a usable response")
    totals = table.totals + table.shift * table.answered  # the answered outcomes' sums
    try:
        if propensity == "logistic":
            assert rows is not None  # the adapter gives the rows when covariates are named
            fit, logistic = mi.hajek_logistic_propensity(
                rows.values,
                (~np.isnan(rows.values)).astype(np.float64),
                rows.codes,
                rows.covariates,
                min_propensity=min_propensity,
            )
            described = (
                f"logistic response model with cluster effects and {rows.covariates.shape[1]} "
                f"covariates ({logistic.iterations} Newton steps)"
            )
        else:
            fit = mi.hajek_cluster_propensity(
                table.rows,
                table.answered,
                totals,
                min_propensity=min_propensity,
                shrink=propensity == "shrunk",
            )
            described = (
                "cluster response rates shrunk towards the overall rate"
                if propensity == "shrunk"
                else "each cluster's own response rate"
            )
    except ClusterStatsError:  # already precise (e.g. DegenerateDataError)
        raise
    except ValueError as error:  # the core's own checks of an option
        raise InvalidOptionError(str(error)) from None
    lost_ids = group.cluster_ids[table.answered == 0]
    lost = tuple(design.cluster_names(lost_ids)) if lost_ids.size else ()
    return IPWFit(
        fit=fit,
        described=described,
        observed=table.complete_case(),
        lost_clusters=lost,
        n_missing=table.n_missing,
        n_missing_clusters=int((table.missing > 0).sum()),
    )


@contextmanager
def once(*, reemit: bool = True) -> Iterator[list[str]]:
    """Collect the library's warnings of several computations and re-emit each distinct
    message once (in the order first seen; not at all with ``reemit=False``); the list
    yielded holds the messages after the block, to become notes."""
    messages: list[str] = []
    categories: dict[str, type[Warning]] = {}
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", ClusterStatsWarning)
        yield messages
    for w in caught:
        if issubclass(w.category, ClusterStatsWarning):
            categories.setdefault(str(w.message), w.category)
        else:  # not ours: let it through unchanged
            warnings.warn_explicit(w.message, w.category, w.filename, w.lineno)
    for message, category in categories.items():
        messages.append(message)
        if reemit:
            warn(message, category)


P = ParamSpec("P")
T = TypeVar("T")


def warns_once(build: Callable[P, T]) -> Callable[P, T]:
    """A builder whose warnings are each emitted once per call: with ``over=`` a warning that
    every group shares (few clusters, missing rows) is one warning, not one per group; each
    group's notes keep it."""

    @functools.wraps(build)
    def wrapped(*args: P.args, **kwargs: P.kwargs) -> T:
        with once():
            return build(*args, **kwargs)

    return wrapped


def warn_singleton_combinations(design: Any) -> None:
    """A :class:`SingletonClustersWarning` when the clusters made from the combination of
    several ``by`` columns are mostly single rows (in the group where they are most)."""
    shares = [float((g.table.rows == 1).mean()) for g in design.groups]
    worst = max(range(len(shares)), key=shares.__getitem__)
    if shares[worst] <= 0.5:
        return
    group = design.groups[worst]
    where = "" if design.over is None else f" (group {group.label!r})"
    columns = ", ".join(map(repr, design.by))
    warn(
        f"by=[{columns}] makes the cluster their combination: {group.table.n_clusters:,} "
        f"clusters{where}, {shares[worst]:.0%} of them a single row, so rows that share only "
        "one of the columns are taken as independent; if each column moves outcomes on its "
        "own, the groupings are crossed: pass crossed=True (--crossed on the command line; "
        "check_clustering compares the groupings)",
        SingletonClustersWarning,
    )
