"""The command line: ``clusterstats demo`` and ``clusterstats ci``."""

from __future__ import annotations

import json
import subprocess
import sys

import pandas as pd
import pytest

import clusterstats as cs
from clusterstats.cli import main


def test_demo_prints_naive_and_clustered_intervals_per_model(capsys):
    assert main(["demo"]) == 0
    out = capsys.readouterr().out
    for fragment in (
        "naive 95% CI",
        "clustered 95% CI",
        "widening",
        "ICC",
        "deff",
        "n_eff",
        "91 source clusters",
    ):
        assert fragment in out
    demo = cs.load_demo_data()
    for model in demo.model.unique():
        assert model in out
    expected = cs.cluster_ci(demo, "correct", "src", over="model")
    first = expected.results[0]
    assert f"[{first.low:.3f}, {first.high:.3f}]" in out


def test_ci_on_a_csv_file(tmp_path, capsys, bbh):
    path = tmp_path / "results.csv"
    bbh.to_csv(path, index=False)
    assert (
        main(
            [
                "ci",
                str(path),
                "--outcome",
                "correct",
                "--by",
                "task",
                "--over",
                "condition",
                "--output",
                "csv",
            ]
        )
        == 0
    )
    printed = pd.read_csv(pd.io.common.StringIO(capsys.readouterr().out))
    expected = cs.cluster_ci(bbh, "correct", "task", over="condition").to_frame()
    assert list(printed.columns) == list(expected.columns)
    assert printed["low"].tolist() == pytest.approx(expected["low"].tolist(), rel=1e-12)


def test_ci_text_json_and_parquet(tmp_path, capsys, tau):
    pytest.importorskip("pyarrow")
    path = tmp_path / "runs.parquet"
    tau.to_parquet(path)
    assert main(["ci", str(path), "--outcome", "reward", "--by", "task_id", "--method", "cr2"]) == 0
    assert "ClusterCI(reward by task_id; estimand=pooled, method=cr2)" in capsys.readouterr().out
    assert (
        main(
            [
                "ci",
                str(path),
                "--outcome",
                "reward",
                "--by",
                "task_id",
                "--output",
                "json",
                "--method",
                "bootstrap",
                "--seed",
                "3",
                "--n-resamples",
                "500",
            ]
        )
        == 0
    )
    record = json.loads(capsys.readouterr().out)[0]
    assert record["method"] == "bootstrap_bca"
    assert record["n_resamples"] == 500


def test_ci_errors_are_reported_without_a_traceback(tmp_path, capsys):
    path = tmp_path / "x.csv"
    pd.DataFrame({"a": [1, 0], "g": [1, 2]}).to_csv(path, index=False)
    assert main(["ci", str(path), "--outcome", "passed", "--by", "g"]) == 2
    err = capsys.readouterr().err
    assert "column 'passed' not found" in err
    assert "Traceback" not in err
    assert main(["ci", str(tmp_path / "missing.csv"), "--outcome", "a", "--by", "g"]) == 2
    assert main(["ci", str(tmp_path / "x.txt"), "--outcome", "a", "--by", "g"]) == 2


def test_console_script_entry_point_runs():
    proc = subprocess.run(
        [sys.executable, "-m", "clusterstats", "demo"], capture_output=True, text=True, check=False
    )
    assert proc.returncode == 0, proc.stderr
    assert "clustered 95% CI" in proc.stdout


def test_cli_page_examples_print_what_the_page_shows(capsys, monkeypatch):
    """Every ```bash block of docs/cli.md runs, and its output matches the ```text after it."""
    import re
    import shlex
    from pathlib import Path

    repo = Path(__file__).resolve().parents[1]
    monkeypatch.chdir(repo)
    page = (repo / "docs" / "cli.md").read_text()
    pairs = re.findall(r"```bash\n(.*?)\n```\s*```text\n(.*?)\n```", page, flags=re.S)
    assert len(pairs) == 3
    for command, expected in pairs:
        argv = shlex.split(command)
        assert argv[0] == "clusterstats"
        assert main(argv[1:]) == 0
        printed = capsys.readouterr().out
        assert [line.rstrip() for line in printed.strip().splitlines()] == [
            line.rstrip() for line in expected.strip().splitlines()
        ], command


def test_table_header_names_the_confidence_level(tmp_path, capsys, tau):
    path = tmp_path / "runs.csv"
    tau.to_csv(path, index=False)
    assert (
        main(
            [
                "ci",
                str(path),
                "--outcome",
                "reward",
                "--by",
                "task_id",
                "--confidence",
                "0.9",
                "--output",
                "table",
            ]
        )
        == 0
    )
    out = capsys.readouterr().out
    assert "naive 90% CI" in out
    assert "clustered 90% CI" in out
    assert "95%" not in out
