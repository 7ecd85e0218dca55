#!/usr/bin/python3
"""Checks a `rapid-sweep --fidelity auto` file: the run says auto, and in every (GPU count,
hardware) group exactly min(K, feasible points) rows come from the discrete-event simulator
(fidelity "des", a simulated replica count, a link utilization), the rest are analytical
(no simulated replicas, NaN utilization). Every row keeps the analytical step time
(step_time_analytical_s, check_analytical_step.py): a simulated row the first pass's, equal
to the step time of that point in ANALYTICAL.h5 (an analytical sweep of the same job) when
given, finite without it.

    check_auto.py OUT.h5 K [ANALYTICAL.h5]
"""
import sys

import h5py
import numpy as np

from check_analytical_step import check_analytical_step


def main(argv):
    path, k = argv[0], int(argv[1])
    errors = []
    with h5py.File(path, "r") as f:
        if not str(f.attrs["fidelity"]).startswith("auto"):
            errors.append(f"fidelity attribute {f.attrs['fidelity']!r}, expected auto ...")
        p = f["points"]
        names = h5py.check_enum_dtype(p["fidelity"].dtype)
        if names != {"analytical": 0, "des": 1}:
            errors.append(f"fidelity enum members {names}")
        fid = p["fidelity"][:]
        ok = p["status"][:] == 0
        gpus, hw = p["num_gpus"][:], p["hardware_index"][:]
        reps, util = p["simulated_replicas"][:], p["max_link_utilization"][:]
        des = fid == 1
        for g in sorted(set(zip(gpus.tolist(), hw.tolist()))):
            sel = (gpus == g[0]) & (hw == g[1])
            want = min(k, int(np.sum(sel & ok)))
            got = int(np.sum(sel & des))
            if got != want:
                errors.append(f"group {g}: {got} des rows, expected {want}")
        if np.any(des & ~ok):
            errors.append("a des row is not feasible")
        if np.any(reps[des] < 1) or not np.all(np.isfinite(util[des])):
            errors.append("des rows without simulated replicas or link utilization")
        if np.any(reps[~des] != 0) or np.any(np.isfinite(util[~des])):
            errors.append("analytical rows with simulation columns")
        if not np.all(np.isfinite(p["step_time_analytical_s"][:][des])):
            errors.append("des rows without their analytical step time")
        if len(argv) > 2:
            with h5py.File(argv[2], "r") as ref:
                errors += check_analytical_step(p, ref["points"])
        else:
            errors += check_analytical_step(p)
        print(f"checked {path}: {int(np.sum(des))} des rows of {len(fid)}")
    for e in errors:
        print("FAIL:", e)
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
