#include "rapid/inference/serving_report.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "rapid/core/prediction_interval.hpp"

namespace rapid {

namespace {

// The prediction intervals of each load's TTFT, ITL and E2E, and where they come from.
std::string describe_serving_intervals(const SweepSpec& spec, const Point& p,
                                       const std::vector<EvalResult>& by_load) {
  const auto h = static_cast<size_t>(p.hardware);
  if (h >= spec.intervals.size()) return "";
  const IntervalBand& b = spec.intervals[h];
  std::string out;
  for (size_t k = 0; k < by_load.size(); ++k) {
    const EvalResult& r = by_load[k];
    if (std::isnan(r.ttft_lo_s)) continue;
    if (out.empty())
      out = fmt::format(
          "{:>12} {:>10} {:>21} {:>22} {:>22}\n",
          spec.serving.load_kind == LoadKind::Concurrency ? "concurrency" : "rate (1/s)",
          fmt::format("{:.0f}%", 100 * b.coverage), "TTFT ms", "ITL ms", "E2E s");
    auto range = [](double lo, double hi, double scale) {
      return short_number(lo * scale) + "-" + short_number(hi * scale);
    };
    out += fmt::format("{:>12g} {:>10} {:>21} {:>22} {:>22}\n", spec.serving.loads[k], "interval",
                       range(r.ttft_lo_s, r.ttft_hi_s, 1e3), range(r.itl_lo_s, r.itl_hi_s, 1e3),
                       range(r.e2e_latency_lo_s, r.e2e_latency_hi_s, 1));
  }
  const bool simulated = !by_load.empty() && by_load.front().fidelity == 1;
  return out + describe_interval(b, simulated);
}

// The simulated distributions per load (p50 / p90 / p99 of TTFT, ITL, E2E), or why there
// are none: the closed form gives every request of a class the same latency.
std::string describe_percentiles(const SweepSpec& spec, const std::vector<EvalResult>& by_load) {
  const bool any = std::any_of(by_load.begin(), by_load.end(),
                               [](const EvalResult& r) { return !std::isnan(r.ttft_p50_s); });
  if (!any)
    return "percentiles none: the closed form has no tails (means only); --fidelity des "
           "simulates p50, p90 and p99\n";
  std::string out =
      fmt::format("{:>12} {:>10} {:>26} {:>26} {:>26}\n",
                  spec.serving.load_kind == LoadKind::Concurrency ? "concurrency" : "rate (1/s)",
                  "percentile", "TTFT ms p50/p90/p99", "ITL ms p50/p90/p99", "E2E s p50/p90/p99");
  auto three = [](double a, double b, double c, double scale) {
    return short_number(a * scale) + "/" + short_number(b * scale) + "/" + short_number(c * scale);
  };
  for (size_t k = 0; k < by_load.size(); ++k) {
    const EvalResult& r = by_load[k];
    if (std::isnan(r.ttft_p50_s)) continue;
    out += fmt::format("{:>12g} {:>10} {:>26} {:>26} {:>26}\n", spec.serving.loads[k], "",
                       three(r.ttft_p50_s, r.ttft_p90_s, r.ttft_p99_s, 1e3),
                       three(r.itl_p50_s, r.itl_p90_s, r.itl_p99_s, 1e3),
                       three(r.e2e_p50_s, r.e2e_p90_s, r.e2e_p99_s, 1.0));
  }
  return out;
}

}  // namespace

std::string describe_serving(const SweepSpec& spec, const Point& p,
                             const std::vector<EvalResult>& by_load) {
  constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;
  const HardwareSpec& hw = spec.hardware[static_cast<size_t>(p.hardware)];
  const ServingSpec& s = spec.serving;
  std::string out;
  out += fmt::format("model       {} on {} x {} ({}), serving stack {}\n", spec.model.name,
                     p.par.num_gpus(), hw.name, spec.network.name, s.stack.name);
  out += fmt::format("layout      {} replica(s) of tp{} pp{} ep{}\n", p.par.dp, p.par.tp, p.par.pp,
                     p.par.ep);
  out += fmt::format("requests    {:.0f} input / {:.0f} output tokens (means), {} / {}\n",
                     s.input_tokens.mean, s.output_tokens.mean,
                     kLengthDistributionNames[static_cast<int>(s.input_tokens.distribution)],
                     kLengthDistributionNames[static_cast<int>(s.output_tokens.distribution)]);
  if (s.over_budget())
    out += fmt::format(
        "budget      chunked prefill off and the longest {} ({} tokens) above "
        "max_num_batched_tokens ({}): {}\n",
        s.stack.over_budget_prompt == OverBudgetPrompt::RefuseSequence ? "sequence" : "prompt",
        s.budget_checked_tokens(), s.stack.max_num_batched_tokens,
        s.refused_over_budget()
            ? fmt::format("the stack refuses it (over_budget_prompt: {}); no point can run",
                          kOverBudgetPromptNames[static_cast<int>(s.stack.over_budget_prompt)])
            : std::string("it runs alone in its iteration, past the budget "
                          "(over_budget_prompt: alone)"));
  if (by_load.empty()) return out;
  const EvalResult& r0 = by_load.front();
  out += fmt::format(
      "memory      per GPU of {:.2f} GiB: weights {:.2f}, activations {:.2f}, workspace {:.2f}; "
      "KV cache holds {:.0f} tokens per replica, {:.0f} requests of the longest length at once\n",
      r0.memory_capacity_bytes / kGiB, r0.weights_bytes / kGiB, r0.activations_bytes / kGiB,
      r0.reserve_bytes / kGiB, r0.kv_cache_capacity_tokens, r0.max_concurrency);
  const bool closed = s.load_kind == LoadKind::Concurrency;
  out += fmt::format("{:>12} {:>10} {:>10} {:>10} {:>10} {:>10} {:>9} {:>12} {:>12} {:>8}\n",
                     closed ? "concurrency" : "rate (1/s)", "status", "TTFT ms", "ITL ms",
                     "ITL start", "ITL end", "E2E s", "out tok/s", "tok/s/GPU", "batch");
  for (size_t k = 0; k < by_load.size(); ++k) {
    const EvalResult& r = by_load[k];
    out += fmt::format(
        "{:>12g} {:>10} {:>10.2f} {:>10.2f} {:>10.2f} {:>10.2f} {:>9.3f} {:>12.1f} "
        "{:>12.1f} {:>8.1f}\n",
        s.loads[k],
        r.status == Status::Error ? fmt::format("error:{}", kErrorCodeNames[r.error_code])
                                  : std::string(status_name(r.status)),
        r.ttft_s * 1e3, r.itl_s * 1e3, r.itl_start_s * 1e3, r.itl_end_s * 1e3, r.e2e_latency_s,
        r.output_tokens_per_s, r.tokens_per_s_per_gpu, r.running_batch);
  }
  // The loads where the closed form is known to part from the simulation (warning bit 4,
  // docs/inference.md sec 4).
  std::string risky;
  for (size_t k = 0; k < by_load.size(); ++k)
    if (by_load[k].flags & kFlagClosedFormRisk)
      risky += fmt::format("{}{:g}", risky.empty() ? "" : ", ", s.loads[k]);
  if (!risky.empty())
    out += fmt::format(
        "warning     at {} {}: the closed form parts from the simulation by more than 10% on "
        "TTFT or ITL on points like these (clients waiting for a slot, or pipeline groups of "
        "32 or more): check them with --fidelity des\n",
        closed ? "concurrency" : "rate", risky);
  out += describe_percentiles(spec, by_load);
  out += describe_serving_intervals(spec, p, by_load);
  const EvalResult& last = by_load.back();
  if (last.status == Status::Ok)
    out += fmt::format(
        "by class    mean iteration at the last load: gemm {:.2f} ms, attention {:.2f} ms, "
        "memory-bound {:.2f} ms, TP {:.2f} ms, EP {:.2f} ms, PP {:.2f} ms, host {:.2f} ms\n",
        last.gemm_time_s * 1e3, last.attention_time_s * 1e3, last.memory_bound_time_s * 1e3,
        last.tp_comm_time_s * 1e3, last.ep_comm_time_s * 1e3, last.pp_comm_time_s * 1e3,
        last.host_bound_time_s * 1e3);
  return out;
}

}  // namespace rapid
