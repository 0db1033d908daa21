"""Coverage of the weighted (Hájek) default: weights that vary by cluster and within clusters.

Each dataset has ``K`` clusters of rows of two types (30% type A), a binary outcome with
``logit p = alpha_type + u_cluster`` (``alpha_A = 1``, ``alpha_B = -0.5``; ``u`` normal with
the latent ICC given), and one of two kinds of weights:

- ``by cluster``: each cluster's rows share a lognormal weight (sd 0.5 on the log scale),
  independent of the outcome, so the weighted mean estimates the population pass rate;
- ``within clusters``: type A rows weigh 3, type B rows 1 (an informative, post-
  stratification-like weight), times lognormal noise (sd 0.3): the target is the pass rate
  with type A weighted up, ``(3·0.3·m_A + 0.7·m_B) / (3·0.3 + 0.7)``.

``m_t = E[expit(alpha_t + u)]`` is computed by Gauss–Hermite quadrature (80 nodes), so the
truth is exact. Cluster sizes are 10 rows, or Poisson-like with CV 0.5 (at least 2). Each
dataset gets the weighted default (``korn_graubard`` on the linearised variance, by the code
path of ``cluster_ci(..., weights=...)``), weighted ``cr1``, and the unweighted default, which
estimates another quantity when the weights are informative.

Usage::

    python studies/coverage_weighted.py          # writes docs/coverage-weighted.md
    python studies/coverage_weighted.py --quick  # a smoke run, prints only
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
from scipy import special

import clusterstats
from clusterstats.core.grouping import cluster_sums
from clusterstats.core.summary import summarize_interval
from clusterstats.core.weighted import summarize_weighted, weighted_sums

REPO = Path(__file__).resolve().parents[1]
BASE_SEED = 20261205
ALPHA = {"A": 1.0, "B": -0.5}
SHARE_A = 0.3
METHODS = ("weighted auto", "weighted cr1", "unweighted auto")


def latent_sd(icc: float) -> float:
    """The cluster sd on the logit scale for a latent ICC (logistic residual π²/3)."""
    return math.sqrt(icc / (1.0 - icc) * math.pi**2 / 3.0)


def type_means(icc: float) -> dict[str, float]:
    """``E[expit(alpha + u)]`` for each type, by Gauss–Hermite quadrature."""
    nodes, weights = np.polynomial.hermite_e.hermegauss(80)
    sd = latent_sd(icc)
    return {
        t: float((weights * special.expit(a + sd * nodes)).sum() / weights.sum())
        for t, a in ALPHA.items()
    }


def truth(icc: float, kind: str) -> float:
    m = type_means(icc)
    if kind == "by cluster":
        return SHARE_A * m["A"] + (1 - SHARE_A) * m["B"]
    return (3 * SHARE_A * m["A"] + (1 - SHARE_A) * m["B"]) / (3 * SHARE_A + (1 - SHARE_A))


def draw(rng: np.random.Generator, k: int, cv: float, icc: float, kind: str):
    """Outcomes, weights and cluster codes of one dataset."""
    if cv == 0:
        sizes = np.full(k, 10)
    else:  # gamma-Poisson sizes with mean 10 and CV about cv, at least 2
        shape = 1.0 / (cv * cv - 0.1) if cv * cv > 0.1 else 100.0
        sizes = np.maximum(rng.poisson(rng.gamma(shape, 10.0 / shape, k)), 2)
    codes = np.repeat(np.arange(k), sizes)
    n = codes.size
    is_a = rng.random(n) < SHARE_A
    u = rng.normal(0.0, latent_sd(icc), k)[codes]
    p = special.expit(np.where(is_a, ALPHA["A"], ALPHA["B"]) + u)
    y = (rng.random(n) < p).astype(float)
    if kind == "by cluster":
        w = np.exp(rng.normal(0.0, 0.5, k))[codes]
    else:
        w = np.where(is_a, 3.0, 1.0) * np.exp(rng.normal(0.0, 0.3, n))
    return y, w, codes


def run_cell(args: tuple[int, tuple, int]) -> tuple[int, dict]:
    index, (k, cv, icc, kind), reps = args
    rng = np.random.default_rng([BASE_SEED, index])
    target = truth(icc, kind)
    covered = dict.fromkeys(METHODS, 0)
    widths: dict[str, list[float]] = {name: [] for name in METHODS}
    done = 0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", clusterstats.ClusterStatsWarning)
        for _ in range(reps):
            y, w, codes = draw(rng, k, cv, icc, kind)
            if y.min() == y.max():
                continue  # all equal: not seen at these sizes, kept out rather than guessed
            ws = weighted_sums(y, w, codes)
            found = {
                "weighted auto": summarize_weighted(
                    ws, method="auto", confidence=0.95, is_binary=True
                ),
                "weighted cr1": summarize_weighted(
                    ws, method="cr1", confidence=0.95, is_binary=True
                ),
                "unweighted auto": summarize_interval(
                    cluster_sums(y, codes),
                    estimand="pooled",
                    method="auto",
                    confidence=0.95,
                    is_binary=True,
                ),
            }
            done += 1
            for name, s in found.items():
                covered[name] += int(s.low <= target <= s.high)
                widths[name].append(s.high - s.low)
    return index, {name: (covered[name] / done, float(np.mean(widths[name]))) for name in METHODS}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--reps", type=int)
    parser.add_argument("--workers", type=int, default=2)
    args = parser.parse_args(argv)
    reps = args.reps or (100 if args.quick else 2000)
    ks = (20,) if args.quick else (20, 50, 200)
    cells = [
        (k, cv, icc, kind)
        for kind in ("by cluster", "within clusters")
        for k, cv, icc in itertools.product(ks, (0.0, 0.5), (0.05, 0.2))
    ]
    start = time.perf_counter()
    with multiprocessing.Pool(args.workers) as pool:
        results = dict(pool.map(run_cell, [(i, c, reps) for i, c in enumerate(cells)]))
    seconds = time.perf_counter() - start
    mc_se = math.sqrt(0.95 * 0.05 / reps)
    lines = [
        "| weights | clusters | size CV | latent ICC | truth | weighted default | weighted "
        "`cr1` | unweighted default | width weighted ÷ unweighted |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for i, (k, cv, icc, kind) in enumerate(cells):
        r = results[i]
        cov = " | ".join(f"{100 * r[name][0]:.1f}" for name in METHODS)
        ratio = r["weighted auto"][1] / r["unweighted auto"][1]
        lines.append(
            f"| {kind} | {k} | {cv:g} | {icc:g} | {truth(icc, kind):.4f} | {cov} | {ratio:.2f} |"
        )
    table = "\n".join(lines)
    worst = {name: min(results[i][name][0] for i in range(len(cells))) for name in METHODS[:2]}
    summary = (
        f"Worst cell: weighted default {100 * worst['weighted auto']:.1f}%, weighted `cr1` "
        f"{100 * worst['weighted cr1']:.1f}%; the unweighted default misses the weighted "
        "target when the weights are informative (within clusters)."
    )
    print(table)
    print(summary)
    print(f"{len(cells)} cells x {reps} datasets in {seconds:.0f} s; MC SE {100 * mc_se:.2f}")
    if args.quick:
        return 0
    processes = f"{args.workers} process" + ("es" if args.workers != 1 else "")
    page = f"""# Coverage of weighted means

Written by `python studies/coverage_weighted.py` (seed {BASE_SEED}, {reps:,} datasets per
cell, {seconds / 60:.1f} min on {processes}); Monte Carlo standard error of a coverage near
95%: {100 * mc_se:.2f} points. Do not edit by hand.

A binary outcome in clusters of two kinds of rows (30% of type A, more likely to pass),
with weights that vary by cluster (lognormal, independent of the outcome) or within
clusters (type A rows weigh three times as much, with lognormal noise: informative
weights). The truth is the population value of the weighted mean, computed exactly. Every
interval is 95%: the weighted default (`korn_graubard` on the linearised variance, as
`cluster_ci(..., weights=...)`), weighted `cr1`, and the unweighted default
(`korn_graubard_inverted`, which estimates the unweighted pass rate).

{summary}

{table}
"""
    (REPO / "docs" / "coverage-weighted.md").write_text(page, encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
