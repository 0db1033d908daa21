"""Every result class, re-exported from the module of the function that makes it (a facade:
only imports). One frozen dataclass per concept, the same from every entry point; see
:mod:`clusterstats._result` for what they share."""

from clusterstats._result import GroupedResults
from clusterstats.comparison import Comparison
from clusterstats.datasets import DatasetInfo
from clusterstats.diagnostics import ClusteringCheck, Report
from clusterstats.gating import Gate, GateReport
from clusterstats.harness import LmEvalTable
from clusterstats.mean import ICC, ClusterCI, DesignEffect
from clusterstats.missing import MissingReport
from clusterstats.paired import PairedDelta
from clusterstats.planning import Plan
from clusterstats.reruns import Flakiness, PassAtK

__all__ = [
    "ICC",
    "ClusterCI",
    "ClusteringCheck",
    "Comparison",
    "DatasetInfo",
    "DesignEffect",
    "Flakiness",
    "Gate",
    "GateReport",
    "GroupedResults",
    "LmEvalTable",
    "MissingReport",
    "PairedDelta",
    "PassAtK",
    "Plan",
    "Report",
]
