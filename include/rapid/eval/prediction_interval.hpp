// A row's prediction intervals (docs/validation.md "Prediction intervals"): its hardware
// entry's band (spec/interval_spec.hpp) applied to the figures the row's evaluator wrote.
#pragma once

#include <string>

#include "rapid/eval/eval_result.hpp"
#include "rapid/spec/interval_spec.hpp"

namespace rapid {

/// Sets the *_lo/*_hi fields and `extrapolated` of `r` from band `b` (`simulated`: the DES
/// wrote the row, its own residuals' interval). A time t gets [t e^lo, t e^hi]; a rate
/// (tokens/s, MFU) the inverse, [x e^-hi, x e^-lo]. Training rows: the step time's interval;
/// serving rows (`serving`): the latency's for TTFT, ITL and E2E, and ITL's for the decode
/// step, tokens/s and MFU. Rows that are not ok keep NaN.
void apply_interval(const IntervalBand& b, bool simulated, bool serving, EvalResult& r);

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
