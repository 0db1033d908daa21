"""Result objects: frozen, readable, tidy, and the same whatever the entry point."""

from __future__ import annotations

import dataclasses
import html
import math
import warnings
from pathlib import Path

import pandas as pd
import pytest

import clusterstats as cs
from clusterstats import _display as fmt
from clusterstats._result import Lines, TableResult


@pytest.fixture(scope="module")
def demo() -> pd.DataFrame:
    return cs.load_demo_data()


def test_results_are_frozen(demo):
    res = demo.eval.cluster_ci("correct", by="src", over="model")
    single = res[res.groups[0]]
    with pytest.raises(dataclasses.FrozenInstanceError):
        single.estimate = 0.5  # type: ignore[misc]
    with pytest.raises(dataclasses.FrozenInstanceError):
        res.results = ()  # type: ignore[misc]


def test_cluster_ci_repr_names_method_estimand_and_context(demo):
    part = demo[demo.model == "Meta-Llama-3.1-8B-Instruct"]
    text = repr(part.eval.cluster_ci("correct", by="src"))
    for fragment in (
        "ClusterCI(correct by src; estimand=pooled, method=korn_graubard_hybrid_or_score)",
        "95% CI [",
        "naive (iid rows) CI [",
        "widening ×",
        "12,032 rows in 91 clusters (size 17–1,003",
        "ICC ",
        "design effect ",
        "effective n ",
    ):
        assert fragment in text, fragment


def test_html_repr_is_a_table_with_the_numbers(demo):
    res = demo.eval.cluster_ci("correct", by="src", over="model", method="cr2")
    html = res._repr_html_()
    assert html.count("<tr") == 1 + 4  # header + one row per model
    assert "Mixtral-8x7B-Instruct-v0.1" in html
    assert "method=cr2" in html  # the caption is the heading of the text
    single = res["Mixtral-8x7B-Instruct-v0.1"]._repr_html_()
    assert f"{res['Mixtral-8x7B-Instruct-v0.1'].estimate:.4f}" in single
    mixtral = demo[demo["model"] == "Mixtral-8x7B-Instruct-v0.1"]
    for result in (
        mixtral.eval.icc("correct", by="src"),
        mixtral.eval.design_effect("correct", by="src"),
    ):
        assert "<table" in result._repr_html_()


def test_to_frame_columns_are_fixed_whatever_the_options(demo):
    part = demo[demo.model == "gemini-1.5-flash-002"]
    frames = [
        part.eval.cluster_ci("correct", by="src").to_frame(),
        part.eval.cluster_ci(
            "correct",
            by=["category", "src"],
            method="bootstrap",
            n_resamples=300,
            rng=1,
            confidence=0.9,
            estimand="cluster_mean",
        ).to_frame(),
    ]
    for frame in frames:
        assert list(frame.columns) == list(cs.ClusterCI.columns)
        assert len(frame) == 1
    assert frames[1].loc[0, "by"] == "category, src"
    assert frames[1].loc[0, "n_resamples"] == 300
    assert all(c == c.lower() and " " not in c for c in cs.ClusterCI.columns)


def test_over_to_frame_has_one_row_per_group(demo):
    frame = demo.eval.cluster_ci("correct", by="src", over="model").to_frame()
    assert list(frame.columns) == ["model", *cs.ClusterCI.columns]
    assert len(frame) == 4
    assert frame["model"].is_unique
    icc_frame = demo.eval.icc("correct", by="src", over="model").to_frame()
    assert list(icc_frame.columns) == ["model", *cs.ICC.columns]
    deff_frame = demo.eval.design_effect("correct", by="src", over="model").to_frame()
    assert list(deff_frame.columns) == ["model", *cs.DesignEffect.columns]
    text = repr(demo.eval.icc("correct", by="src", over="model"))
    assert text.startswith("ICC over model")
    assert "Mixtral" in text


def test_to_dict_round_trips_into_the_dataclass(demo):
    res = demo.eval.cluster_ci("correct", by="src", over="model")
    for _, r in res.items():
        assert cs.ClusterCI(**r.to_dict()) == r
    mixtral = demo[demo["model"] == "Mixtral-8x7B-Instruct-v0.1"]
    d = cs.design_effect(mixtral, "correct", "src")
    assert cs.DesignEffect(**d.to_dict()) == d
    assert float(d) == d.design_effect
    assert float(cs.icc(mixtral, "correct", "src")) > 0


def test_demo_numbers_are_consistent(demo):
    # Relations that must hold between fields of one result.
    for _, r in demo.eval.cluster_ci("correct", by="src", over="model", method="cr1").items():
        assert r.widening == pytest.approx((r.high - r.low) / (r.naive_high - r.naive_low))
        assert r.n_eff == pytest.approx(r.n_rows / r.design_effect)
        assert r.cluster_size_min <= r.cluster_size_mean <= r.cluster_size_max
        assert r.interval == (r.low, r.high)
        assert not math.isnan(r.icc)
        assert r.design_effect > 1


def test_to_metrics_flat_floats_for_trackers(bbh):
    res = bbh[bbh["condition"] == "cot"].eval.cluster_ci("correct", by="task")
    metrics = res.to_metrics("eval/")
    numeric = [
        c
        for c in res.columns
        if isinstance(getattr(res, c), (int, float)) and not isinstance(getattr(res, c), bool)
    ]
    assert list(metrics) == [f"eval/{c}" for c in numeric]
    assert all(type(v) is float for v in metrics.values())
    assert metrics["eval/low"] == res.low
    assert "eval/method" not in metrics
    grouped = bbh.eval.cluster_ci("correct", by="task", over="condition")
    flat = grouped.to_metrics()
    assert flat["cot/estimate"] == grouped["cot"].estimate
    assert len(flat) == 2 * len(numeric)
    # labels that trackers reject become "_"
    odd = bbh.assign(condition=bbh["condition"].map({"cot": "c:o(t)", "direct": "d"}))
    keys = odd.eval.cluster_ci("correct", by="task", over="condition").to_metrics()
    assert "c_o_t_/estimate" in keys
    report = cs.gate(bbh[bbh.condition == "cot"], "correct", "task", at_least=0.5)
    gm = report.to_metrics("g/")
    assert gm["g/exit_code"] == 0.0
    assert gm["g/estimate"] == report.gates[0].estimate
    assert math.isnan(gm["g/clusters_needed"])


LM_EVAL = Path(__file__).resolve().parents[1] / "fixtures" / "lm_eval"


def _table_results(mmlu, bbh):
    """One of each table result, from the bundled data and the committed harness output."""
    mixtral = mmlu[mmlu.model == "Mixtral-8x7B-Instruct-v0.1"]
    answered = mixtral.assign(answered=mixtral.pred_missing.eq(0))
    cot = bbh[bbh.condition == "cot"]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", cs.ClusterStatsWarning)
        return {
            "Comparison": cs.compare(mmlu, "correct", by="src", model="model", on="question_id"),
            "MissingReport": cs.missing_report(answered, "correct", by="src", responded="answered"),
            "Plan": cs.pilot_plan(mixtral, "correct", by="src", target_half_width=0.03),
            "Report": cs.report(mmlu, "correct", by="src", over="model"),
            "ClusteringCheck": cs.check_clustering(mmlu, "correct", ["src", "category"]),
            "GateReport": cs.gate(bbh, "correct", "task", at_least=0.5, over="condition"),
            "LmEvalTable": cs.lm_eval_table(LM_EVAL / "dummy-b", by="passage"),
            "Report, no groups": cs.report(cot, "correct", by="task"),
            "ConfidenceSequence": cs.confidence_sequence(
                cot, "correct", by="task", order="item_index"
            ),
            "SliceComparison": cs.compare(
                mmlu[mmlu.category.isin(["law", "math"])],
                "correct",
                by="src",
                model="model",
                on="question_id",
                over="category",
                n_resamples=999,
            ),
            "LabelPlan": cs.judged_plan(
                _judged_pilot(), "human", "cluster", judge="judge_score", target_half_width=0.06
            ),
        }


def test_table_results_show_the_same_tables_sentences_and_notes_everywhere(mmlu, bbh):
    """Text, HTML and Markdown come from one declaration: every header, cell, sentence and
    note of the declared blocks is in each of the three (HTML escaped)."""
    for name, result in _table_results(mmlu, bbh).items():
        assert isinstance(result, TableResult), name
        text, page, markdown = repr(result), result._repr_html_(), result.to_markdown()
        heading = result._heading()
        assert heading in text, name
        assert html.escape(heading) in page, name
        assert markdown.startswith("\n".join(result._markdown_heading())), name
        sentences, cells = list(result._notes()), []
        for block in result._blocks():
            if isinstance(block, Lines):
                sentences += list(block.lines)
            else:
                sentences.append(block.title)
                cells += [*block.header, *(fmt.number(c) for row in block.rows for c in row)]
        assert cells, name
        for item in sentences + cells:
            assert item in text, (name, item)
            assert html.escape(item) in page, (name, item)
        for item in sentences:
            assert item in markdown, (name, item)
        for item in cells:  # a | inside a Markdown cell is escaped
            assert item.replace("|", "\\|") in markdown, (name, item)


def test_table_results_give_their_numbers_to_trackers(mmlu, bbh):
    """``to_metrics`` of every table result: a flat dict of floats keyed by its rows."""
    found = _table_results(mmlu, bbh)
    for name, result in found.items():
        metrics = result.to_metrics("x/")
        assert metrics, name
        assert all(isinstance(v, float) for v in metrics.values()), name
        assert all(k.startswith("x/") for k in metrics), name
    plan = found["Plan"].to_frame().set_index("option")
    assert found["Plan"].to_metrics()["current/n_eff"] == plan.loc["current", "n_eff"]
    analyses = found["MissingReport"].to_frame().set_index("analysis")
    assert found["MissingReport"].to_metrics()["ipw/low"] == analyses.loc["ipw", "low"]
    check = found["ClusteringCheck"].to_frame().set_index("grouping")
    assert found["ClusteringCheck"].to_metrics()["src/se"] == check.loc["src", "se"]
    report = found["Report"].to_frame().set_index("group")
    key = "gemini-1.5-flash-002/high"
    assert found["Report"].to_metrics()[key] == report.loc["gemini-1.5-flash-002", "high"]


def _one_row_results(mmlu, bbh):
    """One of each one-row result (and a grouped one), from the bundled data."""
    llama, gemini = (
        mmlu[mmlu.model == m] for m in ("Meta-Llama-3.1-70B-Instruct", "gemini-1.5-flash-002")
    )
    tau = cs.datasets.load("tau_bench_airline")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", cs.ClusterStatsWarning)
        return {
            "ClusterCI": cs.cluster_ci(gemini, "correct", by="src"),
            "ClusterCI, over": cs.cluster_ci(mmlu, "correct", by="src", over="model"),
            "ICC": cs.icc(gemini, "correct", by="src"),
            "DesignEffect": cs.design_effect(gemini, "correct", by="src"),
            "PairedDelta": cs.paired_delta(llama, gemini, "correct", by="src", on="question_id"),
            "PassAtK": cs.pass_at_k(tau, "reward", case="task_id", rerun="trial", k=2),
            "Flakiness": cs.flakiness(tau, "reward", case="task_id", rerun="trial"),
            "Gate": cs.gate(bbh[bbh.condition == "cot"], "correct", "task", at_least=0.5).gates[0],
            "SequencePlan": cs.sequence_plan(
                bbh[bbh.condition == "cot"], "correct", "task", at_least=0.6, runs=20
            ),
            "JudgedCI": cs.judged_ci(_judged_pilot(), "human", "cluster", judge="judge_score"),
        }


def _judged_pilot():
    """HANNA's coherence ratings, the humans' kept for the stories of 24 prompts."""
    hanna = cs.datasets.load("hanna").query("criterion == 'Coherence'")
    return hanna.assign(human=hanna["human_score"].where(hanna["cluster"] < 24))


def _visible_words(page: str) -> set[str]:
    """The words a browser shows of an HTML fragment (tags dropped, entities decoded)."""
    import re

    return set(html.unescape(re.sub(r"<[^>]+>", " ", page)).split())


def test_every_result_shows_in_html_what_its_text_shows(mmlu, bbh):
    """A notebook shows everything ``print(result)`` does: every word and number of the text
    (the rules of its tables and the prefix of its notes aside) is in the HTML, for every
    result class."""
    found = {**_one_row_results(mmlu, bbh), **_table_results(mmlu, bbh)}
    classes = {type(r).__name__ for r in found.values()}
    assert classes >= {name for name in cs.results.__all__ if name != "DatasetInfo"}
    for name, result in found.items():
        # the text's "note:" prefix is the HTML's list of notes
        # (a table's title ends in ":" in the text; it is the table's caption in the HTML)
        text = {w.rstrip(":") for w in repr(result).split() if w.strip("-–") and w != "note:"}
        missing = text - {w.rstrip(":") for w in _visible_words(result._repr_html_())}
        assert not missing, (name, sorted(missing)[:10])


def test_an_icc_that_rounds_to_zero_prints_as_zero():
    """Proportions and correlations print to four decimals everywhere; rounding noise around
    zero is 0.0000, not -1.230e-17 (a p-value keeps its exponent)."""
    assert fmt.proportion(-1.23e-17) == "0.0000"
    assert fmt.proportion(0.12034) == "0.1203"
    assert fmt.proportion(-0.25) == "-0.2500"
    assert fmt.proportion(float("nan")) == "nan"
    assert fmt.number(5.681e-05) == "5.681e-05"


def test_every_one_number_result_has_an_estimate(mmlu, bbh):
    """``estimate`` reads the one number of every one-row result (``delta``, ``icc``,
    ``design_effect`` and ``flaky_rate`` keep their names); it is not a new column."""
    found = _one_row_results(mmlu, bbh)
    headline = {
        "PairedDelta": "delta",
        "ICC": "icc",
        "DesignEffect": "design_effect",
        "Flakiness": "flaky_rate",
    }
    for name, result in found.items():
        if isinstance(result, cs.GroupedResults):
            continue
        field = headline.get(name, "estimate")
        assert result.estimate == getattr(result, field), name
        assert list(result.to_frame().columns).count("estimate") == (field == "estimate"), name


def test_a_grouped_paired_result_says_it_draws_no_forest(mmlu):
    llama, gemini = (
        mmlu[mmlu.model == m] for m in ("Meta-Llama-3.1-70B-Instruct", "gemini-1.5-flash-002")
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", cs.ClusterStatsWarning)
        grouped = cs.paired_delta(
            llama, gemini, "correct", by="src", on="question_id", over="category"
        )
    with pytest.raises(cs.InvalidInputError, match="results of cluster_ci"):
        grouped.plot()


def test_a_number_in_a_results_table_reads_the_same_in_its_text(mmlu, bbh):
    """One number format: what the notebook table of a one-row result shows (an estimate, a
    design effect, a widening, a count) is written the same way in its text, so a reader
    never sees ``43.43`` in one place and ``43.4`` in the other."""
    import re

    for name, result in _one_row_results(mmlu, bbh).items():
        if isinstance(result, cs.GroupedResults):
            continue
        page = result._repr_html_()
        heads = re.findall(r"<th[^>]*>([^<]*)</th>", page)
        cells = [html.unescape(c) for c in re.findall(r"<td[^>]*>([^<]*)</td>", page)]
        # the options a gate echoes (its boundary, its level) are written as the user gave them
        echoed = {"boundary", "confidence"}
        numbers = [
            c
            for h, c in zip(heads, cells, strict=True)
            if h not in echoed and re.fullmatch(r"-?[0-9][0-9,]*(\.[0-9]+)?", c)
        ]
        assert numbers, name
        words = re.findall(r"-?[0-9][0-9,]*(?:\.[0-9]+)?(?:e[-+][0-9]+)?", repr(result))
        words = {w.rstrip(",") for w in words}
        assert set(numbers) <= words, (name, sorted(set(numbers) - words))


def test_sizes_and_degrees_of_freedom_print_without_trailing_zeros():
    assert fmt.size(4.0) == "4"  # a whole mean cluster size: never 4.000
    assert fmt.size(116.54945) == "116.5"
    assert fmt.size(12012.0) == "12,012"
    assert fmt.size(float("nan")) == "nan"
    assert fmt.dof(9.1030) == "9.1"
    assert fmt.dof(89.0) == "89"
    assert fmt.dof(12345.6) == "12,346"
    assert fmt.proportion_interval(0.0927, 0.16) == "[0.0927, 0.1600]"


def test_a_warning_that_groups_share_is_emitted_once_per_call(bbh):
    """With over=, a fact every group shares (8 clusters in each) is one warning per call,
    attributed to the caller's line; each group's notes keep it."""
    eight = bbh[bbh.task.isin(bbh.task.unique()[:8])].assign(half=lambda d: d.item_index % 2)
    cot, direct = eight[eight.condition == "cot"], eight[eight.condition == "direct"]
    calls = {
        "cluster_ci": lambda: cs.cluster_ci(eight, "correct", by="task", over="condition"),
        "paired_delta": lambda: cs.paired_delta(
            cot, direct, "correct", by="task", on="item_id", over="half"
        ),
    }
    for name, call in calls.items():
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            result = call()
        few = [w for w in caught if issubclass(w.category, cs.FewClustersWarning)]
        assert len(few) == 1, (name, [str(w.message) for w in few])
        assert few[0].filename == __file__, name
        assert len(result.results) == 2
        for each in result.results:
            assert any(str(few[0].message) in note for note in each.notes), name


def test_every_result_writes_markdown_with_its_numbers(demo):
    mixtral = demo[demo["model"] == "Mixtral-8x7B-Instruct-v0.1"]
    one = mixtral.eval.cluster_ci("correct", by="src")
    text = one.to_markdown()
    assert text.startswith(f"**ClusterCI(correct by src; estimand=pooled, method={one.method})")
    assert f"| {one.estimate:.4f} |" in text
    assert all(f"- {note}" in text for note in one.notes)
    grouped = demo.eval.cluster_ci("correct", by="src", over="model")
    table = grouped.to_markdown()
    assert table.startswith("**ClusterCI over model")
    for model, result in grouped.items():
        row = next(line for line in table.split("\n") if line.startswith(f"| {model} |"))
        assert f"| {result.estimate:.4f} |" in row
