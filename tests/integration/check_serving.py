#!/usr/bin/python3
"""Reads a serving sweep (tests/integration/jobs/serving-8gpu.yaml) back with h5py and
checks values derived by hand (docs/inference.md), and the simulation against the closed
form where one request is in flight.

    check_serving.py DES.h5 ANALYTICAL.h5
"""
import sys

import h5py
import numpy as np

GIB = 1024.0 ** 3


def main(des_path, ana_path):
    errors = []

    def expect(ok, what):
        if not ok:
            errors.append(what)

    with h5py.File(des_path, "r") as fd, h5py.File(ana_path, "r") as fa:
        d, a = fd["points"], fa["points"]
        expect(fd.attrs["mode"] == "inference", f"mode {fd.attrs['mode']!r}")
        expect(fd.attrs["serving_stack"] == "vllm-a100", "serving_stack")
        # 4 layouts (tp 1, 2, 4, 8 with dp = 8 / tp) x 2 concurrencies.
        n = len(d["tp"])
        expect(n == 8, f"{n} rows, expected 4 layouts x 2 loads")
        status = h5py.check_enum_dtype(d["status"].dtype)
        names = {v: k for k, v in status.items()}
        tp, dp, conc = d["tp"][:], d["dp"][:], d["concurrency"][:]
        expect(sorted(set(conc)) == [1.0, 16.0], f"concurrency values {sorted(set(conc))}")
        expect(all(tp * dp == 8), "tp x replicas = 8")
        # Llama 2 70B weights: 80 layers x (8192 x 10240 QKV + 8192^2 out + 3 x 8192 x 28672
        # SwiGLU + 2 x 8192 norms) + 2 x 32000 x 8192 + 8192 = 68.98e9 parameters, x 2 B.
        layer = 8192 * 10240 + 8192 ** 2 + 3 * 8192 * 28672 + 2 * 8192
        params = 80 * layer + 2 * 32000 * 8192 + 8192
        for i in range(n):
            s = names[d["status"][i]]
            w = d["weights_bytes"][i]
            expect(abs(w - 2 * params / tp[i]) < 1e-6 * w,
                   f"row {i}: weights {w:.4g} B, by hand {2 * params / tp[i]:.4g}")
            if tp[i] == 1:
                expect(s == "oom", f"tp1 row {i} is {s}, expected oom (138 GB of weights)")
                continue
            expect(s == "ok", f"row {i} (tp {tp[i]}) is {s}")
            # KV per token per GPU: 80 layers x 2 x (8 / tp) heads x 128 x 2 B; the memory
            # left for it is 0.9 x 80 GiB - weights - activations - workspace.
            per_token = 80 * 2 * (8 // tp[i]) * 128 * 2
            budget = (0.9 * 80 * GIB - w - d["activations_bytes"][i] - d["reserve_bytes"][i])
            cap = d["kv_cache_capacity_tokens"][i]
            expect(0 <= budget - cap * per_token < 16 * per_token,
                   f"row {i}: {cap} tokens of {per_token} B in a {budget:.4g} B budget")
            # Whole requests of 576 tokens = 36 blocks of 16, capped by max_num_seqs 256.
            fit = min(256, int(cap // 16) // 36) * dp[i]
            expect(d["max_concurrency"][i] == fit,
                   f"row {i}: max_concurrency {d['max_concurrency'][i]}, by hand {fit}")
            expect(d["e2e_latency_s"][i] > d["ttft_s"][i] > 0, f"row {i}: E2E > TTFT > 0")
            if conc[i] == 1:
                # One request in flight: the simulation is the closed form (2%).
                for col in ("ttft_s", "itl_s", "e2e_latency_s", "output_tokens_per_s"):
                    x, y = d[col][i], a[col][i]
                    expect(abs(x - y) <= 0.02 * y, f"row {i} {col}: DES {x:.5g} vs {y:.5g}")
                expect(d["fidelity"][i] == 1 and a["fidelity"][i] == 0, f"row {i} fidelity")
        # More concurrency serves more tokens per second on every layout that fits.
        for t in (2, 4, 8):
            lo = np.where((tp == t) & (conc == 1))[0][0]
            hi = np.where((tp == t) & (conc == 16))[0][0]
            for p in (d, a):
                expect(p["output_tokens_per_s"][hi] > p["output_tokens_per_s"][lo],
                       f"tp{t}: throughput at 16 requests above 1")
            expect(a["itl_s"][hi] >= a["itl_s"][lo], f"tp{t}: ITL grows with the batch")
    for e in errors:
        print("FAIL:", e)
    print("check_serving: %d checks failed" % len(errors) if errors else "check_serving: ok")
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:]))
