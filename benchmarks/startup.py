"""Start-up time: what ``import clusterstats`` and ``clusterstats --version`` / ``--help`` add.

What is measured: fresh interpreters (``python -c ...`` and ``python -m clusterstats ...``),
each run ``--repeats`` times, interleaved so that a noisy machine's drift hits all of them
alike:

* ``baseline``: ``import numpy, pandas, xarray`` (what a user of the accessors imports anyway);
* ``import``: the same, then ``import clusterstats``;
* ``--version`` and ``--help``: ``python -m clusterstats --version`` / ``--help``.

The children run with bytecode caching on (``PYTHONDONTWRITEBYTECODE`` removed from their
environment; the warm-up run writes the ``__pycache__`` files), as for an installed package,
whose installer compiles them: without them every run would time the compiling of the
package's sources too.

Reported: the median wall time of each, and the medians' differences: ``import`` −
``baseline`` (target ≤ 0.2 s) and ``--version`` / ``--help`` − ``import`` (target ≤ 0.1 s),
with the ratio of each median to the baseline's.

Usage::

    python benchmarks/startup.py            # 15 repeats
    python benchmarks/startup.py --quick    # 3 repeats, a smoke run
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time

COMMANDS = {
    "baseline": [sys.executable, "-c", "import numpy, pandas, xarray"],
    "import": [sys.executable, "-c", "import numpy, pandas, xarray, clusterstats"],
    "--version": [sys.executable, "-m", "clusterstats", "--version"],
    "--help": [sys.executable, "-m", "clusterstats", "--help"],
}


CACHING = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}


def timed(command: list[str]) -> float:
    started = time.perf_counter()
    subprocess.run(command, check=True, capture_output=True, env=CACHING)
    return time.perf_counter() - started


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="3 repeats")
    parser.add_argument("--repeats", type=int, default=15)
    args = parser.parse_args(argv)
    repeats = 3 if args.quick else args.repeats
    for command in COMMANDS.values():  # warm the file cache
        timed(command)
    times: dict[str, list[float]] = {name: [] for name in COMMANDS}
    for _ in range(repeats):
        for name, command in COMMANDS.items():
            times[name].append(timed(command))
    median = {name: statistics.median(values) for name, values in times.items()}
    base = median["baseline"]
    print(f"start-up, median of {repeats} fresh interpreters each")
    print(f"{'what':<10} {'median s':>9} {'ratio':>6}")
    for name, value in median.items():
        print(f"{name:<10} {value:>9.3f} {value / base:>6.2f}")
    print(f"import clusterstats adds {median['import'] - base:.3f} s (target <= 0.2)")
    for name in ("--version", "--help"):
        print(f"{name} adds {median[name] - median['import']:.3f} s to the import (target <= 0.1)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
