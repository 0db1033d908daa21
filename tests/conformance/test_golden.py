"""Golden outputs on the bundled datasets: text, HTML and CSV of every statistic.

Each case below is a call a user makes; ``tests/golden/outputs/<case>.txt`` records what it
printed (``repr``), its Jupyter HTML and its ``to_frame()`` as CSV when the outputs were
frozen. Text and HTML must match exactly; CSV numbers must agree to 1e-12 (relative) and
every other cell exactly. A deliberate change is recorded with
``CLUSTERSTATS_UPDATE_GOLDEN=1 python -m pytest tests/conformance/test_golden.py`` and
reviewed in the diff.
"""

from __future__ import annotations

import io
import math
import os
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

import clusterstats as cs

OUTPUTS = Path(__file__).resolve().parents[1] / "golden" / "outputs"
UPDATE = os.environ.get("CLUSTERSTATS_UPDATE_GOLDEN") == "1"
SEPARATOR = "\n----- {} -----\n"


def _data() -> dict[str, Any]:
    mmlu = cs.datasets.load("mmlu_pro")
    bbh = cs.datasets.load("bbh")
    tau = cs.datasets.load("tau_bench_airline")
    crux = cs.datasets.load("cruxeval")
    demo = cs.load_demo_data()
    mixtral = mmlu[mmlu.model == "Mixtral-8x7B-Instruct-v0.1"]
    flash = mmlu[mmlu.model == "gemini-1.5-flash-002"]
    llama70 = mmlu[mmlu.model == "Meta-Llama-3.1-70B-Instruct"]
    answered = mmlu.assign(answered=mmlu.pred_missing.eq(0))
    cot = bbh[bbh.condition == "cot"]
    direct = bbh[bbh.condition == "direct"]
    wide = bbh.pivot(index="item_id", columns="condition", values="correct")
    wide["task"] = bbh.drop_duplicates("item_id").set_index("item_id")["task"]
    tau_ds = cs.to_case_rerun(tau, case="task_id", rerun="trial", outcome="reward")
    crux_ds = cs.to_case_rerun(
        crux, case="problem_id", rerun="sample_index", outcome="correct", dims=["task"]
    )
    return locals()


def _cases(d: dict[str, Any]) -> dict[str, Callable[[], Any]]:
    mixtral, demo, bbh, tau = d["mixtral"], d["demo"], d["bbh"], d["tau"]
    answered = d["answered"]
    answered_mixtral = answered[answered.model == "Mixtral-8x7B-Instruct-v0.1"]
    boot = {"n_resamples": 999, "rng": 0}
    return {
        "ci_auto": lambda: cs.cluster_ci(mixtral, "correct", by="src"),
        "ci_cr2": lambda: cs.cluster_ci(mixtral, "correct", by="src", method="cr2"),
        "ci_cr1_cluster_mean": lambda: mixtral.eval.cluster_ci(
            "correct", by="src", method="cr1", estimand="cluster_mean"
        ),
        "ci_wilson": lambda: cs.cluster_ci(mixtral, "correct", by="src", method="wilson"),
        "ci_bootstrap": lambda: cs.cluster_ci(
            mixtral, "correct", by="src", method="bootstrap", **boot
        ),
        "ci_percentile": lambda: cs.cluster_ci(
            mixtral, "correct", by="src", method="bootstrap_percentile", **boot
        ),
        "ci_over_model": lambda: demo.eval.cluster_ci("correct", by="src", over="model"),
        "ci_two_columns": lambda: cs.cluster_ci(tau, "reward", by=["user_id", "task_id"]),
        "ci_continuous": lambda: cs.cluster_ci(tau, "n_messages", by="task_id"),
        "ci_strata": lambda: cs.cluster_ci(mixtral, "correct", by="src", strata="category"),
        "ci_strata_macro": lambda: cs.cluster_ci(
            mixtral, "correct", by="src", strata="category", estimand="stratum_mean"
        ),
        "ci_strata_bootstrap": lambda: cs.cluster_ci(
            mixtral, "correct", by="src", strata="category", method="bootstrap", **boot
        ),
        "ci_missing_fail": lambda: cs.cluster_ci(d["flash"], "correct", by="src", missing="fail"),
        "ci_responded": lambda: cs.cluster_ci(
            answered_mixtral, "correct", by="src", responded="answered"
        ),
        "ci_ipw": lambda: cs.cluster_ci(
            answered_mixtral, "correct", by="src", responded="answered", missing="ipw"
        ),
        "ci_ipw_shrunk": lambda: cs.cluster_ci(
            answered_mixtral,
            "correct",
            by="src",
            responded="answered",
            missing="ipw",
            propensity="shrunk",
        ),
        "ci_few_clusters": lambda: cs.cluster_ci(
            d["llama70"], "correct", by="category", method="cr2"
        ),
        "icc": lambda: cs.icc(bbh, "correct", by="task", over="condition"),
        "design_effect": lambda: cs.design_effect(bbh, "correct", by="task", over="condition"),
        "design_effect_cluster_mean": lambda: cs.design_effect(
            mixtral, "correct", by="src", estimand="cluster_mean"
        ),
        "paired_frames": lambda: d["cot"].eval.paired_delta(
            d["direct"], "correct", by="task", on="item_id", labels=("cot", "direct")
        ),
        "paired_columns": lambda: d["wide"].eval.paired_delta("cot", "direct", by="task"),
        "paired_bootstrap": lambda: cs.paired_delta(
            d["cot"], d["direct"], "correct", by="task", on="item_id", method="bootstrap", **boot
        ),
        "paired_strata": lambda: cs.paired_delta(
            d["llama70"],
            mixtral,
            "correct",
            by="src",
            on="question_id",
            strata="category",
            how="inner",
        ),
        "paired_ipw": lambda: cs.paired_delta(
            answered[answered.model == "Meta-Llama-3.1-8B-Instruct"],
            answered_mixtral,
            "correct",
            by="src",
            on="question_id",
            responded="answered",
            missing="ipw",
        ),
        "compare": lambda: demo.eval.compare(
            "correct", by="src", model="model", on="question_id", how="inner", **boot
        ),
        "compare_strata": lambda: cs.compare(
            d["mmlu"],
            "correct",
            by="src",
            model="model",
            on="question_id",
            how="inner",
            strata="category",
            **boot,
        ),
        "compare_ipw": lambda: cs.compare(
            answered,
            "correct",
            by="src",
            model="model",
            on="question_id",
            how="inner",
            responded="answered",
            missing="ipw",
            **boot,
        ),
        "stratum_table": lambda: cs.stratum_table(mixtral, "correct", by="src", strata="category"),
        "missing_report": lambda: cs.missing_report(
            answered_mixtral, "correct", by="src", responded="answered", threshold=0.42
        ),
        "dataset_ci": lambda: d["tau_ds"].eval.cluster_ci("reward", "user_id"),
        "dataset_ci_cases": lambda: d["tau_ds"].eval.cluster_ci("reward", method="cr2"),
        "dataset_icc_extra_dim": lambda: d["crux_ds"].eval.icc("correct"),
        "dataset_design_effect": lambda: d["tau_ds"].eval.design_effect("reward", "user_id"),
        "dataset_paired": lambda: (
            d["crux_ds"]
            .sel(task="input_prediction")
            .eval.paired_delta(d["crux_ds"].sel(task="output_prediction"), "correct")
        ),
        "pass_hat_k": lambda: d["tau_ds"].eval.pass_hat_k("reward", k=2),
        "pass_at_k_over": lambda: cs.pass_at_k(
            d["crux"], "correct", k=5, case="problem_id", rerun="sample_index", over="task"
        ),
        "pass_at_k_by_user": lambda: cs.pass_at_k(d["tau_ds"], "reward", k=2, by="user_id"),
        "flakiness": lambda: d["tau_ds"].eval.flakiness("reward"),
        "plan": lambda: cs.plan(
            n_clusters=100,
            cluster_size=10,
            icc=0.5,
            proportion=0.5,
            target_half_width=0.05,
            cost_per_cluster=20,
            cost_per_row=1,
            icc_range=(0.3, 0.7),
        ),
        "pilot_plan": lambda: mixtral.eval.plan("correct", "src", target_half_width=0.02),
        "pilot_plan_paired": lambda: d["llama70"].eval.plan(
            "correct", "src", other=mixtral, on="question_id", effect=0.02
        ),
        "report": lambda: cs.report(demo, "correct", by="src", over="model"),
        "check_clustering": lambda: cs.check_clustering(
            d["llama70"], "correct", ["src", "category"]
        ),
        "check_clustering_crossed": lambda: cs.check_clustering(
            tau, "reward", ["task_id", "trial"]
        ),
    }


def _render(result: Any) -> str:
    if isinstance(result, pd.DataFrame):
        return SEPARATOR.format("csv").lstrip("\n") + result.to_csv(index=False)
    parts = ["----- repr -----\n" + repr(result)]
    html = getattr(result, "_repr_html_", None)
    if html is not None:
        parts.append(SEPARATOR.format("html").lstrip("\n") + html())
    if hasattr(result, "to_frame"):
        parts.append(SEPARATOR.format("csv").lstrip("\n") + result.to_frame().to_csv(index=False))
    return "\n".join(parts)


def _sections(text: str) -> dict[str, str]:
    out, name = {}, None
    for line in text.split("\n"):
        if line.startswith("----- ") and line.endswith(" -----"):
            name = line[6:-6]
            out[name] = []
        elif name is not None:
            out[name].append(line)
    return {k: "\n".join(v).strip("\n") for k, v in out.items()}


def _cells_agree(old: str, new: str) -> bool:
    if old == new:
        return True
    try:
        a, b = float(old), float(new)
    except ValueError:
        return False
    if math.isnan(a) and math.isnan(b):
        return True
    return math.isclose(a, b, rel_tol=1e-12, abs_tol=1e-15)


def _csv_differences(old: str, new: str) -> list[str]:
    a = pd.read_csv(io.StringIO(old), dtype=str, keep_default_na=False)
    b = pd.read_csv(io.StringIO(new), dtype=str, keep_default_na=False)
    if list(a.columns) != list(b.columns) or a.shape != b.shape:
        return [
            f"columns or shape differ: {list(a.columns)} {a.shape} vs {list(b.columns)} {b.shape}"
        ]
    return [
        f"row {i}, {column}: {a.at[i, column]!r} -> {b.at[i, column]!r}"
        for column in a.columns
        for i in range(len(a))
        if not _cells_agree(a.at[i, column], b.at[i, column])
    ]


@pytest.fixture(scope="module")
def cases() -> dict[str, Callable[[], Any]]:
    return _cases(_data())


def _case_names() -> list[str]:
    import ast
    import inspect

    tree = ast.parse(inspect.getsource(_cases))
    returned = next(n for n in ast.walk(tree) if isinstance(n, ast.Return))
    return [key.value for key in returned.value.keys]  # type: ignore[union-attr]


@pytest.mark.parametrize("name", _case_names())
def test_golden_output(name, cases):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", cs.ClusterStatsWarning)
        text = _render(cases[name]())
    path = OUTPUTS / f"{name}.txt"
    if UPDATE:
        OUTPUTS.mkdir(parents=True, exist_ok=True)
        path.write_text(text + "\n", encoding="utf-8")
    old = _sections(path.read_text(encoding="utf-8"))
    new = _sections(text)
    assert list(old) == list(new)
    for section in ("repr", "html"):
        if section in old:
            assert new[section] == old[section], f"{name}: the {section} changed"
    if "csv" in old:
        differences = _csv_differences(old["csv"], new["csv"])
        assert not differences, f"{name}: the CSV changed:\n" + "\n".join(differences[:20])
