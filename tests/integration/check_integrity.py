#!/usr/bin/python3
"""Every result file whole or absent (issue 35 part 2, docs/production.md "Integrity"): the
sweep of JOB (--fidelity des, 2 ranks) against what a hostile user does to it. Each case
ends in exit 2 with one message, or in a file equal row for row to the uninterrupted run
(compare_results.py), never exit 0 with a wrong or unreadable file:

  - a second sweep on the same output while the first runs: exit 2 naming the running one
    (its pid); the first ends with the right file;
  - a partial file with flipped bytes in a kept chunk: --resume exits 2 naming the dataset
    and the checksum; the same command without --resume starts again, right file;
  - an empty partial file: --resume exits 2 and leaves it as it was;
  - a stack (framework) file edited between the stop and --resume: exit 2 (the resume key);
  - --resume with less room than the rest of the file needs (RLIMIT_FSIZE): exit 2;
  - a result file with a damaged chunk: `rapid export`, `rapid-analyze` and report.py exit 2
    naming the file and the dataset;
  - mpirun stopped (SIGSTOP) while its ranks work: they finish, write the file and leave
    MPI_Finalize after RAPID_FINALIZE_TIMEOUT_S.

    check_integrity.py MPIRUN RAPID_SWEEP RAPID JOB SRC_DIR OUT_DIR
"""
import os
import shutil
import signal
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from check_resume import partials, start_writing, stop_midway, sweep  # noqa: E402


def same(reference, out):
    p = subprocess.run([sys.executable, os.path.join(HERE, "compare_results.py"), reference,
                        out], capture_output=True, text=True, timeout=120)
    return p.returncode == 0, p.stdout[-300:] + p.stderr[-300:]


def one_line(stderr):
    """One message: one line from our programs (mpirun adds its own banner under it)."""
    ours = [l for l in stderr.splitlines()
            if l.startswith(("rapid-sweep:", "rapid:", "rapid-analyze:", "report.py:"))]
    return len(ours) == 1


def flip_chunk(path):
    """Inverts 16 bytes in the middle of /points/step_time_s's first stored chunk."""
    import h5py
    with h5py.File(path, "r") as f:
        info = f["points/step_time_s"].id.get_chunk_info(0)
    with open(path, "r+b") as f:
        f.seek(info.byte_offset + info.size // 2)
        data = f.read(16)
        f.seek(info.byte_offset + info.size // 2)
        f.write(bytes(b ^ 0xFF for b in data))


def stopped_partial(cmd, out, errors, name):
    """A sweep stopped by SIGTERM once rows are written: its partial file (None if not)."""
    for f in partials(out) + ([out] if os.path.exists(out) else []):
        os.remove(f)
    rc, _ = stop_midway(cmd, out, signal.SIGTERM, None, 1.0)
    if rc in (None, 0) or len(partials(out)) != 1:
        errors.append(f"{name}: the stop gave exit {rc}, partial files {partials(out)}")
        return None
    return partials(out)[0]


def main(mpirun, exe, rapid, job, src, out_dir):
    errors = []
    shutil.rmtree(out_dir, ignore_errors=True)
    os.makedirs(out_dir)
    # The job's stack file from a directory of our own (RAPID_CONFIG_DIR comes first in the
    # config search), so that a case can edit it.
    frameworks = os.path.join(src, "configs", "frameworks")
    configs = os.path.join(out_dir, "configs", "frameworks")
    shutil.copytree(frameworks, configs)
    stack = os.path.join(configs, "nemo-24.07.yaml")  # the demo job's (its framework:)
    os.environ["RAPID_CONFIG_DIR"] = os.path.join(out_dir, "configs")
    os.environ["RAPID_FINALIZE_TIMEOUT_S"] = "3"
    reference = os.path.join(out_dir, "reference.h5")
    subprocess.run(sweep(mpirun, exe, job, reference), check=True, timeout=300)

    # A second sweep on the same output while the first runs.
    out = os.path.join(out_dir, "lock", "out.h5")
    os.makedirs(os.path.dirname(out))
    first = start_writing(sweep(mpirun, exe, job, out), out)
    second = subprocess.run(sweep(mpirun, exe, job, out), capture_output=True, text=True,
                            timeout=120)
    first.communicate(timeout=300)
    if second.returncode != 2 or "no other sweep is writing" not in second.stderr or \
            "pid" not in second.stderr or not one_line(second.stderr):
        errors.append(f"second sweep: exit {second.returncode}: {second.stderr[-300:]}")
    ok, why = same(reference, out) if first.returncode == 0 else (False, "exit")
    if not ok:
        errors.append(f"the first sweep (exit {first.returncode}) beside a refused second: {why}")

    # A damaged partial file: --resume refuses it; the plain command starts again.
    out = os.path.join(out_dir, "damaged", "out.h5")
    os.makedirs(os.path.dirname(out))
    partial = stopped_partial(sweep(mpirun, exe, job, out), out, errors, "damaged")
    if partial:
        flip_chunk(partial)
        bad = subprocess.run(sweep(mpirun, exe, job, out, "--resume"), capture_output=True,
                             text=True, timeout=300)
        if bad.returncode != 2 or "/points/step_time_s" not in bad.stderr or \
                "checksum" not in bad.stderr or os.path.exists(out) or not one_line(bad.stderr):
            errors.append(f"damaged partial --resume: exit {bad.returncode}: {bad.stderr[-300:]}")
        again = subprocess.run(sweep(mpirun, exe, job, out, quiet=False), capture_output=True,
                               text=True, timeout=300)
        ok, why = same(reference, out) if again.returncode == 0 else (False, again.stderr[-300:])
        if not ok or "damaged" not in again.stderr:
            errors.append(f"damaged partial, same command: exit {again.returncode}: {why}")

    # An empty partial file: --resume refuses it and leaves it.
    out = os.path.join(out_dir, "empty", "out.h5")
    os.makedirs(os.path.dirname(out))
    partial = stopped_partial(sweep(mpirun, exe, job, out), out, errors, "empty")
    if partial:
        open(partial, "w").close()
        bad = subprocess.run(sweep(mpirun, exe, job, out, "--resume"), capture_output=True,
                             text=True, timeout=300)
        if bad.returncode != 2 or os.path.getsize(partial) != 0 or not one_line(bad.stderr):
            errors.append(f"empty partial --resume: exit {bad.returncode}, size "
                          f"{os.path.getsize(partial)}: {bad.stderr[-300:]}")

    # A stack file edited between the stop and --resume; then too little room to resume.
    out = os.path.join(out_dir, "stack", "out.h5")
    os.makedirs(os.path.dirname(out))
    partial = stopped_partial(sweep(mpirun, exe, job, out), out, errors, "stack")
    if partial:
        with open(stack, "a", encoding="utf-8") as f:
            f.write("# edited between the stop and the resume\n")
        bad = subprocess.run(sweep(mpirun, exe, job, out, "--resume"), capture_output=True,
                             text=True, timeout=300)
        if bad.returncode != 2 or "stack" not in bad.stderr or not one_line(bad.stderr):
            errors.append(f"edited stack --resume: exit {bad.returncode}: {bad.stderr[-300:]}")
        shutil.copy(os.path.join(frameworks, "nemo-24.07.yaml"), stack)
        size = os.path.getsize(partial)

        # The ranks alone under RLIMIT_FSIZE (the partial file and 1 kB more): mpirun's own
        # files must not hit it.
        limited = [sys.executable, "-c",
                   "import os, resource, sys; resource.setrlimit(resource.RLIMIT_FSIZE, "
                   f"({size + 1024}, resource.RLIM_INFINITY)); os.execv(sys.argv[1], sys.argv[1:])",
                   exe]
        cmd = sweep(mpirun, exe, job, out, "--resume")
        at = cmd.index(exe)
        bad = subprocess.run(cmd[:at] + limited + cmd[at + 1:], capture_output=True,
                             text=True, timeout=300)
        if bad.returncode != 2 or "key '-o'" not in bad.stderr or not one_line(bad.stderr):
            errors.append(f"--resume without room: exit {bad.returncode}: {bad.stderr[-300:]}")

    # A damaged result file in the programs that read one.
    damaged = os.path.join(out_dir, "damaged-result.h5")
    shutil.copy(reference, damaged)
    flip_chunk(damaged)
    analysis = os.path.join(src, "analysis")
    for name, cmd in (("rapid export", [rapid, "export", damaged, "--csv",
                                        os.path.join(out_dir, "x.csv")]),
                      ("rapid-analyze", ["/usr/bin/python3", os.path.join(analysis,
                                                                          "rapid-analyze"),
                                         "top", damaged]),
                      ("report.py", ["/usr/bin/python3", os.path.join(analysis, "report.py"),
                                     damaged])):
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
        if p.returncode != 2 or "/points/step_time_s" not in p.stderr or \
                damaged not in p.stderr or not one_line(p.stderr) or "Traceback" in p.stderr:
            errors.append(f"{name} on a damaged file: exit {p.returncode}: {p.stderr[-300:]}")
    if os.path.exists(os.path.join(out_dir, "x.csv")):
        errors.append("rapid export left x.csv from a damaged file")

    # mpirun stopped while its ranks work: they end after the finalize timeout.
    out = os.path.join(out_dir, "sigstop", "out.h5")
    os.makedirs(os.path.dirname(out))
    proc = start_writing(sweep(mpirun, exe, job, out), out)
    proc.send_signal(signal.SIGSTOP)
    ranks = subprocess.run(["pgrep", "-P", str(proc.pid)], capture_output=True,
                           text=True).stdout.split()
    deadline = time.time() + 300
    alive = ranks
    while alive and time.time() < deadline:
        time.sleep(0.5)
        alive = [r for r in ranks if os.path.exists(f"/proc/{r}") and
                 open(f"/proc/{r}/stat").read().split()[2] != "Z"]
    proc.send_signal(signal.SIGCONT)
    proc.communicate(timeout=120)
    if alive:
        errors.append(f"mpirun stopped: ranks {alive} still alive after 300 s")
    ok, why = same(reference, out)
    if not ok:
        errors.append(f"mpirun stopped: the file: {why}")

    for e in errors:
        print("FAIL:", e)
    print(f"{len(errors)} problems")
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:7]))
