"""Shared fixtures: the methods reference's small datasets and the shared real data."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

REPO_ROOT = Path(__file__).resolve().parents[1]
SHARED = REPO_ROOT.parent / "shared"
DATA = SHARED / "data"


@pytest.fixture(scope="session")
def reference() -> dict:
    """Reference values of ``shared/methods/REPORT.md`` section 12 (checked against R there)."""
    with open(SHARED / "methods" / "reference_values.json") as fh:
        return json.load(fh)


def frame_from_sizes(sizes, successes) -> pd.DataFrame:
    """Binary rows: within each cluster the successes first, then the failures."""
    rows = [
        (g, 1 if i < s else 0)
        for g, (n, s) in enumerate(zip(sizes, successes, strict=True))
        for i in range(n)
    ]
    return pd.DataFrame(rows, columns=["cluster", "y"])


@pytest.fixture
def d1(reference) -> pd.DataFrame:
    """Dataset D1: binary, 8 clusters of sizes 2,3,5,4,6,1,8,3."""
    data = reference["D1.data"]
    return frame_from_sizes(data["sizes"], data["successes"])


@pytest.fixture
def d2(reference) -> pd.DataFrame:
    """Dataset D2: continuous, 5 unequal clusters."""
    clusters = reference["D2.data"]["clusters"]
    rows = [(g, y) for g, values in enumerate(clusters) for y in values]
    return pd.DataFrame(rows, columns=["cluster", "y"])


@pytest.fixture
def d3(reference) -> pd.DataFrame:
    """Dataset D3: continuous, balanced 6 clusters x 4."""
    y = reference["D3.data"]["y"]
    return pd.DataFrame({"cluster": np.repeat(np.arange(6), 4), "y": y})


@pytest.fixture(scope="session")
def mmlu() -> pd.DataFrame:
    return pd.read_csv(DATA / "mmlu_pro_per_question.csv")


@pytest.fixture(scope="session")
def bbh() -> pd.DataFrame:
    return pd.read_csv(DATA / "bbh_codex_cot_vs_direct.csv")


@pytest.fixture(scope="session")
def tau() -> pd.DataFrame:
    return pd.read_csv(DATA / "tau_bench_airline_gpt4o_trials.csv")


@pytest.fixture(scope="session")
def cruxeval() -> pd.DataFrame:
    return pd.read_csv(DATA / "cruxeval_codellama7b_samples.csv")
