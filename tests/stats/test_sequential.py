"""``confidence_sequence`` (``clusterstats.stats.sequential``).

Sources of expected numbers: the core sequence on the per-cluster sums in the arrival
order (itself checked against confseq in tests/core/test_core_sequential.py), and
identities derived in the tests.
"""

from __future__ import annotations

import warnings

import matplotlib
import numpy as np
import pandas as pd
import pytest

import clusterstats as cs
from clusterstats.core.sequential import SEQUENCE_METHODS, betting_sequence

matplotlib.use("Agg")


@pytest.fixture
def cot(bbh):
    return bbh[bbh.condition == "cot"]


def test_the_sequence_is_the_cores_on_the_clusters_in_their_order_of_arrival(cot):
    arrival = cot.groupby("task")["item_index"].max()
    seq = cs.confidence_sequence(cot, "correct", by="task", order="item_index")
    expected_order = sorted(arrival.index, key=lambda task: (arrival[task], task))
    assert list(seq.clusters) == expected_order
    grouped = cot.groupby("task")["correct"].agg(["sum", "size"]).loc[expected_order]
    default = SEQUENCE_METHODS[seq.method]._asdict()
    core = betting_sequence(grouped["sum"], grouped["size"], estimand="pooled", **default)
    frame = seq.to_frame()
    assert list(frame.columns) == list(cs.ConfidenceSequence.COLUMNS)
    np.testing.assert_array_equal(frame["low"], core.low)
    np.testing.assert_array_equal(frame["high"], core.high)
    np.testing.assert_allclose(frame["estimate"], core.estimate, rtol=1e-14)
    assert frame["n_rows"].iloc[-1] == len(cot)
    assert seq.current == tuple(frame.iloc[-1][["n_clusters", "n_rows", "estimate", "low", "high"]])
    # the whole run's estimate is the pooled mean, and the sequence holds it
    assert seq.current.estimate == pytest.approx(cot["correct"].mean(), rel=1e-14)
    assert seq.current.low < seq.current.estimate < seq.current.high


def test_shuffle_draws_a_seeded_random_order(cot):
    one = cs.confidence_sequence(cot, "correct", by="task", shuffle=True, rng=3)
    again = cs.confidence_sequence(cot, "correct", by="task", shuffle=True, rng=3)
    other = cs.confidence_sequence(cot, "correct", by="task", shuffle=True, rng=4)
    assert one.clusters == again.clusters
    assert one.low == again.low
    assert one.clusters != other.clusters
    assert sorted(one.clusters) == sorted(cot["task"].unique())
    assert "shuffled (rng=3)" in repr(one)
    with pytest.raises(cs.InvalidOptionError, match="give one of them"):
        cs.confidence_sequence(cot, "correct", by="task", shuffle=True, order="item_index")


def test_one_default_order_for_every_entry_point(cot):
    """Without order=, the clusters arrive in the order of their last rows in the data, in
    confidence_sequence as in the watching gate: both read the same interval."""
    shuffled = cot.sample(frac=1.0, random_state=1)
    seq = cs.confidence_sequence(shuffled, "correct", by="task")
    last_rows = shuffled.reset_index(drop=True).groupby("task").apply(lambda g: g.index.max())
    assert list(seq.clusters) == list(last_rows.sort_values().index)
    report = cs.gate(shuffled, "correct", by="task", at_least=0.5, sequential=True)
    assert (report.gates[0].low, report.gates[0].high) == (seq.current.low, seq.current.high)
    assert "in the order of their last rows in the data" in repr(seq)


def test_the_look_that_decided_a_threshold(cot):
    seq = cs.confidence_sequence(cot, "correct", by="task", order="item_index")
    look = seq.decided_at(0.5)
    i = seq.n_clusters.index(look.n_clusters)
    assert seq.low[i] >= 0.5
    assert all(low < 0.5 for low in seq.low[:i])
    # 0.7 lies inside every interval (the last is [0.561, 0.810]); 0.9 is above one
    assert seq.decided_at(0.7) is None
    failed = seq.decided_at(0.9)
    assert failed.high < 0.9
    assert all(high >= 0.9 for high in seq.high[: seq.n_clusters.index(failed.n_clusters)])
    report = cs.gate(cot, "correct", by="task", at_least=0.5, sequential=True, order="item_index")
    assert report.gates[0].decided_at == look.n_clusters
    assert report.to_frame()["decided_at"].iloc[0] == look.n_clusters


def test_over_gives_each_groups_own_sequence(bbh):
    grouped = cs.confidence_sequence(bbh, "correct", by="task", over="condition")
    assert grouped.groups == ("cot", "direct")
    for label in grouped.groups:
        alone = cs.confidence_sequence(bbh[bbh.condition == label], "correct", by="task")
        assert grouped[label].low == alone.low
        assert grouped[label].clusters == alone.clusters
    frame = grouped.to_frame()
    assert list(frame["condition"]) == ["cot", "direct"]
    assert list(frame["low"]) == [grouped[g].current.low for g in grouped.groups]
    assert "ConfidenceSequence over condition" in repr(grouped)


def test_the_gate_takes_the_size_bound_and_the_complete_size(cot):
    fixed = cs.gate(cot, "correct", by="task", at_least=0.5, sequential=True,
                    max_cluster_size=400)  # fmt: skip
    seq = cs.confidence_sequence(cot, "correct", by="task", max_cluster_size=400)
    assert (fixed.gates[0].low, fixed.gates[0].high) == (seq.current.low, seq.current.high)
    with pytest.raises(cs.InvalidDataError, match="max_cluster_size=100"):
        cs.gate(cot, "correct", by="task", at_least=0.5, sequential=True, max_cluster_size=100)
    waiting = cs.gate(cot, "correct", by="task", at_least=0.5, sequential=True,
                      cluster_size=250)  # fmt: skip
    assert waiting.gates[0].n_clusters == int((cot.groupby("task").size() == 250).sum())
    with pytest.raises(cs.InvalidOptionError, match="go with sequential=True"):
        cs.gate(cot, "correct", by="task", at_least=0.5, max_cluster_size=400)


def test_the_sequence_is_wider_than_the_fixed_interval_looked_at_once(cot):
    """The price of looking at every cluster: at the end, the sequence is wider than
    cluster_ci's interval, which is valid for one look only."""
    seq = cs.confidence_sequence(cot, "correct", by="task", order="item_index")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", cs.ClusterStatsWarning)
        fixed = cs.cluster_ci(cot, "correct", by="task")
    assert seq.current.high - seq.current.low > fixed.high - fixed.low


def test_cluster_mean_estimand_and_a_score_with_bounds():
    rng = np.random.default_rng(0)
    sizes = rng.integers(1, 6, 80)
    frame = pd.DataFrame(
        {
            "doc": np.repeat(np.arange(80), sizes),
            "score": rng.uniform(2.0, 5.0, sizes.sum()),
        }
    )
    seq = cs.confidence_sequence(
        frame, "score", by="doc", estimand="cluster_mean", bounds=(2, 5), rng=1
    )
    means = frame.groupby("doc")["score"].mean()
    assert seq.current.estimate == pytest.approx(means.mean(), rel=1e-13)
    assert 2.0 <= seq.current.low < seq.current.high <= 5.0
    assert seq.max_cluster_size is None
    with pytest.raises(cs.InvalidOptionError, match=r"bounds=\(low, high\)"):
        cs.confidence_sequence(frame, "score", by="doc")
    with pytest.raises(cs.InvalidDataError, match="outside bounds"):
        cs.confidence_sequence(frame, "score", by="doc", bounds=(2, 4))


def test_partial_clusters_never_enter(cot):
    """A run in progress: clusters with fewer rows than a complete one are held back."""
    sizes = cot.groupby("task").size()
    full = int(sizes.max())
    complete = sizes[sizes == full].index
    seq = cs.confidence_sequence(cot, "correct", by="task", cluster_size=full, rng=0)
    assert sorted(seq.clusters) == sorted(complete)
    assert seq.n_held_back == len(sizes) - len(complete)
    assert any("not complete yet" in note for note in seq.notes)
    with pytest.raises(cs.InvalidDataError, match="more than cluster_size"):
        cs.confidence_sequence(cot, "correct", by="task", cluster_size=full - 1)


def test_bad_options_and_columns_get_clear_errors(cot):
    with pytest.raises(cs.InvalidOptionError, match="estimand"):
        cs.confidence_sequence(cot, "correct", by="task", estimand="median")
    with pytest.raises(cs.InvalidOptionError, match="order='task' must hold numbers or times"):
        cs.confidence_sequence(cot, "correct", by="task", order="task")
    with pytest.raises(cs.ColumnNotFoundError):
        cs.confidence_sequence(cot, "correct", by="task", order="finished_at")
    gaps = cot.assign(when=cot["item_index"].astype(float).where(cot["item_index"] > 3))
    with pytest.raises(cs.InvalidDataError, match=r"order='when' has \d+ missing values"):
        cs.confidence_sequence(gaps, "correct", by="task", order="when")
    with pytest.raises(cs.InvalidDataError, match=r"more than max_cluster_size=10\b"):
        cs.confidence_sequence(cot, "correct", by="task", max_cluster_size=10)
    with pytest.raises(cs.InvalidOptionError, match="bounds"):
        cs.confidence_sequence(cot, "correct", by="task", bounds=(1, 0))
    with pytest.raises(cs.InvalidOptionError, match="both the outcome and order="):
        cs.confidence_sequence(cot, "correct", by="task", order="correct")


def test_times_order_the_clusters(cot):
    start = pd.Timestamp("2026-12-01")
    timed = cot.assign(done=start + pd.to_timedelta(cot["item_index"], unit="min"))
    by_time = cs.confidence_sequence(timed, "correct", by="task", order="done")
    by_index = cs.confidence_sequence(cot, "correct", by="task", order="item_index")
    assert by_time.clusters == by_index.clusters
    assert by_time.low == by_index.low


def test_text_html_frame_metrics_and_plot(cot):
    seq = cot.eval.confidence_sequence("correct", by="task", order="item_index")
    text = repr(seq)
    assert text.startswith("ConfidenceSequence(correct by task; estimand=pooled, 95%")
    assert "after 27 completed clusters (6,511 rows)" in text
    assert "looks (10 of 27 shown)" in text
    assert "after 27 completed clusters" in seq._repr_html_()
    metrics = seq.to_metrics("run/")
    assert metrics["run/low"] == seq.current.low
    assert metrics["run/n_clusters"] == 27
    ax = seq.plot(threshold=0.5)
    assert ax.get_xlabel() == "completed clusters"
    decided = [t.get_text() for t in ax.texts if t.get_text().startswith("decided after")]
    first = next(n for n, lo in zip(seq.n_clusters, seq.low, strict=True) if lo > 0.5)
    assert decided == [f"decided after {first:,} clusters"]


def test_a_paired_sequence_is_the_sequence_of_the_per_item_differences(bbh):
    """other= gives the sequence of A - B on the items both sides have: the one-sample
    sequence of the per-item difference column, its clusters arriving with their last row on
    either side."""
    cot, direct = bbh[bbh.condition == "cot"], bbh[bbh.condition == "direct"]
    paired = cs.confidence_sequence(
        cot,
        "correct",
        "task",
        other=direct,
        on="item_id",
        order="item_index",
        labels=("cot", "direct"),
    )
    wide = cot.merge(direct, on=["item_id", "task"], suffixes=("", "_b"))
    wide = wide.assign(
        diff=wide["correct"] - wide["correct_b"],
        when=np.maximum(wide["item_index"], wide["item_index_b"]),
    )
    by_hand = cs.confidence_sequence(wide, "diff", "task", order="when", bounds=(-1, 1))
    assert paired.clusters == by_hand.clusters
    assert paired.low == by_hand.low
    assert paired.high == by_hand.high
    assert paired.bounds == (-1.0, 1.0)
    assert repr(paired).startswith("ConfidenceSequence(correct by task, cot - direct;")
    # the whole run's estimate is paired_delta's
    delta = cs.paired_delta(cot, direct, "correct", "task", on="item_id")
    assert paired.current.estimate == pytest.approx(delta.delta, rel=1e-13)
    # two outcome columns of one frame: data[other] - data[outcome], as in paired_delta
    columns = cs.confidence_sequence(
        wide, "correct_b", "task", other="correct", order="when", on="item_id"
    )
    assert columns.low == paired.low
    assert columns.high == paired.high


def test_paired_sequence_options_are_checked(bbh):
    cot, direct = bbh[bbh.condition == "cot"], bbh[bbh.condition == "direct"]
    with pytest.raises(cs.InvalidOptionError, match="go with other="):
        cs.confidence_sequence(cot, "correct", "task", on="item_id")
    scored = cot.assign(score=cot["correct"] * 2.5)
    with pytest.raises(cs.InvalidOptionError, match="give bounds="):
        cs.confidence_sequence(
            scored,
            "score",
            "task",
            other=direct.assign(score=direct["correct"] * 2.5),
            on="item_id",
        )
    with pytest.raises(cs.AlignmentError):
        cs.confidence_sequence(cot, "correct", "task", other=direct.iloc[:-5], on="item_id")
    short = cs.confidence_sequence(
        cot, "correct", "task", other=direct.iloc[:-5], on="item_id", how="inner", rng=0
    )
    assert any("how='inner'" in note for note in short.notes)


def test_arrays_give_the_frames_sequence(cot):
    """data=None with the values themselves, as cluster_ci takes them: the same numbers;
    an order needs a column, so arrays refuse it with a message that says so."""
    values, tasks = cot["correct"].to_numpy(), cot["task"].to_numpy()
    arrays = cs.confidence_sequence(None, values, tasks, rng=0)
    frame = cs.confidence_sequence(cot, "correct", "task", rng=0)
    assert arrays.clusters == frame.clusters
    assert arrays.low == frame.low
    assert arrays.high == frame.high
    with pytest.raises(cs.InvalidInputError, match="order= names a column"):
        cs.confidence_sequence(None, values, tasks, order="item_index")


def test_the_predictable_method_is_the_authors_sequence(cot):
    """``method="betting_predictable"`` is the core's predictable plug-in sequence (c = 0.5),
    the configuration checked against confseq in tests/core/test_core_sequential.py; the
    default mixture is another valid sequence, and both hold the estimate at the end."""
    grouped = cot.groupby("task")["correct"].agg(["sum", "size"])
    seq = cs.confidence_sequence(cot, "correct", by="task", method="betting_predictable")
    core = betting_sequence(grouped["sum"], grouped["size"], estimand="pooled")
    assert seq.method == "betting_predictable"
    np.testing.assert_array_equal(seq.low, core.low)
    mixture = cs.confidence_sequence(cot, "correct", by="task")
    assert mixture.method == "betting_mixture"
    assert mixture.low != seq.low
    with pytest.raises(cs.InvalidOptionError, match="method"):
        cs.confidence_sequence(cot, "correct", by="task", method="cr2")


def test_the_benchmark_target_ends_at_the_full_run_score(cot):
    """Without replacement from the known list of clusters, the last look is the exact
    full-run score (every cluster in), for both estimands."""
    for estimand, score in (
        ("pooled", cot["correct"].mean()),
        ("cluster_mean", cot.groupby("task")["correct"].mean().mean()),
    ):
        seq = cs.confidence_sequence(cot, "correct", by="task", target="benchmark",
                                     shuffle=True, estimand=estimand)  # fmt: skip
        assert seq.target == "benchmark"
        assert seq.benchmark_clusters == 27
        assert seq.current.low == pytest.approx(score, abs=1e-12)
        assert seq.current.high == pytest.approx(score, abs=1e-12)
        assert all(
            low <= score + 1e-12 <= high + 2e-12
            for low, high in zip(seq.low, seq.high, strict=True)
        )
    with pytest.raises(cs.InvalidOptionError, match="benchmark_clusters"):
        cs.confidence_sequence(cot, "correct", by="task", benchmark_clusters=30)
    with pytest.raises(cs.InvalidOptionError, match="at least as many clusters"):
        cs.confidence_sequence(cot, "correct", by="task", target="benchmark",
                               benchmark_clusters=10)  # fmt: skip
    report = cs.gate(cot, "correct", by="task", at_least=0.7, sequential=True,
                     target="benchmark")  # fmt: skip
    assert report.verdict == "pass"  # the full-run score 0.7397 is known exactly at the end


def test_the_plan_puts_watching_beside_a_fixed_gate():
    """The fixed gate's clusters are the closed form: the smallest n whose t interval's
    half-width, t_{.975, n-1} sd / sqrt(n) with sd the pilot's spread of cluster means, is the
    distance from the estimate to the threshold; watching needs more, within twice as many
    (CRUXEval problems have equal sizes)."""
    from scipy import stats as st

    crux = cs.datasets.load("cruxeval")
    pilot = crux[crux["task"] == "input_prediction"].head(2000)  # 200 problems of 10 samples
    plan = cs.sequence_plan(pilot, "correct", by="problem_id", at_least=0.25, runs=60)
    means = pilot.groupby("problem_id")["correct"].mean()
    distance = pilot["correct"].mean() - 0.25
    n = 2
    while st.t.ppf(0.975, n - 1) * means.std(ddof=1) / np.sqrt(n) > distance:
        n += 1
    assert plan.fixed_clusters == n
    assert plan.estimate == pytest.approx(pilot["correct"].mean())
    assert plan.fixed_clusters < plan.watching_clusters <= 2 * plan.fixed_clusters
    assert plan.decided_share > 0.5
    assert plan.recommendation.startswith("watch:")
    assert list(plan.to_frame().columns) == list(cs.SequencePlan.columns)


def test_the_plan_says_when_watching_cannot_decide(mmlu):
    """MMLU-Pro's sources hold 17 to 1,003 questions: the pooled sequence bets with the
    largest, so it cannot decide within the benchmark's 91 sources at 0.55; the plan says
    so, and offers the fixed gate and the mean of cluster means, which decides in far fewer."""
    llama = mmlu[mmlu["model"] == "Meta-Llama-3.1-70B-Instruct"]
    plan = cs.sequence_plan(llama, "correct", by="src", at_least=0.55, budget=91, runs=60)
    assert np.isinf(plan.watching_clusters)
    assert plan.horizon == 91
    assert "run the fixed gate once" in plan.recommendation
    assert "cluster_mean" in plan.recommendation
    assert plan.cluster_mean_clusters < 91
    assert plan.fixed_clusters_80 < 91
    with pytest.raises(cs.InvalidOptionError, match="the gate's question"):
        cs.sequence_plan(llama, "correct", by="src")
    with pytest.raises(cs.InvalidOptionError, match="outside bounds"):
        cs.sequence_plan(llama, "correct", by="src", at_least=1.5)


def test_an_inconclusive_watching_gate_reads_the_plan(cot):
    report = cs.gate(cot, "correct", by="task", at_least=0.7, sequential=True)
    gate = report.gates[0]
    assert gate.verdict == "inconclusive"
    plan = cs.sequence_plan(cot, "correct", by="task", at_least=0.7, runs=100)
    assert gate.clusters_needed == plan.watching_clusters
    assert plan.recommendation in " ".join(gate.notes)


def test_uneven_sizes_get_a_plain_answer_and_the_benchmark_target_decides(mmlu):
    """MMLU-Pro, Llama-3.1-70B, all 91 sources (17 to 1,003 questions), a gate at 0.55 with
    the fixed interval at [0.5725, 0.6816]: watching the population's pooled rate cannot
    decide within these 91 sources, and the gate says what to do instead; asked about this
    benchmark's own score, the sequence ends at the exact score and passes."""
    llama = mmlu[mmlu["model"] == "Meta-Llama-3.1-70B-Instruct"]
    population = cs.gate(llama, "correct", by="src", at_least=0.55, sequential=True,
                         max_cluster_size=1003, budget=91)  # fmt: skip
    assert population.verdict == "inconclusive"
    note = " ".join(population.gates[0].notes)
    assert "run the fixed gate once" in note
    assert "cluster_mean" in note
    benchmark = cs.gate(llama, "correct", by="src", at_least=0.55, sequential=True,
                        target="benchmark")  # fmt: skip
    assert benchmark.verdict == "pass"
    assert benchmark.gates[0].low == pytest.approx(llama["correct"].mean())
    assert benchmark.gates[0].decided_at <= 91
