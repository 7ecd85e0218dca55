#!/usr/bin/python3
"""analysis/README.md's example line of report.py is what report.py prints on the demo's
result (jobs/llama3-70b-256xh100.yaml swept with --fidelity auto, as scripts/demo does):
the README's `Best is +X% tokens/s/GPU over baseline LAYOUT ...` is compared with a fresh
report run on that file, so a model change that moves the gain fails here until the README
is updated (the figure is not frozen in this test).

    check_report_readme.py analysis/README.md analysis/report.py DEMO.h5
"""
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from check_common import run  # noqa: E402

LINE = re.compile(r"Best is ([+-]\d+\.\d)% tokens/s/GPU over baseline (\S+ \S+ \S+)")


def main(readme, report, result):
    errors = []
    text = open(readme, encoding="utf-8").read()
    documented = LINE.findall(text)
    if len(documented) != 1:
        errors.append(f"{readme}: {len(documented)} 'Best is ...% tokens/s/GPU over baseline' "
                      "examples, expected one")
    printed = LINE.findall(run([sys.executable, report, result], errors).stdout)
    if len(printed) != 1:
        errors.append(f"report.py printed {len(printed)} 'Best is' lines, expected one")
    if documented and printed and documented[0] != printed[0]:
        errors.append(f"{readme} shows 'Best is {documented[0][0]}% ... over baseline "
                      f"{documented[0][1]}', report.py prints 'Best is {printed[0][0]}% ... "
                      f"over baseline {printed[0][1]}' on {result}: update the README")
    print("\n".join(f"FAIL: {e}" for e in errors) if errors else
          f"analysis/README.md's report.py example matches the demo: Best is {printed[0][0]}% "
          f"over baseline {printed[0][1]}")
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:4]))
