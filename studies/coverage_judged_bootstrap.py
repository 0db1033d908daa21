"""Coverage of ``judged_ci(method="bootstrap")`` beside the default ``method="cr2"``.

A few cells of ``studies/coverage_judged.py`` (whose populations, draws and labelling this
script imports, unchanged), each draw scored by:

* ``cr2``: the default, ``method="cr2"``, ``weight="auto"``;
* ``bootstrap``: ``method="bootstrap"`` with ``B = 999`` draws of the two-phase design
  (labelled and unlabelled clusters resampled apart), the weight re-tuned in each, the
  studentised interval (each draw's departure over its CR1 two-phase standard error),
  ``weight="auto"``;
* ``bootstrap percentile``: the same draws' percentile interval (``core.judged.bootstrap``
  with ``interval="percentile"``), not offered by ``judged_ci``: measured here to choose
  between the two.

Every interval goes through the library's code path after the adapter
(``build_judged_ci`` on the per-cluster sums, as ``coverage_judged.py`` builds them; the
percentile interval through ``core.judged.bootstrap`` on the bootstrap's own draws).

Cells (target ``population``, estimand ``pooled``):

* simulated (``coverage_judged.simulate``): ICC 0.3, judge-human correlation 0.5, the
  judge's bias varying by cluster; whole clusters: 10, 20 and 50 of 100 clusters labelled;
  rows inside clusters: 10, 20 and 50 clusters, 20% of each cluster's rows labelled (at
  least 2), so that 10, 20 and 50 clusters hold labels;
* HANNA (``coverage_judged.real_populations``): Coherence and Complexity, judged by
  ChatGPT and Beluga-13B, 96 prompts drawn with replacement, 10 and 30 of them labelled
  whole.

Each cell draws ``DRAWS`` (1,000) runs from a generator seeded by ``(SEED, crc32 of the cell's
key)``; the bootstrap's own draws come from a generator seeded by the run's index.

Usage::

    python studies/coverage_judged_bootstrap.py            # docs/coverage-judged-bootstrap.md, .csv
    python studies/coverage_judged_bootstrap.py --quick    # 40 runs per cell, prints only
    python studies/coverage_judged_bootstrap.py --render   # the page from the committed CSV
"""

from __future__ import annotations

import argparse
import csv
import math
import platform
import sys
import time
import warnings
import zlib
from pathlib import Path

import coverage_judged as cj  # studies/, beside this script
import numpy as np

import clusterstats
from clusterstats._options import JudgedOptions, Seed
from clusterstats.core import judged as core
from clusterstats.errors import ClusterStatsWarning
from clusterstats.stats.judged import _weight_choice, build_judged_ci

REPO = Path(__file__).resolve().parents[1]
CSV_PATH = REPO / "docs" / "coverage-judged-bootstrap.csv"
PAGE_PATH = REPO / "docs" / "coverage-judged-bootstrap.md"
SEED = 20261205
DRAWS = 1000
RESAMPLES = 999
CONFIDENCE = 0.95
METHODS = ("cr2", "bootstrap", "bootstrap percentile")
SCENARIO = cj.Scenario(0.3, 0.5, True, 0.2, 100, "bootstrap")
HANNA = (("HANNA Coherence", "ChatGPT"), ("HANNA Coherence", "Beluga-13B"))
HANNA += (("HANNA Complexity", "ChatGPT"), ("HANNA Complexity", "Beluga-13B"))


def cells(pops: list[cj.Population]) -> list[cj.Cell]:
    out = []
    for m in (10, 20, 50):
        scenario = cj.Scenario(0.3, 0.5, True, m / 100, 100, "bootstrap")
        out.append(cj.Cell("simulated", scenario.name, "simulated", "bootstrap", "clusters",
                           100, m, m / 100, scenario))  # fmt: skip
    for clusters in (10, 20, 50):
        scenario = cj.Scenario(0.3, 0.5, True, 0.2, clusters, "bootstrap")
        out.append(cj.Cell("simulated", scenario.name, "simulated", "bootstrap", "rows",
                           clusters, 0, 0.2, scenario))  # fmt: skip
    for index, pop in enumerate(pops):
        if (pop.name, pop.judge) in HANNA:
            for m in (10, 30):
                out.append(cj.Cell("real", pop.name, pop.judge, "real", "clusters",
                                   pop.clusters, m, m / pop.clusters, index=index))  # fmt: skip
    return out


def scored(cell: cj.Cell, codes, sizes, y, f, labelled, seed: int) -> dict[str, tuple]:
    """Each method's ``(estimate, low, high, se)`` on one run."""
    sums = cj.sums_of(codes, sizes.size, y, f, labelled)
    design = cj.design_of(sums, y, f, labelled)
    default = build_judged_ci(design, JudgedOptions(confidence=CONFIDENCE))
    options = JudgedOptions(
        method="bootstrap", confidence=CONFIDENCE, n_resamples=RESAMPLES, rng=Seed(seed)
    )
    boot = build_judged_ci(design, options)
    # the same draws again, their percentile interval: the same seeded generator
    indices = np.concatenate(list(core.draw_indices(sums, RESAMPLES, Seed(seed).generator())))
    percentile = core.bootstrap(
        sums,
        estimand="pooled",
        weight=_weight_choice(options, int(np.count_nonzero(sums.labelled))),
        confidence=CONFIDENCE,
        n_resamples=RESAMPLES,
        rng=Seed(seed).generator(),
        indices=indices,
        interval="percentile",
    ).fitted
    return {
        "cr2": (default.estimate, default.low, default.high, default.se),
        "bootstrap": (boot.estimate, boot.low, boot.high, boot.se),
        "bootstrap percentile": (percentile.estimate, percentile.lower, percentile.upper, boot.se),
    }


def run_cell(cell: cj.Cell, pops: list[cj.Population], draws: int) -> list[dict]:
    rng = np.random.default_rng([SEED, zlib.crc32(cell.key.encode())])
    truth = cj.MU if cell.source == "simulated" else float(pops[cell.index].human.mean())
    # per method: covered, below, above, width, width / cr2's, se, error
    tally = {method: np.zeros(7) for method in METHODS}
    start = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ClusterStatsWarning)
        for draw in range(draws):
            if cell.source == "simulated":
                codes, sizes, y, f = cj.simulate(rng, cell.scenario)
            else:
                codes, sizes, y, f = cj.resample(rng, pops[cell.index], cell.clusters)
            labelled = cj.label(rng, cell, codes, sizes)
            found = scored(cell, codes, sizes, y, f, labelled, draw)
            base = found["cr2"][2] - found["cr2"][1]
            for method, (estimate, low, high, se) in found.items():
                tally[method] += (
                    low <= truth <= high, truth < low, truth > high, high - low,
                    (high - low) / base, se, estimate - truth,
                )  # fmt: skip
    seconds = time.perf_counter() - start
    rows = []
    for method, counts in tally.items():
        p = counts[0] / draws
        rows.append(
            {
                "source": cell.source,
                "population": cell.population,
                "judge": cell.judge,
                "design": cell.design,
                "C": cell.clusters,
                "labelled_clusters": cell.labelled_clusters,
                "method": method,
                "draws": draws,
                "coverage": round(100 * p, 2),
                "mc_se": round(100 * math.sqrt(max(p * (1 - p), 1e-12) / draws), 2),
                "miss_below": round(100 * counts[1] / draws, 2),
                "miss_above": round(100 * counts[2] / draws, 2),
                "mean_width": round(counts[3] / draws, 5),
                "width_vs_cr2": round(counts[4] / draws, 4),
                "mean_se": round(counts[5] / draws, 5),
                "mean_error": round(counts[6] / draws, 5),
                "cell_seconds": round(seconds, 1),
            }
        )
    return rows


def render(rows: list[dict], header: str) -> str:
    lines = [
        "# Judge and humans: the bootstrap beside CR2",
        "",
        "<!-- generated by studies/coverage_judged_bootstrap.py: edit the script, not this "
        "page -->",
        "",
        header,
        "",
        '`judged_ci(method="bootstrap")` draws the labelled and the unlabelled clusters apart '
        f"({RESAMPLES} draws here), re-tunes the judge's weight in each draw and takes the "
        "studentised interval (each draw's departure over its own two-phase standard "
        "error); `bootstrap percentile` is the same draws' percentile interval, measured "
        "here but not offered. "
        "Every interval is of the population's pooled mean with the default "
        '`weight="auto"` (cross-fitted below 50 labelled clusters), on the same runs as '
        'the default `method="cr2"`. Coverage and misses are in percent, with the Monte '
        "Carlo standard error of the coverage; the width is the mean width over the runs, "
        "beside it the mean ratio to CR2's width on the same run.",
        "",
        "By labelled clusters, the range over the cells of each method's coverage and of its "
        "width against CR2's:",
        "",
        *summary(rows),
        "",
        "| population | judge | labelled | clusters | method | coverage | MC SE | below | "
        "above | width | ÷ CR2 |",
        "|---|---|---|---:|---|---:|---:|---:|---:|---:|---:|",
    ]
    for r in rows:
        where = "whole clusters" if r["design"] == "clusters" else "rows inside"
        lines.append(
            f"| {r['population']} | {r['judge']} | {where} | "
            f"{r['labelled_clusters']} of {r['C']} | {r['method']} | {float(r['coverage']):.1f} | "
            f"{float(r['mc_se']):.1f} | {float(r['miss_below']):.1f} | "
            f"{float(r['miss_above']):.1f} | {float(r['mean_width']):.4f} | "
            f"{float(r['width_vs_cr2']):.3f} |"
        )
    lines += [
        "",
        "Every cell is in [coverage-judged-bootstrap.csv](coverage-judged-bootstrap.csv); the "
        "populations and the labelling are those of [the judged coverage "
        "study](coverage-judged.md).",
        "",
    ]
    return "\n".join(lines)


def summary(rows: list[dict]) -> list[str]:
    """One line per number of labelled clusters: each method's range of coverage and width."""
    lines = []
    for m in sorted({int(r["labelled_clusters"]) for r in rows}):
        parts = []
        for method in METHODS:
            here = [r for r in rows if int(r["labelled_clusters"]) == m and r["method"] == method]
            cover = [float(r["coverage"]) for r in here]
            ratio = [float(r["width_vs_cr2"]) for r in here]
            part = f"{method} {min(cover):.1f}–{max(cover):.1f}%"
            if method != "cr2":
                part += f" (width {min(ratio):.2f}–{max(ratio):.2f} × CR2's)"
            parts.append(part)
        lines.append(f"- {m} labelled clusters ({len(here)} cells): " + "; ".join(parts) + ".")
    return lines


def header_of(seconds: float, n_cells: int) -> str:
    return (
        f"Produced by `python studies/coverage_judged_bootstrap.py` (seed {SEED}) with "
        f"clusterstats {clusterstats.__version__}, numpy {np.__version__}, Python "
        f"{platform.python_version()}, in {seconds / 60:.1f} minutes on one core: {n_cells} "
        f"cells of {DRAWS} runs each."
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--render", action="store_true")
    args = parser.parse_args(argv)
    if args.render:
        with CSV_PATH.open() as f:
            rows = list(csv.DictReader(f))
        text = PAGE_PATH.read_text().split("\n")
        header = next(line for line in text if line.startswith("Produced by"))
        PAGE_PATH.write_text(render(rows, header))
        return 0
    pops = cj.real_populations()
    cell_list = cells(pops)
    draws = 40 if args.quick else DRAWS
    start = time.perf_counter()
    rows = []
    for cell in cell_list:
        found = run_cell(cell, pops, draws)
        rows += found
        for r in found:
            print(
                f"{r['population']:45} {r['judge']:11} {r['design']:8} "
                f"{r['labelled_clusters']:3} {r['method']:11} {r['coverage']:6.1f} "
                f"± {r['mc_se']:.1f}  width {r['mean_width']:.4f} ({r['width_vs_cr2']:.3f})  "
                f"{r['cell_seconds']}s",
                flush=True,
            )
    seconds = time.perf_counter() - start
    if args.quick:
        return 0
    with CSV_PATH.open("w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    PAGE_PATH.write_text(render(rows, header_of(seconds, len(cell_list))))
    print(f"wrote {PAGE_PATH.relative_to(REPO)} in {seconds / 60:.1f} minutes")
    return 0


if __name__ == "__main__":
    sys.exit(main())
