#!/usr/bin/python3
"""Runs the hostile-input catalogue (tests/bad_inputs/cases.json) and checks how each case
fails (docs/bad-input.md):

  - exit code 2 (the case's `exit`), never a signal, within the time bound;
  - every `expect` substring on stderr (the file, key and value of the message);
  - exactly one error message: one line starting with "rapid-sweep:" / "rapid:" (CLI11's
    own parse errors carry no prefix: then the one line before its "Run with --help"),
    no crash report, and under mpirun no message per rank;
  - no file left: the case's temporary directory holds exactly what the setup put there
    (no output, no `.tmp`, no `.rapid-sweep.partial-*.h5` or `.lock`, no FIFO or device
    replaced; a partial file the setup made is still there, its size unchanged).

Inputs made at test time (`make`) include a stopped sweep's partial file (kind "partial":
RAPID_SWEEP_TEST_STOP_AFTER_CHUNKS, then damaged, emptied or its stack edited), the lock of
a sweep still writing the output (held by the runner while the case runs) and a result file
with a damaged chunk (kind "h5", "flip").

Each case runs in a fresh temporary directory under RLIMIT_AS (--memory, 2 GiB) and a
wall-clock bound (--timeout, 20 s), in its own session (killed as a group on timeout).
The controls (each group's unmodified input) must exit 0 first, so that every case fails
for the reason it states.

    run_catalogue.py --sweep BUILD/rapid-sweep --rapid BUILD/rapid [--src DIR] [-j N]
                     [--filter TEXT] [--keep] [--verbose] [--mpirun MPIRUN]
"""
import argparse
import concurrent.futures
import fcntl
import json
import os
import pwd
import resource
import shutil
import signal
import stat
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
PREFIXES = ("rapid-sweep:", "rapid:", "rapid-analyze:", "report.py:")
CLI11_FOOTER = "Run with --help for more information."
CRASH_MARKS = ("Process received signal", "Segmentation fault", "Aborted", "terminate called",
               "AddressSanitizer", "core dumped", "Floating point exception")


def options():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--sweep", required=True, help="rapid-sweep binary")
    p.add_argument("--rapid", required=True, help="rapid binary")
    p.add_argument("--src", default=os.path.dirname(os.path.dirname(HERE)), help="source tree")
    p.add_argument("--mpirun", default="", help="mpirun for the cases run on 2 ranks")
    p.add_argument("-j", "--jobs", type=int, default=max(2, min(6, 2 * (os.cpu_count() or 1))))
    p.add_argument("--timeout", type=float, default=20.0, help="seconds per case")
    p.add_argument("--memory", type=int, default=2 << 30, help="RLIMIT_AS per process, bytes")
    p.add_argument("--filter", default="", help="only cases whose id contains this")
    p.add_argument("--keep", action="store_true", help="keep the temporary directories")
    p.add_argument("--verbose", action="store_true", help="print every case's stderr")
    return p.parse_args()


def snapshot(root):
    """Every entry under root: path -> (type, size of regular files)."""
    out = {}
    for dirpath, dirnames, filenames in os.walk(root):
        for name in dirnames + filenames:
            path = os.path.join(dirpath, name)
            st = os.lstat(path)
            kind = stat.S_IFMT(st.st_mode)
            out[os.path.relpath(path, root)] = (kind, st.st_size if stat.S_ISREG(st.st_mode) else 0)
    return out


def fill(template, ctx):
    for k, v in ctx.items():
        template = template.replace("{" + k + "}", v)
    return template


def partial_path(output):
    """ResultStore::temp_path_for: `.rapid-sweep.partial-HASH.h5` beside the output, HASH the
    64-bit FNV-1a of the output's absolute path."""
    h = 0xcbf29ce484222325
    for b in os.fsencode(os.path.normpath(os.path.abspath(output))):
        h = ((h ^ b) * 0x100000001b3) & 0xFFFFFFFFFFFFFFFF
    return os.path.join(os.path.dirname(output), f".rapid-sweep.partial-{h:016x}.h5")


def chunk_extent(path, dataset):
    """Byte offset and size of `dataset`'s first stored chunk (h5py)."""
    import h5py
    with h5py.File(path, "r") as f:
        info = f[dataset].id.get_chunk_info(0)
    if info.byte_offset is None:
        raise ValueError(f"{path}: {dataset} has no stored chunk")
    return info.byte_offset, info.size


def header_address(path, dataset):
    """Byte offset of `dataset`'s object header (h5py)."""
    import h5py
    with h5py.File(path, "r") as f:
        return h5py.h5o.get_info(f[dataset].id).addr


def flip_chunk(path, dataset):
    """Inverts up to 16 bytes from the middle of `dataset`'s first stored chunk (never past
    its end: a small chunk's neighbour, another dataset's, stays whole)."""
    offset, size = chunk_extent(path, dataset)
    count = min(16, size - size // 2)
    with open(path, "r+b") as f:
        f.seek(offset + size // 2)
        data = f.read(count)
        f.seek(offset + size // 2)
        f.write(bytes(b ^ 0xFF for b in data))


def zero_page(path, offset):
    """Zeroes the 4 KiB page holding byte `offset` (a page the disk lost)."""
    with open(path, "r+b") as f:
        f.seek(offset // 4096 * 4096)
        f.write(bytes(4096))


def hold_lock(path, holder, run):
    """The lock of a sweep still writing the output (FileLock, src/common/file_lock.cpp): an
    exclusive flock on `path` with the holder's text in it, held until the case ends."""
    f = open(path, "w")
    f.write(holder)
    f.flush()
    fcntl.flock(f.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
    run["held"].append(f)


def stopped_sweep(make, tmp, args, run):
    """A sweep of the resume job stopped after its first chunk (exit 3): the partial file
    it leaves beside {tmp}/out.h5, damaged as `make` says. Returns the job's path."""
    rel = make.get("job", "resume/_job.yaml")
    job = os.path.join(tmp, "job.yaml")
    shutil.copyfile(os.path.join(HERE, rel), job)
    configs = os.path.join(HERE, os.path.dirname(rel), "configs")
    if os.path.isdir(configs):  # the job's stack, beside it
        shutil.copytree(configs, os.path.join(tmp, "configs"))
    out = os.path.join(tmp, "out.h5")
    partial = partial_path(out)
    env = dict(run["env"], RAPID_SWEEP_TEST_STOP_AFTER_CHUNKS=str(make.get("stop_after", 1)))
    proc = subprocess.run([args.sweep, job, "-o", out, "--quiet"] + make.get("args", []),
                          cwd=tmp, env=env, stdin=subprocess.DEVNULL, capture_output=True,
                          text=True, timeout=120)
    want = {"job.yaml", os.path.basename(partial)} | ({"configs"} if os.path.isdir(configs)
                                                      else set())
    if proc.returncode != 3 or set(os.listdir(tmp)) != want:
        raise RuntimeError(f"the stopped sweep: exit {proc.returncode} (expected 3), files "
                           f"{sorted(os.listdir(tmp))} (expected {sorted(want)}): "
                           f"{proc.stderr[-300:]}")
    import h5py
    with h5py.File(partial, "r") as f:
        done = f["points/done"][()]
    if not 0 < done.sum() < len(done):
        raise RuntimeError(f"the stopped sweep wrote {done.sum()} of {len(done)} rows")
    run["partial"] = partial
    if "flip" in make:
        flip_chunk(partial, make["flip"])
    if "zero_chunk_page" in make:
        offset, size = chunk_extent(partial, make["zero_chunk_page"])
        zero_page(partial, offset + size // 2)
    if "zero_header_page" in make:
        zero_page(partial, header_address(partial, make["zero_header_page"]))
    if make.get("empty"):
        open(partial, "w").close()
    if "edit" in make:  # a config file edited between the stop and the resume
        with open(os.path.join(tmp, make["edit"]), "a", encoding="utf-8") as f:
            f.write("# edited between the stop and the resume\n")
    if "fsize_over_partial" in make:  # room for the partial file and this many bytes more
        run["fsize"] = os.path.getsize(partial) + make["fsize_over_partial"]
    if "hold_lock" in make:  # a sweep still writing it
        hold_lock(partial + ".lock", make["hold_lock"], run)
    return job


def make_input(case, tmp, args, run):
    """Creates the case's input in tmp; returns its path (the {case} placeholder). `run`
    receives what the case's run needs besides: the partial file's path, its file size
    limit, the locks held while it runs."""
    if "file" in case:
        if "dir" in case:  # a case directory: copied whole, the file inside it
            dst = os.path.join(tmp, os.path.basename(case["dir"]))
            shutil.copytree(os.path.join(HERE, case["dir"]), dst)
        path = os.path.join(tmp, os.path.basename(case["file"]))
        if "dir" in case:
            path = os.path.join(tmp, os.path.basename(case["dir"]), os.path.basename(case["file"]))
        shutil.copyfile(os.path.join(HERE, case["file"]), path)
        return path
    make = case.get("make")
    if make is None:
        return ""
    kind = make["kind"]
    if kind == "path":
        return make["path"]
    if kind == "partial":  # a stopped sweep's partial file beside {tmp}/out.h5: the job
        return stopped_sweep(make, tmp, args, run)
    name = make.get("name")
    if "name_hex" in make:
        name = os.fsdecode(bytes.fromhex(make["name_hex"]))
    path = os.path.join(tmp, name)
    if kind == "fifo":
        os.mkfifo(path)
    elif kind == "dir":
        os.mkdir(path)
    elif kind == "none":
        pass
    elif kind == "sparse":
        with open(path, "wb") as f:
            f.truncate(make["bytes"])
    elif kind == "copy":
        with open(path, "w") as f:
            f.write(make["text"])
    elif kind == "text":
        with open(path, "w") as f:
            for text, count in make["parts"]:
                f.write(text * count)
    elif kind == "indent":  # block mappings nested `levels` deep, one space per level
        with open(path, "w") as f:
            for i in range(make["levels"]):
                f.write(" " * i + "a:\n")
            f.write(" " * make["levels"] + "b: 1\n")
    elif kind == "h5":  # a copy of the good result file, then truncated, edited or damaged
        shutil.copyfile(case["_h5"], path)
        if "flip" in make:
            flip_chunk(path, make["flip"])
        if "truncate" in make:
            with open(path, "r+b") as f:
                f.truncate(make["truncate"])
        if "h5py" in make:
            script = f"import h5py\nf = h5py.File({path!r}, 'a')\n{make['h5py']}\nf.close()\n"
            subprocess.run(["/usr/bin/python3", "-c", script], check=True)
    else:
        raise ValueError(f"unknown make kind {kind}")
    return path


def setup(case, tmp):
    """Extra entries in tmp; returns False when one cannot be made here (case skipped)."""
    for s in case.get("setup", []):
        if "mkdir" in s:
            os.makedirs(os.path.join(tmp, s["mkdir"]))
        elif "mkfifo" in s:
            os.mkfifo(os.path.join(tmp, s["mkfifo"]))
        elif "symlink" in s:
            os.symlink(s["to"], os.path.join(tmp, s["symlink"]))
        elif "mknod" in s:  # a character device like /dev/null, inside the temp dir
            try:
                os.mknod(os.path.join(tmp, s["mknod"]), 0o666 | stat.S_IFCHR, os.makedev(1, 3))
            except OSError:
                return False
    # Modes last (a read-only directory first filled).
    for s in case.get("setup", []):
        if "mode" in s:
            os.chmod(os.path.join(tmp, s["mkdir"]), s["mode"])
    return True


def limits(memory, fsize, uid):
    def apply():
        os.setsid()
        resource.setrlimit(resource.RLIMIT_AS, (memory, memory))
        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
        if fsize is not None:
            # A full disk: writes past `fsize` bytes fail with EFBIG instead of SIGXFSZ.
            signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
            resource.setrlimit(resource.RLIMIT_FSIZE, (fsize, fsize))
        if uid is not None:
            os.setgid(uid[1])
            os.setgroups([])
            os.setuid(uid[0])
    return apply


def run_one(case, args, group, env):
    """Runs one case; returns (ok, problems, stderr)."""
    tmp = tempfile.mkdtemp(prefix="rapid-bad-")
    session = tempfile.mkdtemp(prefix="rapid-bad-ompi-")  # the MPI session directory
    # An MPI singleton without its orted (which takes 5 s to start in some containers, a
    # Debian 12 chroot here: the catalogue then outlasts its timeout), in a session directory
    # of its own (isolated singletons share one name: concurrent ones race on its mkdir).
    single = {"OMPI_MCA_ess_singleton_isolated": "1", "OMPI_MCA_orte_tmpdir_base": session}
    run = {"env": dict(env, **single), "held": []}
    try:
        os.chmod(tmp, 0o777)  # cases run as nobody must be able to reach their files
        os.chmod(session, 0o777)
        ctx = {"sweep": args.sweep, "rapid": args.rapid, "src": args.src, "tmp": tmp,
               "python": sys.executable}
        if case.get("needs_h5") or case.get("make", {}).get("kind") == "h5":
            ctx["h5"] = os.path.join(tmp, "result.h5")
            shutil.copyfile(case["_h5"], ctx["h5"])
        ctx["case"] = make_input(case, tmp, args, run)
        if "partial" in run:
            ctx["partial"] = run["partial"]
        if not setup(case, tmp):
            return None, ["setup not possible here (mknod refused)"], ""
        wrap = case.get("wrap", group.get("wrap"))
        if wrap:
            with open(os.path.join(HERE, "wrap", wrap + ".yaml")) as f:
                text = f.read().replace("@CASE@", ctx["case"])
            with open(os.path.join(tmp, "wrap.yaml"), "w") as f:
                f.write(text)
        cmd = [fill(a, ctx) for a in case.get("cmd", group.get("cmd", []))] + list(case.get("args", []))
        ranks = case.get("ranks", 1)
        if ranks > 1:
            cmd = [args.mpirun, "-n", str(ranks), "--oversubscribe"] + cmd
        uid = None
        if case.get("user") and os.geteuid() == 0:
            pw = pwd.getpwnam(case["user"])
            uid = (pw.pw_uid, pw.pw_gid)
        case_env = dict(env, **case.get("env", {}))
        if ranks == 1:
            for k, v in single.items():
                case_env.setdefault(k, v)
        fsize = run.get("fsize", case.get("fsize"))
        before = snapshot(tmp)
        start = time.monotonic()
        proc = subprocess.Popen([os.fsencode(c) for c in cmd], cwd=tmp, env=case_env,
                                stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE,
                                preexec_fn=limits(args.memory, fsize, uid))
        try:
            out, err = proc.communicate(timeout=args.timeout)
            timed_out = False
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            out, err = proc.communicate()
            timed_out = True
        elapsed = time.monotonic() - start
        err = err.decode(errors="replace")
        expect = [fill(text, ctx) for text in case.get("expect", [])]
        problems = check(case, expect, proc.returncode, err, timed_out, args, ranks)
        # Read-only directories back to writable so that they can be listed and removed.
        for s in case.get("setup", []):
            if "mode" in s:
                os.chmod(os.path.join(tmp, s["mkdir"]), 0o755)
        after = snapshot(tmp) if case.get("exit", 2) != 0 else before  # a control writes its output
        for path in sorted(set(after) - set(before)):
            problems.append(f"left behind: {path}")
        for path in sorted(set(before) & set(after)):
            if before[path] != after[path]:
                problems.append(f"changed: {path} {before[path]} -> {after[path]}")
        for path in sorted(set(before) - set(after)):
            problems.append(f"removed: {path}")
        if args.verbose:
            err = f"[{elapsed:.1f} s] {err}"
        return not problems, problems, err
    finally:
        for f in run["held"]:  # the locks: released once the case ran
            f.close()
        if args.keep:
            print(f"  kept {tmp}")
        else:
            for s in case.get("setup", []):
                if "mode" in s and os.path.exists(os.path.join(tmp, s["mkdir"])):
                    os.chmod(os.path.join(tmp, s["mkdir"]), 0o755)
            shutil.rmtree(tmp, ignore_errors=True)
        shutil.rmtree(session, ignore_errors=True)


def check(case, expect, rc, err, timed_out, args, ranks):
    problems = []
    want = case.get("exit", 2)
    if timed_out:
        problems.append(f"timed out after {args.timeout:.0f} s")
    elif rc < 0:
        problems.append(f"killed by signal {-rc} ({signal.Signals(-rc).name})")
    elif rc != want:
        problems.append(f"exit code {rc}, expected {want}")
    for text in expect:
        if text not in err:
            problems.append(f"stderr lacks {text!r}")
    lines = [l for l in err.splitlines() if l.strip()]
    for mark in CRASH_MARKS:
        if mark in err:
            problems.append(f"crash report on stderr ({mark!r})")
            break
    if want == 0:
        return problems
    prefixed = [l for l in lines if l.startswith(PREFIXES)]
    if ranks > 1:
        # mpirun adds its own summary of the non-zero exit; the program's message appears once.
        if len(prefixed) != 1:
            problems.append(f"{len(prefixed)} messages from the program (one per rank?), expected 1")
    else:
        others = [l for l in lines if l != CLI11_FOOTER]
        if len(others) != 1:
            problems.append(f"{len(others)} lines on stderr, expected one message")
    return problems


def good_result_file(args, env, tmp):
    """A small result file for the export cases (the job control, swept once)."""
    job = os.path.join(HERE, "job", "_good.yaml")
    out = os.path.join(tmp, "good.h5")
    proc = subprocess.run([args.sweep, job, "-o", out, "--quiet"], env=env, capture_output=True,
                          text=True, timeout=120)
    if proc.returncode != 0:
        raise SystemExit(f"run_catalogue: the good job did not sweep: {proc.stderr}")
    return out


def main():
    args = options()
    args.mpirun = args.mpirun or shutil.which("mpirun") or "mpirun"
    with open(os.path.join(HERE, "cases.json")) as f:
        manifest = json.load(f)
    groups = manifest["groups"]
    env = dict(os.environ)
    env.setdefault("RAPID_CONFIG_DIR", os.path.join(args.src, "configs"))
    env.update({"OMPI_ALLOW_RUN_AS_ROOT": "1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1",
                # PMIx keeps its store in shared-memory files: under RLIMIT_FSIZE (the full
                # disk cases) MPI_Init itself would fail; the hash store writes no file.
                "PMIX_MCA_gds": "hash",
                # The singleton's orted reports each signal it forwards on stderr.
                "OMPI_MCA_ess_base_forward_signals": "none",
                "OMP_NUM_THREADS": "1"})
    work = tempfile.mkdtemp(prefix="rapid-bad-catalogue-")
    os.chmod(work, 0o755)
    try:
        h5 = good_result_file(args, env, work)
        os.chmod(h5, 0o644)
        cases = [c for c in manifest["cases"] if args.filter in c["id"]]
        controls = [dict(c, exit=0) for c in manifest["controls"] if args.filter in c["id"]]
        for c in cases + controls:
            c["_h5"] = h5
        t0 = time.monotonic()
        failed_controls = []
        for c in controls:
            g = groups.get(c.get("group", c["id"].split("/")[0]), {})
            try:
                ok, problems, err = run_one(c, args, g, env)
            except Exception as e:  # the runner's own failure (a setup that failed)
                ok, problems, err = False, [f"runner error: {e!r}"], ""
            if not ok:
                failed_controls.append((c["id"], problems, err))
        for cid, problems, err in failed_controls:
            print(f"CONTROL FAIL {cid}: {'; '.join(problems)}\n    {err.strip()[:600]}")
        results = {}
        with concurrent.futures.ThreadPoolExecutor(max_workers=args.jobs) as pool:
            futures = {}
            for c in cases:
                g = groups.get(c["id"].split("/")[0], {})
                futures[pool.submit(run_one, c, args, g, env)] = c
            for fut in concurrent.futures.as_completed(futures):
                c = futures[fut]
                try:
                    results[c["id"]] = fut.result()
                except Exception as e:  # the runner's own failure is a failed case
                    results[c["id"]] = (False, [f"runner error: {e!r}"], "")
        clean = skipped = 0
        for c in cases:
            ok, problems, err = results[c["id"]]
            if ok is None:
                skipped += 1
                print(f"SKIP {c['id']}: {'; '.join(problems)}")
                continue
            if ok:
                clean += 1
                if args.verbose:
                    print(f"ok   {c['id']}: {err.strip()}")
            else:
                print(f"FAIL {c['id']} ({c.get('why', '')}): {'; '.join(problems)}")
                print("    stderr: " + "\n            ".join(err.strip().splitlines()[:8])[:1500])
        n = len(cases) - skipped
        print(f"{len(controls)} controls, {len(controls) - len(failed_controls)} exit 0")
        print(f"{n} cases, {clean} exit 2 cleanly"
              + (f" ({skipped} skipped: not possible here)" if skipped else "")
              + f" [{time.monotonic() - t0:.0f} s, {args.jobs} at a time]")
        return 0 if clean == n and not failed_controls else 1
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
