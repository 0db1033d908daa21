"""Synthetic clustered eval results with a known mean and ICC (``clusterstats.simulate``)."""

from __future__ import annotations

from typing import Literal

import numpy as np
import pandas as pd
import xarray as xr

from clusterstats import _options as opt
from clusterstats.core import simulation
from clusterstats.errors import InvalidOptionError

__all__ = ["simulate"]

# Rows beyond this are refused before anything is drawn: 10^10 rows are 80 GB per column.
_MAX_ROWS = 10**10


def _check_options(
    n_clusters: object,
    cluster_size: object,
    mean: object,
    icc: object,
    size_cv: object,
    outcome: object,
    layout: object,
    size_difficulty: object,
    seed: object,
) -> None:
    """Each parameter checked by name: the numbers real (not a bool or a string), finite and
    in range, the choices spelled as documented, the flag a bool, the seed one numpy takes;
    what the model itself cannot realise is ``simulation.check_parameters``' to refuse."""
    n = opt.check_plan_number("n_clusters", n_clusters, at_least=1, whole=True)
    m = opt.check_plan_number("cluster_size", cluster_size, at_least=1)
    rho = opt.check_plan_number("icc", icc)
    if not 0.0 <= rho < 1.0:
        raise InvalidOptionError(
            f"icc must be in [0, 1), got {icc!r} (at 1 the rows of a cluster would all be equal)"
        )
    opt.check_plan_number("size_cv", size_cv, at_least=0, why="0 gives equal sizes")
    opt.check_plan_number("mean", mean)
    for name, value, allowed in (
        ("outcome", outcome, ("binary", "continuous")),
        ("layout", layout, ("long", "case_rerun")),
    ):
        if not isinstance(value, str) or value not in allowed:
            raise InvalidOptionError(
                f"{name} must be {allowed[0]!r} or {allowed[1]!r}, got {value!r}"
            )
    opt.check_flag("size_difficulty", size_difficulty)
    if seed is not None and not isinstance(seed, (np.random.Generator, np.random.RandomState)):
        try:
            opt.check_seed(seed)
        except InvalidOptionError:
            raise InvalidOptionError(
                "seed must be None, a non-negative integer (or a list of them), or a "
                f"numpy.random.Generator, SeedSequence or BitGenerator; got {seed!r}"
            ) from None
    if n * m > _MAX_ROWS:
        raise InvalidOptionError(
            f"n_clusters * cluster_size = {n * m:.3g} rows is more than {_MAX_ROWS:.0e} to "
            "simulate; lower n_clusters or cluster_size"
        )


def simulate(
    n_clusters: int,
    cluster_size: float,
    *,
    mean: float,
    icc: float,
    size_cv: float = 0.0,
    outcome: Literal["binary", "continuous"] = "binary",
    layout: Literal["long", "case_rerun"] = "long",
    size_difficulty: bool = False,
    seed: int | np.random.Generator | None = None,
) -> pd.DataFrame | xr.Dataset:
    """Simulate clustered outcomes whose mean and intraclass correlation are known, for
    checking intervals by simulation (the coverage study uses the same model).

    Parameters
    ----------
    n_clusters : int
        Number of clusters (documents, conversations, test cases), at least 1 (a whole
        number; ``3.0`` is taken as 3).
    cluster_size : float
        Rows per cluster; with ``size_cv > 0``, the mean number of rows per cluster.
    mean : float
        Population mean: a pass rate in (0, 1) for binary outcomes, any finite number for
        continuous ones.
    icc : float
        Intraclass correlation in [0, 1).
    size_cv : float
        Coefficient of variation of the cluster sizes (0: all equal). Sizes are
        ``1 + negative binomial`` with mean ``cluster_size`` and this CV, so every cluster has
        at least one row.
    outcome : {"binary", "continuous"}
        Binary: each cluster draws ``p_j ~ Beta(a, b)`` with ``a = mean (1 - icc) / icc`` and
        ``b = (1 - mean)(1 - icc) / icc``, so that ``E p_j = mean`` and the rows' ICC is
        ``icc`` (``p_j = mean`` when ``icc = 0``), and its rows are Bernoulli(p_j).
        Continuous: the normal random-intercept model ``y = mean + u_j + e_ij`` with
        ``u_j ~ N(0, icc)`` and ``e_ij ~ N(0, 1 - icc)`` (total variance 1).
    layout : {"long", "case_rerun"}
        ``"long"``: a DataFrame with columns ``cluster``, ``row`` and ``y``. ``"case_rerun"``:
        an xarray Dataset with variable ``y`` on dims ``(case, rerun)``, NaN where a case has
        fewer reruns than the largest.
    size_difficulty : bool
        Binary only: harder clusters are larger (expected size
        ``1 + (m - 1)(1 - p_j)/(1 - mean)``), so the estimands differ: the cluster mean is
        ``mean`` and the pooled mean ``mean (1 - icc (m - 1) / m)``.
    seed : int, list of int, numpy.random.Generator, SeedSequence or BitGenerator, optional
        Seed (non-negative) or generator of the draws.

    Returns
    -------
    pandas.DataFrame or xarray.Dataset
        ``attrs`` holds the truth: ``true_pooled`` and ``true_cluster_mean`` (the values the
        two estimands estimate), and the parameters.

    Raises
    ------
    InvalidOptionError
        A parameter that is not a number (a bool, a string, None, NaN), not finite or out of
        its range; an unknown ``outcome`` or ``layout``; a ``size_difficulty`` that is not a
        bool; a seed numpy cannot take; or more than 10^10 rows to draw. The message names
        the parameter.

    Examples
    --------
    >>> import clusterstats
    >>> df = clusterstats.simulate(30, 10, mean=0.1, icc=0.3, seed=1)
    >>> df.shape, list(df.columns), df.attrs["true_pooled"]
    ((300, 3), ['cluster', 'row', 'y'], 0.1)
    >>> skewed = clusterstats.simulate(400, 20, mean=0.3, icc=0.3, size_difficulty=True, seed=4)
    >>> round(skewed.attrs["true_pooled"], 4), round(skewed.attrs["true_cluster_mean"], 4)
    (0.2145, 0.3)
    >>> ds = clusterstats.simulate(5, 4, mean=0.5, icc=0.2, size_cv=0.8, layout="case_rerun",
    ...                            seed=2)
    >>> ds["y"].dims
    ('case', 'rerun')
    """
    _check_options(
        n_clusters, cluster_size, mean, icc, size_cv, outcome, layout, size_difficulty, seed
    )
    try:
        simulation.check_parameters(
            n_clusters, cluster_size, mean, icc, size_cv, outcome, size_difficulty
        )
    except ValueError as exc:
        raise InvalidOptionError(str(exc)) from None
    rng = np.random.default_rng(seed)
    cluster, y = simulation.draw_rows(
        rng,
        int(n_clusters),
        cluster_size=cluster_size,
        mean=mean,
        icc=icc,
        size_cv=size_cv,
        outcome=outcome,
        size_difficulty=size_difficulty,
    )
    sizes = np.bincount(cluster, minlength=int(n_clusters))
    row = np.arange(cluster.shape[0]) - np.repeat(np.cumsum(sizes) - sizes, sizes)
    true = simulation.truth(cluster_size, mean, icc, size_difficulty)
    attrs = {
        "true_pooled": true.pooled,
        "true_cluster_mean": true.cluster_mean,
        "icc": icc,
        "mean": mean,
        "cluster_size": cluster_size,
        "size_cv": size_cv,
        "outcome": outcome,
        "size_difficulty": size_difficulty,
    }
    if layout == "long":
        frame = pd.DataFrame({"cluster": cluster, "row": row, "y": y})
        frame.attrs.update(attrs)
        return frame
    grid = np.full((int(n_clusters), int(sizes.max())), np.nan)
    grid[cluster, row] = y
    return xr.Dataset(
        {"y": (("case", "rerun"), grid)},
        coords={"case": np.arange(int(n_clusters)), "rerun": np.arange(grid.shape[1])},
        attrs={k: (int(v) if isinstance(v, bool) else v) for k, v in attrs.items()},
    )
