"""Plots (matplotlib is an optional extra, imported only when a plot is drawn).

Every plot follows the same conventions, so that a figure pasted into a report reads without
its code: a short title a person would write (long ones wrap onto a second and third line,
and only then end in an ellipsis), an
axis that says what is measured (the outcome, the estimand, the confidence), rates as
percentages, counts with thousands separators, and the clustered interval drawn strong with
the naive one (rows taken as independent) faint beside it.
"""

from __future__ import annotations

import math
import textwrap
from collections.abc import Sequence
from typing import Any, Literal

import numpy as np

from clusterstats.core.planning import effective_n
from clusterstats.errors import InvalidOptionError

INSTALL_HINT = "plots need matplotlib, an optional extra: pip install 'clusterstats[plot]'"

#: The longest line of a title; longer titles wrap, up to :data:`TITLE_LINES` lines, and only
#: a title longer than that ends in an ellipsis.
TITLE_LENGTH = 60
TITLE_LINES = 3
CLUSTERED, NAIVE, MARGIN = "C0", "0.6", "C3"
Order = Literal["estimate", "label"]


def require_pyplot() -> Any:
    """``matplotlib.pyplot``, or an ImportError that says how to install it."""
    try:
        import matplotlib.pyplot as plt
    except ImportError as error:  # pragma: no cover - exercised without matplotlib
        raise ImportError(INSTALL_HINT) from error
    return plt


def _axes(ax: Any, height: float, width: float = 6.4) -> Any:
    plt = require_pyplot()
    if ax is not None:
        from matplotlib.axes import Axes

        if not isinstance(ax, Axes):
            raise InvalidOptionError(
                f"ax must be a matplotlib Axes (plt.subplots()[1]), got {type(ax).__name__}"
            )
        return ax
    _, ax = plt.subplots(figsize=(width, max(1.8, height)))
    return ax


def short_title(text: str) -> str:
    """``text`` wrapped at word boundaries into lines of at most :data:`TITLE_LENGTH`
    characters; past :data:`TITLE_LINES` lines the last one ends in an ellipsis."""
    lines = textwrap.wrap(text, TITLE_LENGTH) or [""]
    if len(lines) > TITLE_LINES:
        last = lines[TITLE_LINES - 1]
        lines = [*lines[: TITLE_LINES - 1], last[: TITLE_LENGTH - 1].rstrip() + "…"]
    return "\n".join(lines)


def _flag(name: str, value: Any) -> bool:
    """A True/False option of a plot, refused when it is anything else (``"no"`` is true)."""
    if not isinstance(value, (bool, np.bool_)):
        raise InvalidOptionError(f"{name} must be True or False, got {value!r}")
    return bool(value)


def is_rate(values: Sequence[float], percent: bool | None) -> bool:
    """Whether to show ``values`` as percentages: ``percent`` when given, else whether every
    finite value lies in [0, 1] (a pass rate and its bounds)."""
    if percent is not None:
        return _flag("percent", percent)
    finite = [v for v in values if v is not None and math.isfinite(v)]
    return bool(finite) and all(0.0 <= v <= 1.0 for v in finite)


def value_text(value: float, rate: bool, *, points: bool = False) -> str:
    """A value as drawn on a bar: ``72.4%`` for a rate (``+3.1 pts`` for a difference of
    rates), else four significant digits with thousands separators."""
    if not math.isfinite(value):
        return "n/a"
    if rate:
        return f"{100 * value:+.1f} pts" if points else f"{100 * value:.1f}%"
    return f"{value:+,.4g}" if points else f"{value:,.4g}"


def _value_axis(ax: Any, rate: bool, label: str, *, points: bool = False) -> None:
    """Label the value axis (x); rates as percentages, differences of rates in percentage
    points, other values with thousands separators."""
    from matplotlib.ticker import FuncFormatter, PercentFormatter

    target = ax.xaxis
    if points:
        target.set_major_formatter(FuncFormatter(lambda v, _: f"{100 * v:+.0f} pts"))
    elif rate:
        target.set_major_formatter(PercentFormatter(1.0, decimals=None))
    else:
        target.set_major_formatter(FuncFormatter(lambda v, _: f"{v:,.4g}"))
    ax.set_xlabel(label)


def sorted_rows(labels: Sequence[str], estimates: Sequence[float], order: Order) -> list[int]:
    """The positions of the rows from the top of the plot down: highest estimate first, or
    the labels' own order."""
    if order not in ("estimate", "label"):
        raise InvalidOptionError(f"order must be 'estimate' or 'label', got {order!r}")
    positions = list(range(len(labels)))
    if order == "estimate":
        positions.sort(key=lambda i: -estimates[i] if math.isfinite(estimates[i]) else math.inf)
    return positions


def forest(
    labels: Sequence[str],
    estimates: Sequence[float],
    lows: Sequence[float],
    highs: Sequence[float],
    naive_lows: Sequence[float] | None,
    naive_highs: Sequence[float] | None,
    *,
    title: str,
    xlabel: str,
    order: Order = "estimate",
    values: bool = False,
    percent: bool | None = None,
    notes: Sequence[str] | None = None,
    reference: float | None = None,
    points: bool = False,
    groups: Sequence[Any] | None = None,
    ax: Any = None,
) -> Any:
    """One row per label, highest estimate at the top (``order="label"`` keeps the given
    order): the clustered interval (thick, with its estimate) above the naive one (thin and
    faint, when given). ``values`` prints each estimate on its row; ``notes`` adds a text
    per row at the right (e.g. a rank set); ``reference`` draws a vertical line;
    ``points`` shows differences of rates in percentage points; ``groups`` (one key per
    label, e.g. a tier) draws a dashed line between neighbouring rows of different keys."""
    rate = False if points else is_rate([*estimates, *lows, *highs], percent)
    rows = sorted_rows(labels, estimates, order)
    values = _flag("values", values)
    ax = _axes(ax, 0.42 * len(labels) + 1.3)
    naive = naive_lows is not None and naive_highs is not None
    lift = 0.12 if naive else 0.0
    for place, i in enumerate(rows):
        y = len(rows) - 1 - place
        ax.plot([lows[i], highs[i]], [y + lift] * 2, color=CLUSTERED, lw=3, solid_capstyle="butt")
        ax.plot([estimates[i]], [y + lift], marker="o", color=CLUSTERED, markersize=5)
        if naive:
            ax.plot([naive_lows[i], naive_highs[i]], [y - lift] * 2, color=NAIVE, lw=1.2)
        if values:
            ax.annotate(
                value_text(estimates[i], rate or points, points=points),
                (estimates[i], y + lift),
                xytext=(0, 5),
                textcoords="offset points",
                ha="center",
                fontsize="small",
            )
        if notes is not None:
            ax.annotate(
                notes[i],
                (1.0, y),
                xycoords=("axes fraction", "data"),
                xytext=(6, 0),
                textcoords="offset points",
                va="center",
                fontsize="small",
            )
    if groups is not None:
        for place in range(1, len(rows)):
            if groups[rows[place]] != groups[rows[place - 1]]:
                ax.axhline(len(rows) - place - 0.5, color="0.55", lw=0.8, ls="--")
    ax.set_yticks(range(len(rows)))
    ax.set_yticklabels([labels[i] for i in reversed(rows)])
    ax.set_ylim(-0.7, len(rows) - 0.3)
    if reference is not None:
        ax.axvline(reference, color="0.3", lw=0.8)
    ax.plot([], [], color=CLUSTERED, lw=3, label="clustered")
    if naive:
        ax.plot([], [], color=NAIVE, lw=1.2, label="naive (rows independent)")
    ax.legend(loc="best", fontsize="small", frameon=False)
    _value_axis(ax, rate, xlabel, points=points)
    ax.set_title(short_title(title), fontsize="medium")
    ax.grid(axis="x", alpha=0.3)
    return ax


def intervals_forest(
    results: Sequence[Any],
    labels: Sequence[str],
    *,
    title: str,
    order: Order = "estimate",
    values: bool = False,
    percent: bool | None = None,
    ax: Any = None,
) -> Any:
    """:func:`forest` of ``cluster_ci`` results, one row per label, each with its naive
    interval; the value axis says what the first result measures."""
    return forest(
        labels,
        [r.estimate for r in results],
        [r.low for r in results],
        [r.high for r in results],
        [r.naive_low for r in results],
        [r.naive_high for r in results],
        title=title,
        xlabel=results[0]._value_label(),
        order=order,
        values=values,
        percent=percent,
        ax=ax,
    )


def paired_difference(
    *,
    delta: float,
    low: float,
    high: float,
    naive_low: float,
    naive_high: float,
    label: str,
    xlabel: str,
    title: str,
    margin: float | None = None,
    percent: bool | None = None,
    ax: Any = None,
) -> Any:
    """One paired difference: its clustered interval and the naive one, zero, and (with
    ``margin``) the gate's margin on both sides of zero."""
    # a difference of two rates lies in [-1, 1]; shown in percentage points
    rate = is_rate([abs(delta), abs(low), abs(high)], percent)
    ax = _axes(ax, 2.4, width=7.2)
    ax.axvline(0.0, color="0.3", lw=0.8, label="no difference")
    if margin is not None:
        for side in (-margin, margin):
            ax.axvline(side, color=MARGIN, lw=1, linestyle="--")
        shown = f"{100 * margin:.1f} pts" if rate else f"{margin:,.4g}"
        ax.plot([], [], color=MARGIN, lw=1, linestyle="--", label=f"margin ±{shown}")
    ax.plot([low, high], [0.12, 0.12], color=CLUSTERED, lw=3, solid_capstyle="butt")
    ax.plot([delta], [0.12], marker="o", color=CLUSTERED, markersize=6)
    ax.plot([naive_low, naive_high], [-0.12, -0.12], color=NAIVE, lw=1.2)
    ax.annotate(
        value_text(delta, rate, points=True),
        (delta, 0.12),
        xytext=(0, 6),
        textcoords="offset points",
        ha="center",
        fontsize="small",
    )
    ax.set_yticks([0])
    ax.set_yticklabels([label])
    ax.set_ylim(-0.6, 0.6)
    ax.plot([], [], color=CLUSTERED, lw=3, label="clustered")
    ax.plot([], [], color=NAIVE, lw=1.2, label="naive (items independent)")
    # below the axis: inside it, the legend would cover the intervals
    ax.legend(
        loc="upper center", bbox_to_anchor=(0.5, -0.3), ncol=4, fontsize="small", frameon=False
    )
    _value_axis(ax, False, xlabel, points=rate)
    ax.set_title(short_title(title), fontsize="medium")
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
    ax.plot(m, effective_n(n_clusters, m, icc), color="C0", label=f"{n_clusters:,.0f} clusters")
    ax.plot(m, effective_n(total / m, m, icc), color="C1", label=f"{total:,.0f} rows in total")
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
    ax.set_title(short_title(title), fontsize="medium")
    ax.legend(loc="best", fontsize="small", frameon=False)
    ax.grid(alpha=0.3)
    return ax


def half_width_curve(
    clusters: Sequence[float],
    half_widths: Sequence[float],
    *,
    current: tuple[float, float],
    target: float | None,
    needed: float | None,
    ylabel: str,
    title: str,
    powered: tuple[float, str] | None = None,
    ax: Any = None,
) -> Any:
    """A plan's projected half-width against the number of clusters (log scale), the target
    as a horizontal line, today's design and the recommended number of clusters marked;
    ``powered``: the clusters a power question needs, with what they buy (``"80% power to
    detect 0.0200"``), marked on the curve and by a vertical line."""
    from matplotlib.ticker import FuncFormatter

    ax = _axes(ax, 3.6)
    ax.plot(clusters, half_widths, color=CLUSTERED, label="projected half-width")
    ax.plot(*current, marker="o", color="black", linestyle="none", label="today")
    ax.annotate(
        f"today: {current[0]:,.0f} clusters, ±{current[1]:.3g}",
        current,
        xytext=(6, 6),
        textcoords="offset points",
        fontsize="small",
    )
    if target is not None:
        ax.axhline(target, color=MARGIN, linestyle="--", lw=1, label=f"target ±{target:.3g}")
    if needed is not None and target is not None:
        shown = math.ceil(needed)
        ax.plot([needed], [target], marker="D", color=MARGIN, linestyle="none", label="needed")
        ax.annotate(
            f"{shown:,} clusters",
            (needed, target),
            xytext=(0, 8),
            textcoords="offset points",
            ha="center",
            fontsize="small",
        )
    if powered is not None and math.isfinite(powered[0]):
        at, what = math.ceil(powered[0]), powered[1]
        ax.axvline(at, color=MARGIN, linestyle=":", lw=1, label=f"{at:,} clusters: {what}")
        if min(clusters) <= at <= max(clusters):
            height = float(np.interp(math.log(at), np.log(clusters), half_widths))
            ax.plot([at], [height], marker="D", color=MARGIN, linestyle="none")
            ax.annotate(
                f"{at:,} clusters, ±{height:.3g}",
                (at, height),
                xytext=(-6, 6),
                textcoords="offset points",
                ha="right",
                fontsize="small",
            )
    ax.set_xscale("log")
    ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:,.0f}"))
    # between the powers of ten, label 2 and 5 (20, 50, 200, ...) in plain numbers too
    ax.xaxis.set_minor_formatter(
        FuncFormatter(lambda v, _: f"{v:,.0f}" if f"{v:.0f}"[0] in "25" else "")
    )
    ax.yaxis.set_major_formatter(FuncFormatter(lambda v, _: f"±{v:.3g}"))
    ax.set_xlabel("number of clusters (K)")
    ax.set_ylabel(ylabel)
    ax.set_title(short_title(title), fontsize="medium")
    ax.legend(loc="best", fontsize="small", frameon=False)
    ax.grid(alpha=0.3, which="both")
    return ax


def sequence_bounds(
    clusters: Sequence[int],
    estimates: Sequence[float],
    lows: Sequence[float],
    highs: Sequence[float],
    *,
    threshold: float | None,
    title: str,
    ylabel: str,
    ax: Any = None,
) -> Any:
    """A confidence sequence: its bounds and estimate against the completed clusters, the
    threshold (when given) as a line and the first look that decides marked."""
    from matplotlib.ticker import FuncFormatter

    ax = _axes(ax, 3.6)
    ax.fill_between(clusters, lows, highs, color=CLUSTERED, alpha=0.2, step="post", lw=0)
    ax.step(clusters, lows, where="post", color=CLUSTERED, lw=1.2, label="confidence sequence")
    ax.step(clusters, highs, where="post", color=CLUSTERED, lw=1.2)
    ax.plot(clusters, estimates, color="black", lw=1, label="estimate")
    if threshold is not None:
        ax.axhline(threshold, color=MARGIN, linestyle="--", lw=1, label=f"threshold {threshold:g}")
        decided = [
            c
            for c, lo, hi in zip(clusters, lows, highs, strict=True)
            if lo > threshold or hi < threshold
        ]
        if decided:
            ax.axvline(decided[0], color="0.3", lw=0.8, linestyle=":")
            ax.annotate(
                f"decided after {decided[0]:,} clusters",
                (decided[0], threshold),
                xytext=(6, 8),
                textcoords="offset points",
                fontsize="small",
            )
    ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:,.0f}"))
    ax.set_xlabel("completed clusters")
    ax.set_ylabel(ylabel)
    ax.set_title(short_title(title), fontsize="medium")
    ax.legend(loc="best", fontsize="small", frameon=False)
    ax.grid(alpha=0.3)
    return ax
