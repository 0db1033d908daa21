"""Confidence sets for ranks: every model's rank at once (simultaneous), or one model's
alone (marginal), the models that could be among the best, and tiers.

The sets invert a family of one-sided tests of the pairwise orderings ("model j scores no
higher than model k", for ordered pairs), with the step-down critical values of the
maximum studentised deviation (Romano & Wolf 2005), as in Mogstad, Romano, Shaikh and
Wilhelm (2024), "Inference for ranks with applications to mobility across neighbourhoods
and academic achievement across countries", *Review of Economic Studies* 91(1), 476–518.
The deviations whose maximum sets the critical value are either replicates of a cluster
bootstrap (centred at the estimates) or draws from a normal (or multivariate t) law with a
cluster-robust covariance of the models' scores; either way the family's error is
controlled jointly over every pair, so all the rank sets hold together.

Rank 1 is the highest score; a model's rank is one more than the number of models that
truly score higher, so tied models share the better rank and a set covers a tied model
when it holds every rank the tie could give it.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from numpy.typing import NDArray

from clusterstats.core._lazy import special, stats
from clusterstats.core.bootstrap import CHUNK_ELEMENTS

__all__ = [
    "RANK_METHODS",
    "RankSets",
    "RankSummary",
    "difference_sd",
    "normal_deviations",
    "rank_sets",
    "score_ranks",
    "separable_neighbours",
    "summarize_ranks",
    "tiers",
]


class RankSets(NamedTuple):
    """Rank confidence sets of ``M`` models (1 = best).

    ``low``/``high`` bound each model's rank; ``above[j, k]`` says the family found model
    ``j`` scoring higher than model ``k`` (always all False on the diagonal); ``steps`` is
    the number of step-down rounds, and ``critical`` the critical value of the last round
    (one per model for marginal sets)."""

    low: NDArray[np.int64]
    high: NDArray[np.int64]
    above: NDArray[np.bool_]
    steps: int
    critical: NDArray[np.float64]


def score_ranks(estimates: NDArray[np.float64]) -> NDArray[np.int64]:
    """Each model's rank by score, 1 the highest: one more than the number of models that
    score higher, so tied models share the better rank.

    >>> score_ranks(np.array([0.5, 0.9, 0.5, 0.2])).tolist()
    [2, 1, 2, 4]
    """
    m = estimates.shape[0]
    return m - stats.rankdata(estimates, method="max").astype(np.int64) + 1


def difference_sd(covariance: NDArray[np.float64]) -> NDArray[np.float64]:
    """The standard deviation of every difference ``theta_j - theta_k`` from the covariance
    of the estimates, ``sqrt(S_jj + S_kk - 2 S_jk)`` (negative rounding clipped at 0).

    >>> difference_sd(np.array([[1.0, 0.5], [0.5, 2.0]])).round(4).tolist()
    [[0.0, 1.4142], [1.4142, 0.0]]
    """
    own = np.diag(covariance)
    return np.sqrt(np.maximum(own[:, None] + own[None, :] - 2.0 * covariance, 0.0))


def normal_deviations(
    covariance: NDArray[np.float64],
    n_draws: int,
    rng: np.random.Generator,
    *,
    df: float | None = None,
) -> NDArray[np.float64]:
    """``n_draws`` deviations ``(n_draws, M)`` from ``N(0, covariance)``, or with ``df``
    from the multivariate t law on ``df`` degrees of freedom (each draw divided by
    ``sqrt(chi2_df / df)``), for the critical values of :func:`rank_sets`.

    The covariance may be singular (a model identical to another): its square root comes
    from the eigendecomposition, with negative rounding clipped at 0.

    >>> d = normal_deviations(np.eye(2), 20000, np.random.default_rng(0))
    >>> d.shape, bool(abs(d.std() - 1) < 0.02)
    ((20000, 2), True)
    """
    values, vectors = np.linalg.eigh(covariance)
    root = vectors * np.sqrt(np.maximum(values, 0.0))
    draws = rng.standard_normal((n_draws, covariance.shape[0])) @ root.T
    if df is not None:
        draws /= np.sqrt(rng.chisquare(df, size=n_draws) / df)[:, None]
    return draws


def _model_maxima(
    columns: NDArray[np.float64],
    j: int,
    others: NDArray[np.intp],
    row_factors: NDArray[np.float64] | None,
    column_factors: NDArray[np.float64] | None,
    *,
    divide: bool,
) -> tuple[NDArray[np.float64] | None, NDArray[np.float64] | None]:
    """Per replicate, the largest studentised deviation of model ``j`` against each of
    ``others``, over its row pairs ``(j, k)``, ``(d_j - d_k)`` divided by (``divide``) or
    multiplied by ``row_factors``, and over its column pairs ``(k, j)``, ``(d_k - d_j)`` with
    ``column_factors`` (one per ``k``; ``None``: that family's maxima are not wanted).

    ``columns`` is ``(M, B)``, one row of deviations per model. A column pair's deviation is
    the row pair's negated, exactly, so one pass of ``d_j - d_k`` serves both: its smallest
    scaled value, negated, is the column pairs' largest. The others are taken a few at a
    time (a run of consecutive models as a view, without a gather), so the temporaries stay
    small whatever the number of models."""
    n_draws = columns.shape[1]
    highest = None if row_factors is None else np.full(n_draws, -np.inf)
    lowest = None if column_factors is None else np.full(n_draws, np.inf)
    step = max(1, CHUNK_ELEMENTS // max(1, n_draws))
    gap_buffer = np.empty((min(step, others.size), n_draws))
    both = highest is not None and lowest is not None
    scaled_buffer = np.empty_like(gap_buffer) if both else gap_buffer  # gap is kept for lowest
    scale = np.divide if divide else np.multiply
    for start in range(0, others.size, step):
        chosen = others[start : start + step]
        gap = gap_buffer[: chosen.size]
        if chosen[-1] - chosen[0] == chosen.size - 1:  # others are ascending
            np.subtract(columns[j], columns[chosen[0] : chosen[-1] + 1], out=gap)
        else:
            np.take(columns, chosen, axis=0, out=gap, mode="clip")
            np.subtract(columns[j], gap, out=gap)
        part = slice(start, start + chosen.size)
        if highest is not None:
            scaled = scale(gap, row_factors[part, None], out=scaled_buffer[: chosen.size])
            np.maximum(highest, scaled.max(axis=0), out=highest)
        if lowest is not None:
            scale(gap, column_factors[part, None], out=gap)
            np.minimum(lowest, gap.min(axis=0), out=lowest)
    return highest, None if lowest is None else np.negative(lowest, out=lowest)


def _refresh(
    maxima: NDArray[np.float64],
    stale: NDArray[np.bool_],
    columns: NDArray[np.float64],
    mask: NDArray[np.bool_],
    factors: NDArray[np.float64],
) -> None:
    """Recompute, in place, the rows of ``maxima`` (``(M, B)``) of the ``stale`` models over
    the row pairs ``mask`` leaves them (``mask[j, k]``, times ``factors[j, k]``): the other
    rows' pairs have not changed, and a maximum is exact, so they are kept."""
    for j in np.flatnonzero(stale):
        others = np.flatnonzero(mask[j])
        maxima[j] = _model_maxima(columns, j, others, factors[j, others], None, divide=False)[0]


def _refresh_marginal(
    own_maxima: NDArray[np.float64],
    other_maxima: NDArray[np.float64],
    stale_rows: NDArray[np.bool_],
    stale_columns: NDArray[np.bool_],
    columns: NDArray[np.float64],
    row_mask: NDArray[np.bool_],
    column_mask: NDArray[np.bool_],
    scale: NDArray[np.float64],
) -> None:
    """As :func:`_refresh` for the marginal families, dividing by ``scale``: each stale
    model's maxima over its row pairs ``(j, k)`` left by ``row_mask`` and over its column
    pairs ``(k, j)`` left by ``column_mask[j, k]``, in one pass where both are stale over
    the same others."""
    for j in np.flatnonzero(stale_rows | stale_columns):
        own = np.flatnonzero(row_mask[j]) if stale_rows[j] else None
        other = np.flatnonzero(column_mask[j]) if stale_columns[j] else None
        if own is not None and other is not None and np.array_equal(own, other):
            own_maxima[j], other_maxima[j] = _model_maxima(
                columns, j, own, scale[j, own], scale[own, j], divide=True
            )
            continue
        if own is not None:
            own_maxima[j] = _model_maxima(columns, j, own, scale[j, own], None, divide=True)[0]
        if other is not None:
            other_maxima[j] = _model_maxima(columns, j, other, None, scale[other, j], divide=True)[
                1
            ]


def rank_sets(
    estimates: NDArray[np.float64],
    sd: NDArray[np.float64],
    deviations: NDArray[np.float64],
    *,
    confidence: float,
    simultaneous: bool = True,
    stepdown: bool = True,
    guard_df: float | None = None,
) -> RankSets:
    """Confidence sets for the ranks of ``M`` models (Mogstad, Romano, Shaikh and Wilhelm
    2024, with the step-down of their Section 3.2; R ``csranks``).

    Each ordered pair ``(j, k)`` is a one-sided test of "j scores no higher than k", with
    statistic ``T_jk = (theta_j - theta_k) / sd_jk``. Its critical value is the
    ``confidence`` quantile (numpy's default, linear interpolation: R's type 7) over the
    replicates of the largest ``(d_j - d_k) / sd_jk`` over the pairs still unrejected;
    rejected pairs leave, and the rounds repeat until none is rejected. ``simultaneous``:
    one family of every ordered pair, so all the sets cover together; otherwise a family per
    model of its own pairs ``(j, k)`` and ``(k, j)``, so each set covers on its own (a
    marginal set). A model's set is ``[1 + #{k above j}, M - #{k below j}]``.

    Parameters
    ----------
    estimates : array (M,)
        The models' scores (higher is better).
    sd : array (M, M)
        The standard deviation of every difference (``difference_sd``, or a cluster-robust
        variance of each pair); a pair with ``sd_jk = 0`` is never separated.
    deviations : array (B, M)
        Replicates of ``theta_hat - theta`` (bootstrap means minus the estimates, or
        ``normal_deviations``), one row per replicate, shared by every pair.
    confidence : float
        Coverage of the family.
    simultaneous : bool, default True
        Sets that cover every model's rank together, or each model's alone.
    stepdown : bool, default True
        Repeat with the unrejected pairs (never wider than the single step).
    guard_df : float, optional
        Never let a critical value fall below Holm's bound: the ``1 - alpha / n`` quantile
        of Student's t on ``guard_df`` degrees of freedom, ``n`` the family's pairs still
        unrejected (each pair's t test alone holds its level on those df, so the family
        does whatever the draws miss: with fewer clusters than models, the estimated
        covariance has too few dimensions and the maximum of its draws is too small).

    Returns
    -------
    RankSets

    Examples
    --------
    Three models, the first far ahead, the other two close:

    >>> rng = np.random.default_rng(0)
    >>> sets = rank_sets(np.array([0.9, 0.5, 0.48]), np.full((3, 3), 0.05),
    ...                  rng.standard_normal((4000, 3)) * 0.05 / np.sqrt(2), confidence=0.95)
    >>> sets.low.tolist(), sets.high.tolist()
    ([1, 2, 2], [1, 3, 3])
    """
    m = estimates.shape[0]
    usable = sd > 0
    with np.errstate(divide="ignore", invalid="ignore"):
        difference = estimates[:, None] - estimates[None, :]
    off_diagonal = ~np.eye(m, dtype=bool)
    n_draws = deviations.shape[0]
    columns = np.ascontiguousarray(deviations.T)  # one row of deviations per model
    scale = np.where(usable, sd, 1.0)
    if simultaneous:
        inverse = 1.0 / scale
        active = off_diagonal.copy()
        rejected = np.zeros((m, m), dtype=bool)
        steps, critical = 0, np.array([np.nan])
        # each model's largest deviation over its own unrejected pairs, per replicate: the
        # family's maximum is theirs, and a round recomputes only the models that lost pairs
        row_maxima = np.full((m, n_draws), -np.inf)
        stale = np.ones(m, dtype=bool)
        while active.any():
            steps += 1
            _refresh(row_maxima, stale, columns, active & usable, inverse)
            maxima = row_maxima.max(axis=0)
            critical = np.array([np.quantile(maxima, confidence)])
            if guard_df is not None:
                critical = _holm_floor(critical, (active & usable).sum(), guard_df, confidence)
            # as csranks: the lower bound theta_j - theta_k - sd c is above zero
            new = active & usable & (difference - sd * critical[0] > 0)
            if not new.any() or not stepdown:
                rejected |= new
                break
            rejected |= new
            active &= ~new
            stale = new.any(axis=1)
        above = rejected
        below_count = above.sum(axis=1)
        above_count = above.sum(axis=0)
        low = 1 + above_count
        high = m - below_count
        return RankSets(low.astype(np.int64), high.astype(np.int64), above, steps, critical)
    # marginal: model j's family is its row pairs (j, k) and its column pairs (k, j)
    row_active = off_diagonal.copy()
    column_active = off_diagonal.copy()
    row_rejected = np.zeros((m, m), dtype=bool)  # [j, k]: j above k, in j's family
    column_rejected = np.zeros((m, m), dtype=bool)  # [j, k]: k above j, in j's family
    steps, critical = 0, np.full(m, np.nan)
    own_maxima = np.full((m, n_draws), -np.inf)  # over j's row pairs (j, k)
    other_maxima = np.full((m, n_draws), -np.inf)  # over j's column pairs (k, j)
    stale_rows = stale_columns = np.ones(m, dtype=bool)
    while row_active.any() or column_active.any():
        steps += 1
        _refresh_marginal(
            own_maxima,
            other_maxima,
            stale_rows,
            stale_columns,
            columns,
            row_active & usable,
            column_active & usable.T,
            scale,
        )
        critical = np.quantile(np.maximum(own_maxima, other_maxima), confidence, axis=1)
        if guard_df is not None:
            n_open = (row_active & usable).sum(axis=1) + (column_active & usable.T).sum(axis=1)
            critical = _holm_floor(critical, n_open, guard_df, confidence)
        new_row = row_active & usable & (difference - sd * critical[:, None] > 0)
        new_column = column_active & usable & (difference.T - sd * critical[:, None] > 0)
        row_rejected |= new_row
        column_rejected |= new_column
        if not (new_row.any() or new_column.any()) or not stepdown:
            break
        row_active &= ~new_row
        column_active &= ~new_column
        stale_rows, stale_columns = new_row.any(axis=1), new_column.any(axis=1)
    low = 1 + column_rejected.sum(axis=1)
    high = m - row_rejected.sum(axis=1)
    return RankSets(low.astype(np.int64), high.astype(np.int64), row_rejected, steps, critical)


def tiers(estimates: NDArray[np.float64], above: NDArray[np.bool_]) -> NDArray[np.int64]:
    """Tiers of a leaderboard from the pairs a family separated: a model no model is above
    is in tier 1; any other model is one tier below the lowest tier of the models above it
    (the longest chain of separations that ends at it). No two models of one tier are
    separated, and each model below tier 1 is below some model of the tier just above.

    >>> above = np.zeros((4, 4), dtype=bool)
    >>> above[0, 2] = above[0, 3] = above[1, 3] = True
    >>> tiers(np.array([0.9, 0.8, 0.7, 0.6]), above).tolist()
    [1, 1, 2, 2]
    """
    m = estimates.shape[0]
    tier = np.ones(m, dtype=np.int64)
    # a separated pair always has the higher estimate above, so this order visits every
    # model after all the models above it
    for j in np.argsort(-estimates, kind="stable"):
        over = np.nonzero(above[:, j])[0]
        if over.size:
            tier[j] = 1 + int(tier[over].max())
    return tier


def _holm_floor(critical, n_open, df: float, confidence: float):
    """``critical``, raised where needed to Holm's bound for ``n_open`` open hypotheses:
    the ``1 - alpha / n_open`` quantile of Student's t on ``df`` (Holm 1979)."""
    alpha = 1.0 - confidence
    return np.maximum(critical, special.stdtrit(df, 1.0 - alpha / np.maximum(n_open, 1)))


def separable_neighbours(estimates: NDArray[np.float64], above: NDArray[np.bool_]) -> int:
    """How many adjacent places of the order by estimate the family separated (the model
    at place ``i`` above the one at place ``i + 1``).

    >>> above = np.zeros((3, 3), dtype=bool); above[0, 1] = above[0, 2] = True
    >>> separable_neighbours(np.array([0.9, 0.5, 0.4]), above)
    1
    """
    order = np.argsort(-estimates, kind="stable")
    return int(above[order[:-1], order[1:]].sum())


#: How the critical values of the rank sets are drawn (see :func:`summarize_ranks`).
RANK_METHODS = ("bootstrap", "normal", "t", "guarded")


class RankSummary(NamedTuple):
    """Every rank set of a leaderboard: simultaneous (``low``, ``high``), marginal
    (``marginal_low``, ``marginal_high``), the separated pairs of the simultaneous family
    (``above``), the tiers, and the ``method`` of the critical values."""

    low: NDArray[np.float64]
    high: NDArray[np.float64]
    marginal_low: NDArray[np.float64]
    marginal_high: NDArray[np.float64]
    above: NDArray[np.bool_]
    tier: NDArray[np.float64]
    method: str


def summarize_ranks(
    means: NDArray[np.float64],
    variance: NDArray[np.float64],
    own: NDArray[np.float64],
    *,
    confidence: float,
    method: str,
    rng: np.random.Generator,
    n_draws: int,
    replicates: NDArray[np.float64] | None = None,
    df: float | None = None,
) -> RankSummary:
    """Simultaneous and marginal rank sets and tiers from a cluster-robust variance.

    ``variance`` is ``(M, M)``, the variance of every difference of two models' scores, and
    ``own`` each score's variance; together they give the joint covariance
    ``S_jk = (own_j + own_k - variance_jk) / 2``. The critical values come from
    ``method``: ``"bootstrap"``, the ``replicates`` ``(B, M)`` of a cluster bootstrap that
    every model shares, centred at ``means`` (Romano & Wolf's step-down with the bootstrap
    of the maximum); ``"normal"``, ``n_draws`` draws from ``N(0, S)`` (as R ``csranks``);
    ``"t"``, the same divided by ``sqrt(chi2_df / df)`` (the multivariate t on the
    clusters' ``df``, for few clusters); ``"guarded"``, the ``"t"`` draws with every
    critical value at least Holm's bound on t with ``df`` (``rank_sets``'s ``guard_df``).
    Each pair is studentised by ``sqrt(variance)``.

    >>> rng = np.random.default_rng(0)
    >>> v = np.array([[0.0, 2e-4, 2e-4], [2e-4, 0.0, 2e-4], [2e-4, 2e-4, 0.0]])
    >>> r = summarize_ranks(np.array([0.9, 0.6, 0.58]), v, np.full(3, 1e-4), confidence=0.95,
    ...                     method="normal", rng=rng, n_draws=2000)
    >>> r.low.tolist(), r.high.tolist(), r.tier.tolist()
    ([1.0, 2.0, 2.0], [1.0, 3.0, 3.0], [1.0, 2.0, 2.0])
    """
    sd = np.sqrt(np.maximum(variance, 0.0))
    if method == "bootstrap":
        if replicates is None:
            raise ValueError("method 'bootstrap' needs the replicates")
        deviations = replicates - means
    else:
        covariance = (own[:, None] + own[None, :] - variance) / 2.0
        deviations = normal_deviations(
            covariance, n_draws, rng, df=None if method == "normal" else df
        )
    guard = df if method == "guarded" else None
    joint = rank_sets(means, sd, deviations, confidence=confidence, guard_df=guard)
    alone = rank_sets(
        means, sd, deviations, confidence=confidence, simultaneous=False, guard_df=guard
    )
    return RankSummary(
        joint.low.astype(float),
        joint.high.astype(float),
        alone.low.astype(float),
        alone.high.astype(float),
        joint.above,
        tiers(means, joint.above).astype(float),
        method,
    )
