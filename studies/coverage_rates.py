"""Coverage of the binary-rate intervals on a wide grid, three cluster-rate models, two estimands.

Every method is computed on the same simulated datasets (common random numbers) by the code
path ``cluster_ci`` uses (``summarize_interval``, fallbacks included), for both estimands
(``pooled``: the share of all rows; ``cluster_mean``: the mean of the cluster shares).

Grid: clusters K in {10, 20, 30, 50, 100}; cluster size m in {1, 5, 20}, equal and (m > 1)
with size CV 0.8; mean in {0.02, 0.05, 0.15, 0.3, 0.5}; ICC in {0, 0.1, 0.3, 0.6}.

Besides the library's methods, the candidates of ``CANDIDATES`` are measured on the same
datasets: the cluster score interval (``clusterstats.core.score``) and its unions with
``korn_graubard_hybrid`` and ``korn_graubard_inverted``.

Cluster-rate models (``family``):

* ``beta``: ``p_j ~ Beta`` of the given mean and ICC (``clusterstats.simulate``'s model),
  on the whole grid, ``--reps`` datasets per cell;
* ``logit_normal``: ``logit p_j ~ N(a, s^2)`` with ``a, s`` solved so that ``E p_j`` is the mean
  and ``Var p_j = icc * mean * (1 - mean)`` (the same mean and ICC);
* ``size_difficulty``: Beta rates with harder clusters larger (``simulate``'s
  ``size_difficulty=True``); the pooled and the cluster-mean truths then differ
  (``clusterstats.core.simulation.truth``).

The two robustness models run on ICC > 0, m > 1, K in {10, 20, 30, 100} and mean in
{0.02, 0.05, 0.15, 0.5}, with half the datasets per cell (to bound the run time).

With one row per cluster (m = 1) the rows are independent Bernoulli(mean) whatever the model,
so those cells are computed **exactly**: coverage is the sum over x = 0..K of
``Binomial(K, mean).pmf(x)`` times whether the interval computed on x successes covers.

Summaries state the Monte Carlo floor: the mean |gap to 95%| and the expected worst cell that
a perfectly calibrated interval would show with the same number of datasets and cells.

Usage::

    python studies/coverage_rates.py            # writes docs/coverage-rates.md and .csv
    python studies/coverage_rates.py --quick    # K in {10, 30}, 30 datasets per cell, prints
"""

from __future__ import annotations

import argparse
import csv
import functools
import itertools
import math
import multiprocessing
import platform
import re
import sys
import time
import warnings
from pathlib import Path

import numpy as np
from scipy import optimize, stats

import clusterstats
from clusterstats.core.grouping import ClusterSums
from clusterstats.core.intervals import FEW_CLUSTERS, auto_method
from clusterstats.core.score import cluster_score_interval
from clusterstats.core.simulation import draw_cluster_sums, draw_clusters, truth
from clusterstats.core.summary import summarize_interval

REPO = Path(__file__).resolve().parents[1]
BASE_SEED = 20261202
CONFIDENCE = 0.95
TODAY = "korn_graubard_inverted"
NEW = "korn_graubard_hybrid"
METHODS = (TODAY, NEW, "korn_graubard_guarded", "korn_graubard", "wilson", "cr2", "cr2_ik")
#: Candidates for the default: the cluster score interval (``clusterstats.core.score``) and
#: its unions with the two model-based inversions (the lower of the lower bounds, the higher
#: of the upper bounds), united here from the bounds already computed; ``hybrid_or_score``
#: gives the numbers of the library's ``method="korn_graubard_hybrid_or_score"``
#: (``tests/stats/test_score_methods.py``). Listed after their parts. ``score_with_fallback`` is the
#: library's ``method="score"``: the same interval, with the Clopper-Pearson fallback where
#: the drawn rows do not vary (all fail, say), where the raw inversion has zero width.
CANDIDATES = ("score", "hybrid_or_score", "inverted_or_score", "score_with_fallback")
UNIONS = {"hybrid_or_score": NEW, "inverted_or_score": TODAY}
COLUMNS = METHODS + CANDIDATES
ESTIMANDS = ("pooled", "cluster_mean")
KS = (10, 20, 30, 50, 100)
SIZES = ((1, 0.0), (5, 0.0), (5, 0.8), (20, 0.0), (20, 0.8))
MEANS = (0.02, 0.05, 0.15, 0.3, 0.5)
ICCS = (0.0, 0.1, 0.3, 0.6)
FAMILIES = ("beta", "logit_normal", "size_difficulty")


SIDE_KS = (10, 20, 30, 100)
SIDE_MEANS = (0.02, 0.05, 0.15, 0.5)


def cells(family: str):
    for k, (m, cv), mean, icc in itertools.product(KS, SIZES, MEANS, ICCS):
        if family != "beta" and (icc == 0.0 or m == 1):
            continue  # the same model as beta at icc 0; m = 1 is exact and model-free
        if family != "beta" and (k not in SIDE_KS or mean not in SIDE_MEANS):
            continue  # a smaller grid for the two robustness models, to bound the run time
        if family == "beta" and m == 1 and icc > 0.0:
            continue  # m = 1: the ICC does not enter; one exact cell per (K, mean)
        yield (k, m, cv, mean, icc)


@functools.cache
def logit_normal_parameters(mean: float, icc: float) -> tuple[float, float]:
    """``(a, s)`` with ``E expit(a + s Z) = mean`` and ``Var = icc mean (1 - mean)``."""
    nodes, weights = np.polynomial.hermite_e.hermegauss(80)
    weights = weights / weights.sum()

    def moments(params):
        a, log_s = params
        p = 1.0 / (1.0 + np.exp(-(a + math.exp(log_s) * nodes)))
        return p @ weights, (p * p) @ weights

    def equations(params):
        first, second = moments(params)
        return [first - mean, (second - first**2) - icc * mean * (1 - mean)]

    start = [math.log(mean / (1 - mean)), math.log(max(0.3, 3 * math.sqrt(icc)))]
    solved = optimize.root(equations, start, method="lm", options={"xtol": 1e-14})
    # Levenberg-Marquardt stops on its step size; a Powell hybrid step from there polishes
    # the root to rounding error whatever scipy's version does with the tolerance.
    a, log_s = optimize.root(equations, solved.x, method="hybr").x
    assert max(abs(e) for e in equations([a, log_s])) < 1e-9, (mean, icc)
    return float(a), math.exp(log_s)


def draw(family, rng, reps, k, m, cv, mean, icc):
    if family == "logit_normal":
        a, s = logit_normal_parameters(mean, icc)
        base = draw_clusters(
            rng, (reps, k), cluster_size=m, mean=mean, icc=0.0, size_cv=cv, outcome="binary"
        )
        levels = 1.0 / (1.0 + np.exp(-(a + s * rng.standard_normal((reps, k)))))
        totals = rng.binomial(base.sizes, levels).astype(np.float64)
        n = base.sizes.astype(np.float64)
        return [ClusterSums(n[i], totals[i], totals[i]) for i in range(reps)]
    return draw_cluster_sums(
        rng,
        reps,
        k,
        cluster_size=m,
        mean=mean,
        icc=icc,
        size_cv=cv,
        outcome="binary",
        size_difficulty=family == "size_difficulty",
    )


def interval(sums, estimand, method):
    if method == "score":
        low, high = cluster_score_interval(sums, estimand, CONFIDENCE)
        return max(low, 0.0), min(high, 1.0)
    library_method = "score" if method == "score_with_fallback" else method
    try:
        found = summarize_interval(
            sums, estimand=estimand, method=library_method, confidence=CONFIDENCE, is_binary=True
        )
    except Exception:  # a failure is a result of the study, counted per cell
        return None
    return found.low, found.high


def run_cell(task):
    index, family, (k, m, cv, mean, icc), reps, columns = task
    targets = {e: mean for e in ESTIMANDS}
    if family == "size_difficulty":
        t = truth(m, mean, icc, True)
        targets = {"pooled": t.pooled, "cluster_mean": t.cluster_mean}
    out = {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", clusterstats.ClusterStatsWarning)
        if m == 1:  # exact: X ~ Binomial(K, mean)
            pmf = stats.binom.pmf(np.arange(k + 1), k, mean)
            datasets = [
                ClusterSums(np.ones(k), (np.arange(k) < x).astype(float), (np.arange(k) < x) * 1.0)
                for x in range(k + 1)
            ]
            weights = pmf
        else:
            rng = np.random.default_rng([BASE_SEED, index])
            datasets = draw(family, rng, reps, k, m, cv, mean, icc)
            weights = np.full(reps, 1.0 / reps)
        bounds = {}
        for estimand, method in itertools.product(ESTIMANDS, columns):
            covered = below = above = width = zero = failed = 0.0
            for d, (w, sums) in enumerate(zip(weights, datasets, strict=True)):
                if method in UNIONS:
                    parts = bounds[estimand, UNIONS[method], d], bounds[estimand, "score", d]
                    found = None
                    if None not in parts:
                        found = min(p[0] for p in parts), max(p[1] for p in parts)
                else:
                    found = interval(sums, estimand, method)
                bounds[estimand, method, d] = found
                if found is None:
                    failed += w
                    continue
                low, high = found
                target = targets[estimand]
                covered += w * (low <= target <= high)
                below += w * (target < low)
                above += w * (target > high)
                width += w * (high - low)
                zero += w * (high - low <= 0)
            out[(estimand, method)] = (covered, below, above, width, zero, failed)
    return index, out


def monte_carlo_floor(reps: int, n_cells: int) -> tuple[float, float]:
    """Mean |gap| (points) and expected worst coverage (%) of a calibrated interval."""
    x = np.arange(reps + 1)
    pmf = stats.binom.pmf(x, reps, CONFIDENCE)
    mean_gap = 100 * float(pmf @ np.abs(x / reps - CONFIDENCE))
    survival = 1.0 - np.cumsum(pmf)  # P(cell > x)
    survival_min = np.clip(survival, 0, 1) ** n_cells  # P(min > x)
    expected_min = float(np.sum(survival_min[:-1])) / reps  # E[min] = sum P(min > x) / reps
    return mean_gap, 100 * expected_min


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--reps", type=int)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument(
        "--render",
        action="store_true",
        help="rewrite docs/coverage-rates.md from docs/coverage-rates.csv without simulating",
    )
    parser.add_argument(
        "--add",
        metavar="METHOD",
        nargs="+",
        choices=COLUMNS,
        help="compute only these columns (and cr2, as a check that the datasets are the "
        "committed ones) and merge them into docs/coverage-rates.csv",
    )
    args = parser.parse_args(argv)
    if args.render:
        return render_from_csv()
    columns = COLUMNS
    if args.add:
        wanted = set(args.add) | {"cr2"}
        wanted |= {part for m in args.add if m in UNIONS for part in (UNIONS[m], "score")}
        columns = tuple(m for m in COLUMNS if m in wanted)
    reps = args.reps or (30 if args.quick else 2000)
    side_reps = max(reps // 2, 1)  # the two model-robustness families
    tasks, meta = [], []
    for family in FAMILIES:
        for cell in cells(family):
            if args.quick and cell[0] not in (10, 30):
                continue
            r = reps if family == "beta" else side_reps
            tasks.append((len(tasks), family, cell, r, columns))
            meta.append((family, cell, r))
    start = time.perf_counter()
    order = sorted(tasks, key=lambda t: -t[2][0] * t[2][1] * t[3])  # big cells first
    with multiprocessing.Pool(args.workers) as pool:
        results = {}
        for done, (index, out) in enumerate(pool.imap_unordered(run_cell, order), start=1):
            results[index] = out
            if done % 25 == 0 or done == len(order):
                elapsed = (time.perf_counter() - start) / 60
                print(f"{done}/{len(order)} cells, {elapsed:.1f} min", file=sys.stderr)
    minutes = (time.perf_counter() - start) / 60
    rows = []
    for i, (family, (k, m, cv, mean, icc), r) in enumerate(meta):
        for (estimand, method), (cov, lo, hi, width, zero, failed) in results[i].items():
            rows.append(
                dict(
                    family=family,
                    estimand=estimand,
                    method=method,
                    K=k,
                    m=m,
                    size_cv=cv,
                    mean=mean,
                    icc=icc,
                    reps="exact" if m == 1 else r,
                    coverage=round(100 * cov, 3),
                    miss_below=round(100 * lo, 3),
                    miss_above=round(100 * hi, 3),
                    mean_width=round(width, 6),
                    zero_width=round(100 * zero, 3),
                    failures=round(100 * failed, 3),
                )
            )
    if args.add:
        if args.quick:  # nothing to merge into: the page needs every column
            print(f"computed {len(rows)} rows of {', '.join(columns)} in {minutes:.1f} minutes")
            return 0
        return merge_columns(rows, sorted(set(args.add) | {"cr2"}), minutes)
    page = render(rows, reps, side_reps, minutes)
    if args.quick:
        print(page)
        return 0
    with open(REPO / "docs" / "coverage-rates.csv", "w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    (REPO / "docs" / "coverage-rates.md").write_text(page)
    print(page)
    return 0


def _cell_key(r) -> tuple:
    values = (float(r[key]) for key in ("size_cv", "mean", "icc"))
    return (r["family"], r["estimand"], r["method"], int(r["K"]), int(r["m"]), *values)


def merge_columns(rows: list[dict], methods: list[str], minutes: float) -> int:
    """Replace (or add) the columns ``methods`` of the committed CSV by ``rows``, computed on
    the same datasets: the seeds are per cell, so a column computed alone is the column a
    full run computes. ``cr2`` is always recomputed and must reproduce the committed one
    exactly, which shows that the datasets are the committed ones."""
    path = REPO / "docs" / "coverage-rates.csv"
    with open(path, newline="") as f:
        committed = list(csv.DictReader(f))
    fields = ("coverage", "miss_below", "miss_above", "mean_width", "zero_width", "failures")
    old = {_cell_key(r): r for r in committed if r["method"] == "cr2"}
    new = {_cell_key(r): r for r in rows if r["method"] == "cr2"}
    differ = [
        key
        for key in new
        if key not in old or any(float(old[key][f]) != float(new[key][f]) for f in fields)
    ]
    if differ or len(old) != len(new):
        print(
            f"cr2 differs from the committed CSV in {len(differ)} cells (e.g. {differ[:1]}): "
            "the datasets are not the committed ones; run the whole study instead",
            file=sys.stderr,
        )
        return 1
    kept = [r for r in committed if r["method"] not in methods]
    merged = kept + [{k: str(v) for k, v in r.items()} for r in rows if r["method"] in methods]

    def cell(r) -> tuple:  # the key without the method
        key = _cell_key(r)
        return key[:2] + key[3:]

    cells_in_order: dict[tuple, int] = {}
    for r in committed:
        cells_in_order.setdefault(cell(r), len(cells_in_order))
    method_order = {m: i for i, m in enumerate(COLUMNS)}
    merged.sort(key=lambda r: (cells_in_order[cell(r)], method_order[r["method"]]))
    with open(path, "w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=list(committed[0]))
        writer.writeheader()
        writer.writerows(merged)
    added = [f"`{m}`" for m in methods if m != "cr2"]
    what = (
        f"The columns {', '.join(added)} were" if len(added) > 1 else f"The column {added[0]} was"
    )
    note = (
        f"{what} added to the same datasets by `python studies/coverage_rates.py --add "
        f"{' '.join(m.strip('`') for m in added)}` in {minutes:.1f} minutes on 2 processes "
        "(`cr2`, recomputed with them, reproduced the committed cells exactly)."
    )
    print(f"merged {len(rows)} rows into {path.relative_to(REPO)}", file=sys.stderr)
    return render_from_csv(added_note=note)


def render_from_csv(added_note: str | None = None) -> int:
    """Re-render the page from the committed CSV (same numbers, e.g. after a layout change);
    the run time is carried over from the page it replaces."""
    page_path = REPO / "docs" / "coverage-rates.md"
    with open(REPO / "docs" / "coverage-rates.csv", newline="") as f:
        rows = list(csv.DictReader(f))
    for r in rows:
        for key in ("K", "m"):
            r[key] = int(r[key])
        for key in ("size_cv", "mean", "icc", "coverage", "miss_below", "miss_above"):
            r[key] = float(r[key])
        for key in ("mean_width", "zero_width", "failures"):
            r[key] = float(r[key])
        r["reps"] = r["reps"] if r["reps"] == "exact" else int(r["reps"])
    reps = max(r["reps"] for r in rows if r["family"] == "beta" and r["reps"] != "exact")
    side_reps = max(r["reps"] for r in rows if r["family"] != "beta")
    before = page_path.read_text()
    found = re.search(r"in ([\d.]+) minutes", before)
    minutes = float(found.group(1)) if found else math.nan
    # A page re-rendered keeps the notes of the columns added before, and a new note joins them.
    notes = re.findall(r"^The columns? .* added to the same datasets .*$", before, re.M)
    if added_note is not None:
        notes.append(added_note)
    page_path.write_text(render(rows, reps, side_reps, minutes, "\n\n".join(notes) or None))
    print(f"wrote {page_path.relative_to(REPO)}")
    return 0


def _label(r) -> str:
    sizes = "eq" if r["size_cv"] == 0 else f"cv{r['size_cv']:g}"
    return f"K={r['K']} m={r['m']} {sizes} mean={r['mean']:g} icc={r['icc']:g}"


def summarize(rows, family, estimand, method, today_width):
    sel = [
        r for r in rows if (r["family"], r["estimand"], r["method"]) == (family, estimand, method)
    ]
    big = [r for r in sel if r["K"] >= 20]
    k10 = [r for r in sel if r["K"] == 10]
    worst = min(big, key=lambda r: r["coverage"])
    worst10 = min(k10, key=lambda r: r["coverage"]) if k10 else None
    gap = float(np.mean([abs(r["coverage"] - 95) for r in big]))
    widths = {(_label(r)): r["mean_width"] for r in sel}
    ratio = float(np.mean([widths[c] / today_width[c] for c in widths if today_width[c] > 0]))
    return {
        "worst": worst["coverage"],
        "where": _label(worst),
        "gap": gap,
        "worst10": worst10["coverage"] if worst10 else math.nan,
        "width": ratio,
        "zero": sum(r["zero_width"] > 0 for r in sel),
        "failures": sum(r["failures"] > 0 for r in sel),
        "cells": len(sel),
        "big_cells": len(big),
        "misses": sorted((r for r in big if r["coverage"] < 94.0), key=lambda r: r["coverage"]),
    }


GOALS = (
    ("worst K ≥ 20 cell, beta model", "beta", "worst", ">=", 94.0),
    ("worst K ≥ 20 cell, logit-normal rates", "logit_normal", "worst", ">=", 94.0),
    ("worst K ≥ 20 cell, size related to difficulty", "size_difficulty", "worst", ">=", 94.0),
    ("mean abs gap to 95%, K ≥ 20, beta model", "beta", "gap", "<=", 1.4),
    ("worst K = 10 cell, beta model", "beta", "worst10", ">=", 93.0),
    ("cells with a zero-width interval or a failure, all models", None, "bad", "<=", 0),
)


#: Policies measured from the cells of their parts (not columns of the CSV), each a rule
#: naming the column a cell takes: ``auto`` is the library's ``method="auto"`` (the union
#: with the score interval for a ratio over uneven clusters, the pooled estimand with size
#: CV > 0, on 20 or more clusters; ``korn_graubard_hybrid`` otherwise, see
#: ``clusterstats.core.intervals.auto_method``); the others take the named method with 20
#: or more clusters and ``korn_graubard_hybrid`` below, since the score interval is often
#: unbounded or very wide with 10 clusters of uneven sizes.
def _auto_column(r) -> str:
    """The column of the method ``method="auto"`` resolves to in the cell of ``r``."""
    resolved = auto_method(
        is_binary=True,
        n_clusters=r["K"],
        uneven_ratio=r["estimand"] == "pooled" and float(r["size_cv"]) > 0,
    )
    return {"korn_graubard_hybrid_or_score": "hybrid_or_score"}.get(resolved, resolved)


POLICIES = {
    "auto": _auto_column,
    "hybrid_or_score_from_20": lambda r: "hybrid_or_score" if r["K"] >= FEW_CLUSTERS else NEW,
    "score_from_20": lambda r: "score_with_fallback" if r["K"] >= FEW_CLUSTERS else NEW,
}
POLICY_TEXT = {
    "auto": "the library's default: `hybrid_or_score` for the `pooled` estimand on clusters "
    f"of uneven sizes (size CV > 0) with 20 or more clusters, `{NEW}` otherwise",
    "hybrid_or_score_from_20": f"`hybrid_or_score` with 20 or more clusters and `{NEW}` below",
    "score_from_20": f"`score_with_fallback` with 20 or more clusters and `{NEW}` below",
}


def with_policies(rows: list[dict]) -> list[dict]:
    """``rows`` and the cells of each policy of :data:`POLICIES` whose parts are present."""
    present = {r["method"] for r in rows}
    by_cell: dict[tuple, dict[str, dict]] = {}
    for r in rows:
        key = _cell_key(r)
        by_cell.setdefault(key[:2] + key[3:], {})[r["method"]] = r
    policies = []
    for name, rule in POLICIES.items():
        columns = [rule(next(iter(methods.values()))) for methods in by_cell.values()]
        if set(columns) <= present:
            policies += [
                {**methods[column], "method": name}
                for methods, column in zip(by_cell.values(), columns, strict=True)
            ]
    return rows + policies


def _judged(value: float, sense: str, target: float, floor: float | None) -> str:
    """The value, in bold when it misses the target, with the Monte Carlo floor when the
    miss is one that noise alone explains."""
    met = value >= target if sense == ">=" else value <= target
    shown = f"{value:.0f}" if floor is None and sense == "<=" and target == 0 else f"{value:.2f}"
    if met:
        return shown
    if floor is not None and value >= floor:
        return f"**{shown}** (floor {floor:.1f})"
    return f"**{shown}**"


def verdict(rows, reps, side_reps) -> list[str]:
    """The goals of the binary default, for the default before, the default and the
    candidates. A worst cell below its target but above the Monte Carlo floor (the expected
    worst cell of a perfectly calibrated interval over as many cells) is a miss that noise
    alone explains."""
    lines = [
        "## The goals",
        "",
        "A miss is in bold. A worst cell is compared with the target and with the Monte Carlo "
        "floor: the expected worst cell of a perfectly calibrated interval over as many cells "
        "with as many datasets (the floor is below 94% here, so a calibrated interval would "
        "usually miss that target by noise alone); a miss above the floor is marked with it. "
        + " ".join(
            f"`{name}` is {text}, read from their cells." for name, text in POLICY_TEXT.items()
        ),
        "",
    ]
    present = {r["method"] for r in rows}
    shown_methods = [
        m for m in (TODAY, NEW, *UNIONS, "score_with_fallback", *POLICIES) if m in present
    ]
    lines += [
        "| goal | estimand | " + " | ".join(f"`{m}`" for m in shown_methods) + " |",
        "|---|---|" + "---|" * len(shown_methods),
    ]
    for name, family, stat, sense, target in GOALS:
        for estimand in ESTIMANDS:
            floor = None
            if stat == "worst":
                n_reps = reps if family == "beta" else side_reps
                n_cells = len({_label(r) for r in rows if r["family"] == family and r["K"] >= 20})
                floor = monte_carlo_floor(n_reps, n_cells)[1]
            shown = []
            for method in shown_methods:
                if family is None:
                    value = sum(
                        r["zero_width"] > 0 or r["failures"] > 0
                        for r in rows
                        if (r["estimand"], r["method"]) == (estimand, method)
                    )
                else:
                    sel = [r for r in rows if r["family"] == family]
                    today = {
                        _label(r): r["mean_width"]
                        for r in sel
                        if (r["estimand"], r["method"]) == (estimand, TODAY)
                    }
                    value = summarize(sel, family, estimand, method, today)[stat]
                shown.append(_judged(value, sense, target, floor))
            lines.append(
                f"| {name} ({sense.replace('>=', '≥').replace('<=', '≤')} {target:g}) | "
                f"`{estimand}` | " + " | ".join(shown) + " |"
            )
    for estimand in ESTIMANDS:
        sel = [r for r in rows if r["family"] == "beta"]
        base = {
            _label(r): r["mean_width"]
            for r in sel
            if (r["estimand"], r["method"]) == (estimand, NEW)
        }
        if not base:
            continue
        ratios = [
            f"{summarize(sel, 'beta', estimand, m, base)['width']:.3f}" for m in shown_methods
        ]
        lines.append(
            f"| mean width relative to `{NEW}`, beta model (no target) | `{estimand}` | "
            + " | ".join(ratios)
            + " |"
        )
    lines.append("")
    return lines


def render(rows, reps, side_reps, minutes, added_note: str | None = None) -> str:
    lines = [
        "# Coverage study: binary rates on a wide grid",
        "",
        "<!-- generated by studies/coverage_rates.py; do not edit by hand -->",
        "",
        f"Produced by `python studies/coverage_rates.py` (base seed {BASE_SEED}; {reps:,} "
        f"datasets per cell for the beta model, {side_reps:,} for the logit-normal and "
        "size-related-to-difficulty models; m = 1 cells exact by enumeration) with "
        f"clusterstats {clusterstats.__version__}, numpy {np.__version__}, Python "
        f"{platform.python_version()}, in {minutes:.1f} minutes on 2 processes. Every method is "
        "computed on the same datasets by the code path `cluster_ci` uses. The grid, the "
        "models and the exact cells are described in the script's docstring; every cell is "
        "in [coverage-rates.csv](coverage-rates.csv).",
        "",
        *([added_note, ""] if added_note else []),
        f"`{TODAY}` is the default before this study; `{NEW}` is the same test inversion "
        "whose design effect is never below the design-based (CR2) one, stretched for the df "
        "of uneven sizes; the default now (`auto`) is its union with the score interval for a "
        "ratio over clusters of uneven sizes and the hybrid otherwise (see [Estimands and "
        "methods](estimands-and-methods.md) and the real-data study, [coverage-real-data.md]"
        "(coverage-real-data.md), that chose it). Width is the mean interval width relative "
        f"to `{TODAY}` on the same cells (averaged over cells).",
        "",
    ]
    rows = with_policies(rows)
    lines += verdict(rows, reps, side_reps)
    for family in FAMILIES:
        sel = [r for r in rows if r["family"] == family]
        n_reps = reps if family == "beta" else side_reps
        n_big = len({_label(r) for r in sel if r["K"] >= 20 and r["m"] > 1})
        floor_gap, floor_worst = monte_carlo_floor(n_reps, max(n_big, 1))
        lines += [
            f"## Model `{family}`",
            "",
            f"Monte Carlo floor with {n_reps:,} datasets per cell: a perfectly calibrated "
            f"interval would show a mean |gap| of {floor_gap:.2f} points and an expected worst "
            f"of {floor_worst:.1f}% over the {n_big} simulated K ≥ 20 cells (exact m = 1 cells "
            "have no Monte Carlo error but discrete coverage).",
            "",
        ]
        for estimand in ESTIMANDS:
            today = {
                _label(r): r["mean_width"]
                for r in sel
                if (r["estimand"], r["method"]) == (estimand, TODAY)
            }
            lines += [
                f"### `{estimand}`",
                "",
                "| method | worst K ≥ 20 | where | mean abs gap K ≥ 20 | worst K = 10 | width | "
                "cells with zero width | cells with failures |",
                "|---|---|---|---|---|---|---|---|",
            ]
            present = [m for m in (*COLUMNS, *POLICIES) if any(r["method"] == m for r in sel)]
            stats_by = {m: summarize(sel, family, estimand, m, today) for m in present}
            for method in present:
                s = stats_by[method]
                lines.append(
                    f"| `{method}` | {s['worst']:.1f} | {s['where']} | {s['gap']:.2f} | "
                    f"{s['worst10']:.1f} | {s['width']:.3f} | {s['zero']} | {s['failures']} |"
                )
            misses = stats_by[NEW]["misses"]
            lines += [""]
            if misses:
                lines += [
                    f"K ≥ 20 cells where `{NEW}` is below 94%:",
                    "",
                    "| cell | coverage | miss below / above | " + f"`{TODAY}` |",
                    "|---|---|---|---|",
                ]
                for r in misses:
                    other = next(
                        o["coverage"]
                        for o in sel
                        if (o["estimand"], o["method"]) == (estimand, TODAY)
                        and _label(o) == _label(r)
                    )
                    lines.append(
                        f"| {_label(r)} | {r['coverage']:.1f} | {r['miss_below']:.1f} / "
                        f"{r['miss_above']:.1f} | {other:.1f} |"
                    )
                lines.append("")
            else:
                lines += [f"No K ≥ 20 cell where `{NEW}` is below 94%.", ""]
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    sys.exit(main())
