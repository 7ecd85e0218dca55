#!/usr/bin/python3
"""Runs `mpirun -n RANKS rapid-sweep JOB -o OUT [ARGS...]` and checks that it succeeds:
exit code 0, OUT exists, no temporary file is left next to it, and the summary line is
printed. A stale OUT is removed first, so later tests read this run's file.

    run_sweep.py MPIRUN RANKS RAPID_SWEEP JOB OUT [rapid-sweep options...]
"""
import glob
import os
import subprocess
import sys


def main(argv):
    mpirun, ranks, exe, job, out, *extra = argv
    os.makedirs(os.path.dirname(out), exist_ok=True)
    for stale in [out] + glob.glob(out + ".tmp*"):
        if os.path.exists(stale):
            os.remove(stale)
    cmd = [mpirun, "-n", ranks, "--oversubscribe", exe, job, "-o", out, *extra]
    print("running:", " ".join(cmd), flush=True)
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    sys.stdout.write(proc.stdout)
    sys.stderr.write(proc.stderr)
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
