"""Fixtures: the small reference datasets (``tests/reference/``) and the bundled real data."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import clusterstats

REFERENCE = Path(__file__).resolve().parent / "reference"


@pytest.fixture(scope="session")
def reference() -> dict:
    """The reference values of ``tests/reference/methods_reference_values.json`` (see the
    README beside it for where each comes from)."""
    with open(REFERENCE / "methods_reference_values.json") as fh:
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
    return clusterstats.datasets.load("mmlu_pro")


@pytest.fixture(scope="session")
def bbh() -> pd.DataFrame:
    return clusterstats.datasets.load("bbh")


@pytest.fixture(scope="session")
def tau() -> pd.DataFrame:
    return clusterstats.datasets.load("tau_bench_airline")


@pytest.fixture(scope="session")
def cruxeval() -> pd.DataFrame:
    return clusterstats.datasets.load("cruxeval")


@pytest.fixture(scope="session")
def run_on_mock_model():
    """``run(log_dir, n_samples, docs_of, broken, epochs, metrics=None, passes=None,
    early_stopping=None, max_samples=None, model="mockllm/model")``: a task of ``n_samples``
    samples on Inspect's mock model (any ``mockllm/<name>``), offline; sample i sits in document
    ``docs_of(i)``, its target is one the mock reply contains if ``passes(i)`` (default:
    unless i % 3 == 0), and the
    samples in ``broken`` raise in a solver (errored, never scored). Returns the log."""
    inspect_ai = pytest.importorskip("inspect_ai")
    from inspect_ai.dataset import Sample
    from inspect_ai.model import _model
    from inspect_ai.scorer import includes
    from inspect_ai.solver import solver

    @solver
    def flaky_tool():
        async def solve(state, generate):
            if state.metadata["broken"]:
                raise RuntimeError("tool failure")
            return await generate(state)

        return solve

    def run(
        log_dir,
        n_samples,
        docs_of,
        broken,
        epochs,
        metrics=None,
        passes=None,
        early_stopping=None,
        max_samples=None,
        model="mockllm/model",
    ):
        passes = passes or (lambda i: i % 3 != 0)
        samples = [
            Sample(
                input=f"question {i}",
                target="Default" if passes(i) else "never said",
                id=f"q{i}",
                metadata={"doc": docs_of(i), "broken": i in broken},
            )
            for i in range(n_samples)
        ]
        task = inspect_ai.Task(
            dataset=samples,
            solver=[flaky_tool()],
            scorer=includes(),
            metrics=metrics,
            early_stopping=early_stopping,
        )
        # The mock provider counts tokens with a tiktoken vocabulary that it would
        # download; a character count keeps the run offline.
        original = _model.count_text_tokens
        _model.count_text_tokens = lambda text: max(1, len(text) // 4)
        try:
            (log,) = inspect_ai.eval(
                task,
                model=model,
                log_dir=str(log_dir),
                epochs=epochs,
                fail_on_error=False,
                display="none",
                max_samples=max_samples,
            )
        finally:
            _model.count_text_tokens = original
        return log

    return run
