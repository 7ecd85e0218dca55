"""`latency`: the throughput-latency curves of a serving sweep (a job with `mode: inference`):
per (hardware entry, GPU count) and layout, output tokens/s/GPU against TTFT and ITL over
the loads offered (concurrency or arrival rate), and the best layout under each ITL
budget."""

from __future__ import annotations

import numpy as np
import pandas as pd

from . import common, textout

# The load columns of a serving file: a job offers one of them (the other is NaN).
LOADS = {"concurrency": "concurrency", "arrival_rate_per_s": "arrival rate (1/s)"}
BUDGETS_MS = (20.0, 50.0, 100.0)  # ITL budgets of the notes (--itl-budgets)
MS = 1e3

# Latency columns (seconds in the file) -> their name in the table (milliseconds); the
# percentiles are written by the DES only (the closed form has no tails) and shown when some
# row has them.
LATENCIES = {"ttft_s": "TTFT (ms)", "ttft_p50_s": "TTFT p50 (ms)", "ttft_p90_s": "TTFT p90 (ms)",
             "ttft_p99_s": "TTFT p99 (ms)", "itl_s": "ITL (ms)",
             "itl_start_s": "ITL start (ms)", "itl_mid_s": "ITL mid (ms)",
             "itl_end_s": "ITL end (ms)", "itl_p50_s": "ITL p50 (ms)",
             "itl_p90_s": "ITL p90 (ms)", "itl_p99_s": "ITL p99 (ms)"}
# The same for end to end, in seconds.
E2E = {"e2e_latency_s": "E2E (s)", "e2e_p50_s": "E2E p50 (s)", "e2e_p90_s": "E2E p90 (s)",
       "e2e_p99_s": "E2E p99 (s)"}
DES_ONLY = ("ttft_p50_s", "ttft_p90_s", "ttft_p99_s", "itl_p50_s", "itl_p90_s", "itl_p99_s",
            "e2e_p50_s", "e2e_p90_s", "e2e_p99_s")

_STATUS_WHY = {"overloaded": "overloaded (the load outpaces the deployment: no steady "
                             "state, latency grows without bound)",
               "oom": "OOM (the weights and one longest request's KV cache do not fit)"}


def is_serving(attrs: dict) -> bool:
    """Whether a file is a serving sweep by its root attribute `mode`."""
    return str(attrs.get("mode", "training")) == "inference"


def serving_rows(points: pd.DataFrame) -> pd.DataFrame:
    """The rows with a load (concurrency or arrival rate): a serving sweep's points; none in
    a training file (both NaN there, or the columns absent in older files)."""
    mask = np.zeros(len(points), dtype=bool)
    for col in LOADS:
        if col in points:
            mask |= np.isfinite(points[col].to_numpy(dtype=float))
    return points[mask]


def load_columns(points: pd.DataFrame) -> list[str]:
    """The load columns these rows use (one in a file from one job)."""
    return [c for c in LOADS if c in points and np.isfinite(points[c].astype(float)).any()]


def serving_layout(row: pd.Series) -> str:
    """"dp2 tp4 pp1": replicas (dp), then a replica's tp and pp; cp, ep, etp when not 1. The
    training knobs (mbs, sp, recompute, ZeRO) do not apply to serving."""
    parts = [f"dp{row.dp}", f"tp{row.tp}", f"pp{row.pp}"]
    parts += [f"{k}{row[k]}" for k in ("cp", "ep", "etp") if k in row and row[k] != 1]
    return " ".join(parts)


def load_text(row: pd.Series) -> str:
    """The load of a row as a figure labels it: "64" (concurrency), "4/s" (arrival rate)."""
    c = row.get("concurrency", np.nan)
    if np.isfinite(c):
        return f"{c:g}"
    return f"{row.get('arrival_rate_per_s', np.nan):g}/s"


def load_words(row: pd.Series) -> str:
    """"concurrency 64", "arrival rate 4/s"."""
    c = row.get("concurrency", np.nan)
    if np.isfinite(c):
        return f"concurrency {c:g}"
    return f"arrival rate {row.get('arrival_rate_per_s', np.nan):g}/s"


def _sorted(points: pd.DataFrame) -> pd.DataFrame:
    """Rows in table order: hardware entry, GPU count, layout (tp, pp, ep, dp), load."""
    keys = ["hardware_index", "num_gpus", "tp", "pp", "ep", "cp", "dp"]
    keys = [k for k in keys if k in points] + load_columns(points)
    return points.sort_values(keys, kind="stable")


def curve_frame(points: pd.DataFrame) -> pd.DataFrame:
    """One row per point: group (GPUs, hardware), layout, load, status, throughput, the
    latencies in ms and E2E in s (the percentiles only when some row has them), running
    batch, max concurrency."""
    pts = _sorted(serving_rows(points))
    loads = load_columns(pts)
    out = pd.DataFrame({"GPUs": pts.num_gpus.astype(int).to_numpy(),
                        "hardware": pts.hardware.to_numpy(),
                        "layout": [serving_layout(r) for _, r in pts.iterrows()]})
    for col in loads:
        out[LOADS[col]] = pts[col].to_numpy(dtype=float)
    out["status"] = pts.status.astype(str).to_numpy()
    if "fidelity" in pts and pts.fidelity.astype(str).nunique() > 1:
        out["fidelity"] = pts.fidelity.astype(str).to_numpy()
    out["output tokens/s/GPU"] = pts.tokens_per_s_per_gpu.to_numpy(dtype=float)
    total = pts.output_tokens_per_s if "output_tokens_per_s" in pts else pts.tokens_per_s
    out["output tokens/s"] = total.to_numpy(dtype=float)
    for columns, scale in ((LATENCIES, MS), (E2E, 1.0)):
        for col, label in columns.items():
            if col not in pts:
                continue
            values = pts[col].to_numpy(dtype=float)
            if col in DES_ONLY and not np.isfinite(values).any():
                continue
            out[label] = values * scale
    for col, label in (("running_batch", "running batch"),
                       ("max_concurrency", "max concurrency")):
        if col in pts:
            out[label] = pts[col].to_numpy(dtype=float)
    out["point"] = pts.index.astype(int)
    return out


TIE = 1e-9  # throughputs this close (relative) are a tie, broken by the lower ITL


def best_point(rows: pd.DataFrame):
    """The point of the highest tokens/s/GPU among `rows`; of those that tie with it (an
    arrival rate every layout keeps up with gives each the offered load), the lowest mean
    ITL, then the first."""
    tps = rows.tokens_per_s_per_gpu.astype(float)
    tied = rows[tps >= tps.max() * (1 - TIE)]
    return tied.itl_s.astype(float).idxmin()


def best_under(points: pd.DataFrame, budgets_ms) -> pd.DataFrame:
    """Per (hardware entry, GPU count) and ITL budget: the ok row of the highest output
    tokens/s/GPU whose mean ITL is within the budget (NaN and an empty layout when none
    is), with its layout, load, ITL and TTFT."""
    pts = serving_rows(points)
    ok = common.ok_rows(pts)
    ok = ok[np.isfinite(ok.itl_s.astype(float))]
    loads = load_columns(pts)
    rows = []
    groups = pts.groupby(["hardware_index", "num_gpus"], sort=True)
    for (hw, gpus), group in groups:
        fits = ok[(ok.hardware_index == hw) & (ok.num_gpus == gpus)]
        for budget in budgets_ms:
            within = fits[fits.itl_s * MS <= budget]
            row = {"GPUs": int(gpus), "hardware": group.hardware.iloc[0],
                   "ITL budget (ms)": float(budget), "output tokens/s/GPU": np.nan,
                   "layout": ""}
            row.update({LOADS[c]: np.nan for c in loads})
            row.update({"ITL (ms)": np.nan, "TTFT (ms)": np.nan, "point": np.nan})
            if not within.empty:
                best = within.loc[best_point(within)]
                row.update({"output tokens/s/GPU": best.tokens_per_s_per_gpu,
                            "layout": serving_layout(best),
                            **{LOADS[c]: float(best[c]) for c in loads},
                            "ITL (ms)": best.itl_s * MS, "TTFT (ms)": best.ttft_s * MS,
                            "point": int(best.name)})
            rows.append(row)
    return pd.DataFrame(rows, columns=["GPUs", "hardware", "ITL budget (ms)",
                                       "output tokens/s/GPU", "layout",
                                       *[LOADS[c] for c in loads], "ITL (ms)", "TTFT (ms)",
                                       "point"])


def _ms(value: float) -> str:
    return textout.format_value("(ms)", value)


def budget_notes(points: pd.DataFrame, best: pd.DataFrame) -> list[str]:
    """A sentence per (group, budget): the best layout within it, or why none is."""
    pts = serving_rows(points)
    ok = common.ok_rows(pts)
    ok = ok[np.isfinite(ok.itl_s.astype(float))]
    several = pts.groupby(["hardware_index", "num_gpus"]).ngroups > 1
    notes = []
    for (hw, gpus), rows in best.groupby(["hardware", "GPUs"], sort=False):
        where = f"{hw}, {gpus} GPUs: " if several else ""
        answers = {}  # what each budget gets -> its budgets (the same point said once)
        for _, b in rows.iterrows():
            if np.isfinite(b["output tokens/s/GPU"]):
                r = pts.loc[int(b.point)]
                text = (f"{b['output tokens/s/GPU']:.1f} output tokens/s/GPU with {b.layout} "
                        f"at {load_words(r)} (ITL {_ms(b['ITL (ms)'])} ms, TTFT "
                        f"{_ms(b['TTFT (ms)'])} ms)")
            else:
                fits = ok[(ok.hardware == hw) & (ok.num_gpus == gpus)]
                if fits.empty:
                    text = "no point runs (none is ok)"
                else:
                    low = fits.loc[fits.itl_s.idxmin()]
                    text = (f"no point meets it (the lowest ITL is {_ms(low.itl_s * MS)} ms, "
                            f"{serving_layout(low)} at {load_words(low)})")
            answers.setdefault(text, []).append(f"{b['ITL budget (ms)']:g}")
        parts = [f"ITL <= {', '.join(budgets)} ms: {text}" for text, budgets in answers.items()]
        notes.append(where + "; ".join(parts) + ".")
    return notes


def skipped(points: pd.DataFrame, limit: int = 12) -> list[str]:
    """The points not plotted (status not ok, or no finite ITL), per layout and status:
    "dp1 tp8 pp1 (8 GPUs) overloaded at 16, 64/s"; `limit` entries, then a count."""
    pts = _sorted(serving_rows(points))
    bad = pts[(pts.status.astype(str) != "ok") | ~np.isfinite(pts.tokens_per_s_per_gpu)
              | ~np.isfinite(pts.itl_s.astype(float))]
    if bad.empty:
        return []
    several = pts.groupby(["hardware_index", "num_gpus"]).ngroups > 1
    every = {k: len(g) for k, g in pts.groupby(
        ["hardware_index", "num_gpus", "tp", "pp", "ep", "dp"], sort=False)}
    entries, statuses = [], set()
    keys = ["hardware_index", "num_gpus", "tp", "pp", "ep", "dp", "_status"]
    bad = bad.assign(_status=bad.status.astype(str))
    for key, group in bad.groupby(keys, sort=False):
        r = group.iloc[0]
        statuses.add(key[-1])
        where = f" ({r.hardware}, {int(r.num_gpus)} GPUs)" if several else ""
        at = ("at every load" if every.get(key[:-1]) == len(group) and len(group) > 1
              else "at " + ", ".join(load_text(x) for _, x in group.iterrows()))
        entries.append(f"{serving_layout(r)}{where} {key[-1]} {at}")
    shown = "; ".join(entries[:limit])
    if len(entries) > limit:
        shown += f"; and {len(entries) - limit} more (see the table)"
    why = "; ".join(_STATUS_WHY.get(s, s) for s in sorted(statuses))
    return [f"Not plotted ({len(bad)} point{'s' * (len(bad) != 1)} not ok: {why}): "
            f"{shown}."]


def queued(points: pd.DataFrame, limit: int = 12) -> list[str]:
    """The ok points offered more requests at once than their KV cache holds (concurrency
    above max concurrency), per layout: the rest wait, and TTFT grows with the queue."""
    pts = _sorted(serving_rows(points))
    if "concurrency" not in pts or "max_concurrency" not in pts:
        return []
    over = pts[(pts.status.astype(str) == "ok")
               & (pts.concurrency.astype(float) > pts.max_concurrency.astype(float))]
    if over.empty:
        return []
    several = pts.groupby(["hardware_index", "num_gpus"]).ngroups > 1
    entries = []
    for _, group in over.groupby(["hardware_index", "num_gpus", "tp", "pp", "ep", "dp"],
                                 sort=False):
        r = group.iloc[0]
        where = f" ({r.hardware}, {int(r.num_gpus)} GPUs)" if several else ""
        entries.append(f"{serving_layout(r)}{where} at "
                       + ", ".join(load_text(x) for _, x in group.iterrows())
                       + f" (max concurrency {r.max_concurrency:g})")
    shown = "; ".join(entries[:limit]) + (f"; and {len(entries) - limit} more"
                                          if len(entries) > limit else "")
    return [f"Concurrency above max concurrency (the KV cache holds fewer requests at once; "
            f"the others queue and TTFT grows with the queue): {shown}."]


def latency_table(points: pd.DataFrame, budgets_ms=BUDGETS_MS) -> common.Table:
    """The latency section: every serving point of `points` as curve_frame() gives it, the
    notes (what the load is, the best layout per ITL budget, the points not plotted) and
    the budget table (best_under) as the appendix."""
    pts = serving_rows(points)
    frame = curve_frame(pts)
    best = best_under(pts, budgets_ms)
    loads = load_columns(pts)
    notes = []
    if "concurrency" in loads:
        notes.append("Load: concurrency = requests in flight offered to the whole deployment "
                     "(closed loop: a finished request is replaced at once), split evenly "
                     "over its dp replicas.")
    if "arrival_rate_per_s" in loads:
        notes.append("Load: arrival rate = requests per second offered to the whole "
                     "deployment (open loop, Poisson arrivals), split evenly over its dp "
                     "replicas.")
    notes.append("Per layout (dp replicas of tp x pp GPUs) the curve over its loads: output "
                 "tokens/s/GPU (generated tokens of all replicas / GPUs), TTFT (time to first "
                 "token: queueing + prefill), ITL (inter-token latency = TPOT, mean over all "
                 "output tokens; start/mid/end: over the first, middle and last 10% of each "
                 "request's output), E2E (arrival to last token), running batch (sequences "
                 "per iteration per replica), max concurrency (requests of the longest "
                 "length whose KV cache fits at once, all replicas).")
    notes.append("Best per ITL budget: among the ok points whose mean ITL is within it, the "
                 "highest output tokens/s/GPU (a tie, as when every layout keeps up with an "
                 "arrival rate and delivers the offered load, goes to the lowest ITL).")
    notes += budget_notes(pts, best)
    if not any(LATENCIES.get(c, E2E.get(c)) in frame for c in DES_ONLY):
        notes.append("Percentiles (p50, p90, p99 of TTFT, ITL and E2E): written by the DES "
                     "only (--fidelity des or auto; the closed form has no tails); no row of "
                     "this selection has them.")
    elif "fidelity" in frame:
        notes.append("Percentile columns: on the rows the DES simulated ('-' on analytical "
                     "rows).")
    notes += queued(pts)
    notes += skipped(pts)
    if common.ok_rows(pts).empty:
        notes.insert(0, "No point runs: every serving point is OOM, overloaded or "
                        "infeasible.")
    n = frame.groupby(["GPUs", "hardware", "layout"]).ngroups if not frame.empty else 0
    title = f"Throughput against latency: {n} layout curve{'s' * (n != 1)}"
    appendix = common.Appendix("Best output tokens/s/GPU per ITL budget", best)
    return common.Table("latency", title, frame, notes, group=["GPUs", "hardware", "layout"],
                        appendix=appendix)


def curves(frame: pd.DataFrame) -> list[dict]:
    """What the figure draws: per (hardware entry, GPU count) a panel pair, with one curve
    per layout through its ok points in load order: {"hardware", "GPUs", "lines": [(layout,
    rows, load labels)], "skipped": how many points of the group are left out (not ok or
    without an ITL)}."""
    if frame.empty:
        return []
    ok = frame[(frame.status == "ok") & np.isfinite(frame["output tokens/s/GPU"])
               & np.isfinite(frame["ITL (ms)"])]
    out = []
    for (gpus, hw), group in frame.groupby(["GPUs", "hardware"], sort=False):
        lines = [(layout, part, [_frame_load(r) for _, r in part.iterrows()])
                 for layout, part in
                 ok[(ok.GPUs == gpus) & (ok.hardware == hw)].groupby("layout", sort=False)]
        out.append({"hardware": hw, "GPUs": int(gpus), "lines": lines,
                    "skipped": int(len(group) - sum(len(p) for _, p, _ in lines))})
    return out


def _frame_load(row: pd.Series) -> str:
    """A table row's load as a point label: "64" or "4/s"."""
    c = row.get(LOADS["concurrency"], np.nan)
    if np.isfinite(c):
        return f"{c:g}"
    return f"{row.get(LOADS['arrival_rate_per_s'], np.nan):g}/s"


def load_axis(frame: pd.DataFrame) -> str:
    """What the point labels of the figure are."""
    if LOADS["concurrency"] in frame:
        return "concurrency"
    return "arrival rate (requests/s)"
