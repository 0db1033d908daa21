"""Command line: ``clusterstats demo``, ``ci``, ``paired``, ``compare``, ``passk``,
``flakiness``, ``report``, ``check``, ``missing``, ``plan``, ``gate``, ``annotate`` and
``datasets``, each a thin layer over the library function it names.

Exit status 0 on success, 2 for anything the user can fix (a bad option, an unreadable file,
data the statistics cannot use), each reported as one ``clusterstats: error: ...`` line on
standard error. ``gate`` exits with its verdict (0 pass, 1 fail, 2 inconclusive, 4 void: a
watching gate whose sequence went empty) and 3 for such an error. Library warnings (and the
``clusterstats`` logger's warnings, e.g. from ``annotate``) become one ``warning: ...`` line
each on standard error, printed once, and never when the output already shows the same text
as a note. An error or a warning that names a library keyword (``how='inner'``, ``on=``)
names the command's option instead (``--how inner``, ``--on``).
"""

from __future__ import annotations

import argparse
import ast
import io
import json
import logging
import math
import os
import re
import shlex
import sys
import traceback
import warnings
from collections.abc import Callable, Iterable, Sequence
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn

import numpy as np
import pandas as pd

from clusterstats import _display as fmt
from clusterstats import _options as opt
from clusterstats import datasets
from clusterstats._options import COMPARE_METHODS, PAIRED_METHODS, SEQUENCE_METHODS, TARGETS
from clusterstats._result import GroupedResults
from clusterstats.core.intervals import METHODS
from clusterstats.core.variance import ESTIMANDS
from clusterstats.errors import (
    AlignmentError,
    ClusterStatsError,
    InvalidOptionError,
)
from clusterstats.readers.tables import FILE_FORMATS, one_line, read_table

if TYPE_CHECKING:
    from clusterstats.stats.mean import ClusterCI

#: What ``--output`` writes, the same on every command that prints a result; ``ci`` also
#: has ``table``, its naive and clustered intervals side by side.
OUTPUTS: tuple[str, ...] = ("text", "markdown", "csv", "json")
CI_OUTPUTS: tuple[str, ...] = ("text", "table", "markdown", "csv", "json")
OUTPUT_HELP = (
    "text (default: the printed result), markdown (for a pull request or a job summary), csv "
    "(the to_frame() columns) or json"
)


def _version() -> str:
    from clusterstats import __version__

    return __version__


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


def _records(frame: pd.DataFrame) -> list[dict[str, Any]]:
    """A frame's rows as JSON objects (NaN and infinities as null)."""
    return [{str(k): _plain(v) for k, v in row.items()} for row in frame.to_dict(orient="records")]


def _record(result: Any) -> dict[str, Any]:
    row = result.to_dict()
    return {column: _plain(row[column]) for column in type(result).columns}


def _dumps(payload: Any) -> str:
    return json.dumps(payload, indent=2, allow_nan=False, ensure_ascii=False)


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
    return _dumps(payload)


def _table_notes(result: Any) -> tuple[str, ...]:
    return tuple(getattr(result, "notes", ()))


def _table_json(result: Any) -> str:
    """A result that is a table (a report, a plan, a check):
    ``{"rows": [...to_frame() records...], "notes": [...]}``."""
    return _dumps({"rows": _records(result.to_frame()), "notes": list(_table_notes(result))})


def _rows_json(result: Any) -> str:
    """A table's ``to_frame()`` records, as a list (``lm-eval``: its notes are in its rows)."""
    return _dumps(_records(result.to_frame()))


def _notes_of(results: Any) -> tuple[str, ...]:
    members = results.results if isinstance(results, GroupedResults) else (results,)
    return tuple(dict.fromkeys(note for r in members for note in getattr(r, "notes", ())))


def _labelled_notes(results: Any) -> list[str]:
    """The notes under a table: each prefixed with its group, as the grouped repr does."""
    if isinstance(results, GroupedResults):
        return results._notes()
    return list(_notes_of(results))


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
                ", ".join(map(str, group)) if isinstance(group, tuple) else group,
                r.estimate,
                fmt.interval(r.naive_low, r.naive_high),
                fmt.interval(r.low, r.high),
                f"x{fmt.number(r.widening)}",
                fmt.proportion(r.icc),
                r.design_effect,
                r.n_eff,
                r.n_rows,
                r.n_clusters,
            ]
        )
    return fmt.text_table(header, rows)


def _side_by_side(result: Any, args: argparse.Namespace, to_json: Callable[[Any], str]) -> str:
    """``ci --output table``: the naive and clustered intervals, then the notes."""
    table = comparison_table(result, ", ".join(args.over or []))
    return "\n".join([table, *(f"note: {note}" for note in _labelled_notes(result))]) + "\n"


#: What each value of ``--output`` writes, from the result, the command's options and the
#: command's JSON (commands differ only in what their JSON holds); every command prints
#: through this one table.
_WRITERS: dict[str, Callable[[Any, argparse.Namespace, Callable[[Any], str]], str]] = {
    "text": lambda result, args, to_json: repr(result) + "\n",
    "table": _side_by_side,
    "markdown": lambda result, args, to_json: result.to_markdown(),
    "csv": lambda result, args, to_json: result.to_frame().to_csv(index=False),
    "json": lambda result, args, to_json: to_json(result) + "\n",
}


def _print_output(
    result: Any, args: argparse.Namespace, *, to_json: Callable[[Any], str] = json_output
) -> None:
    """Print ``result`` as ``--output`` asks."""
    print(_WRITERS[args.output](result, args, to_json), end="")


def _print_table(result: Any, args: argparse.Namespace) -> tuple[str, ...]:
    """Print a result that is a table; returns the notes it shows."""
    _print_output(result, args, to_json=_table_json)
    return _table_notes(result)


# -- commands: each prints its output and returns the notes that output shows ---------------


def _demo(args: argparse.Namespace) -> Iterable[str]:
    from clusterstats.stats.mean import cluster_ci

    df = datasets.load_demo_data()
    res = cluster_ci(df, "correct", by="src", over="model", method=args.method)
    first = res.results[0]
    print("clusterstats demo: MMLU-Pro (bundled with the package), 4 models")
    print(
        f"{first.n_rows:,} graded questions per model in {first.n_clusters} source clusters "
        f"(sizes {first.cluster_size_min:,}-{first.cluster_size_max:,}); outcome = correct"
    )
    print(f"method: {first.method}, estimand: {first.estimand} (share of all questions)\n")
    print(comparison_table(res, "model"))
    print(
        "\nnaive = Wilson interval treating every question as independent; clustered = the "
        "same\naccuracy with questions from one source treated as correlated. widening = "
        "clustered\nwidth / naive width; n_eff = how many independent questions the rows are "
        "worth."
    )
    for note in _labelled_notes(res):
        print(f"note: {note}")
    return _notes_of(res)


def _ci(args: argparse.Namespace) -> Iterable[str]:
    from clusterstats.stats.mean import cluster_ci

    labels = [*args.by, *(args.over or [])]
    df = _read(args, args.path, [*labels, *_extra_labels(args)])

    if args.outcome in labels:
        option = "--over" if args.outcome in (args.over or []) else "--by"
        raise InvalidOptionError(
            f"--outcome {args.outcome!r} is also the {option} column; the outcome is what each "
            "row scored, the clusters what rows share: name two different columns"
        )
    for column in args.by:
        parts = [part.strip() for part in column.split(",")]
        if column not in df.columns and len(parts) > 1 and set(parts) <= set(df.columns):
            raise InvalidOptionError(
                f"--by {column!r}: no such column; to cluster by a combination of columns, "
                f"repeat --by: {' '.join('--by ' + part for part in parts)}"
            )
    res = cluster_ci(
        df, args.outcome, _key(args.by), over=_key(args.over), **_keywords(args, *_DESIGN)
    )
    _print_output(res, args)
    return _notes_of(res)


def _read(args: argparse.Namespace, path: str, labels: Sequence[str] = ()) -> pd.DataFrame:
    """The command's input, read as its options say (``--format``, ``--encoding``, and
    for lm-evaluation-harness samples ``--filter``, ``--runs`` and the ``--outcome``
    metric)."""
    return read_table(
        path,
        args.format,
        args.encoding,
        labels=labels,
        outcome=getattr(args, "outcome", None),
        lm_eval_filter=args.filter,
        runs=args.runs,
        score=args.score,
        key=args.key,
    )


def _keywords(args: argparse.Namespace, *names: str) -> dict[str, Any]:
    """The options ``names`` as the library's keyword arguments: an option's ``dest`` is the
    keyword it stands for (``--seed`` is ``rng``)."""
    return {name: getattr(args, name) for name in names}


#: The keywords of :func:`_design_options`, which every statistic shares.
_DESIGN = (
    "estimand",
    "method",
    "confidence",
    "missing",
    "responded",
    "strata",
    "nest",
    "lonely",
    "n_resamples",
    "rng",
    "crossed",
    "weights",
)


def _key(values: Sequence[str] | None) -> Any:
    """One label, a list of labels, or None, from a repeatable option."""
    if not values:
        return None
    return values[0] if len(values) == 1 else list(values)


def _extra_labels(args: argparse.Namespace) -> list[str]:
    return [x for x in (args.responded, args.strata) if x is not None]


def _pairing_key(
    args: argparse.Namespace, new: pd.DataFrame, old: pd.DataFrame, sides: tuple[str, str]
) -> Any:
    """The item key that pairs two files' rows: ``--on``, or, with ``--on-position``, row
    ``i`` with row ``i`` once the ``--by`` labels are checked to agree row by row.

    The rows of a file carry no key of their own (they are numbered as read), so pairing
    without ``--on`` would pair by position: reordered rows would then pair different items
    and give a wrong difference without a word.
    """
    if args.on:
        if args.on_position:
            raise InvalidOptionError("pass --on COLUMN or --on-position, not both")
        return _key(args.on)
    if not args.on_position:
        raise InvalidOptionError(
            f"{sides[0]} and {sides[1]} must be paired item by item: pass --on with the item id "
            "column both files share (e.g. --on question_id; repeat it for a key of several "
            "columns), or --on-position to pair row i with row i once the --by labels are "
            "checked to agree row by row"
        )
    if len(new) != len(old):
        raise AlignmentError(
            f"--on-position pairs row i with row i, but {sides[0]} has {len(new):,} rows and "
            f"{sides[1]} {len(old):,}: pass --on with the item id column"
        )
    for label in args.by:
        # as objects, so that labels of different dtypes or categories compare as values
        mine, theirs = new[label].to_numpy(dtype=object), old[label].to_numpy(dtype=object)
        differ = (mine != theirs) & ~(pd.isna(mine) & pd.isna(theirs))
        if differ.any():
            row = int(np.flatnonzero(differ)[0])
            raise AlignmentError(
                f"--on-position: the cluster column {label!r} differs in {int(differ.sum()):,} "
                f"rows (first at row {row + 1:,}: {mine[row]!r} in {sides[0]}, "
                f"{theirs[row]!r} in {sides[1]}), so the rows are not the same items in "
                "the same order: pass --on with the item id column"
            )
    # a named index is a key the caller chose: row i of one file pairs with row i of the other
    for frame in (new, old):
        frame.index = pd.RangeIndex(len(frame), name="row")
    return None


def _read_baseline(
    args: argparse.Namespace, candidate: pd.DataFrame, path: str | None, labels: Sequence[str]
) -> tuple[pd.DataFrame | None, Any]:
    """The baseline FILE ``plan`` and ``gate`` may take, and the key that pairs its rows with
    ``candidate``'s (:func:`_pairing_key`); ``(None, None)`` without one."""
    if path is None:
        if args.on_position:
            raise InvalidOptionError("--on-position pairs two files: it needs --baseline")
        return None, None
    baseline = _read(args, path, labels)
    return baseline, _pairing_key(args, candidate, baseline, (args.path, path))


def _baseline_file(args: argparse.Namespace) -> str:
    """``paired``'s baseline: ``--baseline FILE``, as ``gate`` and ``plan`` take it, or by
    position (``paired NEW OLD``), the form of earlier releases, which keeps working with a
    note."""
    if args.baseline is not None and args.baseline_file is not None:
        raise InvalidOptionError(
            f"two baselines: {args.baseline!r} by position and --baseline "
            f"{args.baseline_file!r}; give one, as --baseline FILE"
        )
    if args.baseline is not None:
        _note(
            args,
            f"the baseline by position (paired NEW {args.baseline}) still works; "
            f"--baseline {args.baseline} is the form gate and plan share",
        )
        return str(args.baseline)
    if args.baseline_file is None:
        raise InvalidOptionError("paired compares two runs: give the baseline as --baseline FILE")
    return str(args.baseline_file)


def _note(args: argparse.Namespace, text: str) -> None:
    """A ``note:`` line on standard error about how the command was written (a form kept
    for earlier releases), printed once the command has run."""
    args.__dict__.setdefault("_usage_notes", []).append(text)


def _paired(args: argparse.Namespace) -> Iterable[str]:
    from clusterstats.stats.paired import paired_delta

    labels = [*args.by, *(args.on or []), *([args.rerun] if args.rerun else [])]
    labels += _extra_labels(args)
    baseline = _baseline_file(args)
    new = _read(args, args.path, labels)
    old = _read(args, baseline, labels)
    on = _pairing_key(args, new, old, (args.path, baseline))
    res = paired_delta(
        new,
        old,
        args.outcome,
        _key(args.by),
        on=on,
        rerun=args.rerun,
        how=args.how,
        labels=(Path(args.path).stem, Path(baseline).stem),
        **_keywords(args, *_DESIGN),
    )
    _print_output(res, args)
    return _notes_of(res)


def _judged(args: argparse.Namespace) -> Iterable[str]:
    from clusterstats.stats.judged import judged_ci

    on = _key(args.on)
    labels = [*args.by, args.judge, *(args.on or [])]
    labels += [name for name in (args.strata, args.inclusion) if name]
    data = _read(args, args.path, labels)
    human = None if args.labels is None else _read(args, args.labels, [*(args.on or [])])
    res = judged_ci(
        data,
        args.outcome,
        _key(args.by),
        judge=args.judge,
        labels=human,
        on=on,
        weight=_weight(args.weight),
        **_keywords(args, "estimand", "target", "method", "confidence", "strata", "inclusion"),
        **_keywords(args, "n_resamples", "rng"),
        nest=args.nest,
    )
    _print_output(res, args)
    return _notes_of(res)


def _weight(value: str) -> str | float:
    """``--weight``: a name, or a number."""
    try:
        return float(value)
    except ValueError:
        return value


def _compare(args: argparse.Namespace) -> Iterable[str]:
    from clusterstats.stats.slices import compare

    labels = [*args.by, args.model, *(args.on or []), *([args.rerun] if args.rerun else [])]
    labels += [*(args.over or []), *_extra_labels(args), *([args.judge] if args.judge else [])]
    df = _read(args, args.path, labels)
    baseline: Any = args.baseline
    if baseline is not None and baseline not in set(df[args.model].astype(str)):
        raise InvalidOptionError(
            f"--baseline {baseline!r} is not a value of --model {args.model!r}"
        )
    if baseline is not None:
        # the command line gives text; the column may hold numbers
        baseline = next(v for v in df[args.model].unique() if str(v) == baseline)
    if args.judge is not None:
        res = _judged_compare(args, df, baseline)
        _print_output(res, args, to_json=_comparison_json)
        return tuple(res.notes)
    res = compare(
        df,
        args.outcome,
        _key(args.by),
        model=args.model,
        on=_key(args.on),
        baseline=baseline,
        over=_key(args.over),
        **_keywords(args, "rerun", "how", "adjust", "orientation", "rank_method", "top"),
        **_keywords(args, *_DESIGN),
    )
    _print_output(res, args, to_json=_comparison_json)  # csv: to_frame(), the pairs (and slices)
    return tuple(res.notes)


#: ``compare`` options a judged leaderboard does not take, and the value each must keep.
_NOT_JUDGED = {
    "rerun": None, "over": None, "responded": None, "weights": None, "crossed": False,
    "missing": "drop", "lonely": "fail",
}  # fmt: skip


def _judged_compare(args: argparse.Namespace, df: Any, baseline: Any) -> Any:
    """``compare --judge``: the judged leaderboard (``judged_compare``)."""
    from clusterstats.stats.judged_compare import judged_compare

    for name, kept in _NOT_JUDGED.items():
        if getattr(args, name) not in (kept, []):
            raise InvalidOptionError(
                f"--{name.replace('_', '-')} does not go with --judge: a judged leaderboard "
                "takes one row per model and item, every row judged"
            )
    return judged_compare(
        df,
        args.outcome,
        _key(args.by),
        model=args.model,
        judge=args.judge,
        on=_key(args.on),
        baseline=baseline,
        weight=_weight(args.weight),
        method="cr2" if args.method == "auto" else args.method,
        **_keywords(args, "how", "adjust", "orientation", "rank_method", "top", "target"),
        **_keywords(args, "estimand", "confidence", "strata", "nest", "n_resamples", "rng"),
    )


def _comparison_json(res: Any) -> str:
    """``compare``'s JSON: the leaderboard, the pairs and the notes; a SliceComparison's pairs
    carry their slice and p_family, and its leads are the pairs that survive the family of
    every slice's pairs."""
    from clusterstats.stats.slices import SliceComparison

    payload = {"leaderboard": _records(res.leaderboard()), "pairs": _records(res.pairs())}
    if isinstance(res, SliceComparison):
        payload["leads"] = _records(res.leads())
    payload["notes"] = list(res.notes)
    return _dumps(payload)


def _rerun_statistic(args: argparse.Namespace) -> Iterable[str]:
    from clusterstats.stats.reruns import flakiness, pass_at_k, pass_hat_k

    labels = [args.case, args.rerun, *([args.by] if args.by else [])]
    labels += args.over or []
    df = _read(args, args.path, labels)
    common = {
        "over": _key(args.over),
        **_keywords(args, "by", "case", "rerun", "method", "confidence"),
    }
    if args.command == "flakiness":
        res = flakiness(df, args.outcome, **common)
    else:
        function = pass_hat_k if args.hat else pass_at_k
        passk = _keywords(args, "k", "fewer_runs", "n_resamples", "rng")
        res = function(df, args.outcome, **passk, **common)
    _print_output(res, args)
    return _notes_of(res)


def _report(args: argparse.Namespace) -> Iterable[str]:
    from clusterstats.stats.diagnostics import report

    labels = [*args.by, *(args.over or [])]
    labels += [args.responded] if args.responded else []
    df = _read(args, args.path, labels)
    res = report(
        df,
        args.outcome,
        _key(args.by),
        over=_key(args.over),
        **_keywords(args, "estimand", "method", "confidence", "missing", "responded"),
    )
    return _print_table(res, args)


def _check(args: argparse.Namespace) -> Iterable[str]:
    from clusterstats.stats.diagnostics import check_clustering

    df = _read(args, args.path)
    # "a+b" is the combination of columns a and b, unless a column has that name
    candidates = [
        [c] if c in df.columns else [part.strip() for part in c.split("+")]
        for c in args.candidate or []
    ]
    res = check_clustering(
        df,
        args.outcome,
        [c[0] if len(c) == 1 else c for c in candidates],
        **_keywords(args, "time", "window", "confidence", "missing"),
    )
    return _print_table(res, args)


def _missing(args: argparse.Namespace) -> Iterable[str]:
    from clusterstats.stats.missing import missing_report

    labels = [*args.by, *(x for x in (args.reason, args.responded) if x)]
    df = _read(args, args.path, labels)
    res = missing_report(
        df,
        args.outcome,
        _key(args.by),
        **_keywords(args, "reason", "responded", "confidence", "threshold"),
    )
    return _print_table(res, args)


def _plan(args: argparse.Namespace) -> Iterable[str]:
    from clusterstats.stats.planning import pilot_plan

    labels = [*args.by, *(args.on or []), *([args.responded] if args.responded else [])]
    if args.judge is not None:
        return _label_plan(args, labels)
    if args.cost_per_label is not None:
        raise InvalidOptionError("--cost-per-label prices human labels: it needs --judge")
    df = _read(args, args.path, labels)
    if getattr(args, "_spelled", {}).get("other") == "--other":
        _note(
            args,
            f"--other still works; --baseline {args.other} is the form gate and paired share",
        )
    other, on = _read_baseline(args, df, args.other, labels)
    res = pilot_plan(
        df,
        args.outcome,
        _key(args.by),
        other=other,
        on=_key(args.on) if other is None else on,
        **_keywords(args, "missing", "confidence", "responded", "power", "effect"),
        **_keywords(args, "cost_per_cluster", "cost_per_row", "target_half_width"),
    )
    return _print_table(res, args)


def _label_plan(args: argparse.Namespace, labels: list[str]) -> Iterable[str]:
    """``plan --judge``: how many human labels a judged run needs (``judged_plan``)."""
    from clusterstats.stats.judged_plan import judged_plan

    for given, option in ((args.other, "--baseline"), (args.responded, "--responded"),
                          (args.cost_per_row, "--cost-per-row")):  # fmt: skip
        if given is not None:
            raise InvalidOptionError(
                f"{option} is not an option of a labelling plan (--judge); its costs are "
                "--cost-per-label and --cost-per-cluster"
            )
    df = _read(args, args.path, [*labels, args.judge])
    res = judged_plan(
        df,
        args.outcome,
        _key(args.by),
        judge=args.judge,
        cost_per_label=1.0 if args.cost_per_label is None else args.cost_per_label,
        cost_per_cluster=0.0 if args.cost_per_cluster is None else args.cost_per_cluster,
        **_keywords(args, "confidence", "power", "effect", "target_half_width"),
    )
    return _print_table(res, args)


def _annotate(args: argparse.Namespace) -> Iterable[str]:
    try:
        from clusterstats.inspect import annotate
    except ImportError as error:
        raise InvalidOptionError(str(error)) from None
    log = annotate(
        Path(args.log),
        cluster=args.cluster,
        scorer=args.scorer,
        output=args.output,
        in_place=args.in_place,
    )
    written = log.location
    for score in log.results.scores:
        group = {k: m.value for k, m in score.metrics.items() if m.group == "cluster_ci"}
        if group:
            shown = ", ".join(
                f"{k} {fmt.number(int(v) if float(v).is_integer() else v)}"
                for k, v in group.items()
            )
            print(f"{score.name}: cluster_ci {shown}")
    print(f"wrote {written}")
    return ()


def _lm_eval(args: argparse.Namespace) -> Iterable[str]:
    from clusterstats.harness import lm_eval_table

    table = lm_eval_table(
        args.path,
        by=_key(args.by),
        **_keywords(args, "confidence", "method", "estimand", "runs", "rng"),
    )
    _print_output(table, args, to_json=_rows_json)
    # the table shows its rows' notes, not its intervals' (few clusters): those are warned
    return ()


def _gate(args: argparse.Namespace) -> Iterable[str]:
    from clusterstats.gating import gate

    labels = [*args.by, *(args.over or []), *(args.on or [])]
    labels += [args.order] if args.order else []
    labels += _extra_labels(args)
    if (args.baseline is None) == (args.at_least is None):
        raise InvalidOptionError(
            "a gate asks one question: --baseline FILE with --margin M (not worse than the "
            "baseline by more than M) or --at-least T (a pass rate of at least T)"
        )
    candidate = _read(args, args.path, labels)
    baseline, on = _read_baseline(args, candidate, args.baseline, labels)
    report = gate(
        candidate,
        args.outcome,
        _key(args.by),
        baseline=baseline,
        over=_key(args.over),
        on=on,
        bounds=None if args.bounds is None else tuple(args.bounds),
        **_keywords(args, "margin", "at_least", "how", "power", "rerun"),
        **_keywords(args, *_DESIGN),
        **_keywords(args, "sequential", "order", "budget", "max_cluster_size", "cluster_size"),
        **_keywords(args, "target", "benchmark_clusters", "benchmark_rows"),
    )
    args.exit_code = report.exit_code  # the verdict stands even if the reader stops early
    _print_output(report, args, to_json=_gate_json)
    if args.summary is not None:
        with open(args.summary, "a", encoding="utf-8") as handle:
            handle.write(report.to_markdown())
    return tuple(dict.fromkeys(n for g in report.gates for n in g.notes))


def _gate_json(report: Any) -> str:
    """``gate``'s JSON: the verdict, its exit status and each gate's record."""
    payload = {
        "verdict": report.verdict,
        "exit_code": report.exit_code,
        "confidence": report.confidence,
        "adjust": report.adjust,
        "gates": [_record(g) for g in report.gates],
    }
    return _dumps(payload)


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
    if suffix not in (".csv", ".tsv", ".jsonl", ".parquet"):
        raise InvalidOptionError(
            f"--to {args.to!r}: unknown file type {suffix or '(no extension)'!r}; write a .csv, "
            ".tsv, .jsonl or .parquet file"
        )
    frame = datasets.load(args.name)
    if suffix == ".csv":
        frame.to_csv(target, index=False)
    elif suffix == ".tsv":
        frame.to_csv(target, sep="\t", index=False)
    elif suffix == ".jsonl":
        frame.to_json(target, orient="records", lines=True)
    else:
        frame.to_parquet(target, index=False)
    print(f"wrote {fmt.count(len(frame), 'row')} of {args.name} to {args.to}")
    return ()


class _UsageError(Exception):
    """A command line that argparse rejects (an unknown option, a bad value)."""


class _Once(argparse.Action):
    """Store an option's value, refusing a second one: argparse would keep the last silently
    (``--outcome passed --outcome score`` would be an interval of ``score``)."""

    def __call__(
        self,
        parser: argparse.ArgumentParser,
        namespace: argparse.Namespace,
        values: Any,
        option_string: str | None = None,
    ) -> None:
        given = namespace.__dict__.setdefault("_given", set())
        if self.dest in given:
            raise argparse.ArgumentError(self, "given twice; give it once")
        given.add(self.dest)
        # which of an option's names was typed (plan's --baseline, or --other as before)
        namespace.__dict__.setdefault("_spelled", {})[self.dest] = option_string
        setattr(namespace, self.dest, values)


class _Parser(argparse.ArgumentParser):
    """argparse, with its errors as one ``clusterstats: error:`` line and exit status 2
    returned by :func:`main` (argparse itself prints the usage and exits), and every option
    without an action of its own given at most once.

    ``intermixed=True`` reads positionals wherever they stand among the options
    (``paired NEW --outcome c OLD``): argparse alone would give an optional positional
    (``paired``'s old baseline) its empty value at the first one and refuse the second.
    """

    def __init__(self, *args: Any, intermixed: bool = False, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._intermixed = intermixed
        self._parsing = False

    def parse_known_args(  # type: ignore[override]
        self, args: Sequence[str] | None = None, namespace: argparse.Namespace | None = None
    ) -> tuple[argparse.Namespace, list[str]]:
        if not self._intermixed or self._parsing:
            return super().parse_known_args(args, namespace)
        self._parsing = True  # the intermixed parse calls this method for each of its passes
        try:
            return self.parse_known_intermixed_args(args, namespace)
        finally:
            self._parsing = False

    def error(self, message: str) -> NoReturn:
        raise _UsageError(f"{message} (see {self.prog} --help)")

    def add_argument(self, *names: Any, **options: Any) -> argparse.Action:
        if names and str(names[0]).startswith("-") and "action" not in options:
            options["action"] = _Once
        return super().add_argument(*names, **options)


# -- the parser: an option or group of options that commands share is declared once, in a
# function; each command declares the rest of its arguments in a function of its own


def _interval_options(parser: argparse.ArgumentParser, methods: Iterable[str]) -> None:
    """``--estimand``, ``--method`` and ``--confidence``: what an interval is of, and how."""
    parser.add_argument(
        "--estimand",
        default="pooled",
        choices=ESTIMANDS,
        help="pooled (default: the share of all rows) or cluster_mean (each cluster counts once)",
    )
    _method_option(parser, methods)
    _confidence_option(parser)


def _method_option(parser: argparse.ArgumentParser, methods: Iterable[str]) -> None:
    names = tuple(methods)
    parser.add_argument(
        "--method",
        default="auto",
        choices=names,
        metavar="METHOD",
        help=f"the interval method (default auto): {', '.join(names)}",
    )


def _confidence_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--confidence",
        type=float,
        default=0.95,
        help="the nominal coverage of the intervals, between 0 and 1 (default 0.95)",
    )


def _design_options(parser: argparse.ArgumentParser, *, methods: Sequence[str]) -> None:
    """The options every statistic shares, named as the library names them (:data:`_DESIGN`)."""
    _interval_options(parser, methods)
    _missing_option(parser, opt.MISSING_OR_IPW)
    parser.add_argument("--responded", help="response indicator column (true = answered)")
    parser.add_argument("--strata", help="stratum column of a stratified design")
    parser.add_argument(
        "--nest", action="store_true", help="with --strata: cluster ids are local to a stratum"
    )
    parser.add_argument(
        "--lonely",
        default="fail",
        choices=opt.LONELY,
        help="with --strata: what a stratum with one cluster does",
    )
    _resampling_options(parser)
    parser.add_argument(
        "--crossed",
        action="store_true",
        help="the --by columns are crossed groupings (e.g. --by question --by template), "
        "not one cluster made of their combination: two-way (Cameron-Gelbach-Miller) variance",
    )
    parser.add_argument(
        "--weights",
        help="a column of non-negative row weights: the weighted (Hajek) mean, as R survey",
    )


#: What each value of ``--missing`` does with a row whose outcome is missing.
_MISSING_MEANS = {
    "drop": "drop the row (default)",
    "fail": "count it as 0",
    "pass": "count it as 1",
    "raise": "stop with an error",
    "ipw": "inverse-probability weighting with cluster propensities",
}


def _missing_option(parser: argparse.ArgumentParser, choices: Sequence[str]) -> None:
    parser.add_argument(
        "--missing",
        default="drop",
        choices=choices,
        help="a missing outcome: " + "; ".join(f"{c}: {_MISSING_MEANS[c]}" for c in choices),
    )


def _resampling_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--n-resamples",
        type=int,
        default=9999,
        dest="n_resamples",
        help="bootstrap methods: the number of replicates (default 9999)",
    )
    _seed_option(parser)


def _seed_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--seed",
        type=int,
        default=None,
        dest="rng",
        metavar="SEED",
        help="bootstrap methods: the random seed, for the same interval on every run",
    )


def _output_option(parser: argparse.ArgumentParser, choices: Sequence[str] = OUTPUTS) -> None:
    extra = "; table: the naive and clustered intervals side by side" if "table" in choices else ""
    parser.add_argument("--output", default="text", choices=choices, help=OUTPUT_HELP + extra)


OUTCOME_HELP = "outcome column (0/1, true/false or a score)"
RESPONDED_HELP = "response indicator column (true = a usable response)"
AS_IN_CI = "as in clusterstats ci"


def _how_option(parser: argparse.ArgumentParser, sides: str) -> None:
    parser.add_argument(
        "--how",
        default="strict",
        choices=opt.ALIGNMENTS,
        help=f"strict (default): an item {sides} lacks is an error; inner: keep the items all have",
    )


def _on_position_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--on-position",
        action="store_true",
        dest="on_position",
        help="pair row i with row i (the --by labels must agree row by row); use --on when "
        "the files have an item id",
    )


def _input_options(
    parser: argparse.ArgumentParser, *, format_help: str = AS_IN_CI, encoding_help: str = AS_IN_CI
) -> None:
    """How a file is read: ``--format``, ``--encoding``, and the options of the formats that
    are logs (lm-evaluation-harness samples, inspect_ai logs)."""
    parser.add_argument("--format", default="auto", choices=FILE_FORMATS, help=format_help)
    parser.add_argument("--encoding", default=None, help=encoding_help)
    parser.add_argument(
        "--filter",
        default=None,
        help="lm-evaluation-harness samples: the filter to read, for tasks scored under "
        "several (e.g. strict-match), or 'all'",
    )
    parser.add_argument(
        "--runs",
        default=None,
        choices=opt.LM_EVAL_RUNS,
        help="lm-evaluation-harness samples: a task run several times into one folder, the "
        "newest run (default, with a warning) or every run (a run column)",
    )
    parser.add_argument(
        "--score",
        default=None,
        help="inspect_ai logs: the scorer whose value is the outcome, when samples carry several",
    )
    parser.add_argument(
        "--key",
        default=None,
        help="inspect_ai logs: the entry of a dict-valued score that is the outcome",
    )


def _table_arguments(
    parser: argparse.ArgumentParser,
    path: str,
    *,
    outcome: str,
    by: str | None = None,
    **input_help: str,
) -> None:
    """The file a command reads (``path``, then :func:`_input_options`), its ``--outcome``
    and, where ``by`` is its help, its required ``--by``."""
    parser.add_argument("path", help=path)
    _input_options(parser, **input_help)
    parser.add_argument("--outcome", required=True, help=outcome)
    if by is not None:
        parser.add_argument("--by", required=True, action="append", help=by)


def _ci_arguments(parser: argparse.ArgumentParser) -> None:
    _table_arguments(
        parser,
        "a .csv, .tsv, .parquet, .json or .jsonl file; or, with --format, inspect_ai "
        "logs or lm-evaluation-harness samples (a file or a directory)",
        outcome="outcome column (0/1 or a score)",
        by="cluster column (repeat for a combination of columns)",
        format_help="auto: inspect_ai logs and lm-evaluation-harness samples by their file "
        "names (*.eval, samples_<task>_<date>.jsonl, or a folder of them), other files by "
        "extension; inspect: inspect_ai .eval/.json logs (one row per sample and epoch, outcome "
        "column 'score'); lm-eval: --log_samples JSONL files (the outcome is a metric, e.g. acc)",
        encoding_help="text encoding of a CSV, TSV or JSON file (default UTF-8, with or without "
        "a byte-order mark)",
    )
    parser.add_argument(
        "--over",
        action="append",
        help="one interval per value of this column (e.g. model); repeat for combinations",
    )
    _design_options(parser, methods=METHODS)
    _output_option(parser, CI_OUTPUTS)


def _paired_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("path", help="the new run's results")
    parser.add_argument(
        "baseline",
        nargs="?",
        metavar="OLD",
        help="the baseline by position, as earlier releases took it (kept, with a note): "
        "prefer --baseline",
    )
    parser.add_argument(
        "--baseline",
        dest="baseline_file",
        metavar="FILE",
        help="the baseline's results on the same items (the difference is the new run minus "
        "this one)",
    )
    _input_options(parser)
    parser.add_argument("--outcome", required=True, help="outcome column (0/1 or a score)")
    parser.add_argument("--by", required=True, action="append", help="cluster column (repeat)")
    parser.add_argument(
        "--on", action="append", help="item key column(s) matching the two files (repeat)"
    )
    _on_position_option(parser)
    parser.add_argument("--rerun", help="run id column, when items have several rows")
    _how_option(parser, "one file")
    _design_options(parser, methods=PAIRED_METHODS)
    _output_option(parser)


def _target_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--target",
        default="population",
        choices=opt.TARGETS,
        help="with a judge: population (default: clusters like these) or benchmark (this "
        "run's own full-run score)",
    )


def _weight_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--weight",
        default="auto",
        help="the judge's weight: auto (default), tuned, cross-fitted, or a number (0: the "
        "human labels alone)",
    )


def _judged_arguments(parser: argparse.ArgumentParser) -> None:
    _table_arguments(
        parser,
        "the judged rows: a .csv, .tsv, .parquet, .json or .jsonl file, or inspect_ai logs "
        "(--format inspect)",
        outcome="the human label column (missing where unlabelled), in this file or in --labels",
        by="cluster column (repeat for a combination of columns)",
    )
    parser.add_argument("--judge", required=True, help="the judge's score column, on every row")
    parser.add_argument(
        "--labels",
        metavar="FILE",
        help="the human labels in a file of their own, matched to the judged rows --on a key",
    )
    parser.add_argument(
        "--on", action="append", help="with --labels: the key column(s) of a row (repeat)"
    )
    parser.add_argument(
        "--estimand",
        default="pooled",
        choices=ESTIMANDS,
        help="pooled (default: the mean over rows) or cluster_mean (each cluster counts once)",
    )
    _target_option(parser)
    _weight_option(parser)
    parser.add_argument(
        "--method",
        default="cr2",
        choices=opt.JUDGED_METHODS,
        help="cr2 (default) or cr1: the two-phase variance with that small-sample "
        "correction; bootstrap: the two-phase cluster bootstrap (studentised, the weight "
        "re-tuned in each draw); or a peer's construction: glide, ppi_py",
    )
    _confidence_option(parser)
    _resampling_options(parser)
    parser.add_argument("--strata", help="labelling strata column (constant within clusters)")
    parser.add_argument(
        "--inclusion", help="column of each labelled row's probability of being labelled"
    )
    parser.add_argument(
        "--nest", action="store_true", help="with --strata: cluster ids are local to a stratum"
    )
    _output_option(parser)


def _compare_arguments(parser: argparse.ArgumentParser) -> None:
    _table_arguments(
        parser,
        "one table, one row per model and item (and run)",
        outcome="outcome column",
        by="cluster column (repeat)",
    )
    parser.add_argument("--model", required=True, help="the column naming the model")
    parser.add_argument(
        "--on",
        action="append",
        help="item key column(s) matching one model's rows to another's (repeat)",
    )
    parser.add_argument("--rerun", help="run id column, when items have several rows")
    parser.add_argument(
        "--baseline",
        metavar="MODEL",
        help="compare every model with this one only (a value of --model)",
    )
    _how_option(parser, "some model")
    parser.add_argument(
        "--adjust",
        default="holm",
        choices=opt.ADJUSTMENTS,
        help="the p-value adjustment over the pairs: holm (default), bh (Benjamini-Hochberg) "
        "or none",
    )
    parser.add_argument(
        "--orientation",
        default="as_given",
        choices=opt.ORIENTATIONS,
        help="each pair as given (sorted models, or minus --baseline) or higher minus lower",
    )
    parser.add_argument(
        "--rank-method",
        default="auto",
        choices=opt.RANK_METHODS,
        dest="rank_method",
        help="where the rank sets' critical values come from: the cluster bootstrap, or draws "
        "from the normal or multivariate t law of the cluster-robust covariance; guarded: the "
        "t draws, never below Holm's bound (auto: guarded, the choice of the coverage study)",
    )
    parser.add_argument(
        "--top",
        type=int,
        default=1,
        help="in_top_set marks the models that could be among the best N (default 1: first)",
        metavar="N",
    )
    parser.add_argument(
        "--over",
        action="append",
        metavar="COL",
        help="compare slice by slice (e.g. --over language; repeat for combinations): one "
        "leaderboard per slice, every pair's p-value adjusted over one family of slices x "
        "pairs (p_family), so a lead on one slice is reported only when it survives them all",
    )
    _design_options(parser, methods=COMPARE_METHODS)
    parser.add_argument(
        "--judge",
        help="a judge's score column on every row, the outcome then the human labels "
        "(missing where unlabelled): each model's score and every pair are prediction-powered "
        "(judged_compare); --method auto, cr2 or cr1",
    )
    _target_option(parser)
    _weight_option(parser)
    _output_option(parser)


def _rerun_arguments(parser: argparse.ArgumentParser, *, passk: bool) -> None:
    """``passk`` (with ``passk=True``) and ``flakiness``."""
    _table_arguments(parser, "one row per case and run", outcome="the run's outcome (0/1)")
    parser.add_argument("--case", required=True, help="the case column")
    parser.add_argument("--rerun", required=True, help="the run id column")
    parser.add_argument("--by", help="a cluster of cases (default: each case)")
    parser.add_argument(
        "--over", action="append", help="one result per value of this column (repeat)"
    )
    _method_option(parser, METHODS)
    _confidence_option(parser)
    if passk:
        parser.add_argument("--k", type=int, required=True, help="runs per attempt")
        parser.add_argument("--hat", action="store_true", help="pass^k: all k runs pass")
        parser.add_argument(
            "--fewer-runs",
            default="raise",
            choices=opt.FEWER_RUNS,
            help="a case with fewer than k runs: raise (default, an error) or drop it",
        )
        _resampling_options(parser)
    _output_option(parser)


def _report_arguments(parser: argparse.ArgumentParser) -> None:
    _table_arguments(parser, "a table of graded rows", outcome=OUTCOME_HELP, by="cluster (repeat)")
    parser.add_argument("--over", action="append", help="one row per value of this column (repeat)")
    _interval_options(parser, METHODS)
    _missing_option(parser, opt.MISSING)
    parser.add_argument("--responded", help=RESPONDED_HELP)
    _output_option(parser)


def _check_arguments(parser: argparse.ArgumentParser) -> None:
    _table_arguments(parser, "a table of graded rows", outcome=OUTCOME_HELP)
    parser.add_argument(
        "--candidate",
        action="append",
        help="a candidate cluster column (repeat; a+b for a combination)",
    )
    parser.add_argument("--time", help="a time column, for a check over time windows")
    parser.add_argument("--window", help="with --time: the window (e.g. 1D, 1h)")
    _confidence_option(parser)
    _missing_option(parser, opt.MISSING)
    _output_option(parser)


def _missing_arguments(parser: argparse.ArgumentParser) -> None:
    _table_arguments(
        parser,
        "a table of graded rows, missing outcomes empty",
        outcome=OUTCOME_HELP,
        by="cluster (repeat)",
    )
    parser.add_argument("--reason", help="a column saying why a response is missing")
    parser.add_argument("--responded", help=RESPONDED_HELP)
    _confidence_option(parser)
    parser.add_argument("--threshold", type=float, help="the value a conclusion rests on")
    _output_option(parser)


def _plan_arguments(parser: argparse.ArgumentParser) -> None:
    _table_arguments(parser, "the pilot's graded rows", outcome=OUTCOME_HELP, by="cluster (repeat)")
    parser.add_argument(
        "--baseline",
        "--other",
        dest="other",
        metavar="FILE",
        help="the baseline's run of the same items, for a paired plan (--other, its earlier "
        "name, still works)",
    )
    parser.add_argument(
        "--on", action="append", help="item key column(s), with --baseline (repeat)"
    )
    _on_position_option(parser)
    _missing_option(parser, opt.MISSING)
    parser.add_argument("--responded", help=RESPONDED_HELP)
    _confidence_option(parser)
    parser.add_argument(
        "--cost-per-cluster",
        type=float,
        dest="cost_per_cluster",
        help="the cost of one more cluster, for the cheapest design (with --cost-per-row)",
    )
    parser.add_argument(
        "--cost-per-row",
        type=float,
        dest="cost_per_row",
        help="the cost of one more row in a cluster (with --cost-per-cluster)",
    )
    parser.add_argument(
        "--target-half-width",
        type=float,
        dest="target_half_width",
        help="the interval half-width the next run should reach",
    )
    parser.add_argument(
        "--judge",
        help="the judge's score column, on every row: plan how many human labels (in the "
        "--outcome column, missing where unlabelled) to buy, and in how many clusters",
    )
    parser.add_argument(
        "--cost-per-label",
        type=float,
        dest="cost_per_label",
        help="with --judge: the cost of one human label (default 1)",
    )
    parser.add_argument("--effect", type=float, help="with --baseline: the difference to detect")
    parser.add_argument(
        "--power",
        type=float,
        default=0.8,
        help="with --effect: the chance of detecting it (default 0.8)",
    )
    _output_option(parser)


def _annotate_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("log", help="a .eval or .json inspect_ai log file")
    parser.add_argument("--by", dest="cluster", help="sample metadata field naming the cluster")
    parser.add_argument("--scorer", help="the scorer to annotate (default: every one)")
    written = parser.add_mutually_exclusive_group()
    written.add_argument(
        "--output",
        help="write the annotated log here (default: LOG-clustered.eval beside LOG)",
    )
    written.add_argument(
        "--in-place",
        action="store_true",
        dest="in_place",
        help="write the annotated log back to LOG (atomically: a temporary file, then a rename)",
    )


def _lm_eval_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("path", help="the harness's --output_path folder (with --log_samples)")
    parser.add_argument(
        "--by",
        required=True,
        action="append",
        help="cluster: a document field (e.g. passage for doc_passage) or column (repeat)",
    )
    _interval_options(parser, METHODS)
    _seed_option(parser)
    parser.add_argument(
        "--runs",
        default=None,
        choices=opt.LM_EVAL_RUNS,
        help="a task run several times into one folder: the newest run (default, with a "
        "warning) or every run",
    )
    _output_option(parser)


def _gate_arguments(parser: argparse.ArgumentParser) -> None:
    _table_arguments(
        parser,
        "the new model's results (a table, or logs with --format)",
        outcome="outcome column (higher is better)",
        by="cluster column (repeat)",
    )
    parser.add_argument(
        "--baseline", metavar="FILE", help="the baseline's results on the same items"
    )
    parser.add_argument(
        "--margin", type=float, help="with --baseline: how much worse is still acceptable"
    )
    parser.add_argument(
        "--at-least", type=float, dest="at_least", help="without --baseline: the threshold"
    )
    parser.add_argument(
        "--on", action="append", help="item key column(s) matching the two files (repeat)"
    )
    _how_option(parser, "one file")
    _on_position_option(parser)
    parser.add_argument("--rerun", help="run id column, when items have several rows per model")
    parser.add_argument(
        "--over",
        action="append",
        help="one gate per value of this column (repeat for combinations; Holm-adjusted)",
    )
    _design_options(parser, methods=(*METHODS, *SEQUENCE_METHODS))
    parser.add_argument(
        "--sequential",
        action="store_true",
        help="watch a growing run: read each gate from a confidence sequence over completed "
        "clusters, valid however often the gate runs (exit 2 = continue)",
    )
    parser.add_argument(
        "--order",
        help="with --sequential: the column of when each row arrived (default: the file's "
        "row order, each cluster with its last row)",
    )
    parser.add_argument(
        "--budget", type=float, help="with --sequential: the clusters the run plans"
    )
    parser.add_argument(
        "--power",
        type=float,
        default=0.8,
        help="an inconclusive gate's plan: the power its 'clusters needed' reaches (default 0.8)",
    )
    parser.add_argument(
        "--bounds",
        nargs=2,
        type=float,
        metavar=("LOW", "HIGH"),
        help="with --sequential: the range every score lies in, known in advance (a 0/1 "
        "outcome needs none)",
    )
    parser.add_argument(
        "--max-cluster-size",
        type=float,
        dest="max_cluster_size",
        help="with --sequential and the pooled estimand: the bound on cluster sizes, fixed "
        "before the first look (default: the largest cluster in the file so far)",
    )
    parser.add_argument(
        "--cluster-size",
        type=int,
        dest="cluster_size",
        help="with --sequential: the rows of a complete cluster (smaller ones are still "
        "running and wait)",
    )
    parser.add_argument(
        "--target",
        default="population",
        choices=TARGETS,
        help="with --sequential: the population the clusters are drawn from (default), or "
        "this benchmark's own full-run score (clusters run in a random order)",
    )
    parser.add_argument(
        "--benchmark-clusters",
        type=int,
        dest="benchmark_clusters",
        help="with --target benchmark: the clusters of the whole benchmark (default: those "
        "in the file)",
    )
    parser.add_argument(
        "--benchmark-rows",
        type=int,
        dest="benchmark_rows",
        help="with --target benchmark: the rows of the whole benchmark",
    )
    _output_option(parser)
    parser.add_argument(
        "--summary",
        help="also append the Markdown report to this file (e.g. $GITHUB_STEP_SUMMARY)",
    )


def _datasets_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "name",
        nargs="?",
        choices=datasets.list(),
        help="a bundled dataset (without one: the list)",
    )
    parser.add_argument("--to", help="write the dataset to this .csv, .tsv, .jsonl or .parquet")


_GATE_DESCRIPTION = (
    "Decide a release from the clustered interval. With --baseline FILE --margin M "
    "--on KEY: is the new run not worse than the baseline by more than M on the shared "
    "items? With --at-least T: is its pass rate at least T? Each gate passes when its "
    "interval lies wholly on the good side of the boundary (at or above -M, or T), "
    "fails when it lies wholly below it, and is inconclusive when it holds "
    "the boundary: the data cannot tell yet, and the report says how many clusters "
    "would. With --over, one gate per value, Holm-adjusted; the run's verdict is the "
    "worst gate's."
)
_GATE_EPILOG = (
    "exit status: 0 pass (every gate passed), 1 fail (a gate failed), "
    "2 inconclusive (none failed, one could not tell), 3 error (bad input or options), "
    "4 void (--sequential: a confidence sequence went empty, so the run contradicts "
    "its assumptions, e.g. it broke part-way; no verdict)"
)

#: Each command's sub-parser settings, its line in the top help first.
_COMMAND_SETTINGS: dict[str, dict[str, Any]] = {
    "demo": {"help": "naive vs clustered intervals on bundled MMLU-Pro data"},
    "ci": {"help": "clustered confidence interval of a column of a table"},
    "paired": {
        "help": "did the new run beat the baseline? the paired difference on shared items",
        "intermixed": True,
    },
    "compare": {"help": "many models on the same items: leaderboard, ranks, pairwise differences"},
    "judged": {
        "help": "a judge's scores on every row and human labels on a few: the labels' mean "
        "(prediction-powered, clustered)"
    },
    "passk": {"help": "pass@k (or pass^k with --hat) over reruns of each case"},
    "flakiness": {"help": "the share of cases whose reruns disagree, and the reruns' ICC"},
    "report": {"help": "what to report: a table and sentences"},
    "check": {"help": "which grouping the outcome clusters by"},
    "missing": {"help": "how missing responses could move the estimate"},
    "plan": {"help": "what the next eval budget should buy, from a pilot"},
    "annotate": {
        "help": "add the clustered metric to an inspect_ai log (recomputed, no model calls)"
    },
    "lm-eval": {
        "help": "lm-evaluation-harness's results table with the clustered interval beside the "
        "naive one"
    },
    "gate": {
        "help": "pass / fail / inconclusive for a CI job (exit 0 / 1 / 2; an error exits 3, "
        "a void watching gate 4)",
        "description": _GATE_DESCRIPTION,
        "epilog": _GATE_EPILOG,
    },
    "datasets": {"help": "list the bundled datasets, describe one, or write one to a file"},
}


def build_parser() -> argparse.ArgumentParser:
    """The command line's parser: a sub-parser for each command, in the order the top help
    lists them, with the function that declares its arguments and the one that runs it."""
    parser = _Parser(
        prog="clusterstats",
        description="Honest confidence intervals for eval results with clustered rows.",
    )
    parser.add_argument("--version", action="version", version=f"clusterstats {_version()}")
    sub = parser.add_subparsers(dest="command", required=True)
    # the run functions are looked up here, when the parser is built, not when cli is imported
    for name, add_arguments, run in (
        ("demo", partial(_method_option, methods=METHODS), _demo),
        ("ci", _ci_arguments, _ci),
        ("paired", _paired_arguments, _paired),
        ("compare", _compare_arguments, _compare),
        ("judged", _judged_arguments, _judged),
        ("passk", partial(_rerun_arguments, passk=True), _rerun_statistic),
        ("flakiness", partial(_rerun_arguments, passk=False), _rerun_statistic),
        ("report", _report_arguments, _report),
        ("check", _check_arguments, _check),
        ("missing", _missing_arguments, _missing),
        ("plan", _plan_arguments, _plan),
        ("annotate", _annotate_arguments, _annotate),
        ("lm-eval", _lm_eval_arguments, _lm_eval),
        ("gate", _gate_arguments, _gate),
        ("datasets", _datasets_arguments, _datasets),
    ):
        command = sub.add_parser(name, **_COMMAND_SETTINGS[name])
        add_arguments(command)
        command.set_defaults(func=run)
    return parser


#: A library keyword with its value as a message writes it: ``how='inner'``, ``on=``,
#: ``by=['a', 'b']``, ``bounds=(low, high)``, ``margin=0.02`` (the value may be absent).
_KEYWORD_VALUE = r"""'[^']*'|"[^"]*"|\[[^\]]*\]|\([^)]*\)|-?[\w.+-]*\w"""


def option_spellings(parser: argparse.ArgumentParser) -> dict[str, argparse.Action]:
    """The command's options by the library keyword each stands for: its ``dest`` (which
    is the library's name: ``--seed`` is ``rng``, ``annotate --by`` is ``cluster``) and the
    name of each of its long option strings (``--at-least`` is ``at_least``)."""
    options: dict[str, argparse.Action] = {}
    for action in parser._actions:
        long_names = [o for o in action.option_strings if o.startswith("--")]
        if not long_names or action.dest == "help":
            continue
        for keyword in (action.dest, *(o[2:].replace("-", "_") for o in long_names)):
            options.setdefault(keyword, action)
    return options


def _written_value(action: argparse.Action, value: str) -> str:
    """``--name value`` as the command line takes what a message wrote as ``name=value``."""
    option = next(o for o in action.option_strings if o.startswith("--"))
    if not value or (action.nargs == 0 and value == "True"):
        return option
    if value in ("None", "False"):
        return f"no {option}"
    try:
        parsed = ast.literal_eval(value)
    except (ValueError, SyntaxError):  # a name or a placeholder: bounds=(low, high)
        parsed = value.strip("()[]").replace(",", " ").split() if value[0] in "([" else value
    words = [str(v) for v in parsed] if isinstance(parsed, (list, tuple)) else [str(parsed)]
    # a placeholder (<item key column>) stays as written; a value with spaces is quoted
    words = [w if w.startswith("<") and w.endswith(">") else shlex.quote(w) for w in words]
    if isinstance(parsed, (list, tuple)) and isinstance(action, argparse._AppendAction):
        return " ".join(f"{option} {w}" for w in words)
    return f"{option} {' '.join(words)}"


def command_line_spelling(message: str, parser: argparse.ArgumentParser) -> str:
    """``message`` with each library keyword that is an option of the command written as the
    command line writes it (``pass how='inner'`` is ``pass --how inner``, ``at_least=`` is
    ``--at-least``), and the library's own pointers to the command line (``(--score on the
    command line)``) dropped once the message says it itself."""
    options = option_spellings(parser)
    if not options:
        return message
    names = "|".join(sorted(map(re.escape, options), key=len, reverse=True))
    pattern = re.compile(rf"(?<![\w.\-])({names})=(?!=)({_KEYWORD_VALUE})?")
    spelled = pattern.sub(lambda m: _written_value(options[m[1]], m[2] or ""), message)
    spelled = re.sub(r" ?\((--[\w-]+) on the command line\)", "", spelled)
    return re.sub(r"\((--[\w-]+) on the command line; ", "(", spelled)


def _command_parser(parser: argparse.ArgumentParser, command: str) -> argparse.ArgumentParser:
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            return action.choices[command]
    raise LookupError(command)  # pragma: no cover - every command is a sub-parser


class _LoggedWarnings(logging.Handler):
    """The ``clusterstats`` logger's warnings while a command runs (``annotate`` logs a
    metric it cannot compute, once per scorer), kept to be printed as ``warning:`` lines."""

    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.messages: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.messages.append(record.getMessage())


def _print_warnings(
    messages: Iterable[str], shown: Iterable[str], parser: argparse.ArgumentParser
) -> None:
    """One ``warning:`` line per distinct message, unless the output shows it as a note."""
    seen = set(shown)
    for text in messages:
        message = " ".join(text.split())
        if message in seen:
            continue
        seen.add(message)
        print(f"warning: {command_line_spelling(message, parser)}", file=sys.stderr)


def _silence_stdout() -> None:
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError, io.UnsupportedOperation):  # not a real file (e.g. captured)
        pass


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the exit status (0 success, 2 user error; ``gate``: 0
    pass, 1 fail, 2 inconclusive, 3 error, 4 void).

    ``--help`` and ``--version`` print and raise ``SystemExit(0)``, as argparse does.
    """
    words = list(sys.argv[1:] if argv is None else argv)
    error_status = 3 if words[:1] == ["gate"] else 2  # gate's 2 means inconclusive
    parser = build_parser()
    try:
        args = parser.parse_args(words)
    except _UsageError as error:
        print(f"clusterstats: error: {one_line(error)}", file=sys.stderr)
        return error_status
    command = _command_parser(parser, args.command)
    shown: Iterable[str] = ()
    failure = None
    logged = _LoggedWarnings()
    logger = logging.getLogger("clusterstats")
    propagates = logger.propagate
    logger.addHandler(logged)
    logger.propagate = False  # printed below, once, as warning: lines
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            try:
                shown = tuple(args.func(args))
            except BrokenPipeError:
                # The reader stopped reading (e.g. `| head`): not an error, and nothing more
                # to print; later writes (the interpreter's final flush) go nowhere.
                _silence_stdout()
            except (ClusterStatsError, OSError) as exc:
                failure = command_line_spelling(one_line(exc), command)
            except Exception as exc:
                if args.command != "gate":
                    raise
                # a bug, not a verdict: Python's own status (1) would read as a fail
                traceback.print_exc()
                failure = (
                    f"unexpected {type(exc).__name__} (a bug in clusterstats: please report it)"
                )
    finally:
        logger.removeHandler(logged)
        logger.propagate = propagates
    for note in getattr(args, "_usage_notes", ()):
        print(f"note: {note}", file=sys.stderr)
    _print_warnings([*(str(w.message) for w in caught), *logged.messages], shown, command)
    if failure is not None:
        print(f"clusterstats: error: {failure}", file=sys.stderr)
        return error_status
    return getattr(args, "exit_code", 0)


if __name__ == "__main__":
    sys.exit(main())
