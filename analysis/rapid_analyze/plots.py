"""Figures of the subcommands: each function takes the frame of a Table (and what else it
draws from) and returns a matplotlib Figure; nothing here computes a result. The line
charts (roofline, pareto, latency) are in plots_lines.py, what all share in plotbase.py."""

from __future__ import annotations

import numpy as np
import pandas as pd
from matplotlib.colors import TwoSlopeNorm
from matplotlib.patches import Rectangle

from .plotbase import (DIVERGING, DPI, EMPTY, FORMATS, SEQUENTIAL, ink, no_data, plt,
                       save_figure, save_png, tick_text, wrap_layout)
from .plots_lines import latency, pareto, roofline

# every figure a section draws, and save_png / save_figure, from this one module
__all__ = ["DPI", "FORMATS", "breakdown", "heatmap", "latency", "log_ticks", "pareto",
           "roofline", "save_figure", "save_png", "speedup_matrix"]


# The largest heatmap drawn (inches): more cells make each one narrower, not the page wider.
_MAX_W, _MAX_H = 18.0, 14.0


def heatmap(frame: pd.DataFrame, x: str, y: str, title: str):
    """Cells coloured by best tokens/s/GPU, annotated with the value and layout (the value
    alone, or nothing, when the cells are too narrow); empty cells grey with the reason;
    the baseline's cell outlined."""
    xs = list(dict.fromkeys(frame[x]))
    ys = list(dict.fromkeys(frame[y]))
    if frame["best tokens/s/GPU"].notna().sum() == 0:
        return no_data(f"{title}: no layout fits")
    grid = np.full((len(ys), len(xs)), np.nan)
    for _, r in frame.iterrows():
        grid[ys.index(r[y]), xs.index(r[x])] = r["best tokens/s/GPU"]
    width = min(_MAX_W, max(6.0, 1.75 * len(xs) + 2.2))
    height = min(_MAX_H, max(3.5, 1.0 * len(ys) + 1.6))
    cell_w, cell_h = (width - 2.2) / len(xs), (height - 1.6) / len(ys)
    full = cell_w >= 1.3 and cell_h >= 0.6       # value and layout
    value_only = not full and cell_w >= 0.3 and cell_h >= 0.25
    fig, ax = plt.subplots(figsize=(width, height))
    cmap = plt.get_cmap(SEQUENTIAL).copy()
    cmap.set_bad(EMPTY)
    im = ax.imshow(np.ma.masked_invalid(grid), cmap=cmap, aspect="auto", origin="lower")
    small = 7 if len(xs) <= 6 else 6
    for _, r in frame.iterrows():
        i, j = ys.index(r[y]), xs.index(r[x])
        value = r["best tokens/s/GPU"]
        note = str(r["note"])
        if np.isfinite(value) and (full or value_only):
            text_ink = ink(im.cmap(im.norm(value)))
            ax.text(j, i + (0.18 if full else 0), f"{value:.1f}", ha="center", va="center",
                    fontsize=9 if full else 6, fontweight="bold", color=text_ink,
                    rotation=0 if full or cell_w >= 0.6 else 90)
            if full:
                layout, _, where = str(r["layout"]).partition(" on ")
                text = wrap_layout(layout) + (f"\non {tick_text('', where)}" if where else "")
                ax.text(j, i - 0.15, text, ha="center", va="center", fontsize=small,
                        color=text_ink, linespacing=1.0)
        elif not np.isfinite(value):
            ax.add_patch(Rectangle((j - 0.5, i - 0.5), 1, 1, fill=False, hatch="///",
                                   edgecolor="#bdbdbd", linewidth=0))
            reason = note.replace("baseline; ", "").replace("baseline", "")
            if full:
                ax.text(j, i, reason, ha="center", va="center", fontsize=8, color="#444444",
                        bbox=dict(boxstyle="round,pad=0.2", fc=EMPTY, ec="none"))
        if note.startswith("baseline"):
            ax.add_patch(Rectangle((j - 0.47, i - 0.47), 0.94, 0.94, fill=False,
                                   edgecolor="#e8112d", linewidth=2.5 if full else 1.5))
            if full:
                ax.text(j - 0.44, i + 0.44, "baseline", ha="left", va="top", fontsize=6.5,
                        color="#e8112d", fontweight="bold",
                        bbox=dict(boxstyle="square,pad=0.1", fc="white", ec="none", alpha=0.8))
    xlabels = [tick_text(x, v) for v in xs]
    need = 0.09 * max(len(t) for t in xlabels)  # inches a label takes, level
    rotation = 0 if cell_w >= need else 25 if cell_w >= need / 2 else 60
    ax.set_xticks(range(len(xs)), xlabels, rotation=rotation,
                  ha="right" if rotation else "center", fontsize=7 if rotation == 60 else None)
    ax.set_yticks(range(len(ys)), [tick_text(y, v) for v in ys],
                  fontsize=7 if cell_h < 0.3 else None)
    ax.set_xlabel(x)
    ax.set_ylabel(y)
    ax.set_title(_wrapped(title, width) + ("" if full else "\n(cells too small for their "
                                                          "layouts: see the table)"),
                 fontsize=10)
    fig.colorbar(im, ax=ax, label="best tokens/s/GPU (tokens/s per GPU)", shrink=0.9)
    fig.tight_layout()
    return fig


def _wrapped(text: str, width_in: float) -> str:
    """A title broken at ", " where it is wider than the figure."""
    room = int(width_in * 13)
    if len(text) <= room:
        return text
    head, sep, tail = text.rpartition(", each cell")
    return (head + ",\n" + sep.lstrip(", ") + tail) if sep else text


def speedup_matrix(grid: pd.DataFrame, title: str):
    """Rows (variant at a GPU count) x columns (op classes, then end to end and best vs best)
    of speedups, coloured on a log scale around 1x."""
    if grid.empty:
        return no_data("No variant to compare")
    cols, labels = list(grid.columns), list(grid.index)
    values = grid.to_numpy(dtype=float)
    logs = np.log2(np.where(values > 0, values, np.nan))
    finite = np.abs(logs[np.isfinite(logs)])
    span = max(0.1, float(finite.max()) if finite.size else 1.0)
    dense = len(labels) > 20  # many variants: thinner rows, smaller print
    fig, ax = plt.subplots(figsize=(max(6.0, 0.95 * len(cols) + 3.0),
                                    min(40.0, max(2.4, (0.3 if dense else 0.55) * len(labels)
                                                  + 1.9))))
    cmap = plt.get_cmap(DIVERGING).copy()
    cmap.set_bad(EMPTY)
    norm = TwoSlopeNorm(vmin=-span, vcenter=0.0, vmax=span)
    im = ax.imshow(np.ma.masked_invalid(logs), cmap=cmap, norm=norm, aspect="auto")
    for i in range(len(labels)):
        for j in range(len(cols)):
            v = values[i, j]
            text = "-" if not np.isfinite(v) else f"{v:.2f}x"
            text_ink = ink(cmap(norm(logs[i, j]))) if np.isfinite(logs[i, j]) else "#444444"
            ax.text(j, i, text, ha="center", va="center", fontsize=6.5 if dense else 8,
                    color=text_ink)
    ax.set_xticks(range(len(cols)), cols, rotation=35, ha="right")
    ax.set_yticks(range(len(labels)), [tick_text("", t, limit=48) for t in labels],
                  fontsize=7 if dense else None)
    if "end to end, fixed layout" in cols:  # op classes left of it, end to end right
        ax.axvline(cols.index("end to end, fixed layout") - 0.5, color="black", linewidth=1.2)
    ax.set_title(title, fontsize=10)
    bar = fig.colorbar(im, ax=ax, shrink=0.9 if not dense else 0.3, aspect=20)
    ticks = log_ticks(2.0 ** -span, 2.0 ** span)
    bar.set_ticks(np.log2(ticks), labels=[f"{t:g}x" for t in ticks])
    bar.set_label("speedup (log scale)")
    fig.tight_layout()
    return fig


# Readable speedups for a log colour bar, coarse first: the finer ones join when the range
# is too narrow for three of the coarse ones.
_COARSE = [0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2, 4, 10, 25, 50, 100]
_FINE = [0.8, 0.9, 0.95, 1.05, 1.1, 1.25, 1.5]


def log_ticks(low: float, high: float) -> list[float]:
    """Tick values in [low, high] from 0.1, 0.25, 0.5, 1, 2, 4, 10, ... (with 0.8, 0.9, 1.1,
    1.25, ... when fewer than three of those fit)."""
    coarse = [t for t in _COARSE if low <= t <= high]
    if len(coarse) >= 3:
        return coarse
    return sorted(t for t in _COARSE + _FINE if low <= t <= high)


def breakdown(frame: pd.DataFrame, title: str):
    """Horizontal stacked bars: step time by op class (left), memory by kind against the
    capacity (right), one bar per layout, fastest on top."""
    if frame.empty:
        return no_data("No layout fits: nothing to break down")
    several = frame["hardware"].nunique() > 1
    fixed = frame["view"] == "base's best layout"
    labels = [(f"{tick_text('', r['hardware'])}: {r['layout']}" if is_fixed else
               f"#{r['view'].rpartition('#')[2]} {r['layout']}"
               + (f" ({tick_text('', r['hardware'])})" if several else ""))
              for is_fixed, (_, r) in zip(fixed, frame.iterrows())]
    time_cols = [c for c in frame.columns if c.endswith("(s)") and c != "step time (s)"]
    mem_cols = [c for c in frame.columns if c.endswith("(GiB)")
                and c not in ("peak (GiB)", "capacity (GiB)")]
    per_bar = 0.45 if len(frame) <= 20 else 0.24
    fig, (ta, ma) = plt.subplots(1, 2, figsize=(13, 1.0 + per_bar * len(frame) + 1.6))
    pos = np.arange(len(frame))[::-1]
    _stack(ta, pos, frame, time_cols, plt.get_cmap("tab20"))
    ta.set_xlabel("step time (s)")
    ta.set_yticks(pos, labels, fontsize=8 if len(frame) <= 20 else 6.5)
    if fixed.any() and not fixed.all():  # a rule between the attribution rows and the top N
        cut = pos[int(fixed.sum())] + 0.5
        for ax in (ta, ma):
            ax.axhline(cut, color="black", linewidth=0.8)
    _stack(ma, pos, frame, mem_cols, plt.get_cmap("Set2"))
    for p, cap in zip(pos, frame["capacity (GiB)"]):
        ma.plot([cap, cap], [p - 0.42, p + 0.42], color="black", linewidth=2)
    ma.plot([], [], color="black", linewidth=2, label="capacity")
    ma.set_xlabel("memory of the fullest GPU (GiB)")
    ma.set_yticks(pos, [""] * len(pos))
    for ax in (ta, ma):
        ax.legend(fontsize=7, loc="lower center", bbox_to_anchor=(0.5, 1.0), ncol=4,
                  frameon=False)  # above the bars: near them however tall the figure
        ax.grid(axis="x", alpha=0.3)
    fig.suptitle(title, fontsize=10)
    fig.tight_layout()
    return fig


def _stack(ax, pos, frame, cols, cmap):
    left = np.zeros(len(frame))
    for k, col in enumerate(cols):
        width = np.clip(frame[col].fillna(0).to_numpy(dtype=float), 0, None)
        ax.barh(pos, width, left=left, height=0.7, color=cmap(k % cmap.N),
                label=col.rsplit(" (", 1)[0], edgecolor="white", linewidth=0.4)
        left += width
