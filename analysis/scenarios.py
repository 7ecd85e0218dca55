#!/usr/bin/python3
"""Compare the non-ideal scenarios of a rapid-sweep result file (docs/nonideal.md): for
each scenario, its fastest feasible layout with the step time and its change against the
first scenario, the thermal steady state (hottest GPU's die and HBM, its one "throttled"
figure: the share of time under any thermal slowdown; its loss against the unthrottled
step with the same stack settings; DVFS at the steady state and while heating from idle;
the time from idle to its first throttle), HBM bandwidth utilization, power and energy,
the GPU that bounds the step, and goodput where failures are on. Links faults and
stragglers show as their step time; thermal mitigations as their throttling loss, which
compares each row with its own stack's unthrottled step (a mitigation that changes the
stack, interleaving, changes the first-scenario comparison by more than heat).

    /usr/bin/python3 analysis/scenarios.py RESULTS.h5 [--gpus N] [--csv PATH]

Exit codes: 0 done, 2 the file is missing, not a rapid-sweep result, or has no ok row.
"""

from __future__ import annotations

import argparse
import math
import os
import signal
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import pandas as pd  # noqa: E402

import rapid_results as rr  # noqa: E402


def best_per_scenario(points: pd.DataFrame) -> pd.DataFrame:
    """The fastest ok row of each scenario (highest tokens/s/GPU), in scenario order."""
    ok = points[points["status"] == "ok"]
    if ok.empty:
        return ok
    rows = ok.loc[ok.groupby("scenario")["tokens_per_s_per_gpu"].idxmax()]
    return rows.sort_values("scenario")


def scenario_table(best: pd.DataFrame) -> pd.DataFrame:
    """One printable row per scenario; changes are against the first scenario's step."""
    ref = best.iloc[0]["step_time_s"]
    out = pd.DataFrame({
        "scenario": best.get("scenario_name", best["scenario"]),
        "step_s": best["step_time_s"],
        "vs_first_%": 100 * (best["step_time_s"] / ref - 1),
        "tokens/s/GPU": best["tokens_per_s_per_gpu"],
    })
    optional = [("gpu_temperature_C", "die_C", 1), ("hbm_temperature_C", "hbm_C", 1),
                ("throttle_fraction", "throttled_%", 100),
                ("thermal_slowdown", "loss_vs_unthrottled_%", 100),
                ("dvfs_fraction", "dvfs_%", 100),
                ("dvfs_warmup_engagements", "dvfs_warmup", 1),
                ("time_to_throttle_s", "throttle_after_s", 1),
                ("hbm_utilization", "hbm_util_%", 100), ("avg_gpu_power_W", "power_W", 1),
                ("energy_per_step_J", "kJ/step", 1e-3), ("tokens_per_J", "tokens/J", 1),
                ("goodput", "goodput_%", 100),
                ("goodput_tokens_per_s", "goodput_tokens/s", 1)]
    for col, name, scale in optional:
        if col in best and best[col].notna().any():
            out[name] = best[col] * scale
    if "bounding_gpu" in best and (best["bounding_gpu"] >= 0).any():
        out["bounding_gpu"] = best["bounding_gpu"]
    out["layout"] = [rr.describe_layout(r) for _, r in best.iterrows()]
    return out.reset_index(drop=True)


def ranking(points: pd.DataFrame, n: int) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The n best ok rows by raw tokens/s and by goodput tokens/s (docs/goodput.md)."""
    ok = points[(points["status"] == "ok") & points["goodput"].notna()]
    cols = ["num_gpus", "tokens_per_s", "goodput", "goodput_tokens_per_s", "job_mtbf_s",
            "checkpoint_write_s", "checkpoint_interval_s"]
    def view(rows):
        v = rows[cols].copy()
        v["job_mtbf_h"] = v.pop("job_mtbf_s") / 3600
        v["goodput_%"] = 100 * v.pop("goodput")
        v["layout"] = [rr.describe_layout(r) for _, r in rows.iterrows()]
        v.insert(0, "point", rows.index)
        return v.reset_index(drop=True)
    return (view(ok.nlargest(n, "tokens_per_s")), view(ok.nlargest(n, "goodput_tokens_per_s")))


def print_ranking(points: pd.DataFrame, n: int) -> None:
    raw, good = ranking(points, n)
    if raw.empty:
        print("no ok row with failures on: nothing to rank by goodput")
        return
    with pd.option_context("display.width", 250, "display.max_columns", 40,
                           "display.float_format", lambda v: f"{v:.3f}" if abs(v) < 100 else f"{v:.0f}"):
        print(f"\nby tokens/s (raw):\n{raw.to_string(index=False)}")
        print(f"\nby goodput tokens/s (failures, checkpoints and restarts counted):\n"
              f"{good.to_string(index=False)}")
    moved = [p for p, q in zip(raw["point"], good["point"]) if p != q]
    print(f"\nthe goodput ranking {'differs from' if moved else 'is'} the raw one"
          f"{': first by goodput is point ' + str(good['point'][0]) + ', by raw ' + str(raw['point'][0]) if moved else ''}")


def main(argv) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("file", help="HDF5 file written by rapid-sweep")
    p.add_argument("--gpus", type=int, help="only layouts of this GPU count")
    p.add_argument("--csv", metavar="PATH", help="also write the table as CSV")
    p.add_argument("--rank", nargs="?", type=int, const=8, metavar="N",
                   help="also rank the N best layouts by tokens/s and by goodput tokens/s "
                        "(failures on; 8)")
    args = p.parse_args(argv)
    res = rr.load_for_cli(args.file, "scenarios.py")
    if res is None:
        return 2
    points = res.points
    if "scenario" not in points:
        print(f"scenarios.py: {args.file}: no scenario column (written before scenarios "
              "existed)", file=sys.stderr)
        return 2
    if args.gpus is not None:
        points = points[points["num_gpus"] == args.gpus]
    best = best_per_scenario(points)
    if best.empty:
        print(f"scenarios.py: {args.file}: no feasible (ok) row to compare", file=sys.stderr)
        return 2
    table = scenario_table(best)
    print(f"{res.attrs.get('job_name', args.file)}: {len(table)} scenarios, the feasible layout "
          f"of each with the most tokens/s/GPU (fidelity {', '.join(sorted(set(map(str, best['fidelity']))))})")
    with pd.option_context("display.width", 250, "display.max_columns", 40,
                           "display.float_format", lambda v: f"{v:.4g}" if not math.isnan(v) else "-"):
        print(table.to_string(index=False))
    for _, r in res.scenarios.iterrows():
        print(f"  {r['name']}: {r['description']}")
    if args.rank:
        print_ranking(points, args.rank)
    if args.csv:
        table.to_csv(args.csv, index=False)
        print(f"table written to {args.csv}")
    return 0


if __name__ == "__main__":
    signal.signal(signal.SIGPIPE, signal.SIG_DFL)  # `| head` ends the output quietly
    sys.exit(main(sys.argv[1:]))
