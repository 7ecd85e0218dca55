#!/usr/bin/python3
"""analysis/rapid-analyze latency (and report) on serving sweeps (jobs with mode: inference),
checked against the file read straight with h5py (not through rapid_results or
rapid-analyze's own functions): the CSV has one row per point with ITL/TTFT in ms = the
seconds x 1000, the number of curves is the number of (hardware entry, GPU count, layout),
the best output tokens/s/GPU per ITL budget (printed, and in the report's budget table) is
the file's, every point that is not ok is named in the notes, the figures decode as PNG;
`report` on a serving file shows the latency section (and says why the training sections are
left out); on a training file `latency` exits 2 with one line and `report` has no latency
section.

    check_latency.py ANALYSIS_DIR OUT_DIR TRAINING.h5 SERVING.h5 [SERVING.h5 ...]
"""
import base64
import csv
import io
import math
import os
import re
import sys

import h5py
import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from check_analyze import Page, records  # noqa: E402  (the report's tables as parsed HTML)
from check_common import close as _close  # noqa: E402
from check_common import run  # noqa: E402


def close(a, b, rel=1e-12):
    return _close(a, b, rel)


PNG = b"\x89PNG\r\n\x1a\n"
FIXED_BUDGETS = (10.0, 20.0, 50.0, 100.0)  # --itl-budgets of the runs below, and two more
# Latency columns and their table names with the factor from the file's seconds.
LATENCY = {"ttft_s": ("TTFT (ms)", 1e3), "ttft_p50_s": ("TTFT p50 (ms)", 1e3),
           "ttft_p90_s": ("TTFT p90 (ms)", 1e3), "ttft_p99_s": ("TTFT p99 (ms)", 1e3),
           "itl_s": ("ITL (ms)", 1e3), "itl_start_s": ("ITL start (ms)", 1e3),
           "itl_mid_s": ("ITL mid (ms)", 1e3), "itl_end_s": ("ITL end (ms)", 1e3),
           "itl_p50_s": ("ITL p50 (ms)", 1e3), "itl_p90_s": ("ITL p90 (ms)", 1e3),
           "itl_p99_s": ("ITL p99 (ms)", 1e3), "e2e_latency_s": ("E2E (s)", 1.0),
           "e2e_p50_s": ("E2E p50 (s)", 1.0), "e2e_p90_s": ("E2E p90 (s)", 1.0),
           "e2e_p99_s": ("E2E p99 (s)", 1.0)}
LOADS = {"concurrency": "concurrency", "arrival_rate_per_s": "arrival rate (1/s)"}


def enum_strings(ds):
    by_value = {v: k for k, v in h5py.check_enum_dtype(ds.dtype).items()}
    return np.array([by_value[int(v)] for v in ds[()]])


def read_file(path):
    """The columns this test needs and the mode attribute, straight from HDF5."""
    with h5py.File(path, "r") as f:
        g = f["points"]
        cols = {k: g[k][()] for k in g if k not in ("status", "fidelity", "recompute")
                and isinstance(g[k], h5py.Dataset) and g[k].ndim == 1
                and h5py.check_enum_dtype(g[k].dtype) is None}
        cols["status"] = enum_strings(g["status"])
        cols["fidelity"] = enum_strings(g["fidelity"])
        names = [s.decode() if isinstance(s, bytes) else str(s) for s in f["hardware/names"][()]]
        mode = f.attrs.get("mode", b"training")
        mode = mode.decode() if isinstance(mode, bytes) else str(mode)
    return cols, names, mode


def layout(cols, i):
    text = f"dp{cols['dp'][i]} tp{cols['tp'][i]} pp{cols['pp'][i]}"
    for k in ("cp", "ep", "etp"):
        if k in cols and cols[k][i] != 1:
            text += f" {k}{cols[k][i]}"
    return text


def load_of(cols):
    return next(c for c in LOADS if c in cols and np.isfinite(cols[c]).any())


def expected_best(cols, names, budgets):
    """(hardware name, GPUs, budget) -> the point of the highest tokens/s/GPU among ok rows
    with itl_s x 1000 <= budget (ties within 1e-9 to the lowest ITL), or None."""
    tps, itl = cols["tokens_per_s_per_gpu"], cols["itl_s"]
    ok = (cols["status"] == "ok") & np.isfinite(tps) & np.isfinite(itl)
    out = {}
    for hw, gpus in sorted({(int(h), int(g)) for h, g in zip(cols["hardware_index"],
                                                             cols["num_gpus"])}):
        group = ok & (cols["hardware_index"] == hw) & (cols["num_gpus"] == gpus)
        for b in budgets:
            within = np.flatnonzero(group & (itl * 1000 <= b))
            if within.size == 0:
                out[(names[hw], gpus, b)] = None
                continue
            top = tps[within].max()
            tied = within[tps[within] >= top * (1 - 1e-9)]
            out[(names[hw], gpus, b)] = int(tied[np.argmin(itl[tied])])
    return out


def budgets_of(cols):
    """FIXED_BUDGETS and two around the ITL of the fastest ok point (ms, 3 decimals): one
    just above it, which must take it, and one just below, which must not."""
    tps, itl = cols["tokens_per_s_per_gpu"], cols["itl_s"]
    ok = np.flatnonzero((cols["status"] == "ok") & np.isfinite(tps) & np.isfinite(itl))
    fastest = itl[ok[np.argmax(tps[ok])]] * 1000
    edges = (round(math.ceil(fastest * 1000) / 1000, 3),
             round(math.floor(fastest * 1000) / 1000 - 0.001, 3))
    return tuple(sorted(set(FIXED_BUDGETS) | set(edges)))


def budget_option(budgets):
    return ",".join(f"{b:g}" for b in budgets)


def load_words(cols, i):
    load = load_of(cols)
    v = cols[load][i]
    return f"concurrency {v:g}" if load == "concurrency" else f"arrival rate {v:g}/s"


def check_csv(tool, path, cols, names, errors):
    """latency --csv: one row per point, its values the file's (ms = s x 1000)."""
    proc = run([sys.executable, tool, "latency", path, "--csv"], errors)
    rows = list(csv.DictReader(io.StringIO(proc.stdout)))
    n = len(cols["status"])
    if len(rows) != n:
        errors.append(f"latency --csv {path}: {len(rows)} rows, the file has {n} points")
        return
    load = load_of(cols)
    des = bool((cols["fidelity"] == "des").any())
    for r in rows:
        i = int(r["point"])
        where = f"latency --csv {os.path.basename(path)} point {i}"
        if r["layout"] != layout(cols, i) or r["hardware"] != names[cols["hardware_index"][i]]:
            errors.append(f"{where}: layout {r['layout']!r} on {r['hardware']}, expected "
                          f"{layout(cols, i)!r}")
        if r["status"] != cols["status"][i] or int(r["GPUs"]) != cols["num_gpus"][i]:
            errors.append(f"{where}: status {r['status']}, GPUs {r['GPUs']}")
        if not close(float(r[LOADS[load]]), float(cols[load][i])):
            errors.append(f"{where}: {LOADS[load]} {r[LOADS[load]]}, file {cols[load][i]}")
        pairs = [("output tokens/s/GPU", cols["tokens_per_s_per_gpu"][i]),
                 ("output tokens/s", cols["output_tokens_per_s"][i]),
                 ("running batch", cols["running_batch"][i]),
                 ("max concurrency", cols["max_concurrency"][i])]
        for col, (label, scale) in LATENCY.items():
            if "_p" in col and not des:  # the percentiles: the DES's only
                if label in r:
                    errors.append(f"latency --csv {path}: {label} without any DES row")
                continue
            pairs.append((label, cols[col][i] * scale))
        for label, want in pairs:
            got = float(r[label]) if r.get(label, "") != "" else float("nan")
            if not close(got, float(want)):
                errors.append(f"{where}: {label} {got}, file {want}")
    return rows


def check_text(tool, path, cols, names, out, errors):
    """latency (text, --png, budgets_of): the curve count in the title, the best
    per budget in the notes, every point that is not ok named; the PNG decodes."""
    png = os.path.join(out, os.path.basename(path).replace(".h5", "-latency.png"))
    if os.path.exists(png):
        os.remove(png)
    budgets = budgets_of(cols)
    proc = run([sys.executable, tool, "latency", path, "--png", png, "--itl-budgets",
                budget_option(budgets)], errors)
    text = proc.stdout
    curves = {(int(h), int(g), layout(cols, i)) for i, (h, g) in
              enumerate(zip(cols["hardware_index"], cols["num_gpus"]))}
    m = re.search(r"Throughput against latency: (\d+) layout curves?", text)
    if not m or int(m.group(1)) != len(curves):
        errors.append(f"latency {path}: title {m.group(0) if m else None!r}, expected "
                      f"{len(curves)} layout curves")
    best = expected_best(cols, names, budgets)
    groups = {(hw, g) for hw, g, _ in best}
    said = {}  # (entry, GPUs, budget as printed) -> the clause of the notes about it
    for ln in text.splitlines():
        m = re.match(r"\s*(?:(\S+), (\d+) GPUs: )?ITL <= ", ln)
        if not m:
            continue
        hw, gpus = (m.group(1), int(m.group(2))) if m.group(1) else next(iter(groups))
        for part in ln.strip().split("; "):
            c = re.search(r"ITL <= ([0-9., ]+) ms: ", part)
            for b in (c.group(1).split(", ") if c else []):
                said[(hw, gpus, b)] = part
    for (hw, gpus, b), i in best.items():
        clause = said.get((hw, gpus, f"{b:g}"))
        if clause is None:
            errors.append(f"latency {path}: no note for {hw}, {gpus} GPUs, ITL <= {b:g} ms")
            continue
        if i is None:
            if "no point meets it" not in clause and "no point runs" not in clause:
                errors.append(f"latency {path}: {hw} {gpus} GPUs ITL <= {b:g} ms: {clause!r}, "
                              "expected no point")
            continue
        want = (f"{cols['tokens_per_s_per_gpu'][i]:.1f} output tokens/s/GPU with "
                f"{layout(cols, i)} at {load_words(cols, i)} (ITL "
                f"{cols['itl_s'][i] * 1000:.2f} ms")
        if want not in clause:
            errors.append(f"latency {path}: {hw} {gpus} GPUs ITL <= {b:g} ms: {clause!r}, "
                          f"expected {want!r}")
    bad = [i for i in range(len(cols["status"])) if cols["status"][i] != "ok"]
    note = next((ln for ln in text.splitlines() if "Not plotted" in ln), "")
    if bad and f"Not plotted ({len(bad)} point" not in note:
        errors.append(f"latency {path}: {len(bad)} points not ok, note {note[:120]!r}")
    for i in bad:
        if f"{layout(cols, i)}" not in note or cols["status"][i] not in note:
            errors.append(f"latency {path}: point {i} ({layout(cols, i)}, "
                          f"{cols['status'][i]}) not named in the not-plotted note")
    if not bad and note:
        errors.append(f"latency {path}: every point is ok, yet {note[:80]!r}")
    check_png(png, f"latency --png {png}", errors)


def check_png(path_or_bytes, what, errors):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.image as mpimg
    data = path_or_bytes
    if isinstance(path_or_bytes, str):
        if not os.path.isfile(path_or_bytes):
            errors.append(f"{what}: no file")
            return
        data = open(path_or_bytes, "rb").read()
    if not data.startswith(PNG):
        errors.append(f"{what}: not a PNG")
        return
    img = mpimg.imread(io.BytesIO(data), format="png")
    if img.ndim != 3 or img.shape[0] < 300 or img.shape[1] < 600 or np.ptp(img) == 0:
        errors.append(f"{what}: decoded to {img.shape}, expected a drawn figure")


def check_report(tool, path, cols, names, mode, out, errors):
    """report --itl-budgets (budgets_of): the latency section only (training sections left
    out, each with its reason), the budget table = expected_best, the ITL cells' data-values
    = itl_s x 1000, a PNG figure, the provenance's mode and stack."""
    page_path = os.path.join(out, os.path.basename(path).replace(".h5", "-report.html"))
    if os.path.exists(page_path):
        os.remove(page_path)
    budgets = budgets_of(cols)
    run([sys.executable, tool, "report", path, "-o", page_path, "--itl-budgets",
         budget_option(budgets)], errors)
    if not os.path.isfile(page_path):
        errors.append(f"report {path}: {page_path} not written")
        return
    html = open(page_path, encoding="utf-8").read()
    page = Page()
    page.feed(html)
    prov = {r[0][0]: r[1][0] for r in page.tables.get("provenance", {"rows": []})["rows"]}
    if prov.get("mode") != mode or "vllm" not in prov.get("serving stack", ""):
        errors.append(f"report {path}: provenance mode {prov.get('mode')!r}, stack "
                      f"{prov.get('serving stack')!r}")
    for key in ("top", "variants", "roofline", "heatmap", "pareto", "breakdown"):
        if f"table-{key}" in page.tables or f'id="{key}"' in html:
            errors.append(f"report {path}: a {key} section on a serving file")
        if f'<p class="note">{key}: ' not in html:
            errors.append(f"report {path}: no reason why {key} is left out")
    if "table-latency" not in page.tables or "table-latency-appendix" not in page.tables:
        errors.append(f"report {path}: no table-latency or table-latency-appendix")
        return
    rows = records(page.tables["table-latency"])
    if len(rows) != len(cols["status"]):
        errors.append(f"report {path}: table-latency has {len(rows)} rows, file "
                      f"{len(cols['status'])} points")
    for r in rows:
        i = int(r["point"][1])
        for col in ("itl_s", "ttft_s"):
            label, scale = LATENCY[col]
            got = r[label][1]
            want = cols[col][i] * scale
            if not close(float("nan") if got is None else got, want):
                errors.append(f"report {path}: point {i} {label} {got}, file {want}")
    best = expected_best(cols, names, budgets)
    got = {}
    for r in records(page.tables["table-latency-appendix"]):
        key = (r["hardware"][0], int(r["GPUs"][1]), r["ITL budget (ms)"][1])
        point = r["point"][1]
        got[key] = None if point is None or math.isnan(point) else int(point)
        i = got[key]
        if i is not None and not close(r["output tokens/s/GPU"][1],
                                       cols["tokens_per_s_per_gpu"][i]):
            errors.append(f"report {path}: budget row {key}: tokens/s/GPU "
                          f"{r['output tokens/s/GPU'][1]}, file "
                          f"{cols['tokens_per_s_per_gpu'][i]}")
    if got != best:
        errors.append(f"report {path}: best point per (entry, GPUs, ITL budget) {got}, "
                      f"expected {best}")
    pngs = [s for s in page.images if s.startswith("data:image/png;base64,")]
    if len(pngs) != 1 or len(page.images) != 1:
        errors.append(f"report {path}: {len(page.images)} images, expected the one latency "
                      "figure")
    for src in pngs:
        check_png(base64.b64decode(src.split(",", 1)[1], validate=True),
                  f"report {path} figure", errors)


def check_training(tool, path, out, errors):
    """A training file: latency exits 2 with one line naming the file, before any output
    (also with --png and --csv); report has no latency section."""
    for extra in ([], ["--csv", "--png", os.path.join(out, "train-latency.png")]):
        proc = run([sys.executable, tool, "latency", path, *extra], errors, expect=2)
        lines = proc.stderr.strip().splitlines()
        if (len(lines) != 1 or path not in lines[0] or "no serving rows" not in lines[0]
                or proc.stdout):
            errors.append(f"latency {path} {' '.join(extra)}: stderr {proc.stderr!r}, stdout "
                          f"{proc.stdout[:80]!r}; expected one line naming the file and "
                          "'no serving rows'")
    if os.path.exists(os.path.join(out, "train-latency.png")):
        errors.append("latency on a training file wrote its --png")
    page_path = os.path.join(out, "train-report.html")
    run([sys.executable, tool, "report", path, "-o", page_path], errors)
    if os.path.isfile(page_path):
        html = open(page_path, encoding="utf-8").read()
        if 'id="latency"' in html or 'id="table-top"' not in html:
            errors.append(f"report {path} (training): a latency section, or no top table")


def main(analysis, out, training, *serving):
    os.makedirs(out, exist_ok=True)
    tool = os.path.join(analysis, "rapid-analyze")
    errors = []
    for path in serving:
        cols, names, mode = read_file(path)
        if mode != "inference":
            errors.append(f"{path}: root attribute mode {mode!r}, expected inference")
            continue
        check_csv(tool, path, cols, names, errors)
        check_text(tool, path, cols, names, out, errors)
        check_report(tool, path, cols, names, mode, out, errors)
        figures = os.path.join(out, "figures")
        proc = run([sys.executable, tool, "latency", path, "--out", figures,
                    "--gpus", str(int(cols["num_gpus"][0]))], errors)
        stem = os.path.splitext(os.path.basename(path))[0]
        check_png(os.path.join(figures, f"{stem}-latency.png"), f"latency --out {figures}",
                  errors)
        if f"({int(cols['num_gpus'][0])} GPUs)" not in proc.stdout.splitlines()[0]:
            errors.append(f"latency --gpus: title {proc.stdout.splitlines()[:1]}")
        for budgets in ("0", "a,b"):
            proc = run([sys.executable, tool, "latency", path, "--itl-budgets", budgets],
                       errors, expect=2)
            if "--itl-budgets" not in proc.stderr or proc.stdout:
                errors.append(f"latency --itl-budgets {budgets}: {proc.stderr!r}")
    check_training(tool, training, out, errors)
    for e in errors:
        print("FAIL:", e)
    if not errors:
        print(f"rapid-analyze latency: {len(serving)} serving files match their tables, "
              "budgets and figures; a training file exits 2")
    return 1 if errors else 0


if __name__ == "__main__":
    if len(sys.argv) < 5:
        sys.exit(__doc__)
    sys.exit(main(*sys.argv[1:]))
