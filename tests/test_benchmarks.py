"""The benchmark and study scripts run (``--quick``); their figures are read by people, not
asserted (timings are noisy, and coverage claims come from the full runs they document)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

BENCHMARKS = Path(__file__).resolve().parents[1] / "benchmarks"


@pytest.mark.parametrize(
    ("script", "expected"),
    [
        ("bootstrap.py", "ratio"),
        ("analytic.py", "ratio"),
        ("coverage.py", "worst cell"),
        ("candidates.py", "korn_graubard_guarded"),
        ("coverage_paired.py", "cr2"),
        ("compare.py", "ratio"),
        ("coverage_missing.py", "ipw (cluster)"),
        ("coverage_strata.py", "stratified auto"),
        ("dask_scale.py", "ratio"),
    ],
)
def test_benchmark_script_runs_quick(script, expected):
    proc = subprocess.run(
        [sys.executable, str(BENCHMARKS / script), "--quick"],
        capture_output=True,
        text=True,
        check=False,
        timeout=600,
    )
    assert proc.returncode == 0, proc.stderr
    assert expected in proc.stdout
