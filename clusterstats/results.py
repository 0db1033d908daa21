"""Every result class, re-exported from the module of the function that makes it (a facade:
only imports). One frozen dataclass per concept, the same from every entry point; see
:mod:`clusterstats._result` for what they share."""

from clusterstats._result import GroupedResults
from clusterstats.datasets import DatasetInfo
from clusterstats.gating import Gate, GateReport
from clusterstats.harness import LmEvalTable
from clusterstats.stats.comparison import Comparison
from clusterstats.stats.diagnostics import ClusteringCheck, Report
from clusterstats.stats.judged import JudgedCI
from clusterstats.stats.judged_plan import LabelPlan
from clusterstats.stats.mean import ICC, ClusterCI, DesignEffect
from clusterstats.stats.missing import MissingReport
from clusterstats.stats.paired import PairedDelta
from clusterstats.stats.planning import Plan
from clusterstats.stats.reruns import Flakiness, PassAtK
from clusterstats.stats.sequential import ConfidenceSequence, SequencePlan
from clusterstats.stats.slices import SliceComparison

__all__ = [
    "ICC",
    "ClusterCI",
    "ClusteringCheck",
    "Comparison",
    "ConfidenceSequence",
    "DatasetInfo",
    "DesignEffect",
    "Flakiness",
    "Gate",
    "GateReport",
    "GroupedResults",
    "JudgedCI",
    "LabelPlan",
    "LmEvalTable",
    "MissingReport",
    "PairedDelta",
    "PassAtK",
    "Plan",
    "Report",
    "SequencePlan",
    "SliceComparison",
]
