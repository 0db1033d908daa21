"""The catalogue's mutation check itself: a call that changes its input fails the case, for
every kind of input the catalogue hands the library (pandas, polars and dask tables, arrays,
Datasets, files and folders). Without these, a harness that compared nothing would pass
every case."""

from __future__ import annotations

import tempfile
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import xarray as xr
from hostile import Case, Returns, run


def frame() -> pd.DataFrame:
    return pd.DataFrame({"doc": [0, 0, 1, 1], "y": [1.0, 0.0, 1.0, 1.0]})


def folder() -> Path:
    where = Path(tempfile.mkdtemp())
    (where / "results.json").write_text("{}")
    (where / "sub").mkdir()
    (where / "sub" / "samples.jsonl").write_text("{}\n")
    return where


def polars_frame():
    pl = pytest.importorskip("polars")
    return pl.from_pandas(frame())


def dask_frame():
    dd = pytest.importorskip("dask.dataframe")
    return dd.from_pandas(frame(), npartitions=2)


def set_first_y(data) -> None:
    data.loc[0, "y"] = 0.5


def set_first_polars(data) -> None:
    data[0, "y"] = 0.5


def reassign_dask(data) -> None:
    data["y"] = data["y"] * 0.5


def scale_array(data) -> None:
    data *= 2


def scale_dataset(data) -> None:
    data["y"][0, 0] = 9.0


def append_bytes(data) -> None:
    with open(data, "ab") as handle:
        handle.write(b"\n")


def add_a_file(data) -> None:
    (data / "sub" / ".partial.eval").write_bytes(b"half")


MUTATIONS = [
    ("a pandas frame", frame, set_first_y),
    ("a polars frame", polars_frame, set_first_polars),
    ("a dask frame", dask_frame, reassign_dask),
    ("an array", lambda: np.arange(4.0), scale_array),
    ("a Dataset", lambda: xr.Dataset({"y": (("case", "rerun"), np.zeros((2, 2)))}), scale_dataset),
    ("a file", lambda: Path(tempfile.mkstemp(suffix=".csv")[1]), append_bytes),
    ("a folder", folder, add_a_file),
]


@pytest.mark.parametrize(
    ("build", "mutate"), [m[1:] for m in MUTATIONS], ids=[m[0] for m in MUTATIONS]
)
def test_a_call_that_changes_its_input_fails_the_case(build, mutate):
    case = Case("mutates", lambda: {"data": build()}, mutate, Returns())
    with pytest.raises(AssertionError, match="changed its input 'data'"):
        run(case)


@pytest.mark.parametrize(("build", "_"), [m[1:] for m in MUTATIONS], ids=[m[0] for m in MUTATIONS])
def test_a_call_that_only_reads_its_input_passes(build, _):
    run(Case("reads", lambda: {"data": build()}, lambda data: None, Returns()))
