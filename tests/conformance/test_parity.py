"""Every statistic, every option, every backend: the same numbers (to 1e-12) and the same notes.

One synthetic eval is laid out four ways: a long pandas frame (one row per model, item and
run), a dask DataFrame of it (in partitions that split the runs of an item), the (case,
rerun) xarray Dataset that ``to_case_rerun`` makes of it (the models along a ``model`` dim),
and that Dataset chunked with dask (cases and runs split across chunks). Items are nested in
documents (the clusters), documents in categories (the strata); some runs are missing and
a response indicator marks others as unanswered; items have unequal run counts.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable
from typing import Any

import numpy as np
import pandas as pd
import pytest

import clusterstats as cs

dd = pytest.importorskip("dask.dataframe")

TOL = 1e-12


def _eval_rows(seed: int = 7) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    rows = []
    for doc in range(26):
        cat = f"cat{doc % 4}"
        difficulty = rng.normal()
        for item in range(int(rng.integers(2, 6))):
            runs = int(rng.integers(1, 4))
            for model, skill in (("alpha", 0.3), ("beta", -0.1), ("gamma", 0.0)):
                for run in range(runs):
                    p = 1.0 / (1.0 + math.exp(-(skill - difficulty + rng.normal(0, 0.5))))
                    rows.append((model, f"d{doc:02d}-{item}", run, f"doc{doc:02d}", cat, p))
    frame = pd.DataFrame(rows, columns=["model", "item", "run", "doc", "cat", "p"])
    frame["y"] = (rng.random(len(frame)) < frame["p"]).astype(float)
    frame["score"] = frame["p"] * 10 + rng.normal(0, 1, len(frame))
    frame.loc[rng.random(len(frame)) < 0.04, "y"] = np.nan  # missing outcomes
    frame.loc[rng.random(len(frame)) < 0.04, "score"] = np.nan
    frame["answered"] = (rng.random(len(frame)) > 0.05) & frame.y.notna() & frame.score.notna()
    per_item = pd.Series(rng.normal(size=frame["item"].nunique()).round(3))
    frame["x"] = per_item.iloc[pd.factorize(frame["item"])[0]].to_numpy()  # along case
    return frame.drop(columns="p")


@pytest.fixture(scope="module")
def layouts() -> dict[str, Any]:
    frame = _eval_rows()
    dataset = cs.to_case_rerun(
        frame,
        case="item",
        rerun="run",
        outcome=["y", "score", "answered"],
        dims=["model"],
        coords=["doc", "cat", "x"],
    )
    return {
        "pandas": frame,
        "dask": dd.from_pandas(frame, npartitions=7),
        "xarray": dataset,
        "xarray-chunked": dataset.chunk({"case": 9, "rerun": 2}),
    }


def _quiet(call: Callable[[], Any]) -> tuple[Any, list[str]]:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = call()
    return result, [
        str(w.message) for w in caught if issubclass(w.category, cs.ClusterStatsWarning)
    ]


def _frame_of(result: Any) -> pd.DataFrame:
    if isinstance(result, pd.DataFrame):
        return result
    for name in ("to_frame", "pairs"):
        if hasattr(result, name):
            return getattr(result, name)()
    raise TypeError(type(result))


def assert_same(a: Any, b: Any) -> None:
    """The two results have the same frame (numbers to 1e-12, everything else exactly) and
    the same notes."""
    fa, fb = _frame_of(a).reset_index(drop=True), _frame_of(b).reset_index(drop=True)
    assert list(fa.columns) == list(fb.columns)
    assert fa.shape == fb.shape
    for column in fa.columns:
        x, y = fa[column].tolist(), fb[column].tolist()
        for i, (u, v) in enumerate(zip(x, y, strict=True)):
            if isinstance(u, float) and isinstance(v, float):
                if math.isnan(u) and math.isnan(v):
                    continue
                assert math.isclose(u, v, rel_tol=TOL, abs_tol=1e-14), (column, i, u, v)
            else:
                assert u == v, (column, i, u, v)
    notes_a = getattr(a, "notes", None)
    if notes_a is not None:
        assert tuple(notes_a) == tuple(b.notes)
    if hasattr(a, "leaderboard"):
        assert_same(a.leaderboard(), b.leaderboard())


def _on(layout: str, frame_call: Callable, dataset_call: Callable, layouts: dict) -> Any:
    data = layouts[layout]
    return _quiet(lambda: (dataset_call if layout.startswith("xarray") else frame_call)(data))


BACKENDS = ["dask", "xarray", "xarray-chunked"]

MEAN_CASES = {
    "auto": {},
    "cr1": {"method": "cr1"},
    "cr2 cluster_mean": {"method": "cr2", "estimand": "cluster_mean"},
    "korn_graubard": {"method": "korn_graubard"},
    "korn_graubard_inverted": {"method": "korn_graubard_inverted"},
    "inverted cluster_mean": {"method": "korn_graubard_inverted", "estimand": "cluster_mean"},
    "korn_graubard_hybrid": {"method": "korn_graubard_hybrid"},
    "hybrid cluster_mean": {"method": "korn_graubard_hybrid", "estimand": "cluster_mean"},
    "cr2_ik": {"method": "cr2_ik"},
    "cr2_ik cluster_mean": {"method": "cr2_ik", "estimand": "cluster_mean"},
    "bootstrap": {"method": "bootstrap", "n_resamples": 199, "rng": 3},
    "bootstrap_t": {"method": "bootstrap_t", "n_resamples": 199, "rng": 3},
    "bootstrap_t cluster_mean": {
        "method": "bootstrap_t",
        "estimand": "cluster_mean",
        "n_resamples": 199,
        "rng": 4,
    },
    "score": {"method": "score"},
    "score cluster_mean": {"method": "score", "estimand": "cluster_mean"},
    "hybrid or score": {"method": "korn_graubard_hybrid_or_score"},
    "fail": {"missing": "fail"},
    "pass wilson": {"missing": "pass", "method": "wilson"},
    "responded": {"responded": "answered"},
    "ipw": {"missing": "ipw"},
    "ipw shrunk": {"missing": "ipw", "propensity": "shrunk", "responded": "answered"},
    "ipw logistic": {"missing": "ipw", "propensity": "logistic", "covariates": ["x"]},
    "strata": {"strata": "cat"},
    "strata macro": {"strata": "cat", "estimand": "stratum_mean", "method": "cr1"},
    "strata bootstrap": {"strata": "cat", "method": "bootstrap", "n_resamples": 199, "rng": 1},
    "korn_graubard uncapped": {"method": "korn_graubard", "cap_n_eff": False},
    "cr1 empty clusters kept": {"method": "cr1", "empty_clusters": "keep"},
}


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("case", list(MEAN_CASES))
def test_cluster_ci(layouts, backend, case):
    options = MEAN_CASES[case]

    def frame_call(d):
        return cs.cluster_ci(d, "y", "doc", over="model", **options)

    def dataset_call(d):
        return cs.cluster_ci(d, "y", "doc", **options)

    expected, expected_warnings = _on("pandas", frame_call, dataset_call, layouts)
    got, got_warnings = _on(backend, frame_call, dataset_call, layouts)
    assert_same(expected, got)
    assert got_warnings == expected_warnings


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("outcome", ["y", "score"])
def test_continuous_and_binary_icc_and_design_effect(layouts, backend, outcome):
    for function, options in (
        (cs.icc, {}),
        (cs.icc, {"missing": "drop", "responded": "answered"}),
        (cs.design_effect, {"estimand": "cluster_mean"}),
        (cs.cluster_ci, {"method": "cr2"}),
    ):
        expected, _ = _on(
            "pandas",
            lambda d, f=function, o=options: f(d, outcome, "doc", over="model", **o),
            None,
            layouts,
        )
        got, _ = _on(
            backend,
            lambda d, f=function, o=options: f(d, outcome, "doc", over="model", **o),
            lambda d, f=function, o=options: f(d, outcome, "doc", **o),
            layouts,
        )
        assert_same(expected, got)


def test_cases_as_clusters_by_default_on_datasets(layouts):
    expected, _ = _quiet(lambda: cs.cluster_ci(layouts["pandas"], "y", "item", over="model"))
    for layout in ("xarray", "xarray-chunked"):
        got, _ = _quiet(lambda d=layouts[layout]: d.eval.cluster_ci("y"))
        assert_same(expected.to_frame().drop(columns="by"), got.to_frame().drop(columns="by"))


def test_arrays_give_the_frame_numbers(layouts):
    frame = layouts["pandas"]
    one = frame[frame.model == "beta"]
    for options in ({}, {"method": "cr2"}, {"missing": "fail"}):
        expected, _ = _quiet(lambda o=options: cs.cluster_ci(one, "y", "doc", **o))
        got, _ = _quiet(
            lambda o=options: cs.cluster_ci(None, one["y"].to_numpy(), one["doc"].to_numpy(), **o)
        )
        assert_same(
            expected.to_frame().drop(columns=["outcome", "by"]),
            got.to_frame().drop(columns=["outcome", "by"]),
        )


PAIRED_CASES = {
    "auto": {},
    "cr1 cluster_mean": {"method": "cr1", "estimand": "cluster_mean"},
    "bootstrap": {"method": "bootstrap", "n_resamples": 199, "rng": 2},
    "bootstrap_t": {"method": "bootstrap_t", "n_resamples": 199, "rng": 2},
    "cr2_ik": {"method": "cr2_ik"},
    "score": {"method": "score"},
    "bootstrap_t or score": {"method": "bootstrap_t_or_score", "n_resamples": 199, "rng": 2},
    "fail": {"missing": "fail"},
    "responded": {"responded": "answered"},
    "ipw": {"missing": "ipw"},
    "strata": {"strata": "cat"},
    "strata bootstrap": {"strata": "cat", "method": "bootstrap", "n_resamples": 199, "rng": 2},
}


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("case", list(PAIRED_CASES))
def test_paired_delta(layouts, backend, case):
    options = PAIRED_CASES[case]

    def frame_call(d):
        return cs.paired_delta(
            d[d.model == "alpha"],
            d[d.model == "beta"],
            "y",
            "doc",
            on="item",
            rerun="run",
            **options,
        )

    def dataset_call(d):
        return cs.paired_delta(d.sel(model="alpha"), d.sel(model="beta"), "y", "doc", **options)

    expected, expected_warnings = _on("pandas", frame_call, dataset_call, layouts)
    got, got_warnings = _on(backend, frame_call, dataset_call, layouts)
    assert_same(expected, got)
    assert got_warnings == expected_warnings


COMPARE_CASES = {
    "auto": {},
    "cr1 cluster_mean baseline": {"method": "cr1", "estimand": "cluster_mean", "baseline": "beta"},
    "bootstrap bh": {"method": "bootstrap", "adjust": "bh"},
    "bootstrap_t cluster_mean": {"method": "bootstrap_t", "estimand": "cluster_mean"},
    "cr2_ik": {"method": "cr2_ik"},
    "auto, default seed": {"rng": None},
    "fail": {"missing": "fail"},
    "responded ipw": {"responded": "answered", "missing": "ipw"},
    "strata": {"strata": "cat"},
    "higher minus lower": {"orientation": "higher_minus_lower", "method": "bootstrap"},
    "ranks from the bootstrap": {"rank_method": "bootstrap"},
    "normal ranks, top 2": {"rank_method": "normal", "top": 2, "method": "cr2"},
    "slices": {"over": "cat"},
    "slices, bh": {"over": "cat", "adjust": "bh", "method": "cr1"},
}


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("case", list(COMPARE_CASES))
def test_compare(layouts, backend, case):
    options = {"n_resamples": 199, "rng": 4, **COMPARE_CASES[case]}

    def frame_call(d):
        return cs.compare(d, "y", "doc", model="model", on="item", rerun="run", **options)

    def dataset_call(d):
        return cs.compare(d, "y", "doc", model="model", **options)

    expected, expected_warnings = _on("pandas", frame_call, dataset_call, layouts)
    got, got_warnings = _on(backend, frame_call, dataset_call, layouts)
    assert_same(expected, got)
    assert got_warnings == expected_warnings


def _one_model(data: Any) -> Any:
    if hasattr(data, "sel") and not hasattr(data, "columns"):
        return data.sel(model="gamma")
    return data[data.model == "gamma"]


@pytest.mark.parametrize("backend", BACKENDS)
def test_report_stratum_table_missing_report_and_plans(layouts, backend):
    calls = {
        "report": lambda d: cs.report(_one_model(d), "y", "doc"),
        "stratum_table": lambda d: cs.stratum_table(_one_model(d), "y", "doc", strata="cat"),
        "missing_report": lambda d: cs.missing_report(_one_model(d), "y", "doc", threshold=0.4),
        "pilot_plan": lambda d: cs.pilot_plan(_one_model(d), "score", "doc", target_half_width=0.3),
        # a binary pilot over 26 uneven docs: its interval is the union, projected from its base
        "pilot_plan_union": lambda d: cs.pilot_plan(_one_model(d), "y", "doc", effect=0.1),
    }
    for name, call in calls.items():
        expected, expected_warnings = _on("pandas", call, call, layouts)
        got, got_warnings = _on(backend, call, call, layouts)
        assert_same(expected, got)
        assert got_warnings == expected_warnings, name
        if name == "stratum_table":
            assert got.attrs["notes"] == expected.attrs["notes"]
        if name == "missing_report":
            assert_same(expected.per_cluster(), got.per_cluster())
            assert_same(expected.delta_table(), got.delta_table())


@pytest.mark.parametrize("backend", BACKENDS)
def test_report_over_groups(layouts, backend):
    expected, _ = _quiet(lambda: cs.report(layouts["pandas"], "y", "doc", over="model"))
    data = layouts[backend]
    got, _ = _quiet(
        lambda: (
            cs.report(data, "y", "doc")
            if backend.startswith("xarray")
            else cs.report(data, "y", "doc", over="model")
        )
    )
    assert_same(expected, got)
    assert expected.to_markdown() == got.to_markdown()


@pytest.mark.parametrize("backend", BACKENDS)
def test_check_clustering(layouts, backend):
    def call(d):
        return cs.check_clustering(_one_model(d), "y", ["doc", "cat", "run"])

    expected, _ = _on("pandas", call, call, layouts)
    got, _ = _on(backend, call, call, layouts)
    assert_same(expected, got)
    assert expected.nested == got.nested
    assert expected.crossed == got.crossed
    assert expected.recommendation == got.recommendation


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("statistic", ["pass_at_k", "pass_hat_k", "flakiness"])
def test_rerun_statistics(layouts, backend, statistic):
    answered = layouts["pandas"]
    frame_layouts = {"pandas": answered, "dask": dd.from_pandas(answered, npartitions=5)}
    function = getattr(cs, statistic)
    extra = {} if statistic == "flakiness" else {"k": 1}

    def frame_call(d):
        return function(d, "y", by="doc", case="item", rerun="run", over="model", **extra)

    def dataset_call(d):
        return function(d, "y", by="doc", **extra)

    expected, _ = _quiet(lambda: frame_call(answered))
    data = frame_layouts.get(backend, layouts[backend])
    got, _ = _quiet(lambda: (dataset_call if backend.startswith("xarray") else frame_call)(data))
    assert_same(expected, got)


@pytest.mark.parametrize("backend", BACKENDS)
def test_pass_statistics_over_a_list_of_k(layouts, backend):
    """pass^k for k = 1, 2 in one call: the same table from every backend."""
    answered = layouts["pandas"]
    frame_layouts = {"pandas": answered, "dask": dd.from_pandas(answered, npartitions=5)}

    def frame_call(d):
        return cs.pass_hat_k(
            d, "y", by="doc", case="item", rerun="run", over="model", k=[1, 2], fewer_runs="drop"
        )

    def dataset_call(d):
        return cs.pass_hat_k(d, "y", by="doc", k=[1, 2], fewer_runs="drop")

    expected, _ = _quiet(lambda: frame_call(answered))
    data = frame_layouts.get(backend, layouts[backend])
    got, _ = _quiet(lambda: (dataset_call if backend.startswith("xarray") else frame_call)(data))
    assert expected.dims[-1] == got.dims[-1] == "k"
    assert_same(expected, got)


def _variants(frame: pd.DataFrame) -> dict[str, pd.DataFrame]:
    """The same rows in other dtypes and layouts."""
    pyarrow = pytest.importorskip("pyarrow")
    del pyarrow
    doc_codes = frame["doc"].str[3:].astype(int)
    return {
        "shuffled": frame.sample(frac=1.0, random_state=0),
        "categorical doc": frame.assign(doc=frame["doc"].astype("category")),
        "arrow strings": frame.assign(
            doc=frame["doc"].astype("string[pyarrow]"),
            model=frame["model"].astype("string[pyarrow]"),
        ),
        "integer doc": frame.assign(doc=doc_codes * 7 + 3),
        "nullable outcome": frame.assign(y=frame["y"].astype("Float64")),
        "object outcome": frame.assign(y=frame["y"].astype(object)),
        "non-default index": frame.set_index(np.arange(len(frame)) * 3 + 11),
    }


@pytest.mark.parametrize(
    "variant",
    [
        "shuffled",
        "categorical doc",
        "arrow strings",
        "integer doc",
        "nullable outcome",
        "object outcome",
        "non-default index",
    ],
)
def test_dtypes_and_layouts_of_a_frame(layouts, variant):
    frame = layouts["pandas"]
    other = _variants(frame)[variant]
    calls = [
        lambda d: cs.cluster_ci(d, "y", "doc", over="model"),
        lambda d: cs.cluster_ci(d, "y", "doc", over="model", strata="cat", method="cr1"),
        lambda d: cs.cluster_ci(d, "y", "doc", over="model", missing="ipw"),
        lambda d: cs.cluster_ci(
            d, "y", "doc", over="model", method="bootstrap", rng=0, n_resamples=199
        ),
        lambda d: cs.compare(
            d, "y", "doc", model="model", on="item", rerun="run", rng=0, n_resamples=199
        ),
        lambda d: cs.paired_delta(
            d[d.model == "alpha"], d[d.model == "gamma"], "y", "doc", on="item", rerun="run"
        ),
    ]
    for call in calls:
        expected, _ = _quiet(lambda c=call: c(frame))
        got, _ = _quiet(lambda c=call: c(other))
        if variant == "integer doc":  # other labels, the same clusters in the same order
            expected_frame = _frame_of(expected).drop(columns="notes", errors="ignore")
            assert_same(expected_frame, _frame_of(got).drop(columns="notes", errors="ignore"))
        else:
            assert_same(expected, got)


def _conventions_frame() -> pd.DataFrame:
    """Cases of 4 runs in 15 documents: a design effect below 1 (every document passes about
    half its cases) and one document whose every outcome is missing."""
    passes = [1, 3, 0, 2, 4, 1, 2, 3, 0, 1, 2, 4, 3, 1]
    rows = [
        (f"d{g:02d}", f"d{g:02d}-{i}", 1.0 if i < s else 0.0)
        for g, s in enumerate(passes)
        for i in range(4)
    ]
    rows += [("d99", f"d99-{i}", np.nan) for i in range(3)]
    return pd.DataFrame(rows, columns=["doc", "item", "y"]).assign(run=0)


@pytest.mark.parametrize(
    "options",
    [
        {"method": "korn_graubard", "cap_n_eff": False},
        {"method": "wilson", "cap_n_eff": True},
        {"method": "cr1", "empty_clusters": "keep"},
        {"method": "korn_graubard", "empty_clusters": "keep"},
        {"method": "cr1", "empty_clusters": "drop"},
    ],
    ids=str,
)
def test_convention_options_on_every_backend(options):
    """The R-convention options give the same numbers and notes on pandas, dask and a
    (case, rerun) Dataset built from the same rows."""
    frame = _conventions_frame()
    dataset = cs.to_case_rerun(frame, case="item", rerun="run", outcome="y", coords=["doc"])
    expected, expected_warnings = _quiet(lambda: cs.cluster_ci(frame, "y", "doc", **options))
    for data in (dd.from_pandas(frame, npartitions=3), dataset, dataset.chunk({"case": 7})):
        got, got_warnings = _quiet(lambda data=data: cs.cluster_ci(data, "y", "doc", **options))
        assert_same(expected, got)
        assert got_warnings == expected_warnings


SEQUENCE_CASES = {
    "the data's order": {},
    "random order": {"shuffle": True, "rng": 5},
    "ordered by x": {"order": "x"},
    "cluster_mean, fail": {"order": "x", "estimand": "cluster_mean", "missing": "fail"},
    "score with bounds": {"shuffle": True, "rng": 2, "outcome": "score", "bounds": (-5, 15)},
    "benchmark, predictable": {
        "shuffle": True,
        "rng": 3,
        "target": "benchmark",
        "method": "betting_predictable",
    },
}


@pytest.mark.parametrize("backend", [*BACKENDS, "polars"])
@pytest.mark.parametrize("case", list(SEQUENCE_CASES))
def test_confidence_sequence(layouts, backend, case):
    options = dict(SEQUENCE_CASES[case])
    outcome = options.pop("outcome", "y")

    def frame_call(d):
        return cs.confidence_sequence(_one_model(d), outcome, "doc", **options)

    def dataset_call(d):
        return cs.confidence_sequence(_one_model(d), outcome, "doc", **options)

    expected, expected_warnings = _on("pandas", frame_call, dataset_call, layouts)
    if backend == "polars":
        pl = pytest.importorskip("polars")
        gamma = pl.from_pandas(_one_model(layouts["pandas"]))
        got, got_warnings = _quiet(lambda: cs.confidence_sequence(gamma, outcome, "doc", **options))
    else:
        got, got_warnings = _on(backend, frame_call, dataset_call, layouts)
    assert_same(expected, got)
    assert got_warnings == expected_warnings


PAIRED_SEQUENCE_CASES = {
    "random order": {"shuffle": True, "rng": 5, "bounds": (-1, 1)},
    "benchmark": {"order": "x", "bounds": (-1, 1), "target": "benchmark"},
    "ordered by x": {"order": "x", "bounds": (-1, 1)},
    "cluster_mean": {"order": "x", "estimand": "cluster_mean", "bounds": (-1, 1)},
}


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("case", list(PAIRED_SEQUENCE_CASES))
def test_paired_confidence_sequence(layouts, backend, case):
    """The runs of an item are averaged first on every backend, so the difference of two
    0/1 outcomes lies in [-1, 1], given as the bounds."""
    options = PAIRED_SEQUENCE_CASES[case]

    def frame_call(d):
        alpha, beta = d[d.model == "alpha"], d[d.model == "beta"]
        return cs.confidence_sequence(
            alpha, "y", "doc", other=beta, on="item", rerun="run", **options
        )

    def dataset_call(d):
        return cs.confidence_sequence(
            d.sel(model="alpha"), "y", "doc", other=d.sel(model="beta"), **options
        )

    expected, expected_warnings = _on("pandas", frame_call, dataset_call, layouts)
    got, got_warnings = _on(backend, frame_call, dataset_call, layouts)
    assert_same(expected, got)
    assert got_warnings == expected_warnings


# --- judged_ci: a judge on every row, human labels on whole documents (some rows missing)


def _judged_rows() -> pd.DataFrame:
    frame = _eval_rows()
    frame = frame[(frame["model"] == "alpha") & frame["score"].notna()].drop(columns="model")
    labelled = frame["doc"].isin(sorted(frame["doc"].unique())[::3])
    return frame.assign(judge=(frame["score"] / 10).clip(0, 1), human=frame["y"].where(labelled))


@pytest.fixture(scope="module")
def judged_layouts() -> dict[str, Any]:
    return _judged_layouts_of(_judged_rows())


def _judged_layouts_of(frame: pd.DataFrame) -> dict[str, Any]:
    dataset = cs.to_case_rerun(
        frame, case="item", rerun="run", outcome=["human", "judge"], coords=["doc", "cat"]
    )
    layouts = {
        "pandas": frame,
        "dask": dd.from_pandas(frame, npartitions=7),
        "xarray": dataset,
        "xarray-chunked": dataset.chunk({"case": 9, "rerun": 2}),
        "pyarrow": pytest.importorskip("pyarrow").Table.from_pandas(frame, preserve_index=False),
    }
    try:
        import polars as pl
    except ImportError:
        return layouts
    return {**layouts, "polars": pl.from_pandas(frame)}


JUDGED_CASES = {
    "default": {},
    "cluster_mean": {"estimand": "cluster_mean"},
    "benchmark": {"target": "benchmark", "weight": 0.6},
    "strata": {"strata": "cat", "weight": "tuned"},
    "glide": {"method": "glide", "estimand": "cluster_mean"},
    "bootstrap": {"method": "bootstrap", "strata": "cat", "n_resamples": 999, "rng": 5},
}


@pytest.mark.parametrize("layout", ["dask", "xarray", "xarray-chunked", "pyarrow", "polars"])
@pytest.mark.parametrize("case", JUDGED_CASES)
def test_judged_ci_parity(case: str, layout: str, judged_layouts: dict) -> None:
    if layout not in judged_layouts:
        pytest.skip(f"{layout} is not installed")
    options = JUDGED_CASES[case]
    reference, notes = _quiet(
        lambda: judged_layouts["pandas"].eval.judged_ci("human", "doc", judge="judge", **options)
    )
    data = judged_layouts[layout]
    result, other_notes = _quiet(
        lambda: cs.judged_ci(data, "human", "doc", judge="judge", **options)
    )
    assert_same(reference, result)
    assert notes == other_notes
    if hasattr(data, "eval"):
        assert_same(
            reference,
            _quiet(lambda: data.eval.judged_ci("human", "doc", judge="judge", **options))[0],
        )


@pytest.fixture(scope="module")
def judged_inside_layouts() -> dict[str, Any]:
    """Labels on the first two rows of every document: each cluster carries labels, so the
    cross-fitted weight centres each document's judge on its own total."""
    frame = _judged_rows().drop(columns="human").sort_values(["doc", "item", "run"])
    scored = frame[frame["y"].notna()]
    first = (scored.groupby("doc").cumcount() < 2).reindex(frame.index, fill_value=False)
    return _judged_layouts_of(frame.assign(human=frame["y"].where(first)))


@pytest.mark.parametrize("layout", ["dask", "xarray", "xarray-chunked", "pyarrow", "polars"])
@pytest.mark.parametrize("target", ["population", "benchmark"])
def test_judged_ci_parity_labels_in_every_cluster(
    target: str, layout: str, judged_inside_layouts: dict
) -> None:
    if layout not in judged_inside_layouts:
        pytest.skip(f"{layout} is not installed")
    options = {"target": target, "weight": "cross-fitted"}
    reference, notes = _quiet(
        lambda: cs.judged_ci(
            judged_inside_layouts["pandas"], "human", "doc", judge="judge", **options
        )
    )
    assert reference.labelling == "rows"
    result, other_notes = _quiet(
        lambda: cs.judged_ci(
            judged_inside_layouts[layout], "human", "doc", judge="judge", **options
        )
    )
    assert_same(reference, result)
    assert notes == other_notes


def _judged_sides() -> tuple[pd.DataFrame, pd.DataFrame]:
    frame = _eval_rows().dropna(subset=["score"])
    keep = frame.groupby(["item", "run"])["model"].transform("size") == 3
    frame = frame[keep]
    labelled = frame["doc"].isin(sorted(frame["doc"].unique())[::3])
    frame = frame.assign(judge=(frame["score"] / 10).clip(0, 1), human=frame["y"].where(labelled))
    return frame[frame["model"] == "alpha"], frame[frame["model"] == "beta"]


@pytest.mark.parametrize("layout", ["dask", "pyarrow", "polars"])
def test_judged_delta_parity(layout: str) -> None:
    a, b = _judged_sides()
    reference, notes = _quiet(
        lambda: cs.judged_delta(a, b, "human", "doc", judge="judge", on=["item", "run"])
    )
    if layout == "dask":
        convert = lambda side: dd.from_pandas(side, npartitions=3)  # noqa: E731
    elif layout == "pyarrow":
        pa = pytest.importorskip("pyarrow")
        convert = lambda side: pa.Table.from_pandas(side, preserve_index=False)  # noqa: E731
    else:
        pl = pytest.importorskip("polars")
        convert = pl.from_pandas
    result, other_notes = _quiet(
        lambda: cs.judged_delta(
            convert(a), convert(b), "human", "doc", judge="judge", on=["item", "run"]
        )
    )
    assert_same(reference, result)
    assert notes == other_notes


def _judged_models() -> pd.DataFrame:
    alpha, beta = _judged_sides()
    frame = pd.concat([alpha, beta])
    third = alpha.assign(
        model="gamma", judge=(alpha["judge"] * 0.8).round(3), human=alpha["human"] - 0.1
    )
    return pd.concat([frame, third], ignore_index=True)


@pytest.mark.parametrize("layout", ["dask", "pyarrow", "polars", "xarray", "xarray-chunked"])
def test_judged_compare_parity(layout: str) -> None:
    frame = _judged_models()
    options = {"model": "model", "judge": "judge", "on": ["item", "run"], "rng": 3}
    reference, notes = _quiet(lambda: cs.judged_compare(frame, "human", "doc", **options))
    if layout.startswith("xarray"):
        data = cs.to_case_rerun(
            frame, case="item", rerun="run", outcome=["human", "judge"], dims=["model"],
            coords=["doc"],
        )  # fmt: skip
        data = data.chunk({"case": 9}) if layout == "xarray-chunked" else data
        options.pop("on")  # a Dataset's runs are matched by their (case, rerun) cell
        result, other_notes = _quiet(lambda: data.eval.judged_compare("human", "doc", **options))
        assert_same(reference, result)
        assert notes == other_notes
        return
    if layout == "dask":
        data = dd.from_pandas(frame, npartitions=3)
    elif layout == "pyarrow":
        data = pytest.importorskip("pyarrow").Table.from_pandas(frame, preserve_index=False)
    else:
        data = pytest.importorskip("polars").from_pandas(frame)
    result, other_notes = _quiet(lambda: cs.judged_compare(data, "human", "doc", **options))
    assert_same(reference, result)
    assert notes == other_notes
    shuffled = frame.sample(frac=1.0, random_state=5)
    assert_same(
        reference, _quiet(lambda: shuffled.eval.judged_compare("human", "doc", **options))[0]
    )


@pytest.mark.parametrize("layout", ["dask", "xarray", "xarray-chunked", "pyarrow", "polars"])
def test_judged_plan_parity(layout: str, judged_layouts: dict) -> None:
    if layout not in judged_layouts:
        pytest.skip(f"{layout} is not installed")
    options = {"judge": "judge", "target_half_width": 0.2, "cost_per_cluster": 2}
    reference, notes = _quiet(
        lambda: cs.judged_plan(judged_layouts["pandas"], "human", "doc", **options)
    )
    result, other_notes = _quiet(
        lambda: cs.judged_plan(judged_layouts[layout], "human", "doc", **options)
    )
    pd.testing.assert_frame_equal(reference.to_frame(), result.to_frame(), rtol=1e-12)
    assert reference.notes == result.notes
    assert notes == other_notes
