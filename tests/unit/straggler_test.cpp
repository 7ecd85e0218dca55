// Stragglers and the power columns through PointEvaluator (docs/nonideal.md): a GPU at half
// clock slows the step by its compute-bound work, in both fidelities, and bounds it; a
// straggler outside the job is an input error; energy, average power and tokens per joule
// are consistent.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <memory>
#include <string>

#include "rapid/common/error.hpp"
#include "rapid/eval/point_evaluator.hpp"
#include "rapid/eval/step_profile.hpp"
#include "rapid/spec/yaml_reader.hpp"
#include "rapid/sweep/enumerator.hpp"
#include "test_support.hpp"

namespace rapid {
namespace {

// Llama 3 8B on 16 H100 (2 DGX nodes of 8): DP16, TP1, PP1, ZeRO-3, one sequence of 4096
// tokens per micro-batch, 8 micro-batches per replica (gbs 128). One point.
std::string job(const std::string& nonideal, const std::string& hardware = "") {
  return "model: " + test::source_path("configs/models/llama3-8b.yaml") +
         "\n"
         "hardware: " +
         (hardware.empty() ? test::source_path("configs/hardware/h100-sxm5-80gb.yaml") : hardware) +
         "\n"
         "network: " +
         test::source_path("configs/networks/dgx-h100-superpod.yaml") +
         "\n"
         "gpus: 16\n"
         "training: {global_batch_size: 128, seq_length: 4096}\n"
         "search: {tp: [1], pp: [1], mbs: [1], recompute: [selective], sp: [false],\n"
         "         zero_stage: [3]}\n" +
         nonideal;
}

struct JobRun {
  SweepSpec spec;
  std::unique_ptr<PointEvaluator> pe;  // refers to spec: a JobRun stays where it is built
  EvalResult analytical, des;
  Workload w;
};

// Both fidelities of the job's only point.
void run(const std::string& name, const std::string& nonideal, JobRun& out,
         const std::string& hardware = "", Status expected = Status::Ok) {
  out.spec = load_sweep_spec(test::write_temp(name, job(nonideal, hardware)));
  const Enumerator e(out.spec);
  ASSERT_EQ(e.size(), 1);
  const Point p = e.decode(0);
  ASSERT_EQ(p.par.dp, 16);
  out.pe = std::make_unique<PointEvaluator>(out.spec, Fidelity::Des);
  Workload wd;
  out.pe->evaluate(p, out.w, out.analytical, Fidelity::Analytical);
  out.pe->evaluate(p, wd, out.des, Fidelity::Des);
  ASSERT_EQ(out.analytical.status, expected);
  ASSERT_EQ(out.des.status, expected);
}

// The H100 file with its shutdown temperatures out of the way (150 C instead of 92 C for
// the die and 102 C for the HBM), so that a straggler can sit fully derated above 100 C and
// still run.
std::string hot_h100() {
  std::string text = read_text_file(test::source_path("configs/hardware/h100-sxm5-80gb.yaml"));
  for (const std::string key : {"die_shutdown_C: 92", "hbm_shutdown_C: 102"})
    text.replace(text.find(key), key.size(), key.substr(0, key.find(':')) + ": 150");
  return test::write_temp("h100-hot.yaml", text);
}

double rel(double a, double b) {
  return std::fabs(a - b) / std::fabs(b);
}

TEST(Straggler, HalfClockGpuSlowsTheStepByItsComputeBoundWork) {
  JobRun ideal, slow;
  run("straggler-ideal.yaml", "", ideal);
  run("straggler-half.yaml", "nonideal: {stragglers: [{gpu: 5, clock_factor: 0.5}]}\n", slow);
  ASSERT_TRUE(std::isnan(ideal.analytical.energy_per_step_J));  // ideal: no power columns
  EXPECT_EQ(ideal.analytical.bounding_gpu, -1);

  // The step's work on one GPU at full speed (one stage: the bottleneck), from its ops:
  // W = sum of op times, of which C is compute-bound (F / (peak x GEMM efficiency) of each
  // GEMM and attention kernel) and the rest memory-bound.
  const AnalyticalEvaluator& ev = slow.pe->evaluator(0, 0);
  const PowerModel pm(ev.hardware(), ev.compute_cost());
  const std::vector<OpEnergy> work =
      stage_work(slow.spec.model, slow.w, pm, ev.compute_cost(), ev.step_efficiency());
  ASSERT_EQ(work.size(), 1u);
  const OpEnergy& W = work[0];
  // The step's average board power stays under TDP: no cap stretches it.
  ASSERT_EQ(pm.capped_time(W), W.time_s);
  // That work is the breakdown's compute.
  EXPECT_LT(rel(W.time_s, ideal.analytical.compute_time_s), 1e-9);
  const double cs = W.compute_bound_s / W.time_s, ms = W.memory_bound_s / W.time_s;
  EXPECT_GT(cs, 0.5);  // GEMM-dominated
  // GPU 5 at clock 0.5 runs its work s = (1 - cs - ms) + cs / 0.5 + ms = 1 + cs times
  // longer; the data-parallel group waits for it, communication and the rest of the step
  // unchanged:  step = step_ideal + (s - 1) W = step_ideal + C.
  const double s = Derate{0.5, 1.0}.slowdown(cs, ms);
  EXPECT_LT(rel(s, 1.0 + cs), 1e-12);
  const double expected = ideal.analytical.step_time_s + (s - 1.0) * W.time_s;
  EXPECT_LT(rel(slow.analytical.step_time_s, expected), 1e-9)
      << slow.analytical.step_time_s << " vs " << expected;
  EXPECT_LT(rel(slow.analytical.step_time_s - ideal.analytical.step_time_s, W.compute_bound_s),
            1e-6);
  EXPECT_EQ(slow.analytical.bounding_gpu, 5);
  // The bounding GPU's compute ran C longer.
  EXPECT_LT(
      rel(slow.analytical.compute_time_s, ideal.analytical.compute_time_s + W.compute_bound_s),
      1e-9);
  // By op class (docs/model.md section 8): the lower clock stretches compute-bound time
  // only, so each class grows by its own compute-bound seconds C_k of W (GEMM and
  // attention kernels; streaming kernels have none), and the classes still sum to compute.
  const ClassWork Wk =
      stage_work_by_class(slow.spec.model, slow.w, pm, ev.compute_cost(), ev.step_efficiency())[0];
  EXPECT_EQ(Wk[static_cast<size_t>(OpClass::MemoryBound)].compute_bound_s, 0.0);
  for (size_t k = 0; k < kNumOpClasses; ++k)
    EXPECT_NEAR(slow.analytical.*kOpClassColumns[k] - ideal.analytical.*kOpClassColumns[k],
                Wk[k].compute_bound_s, 1e-6 * W.compute_bound_s)
        << kOpClassNames[k];
  for (const EvalResult* r : {&slow.analytical, &slow.des})
    EXPECT_NEAR(r->gemm_time_s + r->attention_time_s + r->memory_bound_time_s, r->compute_time_s,
                1e-9 * r->compute_time_s);
  EXPECT_EQ(slow.analytical.step_time_analytical_s, slow.analytical.step_time_s);

  // The DES: the same straggler, its data-parallel collectives waiting on it.
  EXPECT_LT(rel(slow.des.step_time_s, slow.analytical.step_time_s), 0.02)
      << slow.des.step_time_s << " vs " << slow.analytical.step_time_s;
  // The DES's own slowdown is most of C (overlapped ZeRO-3 traffic may hide a little).
  EXPECT_GT(slow.des.step_time_s - ideal.des.step_time_s, 0.9 * W.compute_bound_s);
  EXPECT_EQ(slow.des.bounding_gpu, 5);
  std::printf(
      "straggler at half clock: analytical %.4f s (ideal %.4f, C %.4f of W %.4f), "
      "DES %.4f s (ideal %.4f)\n",
      slow.analytical.step_time_s, ideal.analytical.step_time_s, W.compute_bound_s, W.time_s,
      slow.des.step_time_s, ideal.des.step_time_s);
}

TEST(Straggler, IndexBeyondTheJobIsAnInputError) {
  // 16 GPUs: ranks 0..15; GPU 16 is not in the job.
  const std::string path = test::write_temp(
      "straggler-out.yaml", job("nonideal: {stragglers: [{gpu: 16, clock_factor: 0.5}]}\n"));
  try {
    load_sweep_spec(path);
    ADD_FAILURE() << "no InputError";
  } catch (const InputError& e) {
    EXPECT_EQ(e.key(), "nonideal.stragglers[0]");
    EXPECT_EQ(e.value(), "16");
    EXPECT_EQ(e.file(), path);
  }
  // Node 2 of 8-GPU nodes starts at rank 16: outside too. Node 1 (ranks 8..15) is fine.
  EXPECT_THROW(
      load_sweep_spec(test::write_temp(
          "straggler-node.yaml", job("nonideal: {stragglers: [{node: 2, clock_factor: 0.5}]}\n"))),
      InputError);
  EXPECT_NO_THROW(load_sweep_spec(test::write_temp(
      "straggler-node1.yaml", job("nonideal: {stragglers: [{node: 1, clock_factor: 0.8}]}\n"))));
}

// A straggler with its own, worse cooling: its sink (the H100 file's air heatsink, 0.045
// C/W to the inlet air) sheds heat through 0.3331 C/W or more (below). Its sink then sits
// at 35 + 0.3331 P for its average board power P, over 100 C for P > 195 W even fully
// derated (idle alone is 130 W plus the dynamic power at half clock and 73% HBM); the HBM
// above it is past its full depth at 100 C, the die past its own at 89 C: clock 0.5, HBM
// 0.73 for good. Its work then takes
//   step = step_ideal + C (1 / 0.5 - 1) + M (1 / 0.73 - 1),
// C the compute-bound and M the memory-bound seconds of the step's work on full speed
// (the work's own, the interference stretch and the optimizer's streaming).
void expect_fully_derated(const JobRun& ideal, const JobRun& hot) {
  const AnalyticalEvaluator& ev = hot.pe->evaluator(0, 0);
  const PowerModel pm(ev.hardware(), ev.compute_cost());
  const OpEnergy W =
      stage_work(hot.spec.model, hot.w, pm, ev.compute_cost(), ev.step_efficiency())[0];
  const EvalResult& i = ideal.analytical;
  const double M = W.memory_bound_s + i.interference_time_s + i.optimizer_time_s;
  const double expected = i.step_time_s + W.compute_bound_s + M * (1.0 / 0.73 - 1.0);
  EXPECT_LT(rel(hot.analytical.step_time_s, expected), 1e-6)
      << hot.analytical.step_time_s << " vs " << expected;
  EXPECT_EQ(hot.analytical.bounding_gpu, 5);
  EXPECT_EQ(hot.analytical.throttle_fraction, 1.0);
  EXPECT_GT(hot.analytical.gpu_temperature_C, 100.0);
  EXPECT_GT(hot.analytical.hbm_temperature_C, 100.0);
  EXPECT_LT(rel(hot.des.step_time_s, hot.analytical.step_time_s), 0.02)
      << hot.des.step_time_s << " vs " << hot.analytical.step_time_s;
  EXPECT_EQ(hot.des.bounding_gpu, 5);
}

TEST(Straggler, OwnHotterCoolingThrottlesItForGood) {
  // The lumped form's rates set its sink: 1 / alpha = 20 J/C behind 1 / (0.1501 x 20) =
  // 0.3331 C/W.
  JobRun ideal, hot;
  run("hot-ideal.yaml", "nonideal: {thermal: true, ambient_C: 35}\n", ideal, hot_h100());
  // The others (inlet 35 C): the die under its 87 C onset at any power up to TDP (35 + 0.045
  // x 700 + 0.018 x 700 = 79 C).
  EXPECT_EQ(ideal.analytical.throttle_fraction, 0.0);
  EXPECT_EQ(ideal.analytical.bounding_gpu, -1);
  run("hot-beta.yaml",
      "nonideal: {thermal: true, ambient_C: 35, stragglers: [{gpu: 5, cooling: {alpha_C_per_J: "
      "0.05, beta_per_s: 0.1501}}]}\n",
      hot, hot_h100());
  expect_fully_derated(ideal, hot);
}

TEST(Straggler, FailedFanThrottlesItForGood) {
  // A tenth of the heatsink's conductance: 0.045 / 0.1 = 0.45 C/W, over 0.3331.
  JobRun ideal, hot;
  run("fan-ideal.yaml", "nonideal: {thermal: true, ambient_C: 35}\n", ideal, hot_h100());
  run("fan.yaml",
      "nonideal: {thermal: true, ambient_C: 35, stragglers: [{gpu: 5, cooling: {preset: air, "
      "conductance_factor: 0.1}}]}\n",
      hot, hot_h100());
  expect_fully_derated(ideal, hot);
}

// alpha alone is the sink's heat capacity (1 / alpha): it sets how fast the GPU heats, not
// how hot it gets. A straggler differing only in it settles where the others do: no
// throttling, the ideal step, the same temperatures.
TEST(Straggler, OwnCoolingDifferingOnlyInAlphaChangesNoSteadyState) {
  JobRun ideal, other;
  run("alpha-ideal.yaml", "nonideal: {thermal: true, ambient_C: 35}\n", ideal, hot_h100());
  run("alpha-only.yaml",
      "nonideal: {thermal: true, ambient_C: 35, stragglers: [{gpu: 5, cooling: {alpha_C_per_J: "
      "0.05}}]}\n",
      other, hot_h100());
  EXPECT_LT(rel(other.analytical.step_time_s, ideal.analytical.step_time_s), 1e-12);
  EXPECT_EQ(other.analytical.throttle_fraction, 0.0);
  EXPECT_NEAR(other.analytical.gpu_temperature_C, ideal.analytical.gpu_temperature_C, 1e-9);
  EXPECT_EQ(other.analytical.bounding_gpu, -1);
}

// The same failed fan on the stock H100 file: fully derated its die settles above 100 C,
// over the file's 92 C shutdown (GPU Shutdown Temp): the point cannot run, in both
// fidelities.
TEST(Straggler, HotterThanShutdownIsOverheat) {
  JobRun hot;
  run("overheat.yaml",
      "nonideal: {thermal: true, ambient_C: 35, stragglers: [{gpu: 5, cooling: {preset: air, "
      "conductance_factor: 0.1}}]}\n",
      hot, "", Status::Overheat);
  EXPECT_GT(hot.analytical.gpu_temperature_C, 92.0);
  EXPECT_GT(hot.des.gpu_temperature_C, 92.0);
}

TEST(Straggler, PowerColumnsAreConsistent) {
  JobRun ideal, power;
  run("power-ideal.yaml", "", ideal);
  run("power-on.yaml", "nonideal: {power: true}\n", power);
  const double gpus = 16, tokens = 128.0 * 4096;  // gbs x seq
  for (const EvalResult* r : {&power.analytical, &power.des}) {
    SCOPED_TRACE(r == &power.des ? "des" : "analytical");
    ASSERT_EQ(r->status, Status::Ok);
    EXPECT_GT(r->energy_per_step_J, 0.0);
    // Identity: energy = average GPU power x GPUs x step time.
    EXPECT_LT(rel(r->energy_per_step_J, r->avg_gpu_power_W * gpus * r->step_time_s), 1e-9);
    EXPECT_LT(rel(r->tokens_per_J, tokens / r->energy_per_step_J), 1e-12);
    // Each GPU draws between idle (130 W) and TDP (700 W).
    EXPECT_GT(r->avg_gpu_power_W, 130.0);
    EXPECT_LT(r->avg_gpu_power_W, 700.0);
    EXPECT_LE(r->peak_gpu_power_W, 700.0 * (1 + 1e-9));
    EXPECT_GE(r->peak_gpu_power_W, r->avg_gpu_power_W);
    EXPECT_TRUE(std::isnan(r->gpu_temperature_C));  // thermal off
    EXPECT_EQ(r->bounding_gpu, -1);
  }
  // Power alone changes no time (the step's average power is under TDP).
  EXPECT_LT(rel(power.analytical.step_time_s, ideal.analytical.step_time_s), 1e-12);
  EXPECT_LT(rel(power.des.step_time_s, ideal.des.step_time_s), 1e-3);
}

}  // namespace
}  // namespace rapid
