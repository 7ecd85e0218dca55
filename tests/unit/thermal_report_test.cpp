// One "throttled" figure per GPU (docs/nonideal.md sec 2): the share of the time under any
// thermal slowdown, die or HBM. The row's thermal line (`rapid predict`'s "thermal") and
// the per-GPU lines of the DES's steady states come from one simulation and print the
// same figure for the same GPU.
#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "rapid/eval/point_evaluator.hpp"
#include "rapid/eval/report.hpp"
#include "rapid/eval/thermal_report.hpp"
#include "rapid/sweep/enumerator.hpp"
#include "test_support.hpp"

namespace rapid {
namespace {

// Llama 3 8B on 16 H100 (DP16, ZeRO-3), inlet 62 C, GPU 5 behind a heatsink at half its
// conductance: the normal GPUs throttle lightly, GPU 5 deeply.
SweepSpec hot_job() {
  const std::string text =
      "model: " + test::source_path("configs/models/llama3-8b.yaml") +
      "\nhardware: " + test::source_path("configs/hardware/h100-sxm5-80gb.yaml") +
      "\nnetwork: " + test::source_path("configs/networks/dgx-h100-superpod.yaml") +
      "\ngpus: 16\n"
      "training: {global_batch_size: 128, seq_length: 4096}\n"
      "search: {tp: [1], pp: [1], mbs: [1], recompute: [selective], sp: [false],\n"
      "         zero_stage: [3]}\n"
      "nonideal: {thermal: true, ambient_C: 62,\n"
      "           stragglers: [{gpu: 5, cooling: {conductance_factor: 0.5}}]}\n";
  return load_sweep_spec(test::write_temp("thermal-report.yaml", text));
}

// "throttled N% of the time" with N the rounded percentage.
std::string throttled(double fraction) {
  return "throttled " + std::to_string(static_cast<int>(std::lround(100 * fraction))) +
         "% of the time";
}

TEST(ThermalReport, OneThrottleFigurePerGpuOnEveryLine) {
  const SweepSpec spec = hot_job();
  const Enumerator e(spec);
  ASSERT_EQ(e.size(), 1);
  const Point p = e.decode(0);
  const PointEvaluator eval(spec, Fidelity::Des);
  Workload w;
  EvalResult r;
  DesReport report;
  ThermalReport thermal;
  eval.evaluate(p, w, r, Fidelity::Des, {&report, nullptr, &thermal, false});
  ASSERT_EQ(r.status, Status::Ok);
  ASSERT_GE(thermal.instances.size(), 2u);  // the straggler and the others
  // The row's figure is its hottest GPU's, the same number.
  size_t hot = 0;
  for (size_t i = 1; i < thermal.instances.size(); ++i)
    if (thermal.instances[i].die_avg_C > thermal.instances[hot].die_avg_C) hot = i;
  EXPECT_EQ(thermal.first_gpu[hot], 5);
  EXPECT_EQ(r.throttle_fraction, thermal.instances[hot].throttle_fraction);
  EXPECT_EQ(r.gpu_temperature_C, thermal.instances[hot].die_avg_C);
  EXPECT_GT(r.throttle_fraction, 0.0);
  // The same text on both lines, and on every GPU's line its own one figure: any of its
  // nodes derated (at least each node's own share, at most their sum).
  const std::string row = describe_thermal_line(r);
  const std::string gpus = describe_thermal(thermal);
  EXPECT_NE(row.find(throttled(r.throttle_fraction)), std::string::npos) << row;
  EXPECT_NE(gpus.find("GPU 5      die"), std::string::npos) << gpus;
  for (const ReplayResult& x : thermal.instances) {
    EXPECT_NE(gpus.find(throttled(x.throttle_fraction)), std::string::npos) << gpus;
    EXPECT_GE(x.throttle_fraction, std::max(x.die_throttle_fraction, x.hbm_throttle_fraction));
    EXPECT_LE(x.throttle_fraction, x.die_throttle_fraction + x.hbm_throttle_fraction + 1e-12);
  }
  // describe_result prints the row's line.
  EXPECT_NE(describe_result(spec, p, r).find(row), std::string::npos);
}

}  // namespace
}  // namespace rapid
