"""The benchmark scripts (``benchmarks/``: speed and memory) and the study scripts
(``studies/``: coverage simulations that write docs pages) run (``--quick``); their figures are
read by people, not asserted (timings are noisy, and coverage claims come from the full runs
they document)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize(
    ("script", "expected"),
    [
        ("benchmarks/bootstrap.py", "ratio"),
        ("benchmarks/analytic.py", "ratio"),
        ("studies/coverage.py", "worst cell"),
        ("studies/candidates.py", "korn_graubard_guarded"),
        ("studies/coverage_paired.py", "cr2"),
        ("benchmarks/compare.py", "ratio"),
        ("studies/coverage_missing.py", "ipw (cluster)"),
        ("studies/coverage_strata.py", "stratified auto"),
        ("studies/coverage_rates.py", "korn_graubard_inverted"),
        ("studies/coverage_real_sizes.py", "contaminated"),
        ("studies/coverage_crossed.py", "two-way default"),
        ("studies/coverage_weighted.py", "weighted default"),
        ("benchmarks/dask_scale.py", "ratio"),
        ("studies/coverage_real_data.py", "worst K ≥ 20"),
        ("studies/power_real_data.py", "realised power"),
        ("studies/coverage_sparse_paired.py", "coverage after"),
        ("benchmarks/startup.py", "import clusterstats adds"),
        ("benchmarks/gate.py", "five paired_delta"),
        ("benchmarks/crossed.py", "worst crossed / one-way ratio"),
        ("studies/coverage_sequential.py", "worst time-uniform miss rate"),
        ("benchmarks/sequential.py", "ratio trajectory / one interval"),
        ("studies/sequential_decisions.py", "price of watching"),
        ("benchmarks/plan_scale.py", "worst plan / cluster_ci ratio"),
        ("benchmarks/leaderboard_scale.py", "s per 1,000 pairs"),
        ("studies/coverage_judged.py", "What the judge buys on HANNA"),
        ("studies/plans_judged.py", "Realised ÷ promised half-width"),
        ("studies/judged_small_sample.py", "uneven-sizes df"),
    ],
)
def test_benchmark_script_runs_quick(script, expected):
    proc = subprocess.run(
        [sys.executable, str(REPO / script), "--quick"],
        capture_output=True,
        text=True,
        check=False,
        timeout=600,
    )
    assert proc.returncode == 0, proc.stderr
    assert expected in proc.stdout
