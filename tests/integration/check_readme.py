#!/usr/bin/python3
"""The README's commands as a newcomer types them (issue 10 part 8): every command in its
shell code blocks names a program that exists, every `--flag` given to rapid-sweep, rapid
SUBCOMMAND, an analysis script or a scripts/ entry appears in that program's `--help`,
every file a command reads exists, every mpirun line runs on a 2-core machine
(`--oversubscribe`) and the README says how to run mpirun as root. Both ways for
rapid-sweep: each option its `--help` lists is in the README's option table.

    check_readme.py README.md BUILD_DIR
"""
import os
import re
import shlex
import subprocess
import sys

PY = "/usr/bin/python3"


def shell_commands(text):
    """Commands of the ```sh blocks: continuation lines (a trailing backslash, or a usage
    line going on with `[--option` or `-o`) joined, comments dropped."""
    cmds = []
    for block in re.findall(r"```sh\n(.*?)```", text, re.S):
        lines = []
        for line in block.replace("\\\n", " ").splitlines():
            line = line.split(" #", 1)[0].strip()
            if not line or line.startswith("#"):
                continue
            if lines and line.startswith(("[", "-")):
                lines[-1] += " " + line
            else:
                lines.append(line)
        for line in lines:
            cmds.extend(c.strip() for c in re.split(r"&&|\|\||;", line) if c.strip())
    return cmds


class Helps:
    """`--help` text of each program, asked once."""

    def __init__(self, root, build):
        self.root, self.build, self.cache = root, build, {}

    def get(self, argv):
        key = tuple(argv)
        if key not in self.cache:
            p = subprocess.run(argv + ["--help"], capture_output=True, text=True, timeout=60,
                               cwd=self.root)
            self.cache[key] = p.stdout + p.stderr if p.returncode == 0 else None
        return self.cache[key]


def flags_of(words):
    """Long options among `words`, usage brackets and alternatives included: `[--a N|--b]`."""
    return [f for w in words for f in re.findall(r"(?:^|[\[|])(--[\w-]+)", w)]


def check_command(cmd, helps, root, build, errors):
    words = shlex.split(cmd)
    if words and words[0] == "export":
        return None
    if words and words[0] == "mpirun":
        if "--oversubscribe" not in words:
            errors.append(f"{cmd!r}: mpirun without --oversubscribe fails on a 2-core machine")
        i = next((k for k, w in enumerate(words) if "rapid-sweep" in w), None)
        if i is None:
            errors.append(f"{cmd!r}: mpirun of something other than rapid-sweep")
            return None
        words = words[i:]
    if words and words[0] == "sbatch":
        words = [w for w in words[1:] if not w.startswith("-")]
        if not words or not os.path.exists(os.path.join(root, words[0])):
            errors.append(f"{cmd!r}: no batch script")
        return "sbatch"
    prog = words[0] if words else ""
    if prog in (PY, "python3") and len(words) > 1:
        argv, args = [PY, words[1]], words[2:]
    elif prog in ("build/rapid", "build/rapid-sweep", "rapid", "rapid-sweep"):  # or a usage line
        exe = os.path.join(build, os.path.basename(prog))
        argv, args = [exe], words[1:]
        # Subcommands (`rapid op attention`): plain words the program's --help knows.
        while os.path.basename(prog) == "rapid" and args and re.fullmatch(r"[a-z][a-z-]*", args[0]) and \
                helps.get(argv + [args[0]]) is not None:
            argv, args = argv + [args[0]], args[1:]
    elif prog.startswith("scripts/") or prog in ("cmake", "mkdir", "ctest", "cd"):
        if prog.startswith("scripts/") and not os.access(os.path.join(root, prog), os.X_OK):
            errors.append(f"{cmd!r}: {prog} is not an executable script")
        return prog
    else:
        errors.append(f"{cmd!r}: unknown program {prog!r} (add it to check_readme.py)")
        return None
    help_text = helps.get(argv)
    if help_text is None:
        errors.append(f"{cmd!r}: `{' '.join(argv)} --help` fails")
        return None
    for flag in flags_of(args):
        if not re.search(rf"(^|[\s,]){re.escape(flag)}\b", help_text, re.M):
            errors.append(f"{cmd!r}: {flag} is not in `{os.path.basename(argv[-1])} --help`")
    for a in args:
        if re.match(r"^(jobs|configs|tests|data)/[^\s*]+\.(yaml|csv|json)$", a) and \
                not os.path.exists(os.path.join(root, a)):
            errors.append(f"{cmd!r}: {a} does not exist")
    return " ".join(os.path.basename(x) for x in argv)


def main(readme, build):
    root = os.path.dirname(os.path.abspath(readme))
    text = open(readme, encoding="utf-8").read()
    helps = Helps(root, build)
    errors, seen = [], []
    cmds = shell_commands(text)
    for cmd in cmds:
        prog = check_command(cmd, helps, root, build, errors)
        if prog:
            seen.append(prog)
    if "mpirun" in text and "OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1" not in text:
        errors.append("the README runs mpirun but does not say how to as root")
    # rapid-sweep's options, both ways against the README's option table.
    sweep_help = helps.get([os.path.join(build, "rapid-sweep")]) or ""
    listed = set(re.findall(r"^\|\s*`(-\S+?)[`,\s]", text, re.M))
    listed |= {f for row in re.findall(r"^\|\s*`([^|]*)`\s*\|", text, re.M)
               for f in re.findall(r"--[\w-]+", row)}
    for flag in re.findall(r"^\s+(?:-\w,)?(--[\w-]+)", sweep_help, re.M):
        if flag not in ("--help",) and flag not in listed:
            errors.append(f"rapid-sweep {flag} (in --help) is missing from the README's table")
    for e in errors:
        print("FAIL:", e)
    print(f"{len(cmds)} README commands checked ({len(set(seen))} programs: "
          f"{', '.join(sorted(set(seen)))}); {len(errors)} problems")
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:3]))
