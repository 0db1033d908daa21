"""Command line: ``clusterstats demo``, ``clusterstats ci FILE ...`` and ``clusterstats datasets``.

Exit status 0 on success, 2 for anything the user can fix (a bad option, an unreadable file,
data the statistics cannot use), each reported as one ``clusterstats: error: ...`` line on
standard error. Library warnings become one ``warning: ...`` line each on standard error,
printed once, and never when the output already shows the same text as a note.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import warnings
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from clusterstats import _display as fmt
from clusterstats import datasets
from clusterstats._result import GroupedResults
from clusterstats.core.intervals import METHODS
from clusterstats.core.variance import ESTIMANDS
from clusterstats.errors import ClusterStatsError, FileReadError
from clusterstats.mean import ClusterCI, cluster_ci

TABLE_SUFFIXES = (".csv", ".tsv", ".parquet", ".jsonl", ".json")


def _version() -> str:
    from clusterstats import __version__

    return __version__


# -- reading a table ------------------------------------------------------------------------


def _read_json_lines(path: Path, encoding: str) -> pd.DataFrame:
    records = []
    with open(path, encoding=encoding) as handle:
        for number, line in enumerate(handle, start=1):
            if not line.strip():
                continue
            try:
                record = json.loads(line)
            except json.JSONDecodeError as error:
                raise FileReadError(
                    path, f"line {number} is not valid JSON ({error.msg} at column {error.colno})"
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
        raise FileReadError(path, f"not a readable Parquet file ({_one_line(error)})") from None


def _read_delimited(separator: str) -> Callable[[Path, str], pd.DataFrame]:
    def read(path: Path, encoding: str) -> pd.DataFrame:
        try:
            return pd.read_csv(path, sep=separator, encoding=encoding)
        except pd.errors.EmptyDataError:
            raise FileReadError(path, "the file has no header row and no data") from None
        except pd.errors.ParserError as error:
            kind = "CSV" if separator == "," else "TSV"
            raise FileReadError(path, f"malformed {kind} ({_one_line(error)})") from None

    return read


def _read_json(path: Path, encoding: str) -> pd.DataFrame:
    try:
        return pd.read_json(path, encoding=encoding)
    except ValueError as error:
        raise FileReadError(
            path,
            f"not a JSON table ({_one_line(error)}); for one JSON object per line, name the "
            "file .jsonl",
        ) from None


_READERS: dict[str, Callable[[Path, str], pd.DataFrame]] = {
    ".csv": _read_delimited(","),
    ".tsv": _read_delimited("\t"),
    ".parquet": _read_parquet,
    ".jsonl": _read_json_lines,
    ".json": _read_json,
}


def _one_line(error: BaseException) -> str:
    return " ".join(str(error).split())


def read_table(path: str, file_format: str = "auto", encoding: str = "utf-8") -> pd.DataFrame:
    """Read a table of graded rows for the command line, with one-line errors."""
    if file_format == "inspect":
        from clusterstats.readers import read_inspect

        return read_inspect(path)
    if file_format == "lm-eval":
        from clusterstats.readers import read_lm_eval

        return read_lm_eval(path)
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
        frame = _READERS[suffix](file, encoding)
    except UnicodeDecodeError as error:
        byte = error.object[error.start : error.start + 1].hex()
        raise FileReadError(
            file,
            f"it is not {encoding} text (byte 0x{byte} at position {error.start}); pass "
            "--encoding (e.g. --encoding latin-1) or save the file as UTF-8",
        ) from None
    except LookupError:
        raise FileReadError(file, f"unknown encoding {encoding!r}") from None
    if len(frame) == 0:
        raise FileReadError(file, "the file has no data rows")
    return frame


# -- writing results ------------------------------------------------------------------------


def _plain(value: Any) -> Any:
    """A JSON value: tuples as lists, numpy scalars as Python numbers, NaN and inf as null."""
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value


def _record(result: Any) -> dict[str, Any]:
    row = result.to_dict()
    return {column: _plain(row[column]) for column in type(result).columns}


def json_output(results: Any) -> str:
    """One JSON object for one result; a list of objects, each with its ``group``, for a
    grouped result. Keys are the result's ``to_frame()`` columns; ``by`` and ``notes`` are
    lists; NaN and infinities are ``null``."""
    if isinstance(results, GroupedResults):
        payload: Any = [
            {"group": _plain(dict(zip(results.dims, key, strict=True))), **_record(result)}
            for key, result in zip(results._keys(), results.results, strict=True)
        ]
    else:
        payload = _record(results)
    return json.dumps(payload, indent=2, allow_nan=False, ensure_ascii=False)


def _notes_of(results: Any) -> tuple[str, ...]:
    members = results.results if isinstance(results, GroupedResults) else (results,)
    return tuple(dict.fromkeys(note for r in members for note in getattr(r, "notes", ())))


def comparison_table(results: ClusterCI | GroupedResults[ClusterCI], label: str) -> str:
    """Naive and clustered intervals side by side, one line per group."""
    items = results.items() if isinstance(results, GroupedResults) else [("all rows", results)]
    first = results.results[0] if isinstance(results, GroupedResults) else results
    level = f"{first.confidence:.0%}"
    header = [
        label,
        "estimate",
        f"naive {level} CI",
        f"clustered {level} CI",
        "widening",
        "ICC",
        "deff",
        "n_eff",
        "rows",
        "clusters",
    ]
    rows = []
    for group, r in items:
        rows.append(
            [
                group,
                r.estimate,
                fmt.interval(r.naive_low, r.naive_high, 3),
                fmt.interval(r.low, r.high, 3),
                f"x{r.widening:.2f}",
                r.icc,
                r.design_effect,
                round(r.n_eff) if math.isfinite(r.n_eff) else r.n_eff,
                r.n_rows,
                r.n_clusters,
            ]
        )
    return fmt.text_table(header, rows)


# -- commands: each prints its output and returns the notes that output shows ---------------


def _demo(args: argparse.Namespace) -> Iterable[str]:
    df = datasets.load_demo_data()
    res = cluster_ci(df, "correct", by="src", over="model", method=args.method)
    first = res.results[0]
    print("clusterstats demo: MMLU-Pro (slice bundled with the package), 4 models")
    print(
        f"{first.n_rows:,} graded questions per model in {first.n_clusters} source clusters "
        f"(sizes {first.cluster_size_min}-{first.cluster_size_max}); outcome = correct"
    )
    print(f"method: {first.method}, estimand: {first.estimand} (share of all questions)\n")
    print(comparison_table(res, "model"))
    print(
        "\nnaive = Wilson interval treating every question as independent; clustered = the "
        "same\naccuracy with questions from one source treated as correlated. widening = "
        "clustered\nwidth / naive width; n_eff = how many independent questions the rows are "
        "worth."
    )
    notes = _notes_of(res)
    for note in notes:
        print(f"note: {note}")
    return notes


def _ci(args: argparse.Namespace) -> Iterable[str]:
    df = read_table(args.path, args.format, args.encoding)
    by = args.by[0] if len(args.by) == 1 else args.by
    res = cluster_ci(
        df,
        args.outcome,
        by,
        estimand=args.estimand,
        method=args.method,
        confidence=args.confidence,
        over=args.over,
        missing=args.missing,
        n_resamples=args.n_resamples,
        rng=args.seed,
    )
    notes = _notes_of(res)
    if args.output == "text":
        print(repr(res))
    elif args.output == "table":
        print(comparison_table(res, args.over or ""))
        for note in notes:
            print(f"note: {note}")
    elif args.output == "csv":
        print(res.to_frame().to_csv(index=False), end="")
    else:
        print(json_output(res))
    return notes


def _datasets(args: argparse.Namespace) -> Iterable[str]:
    if args.name is None:
        rows = [
            [name, info.n_rows, info.licence, info.clusters]
            for name, info in ((n, datasets.info(n)) for n in datasets.list())
        ]
        print(fmt.text_table(["name", "rows", "licence", "clusters"], rows))
        return ()
    info = datasets.info(args.name)
    if args.to is None:
        print(repr(info))
        return ()
    target = Path(args.to)
    suffix = target.suffix.lower()
    frame = datasets.load(args.name)
    if suffix == ".csv":
        frame.to_csv(target, index=False)
    elif suffix == ".tsv":
        frame.to_csv(target, sep="\t", index=False)
    elif suffix == ".jsonl":
        frame.to_json(target, orient="records", lines=True)
    elif suffix == ".parquet":
        frame.to_parquet(target, index=False)
    else:
        raise FileReadError(
            target, "unknown file type; write .csv, .tsv, .jsonl or .parquet (--to FILE)"
        )
    print(f"wrote {fmt.count(len(frame), 'row')} of {args.name} to {args.to}")
    return ()


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="clusterstats",
        description="Honest confidence intervals for eval results with clustered rows.",
    )
    parser.add_argument("--version", action="version", version=f"clusterstats {_version()}")
    sub = parser.add_subparsers(dest="command", required=True)

    demo = sub.add_parser("demo", help="naive vs clustered intervals on bundled MMLU-Pro data")
    demo.add_argument("--method", default="auto", choices=METHODS)
    demo.set_defaults(func=_demo)

    ci = sub.add_parser("ci", help="clustered confidence interval of a column of a table")
    ci.add_argument(
        "path",
        help="a .csv, .tsv, .parquet, .json or .jsonl file; or, with --format, inspect_ai "
        "logs or lm-evaluation-harness samples (a file or a directory)",
    )
    ci.add_argument(
        "--format",
        default="auto",
        choices=("auto", "inspect", "lm-eval"),
        help="auto: by file extension; inspect: inspect_ai .eval/.json logs (one row per "
        "sample and epoch, outcome column 'score'); lm-eval: --log_samples JSONL files",
    )
    ci.add_argument("--encoding", default="utf-8", help="text encoding of a CSV, TSV or JSON file")
    ci.add_argument("--outcome", required=True, help="outcome column (0/1 or a score)")
    ci.add_argument(
        "--by",
        required=True,
        action="append",
        help="cluster column (repeat for a combination of columns)",
    )
    ci.add_argument("--over", help="one interval per value of this column (e.g. model)")
    ci.add_argument("--estimand", default="pooled", choices=ESTIMANDS)
    ci.add_argument("--method", default="auto", choices=METHODS)
    ci.add_argument("--confidence", type=float, default=0.95)
    ci.add_argument("--missing", default="drop", choices=("drop", "fail", "pass", "raise", "ipw"))
    ci.add_argument("--n-resamples", type=int, default=9999, dest="n_resamples")
    ci.add_argument("--seed", type=int, default=None, help="seed for bootstrap methods")
    ci.add_argument("--output", default="text", choices=("text", "table", "csv", "json"))
    ci.set_defaults(func=_ci)

    data = sub.add_parser(
        "datasets", help="list the bundled datasets, describe one, or write one to a file"
    )
    data.add_argument("name", nargs="?", choices=datasets.list(), help="a bundled dataset")
    data.add_argument("--to", help="write the dataset to this .csv, .tsv, .jsonl or .parquet")
    data.set_defaults(func=_datasets)
    return parser


def _print_warnings(caught: Sequence[warnings.WarningMessage], shown: Iterable[str]) -> None:
    """One ``warning:`` line per distinct message, unless the output shows it as a note."""
    seen = set(shown)
    for caught_warning in caught:
        message = " ".join(str(caught_warning.message).split())
        if message in seen:
            continue
        seen.add(message)
        print(f"warning: {message}", file=sys.stderr)


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the exit status (0 success, 2 user error)."""
    args = build_parser().parse_args(argv)
    shown: Iterable[str] = ()
    failure = None
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            shown = tuple(args.func(args))
        except (ClusterStatsError, OSError) as exc:
            failure = _one_line(exc)
    _print_warnings(caught, shown)
    if failure is not None:
        print(f"clusterstats: error: {failure}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
