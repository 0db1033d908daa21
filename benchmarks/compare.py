"""Benchmark of ``compare``: many models at once against one model's bootstrap.

Measured in one run (medians of ``--repeats``, interleaved, after a warm-up):

* ``clusterstats.compare(df, "y", by="cluster", model="model", on="item",
  n_resamples=10_000)`` on 50 models x 100,000 items in 1,000 clusters (a long frame of
  5,000,000 rows): all 1,225 pairwise differences with Holm-adjusted p-values, every model's
  clustered interval, and the rank intervals from one shared cluster bootstrap;
* one model's ``cluster_ci(..., method="bootstrap_bca", n_resamples=10_000)`` on the same
  100,000 items.

* ``compare(..., method="cr2")``: the pairs' CR2 intervals instead of the default's
  studentized bootstrap of every pair (the rank bootstrap is drawn either way);
* the least a pandas user would do to form the cells ``compare`` pairs on, from the shuffled
  rows: ``shuffled.groupby(["model", "item"])["y"].sum()``.

Target (issue 26): ``compare`` on the shuffled rows at most 4.5x one model's ``cluster_ci``
bootstrap. That target dates from before the default studentized every pair and before
the one-model bootstrap sped up (43-65 ms today at 1,000 clusters and 10,000 resamples), so
the script also prints the ratio to the pandas groupby, the floor of the reduction that a
shuffled long frame needs whatever the statistics. The frame is laid out
as results usually arrive, one block of rows per model in the same item order, which
``compare`` recognises without hashing every row; the same rows shuffled (the general path,
which hashes the model labels and scatters every row) are timed too and reported beside it.
The script also times, each on its own, the two parts of ``compare``: reducing the long frame
to a models x items matrix, and the statistics on that matrix (all pairs and the shared rank
bootstrap).

* the rank sets alone (issue 29): ``summarize_ranks`` on the same matrix, the step-down
  simultaneous and marginal sets and the tiers, with the default critical values
  (``rank_method="guarded"``, 10,000 multivariate t draws from the cluster-robust covariance,
  with Holm's bound as a floor) and with the cluster bootstrap's replicates. Target:
  ``compare`` with its rank sets within 1.5x of ``compare`` without them (its time less
  theirs), 50 models x 100,000 items.

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
from clusterstats.adapters.labels import Columns
from clusterstats.adapters.pairing import model_matrix
from clusterstats.core.paired import (
    pairwise_cluster_robust,
    shared_replicates,
    summarize_comparison,
)
from clusterstats.core.ranks import summarize_ranks
from clusterstats.stats.comparison import DEFAULT_RANK_METHOD


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
    shuffled = frame.sample(frac=1.0, random_state=0)
    shuffled_categorical = shuffled.astype({"model": "category"})

    def run_compare():
        return clusterstats.compare(
            frame, "y", by="cluster", model="model", on="item", n_resamples=n_resamples, rng=0
        )

    def run_compare_shuffled():
        return clusterstats.compare(
            shuffled, "y", by="cluster", model="model", on="item", n_resamples=n_resamples, rng=0
        )

    def run_compare_categorical():
        return clusterstats.compare(
            shuffled_categorical,
            "y",
            by="cluster",
            model="model",
            on="item",
            n_resamples=n_resamples,
            rng=0,
        )

    def run_compare_cr2(data=frame):
        return clusterstats.compare(
            data,
            "y",
            by="cluster",
            model="model",
            on="item",
            method="cr2",
            n_resamples=n_resamples,
            rng=0,
        )

    def run_groupby():
        return shuffled.groupby(["model", "item"])["y"].sum()

    def run_one():
        return clusterstats.cluster_ci(
            one, "y", by="cluster", method="bootstrap_bca", n_resamples=n_resamples, rng=0
        )

    columns = Columns.of("y", "cluster", model="model", on="item")

    def run_reduce():
        return model_matrix(frame, columns, how="strict", missing="drop")

    reduced = run_reduce()
    counts, totals = reduced.counts, reduced.totals

    def run_core():
        return summarize_comparison(
            totals,
            counts,
            estimand="pooled",
            method="auto",
            adjust="holm",
            confidence=0.95,
            baseline=None,
            n_resamples=n_resamples,
            rng=np.random.default_rng(0),
        )

    means, variance, df, own = pairwise_cluster_robust(totals, counts, "CR3")
    replicates, _ = shared_replicates(
        totals, counts, n_resamples=n_resamples, rng=np.random.default_rng(0)
    )

    def run_ranks(method=DEFAULT_RANK_METHOD):
        return summarize_ranks(
            means, variance, own, confidence=0.95, method=method, n_draws=n_resamples,
            rng=np.random.default_rng(0), replicates=replicates, df=df,
        )  # fmt: skip

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", clusterstats.ClusterStatsWarning)
        t_ranks, t_ranks_bootstrap = [], []
        t_compare, t_shuffled, t_categorical, t_one, t_reduce, t_core = [], [], [], [], [], []
        t_cr2, t_cr2_shuffled, t_groupby = [], [], []
        for _ in range(args.repeats):  # interleaved, so drift hits all of them alike
            t_cr2 += timed(run_compare_cr2, 1)
            t_cr2_shuffled += timed(lambda: run_compare_cr2(shuffled), 1)
            t_groupby += timed(run_groupby, 1)
            t_core += timed(run_core, 1)
            t_compare += timed(run_compare, 1)
            t_one += timed(run_one, 1)
            t_reduce += timed(run_reduce, 1)
            t_shuffled += timed(run_compare_shuffled, 1)
            t_categorical += timed(run_compare_categorical, 1)
            t_ranks += timed(run_ranks, 1)
            t_ranks_bootstrap += timed(lambda: run_ranks("bootstrap"), 1)
        result = run_compare()
        same = all(
            run().to_frame().equals(result.to_frame())
            for run in (run_compare_shuffled, run_compare_categorical)
        )
    m_compare, m_shuffled, m_categorical, m_one, m_reduce, m_core = (
        statistics.median(t)
        for t in (t_compare, t_shuffled, t_categorical, t_one, t_reduce, t_core)
    )
    m_cr2, m_cr2_shuffled, m_groupby = (
        statistics.median(t) for t in (t_cr2, t_cr2_shuffled, t_groupby)
    )
    print(
        f"compare benchmark: {n_models} models x {n_items:,} items in {n_clusters:,} clusters "
        f"({len(frame):,} rows), {n_resamples:,} resamples; median of {args.repeats}"
    )
    print(f"  pairs computed: {len(result.pairs()):,}; rank intervals for {n_models} models")
    print(f"  compare (all pairs + leaderboard + ranks)   {m_compare:8.3f} s")
    print(f"  compare on the same rows shuffled           {m_shuffled:8.3f} s")
    print(f"  ... shuffled, model column categorical      {m_categorical:8.3f} s")
    print(f"  compare(method='cr2')                       {m_cr2:8.3f} s")
    print(f"  compare(method='cr2'), rows shuffled        {m_cr2_shuffled:8.3f} s")
    print(f"  pandas groupby(['model', 'item']), shuffled {m_groupby:8.3f} s")
    print(f"  identical results from the three layouts: {same}")
    print("  parts, each timed on its own (medians of their own runs):")
    print(f"    reducing the long frame to per-cluster sums {m_reduce:8.3f} s")
    print(f"    all pairs + rank bootstrap on the matrix  {m_core:8.3f} s")
    print(f"  one model's cluster_ci bootstrap (BCa)      {m_one:8.3f} s")
    ratio = m_shuffled / m_one
    print(
        f"  ratio compare (rows shuffled) / one model's bootstrap: {ratio:.2f}x "
        f"(target <= 4.5x: {'meets target' if ratio <= 4.5 else 'MISSES target'}); "
        f"rows in blocks {m_compare / m_one:.2f}x, categorical model column "
        f"{m_categorical / m_one:.2f}x, method='cr2' {m_cr2 / m_one:.2f}x "
        f"(shuffled {m_cr2_shuffled / m_one:.2f}x)"
    )
    print(
        "  ratio to the pandas groupby of the shuffled rows: "
        f"compare {m_shuffled / m_groupby:.2f}x, method='cr2' {m_cr2_shuffled / m_groupby:.2f}x"
    )
    print(
        f"  ratio of the statistics alone (pairs + rank bootstrap) / one model's bootstrap: "
        f"{m_core / m_one:.2f}x"
    )
    m_ranks, m_ranks_bootstrap = statistics.median(t_ranks), statistics.median(t_ranks_bootstrap)
    sets = run_ranks()
    print(
        "  rank sets alone (simultaneous + marginal + tiers): "
        f"default {DEFAULT_RANK_METHOD!r} {m_ranks:8.3f} s, "
        f"'bootstrap' {m_ranks_bootstrap:8.3f} s; {int(max(sets.tier))} tiers"
    )
    ratio = m_compare / (m_compare - m_ranks)
    print(
        f"  ratio compare / compare without its rank sets: {ratio:.2f}x "
        f"(target <= 1.5x: {'meets target' if ratio <= 1.5 else 'MISSES target'})"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
