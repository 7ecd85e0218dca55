"""`breakdown`: step time by op class and memory by kind: in a file with variants, the base's
best layout on the base and on each variant (what each class gains on the same layout),
then the top N layouts."""

from __future__ import annotations

import numpy as np
import pandas as pd

import rapid_results as rr

from . import common, opclass

MEMORY = {"weights_bytes": "weights", "grads_bytes": "grads",
          "optimizer_bytes": "optimizer states", "activations_bytes": "activations",
          "reserve_bytes": "reserve"}
FIXED = "base's best layout"


def attribution_points(every: pd.DataFrame, variants: pd.DataFrame,
                       hardware: str | None = None) -> list[int]:
    """Per (GPU count, base): the base's best layout on the base, then the same layout on
    each of its variants where it fits; `hardware` keeps the base and that variant."""
    fixed = opclass.fixed_layout(every, variants)
    fixed = fixed[(fixed.base_point >= 0)]
    if hardware is not None:
        fixed = fixed[variants["name"].reindex(fixed.hardware_index).to_numpy() == hardware]
    out = []
    for _, group in fixed.groupby(["num_gpus", "base_index"], sort=True):
        out.append(int(group.base_point.iloc[0]))
        ok = group[np.isfinite(group.end_to_end)]
        out += [int(p) for p in ok.variant_point]
    return out


def breakdown_table(points: pd.DataFrame, n: int, every: pd.DataFrame | None = None,
                    variants: pd.DataFrame | None = None,
                    hardware: str | None = None) -> common.Table:
    """Step time split by op class (s), with what the classes leave unexplained ("other")
    when they leave any, and memory by kind (GiB) against the capacity: the attribution
    rows (attribution_points, when `every` and `variants` are given and the file has
    variants), then the n fastest ok rows of `points`."""
    classes, missing = opclass.step_classes(points)
    best = common.ok_rows(points).nlargest(n, "tokens_per_s_per_gpu")
    fixed = (attribution_points(every, variants, hardware)
             if every is not None and variants is not None and len(variants) > 1 else [])
    rows = pd.concat(([every.loc[fixed]] if fixed else []) + [best])
    frame = pd.DataFrame({"view": [FIXED] * len(fixed)
                          + [f"top {n} #{k}" for k in range(1, len(best) + 1)],
                          "GPUs": rows.num_gpus.astype(int).to_numpy(),
                          "hardware": rows.hardware.to_numpy(),
                          "layout": [common.short_layout(r) for _, r in rows.iterrows()],
                          "step time (s)": rows.step_time_s.to_numpy()})
    for col, label in classes.items():
        frame[f"{label} (s)"] = rows[col].to_numpy()
    other = rows.step_time_s - rows[list(classes)].sum(axis=1)
    has_other = bool((other.abs() > 1e-9 * rows.step_time_s).any())
    if has_other:
        frame["other (s)"] = other.to_numpy()
    for col, label in MEMORY.items():
        if col in rows:
            frame[f"{label} (GiB)"] = rows[col].to_numpy() / rr.GIB
    frame["peak (GiB)"] = rows.peak_memory_bytes.to_numpy() / rr.GIB
    frame["capacity (GiB)"] = rows.memory_capacity_bytes.to_numpy() / rr.GIB
    frame["point"] = rows.index.astype(int)
    notes = []
    if fixed:
        notes.append(f"{FIXED}: the base's best layout at each GPU count on the base and on "
                     "each variant where it fits (the same layout, so the bars show what each "
                     "class gains on the variant); then the fastest layouts of the selection.")
    notes.append(f"top {n}: the {len(best)} fastest layouts of the selection. Step time by op "
                 "class of the bottleneck stage"
                 + (" (other: the step time the classes do not account for)" if has_other
                    else "")
                 + "; memory of the fullest GPU by kind, against its capacity.")
    zero = [c for c in frame.columns if c.endswith("(s)") and c != "step time (s)"
            and (frame[c].fillna(0).abs() <= 1e-9 * frame["step time (s)"]).all()]
    if zero and not frame.empty:
        frame = frame.drop(columns=zero)
        notes.append("Classes with no time in any of these layouts, left out: "
                     + ", ".join(c[:-4] for c in zero) + ".")
    notes += opclass.missing_note(missing)
    if best.empty:
        notes.insert(0, "No layout fits: nothing to break down.")
    title = ("Step time and memory: the base's best layout on each entry, then the "
             f"{len(best)} fastest" if fixed else "Step time and memory of the best layouts")
    return common.Table("breakdown", title, frame, notes, group=["GPUs"])
