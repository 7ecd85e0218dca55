#!/usr/bin/python3
"""The command lines of issue 34 part 4, as a user types them: `rapid list` and each kind
(one line per name, sorted, the same names as configs/KIND/), "did you mean" for an unknown
kind, flag, subcommand, job key and config name (exit 2, CLI11's message kept), `rapid`
without a subcommand naming every one (netcheck included) and `rapid-analyze --version`
(exit 0, the project's version).

    check_cli.py SOURCE_DIR RAPID RAPID_SWEEP VERSION
"""
import os
import subprocess
import sys

PY = "/usr/bin/python3"


def run(argv, cwd):
    env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
    env.pop("RAPID_CONFIG_DIR", None)  # the configs found from the working directory
    p = subprocess.run(argv, capture_output=True, text=True, timeout=120, cwd=cwd, env=env)
    return p.returncode, p.stdout, p.stderr


def main():
    src, rapid, sweep, version = sys.argv[1:5]
    errors = []

    def expect(argv, code, out=(), err=()):
        """stdout (stderr when `code` is not 0) of argv, checked."""
        rc, stdout, stderr = run(argv, src)
        what = " ".join(os.path.basename(a) if a in (rapid, sweep) else a for a in argv)
        if rc != code:
            errors.append(f"{what}: exit {rc}, expected {code}: {stderr.strip()}")
        for s in out:
            if s not in stdout:
                errors.append(f"{what}: {s!r} not in stdout: {stdout[:300]!r}")
        for s in err:
            if s not in stderr:
                errors.append(f"{what}: {s!r} not in stderr: {stderr.strip()!r}")
        return stdout if code == 0 else stderr

    # Each kind: one line per file of configs/KIND (hardware: and its variants), by name.
    for kind, dirs in (("models", ["models"]), ("hardware", ["hardware", "hardware/variants"]),
                       ("networks", ["networks"]), ("frameworks", ["frameworks"]),
                       ("serving", ["serving"])):
        out = expect([rapid, "list", kind], 0)
        names = [line.split()[0] for line in out.splitlines()]
        files = sorted(f[:-5] for d in dirs for f in os.listdir(os.path.join(src, "configs", d))
                       if f.endswith(".yaml"))
        if names != files:
            errors.append(f"rapid list {kind}: {names}, expected {files}")
        if "unreadable" in out:
            errors.append(f"rapid list {kind}: a shipped file unreadable: {out}")
    expect([rapid, "list", "models"], 0,
           out=["llama3-70b         70.6B params, 80 layers, hidden 8192, 64 heads (8 KV)"])
    expect([rapid, "list"], 0, out=["models", "serving"])
    expect([rapid, "list", "--paths", "networks"], 0,
           out=["dgx-h100-superpod        configs/networks/dgx-h100-superpod.yaml"])

    # Did you mean: a kind, a subcommand, a flag of each program, a job key, a name.
    expect([rapid, "list", "modls"], 2, err=["key 'kind'", "did you mean models?"])
    expect([rapid, "prdict"], 2, err=["not expected: prdict (did you mean predict?)"])
    expect([rapid, "predict", "jobs/llama3-8b-8xh100.yaml", "--fidelty", "des"], 2,
           err=["not expected: des --fidelty (did you mean --fidelity?)"])
    expect([sweep, "jobs/llama3-8b-8xh100.yaml", "-o", "/nonexistent/x.h5", "--thredas", "4"],
           2, err=["--thredas", "did you mean --threads?"])
    expect([rapid, "predict", "tests/bad_inputs/job/unknown-key-search.yaml"], 2,
           err=["key 'search.tpp'", "did you mean search.tp?"])
    expect([rapid, "predict", "tests/bad_inputs/job/model-unknown-name.yaml"], 2,
           err=["key 'model'", "known: deepseek-v3,", "`rapid list models` shows them"])
    # Without a subcommand: every one `rapid --help` lists is named (netcheck was not).
    err = expect([rapid], 2, err=["a subcommand is required"])
    _, help_out, _ = run([rapid, "--help"], src)
    subs = [line.split()[0] for line in help_out.split("Subcommands:", 1)[-1].splitlines()
            if line.startswith("  ")]
    for name in ("predict", "netcheck", "list", "export"):
        if name not in subs:
            errors.append(f"rapid --help: no {name} in {subs}")
    for name in subs:
        if name not in err:
            errors.append(f"rapid: {name} not named: {err.strip()}")

    expect([PY, os.path.join(src, "analysis", "rapid-analyze"), "--version"], 0,
           out=[f"rapid-analyze {version}"])
    print("\n".join(errors) if errors else "rapid list and suggestions: ok")
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
