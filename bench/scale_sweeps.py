#!/usr/bin/python3
"""Sweep-scale bench (issue 13; docs/production.md sec 4): runs rapid-sweep on sweeps of 10^3
to 10^8 points and prints, per run, the points, ranks x threads, --keep mode, wall time,
CPU time (user + system of every rank), peak RSS per rank (max over ranks, from the
sweep's summary), the file's size and bytes per point, and the per-phase seconds.

The sizes come from jobs/scale/gpt3-175b-1e7-points.yaml (10^7) and -1e8-points.yaml
(10^8); the smaller ones are that job with fewer GPU counts and hardware entries (written
to OUT_DIR). Measured numbers, never pass/fail.

    bench/scale_sweeps.py BUILD_DIR OUT_DIR [--sizes 1e3,1e4,...] [--runs SPEC ...]
      SPEC = size:ranks:keep, e.g. 1e7:2:all 1e7:1:all 1e8:2:top-10
"""
import argparse
import os
import re
import resource
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
BASE = os.path.join(ROOT, "jobs", "scale", "gpt3-175b-1e7-points.yaml")
BIG = os.path.join(ROOT, "jobs", "scale", "gpt3-175b-1e8-points.yaml")

# Smaller sweeps: (first hardware entries, GPU counts, extra search overrides).
TRIM = {
    "1e3": ("[h100-sxm5-80gb]", "[1024]", {"tp": "[8]", "pp": "[8, 16]", "cp": "[1]",
                                           "vpp": "[1, 2, 3]", "mbs": "[1, 2]"}),
    "1e4": ("[h100-sxm5-80gb]", "[1024]", {"cp": "[1]", "vpp": "[1, 2]"}),
    "1e5": ("[h100-sxm5-80gb]", "[512, 1024, 2048]", {}),
    "1e6": ("[a100-sxm4-80gb, h100-sxm5-80gb]", "[256, 512, 1024, 2048, 4096]", {}),
}


def job_for(size, out_dir):
    if size == "1e7":
        return BASE
    if size == "1e8":
        return BIG
    hw, gpus, search = TRIM[size]
    with open(BASE, encoding="utf-8") as f:
        text = f.read()
    text = re.sub(r"^hardware: \[.*?\]\n", f"hardware: {hw}\n", text, flags=re.S | re.M)
    text = re.sub(r"^gpus: \[.*?\]\n", f"gpus: {gpus}\n", text, flags=re.S | re.M)
    text = text.replace("name: gpt3-175b-1e7-points", f"name: gpt3-175b-{size}-points")
    for key, value in search.items():
        text = re.sub(rf"^  {key}: \[.*?\]$", f"  {key}: {value}", text, flags=re.M)
    path = os.path.join(out_dir, f"gpt3-175b-{size}-points.yaml")
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)
    return path


def run(build, out_dir, size, ranks, keep):
    job = job_for(size, out_dir)
    out = os.path.join(out_dir, f"scale-{size}-np{ranks}-{keep}.h5")
    cmd = ["mpirun", "-n", str(ranks), "--oversubscribe", "--bind-to", "none",
           os.path.join(build, "rapid-sweep"), job, "-o", out, "--overwrite", "--threads", "1",
           "--keep", keep]
    if ranks == 1:
        cmd = cmd[6:]  # a singleton: no mpirun
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.monotonic()
    proc = subprocess.run(cmd, capture_output=True, text=True)
    wall = time.monotonic() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    if proc.returncode != 0:
        print(f"{size} np{ranks} {keep}: exit {proc.returncode}: {proc.stderr[-400:]}")
        return
    summary = proc.stdout
    points = int(re.search(r"rapid-sweep: (\d+) points in", summary).group(1))
    rss = float(re.search(r"peak RSS ([\d.]+) MiB", summary).group(1))
    phases = re.search(r"seconds over the ranks: (.*?) \(", summary).group(1)
    size_b = os.path.getsize(out)
    print(f"| {points:>11,} | {ranks} x 1 | {keep:>8} | {wall:7.2f} | {cpu:7.2f} | {rss:6.1f} | "
          f"{size_b / 1e6:9.1f} | {size_b / points:6.1f} | {phases} |", flush=True)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("build")
    ap.add_argument("out_dir")
    ap.add_argument("--runs", nargs="*", default=[
        "1e3:2:all", "1e4:2:all", "1e5:2:all", "1e6:2:all", "1e7:1:all", "1e7:2:all",
        "1e7:2:top-10", "1e8:2:top-10"])
    a = ap.parse_args()
    os.makedirs(a.out_dir, exist_ok=True)
    os.environ.setdefault("RAPID_CONFIG_DIR", os.path.join(ROOT, "configs"))
    print("| points | ranks x threads | keep | wall s | CPU s | peak RSS MiB/rank | file MB | "
          "B/point | phases (s, summed over ranks) |")
    print("|---|---|---|---|---|---|---|---|---|")
    for spec in a.runs:
        size, ranks, keep = spec.split(":")
        run(a.build, a.out_dir, size, int(ranks), keep)


if __name__ == "__main__":
    sys.exit(main())
