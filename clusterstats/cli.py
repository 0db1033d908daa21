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
from collections.abc import Iterable, Sequence
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
    by = args.by[0] if len(args.by) == 1 else args.by
    res = cluster_ci(
        df,
        args.outcome,
        by,
        over=_key(args.over),
        crossed=args.crossed,
        weights=args.weights,
        **_design_kwargs(args),
    )
    notes = _notes_of(res)
    if args.output == "text":
        print(repr(res))
    elif args.output == "table":
        print(comparison_table(res, ", ".join(args.over or [])))
        for note in _labelled_notes(res):
            print(f"note: {note}")
    else:
        _print_result(res, args.output)
    return notes


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


def _design_options(parser: argparse.ArgumentParser, *, methods: Sequence[str]) -> None:
    """The options every statistic shares, named as the library names them."""
    _estimand_option(parser)
    _method_option(parser, methods)
    _confidence_option(parser)
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


def _estimand_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--estimand",
        default="pooled",
        choices=ESTIMANDS,
        help="pooled (default: the share of all rows) or cluster_mean (each cluster counts once)",
    )


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


def _how_option(parser: argparse.ArgumentParser, sides: str) -> None:
    parser.add_argument(
        "--how",
        default="strict",
        choices=opt.ALIGNMENTS,
        help=f"strict (default): an item {sides} lacks is an error; inner: keep the items all have",
    )


def _crossed_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--crossed",
        action="store_true",
        help="the --by columns are crossed groupings (e.g. --by question --by template), "
        "not one cluster made of their combination: two-way (Cameron-Gelbach-Miller) variance",
    )


def _weights_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--weights",
        help="a column of non-negative row weights: the weighted (Hajek) mean, as R survey",
    )


def _design_kwargs(args: argparse.Namespace) -> dict[str, Any]:
    return {
        "estimand": args.estimand,
        "method": args.method,
        "confidence": args.confidence,
        "missing": args.missing,
        "responded": args.responded,
        "strata": args.strata,
        "nest": args.nest,
        "lonely": args.lonely,
        "n_resamples": args.n_resamples,
        "rng": args.rng,
    }


def _key(values: Sequence[str] | None) -> Any:
    """One label, a list of labels, or None, from a repeatable option."""
    if not values:
        return None
    return values[0] if len(values) == 1 else list(values)


def _extra_labels(args: argparse.Namespace) -> list[str]:
    return [x for x in (args.responded, args.strata) if x is not None]


def _print_result(result: Any, output: str) -> None:
    if output == "text":
        print(repr(result))
    elif output == "markdown":
        print(result.to_markdown(), end="")
    elif output == "csv":
        print(result.to_frame().to_csv(index=False), end="")
    else:
        print(json_output(result))


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
        crossed=args.crossed,
        weights=args.weights,
        **_design_kwargs(args),
    )
    _print_result(res, args.output)
    return _notes_of(res)


def _compare(args: argparse.Namespace) -> Iterable[str]:
    from clusterstats.stats.slices import SliceComparison, compare

    labels = [*args.by, args.model, *(args.on or []), *([args.rerun] if args.rerun else [])]
    labels += [*(args.over or []), *_extra_labels(args)]
    df = _read(args, args.path, labels)
    baseline: Any = args.baseline
    if baseline is not None and baseline not in set(df[args.model].astype(str)):
        raise InvalidOptionError(
            f"--baseline {baseline!r} is not a value of --model {args.model!r}"
        )
    if baseline is not None:
        # the command line gives text; the column may hold numbers
        baseline = next(v for v in df[args.model].unique() if str(v) == baseline)
    res = compare(
        df,
        args.outcome,
        _key(args.by),
        model=args.model,
        on=_key(args.on),
        rerun=args.rerun,
        baseline=baseline,
        how=args.how,
        adjust=args.adjust,
        orientation=args.orientation,
        crossed=args.crossed,
        weights=args.weights,
        rank_method=args.rank_method,
        top=args.top,
        over=_key(args.over),
        **_design_kwargs(args),
    )
    if args.output == "json":
        # a SliceComparison's pairs carry their slice and p_family; its leads are the
        # pairs that survive the family of every slice's pairs
        payload = {"leaderboard": _records(res.leaderboard()), "pairs": _records(res.pairs())}
        if isinstance(res, SliceComparison):
            payload["leads"] = _records(res.leads())
        payload["notes"] = list(res.notes)
        print(json.dumps(payload, indent=2, allow_nan=False, ensure_ascii=False))
    else:
        _print_result(res, args.output)  # csv: to_frame(), the pairs (with the slice column)
    return tuple(res.notes)


def _print_table_result(result: Any, output: str) -> tuple[str, ...]:
    """A result that is a table (a report, a plan, a check): text, Markdown, CSV or JSON
    (``{"rows": [...to_frame() records...], "notes": [...]}``)."""
    notes = tuple(getattr(result, "notes", ()))
    if output == "text":
        print(repr(result))
    elif output == "markdown":
        print(result.to_markdown(), end="")
    elif output == "csv":
        print(result.to_frame().to_csv(index=False), end="")
    else:
        payload = {"rows": _records(result.to_frame()), "notes": list(notes)}
        print(json.dumps(payload, indent=2, allow_nan=False, ensure_ascii=False))
    return notes


def _rerun_statistic(args: argparse.Namespace) -> Iterable[str]:
    from clusterstats.stats.reruns import flakiness, pass_at_k, pass_hat_k

    labels = [args.case, args.rerun, *([args.by] if args.by else [])]
    labels += args.over or []
    df = _read(args, args.path, labels)
    common = {
        "by": args.by,
        "case": args.case,
        "rerun": args.rerun,
        "over": _key(args.over),
        "method": args.method,
        "confidence": args.confidence,
    }
    if args.command == "flakiness":
        res = flakiness(df, args.outcome, **common)
    else:
        function = pass_hat_k if args.hat else pass_at_k
        res = function(
            df,
            args.outcome,
            k=args.k,
            fewer_runs=args.fewer_runs,
            n_resamples=args.n_resamples,
            rng=args.rng,
            **common,
        )
    _print_result(res, args.output)
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
        estimand=args.estimand,
        method=args.method,
        confidence=args.confidence,
        missing=args.missing,
        responded=args.responded,
    )
    return _print_table_result(res, args.output)


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
        time=args.time,
        window=args.window,
        confidence=args.confidence,
        missing=args.missing,
    )
    return _print_table_result(res, args.output)


def _missing(args: argparse.Namespace) -> Iterable[str]:
    from clusterstats.stats.missing import missing_report

    labels = [*args.by, *(x for x in (args.reason, args.responded) if x)]
    df = _read(args, args.path, labels)
    res = missing_report(
        df,
        args.outcome,
        _key(args.by),
        reason=args.reason,
        responded=args.responded,
        confidence=args.confidence,
        threshold=args.threshold,
    )
    return _print_table_result(res, args.output)


def _plan(args: argparse.Namespace) -> Iterable[str]:
    from clusterstats.stats.planning import pilot_plan

    labels = [*args.by, *(args.on or []), *([args.responded] if args.responded else [])]
    df = _read(args, args.path, labels)
    other, on = None, _key(args.on)
    if args.other is not None:
        if getattr(args, "_spelled", {}).get("other") == "--other":
            _note(
                args,
                f"--other still works; --baseline {args.other} is the form gate and paired share",
            )
        other = _read(args, args.other, labels)
        on = _pairing_key(args, df, other, (args.path, args.other))
    elif args.on_position:
        raise InvalidOptionError("--on-position pairs two files: it needs --baseline")
    res = pilot_plan(
        df,
        args.outcome,
        _key(args.by),
        other=other,
        on=on,
        missing=args.missing,
        confidence=args.confidence,
        cost_per_cluster=args.cost_per_cluster,
        cost_per_row=args.cost_per_row,
        target_half_width=args.target_half_width,
        effect=args.effect,
        power=args.power,
        responded=args.responded,
    )
    return _print_table_result(res, args.output)


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
        by=args.by[0] if len(args.by) == 1 else args.by,
        confidence=args.confidence,
        method=args.method,
        estimand=args.estimand,
        runs=args.runs,
        rng=args.rng,
    )
    if args.output == "text":
        print(repr(table))
    elif args.output == "markdown":
        print(table.to_markdown(), end="")
    elif args.output == "csv":
        print(table.to_frame().to_csv(index=False), end="")
    else:
        print(json.dumps(_records(table.to_frame()), indent=2, allow_nan=False, ensure_ascii=False))
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
    baseline, on = None, None
    if args.baseline is not None:
        baseline = _read(args, args.baseline, labels)
        on = _pairing_key(args, candidate, baseline, (args.path, args.baseline))
    elif args.on_position:
        raise InvalidOptionError("--on-position pairs two files: it needs --baseline")
    report = gate(
        candidate,
        args.outcome,
        args.by[0] if len(args.by) == 1 else args.by,
        baseline=baseline,
        margin=args.margin,
        at_least=args.at_least,
        over=_key(args.over),
        on=on,
        how=args.how,
        power=args.power,
        rerun=args.rerun,
        crossed=args.crossed,
        weights=args.weights,
        **_design_kwargs(args),
        sequential=args.sequential,
        order=args.order,
        budget=args.budget,
        bounds=None if args.bounds is None else tuple(args.bounds),
        max_cluster_size=args.max_cluster_size,
        cluster_size=args.cluster_size,
        target=args.target,
        benchmark_clusters=args.benchmark_clusters,
        benchmark_rows=args.benchmark_rows,
    )
    args.exit_code = report.exit_code  # the verdict stands even if the reader stops early
    if args.output == "text":
        print(repr(report))
    elif args.output == "markdown":
        print(report.to_markdown(), end="")
    elif args.output == "csv":
        print(report.to_frame().to_csv(index=False), end="")
    else:
        payload = {
            "verdict": report.verdict,
            "exit_code": report.exit_code,
            "confidence": report.confidence,
            "adjust": report.adjust,
            "gates": [_record(g) for g in report.gates],
        }
        print(json.dumps(payload, indent=2, allow_nan=False, ensure_ascii=False))
    if args.summary is not None:
        with open(args.summary, "a", encoding="utf-8") as handle:
            handle.write(report.to_markdown())
    return tuple(dict.fromkeys(n for g in report.gates for n in g.notes))


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


def _lm_eval_options(parser: argparse.ArgumentParser) -> None:
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


def _inspect_options(parser: argparse.ArgumentParser) -> None:
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


def _input_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--format",
        default="auto",
        choices=FILE_FORMATS,
        help="as in clusterstats ci",
    )
    parser.add_argument("--encoding", default=None, help="as in clusterstats ci")
    _lm_eval_options(parser)
    _inspect_options(parser)


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="clusterstats",
        description="Honest confidence intervals for eval results with clustered rows.",
    )
    parser.add_argument("--version", action="version", version=f"clusterstats {_version()}")
    sub = parser.add_subparsers(dest="command", required=True)

    demo = sub.add_parser("demo", help="naive vs clustered intervals on bundled MMLU-Pro data")
    _method_option(demo, METHODS)
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
        choices=FILE_FORMATS,
        help="auto: inspect_ai logs and lm-evaluation-harness samples by their file names "
        "(*.eval, samples_<task>_<date>.jsonl, or a folder of them), other files by extension; "
        "inspect: inspect_ai .eval/.json logs (one row per sample and epoch, outcome column "
        "'score'); lm-eval: --log_samples JSONL files (the outcome is a metric, e.g. acc)",
    )
    ci.add_argument(
        "--encoding",
        default=None,
        help="text encoding of a CSV, TSV or JSON file (default UTF-8, with or without a "
        "byte-order mark)",
    )
    _lm_eval_options(ci)
    _inspect_options(ci)
    ci.add_argument("--outcome", required=True, help="outcome column (0/1 or a score)")
    ci.add_argument(
        "--by",
        required=True,
        action="append",
        help="cluster column (repeat for a combination of columns)",
    )
    ci.add_argument(
        "--over",
        action="append",
        help="one interval per value of this column (e.g. model); repeat for combinations",
    )
    _design_options(ci, methods=METHODS)
    _crossed_option(ci)
    _weights_option(ci)
    _output_option(ci, CI_OUTPUTS)
    ci.set_defaults(func=_ci)

    paired = sub.add_parser(
        "paired",
        help="did the new run beat the baseline? the paired difference on shared items",
        intermixed=True,
    )
    paired.add_argument("path", help="the new run's results")
    paired.add_argument(
        "baseline",
        nargs="?",
        metavar="OLD",
        help="the baseline by position, as earlier releases took it (kept, with a note): "
        "prefer --baseline",
    )
    paired.add_argument(
        "--baseline",
        dest="baseline_file",
        metavar="FILE",
        help="the baseline's results on the same items (the difference is the new run minus "
        "this one)",
    )
    _input_options(paired)
    paired.add_argument("--outcome", required=True, help="outcome column (0/1 or a score)")
    paired.add_argument("--by", required=True, action="append", help="cluster column (repeat)")
    paired.add_argument(
        "--on", action="append", help="item key column(s) matching the two files (repeat)"
    )
    paired.add_argument(
        "--on-position",
        action="store_true",
        dest="on_position",
        help="pair row i with row i (the --by labels must agree row by row); use --on when "
        "the files have an item id",
    )
    paired.add_argument("--rerun", help="run id column, when items have several rows")
    _how_option(paired, "one file")
    _design_options(paired, methods=PAIRED_METHODS)
    _crossed_option(paired)
    _weights_option(paired)
    _output_option(paired)
    paired.set_defaults(func=_paired)

    comparison = sub.add_parser(
        "compare", help="many models on the same items: leaderboard, ranks, pairwise differences"
    )
    comparison.add_argument("path", help="one table, one row per model and item (and run)")
    _input_options(comparison)
    comparison.add_argument("--outcome", required=True, help="outcome column")
    comparison.add_argument("--by", required=True, action="append", help="cluster column (repeat)")
    comparison.add_argument("--model", required=True, help="the column naming the model")
    comparison.add_argument(
        "--on",
        action="append",
        help="item key column(s) matching one model's rows to another's (repeat)",
    )
    comparison.add_argument("--rerun", help="run id column, when items have several rows")
    comparison.add_argument(
        "--baseline",
        metavar="MODEL",
        help="compare every model with this one only (a value of --model)",
    )
    _how_option(comparison, "some model")
    comparison.add_argument(
        "--adjust",
        default="holm",
        choices=opt.ADJUSTMENTS,
        help="the p-value adjustment over the pairs: holm (default), bh (Benjamini-Hochberg) "
        "or none",
    )
    comparison.add_argument(
        "--orientation",
        default="as_given",
        choices=opt.ORIENTATIONS,
        help="each pair as given (sorted models, or minus --baseline) or higher minus lower",
    )
    comparison.add_argument(
        "--rank-method",
        default="auto",
        choices=opt.RANK_METHODS,
        dest="rank_method",
        help="where the rank sets' critical values come from: the cluster bootstrap, or draws "
        "from the normal or multivariate t law of the cluster-robust covariance; guarded: the "
        "t draws, never below Holm's bound (auto: guarded, the choice of the coverage study)",
    )
    comparison.add_argument(
        "--top",
        type=int,
        default=1,
        help="in_top_set marks the models that could be among the best N (default 1: first)",
        metavar="N",
    )
    comparison.add_argument(
        "--over",
        action="append",
        metavar="COL",
        help="compare slice by slice (e.g. --over language; repeat for combinations): one "
        "leaderboard per slice, every pair's p-value adjusted over one family of slices x "
        "pairs (p_family), so a lead on one slice is reported only when it survives them all",
    )
    _design_options(comparison, methods=COMPARE_METHODS)
    _crossed_option(comparison)
    _weights_option(comparison)
    _output_option(comparison)
    comparison.set_defaults(func=_compare)

    for name, what in (
        ("passk", "pass@k (or pass^k with --hat) over reruns of each case"),
        ("flakiness", "the share of cases whose reruns disagree, and the reruns' ICC"),
    ):
        reruns = sub.add_parser(name, help=what)
        reruns.add_argument("path", help="one row per case and run")
        _input_options(reruns)
        reruns.add_argument("--outcome", required=True, help="the run's outcome (0/1)")
        reruns.add_argument("--case", required=True, help="the case column")
        reruns.add_argument("--rerun", required=True, help="the run id column")
        reruns.add_argument("--by", help="a cluster of cases (default: each case)")
        reruns.add_argument(
            "--over", action="append", help="one result per value of this column (repeat)"
        )
        _method_option(reruns, METHODS)
        _confidence_option(reruns)
        if name == "passk":
            reruns.add_argument("--k", type=int, required=True, help="runs per attempt")
            reruns.add_argument("--hat", action="store_true", help="pass^k: all k runs pass")
            reruns.add_argument(
                "--fewer-runs",
                default="raise",
                choices=opt.FEWER_RUNS,
                help="a case with fewer than k runs: raise (default, an error) or drop it",
            )
            _resampling_options(reruns)
        _output_option(reruns)
        reruns.set_defaults(func=_rerun_statistic)

    reporting = sub.add_parser("report", help="what to report: a table and sentences")
    reporting.add_argument("path", help="a table of graded rows")
    _input_options(reporting)
    reporting.add_argument("--outcome", required=True, help=OUTCOME_HELP)
    reporting.add_argument("--by", required=True, action="append", help="cluster (repeat)")
    reporting.add_argument(
        "--over", action="append", help="one row per value of this column (repeat)"
    )
    _estimand_option(reporting)
    _method_option(reporting, METHODS)
    _confidence_option(reporting)
    _missing_option(reporting, opt.MISSING)
    reporting.add_argument("--responded", help=RESPONDED_HELP)
    _output_option(reporting)
    reporting.set_defaults(func=_report)

    check = sub.add_parser("check", help="which grouping the outcome clusters by")
    check.add_argument("path", help="a table of graded rows")
    _input_options(check)
    check.add_argument("--outcome", required=True, help=OUTCOME_HELP)
    check.add_argument(
        "--candidate",
        action="append",
        help="a candidate cluster column (repeat; a+b for a combination)",
    )
    check.add_argument("--time", help="a time column, for a check over time windows")
    check.add_argument("--window", help="with --time: the window (e.g. 1D, 1h)")
    _confidence_option(check)
    _missing_option(check, opt.MISSING)
    _output_option(check)
    check.set_defaults(func=_check)

    missing = sub.add_parser("missing", help="how missing responses could move the estimate")
    missing.add_argument("path", help="a table of graded rows, missing outcomes empty")
    _input_options(missing)
    missing.add_argument("--outcome", required=True, help=OUTCOME_HELP)
    missing.add_argument("--by", required=True, action="append", help="cluster (repeat)")
    missing.add_argument("--reason", help="a column saying why a response is missing")
    missing.add_argument("--responded", help=RESPONDED_HELP)
    _confidence_option(missing)
    missing.add_argument("--threshold", type=float, help="the value a conclusion rests on")
    _output_option(missing)
    missing.set_defaults(func=_missing)

    planning = sub.add_parser("plan", help="what the next eval budget should buy, from a pilot")
    planning.add_argument("path", help="the pilot's graded rows")
    _input_options(planning)
    planning.add_argument("--outcome", required=True, help=OUTCOME_HELP)
    planning.add_argument("--by", required=True, action="append", help="cluster (repeat)")
    planning.add_argument(
        "--baseline",
        "--other",
        dest="other",
        metavar="FILE",
        help="the baseline's run of the same items, for a paired plan (--other, its earlier "
        "name, still works)",
    )
    planning.add_argument(
        "--on", action="append", help="item key column(s), with --baseline (repeat)"
    )
    planning.add_argument(
        "--on-position",
        action="store_true",
        dest="on_position",
        help="pair row i with row i (the --by labels must agree row by row); use --on when "
        "the files have an item id",
    )
    _missing_option(planning, opt.MISSING)
    planning.add_argument("--responded", help=RESPONDED_HELP)
    _confidence_option(planning)
    planning.add_argument(
        "--cost-per-cluster",
        type=float,
        dest="cost_per_cluster",
        help="the cost of one more cluster, for the cheapest design (with --cost-per-row)",
    )
    planning.add_argument(
        "--cost-per-row",
        type=float,
        dest="cost_per_row",
        help="the cost of one more row in a cluster (with --cost-per-cluster)",
    )
    planning.add_argument(
        "--target-half-width",
        type=float,
        dest="target_half_width",
        help="the interval half-width the next run should reach",
    )
    planning.add_argument("--effect", type=float, help="with --baseline: the difference to detect")
    planning.add_argument(
        "--power",
        type=float,
        default=0.8,
        help="with --effect: the chance of detecting it (default 0.8)",
    )
    _output_option(planning)
    planning.set_defaults(func=_plan)

    annotation = sub.add_parser(
        "annotate",
        help="add the clustered metric to an inspect_ai log (recomputed, no model calls)",
    )
    annotation.add_argument("log", help="a .eval or .json inspect_ai log file")
    annotation.add_argument("--by", dest="cluster", help="sample metadata field naming the cluster")
    annotation.add_argument("--scorer", help="the scorer to annotate (default: every one)")
    written = annotation.add_mutually_exclusive_group()
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
    annotation.set_defaults(func=_annotate)

    harness = sub.add_parser(
        "lm-eval",
        help="lm-evaluation-harness's results table with the clustered interval beside the "
        "naive one",
    )
    harness.add_argument("path", help="the harness's --output_path folder (with --log_samples)")
    harness.add_argument(
        "--by",
        required=True,
        action="append",
        help="cluster: a document field (e.g. passage for doc_passage) or column (repeat)",
    )
    _estimand_option(harness)
    _method_option(harness, METHODS)
    _confidence_option(harness)
    harness.add_argument(
        "--seed",
        type=int,
        default=None,
        dest="rng",
        metavar="SEED",
        help="bootstrap methods: the random seed, for the same interval on every run",
    )
    harness.add_argument(
        "--runs",
        default=None,
        choices=opt.LM_EVAL_RUNS,
        help="a task run several times into one folder: the newest run (default, with a "
        "warning) or every run",
    )
    _output_option(harness)
    harness.set_defaults(func=_lm_eval)

    gate = sub.add_parser(
        "gate",
        help="pass / fail / inconclusive for a CI job (exit 0 / 1 / 2; an error exits 3, "
        "a void watching gate 4)",
        description=(
            "Decide a release from the clustered interval. With --baseline FILE --margin M "
            "--on KEY: is the new run not worse than the baseline by more than M on the shared "
            "items? With --at-least T: is its pass rate at least T? Each gate passes when its "
            "interval lies wholly on the good side of the boundary (at or above -M, or T), "
            "fails when it lies wholly below it, and is inconclusive when it holds "
            "the boundary: the data cannot tell yet, and the report says how many clusters "
            "would. With --over, one gate per value, Holm-adjusted; the run's verdict is the "
            "worst gate's."
        ),
        epilog=(
            "exit status: 0 pass (every gate passed), 1 fail (a gate failed), "
            "2 inconclusive (none failed, one could not tell), 3 error (bad input or options), "
            "4 void (--sequential: a confidence sequence went empty, so the run contradicts "
            "its assumptions, e.g. it broke part-way; no verdict)"
        ),
    )
    gate.add_argument("path", help="the new model's results (a table, or logs with --format)")
    gate.add_argument(
        "--format",
        default="auto",
        choices=FILE_FORMATS,
        help="as in clusterstats ci",
    )
    gate.add_argument("--encoding", default=None, help="as in clusterstats ci")
    _lm_eval_options(gate)
    _inspect_options(gate)
    gate.add_argument("--outcome", required=True, help="outcome column (higher is better)")
    gate.add_argument("--by", required=True, action="append", help="cluster column (repeat)")
    gate.add_argument("--baseline", metavar="FILE", help="the baseline's results on the same items")
    gate.add_argument(
        "--margin", type=float, help="with --baseline: how much worse is still acceptable"
    )
    gate.add_argument(
        "--at-least", type=float, dest="at_least", help="without --baseline: the threshold"
    )
    gate.add_argument(
        "--on", action="append", help="item key column(s) matching the two files (repeat)"
    )
    _how_option(gate, "one file")
    gate.add_argument(
        "--on-position",
        action="store_true",
        dest="on_position",
        help="pair row i with row i (the --by labels must agree row by row); use --on when "
        "the files have an item id",
    )
    gate.add_argument("--rerun", help="run id column, when items have several rows per model")
    gate.add_argument(
        "--over",
        action="append",
        help="one gate per value of this column (repeat for combinations; Holm-adjusted)",
    )
    _design_options(gate, methods=(*METHODS, *SEQUENCE_METHODS))
    _crossed_option(gate)
    _weights_option(gate)
    gate.add_argument(
        "--sequential",
        action="store_true",
        help="watch a growing run: read each gate from a confidence sequence over completed "
        "clusters, valid however often the gate runs (exit 2 = continue)",
    )
    gate.add_argument(
        "--order",
        help="with --sequential: the column of when each row arrived (default: the file's "
        "row order, each cluster with its last row)",
    )
    gate.add_argument("--budget", type=float, help="with --sequential: the clusters the run plans")
    gate.add_argument(
        "--power",
        type=float,
        default=0.8,
        help="an inconclusive gate's plan: the power its 'clusters needed' reaches (default 0.8)",
    )
    gate.add_argument(
        "--bounds",
        nargs=2,
        type=float,
        metavar=("LOW", "HIGH"),
        help="with --sequential: the range every score lies in, known in advance (a 0/1 "
        "outcome needs none)",
    )
    gate.add_argument(
        "--max-cluster-size",
        type=float,
        dest="max_cluster_size",
        help="with --sequential and the pooled estimand: the bound on cluster sizes, fixed "
        "before the first look (default: the largest cluster in the file so far)",
    )
    gate.add_argument(
        "--cluster-size",
        type=int,
        dest="cluster_size",
        help="with --sequential: the rows of a complete cluster (smaller ones are still "
        "running and wait)",
    )
    gate.add_argument(
        "--target",
        default="population",
        choices=TARGETS,
        help="with --sequential: the population the clusters are drawn from (default), or "
        "this benchmark's own full-run score (clusters run in a random order)",
    )
    gate.add_argument(
        "--benchmark-clusters",
        type=int,
        dest="benchmark_clusters",
        help="with --target benchmark: the clusters of the whole benchmark (default: those "
        "in the file)",
    )
    gate.add_argument(
        "--benchmark-rows",
        type=int,
        dest="benchmark_rows",
        help="with --target benchmark: the rows of the whole benchmark",
    )
    _output_option(gate)
    gate.add_argument(
        "--summary",
        help="also append the Markdown report to this file (e.g. $GITHUB_STEP_SUMMARY)",
    )
    gate.set_defaults(func=_gate)

    data = sub.add_parser(
        "datasets", help="list the bundled datasets, describe one, or write one to a file"
    )
    data.add_argument(
        "name",
        nargs="?",
        choices=datasets.list(),
        help="a bundled dataset (without one: the list)",
    )
    data.add_argument("--to", help="write the dataset to this .csv, .tsv, .jsonl or .parquet")
    data.set_defaults(func=_datasets)
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
