#!/usr/bin/env python3
"""Man pages and bash completion of rapid and rapid-sweep from their own --help (issue 34).

    cli_docs.py --out DIR --version V PROGRAM [PROGRAM ...]

Runs `PROGRAM --help` and `PROGRAM SUB ... --help` for every subcommand the help lists
(CLI11's layout: "Usage:", then "Positionals:", "Options:" and "Subcommands:" sections of
two-space-indented entries), and writes DIR/man/NAME.1 (one page: the program, then a
section per subcommand) and DIR/completion/NAME (bash: subcommands, the flags of each,
files elsewhere). Python standard library only; run at build time (CMakeLists.txt).
"""
import argparse
import datetime
import os
import re
import subprocess
import sys

SECTIONS = ("Positionals:", "Options:", "Subcommands:")


class Command:
    """One program or subcommand as its --help describes it."""

    def __init__(self, path, text):
        self.path = path  # ["rapid", "op", "attention"]
        lines = text.splitlines()
        self.about = lines[0].strip() if lines and not lines[0].startswith("Usage:") else ""
        self.usage = ""
        self.entries = {s: [] for s in SECTIONS}  # (names, argument, description)
        section = None
        for line in lines:
            if line.startswith("Usage:"):
                # argv[0] as run (a build path) -> the program's name
                words = line[len("Usage:"):].split()
                self.usage = " ".join([os.path.basename(words[0])] + words[1:]) if words else ""
                section = None
            elif line in SECTIONS:
                section = line
            elif section and re.match(r"  \S", line):
                # "  -o,--output TEXT REQUIRED   HDF5 result file": names, argument, text
                m = re.match(r"  (\S.*?)(?:\s{2,}(.*))?$", line)
                left, desc = m.group(1), m.group(2) or ""
                first, _, argument = left.partition(" ")
                self.entries[section].append([first.split(","), argument.strip(), desc.strip()])
            elif section and line.startswith("   ") and self.entries[section]:
                e = self.entries[section][-1]  # a description on the line below
                e[2] = (e[2] + " " + line.strip()).strip()
            elif not line.strip():
                section = None

    @property
    def name(self):
        return " ".join(self.path)

    def subcommands(self):
        return [names[0] for names, _, _ in self.entries["Subcommands:"]]

    def flags(self):
        return [n for names, _, _ in self.entries["Options:"] for n in names if n.startswith("-")]

    def value_flags(self):
        """Flags that take a value (an argument type after them)."""
        return [n for names, arg, _ in self.entries["Options:"] if arg and
                not arg.startswith(("Excludes", "Needs")) for n in names]


def help_text(program, args):
    p = subprocess.run([program] + args + ["--help"], capture_output=True, text=True,
                       timeout=120)
    if p.returncode != 0:
        sys.exit(f"cli_docs.py: {program} {' '.join(args)} --help exited {p.returncode}: "
                 f"{p.stderr.strip()}")
    return p.stdout


def walk(program):
    """The program and every subcommand below it, parents first."""
    name = os.path.basename(program)
    out, todo = [], [[]]
    while todo:
        args = todo.pop(0)
        cmd = Command([name] + args, help_text(program, args))
        out.append(cmd)
        todo.extend(args + [s] for s in cmd.subcommands())
    return out


def roff(text):
    """Text safe in a roff line: backslashes, leading dots and quotes, dashes."""
    text = text.replace("\\", "\\e").replace("-", "\\-")
    return "\\&" + text if text.startswith((".", "'")) else text


def man_page(commands, version):
    top = commands[0]
    name = top.path[0]
    epoch = os.environ.get("SOURCE_DATE_EPOCH")  # reproducible builds
    day = datetime.date.fromtimestamp(int(epoch)) if epoch else datetime.date.today()
    date = day.isoformat()
    out = [f'.TH {name.upper()} 1 "{date}" "rapid-sweep {version}" "User Commands"',
           ".SH NAME", f"{roff(name)} \\- {roff(top.about.split(': ', 1)[-1])}",
           ".SH SYNOPSIS", f".B {roff(top.usage)}", ".SH DESCRIPTION", roff(top.about)]
    for cmd in commands:
        if cmd is top:
            out.append(".SH OPTIONS")
        else:
            out += [f'.SS "{roff(cmd.name)}"', roff(cmd.about), ".PP",
                    f"Usage: \\fB{roff(cmd.usage)}\\fR"]
        for section in SECTIONS:
            if cmd is top and section == "Subcommands:" and cmd.entries[section]:
                out.append(".SH COMMANDS")  # a summary, then a subsection each
            for names, arg, desc in cmd.entries[section]:
                head = ", ".join(f"\\fB{roff(n)}\\fR" for n in names)
                head += f" \\fI{roff(arg)}\\fR" if arg else ""
                out += [".TP", head, roff(desc)]
    out += [".SH EXIT STATUS", "0 done; 2 bad input (one line naming the file, key, value and "
            "what was expected; an unknown flag, key or name says what it was likely meant to "
            "be); 1 an internal error" + ("; 3 a sweep stopped (resume it)" if name ==
                                          "rapid-sweep" else "") + ".",
            ".SH FILES", "Configs named in a job are looked up in \\fB$RAPID_CONFIG_DIR\\fR, "
            "<job dir>/../configs, <job dir>/configs, ./configs, then "
            "PREFIX/share/rapid-sweep/configs; \\fBrapid list\\fR shows the names found.",
            ".SH SEE ALSO", ", ".join(f"\\fB{n}\\fR(1)" for n in ("rapid", "rapid-sweep")
                                      if n != name) + "; PREFIX/share/doc/rapid-sweep/README.md"]
    return "\n".join(out) + "\n"


def completion(commands):
    """A bash function completing subcommands, then each (sub)command's flags, then files."""
    name = commands[0].path[0]
    func = "_" + re.sub(r"\W", "_", name)
    paths = [" ".join(c.path[1:]) for c in commands if len(c.path) > 1]
    lines = [f"# bash completion of {name}: generated from `{name} --help` at build time by",
             "# cmake/cli_docs.py (do not edit).",
             f"{func}() {{",
             '  local cur="${COMP_WORDS[COMP_CWORD]}" prev="${COMP_WORDS[COMP_CWORD-1]}"',
             '  local path="" i',
             "  for ((i = 1; i < COMP_CWORD; i++)); do",
             '    case "${path:+$path }${COMP_WORDS[i]}" in']
    for p in paths:
        lines.append(f'      "{p}") path="${{path:+$path }}${{COMP_WORDS[i]}}" ;;')
    lines += ["    esac", "  done", "  local flags words values", '  case "$path" in']
    for c in commands:
        words = c.subcommands() + kinds_of(c)
        lines += [f'    "{" ".join(c.path[1:])}")',
                  f'      flags="{" ".join(c.flags())}"',
                  f'      values="{" ".join(c.value_flags())}"',
                  f'      words="{" ".join(words)}" ;;']
    lines += ["  esac",
              '  if [[ " $values " == *" $prev "* ]]; then',
              '    COMPREPLY=($(compgen -f -- "$cur"))',
              '  elif [[ "$cur" == -* ]]; then',
              '    COMPREPLY=($(compgen -W "$flags" -- "$cur"))',
              '  elif [[ -n "$words" ]]; then',
              '    COMPREPLY=($(compgen -W "$words" -- "$cur"))',
              "  else",
              '    COMPREPLY=($(compgen -f -- "$cur"))',
              "  fi",
              "}",
              f"complete -o filenames -F {func} {name}"]
    return "\n".join(lines) + "\n"


def kinds_of(cmd):
    """Words a positional takes when its help lists them ("what to list: a, b, c (...")."""
    for names, _, desc in cmd.entries["Positionals:"]:
        m = re.match(r"what to list: ([\w, -]+?) \(", desc)
        if m:
            return [w.strip() for w in m.group(1).split(",")]
    return []


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--out", required=True, help="directory for man/ and completion/")
    p.add_argument("--version", required=True, help="the project's version")
    p.add_argument("programs", nargs="+", help="built programs (rapid, rapid-sweep)")
    a = p.parse_args()
    for sub in ("man", "completion"):
        os.makedirs(os.path.join(a.out, sub), exist_ok=True)
    for program in a.programs:
        commands = walk(program)
        name = commands[0].path[0]
        with open(os.path.join(a.out, "man", name + ".1"), "w") as f:
            f.write(man_page(commands, a.version))
        with open(os.path.join(a.out, "completion", name), "w") as f:
            f.write(completion(commands))
    return 0


if __name__ == "__main__":
    sys.exit(main())
