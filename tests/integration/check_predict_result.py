#!/usr/bin/python3
"""`rapid predict --result F.h5 --point N` (issue 34 part 2): a sweep's row predicted again
from the file alone gives the row's step time (4 decimals, as predict prints it), for the
best analytical row and the best simulated one (with --fidelity des); its refusals exit 2
with one message: --point without --result, a layout option beside --result, a point the
file does not hold.

    check_predict_result.py RAPID RESULT.h5
"""
import re
import subprocess
import sys

import h5py
import numpy as np


def step_of(out):
    m = re.search(r"^step time\s+([0-9.]+) s", out, re.M)
    return float(m.group(1)) if m else None


def main():
    rapid, path = sys.argv[1:3]
    with h5py.File(path, "r") as f:
        p = f["points"]
        status = p["status"][:]
        step = p["step_time_s"][:]
        fidelity = p["fidelity"][:]
        point = p["point"][:]
    ok = status == 0
    errors = []
    for want, name in ((0, "analytical"), (1, "des")):
        rows = np.flatnonzero(ok & (fidelity == want))
        if rows.size == 0:
            errors.append(f"no ok {name} row in {path}")
            continue
        r = rows[np.argmin(step[rows])]
        cmd = [rapid, "predict", "--result", path, "--point", str(point[r])]
        if want == 1:
            cmd += ["--fidelity", "des"]
        run = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
        got = step_of(run.stdout)
        if run.returncode != 0 or got is None:
            errors.append(f"{name} point {point[r]}: exit {run.returncode}: {run.stderr[-300:]}")
        elif abs(got - round(step[r], 4)) > 0.5e-4 + 1e-9:
            errors.append(f"{name} point {point[r]}: predict {got} s, row {step[r]:.6f} s")
        if f"point {point[r]} of {path}" not in run.stdout:
            errors.append(f"{name}: no 'result' line naming the point: {run.stdout[:300]}")
    bad = [
        ([rapid, "predict", "--point", "3"], "--result"),
        ([rapid, "predict", "--result", path, "--point", "0", "--tp", "2"], "--result"),
        ([rapid, "predict", "--result", path, "--point", str(int(point.max()) + 10**6)], "--point"),
    ]
    for cmd, key in bad:
        run = subprocess.run(cmd, capture_output=True, text=True, timeout=60)
        lines = [l for l in run.stderr.splitlines() if l.strip()]
        if run.returncode != 2 or len(lines) != 1 or key not in lines[0] or run.stdout:
            errors.append(f"{cmd[2:]}: exit {run.returncode}, stderr {lines}, stdout "
                          f"{run.stdout[:100]!r}")
    for e in errors:
        print(e)
    print(f"{len(errors)} problems")
    sys.exit(1 if errors else 0)


if __name__ == "__main__":
    main()
