"""Coverage of ``judged_compare``: a leaderboard from a judge on every answer and human labels
on a few, on simulated clustered leaderboards and on HANNA and Topical-Chat used as
populations.

Each draw runs ``judged_compare`` (its defaults: ``method="cr2"``, the weight cross-fitted
below 50 labelled clusters, ``rank_method="guarded"``) and, on the same draw, ``compare`` of
the labelled answers alone (``method="cr2"``, ``rank_method="guarded"``: what a team that set
the judge aside would report). Per draw it records:

- **score**: the share of models whose score interval holds the model's true mean (the
  judged interval, its naive interval with every item its own cluster, the humans' alone);
- **all ranks**: whether every model's simultaneous rank set holds its true rank (a set
  holds a tied model when it holds every rank the tie can give it);
- **top**: whether the set of models that could be first holds the truly best;
- **wrong separation**: whether the simultaneous family separated some pair whose true
  order is the other way, or tied (the family-wise error of the separations);
- **set size**: the mean width of the simultaneous rank sets (``rank_high - rank_low``),
  and the mean width of the score intervals.

Two parts, fixed seed:

1. **Simulated leaderboards.** 5 models whose true means are 0, 0.1, 0.1, 0.3 and 0.6 (one
   tie), on clusters of ``1 + Poisson(3)`` items; the human score has a cluster effect every
   model shares (ICC 0.2) and a model-by-cluster effect (ICC 0.1); the judge reads the
   human score with a slope of 0.8, noise of sd 0.5 and a bias that varies by cluster and
   by model (sd 0.3). Labelled: every model's answers on the items of ``m`` whole clusters
   of ``C``, or on one item in every cluster. Truth: the models' population means.
2. **Real leaderboards as populations.** HANNA (11 story generators on 96 prompts; the
   prompts resampled with replacement, the stories of 30 of them labelled) for two criteria
   judged by ChatGPT and one by Beluga-13B, and Topical-Chat (6 response sources on 60
   dialogues; 20 labelled) for two criteria judged by UniEval. Truth: the population's own
   human means.

Each cell draws from a generator seeded by ``(SEED, crc32 of the cell's key)``; each finished
cell is appended to ``studies/cache/coverage_judged_ranks.jsonl`` (a rerun resumes).

Usage::

    python studies/coverage_judged_ranks.py            # writes docs/coverage-judged-ranks.md
    python studies/coverage_judged_ranks.py --quick    # 10 draws per cell, prints only
"""

from __future__ import annotations

import argparse
import json
import math
import platform
import sys
import time
import warnings
import zlib
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

import clusterstats  # noqa: E402
from clusterstats.errors import ClusterStatsWarning, DegenerateDataError  # noqa: E402

PAGE_PATH = REPO / "docs" / "coverage-judged-ranks.md"
CACHE_PATH = REPO / "studies" / "cache" / "coverage_judged_ranks.jsonl"
SEED = 20261207
CONFIDENCE = 0.95
SIM_DRAWS, REAL_DRAWS = 300, 200
RANK_DRAWS = 2000  # draws of the rank sets' critical values, per leaderboard
MEANS = np.array([0.0, 0.1, 0.1, 0.3, 0.6])
MODEL_NAMES = tuple(f"m{k}" for k in range(MEANS.size))


@dataclass(frozen=True)
class Cell:
    source: str  # "simulated" or the dataset
    population: str
    clusters: int
    labelled: int  # whole clusters labelled; 0: one item labelled in every cluster
    draws: int

    @property
    def key(self) -> str:
        return f"{self.source}|{self.population}|{self.clusters}|{self.labelled}|{self.draws}"

    @property
    def design(self) -> str:
        return "one item in every cluster" if self.labelled == 0 else "whole clusters"


def simulated(rng: np.random.Generator, clusters: int) -> pd.DataFrame:
    sizes = 1 + rng.poisson(3, clusters)
    cluster = np.repeat(np.arange(clusters), sizes)
    n = cluster.size
    shared = rng.normal(0, math.sqrt(0.2), clusters)[cluster]
    frames = []
    for k, name in enumerate(MODEL_NAMES):
        own = rng.normal(0, math.sqrt(0.1), clusters)[cluster]
        human = MEANS[k] + shared + own + rng.normal(0, math.sqrt(0.7), n)
        lean = rng.normal(0.2, 0.3, clusters)[cluster]
        judge = 0.8 * human + lean + rng.normal(0, 0.5, n)
        frames.append(
            pd.DataFrame(
                {
                    "model": name,
                    "cluster": cluster,
                    "item": np.arange(n),
                    "human_full": human,
                    "judge": judge,
                }
            )
        )
    return pd.concat(frames, ignore_index=True)


@dataclass(frozen=True)
class Population:
    name: str
    frame: pd.DataFrame  # model, cluster, item, human_full, judge (one item per cluster)

    def truth(self) -> pd.Series:
        return self.frame.groupby("model")["human_full"].mean()


def _population(name: str, part: pd.DataFrame, judge: str) -> Population:
    """One criterion of a bundled dataset: each system a model, each prompt (or dialogue)
    one item, its own cluster."""
    frame = pd.DataFrame(
        {
            "model": part["system"].to_numpy(),
            "cluster": part["cluster"].to_numpy(),
            "item": part["cluster"].to_numpy(),
            "human_full": part["human_score"].to_numpy(),
            "judge": part[judge].to_numpy(),
        }
    )
    return Population(name, frame)


def real_populations() -> list[Population]:
    hanna = clusterstats.datasets.load("hanna")
    out = [
        _population(f"HANNA {criterion}, {who}", hanna[hanna["criterion"] == criterion], judge)
        for criterion, judge, who in (
            ("Coherence", "judge_score", "ChatGPT"),
            ("Surprise", "judge_score", "ChatGPT"),
            ("Empathy", "judge_beluga13b", "Beluga-13B"),
        )
    ]
    chat = clusterstats.datasets.load("topicalchat")
    for criterion in ("naturalness", "engagingness"):
        part = chat[chat["criterion"] == criterion]
        out.append(_population(f"Topical-Chat {criterion}, UniEval", part, "judge_score"))
    return out


def cells(pops: list[Population], *, quick: bool) -> list[Cell]:
    out = []
    for clusters, labelled in ((30, 10), (100, 20), (100, 40), (100, 0)):
        out.append(Cell("simulated", "5 models", clusters, labelled, SIM_DRAWS))
    for pop in pops:
        clusters = int(pop.frame["cluster"].nunique())
        out.append(Cell("real", pop.name, clusters, 30 if clusters > 80 else 20, REAL_DRAWS))
    if quick:
        out = [Cell(c.source, c.population, c.clusters, c.labelled, 10) for c in out]
    return out


def resample(rng: np.random.Generator, pop: Population) -> pd.DataFrame:
    """The population's clusters drawn with replacement, each draw a new cluster."""
    ids = np.sort(pop.frame["cluster"].unique())
    chosen = rng.choice(ids, ids.size, replace=True)
    by_cluster = {c: g for c, g in pop.frame.groupby("cluster")}
    parts = [by_cluster[c].assign(cluster=i, item=i) for i, c in enumerate(chosen)]
    return pd.concat(parts, ignore_index=True)


def label(rng: np.random.Generator, frame: pd.DataFrame, labelled: int) -> pd.DataFrame:
    clusters = np.sort(frame["cluster"].unique())
    if labelled:
        chosen = rng.choice(clusters, labelled, replace=False)
        keep = frame["cluster"].isin(chosen)
    else:  # one item in every cluster, the same item for every model
        items = frame.drop_duplicates("item")[["cluster", "item"]]
        picked = items.groupby("cluster")["item"].apply(lambda s: rng.choice(s.to_numpy()))
        keep = frame["item"].isin(picked.to_numpy())
    return frame.assign(human=frame["human_full"].where(keep))


def covers(low: np.ndarray, high: np.ndarray, truth: np.ndarray) -> np.ndarray:
    """Whether each rank set holds every rank its model's true mean can give it."""
    above = (truth[None, :] > truth[:, None]).sum(axis=1)
    not_below = (truth[None, :] >= truth[:, None]).sum(axis=1)
    return (low <= 1 + above) & (high >= not_below)


def measures(res, truth: np.ndarray) -> dict[str, float]:
    low, high = np.asarray(res.rank_low), np.asarray(res.rank_high)
    score_low, score_high = np.asarray(res.score_low), np.asarray(res.score_high)
    best = truth == truth.max()
    top = np.asarray(res.in_top_set)
    index = {m: i for i, m in enumerate(res.models)}
    wrong = any(truth[index[a]] <= truth[index[b]] for a, b in res.separated)
    return {
        "score": float(np.mean((score_low <= truth) & (truth <= score_high))),
        "naive": float(
            np.mean((np.asarray(res.naive_low) <= truth) & (truth <= np.asarray(res.naive_high)))
        ),
        "all_ranks": float(covers(low, high, truth).all()),
        "top": float(top[best].all()),
        "wrong": float(wrong),
        "set_size": float(np.mean(high - low)),
        "width": float(np.mean(score_high - score_low)),
    }


def one_draw(rng: np.random.Generator, cell: Cell, pops: dict[str, Population], seed: int):
    if cell.source == "simulated":
        frame = simulated(rng, cell.clusters)
        truth = pd.Series(MEANS, index=MODEL_NAMES)
    else:
        pop = pops[cell.population]
        frame = resample(rng, pop)
        truth = pop.truth()
    run = label(rng, frame, cell.labelled)
    common = {"model": "model", "on": "item", "n_resamples": RANK_DRAWS, "rng": seed}
    judged = clusterstats.judged_compare(run, "human", "cluster", judge="judge", **common)
    labelled = run.dropna(subset=["human"])
    values = truth.reindex(judged.models).to_numpy()
    out = {f"judged {k}": v for k, v in measures(judged, values).items()}
    try:
        humans = clusterstats.compare(
            labelled, "human", "cluster", method="cr2", rank_method="guarded", **common
        )
    except DegenerateDataError:  # a model's labels all alike: the labels alone give nothing
        out.update({f"humans {k}": math.nan for k in measures(judged, values)})
        out["humans failed"] = 1.0
        return out
    out.update({f"humans {k}": v for k, v in measures(humans, values).items()})
    out["humans failed"] = 0.0
    return out


def run_cell(cell: Cell, pops: dict[str, Population]) -> dict:
    rng = np.random.default_rng([SEED, zlib.crc32(cell.key.encode())])
    start = time.perf_counter()
    rows = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ClusterStatsWarning)
        for draw in range(cell.draws):
            rows.append(one_draw(rng, cell, pops, seed=draw))
    result = {
        "key": cell.key,
        "source": cell.source,
        "population": cell.population,
        "clusters": cell.clusters,
        "labelled": cell.labelled,
        "design": cell.design,
        "draws": cell.draws,
        "seconds": round(time.perf_counter() - start, 1),
    }
    for name in rows[0]:
        # a studentised bootstrap bound of the humans' scores can be infinite (compare's
        # score intervals use cluster_ci's default): widths are summarised by their median
        # (NaN: the draws where the labels alone could not be compared, counted apart)
        summary = np.nanmedian if name.endswith("width") else np.nanmean
        result[name] = float(summary([r[name] for r in rows]))
    return result


def read_cache() -> dict[str, dict]:
    if not CACHE_PATH.exists():
        return {}
    rows = [json.loads(line) for line in CACHE_PATH.read_text().splitlines() if line.strip()]
    return {r["key"]: r for r in rows}


def percent(value: float) -> str:
    return f"{100 * value:.1f}"


def mc_se(rate: float, draws: int) -> float:
    return 100 * math.sqrt(max(rate * (1 - rate), 0.0025) / draws)


def page(results: list[dict], seconds: float) -> str:
    lines = [
        "# Coverage of `judged_compare`: judged leaderboards with a few human labels",
        "",
        "Generated by `python studies/coverage_judged_ranks.py` (seed "
        f"{SEED}; {seconds / 60:.1f} minutes on one core, Python {platform.python_version()},"
        f" numpy {np.__version__}). Do not edit by hand.",
        "",
        "Each draw runs `judged_compare` with its defaults and, on the same draw, `compare` of "
        'the labelled answers alone (`method="cr2"`, `rank_method="guarded"`). Simulated: 5 '
        "models (true means 0, 0.1, 0.1, 0.3, 0.6) on clusters of 1 + Poisson(3) items, a "
        "cluster effect every model shares (ICC 0.2), a model-by-cluster effect (ICC 0.1), "
        "a judge of slope 0.8, noise sd 0.5 and a bias varying by cluster and model (sd 0.3). "
        "Real: HANNA (11 generators, 96 prompts, 30 labelled) and Topical-Chat (6 sources, 60 "
        "dialogues, 20 labelled), prompts or dialogues drawn with replacement, the "
        "population's own human means as truth. Goals: every simultaneous rank set and the "
        "top set cover at least 95% of draws, and wrong separations at most 5%.",
        "",
        "Columns: **score** the share of models whose interval covers (judged, and its naive "
        "interval with every item its own cluster); **all ranks** every model's simultaneous "
        "rank set holds its true rank; **top** the set of possible firsts holds the truly best; "
        "**wrong** the family separated a pair against its true order (or a tie); **set** "
        "the mean width of the rank sets; **width** the median over draws of the score "
        "intervals' mean width (the humans' score intervals are `compare`'s, `cluster_ci`'s "
        "default, whose studentised bootstrap bound can be infinite on a few labels). "
        "**humans: failed** the draws where `compare` of the labelled answers refused (a "
        "model's labels all alike: `DegenerateDataError`), left out of the humans' columns. "
        "Monte Carlo standard errors: a rate p over n draws has sd sqrt(p(1-p)/n), 1.3 points "
        "at 95% over 300 draws and 1.5 over 200.",
        "",
        "| population | C | labelled | draws | score | naive | all ranks | top | wrong | set "
        "| width | humans: score | humans: all ranks | humans: wrong | humans: set | humans: "
        "width | humans: failed |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in results:
        labelled = r["design"] if r["labelled"] == 0 else f"{r['labelled']} clusters"
        lines.append(
            f"| {r['population']} | {r['clusters']} | {labelled} | {r['draws']} | "
            f"{percent(r['judged score'])} | {percent(r['judged naive'])} | "
            f"{percent(r['judged all_ranks'])} ± {mc_se(r['judged all_ranks'], r['draws']):.1f}"
            f" | {percent(r['judged top'])} | {percent(r['judged wrong'])} | "
            f"{r['judged set_size']:.2f} | {r['judged width']:.3f} | "
            f"{percent(r['humans score'])} | {percent(r['humans all_ranks'])} | "
            f"{percent(r['humans wrong'])} | {r['humans set_size']:.2f} | "
            f"{r['humans width']:.3f} | {percent(r.get('humans failed', 0.0))} |"
        )
    worst = min(results, key=lambda r: r["judged all_ranks"])
    top = min(results, key=lambda r: r["judged top"])
    wrong = max(results, key=lambda r: r["judged wrong"])
    lines += [
        "",
        "## In brief",
        "",
        f"- Simultaneous rank sets: worst cell {percent(worst['judged all_ranks'])}% "
        f"± {mc_se(worst['judged all_ranks'], worst['draws']):.1f} ({worst['population']}, "
        f"{worst['clusters']} clusters).",
        f"- Top set: worst {percent(top['judged top'])}% ({top['population']}).",
        f"- Wrong separations: at most {percent(wrong['judged wrong'])}% of draws "
        f"({wrong['population']}).",
        "- Rank-set width against the labels alone (mean over cells): "
        f"{np.mean([r['judged set_size'] for r in results]):.2f} against "
        f"{np.mean([r['humans set_size'] for r in results]):.2f}.",
        "",
    ]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="10 draws per cell, prints only")
    args = parser.parse_args(argv)
    pops = {p.name: p for p in real_populations()}
    todo = cells(list(pops.values()), quick=args.quick)
    cache = {} if args.quick else read_cache()
    results = []
    for i, cell in enumerate(todo, 1):
        if cell.key in cache:
            results.append(cache[cell.key])
            continue
        result = run_cell(cell, pops)
        results.append(result)
        print(f"{i}/{len(todo)} {cell.key}: {result['seconds']} s", flush=True)
        if not args.quick:
            CACHE_PATH.parent.mkdir(parents=True, exist_ok=True)
            with CACHE_PATH.open("a") as handle:
                handle.write(json.dumps(result) + "\n")
    text = page(results, sum(r["seconds"] for r in results))
    if args.quick:
        print(text)
    else:
        PAGE_PATH.write_text(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
