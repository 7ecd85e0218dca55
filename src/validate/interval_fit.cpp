#include "interval_fit.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <tuple>

#include "cross_validation.hpp"
#include "rapid/spec/csv_table.hpp"
#include "table_rows.hpp"

namespace rapid {

int time_sign(const std::string& q) {
  for (const char* t : {"step_time_s", "e2e_latency_s", "ttft_s", "itl_s"})
    if (q == t) return 1;
  for (const char* t : {"tokens_per_s_per_gpu", "mfu_percent", "model_tflops_per_gpu",
                        "megatron_sc21_tflops_per_gpu", "output_tokens_per_s"})
    if (q == t) return -1;
  return 0;
}

namespace {

// A residual row with the table row and measure it comes from (to match the same row's
// residuals under other factors).
// table and GPU (a table's rows are split by the GPU they ran on), prepared row, measure
using RowKey = std::tuple<std::string, size_t, size_t>;

// Table `t`'s rows predicted with factors `f` (with `simulate`, the layout taken by the DES
// too), as residuals of the step time.
std::vector<std::pair<RowKey, IntervalResidual>> table_residuals(const FitTable& t,
                                                                 const EndToEndFactors& f,
                                                                 bool simulate) {
  const std::vector<RowResult> results = evaluate_rows(*t.spec, t.rows, {{t.gpu, f}}, simulate);
  const std::vector<ValidationTable> tables = summarize(*t.spec, t.rows, results);
  std::vector<std::pair<RowKey, IntervalResidual>> out;
  for (size_t k = 0; k < tables.size(); ++k) {
    const int sign = time_sign(t.spec->measures[k].quantity);
    if (sign == 0) continue;
    if (!out.empty()) break;  // one residual per row: a second time or rate is the same step
    for (const ValidationRow& v : tables[k].rows) {
      const RowResult& res = results[v.source];
      const SweepSpec& s = t.rows[v.source].spec;
      IntervalResidual r;
      r.table = t.spec->name;
      r.label = v.label;
      r.hardware = s.hardware.front().name;
      r.stack = s.training.framework.name;
      r.analytical = sign * std::log(v.measured / v.predicted);
      // Every quantity is the step time's (or its inverse's) multiple: the DES's residual
      // is the analytical one moved by the two step times' ratio.
      if (simulate) r.des = r.analytical + std::log(res.result.step_time_s / res.des_step_time_s);
      out.push_back({{r.table + '\t' + t.gpu, v.source, k}, r});
    }
  }
  return out;
}

// Sets `field` of the residual rows of `tables` predicted with `f`.
void set_moved(const std::vector<const FitTable*>& tables, const EndToEndFactors& f,
               double IntervalResidual::*field, const std::map<RowKey, size_t>& index,
               std::vector<IntervalResidual>& rows) {
  for (const FitTable* t : tables)
    for (const auto& [key, r] : table_residuals(*t, f, false))
      if (auto it = index.find(key); it != index.end()) rows[it->second].*field = r.analytical;
}

std::string family_of(const FitTable& t) {
  return t.rows.empty() ? "" : stack_family(t.rows.front().spec.training.framework.name);
}

// Serving tables: each row's latency residual, analytical and simulated.
void serving_residuals(const TableSpec& spec, const ReferenceContext& ctx,
                       std::vector<IntervalResidual>& out) {
  const std::vector<ValidationTable> a = run_inference_table(spec, ctx, false);
  // A `fidelity: des` table is simulated both times: the one run serves as both.
  const std::vector<ValidationTable> d = spec.simulate ? a : run_inference_table(spec, ctx, true);
  const CsvTable csv(spec.csv);
  RowValues v(spec, csv, nullptr);
  for (size_t k = 0; k < a.size(); ++k) {
    const int sign = time_sign(spec.measures[k].quantity);
    if (sign == 0) continue;
    for (const ValidationRow& row : a[k].rows) {
      v.select(row.source);
      IntervalResidual r;
      r.table = spec.name;
      r.label = row.label;
      r.hardware = v.get(spec.hardware).value_or("");
      r.stack = v.get(spec.stack).value_or("");
      r.analytical = sign * std::log(row.measured / row.predicted);
      for (const ValidationRow& s : d[k].rows)
        if (s.source == row.source) r.des = sign * std::log(s.measured / s.predicted);
      out.push_back(r);
    }
  }
}

}  // namespace

IntervalFit fit_intervals(const std::vector<TableSpec>& specs, const ReferenceContext& ctx,
                          const IntervalSpec& settings) {
  IntervalFit fit;
  fit.spec = settings;
  // The tables the factors are fitted on, and those only predicted (end_to_end: false):
  // both give out-of-sample residuals; only the first move the factors.
  const std::vector<FitTable> tables = prepare_fit_tables(specs, ctx);
  const std::vector<FitTable> checks = prepare_check_tables(specs, ctx);
  std::vector<const FitTable*> all;
  for (const FitTable& t : tables) all.push_back(&t);
  for (const FitTable& t : checks) all.push_back(&t);
  std::map<RowKey, size_t> index;
  // Out of sample: each table with the factors fitted on its GPU type's other sources.
  for (const HeldOut& h : cross_validate(tables, checks).tables) {
    if (h.trained_on.empty()) continue;  // no other source of its GPU type
    for (const FitTable* t : all)
      if (t->spec->name == h.table && t->gpu == h.gpu)
        for (auto& [key, r] : table_residuals(*t, h.fitted, true)) {
          index[key] = fit.spec.training.size();
          fit.spec.training.push_back(std::move(r));
        }
    fit.fitted_on[h.table + '\t' + h.gpu] = h.trained_on;
  }
  // The factors moved: fitted on the other GPU types' tables, and on the same GPU type's
  // tables of other stack families.
  std::set<std::pair<std::string, std::string>> pairs;
  for (const FitTable* t : all) pairs.insert({t->gpu, family_of(*t)});
  for (const auto& [gpu, family] : pairs) {
    std::vector<const FitTable*> mine, other_gpu, other_stack;
    for (const FitTable* t : all)
      if (t->gpu == gpu && family_of(*t) == family) mine.push_back(t);
    for (const FitTable& t : tables) {
      if (t.gpu != gpu)
        other_gpu.push_back(&t);
      else if (family_of(t) != family)
        other_stack.push_back(&t);
    }
    if (!other_gpu.empty())
      set_moved(mine, fit_factors(other_gpu, other_gpu.front()->gpu).after,
                &IntervalResidual::other_gpu, index, fit.spec.training);
    if (!other_stack.empty())
      set_moved(mine, fit_factors(other_stack, gpu).after, &IntervalResidual::other_stack, index,
                fit.spec.training);
  }
  for (const TableSpec& s : specs)
    if (s.kind == "inference" && s.suite == "default") serving_residuals(s, ctx, fit.spec.serving);
  nested_coverage(fit);
  return fit;
}

namespace {

double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

std::vector<std::string> table_names(const std::vector<IntervalResidual>& rows) {
  std::vector<std::string> names;
  for (const IntervalResidual& r : rows)
    if (std::find(names.begin(), names.end(), r.table) == names.end()) names.push_back(r.table);
  return names;
}

// `table`'s rows against the interval of every other table's rows.
HeldOutCoverage held_out(const IntervalSpec& all, const std::string& table, bool serving) {
  IntervalSpec others = all;
  std::vector<IntervalResidual>& list = serving ? others.serving : others.training;
  std::erase_if(list, [&](const IntervalResidual& r) { return r.table == table; });
  HeldOutCoverage c;
  c.table = table;
  c.serving = serving;
  std::vector<double> wa, wd;
  for (const IntervalResidual& r : serving ? all.serving : all.training) {
    if (r.table != table) continue;
    const IntervalBand b = resolve_band(others, r.hardware, true, r.stack, serving);
    c.hardware = r.hardware;
    c.basis = b.basis;
    c.extrapolated |= b.extrapolated;
    ++c.rows;
    c.covered_analytical += b.interval.analytical.covers(r.analytical);
    wa.push_back(b.interval.analytical.relative_width());
    if (std::isfinite(r.des)) {
      ++c.rows_des;
      c.covered_des += b.interval.des.covers(r.des);
      wd.push_back(b.interval.des.relative_width());
    }
  }
  c.width_analytical = median(wa);
  c.width_des = median(wd);
  return c;
}

}  // namespace

void nested_coverage(IntervalFit& fit) {
  fit.held_out.clear();
  for (bool serving : {false, true})
    for (const std::string& t : table_names(serving ? fit.spec.serving : fit.spec.training))
      fit.held_out.push_back(held_out(fit.spec, t, serving));
  // The extrapolated rule: each GPU type's rows, predicted with the other GPU types' factors,
  // against the band of the other GPU types' rows (where the GPU type is not covered).
  fit.transfer.clear();
  std::set<std::string> gpus;
  for (const IntervalResidual& r : fit.spec.training) gpus.insert(r.hardware);
  for (const std::string& gpu : gpus) {
    IntervalSpec others = fit.spec;
    std::erase_if(others.training, [&](const IntervalResidual& r) { return r.hardware == gpu; });
    TransferCoverage c;
    c.hardware = gpu;
    std::vector<double> w;
    for (const IntervalResidual& r : fit.spec.training) {
      if (r.hardware != gpu || !std::isfinite(r.other_gpu)) continue;
      const IntervalBand b = resolve_band(others, gpu, true, r.stack, false);
      ++c.rows;
      c.covered += b.interval.analytical.covers(r.other_gpu);
      w.push_back(b.interval.analytical.relative_width());
    }
    c.width = median(w);
    if (c.rows) fit.transfer.push_back(c);
  }
  // In sample: the serving rows against the interval built from them.
  fit.serving_rows = fit.serving_covered = 0;
  for (const IntervalResidual& r : fit.spec.serving) {
    const IntervalBand b = resolve_band(fit.spec, r.hardware, true, r.stack, true);
    ++fit.serving_rows;
    fit.serving_covered += b.interval.analytical.covers(r.analytical);
  }
}

}  // namespace rapid
