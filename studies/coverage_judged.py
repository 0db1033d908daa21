"""Coverage of ``judged_ci``: a judge on every row, human labels on a few, rows clustered.

Every draw is a run whose every row a judge scored and some rows a human labelled; on the
same draw the study computes each interval below and checks it against the truth.

Intervals (``METHODS``), all through the library's code path after the adapter
(``build_judged_ci`` on a ``JudgedDesign`` of per-cluster sums, built here with
``np.bincount`` as ``clusterstats.adapters.judged`` builds them):

* ``judged``: the default, ``method="cr2"`` (the two-phase variance with CR2's leverage
  correction and, for the pooled mean, the Satterthwaite df of the labelled clusters' sizes;
  at target ``benchmark`` with clusters labelled from among more, the df of uneven sizes),
  ``weight="auto"`` (cross-fitted below 50 labelled clusters, tuned above);
* ``judged cr1``: the same with ``method="cr1"`` (CR1's ``G/(G-1)``, the labelled clusters
  less the strata as df), to show what CR2 changed; on clusters of equal sizes (the real
  populations) CR2's correction is CR1's, so there it is ``judged``'s interval, not computed
  again;
* ``tuned`` and ``cross-fitted``: the two weight options with ``method="cr2"`` (the one
  ``auto`` resolves to is the same interval, computed once);
* ``humans alone``: ``weight=0``, the clustered interval of the labelled rows (the result's
  ``human_low``/``human_high``);
* ``judge alone``: the judge's own clustered interval (``judge_low``/``judge_high``); it
  estimates the judge's mean, not the humans', and is reported to show how far that is;
* ``ppi_py iid``: ``ppi_py.ppi_mean_ci``'s construction with every ROW its own unit
  (``clusterstats.core.judged.independent`` on row sums, ``ddof=0``, the tuned weight: what
  ``method="ppi_py"`` computes, equal to ``ppi_py`` to a relative 1e-12,
  ``tests/conformance/test_judged_references.py``), which ignores the clusters;
* ``glide``: ``method="glide"`` (glide's construction: cluster means as units, labelled and
  unlabelled clusters independent, sample variances, a normal quantile), whole-cluster
  labelling only, estimand ``cluster_mean`` (the same number as ``pooled`` when every cluster
  has as many rows), target ``population`` (the only one it takes).

Targets: ``population``, the truth is the population's value (the pooled mean, or the mean
of cluster means, of the human score); ``benchmark``, the truth is the drawn run's own value
over all its rows (what the labels would give were every row of the draw labelled).

Labelling designs: ``clusters``, ``m`` of the ``C`` clusters labelled whole (simple random
sample); ``rows``, ``r_c`` of each cluster's ``n_c`` rows labelled (simple random sample
inside every cluster; ``r_c = round(share * n_c)``, at least 2 so that the benchmark target's
within-cluster variance exists, at most ``n_c``).

Simulated runs (``simulate``): ``C`` clusters of uneven sizes (1 + Poisson of a gamma, mean
20, CV 0.8, ``clusterstats.core.simulation``); the human score ``y = 3 + a_c + e``, ``a_c`` and
``e`` normal with variances ``icc`` and ``1 - icc``; the judge ``f = 3 + 0.5 + b_c +
rho (y - 3) + sqrt(1 - rho^2) u`` with ``u`` standard normal, so that its correlation with
``y`` is ``rho`` and its bias 0.5 when the bias is constant (``b_c = 0``); a varying bias
draws ``b_c`` normal with sd ``sqrt(max(icc, 0.1))``, the between-cluster sd of ``y`` (0.32
at ``icc = 0``). The population's value is 3 for both estimands (sizes do not depend on the
scores). The grid (``SCENARIOS``) is a base cell (ICC 0.3, correlation 0.5, constant bias,
20% labelled, 100 clusters), each factor varied alone (ICC 0, 0.1, 0.5; correlation 0.2, 0.9;
bias varying; 5% and 50% labelled; 10, 30 and 200 clusters), and corners: few labelled
clusters with ICC 0.5, a bias varying by cluster and correlation 0.2 (and 0.9).

Real populations (``real_populations``): HANNA (6 criteria x 5 judges) and Topical-Chat (4
criteria, the UniEval judge), each a finite population of clusters (96 prompts of 11 stories,
60 dialogue contexts of 6 responses). A draw takes ``C`` clusters WITH replacement (a cluster
drawn twice is two clusters); whole clusters: ``C`` = the population's count and ``m`` = 10,
20 or 30 labelled; rows: ``C`` = 10, 20 or 30 and 2 rows labelled in each. The population's
value is the mean of its ``human_score`` over all its clusters (every cluster has as many
rows, so ``pooled`` and ``cluster_mean`` are the same number and only ``pooled`` runs, the
``glide`` interval with ``cluster_mean`` checked against it).

Each cell draws from a generator seeded by ``(SEED, crc32 of the cell's key)``, and each
finished cell is appended to ``studies/cache/coverage_judged.jsonl`` (a rerun resumes).

The recheck (``--recheck``) reads the committed ``docs/coverage-judged.csv``, takes the cells of
``judged`` that miss their coverage goal (94% with 20 or more labelled clusters, 92% with 10 to
19) or are over the width goal, and draws their sets of draws again, ``RECHECK_DRAWS`` each,
from generators seeded by ``(SEED, crc32("recheck"), crc32 of the cell's key)``: a stream of
their own, since picking the worst cells of the main run picks their bad luck too. The sets
are taken worst first (the largest shortfall below the goal in points, then the width cells
by how far over) while their cost, estimated from the main run's ``cell_seconds`` scaled to
``RECHECK_DRAWS``, fits ``RECHECK_MINUTES`` on one core. Every method, estimand and target of
a set is kept (the same draws); each finished set is appended to
``studies/cache/coverage_judged_recheck.jsonl`` (a rerun resumes) and the recheck's CSV and
the page's section "Worst cells rechecked" are written again after each.

Usage::

    python studies/coverage_judged.py             # writes docs/coverage-judged.md, .csv
    python studies/coverage_judged.py --quick     # a few cells, 40 draws each, prints only
    python studies/coverage_judged.py --render    # the page again from the committed CSV
    python studies/coverage_judged.py --recheck   # docs/coverage-judged-recheck.csv, the page
    python studies/coverage_judged.py --recheck --quick  # a few sets, 20 draws, prints only
"""

from __future__ import annotations

import argparse
import csv
import dataclasses
import itertools
import json
import math
import multiprocessing
import os
import platform
import sys
import time
import warnings
import zlib
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from coverage_real_data import monte_carlo_floor, worst_cell_chance  # studies/, beside this
from scipy import stats

import clusterstats
from clusterstats._design import JudgedDesign
from clusterstats._options import JudgedOptions
from clusterstats.core import judged as core
from clusterstats.core.simulation import _sizes
from clusterstats.errors import ClusterStatsWarning, DegenerateDataError
from clusterstats.stats.judged import CROSS_FIT_BELOW, build_judged_ci

REPO = Path(__file__).resolve().parents[1]
CSV_PATH = REPO / "docs" / "coverage-judged.csv"
PAGE_PATH = REPO / "docs" / "coverage-judged.md"
CACHE_PATH = REPO / "studies" / "cache" / "coverage_judged.jsonl"
RECHECK_CSV = REPO / "docs" / "coverage-judged-recheck.csv"
RECHECK_CACHE = REPO / "studies" / "cache" / "coverage_judged_recheck.jsonl"
#: The recheck's draws per set (MC SE of a 95% coverage 0.49 points) and its budget on one core.
RECHECK_DRAWS, RECHECK_MINUTES = 2000, 100
RECHECK_STREAM = "recheck"
SEED = 20261206
CONFIDENCE = 0.95
METHODS = (
    "judged",
    "judged cr1",
    "tuned",
    "cross-fitted",
    "humans alone",
    "judge alone",
    "ppi_py iid",
    "glide",
)
#: The intervals that estimate the human labels' mean with the judge's help.
PPI_METHODS = ("judged", "judged cr1", "tuned", "cross-fitted", "ppi_py iid", "glide")
ESTIMANDS = ("pooled", "cluster_mean")
TARGETS = ("population", "benchmark")
BANDS = (("< 10", 0, 9), ("10–19", 10, 19), ("≥ 20", 20, 10**9))
MEAN_SIZE, SIZE_CV = 20, 0.8
MU, BIAS = 3.0, 0.5
#: Draws per cell (``draws_of``): 1,000 where a draw is cheap; cross-fitting leaves out each
#: labelled cluster in turn, so simulated cells with 30 to 99 labelled clusters get 500 and
#: those with 100 or more 250; the 204 real cells get 500 each, to fit the study in about 45
#: minutes on one core.
DRAWS, REAL_DRAWS, MANY_DRAWS, MOST_DRAWS = 1000, 500, 500, 250


@dataclass(frozen=True)
class Scenario:
    """A simulated population."""

    icc: float
    rho: float
    varying: bool
    share: float
    clusters: int
    role: str  # "base", "vary <factor>" or "corner"

    @property
    def name(self) -> str:
        bias = "varying" if self.varying else "constant"
        return (
            f"ICC {self.icc:g}, r {self.rho:g}, bias {bias}, {self.share:.0%} labelled, "
            f"C {self.clusters}"
        )


BASE = Scenario(0.3, 0.5, False, 0.2, 100, "base")


def scenarios() -> list[Scenario]:
    out = [BASE]
    for icc in (0.0, 0.1, 0.5):
        out.append(Scenario(icc, BASE.rho, False, BASE.share, BASE.clusters, "vary ICC"))
    for rho in (0.2, 0.9):
        out.append(Scenario(BASE.icc, rho, False, BASE.share, BASE.clusters, "vary r"))
    out.append(Scenario(BASE.icc, BASE.rho, True, BASE.share, BASE.clusters, "vary bias"))
    for share in (0.05, 0.5):
        out.append(Scenario(BASE.icc, BASE.rho, False, share, BASE.clusters, "vary share"))
    for clusters in (10, 30, 200):
        out.append(Scenario(BASE.icc, BASE.rho, False, BASE.share, clusters, "vary C"))
    corners = ((0.05, 100), (0.05, 200), (0.2, 30), (0.2, 100), (0.2, 200), (0.5, 10))
    corners += ((0.5, 30), (0.5, 200))
    for share, clusters in corners:
        out.append(Scenario(0.5, 0.2, True, share, clusters, "corner"))
    for share, clusters in ((0.05, 200), (0.2, 100)):
        out.append(Scenario(0.5, 0.9, True, share, clusters, "corner"))
    return out


@dataclass(frozen=True)
class Population:
    """A real finite population: each cluster's rows of human score and judge score."""

    name: str
    judge: str
    human: np.ndarray  # (clusters, rows per cluster)
    scores: np.ndarray

    @property
    def clusters(self) -> int:
        return int(self.human.shape[0])


JUDGES = {
    "judge_score": "ChatGPT",
    "judge_beluga13b": "Beluga-13B",
    "judge_mistral7b": "Mistral-7B",
    "judge_llama13b": "Llama-13B",
    "judge_orcaplatypus13b": "OrcaPlatypus-13B",
}


def _matrix(frame, column: str) -> np.ndarray:
    ordered = frame.sort_values(["cluster", "item"])
    sizes = ordered.groupby("cluster").size().to_numpy()
    if not np.all(sizes == sizes[0]):  # the draws below take equal clusters
        raise ValueError("clusters of unequal sizes")
    return ordered[column].to_numpy(float).reshape(sizes.size, sizes[0])


def real_populations() -> list[Population]:
    out = []
    hanna = clusterstats.datasets.load("hanna")
    for criterion in sorted(hanna["criterion"].unique()):
        rows = hanna[hanna["criterion"] == criterion]
        for column, judge in JUDGES.items():
            out.append(
                Population(
                    f"HANNA {criterion}",
                    judge,
                    _matrix(rows, "human_score"),
                    _matrix(rows, column),
                )
            )
    chat = clusterstats.datasets.load("topicalchat")
    for criterion in sorted(chat["criterion"].unique()):
        rows = chat[chat["criterion"] == criterion]
        out.append(
            Population(
                f"Topical-Chat {criterion}",
                "UniEval",
                _matrix(rows, "human_score"),
                _matrix(rows, "judge_score"),
            )
        )
    return out


@dataclass(frozen=True)
class Cell:
    """One cell: a population, a labelling design and its size."""

    source: str  # "simulated" or "real"
    population: str
    judge: str
    role: str
    design: str  # "clusters" or "rows"
    clusters: int
    labelled: int  # labelled clusters ("clusters"); labelled rows per cluster ("rows")
    share: float
    scenario: Scenario | None = None
    index: int = -1  # the real population's index

    @property
    def key(self) -> str:
        return (
            f"{self.source}|{self.population}|{self.judge}|{self.design}|{self.clusters}|"
            f"{self.labelled}|{self.share:g}"
        )

    @property
    def labelled_clusters(self) -> int:
        return self.labelled if self.design == "clusters" else self.clusters


def cells(pops: list[Population], *, quick: bool = False) -> list[Cell]:
    out = []
    for s in scenarios():
        for design in ("clusters", "rows"):
            m = round(s.share * s.clusters) if design == "clusters" else 0
            if design == "clusters" and m < 2:
                continue  # fewer than 2 labelled clusters: no interval
            out.append(
                Cell("simulated", s.name, "simulated", s.role, design, s.clusters, m, s.share, s)
            )
    for index, pop in enumerate(pops):
        for design, size in itertools.product(("clusters", "rows"), (10, 20, 30)):
            # whole clusters: `size` of all the population's clusters labelled; rows: 2 rows
            # labelled in each of `size` clusters drawn
            whole = design == "clusters"
            clusters, labelled = (pop.clusters, size) if whole else (size, 2)
            share = labelled / (pop.clusters if whole else pop.human.shape[1])
            cell = Cell("real", pop.name, pop.judge, "real", design, clusters, labelled, share)
            out.append(dataclasses.replace(cell, index=index))
    if quick:
        keep = {BASE.name, scenarios()[-3].name}
        out = [
            c
            for c in out
            if c.population in keep
            or (c.index == 0 and c.labelled_clusters == 10)
            or (
                c.population.startswith("Topical") and c.index == len(pops) - 1 and c.labelled == 20
            )
        ]
    return out


def draws_of(cell: Cell) -> int:
    """Fewer draws where cross-fitting is costly (many labelled clusters), and on the many
    real cells."""
    if cell.source == "real":
        return REAL_DRAWS
    if cell.labelled_clusters >= 100:
        return MOST_DRAWS
    if cell.labelled_clusters >= 30:
        return MANY_DRAWS
    return DRAWS


# -- a draw -----------------------------------------------------------------------------------


def simulate(rng: np.random.Generator, s: Scenario):
    """Cluster codes, human scores and judge scores of one simulated run."""
    sizes = _sizes(rng, (s.clusters,), MEAN_SIZE, SIZE_CV)
    codes = np.repeat(np.arange(s.clusters), sizes)
    n = codes.size
    a = rng.normal(0.0, math.sqrt(s.icc), s.clusters)
    y = MU + a[codes] + rng.normal(0.0, math.sqrt(1 - s.icc), n)
    bias = np.full(s.clusters, BIAS)
    if s.varying:
        bias += rng.normal(0.0, math.sqrt(max(s.icc, 0.1)), s.clusters)
    f = MU + bias[codes] + s.rho * (y - MU) + math.sqrt(1 - s.rho**2) * rng.normal(size=n)
    return codes, sizes, y, f


def resample(rng: np.random.Generator, pop: Population, clusters: int):
    """``clusters`` of the population's clusters, drawn with replacement."""
    chosen = rng.integers(0, pop.clusters, clusters)
    per = pop.human.shape[1]
    codes = np.repeat(np.arange(clusters), per)
    sizes = np.full(clusters, per)
    return codes, sizes, pop.human[chosen].ravel(), pop.scores[chosen].ravel()


def label(rng: np.random.Generator, cell: Cell, codes: np.ndarray, sizes: np.ndarray):
    """Which rows carry a human label, under the cell's design."""
    if cell.design == "clusters":
        chosen = rng.choice(sizes.size, cell.labelled, replace=False)
        return np.isin(codes, chosen)
    if cell.source == "real":
        wanted = np.minimum(sizes, cell.labelled)
    else:
        wanted = np.clip(np.round(cell.share * sizes), 2, sizes)
    # a random order inside each cluster (codes are sorted): its first r_c rows are labelled
    order = np.lexsort((rng.random(codes.size), codes))
    starts = np.concatenate([[0], np.cumsum(sizes)[:-1]])
    position = np.arange(codes.size) - starts[codes]
    labelled = np.zeros(codes.size, dtype=bool)
    labelled[order] = position < wanted[codes]
    return labelled


def sums_of(codes, n_clusters: int, y, f, labelled) -> core.JudgedSums:
    """The per-cluster sums ``clusterstats.adapters.judged`` builds from a frame."""
    v = labelled.astype(np.float64)
    yv, fv = y * v, f * v

    def total(values):
        return np.bincount(codes, weights=values, minlength=n_clusters)

    return core.JudgedSums(
        rows=total(np.ones(codes.size)),
        judge_total=total(f),
        labelled=total(v),
        weight=total(v),
        human=total(yv),
        judge=total(fv),
        human_sq=total(yv * y),
        judge_sq=total(fv * f),
        cross=total(yv * f),
        strata=np.zeros(n_clusters, dtype=np.intp),
    )


def design_of(sums: core.JudgedSums, y, f, labelled) -> JudgedDesign:
    return JudgedDesign(
        outcome="human",
        judge="judge",
        by=("cluster",),
        sums=sums,
        judge_range=(float(f.min()), float(f.max())),
        human_range=(float(y[labelled].min()), float(y[labelled].max())),
    )


def truths(codes, sizes, y, population: dict[str, float]) -> dict[tuple[str, str], float]:
    means = np.bincount(codes, weights=y, minlength=sizes.size) / sizes
    return {
        ("pooled", "population"): population["pooled"],
        ("cluster_mean", "population"): population["cluster_mean"],
        ("pooled", "benchmark"): float(y.mean()),
        ("cluster_mean", "benchmark"): float(means.mean()),
    }


def intervals(cell: Cell, codes, sizes, y, f, labelled, estimands):
    """Every method's ``(estimate, low, high, weight)`` per (estimand, target), on one draw;
    ``humans alone``'s bounds are the width's reference."""
    n_clusters = sizes.size
    sums = sums_of(codes, n_clusters, y, f, labelled)
    design = design_of(sums, y, f, labelled)
    rows = sums_of(np.arange(codes.size), codes.size, y, f, labelled)
    iid = core.independent(rows, weight="tuned", confidence=CONFIDENCE, ddof=0)
    iid_bounds = (iid.estimate, iid.lower, iid.upper, iid.weight)
    glide = None
    if cell.design == "clusters":
        found = build_judged_ci(
            design,
            JudgedOptions(estimand="cluster_mean", method="glide", confidence=CONFIDENCE),
        )
        glide = (found.estimate, found.low, found.high, found.weight)
    out = {}
    for estimand in estimands:
        for target in TARGETS:
            found = build_judged_ci(
                design, JudgedOptions(estimand=estimand, target=target, confidence=CONFIDENCE)
            )
            resolved = found.weight_method
            other_name = "tuned" if resolved == "cross-fitted" else "cross-fitted"
            other_options = JudgedOptions(
                estimand=estimand, target=target, weight=other_name, confidence=CONFIDENCE
            )
            try:
                other = build_judged_ci(design, other_options)
                other_bounds = (other.estimate, other.low, other.high, other.weight)
            except DegenerateDataError:
                # e.g. a weight tuned on 2 labelled clusters fits them exactly: the variance
                # is 0 and no interval is given, which counts as a miss
                other_bounds = (math.nan,) * 4
            equal_sizes = bool(np.all(sizes == sizes[0]))
            cr1 = found
            if not equal_sizes:
                # clusters of equal sizes (the real populations) make CR2's leverage
                # correction CR1's G/(G-1) and its Satterthwaite df G - 1: the same interval
                # (to 2e-15 relative on 1,200 checks), so it is computed once
                cr1 = build_judged_ci(
                    design,
                    JudgedOptions(
                        estimand=estimand, target=target, method="cr1", confidence=CONFIDENCE
                    ),
                )
            here = {
                "judged": (found.estimate, found.low, found.high, found.weight),
                "judged cr1": (cr1.estimate, cr1.low, cr1.high, cr1.weight),
                resolved: (found.estimate, found.low, found.high, found.weight),
                other_name: other_bounds,
                "humans alone": (found.human_estimate, found.human_low, found.human_high, 0.0),
                "judge alone": (found.judge_estimate, found.judge_low, found.judge_high, 1.0),
                "ppi_py iid": iid_bounds,
            }
            takes_glide = estimand == "cluster_mean" or equal_sizes
            if glide is not None and target == "population" and takes_glide:
                here["glide"] = glide
            out[(estimand, target)] = here
    return out


def run_cell(
    cell: Cell, pops: list[Population], draws: int, *, stream: str | None = None
) -> list[dict]:
    """Every method's rows of one set of draws; ``stream`` names a seed stream apart from
    the main run's (the recheck's)."""
    key = zlib.crc32(cell.key.encode())
    seed = [SEED, key] if stream is None else [SEED, zlib.crc32(stream.encode()), key]
    rng = np.random.default_rng(seed)
    if cell.source == "simulated":
        population = {"pooled": MU, "cluster_mean": MU}
        estimands = ESTIMANDS
    else:
        pop = pops[cell.index]
        value = float(pop.human.mean())  # equal clusters: both estimands
        population = {"pooled": value, "cluster_mean": value}
        estimands = ("pooled",)
    # per (estimand, target, method): covered, below, above, width, width ÷ humans', error,
    # weight, draws counted
    tally: dict[tuple[str, str, str], np.ndarray] = {}
    labelled_rows = 0.0
    start = time.perf_counter()
    with warnings.catch_warnings():
        # FewClustersWarning and JudgeScaleWarning are what the cells are about
        warnings.simplefilter("ignore", ClusterStatsWarning)
        for _ in range(draws):
            if cell.source == "simulated":
                codes, sizes, y, f = simulate(rng, cell.scenario)
            else:
                codes, sizes, y, f = resample(rng, pop, cell.clusters)
            labelled = label(rng, cell, codes, sizes)
            labelled_rows += labelled.mean()
            truth = truths(codes, sizes, y, population)
            found = intervals(cell, codes, sizes, y, f, labelled, estimands)
            for (estimand, target), by_method in found.items():
                _, h_low, h_high, _ = by_method["humans alone"]
                t = truth[(estimand, target)]
                for method, (estimate, low, high, weight) in by_method.items():
                    counts = tally.setdefault((estimand, target, method), np.zeros(9))
                    if math.isnan(low):
                        counts[7:] += (1, 1)  # no interval: a miss, out of the means
                        continue
                    counts += (
                        low <= t <= high,
                        t < low,
                        t > high,
                        high - low,
                        (high - low) / (h_high - h_low),
                        estimate - t,
                        weight,
                        1,
                        0,
                    )
    seconds = time.perf_counter() - start
    rows = []
    for (estimand, target, method), counts in tally.items():
        n = counts[7]
        p = counts[0] / n
        answered = max(n - counts[8], 1)
        rows.append(
            {
                "source": cell.source,
                "population": cell.population,
                "judge": cell.judge,
                "role": cell.role,
                "design": cell.design,
                "C": cell.clusters,
                "labelled_clusters": cell.labelled_clusters,
                "rows_per_cluster": cell.labelled if cell.design == "rows" else "",
                "labelled_share": round(labelled_rows / draws, 4),
                "estimand": estimand,
                "target": target,
                "method": method,
                "draws": int(n),
                "coverage": round(100 * p, 2),
                "mc_se": round(100 * math.sqrt(max(p * (1 - p), 1e-12) / n), 2),
                "miss_below": round(100 * counts[1] / n, 2),
                "miss_above": round(100 * counts[2] / n, 2),
                "mean_width": round(counts[3] / answered, 5),
                "width_ratio": round(counts[4] / answered, 4),
                "mean_error": round(counts[5] / answered, 5),
                "mean_weight": round(counts[6] / answered, 4),
                "no_interval": int(counts[8]),
                "cell_seconds": round(seconds, 1),
            }
        )
    return rows


# -- running ----------------------------------------------------------------------------------


def read_cache(path: Path) -> dict[str, list[dict]]:
    done = {}
    if path.exists():
        for line in path.read_text().splitlines():
            if line.strip():
                entry = json.loads(line)
                done[entry["key"]] = entry["rows"]
    return done


_POPULATIONS: list = []


def run_jobs(
    jobs: list[tuple[Cell, int, str | None]], pops, workers: int
) -> Iterator[tuple[int, list[dict]]]:
    """Each job's rows with its index, as they finish. Every set of draws is seeded by its
    own key, so the rows do not depend on ``workers`` or on the order the sets finish in."""
    if workers <= 1:
        for index, (cell, draws, stream) in enumerate(jobs):
            yield index, run_cell(cell, pops, draws, stream=stream)
        return
    _POPULATIONS[:] = pops
    context = multiprocessing.get_context("fork")
    with context.Pool(workers) as pool:
        yield from pool.imap_unordered(_indexed, list(enumerate(jobs)))


def _indexed(item: tuple[int, tuple[Cell, int, str | None]]) -> tuple[int, list[dict]]:
    """One set of draws in a worker process (the populations are the parent's, forked)."""
    index, (cell, draws, stream) = item
    return index, run_cell(cell, _POPULATIONS, draws, stream=stream)


def run(
    cell_list: list[Cell], pops, *, quick: bool, draws: int | None, workers: int = 1
) -> list[dict]:
    cache = {} if quick else read_cache(CACHE_PATH)
    if not quick:
        CACHE_PATH.parent.mkdir(parents=True, exist_ok=True)
    counts = [40 if quick else (draws or draws_of(cell)) for cell in cell_list]
    keys = [f"{cell.key}|{n}" for cell, n in zip(cell_list, counts, strict=True)]
    pending = [i for i, key in enumerate(keys) if key not in cache]
    jobs = [(cell_list[i], counts[i], None) for i in pending]
    start = time.perf_counter()
    for finished, (job, found) in enumerate(run_jobs(jobs, pops, workers), start=1):
        index = pending[job]
        if not quick:
            with open(CACHE_PATH, "a") as f:
                f.write(json.dumps({"key": keys[index], "rows": found}) + "\n")
        cache[keys[index]] = found
        minutes = (time.perf_counter() - start) / 60
        print(
            f"{finished}/{len(jobs)} {cell_list[index].key} ({counts[index]} draws, "
            f"{found[0]['cell_seconds']:.0f} s; {minutes:.1f} min)",
            file=sys.stderr,
            flush=True,
        )
    return [row for key in keys for row in cache[key]]


def recheck_picks(rows: list[dict]) -> tuple[list[dict], list[dict]]:
    """The cells of ``judged`` below their coverage goal, largest shortfall first, and those
    over the width goal (and not below the coverage goal), furthest over first."""
    judged = [r for r in rows if r["method"] == "judged"]
    short = sorted(
        (r for r in judged if r["coverage"] < _goal(r)),
        key=lambda r: (r["coverage"] - _goal(r), r["mc_se"]),
    )
    wide = sorted(
        (r for r in judged if r["width_ratio"] > width_goal(r) and r["coverage"] >= _goal(r)),
        key=lambda r: -r["width_ratio"] / width_goal(r),
    )
    return short, wide


@dataclass(frozen=True)
class Recheck:
    """A set of draws to draw again: its key (``_cell_key`` less estimand and target), the
    picked cells in it and its estimated seconds at ``RECHECK_DRAWS``."""

    key: tuple
    picked: tuple
    seconds: float


def recheck_plan(
    rows: list[dict], *, minutes: float = RECHECK_MINUTES
) -> tuple[list[Recheck], list[Recheck]]:
    """The sets of draws holding the picked cells, split into those that fit ``minutes``
    (taken in turn while they fit) and those left out. First the cells each of which decides
    a goal (the worst of each coverage band, every cell over the width goal), then the other
    misses, the largest shortfall first."""
    short, wide = recheck_picks(rows)
    deciding = [
        min(band, key=lambda r: r["coverage"] - _goal(r))
        for name, _, _ in BANDS
        if (band := [r for r in short if _band(r["labelled_clusters"]) == name])
    ]
    sets: dict[tuple, list[dict]] = {}
    ordered = deciding + wide + [r for r in short if r not in deciding]
    for r in ordered:
        sets.setdefault(_cell_key(r)[:6], []).append(r)
    taken, left, spent = [], [], 0.0
    for key, picked in sets.items():
        first = picked[0]
        # the set's time scales with its draws (every draw costs the same on average)
        seconds = first["cell_seconds"] * RECHECK_DRAWS / first["draws"]
        entry = Recheck(key, tuple(picked), seconds)
        if spent + seconds <= 60 * minutes:
            taken.append(entry)
            spent += seconds
        else:
            left.append(entry)
    return taken, left


def read_recheck() -> list[dict]:
    return read_rows(RECHECK_CSV) if RECHECK_CSV.exists() else []


def write_csv(path: Path, rows: list[dict]) -> None:
    with open(path, "w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)


def recheck(pops: list[Population], *, quick: bool, workers: int = 1) -> int:
    """Draw the worst cells' sets again under their own seed stream (``--recheck``)."""
    main_rows = read_rows(CSV_PATH)
    taken, _ = recheck_plan(main_rows)
    by_key = {
        (c.source, c.population, c.judge, c.design, c.clusters, c.labelled_clusters): c
        for c in cells(pops)
    }
    if quick:
        # one simulated and one real set, and the first set picked for its width alone
        firsts = [next(e for e in taken if e.key[0] == part) for part in ("simulated", "real")]
        widths = [e for e in taken if all(r["coverage"] >= _goal(r) for r in e.picked)]
        taken = firsts + widths[:1]
    draws = 20 if quick else RECHECK_DRAWS
    cache = {} if quick else read_cache(RECHECK_CACHE)
    RECHECK_CACHE.parent.mkdir(parents=True, exist_ok=True)
    cell_of = [by_key[entry.key] for entry in taken]
    keys = [f"{cell.key}|{draws}|{RECHECK_STREAM}" for cell in cell_of]
    pending = [i for i, key in enumerate(keys) if key not in cache]
    jobs = [(cell_of[i], draws, RECHECK_STREAM) for i in pending]
    start = time.perf_counter()
    for finished, (job, found) in enumerate(run_jobs(jobs, pops, workers), start=1):
        index = pending[job]
        cache[keys[index]] = found
        if not quick:
            with open(RECHECK_CACHE, "a") as f:
                f.write(json.dumps({"key": keys[index], "rows": found}) + "\n")
        print(
            f"recheck {finished}/{len(jobs)} {cell_of[index].key} ({draws} draws, "
            f"{found[0]['cell_seconds']:.0f} s, estimated "
            f"{taken[index].seconds * draws / RECHECK_DRAWS:.0f} s; "
            f"{(time.perf_counter() - start) / 60:.1f} min)",
            file=sys.stderr,
            flush=True,
        )
        if not quick:
            # written after every set: a run stopped early leaves its finished sets shown,
            # in the plan's order
            done = [row for key in keys if key in cache for row in cache[key]]
            write_csv(RECHECK_CSV, done)
            PAGE_PATH.write_text(render(main_rows, done))
    done = [row for key in keys if key in cache for row in cache[key]]
    if quick:
        print("\n".join(recheck_section(main_rows, done)))
    return 0


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="a few cells, 40 draws, prints")
    parser.add_argument("--draws", type=int, help="draws per cell (default: draws_of)")
    parser.add_argument("--render", action="store_true", help="the page from the committed CSV")
    parser.add_argument(
        "--recheck", action="store_true", help="the worst cells again, RECHECK_DRAWS draws"
    )
    parser.add_argument(
        "--workers", type=int, default=1, help="processes (each set of draws is seeded alone)"
    )
    args = parser.parse_args(argv)
    if args.render:
        PAGE_PATH.write_text(render(read_rows(CSV_PATH), read_recheck()))
        print(f"wrote {PAGE_PATH.relative_to(REPO)}")
        return 0
    pops = real_populations()
    if args.recheck:
        return recheck(pops, quick=args.quick, workers=args.workers)
    rows = run(
        cells(pops, quick=args.quick),
        pops,
        quick=args.quick,
        draws=args.draws,
        workers=args.workers,
    )
    if args.quick:
        print(render(rows))
        return 0
    page = render(rows, read_recheck())
    write_csv(CSV_PATH, rows)
    PAGE_PATH.write_text(page)
    print(page)
    return 0


INT_FIELDS = ("C", "labelled_clusters", "draws", "no_interval")
TEXT_FIELDS = (
    "source",
    "population",
    "judge",
    "role",
    "design",
    "rows_per_cluster",
    "estimand",
    "target",
    "method",
)


def read_rows(path: Path) -> list[dict]:
    with open(path, newline="") as f:
        rows = list(csv.DictReader(f))
    for r in rows:
        for key, value in r.items():
            if key in INT_FIELDS:
                r[key] = int(value)
            elif key not in TEXT_FIELDS:
                r[key] = float(value)
    return rows


# -- the page ---------------------------------------------------------------------------------


def _band(m: int) -> str:
    return next(name for name, low, high in BANDS if low <= m <= high)


def _where(r: dict) -> str:
    who = r["population"] if r["source"] == "simulated" else f"{r['population']}, {r['judge']}"
    design = (
        f"{r['labelled_clusters']} of {r['C']} clusters"
        if r["design"] == "clusters"
        else f"rows in {r['C']} clusters"
    )
    return f"{who}; {design}; {r['estimand']}, {r['target']}"


def _cell_key(r: dict) -> tuple:
    return (
        r["source"],
        r["population"],
        r["judge"],
        r["design"],
        r["C"],
        r["labelled_clusters"],
        r["estimand"],
        r["target"],
    )


def width_goal(r: dict) -> float:
    return 1 + 1 / r["labelled_clusters"]


def goal_rows(rows: list[dict], method: str) -> list[tuple[str, str, bool, str]]:
    """(goal, value, met, where) for ``method`` over every cell it ran in."""
    mine = [r for r in rows if r["method"] == method]
    out = []
    for band, target in (("≥ 20", 94.0), ("10–19", 92.0)):
        sel = [r for r in mine if _band(r["labelled_clusters"]) == band]
        if not sel:
            continue
        worst = min(sel, key=lambda r: r["coverage"])
        out.append(
            (
                f"worst cell, {band} labelled clusters ≥ {target:g}%",
                f"{worst['coverage']:.1f} ± {worst['mc_se']:.1f}",
                worst["coverage"] >= target,
                _where(worst),
            )
        )
    over = [r for r in mine if r["width_ratio"] > width_goal(r)]
    # the cell furthest over its own goal, with its own ratio and goal
    far = max(over, key=lambda r: r["width_ratio"] / width_goal(r), default=None)
    out.append(
        (
            "mean width ≤ humans alone × (1 + 1/labelled clusters), every cell",
            f"{len(over)} of {len(mine)} cells over",
            not over,
            f"{_where(far)} ({far['width_ratio']:.2f} × against {width_goal(far):.2f})"
            if far
            else "",
        )
    )
    return out


def summary_table(rows: list[dict]) -> list[str]:
    lines = [
        "| method | "
        + " | ".join(f"worst {b} | median {b}" for b, _, _ in BANDS)
        + " | median width ÷ humans' | cells |",
        "|---|" + "---|---|" * len(BANDS) + "---|---|",
    ]
    for method in METHODS:
        mine = [r for r in rows if r["method"] == method]
        if not mine:
            continue
        entries = []
        for band, _, _ in BANDS:
            cov = [r["coverage"] for r in mine if _band(r["labelled_clusters"]) == band]
            entries += [f"{min(cov):.1f}", f"{np.median(cov):.1f}"] if cov else ["–", "–"]
        ratio = np.median([r["width_ratio"] for r in mine])
        lines.append(f"| `{method}` | " + " | ".join(entries) + f" | {ratio:.2f} | {len(mine)} |")
    return lines


def cells_table(rows: list[dict], source: str) -> list[str]:
    sel = [r for r in rows if r["source"] == source]
    keyed: dict[tuple, dict] = {}
    for r in sel:
        keyed.setdefault(_cell_key(r), {})[r["method"]] = r
    lines = [
        "| population | design | labelled clusters | estimand | target | "
        + " | ".join(f"`{m}`" for m in METHODS)
        + " | width ÷ humans' (`judged`) |",
        "|---|---|---|---|---|" + "---|" * len(METHODS) + "---|",
    ]
    for by_method in keyed.values():
        first = by_method["judged"]
        who = (
            first["population"]
            if source == "simulated"
            else (f"{first['population']}, {first['judge']}")
        )
        design = (
            f"clusters, C {first['C']}"
            if first["design"] == "clusters"
            else f"rows ({first['labelled_share']:.0%}), C {first['C']}"
        )
        entries = []
        for m in METHODS:
            r = by_method.get(m)
            if r is None:
                entries.append("–")
                continue
            text = f"{r['coverage']:.1f}"
            if m in PPI_METHODS and r["coverage"] < _goal(r):
                text = f"**{text}**"
            entries.append(text)
        lines.append(
            f"| {who} | {design} | {first['labelled_clusters']} | {first['estimand']} | "
            f"{first['target']} | " + " | ".join(entries) + f" | {first['width_ratio']:.2f} |"
        )
    return lines


def hanna_gain(rows: list[dict], design: str, size: int) -> list[str]:
    """Width of ``judged`` over humans alone on HANNA, per criterion and judge."""
    sel = {
        (r["population"], r["judge"]): r
        for r in rows
        if r["source"] == "real"
        and r["population"].startswith("HANNA")
        and r["method"] == "judged"
        and r["target"] == "population"
        and r["design"] == design
        and (r["labelled_clusters"] if design == "clusters" else r["C"]) == size
    }
    if not sel:
        return []
    judges = list(JUDGES.values())
    criteria = sorted({p for p, _ in sel})
    lines = [
        "| criterion | " + " | ".join(judges) + " |",
        "|---|" + "---|" * len(judges),
    ]
    for criterion in criteria:
        entries = []
        for judge in judges:
            r = sel.get((criterion, judge))
            entries.append(
                f"{r['width_ratio']:.2f} ({r['coverage']:.1f}; λ {r['mean_weight']:.2f})"
                if r
                else "–"
            )
        lines.append(f"| {criterion.removeprefix('HANNA ')} | " + " | ".join(entries) + " |")
    mean = np.mean([r["width_ratio"] for r in sel.values()])
    lines += ["", f"Mean over the {len(sel)} populations: {mean:.2f}."]
    return lines


def _median(rows: list[dict], key: str = "coverage") -> float:
    return float(np.median([r[key] for r in rows])) if rows else math.nan


def _pairs(rows: list[dict], a: str, b: str, keep) -> list[tuple[dict, dict]]:
    """The cells where both ``a`` and ``b`` ran and ``keep`` holds, as (a's row, b's row)."""
    by_cell: dict[tuple, dict] = {}
    for r in rows:
        by_cell.setdefault(_cell_key(r), {})[r["method"]] = r
    return [(c[a], c[b]) for c in by_cell.values() if a in c and b in c and keep(c[a])]


def comparisons(rows: list[dict]) -> list[str]:
    """The questions about the defaults, answered from the cells (same draws)."""
    lines = [
        "## The choices behind the default, on the same draws",
        "",
        "| question | cells | coverage (median; worst) | mean width ÷ humans' (median) |",
        "|---|---|---|---|",
    ]

    def row(question: str, pairs: list[tuple[dict, dict]], names: tuple[str, str]) -> None:
        if not pairs:
            return
        cov = "; ".join(
            f"`{n}` {_median(side):.1f} ({min(r['coverage'] for r in side):.1f})"
            for n, side in zip(names, zip(*pairs, strict=True), strict=True)
        )
        width = "; ".join(
            f"`{n}` {_median(side, 'width_ratio'):.2f}"
            for n, side in zip(names, zip(*pairs, strict=True), strict=True)
        )
        lines.append(f"| {question} | {len(pairs)} | {cov} | {width} |")

    few = CROSS_FIT_BELOW
    for part in ("simulated", "real"):
        row(
            f"{part}: cross-fitted or tuned weight, fewer than {few} labelled clusters",
            _pairs(
                rows,
                "cross-fitted",
                "tuned",
                lambda r, part=part: r["source"] == part and r["labelled_clusters"] < few,
            ),
            ("cross-fitted", "tuned"),
        )
    row(
        f"simulated: cross-fitted or tuned weight, {few} or more labelled clusters",
        _pairs(
            rows,
            "cross-fitted",
            "tuned",
            lambda r: r["source"] == "simulated" and r["labelled_clusters"] >= few,
        ),
        ("cross-fitted", "tuned"),
    )
    for estimand in ESTIMANDS:
        row(
            f"simulated, estimand `{estimand}`: the default beside the humans alone",
            _pairs(
                rows,
                "judged",
                "humans alone",
                lambda r, e=estimand: r["source"] == "simulated" and r["estimand"] == e,
            ),
            ("judged", "humans alone"),
        )
    for target in TARGETS:
        for design in ("clusters", "rows"):
            row(
                f"target `{target}`, labelled by {design}: the default beside the humans alone",
                _pairs(
                    rows,
                    "judged",
                    "humans alone",
                    lambda r, t=target, d=design: r["target"] == t and r["design"] == d,
                ),
                ("judged", "humans alone"),
            )
    for band, low, high in BANDS:
        # the mean of cluster means and the real populations' equal clusters: CR2 is CR1
        row(
            f"simulated, estimand `pooled`, {band} labelled clusters: the default (CR2) "
            "beside `judged cr1`",
            _pairs(
                rows,
                "judged",
                "judged cr1",
                lambda r, low=low, high=high: (
                    r["source"] == "simulated"
                    and r["estimand"] == "pooled"
                    and low <= r["labelled_clusters"] <= high
                ),
            ),
            ("judged", "judged cr1"),
        )
    row(
        "population target, whole clusters, clusters as units: the default beside `glide` "
        "(glide's construction)",
        _pairs(rows, "judged", "glide", lambda r: True),
        ("judged", "glide"),
    )
    row(
        "the default beside `ppi_py iid` (every row its own unit)",
        _pairs(rows, "judged", "ppi_py iid", lambda r: True),
        ("judged", "ppi_py iid"),
    )
    judged = [r for r in rows if r["method"] == "judged"]
    for part, (band, low, high) in itertools.product(("simulated", "real"), BANDS[1:]):
        sel = [r for r in judged if r["source"] == part and low <= r["labelled_clusters"] <= high]
        if sel:
            draws = int(np.median([r["draws"] for r in sel]))
            lines.append(
                f"| Monte Carlo floor, {part}: the expected worst of {len(sel)} cells "
                f"({band} labelled clusters) of a calibrated 95% interval at {draws:,} draws "
                f"| {len(sel)} | {monte_carlo_floor(draws, len(sel)):.1f} | |"
            )
    return lines


def _goal(r: dict) -> float:
    """The coverage goal of a cell's band (none below 10 labelled clusters)."""
    m = r["labelled_clusters"]
    return 94.0 if m >= 20 else 92.0 if m >= 10 else -math.inf


def noise_misses(cells: list[dict]) -> float:
    """The expected number of ``cells`` below their goal were the interval's coverage exactly
    95%: the misses that Monte Carlo noise alone makes."""
    return float(
        sum(
            stats.binom.cdf(math.ceil(_goal(r) * r["draws"] / 100) - 1, r["draws"], CONFIDENCE)
            for r in cells
        )
    )


def _same_width(c: dict) -> bool:
    return abs(c["judged"]["mean_width"] / c["judged cr1"]["mean_width"] - 1) < 1e-9


def cr2_against_cr1(by_cell: dict[tuple, dict]) -> list[str]:
    """What CR2 changed, against ``judged cr1`` on the same draws, per part, estimand and
    band of the cells where the two differ."""
    same = [c for c in by_cell.values() if _same_width(c)]
    lines = []
    if same:
        kinds = sorted({(c["judged"]["source"], c["judged"]["estimand"]) for c in same})
        lines.append(
            f"- CR2 against CR1: the same interval in {len(same)} of {len(by_cell)} cells ("
            + "; ".join(f"{part} `{estimand}`" for part, estimand in kinds)
            + "): with the mean of cluster means every cluster weighs the same, and in the "
            "real populations every cluster has as many rows, so CR2's leverage correction is "
            "CR1's G/(G-1) and its Satterthwaite df G - 1."
        )
    for part, estimand, (band, low, high) in itertools.product(
        ("simulated", "real"), ESTIMANDS, BANDS
    ):
        sel = [
            c
            for c in by_cell.values()
            if c["judged"]["source"] == part
            and c["judged"]["estimand"] == estimand
            and low <= c["judged"]["labelled_clusters"] <= high
            and not _same_width(c)
        ]
        if not sel:
            continue
        diff = [c["judged"]["coverage"] - c["judged cr1"]["coverage"] for c in sel]
        wider = [c["judged"]["mean_width"] / c["judged cr1"]["mean_width"] for c in sel]
        rescued = [
            c
            for c in sel
            if c["judged cr1"]["coverage"] < _goal(c["judged"]) <= c["judged"]["coverage"]
        ]
        lost = [
            c
            for c in sel
            if c["judged"]["coverage"] < _goal(c["judged"]) <= c["judged cr1"]["coverage"]
        ]
        goal = (
            f"; it brings {len(rescued)} cells up to the goal that `judged cr1` missed and "
            f"takes {len(lost)} below it"
            if low >= 10
            else ""
        )
        lines.append(
            f"- CR2 against CR1, {part}, `{estimand}`, {band} labelled clusters ({len(sel)} "
            f"cells): `judged` minus `judged cr1` covers median {np.median(diff):+.1f} points "
            f"(range {min(diff):+.1f} to {max(diff):+.1f}), its mean width "
            f"{np.median(wider):.3f} × `judged cr1`'s in the median cell (widest "
            f"{max(wider):.3f} ×){goal}."
        )
    return lines


def in_brief(rows: list[dict]) -> list[str]:
    """What the cells say, in numbers computed from them."""
    by_cell: dict[tuple, dict] = {}
    for r in rows:
        by_cell.setdefault(_cell_key(r), {})[r["method"]] = r
    graded = [c for c in by_cell.values() if c["judged"]["labelled_clusters"] >= 10]
    missed = [c for c in graded if c["judged"]["coverage"] < _goal(c["judged"])]
    humans_too = [c for c in missed if c["humans alone"]["coverage"] < _goal(c["judged"])]
    gap = [c["judged"]["coverage"] - c["humans alone"]["coverage"] for c in missed]
    lines = ["## In brief", ""]
    for part in ("simulated", "real"):
        mine = [c for c in graded if c["judged"]["source"] == part]
        if not mine:
            continue
        said = []
        for method in ("judged", "judged cr1"):
            miss = [c for c in mine if c[method]["coverage"] < _goal(c[method])]
            worst = min(mine, key=lambda c, m=method: c[m]["coverage"])[method]
            noise = noise_misses([c[method] for c in mine])
            said.append(
                f"`{method}` misses its goal in {len(miss)} of {len(mine)} cells with 10 or "
                f"more labelled clusters (an exactly calibrated 95% interval would miss in "
                f"about {noise:.0f} of them by Monte Carlo noise alone); its worst is "
                f"{worst['coverage']:.1f}% ± {worst['mc_se']:.1f} ({_where(worst)})"
            )
        lines.append(f"- {part.capitalize()}: " + "; ".join(said) + ".")
    if missed:
        most = len(humans_too) >= len(missed) / 2
        lines.append(
            f"- Where `judged` misses, `humans alone` (the same construction with weight 0) "
            f"misses the same goal in {len(humans_too)} of the {len(missed)} cells; `judged` "
            f"minus `humans alone` there: median {np.median(gap):+.1f} points, range "
            f"{min(gap):+.1f} to {max(gap):+.1f}. "
            + (
                "Most of the shortfall is the clustered interval of the labels themselves, "
                "which the judge inherits."
                if most
                else "The shortfall is mostly the judge's part: the labels alone meet the goal "
                "in most of these cells."
            )
        )
    lines += cr2_against_cr1(by_cell)
    whole = [
        c
        for c in by_cell.values()
        if c["judged"]["source"] == "simulated" and c["judged"]["design"] == "clusters"
    ]
    for estimand in ESTIMANDS:
        sel = [c["humans alone"] for c in whole if c["judged"]["estimand"] == estimand]
        if sel:
            lines.append(
                f"- Simulated, whole clusters labelled, estimand `{estimand}`: `humans alone` "
                f"covers {_median(sel):.1f}% in the median cell (worst "
                f"{min(r['coverage'] for r in sel):.1f}%): "
                + (
                    "the pooled mean is a ratio over labelled clusters of uneven sizes (CV "
                    f"{SIZE_CV:g})."
                    if estimand == "pooled"
                    else "the mean of cluster means is a plain mean over labelled clusters."
                )
            )
    two = [c for c in by_cell.values() if c["judged"]["labelled_clusters"] == 2]
    if two:
        shown = ", ".join(
            f"{c['judged']['coverage']:.1f}% ({c['judged']['estimand']}, "
            f"{c['judged']['target']}; humans alone {c['humans alone']['coverage']:.1f}%, "
            f"`tuned` {c['tuned']['coverage']:.1f}%)"
            for c in two
        )
        lines.append(
            "- With 2 labelled clusters, cross-fitting cannot leave one out (a stratum would "
            "keep 1), so `auto` falls back to weight 0, the labels alone: "
            f"`judged` covers {shown}."
        )
    for design in ("clusters", "rows"):
        few = [
            c
            for c in by_cell.values()
            if c["judged"]["design"] == design
            and c["judged"]["labelled_clusters"] < CROSS_FIT_BELOW
        ]
        if few:
            cross = [c["cross-fitted"] for c in few]
            tuned = [c["tuned"] for c in few]
            lines.append(
                f"- Labelled by {design}, fewer than {CROSS_FIT_BELOW} labelled clusters "
                f"({len(few)} cells, simulated and real), where `auto` cross-fits: "
                f"`cross-fitted` covers {_median(cross):.1f}% in the median cell (worst "
                f"{min(r['coverage'] for r in cross):.1f}%), `tuned` {_median(tuned):.1f}% "
                f"(worst {min(r['coverage'] for r in tuned):.1f}%); their widths over "
                f"`humans alone`'s: {_median(cross, 'width_ratio'):.2f} and "
                f"{_median(tuned, 'width_ratio'):.2f} (widest "
                f"{max(r['width_ratio'] for r in cross):.2f} and "
                f"{max(r['width_ratio'] for r in tuned):.2f})."
            )
    refused = [r for r in rows if r.get("no_interval", 0) > 0]
    if refused:
        methods = sorted({r["method"] for r in refused})
        lines.append(
            f"- No interval: {', '.join(f'`{m}`' for m in methods)} raised "
            "`DegenerateDataError` (a variance of 0) in "
            f"{sum(r['no_interval'] for r in refused)} draws of {len(refused)} cells, the "
            f"most labelled clusters among them {max(r['labelled_clusters'] for r in refused)} "
            "(a weight tuned on 2 labelled clusters fits both exactly); each counts as a miss "
            "and is left out of the mean width."
        )
    over = [c for c in by_cell.values() if c["judged"]["width_ratio"] > width_goal(c["judged"])]
    widest = max((c["judged"] for c in over), key=lambda r: r["width_ratio"], default=None)
    lines.append(
        f"- Width: `judged`'s mean width is above `humans alone`'s × (1 + 1/labelled "
        f"clusters) in {len(over)} of {len(by_cell)} cells"
        + (f"; the widest, {widest['width_ratio']:.2f} ×, is {_where(widest)}." if over else ".")
    )
    return lines


def _short_by(r: dict) -> float:
    """How far below its coverage goal a cell is, in its own Monte Carlo SEs (0 above)."""
    return max(_goal(r) - r["coverage"], 0.0) / max(r["mc_se"], 1e-9)


def recheck_section(rows: list[dict], rechecked: list[dict]) -> list[str]:
    """The worst cells of ``judged`` drawn again (``--recheck``), beside the main run's."""
    if not rechecked:
        return []
    again = {(_cell_key(r), r["method"]): r for r in rechecked}

    def fresh(r: dict, method: str = "judged") -> dict:
        return again[(_cell_key(r), method)]

    taken, left = recheck_plan(rows)
    done = [e for e in taken if (_cell_key(e.picked[0]), "judged") in again]
    pending = [e for e in taken if e not in done]
    picked = [r for e in done for r in e.picked]
    short = [r for r in picked if r["coverage"] < _goal(r)]
    wide = [r for r in picked if r["width_ratio"] > width_goal(r)]
    all_short, all_wide = recheck_picks(rows)
    draws = max(fresh(r)["draws"] for r in picked)
    seconds = sum(fresh(e.picked[0])["cell_seconds"] for e in done)
    lines = [
        f"## Worst cells rechecked at {RECHECK_DRAWS:,} draws",
        "",
        f"The cells of `judged` that miss their coverage goal above ({len(all_short)}) and "
        f"those over the width goal only ({len(all_wide)}), drawn again, {draws:,} draws "
        "each, by `python studies/coverage_judged.py --recheck` from a seed stream of their "
        f'own (seed {SEED}, "{RECHECK_STREAM}" and the cell\'s key): picking the worst of '
        "many cells picks their bad luck too, which fresh draws do not carry. A set of draws "
        "gives every estimand and target at once, so a set is drawn again whole. The sets "
        "were taken in turn while their time, estimated from the main run's `cell_seconds` "
        f"scaled to {RECHECK_DRAWS:,} draws, fit {RECHECK_MINUTES} minutes on one core: "
        "first those holding a cell that decides a goal (the worst of each coverage band, "
        "every cell over the width goal), then the other misses, the largest shortfall below "
        f"the goal first. {len(done)} sets ({len(picked)} of the picked cells) took "
        f"{seconds / 60:.1f} minutes (estimated {sum(e.seconds for e in done) / 60:.1f}). "
        "Every method, estimand and target of these draws is in "
        "[coverage-judged-recheck.csv](coverage-judged-recheck.csv); each MC SE is the "
        "cell's own.",
        "",
        "| cell | goal | `judged` before (draws) | `judged` again (draws) | goals met again | "
        "short by (MC SE) | `humans alone` again | `ppi_py iid` again | width ÷ humans' "
        "before → again (goal) |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for r in picked:
        new = fresh(r)
        met = new["coverage"] >= _goal(r) and new["width_ratio"] <= width_goal(r)
        lines.append(
            f"| {_where(r)} | {_goal(r):g}% | {r['coverage']:.1f} ± {r['mc_se']:.1f} "
            f"({r['draws']:,}) | {new['coverage']:.1f} ± {new['mc_se']:.1f} "
            f"({new['draws']:,}) | {'yes' if met else '**no**'} | "
            + (f"{_short_by(new):.1f}" if new["coverage"] < _goal(r) else "–")
            + f" | {fresh(r, 'humans alone')['coverage']:.1f} | "
            f"{fresh(r, 'ppi_py iid')['coverage']:.1f} | {r['width_ratio']:.3f} → "
            f"{new['width_ratio']:.3f} ({width_goal(r):.3f}) |"
        )
    lines.append("")
    if short:
        news = [fresh(r) for r in short]
        meet = [n for n in news if n["coverage"] >= _goal(n)]
        close = [n for n in news if n["coverage"] < _goal(n) and _short_by(n) <= 2]
        real = [n for n in news if _short_by(n) > 2]
        worst = min(news, key=lambda n: n["coverage"] - _goal(n))
        lowest = min(n["coverage"] for n in news)
        lines.append(
            f"- Coverage: of the {len(short)} cells that missed their goal, {len(meet)} meet "
            f"it at {draws:,} draws, {len(close)} are below it by 2 MC SE or less and "
            f"{len(real)} by more than 2 MC SE. Their mean coverage moves from "
            f"{np.mean([r['coverage'] for r in short]):.2f}% to "
            f"{np.mean([n['coverage'] for n in news]):.2f}%; the worst against its goal is "
            f"{worst['coverage']:.2f}% ± {worst['mc_se']:.2f} against {_goal(worst):g}% "
            f"({_where(worst)})."
        )
        for band, _, _ in BANDS[::-1]:
            sel = [n for n in news if _band(n["labelled_clusters"]) == band]
            if sel:
                low = min(sel, key=lambda n: n["coverage"])
                lines.append(
                    f"- {band} labelled clusters, {len(sel)} of these cells: the worst "
                    f"{low['coverage']:.2f}% ± {low['mc_se']:.2f} against {_goal(low):g}% "
                    f"({_where(low)})."
                )
        lines.append(
            f"- Noise: a calibrated 95% interval would miss these goals in about "
            f"{noise_misses(news):.1f} of the {len(news)} cells by Monte Carlo noise alone at "
            f"{draws:,} draws, and its expected worst of {len(news)} cells is "
            f"{monte_carlo_floor(draws, len(news)):.1f}% (the worst here, {lowest:.2f}%, or "
            f"lower: chance {worst_cell_chance(draws, len(news), lowest):.2g}). An interval "
            "covering exactly its goal falls more than 2 MC SE below it with chance 0.023, "
            f"about {0.023 * len(news):.1f} of these cells."
        )
        humans = [fresh(r, "humans alone") for r in short]
        lines.append(
            f"- On the same draws `humans alone` covers {_median(humans):.1f}% in the median "
            f"of these cells (worst {min(h['coverage'] for h in humans):.1f}%, below the "
            f"goal in {sum(h['coverage'] < _goal(h) for h in humans)}), `judged` "
            f"{_median(news):.1f}% (worst {lowest:.1f}%)."
        )
    chosen = {_cell_key(r) for r in picked}
    others = [
        n
        for n in rechecked
        if n["method"] == "judged" and _cell_key(n) not in chosen and n["labelled_clusters"] >= 10
    ]
    if others:
        low = min(others, key=lambda n: n["coverage"] - _goal(n))
        lines.append(
            f"- The other cells of the same sets, not picked ({len(others)} with 10 or more "
            f"labelled clusters): {sum(n['coverage'] < _goal(n) for n in others)} below their "
            f"goal; the worst against its goal {low['coverage']:.2f}% ± {low['mc_se']:.2f} "
            f"against {_goal(low):g}% ({_where(low)})."
        )
    if wide:
        still = [r for r in wide if fresh(r)["width_ratio"] > width_goal(r)]
        lines.append(
            f"- Width: {len(still)} of the {len(wide)} cells over the width goal are still "
            f"over it at {draws:,} draws"
            + (": " if still else "")
            + ", ".join(
                f"{fresh(r)['width_ratio']:.3f} × against {width_goal(r):.3f} ({_where(r)})"
                for r in still
            )
            + "."
        )

    def listed(entries: list[Recheck]) -> str:
        return "; ".join(f"{_where(r)} ({r['coverage']:.1f}%)" for e in entries for r in e.picked)

    if left:
        lines.append(
            f"- Left out ({len(left)} sets, {sum(len(e.picked) for e in left)} cells, "
            f"estimated {sum(e.seconds for e in left) / 60:.0f} minutes): they did not fit "
            f"the {RECHECK_MINUTES} minutes once the sets before them were taken: "
            f"{listed(left)}."
        )
    if pending:
        lines.append(
            f"- Not drawn again yet ({len(pending)} sets planned; the run stopped before "
            f"them): {listed(pending)}."
        )
    return [*lines, ""]


def render(rows: list[dict], rechecked: list[dict] | None = None) -> str:
    seconds = sum({_cell_key(r)[:6]: r["cell_seconds"] for r in rows}.values())
    n_cells = len({_cell_key(r) for r in rows})
    n_runs = len({_cell_key(r)[:6] for r in rows})
    draw_counts = sorted({r["draws"] for r in rows})
    se = 100 * math.sqrt(CONFIDENCE * (1 - CONFIDENCE) / max(draw_counts))
    se_few = 100 * math.sqrt(CONFIDENCE * (1 - CONFIDENCE) / min(draw_counts))
    judged = [r for r in rows if r["method"] == "judged"]
    lines = [
        "# Coverage of `judged_ci`: a judge on every row, humans on a few",
        "",
        "<!-- generated by studies/coverage_judged.py; do not edit by hand -->",
        "",
        f"Produced by `python studies/coverage_judged.py` (seed {SEED}) with clusterstats "
        f"{clusterstats.__version__}, numpy {np.__version__}, Python "
        f"{platform.python_version()}, in {seconds / 60:.1f} minutes on one core of a "
        f"{platform.machine()} machine ({os.cpu_count()} cores shared with other work): "
        f"{n_runs} sets of draws, each scored for every estimand and target ({n_cells} "
        f"cells). Draws per set: {DRAWS:,} for simulated sets with fewer than 30 labelled "
        f"clusters, {MANY_DRAWS:,} with 30 to 99, {MOST_DRAWS:,} with 100 or more (cross-"
        f"fitting leaves out each labelled cluster in turn, which is what costs), "
        f"{REAL_DRAWS:,} for the real populations. Every cell is in "
        "[coverage-judged.csv](coverage-judged.csv).",
        "",
        "## What is measured",
        "",
        "Each draw is a run whose every row a judge scored and some rows humans labelled, the "
        "rows clustered (prompts, dialogue contexts). On the same draw the study computes, "
        "through `build_judged_ci` (the library's path after the adapter): `judged`, the "
        f'default (`method="cr2"`: the two-phase variance with CR2\'s leverage correction and, '
        "for the pooled mean, the Satterthwaite degrees of freedom of the labelled clusters' "
        "sizes, at target `benchmark` with clusters labelled from among more those of uneven "
        'sizes, as `cluster_ci(method="cr2_ik")` takes them; `weight="auto"`: cross-fitted '
        f"below {CROSS_FIT_BELOW} labelled clusters, "
        'tuned above); `judged cr1`, the same with `method="cr1"` (CR1\'s `G/(G-1)` and the '
        "labelled clusters less one as degrees of freedom, the default before), to show what "
        "CR2 changed; `tuned` and `cross-fitted`, the two weight options (CR2); `humans alone` "
        "(weight 0, the clustered interval of the labelled rows); `judge alone` (the judge's "
        "clustered interval, which estimates the judge's mean, not the humans'); `ppi_py iid`, "
        "`ppi_py.ppi_mean_ci`'s construction with every row its own unit; and `glide`, "
        '`method="glide"` (glide\'s construction: cluster means as units, the labelled and '
        "unlabelled clusters two independent samples, sample variances, a normal quantile; "
        "estimand `cluster_mean`, whole-cluster labelling and the "
        "population target only). A cell counts how often each interval holds the truth "
        "(coverage, with its Monte Carlo standard error), its mean width, and its mean width "
        "relative to `humans alone` on the same draw.",
        "",
        "The truth of target `population` is the population's value of the human score (the "
        "pooled mean or the mean of cluster means); that of target `benchmark` is the drawn "
        "run's own value over all its rows, what the labels would give were every row "
        "labelled. Labelling is by whole clusters (`m` of `C` clusters, simple random) or by "
        "rows inside every cluster (at least 2 of each cluster's rows, simple random). The "
        "simulated grid (a base cell, each factor varied alone, and the corners where few "
        "clusters carry labels, the ICC is high, the judge's bias varies by cluster and its "
        "correlation with the humans is low) and the real populations (HANNA's 6 criteria x "
        "5 judges and Topical-Chat's 4 criteria, clusters drawn with replacement) are defined "
        "in the script's docstring. Cells with fewer than 2 labelled clusters are skipped.",
        "",
        f"Monte Carlo SE of one cell's coverage near 95%: {se:.2f} points at "
        f"{max(draw_counts):,} draws, {se_few:.2f} at {min(draw_counts):,}; each cell's own SE "
        "is in the CSV (`mc_se`). Over many cells the worst one sits below 95% by noise alone "
        "(the Monte Carlo floor, in the last rows of the comparisons below).",
        "",
        *in_brief(rows),
        "",
        "## The goals",
        "",
        "For the default `judged`: the worst cell with 20 or more labelled clusters at least "
        "94%, with 10 to 19 at least 92%; its mean width not above the human-only interval's "
        "times `1 + 1/(labelled clusters)` (what the judge costs when it is useless should be "
        "no more than about one cluster's worth of degrees of freedom). The same goals are "
        "shown for the other intervals that use the judge.",
        "",
    ]
    for part, title in (("simulated", "Simulated grid"), ("real", "Real populations")):
        lines += [
            f"### {title}",
            "",
            "| method | goal | value | met | where |",
            "|---|---|---|---|---|",
        ]
        for method in PPI_METHODS:
            sel = [r for r in rows if r["source"] == part]
            for goal, value, met, where in goal_rows(sel, method):
                lines.append(
                    f"| `{method}` | {goal} | {value} | {'yes' if met else '**no**'} | {where} |"
                )
        lines.append("")
    failing = [r for r in judged if r["coverage"] < _goal(r)]
    lines += [
        f"Cells where `judged` misses its coverage goal ({len(failing)} of "
        f"{len(judged)}; the bands below 10 labelled clusters have no goal):",
        "",
        "| cell | coverage | below / above | `judged cr1` | `tuned` | `cross-fitted` | "
        "`humans alone` |",
        "|---|---|---|---|---|---|---|",
    ]
    by_cell = {}
    for r in rows:
        by_cell.setdefault(_cell_key(r), {})[r["method"]] = r
    for r in sorted(failing, key=lambda r: r["coverage"]):
        other = by_cell[_cell_key(r)]
        lines.append(
            f"| {_where(r)} | {r['coverage']:.1f} ± {r['mc_se']:.1f} | "
            f"{r['miss_below']:.1f} / {r['miss_above']:.1f} | "
            f"{other['judged cr1']['coverage']:.1f} ± {other['judged cr1']['mc_se']:.1f} | "
            f"{other['tuned']['coverage']:.1f} | {other['cross-fitted']['coverage']:.1f} | "
            f"{other['humans alone']['coverage']:.1f} |"
        )
    if not failing:
        lines.append("| (none) | | | | | | |")
    lines += ["", *recheck_section(rows, rechecked or []), *comparisons(rows)]
    lines += ["", "## Summary per method", ""]
    lines += [
        "Coverage (%) by labelled clusters, worst and median over the cells; the width is the "
        "median over cells of the mean width relative to `humans alone`.",
        "",
    ]
    for part, title in (("simulated", "Simulated grid"), ("real", "Real populations")):
        for target in TARGETS:
            sel = [r for r in rows if r["source"] == part and r["target"] == target]
            if sel:
                lines += [f"### {title}, target `{target}`", "", *summary_table(sel), ""]
    lines += [
        "## What the judge buys on HANNA",
        "",
        "Mean width of `judged` relative to `humans alone` on the same draws (below 1: the "
        "judge narrows the interval), target `population`, with the coverage of `judged` and "
        "its mean weight λ in brackets. 30 of 96 prompts labelled whole:",
        "",
        *hanna_gain(rows, "clusters", 30),
        "",
        "2 of the 11 stories labelled in each of 30 prompts drawn:",
        "",
        *hanna_gain(rows, "rows", 30),
        "",
        "## Every cell",
        "",
        "Coverage (%); in bold an interval using the judge below its goal (94 with 20 or more "
        "labelled clusters, 92 below). `judge alone` estimates the judge's mean and is not "
        "held to the goal.",
        "",
        "### Simulated grid",
        "",
        *cells_table(rows, "simulated"),
        "",
        "### Real populations",
        "",
        *cells_table(rows, "real"),
        "",
    ]
    return "\n".join(lines)


if __name__ == "__main__":
    sys.exit(main())
