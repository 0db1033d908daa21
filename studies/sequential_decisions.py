"""Watching a run on real data: do the confidence sequences hold at every look, how soon do
they decide, and what does stopping a benchmark early save?

The sequences are the library's own (``clusterstats.core.sequential.betting_bounds``, the
arithmetic of ``confidence_sequence``), by method and target:

* **methods**: ``betting_mixture`` (the default: five bet schedules tuned to 50, 100, 200,
  400 and 800 clusters, their wealths averaged, truncated at c = 0.9) and
  ``betting_predictable`` (Waudby-Smith & Ramdas's predictable plug-in bets, c = 0.5);
* **targets**: ``population`` (clusters drawn with replacement from a bundled dataset, the
  dataset's own value the truth) and ``benchmark`` (every cluster of the dataset once, in a
  uniformly random order, without replacement; the full-run score the truth).

Populations: every bundled dataset and natural grouping with a known outcome range (the
MMLU-Pro, BBH, CRUXEval and tau-bench rates, pass@k and pass^k, the MMLU-Pro and BBH paired
differences, from ``coverage_real_data.populations``) and RepoQA by repository for its best,
median and worst system. Both estimands where cluster sizes vary. Simulated grids:
beta-binomial clusters with equal (10), uniform (1-40) and heavy-tailed (lognormal, median
20, up to 1,000) sizes, ICC 0.05 / 0.2 / 0.5 and rates 0.05 / 0.3 / 0.5.

Measured in every cell, over ``--runs`` runs with fixed seeds:

* **miss**: the share of runs whose interval excludes the truth at any look from the 20th
  cluster on (time-uniform; goal at most 5% plus Monte Carlo error); **false pass**: the
  share whose lower bound is ever above the truth at any look (a gate at the truth passing;
  goal at most 2.5%);
* **decisions** (real data): for a gate at ``truth - gap`` (gaps 0.10, 0.07, 0.05), the
  clusters until the lower bound first reaches it: the median over runs (undecided runs
  count as never), the share decided within the stream, and the **price of watching**, that
  median divided by the clusters a fixed 95% t interval needs for its half-width to reach
  the gap (``t_{.975, n-1} sd / sqrt(n)``, with ``sd`` the population's standard deviation
  of the cluster influence values: cluster means, or ``(S - m n) / nbar``); goal at most 2x
  on the populations of 200 clusters or more;
* **saved** (benchmark target, MMLU-Pro by source): the share of questions a run stopped at
  the first look deciding a gate at the full-run score minus 0.07 never had to run; the
  median and interquartile range over orders.

Every real-data cell whose miss rate is above 5% is run again with ``--confirm`` runs (2,000)
on fresh seeds, and both figures are shown: a rate a little above 5% over 400 runs is within
the Monte Carlo error of a valid sequence, and the confirmation says which it is.

Each cell is written to ``studies/cache/sequential_decisions.jsonl`` as it finishes; a rerun
skips the cells already there (``--fresh`` starts again).

Usage::

    python studies/sequential_decisions.py          # writes docs/coverage-sequential-decisions.md
    python studies/sequential_decisions.py --quick  # a smoke run, prints only
"""

from __future__ import annotations

import argparse
import itertools
import json
import math
import platform
import sys
import time
from pathlib import Path

import numpy as np
from scipy import special

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(HERE))

from coverage_real_data import Population, populations, reduce_population  # noqa: E402

import clusterstats  # noqa: E402
from clusterstats.core.sequential import SEQUENCE_METHODS, betting_bounds  # noqa: E402

PAGE = REPO / "docs" / "coverage-sequential-decisions.md"
CACHE = HERE / "cache" / "sequential_decisions.jsonl"
DEFAULT = "betting_mixture"
GAPS = (0.10, 0.07, 0.05)
FROM_LOOK = 20
SAVED_GAP = 0.07


def repoqa_populations() -> list[Population]:
    """RepoQA by repository: the best, the median and the worst system by pass rate."""
    data = clusterstats.datasets.load("repoqa_snf")
    rates = data.groupby("system")["correct"].mean().sort_values()
    picks = [rates.index[-1], rates.index[len(rates) // 2], rates.index[0]]
    out = []
    for system in picks:
        rows = data[data["system"] == system]
        name = f"RepoQA {system.split('/')[-1]}"
        out.append(
            reduce_population(
                name, "rate", "repo", rows["repo"], rows["correct"], outcome_range=(0.0, 1.0)
            )
        )
    return out


def real_populations() -> list[Population]:
    kept = [p for p in populations() if p.outcome_range is not None]
    return kept + repoqa_populations()


def scaled(pop: Population, estimand: str, pick: np.ndarray) -> tuple[np.ndarray, ...]:
    """The clusters ``pick`` (runs x clusters) as the sequence's ``x`` and ``u``, with their
    scaled sums and sizes."""
    low, high = pop.outcome_range  # type: ignore[misc]
    sums = (pop.totals[pick] - low * pop.counts[pick]) / (high - low)
    sizes = pop.counts[pick]
    if estimand == "cluster_mean":
        return sums / sizes, np.ones_like(sizes), sums, sizes
    bound = float(pop.counts.max())
    return sums / bound, sizes / bound, sums, sizes


def fixed_clusters(pop: Population, estimand: str, gap: float) -> int:
    """Clusters at which a fixed 95% t interval's half-width reaches ``gap``."""
    truth = pop.truth(estimand)
    if estimand == "cluster_mean":
        influence = pop.totals / pop.counts
    else:
        influence = (pop.totals - truth * pop.counts) / pop.counts.mean()
    sd = float(np.std(influence, ddof=1))
    n = 2
    while float(special.stdtrit(n - 1, 0.975)) * sd / math.sqrt(n) > gap:
        n += 1
        if n > 10**6:
            return 10**6
    return n


def run_cell(pop, estimand, target, method, runs, stream, seed) -> dict:
    rng = np.random.default_rng(seed)
    n_clusters = pop.n_clusters
    if target == "population":
        pick = rng.integers(0, n_clusters, size=(runs, stream))
        extra = {}
    else:
        pick = np.argsort(rng.random((runs, n_clusters)), axis=1)
        weight = n_clusters if estimand == "cluster_mean" else pop.counts.sum() / pop.counts.max()
        extra = {"population_size": n_clusters, "population_weight": float(weight)}
    x, u, _, sizes = scaled(pop, estimand, pick)
    chosen = SEQUENCE_METHODS[method]
    low, high, _ = betting_bounds(
        x, u, schedules=chosen.schedules, truncation=chosen.truncation, **extra
    )
    lo, hi = pop.outcome_range  # type: ignore[misc]
    low, high = lo + (hi - lo) * low, lo + (hi - lo) * high
    truth = pop.truth(estimand)
    tolerance = 1e-9
    late = slice(min(FROM_LOOK, low.shape[1]) - 1, None)
    misses = ((low[:, late] > truth + tolerance) | (high[:, late] < truth - tolerance)).any(1)
    false_pass = (low > truth + tolerance).any(1)
    cell = {
        "population": f"{pop.name} by {pop.grouping}",
        "kind": pop.kind,
        "n_clusters": n_clusters,
        "estimand": estimand,
        "target": target,
        "method": method,
        "runs": runs,
        "looks": int(low.shape[1]),
        "miss": float(misses.mean()),
        "false_pass": float(false_pass.mean()),
        "final_width": float(np.median(high[:, -1] - low[:, -1])),
    }
    for gap in GAPS:
        threshold = truth - gap
        decided = low >= threshold
        first = np.where(decided.any(1), np.argmax(decided, 1) + 1, np.inf)
        cell[f"median_{gap}"] = float(np.median(first))
        cell[f"decided_{gap}"] = float(np.isfinite(first).mean())
        cell[f"fixed_{gap}"] = fixed_clusters(pop, estimand, gap)
        if target == "benchmark" and gap == SAVED_GAP:
            rows = np.cumsum(sizes, axis=1)
            total = rows[:, -1]
            at = np.where(np.isfinite(first), first, rows.shape[1]).astype(int) - 1
            used = rows[np.arange(rows.shape[0]), at]
            saved = 1.0 - used / total
            cell["saved_median"] = float(np.median(saved))
            cell["saved_q1"], cell["saved_q3"] = (
                float(q) for q in np.quantile(saved, [0.25, 0.75])
            )
    return cell


def beta_binomial(rng, runs, stream, mean, icc, sizes):
    total = 1.0 / icc - 1.0
    rates = rng.beta(mean * total, (1.0 - mean) * total, size=(runs, stream))
    return rng.binomial(sizes.astype(int), rates).astype(float)


def simulated_cell(kind, icc, mean, estimand, method, runs, stream, seed, target) -> dict:
    rng = np.random.default_rng(seed)
    if kind == "equal (10)":
        sizes, bound = np.full((runs, stream), 10.0), 10.0
    elif kind == "uniform (1-40)":
        sizes, bound = rng.integers(1, 41, size=(runs, stream)).astype(float), 40.0
    else:
        sizes = np.minimum(np.ceil(np.exp(rng.normal(math.log(20.0), 1.2, (runs, stream)))), 1000)
        bound = 1000.0
    totals = beta_binomial(rng, runs, stream, mean, icc, sizes)
    if estimand == "cluster_mean":
        x, u = totals / sizes, np.ones_like(sizes)
    else:
        x, u = totals / bound, sizes / bound
    chosen = SEQUENCE_METHODS[method]
    extra = {"population_size": stream} if target == "benchmark" else {}
    low, high, _ = betting_bounds(
        x, u, schedules=chosen.schedules, truncation=chosen.truncation, **extra
    )
    if target == "benchmark":
        # each run is a list of its own: the truth is its full-run score, and the bounds keep
        # to the scores the list can still reach (as BettingState does for one list)
        truth = (x.sum(1) / u.sum(1))[:, None]
        whole = u.sum(axis=1, keepdims=True)
        seen_x, seen_u = np.cumsum(x, axis=1), np.cumsum(u, axis=1)
        low = np.maximum.accumulate(np.maximum(low, seen_x / whole), axis=1)
        high = np.minimum.accumulate(np.minimum(high, (seen_x + whole - seen_u) / whole), axis=1)
    else:
        # the truth of both estimands is the beta mean (rates independent of sizes)
        truth = mean
    late = slice(FROM_LOOK - 1, None)
    tolerance = 1e-9
    misses = ((low[:, late] > truth + tolerance) | (high[:, late] < truth - tolerance)).any(1)
    return {
        "population": f"sizes {kind}, ICC {icc}, rate {mean}",
        "kind": "simulated",
        "estimand": estimand,
        "target": target,
        "method": method,
        "runs": runs,
        "looks": stream,
        "miss": float(misses.mean()),
        "false_pass": float((low > truth + tolerance).any(1).mean()),
        "final_width": float(np.median(high[:, -1] - low[:, -1])),
    }


def load_cache(fresh: bool) -> dict[str, dict]:
    if fresh or not CACHE.exists():
        return {}
    cells = {}
    for line in CACHE.read_text(encoding="utf-8").splitlines():
        cell = json.loads(line)
        cells[cell["key"]] = cell
    return cells


def remember(cell: dict) -> None:
    CACHE.parent.mkdir(parents=True, exist_ok=True)
    with CACHE.open("a", encoding="utf-8") as handle:
        handle.write(json.dumps(cell) + "\n")


def se(rate: float, runs: int) -> float:
    return math.sqrt(max(rate * (1 - rate), 0.05 * 0.95) / runs)


def table(rows, header) -> list[str]:
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(str(c) for c in row) + " |" for row in rows]
    return lines


def speed(cell: dict, gap: float) -> str:
    median = cell[f"median_{gap}"]
    fixed = cell[f"fixed_{gap}"]
    share = cell[f"decided_{gap}"]
    if not math.isfinite(median):
        return f"never ({share:.0%}); fixed {fixed}"
    return f"{median:.0f} ({share:.0%}) ×{median / fixed:.1f}"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="a smoke run; nothing written")
    parser.add_argument("--runs", type=int, default=400)
    parser.add_argument("--fresh", action="store_true", help="ignore the cached cells")
    parser.add_argument("--confirm", type=int, default=2000, help="runs of a confirmation")
    args = parser.parse_args(argv)
    runs = 6 if args.quick else args.runs
    cache = {} if args.quick else load_cache(args.fresh)
    started = time.perf_counter()
    cells: list[dict] = []
    pops = real_populations()
    if args.quick:
        pops = [p for p in pops if p.name in ("BBH cot", "CRUXEval-I")]
    seed = 20261204
    for number, pop in enumerate(pops):
        estimands = ["pooled"] if pop.balanced else ["pooled", "cluster_mean"]
        stream = 60 if args.quick else min(max(300, pop.n_clusters), 800)
        for estimand in estimands:
            for target in ("population", "benchmark"):
                for method in SEQUENCE_METHODS:
                    key = f"{pop.name}|{pop.grouping}|{estimand}|{target}|{method}|{runs}"
                    if key not in cache:
                        cell = run_cell(
                            pop, estimand, target, method, runs, stream, seed + 7 * number
                        )
                        cell["key"] = key
                        if not args.quick:
                            remember(cell)
                        cache[key] = cell
                    cells.append(cache[key])
        print(f"{pop.name} by {pop.grouping}: done ({time.perf_counter() - started:.0f} s)")
    confirmations: list[dict] = []
    by_name = {f"{p.name} by {p.grouping}": (number, p) for number, p in enumerate(pops)}
    for cell in [c for c in cells if c["miss"] > 0.05 and not args.quick]:
        number, pop = by_name[cell["population"]]
        key = f"confirm|{cell['key']}|{args.confirm}"
        if key not in cache:
            stream = min(max(300, pop.n_clusters), 800)
            again = run_cell(
                pop, cell["estimand"], cell["target"], cell["method"], args.confirm, stream,
                seed + 100_003 + 7 * number,
            )  # fmt: skip
            again["key"] = key
            remember(again)
            cache[key] = again
        confirmations.append(cache[key])
        print(f"confirmed {cell['population']}, {cell['method']}: {cache[key]['miss']:.4f}")
    sims = [] if args.quick else [
        (kind, icc, mean)
        for kind in ("equal (10)", "uniform (1-40)", "heavy (lognormal)")
        for icc in (0.05, 0.2, 0.5)
        for mean in (0.05, 0.3, 0.5)
    ]  # fmt: skip
    for number, (kind, icc, mean) in enumerate(sims):
        for estimand, target in itertools.product(
            ("pooled", "cluster_mean"), ("population", "benchmark")
        ):
            if kind.startswith("equal") and estimand == "cluster_mean":
                continue  # the same sequence as pooled
            suffix = "" if target == "population" else "|benchmark"
            key = f"sim|{kind}|{icc}|{mean}|{estimand}|{DEFAULT}|{runs}{suffix}"
            if key not in cache:
                cell = simulated_cell(
                    kind, icc, mean, estimand, DEFAULT, runs, 300, 7 + number, target
                )
                cell["key"] = key
                remember(cell)
                cache[key] = cell
            cells.append(cache[key])
    elapsed = time.perf_counter() - started
    real = [c for c in cells if c["kind"] != "simulated"]
    simulated = [c for c in cells if c["kind"] == "simulated"]

    def worst(rows, field, **match):
        chosen = [r for r in rows if all(r[k] == v for k, v in match.items())]
        return max(chosen, key=lambda r: r[field]) if chosen else None

    summary = []
    for target in ("population", "benchmark"):
        for method in SEQUENCE_METHODS:
            miss = worst(real, "miss", target=target, method=method)
            passing = worst(real, "false_pass", target=target, method=method)
            if miss is None:
                continue
            summary.append(
                f"{method}, target {target}: worst miss {miss['miss']:.3f} "
                f"(±{se(miss['miss'], miss['runs']):.3f}, {miss['population']}, "
                f"{miss['estimand']}), worst false pass {passing['false_pass']:.3f} over "
                f"{sum(1 for r in real if r['target'] == target and r['method'] == method)} "
                "real cells"
            )
    for target in ("population", "benchmark"):
        chosen = [r for r in simulated if r["target"] == target]
        if not chosen:
            continue
        miss = worst(chosen, "miss")
        passing = worst(chosen, "false_pass")
        summary.append(
            f"{DEFAULT}, target {target}, simulated grid: worst miss {miss['miss']:.3f} "
            f"(±{se(miss['miss'], miss['runs']):.3f}, {miss['population']}, "
            f"{miss['estimand']}), worst false pass {passing['false_pass']:.3f} over "
            f"{len(chosen)} cells"
        )
    large = [r for r in real if r["n_clusters"] >= 200 and r["target"] == "population"]
    for method in SEQUENCE_METHODS:
        prices = [
            r[f"median_{gap}"] / r[f"fixed_{gap}"]
            for r in large
            if r["method"] == method
            for gap in (0.10, 0.05)
        ]
        if prices:
            summary.append(
                f"{method}: price of watching on the populations of 200 clusters or more, "
                f"gaps 0.10 and 0.05: worst ×{max(prices):.2f} over {len(prices)} cells"
            )
    print("\n".join(summary))
    print(f"({elapsed:.0f} s)")
    if args.quick:
        return 0

    confirm_rows = []
    for again in confirmations:
        first = next(c for c in real if f"confirm|{c['key']}|" in again["key"])
        confirm_rows.append(
            (
                first["population"],
                first["estimand"],
                first["target"],
                first["method"].replace("betting_", ""),
                f"{first['miss']:.4f} ±{se(first['miss'], first['runs']):.4f} ({first['runs']})",
                f"{again['miss']:.4f} ±{se(again['miss'], again['runs']):.4f} ({again['runs']})",
                f"{again['false_pass']:.4f}",
            )
        )
    if confirm_rows:
        worst_again = max(confirmations, key=lambda r: r["miss"])
        summary.append(
            f"cells above 5% in the first runs, run again on fresh seeds: worst "
            f"{worst_again['miss']:.4f} (±{se(worst_again['miss'], worst_again['runs']):.4f}) over "
            f"{len(confirm_rows)} cells"
        )

    def real_rows(target: str) -> list[tuple]:
        rows = []
        for r in real:
            if r["target"] != target:
                continue
            rows.append(
                (
                    r["population"],
                    r["estimand"],
                    r["method"].replace("betting_", ""),
                    f"{r['miss']:.3f} ±{se(r['miss'], r['runs']):.3f}",
                    f"{r['false_pass']:.3f}",
                    *(speed(r, gap) for gap in GAPS),
                    f"{r['final_width']:.3f}",
                )
            )
        return rows

    header = [
        "population",
        "estimand",
        "method",
        "miss (from look 20)",
        "false pass",
        *(f"gate at truth − {gap:.2f}: median clusters (decided) ×price" for gap in GAPS),
        "final width",
    ]
    sim_rows = [
        (
            r["population"],
            r["estimand"],
            r["target"],
            f"{r['miss']:.3f} ±{se(r['miss'], r['runs']):.3f}",
            f"{r['false_pass']:.3f}",
            f"{r['final_width']:.3f}",
        )
        for r in simulated
    ]
    saved = [
        (
            r["population"],
            r["estimand"],
            r["method"].replace("betting_", ""),
            f"{r['saved_median']:.1%} [{r['saved_q1']:.1%}, {r['saved_q3']:.1%}]",
            speed(r, SAVED_GAP),
        )
        for r in real
        if r["target"] == "benchmark"
        and r["population"].startswith("MMLU-Pro")
        and r["population"].endswith("by src")
        and r["kind"] == "rate"
    ]
    page = [
        "# Watching a run on real data: coverage, decisions and savings",
        "",
        "Written by `python studies/sequential_decisions.py` (fixed seeds; "
        f"{runs} runs per cell; {elapsed / 60:.0f} minutes on {platform.machine()} for the "
        f"cells not cached, clusterstats {clusterstats.__version__}). The sequences are the "
        "library's (`betting_bounds`, the arithmetic of `confidence_sequence`): "
        "`betting_mixture` (the default) and `betting_predictable`. A run **misses** when its "
        f"interval excludes the truth at any look from the {FROM_LOOK}th cluster on (goal at "
        "most 5% plus Monte Carlo error; ± is the Monte Carlo standard error, at least that of "
        "a 5% rate). A **false pass** is a lower bound ever above the truth: a gate at the "
        "truth that passes (goal at most 2.5%). For a gate at the truth minus a gap, the "
        "median clusters until it passes over the runs (never: fewer than half decided), the "
        "share decided within the stream, and the **price of watching**: that median over "
        "the clusters at which a fixed 95% t interval's half-width reaches the gap (goal at "
        "most 2 on the populations of 200 clusters or more). The population target streams "
        "clusters drawn with replacement (300 per run, or as many as the dataset has, at most "
        "800); the benchmark target runs every cluster once in a random order.",
        "",
        "## Summary",
        "",
        *[f"- {line}" for line in summary],
        "",
        "## The benchmark target on MMLU-Pro by source: what a stopped run saves",
        "",
        f"A gate at the full-run score minus {SAVED_GAP}, stopped at the first look that "
        "passes it: the share of questions never run (median [interquartile range] over "
        "orders), and the clusters it took.",
        "",
        *table(saved, ["population", "estimand", "method", "questions saved", "clusters"]),
        "",
        "## Cells above 5%, run again",
        "",
        "Every real-data cell whose miss rate was above 5% in its first runs, run again with "
        f"{args.confirm} runs on fresh seeds (the two methods of a cell share their draws, so "
        "their first figures are not independent).",
        "",
        *(
            table(
                confirm_rows,
                [
                    "population",
                    "estimand",
                    "target",
                    "method",
                    "miss, first runs",
                    "miss, again",
                    "false pass, again",
                ],
            )
            if confirm_rows
            else ["No cell was above 5%."]
        ),
        "",
        "## Real data, target: the population (clusters drawn with replacement)",
        "",
        *table(real_rows("population"), header),
        "",
        "## Real data, target: the benchmark (every cluster once, in a random order)",
        "",
        *table(real_rows("benchmark"), header),
        "",
        f"## Simulated grid ({DEFAULT}; 300 clusters per run, drawn from the design, or for the "
        "benchmark target a list of 300 drawn once per run and run through in a random order)",
        "",
        *table(
            sim_rows,
            ["design", "estimand", "target", "miss (from look 20)", "false pass", "final width"],
        ),
        "",
    ]
    PAGE.write_text("\n".join(page), encoding="utf-8")
    print(f"wrote {PAGE.relative_to(REPO)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
