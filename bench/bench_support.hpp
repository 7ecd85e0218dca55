// Shared by the benchmarks: the job they measure (the demo job, or $RAPID_BENCH_JOB).
#pragma once

#include <cstdlib>
#include <string>

#include "rapid/spec/sweep_spec.hpp"

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

}  // namespace rapid::bench
