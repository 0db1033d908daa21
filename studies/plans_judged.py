"""Do ``judged_plan``'s label counts deliver what they promise on real populations?

A plan reads a pilot (a judge's score on every row, human labels on some) and recommends the
cheapest labelling design (``r`` labelled rows in each of ``m`` clusters drawn at random from
the run's ``C``, or whole clusters) whose projected interval reaches a half-width, or whose
test reaches a power. This study buys exactly that design on fresh runs and measures what it
delivers.

Populations: HANNA (6 criteria x 5 judges; 96 prompts of 11 stories) and Topical-Chat (4
criteria, the UniEval judge; 60 dialogue contexts of 6 responses), each a finite population
of clusters, read as ``studies/coverage_judged.py`` reads them. The population's value is the
mean of its ``human_score`` over all its clusters.

For each population and pilot design (a cell, its generator seeded by ``(SEED, crc32 of the
cell's key)``), ``PILOTS`` pilots, each:

1. a run of ``C`` clusters drawn WITH replacement (``C`` the population's cluster count; a
   cluster drawn twice is two clusters), labelled by the pilot design: ``clusters``, every
   row of 10 clusters chosen at random; ``rows``, 2 rows at random in each of 15 clusters
   chosen at random; and a reference, ``large``, every row of 60% of the run's clusters (far
   more than any plan asks: what is left of the misses once the pilot's noise is small);
2. the pilot's own interval, ``judged_ci(pilot, method="cr1")`` (its default weight,
   cross-fitted under 50 labelled clusters), of half-width ``h`` (for ``large``, that of a
   ``clusters`` pilot of the same run, so that the goals are the same size; the CSV's
   ``pilot_weight`` is this interval's);
3. two plans, ``judged_plan`` with its defaults (cost 1 per label, 0 per cluster, 95%,
   pooled, population target): a width plan, ``target_half_width = 0.75 h``; a power plan,
   ``effect = h`` at power 0.8. A plan no design reaches is counted, not delivered;
4. ``DELIVERIES`` deliveries of the recommended design: a fresh run of ``C`` clusters drawn
   with replacement, ``m`` of them chosen at random, ``min(r, n_c)`` rows at random in each
   labelled, and ``judged_ci(method="cr1", weight="tuned")`` (the plan's construction,
   through ``build_judged_ci`` on the per-cluster sums as ``coverage_judged.py`` builds
   them). Recorded: its half-width, whether it covers the population's value, and (power
   plans) whether it excludes ``value - effect``: the test of ``H0: mean = value - effect``
   at 5%, two-sided, which the plan's power is for (a true difference of ``effect``).

Measured per cell (the pilots' deliveries pooled): the realised half-width against the
promised one (the target; for power plans, the recommended design's projected half-width),
as median and mean of ``realised / promised``; the share of deliveries at or under the
promise; the coverage; for power plans the realised power against the projected power of the
recommended design. The issue's goal, "the label count a plan recommends delivers its promised
width or power within 5 points", is read as: median ratio at most 1.05, and realised power at
least the projected power less 5 points.

Usage::

    python studies/plans_judged.py             # writes docs/plans-judged.md, .csv
    python studies/plans_judged.py --quick     # two populations, 2 pilots, 20 deliveries
    python studies/plans_judged.py --render    # the page again from the committed CSV
"""

from __future__ import annotations

import argparse
import csv
import math
import platform
import statistics
import sys
import time
import warnings
import zlib
from pathlib import Path

import numpy as np
import pandas as pd
from coverage_judged import Population, design_of, real_populations, resample, sums_of

import clusterstats
from clusterstats._options import JudgedOptions
from clusterstats.errors import ClusterStatsWarning
from clusterstats.stats.judged import build_judged_ci

REPO = Path(__file__).resolve().parents[1]
CSV_PATH = REPO / "docs" / "plans-judged.csv"
PAGE_PATH = REPO / "docs" / "plans-judged.md"
SEED = 20261207
CONFIDENCE = 0.95
PILOTS, DELIVERIES = 5, 200
#: Pilot designs: (name, labelled clusters, labelled rows per cluster; inf = whole clusters).
#: ``large`` (labelled clusters None: ``LARGE_SHARE`` of the run's) is a reference: a pilot
#: far bigger than any plan needs, set the goals of a ``clusters`` pilot of the same run, to
#: show what is left of the misses once the pilot's own noise is small.
PILOT_DESIGNS = (("clusters", 10, math.inf), ("rows", 15, 2), ("large", None, math.inf))
LARGE_SHARE = 0.6
#: The width plan's target, a share of the pilot's own half-width.
TARGET_SHARE = 0.75
POWER = 0.8
#: The goal's tolerance: a ratio of 1.05, or 5 points of power.
SLACK = 0.05
PLAN_OPTIONS = JudgedOptions(method="cr1", weight="tuned", confidence=CONFIDENCE)


def label(rng: np.random.Generator, sizes: np.ndarray, clusters: int, per_cluster: float):
    """Labelled rows: ``per_cluster`` rows (at most all) at random in each of ``clusters``
    clusters chosen at random; rows are stored cluster by cluster."""
    codes = np.repeat(np.arange(sizes.size), sizes)
    chosen = np.zeros(sizes.size, dtype=bool)
    chosen[rng.choice(sizes.size, clusters, replace=False)] = True
    # a random order inside each cluster: its first r rows are labelled
    order = np.lexsort((rng.random(codes.size), codes))
    starts = np.concatenate([[0], np.cumsum(sizes)[:-1]])
    position = np.arange(codes.size) - starts[codes]
    labelled = np.zeros(codes.size, dtype=bool)
    labelled[order] = position < np.minimum(sizes, per_cluster)[codes]
    return labelled & chosen[codes]


def deliver(rng: np.random.Generator, pop: Population, design, draws: int, value: float,
            shifted: float) -> dict[str, np.ndarray]:  # fmt: skip
    """``draws`` fresh runs labelled by ``design``: half-widths, covered, and whether each
    interval excludes ``shifted``."""
    half, covered, rejects = np.empty(draws), np.empty(draws, bool), np.empty(draws, bool)
    for k in range(draws):
        codes, sizes, y, f = resample(rng, pop, pop.clusters)
        labelled = label(rng, sizes, design.clusters, design.per_cluster)
        sums = sums_of(codes, sizes.size, y, f, labelled)
        found = build_judged_ci(design_of(sums, y, f, labelled), PLAN_OPTIONS)
        half[k] = (found.high - found.low) / 2
        covered[k] = found.low <= value <= found.high
        rejects[k] = not found.low <= shifted <= found.high
    return {"half": half, "covered": covered, "rejects": rejects}


def run_cell(pop: Population, pilot_design: tuple, pilots: int, draws: int) -> list[dict]:
    """Every pilot of one population and pilot design, its two plans, and their deliveries."""
    name, pilot_clusters, pilot_rows = pilot_design
    key = f"{pop.name}|{pop.judge}|{name}"
    rng = np.random.default_rng([SEED, zlib.crc32(key.encode())])
    value = float(pop.human.mean())  # equal clusters: the pooled mean
    rows = []
    for pilot in range(pilots):
        codes, sizes, y, f = resample(rng, pop, pop.clusters)
        many = round(LARGE_SHARE * pop.clusters) if pilot_clusters is None else pilot_clusters
        labelled = label(rng, sizes, many, pilot_rows)
        frame = pd.DataFrame({"cluster": codes, "human": np.where(labelled, y, np.nan),
                              "judge": f})  # fmt: skip
        # the goals are set by the pilot's own interval; the reference's by a 10-cluster one's
        small = (
            frame
            if pilot_clusters
            else frame.assign(human=np.where(label(rng, sizes, *PILOT_DESIGNS[0][1:]), y, np.nan))
        )
        own = clusterstats.judged_ci(small, "human", "cluster", judge="judge", method="cr1")
        h = (own.high - own.low) / 2
        goals = {"width": {"target_half_width": TARGET_SHARE * h}, "power": {"effect": h}}
        for goal, asked in goals.items():
            start = time.perf_counter()
            plan = clusterstats.judged_plan(frame, "human", "cluster", judge="judge", **asked)
            row = {
                "population": pop.name,
                "judge": pop.judge,
                "pilot_design": name,
                "pilot": pilot,
                "goal": goal,
                "value": round(value, 6),
                "pilot_half_width": round(h, 6),
                "pilot_weight": round(own.weight, 4),
                "plan_weight": round(plan.weight, 4),
                "target": round(TARGET_SHARE * h if goal == "width" else h, 6),
                "floor": round(plan.floor_half_width, 6),
                "feasible": plan.recommended is not None,
            }
            if plan.recommended is None:
                rows.append(row)
                continue
            best = plan.designs[plan.recommended]
            shifted = value - h  # the power plan's H0 a true difference of `effect` away
            found = deliver(rng, pop, best, draws, value, shifted)
            promised = TARGET_SHARE * h if goal == "width" else best.half_width
            if promised > 0:
                ratio = found["half"] / promised
            else:  # a projected half-width of 0: any width past it is infinitely past it
                ratio = np.where(found["half"] > 0, math.inf, 1.0)
            row |= {
                "per_cluster": best.per_cluster,
                "clusters": best.clusters,
                "labels": round(best.labels),
                "projected_half_width": round(best.half_width, 6),
                "projected_power": round(best.power, 4) if goal == "power" else "",
                "humans_alone_labels": round(plan.humans_alone_labels, 1),
                "deliveries": draws,
                "median_half_width": round(float(np.median(found["half"])), 6),
                "median_ratio": round(float(np.median(ratio)), 4),
                "mean_ratio": round(float(np.mean(ratio)), 4),
                "at_or_under": round(float(np.mean(ratio <= 1)), 4),
                "coverage": round(float(np.mean(found["covered"])), 4),
                "zero_width": round(float(np.mean(found["half"] == 0)), 4),
                "power": round(float(np.mean(found["rejects"])), 4) if goal == "power" else "",
                "seconds": round(time.perf_counter() - start, 2),
            }
            rows.append(row)
    return rows


def run(pops: list[Population], *, quick: bool) -> list[dict]:
    pilots, draws = (2, 20) if quick else (PILOTS, DELIVERIES)
    rows = []
    start = time.perf_counter()
    chosen = [pops[0], pops[-1]] if quick else pops
    with warnings.catch_warnings():
        # few labelled clusters and judges on other scales are what the pilots are
        warnings.simplefilter("ignore", ClusterStatsWarning)
        for done, pop in enumerate(chosen, start=1):
            for pilot_design in PILOT_DESIGNS:
                rows += run_cell(pop, pilot_design, pilots, draws)
            minutes = (time.perf_counter() - start) / 60
            print(f"{done}/{len(chosen)} {pop.name}, {pop.judge} ({minutes:.1f} min)",
                  file=sys.stderr)  # fmt: skip
    return rows


# -- the page ---------------------------------------------------------------------------------

TEXT_FIELDS = ("population", "judge", "pilot_design", "goal", "feasible")


def read_rows(path: Path) -> list[dict]:
    with open(path, newline="") as f:
        rows = list(csv.DictReader(f))
    for r in rows:
        r["feasible"] = r["feasible"] == "True"
        for key, value in r.items():
            if key not in TEXT_FIELDS and value != "":
                r[key] = float(value)
    return rows


def cell_summary(rows: list[dict]) -> list[dict]:
    """Per population, pilot design and goal: the feasible pilots' deliveries, weighted
    equally per pilot (each has as many)."""
    cells: dict[tuple, list[dict]] = {}
    for r in rows:
        cells.setdefault((r["population"], r["judge"], r["pilot_design"], r["goal"]), []).append(r)
    out = []
    for (population, judge, design, goal), group in cells.items():
        done = [r for r in group if r["feasible"]]
        entry = {
            "population": population,
            "judge": judge,
            "pilot_design": design,
            "goal": goal,
            "pilots": len(group),
            "infeasible": len(group) - len(done),
        }
        if done:

            def mean(key: str, done: list[dict] = done) -> float:
                return statistics.fmean(float(r[key]) for r in done)

            entry |= {
                "labels": statistics.median(r["labels"] for r in done),
                "designs": ", ".join(
                    f"{r['clusters']:.0f}×{_rows(float(r['per_cluster']))}" for r in done
                ),
                "median_ratio": statistics.median(r["median_ratio"] for r in done),
                "mean_ratio": mean("mean_ratio"),
                "at_or_under": mean("at_or_under"),
                "coverage": mean("coverage"),
            }
            if goal == "power":
                entry |= {"projected_power": mean("projected_power"), "power": mean("power")}
                entry["gap"] = entry["power"] - entry["projected_power"]
            entry["meets"] = entry["median_ratio"] <= 1 + SLACK and (
                goal == "width" or entry["gap"] >= -SLACK
            )
        out.append(entry)
    return out


def _pct(x: float) -> str:
    return f"{100 * x:.1f}"


def _ratio(x: float) -> str:
    # a plan that projected a half-width of 0 promised what no delivery can meet
    return "∞" if math.isinf(x) else f"{x:.3f}"


def _rows(r: float) -> str:
    return "all" if math.isinf(r) else f"{r:g}"


def cells_table(cells: list[dict], source: str) -> list[str]:
    out = [
        "| criterion | judge | pilot | goal | labels (median) | designs (m × r) | median ratio "
        "| mean ratio | ≤ promise % | coverage % | power: projected → realised % | meets |",
        "|---|---|---|---|---:|---|---:|---:|---:|---:|---:|---|",
    ]
    for c in cells:
        if not c["population"].startswith(source):
            continue
        criterion = c["population"].removeprefix(source).strip()
        if "median_ratio" not in c:
            out.append(f"| {criterion} | {c['judge']} | {c['pilot_design']} | {c['goal']} "
                       f"| no design reaches ({c['infeasible']} of {c['pilots']} pilots) "
                       "| | | | | | | |")  # fmt: skip
            continue
        power = f"{_pct(c['projected_power'])} → {_pct(c['power'])}" if c["goal"] == "power" else ""
        skipped = (
            f" ({c['infeasible']} of {c['pilots']} pilots infeasible)" if c["infeasible"] else ""
        )
        out.append(
            f"| {criterion} | {c['judge']} | {c['pilot_design']} | {c['goal']}{skipped} "
            f"| {c['labels']:.0f} | {c['designs']} "
            f"| {_ratio(c['median_ratio'])} | {_ratio(c['mean_ratio'])} "
            f"| {_pct(c['at_or_under'])} | {_pct(c['coverage'])} "
            f"| {power} | {'yes' if c['meets'] else '**no**'} |"
        )
    return out


#: The pilots a study of plans is about; ``large`` is a reference, reported beside them.
STUDIED = ("clusters", "rows")


def summary(rows: list[dict], cells: list[dict]) -> list[str]:
    """The headline figures over the studied pilot designs, then each design's."""
    rows = [r for r in rows if r["pilot_design"] in STUDIED]
    every = [c for c in cells if "median_ratio" in c]
    done = [c for c in every if c["pilot_design"] in STUDIED]
    ratios = [c["median_ratio"] for c in done]
    gaps = [c["gap"] for c in done if c["goal"] == "power"]
    widths = [c["median_ratio"] for c in done if c["goal"] == "width"]
    pilots_ratio = [r["median_ratio"] for r in rows if r["feasible"]]
    failing = [c for c in done if not c["meets"]]
    infeasible = sum(1 for r in rows if not r["feasible"])
    zero = sum(1 for r in rows if r["feasible"] and float(r["projected_half_width"]) == 0)
    out = [
        "Over the pilots `clusters` and `rows` (the reference `large` is in its own lines "
        "below and in the tables):",
        "",
        f"- Cells (population × pilot design × goal): {len(done)}; plans: {len(rows)}, of "
        f"which {infeasible} found no design reaching their goal (not delivered).",
        f"- Realised ÷ promised half-width, median per cell: worst {_ratio(max(ratios))}, median "
        f"{_ratio(statistics.median(ratios))}, best {_ratio(min(ratios))}; per plan (one "
        f"pilot): worst {_ratio(max(pilots_ratio))}, median "
        f"{_ratio(statistics.median(pilots_ratio))}.",
        f"- Width plans alone (the promise is the target, never 0), median per cell: worst "
        f"{_ratio(max(widths))}, median {_ratio(statistics.median(widths))}.",
        f"- Plans whose recommended design projected a half-width of 0 (every spread but the "
        f"judge's estimated at 0, so 2 whole clusters look enough): {zero} of "
        f"{len(pilots_ratio)}.",
        f"- Share of deliveries at or under the promise, per cell: median "
        f"{_pct(statistics.median(c['at_or_under'] for c in done))}%, worst "
        f"{_pct(min(c['at_or_under'] for c in done))}%.",
        f"- Coverage of the population's value, per cell: median "
        f"{_pct(statistics.median(c['coverage'] for c in done))}%, worst "
        f"{_pct(min(c['coverage'] for c in done))}%.",
    ]
    if gaps:
        out.append(
            f"- Power, realised − projected, per cell: worst {100 * min(gaps):+.1f} points, "
            f"median {100 * statistics.median(gaps):+.1f}, best {100 * max(gaps):+.1f}."
        )
    out.append(
        f"- Cells meeting the goal (median ratio ≤ {1 + SLACK:.2f}, power gap ≥ "
        f"−{100 * SLACK:.0f} points): {len(done) - len(failing)} of {len(done)}."
    )
    for design in (d[0] for d in PILOT_DESIGNS):
        for goal in ("width", "power"):
            part = [c for c in every if c["pilot_design"] == design and c["goal"] == goal]
            if part:
                met = sum(c["meets"] for c in part)
                middle = statistics.median(c["median_ratio"] for c in part)
                gap = (
                    f"; power gap median {100 * statistics.median(c['gap'] for c in part):+.1f}"
                    f" points, worst {100 * min(c['gap'] for c in part):+.1f}"
                    if goal == "power"
                    else ""
                )
                out.append(
                    f"    - pilot {design}, {goal} plans: {met} of {len(part)} meet it; "
                    f"median ratio {_ratio(middle)}{gap}"
                )
    return out


#: A plan recommending at most this many labelled clusters leaves its interval 1 or 2 degrees
#: of freedom: the degenerate plans a pilot with no between-cluster spread in view makes.
FEW_CLUSTERS = 3


def by_size_table(rows: list[dict]) -> list[str]:
    """Plans pooled by pilot design, goal, and whether they recommend few labelled clusters:
    what separates the degenerate plans from the rest."""
    out = [
        "| pilot | goal | labelled clusters | plans | median ratio | ≤ promise % | coverage % "
        "| power: projected → realised % |",
        "|---|---|---|---:|---:|---:|---:|---:|",
    ]
    for design in (d[0] for d in PILOT_DESIGNS):
        for goal in ("width", "power"):
            for few in (False, True):
                part = [
                    r
                    for r in rows
                    if r["feasible"]
                    and r["pilot_design"] == design
                    and r["goal"] == goal
                    and (float(r["clusters"]) <= FEW_CLUSTERS) == few
                ]
                if not part:
                    continue

                def mean(key: str, part: list[dict] = part) -> float:
                    return statistics.fmean(float(r[key]) for r in part)

                power = (
                    f"{_pct(mean('projected_power'))} → {_pct(mean('power'))}"
                    if goal == "power"
                    else ""
                )
                size = f"≤ {FEW_CLUSTERS}" if few else f"> {FEW_CLUSTERS}"
                middle = statistics.median(float(r["median_ratio"]) for r in part)
                out.append(
                    f"| {design} | {goal} | {size} | {len(part)} | {_ratio(middle)} "
                    f"| {_pct(mean('at_or_under'))} | {_pct(mean('coverage'))} | {power} |"
                )
    return out


def render(rows: list[dict]) -> str:
    cells = cell_summary(rows)
    lines = [
        "# Do judged plans deliver? (real populations)",
        "",
        "`judged_plan` reads a pilot and recommends how many human labels to buy, in how many "
        "clusters, for a target half-width or a power. This page buys exactly the recommended "
        "labels on fresh runs from real populations and measures what they deliver. "
        "Generated by `studies/plans_judged.py`; the figures are in "
        "[plans-judged.csv](plans-judged.csv), one row per plan.",
        "",
        "## Method",
        "",
        "- Populations: HANNA (6 criteria × 5 judges, 96 prompts of 11 stories) and "
        "Topical-Chat (4 criteria, the UniEval judge, 60 dialogue contexts of 6 responses); "
        "the population's value is the mean of its human scores over all its clusters.",
        f"- A run draws C clusters with replacement, C the population's count. {PILOTS} pilots "
        "per population and pilot design: human labels on every row of 10 random clusters "
        "(`clusters`), or on 2 random rows in each of 15 random clusters (`rows`). A "
        f"reference, `large`: every row of {LARGE_SHARE:.0%} of the run's clusters, far more "
        "than any plan asks, its goals set by a `clusters` pilot of the same run (what is "
        "left of the misses once the pilot's noise is small).",
        '- The pilot\'s own `judged_ci(method="cr1")` has half-width h (default weight: '
        "cross-fitted, under 50 labelled clusters). Two plans, `judged_plan` at its defaults "
        "(cost 1 per label, 0 per cluster, 95%, pooled, population target): a **width** plan "
        f"with `target_half_width` = {TARGET_SHARE} h, and a **power** plan with "
        f"`effect` = h at power {POWER}.",
        f"- Each recommended design is delivered {DELIVERIES} times: a fresh run, m random "
        "clusters, r random rows in each (or whole clusters), and "
        '`judged_ci(method="cr1", weight="tuned")`, the plan\'s construction. The '
        "promise is the target half-width (width plans) or the recommended design's projected "
        "half-width and power (power plans). Power is the share of deliveries whose interval "
        "excludes value − h: the two-sided 5% test of H0: mean = value − h, a true "
        "difference of h.",
        f'- Goal (the issue\'s "within 5 points"): the median realised ÷ promised half-width '
        f"at most {1 + SLACK:.2f}, and the realised power at least the projected less "
        f"{100 * SLACK:.0f} points. Cells pool their pilots' deliveries: the pilot's own noise "
        "(its weight, its spreads, its h) is in the result.",
        "",
        "## Summary",
        "",
        *summary(rows, cells),
        "",
        "### By the size of the recommended design",
        "",
        "Every plan, pooled (ratio: the median over plans of each plan's median realised ÷ "
        "promised half-width; the shares and powers are means over plans). Plans label at "
        "least 10 clusters and take the labels' spreads at their 90% upper confidence "
        "limits (`pilot_limit=0.9`; the between-cluster spread's by the modified "
        "large-sample bound): before both, a pilot whose labelled rows showed little "
        "between-cluster spread of the residual projected whole clusters to cost little more "
        "than the judge's spread and recommended 3 or fewer, an interval on 1 or 2 degrees of "
        "freedom (46 of 136 cells met the goal then; with 80% limits and no modified bound, "
        "130 of 136 with about 12% fewer labels).",
        "",
        *by_size_table(rows),
        "",
        "## HANNA",
        "",
        *cells_table(cells, "HANNA"),
        "",
        "## Topical-Chat",
        "",
        *cells_table(cells, "Topical-Chat"),
        "",
        "## Reproduce",
        "",
        "```",
        "python studies/plans_judged.py",
        "```",
        "",
    ]
    # the plans' and their deliveries' own time, which the CSV keeps for --render
    seconds = sum(float(r["seconds"]) for r in rows if r["feasible"])
    lines += [
        f"Plans and deliveries took {seconds / 60:.1f} min on one core "
        f"(Python {platform.python_version()}, clusterstats {clusterstats.__version__}).",
        "",
    ]
    return "\n".join(lines)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="2 populations, small, prints")
    parser.add_argument("--render", action="store_true", help="the page from the committed CSV")
    args = parser.parse_args(argv)
    if not args.render:
        start = time.perf_counter()
        rows = run(real_populations(), quick=args.quick)
        print(f"run time {(time.perf_counter() - start) / 60:.1f} min", file=sys.stderr)
        if args.quick:
            print(render(rows))
            return 0
        with open(CSV_PATH, "w", newline="") as f:
            writer = csv.DictWriter(f, fieldnames=list(dict.fromkeys(k for r in rows for k in r)))
            writer.writeheader()
            writer.writerows(rows)
    # the page is always rendered from the CSV, so that --render gives it back byte for byte
    page = render(read_rows(CSV_PATH))
    PAGE_PATH.write_text(page)
    print(page)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
