"""A leaderboard from a judge on every answer and human labels on a few: ``judged_compare``.

Every model is judged on the same items and some of their answers are labelled by humans.
Each model's score is ``judged_ci``'s, each pair's difference ``judged_delta``'s on the items
both answers of which are labelled, and the rank sets invert the pairs' tests together
(Mogstad, Romano, Shaikh & Wilhelm 2024), as ``compare`` does for scored outcomes. The
result is a :class:`~clusterstats.stats.comparison.Comparison`.
"""

from __future__ import annotations

import dataclasses
import itertools
import math
from collections.abc import Hashable
from typing import Any

import numpy as np

from clusterstats import _options as opt
from clusterstats import adapters
from clusterstats._design import JudgedComparisonDesign
from clusterstats.core.intervals import t_test_p_value
from clusterstats.core.paired import without_degenerate
from clusterstats.core.ranks import score_ranks, separable_neighbours, summarize_ranks
from clusterstats.errors import (
    DegenerateDataError,
    DegenerateDataWarning,
    InvalidDataError,
    InvalidOptionError,
    warn,
)
from clusterstats.stats import _policies as policy
from clusterstats.stats.comparison import Comparison
from clusterstats.stats.judged import JudgedCI, build_judged_ci

__all__ = ["build_judged_comparison", "judged_compare"]


def _pair_fits(
    design: JudgedComparisonDesign, options: opt.JudgedCompareOptions
) -> tuple[dict[tuple[int, int], JudgedCI | None], int]:
    """Every pair's ``judged_delta`` (None for a pair whose difference is the same in every
    cluster, which has no interval), and the items labelled for one model of a pair only
    (summed over the pairs)."""
    fits: dict[tuple[int, int], JudgedCI | None] = {}
    one_side = 0
    for (i, j), (pair, lonely) in design.pairs.items():
        sides = (str(design.models[i]), str(design.models[j]))
        if not pair.sums.labelled.any():
            raise InvalidDataError(
                f"no item has both its {sides[0]!r} and its {sides[1]!r} answers labelled: a "
                "pair's difference is corrected on the items labelled for both models"
            )
        with adapters.naming(f"pair {sides[0]!r} - {sides[1]!r}"):
            try:
                fits[(i, j)] = build_judged_ci(pair, options.judged, sides=sides)
            except DegenerateDataError:
                fits[(i, j)] = None
        one_side += lonely
    return fits, one_side


def build_judged_comparison(
    design: JudgedComparisonDesign, options: opt.JudgedCompareOptions, *, baseline: Any = None
) -> Comparison:
    """``judged_compare`` on a design."""
    models = design.models
    m = len(models)
    if m < 2:
        raise InvalidOptionError(f"judged_compare needs 2 or more models, found {m}: {models}")
    if options.top > m:
        raise InvalidOptionError(f"top={options.top} is more places than the {m} models compared")
    if baseline is not None and baseline not in models:
        raise InvalidOptionError(f"baseline {baseline!r} is not one of the models {list(models)}")
    judged = options.judged
    with policy.once() as warned:
        scores = []
        for model, one in zip(models, design.scores, strict=True):
            with adapters.naming(f"model {model!r}"):
                scores.append(build_judged_ci(one, judged))
        naive = [build_judged_ci(d, dataclasses.replace(judged, method="cr1")) for d in design.rows]
        fits, one_side = _pair_fits(design, options)
    means = np.array([s.estimate for s in scores])
    own = np.array([s.se**2 for s in scores])
    variance = np.zeros((m, m))  # a degenerate pair keeps 0: it is never separated
    for (i, j), fit in fits.items():
        if fit is not None:
            variance[i, j] = variance[j, i] = fit.se**2
    dfs = [fit.df for fit in fits.values() if fit is not None] or [math.inf]
    ranks = summarize_ranks(
        means, variance, own, confidence=judged.confidence, method=options.rank_method,
        rng=judged.rng.generator(), n_draws=judged.n_resamples, df=min(dfs),
    )  # fmt: skip
    rank = score_ranks(means).astype(float)
    if baseline is not None:
        b = models.index(baseline)
        chosen = [(k, b) for k in range(m) if k != b]
    else:
        chosen = list(itertools.combinations(range(m), 2))
    if options.orientation == "higher_minus_lower":
        chosen = [(a, b) if means[a] >= means[b] else (b, a) for a, b in chosen]
    rows = [_pair_row(fits, means, a, b) for a, b in chosen]
    degenerate = np.array([math.isnan(r[1]) for r in rows])
    p_values = np.array([t_test_p_value(r[0], r[1], r[4]) if r[1] > 0 else math.nan for r in rows])
    se, low, high, p_values, p_adjusted = without_degenerate(
        degenerate, *(np.array([r[k] for r in rows]) for k in (1, 2, 3)), p_values,
        options.adjust,
    )  # fmt: skip
    if degenerate.any():
        pairs = zip(chosen, degenerate, strict=True)
        named = [f"{models[a]!r} - {models[b]!r}" for (a, b), flat in pairs if flat]
        message = (
            f"{len(named)} {'pair has' if len(named) == 1 else 'pairs have'} the same "
            f"difference in every cluster, so no interval is given: {', '.join(named[:5])}"
            f"{' ...' if len(named) > 5 else ''}; the difference shown is that of the scores"
        )
        warn(message, DegenerateDataWarning)
        warned.append(message)
    notes = _notes(design, scores, fits, one_side, list(warned))
    return Comparison(
        models=models,
        score=tuple(means),
        score_low=tuple(s.low for s in scores),
        score_high=tuple(s.high for s in scores),
        naive_low=tuple(s.low for s in naive),
        naive_high=tuple(s.high for s in naive),
        score_method=judged.method,
        rank=tuple(rank),
        rank_low=tuple(ranks.low),
        rank_high=tuple(ranks.high),
        marginal_rank_low=tuple(ranks.marginal_low),
        marginal_rank_high=tuple(ranks.marginal_high),
        tier=tuple(ranks.tier),
        in_top_set=tuple(bool(low <= options.top) for low in ranks.low),
        top=options.top,
        rank_method=ranks.method,
        n_separated_neighbours=separable_neighbours(means, ranks.above),
        separated=tuple(
            (models[a], models[b]) for a, b in zip(*np.nonzero(ranks.above), strict=True)
        ),
        pair_a=tuple(models[a] for a, _ in chosen),
        pair_b=tuple(models[b] for _, b in chosen),
        delta=tuple(r[0] for r in rows),
        se=tuple(se),
        low=tuple(low),
        high=tuple(high),
        p_value=tuple(p_values),
        p_adjusted=tuple(p_adjusted),
        df=tuple(r[4] for r in rows),
        method=judged.method,
        adjust=options.adjust,
        estimand=judged.estimand,
        confidence=judged.confidence,
        baseline=baseline,
        n_items=design.n_items,
        n_clusters=scores[0].n_clusters,
        n_resamples=judged.n_resamples,
        n_dropped_items=design.n_dropped_items,
        outcome=scores[0].outcome,
        by=scores[0].by,
        notes=tuple(notes),
        orientation=options.orientation,
        judge=scores[0].judge,
        target=judged.target,
    )


def _pair_row(
    fits: dict[tuple[int, int], JudgedCI | None], means: np.ndarray, a: int, b: int
) -> tuple[float, float, float, float, float]:
    """``models[a] - models[b]``: its difference, se, bounds and df, from the fit of the
    pair in whichever order it was fitted; a degenerate pair's difference is that of the
    scores, with no interval."""
    sign, f = (1.0, fits[(a, b)]) if (a, b) in fits else (-1.0, fits[(b, a)])
    if f is None:
        return (float(means[a] - means[b]), math.nan, math.nan, math.nan, math.nan)
    low, high = sorted((sign * f.low, sign * f.high))
    return (sign * f.estimate + 0.0, f.se, low, high, f.df)


def _notes(
    design: JudgedComparisonDesign,
    scores: list[JudgedCI],
    fits: dict[tuple[int, int], JudgedCI | None],
    one_side: int,
    warned: list[str],
) -> list[str]:
    labelled = [s.n_labelled for s in scores]
    weights = [s.weight for s in scores]
    shared = [f.n_labelled for f in fits.values() if f is not None] or [0]
    notes = [
        "each score is judged_ci's (the judge's mean over every item, corrected by the "
        "human labels of that model's answers) and each pair judged_delta's (on the items "
        "whose answers from both models are labelled); naive: the same with every item its "
        "own cluster",
        f"labelled answers per model: {_span(labelled, '{:,}')}; items labelled for both "
        f"models of a pair: {_span(shared, '{:,}')}; the models' judge weights "
        f"{_span(weights, '{:.2f}')} ({scores[0].weight_method})",
        "rank sets: each pair's variance comes from its own weight, so the critical values "
        "draw from the joint covariance these variances imply, negative eigenvalues set to 0",
    ]
    if one_side:
        notes.append(
            f"{one_side:,} (item, pair) answers were labelled for one model of the pair only: "
            "unused for that pair's difference"
        )
    if design.n_dropped_items:
        notes.append(
            f"how='inner': {design.n_dropped_items} items missing for some model were left out"
        )
    return notes + warned


def _span(values: list[Any], form: str) -> str:
    low, high = form.format(min(values)), form.format(max(values))
    return low if low == high else f"{low} to {high}"


def judged_compare(
    data: Any,
    outcome: Hashable,
    by: opt.By | None = None,
    *,
    model: Hashable,
    judge: Hashable,
    on: Hashable | list[Hashable] | None = None,
    baseline: Any = None,
    how: opt.How = "strict",
    estimand: opt.Estimand = "pooled",
    target: opt.Target = "population",
    weight: opt.JudgeWeight | float = "auto",
    method: str = "cr2",
    adjust: opt.Adjust = "holm",
    confidence: float = 0.95,
    strata: Hashable | None = None,
    nest: bool = False,
    rank_method: opt.RankMethod = "auto",
    top: int = 1,
    orientation: opt.Orientation = "as_given",
    n_resamples: int = 9999,
    rng: int | np.random.Generator | None = None,
    case: Hashable = "case",
    rerun: Hashable = "rerun",
) -> Comparison:
    """A leaderboard of many models judged on the same items, with human labels on a few of
    their answers (prediction-powered, clustered).

    Each model's score is :func:`judged_ci`'s estimate of its human labels' mean; each pair's
    difference is :func:`judged_delta`'s, item by item on the items both models answered,
    the labels' difference where both answers are labelled (the judge's weight tuned on the
    differences, so a bias both models share cancels); the p-values are adjusted across the
    family, and the rank sets, tiers and the set of possible best models come from the
    pairs' tests together, as in :func:`compare` (Mogstad, Romano, Shaikh & Wilhelm 2024).

    Parameters
    ----------
    data : pandas, polars, pyarrow or dask DataFrame, or xarray Dataset
        Long results: one row per (model, item), every row judged, the human label missing
        where that answer is unlabelled. Or a (case, rerun) Dataset with the models along
        the ``model`` dim, the judge and the labels as variables: its runs are the items,
        matched between models by their (case, rerun) cell.
    outcome : str
        The human label column.
    by : str or list of str
        The cluster column(s) of the items (the same for every model); for a Dataset,
        coordinates along the case dim (default: the cases).
    model : str
        The model column (for a Dataset, the models' dim).
    judge : str
        The judge's score column, on the labels' scale.
    on : str or list of str
        The item key, matching the models' rows (a frame needs it; a Dataset's runs are
        matched by their cell).
    baseline : model label, optional
        Report each model against this one only (the rank sets still use every pair).
    how : {"strict", "inner"}, default "strict"
        Items some model lacks: an ``AlignmentError``, or left out and counted.
    estimand, target, weight, confidence, strata, nest
        As for :func:`judged_ci`, for every score and every pair.
    method : {"cr2", "cr1"}, default "cr2"
        As for :func:`judged_ci` (the peers' constructions have no paired form).
    adjust : {"holm", "bh", "none"}, default "holm"
        Multiplicity adjustment of the pairs' p-values (t tests on each pair's df).
    rank_method : {"auto", "guarded", "t", "normal"}, default "auto"
        As for :func:`compare`; ``"auto"`` is ``"guarded"``, on the smallest df of the pairs.
    top : int, default 1
        ``in_top_set`` marks the models that could be among the best ``top``.
    orientation : {"as_given", "higher_minus_lower"}, default "as_given"
        As for :func:`compare`.
    n_resamples : int, default 9999
        Draws of the rank sets' critical values.
    rng : int, numpy.random.Generator or None
        Seed of those draws (None: a fixed default seed).
    case, rerun : str, default "case", "rerun"
        The dims of a (case, rerun) Dataset.

    Returns
    -------
    Comparison
        With ``judge`` and ``target`` set; each model's interval is ``judged_ci``'s, and its
        naive interval the same construction with every item its own cluster.

    Raises
    ------
    AlignmentError
        A (model, item) repeats; an item's clusters differ between models; or
        (``how="strict"``) an item is judged for some models only.
    InvalidOptionError
        An invalid option, a ``baseline`` that is not a model, fewer than 2 models.
    TooFewClustersError
        Fewer than 2 clusters (in some stratum) hold labels for a model or a pair.

    Examples
    --------
    HANNA's 11 story generators on 96 prompts, judged by ChatGPT, with the human ratings
    of the stories of 30 prompts:

    >>> import clusterstats
    >>> coh = clusterstats.datasets.load("hanna").query("criterion == 'Coherence'")
    >>> coh = coh.assign(human=coh["human_score"].where(coh["cluster"] < 30))
    >>> res = clusterstats.judged_compare(coh, "human", "cluster", model="system",
    ...                                   judge="judge_score", on="cluster")
    >>> res.leaderboard()["model"].iloc[0], len(res.pairs())
    ('Human', 55)
    """
    columns = adapters.columns_of(
        data, outcome, by, model=model, judge=judge, strata=strata, on=on, layout=(case, rerun)
    )
    options = opt.judged_compare_options(
        columns, how=how, adjust=adjust, rank_method=rank_method, top=top,
        orientation=orientation, n_resamples=n_resamples, rng=rng, estimand=estimand,
        target=target, weight=weight, method=method, confidence=confidence, nest=nest,
    )  # fmt: skip
    design = adapters.judged_comparison_design(
        data, columns, how=options.how, nest=options.judged.nest
    )
    return build_judged_comparison(design, options, baseline=baseline)
