"""Hostile input for the diagnostics: ``check_clustering`` and ``report`` (issue 15).

Each case states the exact error and a message naming the offending column, group or
option, or the right number. Sources of the expected numbers are in the comments: hand
counts of time windows, the closed-form Clopper–Pearson bound ``(α/2)^{1/n}`` for all
successes, the identity ``CR1 = naive`` for singleton clusters, and ``cluster_ci``'s CR1
standard error (tested against R and statsmodels elsewhere).
"""

from __future__ import annotations

import math
import warnings

import numpy as np
import pandas as pd
import pytest
import xarray as xr
from hostile import Case, Raises, Returns, Warns, params, run

import clusterstats as cs

Option = cs.InvalidOptionError
#: 200 runs 36 s apart from epoch second 1,700,000,000 (2023-11-14 22:13:20 UTC): they span
#: 22:13:20 to 00:12:44, so 10-minute windows 22:10, 22:20, ..., 00:10: 13 windows.
EPOCH = 1_700_000_000 + np.arange(200) * 36


def frame(seed: int = 0) -> pd.DataFrame:
    """200 binary rows: 20 clusters ``a`` of 10, crossed with 10 templates ``b``; groups
    ``g`` of 100 rows (10 clusters each); timestamps ``t`` (and ``epoch``) 36 s apart."""
    rng = np.random.default_rng(seed)
    return pd.DataFrame(
        {
            "y": (rng.random(200) < 0.6).astype(float),
            "a": np.repeat(np.arange(20), 10),
            "b": np.tile(np.arange(10), 20),
            "g": np.repeat(["x", "z"], 100),
            "epoch": EPOCH,
            "t": pd.to_datetime(EPOCH, unit="s"),
        }
    )


def with_column(name: str, values) -> dict:
    data = frame()
    data[name] = values
    return {"data": data}


def check(name, inputs, expect, *candidates, **options) -> Case:
    """``check_clustering(data, "y", candidates, **options)`` on ``inputs()``."""
    return Case(
        name,
        inputs,
        lambda data: cs.check_clustering(data, "y", list(candidates), **options),
        expect,
    )


def windows(name, inputs, expect, window="10min") -> Case:
    return check(name, inputs, expect, time="t", window=window)


def reported(name, inputs, expect, by="a", **options) -> Case:
    return Case(name, inputs, lambda data: cs.report(data, "y", by, **options), expect)


def holds(predicate):
    """A ``check`` that asserts ``predicate(result)``, showing the result if it fails."""

    def check_result(result):
        assert predicate(result), result

    return check_result


def _mixed_zones() -> dict:
    utc = pd.to_datetime(EPOCH, unit="s", utc=True)
    stamps = [s if i % 2 else s.tz_convert("US/Eastern") for i, s in enumerate(utc)]
    return with_column("t", pd.Series(stamps, dtype=object))


def _dst_change() -> dict:
    # 200 minutes from midnight on 2026-11-01 in New York: 01:00-02:00 happens twice
    stamps = pd.date_range("2026-11-01 00:00", periods=200, freq="1min", tz="US/Eastern")
    return with_column("t", stamps)


def _dataset() -> xr.Dataset:
    rng = np.random.default_rng(0)
    return xr.Dataset(
        {"y": (("case", "rerun"), (rng.random((20, 5)) < 0.5).astype(float))},
        coords={
            "case": np.arange(20),
            "rerun": np.arange(5),
            "block": ("case", np.arange(20) // 4),
        },
    )


def _dask():
    dd = pytest.importorskip("dask.dataframe")
    return {"data": dd.from_pandas(frame(), npartitions=2)}


def _thirteen_windows(result):
    # hand count in EPOCH's comment
    row = result.to_frame().iloc[0]
    assert row["grouping"] == "t per 10min"
    assert row["n_clusters"] == 13


def _same_as_column_a(result):
    data = frame()
    ci = cs.cluster_ci(data, "y", by="a", method="cr1")
    row = result.to_frame().iloc[0]
    assert list(result.to_frame()["grouping"]) == ["a"]
    assert row["se"] == pytest.approx(ci.se, rel=1e-12)


def _singletons(result):
    # one row per cluster: CR1 = G/(G−1) Σe²/N² with G = N equals the naive s²/N exactly
    row = result.to_frame().iloc[0]
    assert row["design_effect"] == pytest.approx(1.0, rel=1e-12)
    assert math.isnan(row["icc"])
    assert any("ICC is undefined for k" in note for note in result.notes)


def _all_pass_group(result):
    # group z passes everywhere (10 clusters of 10 rows): the default (inverted Korn-Graubard)
    # assumes the largest ICC searched, 0.98, so n0 = 100 / (1 + 0.98 * 9), and its mid-p
    # lower bound solves mu^n0 / 2 = α/2, i.e. mu = 0.05^(1/n0)
    frame_ = result.to_frame().set_index("group")
    n0 = 100 / (1 + 0.98 * 9)
    assert frame_.loc["z", "low"] == pytest.approx(0.05 ** (1 / n0), rel=1e-9)
    assert frame_.loc["z", "high"] == 1.0


def _two_clusters(result):
    data = frame().assign(a=lambda d: d.index % 2)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", cs.FewClustersWarning)  # stated by the case
        ci = cs.cluster_ci(data, "y", by="a")
    row = result.to_frame().iloc[0]
    assert row["n_clusters"] == 2
    assert (row["low"], row["high"]) == (pytest.approx(ci.low), pytest.approx(ci.high))


TIME_CASES = [
    windows(
        "check_clustering: epoch seconds as integers",
        lambda: with_column("t", EPOCH),
        Raises(
            cs.InvalidClusterError,
            r"time column 't' holds numbers \(int64\), not timestamps.*"
            r"pd\.to_datetime\(df\['t'\], unit='s'\)",
        ),
    ),
    windows(
        "check_clustering: epoch seconds as floats",
        lambda: with_column("t", EPOCH.astype(float)),
        Raises(cs.InvalidClusterError, r"time column 't' holds numbers \(float64\)"),
    ),
    windows(
        "check_clustering: epoch seconds as Python ints",
        lambda: with_column("t", pd.Series(EPOCH.tolist(), dtype=object)),
        Raises(cs.InvalidClusterError, r"time column 't' holds numbers \(integer values"),
    ),
    windows(
        "check_clustering: boolean time",
        lambda: with_column("t", np.arange(200) % 2 == 0),
        Raises(cs.InvalidClusterError, r"time column 't' holds booleans"),
    ),
    windows(
        "check_clustering: durations as time",
        lambda: with_column("t", pd.to_timedelta(EPOCH - EPOCH[0], unit="s")),
        Raises(cs.InvalidClusterError, r"time column 't' holds durations"),
    ),
    windows(
        "check_clustering: missing timestamps",
        lambda: with_column("t", frame()["t"].where(np.arange(200) % 5 != 0)),
        Raises(cs.InvalidClusterError, r"time column 't' has 40 missing timestamps \(NaT\)"),
    ),
    windows(
        "check_clustering: strings that are not timestamps",
        lambda: with_column("t", ["soon"] * 200),
        Raises(cs.InvalidClusterError, r"time column 't' holds values that are not timestamps"),
    ),
    windows(
        "check_clustering: timestamps in two time zones",
        _mixed_zones,
        Raises(cs.InvalidClusterError, r"time column 't' mixes time zones.*utc=True"),
    ),
    windows(
        "check_clustering: windows starting at a daylight-saving change",
        _dst_change,
        Raises(
            cs.InvalidClusterError, r"time column 't' holds local times \(US/Eastern\).*daylight"
        ),
        window="1h",
    ),
    windows(
        "check_clustering: a window longer than the runs",
        # 7-day windows start at multiples of 604,800 s from the epoch: 1,699,488,000 to
        # 1,700,092,800 holds every run (1,700,000,000 to 1,700,007,164)
        lambda: {"data": frame()},
        Raises(cs.TooFewClustersError, r"time column 't' in windows of '7D' puts every row in one"),
        window="7D",
    ),
    windows(
        "check_clustering: timestamps as strings",
        lambda: with_column("t", frame()["t"].astype(str)),
        Returns(_thirteen_windows),
    ),
    windows(
        "check_clustering: timestamps in one time zone",
        lambda: with_column("t", frame()["t"].dt.tz_localize("UTC")),
        Returns(_thirteen_windows),
    ),
    windows(
        "check_clustering: naive timestamps", lambda: {"data": frame()}, Returns(_thirteen_windows)
    ),
    check(
        "check_clustering: window without time",
        lambda: {"data": frame()},
        Raises(Option, r"window='1h' needs time="),
        "a",
        window="1h",
    ),
    check(
        "check_clustering: time without window",
        lambda: {"data": frame()},
        Raises(Option, r"time= needs window="),
        time="t",
    ),
    windows(
        "check_clustering: window not a string",
        lambda: {"data": frame()},
        Raises(Option, r"window must be a pandas frequency string .*got 10"),
        window=10,
    ),
    windows(
        "check_clustering: window not a frequency",
        lambda: {"data": frame()},
        Raises(Option, r"window='banana' is not a pandas frequency"),
        window="banana",
    ),
    windows(
        "check_clustering: zero window",
        lambda: {"data": frame()},
        Raises(Option, r"window must be a positive length, got '0min'"),
        window="0min",
    ),
    windows(
        "check_clustering: negative window",
        lambda: {"data": frame()},
        Raises(Option, r"window must be a positive length, got '-10min'"),
        window="-10min",
    ),
    windows(
        "check_clustering: window of months",
        lambda: {"data": frame()},
        Raises(Option, r"window='ME' has no fixed length"),
        window="ME",
    ),
    Case(
        "check_clustering: numeric time coordinate of a Dataset",
        lambda: {"data": _dataset().assign_coords(t=("case", np.arange(20) * 100))},
        lambda data: cs.check_clustering(data, "y", time="t", window="1h"),
        Raises(cs.InvalidClusterError, r"time column 't' holds numbers"),
    ),
]

CANDIDATE_CASES = [
    check(
        "check_clustering: unknown candidate",
        lambda: {"data": frame()},
        Raises(cs.ColumnNotFoundError, r"column 'zz' not found"),
        "zz",
    ),
    check(
        "check_clustering: unknown column in a combined candidate",
        lambda: {"data": frame()},
        Raises(cs.ColumnNotFoundError, r"column 'zz' not found"),
        ["a", "zz"],
    ),
    check(
        "check_clustering: unknown time column",
        lambda: {"data": frame()},
        Raises(cs.ColumnNotFoundError, r"column 'zz' not found"),
        time="zz",
        window="1h",
    ),
    check(
        "check_clustering: unknown candidate of a dask frame",
        _dask,
        Raises(cs.ColumnNotFoundError, r"column 'zz' not found"),
        "zz",
    ),
    check(
        "check_clustering: unknown candidate of a Dataset",
        lambda: {"data": _dataset()},
        Raises(cs.ColumnNotFoundError, r"column 'zz' not found"),
        "zz",
    ),
    check(
        "check_clustering: the outcome as a candidate",
        lambda: {"data": frame()},
        Raises(Option, r"candidate 'y' is the outcome column 'y' itself"),
        "a",
        "y",
    ),
    check(
        "check_clustering: the outcome as a Dataset candidate",
        lambda: {"data": _dataset()},
        Raises(Option, r"candidate 'y' is the outcome column 'y' itself"),
        "y",
    ),
    check(
        "check_clustering: a candidate twice",
        lambda: {"data": frame()},
        Raises(Option, r"candidate 'a' is named twice"),
        "a",
        "b",
        "a",
    ),
    check(
        "check_clustering: a column twice in one candidate",
        lambda: {"data": frame()},
        Raises(Option, r"candidate \['a', 'a'\] names a column twice"),
        ["a", "a"],
    ),
    check(
        "check_clustering: missing candidate labels",
        lambda: with_column("a", frame()["a"].where(frame()["a"] != 3)),
        Raises(cs.InvalidClusterError, r"cluster column 'a' has 10 missing ids"),
        "a",
    ),
    check(
        "check_clustering: a candidate with one cluster",
        lambda: with_column("k", 1),
        Raises(cs.TooFewClustersError, r"candidate 'k' puts every row in one cluster"),
        "a",
        "k",
    ),
    check(
        "check_clustering: an outcome that never varies",
        lambda: with_column("y", 1.0),
        Raises(cs.DegenerateDataError, r"the outcome 'y' has the same value \(1\) in every row"),
        "a",
    ),
    check(
        "check_clustering: every outcome missing",
        lambda: with_column("y", np.nan),
        Raises(cs.EmptyDataError, r"no rows with a non-missing outcome 'y'"),
        "a",
    ),
    check(
        "check_clustering: no candidate",
        lambda: {"data": frame()},
        Raises(Option, r"name at least one candidate grouping"),
    ),
    Case(
        "check_clustering: candidates None",
        lambda: {"data": frame()},
        lambda data: cs.check_clustering(data, "y", None),
        Raises(Option, r"name at least one candidate grouping"),
    ),
    Case(
        "check_clustering: missing policy",
        lambda: {"data": frame()},
        lambda data: cs.check_clustering(data, "y", ["a"], missing="ipw"),
        Raises(Option, r"missing must be one of"),
    ),
    Case(
        "check_clustering: a single label as candidates",
        lambda: {"data": frame()},
        lambda data: cs.check_clustering(data, "y", "a"),
        Returns(_same_as_column_a),
    ),
    check(
        "check_clustering: one row per cluster",
        lambda: with_column("k", np.arange(200)),
        Returns(_singletons),
        "k",
    ),
]

REPORT_CASES = [
    reported(
        "report: a group with one cluster",
        lambda: with_column("a", np.where(frame()["g"] == "z", 99, frame()["a"])),
        Raises(cs.TooFewClustersError, r"group 'z' of 'g': found 1 cluster of 'a'"),
        over="g",
    ),
    reported(
        "report: one cluster",
        lambda: with_column("a", 1),
        Raises(cs.TooFewClustersError, r"found 1 cluster of 'a'"),
    ),
    reported(
        "report: over the cluster column",
        lambda: {"data": frame()},
        Raises(Option, r"over='a' is also a cluster column"),
        over="a",
    ),
    reported(
        "report: over the outcome",
        lambda: {"data": frame()},
        Raises(Option, r"column 'y' is both the outcome and over="),
        over="y",
    ),
    reported(
        "report: clustered by the outcome",
        lambda: {"data": frame()},
        Raises(Option, r"column 'y' is both the outcome and by="),
        by="y",
    ),
    reported(
        "report: a group whose score never varies",
        lambda: with_column("y", np.where(frame()["g"] == "z", 0.3, np.linspace(0, 1, 200))),
        Raises(cs.DegenerateDataError, r"group 'z' of 'g': the 100 outcomes of 'y' are all equal"),
        over="g",
    ),
    reported(
        "report: a group with every outcome missing",
        lambda: with_column("y", np.where(frame()["g"] == "z", np.nan, frame()["y"])),
        Raises(cs.EmptyDataError, r"has no non-missing values in group 'z' of 'g'"),
        over="g",
    ),
    reported(
        "report: missing group labels",
        lambda: with_column("g", frame()["g"].where(np.arange(200) % 3 != 0)),
        Raises(cs.InvalidClusterError, r"column 'g' \(over=\) has 67 missing labels"),
        over="g",
    ),
    reported(
        "report: unknown method",
        lambda: {"data": frame()},
        Raises(Option, r"method must be one of"),
        method="zz",
    ),
    reported(
        "report: missing='ipw'",
        lambda: {"data": frame()},
        Raises(Option, r"missing must be one of"),
        missing="ipw",
    ),
    reported(
        "report: confidence 95",
        lambda: {"data": frame()},
        Raises(Option, r"confidence must be strictly between 0 and 1"),
        confidence=95,
    ),
    reported(
        "report: a group that always passes",
        lambda: with_column("y", np.where(frame()["g"] == "z", 1.0, frame()["y"])),
        Warns(
            cs.DegenerateDataWarning,
            r"all 100 outcomes are 1: the data cannot show how strongly they cluster",
            check=_all_pass_group,
        ),
        over="g",
    ),
    reported(
        "report: two clusters",
        lambda: with_column("a", np.arange(200) % 2),
        Warns(cs.FewClustersWarning, r"only 2 clusters", check=_two_clusters),
    ),
]

CASES = TIME_CASES + CANDIDATE_CASES + REPORT_CASES


@pytest.mark.parametrize("case", params(CASES))
def test_hostile(case):
    run(case)


def test_catalogue_size():
    assert len(CASES) >= 45


def test_no_warning_escapes_a_time_check(recwarn):
    # pandas' own format-inference warnings stay inside the time-column check
    data = frame().assign(t=lambda d: d["t"].astype(str))
    cs.check_clustering(data, "y", time="t", window="10min")
    assert not [w for w in recwarn if issubclass(w.category, UserWarning)]
