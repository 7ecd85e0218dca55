// A row's prediction intervals (docs/validation.md "Prediction intervals"): its hardware
// entry's band (spec/interval_spec.hpp) applied to the figures the row's evaluator wrote.
#pragma once

#include <string>

#include "rapid/core/eval_result.hpp"
#include "rapid/spec/interval_spec.hpp"

namespace rapid {

/// A band's interval as the factors a row's figures are multiplied by: a time t gets
/// [t lo, t hi] = [t e^q.lo, t e^q.hi], a rate x (tokens/s, MFU) the inverse, [x / hi, x / lo].
/// Computed once per hardware entry and fidelity (PointEvaluator), not per row.
struct IntervalFactors {
  double lo = EvalResult::kNaN, hi = EvalResult::kNaN;  ///< NaN: no interval
  bool extrapolated = false;
};

/// The factors of band `b` for rows the DES wrote (`simulated`: its own residuals'
/// interval) or the analytical model.
IntervalFactors interval_factors(const IntervalBand& b, bool simulated);

/// Sets the *_lo/*_hi fields and `extrapolated` of `r`. Training rows: the step time's
/// interval; serving rows (`serving`): the latency's for TTFT, ITL and E2E, and ITL's for
/// the decode step, tokens/s and MFU. Rows that are not ok keep NaN.
void apply_interval(const IntervalFactors& f, bool serving, EvalResult& r);

/// `x` with 3 significant digits (87510 -> 87500, 0.52317 -> 0.523): an interval's ends.
std::string short_number(double x);

/// " (80%: 19.1-22.6 s)": interval [lo, hi] times `scale` (short_number) with `unit`
/// appended as given (" s", "%"); "" when lo is NaN.
std::string interval_text(double lo, double hi, double coverage, const char* unit,
                          double scale = 1);

/// The `rapid predict` line saying where a row's interval comes from (or that there is
/// none), and that the pair is extrapolated when it is.
std::string describe_interval(const IntervalBand& b, bool simulated);

}  // namespace rapid
