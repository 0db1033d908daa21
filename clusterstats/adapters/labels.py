"""Column labels: the roles one call names (:class:`Columns`, checked once), and the checks
of a label, of the columns a frame must hold, and of values that can be labels.

Every adapter reads the columns a call names through a :class:`Columns`; the Arrow and dask
adapters load exactly :meth:`Columns.names`, so a column no role names is never read.
"""

from __future__ import annotations

import warnings
from collections.abc import Hashable, Sequence
from dataclasses import dataclass, fields, replace
from typing import Any

import numpy as np
import pandas as pd

from clusterstats.errors import (
    ColumnNotFoundError,
    InvalidClusterError,
    InvalidDataError,
    InvalidInputError,
    InvalidOptionError,
)

__all__ = [
    "Columns",
    "as_labels",
    "check_distinct_roles",
    "check_label",
    "check_time_column",
    "is_hashable",
    "require_columns",
]


@dataclass(frozen=True)
class Columns:
    """The columns one call names, by role: a role that names one column holds its label
    (None when the role is not used), a role that can name several (``by``, ``over``,
    ``on``, ``covariates``, ``groupings``) a tuple of labels (empty when unused).
    ``other`` is the second outcome column of a paired comparison of two columns,
    ``groupings`` the candidate cluster columns of ``check_clustering`` (which names a
    candidate equal to the outcome itself).

    Built once, at a public function's front, with :meth:`of`, which checks every label: each
    is a label (hashable), a role of one column is given one, and the outcome is not also a
    cluster, group, stratum, pairing or weight column.

    Examples
    --------
    >>> cols = Columns.of("passed", ["doc", "template"], over="model", strata="subject")
    >>> cols.names(), cols.strata, cols.by
    (['passed', 'doc', 'template', 'model', 'subject'], 'subject', ('doc', 'template'))
    >>> Columns.of(outcome="doc", by="doc")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    clusterstats.errors.InvalidOptionError: column 'doc' is both the outcome and by=; ...
    """

    outcome: Any = None
    by: tuple[Hashable, ...] = ()
    over: tuple[Hashable, ...] = ()
    strata: Hashable | None = None
    responded: Hashable | None = None
    weights: Hashable | None = None
    on: tuple[Hashable, ...] = ()
    model: Hashable | None = None
    case: Hashable | None = None
    rerun: Hashable | None = None
    time: Hashable | None = None
    reason: Hashable | None = None
    covariates: tuple[Hashable, ...] = ()
    other: Hashable | None = None
    groupings: tuple[Hashable, ...] = ()
    order: Hashable | None = None
    #: The judge's score on every row, beside human labels in ``outcome`` (``judged_ci``).
    judge: Hashable | None = None
    #: The stated probability that each row was labelled (``judged_ci``).
    inclusion: Hashable | None = None
    #: The dims of a Dataset laid out as (case, rerun): names of dims, not of columns, so
    #: never among :meth:`names`.
    layout: tuple[Hashable, Hashable] = ("case", "rerun")
    #: Whether ``outcome`` and ``by`` hold the values themselves (``data=None``), not labels.
    arrays: bool = False
    #: The roles given as a list or a tuple (several columns), with that type, so
    #: :meth:`given` returns each role in the form the caller wrote it.
    listed: frozenset[tuple[str, type]] = frozenset()

    @classmethod
    def of(
        cls,
        outcome: Any = None,
        by: Any = None,
        *,
        layout: tuple[Hashable, Hashable] = ("case", "rerun"),
        **roles: Any,
    ) -> Columns:
        """The columns of ``roles`` (``role=label``, or a list or tuple of labels; None for
        a role not used), checked; ``layout`` names a Dataset's (case, rerun) dims."""
        unknown = sorted(set(roles) - set(_ROLES))
        if unknown:  # a programming slip inside the package, not a user's
            raise TypeError(f"unknown column roles {unknown}")
        values: dict[str, Any] = {}
        listed = set()
        for role, labels in {"outcome": outcome, "by": by, **roles}.items():
            if labels is None:
                continue
            if role in _ONE_COLUMN and (
                isinstance(labels, (list, tuple, set, dict)) or not is_hashable(labels)
            ):
                raise InvalidOptionError(
                    f"{role}= names one column of {role}, got {type(labels).__name__}"
                )
            if role not in _SEVERAL:
                check_label(labels, role, arrays_hint=role == "outcome")
                values[role] = labels
                continue
            several = isinstance(labels, (list, tuple))
            if several:
                listed.add((role, type(labels)))
            for label in labels if several else [labels]:
                check_label(label, role)
            values[role] = tuple(labels) if several else (labels,)
        columns = cls(**values, layout=layout, listed=frozenset(listed))
        if columns.outcome is not None:
            for role in (
                "by",
                "over",
                "strata",
                "on",
                "model",
                "weights",
                "order",
                "judge",
                "inclusion",
            ):
                if columns.outcome in columns.labels(role):
                    raise InvalidOptionError(
                        f"column {columns.outcome!r} is both the outcome and {role}=; name "
                        "different columns"
                    )
        return columns

    def with_roles(self, **roles: Any) -> Columns:
        """These columns with ``roles`` added or replaced, checked as :meth:`of` checks."""
        given = {role: self.given(role) for role in _ROLES}
        return Columns.of(**{**given, **roles}, layout=self.layout)

    def labels(self, role: str) -> tuple[Hashable, ...]:
        """The labels of ``role`` as a tuple, whichever its kind (empty when unused)."""
        value = getattr(self, role)
        if role in _SEVERAL:
            return value
        return () if value is None else (value,)

    def names(self) -> list[Hashable]:
        """Every column named, each once, in the order of the roles."""
        wanted: list[Hashable] = []
        for role in _ROLES:
            for label in self.labels(role):
                if label not in wanted:
                    wanted.append(label)
        return wanted

    @classmethod
    def of_values(cls, outcome: Any, by: Any, **roles: Any) -> Columns:
        """The columns of a call with ``data=None``: ``outcome`` and ``by`` are the values
        themselves (array-likes, paired by position; checked where they are read), the other
        roles labels, checked."""
        columns = cls.of(**roles)
        return replace(columns, outcome=outcome, by=(by,), arrays=True)

    def given(self, role: str) -> Any:
        """The ``role`` as the caller gave it: None when unused, a list (or tuple) when the
        caller listed columns (even one), else the one label."""
        labels = getattr(self, role)
        if role not in _SEVERAL:
            return labels
        for listed_role, kind in self.listed:
            if listed_role == role:
                return kind(labels)
        return labels[0] if labels else None


_ROLES = tuple(f.name for f in fields(Columns) if f.name not in ("layout", "arrays", "listed"))
#: Roles that name one column only (a weight per row).
_ONE_COLUMN = ("weights", "judge", "inclusion")
#: Roles that can name several columns (a tuple of labels).
_SEVERAL = ("by", "over", "on", "covariates", "groupings")


def as_labels(by: Hashable | Sequence[Hashable], role: str = "by") -> list[Hashable]:
    """One or more column labels as a list (a list or tuple names several columns)."""
    if isinstance(by, (list, tuple)):
        if not by:
            raise InvalidOptionError(f"{role}= needs at least one column, got {by!r}")
        labels = list(by)
    else:
        labels = [by]
    for label in labels:
        check_label(label, role)
    return labels


def check_label(label: Any, role: str, *, arrays_hint: bool = True) -> None:
    """A column label must be hashable: a Series or an array where a label is expected is
    the most common slip (``by=df["g"]`` for ``by="g"``)."""
    try:
        hash(label)
    except TypeError:
        kind = type(label).__name__
        hint = (
            f" (pass its name, {label.name!r})"
            if isinstance(label, pd.Series) and label.name is not None
            else ""
        )
        arrays = (
            "; for arrays of values pass data=None with the arrays as outcome and by"
            if arrays_hint
            else ""
        )
        message = f"{role}= takes column labels, not a {kind}{hint}{arrays}"
        raise InvalidInputError(message) from None


def require_columns(frame: pd.DataFrame, labels: Sequence[Hashable]) -> None:
    """Every label names exactly one column of the frame."""
    for label in labels:
        check_label(label, "column")
        if label not in frame.columns:
            raise ColumnNotFoundError(label, list(frame.columns))
    if not frame.columns.is_unique:
        for label in labels:
            count = int((frame.columns == label).sum())
            if count > 1:
                raise InvalidDataError(
                    f"column {label!r} appears {count} times in the frame; rename or drop the "
                    "duplicates so that each label names one column"
                )


def check_distinct_roles(outcome: Hashable, **roles: Any) -> None:
    """The outcome column cannot also be a cluster, group or stratum column: the interval
    would be one of the ids."""
    for role, labels in roles.items():
        if labels is None:
            continue
        for label in labels if isinstance(labels, (list, tuple)) else [labels]:
            if label == outcome:
                raise InvalidOptionError(
                    f"column {outcome!r} is both the outcome and {role}=; name different columns"
                )


def is_hashable(value: Any) -> bool:
    """Whether a value can be a label (a dict key): lists, dicts and arrays cannot."""
    try:
        hash(value)
    except TypeError:
        return False
    return True


def _time_column(data: Any, time: Hashable) -> Any:
    """The ``time`` column of a DataFrame (pandas or dask) or the ``time`` variable of a
    Dataset; None if there is none (the adapter then names what is missing)."""
    try:
        if isinstance(data, pd.DataFrame) or hasattr(data, "npartitions"):
            return data[time] if time in data.columns else None
        if hasattr(data, "data_vars"):  # an xarray Dataset
            return data[time] if time in data.variables else None
    except TypeError:  # an unhashable label: the adapter says so
        return None
    return None


_NUMERIC_KINDS = ("integer", "floating", "mixed-integer-float", "decimal", "boolean")


def _time_zone_errors() -> tuple[type[Exception], ...]:
    """What flooring local times at a daylight-saving change raises: ``ValueError`` in pandas 3,
    pytz's own errors (not ``ValueError`` subclasses) in pandas 2 with pytz time zones."""
    try:
        import pytz
    except ImportError:
        return (ValueError,)
    return (ValueError, pytz.exceptions.InvalidTimeError)


_TIME_ZONE_ERRORS = _time_zone_errors()


def check_time_column(data: Any, time: Hashable, window: str) -> None:
    """Refuse a ``time`` column that does not hold timestamps: numbers (their unit would be a
    guess: pandas would read epoch seconds as nanoseconds), booleans, durations, strings that
    do not parse, timestamps that mix time zones, or local times whose windows start at a
    daylight-saving change. Missing timestamps are refused later, among the rows used.
    A ``data`` without that column passes: the design names what is missing."""
    column = _time_column(data, time)
    if column is None:
        return
    dtype = column.dtype
    what = f"time column {time!r}"
    if isinstance(dtype, pd.DatetimeTZDtype):
        if hasattr(column, "compute"):
            column = column.compute()
        try:
            pd.Series(column, copy=False).dt.floor(window)
        except _TIME_ZONE_ERRORS:
            raise InvalidClusterError(
                f"{what} holds local times ({dtype.tz}) where a window of {window!r} would start "
                "at an ambiguous or nonexistent time (a daylight-saving change); convert it to "
                f"UTC first, e.g. df[{time!r}].dt.tz_convert('UTC')"
            ) from None
        return
    if pd.api.types.is_datetime64_dtype(dtype):
        return
    convert = f"pd.to_datetime(df[{time!r}], unit='s')"
    if pd.api.types.is_bool_dtype(dtype):
        raise InvalidClusterError(f"{what} holds booleans, not timestamps")
    if pd.api.types.is_timedelta64_dtype(dtype):
        raise InvalidClusterError(
            f"{what} holds durations ({dtype}), not timestamps; add them to a start time "
            f"first, e.g. pd.Timestamp('2026-01-01') + df[{time!r}]"
        )
    numeric = f"{what} holds numbers ({{}}), not timestamps: their unit (seconds? milliseconds?)"
    numeric += f" would be a guess; convert them first, e.g. {convert} for epoch seconds"
    if pd.api.types.is_numeric_dtype(dtype):
        raise InvalidClusterError(numeric.format(dtype))
    if hasattr(column, "compute"):  # dask: the adapter reads the column anyway
        column = column.compute()
    values = pd.Series(np.asarray(getattr(column, "values", column)).ravel())
    kind = pd.api.types.infer_dtype(values, skipna=True)
    if kind in _NUMERIC_KINDS:
        raise InvalidClusterError(numeric.format(f"{kind} values of dtype {dtype}"))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # pandas' format-inference warnings
        try:
            pd.to_datetime(values)
            return
        except (ValueError, TypeError, OverflowError):
            pass
        try:
            pd.to_datetime(values, utc=True)
        except (ValueError, TypeError, OverflowError):
            parsed = pd.to_datetime(values, errors="coerce", utc=True, format="mixed")
            bad = values[parsed.isna() & values.notna()]
            example = f" (e.g. {bad.iloc[0]!r})" if len(bad) else ""
            raise InvalidClusterError(
                f"{what} holds values that are not timestamps{example}; convert it with "
                f"pd.to_datetime(df[{time!r}], format=...) first"
            ) from None
    raise InvalidClusterError(
        f"{what} mixes time zones (or zone-aware and naive timestamps), so its windows are "
        f"ambiguous; convert it to one zone first, e.g. pd.to_datetime(df[{time!r}], utc=True)"
    )
