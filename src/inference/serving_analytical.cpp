#include "rapid/inference/serving_analytical.hpp"

#include <algorithm>
#include <cmath>

#include "lockstep.hpp"

namespace rapid {

namespace {

/// One pipeline group's iteration: its latency through every stage, or, when pp groups
/// keep the stages busy, pp times the slowest stage (vLLM runs pp batches in flight).
double period(const StepTime& t, int64_t pp) {
  return std::max(t.total_s, static_cast<double>(pp) * t.stage_s);
}

struct Regime {
  double tau = 0;                ///< mean gap between a request's tokens (an iteration period)
  double tau_prefill = 0;        ///< mean period of an iteration carrying its own prompt chunk
  double itl_at[3] = {0, 0, 0};  ///< decode gaps at 5%, 50%, 95% of the output
  double decode_step = 0;
  StepTime mean;  ///< the mean iteration of a request's life, by class
  int64_t prefill_iters = 1;
};

/// The iterations of a pipeline group of `c` running requests (mixed or separate prompts).
Regime regime(const StepModel& step, const ServingSpec& s, int64_t pp, double c, double I,
              double O) {
  Regime r;
  const ServingStack& st = s.stack;
  const double budget = static_cast<double>(st.max_num_batched_tokens);
  const double chunk_room = st.chunked_prefill ? std::max(1.0, budget - (c - 1)) : I;
  r.prefill_iters = static_cast<int64_t>(std::ceil(I / chunk_room));
  const double P = static_cast<double>(r.prefill_iters), N = P + O - 1;
  const double chunk = I / P;
  // Context of the decoders: the mean I + O/2, one request at position j of its output.
  auto decode_batch = [&](double decoders, double j_frac) {
    StepBatch b;
    b.decode_seqs = static_cast<int64_t>(std::llround(decoders));
    b.decode_context_tokens =
        b.decode_seqs > 0 ? (b.decode_seqs - 1) * (I + O / 2) + I + j_frac * O : 0;
    b.logits_seqs = b.decode_seqs;
    return b;
  };
  auto with_prefill = [&](StepBatch b, int64_t k) {
    b.prefill_tokens = std::llround(k * chunk);
    b.prefill_seqs = k;
    // A chunk after p earlier ones sees p chunks before it: mean over the P chunks.
    b.prefill_attention_pairs = k * chunk * (chunk * (P - 1) / 2 + chunk / 2);
    b.logits_seqs += P == 1 ? k : 0;
    return b;
  };
  // Another request's prompt chunks in an iteration, seen by one request (mean).
  const double others = std::max(0.0, c - 1) * P / N;
  if (st.mixed_batches) {
    const int64_t lo = static_cast<int64_t>(std::floor(others));
    const double w_hi = others - lo;
    for (int k = 0; k < 2; ++k) {
      const int64_t chunks = lo + k;
      const double w = k == 0 ? 1 - w_hi : w_hi;
      if (w <= 0) continue;
      // A gap between its tokens: it and c - 1 - chunks others decode beside the chunks.
      const double decoders = std::max(1.0, c - chunks);
      const StepTime gap = step.time(with_prefill(decode_batch(decoders, 0.5), chunks));
      r.tau += w * period(gap, pp);
      r.mean.add(gap, w * (O - 1) / N);
      for (int q = 0; q < 3; ++q) {
        const double j = q == 0 ? 0.05 : q == 1 ? 0.5 : 0.95;
        r.itl_at[q] += w * period(step.time(with_prefill(decode_batch(decoders, j), chunks)), pp);
      }
      // One of its own prefill iterations: its chunk, the others' chunks, the decoders.
      const StepTime own =
          step.time(with_prefill(decode_batch(std::max(0.0, c - 1 - chunks), 0.5), chunks + 1));
      r.tau_prefill += w * period(own, pp);
      r.mean.add(own, w * P / N);
    }
    r.decode_step = period(step.time(decode_batch(c, 0.5)), pp);
    return r;
  }
  // Prompts first, alone: between two of a request's tokens, (c - 1) / (O - 1) other
  // prompts' prefill iterations (each request brings one prompt per O - 1 decodes).
  StepBatch pb;
  pb = with_prefill(pb, 1);
  const StepTime tp = step.time(pb);
  const double tau_p = period(tp, pp) * P;
  const double per_decode = O > 1 ? std::max(0.0, c - 1) / (O - 1) : 0.0;
  const StepTime td = step.time(decode_batch(c, 0.5));
  r.decode_step = period(td, pp);
  r.tau = r.decode_step + per_decode * tau_p;
  r.mean.add(td, (O - 1) / N);
  r.mean.add(tp, P / N);
  r.tau_prefill = tau_p / P;
  for (int q = 0; q < 3; ++q) {
    const double j = q == 0 ? 0.05 : q == 1 ? 0.5 : 0.95;
    r.itl_at[q] = period(step.time(decode_batch(c, j)), pp) + per_decode * tau_p;
  }
  return r;
}

}  // namespace

ReplicaMetrics serving_closed_form(const StepModel& step, const ServingSpec& s,
                                   const ServingMemory& memory, int64_t pp, double load) {
  const double B = static_cast<double>(memory.max_batch);
  if (detail::runs_in_lockstep(s, pp, load, B)) return detail::lockstep_metrics(step, s, load);
  ReplicaMetrics m;
  const double I = std::max(1.0, std::round(s.input_tokens.mean));
  const double O = std::max(1.0, std::round(s.output_tokens.mean));
  const bool open = s.load_kind == LoadKind::ArrivalRate;
  // Requests running: closed loop min(c, B); open loop the fixed point of Little's law.
  double c = open ? 1.0 : std::min(load, B);
  Regime r;
  double e2e = 0;
  auto solve = [&](double running) {
    // Up to pp groups in flight (no more than there are requests), each a share of them;
    // an iteration's period counts the groups that take turns through the stages.
    const double active = std::max(1.0, std::min(static_cast<double>(pp), running));
    r = regime(step, s, static_cast<int64_t>(active), running / active, I, O);
    const double P = static_cast<double>(r.prefill_iters);
    e2e = P * r.tau_prefill + (O - 1) * r.tau;
  };
  solve(c);
  if (open) {
    for (int it = 0; it < 200; ++it) {
      const double next = std::max(1.0, load * (e2e + r.tau / 2));
      if (next > B) {
        m.overloaded = true;
        break;
      }
      if (std::abs(next - c) < 1e-6 * c) break;
      c = 0.5 * (c + next);
      solve(c);
    }
    if (load * (e2e + r.tau / 2) > B) m.overloaded = true;
    if (m.overloaded) {  // no steady state: the replica serves at its capacity, c = B
      c = B;
      solve(c);
    }
  }
  // Closed loop with a front end: each client spends f of its cycle outside the engine,
  // so the engine holds load x L / (L + f) of them (Little's law, L the engine's lifetime
  // of a request), at most B; the fixed point of that share.
  const double f = s.stack.frontend_latency_s;
  if (!open && f > 0)
    for (int it = 0; it < 100; ++it) {  // to 1e-4 of a request: L moves little with c
      const double next = std::min(B, std::max(1.0, load * e2e / (e2e + f)));
      if (std::abs(next - c) < 1e-4 * c) break;
      c = next;
      solve(c);
    }
  const double P = static_cast<double>(r.prefill_iters);
  // Little's law per group: group requests, each running P prefill and O - 1 decode
  // iterations.
  const double lifetime = P * r.tau_prefill + (O - 1) * r.tau;
  // Closed loop: every client cycles through the front end and the engine (load / (L + f))
  // unless the engine is full (B running: B / L, the others waiting for a slot).
  const bool full = !open && load * lifetime / (lifetime + f) > B;
  m.requests_per_s =
      open ? (m.overloaded ? c / lifetime : load) : (full ? c / lifetime : load / (lifetime + f));
  // A request joins at an iteration's end: an open loop's arrival waits half an iteration
  // on average. A closed-loop client sends when its last request's final iteration ends;
  // the engine sees the request f later, while the others' next iteration runs (with two
  // or more running), and it waits for that iteration's rest: tau - f when f < tau, half an
  // iteration when the phase is spread (f >= tau); none with no front end (docs/inference.md
  // sec 4).
  // Per pipeline group: its own requests keep it iterating (pp groups take turns).
  const double groups = std::max(1.0, std::min(static_cast<double>(pp), c));
  const double per_group = c / groups;
  const double in_progress =
      f <= 0 ? 0.0 : (f < r.tau ? r.tau - f : r.tau / 2) * std::clamp(per_group - 1.0, 0.0, 1.0);
  // Where the closed form parts from the simulation by more than 10% on the shipped jobs
  // (docs/inference.md sec 4): clients waiting for a slot (the queue's dynamics), and pp
  // groups of 32 requests or more (their turn-taking: ITL 7-15% under the simulation's).
  m.closed_form_risk =
      (!open && load > B) || (pp > 1 && std::min(open ? c : load, B) / groups >= 32);
  m.queue_time_s =
      open ? r.tau / 2
           : std::max(0.0, load - c - m.requests_per_s * f) / m.requests_per_s + in_progress;
  m.ttft_s = f + m.queue_time_s + P * r.tau_prefill;
  m.itl_s = r.tau;
  m.itl_start_s = r.itl_at[0];
  m.itl_mid_s = r.itl_at[1];
  m.itl_end_s = r.itl_at[2];
  m.e2e_latency_s = m.ttft_s + (O - 1) * r.tau;
  m.output_tokens_per_s = m.requests_per_s * O;
  m.total_tokens_per_s = m.requests_per_s * (I + O);
  m.running_batch = c;
  m.peak_kv_tokens = c * (I + O);
  m.decode_step_time_s = r.decode_step;
  m.set_classes(r.mean);
  m.step_s = lifetime / (P + O - 1);
  if (m.overloaded)  // the queue grows without bound: latencies have no steady value
    m.ttft_s = m.itl_s = m.itl_start_s = m.itl_mid_s = m.itl_end_s = m.e2e_latency_s =
        m.queue_time_s = ReplicaMetrics::kNaN;
  return m;
}

}  // namespace rapid
