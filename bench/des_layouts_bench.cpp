// Per-layout cost of the DES over the feasible points of the demo job (or $RAPID_BENCH_JOB):
// where the time of BM_DesDemoLayouts goes (docs/des.md "Performance"). A bench command,
// not a Google Benchmark: it prints one CSV row per point on stdout (the layout, what the
// simulation did, the CPU time of the faster of two runs of DesEvaluator on this thread)
// and the totals by schedule and ZeRO stage on stderr.
//
//   build/rapid_des_layouts_bench [--every-microbatch] > layouts.csv
//
// --every-microbatch: without the steady-state extrapolation (DesOptions::steady_state).
#include <algorithm>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <map>
#include <utility>

#include "bench_support.hpp"
#include "rapid/des/des_evaluator.hpp"

namespace {

double thread_cpu_s() {
  timespec t{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) + 1e-9 * static_cast<double>(t.tv_nsec);
}

struct Total {
  int64_t points = 0;
  double cpu_s = 0, events = 0;
};

}  // namespace

int main(int argc, char** argv) {
  rapid::DesOptions options;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--every-microbatch") == 0) {
      options.steady_state = false;
    } else {
      std::fprintf(stderr, "usage: %s [--every-microbatch]\n", argv[0]);
      return 2;
    }
  }
  const rapid::SweepSpec& spec = rapid::bench::demo_spec();
  const std::vector<rapid::Point>& points = rapid::bench::feasible_points();
  const rapid::PointEvaluator des(spec, rapid::Fidelity::Des, options);
  rapid::Workload w;
  rapid::EvalResult r;
  rapid::DesReport report;
  for (const rapid::Point& p : points) des.evaluate(p, w, r);  // warm the scratch
  std::printf(
      "index,dp,tp,pp,vpp,mbs,zero_stage,recompute,microbatches,events,solves,flows,folded_ops,"
      "extrapolated_periods,period_microbatches,cpu_s,step_time_s\n");
  std::map<std::pair<bool, int>, Total> by_kind;  // (interleaved, ZeRO stage)
  Total all;
  for (const rapid::Point& p : points) {
    double cpu_s = 1e300;
    for (int k = 0; k < 2; ++k) {
      const double t0 = thread_cpu_s();
      des.evaluate(p, w, r);
      cpu_s = std::min(cpu_s, thread_cpu_s() - t0);
    }
    des.simulate(p, w, r, {&report, nullptr, nullptr, false});  // w, r: as evaluate() left them
    const rapid::ParallelConfig& q = p.par;
    std::printf("%lld,%d,%d,%d,%d,%d,%d,%s,%lld,%llu,%llu,%llu,%llu,%lld,%d,%.9f,%.17g\n",
                static_cast<long long>(p.index), q.dp, q.tp, q.pp, q.vpp, q.mbs, q.zero_stage,
                rapid::recompute_name(q.recompute), static_cast<long long>(w.num_microbatches),
                static_cast<unsigned long long>(report.events),
                static_cast<unsigned long long>(report.solves),
                static_cast<unsigned long long>(report.flows),
                static_cast<unsigned long long>(report.folded_ops),
                static_cast<long long>(report.extrapolated_periods), report.period_microbatches,
                cpu_s, r.step_time_s);
    for (Total* t : {&all, &by_kind[{q.vpp > 1, q.zero_stage}]}) {
      ++t->points;
      t->cpu_s += cpu_s;
      t->events += static_cast<double>(report.events);
    }
  }
  std::fprintf(stderr, "%lld points, %.3f CPU-s: %.1f points/s, %.0f events/point\n",
               static_cast<long long>(all.points), all.cpu_s,
               static_cast<double>(all.points) / all.cpu_s,
               all.events / static_cast<double>(all.points));
  for (const auto& [kind, t] : by_kind)
    std::fprintf(stderr, "  %-11s ZeRO %d: %4lld points, %5.1f%% of the time, %.0f events/point\n",
                 kind.first ? "interleaved" : "1F1B", kind.second, static_cast<long long>(t.points),
                 100 * t.cpu_s / all.cpu_s, t.events / static_cast<double>(t.points));
  return 0;
}
