"""The bundled datasets: what they hold, that they are the upstream bytes, and that the
repository needs nothing outside itself."""

from __future__ import annotations

import hashlib
import lzma
import re
from fnmatch import fnmatch
from importlib import resources
from pathlib import Path

import pandas as pd
import pytest

import clusterstats as cs

REPO = Path(__file__).resolve().parents[2]
# Counts and accuracies quoted from clusterstats/data/PROVENANCE.md (computed by the build
# scripts' own assertions on the upstream files).
EXPECTED = {
    "mmlu_pro": {"rows": 48_128, "clusters": ("src", 91), "items": ("question_id", 12_032)},
    "bbh": {"rows": 13_022, "clusters": ("task", 27), "items": ("item_id", 6_511)},
    "cruxeval": {"rows": 16_000, "clusters": ("problem_id", 800), "items": ("problem_id", 800)},
    "tau_bench_airline": {"rows": 200, "clusters": ("task_id", 50), "items": ("user_id", 34)},
    "repoqa_snf": {"rows": 15_000, "clusters": ("repo", 50), "items": ("instance_id", 500)},
    "hanna": {"rows": 6_336, "clusters": ("cluster", 96), "items": ("item", 1_056)},
    "topicalchat": {"rows": 1_440, "clusters": ("cluster", 60), "items": ("item", 360)},
}


def test_list_names_the_seven_datasets():
    assert cs.datasets.list() == sorted(EXPECTED)


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_each_dataset_loads_with_its_documented_columns_and_dtypes(name):
    info = cs.datasets.info(name)
    frame = cs.datasets.load(name)
    assert len(frame) == info.n_rows == EXPECTED[name]["rows"]
    assert list(frame.columns) == [column for column, _, _ in info.columns]
    for column, dtype in info.dtypes.items():
        if dtype == "string":
            # pandas' default for text: "str" under pandas 3, object under 2.x
            assert pd.api.types.infer_dtype(frame[column], skipna=True) == "string", column
        else:
            assert str(frame[column].dtype) == dtype, column
    for column, count in (EXPECTED[name]["clusters"], EXPECTED[name]["items"]):
        assert frame[column].nunique() == count
    assert (REPO / "clusterstats" / "data" / info.licence_file).exists()
    assert info.licence in (REPO / "clusterstats" / "data" / "PROVENANCE.md").read_text()


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_shipped_bytes_are_the_build_scripts_csv(name):
    info = cs.datasets.info(name)
    packed = (resources.files("clusterstats") / "data" / info.file).read_bytes()
    digest = hashlib.sha256(lzma.decompress(packed)).hexdigest()
    assert digest == info.sha256
    assert digest in (REPO / "clusterstats" / "data" / "PROVENANCE.md").read_text()


def test_published_figures_reproduce():
    # PROVENANCE.md: accuracy 0.7397 (cot) / 0.5234 (direct); CRUXEval's own pass_at_1
    # 35.95 / 34.2125; MMLU-Pro's missing answers (1,426 Mixtral, 91 gemini of which 20 absent).
    bbh = cs.datasets.load("bbh")
    assert bbh.groupby("condition")["correct"].mean().round(4).to_dict() == {
        "cot": 0.7397,
        "direct": 0.5234,
    }
    crux = cs.datasets.load("cruxeval")
    assert (100 * crux.groupby("task")["correct"].mean()).round(4).to_dict() == {
        "input_prediction": 35.95,
        "output_prediction": 34.2125,
    }
    mmlu = cs.datasets.load("mmlu_pro")
    missing = mmlu.groupby("model")["pred_missing"].sum().to_dict()
    assert missing["Mixtral-8x7B-Instruct-v0.1"] == 1426
    assert missing["gemini-1.5-flash-002"] == 91
    assert int(mmlu["correct"].isna().sum()) == int(mmlu["absent"].sum()) == 20


@pytest.fixture(scope="module")
def repoqa():
    return cs.datasets.load("repoqa_snf")


def test_repoqa_design_is_30_systems_on_the_same_500_needles(repoqa):
    systems = repoqa.groupby("system")["instance_id"].agg(tuple)
    assert len(systems) == 30
    assert systems.nunique() == 1  # the same 500 needles, in the same order, for every system
    needles = repoqa[repoqa["system"] == repoqa["system"].iloc[0]]
    assert len(needles) == 500
    assert needles["instance_id"].is_unique
    assert needles["repo"].nunique() == 50
    assert needles.groupby("repo").size().eq(10).all()
    assert needles["language"].value_counts().to_dict() == dict.fromkeys(
        ["python", "cpp", "java", "typescript", "rust"], 100
    )
    assert repoqa.groupby("repo")["language"].nunique().eq(1).all()  # repo nested in language
    # depth is crossed with repo: each repo has one needle at each of 0.05, 0.15, ..., 0.95
    depths = needles.groupby("repo")["needle_position"].agg(lambda d: tuple(sorted(d)))
    assert set(depths) == {tuple(round(0.05 + 0.1 * k, 2) for k in range(10))}
    per_system = ["eval_date", "claimed_ctx", "open_weights", "leaderboard_pass1"]
    constant = repoqa.groupby("system")[[*per_system, "matches_leaderboard"]].nunique()
    assert constant.eq(1).all().all()


def test_repoqa_stays_compact():
    packed = resources.files("clusterstats") / "data" / cs.datasets.info("repoqa_snf").file
    assert len(packed.read_bytes()) < 200_000  # 117,236 bytes when added


def test_repoqa_correct_is_the_leaderboards_pass_rule(repoqa):
    rule = (repoqa["is_best_similar"] == 1) & (repoqa["best_similar_score"] >= 0.8)
    assert (repoqa["correct"] == rule.astype("int64")).all()
    assert int(((repoqa["is_best_similar"] == 1) & (repoqa["correct"] == 0)).sum()) == 3600


# The RepoQA leaderboard as published (evalplus.github.io, results/repoqa/COMBINED-RESULTS.json
# at commit 87418456, pass@1 at threshold 0.8 over the 500 needles; PROVENANCE.md): the source
# of the expected numbers below, not figures computed from the shipped rows.
PUBLISHED_REPOQA_PASS1 = {
    "claude-3-opus-20240229": 0.906,
    "gemini-1.5-pro-latest": 0.906,
    "gpt-4o-2024-05-13": 0.906,
    "gemini-1.5-flash-latest": 0.9,
    "claude-3-sonnet-20240229": 0.874,
    "deepseek-ai/DeepSeek-V2-Chat": 0.834,
    "meta-llama/Meta-Llama-3-70B-Instruct": 0.822,
    "claude-3-haiku-20240307": 0.818,
    "CohereForAI/c4ai-command-r-plus": 0.784,
    "gpt-4-turbo-2024-04-09": 0.764,
    "mistralai/Mixtral-8x7B-Instruct-v0.1": 0.68,
    "mistralai/Mixtral-8x22B-Instruct-v0.1": 0.678,
    "Qwen/Qwen1.5-72B-Chat": 0.67,
    "Qwen/CodeQwen1.5-7B-Chat": 0.628,
    "gpt-3.5-turbo-0125": 0.604,
    "meta-llama/Meta-Llama-3-8B-Instruct": 0.536,
    "deepseek-ai/deepseek-coder-33b-instruct": 0.484,
    "mistralai/Mistral-7B-Instruct-v0.2": 0.474,
    "codellama/CodeLlama-13b-Instruct-hf": 0.426,
    "codellama/CodeLlama-34b-Instruct-hf": 0.416,
    "deepseek-ai/DeepSeek-V2-Lite-Chat": 0.416,
    "Qwen/Qwen1.5-32B-Chat": 0.338,
    "codellama/CodeLlama-7b-Instruct-hf": 0.282,
    "Qwen/Qwen1.5-14B-Chat": 0.26,
    "ise-uiuc/Magicoder-S-DS-6.7B": 0.232,
    "microsoft/Phi-3-mini-128k-instruct": 0.224,
    "mistralai/Mistral-7B-Instruct-v0.1": 0.11,
    "deepseek-ai/deepseek-coder-6.7b-instruct": 0.106,
    "Qwen/Qwen1.5-7B-Chat": 0.028,
    "google/codegemma-7b-it": 0.022,
}


def test_repoqa_reproduces_the_published_leaderboard(repoqa):
    per = repoqa.groupby("system").agg(
        solved=("correct", "sum"),
        pass1=("correct", "mean"),
        published=("leaderboard_pass1", "first"),
        matches=("matches_leaderboard", "first"),
    )
    assert per["published"].to_dict() == PUBLISHED_REPOQA_PASS1
    # The published figures have 3 decimals (500 needles: multiples of 0.002), so the
    # per-system means are compared to 3 decimals, and the counts exactly.
    matching = per[per["matches"] == 1]
    assert len(matching) == 29
    assert (matching["pass1"].round(3) == matching["published"]).all()
    assert (matching["solved"] == (matching["published"] * 500).round().astype(int)).all()
    # The one flagged system: its rows are the 2024-05-13 run, the leaderboard shows a re-run
    flagged = per[per["matches"] == 0]
    assert flagged.index.tolist() == ["Qwen/Qwen1.5-72B-Chat"]
    assert (flagged["solved"].iloc[0], flagged["published"].iloc[0]) == (250, 0.67)
    # Exact ties (PROVENANCE.md): three systems solve exactly 453 of 500, two exactly 208
    assert sorted(per.index[per["solved"] == 453]) == [
        "claude-3-opus-20240229",
        "gemini-1.5-pro-latest",
        "gpt-4o-2024-05-13",
    ]
    assert per["solved"].max() == 453
    assert sorted(per.index[per["solved"] == 208]) == [
        "codellama/CodeLlama-34b-Instruct-hf",
        "deepseek-ai/DeepSeek-V2-Lite-Chat",
    ]
    assert per["solved"].value_counts().max() == 3


def test_repoqa_numbers_are_the_csvs_digits_exactly(repoqa):
    # written back as CSV, the frame is the shipped CSV byte for byte: every float (scores
    # such as 0.03235934848975789) survives the round trip, whatever pandas' own parser does
    written = repoqa.to_csv(index=False, lineterminator="\n").encode()
    assert hashlib.sha256(written).hexdigest() == cs.datasets.info("repoqa_snf").sha256


@pytest.mark.parametrize("name", ["hanna", "topicalchat"])
def test_judge_human_data_is_complete_with_one_row_per_item_and_criterion(name):
    frame = cs.datasets.load(name)
    assert not frame.isna().any().any()
    assert not frame.duplicated(["item", "criterion"]).any()
    # every item is rated on every criterion and belongs to one cluster and one system
    per_item = frame.groupby("item").agg(
        criteria=("criterion", "nunique"),
        clusters=("cluster", "nunique"),
        systems=("system", "nunique"),
    )
    assert (per_item["criteria"] == frame["criterion"].nunique()).all()
    assert (per_item[["clusters", "systems"]] == 1).all().all()
    # the design of PROVENANCE.md: each cluster holds one item of every system
    items = frame.drop_duplicates("item")
    assert items.groupby("cluster")["system"].agg(lambda s: s.is_unique).all()
    assert items.groupby("cluster").size().eq(frame["system"].nunique()).all()


def test_hanna_design_and_human_score_is_the_mean_of_the_three_ratings():
    hanna = cs.datasets.load("hanna")
    assert hanna["system"].nunique() == 11
    assert sorted(hanna["criterion"].unique()) == sorted(
        ["Relevance", "Coherence", "Empathy", "Surprise", "Engagement", "Complexity"]
    )
    # HANNA's story id: 96 x the system's position + the prompt
    position = hanna["system"].map({s: k for k, s in enumerate(hanna["system"].unique())})
    assert (hanna["item"] == 96 * position + hanna["cluster"]).all()
    raters = hanna[["human_1", "human_2", "human_3"]]
    assert raters.isin([1.0, 2.0, 3.0, 4.0, 5.0]).all().all()
    # the CSV holds the mean to 6 significant digits, so the mean is rounded the same way
    mean = raters.mean(axis=1).map(lambda v: float(f"{v:.6g}"))
    assert (hanna["human_score"] == mean).all()
    # the story-level metrics repeat on each criterion's row; BERTScore is 1 for Human only
    assert hanna.groupby("item")[["bertscore_f1", "bartscore_sh"]].nunique().eq(1).all().all()
    assert ((hanna["bertscore_f1"] == 1) == (hanna["system"] == "Human")).all()


def test_topicalchat_scores_are_on_their_documented_scales():
    chat = cs.datasets.load("topicalchat")
    assert chat["system"].nunique() == 6
    human = chat.groupby("criterion")["human_score"].agg(["min", "max"])
    assert human.loc["groundedness"].between(0, 1).all()
    assert human.drop(index="groundedness").stack().between(1, 3).all()
    assert chat["human_overall"].between(1, 5).all()
    assert chat.groupby("item")["human_overall"].nunique().eq(1).all()
    judge = chat.groupby("criterion")["judge_score"].agg(["min", "max"])
    assert judge.drop(index="engagingness").stack().between(0, 1).all()
    assert (chat["judge_score"] >= 0).all()  # engagingness is a sum over sentences


def test_demo_is_the_documented_columns_of_mmlu_pro():
    demo = cs.load_demo_data()
    assert demo.shape == (48128, 5)
    assert demo["question_id"].nunique() == 12032
    sizes = demo[demo.model == demo.model.iloc[0]].groupby("src").size()
    assert (sizes.min(), sizes.max()) == (17, 1003)  # the real, uneven sources
    written = demo.to_csv(index=False, lineterminator="\n").encode()
    # SHA-256 of the demo written as CSV (PROVENANCE.md)
    assert (
        hashlib.sha256(written).hexdigest()
        == "553aa41b956e29e867f0857b5a7adf6ac220b4b3e07195a1302ae6ce534cded6"
    )


def test_load_returns_a_new_frame_each_time():
    first = cs.datasets.load("tau_bench_airline")
    first.loc[0, "reward"] = 99
    assert cs.datasets.load("tau_bench_airline").loc[0, "reward"] == 0


def test_unknown_dataset_is_a_precise_error():
    with pytest.raises(cs.InvalidOptionError, match=r"no bundled dataset 'mmlu'.*mmlu_pro"):
        cs.datasets.load("mmlu")


def test_info_repr_names_source_licence_and_columns():
    text = repr(cs.datasets.info("bbh"))
    assert "suzgunmirac/BIG-Bench-Hard" in text
    assert "MIT" in text
    assert "no_answer" in text


def test_every_data_file_is_packaged():
    tomllib = pytest.importorskip("tomllib")  # Python 3.11+
    config = tomllib.loads((REPO / "pyproject.toml").read_text())
    patterns = config["tool"]["setuptools"]["package-data"]["clusterstats"]
    for path in (REPO / "clusterstats" / "data").iterdir():
        relative = f"data/{path.name}"
        assert any(fnmatch(relative, pattern) for pattern in patterns), relative


# The repository is self-contained: nothing reads a folder beside it.
_OUTSIDE = re.compile(r"\.\./" + "shared|" + r"\bshared/(data|seeds|methods|design)\b")
_CHECKED = ("tests", "docs", "benchmarks", "tools", "studies", "clusterstats", ".ci")


def test_nothing_in_the_repository_reaches_outside_it():
    offenders = []
    for top in _CHECKED:
        for path in sorted((REPO / top).rglob("*")):
            if not path.is_file() or path.suffix in (".xz", ".png", ".pyc"):
                continue
            text = path.read_text(encoding="utf-8", errors="replace")
            for number, line in enumerate(text.splitlines(), start=1):
                if _OUTSIDE.search(line):
                    offenders.append(f"{path.relative_to(REPO)}:{number}: {line.strip()}")
    for name in ("README.md", "mkdocs.yml", "pyproject.toml"):
        if _OUTSIDE.search((REPO / name).read_text(encoding="utf-8")):
            offenders.append(name)
    assert not offenders, "files that read outside the repository:\n" + "\n".join(offenders)
