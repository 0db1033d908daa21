"""Missing-data study: bias and coverage of complete case, IPW and the bounds.

Clustered binary outcomes: cluster g has success probability ``expit(a + s u_g)`` with
``u_g ~ N(0, 1)`` (``s`` sets the latent ICC, weak or strong clustering). Rows go missing by
one of three mechanisms, about 25% of them:

* ``MCAR``: every row with the same probability;
* ``MAR-cluster``: hard clusters (low ``u_g``) lose more rows, ``expit(b - c u_g)``;
* ``MNAR``: failures go missing more often than successes (depends on the outcome itself).

The target is the pooled mean of every row, answered or not; its expectation over clusters
(``E[expit(a + s u)]``, by Gauss–Hermite quadrature) is the truth the intervals must cover.
Each cell runs ``--reps`` replicates with a fixed seed; methods are ``cluster_ci`` with
``missing="drop"`` (complete case), ``"ipw"`` (cluster propensities, the default),
``"ipw"`` with ``propensity="shrunk"``, and the bounds ``"fail"`` and ``"pass"``.

Usage::

    python studies/coverage_missing.py            # writes docs/coverage-missing.md
    python studies/coverage_missing.py --quick    # a smoke run, prints only
"""

from __future__ import annotations

import argparse
import platform
import sys
import time
import warnings
from pathlib import Path

import numpy as np
import pandas as pd

import clusterstats

REPO = Path(__file__).resolve().parents[1]
SEED = 20261130
METHODS = {
    "complete case": {"missing": "drop"},
    "ipw (cluster)": {"missing": "ipw"},
    "ipw (shrunk)": {"missing": "ipw", "propensity": "shrunk"},
    "missing = fail": {"missing": "fail"},
    "missing = pass": {"missing": "pass"},
}
# latent scale s: ICC on the observed scale about 0.05 (weak) and 0.25 (strong) at a = 0
CLUSTERING = {"weak": 0.45, "strong": 1.25}
MECHANISMS = ("MCAR", "MAR-cluster", "MNAR")


def truth(a: float, s: float) -> float:
    nodes, weights = np.polynomial.hermite_e.hermegauss(80)
    return float((weights * (1 / (1 + np.exp(-(a + s * nodes))))).sum() / weights.sum())


def draw(rng, k: int, m: int, a: float, s: float, mechanism: str):
    u = rng.normal(size=k)
    cluster = np.repeat(np.arange(k), m)
    y = (rng.random(k * m) < 1 / (1 + np.exp(-(a + s * u[cluster])))).astype(float)
    if mechanism == "MCAR":
        p_respond = np.full(k * m, 0.75)
    elif mechanism == "MAR-cluster":
        p_respond = 1 / (1 + np.exp(-(1.3 + 1.2 * u[cluster])))
    else:
        p_respond = np.where(y == 1, 0.9, 0.55)
    observed = np.where(rng.random(k * m) < p_respond, y, np.nan)
    return pd.DataFrame({"cluster": cluster, "y": observed})


def run_cell(rng, reps, k, m, a, s, mechanism):
    target = truth(a, s)
    rows = {name: {"err": [], "cover": 0, "width": []} for name in METHODS}
    bracket = {"err": [], "cover": 0, "width": []}
    for _ in range(reps):
        frame = draw(rng, k, m, a, s, mechanism)
        results = {}
        for name, options in METHODS.items():
            res = results[name] = clusterstats.cluster_ci(frame, "y", by="cluster", **options)
            rows[name]["err"].append(res.estimate - target)
            rows[name]["cover"] += res.low <= target <= res.high
            rows[name]["width"].append(res.high - res.low)
        low, high = results["missing = fail"].low, results["missing = pass"].high
        bracket["err"].append(np.nan)
        bracket["cover"] += low <= target <= high
        bracket["width"].append(high - low)
    rows["bounds: fail low to pass high"] = bracket
    return [
        {
            "mechanism": mechanism,
            "clustering": None,
            "k": k,
            "m": m,
            "method": name,
            "bias_points": 100 * float(np.mean(r["err"])) if r["err"][0] == r["err"][0] else np.nan,
            "coverage": 100 * r["cover"] / reps,
            "mean_width": float(np.mean(r["width"])),
        }
        for name, r in rows.items()
    ]


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--reps", type=int)
    args = parser.parse_args(argv)
    reps = args.reps or (40 if args.quick else 1000)
    designs = [(30, 10)] if args.quick else [(30, 10), (100, 10)]
    rng = np.random.default_rng(SEED)
    start = time.perf_counter()
    records = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", clusterstats.ClusterStatsWarning)
        for clustering, s in CLUSTERING.items():
            for mechanism in MECHANISMS:
                for k, m in designs:
                    for row in run_cell(rng, reps, k, m, 0.0, s, mechanism):
                        row["clustering"] = clustering
                        records.append(row)
    table = pd.DataFrame(records)
    minutes = (time.perf_counter() - start) / 60
    shown = table.round({"bias_points": 2, "coverage": 1, "mean_width": 3})
    print(shown.to_string(index=False))
    mar = table[(table.mechanism == "MAR-cluster") & (table.method == "ipw (cluster)")]
    cc = table[(table.mechanism == "MAR-cluster") & (table.method == "complete case")]
    verdict = (
        f"MAR-cluster: ipw (cluster) worst |bias| {mar.bias_points.abs().max():.2f} points "
        f"(goal < 1), worst coverage {mar.coverage.min():.1f}% (goal >= 93); complete case "
        f"bias {cc.bias_points.min():.2f} to {cc.bias_points.max():.2f} points, coverage "
        f"{cc.coverage.min():.1f} to {cc.coverage.max():.1f}%"
    )
    print(verdict)
    if args.quick:
        return 0
    page = [
        "# Missing-data study: complete case, IPW and the bounds",
        "",
        "Generated by `python studies/coverage_missing.py` "
        f"(seed {SEED}, {reps} replicates per cell, {minutes:.1f} minutes; clusterstats "
        f"{clusterstats.__version__}, numpy {np.__version__}, pandas {pd.__version__}, "
        f"Python {platform.python_version()}). Do not edit by hand.",
        "",
        "Clustered binary outcomes with mean 0.5 (`expit(s u_g)`, `u_g ~ N(0, 1)`; weak "
        f"clustering s = {CLUSTERING['weak']}, strong s = {CLUSTERING['strong']}), about 25% "
        "of rows missing by one of three mechanisms: **MCAR** (every row alike), "
        "**MAR-cluster** (hard clusters lose more rows: response probability "
        "`expit(1.3 + 1.2 u_g)`) and **MNAR** (failures go missing more: 45% against 10%). "
        "The target is the pooled mean of every row, answered or not, and the truth is its "
        "expectation over clusters. Each method is `cluster_ci(..., missing=...)` with the "
        "default interval method. Bias is in percentage points; coverage of the 95% interval "
        "in percent.",
        "",
        "## Verdict",
        "",
        verdict + ".",
        "",
        "- Where missingness depends on the cluster, complete case is biased upwards and its "
        "coverage drops; IPW with each cluster's own response rate removes the bias, because "
        "each cluster's responses then stand for all its rows.",
        "- Shrinking the cluster rates towards the overall rate steadies the weights but pulls "
        'the estimate back towards complete case; that is why `propensity="cluster"` is the '
        "default.",
        "- Under MNAR no weighting on the cluster can remove the bias (the missing rows differ "
        "from the answered rows of their own cluster): only the bounds and the δ-adjustment "
        "of `missing_report` speak to it. Each bound's own interval covers its bound, not "
        "the truth; the range from missing-as-fail's lower end to missing-as-pass's upper end "
        "brackets the truth (row `bounds: fail low to pass high`), at the price of its width.",
        "",
        "## Every cell",
        "",
        "| clustering | mechanism | K | m | method | bias (points) | coverage % | mean width |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for r in shown.itertuples(index=False):
        page.append(
            f"| {r.clustering} | {r.mechanism} | {r.k} | {r.m} | {r.method} | "
            f"{r.bias_points:.2f} | {r.coverage:.1f} | {r.mean_width:.3f} |"
        )
    (REPO / "docs" / "coverage-missing.md").write_text("\n".join(page) + "\n")
    print("wrote docs/coverage-missing.md")
    return 0


if __name__ == "__main__":
    sys.exit(main())
