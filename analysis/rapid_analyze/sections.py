"""The subcommands as sections: each turns a loaded result file and the options into a
Table and, where it draws, a function that draws its figure. cli.py prints one section,
html_report.py puts them all on one page."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import pandas as pd

import rapid_results as rr

from . import (breakdown, common, heatmap, knobs, latency, pareto, roofline, scenario_list, top,
               variants)


@dataclass
class Options:
    hardware: str | None = None
    scenario: str | None = None
    gpus: int | None = None
    top: int = 5
    front_rows: int = 20  # pareto: rows printed per front
    x: str = "tp"
    y: str = "pp"
    budgets: tuple = latency.BUDGETS_MS  # latency: ITL budgets (ms) of the best-layout notes


@dataclass
class Section:
    table: common.Table
    draw: Callable | None = None  # () -> matplotlib Figure


def points_of(res: rr.Results, scenario: str | None = None) -> pd.DataFrame:
    """The rows of one non-ideal scenario (docs/nonideal.md): `scenario`, else the
    baseline's (the first when the job has no baseline); every row when the file has one
    scenario. UsageError for a name the file lacks."""
    points = common.with_gpus(res.points)
    if "scenario_name" not in points:
        return points
    names = res.scenarios["name"].tolist()
    if scenario is not None and scenario not in names:
        raise common.UsageError(f"--scenario {scenario}: not a scenario of {res.path} "
                                f"(expected one of: {', '.join(names)})")
    if scenario is None and len(names) < 2:
        return points
    if scenario is None:
        i = res.baseline_index
        scenario = (points.loc[i, "scenario_name"] if i in points.index else names[0])
    return points[points.scenario_name == scenario]


def scenario_note(res: rr.Results, opts: Options) -> list[str]:
    """Which scenario the tables show, when the file has several."""
    if len(res.scenarios) < 2:
        return []
    shown = points_of(res, opts.scenario).scenario_name.iloc[0]
    return [f"Scenario {shown} of {len(res.scenarios)} (--scenario NAME for another: "
            f"{', '.join(res.scenarios['name'])})."]


def baseline_of(points: pd.DataFrame, res: rr.Results) -> pd.Series | None:
    """The job's baseline row; in a scenario other than its own, the same layout on the same
    hardware in that scenario (None when the job has none)."""
    i = res.baseline_index
    # A --keep feasible / top-K file holds some points only: the baseline may be absent.
    if i < 0 or i not in res.points.index:
        return None
    base = common.with_gpus(res.points).loc[i]
    if i in points.index or "scenario" not in points or points.empty:
        return base
    same = rr.same_layout(points[points.hardware_index == base.hardware_index], base)
    return same.iloc[0] if not same.empty else base


def job_baseline(res: rr.Results, opts: Options) -> pd.Series | None:
    return baseline_of(points_of(res, opts.scenario), res)


def selected(res: rr.Results, opts: Options) -> pd.DataFrame:
    """The rows of --hardware and --gpus (UsageError for a value the file lacks)."""
    return common.select(points_of(res, opts.scenario), res.variants, res.path, opts.hardware,
                         opts.gpus)


def every_entry(res: rr.Results, opts: Options) -> pd.DataFrame:
    """selected() on every hardware entry (--hardware checked, not applied): the variant
    tables need the base rows whatever entry they show."""
    selected(res, opts)
    return common.select(points_of(res, opts.scenario), res.variants, res.path, None,
                         opts.gpus)


def _scope(opts: Options) -> str:
    parts = [opts.hardware] if opts.hardware else []
    parts += [f"scenario {opts.scenario}"] if opts.scenario else []
    parts += [f"{opts.gpus} GPUs"] if opts.gpus else []
    return f" ({', '.join(parts)})" if parts else ""


def top_section(res: rr.Results, opts: Options) -> Section:
    pts = selected(res, opts)
    if res.baseline_kept_extra:
        # --keep top-K kept the baseline besides the best K of its group: not ranked (the
        # rows between it and them are not in the file), only the speedups' reference.
        pts = pts.drop(index=res.baseline_index, errors="ignore")
    table = top.top_layouts(pts, job_baseline(res, opts), opts.top, res.baseline_missing(),
                            float(res.attrs.get("interval_coverage", "nan")))
    table.title += _scope(opts)
    if not table.frame.empty and str(res.attrs.get("mode", "training")) == "training":
        # A row again, with its simulation and timeline, without retyping its layout.
        best = int(table.frame["point"].iloc[0])
        table.notes.append(f"A row's simulation and timeline: rapid predict --result {res.path} "
                           f"--point {best} --fidelity des --timeline step.json.gz")
    return Section(table)


def variants_section(res: rr.Results, opts: Options) -> Section:
    table = variants.variant_table(every_entry(res, opts), res.variants, opts.hardware)
    table.title += _scope(opts)
    return Section(table, lambda: _plots().speedup_matrix(
        variants.matrix(table.frame),
        "Speedup over the base: op classes at fixed layout, then end to end"))


def roofline_section(res: rr.Results, opts: Options) -> Section:
    table = roofline.roofline_points(every_entry(res, opts), res.variants, opts.hardware)
    table.title += _scope(opts)
    if not table.frame.empty:
        base = job_baseline(res, opts)
        counts = sorted(table.frame["GPUs"].unique())
        gpus = int(base.num_gpus) if base is not None and base.num_gpus in counts else counts[0]
        if len(counts) > 1:
            table.notes.append(f"The figure shows {gpus} GPUs (--gpus N for another count).")
    else:
        gpus = 0
    return Section(table, lambda: _plots().roofline(roofline.curves(table.frame, gpus),
                                                    "Predicted speedup"))


def heatmap_section(res: rr.Results, opts: Options) -> Section:
    pts = selected(res, opts)
    x, y, params = heatmap.resolve_axes(pts, res.variants, res.path, opts.x, opts.y)
    pts = knobs.with_params(pts, res.variants, params)
    base = job_baseline(res, opts)
    if base is not None:
        base = knobs.with_params(base.to_frame().T, res.variants, params).iloc[0]
    table = heatmap.heatmap_cells(pts, x, y, base)
    table.title += _scope(opts)
    title = f"{res.attrs.get('job_name', '')}: {table.title}"
    return Section(table, lambda: _plots().heatmap(table.frame, x, y, title))


def pareto_section(res: rr.Results, opts: Options) -> Section:
    pts = selected(res, opts)
    fronts = pareto.pareto_fronts(pts)
    table = pareto.head_per_front(fronts, opts.front_rows)
    table.title += _scope(opts)
    ok = pareto.with_objectives(common.ok_rows(pts))
    objectives, throughputs = pareto.active(ok)
    return Section(table, lambda: _plots().pareto(fronts.frame, ok, throughputs, objectives))


def breakdown_section(res: rr.Results, opts: Options) -> Section:
    pts = selected(res, opts)
    table = breakdown.breakdown_table(pts, opts.top, every_entry(res, opts), res.variants,
                                      opts.hardware)
    table.title += _scope(opts)
    return Section(table, lambda: _plots().breakdown(table.frame, table.title))


def scenarios_section(res: rr.Results, opts: Options) -> Section:
    """Every scenario of the file, one row each (report only: files with several)."""
    pts = common.select(common.with_gpus(res.points), res.variants, res.path, opts.hardware,
                        opts.gpus)
    table = scenario_list.scenario_table(pts, res.scenarios)
    parts = [opts.hardware] if opts.hardware else []
    parts += [f"{opts.gpus} GPUs"] if opts.gpus else []
    table.title += f" ({', '.join(parts)})" if parts else ""
    return Section(table)


def latency_section(res: rr.Results, opts: Options) -> Section:
    """The throughput-latency curves of a serving file; UsageError (one line, exit 2) for a
    file without serving rows (a training sweep)."""
    if latency.serving_rows(res.points).empty:
        mode = res.attrs.get("mode", "training")
        raise common.UsageError(f"{res.path}: no serving rows (mode {mode}; latency reads "
                                "the file of a job with mode: inference)")
    table = latency.latency_table(selected(res, opts), opts.budgets)
    table.title += _scope(opts)
    title = f"{res.attrs.get('job_name', '')}: {table.title}"
    return Section(table, lambda: _plots().latency(latency.curves(table.frame), opts.budgets,
                                                   latency.load_axis(table.frame), title))


# Why each training section is left out of a serving file's report (and said in its notes
# when run on one): they rank or match rows by layout alone, and a serving sweep has one
# row per (layout, load).
SERVING_SKIP = {
    "top": "ranks by tokens/s/GPU alone, which in a serving sweep is highest at the highest "
           "load whatever its latency (the latency section gives the best layout per ITL "
           "budget)",
    "variants": "compares one row per layout across hardware entries; a serving sweep has "
                "one row per (layout, load), so the match is not one point",
    "roofline": "compares one row per layout across hardware entries; a serving sweep has "
                "one row per (layout, load), so the match is not one point",
    "heatmap": "shows the best tokens/s/GPU per cell, in a serving sweep the highest load's "
               "whatever its latency",
    "pareto": "trades throughput against GPU count, memory and energy, not latency (the "
              "latency figure is the serving trade-off)",
    "breakdown": "shows the fastest layouts by tokens/s/GPU without their load, and memory "
                 "without the KV cache",
}


def report_sections(res: rr.Results) -> dict:
    """The sections `report` shows for this file: the latency section alone for a serving
    file (mode inference; the others are named with SERVING_SKIP), every training section
    otherwise but those left_out() names; the scenario section first when the file has
    several scenarios."""
    scenarios = {"scenarios": scenarios_section} if len(res.scenarios) > 1 else {}
    if latency.is_serving(res.attrs) or not latency.serving_rows(res.points).empty:
        return {**scenarios, "latency": SECTIONS["latency"]}
    gone = left_out(res)
    return {**scenarios, **{k: v for k, v in SECTIONS.items()
                            if k != "latency" and k not in gone}}


def left_out(res: rr.Results) -> dict:
    """The sections `report` leaves out of this file's page and why, as key -> reason: the
    training sections of a serving file (SERVING_SKIP); variants and roofline in a file of
    one hardware entry (they compare entries: an empty table and figure otherwise)."""
    if latency.is_serving(res.attrs) or not latency.serving_rows(res.points).empty:
        return dict(SERVING_SKIP)
    if len(res.variants) < 2:
        name = res.variants["name"].iloc[0] if len(res.variants) else "?"
        why = (f"the file has one hardware entry ({name}): there is no other to compare "
               "it with (a job with a list of hardware or variants has them)")
        return {"variants": why, "roofline": why}
    return {}


def _plots():
    """plots.py (matplotlib) imported only when something is drawn."""
    from . import plots
    return plots


def _noted(name, build):
    """build with the scenario note in front of its table's notes (and, for a training
    section run on a serving file, why it says little there)."""
    def section(res: rr.Results, opts: Options) -> Section:
        out = build(res, opts)
        out.table.notes[:0] = scenario_note(res, opts)
        if name in SERVING_SKIP and latency.is_serving(res.attrs):
            out.table.notes.insert(0, f"A serving sweep (mode inference): {name} "
                                      f"{SERVING_SKIP[name]}; see rapid-analyze latency.")
        return out
    section.__doc__ = build.__doc__
    return section


SECTIONS = {"top": top_section, "variants": variants_section, "roofline": roofline_section,
            "heatmap": heatmap_section, "pareto": pareto_section,
            "breakdown": breakdown_section, "latency": latency_section}
SECTIONS = {name: _noted(name, build) for name, build in SECTIONS.items()}
