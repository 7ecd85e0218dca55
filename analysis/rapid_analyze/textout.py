"""Tables as text: numbers formatted by their column's name, printed or as CSV."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from .common import Table

# (how the column name ends or is, format) in the order they are tried.
_FORMATS = [("tokens/s/GPU", "{:.1f}"), ("tokens/s", "{:.0f}"), ("(x)", "{:.3f}"),
            ("step (%)", "{:.3g}"), ("(s)", "{:.4g}"), ("(GiB)", "{:.2f}"), ("(%)", "{:.1f}"),
            ("(TB/s)", "{:.2f}"), ("(GHz)", "{:.2f}"), ("(MiB)", "{:.4g}"), ("(GB/s)", "{:.4g}"),
            ("(TFLOPS)", "{:.4g}"), ("(W)", "{:.0f}"), ("(J/token)", "{:.4g}"),
            ("(thermal)", "{:.2f}"), ("rank", "{:.0f}"), ("links", "{:.0f}"), ("point", "{:.0f}"),
            ("GPUs", "{:.0f}"), ("concurrency", "{:.0f}"), ("(ms)", "{:.2f}"),
            ("running batch", "{:.1f}")]


def format_value(column: str, value) -> str:
    """The printed form of one cell: "-" for a missing number, "inf" for an infinite one."""
    if isinstance(value, (bool, np.bool_)):
        return "yes" if value else "no"
    if isinstance(value, (int, np.integer)):
        return str(int(value))
    if isinstance(value, (float, np.floating)):
        value = float(value)
        if math.isnan(value):
            return "-"
        if math.isinf(value):
            return "inf" if value > 0 else "-inf"
        if column.endswith("(s)") and abs(value) < 1e-12:
            return "0"  # rounding noise of a sum, not a time
        for end, fmt in _FORMATS:
            if column.endswith(end):
                return fmt.format(value)
        return f"{value:.4g}"
    return str(value)


def formatted(frame: pd.DataFrame) -> pd.DataFrame:
    """The frame with every cell a printed string."""
    return pd.DataFrame({c: [format_value(c, v) for v in frame[c]] for c in frame.columns},
                        index=frame.index)


def as_text(table: Table) -> str:
    """Title, the table (or "(empty)"), the notes."""
    lines = [table.title + ":"]
    if table.frame.empty:
        lines.append("  (no rows)")
    else:
        lines.append(formatted(table.frame).to_string(index=False))
    lines += [f"  {note}" for note in table.notes]
    if table.appendix is not None:
        lines.append(table.appendix.title + ":")
        lines.append(formatted(table.appendix.frame).to_string(index=False))
    return "\n".join(lines)


def as_csv(table: Table) -> str:
    return table.frame.to_csv(index=False)
