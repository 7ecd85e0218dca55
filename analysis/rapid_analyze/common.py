"""What every subcommand shares: the Table it returns, the rows that count, the short form
of a layout, the warning words, the base hardware of a variant, the command-line error."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd

import rapid_results as rr


# The figure formats a figure command writes, chosen by the file's extension or --format.
FIGURE_FORMATS = ("png", "svg", "pdf")
# Pixels per inch of a PNG (and of any raster part of an SVG or PDF; --dpi): the project's
# default since its first figures, a little above matplotlib's own figure.dpi, 100
# (matplotlibrc).
FIGURE_DPI = 110


class UsageError(Exception):
    """A bad option value; the message is the one line rapid-analyze prints (exit 2)."""


@dataclass
class Appendix:
    """A small table that goes with a Table: printed after its notes, folded in HTML."""
    title: str
    frame: pd.DataFrame


@dataclass
class Table:
    """A subcommand's product: `frame` holds raw values (numbers unformatted; textout.py
    formats them by column name), `notes` the sentences a reader needs next to it."""
    key: str
    title: str
    frame: pd.DataFrame
    notes: list[str] = field(default_factory=list)
    group: list[str] = field(default_factory=list)  # columns whose change starts a group
    # a second, smaller table printed after the notes (HTML: folded under a click), e.g. the
    # overrides of the entries the table names; None when there is nothing to add
    appendix: Appendix | None = None


# Knobs a heatmap axis may take: the layout columns and the two sweep axes around them.
AXES = ["hardware", "num_gpus", *rr.LAYOUT_COLUMNS, "etp", "cpu_offload_layers",
        "recompute_method", "recompute_num_layers"]

# Warning columns of rapid_results, spelled out for a reader.
WARNING_WORDS = {
    "warn_near_capacity": "near capacity",
    "warn_small_microbatch": "small micro-batch",
    "warn_latency_bound_comm": "latency-bound collectives",
    "warn_pipeline_bubble": "large bubble",
    "warn_closed_form_risk": "closed form unreliable here (check with the simulation)",
    "warn_prompt_over_budget": "prompt over the token budget (ran alone)",
}

_RECOMPUTE = {"none": "", "selective": "sel", "full": "full"}


def with_gpus(points: pd.DataFrame) -> pd.DataFrame:
    """`points` with a num_gpus column (files before it: dp x tp x pp x cp)."""
    if "num_gpus" in points:
        return points
    points = points.copy()
    points["num_gpus"] = points.dp * points.tp * points.pp * points.cp
    return points


def ok_rows(points: pd.DataFrame) -> pd.DataFrame:
    """Rows that fit and have a finite throughput: the ones ranked."""
    return points[(points.status == "ok") & np.isfinite(points.tokens_per_s_per_gpu)]


def short_layout(row: pd.Series) -> str:
    """"dp4 tp8 pp8 mbs1 sp sel z1": cp, ep, etp, vpp when not 1, sp when on, the recompute
    (sel, full; nothing for none), the ZeRO stage, offloaded layers when any."""
    parts = [f"dp{row.dp}", f"tp{row.tp}", f"pp{row.pp}"]
    parts += [f"{k}{row[k]}" for k in ("cp", "ep", "etp", "vpp") if k in row and row[k] != 1]
    parts.append(f"mbs{row.mbs}")
    if bool(row.sp):
        parts.append("sp")
    recompute = _RECOMPUTE.get(str(row.recompute), str(row.recompute))
    if recompute:
        parts.append(recompute)
    parts.append(f"z{row.zero_stage}")
    if row.get("cpu_offload_layers", 0) and row.cpu_offload_layers > 0:
        parts.append(f"off{row.cpu_offload_layers}")
    return " ".join(parts)


def warnings_of(row: pd.Series) -> str:
    """The row's warning flags in words, "" when none."""
    return ", ".join(word for col, word in WARNING_WORDS.items() if bool(row.get(col, False)))


def layout_key(row: pd.Series) -> tuple:
    """What makes two rows the same layout at the same GPU count (any hardware)."""
    return tuple(row[k] for k in rr.LAYOUT_COLUMNS + ["num_gpus"])


def layout_index(points: pd.DataFrame) -> dict:
    """(hardware_index, layout_key) -> point, for looking up a layout on another variant."""
    cols = ["hardware_index", *rr.LAYOUT_COLUMNS, "num_gpus"]
    keys = zip(*(points[c].tolist() for c in cols))
    return {(k[0], tuple(k[1:])): p for k, p in zip(keys, points.index)}


def overrides_appendix(variants: pd.DataFrame, names) -> Appendix | None:
    """The overrides of the entries among `names` that have any (name, base, overrides), in
    hardware_index order; None when none has."""
    shown = variants[variants["name"].isin(set(names)) & (variants["overrides"] != "")]
    if shown.empty:
        return None
    frame = pd.DataFrame({"entry": shown["name"].tolist(), "base": shown["base"].tolist(),
                          "overrides": shown["overrides"].tolist()})
    return Appendix(f"Overrides of the {len(frame)} variant{'s' * (len(frame) != 1)} "
                    "against their base", frame)


def hardware_names(variants: pd.DataFrame) -> list[str]:
    return variants["name"].tolist()


def base_index_of(variants: pd.DataFrame, hardware_index: int) -> int:
    """The hardware_index a variant's speedups are against (rapid_results: base_index)."""
    if hardware_index in variants.index:
        return int(variants.loc[hardware_index, "base_index"])
    return 0


def select(points: pd.DataFrame, variants: pd.DataFrame, path: str, hardware: str | None,
           gpus: int | None) -> pd.DataFrame:
    """The rows of one hardware variant and/or one GPU count; UsageError naming the option
    when the file has no such variant or GPU count."""
    if hardware is not None:
        names = hardware_names(variants)
        if hardware not in names:
            raise UsageError(f"--hardware {hardware}: not a hardware variant of {path} "
                             f"(expected one of: {', '.join(names)})")
        points = points[points.hardware == hardware]
    if gpus is not None:
        counts = sorted(int(g) for g in points.num_gpus.unique())
        if gpus not in counts:
            raise UsageError(f"--gpus {gpus}: no point of {path} has that GPU count "
                             f"(expected one of: {', '.join(map(str, counts))})")
        points = points[points.num_gpus == gpus]
    return points


def ratio(num, den):
    """num / den elementwise; NaN where both are 0 or either is NaN (no time on either
    side: no speedup to speak of), inf where only den is 0."""
    num = np.asarray(num, dtype=float)
    den = np.asarray(den, dtype=float)
    with np.errstate(divide="ignore", invalid="ignore"):
        out = num / den
    out = np.where((num == 0) & (den == 0), np.nan, out)
    return out


def status_words(statuses) -> str:
    """Why a set of rows has no point that fits: "all OOM", "infeasible", "OOM /
    infeasible", ..."""
    words = {"oom": "OOM", "infeasible": "infeasible", "no_route": "no route",
             "overheat": "overheat", "error": "error"}
    present = [words.get(s, s) for s in words if s in set(map(str, statuses))]
    present += sorted(set(map(str, statuses)) - set(words) - {"ok"})
    if not present:
        return "no finite throughput"
    if present == ["OOM"]:
        return "all OOM"
    return " / ".join(present)
