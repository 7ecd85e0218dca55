// Chakra trace writing speed on one thread (issue 14; docs/chakra.md "Speed and memory"):
//  - BM_TraceWriteDemoRanks0to7: `rapid trace` of the demo job's baseline layout
//    (jobs/llama3-70b-256xh100.yaml: DP8 TP8 PP4; or env RAPID_BENCH_JOB), ranks 0-7 (one
//    node: stage 0's first TP group), written to a temporary directory each iteration.
// items_per_second is nodes/s and bytes_per_second the .et bytes written per second; the
// counters nodes and file_bytes are one iteration's (the same every iteration).
#include <benchmark/benchmark.h>

#include <filesystem>
#include <string>

#include <unistd.h>

#include "bench_support.hpp"
#include "rapid/analytical/analytical_evaluator.hpp"
#include "rapid/sweep/enumerator.hpp"
#include "rapid/trace/trace_writer.hpp"

namespace {

void BM_TraceWriteDemoRanks0to7(benchmark::State& state) {
  const rapid::SweepSpec& spec = rapid::bench::demo_spec();
  const rapid::Enumerator e(spec);
  const int64_t base = e.baseline_index();
  const rapid::Point p = e.decode(base < 0 ? 0 : base);
  const rapid::HardwareSpec& hw = spec.hardware[static_cast<size_t>(p.hardware)];
  const rapid::NetworkSpec& net = spec.network_of(static_cast<size_t>(p.hardware));
  const rapid::AnalyticalEvaluator eval(spec.model, spec.training, hw, net);
  rapid::Workload w;
  rapid::build_workload(spec.model, spec.training, net, p.par, w);
  const rapid::trace::TraceInputs in{&w,
                                     &spec.model,
                                     &spec.training,
                                     &eval.compute_cost(),
                                     &eval.collective_cost(),
                                     eval.step_efficiency(),
                                     net.gpus_per_node};
  const std::filesystem::path dir =
      std::filesystem::temp_directory_path() / ("rapid-trace-bench-" + std::to_string(::getpid()));
  rapid::trace::TraceMetadata meta;
  meta.job = spec.name;
  meta.layout = p.par.describe();
  rapid::trace::TraceWriteSummary s;
  for (auto _ : state) {
    s = rapid::trace::write_trace(in, meta, dir.string(), "bench", 0, 7);
    benchmark::DoNotOptimize(s.nodes);
  }
  std::filesystem::remove_all(dir);
  state.SetItemsProcessed(state.iterations() * static_cast<int64_t>(s.nodes));
  state.SetBytesProcessed(state.iterations() * static_cast<int64_t>(s.bytes));
  state.counters["nodes"] = static_cast<double>(s.nodes);
  state.counters["file_bytes"] = static_cast<double>(s.bytes);
}
BENCHMARK(BM_TraceWriteDemoRanks0to7)->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
