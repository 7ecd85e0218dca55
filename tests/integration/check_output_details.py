#!/usr/bin/python3
"""Output details of issue 34, on real sweeps under mpirun:
 - progress (item 7): a sweep whose stderr is a pipe (mpirun's) prints progress lines, each
   ending in a newline, none with a carriage return, the last at 100%;
 - --keep top-3 (item 3): the file holds the best 3 of each group and the job's baseline
   row besides (root attribute baseline_kept_extra 1); `rapid-analyze top --csv` gives every
   row a speedup, tokens/s/GPU / the baseline's read with h5py, and does not rank the
   baseline;
 - the netCDF layout (item 5): root attribute Conventions = CF-1.8; every /dropped dataset
   has its dimension scale attached (status_code, step_time_edge, step_time_bin), with
   units; netCDF-C (python3-netcdf4) and ncdump -h, where installed, name those
   dimensions and no phony one;
 - figures (items 1, 2): every figure subcommand writes the format its --png extension
   names (.svg starts with <?xml or <svg, .pdf with %PDF, .png with the PNG signature) or
   --format's (--out DIR --format svg); a conflicting --format or an extension that names
   no format exits 2 with one line; --dpi 55 halves a PNG's width in pixels against
   --dpi 110 (bbox_inches="tight": within 3%);
 - report sections (item 4): on a single-hardware file with 15 scenarios
   (jobs/llama3-70b-thermal.yaml, one layout) no variants or roofline section but a
   "left out" one naming them, and a scenarios section with one row per scenario; on a
   single-hardware file with one scenario no scenarios section.

    check_output_details.py MPIRUN RAPID_SWEEP ANALYSIS_DIR JOB THERMAL_JOB TINY_JOB OUT_DIR
"""
import os
import re
import shutil
import struct
import subprocess
import sys

import h5py
import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from check_common import close, run  # noqa: E402

PNG = b"\x89PNG\r\n\x1a\n"
MAGIC = {"png": (PNG,), "svg": (b"<?xml", b"<svg"), "pdf": (b"%PDF",)}
FIGURES = ["variants", "roofline", "heatmap", "pareto", "breakdown"]


def sweep(mpirun, exe, job, out, *extra):
    return [mpirun, "-n", "2", "--oversubscribe", exe, job, "-o", out, "--overwrite",
            "--threads", "1", *extra]


def check_progress(stderr, errors):
    lines = re.findall(r"rapid-sweep: (\d+)/(\d+) points \(([\d.]+)%\)[^\n]*\n", stderr)
    if not lines:
        errors.append(f"progress: no progress line on stderr (a pipe): {stderr[-300:]!r}")
        return
    if "\r" in stderr or "\x1b" in stderr:
        errors.append("progress: a carriage return or escape sequence on a pipe")
    done, total, pct = lines[-1]
    if done != total or pct != "100.0":
        errors.append(f"progress: last line at {done}/{total} ({pct}%), expected 100%")


def check_keep(path, analysis, errors):
    with h5py.File(path, "r") as f:
        base = int(f.attrs["baseline_index"])
        extra = int(f.attrs["baseline_kept_extra"])
        points = f["points/point"][()]
        tps = f["points/tokens_per_s_per_gpu"][()]
        status = f["points/status"][()]
        groups = np.stack([f["points/num_gpus"][()], f["points/hardware_index"][()]], 1)
    if base < 0 or base not in points:
        errors.append(f"keep top-3: baseline point {base} not in /points/point")
        return
    row = int(np.flatnonzero(points == base)[0])
    # The job's baseline (tp2 pp2, full recompute, on the base hardware) is not among the
    # 3 fastest of its group in this job (check_result_file.py's BASELINE): kept besides.
    per_group = {}
    for g in map(tuple, groups):
        per_group[g] = per_group.get(g, 0) + 1
    if extra != 1:
        errors.append(f"keep top-3: baseline_kept_extra {extra}, expected 1")
    if per_group.get(tuple(groups[row])) != 4 or any(
            n != 3 for g, n in per_group.items() if g != tuple(groups[row])):
        errors.append(f"keep top-3: rows per group {per_group}, expected 3 (4 in the "
                      "baseline's)")
    if status[row] != 0:
        errors.append("keep top-3: the baseline row is not ok (the test job's fits)")
        return
    tool = os.path.join(analysis, "rapid-analyze")
    proc = run([sys.executable, tool, "top", path, "--csv", "--top", "5"], errors)
    if proc.returncode != 0:
        return
    import io
    import pandas as pd
    table = pd.read_csv(io.StringIO(proc.stdout))
    speed = table["speedup vs baseline (x)"]
    if table.empty or speed.isna().any():
        errors.append(f"top on a --keep top-3 file: a speedup is missing:\n{proc.stdout}")
    for _, r in table.iterrows():
        i = int(np.flatnonzero(points == int(r["point"]))[0])
        if not close(float(r["speedup vs baseline (x)"]), tps[i] / tps[row], 1e-9):
            errors.append(f"top: point {r['point']} speedup {r['speedup vs baseline (x)']}, "
                          f"expected {tps[i] / tps[row]}")
    if base in set(table["point"]) or (table["rank"] > 3).any():
        errors.append("top ranked the baseline kept besides the best 3")


def check_netcdf(path, errors):
    with h5py.File(path, "r") as f:
        if f.attrs.get("Conventions") != "CF-1.8":
            errors.append(f"Conventions {f.attrs.get('Conventions')!r}, expected 'CF-1.8'")
        expect = {"status_counts": "status_code", "status_names": "status_code",
                  "step_time_edges_s": "step_time_edge", "step_time_counts": "step_time_bin"}
        for name, dim in expect.items():
            ds = f["dropped"][name]
            scales = [s.name for s in ds.dims[0].values()] if "DIMENSION_LIST" in ds.attrs \
                else []
            if scales != [f"/dropped/{dim}"]:
                errors.append(f"/dropped/{name}: dimension scales {scales}, expected "
                              f"/dropped/{dim}")
            if len(f["dropped"][dim]) != len(ds):
                errors.append(f"/dropped/{dim}: length differs from {name}'s")
        units = {k: f["dropped"][k].attrs.get("units") for k in
                 ("status_counts", "step_time_edges_s", "step_time_counts")}
        if units != {"status_counts": "1", "step_time_edges_s": "s", "step_time_counts": "1"}:
            errors.append(f"/dropped units {units}")
        names = list(f["dropped/status_names"].asstr()[()])
        if names[:2] != ["ok", "oom"] or len(names) != len(f["dropped/status_counts"]):
            errors.append(f"/dropped/status_names {names}")
    try:  # netCDF-C, the library ncdump is built on (python3-netcdf4)
        import netCDF4
    except ImportError:
        netCDF4 = None
    if netCDF4 is not None:
        with netCDF4.Dataset(path) as d:
            dims = {k: v.dimensions for k, v in d["dropped"].variables.items()}
            if set(d["dropped"].dimensions) != {"status_code", "step_time_bin",
                                                "step_time_edge"}:
                errors.append(f"netCDF-C: /dropped dimensions {dims}")
            if getattr(d, "Conventions", None) != "CF-1.8":
                errors.append("netCDF-C: no Conventions CF-1.8")
    if shutil.which("ncdump"):
        head = subprocess.run(["ncdump", "-h", path], capture_output=True, text=True).stdout
        if "phony_dim" in head or "status_code = 7" not in head:
            errors.append(f"ncdump -h: phony dimensions or no status_code:\n{head[-800:]}")


def png_width(data):
    return struct.unpack(">I", data[16:20])[0]  # IHDR's width (PNG spec, section 11.2.2)


def check_figures(path, analysis, out, errors):
    tool = os.path.join(analysis, "rapid-analyze")
    for sub in FIGURES:
        for fmt in ("svg", "pdf", "png"):
            fig = os.path.join(out, f"{sub}.{fmt}")
            proc = run([sys.executable, tool, sub, path, "--png", fig], errors)
            if proc.returncode == 0:
                data = open(fig, "rb").read(8) if os.path.isfile(fig) else b""
                if not data.startswith(MAGIC[fmt]):
                    errors.append(f"{sub} --png {fig}: starts with {data!r}, not {fmt}")
    figures = os.path.join(out, "svg-out")
    run([sys.executable, tool, "heatmap", path, "--out", figures, "--format", "svg"], errors)
    stem = os.path.splitext(os.path.basename(path))[0]
    svg = os.path.join(figures, f"{stem}-heatmap.svg")
    if not os.path.isfile(svg) or not open(svg, "rb").read(5) in (b"<?xml", b"<svg "):
        errors.append(f"heatmap --out {figures} --format svg: no SVG at {svg}")
    for argv, words in (
            (["--png", os.path.join(out, "x.svg"), "--format", "pdf"], ["--format pdf", ".svg"]),
            (["--png", os.path.join(out, "x.jpg")], ["x.jpg", ".png, .svg, .pdf"]),
            (["--dpi", "5", "--png", os.path.join(out, "x.png")], ["--dpi", "10 to 1200"])):
        proc = run([sys.executable, tool, "heatmap", path, *argv], errors, expect=2)
        lines = proc.stderr.strip().splitlines()
        if proc.stdout or len(lines) != 1 or not all(w in lines[0] for w in words):
            errors.append(f"heatmap {' '.join(argv)}: expected one line naming {words}, got "
                          f"{proc.stderr!r} (stdout {proc.stdout[:80]!r})")
    widths = {}
    for dpi in (55, 110):
        fig = os.path.join(out, f"dpi{dpi}.png")
        run([sys.executable, tool, "heatmap", path, "--png", fig, "--dpi", str(dpi)], errors)
        if os.path.isfile(fig):
            widths[dpi] = png_width(open(fig, "rb").read(24))
    if len(widths) == 2 and not close(widths[55] / widths[110], 0.5, 0.03):
        errors.append(f"--dpi 55 vs 110: widths {widths}, expected half")


def check_report(path, analysis, out, scenarios, errors):
    """The report of a single-hardware file: no variants/roofline section, a left-out one;
    `scenarios` names every scenario the scenario section must list (none: no section)."""
    tool = os.path.join(analysis, "rapid-analyze")
    page = os.path.join(out, os.path.basename(path).replace(".h5", ".html"))
    proc = run([sys.executable, tool, "report", path, "-o", page], errors)
    if proc.returncode != 0:
        return
    html = open(page, encoding="utf-8").read()
    for key in ("variants", "roofline"):
        if f'<section id="{key}">' in html:
            errors.append(f"report {path}: a {key} section on a single-hardware file")
        if not re.search(rf'<p class="note">{key}: the file has one hardware entry', html):
            errors.append(f"report {path}: the left-out section does not name {key}")
    has = '<section id="scenarios">' in html
    if not scenarios and has:
        errors.append(f"report {path}: a scenarios section in a one-scenario file")
    if scenarios:
        if not has:
            errors.append(f"report {path}: no scenarios section")
            return
        part = html.split('<section id="scenarios">', 1)[1].split("</section>", 1)[0]
        rows = re.findall(r"<tr[^>]*><td>([^<]*)</td>", part.split("<tbody>", 1)[-1])
        if rows != scenarios:
            errors.append(f"report {path}: scenario rows {rows}, expected {scenarios}")


def main(mpirun, exe, analysis, job, thermal_job, tiny_job, out):
    errors = []
    os.makedirs(out, exist_ok=True)
    top3 = os.path.join(out, "top3.h5")
    proc = run(sweep(mpirun, exe, job, top3, "--keep", "top-3", "--progress-interval",
                     "0.01"), errors)
    check_progress(proc.stderr, errors)
    if os.path.isfile(top3):
        check_keep(top3, analysis, errors)
        check_netcdf(top3, errors)
    full = os.path.join(out, "all.h5")
    run(sweep(mpirun, exe, job, full, "--quiet"), errors)
    if os.path.isfile(full):
        check_figures(full, analysis, out, errors)
    thermal = os.path.join(out, "thermal.h5")
    run(sweep(mpirun, exe, thermal_job, thermal, "--quiet"), errors)
    if os.path.isfile(thermal):
        with h5py.File(thermal, "r") as f:
            names = list(f["scenarios/names"].asstr()[()])
        check_report(thermal, analysis, out, names, errors)
    tiny = os.path.join(out, "tiny.h5")
    run(sweep(mpirun, exe, tiny_job, tiny, "--quiet"), errors)
    if os.path.isfile(tiny):
        check_report(tiny, analysis, out, [], errors)
    if errors:
        print("\n".join("FAIL: " + e for e in errors))
        return 1
    print("output details: progress, --keep top-3 baseline, CF layout, figure formats, "
          "report sections: ok")
    return 0


if __name__ == "__main__":
    if len(sys.argv) != 8:
        print(__doc__, file=sys.stderr)
        sys.exit(2)
    sys.exit(main(*sys.argv[1:]))
