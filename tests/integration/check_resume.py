#!/usr/bin/python3
"""Stop a sweep mid-way and resume it (docs/production.md): the sweep of JOB (--fidelity
des, 2 ranks) is stopped by SIGTERM and by SIGKILL of mpirun, by SIGKILL of one rank
(mpirun ends the job within seconds) and by SIGSTOP of a worker and of rank 0 (the
heartbeat watchdog ends the job after --heartbeat-timeout 3 s, exit 3), and a
`--fidelity auto` sweep by SIGTERM in its simulation pass. Each time the partial file
beside the output holds the rows done, the output itself does not exist, and `--resume`
(or the same command again, after the SIGKILL of one rank) computes the rest; the result
equals an uninterrupted sweep row for row (compare_results.py). A resume from a different
job (its text changed) is refused with exit 2 naming the partial file's key.

    check_resume.py MPIRUN RAPID_SWEEP JOB OUT_DIR
"""

import glob
import os
import signal
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))


DES = ("--fidelity", "des", "--chunk", "64")  # small chunks: rows written within the 1 s
# auto with a top-K so large that its simulation pass (every feasible point) lasts seconds,
# and the analytical pass a fraction of the 1 s before the signal: stopped inside the former.
AUTO = ("--fidelity", "auto", "--des-top-k", "1500")


def sweep(mpirun, exe, job, out, *extra, fidelity=DES, quiet=True):
    return [mpirun, "-n", "2", "--oversubscribe", exe, job, "-o", out, *fidelity,
            "--threads", "1", *(["--quiet"] if quiet else []), *extra]


def partials(out):
    return glob.glob(os.path.join(os.path.dirname(out), ".rapid-sweep.partial-*.h5"))


def rank_pids(mpirun_pid):
    """The rapid-sweep processes mpirun started (its children), by MPI rank (OpenMPI puts
    OMPI_COMM_WORLD_RANK in each one's environment)."""
    ps = subprocess.run(["pgrep", "-P", str(mpirun_pid)], capture_output=True, text=True)
    ranks = {}
    for pid in (int(p) for p in ps.stdout.split()):
        try:
            with open(f"/proc/{pid}/environ", "rb") as f:
                env = dict(v.split(b"=", 1) for v in f.read().split(b"\0") if b"=" in v)
            ranks[int(env[b"OMPI_COMM_WORLD_RANK"])] = pid
        except (OSError, KeyError, ValueError):
            pass
    return ranks


def wait_ranks_gone(out, timeout_s=60):
    """Waits until no process names `out` on its command line: ranks of a job whose mpirun
    was killed may outlive it for a moment, holding the output's lock (a sweep started
    meanwhile is refused as a second sweep on the same output)."""
    deadline = time.time() + timeout_s
    while time.time() < deadline:
        busy = False
        for pid in (p for p in os.listdir("/proc") if p.isdigit()):
            try:
                with open(f"/proc/{pid}/cmdline", "rb") as f:
                    cmd = f.read().split(b"\0")
                with open(f"/proc/{pid}/stat") as f:
                    zombie = f.read().split()[2] == "Z"
            except OSError:
                continue
            if not zombie and out.encode() in cmd:
                busy = True
                break
        if not busy:
            return
        time.sleep(0.1)


def rows_done(partial):
    """Rows the partial file's done mask marks, all rows, rows simulated (h5py)."""
    import h5py
    with h5py.File(partial, "r") as f:
        return (int(f["points/done"][()].sum()), int(f["points/done"].shape[0]),
                int((f["points/fidelity"][()] == 1).sum()))


def start_writing(cmd, out):
    """Starts the sweep `cmd` and returns its process once its partial file beside `out`
    exists (or it ended, or 30 s passed)."""
    t0 = time.time()
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    while time.time() - t0 < 30 and not partials(out) and proc.poll() is None:
        time.sleep(0.05)
    return proc


def stop_midway(cmd, out, sig, one_rank=None, wait_s=1.0):
    """Starts `cmd`, sends `sig` (to mpirun, or to rank `one_rank`) once the partial file
    exists and `wait_s` has passed. Returns mpirun's exit code and the seconds from the
    signal to its exit (None when it finished first)."""
    proc = start_writing(cmd, out)
    time.sleep(wait_s)
    if proc.poll() is not None:
        return None, None  # finished before the signal: nothing to test
    if one_rank is not None:
        pids = rank_pids(proc.pid)
        if one_rank not in pids:
            proc.communicate(timeout=60)
            return None, None
        os.kill(pids[one_rank], sig)
    else:
        proc.send_signal(sig)
    t1 = time.time()
    proc.communicate(timeout=60)
    rc, took = proc.returncode, time.time() - t1
    wait_ranks_gone(out)
    return rc, took


def main(mpirun, exe, job, out_dir):
    errors = []
    os.makedirs(out_dir, exist_ok=True)
    fulls = {DES: os.path.join(out_dir, "resume-full.h5"),
             AUTO: os.path.join(out_dir, "resume-full-auto.h5")}
    for fid, path in fulls.items():
        subprocess.run(sweep(mpirun, exe, job, path, "--overwrite", fidelity=fid), check=True,
                       timeout=300)
    for name, sig, one, fid in (("sigterm", signal.SIGTERM, None, DES),
                                ("sigkill", signal.SIGKILL, None, DES),
                                ("sigkill-one-rank", signal.SIGKILL, 1, DES),
                                ("sigstop-worker", signal.SIGSTOP, 1, DES),
                                ("sigstop-rank0", signal.SIGSTOP, 0, DES),
                                ("auto-sigterm-in-des-pass", signal.SIGTERM, None, AUTO)):
        full = fulls[fid]
        out = os.path.join(out_dir, f"resume-{name}", "out.h5")
        os.makedirs(os.path.dirname(out), exist_ok=True)
        for f in partials(out) + ([out] if os.path.exists(out) else []):
            os.remove(f)
        watch = ["--heartbeat-timeout", "3"] if sig == signal.SIGSTOP else []
        rc, detect_s = stop_midway(sweep(mpirun, exe, job, out, *watch, fidelity=fid), out,
                                   sig, one, 1.0)
        if rc is None:
            errors.append(f"{name}: the sweep finished before the signal")
            continue
        if rc == 0 or os.path.exists(out) or len(partials(out)) != 1:
            errors.append(f"{name}: exit {rc}, output exists {os.path.exists(out)}, "
                          f"partial files {partials(out)}")
            continue
        if sig == signal.SIGSTOP and rc != 3:
            errors.append(f"{name}: exit {rc}, expected 3 (a lost rank)")
        done, total, simulated = rows_done(partials(out)[0])
        if fid == AUTO and not (done == total and simulated > 0):
            errors.append(f"{name}: stopped outside the simulation pass ({done} of {total} "
                          f"rows, {simulated} simulated): make the pass longer")
        if name == "sigkill":  # a different job must not resume it
            changed = os.path.join(out_dir, "resume-changed.yaml")
            with open(job, encoding="utf-8") as f:
                text = f.read()
            with open(changed, "w", encoding="utf-8") as f:
                f.write(text.replace("name:", "# changed\nname:", 1))
            bad = subprocess.run(sweep(mpirun, exe, changed, out, "--resume", fidelity=fid),
                                 capture_output=True, text=True, timeout=120)
            if bad.returncode != 2 or "resume/key" not in bad.stderr or len(partials(out)) != 1:
                errors.append(f"a changed job resumed: exit {bad.returncode}: {bad.stderr[-300:]}")
        # SIGKILL of one rank: the same command again (no --resume) resumes as well.
        again = name == "sigkill-one-rank"
        res = subprocess.run(sweep(mpirun, exe, job, out, *([] if again else ["--resume"]),
                                   fidelity=fid, quiet=not again),
                             capture_output=True, text=True, timeout=300)
        if again and f"{total - done} of {total} points left" not in res.stderr:
            errors.append(f"{name}: the same command did not resume: {res.stderr[-300:]}")
        if res.returncode != 0 or partials(out):
            errors.append(f"{name}: resume exit {res.returncode}, partial left {partials(out)}:"
                          f" {res.stderr[-300:]}")
            continue
        cmp = subprocess.run([sys.executable, os.path.join(HERE, "compare_results.py"), full, out],
                             capture_output=True, text=True)
        if cmp.returncode != 0:
            errors.append(f"{name}: resumed file differs: {cmp.stdout[-500:]}")
        else:
            print(f"{name}: stopped (exit {rc}, {detect_s:.2f} s after the signal) with "
                  f"{done} of {total} rows done ({simulated} simulated), resumed: equal to the "
                  "uninterrupted sweep row for row (0 points lost)")
    for e in errors:
        print("FAIL:", e)
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:5]))
