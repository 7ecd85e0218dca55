#!/usr/bin/python3
"""The DES timeline as a Perfetto user reads it (issue 34 part 2, docs/des.md "Timeline"):
`rapid predict JOB --fidelity des --timeline T.json.gz` on the demo's baseline writes gzip
(magic 1f 8b), a Trace Event Format object with provenance in "otherData", flow events
("s"/"f" pairs of one id, each "s" inside a slice of its track and each "f" followed by a
slice on its track, which is what the viewers bind them to), and utilisation counters
("C") for HBM bandwidth, NVLink and network links, within their physical bounds.

    check_timeline.py RAPID JOB WORKDIR
"""
import bisect
import collections
import gzip
import json
import os
import shutil
import subprocess
import sys


def main():
    rapid, job, work = sys.argv[1:4]
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    path = os.path.join(work, "t.json.gz")
    p = subprocess.run([rapid, "predict", job, "--fidelity", "des", "--timeline", path],
                       capture_output=True, text=True, timeout=300)
    if p.returncode != 0:
        sys.exit(f"rapid predict failed: {p.stderr}")
    errors = []
    with open(path, "rb") as f:
        if f.read(2) != b"\x1f\x8b":
            errors.append(f"{path} is not gzip")
    doc = json.load(gzip.open(path))
    other = doc.get("otherData", {})
    for key in ("producer", "job", "layout", "hardware", "network", "step_time_s"):
        if not other.get(key):
            errors.append(f"otherData lacks {key}: {other}")
    events = doc["traceEvents"]
    slices = collections.defaultdict(list)  # (pid, tid) -> sorted (start, end)
    for e in events:
        if e["ph"] == "X":
            slices[(e["pid"], e["tid"])].append((e["ts"], e["ts"] + e["dur"]))
    for v in slices.values():
        v.sort()
    starts = {k: [s for s, _ in v] for k, v in slices.items()}
    flows = collections.defaultdict(dict)
    for e in events:
        if e["ph"] in ("s", "f"):
            flows[e["id"]][e["ph"]] = e
    if not flows:
        errors.append("no flow events")
    for fid, pair in flows.items():
        if set(pair) != {"s", "f"}:
            errors.append(f"flow {fid} is not an s/f pair: {pair}")
            continue
        s, f = pair["s"], pair["f"]
        key = (s["pid"], s["tid"])
        i = bisect.bisect_right(starts.get(key, []), s["ts"] + 1e-9) - 1
        if i < 0 or slices[key][i][1] + 1e-9 < s["ts"]:
            errors.append(f"flow {fid}: its start at {s['ts']} us is in no slice of {key}")
        key = (f["pid"], f["tid"])
        j = bisect.bisect_left(starts.get(key, []), f["ts"] - 1e-9)
        if j >= len(starts.get(key, [])):
            errors.append(f"flow {fid}: no slice on {key} from {f['ts']} us on")
        if f["ts"] < s["ts"]:
            errors.append(f"flow {fid} ends before it starts")
    counters = collections.defaultdict(list)
    for e in events:
        if e["ph"] == "C":
            counters[e["name"]].extend(e["args"].values())
    # H100 SXM5: 3.35 TB/s HBM (datasheet); utilisation in percent.
    bounds = {"HBM bandwidth (GB/s)": 3350.0, "NVLink utilisation, busiest link (%)": 100.0,
              "network link utilisation, busiest link (%)": 100.0}
    for name, bound in bounds.items():
        v = counters.get(name, [])
        if not v:
            errors.append(f"no '{name}' counter")
        elif min(v) < 0 or max(v) > bound * (1 + 1e-9) or max(v) == 0:
            errors.append(f"'{name}' outside (0, {bound}]: min {min(v)}, max {max(v)}")
    for e in errors:
        print(e)
    print(f"{len(flows)} flows, counters {sorted((k, len(v)) for k, v in counters.items())}, "
          f"{len(errors)} problems")
    sys.exit(1 if errors else 0)


if __name__ == "__main__":
    main()
