"""`report`'s scenario section: every non-ideal scenario of the file (docs/nonideal.md), one
row each, with its best layout. The other sections show one scenario (the baseline's, or
--scenario's); this one lists them all, so a reader sees what the file holds."""

from __future__ import annotations

import numpy as np
import pandas as pd

from . import common


def scenario_table(points: pd.DataFrame, scenarios: pd.DataFrame) -> common.Table:
    """One row per scenario of `scenarios` (name, description; in scenario order), from the
    rows of `points` whose `scenario` column is its index: the point count and how many fit,
    the best ok row by tokens/s/GPU (its tokens/s/GPU, step time, change of step time
    against the first scenario's best, goodput where failures are on, layout, point); a
    scenario with no ok row says so."""
    rows, first_step = [], np.nan
    for code, sc in scenarios.reset_index(drop=True).iterrows():
        mine = points[points.scenario == code] if "scenario" in points else points
        ok = common.ok_rows(mine)
        row = {"scenario": sc["name"], "what it turns on": sc.get("description", ""),
               "points": len(mine), "ok": len(ok)}
        if ok.empty:
            row.update({"layout": "no layout fits" if len(mine) else "no rows in this file"})
        else:
            best = ok.loc[ok.tokens_per_s_per_gpu.idxmax()]
            step = float(best.step_time_s)
            if code == 0:
                first_step = step
            row.update({
                "best tokens/s/GPU": best.tokens_per_s_per_gpu,
                "step time (s)": step,
                "step vs first (%)": 100 * (step / first_step - 1),
                "goodput (%)": 100 * float(best.get("goodput", np.nan)),
                "layout": f"{common.short_layout(best)} on {best.hardware}, "
                          f"{int(best.num_gpus)} GPUs",
                "point": int(best.name),
            })
        rows.append(row)
    frame = pd.DataFrame(rows)
    for column in ("goodput (%)", "step vs first (%)"):
        if column in frame and frame[column].isna().all():
            frame = frame.drop(columns=column)
    notes = [f"The file's {len(scenarios)} scenarios; the best layout of each by tokens/s/GPU "
             "over every hardware entry and GPU count. step vs first: the change of the best "
             f"step time against the first scenario's ({scenarios['name'].iloc[0]}). The "
             "other sections show one scenario (--scenario NAME for another; "
             "analysis/scenarios.py compares the thermal and power columns)."]
    return common.Table("scenarios", "Scenarios", frame, notes)
