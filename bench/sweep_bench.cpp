// Points per second of the per-point path of rapid-sweep on one thread (docs/architecture.md
// "Two fidelities": one analytical prediction must cost microseconds): decode(i) alone, and
// decode(i) + PointEvaluator::evaluate with a warm scratch workload, over the demo job
// jobs/llama3-70b-256xh100.yaml (or the job in env RAPID_BENCH_JOB). items_per_second is
// points/s.
#include <benchmark/benchmark.h>

#include <cstdlib>
#include <random>
#include <string>

#include "bench_support.hpp"
#include "rapid/analytical/pipeline_program.hpp"
#include "rapid/eval/point_evaluator.hpp"
#include "rapid/spec/sweep_spec.hpp"
#include "rapid/sweep/enumerator.hpp"

namespace {

void BM_Decode(benchmark::State& state) {
  const rapid::Enumerator e(rapid::bench::demo_spec());
  const int64_t n = e.size();
  int64_t i = 0;
  for (auto _ : state) {
    rapid::Point p = e.decode(i);
    benchmark::DoNotOptimize(p);
    if (++i == n) i = 0;
  }
  state.SetItemsProcessed(state.iterations());
  state.counters["points"] = static_cast<double>(n);
}
BENCHMARK(BM_Decode);

void BM_DecodeEvaluate(benchmark::State& state) {
  const rapid::SweepSpec& spec = rapid::bench::demo_spec();
  const rapid::Enumerator e(spec);
  const rapid::PointEvaluator eval(spec);
  rapid::Workload scratch;
  rapid::EvalResult r;
  const int64_t n = e.size();
  // Warm the scratch workload on every point once, as a rank does in its first chunk.
  for (int64_t i = 0; i < n; ++i) eval.evaluate(e.decode(i), scratch, r);
  int64_t i = 0;
  for (auto _ : state) {
    eval.evaluate(e.decode(i), scratch, r);
    benchmark::DoNotOptimize(r);
    if (++i == n) i = 0;
  }
  state.SetItemsProcessed(state.iterations());
  state.counters["points"] = static_cast<double>(n);
}
BENCHMARK(BM_DecodeEvaluate);

// The interleaved pipeline walk alone (pipeline_program.hpp) on unequal devices: pp 8,
// vpp 3, m 96 (4608 passes); items_per_second is passes/s.
void BM_PipelineWalk(benchmark::State& state) {
  rapid::PipelineInput in;
  in.pp = 8;
  in.vpp = 3;
  in.m = 96;
  in.p2p_s = 1e-4;
  std::mt19937_64 rng(1);
  std::uniform_real_distribution<double> t(1e-3, 2e-3);
  for (int64_t k = 0; k < in.pp * in.vpp; ++k)
    in.fwd.push_back(t(rng)), in.bwd.push_back(2 * t(rng));
  const rapid::PipelineProgram& program = rapid::PipelineProgram::of(in.pp, in.vpp, in.m);
  rapid::PipelineTimes out;
  for (auto _ : state) {
    program.run(in, out);
    benchmark::DoNotOptimize(out.makespan);
  }
  state.SetItemsProcessed(state.iterations() * 2 * in.pp * in.vpp * in.m);
}
BENCHMARK(BM_PipelineWalk);

}  // namespace

BENCHMARK_MAIN();
