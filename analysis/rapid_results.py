"""Load a rapid-sweep HDF5 result file into pandas.

    import rapid_results
    res = rapid_results.load("results/llama3-70b-256xh100.h5")
    res.points                 # DataFrame indexed by the point of the sweep ("point"; every
                               # point with --keep all, the kept ones otherwise)
    res.points.query("status == 'ok'").nlargest(5, "tokens_per_s_per_gpu")
    res.attrs["job_name"]      # provenance (root attributes of the file)
    res.units["step_time_s"]   # "s" (the README's spelling; res.cf_units: UDUNITS, "byte")
    res.baseline               # the job's baseline row (a Series), or None
    res.variants               # one row per hardware_index: name, base, base_index,
                               # overrides, is_base and the parameter columns

The same file is a netCDF-4 file: `xarray.open_dataset(path, group="points")` opens the
columns over the one dimension `point` (enums as their integer codes, with CF
flag_values/flag_meanings attributes naming them; README "Reading it with xarray").

The warning_flags bitmask is also decoded into boolean columns warn_small_microbatch,
warn_latency_bound_comm, warn_closed_form_risk, warn_pipeline_bubble, warn_near_capacity and
warn_prompt_over_budget.
Enum columns (status, recompute) come back as categorical strings ("ok", "oom",
"infeasible"; "none", "selective", "full", "op"), `sp` as bool, and the column `hardware` holds
the hardware variant's name from /hardware/names. Time columns are NaN for OOM points.
Run with Debian's /usr/bin/python3 (python3-h5py, python3-pandas).
"""

from __future__ import annotations

import os
import re
import sys
from dataclasses import dataclass, field

import h5py
import numpy as np
import pandas as pd

GIB = float(1 << 30)

# Columns that name a parallel layout, in the order rapid's describe() prints them.
LAYOUT_COLUMNS = ["dp", "tp", "pp", "cp", "ep", "vpp", "mbs", "sp", "zero_stage", "recompute"]

# Column order of src/io/result_schema.cpp (HDF5 lists datasets alphabetically); columns
# not named here follow in the file's order.
SCHEMA_ORDER = [
    "hardware_index", "num_gpus", *LAYOUT_COLUMNS, "num_microbatches",
    "status", "warning_flags", "step_time_s", "step_time_analytical_s", "tokens_per_s",
    "tokens_per_s_per_gpu", "mfu", "hfu", "compute_time_s", "gemm_time_s", "attention_time_s",
    "memory_bound_time_s", "exposed_comm_time_s", "tp_comm_time_s", "cp_comm_time_s",
    "ep_comm_time_s", "pp_comm_time_s",
    "dp_comm_time_s", "dp_exposed_time_s", "bubble_time_s", "optimizer_time_s",
    "comm_compute_ratio", "peak_memory_bytes", "weights_bytes", "grads_bytes",
    "optimizer_bytes", "activations_bytes", "reserve_bytes", "memory_capacity_bytes"]

# The bits of warning_flags (include/rapid/core/eval_result.hpp Flag), decoded by load() into boolean
# columns of these names.
WARNING_FLAGS = {
    "warn_small_microbatch": 1,     # fewer than 8 samples per replica per step
    "warn_latency_bound_comm": 2,   # TP messages below 1 MiB
    "warn_closed_form_risk": 4,     # the closed form parts from the DES on such layouts
    "warn_pipeline_bubble": 8,      # bubble above 20% of the step
    "warn_near_capacity": 16,       # peak memory above 95% of capacity
    "warn_prompt_over_budget": 32,  # serving: a prompt ran alone past the token budget
}

# The float64 parameter columns of /variants (one value per hardware_index) that every file
# since /variants has, in the order tables show them. A newer file may add more (one per
# hardware key with a column in kHardwareFields, include/rapid/spec/hardware_spec.hpp):
# variant_params() lists a file's own.
VARIANT_PARAMS = ["num_sms", "sm_clock_Hz", "tensor_peak_bf16_FLOPs", "tensor_peak_fp8_FLOPs",
                  "hbm_capacity_bytes", "hbm_bandwidth_Bps", "l2_size_bytes", "l2_bandwidth_Bps",
                  "nvlink_bandwidth_Bps", "nic_bandwidth_Bps", "tdp_W", "hbm_thermal_keep"]

# Where a plain hardware file (configs/hardware/*.yaml) keeps each parameter: the fallback
# for files written before /variants (key path in the YAML text of /hardware/yaml).
_HARDWARE_KEYS = {"num_sms": ("num_sms",), "sm_clock_Hz": ("sm_clock",),
                  "tensor_peak_bf16_FLOPs": ("tensor_peak", "bf16"),
                  "tensor_peak_fp8_FLOPs": ("tensor_peak", "fp8"),
                  "hbm_capacity_bytes": ("hbm_capacity",), "hbm_bandwidth_Bps": ("hbm_bandwidth",),
                  "l2_size_bytes": ("l2_size",), "l2_bandwidth_Bps": ("l2_bandwidth",),
                  "nvlink_bandwidth_Bps": ("nvlink_bandwidth",),
                  "nic_bandwidth_Bps": ("nic_bandwidth",), "tdp_W": ("tdp",)}

# Datasets a file must have to be read as a rapid-sweep result.
_REQUIRED = ["hardware_index", "status", "tokens_per_s_per_gpu", "step_time_s",
             "peak_memory_bytes", "memory_capacity_bytes"] + LAYOUT_COLUMNS


class NotRapidFile(Exception):
    """The path is missing, not HDF5, or not laid out as a rapid-sweep result."""


@dataclass
class Results:
    path: str
    points: pd.DataFrame
    attrs: dict
    hardware: pd.DataFrame  # one row per hardware variant: name, yaml
    units: dict = field(default_factory=dict)
    descriptions: dict = field(default_factory=dict)
    # one row per non-ideal scenario (docs/nonideal.md): name, description
    scenarios: pd.DataFrame = field(default_factory=pd.DataFrame)
    # CF `units` (UDUNITS-2 spelling) of each column that has one (format_version >= 2)
    cf_units: dict = field(default_factory=dict)
    # one row per hardware_index (index): name, base, base_index, overrides, is_base and
    # VARIANT_PARAMS; from /variants, else derived from /hardware (variants_from_file False)
    variants: pd.DataFrame = field(default_factory=pd.DataFrame)
    variants_from_file: bool = False

    @property
    def keep(self) -> str:
        """--keep of the sweep: all (every point a row), feasible or top-K."""
        return str(self.attrs.get("keep", "all"))

    def keep_note(self) -> list[str]:
        """What a --keep feasible / top-K file left out (its /dropped counts are in the
        file; num_points is the sweep's size)."""
        if self.keep == "all":
            return []
        total = int(self.attrs.get("num_points", len(self.points)))
        extra = (f" (the baseline, point {self.baseline_index}, kept besides the best of its "
                 "group for the speedups)" if self.baseline_kept_extra else "")
        return [f"--keep {self.keep}: {len(self.points)} of the sweep's {total} points are in "
                f"this file{extra}; /dropped counts the others by status and step time."]

    @property
    def baseline_kept_extra(self) -> bool:
        """--keep top-K: the baseline's row is in the file besides the best K of its group
        (root attribute baseline_kept_extra; it is no rank K+1)."""
        return int(self.attrs.get("baseline_kept_extra", 0)) == 1

    def baseline_missing(self) -> str:
        """Why there is no baseline row: the job has none, or --keep dropped it."""
        i = self.baseline_index
        if i >= 0 and i not in self.points.index:
            return f"the baseline (point {i}) is not among the rows --keep {self.keep} kept"
        return "the job has no `baseline:`"

    @property
    def baseline_index(self) -> int:
        return int(self.attrs.get("baseline_index", -1))

    @property
    def baseline(self) -> pd.Series | None:
        i = self.baseline_index
        # --keep feasible / top-K files hold some points only: the baseline may be absent.
        return self.points.loc[i] if i >= 0 and i in self.points.index else None


def _text(value):
    """HDF5 strings arrive as str, bytes or numpy scalars; give back plain Python values."""
    if isinstance(value, (bytes, np.bytes_)):
        return value.decode("utf-8", errors="replace")
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, np.ndarray):
        return [_text(v) for v in value.tolist()] if value.ndim else _text(value[()])
    return value


def _strings(ds: h5py.Dataset) -> list[str]:
    if h5py.check_string_dtype(ds.dtype) is not None:
        return [str(s) for s in ds.asstr()[()]]
    return [str(_text(s)) for s in ds[()]]


def _column(ds: h5py.Dataset) -> np.ndarray | pd.Categorical:
    data = ds[()]
    names = h5py.check_enum_dtype(ds.dtype)
    if names is None:
        return data
    by_value = sorted(names.items(), key=lambda kv: kv[1])
    categories = [name for name, _ in by_value]
    codes = np.full(data.shape, -1, dtype=np.int64)
    for pos, (_, value) in enumerate(by_value):
        codes[data == value] = pos
    return pd.Categorical.from_codes(codes, categories=categories)


_PREFIX = {"": 1.0, "k": 1e3, "K": 1e3, "M": 1e6, "G": 1e9, "T": 1e12, "P": 1e15,
           "Ki": 2.0**10, "Mi": 2.0**20, "Gi": 2.0**30, "Ti": 2.0**40}
_QUANTITY = re.compile(r"^([-+0-9.eE]+)\s*(Ki|Mi|Gi|Ti|k|K|M|G|T|P|)(FLOPS|Hz|B/s|bps|B|W|)$")


def quantity(text: str) -> float:
    """"2039GB/s" -> 2.039e12, "40MiB" -> 41943040.0, "1410MHz", "312TFLOPS", "400W", "108";
    NaN for anything else (bits per second are given in bytes per second)."""
    m = _QUANTITY.match(str(text).strip())
    if not m or (not m.group(3) and m.group(2)):
        return float("nan")
    try:
        value = float(m.group(1)) * _PREFIX[m.group(2)]
    except ValueError:
        return float("nan")
    return value / 8 if m.group(3) == "bps" else value


def _yaml_scalars(text: str) -> dict:
    """The scalar keys of a hardware file, by path: {("hbm_bandwidth",): "2039GB/s",
    ("tensor_peak", "bf16"): "312TFLOPS", ...}. Two levels of block mappings, which is what
    configs/hardware/*.yaml uses; PyYAML is not a dependency."""
    out, parent = {}, None
    for raw in text.splitlines():
        line = raw.split("#", 1)[0].rstrip()
        m = re.match(r"^( *)([A-Za-z0-9_]+):\s*(.*)$", line)
        if not m:
            continue
        indent, key, value = len(m.group(1)), m.group(2), m.group(3).strip()
        if indent == 0:
            parent = key if not value else None
            if value:
                out[(key,)] = value
        elif parent is not None and value and not value.startswith("{"):
            out[(parent, key)] = value
    return out


def _derived_variants(names: list[str], yamls: list[str]) -> pd.DataFrame:
    """/variants as far as /hardware tells it: each entry a plain hardware file (is_base 1,
    no overrides), its parameters read from its YAML text, hardware_index 0 the base."""
    rows = []
    for name, text in zip(names, yamls):
        scalars = _yaml_scalars(text or "")
        row = {"name": name, "base": name, "overrides": "", "is_base": 1}
        for col, key in _HARDWARE_KEYS.items():
            row[col] = quantity(scalars[key]) if key in scalars else float("nan")
        row["hbm_thermal_keep"] = 1.0
        rows.append(row)
    return pd.DataFrame(rows, columns=["name", "base", "overrides", "is_base", *VARIANT_PARAMS])


# /variants datasets and frame columns that are not hardware parameters.
_VARIANT_BOOKKEEPING = {"hardware_index", "names", "name", "base", "overrides", "is_base",
                        "base_index"}


def variant_params(variants: pd.DataFrame) -> list[str]:
    """The hardware parameter columns of a variants frame: VARIANT_PARAMS, then those a
    newer file adds, by name."""
    return [c for c in variants.columns if c not in _VARIANT_BOOKKEEPING]


def _file_variants(group: h5py.Group, names: list[str]) -> pd.DataFrame:
    """The /variants group as a DataFrame (columns it lacks are NaN or empty): VARIANT_PARAMS,
    then every other numeric dataset of the group."""
    frame = {"name": _strings(group["names"]) if "names" in group else list(names)}
    n = len(frame["name"])
    frame["base"] = _strings(group["base"]) if "base" in group else list(frame["name"])
    frame["overrides"] = _strings(group["overrides"]) if "overrides" in group else [""] * n
    frame["is_base"] = (group["is_base"][()].astype(int) if "is_base" in group
                        else np.ones(n, dtype=int))
    newer = [name for name in group if name not in _VARIANT_BOOKKEEPING
             and name not in VARIANT_PARAMS and group[name].dtype.kind in "fiu"]
    for col in VARIANT_PARAMS + newer:
        frame[col] = (group[col][()].astype(float) if col in group
                      else np.full(n, np.nan))
    return pd.DataFrame(frame)


def _with_base_index(variants: pd.DataFrame) -> pd.DataFrame:
    """base_index: the hardware_index speedups are taken against. A variant's `base` entry
    when the file has it (and it is not the entry itself), else hardware_index 0 (the job's
    first hardware entry); entry 0 is its own base."""
    position = {name: i for i, name in enumerate(variants["name"])}
    base_index = []
    for i, base in enumerate(variants["base"]):
        j = position.get(base, 0)
        base_index.append(j if j != i else 0)
    variants = variants.copy()
    variants.insert(2, "base_index", base_index)
    variants.index.name = "hardware_index"
    return variants


def load(path: str) -> Results:
    """Reads the whole /points table, /hardware and the root attributes of `path`."""
    if os.path.isdir(path):
        raise NotRapidFile(f"{path}: is a directory (expected an HDF5 file written by "
                           "rapid-sweep)")
    if not os.path.isfile(path):
        raise NotRapidFile(f"{path}: no such file")
    try:
        f = h5py.File(path, "r")
    except OSError as e:
        raise NotRapidFile(f"{path}: not an HDF5 file ({e})") from None
    try:
        return _load_open(path, f)
    except _Damaged as e:
        raise NotRapidFile(f"{path}: {e.where}: unreadable ({e.cause}): the file is damaged "
                           "(rerun the sweep that wrote it)") from None


class _Damaged(Exception):
    """An object of an open file that does not read back (checksum, inflate, truncation)."""

    def __init__(self, where, cause):
        super().__init__(where)
        self.where, self.cause = where, cause


def _load_open(path, f):
    """load()'s reading of an open file; an OSError while reading an object becomes _Damaged
    naming the object."""
    def guard(name, fn):
        try:
            return fn()
        except (OSError, KeyError, ValueError) as e:
            raise _Damaged(name, str(e).strip() or type(e).__name__) from None

    with f:
        fmt = guard("/ (attribute format)", lambda: _text(f.attrs.get("format", "")))
        if "points" not in f or not isinstance(f["points"], h5py.Group) or (
                fmt and not str(fmt).startswith("rapid-sweep")):
            raise NotRapidFile(f"{path}: not a rapid-sweep result file "
                               f"(no /points group or format attribute {fmt!r})")
        group = f["points"]
        missing = [c for c in _REQUIRED if c not in group]
        if missing:
            raise NotRapidFile(f"{path}: /points lacks {', '.join(missing)}: "
                               "not a rapid-sweep result file")
        columns, units, descriptions, cf_units = {}, {}, {}, {}
        index = None
        for name in guard("/points", lambda: list(group.keys())):
            ds = guard(f"/points/{name}", lambda: group[name])
            if not isinstance(ds, h5py.Dataset) or ds.ndim != 1:
                continue
            if name == "point":  # the dimension scale: the row index (format_version >= 2)
                index = guard("/points/point", lambda: ds[()])
                continue
            columns[name] = guard(f"/points/{name}", lambda: _column(ds))
            attrs_of = guard(f"/points/{name} (attributes)", lambda: dict(ds.attrs.items()))
            units[name] = str(_text(attrs_of.get("unit", "")))
            descriptions[name] = str(_text(attrs_of.get("description", "")))
            if "units" in attrs_of:
                cf_units[name] = str(_text(attrs_of["units"]))
        lengths = {len(v) for v in columns.values()}
        if len(lengths) != 1:
            raise NotRapidFile(f"{path}: /points datasets differ in length {sorted(lengths)}")
        attrs = guard("/ (attributes)", lambda: {k: _text(v) for k, v in f.attrs.items()})
        names = guard("/hardware/names", lambda: _strings(f["hardware/names"])
                      if "hardware/names" in f else [])
        yamls = guard("/hardware/yaml", lambda: _strings(f["hardware/yaml"])
                      if "hardware/yaml" in f else [""] * len(names))
        if "variants" in f and isinstance(f["variants"], h5py.Group):
            variants, from_file = guard("/variants",
                                        lambda: _file_variants(f["variants"], names)), True
        else:
            variants, from_file = _derived_variants(names, yamls), False
        scen = guard("/scenarios/names", lambda: _strings(f["scenarios/names"])
                     if "scenarios/names" in f else [])
        scen_what = guard("/scenarios/description", lambda: _strings(f["scenarios/description"])
                          if "scenarios/description" in f else [""] * len(scen))

    order = [c for c in SCHEMA_ORDER if c in columns]
    points = pd.DataFrame({c: columns[c] for c in order + sorted(set(columns) - set(order))},
                          index=index)
    points.index.name = "point"
    if "sp" in points:
        points["sp"] = points["sp"].astype(bool)
    hardware = pd.DataFrame({"name": names, "yaml": yamls})
    idx = points["hardware_index"].to_numpy()
    known = (idx >= 0) & (idx < len(names))
    labels = np.array(names + ["?"], dtype=object)
    points.insert(0, "hardware", labels[np.where(known, idx, len(names))])
    if "warning_flags" in points:
        for name, bit in WARNING_FLAGS.items():
            points[name] = (points["warning_flags"].to_numpy() & bit) != 0
    scenarios = pd.DataFrame({"name": scen, "description": scen_what})
    if "scenario" in points and scen:
        s_idx = points["scenario"].to_numpy()
        s_labels = np.array(scen + ["?"], dtype=object)
        ok = (s_idx >= 0) & (s_idx < len(scen))
        points.insert(1, "scenario_name", s_labels[np.where(ok, s_idx, len(scen))])
    return Results(path, points, attrs, hardware, units, descriptions, scenarios,
                   cf_units=cf_units, variants=_with_base_index(variants),
                   variants_from_file=from_file)


def load_for_cli(path: str, prog: str) -> Results | None:
    """load() for a command-line script: None (after one message on stderr naming `prog`)
    when the file is missing or not a rapid-sweep result; the caller then exits 2."""
    try:
        return load(path)
    except NotRapidFile as e:
        print(f"{prog}: {e}", file=sys.stderr)
        return None


def describe_layout(row: pd.Series, hardware: bool = False) -> str:
    """"dp4 tp8 pp8 mbs1 sp1 zero1 recompute=selective" (cp, ep, vpp shown when not 1)."""
    parts = [f"dp{row.dp}", f"tp{row.tp}", f"pp{row.pp}"]
    parts += [f"{k}{row[k]}" for k in ("cp", "ep", "vpp") if row[k] != 1]
    parts += [f"mbs{row.mbs}", f"sp{int(row.sp)}", f"zero{row.zero_stage}",
              f"recompute={row.recompute}"]
    if hardware:
        parts.append(f"on {row.hardware}")
    return " ".join(parts)


def same_layout(points: pd.DataFrame, row: pd.Series) -> pd.DataFrame:
    """Rows of `points` with the layout (and GPU count) of `row`, on any hardware."""
    mask = np.ones(len(points), dtype=bool)
    for k in LAYOUT_COLUMNS + (["num_gpus"] if "num_gpus" in points else []):
        mask &= (points[k] == row[k]).to_numpy()
    return points[mask]
