"""Plots (matplotlib is an optional extra, imported only when a plot is drawn)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from clusterstats.core.planning import effective_n

INSTALL_HINT = "plots need matplotlib, an optional extra: pip install 'clusterstats[plot]'"


def require_pyplot() -> Any:
    """``matplotlib.pyplot``, or an ImportError that says how to install it."""
    try:
        import matplotlib.pyplot as plt
    except ImportError as error:  # pragma: no cover - exercised without matplotlib
        raise ImportError(INSTALL_HINT) from error
    return plt


def _axes(ax: Any, height: float) -> Any:
    if ax is not None:
        return ax
    plt = require_pyplot()
    _, ax = plt.subplots(figsize=(6.4, max(1.6, height)))
    return ax


def forest(
    labels: Sequence[str],
    estimates: Sequence[float],
    lows: Sequence[float],
    highs: Sequence[float],
    naive_lows: Sequence[float],
    naive_highs: Sequence[float],
    *,
    title: str,
    ax: Any = None,
) -> Any:
    """One row per group: the clustered interval (thick) above the naive one (thin)."""
    ax = _axes(ax, 0.45 * len(labels) + 1.0)
    rows = list(range(len(labels)))[::-1]
    for y, est, lo, hi, nlo, nhi in zip(
        rows, estimates, lows, highs, naive_lows, naive_highs, strict=True
    ):
        ax.plot([lo, hi], [y + 0.12, y + 0.12], color="C0", linewidth=3, solid_capstyle="butt")
        ax.plot([nlo, nhi], [y - 0.12, y - 0.12], color="C7", linewidth=1.2)
        ax.plot([est], [y + 0.12], marker="o", color="C0", markersize=5)
    ax.set_yticks(rows)
    ax.set_yticklabels(list(labels))
    ax.set_ylim(-0.7, len(labels) - 0.3)
    ax.plot([], [], color="C0", linewidth=3, label="clustered")
    ax.plot([], [], color="C7", linewidth=1.2, label="naive (rows independent)")
    ax.legend(loc="best", fontsize="small", frameon=False)
    ax.set_title(title, fontsize="medium")
    ax.grid(axis="x", alpha=0.3)
    return ax


def budget_curve(
    n_clusters: float, cluster_size: float, icc: float, *, title: str, ax: Any = None
) -> Any:
    """Effective n against rows per cluster: for the current clusters (approaching the
    ceiling K/ρ) and for the current total rows spread over fewer, deeper clusters."""

    ax = _axes(ax, 3.6)
    top = max(4.0 * cluster_size, 20.0)
    m = np.linspace(1.0, top, 400)
    total = n_clusters * cluster_size
    ax.plot(m, effective_n(n_clusters, m, icc), color="C0", label=f"{n_clusters:g} clusters")
    ax.plot(m, effective_n(total / m, m, icc), color="C1", label=f"{total:g} rows in total")
    if icc > 0:
        ax.axhline(n_clusters / icc, color="C0", linestyle="--", linewidth=1, label="ceiling K/ρ")
    ax.plot(
        [cluster_size],
        [effective_n(n_clusters, cluster_size, icc)],
        marker="o",
        color="black",
        label="current design",
    )
    ax.set_xlabel("rows per cluster (m)")
    ax.set_ylabel("effective n")
    ax.set_title(title, fontsize="medium")
    ax.legend(loc="best", fontsize="small", frameon=False)
    ax.grid(alpha=0.3)
    return ax
