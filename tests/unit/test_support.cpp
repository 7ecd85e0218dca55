#include "test_support.hpp"

#include "rapid/spec/framework_spec.hpp"
#include "rapid/spec/training_spec.hpp"
#include "rapid/spec/yaml_reader.hpp"

namespace rapid::test {

ModelSpec shipped_model(const std::string& name) {
  const std::string p = source_path("configs/models/" + name + ".yaml");
  return parse_model(load_yaml_file(p), p);
}

HardwareSpec shipped_hardware(const std::string& name) {
  const std::string p = source_path("configs/hardware/" + name + ".yaml");
  return parse_hardware(load_yaml_file(p), p);
}

NetworkSpec shipped_network(const std::string& name) {
  const std::string p = source_path("configs/networks/" + name + ".yaml");
  return parse_network(load_yaml_file(p), p);
}

SweepSpec spec_with(const std::string& model, const std::string& hardware,
                    const std::string& network, int64_t gbs, int64_t seq) {
  SweepSpec s;
  s.model = shipped_model(model);
  s.hardware.push_back(shipped_hardware(hardware));
  s.network = shipped_network(network);
  s.training.global_batch_size = gbs;
  s.training.seq_length = seq;
  return s;
}

SweepSpec spec_with_stack(const std::string& model, const std::string& hardware,
                          const std::string& network, int64_t gbs, int64_t seq,
                          const std::string& stack) {
  SweepSpec s = spec_with(model, hardware, network, gbs, seq);
  s.training.framework = load_framework(stack, RAPID_SOURCE_DIR, "test", "framework");
  apply_framework_defaults(s.training);
  return s;
}

ModelSpec llama_shape(int64_t layers, int64_t hidden, int64_t heads, int64_t kv_heads, int64_t ffn,
                      int64_t vocab) {
  ModelSpec m;
  m.name = "llama-shape";
  m.num_layers = layers;
  m.hidden_size = hidden;
  m.num_attention_heads = heads;
  m.num_kv_heads = kv_heads;
  m.head_dim = hidden / heads;
  m.ffn_hidden_size = ffn;
  m.vocab_size = vocab;
  m.activation = Activation::SwiGlu;
  m.norm = NormKind::RmsNorm;
  return m;
}

HardwareSpec round_gpu() {
  HardwareSpec hw;
  hw.num_sms = 100;
  hw.tensor_peak_FLOPs[static_cast<int>(DType::BF16)] = 100e12;
  hw.gemm_efficiency = 1.0;
  hw.gemm_tile_overhead_s = 0.0;
  hw.kernel_launch_s = 0.0;
  hw.l2_bandwidth_Bps = 1e18;
  hw.l2_multicast = 1.0;
  hw.l2_size_bytes = 1e12;
  hw.hbm_bandwidth_Bps = 1e12;
  hw.memory_efficiency = 1.0;
  hw.elementwise_efficiency = 1.0;
  return hw;
}

int each_demo_layout_two_ways(const DesOptions& other, int every,
                              const std::function<void(const DesPair&)>& check) {
  const SweepSpec spec = load_sweep_spec(source_path("jobs/llama3-70b-256xh100.yaml"));
  const Enumerator e(spec);
  const PointEvaluator analytical(spec);
  const PointEvaluator with(spec, Fidelity::Des), without(spec, Fidelity::Des, other);
  Workload w;
  EvalResult r, a, b;
  DesReport ra, rb;
  int compared = 0;
  for (int64_t i = 0, feasible = 0; i < e.size(); ++i) {
    const Point p = e.decode(i);
    analytical.evaluate(p, w, r);
    if (r.status != Status::Ok || feasible++ % every != 0) continue;
    with.evaluate(p, w, a);
    with.simulate(p, w, a, {&ra, nullptr, nullptr, false});
    without.evaluate(p, w, b);
    without.simulate(p, w, b, {&rb, nullptr, nullptr, false});
    check(DesPair{p, a, b, ra, rb});
    ++compared;
  }
  return compared;
}

}  // namespace rapid::test
