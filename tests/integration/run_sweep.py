#!/usr/bin/python3
"""Runs `mpirun -n RANKS rapid-sweep JOB -o OUT [ARGS...]` and checks that it succeeds:
exit code 0, OUT exists, no temporary file is left next to it, and the summary line is
printed. A stale OUT is removed first, so later tests read this run's file.

    run_sweep.py MPIRUN RANKS RAPID_SWEEP JOB OUT [rapid-sweep options...]
"""
import glob
import os
import sys

from sweep_process import run_sweep


def main(argv):
    mpirun, ranks, exe, job, out, *extra = argv
    os.makedirs(os.path.dirname(out), exist_ok=True)
    proc = run_sweep(mpirun, ranks, exe, job, out, extra)
    errors = []
    if proc.returncode != 0:
        errors.append(f"exit code {proc.returncode}, expected 0")
    if not os.path.isfile(out):
        errors.append(f"{out} was not created")
    left = glob.glob(out + ".tmp*")
    if left:
        errors.append(f"temporary files left behind: {left}")
    if "--quiet" not in extra and "points/s" not in proc.stdout:
        errors.append("no summary line (points/s) on stdout")
    for e in errors:
        print("FAIL:", e)
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
