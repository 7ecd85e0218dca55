#!/usr/bin/python3
"""Reads the result of sweeping jobs/llama3-8b-16gpu.yaml back with h5py and checks the file
against what the job implies (the counts are derived by hand in the job file's comment).

    check_result_file.py OUT.h5 JOB.yaml RANKS
"""
import re
import os
import sys
from collections import Counter

import h5py
import numpy as np

# Blocks per (tp, pp) from the table in jobs/llama3-8b-16gpu.yaml; each block has 2
# recompute options and the job 2 hardware variants.
BLOCKS = {(1, 1): 4, (1, 2): 6, (1, 4): 6, (2, 1): 12, (2, 2): 12, (2, 4): 12,
          (4, 1): 12, (4, 2): 12, (4, 4): 6, (8, 1): 12, (8, 2): 6}
RECOMPUTE, HARDWARE = 2, ["h100-sxm5-80gb", "a100-sxm4-80gb"]
N = sum(BLOCKS.values()) * RECOMPUTE * len(HARDWARE)  # 100 * 2 * 2 = 400
BASELINE = {"hardware_index": 0, "dp": 4, "tp": 2, "pp": 2, "cp": 1, "ep": 1, "vpp": 1,
            "mbs": 1, "sp": 1, "zero_stage": 1, "recompute": 2}  # 2 = "full"

STRING_ATTRS = ["format", "version", "git_revision", "command_line", "job_name", "job_path",
                "job_yaml", "model_name", "model_yaml", "network_name", "network_yaml",
                "fidelity", "created", "hostnames", "mpi_library_version",
                "hdf5_library_version"]
INT_ATTRS = ["format_version", "ranks", "threads_per_rank", "num_points", "baseline_index",
             "peak_rss_bytes"]
FLOAT_ATTRS = ["wall_time_s", "points_per_s"]


def check(path, job, ranks):
    errors = []

    def expect(cond, what):
        if not cond:
            errors.append(what)

    with h5py.File(path, "r") as f:
        pts = f["points"]
        cols = {name: pts[name][()] for name in pts}
        for name, data in cols.items():
            expect(data.shape == (N,), f"/points/{name} has shape {data.shape}, expected ({N},)")
            expect(isinstance(pts[name].attrs.get("unit"), str), f"{name}: no str unit")
            expect(isinstance(pts[name].attrs.get("description"), str) and
                   pts[name].attrs["description"], f"{name}: no description")
        expect(pts["step_time_s"].attrs["unit"] == "s", "step_time_s unit is not 's'")

        # Enum columns carry their member names.
        expect(h5py.check_enum_dtype(pts["status"].dtype) ==
               {"ok": 0, "oom": 1, "infeasible": 2, "no_route": 3, "overheat": 4,
                "error": 5, "overloaded": 6},
               "status enum members")
        expect(h5py.check_enum_dtype(pts["recompute"].dtype) ==
               {"none": 0, "selective": 1, "full": 2, "op": 3}, "recompute enum members")
        status = Counter(cols["status"].tolist())
        expect(status[0] > 0 and status[1] > 0, f"expected ok and oom points, got {status}")
        expect(set(cols["recompute"].tolist()) == {0, 2}, "recompute values are none/full")
        for name in ("dp", "tp", "pp", "mbs", "num_gpus"):
            expect(cols[name].dtype == np.int32, f"{name} is {cols[name].dtype}, not int32")
        expect(cols["step_time_s"].dtype == np.float64, "step_time_s is not float64")
        expect(cols["warning_flags"].dtype == np.uint32, "warning_flags is not uint32")
        expect(cols["sp"].dtype == np.uint8, "sp is not uint8")

        # Every legal layout exactly once, with the counts of the hand derivation.
        expect(np.all(cols["num_gpus"] == 16), "num_gpus != 16")
        expect(np.all(cols["dp"] * cols["tp"] * cols["pp"] * cols["cp"] == 16), "dp*tp*pp*cp")
        per_pair = Counter(zip(cols["tp"].tolist(), cols["pp"].tolist()))
        want = {k: v * RECOMPUTE * len(HARDWARE) for k, v in BLOCKS.items()}
        expect(dict(per_pair) == want, f"points per (tp, pp) {dict(per_pair)} != {want}")
        keys = ["hardware_index", "dp", "tp", "pp", "mbs", "sp", "zero_stage", "recompute"]
        layouts = set(zip(*(cols[k].tolist() for k in keys)))
        expect(len(layouts) == N, f"{N - len(layouts)} duplicate layouts")
        expect(Counter(cols["hardware_index"].tolist()) == {0: N // 2, 1: N // 2},
               "200 points per hardware variant")

        hw = f["hardware"]
        expect(list(hw["names"].asstr()[()]) == HARDWARE,
               f"/hardware/names {list(hw['names'].asstr()[()])}")
        yamls = list(hw["yaml"].asstr()[()])
        expect(len(yamls) == 2 and all(f"name: {n}" in y for n, y in zip(HARDWARE, yamls)),
               "/hardware/yaml does not hold the variants' YAML")

        # A job without non-ideal keys: one scenario, "ideal", and its columns left NaN
        # (docs/nonideal.md).
        expect(list(f["scenarios/names"].asstr()[()]) == ["ideal"], "/scenarios/names")
        expect(np.all(cols["scenario"] == 0), "scenario column is not all 0")
        for name in ("energy_per_step_J", "gpu_temperature_C", "goodput"):
            expect(np.all(np.isnan(cols[name])), f"{name} is set on an ideal scenario")
        expect(np.all(cols["bounding_gpu"] == -1), "bounding_gpu set on an ideal scenario")

        # Provenance.
        a = f.attrs
        for k in STRING_ATTRS:
            expect(isinstance(a.get(k), str) and a[k] != "", f"attribute {k} missing or not str")
        for k in INT_ATTRS:
            expect(isinstance(a.get(k), np.integer), f"attribute {k} missing or not an integer")
        for k in FLOAT_ATTRS:
            expect(isinstance(a.get(k), np.floating) and a[k] > 0, f"attribute {k} not > 0")
        if not errors:
            expect(a["format"] == "rapid-sweep results", "format")
            expect(isinstance(a.get("slurm_job_id"), str), "slurm_job_id attribute missing")
            expect(a["mpi_library_version"].startswith("Open MPI"), "mpi_library_version")
            expect(re.fullmatch(r"\d+\.\d+\.\d+", a["hdf5_library_version"]), "hdf5_library_version")
            expect(a["format_version"] == 3, "format_version")
            expect(a["num_points"] == N, f"num_points {a['num_points']} != {N}")
            expect(a["ranks"] == ranks, f"ranks {a['ranks']} != {ranks}")
            expect(a["threads_per_rank"] >= 1, "threads_per_rank")
            expect(a["peak_rss_bytes"] > 1 << 20, "peak_rss_bytes below 1 MiB")
            expect(a["fidelity"] == "analytical", "fidelity")
            expect(a["job_name"] == "llama3-8b-16gpu", "job_name")
            expect(a["model_name"] == "llama3-8b", "model_name")
            expect(a["network_name"] == "dgx-h100-superpod", "network_name")
            expect(a["job_yaml"] == open(job, encoding="utf-8").read(), "job_yaml != job file")
            expect("rapid-sweep" in a["command_line"], "command_line")
            expect(re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", a["created"]), "created")

            # The baseline row is the job's baseline layout, and the only one on variant 0.
            b = int(a["baseline_index"])
            expect(0 <= b < N, f"baseline_index {b}")
            if 0 <= b < N:
                row = {k: int(cols[k][b]) for k in BASELINE}
                expect(row == BASELINE, f"row {b} is {row}, expected {BASELINE}")
                match = np.ones(N, dtype=bool)
                for k, v in BASELINE.items():
                    match &= cols[k] == v
                expect(np.flatnonzero(match).tolist() == [b], "baseline layout not unique")
    # The loader decodes warning_flags into named booleans (bit 1: fewer than 8 samples per
    # replica per step, gbs / dp < 8: with this job's gbs 32, dp 8 and 16).
    sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "analysis"))
    import rapid_results  # noqa: E402
    pts = rapid_results.load(path).points
    for name, bit in rapid_results.WARNING_FLAGS.items():
        expect(np.array_equal(pts[name].to_numpy(), (cols["warning_flags"] & bit) != 0),
               f"{name} is not bit {bit} of warning_flags")
    expect(np.array_equal(pts["warn_small_microbatch"].to_numpy(), 32 // cols["dp"] < 8),
           "warn_small_microbatch is not gbs 32 / dp < 8")
    print(f"checked {path}: {N} rows, {len(cols)} columns")
    return errors


def main(argv):
    errors = check(argv[0], argv[1], int(argv[2]))
    for e in errors:
        print("FAIL:", e)
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
