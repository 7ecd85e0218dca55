// Board power of the ops of a step (docs/nonideal.md sec 1): each op's dynamic energy from
// its FLOPs (J/FLOP per dtype) and the bytes it moves (HBM, L2, NVLink, NIC), the SMs'
// activity while a kernel runs, and the idle power; board power capped at TDP (the cap
// slows the op, as the firmware's power limit lowers the clock).
#pragma once

#include <array>

#include "rapid/cost/compute_cost.hpp"
#include "rapid/nonideal/thermal_model.hpp"
#include "rapid/spec/hardware_spec.hpp"
#include "rapid/spec/nonideal_spec.hpp"
#include "rapid/workload/op.hpp"

namespace rapid {

/// An op's (or a run of ops') full-speed time and energy, and how much of its time is
/// compute-bound / memory-bound (what a lower clock / slower HBM stretches).
struct OpEnergy {
  double time_s = 0;
  double compute_J = 0;  ///< FLOPs and SM activity (scales with the clock squared)
  double memory_J = 0;   ///< data movement (HBM, L2, links)
  double compute_bound_s = 0, memory_bound_s = 0;
  double hbm_bytes = 0;  ///< HBM traffic (GEMM/attention: inputs and output once)
  double hbm_J = 0;      ///< of memory_J: the HBM stacks' own (their bytes' energy)
  OpEnergy& operator+=(const OpEnergy& o) {
    hbm_bytes += o.hbm_bytes;
    hbm_J += o.hbm_J;
    time_s += o.time_s;
    compute_J += o.compute_J;
    memory_J += o.memory_J;
    compute_bound_s += o.compute_bound_s;
    memory_bound_s += o.memory_bound_s;
    return *this;
  }
  OpEnergy scaled(double k) const {
    return {time_s * k,         compute_J * k, memory_J * k, compute_bound_s * k,
            memory_bound_s * k, hbm_bytes * k, hbm_J * k};
  }
  /// The same work as board power (idle `idle_W` added).
  WorkPower power(double idle_W) const;
};

class PowerModel {
 public:
  /// `cost` times the ops (its GPU must be `hw`); J/FLOP left 0 in the file are derived
  /// here: the dtype's reference GEMM (8192^3, the MAMF-style largest shape) draws TDP.
  PowerModel(const HardwareSpec& hw, const ComputeCost& cost);

  /// Energy of compute op `op` taking `time_s` at full speed (before the TDP cap).
  OpEnergy op_energy(const Op& op, double time_s) const;
  /// `time_s` stretched so that the op's board power stays at or below TDP.
  double capped_time(const OpEnergy& e) const;
  /// A collective or transfer of `bytes` per GPU through NVLink (`nvlink`) or the NICs,
  /// its NCCL kernels on `sms` SMs for `time_s` (local HBM traffic 2 B per byte sent:
  /// NVIDIA/nccl issue 1428, as interference.hpp).
  OpEnergy comm_energy(double bytes, bool nvlink, double sms, double time_s) const;
  /// Power of a GPU whose kernels wait on the network: idle plus NCCL's polling SMs.
  double waiting_W(double sms) const;

  /// The reference GEMM of a dtype: 8192 x 8192 x 8192, the large square shape where MAMF
  /// searches reach their best (data/reference/gemm_best_shape_mamf.csv); inputs and
  /// output once through HBM.
  static Op reference_gemm(bool fp8);

  double idle_W() const { return hw_.power.idle_W; }
  double J_per_flop(DType t) const { return J_per_flop_[static_cast<size_t>(t)]; }
  const HardwareSpec& hardware() const { return hw_; }

 private:
  const HardwareSpec& hw_;
  std::array<double, kNumDTypes> J_per_flop_{};
};

/// The GPU's thermal network and limits (its file's `thermal:`) under a scenario's cooling
/// (docs/nonideal.md sec 2): the preset's sink with the cooling's overrides.
ThermalParams thermal_params(const HardwareSpec& hw, const CoolingSpec& cooling);

}  // namespace rapid
