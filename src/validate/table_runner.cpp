#include "table_runner.hpp"

#include <fmt/format.h>

#include <cmath>
#include <limits>

#include "rapid/common/error.hpp"
#include "rapid/eval/point_evaluator.hpp"
#include "rapid/memory/memory_model.hpp"
#include "rapid/workload/model_flops.hpp"

namespace rapid {

double ValidationRow::abs_pct_error() const {
  return std::abs(predicted - measured) / measured * 100.0;
}

double ValidationTable::mape() const {
  double sum = 0;
  for (const auto& r : rows) sum += r.abs_pct_error();
  return rows.empty() ? 0.0 : sum / static_cast<double>(rows.size());
}

double ValidationTable::squared_log_error() const {
  double sum = 0;
  for (const auto& r : rows) sum += std::pow(std::log(r.predicted / r.measured), 2);
  return sum;
}

double pooled_mape(const std::vector<ValidationTable>& tables, size_t* rows) {
  double sum = 0;
  size_t n = 0;
  for (const auto& t : tables)
    for (const auto& r : t.rows) {
      sum += r.abs_pct_error();
      ++n;
    }
  if (rows) *rows = n;
  return n ? sum / static_cast<double>(n) : 0.0;
}

namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;

// What the model predicts for a training row, by quantity name (docs/validation.md).
double training_quantity(const std::string& q, const SweepSpec& spec, const ParallelConfig& par,
                         const EvalResult& r, const std::string& where) {
  const double gpus = static_cast<double>(par.num_gpus());
  const double tokens =
      static_cast<double>(spec.training.global_batch_size * spec.training.seq_length);
  if (q == "tokens_per_s_per_gpu") return r.tokens_per_s_per_gpu;
  if (q == "step_time_s") return r.step_time_s;
  if (q == "mfu_percent") return 100.0 * r.mfu;
  // Model FLOPs without recomputation (6N + 12 L h s per token; model_flops.hpp).
  if (q == "model_tflops_per_gpu")
    return model_flops_per_token(spec.model, spec.training.seq_length) * tokens /
           (r.step_time_s * gpus) / 1e12;
  // Narayanan et al. 2021 eq. 3, which counts the recomputed forward pass.
  if (q == "megatron_sc21_tflops_per_gpu")
    return megatron_sc21_flops(spec.training.global_batch_size, spec.training.seq_length,
                               spec.model.num_layers, spec.model.hidden_size,
                               spec.model.vocab_size) /
           (r.step_time_s * gpus) / 1e12;
  // PyTorch's reserved pool at the peak: everything but the CUDA context and workspaces.
  if (q == "reserved_gb") return (r.peak_memory_bytes - spec.training.memory_reserve_bytes) / 1e9;
  throw InputError(where, "quantity", q,
                   "tokens_per_s_per_gpu, step_time_s, mfu_percent, model_tflops_per_gpu, "
                   "megatron_sc21_tflops_per_gpu or reserved_gb");
}

double memory_quantity(const Measure& m, const SweepSpec& spec, const ParallelConfig& par,
                       const std::string& where) {
  Workload w;
  build_workload(spec.model, spec.training, spec.network, par, w);
  // Parameters: Korthikanti Figure 1 counts the transformer layers only, which is a middle
  // stage when there is one; activations: the first stage holds the most micro-batches.
  size_t stage = 0;
  if (m.stage == "middle" && par.pp > 2) stage = 1;
  const MemoryBreakdown b = m.stage == "worst" ? estimate_memory(spec.model, spec.training, w)
                                               : stage_memory(spec.model, spec.training, w, stage);
  if (m.quantity == "params_optimizer_gib")
    return (b.weights_bytes + b.grads_bytes + b.optimizer_bytes) / kGiB;
  if (m.quantity == "layer_activations_gib") return b.layer_activations_bytes / kGiB;
  if (m.quantity == "peak_memory_gib") return b.peak_bytes / kGiB;
  throw InputError(where, "quantity", m.quantity,
                   "params_optimizer_gib, layer_activations_gib or peak_memory_gib");
}

}  // namespace

std::vector<RowResult> evaluate_rows(const TableSpec& spec, const std::vector<PreparedRow>& rows,
                                     const std::map<std::string, EndToEndFactors>& factors,
                                     bool simulate) {
  std::vector<RowResult> out;
  Workload w;
  for (const PreparedRow& row : rows) {
    RowResult res;
    SweepSpec s = row.spec;
    for (const auto& [gpu, f] : factors) s.training.framework.end_to_end[gpu] = f;
    if (spec.kind == "memory") {
      res.feasible = true;
      for (size_t k = 0; k < spec.measures.size(); ++k) {
        const auto& c = row.measure_candidates[k];
        res.predicted.push_back(
            c.empty() ? kNaN : memory_quantity(spec.measures[k], s, c.front(), spec.path));
      }
      out.push_back(std::move(res));
      continue;
    }
    const PointEvaluator eval(s, simulate ? Fidelity::Auto : Fidelity::Analytical);
    res.searched = row.candidates.size() > 1;
    double best = std::numeric_limits<double>::infinity(), least = best;
    for (const ParallelConfig& c : row.candidates) {
      Point p;
      p.par = c;
      EvalResult r;
      eval.evaluate(p, w, r);
      const bool ok = r.status == Status::Ok;
      if (ok && r.step_time_s < best) {
        best = r.step_time_s;
        res.feasible = true;
        res.par = c;
        res.result = r;
      }
      if (!res.feasible && r.peak_memory_bytes < least) {
        least = r.peak_memory_bytes;
        res.par = c;
        res.result = r;
      }
    }
    if (simulate && res.feasible) {  // the layout taken, simulated (docs/des.md)
      Point p;
      p.par = res.par;
      EvalResult d;
      eval.evaluate_guarded(p, w, d, Fidelity::Des);
      if (d.status == Status::Ok) res.des_step_time_s = d.step_time_s;
    }
    for (const Measure& m : spec.measures)
      res.predicted.push_back(
          res.feasible ? training_quantity(m.quantity, s, res.par, res.result, spec.path) : kNaN);
    out.push_back(std::move(res));
  }
  return out;
}

ValidationTable measure_table(const TableSpec& spec, const Measure& m) {
  ValidationTable t(spec.name,
                    fmt::format("{}{}", m.column, m.unit.empty() ? "" : " (" + m.unit + ")"));
  for (const auto& [knob, candidates] : spec.search)
    if (candidates.size() > 1) t.searched.push_back(knob);
  return t;
}

std::vector<ValidationTable> summarize(const TableSpec& spec, const std::vector<PreparedRow>& rows,
                                       const std::vector<RowResult>& results) {
  std::vector<ValidationTable> out;
  for (size_t k = 0; k < spec.measures.size(); ++k) {
    ValidationTable t = measure_table(spec, spec.measures[k]);
    for (size_t i = 0; i < rows.size(); ++i) {
      const double measured = rows[i].measured[k], predicted = results[i].predicted[k];
      if (!rows[i].run_ok || std::isnan(measured)) continue;
      if (std::isnan(predicted)) {
        t.infeasible.push_back(rows[i].label +
                               (rows[i].candidates.empty()
                                    ? " (no legal layout)"
                                    : fmt::format(" (out of memory at {:.1f} GiB)",
                                                  results[i].result.peak_memory_bytes / kGiB)));
        continue;
      }
      std::string label = rows[i].label;
      if (results[i].searched) label += fmt::format(" [{}]", results[i].par.describe());
      t.rows.push_back({label, predicted, measured, i});
    }
    out.push_back(std::move(t));
  }
  return out;
}

std::vector<ValidationTable> run_table(const TableSpec& spec, const ReferenceContext& ctx) {
  if (spec.kind == "inference") return run_inference_table(spec, ctx);
  if (spec.kind != "training" && spec.kind != "memory") return run_kernel_table(spec, ctx);
  const std::vector<PreparedRow> rows = prepare_rows(spec, ctx);
  return summarize(spec, rows, evaluate_rows(spec, rows));
}

}  // namespace rapid
