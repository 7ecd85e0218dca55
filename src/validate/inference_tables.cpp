// Inference tables of the one validation loop: each row is a serving job built in memory
// (mode: inference, a named model, the GPU and network, the serving stack, a fixed request
// mix at one load) and its one point (a replica layout) predicted by the analytical serving
// model (evaluate_serving, docs/inference.md).
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <iterator>
#include <optional>

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
  // The medians a benchmark client reports (sglang.bench_serving, vLLM benchmark_serving):
  // the simulation's only (a table giving them says `fidelity: des`).
  if (q == "ttft_p50_s") return r.ttft_p50_s;
  if (q == "itl_p50_s") return r.itl_p50_s;
  if (q == "e2e_p50_s") return r.e2e_p50_s;
  throw InputError(where, "quantity", q,
                   "e2e_latency_s, ttft_s, itl_s, output_tokens_per_s, ttft_p50_s, itl_p50_s or "
                   "e2e_p50_s");
}

bool simulation_only(const std::string& q) {
  return q == "ttft_p50_s" || q == "itl_p50_s" || q == "e2e_p50_s";
}

// The serving keys an inference table may give (docs/validation.md "Inference tables").
constexpr const char* kServingKeys[] = {"input_tokens",      "input_tokens_distribution",
                                        "input_tokens_min",  "input_tokens_max",
                                        "output_tokens",     "output_tokens_distribution",
                                        "output_tokens_min", "output_tokens_max",
                                        "concurrency",       "arrival_rate",
                                        "requests",          "metrics_window"};

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
  // A serving key's text for this row (nullopt: not given, or the row's field is empty).
  auto field = [&](const std::string& key) -> std::optional<std::string> {
    auto it = spec.serving.find(key);
    if (it == spec.serving.end()) return std::nullopt;
    return v.get(it->second);
  };
  for (const auto& [key, ref] : spec.serving)
    if (std::find(std::begin(kServingKeys), std::end(kServingKeys), key) == std::end(kServingKeys))
      throw InputError(spec.path, "serving." + key, "<given>",
                       fmt::format("one of {}", fmt::join(kServingKeys, ", ")));
  if (!spec.model.given())
    throw InputError(spec.path, "model.name", "<not given>",
                     "a config in configs/models (inference tables name their model)");
  for (const Measure& m : spec.measures)
    if (simulation_only(m.quantity) && !spec.simulate && !simulate)
      throw InputError(spec.path, "measures", m.quantity,
                       "fidelity: des for a median (the closed form has no distribution)");
  simulate = simulate || spec.simulate;

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
    auto count = [&](const std::string& key, int64_t least) {
      const auto x = field(key);
      if (!x) throw InputError(spec.path, "serving." + key, "<not given>", "a value for every row");
      const int64_t n = v.integer(key, *x);
      if (n < least)
        throw InputError(v.where(), key, std::to_string(n), fmt::format("at least {}", least));
      return n;
    };
    // A length: fixed at its column's value, or exponential with that mean, clamped to
    // [_min, _max] (a chat data set's lengths, as the job's `distribution: exponential`).
    auto length = [&](const std::string& key) {
      LengthSpec l;
      l.mean = static_cast<double>(count(key, 1));
      const std::string dist = field(key + "_distribution").value_or("fixed");
      if (dist == "fixed") {
        l.min = l.max = static_cast<int64_t>(l.mean);
        return l;
      }
      if (dist != "exponential")
        throw InputError(spec.path, "serving." + key + "_distribution", dist,
                         "fixed or exponential");
      l.distribution = LengthDistribution::Exponential;
      l.min = count(key + "_min", 1);
      l.max = count(key + "_max", l.min);
      if (l.mean < static_cast<double>(l.min) || l.mean > static_cast<double>(l.max))
        throw InputError(v.where(), key, fmt::format("{:g}", l.mean),
                         fmt::format("a mean between {} and {}", l.min, l.max));
      return l;
    };
    sv.input_tokens = length("input_tokens");
    sv.output_tokens = length("output_tokens");
    // The load: an arrival rate (requests/s, Poisson) where the row gives one, else the
    // requests in flight (a closed loop; every request queued at once is one of that size).
    if (const auto rate = field("arrival_rate")) {
      const double r = v.number("arrival_rate", *rate);
      if (!(r > 0)) throw InputError(v.where(), "arrival_rate", *rate, "a rate above 0 per s");
      sv.load_kind = LoadKind::ArrivalRate;
      sv.loads = {r};
    } else {
      sv.load_kind = LoadKind::Concurrency;
      sv.loads = {static_cast<double>(count("concurrency", 1))};
    }
    if (field("requests")) sv.num_requests = count("requests", 1);
    if (const auto w = field("metrics_window")) {
      if (*w != "steady" && *w != "all")
        throw InputError(spec.path, "serving.metrics_window", *w, "steady or all");
      sv.metrics_window = *w == "all" ? MetricsWindow::All : MetricsWindow::Steady;
    }
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
