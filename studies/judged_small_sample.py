"""Small-sample variants of the judged interval where its coverage is shortest.

``studies/coverage_judged.py`` finds ``judged_ci``'s default (``method="cr2"``) about a point
short of 95% in a few simulated cells with whole clusters labelled, 20 of 100, clusters of
uneven sizes (CV 0.8) and the pooled mean, mostly at ``target="benchmark"``; the labels alone
(the same construction with weight 0) are short there too. This script measures, in those
cells and on the same kind of draws, two small-sample corrections the library already uses
elsewhere, to say which (if either) would close the gap and at what width:

* ``cr2``: CR2's leverage correction with clubSandwich's Satterthwaite df of the labelled
  clusters' sizes under independent rows (the library's default df before this study, and
  still at ``target="population"``);
* ``cr2, uneven-sizes df``: the same variance, with the df of ``cluster_ci(method="cr2_ik")``:
  the Satterthwaite df under a random-effects working model whose ICC is the Moulton ICC of
  the labelled rows' residuals ``y - weight * f`` at the reported weight (Imbens & Kolesar
  2016; ``core.variance.working_model_df``), never above the independent-rows df. Since this
  study it is the library's df at ``target="benchmark"`` (there with each cluster's own
  cross-fitted weight in the residuals);
* ``jackknife scale``: each labelled residual's unit divided by ``1 - leverage`` instead of its
  square root (the scale of clubSandwich's CR3, the leave-one-cluster-out jackknife), with the
  independent-rows df.

Every variant's df is computed here, whatever the library's default df, so the page does not
change with it.

Each variant is scored with ``weight="auto"`` (cross-fitted: fewer than 50 labelled
clusters) and with weight 0 (the labels alone), at both targets. The variants are swapped into
``clusterstats.core.judged`` for the length of a call (a study of alternatives, not library
code). Every cell draws ``DRAWS`` runs from a generator seeded by ``(SEED, crc32 of the
cell's key)``.

Usage::

    python studies/judged_small_sample.py            # docs/coverage-judged-small-sample.md
    python studies/judged_small_sample.py --quick    # 40 draws per cell, prints only
"""

from __future__ import annotations

import argparse
import contextlib
import math
import platform
import sys
import time
import warnings
import zlib
from collections.abc import Iterator
from pathlib import Path

import numpy as np
from scipy import stats

sys.path.insert(0, str(Path(__file__).resolve().parent))
import coverage_judged as cj

import clusterstats
from clusterstats.core import judged as core
from clusterstats.core.grouping import ClusterSums
from clusterstats.core.variance import moulton_icc, satterthwaite_df_cr2, working_model_df
from clusterstats.errors import ClusterStatsWarning

REPO = Path(__file__).resolve().parents[1]
PAGE_PATH = REPO / "docs" / "coverage-judged-small-sample.md"
SEED = 20261208
DRAWS = 2000
CONFIDENCE = 0.95
VARIANTS = ("cr2", "cr2, uneven-sizes df", "jackknife scale")
WEIGHTS = {"judged": "auto", "humans alone": 0.0}


def scenarios() -> list[cj.Scenario]:
    """The study's simulated populations with whole clusters, 20 of 100 labelled."""
    return [s for s in cj.scenarios() if s.clusters == 100 and round(s.share * 100) == 20]


_SCALES = core._cr2_scales


def _jackknife_scales(sums, size, size_hat, has, small_sample):
    judge, residual = _SCALES(sums, size, size_hat, has, small_sample)
    if small_sample == "cr1" or sums.stated:
        return judge, residual
    strata = sums.strata
    labelled_size = np.bincount(strata, weights=size_hat)[strata]
    labelled = np.bincount(strata, weights=has.astype(float))[strata]
    with np.errstate(divide="ignore", invalid="ignore"):
        jackknife = np.sqrt((labelled - 1) / labelled) / (1 - size_hat / labelled_size)
    return judge, np.where(has, jackknife, 1.0)


@contextlib.contextmanager
def jackknife_scale() -> Iterator[None]:
    core._cr2_scales = _jackknife_scales
    try:
        yield
    finally:
        core._cr2_scales = _SCALES


def independent_rows_df(sums: core.JudgedSums) -> float:
    """clubSandwich's Satterthwaite df of the labelled clusters' sizes (rows independent)."""
    sizes = sums.rows[sums.labelled > 0]
    return float(satterthwaite_df_cr2(sizes, float(sizes.sum())))


def uneven_sizes_df(sums: core.JudgedSums, weight: float) -> float:
    """The df of uneven labelled-cluster sizes at ``weight``, never above the independent-rows
    df."""
    has = sums.labelled > 0
    residuals = ClusterSums(
        counts=sums.labelled[has],
        totals=sums.human[has] - weight * sums.judge[has],
        squares=sums.human_sq[has] - 2 * weight * sums.cross[has] + weight**2 * sums.judge_sq[has],
    )
    icc = moulton_icc(residuals)
    return min(float(working_model_df(sums.rows[has], icc, "pooled")), independent_rows_df(sums))


def interval(sums: core.JudgedSums, variant: str, target: str, weight) -> tuple[float, float]:
    """The variant's interval: the library's estimate and variance (with the jackknife's
    scale swapped in for that variant), the variant's df, stated here whatever the library's
    default df is."""
    resolved = "cross-fitted" if weight == "auto" else weight
    common = {"estimand": "pooled", "target": target, "confidence": CONFIDENCE}
    if variant == "jackknife scale":
        with jackknife_scale():
            found = core.fit(sums, **common, weight=resolved)
    else:
        found = core.fit(sums, **common, weight=resolved)
    if variant == "cr2, uneven-sizes df":
        df = uneven_sizes_df(sums, found.weight)
    else:
        df = independent_rows_df(sums)
    half = float(stats.t.ppf(0.5 + CONFIDENCE / 2, df)) * math.sqrt(found.variance)
    return found.estimate - half, found.estimate + half


def run_cell(scenario: cj.Scenario, draws: int) -> list[dict]:
    cell = cj.Cell("simulated", scenario.name, "simulated", scenario.role, "clusters", 100, 20,
                   scenario.share, scenario)  # fmt: skip
    rng = np.random.default_rng([SEED, zlib.crc32(cell.key.encode())])
    tally: dict[tuple, np.ndarray] = {}
    start = time.perf_counter()
    for _ in range(draws):
        codes, sizes, y, f = cj.simulate(rng, scenario)
        labelled = cj.label(rng, cell, codes, sizes)
        sums = cj.sums_of(codes, sizes.size, y, f, labelled)
        truth = {"population": cj.MU, "benchmark": float(y.mean())}
        for target in cj.TARGETS:
            t = truth[target]
            for method, weight in WEIGHTS.items():
                for variant in VARIANTS:
                    low, high = interval(sums, variant, target, weight)
                    counts = tally.setdefault((target, method, variant), np.zeros(3))
                    counts += (low <= t <= high, high - low, 1)
    seconds = time.perf_counter() - start
    rows = []
    for (target, method, variant), (covered, width, n) in tally.items():
        p = covered / n
        base = tally[(target, method, "cr2")]
        rows.append({
            "population": scenario.name, "target": target, "method": method,
            "variant": variant, "draws": int(n), "coverage": 100 * p,
            "mc_se": 100 * math.sqrt(p * (1 - p) / n), "width_vs_cr2": width / base[1],
            "seconds": seconds,
        })  # fmt: skip
    return rows


def render(rows: list[dict], seconds: float) -> str:
    lines = [
        "# Judged intervals: two small-sample corrections where coverage is shortest",
        "",
        f"Produced by `python studies/judged_small_sample.py` (seed {SEED}) with clusterstats "
        f"{clusterstats.__version__}, numpy {np.__version__}, Python "
        f"{platform.python_version()}, in {seconds / 60:.1f} minutes on one core: "
        f"{len({r['population'] for r in rows})} simulated cells of {DRAWS:,} draws each.",
        "",
        "The cells: the [coverage study](coverage-judged.md)'s simulated populations with whole "
        "clusters labelled, 20 of 100, clusters of uneven sizes (mean 20, CV 0.8), the pooled "
        "mean. `judged` is `judged_ci`'s default weight (cross-fitted here), `humans alone` "
        "weight 0. The variants (the script's docstring says how each is computed):",
        "",
        "- `cr2`: CR2 with clubSandwich's Satterthwaite df under independent rows, the "
        'library\'s df before this study (and still at `target="population"`);',
        '- `cr2, uneven-sizes df`: the same variance with `cluster_ci(method="cr2_ik")`\'s df '
        "(Imbens & Kolesár 2016), from the labelled residuals: the library's df at "
        '`target="benchmark"` since this study;',
        "- `jackknife scale`: the labelled residuals scaled as clubSandwich's CR3 "
        "(leave-one-cluster-out), with the independent-rows df.",
        "",
        "Width is each variant's mean width over `cr2`'s in the same draws.",
        "",
    ]
    for target in cj.TARGETS:
        lines += [
            f"## Target `{target}`",
            "",
            "| population | method | " + " | ".join(f"`{v}`" for v in VARIANTS) + " |",
            "|---|---|" + "---|" * len(VARIANTS),
        ]
        for population in dict.fromkeys(r["population"] for r in rows):
            for method in WEIGHTS:
                found = {
                    r["variant"]: r
                    for r in rows
                    if r["population"] == population
                    and r["target"] == target
                    and r["method"] == method
                }
                cells = [
                    f"{found[v]['coverage']:.1f} ± {found[v]['mc_se']:.1f}"
                    + ("" if v == "cr2" else f" (width {found[v]['width_vs_cr2']:.3f})")
                    for v in VARIANTS
                ]
                lines.append(f"| {population} | `{method}` | " + " | ".join(cells) + " |")
        lines.append("")
    lines += ["## In brief", ""]
    for target in cj.TARGETS:
        for variant in VARIANTS:
            sel = [
                r
                for r in rows
                if r["target"] == target and r["variant"] == variant and r["method"] == "judged"
            ]
            worst = min(sel, key=lambda r: r["coverage"])
            lines.append(
                f"- `{target}`, `{variant}`: `judged` covers {min(r['coverage'] for r in sel):.1f}"
                f"–{max(r['coverage'] for r in sel):.1f}% (median "
                f"{np.median([r['coverage'] for r in sel]):.1f}; worst ± {worst['mc_se']:.1f}), "
                f"width {min(r['width_vs_cr2'] for r in sel):.3f}–"
                f"{max(r['width_vs_cr2'] for r in sel):.3f} × `cr2`'s."
            )
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="40 draws per cell, prints only")
    args = parser.parse_args(argv)
    draws = 40 if args.quick else DRAWS
    rows = []
    start = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ClusterStatsWarning)
        for scenario in scenarios():
            found = run_cell(scenario, draws)
            rows += found
            print(f"{scenario.name}: {found[0]['seconds']:.0f} s", file=sys.stderr, flush=True)
    page = render(rows, time.perf_counter() - start)
    if args.quick:
        print(page)
    else:
        PAGE_PATH.write_text(page)
        print(f"wrote {PAGE_PATH.relative_to(REPO)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
