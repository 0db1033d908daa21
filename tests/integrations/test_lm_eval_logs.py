"""read_lm_eval, read_lm_eval_results, lm_eval_table and ``clusterstats lm-eval`` on real
lm-evaluation-harness 0.4.13 output committed as fixtures (``tests/fixtures/lm_eval/``,
written by ``tools/make_lm_eval_fixtures.py`` on the harness's dummy model): repeats, two
filters, corpus-level metrics, two models, and one task run twice into one folder.

Expected numbers: the results the harness itself saved beside the samples (its value and
standard error of each mean metric), which the samples must reproduce."""

from __future__ import annotations

import io
import subprocess
import sys
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import clusterstats as cs
from clusterstats.readers.formats import log_format

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "lm_eval"
FIRST_RUN = "2026-12-01T20-28-37.679740"  # dummy-a, every task
RERUN = "2026-12-01T20-31-40.581971"  # dummy-a, cs_mc again (seed 2)
CORPUS_LEVEL = {"bleu", "f1", "mcc", "word_perplexity", "byte_perplexity", "bits_per_byte"}


def read(**options):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", cs.MixedMetricsWarning)
        return cs.read_lm_eval(FIXTURES, **options)


def test_the_fixtures_are_what_the_script_says():
    files = sorted(p.relative_to(FIXTURES).as_posix() for p in FIXTURES.rglob("samples_*"))
    assert len(files) == 9
    assert sum(f.startswith("dummy-a/samples_cs_mc_") for f in files) == 2
    results = cs.read_lm_eval_results(FIXTURES)
    assert set(results["model"]) == {"dummy-a", "dummy-b"}
    assert set(results.loc[results["task"] == "cs_gen", "filter"]) == {"first", "maj@3"}


def test_every_filter_of_every_run_reproduces_the_harness_results():
    samples = read(filter="all", runs="all")
    results = cs.read_lm_eval_results(FIXTURES)
    checked = 0
    for record in results.to_dict("records"):
        rows = samples[
            (samples["model"] == record["model"])
            & (samples["run"] == record["run"])
            & (samples["task"] == record["task"])
            & (samples["filter"] == record["filter"])
        ]
        assert len(rows) == record["n_samples"] == 12
        if record["metric"] in CORPUS_LEVEL:
            pairs = rows[record["metric"]]
            assert pairs.map(lambda v: isinstance(v, list) and len(v) == 2).all()
            continue
        values = rows[record["metric"]].astype(float)
        # the harness's mean and its standard error of the mean (sample sd, ddof 1)
        assert values.mean() == pytest.approx(record["value"], rel=1e-12, abs=1e-15)
        se = values.std(ddof=1) / np.sqrt(len(values))
        assert se == pytest.approx(record["stderr"], rel=1e-10)
        checked += 1
    assert checked == 12


def test_two_filters_must_be_chosen_and_each_is_one_row_per_document():
    with pytest.raises(cs.InvalidOptionError, match=r"'cs_gen' of model 'dummy-a' is scored"):
        read(runs="latest")
    first = read(runs="latest", filter="first")
    gen = first[first["task"] == "cs_gen"]
    assert len(gen) == 2 * 12
    assert set(gen["filter"]) == {"first"}
    everything = read(runs="latest", filter="all")
    assert len(everything) == len(first) + 2 * 12


def test_a_task_run_twice_into_one_folder():
    with pytest.warns(cs.SupersededRunWarning, match=rf"set aside {FIRST_RUN}"):
        latest = cs.read_lm_eval(FIXTURES / "dummy-a", metric="acc")
    mc = latest[latest["task"] == "cs_mc"]
    assert set(mc["run"]) == {RERUN}
    assert len(mc) == 12
    both = cs.read_lm_eval(FIXTURES / "dummy-a", metric="acc", runs="all")
    mc_both = both[both["task"] == "cs_mc"]
    assert mc_both.groupby("run").size().to_dict() == {FIRST_RUN: 12, RERUN: 12}
    # the two runs as reruns of each document (the seeds differ, so they disagree)
    with pytest.warns(cs.FewClustersWarning, match="only 12 clusters"):
        flaky = cs.flakiness(mc_both, "acc", case="doc_id", rerun="run")
    assert flaky.n_cases == 12
    disagree = mc_both.pivot(index="doc_id", columns="run", values="acc")
    assert flaky.flaky_rate == pytest.approx((disagree[FIRST_RUN] != disagree[RERUN]).mean())


def test_repeats_are_counted_and_can_be_read_one_row_per_response():
    frame = read(runs="latest", filter="first")
    assert set(frame.loc[frame["task"] == "cs_gen", "repeats"]) == {3}
    assert set(frame.loc[frame["task"] != "cs_gen", "repeats"]) == {1}
    responses = cs.read_lm_eval(FIXTURES / "dummy-b", rows="repeats")
    gen = responses[responses["task"] == "cs_gen"]
    assert len(gen) == 12 * 3
    assert gen.groupby("doc_id")["repeat"].apply(list).map(lambda r: r == [0, 1, 2]).all()
    assert set(gen["response"]) == {"lol"}  # what the dummy model always answers
    # a score of one's own on every response, then a rerun statistic
    gen = gen.assign(correct=(gen["response"].str.strip() == gen["target"]).astype(float))
    documents = read(runs="latest", filter="first")
    documents = documents[(documents["model"] == "dummy-b") & (documents["task"] == "cs_gen")]
    assert gen.groupby("doc_id")["correct"].mean().tolist() == documents["exact_match"].tolist()
    # a multiple-choice document's response is one (loglikelihood, greedy) pair per choice
    mc = responses[responses["task"] == "cs_mc"]
    assert len(mc) == 12
    assert mc["response"].map(len).eq(4).all()


def test_metrics_that_some_tasks_lack():
    with pytest.warns(cs.MixedMetricsWarning, match=r"'exact_match' on 'cs_mc'"):
        cs.read_lm_eval(FIXTURES / "dummy-b", filter="first")
    acc = cs.read_lm_eval(FIXTURES / "dummy-b", metric="acc")
    assert set(acc["task"]) == {"cs_mc", "cs_yesno"}
    assert "exact_match" not in acc.columns
    assert "acc_norm" not in acc.columns
    assert acc["acc"].notna().all()
    for metric in sorted(CORPUS_LEVEL):
        with pytest.raises(cs.InvalidOutcomeError, match=rf"metric '{metric}' of task .* is "):
            cs.read_lm_eval(FIXTURES / "dummy-b", metric=metric, filter="first")


def test_lm_eval_table_warns_each_fact_once_and_names_its_notes_column():
    """Five rows with 4 passages each: one few-clusters warning for the table, not one per
    row; the reasons a row has no interval are in ``notes``, like every other result's."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        table = cs.lm_eval_table(FIXTURES / "dummy-b", by="passage")
    few = [w for w in caught if issubclass(w.category, cs.FewClustersWarning)]
    assert len(few) == 1
    assert sum(table.to_frame()["method"].notna()) == 5
    assert list(table.to_frame().columns)[-1] == "notes"


def test_lm_eval_table_puts_the_clustered_interval_beside_the_harness():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", cs.FewClustersWarning)  # 4 passages
        with pytest.warns(cs.SupersededRunWarning):
            table = cs.lm_eval_table(FIXTURES, by="passage")
    frame = table.to_frame()
    # the run set aside is not in the table: dummy-a's cs_mc appears once, from the rerun
    mc = frame[(frame["model"] == "dummy-a") & (frame["task"] == "cs_mc")]
    assert set(mc["run"]) == {RERUN}
    results = cs.read_lm_eval_results(FIXTURES)
    assert len(frame) == len(results) - 2
    means = frame[~frame["metric"].isin(CORPUS_LEVEL)]
    assert len(means) == 10  # the 12 of the harness's files less the run set aside
    np.testing.assert_allclose(means["estimate"], means["value"], rtol=1e-12)
    np.testing.assert_allclose(
        means["naive_high"] - means["value"], 1.959963984540054 * means["stderr"], rtol=1e-12
    )
    samples = read(runs="latest", filter="all")
    for row in means.to_dict("records"):
        rows = samples[
            (samples["model"] == row["model"])
            & (samples["task"] == row["task"])
            & (samples["filter"] == row["filter"])
        ]
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", cs.FewClustersWarning)
            alone = cs.cluster_ci(rows, row["metric"], by="doc_passage")
        assert (row["low"], row["high"], row["se"]) == (alone.low, alone.high, alone.se)
        assert row["se_ratio"] == pytest.approx(alone.se / row["stderr"], rel=1e-12)
        assert row["n_clusters"] == 4
    corpus = frame[frame["metric"].isin(CORPUS_LEVEL)]
    assert corpus["low"].isna().all()
    assert corpus["naive_low"].isna().all()  # bleu's stderr is 0 here: no zero-width interval
    assert corpus["notes"].str.contains("corpus-level").all()
    text = repr(table)
    assert "clustered 95% CI" in text
    assert "corpus-level" in text
    heading, blank, columns = table.to_markdown().splitlines()[:3]
    assert (heading, blank) == ("**LmEvalTable(by doc_passage)**", "")
    assert columns.startswith("| model | task | filter | metric |")
    assert "<table" in table._repr_html_()
    with pytest.raises(cs.ColumnNotFoundError, match="'chapter'"):
        cs.lm_eval_table(FIXTURES / "dummy-b", by="chapter")


def test_format_auto_recognises_harness_and_inspect_files(tmp_path):
    sample = next((FIXTURES / "dummy-b").glob("samples_cs_mc_*.jsonl"))
    assert log_format(sample) == "lm-eval"
    assert log_format(FIXTURES) == "lm-eval"
    inspect_logs = Path(__file__).resolve().parents[1] / "fixtures" / "inspect" / "complete"
    assert log_format(inspect_logs) == "inspect"
    assert log_format(next(inspect_logs.glob("*.eval"))) == "inspect"
    table = tmp_path / "runs.jsonl"
    table.write_text('{"doc": 1, "passed": 1}\n')
    assert log_format(table) is None
    assert log_format(tmp_path) is None


def _cli(*argv: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "clusterstats", *argv],
        capture_output=True,
        text=True,
        check=False,
        cwd=FIXTURES.parent,
    )


def test_cli_lm_eval_prints_the_table():
    proc = _cli("lm-eval", str(FIXTURES), "--by", "passage", "--runs", "latest", "--output", "csv")
    assert proc.returncode == 0, proc.stderr
    printed = pd.read_csv(io.StringIO(proc.stdout))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", cs.FewClustersWarning)
        expected = cs.lm_eval_table(FIXTURES, by="passage", runs="latest").to_frame()
    assert printed.columns.tolist() == list(cs.LmEvalTable.columns)
    np.testing.assert_allclose(printed["high"], expected["high"].astype(float), rtol=1e-12)
    markdown = _cli("lm-eval", str(FIXTURES / "dummy-b"), "--by", "passage", "--output", "markdown")
    assert markdown.returncode == 0
    assert markdown.stdout.splitlines()[2].startswith("| model | task |")
    default = _cli("lm-eval", str(FIXTURES), "--by", "passage")
    assert default.returncode == 0
    assert "was run 2 times into one folder" in default.stderr


def test_cli_reads_samples_by_their_names_with_filter_and_metric():
    sample = next((FIXTURES / "dummy-b").glob("samples_cs_gen_*.jsonl"))
    argv = ["ci", str(sample), "--outcome", "exact_match", "--by", "doc_passage"]
    refused = _cli(*argv)
    assert refused.returncode == 2
    assert "scored under 2 filters" in refused.stderr
    proc = _cli(*argv, "--filter", "maj@3", "--output", "csv")
    assert proc.returncode == 0, proc.stderr
    printed = pd.read_csv(io.StringIO(proc.stdout))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", cs.FewClustersWarning)
        expected = cs.cluster_ci(
            cs.read_lm_eval(sample, filter="maj@3"), "exact_match", by="doc_passage"
        )
    assert printed["high"].iloc[0] == pytest.approx(expected.high, rel=1e-12)
    # a folder: the outcome is the metric, read from the tasks that report it
    folder = _cli("ci", str(FIXTURES / "dummy-b"), "--outcome", "acc", "--by", "doc_passage")
    assert folder.returncode == 0, folder.stderr
    assert "24 rows in 4 clusters" in folder.stdout
    corpus = _cli("ci", str(FIXTURES / "dummy-b"), "--outcome", "f1", "--by", "doc_passage")
    assert corpus.returncode == 2
    assert "corpus-level" in corpus.stderr


def test_cli_lm_eval_options_on_a_table(tmp_path):
    path = tmp_path / "runs.csv"
    path.write_text("doc,passed\n1,1\n2,0\n")
    proc = _cli("ci", str(path), "--outcome", "passed", "--by", "doc", "--filter", "first")
    assert proc.returncode == 2
    assert "--filter is for lm-evaluation-harness samples" in proc.stderr
