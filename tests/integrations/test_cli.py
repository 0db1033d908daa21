"""The command line: ``clusterstats demo`` and ``clusterstats ci``."""

from __future__ import annotations

import io
import json
import subprocess
import sys
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import clusterstats as cs
from clusterstats.cli import main

REPO = Path(__file__).resolve().parents[2]


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
    assert f"[{first.low:.4f}, {first.high:.4f}]" in out  # four decimals, as everywhere


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
    argv = ["ci", str(path), "--outcome", "reward", "--by", "task_id", "--output", "json"]
    bootstrap = ["--method", "bootstrap", "--seed", "3", "--n-resamples", "500"]
    assert main(argv + bootstrap) == 0
    record = json.loads(capsys.readouterr().out)
    assert isinstance(record, dict)  # one result: one object, not a list
    assert record["method"] == "bootstrap_bca"
    assert record["n_resamples"] == 500
    assert record["df"] is None  # NaN becomes null: strict JSON


def _run(argv, capsys):
    status = main(argv)
    captured = capsys.readouterr()
    return status, captured.out, captured.err


def test_json_is_typed_and_follows_the_documented_schema(tmp_path, capsys, tau):
    path = tmp_path / "runs.csv"
    tau.to_csv(path, index=False)
    status, out, _ = _run(
        [
            "ci",
            str(path),
            "--outcome",
            "reward",
            "--by",
            "task_id",
            "--by",
            "trial",
            "--output",
            "json",
        ],
        capsys,
    )
    assert status == 0
    record = json.loads(out)
    # every (task, trial) is one row: the combination makes single-row clusters
    with pytest.warns(cs.SingletonClustersWarning, match="200 clusters, 100% of them"):
        expected = cs.cluster_ci(tau, "reward", ["task_id", "trial"])
    assert list(record) == list(cs.ClusterCI.columns)
    assert record["by"] == ["task_id", "trial"]
    assert record["notes"] == list(expected.notes)
    assert isinstance(record["n_rows"], int)
    assert record["low"] == expected.low
    # the schema table of docs/cli.md lists every key
    page = (REPO / "docs" / "cli.md").read_text()
    for key in record:
        assert f"`{key}`" in page, key


def test_json_over_groups_is_a_list_in_the_librarys_sorted_order(tmp_path, capsys):
    rng = np.random.default_rng(0)
    frame = pd.DataFrame(
        {
            "level": np.repeat(["H", "E", "M"], 200),  # first appearance H, E, M
            "doc": np.repeat(np.arange(150), 4),
            "passed": (rng.random(600) < 0.6).astype(int),
        }
    )
    path = tmp_path / "levels.csv"
    frame.to_csv(path, index=False)
    argv = ["ci", str(path), "--outcome", "passed", "--by", "doc", "--over", "level"]
    status, out, err = _run([*argv, "--output", "json"], capsys)
    assert status == 0, err
    records = json.loads(out)
    library = cs.cluster_ci(frame, "passed", "doc", over="level")
    assert list(library.groups) == ["E", "H", "M"]
    assert [r["group"] for r in records] == [{"level": g} for g in ("E", "H", "M")]
    assert [r["estimate"] for r in records] == [r.estimate for r in library.results]
    assert all(isinstance(r["notes"], list) for r in records)
    status, table, _ = _run([*argv, "--output", "table"], capsys)
    order = [line.split()[0] for line in table.splitlines()[2:5]]
    assert order == ["E", "H", "M"]


def test_warnings_are_one_clean_line_each_and_never_repeat_a_shown_note(tmp_path, capsys):
    frame = pd.DataFrame(
        {
            "team": np.repeat(["a", "b", "c"], 24),
            "doc": np.tile(np.repeat(np.arange(12), 2), 3),  # 12 clusters per team
            "passed": np.tile([1, 0, 1, 1, 0, 1], 12),
        }
    )
    path = tmp_path / "few.csv"
    frame.to_csv(path, index=False)
    argv = ["ci", str(path), "--outcome", "passed", "--by", "doc", "--over", "team"]
    for output in ("text", "table", "csv", "json"):
        status, out, err = _run([*argv, "--output", output], capsys)
        assert status == 0
        assert "only 12 clusters" in out  # the note is shown ...
        assert err == "", (output, err)  # ... so it is not repeated as a warning
    # Through the installed entry point (where Python used to print its own warning trace,
    # "clusterstats:8: FewClustersWarning ... sys.exit(main())"), stderr stays empty.
    single = pd.DataFrame({"doc": np.repeat(np.arange(12), 2), "passed": [1, 0] * 12})
    path = tmp_path / "one.csv"
    single.to_csv(path, index=False)
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "clusterstats",
            "ci",
            str(path),
            "--outcome",
            "passed",
            "--by",
            "doc",
            "--output",
            "csv",
        ],
        capture_output=True,
        text=True,
        check=False,
    )
    assert proc.returncode == 0
    assert "only 12 clusters" in proc.stdout
    assert proc.stderr == ""


def test_a_warning_the_output_does_not_show_is_one_line_once(monkeypatch, capsys):
    import warnings

    from clusterstats import cli

    def noisy(args):
        for _ in range(3):
            warnings.warn(
                "12 clusters (fewer than 20)\n more text", cs.FewClustersWarning, stacklevel=1
            )
        print("done")
        return ()

    monkeypatch.setattr(cli, "_demo", noisy)
    status, out, err = _run(["demo"], capsys)
    assert status == 0
    assert out == "done\n"
    assert err == "warning: 12 clusters (fewer than 20) more text\n"


def test_version(capsys):
    with pytest.raises(SystemExit) as stop:
        main(["--version"])
    assert stop.value.code == 0
    assert capsys.readouterr().out.strip() == f"clusterstats {cs.__version__}"
    from importlib.metadata import version

    assert cs.__version__ == version("clusterstats")


def test_plurals_in_printed_results(capsys):
    frame = pd.DataFrame({"doc": [0, 0, 1, 1, 2, 2], "y": [0.5, 1.0, 2.0, 2.5, 1.0, 1.5]})
    with pytest.warns(cs.FewClustersWarning):
        text = repr(cs.cluster_ci(frame.iloc[:2].assign(doc=[0, 1]), "y", "doc", method="cr1"))
    assert "2 rows in 2 clusters (1 row each)" in text
    assert "1 rows" not in text
    with pytest.warns(cs.FewClustersWarning):
        text = repr(cs.cluster_ci(frame.assign(y=[1.0, None, 2.0, 2.5, 1.0, 1.5]), "y", "doc"))
    assert "1 row had a missing outcome" in text
    assert "1 row with a missing outcome (in 1 cluster) was dropped" in text


@pytest.mark.parametrize(
    ("name", "content", "problem"),
    [
        ("missing.csv", None, "no such file"),
        ("empty.csv", b"", "the file is empty"),
        ("header.csv", b"passed,doc\n", "the file has no data rows"),
        (
            "bad.jsonl",
            b'{"passed": 1, "doc": 1}\n{"passed": 0 "doc": 2}\n',
            "line 2 is not valid JSON",
        ),
        (
            "list.jsonl",
            b'{"passed": 1, "doc": 1}\n[1, 2]\n',
            "line 2 is a JSON list, not an object",
        ),
        ("latin.csv", "passed,doc\n1,Zürich\n".encode("latin-1"), "is not utf-8 text"),
        ("broken.parquet", b"PAR1 this is not parquet", "not a readable Parquet file"),
        ("ragged.csv", b"passed,doc\n1,2\n1,2,3,4\n", "malformed CSV"),
        ("table.json", b"{not json", "not a JSON table"),
        ("notes.txt", b"passed,doc\n", "unknown file type '.txt'"),
        ("folder", "dir", "it is a folder"),
    ],
)
def test_unreadable_files_are_one_line_naming_the_file(tmp_path, capsys, name, content, problem):
    path = tmp_path / name
    if content == "dir":
        path.mkdir()
    elif content is not None:
        path.write_bytes(content)
    status, out, err = _run(["ci", str(path), "--outcome", "passed", "--by", "doc"], capsys)
    assert status == 2
    assert out == ""
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert lines[0].startswith(f"clusterstats: error: cannot read {str(path)!r}: ")
    assert problem in lines[0]
    assert "Traceback" not in err


def test_encoding_option_reads_latin_1(tmp_path, capsys):
    path = tmp_path / "latin.csv"
    rows = "passed,doc\n" + "".join(f"{i % 2},Zürich{i % 25}\n" for i in range(100))
    path.write_bytes(rows.encode("latin-1"))
    status, out, _ = _run(
        ["ci", str(path), "--outcome", "passed", "--by", "doc", "--encoding", "latin-1"], capsys
    )
    assert status == 0
    assert "100 rows in 25 clusters (4 rows each)" in out


def test_datasets_command_lists_describes_and_writes(tmp_path, capsys):
    status, out, _ = _run(["datasets"], capsys)
    assert status == 0
    for name in cs.datasets.list():
        assert name in out
    status, out, _ = _run(["datasets", "cruxeval"], capsys)
    assert "MIT" in out
    assert "problem_id" in out
    target = tmp_path / "crux.jsonl"
    status, out, _ = _run(["datasets", "cruxeval", "--to", str(target)], capsys)
    assert status == 0
    assert out.strip() == f"wrote 16,000 rows of cruxeval to {target}"
    back = pd.read_json(target, lines=True)
    pd.testing.assert_frame_equal(back, cs.datasets.load("cruxeval"), check_dtype=False)
    status, _, err = _run(["datasets", "cruxeval", "--to", str(tmp_path / "x.xlsx")], capsys)
    assert status == 2
    assert "unknown file type" in err


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


def test_paired_and_compare_commands_give_the_librarys_numbers(tmp_path, capsys, bbh, mmlu):
    cot, direct = bbh[bbh.condition == "cot"], bbh[bbh.condition == "direct"]
    cot.to_csv(tmp_path / "cot.csv", index=False)
    direct.to_csv(tmp_path / "direct.csv", index=False)
    common = ["--outcome", "correct", "--by", "task", "--on", "item_id", "--output", "json"]
    args = ["paired", str(tmp_path / "cot.csv"), str(tmp_path / "direct.csv"), *common]
    assert main(args) == 0
    record = json.loads(capsys.readouterr().out)
    expected = cs.paired_delta(cot, direct, "correct", "task", on="item_id")
    assert record["label_a"] == "cot"
    assert record["label_b"] == "direct"
    assert record["method"] == expected.method
    assert (record["low"], record["high"]) == (expected.low, expected.high)
    # the design options reach the library: strata equal to the clusters is its error
    assert main([*args, "--strata", "task"]) == 2
    assert "27 strata have a single cluster" in capsys.readouterr().err
    assert main([*args, "--strata", "task", "--lonely", "adjust"]) == 0
    assert json.loads(capsys.readouterr().out)["method"] == "stratified_cr1"
    path = tmp_path / "mmlu.csv"
    mmlu.to_csv(path, index=False)
    words = ["compare", str(path), "--outcome", "correct", "--by", "src", "--model", "model"]
    words += ["--on", "question_id", "--output", "json"]
    assert main(words) == 0
    payload = json.loads(capsys.readouterr().out)
    library = cs.compare(mmlu, "correct", "src", model="model", on="question_id")
    assert [row["model"] for row in payload["leaderboard"]] == list(library.leaderboard()["model"])
    assert [row["high"] for row in payload["pairs"]] == list(library.to_frame()["high"])
    assert payload["notes"] == list(library.notes)
    assert main([*words, "--baseline", "not-a-model"]) == 2
    assert "is not a value of --model 'model'" in capsys.readouterr().err
    assert main([*words, "--baseline", "gemini-1.5-flash-002", "--adjust", "none"]) == 0
    pairs = json.loads(capsys.readouterr().out)["pairs"]
    assert {row["model_b"] for row in pairs} == {"gemini-1.5-flash-002"}
    assert main([*words, "--orientation", "higher_minus_lower"]) == 0
    turned = json.loads(capsys.readouterr().out)["pairs"]
    library = cs.compare(
        mmlu, "correct", "src", model="model", on="question_id", orientation="higher_minus_lower"
    )
    assert [(r["model_a"], r["delta"]) for r in turned] == list(
        zip(library.pair_a, library.delta, strict=True)
    )
    assert all(row["delta"] >= 0 for row in turned)


#: Six RepoQA systems on two languages: 200 needles in 20 repositories, small enough to run
#: in a second, and few enough clusters that the rank methods' critical values differ.
REPOQA_SYSTEMS = [
    "gpt-4o-2024-05-13",
    "claude-3-sonnet-20240229",
    "deepseek-ai/DeepSeek-V2-Chat",
    "gpt-4-turbo-2024-04-09",
    "mistralai/Mixtral-8x7B-Instruct-v0.1",
    "gpt-3.5-turbo-0125",
]
#: compare's options that keep the rank bootstrap small and its draws fixed
FAST = ["--n-resamples", "199", "--seed", "1"]


@pytest.fixture
def repoqa(tmp_path):
    """(the frame, the path of its CSV)."""
    frame = cs.datasets.load("repoqa_snf")
    frame = frame[frame["system"].isin(REPOQA_SYSTEMS) & frame["language"].isin(["java", "python"])]
    path = tmp_path / "repoqa.csv"
    frame.to_csv(path, index=False)
    return frame.reset_index(drop=True), path


def _compare_words(path):
    words = ["compare", str(path), "--outcome", "correct", "--by", "repo", "--model", "system"]
    return [*words, "--on", "instance_id", *FAST]


def _library_compare(frame, **options):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # few clusters per slice: the CLI warns, not the test
        return cs.compare(
            frame,
            "correct",
            "repo",
            model="system",
            on="instance_id",
            n_resamples=199,
            rng=1,
            **options,
        )


def _keyed(rows, key):
    """Rows (JSON records, or a frame's) by their key columns, NaN as None and numpy
    scalars as Python's, so that a JSON payload and the library's frame compare by key."""
    if isinstance(rows, pd.DataFrame):
        rows = rows.to_dict(orient="records")

    def plain(value):
        value = value.item() if isinstance(value, np.generic) else value
        value = tuple(value) if isinstance(value, list) else value  # a slice of several columns
        return None if isinstance(value, float) and value != value else value

    return {
        tuple(plain(row[k]) for k in key): {c: plain(v) for c, v in row.items()} for row in rows
    }


def test_compare_prints_rank_sets_tiers_and_the_top_set(capsys, repoqa):
    _, path = repoqa
    status, out, err = _run(_compare_words(path), capsys)
    assert status == 0, err
    header = next(line for line in out.splitlines() if line.lstrip().startswith("model"))
    for column in ("ranks (all)", "rank (alone)", "tier"):
        assert column in header
    assert "could be first (95%, all models at once)" in out
    assert "adjacent places separated" in out
    status, out, err = _run([*_compare_words(path), "--top", "2"], capsys)
    assert status == 0, err
    assert "could be among the best 2 (95%, all models at once)" in out
    assert "could be first" not in out


def test_compare_prints_markdown_for_a_readme(capsys, repoqa):
    frame, path = repoqa
    status, out, err = _run([*_compare_words(path), "--output", "markdown"], capsys)
    assert status == 0, err
    assert out.strip() == _library_compare(frame).to_markdown().strip()
    assert "| model | score | 95% CI | naive CI | rank | ranks (all) | rank (alone) | tier |" in out


def test_compare_rank_method_and_top_reach_the_library(capsys, repoqa):
    frame, path = repoqa
    boards = {}
    for rank_method, top in (("normal", 1), ("auto", 1), ("bootstrap", 3)):
        words = [*_compare_words(path), "--rank-method", rank_method, "--top", str(top)]
        status, out, err = _run([*words, "--output", "json"], capsys)
        assert status == 0, err
        payload = json.loads(out)
        assert list(payload) == ["leaderboard", "pairs", "notes"]
        boards[rank_method] = _keyed(payload["leaderboard"], ["model"])
        library = _library_compare(frame, rank_method=rank_method, top=top)
        assert set(payload["leaderboard"][0]) == set(cs.Comparison.LEADERBOARD_COLUMNS)
        for column in ("in_top_set", "tier", "marginal_rank_low", "marginal_rank_high"):
            assert column in payload["leaderboard"][0]
        assert _keyed(payload["leaderboard"], ["model"]) == _keyed(library.leaderboard(), ["model"])
        assert _keyed(payload["pairs"], ["model_a", "model_b"]) == _keyed(
            library.pairs(), ["model_a", "model_b"]
        )
        assert payload["notes"] == list(library.notes)
        assert sum(row["in_top_set"] for row in payload["leaderboard"]) == sum(library.in_top_set)
    # on these 20 clusters the normal law's rank sets are not the multivariate t's (auto's),
    # so --rank-method is seen to change the output, not only to be accepted
    assert boards["normal"] != boards["auto"]
    assert {m: r["score"] for m, r in boards["normal"].items()} == {
        m: r["score"] for m, r in boards["auto"].items()
    }


def test_compare_over_slices_is_one_family(capsys, repoqa):
    frame, path = repoqa
    words = [*_compare_words(path), "--over", "language"]
    library = _library_compare(frame, over="language")
    assert isinstance(library, cs.SliceComparison)
    status, out, err = _run(words, capsys)
    assert status == 0, err
    assert out.startswith("SliceComparison(correct by repo over language; 6 models in 2 slices")
    for fragment in ("could be first", "separated neighbours", "leads that survive the family"):
        assert fragment in out
    rows = [line.split()[0] for line in out.splitlines()[3:5]]
    assert rows == ["java", "python"]  # one row per slice, in sorted order
    status, out, err = _run([*words, "--output", "json"], capsys)
    assert status == 0, err
    payload = json.loads(out)
    assert list(payload) == ["leaderboard", "pairs", "leads", "notes"]
    assert all("p_family" in row for row in payload["pairs"])
    assert _keyed(payload["leaderboard"], ["slice", "model"]) == _keyed(
        library.leaderboard(), ["slice", "model"]
    )
    pair_key = ["slice", "model_a", "model_b"]
    assert _keyed(payload["pairs"], pair_key) == _keyed(library.pairs(), pair_key)
    lead_key = ["slice", "leader", "trailer"]
    assert payload["leads"], "the family keeps some leads on these data"
    assert _keyed(payload["leads"], lead_key) == _keyed(library.leads(), lead_key)
    assert payload["notes"] == list(library.notes)
    # csv: the pairs of every slice, with the slice column and p_family
    status, out, err = _run([*words, "--output", "csv"], capsys)
    assert status == 0, err
    printed = pd.read_csv(io.StringIO(out))
    assert list(printed.columns) == list(cs.SliceComparison.PAIR_COLUMNS)
    assert printed["p_family"].tolist() == pytest.approx(library.pairs()["p_family"].tolist())
    # two --over columns: one slice per combination
    status, out, err = _run([*words, "--over", "open_weights", "--output", "json"], capsys)
    assert status == 0, err
    slices = {tuple(row["slice"]) for row in json.loads(out)["leaderboard"]}
    assert slices == {("java", 0), ("java", 1), ("python", 0), ("python", 1)}


@pytest.mark.parametrize(
    ("words", "problem"),
    [
        (["--top", "0"], "top must be a whole number of places, 1 or more; got 0"),
        (["--top", "7"], "--top 7 is more places than the 6 models compared"),
        (["--top", "two"], "argument --top: invalid int value: 'two'"),
        (["--rank-method", "exact"], "argument --rank-method: invalid choice: 'exact'"),
        (["--over", "country"], "column 'country' not found"),
    ],
)
def test_compare_rank_and_slice_options_fail_in_one_line(capsys, repoqa, words, problem):
    _, path = repoqa
    status, out, err = _run([*_compare_words(path), *words], capsys)
    assert status == 2
    assert out == ""
    assert err.startswith("clusterstats: error: ")
    assert problem in err
    assert len(err.strip().splitlines()) == 1, err
    assert "Traceback" not in err


def test_compare_on_lm_eval_samples_prints_tiers_and_the_top_set(capsys):
    """lm-evaluation-harness --log_samples folders, one per model: the reader's model column
    (the folder name) is compare's --model, an item is a task's document."""
    folder = REPO / "tests" / "fixtures" / "lm_eval"
    words = ["compare", str(folder), "--outcome", "acc", "--by", "doc_passage"]
    words += ["--model", "model", "--on", "task", "--on", "doc_id", "--runs", "latest", *FAST]
    status, out, err = _run(words, capsys)
    assert status == 0, err
    assert out.startswith("Comparison(acc by doc_passage; 2 models on 24 items in 4 clusters")
    header = next(line for line in out.splitlines() if line.lstrip().startswith("model"))
    assert header.split()[-1] == "tier"
    assert "could be first (95%, all models at once): 2 of 2: dummy-a, dummy-b" in out


def test_rerun_report_check_missing_and_plan_commands_give_the_librarys_numbers(
    tmp_path, capsys, tau, mmlu
):
    tau_path, mmlu_path = tmp_path / "tau.csv", tmp_path / "mmlu.csv"
    tau.to_csv(tau_path, index=False)
    mmlu.to_csv(mmlu_path, index=False)
    # one model's rows where a statistic is asked of the whole file (all four would pool);
    # gemini-1.5-flash-002 is the one with missing outcomes (20 rows, docs/cli.md's demo)
    one = mmlu[mmlu["model"] == "gemini-1.5-flash-002"]
    one_path = tmp_path / "one-model.csv"
    one.to_csv(one_path, index=False)
    runs = ["--outcome", "reward", "--case", "task_id", "--rerun", "trial"]

    def run(*words):
        assert main([*words, "--output", "json"]) == 0, capsys.readouterr().err
        return json.loads(capsys.readouterr().out)

    hat = run("passk", str(tau_path), *runs, "--k", "2", "--hat")
    library = cs.pass_hat_k(tau, "reward", k=2, case="task_id", rerun="trial")
    assert (hat["statistic"], hat["low"], hat["high"]) == ("pass^k", library.low, library.high)
    flaky = run("flakiness", str(tau_path), *runs)
    assert (
        flaky["flaky_rate"] == cs.flakiness(tau, "reward", case="task_id", rerun="trial").flaky_rate
    )
    report = run("report", str(mmlu_path), "--outcome", "correct", "--by", "src", "--over", "model")
    expected = cs.report(mmlu, "correct", "src", over="model").to_frame()
    assert [row["estimate"] for row in report["rows"]] == list(expected["estimate"])
    assert (
        main(
            [
                "report",
                str(one_path),
                "--outcome",
                "correct",
                "--by",
                "src",
                "--output",
                "markdown",
            ]
        )
        == 0
    )
    assert capsys.readouterr().out.startswith("**Report(correct by src)**\n\n| estimate |")
    check = run(
        "check",
        str(one_path),
        "--outcome",
        "correct",
        "--candidate",
        "src",
        "--candidate",
        "src+category",
    )
    library_check = cs.check_clustering(one, "correct", ["src", ["src", "category"]])
    assert [row["se"] for row in check["rows"]] == list(library_check.to_frame()["se"])
    missing = run("missing", str(one_path), "--outcome", "correct", "--by", "src")
    assert missing["rows"][0] == {
        k: (None if isinstance(v, float) and v != v else v)
        for k, v in cs.missing_report(one, "correct", "src").to_frame().iloc[0].items()
    }
    plan = run(
        "plan",
        str(tau_path),
        "--outcome",
        "reward",
        "--by",
        "task_id",
        "--target-half-width",
        "0.05",
    )
    library_plan = cs.pilot_plan(tau, "reward", "task_id", target_half_width=0.05)
    assert [row["half_width"] for row in plan["rows"]] == list(
        library_plan.to_frame()["half_width"]
    )
    # every command that prints a result prints it in Markdown too
    assert (
        main(
            [
                "plan",
                str(tau_path),
                "--by",
                "task_id",
                "--outcome",
                "reward",
                "--output",
                "markdown",
            ]
        )
        == 0
    )
    assert capsys.readouterr().out == cs.pilot_plan(tau, "reward", "task_id").to_markdown()


def test_a_reader_that_stops_early_is_not_an_error(tmp_path):
    # `clusterstats ... | head -c 10`: the pipe closes while the output (far more than a pipe
    # buffer: 300 groups of JSON) is being written
    rng = np.random.default_rng(0)
    frame = pd.DataFrame(
        {
            "group": np.repeat(np.arange(300), 40),
            "doc": np.tile(np.repeat(np.arange(20), 2), 300),
            "y": rng.normal(size=12_000),
        }
    )
    frame.to_csv(tmp_path / "many.csv", index=False)
    words = "ci many.csv --outcome y --by doc --over group --method cr2 --output json"
    done = subprocess.run(
        [
            "bash",
            "-c",
            f"{sys.executable} -m clusterstats {words} | head -c 10 > /dev/null; "
            "exit ${PIPESTATUS[0]}",
        ],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert done.stderr == ""


def test_gate_takes_the_power_of_its_plan_as_gate_does(tmp_path, capsys):
    # an inconclusive gate plans the clusters it needs at --power, as gate(power=) does
    bbh = cs.datasets.load("bbh")
    small = bbh[bbh["condition"] == "cot"].iloc[:2000]
    small.to_csv(tmp_path / "small.csv", index=False)
    needed = {}
    for power in (0.8, 0.95):
        words = ["gate", str(tmp_path / "small.csv"), "--outcome", "correct", "--by", "task",
                 "--at-least", "0.6", "--power", str(power), "--output", "json"]  # fmt: skip
        code, out, _ = _run(words, capsys)
        assert code == 2
        needed[power] = json.loads(out)["gates"][0]["clusters_needed"]
        with pytest.warns(cs.FewClustersWarning):  # 9 tasks
            report = cs.gate(small, "correct", by="task", at_least=0.6, power=power)
        assert needed[power] == report.gates[0].clusters_needed
    assert needed[0.95] > needed[0.8]


def _judged_files(tmp_path):
    import clusterstats as cs

    hanna = cs.datasets.load("hanna").query("criterion == 'Coherence'")
    judged, labels = tmp_path / "judged.csv", tmp_path / "labels.csv"
    hanna.drop(columns="human_score").to_csv(judged, index=False)
    kept = hanna[hanna["cluster"] < 24]
    kept[["item", "human_score"]].to_csv(labels, index=False)
    in_one = hanna.assign(human_score=hanna["human_score"].where(hanna["cluster"] < 24))
    return in_one, judged, labels


def test_judged_reaches_the_library_with_labels_from_a_file(tmp_path, capsys):
    import clusterstats as cs

    frame, judged, labels = _judged_files(tmp_path)
    words = ["judged", str(judged), "--labels", str(labels), "--on", "item", "--outcome",
             "human_score", "--judge", "judge_score", "--by", "cluster"]  # fmt: skip
    for extra, options in (
        ([], {}),
        (["--weight", "0.5", "--target", "benchmark"], {"weight": 0.5, "target": "benchmark"}),
        (["--estimand", "cluster_mean", "--method", "glide"],
         {"estimand": "cluster_mean", "method": "glide"}),
        (["--method", "bootstrap", "--n-resamples", "999", "--seed", "3"],
         {"method": "bootstrap", "n_resamples": 999, "rng": 3}),
    ):  # fmt: skip
        status, out, err = _run([*words, *extra, "--output", "json"], capsys)
        assert status == 0, err
        record = json.loads(out)
        library = cs.judged_ci(frame, "human_score", "cluster", judge="judge_score", **options)
        assert record["estimate"] == library.estimate
        assert record["low"] == library.low
        assert record["weight_method"] == library.weight_method
        assert record["method"] == library.method


def test_judged_refuses_a_label_for_a_row_the_judge_did_not_score(tmp_path, capsys):
    _, judged, labels = _judged_files(tmp_path)
    extra = pd.read_csv(labels)
    pd.concat([extra, pd.DataFrame({"item": [99999], "human_score": [3.0]})]).to_csv(
        labels, index=False
    )
    status, _, err = _run(
        ["judged", str(judged), "--labels", str(labels), "--on", "item", "--outcome",
         "human_score", "--judge", "judge_score", "--by", "cluster"],
        capsys,
    )  # fmt: skip
    assert status != 0
    assert "name no judged row" in err


def test_plan_with_a_judge_plans_the_labels(tmp_path, capsys):
    import clusterstats as cs

    frame, _, _ = _judged_files(tmp_path)
    path = tmp_path / "pilot.csv"
    frame.to_csv(path, index=False)
    words = ["plan", str(path), "--outcome", "human_score", "--by", "cluster", "--judge",
             "judge_score", "--target-half-width", "0.06", "--cost-per-cluster", "3"]  # fmt: skip
    status, out, err = _run([*words, "--output", "csv"], capsys)
    assert status == 0, err
    library = cs.judged_plan(
        frame, "human_score", "cluster", judge="judge_score", target_half_width=0.06,
        cost_per_cluster=3,
    )  # fmt: skip
    pd.testing.assert_frame_equal(pd.read_csv(io.StringIO(out)), library.to_frame())
    status, _, err = _run([*words, "--cost-per-row", "2"], capsys)
    assert status != 0
    assert "--cost-per-label and --cost-per-cluster" in err


def test_compare_with_a_judge_is_the_judged_leaderboard(tmp_path, capsys):
    import clusterstats as cs

    frame, _, _ = _judged_files(tmp_path)
    path = tmp_path / "models.csv"
    frame.to_csv(path, index=False)
    words = ["compare", str(path), "--outcome", "human_score", "--by", "cluster", "--model",
             "system", "--on", "cluster", "--judge", "judge_score"]  # fmt: skip
    status, out, err = _run([*words, "--baseline", "GPT-2", "--output", "json"], capsys)
    assert status == 0, err
    record = json.loads(out)
    library = cs.judged_compare(
        frame, "human_score", "cluster", model="system", judge="judge_score", on="cluster",
        baseline="GPT-2",
    )  # fmt: skip
    board = library.leaderboard()
    assert [row["model"] for row in record["leaderboard"]] == board["model"].tolist()
    assert [row["score"] for row in record["leaderboard"]] == board["score"].tolist()
    assert [row["delta"] for row in record["pairs"]] == list(library.delta)
    status, _, err = _run([*words, "--over", "criterion"], capsys)
    assert status != 0
    assert "--over does not go with --judge" in err
