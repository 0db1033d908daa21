"""pass@k and pass^k over several k in one call: the same numbers as one call per k."""

from __future__ import annotations

import warnings

import pandas as pd
import pytest

import clusterstats as cs


@pytest.fixture(scope="module")
def tau():
    return cs.datasets.load("tau_bench_airline")


def _quiet(function, *args, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", cs.ClusterStatsWarning)
        return function(*args, **kwargs)


@pytest.mark.parametrize("statistic", [cs.pass_at_k, cs.pass_hat_k])
def test_a_list_of_k_gives_one_row_per_k_equal_to_one_call_each(tau, statistic):
    runs = {"case": "task_id", "rerun": "trial"}
    table = _quiet(statistic, tau, "reward", k=[1, 2, 4], **runs)
    assert isinstance(table, cs.GroupedResults)
    assert table.dims == ("k",)
    frame = table.to_frame()
    assert list(frame["k"]) == [1, 2, 4]
    assert list(frame.columns).count("k") == 1
    for k in (1, 2, 4):
        alone = _quiet(statistic, tau, "reward", k=k, **runs)
        assert table[k].to_dict() == alone.to_dict()


def test_a_list_of_k_within_groups_and_on_a_dataset(tau):
    two = pd.concat([tau.assign(model="a"), tau.assign(model="b")], ignore_index=True)
    grouped = _quiet(
        cs.pass_hat_k, two, "reward", case="task_id", rerun="trial", k=[1, 3], over="model"
    )
    assert grouped.dims == ("model", "k")
    assert grouped.groups == (("a", 1), ("a", 3), ("b", 1), ("b", 3))
    ds = cs.to_case_rerun(tau, case="task_id", rerun="trial", outcome="reward")
    from_dataset = _quiet(cs.pass_hat_k, ds, "reward", k=[1, 3])
    assert from_dataset[3].estimate == grouped[("a", 3)].estimate


@pytest.mark.parametrize(
    ("k", "message"),
    [([], "a list of distinct ones"), ([2, 2], "a list of distinct ones"), ([1, 0], "positive")],
)
def test_a_bad_list_of_k_is_refused(tau, k, message):
    with pytest.raises(cs.InvalidOptionError, match=message):
        cs.pass_at_k(tau, "reward", case="task_id", rerun="trial", k=k)
