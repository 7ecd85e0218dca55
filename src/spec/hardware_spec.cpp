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
    case DType::FP4:
      return 1;
  }
  return 2;
}

double dtype_size_bytes(DType t) {
  return t == DType::FP4 ? 0.5 : static_cast<double>(dtype_bytes(t));
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
  static const char* names[] = {"fp32", "tf32", "fp16", "bf16", "fp8", "fp4"};
  return names[static_cast<int>(t)];
}

std::optional<DType> dtype_from_name(std::string_view name) {
  for (int i = 0; i < kNumDTypes; ++i)
    if (name == dtype_name(static_cast<DType>(i))) return static_cast<DType>(i);
  return std::nullopt;
}

namespace {

/// Reads one row of kHardwareFields from `m` (the row's section) into `h`.
void read_field(const YamlMap& m, const HardwareField& f, HardwareSpec& h) {
  double& v = h.*f.member;
  if (f.default_from) v = h.*f.default_from;
  if (f.dimension)
    v = f.required ? m.quantity(f.key, *f.dimension) : m.quantity_or(f.key, *f.dimension, v);
  else
    v = m.number_or(f.key, v, f.min, f.max);
}

/// The rows of `section`, read from `m` (a missing optional section leaves the defaults).
void read_section(const YamlMap& m, const std::string& section, HardwareSpec& h) {
  for (const HardwareField& f : kHardwareFields)
    if (f.section == section) read_field(m, f, h);
}

}  // namespace

HardwareSpec parse_hardware(const YAML::Node& node, const std::string& file) {
  YamlMap m(node, file);
  HardwareSpec h;
  h.name = m.string("name");
  h.stack_factors_from = m.string_or("stack_factors_from", "");
  h.num_sms = m.integer("num_sms", 1, 100000);
  YamlMap peaks = m.map("tensor_peak");
  for (int i = 0; i < kNumDTypes; ++i) {
    auto t = static_cast<DType>(i);
    h.tensor_peak_FLOPs[i] = peaks.quantity_or(dtype_name(t), Dimension::FlopRate, 0.0);
  }
  peaks.finish();
  if (h.tensor_peak_FLOPs[static_cast<int>(DType::BF16)] <= 0)
    m.fail("tensor_peak", "<no bf16>", "a bf16 entry > 0");
  read_section(m, "", h);
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
    const YamlMap e = m.map("efficiency");
    read_section(e, "efficiency", h);
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
  for (const HardwareField& f : kHardwareFields)
    if (f.positive && h.*f.member < 1e3)
      m.fail(f.key, m.node(f.key).IsScalar() ? m.node(f.key).Scalar() : std::to_string(h.*f.member),
             "a value of at least 1e3 in base units");
  return h;
}

}  // namespace rapid
