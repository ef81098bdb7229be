"""Plain-text tables for the benchmarks' human-readable output."""

from __future__ import annotations

from collections.abc import Sequence


def format_value(value: object) -> str:
    """Numbers with sensible precision; None as a dash."""
    if value is None:
        return "-"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float):
        if abs(value) >= 100:
            return f"{value:,.0f}"
        if abs(value) >= 10:
            return f"{value:.1f}"
        return f"{value:.2f}"
    if isinstance(value, int):
        return f"{value:,}"
    return str(value)


def render_table(header: Sequence[str], rows: Sequence[Sequence[object]]) -> str:
    """A left-aligned first column and right-aligned value columns."""
    cells = [list(header)] + [[format_value(cell) for cell in row] for row in rows]
    widths = [max(len(row[i]) for row in cells) for i in range(len(header))]
    lines = []
    for number, row in enumerate(cells):
        parts = [row[0].ljust(widths[0])]
        parts += [cell.rjust(width) for cell, width in zip(row[1:], widths[1:], strict=True)]
        lines.append("  ".join(parts))
        if number == 0:
            lines.append("  ".join("-" * width for width in widths))
    return "\n".join(lines)
