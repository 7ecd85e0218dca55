#include "rapid/spec/interval_spec.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include "rapid/common/error.hpp"
#include "rapid/spec/sweep_spec.hpp"
#include "rapid/spec/yaml_reader.hpp"

namespace rapid {

double LogInterval::relative_width() const {
  return std::exp(hi) - std::exp(lo);
}

double conformal_abs_quantile(std::vector<double> residuals, double coverage) {
  for (double& x : residuals) x = std::abs(x);
  std::erase_if(residuals, [](double x) { return !std::isfinite(x); });
  if (residuals.empty()) return LogInterval::kNaN;
  std::sort(residuals.begin(), residuals.end());
  const double n = static_cast<double>(residuals.size());
  // The epsilon keeps a product such as 35.2000000001 (n + 1 = 44 times 0.8) from rounding up.
  const double k = std::clamp(std::ceil((n + 1) * coverage - 1e-9), 1.0, n);
  return residuals[static_cast<size_t>(k) - 1];
}

LogInterval conformal_interval(std::vector<double> residuals, double coverage) {
  const double q = conformal_abs_quantile(std::move(residuals), coverage);
  return {-q, q};
}

LogInterval widened(const LogInterval& b, double k) {
  const double centre = (b.lo + b.hi) / 2, half = (b.hi - b.lo) / 2;
  return {centre - k * half, centre + k * half};
}

std::string stack_family(const std::string& stack) {
  return stack.substr(0, stack.find('-'));
}

namespace {

constexpr double kMaxResidual = 5;  // |ln(measured / predicted)|: a factor e^5 = 148

IntervalResidual parse_row(const YamlMap& t, const YamlMap& row) {
  IntervalResidual r;
  r.table = t.string("table");
  r.hardware = t.string("hardware");
  r.label = row.string("label");
  r.stack = row.string("stack");
  r.analytical = row.number_or("analytical", r.analytical, -kMaxResidual, kMaxResidual);
  r.des = row.number_or("des", r.des, -kMaxResidual, kMaxResidual);
  r.other_gpu = row.number_or("other_gpu", r.other_gpu, -kMaxResidual, kMaxResidual);
  r.other_stack = row.number_or("other_stack", r.other_stack, -kMaxResidual, kMaxResidual);
  row.finish();
  return r;
}

std::vector<IntervalResidual> parse_tables(const YamlMap& m, const std::string& key) {
  std::vector<IntervalResidual> out;
  const YAML::Node list = m.node(key);
  if (!list.IsSequence()) m.fail(key, "<not a list>", "a list of tables with their rows");
  for (size_t i = 0; i < list.size(); ++i) {
    const YamlMap t(list[i], m.file(), m.key_path(fmt::format("{}[{}]", key, i)));
    t.has("fitted_on");  // where the factors came from: for the reader
    const YAML::Node rows = t.node("rows");
    if (!rows.IsSequence()) t.fail("rows", "<not a list>", "a list of residual rows");
    for (size_t k = 0; k < rows.size(); ++k)
      out.push_back(
          parse_row(t, YamlMap(rows[k], t.file(), t.key_path(fmt::format("rows[{}]", k)))));
    t.finish();
  }
  return out;
}

}  // namespace

IntervalSpec parse_interval_spec(const YAML::Node& node, const std::string& file) {
  const YamlMap m(node, file);
  IntervalSpec s;
  s.path = file;
  s.coverage = m.number_or("coverage", s.coverage, 0.5, 0.99);
  s.min_family_rows = m.integer_or("min_family_rows", s.min_family_rows, 1, 1000);
  s.min_family_tables = m.integer_or("min_family_tables", s.min_family_tables, 1, 1000);
  s.training = parse_tables(m, "training");
  s.serving = parse_tables(m, "serving");
  m.finish();
  return s;
}

IntervalSpec load_interval_spec(const std::string& path) {
  return parse_interval_spec(load_yaml_file(path), path);
}

namespace {

using Rows = std::vector<const IntervalResidual*>;

FidelityInterval interval_of(const Rows& rows, double coverage) {
  std::vector<double> a, d;
  for (const IntervalResidual* r : rows) {
    a.push_back(r->analytical);
    d.push_back(r->des);
  }
  return {conformal_interval(a, coverage), conformal_interval(d, coverage)};
}

LogInterval hull(const LogInterval& a, const LogInterval& b) {
  if (!a.valid()) return b;
  if (!b.valid()) return a;
  return {std::min(a.lo, b.lo), std::max(a.hi, b.hi)};
}

double transfer_penalty(const IntervalSpec& s, double IntervalResidual::*other) {
  std::vector<double> own, moved;
  for (const IntervalResidual& r : s.training)
    if (std::isfinite(r.analytical) && std::isfinite(r.*other)) {
      own.push_back(r.analytical);
      moved.push_back(r.*other);
    }
  const double base = conformal_abs_quantile(own, s.coverage);
  if (!(base > 0)) return 1;
  return std::max(1.0, conformal_abs_quantile(moved, s.coverage) / base);
}

size_t table_count(const Rows& rows) {
  std::set<std::string> names;
  for (const IntervalResidual* r : rows) names.insert(r->table);
  return names.size();
}

// Whether a GPU type x stack family has enough rows and tables for an interval of its own.
bool enough(const IntervalSpec& s, const Rows& rows) {
  return rows.size() >= static_cast<size_t>(s.min_family_rows) &&
         table_count(rows) >= static_cast<size_t>(s.min_family_tables);
}

std::string describe(const Rows& rows, const std::string& what) {
  const size_t tables = table_count(rows);
  return fmt::format("{} out-of-sample rows of {} table{} ({})", rows.size(), tables,
                     tables == 1 ? "" : "s", what);
}

}  // namespace

double gpu_transfer_penalty(const IntervalSpec& s) {
  return transfer_penalty(s, &IntervalResidual::other_gpu);
}

double stack_transfer_penalty(const IntervalSpec& s) {
  return transfer_penalty(s, &IntervalResidual::other_stack);
}

IntervalBand resolve_band(const IntervalSpec& s, const std::string& hardware, bool measured,
                          const std::string& stack, bool serving) {
  const std::string family = stack_family(stack);
  std::map<std::pair<std::string, std::string>, Rows> groups;
  Rows pooled, training;
  bool gpu_seen = false, family_seen = false;
  for (const IntervalResidual& r : serving ? s.serving : s.training) {
    groups[{r.hardware, stack_family(r.stack)}].push_back(&r);
    pooled.push_back(&r);
    family_seen |= stack_family(r.stack) == family;
    gpu_seen |= measured && r.hardware == hardware;
  }
  for (const IntervalResidual& r : s.training) training.push_back(&r);
  // Serving: never narrower than the training step time's pooled interval (the same op
  // cost models; a few rows of one table cannot show a smaller error).
  const FidelityInterval floor = serving ? interval_of(training, s.coverage) : FidelityInterval{};
  const std::string at_least =
      serving ? "; at least the training band of " + describe(training, "pooled") : "";
  auto band_of = [&](const Rows& rows) {
    const FidelityInterval f = interval_of(rows, s.coverage);
    return FidelityInterval{hull(f.analytical, floor.analytical), hull(f.des, floor.des)};
  };

  IntervalBand b;
  b.coverage = s.coverage;
  const auto mine = measured ? groups.find({hardware, family}) : groups.end();
  if (mine != groups.end()) {
    const Rows& own = mine->second;
    const std::string pair = fmt::format("{} x {}", hardware, family);
    b.interval = band_of(enough(s, own) ? own : pooled);
    b.basis =
        (enough(s, own) ? describe(own, pair)
                        : describe(pooled, fmt::format("pooled: {} has {} rows of {} "
                                                       "table(s), an interval of its own "
                                                       "needs {} rows of {} tables",
                                                       pair, own.size(), table_count(own),
                                                       s.min_family_rows, s.min_family_tables))) +
        at_least;
    return b;
  }
  // No table ran this pair: the widest band of the families and the pooled one, widened by
  // the measured penalty of moving the end-to-end factors to another GPU type or stack family.
  b.extrapolated = true;
  if (!gpu_seen) b.widening = std::max(b.widening, gpu_transfer_penalty(s));
  if (gpu_seen || !family_seen) b.widening = std::max(b.widening, stack_transfer_penalty(s));
  FidelityInterval widest = band_of(pooled);
  std::string from = pooled.empty() ? "no rows" : describe(pooled, "pooled");
  for (const auto& [key, rows] : groups) {
    if (!enough(s, rows)) continue;
    const FidelityInterval f = band_of(rows);
    if (f.analytical.relative_width() > widest.analytical.relative_width()) {
      widest.analytical = f.analytical;
      from = describe(rows, fmt::format("{} x {}", key.first, key.second));
    }
    if (f.des.relative_width() > widest.des.relative_width()) widest.des = f.des;
  }
  b.interval = {widened(widest.analytical, b.widening), widened(widest.des, b.widening)};
  b.basis = fmt::format("the widest band, {}{}, widened x{:.2f}", from, at_least, b.widening);
  b.extrapolation = fmt::format(
      "no published table ran {}{} with the {} stack family: its interval is widened by the "
      "measured penalty of moving the end-to-end factors to another {}",
      hardware, measured ? "" : " (a hardware variant: never measured)", family,
      gpu_seen      ? "stack family"
      : family_seen ? "GPU type"
                    : "GPU type or stack family (the larger)");
  return b;
}

void attach_intervals(SweepSpec& spec, const std::string& job_path) {
  const std::string path = find_named_config("calibration", "intervals", job_path);
  spec.intervals.assign(spec.hardware.size(), IntervalBand{});
  if (path.empty()) return;
  spec.intervals_source = Source{path, read_text_file(path)};
  const IntervalSpec s =
      parse_interval_spec(load_yaml_text(spec.intervals_source.yaml, path), path);
  const bool serving = spec.mode == JobMode::Inference;
  const std::string& stack = serving ? spec.serving.stack.name : spec.training.framework.name;
  for (size_t h = 0; h < spec.hardware.size(); ++h) {
    const HardwareSpec& hw = spec.hardware[h];
    // A variant (docs/variants.md) is a GPU no table measured, whatever its base.
    const bool measured = hw.base_name.empty() || hw.base_name == hw.name;
    spec.intervals[h] = resolve_band(s, hw.name, measured, stack, serving);
  }
}

}  // namespace rapid
