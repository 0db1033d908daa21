"""Hostile input for weights at the edges (issue 25): scale-free, and counted where they
carry weight.

A Hájek mean ``sum(w y) / sum(w)`` and its linearised variance do not change when every
weight is multiplied by one constant (both the numerator and the denominator scale), so a
weight column scaled by 1e-200 or 1e300 must give the interval of the same column at scale
1, with no infinite standard error, no [0, 1] and no raw ``ZeroDivisionError`` or
``OverflowError``. A row (or item) of weight zero is not in the weighted sample: the result
must equal the one computed without those rows, count only the rows and clusters that carry
weight, say how many weighed zero, and refuse a single informative cluster by naming the
weight column. Every expected value below is one of those two identities, computed in the
check from the same call on the rescaled or the reduced data. The harness
(``tests/hostile/hostile.py``) checks that no input changed.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pandas as pd
import pytest
import xarray as xr
from hostile import Case, Raises, Returns, Warns, params, quiet, run

import clusterstats as cs

Few = cs.TooFewClustersError
ONE_CLUSTER = r"weights column 'w' is positive in only 1 cluster"


def rows(scale: float = 1.0, informative: int | None = None) -> pd.DataFrame:
    """240 rows: 24 documents ``d0``..``d23`` of 10 questions, a pass rate that varies by
    document, lognormal weights times ``scale``; with ``informative``, the weights are zero
    outside the first ``informative`` documents."""
    rng = np.random.default_rng(11)
    doc = np.repeat(np.arange(24), 10)
    rate = rng.beta(3, 2, 24)[doc]
    w = rng.lognormal(0.0, 0.7, doc.size) * scale
    if informative is not None:
        w = np.where(doc < informative, w, 0.0)
    return pd.DataFrame(
        {
            "item": np.arange(doc.size),
            "doc": [f"d{d}" for d in doc],
            "topic": np.where(doc % 2 == 0, "even", "odd"),
            "y": (rng.random(doc.size) < rate).astype(float),
            "w": w,
        }
    )


def two_sides(scale: float = 1.0, informative: int | None = None) -> dict[str, pd.DataFrame]:
    new = rows(scale, informative)
    rng = np.random.default_rng(12)
    old = new.assign(y=np.where(rng.random(len(new)) < 0.8, new["y"], 1.0 - new["y"]))
    return {"data": new, "other": old}


def three_models(scale: float = 1.0, informative: int | None = None) -> dict[str, pd.DataFrame]:
    base = rows(scale, informative)
    rng = np.random.default_rng(13)
    frames = [
        base.assign(model=m, y=(rng.random(len(base)) < p).astype(float))
        for m, p in (("a", 0.7), ("b", 0.6), ("c", 0.5))
    ]
    return {"data": pd.concat(frames, ignore_index=True)}


def same_interval(reference) -> Callable[[Any], None]:
    """The result's estimate and bounds equal ``reference()``'s to 1e-10, and are finite."""

    def check(result) -> None:
        expected = reference()
        got = (result.estimate, result.low, result.high, result.se)
        want = (expected.estimate, expected.low, expected.high, expected.se)
        assert np.isfinite(got).all()
        assert got == pytest.approx(want, rel=1e-10, abs=1e-12)
        assert (result.n_rows, result.n_clusters) == (expected.n_rows, expected.n_clusters)

    return check


def ci(data, **options):
    return cs.cluster_ci(data, "y", by="doc", weights="w", **options)


def unit_ci():
    return quiet(lambda: ci(rows()))()


def same_delta(reference) -> Callable[[Any], None]:
    def check(result) -> None:
        expected = reference()
        got = (result.delta, result.low, result.high, result.se)
        assert np.isfinite(got).all()
        assert got == pytest.approx(
            (expected.delta, expected.low, expected.high, expected.se), rel=1e-10, abs=1e-12
        )
        assert (result.n_items, result.n_clusters) == (expected.n_items, expected.n_clusters)

    return check


def paired(data, other):
    return cs.paired_delta(data, other, "y", by="doc", on="item", weights="w")


def same_leaderboard(reference) -> Callable[[Any], None]:
    columns = ["model", "score", "low", "high"]

    def check(result) -> None:
        got, want = result.leaderboard()[columns], reference().leaderboard()[columns]
        assert np.isfinite(got[["score", "low", "high"]].to_numpy()).all()
        pd.testing.assert_frame_equal(got, want, rtol=1e-10)

    return check


def compare(data):
    return cs.compare(data, "y", by="doc", model="model", on="item", weights="w", rng=1)


def carrying(frame: pd.DataFrame) -> pd.DataFrame:
    return frame[frame["w"] > 0]


def dask_frame(frame: pd.DataFrame):
    dd = pytest.importorskip("dask.dataframe")
    return dd.from_pandas(frame, npartitions=3)


def dataset(scale: float) -> xr.Dataset:
    """The documents' first questions as cases of two reruns, a weight per case."""
    frame = rows(scale).groupby("doc", sort=False).head(4)
    again = np.random.default_rng(14).random(len(frame)) < 0.6
    runs = np.stack([frame["y"].to_numpy(), again.astype(float)], axis=1)
    return xr.Dataset(
        {"y": (("case", "rerun"), runs)},
        coords={
            "case": np.arange(len(frame)),
            "doc": ("case", frame["doc"].to_numpy()),
            "w": ("case", frame["w"].to_numpy()),
        },
    )


def zero_weight_noted(reference, *, n_clusters: int, n_rows: int) -> Callable[[Any], None]:
    same = same_interval(reference)

    def check(result) -> None:
        same(result)
        assert (result.n_clusters, result.n_rows) == (n_clusters, n_rows)
        assert any("weigh zero and are not in the weighted sample" in n for n in result.notes)

    return check


SCALES = [1e-200, 1e-160, 1e160, 1e300]

# 50 rows in 5 documents carry weight: the interval is cluster_ci's of those rows alone
FIVE_CARRY_WEIGHT = Warns(
    cs.FewClustersWarning,
    r"only 5 clusters",
    zero_weight_noted(quiet(lambda: ci(carrying(rows(informative=5)))), n_clusters=5, n_rows=50),
)

CASES = [
    *[
        Case(
            f"cluster_ci with weights scaled by {scale:g}",
            lambda scale=scale: {"data": rows(scale)},
            quiet(ci),
            Returns(same_interval(unit_ci)),
        )
        for scale in SCALES
    ],
    Case(
        "dask with weights scaled by 1e-200",
        lambda: {"data": dask_frame(rows(1e-200))},
        quiet(ci),
        Returns(same_interval(unit_ci)),
    ),
    Case(
        "dask with weights scaled by 1e300",
        lambda: {"data": dask_frame(rows(1e300))},
        quiet(ci),
        Returns(same_interval(unit_ci)),
    ),
    Case(
        "a Dataset whose weight coordinate is scaled by 1e300",
        lambda: {"data": dataset(1e300)},
        quiet(ci),
        Returns(same_interval(quiet(lambda: ci(dataset(1.0))))),
    ),
    Case(
        "paired_delta with weights scaled by 1e300",
        lambda: two_sides(1e300),
        quiet(paired),
        Returns(same_delta(quiet(lambda: paired(**two_sides())))),
    ),
    Case(
        "paired_delta with weights scaled by 1e-200",
        lambda: two_sides(1e-200),
        quiet(paired),
        Returns(same_delta(quiet(lambda: paired(**two_sides())))),
    ),
    Case(
        "compare with weights scaled by 1e-200",
        lambda: three_models(1e-200),
        quiet(compare),
        Returns(same_leaderboard(quiet(lambda: compare(**three_models())))),
    ),
    Case(
        "compare with weights scaled by 1e300",
        lambda: three_models(1e300),
        quiet(compare),
        Returns(same_leaderboard(quiet(lambda: compare(**three_models())))),
    ),
    Case(
        "weights zero on every document but one",
        lambda: {"data": rows(informative=1)},
        ci,
        Raises(Few, ONE_CLUSTER + r" \('d0'\)"),
    ),
    Case(
        "dask: weights zero on every document but one",
        lambda: {"data": dask_frame(rows(informative=1))},
        ci,
        Raises(Few, ONE_CLUSTER),
    ),
    Case(
        "over=: one group with a single document of positive weight names the group",
        lambda: {"data": rows(informative=2)},
        lambda data: ci(data, over="topic"),
        Raises(Few, r"group 'even' of 'topic': " + ONE_CLUSTER + r" \('d0'\)"),
    ),
    Case(
        "paired_delta: weights zero on every document but one",
        lambda: two_sides(informative=1),
        paired,
        Raises(Few, ONE_CLUSTER),
    ),
    Case(
        "compare: weights zero on every document but one",
        lambda: three_models(informative=1),
        compare,
        Raises(Few, ONE_CLUSTER),
    ),
    Case(
        "strata: zero weights leave one document of positive weight in a stratum",
        lambda: {
            "data": rows().assign(
                half=lambda f: np.where(f["doc"].str[1:].astype(int) < 12, "A", "B"),
                w=lambda f: np.where(f["doc"].isin([f"d{i}" for i in range(1, 12)]), 0, f["w"]),
            )
        },
        lambda data: ci(data, strata="half"),
        Raises(Few, r"stratum has a single cluster.*\['A'\]"),
    ),
    Case(
        "weights zero outside five documents count five clusters, as if the rest were absent",
        lambda: {"data": rows(informative=5)},
        ci,
        FIVE_CARRY_WEIGHT,
    ),
    Case(
        "dask: weights zero outside five documents count five clusters",
        lambda: {"data": dask_frame(rows(informative=5))},
        ci,
        FIVE_CARRY_WEIGHT,
    ),
    Case(
        "paired_delta: items of weight zero are left out and counted",
        lambda: two_sides(informative=5),
        quiet(paired),
        Returns(
            lambda result: (
                same_delta(
                    quiet(
                        lambda: paired(
                            **{k: carrying(v) for k, v in two_sides(informative=5).items()}
                        )
                    )
                )(result)
                or any("190 items weigh zero" in n for n in result.notes)
            )
        ),
    ),
    Case(
        "compare: items of weight zero are left out and counted",
        lambda: three_models(informative=5),
        quiet(compare),
        Returns(
            lambda result: (
                same_leaderboard(
                    quiet(lambda: compare(carrying(three_models(informative=5)["data"])))
                )(result)
                or any("190 items weigh zero" in n for n in result.notes)
            )
        ),
    ),
]


@pytest.mark.parametrize("case", params(CASES))
def test_hostile(case: Case) -> None:
    run(case)
