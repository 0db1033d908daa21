"""The names of the two sides of a paired comparison, read from the data: a column (or a
Dataset's scalar coordinate) that names what produced each side's results."""

from __future__ import annotations

from typing import Any

import pandas as pd
import xarray as xr

from clusterstats.adapters import arrow
from clusterstats.adapters import dask as dask_adapter
from clusterstats.adapters.labels import Columns

__all__ = ["SIDE_LABEL_COLUMNS", "side_names"]

#: Columns (or a Dataset's scalar coordinates) that name what produced the results: where
#: each side of a paired comparison holds one value of one of them, that value names the side.
SIDE_LABEL_COLUMNS = (
    "model", "model_name", "system", "condition", "arm", "variant", "agent", "checkpoint",
    "config", "run",
)  # fmt: skip


def side_names(data: Any, other: Any, columns: Columns) -> tuple[str, str] | None:
    """Each side's name where the data say it: the first column of
    :data:`SIDE_LABEL_COLUMNS` (not a role of the call) holding one value on each side, the
    two values different; None when no such column exists."""
    roles = set(columns.names())
    for name in SIDE_LABEL_COLUMNS:
        if name in roles:
            continue
        a, b = _constant_value(data, name), _constant_value(other, name)
        if a is not None and b is not None and str(a) != str(b):
            return str(a), str(b)
    return None


def _constant_value(data: Any, name: str) -> Any:
    """The one value of column (or scalar coordinate) ``name``, or None (absent, missing, or
    several values)."""
    if isinstance(data, xr.Dataset):
        coordinate = data.coords.get(name)
        return coordinate.item() if coordinate is not None and coordinate.ndim == 0 else None
    if arrow.is_table(data):
        if name not in arrow.column_names(data):
            return None
        data = arrow.to_pandas(data, [name])
    elif not hasattr(data, "columns") or name not in data.columns:
        return None
    elif dask_adapter.is_dask_frame(data):
        data = dask_adapter.compute_columns(data, [name])
    values = data[name]
    if not isinstance(values, pd.Series) or values.empty or pd.isna(values.iloc[0]):
        return None
    first = values.iloc[0]
    return first if bool((values == first).all()) else None
