"""Coverage of the paired-difference intervals of ``paired_delta``, on simulated model pairs.

Model (correlated pairs on shared clustered items): cluster j draws one uniform ``u_j`` and
both models' cluster pass rates from it, ``p_Aj = F_A^-1(u_j)`` and ``p_Bj = F_B^-1(u_j)``
with ``F`` the Beta of mean ``mean_a`` (``mean_b``) and ICC ``icc`` of ``clusterstats.simulate``
(so a hard cluster is hard for both models). Item i draws a uniform ``v_i``; A passes if
``v_i < p_Aj``; B passes if ``w_i < p_Bj`` where ``w_i = v_i`` with probability 0.5 and a fresh
uniform otherwise (a hard item is often hard for both). Sizes as in ``simulate`` (equal, or
CV 0.8). The truth is ``mean_a - mean_b``.

Every method of ``paired_delta`` runs on the same datasets by the code path ``paired_delta``
uses (``summarize_paired``), and so do candidates from the literature on clustered paired
proportions, computed here from the library's core pieces (they are not options of
``paired_delta``):

- ``score_inverted``: the cluster-robust score test of Durkalski et al. (2003), whose
  statistic for no difference is ``(sum_g d_g)^2 / sum_g d_g^2`` (d_g = a cluster's A-only
  minus B-only items), extended to every candidate difference Delta0 by centring each
  cluster at ``Delta0 * n_g`` and inverted against ``t(G - 1)``: the variance is taken under
  the null, as in Tango's (1998) score interval, instead of at the estimate (Wald, CR1/CR2,
  and Obuchowski's 1998 ratio-estimator variance, which equals CR1 here);
- ``score``: the same inversion with the CR1 factor ``G/(G - 1)`` on the variance, as
  ``clusterstats.core.score`` computes it (the candidate the real-data study measures), and
  ``bootstrap_t_or_score``, the union of that interval with ``bootstrap_t``'s;
- ``mover_inverted``: the method of variance estimates recovery (Newcombe 1998; Zou & Donner
  2008) on each model's ``korn_graubard_inverted`` interval, with the cluster-robust
  correlation of the two pooled rates.

Grid: K in {10, 20, 30, 100}; m in {5, 20}, equal and CV 0.8; (mean_a, mean_b) in
{(0.5, 0.5), (0.35, 0.30), (0.08, 0.05)}; icc in {0.1, 0.3, 0.6}.

Usage::

    python studies/coverage_paired.py            # writes docs/coverage-paired.md (~10 min)
    python studies/coverage_paired.py --quick    # a smoke run, prints only
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
from scipy import stats

import clusterstats
from clusterstats.core.grouping import cluster_sums
from clusterstats.core.intervals import auto_method
from clusterstats.core.paired import summarize_paired
from clusterstats.core.score import cluster_score_interval
from clusterstats.core.simulation import _sizes
from clusterstats.core.summary import summarize_interval

REPO = Path(__file__).resolve().parents[1]
BASE_SEED = 20261202
LIBRARY_METHODS = (
    "naive",
    "cr1",
    "cr2",
    "cr2_ik",
    "cr3_ik",
    "bootstrap_bca",
    "bootstrap_percentile",
    "bootstrap_t",
)
CANDIDATES = ("score_inverted", "mover_inverted", "score", "bootstrap_t_or_score")
#: Candidates built from two intervals: the lower of their lower bounds, the higher of their
#: upper bounds (computed after both parts).
UNIONS = {"bootstrap_t_or_score": ("bootstrap_t", "score")}
METHODS = LIBRARY_METHODS + CANDIDATES
# What paired_delta's and compare's method="auto" resolves to on this grid (K <= 100), and
# the method that widths are measured against (the default before bootstrap_t).
DEFAULT = auto_method(is_binary=False, n_clusters=100)
WIDTH_BASE = "cr2"
ITEM_CORRELATION = 0.5
GOAL_WORST, GOAL_GAP = 0.93, 0.015  # worst K >= 20 cell, mean |gap to 95%| over K >= 20


def score_inverted(a, b, codes, k, confidence=0.95):
    """Durkalski's cluster-robust score test inverted: the Delta0 with
    (D - Delta0 N)^2 <= t^2 sum_g (d_g - Delta0 n_g)^2, a quadratic inequality in Delta0."""
    d = np.bincount(codes, a - b, k)
    n = np.bincount(codes, None, k).astype(float)
    total, rows = d.sum(), n.sum()
    crit = stats.t.ppf(0.5 + confidence / 2, k - 1) ** 2
    qa = rows * rows - crit * (n @ n)
    qb = -2.0 * (total * rows - crit * (d @ n))
    qc = total * total - crit * (d @ d)
    disc = qb * qb - 4.0 * qa * qc
    if qa <= 0 or disc < 0:  # the test rejects no difference in [-1, 1]
        return -1.0, 1.0
    root = math.sqrt(disc)
    return max((-qb - root) / (2 * qa), -1.0), min((-qb + root) / (2 * qa), 1.0)


def mover_inverted(a, b, codes, k, confidence=0.95):
    """MOVER (Zou & Donner 2008) on the two inverted Korn-Graubard intervals."""
    sides = []
    for values in (a, b):
        sums = cluster_sums(values, codes, k)
        res = summarize_interval(
            sums,
            estimand="pooled",
            method="korn_graubard_inverted",
            confidence=confidence,
            is_binary=True,
        )
        residuals = np.bincount(codes, values, k) - res.estimate * sums.counts
        sides.append((res.estimate, res.low, res.high, residuals))
    (pa, la, ua, ea), (pb, lb, ub, eb) = sides
    scale = math.sqrt((ea @ ea) * (eb @ eb))
    r = float(ea @ eb) / scale if scale > 0 else 0.0
    delta = pa - pb
    below = (pa - la) ** 2 + (ub - pb) ** 2 - 2 * r * (pa - la) * (ub - pb)
    above = (ua - pa) ** 2 + (pb - lb) ** 2 - 2 * r * (ua - pa) * (pb - lb)
    return delta - math.sqrt(max(below, 0.0)), delta + math.sqrt(max(above, 0.0))


def score(a, b, codes, k, confidence=0.95):
    """The cluster score interval of ``clusterstats.core.score`` on the per-item differences
    (the score inversion above with the CR1 factor ``G/(G-1)``), clipped to [-1, 1]."""
    low, high = cluster_score_interval(cluster_sums(a - b, codes, k), "pooled", confidence)
    return max(low, -1.0), min(high, 1.0)


CANDIDATE_FUNCTIONS = {
    "score_inverted": score_inverted,
    "mover_inverted": mover_inverted,
    "score": score,
}


def cluster_rates(u, mean, icc):
    if icc == 0:
        return np.full_like(u, mean)
    a, b = mean * (1 - icc) / icc, (1 - mean) * (1 - icc) / icc
    return stats.beta.ppf(u, a, b)


def draw_pair(rng, k, m, cv, mean_a, mean_b, icc):
    sizes = _sizes(rng, (k,), m, cv)
    u = rng.random(k)
    pa, pb = cluster_rates(u, mean_a, icc), cluster_rates(u, mean_b, icc)
    codes = np.repeat(np.arange(k), sizes)
    v = rng.random(codes.shape[0])
    w = np.where(rng.random(codes.shape[0]) < ITEM_CORRELATION, v, rng.random(codes.shape[0]))
    return (v < pa[codes]).astype(float), (w < pb[codes]).astype(float), codes


def library_interval(a, b, codes, method, rng):
    """``paired_delta``'s interval (its code path, ``summarize_paired``) for one run per item."""
    ones, nan = np.ones(a.shape[0]), np.full(a.shape[0], np.nan)
    return summarize_paired(
        a,
        b,
        codes,
        estimand="pooled",
        method=method,
        confidence=0.95,
        single_run_binary=False,
        within_a=nan,
        runs_a=ones,
        within_b=nan,
        runs_b=ones,
        n_resamples=999,
        rng=rng,
    )


def run_cell(args):
    index, cell, reps = args
    k, m, cv, (mean_a, mean_b), icc = cell
    rng = np.random.default_rng([BASE_SEED, index])
    truth = mean_a - mean_b
    covered = dict.fromkeys(METHODS, 0)
    widths = {name: [] for name in METHODS}
    failures = dict.fromkeys(METHODS, 0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", clusterstats.ClusterStatsWarning)
        for _ in range(reps):
            a, b, codes = draw_pair(rng, k, m, cv, mean_a, mean_b, icc)
            bounds = {}
            for method in CANDIDATES:
                if method in UNIONS:
                    continue
                try:
                    low, high = CANDIDATE_FUNCTIONS[method](a, b, codes, k)
                except Exception:  # failures are what this study counts
                    failures[method] += 1
                    continue
                covered[method] += int(low <= truth <= high)
                widths[method].append(high - low)
                bounds[method] = (low, high)
            for method in LIBRARY_METHODS:
                try:
                    s = library_interval(a, b, codes, method, rng)
                except Exception:  # failures are what this study counts
                    failures[method] += 1
                    continue
                covered[method] += int(s.low <= truth <= s.high)
                widths[method].append(s.high - s.low)
                bounds[method] = (s.low, s.high)
            for method, parts in UNIONS.items():
                if not all(p in bounds for p in parts):
                    failures[method] += 1
                    continue
                low = min(bounds[p][0] for p in parts)
                high = max(bounds[p][1] for p in parts)
                covered[method] += int(low <= truth <= high)
                widths[method].append(high - low)
    return index, {
        name: (covered[name] / reps, float(np.median(widths[name] or [np.nan])), failures[name])
        for name in METHODS
    }


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--reps", type=int)
    parser.add_argument("--workers", type=int, default=2)
    args = parser.parse_args(argv)
    reps = args.reps or (100 if args.quick else 1000)
    ks = (10, 30) if args.quick else (10, 20, 30, 100)
    sizes = ((5, 0.8), (20, 0.0)) if args.quick else ((5, 0.0), (5, 0.8), (20, 0.0), (20, 0.8))
    means = ((0.5, 0.5), (0.08, 0.05)) if args.quick else ((0.5, 0.5), (0.35, 0.30), (0.08, 0.05))
    iccs = (0.3,) if args.quick else (0.1, 0.3, 0.6)
    cells = [
        (k, m, cv, mu, icc) for k, (m, cv), mu, icc in itertools.product(ks, sizes, means, iccs)
    ]
    start = time.perf_counter()
    with multiprocessing.Pool(args.workers) as pool:
        results = dict(pool.map(run_cell, [(i, c, reps) for i, c in enumerate(cells)]))
    seconds = time.perf_counter() - start

    def label(c):
        k, m, cv, (ma, mb), icc = c
        return f"K={k} m={m} {'eq' if cv == 0 else f'cv{cv:g}'} {ma:g} vs {mb:g} icc={icc:g}"

    summary = [
        f"| K | method | worst cell | where | mean abs gap to 95% | mean width / `{WIDTH_BASE}` "
        "| failures |",
        "|---|---|---|---|---|---|---|",
    ]
    verdict = {}
    for k_label, k_filter in (("≥ 20", lambda k: k >= 20), ("10", lambda k: k == 10)):
        chosen = [i for i, c in enumerate(cells) if k_filter(c[0])]
        if not chosen:
            continue
        for name in METHODS:
            cov = np.array([results[i][name][0] for i in chosen])
            ratio = np.mean([results[i][name][1] / results[i][WIDTH_BASE][1] for i in chosen])
            fails = sum(results[i][name][2] for i in chosen)
            worst = chosen[int(np.argmin(cov))]
            gap = float(np.mean(np.abs(cov - 0.95)))
            if k_label == "≥ 20":
                verdict[name] = (cov.min(), gap, ratio)
            summary.append(
                f"| {k_label} | `{name}`{' (default)' if name == DEFAULT else ''} | "
                f"{100 * cov.min():.1f} | {label(cells[worst])} | "
                f"{100 * gap:.2f} | {ratio:.2f} | {fails} |"
            )
    goals = [
        "| method | worst K ≥ 20 cell (goal ≥ 93) | mean gap K ≥ 20 (goal ≤ 1.5) | both met |",
        "|---|---|---|---|",
    ]
    met_by = []
    for name, (worst, gap, _) in verdict.items():
        met = bool(worst >= GOAL_WORST and gap <= GOAL_GAP)
        if met:
            met_by.append(name)
        goals.append(
            f"| `{name}` | {100 * worst:.1f} | {100 * gap:.2f} | {'yes' if met else '**no**'} |"
        )
    others = tuple(n for n in ("cr2", "bootstrap_t", *CANDIDATES) if n != DEFAULT)
    short = [
        f"| {label(c)} | {100 * results[i][DEFAULT][0]:.1f} | "
        + " | ".join(f"{100 * results[i][n][0]:.1f}" for n in others)
        + " |"
        for i, c in enumerate(cells)
        if c[0] >= 20 and results[i][DEFAULT][0] < GOAL_WORST
    ]
    table = [
        "| K | m | sizes | mean A | mean B | icc | " + " | ".join(f"`{n}`" for n in METHODS) + " |",
        "|---|---|---|---|---|---|" + "---|" * len(METHODS),
    ]
    for i, (k, m, cv, (ma, mb), icc) in enumerate(cells):
        entries = [f"{100 * results[i][n][0]:.1f} ({results[i][n][1]:.3g})" for n in METHODS]
        table.append(
            f"| {k} | {m} | {'equal' if cv == 0 else f'CV {cv:g}'} | {ma:g} | {mb:g} "
            f"| {icc:g} | " + " | ".join(entries) + " |"
        )
    page = "\n".join(
        [
            "# Coverage of paired differences",
            "",
            "<!-- generated by studies/coverage_paired.py; do not edit by hand -->",
            "",
            f"Produced by `python studies/coverage_paired.py` (base seed {BASE_SEED}, {reps:,} "
            f"dataset pairs per cell, bootstrap with 999 resamples, {seconds / 60:.1f} minutes) "
            f"with clusterstats {clusterstats.__version__}. Monte Carlo SE near 95%: "
            f"{100 * math.sqrt(0.95 * 0.05 / reps):.2f} points. The model is described in the "
            "script's docstring: correlated model pairs on shared clustered items, truth "
            f'`mean_a − mean_b`. `method="auto"` in `paired_delta` and `compare` is `{DEFAULT}` '
            "up to 2,000 clusters (CR2 above: see coverage-many-clusters.md). The last "
            f"{len(CANDIDATES)} columns are candidates (defined in the script's docstring: two "
            "from the literature on clustered paired proportions, the cluster score interval "
            "and its union with `bootstrap_t`), computed on the same datasets.",
            "",
            "## The goals",
            "",
            "The goal for the paired default: a worst cell of at least 93% and a mean "
            "|gap to 95%| of at most 1.5 points over the K ≥ 20 cells.",
            "",
            *goals,
            "",
            (
                "No method meets both. "
                if not met_by
                else f"Both are met by {', '.join(f'`{n}`' for n in met_by)}. "
            )
            + "The cluster-robust Wald intervals (CR1, CR2) and the percentile and BCa "
            "bootstraps miss where the outcome is rare and strongly clustered: a few clusters "
            "carry every discordant item, and datasets that miss them show a small difference "
            "with a small variance (the truth lies above the interval). The studentized "
            "bootstrap `bootstrap_t` (never narrower than the jackknife with the df of uneven "
            "sizes, `cr3_ik`, nor than CR2) corrects that skewness; its "
            f"price is width, {verdict['bootstrap_t'][2]:.2f} times CR2's median width on "
            "average over the K ≥ 20 cells, most of it in the rare, strongly clustered cells, "
            "where a dataset in which one or two clusters carry every discordant item cannot "
            "bound the difference on one side and the interval reaches ±1. The score "
            "inversion takes the variance under each candidate difference and gains a few "
            "points, not enough. MOVER on the inverted Korn–Graubard intervals over-covers "
            "(97–100%) in the rare cells: each model's interval is wide there (the ICC of a "
            "rare outcome cannot be learned from a few clusters), and one correlation cannot "
            "undo the two intervals' asymmetric spans. `bootstrap_t` is therefore the default "
            "of `paired_delta` and `compare` up to 2,000 clusters; its draws come from a "
            "fixed seed unless `rng` is given, its p-value is the larger of `cr3_ik`'s and the "
            "bootstrap-t test's (so it agrees with the interval), and above 2,000 clusters, "
            "where its cost grows and the skewness it corrects has faded, the default is "
            "CR2 (coverage-many-clusters.md).",
            "",
            f"K ≥ 20 cells where `{DEFAULT}` is below 93%, with the candidates there:",
            "",
            f"| cell | `{DEFAULT}` | " + " | ".join(f"`{n}`" for n in others) + " |",
            "|---|---|" + "---|" * len(others),
            *(short or ["| (none) | |" + " |" * len(others)]),
            "",
            "## Summary",
            "",
            *summary,
            "",
            "## Every cell",
            "",
            "Coverage in percent, the median width in brackets.",
            "",
            *table,
            "",
        ]
    )
    if args.quick:
        print(page)
    else:
        (REPO / "docs" / "coverage-paired.md").write_text(page)
        print(page)
        print("wrote docs/coverage-paired.md")
    return 0


if __name__ == "__main__":
    sys.exit(main())
