"""The line charts: predicted speedup against HBM bandwidth and L2 size (roofline), the
Pareto fronts, serving latency against throughput; each takes what its section computed
and returns a matplotlib Figure."""

from __future__ import annotations

import numpy as np
import pandas as pd
from matplotlib.ticker import FuncFormatter, LogLocator, NullFormatter

from .plotbase import SEQUENTIAL, no_data, plt, tick_text


_ROOF_STYLE = {"gemm (x)": ("tab:blue", "o"), "attention (x)": ("tab:orange", "s"),
               "memory-bound (x)": ("tab:green", "^"), "compute (x)": ("tab:blue", "o"),
               "end to end, fixed layout (x)": ("black", "D"),
               "best vs best (x)": ("tab:red", "*")}
_DASHED = {"best vs best (x)"}  # drawn dashed: it often lies on end to end


def roofline(spec: dict, title: str):
    """Speedup against effective HBM bandwidth (and L2 size) at one GPU count, from
    roofline.curves(): one-knob mode, a panel per knob with a line per metric through the
    base and the entries that change only that knob (the bandwidth ratio dotted, entries
    that change other knobs hollow); grid mode, a panel per (metric, knob) with a line per
    value of the other knob."""
    rows = spec["rows"]
    metrics = [c for c in _ROOF_STYLE if c in rows]
    if (rows.empty or rows["effective HBM (TB/s)"].notna().sum() == 0
            or not np.isfinite(rows[metrics].to_numpy(dtype=float)).any()):
        return no_data("No speedup to plot (no variant, no HBM bandwidth, or nothing fits)")
    gpus = int(rows["GPUs"].iloc[0])
    if spec["grid"]:
        return _roofline_grid(spec, metrics, f"{title} ({gpus} GPUs)")
    panels = spec["panels"]
    fig, axes = plt.subplots(1, len(panels), figsize=(6.4 * len(panels), 4.8), squeeze=False)
    for ax, panel in zip(axes[0], panels):
        xcol = panel["x"]
        for k, (name, line) in enumerate(panel["curves"]):
            for m in metrics:
                color, marker = _ROOF_STYLE[m]
                ax.plot(line[xcol], line[m], marker=marker, color=color,
                        linestyle="--" if m in _DASHED else ("-" if k == 0 else "-."),
                        label=f"{m[:-4]} {name}".strip(), markersize=10 if marker == "*" else 6)
            if panel["knob"] == "HBM":
                ax.plot(line[xcol], line["bandwidth ratio (x)"], linestyle=":", color="gray",
                        label="HBM bandwidth ratio" if k == 0 else None)
        for m in metrics:
            color, marker = _ROOF_STYLE[m]
            ax.scatter(panel["rest"][xcol], panel["rest"][m], marker=marker, facecolors="none",
                       edgecolors=color, s=40)
        if spec["entries"] <= 10:
            _name_ticks(ax, pd.concat([line for _, line in panel["curves"]] + [panel["rest"]]),
                        xcol)
        _speedup_axes(ax, panel["xlabel"], xs=_l2_values(spec, panel))
    axes[0][0].legend(fontsize=7, loc="upper left")
    note = "; hollow: entries that change other knobs" if any(
        not p["rest"].empty for p in panels) else ""
    fig.suptitle(f"{title} ({gpus} GPUs){note}", fontsize=10)
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


def _speedup_axes(ax, xlabel: str, ylabel: str = "speedup over the base (x)", xs=None):
    """Labels, the 1x line, plain tick numbers; a log-2 x axis for L2 sizes `xs` that span
    4x or more (the grids double them)."""
    ax.axhline(1.0, color="lightgray", linewidth=0.8, zorder=0)
    ax.ticklabel_format(axis="y", useOffset=False, style="plain")
    values = sorted({float(x) for x in (xs if xs is not None else []) if np.isfinite(x) and x > 0})
    if values and values[-1] >= 4 * values[0]:
        ax.set_xscale("log", base=2)
        ax.set_xticks(values, [f"{v:g}" for v in values])
        ax.minorticks_off()
    ax.set_xlabel(xlabel, fontsize=8)
    ax.set_ylabel(ylabel, fontsize=8)
    ax.tick_params(labelsize=7)
    ax.grid(alpha=0.3)


def _l2_values(spec: dict, panel: dict):
    return spec["rows"][panel["x"]] if panel["knob"] == "L2" else None


def _roofline_grid(spec: dict, metrics: list[str], title: str):
    """Grid mode: rows of panels per metric, a column per knob, a line per value of the
    other knob (coloured in order), the base a black star, others hollow grey."""
    panels = spec["panels"]
    fig, axes = plt.subplots(len(metrics), len(panels), squeeze=False,
                             figsize=(5.6 * len(panels) + 1.6, 2.5 * len(metrics) + 0.8))
    for j, panel in enumerate(panels):
        xcol, lines = panel["x"], panel["curves"]
        colors = plt.get_cmap(SEQUENTIAL)(np.linspace(0.0, 0.9, max(1, len(lines))))
        base = spec["rows"][spec["rows"]["differs in"] == "base"]
        for i, m in enumerate(metrics):
            ax = axes[i][j]
            for (name, line), color in zip(lines, colors):
                ax.plot(line[xcol], line[m], marker="o", markersize=3.5, color=color,
                        linewidth=1.4, label=name)
            ax.scatter(base[xcol], base[m], marker="*", s=90, color="black", zorder=5,
                       label="base")
            ax.scatter(panel["rest"][xcol], panel["rest"][m], marker="o", s=30,
                       facecolors="none", edgecolors="gray",
                       label="other entries" if not panel["rest"].empty else None)
            _speedup_axes(ax, panel["xlabel"] if i == len(metrics) - 1 else "",
                          m[:-4] + " (x)", xs=_l2_values(spec, panel))
        other = next(k for k in ("HBM", "L2") if k != panel["knob"])
        axes[0][j].legend(fontsize=7, title=f"one line per {other} value",
                          title_fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1.0),
                          frameon=False)
    fig.suptitle(f"{title}: speedup over the base per op class, a line per value of the "
                 "other knob", fontsize=10)
    fig.tight_layout()
    return fig


def pareto(frame: pd.DataFrame, ok: pd.DataFrame, throughputs: dict, objectives: dict):
    """One panel per (throughput, objective): every ok layout faint, each variant's front
    as a step line with markers; the legend beside the panels, out of the data."""
    fronts = [(y, yl, x, xl) for y, yl in throughputs.items()
              for x, (xl, _) in objectives.items()
              if frame.empty or f"{yl} vs {xl}" in set(frame["front"])]
    if frame.empty or not fronts:
        return no_data("No layout fits: no Pareto front")
    ncol = len(objectives)
    order = list(dict.fromkeys(ok.sort_values("hardware_index").hardware))
    legend_cols = 1 if len(order) <= 12 else 2 if len(order) <= 30 else 3
    fig, axes = plt.subplots(len(throughputs), ncol, squeeze=False,
                             figsize=(4.6 * ncol + 2.2 * legend_cols, 3.6 * len(throughputs)))
    many = len(order) > 10  # tab10 repeats: a sequential map then
    colors = {hw: (plt.get_cmap(SEQUENTIAL)(i / max(1, len(order) - 1) * 0.95) if many
                   else plt.get_cmap("tab10")(i)) for i, hw in enumerate(order)}
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
                f = f.sort_values(xl)
                ax.step(f[xl], f[yl], where="post" if not more else "pre",
                        color=color, linewidth=widths[hw], marker=markers[hw],
                        markersize=2 + 1.6 * widths[hw], label=tick_text("", hw))
            ax.set_xlabel(xl + (" (more is better)" if more else " (less is better)"),
                          fontsize=8)
            ax.set_ylabel(yl, fontsize=8)
            ax.tick_params(labelsize=7)
            ax.grid(alpha=0.3)
            if x == "num_gpus":
                ax.set_xticks(sorted(ok.num_gpus.unique()))
    handles, labels = axes[0][0].get_legend_handles_labels()
    fig.suptitle("Pareto fronts (lines) over every layout that fits (dots)", fontsize=10)
    fig.tight_layout(rect=(0, 0, 1 - 2.2 * legend_cols / fig.get_figwidth(), 1))
    fig.legend(handles, labels, loc="center left", fontsize=7, frameon=False,
               ncol=legend_cols, title="hardware entry", title_fontsize=7,
               bbox_to_anchor=(1 - 2.2 * legend_cols / fig.get_figwidth(), 0.5))
    return fig


# The most (hardware entry, GPU count) groups drawn as panel rows; the rest are named.
_LATENCY_ROWS = 6


def latency(groups: list[dict], budgets_ms, load_label: str, title: str):
    """Per (hardware entry, GPU count), from latency.curves(): mean ITL (ms) against output
    tokens/s/GPU (left) and mean TTFT (right), one line per layout through its ok points in
    load order, each point labelled with its load; the ITL budgets as dotted rules. Axes
    go logarithmic where the values span 20x or more."""
    drawn = [g for g in groups if g["lines"]]
    if not drawn:
        return no_data("No serving point runs: nothing to plot (every point is OOM, "
                       "overloaded or infeasible)")
    shown = drawn[:_LATENCY_ROWS]
    layouts = list(dict.fromkeys(name for g in shown for name, _, _ in g["lines"]))
    colors = {name: plt.get_cmap("tab10")(i % 10) for i, name in enumerate(layouts)}
    markers = {name: "osD^vP*X"[i % 8] for i, name in enumerate(layouts)}
    legend_w = 1.9  # inches right of the panels for the legend of layouts
    fig, axes = plt.subplots(len(shown), 2, squeeze=False,
                             figsize=(12.5 + legend_w, 3.9 * len(shown) + 0.9))
    for row, g in zip(axes, shown):
        for ax, (col, ylabel) in zip(row, (("ITL (ms)", "mean ITL (ms)"),
                                           ("TTFT (ms)", "mean TTFT (ms)"))):
            xs, ys = [], []
            for name, part, labels in g["lines"]:
                x = part["output tokens/s/GPU"].to_numpy(dtype=float)
                y = part[col].to_numpy(dtype=float)
                ax.plot(x, y, marker=markers[name], color=colors[name], linewidth=1.5,
                        markersize=5, label=name)
                for xi, yi, text in zip(x, y, labels):
                    ax.annotate(text, (xi, yi), textcoords="offset points", xytext=(4, 4),
                                fontsize=7, color=colors[name])
                xs += list(x)
                ys += list(y)
            if col == "ITL (ms)":
                top = max(ys) if ys else 1.0
                for b in budgets_ms:
                    if b <= 2 * top:  # budgets far above every point would squash them
                        ax.axhline(b, color="gray", linestyle=":", linewidth=1)
                        ax.annotate(f"ITL {b:g} ms", (0.0, b), xycoords=("axes fraction",
                                                                         "data"),
                                    xytext=(2, 2), textcoords="offset points", ha="left",
                                    fontsize=7, color="gray")
            _log_if_wide(ax, xs, "x")
            _log_if_wide(ax, ys, "y")
            ax.set_xlabel("output tokens/s per GPU", fontsize=8)
            ax.set_ylabel(ylabel, fontsize=8)
            ax.tick_params(labelsize=7)
            ax.grid(alpha=0.3, which="both")
            skipped = f"; {g['skipped']} point{'s' * (g['skipped'] != 1)} not ok, not " \
                      "plotted" if g["skipped"] else ""
            ax.set_title(f"{tick_text('', g['hardware'])}, {g['GPUs']} GPUs{skipped}",
                         fontsize=9)
    rest = [f"{g['hardware']} {g['GPUs']} GPUs" for g in drawn[_LATENCY_ROWS:]]
    empty = [f"{g['hardware']} {g['GPUs']} GPUs" for g in groups if not g["lines"]]
    foot = []
    if rest:
        foot.append(f"not drawn ({len(rest)} more groups; --hardware/--gpus): "
                    + ", ".join(rest[:4]) + (" ..." if len(rest) > 4 else ""))
    if empty:
        foot.append("no point runs in: " + ", ".join(empty[:4])
                    + (" ..." if len(empty) > 4 else ""))
    fig.suptitle(f"{title}\n(points labelled with their {load_label})", fontsize=10)
    right = 1 - legend_w / fig.get_figwidth()
    fig.tight_layout(rect=(0, 0.03 if foot else 0, right, 1))
    handles = {}
    for ax in axes.flat:
        for handle, label in zip(*ax.get_legend_handles_labels()):
            handles.setdefault(label, handle)
    fig.legend(list(handles.values()), list(handles), loc="center left", fontsize=7,
               frameon=False, title="layout (dp replicas\nof tp x pp GPUs)",
               title_fontsize=7, bbox_to_anchor=(right, 0.5))
    if foot:
        fig.text(0.01, 0.005, "; ".join(foot), fontsize=7, color="dimgray")
    return fig


def _log_if_wide(ax, values, axis: str):
    """A log axis where the positive values span 20x or more, ticked at 1, 2, 5 x 10^k in
    plain numbers."""
    v = [float(x) for x in values if np.isfinite(x) and x > 0]
    if not v or max(v) < 20 * min(v):
        return
    which = ax.xaxis if axis == "x" else ax.yaxis
    (ax.set_xscale if axis == "x" else ax.set_yscale)("log")
    which.set_major_locator(LogLocator(base=10, subs=(1.0, 2.0, 5.0)))
    which.set_major_formatter(FuncFormatter(lambda value, _: f"{value:g}"))
    which.set_minor_formatter(NullFormatter())
