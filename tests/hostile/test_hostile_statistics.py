"""Hostile input for the statistics of means and comparisons: ``cluster_ci``, ``icc``,
``design_effect``, ``paired_delta``, ``compare``, ``stratum_table`` and ``missing_report``, on
frames, plain arrays, dask frames and (case, rerun) Datasets.

Every case states the exact error type and a message naming what is wrong, or the right
number with its warning; the harness (``tests/hostile/hostile.py``) also checks that no input was
changed. Expected numbers come from closed forms stated beside them (Clopper–Pearson bounds
are beta quantiles: ``beta.ppf(a/2, x, n-x+1)`` and ``beta.ppf(1-a/2, x+1, n-x)``).
"""

from __future__ import annotations

import math
import warnings
from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest
import xarray as xr
from hostile import Case, Raises, Returns, Warns, params, run
from scipy import optimize, stats

import clusterstats as cs

dd = pytest.importorskip("dask.dataframe")


def frame(n_clusters: int = 30, size: int = 4, seed: int = 0) -> pd.DataFrame:
    """Binary outcomes ``y``, a score, clusters ``g``, strata ``st`` and groups ``grp``."""
    rng = np.random.default_rng(seed)
    g = np.repeat(np.arange(n_clusters), size)
    p = rng.uniform(0.2, 0.8, n_clusters)[g]
    return pd.DataFrame(
        {
            "g": g,
            "item": np.arange(n_clusters * size),
            "y": (rng.random(g.size) < p).astype(float),
            "score": rng.normal(size=g.size),
            "st": np.where(g % 2 == 0, "even", "odd"),
            "grp": np.where(g < n_clusters // 2, "a", "b"),
        }
    )


def long_models(offset: float = 0.0, identical: bool = False) -> pd.DataFrame:
    """Two models on the same items; m2 = m1 - offset, or a fresh draw."""
    a = frame(seed=1)
    b = a.assign(y=a["score"] - offset) if identical else frame(seed=2)
    first = a.assign(y=a["score"], model="m1")
    second = b.assign(model="m2")
    return pd.concat([first, second], ignore_index=True)


def dataset(values: np.ndarray | None = None, seed: int = 0) -> xr.Dataset:
    rng = np.random.default_rng(seed)
    if values is None:
        values = (rng.random((24, 3)) < 0.5).astype(float)
    return xr.Dataset({"y": (("case", "rerun"), values)})


def cp_bounds(x: float, n: float, confidence: float = 0.95) -> tuple[float, float]:
    alpha = 1 - confidence
    low = 0.0 if x == 0 else stats.beta.ppf(alpha / 2, x, n - x + 1)
    high = 1.0 if x == n else stats.beta.ppf(1 - alpha / 2, x + 1, n - x)
    return low, high


def mid_p_bounds(x: int, n: int, weight: float = 0.5, confidence: float = 0.95):
    """Mid-p binomial test inversion through scipy.stats.binom (integer x of n)."""
    alpha = 1 - confidence

    def lower_tail(mu):
        return stats.binom.cdf(x - 1, n, mu) + weight * stats.binom.pmf(x, n, mu) - alpha / 2

    def upper_tail(mu):
        return stats.binom.sf(x, n, mu) + weight * stats.binom.pmf(x, n, mu) - alpha / 2

    low = 0.0 if x == 0 else optimize.brentq(upper_tail, 1e-15, x / n, xtol=1e-15)
    high = 1.0 if x == n else optimize.brentq(lower_tail, x / n, 1 - 1e-15, xtol=1e-15)
    return low, high


def check_bounds(low: float, high: float, rel: float = 1e-9):
    def check(result):
        assert (result.low, result.high) == pytest.approx((low, high), rel=rel)

    return check


def check_method(method: str):
    def check(result):
        assert result.method == method

    return check


CASES: list[Case] = []


def case(name, inputs, call, expect):
    CASES.append(Case(name, inputs, call, expect))


# -- the data argument ------------------------------------------------------------------------

case(
    "cluster_ci: a list as data",
    lambda: {"data": [1, 0, 1]},
    lambda data: cs.cluster_ci(data, "y", by="g"),
    Raises(cs.InvalidInputError, r"data must be a pandas DataFrame.*got list"),
)
case(
    "cluster_ci: a numpy array as data",
    lambda: {"data": np.ones((4, 2))},
    lambda data: cs.cluster_ci(data, "y", by="g"),
    Raises(cs.InvalidInputError, r"got ndarray"),
)
case(
    "cluster_ci: a Series as data",
    lambda: {"data": frame()["y"]},
    lambda data: cs.cluster_ci(data, "y", by="g"),
    Raises(cs.InvalidInputError, r"got Series"),
)
case(
    "paired_delta: arrays (data=None)",
    lambda: {},
    lambda: cs.paired_delta(None, None, "y", by="g"),
    Raises(cs.InvalidInputError, r"paired_delta needs a DataFrame"),
)
case(
    "paired_delta: the stratum column is also the cluster column",
    # every stratum then holds one cluster: the lonely-stratum error, as in cluster_ci
    # (before: a raw pandas ValueError from the column taken twice)
    lambda: {"a": frame(), "b": frame(seed=1)},
    lambda a, b: cs.paired_delta(a, b, "y", by="g", on="item", strata="g"),
    Raises(cs.TooFewClustersError, r"30 strata have a single cluster"),
)
case(
    "compare: arrays (data=None)",
    lambda: {},
    lambda: cs.compare(None, "y", by="g", model="model"),
    Raises(cs.InvalidInputError, r"compare needs a DataFrame"),
)

# -- arrays (data=None) -----------------------------------------------------------------------

case(
    "arrays: a shuffled Series is paired by position, not by its index",
    # y = g % 2 puts every cluster's rows at 0 or at 1: no within-cluster variation, so the
    # ICC is 1 (with the Series' own, shuffled index it came out near 0 before)
    lambda: {
        "f": frame().assign(y=lambda d: (d["g"] % 2).astype(float)).sample(frac=1.0, random_state=0)
    },
    lambda f: cs.icc(None, f["y"], f["g"].to_numpy()),
    Warns(
        cs.DegenerateDataWarning,
        r"no within-cluster variation",
        check=lambda r: r.icc == 1.0,
    ),
)
case(
    "arrays: outcome and by of different lengths",
    lambda: {"y": np.ones(10), "g": np.arange(12)},
    lambda y, g: cs.cluster_ci(None, y, g),
    Raises(cs.InvalidDataError, r"outcome has 10 values but by has 12"),
)
case(
    "arrays: a two-dimensional outcome",
    lambda: {"y": np.ones((10, 2)), "g": np.arange(10)},
    lambda y, g: cs.cluster_ci(None, y, g),
    Raises(cs.InvalidDataError, r"outcome must be one-dimensional.*shape \(10, 2\)"),
)
case(
    "arrays: a two-dimensional by",
    lambda: {"y": np.ones(10), "g": np.zeros((10, 2))},
    lambda y, g: cs.cluster_ci(None, y, g),
    Raises(cs.InvalidDataError, r"by must be one-dimensional"),
)
case(
    "arrays: a DataFrame as the outcome",
    lambda: {"f": frame()},
    lambda f: cs.cluster_ci(None, f[["y", "score"]], f["g"]),
    Raises(cs.InvalidDataError, r"outcome must be one-dimensional.*DataFrame with 2 columns"),
)
case(
    "arrays: a scalar outcome",
    lambda: {"g": np.arange(10)},
    lambda g: cs.cluster_ci(None, 1.0, g),
    Raises(cs.InvalidDataError, r"outcome must be an array of one value per row"),
)
case(
    "arrays: a ragged nested list",
    lambda: {},
    lambda: cs.cluster_ci(None, [[1, 0], [1]], [1, 2]),
    Raises(cs.InvalidDataError, r"outcome must be one-dimensional"),
)
case(
    "arrays: plain lists give the frame's numbers",
    # the same rows as a frame: the two entry points must agree exactly
    lambda: {"f": frame()},
    lambda f: (
        cs.cluster_ci(None, f["y"].tolist(), f["g"].tolist()),
        cs.cluster_ci(f, "y", by="g"),
    ),
    Returns(
        check=lambda pair: pair[0].to_frame().iloc[:, 2:].equals(pair[1].to_frame().iloc[:, 2:])
    ),
)

# -- column labels ----------------------------------------------------------------------------

case(
    "by= a Series instead of its name",
    lambda: {"f": frame()},
    lambda f: cs.cluster_ci(f, "y", by=f["g"]),
    Raises(cs.InvalidInputError, r"by= takes column labels, not a Series \(pass its name, 'g'\)"),
)
case(
    "outcome= a Series instead of its name",
    lambda: {"f": frame()},
    lambda f: cs.cluster_ci(f, f["y"], by="g"),
    Raises(cs.InvalidInputError, r"outcome= takes column labels, not a Series"),
)
case(
    "by= a numpy array",
    lambda: {"f": frame()},
    lambda f: cs.cluster_ci(f, "y", by=f["g"].to_numpy()),
    Raises(cs.InvalidInputError, r"by= takes column labels, not a ndarray"),
)
case(
    "by= an empty list",
    lambda: {"f": frame()},
    lambda f: cs.cluster_ci(f, "y", by=[]),
    Raises(cs.InvalidOptionError, r"by= needs at least one column"),
)
case(
    "by= a column that is not there",
    lambda: {"f": frame()},
    lambda f: cs.cluster_ci(f, "y", by="doc"),
    Raises(cs.ColumnNotFoundError, r"column 'doc' not found; available columns: 'g'"),
)
case(
    "outcome column that is not there",
    lambda: {"f": frame()},
    lambda f: cs.cluster_ci(f, "passed", by="g"),
    Raises(cs.ColumnNotFoundError, r"column 'passed' not found"),
)
case(
    "over= a column that is not there",
    lambda: {"f": frame()},
    lambda f: cs.cluster_ci(f, "y", by="g", over="model"),
    Raises(cs.ColumnNotFoundError, r"column 'model' not found"),
)
case(
    "strata= a column that is not there",
    lambda: {"f": frame()},
    lambda f: cs.cluster_ci(f, "y", by="g", strata="category"),
    Raises(cs.ColumnNotFoundError, r"column 'category' not found"),
)
case(
    "responded= a column that is not there",
    lambda: {"f": frame()},
    lambda f: cs.cluster_ci(f, "y", by="g", responded="answered"),
    Raises(cs.ColumnNotFoundError, r"column 'answered' not found"),
)
case(
    "duplicate column labels for the outcome",
    lambda: {"f": pd.DataFrame([[1, 0, 1], [0, 1, 2]] * 10, columns=["y", "y", "g"])},
    lambda f: cs.cluster_ci(f, "y", by="g"),
    Raises(cs.InvalidDataError, r"column 'y' appears 2 times in the frame"),
)
case(
    "duplicate column labels for the cluster",
    lambda: {"f": pd.DataFrame([[1, 0, 1], [0, 1, 2]] * 10, columns=["y", "g", "g"])},
    lambda f: cs.cluster_ci(f, "y", by="g"),
    Raises(cs.InvalidDataError, r"column 'g' appears 2 times"),
)
case(
    "the outcome is also the cluster column",
    lambda: {"f": frame()},
    lambda f: cs.cluster_ci(f, "g", by="g"),
    Raises(cs.InvalidOptionError, r"column 'g' is both the outcome and by="),
)
case(
    "the outcome is also the over= column",
    lambda: {"f": frame()},
    lambda f: cs.cluster_ci(f, "y", by="g", over="y"),
    Raises(cs.InvalidOptionError, r"column 'y' is both the outcome and over="),
)
case(
    "the outcome is also the weights column (each row weighted by its own score)",
    lambda: {"f": frame()},
    lambda f: cs.cluster_ci(f, "y", by="g", weights="y"),
    Raises(cs.InvalidOptionError, r"column 'y' is both the outcome and weights="),
)
case(
    "dask: the outcome is also the cluster column",
    lambda: {"f": dd.from_pandas(frame(), npartitions=2)},
    lambda f: cs.cluster_ci(f, "g", by="g"),
    Raises(cs.InvalidOptionError, r"column 'g' is both the outcome and by="),
)
case(
    "compare: the outcome is also the model column",
    lambda: {"f": long_models()},
    lambda f: cs.compare(f, "model", by="g", model="model", on="item"),
    Raises(cs.InvalidOptionError, r"column 'model' is both the outcome and model="),
)
case(
    "paired_delta: on=[]",
    lambda: {"f": frame()},
    lambda f: cs.paired_delta(f, f.assign(y=1 - f["y"]), "y", by="g", on=[]),
    Raises(cs.InvalidOptionError, r"on= needs at least one column"),
)

# -- cluster ids ------------------------------------------------------------------------------

case(
    "list-valued cluster ids",
    lambda: {"f": pd.DataFrame({"y": [1, 0] * 20, "g": [[i] for i in range(20) for _ in (0, 1)]})},
    lambda f: cs.cluster_ci(f, "y", by="g"),
    Raises(cs.InvalidClusterError, r"column 'g' holds list values \(e\.g\. \[0\]\)"),
)
case(
    "dict-valued cluster ids",
    lambda: {
        "f": pd.DataFrame({"y": [1, 0] * 20, "g": [{"id": i} for i in range(20) for _ in (0, 1)]})
    },
    lambda f: cs.cluster_ci(f, "y", by="g"),
    Raises(cs.InvalidClusterError, r"column 'g' holds dict values"),
)
case(
    "list-valued over= groups",
    lambda: {"f": frame().assign(grp=lambda d: [[v] for v in d["grp"]])},
    lambda f: cs.cluster_ci(f, "y", by="g", over="grp"),
    Raises(cs.InvalidClusterError, r"column 'grp' holds list values"),
)
case(
    "list-valued model labels in compare",
    lambda: {"f": long_models().assign(model=lambda d: [[m] for m in d["model"]])},
    lambda f: cs.compare(f, "y", by="g", model="model", on="item"),
    Raises(cs.InvalidClusterError, r"column 'model' holds list values"),
)
case(
    "missing cluster ids",
    lambda: {"f": frame().assign(g=lambda d: d["g"].where(d.index != 5))},
    lambda f: cs.cluster_ci(f, "y", by="g"),
    Raises(cs.InvalidClusterError, r"cluster column 'g' has 1 missing ids \(rows \[5\]"),
)
case(
    "a single cluster",
    lambda: {"f": frame().assign(g=0)},
    lambda f: cs.cluster_ci(f, "y", by="g"),
    Raises(cs.TooFewClustersError, r"found 1 cluster; at least 2 are needed"),
)
case(
    "paired_delta: a single shared cluster (an eval still running)",
    lambda: {"f": frame().assign(g=0)},
    lambda f: cs.paired_delta(f, f.assign(y=1 - f["y"]), "y", "g", on="item"),
    Raises(cs.TooFewClustersError, r"found 1 cluster with items on both sides"),
)
case(
    "an over= group with a single cluster is named",
    lambda: {"f": pd.concat([frame(), frame(2, seed=3).assign(g=99, grp="lonely")])},
    lambda f: cs.cluster_ci(f, "y", by="g", over="grp"),
    Raises(cs.TooFewClustersError, r"group 'lonely' of 'grp': found 1 cluster"),
)
case(
    "icc: an over= group with a single cluster is named",
    lambda: {"f": pd.concat([frame(), frame(2, seed=3).assign(g=99, grp="lonely")])},
    lambda f: cs.icc(f, "y", by="g", over="grp"),
    Raises(cs.TooFewClustersError, r"group 'lonely' of 'grp'"),
)
case(
    "design_effect: an over= group with a single cluster is named",
    lambda: {"f": pd.concat([frame(), frame(2, seed=3).assign(g=99, grp="lonely")])},
    lambda f: cs.design_effect(f, "y", by="g", over="grp"),
    Raises(cs.TooFewClustersError, r"group 'lonely' of 'grp'"),
)
case(
    "dask: an over= group with a single cluster is named",
    lambda: {
        "f": dd.from_pandas(
            pd.concat([frame(), frame(2, seed=3).assign(g=99, grp="z")]), npartitions=3
        )
    },
    lambda f: cs.cluster_ci(f, "y", by="g", over="grp"),
    Raises(cs.TooFewClustersError, r"group 'z' of 'grp'"),
)
case(
    "an over= group whose outcomes are all missing is named",
    lambda: {"f": frame().assign(y=lambda d: d["y"].where(d["grp"] == "a"))},
    lambda f: cs.cluster_ci(f, "y", by="g", over="grp"),
    Raises(cs.EmptyDataError, r"outcome 'y' has no non-missing values in group 'b' of 'grp'"),
)

# -- outcomes ---------------------------------------------------------------------------------

case(
    "text outcome",
    lambda: {"f": frame().assign(y=lambda d: np.where(d["y"] > 0, "pass", "fail"))},
    lambda f: cs.cluster_ci(f, "y", by="g"),
    Raises(cs.InvalidOutcomeError, r"outcome column 'y' has dtype .*not numeric.*eq\('pass'\)"),
)
case(
    "complex outcome",
    lambda: {"f": frame().assign(y=lambda d: d["y"] + 1j)},
    lambda f: cs.cluster_ci(f, "y", by="g"),
    Raises(cs.InvalidOutcomeError, r"outcome column 'y' has dtype complex128"),
)
case(
    "datetime outcome",
    lambda: {"f": frame().assign(y=pd.Timestamp("2024-01-01"))},
    lambda f: cs.cluster_ci(f, "y", by="g"),
    Raises(cs.InvalidOutcomeError, r"outcome column 'y' has dtype datetime64"),
)
case(
    "an infinite outcome",
    lambda: {"f": frame().assign(score=lambda d: d["score"].where(d.index != 3, np.inf))},
    lambda f: cs.cluster_ci(f, "score", by="g"),
    Raises(cs.InvalidOutcomeError, r"outcome column 'score' contains infinite values"),
)
case(
    "dask: an infinite outcome",
    lambda: {
        "f": dd.from_pandas(
            frame().assign(score=lambda d: d["score"].where(d.index != 3, -np.inf)), npartitions=2
        )
    },
    lambda f: cs.cluster_ci(f, "score", by="g"),
    Raises(cs.InvalidOutcomeError, r"outcome column 'score' contains infinite values"),
)
case(
    "every outcome missing",
    lambda: {"f": frame().assign(y=np.nan)},
    lambda f: cs.cluster_ci(f, "y", by="g"),
    Raises(cs.EmptyDataError, r"outcome 'y' has no non-missing values"),
)
case(
    "an empty frame",
    lambda: {"f": frame().iloc[:0]},
    lambda f: cs.cluster_ci(f, "y", by="g"),
    Raises(cs.EmptyDataError, r"the frame has no rows"),
)
case(
    "missing outcomes under missing='raise'",
    lambda: {"f": frame().assign(y=lambda d: d["y"].where(d.index % 7 != 0))},
    lambda f: cs.cluster_ci(f, "y", by="g", missing="raise"),
    Raises(cs.MissingOutcomeError, r"outcome column 'y' has 18 missing values"),
)
case(
    "missing='fail' on a continuous score",
    lambda: {"f": frame().assign(score=lambda d: d["score"].where(d.index != 2))},
    lambda f: cs.cluster_ci(f, "score", by="g", missing="fail"),
    Raises(cs.InvalidOutcomeError, r"missing='fail' counts a missing outcome as 0.*binary"),
)
case(
    "wilson on a continuous score",
    lambda: {"f": frame()},
    lambda f: cs.cluster_ci(f, "score", by="g", method="wilson"),
    Raises(cs.InvalidOutcomeError, r"method 'wilson' needs a binary outcome"),
)
case(
    "korn_graubard on the score group of an over= column names the group",
    lambda: {
        "f": pd.concat(
            [frame().assign(grp="bin"), frame(seed=5).assign(y=lambda d: d["score"], grp="cont")]
        )
    },
    lambda f: cs.cluster_ci(f, "y", by="g", over="grp", method="korn_graubard"),
    Raises(cs.InvalidOutcomeError, r"needs a binary outcome.*in group 'cont' of 'grp'"),
)
case(
    "binary and continuous over= groups each get their own method",
    # the documented per-group rule: a 0/1 group gets the hybrid Korn-Graubard, a score
    # group the studentized bootstrap
    lambda: {
        "f": pd.concat(
            [frame().assign(grp="bin"), frame(seed=5).assign(y=lambda d: d["score"], grp="cont")]
        )
    },
    lambda f: cs.cluster_ci(f, "y", by="g", over="grp").to_frame()["method"].tolist(),
    Returns(check=lambda methods: methods == ["korn_graubard_hybrid", "bootstrap_t"]),
)
case(
    "a constant score",
    lambda: {"f": frame().assign(score=0.3)},
    lambda f: cs.cluster_ci(f, "score", by="g"),
    Raises(cs.DegenerateDataError, r"all 120 outcomes equal 0\.3: a continuous outcome"),
)
case(
    "a score constant up to rounding (0.1 * 3 and 0.3)",
    lambda: {"y": np.tile([0.1 * 3, 0.3], 60), "g": np.repeat(np.arange(30), 4)},
    lambda y, g: cs.cluster_ci(None, y, g, method="cr2"),
    Raises(cs.DegenerateDataError, r"all 120 outcomes equal 0\.3 up to rounding"),
)
case(
    "a score of 1e9 constant up to rounding",
    lambda: {"y": 1e9 + np.tile([0.0, 1.2e-7], 60), "g": np.repeat(np.arange(30), 4)},
    lambda y, g: cs.cluster_ci(None, y, g, method="cr1"),
    Raises(cs.DegenerateDataError, r"up to rounding"),
)
case(
    "a small but real spread near zero is not rounding",
    # values 0 and 1e-12: their spread is real, and CR2 gives a positive interval
    lambda: {"y": np.tile([0.0, 1e-12, 0.0, 2e-12], 30), "g": np.repeat(np.arange(40), 3)},
    lambda y, g: cs.cluster_ci(None, y, g, method="cr2"),
    Returns(check=lambda r: r.high > r.low > -1e-11),
)
case(
    "guarded: every outcome passes (Clopper-Pearson on the 30 clusters)",
    lambda: {"f": frame().assign(y=1.0)},
    lambda f: cs.cluster_ci(f, "y", by="g", method="korn_graubard_guarded"),
    Warns(
        cs.DegenerateDataWarning, r"all 120 outcomes are 1", check=check_bounds(*cp_bounds(30, 30))
    ),
)
case(
    # the inverted interval assumes the largest ICC, 0.98: n0 = 120 / (1 + 0.98 * 3), and
    # the mid-p lower bound solves mu^n0 / 2 = 0.025
    "inverted: every outcome passes (mid-p on the effective n at ICC 0.98)",
    lambda: {"f": frame().assign(y=1.0)},
    lambda f: cs.cluster_ci(f, "y", by="g", method="korn_graubard_inverted"),
    Warns(
        cs.DegenerateDataWarning,
        r"all 120 outcomes are 1: the data cannot show how strongly they cluster",
        check=check_bounds(0.05 ** (1 / (120 / (1 + 0.98 * 3))), 1.0),
    ),
)
case(
    # no overdispersion: the restricted ICC is 0 for every candidate, so the inverted
    # interval is the mid-p binomial interval on the 120 rows
    "inverted: every cluster has the same pass rate (mid-p on 60 of 120 rows)",
    lambda: {"f": frame().assign(y=lambda d: (d["item"] % 2).astype(float))},
    lambda f: cs.cluster_ci(f, "y", by="g", method="korn_graubard_inverted"),
    Returns(check=check_bounds(*mid_p_bounds(60, 120))),
)
case(
    "guarded: every cluster has the same pass rate (Clopper-Pearson on 30 clusters at 0.5)",
    lambda: {"f": frame().assign(y=lambda d: (d["item"] % 2).astype(float))},
    lambda f: cs.cluster_ci(f, "y", by="g", method="korn_graubard_guarded"),
    Warns(
        cs.DegenerateDataWarning,
        r"every cluster has the same pass rate",
        check=check_bounds(*cp_bounds(15, 30)),
    ),
)


def _check_unbounded_upper_side(result):
    assert math.isinf(result.high)
    assert result.low < result.estimate
    assert any("cannot bound the upper side" in n for n in result.notes)


case(
    "bootstrap_t with strata (not defined there: the methods that are)",
    lambda: {"f": frame()},
    lambda f: cs.cluster_ci(f, "y", by="g", strata="st", method="bootstrap_t"),
    Raises(cs.InvalidOptionError, r"with strata, method must be one of .*got 'bootstrap_t'"),
)
case(
    "bootstrap_t with missing='ipw' (not defined there: the methods that are)",
    lambda: {"f": frame().assign(y=lambda d: d["y"].where(d["item"] % 7 != 0))},
    lambda f: cs.cluster_ci(f, "y", by="g", missing="ipw", method="bootstrap_t"),
    Raises(cs.InvalidOptionError, r"missing='ipw' .*got 'bootstrap_t'"),
)
case(
    # one cluster of 20 carries every nonzero score: 36% of the replicates miss it and have
    # no spread, so the upper bound is infinite and a note says why
    "bootstrap_t: one cluster carries every nonzero score (an infinite bound, with a note)",
    lambda: {
        "f": pd.DataFrame({"g": np.repeat(np.arange(20), 3), "s": [4.0, 7.0, 1.0] + [0.0] * 57})
    },
    lambda f: cs.cluster_ci(f, "s", by="g", method="bootstrap_t", n_resamples=999, rng=1),
    Returns(check=_check_unbounded_upper_side),
)

# -- options ----------------------------------------------------------------------------------

for label, value in [
    ("a string", "0.95"),
    ("a bool", True),
    ("95", 95),
    ("zero", 0),
    ("NaN", float("nan")),
    ("1e-300", 1e-300),
    ("None", None),
]:
    case(
        f"confidence {label}",
        lambda: {"f": frame()},
        lambda f, value=value: cs.cluster_ci(f, "y", by="g", confidence=value),
        Raises(cs.InvalidOptionError, r"confidence"),
    )
for option, value, pattern in [
    ("method", "cr4", r"method must be one of .*got 'cr4'"),
    ("estimand", "mean", r"estimand must be one of \('pooled', 'cluster_mean'\), got 'mean'"),
    ("missing", "dropna", r"missing must be one of .*got 'dropna'"),
    ("lonely", "skip", r"lonely must be one of .*got 'skip'"),
    ("rng", "abc", r"rng must be None, a non-negative integer seed"),
    ("rng", -1, r"rng must be None"),
    ("rng", 1.5, r"rng must be None"),
    ("n_resamples", 0, r"n_resamples must be a positive integer, got 0"),
    ("n_resamples", 2.5, r"n_resamples must be a positive integer"),
    ("n_resamples", True, r"n_resamples must be a positive integer"),
    ("icc", 1.5, r"icc"),
    ("nest", "yes", r"nest must be True or False"),
    ("cap_n_eff", "no", r"cap_n_eff must be True or False"),
    ("empty_clusters", "ignore", r"empty_clusters must be one of \('drop', 'keep'\)"),
]:
    case(
        f"cluster_ci: {option}={value!r}",
        lambda: {"f": frame()},
        lambda f, option=option, value=value: cs.cluster_ci(f, "y", by="g", **{option: value}),
        Raises(cs.InvalidOptionError, pattern),
    )
case(
    "bootstrap with too few resamples for its tails",
    lambda: {"f": frame()},
    lambda f: cs.cluster_ci(f, "y", by="g", method="bootstrap", n_resamples=20),
    Raises(cs.InvalidOptionError, r"n_resamples=20 is too few for a 0\.95 interval.*at least 40"),
)
case(
    "a 99% bootstrap needs 200 resamples",
    lambda: {"f": frame()},
    lambda f: cs.cluster_ci(
        f, "y", by="g", method="bootstrap_percentile", confidence=0.99, n_resamples=150
    ),
    Raises(cs.InvalidOptionError, r"at least 200"),
)
case(
    "an analytic method ignores n_resamples (it draws nothing)",
    lambda: {"f": frame()},
    lambda f: cs.cluster_ci(f, "y", by="g", method="cr2", n_resamples=3),
    Returns(check=check_method("cr2")),
)
case(
    "compare always resamples (rank intervals): too few resamples",
    lambda: {"f": long_models()},
    lambda f: cs.compare(f, "y", by="g", model="model", on="item", n_resamples=10),
    Raises(cs.InvalidOptionError, r"n_resamples=10 is too few"),
)
case(
    "empty_clusters='keep' with the default method",
    lambda: {"f": frame()},
    lambda f: cs.cluster_ci(f, "y", by="g", empty_clusters="keep"),
    Raises(
        cs.InvalidOptionError, r"empty_clusters='keep' is R survey's convention.*got method='auto'"
    ),
)
case(
    "empty_clusters='keep' with strata",
    lambda: {"f": frame()},
    lambda f: cs.cluster_ci(f, "y", by="g", strata="st", method="cr1", empty_clusters="keep"),
    Raises(
        cs.InvalidOptionError, r"empty_clusters='keep' applies to missing='drop' without strata="
    ),
)
case(
    "positional options are refused (keyword-only)",
    lambda: {"f": frame()},
    lambda f: cs.cluster_ci(f, "y", "g", "cr2"),
    Raises(TypeError, r"positional argument"),
)

# -- conventions ------------------------------------------------------------------------------


def below_one_deff() -> pd.DataFrame:
    """24 clusters of 4 rows, almost every one with 2 passes: a design effect below 1."""
    passes = [2, 2, 2, 2, 2, 1, 3, 2, 2, 2, 2, 2, 3, 1, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2]
    return pd.DataFrame(
        [(g, 1.0 if i < s else 0.0) for g, s in enumerate(passes) for i in range(4)],
        columns=["g", "y"],
    )


def one_empty_cluster() -> pd.DataFrame:
    """14 clusters with data and one whose 3 outcomes are all missing."""
    passes = [1, 3, 0, 2, 4, 1, 2, 3, 0, 1, 2, 4, 3, 1]
    rows = [(g, 1.0 if i < s else 0.0) for g, s in enumerate(passes) for i in range(4)]
    return pd.DataFrame(rows + [(15, np.nan)] * 3, columns=["g", "y"])


case(
    "korn_graubard caps the effective n at the rows, with a note",
    lambda: {"f": below_one_deff()},
    lambda f: cs.cluster_ci(f, "y", by="g", method="korn_graubard"),
    # capped: Clopper-Pearson on 48 of 96 rows
    Returns(
        check=lambda r: (
            (r.low, r.high) == pytest.approx(cp_bounds(48, 96), rel=1e-12)
            and any("design effect is below 1" in n for n in r.notes)
        )
    ),
)
case(
    "korn_graubard uncapped is R survey's svyciprop",
    # R 4.2.2, survey 4.1.1: svyciprop(~y, svydesign(ids=~g, data=d), method="beta",
    # df=degf(design)) prints 0.455662189161827 0.544337810838173 (tests/r/conventions.R)
    lambda: {"f": below_one_deff()},
    lambda f: cs.cluster_ci(f, "y", by="g", method="korn_graubard", cap_n_eff=False),
    # bounds pass through t and beta quantiles: scipy 1.11 differs from R here by 4.8e-12
    # relatively, by up to 3e-9 elsewhere (tests/conformance/test_r_agreement.py, BOUND_TOL)
    Returns(check=check_bounds(0.455662189161827, 0.544337810838173, rel=1e-8)),
)
case(
    "a cluster whose outcomes are all missing is dropped, with a note",
    # R: svymean(~y, svydesign(ids=~g, data=d[!is.na(d$y), ])) gives se 0.088734562634666
    lambda: {"f": one_empty_cluster()},
    lambda f: cs.cluster_ci(f, "y", by="g", method="cr1"),
    Warns(
        cs.FewClustersWarning,
        r"only 14 clusters",
        check=lambda r: (
            r.se == pytest.approx(0.088734562634666, rel=1e-12)
            and any("empty_clusters='keep'" in n for n in r.notes)
        ),
    ),
)
case(
    "empty_clusters='keep' is R survey's svymean(na.rm=TRUE)",
    # R: svymean(~y, svydesign(ids=~g, data=d, weights=~1), na.rm=TRUE) gives se
    # 0.088507909486380 (tests/r/conventions.R)
    lambda: {"f": one_empty_cluster()},
    lambda f: cs.cluster_ci(f, "y", by="g", method="cr1", empty_clusters="keep"),
    Warns(
        cs.FewClustersWarning,
        r"only 14 clusters",
        check=lambda r: r.se == pytest.approx(0.088507909486380, rel=1e-12),
    ),
)

# -- icc and design_effect --------------------------------------------------------------------

case(
    "icc: no within-cluster variation has no interval",
    lambda: {"f": frame().assign(y=lambda d: (d["g"] % 2).astype(float))},
    lambda f: cs.icc(f, "y", by="g"),
    Warns(
        cs.DegenerateDataWarning,
        r"the ICC has no interval: there is no within-cluster variation",
        check=lambda r: r.icc == 1.0 and math.isnan(r.low) and math.isnan(r.high),
    ),
)
case(
    "icc: equal cluster means has no interval (ICC at -1/(n0-1) = -1/3)",
    lambda: {"f": frame().assign(y=lambda d: (d["item"] % 2).astype(float))},
    lambda f: cs.icc(f, "y", by="g"),
    Warns(
        cs.DegenerateDataWarning,
        r"every cluster has the same mean",
        check=lambda r: r.icc == pytest.approx(-1 / 3) and math.isnan(r.low),
    ),
)
case(
    "icc: all outcomes equal",
    lambda: {"f": frame().assign(y=1.0)},
    lambda f: cs.icc(f, "y", by="g"),
    Warns(
        cs.DegenerateDataWarning,
        r"the ICC is undefined: all outcomes are equal",
        check=lambda r: math.isnan(r.icc),
    ),
)
case(
    "icc: every cluster of one row",
    lambda: {"f": frame(size=1)},
    lambda f: cs.icc(f, "y", by="g"),
    Warns(
        cs.DegenerateDataWarning,
        r"every cluster has a single row",
        check=lambda r: math.isnan(r.icc),
    ),
)
case(
    "design_effect: all outcomes equal",
    lambda: {"f": frame().assign(y=0.0)},
    lambda f: cs.design_effect(f, "y", by="g"),
    Warns(
        cs.DegenerateDataWarning,
        r"the design effect is undefined",
        check=lambda r: math.isnan(r.design_effect) and math.isnan(r.linearized),
    ),
)

# -- paired_delta -----------------------------------------------------------------------------

case(
    "paired_delta: a constant difference of scores",
    lambda: {
        "a": frame().assign(y=lambda d: d["score"]),
        "b": frame().assign(y=lambda d: d["score"] - 0.25),
    },
    lambda a, b: cs.paired_delta(a, b, "y", by="g", on="item"),
    Raises(cs.DegenerateDataError, r"A - B is 0\.25 on every item"),
)
case(
    "paired_delta: identical scores",
    lambda: {"a": frame().assign(y=lambda d: d["score"])},
    lambda a: cs.paired_delta(a, a.copy(), "y", by="g", on="item"),
    Raises(cs.DegenerateDataError, r"identical values on every item"),
)
case(
    "paired_delta: binary sides that agree everywhere bound the discordance",
    # Clopper-Pearson on 0 of 30 clusters: bound = 1 - 0.025 ** (1 / 30)
    lambda: {"a": frame()},
    lambda a: cs.paired_delta(a, a.copy(), "y", by="g", on="item"),
    Warns(
        cs.DegenerateDataWarning,
        r"agree on every item",
        check=check_bounds(-(1 - 0.025 ** (1 / 30)), 1 - 0.025 ** (1 / 30)),
    ),
)
case(
    "paired_delta: binary sides that disagree everywhere the same way",
    # A passes and B fails every item: delta 1, lower bound 0.025 ** (1 / 30)
    lambda: {"a": frame().assign(y=1.0), "b": frame().assign(y=0.0)},
    lambda a, b: cs.paired_delta(a, b, "y", by="g", on="item"),
    Warns(
        cs.DegenerateDataWarning,
        r"differ on every item \(the first side passes each one\)",
        check=check_bounds(0.025 ** (1 / 30), 1.0),
    ),
)
case(
    "paired_delta: an item on one side only",
    lambda: {"a": frame(), "b": frame().iloc[1:]},
    lambda a, b: cs.paired_delta(a, b, "y", by="g", on="item"),
    Raises(cs.AlignmentError, r"1 items"),
)
case(
    "paired_delta: an item in different clusters on the two sides",
    lambda: {"a": frame(), "b": frame().assign(g=lambda d: d["g"].where(d.index != 0, 29))},
    lambda a, b: cs.paired_delta(a, b, "y", by="g", on="item"),
    Raises(cs.AlignmentError, r"cluster"),
)
case(
    "paired_delta: an on= column that is not there",
    lambda: {"a": frame()},
    lambda a: cs.paired_delta(a, a.assign(y=1 - a["y"]), "y", by="g", on="question"),
    Raises(cs.ColumnNotFoundError, r"column 'question' not found"),
)
case(
    "paired_delta: too few resamples for a bootstrap",
    lambda: {"a": frame()},
    lambda a: cs.paired_delta(
        a, a.assign(y=1 - a["y"]), "y", by="g", on="item", method="bootstrap", n_resamples=1
    ),
    Raises(cs.InvalidOptionError, r"n_resamples=1 is too few"),
)
case(
    "paired_delta: a stratified constant difference is a data error, not an option error",
    lambda: {
        "a": frame().assign(y=lambda d: d["score"]),
        "b": frame().assign(y=lambda d: d["score"] - 1.0),
    },
    lambda a, b: cs.paired_delta(a, b, "y", by="g", on="item", strata="st"),
    Raises(cs.DegenerateDataError, r"A - B is 1 on every item"),
)

# -- compare ----------------------------------------------------------------------------------

case(
    "compare: two identical models get no interval for their pair",
    lambda: {"f": long_models(offset=0.0, identical=True)},
    lambda f: cs.compare(f, "y", by="g", model="model", on="item", n_resamples=200, rng=0),
    Warns(
        cs.DegenerateDataWarning,
        r"1 pair has the same difference in every cluster.*'m1' - 'm2'",
        check=lambda r: math.isnan(r.pairs()["low"].iloc[0]) and r.pairs()["delta"].iloc[0] == 0.0,
    ),
)
case(
    "compare: a constant offset gets no interval",
    lambda: {"f": long_models(offset=0.25, identical=True)},
    lambda f: cs.compare(f, "y", by="g", model="model", on="item", n_resamples=200, rng=0),
    Warns(
        cs.DegenerateDataWarning,
        r"same difference in every cluster",
        check=lambda r: (
            r.pairs()["delta"].iloc[0] == pytest.approx(0.25)
            and math.isnan(r.pairs()["se"].iloc[0])
        ),
    ),
)
case(
    "compare: a single model",
    lambda: {"f": long_models().query("model == 'm1'")},
    lambda f: cs.compare(f, "y", by="g", model="model", on="item"),
    Raises(cs.InvalidOptionError, r"compare needs at least two models, found 1"),
)
case(
    "compare: missing model labels",
    lambda: {"f": long_models().assign(model=lambda d: d["model"].where(d.index != 4))},
    lambda f: cs.compare(f, "y", by="g", model="model", on="item"),
    Raises(cs.InvalidClusterError, r"model column 'model' has missing labels"),
)
case(
    "compare: an item listed twice for one model",
    lambda: {"f": pd.concat([long_models(), long_models().iloc[:2]], ignore_index=True)},
    lambda f: cs.compare(f, "y", by="g", model="model", on="item"),
    Raises(cs.AlignmentError, r"2 items have more than one row for one model"),
)
case(
    "compare: an unknown baseline",
    lambda: {"f": long_models()},
    lambda f: cs.compare(f, "y", by="g", model="model", on="item", baseline="m9", n_resamples=200),
    Raises(cs.InvalidOptionError, r"baseline 'm9' is not one of the models"),
)
case(
    "compare: an unknown adjustment",
    lambda: {"f": long_models()},
    lambda f: cs.compare(f, "y", by="g", model="model", on="item", adjust="bonferroni"),
    Raises(cs.InvalidOptionError, r"adjust must be one of"),
)

# -- stratum_table and strata -----------------------------------------------------------------


def lonely_stratum() -> pd.DataFrame:
    f = frame()
    return f.assign(st=np.where(f["g"] == 0, "lonely", "rest"))


case(
    "strata: a lonely stratum under lonely='fail' is named",
    lambda: {"f": lonely_stratum()},
    lambda f: cs.cluster_ci(f, "y", by="g", strata="st"),
    Raises(cs.TooFewClustersError, r"1 stratum has a single cluster.*\['lonely'\]; choose lonely="),
)
case(
    "stratum_table: a lonely stratum under lonely='fail' is named",
    lambda: {"f": lonely_stratum()},
    lambda f: cs.stratum_table(f, "y", by="g", strata="st"),
    Raises(cs.TooFewClustersError, r"\['lonely'\]"),
)
case(
    "stratum_table: a lonely stratum under lonely='adjust' gets a row without an interval",
    lambda: {"f": lonely_stratum()},
    lambda f: cs.stratum_table(f, "y", by="g", strata="st", lonely="adjust"),
    Returns(
        check=lambda t: (
            t.set_index("stratum").loc["lonely", "method"] == "undefined (single cluster)"
            and math.isnan(t.set_index("stratum").loc["lonely", "low"])
            and any("stratum 'lonely' of 'st' has a single cluster" in n for n in t.attrs["notes"])
        )
    ),
)
case(
    "strata: missing stratum labels",
    lambda: {"f": frame().assign(st=lambda d: d["st"].where(d.index != 0))},
    lambda f: cs.cluster_ci(f, "y", by="g", strata="st"),
    Raises(cs.InvalidClusterError, r"st"),
)
case(
    "strata: a cluster in two strata without nest=True",
    lambda: {"f": frame().assign(st=lambda d: np.where(d.index % 2 == 0, "x", "y"))},
    lambda f: cs.cluster_ci(f, "y", by="g", strata="st"),
    Raises(cs.InvalidClusterError, r"nest=True"),
)
case(
    "strata: a zero stratified variance falls back to Clopper-Pearson on 30 clusters",
    lambda: {
        "f": frame().assign(
            y=lambda d: np.where(
                d["st"] == "even", (d["item"] % 2 == 0), (d["item"] % 4 == 0)
            ).astype(float)
        )
    },
    # every even cluster passes 2 of 4, every odd one 1 of 4: mean 0.375, x = 0.375 * 30
    lambda f: cs.cluster_ci(f, "y", by="g", strata="st"),
    Warns(
        cs.DegenerateDataWarning,
        r"stratified variance is zero",
        check=check_bounds(*cp_bounds(0.375 * 30, 30)),
    ),
)

# -- missing_report and ipw -------------------------------------------------------------------

case(
    "missing_report: nothing is missing (documented: nothing to report)",
    lambda: {"f": frame()},
    lambda f: cs.missing_report(f, "y", by="g"),
    Raises(cs.InvalidOptionError, r"outcome 'y' has no missing values: nothing to report"),
)
case(
    "ipw: every observed outcome passes (Clopper-Pearson on 30 clusters)",
    lambda: {
        "f": frame().assign(y=lambda d: pd.Series(1.0, index=d.index).where(d.index % 5 != 0))
    },
    lambda f: cs.cluster_ci(f, "y", by="g", missing="ipw"),
    Warns(
        cs.DegenerateDataWarning,
        r"no spread across clusters",
        check=check_bounds(0.025 ** (1 / 30), 1.0),
    ),
)
case(
    "ipw: propensity covariates without propensity='logistic'",
    lambda: {"f": frame()},
    lambda f: cs.cluster_ci(f, "y", by="g", missing="ipw", covariates=["score"]),
    Raises(cs.InvalidOptionError, r"covariates= need propensity='logistic'"),
)
case(
    "ipw with strata",
    lambda: {"f": frame()},
    lambda f: cs.cluster_ci(f, "y", by="g", missing="ipw", strata="st"),
    Raises(cs.InvalidOptionError, r"strata= and missing='ipw' cannot be combined"),
)

# -- Datasets ---------------------------------------------------------------------------------

case(
    "Dataset: an unknown outcome variable",
    lambda: {"ds": dataset()},
    lambda ds: cs.cluster_ci(ds, "passed"),
    Raises(cs.ColumnNotFoundError, r"column 'passed' not found"),
)
case(
    "Dataset: no rerun dim",
    lambda: {"ds": xr.Dataset({"y": (("case", "trial"), np.ones((10, 2)))})},
    lambda ds: cs.cluster_ci(ds, "y"),
    Raises(cs.DimensionError, r"no rerun dim 'rerun'"),
)
case(
    "Dataset: over= is refused with the reason",
    lambda: {"ds": dataset()},
    lambda ds: cs.cluster_ci(ds, "y", over="model"),
    Raises(cs.InvalidOptionError, r"over= is for DataFrames"),
)
case(
    "Dataset: runs all equal within every case (ICC 1, no interval)",
    lambda: {"ds": dataset(np.repeat((np.arange(24) % 2)[:, None], 3, axis=1).astype(float))},
    lambda ds: cs.icc(ds, "y"),
    Warns(
        cs.DegenerateDataWarning,
        r"no within-cluster variation",
        check=lambda r: r.icc == 1.0 and math.isnan(r.high),
    ),
)
case(
    "Dataset, inverted: every case passes 1 of 2 runs (mid-p on 30 of 60 runs)",
    lambda: {"ds": dataset(np.tile([1.0, 0.0], (30, 1)))},
    lambda ds: cs.cluster_ci(ds, "y", method="korn_graubard_inverted"),
    Returns(check=check_bounds(*mid_p_bounds(30, 60))),
)
case(
    "Dataset, guarded: every case passes 1 of 2 runs (Clopper-Pearson on 30 cases at 0.5)",
    lambda: {"ds": dataset(np.tile([1.0, 0.0], (30, 1)))},
    lambda ds: cs.cluster_ci(ds, "y", method="korn_graubard_guarded"),
    Warns(
        cs.DegenerateDataWarning,
        r"every cluster has the same pass rate",
        check=check_bounds(*cp_bounds(15, 30)),
    ),
)


# -- sparse paired differences: the side the studentized bootstrap cannot bound ----------------
# 300 items in 30 documents of 10: both systems pass every item but the few named. Most
# bootstrap draws hold none of those documents, so their t is infinite on one side; that
# side is bounded by the discordant items' own clustered rate, cluster_ci's default upper
# bound on the share of items where one system alone passes (the reference, computed in
# the check: delta = p(A alone) - p(B alone) <= p(A alone)).


def sparse(a_fails=(), b_fails=()) -> dict[str, pd.DataFrame]:
    a, b = np.ones(300), np.ones(300)
    a[list(a_fails)], b[list(b_fails)] = 0.0, 0.0
    return {"data": pd.DataFrame({"item": range(300), "doc": np.arange(300) // 10, "a": a, "b": b})}


def rate_upper(failing) -> float:
    """cluster_ci's default upper bound on the share of the 300 items in ``failing``."""
    events = np.zeros(300)
    events[list(failing)] = 1.0
    data = pd.DataFrame({"doc": np.arange(300) // 10, "e": events})
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", cs.ClusterStatsWarning)
        return cs.cluster_ci(data, "e", by="doc").high


def bounded_by_discordance(*, upper=None, lower=None) -> Returns:
    """The unbounded side is the discordant items' rate bound; the other stays finite."""

    def check(result) -> None:
        if upper is not None:
            assert result.high == pytest.approx(rate_upper(upper), rel=1e-12)
            assert result.low < result.delta < result.high < 0.2
        if lower is not None:
            assert result.low == pytest.approx(-rate_upper(lower), rel=1e-12)
            assert -0.2 < result.low < result.delta < result.high
        assert any("clustered rate of items where" in n for n in result.notes)

    return Returns(check)


def compare_sparse(data):
    """compare's pair a - b, with its interval and notes, from the long frame of a and b and
    a third system ``c``."""
    long = pd.concat(
        [data.assign(y=data[m], model=m)[["item", "doc", "y", "model"]] for m in ("a", "b")]
        + [
            data.assign(y=(np.arange(300) % 3 > 0).astype(float), model="c")[
                ["item", "doc", "y", "model"]
            ]
        ]
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", cs.ClusterStatsWarning)
        result = cs.compare(long, "y", by="doc", model="model", on="item")
    row = result.pairs().query("model_a == 'a' and model_b == 'b'").iloc[0]
    return SimpleNamespace(low=row["low"], high=row["high"], delta=row["delta"], notes=result.notes)


def paired_sparse(data):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", cs.ClusterStatsWarning)
        return cs.paired_delta(data, "a", "b", by="doc")


case(
    "paired_delta: B fails one item, A none",
    lambda: sparse(b_fails=[5]),
    paired_sparse,
    bounded_by_discordance(upper=[5]),
)
case(
    "paired_delta: A fails one item, B none",
    lambda: sparse(a_fails=[5]),
    paired_sparse,
    bounded_by_discordance(lower=[5]),
)
case(
    "paired_delta: B fails two items of one document",
    lambda: sparse(b_fails=[5, 6]),
    paired_sparse,
    bounded_by_discordance(upper=[5, 6]),
)
case(
    "paired_delta: B fails three items in three documents",
    lambda: sparse(b_fails=[5, 57, 140]),
    paired_sparse,
    bounded_by_discordance(upper=[5, 57, 140]),
)
case(
    "compare: the pair whose B fails one item, A none",
    lambda: sparse(b_fails=[5]),
    compare_sparse,
    bounded_by_discordance(upper=[5]),
)
case(
    "compare: the pair whose A fails two items",
    lambda: sparse(a_fails=[5, 150]),
    compare_sparse,
    bounded_by_discordance(lower=[5, 150]),
)


# -- crossed groupings with a single level -----------------------------------------------------
# Questions q crossed with templates t, where every row has the one template "only": the
# two-way variance needs two clusters in every grouping, so the error names the grouping.


def one_template() -> dict[str, pd.DataFrame]:
    rng = np.random.default_rng(7)
    return {
        "data": pd.DataFrame(
            {
                "item": range(200),
                "q": np.arange(200) // 4,
                "t": "only",
                "half": np.where(np.arange(200) < 100, "first", "second"),
                "y": (rng.random(200) < 0.6).astype(float),
            }
        )
    }


SINGLE_LEVEL = r"crossed grouping 't' has a single level"
case(
    "cluster_ci crossed: a grouping with one level",
    one_template,
    lambda data: cs.cluster_ci(data, "y", by=["q", "t"], crossed=True),
    Raises(cs.TooFewClustersError, SINGLE_LEVEL),
)
case(
    "cluster_ci crossed, over=: the group and the grouping are named",
    one_template,
    lambda data: cs.cluster_ci(data, "y", by=["q", "t"], crossed=True, over="half"),
    Raises(cs.TooFewClustersError, r"group 'first' of 'half': " + SINGLE_LEVEL),
)
case(
    "paired_delta crossed: a grouping with one level",
    one_template,
    lambda data: cs.paired_delta(
        data, data.assign(y=1.0 - data["y"]), "y", by=["q", "t"], on="item", crossed=True
    ),
    Raises(cs.TooFewClustersError, SINGLE_LEVEL),
)
case(
    "compare crossed: a grouping with one level",
    one_template,
    lambda data: cs.compare(
        pd.concat([data.assign(model="a"), data.assign(model="b", y=1.0 - data["y"])]),
        "y",
        by=["q", "t"],
        model="model",
        on="item",
        crossed=True,
    ),
    Raises(cs.TooFewClustersError, SINGLE_LEVEL),
)


@pytest.mark.parametrize("case", params(CASES))
def test_hostile(case):
    run(case)


def test_the_catalogue_is_wide():
    assert len(CASES) >= 100


def test_cluster_mean_cr2_is_clubsandwich_on_the_cluster_means():
    """R 4.2.2, clubSandwich 0.5.8 (tests/r/conventions.R): coef_test(lm(y ~ 1, data =
    cluster_means), vcov = "CR2", test = "Satterthwaite") gives est 0.584497354497354, se
    0.075670976561834, df 14, as does vcovCR(lm(y ~ 1, weights = 1/n_g), inverse_var = TRUE)
    on the rows; the default working model on the rows gives se 0.075404216957627, df 9.08."""
    sizes = [2, 3, 5, 4, 6, 1, 8, 3, 7, 2, 9, 4, 3, 5, 6]
    passes = [1, 3, 2, 4, 1, 1, 6, 0, 3, 1, 5, 2, 2, 4, 3]
    rows = [
        (g, int(i < s))
        for g, (n, s) in enumerate(zip(sizes, passes, strict=True))
        for i in range(n)
    ]
    data = pd.DataFrame(rows, columns=["g", "y"])
    with pytest.warns(cs.FewClustersWarning):
        res = cs.cluster_ci(data, "y", by="g", estimand="cluster_mean", method="cr2")
    assert res.estimate == pytest.approx(0.584497354497354, rel=1e-13)
    assert res.se == pytest.approx(0.075670976561834, rel=1e-12)
    assert res.df == 14.0
    assert any("clubSandwich's CR2 on the cluster means" in note for note in res.notes)
