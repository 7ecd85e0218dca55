#!/usr/bin/python3
"""Reads a sweep of tests/integration/jobs/variants-8gpu.yaml back with h5py and checks the
variant axis against values derived by hand (docs/variants.md):

    check_variants.py FILE.h5
"""
import sys

import h5py
import numpy as np

GIB = float(1 << 30)
MIB = float(1 << 20)


def main(path):
    errors = []

    def check(cond, what):
        if not cond:
            errors.append(what)

    with h5py.File(path, "r") as f:
        v = f["variants"]
        names = list(v["names"].asstr()[:])
        expected = ["h100-sxm5-80gb", "h100-b-hbm-160gb", "h100-c-3d-hbm",
                    "h100-f-3d-hbm-2x-network", "h100@hbm_bandwidth=2TB/s",
                    "h100@hbm_bandwidth=3TB/s", "h100@hbm_bandwidth=4TB/s"]
        check(names == expected, f"/variants/names {names}")
        check(list(f["hardware/names"].asstr()[:]) == expected, "/hardware/names differ")
        check(all(b == "h100-sxm5-80gb" for b in v["base"].asstr()[:]), "a base is not the H100")
        check(list(v["is_base"][:]) == [1, 0, 0, 0, 0, 0, 0], f"is_base {list(v['is_base'][:])}")
        bw = v["hbm_bandwidth_Bps"][:]
        # H100 file: 3.35 TB/s; C: x 4 = 13.4 TB/s; grid: 2, 3, 4 TB/s.
        for i, want in [(0, 3.35e12), (1, 3.35e12), (2, 13.4e12), (3, 13.4e12), (4, 2e12),
                        (5, 3e12), (6, 4e12)]:
            check(abs(bw[i] - want) < 1e-6 * want, f"hbm_bandwidth_Bps[{i}] {bw[i]} != {want}")
        cap = v["hbm_capacity_bytes"][:]
        # 81559 MiB (nvidia-smi's usable 80 GB), B: x 2.
        check(cap[0] == 81559 * MIB and cap[1] == 2 * 81559 * MIB, f"capacities {cap[:2]}")
        nic = v["nic_bandwidth_Bps"][:]
        # dgx-h100-superpod: 400 Gb/s per NIC, 8 NICs for 8 GPUs = 50 GB/s per GPU; F: x 2.
        check(abs(nic[0] - 50e9) < 1 and abs(nic[3] - 100e9) < 1, f"nic_bandwidth_Bps {nic}")
        ov = list(v["overrides"].asstr()[:])
        check(ov[0] == "" and ov[2] == "{hbm_bandwidth: 13.4TB/s}", f"overrides {ov[:3]}")
        check("network: {leaf_bandwidth: 800Gbps" in ov[3], f"overrides[3] {ov[3]}")

        p = f["points"]
        hw = p["hardware_index"][:]
        status = p["status"][:]
        ok, oom = 0, 1
        tp, pp, rc = p["tp"][:], p["pp"][:], p["recompute"][:]
        step, peak = p["step_time_s"][:], p["peak_memory_bytes"][:]
        check(len(hw) == 98, f"{len(hw)} rows, expected 7 x 14 = 98")
        for h in range(7):
            check(int((hw == h).sum()) == 14, f"variant {h}: {(hw == h).sum()} rows")
        # The same layouts in the same order on every variant (hardware is the outer axis).
        base = hw == 0
        for h in range(1, 7):
            mine = hw == h
            check((tp[mine] == tp[base]).all() and (pp[mine] == pp[base]).all()
                  and (rc[mine] == rc[base]).all(), f"variant {h}: other layouts")
            # Footprints do not depend on the hardware's rates or capacity.
            check(np.allclose(peak[mine], peak[base]), f"variant {h}: other peak memory")
        # tp1 pp1 ZeRO-0 with full recomputation: 18 B per parameter (bf16 weights 2, fp32
        # gradients 4, Adam 12) x 8.03e9 = 144.5 GB + activations of a few GB: OOM at
        # 79.6 GiB, fits in 2 x 81559 MiB = 171 GB (case B); without recomputation the
        # activations alone are sbh(34 + 5as/h) x 32 layers = 4096^2 x 194 x 32 = 104 GB:
        # OOM on both.
        def row(h, t, q, r):
            i = np.where((hw == h) & (tp == t) & (pp == q) & (rc == r))[0]
            return int(i[0])
        NONE, FULL = 0, 2
        check(status[row(0, 1, 1, FULL)] == oom, "tp1 pp1 full fits in 80 GB")
        check(status[row(1, 1, 1, FULL)] == ok, "tp1 pp1 full does not fit in 160 GB")
        check(status[row(1, 1, 1, NONE)] == oom, "tp1 pp1 none fits in 160 GB")
        # More HBM bandwidth never slows a layout: C's step <= the H100's, and along the grid
        # 2 -> 3 -> 4 TB/s each step is shorter.
        both = (status[base] == ok) & (status[hw == 2] == ok)
        check(both.any(), "no layout ok on both the H100 and C")
        check((step[hw == 2][both] <= step[base][both] * (1 + 1e-12)).all(), "C slower than H100")
        for lo, hi in [(4, 5), (5, 6)]:
            m = (status[hw == lo] == ok) & (status[hw == hi] == ok)
            check((step[hw == hi][m] < step[hw == lo][m]).all(), f"grid {hi} not faster than {lo}")
        # Each row's variant: a base layout's gain from C, printed for the reader.
        i0 = row(0, 8, 1, NONE)
        print(f"tp8 pp1: H100 {step[i0]:.4f} s, C {step[row(2, 8, 1, NONE)]:.4f} s, "
              f"2 TB/s {step[row(4, 8, 1, NONE)]:.4f} s")
    for e in errors:
        print("FAIL:", e)
    print(f"{len(errors)} failures")
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
