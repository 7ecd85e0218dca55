#!/usr/bin/python3
"""Checks that two rapid-sweep files hold the same results: every dataset under /points and
/hardware equal row for row (floats bitwise, so NaN == NaN), same dtypes (enum members
included) and dataset attributes, and the same root attributes except those that describe
the run itself (ranks, threads, timing, memory, command line, creation time).

    compare_results.py A.h5 B.h5
"""
import sys

import h5py
import numpy as np

RUN_ATTRIBUTES = {"command_line", "ranks", "threads_per_rank", "wall_time_s", "points_per_s",
                  "peak_rss_bytes", "created", "slurm_job_id", "hostnames", "time_enumerate_s",
                  "time_evaluate_s", "time_pack_s", "time_wait_s", "time_write_s"}
# The HDF5 dimension-scale bookkeeping (object references into the file): compared as the
# names of the scales attached instead.
SCALE_ATTRIBUTES = {"DIMENSION_LIST", "REFERENCE_LIST", "CLASS", "NAME"}


def same_attrs(da, db):
    """Dataset attributes equal (arrays elementwise) and the same dimension scales."""
    ka = set(da.attrs) - SCALE_ATTRIBUTES
    if ka != set(db.attrs) - SCALE_ATTRIBUTES:
        return False
    for k in ka:
        if not np.array_equal(np.asarray(da.attrs[k]), np.asarray(db.attrs[k])):
            return False
    def scales(d):
        return [[s.name for s in dim.values()] for dim in d.dims]
    return scales(da) == scales(db) and h5py.h5ds.is_scale(da.id) == h5py.h5ds.is_scale(db.id)


def same_array(a, b):
    if a.dtype.kind == "f":
        return a.dtype == b.dtype and np.array_equal(a.view(np.uint64 if a.itemsize == 8
                                                           else np.uint32),
                                                    b.view(np.uint64 if b.itemsize == 8
                                                           else np.uint32))
    return np.array_equal(a, b)


def compare(pa, pb):
    errors = []
    with h5py.File(pa, "r") as a, h5py.File(pb, "r") as b:
        for group in ("points", "hardware", "scenarios"):
            na, nb = sorted(a[group]), sorted(b[group])
            if na != nb:
                errors.append(f"/{group} datasets differ: {na} vs {nb}")
                continue
            for name in na:
                da, db = a[group][name], b[group][name]
                if da.dtype != db.dtype or h5py.check_enum_dtype(da.dtype) != \
                        h5py.check_enum_dtype(db.dtype):
                    errors.append(f"/{group}/{name}: dtype {da.dtype} vs {db.dtype}")
                    continue
                xa, xb = da[()], db[()]
                if xa.shape != xb.shape:
                    errors.append(f"/{group}/{name}: shape {xa.shape} vs {xb.shape}")
                elif not same_array(xa, xb):
                    rows = np.nonzero(xa != xb)[0] if xa.dtype.kind != "f" else \
                        np.nonzero(xa.view(np.uint64) != xb.view(np.uint64))[0]
                    errors.append(f"/{group}/{name}: {len(rows)} rows differ, first {rows[:5]}")
                if not same_attrs(da, db):
                    errors.append(f"/{group}/{name}: attributes differ")
        ka = set(a.attrs) - RUN_ATTRIBUTES
        kb = set(b.attrs) - RUN_ATTRIBUTES
        if ka != kb:
            errors.append(f"root attributes differ: {sorted(ka ^ kb)}")
        for k in sorted(ka & kb):
            if a.attrs[k] != b.attrs[k]:
                errors.append(f"root attribute {k}: {a.attrs[k]!r} vs {b.attrs[k]!r}")
        n = a.attrs.get("num_points", -1)
        print(f"compared {n} rows x {len(a['points'])} columns of {pa} and {pb}")
    return errors


def main(argv):
    errors = compare(*argv)
    for e in errors:
        print("FAIL:", e)
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
