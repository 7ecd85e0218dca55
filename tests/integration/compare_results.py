#!/usr/bin/python3
"""Two rapid-sweep files hold the same results: scripts/compare-results (every group,
dataset and attribute but the run's provenance), with the run's layout (ranks, threads per
rank) counted as the run too, since these tests compare an N-rank sweep with a 1-rank one.

    compare_results.py A.h5 B.h5
"""
import importlib.machinery
import importlib.util
import os
import sys

_SCRIPT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "scripts",
                       "compare-results")
_loader = importlib.machinery.SourceFileLoader("compare_results_script", _SCRIPT)
_spec = importlib.util.spec_from_loader(_loader.name, _loader)
script = importlib.util.module_from_spec(_spec)
_loader.exec_module(script)

# Root attributes that describe the run (a caller may add to them before compare()).
RUN_ATTRIBUTES = set(script.IGNORED_ROOT_ATTRS) | {"ranks", "threads_per_rank"}


def compare(pa, pb):
    """The differences of the two files, one line each."""
    return script.compare(pa, pb, RUN_ATTRIBUTES)


def main(argv):
    errors = compare(*argv)
    for e in errors:
        print("FAIL:", e)
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
