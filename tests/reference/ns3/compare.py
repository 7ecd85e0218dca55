#!/usr/bin/python3
"""Our flow network against the ns-3 packet-level reference (docs/ns3.md).

For each workload of issue 15 part 3, runs `rapid netcheck` (the flows, the routes and our
completion times) and the ns-3 harness on the same files, and prints the per-collective and
per-flow completion-time error with each side's run time.

  compare.py --rapid BUILD/rapid --harness BUILD/tests/reference/ns3/ns3-harness \
             [--only NAME ...] [--bound 8] [--mean-bound 5] [--markdown FILE] [--work DIR]

Exit 0 when every collective agrees within --bound percent and their mean within
--mean-bound; 1 when not; 2 on bad input; 77 (skipped) when --harness is empty, i.e.
ns-3 was not found at configure time. Errors are (ours - ns3) / ns3.
"""
import argparse
import os
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, "..", "..", ".."))
NETWORK = os.path.join(HERE, "fat-tree.yaml")
HARDWARE = os.path.join(ROOT, "configs", "hardware", "h100-sxm5-80gb.yaml")
MB = 1 << 20
GB = 1 << 30

# Issue 15 part 3. (name, workload, ranks, bytes): ring all-reduce of 8, 64 and 256 GPUs at
# 1 MB, 64 MB and 1 GB; the tree at 64 GPUs (a size where NCCL's tuning picks it); two DP
# rings of 8 nodes on one uplink per leaf; a 64-GPU all-to-all (MoE dispatch); an 8-stage
# pipeline chain; incast 16 -> 1; a ring of 8 nodes with one NIC at half rate.
WORKLOADS = [
    (f"ring-{n}-{label}", "ring", n, b)
    for n in (8, 64, 256)
    for label, b in (("1MB", MB), ("64MB", 64 * MB), ("1GB", GB))
] + [
    ("tree-64-1MB", "tree", 64, MB),
    ("two-rings-16-64MB", "two-rings", 16, 64 * MB),
    ("alltoall-64-64MB", "alltoall", 64, 64 * MB),
    ("pipeline-8-16MB", "pipeline", 8, 16 * MB),
    ("incast-16-4MB", "incast", 17, 4 * MB),
    ("degraded-8-64MB", "degraded", 8, 64 * MB),
]


def read_finish(path):
    with open(path) as f:
        lines = f.read().split()
    if not lines or lines[0] != "flow,finish_s":
        raise SystemExit(f"compare.py: {path}: header '{lines[0] if lines else ''}': "
                         "expected flow,finish_s")
    return [float(x.split(",")[1]) for x in lines[1:]]


def read_collectives(flows_csv):
    with open(flows_csv) as f:
        rows = f.read().split("\n")[1:]
    return [int(r.split(",")[6]) for r in rows if r]


def run(cmd, log=None):
    """Runs cmd; returns its stdout and wall time. With log, its stderr goes to that file as it
    is written (the harness's --progress lines can be followed there)."""
    t = time.monotonic()
    if log:
        with open(log, "w") as err:
            p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=err, text=True)
        with open(log) as err:
            p.stderr = err.read()
    else:
        p = subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode != 0:
        raise SystemExit(f"compare.py: {' '.join(cmd)} exited {p.returncode}:\n{p.stderr}")
    return p.stdout, time.monotonic() - t


def compare(args, name, workload, ranks, nbytes, work):
    d = os.path.join(work, name)
    os.makedirs(d, exist_ok=True)
    cmd = [args.rapid, "netcheck", "--workload", workload, "--ranks", str(ranks), "--bytes",
           str(nbytes), "--network", args.network, "--hardware", args.hardware, "-o", d]
    out, _ = run(cmd + args.netcheck_arg)
    names = [ln.split(",")[1] for ln in out.splitlines() if ln.startswith("collective,")]
    ours_s = float([ln for ln in out.splitlines() if ln.startswith("wall_s,")][0].split(",")[1])
    hout, ns3_wall = run([args.harness, os.path.join(d, "topology.csv"),
                          os.path.join(d, "flows.csv"), os.path.join(d, "ns3.csv")] +
                         args.harness_arg, log=os.path.join(d, "ns3-harness.log"))
    stats = dict(ln.split(",", 1) for ln in hout.splitlines() if "," in ln)
    ours = read_finish(os.path.join(d, "ours.csv"))
    ref = read_finish(os.path.join(d, "ns3.csv"))
    coll = read_collectives(os.path.join(d, "flows.csv"))
    flow_err = [(o - r) / r for o, r in zip(ours, ref) if r > 0]
    rows = []
    for k, cname in enumerate(names):
        o = max(t for t, c in zip(ours, coll) if c == k)
        r = max(t for t, c in zip(ref, coll) if c == k)
        rows.append(dict(case=name, collective=cname, ours=o, ns3=r, err=(o - r) / r,
                         flows=len(ours), flow_mean=sum(abs(e) for e in flow_err) / len(flow_err),
                         flow_max=max(flow_err, key=abs), ours_wall=ours_s, ns3_wall=ns3_wall,
                         marked=int(stats.get("marked", 0)), dropped=int(stats.get("dropped", 0)),
                         timeouts=int(stats.get("timeouts", 0))))
    return rows


def fmt_t(s):
    return f"{s * 1e3:.4g} ms" if s >= 1e-3 else f"{s * 1e6:.4g} us"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--rapid", required=True)
    ap.add_argument("--harness", required=True)
    ap.add_argument("--network", default=NETWORK)
    ap.add_argument("--hardware", default=HARDWARE)
    ap.add_argument("--only", nargs="*", help="workload names (default: all)")
    ap.add_argument("--bound", type=float, default=8.0)
    ap.add_argument("--mean-bound", type=float, default=5.0)
    ap.add_argument("--markdown", help="also write the table as Markdown to this file")
    ap.add_argument("--work", help="keep each case's files here (default: a temporary dir)")
    ap.add_argument("--netcheck-arg", action="append", default=[],
                    help="extra argument for rapid netcheck (repeat)")
    ap.add_argument("--harness-arg", action="append", default=[],
                    help="extra argument for the harness (repeat)")
    args = ap.parse_args()
    known = {w[0]: w for w in WORKLOADS}
    for n in args.only or []:
        if n not in known:
            print(f"compare.py: --only '{n}': expected one of {', '.join(known)}",
                  file=sys.stderr)
            return 2
    if not args.harness:
        print("compare.py: skipped: the ns-3 harness was not built (libns3-dev not found at "
              "configure time; scripts/install-deps installs it)")
        return 77
    for key in ("rapid", "harness", "network", "hardware"):
        if not os.path.exists(getattr(args, key)):
            print(f"compare.py: --{key} '{getattr(args, key)}': no such file", file=sys.stderr)
            return 2
    chosen = [known[n] for n in args.only] if args.only else WORKLOADS
    work = args.work or tempfile.mkdtemp(prefix="ns3-compare-")
    head = ("| case | collective | flows | ns-3 | ours | error | flow error mean / max | "
            "ns-3 run | ours run |")
    lines = [head, "|" + "---|" * 9]
    errs = []
    print(head)
    for w in chosen:
        for r in compare(args, *w, work):
            errs.append(r["err"])
            ln = (f"| {r['case']} | {r['collective']} | {r['flows']} | {fmt_t(r['ns3'])} | "
                  f"{fmt_t(r['ours'])} | {100 * r['err']:+.2f}% | "
                  f"{100 * r['flow_mean']:.2f}% / {100 * r['flow_max']:+.2f}% | "
                  f"{r['ns3_wall']:.1f} s | {r['ours_wall']:.3f} s |")
            lines.append(ln)
            print(ln, flush=True)
            if r["dropped"]:
                print(f"  note: ns-3 dropped {r['dropped']} packets", flush=True)
            if r["timeouts"]:
                # Lossless buffers leave nothing to time out: a timeout is the reference's
                # own stall, and the row is no measurement (docs/ns3.md "Acknowledgments").
                print(f"  note: ns-3 had {r['timeouts']} retransmission timeouts", flush=True)
    mean = sum(abs(e) for e in errs) / len(errs)
    worst = max(errs, key=abs)
    summary = (f"collectives: {len(errs)}, mean |error| {100 * mean:.2f}%, worst "
               f"{100 * worst:+.2f}% (bounds {args.bound}% each, {args.mean_bound}% mean)")
    print(summary)
    if args.markdown:
        with open(args.markdown, "w") as f:
            f.write("\n".join(lines) + "\n\n" + summary + "\n")
    ok = abs(worst) * 100 <= args.bound and mean * 100 <= args.mean_bound
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
