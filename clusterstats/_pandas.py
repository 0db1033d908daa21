"""The ``DataFrame.eval`` accessor.

pandas already has ``DataFrame.eval``, and ``DataFrame.query`` works by calling
``self.eval(...)``. The accessor therefore stays callable: ``df.eval("c = a + b")`` forwards to
the original method (one stack level deeper, so ``@local`` variables still resolve), while
``df.eval.cluster_ci(...)`` and friends delegate to the functional API. It holds no state.
"""

from __future__ import annotations

import warnings
from typing import Any

import pandas as pd

from clusterstats import api, diagnostics, planning, reruns

# Captured before registration replaces the attribute.
_ORIGINAL_EVAL = pd.DataFrame.eval


class EvalAccessor:
    """Clustered statistics on a DataFrame (``df.eval.cluster_ci(...)``), and pandas' own
    ``DataFrame.eval`` when called (``df.eval("c = a + b")``)."""

    __slots__ = ("_obj",)

    def __init__(self, pandas_obj: pd.DataFrame) -> None:
        self._obj = pandas_obj

    def __call__(self, expr: str, *args: Any, **kwargs: Any) -> Any:
        """pandas' own :meth:`pandas.DataFrame.eval`, unchanged (``df.query`` relies on it)."""
        # pandas finds ``@local`` names ``level`` frames above DataFrame.eval; this call adds one.
        kwargs["level"] = kwargs.pop("level", 0) + 1
        return _ORIGINAL_EVAL(self._obj, expr, *args, **kwargs)

    def cluster_ci(self, outcome, by, **options) -> Any:
        """Clustered confidence interval of the mean; see :func:`clusterstats.cluster_ci`."""
        return api.cluster_ci(self._obj, outcome, by, **options)

    def icc(self, outcome, by, **options) -> Any:
        """Intraclass correlation; see :func:`clusterstats.icc`."""
        return api.icc(self._obj, outcome, by, **options)

    def paired_delta(self, other, outcome, by, **options) -> Any:
        """Paired difference with ``other`` (a frame, or a column); see
        :func:`clusterstats.paired_delta`."""
        return api.paired_delta(self._obj, other, outcome, by, **options)

    def compare(self, outcome, by, **options) -> Any:
        """Many models on shared items; see :func:`clusterstats.compare`."""
        return api.compare(self._obj, outcome, by, **options)

    def design_effect(self, outcome, by, **options) -> Any:
        """Design effect and effective n; see :func:`clusterstats.design_effect`."""
        return api.design_effect(self._obj, outcome, by, **options)

    def missing_report(self, outcome, by, **options) -> Any:
        """Where outcomes are missing, why, and how much it matters; see
        :func:`clusterstats.missing_report`."""
        return api.missing_report(self._obj, outcome, by, **options)

    def stratum_table(self, outcome, by, **options) -> Any:
        """Per-stratum and overall estimates; see :func:`clusterstats.stratum_table`."""
        return api.stratum_table(self._obj, outcome, by, **options)

    def plan(self, outcome, by, **options) -> Any:
        """Plan the next budget from this pilot; see :func:`clusterstats.pilot_plan`."""
        return planning.pilot_plan(self._obj, outcome, by, **options)

    def report(self, outcome, by, **options) -> Any:
        """What to report about the result; see :func:`clusterstats.report`."""
        return diagnostics.report(self._obj, outcome, by, **options)

    def check_clustering(self, outcome, candidates=(), **options) -> Any:
        """Which grouping to cluster by; see :func:`clusterstats.check_clustering`."""
        return diagnostics.check_clustering(self._obj, outcome, candidates, **options)

    def pass_at_k(self, outcome, **options) -> Any:
        """pass@k of cases run several times (``case=``, ``rerun=`` columns); see
        :func:`clusterstats.pass_at_k`."""
        return reruns.pass_at_k(self._obj, outcome, **options)

    def pass_hat_k(self, outcome, **options) -> Any:
        """pass^k of cases run several times; see :func:`clusterstats.pass_hat_k`."""
        return reruns.pass_hat_k(self._obj, outcome, **options)

    def flakiness(self, outcome, **options) -> Any:
        """Flaky cases and the worth of a rerun; see :func:`clusterstats.flakiness`."""
        return reruns.flakiness(self._obj, outcome, **options)


def register() -> None:
    with warnings.catch_warnings():
        # pandas warns that the name shadows DataFrame.eval: that is intended (see above).
        warnings.filterwarnings(
            "ignore", message=".*overriding a preexisting attribute", category=UserWarning
        )
        pd.api.extensions.register_dataframe_accessor("eval")(EvalAccessor)
