// `rapid predict --result F.h5 --point N`: a sweep's row again, without retyping its
// layout. The job is the one the sweep read (the file's job_yaml, resolved from its
// job_path as the sweep did); the row gives the layout, GPU count, hardware variant and
// scenario. What changed since the sweep (the job file, the model or network config) is
// said, not hidden.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "apps/layout_options.hpp"
#include "rapid/spec/sweep_spec.hpp"

namespace rapid {

struct ResultPoint {
  SweepSpec spec;
  LayoutOptions layout;  ///< the row's layout as the options would give it
  int scenario = 0;
  /// Lines to print before the prediction: where it came from, what the row said, what
  /// changed since the sweep.
  std::vector<std::string> lines;
};

/// Reads point `point` of `result`. Throws InputError for a file that is not a result, a
/// point it does not hold, or a job that no longer loads.
ResultPoint load_result_point(const std::string& result, int64_t point);

}  // namespace rapid
