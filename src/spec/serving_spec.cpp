#include "rapid/spec/serving_spec.hpp"
#include "config_resolve.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <iterator>
#include <limits>
#include <optional>
#include <set>

#include "rapid/common/error.hpp"
#include "rapid/common/suggest.hpp"
#include "rapid/spec/sweep_spec.hpp"
#include "rapid/spec/yaml_reader.hpp"
#include "stack_keys.hpp"

namespace fs = std::filesystem;

namespace rapid {
namespace {

// Bounds of the stack keys: far beyond any engine's setting, small enough that products of
// them (blocks x tokens, sequences x tokens) stay exact in int64 and double.
constexpr int64_t kMaxBlockTokens = 1 << 16;
constexpr int64_t kMaxSeqs = 1 << 24;
constexpr int64_t kMaxBatchedTokens = 100'000'000;

// Bounds of the request mix.
constexpr int64_t kMaxLengthTokens = 10'000'000;
constexpr int64_t kMaxRequests = 1'000'000;
constexpr int64_t kMaxConcurrency = 10'000'000;
constexpr double kMaxArrivalRate = 1e9;  // requests per second

/// A fraction in (0, 1] ("0.9" or "90%").
double fraction_or(const YamlMap& m, const std::string& key, double fallback) {
  if (!m.has(key)) return fallback;
  const YAML::Node n = m.node(key);
  const char* expected = "a fraction in (0, 1] such as 0.9 or 90%";
  if (!n.IsScalar()) m.fail(key, n.IsSequence() ? "<list>" : "<mapping>", expected);
  const auto v = parse_quantity(n.Scalar(), Dimension::Ratio);
  if (!v || !(*v > 0.0) || *v > 1.0) m.fail(key, n.Scalar(), expected);
  return *v;
}

/// The stack keys (ServingStack's fields without unit suffixes), over the values `s` has:
/// one reader for a stack file and for the job's `serving:` overrides.
void read_stack_keys(const YamlMap& m, ServingStack& s) {
  s.kv_block_tokens = m.integer_or("kv_block_tokens", s.kv_block_tokens, 1, kMaxBlockTokens);
  s.max_num_seqs = m.integer_or("max_num_seqs", s.max_num_seqs, 1, kMaxSeqs);
  s.max_num_batched_tokens =
      m.integer_or("max_num_batched_tokens", s.max_num_batched_tokens, 1, kMaxBatchedTokens);
  s.chunked_prefill = m.boolean_or("chunked_prefill", s.chunked_prefill);
  const std::vector<std::string> over(std::begin(kOverBudgetPromptNames),
                                      std::end(kOverBudgetPromptNames));
  s.over_budget_prompt = static_cast<OverBudgetPrompt>(
      m.choice_or("over_budget_prompt", over, static_cast<int>(s.over_budget_prompt)));
  s.mixed_batches = m.boolean_or("mixed_batches", s.mixed_batches);
  s.cuda_graphs = m.boolean_or("cuda_graphs", s.cuda_graphs);
  s.cuda_graph_max_batch =
      m.integer_or("cuda_graph_max_batch", s.cuda_graph_max_batch, 1, kMaxSeqs);
  s.host_overhead_per_step_s =
      m.quantity_or("host_overhead_per_step", Dimension::Time, s.host_overhead_per_step_s);
  s.host_overhead_per_seq_s =
      m.quantity_or("host_overhead_per_seq", Dimension::Time, s.host_overhead_per_seq_s);
  s.eager_launch_s = m.quantity_or("eager_launch", Dimension::Time, s.eager_launch_s);
  s.graph_launch_s = m.quantity_or("graph_launch", Dimension::Time, s.graph_launch_s);
  s.frontend_latency_s = m.quantity_or("frontend_latency", Dimension::Time, s.frontend_latency_s);
  s.gpu_memory_utilization = fraction_or(m, "gpu_memory_utilization", s.gpu_memory_utilization);
  const std::vector<std::string> budgets(std::begin(kMemoryBudgetNames),
                                         std::end(kMemoryBudgetNames));
  s.memory_budget = static_cast<MemoryBudget>(
      m.choice_or("memory_budget", budgets, static_cast<int>(s.memory_budget)));
  s.workspace_bytes = m.quantity_or("workspace", Dimension::Size, s.workspace_bytes);
  s.attention = detail::read_attention(m, s.attention);
  s.custom_all_reduce = m.boolean_or("custom_all_reduce", s.custom_all_reduce);
  s.custom_all_reduce_max_bytes =
      m.quantity_or("custom_all_reduce_max", Dimension::Size, s.custom_all_reduce_max_bytes);
  s.custom_all_reduce_latency_s =
      m.quantity_or("custom_all_reduce_latency", Dimension::Time, s.custom_all_reduce_latency_s);
  s.custom_all_reduce_one_shot_max_tp4_bytes =
      m.quantity_or("custom_all_reduce_one_shot_max_tp4", Dimension::Size,
                    s.custom_all_reduce_one_shot_max_tp4_bytes);
  s.custom_all_reduce_one_shot_max_tp8_bytes =
      m.quantity_or("custom_all_reduce_one_shot_max_tp8", Dimension::Size,
                    s.custom_all_reduce_one_shot_max_tp8_bytes);
}

/// A real number in [lo, hi] (`lo_open`: (lo, hi]); `what` completes the expected text.
double read_number(const YamlMap& m, const std::string& key, double lo, double hi, bool lo_open,
                   const std::string& what) {
  const std::string expected =
      fmt::format("{} (a number in {}{:g}, {:g}])", what, lo_open ? "(" : "[", lo, hi);
  if (!m.has(key)) m.fail(key, "<missing>", expected);
  const YAML::Node n = m.node(key);
  if (!n.IsScalar()) m.fail(key, n.IsSequence() ? "<list>" : "<mapping>", expected);
  double v = 0;
  if (!YAML::convert<double>::decode(n, v) || !std::isfinite(v) || v > hi ||
      (lo_open ? !(v > lo) : v < lo))
    m.fail(key, n.Scalar(), expected);
  return v;
}

/// One length of the request mix: an integer (fixed) or a mapping {distribution, value |
/// min, max, mean, stddev}.
LengthSpec read_length(const YamlMap& parent, const std::string& key) {
  LengthSpec l;
  if (!parent.has(key))
    parent.fail(key, "<missing>",
                "a length in tokens: an integer, or a mapping {distribution: fixed | uniform | "
                "normal | exponential, ...}");
  const YAML::Node n = parent.node(key);
  if (n.IsScalar()) {
    const int64_t v = parent.integer(key, 1, kMaxLengthTokens);
    l.distribution = LengthDistribution::Fixed;
    l.min = l.max = v;
    l.mean = static_cast<double>(v);
    return l;
  }
  if (!n.IsMap())
    parent.fail(key, n.IsSequence() ? "<list>" : "<empty>",
                fmt::format("an integer between 1 and {} or a mapping {{distribution, ...}}",
                            kMaxLengthTokens));
  const YamlMap d = parent.map(key);
  const std::vector<std::string> names(std::begin(kLengthDistributionNames),
                                       std::end(kLengthDistributionNames));
  l.distribution = static_cast<LengthDistribution>(d.choice_or("distribution", names, 0));
  const std::string dist = names[static_cast<size_t>(l.distribution)];
  // The keys each distribution takes; any other is named as not belonging to it.
  static const std::vector<std::string> kKeys[] = {{"distribution", "value"},
                                                   {"distribution", "min", "max"},
                                                   {"distribution", "mean", "stddev", "min", "max"},
                                                   {"distribution", "mean", "min", "max"}};
  const std::vector<std::string>& allowed = kKeys[static_cast<size_t>(l.distribution)];
  for (const std::string& k : d.keys())
    if (std::find(allowed.begin(), allowed.end(), k) == allowed.end())
      d.fail(
          k, k,
          fmt::format("one of {} (the keys of distribution {})", fmt::join(allowed, ", "), dist));
  const auto integer = [&](const char* k) {
    if (!d.has(k))
      d.fail(k, "<missing>",
             fmt::format("`{}` for distribution {} (an integer between 1 and {})", k, dist,
                         kMaxLengthTokens));
    return d.integer(k, 1, kMaxLengthTokens);
  };
  const double max_tokens = static_cast<double>(kMaxLengthTokens);
  const std::string mean_what = fmt::format("a mean length in tokens for distribution {}", dist);
  switch (l.distribution) {
    case LengthDistribution::Fixed:
      l.min = l.max = integer("value");
      l.mean = static_cast<double>(l.min);
      break;
    case LengthDistribution::Uniform:
      l.min = integer("min");
      l.max = integer("max");
      l.mean = 0.5 * static_cast<double>(l.min + l.max);
      break;
    case LengthDistribution::Normal:
      l.mean = read_number(d, "mean", 1, max_tokens, false, mean_what);
      l.stddev = read_number(d, "stddev", 0, max_tokens, true,
                             "a standard deviation in tokens for distribution normal");
      l.min = d.integer_or("min", 1, 1, kMaxLengthTokens);
      l.max = integer("max");
      break;
    case LengthDistribution::Exponential:
      l.mean = read_number(d, "mean", 1, max_tokens, false, mean_what);
      l.min = d.integer_or("min", 1, 1, kMaxLengthTokens);
      l.max = integer("max");
      break;
  }
  if (l.min > l.max) d.fail("max", std::to_string(l.max), fmt::format("at least min ({})", l.min));
  if (l.mean < static_cast<double>(l.min) || l.mean > static_cast<double>(l.max))
    d.fail("mean", fmt::format("{:g}", l.mean),
           fmt::format("a mean between min ({}) and max ({})", l.min, l.max));
  d.finish();
  return l;
}

/// One arrival rate: a plain number or "N/s" ("N/min", "N/h"), in requests per second.
std::optional<double> parse_rate(const std::string& text) {
  const auto q = split_quantity(text);
  if (!q) return std::nullopt;
  double per = 0;
  if (q->unit.empty() || q->unit == "/s")
    per = 1;
  else if (q->unit == "/min")
    per = 60;
  else if (q->unit == "/h")
    per = 3600;
  else
    return std::nullopt;
  const double r = q->value / per;
  if (!std::isfinite(r) || !(r > 0) || r > kMaxArrivalRate) return std::nullopt;
  return r;
}

std::vector<double> read_rates(const YamlMap& m, const std::string& key) {
  const std::string expected = fmt::format(
      "an arrival rate in requests per second, > 0 and at most {:g}, such as 2, 0.5/s or "
      "30/min, or a non-empty list of them",
      kMaxArrivalRate);
  const YAML::Node n = m.node(key);
  std::vector<double> out;
  const auto take = [&](const YAML::Node& item) {
    const auto r = item.IsScalar() ? parse_rate(item.Scalar()) : std::nullopt;
    if (!r) {
      const std::string text = item.IsScalar()     ? item.Scalar()
                               : item.IsSequence() ? "<list>"
                                                   : "<mapping>";
      const YAML::Mark mk = item.Mark();
      throw InputError(m.file(), m.key_path(key), text, expected, mk.is_null() ? -1 : mk.line,
                       mk.is_null() ? -1 : mk.column);
    }
    out.push_back(*r);
  };
  if (n.IsSequence()) {
    for (const auto& item : n) take(item);
  } else {
    take(n);
  }
  if (out.empty()) m.fail(key, "[]", expected);
  return out;
}

template <class T>
void sort_unique(std::vector<T>& v) {
  std::sort(v.begin(), v.end());
  v.erase(std::unique(v.begin(), v.end()), v.end());
}

}  // namespace

ServingStack parse_serving_stack(const YAML::Node& node, const std::string& file,
                                 const ServingStack& base) {
  YamlMap m(node, file);
  ServingStack s = base;
  s.name = m.string("name");
  for (const char* k : {"base", "description", "source", "sources"}) m.has(k);
  read_stack_keys(m, s);
  m.finish();
  return s;
}

std::vector<std::string> known_serving_stacks(const std::string& anchor) {
  return detail::known_configs("serving", anchor);
}

ServingStack load_serving_stack(const std::string& name, const std::string& anchor,
                                const std::string& referrer, const std::string& key) {
  const std::vector<detail::ChainLink> chain =
      detail::load_base_chain("serving", "a serving stack", name, anchor, referrer, key);
  ServingStack s;
  for (const detail::ChainLink& l : chain) s = parse_serving_stack(l.node, l.path, s);
  s.path = detail::chain_paths(chain);
  return s;
}

ServingSpec parse_serving(const YamlMap& m, const std::string& anchor) {
  ServingSpec spec;
  spec.stack =
      load_serving_stack(m.string_or("stack", "vllm"), anchor, m.file(), m.key_path("stack"));
  read_stack_keys(m, spec.stack);

  if (!m.has("requests"))
    m.fail("requests", "<missing>", "a mapping {input_tokens, output_tokens, count, seed}");
  const YamlMap r = m.map("requests");
  // A misspelt key is named as such before a required one is reported missing.
  const std::vector<std::string> request_keys = {"input_tokens", "output_tokens", "count", "seed"};
  for (const std::string& key : r.keys())
    if (std::find(request_keys.begin(), request_keys.end(), key) == request_keys.end()) {
      const std::string hint = did_you_mean(suggest(key, request_keys), r.key_path(""));
      r.fail(
          key, key,
          "input_tokens, output_tokens, count or seed" + (hint.empty() ? "" : " (" + hint + ")"));
    }
  spec.input_tokens = read_length(r, "input_tokens");
  spec.output_tokens = read_length(r, "output_tokens");
  spec.num_requests = r.integer_or("count", spec.num_requests, 1, kMaxRequests);
  spec.seed = static_cast<uint64_t>(r.integer_or("seed", static_cast<int64_t>(spec.seed), 0,
                                                 std::numeric_limits<int64_t>::max()));
  r.finish();

  const bool concurrency = m.has("concurrency"), rate = m.has("arrival_rate");
  if (concurrency && rate) {
    const YAML::Node n = m.node("arrival_rate");
    m.fail("arrival_rate", n.IsScalar() ? n.Scalar() : "<list>",
           "either concurrency or arrival_rate, not both");
  }
  if (rate) {
    spec.load_kind = LoadKind::ArrivalRate;
    spec.loads = read_rates(m, "arrival_rate");
  } else {
    spec.load_kind = LoadKind::Concurrency;
    std::vector<int64_t> c = m.integer_list_or("concurrency", {1}, 1, kMaxConcurrency);
    spec.loads.assign(c.begin(), c.end());
  }
  sort_unique(spec.loads);
  const std::vector<std::string> windows(std::begin(kMetricsWindowNames),
                                         std::end(kMetricsWindowNames));
  spec.metrics_window = static_cast<MetricsWindow>(m.choice_or("metrics_window", windows, 0));

  constexpr DType kDTypes[] = {DType::BF16, DType::FP16, DType::FP8};
  const std::vector<std::string> dtypes{"bf16", "fp16", "fp8"};
  const int dt = m.choice_or("dtype", dtypes, 0);
  spec.dtype = kDTypes[dt];
  spec.kv_dtype = kDTypes[m.choice_or("kv_dtype", dtypes, dt)];
  m.finish();
  return spec;
}

}  // namespace rapid
