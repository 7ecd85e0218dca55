#include "lockstep.hpp"

#include <algorithm>
#include <cmath>

namespace rapid::detail {

bool runs_in_lockstep(const ServingSpec& s, int64_t pp, double load, double max_batch) {
  if (s.load_kind != LoadKind::Concurrency || pp != 1 || load > max_batch ||
      s.input_tokens.distribution != LengthDistribution::Fixed ||
      s.output_tokens.distribution != LengthDistribution::Fixed)
    return false;
  // With mixed batches and prompts over more than one iteration the clients split into
  // cohorts, one iteration apart, each prefilled beside the others' decodes: the spread
  // closed form describes that better (docs/inference.md sec 4).
  const double prompt_tokens = std::round(load) * std::max(1.0, std::round(s.input_tokens.mean));
  return !s.stack.mixed_batches ||
         prompt_tokens <= static_cast<double>(s.stack.max_num_batched_tokens);
}

ReplicaMetrics lockstep_metrics(const StepModel& step, const ServingSpec& s, double load) {
  ReplicaMetrics m;
  const ServingStack& st = s.stack;
  const int64_t c = std::max<int64_t>(1, std::llround(load));
  const int64_t I = std::max<int64_t>(1, std::llround(s.input_tokens.mean));
  const int64_t O = std::max<int64_t>(1, std::llround(s.output_tokens.mean));
  const int64_t budget = std::max<int64_t>(1, st.max_num_batched_tokens);
  // The prefill phase: n iterations of equal shares of the c x I prompt tokens (chunked) or
  // of m whole prompts each (the last iteration takes the rest). Prompt j's first token
  // comes with the iteration that holds its last token.
  StepTime prefill_sum;
  double prefill_s = 0, first_token_sum = 0;
  int64_t prefill_iterations = 0;
  auto iteration = [&](int64_t tokens, int64_t seqs, int64_t finishing, double pairs) {
    StepBatch b;
    b.prefill_tokens = tokens;
    b.prefill_seqs = seqs;
    b.prefill_attention_pairs = pairs;
    b.logits_seqs = finishing;
    const StepTime t = step.time(b);
    prefill_sum.add(t);
    return t.total_s;
  };
  if (st.chunked_prefill) {
    const int64_t total = c * I, n = (total + budget - 1) / budget;
    prefill_iterations = n;
    const double share = static_cast<double>(total) / static_cast<double>(n);
    // Every iteration alike: `share` tokens over the prompts it touches (share / I + 1 at
    // most), a token seeing half a prompt before it on average (I / 2 pairs per token).
    const int64_t seqs =
        std::min<int64_t>(c, static_cast<int64_t>(std::ceil(share / static_cast<double>(I))) + 1);
    const double t = iteration(std::llround(share), seqs, std::max<int64_t>(1, c / n),
                               share * static_cast<double>(I) / 2);
    prefill_s = t * static_cast<double>(n);
    for (int64_t j = 0; j < c; ++j) {  // prompt j ends in iteration ceil((j + 1) I / share)
      const double k = std::ceil(static_cast<double>((j + 1) * I) / share - 1e-9);
      first_token_sum += std::min(k, static_cast<double>(n)) * t;
    }
  } else {
    // Whole prompts: as many as the budget holds, at least one (a prompt over the budget
    // runs alone: over_budget_prompt, refused stacks never get here).
    const int64_t per = std::max<int64_t>(1, budget / I), n = (c + per - 1) / per;
    prefill_iterations = n;
    const double pairs_one = static_cast<double>(I) * static_cast<double>(I) / 2;
    for (int64_t k = 0; k < n; ++k) {
      const int64_t here = std::min(per, c - k * per);
      prefill_s += iteration(here * I, here, here, static_cast<double>(here) * pairs_one);
      first_token_sum += static_cast<double>(here) * prefill_s;
    }
  }
  // The decode phase: O - 1 iterations of all c, the context growing from I to I + O.
  auto decode = [&](double j_frac) {
    StepBatch b;
    b.decode_seqs = c;
    b.decode_context_tokens =
        static_cast<double>(c) * (static_cast<double>(I) + j_frac * static_cast<double>(O));
    b.logits_seqs = c;
    return step.time(b);
  };
  const StepTime mid = decode(0.5);
  const double decodes = static_cast<double>(O - 1);
  const double f = st.frontend_latency_s;
  const double cycle = f + prefill_s + decodes * mid.total_s;
  m.requests_per_s = static_cast<double>(c) / cycle;
  m.queue_time_s = 0;
  const double first_token = first_token_sum / static_cast<double>(c);
  m.ttft_s = f + first_token;
  // A prompt done before the last prefill iteration waits for it before its first decode:
  // prefill_s - first_token on average, in its first gap.
  const double wait = prefill_s - first_token;
  m.itl_s = mid.total_s + (O > 1 ? wait / decodes : 0.0);
  // The first tenth of the gaps (what itl_start averages) holds that wait.
  const double tenth = std::max(1.0, std::floor(decodes / 10));
  m.itl_start_s = decode(0.05).total_s + (O > 1 ? wait / tenth : 0.0);
  m.itl_mid_s = mid.total_s;
  m.itl_end_s = decode(0.95).total_s;
  m.e2e_latency_s = cycle;
  m.output_tokens_per_s = m.requests_per_s * static_cast<double>(O);
  m.total_tokens_per_s = m.requests_per_s * static_cast<double>(I + O);
  m.running_batch = static_cast<double>(c);
  m.peak_kv_tokens = static_cast<double>(c * (I + O));
  m.decode_step_time_s = mid.total_s;
  // The mean iteration by class: the prefill iterations and the decodes, weighted by count.
  StepTime mean = prefill_sum;
  mean.add(mid, decodes);
  const double iterations = static_cast<double>(prefill_iterations) + decodes;
  m.set_classes(mean, 1.0 / iterations);
  m.step_s = (prefill_s + decodes * mid.total_s) / iterations;
  return m;
}

}  // namespace rapid::detail
