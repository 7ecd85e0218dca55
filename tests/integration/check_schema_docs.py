#!/usr/bin/python3
"""The lists that describe the result file stay in step with the C++ schema (issue 31
part 6): a file rapid-sweep writes is the truth (src/io/result_schema.cpp and
src/io/variant_table.cpp write it from one table each).

- every /points dataset has a row in the README's column table, and every column the table
  names is in the file (a row may name several: "dp, tp, pp, cp, ep, etp, vpp");
- the README's unit for a column is the dataset's `unit` attribute, and a plain numeric type
  (int32, uint8, float64, ...) its dtype;
- every float64 parameter column of /variants reaches the analysis: rapid_results.load()'s
  variants frame has it (variant_params()), knobs gives it a label and resolves its
  command-line name; and every name of VARIANT_PARAMS and knobs.PARAMS is in the file;
- every column rapid_results.SCHEMA_ORDER names is a /points dataset.

    check_schema_docs.py README.md RESULTS.h5
"""
import os
import re
import sys

import h5py

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "analysis"))
import rapid_results  # noqa: E402
from rapid_analyze import knobs  # noqa: E402

# /variants datasets that are not hardware parameters: the row key and the entry's identity.
VARIANT_BOOKKEEPING = {"hardware_index", "names", "base", "overrides", "is_base"}


def readme_columns(text):
    """{column: (type, unit)} from the README table whose header is
    `| column | type | unit | description |`."""
    table = text.split("| column | type | unit | description |", 1)[1]
    out = {}
    for line in table.splitlines()[2:]:
        if not line.startswith("|"):
            break
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        for name in re.split(r",\s*", cells[0]):
            out[name.strip("`")] = (cells[1], cells[2].strip("`"))
    return out


def main(readme_path, results_path):
    failures = []
    with open(readme_path, encoding="utf-8") as f:
        documented = readme_columns(f.read())
    with h5py.File(results_path, "r") as f:
        points = {}
        for name, d in f["points"].items():
            unit = d.attrs.get("unit", "")
            points[name] = (str(d.dtype), unit.decode() if isinstance(unit, bytes) else str(unit))
        variants = [name for name in f["variants"] if name not in VARIANT_BOOKKEEPING]
    for name in sorted(set(points) - set(documented)):
        failures.append(f"README.md: column '{name}' of /points has no row in the column table")
    for name in sorted(set(documented) - set(points)):
        failures.append(f"README.md: the column table names '{name}', which /points lacks")
    for name in sorted(set(points) & set(documented)):
        (doc_type, doc_unit), (dtype, unit) = documented[name], points[name]
        if doc_unit != unit:
            failures.append(f"README.md: column '{name}' unit '{doc_unit}', the file says '{unit}'")
        if re.fullmatch(r"u?int\d+|float\d+", doc_type) and doc_type != dtype:
            failures.append(f"README.md: column '{name}' type {doc_type}, the file has {dtype}")
    for where, names in (("analysis/rapid_results.py VARIANT_PARAMS", rapid_results.VARIANT_PARAMS),
                         ("analysis/rapid_analyze/knobs.py PARAMS", list(knobs.PARAMS))):
        for name in sorted(set(names) - set(variants)):
            failures.append(f"{where}: '{name}' is not a /variants dataset")
    frame = rapid_results.load(results_path).variants
    loaded = rapid_results.variant_params(frame)
    for name in variants:
        if name not in loaded:
            failures.append(f"analysis/rapid_results.py: /variants '{name}' is not loaded")
        elif knobs.resolve(knobs.short_name(name), frame) != name or not knobs.label(name):
            failures.append(f"analysis/rapid_analyze/knobs.py: /variants '{name}' is not a knob")
    for name in rapid_results.SCHEMA_ORDER:
        if name not in points:
            failures.append(f"analysis/rapid_results.py SCHEMA_ORDER: '{name}' is not a /points "
                            "dataset")
    for line in failures:
        print("FAIL", line)
    print(f"{len(points)} /points columns, {len(documented)} README rows' columns, "
          f"{len(variants)} /variants parameters: {len(failures)} mismatches")
    return 1 if failures else 0


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    sys.exit(main(sys.argv[1], sys.argv[2]))
