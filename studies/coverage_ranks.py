"""Rank confidence sets on clustered leaderboards: do the simultaneous sets cover every
model's true rank together, does the top set hold the true best, and which critical values
should ``compare`` use by default?

Every draw runs ``compare``'s core (``summarize_comparison`` with ``method="cr3"``, the
pairs' variance of ``compare``'s default up to 2,000 clusters, the jackknife) once per way of
drawing the rank sets' critical values (``rank_method``): ``"bootstrap"`` (the cluster
bootstrap every model shares), ``"normal"`` (R ``csranks``'s normal law of the
cluster-robust covariance), ``"t"`` (the multivariate t on the clusters' df) and
``"guarded"`` (``compare``'s default: ``"t"`` with Holm's bound as a floor on every step's
critical value). Beside
them: the same sets computed as if every item were its own cluster (``"normal"``, the
unclustered sets a leaderboard would print without this library), and the marginal sets,
read jointly (what a reader does who scans a column of marginal sets) and one model at a
time (what they promise).

Two parts, fixed seeds:

1. **Simulated leaderboards.** 10 or 40 models, 20 or 100 item clusters of uneven sizes
   (1 + Poisson(9) items), ICC 0, 0.2 or 0.5 (half of it a cluster effect every model
   shares, half a model-by-cluster effect), the models' true gaps none (all tied), small or
   large, binary (probit) and continuous scores. Truth: the models' exact population means.
2. **Real leaderboards as populations.** The bundled RepoQA leaderboard (30 systems, 50
   repositories; the pass rule and the continuous similarity), MMLU-Pro (4 models, by
   source and by category) and BBH (chain-of-thought against direct answers, by task): each
   a finite population of clusters; a draw takes as many clusters with replacement, and
   the truth is the population's own scores (RepoQA's three systems tied at 453 of 500
   stay tied in truth).

A set covers a model when it holds every rank the model can have: from one more than the
number of models truly above it to the number of models not truly below it (ties count
both ways). Goal: simultaneous coverage and top-set coverage at least 95%.

Usage::

    python studies/coverage_ranks.py            # writes docs/coverage-ranks.md
    python studies/coverage_ranks.py --part tied --draws 2000
                                                # writes docs/coverage-ranks-tied.md
    python studies/coverage_ranks.py --quick    # a smoke run, prints only
"""

from __future__ import annotations

import argparse
import itertools
import math
import platform
import sys
import time
from multiprocessing import Pool
from pathlib import Path

import numpy as np
from scipy import special

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
sys.path.insert(0, str(REPO))

import clusterstats  # noqa: E402
from clusterstats.core.paired import summarize_comparison  # noqa: E402
from clusterstats.stats.comparison import DEFAULT_RANK_METHOD  # noqa: E402

PAGE = REPO / "docs" / "coverage-ranks.md"
TIED_PAGE = REPO / "docs" / "coverage-ranks-tied.md"
CONFIDENCE = 0.95
METHODS = ("bootstrap", "normal", "t", "guarded")
#: The method whose marginal sets the pages show: ``compare``'s default.
DEFAULT = DEFAULT_RANK_METHOD
#: Each part's rank methods and whether it also computes the rows-independent sets.
PARTS = {"grid": (METHODS, True), "tied": (("t", DEFAULT), False)}


def true_rank_range(theta: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Every rank a model can have under ties: [1 + #above, M - #below]."""
    above = (theta[None, :] > theta[:, None]).sum(axis=1)
    below = (theta[None, :] < theta[:, None]).sum(axis=1)
    return 1 + above, theta.shape[0] - below


def sets_of(totals, counts, method, rng, n_boot):
    s = summarize_comparison(
        totals,
        counts,
        estimand="pooled",
        method="cr3",
        adjust="none",
        confidence=CONFIDENCE,
        baseline=None,
        n_resamples=n_boot,
        rng=rng,
        rank_method=method,
    )
    return s.ranks


def score(ranks, truth_low, truth_high, best) -> dict[str, float]:
    joint = (ranks.low <= truth_low) & (ranks.high >= truth_high)
    alone = (ranks.marginal_low <= truth_low) & (ranks.marginal_high >= truth_high)
    return {
        "simultaneous": float(joint.all()),
        "top": float((ranks.low[best] <= 1).all()),
        "marginal_joint": float(alone.all()),
        "marginal_each": float(alone.mean()),
        "size": float(np.mean(ranks.high - ranks.low + 1)),
    }


def one_draw(totals, counts, item_totals, truth, rng, n_boot, methods, unclustered):
    low, high = true_rank_range(truth)
    best = np.flatnonzero(truth == truth.max())
    out = {m: score(sets_of(totals, counts, m, rng, n_boot), low, high, best) for m in methods}
    if unclustered:
        ones = np.ones(item_totals.shape[0])
        out["unclustered"] = score(
            sets_of(item_totals, ones, "normal", rng, n_boot), low, high, best
        )
    return out


def mean_of(results: list[dict]) -> dict[str, dict[str, float]]:
    keys = results[0].keys()
    return {k: {f: float(np.mean([r[k][f] for r in results])) for f in results[0][k]} for k in keys}


# -- 1. simulated leaderboards -------------------------------------------------------------

GAPS = {"none": 0.0, "small": 0.4, "large": 2.0}


def simulate_cell(args) -> tuple:
    (n_models, n_clusters, icc, gap, kind), draws, n_boot, seed, methods, unclustered = args
    rng = np.random.default_rng(seed)
    shared, own, noise = icc / 2, icc / 2, 1.0 - icc
    latent = 0.3 + GAPS[gap] * (np.linspace(0.5, -0.5, n_models))
    if kind == "binary":
        truth = special.ndtr(latent / math.sqrt(shared + own + noise))
    else:
        truth = latent.copy()
    results = []
    for _ in range(draws):
        sizes = 1 + rng.poisson(9, n_clusters)
        cluster = np.repeat(np.arange(n_clusters), sizes)
        u = rng.normal(0, math.sqrt(shared), n_clusters)
        v = rng.normal(0, math.sqrt(own), (n_clusters, n_models))
        z = (
            latent
            + u[cluster, None]
            + v[cluster]
            + rng.normal(0, math.sqrt(noise), (cluster.size, n_models))
        )
        y = (z > 0).astype(float) if kind == "binary" else z
        totals = np.zeros((n_clusters, n_models))
        np.add.at(totals, cluster, y)
        results.append(
            one_draw(totals, sizes.astype(float), y, truth, rng, n_boot, methods, unclustered)
        )
    return (n_models, n_clusters, icc, gap, kind), mean_of(results)


def simulated_cells(draws, n_boot, seed, quick, part) -> list[tuple]:
    grid = list(
        itertools.product((10, 40), (20, 100), (0.0, 0.2, 0.5), GAPS, ("binary", "continuous"))
    )
    methods, unclustered = PARTS[part]
    if part == "tied":
        grid = [cell for cell in grid if cell[3] == "none"]
        seed += 5000
    if quick:
        grid = grid[::9]
    return [(cell, draws, n_boot, seed + i, methods, unclustered) for i, cell in enumerate(grid)]


# -- 2. real leaderboards as populations --------------------------------------------------


def real_populations() -> list[tuple[str, np.ndarray, np.ndarray, np.ndarray, np.ndarray]]:
    """(name, cluster totals (G, M), counts (G,), item values (n, M), item cluster (n,))."""
    out = []

    def add(name, frame, outcome, by, model, item):
        wide = frame.pivot_table(index=[by, item], columns=model, values=outcome, aggfunc="mean")
        wide = wide.dropna()
        codes, _ = wide.index.get_level_values(0).factorize()
        values = wide.to_numpy(float)
        totals = np.zeros((codes.max() + 1, values.shape[1]))
        np.add.at(totals, codes, values)
        counts = np.bincount(codes).astype(float)
        out.append((name, totals, counts, values, codes))

    repoqa = clusterstats.datasets.load("repoqa_snf")
    add("RepoQA pass (30 systems, 50 repos)", repoqa, "correct", "repo", "system", "instance_id")
    add(
        "RepoQA similarity (30 systems, 50 repos)",
        repoqa, "best_similar_score", "repo", "system", "instance_id",
    )  # fmt: skip
    mmlu = clusterstats.datasets.load("mmlu_pro")
    mmlu = mmlu[mmlu["absent"] == 0]
    add("MMLU-Pro (4 models, 91 sources)", mmlu, "correct", "src", "model", "question_id")
    add("MMLU-Pro (4 models, 14 categories)", mmlu, "correct", "category", "model", "question_id")
    bbh = clusterstats.datasets.load("bbh")
    add("BBH cot vs direct (27 tasks)", bbh, "correct", "task", "condition", "item_id")
    return out


def real_cell(args) -> tuple:
    (name, totals, counts, values, codes), draws, n_boot, seed, methods, unclustered = args
    rng = np.random.default_rng(seed)
    truth = totals.sum(axis=0) / counts.sum()
    g = counts.shape[0]
    members = [np.flatnonzero(codes == c) for c in range(g)]
    results = []
    for _ in range(draws):
        pick = rng.integers(0, g, g)
        items = values[np.concatenate([members[c] for c in pick])]
        results.append(
            one_draw(totals[pick], counts[pick], items, truth, rng, n_boot, methods, unclustered)
        )
    return name, mean_of(results), values.shape[1], g


# -- the page ---------------------------------------------------------------------------


HEADER = (
    f"simultaneous: {' | '.join(METHODS)} | unclustered | top set: {' | '.join(METHODS)} | "
    f"marginal read jointly ({DEFAULT}) | marginal, each model ({DEFAULT}) | "
    f"set size: {' | '.join(METHODS)} |"
)
#: The Markdown alignment row of ``HEADER``'s cells.
ALIGN = "---:|" * HEADER.count("|")


def cells(r: dict) -> str:
    """The cells of one row of ``HEADER``."""
    return (
        " | ".join(percent(r[k]["simultaneous"]) for k in (*METHODS, "unclustered"))
        + " | "
        + " | ".join(percent(r[k]["top"]) for k in METHODS)
        + f" | {percent(r[DEFAULT]['marginal_joint'])} | {percent(r[DEFAULT]['marginal_each'])} | "
        + " | ".join(f"{r[k]['size']:.1f}" for k in METHODS)
        + " |"
    )


def se(rate: float, draws: int) -> float:
    return math.sqrt(max(rate * (1 - rate), 0.05 * 0.95) / draws)


def percent(x: float) -> str:
    return f"{100 * x:.1f}%"


def tied_page(sims, reals, draws, real_draws, elapsed, args) -> int:
    """``--part tied``: the default's guard where the grid's ``t`` fell short."""
    lines = [
        "# Rank sets: the guarded default where every model is tied",
        "",
        f"Written by `python studies/coverage_ranks.py --part tied --draws {draws}` (fixed seeds; "
        f"{draws} draws per simulated cell, {real_draws} per real population, "
        f"{args.resamples} draws per set; {elapsed / 60:.0f} minutes on "
        f"{platform.machine()} with {args.processes} processes). "
        "The [grid](coverage-ranks.md) found every way of drawing the critical values short "
        "of 95% in one place only: leaderboards whose models are all truly tied, where every "
        "pair's null is binding, with 20 clusters (and, for 40 models, fewer clusters than "
        "models, so the estimated covariance has too few dimensions). `guarded` is `t` with "
        "every step's critical value at least Holm's bound on t with the clusters' df. A "
        "larger critical value at every step rejects a subset of the pairs, so `guarded` "
        "covers at least as often as `t` in every cell of the grid; these are the cells "
        "where it has to do better. Monte Carlo standard error of a 95% rate: "
        f"±{100 * se(0.95, draws):.1f} points per simulated cell, "
        f"±{100 * se(0.95, real_draws):.1f} per real population.",
        "",
        "| leaderboard | simultaneous: t | guarded | top set: t | guarded | marginal read "
        "jointly (guarded) | marginal, each model (guarded) | set size: t | guarded |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    rows = [
        (f"{m} models, {g} clusters, ICC {icc:g}, {kind}", r) for (m, g, icc, _, kind), r in sims
    ]
    rows += [(f"{name} (real)", r) for name, r, _, _ in reals]
    for label, r in rows:
        lines.append(
            f"| {label} | {percent(r['t']['simultaneous'])} | "
            f"{percent(r['guarded']['simultaneous'])} | {percent(r['t']['top'])} | "
            f"{percent(r['guarded']['top'])} | {percent(r['guarded']['marginal_joint'])} | "
            f"{percent(r['guarded']['marginal_each'])} | {r['t']['size']:.1f} | "
            f"{r['guarded']['size']:.1f} |"
        )
    worst = {m: min(r[m]["simultaneous"] for _, r in rows) for m in ("t", "guarded")}
    lines += [
        "",
        f"Worst simultaneous coverage over these cells: `t` {percent(worst['t'])}, "
        f"`guarded` {percent(worst['guarded'])}.",
    ]
    text = "\n".join(lines) + "\n"
    print(text)
    if not args.quick:
        TIED_PAGE.write_text(text)
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--draws", type=int, default=200)
    parser.add_argument("--real-draws", type=int, default=300)
    parser.add_argument("--resamples", type=int, default=999)
    parser.add_argument("--seed", type=int, default=20261203)
    parser.add_argument("--processes", type=int, default=2)
    parser.add_argument("--part", choices=tuple(PARTS), default="grid")
    args = parser.parse_args(argv)
    draws = 20 if args.quick else args.draws
    real_draws = 20 if args.quick else args.real_draws
    started = time.time()
    sim_jobs = simulated_cells(draws, args.resamples, args.seed, args.quick, args.part)
    methods, unclustered = PARTS[args.part]
    real_jobs = [
        (pop, real_draws, args.resamples, args.seed + 1000 + i, methods, unclustered)
        for i, pop in enumerate(real_populations())
    ]
    with Pool(args.processes) as pool:
        sims = pool.map(simulate_cell, sim_jobs, chunksize=1)
        reals = pool.map(real_cell, real_jobs, chunksize=1)
    elapsed = time.time() - started
    if args.part == "tied":
        return tied_page(sims, reals, draws, real_draws, elapsed, args)

    lines = [
        "# Rank sets on clustered leaderboards: coverage study",
        "",
        "Written by `python studies/coverage_ranks.py` (fixed seeds; "
        f"{draws} draws per simulated cell, {real_draws} per real population, "
        f"{args.resamples} bootstrap replicates or normal draws per set; "
        f"{elapsed / 60:.0f} minutes on {platform.machine()} with {args.processes} processes). "
        "The method and the definitions are in the script's docstring; in short, a set "
        "covers a model when it holds every rank the model can truly have (ties count "
        "both ways), the simultaneous sets must cover every model at once, and the top set "
        "must hold every truly best model. Monte Carlo standard error of a 95% rate: "
        f"±{100 * se(0.95, draws):.1f} points per simulated cell, "
        f"±{100 * se(0.95, real_draws):.1f} per real population.",
        "",
        "## Real leaderboards as populations",
        "",
        "| population | models | clusters | " + HEADER,
        "|---|---:|---:|" + ALIGN,
    ]
    lines += [f"| {name} | {m} | {g} | {cells(r)}" for name, r, m, g in reals]
    lines += [
        "",
        "## Simulated leaderboards",
        "",
        "| models | clusters | ICC | gaps | scores | " + HEADER,
        "|---:|---:|---:|---|---|" + ALIGN,
    ]
    lines += [
        f"| {m} | {g} | {icc:g} | {gap} | {kind} | {cells(r)}" for (m, g, icc, gap, kind), r in sims
    ]
    summary = ["", "## Summary", ""]
    for method in (*METHODS, "unclustered"):
        differ = min(r[method]["simultaneous"] for cell, r in sims if cell[3] != "none")
        tied = min(r[method]["simultaneous"] for cell, r in sims if cell[3] == "none")
        real_worst = min(r[method]["simultaneous"] for _, r, _, _ in reals)
        top = [r[method]["top"] for _, r in sims] + [r[method]["top"] for _, r, _, _ in reals]
        summary.append(
            f"- `{method}`: worst simultaneous coverage {percent(differ)} simulated where the "
            f"models differ, {percent(tied)} where all are tied, {percent(real_worst)} real; "
            f"worst top-set coverage {percent(min(top))}"
        )
    summary += [
        "",
        f"`compare`'s default is `{DEFAULT}`: `t` with Holm's bound as a floor on every "
        "step's critical value. The cells where every model is tied bind; they are measured "
        "again with 2,000 draws in [the tied study](coverage-ranks-tied.md) "
        "(`python studies/coverage_ranks.py --part tied --draws 2000`).",
    ]
    text = "\n".join(lines + summary) + "\n"
    print(text)
    if not args.quick:
        PAGE.write_text(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
