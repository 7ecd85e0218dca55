"""Figures of the subcommands: each function takes the frame of a Table (and what else it
draws from) and returns a matplotlib Figure; nothing here computes a result."""

from __future__ import annotations

import io

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
from matplotlib.colors import TwoSlopeNorm  # noqa: E402
from matplotlib.patches import Rectangle  # noqa: E402

SEQUENTIAL = "viridis"   # perceptually uniform, readable in grey and by colour-blind readers
DIVERGING = "RdBu"       # speedups: red slower, blue faster, white 1x
EMPTY = "#e6e6e6"


def save_png(fig, path: str | None = None) -> bytes:
    """The figure as PNG bytes (written to `path` too when given); the figure is closed."""
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=110, bbox_inches="tight")
    plt.close(fig)
    data = buf.getvalue()
    if path:
        with open(path, "wb") as f:
            f.write(data)
    return data


def _ink(rgba) -> str:
    """Black or white text, whichever reads on a cell of colour `rgba`."""
    r, g, b = rgba[:3]
    return "black" if 0.299 * r + 0.587 * g + 0.114 * b > 0.5 else "white"


def _wrap_layout(text: str) -> str:
    """A layout's short form on two lines: the parallel degrees, then the rest."""
    words = text.split()
    degrees = [w for w in words if w.rstrip("0123456789") in ("dp", "tp", "pp", "cp", "ep",
                                                              "etp", "vpp")]
    rest = [w for w in words if w not in degrees]
    return " ".join(degrees) + ("\n" + " ".join(rest) if rest else "")


def _no_data(message: str):
    fig, ax = plt.subplots(figsize=(6, 1.5))
    ax.axis("off")
    ax.text(0.5, 0.5, message, ha="center", va="center", fontsize=11, color="dimgray",
            wrap=True)
    return fig


def heatmap(frame: pd.DataFrame, x: str, y: str, title: str):
    """Cells coloured by best tokens/s/GPU, annotated with the value and layout; empty
    cells grey with the reason; the baseline's cell outlined."""
    xs = list(dict.fromkeys(frame[x]))
    ys = list(dict.fromkeys(frame[y]))
    if frame["best tokens/s/GPU"].notna().sum() == 0:
        return _no_data(f"{title}: no layout fits")
    grid = np.full((len(ys), len(xs)), np.nan)
    for _, r in frame.iterrows():
        grid[ys.index(r[y]), xs.index(r[x])] = r["best tokens/s/GPU"]
    fig, ax = plt.subplots(figsize=(max(6.0, 1.75 * len(xs) + 2.2),
                                    max(3.5, 1.0 * len(ys) + 1.6)))
    cmap = plt.get_cmap(SEQUENTIAL).copy()
    cmap.set_bad(EMPTY)
    im = ax.imshow(np.ma.masked_invalid(grid), cmap=cmap, aspect="auto", origin="lower")
    small = 7 if len(xs) <= 6 else 6
    for _, r in frame.iterrows():
        i, j = ys.index(r[y]), xs.index(r[x])
        value = r["best tokens/s/GPU"]
        note = str(r["note"])
        if np.isfinite(value):
            ink = _ink(im.cmap(im.norm(value)))
            ax.text(j, i + 0.18, f"{value:.1f}", ha="center", va="center", fontsize=9,
                    fontweight="bold", color=ink)
            layout, _, where = str(r["layout"]).partition(" on ")
            text = _wrap_layout(layout) + (f"\non {where}" if where else "")
            ax.text(j, i - 0.15, text, ha="center",
                    va="center", fontsize=small, color=ink, linespacing=1.0)
        else:
            ax.add_patch(Rectangle((j - 0.5, i - 0.5), 1, 1, fill=False, hatch="///",
                                   edgecolor="#bdbdbd", linewidth=0))
            reason = note.replace("baseline; ", "").replace("baseline", "")
            ax.text(j, i, reason, ha="center", va="center", fontsize=8, color="#444444",
                    bbox=dict(boxstyle="round,pad=0.2", fc=EMPTY, ec="none"))
        if note.startswith("baseline"):
            ax.add_patch(Rectangle((j - 0.47, i - 0.47), 0.94, 0.94, fill=False,
                                   edgecolor="#e8112d", linewidth=2.5))
            ax.text(j - 0.44, i + 0.44, "baseline", ha="left", va="top", fontsize=6.5,
                    color="#e8112d", fontweight="bold",
                    bbox=dict(boxstyle="square,pad=0.1", fc="white", ec="none", alpha=0.8))
    ax.set_xticks(range(len(xs)), [str(v) for v in xs])
    ax.set_yticks(range(len(ys)), [str(v) for v in ys])
    ax.set_xlabel(x)
    ax.set_ylabel(y)
    ax.set_title(title, fontsize=10)
    fig.colorbar(im, ax=ax, label="best tokens/s/GPU (tokens/s per GPU)", shrink=0.9)
    fig.tight_layout()
    return fig


def speedup_matrix(frame: pd.DataFrame, title: str):
    """Variant (rows) x op class (columns) speedups, coloured on a log scale around 1x."""
    cols = [c for c in frame.columns if c.endswith("(x)")]
    if frame.empty or not cols:
        return _no_data("No variant to compare")
    values = frame[cols].to_numpy(dtype=float)
    labels = [f"{v} ({g} GPUs)" for v, g in zip(frame["variant"], frame["GPUs"])]
    logs = np.log2(np.where(values > 0, values, np.nan))
    finite = np.abs(logs[np.isfinite(logs)])
    span = max(0.1, float(finite.max()) if finite.size else 1.0)
    fig, ax = plt.subplots(figsize=(max(6.0, 0.95 * len(cols) + 3.0),
                                    max(2.4, 0.55 * len(labels) + 1.9)))
    cmap = plt.get_cmap(DIVERGING).copy()
    cmap.set_bad(EMPTY)
    norm = TwoSlopeNorm(vmin=-span, vcenter=0.0, vmax=span)
    im = ax.imshow(np.ma.masked_invalid(logs), cmap=cmap, norm=norm, aspect="auto")
    for i in range(len(labels)):
        for j in range(len(cols)):
            v = values[i, j]
            text = "-" if not np.isfinite(v) else f"{v:.2f}x"
            ink = _ink(cmap(norm(logs[i, j]))) if np.isfinite(logs[i, j]) else "#444444"
            ax.text(j, i, text, ha="center", va="center", fontsize=8, color=ink)
    ax.set_xticks(range(len(cols)), [c[:-4] for c in cols], rotation=35, ha="right")
    ax.set_yticks(range(len(labels)), labels)
    if "end to end, fixed layout (x)" in cols:  # op classes left of it, end to end right
        ax.axvline(cols.index("end to end, fixed layout (x)") - 0.5, color="black",
                   linewidth=1.2)
    ax.set_title(title, fontsize=10)
    bar = fig.colorbar(im, ax=ax, shrink=0.9)
    ticks = np.linspace(-span, span, 5)
    bar.set_ticks(ticks, labels=[f"{2 ** t:.2f}x" for t in ticks])
    bar.set_label("speedup (log scale)")
    fig.tight_layout()
    return fig


_ROOF_STYLE = {"gemm (x)": ("tab:blue", "o"), "attention (x)": ("tab:orange", "s"),
               "memory-bound (x)": ("tab:green", "^"), "compute (x)": ("tab:blue", "o"),
               "end to end, fixed layout (x)": ("black", "D"),
               "best vs best (x)": ("tab:red", "*")}
_DASHED = {"best vs best (x)"}  # drawn dashed: it often lies on end to end


def roofline(frame: pd.DataFrame, gpus: int, l2_panel: bool, title: str):
    """Speedup against effective HBM bandwidth (and L2 size) at one GPU count: per op class,
    end to end at fixed layout and best vs best, a line through the base and the entries
    that change only that knob (`differs in`); entries that change something else are
    separate hollow markers on the HBM panel; the bandwidth ratio dotted."""
    rows = frame[frame["GPUs"] == gpus] if not frame.empty else frame
    metrics = [c for c in _ROOF_STYLE if c in rows]
    if (rows.empty or rows["effective HBM (TB/s)"].notna().sum() == 0
            or not np.isfinite(rows[metrics].to_numpy(dtype=float)).any()):
        return _no_data("No speedup to plot (no variant, no HBM bandwidth, or nothing fits)")
    panels = [("effective HBM (TB/s)", "effective HBM bandwidth (TB/s)", "HBM")]
    if l2_panel:
        panels.append(("L2 (MiB)", "L2 size (MiB)", "L2"))
    fig, axes = plt.subplots(1, len(panels), figsize=(6.4 * len(panels), 4.8), squeeze=False)
    bases = list(dict.fromkeys(rows["base"]))
    for ax, (xcol, xlabel, knob) in zip(axes[0], panels):
        shown = []
        for base in bases:
            group = rows[rows["base"] == base]
            line = group[group["differs in"].isin(["base", knob])].sort_values(xcol)
            style = "-" if base == bases[0] else "-."
            for m in metrics:
                color, marker = _ROOF_STYLE[m]
                label = m[:-4] + (f" (base {base})" if len(bases) > 1 else "")
                ax.plot(line[xcol], line[m], linestyle="--" if m in _DASHED else style,
                        marker=marker, color=color, label=label,
                        markersize=6 if marker != "*" else 10)
            if knob == "HBM":
                ax.plot(line[xcol], line["bandwidth ratio (x)"], linestyle=":", color="gray",
                        label="HBM bandwidth ratio" if base == bases[0] else None)
                rest = group[~group["differs in"].isin(["base", knob, "L2"])]
                for m in metrics:
                    color, marker = _ROOF_STYLE[m]
                    ax.scatter(rest[xcol], rest[m], marker=marker, facecolors="none",
                               edgecolors=color, s=40)
                shown.append(rest)
            shown.append(line)
        _name_ticks(ax, pd.concat(shown), xcol)
        ax.axhline(1.0, color="lightgray", linewidth=0.8, zorder=0)
        ax.set_xlabel(xlabel)
        ax.set_ylabel("speedup over the base (x)")
        ax.grid(alpha=0.3)
    axes[0][0].legend(fontsize=7, loc="upper left")
    note = "hollow: entries that change other knobs" if any(
        ~rows["differs in"].isin(["base", "HBM", "L2"])) else ""
    fig.suptitle(f"{title} ({gpus} GPUs)" + (f"; {note}" if note else ""), fontsize=10)
    fig.tight_layout()
    return fig


def _name_ticks(ax, rows: pd.DataFrame, xcol: str):
    """The entries' names on a top axis at their x (names sharing an x on one tick)."""
    names = {}
    for x, name in zip(rows[xcol], rows["variant"]):
        if np.isfinite(x):
            names.setdefault(round(float(x), 9), []).append(name)
    top = ax.secondary_xaxis("top")
    top.set_xticks(list(names), ["\n".join(dict.fromkeys(v)) for v in names.values()],
                   fontsize=7, rotation=20, ha="left")
    top.tick_params(length=3, colors="dimgray")


def pareto(frame: pd.DataFrame, ok: pd.DataFrame, throughputs: dict, objectives: dict):
    """One panel per (throughput, objective): every ok layout faint, each variant's front
    as a step line with markers."""
    fronts = [(y, yl, x, xl) for y, yl in throughputs.items()
              for x, (xl, _) in objectives.items()
              if frame.empty or f"{yl} vs {xl}" in set(frame["front"])]
    if frame.empty or not fronts:
        return _no_data("No layout fits: no Pareto front")
    ncol = len(objectives)
    fig, axes = plt.subplots(len(throughputs), ncol, figsize=(4.6 * ncol, 3.6 * len(throughputs)),
                             squeeze=False)
    order = list(dict.fromkeys(ok.sort_values("hardware_index").hardware))
    colors = {hw: plt.get_cmap("tab10")(i % 10) for i, hw in enumerate(order)}
    # fronts often coincide (a variant that changes nothing here): the earlier ones drawn
    # wider, each with its own marker, so none hides another
    widths = {hw: max(1.0, 3.2 - 0.7 * i) for i, hw in enumerate(order)}
    markers = {hw: "osD^vP*X"[i % 8] for i, hw in enumerate(order)}
    for i, (y, yl) in enumerate(throughputs.items()):
        for j, (x, (xl, more)) in enumerate(objectives.items()):
            ax = axes[i][j]
            name = f"{yl} vs {xl}"
            for hw, color in colors.items():
                pts = ok[ok.hardware == hw]
                ax.scatter(pts[x], pts[y], s=8, color=color, alpha=0.18, linewidths=0)
                f = frame[(frame["front"] == name) & (frame["hardware"] == hw)]
                f = f.sort_values("x")
                ax.step(f["x"], f["throughput"], where="post" if not more else "pre",
                        color=color, linewidth=widths[hw], marker=markers[hw],
                        markersize=2 + 1.6 * widths[hw], label=hw)
            ax.set_xlabel(xl + (" (more is better)" if more else " (less is better)"),
                          fontsize=8)
            ax.set_ylabel(yl, fontsize=8)
            ax.tick_params(labelsize=7)
            ax.grid(alpha=0.3)
            if x == "num_gpus":
                ax.set_xticks(sorted(ok.num_gpus.unique()))
    axes[0][0].legend(fontsize=7)
    fig.suptitle("Pareto fronts (lines) over every layout that fits (dots)", fontsize=10)
    fig.tight_layout()
    return fig


def breakdown(frame: pd.DataFrame, title: str):
    """Horizontal stacked bars: step time by op class (left), memory by kind against the
    capacity (right), one bar per layout, fastest on top."""
    if frame.empty:
        return _no_data("No layout fits: nothing to break down")
    labels = [f"#{r['rank']} {r['layout']}" + (f" ({r['hardware']})"
                                                if frame["hardware"].nunique() > 1 else "")
              for _, r in frame.iterrows()]
    time_cols = [c for c in frame.columns if c.endswith("(s)") and c != "step time (s)"]
    mem_cols = [c for c in frame.columns if c.endswith("(GiB)")
                and c not in ("peak (GiB)", "capacity (GiB)")]
    fig, (ta, ma) = plt.subplots(1, 2, figsize=(13, 1.0 + 0.45 * len(frame) + 1.6))
    pos = np.arange(len(frame))[::-1]
    _stack(ta, pos, frame, time_cols, plt.get_cmap("tab20"))
    ta.set_xlabel("step time (s)")
    ta.set_yticks(pos, labels, fontsize=8)
    _stack(ma, pos, frame, mem_cols, plt.get_cmap("Set2"))
    for p, cap in zip(pos, frame["capacity (GiB)"]):
        ma.plot([cap, cap], [p - 0.42, p + 0.42], color="black", linewidth=2)
    ma.plot([], [], color="black", linewidth=2, label="capacity")
    ma.set_xlabel("memory of the fullest GPU (GiB)")
    ma.set_yticks(pos, [""] * len(pos))
    for ax in (ta, ma):
        ax.legend(fontsize=7, loc="upper center", bbox_to_anchor=(0.5, -0.16), ncol=4,
                  frameon=False)
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
