#!/usr/bin/python3
"""Checks the prediction-interval columns of a rapid-sweep file (docs/validation.md
"Prediction intervals") against the rule applied here, independently, to the residuals the
file carries (root attribute intervals_yaml):

- q = the ceil((n + 1) c)-th smallest |r| of the pooled residuals of the row's fidelity
  (analytical or des; c = interval_coverage), or of its GPU type x stack family's when that
  family has min_family_rows rows of min_family_tables tables; serving: never below the
  training q;
- an extrapolated entry's q is the widest such q times the transfer penalty: the conformal
  |r| quantile of the moved residuals (other_gpu or other_stack) over that of the same
  rows' own;
- every ok row: step_time_lo_s = step_time_s e^-q, step_time_hi_s = step_time_s e^q,
  tokens_per_s and mfu the inverse, serving rows also ttft, itl and e2e; the extrapolated
  column 1 on every row of an extrapolated entry; rows not ok: NaN.

    check_intervals.py OUT.h5 H=KIND ...   (KIND: covered, gpu, stack or both: how hardware
                                            entry H is covered; both: the larger penalty)
"""
import math
import sys

import h5py
import numpy as np
import yaml


def conformal(values, c):
    v = sorted(abs(x) for x in values if x is not None and math.isfinite(x))
    if not v:
        return math.nan
    k = min(len(v), max(1, math.ceil((len(v) + 1) * c - 1e-9)))
    return v[k - 1]


def rows_of(spec, key):
    out = []
    for table in spec.get(key) or []:
        for r in table["rows"]:
            out.append(dict(r, table=table["table"], hardware=table["hardware"]))
    return out


def family(stack):
    return stack.split("-")[0]


def penalty(spec, other):
    pairs = [(r["analytical"], r[other]) for r in rows_of(spec, "training")
             if "analytical" in r and other in r]
    own = conformal([a for a, _ in pairs], spec["coverage"])
    moved = conformal([m for _, m in pairs], spec["coverage"])
    return max(1.0, moved / own) if own > 0 else 1.0


def expected_q(spec, rows, gpu, stack, fidelity, kind, floor):
    """The rule for one entry: the family's or the pooled q (covered), or the widest q
    widened (extrapolated)."""
    c = spec["coverage"]
    groups = {}
    for r in rows:
        groups.setdefault((r["hardware"], family(r["stack"])), []).append(r)

    def q_of(rs):
        return max(conformal([r.get(fidelity) for r in rs], c), floor)

    def enough(rs):
        return (len(rs) >= spec.get("min_family_rows", 10)
                and len({r["table"] for r in rs}) >= spec.get("min_family_tables", 3))

    if kind == "covered":
        own = groups.get((gpu, family(stack)), [])
        return q_of(own) if enough(own) else q_of(rows)
    widest = max([q_of(rows)] + [q_of(g) for g in groups.values() if enough(g)])
    k = {"gpu": penalty(spec, "other_gpu"), "stack": penalty(spec, "other_stack"),
         "both": max(penalty(spec, "other_gpu"), penalty(spec, "other_stack"))}[kind]
    return k * widest


def close(a, b):
    return np.allclose(a, b, rtol=1e-9, atol=0, equal_nan=True)


def main(argv):
    path, kinds = argv[0], dict(a.split("=") for a in argv[1:])
    errors = []
    with h5py.File(path, "r") as f:
        spec = yaml.safe_load(f.attrs["intervals_yaml"])
        c = float(f.attrs["interval_coverage"])
        if c != spec["coverage"]:
            errors.append(f"interval_coverage {c}, the file's coverage {spec['coverage']}")
        serving = str(f.attrs.get("mode", "training")) == "inference"
        job = yaml.safe_load(f.attrs["job_yaml"])
        stack = (job["serving"]["stack"] if serving
                 else (job.get("training") or {}).get("framework", "megatron-core-0.8"))
        names = list(f["hardware/names"].asstr()[()])
        p = f["points"]
        ok = p["status"][()] == 0
        hw, fid = p["hardware_index"][()], p["fidelity"][()]
        rows = rows_of(spec, "serving" if serving else "training")
        training = rows_of(spec, "training")
        checked = 0
        for h, name in enumerate(names):
            kind = kinds.get(str(h))
            if kind is None:
                errors.append(f"no expected coverage given for hardware entry {h} ({name})")
                continue
            want_flag = 0 if kind == "covered" else 1
            if np.any(p["extrapolated"][()][hw == h] != want_flag):
                errors.append(f"{name}: extrapolated is not {want_flag} on every row")
            for f_index, fidelity in ((0, "analytical"), (1, "des")):
                sel = ok & (hw == h) & (fid == f_index)
                if not np.any(sel):
                    continue
                floor = conformal([r.get(fidelity) for r in training], c) if serving else 0
                q = expected_q(spec, rows, name, stack, fidelity, kind, floor)
                up, down = math.exp(q), math.exp(-q)
                pairs = [("step_time_s", "step_time_lo_s", "step_time_hi_s", down, up),
                         ("tokens_per_s", "tokens_per_s_lo", "tokens_per_s_hi", down, up),
                         ("mfu", "mfu_lo", "mfu_hi", down, up)]
                if serving:
                    pairs += [(x, f"{x[:-2]}_lo_s", f"{x[:-2]}_hi_s", down, up)
                              for x in ("ttft_s", "itl_s", "e2e_latency_s")]
                # A symmetric q: a rate's interval [x e^-q, x e^q] has a time's factors.
                for value, lo, hi, a, b in pairs:
                    v = p[value][()][sel]
                    if not (close(p[lo][()][sel], v * a) and close(p[hi][()][sel], v * b)):
                        errors.append(f"{name} {fidelity}: {lo}, {hi} are not {value} x "
                                      f"e^-{q:.5f}, e^{q:.5f}")
                checked += int(np.sum(sel))
        for col in ("step_time_lo_s", "step_time_hi_s", "tokens_per_s_lo", "mfu_hi"):
            if np.any(np.isfinite(p[col][()][~ok])):
                errors.append(f"{col} finite on rows that are not ok")
        if not serving and np.any(np.isfinite(p["ttft_lo_s"][()])):
            errors.append("ttft_lo_s finite on a training file")
        print(f"checked {path}: intervals of {checked} ok rows")
    for e in errors:
        print("FAIL:", e)
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
