"""clusterstats as an Inspect extension, on real logs of a tiny task run offline on Inspect's
mock model: the ``clusterstats/cluster_ci`` metric, ``annotate`` and the entry point.

Expected numbers: ``cluster_ci`` on ``read_inspect`` of the same log file (the metric must
be the library's interval on the scores Inspect gives it)."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import warnings

import numpy as np
import pytest

import clusterstats as cs

inspect_ai = pytest.importorskip("inspect_ai")

from inspect_ai.log import read_eval_log  # noqa: E402

from clusterstats.inspect import METRIC_KEYS, annotate, cluster_ci, scores_frame  # noqa: E402

N_DOCS = 24


@pytest.fixture(scope="module")
def logs(tmp_path_factory, run_on_mock_model):
    """Two runs of 48 samples in 24 documents, 3 epochs; samples 5 and 17 error."""
    from inspect_ai.scorer import accuracy, stderr

    root = tmp_path_factory.mktemp("inspect_extension")

    def run(where, metrics=None):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            log = run_on_mock_model(
                root / where, 2 * N_DOCS, lambda i: f"doc{i // 2}", (5, 17), 3, metrics
            )
        return log.location

    return run("a", [accuracy(), stderr(), cluster_ci(cluster="doc")]), run("b")


def _group(log):
    return {
        name: m
        for score in log.results.scores
        for name, m in score.metrics.items()
        if m.group == "cluster_ci"
    }


def test_the_metric_in_the_log_is_cluster_ci_on_read_inspect(logs):
    with_metric, _ = logs
    log = read_eval_log(with_metric)  # the file `inspect view` shows
    group = _group(log)
    frame = cs.read_inspect(with_metric, cluster="doc")
    assert frame["score"].isna().sum() == 2 * 3  # the errored samples, every epoch
    expected = cs.cluster_ci(frame, "score", "doc")  # missing="drop": the scored samples
    assert group["estimate"].value == pytest.approx(expected.estimate, rel=1e-12)
    assert group["lower"].value == pytest.approx(expected.low, rel=1e-12)
    assert group["upper"].value == pytest.approx(expected.high, rel=1e-12)
    assert group["se"].value == pytest.approx(expected.se, rel=1e-12)
    assert group["n_clusters"].value == expected.n_clusters == N_DOCS
    assert group["icc"].value == pytest.approx(expected.icc, rel=1e-12)
    # a value the interval does not have (df where the model binds) is None, which Inspect
    # leaves out of the group
    present = set(METRIC_KEYS) - ({"df"} if np.isnan(expected.df) else set())
    assert set(group) == present
    params = group["estimate"].params
    assert params["cluster"] == "doc"
    assert params["method_used"] == expected.method == "korn_graubard_hybrid_or_score"
    assert params["estimand"] == "pooled"
    # Inspect's own metrics are untouched beside it
    names = {name for score in log.results.scores for name in score.metrics}
    assert {"accuracy", "stderr"} <= names


def test_annotate_adds_the_metric_and_keeps_the_logs_own(logs, tmp_path):
    _, without = logs
    before = read_eval_log(without)
    own = {name: m.value for score in before.results.scores for name, m in score.metrics.items()}
    assert not _group(before)
    target = tmp_path / "annotated.eval"
    annotated = annotate(without, cluster="doc", output=target)
    written = read_eval_log(str(target))
    after = {
        name: m.value
        for score in written.results.scores
        for name, m in score.metrics.items()
        if m.group != "cluster_ci"
    }
    assert after == own
    expected = cs.cluster_ci(cs.read_inspect(without, cluster="doc"), "score", "doc")
    assert _group(written)["upper"].value == pytest.approx(expected.high, rel=1e-12)
    assert _group(annotated)["upper"].value == _group(written)["upper"].value
    # the original file was not rewritten (output= elsewhere)
    assert not _group(read_eval_log(without))


def test_cli_annotate_writes_a_new_file_unless_in_place(logs, tmp_path):
    _, without = logs
    copy = tmp_path / "copy.eval"
    shutil.copyfile(without, copy)
    original = copy.read_bytes()

    def annotate_cli(*args):
        return subprocess.run(
            [sys.executable, "-m", "clusterstats", "annotate", *args],
            capture_output=True,
            text=True,
            check=False,
        )

    done = annotate_cli(str(copy), "--by", "doc")
    assert done.returncode == 0, done.stderr
    assert "cluster_ci estimate" in done.stdout
    beside = tmp_path / "copy-clustered.eval"
    assert done.stdout.strip().endswith(f"wrote {beside}")
    assert copy.read_bytes() == original  # the user's log is not rewritten by default
    assert "upper" in _group(read_eval_log(str(beside)))
    in_place = annotate_cli(str(copy), "--by", "doc", "--in-place")
    assert in_place.returncode == 0, in_place.stderr
    assert in_place.stdout.strip().endswith(f"wrote {copy}")
    assert _group(read_eval_log(str(copy)))["upper"].value == pytest.approx(
        _group(read_eval_log(str(beside)))["upper"].value
    )
    assert sorted(p.name for p in tmp_path.iterdir()) == ["copy-clustered.eval", "copy.eval"]
    missing = annotate_cli(str(tmp_path / "nope.eval"))
    assert missing.returncode == 2
    assert "no such log file" in missing.stderr


def test_annotating_twice_replaces_the_metric(logs, tmp_path):
    _, without = logs
    once = annotate(without, cluster="doc", output=tmp_path / "once.eval")
    twice = annotate(str(tmp_path / "once.eval"), cluster="doc", output=tmp_path / "twice.eval")
    names = [name for score in twice.results.scores for name in score.metrics]
    assert not [name for name in names if name.endswith("2")], names
    assert _group(twice)["upper"].value == _group(once)["upper"].value
    definitions = [m.name for s in twice.eval.scorers for m in s.metrics]
    assert definitions.count("clusterstats/cluster_ci") == 1


def test_inspect_finds_the_metric_through_the_entry_point(logs, tmp_path):
    from importlib.metadata import entry_points

    (point,) = [e for e in entry_points(group="inspect_ai") if e.name == "clusterstats"]
    assert point.value == "clusterstats._inspect_registry"
    _, without = logs
    target = tmp_path / "annotated.eval"
    annotate(without, cluster="doc", output=target)
    # A fresh process that never imports clusterstats recomputes the log's metrics: Inspect
    # must resolve "clusterstats/cluster_ci" by itself, through the entry point.
    script = (
        "import json, sys\n"
        "from inspect_ai.log import read_eval_log, recompute_metrics\n"
        f"log = read_eval_log({str(target)!r})\n"
        "recompute_metrics(log)\n"
        "print(json.dumps({n: m.value for s in log.results.scores for n, m in s.metrics.items()"
        " if m.group == 'cluster_ci'}))\n"
        "print('clusterstats' in sys.modules)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, check=False
    )
    assert done.returncode == 0, done.stderr
    values, imported = done.stdout.strip().splitlines()[-2:]
    assert json.loads(values)["upper"] == pytest.approx(
        _group(read_eval_log(str(target)))["upper"].value
    )
    assert imported == "True"  # loaded by Inspect, not by the script


def test_scores_frame_errors():
    from inspect_ai.scorer import SampleScore, Score

    scores = [SampleScore(score=Score(value={"a": 1, "b": 0}), sample_id=1, sample_metadata={})]
    with pytest.raises(cs.InvalidOptionError, match=r"the score of sample 1 is a dict .*pass key="):
        scores_frame(scores)
    assert scores_frame(scores, key="a")["value"].tolist() == [1.0]
    with pytest.raises(
        cs.InvalidOptionError,
        match=r"the score of sample 1: key='c' is not one of its keys \['a', 'b'\]",
    ):
        scores_frame(scores, key="c")
    plain = [SampleScore(score=Score(value="C"), sample_id="s", sample_metadata={"x": 1})]
    assert scores_frame(plain)["value"].tolist() == [1.0]
    with pytest.raises(cs.InvalidInputError, match=r"has no metadata field 'doc'"):
        scores_frame(plain, cluster="doc")


def test_the_metric_on_the_first_finished_samples_gives_nan_instead_of_raising(caplog):
    # Inspect computes metrics while the eval runs; the first samples may all lie in one
    # document, which has no interval yet: that must not end the user's eval
    from inspect_ai.scorer import SampleScore, Score

    first = [
        SampleScore(score=Score(value=v), sample_id=i, sample_metadata={"doc": "d0"})
        for i, v in enumerate((1, 0, 1))
    ]
    with caplog.at_level("WARNING", logger="clusterstats"):
        values = cluster_ci(cluster="doc")(first)
    assert set(values) == set(METRIC_KEYS)
    assert all(np.isnan(v) for v in values.values())
    assert "clusterstats/cluster_ci: no value (TooFewClustersError: found 1 cluster" in caplog.text
    assert all(np.isnan(v) for v in cluster_ci(cluster="doc")([]).values())
    assert "no sample was scored" in caplog.text
    more = [
        *first,
        *(
            SampleScore(score=Score(value=v), sample_id=3 + i, sample_metadata={"doc": "d1"})
            for i, v in enumerate((0, 0, 1))
        ),
    ]
    with pytest.warns(cs.FewClustersWarning):
        values = cluster_ci(cluster="doc")(more)
    assert values["n_clusters"] == 2
    assert values["estimate"] == pytest.approx(0.5)


@pytest.mark.parametrize(
    ("docs_of", "metric", "cause"),
    [
        (lambda i: "d0", lambda: cluster_ci(cluster="doc"), "found 1 cluster"),
        (
            lambda i: f"d{i // 2}",
            lambda: cluster_ci(cluster="doc", strata="topic"),
            "has no metadata field 'topic'",
        ),
        (
            lambda i: f"d{i // 2}",
            lambda: cluster_ci(cluster="doc", method="korn_graubard", key="x"),
            "key='x' is for dict-valued scores",
        ),
    ],
    ids=["one document", "a metadata field no sample has", "a key for plain scores"],
)
def test_a_metric_that_cannot_be_computed_leaves_the_eval_intact(
    tmp_path, run_on_mock_model, caplog, docs_of, metric, cause
):
    from inspect_ai.scorer import accuracy

    with warnings.catch_warnings(), caplog.at_level("WARNING", logger="clusterstats"):
        warnings.simplefilter("ignore")
        log = run_on_mock_model(tmp_path, 12, docs_of, (), 1, [accuracy(), metric()])
    written = read_eval_log(log.location)
    assert written.status == "success"
    scores = {
        name: m.value for score in written.results.scores for name, m in score.metrics.items()
    }
    assert scores["accuracy"] == pytest.approx(8 / 12)  # passes unless i % 3 == 0
    group = _group(written)
    assert set(group) == set(METRIC_KEYS)
    assert all(np.isnan(m.value) for m in group.values())
    assert cause in caplog.text


def test_paired_metric_against_a_baseline_log(tmp_path, run_on_mock_model):
    from clusterstats.inspect import paired_delta

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        old = run_on_mock_model(
            tmp_path / "old",
            2 * N_DOCS,
            lambda i: f"doc{i // 2}",
            (5,),
            2,
            passes=lambda i: i % 4 != 0,
        )
        new = run_on_mock_model(
            tmp_path / "new",
            2 * N_DOCS,
            lambda i: f"doc{i // 2}",
            (17,),
            3,
            metrics=[paired_delta(old.location, cluster="doc")],
        )
    group = _group_named(read_eval_log(new.location), "paired_delta")
    expected = cs.paired_delta(
        cs.read_inspect(new.location, cluster="doc"),
        cs.read_inspect(old.location, cluster="doc"),
        "score",
        "doc",
        on="sample_id",
        rerun="epoch",
        how="inner",
    )
    assert group["delta"].value == pytest.approx(expected.delta, rel=1e-12)
    assert group["lower"].value == pytest.approx(expected.low, rel=1e-12)
    assert group["upper"].value == pytest.approx(expected.high, rel=1e-12)
    assert group["n_items"].value == expected.n_items == 2 * N_DOCS - 2  # both errored ones out
    assert group["delta"].params["method_used"] == expected.method


def _group_named(log, name):
    return {
        key: m
        for score in log.results.scores
        for key, m in score.metrics.items()
        if m.group == name
    }


def test_paired_metric_against_a_committed_log_with_several_scorers(tmp_path, run_on_mock_model):
    """The committed fixture log has three scorers (``includes``, ``flaky`` and the
    dict-valued ``details``): ``score=`` and ``key=`` pick the baseline's value."""
    from pathlib import Path

    from clusterstats.inspect import paired_delta

    fixture = next((Path(__file__).parents[1] / "fixtures" / "inspect" / "complete").glob("*.eval"))
    with pytest.raises(cs.InvalidOptionError, match="score="):
        paired_delta(str(fixture), cluster="doc")
    metrics = [
        paired_delta(str(fixture), cluster="doc", score="includes"),
    ]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        new = run_on_mock_model(tmp_path, 12, lambda i: f"doc{i // 3}", (), 2, metrics)
        expected = cs.paired_delta(
            cs.read_inspect(new.location, cluster="doc"),
            cs.read_inspect(fixture, score="includes", cluster="doc"),
            "score",
            "doc",
            on="sample_id",
            rerun="epoch",
            how="inner",
        )
    group = _group_named(read_eval_log(new.location), "paired_delta")
    assert group["delta"].value == pytest.approx(expected.delta, rel=1e-12)
    assert group["upper"].value == pytest.approx(expected.high, rel=1e-12)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        by_key = paired_delta(str(fixture), cluster="doc", score="details", key="correct")
    baseline = cs.read_inspect(fixture, score="details", key="correct", cluster="doc")
    assert baseline["score"].dropna().eq(1.0).all()  # the fixture's "correct" entry
    assert callable(by_key)


def test_annotate_never_leaves_a_half_written_log(logs, tmp_path, monkeypatch):
    """A write that fails halfway (a full disk, a killed process) leaves the log as it was
    and no partial file beside it: annotate writes a temporary file and renames it."""
    import inspect_ai.log

    _, without = logs
    copy = tmp_path / "copy.eval"
    shutil.copyfile(without, copy)
    original = copy.read_bytes()

    def fails_halfway(log, location, *args, **kwargs):
        with open(location, "wb") as handle:
            handle.write(b"PK\x03\x04 half a zip")
        raise OSError("No space left on device")

    monkeypatch.setattr(inspect_ai.log, "write_eval_log", fails_halfway)
    with pytest.raises(OSError, match="No space left"):
        annotate(copy, cluster="doc", in_place=True)
    assert copy.read_bytes() == original
    assert [p.name for p in tmp_path.iterdir()] == ["copy.eval"]


def test_sequential_stopping_stops_a_real_eval_once_the_sequence_decides(
    tmp_path, run_on_mock_model
):
    """A real inspect_ai.eval on the mock model: 40 documents of 4 questions, 90% answered
    right, the gate "at least 50%". The run stops scheduling once the sequence over the
    completed documents lies above 0.5, and the log records why and what it saved."""
    from clusterstats.core.sequential import SEQUENCE_METHODS, betting_sequence
    from clusterstats.inspect import SequentialStopping

    stopping = SequentialStopping(at_least=0.5, cluster="doc")
    log = run_on_mock_model(
        tmp_path,
        160,
        lambda i: f"doc{i // 4:02d}",
        set(),
        1,
        passes=lambda i: i % 10 != 0,
        early_stopping=stopping,
        max_samples=1,
    )
    summary = log.results.early_stopping
    assert summary.manager == "clusterstats/sequential_stopping"
    meta = summary.metadata
    assert meta["verdict"] == "pass"
    assert meta["low"] >= 0.5
    assert 0 < meta["clusters_completed"] < 40
    assert meta["samples_saved"] == 160 - meta["samples_scored"] > 0
    assert len(summary.early_stops) == meta["samples_saved"]
    assert all("decided pass" in stop.reason for stop in summary.early_stops)
    # the bounds are the sequence's on the documents the run completed, in their order
    scored = [s for s in log.samples if s.scores]
    values = {}
    for sample in scored:
        value = 1.0 if sample.scores["includes"].value == "C" else 0.0
        values.setdefault(sample.metadata["doc"], []).append(value)
    docs = sorted(values)[: meta["clusters_completed"]]
    seq = betting_sequence(
        [sum(values[d]) for d in docs],
        [float(len(values[d])) for d in docs],
        estimand="pooled",
        max_cluster_size=4.0,
        **SEQUENCE_METHODS["betting_mixture"]._asdict(),
    )
    assert (seq.low[-1], seq.high[-1]) == (meta["low"], meta["high"])


def test_sequential_stopping_checks_its_inputs():
    import asyncio

    from clusterstats.inspect import SequentialStopping

    class Sample:
        def __init__(self, id, metadata):
            self.id, self.metadata = id, metadata

    # inside the eval nothing raises: the problem is recorded and the watching stops
    stopping = SequentialStopping(0.5, cluster="doc")
    asyncio.run(stopping.start_task(None, [Sample(1, {})], 1))
    assert "no metadata field 'doc'" in stopping.problem
    with pytest.raises(cs.InvalidOptionError, match="at_least"):
        SequentialStopping("half")


def test_a_leaderboard_of_two_models_from_their_inspect_logs(tmp_path, run_on_mock_model):
    """Two models' logs of the same task: ``read_inspect`` gives one frame, ``compare``
    ranks them with their rank sets and tiers, and ``clusterstats compare`` on the log
    folder prints the same leaderboard."""
    logs = tmp_path / "logs"
    for model, passes in (("mockllm/model", lambda i: i % 5 != 0), ("mockllm/other", None)):
        run_on_mock_model(logs, 80, lambda i: f"d{i // 4}", (), 1, passes=passes, model=model)
    frame = cs.read_inspect(logs, cluster="doc")
    assert sorted(frame["model"].unique()) == ["mockllm/model", "mockllm/other"]
    res = cs.compare(frame, "score", by="doc", model="model", on="sample_id", rng=0)
    board = res.leaderboard().set_index("model")
    # the fixture's targets: 'model' passes unless i % 5 == 0 (80 - 16), 'other' by the
    # fixture's default unless i % 3 == 0 (80 - 27, i = 0, 3, ..., 78)
    assert board.loc["mockllm/model", "score"] == pytest.approx(64 / 80)
    assert board.loc["mockllm/other", "score"] == pytest.approx(53 / 80)
    assert set(board["tier"]) <= {1.0, 2.0}
    words = [
        "compare", str(logs), "--format", "inspect", "--outcome", "score", "--by", "doc",
        "--model", "model", "--on", "sample_id", "--seed", "0",
    ]  # fmt: skip
    done = subprocess.run(
        [sys.executable, "-m", "clusterstats", *words], capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr
    assert "could be first (95%, all models at once)" in done.stdout
    assert done.stdout.strip() == repr(res).strip()
