"""Coverage with many clusters: where the default of a continuous outcome may leave the bootstrap.

``method="auto"`` resolves to the studentized bootstrap (``bootstrap_t``) for continuous
outcomes and paired differences up to ``AUTO_BOOTSTRAP_MAX_CLUSTERS`` clusters and to CR2
above (``clusterstats.core.intervals.auto_method``): the bootstrap's cost grows with the
number of clusters G, while the skewness it corrects, which is what CR2 misses, fades as
``1/sqrt(G)``. This study measures CR2 (and ``bootstrap_t`` where it is cheap enough to run
thousands of times) from 100 to 5,000 clusters on the most skewed models of the two other
studies:

- eval scores (``studies/coverage.py``'s ``judge``, ``rouge`` and ``reward`` models, drawn by
  its ``draw_score_sums``) with one row per cluster, the cells where CR2 does worst there, and
  20 rows per cluster with size CV 0.8, at a cluster-rate ICC of 0.3;
- paired differences (``studies/coverage_paired.py``'s model, drawn by its ``draw_pair``) in
  its worst cell: means 0.08 vs 0.05, 20 items per cluster with size CV 0.8, ICC 0.6.

Every method runs on the same datasets by the code path of ``cluster_ci`` and
``paired_delta`` (``summarize_interval``, ``summarize_paired``).

Usage::

    python studies/coverage_many_clusters.py          # writes docs/coverage-many-clusters.md
    python studies/coverage_many_clusters.py --quick  # a smoke run, prints only
"""

from __future__ import annotations

import argparse
import itertools
import math
import multiprocessing
import sys
import time
import warnings
from pathlib import Path

import numpy as np
from coverage import SCORE_MODELS, Cell, draw_score_sums, score_mean  # studies/, beside this
from coverage_paired import draw_pair, library_interval

import clusterstats
from clusterstats.core.intervals import AUTO_BOOTSTRAP_MAX_CLUSTERS
from clusterstats.core.summary import summarize_interval

REPO = Path(__file__).resolve().parents[1]
BASE_SEED = 20261203
N_RESAMPLES = 999
BOOTSTRAP_UP_TO = 1000  # bootstrap_t is run up to this many clusters (its cost grows with G)
GOAL = 0.935  # the continuous-score goal of the coverage study
BATCH = 200  # datasets drawn at once (memory)


def run_cell(args: tuple[int, tuple, int]) -> tuple[int, dict]:
    index, (kind, outcome, k, m, cv), reps = args
    rng = np.random.default_rng([BASE_SEED, index])
    methods = ("cr2", "bootstrap_t") if k <= BOOTSTRAP_UP_TO else ("cr2",)
    covered = dict.fromkeys(methods, 0)
    widths: dict[str, list[float]] = {name: [] for name in methods}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", clusterstats.ClusterStatsWarning)
        if kind == "scores":
            truth = score_mean(outcome)
            for start in range(0, reps, BATCH):
                cell = Cell("scores", outcome, k, m, cv, truth, 0.3, min(BATCH, reps - start), ())
                for sums in draw_score_sums(rng, cell):
                    for name in methods:
                        s = summarize_interval(
                            sums,
                            estimand="pooled",
                            method=name,
                            confidence=0.95,
                            is_binary=False,
                            n_resamples=N_RESAMPLES,
                            rng=rng,
                        )
                        covered[name] += int(s.low <= truth <= s.high)
                        widths[name].append(s.high - s.low)
        else:
            truth = 0.08 - 0.05
            for _ in range(reps):
                a, b, codes = draw_pair(rng, k, m, cv, 0.08, 0.05, 0.6)
                for name in methods:
                    s = library_interval(a, b, codes, name, rng)
                    covered[name] += int(s.low <= truth <= s.high)
                    widths[name].append(s.high - s.low)
    return index, {name: (covered[name] / reps, float(np.median(widths[name]))) for name in methods}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--reps", type=int)
    parser.add_argument("--workers", type=int, default=2)
    args = parser.parse_args(argv)
    reps = args.reps or (200 if args.quick else 4000)
    ks = (100, 1000) if args.quick else (100, 300, 1000, 2000, 5000)
    cells = [
        ("scores", outcome, k, m, cv)
        for outcome, (m, cv), k in itertools.product(SCORE_MODELS, ((1, 0.0), (20, 0.8)), ks)
    ] + [("paired", "0.08 vs 0.05", k, 20, 0.8) for k in ks]
    start = time.perf_counter()
    with multiprocessing.Pool(args.workers) as pool:
        results = dict(pool.map(run_cell, [(i, c, reps) for i, c in enumerate(cells)]))
    seconds = time.perf_counter() - start

    table = [
        "| model | rows per cluster | " + " | ".join(f"K = {k:,}" for k in ks) + " |",
        "|---|---|" + "---|" * len(ks),
    ]
    for (kind, outcome), group in itertools.groupby(
        enumerate(cells), key=lambda item: (item[1][0], item[1][1])
    ):
        for (m, cv), row in itertools.groupby(group, key=lambda item: (item[1][3], item[1][4])):
            entries = []
            for i, _ in row:
                cr2 = results[i]["cr2"][0]
                boot = results[i].get("bootstrap_t")
                shown = f"{100 * cr2:.1f}"
                if boot is not None:
                    shown += f" / {100 * boot[0]:.1f}"
                entries.append(shown)
            what = f"paired {outcome}" if kind == "paired" else f"`{outcome}`"
            sizes = f"{m}" + ("" if cv == 0 else f", CV {cv:g}")
            table.append(f"| {what} | {sizes} | " + " | ".join(entries) + " |")
    above = [
        results[i]["cr2"][0] for i, c in enumerate(cells) if c[2] >= AUTO_BOOTSTRAP_MAX_CLUSTERS
    ]
    boots = [r["bootstrap_t"][0] for r in results.values() if "bootstrap_t" in r]
    mc_se = math.sqrt(0.95 * 0.05 / reps)
    worst_above = min(above) if above else math.nan
    page = "\n".join(
        [
            "# Coverage with many clusters",
            "",
            "<!-- generated by studies/coverage_many_clusters.py; do not edit by hand -->",
            "",
            f"Produced by `python studies/coverage_many_clusters.py` (base seed {BASE_SEED}, "
            f"{reps:,} datasets per cell, bootstrap with {N_RESAMPLES} resamples, "
            f"{seconds / 60:.1f} minutes) with clusterstats {clusterstats.__version__}. Monte "
            f"Carlo SE near 95%: {100 * mc_se:.2f} points. The models are those of the "
            "[coverage study](coverage.md) and the [paired study](coverage-paired.md), in "
            "the cells where CR2 does worst there; the script's docstring gives them.",
            "",
            'For a continuous outcome or a paired difference, `method="auto"` is the '
            f"studentized bootstrap `bootstrap_t` up to {AUTO_BOOTSTRAP_MAX_CLUSTERS:,} clusters "
            "and CR2 above. The bootstrap's cost grows in proportion to the number of clusters "
            "(`benchmarks/bootstrap.py` times it), and what it corrects, the skewness of the "
            "estimate that the symmetric CR2 interval ignores, fades as the number of "
            "clusters grows. This page "
            "measures how far: coverage in percent of CR2, and of `bootstrap_t` after the "
            f"slash where it was run (up to {BOOTSTRAP_UP_TO:,} clusters).",
            "",
            *table,
            "",
            f"With {AUTO_BOOTSTRAP_MAX_CLUSTERS:,} or more clusters CR2's worst cell here is "
            f"{100 * worst_above:.1f}% (the continuous-score goal is {100 * GOAL:.1f}%; "
            f"Monte Carlo SE {100 * mc_se:.2f}). Where it was run, `bootstrap_t` covers "
            f"{100 * min(boots):.1f}–{100 * max(boots):.1f}%: it never narrows CR2's interval, "
            "so where CR2 is already close to 95% it over-covers a little.",
            "",
        ]
    )
    print(page)
    if not args.quick:
        (REPO / "docs" / "coverage-many-clusters.md").write_text(page)
        print("wrote docs/coverage-many-clusters.md")
    return 0


if __name__ == "__main__":
    sys.exit(main())
