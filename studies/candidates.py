"""The candidate binary intervals considered for ``method="auto"``, on the hardest cells.

The coverage study (``studies/coverage.py``) showed every textbook method falling well
below 95% for rare outcomes with strong clustering, few clusters and unequal cluster sizes.
This script compares the variants that were tried before ``korn_graubard_guarded`` was
chosen, on the same simulated datasets (common random numbers) in a few hard and a few
ordinary cells, and records which side each interval misses on:

* ``korn_graubard``: R survey's ``svyciprop(method="beta")`` (CR1 variance, G - 1 df);
* ``kg_cr2``: the same with the CR2 variance and its Satterthwaite df;
* ``score_cr1``: the cluster-robust test inverted with the variance evaluated under the null
  (the clustered analogue of Wilson's score interval; closed form, a quadratic in p0);
* ``logit_cr2``: a t interval on the logit scale with the CR2 variance and df;
* ``kg_model_floor``: Korn–Graubard on max(CR2 variance, ICC-model variance), CR2 df;
* ``kg_average``: Korn–Graubard on the average of those two variances, effective-cluster df;
* ``kg_adaptive_floor``: the floor applied in proportion to how few clusters carry the
  variance, ``V_CR2 + (1 - df_eff / (G - 1)) * max(0, V_model - V_CR2)``, effective-cluster df;
* ``korn_graubard_guarded``: the chosen method (max of the two, effective-cluster df), run
  through ``summarize_interval`` as ``cluster_ci`` runs it.

Usage::

    python studies/candidates.py            # writes docs/coverage-candidates.md (~3 min)
    python studies/candidates.py --quick    # 300 datasets per cell, prints only
"""

from __future__ import annotations

import argparse
import math
import multiprocessing
import sys
import time
import warnings
from pathlib import Path

import numpy as np
from scipy import stats

import clusterstats
from clusterstats.core import intervals as iv
from clusterstats.core.simulation import draw_cluster_sums
from clusterstats.core.summary import summarize_interval
from clusterstats.core.variance import cluster_robust, design_effect_unequal, icc_anova

REPO = Path(__file__).resolve().parents[1]
BASE_SEED = 20261201
CANDIDATES = (
    "korn_graubard",
    "kg_cr2",
    "score_cr1",
    "logit_cr2",
    "kg_model_floor",
    "kg_average",
    "kg_adaptive_floor",
    "korn_graubard_guarded",
)
# (K, m, size CV, mean, icc): hard cells first, then ordinary ones
CELLS = (
    (30, 20, 0.8, 0.05, 0.3),
    (20, 20, 0.8, 0.05, 0.6),
    (20, 20, 0.0, 0.05, 0.6),
    (10, 20, 0.0, 0.05, 0.3),
    (100, 20, 0.8, 0.05, 0.6),
    (30, 5, 0.8, 0.05, 0.3),
    (10, 5, 0.8, 0.3, 0.3),
    (20, 20, 0.8, 0.3, 0.6),
    (30, 20, 0.0, 0.5, 0.3),
    (100, 5, 0.0, 0.5, 0.0),
    (20, 5, 0.8, 0.5, 0.1),
)


def score_interval(totals, counts, confidence):
    """{p0 : (sum T - p0 N)^2 <= t^2 G/(G-1) sum (T_g - p0 n_g)^2}, solved as a quadratic."""
    g = counts.shape[0]
    q2 = stats.t.ppf(0.5 + confidence / 2, g - 1) ** 2 * g / (g - 1)
    a_sum, b_sum = totals.sum(), counts.sum()
    saa, sab, sbb = totals @ totals, totals @ counts, counts @ counts
    a = b_sum**2 - q2 * sbb
    b = -2.0 * (a_sum * b_sum - q2 * sab)
    c = a_sum**2 - q2 * saa
    disc = b * b - 4 * a * c
    if a <= 0 or disc < 0:
        return 0.0, 1.0
    root = math.sqrt(disc)
    return max(0.0, (-b - root) / (2 * a)), min(1.0, (-b + root) / (2 * a))


def candidate_intervals(sums, confidence):
    n_rows = float(sums.counts.sum())
    cr1 = cluster_robust(sums, "pooled", "CR1")
    cr2 = cluster_robust(sums, "pooled", "CR2")
    p = cr1.estimate
    rho = icc_anova(sums).icc
    rho = rho if rho > 0 else 0.0
    model = p * (1 - p) * design_effect_unequal(sums.counts, rho, "pooled") / n_rows
    residuals = sums.means * sums.counts - p * sums.counts
    df_eff = iv.effective_clusters_df(residuals, cr2.df)
    concentration = 1.0 - df_eff / (sums.n_clusters - 1)  # 0 when every cluster informs V
    adaptive = cr2.variance + concentration * max(0.0, model - cr2.variance)
    q = stats.t.ppf(0.5 + confidence / 2, cr2.df)
    theta, se_theta = math.log(p / (1 - p)), math.sqrt(cr2.variance) / (p * (1 - p))

    def expit(x):
        return 1 / (1 + math.exp(-x))

    return {
        "korn_graubard": iv.korn_graubard(p, cr1.variance, cr1.df, n_rows, confidence)[:2],
        "kg_cr2": iv.korn_graubard(p, cr2.variance, cr2.df, n_rows, confidence)[:2],
        "score_cr1": score_interval(sums.means * sums.counts, sums.counts, confidence),
        "logit_cr2": (expit(theta - q * se_theta), expit(theta + q * se_theta)),
        "kg_model_floor": iv.korn_graubard(p, max(cr2.variance, model), cr2.df, n_rows, confidence)[
            :2
        ],
        "kg_average": iv.korn_graubard(p, (cr2.variance + model) / 2, df_eff, n_rows, confidence)[
            :2
        ],
        "kg_adaptive_floor": iv.korn_graubard(p, adaptive, df_eff, n_rows, confidence)[:2],
    }


def run_cell(args):
    index, (k, m, cv, mean, icc), reps = args
    rng = np.random.default_rng([BASE_SEED, index])
    datasets = draw_cluster_sums(
        rng, reps, k, cluster_size=m, mean=mean, icc=icc, size_cv=cv, outcome="binary"
    )
    tally = {c: [0, 0, 0, []] for c in CANDIDATES}  # covered, miss below, miss above, widths
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", clusterstats.ClusterStatsWarning)
        for sums in datasets:
            chosen = summarize_interval(
                sums,
                estimand="pooled",
                method="korn_graubard_guarded",
                confidence=0.95,
                is_binary=True,
            )
            if chosen.method.endswith("_fallback"):  # zero variance: every method falls back
                found = dict.fromkeys(CANDIDATES, (chosen.low, chosen.high))
            else:
                found = candidate_intervals(sums, 0.95)
                found["korn_graubard_guarded"] = (chosen.low, chosen.high)
            for name, (low, high) in found.items():
                t = tally[name]
                t[0 if low <= mean <= high else (1 if mean < low else 2)] += 1
                t[3].append(high - low)
    return index, {
        n: (t[0] / reps, t[1] / reps, t[2] / reps, float(np.median(t[3]))) for n, t in tally.items()
    }


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--reps", type=int)
    parser.add_argument("--workers", type=int, default=2)
    args = parser.parse_args(argv)
    reps = args.reps or (300 if args.quick else 4000)
    start = time.perf_counter()
    with multiprocessing.Pool(args.workers) as pool:
        results = dict(pool.map(run_cell, [(i, c, reps) for i, c in enumerate(CELLS)]))
    seconds = time.perf_counter() - start
    lines = [
        "# Candidate intervals for binary outcomes",
        "",
        "<!-- generated by studies/candidates.py; do not edit by hand -->",
        "",
        f"Produced by `python studies/candidates.py` (base seed {BASE_SEED}, {reps:,} "
        f"datasets per cell, {seconds / 60:.1f} minutes) with clusterstats "
        f"{clusterstats.__version__}. Each entry is the coverage in percent, then in brackets "
        "the share of misses below the interval / above it, then the median width. Monte "
        f"Carlo SE near 95%: {100 * math.sqrt(0.95 * 0.05 / reps):.2f} points. Methods are "
        "described in the script's docstring and in "
        "[Estimands and methods](estimands-and-methods.md); the full grid is in the "
        "[coverage study](coverage.md).",
        "",
        "| K | m | sizes | mean | icc | " + " | ".join(f"`{c}`" for c in CANDIDATES) + " |",
        "|---|---|---|---|---|" + "---|" * len(CANDIDATES),
    ]
    for i, (k, m, cv, mean, icc) in enumerate(CELLS):
        entries = [
            f"{100 * c:.1f} ({100 * lo:.1f}/{100 * hi:.1f}) w {w:.3f}"
            for c, lo, hi, w in (results[i][n] for n in CANDIDATES)
        ]
        sizes = "equal" if cv == 0 else f"CV {cv:g}"
        lines.append(f"| {k} | {m} | {sizes} | {mean:g} | {icc:g} | " + " | ".join(entries) + " |")
    page = "\n".join(lines) + "\n"
    if args.quick:
        print(page)
    else:
        (REPO / "docs" / "coverage-candidates.md").write_text(page)
        print(page)
        print("wrote docs/coverage-candidates.md")
    return 0


if __name__ == "__main__":
    sys.exit(main())
