"""Readers: inspect_ai logs from a tiny task run offline on inspect's mock model provider,
and lm-evaluation-harness ``--log_samples`` files written in its documented format."""

from __future__ import annotations

import json
import subprocess
import sys
import warnings

import numpy as np
import pandas as pd
import pytest

import clusterstats as cs


@pytest.fixture(scope="module")
def inspect_logs(tmp_path_factory, run_on_mock_model):
    """A 12-sample task in 6 documents, 3 epochs, on ``mockllm/model``: its fixed reply
    passes the samples whose target it contains; two samples raise in a solver."""
    log_dir = tmp_path_factory.mktemp("inspect_logs")
    log = run_on_mock_model(log_dir, 12, lambda i: f"doc{i // 2}", (4, 9), 3)
    assert log.status == "success"
    return log_dir


def test_read_inspect(inspect_logs):
    frame = cs.read_inspect(inspect_logs, cluster="doc")
    assert len(frame) == 12 * 3
    assert {"task", "model", "sample_id", "epoch", "score", "missing_reason", "doc"} <= set(
        frame.columns
    )
    assert sorted(frame.epoch.unique()) == [1, 2, 3]
    errored = frame[frame.sample_id.isin(["q4", "q9"])]
    assert errored.score.isna().all()
    assert errored.missing_reason.str.startswith("error: ").all()
    assert errored.missing_reason.str.contains("tool failure").all()
    scored = frame[~frame.sample_id.isin(["q4", "q9"])]
    expected = scored.sample_id.map(lambda s: float(int(s[1:]) % 3 != 0))
    np.testing.assert_array_equal(scored.score, expected)  # the reply contains "Default"
    assert scored.missing_reason.isna().all()
    # the rows flow into everything else: reruns, missing responses, clustered intervals
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", cs.ClusterStatsWarning)
        ci = frame.eval.cluster_ci("score", by="doc")
        report = frame.eval.missing_report("score", "doc", reason="missing_reason")
    assert ci.n_missing == 6
    assert report.by_reason()["rows"].tolist() == [6]
    ds = cs.to_case_rerun(
        frame.dropna(subset=["score"]), case="sample_id", rerun="epoch", outcome="score"
    )
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", cs.ClusterStatsWarning)
        flaky = ds.eval.flakiness("score")
    # no flaky case: an upper bound is reported, with a warning saying so
    assert any(issubclass(w.category, cs.DegenerateDataWarning) for w in caught)
    assert flaky.n_flaky == 0  # a fixed reply never flips


def test_read_inspect_errors(inspect_logs, tmp_path):
    with pytest.raises(cs.ColumnNotFoundError, match="'topic' not found"):
        cs.read_inspect(inspect_logs, cluster="topic")
    with pytest.raises(cs.InvalidOptionError, match="no score 'exact'"):
        cs.read_inspect(inspect_logs, score="exact")
    with pytest.raises(cs.EmptyDataError, match="no inspect logs"):
        cs.read_inspect(tmp_path)


def test_cli_reads_inspect_logs(inspect_logs):
    out = subprocess.run(
        [
            sys.executable,
            "-m",
            "clusterstats",
            "ci",
            str(inspect_logs),
            "--format",
            "inspect",
            "--outcome",
            "score",
            "--by",
            "doc",
            "--output",
            "json",
        ],
        capture_output=True,
        text=True,
        check=True,
    )
    result = json.loads(out.stdout)
    record = result[0] if isinstance(result, list) else result
    assert record["n_missing"] == 6
    assert record["n_clusters"] == 6


def write_lm_eval_fixture(root):
    """Two tasks of a v0.4 ``--log_samples`` run, in the harness's layout and format."""
    model_dir = root / "EleutherAI__pythia-70m"
    model_dir.mkdir(parents=True)
    rng = np.random.default_rng(0)
    for task, metrics in (("arc_easy", ("acc", "acc_norm")), ("gsm8k", ("exact_match",))):
        lines = []
        for doc_id in range(40):
            record = {
                "doc_id": doc_id,
                "doc": {"question": f"q{doc_id}", "subject": f"s{doc_id % 8}", "choices": ["a"]},
                "target": "a",
                "arguments": [["prompt", " a"]],
                "resps": [[["-1.2", "False"]]],
                "filtered_resps": [["-1.2", "False"]],
                "filter": "none",
                "metrics": list(metrics),
                "doc_hash": "0" * 64,
                "prompt_hash": "1" * 64,
                "target_hash": "2" * 64,
            }
            for metric in metrics:
                record[metric] = float(rng.random() < 0.5)
            lines.append(json.dumps(record))
        path = model_dir / f"samples_{task}_2024-07-01T12-30-45.123456.jsonl"
        path.write_text("\n".join(lines) + "\n")
    return model_dir


def test_read_lm_eval(tmp_path):
    write_lm_eval_fixture(tmp_path)
    with pytest.warns(cs.MixedMetricsWarning, match="'acc' on 'gsm8k'"):
        frame = cs.read_lm_eval(tmp_path)
    assert len(frame) == 80
    assert set(frame.task) == {"arc_easy", "gsm8k"}
    assert (frame.model == "EleutherAI__pythia-70m").all()
    assert {"doc_id", "filter", "target", "acc", "acc_norm", "exact_match", "doc_subject"} <= set(
        frame.columns
    )
    assert "doc_choices" not in frame.columns  # not a scalar
    arc = frame[frame.task == "arc_easy"]
    assert arc["exact_match"].isna().all()
    with pytest.warns(cs.FewClustersWarning):
        ci = arc.eval.cluster_ci("acc", by="doc_subject")
    assert ci.n_clusters == 8
    assert ci.n_rows == 40
    single = cs.read_lm_eval(next(tmp_path.rglob("samples_gsm8k_*.jsonl")))
    assert len(single) == 40
    bad = tmp_path / "bad"
    bad.mkdir()
    (bad / "samples_x_2024-07-01T00-00-00.jsonl").write_text('{"no": 1}\n')
    with pytest.raises(cs.FileReadError, match="has no doc_id"):
        cs.read_lm_eval(bad)
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(cs.EmptyDataError, match="no samples_"):
        cs.read_lm_eval(empty)


def test_readers_return_plain_frames(tmp_path):
    write_lm_eval_fixture(tmp_path)
    frame = cs.read_lm_eval(tmp_path, metric="acc")
    assert isinstance(frame, pd.DataFrame)
