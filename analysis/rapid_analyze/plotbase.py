"""What the figures share: matplotlib set up to draw without a display, the colour maps,
PNG, SVG or PDF bytes of a figure, text ink on a colour, the short forms of layouts and names."""

from __future__ import annotations

import io

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

from .common import FIGURE_DPI, FIGURE_FORMATS  # noqa: E402
from .textout import format_value  # noqa: E402

SEQUENTIAL = "viridis"   # perceptually uniform, readable in grey and by colour-blind readers
DIVERGING = "RdBu"       # speedups: red slower, blue faster, white 1x
EMPTY = "#e6e6e6"


FORMATS, DPI = FIGURE_FORMATS, FIGURE_DPI  # common.py says why these


def save_png(fig, path: str | None = None, dpi: int = DPI) -> bytes:
    """The figure as PNG bytes (written to `path` too when given); the figure is closed."""
    return save_figure(fig, path, "png", dpi)


def save_figure(fig, path: str | None = None, fmt: str = "png", dpi: int = DPI) -> bytes:
    """The figure as `fmt` bytes (png, svg or pdf; written to `path` too when given) at
    `dpi`; the figure is closed."""
    buf = io.BytesIO()
    fig.savefig(buf, format=fmt, dpi=dpi, bbox_inches="tight")
    plt.close(fig)
    data = buf.getvalue()
    if path:
        with open(path, "wb") as f:
            f.write(data)
    return data


def ink(rgba) -> str:
    """Black or white text, whichever reads on a cell of colour `rgba`."""
    r, g, b = rgba[:3]
    return "black" if 0.299 * r + 0.587 * g + 0.114 * b > 0.5 else "white"


def wrap_layout(text: str) -> str:
    """A layout's short form on two lines: the parallel degrees, then the rest."""
    words = text.split()
    degrees = [w for w in words if w.rstrip("0123456789") in ("dp", "tp", "pp", "cp", "ep",
                                                              "etp", "vpp")]
    rest = [w for w in words if w not in degrees]
    return " ".join(degrees) + ("\n" + " ".join(rest) if rest else "")


def no_data(message: str):
    fig, ax = plt.subplots(figsize=(6, 1.5))
    ax.axis("off")
    ax.text(0.5, 0.5, message, ha="center", va="center", fontsize=11, color="dimgray",
            wrap=True)
    return fig


def tick_text(column: str, value, limit: int = 36) -> str:
    """An axis value as a tick label: numbers by their column's format (2.00 for TB/s),
    long names shortened (grid names to their values: h100@2TB/s,8MiB)."""
    text = format_value(column, value) if not isinstance(value, str) else value
    if "@" in text and "=" in text:
        prefix, _, rest = text.partition("@")
        text = prefix + "@" + ",".join(p.split("=", 1)[-1] for p in rest.split(","))
    half = (limit - 2) // 2
    return text if len(text) <= limit else text[:half] + "…" + text[-half:]
