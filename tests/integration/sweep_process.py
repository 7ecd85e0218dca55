"""Runs rapid-sweep under mpirun for the integration tests: removes a stale output (and
temporary files) first, echoes the command and its output, returns the finished process."""

import glob
import os
import subprocess
import sys


def run_sweep(mpirun, ranks, exe, job, out, extra):
    for stale in [out] + glob.glob(out + ".tmp*"):
        if os.path.exists(stale):
            os.remove(stale)
    cmd = [mpirun, "-n", ranks, "--oversubscribe", exe, job, "-o", out, *extra]
    print("running:", " ".join(cmd), flush=True)
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    sys.stdout.write(proc.stdout)
    sys.stderr.write(proc.stderr)
    return proc
