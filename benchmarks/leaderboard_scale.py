"""Benchmark of ``compare`` at arena scale: time and memory against the number of models.

A synthetic leaderboard: 2,000 items in 200 clusters, every model answering every item with a
binary outcome whose pass rate depends on the model's skill and on the item's difficulty (a
shared cluster effect plus the item's own), fixed seed. For each board size the script times

    clusterstats.compare(df, "y", by="cluster", model="model", on="item")

with the defaults (method ``auto``: the studentized bootstrap of every pair below 2,000
clusters, 9,999 resamples; rank sets ``guarded``; Holm), each size in a fresh process so that
its peak memory is its own: the median of ``--repeats`` timed calls after a warm-up on a
small board (``time.perf_counter``), the process's peak resident memory (``ru_maxrss``), and
up to 200 models the peak of the memory the call itself allocates (``tracemalloc``, one
more call).

It prints the curve: models, pairs, seconds, peak MB (process and call), and seconds per
1,000 pairs, which stays flat when time grows at most linearly in the number of pairs.

Target (issue 45): 200 models in at most 10 s and 1 GB; time at most linear in the number of
pairs beyond that; memory bounded by a block of pairs whatever the number of models, so that
1,000 models run on one machine.

Usage::

    python benchmarks/leaderboard_scale.py           # 50, 100, 200 and 500 models
    python benchmarks/leaderboard_scale.py --big     # and 1,000 models
    python benchmarks/leaderboard_scale.py --quick   # 10, 20 and 40 models, a smoke run
"""

from __future__ import annotations

import argparse
import json
import resource
import statistics
import subprocess
import sys
import time
import tracemalloc
import warnings

import numpy as np
import pandas as pd

import clusterstats

N_ITEMS, N_CLUSTERS = 2_000, 200
#: Boards measured once more under tracemalloc (the larger ones would take minutes more).
TRACED_UP_TO = 200


def make_board(n_models: int, seed: int = 45) -> pd.DataFrame:
    """A long frame of ``n_models`` x 2,000 binary outcomes in 200 clusters."""
    rng = np.random.default_rng(seed)
    cluster_of_item = np.sort(rng.integers(0, N_CLUSTERS, N_ITEMS))
    difficulty = rng.normal(size=N_CLUSTERS)[cluster_of_item] + rng.normal(size=N_ITEMS)
    skill = rng.normal(0, 0.5, size=n_models)
    p = 1 / (1 + np.exp(-(skill[:, None] - difficulty[None, :])))
    y = (rng.random((n_models, N_ITEMS)) < p).astype(np.int8)
    return pd.DataFrame(
        {
            "model": np.repeat([f"model-{i:04d}" for i in range(n_models)], N_ITEMS),
            "item": np.tile(np.arange(N_ITEMS), n_models),
            "cluster": np.tile(cluster_of_item, n_models),
            "y": y.ravel(),
        }
    )


def measure_one(n_models: int, repeats: int) -> dict:
    """Time and memory of the default ``compare`` on one board, in this process."""

    def run(frame):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return clusterstats.compare(frame, "y", by="cluster", model="model", on="item")

    run(make_board(5))  # warm-up: imports and every code path, on a small board
    frame = make_board(n_models)
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        result = run(frame)
        times.append(time.perf_counter() - start)
    rss_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # KiB on Linux
    traced_mb = float("nan")
    if n_models <= TRACED_UP_TO:  # one more call, under tracemalloc
        tracemalloc.start()
        run(frame)
        traced_mb = tracemalloc.get_traced_memory()[1] / 2**20
        tracemalloc.stop()
    return {
        "models": n_models,
        "pairs": n_models * (n_models - 1) // 2,
        "seconds": statistics.median(times),
        "rss_mb": rss_mb,
        "traced_mb": traced_mb,
        "method": result.method,
    }


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="10, 20 and 40 models")
    parser.add_argument("--big", action="store_true", help="also 1,000 models")
    parser.add_argument("--repeats", type=int, default=None)
    parser.add_argument("--one", type=int, default=None, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.one is not None:  # the child process of one size
        print(json.dumps(measure_one(args.one, args.repeats or 1)))
        return 0
    sizes = [10, 20, 40] if args.quick else [50, 100, 200, 500] + ([1_000] if args.big else [])
    print(
        f"compare, defaults, {N_ITEMS:,} binary items in {N_CLUSTERS} clusters "
        "(each size in its own process)"
    )
    print(
        f"{'models':>7} {'pairs':>8} {'seconds':>9} {'peak MB':>8} {'call MB':>8} "
        f"{'s per 1,000 pairs':>18}  method"
    )
    rows = []
    for n_models in sizes:
        repeats = args.repeats or (1 if args.quick or n_models > 200 else 3)
        proc = subprocess.run(
            [sys.executable, __file__, "--one", str(n_models), "--repeats", str(repeats)],
            capture_output=True,
            text=True,
            check=True,
        )
        row = json.loads(proc.stdout.strip().splitlines()[-1])
        rows.append(row)
        print(
            f"{row['models']:>7,} {row['pairs']:>8,} {row['seconds']:>9.2f} "
            f"{row['rss_mb']:>8.0f} {row['traced_mb']:>8.0f} "
            f"{1000 * row['seconds'] / row['pairs']:>18.3f}  {row['method']}",
            flush=True,
        )
    first, last = rows[0], rows[-1]
    print(
        f"from {first['models']} to {last['models']} models: pairs x"
        f"{last['pairs'] / first['pairs']:.1f}, time x{last['seconds'] / first['seconds']:.1f}, "
        f"peak memory x{last['rss_mb'] / first['rss_mb']:.1f}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
