"""The benchmark scripts run (``--quick``); their timings are read by people, not asserted."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

BENCHMARKS = Path(__file__).resolve().parents[1] / "benchmarks"


@pytest.mark.parametrize("script", ["bootstrap.py", "analytic.py"])
def test_benchmark_script_runs_quick(script):
    proc = subprocess.run(
        [sys.executable, str(BENCHMARKS / script), "--quick"],
        capture_output=True,
        text=True,
        check=False,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr
    assert "ratio" in proc.stdout
