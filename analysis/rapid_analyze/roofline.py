"""`roofline`: predicted speedup against HBM bandwidth (and L2 size) for GEMM, attention,
memory-bound ops and end to end, at fixed layout (the base's best) and best per variant."""

from __future__ import annotations

import numpy as np
import pandas as pd

from . import common, knobs, opclass

TB = 1e12
MIB = float(1 << 20)

# The op classes the roofline follows (others stay in the variants table).
CLASSES = ["gemm_time_s", "attention_time_s", "memory_bound_time_s", "compute_time_s"]


def roofline_points(points: pd.DataFrame, variants: pd.DataFrame,
                    hardware: str | None = None) -> common.Table:
    """One row per (GPU count, base, entry) where the entry is the base itself (speedup 1)
    or a variant of it: its HBM bandwidth (nominal and kept under the thermal derate), L2
    size, and the speedups of opclass.fixed_layout."""
    classes, missing = opclass.step_classes(points)
    shown = {c: classes[c] for c in CLASSES if c in classes}
    fixed = opclass.fixed_layout(points, variants)
    rows = []
    for (gpus, base), group in fixed.groupby(["num_gpus", "base_index"], sort=True):
        entries = [(base, None)] + [(int(f.hardware_index), f) for _, f in group.iterrows()]
        unit = 1.0 if (group.base_point >= 0).any() else np.nan  # the base against itself
        for hw, f in entries:
            name = variants.loc[hw, "name"]
            if hardware is not None and hardware not in (name, variants.loc[base, "name"]):
                continue
            bw = variants.loc[hw, "hbm_bandwidth_Bps"]  # sustained: nominal x keep
            keep = _keep(variants, hw)
            row = {"GPUs": int(gpus), "variant": name, "base": variants.loc[base, "name"],
                   "nominal HBM (TB/s)": bw / keep / TB, "HBM kept (thermal)": keep,
                   "effective HBM (TB/s)": bw / TB,
                   "bandwidth ratio (x)": bw / variants.loc[base, "hbm_bandwidth_Bps"],
                   "L2 (MiB)": variants.loc[hw, "l2_size_bytes"] / MIB,
                   "differs in": knobs.differs_in(variants, hw, base)}
            for col, label in shown.items():
                row[f"{label} (x)"] = unit if f is None else f[col]
            row["end to end, fixed layout (x)"] = unit if f is None else f.end_to_end
            row["best vs best (x)"] = unit if f is None else f.best_vs_best
            rows.append(row)
    frame = pd.DataFrame(rows)
    notes = ["Fixed layout: the base's best layout at each GPU count on every entry; best "
             "vs best: each entry's own best layout. The base is the row with speedup 1. "
             "Effective HBM: the sustained bandwidth of /variants (nominal x the share kept "
             "under a fixed thermal derate), the x axis of the figure. differs in: every "
             "/variants parameter whose value differs from the base's."]
    if not frame.empty and is_grid(frame):
        notes.append("The figure (a two-knob grid): per op class, the speedup against HBM "
                     "bandwidth with one line per L2 size, and against L2 size with one line "
                     "per bandwidth; the base a star.")
    elif not frame.empty:
        notes.append("The figure: a line per knob through the base and the entries that "
                     "change only it; entries that change other parameters as hollow "
                     "markers.")
    notes += opclass.missing_note([c for c in missing if c in CLASSES])
    if frame.empty:
        notes.insert(0, "No variant to compare: the file has one hardware entry.")
    elif frame["effective HBM (TB/s)"].isna().any():
        notes.append("Entries without an HBM bandwidth (no /variants table and none in "
                     "their YAML) plot nowhere.")
    return common.Table("roofline", "Speedup against HBM bandwidth and L2 size", frame, notes,
                        group=["GPUs", "base"])


def _keep(variants: pd.DataFrame, hw: int) -> float:
    keep = variants.loc[hw, "hbm_thermal_keep"]
    return 1.0 if not np.isfinite(keep) else float(keep)


def l2_differs(frame: pd.DataFrame) -> bool:
    """Whether the entries differ in L2 size (the roofline then has an L2 panel)."""
    return not frame.empty and frame["L2 (MiB)"].dropna().nunique() > 1


# The figure's two knobs: x column of the table, axis label, the parameters (words of
# knobs.PARAMS) that count as changing it.
KNOBS = {"HBM": ("effective HBM (TB/s)", "effective HBM bandwidth (TB/s)",
                 {"HBM bandwidth", "HBM thermal keep"}),
         "L2": ("L2 (MiB)", "L2 size (MiB)", {"L2 size"})}


def knob_set(differs: str) -> frozenset | None:
    """The figure knobs a `differs in` text touches (empty for the base); None when it
    changes a parameter outside them (drawn apart)."""
    words = knobs.words_of(differs)
    if differs != "base" and not words:
        return None
    touched = {k for k, (_, _, params) in KNOBS.items() if words & params}
    outside = words - set().union(*(params for _, _, params in KNOBS.values()))
    return None if outside else frozenset(touched)


def is_grid(frame: pd.DataFrame) -> bool:
    """Two-knob grid: some entries change both HBM and L2 (and nothing else), with at
    least two values of each among them."""
    sets = frame["differs in"].map(knob_set)
    both = frame[sets == frozenset(KNOBS)]
    return (not both.empty and both["effective HBM (TB/s)"].nunique() > 1
            and both["L2 (MiB)"].nunique() > 1)


def curves(frame: pd.DataFrame, gpus: int) -> dict:
    """What the figure draws at one GPU count: `grid` (two-knob mode), per knob a panel
    with its curves [(label, rows sorted by x)] and `rest` (entries changing something
    else, hollow markers), and `entries` (how many). One-knob mode: one curve per base
    through the base and the entries that change only that knob. Grid mode: one curve per
    (base, value of the other knob) through every entry that changes only the two (the
    base on the line of its own value, and drawn apart as a star)."""
    rows = frame[frame["GPUs"] == gpus] if not frame.empty else frame
    if rows.empty:  # one hardware entry, or nothing fits: no curve (the figure says so)
        return {"grid": False, "panels": [], "entries": 0, "rows": rows}
    grid = is_grid(rows)
    sets = rows["differs in"].map(knob_set) if not rows.empty else pd.Series(dtype=object)
    panels = []
    for knob, (xcol, xlabel, _) in KNOBS.items():
        if knob == "L2" and not l2_differs(rows):
            continue
        other = next(k for k in KNOBS if k != knob)
        ocol = KNOBS[other][0]
        inside = sets.map(lambda s, k=knob: s is not None and (grid or s <= {k}))
        drawn = rows[inside.astype(bool)]
        bases = list(dict.fromkeys(drawn["base"]))
        lines = []
        for base, group in drawn.groupby("base", sort=False):
            own = group["differs in"] == "base"
            keys = sorted(group[~own][ocol].unique()) if grid else [None]
            for value in keys:  # the base joins the line through its own other-knob value
                part = group if value is None else group[group[ocol] == value]
                name = "" if value is None else f"{other} {_knob_value(other, value)}"
                if len(bases) > 1:
                    name = (name + f" (base {base})").strip()
                lines.append((name, part.sort_values(xcol)))
        rest = rows[sets.isna().to_numpy()] if knob == "HBM" else rows.iloc[0:0]
        panels.append({"knob": knob, "x": xcol, "xlabel": xlabel, "curves": lines,
                       "rest": rest})
    return {"grid": grid, "panels": panels, "entries": len(rows), "rows": rows}


def _knob_value(knob: str, value: float) -> str:
    return f"{value:.2f} TB/s" if knob == "HBM" else f"{value:.4g} MiB"
