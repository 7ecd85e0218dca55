// The two fidelities side by side over every feasible layout of a job (the demo job, or
// $RAPID_BENCH_JOB): a bench command, not a Google Benchmark. One CSV row per point on
// stdout: the layout, then for the step and each breakdown column the analytical and the
// DES value (docs/des.md "DES and analytical"); the distribution of the step difference on
// stderr.
//
//   build/rapid_fidelity_bench > fidelity.csv
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <vector>

#include "bench_support.hpp"

int main() {
  const rapid::SweepSpec& spec = rapid::bench::demo_spec();
  const std::vector<rapid::Point>& points = rapid::bench::feasible_points();
  const rapid::PointEvaluator pe(spec, rapid::Fidelity::Des);
  rapid::Workload w;
  rapid::EvalResult a, d;
  struct Col {
    const char* name;
    double rapid::EvalResult::*field;
  };
  const Col cols[] = {{"step", &rapid::EvalResult::step_time_s},
                      {"compute", &rapid::EvalResult::compute_time_s},
                      {"interference", &rapid::EvalResult::interference_time_s},
                      {"tp_comm", &rapid::EvalResult::tp_comm_time_s},
                      {"cp_comm", &rapid::EvalResult::cp_comm_time_s},
                      {"ep_comm", &rapid::EvalResult::ep_comm_time_s},
                      {"pp_comm", &rapid::EvalResult::pp_comm_time_s},
                      {"bubble", &rapid::EvalResult::bubble_time_s},
                      {"dp_exposed", &rapid::EvalResult::dp_exposed_time_s},
                      {"host_bound", &rapid::EvalResult::host_bound_time_s},
                      {"offload", &rapid::EvalResult::offload_time_s},
                      {"optimizer", &rapid::EvalResult::optimizer_time_s}};
  std::printf("index,dp,tp,pp,cp,ep,etp,vpp,mbs,sp,zero_stage,recompute,microbatches");
  for (const Col& c : cols) std::printf(",%s_a,%s_d", c.name, c.name);
  std::printf("\n");
  std::vector<double> diffs;
  for (const rapid::Point& p : points) {
    pe.evaluate(p, w, a, rapid::Fidelity::Analytical);
    pe.evaluate(p, w, d, rapid::Fidelity::Des);
    const rapid::ParallelConfig& q = p.par;
    std::printf("%lld,%d,%d,%d,%d,%d,%d,%d,%d,%d,%d,%s,%lld", static_cast<long long>(p.index), q.dp,
                q.tp, q.pp, q.cp, q.ep, q.etp, q.vpp, q.mbs, q.sp ? 1 : 0, q.zero_stage,
                rapid::recompute_name(q.recompute), static_cast<long long>(w.num_microbatches));
    for (const Col& c : cols) std::printf(",%.9g,%.9g", a.*c.field, d.*c.field);
    std::printf("\n");
    if (d.status == rapid::Status::Ok) diffs.push_back(d.step_time_s / a.step_time_s - 1.0);
  }
  std::sort(diffs.begin(), diffs.end());
  if (diffs.empty()) return 0;
  auto pct = [&](double q) {
    return 100.0 * diffs[static_cast<size_t>(q * static_cast<double>(diffs.size() - 1))];
  };
  const auto beyond =
      std::count_if(diffs.begin(), diffs.end(), [](double x) { return std::fabs(x) > 0.02; });
  std::fprintf(stderr,
               "%zu layouts: DES vs analytical step %% p5 %+.2f p50 %+.2f p95 %+.2f, min %+.2f "
               "max %+.2f; beyond 2%%: %lld\n",
               diffs.size(), pct(0.05), pct(0.5), pct(0.95), pct(0.0), pct(1.0),
               static_cast<long long>(beyond));
  return 0;
}
