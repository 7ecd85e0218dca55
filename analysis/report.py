#!/usr/bin/python3
"""Summarise a rapid-sweep result file: the fastest feasible layouts, the speedup over the
job's baseline, what did not fit, and a TP x PP heatmap of the best tokens/s/GPU.

A thin wrapper over analysis/rapid-analyze: its `top` table and `heatmap` figure (tp x pp),
with the baseline and point counts around them.

    /usr/bin/python3 analysis/report.py results/llama3-70b-256xh100.h5 [--top N]
        [--png PATH] [--format png|svg|pdf] [--dpi N] [--hardware NAME]

Exit codes: 0 done, 2 the file is missing or not a rapid-sweep result (or a bad option).
"""

from __future__ import annotations

import argparse

import numpy as np
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import rapid_results as rr  # noqa: E402
from rapid_analyze import cli, common, sections, textout  # noqa: E402


def parse_args(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("file", help="HDF5 file written by rapid-sweep")
    p.add_argument("--top", type=int, default=10, metavar="N", help="layouts listed (10)")
    p.add_argument("--png", "--figure", dest="png", metavar="PATH",
                   help="heatmap path, in the format its extension names (.png, .svg, .pdf) "
                        "or --format's (default: next to the file, NAME-tp-pp.png)")
    p.add_argument("--format", dest="figure_format", choices=common.FIGURE_FORMATS,
                   help="the heatmap's format (default: --png's extension, else png)")
    p.add_argument("--dpi", metavar="N", type=cli._dpi, default=common.FIGURE_DPI,
                   help=f"pixels per inch of a PNG heatmap ({common.FIGURE_DPI})")
    p.add_argument("--hardware", metavar="NAME", help="only this hardware variant")
    args = p.parse_args(argv)
    if args.top < 1:
        p.error("--top must be at least 1")
    if args.png:
        try:
            args.figure_format = cli.figure_format("--png", args.png, args.figure_format)
        except common.UsageError as e:
            p.error(str(e))
    return args


def baseline_lines(res, pts, ok):
    """Which layout is the baseline, and the best layout's speedup over it."""
    base = res.baseline
    if base is None:
        return [f"Baseline: none ({res.baseline_missing()}), no speedup computed."]
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
    cov = float(res.attrs.get("interval_coverage", "nan"))
    gpus = float(base.num_gpus)
    lines.append(f"  {base.tokens_per_s_per_gpu:.1f} tokens/s/GPU"
                 f"{interval(base, 'tokens_per_s_lo', 'tokens_per_s_hi', cov, '', 1 / gpus)}, "
                 f"step {base.step_time_s:.3f} s"
                 f"{interval(base, 'step_time_lo_s', 'step_time_hi_s', cov, ' s')}, "
                 f"MFU {100 * base.mfu:.1f}%{interval(base, 'mfu_lo', 'mfu_hi', cov, '%', 100)}, "
                 f"peak memory {base.peak_memory_bytes / rr.GIB:.1f} GiB")
    if int(base.get("extrapolated", 0)):
        lines.append("  extrapolated: no published table ran this GPU type with this stack "
                     "family; its intervals are widened (docs/validation.md)")
    if ok.empty:
        return lines
    best = ok.loc[ok.tokens_per_s_per_gpu.idxmax()]
    gain = 100 * (best.tokens_per_s_per_gpu / base.tokens_per_s_per_gpu - 1)
    lines.append(f"Best is {gain:+.1f}% tokens/s/GPU over baseline {name}: "
                 f"{rr.describe_layout(best, hardware=several_hw)} (point {best.name})")
    return lines


def interval(row, lo_col, hi_col, coverage, unit, scale=1.0):
    """" (80%: lo-hi UNIT)": the row's prediction interval (columns lo_col, hi_col times
    `scale`; docs/validation.md "Prediction intervals"), "" where the file has none."""
    lo, hi = float(row.get(lo_col, np.nan)), float(row.get(hi_col, np.nan))
    if not np.isfinite(lo):
        return ""
    cov = f"{100 * coverage:.0f}%" if np.isfinite(coverage) else "interval"
    return f" ({cov}: {short(lo * scale)}-{short(hi * scale)}{unit})"


def short(x):
    """An interval's end with 3 significant digits (87510 -> 87500, 0.52317 -> 0.523)."""
    return f"{x:.3g}" if abs(x) < 999.5 else f"{round(x, 2 - int(np.floor(np.log10(abs(x))))):.0f}"


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
    # The other statuses, only where some row has them (the line above stays as it was).
    for status, words in (("no_route", "without a route"), ("overheat", "overheating"),
                          ("error", "failed"), ("overloaded", "overloaded (serving)")):
        n = int((pts.status == status).sum())
        if n:
            line += f", {n} {words}"
    lines = [line]
    if n_oom:
        oom = pts[pts.status == "oom"]
        over = oom.peak_memory_bytes - oom.memory_capacity_bytes
        i = over.idxmin()
        lines.append(f"  smallest OOM overshoot: {excess(over[i])} "
                     f"({rr.describe_layout(oom.loc[i])}, point {i})")
    return lines


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
    opts = sections.Options(hardware=args.hardware, top=args.top)
    if ok.empty:
        print("No feasible layout: every point is out of memory or infeasible.\n")
    else:
        table = sections.top_section(res, opts).table
        groups = table.frame[["GPUs", "hardware"]].drop_duplicates()
        per = " per GPU count and hardware variant" if len(groups) > 1 else ""
        print(f"Top {min(args.top, len(ok))} feasible layouts by tokens/s/GPU{per}:")
        print(textout.formatted(table.frame).to_string(index=False))
        if "tokens_per_s_lo" in ok:
            print("tokens/s/GPU 80% (the coverage of the file): where the measurement would lie, "
                  "from the model's out-of-sample errors on published tables "
                  "(docs/validation.md \"Prediction intervals\"); extrapolated: no table ran "
                  "that GPU type with that stack family, the interval is widened.")
        print()
    print("\n".join(baseline_lines(res, pts, ok)))
    print("\n".join(count_lines(pts) + res.keep_note()))
    if ok.empty:
        print("Heatmap: none (nothing fits)")
        return 0
    png = args.png
    fmt = args.figure_format or "png"
    if not png:
        stem = os.path.splitext(args.file)[0]
        png = (f"{stem}-{args.hardware}-tp-pp.{fmt}" if args.hardware
               else f"{stem}-tp-pp.{fmt}")
    from rapid_analyze import plots
    plots.save_figure(sections.heatmap_section(res, opts).draw(), png, fmt, args.dpi)
    print(f"Heatmap: {png}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
