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
table { border-collapse: collapse; font-size: 12px; max-width: 100%; }
th, td { border: 1px solid #d0d0d0; padding: 3px 4px; }
th { background: #f2f2f2; position: sticky; top: 0; font-weight: 600; vertical-align: bottom;
     font-size: 11px;
     min-width: 2.5em; max-width: 9em; overflow-wrap: break-word; }
td { white-space: normal; overflow-wrap: anywhere; min-width: 6em; max-width: 22em;
     vertical-align: top; }
td.num { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap;
         min-width: 0; }
tr.group td { border-top: 2px solid #888; }
table.prov td:first-child { font-weight: 600; background: #f7f7f7; white-space: nowrap; }
table.prov td { max-width: 1100px; }
table.prov ul { margin: 4px 0; padding-left: 18px; columns: 2 32em; }
.pair { display: flex; flex-wrap: wrap; gap: 20px; align-items: flex-start; }
.tablewrap { flex: 1 1 32em; max-width: 100%; overflow-x: auto; }
figure { margin: 0; flex: 0 1 auto; max-width: 100%; }
figure img { max-width: 100%; height: auto; border: 1px solid #eee; }
summary { cursor: pointer; font-size: 13px; color: #0645ad; margin: 4px 0 6px; }
p.note { font-size: 13px; color: #444; margin: 4px 0; max-width: 1100px; }
"""


# Tables longer than this are folded (<details>) below their figure, and so are
# wide ones longer than _WIDE_LONG (a wall of numbers either way).
_LONG, _WIDE, _WIDE_LONG = 100, 14, 40

def _e(value) -> str:
    return html.escape(str(value), quote=True)


def _cell(column: str, value) -> str:
    text = _e(textout.format_value(column, value))
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, float, np.number)):
        return f"<td>{text}</td>"
    raw = float(value)
    data = repr(raw) if math.isfinite(raw) else ("nan" if math.isnan(raw) else repr(raw))
    return f'<td class="num" data-value="{_e(data)}">{text}</td>'


def html_table(table: common.Table | common.Appendix, key: str | None = None) -> str:
    """The frame as an HTML table (id table-KEY, KEY the table's own unless given); numeric
    cells keep the raw value in data-value beside the printed one; a rule where the
    table's group columns change."""
    frame = table.frame
    key = key or table.key
    group = [c for c in getattr(table, "group", []) if c in frame]
    if frame.empty:
        return f'<p class="note" id="table-{_e(key)}">(no rows)</p>'
    head = "".join(f"<th>{_e(c)}</th>" for c in frame.columns)
    body, previous = [], None
    for i, row in enumerate(frame.itertuples(index=False, name=None)):
        values = tuple(frame[c].iat[i] for c in group)
        start = ' class="group"' if group and i and values != previous else ""
        previous = values
        cells = "".join(_cell(c, v) for c, v in zip(frame.columns, row))
        body.append(f"<tr{start}>{cells}</tr>")
    return (f'<table id="table-{_e(key)}"><thead><tr>{head}</tr></thead>'
            f"<tbody>{''.join(body)}</tbody></table>")


def _img(png: bytes, alt: str, key: str) -> str:
    data = base64.b64encode(png).decode("ascii")
    return (f'<figure><img id="figure-{_e(key)}" alt="{_e(alt)}" '
            f'src="data:image/png;base64,{data}"></figure>')


def _folded(summary: str, inner: str) -> str:
    return f"<details><summary>{_e(summary)}</summary>{inner}</details>"


def hardware_cell(variants: pd.DataFrame, from_file: bool) -> str:
    """The provenance's hardware entries as HTML: one line naming the bases and how many
    variants each has, the variants and their overrides folded under it."""
    own = [i for i in variants.index if variants.loc[i, "base_index"] == i]
    words = []
    for b in own:
        n = int((variants.base_index == b).sum()) - 1
        words.append(f"{variants.loc[b, 'name']}" + (f" and {n} variant{'s' * (n != 1)}"
                                                     if n else ""))
    line = f"{len(variants)} entr{'y' if len(variants) == 1 else 'ies'}: " + "; ".join(words)
    if not from_file:
        line += " (no /variants table: parameters from /hardware/yaml)"
    items = [f"<li><b>{_e(v['name'])}</b> (base {_e(variants.loc[v.base_index, 'name'])})"
             + (f": {_e(v.overrides)}" if v.overrides else "") + "</li>"
             for i, v in variants.iterrows() if v.base_index != i]
    if not items:
        return _e(line)
    return _folded(line, f"<ul>{''.join(items)}</ul>")


def provenance(res: rr.Results, points: pd.DataFrame) -> list[tuple[str, str]]:
    """The header's rows as (name, HTML of the value): every value escaped, the hardware
    entries as hardware_cell() folds them."""
    a = res.attrs
    base = sections.baseline_of(points, res)  # the job's own row
    baseline = "none (the job has no baseline)"
    if base is not None:
        baseline = (f"point {base.name}: {common.short_layout(base)} on {base.hardware}, "
                    f"{int(base.num_gpus)} GPUs ({base.status}"
                    + (f", {base.tokens_per_s_per_gpu:.1f} tokens/s/GPU)"
                       if base.status == "ok" else ")"))
    counts = points.status.astype(str).value_counts()
    serving = []
    if a.get("mode", "training") != "training":
        stack = a.get("serving_stack", "")
        serving = [("mode", a.get("mode", "?")),
                   ("serving stack", f"{stack} ({a.get('serving_stack_path', '?')})"
                    if stack else "?")]
    rows = [
        ("job", a.get("job_name", "?")), ("file", os.path.abspath(res.path)), *serving,
        ("model", a.get("model_name", "?")), ("network", a.get("network_name", "?")),
        ("hardware", ""),
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
    hardware = hardware_cell(res.variants, res.variants_from_file)
    return [(k, hardware if k == "hardware" else _e(v)) for k, v in rows]


def page(res: rr.Results, opts: sections.Options, dpi: int = common.FIGURE_DPI) -> str:
    """The whole page as a string; figures as PNG at `dpi`."""
    points = common.with_gpus(res.points)
    job = res.attrs.get("job_name", os.path.basename(res.path))
    shown = sections.report_sections(res)
    parts = ["<!DOCTYPE html>", '<html lang="en"><head><meta charset="utf-8">',
             f"<title>{_e(f'rapid-analyze: {job}')}</title><style>{_STYLE}</style></head><body>",
             f"<h1>{_e(job)}: design review</h1>",
             '<table class="prov" id="provenance">'
             + "".join(f"<tr><td>{_e(k)}</td><td>{v}</td></tr>"
                       for k, v in provenance(res, points)) + "</table>"]
    gone = sections.left_out(res)
    built = {}
    for key, build in shown.items():
        section = build(res, opts)
        if section.table.frame.empty and key not in ("top", "latency"):
            # Nothing to show: named with the reason its notes give, not an empty section.
            gone[key] = " ".join(section.table.notes) or "no rows"
        else:
            built[key] = section
    parts.append("<nav>" + "".join(f'<a href="#{_e(k)}">{_e(k)}</a>' for k in built)
                 + ('<a href="#left-out">left out</a>' if gone else "") + "</nav>")
    for key, section in built.items():
        t = section.table
        parts.append(f'<section id="{_e(key)}"><h2>{_e(t.title)}</h2>')
        parts += [f'<p class="note">{_e(n)}</p>' for n in t.notes]
        if t.appendix is not None:
            parts.append(_folded(f"{t.appendix.title} ({len(t.appendix.frame)} rows)",
                                 html_table(t.appendix, f"{key}-appendix")))
        table = html_table(t)
        rows, cols = t.frame.shape
        if rows > _LONG or (cols > _WIDE and rows > _WIDE_LONG):  # the rows a click away
            table = _folded(f"the table ({len(t.frame)} rows)", table)
        parts.append('<div class="pair">')  # the figure (the summary) first, then its rows
        if section.draw is not None:
            from . import plots
            parts.append(_img(plots.save_png(section.draw(), dpi=dpi), t.title, key))
        parts.append(f'<div class="tablewrap">{table}</div></div></section>')
    if gone:  # the sections not on the page, and why each is not
        serving = all(k in sections.SERVING_SKIP and gone[k] == sections.SERVING_SKIP[k]
                      for k in gone) and "latency" in shown
        title = ("Training sections left out (a serving sweep)" if serving
                 else "Sections left out")
        parts.append(f'<section id="left-out"><h2>{_e(title)}</h2>'
                     + "".join(f'<p class="note">{_e(k)}: {_e(why.rstrip("."))}.</p>'
                               for k, why in gone.items()) + "</section>")
    parts.append("</body></html>")
    return "\n".join(parts)


def write(res: rr.Results, opts: sections.Options, path: str,
          dpi: int = common.FIGURE_DPI) -> None:
    text = page(res, opts, dpi)
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)
