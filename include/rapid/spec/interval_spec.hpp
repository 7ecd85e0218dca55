// Prediction intervals (docs/validation.md "Prediction intervals"): the model's own
// out-of-sample residuals r = ln(measured / predicted) on the published tables, kept in
// configs/calibration/intervals.yaml (written by `rapid validate --fit-intervals`), and the
// one rule that turns them into an interval for a GPU type x stack family at parse time.
#pragma once

#include <yaml-cpp/yaml.h>

#include <cstdint>
#include <limits>
#include <string>
#include <vector>

namespace rapid {

struct SweepSpec;

/// An interval of r = ln(measured / predicted): the measurement lies in
/// [predicted e^lo, predicted e^hi] at the stated coverage. NaN: no interval.
struct LogInterval {
  static constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
  double lo = kNaN, hi = kNaN;
  bool valid() const { return lo <= hi; }
  bool covers(double r) const { return lo <= r && r <= hi; }
  /// (predicted e^hi - predicted e^lo) / predicted.
  double relative_width() const;
};

/// Split-conformal quantile of |r| (Lei et al. 2018, "Distribution-free predictive
/// inference for regression", JASA 113:1094, Algorithm 2): with n residuals (NaN ignored), the
/// ceil((n + 1) coverage)-th smallest |r|, the largest when n is too small (n + 1 < 1 /
/// (1 - coverage)). NaN when empty.
double conformal_abs_quantile(std::vector<double> residuals, double coverage);

/// The symmetric interval [-q, q] of q = conformal_abs_quantile(): in log space, so that a
/// measurement e^q times the prediction and one e^-q times it are equally likely misses.
LogInterval conformal_interval(std::vector<double> residuals, double coverage);

/// `b` with its width times `k` around its centre.
LogInterval widened(const LogInterval& b, double k);

/// The family of a stack (a framework or serving stack file name): the name up to its first
/// '-' (megatron-core-0.8 and megatron-lm-2022: megatron; nemo-24.07 and nemo-inference-2023:
/// nemo; nanotron: nanotron).
std::string stack_family(const std::string& stack);

/// One validation row's out-of-sample residuals, of its step time (training) or latency
/// (serving); NaN where not computed.
struct IntervalResidual {
  static constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
  std::string table, label;
  std::string hardware;       ///< the GPU type it ran on (hardware file name)
  std::string stack;          ///< the stack it ran (framework or serving stack name)
  double analytical = kNaN;   ///< the analytical model, factors fitted without its table
  double des = kNaN;          ///< the DES at the same layout and factors
  double other_gpu = kNaN;    ///< analytical, factors fitted on the other GPU types' tables
  double other_stack = kNaN;  ///< analytical, factors fitted on its GPU's other stack families
};

/// configs/calibration/intervals.yaml: the residuals and the rule's two settings.
struct IntervalSpec {
  std::string path;
  double coverage = 0.8;
  /// A GPU type x stack family with at least this many rows from at least this many tables
  /// gets its own interval; fewer: the one pooled over every row. Rows of one table share
  /// its errors (the source is the unit, docs/validation.md): with one held out, a family
  /// must keep two tables for its spread to say anything about a third.
  int64_t min_family_rows = 10;
  int64_t min_family_tables = 3;
  std::vector<IntervalResidual> training, serving;
};

/// The interval of each fidelity.
struct FidelityInterval {
  LogInterval analytical, des;
  const LogInterval& of(bool simulated) const { return simulated ? des : analytical; }
};

/// What a job's rows on one hardware entry get: training, the step time's interval (tokens/s
/// and MFU inverted); serving, the latency's (TTFT, ITL, E2E; step, tokens/s and MFU by ITL).
struct IntervalBand {
  double coverage = LogInterval::kNaN;  ///< NaN: no interval file was found
  bool extrapolated = false;            ///< no table measured this GPU type with this stack family
  double widening = 1;                  ///< factor applied to the width because of it
  FidelityInterval interval;
  std::string basis;          ///< where it comes from, in words (`rapid predict`)
  std::string extrapolation;  ///< why it is extrapolated, in words (empty when it is not)
};

/// Parses the file (InputError naming file, key, value and expectation).
IntervalSpec parse_interval_spec(const YAML::Node& node, const std::string& file);
IntervalSpec load_interval_spec(const std::string& path);

/// The band of GPU type `hardware` (`measured`: false for a hardware variant, which no table
/// measured) running `stack`, from the training or the serving residuals (docs/validation.md
/// "Prediction intervals": family or pooled quantiles; an uncovered pair gets the widest
/// band widened by the measured transfer penalty).
IntervalBand resolve_band(const IntervalSpec& s, const std::string& hardware, bool measured,
                          const std::string& stack, bool serving);

/// The measured transfer penalties (at least 1): the conformal |r| quantile of the rows
/// predicted with another GPU type's (stack family's) factors over that of the same rows
/// out of sample.
double gpu_transfer_penalty(const IntervalSpec& s);
double stack_transfer_penalty(const IntervalSpec& s);

/// Finds configs/calibration/intervals.yaml (the job's config search path) and sets
/// `spec.intervals` (one band per hardware entry) and `spec.intervals_source`; without the
/// file every band has no interval (coverage NaN).
void attach_intervals(SweepSpec& spec, const std::string& job_path);

}  // namespace rapid
