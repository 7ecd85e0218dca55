#!/usr/bin/python3
"""A point the evaluator fails on (injected with RAPID_SWEEP_TEST_POINT_ERROR=I) is a row
with status `error` and error_code `internal`; every other row is evaluated as usual (the
sweep goes on).

    check_point_error.py RESULTS.h5 I
"""

import sys

import h5py
import numpy as np


def main(path, index):
    with h5py.File(path, "r") as f:
        status = f["points/status"][()]
        code = f["points/error_code"][()]
        names = h5py.check_enum_dtype(f["points/error_code"].dtype)
        step = f["points/step_time_s"][()]
    errors = []
    if status[index] != 5 or code[index] != names["internal"]:
        errors.append(f"row {index}: status {status[index]}, error_code {code[index]}")
    if np.count_nonzero(status == 5) != 1:
        errors.append(f"{np.count_nonzero(status == 5)} error rows, expected 1")
    if not np.isnan(step[index]):
        errors.append("the error row has a step time")
    others = np.delete(np.arange(len(status)), index)
    if not np.all(code[others] == names["none"]) or not np.any(status[others] == 0):
        errors.append("other rows carry an error code or none is ok")
    for e in errors:
        print("FAIL:", e)
    if not errors:
        print(f"checked {path}: row {index} is an error row, {len(status) - 1} others evaluated")
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], int(sys.argv[2])))
