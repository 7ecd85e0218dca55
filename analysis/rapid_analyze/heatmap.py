"""`heatmap`: the best tokens/s/GPU over two knobs, each cell's best layout, empty cells
explained."""

from __future__ import annotations

import numpy as np
import pandas as pd

import rapid_results as rr

from . import common, knobs, textout


def axis_values(points: pd.DataFrame, column: str) -> list:
    """The values of a knob in display order: categories in their enum order, hardware in
    hardware_index order, numbers ascending."""
    values = points[column]
    if column == "hardware":
        order = points.drop_duplicates("hardware").sort_values("hardware_index")
        return order.hardware.tolist()
    if isinstance(values.dtype, pd.CategoricalDtype):
        present = set(values.astype(str))
        return [c for c in values.cat.categories if c in present]
    return sorted(values.unique().tolist())


def resolve_axes(points: pd.DataFrame, variants: pd.DataFrame, path: str, x: str,
                 y: str) -> tuple[str, str, list[str]]:
    """The columns the two knobs name: a layout column, hardware or num_gpus as they are, a
    /variants parameter (hbm_bandwidth or hbm_bandwidth_Bps, l2_size, ...) as its label
    (knobs.with_params adds it); and the parameter columns to add. UsageError naming the
    option for anything else."""
    columns, params = [], []
    for option, name in (("--x", x), ("--y", y)):
        param = knobs.resolve(name, variants)
        if name in common.AXES and name in points:
            columns.append(name)
        elif param is not None and param in variants and variants[param].notna().any():
            columns.append(knobs.label(param))
            params.append(param)
        else:
            known = [c for c in common.AXES if c in points]
            shown = [knobs.short_name(c) for c in rr.variant_params(variants)
                     if c in variants and variants[c].notna().any()]
            raise common.UsageError(f"{option} {name}: not a knob of {path} (expected a "
                                    f"layout column: {', '.join(known)}; or a hardware "
                                    f"parameter: {', '.join(shown) or 'none in this file'})")
    if columns[0] == columns[1]:
        raise common.UsageError(f"--x {x} --y {y}: the two axes must differ")
    return columns[0], columns[1], params


def per_entry(points: pd.DataFrame, column: str) -> bool:
    """Whether a column is a property of the hardware entry (one value per entry: hardware
    itself, a /variants parameter), not of the layout."""
    return bool((points.groupby("hardware_index")[column].nunique(dropna=False) <= 1).all()
                and points.hardware_index.nunique() > 1)


def heatmap_cells(points: pd.DataFrame, x: str, y: str,
                  baseline: pd.Series | None) -> common.Table:
    """One row per (y, x) cell: the best ok tokens/s/GPU in it, that row's layout and
    point, and a note: why it is empty ("no legal point", "all OOM", "infeasible", ...) or
    "baseline" for the cell of the baseline layout."""
    ok = common.ok_rows(points)
    xs, ys = axis_values(points, x), axis_values(points, y)
    entry_axes = per_entry(points, x) and per_entry(points, y)  # a cell is a set of entries
    hw_note = bool(len(points)) and (
        points.groupby([x, y], observed=True).hardware_index.nunique().max() > 1)
    gpu_note = points.num_gpus.nunique() > 1 and "num_gpus" not in (x, y)
    base_cell = None
    if baseline is not None:
        base_cell = (_plain(baseline[y]), _plain(baseline[x]))
    rows = []
    for yv in ys:
        for xv in xs:
            cell = points[(points[x] == xv) & (points[y] == yv)]
            fits = ok.loc[ok.index.intersection(cell.index)]
            row = {y: _plain(yv), x: _plain(xv), "best tokens/s/GPU": np.nan,
                   "layout": "", "point": np.nan, "note": ""}
            if cell.empty:
                row["note"] = "no such entry" if entry_axes else "no legal point"
            elif fits.empty:
                row["note"] = common.status_words(cell.status.astype(str))
            else:
                best = fits.loc[fits.tokens_per_s_per_gpu.idxmax()]
                layout = common.short_layout(best)
                if hw_note:
                    layout += f" on {best.hardware}"
                if gpu_note:
                    layout += f", {int(best.num_gpus)} GPUs"
                row.update({"best tokens/s/GPU": best.tokens_per_s_per_gpu,
                            "layout": layout, "point": int(best.name)})
            if base_cell == (row[y], row[x]):
                row["note"] = ("baseline; " + row["note"]).rstrip("; ")
            rows.append(row)
    frame = pd.DataFrame(rows, columns=[y, x, "best tokens/s/GPU", "layout", "point", "note"])
    notes = [f"Best tokens/s/GPU over {x} (x) and {y} (y) among the rows that fit; empty "
             "cells: no legal point (the sweep has no layout there), no such entry (no "
             "hardware entry has both values), all OOM, infeasible."]
    over = _over(points, x, y, hw_note, gpu_note)
    if over:
        notes.append(f"Each cell is the best {over}; its layout names the entry"
                     + (" and GPU count" if gpu_note else "") + " it is on.")
    if base_cell is not None and frame.note.str.startswith("baseline").any():
        notes.append(f"Outlined: the baseline layout's cell ({y} "
                     f"{textout.format_value(y, base_cell[0])}, {x} "
                     f"{textout.format_value(x, base_cell[1])}; point {baseline.name}).")
    if ok.empty:
        notes.insert(0, "No layout fits in this selection.")
    title = f"Best tokens/s/GPU over {x} x {y}" + (f", each cell the best {over}" if over
                                                    else "")
    return common.Table("heatmap", title, frame, notes, group=[y])


def _over(points: pd.DataFrame, x: str, y: str, hw_note: bool, gpu_note: bool) -> str:
    """What a cell's best is taken over when it mixes entries or GPU counts: "over all 9
    hardware entries", "over the hardware entries that share its values", "... and both
    GPU counts"."""
    parts = []
    if hw_note:
        n = points.hardware_index.nunique()
        parts.append(f"over all {n} hardware entries" if not (per_entry(points, x)
                                                             or per_entry(points, y))
                     else "over the hardware entries that share its values")
    if gpu_note:
        parts.append(f"over all {points.num_gpus.nunique()} GPU counts")
    return " and ".join(parts)


def _plain(value):
    """numpy scalars as Python ones (for comparisons and printing)."""
    return value.item() if isinstance(value, np.generic) else value
