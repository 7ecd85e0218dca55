"""The subcommands as sections: each turns a loaded result file and the options into a
Table and, where it draws, a function that draws its figure. cli.py prints one section,
html_report.py puts them all on one page."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import pandas as pd

import rapid_results as rr

from . import breakdown, common, heatmap, knobs, pareto, roofline, top, variants


@dataclass
class Options:
    hardware: str | None = None
    scenario: str | None = None
    gpus: int | None = None
    top: int = 5
    front_rows: int = 20  # pareto: rows printed per front
    x: str = "tp"
    y: str = "pp"


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
    if not 0 <= i < len(res.points):
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
    table = top.top_layouts(pts, job_baseline(res, opts), opts.top)
    table.title += _scope(opts)
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


def _plots():
    """plots.py (matplotlib) imported only when something is drawn."""
    from . import plots
    return plots


def _noted(build):
    """build with the scenario note in front of its table's notes."""
    def section(res: rr.Results, opts: Options) -> Section:
        out = build(res, opts)
        out.table.notes[:0] = scenario_note(res, opts)
        return out
    section.__doc__ = build.__doc__
    return section


SECTIONS = {"top": top_section, "variants": variants_section, "roofline": roofline_section,
            "heatmap": heatmap_section, "pareto": pareto_section,
            "breakdown": breakdown_section}
SECTIONS = {name: _noted(build) for name, build in SECTIONS.items()}
