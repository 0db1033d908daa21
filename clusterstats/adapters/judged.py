"""A judged run with some rows labelled by humans, reduced to per-cluster sums.

Every backend reaches :func:`judged_design` with a pandas frame: a polars or pyarrow table
converted, a dask DataFrame computed (its named columns only), a (case, rerun) Dataset laid
out long by :func:`frame_of_dataset`. The sums are those of
:class:`~clusterstats.core.judged.JudgedSums`.
"""

from __future__ import annotations

from collections.abc import Hashable
from typing import Any

import numpy as np
import pandas as pd
import xarray as xr

from clusterstats._design import JudgedDesign
from clusterstats.adapters import arrow
from clusterstats.adapters import dask as dask_adapter
from clusterstats.adapters.frame import (
    as_frame,
    cluster_codes,
    outcome_values,
    stratify,
)
from clusterstats.adapters.labels import Columns, require_columns
from clusterstats.adapters.pairing import sorted_ranks
from clusterstats.core.judged import JudgedSums
from clusterstats.errors import (
    AlignmentError,
    ColumnNotFoundError,
    DimensionError,
    EmptyDataError,
    InvalidDataError,
    InvalidInputError,
    InvalidOptionError,
    InvalidOutcomeError,
)

__all__ = [
    "ITEM_KEY",
    "frame_of_dataset",
    "frame_of_models",
    "judged_design",
    "model_frames",
    "paired_frame",
    "with_labels",
]

#: The columns a Dataset's runs carry once laid out long: the position of each run's case and
#: of the run along the rerun dim (the key that matches one model's runs to another's).
ITEM_KEY = ("case position", "run position")


def _rows(frame: pd.DataFrame, mask: np.ndarray) -> list[Any]:
    return frame.index[np.flatnonzero(mask)[:3]].tolist()


def _inclusion(frame: pd.DataFrame, label: Hashable, labelled: np.ndarray) -> np.ndarray:
    """The stated inclusion probabilities: numbers in (0, 1] on every labelled row."""
    values = outcome_values(frame[label], label)
    on_labelled = values[labelled]
    missing = np.isnan(on_labelled)
    if missing.any():
        raise InvalidDataError(
            f"inclusion column {label!r} is missing on {int(missing.sum())} labelled rows "
            f"(rows {_rows(frame, labelled & np.isnan(values))}); every labelled row needs "
            "the probability it had of being labelled"
        )
    outside = (on_labelled <= 0) | (on_labelled > 1)
    if outside.any():
        bad = labelled & ((values <= 0) | (values > 1))
        raise InvalidDataError(
            f"inclusion column {label!r} holds {int(outside.sum())} probabilities outside "
            f"(0, 1] on labelled rows (rows {_rows(frame, bad)}, e.g. "
            f"{float(on_labelled[outside][0])!r}): a labelled row had a positive chance of "
            "being labelled, and no more than certainty"
        )
    return np.where(labelled, values, np.nan)


def judged_design(
    data: pd.DataFrame | None, columns: Columns, *, nest: bool = False
) -> JudgedDesign:
    """Validate a frame of judge scores and human labels and reduce it to per-cluster sums.

    Every row needs a judge score; a human label is missing where the row is unlabelled.
    """
    frame, outcome, by = as_frame(data, columns.outcome, columns.given("by"))
    judge, strata, inclusion = columns.judge, columns.strata, columns.inclusion
    require_columns(
        frame, [outcome, *by, judge, *columns.labels("strata"), *columns.labels("inclusion")]
    )
    if len(frame) == 0:
        raise EmptyDataError("the frame has no rows")
    human = outcome_values(frame[outcome], outcome)
    scores = outcome_values(frame[judge], judge)
    unjudged = np.isnan(scores)
    labelled = ~np.isnan(human)
    if unjudged.any():
        with_label = unjudged & labelled
        where = "of them labelled" if with_label.any() else "none of them labelled"
        raise InvalidDataError(
            f"judge column {judge!r} is missing on {int(unjudged.sum())} rows "
            f"({int(with_label.sum())} {where}; rows {_rows(frame, unjudged)}): the judge "
            "scores every row, and the estimate is its mean corrected by the labels; drop the "
            "rows the judge did not score, or score them"
        )
    codes = cluster_codes(frame, by)
    n_clusters = int(codes.max()) + 1
    if strata is None:
        stratum_of_cluster = np.zeros(n_clusters, dtype=np.intp)
        strata_labels: tuple[Any, ...] = ()
    else:
        codes, stratum_of_cluster, strata_labels = stratify(frame, codes, strata, nest=nest)
        stratum_of_cluster = stratum_of_cluster.astype(np.intp)
    if inclusion is None:
        v = labelled.astype(np.float64)
    else:
        v = np.where(labelled, 1.0 / _inclusion(frame, inclusion, labelled), 0.0)
    y = np.where(labelled, human, 0.0)
    f_labelled = np.where(labelled, scores, 0.0)

    def total(values: np.ndarray) -> np.ndarray:
        return np.bincount(codes, weights=values, minlength=n_clusters)

    sums = JudgedSums(
        rows=total(np.ones(codes.size)),
        judge_total=total(scores),
        labelled=total(labelled.astype(np.float64)),
        weight=total(v),
        human=total(v * y),
        judge=total(v * f_labelled),
        human_sq=total(v * y**2),
        judge_sq=total(v * f_labelled**2),
        cross=total(v * y * f_labelled),
        strata=stratum_of_cluster,
        stated=inclusion is not None,
    )
    human_range = (
        (float(human[labelled].min()), float(human[labelled].max()))
        if labelled.any()
        else (np.nan, np.nan)
    )
    return JudgedDesign(
        outcome=outcome,
        judge=judge,
        by=tuple(by),
        sums=sums,
        strata=strata,
        strata_labels=strata_labels,
        inclusion=inclusion,
        judge_range=(float(scores.min()), float(scores.max())),
        human_range=human_range,
    )


def frame_of_dataset(data: xr.Dataset, columns: Columns) -> tuple[pd.DataFrame, Columns]:
    """A (case, rerun) Dataset's runs as a long frame: one row per run the judge scored
    (a cell with neither a judge score nor a label is a run that did not happen), the
    clusters its cases or its ``by`` coordinates along the case dim."""
    case, rerun = columns.layout
    long: dict[Hashable, Any] = {}
    for role in ("outcome", "judge", "inclusion"):
        label = getattr(columns, role)
        if label is None:
            continue
        if label not in data.variables:
            raise ColumnNotFoundError(label, list(data.data_vars))
        variable = data[label]
        extra = [d for d in variable.dims if d not in (case, rerun)]
        if extra or case not in variable.dims:
            raise DimensionError(
                f"variable {label!r} has dims {variable.dims}: judged_ci reads a "
                f"({case!r}, {rerun!r}) Dataset; select one slice of {extra} first"
            )
        long[label] = variable.broadcast_like(data[columns.judge]).transpose(case, ...)
    judged = long[columns.judge]
    cases = np.asarray(judged[case].values) if case in judged.coords else np.arange(judged.shape[0])
    grid = np.repeat(np.arange(judged.shape[0]), judged.shape[1] if judged.ndim > 1 else 1)
    frame = pd.DataFrame(
        {
            label: np.asarray(values.values, dtype=np.float64).ravel()
            for label, values in long.items()
        }
    )
    if columns.by:
        for name in columns.by:
            frame[name] = np.asarray(data[name].values)[grid]
        named = columns
    else:
        frame[str(case)] = cases[grid]
        named = columns.with_roles(by=str(case))
    if columns.strata is not None:
        frame[columns.strata] = np.asarray(data[columns.strata].values)[grid]
    frame[ITEM_KEY[0]] = grid
    frame[ITEM_KEY[1]] = np.tile(np.arange(judged.shape[1] if judged.ndim > 1 else 1), len(cases))
    happened = ~(frame[columns.judge].isna() & frame[columns.outcome].isna())
    if not happened.any():
        raise InvalidOutcomeError(f"the Dataset has no run with a judge score in {columns.judge!r}")
    return frame[happened.to_numpy()].reset_index(drop=True), named


def frame_of_models(data: xr.Dataset, columns: Columns) -> tuple[pd.DataFrame, Columns]:
    """A (case, rerun) Dataset with the models along the ``columns.model`` dim as one long
    frame: each model's runs (:func:`frame_of_dataset`), keyed by their (case, rerun) cell,
    which the models share."""
    model = columns.model
    if model not in data.dims:
        raise DimensionError(
            f"judged_compare reads the models along a dim {model!r} of the Dataset; its dims "
            f"are {tuple(data.dims)}"
        )
    one_model = columns.with_roles(model=None)
    labels = data[model].values if model in data.coords else np.arange(data.sizes[model])
    parts = []
    for position, label in enumerate(labels):
        long, named = frame_of_dataset(data.isel({model: position}, drop=True), one_model)
        parts.append(long.assign(**{model: label}))
    frame = pd.concat(parts, ignore_index=True)
    return frame, named.with_roles(model=model, on=list(ITEM_KEY))


def _as_frame(table: Any, names: list[Hashable], what: str) -> pd.DataFrame:
    if isinstance(table, xr.Dataset):
        raise InvalidInputError(
            f"{what} is a Dataset: a (case, rerun) Dataset holds its human labels as a "
            "variable beside the judge's; labels= takes a table matched on= a key"
        )
    if dask_adapter.is_dask_frame(table):
        return dask_adapter.compute_columns(table, names)
    table = arrow.to_pandas(table, names)
    if not isinstance(table, pd.DataFrame):
        raise InvalidInputError(
            f"{what} must be a pandas, polars, pyarrow or dask table, got {type(table).__name__}"
        )
    require_columns(table, names)
    return table[names]


def _repeated(frame: pd.DataFrame, key: list[Hashable]) -> list[Any]:
    repeated = frame[key][frame.duplicated(key, keep=False)].drop_duplicates()
    return [tuple(row) if len(key) > 1 else row[0] for row in repeated.head(3).to_numpy()]


def with_labels(data: Any, labels: Any, columns: Columns) -> pd.DataFrame:
    """The judged rows with the human labels of a second table matched ``on=`` a key: every
    label must name a judged row, each key once on either side; a judged row without a label
    is unlabelled."""
    key = list(columns.on)
    if not key:
        raise InvalidOptionError(
            "labels= is matched to the judged rows on a key: pass on= (e.g. on='sample_id')"
        )
    outcome = columns.outcome
    judged_names = [name for name in columns.names() if name != outcome]
    judged = _as_frame(data, judged_names, "data")
    human = _as_frame(labels, [*key, outcome], "labels")
    if outcome in (data.columns if hasattr(data, "columns") else []):
        raise InvalidDataError(
            f"column {outcome!r} is in the judged rows and in labels=: name the labels' column "
            "once, in labels="
        )
    for frame, what in ((judged, "judged rows"), (human, "labels")):
        repeated = _repeated(frame, key)
        if repeated:
            raise AlignmentError(
                f"the {what} repeat the key {key if len(key) > 1 else key[0]!r} (e.g. "
                f"{repeated}): each judged row and each label needs its own key; name the "
                "columns that identify one (e.g. on=['sample_id', 'epoch'])"
            )
    merged = judged.merge(human, on=key, how="left", indicator=True, validate="one_to_one")
    unmatched = human.merge(judged[key], on=key, how="left", indicator=True)
    strays = unmatched[unmatched["_merge"] == "left_only"]
    if len(strays):
        shown = strays[key].head(3).to_numpy().tolist()
        raise AlignmentError(
            f"{len(strays)} of the {len(human)} labels name no judged row on {key} (e.g. "
            f"{shown}): labels must be a subset of the rows the judge scored"
        )
    merged.index = judged.index
    return merged.drop(columns="_merge")


def paired_frame(
    data: Any, other: Any, columns: Columns, *, how: str
) -> tuple[pd.DataFrame, int, tuple[tuple[float, float], tuple[float, float]]]:
    """Two judged runs on the same items as one frame of differences, matched on
    ``columns.on``: the judge's difference on every shared item, the human labels'
    difference where both sides are labelled. Returns the frame and how many items carry a
    label on one side only (unusable for the difference).

    ``how="strict"`` refuses items judged on one side only; ``"inner"`` keeps the shared
    ones. Also returns the ranges of the two runs' own judge scores and labels (the scale
    check reads the runs, not their differences).
    """
    key = list(columns.on)
    if not key:
        raise InvalidOptionError(
            "two judged runs are matched item by item on a key: pass on= (e.g. on='item')"
        )
    outcome, judge = columns.outcome, columns.judge
    shared = [name for name in columns.names() if name not in (outcome, judge)]
    sides = [_as_frame(side, [*dict.fromkeys([*shared, outcome, judge])], what)
             for side, what in ((data, "data"), (other, "other"))]  # fmt: skip
    for frame, what in zip(sides, ("first run", "second run"), strict=True):
        repeated = _repeated(frame, key)
        if repeated:
            raise AlignmentError(
                f"the {what} repeats the key {key if len(key) > 1 else key[0]!r} (e.g. "
                f"{repeated}): each item needs its own key on each side"
            )
    merged = sides[0].merge(
        sides[1][[*key, outcome, judge]], on=key, how="outer", suffixes=("", " (other)"),
        indicator=True,
    )  # fmt: skip
    lonely = merged["_merge"] != "both"
    if lonely.any() and how == "strict":
        where = merged.loc[lonely, key].head(3).to_numpy().tolist()
        raise AlignmentError(
            f"{int(lonely.sum())} items are judged in one run only (e.g. {where}): both runs "
            "must judge the same items; pass how='inner' to keep the shared ones"
        )
    merged = merged[~lonely.to_numpy()].reset_index(drop=True)
    if len(merged) == 0:
        raise AlignmentError(f"the two runs share no item on {key}")
    first, second = (outcome_values(merged[name], name) for name in (outcome, f"{outcome} (other)"))
    one_side = int((np.isnan(first) != np.isnan(second)).sum())
    difference = merged[shared].assign(
        **{
            outcome: first - second,
            judge: outcome_values(merged[judge], judge)
            - outcome_values(merged[f"{judge} (other)"], judge),
        }
    )
    scores = np.concatenate([outcome_values(merged[judge], judge),
                             outcome_values(merged[f"{judge} (other)"], judge)])  # fmt: skip
    labels = np.concatenate([first, second])
    labels = labels[~np.isnan(labels)]
    ranges = (
        (float(np.nanmin(scores)), float(np.nanmax(scores))),
        (float(labels.min()), float(labels.max())) if labels.size else (np.nan, np.nan),
    )
    return difference, one_side, ranges


def model_frames(
    data: Any, columns: Columns, *, how: str
) -> tuple[tuple[Any, ...], list[pd.DataFrame], int]:
    """A long table of judged models (one row per model and item) as one frame per model,
    every frame listing the same items in the same order, matched on ``columns.on``.

    Returns the models (sorted; first-appearance order when their labels cannot be sorted),
    their frames (the item's key, clusters and strata, checked to agree across models, with
    the model's human label and judge score), and how many items ``how="inner"`` left out;
    ``how="strict"`` refuses an item some model was not judged on.
    """
    key, model = list(columns.on), columns.model
    if not key:
        raise InvalidOptionError(
            "the models' rows are matched item by item on a key: pass on= (e.g. on='item')"
        )
    outcome, judge = columns.outcome, columns.judge
    shared = [name for name in columns.names() if name not in (outcome, judge, model)]
    frame = _as_frame(data, [*dict.fromkeys([model, *shared, outcome, judge])], "data")
    if frame[model].isna().any():
        rows = _rows(frame, frame[model].isna().to_numpy())
        raise InvalidDataError(f"model column {model!r} is missing on rows {rows}")
    repeated = _repeated(frame, [model, *key])
    if repeated:
        raise AlignmentError(
            f"a model repeats the key {key if len(key) > 1 else key[0]!r} (e.g. (model, key) "
            f"{repeated}): each model needs one row per item"
        )
    model_codes, found = pd.factorize(frame[model])
    rank, models = sorted_ranks(tuple(found))
    model_codes = rank[model_codes]
    item_codes, n_items = _item_codes(frame, key)
    present = np.zeros((n_items, len(models)), dtype=bool)
    present[item_codes, model_codes] = True
    complete = present.all(axis=1)
    dropped = int((~complete).sum())
    if dropped and how == "strict":
        shown = frame.loc[~complete[item_codes], key].drop_duplicates().head(3)
        raise AlignmentError(
            f"{dropped} items are judged for some models only (e.g. "
            f"{shown.to_numpy().tolist()}): every model must be judged on the same items; "
            "pass how='inner' to keep the items every model has"
        )
    keep = complete[item_codes]
    frame, item_codes, model_codes = frame[keep], item_codes[keep], model_codes[keep]
    if not complete.any():
        raise AlignmentError(f"no item on {key} is judged for every model")
    spread = frame.groupby(item_codes, sort=False)[shared].nunique(dropna=False) > 1
    if shared and spread.to_numpy().any():
        column = spread.columns[spread.to_numpy().any(axis=0)][0]
        raise AlignmentError(
            f"some items have different values of {column!r} for different models: an item's "
            "cluster (and stratum) is the same for every model that answers it"
        )
    _, item_order = np.unique(item_codes, return_inverse=True)
    first = np.zeros(int(item_order.max()) + 1, dtype=np.intp)
    first[item_order[::-1]] = np.arange(item_order.size)[::-1]
    base = frame.iloc[first][shared].reset_index(drop=True)
    frames = []
    for m in range(len(models)):
        rows = np.flatnonzero(model_codes == m)
        order = np.empty(rows.size, dtype=np.intp)
        order[item_order[rows]] = rows
        frames.append(
            base.assign(
                **{
                    outcome: outcome_values(frame[outcome].iloc[order], outcome),
                    judge: outcome_values(frame[judge].iloc[order], judge),
                }
            )
        )
    return models, frames, dropped


def _item_codes(frame: pd.DataFrame, key: list[Hashable]) -> tuple[np.ndarray, int]:
    codes = frame.groupby(key, sort=False, dropna=False).ngroup().to_numpy()
    return codes.astype(np.intp), int(codes.max()) + 1 if codes.size else 0
