"""``judged_ci``: a judge on every row, human labels on a few, clustered rows.

The exact agreements are closed-form reductions of the two-phase estimator: weight 0 is the
clustered (CR1) interval of the labelled rows alone, every row labelled is that of the human
labels for any weight (Särndal, Swensson & Wretman 1992, ch. 9: with every row in phase two
the regression estimator is the phase-two mean). The peers' values (ppi_py, R survey, glide)
are in ``tests/conformance/test_judged_references.py``.
"""

from __future__ import annotations

import math
import warnings
from typing import Any

import numpy as np
import pandas as pd
import pytest

import clusterstats as cs
from clusterstats import adapters
from clusterstats.core import judged as core
from clusterstats.core.bootstrap import CHUNK_ELEMENTS, studentized_interval
from clusterstats.core.grouping import cluster_sums

TOL = 1e-12


def _run(seed: int = 11, n_docs: int = 40) -> pd.DataFrame:
    """Answers nested in items nested in documents; a judge with a bias that varies by
    document; human labels on every row (``human_full``), to be masked by each test."""
    rng = np.random.default_rng(seed)
    rows = []
    for doc in range(n_docs):
        level, lean = rng.normal(0, 0.6), rng.normal(0.4, 0.3)
        for item in range(int(rng.integers(1, 5))):
            for run in range(int(rng.integers(1, 4))):
                # ratings on a 1-5 scale, as human and judge ratings are
                human = min(max(3 + level + rng.normal(0, 0.8), 1.0), 5.0)
                judge = min(max(0.7 * human + 0.9 + lean + rng.normal(0, 0.5), 1.0), 5.0)
                rows.append((f"doc{doc:02d}", f"d{doc:02d}-{item}", run, human, judge))
    frame = pd.DataFrame(rows, columns=["doc", "item", "run", "human_full", "judge"])
    frame["cat"] = "c" + (frame["doc"].str[-2:].astype(int) % 3).astype(str)
    return frame


def _whole_docs(frame: pd.DataFrame, n: int, seed: int = 1) -> pd.DataFrame:
    docs = np.random.default_rng(seed).choice(frame["doc"].unique(), n, replace=False)
    return frame.assign(human=frame["human_full"].where(frame["doc"].isin(docs)))


def _rows_inside(frame: pd.DataFrame, seed: int = 2) -> pd.DataFrame:
    """Up to two rows labelled at random in every document."""
    rng = np.random.default_rng(seed)
    keep = frame.groupby("doc", group_keys=False)["doc"].apply(
        lambda g: pd.Series(rng.permutation(len(g)) < 2, index=g.index)
    )
    return frame.assign(human=frame["human_full"].where(keep))


def _quiet(call: Any) -> Any:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", cs.FewClustersWarning)
        return call()


def _close(a: float, b: float) -> bool:
    return math.isclose(a, b, rel_tol=TOL, abs_tol=1e-14)


@pytest.mark.parametrize("method", ["cr2", "cr1"])
@pytest.mark.parametrize("estimand", ["pooled", "cluster_mean"])
def test_weight_zero_is_the_clustered_interval_of_the_labelled_rows(estimand, method) -> None:
    data = _whole_docs(_run(), 14)
    res = _quiet(
        lambda: cs.judged_ci(
            data, "human", "doc", judge="judge", estimand=estimand, weight=0, method=method
        )
    )
    labelled = data.dropna(subset=["human"])
    ref = _quiet(lambda: cs.cluster_ci(labelled, "human", "doc", estimand=estimand, method=method))
    assert _close(res.estimate, ref.estimate)
    assert _close(res.low, ref.low)
    assert _close(res.high, ref.high)
    assert _close(res.df, ref.df)
    # and the human-only interval beside every result is the same one
    tuned = _quiet(
        lambda: cs.judged_ci(data, "human", "doc", judge="judge", estimand=estimand, method=method)
    )
    assert _close(tuned.human_low, ref.low)
    assert _close(tuned.human_high, ref.high)


@pytest.mark.parametrize("weight", [0.0, 0.6])
def test_the_benchmark_takes_the_df_of_uneven_sizes(weight: float) -> None:
    """At the benchmark target the labelled clusters carry the whole variance: the df is
    ``cluster_ci(method="cr2_ik")``'s of the labelled rows' residuals ``y - weight * f``
    (at weight 0, of the labels themselves), below CR2's own on these uneven documents."""
    data = _whole_docs(_run(), 14)
    labelled = data.dropna(subset=["human"]).assign(
        residual=lambda d: d["human"] - weight * d["judge"]
    )
    common = {"judge": "judge", "weight": weight}
    res = _quiet(lambda: cs.judged_ci(data, "human", "doc", **common, target="benchmark"))
    wide = _quiet(lambda: cs.cluster_ci(labelled, "residual", "doc", method="cr2_ik"))
    own = _quiet(lambda: cs.cluster_ci(labelled, "residual", "doc", method="cr2"))
    assert wide.df < own.df - 0.5
    assert _close(res.df, wide.df)
    population = _quiet(lambda: cs.judged_ci(data, "human", "doc", **common))
    assert _close(population.df, own.df)


def test_the_benchmark_df_of_equal_sizes_is_the_labelled_clusters_less_one() -> None:
    frame = _run()
    first = frame.groupby("doc").head(2)
    equal = first[first.groupby("doc")["doc"].transform("size") == 2]
    data = _whole_docs(equal, 12)
    res = _quiet(lambda: cs.judged_ci(data, "human", "doc", judge="judge", target="benchmark"))
    assert _close(res.df, 11.0)


def test_weight_zero_with_rows_inside_clusters_is_the_weighted_interval() -> None:
    """Rows labelled inside every document at unequal rates: the labels count by their
    inverse inclusion probability, n_c / r_c (the Hájek mean)."""
    data = _rows_inside(_run())
    res = cs.judged_ci(data, "human", "doc", judge="judge", weight=0, method="cr1")
    labelled = data.dropna(subset=["human"])
    share = labelled.groupby("doc").size() / data.groupby("doc").size()
    labelled = labelled.assign(w=1 / labelled["doc"].map(share))
    ref = cs.cluster_ci(labelled, "human", "doc", weights="w", method="cr1")
    assert res.labelling == "rows"
    assert _close(res.estimate, ref.estimate)
    assert _close(res.low, ref.low)
    assert _close(res.high, ref.high)


@pytest.mark.parametrize("method", ["cr2", "cr1"])
@pytest.mark.parametrize("estimand", ["pooled", "cluster_mean"])
@pytest.mark.parametrize("weight", [0.3, 1.0, 1.7, "tuned", "cross-fitted", "auto"])
def test_every_row_labelled_is_the_clustered_interval_of_the_labels(
    estimand, weight, method
) -> None:
    data = _run().assign(human=lambda d: d["human_full"])
    res = cs.judged_ci(
        data, "human", "doc", judge="judge", estimand=estimand, weight=weight, method=method
    )
    ref = cs.cluster_ci(data, "human", "doc", estimand=estimand, method=method)
    assert res.labelling == "every row"
    assert _close(res.df, ref.df)
    assert _close(res.estimate, ref.estimate)
    assert _close(res.low, ref.low)
    assert _close(res.high, ref.high)
    assert any("every row holds a human label" in note for note in res.notes)


def test_the_tuned_weight_minimises_the_variance() -> None:
    data = _whole_docs(_run(), 24)
    res = _quiet(lambda: cs.judged_ci(data, "human", "doc", judge="judge", weight="tuned"))
    assert 0 < res.weight < 1
    for step in (-0.05, 0.05):
        nearby = _quiet(
            lambda step=step: cs.judged_ci(
                data, "human", "doc", judge="judge", weight=res.weight + step
            )
        )
        assert nearby.se > res.se


def test_the_judge_narrows_the_interval_and_its_bias_is_estimated() -> None:
    data = _whole_docs(_run(n_docs=120), 40)
    res = _quiet(lambda: cs.judged_ci(data, "human", "doc", judge="judge"))
    assert res.high - res.low < res.human_high - res.human_low
    assert res.effective_labels > res.n_labelled
    # judge minus human on the labelled rows, with its interval: the generator's lean is 0.4
    # plus 0.9 - 0.3 * 3, a bias near 0.4
    labelled = data.dropna(subset=["human"])
    assert _close(res.judge_bias, float((labelled["judge"] - labelled["human"]).mean()))
    assert res.bias_low < 0.4 < res.bias_high
    # the judge alone: its own mean over every row
    assert _close(res.judge_estimate, float(data["judge"].mean()))


def test_the_benchmark_target_is_narrower_than_the_population() -> None:
    data = _rows_inside(_run())
    frame = data.assign(human=data["human"])
    pop = cs.judged_ci(frame, "human", "doc", judge="judge", weight=0.5)
    bench = cs.judged_ci(frame, "human", "doc", judge="judge", weight=0.5, target="benchmark")
    assert _close(pop.estimate, bench.estimate)
    assert bench.se < pop.se


def test_strata_expand_the_labels_stratum_by_stratum() -> None:
    """Labelling strata with different labelled shares: with weight 0, the estimate is the
    strata's labelled means weighted by their row counts."""
    frame = _run(n_docs=60)
    rng = np.random.default_rng(5)
    docs = frame.groupby("doc")["cat"].first()
    chosen = [
        d for cat, n in (("c0", 3), ("c1", 6), ("c2", 9))
        for d in rng.choice(docs[docs == cat].index, n, replace=False)
    ]  # fmt: skip
    data = frame.assign(human=frame["human_full"].where(frame["doc"].isin(chosen)))
    res = _quiet(lambda: cs.judged_ci(data, "human", "doc", judge="judge", strata="cat", weight=0))
    per = data.groupby("cat").apply(
        lambda g: pd.Series({"rows": len(g), "mean": g["human"].mean()}), include_groups=False
    )
    expected = float((per["rows"] * per["mean"]).sum() / per["rows"].sum())
    assert _close(res.estimate, expected)


def test_stated_inclusion_probabilities() -> None:
    """Rows labelled independently with stated probabilities: weight 0 is the Hájek mean of
    the labels weighted by the inverse probabilities."""
    frame = _run()
    rng = np.random.default_rng(3)
    p = np.where(frame["item"].str.endswith("0"), 0.6, 0.2)
    labelled = rng.random(len(frame)) < p
    data = frame.assign(human=frame["human_full"].where(labelled), p=p)
    res = _quiet(lambda: cs.judged_ci(data, "human", "doc", judge="judge", inclusion="p", weight=0))
    kept = data[labelled]
    assert res.labelling == "stated"
    assert _close(res.estimate, float(np.average(kept["human"], weights=1 / kept["p"])))


# --- a Dataset's cases (the backends' parity is in tests/conformance/test_parity.py)


def test_a_dataset_defaults_to_its_cases_as_clusters() -> None:
    data = _whole_docs(_run(), 18)
    dataset = cs.to_case_rerun(
        data[["item", "run", "human", "judge"]],
        case="item",
        rerun="run",
        outcome=["human", "judge"],
    )
    res = _quiet(lambda: dataset.eval.judged_ci("human", judge="judge"))
    ref = _quiet(lambda: cs.judged_ci(data, "human", "item", judge="judge"))
    assert _close(res.estimate, ref.estimate)
    assert _close(res.se, ref.se)
    assert res.by == ("case",)


# --- bad input: a clear error or a documented result


def test_no_label_is_an_error_that_points_at_the_judge_alone() -> None:
    data = _run().assign(human=np.nan)
    with pytest.raises(cs.InvalidDataError, match="no row of 'human' holds a human label"):
        cs.judged_ci(data, "human", "doc", judge="judge")


def test_one_labelled_cluster_is_an_error() -> None:
    data = _whole_docs(_run(), 1)
    with pytest.raises(cs.TooFewClustersError, match="1 of 40 clusters hold a human label"):
        cs.judged_ci(data, "human", "doc", judge="judge")


def test_a_stratum_without_two_labelled_clusters_is_named() -> None:
    frame = _run()
    c0 = frame.loc[frame["cat"] == "c0", "doc"].unique()[:1]
    others = frame.loc[frame["cat"] != "c0", "doc"].unique()[:8]
    data = frame.assign(human=frame["human_full"].where(frame["doc"].isin([*c0, *others])))
    with pytest.raises(cs.TooFewClustersError, match="in stratum 'c0' of 'cat'"):
        _quiet(lambda: cs.judged_ci(data, "human", "doc", judge="judge", strata="cat"))


@pytest.mark.parametrize("labelled", [True, False])
def test_a_missing_judge_score_is_an_error_naming_the_rows(labelled: bool) -> None:
    data = _whole_docs(_run(), 10)
    row = data.index[data["human"].notna()][0] if labelled else data.index[data["human"].isna()][0]
    data.loc[row, "judge"] = np.nan
    with pytest.raises(
        cs.InvalidDataError, match=rf"judge column 'judge' is missing on 1 rows .*{row}"
    ):
        cs.judged_ci(data, "human", "doc", judge="judge")


@pytest.mark.parametrize("bad", [0.0, 1.5, -0.2, np.nan])
def test_inclusion_probabilities_outside_zero_one_are_refused(bad: float) -> None:
    data = _whole_docs(_run(), 10).assign(p=0.25)
    data.loc[data["human"].notna().idxmax(), "p"] = bad
    with pytest.raises(cs.InvalidDataError, match="inclusion column 'p'"):
        cs.judged_ci(data, "human", "doc", judge="judge", inclusion="p")


def test_labels_outside_the_judges_scale_warn() -> None:
    data = _whole_docs(_run(), 24)
    data["judge"] = (data["judge"] - data["judge"].min()) / (
        data["judge"].max() - data["judge"].min()
    )
    with pytest.warns(cs.JudgeScaleWarning, match="outside the judge's"):
        res = cs.judged_ci(data, "human", "doc", judge="judge")
    assert any("outside the judge's" in note for note in res.notes)


def test_few_labelled_clusters_warn_and_say_so() -> None:
    data = _whole_docs(_run(), 8)
    with pytest.warns(cs.FewClustersWarning, match="only 8 clusters hold human labels"):
        res = cs.judged_ci(data, "human", "doc", judge="judge")
    assert res.weight_method == "cross-fitted"


@pytest.mark.parametrize(
    ("options", "match"),
    [
        ({"weight": "best"}, "weight must be one of"),
        ({"weight": "0.5"}, "weight must be one of"),
        ({"weight": math.inf}, "weight must be a finite number"),
        ({"weight": True}, "weight must be"),
        ({"target": "run"}, "target must be one of"),
        ({"method": "jackknife"}, "method must be one of"),
        ({"method": "glide", "target": "benchmark"}, "target='benchmark' needs"),
        ({"method": "ppi_py"}, "pass estimand='cluster_mean'"),
        ({"method": "glide", "strata": "cat"}, "takes no inclusion= or strata="),
    ],
)
def test_bad_options_are_named(options: dict, match: str) -> None:
    data = _whole_docs(_run(), 20)
    with pytest.raises(cs.InvalidOptionError, match=match):
        cs.judged_ci(data, "human", "doc", judge="judge", **options)


def test_the_peers_methods_need_unlabelled_clusters() -> None:
    data = _rows_inside(_run())
    with pytest.raises(cs.InvalidOptionError, match="every cluster holds labels"):
        cs.judged_ci(data, "human", "doc", judge="judge", method="glide", estimand="cluster_mean")


def test_benchmark_target_needs_two_labels_in_partly_labelled_clusters() -> None:
    frame = _run()
    first = frame.groupby("doc").cumcount() == 0
    data = frame.assign(human=frame["human_full"].where(first))
    with pytest.raises(cs.InvalidDataError, match="hold one human label among several rows"):
        cs.judged_ci(data, "human", "doc", judge="judge", target="benchmark")


def test_the_judge_column_is_required_and_checked() -> None:
    data = _whole_docs(_run(), 20)
    with pytest.raises(TypeError):
        cs.judged_ci(data, "human", "doc")  # type: ignore[call-arg]
    with pytest.raises(cs.ColumnNotFoundError):
        cs.judged_ci(data, "human", "doc", judge="nope")
    with pytest.raises(cs.InvalidOptionError, match="both the outcome and judge="):
        cs.judged_ci(data, "human", "doc", judge="human")


def test_the_callers_frame_is_not_changed() -> None:
    data = _whole_docs(_run(), 20)
    before = data.copy()
    _quiet(lambda: cs.judged_ci(data, "human", "doc", judge="judge", strata="cat"))
    pd.testing.assert_frame_equal(data, before)


def test_the_result_prints_and_tabulates() -> None:
    data = _whole_docs(_run(), 24)
    res = cs.judged_ci(data, "human", "doc", judge="judge")
    text = str(res)
    assert text.startswith("JudgedCI(human by doc, judged by judge;")
    for part in ("humans alone", "judge alone", "judge bias"):
        assert part in text
    assert list(res.to_frame().columns) == list(res.columns)
    assert "judge weight" in res._repr_html_()


def test_core_labelling_kinds() -> None:
    def sums(rows: list[int], labelled: list[int]) -> core.JudgedSums:
        zeros = np.zeros(len(rows))
        return core.JudgedSums(
            rows=np.array(rows, float), judge_total=zeros, labelled=np.array(labelled, float),
            weight=zeros, human=zeros, judge=zeros, human_sq=zeros, judge_sq=zeros,
            cross=zeros, strata=np.zeros(len(rows), np.intp),
        )  # fmt: skip

    assert core.labelling_of(sums([3, 2, 4], [3, 0, 4])).kind == "clusters"
    assert core.labelling_of(sums([3, 2, 4], [1, 1, 2])).kind == "rows"
    assert core.labelling_of(sums([3, 2, 4], [1, 0, 4])).kind == "clusters, then rows"
    assert core.labelling_of(sums([3, 2, 4], [3, 2, 4])).kind == "every row"


# --- labels in a table of their own, matched on a key


def _split(frame: pd.DataFrame) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The judged rows without labels, and a labels table keyed by (item, run)."""
    judged = frame.drop(columns=["human", "human_full"])
    labels = frame.loc[frame["human"].notna(), ["item", "run", "human"]].sample(
        frac=1, random_state=0
    )  # in another order: matching is by key, never by position
    return judged, labels


def test_labels_from_a_table_matched_on_a_key_give_the_same_result() -> None:
    data = _whole_docs(_run(), 20)
    judged, labels = _split(data)
    res = cs.judged_ci(judged, "human", "doc", judge="judge", labels=labels, on=["item", "run"])
    ref = cs.judged_ci(data, "human", "doc", judge="judge")
    assert res == ref


def test_a_label_for_a_row_the_judge_did_not_score_is_refused() -> None:
    judged, labels = _split(_whole_docs(_run(), 20))
    stray = pd.DataFrame({"item": ["nope"], "run": [0], "human": [3.0]})
    with pytest.raises(cs.AlignmentError, match=r"1 of the \d+ labels name no judged row"):
        cs.judged_ci(
            judged, "human", "doc", judge="judge", labels=pd.concat([labels, stray]),
            on=["item", "run"],
        )  # fmt: skip


@pytest.mark.parametrize("side", ["judged rows", "labels"])
def test_a_repeated_key_is_refused(side: str) -> None:
    judged, labels = _split(_whole_docs(_run(), 20))
    if side == "labels":
        labels = pd.concat([labels, labels.iloc[:1]])
    else:
        judged = pd.concat([judged, judged.iloc[:1]])
    with pytest.raises(cs.AlignmentError, match=f"the {side} repeat the key"):
        cs.judged_ci(judged, "human", "doc", judge="judge", labels=labels, on=["item", "run"])


def test_labels_need_a_key() -> None:
    judged, labels = _split(_whole_docs(_run(), 20))
    with pytest.raises(cs.InvalidOptionError, match="pass on="):
        cs.judged_ci(judged, "human", "doc", judge="judge", labels=labels)
    with pytest.raises(cs.InvalidOptionError, match="pass labels= too"):
        cs.judged_ci(judged, "human", "doc", judge="judge", on="item")


# --- two runs judged on the same items: the paired difference


def _two_runs(seed: int = 4) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Model A and model B answer the same items; the judge is lenient on some documents
    for both models; humans labelled both answers of the items of 16 documents."""
    frame = _run(seed)
    rng = np.random.default_rng(seed)
    other = frame.assign(
        human_full=(frame["human_full"] - 0.3 + rng.normal(0, 0.5, len(frame))).clip(1, 5),
    )
    other = other.assign(judge=(other["judge"] - 0.2 + rng.normal(0, 0.3, len(frame))).clip(1, 5))
    docs = rng.choice(frame["doc"].unique(), 16, replace=False)
    a, b = (
        side.assign(human=side["human_full"].where(side["doc"].isin(docs)), model=name)
        for side, name in ((frame, "A"), (other, "B"))
    )
    return a, b


def test_judged_delta_is_judged_ci_of_the_differences() -> None:
    a, b = _two_runs()
    res = _quiet(lambda: cs.judged_delta(a, b, "human", "doc", judge="judge", on=["item", "run"]))
    difference = a.assign(human=a["human"] - b["human"], judge=a["judge"] - b["judge"])
    with warnings.catch_warnings():  # the differences run on a scale of their own
        warnings.simplefilter("ignore", cs.JudgeScaleWarning)
        ref = _quiet(lambda: cs.judged_ci(difference, "human", "doc", judge="judge"))
    assert res.sides == ("A", "B")
    for field in ("estimate", "low", "high", "weight", "human_low", "judge_bias"):
        assert _close(getattr(res, field), getattr(ref, field)), field
    assert str(res).startswith("JudgedCI(human by doc: A - B, judged by judge;")


def test_judged_delta_matches_by_key_not_position() -> None:
    a, b = _two_runs()
    shuffled = b.sample(frac=1, random_state=3)
    on = ["item", "run"]
    assert _quiet(lambda: cs.judged_delta(a, shuffled, "human", "doc", judge="judge", on=on)) == (
        _quiet(lambda: cs.judged_delta(a, b, "human", "doc", judge="judge", on=on))
    )


def test_judged_delta_strict_and_inner() -> None:
    a, b = _two_runs()
    short = b.iloc[5:]
    with pytest.raises(cs.AlignmentError, match="5 items are judged in one run only"):
        cs.judged_delta(a, short, "human", "doc", judge="judge", on=["item", "run"])
    res = _quiet(
        lambda: cs.judged_delta(
            a, short, "human", "doc", judge="judge", on=["item", "run"], how="inner"
        )
    )
    assert res.n_rows == len(a) - 5


def test_judged_delta_says_when_a_label_is_on_one_side_only() -> None:
    a, b = _two_runs()
    b = b.assign(human=b["human"].where(b.index % 7 != 0))
    res = _quiet(lambda: cs.judged_delta(a, b, "human", "doc", judge="judge", on=["item", "run"]))
    lost = int((a["human"].notna() & b["human"].isna()).sum())
    assert lost > 0
    assert any(f"{lost} items carry a human label in one run only" in n for n in res.notes)


def test_judged_delta_refuses_a_dataset_and_repeated_keys() -> None:
    a, b = _two_runs()
    with pytest.raises(cs.AlignmentError, match="the second run repeats the key"):
        cs.judged_delta(
            a, pd.concat([b, b.iloc[:1]]), "human", "doc", judge="judge", on=["item", "run"]
        )
    dataset = cs.to_case_rerun(a, case="item", rerun="run", outcome=["human", "judge"])
    with pytest.raises(cs.InvalidInputError, match="judged_delta matches two tables"):
        cs.judged_delta(dataset, dataset, "human", judge="judge", on="item")
    with pytest.raises(cs.InvalidOptionError, match="how must be one of"):
        cs.judged_delta(a, b, "human", "doc", judge="judge", on="item", how="outer")


def test_two_labelled_clusters_cross_fit_to_the_labels_alone() -> None:
    """Leaving one of 2 labelled clusters out leaves nothing to tune a weight on: the
    cross-fitted weight is 0 and the interval is the labels' own."""
    data = _whole_docs(_run(), 2)
    res = _quiet(lambda: cs.judged_ci(data, "human", "doc", judge="judge"))
    assert res.weight_method == "cross-fitted"
    assert res.weight == 0
    assert _close(res.low, res.human_low)
    assert any("their judge weight is 0" in note for note in res.notes)


def test_the_peers_weight_is_reported_as_tuned() -> None:
    data = _whole_docs(_run(), 10)
    res = _quiet(
        lambda: cs.judged_ci(
            data, "human", "doc", judge="judge", method="glide", estimand="cluster_mean"
        )
    )
    assert res.weight_method == "tuned"
    assert not any("cross-fitted" in note for note in res.notes)


# --- cross-fitted weights when every cluster carries labels
#
# The expected numbers are derived by hand from the definition: each cluster contributes its
# labels, expanded to the cluster, plus its own weight times the gap between the judge's total
# over the cluster's rows and the judge's expanded total over its labelled rows (the
# cross-prediction estimator of Zrnic & Candes 2024, cluster by cluster); the population's
# CR1 variance is the spread of these contributions (the ultimate-cluster variance).


def _census(seed: int, n_clusters: int = 12, strata: np.ndarray | None = None):
    rng = np.random.default_rng(seed)
    sizes = rng.integers(2, 9, n_clusters)
    return _inside(seed, sizes, np.zeros(n_clusters) if strata is None else strata)


@pytest.mark.parametrize("estimand", ["pooled", "cluster_mean"])
def test_cross_fitted_weights_centre_each_cluster_on_its_own_judge(estimand: str) -> None:
    sums = _census(5)
    weights = np.random.default_rng(6).uniform(0, 1, sums.rows.size)
    n, r = sums.rows, sums.labelled
    if estimand == "pooled":
        part = sums.human * n / r + weights * (sums.judge_total - sums.judge * n / r)
        size = n
    else:
        part = sums.human / r + weights * (sums.judge_total / n - sums.judge / r)
        size = np.ones_like(n)
    expected = part.sum() / size.sum()
    prep = core._prepare(sums, estimand, "cr1")
    estimate, _ = core._residuals(sums, prep, weights)
    assert _close(estimate, expected)
    labelling = core.labelling_of(sums)
    variance = core._variance(sums, prep, weights, 0.0, "population", labelling)
    units = (part - expected * size) / size.mean()
    assert _close(variance, float(np.sum(units**2)) / (n.size * (n.size - 1)))


def test_the_cross_fitted_fit_uses_each_clusters_own_judge() -> None:
    sums = _census(8, n_clusters=15)
    found = core.fit(
        sums, estimand="pooled", target="benchmark", weight="cross-fitted", confidence=0.95
    )
    weights = core._cross_fitted(sums, "benchmark", "pooled", "cr2")
    n, r = sums.rows, sums.labelled
    part = sums.human * n / r + weights * (sums.judge_total - sums.judge * n / r)
    assert weights.std() > 0
    assert _close(found.estimate, part.sum() / n.sum())


@pytest.mark.parametrize("small_sample", ["cr1", "cr2"])
@pytest.mark.parametrize("target", ["population", "benchmark"])
@pytest.mark.parametrize("estimand", ["pooled", "cluster_mean"])
def test_one_weight_in_every_cluster_is_the_single_weight(
    estimand: str, target: str, small_sample: str
) -> None:
    """Centring each cluster on its own judge total changes nothing for one weight, with
    labelling strata and CR2's separate scales too."""
    sums = _census(9, n_clusters=14, strata=np.arange(14) % 3)
    prep = core._prepare(sums, estimand, small_sample)
    labelling = core.labelling_of(sums)
    every = np.full(sums.rows.size, 0.37)
    assert prep.census
    one = core._residuals(sums, prep, 0.37)[0]
    assert _close(core._residuals(sums, prep, every)[0], one)
    single = core._variance(sums, prep, 0.37, 0.37, target, labelling)
    assert _close(core._variance(sums, prep, every, 0.37, target, labelling), single)


# --- method="bootstrap": the cluster bootstrap of the two-phase design
#
# The expected numbers are derived, not recorded: each draw's estimate is fit's (CR1's
# tuning) on the draw's sums, computed here one draw at a time; at a fixed weight on clusters
# of equal sizes the estimate is linear in the drawn clusters, so its ideal bootstrap
# variance has a closed form (_ideal_variance); and with weight 0 the draws of the labelled
# clusters are cluster_ci's percentile bootstrap of the labelled rows, draw for draw.


def _sums(
    rng: np.random.Generator, sizes: np.ndarray, labelled: np.ndarray, strata: np.ndarray
) -> core.JudgedSums:
    """Per-cluster sums of a run with a cluster effect in the label and in the judge's bias;
    ``labelled`` says which rows carry a label."""
    codes = np.repeat(np.arange(sizes.size), sizes)
    y = rng.normal(size=codes.size) + rng.normal(size=sizes.size)[codes]
    f = 0.6 * y + rng.normal(size=codes.size) + 0.5 * rng.normal(size=sizes.size)[codes]
    v = labelled.astype(float)

    def total(values: np.ndarray) -> np.ndarray:
        return np.bincount(codes, weights=values, minlength=sizes.size)

    return core.JudgedSums(
        rows=total(np.ones(codes.size)), judge_total=total(f), labelled=total(v),
        weight=total(v), human=total(y * v), judge=total(f * v), human_sq=total(y * y * v),
        judge_sq=total(f * f * v), cross=total(y * f * v), strata=strata.astype(np.intp),
    )  # fmt: skip


def _whole(seed: int, sizes: np.ndarray, strata: np.ndarray, per_stratum: int):
    """Whole clusters labelled, ``per_stratum`` in each stratum."""
    rng = np.random.default_rng(seed)
    chosen = np.concatenate(
        [rng.choice(np.flatnonzero(strata == h), per_stratum, replace=False) for h in set(strata)]
    )
    labelled = np.isin(np.repeat(np.arange(sizes.size), sizes), chosen)
    return _sums(rng, sizes, labelled, strata)


def _inside(seed: int, sizes: np.ndarray, strata: np.ndarray):
    """About half the rows of every cluster labelled, at least one."""
    rng = np.random.default_rng(seed)
    labelled = rng.random(int(sizes.sum())) < 0.5
    labelled[np.concatenate([[0], np.cumsum(sizes)[:-1]])] = True
    return _sums(rng, sizes, labelled, strata)


def _near(a: float, b: float) -> bool:
    """Equal to rounding: the blocks sum in another order than ``fit`` (estimates near 0
    compare absolutely)."""
    return math.isclose(a, b, rel_tol=1e-10, abs_tol=1e-13)


def _draw(sums: core.JudgedSums, index: np.ndarray) -> core.JudgedSums:
    """The draw's sums: the clusters ``index``, a cluster drawn twice two clusters."""
    return sums._replace(
        **{name: getattr(sums, name)[index] for name in core.JudgedSums._fields[:-1]}
    )


DESIGNS = {
    "whole clusters": lambda seed: _whole(seed, np.arange(30) % 7 + 1, np.zeros(30), 9),
    "whole, 2 strata": lambda seed: _whole(seed, np.arange(30) % 5 + 2, np.arange(30) % 2, 5),
    "rows inside": lambda seed: _inside(seed, np.arange(20) % 6 + 2, np.zeros(20)),
    "rows, 3 strata": lambda seed: _inside(seed, np.arange(24) % 6 + 2, np.arange(24) % 3),
}


@pytest.mark.parametrize("design", DESIGNS)
@pytest.mark.parametrize("estimand", ["pooled", "cluster_mean"])
@pytest.mark.parametrize("weight", ["tuned", 0.4])
def test_each_draw_is_fit_on_the_draws_sums(design: str, estimand: str, weight: Any) -> None:
    """The draws, computed over whole blocks, are the draw-by-draw estimates: the weight
    tuned on the draw's sums (CR1), the estimate at it, and the labels alone, the judge
    alone and the labelled rows' mean of ``y - f`` on the same draw."""
    sums = DESIGNS[design](3)
    indices = next(core.draw_indices(sums, 60, np.random.default_rng(1)))
    found = core._draws(sums, estimand, indices, None if weight == "tuned" else weight)
    common = {"estimand": estimand, "target": "population", "confidence": 0.95}
    for b, index in enumerate(indices):
        drawn = _draw(sums, index)
        labelling = core.labelling_of(drawn)
        prep = core._prepare(drawn, estimand, "cr1")
        lam = (
            weight if weight != "tuned" else core.tuned_weight(drawn, prep, "population", labelling)
        )
        point = core.fit(drawn, **common, weight=lam, small_sample="cr1")
        human = core.fit(drawn, **common, weight=0.0, small_sample="cr1")
        residual = core.fit(drawn, **common, weight=1.0, small_sample="cr1", judge_part=False)
        assert _near(found.weight[b], lam)
        assert _near(found.estimate[b], point.estimate)
        assert _near(found.variance[b], point.variance)
        assert _near(found.human[b], human.estimate)
        assert _near(found.judge[b], prep.judge_mean)
        assert _near(found.residual[b], residual.estimate)


def test_draws_keep_each_group_and_its_count() -> None:
    """Each draw replaces the clusters of a (stratum, labelled or not) group by as many
    clusters of that group."""
    sums = DESIGNS["whole, 2 strata"](5)
    has = sums.labelled > 0
    for block in core.draw_indices(sums, 2 * CHUNK_ELEMENTS // 30 + 7, np.random.default_rng(2)):
        assert np.array_equal(sums.strata[block], np.broadcast_to(sums.strata, block.shape))
        assert np.array_equal(has[block], np.broadcast_to(has, block.shape))
    sizes = [block.shape[0] for block in core.draw_indices(sums, 9000, np.random.default_rng(2))]
    assert sum(sizes) == 9000
    assert max(sizes) * 30 <= CHUNK_ELEMENTS


def _ideal_variance(sums: core.JudgedSums, weight: float) -> float:
    """The ideal bootstrap variance on clusters of equal sizes with whole clusters labelled.

    Then every share and mean is a plain average of cluster means: with ``j_c`` the judge's
    mean over cluster ``c`` and ``y_c``, ``f_c`` its labelled means, the estimate is
    ``sum_c z_c`` over the drawn clusters with ``z_c = lam j_c / C`` for an unlabelled
    cluster and ``lam j_c / C + (C_h/C)(y_c - lam f_c)/m_h`` for a labelled one in stratum
    ``h``. Each group's ``n_g`` clusters are ``n_g`` independent draws from its members, so
    the variance is ``sum_g n_g var(z over the group's members)``, the variances with
    divisor ``n_g``.
    """
    n_clusters = sums.rows.size
    has = sums.labelled > 0
    labelling = core.labelling_of(sums)
    c_h, m_h = labelling.clusters[sums.strata], labelling.labelled_clusters[sums.strata]
    with np.errstate(divide="ignore", invalid="ignore"):
        part = np.where(has, (sums.human - weight * sums.judge) / sums.labelled, 0.0)
    z = weight * sums.judge_total / sums.rows / n_clusters + c_h / n_clusters * part / m_h
    total = 0.0
    for stratum in range(int(sums.strata.max()) + 1):
        for labelled in (True, False):
            members = (sums.strata == stratum) & (has == labelled)
            total += members.sum() * float(np.var(z[members])) if members.any() else 0.0
    return total


@pytest.mark.parametrize("strata", [1, 2])
@pytest.mark.parametrize("estimand", ["pooled", "cluster_mean"])
def test_the_bootstrap_variance_at_a_fixed_weight_is_the_ideal_one(strata, estimand) -> None:
    """At weight 0.7 on 40 clusters of 6 rows, 12 labelled (6 per stratum with 2 strata),
    the variance of 40,000 draws is within 5 Monte Carlo standard errors of the ideal
    bootstrap variance (:func:`_ideal_variance`); the standard error of a sample variance
    is ``sqrt((mu4 - var**2) / B)``, read off the draws' own fourth moment."""
    sums = _whole(8, np.full(40, 6), np.arange(40) % strata, 12 // strata)
    b = 40_000
    drawn = core.bootstrap(
        sums, estimand=estimand, weight=0.7, confidence=0.95, n_resamples=b,
        rng=np.random.default_rng(13),
    )  # fmt: skip
    draws = np.concatenate(
        [core._draws(sums, estimand, block, 0.7).estimate
         for block in core.draw_indices(sums, b, np.random.default_rng(13))]
    )  # fmt: skip
    assert math.isclose(drawn.fitted.variance, float(np.var(draws, ddof=1)), rel_tol=1e-12)
    centred = draws - draws.mean()
    variance = float(np.mean(centred**2))
    mc_se = math.sqrt((float(np.mean(centred**4)) - variance**2) / b)
    ideal = _ideal_variance(sums, 0.7)
    assert abs(drawn.fitted.variance - ideal) < 5 * mc_se
    # and the tolerance is tight enough to tell the two-phase variance's (m-1)/m apart
    assert 5 * mc_se < 0.05 * ideal


@pytest.mark.parametrize("estimand", ["pooled", "cluster_mean"])
def test_weight_zero_is_the_cluster_bootstrap_of_the_labelled_rows(estimand) -> None:
    """The labelled clusters are drawn first, as the cluster bootstrap of the labelled rows
    draws them, and a draw's CR1 variance at weight 0 is that of its labelled rows: with
    weight 0 (and beside any weight, the labels alone) the interval is the studentised
    cluster bootstrap of the labelled rows on the same seed (``core.bootstrap``'s, before
    ``cluster_ci``'s floor at CR3), and the draws' percentile interval is ``cluster_ci``'s
    ``bootstrap_percentile``."""
    data = _whole_docs(_run(), 14)
    options = {"estimand": estimand, "method": "bootstrap", "n_resamples": 999, "rng": 7}
    res = _quiet(lambda: cs.judged_ci(data, "human", "doc", judge="judge", weight=0, **options))
    tuned = _quiet(lambda: cs.judged_ci(data, "human", "doc", judge="judge", **options))
    labelled = data.dropna(subset=["human"])
    assert 999 * data["doc"].nunique() <= CHUNK_ELEMENTS  # one block of draws, as the rows'
    codes = labelled["doc"].astype("category").cat.codes.to_numpy()
    ref = studentized_interval(
        cluster_sums(labelled["human"].to_numpy(), codes), estimand, confidence=0.95,
        n_resamples=999, rng=np.random.default_rng(7),
    )  # fmt: skip
    for found in (res, tuned):
        assert math.isclose(found.human_low, ref.low, rel_tol=1e-12)
        assert math.isclose(found.human_high, ref.high, rel_tol=1e-12)
    assert math.isclose(res.low, ref.low, rel_tol=1e-12)
    assert math.isclose(res.high, ref.high, rel_tol=1e-12)
    sums = adapters.judged_design(
        data, adapters.columns_of(data, "human", "doc", judge="judge")
    ).sums
    percentile = core.bootstrap(
        sums, estimand=estimand, weight=0.0, confidence=0.95, n_resamples=999,
        rng=np.random.default_rng(7), interval="percentile",
    ).fitted  # fmt: skip
    ref = _quiet(
        lambda: cs.cluster_ci(
            labelled, "human", "doc", estimand=estimand, method="bootstrap_percentile",
            n_resamples=999, rng=7,
        )
    )  # fmt: skip
    assert math.isclose(res.estimate, ref.estimate, rel_tol=1e-12)
    assert math.isclose(percentile.lower, ref.low, rel_tol=1e-12)
    assert math.isclose(percentile.upper, ref.high, rel_tol=1e-12)


def test_every_row_labelled_is_the_cluster_bootstrap_of_the_labels() -> None:
    data = _run().assign(human=lambda d: d["human_full"])
    res = cs.judged_ci(data, "human", "doc", judge="judge", method="bootstrap", n_resamples=999)
    codes = data["doc"].astype("category").cat.codes.to_numpy()
    ref = studentized_interval(
        cluster_sums(data["human"].to_numpy(), codes), "pooled", confidence=0.95,
        n_resamples=999, rng=np.random.default_rng(0),
    )  # fmt: skip
    assert res.labelling == "every row"
    assert math.isclose(res.low, ref.low, rel_tol=1e-12)
    assert math.isclose(res.high, ref.high, rel_tol=1e-12)


def test_the_result_and_its_seed() -> None:
    data = _whole_docs(_run(), 24)
    call = lambda **kw: _quiet(  # noqa: E731
        lambda: cs.judged_ci(data, "human", "doc", judge="judge", method="bootstrap", **kw)
    )
    res = call(rng=3)
    assert res.method == "bootstrap"
    assert res.df == math.inf
    assert res.weight_method == "cross-fitted"
    assert res.low < res.estimate < res.high
    assert any("re-tuned in each draw" in note for note in res.notes)
    assert res.to_dict() == call(rng=3).to_dict()
    assert res.to_dict() == call(rng=np.random.default_rng(3)).to_dict()
    assert res.low != call(rng=4).low
    assert call().to_dict() == call(rng=0).to_dict()  # None: the library's fixed seed
    # the point is the full sample's, with cr1's choice of weight; the draws move the bounds
    cr1 = call(rng=3, weight="tuned")
    plain = _quiet(
        lambda: cs.judged_ci(data, "human", "doc", judge="judge", method="cr1", weight="tuned")
    )
    assert math.isclose(cr1.estimate, plain.estimate, rel_tol=1e-12)
    assert cr1.weight == plain.weight
    fixed = call(rng=3, weight=0.5)
    assert fixed.weight == 0.5
    assert fixed.weight_method == "given"
    assert any("kept at the number given" in note for note in fixed.notes)


def test_the_accessor_and_judged_delta_take_the_bootstrap() -> None:
    data = _rows_inside(_run())
    options = {"judge": "judge", "method": "bootstrap", "n_resamples": 500, "rng": 2}
    assert (
        data.eval.judged_ci("human", "doc", **options).to_dict()
        == cs.judged_ci(data, "human", "doc", **options).to_dict()
    )
    a, b = _two_runs()
    res = _quiet(lambda: cs.judged_delta(a, b, "human", "doc", on=["item", "run"], **options))
    difference = a.assign(human=a["human"] - b["human"], judge=a["judge"] - b["judge"])
    with warnings.catch_warnings():  # the differences run on a scale of their own
        warnings.simplefilter("ignore", cs.JudgeScaleWarning)
        ref = _quiet(lambda: cs.judged_ci(difference, "human", "doc", **options))
    assert res.method == "bootstrap"
    for field in ("estimate", "low", "high", "weight", "human_low", "judge_bias", "bias_low"):
        assert math.isclose(getattr(res, field), getattr(ref, field), rel_tol=1e-12), field


@pytest.mark.parametrize(
    ("options", "match"),
    [
        ({"target": "benchmark"}, "target='benchmark' is a labelling of this run's own"),
        ({"inclusion": "p"}, "with inclusion= .stated probabilities. use method='cr2'"),
        ({"n_resamples": 20}, "n_resamples=20 is too few"),
        ({"rng": "seed"}, "rng must be None"),
    ],
)
def test_the_bootstrap_refuses_what_it_cannot_estimate(options: dict, match: str) -> None:
    data = _whole_docs(_run(), 20).assign(p=0.5)
    with pytest.raises(cs.InvalidOptionError, match=match):
        cs.judged_ci(data, "human", "doc", judge="judge", method="bootstrap", **options)


def test_the_other_methods_ignore_the_resampling_options() -> None:
    data = _whole_docs(_run(), 20)
    plain = _quiet(lambda: cs.judged_ci(data, "human", "doc", judge="judge"))
    given = _quiet(lambda: cs.judged_ci(data, "human", "doc", judge="judge", n_resamples=5, rng=1))
    assert pd.Series(plain.to_dict()).equals(pd.Series(given.to_dict()))
