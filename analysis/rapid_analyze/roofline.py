"""`roofline`: predicted speedup against HBM bandwidth (and L2 size) for GEMM, attention,
memory-bound ops and end to end, at fixed layout (the base's best) and best per variant."""

from __future__ import annotations

import numpy as np
import pandas as pd

from . import common, opclass

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
                   "differs in": differs(variants, hw, base)}
            for col, label in shown.items():
                row[f"{label} (x)"] = unit if f is None else f[col]
            row["end to end, fixed layout (x)"] = unit if f is None else f.end_to_end
            row["best vs best (x)"] = unit if f is None else f.best_vs_best
            rows.append(row)
    frame = pd.DataFrame(rows)
    notes = ["Fixed layout: the base's best layout at each GPU count on every entry; best "
             "vs best: each entry's own best layout. The base is the row with speedup 1. "
             "Effective HBM: the sustained bandwidth of /variants (nominal x the share kept "
             "under a fixed thermal derate), the x axis of the figure. differs in: the "
             "knobs an entry changes against its base; the figure draws a line per knob "
             "through the base and the entries that change only it, the others as "
             "separate markers."]
    notes += opclass.missing_note([c for c in missing if c in CLASSES])
    if frame.empty:
        notes.insert(0, "No variant to compare: the file has one hardware entry.")
    elif frame["effective HBM (TB/s)"].isna().any():
        notes.append("Entries without an HBM bandwidth (no /variants table and none in "
                     "their YAML) plot nowhere.")
    return common.Table("roofline", "Speedup against HBM bandwidth and L2 size", frame, notes,
                        group=["GPUs", "base"])


def differs(variants: pd.DataFrame, hw: int, base: int) -> str:
    """Which roofline knobs an entry changes against its base: "HBM", "L2", "HBM, L2",
    "other" (neither: a knob the roofline does not show), "base" for the base itself."""
    if hw == base:
        return "base"
    knobs = [label for col, label in (("hbm_bandwidth_Bps", "HBM"), ("l2_size_bytes", "L2"))
             if not np.isclose(variants.loc[hw, col], variants.loc[base, col], rtol=1e-9)]
    return ", ".join(knobs) or "other"


def _keep(variants: pd.DataFrame, hw: int) -> float:
    keep = variants.loc[hw, "hbm_thermal_keep"]
    return 1.0 if not np.isfinite(keep) else float(keep)


def l2_differs(frame: pd.DataFrame) -> bool:
    """Whether the entries differ in L2 size (the roofline then has an L2 panel)."""
    return not frame.empty and frame["L2 (MiB)"].dropna().nunique() > 1
