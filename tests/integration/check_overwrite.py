#!/usr/bin/python3
"""A finished result file is never replaced by accident (issue 10 part 3): the second run of
the same command exits 2 with one message naming -o, the path and --overwrite, and leaves
the file byte for byte as it was; with --overwrite the sweep replaces it (exit 0).

    check_overwrite.py MPIRUN RAPID_SWEEP JOB OUT
"""
import hashlib
import subprocess
import sys

from sweep_process import run_sweep


def digest(path):
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


def main(argv):
    mpirun, exe, job, out = argv
    first = run_sweep(mpirun, "1", exe, job, out, ["--quiet"])
    if first.returncode != 0:
        print("FAIL: first sweep exited", first.returncode)
        return 1
    before = digest(out)
    cmd = [mpirun, "-n", "2", "--oversubscribe", exe, job, "-o", out, "--quiet"]
    again = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    sys.stderr.write(again.stderr)
    errors = []
    if again.returncode != 2:
        errors.append(f"second run exited {again.returncode}, expected 2")
    lines = [l for l in again.stderr.splitlines() if l.startswith("rapid-sweep:")]
    if len(lines) != 1 or not all(t in lines[0] for t in ("'-o'", out, "--overwrite")):
        errors.append(f"expected one message naming '-o', {out} and --overwrite, got {lines}")
    if digest(out) != before:
        errors.append("the refused run changed the existing file")
    replaced = subprocess.run(cmd + ["--overwrite"], capture_output=True, text=True, timeout=120)
    if replaced.returncode != 0:
        errors.append(f"--overwrite run exited {replaced.returncode}: {replaced.stderr}")
    for e in errors:
        print("FAIL:", e)
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
