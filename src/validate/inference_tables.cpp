// Inference tables of the one validation loop: each row is a serving job built in memory
// (mode: inference, a named model, the GPU and network, the serving stack, a fixed request
// mix at one load) and its one point (a replica layout) predicted by the analytical serving
// model (evaluate_serving, docs/inference.md).
#include <fmt/format.h>

#include "rapid/common/error.hpp"
#include "rapid/inference/serving_evaluator.hpp"
#include "rapid/spec/legality.hpp"
#include "table_runner.hpp"

namespace rapid {

namespace {

// What the model predicts for an inference row, by quantity name (docs/validation.md).
double inference_quantity(const std::string& q, const EvalResult& r, const std::string& where) {
  if (q == "e2e_latency_s") return r.e2e_latency_s;
  if (q == "ttft_s") return r.ttft_s;
  if (q == "itl_s") return r.itl_s;
  if (q == "output_tokens_per_s") return r.output_tokens_per_s;
  throw InputError(where, "quantity", q, "e2e_latency_s, ttft_s, itl_s or output_tokens_per_s");
}

}  // namespace

std::vector<ValidationTable> run_inference_table(const TableSpec& spec, const ReferenceContext& ctx,
                                                 bool simulate) {
  const CsvTable t(spec.csv);
  RowValues v(spec, t, nullptr);
  auto text = [&](const ValueRef& r, const std::string& key) {
    const auto x = v.get(r);
    if (!x) throw InputError(spec.path, key, "<not given>", "a value for every row");
    return *x;
  };
  auto serving = [&](const char* key) {
    auto it = spec.serving.find(key);
    if (it == spec.serving.end())
      throw InputError(spec.path, std::string("serving.") + key, "<missing>", "this field");
    return v.integer(key, text(it->second, std::string("serving.") + key));
  };
  for (const auto& [key, ref] : spec.serving)
    if (key != "input_tokens" && key != "output_tokens" && key != "concurrency")
      throw InputError(spec.path, "serving." + key, "<given>",
                       "input_tokens, output_tokens or concurrency");
  if (!spec.model.given())
    throw InputError(spec.path, "model.name", "<not given>",
                     "a config in configs/models (inference tables name their model)");

  std::vector<ValidationTable> out;
  for (const Measure& m : spec.measures) out.push_back(measure_table(spec, m));
  for (size_t i = 0; i < t.rows(); ++i) {
    v.select(i);
    SweepSpec s;
    s.name = spec.name;
    s.mode = JobMode::Inference;
    s.model = named_model(spec, v, ctx);
    s.hardware.push_back(load_hardware(ctx, text(spec.hardware, "hardware"), spec.path));
    s.network = load_network(ctx, text(spec.network, "network"), spec.path);
    s.search.allow_tp_across_nodes = spec.allow_tp_across_nodes;

    ServingSpec& sv = s.serving;
    sv.stack = load_serving(ctx, text(spec.stack, "stack"), spec.path);
    auto fixed = [&](const char* key) {
      const int64_t n = serving(key);
      if (n < 1) throw InputError(v.where(), key, std::to_string(n), "at least 1 token");
      LengthSpec l;
      l.distribution = LengthDistribution::Fixed;
      l.mean = static_cast<double>(n);
      l.min = l.max = n;
      return l;
    };
    sv.input_tokens = fixed("input_tokens");
    sv.output_tokens = fixed("output_tokens");
    const int64_t concurrency = serving("concurrency");
    if (concurrency < 1)
      throw InputError(v.where(), "concurrency", std::to_string(concurrency), "at least 1");
    sv.load_kind = LoadKind::Concurrency;
    sv.loads = {static_cast<double>(concurrency)};
    if (spec.dtype.given()) {
      const std::string d = text(spec.dtype, "dtype");
      const auto dt = dtype_from_name(d);
      if (!dt || (*dt != DType::BF16 && *dt != DType::FP16 && *dt != DType::FP8))
        throw InputError(v.where(), "dtype", d, "bf16, fp16 or fp8");
      sv.dtype = sv.kv_dtype = *dt;
    }
    // What the rest of the program reads of a training spec (as load_sweep_spec sets it).
    s.training.dtype = sv.dtype;
    s.training.seq_length = sv.max_seq_tokens();
    s.training.global_batch_size = 1;

    Point p;  // hardware 0, load 0; dp = replicas
    for (const auto& [key, ref] : spec.layout) {
      if (key != "tp" && key != "pp" && key != "ep" && key != "dp")
        throw InputError(spec.path, "layout." + key, "<given>",
                         "tp, pp, ep or dp (replicas) in an inference table");
      if (const auto x = v.get(ref)) set_knob(p.par, key, *x, v);
    }
    const std::string label = v.label();
    if (const char* why = serving_illegal_reason(s, p.par)) {
      for (ValidationTable& vt : out) vt.infeasible.push_back(fmt::format("{} ({})", label, why));
      continue;
    }
    EvalResult r;
    evaluate_serving(s, p, r, simulate);
    if (r.status != Status::Ok) {
      const std::string why =
          r.status == Status::OutOfMemory
              ? fmt::format("out of memory at {:.1f} GiB", r.peak_memory_bytes / (1ull << 30))
              : std::string(kStatusNames[static_cast<int>(r.status)]);
      for (ValidationTable& vt : out) vt.infeasible.push_back(fmt::format("{} ({})", label, why));
      continue;
    }
    const std::string shown =
        fmt::format("{} (TTFT {:.1f} ms, ITL {:.2f} ms)", label, r.ttft_s * 1e3, r.itl_s * 1e3);
    for (size_t k = 0; k < spec.measures.size(); ++k) {
      const Measure& m = spec.measures[k];
      if (t.text(i, m.column).empty()) continue;
      out[k].rows.push_back(
          {shown, inference_quantity(m.quantity, r, spec.path), t.number(i, m.column), i});
    }
  }
  return out;
}

}  // namespace rapid
