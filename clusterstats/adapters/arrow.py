"""polars and pyarrow tables: only the named columns, converted to pandas once.

A polars ``DataFrame`` or ``LazyFrame`` and a pyarrow ``Table`` or ``RecordBatch`` are
accepted wherever a pandas DataFrame is; the columns that the options name are selected
first (a lazy frame is collected with only those), so a wide table is never copied whole.
Neither library is imported unless such a table is passed.
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from typing import Any

import pandas as pd

from clusterstats.adapters.labels import require_columns
from clusterstats.errors import InvalidInputError, InvalidOptionError

__all__ = ["is_table", "to_pandas"]

_TABLES = {("polars", "DataFrame"), ("polars", "LazyFrame"), ("pyarrow", "Table")}
_TABLES.add(("pyarrow", "RecordBatch"))


def is_table(data: Any) -> bool:
    """Whether ``data`` is a polars or pyarrow table."""
    kind = type(data)
    return (kind.__module__.partition(".")[0], kind.__name__) in _TABLES


def column_names(data: Any) -> list[str]:
    """The column names of a polars or pyarrow table."""
    if type(data).__name__ == "LazyFrame":
        return list(data.collect_schema().names())
    if hasattr(data, "column_names"):  # pyarrow
        return list(data.column_names)
    return list(data.columns)


def to_pandas(data: Any, names: Sequence[Hashable], *, matched_on: Any = "unused") -> Any:
    """``data`` itself unless it is a polars or pyarrow table; then a pandas DataFrame of the
    ``names`` columns (each once). ``matched_on`` is the ``on=`` of a statistic that matches
    items: a table has no index to match them by, so ``on=None`` is refused."""
    if not is_table(data):
        return data
    if matched_on is None:
        raise InvalidOptionError(
            f"a {type(data).__module__.partition('.')[0]} table has no index to match items "
            "by: pass on= (the item key column or columns)"
        )

    wanted = list(dict.fromkeys(names))
    require_columns(pd.DataFrame(columns=column_names(data)), wanted)
    selected = data.select(wanted)
    if type(selected).__name__ == "LazyFrame":
        selected = selected.collect()
    try:
        return selected.to_pandas()
    except ModuleNotFoundError as error:  # polars converts through pyarrow
        raise InvalidInputError(
            f"converting a polars table needs {error.name}, an optional package: "
            f"pip install {error.name}"
        ) from None
