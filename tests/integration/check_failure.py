#!/usr/bin/python3
"""Runs rapid-sweep on input that must fail and checks how it fails: the exit code, the
texts stderr must contain (file, key), that exactly one rank printed the message for bad
input, and that neither OUT nor a temporary file (.rapid-sweep.partial-* beside it) exists
afterwards.

    check_failure.py MPIRUN RANKS RAPID_SWEEP JOB OUT EXIT_CODE [--expect TEXT]...
                     [-- rapid-sweep options...]
Set RAPID_SWEEP_TEST_FAIL_RANK in the environment to inject an internal failure.
"""
import os
import sys

from sweep_process import run_sweep


def partial_path(out):
    """The partial file rapid-sweep writes `out` through (ResultStore::temp_path_for): a
    64-bit FNV-1a hash of the absolute path, beside it."""
    h = 0xCBF29CE484222325  # FNV-1a 64-bit offset basis
    for c in os.path.abspath(out).encode():
        h = ((h ^ c) * 1099511628211) & 0xFFFFFFFFFFFFFFFF
    return os.path.join(os.path.dirname(os.path.abspath(out)), f".rapid-sweep.partial-{h:016x}.h5")


def main(argv):
    mpirun, ranks, exe, job, out, code, *rest = argv
    expects, extra = [], []
    while rest:
        a = rest.pop(0)
        if a == "--expect":
            expects.append(rest.pop(0))
        elif a == "--":
            extra, rest = rest, []
        else:
            raise SystemExit(f"unknown argument {a}")
    proc = run_sweep(mpirun, ranks, exe, job, out, extra)
    errors = []
    if proc.returncode != int(code):
        errors.append(f"exit code {proc.returncode}, expected {code}")
    for text in expects:
        if text not in proc.stderr:
            errors.append(f"stderr does not contain {text!r}")
    messages = [l for l in proc.stderr.splitlines() if l.startswith("rapid-sweep:")]
    if int(code) == 2 and len(messages) != 1:
        errors.append(f"{len(messages)} 'rapid-sweep:' lines on stderr, expected 1")
    if os.path.exists(out):
        errors.append(f"{out} exists after a failed run")
    left = [p for p in [partial_path(out)] if os.path.exists(p)]
    if left:
        errors.append(f"temporary files left behind: {left}")
    for e in errors:
        print("FAIL:", e)
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
