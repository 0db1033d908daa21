"""Command line: ``clusterstats demo`` and ``clusterstats ci FILE --outcome COL --by COL``."""

from __future__ import annotations

import argparse
import json
import sys
import warnings
from collections.abc import Sequence
from pathlib import Path

import pandas as pd

from clusterstats import _display as fmt
from clusterstats.api import cluster_ci
from clusterstats.core.intervals import METHODS
from clusterstats.core.variance import ESTIMANDS
from clusterstats.datasets import load_demo_data
from clusterstats.errors import ClusterStatsError
from clusterstats.results import ClusterCI, GroupedResults

_READERS = {
    ".csv": pd.read_csv,
    ".tsv": lambda p: pd.read_csv(p, sep="\t"),
    ".parquet": pd.read_parquet,
    ".jsonl": lambda p: pd.read_json(p, lines=True),
    ".json": pd.read_json,
}


def read_table(path: str, file_format: str = "auto") -> pd.DataFrame:
    if file_format == "inspect":
        from clusterstats.readers import read_inspect

        return read_inspect(path)
    if file_format == "lm-eval":
        from clusterstats.readers import read_lm_eval

        return read_lm_eval(path)
    suffix = Path(path).suffix.lower()
    if suffix not in _READERS:
        raise ClusterStatsError(
            f"cannot read {path!r}: expected one of {', '.join(sorted(_READERS))}"
        )
    return _READERS[suffix](path)


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
                round(r.n_eff),
                r.n_rows,
                r.n_clusters,
            ]
        )
    return fmt.text_table(header, rows)


def _demo(args: argparse.Namespace) -> int:
    df = load_demo_data()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
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
    for _, r in res.items():
        for note in r.notes:
            print(f"note: {note}")
    for w in caught:
        print(f"warning: {w.message}", file=sys.stderr)
    return 0


def _ci(args: argparse.Namespace) -> int:
    df = read_table(args.path, args.format)
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
    if args.output == "text":
        print(repr(res))
    elif args.output == "table":
        print(comparison_table(res, args.over or ""))
    elif args.output == "csv":
        print(res.to_frame().to_csv(index=False), end="")
    else:
        print(json.dumps(res.to_frame().to_dict(orient="records"), indent=2, default=str))
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="clusterstats",
        description="Honest confidence intervals for eval results with clustered rows.",
    )
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
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return args.func(args)
    except (ClusterStatsError, OSError) as exc:
        print(f"clusterstats: error: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
