"""The command line of analysis/rapid-analyze: one subcommand per section, `report` for all
of them on one HTML page. Exit codes: 0 done, 2 bad input (one line on stderr)."""

from __future__ import annotations

import argparse
import os
import sys

import rapid_results as rr

from . import __version__, common, sections, textout

PROG = "rapid-analyze"

HELP = {
    "top": "best layouts per (GPU count, hardware variant) by tokens/s/GPU, speedup over "
           "the baseline, warnings, fidelity (and the analytical rank beside the DES one)",
    "variants": "variant x op class -> speedup over the base hardware at fixed layout, and "
                "best vs best end to end",
    "roofline": "predicted speedup against HBM bandwidth (and L2 size) for GEMM, attention, "
                "memory-bound ops and end to end",
    "heatmap": "best tokens/s/GPU over two knobs, each cell's best layout, empty cells "
               "explained",
    "pareto": "Pareto fronts of throughput against GPU count, memory headroom and energy "
              "per token",
    "breakdown": "stacked bars of step time by op class and of memory for the top N layouts",
    "latency": "serving sweeps (mode: inference): per layout TTFT and ITL against output "
               "tokens/s/GPU over the loads, the best layout per ITL budget",
    "report": "all of the above on one self-contained HTML page (a serving file: latency)",
}


class _Parser(argparse.ArgumentParser):
    def error(self, message):
        """argparse's own errors as one line, exit 2."""
        print(f"{PROG}: {message}", file=sys.stderr)
        sys.exit(2)


def _positive(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r}: expected a positive integer") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"{text!r}: expected a positive integer")
    return value


def _dpi(text: str) -> int:
    """--dpi: pixels per inch, 10 to 1200 (an 18 x 14 inch heatmap at 1200 is 21600 x 16800
    pixels, about what matplotlib's Agg renderer draws; 2^16 pixels a side is its limit)."""
    try:
        value = int(text)
    except ValueError:
        value = 0
    if not 10 <= value <= 1200:
        raise argparse.ArgumentTypeError(f"{text!r}: expected a whole number of pixels per "
                                         "inch from 10 to 1200")
    return value


def _budgets(text: str) -> tuple:
    """"20,50,100" -> (20.0, 50.0, 100.0): ITL budgets in ms, each > 0."""
    try:
        values = tuple(float(v) for v in text.split(",") if v.strip())
    except ValueError:
        values = ()
    if not values or not all(v > 0 and v < float("inf") for v in values):
        raise argparse.ArgumentTypeError(f"{text!r}: expected milliseconds > 0, comma "
                                         "separated (20,50,100)")
    return tuple(sorted(set(values)))


def parser() -> argparse.ArgumentParser:
    p = _Parser(prog=PROG, description="Tables and figures of a design review from a "
                "rapid-sweep result file (HDF5).")
    p.add_argument("--version", action="version", version=f"{PROG} {__version__}",
                   help="print the version and exit")
    sub = p.add_subparsers(dest="command", required=True, metavar="SUBCOMMAND",
                           parser_class=_Parser)
    for name, text in HELP.items():
        s = sub.add_parser(name, help=text, description=text)
        s.add_argument("file", help="HDF5 file written by rapid-sweep")
        s.add_argument("--hardware", metavar="NAME", help="only this hardware variant")
        s.add_argument("--gpus", metavar="N", type=_positive, help="only this GPU count")
        s.add_argument("--scenario", metavar="NAME",
                       help="this non-ideal scenario (default: the baseline's)")
        if name in ("top", "breakdown", "report"):
            s.add_argument("--top", metavar="N", type=_positive, default=5,
                           help="layouts per group (top) or in all (breakdown) (5)")
        if name == "pareto":
            s.add_argument("--top", metavar="N", type=_positive, default=20,
                           help="rows printed per front (20; the figure shows every point)")
        if name in ("latency", "report"):
            s.add_argument("--itl-budgets", metavar="MS[,MS...]", type=_budgets,
                           default=sections.Options.budgets,
                           help="serving: ITL budgets (ms) of the best layout notes "
                                "(20,50,100)")
        if name in ("heatmap", "report"):
            s.add_argument("--x", default="tp", metavar="KNOB",
                           help="column across: a layout column, hardware, num_gpus or a "
                                "/variants parameter (hbm_bandwidth, l2_size, ...) (tp)")
            s.add_argument("--y", default="pp", metavar="KNOB", help="column down (pp)")
        if name != "top":
            s.add_argument("--dpi", metavar="N", type=_dpi, default=common.FIGURE_DPI,
                           help="pixels per inch of a PNG figure (and of the raster parts of "
                                f"an SVG or PDF) ({common.FIGURE_DPI})"
                                + ("; the page's figures are PNG" if name == "report" else ""))
        if name == "report":
            s.add_argument("-o", "--output", metavar="HTML",
                           help="page to write (default: next to the file, NAME-report.html)")
            continue
        s.add_argument("--csv", action="store_true",
                       help="print the table as CSV (raw values; notes on stderr)")
        if name != "top":
            where = s.add_mutually_exclusive_group()
            where.add_argument("--png", "--figure", dest="png", metavar="PATH",
                               help="draw the figure to PATH, in the format its extension "
                                    "names (.png, .svg, .pdf) or --format's")
            where.add_argument("--out", metavar="DIR",
                               help=f"draw the figure to DIR/NAME-{name}.png (.svg, .pdf "
                                    "with --format)")
            s.add_argument("--format", choices=common.FIGURE_FORMATS, dest="figure_format",
                           help="the figure's format (default: the extension of --png's "
                                "PATH; png for --out)")
    return p


def _options(args) -> sections.Options:
    pareto = args.command == "pareto"
    return sections.Options(hardware=args.hardware, scenario=args.scenario, gpus=args.gpus,
                            top=5 if pareto else getattr(args, "top", 5),
                            front_rows=args.top if pareto else 20,
                            x=getattr(args, "x", "tp"), y=getattr(args, "y", "pp"),
                            budgets=getattr(args, "itl_budgets", sections.Options.budgets))


def _writable(option: str, path: str, what: str) -> str:
    """`path` when a file can be created there: its directory exists and it is not a
    directory itself; UsageError naming the option otherwise."""
    folder = os.path.dirname(os.path.abspath(path))
    if os.path.isdir(path):
        raise common.UsageError(f"{option} {path}: is a directory (expected the path of "
                                f"{what})")
    if not os.path.isdir(folder):
        raise common.UsageError(f"{option} {path}: directory {folder} does not exist "
                                f"(expected the path of {what} in an existing directory)")
    return path


def figure_format(option: str, path: str, fmt: str | None) -> str:
    """The format of the figure written to `path`: `fmt` (--format) when given, else the
    path's extension (.png, .svg, .pdf, any case); UsageError naming the option when the
    extension names none of them and no --format is given, or names another than
    --format's."""
    ext = os.path.splitext(path)[1].lower().lstrip(".")
    names = ", ".join(f".{f}" for f in common.FIGURE_FORMATS)
    if fmt is not None:
        if ext in common.FIGURE_FORMATS and ext != fmt:
            raise common.UsageError(f"--format {fmt}: {option} {path} ends in .{ext} "
                                    f"(expected the extension and --format to agree)")
        return fmt
    if ext not in common.FIGURE_FORMATS:
        raise common.UsageError(f"{option} {path}: no figure format in its extension "
                                f"(expected a name ending in {names}, or --format "
                                f"{'|'.join(common.FIGURE_FORMATS)})")
    return ext


def _figure_path(args) -> tuple[str, str] | None:
    """Where the figure goes and in which format: --png PATH (its directory must exist;
    the format its extension's or --format's), or DIR/NAME-SUB.FORMAT for --out DIR (DIR
    must not be a file; run() creates it; png unless --format); checked before anything is
    read or printed."""
    fmt = getattr(args, "figure_format", None)
    if getattr(args, "png", None):
        fmt = figure_format("--png", args.png, fmt)
        return _writable("--png", args.png, f"a {fmt.upper()} file"), fmt
    if getattr(args, "out", None):
        if os.path.exists(args.out) and not os.path.isdir(args.out):
            raise common.UsageError(f"--out {args.out}: not a directory (expected a "
                                    "directory for the figure, created when missing)")
        stem = os.path.splitext(os.path.basename(args.file))[0]
        fmt = fmt or "png"
        return os.path.join(args.out, f"{stem}-{args.command}.{fmt}"), fmt
    if fmt is not None:
        raise common.UsageError(f"--format {fmt}: no figure to write (expected --png PATH "
                                "or --out DIR with it)")
    return None


def run(args) -> int:
    report = args.command == "report"
    if report and args.output:
        _writable("-o", args.output, "an HTML file")
    figure = None if report else _figure_path(args)
    res = rr.load_for_cli(args.file, PROG)
    if res is None:
        return 2
    opts = _options(args)
    if report:
        from . import html_report
        out = args.output or _writable("-o", os.path.splitext(args.file)[0] + "-report.html",
                                       "an HTML file")
        html_report.write(res, opts, out, dpi=args.dpi)
        print(f"Report: {out}")
        return 0
    section = sections.SECTIONS[args.command](res, opts)
    if getattr(args, "out", None):
        os.makedirs(args.out, exist_ok=True)  # with its parents
    if args.csv:
        sys.stdout.write(textout.as_csv(section.table))
        for note in section.table.notes:
            print(f"{PROG}: note: {note}", file=sys.stderr)
    else:
        print(textout.as_text(section.table))
    if figure and section.draw is not None:
        from . import plots
        path, fmt = figure
        plots.save_figure(section.draw(), path, fmt, args.dpi)
        print(f"Figure: {path}", file=sys.stderr if args.csv else sys.stdout)
    return 0


def main(argv=None) -> int:
    args = parser().parse_args(argv)
    try:
        return run(args)
    except common.UsageError as e:
        print(f"{PROG}: {e}", file=sys.stderr)
        return 2
    except OSError as e:  # an output path that cannot be written
        print(f"{PROG}: {e.filename or ''}: {e.strerror or e}", file=sys.stderr)
        return 2
