"""Benchmark of a plan from a large pilot against one interval on the same pilot.

What is measured (``--quick`` shrinks the pilots for a smoke test):

* data: 0/1 outcomes whose pass rate varies by cluster (some ICC), unequal cluster sizes
  (gamma-weighted, every cluster at least one row), shuffled rows, a fixed seed; three
  pilots: 10^5 rows in 1,000 clusters, 10^5 rows in 4,000, 4 x 10^5 rows in 16,000;
* ``df.eval.plan("y", "c")``: the pilot's interval, its ICC and the projection of the
  half-width to other numbers of clusters (the curve ``plot`` draws);
* the reference: ``df.eval.cluster_ci("y", by="c")`` on the same pilot.

Every call is made once untimed (warm-up), then both are timed in turn, repeat after
repeat (interleaved). Reported: the median wall time of each and their ratio. Target: the
plan at most 3x the interval at every size.

Usage::

    python benchmarks/plan_scale.py            # full run
    python benchmarks/plan_scale.py --quick    # smoke run
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
import warnings

import _data  # benchmarks/_data.py, beside this script

import clusterstats as cs

FULL_SIZES = ((100_000, 1_000), (100_000, 4_000), (400_000, 16_000))
QUICK_SIZES = ((5_000, 100), (20_000, 800))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args(argv)
    sizes, repeats = (QUICK_SIZES, 1) if args.quick else (FULL_SIZES, args.repeats)
    print(f"plan vs cluster_ci on the same pilot; median of {repeats}")
    print(f"{'rows':>9} {'clusters':>9} {'plan s':>8} {'cluster_ci s':>12} {'ratio':>6}")
    worst = 0.0
    for n_rows, n_clusters in sizes:
        frame = _data.make_frame(n_rows, n_clusters, seed=11).rename(columns={"cluster": "c"})
        calls = {
            "plan": lambda frame=frame: frame.eval.plan("y", "c"),
            "cluster_ci": lambda frame=frame: frame.eval.cluster_ci("y", by="c"),
        }
        times: dict[str, list[float]] = {name: [] for name in calls}
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", cs.ClusterStatsWarning)
            for call in calls.values():
                call()
            for _ in range(repeats):
                for name, call in calls.items():
                    started = time.perf_counter()
                    call()
                    times[name].append(time.perf_counter() - started)
        plan_s = statistics.median(times["plan"])
        ci_s = statistics.median(times["cluster_ci"])
        worst = max(worst, plan_s / ci_s)
        print(f"{n_rows:>9,} {n_clusters:>9,} {plan_s:>8.3f} {ci_s:>12.3f} {plan_s / ci_s:>6.2f}")
    print(f"worst plan / cluster_ci ratio {worst:.2f} (target at most 3)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
