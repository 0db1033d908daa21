"""Tables of graded rows read from files: CSV, TSV, Parquet, JSON, JSON Lines, and the eval
logs of inspect_ai and lm-evaluation-harness recognised by their names (``read_table``, the
reader of the command line).

Every problem is a :class:`~clusterstats.FileReadError` naming the file and saying what to
do, on one line: an unknown suffix, an empty file, text in another encoding (UTF-16 with its
byte-order mark is recognised), a malformed line, and ids that a CSV would merge by reading
them as numbers (``"7"`` and ``"007"``).
"""

from __future__ import annotations

import codecs
import io
import json
from collections.abc import Callable, Sequence
from pathlib import Path

import pandas as pd

from clusterstats.errors import FileReadError, InvalidOptionError
from clusterstats.readers._files import kind_of, load_json
from clusterstats.readers.formats import log_format
from clusterstats.readers.inspect_logs import read_inspect
from clusterstats.readers.lm_eval import read_lm_eval

__all__ = ["FILE_FORMATS", "TABLE_SUFFIXES", "one_line", "read_table"]

#: ``read_table``'s ``file_format``: by the file's name, or the logs of one harness.
FILE_FORMATS: tuple[str, ...] = ("auto", "inspect", "lm-eval")

#: The suffixes of the tables ``read_table`` reads (other files: by ``file_format``).
TABLE_SUFFIXES = (".csv", ".tsv", ".parquet", ".jsonl", ".json")

_UTF16_BOMS = (b"\xff\xfe", b"\xfe\xff")


def _read_json_lines(path: Path, encoding: str) -> pd.DataFrame:
    records = []
    with open(path, encoding=encoding) as handle:
        for number, line in enumerate(handle, start=1):
            if not line.strip():
                continue
            try:
                record = load_json(line, path, f"line {number}")
            except json.JSONDecodeError as error:
                hint = (
                    "; for one JSON array of objects, name the file .json"
                    if number == 1 and line.lstrip().startswith("[")
                    else ""
                )
                raise FileReadError(
                    path,
                    f"line {number} is not valid JSON ({error.msg} at column {error.colno})" + hint,
                ) from None
            if not isinstance(record, dict):
                raise FileReadError(
                    path,
                    f"line {number} is a JSON {type(record).__name__}, not an object; JSON "
                    "Lines needs one object (one graded row) per line",
                )
            records.append(record)
    return pd.DataFrame.from_records(records)


def _read_parquet(path: Path, encoding: str) -> pd.DataFrame:
    try:
        import pyarrow  # noqa: F401 - pandas needs it for Parquet
    except ImportError:
        raise FileReadError(
            path, "reading Parquet needs pyarrow, an optional package: pip install pyarrow"
        ) from None
    try:
        return pd.read_parquet(path)
    except (OSError, ValueError) as error:  # pyarrow.ArrowInvalid is a ValueError
        raise FileReadError(path, f"not a readable Parquet file ({one_line(error)})") from None


def _header(path: Path, separator: str, encoding: str) -> list[str]:
    """The header row as written, before pandas renames a repeated name ``x`` to ``x.1``."""
    first = pd.read_csv(
        path, sep=separator, encoding=encoding, header=None, nrows=1, dtype=str, na_filter=False
    )
    return [str(name) for name in first.iloc[0]]


def _read_delimited(separator: str) -> Callable[[Path, str], pd.DataFrame]:
    kind = "CSV" if separator == "," else "TSV"

    def read(path: Path, encoding: str) -> pd.DataFrame:
        try:
            header = _header(path, separator, encoding)
            frame = pd.read_csv(path, sep=separator, encoding=encoding)
        except pd.errors.EmptyDataError:
            raise FileReadError(path, "the file has no header row and no data") from None
        except pd.errors.ParserError as error:
            raise FileReadError(path, f"malformed {kind} ({one_line(error)})") from None
        repeated = sorted({name for name in header if header.count(name) > 1})
        if repeated:
            raise FileReadError(
                path,
                f"the header names column {repeated[0]!r} {header.count(repeated[0])} times; "
                "give each column its own name",
            )
        others = [s for s in (",", "\t", ";", "|") if s != separator]
        if len(header) == 1 and any(s in header[0] for s in others):
            used = next(s for s in others if s in header[0])
            raise FileReadError(
                path,
                f"the header {header[0]!r} is one column: the file seems separated by "
                f"{used!r}, not by {separator!r}; a .csv file is read as comma-separated and a "
                ".tsv file as tab-separated",
            )
        return frame

    return read


def _read_json(path: Path, encoding: str) -> pd.DataFrame:
    text = path.read_bytes().decode(encoding)
    try:
        parsed = load_json(text, path, "an object")
    except json.JSONDecodeError as error:
        raise FileReadError(
            path,
            f"not a JSON table ({error.msg} at line {error.lineno} column {error.colno}); for "
            "one JSON object per line, name the file .jsonl",
        ) from None
    if isinstance(parsed, list):
        for number, item in enumerate(parsed, start=1):
            if not isinstance(item, dict):
                raise FileReadError(
                    path,
                    f"item {number} of the JSON array is {kind_of(item)}, not an object; a JSON "
                    "table is an array of objects (one graded row each) or an object of columns",
                )
        return pd.DataFrame.from_records(parsed)
    if not isinstance(parsed, dict):
        raise FileReadError(
            path,
            f"the file holds {kind_of(parsed)}, not a JSON table (an array of objects, one graded "
            "row each, or an object of columns)",
        )
    try:
        # types as written (dtype=False): pandas' default would turn "1" into 1 and "007"
        # into 7, and read columns named like dates (created_at, timestamp) as dates
        return pd.read_json(io.StringIO(text), dtype=False)
    except ValueError as error:
        raise FileReadError(
            path,
            f"not a JSON table ({one_line(error)}); a JSON table is an array of objects (one "
            "graded row each) or an object of columns; for one object per line, name the file "
            ".jsonl",
        ) from None


_READERS: dict[str, Callable[[Path, str], pd.DataFrame]] = {
    ".csv": _read_delimited(","),
    ".tsv": _read_delimited("\t"),
    ".parquet": _read_parquet,
    ".jsonl": _read_json_lines,
    ".json": _read_json,
}


def one_line(error: BaseException) -> str:
    """An error's message on one line (the command line prints each error as one)."""
    return " ".join(str(error).split())


def _merged_labels(
    path: Path, frame: pd.DataFrame, labels: Sequence[str], sep: str, encoding: str
) -> None:
    """FileReadError if a label column read as numbers joins ids that differ as text.

    A CSV has no types: pandas reads a column of digits as numbers, so ``"7"`` and ``"007"``
    (or ``"1"`` and ``"1.0"``) would become one cluster without a word.
    """
    numeric = [
        column
        for column in dict.fromkeys(labels)
        if column in frame.columns
        and pd.api.types.is_numeric_dtype(frame[column])
        and not pd.api.types.is_bool_dtype(frame[column])
    ]
    if not numeric:
        return
    texts = pd.read_csv(path, sep=sep, encoding=encoding, usecols=numeric, dtype=str)
    for column in numeric:
        pairs = pd.DataFrame({"number": frame[column], "text": texts[column].str.strip()})
        pairs = pairs.dropna().drop_duplicates()
        merged = pairs[pairs["number"].duplicated(keep=False)]
        if len(merged):
            number = merged["number"].iloc[0]
            first, second = merged.loc[merged["number"] == number, "text"].iloc[:2]
            raise FileReadError(
                path,
                f"column {column!r} holds ids {first!r} and {second!r}, different text but the "
                f"same number ({number.item()!r}), so their rows would be taken as one; make "
                "the ids distinct as numbers, or write them with a letter (e.g. q007) so they "
                "are read as text",
            )


def read_table(
    path: str,
    file_format: str = "auto",
    encoding: str | None = None,
    *,
    labels: Sequence[str] = (),
    outcome: str | None = None,
    lm_eval_filter: str | None = None,
    runs: str | None = None,
    score: str | None = None,
    key: str | None = None,
) -> pd.DataFrame:
    """Read a table of graded rows for the command line, with one-line errors.

    ``file_format="auto"`` reads inspect_ai logs and lm-evaluation-harness samples by the
    names the harnesses give their files (``*.eval``, ``samples_<task>_<date>.jsonl``, or a
    folder of them), and any other file as a table by its extension. ``encoding`` (default
    UTF-8, with or without a byte-order mark) is for text tables only; ``labels`` are the
    cluster and group columns, checked not to merge ids of a CSV that differ as text
    (``"7"`` and ``"007"``) by reading them as one number. For lm-evaluation-harness
    samples, ``outcome`` is the metric read (only the tasks that report it),
    ``lm_eval_filter`` and ``runs`` are :func:`~clusterstats.read_lm_eval`'s ``filter`` and
    ``runs``; for inspect_ai logs, ``score`` and ``key`` are
    :func:`~clusterstats.read_inspect`'s.
    """
    if file_format == "auto":
        file_format = log_format(path) or "auto"
    if file_format != "inspect" and (score is not None or key is not None):
        option = "--score" if score is not None else "--key"
        raise InvalidOptionError(
            f"{option} is for inspect_ai logs (--format inspect); "
            f"{str(path)!r} is read as {'a table' if file_format == 'auto' else file_format}"
        )
    if file_format != "lm-eval" and (lm_eval_filter is not None or runs is not None):
        option = "--filter" if lm_eval_filter is not None else "--runs"
        raise InvalidOptionError(
            f"{option} is for lm-evaluation-harness samples (--format lm-eval); "
            f"{str(path)!r} is read as {'a table' if file_format == 'auto' else file_format}"
        )
    if file_format in ("inspect", "lm-eval"):
        if encoding is not None:
            raise InvalidOptionError(
                f"--encoding is for .csv, .tsv, .json and .jsonl tables; --format {file_format} "
                "files are always UTF-8: drop --encoding"
            )
        if file_format == "lm-eval":
            return read_lm_eval(path, metric=outcome, filter=lm_eval_filter, runs=runs)
        try:
            return read_inspect(path, score=score, key=key)
        except ImportError as error:
            raise InvalidOptionError(f"--format inspect: {error}") from None
    name = encoding or "utf-8"
    try:
        # UTF-8 files saved by Excel or Notepad start with a byte-order mark: skip it
        effective = "utf-8-sig" if codecs.lookup(name).name == "utf-8" else name
    except LookupError:
        raise FileReadError(
            path,
            f"unknown encoding {name!r}; pass --encoding with a Python codec name (e.g. latin-1)",
        ) from None
    file = Path(path)
    if not file.exists():
        raise FileReadError(file, "no such file")
    if file.is_dir():
        raise FileReadError(
            file,
            "it is a folder; give a file, or --format inspect / --format lm-eval for a folder "
            "of logs",
        )
    suffix = file.suffix.lower()
    if suffix not in _READERS:
        raise FileReadError(
            file,
            f"unknown file type {suffix or '(no extension)'!r}; expected one of "
            f"{', '.join(TABLE_SUFFIXES)}, or --format inspect / lm-eval",
        )
    if file.stat().st_size == 0:
        raise FileReadError(file, "the file is empty")
    try:
        frame = _READERS[suffix](file, effective)
        if suffix in (".csv", ".tsv"):
            _merged_labels(file, frame, labels, "," if suffix == ".csv" else "\t", effective)
    except UnicodeDecodeError as error:
        if codecs.lookup(name).name == "utf-8" and file.read_bytes()[:2] in _UTF16_BOMS:
            problem = (
                "it is UTF-16 text (it starts with a UTF-16 byte-order mark); pass --encoding "
                "utf-16 or save the file as UTF-8"
            )
        else:
            byte = error.object[error.start : error.start + 1].hex()
            problem = (
                f"it is not {name} text (byte 0x{byte} at position {error.start}); pass "
                "--encoding (e.g. --encoding latin-1) or save the file as UTF-8"
            )
        raise FileReadError(file, problem) from None
    if len(frame) == 0:
        raise FileReadError(file, "the file has no data rows")
    return frame
