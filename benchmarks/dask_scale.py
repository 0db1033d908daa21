"""Benchmark: a (case, rerun) Dataset bigger than memory, through dask.

Writes once a zarr store of ``cases x reruns`` float32 outcomes (default 10^7 x 100 = 10^9
cells, 4 GB as float32; 0/1 outcomes from a Beta-Bernoulli model with ICC 0.3), chunked along
``case``. Then, each in a fresh process so that its peak memory is its own, and interleaved
over ``--repeats`` rounds:

* the baseline: ``ds["passed"].mean().compute()`` (dask reading every chunk once);
* ``ds.eval.cluster_ci("passed")``, ``ds.eval.icc("passed")`` and
  ``ds.eval.pass_at_k("passed", k=5)`` on the same lazily opened store.

Printed: the median time of each, its ratio to the baseline's median (target <= 3x), and
each process's peak resident memory (target < 1.5 GB).

Usage::

    python benchmarks/dask_scale.py                 # 10^7 cases x 100 reruns
    python benchmarks/dask_scale.py --quick         # 10^5 x 20, a smoke run
    python benchmarks/dask_scale.py --store DIR     # keep (or reuse) the store in DIR
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

WRITE = """
import numpy as np, dask.array as da, xarray as xr
cases, reruns, chunk = {cases}, {reruns}, {chunk}
def block(block_info=None):
    (start, stop), _ = block_info[None]["array-location"]
    rng = np.random.default_rng([7, start])
    # Beta(a, b) with a + b = 1/icc - 1: ICC 0.3 between the runs of a case, mean 0.4
    p = rng.beta(0.4 * (1 / 0.3 - 1), 0.6 * (1 / 0.3 - 1), size=(stop - start, 1))
    return (rng.random((stop - start, reruns), dtype=np.float32) < p).astype(np.float32)
array = da.map_blocks(block, chunks=((chunk,) * (cases // chunk), (reruns,)), dtype=np.float32)
ds = xr.Dataset({{"passed": (("case", "rerun"), array)}})
ds.to_zarr({store!r}, mode="w")
"""

MEASURE = """
import json, resource, sys, time, warnings
import xarray as xr
import clusterstats
warnings.simplefilter("ignore")
ds = xr.open_zarr({store!r})
start = time.perf_counter()
task = {task!r}
if task == "dask_mean":
    value = float(ds["passed"].mean().compute())
elif task == "cluster_ci":
    value = ds.eval.cluster_ci("passed").estimate
elif task == "icc":
    value = ds.eval.icc("passed").icc
elif task == "pass_at_k":
    value = ds.eval.pass_at_k("passed", k=5).estimate
seconds = time.perf_counter() - start
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024  # Linux: kilobytes
print(json.dumps({{"seconds": seconds, "peak_bytes": peak, "value": value}}))
"""

TASKS = ("dask_mean", "cluster_ci", "icc", "pass_at_k")


def run(code: str) -> dict:
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    if out.returncode:
        raise RuntimeError(out.stderr)
    return json.loads(out.stdout.strip().splitlines()[-1])


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--store", help="directory of the zarr store (kept; reused if present)")
    args = parser.parse_args(argv)
    cases, reruns, chunk = (100_000, 20, 10_000) if args.quick else (10_000_000, 100, 100_000)
    scratch = None
    if args.store:
        store = Path(args.store)
    else:
        scratch = tempfile.mkdtemp(prefix="clusterstats-bench-")
        store = Path(scratch) / "runs.zarr"
    try:
        if not store.exists():
            start = time.perf_counter()
            run(
                WRITE.format(cases=cases, reruns=reruns, chunk=chunk, store=str(store))
                + "\nprint('{}')"
            )
            print(f"wrote {store} in {time.perf_counter() - start:.0f} s")
        size = sum(f.stat().st_size for f in store.rglob("*") if f.is_file())
        results: dict[str, list[dict]] = {task: [] for task in TASKS}
        for _ in range(args.repeats):  # interleaved, so drift hits all of them alike
            for task in TASKS:
                results[task].append(run(MEASURE.format(store=str(store), task=task)))
    finally:
        if scratch:
            shutil.rmtree(scratch, ignore_errors=True)
    print(
        f"dask scale-out benchmark: {cases:,} cases x {reruns} reruns = {cases * reruns:,} "
        f"float32 cells ({cases * reruns * 4 / 1e9:.1f} GB in memory, {size / 1e9:.2f} GB "
        f"zarr on disk), chunks of {chunk:,} cases; median of {args.repeats} fresh processes"
    )
    base = statistics.median(r["seconds"] for r in results["dask_mean"])
    for task in TASKS:
        seconds = statistics.median(r["seconds"] for r in results[task])
        peak = max(r["peak_bytes"] for r in results[task]) / 2**30
        ratio = seconds / base
        verdict = (
            ""
            if task == "dask_mean"
            else (f"  ratio {ratio:4.2f}x (target <= 3x: {'met' if ratio <= 3 else 'MISSED'})")
        )
        print(
            f"  {task:11s} {seconds:8.2f} s  peak memory {peak:5.2f} GiB "
            f"({'below' if peak < 1.5 * 1e9 / 2**30 else 'ABOVE'} 1.5 GB)  "
            f"value {results[task][0]['value']:.6f}{verdict}"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
