"""Vocabularies and option validation shared by several public functions.

Each public function turns its keyword options into one frozen value (``IntervalOptions``,
``PairedOptions``, ...) before any data is touched, as scipy's ``_bootstrap_iv`` does: a bad
option is an :class:`~clusterstats.errors.InvalidOptionError` that names it, whatever the
backend. The numeric core owns the names of what it computes (interval methods, estimands).

What lives here, by rule: the vocabularies of policies that more than one module (or the
command line) names; the primitive checks (a choice, a confidence, a seed, a number of the
planning formulas); the option objects that several functions share (``IntervalOptions``
for ``cluster_ci`` and everything built on it, ``PairedOptions`` for ``paired_delta``,
``compare`` and the gate); and the rules for combining features (weights, crossed
clustering, strata). An option object or check used by one module only lives beside its
function (``PlanOptions`` in ``planning``, ``PassOptions`` in ``reruns``).
"""

from __future__ import annotations

import dataclasses
import math
import numbers
from collections.abc import Hashable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal, get_args

import numpy as np

from clusterstats.core._lazy import special
from clusterstats.core.bootstrap import generator as bootstrap_generator
from clusterstats.core.crossed import CROSSED_METHODS
from clusterstats.core.intervals import METHODS, Method
from clusterstats.core.missing import IPW_METHODS
from clusterstats.core.sequential import SEQUENCE_METHODS
from clusterstats.core.variance import ESTIMANDS
from clusterstats.core.weighted import WEIGHTED_METHODS
from clusterstats.errors import InvalidOptionError

if TYPE_CHECKING:
    from clusterstats.adapters.labels import Columns

__all__ = [
    "ADJUSTMENTS",
    "ALIGNMENTS",
    "COMPARE_METHODS",
    "ESTIMANDS",
    "FEWER_RUNS",
    "IPW_METHODS",
    "LONELY",
    "METHODS",
    "MISSING",
    "MISSING_OR_IPW",
    "PAIRED_METHODS",
    "PASS_METHODS",
    "PROPENSITIES",
    "STRATIFIED_ESTIMANDS",
    "TARGETS",
    "Estimand",
    "IntervalOptions",
    "Method",
    "Missing",
    "MissingOrIPW",
    "PairedOptions",
    "Seed",
]

Estimand = Literal["pooled", "cluster_mean"]
Missing = Literal["drop", "fail", "pass", "raise"]
MissingOrIPW = Literal["drop", "fail", "pass", "raise", "ipw"]
Propensity = Literal["cluster", "shrunk", "logistic"]
Lonely = Literal["fail", "adjust", "average", "certainty"]
EmptyClusters = Literal["drop", "keep"]
How = Literal["strict", "inner"]
Adjust = Literal["holm", "bh", "none"]
Orientation = Literal["as_given", "higher_minus_lower"]
RankMethod = Literal["auto", "guarded", "t", "normal", "bootstrap"]
Target = Literal["population", "benchmark"]
JudgedMethod = Literal["cr2", "cr1", "bootstrap", "glide", "ppi_py"]
JudgeWeight = Literal["auto", "tuned", "cross-fitted"]
TARGETS: tuple[str, ...] = get_args(Target)
JUDGED_METHODS: tuple[str, ...] = get_args(JudgedMethod)
PairedMethod = Literal[
    "auto",
    "naive",
    "cr1",
    "cr2",
    "cr2_ik",
    "cr3",
    "cr3_ik",
    "bootstrap",
    "bootstrap_bca",
    "bootstrap_percentile",
    "bootstrap_t",
    "score",
    "bootstrap_t_or_score",
]
CompareMethod = Literal[
    "auto",
    "cr1",
    "cr2",
    "cr2_ik",
    "cr3",
    "cr3_ik",
    "bootstrap",
    "bootstrap_percentile",
    "bootstrap_t",
]
By = Hashable | Sequence[Hashable]

#: Missing-outcome policies of every statistic, and with inverse-probability weighting.
MISSING: tuple[str, ...] = get_args(Missing)
MISSING_OR_IPW: tuple[str, ...] = get_args(MissingOrIPW)
#: With ``strata=``, the mean of the stratum means is a third estimand ("macro" accuracy).
STRATIFIED_ESTIMANDS: tuple[str, ...] = (*ESTIMANDS, "stratum_mean")
PROPENSITIES: tuple[str, ...] = get_args(Propensity)
#: What to do with a stratum of a single cluster (R survey's ``survey.lonely.psu``).
LONELY: tuple[str, ...] = get_args(Lonely)
EMPTY_CLUSTERS: tuple[str, ...] = get_args(EmptyClusters)
# The methods built on the CR1 (survey linearisation) variance, where survey's count of the
# sampled clusters enters.
KEEP_EMPTY_METHODS: tuple[str, ...] = ("cr1", "korn_graubard", "wilson")
ALIGNMENTS: tuple[str, ...] = get_args(How)
ADJUSTMENTS: tuple[str, ...] = get_args(Adjust)
ORIENTATIONS: tuple[str, ...] = get_args(Orientation)
RANK_METHODS: tuple[str, ...] = get_args(RankMethod)
PAIRED_METHODS: tuple[str, ...] = get_args(PairedMethod)
COMPARE_METHODS: tuple[str, ...] = get_args(CompareMethod)
PASS_METHODS: tuple[str, ...] = PAIRED_METHODS
#: With strata, a paired difference takes these (the stratified linearised variance, or the
#: Rao-Wu bootstrap within strata).
STRATIFIED_PAIRED_METHODS: tuple[str, ...] = ("auto", "cr1", "bootstrap", "bootstrap_percentile")
FEWER_RUNS: tuple[str, ...] = ("raise", "drop")
#: Which runs of an lm-evaluation-harness task run more than once into one folder are read.
LM_EVAL_RUNS: tuple[str, ...] = ("latest", "all")


# -- single options -------------------------------------------------------------------------


def check_choice(name: str, value: Any, allowed: Sequence[str]) -> str:
    """``value`` if it is one of ``allowed``, else an error that lists them."""
    if not isinstance(value, str) or value not in allowed:
        raise InvalidOptionError(f"{name} must be one of {tuple(allowed)}, got {value!r}")
    return value


def check_confidence(value: Any) -> float:
    """A confidence level strictly between 0 and 1, given as a number (not text), far enough
    from 0 that its two-sided normal quantile is not 0 (which would give zero-width
    intervals) and from 1 that it is finite."""
    if isinstance(value, (bool, str, bytes)) or not isinstance(value, (int, float, np.number)):
        raise InvalidOptionError(f"confidence must be a number such as 0.95, got {value!r}")
    number = float(value)
    if not 0.0 < number < 1.0:
        raise InvalidOptionError(
            f"confidence must be strictly between 0 and 1 (e.g. 0.95), got {value!r}"
        )
    quantile = float(special.ndtri(0.5 + number / 2))
    if not (quantile > 0.0 and math.isfinite(quantile)):
        raise InvalidOptionError(
            f"confidence={value!r} is too close to {0 if number < 0.5 else 1} for its interval "
            "to have a width: use a level such as 0.9, 0.95 or 0.99"
        )
    return number


def check_n_resamples(value: Any, confidence: float = 0.95, *, resampling: bool = True) -> int:
    """A number of bootstrap replicates: a positive integer; when the call resamples, at least
    ``2 / (1 - confidence)`` (40 at 95%), so that each tail of the interval holds a replicate
    and the bounds are replicates, not the extremes of too few draws."""
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
        raise InvalidOptionError(f"n_resamples must be a positive integer, got {value!r}")
    minimum = max(2, math.ceil(2.0 / (1.0 - confidence) - 1e-9))
    if resampling and value < minimum:
        raise InvalidOptionError(
            f"n_resamples={value!r} is too few for a {confidence:g} interval: each tail needs "
            f"at least one replicate, so at least {minimum} (the default is 9999)"
        )
    return int(value)


def check_flag(name: str, value: Any) -> bool:
    if not isinstance(value, (bool, np.bool_)):
        raise InvalidOptionError(f"{name} must be True or False, got {value!r}")
    return bool(value)


def check_unit_interval(name: str, value: Any, *, upper_open: bool = False) -> float:
    """A number in [0, 1] (or [0, 1) with ``upper_open``)."""
    try:
        number = float(value)
    except (TypeError, ValueError):
        raise InvalidOptionError(f"{name} must be a number, got {shown(value)}") from None
    ok = 0.0 <= number < 1.0 if upper_open else 0.0 <= number <= 1.0
    if isinstance(value, bool) or not ok:
        bounds = "[0, 1)" if upper_open else "between 0 and 1"
        raise InvalidOptionError(f"{name} must be {bounds}, got {shown(value)}")
    return number


def check_labels(name: str, value: Any, *, allow_empty: bool = False) -> list[Hashable]:
    """One label or a list of labels (a cluster, an item key, a set of covariates)."""
    if isinstance(value, (list, tuple)):
        if not value and not allow_empty:
            raise InvalidOptionError(f"`{name}` needs at least one column")
        return list(value)
    return [value]


def check_side_labels(labels: Any) -> tuple[str, str] | None:
    """The names of the two sides of a paired comparison: None, or two distinct strings."""
    if labels is None:
        return None
    if (
        not isinstance(labels, (list, tuple))
        or len(labels) != 2
        or not all(isinstance(label, str) and label.strip() for label in labels)
    ):
        raise InvalidOptionError(
            f"labels must be two names, one per side (e.g. ('new', 'baseline')), got {labels!r}"
        )
    if labels[0] == labels[1]:
        raise InvalidOptionError(f"labels must name the two sides apart, got {labels!r} twice")
    return (labels[0], labels[1])


@dataclass(frozen=True)
class Seed:
    """The ``rng`` option, validated. An int seed (or None) gives every group a generator of
    its own from that seed, so that a group's interval equals the one computed for the group
    alone; a Generator is shared by the groups, drawn from in turn."""

    value: Any

    def generator(self) -> np.random.Generator:
        return bootstrap_generator(self.value)


def check_seed(value: Any) -> Seed:
    """An ``rng`` value: None, a non-negative integer (or a sequence of them), a
    ``numpy.random.SeedSequence``, ``BitGenerator`` or ``Generator``."""
    if value is None or isinstance(
        value, (np.random.Generator, np.random.BitGenerator, np.random.SeedSequence)
    ):
        return Seed(value)
    ok = isinstance(value, numbers.Integral) and not isinstance(value, bool) and value >= 0
    if not ok and isinstance(value, (list, tuple, np.ndarray)):
        entries = np.asarray(value).ravel().tolist()
        ok = bool(entries) and all(
            isinstance(v, numbers.Integral) and not isinstance(v, bool) and v >= 0 for v in entries
        )
    if not ok:
        raise InvalidOptionError(
            "rng must be None, a non-negative integer seed (or a list of them), or a "
            f"numpy.random.Generator, SeedSequence or BitGenerator; got {value!r}"
        )
    return Seed(value)


# -- the options of each statistic ----------------------------------------------------------


@dataclass(frozen=True)
class IntervalOptions:
    """Options of ``cluster_ci`` (and of the intervals inside ``report``, ``stratum_table``
    and ``missing_report``)."""

    estimand: str = "pooled"
    method: str = "auto"
    confidence: float = 0.95
    missing: str = "drop"
    propensity: str = "cluster"
    min_propensity: float = 0.05
    nest: bool = False
    lonely: str = "fail"
    icc: float | None = None
    n_resamples: int = 9999
    rng: Seed = Seed(None)
    cap_n_eff: bool = True
    empty_clusters: str = "drop"
    crossed: bool = False


def _role(columns: Columns | None, role: str) -> Any:
    """The ``role`` of a call's columns as the caller gave it (None without columns)."""
    return None if columns is None else columns.given(role)


def check_weights(
    weights: Any, *, estimand: Any, missing: Any, method: Any, crossed: Any, icc: Any
) -> Hashable | None:
    """The weight column's label, and the options it does not go with as errors."""

    if weights is None:
        return None
    if isinstance(weights, (list, tuple, set, dict)) or not isinstance(weights, Hashable):
        raise InvalidOptionError(
            f"weights= names one column of weights, got {type(weights).__name__}"
        )
    label = weights
    if estimand != "pooled":
        raise InvalidOptionError(
            "weights= estimates the weighted (Hájek) mean of the rows; with weights, "
            f"estimand must be 'pooled', got {estimand!r} (weight each cluster's rows by "
            "1 / its size for the mean of cluster means)"
        )
    if missing not in ("drop", "raise"):
        raise InvalidOptionError(
            f"with weights=, missing must be 'drop' or 'raise', got {missing!r}"
        )
    if method not in WEIGHTED_METHODS:
        raise InvalidOptionError(
            f"method {method!r} has no weighted form; with weights= use one of {WEIGHTED_METHODS}"
        )
    if crossed:
        raise InvalidOptionError("weights= and crossed=True cannot be combined yet")
    if icc is not None:
        raise InvalidOptionError("icc= (a prior for degenerate data) does not apply with weights=")
    return label


#: The methods of a paired difference under crossed clustering ("auto" is "cr1").
CROSSED_PAIRED_METHODS = ("auto", "naive", "cr1")


def check_crossed(
    crossed: Any,
    columns: Columns | None,
    *,
    estimand: Any,
    missing: Any,
    method: Any,
    methods: Sequence[str] | None = None,
) -> bool:
    """``crossed`` as a flag, and the options (and the roles of ``columns``: two or more
    cluster columns, no strata) it does not go with as errors naming them."""
    by, strata = _role(columns, "by"), _role(columns, "strata")

    allowed = CROSSED_METHODS if methods is None else tuple(methods)
    crossed = check_flag("crossed", crossed)
    if not crossed:
        return False
    if not isinstance(by, (list, tuple)) or len(by) < 2:
        raise InvalidOptionError(
            f"crossed=True needs by= with two or more groupings (e.g. by=['question', "
            f"'template']), got by={by!r}"
        )
    if estimand != "pooled":
        raise InvalidOptionError(
            "crossed=True estimates the pooled mean of the rows: with crossed groupings a "
            f"cluster mean is not defined; got estimand={estimand!r}"
        )
    if strata is not None:
        raise InvalidOptionError("crossed=True and strata= cannot be combined yet")
    if missing == "ipw":
        raise InvalidOptionError("crossed=True and missing='ipw' cannot be combined yet")
    if method not in allowed:
        raise InvalidOptionError(
            f"method {method!r} has no crossed form; with crossed=True use one of {allowed}"
        )
    return True


def interval_options(
    columns: Columns | None = None,
    *,
    estimand: Any = "pooled",
    method: Any = "auto",
    confidence: Any = 0.95,
    missing: Any = "drop",
    propensity: Any = "cluster",
    min_propensity: Any = 0.05,
    nest: Any = False,
    lonely: Any = "fail",
    icc: Any = None,
    n_resamples: Any = 9999,
    rng: Any = None,
    cap_n_eff: Any = True,
    empty_clusters: Any = "drop",
    crossed: Any = False,
) -> IntervalOptions:
    """Validate the options of ``cluster_ci`` against the roles of its ``columns`` (the
    strata, weights, covariates and clusters the options go with)."""
    strata, covariates = _role(columns, "strata"), _role(columns, "covariates")
    level = check_confidence(confidence)
    check_choice("estimand", estimand, STRATIFIED_ESTIMANDS if strata is not None else ESTIMANDS)
    check_choice("method", method, METHODS)
    check_choice("missing", missing, MISSING_OR_IPW)
    check_choice("lonely", lonely, LONELY)
    check_choice("empty_clusters", empty_clusters, EMPTY_CLUSTERS)
    if empty_clusters == "keep":
        if method not in KEEP_EMPTY_METHODS:
            raise InvalidOptionError(
                "empty_clusters='keep' is R survey's convention for its linearisation (CR1) "
                f"variance; use it with method in {KEEP_EMPTY_METHODS}, got method={method!r}"
            )
        if strata is not None or missing not in ("drop",):
            raise InvalidOptionError(
                "empty_clusters='keep' applies to missing='drop' without strata= (clusters "
                "whose every outcome is missing)"
            )
    if icc is not None:
        icc = check_unit_interval("icc", icc)
    resamples = check_n_resamples(
        n_resamples, level, resampling=str(method).startswith("bootstrap")
    )
    nest = check_flag("nest", nest)
    covariate_labels = (
        tuple(check_labels("covariates", covariates)) if covariates is not None else ()
    )
    if missing == "ipw":
        if strata is not None:
            raise InvalidOptionError("strata= and missing='ipw' cannot be combined yet")
        if estimand != "pooled":
            raise InvalidOptionError(
                "missing='ipw' estimates the pooled mean of every row, answered or not; for the "
                "mean of cluster means use missing='drop' (with cluster-level propensities each "
                "cluster's weighted mean is its observed mean)"
            )
        if method not in IPW_METHODS:
            raise InvalidOptionError(
                f"with missing='ipw' the variance is a stacked sandwich; method must be one of "
                f"{IPW_METHODS}, got {method!r}"
            )
        check_choice("propensity", propensity, PROPENSITIES)
        if propensity == "logistic" and not covariate_labels:
            raise InvalidOptionError("propensity='logistic' needs covariates=[...] columns")
        if propensity != "logistic" and covariate_labels:
            raise InvalidOptionError("covariates= need propensity='logistic'")
        min_propensity = check_unit_interval("min_propensity", min_propensity, upper_open=True)
    elif covariates is not None or propensity != "cluster":
        raise InvalidOptionError("propensity= and covariates= apply to missing='ipw' only")
    options = IntervalOptions(
        estimand=estimand,
        method=method,
        confidence=level,
        missing=missing,
        propensity=propensity,
        min_propensity=float(min_propensity),
        nest=nest,
        lonely=lonely,
        icc=icc,
        n_resamples=resamples,
        rng=check_seed(rng),
        cap_n_eff=check_flag("cap_n_eff", cap_n_eff),
        empty_clusters=empty_clusters,
        crossed=check_crossed(crossed, columns, estimand=estimand, missing=missing, method=method),
    )
    check_weights(
        _role(columns, "weights"), estimand=estimand, missing=missing, method=method,
        crossed=crossed, icc=icc,
    )  # fmt: skip
    return options


@dataclass(frozen=True)
class PairedOptions:
    """Options of ``paired_delta`` and ``compare``."""

    how: str = "strict"
    estimand: str = "pooled"
    method: str = "auto"
    confidence: float = 0.95
    missing: str = "drop"
    nest: bool = False
    lonely: str = "fail"
    adjust: str = "holm"
    n_resamples: int = 9999
    rng: Seed = Seed(None)
    crossed: bool = False
    orientation: str = "as_given"
    rank_method: str = "auto"
    top: int = 1


def _pairing_options(
    columns: Columns | None,
    *,
    estimands: Sequence[str],
    methods: Sequence[str],
    crossed_methods: Sequence[str],
    always_resamples: bool,
    how: Any = "strict",
    estimand: Any = "pooled",
    method: Any = "auto",
    adjust: Any = "holm",
    confidence: Any = 0.95,
    missing: Any = "drop",
    nest: Any = False,
    lonely: Any = "fail",
    n_resamples: Any = 9999,
    rng: Any = None,
    crossed: Any = False,
) -> PairedOptions:
    """The checks that ``paired_delta`` and ``compare`` share (``compare`` always resamples,
    for its shared cluster bootstrap)."""
    level = check_confidence(confidence)
    check_choice("how", how, ALIGNMENTS)
    check_choice("estimand", estimand, estimands)
    check_choice("method", method, methods)
    check_choice("adjust", adjust, ADJUSTMENTS)
    check_choice("missing", missing, MISSING_OR_IPW)
    check_choice("lonely", lonely, LONELY)
    if _role(columns, "strata") is not None and missing == "ipw":
        raise InvalidOptionError("strata= and missing='ipw' cannot be combined yet")
    return PairedOptions(
        how=how,
        estimand=estimand,
        method=method,
        confidence=level,
        missing=missing,
        nest=check_flag("nest", nest),
        lonely=lonely,
        adjust=adjust,
        # compare always resamples (its shared bootstrap); paired_delta only for a bootstrap
        n_resamples=check_n_resamples(
            n_resamples, level, resampling=always_resamples or str(method).startswith("bootstrap")
        ),
        rng=check_seed(rng),
        crossed=check_crossed(
            crossed, columns, estimand=estimand, missing=missing, method=method,
            methods=crossed_methods,
        ),
    )  # fmt: skip


def _check_pairing_weights(columns: Columns | None, options: PairedOptions) -> None:
    """``weights=`` and the options of a paired difference or a leaderboard it does not go
    with."""
    weights = _role(columns, "weights")
    if weights is None:
        return
    if options.missing == "ipw":
        raise InvalidOptionError("weights= and missing='ipw' cannot be combined yet")
    check_weights(
        weights, estimand=options.estimand, missing=options.missing, method=options.method,
        crossed=options.crossed, icc=None,
    )  # fmt: skip


def paired_options(columns: Columns | None = None, **pairing: Any) -> PairedOptions:
    """Validate the options of ``paired_delta`` against the roles of its ``columns``
    (``pairing``: ``how``, ``estimand``, ``method``, ``confidence``, ``missing``, ``nest``,
    ``lonely``, ``n_resamples``, ``rng`` and ``crossed``, as ``paired_delta`` takes them)."""
    options = _pairing_options(
        columns, estimands=ESTIMANDS, methods=PAIRED_METHODS,
        crossed_methods=CROSSED_PAIRED_METHODS, always_resamples=False, **pairing,
    )  # fmt: skip
    estimand, method, missing = options.estimand, options.method, options.missing
    if missing == "ipw" and (estimand != "pooled" or method != "auto"):
        raise InvalidOptionError(
            "missing='ipw' estimates the pooled difference with its stacked sandwich "
            "variance: leave estimand and method at their defaults"
        )
    if _role(columns, "strata") is not None and method not in STRATIFIED_PAIRED_METHODS:
        raise InvalidOptionError(
            "with strata, a paired difference takes method 'auto' (= 'cr1', the stratified "
            f"linearised variance), 'cr1' or 'bootstrap' (Rao–Wu within strata), not {method!r}"
        )
    _check_pairing_weights(columns, options)
    return options


def compare_options(
    columns: Columns | None = None,
    *,
    orientation: Any = "as_given",
    rank_method: Any = "auto",
    top: Any = 1,
    **pairing: Any,
) -> PairedOptions:
    """Validate the options of ``compare`` against the roles of its ``columns``
    (``pairing``: the options it shares with ``paired_delta``, and ``adjust``)."""
    check_choice("orientation", orientation, ORIENTATIONS)
    check_choice("rank_method", rank_method, RANK_METHODS)
    if isinstance(top, bool) or not isinstance(top, (int, np.integer)) or top < 1:
        raise InvalidOptionError(f"top must be a whole number of places, 1 or more; got {top!r}")
    if pairing.get("crossed") and rank_method == "bootstrap":
        raise InvalidOptionError(
            "rank_method='bootstrap' has no crossed form (the cluster bootstrap resamples one "
            "grouping); with crossed=True the rank sets use 'guarded' ('auto')"
        )
    stratified = _role(columns, "strata") is not None
    options = _pairing_options(
        columns, estimands=STRATIFIED_ESTIMANDS if stratified else ESTIMANDS,
        methods=COMPARE_METHODS, crossed_methods=("auto", "cr1"), always_resamples=True,
        **pairing,
    )  # fmt: skip
    estimand, method, missing = options.estimand, options.method, options.missing
    if stratified and method in ("cr2", "cr2_ik", "cr3", "cr3_ik", "bootstrap_t"):
        raise InvalidOptionError(
            "with strata, compare uses the stratified linearised variance (method 'auto' or "
            f"'cr1') or the Rao–Wu bootstrap within strata ('bootstrap'), not {method!r}"
        )
    if missing == "ipw" and estimand != "pooled":
        raise InvalidOptionError("missing='ipw' estimates pooled scores; use estimand='pooled'")
    if _role(columns, "weights") is not None and method not in ("auto", "cr1"):
        raise InvalidOptionError(
            f"method {method!r} has no weighted form in compare; with weights= use "
            "'auto' (= 'cr1') or 'cr1'"
        )
    _check_pairing_weights(columns, options)
    return dataclasses.replace(
        options, orientation=orientation, rank_method=rank_method, top=int(top)
    )


# -- the numbers of the planning formulas (plan, pilot_plan, the gate, simulate) -------------


def shown(value: Any) -> str:
    """``repr(value)``, shortened for an integer too long to print; a numpy scalar as
    numpy 2 writes it (``np.float32(nan)``) whatever numpy is installed, so that a message
    reads the same on every supported version."""
    if isinstance(value, numbers.Integral) and abs(int(value)) > 10**30:
        return f"an integer of {len(str(abs(int(value))))} digits"
    if isinstance(value, np.bool_):
        return "np.True_" if value else "np.False_"
    if isinstance(value, np.generic):
        return f"np.{type(value).__name__}({value.item()!r})"
    return repr(value)


def check_plan_number(
    name: str,
    value: Any,
    *,
    at_least: float | None = None,
    above: float | None = None,
    at_most: float | None = None,
    below: float | None = None,
    whole: bool = False,
    why: str = "",
) -> float:
    """A number of the planning formulas, as a float: a real number (not a bool, a string or
    a container), finite, within the bounds given (``at_least``/``at_most`` inclusive,
    ``above``/``below`` strict) and, with ``whole``, a whole number. ``why`` ends the message
    of a value out of bounds (what the bound means, or what to do)."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Real):
        raise InvalidOptionError(f"{name} must be a number, got {shown(value)}")
    try:
        number = float(value)
    except OverflowError:
        number = math.inf
    if math.isnan(number):
        raise InvalidOptionError(f"{name} must be a number, got {shown(value)}")
    low = (f"at least {at_least:g}", at_least) if at_least is not None else None
    if above is not None:
        low = ("positive" if above == 0 else f"greater than {above:g}", above)
    if at_least is not None and at_most is not None:
        rule = f"between {at_least:g} and {at_most:g}"
    elif above is not None and below is not None:
        rule = f"strictly between {above:g} and {below:g}"
    elif low is not None:
        rule = low[0]
    elif at_most is not None or below is not None:
        rule = f"at most {at_most:g}" if at_most is not None else f"below {below:g}"
    else:
        rule = ""
    rule = ("a whole number" + (f", {rule}" if rule else "")) if whole else rule
    ok = (
        (at_least is None or number >= at_least)
        and (above is None or number > above)
        and (at_most is None or number <= at_most)
        and (below is None or number < below)
        and (not whole or not math.isfinite(number) or number.is_integer())
    )
    tail = f"; {why}" if why else ""
    if not ok:
        raise InvalidOptionError(f"{name} must be {rule}, got {shown(value)}{tail}")
    if not math.isfinite(number):
        raise InvalidOptionError(
            f"{name} must be finite{f' ({rule})' if rule else ''}, got {shown(value)}{tail}"
        )
    return number


# -- confidence sequences (confidence_sequence) ----------------------------------------------


#: What a confidence sequence estimates: the population the clusters are drawn from
#: ("documents like these"), or this benchmark's own full-run score, its known list of
#: clusters arriving in a random order without replacement.
TARGETS: tuple[str, ...] = ("population", "benchmark")


@dataclass(frozen=True)
class SequenceOptions:
    """Options of ``confidence_sequence``."""

    method: str = "betting_mixture"
    target: str = "population"
    benchmark_clusters: int | None = None
    benchmark_rows: float | None = None
    estimand: str = "pooled"
    confidence: float = 0.95
    bounds: tuple[float, float] | None = None
    max_cluster_size: float | None = None
    cluster_size: int | None = None
    missing: str = "drop"
    rng: Seed = Seed(None)
    breaks: int = 1000


def sequence_options(
    *,
    method: Any = "betting_mixture",
    target: Any = "population",
    benchmark_clusters: Any = None,
    benchmark_rows: Any = None,
    estimand: Any = "pooled",
    confidence: Any = 0.95,
    bounds: Any = None,
    max_cluster_size: Any = None,
    cluster_size: Any = None,
    missing: Any = "drop",
    rng: Any = None,
    breaks: Any = 1000,
) -> SequenceOptions:
    """Validate the options of ``confidence_sequence``."""
    check_choice("method", method, tuple(SEQUENCE_METHODS))
    check_choice("target", target, TARGETS)
    clusters = rows = None
    if target != "benchmark" and (benchmark_clusters is not None or benchmark_rows is not None):
        raise InvalidOptionError(
            "benchmark_clusters= and benchmark_rows= go with target='benchmark'"
        )
    if benchmark_clusters is not None:
        clusters = int(
            check_plan_number("benchmark_clusters", benchmark_clusters, at_least=1, whole=True)
        )
    if benchmark_rows is not None:
        rows = check_plan_number("benchmark_rows", benchmark_rows, at_least=1, whole=True)
    level = check_confidence(confidence)
    check_choice("estimand", estimand, ESTIMANDS)
    check_choice("missing", missing, MISSING)
    checked_bounds = None
    if bounds is not None:
        if not isinstance(bounds, (list, tuple)) or len(bounds) != 2:
            raise InvalidOptionError(
                f"bounds must be (low, high), the range every outcome lies in, got {bounds!r}"
            )
        low = check_plan_number("bounds[0]", bounds[0])
        high = check_plan_number("bounds[1]", bounds[1], above=low, why="(low, high)")
        checked_bounds = (low, high)
    largest = None
    if max_cluster_size is not None:
        largest = check_plan_number("max_cluster_size", max_cluster_size, at_least=1)
    size = None
    if cluster_size is not None:
        size = int(check_plan_number("cluster_size", cluster_size, at_least=1, whole=True))
    grid = int(check_plan_number("breaks", breaks, at_least=10, at_most=100_000, whole=True))
    return SequenceOptions(
        method=method,
        target=target,
        benchmark_clusters=clusters,
        benchmark_rows=rows,
        estimand=estimand,
        confidence=level,
        bounds=checked_bounds,
        max_cluster_size=largest,
        cluster_size=size,
        missing=missing,
        rng=check_seed(rng),
        breaks=grid,
    )


@dataclass(frozen=True)
class JudgedOptions:
    """Options of ``judged_ci``."""

    estimand: str = "pooled"
    target: str = "population"
    weight: float | str = "auto"
    method: str = "cr2"
    confidence: float = 0.95
    nest: bool = False
    n_resamples: int = 9999
    rng: Seed = Seed(None)


def judged_options(
    columns: Columns,
    *,
    estimand: Any,
    target: Any,
    weight: Any,
    method: Any,
    confidence: Any,
    nest: Any,
    n_resamples: Any = 9999,
    rng: Any = None,
) -> JudgedOptions:
    """``judged_ci``'s options, checked before any data is read."""
    if columns.judge is None:
        raise InvalidOptionError("judge= names the column of the judge's scores; it is required")
    if isinstance(weight, str):
        check_choice("weight", weight, ("auto", "tuned", "cross-fitted"))
    elif isinstance(weight, bool) or not isinstance(weight, (int, float, np.number)):
        raise InvalidOptionError(
            f"weight must be 'auto', 'tuned', 'cross-fitted' or a number, got {shown(weight)}"
        )
    elif not math.isfinite(float(weight)):
        raise InvalidOptionError(f"weight must be a finite number, got {shown(weight)}")
    method = check_choice("method", method, JUDGED_METHODS)
    target = check_choice("target", target, TARGETS)
    if method in ("glide", "ppi_py"):
        if target == "benchmark":
            raise InvalidOptionError(
                f"method={method!r} (that peer's construction) estimates the population; "
                "target='benchmark' needs method='cr2' or 'cr1'"
            )
        if columns.inclusion is not None or columns.strata is not None:
            raise InvalidOptionError(
                f"method={method!r} (that peer's construction) takes no inclusion= or "
                "strata=; use method='cr2' or 'cr1'"
            )
    if method == "bootstrap":
        # The draws resample clusters with replacement: they estimate the spread over
        # populations of clusters, not that of a labelling of these fixed clusters.
        if target == "benchmark":
            raise InvalidOptionError(
                "method='bootstrap' draws clusters with replacement, which estimates the "
                "population's variance; target='benchmark' is a labelling of this run's own "
                "clusters, drawn without replacement: use method='cr2' or 'cr1' for it"
            )
        if columns.inclusion is not None:
            raise InvalidOptionError(
                "method='bootstrap' draws the labelled clusters as the counts show them (a "
                "simple random sample in each stratum); with inclusion= (stated "
                "probabilities) use method='cr2' or 'cr1'"
            )
    estimand = check_choice("estimand", estimand, ("pooled", "cluster_mean"))
    level = check_confidence(confidence)
    return JudgedOptions(
        estimand=estimand,
        target=target,
        weight=weight if isinstance(weight, str) else float(weight),
        method=method,
        confidence=level,
        nest=check_flag("nest", nest),
        n_resamples=check_n_resamples(n_resamples, level, resampling=method == "bootstrap"),
        rng=check_seed(rng),
    )


#: The interval methods of a judged leaderboard: the two-phase variance with CR2's or CR1's
#: small-sample correction (the peers' constructions have no paired form).
JUDGED_COMPARE_METHODS: tuple[str, ...] = ("cr2", "cr1")


@dataclass(frozen=True)
class JudgedCompareOptions:
    """Options of ``judged_compare``: those of ``judged_ci`` for every score and every pair,
    and those of the leaderboard."""

    judged: JudgedOptions
    how: str = "strict"
    adjust: str = "holm"
    rank_method: str = "guarded"
    top: int = 1
    orientation: str = "as_given"


def judged_compare_options(
    columns: Columns,
    *,
    how: Any,
    adjust: Any,
    rank_method: Any,
    top: Any,
    orientation: Any,
    **judged: Any,
) -> JudgedCompareOptions:
    """``judged_compare``'s options, checked before any data is read (``judged``: the options
    it shares with ``judged_ci``; its ``n_resamples`` and ``rng`` draw the rank sets' critical
    values)."""
    if columns.model is None:
        raise InvalidOptionError("model= names the column of the models; it is required")
    options = judged_options(columns, **judged)
    check_choice("method", options.method, JUDGED_COMPARE_METHODS)
    check_n_resamples(options.n_resamples, options.confidence)  # the rank sets always draw
    if rank_method == "bootstrap":
        raise InvalidOptionError(
            "rank_method='bootstrap' has no judged form (a judge's weight is tuned per pair); "
            "use 'auto' (= 'guarded'), 't' or 'normal'"
        )
    check_choice("rank_method", rank_method, RANK_METHODS)
    if isinstance(top, bool) or not isinstance(top, (int, np.integer)) or top < 1:
        raise InvalidOptionError(f"top must be a whole number of places, 1 or more; got {top!r}")
    return JudgedCompareOptions(
        judged=options,
        how=check_choice("how", how, ALIGNMENTS),
        adjust=check_choice("adjust", adjust, ADJUSTMENTS),
        rank_method="guarded" if rank_method == "auto" else rank_method,
        top=int(top),
        orientation=check_choice("orientation", orientation, ORIENTATIONS),
    )
