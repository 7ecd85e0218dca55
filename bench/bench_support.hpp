// Shared by the benchmarks: the job they measure (the demo job, or $RAPID_BENCH_JOB) and
// its feasible points.
#pragma once

#include <cstdlib>
#include <string>
#include <vector>

#include "rapid/eval/point_evaluator.hpp"
#include "rapid/spec/sweep_spec.hpp"
#include "rapid/sweep/enumerator.hpp"

namespace rapid::bench {

inline const SweepSpec& demo_spec() {
  static const SweepSpec spec = [] {
    const char* env = std::getenv("RAPID_BENCH_JOB");
    return load_sweep_spec(env && *env
                               ? std::string(env)
                               : std::string(RAPID_SOURCE_DIR) + "/jobs/llama3-70b-256xh100.yaml");
  }();
  return spec;
}

/// The points of demo_spec() the analytical model finds feasible (status ok): the ones the
/// DES simulates. Listed once.
inline const std::vector<Point>& feasible_points() {
  static const std::vector<Point> points = [] {
    std::vector<Point> out;
    const SweepSpec& spec = demo_spec();
    const Enumerator e(spec);
    const PointEvaluator eval(spec);
    Workload w;
    EvalResult r;
    for (int64_t i = 0; i < e.size(); ++i) {
      const Point pt = e.decode(i);
      eval.evaluate(pt, w, r);
      if (r.status == Status::Ok) out.push_back(pt);
    }
    return out;
  }();
  return points;
}

}  // namespace rapid::bench
