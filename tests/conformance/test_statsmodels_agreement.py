"""CR1 equals statsmodels' clustered OLS of the outcome on a constant, on real eval data.

statsmodels: ``OLS(y, ones).fit(cov_type="cluster", cov_kwds={"groups": g}, use_t=True)``
applies G/(G-1) * (N-1)/(N-k) with k = 1, i.e. CR1, and uses t with G - 1 df.
"""

from __future__ import annotations

from contextlib import nullcontext

import numpy as np
import pandas as pd
import pytest

import clusterstats as cs

sm = pytest.importorskip("statsmodels.api")


def statsmodels_cr1(y: np.ndarray, groups: np.ndarray, confidence: float = 0.95):
    codes = pd.factorize(groups)[0]
    fit = sm.OLS(y, np.ones_like(y)).fit(cov_type="cluster", cov_kwds={"groups": codes}, use_t=True)
    low, high = fit.conf_int(alpha=1 - confidence)[0]
    return fit.params[0], fit.bse[0], low, high, fit.df_resid_inference


CASES = [
    ("mmlu", "correct", "src", "model"),
    ("mmlu", "correct", "category", "model"),
    ("bbh", "correct", "task", "condition"),
    ("tau", "reward", "task_id", None),
    ("tau", "reward", "user_id", None),
    ("tau", "n_messages", "user_id", None),  # a continuous outcome
    ("cruxeval", "correct", "problem_id", "task"),
]


@pytest.mark.parametrize(("dataset", "outcome", "by", "over"), CASES)
def test_cr1_matches_statsmodels_cluster_ols(request, dataset, outcome, by, over):
    frame = request.getfixturevalue(dataset)
    groups = [(None, frame)] if over is None else list(frame.groupby(over, sort=False))
    for label, part in groups:
        part = part[part[outcome].notna()]
        est, se, low, high, df = statsmodels_cr1(part[outcome].to_numpy(float), part[by].to_numpy())
        with pytest.warns(cs.FewClustersWarning) if part[by].nunique() < 20 else nullcontext():
            res = cs.cluster_ci(part, outcome, by=by, method="cr1")
        assert res.estimate == pytest.approx(est, rel=1e-12), label
        assert res.se == pytest.approx(se, rel=1e-10), label
        assert res.df == df
        if set(np.unique(part[outcome])) <= {0, 1}:
            # Binary outcomes are clipped to [0, 1]; these data are far from the boundary.
            assert low > 0
            assert high < 1
        assert res.low == pytest.approx(low, rel=1e-10), label
        assert res.high == pytest.approx(high, rel=1e-10), label


def test_over_gives_the_same_numbers_as_filtering(mmlu):
    grouped = cs.cluster_ci(mmlu, "correct", by="src", over="model", method="cr1")
    for model, part in mmlu.groupby("model"):
        single = cs.cluster_ci(part, "correct", by="src", method="cr1")
        assert grouped[model].to_dict() == single.to_dict()


def test_over_with_an_int_seed_gives_each_group_its_own_bootstrap(bbh):
    grouped = cs.cluster_ci(
        bbh, "correct", by="task", over="condition", method="bootstrap", n_resamples=500, rng=42
    )
    for condition, part in bbh.groupby("condition"):
        single = cs.cluster_ci(
            part, "correct", by="task", method="bootstrap", n_resamples=500, rng=42
        )
        assert grouped[condition].to_dict() == single.to_dict()
