#include "cross_validation.hpp"

#include <algorithm>
#include <iterator>
#include <map>

#include "rapid/cost/minimize.hpp"

namespace rapid {

namespace {

// A FitTable of `s` for the GPU of `row` (its hardware's name and stack_factors_from; the
// table's literal hardware name when the row names none), without rows yet.
FitTable fit_table_for(const TableSpec& s, const PreparedRow* row, bool fits) {
  FitTable t;
  t.spec = &s;
  t.gpu = s.hardware.literal;
  t.source = s.source_id;
  t.fits = fits;
  if (row && !row->spec.hardware.empty()) {
    t.gpu = row->spec.hardware[0].name;
    t.factors_from = row->spec.hardware[0].stack_factors_from;
  }
  return t;
}

// A training table of the default suite, split by the GPU its rows ran on (a table may
// publish several GPUs, e.g. a vendor's DGX B200, GB200 and H100 rows): one FitTable each.
void append_by_gpu(const TableSpec& s, const ReferenceContext& ctx, bool fits,
                   std::vector<FitTable>& out) {
  if (s.kind != "training" || s.suite != "default" || s.end_to_end != fits) return;
  const size_t first = out.size();
  for (PreparedRow& r : prepare_rows(s, ctx)) {
    FitTable mine = fit_table_for(s, &r, fits);
    auto it = std::find_if(out.begin() + static_cast<std::ptrdiff_t>(first), out.end(),
                           [&](const FitTable& t) { return t.gpu == mine.gpu; });
    if (it == out.end()) {
      out.push_back(std::move(mine));
      it = std::prev(out.end());
    }
    it->rows.push_back(std::move(r));
  }
}

}  // namespace

std::vector<FitTable> prepare_fit_tables(const std::vector<TableSpec>& specs,
                                         const ReferenceContext& ctx) {
  std::vector<FitTable> out;
  for (const TableSpec& s : specs) append_by_gpu(s, ctx, true, out);
  return out;
}

std::vector<FitTable> prepare_check_tables(const std::vector<TableSpec>& specs,
                                           const ReferenceContext& ctx) {
  std::vector<FitTable> out;
  for (const TableSpec& s : specs) append_by_gpu(s, ctx, false, out);
  return out;
}

FitTable prepare_fit_table(const TableSpec& s, const ReferenceContext& ctx) {
  std::vector<PreparedRow> rows = prepare_rows(s, ctx);
  FitTable t = fit_table_for(s, rows.empty() ? nullptr : &rows.front(), true);
  t.gpu = s.hardware.literal;  // the whole table, whatever its rows' hardware
  t.rows = std::move(rows);
  return t;
}

std::vector<ValidationTable> predict_tables(const std::vector<const FitTable*>& tables,
                                            const EndToEndFactors& f) {
  std::vector<ValidationTable> out;
  for (const FitTable* t : tables)
    for (ValidationTable& v :
         summarize(*t->spec, t->rows, evaluate_rows(*t->spec, t->rows, {{t->gpu, f}})))
      out.push_back(std::move(v));
  return out;
}

namespace {

EndToEndFactors shipped(const FitTable& t) {
  return t.rows.empty() ? EndToEndFactors{}
                        : t.rows.front().spec.training.framework.factors_for(t.gpu);
}

}  // namespace

EndToEndFit fit_factors(const std::vector<const FitTable*>& tables, const std::string& gpu) {
  EndToEndFit fit;
  fit.gpu = gpu;
  for (const FitTable* t : tables) fit.tables.push_back(t->spec->name);
  fit.before = tables.empty() ? EndToEndFactors{} : shipped(*tables.front());
  // Trial factors: the shipped entry (its fitted overlaps kept) with the two values.
  auto factors = [&](const std::vector<double>& x) {
    EndToEndFactors f = fit.before;
    f.step = x[0];
    f.elementwise = x[1];
    return f;
  };
  auto objective = [&](const std::vector<double>& x) {
    double sum = 0;
    for (const ValidationTable& v : predict_tables(tables, factors(x)))
      sum += v.squared_log_error();
    return sum;
  };
  fit.mape_before = pooled_mape(predict_tables(tables, fit.before), &fit.rows);
  MinimizeOptions opt;
  opt.max_evaluations = 300;
  const MinimizeResult best = minimize_bounded(objective, {fit.before.step, fit.before.elementwise},
                                               {0.5, 0.5}, {1.0, 0.95}, opt);
  fit.after = factors(best.x);
  fit.mape_after = pooled_mape(predict_tables(tables, fit.after), nullptr);
  return fit;
}

namespace {

// The tables by GPU type.
std::map<std::string, std::vector<const FitTable*>> by_gpu(const std::vector<FitTable>& tables) {
  std::map<std::string, std::vector<const FitTable*>> out;
  for (const FitTable& t : tables) out[t.gpu].push_back(&t);
  return out;
}

}  // namespace

std::vector<EndToEndFit> fit_end_to_end(const std::vector<FitTable>& tables) {
  std::vector<EndToEndFit> out;
  for (const auto& [gpu, mine] : by_gpu(tables)) out.push_back(fit_factors(mine, gpu));
  return out;
}

namespace {

// The tables of `gpu` outside `source`.
std::vector<const FitTable*> training_tables(const std::vector<FitTable>& tables,
                                             const std::string& gpu, const std::string& source) {
  std::vector<const FitTable*> out;
  for (const FitTable& t : tables)
    if (t.gpu == gpu && t.source != source) out.push_back(&t);
  return out;
}

// `held` predicted out of sample: factors fitted on its GPU type's tables of the other
// sources, else on those of the chip its hardware names in stack_factors_from.
void hold_out(const std::vector<FitTable>& tables, const FitTable& held, HeldOut& h) {
  h.factors_gpu = held.gpu;
  std::vector<const FitTable*> others = training_tables(tables, held.gpu, held.source);
  if (others.empty() && !held.factors_from.empty()) {
    h.factors_gpu = held.factors_from;
    others = training_tables(tables, held.factors_from, held.source);
  }
  if (others.empty()) return;
  for (const FitTable* t : others) h.trained_on.push_back(t->spec->name);
  h.fitted = fit_factors(others, h.factors_gpu).after;
  h.out_of_sample = predict_tables({&held}, h.fitted).front();
}

void summarize_sources(CrossValidation& cv) {
  for (const HeldOut& h : cv.tables) {
    auto it = std::find_if(cv.sources.begin(), cv.sources.end(),
                           [&](const SourceFigures& s) { return s.source == h.source; });
    if (it == cv.sources.end()) {
      cv.sources.push_back({});
      it = std::prev(cv.sources.end());
      it->source = h.source;
    }
    it->tables.push_back(h.table);
  }
  for (SourceFigures& s : cv.sources) {
    std::vector<ValidationTable> in, out;
    for (const HeldOut& h : cv.tables) {
      if (h.source != s.source) continue;
      in.push_back(h.in_sample);
      if (!h.trained_on.empty()) out.push_back(h.out_of_sample);
    }
    s.in_sample_mape = pooled_mape(in, &s.rows);
    s.held_out = !out.empty();
    if (!s.held_out) continue;
    s.out_of_sample_mape = pooled_mape(out, nullptr);
    if (cv.worst_source.empty() || s.out_of_sample_mape > cv.worst_source_mape) {
      cv.worst_source = s.source;
      cv.worst_source_mape = s.out_of_sample_mape;
    }
  }
}

}  // namespace

CrossValidation cross_validate(const std::vector<FitTable>& tables,
                               const std::vector<FitTable>& checks) {
  CrossValidation cv;
  std::map<std::string, EndToEndFactors> in_sample;
  for (const auto& [gpu, mine] : by_gpu(tables)) in_sample[gpu] = fit_factors(mine, gpu).after;
  std::vector<ValidationTable> in, out;
  auto run = [&](const FitTable& held) {
    HeldOut h;
    h.table = held.spec->name;
    h.gpu = held.gpu;
    h.source = held.source;
    h.fitted_on = held.fits;
    // In-sample: the factors fitted on every table of its GPU type (or of the chip it
    // takes its factors from, for a GPU no table was fitted on).
    auto f = in_sample.find(held.gpu);
    if (f == in_sample.end()) f = in_sample.find(held.factors_from);
    if (f != in_sample.end()) {
      h.in_sample = predict_tables({&held}, f->second).front();
      in.push_back(h.in_sample);
    }
    hold_out(tables, held, h);
    if (!h.trained_on.empty()) out.push_back(h.out_of_sample);
    cv.tables.push_back(std::move(h));
  };
  for (const FitTable& held : tables) run(held);
  for (const FitTable& held : checks) run(held);
  cv.in_sample_mape = pooled_mape(in, nullptr);
  cv.out_of_sample_mape = pooled_mape(out, &cv.rows);
  summarize_sources(cv);
  return cv;
}

}  // namespace rapid
