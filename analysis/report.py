#!/usr/bin/python3
"""Summarise a rapid-sweep result file: the fastest feasible layouts, the speedup over the
job's baseline, what did not fit, and a TP x PP heatmap of the best tokens/s/GPU.

    /usr/bin/python3 analysis/report.py results/llama3-70b-256xh100.h5 [--top N]
        [--png PATH] [--hardware NAME]

Exit codes: 0 done, 2 the file is missing or not a rapid-sweep result (or a bad option).
"""

from __future__ import annotations

import argparse

import numpy as np
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import pandas as pd  # noqa: E402

import rapid_results as rr  # noqa: E402


def parse_args(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("file", help="HDF5 file written by rapid-sweep")
    p.add_argument("--top", type=int, default=10, metavar="N", help="layouts listed (10)")
    p.add_argument("--png", metavar="PATH",
                   help="heatmap path (default: next to the file, NAME-tp-pp.png)")
    p.add_argument("--hardware", metavar="NAME", help="only this hardware variant")
    args = p.parse_args(argv)
    if args.top < 1:
        p.error("--top must be at least 1")
    return args


def top_table(ok, n, several_hw, several_gpus):
    """The n fastest feasible layouts as a printable table."""
    best = ok.nlargest(n, "tokens_per_s_per_gpu")
    cols = {}
    if several_hw:
        cols["hardware"] = best["hardware"]
    if several_gpus:
        cols["GPUs"] = best["num_gpus"]
    cols.update({"DP": best.dp, "TP": best.tp, "PP": best.pp})
    for k in ("cp", "ep", "etp", "vpp"):  # only when some feasible layout uses them
        if (ok[k] != 1).any():
            cols[k.upper()] = best[k]
    cols.update({
        "mbs": best.mbs,
        "recompute": best.recompute.astype(str),
        "SP": best.sp.map({True: "yes", False: "no"}),
        "ZeRO": best.zero_stage,
        "step time (s)": best.step_time_s.map("{:.3f}".format),
        "tokens/s/GPU": best.tokens_per_s_per_gpu.map("{:.1f}".format),
        "MFU (%)": (100 * best.mfu).map("{:.1f}".format),
        "peak memory (GiB)": (best.peak_memory_bytes / rr.GIB).map("{:.1f}".format),
    })
    if "fidelity" in best and (ok.fidelity == "des").any():
        # Which rows the discrete-event simulator refined (--fidelity auto/des), and its
        # congestion report: links busier than 90% and the busiest link's utilization.
        cols["by"] = best.fidelity.astype(str)
        cols["hot links"] = best.hot_spot_links
        cols["max link %"] = (100 * best.max_link_utilization).map(
            lambda v: "-" if not np.isfinite(v) else f"{v:.0f}")
    table = pd.DataFrame(cols)
    table.index = range(1, len(table) + 1)
    return table.to_string()


def baseline_lines(res, pts, ok):
    """Which layout is the baseline, and the best layout's speedup over it."""
    base = res.baseline
    if base is None:
        return ["Baseline: none (the job has no `baseline:`), no speedup computed."]
    if base.name not in pts.index:  # --hardware: the baseline layout on that hardware
        same = rr.same_layout(pts, base)
        if same.empty:
            return [f"Baseline {rr.describe_layout(base)} is not in the selection."]
        base = same.iloc[0]
    several_hw = pts.hardware.nunique() > 1
    name = rr.describe_layout(base, hardware=several_hw)
    lines = [f"Baseline (point {base.name}): {name}"]
    if base.status != "ok":
        over = base.peak_memory_bytes - base.memory_capacity_bytes
        why = f"does not fit: {excess(over)} over capacity" if base.status == "oom" else "infeasible"
        return lines + [f"  status {base.status} ({why}); no speedup computed."]
    lines.append(f"  {base.tokens_per_s_per_gpu:.1f} tokens/s/GPU, step {base.step_time_s:.3f} s, "
                 f"MFU {100 * base.mfu:.1f}%, peak memory {base.peak_memory_bytes / rr.GIB:.1f} GiB")
    if ok.empty:
        return lines
    best = ok.loc[ok.tokens_per_s_per_gpu.idxmax()]
    gain = 100 * (best.tokens_per_s_per_gpu / base.tokens_per_s_per_gpu - 1)
    lines.append(f"Best is {gain:+.1f}% tokens/s/GPU over baseline {name}: "
                 f"{rr.describe_layout(best, hardware=several_hw)} (point {best.name})")
    return lines


def excess(over_bytes):
    """Bytes over capacity, in GiB, or in MiB under one GiB (2 MiB is not "0.00 GiB")."""
    if over_bytes >= rr.GIB:
        return f"{over_bytes / rr.GIB:.2f} GiB"
    return f"{over_bytes / 2**20:.1f} MiB"


def count_lines(pts):
    n_oom = int((pts.status == "oom").sum())
    n_inf = int((pts.status == "infeasible").sum())
    line = (f"Points: {len(pts)} evaluated, {int((pts.status == 'ok').sum())} fit, "
            f"{n_oom} out of memory, {n_inf} infeasible")
    lines = [line]
    if n_oom:
        oom = pts[pts.status == "oom"]
        over = oom.peak_memory_bytes - oom.memory_capacity_bytes
        i = over.idxmin()
        lines.append(f"  smallest OOM overshoot: {excess(over[i])} "
                     f"({rr.describe_layout(oom.loc[i])}, point {i})")
    return lines


def heatmap(pts, ok, path, title):
    """Best tokens/s/GPU per (TP, PP) cell; 'OOM' where nothing in the cell fits."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    tps, pps = sorted(pts.tp.unique()), sorted(pts.pp.unique())
    grid = ok.pivot_table(index="pp", columns="tp", values="tokens_per_s_per_gpu",
                          aggfunc="max").reindex(index=pps, columns=tps)
    tried = pts.groupby(["pp", "tp"]).size()
    fig, ax = plt.subplots(figsize=(1.3 * len(tps) + 3, 0.7 * len(pps) + 2))
    im = ax.imshow(grid.to_numpy(dtype=float), origin="lower", cmap="viridis", aspect="auto")
    lo, top = grid.min().min(), grid.max().max()
    for y, pp in enumerate(pps):
        for x, tp in enumerate(tps):
            v = grid.at[pp, tp]
            if v == v:  # not NaN
                light = top == lo or (v - lo) / (top - lo) > 0.5  # viridis is light at the top
                ax.text(x, y, f"{v:.0f}", ha="center", va="center", fontsize=9,
                        color="black" if light else "white",
                        fontweight="bold" if v == top else "normal")
            elif (pp, tp) in tried.index:
                ax.text(x, y, "OOM", ha="center", va="center", fontsize=8, color="gray")
    ax.set_xticks(range(len(tps)), [str(t) for t in tps])
    ax.set_yticks(range(len(pps)), [str(p) for p in pps])
    ax.set_xlabel("TP (tensor parallel)")
    ax.set_ylabel("PP (pipeline stages)")
    ax.set_title(title, fontsize=10)
    fig.colorbar(im, ax=ax, label="best tokens/s/GPU")
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def main(argv=None):
    args = parse_args(argv)
    res = rr.load_for_cli(args.file, "report.py")
    if res is None:
        return 2
    pts = res.points
    if args.hardware:
        if args.hardware not in set(res.hardware.name):
            print(f"report.py: --hardware {args.hardware}: not in {args.file} "
                  f"(variants: {', '.join(res.hardware.name)})", file=sys.stderr)
            return 2
        pts = pts[pts.hardware == args.hardware]
    # Feasible points with a finite predicted throughput (a degenerate config can give NaN
    # or infinite times: those are reported, not ranked).
    ok = pts[(pts.status == "ok") & np.isfinite(pts.tokens_per_s_per_gpu)]
    bad = int(((pts.status == "ok") & ~np.isfinite(pts.tokens_per_s_per_gpu)).sum())
    if bad:
        print(f"warning: {bad} feasible points have no finite throughput (check the config)")
    a = res.attrs
    hw = args.hardware or ", ".join(res.hardware.name)
    print(f"{args.file}: job {a.get('job_name', '?')}, model {a.get('model_name', '?')} on {hw}, "
          f"network {a.get('network_name', '?')}")
    print(f"  {a.get('fidelity', '?')} fidelity, rapid-sweep {a.get('version', '?')} "
          f"({a.get('git_revision', '?')}), {a.get('ranks', '?')} ranks, "
          f"created {a.get('created', '?')}")
    print()
    if ok.empty:
        print("No feasible layout: every point is out of memory or infeasible.\n")
    else:
        several_gpus = "num_gpus" in pts and pts.num_gpus.nunique() > 1
        n = min(args.top, len(ok))
        print(f"Top {n} feasible layouts by tokens/s/GPU:")
        print(top_table(ok, n, pts.hardware.nunique() > 1, several_gpus))
        print()
    print("\n".join(baseline_lines(res, pts, ok)))
    print("\n".join(count_lines(pts)))
    if ok.empty:
        print("Heatmap: none (nothing fits)")
        return 0
    png = args.png
    if not png:
        stem = os.path.splitext(args.file)[0]
        png = f"{stem}-{args.hardware}-tp-pp.png" if args.hardware else f"{stem}-tp-pp.png"
    title = f"{a.get('job_name', '')}: best tokens/s/GPU over TP x PP ({hw})"
    heatmap(pts, ok, png, title)
    print(f"Heatmap: {png}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
