"""Why an op class got slower on a variant (speedup below 1x), in notes built from the
data: a parameter the class depends on is lower than the base's, or the class is
communication left exposed and the compute that hid it got shorter."""

from __future__ import annotations

import numpy as np
import pandas as pd

from . import knobs

# Below this a class counts as slower (rounding and 1% effects are left alone).
SLOWER = 0.99

_COMPUTE = ["tensor_peak_bf16_FLOPs", "tensor_peak_fp8_FLOPs", "sm_clock_Hz", "num_sms",
            "hbm_bandwidth_Bps", "l2_size_bytes", "l2_bandwidth_Bps"]
_LINKS = ["nvlink_bandwidth_Bps", "nic_bandwidth_Bps"]

# The /variants parameters each class's time depends on (docs/variants.md section 5): a
# variant that lowers one of them can make the class slower directly.
DRIVERS = {"gemm_time_s": _COMPUTE, "attention_time_s": _COMPUTE, "compute_time_s": _COMPUTE,
           "memory_bound_time_s": ["hbm_bandwidth_Bps"],
           "interference_time_s": ["hbm_bandwidth_Bps", "num_sms", *_LINKS],
           "tp_comm_time_s": _LINKS, "cp_comm_time_s": _LINKS, "ep_comm_time_s": _LINKS,
           "pp_comm_time_s": _LINKS, "dp_exposed_time_s": _LINKS,
           "bubble_time_s": [*_COMPUTE, *_LINKS], "optimizer_time_s": ["hbm_bandwidth_Bps"],
           "host_bound_time_s": [], "offload_time_s": []}

# Classes that are communication left exposed after overlapping compute (exposed = traffic
# - overlap), with the column of their whole traffic where the file has one.
OVERLAPPED = {"tp_comm_time_s": None, "cp_comm_time_s": None, "ep_comm_time_s": None,
              "pp_comm_time_s": None, "dp_exposed_time_s": "dp_comm_time_s"}


def _entries(rows: pd.DataFrame, most: int = 3) -> str:
    """"4 entries (a, b, c and 1 more)": the distinct entries of some rows (a variant at
    several GPU counts counts once)."""
    names = list(dict.fromkeys(rows.variant))
    shown = ", ".join(names[:most]) + (f" and {len(names) - most} more"
                                       if len(names) > most else "")
    return f"{len(names)} entr{'y' if len(names) == 1 else 'ies'} ({shown})"


def _lowered(variants: pd.DataFrame, hw: int, base: int, col: str) -> list[str]:
    """The parameters `col` depends on that entry `hw` has lower than its base."""
    return [p for p in DRIVERS.get(col, [])
            if variants.loc[hw, p] < variants.loc[base, p] * (1 - 1e-9)]


def _lower_sentence(label: str, rows: pd.DataFrame, variants: pd.DataFrame,
                    lowered: dict) -> str:
    """"memory-bound below 1x on 12 entries (...): their HBM bandwidth is lower than the
    base's (2.00-3.00 TB/s against 3.35 TB/s)"."""
    params = list(dict.fromkeys(p for ps in lowered.values() for p in ps))
    parts = []
    for p in params:
        values = sorted({float(variants.loc[hw, p]) for hw, ps in lowered.items() if p in ps})
        bases = sorted({float(variants.loc[int(b), p]) for b in rows.base_index})
        span = knobs.value_text(p, values[0]) + (
            "" if len(values) == 1 else f" to {knobs.value_text(p, values[-1])}")
        parts.append(f"{knobs.describe(p)[0]} {span} against "
                     + " / ".join(knobs.value_text(p, b) for b in bases))
    return (f"{label} below 1x on {_entries(rows)}: "
            f"a parameter it depends on is lower than the base's ({'; '.join(parts)}).")


def _exposed_sentence(label: str, col: str, rows: pd.DataFrame, points: pd.DataFrame,
                      fixed: pd.DataFrame) -> str:
    """Exposed communication grew: the compute that overlaps it got shorter (exposed =
    traffic - overlap), with the numbers of the slowest entry."""
    worst = rows.loc[rows["speedup (x)"].idxmin()]
    f = fixed[(fixed.hardware_index == worst.hardware_index)
              & (fixed.num_gpus == worst.GPUs)].iloc[0]
    b, v = points.loc[f.base_point], points.loc[f.variant_point]
    text = (f"{label} below 1x on {_entries(rows)} "
            "grows because the compute that hid it got shorter: exposed = traffic - overlap, "
            f"and the overlap is bounded by the compute beside it (on {worst.variant}: "
            f"compute {b.compute_time_s:.4g} s -> {v.compute_time_s:.4g} s")
    traffic = OVERLAPPED[col]
    if traffic is not None and traffic in points:
        same = np.isclose(b[traffic], v[traffic], rtol=1e-6)
        text += (f", traffic {b[traffic]:.4g} s" + (" on both" if same else
                                                    f" -> {v[traffic]:.4g} s"))
    return text + f", exposed {worst['on base (s)']:.4g} s -> {worst['on variant (s)']:.4g} s)."


def _other_sentence(label: str, rows: pd.DataFrame) -> str:
    worst = rows.loc[rows["speedup (x)"].idxmin()]
    return (f"{label} below 1x on {_entries(rows)} "
            "though no parameter it depends on is lower: it follows from the other classes' "
            f"change (on {worst.variant}: {worst['on base (s)']:.4g} s -> "
            f"{worst['on variant (s)']:.4g} s; the times are the bottleneck stage's, where "
            "overlap couples the classes).")


def slower_notes(frame: pd.DataFrame, fixed: pd.DataFrame, points: pd.DataFrame,
                 variants: pd.DataFrame, classes: dict) -> list[str]:
    """One or two sentences per op class that some variant made slower than SLOWER."""
    index = {name: i for i, name in enumerate(variants["name"])}
    notes = []
    for col, label in classes.items():
        rows = frame[(frame["op class"] == label) & (frame["speedup (x)"] < SLOWER)].copy()
        if rows.empty:
            continue
        rows["hardware_index"] = rows.variant.map(index)
        rows["base_index"] = rows.base.map(index)
        lowered = {int(r.hardware_index): _lowered(variants, int(r.hardware_index),
                                                   int(r.base_index), col)
                   for _, r in rows.iterrows()}
        direct = rows[[bool(lowered[int(h)]) for h in rows.hardware_index]]
        indirect = rows.drop(direct.index)
        if not direct.empty:
            notes.append(_lower_sentence(label, direct, variants,
                                         {h: lowered[h] for h in direct.hardware_index}))
        if not indirect.empty and col in OVERLAPPED:
            notes.append(_exposed_sentence(label, col, indirect, points, fixed))
        elif not indirect.empty:
            notes.append(_other_sentence(label, indirect))
    return notes
