"""Coverage on real benchmarks used as populations: nothing simulated.

Every bundled dataset (``clusterstats.datasets``) is taken as a finite population of
clusters. A cell draws ``K`` of its clusters **with replacement** (a cluster drawn twice is two
clusters), computes each interval method on the drawn clusters through the code path the
library uses (``summarize_interval``, as ``cluster_ci``, ``paired_delta`` and the rerun
statistics call it), and checks it against the population's own value: the pooled share
``sum y / sum n`` over all its clusters, or the mean of its cluster means. Cluster sizes, their
spread, the heterogeneity between clusters and the relation of size to outcome are the data's
own: MMLU-Pro's 91 sources hold 17 to 1,003 questions, and its largest source (law) answers
20 points below the rest for every model.

Populations (``populations()``):

* rates (binary rows): MMLU-Pro, each of the 4 models, by ``src`` and by ``category``; BBH,
  chain-of-thought and direct, by ``task``; CRUXEval, input and output prediction, by
  ``problem_id`` (10 samples each); tau-bench airline ``reward`` by ``task_id`` (4 trials
  each) and by ``user_id``;
* paired differences (per item, matched on the item key): the 6 MMLU-Pro model pairs by
  ``src`` and by ``category``; BBH chain-of-thought minus direct by ``task``;
* a score (continuous): tau-bench ``n_messages`` by ``task_id`` and by ``user_id``;
* rerun statistics (one value per case, as ``pass_at_k`` / ``pass_hat_k`` compute it from the
  case's runs): CRUXEval pass@1 and pass@5 by case (input and output prediction); tau-bench
  pass^1 and pass^2 by case and by ``user_id``.

``compare`` and ``gate`` read their intervals from these builders (``compare``'s pairwise
intervals are ``paired_delta``'s, ``gate``'s are ``cluster_ci``'s and ``paired_delta``'s), so
the rate and paired cells are theirs too.

Both estimands run on every population whose cluster sizes vary (``pooled`` and
``cluster_mean``); with equal sizes they are the same number and only ``pooled`` runs. ``K`` is
10, 20, 30, 50 and all of the population's clusters (``K`` larger than the population is
skipped). Every cell has ``--draws`` draws (2,000 by default); the bootstraps use 1,999
resamples (the library's default is 9,999), which changes their coverage by far less than the
Monte Carlo error.

Methods are every interval method of the library for the outcome's kind, including the peers'
constructions it can express: ``cr1`` (CR1 with t on G - 1 df: inspect_ai's clustered
``stderr``/``ci`` and statsmodels' OLS with ``cov_type="cluster"``) and ``svyciprop_beta``
(Korn-Graubard without the effective-n cap: R survey's ``svyciprop(method = "beta")``).

Usage::

    python studies/coverage_real_data.py              # writes docs/coverage-real-data.md, .csv
    python studies/coverage_real_data.py --quick      # 8 draws per cell, a smoke run
    python studies/coverage_real_data.py --render     # the page again from the committed CSV
"""

from __future__ import annotations

import argparse
import csv
import itertools
import math
import multiprocessing
import platform
import re
import sys
import time
import warnings
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd
from scipy import stats

import clusterstats
from clusterstats.core.grouping import ClusterSums
from clusterstats.core.intervals import FEW_CLUSTERS, auto_method
from clusterstats.core.reruns import pass_at_k, pass_hat_k
from clusterstats.core.score import cluster_score_interval
from clusterstats.core.summary import summarize_interval

REPO = Path(__file__).resolve().parents[1]
SEED = 20261205
CONFIDENCE = 0.95
KS = (10, 20, 30, 50)
RESAMPLES = 1999
BINARY_METHODS = (
    "naive",
    "wilson",
    "cr1",
    "cr2",
    "cr2_ik",
    "cr3_ik",
    "korn_graubard",
    "svyciprop_beta",
    "korn_graubard_guarded",
    "korn_graubard_inverted",
    "korn_graubard_hybrid",
    "bootstrap_percentile",
    "bootstrap_bca",
    "bootstrap_t",
    "score",
    "hybrid_or_score",
    "inverted_or_score",
)
CONTINUOUS_METHODS = (
    "naive",
    "cr1",
    "cr2",
    "cr2_ik",
    "cr3",
    "cr3_ik",
    "bootstrap_percentile",
    "bootstrap_bca",
    "bootstrap_t",
    "score",
    "bootstrap_t_or_score",
)
KINDS = ("rate", "paired", "score", "rerun")
#: Candidates for the default: the cluster score interval (``clusterstats.core.score``), and
#: its union with the default of the outcome's kind (the lower of the two lower bounds, the
#: higher of the two upper bounds), united here from the bounds already computed; the same
#: numbers as the library's ``method="korn_graubard_hybrid_or_score"`` and
#: ``"bootstrap_t_or_score"`` (``tests/stats/test_score_methods.py``).
UNIONS = {
    "hybrid_or_score": "korn_graubard_hybrid",
    "inverted_or_score": "korn_graubard_inverted",
    "bootstrap_t_or_score": "bootstrap_t",
}


@dataclass(frozen=True)
class Population:
    """A finite population of clusters: per-cluster rows, totals and sums of squares."""

    name: str
    kind: str  # one of KINDS
    grouping: str
    counts: np.ndarray
    totals: np.ndarray
    squares: np.ndarray
    binary: bool  # every value is 0 or 1
    outcome_range: tuple[float, float] | None

    @property
    def n_clusters(self) -> int:
        return int(self.counts.shape[0])

    @property
    def balanced(self) -> bool:
        return bool(np.all(self.counts == self.counts[0]))

    def truth(self, estimand: str) -> float:
        if estimand == "pooled":
            return float(self.totals.sum() / self.counts.sum())
        return float(np.mean(self.totals / self.counts))


def reduce_population(
    name: str,
    kind: str,
    grouping: str,
    labels,
    values,
    *,
    outcome_range: tuple[float, float] | None,
) -> Population:
    frame = pd.DataFrame({"g": np.asarray(labels), "y": np.asarray(values, dtype=float)})
    frame["y2"] = frame["y"] ** 2
    sums = frame.groupby("g", sort=True).agg(n=("y", "size"), t=("y", "sum"), s=("y2", "sum"))
    binary = bool(np.isin(frame["y"].to_numpy(), (0.0, 1.0)).all())
    return Population(
        name,
        kind,
        grouping,
        sums["n"].to_numpy(float),
        sums["t"].to_numpy(float),
        sums["s"].to_numpy(float),
        binary,
        outcome_range,
    )


def short_name(model: str) -> str:
    return (
        model.replace("Meta-Llama-3.1-", "Llama-")
        .replace("-Instruct-v0.1", "")
        .replace("-Instruct", "")
    )


def populations() -> list[Population]:
    """Every population of the study, built from the bundled datasets (see the docstring)."""
    out = []
    mmlu = clusterstats.datasets.load("mmlu_pro").dropna(subset=["correct"])
    models = sorted(mmlu["model"].unique())
    for model, grouping in itertools.product(models, ("src", "category")):
        rows = mmlu[mmlu["model"] == model]
        out.append(
            reduce_population(
                f"MMLU-Pro {short_name(model)}",
                "rate",
                grouping,
                rows[grouping],
                rows["correct"],
                outcome_range=(0.0, 1.0),
            )
        )
    # pairs matched on the question key, never on row position
    wide = mmlu.pivot_table(
        index=["question_id", "src", "category"], columns="model", values="correct"
    ).reset_index()
    for a, b in itertools.combinations(models, 2):
        both = wide.dropna(subset=[a, b])
        for grouping in ("src", "category"):
            out.append(
                reduce_population(
                    f"MMLU-Pro {short_name(a)} − {short_name(b)}",
                    "paired",
                    grouping,
                    both[grouping],
                    both[a] - both[b],
                    outcome_range=(-1.0, 1.0),
                )
            )
    bbh = clusterstats.datasets.load("bbh")
    for condition in ("cot", "direct"):
        rows = bbh[bbh["condition"] == condition]
        out.append(
            reduce_population(
                f"BBH {condition}",
                "rate",
                "task",
                rows["task"],
                rows["correct"],
                outcome_range=(0.0, 1.0),
            )
        )
    paired = bbh.pivot_table(index=["item_id", "task"], columns="condition", values="correct")
    paired = paired.reset_index()
    out.append(
        reduce_population(
            "BBH cot − direct",
            "paired",
            "task",
            paired["task"],
            paired["cot"] - paired["direct"],
            outcome_range=(-1.0, 1.0),
        )
    )
    crux = clusterstats.datasets.load("cruxeval")
    for task in ("input_prediction", "output_prediction"):
        rows = crux[crux["task"] == task]
        label = "CRUXEval-" + task[0].upper()
        out.append(
            reduce_population(
                label,
                "rate",
                "problem_id",
                rows["problem_id"],
                rows["correct"],
                outcome_range=(0.0, 1.0),
            )
        )
        runs = rows.groupby("problem_id")["correct"].agg(["size", "sum"])
        for k in (1, 5):
            values = pass_at_k(runs["size"].to_numpy(float), runs["sum"].to_numpy(float), k)
            out.append(
                reduce_population(
                    f"{label} pass@{k}",
                    "rerun",
                    "case",
                    runs.index,
                    values,
                    outcome_range=(0.0, 1.0),
                )
            )
    tau = clusterstats.datasets.load("tau_bench_airline")
    for grouping in ("task_id", "user_id"):
        out.append(
            reduce_population(
                "τ-bench reward",
                "rate",
                grouping,
                tau[grouping],
                tau["reward"],
                outcome_range=(0.0, 1.0),
            )
        )
        out.append(
            reduce_population(
                "τ-bench n_messages",
                "score",
                grouping,
                tau[grouping],
                tau["n_messages"],
                outcome_range=None,
            )
        )
    cases = tau.groupby(["task_id", "user_id"])["reward"].agg(["size", "sum"]).reset_index()
    for k in (1, 2):
        values = pass_hat_k(cases["size"].to_numpy(float), cases["sum"].to_numpy(float), k)
        for grouping, labels in (("case", cases["task_id"]), ("user_id", cases["user_id"])):
            out.append(
                reduce_population(
                    f"τ-bench pass^{k}",
                    "rerun",
                    grouping,
                    labels,
                    values,
                    outcome_range=(0.0, 1.0),
                )
            )
    return out


def methods_of(population: Population) -> tuple[str, ...]:
    return BINARY_METHODS if population.binary else CONTINUOUS_METHODS


#: The study's column of each library method whose column has another name.
COLUMN_OF = {"korn_graubard_hybrid_or_score": "hybrid_or_score"}


def default_of(*, binary: bool, balanced: bool, k: int, estimand: str) -> str:
    """The column of the method ``method="auto"`` resolves to on a draw of ``k`` clusters
    (clusters drawn from a population of uneven sizes have uneven sizes)."""
    resolved = auto_method(
        is_binary=binary, n_clusters=k, uneven_ratio=estimand == "pooled" and not balanced
    )
    return COLUMN_OF.get(resolved, resolved)


def cells(pops: list[Population], ks: tuple[int, ...] = KS):
    """``(index, population index, K, estimand)`` for every cell, ``K`` in ``ks`` (below
    the population's clusters) and all of them."""
    index = 0
    for p_index, pop in enumerate(pops):
        ks_here = sorted({k for k in ks if k < pop.n_clusters} | {pop.n_clusters})
        estimands = ("pooled",) if pop.balanced else ("pooled", "cluster_mean")
        for k, estimand in itertools.product(ks_here, estimands):
            yield index, p_index, k, estimand
            index += 1


def constant(sums: ClusterSums) -> bool:
    """Whether every value of the drawn clusters is the same."""
    means = sums.totals / sums.counts
    within = sums.squares - sums.totals * means
    return bool(np.ptp(means) == 0 and np.all(np.abs(within) <= 1e-12 * sums.counts))


def interval(pop: Population, sums: ClusterSums, estimand: str, method: str, seed: int):
    if method == "score":
        low, high = cluster_score_interval(sums, estimand, CONFIDENCE)
        limits = (0.0, 1.0) if pop.binary else pop.outcome_range
        if limits is not None:
            low, high = max(low, limits[0]), min(high, limits[1])
        return low, high
    name, cap = method, True
    if method == "svyciprop_beta":
        name, cap = "korn_graubard", False
    # per-case pass probabilities that are all equal count as binary, as the rerun
    # statistics count them (they get the Clopper-Pearson fallback, not an error)
    binary = pop.binary or (pop.kind == "rerun" and constant(sums))
    found = summarize_interval(
        sums,
        estimand=estimand,
        method=name,
        confidence=CONFIDENCE,
        is_binary=binary,
        n_resamples=RESAMPLES,
        rng=np.random.default_rng(seed),
        cap_n_eff=cap,
        outcome_range=pop.outcome_range,
    )
    low, high = found.low, found.high
    if pop.outcome_range is not None:  # as paired_delta and the rerun statistics clip
        low, high = max(low, pop.outcome_range[0]), min(high, pop.outcome_range[1])
    return low, high


_POPULATIONS: list[Population] = []


def _init(pops: list[Population]) -> None:
    _POPULATIONS[:] = pops


def run_cell(task):
    index, p_index, k, estimand, draws = task
    pop = _POPULATIONS[p_index]
    truth = pop.truth(estimand)
    rng = np.random.default_rng([SEED, index])
    drawn = rng.integers(0, pop.n_clusters, size=(draws, k))
    methods = methods_of(pop)
    tally = {m: np.zeros(6) for m in methods}  # covered, below, above, width, zero, failed
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for d, chosen in enumerate(drawn):
            sums = ClusterSums(pop.counts[chosen], pop.totals[chosen], pop.squares[chosen])
            found = {}
            for method in methods:
                t = tally[method]
                try:
                    if method in UNIONS:  # from the two intervals computed just before
                        (a, b), (c, e) = found[UNIONS[method]], found["score"]
                        low, high = min(a, c), max(b, e)
                    else:
                        low, high = interval(pop, sums, estimand, method, seed=d)
                except Exception:  # a failure is a result of the study, counted per cell
                    t[5] += 1
                    continue
                found[method] = (low, high)
                t += (low <= truth <= high, truth < low, truth > high, high - low, high <= low, 0)
    return index, {m: t / draws for m, t in tally.items()}


def monte_carlo_floor(draws: int, n_cells: int) -> float:
    """Expected worst coverage (%) of a perfectly calibrated 95% interval over ``n_cells``
    cells of ``draws`` draws each: a worst cell above it is a miss noise alone explains."""
    x = np.arange(draws + 1)
    pmf = stats.binom.pmf(x, draws, CONFIDENCE)
    survival = np.clip(1.0 - np.cumsum(pmf), 0, 1) ** n_cells
    return 100 * float(np.sum(survival[:-1])) / draws


def worst_cell_chance(draws: int, n_cells: int, coverage: float) -> float:
    """The chance that the worst of ``n_cells`` cells of a perfectly calibrated 95% interval,
    ``draws`` draws each, is at or below ``coverage`` (%): small when a miss is real."""
    covered = math.floor(coverage * draws / 100 + 1e-9)
    one_above = float(stats.binom.sf(covered, draws, CONFIDENCE))
    return 1.0 - one_above**n_cells


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--draws", type=int, default=2000)
    parser.add_argument(
        "--quick", action="store_true", help="8 draws per cell, K 10 and all, prints only"
    )
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--render", action="store_true", help="the page from the committed CSV")
    args = parser.parse_args(argv)
    csv_path = REPO / "docs" / "coverage-real-data.csv"
    page_path = REPO / "docs" / "coverage-real-data.md"
    if args.render:
        rows = read_rows(csv_path)
        # The CSV's default column follows today's rule too (read_rows recomputes it).
        with open(csv_path, newline="") as f:
            fields = list(csv.DictReader(f).fieldnames or [])
            f.seek(0)
            stored = list(csv.DictReader(f))
        for kept, r in zip(stored, rows, strict=True):
            kept["default"] = str(r["default"])
        with open(csv_path, "w", newline="") as f:
            writer = csv.DictWriter(f, fieldnames=fields)
            writer.writeheader()
            writer.writerows(stored)
        found = re.search(r"in ([\d.]+) minutes", page_path.read_text())
        minutes = float(found.group(1)) if found else math.nan
        page_path.write_text(render(rows, minutes))
        print(f"wrote {page_path.relative_to(REPO)}")
        return 0
    draws = 8 if args.quick else args.draws
    pops = populations()
    tasks = [(*cell, draws) for cell in cells(pops, (10,) if args.quick else KS)]
    # the costly cells first: many large clusters and many methods
    order = sorted(
        tasks, key=lambda t: -(t[2] * len(methods_of(pops[t[1]])) * pops[t[1]].counts.max())
    )
    start = time.perf_counter()
    results = {}
    with multiprocessing.Pool(args.workers, initializer=_init, initargs=(pops,)) as pool:
        for done, (index, out) in enumerate(pool.imap_unordered(run_cell, order), start=1):
            results[index] = out
            if done % 20 == 0 or done == len(order):
                minutes = (time.perf_counter() - start) / 60
                print(f"{done}/{len(order)} cells, {minutes:.1f} min", file=sys.stderr)
    minutes = (time.perf_counter() - start) / 60
    rows = []
    for index, p_index, k, estimand, _ in tasks:
        pop = pops[p_index]
        for method, (cov, below, above, width, zero, failed) in results[index].items():
            rows.append(
                {
                    "kind": pop.kind,
                    "population": pop.name,
                    "grouping": pop.grouping,
                    "G": pop.n_clusters,
                    "size_min": int(pop.counts.min()),
                    "size_max": int(pop.counts.max()),
                    "K": k,
                    "estimand": estimand,
                    "truth": round(pop.truth(estimand), 6),
                    "method": method,
                    "default": method
                    == default_of(binary=pop.binary, balanced=pop.balanced, k=k, estimand=estimand),
                    "draws": draws,
                    "coverage": round(100 * cov, 3),
                    "miss_below": round(100 * below, 3),
                    "miss_above": round(100 * above, 3),
                    "mean_width": round(width, 6),
                    "zero_width": round(100 * zero, 3),
                    "failures": round(100 * failed, 3),
                }
            )
    page = render(rows, minutes)
    if args.quick:
        print(page)
        return 0
    with open(csv_path, "w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    page_path.write_text(page)
    print(page)
    return 0


def read_rows(path: Path) -> list[dict]:
    with open(path, newline="") as f:
        rows = list(csv.DictReader(f))
    for r in rows:
        for key in ("G", "size_min", "size_max", "K", "draws"):
            r[key] = int(r[key])
        for key in (
            "truth",
            "coverage",
            "miss_below",
            "miss_above",
            "mean_width",
            "zero_width",
            "failures",
        ):
            r[key] = float(r[key])
    # The default is the rule of today's library, not of the run's: the cells of every
    # method are kept, so a new rule is judged on the same draws.
    binary = {
        (r["population"], r["grouping"]) for r in rows if r["method"] == "korn_graubard_hybrid"
    }
    for r in rows:
        r["default"] = r["method"] == default_of(
            binary=(r["population"], r["grouping"]) in binary,
            balanced=r["size_min"] == r["size_max"],
            k=r["K"],
            estimand=r["estimand"],
        )
    return rows


# -- the page ---------------------------------------------------------------------------------


def _cell(r) -> str:
    return f"{r['population']} by {r['grouping']}, K={r['K']}, {r['estimand']}"


def _is_default(r) -> bool:
    return bool(r["default"])


def _is_score(r) -> bool:
    return r["method"] == "score"


def _is_union(r) -> bool:
    return r["method"] in ("hybrid_or_score", "bootstrap_t_or_score")


def _is_model_union(r) -> bool:
    return r["method"] in ("inverted_or_score", "bootstrap_t_or_score")


def _is_split(r) -> bool:
    """The score interval from 20 clusters on, the default below."""
    return _is_score(r) if int(r["K"]) >= 20 else _is_default(r)


def _is_union_from_20(r) -> bool:
    """The union with the score interval from 20 clusters on, the default below."""
    return _is_union(r) if int(r["K"]) >= 20 else _is_default(r)


def _is_rate_union_from_20(r) -> bool:
    """For binary rates the union from 20 clusters on; the default elsewhere."""
    if r["kind"] == "rate":
        return _is_union_from_20(r)
    return _is_default(r)


def _was_default(r) -> bool:
    """The default before the union: ``korn_graubard_hybrid`` for every binary rate."""
    if r["kind"] == "rate":
        return r["method"] == "korn_graubard_hybrid"
    return _is_default(r)


#: The policies whose goals the page states: today's defaults, and the candidates.
POLICIES = (
    ("default", _is_default),
    ("before: hybrid for every rate", _was_default),
    ("score", _is_score),
    ("default ∪ score", _is_union),
    ("inverted ∪ score", _is_model_union),
    ("score from K = 20", _is_split),
    ("default ∪ score from K = 20", _is_union_from_20),
    ("rates: default ∪ score from K = 20", _is_rate_union_from_20),
)


def _goal_rows(
    rows: list[dict], pick=_is_default
) -> list[tuple[str, str, float, str, float, bool, str]]:
    """(goal, what, value, comparison, target, met, where) for the policy ``pick`` (the row
    of each cell that the policy would report: by default, the library's default)."""
    defaults = [r for r in rows if pick(r)]
    draws = rows[0]["draws"]
    out = []
    for kind in KINDS:
        sel = [r for r in defaults if r["kind"] == kind]
        if not sel:
            continue
        big = [r for r in sel if r["K"] >= 20]
        ten = [r for r in sel if r["K"] == 10]
        if not big:
            continue
        floor = monte_carlo_floor(draws, len(big))
        worst = min(big, key=lambda r: r["coverage"])
        met = worst["coverage"] >= 94.0
        chance = worst_cell_chance(draws, len(big), worst["coverage"])
        note = (
            ""
            if met
            else f" (Monte Carlo floor over {len(big)} cells: {floor:.1f}; a calibrated "
            f"interval's worst cell is this low with probability {chance:.2f})"
        )
        out.append(
            (
                f"{kind}: worst K ≥ 20 cell ≥ 94",
                "default",
                worst["coverage"],
                ">=",
                94.0,
                met,
                _cell(worst) + note,
            )
        )
        if ten:
            worst10 = min(ten, key=lambda r: r["coverage"])
            out.append(
                (
                    f"{kind}: worst K = 10 cell ≥ 92",
                    "default",
                    worst10["coverage"],
                    ">=",
                    92.0,
                    worst10["coverage"] >= 92.0,
                    _cell(worst10),
                )
            )
    ratio = width_ratio(rows, pick=pick)
    unbounded = sum(
        not math.isfinite(r["mean_width"]) for r in rows if pick(r) and r["method"] != "cr2"
    )
    out.append(
        (
            "mean width over all cells ≤ 1.15 × CR2's",
            "default",
            ratio,
            "<=",
            1.15,
            ratio <= 1.15 and unbounded == 0,
            f"{unbounded} cells with an unbounded interval left out of the mean"
            if unbounded
            else "",
        )
    )
    bad = sum(r["zero_width"] > 0 or r["failures"] > 0 for r in defaults)
    out.append(
        ("cells with a zero-width interval or a failure", "default", bad, "<=", 0, bad == 0, "")
    )
    return out


def width_ratio(rows: list[dict], method: str | None = None, pick=_is_default) -> float:
    """Mean over cells of the width of ``method`` (the policy ``pick``'s row when None) over
    CR2's."""
    cr2 = {
        (r["population"], r["grouping"], r["K"], r["estimand"]): r["mean_width"]
        for r in rows
        if r["method"] == "cr2"
    }
    ratios = [
        r["mean_width"] / cr2[(r["population"], r["grouping"], r["K"], r["estimand"])]
        for r in rows
        if (pick(r) if method is None else r["method"] == method)
        and cr2.get((r["population"], r["grouping"], r["K"], r["estimand"]), 0) > 0
    ]
    # a cell whose intervals are unbounded (a score with no range) is counted apart
    return float(np.mean([x for x in ratios if math.isfinite(x)]))


def summary_table(rows: list[dict], kind: str) -> list[str]:
    sel = [r for r in rows if r["kind"] == kind]
    methods = list(dict.fromkeys(r["method"] for r in sel))
    defaults = sorted({r["method"] for r in sel if r["default"]})
    lines = [
        "| method | worst K ≥ 20 | where | mean K ≥ 20 | mean abs gap K ≥ 20 | worst K = 10 "
        "| width ÷ CR2 | zero-width or failed cells |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for method in methods:
        mine = [r for r in sel if r["method"] == method]
        big = [r for r in mine if r["K"] >= 20] or mine
        ten = [r for r in mine if r["K"] == 10]
        worst = min(big, key=lambda r: r["coverage"])
        name = f"**`{method}`** (default)" if method in defaults else f"`{method}`"
        lines.append(
            f"| {name} | {worst['coverage']:.1f} | {_cell(worst)} | "
            f"{np.mean([r['coverage'] for r in big]):.1f} | "
            f"{np.mean([abs(r['coverage'] - 95) for r in big]):.2f} | "
            + (f"{min(r['coverage'] for r in ten):.1f}" if ten else "–")
            + f" | {width_ratio(sel, method):.3f} | "
            f"{sum(r['zero_width'] > 0 or r['failures'] > 0 for r in mine)} |"
        )
    return lines


def cells_table(rows: list[dict], kind: str) -> list[str]:
    sel = [r for r in rows if r["kind"] == kind]
    methods = list(dict.fromkeys(r["method"] for r in sel))
    lines = [
        "| population | by | G (sizes) | K | estimand | "
        + " | ".join(f"`{m}`" for m in methods)
        + " |",
        "|---|---|---|---|---|" + "---|" * len(methods),
    ]
    keyed = {}
    for r in sel:
        keyed.setdefault((r["population"], r["grouping"], r["K"], r["estimand"]), {})[
            r["method"]
        ] = r
    for (pop, grouping, k, estimand), by_method in keyed.items():
        first = next(iter(by_method.values()))
        sizes = (
            f"{first['G']} ({first['size_min']})"
            if first["size_min"] == first["size_max"]
            else f"{first['G']} ({first['size_min']}–{first['size_max']:,})"
        )
        entries = []
        for m in methods:
            r = by_method[m]
            text = f"{r['coverage']:.1f}"
            entries.append(f"**{text}**" if r["default"] else text)
        lines.append(
            f"| {pop} | {grouping} | {sizes} | {k} | {estimand} | " + " | ".join(entries) + " |"
        )
    return lines


def render(rows: list[dict], minutes: float) -> str:
    draws = rows[0]["draws"]
    se = 100 * math.sqrt(CONFIDENCE * (1 - CONFIDENCE) / draws)
    n_cells = len({(r["population"], r["grouping"], r["K"], r["estimand"]) for r in rows})
    lines = [
        "# Coverage on real benchmarks drawn as populations",
        "",
        "<!-- generated by studies/coverage_real_data.py; do not edit by hand -->",
        "",
        f"Produced by `python studies/coverage_real_data.py` (seed {SEED}, {draws:,} draws per "
        f"cell, {n_cells} cells, bootstraps with {RESAMPLES:,} resamples) with clusterstats "
        f"{clusterstats.__version__}, numpy {np.__version__}, Python "
        f"{platform.python_version()}, in {minutes:.1f} minutes on 2 processes. Every cell is "
        "in [coverage-real-data.csv](coverage-real-data.csv).",
        "",
        "Each bundled dataset is a finite population of clusters. A cell draws `K` of its "
        "clusters **with replacement**, computes every interval method on them by the code "
        "path the library uses, and checks it against the population's own value (the pooled "
        "share over all its rows, or the mean of its cluster means). Nothing is simulated: "
        "cluster sizes, heterogeneity and the relation of size to outcome are the data's own. "
        "The populations, the methods and the peers' constructions (`cr1` is inspect_ai's and "
        "statsmodels' clustered t interval, `svyciprop_beta` R survey's "
        '`svyciprop(method = "beta")`) are described in the script\'s docstring. '
        f"Monte Carlo SE of one cell near 95%: {se:.2f} points.",
        "",
        "## The goals, for the defaults",
        "",
        'The default is what `method="auto"` resolves to: for binary rates '
        f"`{auto_method(is_binary=True, n_clusters=50, uneven_ratio=True)}` when the estimate "
        "is a ratio over clusters of uneven sizes (the `pooled` estimand) and there are "
        f"{FEW_CLUSTERS} or more clusters, `{auto_method(is_binary=True, n_clusters=50)}` "
        f"otherwise; `{auto_method(is_binary=False, n_clusters=50)}` for scores, paired "
        "differences and rerun statistics that are not 0/1 (`compare` and `gate` use the same "
        "intervals). A worst cell below its target but above the Monte Carlo floor (the "
        "expected worst cell of a perfectly calibrated interval over as many cells) is a miss "
        "that noise alone explains; the chance that a calibrated interval's worst cell is as "
        "low is given beside each miss.",
        "",
        "| goal | value | met | where |",
        "|---|---|---|---|",
    ]
    for goal, _, value, _, _, met, where in _goal_rows(rows):
        shown = f"{value:.3f}" if isinstance(value, float) and value < 10 else f"{value:g}"
        lines.append(f"| {goal} | {shown} | {'yes' if met else '**no**'} | {where} |")
    if any(r["method"] == "score" for r in rows):
        goals = {name: _goal_rows(rows, pick) for name, pick in POLICIES}
        before = [r for r in rows if _was_default(r) and r["kind"] == "rate" and r["K"] >= 20]
        before_worst = min(r["coverage"] for r in before)
        before_chance = worst_cell_chance(draws, len(before), before_worst)
        lines += [
            "",
            "## The default and the candidates",
            "",
            "`default` is today's rule (above); `before: hybrid for every rate` is the rule "
            "before it, `korn_graubard_hybrid` for every binary rate, whose worst K ≥ 20 cell "
            f"({before_worst:g}, where a calibrated interval's worst cell is as low with "
            f"probability {before_chance:.2f}) made the union the default for ratios over "
            "uneven clusters. Measured on the same draws: `score`, the cluster score "
            "interval (the cluster-robust t test with its variance evaluated under each "
            "candidate value, inverted: Fieller's interval for a ratio with the uncentred "
            "sandwich variance, the Wilson construction of Saha, Miller & Wang 2016 on cluster "
            "totals; `clusterstats.core.score`), and `default ∪ score`, the union of the "
            "default interval and the score interval (`hybrid_or_score` for binary rates, "
            "`bootstrap_t_or_score` otherwise), which covers wherever either does; "
            "`inverted ∪ score`, for binary rates the union with the model-based "
            "`korn_graubard_inverted` (the default elsewhere); and `score from K = 20`, the "
            "score interval on 20 or more clusters and the default below; `default ∪ score from "
            "K = 20`, the union on 20 or more clusters and the default below, for every kind "
            "or (`rates: ...`) for binary rates only. The score interval "
            "alone is not a candidate for rare binary outcomes: when every drawn row fails "
            'it has zero width (the library\'s `method="score"` takes the Clopper–Pearson '
            "fallback there). The unions are the library's "
            '`method="korn_graubard_hybrid_or_score"` and `"bootstrap_t_or_score"`, '
            "and `inverted ∪ score` is not a library method.",
            "",
            "| goal | " + " | ".join(f"{name}" for name, _ in POLICIES) + " |",
            "|---|" + "---|" * len(POLICIES),
        ]
        for i, (goal, *_rest) in enumerate(goals["default"]):
            cells_here = []
            for name, _ in POLICIES:
                _, _, value, _, _, met, where = goals[name][i]
                shown = f"{value:.3f}" if isinstance(value, float) and value < 10 else f"{value:g}"
                if "unbounded" in where:
                    shown += f" ({where.split(' cells')[0]} unbounded)"
                cells_here.append(shown if met else f"**{shown}**")
            lines.append(f"| {goal} | " + " | ".join(cells_here) + " |")
        for label, keep in (
            ("mean width ÷ CR2's, cells with K ≥ 20 (no target)", lambda r: r["K"] >= 20),
            ("mean width ÷ CR2's, cells with K < 20 (no target)", lambda r: r["K"] < 20),
        ):
            part = [r for r in rows if keep(r)]
            lines.append(
                f"| {label} | "
                + " | ".join(f"{width_ratio(part, pick=pick):.3f}" for _, pick in POLICIES)
                + " |"
            )
        lines += ["", "A value in bold misses its goal."]
    for kind, title in (
        ("rate", "Binary rates"),
        ("paired", "Paired differences"),
        ("score", "A continuous score"),
        ("rerun", "Rerun statistics (pass@k, pass^k per case)"),
    ):
        if not any(r["kind"] == kind for r in rows):
            continue
        lines += ["", f"## {title}", "", *summary_table(rows, kind)]
        lines += [
            "",
            "<details><summary>Every cell (coverage %, the default in bold)</summary>",
            "",
        ]
        lines += [*cells_table(rows, kind), "", "</details>"]
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    sys.exit(main())
