#!/usr/bin/python3
"""Reads a result file the two ways the README documents ("Reading it from Python"), each
in exactly its documented call, and checks what they give against the job:

    xarray.open_dataset(path, group="points")      # one Dataset, one dimension `point`
    rapid_results.load(path).points                # one pandas DataFrame, enums decoded

The file is a sweep of tests/integration/jobs/llama3-8b-8gpu-tiny.yaml, whose comment
derives by hand: 14 points, 7 with recompute none and 7 with full, the tp1 pp1 rows oom and
the tp8 rows fitting.

    check_ecosystem.py OUT.h5
"""
import os
import sys

import netCDF4
import numpy as np
import xarray as xr

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "analysis"))
import rapid_results  # noqa: E402

N = 14  # 7 (tp, pp) pairs x 2 recompute options (the job file's derivation)
HARDWARE = ["h100-sxm5-80gb"]


def main(path):
    errors = []

    def expect(cond, what):
        if not cond:
            errors.append(what)

    # xarray, the documented call: no engine, no phony_dims, no decoding options.
    ds = xr.open_dataset(path, group="points")
    engine = xr.backends.plugins.guess_engine(path)
    expect(dict(ds.sizes) == {"point": N}, f"xarray dimensions {dict(ds.sizes)}")
    expect(ds["point"].values.tolist() == list(range(N)), "the point coordinate is 0..N-1")
    # CF units in UDUNITS spelling (src/io/netcdf_layout.cpp); "s" stays a float column
    # (xarray decodes only spelled-out time units such as "seconds" to timedelta).
    expect(ds["step_time_s"].attrs.get("units") == "s", "step_time_s units")
    expect(ds["step_time_s"].dtype == np.float64, f"step_time_s is {ds['step_time_s'].dtype}")
    expect(ds["peak_memory_bytes"].attrs.get("units") == "byte", "peak_memory_bytes units")
    expect(ds["tokens_per_s"].attrs.get("units") == "s-1", "tokens_per_s units")
    expect(ds["tp"].attrs.get("units") == "1", "tp units (a count: '1')")
    expect(ds["gpu_temperature_C"].attrs.get("units") == "degC", "temperature units")
    expect(bool(ds["step_time_s"].attrs.get("long_name")), "step_time_s has no long_name")
    # Enums reach xarray as their integer codes; CF flag_values/flag_meanings name them.
    status_attrs = ds["status"].attrs
    expect("units" not in status_attrs, "an enum column has units")
    meanings = status_attrs.get("flag_meanings", "").split()
    values = list(status_attrs.get("flag_values", []))
    expect(meanings[:2] == ["ok", "oom"] and values[:2] == [0, 1],
           f"status flag_meanings {meanings} flag_values {values}")
    xr_status = [meanings[values.index(v)] for v in ds["status"].values.tolist()]
    tp, pp = ds["tp"].values, ds["pp"].values
    expect(all(s == "oom" for s, a, b in zip(xr_status, tp, pp) if a == 1 and b == 1),
           "xarray: tp1 pp1 rows are not oom")
    expect(all(s == "ok" for s, a in zip(xr_status, tp) if a == 8), "xarray: tp8 rows not ok")
    rec = ds["recompute"].attrs["flag_meanings"].split()
    counts = {name: int((ds["recompute"].values == i).sum()) for i, name in enumerate(rec)}
    expect(counts == {"none": 7, "selective": 0, "full": 7, "op": 0},
           f"recompute counts {counts}")
    wf = ds["warning_flags"].attrs
    expect(wf.get("flag_meanings", "").split() ==
           [k.removeprefix("warn_") for k in rapid_results.WARNING_FLAGS] and
           list(wf.get("flag_masks", [])) == list(rapid_results.WARNING_FLAGS.values()),
           "warning_flags flag_masks/flag_meanings differ from rapid_results.WARNING_FLAGS")
    df = ds.to_dataframe()
    expect(len(df) == N and df.index.name == "point", "xarray to_dataframe()")
    hw = xr.open_dataset(path, group="hardware")
    expect(hw["names"].values.tolist() == HARDWARE, f"/hardware/names {hw['names'].values}")
    expect(hw["names"].sel(hardware_index=ds["hardware_index"]).values.tolist() == HARDWARE * N,
           "hardware names indexed by hardware_index")
    # The other engine reads the same (h5netcdf: needs a dimension scale on every dataset).
    other = xr.open_dataset(path, group="points", engine="h5netcdf")
    expect(dict(other.sizes) == {"point": N}, "h5netcdf dimensions")
    # netCDF-C sees the enums as netCDF-4 enum types.
    with netCDF4.Dataset(path) as nc:
        enum = nc["points"]["status"].datatype
        expect(isinstance(enum, netCDF4.EnumType) and
               list(enum.enum_dict)[:2] == ["ok", "oom"], "netCDF-4: status is not an enum")

    # pandas, the documented call.
    points = rapid_results.load(path).points
    expect(len(points) == N, f"{len(points)} rows")
    expect(points.index.tolist() == list(range(N)) and points.index.name == "point", "index")
    expect(str(points["status"].dtype) == "category", "status is not categorical")
    expect(points["status"].tolist() == xr_status, "status: pandas and xarray differ")
    oom = points[(points.tp == 1) & (points.pp == 1)]
    expect(len(oom) == 2 and (oom.status == "oom").all(), "pandas: tp1 pp1 rows are not oom")
    expect(points["recompute"].value_counts().to_dict() == {"none": 7, "full": 7, "selective": 0, "op": 0},
           f"recompute {points['recompute'].value_counts().to_dict()}")
    expect(points["hardware"].tolist() == HARDWARE * N, "hardware names")
    expect(np.array_equal(points["step_time_s"].to_numpy(), ds["step_time_s"].values,
                          equal_nan=True), "step_time_s: pandas and xarray differ")

    for e in errors:
        print("FAIL:", e)
    if not errors:
        print(f"checked {path} with xarray (engine {engine}, and h5netcdf) and pandas: "
              f"{N} rows, {len(ds.data_vars)} variables over one dimension")
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
