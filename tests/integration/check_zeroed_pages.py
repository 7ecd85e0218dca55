#!/usr/bin/python3
"""A resumed file never inherits damage (issue 35, docs/production.md sec 2.1): every 4 KiB
page of a partial file is zeroed in turn (a sector lost, a page of the page cache never
written) and the sweep resumed. Each resume must end in exit 2 with one message, or in
exit 0 with a file equal row for row to the uninterrupted run (compare_results.py reads
every dataset and attribute, the variable-length strings included); never a hang, never
exit 0 with another or unreadable file. The partial file has 4 of the job's 8 rows (a
sweep stopped after its first chunk of 4 by RAPID_SWEEP_TEST_STOP_AFTER_CHUNKS=1).

    check_zeroed_pages.py RAPID_SWEEP JOB OUT_DIR
"""
import os
import shutil
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
PAGE = 4096


def main(exe, job, out_dir):
    shutil.rmtree(out_dir, ignore_errors=True)
    os.makedirs(out_dir)
    os.chdir(out_dir)
    sweep = [exe, job, "--quiet", "--chunk", "4"]
    subprocess.run(sweep + ["-o", "ref.h5"], check=True, timeout=60)
    env = dict(os.environ, RAPID_SWEEP_TEST_STOP_AFTER_CHUNKS="1")
    p = subprocess.run(sweep + ["-o", "out.h5"], env=env, capture_output=True, timeout=60)
    partials = [f for f in os.listdir(".") if f.startswith(".rapid-sweep.partial-")
                and f.endswith(".h5")]
    if p.returncode != 3 or len(partials) != 1:
        print(f"FAIL: the stopped sweep exited {p.returncode} with partial files {partials}")
        return 1
    partial = partials[0]
    shutil.copyfile(partial, "pristine.h5")
    size = os.path.getsize("pristine.h5")
    outcomes, problems = {}, []
    for page in range((size + PAGE - 1) // PAGE):
        for f in os.listdir("."):
            if f.startswith(".rapid-sweep.partial-") or f == "out.h5":
                os.remove(f)
        shutil.copyfile("pristine.h5", partial)
        with open(partial, "r+b") as f:
            f.seek(page * PAGE)
            f.write(b"\0" * min(PAGE, size - page * PAGE))
        try:
            r = subprocess.run(sweep + ["-o", "out.h5", "--resume"], capture_output=True,
                               text=True, timeout=60)
        except subprocess.TimeoutExpired:
            problems.append(f"page {page}: the resume hangs")
            continue
        if r.returncode == 2:
            ours = [l for l in r.stderr.splitlines() if l.startswith("rapid-sweep:")]
            if len(ours) != 1 or os.path.exists("out.h5"):
                problems.append(f"page {page}: exit 2 with {len(ours)} messages, "
                                f"out.h5 {'left' if os.path.exists('out.h5') else 'absent'}")
            outcomes["exit 2"] = outcomes.get("exit 2", 0) + 1
            continue
        if r.returncode != 0:
            problems.append(f"page {page}: exit {r.returncode}: {r.stderr.strip()[-200:]}")
            continue
        try:
            c = subprocess.run([sys.executable, os.path.join(HERE, "compare_results.py"),
                                "ref.h5", "out.h5"], capture_output=True, text=True, timeout=60)
        except subprocess.TimeoutExpired:
            problems.append(f"page {page}: exit 0, and reading out.h5 hangs")
            continue
        if c.returncode != 0:
            problems.append(f"page {page}: exit 0 with another file: {c.stdout.strip()[-200:]}")
            continue
        outcomes["exit 0, the same file"] = outcomes.get("exit 0, the same file", 0) + 1
    pages = (size + PAGE - 1) // PAGE
    print(f"{pages} pages of {partial} zeroed in turn: "
          + ", ".join(f"{v} {k}" for k, v in sorted(outcomes.items())))
    for p in problems:
        print("FAIL:", p)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:]))
