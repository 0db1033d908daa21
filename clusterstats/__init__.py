"""clusterstats: honest error bars for evaluation results whose rows are not independent.

Importing the package registers the ``.eval`` accessor on pandas DataFrames, xarray Datasets
and dask DataFrames (callable, so that their own ``eval`` keeps working)::

    import clusterstats
    df.eval.cluster_ci("passed", by="doc_id")
"""

import importlib
import importlib.util
from typing import TYPE_CHECKING, Any

from clusterstats import _accessors, datasets
from clusterstats.datasets import load_demo_data
from clusterstats.errors import (
    AlignmentError,
    ClusterStatsError,
    ClusterStatsWarning,
    ColumnNotFoundError,
    DegenerateDataError,
    DegenerateDataWarning,
    DimensionError,
    EmptyDataError,
    FewClustersWarning,
    FileReadError,
    GroupNotFoundError,
    IncompleteLogWarning,
    InvalidClusterError,
    InvalidDataError,
    InvalidInputError,
    InvalidOptionError,
    InvalidOutcomeError,
    JudgeScaleWarning,
    MetricKeyError,
    MissingOutcomeError,
    MixedMetricsWarning,
    OverBudgetWarning,
    RepeatedItemsWarning,
    SingletonClustersWarning,
    SupersededRunWarning,
    TooFewClustersError,
)

if TYPE_CHECKING:  # what the names below are, for type checkers and editors
    from clusterstats.api import (
        adjusted_wilson_interval,
        check_clustering,
        cluster_ci,
        compare,
        confidence_sequence,
        design_effect,
        effective_n,
        flakiness,
        gate,
        icc,
        judged_ci,
        judged_compare,
        judged_delta,
        judged_plan,
        kish_design_effect,
        missing_report,
        paired_delta,
        pass_at_k,
        pass_hat_k,
        pilot_plan,
        plan,
        report,
        rule_of_three,
        sequence_plan,
        stratum_table,
        to_case_rerun,
        wilson_interval,
    )
    from clusterstats.harness import lm_eval_table
    from clusterstats.readers import read_inspect, read_lm_eval, read_lm_eval_results
    from clusterstats.results import (
        ICC,
        ClusterCI,
        ClusteringCheck,
        Comparison,
        ConfidenceSequence,
        DesignEffect,
        Flakiness,
        Gate,
        GateReport,
        GroupedResults,
        JudgedCI,
        LabelPlan,
        LmEvalTable,
        MissingReport,
        PairedDelta,
        PassAtK,
        Plan,
        Report,
        SequencePlan,
        SliceComparison,
    )
    from clusterstats.stats.mixing import weights_for_mix
    from clusterstats.synthetic import simulate

# The statistics, results and readers are imported when one of their names is first looked
# up: ``import clusterstats`` then costs the accessors and the errors only (see
# benchmarks/startup.py), and the first call pays for the module it uses.
_DEFERRED = {
    "clusterstats.api": (
        "adjusted_wilson_interval", "check_clustering", "cluster_ci", "compare",
        "confidence_sequence", "design_effect", "effective_n", "flakiness", "gate", "icc",
        "judged_ci", "judged_compare", "judged_delta", "judged_plan", "kish_design_effect",
        "missing_report",
        "paired_delta", "pass_at_k", "pass_hat_k", "pilot_plan", "plan", "report",
        "rule_of_three", "sequence_plan", "stratum_table", "to_case_rerun", "wilson_interval",
    ),
    "clusterstats.harness": ("lm_eval_table",),
    "clusterstats.readers": ("read_inspect", "read_lm_eval", "read_lm_eval_results"),
    "clusterstats.results": (
        "ICC", "ClusterCI", "ClusteringCheck", "Comparison", "ConfidenceSequence",
        "DesignEffect", "Flakiness",
        "Gate", "GateReport", "GroupedResults", "JudgedCI", "LabelPlan", "LmEvalTable",
        "MissingReport",
        "PairedDelta", "PassAtK", "Plan", "Report", "SequencePlan", "SliceComparison",
    ),
    "clusterstats.synthetic": ("simulate",),
    "clusterstats.stats.mixing": ("weights_for_mix",),
}  # fmt: skip
_MODULE_OF = {name: module for module, names in _DEFERRED.items() for name in names}


def __getattr__(name: str) -> Any:
    """A public name of a module not yet imported (PEP 562), or a subpackage such as
    ``clusterstats.api``."""
    module = _MODULE_OF.get(name)
    if module is not None:
        value = getattr(importlib.import_module(module), name)
        globals()[name] = value
        return value
    if not name.startswith("__") and importlib.util.find_spec(f"{__name__}.{name}"):
        return importlib.import_module(f"{__name__}.{name}")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))


__version__ = "0.1.0"

__all__ = [
    "ICC",
    "AlignmentError",
    "ClusterCI",
    "ClusterStatsError",
    "ClusterStatsWarning",
    "ClusteringCheck",
    "ColumnNotFoundError",
    "Comparison",
    "ConfidenceSequence",
    "DegenerateDataError",
    "DegenerateDataWarning",
    "DesignEffect",
    "DimensionError",
    "EmptyDataError",
    "FewClustersWarning",
    "FileReadError",
    "Flakiness",
    "Gate",
    "GateReport",
    "GroupNotFoundError",
    "GroupedResults",
    "IncompleteLogWarning",
    "InvalidClusterError",
    "InvalidDataError",
    "InvalidInputError",
    "InvalidOptionError",
    "InvalidOutcomeError",
    "JudgeScaleWarning",
    "JudgedCI",
    "LabelPlan",
    "LmEvalTable",
    "MetricKeyError",
    "MissingOutcomeError",
    "MissingReport",
    "MixedMetricsWarning",
    "OverBudgetWarning",
    "PairedDelta",
    "PassAtK",
    "Plan",
    "RepeatedItemsWarning",
    "Report",
    "SequencePlan",
    "SingletonClustersWarning",
    "SliceComparison",
    "SupersededRunWarning",
    "TooFewClustersError",
    "adjusted_wilson_interval",
    "check_clustering",
    "cluster_ci",
    "compare",
    "confidence_sequence",
    "datasets",
    "design_effect",
    "effective_n",
    "flakiness",
    "gate",
    "icc",
    "judged_ci",
    "judged_compare",
    "judged_delta",
    "judged_plan",
    "kish_design_effect",
    "lm_eval_table",
    "load_demo_data",
    "missing_report",
    "paired_delta",
    "pass_at_k",
    "pass_hat_k",
    "pilot_plan",
    "plan",
    "read_inspect",
    "read_lm_eval",
    "read_lm_eval_results",
    "report",
    "rule_of_three",
    "sequence_plan",
    "simulate",
    "stratum_table",
    "to_case_rerun",
    "weights_for_mix",
    "wilson_interval",
]

_accessors.register()
