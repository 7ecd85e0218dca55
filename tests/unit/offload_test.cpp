// Activation offload's PCIe time (issue 8, part 5; offload.hpp), by hand, and the two
// evaluators charging it alike.
#include "rapid/analytical/offload.hpp"

#include <gtest/gtest.h>

#include "rapid/eval/point_evaluator.hpp"
#include "rapid/memory/memory_model.hpp"
#include "rapid/spec/yaml_reader.hpp"
#include "test_support.hpp"

namespace rapid {
namespace {

// TP2 with SP on 8 GPUs, no recompute, 31 layers' activations offloaded.
ParallelConfig offloading_layout() {
  ParallelConfig p;
  p.tp = 2;
  p.dp = 4;
  p.sp = true;
  p.recompute = Recompute::None;
  p.offload_layers = 31;
  return p;
}

TEST(Offload, CopiesBeyondThePassAreExposed) {
  // Llama 3 8B (32 layers) at TP2 with SP, one 8192-token sequence, no recompute: A bytes
  // of activations per layer (memory_model_test derives the formula). k = 31 layers cross
  // PCIe Gen5 at 64 GB/s a direction: copy = 31 A / 64e9. A forward of 0.1 s hides
  // 0.1 x 31/32 of it, a backward of 0.2 s 0.2 x 31/32.
  SweepSpec s = test::spec_with("llama3-8b", "h100-sxm5-80gb", "dgx-h100-superpod", 64, 8192);
  ParallelConfig p = offloading_layout();
  StageInfo st;
  st.num_layers = 32;
  const double A = layer_activation_bytes(s.model, s.training, p);
  const OffloadTime t = offload_time(s.model, s.training, s.hardware[0], p, st, 0.1, 0.2);
  const double copy = 31 * A / 64e9;
  EXPECT_NEAR(t.copy_s, copy, 1e-12);
  EXPECT_NEAR(t.fwd_exposed, std::max(0.0, copy - 0.1 * 31 / 32), 1e-12);
  EXPECT_NEAR(t.bwd_exposed, std::max(0.0, copy - 0.2 * 31 / 32), 1e-12);
  // Offload caps at one layer fewer than the stage's: the last layer's activations stay.
  p.offload_layers = 40;
  EXPECT_NEAR(offload_time(s.model, s.training, s.hardware[0], p, st, 0.1, 0.2).copy_s, copy,
              1e-12);
  p.offload_layers = 0;
  EXPECT_EQ(offload_time(s.model, s.training, s.hardware[0], p, st, 0.1, 0.2).copy_s, 0.0);
}

TEST(Offload, CopiesCrossTheHostLinkThePcieUnlessTheGpuNamesAnother) {
  // configs/hardware/h100-sxm5-80gb.yaml gives pcie_bandwidth 64 GB/s and no
  // host_link_bandwidth: the copies cross PCIe, 31 A / 64e9 s (the case above). A Grace
  // superchip's NVLink-C2C at 450 GB/s a direction (GB200 NVL72 datasheet: 900 GB/s
  // bidirectional) carries the same bytes in 31 A / 450e9 s.
  const std::string file = test::source_path("configs/hardware/h100-sxm5-80gb.yaml");
  YAML::Node node = load_yaml_file(file);
  const HardwareSpec hgx = parse_hardware(node, file);
  EXPECT_EQ(hgx.host_link_bandwidth_Bps, 64e9);
  node["host_link_bandwidth"] = "450GB/s";
  const HardwareSpec grace = parse_hardware(node, file);
  EXPECT_EQ(grace.host_link_bandwidth_Bps, 450e9);
  SweepSpec s = test::spec_with("llama3-8b", "h100-sxm5-80gb", "dgx-h100-superpod", 64, 8192);
  ParallelConfig p = offloading_layout();
  StageInfo st;
  st.num_layers = 32;
  const double A = layer_activation_bytes(s.model, s.training, p);
  EXPECT_NEAR(offload_time(s.model, s.training, grace, p, st, 0, 0).copy_s, 31 * A / 450e9, 1e-12);
}

TEST(Offload, BothEvaluatorsChargeTheSameExposure) {
  // The layout above on 8 GPUs, 16 micro-batches per replica: the passes hide little of
  // 31 layers' copies; the DES adds them at the pass's end by the same rule.
  SweepSpec s = test::spec_with("llama3-8b", "h100-sxm5-80gb", "dgx-h100-superpod", 64, 8192);
  s.search.num_gpus = {8};
  PointEvaluator pe(s, Fidelity::Des);
  Point pt;
  pt.par.tp = 2;
  pt.par.dp = 4;
  pt.par.sp = true;
  pt.par.recompute = Recompute::None;
  pt.par.offload_layers = 31;
  Workload w;
  EvalResult a, d;
  pe.evaluate(pt, w, a, Fidelity::Analytical);
  pe.evaluate(pt, w, d, Fidelity::Des);
  ASSERT_EQ(a.status, Status::Ok);
  EXPECT_GT(a.offload_time_s, 0.05 * a.step_time_s);
  EXPECT_NEAR(d.offload_time_s, a.offload_time_s, 0.02 * d.step_time_s);
  EXPECT_NEAR(d.step_time_s, a.step_time_s, 0.02 * d.step_time_s);
  std::printf("offload 31 layers: analytical %.3f s of %.3f s, DES %.3f s of %.3f s\n",
              a.offload_time_s, a.step_time_s, d.offload_time_s, d.step_time_s);
}

}  // namespace
}  // namespace rapid
