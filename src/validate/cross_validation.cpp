#include "cross_validation.hpp"

#include <map>

#include "rapid/cost/minimize.hpp"

namespace rapid {

std::vector<FitTable> prepare_fit_tables(const std::vector<TableSpec>& specs,
                                         const ReferenceContext& ctx) {
  std::vector<FitTable> out;
  for (const TableSpec& s : specs)
    if (s.end_to_end && s.kind == "training" && s.suite == "default")
      out.push_back(prepare_fit_table(s, ctx));
  return out;
}

FitTable prepare_fit_table(const TableSpec& s, const ReferenceContext& ctx) {
  FitTable t;
  t.spec = &s;
  t.gpu = s.hardware.literal;
  t.rows = prepare_rows(s, ctx);
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

CrossValidation cross_validate(const std::vector<FitTable>& tables) {
  CrossValidation cv;
  std::vector<ValidationTable> in, out;
  for (const auto& [gpu, mine] : by_gpu(tables)) {
    const EndToEndFit all = fit_factors(mine, gpu);
    for (const FitTable* held : mine) {
      HeldOut h;
      h.table = held->spec->name;
      h.gpu = all.gpu;
      std::vector<const FitTable*> others;
      for (const FitTable* t : mine)
        if (t != held) {
          others.push_back(t);
          h.trained_on.push_back(t->spec->name);
        }
      const std::vector<ValidationTable> ins = predict_tables({held}, all.after);
      h.in_sample = ins.front();
      in.push_back(h.in_sample);
      if (!others.empty()) {
        h.fitted = fit_factors(others, all.gpu).after;
        h.out_of_sample = predict_tables({held}, h.fitted).front();
        out.push_back(h.out_of_sample);
      }
      cv.tables.push_back(std::move(h));
    }
  }
  cv.in_sample_mape = pooled_mape(in, nullptr);
  cv.out_of_sample_mape = pooled_mape(out, &cv.rows);
  return cv;
}

}  // namespace rapid
