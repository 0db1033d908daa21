"""Benchmark of the analytic methods against a plain pandas groupby on the same frame.

What is measured (full run; ``--quick`` shrinks the frame for a smoke test):

* data: 10,000,000 rows in 100,000 clusters of unequal sizes (every cluster non-empty), a
  binary outcome (int8) whose pass rate varies by cluster, rows shuffled, fixed seed; once
  with int64 cluster ids and once with string ids (``"doc-000123"``, pandas' default string
  dtype, printed below);
* ``clusterstats.cluster_ci(df, "y", by="cluster", method=m)`` for ``m`` in ``cr1``, ``cr2``,
  ``cr2_ik``, ``korn_graubard``, ``korn_graubard_guarded``, ``korn_graubard_inverted``,
  ``korn_graubard_hybrid`` and ``korn_graubard_hybrid_or_score`` (the binary methods
  ``auto`` has chosen; the last is its choice for a pooled rate over 20 or more clusters of
  uneven sizes, as here);
  ``clusterstats.icc(df, "y", by="cluster")``;
  ``clusterstats.design_effect(df, "y", by="cluster")``;
* the baseline ``df.groupby("cluster")["y"].agg(["sum", "count"])`` on the same frame, the
  least work any of these needs (per-cluster sums and counts).

Every call is made once untimed (warm-up), then all calls are timed in turn, repeat after
repeat (interleaved, so drifts of a noisy machine hit all of them alike). Reported: median and
minimum wall time, and the ratio of each median to the groupby median of the same run.

Target: every ratio <= 3x. Also timed: the binary default (``method="auto"``) and
``korn_graubard_inverted`` on one model of the bundled MMLU-Pro (``load_demo_data()``):
its first 24 questions per source (2,173 rows in 91 clusters, the demo of earlier releases),
median of 200 calls each, target <= 10 ms; and all 12,032 questions (sources of 17 to 1,003
questions: the likelihood behind both costs grows with the largest cluster), no target. And
the default of a continuous outcome (the studentized bootstrap up to 2,000 clusters, CR2
above) at 100 to 2,001 clusters.

Usage::

    python benchmarks/analytic.py             # full run (about 75 s on 2 cores)
    python benchmarks/analytic.py --quick     # smoke run (a few seconds)
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time

import _data  # benchmarks/_data.py, beside this script
import numpy as np
import pandas as pd

import clusterstats

FULL = {"n_rows": 10_000_000, "n_clusters": 100_000, "repeats": 7}
QUICK = {"n_rows": 200_000, "n_clusters": 2_000, "repeats": 3}
DATA_SEED = 20240602
TARGET_RATIO = 3.0
BASELINE = 'groupby("cluster")["y"].agg(["sum", "count"])'


def make_frame(n_rows: int, n_clusters: int, seed: int = DATA_SEED) -> pd.DataFrame:
    return _data.make_frame(n_rows, n_clusters, seed)


def with_string_ids(df: pd.DataFrame) -> pd.DataFrame:
    n_clusters = int(df["cluster"].max()) + 1
    names = np.array([f"doc-{i:06d}" for i in range(n_clusters)], dtype=object)
    return pd.DataFrame({"cluster": pd.Series(names[df["cluster"].to_numpy()]), "y": df["y"]})


def tasks(df: pd.DataFrame) -> dict:
    def ci(method):
        return lambda: clusterstats.cluster_ci(df, "y", by="cluster", method=method)

    return {
        BASELINE: lambda: df.groupby("cluster")["y"].agg(["sum", "count"]),
        'cluster_ci(method="cr1")': ci("cr1"),
        'cluster_ci(method="cr2")': ci("cr2"),
        'cluster_ci(method="korn_graubard")': ci("korn_graubard"),
        'cluster_ci(method="korn_graubard_guarded")': ci("korn_graubard_guarded"),
        'cluster_ci(method="korn_graubard_inverted")': ci("korn_graubard_inverted"),
        'cluster_ci(method="korn_graubard_hybrid")': ci("korn_graubard_hybrid"),
        'cluster_ci(method="korn_graubard_hybrid_or_score")': ci("korn_graubard_hybrid_or_score"),
        'cluster_ci(method="cr2_ik")': ci("cr2_ik"),
        "icc": lambda: clusterstats.icc(df, "y", by="cluster"),
        "design_effect": lambda: clusterstats.design_effect(df, "y", by="cluster"),
    }


def bench(df: pd.DataFrame, repeats: int) -> dict[str, list[float]]:
    calls = tasks(df)
    for fn in calls.values():  # warm-up
        fn()
    times: dict[str, list[float]] = {name: [] for name in calls}
    for _ in range(repeats):
        for name, fn in calls.items():
            start = time.perf_counter()
            fn()
            times[name].append(time.perf_counter() - start)
    return times


def report(title: str, times: dict[str, list[float]]) -> list[float]:
    base = statistics.median(times[BASELINE])
    print()
    print(title)
    width = max(len(name) for name in times)
    print(f"{'call':<{width}} {'median s':>9} {'min s':>8} {'runs':>5} {'ratio':>7}")
    ratios = []
    for name, values in times.items():
        median = statistics.median(values)
        ratio = median / base
        if name != BASELINE:
            ratios.append(ratio)
        print(f"{name:<{width}} {median:>9.3f} {min(values):>8.3f} {len(values):>5} {ratio:>6.2f}x")
    worst = max(ratios)
    verdict = "meets target" if worst <= TARGET_RATIO else "MISSES target"
    print(
        f"worst ratio to the groupby (medians of this run): {worst:.2f}x "
        f"[target <= {TARGET_RATIO:.0f}x: {verdict}]"
    )
    return ratios


DEMO_TARGET_MS = 10.0


def demo_default(calls: int = 200) -> None:
    """The binary default, and the one before it, on one model of the bundled MMLU-Pro: what
    a user's first call costs (24 questions per source, with a target; every question)."""
    demo = clusterstats.load_demo_data()
    one = demo[demo["model"] == demo["model"].iloc[0]]
    first24 = one.sort_values("question_id").groupby("src").head(24)
    print()
    for label, frame, target in (("24 per source", first24, True), ("all", one, False)):
        for method in ("auto", "korn_graubard_inverted"):
            first = clusterstats.cluster_ci(frame, "correct", by="src", method=method)
            times = []
            for _ in range(calls if target else max(calls // 10, 3)):
                start = time.perf_counter()
                clusterstats.cluster_ci(frame, "correct", by="src", method=method)
                times.append(time.perf_counter() - start)
            median = 1e3 * statistics.median(times)
            verdict = "meets target" if median <= DEMO_TARGET_MS else "MISSES target"
            aim = f" [target <= {DEMO_TARGET_MS:.0f} ms: {verdict}]" if target else ""
            print(
                f'cluster_ci(method="{method}") = {first.method} on MMLU-Pro, {label} '
                f"({first.n_rows:,} rows, {first.n_clusters} clusters of up to "
                f"{first.cluster_size_max:,}): median {median:.2f} ms, min "
                f"{1e3 * min(times):.2f} ms of {len(times)} calls{aim}"
            )


def continuous_default(calls: int) -> None:
    """What the default costs for a continuous outcome: the studentized bootstrap (9,999
    resamples) up to 2,000 clusters, CR2 above; 10 rows per cluster, zero-inflated scores."""
    rng = np.random.default_rng(DATA_SEED)
    print()
    for n_clusters in (100, 500, 2_000, 2_001):
        cluster = np.repeat(np.arange(n_clusters), 10)
        score = (rng.random(cluster.size) < 0.3) * rng.lognormal(size=cluster.size)
        frame = pd.DataFrame({"cluster": cluster, "y": score})
        first = clusterstats.cluster_ci(frame, "y", by="cluster")
        times = []
        for _ in range(calls):
            start = time.perf_counter()
            clusterstats.cluster_ci(frame, "y", by="cluster")
            times.append(time.perf_counter() - start)
        print(
            f'cluster_ci(continuous, method="auto") = {first.method} with {n_clusters:,} '
            f"clusters: median {1e3 * statistics.median(times):.1f} ms, min "
            f"{1e3 * min(times):.1f} ms of {calls} calls"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="small smoke run")
    parser.add_argument("--repeats", type=int, help="timed repeats of every call")
    parser.add_argument("--no-strings", action="store_true", help="skip the string-id variant")
    args = parser.parse_args()
    sizes = dict(QUICK if args.quick else FULL)
    if args.repeats:
        sizes["repeats"] = args.repeats

    n, g, repeats = sizes["n_rows"], sizes["n_clusters"], sizes["repeats"]
    df = make_frame(n, g)
    print(
        f"analytic methods benchmark{' (--quick)' if args.quick else ''}: {n:,} rows, "
        f"{g:,} clusters, binary outcome; median of {repeats} interleaved repeats"
    )
    if args.quick:
        print("(--quick: sizes are too small for the targets to mean anything)")
    print(f"numpy {np.__version__}, pandas {pd.__version__}, python {sys.version.split()[0]}")
    demo_default(20 if args.quick else 200)
    continuous_default(3 if args.quick else 15)
    report(f"int64 cluster ids (dtype {df['cluster'].dtype})", bench(df, repeats))
    if not args.no_strings:
        strings = with_string_ids(df)
        del df
        dtype = strings["cluster"].dtype
        storage = getattr(dtype, "storage", None)
        described = f"dtype {dtype}" + (f", {storage} storage" if storage else "")
        report(f"string cluster ids ({described})", bench(strings, repeats))


if __name__ == "__main__":
    main()
