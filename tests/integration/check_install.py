#!/usr/bin/python3
"""Installs the build to a fresh prefix (`cmake --install BUILD --prefix PREFIX`) and runs
the installed programs the way the README says, from another directory, with no
RAPID_CONFIG_DIR and no configs/ beside the job: the sweep must find the installed configs
(<prefix>/share/rapid-sweep/configs, from the program's own path), also after the prefix is
moved elsewhere.

    check_install.py CMAKE BUILD_DIR PREFIX JOB.yaml
"""
import glob
import os
import re
import shutil
import subprocess
import sys
import tempfile

import h5py


def run(cmd, cwd, env):
    print("running:", " ".join(cmd), f"(in {cwd})", flush=True)
    proc = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True, timeout=300)
    sys.stdout.write(proc.stdout)
    sys.stderr.write(proc.stderr)
    return proc


def sweep_from_elsewhere(prefix, job, env, errors):
    """The README's command from a directory with nothing but the job: exit 0, the configs
    read from the installed share directory."""
    work = tempfile.mkdtemp(prefix="rapid-install-run-")
    try:
        local_job = os.path.join(work, "job.yaml")
        shutil.copy(job, local_job)
        out = os.path.join(work, "out.h5")
        proc = run([os.path.join(prefix, "bin", "rapid-sweep"), "job.yaml", "-o", "out.h5",
                    "--threads", "1", "--quiet"], work, env)
        if proc.returncode != 0 or not os.path.isfile(out):
            errors.append(f"installed rapid-sweep in {work}: exit {proc.returncode}")
            return
        configs = os.path.join(prefix, "share", "rapid-sweep", "configs") + os.sep
        with h5py.File(out, "r") as f:
            for key in ("model_path", "network_path"):
                if not str(f.attrs[key]).startswith(configs):
                    errors.append(f"{key} {f.attrs[key]!r} is not under {configs}")
            if int(f.attrs["num_points"]) != 14:  # the job's hand count
                errors.append(f"num_points {f.attrs['num_points']}, expected 14")
        report = os.path.join(prefix, "share", "rapid-sweep", "analysis", "report.py")
        proc = run([sys.executable, report, "out.h5"], work, env)
        if proc.returncode != 0:
            errors.append(f"installed analysis/report.py: exit {proc.returncode}")
        # rapid-analyze from the prefix's bin (a relative link into share/.../analysis).
        proc = run([os.path.join(prefix, "bin", "rapid-analyze"), "top", "out.h5"], work, env)
        if proc.returncode != 0 or "Best layouts" not in proc.stdout:
            errors.append(f"installed bin/rapid-analyze top: exit {proc.returncode}")
    finally:
        shutil.rmtree(work, ignore_errors=True)


def without_source(prefix, env, errors):
    """What an installed, moved prefix does on its own (issue 34 part 3): `rapid validate`
    reads the installed reference tables; `import rapid` (PYTHONPATH at the prefix's
    dist-packages) predicts the shipped demo job's baseline with the step time `rapid
    predict` prints (4 decimals)."""
    env = {k: v for k, v in env.items() if k not in ("RAPID_REFERENCE_DIR", "PYTHONPATH")}
    work = tempfile.mkdtemp(prefix="rapid-install-nosrc-")
    try:
        rapid = os.path.join(prefix, "bin", "rapid")
        if not os.path.isfile(rapid):
            return
        proc = run([rapid, "validate", "--max-rows", "1"], work, env)
        reference = os.path.join(prefix, "share", "rapid-sweep", "reference")
        if proc.returncode != 0 or "overall MAPE" not in proc.stdout:
            errors.append(f"installed rapid validate: exit {proc.returncode}")
        if not os.path.isfile(os.path.join(reference, "README.md")):
            errors.append(f"{reference}/README.md not installed")
        job = os.path.join(prefix, "share", "rapid-sweep", "jobs", "llama3-70b-256xh100.yaml")
        proc = run([rapid, "predict", job], work, env)
        m = re.search(r"^step time\s+([0-9.]+) s", proc.stdout, re.M)
        sites = glob.glob(os.path.join(prefix, "lib", "python3*", "dist-packages"))
        if not sites:
            return  # built without pybind11: no Python module to check
        code = ("import rapid, sys; r = rapid.predict(sys.argv[1]); "
                "print(f\"{r['step_time_s']:.4f}\"); print(rapid.__file__)")
        py = run(["/usr/bin/python3", "-c", code, job], work, dict(env, PYTHONPATH=sites[0]))
        lines = py.stdout.split()
        if py.returncode != 0 or not m or len(lines) < 2 or lines[0] != m.group(1):
            errors.append(f"import rapid from the moved prefix: exit {py.returncode}, "
                          f"{lines[:1]} against rapid predict's {m.group(1) if m else None}")
        elif not lines[1].startswith(prefix):
            errors.append(f"import rapid took {lines[1]}, not the prefix's")
    finally:
        shutil.rmtree(work, ignore_errors=True)


def main(cmake, build, prefix, job):
    errors = []
    moved = prefix + "-moved"
    for p in (prefix, moved):
        shutil.rmtree(p, ignore_errors=True)
    env = {k: v for k, v in os.environ.items() if k != "RAPID_CONFIG_DIR"}
    proc = run([cmake, "--install", build, "--prefix", prefix], build, env)
    if proc.returncode != 0:
        print(f"FAIL: cmake --install exited {proc.returncode}")
        return 1
    share = os.path.join(prefix, "share", "rapid-sweep")
    for rel in ("bin/rapid-sweep", "share/rapid-sweep/configs/models/llama3-8b.yaml",
                "share/rapid-sweep/jobs/llama3-70b-256xh100.yaml",
                "share/rapid-sweep/analysis/rapid_results.py",
                "share/doc/rapid-sweep/README.md"):
        if not os.path.isfile(os.path.join(prefix, rel)):
            errors.append(f"{rel} not installed")
    if not os.access(os.path.join(share, "analysis", "report.py"), os.X_OK):
        errors.append("analysis/report.py installed without its executable bit")
    sweep_from_elsewhere(prefix, job, env, errors)
    rapid = os.path.join(prefix, "bin", "rapid")
    if os.path.isfile(rapid):
        # A shipped job, installed: its configs are found as <job dir>/../configs.
        proc = run([rapid, "predict", os.path.join(share, "jobs", "llama3-70b-256xh100.yaml")],
                   tempfile.gettempdir(), env)
        if proc.returncode != 0:
            errors.append(f"installed rapid predict on an installed job: exit {proc.returncode}")
    # Relocatable: the same install moved elsewhere still finds its configs.
    os.rename(prefix, moved)
    sweep_from_elsewhere(moved, job, env, errors)
    without_source(moved, env, errors)
    shutil.rmtree(moved, ignore_errors=True)
    for e in errors:
        print("FAIL:", e)
    if not errors:
        print(f"installed to {prefix}, swept from another directory, moved to {moved}, swept "
              "again: configs found in the installed share directory each time")
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:5]))
