"""Prediction-powered means with clusters: a judge on every row, humans on some.

Every row of the run carries a judge score ``f``; a subset carries a human label ``y``. The
estimate is the judge's mean over every row, corrected by the human-minus-weighted-judge
difference on the labelled rows (Angelopoulos et al. 2023, *Science* 382:669; the weight
``lam`` of PPI++, Angelopoulos, Duchi & Zrnic 2023, arXiv:2311.01453)::

    estimate = lam * judge mean over all rows + Hajek mean of (y - lam * f) over labelled rows

which is the two-phase regression (GREG) estimator with the judge as the phase-one auxiliary
(Sarndal, Swensson & Wretman 1992, *Model Assisted Survey Sampling*, sections 9.4-9.7):
phase one is the run (every cluster, every row judged), phase two the labelling. With the
weight set to the phase-two regression slope, the estimate is R survey's
``svymean(~y, calibrate(twophase(...), phase = 2, ~judge))``.

The labelling design is either *estimated from the counts* (``stated=False``: in each
labelling stratum ``m_h`` of the ``C_h`` clusters carry labels, drawn as a simple random
sample, and inside a labelled cluster ``r_c`` of its ``n_c`` rows are, also at random; whole
clusters labelled is ``r_c = n_c``, rows labelled inside every cluster is ``m_h = C_h``), or
*stated* (``stated=True``: each labelled row carries the inverse of its stated inclusion
probability, rows or clusters labelled independently).

Variance. The estimate's error is linearised into per-cluster units ``g_c + e_c``: ``g_c``
is the judge's (known for every cluster), ``e_c`` the labelled residual's (known for labelled
clusters only). For an estimated design the two-phase variance is::

    population: (S2_g + 2 S_ge + S2_e) / C + sum_h (C_h/C)^2 (1/m_h - 1/C_h) S2_e,h
    benchmark:  sum_h (C_h/C)^2 (1/m_h - 1/C_h) S2_e,h + within-cluster term

``S2_g`` over all clusters, ``S_ge`` and ``S2_e`` estimated without bias from the labelled
clusters (each weighted ``C_h/m_h``); the within-cluster term is the second stage's
``(1 - r_c/n_c) s2_c / r_c`` for the benchmark (for the population it is already in the
spread of the clusters' estimated totals, the ultimate-cluster argument). It reduces exactly
to the clustered (CR1) variance of the labelled rows alone when the weight is 0, and to that
of the human labels when every row is labelled. A stated design uses the ultimate-cluster
sandwich ``S2_{g+e} / C`` (population) or the Poisson-sampling variance of the labelled
clusters (benchmark). The degrees of freedom are those of the labelled clusters: their number
less the labelling strata.

The weight is tuned by minimising this variance, which is a quadratic in ``lam``, and clipped
to ``[0, 1]``; cross-fitted, each labelled cluster's residual uses the weight tuned without
it. When every cluster carries labels, a cross-fitted cluster's labelled judge scores are
centred on its own judge total, so that its weight multiplies the within-cluster gap
``sum over rows f - expanded sum over labelled rows f`` alone, of mean zero given the cluster:
the cross-prediction estimator (Zrnic & Candes 2024, *PNAS* 121:e2322083121) applied cluster
by cluster.

:func:`bootstrap` is the two-phase design's cluster bootstrap (population target, estimated
design): labelled and unlabelled clusters resampled apart in each stratum, the weight
re-tuned in each draw, the bootstrap-t interval.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from typing import NamedTuple

import numpy as np
from numpy.typing import NDArray

from clusterstats.core._lazy import special
from clusterstats.core.bootstrap import CHUNK_ELEMENTS, t_quantiles
from clusterstats.core.grouping import ClusterSums
from clusterstats.core.intervals import t_interval
from clusterstats.core.variance import moulton_icc, satterthwaite_df_cr2, working_model_df

__all__ = [
    "ESTIMANDS",
    "TARGETS",
    "JudgedBootstrap",
    "JudgedFit",
    "JudgedSums",
    "LabelDesign",
    "Labelling",
    "PlanParts",
    "bootstrap",
    "draw_indices",
    "effective_labels",
    "fit",
    "independent",
    "judge_only",
    "label_designs",
    "labelling_of",
    "plan_parts",
    "projected_variance",
    "t_half_width",
    "tuned_weight",
]

ESTIMANDS = ("pooled", "cluster_mean")
TARGETS = ("population", "benchmark")

Vector = NDArray[np.float64]


class JudgedSums(NamedTuple):
    """Per-cluster sufficient statistics of a judged run with some rows labelled.

    Sums marked "labelled" run over the cluster's labelled rows, each row weighted by ``v``:
    1 for a design estimated from the counts, the inverse of the row's stated inclusion
    probability for a stated design.
    """

    rows: Vector
    """Rows in the cluster (every row is judged)."""
    judge_total: Vector
    """Sum of the judge's scores over every row of the cluster."""
    labelled: Vector
    """Labelled rows in the cluster."""
    weight: Vector
    """Labelled: sum of ``v``."""
    human: Vector
    """Labelled: sum of ``v * y``."""
    judge: Vector
    """Labelled: sum of ``v * f``."""
    human_sq: Vector
    """Labelled: sum of ``v * y**2``."""
    judge_sq: Vector
    """Labelled: sum of ``v * f**2``."""
    cross: Vector
    """Labelled: sum of ``v * y * f``."""
    strata: NDArray[np.intp]
    """Labelling stratum of each cluster, coded 0..H-1."""
    stated: bool = False
    """True when ``v`` is the inverse of a stated inclusion probability."""


class Labelling(NamedTuple):
    """Which labelling design the counts show."""

    kind: str
    """``"clusters"`` (whole clusters), ``"rows"`` (rows inside every cluster), ``"clusters,
    then rows"`` (some rows of some clusters), ``"every row"``, or ``"stated"``."""
    labelled_clusters: NDArray[np.intp]
    """Labelled clusters per stratum."""
    clusters: NDArray[np.intp]
    """Clusters per stratum."""


def labelling_of(sums: JudgedSums) -> Labelling:
    """The design the labelled counts show, and the labelled clusters per stratum."""
    has = sums.labelled > 0
    n_strata = int(sums.strata.max()) + 1 if sums.strata.size else 0
    clusters = np.bincount(sums.strata, minlength=n_strata)
    labelled = np.bincount(sums.strata, weights=has, minlength=n_strata).astype(np.intp)
    if sums.stated:
        kind = "stated"
    elif np.array_equal(sums.labelled, sums.rows):
        kind = "every row"
    elif np.array_equal(labelled, clusters):
        kind = "rows"
    elif np.array_equal(sums.labelled[has], sums.rows[has]):
        kind = "clusters"
    else:
        kind = "clusters, then rows"
    return Labelling(kind, labelled, clusters)


class _Prepared(NamedTuple):
    """What the estimate and its linearised units need, computed once per design: the
    judge's part over every cluster, and each labelled cluster's expanded totals."""

    judge_mean: float
    g1: Vector
    """The judge's per-cluster unit at weight 1 (the judge's part is ``lam * g1``)."""
    has: NDArray[np.bool_]
    stage: Vector
    """Each cluster's first-stage expansion ``C_h / m_h`` (1 for a stated design)."""
    human_hat: Vector
    judge_hat: Vector
    size_hat: Vector
    weighted_size: Vector
    """Per stratum: the labelled clusters' expanded size."""
    share: Vector
    """Per stratum: its share of the estimand's size (rows, or clusters)."""
    unit: Vector
    """Per cluster: the factor turning a residual total into a unit of the mean."""
    within: tuple[Vector, Vector, Vector]
    """The second stage's within-cluster sums of squares of y, f and their products,
    each already scaled to the mean's units (the benchmark target's second stage)."""
    judge_scale: Vector
    """Per cluster: the factor on the judge's unit, 1 or CR2's (below)."""
    residual_scale: Vector
    """Per cluster: the factor on the labelled residual's unit, 1 or CR2's (below)."""
    census: bool
    """Every cluster carries labels (an estimated design): the labelling's first stage is a
    census, so a cluster's judge scores can be centred on their own total."""
    judge_own: Vector
    """Per cluster: the judge's total over every row, in the estimand's units."""
    judge_stratum: Vector
    """Per cluster: the judge's mean over every row of its labelling stratum."""


def _prepare(sums: JudgedSums, estimand: str, small_sample: str = "cr1") -> _Prepared:
    has = sums.labelled > 0
    n = sums.rows
    strata = sums.strata
    n_strata = int(strata.max()) + 1
    if estimand == "pooled":
        size = n
        judge_total = sums.judge_total
        scale = np.ones_like(n)
    else:
        size = np.ones_like(n)
        judge_total = sums.judge_total / n
        scale = 1.0 / n
    n_clusters = n.size
    total_size = float(size.sum())
    judge_mean = float(judge_total.sum()) / total_size
    mean_size = total_size / n_clusters
    g1 = (judge_total - judge_mean * size) / mean_size

    if sums.stated:
        expand = scale
        size_hat = np.where(has, sums.weight * scale, 0.0)
        stage = np.ones(n_clusters)
    else:
        with np.errstate(divide="ignore", invalid="ignore"):
            expand = np.where(has, n / sums.labelled, 0.0) * scale
        size_hat = np.where(has, size, 0.0)
        counts = np.bincount(strata, minlength=n_strata)
        labelled = np.bincount(strata, weights=has, minlength=n_strata)
        stage = (counts / labelled)[strata]
    weighted_size = np.bincount(strata, weights=stage * size_hat, minlength=n_strata)
    share = np.bincount(strata, weights=size, minlength=n_strata) / total_size
    unit = (share * n_clusters / weighted_size)[strata]

    r = sums.labelled
    with np.errstate(divide="ignore", invalid="ignore"):
        mean_y = sums.human / r
        mean_f = sums.judge / r
        factor = np.where(
            (r > 1) & (r < n), (n / mean_size * scale) ** 2 * (1 - r / n) / (r * (r - 1)), 0.0
        )
        within = (
            np.where(factor > 0, factor * (sums.human_sq - r * mean_y**2), 0.0),
            np.where(factor > 0, factor * (sums.judge_sq - r * mean_f**2), 0.0),
            np.where(factor > 0, factor * (sums.cross - r * mean_y * mean_f), 0.0),
        )
    judge_scale, residual_scale = _cr2_scales(sums, size, size_hat, has, small_sample)
    stratum_judge = np.bincount(strata, weights=judge_total, minlength=n_strata) / np.bincount(
        strata, weights=size, minlength=n_strata
    )
    return _Prepared(
        judge_mean=judge_mean,
        g1=g1,
        has=has,
        stage=stage,
        human_hat=sums.human * expand,
        judge_hat=sums.judge * expand,
        size_hat=size_hat,
        weighted_size=weighted_size,
        share=share,
        unit=unit,
        within=within,
        judge_scale=judge_scale,
        residual_scale=residual_scale,
        census=not sums.stated and bool(np.all(has)),
        judge_own=judge_total,
        judge_stratum=stratum_judge[strata],
    )


def _cr2_scales(
    sums: JudgedSums, size: Vector, size_hat: Vector, has: NDArray[np.bool_], small_sample: str
) -> tuple[Vector, Vector]:
    """CR2's bias reduction (Bell & McCaffrey 2002) carried into the two-phase variance:
    each unit divided by ``sqrt(1 - leverage)`` in place of CR1's ``G/(G-1)``, the judge's
    units with their leverage among every cluster, the labelled residual's with theirs
    among the labelled clusters of their stratum. With weight 0 this is CR2 of the labelled
    rows; with every row labelled, CR2 of the labels (``core.variance.cluster_robust``)."""
    ones = np.ones(size.size)
    if small_sample == "cr1" or sums.stated:
        return ones, ones
    n_clusters = size.size
    judge = np.sqrt((n_clusters - 1) / n_clusters / (1 - size / size.sum()))
    strata = sums.strata
    labelled_size = np.bincount(strata, weights=size_hat)[strata]
    labelled = np.bincount(strata, weights=has.astype(float))[strata]
    with np.errstate(divide="ignore", invalid="ignore"):
        residual = np.sqrt((labelled - 1) / labelled / (1 - size_hat / labelled_size))
    return judge, np.where(has, residual, 1.0)


def _own_centred(prep: _Prepared, lam: float | Vector) -> bool:
    """Whether each cluster's judge is centred on its own total: per-cluster (cross-fitted)
    weights when every cluster carries labels."""
    return prep.census and np.ndim(lam) > 0


def _residuals(sums: JudgedSums, prep: _Prepared, lam: float | Vector) -> tuple[float, Vector]:
    """The estimate, and the labelled residuals' per-cluster units, at the weight ``lam``
    (one per cluster when cross-fitted)."""
    # The judge is centred at its mean over every row: for one weight this changes nothing,
    # and cross-fitted weights then vary only the small centred term, not the whole score.
    # When every cluster carries labels, each cluster's labelled judge scores are centred on
    # the cluster's own judge total instead: a cross-fitted weight, tuned without the
    # cluster's labels, then multiplies a term of mean zero given the cluster (Zrnic & Candes
    # 2024, cross-prediction), where the common centre would leave the product of the
    # weight and the cluster's judge level in the estimate. For one weight both centres
    # give the same estimate and variance.
    centre = prep.judge_own if _own_centred(prep, lam) else prep.judge_mean * prep.size_hat
    centred = prep.judge_hat - centre
    residual = np.where(prep.has, prep.human_hat - lam * centred, 0.0)
    alpha = (
        np.bincount(sums.strata, weights=prep.stage * residual, minlength=prep.share.size)
        / prep.weighted_size
    )
    e = np.where(prep.has, prep.unit * (residual - alpha[sums.strata] * prep.size_hat), 0.0)
    return float(prep.share @ alpha), e


def _variance(
    sums: JudgedSums,
    prep: _Prepared,
    lam: float | Vector,
    lam_judge: float,
    target: str,
    labelling: Labelling,
) -> float:
    """The estimate's variance at weight ``lam`` (per cluster when cross-fitted), with the
    judge's part weighted ``lam_judge``."""
    has = prep.has
    if _own_centred(prep, lam):
        # Each cluster's judge level is inside its residual. What is left of the judge's
        # part: its labelling strata's levels (the residuals are centred within strata) and,
        # where CR2 scales the judge and the residual apart, the difference of the two
        # scales; so that one weight in every cluster gives the common centre's variance.
        inside = prep.unit * (prep.judge_own - prep.judge_stratum * prep.size_hat)
        g = lam * (prep.g1 * prep.judge_scale - inside * prep.residual_scale)
    else:
        g = lam_judge * prep.g1 * prep.judge_scale
    _, e = _residuals(sums, prep, lam)
    e = e * prep.residual_scale
    n_clusters = g.size
    if sums.stated:
        if target == "population":
            u = g + e
            return float(np.sum((u - u.mean()) ** 2)) / (n_clusters * (n_clusters - 1))
        # Whole clusters labelled independently: the Poisson-sampling variance.
        with np.errstate(divide="ignore", invalid="ignore"):
            probability = np.where(has, sums.labelled / sums.weight, 1.0)
        return float(np.sum((1 - probability) * e**2)) / n_clusters**2
    strata = sums.strata
    m_h = labelling.labelled_clusters.astype(float)
    c_h = labelling.clusters.astype(float)
    stratum_ss = np.bincount(strata, weights=np.where(has, e**2, 0.0), minlength=c_h.size)
    with np.errstate(divide="ignore", invalid="ignore"):
        stratum_var = np.where(m_h > 1, stratum_ss / (m_h - 1), 0.0)
        first_stage = float(
            np.sum(
                np.where(m_h > 0, (c_h / n_clusters) ** 2 * (1 / m_h - 1 / c_h), 0.0) * stratum_var
            )
        )
    if target == "benchmark":
        y_y, f_f, y_f = prep.within
        within = y_y - 2 * lam * y_f + lam**2 * f_f
        return first_stage + float(np.sum(prep.stage * within)) / n_clusters**2
    t_ee = float(np.sum(np.where(has, prep.stage * e**2, 0.0)))
    t_ge = float(np.sum(np.where(has, prep.stage * g * e, 0.0)))
    spread = (float(np.sum(g**2)) + 2 * t_ge + t_ee + n_clusters * first_stage) / (n_clusters - 1)
    return spread / n_clusters + first_stage


def tuned_weight(sums: JudgedSums, prep: _Prepared, target: str, labelling: Labelling) -> float:
    """The weight in ``[0, 1]`` that minimises the estimated variance, a quadratic in it
    (read off its values at -1, 0 and 1)."""
    at = [_variance(sums, prep, lam, lam, target, labelling) for lam in (-1.0, 0.0, 1.0)]
    curvature = (at[0] + at[2] - 2 * at[1]) / 2
    slope = (at[0] - at[2]) / 4
    if not curvature > 1e-12 * abs(at[1]):
        return 0.0
    return float(min(max(slope / curvature, 0.0), 1.0))


class JudgedFit(NamedTuple):
    """An estimate from judge scores and human labels, with its variance."""

    estimate: float
    variance: float
    df: float
    lower: float
    upper: float
    weight: float
    """The judge's weight (the mean of the cross-fitted weights when cross-fitted)."""
    labelling: Labelling


_LABELLED_FIELDS = ("labelled", "weight", "human", "judge", "human_sq", "judge_sq", "cross")


def _cross_fitted(sums: JudgedSums, target: str, estimand: str, small_sample: str) -> Vector:
    """Each labelled cluster's weight, tuned with that cluster's labels left out; 0 (the
    labels alone) where leaving it out leaves its stratum fewer than 2 labelled clusters,
    since a weight cannot be tuned on one."""
    weights = np.zeros(sums.rows.size)
    for cluster in np.flatnonzero(sums.labelled > 0):
        without = sums._replace(
            **{name: _zeroed(getattr(sums, name), cluster) for name in _LABELLED_FIELDS}
        )
        labelling = labelling_of(without)
        if np.any(labelling.labelled_clusters < 2):
            continue
        prep = _prepare(without, estimand, small_sample)
        weights[cluster] = tuned_weight(without, prep, target, labelling)
    return weights


def _zeroed(values: Vector, index: int) -> Vector:
    copy = values.copy()
    copy[index] = 0.0
    return copy


def fit(
    sums: JudgedSums,
    *,
    estimand: str,
    target: str,
    weight: float | str,
    confidence: float,
    small_sample: str = "cr2",
    judge_part: bool = True,
) -> JudgedFit:
    """The prediction-powered estimate, its variance, degrees of freedom and interval.

    Parameters
    ----------
    sums : JudgedSums
        The design's per-cluster sums.
    estimand : {"pooled", "cluster_mean"}
        The mean over rows, or the mean of cluster means.
    target : {"population", "benchmark"}
        Clusters as draws from a population (two-phase variance), or this run's own clusters
        (the labelling's variance alone).
    weight : float or {"tuned", "cross-fitted"}
        The judge's weight; a number is used as given.
    confidence : float
        Two-sided confidence level.
    small_sample : {"cr2", "cr1"}
        CR2's leverage correction with its Satterthwaite degrees of freedom (for the pooled
        estimand; at the benchmark target, those of uneven sizes: :func:`_degrees_of_freedom`),
        or CR1's ``G/(G-1)`` with the labelled clusters less the strata; a stated design takes
        CR1's.
    judge_part : bool
        False drops the judge's mean over every row, leaving the labelled rows' mean of
        ``y - weight * f`` (the judge's bias, with ``weight=1`` and the sign turned).

    Returns
    -------
    JudgedFit
    """
    labelling = labelling_of(sums)
    prep = _prepare(sums, estimand, small_sample)
    lam: float | Vector
    if weight in ("tuned", "cross-fitted") and labelling.kind == "every row":
        # Every row labelled: the estimate is the human labels' for any weight.
        lam = lam_judge = 0.0
    elif weight in ("tuned", "cross-fitted"):
        tuned = tuned_weight(sums, prep, target, labelling)
        if weight == "tuned":
            lam = lam_judge = tuned
        else:
            lam = _cross_fitted(sums, target, estimand, small_sample)
            lam_judge = float(np.mean(lam[prep.has]))
    else:
        lam = lam_judge = float(weight)
    if not judge_part:
        lam_judge = 0.0
    estimate, _ = _residuals(sums, prep, lam)
    if not judge_part:
        estimate -= float(lam) * prep.judge_mean
    variance = _variance(sums, prep, lam, lam_judge, target, labelling)
    df = _degrees_of_freedom(sums, prep, labelling, estimand, small_sample, target, lam)
    lower, upper = t_interval(estimate, variance, df, confidence)
    shown = lam_judge if judge_part or not np.ndim(lam) else float(np.mean(lam[prep.has]))
    if not judge_part and not np.ndim(lam):
        shown = float(lam)
    return JudgedFit(estimate, variance, df, lower, upper, shown, labelling)


def _degrees_of_freedom(
    sums: JudgedSums,
    prep: _Prepared,
    labelling: Labelling,
    estimand: str,
    small_sample: str,
    target: str = "population",
    lam: float | Vector = 0.0,
) -> float:
    """Those of the labelled clusters: their number less the labelling strata, or for CR2
    of a pooled mean in one stratum clubSandwich's Satterthwaite df of their sizes (as
    ``cluster_ci(method="cr2")`` takes them).

    For the benchmark target with clusters labelled from among more (whole clusters, or
    clusters then rows), the variance rests on the labelled clusters alone, and it is then
    the df of uneven sizes that ``cluster_ci(method="cr2_ik")`` takes: the Satterthwaite df
    under a random-effects working model whose ICC is the Moulton ICC of the labelled rows'
    residuals ``y - lam * f`` (Imbens & Kolesar 2016), never above the df above. Equal sizes
    give the same df."""
    labelled = labelling.labelled_clusters
    plain = float(max(int(labelled.sum()) - int(np.count_nonzero(labelled)), 1))
    one_stratum = labelled.size == 1
    if small_sample == "cr1" or sums.stated or estimand != "pooled" or not one_stratum:
        return plain
    has = prep.has
    sizes = prep.size_hat[has]
    own = satterthwaite_df_cr2(sizes, float(sizes.sum()))
    if target != "benchmark" or prep.census:
        return own
    weights = np.broadcast_to(np.asarray(lam, dtype=np.float64), has.shape)[has]
    residuals = ClusterSums(
        counts=sums.weight[has],
        totals=sums.human[has] - weights * sums.judge[has],
        squares=sums.human_sq[has]
        - 2 * weights * sums.cross[has]
        + weights**2 * sums.judge_sq[has],
    )
    working = float(working_model_df(sizes, moulton_icc(residuals), "pooled"))
    # within rounding of the independent-rows df (equal sizes: both G - 1) it is that
    return own if working >= own * (1.0 - 1e-12) else working


def effective_labels(labelled: int, human_variance: float, variance: float) -> float:
    """How many labelled rows the human labels alone would need for ``variance``: the
    labels' own variance scales as one over their number, so ``labelled * human_variance /
    variance`` (NaN for a variance of 0).

    >>> effective_labels(100, 0.04, 0.02)
    200.0
    """
    return labelled * human_variance / variance if variance > 0 else math.nan


def independent(
    sums: JudgedSums, *, weight: float | str, confidence: float, ddof: int
) -> JudgedFit:
    """The construction of ``ppi_py.ppi_mean_ci`` (``ddof=0``) and of glide's
    ``ClusteredPPIMeanEstimator`` (``ddof=1``), with clusters as units: the labelled and the
    unlabelled clusters taken as two independent samples, each cluster one unit (its
    labelled rows' means of the human label and of the judge; an unlabelled cluster's judge
    mean), so::

        estimate = lam * mean(f, unlabelled) + mean(y - lam * f, labelled)
        variance = lam**2 var(f, unlabelled) / N + var(y - lam * f, labelled) / n

    with variances of ``ddof``, a normal quantile, and the tuned weight of PPI++
    (Angelopoulos, Duchi & Zrnic 2023, Example 6.1), ``cov(y, f) / ((1 + n/N) var(f, every
    unit))``: the covariance with ``ddof``, the pooled variance with ``ddof=1``, clipped to
    ``[0, 1]``.
    """
    has = sums.labelled > 0
    y = sums.human[has] / sums.weight[has]
    f = sums.judge[has] / sums.weight[has]
    f_unlabelled = (sums.judge_total / sums.rows)[~has]
    n, n_unlabelled = y.size, f_unlabelled.size
    if weight in ("tuned", "cross-fitted"):
        covariance = float(np.sum((y - y.mean()) * (f - f.mean()))) / (n - ddof)
        pooled = float(np.var(np.concatenate([f, f_unlabelled]), ddof=1))
        lam = covariance / ((1 + n / n_unlabelled) * pooled) if pooled > 0 else 0.0
        lam = min(max(lam, 0.0), 1.0)
    else:
        lam = float(weight)
    estimate = lam * float(f_unlabelled.mean()) + float(np.mean(y - lam * f))
    variance = (
        lam**2 * float(np.var(f_unlabelled, ddof=ddof)) / n_unlabelled
        + float(np.var(y - lam * f, ddof=ddof)) / n
    )
    lower, upper = t_interval(estimate, variance, math.inf, confidence)
    return JudgedFit(estimate, variance, math.inf, lower, upper, lam, labelling_of(sums))


def judge_only(
    sums: JudgedSums, *, estimand: str, confidence: float, small_sample: str = "cr2"
) -> JudgedFit:
    """The judge's own mean over every row, with its clustered interval (CR2 or CR1, as
    :func:`fit`): what the judge alone reports, on its own scale and with its own bias."""
    prep = _prepare(sums, estimand, small_sample)
    n_clusters = sums.rows.size
    variance = float(np.sum((prep.g1 * prep.judge_scale) ** 2)) / (n_clusters * (n_clusters - 1))
    df = float(n_clusters - 1)
    if small_sample == "cr2" and estimand == "pooled":
        df = satterthwaite_df_cr2(sums.rows, float(sums.rows.sum()))
    lower, upper = t_interval(prep.judge_mean, variance, df, confidence)
    return JudgedFit(prep.judge_mean, variance, df, lower, upper, 1.0, labelling_of(sums))


# -- the two-phase cluster bootstrap ------------------------------------------------------------


def _groups(sums: JudgedSums) -> list[NDArray[np.intp]]:
    """The clusters of each (labelling stratum, labelled or not) group, each stratum's
    labelled group first; the bootstrap draws inside each group."""
    has = sums.labelled > 0
    out = []
    for stratum in range(int(sums.strata.max()) + 1):
        for labelled in (True, False):
            members = np.flatnonzero((sums.strata == stratum) & (has == labelled))
            if members.size:
                out.append(members)
    return out


def draw_indices(
    sums: JudgedSums, n_resamples: int, rng: np.random.Generator
) -> Iterator[NDArray[np.intp]]:
    """The two-phase design's cluster-bootstrap draws, in blocks of rows.

    Row ``b`` of a block holds, at each cluster's position, the cluster drawn in its place:
    the ``n_g`` clusters of each (labelling stratum, labelled or not) group are replaced by
    ``n_g`` of them drawn with replacement, so that every draw keeps each stratum's ``m_h``
    labelled and ``C_h - m_h`` unlabelled clusters. Blocks bound the memory, as in
    :func:`clusterstats.core.bootstrap.resample_cluster_sums`.
    """
    n_clusters = sums.rows.size
    chunk = max(1, CHUNK_ELEMENTS // n_clusters)
    groups = _groups(sums)
    for start in range(0, n_resamples, chunk):
        rows = min(chunk, n_resamples - start)
        drawn = np.empty((rows, n_clusters), dtype=np.intp)
        for members in groups:
            drawn[:, members] = members[rng.integers(0, members.size, size=(rows, members.size))]
        yield drawn


class _Draws(NamedTuple):
    """Per draw: the estimate at the draw's weight, the labels alone, the judge alone and the
    labelled rows' mean of ``y - f``, each with its CR1 two-phase variance (as :func:`fit`
    and :func:`judge_only` give it on the draw's sums), and the draw's weight."""

    estimate: Vector
    human: Vector
    judge: Vector
    residual: Vector
    variance: Vector
    human_variance: Vector
    judge_variance: Vector
    residual_variance: Vector
    weight: Vector


def _draws(
    sums: JudgedSums, estimand: str, indices: NDArray[np.intp], weight: float | None
) -> _Draws:
    """The estimates of the draws ``indices`` (shape ``(B, C)``), the weight tuned in each
    (``weight=None``) or fixed.

    Each draw's numbers are those of :func:`fit` with ``small_sample="cr1"`` on the draw's
    sums (the clusters ``indices[b]``, a cluster drawn twice two clusters), written over
    whole blocks of draws: the strata and labelled clusters sit at the same positions in
    every draw, so each sum runs over fixed columns. At a weight ``lam`` the estimate is
    ``lam * J + sum_h share_h (Y_h - lam * F_h)`` (``J`` the judge's mean over every row,
    ``Y_h`` and ``F_h`` the labelled rows' Hájek means of the label and the judge in stratum
    ``h``), and the variance is ``c0 + c1 lam + c2 lam**2``, whose minimum on ``[0, 1]`` is
    the draw's tuned weight (:func:`tuned_weight`).
    """
    n = sums.rows
    if estimand == "pooled":
        size, judge_total, scale = n, sums.judge_total, np.ones_like(n)
    else:
        size, judge_total, scale = np.ones_like(n), sums.judge_total / n, 1.0 / n
    has = sums.labelled > 0
    with np.errstate(divide="ignore", invalid="ignore"):
        expand = np.where(has, n / sums.labelled, 0.0) * scale
    labelling = labelling_of(sums)
    n_clusters = n.size
    sizes = size[indices]
    total = sizes.sum(axis=1)
    judge_mean = judge_total[indices].sum(axis=1) / total
    g1 = (judge_total[indices] - judge_mean[:, None] * sizes) / (total / n_clusters)[:, None]
    zeros = np.zeros(indices.shape[0])
    human, judged = zeros.copy(), zeros.copy()
    # the variance's sums: the judge's square (G); the judge's cross-products with the
    # residual's two parts (P); the residuals' squares, expanded (Q) and by stratum (S)
    big_g = np.sum(g1**2, axis=1)
    p_a, p_b = zeros.copy(), zeros.copy()
    q_aa, q_ab, q_bb = zeros.copy(), zeros.copy(), zeros.copy()
    s_aa, s_ab, s_bb = zeros.copy(), zeros.copy(), zeros.copy()
    for stratum, (m_h, c_h) in enumerate(
        zip(labelling.labelled_clusters, labelling.clusters, strict=True)
    ):
        in_stratum = sums.strata == stratum
        columns = np.flatnonzero(in_stratum & has)
        drawn = indices[:, columns]
        labelled_size = size[drawn]
        weighted = labelled_size.sum(axis=1)
        human_hat = sums.human[drawn] * expand[drawn]
        judge_hat = sums.judge[drawn] * expand[drawn]
        y_h = human_hat.sum(axis=1) / weighted
        f_h = judge_hat.sum(axis=1) / weighted
        share = sizes[:, in_stratum].sum(axis=1) / total
        human += share * y_h
        judged += share * f_h
        stage = c_h / m_h
        unit = (share * n_clusters / (stage * weighted))[:, None]
        e_a = unit * (human_hat - y_h[:, None] * labelled_size)
        e_b = unit * (judge_hat - f_h[:, None] * labelled_size)
        p_a += stage * np.sum(g1[:, columns] * e_a, axis=1)
        p_b += stage * np.sum(g1[:, columns] * e_b, axis=1)
        aa, ab, bb = (np.sum(e_a**2, axis=1), np.sum(e_a * e_b, axis=1), np.sum(e_b**2, axis=1))
        q_aa += stage * aa
        q_ab += stage * ab
        q_bb += stage * bb
        first = (c_h / n_clusters) ** 2 * (1 / m_h - 1 / c_h) / (m_h - 1) if m_h > 1 else 0.0
        s_aa += first * aa
        s_ab += first * ab
        s_bb += first * bb
    # _variance's population formula, spread / C + first stage, as a quadratic in the weight
    outer, inner = 1.0 / (n_clusters * (n_clusters - 1)), n_clusters / (n_clusters - 1)
    c0 = outer * q_aa + inner * s_aa
    c1 = 2 * outer * (p_a - q_ab) - 2 * inner * s_ab
    c2 = outer * (big_g - 2 * p_b + q_bb) + inner * s_bb
    if weight is not None:
        lam = np.full(indices.shape[0], weight)
    elif labelling.kind == "every row":
        lam = zeros
    else:
        with np.errstate(divide="ignore", invalid="ignore"):
            lam = np.where(c2 > 1e-12 * np.abs(c0), np.clip(-c1 / (2 * c2), 0.0, 1.0), 0.0)
    estimate = human + lam * (judge_mean - judged)
    return _Draws(
        estimate=estimate,
        human=human,
        judge=judge_mean,
        residual=human - judged,
        variance=c0 + c1 * lam + c2 * lam**2,
        human_variance=c0,
        judge_variance=outer * big_g,
        # weight 1 on the labelled residual, none on the judge's mean (fit's judge_part=False)
        residual_variance=outer * (q_aa - 2 * q_ab + q_bb) + inner * (s_aa - 2 * s_ab + s_bb),
        weight=lam,
    )


class JudgedBootstrap(NamedTuple):
    """The bootstrap's intervals: the estimate, and beside it, from the same draws, the
    labels alone, the judge alone and the labelled rows' mean of ``y - f``."""

    fitted: JudgedFit
    human: JudgedFit
    judge: JudgedFit
    residual: JudgedFit
    weights: Vector
    """The weight of each draw."""


def bootstrap(
    sums: JudgedSums,
    *,
    estimand: str,
    weight: float | str,
    confidence: float,
    n_resamples: int,
    rng: np.random.Generator,
    indices: NDArray[np.intp] | None = None,
    interval: str = "studentized",
) -> JudgedBootstrap:
    """The cluster bootstrap of the two-phase design (target ``"population"``).

    Each draw resamples clusters with replacement separately within each (labelling
    stratum x labelled or not) group, keeping each group's count: ``m_h`` labelled and
    ``C_h - m_h`` unlabelled clusters in stratum ``h`` (the bootstrap of a stratified design,
    each stratum and phase its own; Rao & Wu 1988, *JASA* 83:231; Shao & Tu 1995, *The
    Jackknife and Bootstrap*, section 6.2). With every cluster labelled it is the ordinary
    (stratified) cluster bootstrap; with weight 0 it is the cluster bootstrap of the
    labelled rows.

    Why it estimates the two-phase variance: at a fixed weight the estimate is, to first
    order, ``(1/C) sum_c g_c + (1/m) sum_{labelled} e_c`` (one stratum, the units of the
    module's docstring scaled so). The draws take ``C - m`` unlabelled and ``m`` labelled
    clusters independently, so the ideal bootstrap variance is::

        [(C - m) s2_g,U + m s2_g,L] / C**2 + 2 s_ge,L / C + s2_e,L / m

    with ``s2`` the groups' variances with divisor ``n_g``. Its expectation over the labelling
    is the two-phase variance ``(S2_g + 2 S_ge)/C + S2_e/m`` (the module docstring's, with
    ``(1/m - 1/C) S2_e`` folded in) up to the factors ``(C - 2)/C`` on ``S2_g`` (one degree
    of freedom goes to the gap between the two groups' means) and ``(m - 1)/m`` on ``S_ge``
    and ``S2_e``: about ``1 - 1/m`` of it with few labelled clusters.

    The weight: a number is kept in every draw; ``"tuned"`` and ``"cross-fitted"`` re-tune it
    in each draw by plain tuning (the draw's :func:`tuned_weight` with CR1's factor;
    cross-fitting in every draw would cost a tuning per labelled cluster per draw). The point
    estimate is :func:`fit`'s with ``small_sample="cr1"``: the full sample's estimate with
    the full sample's choice of weight (cross-fitted when asked).

    The interval (``"studentized"``, the default) is the bootstrap-t (Efron & Tibshirani
    1993, *An Introduction to the Bootstrap*, section 12.5; Hall 1992, section 3.6): each
    draw's ``t* = (estimate* - estimate) / se*``, ``se*`` the draw's CR1 two-phase standard
    error at the draw's weight, and the bounds ``estimate - t*_(1-a/2) se`` and
    ``estimate - t*_(a/2) se`` with ``se`` the full sample's CR1 standard error; the
    quantiles and a draw without spread (``t*`` infinite on the side of its estimate) as
    :func:`clusterstats.core.bootstrap.studentized_bounds` takes them. Studentising corrects
    what the percentile interval of the same draws misses with few labelled clusters: the
    ``(m - 1)/m`` above, and that the spread of the labels is itself estimated from ``m``
    clusters (``studies/coverage_judged_bootstrap.py``: at 10 labelled clusters the
    percentile interval covered 87.7-89.5% of the time, the bootstrap-t 91.4-96.3%).
    ``"percentile"`` is the percentile interval of the draws (section 13.3).

    Parameters
    ----------
    sums : JudgedSums
        The design's per-cluster sums; an estimated design (not stated).
    estimand : {"pooled", "cluster_mean"}
    weight : float or {"tuned", "cross-fitted"}
    confidence : float
    n_resamples : int
        The draws ``B``.
    rng : numpy.random.Generator
    indices : ndarray of int, shape (B, C), optional
        Explicit draws (:func:`draw_indices`'s rows), for tests; ``rng`` is then unused.
    interval : {"studentized", "percentile"}

    Returns
    -------
    JudgedBootstrap
        Each interval with infinite degrees of freedom and the draws' standard deviation as
        its standard error; the labels alone, the judge alone and the labelled rows' mean of
        ``y - f`` from the same draws, each studentised by its own standard error.
    """
    if sums.stated:
        raise ValueError("the two-phase bootstrap takes a design estimated from the counts")
    if interval not in ("studentized", "percentile"):
        raise ValueError(f"unknown interval {interval!r}")
    labelling = labelling_of(sums)
    common = {"estimand": estimand, "target": "population", "confidence": confidence}
    point = fit(sums, **common, weight=weight, small_sample="cr1")
    human = fit(sums, **common, weight=0.0, small_sample="cr1")
    residual = fit(sums, **common, weight=1.0, small_sample="cr1", judge_part=False)
    judge = judge_only(sums, estimand=estimand, confidence=confidence, small_sample="cr1")
    fixed = None if isinstance(weight, str) else float(weight)
    blocks = [indices] if indices is not None else draw_indices(sums, n_resamples, rng)
    parts = [_draws(sums, estimand, block, fixed) for block in blocks]
    draws = _Draws(*(np.concatenate(column) for column in zip(*parts, strict=True)))
    alpha = 1.0 - confidence
    levels = [alpha / 2, 1 - alpha / 2]

    def bounds(full: JudgedFit, values: Vector, variances: Vector, shown: float) -> JudgedFit:
        if interval == "percentile":
            low, high = (float(q) for q in np.quantile(values, levels))
        else:
            low, high = _studentized(full.estimate, full.variance, values, variances, confidence)
        variance = float(np.var(values, ddof=1)) if values.size > 1 else math.nan
        return JudgedFit(full.estimate, variance, math.inf, low, high, shown, labelling)

    return JudgedBootstrap(
        fitted=bounds(point, draws.estimate, draws.variance, point.weight),
        human=bounds(human, draws.human, draws.human_variance, 0.0),
        judge=bounds(judge, draws.judge, draws.judge_variance, 1.0),
        residual=bounds(residual, draws.residual, draws.residual_variance, 1.0),
        weights=draws.weight,
    )


def _studentized(
    estimate: float, variance: float, values: Vector, variances: Vector, confidence: float
) -> tuple[float, float]:
    """The bootstrap-t bounds (:func:`clusterstats.core.bootstrap.t_quantiles`): a draw whose
    variance is rounding noise of the full sample's has no spread."""
    spread = np.where(variances > 1e-20 * variance, variances, 0.0)
    _, (t_low, t_high) = t_quantiles(values - estimate, np.sqrt(spread), confidence)
    se = math.sqrt(variance)
    if not se > 0:
        return estimate, estimate
    return estimate - float(t_high) * se, estimate - float(t_low) * se


class PlanParts(NamedTuple):
    """What a pilot says about the variance of a labelling design to come, at the pilot's
    weight: the two-phase variance as a function of the labelled clusters ``m`` and the
    labelled rows per cluster ``r`` (one labelling stratum, estimated design)."""

    judge_spread: float
    """``S2_g``: the spread of the judge's units over every cluster."""
    cross: float
    """``S_ge``: their covariance with the labelled residual's units."""
    between: float
    """``S2_e``: the spread of the clusters' true residual units (the labels' part no
    judge removes), the within-cluster noise of the pilot's labels taken out."""
    within: Vector
    """Per pilot cluster: ``s_c**2 * sigma2_w``, so that labelling ``r`` of its ``n_c`` rows
    adds ``within_c * (1/r - 1/n_c)`` to its unit's variance."""
    rows: Vector
    """Rows per pilot cluster."""


def _upper_limit(variance: float, df: float, level: float | None) -> float:
    """``variance``'s one-sided upper confidence limit at ``level`` on ``df`` degrees of
    freedom (chi-square), or ``variance`` itself for ``level=None``."""
    if level is None or df < 1:
        return variance
    return variance * df / float(special.chdtri(df, level))


def _difference_upper_limit(
    first: float, first_df: float, second: float, second_df: float, level: float | None
) -> float:
    """An upper confidence limit of ``theta1 - theta2`` (at least 0) from independent
    variance estimates ``first`` and ``second`` on their degrees of freedom: the modified
    large-sample bound of Graybill & Wang (1980; Burdick & Graybill 1992, section 3.3),
    ``first - second + sqrt((H1 first)**2 + (G2 second)**2)``, which stays above 0 when the
    estimates nearly cancel; ``level=None``: the estimate itself."""
    if level is None:
        return max(first - second, 0.0)
    h1 = _upper_limit(1.0, first_df, level) - 1.0
    g2 = 0.0
    if second > 0 and second_df >= 1:
        g2 = 1.0 - second_df / float(special.chdtri(second_df, 1.0 - level))
    return max(first - second + math.sqrt((h1 * first) ** 2 + (g2 * second) ** 2), 0.0)


def plan_parts(
    sums: JudgedSums, *, estimand: str, weight: float, upper: float | None = None
) -> PlanParts:
    """The pieces of :func:`projected_variance` from a pilot's sums at ``weight``.

    With ``upper``, the labels' spreads (between and within clusters) are taken at their
    one-sided upper confidence limits of that level: a plan on a pilot's point estimates
    falls short half the time, and by more than its average when the pilot is small
    (Browne 1995, *Statistics in Medicine* 14:1933). The between-cluster spread is a
    difference (the spread of the labelled clusters' units less their within-cluster
    noise), so its limit is the modified large-sample one (:func:`_difference_upper_limit`).
    """
    prep = _prepare(sums, estimand)
    has = prep.has
    g = weight * prep.g1
    _, e = _residuals(sums, prep, weight)
    n_clusters = g.size
    m = int(has.sum())
    stage = n_clusters / m
    judge_spread = float(np.sum(g**2)) / (n_clusters - 1)
    cross = float(np.sum(np.where(has, stage * g * e, 0.0))) / (n_clusters - 1)
    spread = float(np.sum(e[has] ** 2)) / (m - 1)
    # the within-cluster variance of y - weight * f, pooled over clusters with two labels
    r = sums.labelled
    with np.errstate(divide="ignore", invalid="ignore"):
        mean_y, mean_f = sums.human / r, sums.judge / r
        squares = (
            sums.human_sq - r * mean_y**2
            - 2 * weight * (sums.cross - r * mean_y * mean_f)
            + weight**2 * (sums.judge_sq - r * mean_f**2)
        )  # fmt: skip
    two = r > 1
    within_df = float(np.sum(r[two] - 1))
    sigma2 = float(np.sum(squares[two])) / within_df if two.any() else 0.0
    n = sums.rows
    # a unit is the cluster's mean, weighted by its size for the pooled estimand
    within = sigma2 * ((n / n.mean()) ** 2 if estimand == "pooled" else np.ones_like(n))
    pilot_noise = np.where(has & (r < n), within * (1 / np.maximum(r, 1) - 1 / n), 0.0)
    noise = float(pilot_noise[has].mean())
    between = _difference_upper_limit(spread, m - 1, noise, within_df, upper)
    within = _upper_limit(1.0, within_df, upper) * within
    return PlanParts(judge_spread, cross, between, within, n)


def projected_variance(
    parts: PlanParts, *, clusters: int, labelled: int, per_cluster: float, target: str
) -> float:
    """The two-phase variance of a run of ``clusters`` clusters like the pilot's, labelling
    ``per_cluster`` rows (at most all) in each of ``labelled`` clusters drawn at random.

    The population's is ``(S2_g + 2 S_ge + S2_e + w) / C + (1/m - 1/C) (S2_e + w)``, the
    benchmark's ``(1/m - 1/C) S2_e + w / m``, with ``w`` the mean within-cluster noise of
    ``per_cluster`` labels (the classic two-stage variance, Cochran 1977, section 10.2).
    """
    r = np.minimum(per_cluster, parts.rows)
    noise = float(np.mean(parts.within * (1 / r - 1 / parts.rows)))
    if target == "benchmark":
        return (1 / labelled - 1 / clusters) * parts.between + noise / labelled
    first = parts.judge_spread + 2 * parts.cross + parts.between + noise
    return max(first, 0.0) / clusters + (1 / labelled - 1 / clusters) * (parts.between + noise)


class LabelDesign(NamedTuple):
    """One way to buy labels: ``per_cluster`` rows (``inf``: every row) in each of
    ``clusters`` labelled clusters, the fewest that meet the plan's goal."""

    per_cluster: float
    clusters: int
    """Labelled clusters (0 when no number of them meets the goal)."""
    labels: float
    cost: float
    half_width: float
    power: float


def t_half_width(variance: float, df: float, confidence: float) -> float:
    """The half-width of a t interval of ``variance`` on ``df`` degrees of freedom."""
    return float(special.stdtrit(df, 0.5 + confidence / 2)) * math.sqrt(variance)


def _half_width_and_power(
    parts: PlanParts, m: int, r: float, *, clusters: int, target: str, confidence: float,
    effect: float,
) -> tuple[float, float]:  # fmt: skip
    se = math.sqrt(
        projected_variance(parts, clusters=clusters, labelled=m, per_cluster=r, target=target)
    )
    df = float(m - 1)
    quantile = float(special.stdtrit(df, 0.5 + confidence / 2))
    if effect == 0:  # a plan for a width: no test to give a power to
        return quantile * se, math.nan
    shift = abs(effect) / se if se > 0 else math.inf
    power = float(special.stdtr(df, shift - quantile) + special.stdtr(df, -shift - quantile))
    return quantile * se, power


def label_designs(
    parts: PlanParts,
    *,
    clusters: int,
    target: str,
    confidence: float,
    per_cluster: tuple[float, ...],
    cost_per_label: float,
    cost_per_cluster: float,
    half_width: float | None = None,
    effect: float = 0.0,
    power: float = 0.8,
    fewest: int = 2,
) -> list[LabelDesign]:
    """For each number of labelled rows per cluster, the fewest labelled clusters (of the
    run's ``clusters``) whose projected interval is at most ``half_width`` wide, or whose
    test of ``effect`` has at least ``power``; the half-width and power are the t interval's
    on the labelled clusters less one degree of freedom. No design labels fewer than
    ``fewest`` clusters (or all of them, when the run has fewer)."""
    designs = []
    for r in per_cluster:

        def meets(m: int, r: float = r) -> bool:
            width, reach = _half_width_and_power(
                parts, m, r, clusters=clusters, target=target, confidence=confidence,
                effect=effect,
            )  # fmt: skip
            return width <= half_width if half_width is not None else reach >= power

        low, high = min(fewest, clusters), clusters
        if not meets(high):
            m = 0
        else:
            while low < high:  # the half-width falls and the power rises with m
                middle = (low + high) // 2
                low, high = (low, middle) if meets(middle) else (middle + 1, high)
            m = low
        shown = m if m else clusters
        width, reach = _half_width_and_power(
            parts, shown, r, clusters=clusters, target=target, confidence=confidence,
            effect=effect,
        )  # fmt: skip
        per = float(np.mean(np.minimum(r, parts.rows)))
        designs.append(
            LabelDesign(
                per_cluster=r,
                clusters=m,
                labels=m * per,
                cost=m * (per * cost_per_label + cost_per_cluster),
                half_width=width,
                power=reach,
            )
        )
    return designs
