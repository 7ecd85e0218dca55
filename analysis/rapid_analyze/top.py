"""`top`: the best layouts per (GPU count, hardware variant) by tokens/s/GPU."""

from __future__ import annotations

import numpy as np
import pandas as pd

import rapid_results as rr

from . import common


def analytical_step(points: pd.DataFrame) -> pd.Series | None:
    """The analytical step time of every row: step_time_analytical_s where the file has it
    (kept on DES-refined rows), step_time_s on rows the analytical model wrote; None for
    files without the column."""
    if "step_time_analytical_s" not in points:
        return None
    kept = points.step_time_analytical_s.astype(float)
    analytical = points.fidelity.astype(str) == "analytical" if "fidelity" in points else True
    return kept.where(np.isfinite(kept), points.step_time_s.where(analytical))


def baseline_note(baseline: pd.Series | None,
                  missing: str = "the job has no `baseline:`") -> list[str]:
    if baseline is None:
        return [f"No baseline ({missing}): no speedup."]
    words = (f"Baseline (point {baseline.name}): {common.short_layout(baseline)} "
             f"on {baseline.hardware}, {int(baseline.num_gpus)} GPUs")
    if baseline.status != "ok":
        return [f"{words}: {baseline.status}, so no speedup."]
    return [f"{words}: {baseline.tokens_per_s_per_gpu:.1f} tokens/s/GPU. "
            "Speedup = tokens/s/GPU / the baseline's."]


def simulated(group: pd.DataFrame) -> bool:
    """Whether some row of a group was refined by the DES (fidelity des): only then can
    its analytical rank differ from its rank."""
    return "fidelity" in group and (group.fidelity.astype(str) == "des").any()


def congestion(row: pd.Series) -> dict:
    """The DES's congestion figures of a row (NaN on analytical rows)."""
    des = str(row.get("fidelity", "")) == "des"
    hot = row.get("hot_spot_links", np.nan)
    util = row.get("max_link_utilization", np.nan)
    return {"hot links": float(hot) if des else np.nan,
            "max link (%)": 100 * float(util) if des else np.nan}


def interval_header(coverage: float) -> str:
    """The column of the tokens/s/GPU prediction interval: "tokens/s/GPU 80%"."""
    return f"tokens/s/GPU {100 * coverage:.0f}%" if np.isfinite(coverage) else \
        "tokens/s/GPU interval"


def interval_cell(row: pd.Series) -> str:
    """The row's tokens/s/GPU prediction interval (tokens_per_s_lo/hi per GPU) as "lo-hi",
    "extrapolated" after it where no published table ran its GPU type with its stack family
    (docs/validation.md "Prediction intervals"); "-" without one."""
    lo, hi = float(row.get("tokens_per_s_lo", np.nan)), float(row.get("tokens_per_s_hi", np.nan))
    if not np.isfinite(lo):
        return "-"
    cell = f"{lo / row.num_gpus:.0f}-{hi / row.num_gpus:.0f}"
    return cell + " extrapolated" if int(row.get("extrapolated", 0)) else cell


def top_layouts(points: pd.DataFrame, baseline: pd.Series | None, n: int,
                missing: str = "the job has no `baseline:`",
                coverage: float = float("nan")) -> common.Table:
    """The n fastest ok rows of each (GPU count, hardware_index), ranked by tokens/s/GPU
    as written (the DES figure where the row was refined), with the analytical rank
    beside in the groups where the DES refined some row (elsewhere the two ranks agree),
    and the tokens/s/GPU prediction interval at `coverage` where the file has one."""
    ok = common.ok_rows(points)
    notes = baseline_note(baseline, missing)
    base_tps = (baseline.tokens_per_s_per_gpu if baseline is not None
                and baseline.status == "ok" else np.nan)
    analytical = analytical_step(ok)
    rows = []
    for (gpus, hw), group in ok.groupby(["num_gpus", "hardware_index"], sort=True):
        ranked = group.sort_values("tokens_per_s_per_gpu", ascending=False, kind="stable")
        a_rank = (analytical.loc[group.index].rank(method="min", ascending=True)
                  if analytical is not None and simulated(group) else None)
        for rank, (point, r) in enumerate(ranked.head(n).iterrows(), start=1):
            row = {"GPUs": int(gpus), "hardware": r.hardware, "rank": rank,
                   "analytical rank": a_rank[point] if a_rank is not None else np.nan}
            row.update({
                "layout": common.short_layout(r),
                "tokens/s/GPU": r.tokens_per_s_per_gpu,
                **({interval_header(coverage): interval_cell(r)}
                   if "tokens_per_s_lo" in ok else {}),
                "speedup vs baseline (x)": r.tokens_per_s_per_gpu / base_tps,
                "step time (s)": r.step_time_s,
                "MFU (%)": 100 * r.mfu,
                "peak memory (GiB)": r.peak_memory_bytes / rr.GIB,
                "fidelity": str(r.get("fidelity", "analytical")),
                "warnings": common.warnings_of(r),
                **congestion(r),
                "point": int(point),
            })
            rows.append(row)
    frame = pd.DataFrame(rows)
    ranked_by_des = not frame.empty and frame["analytical rank"].notna().any()
    if not frame.empty and not ranked_by_des:
        frame = frame.drop(columns="analytical rank")
    if not frame.empty and frame["hot links"].isna().all():
        frame = frame.drop(columns=["hot links", "max link (%)"])
    elif not frame.empty:
        notes.append("hot links, max link (%): the DES's congestion report (links busier "
                     "than 90% of the step, the busiest link's busy share).")
    if frame.empty:
        notes.insert(0, "No layout fits: every point is out of memory or infeasible.")
    elif ranked_by_des:
        notes.append("rank: by tokens/s/GPU as written (the DES figure on refined rows); "
                     "analytical rank: the same group ranked by the analytical step time "
                     "(step_time_analytical_s), to show how the simulation reordered it "
                     "(only in groups with rows the DES simulated; '-' in the others, "
                     "where it equals rank).")
    if not frame.empty and "tokens_per_s_lo" in ok:
        notes.append(f"{interval_header(coverage)}: where the measured tokens/s/GPU would lie "
                     "(prediction interval from the model's out-of-sample errors on published "
                     "tables, docs/validation.md); extrapolated: no published table ran that "
                     "GPU type with that stack family, so the interval is widened. It bounds "
                     "each figure, not the ratio of two (docs/validation.md gives that "
                     "error apart).")
    notes.append(f"The {n} best per (GPU count, hardware variant); fidelity: the "
                 "evaluator of each figure (analytical or des).")
    return common.Table("top", "Best layouts per GPU count and hardware variant", frame, notes,
                        group=["GPUs", "hardware"])
