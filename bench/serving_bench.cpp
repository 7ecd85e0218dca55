// Points per second of serving sweeps (docs/inference.md) on one thread: every point of
// jobs/llama3-70b-serving-8xh100.yaml (or $RAPID_BENCH_SERVING_JOB) under the steady-state
// closed form and under the continuous-batching simulation. items_per_second is points/s;
// the simulation also counts its iterations.
#include <benchmark/benchmark.h>

#include <cstdlib>
#include <string>

#include "rapid/eval/point_evaluator.hpp"
#include "rapid/spec/sweep_spec.hpp"
#include "rapid/sweep/enumerator.hpp"

namespace {

const rapid::SweepSpec& serving_spec() {
  static const rapid::SweepSpec spec = [] {
    const char* env = std::getenv("RAPID_BENCH_SERVING_JOB");
    return rapid::load_sweep_spec(env && *env ? std::string(env)
                                              : std::string(RAPID_SOURCE_DIR) +
                                                    "/jobs/llama3-70b-serving-8xh100.yaml");
  }();
  return spec;
}

void run(benchmark::State& state, rapid::Fidelity f) {
  const rapid::SweepSpec& spec = serving_spec();
  const rapid::Enumerator e(spec);
  const rapid::PointEvaluator eval(spec, f);
  rapid::Workload scratch;
  rapid::EvalResult r;
  const int64_t n = e.size();
  int64_t i = 0;
  for (auto _ : state) {
    eval.evaluate(e.decode(i), scratch, r, f);
    benchmark::DoNotOptimize(r);
    if (++i == n) i = 0;
  }
  state.SetItemsProcessed(state.iterations());
  state.counters["points"] = static_cast<double>(n);
}

void BM_ServingClosedForm(benchmark::State& state) {
  run(state, rapid::Fidelity::Analytical);
}
BENCHMARK(BM_ServingClosedForm);

void BM_ServingSimulation(benchmark::State& state) {
  run(state, rapid::Fidelity::Des);
}
BENCHMARK(BM_ServingSimulation)->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
