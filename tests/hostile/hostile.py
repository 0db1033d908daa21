"""The harness of the hostile-input catalogue (``tests/test_hostile_*.py``).

Each case builds its inputs afresh, calls the library once, and states what must happen:

* ``Raises(ErrorType, "regex")``: exactly that exception type (not a subclass picked by
  accident: the type's name must match), with a message that names the offending column,
  group, stratum or option (the regex says which);
* ``Warns(WarningType, "regex", check=...)``: a result, with that warning, and ``check``
  asserting the right number (with the source of the expected value in the case's comment);
* ``Returns(check=...)``: a result, no library warning, and ``check`` on it.

Every case also runs the **mutation check**: the inputs are copied before the call and
compared after it (pandas, polars, pyarrow and dask tables, Series, arrays and Datasets
exactly, files byte for byte, folders by a hash of every file below them), so a call that
changes the caller's data fails whatever it returns.
"""

from __future__ import annotations

import copy
import hashlib
import re
import warnings
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest
import xarray as xr

import clusterstats as cs


@dataclass(frozen=True)
class Raises:
    error: type[BaseException]
    match: str


@dataclass(frozen=True)
class Warns:
    warning: type[Warning]
    match: str
    check: Callable[[Any], None] = lambda result: None


@dataclass(frozen=True)
class Returns:
    check: Callable[[Any], None] = lambda result: None


@dataclass(frozen=True)
class Case:
    """``inputs()`` returns a dict of named inputs; ``call(**inputs)`` is the one call."""

    name: str
    inputs: Callable[[], dict[str, Any]]
    call: Callable[..., Any]
    expect: Raises | Warns | Returns
    marks: tuple[Any, ...] = field(default=())


def quiet(fn: Callable[..., Any]) -> Callable[..., Any]:
    """``fn`` with the library's warnings silenced: for a case whose point is its result or
    its error, not the warnings on the way."""

    def call(**inputs: Any) -> Any:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", cs.ClusterStatsWarning)
            return fn(**inputs)

    return call


def _checked(case: Case, check: Callable[[Any], Any], result: Any) -> None:
    """Run a case's check: it asserts, or returns a truth value that must be true (a check
    written as a one-line comparison would otherwise pass whatever it compares)."""
    outcome = check(result)
    assert outcome is None or bool(outcome), f"{case.name}: the check on the result is false"


def params(cases: Iterable[Case]) -> list[Any]:
    """``pytest.param`` per case, named by the case, for ``@pytest.mark.parametrize``."""
    cases = list(cases)
    names = [case.name for case in cases]
    duplicated = {n for n in names if names.count(n) > 1}
    assert not duplicated, f"case names must be unique: {sorted(duplicated)}"
    return [pytest.param(case, id=case.name, marks=case.marks) for case in cases]


def _folder_digest(folder: Path) -> dict[str, str]:
    """Every file below ``folder`` (hidden ones too), by relative path, hashed."""
    return {
        str(path.relative_to(folder)): hashlib.sha256(path.read_bytes()).hexdigest()
        for path in sorted(folder.rglob("*"))
        if path.is_file()
    }


def _table_kind(value: Any) -> str | None:
    """ "polars", "pyarrow" or "dask" for a table of those libraries, else None."""
    module = type(value).__module__.partition(".")[0]
    return module if module in ("polars", "pyarrow", "dask", "dask_expr") else None


def _snapshot(value: Any) -> Any:
    if isinstance(value, (pd.DataFrame, pd.Series, pd.Index, xr.Dataset, xr.DataArray)):
        return value.copy(deep=True)
    if isinstance(value, np.ndarray):
        return value.copy()
    if isinstance(value, Path):
        if value.is_dir():
            return _folder_digest(value)
        return value.read_bytes() if value.is_file() else None
    kind = _table_kind(value)
    if kind in ("dask", "dask_expr"):
        return value.compute()  # what the lazy frame holds, computed before the call
    if kind == "polars":
        return value.clone()
    if kind == "pyarrow":
        return value  # immutable: compared with itself after the call, schema and all
    try:
        return copy.deepcopy(value)
    except Exception:  # pragma: no cover - generators, modules: nothing to compare
        return None


def _assert_unchanged(name: str, before: Any, after: Any) -> None:
    message = f"the call changed its input {name!r}"
    if isinstance(after, pd.DataFrame):
        pd.testing.assert_frame_equal(after, before, check_exact=True, obj=message)
        assert list(after.columns) == list(before.columns), message
    elif isinstance(after, pd.Series):
        pd.testing.assert_series_equal(after, before, check_exact=True, obj=message)
    elif isinstance(after, pd.Index):
        pd.testing.assert_index_equal(after, before, exact=True, obj=message)
    elif isinstance(after, (xr.Dataset, xr.DataArray)):
        try:
            xr.testing.assert_identical(after, before)
        except AssertionError as error:
            raise AssertionError(f"{message}: {error}") from None
    elif isinstance(after, np.ndarray):
        assert after.dtype == before.dtype, message
        assert after.shape == before.shape, message
        np.testing.assert_array_equal(after, before, err_msg=message)
    elif isinstance(after, Path):
        if after.is_dir():
            assert _folder_digest(after) == before, message
        else:
            assert (after.read_bytes() if after.is_file() else None) == before, message
    elif _table_kind(after) in ("dask", "dask_expr"):
        computed = after.compute()
        pd.testing.assert_frame_equal(computed, before, check_exact=True, obj=message)
    elif _table_kind(after) == "polars":
        assert after.equals(before), message
        assert after.schema == before.schema, message
    elif _table_kind(after) == "pyarrow":
        assert after.equals(before, check_metadata=True), message
    elif before is not None and isinstance(after, (list, dict, tuple, str, int, float)):
        assert type(after) is type(before), message
        if isinstance(after, float) and np.isnan(after):
            assert np.isnan(before), message
        else:
            assert repr(after) == repr(before), message


def run(case: Case) -> None:
    """Run one catalogue case: the call, its expectation, and the mutation check."""
    inputs = case.inputs()
    before = {name: _snapshot(value) for name, value in inputs.items()}
    expect = case.expect
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        if isinstance(expect, Raises):
            error = None
            try:
                case.call(**inputs)
            except Exception as raised:  # the exact type is checked next
                error = raised
            assert error is not None, f"{case.name}: expected {expect.error.__name__}, no error"
            assert type(error) is expect.error, (
                f"{case.name}: expected {expect.error.__name__}, got "
                f"{type(error).__module__}.{type(error).__name__}: {error}"
            )
            assert re.search(expect.match, str(error)), (
                f"{case.name}: message {str(error)!r} does not match {expect.match!r}"
            )
        else:
            result = case.call(**inputs)
    ours = [w for w in caught if issubclass(w.category, cs.ClusterStatsWarning)]
    if isinstance(expect, Warns):
        hits = [
            w
            for w in ours
            if issubclass(w.category, expect.warning) and re.search(expect.match, str(w.message))
        ]
        assert hits, (
            f"{case.name}: no {expect.warning.__name__} matching {expect.match!r}; got "
            f"{[(w.category.__name__, str(w.message)) for w in ours]}"
        )
        _checked(case, expect.check, result)
    elif isinstance(expect, Returns):
        assert not ours, (
            f"{case.name}: unexpected warnings "
            f"{[(w.category.__name__, str(w.message)) for w in ours]}"
        )
        _checked(case, expect.check, result)
    for name, value in inputs.items():
        _assert_unchanged(name, before[name], value)


def close(expected: float, *, rel: float = 1e-12, abs: float = 0.0) -> Callable[[float], bool]:
    """A predicate for ``check`` functions: ``close(0.25)(x)``."""
    return lambda value: value == pytest.approx(expected, rel=rel, abs=abs)
