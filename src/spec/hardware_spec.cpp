#include "rapid/spec/hardware_spec.hpp"

#include "rapid/spec/yaml_reader.hpp"

#include <utility>

#include <fmt/format.h>

namespace rapid {

int dtype_bytes(DType t) {
  switch (t) {
    case DType::FP32:
    case DType::TF32:
      return 4;
    case DType::FP16:
    case DType::BF16:
      return 2;
    case DType::FP8:
      return 1;
  }
  return 2;
}

std::vector<AttentionImpl> HardwareSpec::attention_kernels() const {
  std::vector<AttentionImpl> out;
  for (int i = 1; i < kNumAttentionImpls; ++i)
    if (attention_efficiency[static_cast<size_t>(i)].forward > 0)
      out.push_back(static_cast<AttentionImpl>(i));
  return out;
}

HardwareSpec::KernelEfficiency HardwareSpec::attention_kernel_efficiency(AttentionImpl impl) const {
  const KernelEfficiency own = attention_efficiency[static_cast<size_t>(impl)];
  return own.forward > 0 ? own : attention_efficiency[static_cast<size_t>(AttentionImpl::FA2)];
}

const char* dtype_name(DType t) {
  static const char* names[] = {"fp32", "tf32", "fp16", "bf16", "fp8"};
  return names[static_cast<int>(t)];
}

std::optional<DType> dtype_from_name(std::string_view name) {
  for (int i = 0; i < kNumDTypes; ++i)
    if (name == dtype_name(static_cast<DType>(i))) return static_cast<DType>(i);
  return std::nullopt;
}

HardwareSpec parse_hardware(const YAML::Node& node, const std::string& file) {
  YamlMap m(node, file);
  HardwareSpec h;
  h.name = m.string("name");
  h.num_sms = m.integer("num_sms", 1, 100000);
  h.sm_clock_Hz = m.quantity("sm_clock", Dimension::Frequency);
  YamlMap peaks = m.map("tensor_peak");
  for (int i = 0; i < kNumDTypes; ++i) {
    auto t = static_cast<DType>(i);
    h.tensor_peak_FLOPs[i] = peaks.quantity_or(dtype_name(t), Dimension::FlopRate, 0.0);
  }
  peaks.finish();
  if (h.tensor_peak_FLOPs[static_cast<int>(DType::BF16)] <= 0)
    m.fail("tensor_peak", "<no bf16>", "a bf16 entry > 0");
  h.vector_peak_FLOPs = m.quantity("vector_peak_fp32", Dimension::FlopRate);
  h.hbm_capacity_bytes = m.quantity("hbm_capacity", Dimension::Size);
  h.hbm_bandwidth_Bps = m.quantity("hbm_bandwidth", Dimension::Bandwidth);
  h.l2_size_bytes = m.quantity("l2_size", Dimension::Size);
  h.l2_bandwidth_Bps = m.quantity("l2_bandwidth", Dimension::Bandwidth);
  h.l2_multicast = m.number_or("l2_multicast", 1.0, 1.0, 16.0);
  h.smem_per_sm_bytes = m.quantity("smem_per_sm", Dimension::Size);
  h.nvlink_bandwidth_Bps = m.quantity("nvlink_bandwidth", Dimension::Bandwidth);
  h.pcie_bandwidth_Bps = m.quantity("pcie_bandwidth", Dimension::Bandwidth);
  h.kernel_launch_s = m.quantity("kernel_launch", Dimension::Time);
  h.tdp_W = m.quantity_or("tdp", Dimension::Power, 0.0);
  h.compute_capability = m.number_or("compute_capability", h.compute_capability, 1.0, 99.0);
  h.sfu_per_sm_per_clock = m.number_or("sfu_per_sm_per_clock", h.sfu_per_sm_per_clock, 1, 1024);
  if (m.has("attention_kernels")) {
    const YamlMap k = m.map("attention_kernels");
    for (int i = 1; i < kNumAttentionImpls; ++i) {
      if (!k.has(kAttentionImplNames[i])) continue;
      const YamlMap e = k.map(kAttentionImplNames[i]);
      HardwareSpec::KernelEfficiency& x = h.attention_efficiency[static_cast<size_t>(i)];
      x.forward = e.number_or("forward", 0.0, 0.01, 1.0);
      x.backward = e.number_or("backward", 0.0, 0.01, 1.0);
      x.softmax_forward = e.number_or("softmax_forward", 1.0, 0.0, 4.0);
      x.softmax_backward = e.number_or("softmax_backward", 1.0, 0.0, 4.0);
      e.finish();
      if (x.forward <= 0 || x.backward <= 0)
        k.fail(kAttentionImplNames[i], "<incomplete>", "forward and backward efficiencies");
    }
    k.finish();
  }
  if (m.has("efficiency")) {
    YamlMap e = m.map("efficiency");
    h.gemm_efficiency = e.number_or("gemm", h.gemm_efficiency, 0.01, 1.0);
    h.gemm_tile_overhead_s =
        e.quantity_or("gemm_tile_overhead", Dimension::Time, h.gemm_tile_overhead_s);
    h.gemm_fp8_efficiency = e.number_or("gemm_fp8", h.gemm_fp8_efficiency, 0.01, 1.0);
    h.memory_efficiency = e.number_or("memory", h.memory_efficiency, 0.01, 1.0);
    h.nvlink_efficiency = e.number_or("nvlink", h.nvlink_efficiency, 0.01, 1.0);
    for (const char* moved : {"step", "elementwise", "attention"})
      if (e.has(moved))
        e.fail(moved, "<set here>",
               std::string(moved) == "attention"
                   ? "the attention kernels under attention_kernels: (fa2, fa3, cudnn)"
                   : "it in the stack's end_to_end: section (configs/frameworks), per GPU type");
    e.finish();
  }
  if (m.has("power")) {  // docs/nonideal.md sec 1
    const YamlMap pw = m.map("power");
    HardwareSpec::Power& p = h.power;
    p.idle_W = pw.quantity("idle", Dimension::Power);
    p.active_W = pw.quantity_or("active", Dimension::Power, 0.0);
    constexpr double pJ = 1e-12;
    for (DType t : {DType::BF16, DType::FP16, DType::FP8})
      p.J_per_flop[static_cast<size_t>(t)] =
          pJ * pw.number_or(fmt::format("{}_pJ_per_flop", dtype_name(t)), 0.0, 0.0, 1e3);
    p.hbm_J_per_byte = pJ * pw.number_or("hbm_pJ_per_byte", 0.0, 0.0, 1e4);
    p.l2_J_per_byte = pJ * pw.number_or("l2_pJ_per_byte", 0.0, 0.0, 1e4);
    p.nvlink_J_per_byte = pJ * pw.number_or("nvlink_pJ_per_byte", 0.0, 0.0, 1e4);
    p.nic_J_per_byte = pJ * pw.number_or("nic_pJ_per_byte", 0.0, 0.0, 1e4);
    pw.finish();
    if (h.tdp_W <= p.idle_W + p.active_W)
      m.fail("tdp", fmt::format("{}W", h.tdp_W),
             fmt::format("more than power.idle + power.active ({} W) when power: is given",
                         p.idle_W + p.active_W));
  }
  if (m.has("thermal")) {  // docs/nonideal.md sec 2
    const YamlMap th = m.map("thermal");
    HardwareSpec::Thermal& t = h.thermal;
    t.die_slowdown_C = th.number_or("die_slowdown_C", t.die_slowdown_C, 20.0, 200.0);
    t.die_hw_slowdown_C =
        th.number_or("die_hw_slowdown_C", t.die_slowdown_C + 2.0, t.die_slowdown_C + 0.1, 200.0);
    t.die_clock_keep = th.number_or("die_clock_keep", t.die_clock_keep, 0.05, 1.0);
    t.die_shutdown_C =
        th.number_or("die_shutdown_C", t.die_hw_slowdown_C + 3.0, t.die_hw_slowdown_C, 300.0);
    t.hbm_throttle_C = th.number_or("hbm_throttle_C", t.hbm_throttle_C, 20.0, 200.0);
    t.hbm_span_C = th.number_or("hbm_span_C", t.hbm_span_C, 0.1, 100.0);
    t.hbm_keep = th.number_or("hbm_keep", t.hbm_keep, 0.05, 1.0);
    t.hbm_shutdown_C = th.number_or("hbm_shutdown_C", t.hbm_throttle_C + 7.0,
                                    t.hbm_throttle_C + t.hbm_span_C, 300.0);
    t.hysteresis_C = th.number_or("hysteresis_C", t.hysteresis_C, 0.01, 50.0);
    t.law = static_cast<uint8_t>(th.choice_or("law", {"linear", "step"}, t.law));
    // The network: heat capacities (J/C) and resistances (C/W), each positive.
    t.die_J_per_C = th.number_or("die_J_per_C", t.die_J_per_C, 1e-3, 1e6);
    t.hbm_J_per_C = th.number_or("hbm_J_per_C", t.hbm_J_per_C, 1e-3, 1e6);
    t.die_sink_C_per_W = th.number_or("die_sink_C_per_W", t.die_sink_C_per_W, 1e-5, 100.0);
    t.hbm_sink_C_per_W = th.number_or("hbm_sink_C_per_W", t.hbm_sink_C_per_W, 1e-5, 100.0);
    t.die_hbm_C_per_W = th.number_or("die_hbm_C_per_W", t.die_hbm_C_per_W, 1e-5, 1e4);
    for (auto [key, sink] : {std::pair{"air", &t.air}, std::pair{"liquid", &t.liquid}}) {
      if (!th.has(key)) continue;
      const YamlMap k = th.map(key);
      sink->J_per_C = k.number_or("sink_J_per_C", sink->J_per_C, 1e-3, 1e7);
      sink->coolant_C_per_W = k.number_or("sink_C_per_W", sink->coolant_C_per_W, 1e-5, 100.0);
      k.finish();
    }
    th.finish();
  }
  if (m.has("thermal_derate")) {  // docs/variants.md: a sustained derate, applied here once
    const YamlMap d = m.map("thermal_derate");
    h.hbm_thermal_keep = d.number_or("hbm_bandwidth", 1.0, 0.05, 1.0);
    h.clock_thermal_keep = d.number_or("sm_clock", 1.0, 0.05, 1.0);
    d.finish();
    h.hbm_bandwidth_Bps *= h.hbm_thermal_keep;
    h.sm_clock_Hz *= h.clock_thermal_keep;
    h.vector_peak_FLOPs *= h.clock_thermal_keep;
    for (double& peak : h.tensor_peak_FLOPs) peak *= h.clock_thermal_keep;
  }
  for (const char* k : {"description", "source", "sources"}) m.has(k);
  m.finish();
  // Zero or absurdly small rates would give infinite or NaN times on "ok" points.
  const std::pair<const char*, double> positive[] = {
      {"hbm_bandwidth", h.hbm_bandwidth_Bps},       {"l2_bandwidth", h.l2_bandwidth_Bps},
      {"nvlink_bandwidth", h.nvlink_bandwidth_Bps}, {"pcie_bandwidth", h.pcie_bandwidth_Bps},
      {"hbm_capacity", h.hbm_capacity_bytes},       {"l2_size", h.l2_size_bytes},
      {"smem_per_sm", h.smem_per_sm_bytes},         {"sm_clock", h.sm_clock_Hz},
      {"vector_peak_fp32", h.vector_peak_FLOPs}};
  for (const auto& [key, value] : positive)
    if (value < 1e3)
      m.fail(key, m.node(key).IsScalar() ? m.node(key).Scalar() : std::to_string(value),
             "a value of at least 1e3 in base units");
  return h;
}

}  // namespace rapid
