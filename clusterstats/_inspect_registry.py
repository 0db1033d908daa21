"""The ``inspect_ai`` entry point: importing it registers clusterstats' Inspect components
(``clusterstats/cluster_ci``, ``clusterstats/paired_delta``), so that Inspect finds them by
name, e.g. when it recomputes the metrics of a log that uses them."""

from clusterstats.inspect import cluster_ci, paired_delta

__all__ = ["cluster_ci", "paired_delta"]
