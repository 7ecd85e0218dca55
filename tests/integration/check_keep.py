#!/usr/bin/python3
"""--keep modes and the compressed file (issue 13): JOB swept with --keep all on 1 rank is
the reference. Then, on 1 and on NP ranks (tiny fixed chunks: many blocks, out of order):
 - --keep all equals the reference row for row (compare_results.py);
 - --keep feasible holds exactly the reference's rows with status ok, in point order, every
   column equal (h5py reads the compressed rows back identical), and /dropped counts the
   other rows per status;
 - --keep top-K holds, per (GPU count, hardware variant, scenario, load), the K reference
   rows with the shortest step time (ties: the lower point index), and the job's baseline
   point when it is not among them (root attribute baseline_kept_extra 1), in point order,
   every column equal; /dropped counts the rest;
 - the 1-rank and NP-rank files of each mode are equal row for row;
 - every /points column is chunked with shuffle + deflate; a column that is NaN in every row
   (the serving columns of a training sweep) occupies no bytes on disk (never written:
   HDF5 returns its fill value NaN).

    check_keep.py MPIRUN RAPID_SWEEP JOB OUT_DIR NP K
"""
import os
import subprocess
import sys

import h5py
import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from check_common import run  # noqa: E402


def sweep(mpirun, exe, job, out, ranks, *extra):
    return [mpirun, "-n", str(ranks), "--oversubscribe", exe, job, "-o", out, "--overwrite",
            "--threads", "1", "--quiet", *extra]


def columns(path):
    with h5py.File(path, "r") as f:
        return {k: f["points"][k][()] for k in f["points"] if k != "done"}


def equal(a, b):
    if a.dtype.kind == "f":
        return a.shape == b.shape and np.array_equal(a, b, equal_nan=True)
    return a.shape == b.shape and np.array_equal(a, b)


def compare_rows(errors, what, got, ref, rows):
    for name, col in ref.items():
        if name not in got:
            errors.append(f"{what}: column {name} missing")
        elif not equal(got[name], col[rows]):
            errors.append(f"{what}: column {name} differs from the reference's rows")


def main(mpirun, exe, job, out_dir, np_ranks, k):
    k = int(k)
    errors = []
    os.makedirs(out_dir, exist_ok=True)
    ref_path = os.path.join(out_dir, "keep-ref.h5")
    run(sweep(mpirun, exe, job, ref_path, 1), errors)
    if errors:
        print("\n".join("FAIL: " + e for e in errors))
        return 1
    ref = columns(ref_path)
    n = len(ref["point"])
    ok = np.flatnonzero(ref["status"] == 0)
    # The expected top-K rows, derived from the reference: per group the K shortest step
    # times among the feasible rows, ties by point index.
    groups = {}
    for i in ok:
        key = (int(ref["num_gpus"][i]), int(ref["hardware_index"][i]), int(ref["scenario"][i]),
               float(ref["concurrency"][i]) if not np.isnan(ref["concurrency"][i]) else -1.0,
               float(ref["arrival_rate_per_s"][i]) if not np.isnan(ref["arrival_rate_per_s"][i])
               else -1.0)
        groups.setdefault(key, []).append((float(ref["step_time_s"][i]), int(i)))
    top = sorted(i for g in groups.values() for _, i in sorted(g)[:k])
    # top-K also keeps the job's baseline point besides the best K (whatever its status;
    # README "--keep"), marked by the root attribute baseline_kept_extra.
    with h5py.File(ref_path, "r") as f:
        baseline = int(f.attrs["baseline_index"])
    base_extra = 0 <= baseline and baseline not in top
    if base_extra:
        top = sorted(top + [baseline])
    statuses = np.bincount(ref["status"].astype(int), minlength=7)
    for mode, rows in (("all", np.arange(n)), ("feasible", ok), (f"top-{k}", np.array(top))):
        files = {}
        for ranks, extra in ((1, ()), (int(np_ranks), ("--chunk", "7"))):
            path = os.path.join(out_dir, f"keep-{mode}-np{ranks}.h5")
            run(sweep(mpirun, exe, job, path, ranks, "--keep", mode, *extra), errors)
            if not os.path.exists(path):
                continue
            files[ranks] = path
            got = columns(path)
            what = f"--keep {mode} on {ranks} ranks"
            if not equal(got["point"], rows.astype(np.int64)):
                errors.append(f"{what}: points {got['point'][:8]}... expected {rows[:8]}...")
                continue
            compare_rows(errors, what, got, ref, rows)
            with h5py.File(path, "r") as f:
                if f.attrs["keep"] != mode or int(f.attrs["num_rows"]) != len(rows):
                    errors.append(f"{what}: attributes keep {f.attrs['keep']!r} num_rows "
                                  f"{f.attrs['num_rows']}")
                want_extra = int(base_extra and mode.startswith("top-"))
                if int(f.attrs["baseline_kept_extra"]) != want_extra:
                    errors.append(f"{what}: baseline_kept_extra "
                                  f"{f.attrs['baseline_kept_extra']}, expected {want_extra}")
                if mode != "all":
                    dropped = f["dropped/status_counts"][()]
                    kept = np.bincount(ref["status"][rows].astype(int), minlength=7)
                    if not np.array_equal(dropped, statuses - kept):
                        errors.append(f"{what}: /dropped/status_counts {dropped.tolist()} "
                                      f"expected {(statuses - kept).tolist()}")
                    hist = int(f["dropped/step_time_counts"][()].sum())
                    if hist != len(ok) - int((ref["status"][rows] == 0).sum()):
                        errors.append(f"{what}: {hist} feasible rows in the dropped histogram")
                for name, ds in f["points"].items():
                    if ds.chunks is None or ds.compression != "gzip" or not ds.shuffle:
                        errors.append(f"{what}: /points/{name} is not chunked shuffle+deflate")
                        break
                    if (ds.dtype.kind == "f" and ds.shape[0] > 0
                            and np.isnan(ds[()]).all() and ds.id.get_storage_size() != 0):
                        errors.append(f"{what}: /points/{name} is NaN everywhere yet takes "
                                      f"{ds.id.get_storage_size()} bytes")
        if len(files) == 2:
            cmp = subprocess.run([sys.executable, os.path.join(HERE, "compare_results.py"),
                                  files[1], files[int(np_ranks)]], capture_output=True, text=True)
            if cmp.returncode != 0:
                errors.append(f"--keep {mode}: {np_ranks} ranks differ from 1: {cmp.stdout[-400:]}")
        print(f"--keep {mode}: {len(rows)} of {n} rows, 1 rank = {np_ranks} ranks = the "
              "reference's rows")
    bad = subprocess.run(sweep(mpirun, exe, job, os.path.join(out_dir, "keep-bad.h5"), 1,
                               "--keep", "top-0"), capture_output=True, text=True)
    if bad.returncode != 2 or "--keep" not in bad.stderr:
        errors.append(f"--keep top-0: exit {bad.returncode}: {bad.stderr[-200:]}")
    for e in errors:
        print("FAIL:", e)
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:7]))
