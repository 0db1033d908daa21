"""``clusterstats.simulate``: clustered eval results with a known mean and ICC."""

from __future__ import annotations

from typing import Literal

import numpy as np
import pandas as pd
import xarray as xr

from clusterstats.core import simulation
from clusterstats.errors import InvalidOptionError

__all__ = ["simulate"]


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
        Number of clusters (documents, conversations, test cases).
    cluster_size : float
        Rows per cluster; with ``size_cv > 0``, the mean number of rows per cluster.
    mean : float
        Population mean: a pass rate in (0, 1) for binary outcomes.
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
    seed : int or numpy.random.Generator, optional
        Seed or generator of the draws.

    Returns
    -------
    pandas.DataFrame or xarray.Dataset
        ``attrs`` holds the truth: ``true_pooled`` and ``true_cluster_mean`` (the values the
        two estimands estimate), and the parameters.

    Raises
    ------
    InvalidOptionError
        A parameter out of its range, or an unknown ``outcome`` or ``layout``.

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
    try:
        simulation.check_parameters(
            n_clusters, cluster_size, mean, icc, size_cv, outcome, size_difficulty
        )
    except ValueError as exc:
        raise InvalidOptionError(str(exc)) from None
    if layout not in ("long", "case_rerun"):
        raise InvalidOptionError(f"layout must be 'long' or 'case_rerun', got {layout!r}")
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
