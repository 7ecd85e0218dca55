"""`pareto`: Pareto fronts of throughput (tokens/s/GPU and tokens/s) against GPU count
(fewer is better), memory headroom (more is better) and energy per token (less is
better), per hardware variant."""

from __future__ import annotations

import numpy as np
import pandas as pd

import rapid_results as rr

from . import common

THROUGHPUTS = {"tokens_per_s_per_gpu": "tokens/s/GPU", "tokens_per_s": "tokens/s"}
# Every row's quantities, as the table names them (the front's two among them).
# x quantity -> (label, True when more is better)
OBJECTIVES = {"num_gpus": ("GPUs", False), "headroom_GiB": ("memory headroom (GiB)", True),
              "energy_J_per_token": ("energy (J/token)", False)}
COLUMNS = {**{c: label for c, (label, _) in OBJECTIVES.items()}, **THROUGHPUTS}


def with_objectives(ok: pd.DataFrame) -> pd.DataFrame:
    """ok rows with headroom_GiB (capacity - peak) and energy_J_per_token (energy of a
    step / tokens of a step; NaN without energy_per_step_J)."""
    ok = ok.copy()
    ok["headroom_GiB"] = (ok.memory_capacity_bytes - ok.peak_memory_bytes) / rr.GIB
    if "energy_per_step_J" in ok:
        tokens = ok.tokens_per_s * ok.step_time_s
        ok["energy_J_per_token"] = ok.energy_per_step_J / tokens
    else:
        ok["energy_J_per_token"] = np.nan
    return ok


def front(frame: pd.DataFrame, x: str, y: str, more_x_better: bool) -> pd.DataFrame:
    """The rows no other row beats on both x and y (y: more is better), best x first."""
    frame = frame[np.isfinite(frame[x]) & np.isfinite(frame[y])]
    ordered = frame.sort_values([x, y], ascending=[not more_x_better, False], kind="stable")
    best = -np.inf
    keep = []
    for point, value in ordered[y].items():
        if value > best:
            keep.append(point)
            best = value
    return ordered.loc[keep]


def active(ok: pd.DataFrame) -> tuple[dict, dict]:
    """(objectives, throughputs) worth a front for these rows: against GPU count only with
    several counts (tokens/s too only then), against energy only with energy figures."""
    objectives, throughputs = dict(OBJECTIVES), dict(THROUGHPUTS)
    if ok.num_gpus.nunique() < 2:
        objectives.pop("num_gpus")
        throughputs.pop("tokens_per_s")
    if not np.isfinite(ok.energy_J_per_token).any():
        objectives.pop("energy_J_per_token")
    return objectives, throughputs


def pareto_fronts(points: pd.DataFrame) -> common.Table:
    """Front points of every (throughput, objective) pair, per hardware variant."""
    ok = with_objectives(common.ok_rows(points))
    notes = ["Per hardware variant: the layouts no other layout beats on both throughput "
             "and the other axis (fewer GPUs, more memory headroom = capacity - peak, less "
             "energy per token = energy_per_step_J / tokens per step)."]
    objectives, throughputs = active(ok)
    if "num_gpus" not in objectives:
        notes.append("One GPU count: no front against GPU count, and tokens/s (= tokens/s/GPU "
                     "x GPUs) has the fronts of tokens/s/GPU.")
    if "energy_J_per_token" not in objectives:
        notes.append("Energy per token: skipped (no energy_per_step_J in this file, or the "
                     "sweep ran without power).")
    rows = []
    for hw_index, group in ok.groupby("hardware_index", sort=True):
        for y, y_label in throughputs.items():
            for x, (x_label, more) in objectives.items():
                for point, r in front(group, x, y, more).iterrows():
                    rows.append({"front": f"{y_label} vs {x_label}", "hardware": r.hardware,
                                 **{label: r[col] for col, label in COLUMNS.items()},
                                 "layout": common.short_layout(r), "point": int(point)})
    frame = pd.DataFrame(rows, columns=["front", "hardware", *COLUMNS.values(), "layout",
                                        "point"])
    if "energy_J_per_token" not in objectives:
        frame = frame.drop(columns=COLUMNS["energy_J_per_token"])
    if frame.empty:
        notes.insert(0, "No layout fits: no front.")
    return common.Table("pareto", "Pareto fronts of throughput", frame, notes,
                        group=["front", "hardware"])


def head_per_front(table: common.Table, n: int) -> common.Table:
    """The table with at most n rows per (front, hardware entry): the n highest
    throughputs of each, fastest first (the figure draws every front point)."""
    frame = table.frame
    if frame.empty:
        return table
    order = {k: i for i, k in enumerate(dict.fromkeys(zip(frame.front, frame.hardware)))}
    ranked = frame.assign(
        _g=[order[k] for k in zip(frame.front, frame.hardware)],
        _y=[r[f.split(" vs ")[0]] for f, (_, r) in zip(frame.front, frame.iterrows())])
    kept = (ranked.sort_values(["_g", "_y"], ascending=[True, False], kind="stable")
            .groupby("_g", sort=False).head(n))
    cut = len(frame) - len(kept)
    notes = list(table.notes)
    if cut:
        notes.append(f"Rows: the {n} highest throughputs of each front, fastest first "
                     f"(--top N for more); the figure draws all {len(frame)} front points.")
    return common.Table(table.key, table.title, kept.drop(columns=["_g", "_y"])
                        .reset_index(drop=True), notes, group=table.group)
