#!/usr/bin/python3
"""analysis/rapid-analyze against the HDF5 file it reads: `report` writes one HTML page whose
tables (parsed with html.parser) must hold the numbers computed here straight from the
file with h5py (not through rapid_results or rapid-analyze's own functions), and whose
figures are PNG data URIs; every subcommand exits 0 and draws its PNG; the CSV of heatmap
over two /variants parameters, pareto --top and breakdown match the file too; bad input
(a missing --png directory, a directory as FILE, ...) exits 2 with one line before any
table; analysis/report.py still prints its summary.

    check_analyze.py ANALYSIS_DIR RESULT.h5 OUT_DIR
"""
import base64
import csv
import io
import math
import os
import shutil
import sys
from html.parser import HTMLParser

import h5py
import numpy as np
from check_common import close, run

PNG = b"\x89PNG\r\n\x1a\n"
LAYOUT = ["dp", "tp", "pp", "cp", "ep", "vpp", "mbs", "sp", "zero_stage", "recompute"]
GIB = float(1 << 30)
# /variants parameter -> its words in the roofline's "differs in" (analysis/README.md).
PARAM_WORDS = {"num_sms": "SM count", "sm_clock_Hz": "SM clock",
               "tensor_peak_bf16_FLOPs": "BF16 tensor peak",
               "tensor_peak_fp8_FLOPs": "FP8 tensor peak", "hbm_capacity_bytes": "HBM capacity",
               "hbm_bandwidth_Bps": "HBM bandwidth", "l2_size_bytes": "L2 size",
               "l2_bandwidth_Bps": "L2 bandwidth", "nvlink_bandwidth_Bps": "NVLink bandwidth",
               "nic_bandwidth_Bps": "network bandwidth", "tdp_W": "TDP",
               "hbm_thermal_keep": "HBM thermal keep"}


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
                     "step_time_s", "status", "peak_memory_bytes", "memory_capacity_bytes"]:
            cols[name] = g[name][()]
        for name in ("step_time_analytical_s", "memory_bound_time_s", "fidelity"):
            if name in g:  # columns of newer files
                cols[name] = g[name][()]
        if "fidelity" in cols:
            fid = {v: k for k, v in h5py.check_enum_dtype(g["fidelity"].dtype).items()}
            cols["fidelity"] = np.array([fid[int(v)] for v in cols["fidelity"]])
        cols["hbm_Bps"] = (f["variants/hbm_bandwidth_Bps"][()] if "variants" in f
                           and "hbm_bandwidth_Bps" in f["variants"] else None)
        cols["params"] = ({k: f["variants"][k][()] for k in PARAM_WORDS if k in f["variants"]}
                          if "variants" in f else {})
        cols["overrides"] = ([s.decode() if isinstance(s, bytes) else str(s)
                              for s in f["variants/overrides"][()]]
                             if "variants" in f and "overrides" in f["variants"] else [])
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
    (step_time_analytical_s, else step_time_s on analytical rows) is shorter, shown only
    in groups where the DES refined some row ("-" elsewhere: it equals rank there)."""
    simulated = "fidelity" in cols and (cols["fidelity"][mask] == "des").any()
    if "analytical rank" not in r:
        if simulated:
            errors.append("top: no 'analytical rank' column though a group has DES rows")
        return
    kept = cols["step_time_analytical_s"]
    analytical = np.where(np.isfinite(kept), kept,
                          np.where(cols["fidelity"] == "analytical", cols["step_time_s"],
                                   np.nan))
    mine = analytical[int(r["point"][1])]
    expected = 1 + int((analytical[mask] < mine).sum()) if simulated else float("nan")
    if not close(float(r["analytical rank"][1]), float(expected)):
        errors.append(f"top point {r['point'][1]}: analytical rank {r['analytical rank'][1]}, "
                      f"expected {expected}")


def check_top_analytical_only(tool, path, out, errors):
    """A copy of the file with every row marked analytical (what an --fidelity analytical
    sweep writes): `top` has no analytical rank column, which would only repeat rank."""
    copy = os.path.join(out, "analytical-only.h5")
    shutil.copyfile(path, copy)
    with h5py.File(copy, "r+") as f:
        ds = f["points/fidelity"]
        ds[...] = np.full(ds.shape, h5py.check_enum_dtype(ds.dtype)["analytical"], ds.dtype)
    proc = run([sys.executable, tool, "top", copy, "--csv"], errors)
    head = next(csv.reader(io.StringIO(proc.stdout)), [])
    if "analytical rank" in head or "rank" not in head:
        errors.append(f"top on an analytical-only file: columns {head}, expected rank and no "
                      "analytical rank")


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
    """Per (GPU count, variant): best vs best, the step at the base's best layout, and the
    memory-bound class's speedup, share of the base's step and end-to-end bound
    (Amdahl: step / (step - class on base + class on variant))."""
    ok = (cols["status"] == "ok") & np.isfinite(cols["tokens_per_s_per_gpu"])
    tps = cols["tokens_per_s_per_gpu"]
    rows = {}
    for r in records(t):
        rows.setdefault((int(r["GPUs"][1]), names.index(r["variant"][0])), {})[
            r["op class"][0]] = r
    expected = {(int(g), int(h)) for g, h in zip(cols["num_gpus"], cols["hardware_index"])
                if base[int(h)] != int(h)}
    if set(rows) != expected:
        errors.append(f"variants: rows {sorted(rows)}, expected {sorted(expected)}")
    for (gpus, hw), by_class in rows.items():
        b, where = base[hw], f"variants {gpus} GPUs {names[hw]}"
        if any(r["base"][0] != names[b] for r in by_class.values()):
            errors.append(f"{where}: base is not {names[b]}")
        on_base = ok & (cols["num_gpus"] == gpus) & (cols["hardware_index"] == b)
        on_var = ok & (cols["num_gpus"] == gpus) & (cols["hardware_index"] == hw)
        if not on_base.any() or not on_var.any():
            continue
        bb = np.flatnonzero(on_base)[np.argmax(tps[on_base])]
        want = {"best vs best": tps[on_var].max() / tps[bb]}
        same = same_layout(cols, bb, hw)
        if len(same) == 1 and cols["status"][same[0]] == "ok":
            v, step = same[0], cols["step_time_s"][bb]
            want["end to end, fixed layout"] = step / cols["step_time_s"][v]
            if "memory_bound_time_s" in cols:
                tb, tv = cols["memory_bound_time_s"][bb], cols["memory_bound_time_s"][v]
                row = by_class.get("memory-bound")
                got = (None if row is None else
                       (row["speedup (x)"][1], row["share of base step (%)"][1],
                        row["end to end if only it changed (x)"][1]))
                exp = (tb / tv, 100 * tb / step, step / (step - tb + tv))
                if got is None or not all(close(g, e) for g, e in zip(got, exp)):
                    errors.append(f"{where}: memory-bound (speedup, share %, bound) {got}, "
                                  f"expected {exp}")
        for what, value in want.items():
            got = by_class.get(what, {}).get("speedup (x)", ("", None))[1]
            if got is None or not close(got, value):
                errors.append(f"{where}: {what} {got}, expected {value}")


def check_overrides(page, cols, errors):
    """The variants section's folded overrides table: every entry with overrides, once."""
    table = page.tables.get("table-variants-appendix")
    expected = sorted(o for o in cols["overrides"] if o)
    got = sorted(r["overrides"][0] for r in records(table)) if table else []
    if got != expected:
        errors.append(f"report: overrides table {got}, expected {expected} from /variants")


def check_roofline(t, cols, names, base, errors):
    """Each entry's effective HBM bandwidth is /variants' (sustained) hbm_bandwidth_Bps, and
    `differs in` names every /variants parameter whose value differs from its base's."""
    if cols["hbm_Bps"] is None:
        return
    params = cols["params"]
    for r in records(t):
        hw = names.index(r["variant"][0])
        expected = cols["hbm_Bps"][hw] / 1e12
        if not close(r["effective HBM (TB/s)"][1], expected):
            errors.append(f"roofline {r['variant'][0]}: effective HBM "
                          f"{r['effective HBM (TB/s)'][1]} TB/s, expected {expected}")
        b = names.index(r["base"][0])
        words = [PARAM_WORDS[k] for k in PARAM_WORDS if k in params
                 and not close(float(params[k][hw]), float(params[k][b]))]
        want = "base" if hw == b else ", ".join(words) or "none of the /variants parameters"
        if r["differs in"][0] != want:
            errors.append(f"roofline {r['variant'][0]}: differs in {r['differs in'][0]!r}, "
                          f"expected {want!r}")


def check_param_heatmap(tool, path, cols, names, errors):
    """heatmap --x hbm_bandwidth --y l2_size: each cell the best tokens/s/GPU over the
    entries with that (bandwidth, L2 size) pair, its axes in TB/s and MiB."""
    params = cols["params"]
    if "hbm_bandwidth_Bps" not in params or "l2_size_bytes" not in params:
        return
    proc = run([sys.executable, tool, "heatmap", path, "--x", "hbm_bandwidth", "--y",
                "l2_size", "--csv"], errors)
    ok = (cols["status"] == "ok") & np.isfinite(cols["tokens_per_s_per_gpu"])
    hw = cols["hardware_index"]
    bw, l2 = params["hbm_bandwidth_Bps"][hw] / 1e12, params["l2_size_bytes"][hw] / 2**20
    cells = list(csv.DictReader(io.StringIO(proc.stdout)))
    pairs = {(round(float(a), 9), round(float(c), 9))
             for a, c in zip(params["hbm_bandwidth_Bps"] / 1e12, params["l2_size_bytes"] / 2**20)}
    filled = 0
    for c in cells:
        x, y = float(c["HBM bandwidth (TB/s)"]), float(c["L2 size (MiB)"])
        mask = ok & np.isclose(bw, x, rtol=1e-9) & np.isclose(l2, y, rtol=1e-9)
        if mask.any():
            filled += 1
            if not close(float(c["best tokens/s/GPU"]), cols["tokens_per_s_per_gpu"][mask].max()):
                errors.append(f"heatmap hbm x l2 ({x}, {y}): {c['best tokens/s/GPU']}, expected "
                              "the best of its entries")
    if filled != len(pairs):
        errors.append(f"heatmap hbm x l2: {filled} filled cells, the file has {len(pairs)} "
                      "(bandwidth, L2) pairs")
    proc = run([sys.executable, tool, "heatmap", path], errors)
    title = proc.stdout.splitlines()[0] if proc.stdout else ""
    if len(names) > 1 and f"best over all {len(names)} hardware entries" not in title:
        errors.append(f"heatmap tp x pp: title {title!r} does not say each cell is the best "
                      f"over all {len(names)} hardware entries")


def pareto_front(x, y):
    """Indices no other point beats on both x (more is better) and y (more is better)."""
    keep = []
    for i in range(len(x)):
        beaten = (x >= x[i]) & (y >= y[i]) & ((x > x[i]) | (y > y[i]))
        if not beaten.any():
            keep.append(i)
    return np.array(keep, dtype=int)


def check_pareto(tool, path, cols, names, errors, n=3):
    """pareto --top n: at most n rows per (front, entry), its named columns, and for the
    memory-headroom front the n highest tokens/s/GPU among the layouts no other layout
    beats on both headroom and tokens/s/GPU."""
    proc = run([sys.executable, tool, "pareto", path, "--csv", "--top", str(n)], errors)
    rows = list(csv.DictReader(io.StringIO(proc.stdout)))
    head = rows[0].keys() if rows else []
    if not {"GPUs", "memory headroom (GiB)", "tokens/s/GPU"} <= set(head):
        errors.append(f"pareto: columns {list(head)}, expected GPUs, memory headroom (GiB), "
                      "tokens/s/GPU")
        return
    ok = (cols["status"] == "ok") & np.isfinite(cols["tokens_per_s_per_gpu"])
    room = (cols["memory_capacity_bytes"] - cols["peak_memory_bytes"]) / GIB
    tps = cols["tokens_per_s_per_gpu"]
    for hw, name in enumerate(names):
        shown = [r for r in rows if r["hardware"] == name
                 and r["front"] == "tokens/s/GPU vs memory headroom (GiB)"]
        idx = np.flatnonzero(ok & (cols["hardware_index"] == hw))
        front = idx[pareto_front(room[idx], tps[idx])]
        want = sorted(set(np.round(tps[front], 6)), reverse=True)[:n]
        got = [round(float(r["tokens/s/GPU"]), 6) for r in shown]
        if len(got) != len(want) or not np.allclose(got, want, rtol=1e-9):
            errors.append(f"pareto {name}: headroom front rows {got}, expected {want}")


def check_breakdown(tool, path, cols, names, base, errors, n=2):
    """breakdown: per GPU count, the base's best layout on the base and on each variant
    where it fits (their step times from the file), then the n fastest layouts."""
    proc = run([sys.executable, tool, "breakdown", path, "--csv", "--top", str(n)], errors)
    rows = list(csv.DictReader(io.StringIO(proc.stdout)))
    ok = (cols["status"] == "ok") & np.isfinite(cols["tokens_per_s_per_gpu"])
    tps = cols["tokens_per_s_per_gpu"]
    expected = []
    for gpus in sorted(set(int(g) for g in cols["num_gpus"])):
        for b in sorted(set(base)):
            on_base = ok & (cols["num_gpus"] == gpus) & (cols["hardware_index"] == b)
            if not on_base.any() or len(names) < 2:
                continue
            bb = np.flatnonzero(on_base)[np.argmax(tps[on_base])]
            expected.append(int(bb))
            for hw in range(len(names)):
                same = same_layout(cols, bb, hw)
                if hw != b and base[hw] == b and len(same) == 1 and ok[same[0]]:
                    expected.append(int(same[0]))
    fixed = [r for r in rows if r["view"] == "base's best layout"]
    got = [int(r["point"]) for r in fixed]
    if got != expected:
        errors.append(f"breakdown: base's best layout rows at points {got}, expected {expected}")
    for r in fixed:
        if not close(float(r["step time (s)"]), cols["step_time_s"][int(r["point"])]):
            errors.append(f"breakdown point {r['point']}: step time {r['step time (s)']}")
    top = [r for r in rows if r["view"].startswith(f"top {n}")]
    want = sorted(tps[ok], reverse=True)[:n]
    if not np.allclose([tps[int(r["point"])] for r in top], want, rtol=1e-12):
        errors.append(f"breakdown: top {n} points {[r['point'] for r in top]} are not the "
                      "fastest")
    text = run([sys.executable, tool, "breakdown", path], errors).stdout
    if ("other (s)" in text) != ("other:" in text):
        errors.append("breakdown: the note names an 'other' column the table does not have, "
                      "or the other way round")


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
    figures = os.path.join(out, "figures", "new")  # --out creates it with its parent
    shutil.rmtree(os.path.join(out, "figures"), ignore_errors=True)
    for sub in ("variants", "roofline", "heatmap", "pareto", "breakdown"):
        proc = run([sys.executable, tool, sub, path, "--out", figures], errors)
        png = os.path.join(figures, f"{stem}-{sub}.png")
        if proc.returncode == 0:
            if not os.path.isfile(png) or open(png, "rb").read(8) != PNG:
                errors.append(f"{sub} --out {figures}: no PNG at {png}")
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
    no_dir = os.path.join(out, "no-such-dir", "v.png")
    for cmd, words in ((["top", missing], [missing]), (["report", bad_file], [bad_file]),
                       (["variants", path, "--hardware", "no-such-gpu"], ["no-such-gpu"]),
                       (["heatmap", path, "--x", "no_such_column"], ["no_such_column"]),
                       (["top", path, "--gpus", "3"], ["--gpus 3"]),
                       (["variants", path, "--png", no_dir], ["--png", no_dir, "does not exist"]),
                       (["top", out], [out, "is a directory"])):
        proc = run([sys.executable, tool, *cmd], errors, expect=2)
        lines = proc.stderr.strip().splitlines()
        if len(lines) != 1 or not all(w in lines[0] for w in words) or proc.stdout:
            errors.append(f"{' '.join(cmd)}: stderr {proc.stderr!r}, expected one line "
                          f"naming {', '.join(words)} and no output")


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
            check_roofline(page.tables["table-roofline"], cols, names, base, errors)
        check_overrides(page, cols, errors)
        entries = prov.get("hardware", "")
        if not entries.startswith(f"{len(names)} entr"):
            errors.append(f"report header: hardware {entries[:80]!r}, expected it to start "
                          f"with the number of entries ({len(names)})")
        check_images(page.images, errors)
    check_subcommands(tool, path, out, names, errors)
    check_top_analytical_only(tool, path, out, errors)
    check_param_heatmap(tool, path, cols, names, errors)
    check_pareto(tool, path, cols, names, errors)
    check_breakdown(tool, path, cols, names, base, errors)
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
