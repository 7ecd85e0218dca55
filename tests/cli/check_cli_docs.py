#!/usr/bin/python3
"""The man pages and bash completion built from --help (cmake/cli_docs.py; issue 34):
man/rapid.1 has a section for every subcommand `rapid --help` lists (and theirs), and
man/rapid-sweep.1 every flag of rapid-sweep; completion/rapid names every flag of
`rapid predict`, and sourced in bash completes subcommands, flags and `rapid list` kinds.

    check_cli_docs.py BUILD_DIR RAPID RAPID_SWEEP
"""
import os
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "cmake"))
import cli_docs  # noqa: E402


def complete(script, words):
    """COMPREPLY of the completion function for the command line `words` (the last one
    being completed)."""
    func = "_" + words[0].replace("-", "_")
    array = " ".join(f"'{w}'" for w in words)
    p = subprocess.run(["bash", "-c", f"source '{script}'; COMP_WORDS=({array}); "
                        f"COMP_CWORD={len(words) - 1}; {func}; printf '%s\\n' \"${{COMPREPLY[@]}}\""],
                       capture_output=True, text=True, timeout=60)
    if p.returncode != 0:
        return None
    return [w for w in p.stdout.splitlines() if w]


def main():
    build, rapid, sweep = sys.argv[1:4]
    errors = []
    for name, program in (("rapid", rapid), ("rapid-sweep", sweep)):
        page = os.path.join(build, "man", name + ".1")
        comp = os.path.join(build, "completion", name)
        for f in (page, comp):
            if not os.path.isfile(f):
                errors.append(f"{f}: not built")
        if errors:
            continue
        text = open(page).read()
        commands = cli_docs.walk(program)
        for cmd in commands[1:]:  # every subcommand, nested ones too
            if f'.SS "{cli_docs.roff(cmd.name)}"' not in text:
                errors.append(f"{page}: no section for `{cmd.name}`")
        for flag in commands[0].flags():
            if f"\\fB{cli_docs.roff(flag)}\\fR" not in text:
                errors.append(f"{page}: {flag} of `{name}` missing")
        p = subprocess.run(["bash", "-n", comp], capture_output=True, text=True)
        if p.returncode != 0:
            errors.append(f"{comp}: not bash: {p.stderr.strip()}")
    if errors:
        print("\n".join(errors))
        return 1

    comp = os.path.join(build, "completion", "rapid")
    text = open(comp).read()
    predict = cli_docs.Command(["rapid", "predict"], cli_docs.help_text(rapid, ["predict"]))
    if len(predict.flags()) < 20:
        errors.append(f"rapid predict --help parsed to {len(predict.flags())} flags only")
    for flag in predict.flags():
        if f" {flag} " not in text and f'"{flag} ' not in text and f' {flag}"' not in text:
            errors.append(f"{comp}: {flag} of `rapid predict` missing")
    top = cli_docs.Command(["rapid"], cli_docs.help_text(rapid, []))
    checks = [
        (["rapid", ""], top.subcommands()),  # every subcommand, netcheck and list included
        (["rapid", "net"], ["netcheck"]),
        (["rapid", "predict", "job.yaml", "--fid"], ["--fidelity"]),
        (["rapid", "list", ""], ["models", "hardware", "networks", "frameworks", "serving"]),
        (["rapid", "op", "att"], ["attention"]),
        (["rapid", "op", "attention", "--imp"], ["--impl"]),
    ]
    for words, want in checks:
        got = complete(comp, words)
        if got is None or sorted(got) != sorted(want):
            errors.append(f"completing {' '.join(words)!r}: {got}, expected {want}")
    if "netcheck" not in top.subcommands() or "list" not in top.subcommands():
        errors.append(f"rapid --help lists {top.subcommands()}")
    got = complete(os.path.join(build, "completion", "rapid-sweep"), ["rapid-sweep", "--thr"])
    if got != ["--threads"]:
        errors.append(f"completing 'rapid-sweep --thr': {got}")
    print("\n".join(errors) if errors else "man pages and completion: ok")
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
