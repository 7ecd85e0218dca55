"""`report`: every section on one self-contained HTML page (figures as base64 PNG data
URIs, tables as HTML tables beside them), with the file's provenance in a header. Every
string that goes into the page passes html.escape."""

from __future__ import annotations

import base64
import datetime
import html
import math
import os

import numpy as np
import pandas as pd

import rapid_results as rr

from . import common, sections, textout

_STYLE = """
body { font-family: system-ui, -apple-system, "Segoe UI", sans-serif; margin: 24px;
       color: #1d1d1f; background: #fff; }
h1 { font-size: 22px; margin-bottom: 4px; }
h2 { font-size: 18px; margin-top: 36px; border-bottom: 1px solid #ddd; padding-bottom: 4px; }
nav a { margin-right: 14px; }
table { border-collapse: collapse; font-size: 12px; }
th, td { border: 1px solid #d0d0d0; padding: 3px 6px; }
td { white-space: nowrap; }
th { min-width: 4.5em; }
td.text { white-space: normal; min-width: 8em; max-width: 28em; }
tr.group td { border-top: 2px solid #888; }
th { background: #f2f2f2; position: sticky; top: 0; }
td.num { text-align: right; font-variant-numeric: tabular-nums; }
table.prov td:first-child { font-weight: 600; background: #f7f7f7; }
table.prov td { max-width: 900px; overflow-wrap: anywhere; }
.pair { display: flex; flex-wrap: wrap; gap: 20px; align-items: flex-start; }
.tablewrap { flex: 0 1 auto; max-width: 100%; overflow-x: auto; }
figure { margin: 0; flex: 0 1 auto; max-width: 100%; }
figure img { max-width: 100%; height: auto; border: 1px solid #eee; }
summary { cursor: pointer; font-size: 13px; color: #0645ad; margin-bottom: 6px; }
p.note { font-size: 13px; color: #444; margin: 4px 0; max-width: 1100px; }
"""


# Tables longer than this are folded (<details>) under their figure's side.
_LONG = 40

# Text columns that may run long: wrapped in their cell (the others stay on one line).
_WRAPPED = {"overrides", "note", "warnings"}


def _e(value) -> str:
    return html.escape(str(value), quote=True)


def _cell(column: str, value) -> str:
    text = _e(textout.format_value(column, value))
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, float, np.number)):
        wrap = ' class="text"' if column in _WRAPPED else ""
        return f"<td{wrap}>{text}</td>"
    raw = float(value)
    data = repr(raw) if math.isfinite(raw) else ("nan" if math.isnan(raw) else repr(raw))
    return f'<td class="num" data-value="{_e(data)}">{text}</td>'


def html_table(table: common.Table) -> str:
    """The frame as an HTML table (id table-KEY); numeric cells keep the raw value in
    data-value beside the printed one."""
    frame = table.frame
    if frame.empty:
        return f'<p class="note" id="table-{_e(table.key)}">(no rows)</p>'
    head = "".join(f"<th>{_e(c)}</th>" for c in frame.columns)
    body, previous = [], None
    group = [c for c in table.group if c in frame]
    for i, row in enumerate(frame.itertuples(index=False, name=None)):
        key = tuple(frame[c].iat[i] for c in group)
        start = ' class="group"' if group and i and key != previous else ""
        previous = key
        cells = "".join(_cell(c, v) for c, v in zip(frame.columns, row))
        body.append(f"<tr{start}>{cells}</tr>")
    return (f'<table id="table-{_e(table.key)}"><thead><tr>{head}</tr></thead>'
            f"<tbody>{''.join(body)}</tbody></table>")


def _img(png: bytes, alt: str, key: str) -> str:
    data = base64.b64encode(png).decode("ascii")
    return (f'<figure><img id="figure-{_e(key)}" alt="{_e(alt)}" '
            f'src="data:image/png;base64,{data}"></figure>')


def _entry(variants: pd.DataFrame, i: int) -> str:
    """"a100-c-3d-hbm (base a100-sxm4-80gb: {hbm_bandwidth: 8156GB/s})"."""
    v = variants.loc[i]
    if v.base_index == i:
        return str(v["name"])
    base = variants.loc[v.base_index, "name"]
    return f"{v['name']} (base {base}" + (f": {v.overrides})" if v.overrides else ")")


def provenance(res: rr.Results, points: pd.DataFrame) -> list[tuple[str, str]]:
    a = res.attrs
    base = sections.baseline_of(points, res)  # the job's own row
    baseline = "none (the job has no baseline)"
    if base is not None:
        baseline = (f"point {base.name}: {common.short_layout(base)} on {base.hardware}, "
                    f"{int(base.num_gpus)} GPUs ({base.status}"
                    + (f", {base.tokens_per_s_per_gpu:.1f} tokens/s/GPU)"
                       if base.status == "ok" else ")"))
    hw = "; ".join(_entry(res.variants, i) for i in res.variants.index)
    counts = points.status.astype(str).value_counts()
    return [
        ("job", a.get("job_name", "?")), ("file", os.path.abspath(res.path)),
        ("model", a.get("model_name", "?")), ("network", a.get("network_name", "?")),
        ("hardware", hw + ("" if res.variants_from_file else
                           " (no /variants table: parameters from /hardware/yaml)")),
        ("GPU counts", ", ".join(str(g) for g in sorted(points.num_gpus.unique()))),
        ("baseline", baseline),
        ("points", f"{len(points)} ("
         + ", ".join(f"{k} {v}" for k, v in counts.items() if v) + ")"),
        ("fidelity", a.get("fidelity", "?")),
        ("rapid-sweep", f"{a.get('version', '?')} ({a.get('git_revision', '?')})"),
        ("created", a.get("created", "?")), ("command line", a.get("command_line", "?")),
        ("report written", datetime.datetime.now(datetime.timezone.utc)
         .strftime("%Y-%m-%dT%H:%M:%SZ")),
    ]


def page(res: rr.Results, opts: sections.Options) -> str:
    """The whole page as a string."""
    points = common.with_gpus(res.points)
    job = res.attrs.get("job_name", os.path.basename(res.path))
    parts = ["<!DOCTYPE html>", '<html lang="en"><head><meta charset="utf-8">',
             f"<title>{_e(f'rapid-analyze: {job}')}</title><style>{_STYLE}</style></head><body>",
             f"<h1>{_e(job)}: design review</h1>",
             '<table class="prov" id="provenance">'
             + "".join(f"<tr><td>{_e(k)}</td><td>{_e(v)}</td></tr>"
                       for k, v in provenance(res, points)) + "</table>",
             "<nav>" + "".join(f'<a href="#{_e(k)}">{_e(k)}</a>' for k in sections.SECTIONS)
             + "</nav>"]
    for key, build in sections.SECTIONS.items():
        section = build(res, opts)
        t = section.table
        parts.append(f'<section id="{_e(key)}"><h2>{_e(t.title)}</h2>')
        parts += [f'<p class="note">{_e(n)}</p>' for n in t.notes]
        table = html_table(t)
        if len(t.frame) > _LONG:  # folded: the figure first, the rows a click away
            table = (f"<details><summary>the table ({len(t.frame)} rows)</summary>{table}"
                     "</details>")
        parts.append(f'<div class="pair"><div class="tablewrap">{table}</div>')
        if section.draw is not None:
            from . import plots
            parts.append(_img(plots.save_png(section.draw()), t.title, key))
        parts.append("</div></section>")
    parts.append("</body></html>")
    return "\n".join(parts)


def write(res: rr.Results, opts: sections.Options, path: str) -> None:
    text = page(res, opts)
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)
