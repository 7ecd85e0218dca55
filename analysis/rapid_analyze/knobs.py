"""The hardware parameters of /variants as knobs: their names in words, the unit a table or
an axis shows them in, the spellings the command line takes (`hbm_bandwidth` for
`hbm_bandwidth_Bps`), and which of them an entry changes against its base."""

from __future__ import annotations

import numpy as np
import pandas as pd

import rapid_results as rr

# /variants column -> (words, unit shown, SI value of one unit); rapid_results.VARIANT_PARAMS
# order. hbm_bandwidth_Bps is the sustained figure (nominal x hbm_thermal_keep). A column a
# newer file adds shows under its own name in SI units (describe()).
PARAMS = {
    "num_sms": ("SM count", "", 1.0),
    "sm_clock_Hz": ("SM clock", "GHz", 1e9),
    "tensor_peak_bf16_FLOPs": ("BF16 tensor peak", "TFLOPS", 1e12),
    "tensor_peak_fp8_FLOPs": ("FP8 tensor peak", "TFLOPS", 1e12),
    "hbm_capacity_bytes": ("HBM capacity", "GiB", float(1 << 30)),
    "hbm_bandwidth_Bps": ("HBM bandwidth", "TB/s", 1e12),
    "l2_size_bytes": ("L2 size", "MiB", float(1 << 20)),
    "l2_bandwidth_Bps": ("L2 bandwidth", "TB/s", 1e12),
    "nvlink_bandwidth_Bps": ("NVLink bandwidth", "GB/s", 1e9),
    "nic_bandwidth_Bps": ("network bandwidth", "GB/s", 1e9),
    "tdp_W": ("TDP", "W", 1.0),
    "hbm_thermal_keep": ("HBM thermal keep", "", 1.0),
}
assert list(PARAMS) == rr.VARIANT_PARAMS

# The unit suffixes a command line may leave off (hbm_bandwidth, l2_size, tdp, sm_clock),
# and the SI unit each names (include/rapid/spec/units.hpp base units).
_SUFFIXES = ("_Bps", "_bytes", "_Hz", "_FLOPs", "_W", "_s")
_SI_UNITS = {"_Bps": "B/s", "_bytes": "B", "_Hz": "Hz", "_FLOPs": "FLOP/s", "_W": "W", "_s": "s"}


def describe(column: str) -> tuple[str, str, float]:
    """(words, unit shown, SI value of one unit) of a parameter column: its PARAMS entry, else
    its command-line spelling in words and the SI unit its suffix names."""
    if column in PARAMS:
        return PARAMS[column]
    suffix = next((s for s in _SUFFIXES if column.endswith(s)), "")
    return short_name(column).replace("_", " "), _SI_UNITS.get(suffix, ""), 1.0


def resolve(name: str, variants: pd.DataFrame | None = None) -> str | None:
    """The /variants column a knob name means: the column itself or it without its unit
    suffix (`hbm_bandwidth` -> hbm_bandwidth_Bps), among PARAMS and the parameter columns of
    `variants`; None for anything else."""
    known = list(PARAMS) + ([] if variants is None else rr.variant_params(variants))
    if name in known:
        return name
    return next((name + s for s in _SUFFIXES if name + s in known), None)


def short_name(column: str) -> str:
    """The command-line spelling of a parameter column (hbm_bandwidth_Bps -> hbm_bandwidth)."""
    return next((column[:-len(s)] for s in _SUFFIXES if column.endswith(s)), column)


def label(column: str) -> str:
    """"HBM bandwidth (TB/s)", "L2 size (MiB)", "SM count": a column title whose ending
    textout formats by."""
    words, unit, _ = describe(column)
    return f"{words} ({unit})" if unit else words


def scaled(column: str, values):
    """Values of a parameter column in the unit its label names."""
    return np.asarray(values, dtype=float) / describe(column)[2]


def with_params(points: pd.DataFrame, variants: pd.DataFrame,
                columns: list[str]) -> pd.DataFrame:
    """`points` with each parameter column added under its label (label()), in that unit,
    looked up by hardware_index (NaN for an index /variants lacks)."""
    points = points.copy()
    for column in columns:
        by_entry = variants[column].reindex(points["hardware_index"].to_numpy())
        points[label(column)] = scaled(column, by_entry.to_numpy())
    return points


def changed(variants: pd.DataFrame, hw: int, base: int) -> list[str]:
    """The parameter columns whose value on entry `hw` differs from its base's (relative
    1e-9; two NaN are equal), in the frame's order (rapid_results.variant_params)."""
    out = []
    for column in rr.variant_params(variants):
        a, b = float(variants.loc[hw, column]), float(variants.loc[base, column])
        if np.isnan(a) and np.isnan(b):
            continue
        if not np.isclose(a, b, rtol=1e-9, atol=0.0, equal_nan=False):
            out.append(column)
    return out


# differs_in() of an entry that changes nothing /variants records.
_NONE_CHANGED = "none of the /variants parameters"


def differs_in(variants: pd.DataFrame, hw: int, base: int) -> str:
    """What an entry changes against its base, in words ("HBM bandwidth, NVLink
    bandwidth"); "base" for the base itself; "none of the /variants parameters" when only
    something /variants does not record differs (a latency, an efficiency)."""
    if hw == base:
        return "base"
    words = [describe(c)[0] for c in changed(variants, hw, base)]
    return ", ".join(words) or _NONE_CHANGED


def words_of(text: str) -> set[str]:
    """The parameter words of a differs_in() text (empty for the base or none)."""
    return {w for w in text.split(", ") if w not in ("base", _NONE_CHANGED)}


def value_text(column: str, value: float) -> str:
    """"3.35 TB/s", "50 MiB", "0.73": one parameter value in its unit."""
    words, unit, scale = describe(column)
    if not np.isfinite(value):
        return "?"
    v = value / scale
    text = f"{v:.2f}" if unit in ("TB/s", "GHz") else f"{v:.4g}"
    return f"{text} {unit}" if unit else text
