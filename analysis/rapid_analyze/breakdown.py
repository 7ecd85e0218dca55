"""`breakdown`: step time by op class and memory by kind for the top N layouts."""

from __future__ import annotations

import pandas as pd

import rapid_results as rr

from . import common, opclass

MEMORY = {"weights_bytes": "weights", "grads_bytes": "grads",
          "optimizer_bytes": "optimizer states", "activations_bytes": "activations",
          "reserve_bytes": "reserve"}


def breakdown_table(points: pd.DataFrame, n: int) -> common.Table:
    """The n fastest ok rows: step time split by op class (s) with what the classes leave
    unexplained ("other"), and memory by kind (GiB) against the capacity."""
    classes, missing = opclass.step_classes(points)
    best = common.ok_rows(points).nlargest(n, "tokens_per_s_per_gpu")
    frame = pd.DataFrame({"rank": range(1, len(best) + 1), "GPUs": best.num_gpus.astype(int),
                          "hardware": best.hardware,
                          "layout": [common.short_layout(r) for _, r in best.iterrows()],
                          "step time (s)": best.step_time_s})
    for col, label in classes.items():
        frame[f"{label} (s)"] = best[col]
    other = best.step_time_s - best[list(classes)].sum(axis=1)
    if (other.abs() > 1e-9 * best.step_time_s).any():
        frame["other (s)"] = other
    for col, label in MEMORY.items():
        if col in best:
            frame[f"{label} (GiB)"] = best[col] / rr.GIB
    frame["peak (GiB)"] = best.peak_memory_bytes / rr.GIB
    frame["capacity (GiB)"] = best.memory_capacity_bytes / rr.GIB
    frame["point"] = best.index.astype(int)
    frame = frame.reset_index(drop=True)
    notes = [f"The {len(best)} fastest layouts of the selection. Step time by op class of "
             "the bottleneck stage (other: the step time the classes do not account for); "
             "memory of the fullest GPU by kind, against its capacity."]
    zero = [c for c in frame.columns if c.endswith("(s)") and c != "step time (s)"
            and (frame[c].fillna(0).abs() <= 1e-9 * frame["step time (s)"]).all()]
    if zero and not frame.empty:
        frame = frame.drop(columns=zero)
        notes.append("Classes with no time in any of these layouts, left out: "
                     + ", ".join(c[:-4] for c in zero) + ".")
    notes += opclass.missing_note(missing)
    if frame.empty:
        notes = ["No layout fits: nothing to break down."]
    return common.Table("breakdown", "Step time and memory of the best layouts", frame, notes)
