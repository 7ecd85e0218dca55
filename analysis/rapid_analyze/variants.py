"""`variants`: variant x op class -> speedup over the base hardware at fixed layout, and
the end-to-end speedup of each variant's best layout over the base's best."""

from __future__ import annotations

import pandas as pd

from . import common, opclass


def variant_table(points: pd.DataFrame, variants: pd.DataFrame,
                  hardware: str | None = None) -> common.Table:
    """One row per (GPU count, variant): the op-class speedups at fixed layout, end to end
    at that layout, best vs best, both layouts; `hardware` keeps one variant's rows."""
    classes, missing = opclass.step_classes(points)
    fixed = opclass.fixed_layout(points, variants)
    names = variants["name"]
    rows = []
    for _, f in fixed.iterrows():
        name = names[f.hardware_index]
        if hardware is not None and name != hardware:
            continue
        row = {"GPUs": int(f.num_gpus), "variant": name, "base": names[f.base_index]}
        row.update({f"{label} (x)": f[col] for col, label in classes.items()})
        row["end to end, fixed layout (x)"] = f.end_to_end
        row["best vs best (x)"] = f.best_vs_best
        if (fixed.base_index != 0).any():  # some base is not the first entry: both figures
            row[f"best vs {names[0]} (x)"] = f.best_vs_first
        row["base's best layout"] = (common.short_layout(points.loc[f.base_point])
                                     if f.base_point >= 0 else "")
        row["variant's best layout"] = (common.short_layout(points.loc[f.best_point])
                                        if f.best_point >= 0 else "")
        row["note"] = f.note
        rows.append(row)
    frame = pd.DataFrame(rows)
    notes = ["Op-class speedups are at fixed layout: the base's best layout at each GPU "
             "count, run on the variant (class time on the base / class time on the "
             "variant, per row the bottleneck stage). Best vs best: the variant's best "
             "tokens/s/GPU / the base's best at the same GPU count (the layout may differ)."]
    notes += opclass.missing_note(missing)
    changes = [f"{n}: {o}" for n, o in zip(variants["name"], variants["overrides"])
               if o and n in set(frame.get("variant", []))]
    if changes:
        notes.append("Overrides: " + "; ".join(changes) + ".")
    if frame.empty:
        notes.insert(0, f"No row for {hardware}: it is a base (the others are compared "
                        "with it)." if hardware is not None else
                     "No variant to compare: the file has one hardware entry.")
        return common.Table("variants", "Hardware variants against their base", frame, notes)
    empty = [c for c in frame.columns if c.endswith("(x)") and frame[c].isna().all()
             and not c.startswith(("end to end", "best vs"))]
    # (the class columns only: end to end and best vs best stay, NaN or not)
    if empty:
        frame = frame.drop(columns=empty)
    if empty and frame["end to end, fixed layout (x)"].notna().any():
        notes.append("Classes with no time on either side, left out: "
                     + ", ".join(c[:-4] for c in empty) + ".")
    if not frame["note"].astype(str).str.len().any():
        frame = frame.drop(columns="note")
    return common.Table("variants", "Hardware variants against their base", frame, notes)
