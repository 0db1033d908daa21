"""Coverage with crossed groupings: question × template, one-way by either vs two-way.

Each dataset is a fully crossed eval: ``Q`` questions, each asked under each of ``T``
templates once (``Q × T`` rows). A latent score is ``u_question + v_template + e`` with unit
variance, the question and template effects taking the shares ``icc_q`` and ``icc_t``:

- continuous outcome: the score itself plus a mean of 0.5 (truth 0.5);
- binary outcome: ``1[latent > -0.5244]`` (probit; truth Φ(0.5244) = 0.70).

Both groupings are random (new questions and new templates in every dataset), so the truth
is the population mean over both. Each dataset gets four intervals, by the code paths of
``cluster_ci``: one-way by question (``method="auto"``: ``korn_graubard_inverted`` for the
binary outcome, ``bootstrap_t`` for the continuous one), one-way by template (the same),
two-way ``crossed=True`` with its default (``korn_graubard`` / ``cr1``), and two-way ``cr1``
for the binary outcome as well.

Usage::

    python studies/coverage_crossed.py          # writes docs/coverage-crossed.md
    python studies/coverage_crossed.py --quick  # a smoke run, prints only
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
from clusterstats.core.crossed import summarize_crossed
from clusterstats.core.grouping import cluster_sums
from clusterstats.core.summary import summarize_interval

REPO = Path(__file__).resolve().parents[1]
BASE_SEED = 20261204
N_RESAMPLES = 999
THRESHOLD = -0.5244  # P(latent > -0.5244) = 0.70 for a standard normal latent score
BINARY_TRUTH = float(special.ndtr(-THRESHOLD))
CONTINUOUS_TRUTH = 0.5
METHODS = ("one-way question", "one-way template", "two-way auto", "two-way cr1")


def draw(rng: np.random.Generator, q: int, t: int, icc_q: float, icc_t: float, binary: bool):
    """One dataset: outcome values and the question and template of each row."""
    question = np.repeat(np.arange(q), t)
    template = np.tile(np.arange(t), q)
    latent = (
        rng.normal(0.0, math.sqrt(icc_q), q)[question]
        + rng.normal(0.0, math.sqrt(icc_t), t)[template]
        + rng.normal(0.0, math.sqrt(1.0 - icc_q - icc_t), q * t)
    )
    values = (latent > THRESHOLD).astype(float) if binary else latent + CONTINUOUS_TRUTH
    return values, question, template


def intervals(values, question, template, binary: bool, rng: np.random.Generator) -> dict:
    """The four intervals of one dataset, as (low, high)."""
    out = {}
    for name, codes in (("one-way question", question), ("one-way template", template)):
        s = summarize_interval(
            cluster_sums(values, codes),
            estimand="pooled",
            method="auto",
            confidence=0.95,
            is_binary=binary,
            n_resamples=N_RESAMPLES,
            rng=rng,
        )
        out[name] = (s.low, s.high)
    t = int(template.max()) + 1
    cells = question * t + template  # one row per cell: the cells are the rows
    sums = cluster_sums(values, cells)
    memberships = [np.arange(len(values)) // t, np.arange(len(values)) % t]
    for name, method in (("two-way auto", "auto"), ("two-way cr1", "cr1")):
        s = summarize_crossed(
            sums,
            memberships,
            names=("question", "template"),
            method=method,
            confidence=0.95,
            is_binary=binary,
        )
        out[name] = (s.low, s.high)
    return out


def run_cell(args: tuple[int, tuple, int]) -> tuple[int, dict]:
    index, (binary, q, t, icc_q, icc_t), reps = args
    rng = np.random.default_rng([BASE_SEED, index])
    truth = BINARY_TRUTH if binary else CONTINUOUS_TRUTH
    covered = dict.fromkeys(METHODS, 0)
    widths: dict[str, list[float]] = {name: [] for name in METHODS}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", clusterstats.ClusterStatsWarning)
        for _ in range(reps):
            values, question, template = draw(rng, q, t, icc_q, icc_t, binary)
            if binary and values.min() == values.max():
                continue  # not seen at these sizes; kept out rather than guessed
            for name, (low, high) in intervals(values, question, template, binary, rng).items():
                covered[name] += int(low <= truth <= high)
                widths[name].append(high - low)
    done = len(widths[METHODS[0]])
    return index, {name: (covered[name] / done, float(np.mean(widths[name]))) for name in METHODS}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--reps", type=int)
    parser.add_argument("--workers", type=int, default=2)
    args = parser.parse_args(argv)
    reps = args.reps or (40 if args.quick else 1000)
    sizes = ((30, 5), (100, 20)) if args.quick else ((30, 5), (30, 10), (100, 10), (100, 20))
    iccs = (
        ((0.1, 0.1), (0.3, 0.0))
        if args.quick
        else tuple(itertools.product((0.0, 0.1, 0.3), (0.0, 0.1, 0.3)))
    )
    cells = [
        (binary, q, t, icc_q, icc_t)
        for binary in (True, False)
        for (q, t) in sizes
        for icc_q, icc_t in iccs
    ]
    start = time.perf_counter()
    with multiprocessing.Pool(args.workers) as pool:
        results = dict(pool.map(run_cell, [(i, c, reps) for i, c in enumerate(cells)]))
    seconds = time.perf_counter() - start

    mc_se = math.sqrt(0.95 * 0.05 / reps)
    lines = []
    for binary in (True, False):
        kind = "binary (probit, truth 0.70)" if binary else "continuous (normal, truth 0.5)"
        lines += [
            f"### {kind}",
            "",
            "| questions × templates | ICC question | ICC template | one-way by question | "
            "one-way by template | two-way (default) | two-way `cr1` | width two-way ÷ "
            "by question |",
            "|---|---|---|---|---|---|---|---|",
        ]
        for i, (b, q, t, icc_q, icc_t) in enumerate(cells):
            if b != binary:
                continue
            r = results[i]
            cov = [f"{100 * r[name][0]:.1f}" for name in METHODS]
            ratio = r["two-way auto"][1] / r["one-way question"][1]
            lines.append(
                f"| {q} × {t} | {icc_q:g} | {icc_t:g} | " + " | ".join(cov) + f" | {ratio:.2f} |"
            )
        lines.append("")
    table = "\n".join(lines)

    def worst(name: str, binary: bool, *, both: bool) -> float:
        picked = [
            results[i][name][0]
            for i, (b, q, t, icc_q, icc_t) in enumerate(cells)
            if b == binary and (not both or (icc_q > 0 and icc_t > 0))
        ]
        return min(picked, default=math.nan)

    summary = []
    for binary in (True, False):
        kind = "binary" if binary else "continuous"
        summary.append(
            f"- {kind}, cells where both groupings matter: worst cell one-way by question "
            f"{100 * worst('one-way question', binary, both=True):.1f}%, by template "
            f"{100 * worst('one-way template', binary, both=True):.1f}%, two-way default "
            f"{100 * worst('two-way auto', binary, both=True):.1f}%; over every cell, two-way "
            f"default {100 * worst('two-way auto', binary, both=False):.1f}%"
        )
    print(table)
    print("\n".join(summary))
    print(f"{len(cells)} cells x {reps} datasets in {seconds:.0f} s; MC SE {100 * mc_se:.2f}")
    if args.quick:
        return 0
    processes = f"{args.workers} process" + ("es" if args.workers != 1 else "")
    page = f"""# Coverage with crossed groupings

Written by `python studies/coverage_crossed.py` (seed {BASE_SEED}, {reps:,} datasets per
cell, {seconds / 60:.1f} min on {processes}); Monte Carlo standard error of a
coverage near 95%: {100 * mc_se:.2f} points. Do not edit by hand.

Each dataset is a fully crossed eval, every question asked under every template once, with
a latent score `u_question + v_template + e` (unit variance; the ICCs are the shares of the
two effects; both groupings are drawn anew in every dataset, so the truth is the mean over
both populations). Binary outcome: the latent score above −0.5244 (truth 0.70); continuous:
the latent score plus 0.5. Every interval is 95%, computed by the code paths of
`cluster_ci`: one-way by question and by template with `method="auto"`
(`korn_graubard_inverted` for the binary outcome, `bootstrap_t` with {N_RESAMPLES}
resamples for the continuous one), and `crossed=True` with its default (`korn_graubard` /
`cr1` on the two-way variance, `min(Q, T) − 1` df) and with `cr1`.

{chr(10).join(summary)}

{table}
"""
    (REPO / "docs" / "coverage-crossed.md").write_text(page, encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
