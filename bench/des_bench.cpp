// Discrete-event simulator throughput on one thread (issue 5; docs/des.md "Performance"):
//  - BM_EventQueue: the future-event set alone (push + pop of one event, a heap of 1024
//    pending events): events/s of the bare engine;
//  - BM_DesDemoLayouts: DES points/s over every feasible layout of the demo job
//    jobs/llama3-70b-256xh100.yaml (Llama 3 70B on 256 H100; or env RAPID_BENCH_JOB),
//    with its counters events/s (simulation events processed per second of DES time,
//    including rate solves and setup) and events/point;
//  - BM_DesDemoLayoutsEveryMicrobatch: the same without the steady-state extrapolation;
//  - BM_DesDemoLayoutsNoDynamicFolding: the same with every collective in the flow network
//    from its start (DesOptions::fold_alone off);
//  - BM_DesDemoLayoutsThermal/27, /65: the same with the thermal model on (inlet 27, 65 C);
//  - BM_DesBaseline: the job's baseline layout alone;
//  - BM_Des405bFull/N: `rapid predict jobs/llama3-405b-8192xh100.yaml --fidelity des --full
//    --gpus N` (Llama 3 405B, dp N/128 tp8 pp16 vpp4, 2,048 micro-batches of work whatever N:
//    every replica and every micro-batch simulated; issue 35), with counters events, solves
//    and step_s (the step time; --benchmark_format=json prints it to every digit).
// items_per_second is events/s (BM_EventQueue) or points/s (the others); one iteration of
// the DES benchmarks evaluates every point of its list.
#include <benchmark/benchmark.h>

#include <cstdlib>
#include <map>
#include <string>
#include <vector>

#include "bench_support.hpp"
#include "rapid/des/des_evaluator.hpp"
#include "rapid/des/event_queue.hpp"
#include "rapid/eval/point_evaluator.hpp"
#include "rapid/spec/sweep_spec.hpp"
#include "rapid/sweep/enumerator.hpp"

namespace {

void BM_EventQueue(benchmark::State& state) {
  rapid::des::EventQueue q;
  uint64_t x = 1;
  for (int i = 0; i < 1024; ++i) q.push(static_cast<rapid::des::SimTime>(i * 1000), 0, i);
  for (auto _ : state) {
    const rapid::des::Event e = q.pop();
    x = x * 6364136223846793005ull + 1442695040888963407ull;
    q.push(e.time + static_cast<rapid::des::SimTime>(x >> 50), 0, e.target);
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_EventQueue);

void run_des(benchmark::State& state, const std::vector<rapid::Point>& points,
             const rapid::SweepSpec& spec = rapid::bench::demo_spec(),
             const rapid::DesOptions& options = {}) {
  const rapid::PointEvaluator eval(spec, rapid::Fidelity::Des, options);
  rapid::Workload w;
  rapid::EvalResult r;
  rapid::DesReport report;
  for (const rapid::Point& p : points) eval.evaluate(p, w, r);  // warm the scratch
  double events = 0;
  for (auto _ : state)  // one iteration: every point of the list
    for (const rapid::Point& p : points) {
      eval.evaluate(p, w, r);
      benchmark::DoNotOptimize(r);
    }
  // Events per point, counted once over the list (outside the timed loop).
  for (const rapid::Point& p : points) {
    eval.evaluate(p, w, r);
    eval.simulate(p, w, r, {&report, nullptr, nullptr, false});
    events += static_cast<double>(report.events);
  }
  const double per_point = events / static_cast<double>(points.size());
  const double n = static_cast<double>(points.size()) * static_cast<double>(state.iterations());
  state.SetItemsProcessed(static_cast<int64_t>(n));
  state.counters["events/point"] = per_point;
  state.counters["events/s"] = benchmark::Counter(per_point * n, benchmark::Counter::kIsRate);
  state.counters["points"] = static_cast<double>(points.size());
}

void BM_DesDemoLayouts(benchmark::State& state) {
  run_des(state, rapid::bench::feasible_points());
}
BENCHMARK(BM_DesDemoLayouts)->Unit(benchmark::kMillisecond);

// The same without the steady-state extrapolation (every micro-batch simulated, `--full`'s
// half that is not about replicas): what docs/des.md "Steady state" saves.
void BM_DesDemoLayoutsEveryMicrobatch(benchmark::State& state) {
  rapid::DesOptions o;
  o.steady_state = false;
  run_des(state, rapid::bench::feasible_points(), rapid::bench::demo_spec(), o);
}
BENCHMARK(BM_DesDemoLayoutsEveryMicrobatch)->Unit(benchmark::kMillisecond);

// The same with every collective and transfer in the flow network from its start: what
// docs/des.md "Dynamic folding" saves.
void BM_DesDemoLayoutsNoDynamicFolding(benchmark::State& state) {
  rapid::DesOptions o;
  o.fold_alone = false;
  run_des(state, rapid::bench::feasible_points(), rapid::bench::demo_spec(), o);
}
BENCHMARK(BM_DesDemoLayoutsNoDynamicFolding)->Unit(benchmark::kMillisecond);

// The same layouts with the thermal model on (docs/nonideal.md), air cooling at the inlet
// temperature of the argument: 27 C (ASHRAE's recommended limit: nothing throttles, one
// simulation per point and one replayed period per GPU class) and 65 C (the demo's layouts
// throttle: simulations until the step time repeats with the steady-state derates fed
// back, the profiles replayed to their periodic steady states).
void BM_DesDemoLayoutsThermal(benchmark::State& state) {
  static std::map<int64_t, rapid::SweepSpec> specs;
  auto [it, added] = specs.try_emplace(state.range(0), rapid::bench::demo_spec());
  if (added) {
    rapid::NonIdealSpec& s = it->second.scenarios.front();
    s.power = s.thermal = true;
    s.cooling.ambient_C = static_cast<double>(state.range(0));
  }
  run_des(state, rapid::bench::feasible_points(), it->second);
}
BENCHMARK(BM_DesDemoLayoutsThermal)->Arg(27)->Arg(65)->Unit(benchmark::kMillisecond);

void BM_DesBaseline(benchmark::State& state) {
  const rapid::SweepSpec& spec = rapid::bench::demo_spec();
  const rapid::Enumerator e(spec);
  if (e.baseline_index() < 0) {
    state.SkipWithError("the job has no baseline");
    return;
  }
  run_des(state, {e.decode(e.baseline_index())});
}
BENCHMARK(BM_DesBaseline)->Unit(benchmark::kMillisecond);

// One iteration: one full simulation (every replica, every micro-batch) of the 405B job's
// baseline layout at state.range(0) GPUs.
void BM_Des405bFull(benchmark::State& state) {
  static const rapid::SweepSpec spec =
      rapid::load_sweep_spec(std::string(RAPID_SOURCE_DIR) + "/jobs/llama3-405b-8192xh100.yaml");
  rapid::DesOptions o;
  o.replicas = rapid::des::ReplicaMode::All;
  o.steady_state = false;
  const rapid::PointEvaluator eval(spec, rapid::Fidelity::Des, o);
  rapid::Point p;
  p.par = *spec.baseline;
  p.par.dp = static_cast<int32_t>(state.range(0) / (p.par.tp * p.par.pp * p.par.cp));
  rapid::Workload w;
  rapid::EvalResult r;
  rapid::DesReport report;
  for (auto _ : state) {
    eval.evaluate(p, w, r, rapid::Fidelity::Des, {&report, nullptr, nullptr, false});
    benchmark::DoNotOptimize(r);
  }
  state.counters["events"] = static_cast<double>(report.events);
  state.counters["solves"] = static_cast<double>(report.solves);
  state.counters["step_s"] = r.step_time_s;
}
BENCHMARK(BM_Des405bFull)
    ->Arg(1024)
    ->Arg(4096)
    ->Arg(8192)
    ->Arg(16384)
    ->Unit(benchmark::kSecond)
    ->MeasureProcessCPUTime();

}  // namespace

BENCHMARK_MAIN();
