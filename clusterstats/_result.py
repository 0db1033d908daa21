"""The result base: fields declared once, and everything rendered from that declaration.

A one-row result (:class:`Result`) is a frozen, keyword-only dataclass whose fields, in
declaration order, are its ``to_dict()`` keys and its ``to_frame()`` columns (a field declared with
``field(metadata={"frame": False})`` is kept out of both: per-case tables and the like). The
class names, once, which fields its HTML table shows (``_html``) and how its text begins;
notes, HTML, frames and the collections of results over groups (:class:`GroupedResults`)
come from here. A table result (:class:`TableResult`) declares its tables and sentences
once (``_blocks``), and its text, HTML, Markdown and ``to_metrics`` come from that
declaration. Values are stored unrounded; only display rounds.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar, Generic, Literal, TypeVar

import numpy as np
import pandas as pd
import xarray as xr

from clusterstats import _display as fmt
from clusterstats._docstrings import SharedDocstrings
from clusterstats._plotting import intervals_forest
from clusterstats.errors import GroupNotFoundError, InvalidInputError, MetricKeyError

__all__ = ["GroupedResults", "Lines", "Result", "Table", "TableResult", "label_of", "metric_key"]


def metric_key(name: str) -> str:
    """A metric name that experiment trackers accept: characters other than letters, digits,
    ``_ - . /`` and spaces become ``_``."""
    return re.sub(r"[^\w\-. /]", "_", name)


def numeric_metrics(prefix: str, fields: Iterable[tuple[str, Any]]) -> dict[str, float]:
    """``{metric_key(prefix + name): float(value)}`` for the fields holding a number (an int
    or a float, numpy's too, not a bool); text and None are left out, NaN is kept."""
    return {
        metric_key(prefix + name): float(value)
        for name, value in fields
        if isinstance(value, (int, float, np.integer, np.floating))
        and not isinstance(value, (bool, np.bool_))
    }


def merged_metrics(groups: Iterable[tuple[Any, dict[str, float]]]) -> dict[str, float]:
    """The metrics of several groups in one dict, refusing a key two groups would share.

    ``groups`` holds ``(group label, that group's metrics)``. Keys are made for trackers
    (:func:`metric_key`), so distinct labels can meet in one key (``('a', 'b/c')`` and
    ``('a/b', 'c')``, ``'gpt:4'`` and ``'gpt?4'``, ``1`` and ``'1'``); one group's numbers
    would then overwrite another's without a word.
    """
    merged: dict[str, float] = {}
    owner: dict[str, tuple[int, Any]] = {}
    for position, (label, metrics) in enumerate(groups):
        for key, value in metrics.items():
            if key in owner and owner[key][0] != position:
                raise MetricKeyError(
                    f"the groups {owner[key][1]!r} and {label!r} both give the metric key "
                    f"{key!r} (trackers accept only letters, digits, _ - . / and spaces, and "
                    "a / joins the labels of several dims): rename one of the labels before "
                    "to_metrics(), or log the groups with to_frame()"
                )
            owner[key] = (position, label)
            merged[key] = value
    return merged


def label_of(outcome: str | None, by: tuple[str, ...]) -> str:
    """``"passed by doc"``: what a result describes."""
    what = outcome if outcome is not None else "outcome"
    return f"{what} by {' + '.join(by)}" if by else what


_LABELLED = (pd.DataFrame, pd.Series, pd.Index, xr.DataArray, xr.Dataset)


def same_value(a: Any, b: Any) -> bool:
    """Whether two field values are equal, a missing value (NaN, NaT) equal to one of its kind.

    Tuples and lists compare item by item, dicts key by key, numpy arrays and pandas or
    xarray objects element-wise (NaN where the other has NaN), results by their own
    equality; anything else by ``==``. A float NaN equals a float NaN (Python's or
    numpy's), never None.
    """
    if a is b:
        return True
    if isinstance(a, (tuple, list)) or isinstance(b, (tuple, list)):
        return (
            type(a) is type(b)
            and len(a) == len(b)
            and all(same_value(x, y) for x, y in zip(a, b, strict=True))
        )
    if isinstance(a, dict) or isinstance(b, dict):
        return (
            isinstance(a, dict)
            and isinstance(b, dict)
            and a.keys() == b.keys()
            and all(same_value(a[k], b[k]) for k in a)
        )
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        return type(a) is type(b) and a.shape == b.shape and same_value(a.tolist(), b.tolist())
    if isinstance(a, _LABELLED) or isinstance(b, _LABELLED):
        # pandas' equals and xarray's identical take NaN as equal to NaN where both have it
        return type(a) is type(b) and (
            a.identical(b) if isinstance(a, (xr.DataArray, xr.Dataset)) else a.equals(b)
        )
    if _is_missing(a) and _is_missing(b):
        floats = (float, np.floating)
        return type(a) is type(b) or (isinstance(a, floats) and isinstance(b, floats))
    return bool(a == b)


def _is_missing(value: Any) -> bool:
    return value is not None and pd.api.types.is_scalar(value) and bool(pd.isna(value))


def _hash_key(value: Any) -> Any:
    """``value`` with every NaN made one key, so that results equal by :func:`same_value`
    hash alike (Python hashes each NaN object differently)."""
    if isinstance(value, tuple):
        return tuple(_hash_key(v) for v in value)
    if _is_missing(value):
        return ("missing", type(value).__name__ if not isinstance(value, np.floating) else "float")
    return value


def one_number(field: str, what: str) -> property:
    """The ``estimate`` of a result whose one number has a name of its own (``icc``,
    ``delta``...): every one-number result has ``estimate``, so code can read any of them
    alike."""

    def estimate(self: Any) -> float:
        return getattr(self, field)

    estimate.__doc__ = (
        f"The result's one number, ``{field}`` ({what}). Every one-number result has "
        "``estimate``, so code can read any of them alike."
    )
    return property(estimate)


class FieldEquality:
    """Equality of the frozen result dataclasses: field by field, NaN equal to NaN.

    Python's generated ``__eq__`` compares fields with ``==`` (since 3.13 one by one, before
    as a tuple, whose identity shortcut made a NaN equal only to the same NaN object), so a
    result with a NaN field (``weighting_design_effect`` without weights) was not equal to
    a copy of itself (``ClusterCI(**r.to_dict())``) and the answer depended on the Python.
    Here fields compare by :func:`same_value` on every Python, and ``__hash__`` agrees with
    that (NaN hashed as one key). ``@dataclass`` writes its own ``__eq__`` and ``__hash__``
    only where the class does not define them, so each subclass gets these two in its own
    namespace before the decorator runs; a subclass that writes its own keeps it.
    """

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        for name in ("__eq__", "__hash__"):
            if name not in cls.__dict__:
                setattr(cls, name, getattr(FieldEquality, name))

    def __eq__(self, other: object) -> bool:
        if other.__class__ is not self.__class__:
            return NotImplemented
        return all(
            same_value(getattr(self, f.name), getattr(other, f.name))
            for f in dataclasses.fields(self)  # type: ignore[arg-type]
            if f.compare
        )

    def __hash__(self) -> int:
        return hash(
            tuple(
                _hash_key(getattr(self, f.name))
                for f in dataclasses.fields(self)  # type: ignore[arg-type]
                if (f.compare if f.hash is None else f.hash)
            )
        )


class _Columns:
    """``Result.columns``: the names of the frame fields, in declaration order."""

    def __get__(self, instance: Any, owner: type) -> tuple[str, ...]:
        return tuple(f.name for f in dataclasses.fields(owner) if f.metadata.get("frame", True))


class Result(FieldEquality, SharedDocstrings):
    """Base of the one-row results: ``ClusterCI``, ``ICC``, ``DesignEffect``, ``PairedDelta``,
    ``PassAtK`` and ``Flakiness``.

    Results are frozen dataclasses. Values are stored unrounded; only the printed form
    rounds. Every result has a readable ``repr`` (``print(result)``), an HTML table for
    Jupyter, ``to_dict()`` and ``to_frame()``. Every result has the fields ``outcome`` (the
    outcome column, None for array input), ``by`` (the cluster columns, a tuple) and
    ``notes`` (a tuple of strings: fallbacks, few clusters, estimand differences, missing
    rows, a negative ICC).

    Attributes
    ----------
    columns : tuple of str
        Class attribute: the names of the fields, in order, which are the keys of
        ``to_dict()`` and the columns of ``to_frame()``. They never depend on the options
        used.

    Examples
    --------
    >>> import clusterstats
    >>> bbh = clusterstats.datasets.load("bbh")
    >>> res = bbh[bbh["condition"] == "cot"].eval.cluster_ci("correct", by="task")
    >>> list(res.to_frame().columns) == list(res.to_dict()) == list(res.columns)
    True
    >>> res.to_dict()["by"], res.to_frame()["by"].iloc[0]
    (('task',), 'task')
    """

    #: Columns of ``to_frame()``, in order (also the keys of ``to_dict()``).
    columns: ClassVar[tuple[str, ...]] = _Columns()  # type: ignore[assignment]
    #: The fields the HTML table shows, with their headers.
    _html: ClassVar[tuple[tuple[str, str], ...]] = ()
    #: The fields a table over groups shows (default: every column but outcome, by, notes).
    _grouped: ClassVar[tuple[tuple[str, str], ...] | None] = None

    def to_dict(self) -> dict[str, Any]:
        """The result as a flat dict of plain Python values, one key per field in the order of
        ``columns`` (``by`` and ``notes`` as tuples)."""
        return {name: getattr(self, name) for name in type(self).columns}

    def _row(self) -> dict[str, Any]:
        row = self.to_dict()
        row["by"] = ", ".join(row["by"])
        row["notes"] = "; ".join(row["notes"])
        return row

    def to_frame(self):
        """A one-row pandas DataFrame whose columns are ``columns``, in order; ``by`` is joined
        with ``", "`` and ``notes`` with ``"; "``."""

        return pd.DataFrame([self._row()], columns=list(type(self).columns))

    def to_metrics(self, prefix: str = "") -> dict[str, float]:
        """The numeric fields as a flat dict of floats, for an experiment tracker.

        Every field that holds a number (an int or a float, not a bool) becomes one entry,
        keyed ``prefix + name``, in the order of ``columns``; text fields (``method``,
        ``outcome``, notes) and fields without a value (None) are left out, NaN is kept.
        The keys use only letters, digits, ``_ - . /`` and spaces, which MLflow's
        ``log_metrics`` and Weights & Biases' ``log`` accept.

        Parameters
        ----------
        prefix : str
            Put before every key, e.g. ``"eval/"`` or ``"mmlu."``.

        Returns
        -------
        dict of str to float

        Examples
        --------
        >>> import clusterstats
        >>> bbh = clusterstats.datasets.load("bbh")
        >>> res = bbh[bbh["condition"] == "cot"].eval.cluster_ci("correct", by="task")
        >>> metrics = res.to_metrics("bbh/")
        >>> round(metrics["bbh/estimate"], 4), metrics["bbh/n_clusters"]
        (0.7397, 27.0)
        """
        return numeric_metrics(prefix, self.to_dict().items())

    def _notes_text(self) -> str:
        return "".join(f"\n  note: {n}" for n in self.notes)  # type: ignore[attr-defined]

    def _caption(self) -> str:
        return f"{type(self).__name__}: {label_of(self.outcome, self.by)}"  # type: ignore[attr-defined]

    def _lines(self) -> list[str]:
        raise NotImplementedError

    def __repr__(self) -> str:
        return "\n".join(self._lines()) + self._notes_text()

    def _repr_html_(self) -> str:
        # the table shows the headline numbers; the text's other lines follow it, so the
        # notebook shows everything the printed result does
        lines = self._lines()
        table = fmt.html_table_only(
            [label for _, label in type(self)._html],
            [[getattr(self, name) for name, _ in type(self)._html]],
            lines[0],
        )
        notes = self.notes  # type: ignore[attr-defined]
        detail = [line.strip() for line in lines[1:]]
        return fmt.html_result([table, fmt.html_paragraphs(detail)], notes)

    def to_markdown(self) -> str:
        """The result in Markdown (GitHub's), as its Jupyter HTML shows it: its headline
        table, its other lines, and its notes as a list, for a pull request or a CI job
        summary. Numbers are written as the text writes them.

        Returns
        -------
        str
        """
        text = self._lines()
        columns = type(self)._html
        lines = [f"**{fmt.one_line(text[0])}**", ""]
        lines += fmt.markdown_table(
            [label for _, label in columns],
            [[fmt.number(getattr(self, name)) for name, _ in columns]],
        )
        lines += ["", *(part for line in text[1:] for part in (line.strip(), ""))]
        lines += ["", *(f"- {note}" for note in self.notes)]  # type: ignore[attr-defined]
        return "\n".join(lines).strip("\n") + "\n"

    @classmethod
    def _table_columns(cls) -> tuple[tuple[str, str], ...]:
        if cls._grouped is not None:
            return cls._grouped
        return tuple((c, c) for c in cls.columns if c not in ("outcome", "by", "notes"))


def _group_row(result: Any) -> dict[str, Any]:
    """A result's row in a table over groups: its fields, or, for a result that is a table
    of its own (a confidence sequence), the summary row it declares (``_group_row``)."""
    own = getattr(result, "_group_row", None)
    return own() if own is not None else result._row()


def _group_columns(result: Any) -> tuple[str, ...]:
    kind = type(result)
    return tuple(kind.GROUP_COLUMNS if hasattr(kind, "GROUP_COLUMNS") else kind.columns)


def _html_table(results: Sequence[Result], dims: Sequence[str], keys: Sequence[Any]) -> str:
    first = results[0]
    columns = type(first)._html
    header = [*dims, *(label for _, label in columns)]
    rows = [
        [*key, *(getattr(r, name) for name, _ in columns)]
        for key, r in zip(keys or [()] * len(results), results, strict=True)
    ]
    notes = list(dict.fromkeys(n for r in results for n in r.notes))  # type: ignore[attr-defined]
    return fmt.html_table(header, rows, first._caption(), notes)


@dataclass(frozen=True)
class Lines:
    """Sentences of a table result, shown in their place among its tables."""

    lines: tuple[str, ...]


@dataclass(frozen=True)
class Table:
    """A table of a table result: its header, its rows (values unrounded: the display
    rounds them) and its title (empty for the first table, which the heading names)."""

    header: tuple[str, ...]
    rows: tuple[tuple[Any, ...], ...]
    title: str = ""


class TableResult(FieldEquality, SharedDocstrings):
    """Base of the results that are tables: ``Comparison``, ``MissingReport``, ``Plan``,
    ``Report``, ``ClusteringCheck``, ``GateReport`` and ``LmEvalTable``.

    A subclass declares what it shows once, and its text (``repr``), Jupyter HTML and
    Markdown (``to_markdown()``) come from that declaration, so the three show the same
    tables, sentences and notes:

    - ``_heading()``: the first line of the text and of the HTML and Markdown;
    - ``_blocks()``: its :class:`Table` and :class:`Lines` blocks, in order;
    - ``_notes()``: its notes, each once (default: the ``notes`` field).

    ``to_frame()`` is the subclass's tidy table; ``to_metrics()`` keys each numeric cell of
    it by the row's label columns (``_metric_labels``) and the column's name, unless the
    subclass keys its own.
    """

    #: The ``to_frame()`` columns whose values name a row in the ``to_metrics()`` keys.
    _metric_labels: ClassVar[tuple[str, ...]] = ()

    def _heading(self) -> str:
        raise NotImplementedError

    def _blocks(self) -> list[Lines | Table]:
        raise NotImplementedError

    def _notes(self) -> list[str]:
        return list(dict.fromkeys(getattr(self, "notes", ())))

    def to_frame(self) -> pd.DataFrame:
        raise NotImplementedError

    def to_metrics(self, prefix: str = "") -> dict[str, float]:
        """The numeric cells of ``to_frame()`` as a flat dict of floats, for an experiment
        tracker: keyed ``prefix + row label + "/" + column`` (the row label is its label
        columns joined with ``/``), as :meth:`Result.to_metrics` keys one row.

        {metrics_parameters}

        {metrics_row_clash}
        """
        frame = self.to_frame()
        labels = list(self._metric_labels)
        groups = []
        for row in frame.to_dict("records"):
            label = tuple(row[c] for c in labels)
            where = prefix + "".join(f"{part}/" for part in label)
            fields = ((c, v) for c, v in row.items() if c not in labels)
            groups.append((label, numeric_metrics(where, fields)))
        return merged_metrics(groups)

    def __repr__(self) -> str:
        out = [self._heading()]
        for block in self._blocks():
            if isinstance(block, Lines):
                out += [f"  {line}" for line in block.lines]
                continue
            if block.title:
                out.append(f"  {block.title}:")
            out.append(fmt.text_table(block.header, block.rows))
        out += [f"  note: {n}" for n in self._notes()]
        return "\n".join(out)

    def _repr_html_(self) -> str:
        parts = [fmt.html_paragraphs([self._heading()])]
        for block in self._blocks():
            if isinstance(block, Lines):
                parts.append(fmt.html_paragraphs(block.lines))
            else:
                parts.append(fmt.html_table_only(block.header, block.rows, block.title))
        return fmt.html_result(parts, self._notes())

    def _markdown_heading(self) -> list[str]:
        return [f"**{self._heading()}**"]

    def to_markdown(self) -> str:
        """The result in Markdown (GitHub's): its heading, tables and sentences, and its
        notes as a list, for a pull request or a CI job summary (``$GITHUB_STEP_SUMMARY``).

        Returns
        -------
        str
        """
        lines = [*self._markdown_heading(), ""]
        for block in self._blocks():
            if isinstance(block, Lines):
                lines += [part for line in block.lines for part in (line, "")]
                continue
            if block.title:
                lines += [f"{block.title}:", ""]
            cells = [[fmt.number(c) for c in row] for row in block.rows]
            lines += [*fmt.markdown_table(block.header, cells), ""]
        lines += [f"- {n}" for n in self._notes()]
        return "\n".join(lines).rstrip("\n") + "\n"


R = TypeVar("R", bound=Result)


@dataclass(frozen=True, repr=False)
class GroupedResults(SharedDocstrings, Generic[R]):
    """One result per group: per value of an ``over=`` column (pandas, dask), or per
    combination of a Dataset's extra dims (xarray, e.g. ``model``).

    Groups of an ``over=`` column come in sorted label order (labels of mixed types that
    cannot be sorted keep their order of first appearance); a Dataset's groups follow its
    coordinates. It behaves like a read-only mapping from group label to result:

    - ``grouped[label]`` returns that group's result (``label`` is a tuple of labels when
      there are several dims); an unknown label raises ``KeyError``;
    - ``sel(model="gpt-4o")`` returns one result named by dim (every dim named once);
    - ``len(grouped)``, ``iter(grouped)`` (the labels) and ``items()`` (label, result
      pairs);
    - ``dims``: the dim names, as a tuple;
    - ``to_frame()`` stacks the groups' rows under one leading column per dim, followed by
      the result class's ``columns``;
    - ``to_xarray()`` returns an xarray Dataset over the dims;
    - ``print(grouped)`` shows one table row per group; Jupyter shows an HTML table;
    - ``plot()`` (results of ``cluster_ci``) draws a forest plot, one row per group.

    Attributes
    ----------
    over : str or tuple of str
        The ``over=`` column, or the tuple of a Dataset's extra dims.
    groups : tuple
        The group labels, in order (tuples of labels for several dims).
    results : tuple of results
        One result per group, in the order of ``groups``.

    Examples
    --------
    >>> import clusterstats
    >>> df = clusterstats.datasets.load("bbh")
    >>> grouped = df.eval.design_effect("correct", by="task", over="condition")
    >>> print(type(grouped).__name__, grouped.over, grouped.groups, len(grouped))
    GroupedResults condition ('cot', 'direct') 2
    >>> for label, result in grouped.items():
    ...     print(label, type(result).__name__, round(float(result), 2))
    cot DesignEffect 59.37
    direct DesignEffect 58.05
    >>> list(grouped.to_frame().columns[:4])
    ['condition', 'outcome', 'by', 'estimand']
    >>> grouped.sel(condition="direct") is grouped["direct"]
    True
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
            raise GroupNotFoundError(
                f"no group {group!r}; groups are {list(self.groups)}"
            ) from None

    def items(self) -> Iterator[tuple[Any, R]]:
        """(label, result) pairs, in the order of ``groups``."""
        return iter(zip(self.groups, self.results, strict=True))

    def sel(self, **labels: Any) -> R:
        """The result of one group, named by dim: ``res.sel(model="gpt-4o")``."""
        if set(labels) != set(self.dims):
            raise GroupNotFoundError(
                f"name one label for each of {list(self.dims)}, got {list(labels)}"
            )
        key = tuple(labels[d] for d in self.dims)
        return self[key if isinstance(self.over, tuple) else key[0]]

    def to_frame(self):
        """A DataFrame with one row per group: one column per dim, then the result's columns."""

        rows = [
            {**dict(zip(self.dims, key, strict=True)), **_group_row(r)}
            for key, r in zip(self._keys(), self.results, strict=True)
        ]
        # a dim that is also a field of the results (pass^k's k) is one column, not two
        own = [c for c in _group_columns(self.results[0]) if c not in self.dims]
        columns = [*self.dims, *own] if self.results else [*self.dims]
        return pd.DataFrame(rows, columns=columns)

    def to_metrics(self, prefix: str = "") -> dict[str, float]:
        """Every group's :meth:`Result.to_metrics`, keyed ``prefix + label + "/" + name``
        (the labels of several dims joined with ``/``), for an experiment tracker.

        {metrics_parameters}

        Examples
        --------
        >>> import clusterstats
        >>> df = clusterstats.datasets.load("bbh")
        >>> grouped = df.eval.cluster_ci("correct", by="task", over="condition")
        >>> sorted(k for k in grouped.to_metrics("bbh/") if k.endswith("/estimate"))
        ['bbh/cot/estimate', 'bbh/direct/estimate']
        """
        return merged_metrics(
            (
                key if len(key) > 1 else key[0],
                result.to_metrics(f"{prefix}{'/'.join(map(str, key))}/"),
            )
            for key, result in zip(self._keys(), self.results, strict=True)
        )

    def to_xarray(self):
        """An xarray Dataset over the dims: one variable per numeric column (``estimate``,
        ``low``, ``high``, ...); the text columns that are the same for every group
        (``method``, ``estimand``, ...) and ``confidence`` become attributes."""

        keys = self._keys()
        coords = {d: list(dict.fromkeys(k[i] for k in keys)) for i, d in enumerate(self.dims)}
        shape = tuple(len(c) for c in coords.values())
        positions = [tuple(coords[d].index(k[i]) for i, d in enumerate(self.dims)) for k in keys]
        rows = [_group_row(r) for r in self.results]
        variables, attrs = {}, {}
        for column in _group_columns(self.results[0]):
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

    def plot(
        self,
        *,
        ax: Any = None,
        order: Literal["estimate", "label"] = "estimate",
        values: bool = False,
        percent: bool | None = None,
    ) -> Any:
        """Forest plot, one row per group: the clustered interval above the naive one
        (results of ``cluster_ci`` only; needs matplotlib, as ``ClusterCI.plot``).

        {group_forest_parameters}

        {plot_returns}

        {plot_examples_head}
        >>> import clusterstats
        >>> df = clusterstats.load_demo_data()
        >>> ax = clusterstats.cluster_ci(df, "correct", by="src", over="model").plot()
        >>> ax.get_title()
        'correct by model, clustered by src'
        """

        first = self.results[0] if self.results else None
        if first is None or not hasattr(first, "_value_label"):
            raise InvalidInputError("plot() draws intervals: it needs results of cluster_ci")
        by = " + ".join(first.by) or "cluster"  # type: ignore[attr-defined]
        what = first.outcome or "outcome"  # type: ignore[attr-defined]
        return intervals_forest(
            self.results,
            [", ".join(map(str, key)) for key in self._keys()],
            title=f"{what} by {', '.join(self.dims)}, clustered by {by}",
            order=order,
            values=values,
            percent=percent,
            ax=ax,
        )

    def _table(self) -> tuple[list[str], list[list[object]]]:
        columns = [c for c in type(self.results[0])._table_columns() if c[0] not in self.dims]
        header = [*self.dims, *(label for _, label in columns)]
        rows = [
            [*key, *(_group_row(r)[name] for name, _ in columns)]
            for key, r in zip(self._keys(), self.results, strict=True)
        ]
        return header, rows

    def _title(self) -> str:
        first = self.results[0]
        over = ", ".join(self.dims)
        heading = getattr(first, "_grouped_heading", None)
        if heading is not None:
            return heading(over)
        return f"{type(first).__name__} over {over}: {label_of(first.outcome, first.by)}"

    def _notes(self) -> list[str]:
        return list(
            dict.fromkeys(
                f"{', '.join(map(str, key))}: {n}"
                for key, r in zip(self._keys(), self.results, strict=True)
                for n in r.notes  # type: ignore[attr-defined]
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

    def to_markdown(self) -> str:
        """The results in Markdown (GitHub's): the table their text prints, one row per
        group, under its title, and every group's notes as a list.

        Returns
        -------
        str
        """
        if not self.results:
            return f"GroupedResults(over={self.over!r}, empty)\n"
        header, rows = self._table()
        lines = [f"**{fmt.one_line(self._title())}**", ""]
        lines += fmt.markdown_table(header, [[fmt.number(v) for v in row] for row in rows])
        lines += ["", *(f"- {note}" for note in self._notes())]
        return "\n".join(lines).strip("\n") + "\n"

    def _repr_html_(self) -> str:
        if not self.results:
            return "<p>GroupedResults (empty)</p>"
        header, rows = self._table()
        return fmt.html_table(header, rows, self._title(), self._notes())
