"""Benchmark of confidence sequences over completed clusters.

What is measured (``--quick`` shrinks the data for a smoke test):

* data: 10,000 clusters of 1 to 20 rows of a 0/1 outcome whose rate varies by cluster, as
  per-cluster sums; a fixed seed;
* ``betting_sequence``: the whole trajectory, an interval after every one of the 10,000
  clusters (``confidence_sequence``'s core, 1,001 candidate means);
* ``summarize_interval``: one fixed-sample interval on the same sums (``cluster_ci``'s core,
  the default method), the reference;
* the cost per cluster at 1,000, 10,000 and 100,000 clusters: flat when each update costs
  the same (the wealth of every candidate is carried from one block of clusters to the next);
* ``SequentialStopping``'s way of watching: the same 10,000 clusters fed to a
  ``BettingState`` one completed cluster at a time, a look after each, against one
  ``betting_sequence`` call, both with the default method (``betting_mixture``; target: all
  looks within 2x of the one call).

Every call is made once untimed (warm-up), then timed in turn, repeat after repeat. Reported:
the median wall time of each and the ratio of the trajectory to the one interval. Target: the
trajectory of 10,000 clusters in under 0.5 s.

Usage::

    python benchmarks/sequential.py            # full run
    python benchmarks/sequential.py --quick    # smoke run
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time

import numpy as np

from clusterstats.core.grouping import ClusterSums
from clusterstats.core.sequential import SEQUENCE_METHODS, BettingState, betting_sequence
from clusterstats.core.summary import summarize_interval


def clusters(n: int, seed: int = 11) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    sizes = rng.integers(1, 21, n).astype(float)
    rates = rng.beta(6, 4, n)
    return rng.binomial(sizes.astype(int), rates).astype(float), sizes


def median_time(call, repeats: int) -> float:
    call()  # warm-up
    times = []
    for _ in range(repeats):
        started = time.perf_counter()
        call()
        times.append(time.perf_counter() - started)
    return statistics.median(times)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args(argv)
    n, repeats = (1_000, 1) if args.quick else (10_000, args.repeats)
    totals, sizes = clusters(n)

    def trajectory() -> None:
        betting_sequence(totals, sizes, estimand="pooled")

    def one_interval() -> None:
        summarize_interval(
            ClusterSums(sizes, totals, totals),  # 0/1 rows: squares = totals
            estimand="pooled",
            method="auto",
            confidence=0.95,
            is_binary=True,
        )

    default = SEQUENCE_METHODS["betting_mixture"]._asdict()

    def one_call() -> None:
        betting_sequence(totals, sizes, estimand="pooled", **default)

    def watched() -> None:
        state = BettingState(estimand="pooled", max_cluster_size=float(sizes.max()), **default)
        for total, size in zip(totals, sizes, strict=True):
            state.add(total, size)

    whole = median_time(trajectory, repeats)
    single = median_time(one_interval, repeats)
    mixture = median_time(one_call, max(1, repeats // 2))
    looks = median_time(watched, max(1, repeats // 2))
    print(f"{n:,} clusters: trajectory {whole:.3f} s, one fixed interval {single:.4f} s")
    print(f"ratio trajectory / one interval: {whole / single:.0f}x")
    verdict = "met" if whole < 0.5 else "missed"
    print(f"target: the trajectory of 10,000 clusters under 0.5 s ({verdict})")
    print(
        f"the default method (betting_mixture), one call: {mixture:.3f} s; a look after each of "
        f"{n:,} clusters, one cluster at a time: {looks:.3f} s, ratio {looks / mixture:.2f}x "
        f"(target at most 2x: {'met' if looks <= 2 * mixture else 'missed'})"
    )
    sizes_checked = (1_000, 4_000) if args.quick else (1_000, 10_000, 100_000)
    for count in sizes_checked:
        t, s = clusters(count, seed=count)
        seconds = median_time(lambda t=t, s=s: betting_sequence(t, s, estimand="pooled"), 1)
        print(f"per cluster at {count:>7,} clusters: {1e6 * seconds / count:.1f} µs")
    return 0


if __name__ == "__main__":
    sys.exit(main())
