// The text `rapid validate --fit-intervals` prints and writes (interval_fit.hpp).
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <cmath>
#include <set>
#include <sstream>
#include <tuple>

#include "interval_fit.hpp"
#include "rapid/common/version.hpp"

namespace rapid {

namespace {

std::string ratio(const LogInterval& q) {
  return q.valid() ? fmt::format("x{:.3f}-{:.3f}", std::exp(q.lo), std::exp(q.hi)) : "-";
}

std::string percent(size_t covered, size_t rows) {
  return rows ? fmt::format("{}/{} = {:.1f}%", covered, rows, 100.0 * covered / rows) : "-";
}

size_t both_finite(const std::vector<IntervalResidual>& rows, double IntervalResidual::*other) {
  size_t n = 0;
  for (const IntervalResidual& r : rows)
    n += std::isfinite(r.analytical) && std::isfinite(r.*other);
  return n;
}

std::vector<double> residuals_of(const std::vector<IntervalResidual>& rows) {
  std::vector<double> out;
  for (const IntervalResidual& r : rows) out.push_back(r.analytical);
  return out;
}

void bands(const IntervalSpec& s, bool serving, std::string& out) {
  const std::vector<IntervalResidual>& rows = serving ? s.serving : s.training;
  std::set<std::tuple<std::string, std::string, std::string>> pairs;  // gpu, family, a stack
  std::set<std::pair<std::string, std::string>> seen;
  for (const IntervalResidual& r : rows)
    if (seen.insert({r.hardware, stack_family(r.stack)}).second)
      pairs.insert({r.hardware, stack_family(r.stack), r.stack});
  for (const auto& [gpu, family, stack] : pairs) {
    const IntervalBand b = resolve_band(s, gpu, true, stack, serving);
    out += fmt::format("  {:<8} {:<16} x {:<9} analytical {:<15} des {:<15} {}\n",
                       serving ? "serving" : "training", gpu, family, ratio(b.interval.analytical),
                       ratio(b.interval.des), b.basis);
  }
}

}  // namespace

std::string interval_summary(const IntervalFit& fit) {
  const IntervalSpec& s = fit.spec;
  std::string out = fmt::format(
      "Bands at {:.0f}% (measured / predicted step time or latency; tokens/s and MFU "
      "inverted):\n",
      100 * s.coverage);
  bands(s, false, out);
  bands(s, true, out);
  out += fmt::format(
      "Transfer penalties (conformal |r| quantile moved / out of sample): GPU type x{:.3f} "
      "({} rows), stack family x{:.3f} ({} rows)\n",
      gpu_transfer_penalty(s), both_finite(s.training, &IntervalResidual::other_gpu),
      stack_transfer_penalty(s), both_finite(s.training, &IntervalResidual::other_stack));
  std::vector<double> pairs;  // two rows of one table: the error of their ratio
  for (size_t i = 0; i < s.training.size(); ++i)
    for (size_t j = i + 1; j < s.training.size(); ++j)
      if (s.training[i].table == s.training[j].table)
        pairs.push_back(s.training[i].analytical - s.training[j].analytical);
  const double pair_q = conformal_abs_quantile(pairs, s.coverage);
  out += fmt::format(
      "Ratio of two rows of one table (same GPU type and stack; other models, sizes and "
      "layouts): within x{:.3f}-{:.3f} at {:.0f}% over {} pairs (one row alone: x{:.3f}-{:.3f})\n",
      std::exp(-pair_q), std::exp(pair_q), 100 * s.coverage, pairs.size(),
      std::exp(-conformal_abs_quantile(residuals_of(s.training), s.coverage)),
      std::exp(conformal_abs_quantile(residuals_of(s.training), s.coverage)));
  out += "Nested coverage: each table's rows against the interval of the other tables' rows\n";
  out += fmt::format("  {:<36} {:<16} {:>4} {:>18} {:>18} {:>11} {:>11}  {}\n", "table", "gpu",
                     "rows", "analytical", "des", "width a", "width d", "interval from");
  size_t rows[2] = {0, 0}, covered[2][2] = {{0, 0}, {0, 0}}, rows_des[2] = {0, 0};
  for (const HeldOutCoverage& c : fit.held_out) {
    out += fmt::format("  {:<36} {:<16} {:>4} {:>18} {:>18} {:>10.1f}% {:>10.1f}%  {}{}\n", c.table,
                       c.hardware, c.rows, percent(c.covered_analytical, c.rows),
                       percent(c.covered_des, c.rows_des), 100 * c.width_analytical,
                       100 * c.width_des, c.extrapolated ? "(extrapolated) " : "", c.basis);
    rows[c.serving] += c.rows;
    rows_des[c.serving] += c.rows_des;
    covered[c.serving][0] += c.covered_analytical;
    covered[c.serving][1] += c.covered_des;
  }
  for (int serving : {0, 1})
    if (rows[serving])
      out += fmt::format(
          "  {:<53} {:>4} {:>18} {:>18}\n",
          serving ? "all serving (out of sample: no other serving table)" : "all training",
          rows[serving], percent(covered[serving][0], rows[serving]),
          percent(covered[serving][1], rows_des[serving]));
  if (fit.serving_rows)
    out += fmt::format("  serving, in sample (the interval built from the same rows): {}\n",
                       percent(fit.serving_covered, fit.serving_rows));
  out +=
      "The extrapolated rule: each GPU type's rows predicted with the other GPU types' "
      "factors, against the extrapolated band of the other GPU types' rows\n";
  for (const TransferCoverage& c : fit.transfer)
    out += fmt::format("  {:<16} {:>4} rows {:>18}, median width {:.1f}%\n", c.hardware, c.rows,
                       percent(c.covered, c.rows), 100 * c.width);
  return out;
}

namespace {

std::string quoted(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  return out + "\"";
}

void tables(const std::string& key, const std::vector<IntervalResidual>& rows,
            const std::map<std::string, std::vector<std::string>>& fitted_on, std::string& out) {
  out += key + ":" + (rows.empty() ? " []\n" : "\n");
  // One entry per table and GPU: a table's rows are split by the GPU they ran on.
  std::string table, hardware;
  for (const IntervalResidual& r : rows) {
    if (r.table != table || r.hardware != hardware) {
      table = r.table;
      hardware = r.hardware;
      out += fmt::format("  - table: {}\n    hardware: {}\n", r.table, r.hardware);
      if (auto it = fitted_on.find(r.table + '\t' + r.hardware); it != fitted_on.end())
        out += fmt::format("    fitted_on: [{}]\n", fmt::join(it->second, ", "));
      out += "    rows:\n";
    }
    out += fmt::format("      - {{label: {}, stack: {}", quoted(r.label), r.stack);
    for (const auto& [name, v] : {std::pair{"analytical", r.analytical},
                                  {"des", r.des},
                                  {"other_gpu", r.other_gpu},
                                  {"other_stack", r.other_stack}})
      if (std::isfinite(v)) out += fmt::format(", {}: {:.5f}", name, v);
    out += "}\n";
  }
}

}  // namespace

std::string interval_yaml(const IntervalFit& fit) {
  std::string out = fmt::format(
      "# Prediction intervals (docs/validation.md \"Prediction intervals\"), read at parse time:\n"
      "# out-of-sample residuals r = ln(measured / predicted) of the step time (training tables;\n"
      "# throughput columns inverted) and of the latency (serving tables) of data/reference.\n"
      "# Written by rapid-sweep {} with `rapid validate --fit-intervals`; regenerate after any\n"
      "# change to the model or the end-to-end factors (from the repository root):\n"
      "#   build/rapid validate --fit-intervals configs/calibration/intervals.yaml\n"
      "# Per row: analytical, the closed form with the end-to-end factors fitted on the tables\n"
      "# of fitted_on (its GPU type's other tables); des, the discrete-event simulation of the\n"
      "# layout taken with the same factors; other_gpu, the closed form with the factors fitted\n"
      "# on the other GPU types' tables; other_stack, on its GPU type's tables of other stack\n"
      "# families. Labels name the layout taken where the table did not publish it.\n#\n",
      version());
  std::istringstream summary(interval_summary(fit));
  for (std::string line; std::getline(summary, line);) out += "# " + line + "\n";
  out += fmt::format("\ncoverage: {}\nmin_family_rows: {}\nmin_family_tables: {}\n",
                     fit.spec.coverage, fit.spec.min_family_rows, fit.spec.min_family_tables);
  tables("training", fit.spec.training, fit.fitted_on, out);
  tables("serving", fit.spec.serving, fit.fitted_on, out);
  return out;
}

}  // namespace rapid
