"""The plots, rendered with matplotlib's Agg backend: what is drawn (titles, axis labels,
the order of the rows, the lines and marks), not only that a PNG comes out."""

from __future__ import annotations

import io
import math

import pytest

import clusterstats as cs
from clusterstats._plotting import TITLE_LENGTH, TITLE_LINES, short_title

matplotlib = pytest.importorskip("matplotlib")
matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

LLAMA, GEMINI = "Meta-Llama-3.1-70B-Instruct", "gemini-1.5-flash-002"


@pytest.fixture(autouse=True)
def _close_figures():
    yield
    plt.close("all")


@pytest.fixture(scope="module")
def mmlu():
    return cs.load_demo_data()


def _labels_top_down(ax) -> list[str]:
    return [t.get_text() for t in ax.get_yticklabels()][::-1]


def _tick_texts(ax) -> list[str]:
    ax.figure.canvas.draw()
    return [t.get_text() for t in ax.get_xticklabels() if t.get_text()]


def _texts(ax) -> list[str]:
    return [t.get_text() for t in ax.texts]


def _png(ax) -> bytes:
    buffer = io.BytesIO()
    ax.figure.savefig(buffer, format="png", dpi=50)
    return buffer.getvalue()


def test_a_rate_is_drawn_in_percent_with_its_value(mmlu):
    one = mmlu[mmlu["model"] == GEMINI]
    ci = one.eval.cluster_ci("correct", by="src")
    ax = ci.plot(values=True)
    assert ax.get_title() == "correct, clustered by src"
    assert ax.get_xlabel() == "correct: pooled mean, 95% CI"
    assert all(text.endswith("%") for text in _tick_texts(ax))
    assert _texts(ax) == [f"{100 * ci.estimate:.1f}%"]
    clustered = [line for line in ax.lines if line.get_linewidth() == 3 and len(line.get_xdata())]
    assert list(clustered[0].get_xdata()) == [ci.low, ci.high]
    naive = [line for line in ax.lines if line.get_linewidth() == 1.2 and len(line.get_xdata())]
    assert list(naive[0].get_xdata()) == [ci.naive_low, ci.naive_high]
    assert _png(ax).startswith(b"\x89PNG")
    # a score outside [0, 1] keeps its units, with thousands separators
    scores = one.assign(tokens=one["correct"] * 12_000 + 1_000)
    ax = scores.eval.cluster_ci("tokens", by="src").plot()
    assert not any(text.endswith("%") for text in _tick_texts(ax))
    assert any("," in text for text in _tick_texts(ax))
    assert cs.cluster_ci(one, "correct", by="src").plot(percent=False) is not None


def test_grouped_rows_sorted_by_estimate_or_kept_in_label_order(mmlu):
    grouped = mmlu.eval.cluster_ci("correct", by="src", over="model")
    by_estimate = sorted(grouped.items(), key=lambda kv: -kv[1].estimate)
    ax = grouped.plot()
    assert _labels_top_down(ax) == [key for key, _ in by_estimate]
    assert ax.get_title() == "correct by model, clustered by src"
    ax = grouped.plot(order="label")
    assert _labels_top_down(ax) == [key for key, _ in grouped.items()]
    with pytest.raises(cs.InvalidOptionError, match="order must be"):
        grouped.plot(order="size")
    report = cs.report(mmlu, "correct", by="src", over="model")
    assert _labels_top_down(report.plot()) == [key for key, _ in by_estimate]
    assert report.plot().get_title() == "correct by model, clustered by src"


def test_the_paired_difference_against_zero_and_a_margin(mmlu):
    a, b = mmlu[mmlu["model"] == LLAMA], mmlu[mmlu["model"] == GEMINI]
    d = cs.paired_delta(a, b, "correct", by="src", on="question_id")
    ax = d.plot(margin=0.02)
    assert [t.get_text() for t in ax.get_yticklabels()] == [f"{LLAMA} − {GEMINI}"]
    verticals = {
        round(float(xs[0]), 6): line.get_linestyle()
        for line in ax.lines
        if len(xs := list(line.get_xdata())) == 2 and xs[0] == xs[1]
    }
    assert verticals == {0.0: "-", -0.02: "--", 0.02: "--"}
    clustered = [line for line in ax.lines if line.get_linewidth() == 3 and len(line.get_xdata())]
    assert list(clustered[0].get_xdata()) == [d.low, d.high]
    assert _texts(ax) == [f"{100 * d.delta:+.1f} pts"]
    assert all(text.endswith("pts") for text in _tick_texts(ax))
    legend = [t.get_text() for t in ax.get_legend().get_texts()]
    assert "margin ±2.0 pts" in legend
    assert "naive (items independent)" in legend
    assert (
        d.plot()
        .get_title()
        .replace("\n", " ")
        .startswith(f"correct: {LLAMA} − {GEMINI}, paired on items")
    )
    with pytest.raises(cs.InvalidOptionError, match="margin must be"):
        d.plot(margin=-1)


def test_the_leaderboard_and_the_pairs_panel(mmlu):
    c = cs.compare(mmlu, "correct", by="src", model="model", on="question_id")
    ax = c.plot()
    board = c.leaderboard()
    assert _labels_top_down(ax) == list(board["model"])
    ranks = _texts(ax)
    assert len(ranks) == 4
    assert all(text.startswith("rank ") for text in ranks)
    assert ax.get_title() == "correct: 4 models, clustered by src"
    # each model's naive interval (rows as independent) is drawn, thin, beside its own
    drawn = {tuple(line.get_xdata()) for line in ax.lines if line.get_linewidth() < 2}
    naive = zip(board["naive_low"], board["naive_high"], strict=True)
    assert {(low, high) for low, high in naive} <= drawn
    assert "naive (rows independent)" in [t.get_text() for t in ax.get_legend().get_texts()]
    ax = c.plot(kind="pairs", values=True)
    pairs = c.pairs().sort_values("delta", ascending=False)
    named = zip(pairs.model_a, pairs.model_b, strict=True)
    assert _labels_top_down(ax) == [f"{a} − {b}" for a, b in named]
    notes = [t for t in _texts(ax) if t.startswith("p ")]
    assert len(notes) == 6
    assert all("(holm)" in t for t in notes)
    values = [t for t in _texts(ax) if t.endswith("pts")]
    assert len(values) == 6
    zero = [line for line in ax.lines if list(line.get_xdata()) == [0.0, 0.0]]
    assert zero
    with pytest.raises(cs.InvalidOptionError, match="kind"):
        c.plot(kind="ranks")


def test_the_plan_curve_marks_today_the_target_and_the_clusters_needed(mmlu):
    one = mmlu[mmlu["model"] == GEMINI]
    plan = cs.pilot_plan(one, "correct", by="src", target_half_width=0.03)
    ax = plan.plot()
    assert ax.get_xscale() == "log"
    assert ax.get_xlabel() == "number of clusters (K)"
    curve = ax.lines[0]
    # the curve passes through today's half-width and reaches the target at the needed K
    projected = dict(zip(curve.get_xdata(), curve.get_ydata(), strict=True))
    assert projected[plan.n_clusters] == pytest.approx(plan.half_width)
    assert projected[plan.clusters_needed] == pytest.approx(0.03, rel=1e-3)
    target = [line for line in ax.lines if line.get_linestyle() == "--"]
    assert list(target[0].get_ydata()) == [0.03, 0.03]
    needed = math.ceil(plan.clusters_needed)
    assert f"{needed:,} clusters" in _texts(ax)
    assert any(t.startswith("today: 91 clusters") for t in _texts(ax))
    assert ax.get_title() == f"±0.0300 needs {needed:,} clusters of 132 rows (today 91)"
    # without a target: the curve and today's design only
    ax = cs.plan(n_clusters=4_000, cluster_size=10, icc=0.1, proportion=0.5).plot()
    assert any(t.startswith("today: 4,000 clusters") for t in _texts(ax))
    assert not [line for line in ax.lines if line.get_linestyle() == "--"]
    with pytest.raises(cs.InvalidOptionError, match="kind"):
        plan.plot(kind="power")


def test_titles_wrap_then_shorten():
    assert short_title("correct by model") == "correct by model"
    # a long title keeps every word, on lines no longer than TITLE_LENGTH
    words = " ".join(f"label{i:02d}" for i in range(15))  # 134 characters
    wrapped = short_title(words)
    assert wrapped.replace("\n", " ") == words
    assert 1 < len(wrapped.split("\n")) <= TITLE_LINES
    assert all(len(line) <= TITLE_LENGTH for line in wrapped.split("\n"))
    # only past TITLE_LINES lines does it end in an ellipsis
    long = short_title("x" * 500)
    assert len(long.split("\n")) == TITLE_LINES
    assert long.endswith("…")
    assert all(len(line) <= TITLE_LENGTH for line in long.split("\n"))


def test_a_long_paired_title_keeps_the_labels(mmlu):
    mixtral = mmlu[mmlu.model == "Mixtral-8x7B-Instruct-v0.1"]
    flash = mmlu[mmlu.model == "gemini-1.5-flash-002"]
    labels = ("Mixtral-8x7B-Instruct-v0.1 (temperature 0)", "gemini-1.5-flash-002 (default)")
    ax = cs.paired_delta(
        mixtral, flash, "correct", by="src", on="question_id", labels=labels
    ).plot()
    title = ax.get_title().replace("\n", " ")
    assert labels[0] in title
    assert labels[1] in title
    assert "clustered by src" in title


def test_a_power_plan_marks_the_clusters_it_recommends(mmlu):
    a, b = mmlu[mmlu["model"] == LLAMA], mmlu[mmlu["model"] == GEMINI]
    plan = a.eval.plan("correct", by="src", other=b, on="question_id", effect=0.02)
    needed = math.ceil(plan.clusters_for_power)
    ax = plan.plot()
    what = f"80% power to detect {plan.effect:.4f}"
    assert ax.get_title().replace("\n", " ").startswith(f"{what} needs {needed:,} clusters")
    legend = [t.get_text() for t in ax.get_legend().get_texts()]
    assert f"{needed:,} clusters: {what}" in legend
    assert any(t.get_text().startswith(f"{needed:,} clusters, ±") for t in ax.texts)
    assert needed in {round(line.get_xdata()[0]) for line in ax.lines if len(line.get_xdata())}
