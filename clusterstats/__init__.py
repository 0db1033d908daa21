"""clusterstats: honest error bars for evaluation results whose rows are not independent.

Importing the package registers the ``.eval`` accessor on pandas DataFrames, xarray Datasets
and dask DataFrames (callable, so that their own ``eval`` keeps working)::

    import clusterstats
    df.eval.cluster_ci("passed", by="doc_id")
"""

from clusterstats import _accessors, datasets
from clusterstats.api import (
    adjusted_wilson_interval,
    check_clustering,
    cluster_ci,
    compare,
    design_effect,
    effective_n,
    flakiness,
    icc,
    kish_design_effect,
    missing_report,
    paired_delta,
    pass_at_k,
    pass_hat_k,
    pilot_plan,
    plan,
    report,
    rule_of_three,
    stratum_table,
    to_case_rerun,
    wilson_interval,
)
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
    InvalidClusterError,
    InvalidDataError,
    InvalidInputError,
    InvalidOptionError,
    InvalidOutcomeError,
    MissingOutcomeError,
    TooFewClustersError,
)
from clusterstats.readers import read_inspect, read_lm_eval
from clusterstats.results import (
    ICC,
    ClusterCI,
    ClusteringCheck,
    Comparison,
    DesignEffect,
    Flakiness,
    GroupedResults,
    MissingReport,
    PairedDelta,
    PassAtK,
    Plan,
    Report,
)
from clusterstats.simulate import simulate

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
    "DegenerateDataError",
    "DegenerateDataWarning",
    "DesignEffect",
    "DimensionError",
    "EmptyDataError",
    "FewClustersWarning",
    "FileReadError",
    "Flakiness",
    "GroupNotFoundError",
    "GroupedResults",
    "InvalidClusterError",
    "InvalidDataError",
    "InvalidInputError",
    "InvalidOptionError",
    "InvalidOutcomeError",
    "MissingOutcomeError",
    "MissingReport",
    "PairedDelta",
    "PassAtK",
    "Plan",
    "Report",
    "TooFewClustersError",
    "adjusted_wilson_interval",
    "check_clustering",
    "cluster_ci",
    "compare",
    "datasets",
    "design_effect",
    "effective_n",
    "flakiness",
    "icc",
    "kish_design_effect",
    "load_demo_data",
    "missing_report",
    "paired_delta",
    "pass_at_k",
    "pass_hat_k",
    "pilot_plan",
    "plan",
    "read_inspect",
    "read_lm_eval",
    "report",
    "rule_of_three",
    "simulate",
    "stratum_table",
    "to_case_rerun",
    "wilson_interval",
]

_accessors.register()
