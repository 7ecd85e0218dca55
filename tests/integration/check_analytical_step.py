#!/usr/bin/python3
"""Checks the step_time_analytical_s column of a rapid-sweep file: on analytical rows it is
the row's step_time_s; with ANALYTICAL.h5, an analytical-only sweep of the same job, every
row's (a --fidelity des row, a row --fidelity auto refined with the DES) equals the
step_time_s of that point there, bitwise (NaN where the point did not evaluate).

    check_analytical_step.py OUT.h5 [ANALYTICAL.h5]
"""
import sys

import h5py
import numpy as np


def check_analytical_step(points, reference=None):
    """Errors in points["step_time_analytical_s"]; `reference`: the /points group of the
    analytical sweep of the same job."""
    errors = []
    step, kept = points["step_time_s"][:], points["step_time_analytical_s"][:]
    analytical = points["fidelity"][:] == 0  # kFidelityNames: {"analytical", "des"}
    if not np.array_equal(kept[analytical], step[analytical], equal_nan=True):
        errors.append("analytical rows whose step_time_analytical_s is not their step_time_s")
    if reference is not None:
        want = reference["step_time_s"][:]
        if want.shape != kept.shape:
            errors.append(f"{len(kept)} rows, the analytical sweep {len(want)}")
        else:
            bad = ~((kept == want) | (np.isnan(kept) & np.isnan(want)))
            if np.any(bad):
                errors.append(f"{int(np.sum(bad))} rows whose step_time_analytical_s is not the "
                              f"analytical sweep's step_time_s (first: row "
                              f"{int(np.argmax(bad))})")
            if not np.any(~analytical & np.isfinite(want)):
                errors.append("no simulated row with an analytical step time to compare")
    return errors


def main(argv):
    errors = []
    with h5py.File(argv[0], "r") as f:
        if len(argv) > 1:
            with h5py.File(argv[1], "r") as ref:
                errors = check_analytical_step(f["points"], ref["points"])
        else:
            errors = check_analytical_step(f["points"])
        print(f"checked step_time_analytical_s of {argv[0]}")
    for e in errors:
        print("FAIL:", e)
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
