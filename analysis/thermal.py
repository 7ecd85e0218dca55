#!/usr/bin/python3
"""Plot one point's temperatures and effective HBM bandwidth over time (docs/nonideal.md
sec 7) from the timeline `rapid predict --fidelity des --timeline T.json` writes for a
scenario with `thermal: true`: each simulated GPU's heating from idle to its periodic
steady state, its die (solid) and HBM (dashed) against their limits (the H100's and
A100's: die slowdown from 85-87 C, HBM from 95 C), its board power and the bandwidth it
keeps.

    /usr/bin/python3 analysis/thermal.py T.json [-o thermal.png] [--gpus N]

Exit codes: 0 done, 2 the file is missing, not a timeline, or has no thermal counters.
"""

from __future__ import annotations

import argparse
import json
import os
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

TRACKS = ("temperature_C", "hbm_temperature_C", "power_W", "sm_clock", "hbm_bandwidth_TBps")


def read_counters(path: str) -> tuple[dict[int, dict[str, list[tuple[float, float]]]], dict]:
    """Counter samples per process (simulated GPU) and track, and the process names."""
    with open(path, encoding="utf-8") as f:
        trace = json.load(f)
    events = trace.get("traceEvents", trace) if isinstance(trace, dict) else trace
    if not isinstance(events, list):
        raise ValueError("no traceEvents list")
    series: dict[int, dict[str, list[tuple[float, float]]]] = {}
    names: dict[int, str] = {}
    for e in events:
        if not isinstance(e, dict):
            continue
        if e.get("ph") == "M" and e.get("name") == "process_name":
            names[int(e["pid"])] = str(e.get("args", {}).get("name", e["pid"]))
        if e.get("ph") == "C" and e.get("name") in TRACKS:
            value = e.get("args", {}).get(e["name"])
            if value is None:
                continue
            series.setdefault(int(e["pid"]), {}).setdefault(e["name"], []).append(
                (float(e["ts"]) * 1e-6, float(value)))
    return series, names


def plot(series, names, out: str, max_gpus: int) -> None:
    fig, (ax_t, ax_p, ax_b) = plt.subplots(3, 1, figsize=(10, 9), sharex=True)
    for pid in sorted(series)[:max_gpus]:
        label = names.get(pid, f"GPU {pid}")
        s = series[pid]
        lines = {}
        for ax, track in ((ax_t, "temperature_C"), (ax_p, "power_W"), (ax_b, "hbm_bandwidth_TBps")):
            if track in s:
                t, v = zip(*s[track])
                lines[track] = ax.step(t, v, where="post", label=f"{label} die" if ax is ax_t
                                       else label, linewidth=1)[0]
        if "hbm_temperature_C" in s:
            t, v = zip(*s["hbm_temperature_C"])
            color = lines["temperature_C"].get_color() if "temperature_C" in lines else None
            ax_t.step(t, v, where="post", label=f"{label} HBM", linewidth=1, linestyle="--",
                      color=color)
    ax_t.axhline(87, color="orange", linestyle=":", linewidth=0.8,
                 label="H100 die SW slowdown (87 C)")
    ax_t.axhline(95, color="red", linestyle="--", linewidth=0.8, label="HBM throttle (95 C)")
    ax_t.set_ylabel("temperature (C)")
    ax_p.set_ylabel("board power (W)")
    ax_b.set_ylabel("HBM bandwidth kept (TB/s)")
    ax_b.set_xlabel("time from an idle start (s)")
    ax_t.set_title("Heating to the periodic steady state (one step's power profile, repeated)")
    ax_t.legend(fontsize=7, loc="lower right")
    for ax in (ax_t, ax_p, ax_b):
        ax.grid(alpha=0.3)
    fig.tight_layout()
    fig.savefig(out, dpi=120)


def main(argv) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("timeline", help="Chrome-trace JSON from rapid predict --timeline")
    p.add_argument("-o", "--output", default=None, help="PNG path (default: next to it)")
    p.add_argument("--gpus", type=int, default=8, help="simulated GPUs drawn (8)")
    args = p.parse_args(argv)
    if args.gpus < 1:
        p.error("--gpus must be at least 1")
    try:
        series, names = read_counters(args.timeline)
    except (OSError, ValueError, json.JSONDecodeError) as e:
        print(f"thermal.py: {args.timeline}: cannot read a timeline ({e})", file=sys.stderr)
        return 2
    if not series:
        print(f"thermal.py: {args.timeline}: no thermal counters (run rapid predict "
              "--fidelity des --timeline on a scenario with thermal: true)", file=sys.stderr)
        return 2
    out = args.output or os.path.splitext(args.timeline)[0] + "-thermal.png"
    plot(series, names, out, args.gpus)
    for pid in sorted(series)[: args.gpus]:
        temps = [v for _, v in series[pid].get("temperature_C", [])]
        hbm = [v for _, v in series[pid].get("hbm_temperature_C", [])]
        bw = [v for _, v in series[pid].get("hbm_bandwidth_TBps", [])]
        if temps:
            print(f"{names.get(pid, pid)}: die {temps[0]:.1f} C at the start, {max(temps):.1f} C "
                  f"max; HBM {max(hbm):.1f} C max; HBM kept {min(bw):.2f}-{max(bw):.2f} TB/s"
                  if hbm else
                  f"{names.get(pid, pid)}: {temps[0]:.1f} C at the start, {max(temps):.1f} C "
                  f"max, HBM kept {min(bw):.2f}-{max(bw):.2f} TB/s")
    print(f"plot written to {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
