#!/usr/bin/python3
"""The trace commands' exit-2 paths on the real binary (docs/chakra.md, docs/bad-input.md):
each case must exit 2 with exactly one stderr line starting "rapid:" that names the file
and node (or the option and value), print nothing on stdout and leave no file behind.

    check_trace_errors.py RAPID JOB WORKDIR

JOB: a training job whose ranks 0-1 make the good trace that the broken ones start from.
"""
import os
import shutil
import subprocess
import sys


def varint(n):
    out = bytearray()
    while True:
        b = n & 0x7F
        n >>= 7
        out.append(b | (0x80 if n else 0))
        if not n:
            return bytes(out)


def field(number, wire, payload):
    """A protobuf field: key varint (number << 3 | wire type), then the payload."""
    return varint(number << 3 | wire) + payload


def message(body):
    """Chakra's file framing: each message prefixed with its length as a varint."""
    return varint(len(body)) + body


def dangling_trace(path):
    """GlobalMetadata (version "0.0.4"), node 0 COMP, node 1 COMP with data_deps [7]
    (et_def.proto: Node 1 id, 2 name, 3 type (COMP_NODE 4), 5 data_deps)."""
    meta = field(1, 2, varint(5) + b"0.0.4")
    n0 = field(1, 0, varint(0)) + field(2, 2, varint(1) + b"a") + field(3, 0, varint(4))
    n1 = (field(1, 0, varint(1)) + field(2, 2, varint(1) + b"b") + field(3, 0, varint(4)) +
          field(5, 2, varint(1) + varint(7)))
    with open(path, "wb") as f:
        f.write(message(meta) + message(n0) + message(n1))


def long_trace(path):
    """One COMP node lasting 1e13 us (Node 7 duration_micros): past the replay's clock."""
    meta = field(1, 2, varint(5) + b"0.0.4")
    n0 = (field(1, 0, varint(0)) + field(2, 2, varint(1) + b"a") + field(3, 0, varint(4)) +
          field(7, 0, varint(10**13)))
    with open(path, "wb") as f:
        f.write(message(meta) + message(n0))


def snapshot(root):
    return sorted(os.path.join(d, f) for d, _, fs in os.walk(root) for f in fs)


MESSAGES = {}


def check(name, cmd, expect, root, errors):
    before = snapshot(root)
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    MESSAGES[name] = p.stderr
    lines = [l for l in p.stderr.splitlines() if l.strip()]
    if p.returncode != 2:
        errors.append(f"{name}: exit {p.returncode}, expected 2: {p.stderr.strip()[-300:]}")
    if len(lines) != 1 or not lines[0].startswith("rapid:"):
        errors.append(f"{name}: expected one 'rapid:' line on stderr, got {lines}")
    for s in expect:
        if s not in p.stderr:
            errors.append(f"{name}: '{s}' not in the message: {p.stderr.strip()}")
    if p.stdout:
        errors.append(f"{name}: partial output on stdout: {p.stdout[:200]!r}")
    if snapshot(root) != before:
        errors.append(f"{name}: files changed: {set(snapshot(root)) ^ set(before)}")


def main():
    rapid, job, work = sys.argv[1:4]
    shutil.rmtree(work, ignore_errors=True)
    good, trunc, dang = (os.path.join(work, d) for d in ("good", "truncated", "dangling"))
    p = subprocess.run([rapid, "trace", job, "-o", good, "--ranks", "0-1"], capture_output=True,
                       text=True, timeout=300)
    if p.returncode != 0:
        sys.exit(f"the good trace failed: {p.stderr}")
    shutil.copytree(good, trunc)
    et = os.path.join(trunc, "rapid.1.et")
    size = os.path.getsize(et)
    with open(et, "r+b") as f:  # cut inside the last node
        f.truncate(size - 3)
    os.makedirs(dang)
    dangling_trace(os.path.join(dang, "rapid.0.et"))
    # Bytes after the last node: ten 0xff (no varint) and a 2^62 length prefix.
    trailing, huge, longd = (os.path.join(work, d) for d in ("trailing", "huge", "long"))
    for d, tail in ((trailing, b"\xff" * 10), (huge, varint(2**62))):
        shutil.copytree(good, d)
        with open(os.path.join(d, "rapid.1.et"), "ab") as f:
            f.write(tail)
    os.makedirs(longd)
    long_trace(os.path.join(longd, "rapid.0.et"))
    net = ["--hardware", "h100-sxm5-80gb", "--network", "dgx-h100-superpod"]
    out = os.path.join(work, "out")
    errors = []
    cases = [
        ("inspect truncated", [rapid, "trace", "inspect", trunc], ["rapid.1.et", "node"]),
        ("replay truncated", [rapid, "predict", "--from-chakra", trunc] + net,
         ["rapid.1.et", "node"]),
        ("inspect dangling", [rapid, "trace", "inspect", dang], ["rapid.0.et", "node 1", "node 7"]),
        ("replay dangling", [rapid, "predict", "--from-chakra", dang] + net,
         ["rapid.0.et", "node 1", "node 7"]),
        ("inspect trailing", [rapid, "trace", "inspect", trailing],
         ["rapid.1.et", f"at byte {size}", "above 2^64"]),
        ("replay trailing", [rapid, "predict", "--from-chakra", trailing] + net,
         ["rapid.1.et", f"at byte {size}", "above 2^64"]),
        ("inspect huge prefix", [rapid, "trace", "inspect", huge],
         ["rapid.1.et", "length prefix of 4611686018427387904 bytes"]),
        ("replay huge prefix", [rapid, "predict", "--from-chakra", huge] + net,
         ["rapid.1.et", "length prefix of 4611686018427387904 bytes"]),
        ("inspect long duration", [rapid, "trace", "inspect", longd],
         ["rapid.0.et", "node 0 (a)", "duration_micros 10000000000000"]),
        ("replay long duration", [rapid, "predict", "--from-chakra", longd] + net,
         ["rapid.0.et", "node 0 (a)", "duration_micros 10000000000000"]),
        ("inspect missing", [rapid, "trace", "inspect", os.path.join(work, "nowhere")],
         ["nowhere"]),
        ("replay missing", [rapid, "predict", "--from-chakra", os.path.join(work, "nowhere")] + net,
         ["nowhere"]),
        ("bad --ranks", [rapid, "trace", job, "-o", out, "--ranks", "3-x"], ["--ranks", "3-x"]),
        ("--ranks beyond the job", [rapid, "trace", job, "-o", out, "--ranks", "0-99999"],
         ["--ranks", "99999"]),
        ("--ranks reversed", [rapid, "trace", job, "-o", out, "--ranks", "5-2"], ["--ranks", "5-2"]),
        ("unknown --scenario", [rapid, "predict", job, "--from-chakra", good, "--scenario", "nope"],
         ["--scenario", "nope"]),
        ("layout option on a replay", [rapid, "predict", job, "--from-chakra", good, "--tp", "2"],
         ["--tp"]),
    ]
    for name, cmd, expect in cases:
        check(name, cmd, expect, work, errors)
    # One message per fault: inspect and replay word each fault the same.
    for name in MESSAGES:
        twin = "replay" + name[len("inspect"):]
        if name.startswith("inspect") and twin in MESSAGES and MESSAGES[name] != MESSAGES[twin]:
            errors.append(f"{name} and {twin} differ: {MESSAGES[name]!r} vs {MESSAGES[twin]!r}")
    if os.path.exists(out):
        errors.append(f"{out} was created")
    for e in errors:
        print(e)
    print(f"{len(cases)} cases, {len(errors)} problems")
    sys.exit(1 if errors else 0)


if __name__ == "__main__":
    main()
