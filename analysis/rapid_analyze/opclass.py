"""Op classes of the step (per row, the bottleneck stage) and their speedups at fixed
layout: the base hardware's best layout at each GPU count, run on each variant."""

from __future__ import annotations

import pandas as pd

from . import common

# The split of compute into kernel classes (they sum to compute_time_s).
COMPUTE_SPLIT = {"gemm_time_s": "gemm", "attention_time_s": "attention",
                 "memory_bound_time_s": "memory-bound"}
# The rest of the step, in the order a stacked bar shows it.
STEP_REST = {"interference_time_s": "interference", "tp_comm_time_s": "TP comm",
             "cp_comm_time_s": "CP comm", "ep_comm_time_s": "EP comm",
             "pp_comm_time_s": "PP comm", "dp_exposed_time_s": "DP exposed",
             "bubble_time_s": "bubble", "optimizer_time_s": "optimizer",
             "host_bound_time_s": "host-bound", "offload_time_s": "offload"}


def step_classes(points: pd.DataFrame) -> tuple[dict, list[str]]:
    """(column -> label of the classes the file has, the class columns it lacks). Without
    the compute split, compute_time_s stands for it."""
    wanted = {**COMPUTE_SPLIT, **STEP_REST}
    missing = [c for c in wanted if c not in points]
    if all(c in points for c in COMPUTE_SPLIT):
        classes = dict(COMPUTE_SPLIT)
    else:
        classes = {"compute_time_s": "compute"} if "compute_time_s" in points else {}
    classes.update({c: label for c, label in STEP_REST.items() if c in points})
    return classes, missing


def missing_note(missing: list[str]) -> list[str]:
    if not missing:
        return []
    split = [c for c in COMPUTE_SPLIT if c in missing]
    text = f"Columns not in this file: {', '.join(missing)}"
    if split:
        text += " (compute_time_s stands for the gemm/attention/memory-bound split)"
    return [text + "."]


def class_time(row: pd.Series, col: str) -> float:
    """A class's time on a row, rounding noise (below 1e-9 of the step) taken as 0."""
    t = float(row[col])
    return 0.0 if abs(t) < 1e-9 * abs(float(row.step_time_s)) else t


def best_rows(ok: pd.DataFrame) -> pd.DataFrame:
    """The fastest ok row per (GPU count, hardware_index)."""
    if ok.empty:
        return ok
    return ok.loc[ok.groupby(["num_gpus", "hardware_index"]).tokens_per_s_per_gpu.idxmax()]


def fixed_layout(points: pd.DataFrame, variants: pd.DataFrame) -> pd.DataFrame:
    """One row per (GPU count, variant with a base): the base's best layout at that GPU
    count (base_point) and the same layout on the variant (variant_point, -1 when the
    variant has no such row), the variant's own best (best_point), and the speedups:
    `<class column>` = class time on base / class time on variant, `end_to_end` = step
    time ratio at that layout, `best_vs_best` = the variant's best tokens/s/GPU / the
    base's best, `best_vs_first` the same over hardware_index 0's best. `note` says why a
    speedup is missing."""
    classes, _ = step_classes(points)
    best = {(int(r.num_gpus), int(r.hardware_index)): p
            for p, r in best_rows(common.ok_rows(points)).iterrows()}
    where = common.layout_index(points)
    pairs = sorted({(int(g), int(h)) for g, h in zip(points.num_gpus, points.hardware_index)})
    rows = []
    for gpus, hw in pairs:
        base = common.base_index_of(variants, hw)
        if base == hw:
            continue
        row = {"num_gpus": gpus, "hardware_index": hw, "base_index": base,
               "base_point": best.get((gpus, base), -1), "variant_point": -1,
               "best_point": best.get((gpus, hw), -1), "note": ""}
        row.update({col: float("nan") for col in [*classes, "end_to_end", "best_vs_best",
                                                  "best_vs_first"]})
        if row["base_point"] < 0:
            row["note"] = "nothing fits on the base at this GPU count"
            rows.append(row)
            continue
        b = points.loc[row["base_point"]]
        row["variant_point"] = vp = where.get((hw, common.layout_key(b)), -1)
        status = str(points.loc[vp, "status"]) if vp >= 0 else "absent"
        if status == "ok":
            v = points.loc[vp]
            for col in classes:
                row[col] = float(common.ratio(class_time(b, col), class_time(v, col)))
            row["end_to_end"] = float(common.ratio(b.step_time_s, v.step_time_s))
        else:
            row["note"] = f"the base's best layout is {status} on the variant"
        if row["best_point"] >= 0:
            best_tps = points.loc[row["best_point"], "tokens_per_s_per_gpu"]
            row["best_vs_best"] = best_tps / b.tokens_per_s_per_gpu
            if (gpus, 0) in best:
                row["best_vs_first"] = best_tps / points.loc[best[(gpus, 0)],
                                                             "tokens_per_s_per_gpu"]
        else:
            row["note"] = "nothing fits on the variant at this GPU count"
        rows.append(row)
    cols = ["num_gpus", "hardware_index", "base_index", "base_point", "variant_point",
            "best_point", *classes, "end_to_end", "best_vs_best", "best_vs_first", "note"]
    return pd.DataFrame(rows, columns=cols)


def alone_bound(step: float, base_time: float, variant_time: float) -> float:
    """The end-to-end speedup if only this class changed (Amdahl): step / (step - base_time
    + variant_time), which is 1 / (1 - share (1 - 1/speedup)) with share = base_time / step
    and speedup = base_time / variant_time; NaN where either time is missing."""
    return float(common.ratio(step, step - base_time + variant_time))

