"""Benchmark of ``compare``: many models at once against one model's bootstrap.

Measured in one run (medians of ``--repeats``, interleaved, after a warm-up):

* ``clusterstats.compare(df, "y", by="cluster", model="model", on="item",
  n_resamples=10_000)`` on 50 models x 100,000 items in 1,000 clusters (a long frame of
  5,000,000 rows): all 1,225 pairwise differences with Holm-adjusted p-values, every model's
  clustered interval, and the rank intervals from one shared cluster bootstrap;
* one model's ``cluster_ci(..., method="bootstrap_bca", n_resamples=10_000)`` on the same
  100,000 items.

Target: ``compare`` at most 5x one model's ``cluster_ci`` bootstrap. The script also prints
where ``compare``'s time goes (reading the long frame vs the statistics).

Usage::

    python benchmarks/compare.py            # full size
    python benchmarks/compare.py --quick    # 10 models x 5,000 items, a smoke run
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
import warnings

import numpy as np
import pandas as pd

import clusterstats
from clusterstats._pairing import model_matrix


def make_frame(n_models: int, n_items: int, n_clusters: int, seed: int = 7) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    cluster_of_item = np.sort(rng.integers(0, n_clusters, n_items))
    difficulty = rng.normal(size=n_clusters)[cluster_of_item] + rng.normal(size=n_items)
    skill = rng.normal(0, 0.5, size=n_models)
    p = 1 / (1 + np.exp(-(skill[:, None] - difficulty[None, :])))
    y = (rng.random((n_models, n_items)) < p).astype(np.int8)
    return pd.DataFrame(
        {
            "model": np.repeat([f"model-{i:02d}" for i in range(n_models)], n_items),
            "item": np.tile(np.arange(n_items), n_models),
            "cluster": np.tile(cluster_of_item, n_models),
            "y": y.ravel(),
        }
    )


def timed(fn, repeats):
    fn()  # warm-up
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return times


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args(argv)
    n_models, n_items, n_clusters, n_resamples = (
        (10, 5_000, 100, 1_000) if args.quick else (50, 100_000, 1_000, 10_000)
    )
    frame = make_frame(n_models, n_items, n_clusters)
    one = frame[frame["model"] == "model-00"]

    def run_compare():
        return clusterstats.compare(
            frame, "y", by="cluster", model="model", on="item", n_resamples=n_resamples, rng=0
        )

    def run_one():
        return clusterstats.cluster_ci(
            one, "y", by="cluster", method="bootstrap_bca", n_resamples=n_resamples, rng=0
        )

    def run_reduce():
        return model_matrix(
            frame, "y", "cluster", model="model", on="item", how="strict", missing="drop"
        )

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", clusterstats.ClusterStatsWarning)
        t_compare, t_one, t_reduce = [], [], []
        for _ in range(args.repeats):  # interleaved, so drift hits all three alike
            t_compare += timed(run_compare, 1)
            t_one += timed(run_one, 1)
            t_reduce += timed(run_reduce, 1)
        result = run_compare()
    m_compare, m_one, m_reduce = (statistics.median(t) for t in (t_compare, t_one, t_reduce))
    print(
        f"compare benchmark: {n_models} models x {n_items:,} items in {n_clusters:,} clusters "
        f"({len(frame):,} rows), {n_resamples:,} resamples; median of {args.repeats}"
    )
    print(f"  pairs computed: {len(result.pairs()):,}; rank intervals for {n_models} models")
    print(f"  compare (all pairs + leaderboard + ranks)   {m_compare:8.3f} s")
    print(f"    of which reducing the long frame          {m_reduce:8.3f} s")
    print(f"    statistics on the reduced matrix          {m_compare - m_reduce:8.3f} s")
    print(f"  one model's cluster_ci bootstrap (BCa)      {m_one:8.3f} s")
    ratio = m_compare / m_one
    print(
        f"  ratio compare / one model's bootstrap: {ratio:.2f}x "
        f"(target <= 5x: {'meets target' if ratio <= 5 else 'MISSES target'})"
    )
    print(
        f"  ratio excluding the reduction of the long frame: {(m_compare - m_reduce) / m_one:.2f}x"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
