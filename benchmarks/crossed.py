"""Benchmark of crossed clustering against the one-way interval on the same rows.

What is measured (``--quick`` shrinks the large frame for a smoke test):

* VerbAgg (lme4's data, committed in ``tests/reference/data/verbagg.csv.xz``): 7,584 rows,
  316 persons crossed with 24 items; one-way ``cluster_ci(df, "y", by="id")`` against
  crossed ``cluster_ci(df, "y", by=["id", "item"], crossed=True)``;
* a complete grid of 100,000 persons x 10 items, one row per cell (10^6 rows), rows
  shuffled, a 0/1 outcome whose rate varies by person and item, fixed seed; the same two
  calls.

Both with the default method (``auto``: the one-way default of a pooled rate is the
Korn-Graubard hybrid with the score interval; the crossed default is Korn-Graubard on the
crossed variance) and with ``cr1`` (the same construction on each side). Every call is
made once untimed (warm-up), then all are timed in turn, repeat after repeat (interleaved).
Reported: the median of each and the crossed median over the one-way median of the same
run. Target (issue 26): crossed <= 3x one-way. A last row, ``cells only``, times what every
crossed call must do first and a one-way call never does: reduce the rows to per-cell sums
(``clusterstats.adapters.mean_design`` by both columns, no interval); its ratio to the
one-way ``cr1`` call is a floor under the crossed ratio.

Usage::

    python benchmarks/crossed.py            # full run
    python benchmarks/crossed.py --quick    # smoke run
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
import warnings
from pathlib import Path

import numpy as np
import pandas as pd

import clusterstats as cs
from clusterstats import adapters

VERBAGG = Path(__file__).resolve().parents[1] / "tests" / "reference" / "data" / "verbagg.csv.xz"
TARGET = 3.0


def grid(persons: int, items: int, seed: int = 3) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    person = np.repeat(np.arange(persons), items)
    item = np.tile(np.arange(items), persons)
    logit = rng.normal(0, 1, persons)[person] + rng.normal(0, 0.5, items)[item]
    frame = pd.DataFrame(
        {"id": person, "item": item, "y": (rng.random(person.size) < 1 / (1 + np.exp(-logit)))}
    )
    return frame.astype({"y": np.int8}).sample(frac=1.0, random_state=seed, ignore_index=True)


def timed(frame: pd.DataFrame, repeats: int, label: str) -> None:
    calls = {}
    for method in ("auto", "cr1"):
        calls[f"one-way {method}"] = lambda m=method: cs.cluster_ci(frame, "y", by="id", method=m)
        calls[f"crossed {method}"] = lambda m=method: cs.cluster_ci(
            frame, "y", by=["id", "item"], crossed=True, method=m
        )
    columns = adapters.columns_of(frame, "y", ["id", "item"])
    calls["cells only"] = lambda: adapters.mean_design(frame, columns)
    times: dict[str, list[float]] = {name: [] for name in calls}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", cs.ClusterStatsWarning)
        used = {name: getattr(call(), "method", "(no interval)") for name, call in calls.items()}
        for _ in range(repeats):
            for name, call in calls.items():
                started = time.perf_counter()
                call()
                times[name].append(time.perf_counter() - started)
    medians = {name: statistics.median(values) for name, values in times.items()}
    print(f"\n{label}: {len(frame):,} rows; median of {repeats}")
    print(f"{'call':<14} {'method used':<32} {'median ms':>10} {'ratio':>6}")
    for name, median in medians.items():
        method = "cr1" if name == "cells only" else name.split()[1]
        ratio = median / medians[f"one-way {method}"]
        print(f"{name:<14} {used[name]:<32} {1e3 * median:>10.1f} {ratio:>5.2f}x")
    worst = max(medians[f"crossed {m}"] / medians[f"one-way {m}"] for m in ("auto", "cr1"))
    verdict = "meets target" if worst <= TARGET else "MISSES target"
    print(f"worst crossed / one-way ratio: {worst:.2f}x [target <= {TARGET:g}x: {verdict}]")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--repeats", type=int)
    args = parser.parse_args(argv)
    print(f"numpy {np.__version__}, pandas {pd.__version__}")
    verbagg = pd.read_csv(VERBAGG)
    timed(verbagg, args.repeats or (5 if args.quick else 50), "VerbAgg (316 persons x 24 items)")
    persons = 2_000 if args.quick else 100_000
    timed(grid(persons, 10), args.repeats or (2 if args.quick else 7), f"{persons:,} x 10 grid")
    return 0


if __name__ == "__main__":
    sys.exit(main())
