"""Benchmark of the cluster bootstrap: clusterstats against the seed article's loop and numpy.

What is measured (full run; ``--quick`` shrinks every size for a smoke test):

* data: 1,000,000 rows in 10,000 clusters of unequal sizes (every cluster non-empty), a binary
  outcome whose pass rate varies by cluster, int64 cluster ids, rows shuffled, fixed seed;
* ``clusterstats.cluster_ci(df, "y", by="cluster", method=m, n_resamples=10_000, rng=0)`` for
  ``m`` in ``bootstrap_percentile``, ``bootstrap_bca`` and ``bootstrap_t`` (the default of a
  continuous outcome up to 2,000 clusters), end to end from the DataFrame, after
  one untimed warm-up call; median of several repeats, interleaved with the floor below;
* the floor: drawing the same 10,000 x 10,000 cluster indices with
  ``rng.integers(0, G, size=(chunk, G))`` in chunks (the chunk clusterstats uses), nothing else;
* the seed article's reference loop (``cluster_bootstrap_ci`` below, transcribed verbatim). It
  is far too slow to run with B = 10,000 at this size, so it is timed with B = 1 and with
  B = 1 + k (k = 20), and extrapolated linearly: ``T(10,000) = T(1) + 9,999 * per_resample``,
  ``per_resample = (T(1 + k) - T(1)) / k``. It is fed Python lists (``df[col].tolist()``, the
  conversion counted as setup), its fastest input; numpy-array input is also timed and shown;
* peak memory of each clusterstats call, in a fresh subprocess: the data frame is built, the
  process's peak-RSS mark is reset (``/proc/self/clear_refs``; if that fails the earlier peak
  is kept and the increase is an upper bound), the call is made and
  ``resource.getrusage(RUSAGE_SELF).ru_maxrss`` is read. Reported: the process peak, and its
  increase over the resident set size just before the call. The peak of numpy's traced
  allocations during a second call (``tracemalloc``) is shown as a cross-check.

Targets: speed-up over the reference loop >= 300x; clusterstats time <= 1.5x the floor for
the percentile and BCa bootstraps and <= 2x for ``bootstrap_t``; peak
memory of the process < 500 MB (1 MB = 10^6 bytes).

The outcome is binary, so the percentile and BCa bootstraps take the integer path of
``clusterstats.core.bootstrap.resample_cluster_sums`` (totals and counts packed into one int64
per cluster); a continuous outcome's totals are not integers and take the float path, which
gathers a complex column instead (about 0.05 s more here).

Usage::

    python benchmarks/bootstrap.py            # full run (about 30 s on 2 cores)
    python benchmarks/bootstrap.py --quick    # smoke run (a few seconds)
"""

from __future__ import annotations

import argparse
import gc
import json
import resource
import statistics
import subprocess
import sys
import time
import tracemalloc
from pathlib import Path

import _data  # benchmarks/_data.py, beside this script
import numpy as np
import pandas as pd

import clusterstats
from clusterstats.core import bootstrap as _bootstrap_module

FULL = {
    "n_rows": 1_000_000,
    "n_clusters": 10_000,
    "n_resamples": 10_000,
    "repeats": 5,
    "ref_extra": 20,
    "ref_repeats": 3,
}
QUICK = {
    "n_rows": 100_000,
    "n_clusters": 1_000,
    "n_resamples": 1_000,
    "repeats": 3,
    "ref_extra": 3,
    "ref_repeats": 1,
}
METHODS = ("bootstrap_percentile", "bootstrap_bca", "bootstrap_t")
DATA_SEED = 20240601
TARGET_SPEEDUP = 300.0
# the percentile and BCa bootstraps sum two per-cluster columns, bootstrap_t five
TARGET_FLOOR_RATIO = {"bootstrap_percentile": 1.5, "bootstrap_bca": 1.5, "bootstrap_t": 2.0}
TARGET_PEAK_MB = 500.0


# -- the seed article's reference implementation, transcribed verbatim ----------------------


def cluster_bootstrap_ci(scores, cluster_ids, B=5000, alpha=0.05, seed=0):
    rng = np.random.default_rng(seed)
    clusters = {}
    for s, c in zip(scores, cluster_ids):  # noqa: B905
        clusters.setdefault(c, []).append(s)
    keys = list(clusters)
    means = np.empty(B)
    for b in range(B):
        drawn = rng.choice(keys, size=len(keys), replace=True)
        pooled = [s for k in drawn for s in clusters[k]]
        means[b] = np.mean(pooled)
    lo, hi = np.percentile(means, [100 * alpha / 2, 100 * (1 - alpha / 2)])
    return float(lo), float(hi)


# -- data and timed pieces --------------------------------------------------------------------


def make_frame(n_rows: int, n_clusters: int, seed: int = DATA_SEED) -> pd.DataFrame:
    return _data.make_frame(n_rows, n_clusters, seed)


def run_clusterstats(df: pd.DataFrame, method: str, n_resamples: int):
    return clusterstats.cluster_ci(
        df, "y", by="cluster", method=method, n_resamples=n_resamples, rng=0
    )


def chunk_rows(n_clusters: int) -> int:
    """Replicates per chunk, exactly as clusterstats.core.bootstrap chooses them."""
    return max(1, _bootstrap_module.CHUNK_ELEMENTS // n_clusters)


def draw_floor(n_clusters: int, n_resamples: int, chunk: int, seed: int = 0) -> None:
    rng = np.random.default_rng(seed)
    for start in range(0, n_resamples, chunk):
        rng.integers(0, n_clusters, size=(min(chunk, n_resamples - start), n_clusters))


def timed(fn) -> float:
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def time_reference(df: pd.DataFrame, as_lists: bool, extra: int, repeats: int):
    """Median T(B=1) and median per-resample cost, conversion from the frame included."""

    def call(b: int) -> None:
        if as_lists:
            scores, ids = df["y"].tolist(), df["cluster"].tolist()
        else:
            scores, ids = df["y"].to_numpy(), df["cluster"].to_numpy()
        cluster_bootstrap_ci(scores, ids, B=b)

    t1, per = [], []
    for _ in range(repeats):
        one = timed(lambda: call(1))
        more = timed(lambda: call(1 + extra))
        t1.append(one)
        per.append((more - one) / extra)
    return statistics.median(t1), statistics.median(per)


# -- peak memory, in a fresh process ----------------------------------------------------------


def _status_kb(field: str) -> int | None:
    try:
        with open("/proc/self/status") as fh:
            for line in fh:
                if line.startswith(field + ":"):
                    return int(line.split()[1])
    except OSError:
        return None
    return None


def memory_child(method: str, n_rows: int, n_clusters: int, n_resamples: int) -> None:
    """Runs in the subprocess: one cold call, then one call under tracemalloc; prints JSON."""
    df = make_frame(n_rows, n_clusters)
    gc.collect()
    rss_before_kb = _status_kb("VmRSS")
    peak_before_kb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    try:
        with open("/proc/self/clear_refs", "w") as fh:
            fh.write("5")  # reset the peak-RSS mark to the current RSS (Linux >= 4.0)
        reset = True
    except OSError:
        reset = False
    run_clusterstats(df, method, n_resamples)
    peak_kb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    gc.collect()
    tracemalloc.start()
    run_clusterstats(df, method, n_resamples)
    _, traced_peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    print(
        json.dumps(
            {
                "rss_before_kb": rss_before_kb,
                "peak_before_kb": peak_before_kb,
                "peak_kb": peak_kb,
                "reset": reset,
                "traced_peak_bytes": traced_peak,
            }
        )
    )


def measure_memory(method: str, sizes: dict) -> dict:
    cmd = [
        sys.executable,
        str(Path(__file__).resolve()),
        "--memory-child",
        method,
        str(sizes["n_rows"]),
        str(sizes["n_clusters"]),
        str(sizes["n_resamples"]),
    ]
    out = subprocess.run(cmd, check=True, capture_output=True, text=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


# -- report -----------------------------------------------------------------------------------


def mb(kib: float) -> float:
    return kib * 1024 / 1e6


def verdict(ok: bool) -> str:
    return "meets target" if ok else "MISSES target"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="small smoke run")
    parser.add_argument("--repeats", type=int, help="repeats of the clusterstats/floor timings")
    parser.add_argument("--memory-child", nargs=4, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.memory_child:
        method, n_rows, n_clusters, n_resamples = args.memory_child
        memory_child(method, int(n_rows), int(n_clusters), int(n_resamples))
        return

    sizes = dict(QUICK if args.quick else FULL)
    if args.repeats:
        sizes["repeats"] = args.repeats
    n, g, b = sizes["n_rows"], sizes["n_clusters"], sizes["n_resamples"]
    df = make_frame(n, g)
    chunk = chunk_rows(g)
    print(
        f"cluster bootstrap benchmark{' (--quick)' if args.quick else ''}: "
        f"{n:,} rows, {g:,} clusters (sizes {int(df['cluster'].value_counts().min())}.."
        f"{int(df['cluster'].value_counts().max())}), B = {b:,} resamples"
    )
    print(
        f"numpy {np.__version__}, pandas {pd.__version__}, python "
        f"{sys.version.split()[0]}; floor chunk = {chunk} replicates x {g:,} indices"
    )
    if args.quick:
        print("(--quick: sizes are too small for the targets to mean anything)")

    for method in METHODS:  # warm-up
        run_clusterstats(df, method, b)
    times: dict[str, list[float]] = {m: [] for m in METHODS}
    times["floor"] = []
    for _ in range(sizes["repeats"]):  # interleaved
        for method in METHODS:
            times[method].append(timed(lambda m=method: run_clusterstats(df, m, b)))
        times["floor"].append(timed(lambda: draw_floor(g, b, chunk)))

    ref = {}
    for label, as_lists in (("lists", True), ("numpy arrays", False)):
        ref[label] = time_reference(df, as_lists, sizes["ref_extra"], sizes["ref_repeats"])
    memory = {m: measure_memory(m, sizes) for m in METHODS}

    med = {k: statistics.median(v) for k, v in times.items()}
    rows = [(f"clusterstats {m}", med[m], min(times[m]), len(times[m])) for m in METHODS]
    rows.append(
        ("floor: numpy index draws only", med["floor"], min(times["floor"]), len(times["floor"]))
    )
    print()
    print(f"{'timing (B = ' + format(b, ',') + ')':<46} {'median s':>10} {'min s':>10} {'runs':>5}")
    for name, median, best, runs in rows:
        print(f"{name:<46} {median:>10.3f} {best:>10.3f} {runs:>5}")

    extra, reps = sizes["ref_extra"], sizes["ref_repeats"]
    print()
    print(
        f"reference loop (seed article), input as {' / '.join(ref)}: timed at B = 1 and "
        f"B = {1 + extra}, median of {reps}; EXTRAPOLATED LINEARLY to B = {b:,}, not run"
    )
    print(
        f"{'reference input':<20} {'T(B=1) s':>10} {'per resample s':>15} "
        f"{'T(B=' + format(b, ',') + ') s, extrapolated':>30}"
    )
    extrapolated = {}
    for label, (t1, per) in ref.items():
        extrapolated[label] = t1 + (b - 1) * per
        print(f"{label:<20} {t1:>10.3f} {per:>15.4f} {extrapolated[label]:>30.1f}")
    reference_time = min(extrapolated.values())
    fastest = min(extrapolated, key=extrapolated.get)

    print()
    print(f"ratios (medians of this run; reference = {fastest} input, extrapolated)")
    print(f"{'method':<22} {'speed-up vs reference':>22} {'ratio to floor':>15}")
    for method in METHODS:
        speedup = reference_time / med[method]
        floor_ratio = med[method] / med["floor"]
        print(f"{method:<22} {speedup:>21.0f}x {floor_ratio:>14.2f}x")
        print(
            f"  targets: speed-up >= {TARGET_SPEEDUP:.0f}x {verdict(speedup >= TARGET_SPEEDUP)};"
            f" floor ratio <= {TARGET_FLOOR_RATIO[method]}x "
            f"{verdict(floor_ratio <= TARGET_FLOOR_RATIO[method])}"
        )

    print()
    print(
        "peak memory of one cold clusterstats call in a fresh process (ru_maxrss; MB = 10^6 bytes)"
    )
    print(
        f"{'method':<22} {'RSS before':>11} {'process peak':>13} {'increase':>9} "
        f"{'tracemalloc peak':>17}  peak mark reset"
    )
    for method, m in memory.items():
        before = m["rss_before_kb"] if m["rss_before_kb"] is not None else m["peak_before_kb"]
        peak = mb(m["peak_kb"])
        increase = mb(m["peak_kb"] - before)
        note = "yes" if m["reset"] else "no: increase is an upper bound"
        print(
            f"{method:<22} {mb(before):>8.1f} MB {peak:>10.1f} MB {increase:>6.1f} MB "
            f"{m['traced_peak_bytes'] / 1e6:>14.1f} MB  {note}"
        )
        print(f"  target: process peak < {TARGET_PEAK_MB:.0f} MB {verdict(peak < TARGET_PEAK_MB)}")


if __name__ == "__main__":
    main()
