"""Golden outputs on the bundled datasets: text, HTML and CSV of every statistic.

Each case below is a call a user makes; ``tests/golden/outputs/<case>.txt`` records what it
printed (``repr``), its Jupyter HTML and its ``to_frame()`` as CSV when the outputs were
frozen. A deliberate change is recorded with
``CLUSTERSTATS_UPDATE_GOLDEN=1 python -m pytest tests/conformance/test_golden.py`` and
reviewed in the diff.

Numbers are compared as numbers, never as strings: to a relative tolerance of
:data:`RELATIVE` (1e-8), plus :data:`ABSOLUTE` (1e-15) at zero. The supported stacks do not
agree to the last digit. scipy 1.11's t quantile at a non-integer df (Satterthwaite's, of CR2)
differs from later releases' by up to 3e-9 relatively (``t.ppf(0.975, 42.06)``: 2.0179955810
against 2.0179955867), which moves CR2's bounds and ``widening`` by as much: the largest drift
measured between the oldest declared stack (Python 3.10, numpy 1.26.0, scipy 1.11.1, pandas
2.2.0, xarray 2024.1.0) and the newest (Python 3.13, the latest releases) is 2.8e-9; BLAS,
LAPACK and summation order move the 11th digit elsewhere. 1e-8 keeps a margin over that,
while a change of method or formula moves the 2nd to 6th digit. Everything else must match
exactly:

- text and HTML (``_printed_differences``) are cut into numbers and the text between them.
  The text must be equal. Every number must keep its value and its printed layout: sign,
  digits before and after the point, thousands separators, exponent (what a fixed-precision
  format writes; a float printed in full, 12 significant digits or more, has a length that
  follows its last bits and keeps only that). A number printed at 4 decimals is thus compared
  to its printed precision: one lying within 1e-8 of a rounding boundary could flip its last
  digit on another stack, which fails here as a change of one unit, to be checked against the
  CSV before re-recording (none does on the stacks CI runs);
- CSV cells (``_csv_differences``) holding numbers agree to the tolerance relative to the
  larger of the two and of their column's largest magnitude (a difference's bound near 0,
  ``delta - t*se`` nearly cancelling, keeps the absolute error of its column instead of a
  relative error without bound; a p-value far below its column's largest is thus checked to
  about 1e-8 absolutely), and keep their kind (an integer stays an integer: counts turned
  float are a change); every other cell is equal.
"""

from __future__ import annotations

import io
import math
import os
import re
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
#: Relative tolerance of every number (see the module's docstring for the measured drift).
RELATIVE = 1e-8
#: Absolute tolerance near zero: a difference that cancels to 0.0 on one stack and to a few
#: units of 1e-17 on another.
ABSOLUTE = 1e-15
#: A printed number: a sign only where it touches the digits, thousands separators, a
#: fractional part, an exponent; not a piece of a word or a name (``cr2``, ``70B``, ``0.6em``,
#: ``gemini-1.5`` gives ``1.5``, the same on both sides).
NUMBER = re.compile(
    r"((?<![\w.])[-\u2212]?(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?(?:e[-+]?\d+)?(?!\w)(?!\.\d))"
)


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


def _close(a: float, b: float, scale: float = 0.0) -> bool:
    """``a`` and ``b`` within :data:`RELATIVE` of the larger of them and of ``scale``."""
    if math.isnan(a) or math.isnan(b):
        return math.isnan(a) and math.isnan(b)
    if math.isinf(a) or math.isinf(b):
        return a == b
    return abs(a - b) <= RELATIVE * max(abs(a), abs(b), scale) + ABSOLUTE


def _as_number(cell: str) -> float | None:
    try:
        return float(cell)
    except ValueError:
        return None


def _cells_agree(old: str, new: str, scale: float = 0.0) -> bool:
    if old == new:
        return True
    a, b = _as_number(old), _as_number(new)
    if a is None or b is None:
        return False
    integer = re.compile(r"[-+]?\d+")
    if bool(integer.fullmatch(old)) != bool(integer.fullmatch(new)):
        return False
    return _close(a, b, scale)


def _column_scale(*cells: str) -> float:
    """The largest finite magnitude among a column's numbers: the scale its values are
    computed on, so that a bound that nearly cancels (a difference's ``low`` close to 0)
    keeps the error of its column rather than a relative error without bound."""
    values = [abs(v) for v in map(_as_number, cells) if v is not None and math.isfinite(v)]
    return max(values, default=0.0)


def _number_value(printed: str) -> float:
    return float(printed.replace(",", "").replace("\u2212", "-"))


def _layout(printed: str) -> str:
    """The printed form of a number with its digits blanked: ``0.0000``, ``00,000``; a float
    written at full precision (12 significant digits or more: Python's shortest repr, whose
    length follows its last bits) has no layout to keep."""
    mantissa = re.sub(r"e.*", "", printed)
    significant = re.sub(r"^[-\u22120.,]*", "", mantissa).replace(".", "").replace(",", "")
    return "full precision" if len(significant) >= 12 else re.sub(r"\d", "0", printed)


def _printed_differences(old: str, new: str) -> list[str]:
    """Where two printed outputs differ: text between numbers, a number's layout or value."""
    a, b = NUMBER.split(old), NUMBER.split(new)
    if len(a) != len(b):
        return [f"{len(a) // 2} numbers printed, now {len(b) // 2}: {_first_difference(old, new)}"]
    differences = []
    for i, (was, now) in enumerate(zip(a, b, strict=True)):
        where = "".join(a[max(i - 2, 0) : i])[-60:]
        if i % 2 == 0:
            if was != now:
                differences.append(f"after {where!r}: text {was[:80]!r} -> {now[:80]!r}")
        elif _layout(was) != _layout(now):
            differences.append(f"after {where!r}: number printed {was!r} -> {now!r}")
        elif not _close(_number_value(was), _number_value(now)):
            differences.append(f"after {where!r}: number {was!r} -> {now!r}")
    return differences


def _first_difference(old: str, new: str) -> str:
    pairs = enumerate(zip(old, new, strict=False))
    at = next((i for i, (x, y) in pairs if x != y), min(len(old), len(new)))
    start = max(at - 40, 0)
    return f"at character {at}: {old[start : at + 40]!r} -> {new[start : at + 40]!r}"


def _csv_differences(old: str, new: str) -> list[str]:
    a = pd.read_csv(io.StringIO(old), dtype=str, keep_default_na=False)
    b = pd.read_csv(io.StringIO(new), dtype=str, keep_default_na=False)
    if list(a.columns) != list(b.columns) or a.shape != b.shape:
        return [
            f"columns or shape differ: {list(a.columns)} {a.shape} vs {list(b.columns)} {b.shape}"
        ]
    differences = []
    for column in a.columns:
        scale = _column_scale(*a[column], *b[column])
        differences += [
            f"row {i}, {column}: {a.at[i, column]!r} -> {b.at[i, column]!r}"
            for i in range(len(a))
            if not _cells_agree(a.at[i, column], b.at[i, column], scale)
        ]
    return differences


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
            differences = _printed_differences(old[section], new[section])
            assert not differences, f"{name}: the {section} changed:\n" + "\n".join(
                differences[:20]
            )
    if "csv" in old:
        differences = _csv_differences(old["csv"], new["csv"])
        assert not differences, f"{name}: the CSV changed:\n" + "\n".join(differences[:20])


@pytest.mark.parametrize(
    ("old", "new", "agree"),
    [
        (
            "estimate 0.4189  95% CI [0.3609, 0.4786]",
            "estimate 0.4189  95% CI [0.3609, 0.4786]",
            True,
        ),
        ("half_width 0.07357673377212379", "half_width 0.0735767337692413", True),
        ("half_width 0.07357673377212379", "half_width 0.0735767", False),
        ("half_width 0.07357673377212379", "half_width 0.0735767237692413", False),
        ("estimate 0.4189", "estimate 0.4190", False),  # one unit in the last printed place
        ("estimate 0.4190", "estimate 0.419", False),  # the fixed precision lost
        ("12,032 rows", "12032 rows", False),  # the thousands separator lost
        ("se 5.681e-05", "se 0.0000568", False),
        ("delta -0.0228", "delta 0.0228", False),
        ("A \u2212 B  \u22120.0100", "A \u2212 B  \u22120.0100", True),
        ("ICC 0.1168  design effect 34.75", "ICC 0.1168  design effect 34.75 ", False),
        ("ICC 0.1168", "icc 0.1168", False),
        ("[0.3609, 0.4786]", "[0.3609, 0.4786, 0.5]", False),
        ("gemini-1.5-flash-002, cr2, 0.6em", "gemini-1.5-flash-002, cr2, 0.6em", True),
        ("gemini-1.5-flash-002", "gemini-1.6-flash-002", False),
    ],
)
def test_printed_numbers_agree_to_the_tolerance_and_keep_their_layout(old, new, agree):
    assert (not _printed_differences(old, new)) is agree


@pytest.mark.parametrize(
    ("old", "new", "agree"),
    [
        ("0.36088911046751393", "0.36088911046514494", True),  # 7e-11 apart: a BLAS digit
        ("0.36088911046751393", "0.3608891", False),
        ("nan", "nan", True),
        ("nan", "0.0", False),
        ("0.0", "1e-17", True),
        ("12032", "12032.0", False),  # a count turned float
        ("12032", "12033", False),
        ("korn_graubard", "korn_graubard ", False),
        ("", "0", False),
    ],
)
def test_csv_cells_agree_to_the_tolerance_and_keep_their_kind(old, new, agree):
    assert _cells_agree(old, new) is agree


def test_csv_numbers_near_zero_keep_the_error_of_their_column():
    old = "low\n0.5\n0.005575271841453438\n"
    # 6.4e-11 apart, 1.1e-8 of the value but 1.3e-10 of the column: a bound that cancels
    assert not _csv_differences(old, "low\n0.5\n0.005575271777372961\n")
    assert _csv_differences(old, "low\n0.5\n0.0055752\n")
    assert _csv_differences(old, "low\n0.5\n0.005575271841453438\n0.1\n")
