"""Benchmark of the gate on several slices against the paired differences it reads.

What is measured (``--quick`` shrinks the data for a smoke test):

* data: two systems on the same items, 5 slices (``task``) of 400 clusters of 10 items
  (20,000 items), 0/1 outcomes whose pass rate varies by cluster, the new system 3 points
  better; a fixed seed;
* ``gate(new, "y", "doc", baseline=old, on="item", margin=0.02, over="task")``: every slice
  passes, so the gate reads each slice's interval at Holm's levels and plans nothing;
* the reverse question, ``gate(old, ..., baseline=new, margin=0.02)``: the old system is
  3 points worse, so its slices are inconclusive and the gate also plans the clusters needed
  for each of them;
* the reference: five ``paired_delta`` calls, one per slice (``new[new.task == t]``), with
  the default method.

Every call is made once untimed (warm-up), then all are timed in turn, repeat after repeat
(interleaved). Reported: the median wall time of each and its ratio to the five
``paired_delta`` calls of the same run. Target: the gate that plans nothing ≤ 1.5x.

Usage::

    python benchmarks/gate.py            # full run
    python benchmarks/gate.py --quick    # smoke run
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
import warnings

import numpy as np
import pandas as pd

import clusterstats as cs


def two_systems(n_tasks: int, clusters: int, size: int, seed: int = 7) -> tuple[pd.DataFrame, ...]:
    rng = np.random.default_rng(seed)
    n = n_tasks * clusters * size
    doc = np.arange(n) // size
    rate = rng.beta(4, 3, n_tasks * clusters)[doc]
    frame = pd.DataFrame(
        {"item": np.arange(n), "doc": doc, "task": [f"t{d // clusters}" for d in doc]}
    )
    old = frame.assign(y=(rng.random(n) < rate).astype(np.int8))
    new = frame.assign(y=(rng.random(n) < np.minimum(rate + 0.03, 1.0)).astype(np.int8))
    return new, old


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args(argv)
    clusters, repeats = (60, 1) if args.quick else (400, args.repeats)
    new, old = two_systems(5, clusters, 10)
    tasks = sorted(new["task"].unique())

    def five_paired() -> None:
        for task in tasks:
            cs.paired_delta(new[new.task == task], old[old.task == task], "y", "doc", on="item")

    def gate(first: pd.DataFrame, second: pd.DataFrame):
        return lambda: cs.gate(
            first, "y", "doc", baseline=second, on="item", margin=0.02, over="task"
        )

    calls = {
        "five paired_delta": five_paired,
        "gate, passing": gate(new, old),
        "gate, with plans": gate(old, new),
    }
    times: dict[str, list[float]] = {name: [] for name in calls}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", cs.ClusterStatsWarning)
        verdicts = {name: call() for name, call in calls.items() if name.startswith("gate")}
        for _ in range(repeats):
            for name, call in calls.items():
                started = time.perf_counter()
                call()
                times[name].append(time.perf_counter() - started)
    base = statistics.median(times["five paired_delta"])
    print(f"{len(new):,} items in 5 slices of {clusters:,} clusters; median of {repeats}")
    print(f"{'call':<24} {'median s':>9} {'ratio':>6}  verdicts")
    for name, values in times.items():
        median = statistics.median(values)
        shown = "" if name not in verdicts else " ".join(g.verdict for g in verdicts[name].gates)
        print(f"{name:<24} {median:>9.3f} {median / base:>6.2f}  {shown}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
