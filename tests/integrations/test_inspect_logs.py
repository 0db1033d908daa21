"""read_inspect on real inspect_ai 0.3.285 logs committed as fixtures
(``tests/fixtures/inspect/``, written by ``tools/make_inspect_fixtures.py`` on the mock
model): limits, errors, dict-valued scores, a fail-fast run and its retry.

Expected numbers: the metrics inspect itself logged in the same files."""

from __future__ import annotations

import warnings
from pathlib import Path

import pandas as pd
import pytest

import clusterstats as cs

pytest.importorskip("inspect_ai")
from inspect_ai.log import read_eval_log

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "inspect"
(COMPLETE,) = sorted((FIXTURES / "complete").glob("*.eval"))
FAILED, RETRY = sorted((FIXTURES / "retried").glob("*.eval"))


def _inspect_metric(path, scorer, metric="accuracy"):
    log = read_eval_log(str(path))
    (score,) = [s for s in log.results.scores if s.name == scorer]
    return score.metrics[metric].value


def test_the_fixtures_are_what_the_script_says():
    complete = read_eval_log(str(COMPLETE))
    assert complete.status == "success"
    errored = {s.id for s in complete.samples if s.error is not None}
    limited = {(s.id, s.limit.type) for s in complete.samples if s.limit is not None}
    assert errored == {"q5"}
    assert limited == {("q8", "message")}
    assert read_eval_log(str(FAILED)).status == "error"
    assert read_eval_log(str(RETRY)).status == "success"


def test_a_sample_that_hit_a_limit_keeps_the_score_inspect_counted():
    frame = cs.read_inspect(COMPLETE, score="includes", cluster="doc")
    assert len(frame) == 12 * 3
    # inspect's accuracy over its reduced scores: every scored sample has 3 epochs, so the
    # mean of the scored rows is the same number
    assert frame["score"].mean() == pytest.approx(_inspect_metric(COMPLETE, "includes"), rel=1e-12)
    hit = frame[frame["sample_id"] == "q8"]
    assert hit["limit"].tolist() == ["message"] * 3
    assert hit["score"].notna().all()
    assert hit["missing_reason"].isna().all()
    errored = frame[frame["sample_id"] == "q5"]
    assert errored["score"].isna().all()
    assert errored["missing_reason"].str.startswith("error: RuntimeError").all()
    # the other convention, on request: a limit makes the sample missing
    strict = cs.read_inspect(COMPLETE, score="includes", limits="missing")
    assert strict.loc[strict["sample_id"] == "q8", "missing_reason"].eq("limit: message").all()
    assert strict["score"].notna().sum() == frame["score"].notna().sum() - 3
    with pytest.raises(
        cs.InvalidOptionError, match=r"limits must be one of \('score', 'missing'\)"
    ):
        cs.read_inspect(COMPLETE, score="includes", limits="drop")


def test_dict_valued_scores_need_a_key():
    with pytest.raises(
        cs.InvalidOptionError,
        match=r"'details' of sample 'q0' is a dict \(keys \['correct', 'length'\]\); pass key=",
    ):
        cs.read_inspect(COMPLETE, score="details")
    correct = cs.read_inspect(COMPLETE, score="details", key="correct")
    assert correct["score"].mean() == pytest.approx(_inspect_metric(COMPLETE, "correct"), rel=1e-12)
    length = cs.read_inspect(COMPLETE, score="details", key="length")
    assert length["score"].mean() == pytest.approx(_inspect_metric(COMPLETE, "length"), rel=1e-12)
    with pytest.raises(
        cs.InvalidOptionError,
        match=r"score 'details' of sample 'q0': key='nope' is not one of its keys",
    ):
        cs.read_inspect(COMPLETE, score="details", key="nope")
    with pytest.raises(cs.InvalidOptionError, match=r"key='correct' is for dict-valued scores"):
        cs.read_inspect(COMPLETE, score="includes", key="correct")


def test_flaky_epochs_are_reruns_of_a_case():
    frame = cs.read_inspect(COMPLETE, score="flaky", cluster="doc")
    assert frame["score"].mean() == pytest.approx(_inspect_metric(COMPLETE, "flaky"), rel=1e-12)
    with warnings.catch_warnings():
        # every case disagrees with itself in the same way, so the ICC has no interval
        warnings.simplefilter("ignore", cs.ClusterStatsWarning)
        flaky = frame.eval.flakiness("score", case="sample_id", rerun="epoch")
    assert flaky.n_flaky == 11  # every scored sample's epochs disagree ((i + epoch) % 3)


def test_a_failed_run_alone_says_what_never_ran():
    with pytest.warns(cs.IncompleteLogWarning, match=r"5 of the 36 \(sample, epoch\) runs"):
        frame = cs.read_inspect(FAILED, score="includes")
    assert len(frame) == 5


def test_a_failed_run_and_its_retry_give_each_run_once():
    with warnings.catch_warnings():
        warnings.simplefilter("error", cs.IncompleteLogWarning)  # the retry completes it
        frame = cs.read_inspect(FIXTURES / "retried", score="includes")
    assert len(frame) == 12 * 3
    assert not frame.duplicated(["sample_id", "epoch"]).any()
    assert set(frame["log"]) == {RETRY.name}
    assert frame["score"].mean() == pytest.approx(_inspect_metric(RETRY, "includes"), rel=1e-12)


def test_annotate_skips_dict_valued_scorers_and_picks_one_on_request(tmp_path):
    from clusterstats.inspect import annotate

    copy = tmp_path / "complete.eval"
    copy.write_bytes(COMPLETE.read_bytes())
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", cs.ClusterStatsWarning)
        log = annotate(copy, cluster="doc")
        grouped = {
            s.name
            for s in log.results.scores
            if any(m.group == "cluster_ci" for m in s.metrics.values())
        }
        assert grouped == {"includes", "flaky"}  # the dict-valued "details" is left as it is
        only = annotate(COMPLETE, cluster="doc", scorer="flaky", output=tmp_path / "flaky.eval")
    grouped = {
        s.name
        for s in only.results.scores
        if any(m.group == "cluster_ci" for m in s.metrics.values())
    }
    assert grouped == {"flaky"}
    with pytest.raises(cs.InvalidInputError, match=r"no scorer 'nope' in the log"):
        annotate(COMPLETE, cluster="doc", scorer="nope", output=tmp_path / "x.eval")
    with pytest.raises(cs.InvalidInputError, match=r"metrics are dicts per score key"):
        annotate(COMPLETE, cluster="doc", scorer="details", output=tmp_path / "y.eval")


def test_a_judges_scores_in_a_log_with_human_labels_from_a_file(tmp_path):
    """The Inspect path of judged_ci: a scorer's values read from the log, human labels from
    a file of their own matched by (sample id, epoch), the log's errored sample dropped
    (a row the judge did not score cannot be in the run)."""
    import warnings

    import clusterstats as cs

    log = cs.read_inspect(COMPLETE, score="includes").dropna(subset=["score"])
    labelled = log[log["doc"].isin(["doc0", "doc1"])]
    labels = labelled[["sample_id", "epoch"]].assign(human=1 - labelled["score"].to_numpy() * 0.5)
    labels.to_csv(tmp_path / "labels.csv", index=False)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", cs.FewClustersWarning)
        res = cs.judged_ci(
            log, "human", "doc", judge="score", labels=pd.read_csv(tmp_path / "labels.csv"),
            on=["sample_id", "epoch"], weight=0.5,
        )  # fmt: skip
        merged = log.merge(labels, on=["sample_id", "epoch"], how="left")
        ref = cs.judged_ci(merged, "human", "doc", judge="score", weight=0.5)
    assert res.estimate == pytest.approx(ref.estimate, rel=1e-12)
    assert res.n_labelled == len(labels)
    assert res.n_labelled_clusters == 2
    with pytest.raises(cs.InvalidDataError, match="judge column 'score' is missing on"):
        cs.judged_ci(
            cs.read_inspect(COMPLETE, score="includes"), "human", "doc", judge="score",
            labels=labels, on=["sample_id", "epoch"],
        )  # fmt: skip
