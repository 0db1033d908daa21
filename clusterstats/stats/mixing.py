"""Weights that move an eval's category mix to a target mix: ``weights_for_mix``."""

from __future__ import annotations

import math
import numbers
from collections.abc import Hashable, Mapping
from typing import Any

import pandas as pd

from clusterstats.errors import ColumnNotFoundError, InvalidInputError, InvalidOptionError

__all__ = ["weights_for_mix"]


def weights_for_mix(
    data: pd.DataFrame,
    by: Hashable,
    target: Mapping[Any, float],
) -> pd.Series:
    """Post-stratification weights that give each category of ``by`` its share of
    ``target``: "accuracy on my traffic mix".

    A row of category ``c`` gets ``w = target_share(c) / sample_share(c)``, so the weighted
    shares of the categories are the target's and the weights average 1 (they sum to the
    number of rows). Pass the weights to ``cluster_ci(..., weights=...)``, with
    ``strata=by`` to treat the target shares as fixed (post-stratification, Holt & Smith
    1979); a weighted mean is then ``Σ_c target_share(c) × mean(c)``.

    Parameters
    ----------
    data : pandas.DataFrame
        The graded rows.
    by : column name
        The category column (e.g. ``"category"``, a task or a traffic segment).
    target : mapping of category to share
        The mix to reach: a non-negative number per category (shares, percentages or
        counts: they are normalised to sum to 1). Every category of the data must be in it
        (a category with share 0 gets weight 0), and every category in it must occur in the
        data (no rows can stand for a category the eval never asked).

    Returns
    -------
    pandas.Series
        One weight per row, on ``data``'s index, named ``"weight"``.

    Raises
    ------
    InvalidInputError
        ``data`` is not a pandas DataFrame, or ``target`` is not a mapping.
    ColumnNotFoundError
        ``by`` is not a column.
    InvalidOptionError
        A category of the data missing from ``target`` or the reverse, a share that is
        negative or not a number, shares that are all zero, or missing categories in ``by``.

    Examples
    --------
    >>> import pandas as pd, clusterstats
    >>> df = pd.DataFrame({"category": ["math"] * 6 + ["law"] * 2, "correct": [1] * 6 + [0] * 2})
    >>> w = clusterstats.weights_for_mix(df, "category", {"math": 0.5, "law": 0.5})
    >>> w.groupby(df["category"]).sum().to_dict()  # each category now weighs half
    {'law': 4.0, 'math': 4.0}
    >>> float((w * df["correct"]).sum() / w.sum())  # accuracy on the 50/50 mix
    0.5
    """
    if not isinstance(data, pd.DataFrame):
        raise InvalidInputError(
            f"weights_for_mix needs a pandas DataFrame, got {type(data).__name__}"
        )
    if not isinstance(target, Mapping):
        raise InvalidInputError(
            f"target must be a mapping of category to share, got {type(target).__name__}"
        )
    if by not in data.columns:
        raise ColumnNotFoundError(by, list(data.columns))
    categories = data[by]
    if categories.isna().any():
        raise InvalidOptionError(
            f"column {by!r} has {int(categories.isna().sum())} missing categories; give every "
            "row a category"
        )
    shares = {}
    for category, share in target.items():
        if (
            isinstance(share, bool)
            or not isinstance(share, numbers.Real)
            or not math.isfinite(share)
            or share < 0
        ):
            raise InvalidOptionError(
                f"target share of {category!r} is {share!r}: shares are non-negative numbers"
            )
        shares[category] = float(share)
    total = sum(shares.values())
    if not total > 0:
        raise InvalidOptionError("the target shares are all zero")
    counts = categories.value_counts()
    absent = [c for c in counts.index if c not in shares]
    if absent:
        raise InvalidOptionError(
            f"categories {sorted(map(str, absent))} of {by!r} are not in target; give them a "
            "share (0 to leave them out)"
        )
    unseen = [c for c in shares if c not in counts.index and shares[c] > 0]
    if unseen:
        raise InvalidOptionError(
            f"target gives a share to {sorted(map(str, unseen))}, which {by!r} never holds: "
            "no rows can stand for them"
        )
    n = float(len(data))
    factor = {c: (shares[c] / total) / (counts[c] / n) for c in counts.index}
    return categories.map(factor).astype(float).rename("weight")
