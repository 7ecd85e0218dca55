#include "rapid/nonideal/power_model.hpp"

#include <algorithm>

namespace rapid {

namespace {

/// Bytes an MMA kernel's SMs read from L2 per FLOP with square 128-wide output tiles:
/// each k step loads (bm + bn) elements for 2 bm bn FLOPs, i.e. element_bytes / 128
/// (docs/nonideal.md sec 1; the tile sizes of docs/model.md sec 4).
double l2_bytes_per_flop(bool fp8) {
  return (fp8 ? 1.0 : 2.0) / 128.0;
}

}  // namespace

Op PowerModel::reference_gemm(bool fp8) {
  Op g;
  g.name = "reference_gemm";
  g.kind = OpKind::Gemm;
  g.fp8 = fp8;
  g.m = g.n = g.k = 8192;
  g.flops = 2.0 * 8192.0 * 8192.0 * 8192.0;
  g.bytes = 3.0 * 8192.0 * 8192.0 * (fp8 ? 1.0 : 2.0);
  return g;
}

WorkPower OpEnergy::power(double idle_W) const {
  WorkPower w;
  w.idle_W = idle_W;
  if (time_s <= 0) return w;
  w.compute_W = compute_J / time_s;
  w.memory_W = memory_J / time_s;
  w.hbm_W = hbm_J / time_s;
  w.compute_share = std::min(1.0, compute_bound_s / time_s);
  w.memory_share = std::min(1.0 - w.compute_share, memory_bound_s / time_s);
  return w;
}

PowerModel::PowerModel(const HardwareSpec& hw, const ComputeCost& cost) : hw_(hw) {
  // A zero J/FLOP in the file: chosen so that the dtype's reference GEMM draws exactly TDP
  // (large GEMMs run at the board power limit: docs/nonideal.md sec 1):
  //   TDP = idle + active + (F e_flop + B_hbm e_hbm + B_l2 e_l2) / t.
  const double budget_W = hw.tdp_W - hw.power.idle_W - hw.power.active_W;
  for (DType t : {DType::BF16, DType::FP16, DType::FP8}) {
    const size_t i = static_cast<size_t>(t);
    J_per_flop_[i] = hw.power.J_per_flop[i];
    if (J_per_flop_[i] > 0 || hw.tensor_peak_FLOPs[i] <= 0 || budget_W <= 0) continue;
    const Op g = reference_gemm(t == DType::FP8);
    const double time_s = cost.time(g);
    const double data_J = g.bytes * hw.power.hbm_J_per_byte +
                          g.flops * l2_bytes_per_flop(g.fp8) * hw.power.l2_J_per_byte;
    J_per_flop_[i] = std::max(0.0, (budget_W * time_s - data_J) / g.flops);
  }
}

OpEnergy PowerModel::op_energy(const Op& op, double time_s) const {
  const HardwareSpec::Power& p = hw_.power;
  OpEnergy e;
  e.time_s = time_s;
  e.compute_J = p.active_W * time_s;
  e.hbm_bytes = op.bytes;
  e.hbm_J = op.bytes * p.hbm_J_per_byte;
  if (op.kind == OpKind::Gemm || op.kind == OpKind::Attention) {
    const DType t = op.fp8 ? DType::FP8 : DType::BF16;
    e.compute_J += op.flops * J_per_flop(t);
    e.memory_J =
        op.bytes * p.hbm_J_per_byte + op.flops * l2_bytes_per_flop(op.fp8) * p.l2_J_per_byte;
    // Roofline split: the time the tensor cores need at the GPU's GEMM efficiency is
    // compute-bound, the rest waits on memory.
    const double peak = hw_.tensor_peak_FLOPs[static_cast<size_t>(t)] > 0
                            ? hw_.tensor_peak_FLOPs[static_cast<size_t>(t)]
                            : hw_.tensor_peak_FLOPs[static_cast<size_t>(DType::BF16)];
    const double eff =
        op.fp8 && hw_.gemm_fp8_efficiency > 0 ? hw_.gemm_fp8_efficiency : hw_.gemm_efficiency;
    e.compute_bound_s = std::min(time_s, op.flops / (peak * eff));
    e.memory_bound_s = time_s - e.compute_bound_s;
  } else {  // streaming kernels: every byte through L2 once, bound by HBM
    e.memory_J = op.bytes * (p.hbm_J_per_byte + p.l2_J_per_byte);
    e.memory_bound_s = time_s;
  }
  return e;
}

double PowerModel::capped_time(const OpEnergy& e) const {
  const double dynamic_J = e.compute_J + e.memory_J;
  const double headroom_W = hw_.tdp_W - hw_.power.idle_W;
  if (e.time_s <= 0 || headroom_W <= 0) return e.time_s;
  return std::max(e.time_s, dynamic_J / headroom_W);
}

OpEnergy PowerModel::comm_energy(double bytes, bool nvlink, double sms, double time_s) const {
  const HardwareSpec::Power& p = hw_.power;
  OpEnergy e;
  e.time_s = time_s;
  e.compute_J = p.active_W * sms / static_cast<double>(hw_.num_sms) * time_s;
  e.hbm_bytes = 2.0 * bytes;
  e.hbm_J = 2.0 * bytes * p.hbm_J_per_byte;
  e.memory_J = bytes * (2.0 * p.hbm_J_per_byte + (nvlink ? p.nvlink_J_per_byte : p.nic_J_per_byte));
  return e;  // neither compute- nor memory-bound: the links set its pace
}

double PowerModel::waiting_W(double sms) const {
  return hw_.power.idle_W + hw_.power.active_W * sms / static_cast<double>(hw_.num_sms);
}

ThermalParams thermal_params(const HardwareSpec& hw, const CoolingSpec& cooling) {
  const HardwareSpec::Thermal& h = hw.thermal;
  ThermalParams t;
  t.ambient_C = cooling.ambient_C;
  // The die: SW thermal slowdown from its max operating temperature, deepening to the HW
  // slowdown's clock at its slowdown temperature; the HBM: bandwidth from its max
  // operating temperature over hbm_span_C (docs/nonideal.md sec 2).
  t.die = NodeLimit{h.die_slowdown_C, h.die_hw_slowdown_C - h.die_slowdown_C, h.die_clock_keep,
                    h.die_shutdown_C};
  t.hbm = NodeLimit{h.hbm_throttle_C, h.hbm_span_C, h.hbm_keep, h.hbm_shutdown_C};
  t.law = static_cast<ThrottleLaw>(h.law);
  t.hysteresis_C = h.hysteresis_C;
  // The sink: the preset's, then the cooling's overrides (the lumped form's alpha and beta
  // set the same capacity and resistance: alpha = 1 / C, beta = 1 / (R C)).
  const HardwareSpec::Thermal::Sink& sink = cooling.liquid ? h.liquid : h.air;
  ThermalCircuit c;
  c.die_J_per_C = h.die_J_per_C;
  c.hbm_J_per_C = h.hbm_J_per_C;
  c.die_sink_C_per_W = h.die_sink_C_per_W;
  c.hbm_sink_C_per_W = h.hbm_sink_C_per_W;
  c.die_hbm_C_per_W = h.die_hbm_C_per_W;
  c.sink_J_per_C = cooling.alpha_C_per_J > 0  ? 1 / cooling.alpha_C_per_J
                   : cooling.sink_J_per_C > 0 ? cooling.sink_J_per_C
                                              : sink.J_per_C;
  c.sink_coolant_C_per_W = cooling.beta_per_s > 0     ? 1 / (cooling.beta_per_s * c.sink_J_per_C)
                           : cooling.sink_C_per_W > 0 ? cooling.sink_C_per_W
                                                      : sink.coolant_C_per_W;
  c.sink_coolant_C_per_W /= cooling.conductance_factor;
  t.set_circuit(c);
  return t;
}

}  // namespace rapid
