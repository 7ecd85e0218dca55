#!/usr/bin/python3
"""`rapid export FILE.h5 --csv OUT.csv.gz` writes every row: the schema's columns plus the
hardware and scenario names, enums as their names, numbers that read back to the same
doubles; a missing input is exit 2 with nothing written.

    check_export.py RAPID RESULTS.h5 OUT_DIR
"""

import os
import subprocess
import sys

import h5py
import numpy as np
import pandas as pd


def main(rapid, path, out_dir):
    errors = []
    csv = os.path.join(out_dir, "export.csv.gz")
    run = subprocess.run([rapid, "export", path, "--csv", csv], capture_output=True, text=True)
    if run.returncode != 0:
        print(f"FAIL: rapid export exited {run.returncode}: {run.stderr}")
        return 1
    table = pd.read_csv(csv, compression="gzip", keep_default_na=False, na_values=["nan"],
                        float_precision="round_trip")  # exact doubles back
    with h5py.File(path, "r") as f:
        pts = f["points"]
        hardware = list(f["hardware/names"].asstr()[()])
        if len(table) != pts["status"].shape[0]:
            errors.append(f"{len(table)} CSV rows, {pts['status'].shape[0]} in the file")
        for name, ds in pts.items():
            if name == "done":  # the resume bookkeeping, not a column of the rows
                continue
            if name not in table:
                errors.append(f"column {name} missing from the CSV")
                continue
            enum = h5py.check_enum_dtype(ds.dtype)
            if enum:
                by_value = {v: k for k, v in enum.items()}
                want = [by_value[v] for v in ds[()].tolist()]
                if table[name].astype(str).tolist() != want:
                    errors.append(f"{name}: enum names differ")
            else:
                want = ds[()].astype(np.float64)
                got = table[name].to_numpy(dtype=np.float64)
                if not np.array_equal(got, want, equal_nan=True):
                    errors.append(f"{name}: values differ (first {got[:3]} vs {want[:3]})")
        if table["hardware"].tolist() != [hardware[i] for i in pts["hardware_index"][()]]:
            errors.append("hardware names differ")
    bad = subprocess.run([rapid, "export", path + ".missing", "--csv", csv + ".bad"],
                         capture_output=True, text=True)
    if bad.returncode != 2 or os.path.exists(csv + ".bad"):
        errors.append(f"a missing input: exit {bad.returncode}, output left: "
                      f"{os.path.exists(csv + '.bad')}")
    for e in errors:
        print("FAIL:", e)
    if not errors:
        print(f"checked {csv}: {len(table)} rows, {len(table.columns)} columns")
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:4]))
