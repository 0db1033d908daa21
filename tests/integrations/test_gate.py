"""The release gate (``clusterstats.gate``), its pytest helpers and ``clusterstats gate``.

Sources of expected verdicts: the intervals of ``paired_delta`` and ``cluster_ci`` on the same
data (the gate must read them, not recompute them), the decision rule of the docstring, and
Holm's (1979) step-down procedure replayed by hand on those intervals.
"""

from __future__ import annotations

import itertools
import json
import math
import subprocess
import sys
import warnings

import numpy as np
import pandas as pd
import pytest

import clusterstats as cs
from clusterstats.testing import (
    GateFailed,
    GateInconclusive,
    assert_not_worse,
    assert_pass_rate_at_least,
)


@pytest.fixture(scope="module")
def arms(bbh):
    return bbh[bbh.condition == "cot"], bbh[bbh.condition == "direct"]


def quiet(fn, *args, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", cs.ClusterStatsWarning)
        return fn(*args, **kwargs)


def test_not_worse_reads_paired_delta_interval(arms):
    cot, direct = arms
    delta = cs.paired_delta(direct, cot, "correct", "task", on="item_id")  # direct - cot < 0
    assert delta.high < 0
    for margin, verdict in (
        (0.0, "fail"),  # the whole interval lies below 0
        (-delta.low + 0.01, "pass"),  # -margin below the lower bound
        ((-delta.low - delta.high) / 2, "inconclusive"),  # -margin inside the interval
    ):
        report = cs.gate(direct, "correct", "task", baseline=cot, on="item_id", margin=margin)
        (g,) = report.gates
        assert (g.verdict, report.verdict) == (verdict, verdict)
        assert (g.low, g.high, g.estimate) == (delta.low, delta.high, delta.delta)
        assert g.method == delta.method == "bootstrap_t"
        assert g.boundary == -margin
        assert g.confidence == 0.95
        assert report.adjust == "none"
        assert report.exit_code == {"pass": 0, "fail": 1, "inconclusive": 2}[verdict]
        assert math.isnan(g.clusters_needed) == (verdict != "inconclusive")


def test_at_least_reads_cluster_ci_interval(arms):
    cot, _ = arms
    ci = quiet(cs.cluster_ci, cot, "correct", "task")
    for threshold, verdict in (
        (ci.low, "pass"),  # at or above the threshold passes
        (ci.high + 1e-9, "fail"),
        (ci.estimate, "inconclusive"),
    ):
        report = quiet(cs.gate, cot, "correct", "task", at_least=threshold)
        (g,) = report.gates
        assert g.verdict == verdict
        assert (g.low, g.high) == (ci.low, ci.high)
        assert g.kind == "at_least"
        assert g.method == ci.method == "korn_graubard_hybrid_or_score"  # a rate over uneven tasks


def test_inconclusive_reports_the_clusters_a_plan_needs(arms):
    cot, direct = arms
    ci = quiet(cs.cluster_ci, cot, "correct", "task")
    threshold = ci.estimate - 0.02
    (g,) = quiet(cs.gate, cot, "correct", "task", at_least=threshold).gates
    # the rate gate plans for 80% power to tell the estimate from the boundary 0.02 away
    plan = quiet(cs.pilot_plan, cot, "correct", "task", effect=0.02)
    assert g.clusters_needed == pytest.approx(plan.clusters_for_power, rel=1e-12)
    assert g.clusters_needed > g.n_clusters
    # the paired gate plans the paired comparison for 80% power to detect the distance
    delta = cs.paired_delta(direct, cot, "correct", "task", on="item_id")
    margin = -delta.delta - 0.03
    (p,) = cs.gate(direct, "correct", "task", baseline=cot, on="item_id", margin=margin).gates
    assert p.verdict == "inconclusive"
    paired_plan = quiet(
        cs.pilot_plan, direct, "correct", "task", other=cot, on="item_id", effect=0.03
    )
    assert p.clusters_needed == pytest.approx(paired_plan.clusters_for_power, rel=1e-12)


def _two_groups():
    """Group 'easy' passes far above the threshold; 'close' only just (see the test)."""
    easy = cs.simulate(60, 10, mean=0.9, icc=0.05, seed=11).assign(slice="easy")
    close = cs.simulate(60, 10, mean=0.6, icc=0.05, seed=12).assign(slice="close")
    close["cluster"] += 1000
    return pd.concat([easy, close], ignore_index=True)


def test_holm_steps_down_where_bonferroni_would_stop():
    frame = _two_groups()
    close = frame[frame.slice == "close"]
    at_95 = cs.cluster_ci(close, "y", "cluster")
    at_975 = cs.cluster_ci(close, "y", "cluster", confidence=0.975)
    # a threshold that 'close' clears at 95% but not at the Bonferroni level 97.5%
    threshold = (at_95.low + at_975.low) / 2
    assert at_975.low < threshold <= at_95.low
    report = cs.gate(frame, "y", "cluster", at_least=threshold, over="slice")
    by_group = {g.group: g for g in report.gates}
    assert report.adjust == "holm"
    assert [g.group for g in report.gates] == ["close", "easy"]  # sorted labels
    # step 1 (two undecided): 'easy' passes at 1 - 0.05/2; step 2: 'close' alone at 0.95
    assert by_group["easy"].verdict == "pass"
    assert by_group["easy"].confidence == pytest.approx(0.975)
    assert by_group["close"].verdict == "pass"
    assert by_group["close"].confidence == pytest.approx(0.95)
    assert (by_group["close"].low, by_group["close"].high) == (at_95.low, at_95.high)
    assert report.verdict == "pass"
    assert "Holm" in repr(report)


def test_holm_leaves_the_rest_at_the_last_level():
    frame = _two_groups()
    close = frame[frame.slice == "close"]
    at_95 = cs.cluster_ci(close, "y", "cluster")
    report = cs.gate(frame, "y", "cluster", at_least=at_95.high + 0.01, over="slice")
    by_group = {g.group: g for g in report.gates}
    # 'easy' passes at the first level; 'close', alone at the second (0.95), lies below
    assert by_group["easy"].verdict == "pass"
    assert by_group["close"].verdict == "fail"
    assert by_group["close"].confidence == pytest.approx(0.95)
    assert (by_group["close"].low, by_group["close"].high) == (at_95.low, at_95.high)
    assert report.verdict == "fail"
    assert report.exit_code == 1
    # when nothing passes at the first level, every gate is read there (97.5%)
    none_pass = cs.gate(frame, "y", "cluster", at_least=0.999, over="slice")
    assert [g.verdict for g in none_pass.gates] == ["fail", "fail"]
    assert [g.confidence for g in none_pass.gates] == pytest.approx([0.975, 0.975])
    at_975 = cs.cluster_ci(close, "y", "cluster", confidence=0.975)
    assert none_pass.gates[0].low == at_975.low


def test_gate_is_the_same_on_dask_and_on_a_dataset(arms):
    dd = pytest.importorskip("dask.dataframe")
    cot, direct = arms
    expected = cs.gate(cot, "correct", "task", baseline=direct, on="item_id", margin=0.02)
    got = cs.gate(
        dd.from_pandas(cot, npartitions=3),
        "correct",
        "task",
        baseline=dd.from_pandas(direct, npartitions=2),
        on="item_id",
        margin=0.02,
    )
    pd.testing.assert_frame_equal(expected.to_frame(), got.to_frame())
    tau = cs.datasets.load("tau_bench_airline")
    grid = cs.to_case_rerun(tau, case="task_id", rerun="trial", outcome="reward")
    frame_report = quiet(cs.gate, tau.assign(case=tau.task_id), "reward", "case", at_least=0.3)
    dataset_report = quiet(cs.gate, grid, "reward", at_least=0.3)
    assert frame_report.gates[0].verdict == dataset_report.gates[0].verdict
    assert frame_report.gates[0].low == pytest.approx(dataset_report.gates[0].low, rel=1e-12)


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({}, "a gate asks one question"),
        ({"at_least": 0.5, "baseline": "B"}, "a gate asks one question"),
        ({"baseline": "B"}, "baseline= needs margin="),
        ({"at_least": 0.5, "margin": 0.1}, "margin= goes with baseline="),
        (
            {"baseline": "B", "margin": -0.01},
            "margin must be at least 0, got -0.01; it is how much worse",
        ),
        ({"baseline": "B", "margin": True}, "margin must be a number, got True"),
        ({"at_least": float("nan")}, "at_least must be a number, got nan"),
        ({"at_least": 0.5, "power": 1.0}, "power must be strictly between 0 and 1"),
        ({"at_least": 0.5, "confidence": 95}, "confidence"),
    ],
)
def test_gate_options_are_checked(arms, options, message):
    cot, direct = arms
    options = {k: (direct if v == "B" else v) for k, v in options.items()}
    with pytest.raises(cs.InvalidOptionError, match=message):
        cs.gate(cot, "correct", "task", **options)


def test_over_needs_the_column_on_both_sides_and_not_on_a_dataset(arms):
    cot, direct = arms
    with pytest.raises(cs.ColumnNotFoundError, match="'s' not found in the second frame"):
        cs.gate(
            cot.assign(s=1), "correct", "task", baseline=direct, on="item_id", margin=0, over="s"
        )
    grid = cs.to_case_rerun(
        cs.datasets.load("tau_bench_airline"), case="task_id", rerun="trial", outcome="reward"
    )
    with pytest.raises(cs.InvalidOptionError, match="extra dims"):
        cs.gate(grid, "reward", at_least=0.3, over="model")


def test_report_renders_as_text_markdown_html_and_frame(arms):
    cot, direct = arms
    report = cs.gate(direct, "correct", "task", baseline=cot, on="item_id", margin=0.0)
    markdown = report.to_markdown()
    assert markdown.startswith("### ❌ clusterstats gate: FAIL")
    assert "| correct by task | fail |" in markdown
    assert "FAIL" in repr(report)
    assert "<table" in report._repr_html_()
    frame = report.to_frame()
    assert list(frame.columns) == list(cs.Gate.columns)
    assert frame.loc[0, "verdict"] == "fail"


def test_pytest_helpers(arms):
    cot, direct = arms
    assert assert_not_worse(cot, direct, "correct", margin=0.0, by="task", on="item_id").passed
    with pytest.raises(GateFailed, match="GateReport: FAIL"):
        assert_not_worse(direct, cot, "correct", margin=0.0, by="task", on="item_id")
    ci = quiet(cs.cluster_ci, cot, "correct", "task")
    with pytest.raises(pytest.skip.Exception, match="inconclusive"):
        quiet(assert_pass_rate_at_least, cot, "correct", ci.estimate, by="task")
    with pytest.raises(GateInconclusive, match="INCONCLUSIVE"):
        quiet(
            assert_pass_rate_at_least, cot, "correct", ci.estimate, by="task", inconclusive="fail"
        )
    assert isinstance(GateFailed("x"), AssertionError)
    with pytest.raises(cs.InvalidOptionError, match="inconclusive must be one of"):
        assert_pass_rate_at_least(cot, "correct", 0.5, by="task", inconclusive="pass")


def _cli(*words, cwd):
    return subprocess.run(
        [sys.executable, "-m", "clusterstats", "gate", *words],
        capture_output=True,
        text=True,
        cwd=cwd,
        check=False,
    )


def test_cli_exit_codes_and_outputs(arms, tmp_path):
    cot, direct = arms
    cot.to_csv(tmp_path / "cot.csv", index=False)
    direct.to_csv(tmp_path / "direct.csv", index=False)
    common = ("--outcome", "correct", "--by", "task", "--on", "item_id")
    passed = _cli("cot.csv", "--baseline", "direct.csv", *common, "--margin", "0", cwd=tmp_path)
    assert passed.returncode == 0, passed.stderr
    assert "GateReport: PASS" in passed.stdout
    failed = _cli("direct.csv", "--baseline", "cot.csv", *common, "--margin", "0", cwd=tmp_path)
    assert failed.returncode == 1
    ci = quiet(cs.cluster_ci, direct, "correct", "task")
    summary = tmp_path / "summary.md"
    summary.write_text("earlier steps\n")
    unsure = _cli(
        "direct.csv",
        "--outcome",
        "correct",
        "--by",
        "task",
        "--at-least",
        repr(ci.estimate - 0.01),
        "--output",
        "json",
        "--summary",
        str(summary),
        cwd=tmp_path,
    )
    assert unsure.returncode == 2, unsure.stderr
    payload = json.loads(unsure.stdout)
    assert payload["verdict"] == "inconclusive"
    assert payload["exit_code"] == 2
    assert list(payload["gates"][0]) == list(cs.Gate.columns)
    assert payload["gates"][0]["clusters_needed"] > 27
    text = summary.read_text()
    assert text.startswith("earlier steps\n### ⚠️ clusterstats gate: INCONCLUSIVE")
    # errors exit 3, not 2 (which is inconclusive), with one line on stderr
    for words in (
        ("direct.csv", "--outcome", "correct", "--by", "task"),
        ("direct.csv", "--outcome", "nope", "--by", "task", "--at-least", "0.5"),
        ("missing.csv", "--outcome", "correct", "--by", "task", "--at-least", "0.5"),
        ("direct.csv", "--outcome", "correct", "--by", "task", "--at-least", "half"),
    ):
        error = _cli(*words, cwd=tmp_path)
        assert error.returncode == 3, (words, error.stderr)
        assert error.stderr.startswith("clusterstats: error: ")
        assert error.stderr.count("\n") == 1
    # other commands keep exit status 2 for an error
    other = subprocess.run(
        [sys.executable, "-m", "clusterstats", "ci", "missing.csv", "--outcome", "y", "--by", "g"],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        check=False,
    )
    assert other.returncode == 2


def test_power_moves_the_clusters_needed(arms):
    cot, _ = arms
    ci = quiet(cs.cluster_ci, cot, "correct", "task")
    low = quiet(cs.gate, cot, "correct", "task", at_least=ci.estimate - 0.02, power=0.5)
    high = quiet(cs.gate, cot, "correct", "task", at_least=ci.estimate - 0.02, power=0.9)
    assert low.gates[0].clusters_needed < high.gates[0].clusters_needed
    on_boundary = quiet(cs.gate, cot, "correct", "task", at_least=ci.estimate)
    assert math.isinf(on_boundary.gates[0].clusters_needed)
    assert "on the boundary" in on_boundary.gates[0].notes[-1]
    assert np.isfinite(low.gates[0].clusters_needed)


def test_the_github_actions_job_of_the_docs_runs_as_written(tmp_path):
    """docs/gate.md's workflow: every ``run:`` step but the install, in order, in an empty
    folder, with the installed ``clusterstats`` on PATH; the gate passes and writes the job
    summary."""
    import os
    import re
    from pathlib import Path

    yaml = pytest.importorskip("yaml")
    page = (Path(__file__).resolve().parents[2] / "docs" / "gate.md").read_text()
    (block,) = [b for b in re.findall(r"```yaml\n(.*?)```", page, re.S) if "jobs:" in b]
    steps = yaml.safe_load(block)["jobs"]["gate"]["steps"]
    scripts = [s["run"] for s in steps if "run" in s and not s["name"].startswith("Install")]
    assert len(scripts) == 2
    summary = tmp_path / "summary.md"
    env = {
        **os.environ,
        "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}",
        "GITHUB_STEP_SUMMARY": str(summary),
    }
    for script in scripts:
        done = subprocess.run(
            ["bash", "-eo", "pipefail", "-c", script],
            cwd=tmp_path,
            env=env,
            capture_output=True,
            text=True,
            check=False,
        )
        assert done.returncode == 0, (script, done.stdout, done.stderr)
    assert "GateReport: PASS" in done.stdout
    assert summary.read_text().startswith("### ✅ clusterstats gate: PASS")


def test_clusters_needed_falls_back_to_scaling_the_standard_error():
    # one item per cluster (each CRUXEval problem is its own cluster, its 10 samples are
    # runs): no ICC for a pilot plan, so the run's own se is scaled to the distance
    crux = cs.datasets.load("cruxeval")
    new = crux[crux.task == "input_prediction"]
    old = new.assign(correct=(np.random.default_rng(0).random(len(new)) < 0.36).astype(int))
    options = {"on": "problem_id", "rerun": "sample_index"}
    delta = cs.paired_delta(new, old, "correct", "problem_id", **options)
    report = cs.gate(new, "correct", "problem_id", baseline=old, margin=0.0, **options)
    (g,) = report.gates
    assert g.verdict == "inconclusive"
    # K' at which se sqrt(K / K') (t_{K'-1, 0.975} + t_{K'-1, 0.8}) equals the distance
    from scipy import optimize, stats

    def shortfall(k):
        q = stats.t.ppf(0.975, k - 1) + stats.t.ppf(0.8, k - 1)
        return delta.se * np.sqrt(delta.n_clusters / k) * q - abs(delta.delta)

    expected = optimize.brentq(shortfall, 2, 1e7, xtol=1e-12, rtol=1e-14)
    assert g.clusters_needed == pytest.approx(expected, rel=1e-9)
    assert "scaled from this run's standard error" in g.notes[-1]


def test_gate_help_says_what_each_verdict_means_and_its_exit_status(capsys):
    # `clusterstats gate --help` is where a CI author looks first
    from clusterstats.cli import main

    with pytest.raises(SystemExit) as stopped:
        main(["gate", "--help"])
    assert stopped.value.code == 0
    text = " ".join(capsys.readouterr().out.split())
    for verdict in ("passes when", "fails when", "inconclusive when"):
        assert verdict in text
    assert (
        "exit status: 0 pass (every gate passed), 1 fail (a gate failed), 2 inconclusive "
        "(none failed, one could not tell), 3 error (bad input or options)" in text
    )


@pytest.mark.parametrize("kind", ["at_least", "not_worse"])
def test_the_gate_reduces_its_data_once(arms, monkeypatch, kind):
    """Every Holm level and every plan of an inconclusive slice is built from one design:
    the adapters are called once per gate call, however many slices and levels there are."""
    import clusterstats.adapters as adapters

    calls = {"mean_design": 0, "paired_design": 0}
    for name in calls:
        original = getattr(adapters, name)

        def counted(*args, _original=original, _name=name, **kwargs):
            calls[_name] += 1
            return _original(*args, **kwargs)

        monkeypatch.setattr(adapters, name, counted)
    cot, direct = arms
    sliced = cot.assign(half=cot["task"].astype(str).str[0] < "m")
    if kind == "at_least":
        # one slice passes at the first Holm level, the other is read again at the second
        # and is inconclusive: two levels and a plan
        report = quiet(cs.gate, sliced, "correct", "task", at_least=0.6, over="half")
        assert [g.confidence for g in report.gates] == [0.975, 0.95]
    else:
        # direct against chain-of-thought with a margin of 0.2: both slices inconclusive,
        # each with a plan from the paired design
        old = direct.assign(half=direct["task"].astype(str).str[0] < "m")
        report = quiet(
            cs.gate, old, "correct", "task", baseline=sliced, on="item_id", margin=0.2,
            over="half",
        )  # fmt: skip
        assert all(g.clusters_needed > 0 for g in report.gates)
    assert len(report.gates) == 2
    assert "inconclusive" in {g.verdict for g in report.gates}
    assert calls == {
        "mean_design": int(kind == "at_least"),
        "paired_design": int(kind == "not_worse"),
    }


@pytest.fixture
def bbh_rows():
    return cs.datasets.load("bbh")


def test_a_sequential_gate_reads_the_confidence_sequence_now(bbh_rows):
    cot = bbh_rows[bbh_rows.condition == "cot"]
    report = cs.gate(cot, "correct", "task", at_least=0.5, sequential=True, order="item_index")
    seq = cs.confidence_sequence(cot, "correct", "task", order="item_index")
    (one,) = report.gates
    assert (one.low, one.high, one.estimate) == (
        seq.current.low,
        seq.current.high,
        seq.current.estimate,
    )
    assert one.verdict == "pass"
    assert report.exit_code == 0
    assert one.method == "sequence_betting_mixture"
    assert "valid at every look" in repr(report)
    # a threshold inside the sequence: continue (inconclusive, exit 2), with a projection
    waiting = cs.gate(cot, "correct", "task", at_least=0.7, sequential=True, order="item_index")
    assert waiting.verdict == "inconclusive"
    assert waiting.exit_code == 2
    assert waiting.gates[0].clusters_needed > 27
    assert any(note.startswith("continue:") for note in waiting.gates[0].notes)


def test_several_sequential_gates_split_the_error_by_bonferroni(bbh_rows):
    report = cs.gate(
        bbh_rows, "correct", "task", at_least=0.5, over="condition", sequential=True, budget=54
    )
    assert report.adjust == "bonferroni"
    assert [g.confidence for g in report.gates] == [0.975, 0.975]
    cot = bbh_rows[bbh_rows.condition == "cot"]
    # without order=, each cluster arrives with its last row in the data
    seq = cs.confidence_sequence(cot, "correct", "task", confidence=0.975, order="item_index")
    by_rows = cs.confidence_sequence(
        cot.assign(position=np.arange(len(cot))),
        "correct",
        "task",
        confidence=0.975,
        order="position",
    )
    assert report.gates[0].low == by_rows.current.low
    assert seq.current.n_clusters == report.gates[0].n_clusters
    assert any("27 of the 54 clusters planned" in n for n in report.gates[0].notes)


def test_a_watching_gate_on_a_growing_file_never_moves_back(bbh_rows, tmp_path):
    """The gate run after every appended task of a results file: each run's interval is the
    sequence's at that look, so the lower bounds only rise and the verdict, once reached,
    is the one a later run confirms."""
    cot = bbh_rows[bbh_rows.condition == "cot"].reset_index(drop=True)
    tasks = list(dict.fromkeys(cot["task"]))
    lows, verdicts = [], []
    for n in range(2, len(tasks) + 1):
        grown = cot[cot["task"].isin(tasks[:n])]
        report = cs.gate(grown, "correct", "task", at_least=0.5, sequential=True)
        lows.append(report.gates[0].low)
        verdicts.append(report.verdict)
    assert all(b >= a for a, b in itertools.pairwise(lows))
    first = verdicts.index("pass")
    assert set(verdicts[first:]) == {"pass"}
    assert set(verdicts[:first]) == {"inconclusive"}


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"at_least": 0.5, "sequential": True, "strata": "task"}, "does not take strata"),
        ({"at_least": 0.5, "sequential": True, "weights": "item_index"}, "not take weights"),
        ({"at_least": 0.5, "sequential": True, "method": "cr2"}, "method must be one of"),
        ({"at_least": 0.5, "order": "item_index"}, "go with sequential=True"),
        ({"at_least": 0.5, "sequential": "yes"}, "sequential must be True or False"),
    ],
)
def test_sequential_gate_options_are_checked(bbh_rows, options, message):
    cot = bbh_rows[bbh_rows.condition == "cot"]
    with pytest.raises(cs.InvalidOptionError, match=message):
        cs.gate(cot, "correct", "task", **options)


def test_cli_sequential_gate(bbh_rows, tmp_path):
    path = tmp_path / "bbh.csv"
    bbh_rows.to_csv(path, index=False)
    words = [sys.executable, "-m", "clusterstats", "gate", str(path), "--outcome", "correct"]
    words += ["--by", "task", "--over", "condition", "--at-least", "0.5", "--sequential"]
    done = subprocess.run([*words, "--output", "json"], capture_output=True, text=True, check=False)
    assert done.returncode == 2, done.stderr
    payload = json.loads(done.stdout)
    assert payload["adjust"] == "bonferroni"
    assert [g["verdict"] for g in payload["gates"]] == ["pass", "inconclusive"]
    library = cs.gate(bbh_rows, "correct", "task", at_least=0.5, over="condition", sequential=True)
    assert [g["low"] for g in payload["gates"]] == [g.low for g in library.gates]
    refused = subprocess.run([*words[:-1], "--order", "item_index"], capture_output=True, text=True)
    assert refused.returncode == 3
    assert "--order go with --sequential" in refused.stderr


def test_a_sequential_gate_is_the_same_on_dask_polars_and_a_dataset():
    dd = pytest.importorskip("dask.dataframe")
    pl = pytest.importorskip("polars")
    tau = cs.datasets.load("tau_bench_airline")
    cube = cs.to_case_rerun(tau, case="task_id", rerun="trial", outcome="reward")
    options = {"at_least": 0.3, "sequential": True, "rng": 2}
    frame = cs.gate(tau, "reward", "task_id", order="task_id", **options).gates[0]
    lazy = cs.gate(
        dd.from_pandas(tau, npartitions=3), "reward", "task_id", order="task_id", **options
    )
    arrow = cs.gate(pl.from_pandas(tau), "reward", "task_id", order="task_id", **options)
    cases = cs.gate(cube, "reward", order="case", **options).gates[0]
    for other in (lazy.gates[0], arrow.gates[0], cases):
        assert (other.low, other.high, other.verdict) == (frame.low, frame.high, frame.verdict)


def test_a_sequential_gate_against_a_baseline_reads_the_paired_sequence(bbh_rows):
    cot, direct = bbh_rows[bbh_rows.condition == "cot"], bbh_rows[bbh_rows.condition == "direct"]
    report = cs.gate(
        cot,
        "correct",
        "task",
        baseline=direct,
        on="item_id",
        margin=0.05,
        sequential=True,
        order="item_index",
    )
    seq = cs.confidence_sequence(
        cot, "correct", "task", other=direct, on="item_id", order="item_index"
    )
    (one,) = report.gates
    assert one.kind == "not_worse"
    assert (one.low, one.high) == (seq.current.low, seq.current.high)
    assert one.boundary == -0.05
    assert one.verdict == ("pass" if seq.current.low >= -0.05 else "inconclusive")
