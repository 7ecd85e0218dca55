"""`heatmap`: the best tokens/s/GPU over two knobs, each cell's best layout, empty cells
explained."""

from __future__ import annotations

import numpy as np
import pandas as pd

from . import common


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


def check_axes(points: pd.DataFrame, path: str, x: str, y: str) -> None:
    for option, column in (("--x", x), ("--y", y)):
        if column not in common.AXES or column not in points:
            known = [c for c in common.AXES if c in points]
            raise common.UsageError(f"{option} {column}: not a layout column of {path} "
                                    f"(expected one of: {', '.join(known)})")
    if x == y:
        raise common.UsageError(f"--x {x} --y {y}: the two axes must differ")


def heatmap_cells(points: pd.DataFrame, x: str, y: str,
                  baseline: pd.Series | None) -> common.Table:
    """One row per (y, x) cell: the best ok tokens/s/GPU in it, that row's layout and
    point, and a note: why it is empty ("no legal point", "all OOM", "infeasible", ...) or
    "baseline" for the cell of the baseline layout."""
    ok = common.ok_rows(points)
    xs, ys = axis_values(points, x), axis_values(points, y)
    hw_note = points.hardware.nunique() > 1 and "hardware" not in (x, y)
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
                row["note"] = "no legal point"
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
             "cells: no legal point (the sweep has no layout there), all OOM, infeasible."]
    if base_cell is not None and frame.note.str.startswith("baseline").any():
        notes.append(f"Outlined: the baseline layout's cell ({y} {base_cell[0]}, "
                     f"{x} {base_cell[1]}; point {baseline.name}).")
    if ok.empty:
        notes.insert(0, "No layout fits in this selection.")
    return common.Table("heatmap", f"Best tokens/s/GPU over {x} x {y}", frame, notes,
                        group=[y])


def _plain(value):
    """numpy scalars as Python ones (for comparisons and printing)."""
    return value.item() if isinstance(value, np.generic) else value
