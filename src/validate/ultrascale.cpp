#include "ultrascale.hpp"

#include <fmt/format.h>

#include "rapid/common/error.hpp"
#include "rapid/cost/minimize.hpp"
#include "rapid/spec/csv_table.hpp"

namespace rapid {

UltrascaleSweep prepare_ultrascale(const std::vector<TableSpec>& specs,
                                   const ReferenceContext& ctx) {
  for (const TableSpec& s : specs)
    if (s.suite == "hf-ultrascale") {
      UltrascaleSweep sweep{prepare_fit_table(s, ctx), {}};
      const CsvTable t(s.csv);
      for (const PreparedRow& row : sweep.table.rows)
        sweep.before_pp_fix.push_back(t.text(row.csv_row, "after_pp_fix") == "False");
      return sweep;
    }
  throw InputError(ctx.reference_dir, "suite", "hf-ultrascale",
                   "a table description with suite: hf-ultrascale");
}

UltrascaleResult validate_ultrascale(const UltrascaleSweep& in) {
  const FitTable& sweep = in.table;
  const TableSpec& spec = *sweep.spec;
  const std::vector<RowResult> res = evaluate_rows(spec, sweep.rows);
  UltrascaleResult out;
  out.throughput = {spec.name, "tokens/s/GPU (Success rows)"};
  out.throughput_pp_suspect = {spec.name, "tokens/s/GPU (pp > 1 before the pp fix)"};
  out.throughput_pp1 = {spec.name, "tokens/s/GPU (Success rows, pp = 1)"};
  out.memory = {spec.name, "peak reserved GB (Success rows)"};
  for (size_t i = 0; i < sweep.rows.size(); ++i) {
    const PreparedRow& row = sweep.rows[i];
    const RowResult& r = res[i];
    const bool predicted_oom = !r.feasible;
    ++out.oom_rows;
    if (predicted_oom == !row.run_ok) ++out.oom_correct;
    if (!predicted_oom && !row.run_ok) ++out.oom_false_fit;
    if (predicted_oom && row.run_ok) ++out.oom_false_oom;
    if (!row.run_ok || predicted_oom) continue;
    const ParallelConfig& c = r.par;
    const std::string label = fmt::format("{} dp{} tp{} pp{} mbs{} zero{}", row.label, c.dp, c.tp,
                                          c.pp, c.mbs, c.zero_stage);
    const bool suspect = c.pp > 1 && in.before_pp_fix[i];
    const ValidationRow throughput{label, r.predicted[0], row.measured[0], i};
    (suspect ? out.throughput_pp_suspect : out.throughput).rows.push_back(throughput);
    if (c.pp == 1) out.throughput_pp1.rows.push_back(throughput);
    out.memory.rows.push_back({label, r.predicted[1], row.measured[1], i});
  }
  return out;
}

NanotronFit fit_ultrascale(const UltrascaleSweep& sweep) {
  NanotronFit fit;
  UltrascaleSweep trial = sweep;
  const PreparedRow& first = sweep.table.rows.front();
  fit.compute_efficiency = first.spec.training.compute_efficiency;
  fit.network_efficiency = first.spec.network.network_efficiency;
  fit.fragmentation = first.spec.training.fragmentation;
  auto with = [&](double compute, double network, double fragmentation) {
    for (PreparedRow& row : trial.table.rows) {
      row.spec.training.compute_efficiency = compute;
      row.spec.network.network_efficiency = network;
      row.spec.training.fragmentation = fragmentation;
    }
    return validate_ultrascale(trial);
  };
  fit.mape_before =
      with(fit.compute_efficiency, fit.network_efficiency, fit.fragmentation).throughput_pp1.mape();
  MinimizeOptions opt;
  opt.max_evaluations = 80;
  const MinimizeResult best = minimize_bounded(
      [&](const std::vector<double>& x) {
        return with(x[0], x[1], fit.fragmentation).throughput_pp1.squared_log_error();
      },
      {fit.compute_efficiency, fit.network_efficiency}, {0.3, 0.02}, {1.0, 1.0}, opt);
  fit.compute_efficiency = best.x[0];
  fit.network_efficiency = best.x[1];
  fit.mape_after =
      with(fit.compute_efficiency, fit.network_efficiency, fit.fragmentation).throughput_pp1.mape();
  opt.max_evaluations = 40;
  const MinimizeResult frag = minimize_bounded(
      [&](const std::vector<double>& x) {
        return with(fit.compute_efficiency, fit.network_efficiency, x[0])
            .memory.squared_log_error();
      },
      {fit.fragmentation}, {0.0}, {3.0}, opt);
  fit.fragmentation = frag.x[0];
  return fit;
}

}  // namespace rapid
