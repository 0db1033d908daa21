"""Text and HTML rendering of results: the one place where numbers are rounded."""

from __future__ import annotations

import html
import math
from collections.abc import Sequence


def number(value: object, digits: int = 4) -> str:
    """Format a float for display (values are stored unrounded)."""
    if value is None:
        return "–"
    if isinstance(value, bool):
        return str(value)
    if isinstance(value, int):
        return f"{value:,}"
    if isinstance(value, float):
        if math.isnan(value):
            return "nan"
        if math.isinf(value):
            return "inf" if value > 0 else "-inf"
        if value != 0 and (abs(value) >= 1e6 or abs(value) < 10 ** (-digits)):
            return f"{value:.{digits - 1}e}"
        if abs(value) >= 1000:
            return f"{value:,.1f}"
        return f"{value:.{digits}g}" if abs(value) >= 10 else f"{value:.{digits}f}"
    return str(value)


def proportion(value: object, digits: int = 4) -> str:
    """A proportion or a correlation (an ICC, a rate) to ``digits`` decimals, as the tables
    print it; one that rounds to zero (an ICC of -1e-17 from rounding) is ``0.0000``, without
    a sign or an exponent."""
    if not isinstance(value, (int, float)) or isinstance(value, bool):
        return number(value, digits)
    if math.isnan(value) or math.isinf(value):
        return number(float(value), digits)
    text = f"{value:.{digits}f}"
    return text.lstrip("-") if float(text) == 0.0 else text


def size(value: object) -> str:
    """A number of rows or clusters that may be an average (a mean cluster size, runs per
    case, a planned K): ``4`` when whole (never ``4.000``), else one decimal (``116.5``),
    with thousands separators."""
    if not isinstance(value, (int, float)) or isinstance(value, bool):
        return number(value)
    if not math.isfinite(value):
        return number(float(value))
    return f"{round(value):,}" if float(value).is_integer() else f"{value:,.1f}"


def dof(value: object) -> str:
    """Degrees of freedom, to three significant digits (``9.1``, ``89``), as the notes
    write them."""
    if not isinstance(value, (int, float)) or isinstance(value, bool):
        return number(value)
    if not math.isfinite(value):
        return number(float(value))
    return f"{value:,.0f}" if abs(value) >= 1000 else f"{value:.3g}"


def count(n: int, noun: str, plural: str | None = None) -> str:
    """``"1 row"``, ``"2,173 rows"``: a count with its noun in the right number."""
    word = noun if n == 1 else (plural or f"{noun}s")
    return f"{n:,} {word}"


def interval(low: float, high: float, digits: int = 4) -> str:
    return f"[{number(low, digits)}, {number(high, digits)}]"


def proportion_interval(low: float, high: float) -> str:
    """An interval of proportions (an ICC's range), each bound as :func:`proportion`."""
    return f"[{proportion(low)}, {proportion(high)}]"


def one_line(text: str) -> str:
    """``text`` with its control characters (a line break, a tab) written as escapes
    (``\\n``), so that a label holding one keeps a text table's rows and columns."""
    if text.isprintable():
        return text
    return "".join(c if c.isprintable() else c.encode("unicode_escape").decode() for c in text)


def text_table(header: Sequence[str], rows: Sequence[Sequence[object]]) -> str:
    cells = [[one_line(str(h)) for h in header]]
    cells += [[one_line(number(v)) for v in row] for row in rows]
    widths = [max(len(r[i]) for r in cells) for i in range(len(header))]
    lines = ["  ".join(c.rjust(w) for c, w in zip(r, widths, strict=True)) for r in cells]
    lines.insert(1, "  ".join("-" * w for w in widths))
    return "\n".join(lines)


def markdown_table(header: Sequence[object], rows: Sequence[Sequence[object]]) -> list[str]:
    """The lines of a Markdown (GitHub) table of cells as ``str`` gives them; a ``|`` or a
    line break inside a cell is escaped, so that a label holding one keeps its row's
    columns."""

    def cell(value: object) -> str:
        return " ".join(str(value).replace("|", "\\|").splitlines())

    lines = ["| " + " | ".join(cell(h) for h in header) + " |", "|" + "---|" * len(header)]
    return lines + ["| " + " | ".join(cell(c) for c in row) + " |" for row in rows]


def html_table(
    header: Sequence[str],
    rows: Sequence[Sequence[object]],
    caption: str = "",
    notes: Sequence[str] = (),
) -> str:
    """One table with its caption and notes: the HTML of a one-row result."""
    return html_result([html_table_only(header, rows, caption)], notes)


# Inline styles, not a stylesheet: a notebook saved as HTML, exported, or shown by a code
# host keeps them where a <style> block may be stripped. Colours are translucent greys, so
# the tables read on light and dark themes alike.
_TABLE = "border-collapse:collapse;margin:0.2em 0"
_CAPTION = "caption-side:top;text-align:left;font-weight:bold;padding:0 0 0.3em 0"
_CELL = "padding:0.15em 0.6em;text-align:{align}"
_NUMERIC = ";font-variant-numeric:tabular-nums;white-space:nowrap"
_HEAD = ";border-bottom:1px solid rgba(127,127,127,0.6)"
_STRIPE = " style='background:rgba(127,127,127,0.08)'"
_LINE = "margin:0.2em 0"
_NOTES = "margin:0.3em 0;padding-left:1.4em;font-size:0.9em"


def _is_numeric(value: object) -> bool:
    """A number, or a number already written as text (``±0.0736``, ``1–2``): right-aligned."""
    if isinstance(value, bool):
        return False
    if isinstance(value, (int, float)) or value is None:
        return True
    text = str(value).strip()
    return bool(text) and all(c in "0123456789.,+-−±–e%[] " for c in text)


def html_table_only(
    header: Sequence[str], rows: Sequence[Sequence[object]], caption: str = ""
) -> str:
    """A ``<table>`` of rounded cells with its caption: numbers right-aligned in tabular
    figures, text left-aligned, every other row shaded."""
    numeric = [all(_is_numeric(row[i]) for row in rows) for i in range(len(header))]

    def style(i: int, head: bool = False) -> str:
        css = _CELL.format(align="right" if numeric[i] else "left")
        return css + (_NUMERIC if numeric[i] else "") + (_HEAD if head else "")

    head = "".join(
        f"<th style='{style(i, head=True)}'>{html.escape(str(h))}</th>"
        for i, h in enumerate(header)
    )
    body = "".join(
        f"<tr{_STRIPE if k % 2 else ''}>"
        + "".join(
            f"<td style='{style(i)}'>{html.escape(number(v))}</td>" for i, v in enumerate(row)
        )
        + "</tr>"
        for k, row in enumerate(rows)
    )
    cap = f"<caption style='{_CAPTION}'>{html.escape(caption)}</caption>" if caption else ""
    return (
        f"<table class='clusterstats' style='{_TABLE}'>{cap}<thead><tr>{head}</tr></thead>"
        f"<tbody>{body}</tbody></table>"
    )


def html_paragraphs(lines: Sequence[str]) -> str:
    """Sentences of a result, one paragraph each."""
    return "".join(
        f"<p class='clusterstats-line' style='{_LINE}'>{html.escape(line)}</p>" for line in lines
    )


def html_result(parts: Sequence[str], notes: Sequence[str] = ()) -> str:
    """A result's HTML: its parts (tables, paragraphs) in order, then its notes as a list."""
    foot = "".join(f"<li>{html.escape(n)}</li>" for n in notes)
    foot = f"<ul class='clusterstats-notes' style='{_NOTES}'>{foot}</ul>" if foot else ""
    return f"<div class='clusterstats-result'>{''.join(parts)}{foot}</div>"
