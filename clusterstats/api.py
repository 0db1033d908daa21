"""The typed functional API, re-exported from the modules that define it (a facade: only
imports). Each function takes a pandas DataFrame, an xarray Dataset laid out as (case, rerun),
a dask DataFrame, or (where it makes sense) plain arrays."""

from clusterstats.gating import gate
from clusterstats.stats.diagnostics import check_clustering, report
from clusterstats.stats.formulas import (
    adjusted_wilson_interval,
    effective_n,
    kish_design_effect,
    rule_of_three,
    wilson_interval,
)
from clusterstats.stats.judged import judged_ci, judged_delta
from clusterstats.stats.judged_compare import judged_compare
from clusterstats.stats.judged_plan import judged_plan
from clusterstats.stats.mean import cluster_ci, design_effect, icc
from clusterstats.stats.missing import missing_report
from clusterstats.stats.paired import paired_delta
from clusterstats.stats.planning import pilot_plan, plan
from clusterstats.stats.reruns import flakiness, pass_at_k, pass_hat_k, to_case_rerun
from clusterstats.stats.sequential import confidence_sequence, sequence_plan
from clusterstats.stats.slices import compare
from clusterstats.stats.strata import stratum_table

__all__ = [
    "adjusted_wilson_interval",
    "check_clustering",
    "cluster_ci",
    "compare",
    "confidence_sequence",
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
    "missing_report",
    "paired_delta",
    "pass_at_k",
    "pass_hat_k",
    "pilot_plan",
    "plan",
    "report",
    "rule_of_three",
    "sequence_plan",
    "stratum_table",
    "to_case_rerun",
    "wilson_interval",
]
