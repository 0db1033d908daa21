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
}


def test_list_names_the_four_datasets():
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
