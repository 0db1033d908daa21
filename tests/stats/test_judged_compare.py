"""``judged_compare``: a leaderboard of models judged on the same items, some answers labelled.

Each score must be ``judged_ci``'s on that model's rows and each pair ``judged_delta``'s on
the two models' rows (the same construction, by definition of the leaderboard); the naive
interval is the same construction with every item its own cluster.
"""

from __future__ import annotations

import math
import warnings
from typing import Any

import numpy as np
import pandas as pd
import pytest

import clusterstats as cs
from clusterstats.core.paired import adjust_p_values

TOL = 1e-12
MODELS = ("alpha", "beta", "gamma", "delta")


def _models(seed: int = 4, n_docs: int = 36, labelled_docs: int = 16) -> pd.DataFrame:
    """Four models answering the same items (2-4 per document); a judge whose leniency
    varies by document and by model; human labels on every answer of the first
    ``labelled_docs`` documents."""
    rng = np.random.default_rng(seed)
    rows = []
    for doc in range(n_docs):
        level, lean = rng.normal(0, 0.5), rng.normal(0.3, 0.3)
        for item in range(int(rng.integers(2, 5))):
            hard = rng.normal(0, 0.4)
            for k, model in enumerate(MODELS):
                human = 3 + 0.25 * k + level + hard + rng.normal(0, 0.6)
                judge = 0.8 * human + 0.5 + lean + 0.1 * k + rng.normal(0, 0.4)
                rows.append((model, f"doc{doc:02d}", f"{doc}-{item}", human, judge))
    frame = pd.DataFrame(rows, columns=["model", "doc", "item", "human_full", "judge"])
    labelled = frame["doc"].str[3:].astype(int) < labelled_docs
    return frame.assign(human=frame["human_full"].where(labelled))


def _quiet(call: Any) -> Any:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", cs.FewClustersWarning)
        return call()


def _compare(frame: pd.DataFrame, **options: Any) -> cs.Comparison:
    options = {"model": "model", "judge": "judge", "on": "item", **options}
    return _quiet(lambda: cs.judged_compare(frame, "human", "doc", **options))


def _close(a: float, b: float) -> bool:
    return math.isclose(a, b, rel_tol=TOL, abs_tol=1e-14)


@pytest.mark.parametrize(
    "options",
    [{}, {"estimand": "cluster_mean"}, {"method": "cr1", "weight": "tuned"}, {"weight": 0.5}],
)
def test_scores_and_pairs_are_judged_ci_and_judged_delta(options: dict) -> None:
    frame = _models()
    res = _compare(frame, **options)
    assert res.models == tuple(sorted(MODELS))
    assert res.judge == "judge"
    assert res.target == "population"
    for i, model in enumerate(res.models):
        one = _quiet(
            lambda m=model: cs.judged_ci(
                frame[frame["model"] == m], "human", "doc", judge="judge", **options
            )
        )
        assert _close(res.score[i], one.estimate)
        assert _close(res.score_low[i], one.low)
        assert _close(res.score_high[i], one.high)
    for k, (a, b) in enumerate(zip(res.pair_a, res.pair_b, strict=True)):
        pair = _quiet(
            lambda a=a, b=b: cs.judged_delta(
                frame[frame["model"] == a], frame[frame["model"] == b], "human", "doc",
                judge="judge", on="item", **options,
            )
        )  # fmt: skip
        assert _close(res.delta[k], pair.estimate)
        assert _close(res.se[k], pair.se)
        assert _close(res.low[k], pair.low)
        assert _close(res.high[k], pair.high)
        assert res.df[k] == pair.df
    assert len(res.delta) == 6


def test_naive_is_the_same_construction_with_every_item_its_own_cluster() -> None:
    frame = _models()
    res = _compare(frame)
    for i, model in enumerate(res.models):
        rows = frame[frame["model"] == model].reset_index(drop=True)
        rows = rows.assign(row=np.arange(len(rows)))
        naive = cs.judged_ci(rows, "human", "row", judge="judge", method="cr1")
        assert _close(res.naive_low[i], naive.low)
        assert _close(res.naive_high[i], naive.high)
    # the documents share answers and leniency: the clustered intervals are wider
    clustered = np.subtract(res.score_high, res.score_low)
    naive = np.subtract(res.naive_high, res.naive_low)
    assert np.all(clustered > naive)


def test_p_values_are_each_pairs_t_test_adjusted_over_the_family() -> None:
    from scipy import stats

    res = _compare(_models(), adjust="bh")
    for k in range(len(res.delta)):
        t = res.delta[k] / res.se[k]
        assert math.isclose(res.p_value[k], 2 * stats.t.sf(abs(t), res.df[k]), rel_tol=1e-10)
    assert np.allclose(res.p_adjusted, adjust_p_values(np.array(res.p_value), "bh"), rtol=0)


def test_the_order_of_rows_and_of_models_does_not_matter() -> None:
    frame = _models()
    res = _compare(frame, rng=7)
    again = _compare(frame.sample(frac=1.0, random_state=3).reset_index(drop=True), rng=7)
    pd.testing.assert_frame_equal(res.leaderboard(), again.leaderboard(), rtol=1e-12)
    pd.testing.assert_frame_equal(res.pairs(), again.pairs(), rtol=1e-12)
    assert res.notes == again.notes


def test_a_clear_leader_is_ranked_first_with_a_set_of_one() -> None:
    frame = _models()
    ahead = frame["model"] == "delta"
    frame.loc[ahead, ["human", "judge"]] += 3.0
    res = _compare(frame)
    board = res.leaderboard()
    assert board["model"].iloc[0] == "delta"
    assert (board["rank_low"].iloc[0], board["rank_high"].iloc[0]) == (1.0, 1.0)
    assert board["in_top_set"].tolist() == [True, False, False, False]


def test_baseline_and_orientation() -> None:
    frame = _models()
    res = _compare(frame, baseline="alpha")
    assert res.pair_b == ("alpha",) * 3
    assert len(res.delta) == 3
    full = _compare(frame)
    for k, model in enumerate(res.pair_a):  # model - alpha is alpha - model turned round
        j = full.pair_b.index(model, full.pair_a.index("alpha"))
        assert full.pair_a[j] == "alpha"
        assert res.delta[k] == pytest.approx(-full.delta[j], abs=1e-12)
    turned = _compare(frame, orientation="higher_minus_lower")
    assert all(d >= 0 for d in turned.delta)
    assert sorted(np.round(np.abs(full.delta), 12)) == sorted(np.round(turned.delta, 12))


def test_items_missing_for_a_model() -> None:
    frame = _models()
    gap = frame.drop(index=frame.index[(frame["model"] == "beta") & (frame["item"] == "0-0")])
    with pytest.raises(cs.AlignmentError, match="judged for some models only"):
        _compare(gap)
    res = _compare(gap, how="inner")
    assert res.n_dropped_items == 1
    assert res.n_items == frame["item"].nunique() - 1
    assert any("how='inner'" in note for note in res.notes)


def test_bad_input_is_refused_by_name() -> None:
    frame = _models()
    twice = pd.concat([frame, frame.iloc[:1]])
    with pytest.raises(cs.AlignmentError, match="repeats the key"):
        _compare(twice)
    moved = frame.copy()
    moved.loc[(moved["model"] == "beta") & (moved["item"] == "0-0"), "doc"] = "doc35"
    with pytest.raises(cs.AlignmentError, match="'doc'"):
        _compare(moved)
    with pytest.raises(cs.InvalidOptionError, match="method"):
        _compare(frame, method="glide")
    with pytest.raises(cs.InvalidOptionError, match="rank_method='bootstrap'"):
        _compare(frame, rank_method="bootstrap")
    with pytest.raises(cs.InvalidOptionError, match="baseline"):
        _compare(frame, baseline="omega")
    with pytest.raises(cs.InvalidOptionError, match="top=5"):
        _compare(frame, top=5)
    with pytest.raises(cs.InvalidOptionError, match="2 or more models"):
        _compare(frame[frame["model"] == "alpha"])
    unlabelled = frame.assign(human=np.nan)
    with pytest.raises(cs.InvalidDataError, match="no row of 'human'"):
        _compare(unlabelled)
    no_model = frame.assign(model=frame["model"].where(frame.index > 0))
    with pytest.raises(cs.InvalidDataError, match="model column 'model' is missing"):
        _compare(no_model)
    assert frame.equals(_models())  # the caller's data is left as it was


def test_a_pair_without_enough_shared_labels_is_named() -> None:
    frame = _models()
    docs = frame["doc"].str[3:].astype(int)
    apart = frame.assign(
        human=frame["human_full"].where(
            ((frame["model"] == "alpha") & (docs < 16))
            | ((frame["model"] != "alpha") & (docs >= 16))
        )
    )
    with pytest.raises(cs.InvalidDataError, match="no item has both its 'alpha' and its 'beta'"):
        _compare(apart)
    one_shared = frame.assign(
        human=frame["human_full"].where(
            ((frame["model"] == "alpha") & (docs < 16))
            | ((frame["model"] != "alpha") & (docs >= 15))
        )
    )
    with pytest.raises(cs.TooFewClustersError, match=r"^pair 'alpha' - 'beta': 1 of 36 clusters"):
        _compare(one_shared)


def test_answers_labelled_for_one_model_only_are_noted_and_unused() -> None:
    frame = _models()
    extra = (frame["model"] == "alpha") & (frame["doc"] == "doc30")
    frame.loc[extra, "human"] = frame.loc[extra, "human_full"]
    res = _compare(frame)
    assert any("labelled for one model of the pair only" in note for note in res.notes)
    one = res.pair_a.index("alpha")
    pair = _quiet(
        lambda: cs.judged_delta(
            frame[frame["model"] == "alpha"], frame[frame["model"] == res.pair_b[one]],
            "human", "doc", judge="judge", on="item",
        )
    )  # fmt: skip
    assert _close(res.delta[one], pair.estimate)


def test_the_result_renders_and_exports() -> None:
    res = _compare(_models())
    text = repr(res)
    assert "judged by judge (target population)" in text
    assert set(res.leaderboard().columns) == set(cs.Comparison.LEADERBOARD_COLUMNS)
    metrics = res.to_metrics()
    assert metrics["alpha/score"] == res.score[res.models.index("alpha")]
    assert "<table" in res._repr_html_()


def test_two_identical_models_share_a_rank_and_their_pair_has_no_interval() -> None:
    frame = _models()
    twin = pd.concat([frame, frame[frame["model"] == "alpha"].assign(model="alpha2")])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", cs.FewClustersWarning)
        with pytest.warns(cs.DegenerateDataWarning, match="'alpha' - 'alpha2'"):
            res = cs.judged_compare(twin, "human", "doc", model="model", judge="judge", on="item")
    board = res.leaderboard().set_index("model")
    assert board.loc["alpha", "rank"] == board.loc["alpha2", "rank"]
    k = res.pair_b.index("alpha2")
    assert res.delta[k] == 0.0
    assert all(math.isnan(getattr(res, f)[k]) for f in ("se", "low", "high", "p_adjusted"))
    assert not any({"alpha", "alpha2"} == set(pair) for pair in res.separated)
    with pytest.raises(cs.DegenerateDataError, match="differ by the same amount"):
        _quiet(lambda: cs.judged_delta(
            frame[frame["model"] == "alpha"], frame[frame["model"] == "alpha"], "human", "doc",
            judge="judge", on="item",
        ))  # fmt: skip
