"""Hostile input through the ``.eval`` accessors of pandas, xarray and dask (issue 15).

Every accessor method hands its object to the function of the same name, so each must fail
as the function fails (the same exception type, a message naming the same thing) and return
what the function returns, on every backend. Calling the accessor stays the library's own
``eval``. The harness (``tests/hostile/hostile.py``) also checks that no input was changed.

Expected numbers: the per-case pass@k estimator ``1 - C(n-c, k) / C(n, k)`` (Chen et al.
2021) averaged over cases, with the CR2 interval of cases as clusters,
``mean ± t_{P-1} sd / sqrt(P)``; otherwise the function's own result on the same data (the
accessor's contract), stated per case.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
import xarray as xr
from hostile import Case, Raises, Returns, params, run
from scipy import stats

import clusterstats as cs

dd = pytest.importorskip("dask.dataframe")

Option = cs.InvalidOptionError

#: 24 cases of 4 runs; passes per case c = 1, 2, 0, 4, 2, 3 (four times over).
PATTERN = [1, 0, 0, 0, 1, 1, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 0, 1, 0, 1, 1, 0, 1, 1]
PASSES = np.array([1, 2, 0, 4, 2, 3] * 4)


def frame() -> pd.DataFrame:
    """24 cases x 4 runs, clusters ``g`` of 3 cases, strata ``st``, two models."""
    cases = np.repeat(np.arange(24), 4)
    return pd.DataFrame(
        {
            "case": cases,
            "rerun": np.tile(np.arange(4), 24),
            "y": PATTERN * 4,
            "g": cases // 3,
            "st": cases % 2,
            "model": np.tile(["a", "b"], 48),
        }
    )


def dask_frame() -> dd.DataFrame:
    return dd.from_pandas(frame(), npartitions=3)


def grid() -> xr.Dataset:
    return cs.to_case_rerun(frame().drop(columns="model"), case="case", rerun="rerun", outcome="y")


def model_grid() -> xr.Dataset:
    """``grid()`` for two models along a ``model`` dim (b: every run flipped)."""
    a = frame().drop(columns="model")
    both = pd.concat([a.assign(model="a"), a.assign(model="b", y=1 - a["y"])])
    return cs.to_case_rerun(both, case="case", rerun="rerun", outcome="y", dims=["model"])


BUILDERS = {"pandas": frame, "dask": dask_frame, "xarray": grid}


def _pass_at_2() -> tuple[float, float, float]:
    # pass@2 per case: 1 - C(4-c, 2)/C(4, 2); CR2 with the 24 cases as clusters
    values = np.array([1 - math.comb(4 - c, 2) / math.comb(4, 2) for c in PASSES])
    half = stats.t.ppf(0.975, 23) * values.std(ddof=1) / math.sqrt(24)
    return values.mean(), values.mean() - half, values.mean() + half


def expect_pass_at_2(result):
    estimate, low, high = _pass_at_2()  # 0.6944 (the pass_at_k docstring)
    values = np.array([1 - math.comb(4 - c, 2) / math.comb(4, 2) for c in PASSES])
    # the default studentized bootstrap: never inside CR2, and cluster_ci's default interval
    # on the closed-form per-case values (each case a cluster, the same default seed)
    direct = cs.cluster_ci(None, values, np.arange(values.size))
    assert result.estimate == pytest.approx(estimate, rel=1e-12)
    assert result.low <= low + 1e-12
    assert result.high >= high - 1e-12
    assert (result.low, result.high) == pytest.approx((direct.low, direct.high), rel=1e-9)


# -- every method, every backend: a wrong outcome name ----------------------------------------

# How each method is called on each backend (the options a call needs besides the outcome):
# frames name their clusters; a Dataset's cases are its clusters.
FRAME_CALLS = {
    "cluster_ci": lambda d, o: d.eval.cluster_ci(o, "g"),
    "icc": lambda d, o: d.eval.icc(o, "g"),
    "design_effect": lambda d, o: d.eval.design_effect(o, "g"),
    "paired_delta": lambda d, o: d.eval.paired_delta(d, o, "g", on=["case", "rerun"]),
    "compare": lambda d, o: d.eval.compare(o, "g", model="model", on=["case", "rerun"]),
    "missing_report": lambda d, o: d.eval.missing_report(o, "g"),
    "stratum_table": lambda d, o: d.eval.stratum_table(o, "g", strata="st"),
    "plan": lambda d, o: d.eval.plan(o, "g"),
    "report": lambda d, o: d.eval.report(o, "g"),
    "check_clustering": lambda d, o: d.eval.check_clustering(o, ["g"]),
    "pass_at_k": lambda d, o: d.eval.pass_at_k(o, k=2),
    "pass_hat_k": lambda d, o: d.eval.pass_hat_k(o, k=2),
    "flakiness": lambda d, o: d.eval.flakiness(o),
    "judged_ci": lambda d, o: d.eval.judged_ci(o, "g", judge="y"),
}
DATASET_CALLS = {
    "cluster_ci": lambda d, o: d.eval.cluster_ci(o),
    "icc": lambda d, o: d.eval.icc(o),
    "design_effect": lambda d, o: d.eval.design_effect(o),
    "paired_delta": lambda d, o: d.eval.paired_delta(d, o),
    "compare": lambda d, o: d.eval.compare(o, model="model"),
    "missing_report": lambda d, o: d.eval.missing_report(o),
    "stratum_table": lambda d, o: d.eval.stratum_table(o, strata="st"),
    "plan": lambda d, o: d.eval.plan(o),
    "report": lambda d, o: d.eval.report(o),
    "check_clustering": lambda d, o: d.eval.check_clustering(o, ["case"]),
    "pass_at_k": lambda d, o: d.eval.pass_at_k(o, k=2),
    "pass_hat_k": lambda d, o: d.eval.pass_hat_k(o, k=2),
    "flakiness": lambda d, o: d.eval.flakiness(o),
    "judged_ci": lambda d, o: d.eval.judged_ci(o, judge="y"),
}


def _dataset_for(method: str):
    if method == "compare":
        return model_grid
    if method == "stratum_table":
        return lambda: grid().assign_coords(st=("case", np.arange(24) % 2))
    return grid


def wrong_outcome_cases() -> list[Case]:
    cases = []
    for backend in ("pandas", "dask", "xarray"):
        for method in FRAME_CALLS:
            calls = DATASET_CALLS if backend == "xarray" else FRAME_CALLS
            build = _dataset_for(method) if backend == "xarray" else BUILDERS[backend]
            available = "'y'" if backend == "xarray" else "'case', 'rerun', 'y'"
            cases.append(
                Case(
                    f"{backend} .eval.{method}: wrong outcome name",
                    lambda build=build: {"data": build()},
                    lambda data, call=calls[method]: call(data, "passed"),
                    Raises(
                        cs.ColumnNotFoundError,
                        rf"column 'passed' not found; available columns: {available}",
                    ),
                )
            )
    return cases


# -- over= on a Dataset ------------------------------------------------------------------------

OVER_METHODS = {
    "cluster_ci": {},
    "icc": {},
    "design_effect": {},
    "report": {},
    "pass_at_k": {"k": 2},
    "pass_hat_k": {"k": 2},
    "flakiness": {},
}

OVER_CASES = [
    Case(
        f"xarray .eval.{method}: over= on a Dataset",
        lambda: {"data": model_grid()},
        lambda data, method=method, extra=extra: getattr(data.eval, method)(
            "y", over="model", **extra
        ),
        Raises(Option, r"over= is for DataFrames; a Dataset's extra dims are used as they are"),
    )
    for method, extra in OVER_METHODS.items()
]


# -- the rerun statistics through each accessor -----------------------------------------------


def rerun_case(name, backend, call, expect) -> Case:
    return Case(f"{backend} .eval: {name}", lambda: {"data": BUILDERS[backend]()}, call, expect)


def same_as_function(function, *args, **options):
    """A ``check``: the accessor's result equals the function's on a pandas frame."""

    def check(result):
        expected = function(frame(), *args, **options)
        pd.testing.assert_frame_equal(result.to_frame(), expected.to_frame())
        assert result.notes == expected.notes

    return check


def with_missing(build):
    """The backend's data with run 0 of case 0 ungraded (NaN)."""

    def make():
        long = frame().astype({"y": float})
        long.loc[0, "y"] = np.nan
        if build is grid:
            return cs.to_case_rerun(
                long.drop(columns="model"), case="case", rerun="rerun", outcome="y"
            )
        return dd.from_pandas(long, npartitions=3) if build is dask_frame else long

    return make


def _check_missing_parity(result):
    # the frame path on the same rows: the missing run counts as no run (case 0: 0 of 3)
    long = frame().astype({"y": float})
    long.loc[0, "y"] = np.nan
    expected = cs.pass_at_k(long, "y", k=2)
    pd.testing.assert_frame_equal(result.to_frame(), expected.to_frame())
    assert result.notes == expected.notes
    assert (result.runs_min, result.n_cases) == (3, 24)


RERUN_CASES = []
for _backend in ("pandas", "dask", "xarray"):
    RERUN_CASES += [
        rerun_case(
            "pass_at_k matches the closed form",
            _backend,
            lambda data: data.eval.pass_at_k("y", k=2),
            Returns(expect_pass_at_2),
        ),
        rerun_case(
            "pass_hat_k matches the function",
            _backend,
            lambda data: data.eval.pass_hat_k("y", k=3, fewer_runs="drop"),
            Returns(same_as_function(cs.pass_hat_k, "y", k=3, fewer_runs="drop")),
        ),
        rerun_case(
            "flakiness matches the function",
            _backend,
            lambda data: data.eval.flakiness("y"),
            Returns(same_as_function(cs.flakiness, "y")),
        ),
        rerun_case(
            "k=0",
            _backend,
            lambda data: data.eval.pass_at_k("y", k=0),
            Raises(Option, r"k must be a positive integer, got 0"),
        ),
        rerun_case(
            "k above the runs",
            _backend,
            lambda data: data.eval.pass_hat_k("y", k=5),
            Raises(cs.EmptyDataError, r"no case has k=5 runs \(the most is 4\)"),
        ),
        rerun_case(
            "outcome as a list",
            _backend,
            lambda data: data.eval.flakiness(["y"]),
            Raises(cs.InvalidInputError, r"outcome= takes one variable or column label"),
        ),
        Case(
            f"{_backend} .eval: a missing outcome, as in the function",
            lambda build=BUILDERS[_backend]: {"data": with_missing(build)()},
            lambda data: data.eval.pass_at_k("y", k=2),
            Returns(_check_missing_parity),
        ),
    ]


def _dask_duplicates() -> dd.DataFrame:
    return dd.from_pandas(pd.concat([frame(), frame().iloc[:1]]), npartitions=2)


def _check_groups(result):
    # over= model: each model holds every other run of each case, so 2 runs per case;
    # the dask path computes the pandas path's numbers
    expected = cs.pass_at_k(frame(), "y", k=2, over="model", rerun=None)
    assert result.groups == expected.groups == ("a", "b")
    pd.testing.assert_frame_equal(result.to_frame(), expected.to_frame())


DASK_CASES = [
    Case(
        "dask .eval: a duplicated (case, rerun) row",
        lambda: {"data": _dask_duplicates()},
        lambda data: data.eval.pass_at_k("y", k=2),
        Raises(cs.AlignmentError, r"1 \(case, rerun\) combinations have more than one row"),
    ),
    Case(
        "dask .eval: text outcome",
        lambda: {"data": dd.from_pandas(frame().assign(y=lambda d: d["y"].astype(str)), 2)},
        lambda data: data.eval.pass_at_k("y", k=2),
        Raises(cs.InvalidOutcomeError, r"outcome column 'y' has dtype .*not numeric"),
    ),
    Case(
        "dask .eval: an empty frame",
        lambda: {"data": dd.from_pandas(frame().iloc[:0], npartitions=1)},
        lambda data: data.eval.flakiness("y"),
        Raises(cs.EmptyDataError, r"the frame has no rows"),
    ),
    Case(
        "dask .eval: over= and rerun=None, as pandas",
        lambda: {"data": dask_frame()},
        lambda data: data.eval.pass_at_k("y", k=2, over="model", rerun=None),
        Returns(_check_groups),
    ),
    Case(
        "dask .eval: fewer_runs='raise' names the cases",
        lambda: {"data": dd.from_pandas(frame().iloc[1:], npartitions=2)},
        lambda data: data.eval.pass_at_k("y", k=4),
        Raises(Option, r"1 case has fewer than k=4 runs \(e.g. \[0\], with \[3\] runs\)"),
    ),
    Case(
        "dask .eval: by varies within a case",
        lambda: {"data": dd.from_pandas(frame().assign(u=lambda d: d.index % 3), 2)},
        lambda data: data.eval.pass_at_k("y", k=2, by="u"),
        Raises(cs.AlignmentError, r"'u'"),
    ),
    Case(
        "xarray .eval: rerun=None",
        lambda: {"data": grid()},
        lambda data: data.eval.flakiness("y", rerun=None),
        Raises(Option, r"rerun=None \(number the runs\) is for DataFrames"),
    ),
    Case(
        "xarray .eval: a model dim, chunked",
        lambda: {"data": model_grid().chunk({"case": 7})},
        lambda data: data.eval.pass_at_k("y", k=2)["a"],
        Returns(expect_pass_at_2),  # model a is the pattern: the closed form above
    ),
]


def holds(predicate):
    def check(result):
        assert predicate(result), result

    return check


# -- calling the accessor: the libraries' own eval ---------------------------------------------


def _check_assigned(result):
    assert list(result.columns) == [*frame().columns, "z"]
    assert (result["z"] == frame()["y"] + 1).all()


EVAL_CASES = [
    Case(
        "pandas df.eval(expr) assigns into a new frame",
        lambda: {"data": frame()},
        lambda data: data.eval("z = y + 1"),
        Returns(_check_assigned),
    ),
    Case(
        "pandas df.query with an @local variable",
        lambda: {"data": frame()},
        lambda data, limit=3: data.query("y == 1 and case < @limit"),
        # cases 0, 1, 2 pass 1 + 2 + 0 runs
        Returns(holds(lambda result: len(result) == 3)),
    ),
    Case(
        "pandas df.eval with an @local variable",
        lambda: {"data": frame()},
        lambda data, limit=3: data.eval("case < @limit"),
        Returns(holds(lambda result: int(result.sum()) == 12)),
    ),
    Case(
        "pandas a column named eval",
        lambda: {"data": frame().assign(eval=1)},
        lambda data: data.eval.pass_at_k("y", k=2),
        Returns(expect_pass_at_2),
    ),
    Case(
        "xarray ds.eval(expr)",
        lambda: {"data": grid()},
        lambda data: data.eval("y * 2"),
        Returns(lambda r: xr.testing.assert_equal(r, grid()["y"] * 2)),
    ),
    Case(
        "dask ddf.eval(expr)",
        lambda: {"data": dask_frame()},
        lambda data: data.eval("y + 1").compute(),
        Returns(lambda r: pd.testing.assert_series_equal(r, frame()["y"] + 1)),
    ),
]


CASES = wrong_outcome_cases() + OVER_CASES + RERUN_CASES + DASK_CASES + EVAL_CASES


@pytest.mark.parametrize("case", params(CASES))
def test_hostile(case):
    run(case)


def test_catalogue_size():
    assert len(CASES) >= 70
