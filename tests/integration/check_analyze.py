#!/usr/bin/python3
"""analysis/rapid-analyze against the HDF5 file it reads: `report` writes one HTML page whose
tables (parsed with html.parser) must hold the numbers computed here straight from the
file with h5py (not through rapid_results or rapid-analyze's own functions), and whose
figures are PNG data URIs; every subcommand exits 0 and draws its PNG; bad input exits 2
with one line; analysis/report.py still prints its summary.

    check_analyze.py ANALYSIS_DIR RESULT.h5 OUT_DIR
"""
import base64
import csv
import io
import math
import os
import subprocess
import sys
from html.parser import HTMLParser

import h5py
import numpy as np

PNG = b"\x89PNG\r\n\x1a\n"
LAYOUT = ["dp", "tp", "pp", "cp", "ep", "vpp", "mbs", "sp", "zero_stage", "recompute"]


class Page(HTMLParser):
    """The tables of the page by id (header and rows of (text, data-value)), the images'
    src attributes, and the text of every <td>."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.tables, self.images = {}, []
        self._table = self._row = self._cell = None

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if tag == "table":
            self._table = {"head": [], "rows": []}
            self.tables[attrs.get("id", f"anonymous-{len(self.tables)}")] = self._table
        elif tag == "tr" and self._table is not None:
            self._row = []
        elif tag in ("td", "th") and self._row is not None:
            self._cell = [tag, "", attrs.get("data-value")]
        elif tag == "img":
            self.images.append(attrs.get("src", ""))

    def handle_data(self, data):
        if self._cell is not None:
            self._cell[1] += data

    def handle_endtag(self, tag):
        if tag in ("td", "th") and self._cell is not None:
            self._row.append(self._cell)
            self._cell = None
        elif tag == "tr" and self._row is not None:
            if all(c[0] == "th" for c in self._row):
                self._table["head"] = [c[1] for c in self._row]
            else:
                self._table["rows"].append([(c[1], c[2]) for c in self._row])
            self._row = None
        elif tag == "table":
            self._table = None


def records(table):
    """Rows as dicts: column -> (text, float data-value or None)."""
    out = []
    for row in table["rows"]:
        out.append({h: (t, None if v is None else float(v)) for h, (t, v) in
                    zip(table["head"], row)})
    return out


def read_file(path):
    """The columns this test needs, straight from HDF5."""
    with h5py.File(path, "r") as f:
        g = f["points"]
        cols = {}
        for name in [*LAYOUT, "hardware_index", "num_gpus", "tokens_per_s_per_gpu",
                     "step_time_s", "status"]:
            cols[name] = g[name][()]
        for name in ("step_time_analytical_s", "memory_bound_time_s", "fidelity"):
            if name in g:  # columns of newer files
                cols[name] = g[name][()]
        if "fidelity" in cols:
            fid = {v: k for k, v in h5py.check_enum_dtype(g["fidelity"].dtype).items()}
            cols["fidelity"] = np.array([fid[int(v)] for v in cols["fidelity"]])
        cols["hbm_Bps"] = (f["variants/hbm_bandwidth_Bps"][()] if "variants" in f
                           and "hbm_bandwidth_Bps" in f["variants"] else None)
        enum = h5py.check_enum_dtype(g["status"].dtype)
        by_value = {v: k for k, v in enum.items()}
        cols["status"] = np.array([by_value[int(v)] for v in cols["status"]])
        names = [s.decode() if isinstance(s, bytes) else str(s) for s in f["hardware/names"][()]]
        if "variants" in f and "base" in f["variants"]:
            bases = [s.decode() if isinstance(s, bytes) else str(s)
                     for s in f["variants/base"][()]]
            base = [names.index(b) if b in names and names.index(b) != i else 0
                    for i, b in enumerate(bases)]
        else:
            base = [0] * len(names)
        return cols, names, base, int(f.attrs["baseline_index"]), f.attrs["job_name"]


def close(a, b, rel=1e-9):
    return (math.isnan(a) and math.isnan(b)) or abs(a - b) <= rel * max(abs(a), abs(b), 1e-300)


def run(cmd, errors, expect=0):
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    if proc.returncode != expect:
        errors.append(f"{' '.join(cmd[1:])}: exit {proc.returncode}, expected {expect}: "
                      f"{proc.stderr.strip()[-400:]}")
    return proc


def check_top(t, cols, names, baseline, errors):
    ok = (cols["status"] == "ok") & np.isfinite(cols["tokens_per_s_per_gpu"])
    tps = cols["tokens_per_s_per_gpu"]
    base_tps = tps[baseline]
    groups = {(int(g), int(h)) for g, h in zip(cols["num_gpus"][ok], cols["hardware_index"][ok])}
    seen = set()
    for r in records(t):
        if r["rank"][1] != 1:
            continue
        gpus, hw = int(r["GPUs"][1]), names.index(r["hardware"][0])
        seen.add((gpus, hw))
        mask = ok & (cols["num_gpus"] == gpus) & (cols["hardware_index"] == hw)
        best = tps[mask].max()
        if not close(r["tokens/s/GPU"][1], best):
            errors.append(f"top {gpus} GPUs {names[hw]}: best {r['tokens/s/GPU'][1]}, "
                          f"the file's max {best}")
        if f"{best:.1f}" != r["tokens/s/GPU"][0]:
            errors.append(f"top {gpus} GPUs {names[hw]}: printed {r['tokens/s/GPU'][0]!r}, "
                          f"expected {best:.1f}")
        if not close(tps[int(r["point"][1])], best):
            errors.append(f"top: point {r['point'][1]} is not the best of its group")
        if "step_time_analytical_s" in cols:
            check_analytical_rank(r, cols, mask, errors)
        speedup = r["speedup vs baseline (x)"][1]
        if not close(speedup, best / base_tps):
            errors.append(f"top {gpus} GPUs {names[hw]}: speedup {speedup}, expected "
                          f"{best / base_tps} (best / baseline point {baseline})")
    if seen != groups:
        errors.append(f"top: groups {sorted(seen)}, the file has {sorted(groups)}")


def check_analytical_rank(r, cols, mask, errors):
    """The top row's analytical rank: 1 + the rows of its group whose analytical step time
    (step_time_analytical_s, else step_time_s on analytical rows) is shorter."""
    if "analytical rank" not in r:
        errors.append("top: no 'analytical rank' column though the file has "
                      "step_time_analytical_s")
        return
    kept = cols["step_time_analytical_s"]
    analytical = np.where(np.isfinite(kept), kept,
                          np.where(cols["fidelity"] == "analytical", cols["step_time_s"],
                                   np.nan))
    mine = analytical[int(r["point"][1])]
    expected = 1 + int((analytical[mask] < mine).sum())
    if r["analytical rank"][1] != expected:
        errors.append(f"top point {r['point'][1]}: analytical rank {r['analytical rank'][1]}, "
                      f"expected {expected}")


def check_heatmap(t, cols, baseline, errors):
    ok = (cols["status"] == "ok") & np.isfinite(cols["tokens_per_s_per_gpu"])
    rows = records(t)
    if len(rows) != len(set(cols["tp"])) * len(set(cols["pp"])):
        errors.append(f"heatmap: {len(rows)} cells, expected every (tp, pp) pair")
    marked = 0
    for r in rows:
        tp, pp = int(r["tp"][1]), int(r["pp"][1])
        cell = (cols["tp"] == tp) & (cols["pp"] == pp)
        value, note = r["best tokens/s/GPU"][1], r["note"][0]
        if note.startswith("baseline"):
            marked += 1
            if (cols["tp"][baseline], cols["pp"][baseline]) != (tp, pp):
                errors.append(f"heatmap: baseline marked on tp {tp} pp {pp}")
        if (cell & ok).any():
            if not close(value, cols["tokens_per_s_per_gpu"][cell & ok].max()):
                errors.append(f"heatmap tp {tp} pp {pp}: {value}, expected the cell's max")
        elif not cell.any():
            if "no legal point" not in note or not math.isnan(value):
                errors.append(f"heatmap tp {tp} pp {pp}: empty cell noted {note!r}")
        elif (cols["status"][cell] == "oom").all() and "all OOM" not in note:
            errors.append(f"heatmap tp {tp} pp {pp}: all rows OOM, noted {note!r}")
    if marked != 1:
        errors.append(f"heatmap: {marked} cells marked baseline, expected 1")


def same_layout(cols, point, hw):
    mask = (cols["hardware_index"] == hw) & (cols["num_gpus"] == cols["num_gpus"][point])
    for k in LAYOUT:
        mask &= cols[k] == cols[k][point]
    return np.flatnonzero(mask)


def check_variants(t, cols, names, base, errors):
    ok = (cols["status"] == "ok") & np.isfinite(cols["tokens_per_s_per_gpu"])
    tps = cols["tokens_per_s_per_gpu"]
    rows = records(t)
    expected = {(int(g), int(h)) for g, h in zip(cols["num_gpus"], cols["hardware_index"])
                if base[int(h)] != int(h)}
    got = {(int(r["GPUs"][1]), names.index(r["variant"][0])) for r in rows}
    if got != expected:
        errors.append(f"variants: rows {sorted(got)}, expected {sorted(expected)}")
    for r in rows:
        gpus, hw = int(r["GPUs"][1]), names.index(r["variant"][0])
        b = base[hw]
        if r["base"][0] != names[b]:
            errors.append(f"variants {names[hw]}: base {r['base'][0]}, expected {names[b]}")
        on_base = ok & (cols["num_gpus"] == gpus) & (cols["hardware_index"] == b)
        on_var = ok & (cols["num_gpus"] == gpus) & (cols["hardware_index"] == hw)
        if not on_base.any() or not on_var.any():
            continue
        bb = np.flatnonzero(on_base)[np.argmax(tps[on_base])]
        bv = tps[on_var].max()
        if not close(r["best vs best (x)"][1], bv / tps[bb]):
            errors.append(f"variants {gpus} GPUs {names[hw]}: best vs best "
                          f"{r['best vs best (x)'][1]}, expected {bv / tps[bb]}")
        same = same_layout(cols, bb, hw)
        if len(same) == 1 and cols["status"][same[0]] == "ok":
            e2e = cols["step_time_s"][bb] / cols["step_time_s"][same[0]]
            if not close(r["end to end, fixed layout (x)"][1], e2e):
                errors.append(f"variants {gpus} GPUs {names[hw]}: fixed-layout speedup "
                              f"{r['end to end, fixed layout (x)'][1]}, expected {e2e}")
            if "memory_bound_time_s" in cols:
                mb = cols["memory_bound_time_s"][bb] / cols["memory_bound_time_s"][same[0]]
                got = r.get("memory-bound (x)", ("", None))[1]
                if got is None or not close(got, mb):
                    errors.append(f"variants {gpus} GPUs {names[hw]}: memory-bound speedup "
                                  f"{got}, expected {mb}")


def check_roofline(t, cols, names, errors):
    """Each entry's effective HBM bandwidth is /variants' (sustained) hbm_bandwidth_Bps."""
    if cols["hbm_Bps"] is None:
        return
    for r in records(t):
        expected = cols["hbm_Bps"][names.index(r["variant"][0])] / 1e12
        if not close(r["effective HBM (TB/s)"][1], expected):
            errors.append(f"roofline {r['variant'][0]}: effective HBM "
                          f"{r['effective HBM (TB/s)'][1]} TB/s, expected {expected}")


def check_images(images, errors, at_least=5):
    pngs = [src for src in images if src.startswith("data:image/png;base64,")]
    if len(pngs) < at_least or len(pngs) != len(images):
        errors.append(f"report: {len(pngs)} PNG data URIs of {len(images)} images, expected "
                      f"at least {at_least} and no other")
    for src in pngs:
        data = base64.b64decode(src.split(",", 1)[1], validate=True)
        if not data.startswith(PNG) or len(data) < 2000:
            errors.append(f"report: an image of {len(data)} bytes is not a PNG")


def check_subcommands(tool, path, out, names, errors):
    stem = os.path.splitext(os.path.basename(path))[0]
    for sub in ("variants", "roofline", "heatmap", "pareto", "breakdown"):
        proc = run([sys.executable, tool, sub, path, "--out", out], errors)
        png = os.path.join(out, f"{stem}-{sub}.png")
        if proc.returncode == 0:
            if not os.path.isfile(png) or open(png, "rb").read(8) != PNG:
                errors.append(f"{sub} --out {out}: no PNG at {png}")
            if "Figure: " not in proc.stdout:
                errors.append(f"{sub}: no 'Figure:' line")
    proc = run([sys.executable, tool, "top", path, "--csv", "--top", "2"], errors)
    table = list(csv.DictReader(io.StringIO(proc.stdout)))
    if not table or "tokens/s/GPU" not in table[0] or "fidelity" not in table[0]:
        errors.append("top --csv: no CSV table with tokens/s/GPU and fidelity")
    run([sys.executable, tool, "heatmap", path, "--x", "hardware", "--y", "num_gpus",
         "--hardware", names[-1], "--png", os.path.join(out, "hw.png")], errors)
    bad_file = os.path.join(out, "not-hdf5.h5")
    with open(bad_file, "w") as f:
        f.write("not HDF5\n")
    missing = os.path.join(out, "no-such-file.h5")
    for cmd, word in ((["top", missing], missing), (["report", bad_file], bad_file),
                      (["variants", path, "--hardware", "no-such-gpu"], "no-such-gpu"),
                      (["heatmap", path, "--x", "no_such_column"], "no_such_column"),
                      (["top", path, "--gpus", "3"], "--gpus 3")):
        proc = run([sys.executable, tool, *cmd], errors, expect=2)
        lines = proc.stderr.strip().splitlines()
        if len(lines) != 1 or word not in lines[0] or proc.stdout:
            errors.append(f"{' '.join(cmd)}: stderr {proc.stderr!r}, expected one line "
                          f"naming {word} and no output")


def main(analysis, path, out):
    os.makedirs(out, exist_ok=True)
    tool = os.path.join(analysis, "rapid-analyze")
    errors = []
    cols, names, base, baseline, job = read_file(path)
    page_path = os.path.join(out, "report.html")
    if os.path.exists(page_path):
        os.remove(page_path)
    run([sys.executable, tool, "report", path, "-o", page_path, "--top", "3"], errors)
    if not os.path.isfile(page_path):
        errors.append(f"report: {page_path} not written")
    else:
        page = Page()
        page.feed(open(page_path, encoding="utf-8").read())
        prov = {r[0][0]: r[1][0] for r in page.tables.get("provenance", {"rows": []})["rows"]}
        if prov.get("job") != job or f"point {baseline}:" not in prov.get("baseline", ""):
            errors.append(f"report header: job {prov.get('job')!r}, baseline "
                          f"{prov.get('baseline')!r}; expected {job} and point {baseline}")
        for key in ("top", "variants", "roofline", "heatmap", "pareto", "breakdown"):
            if f"table-{key}" not in page.tables:
                errors.append(f"report: no table-{key}")
        if "table-top" in page.tables:
            check_top(page.tables["table-top"], cols, names, baseline, errors)
        if "table-heatmap" in page.tables:
            check_heatmap(page.tables["table-heatmap"], cols, baseline, errors)
        if "table-variants" in page.tables:
            check_variants(page.tables["table-variants"], cols, names, base, errors)
        if "table-roofline" in page.tables:
            check_roofline(page.tables["table-roofline"], cols, names, errors)
        check_images(page.images, errors)
    check_subcommands(tool, path, out, names, errors)
    proc = run([sys.executable, os.path.join(analysis, "report.py"), path, "--png",
                os.path.join(out, "report-py.png")], errors)
    if "Best is" not in proc.stdout or "Heatmap: " not in proc.stdout:
        errors.append("report.py: no 'Best is' or 'Heatmap:' line")
    for e in errors:
        print("FAIL:", e)
    if not errors:
        print(f"rapid-analyze: report tables match {path} ({len(cols['status'])} points, "
              f"{len(names)} hardware entries), every subcommand ran, bad input exits 2")
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:4]))
