"""rapid-sweep from Python (docs/python.md): the same core as `rapid predict` and
`rapid-sweep`, in this process.

    import rapid
    row = rapid.predict("jobs/llama3-70b-256xh100.yaml", tp=8, pp=4)   # dict of columns
    df = rapid.evaluate(job, [dict(tp=8, pp=4), dict(tp=4, pp=8)])      # pandas DataFrame
    df = rapid.sweep(job)                                               # every point
    df = rapid.load("results.h5")                                       # a sweep's file

Layout keywords are `rapid predict`'s flags without dashes: tp, pp, cp, ep, etp, vpp, mbs,
zero, sp, recompute, recompute_method, recompute_num_layers, cpu_offload_layers, gpus,
hardware_index. Bad input raises rapid.InputError (a ValueError) with the programs'
message.
"""
import os
import sys
from pathlib import Path

from . import _core

__all__ = ["predict", "evaluate", "sweep", "load", "columns", "InputError", "__version__"]

InputError = _core.InputError
__version__ = _core.version()


def _data_dir():
    """<prefix>/share/rapid-sweep of an installed package (<prefix>/lib/python3.X/
    dist-packages/rapid), or None in a build tree."""
    here = Path(__file__).resolve()
    if len(here.parents) > 4:
        share = here.parents[4] / "share" / "rapid-sweep"
        if (share / "configs").is_dir():
            return share
    return None


_DATA = _data_dir()
if _DATA is not None:
    _core.set_data_dir(str(_DATA))


def _analysis_dir():
    if _DATA is not None and (_DATA / "analysis").is_dir():
        return _DATA / "analysis"
    return Path(_core.source_dir()) / "analysis"


def predict(job, fidelity="analytical", scenario=None, **layout):
    """One layout of `job` (its baseline with `layout` on top, as `rapid predict`): a dict
    of every result column (a list of them, one per load, for a serving job)."""
    return _core.predict(os.fspath(job), layout, fidelity, scenario)


def _frame(columns):
    import pandas as pd
    return pd.DataFrame(columns)


def evaluate(job, layouts, fidelity="analytical"):
    """Many layouts of `job` (each a dict of layout keywords): a pandas DataFrame, a row per
    layout (per layout and load for a serving job)."""
    return _frame(_core.evaluate(os.fspath(job), [dict(l) for l in layouts], fidelity))


def sweep(job, fidelity="analytical", max_points=1_000_000):
    """Every point of `job`'s search in this process (one core; rapid-sweep with MPI for
    large searches): a pandas DataFrame, a row per point, `point` its index."""
    return _frame(_core.sweep(os.fspath(job), fidelity, int(max_points)))


def load(path):
    """A rapid-sweep result file as a pandas DataFrame of its rows (enums as names), the
    project's loader (analysis/rapid_results.py)."""
    sys.path.insert(0, str(_analysis_dir()))
    try:
        import rapid_results
    finally:
        sys.path.pop(0)
    return rapid_results.load(os.fspath(path)).points


def columns():
    """(name, unit, description) of every result column."""
    return _core.columns()
