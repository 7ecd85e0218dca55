"""`variants`: per variant and op class, the speedup over the base hardware at fixed layout
with why it moves the step as little or as much as it does (the class's share of the base's
step and the end-to-end bound if only it changed), then the step end to end at that layout
and each one's best layout against the base's best."""

from __future__ import annotations

import numpy as np
import pandas as pd

from . import common, opclass, slower

FIXED = "end to end, fixed layout"
BEST = "best vs best"
COLUMNS = ["GPUs", "variant", "base", "op class", "share of base step (%)", "on base (s)",
           "on variant (s)", "speedup (x)", "end to end if only it changed (x)", "layout",
           "note"]


def _class_rows(head: dict, b: pd.Series | None, v: pd.Series | None, f: pd.Series,
                classes: dict) -> list[dict]:
    """One row per op class: its time on the base's best layout (b) and on the same layout
    on the variant (v, None when it does not fit there), share, speedup and bound."""
    rows = []
    for col, label in classes.items():
        base_t = opclass.class_time(b, col) if b is not None else np.nan
        var_t = opclass.class_time(v, col) if v is not None else np.nan
        step = float(b.step_time_s) if b is not None else np.nan
        rows.append({**head, "op class": label, "share of base step (%)": 100 * base_t / step,
                     "on base (s)": base_t, "on variant (s)": var_t, "speedup (x)": f[col],
                     "end to end if only it changed (x)": opclass.alone_bound(step, base_t,
                                                                              var_t)})
    return rows


def _step_rows(head: dict, points: pd.DataFrame, f: pd.Series, first: str | None) -> list[dict]:
    """The step at the fixed layout, each one's best against the base's best (and against
    the first entry's best when `first` names it)."""
    def step(point):
        return points.loc[point, "step_time_s"] if point >= 0 else np.nan

    def layout(point):
        return common.short_layout(points.loc[point]) if point >= 0 else ""

    rows = [{**head, "op class": FIXED, "share of base step (%)": 100.0,
             "on base (s)": step(f.base_point),
             "on variant (s)": step(f.variant_point) if np.isfinite(f.end_to_end) else np.nan,
             "speedup (x)": f.end_to_end, "end to end if only it changed (x)": f.end_to_end,
             "layout": layout(f.base_point), "note": f.note},
            {**head, "op class": BEST, "on base (s)": step(f.base_point),
             "on variant (s)": step(f.best_point), "speedup (x)": f.best_vs_best,
             "layout": layout(f.best_point)}]
    if first is not None:
        rows.append({**head, "op class": f"best vs {first}'s best", "speedup (x)":
                     f.best_vs_first, "on variant (s)": step(f.best_point),
                     "layout": layout(f.best_point)})
    return rows


def variant_table(points: pd.DataFrame, variants: pd.DataFrame,
                  hardware: str | None = None) -> common.Table:
    """Rows per (GPU count, variant): one per op class, then the step at the fixed layout
    and best vs best; `hardware` keeps one variant's rows."""
    classes, missing = opclass.step_classes(points)
    fixed = opclass.fixed_layout(points, variants)
    names = variants["name"]
    first = names[0] if (fixed.base_index != 0).any() else None
    rows = []
    for _, f in fixed.iterrows():
        if hardware is not None and names[f.hardware_index] != hardware:
            continue
        head = {"GPUs": int(f.num_gpus), "variant": names[f.hardware_index],
                "base": names[f.base_index]}
        b = points.loc[f.base_point] if f.base_point >= 0 else None
        v = points.loc[f.variant_point] if np.isfinite(f.end_to_end) else None
        rows += _class_rows(head, b, v, f, classes)
        rows += _step_rows(head, points, f, first)
    frame = pd.DataFrame(rows, columns=COLUMNS)
    frame["layout"] = frame["layout"].fillna("")
    frame["note"] = frame["note"].fillna("")
    notes = ["Per variant and op class, at fixed layout: the base's best layout at each GPU "
             "count, run on the variant (per row the bottleneck stage). share: the class's "
             "time / the base's step; speedup: class time on the base / on the variant; end "
             "to end if only it changed: the step's speedup were this class the only one to "
             "change (Amdahl: 1 / (1 - share x (1 - 1/speedup))), so a class far faster "
             "but a small share moves the step little. Best vs best: the variant's best "
             "tokens/s/GPU / the base's best at the same GPU count (the layout may differ)."]
    notes += opclass.missing_note(missing)
    if frame.empty:
        notes.insert(0, f"No row for {hardware}: it is a base (the others are compared "
                        "with it)." if hardware is not None else
                     "No variant to compare: the file has one hardware entry.")
        return common.Table("variants", "Hardware variants against their base", frame, notes)
    empty = [label for label in classes.values() if _no_time(frame[frame["op class"] == label])]
    frame = frame[~frame["op class"].isin(empty)].reset_index(drop=True)
    if empty and frame["speedup (x)"].notna().any():
        notes.append("Classes with no time on either side, left out: " + ", ".join(empty) + ".")
    notes += slower.slower_notes(frame, fixed, points, variants, classes)
    if not frame["note"].str.len().any():
        frame = frame.drop(columns="note")
    return common.Table("variants", "Hardware variants against their base", frame, notes,
                        group=["GPUs", "variant"],
                        appendix=common.overrides_appendix(variants, frame["variant"]))


def _no_time(rows: pd.DataFrame) -> bool:
    """No time on either side in any of these rows (so no speedup anywhere)."""
    times = rows[["on base (s)", "on variant (s)"]].fillna(0).to_numpy()
    return bool(rows["speedup (x)"].isna().all() and (times == 0).all())


def matrix(frame: pd.DataFrame) -> pd.DataFrame:
    """The table as variant x (op class, then end to end and best vs best) speedups, one
    row per (GPU count, variant) labelled "variant (N GPUs)", for the figure."""
    if frame.empty:
        return pd.DataFrame()
    keys = list(dict.fromkeys(zip(frame["GPUs"], frame["variant"])))
    columns = list(dict.fromkeys(frame["op class"]))
    grid = frame.pivot_table(index=["GPUs", "variant"], columns="op class",
                             values="speedup (x)", aggfunc="first", dropna=False)
    grid = grid.reindex(index=pd.MultiIndex.from_tuples(keys), columns=columns)
    grid.index = [f"{v} ({g} GPUs)" for g, v in keys]
    return grid
