#!/usr/bin/python3
"""`import rapid` from the build tree (docs/python.md): predict gives the step time
`rapid predict` prints for the same layout (4 decimals), with every result column; evaluate
gives a DataFrame row per layout, the same figures as predict; sweep the tiny job's 14
points (its hand count, tests/integration/jobs/llama3-8b-8gpu-tiny.yaml), the same as the
file rapid-sweep writes for it (rapid.load); bad input raises rapid.InputError naming the
key with a suggestion.

    check_python_api.py BUILD_PYTHON_DIR RAPID DEMO_JOB TINY_JOB SWEEP_RESULT.h5
"""
import math
import re
import subprocess
import sys


def main():
    pydir, rapid_bin, demo, tiny, result = sys.argv[1:6]
    sys.path.insert(0, pydir)
    import rapid
    errors = []
    out = subprocess.run([rapid_bin, "predict", demo, "--tp", "4", "--pp", "8"],
                         capture_output=True, text=True, timeout=120).stdout
    want = float(re.search(r"^step time\s+([0-9.]+) s", out, re.M).group(1))
    row = rapid.predict(demo, tp=4, pp=8)
    if f"{row['step_time_s']:.4f}" != f"{want:.4f}":
        errors.append(f"predict {row['step_time_s']} against rapid predict's {want}")
    names = [c[0] for c in rapid.columns()]
    missing = [n for n in names if n not in row]
    if missing:
        errors.append(f"predict lacks columns {missing[:5]}")
    if row["status"] != "ok" or "tp4 pp8" not in row["layout"]:
        errors.append(f"predict status {row['status']}, layout {row['layout']}")
    df = rapid.evaluate(demo, [dict(tp=4, pp=8), dict(tp=8, pp=4, recompute="full")])
    if len(df) != 2 or not math.isclose(df.step_time_s[0], row["step_time_s"], rel_tol=1e-12):
        errors.append(f"evaluate: {len(df)} rows, first {df.step_time_s[0]}")
    sw = rapid.sweep(tiny)
    if len(sw) != 14:
        errors.append(f"sweep of the tiny job: {len(sw)} rows, expected 14")
    stored = rapid.load(result)
    ok = stored[stored.status == "ok"].step_time_s.sort_values().to_numpy()
    mine = sw[sw.status == "ok"].step_time_s.sort_values().to_numpy()
    if len(ok) != len(mine) or any(not math.isclose(a, b, rel_tol=1e-12) for a, b in zip(ok, mine)):
        errors.append(f"sweep's ok step times differ from rapid-sweep's file: {mine} vs {ok}")
    for kwargs, key in ((dict(tpp=2), "did you mean tp"), (dict(sp="yes"), "True or False")):
        try:
            rapid.predict(demo, **kwargs)
            errors.append(f"{kwargs}: no error")
        except rapid.InputError as e:
            if key not in str(e):
                errors.append(f"{kwargs}: '{key}' not in {e}")
    for e in errors:
        print(e)
    print(f"{len(errors)} problems")
    sys.exit(1 if errors else 0)


if __name__ == "__main__":
    main()
