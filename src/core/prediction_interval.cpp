#include "rapid/core/prediction_interval.hpp"

#include <fmt/format.h>

#include <cmath>

namespace rapid {

namespace {

// A time's interval [t lo, t hi].
void time_interval(double t, const IntervalFactors& f, double& lo, double& hi) {
  lo = t * f.lo;
  hi = t * f.hi;
}

// A rate x = work / time: the time's interval inverted, [x / hi, x / lo].
void rate_interval(double x, const IntervalFactors& f, double& lo, double& hi) {
  lo = x / f.hi;
  hi = x / f.lo;
}

}  // namespace

IntervalFactors interval_factors(const IntervalBand& b, bool simulated) {
  const LogInterval& q = b.interval.of(simulated);
  IntervalFactors f;
  f.extrapolated = b.extrapolated;
  if (q.valid()) {
    f.lo = std::exp(q.lo);
    f.hi = std::exp(q.hi);
  }
  return f;
}

std::string short_number(double x) {
  if (!(std::abs(x) >= 999.5)) return fmt::format("{:.3g}", x);  // 999.6: not "1e+03"
  const double unit = std::pow(10.0, std::floor(std::log10(std::abs(x))) - 2);
  return fmt::format("{:.0f}", std::round(x / unit) * unit);
}

void apply_interval(const IntervalFactors& f, bool serving, EvalResult& r) {
  r.extrapolated = f.extrapolated ? 1 : 0;
  if (r.status != Status::Ok || !(f.lo <= f.hi)) return;
  time_interval(r.step_time_s, f, r.step_time_lo_s, r.step_time_hi_s);
  rate_interval(r.tokens_per_s, f, r.tokens_per_s_lo, r.tokens_per_s_hi);
  rate_interval(r.mfu, f, r.mfu_lo, r.mfu_hi);
  if (!serving) return;
  time_interval(r.ttft_s, f, r.ttft_lo_s, r.ttft_hi_s);
  time_interval(r.itl_s, f, r.itl_lo_s, r.itl_hi_s);
  time_interval(r.e2e_latency_s, f, r.e2e_latency_lo_s, r.e2e_latency_hi_s);
}

std::string interval_text(double lo, double hi, double coverage, const char* unit, double scale) {
  if (std::isnan(lo)) return "";
  return fmt::format(" ({:.0f}%: {}-{}{})", 100 * coverage, short_number(lo * scale),
                     short_number(hi * scale), unit);
}

std::string describe_interval(const IntervalBand& b, bool simulated) {
  const LogInterval& q = b.interval.of(simulated);
  if (std::isnan(b.coverage))
    return "interval    none: no configs/calibration/intervals.yaml was found\n";
  if (!q.valid()) return "interval    none: the interval file has no residuals of this fidelity\n";
  std::string out;
  if (b.extrapolated) out = fmt::format("extrapolated {}\n", b.extrapolation);
  return out + fmt::format(
                   "interval    {:.0f}% prediction interval: the measurement within x{:.3f} to "
                   "x{:.3f} of the {} figure; from {} (docs/validation.md)\n",
                   100 * b.coverage, std::exp(q.lo), std::exp(q.hi),
                   simulated ? "simulated" : "analytical", b.basis);
}

}  // namespace rapid
