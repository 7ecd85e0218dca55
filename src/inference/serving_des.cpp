#include "rapid/inference/serving_des.hpp"

#include <algorithm>
#include <cmath>
#include <deque>
#include <queue>
#include <random>
#include <vector>

#include <fmt/format.h>

#include "rapid/common/error.hpp"

namespace rapid {

namespace {

constexpr int64_t kMaxIterations = 50'000'000;

int64_t draw(const LengthSpec& l, std::mt19937_64& rng) {
  double x = l.mean;
  switch (l.distribution) {
    case LengthDistribution::Fixed:
      return std::llround(l.mean);
    case LengthDistribution::Uniform:
      return std::uniform_int_distribution<int64_t>(l.min, l.max)(rng);
    case LengthDistribution::Normal:
      x = std::normal_distribution<double>(l.mean, l.stddev)(rng);
      break;
    case LengthDistribution::Exponential:
      x = std::exponential_distribution<double>(1.0 / l.mean)(rng);
      break;
  }
  return std::clamp<int64_t>(std::llround(x), l.min, l.max);
}

struct Request {
  int64_t input = 0, output = 0;
  double arrival = 0, first_token = -1, last_token = -1, done = -1, admitted = -1;
  int64_t prefilled = 0, generated = 0;
  int64_t blocks = 0;
  std::vector<double> gaps;  // between consecutive output tokens
};

double mean_of(const std::vector<double>& v, size_t from, size_t to) {
  if (to <= from) return std::numeric_limits<double>::quiet_NaN();
  double s = 0;
  for (size_t i = from; i < to; ++i) s += v[i];
  return s / static_cast<double>(to - from);
}

double percentile(std::vector<double> v, double q) {
  if (v.empty()) return std::numeric_limits<double>::quiet_NaN();
  const size_t k = std::min(v.size() - 1, static_cast<size_t>(std::ceil(q * v.size())) - 1);
  std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(k), v.end());
  return v[k];
}

}  // namespace

ReplicaMetrics serving_simulate(const StepModel& step, const ServingSpec& s,
                                const ServingMemory& memory, int64_t pp, double load,
                                uint64_t stream) {
  ReplicaMetrics m;
  const ServingStack& st = s.stack;
  const bool open = s.load_kind == LoadKind::ArrivalRate;
  // Closed loop: the first c requests arrive together (the start-up burst) and the last c
  // run while clients stop (the drain); at least 2 c more are simulated between them.
  const int64_t clients = open ? 0 : std::max<int64_t>(1, std::llround(load));
  const int64_t n = std::max(s.num_requests, 4 * clients);
  std::mt19937_64 rng(s.seed * 0x9E3779B97F4A7C15ull + stream);
  std::vector<Request> req(static_cast<size_t>(n));
  for (Request& r : req) {
    r.input = draw(s.input_tokens, rng);
    r.output = std::max<int64_t>(1, draw(s.output_tokens, rng));
    r.blocks = (r.input + r.output + st.kv_block_tokens - 1) / st.kv_block_tokens;
  }
  int64_t issued = 0;
  // Each pipeline group (vLLM's virtual engine) schedules its own requests: request k goes
  // to group k mod pp, a client's next request to its last one's group (groups stay even).
  std::vector<std::deque<int64_t>> queues(static_cast<size_t>(pp));
  if (open) {
    double t = 0;
    std::exponential_distribution<double> gap(load);
    for (Request& r : req) {
      t += gap(rng);
      r.arrival = t;
      queues[static_cast<size_t>(issued % pp)].push_back(issued);
      ++issued;
    }
  } else {
    for (; issued < std::min(clients, n); ++issued)
      queues[static_cast<size_t>(issued % pp)].push_back(issued);
  }
  // KV blocks free now, and blocks coming back at later times (a request's end).
  int64_t free_blocks = memory.kv_blocks;
  using Release = std::pair<double, int64_t>;
  std::priority_queue<Release, std::vector<Release>, std::greater<>> releases;
  std::vector<std::vector<int64_t>> running(static_cast<size_t>(pp));
  std::vector<double> ready(static_cast<size_t>(pp), 0.0);
  double pipe_free = 0;
  int64_t done = 0, iterations = 0, in_system = 0;
  double kv_tokens = 0;
  double batch_sum = 0;
  int64_t batch_count = 0;
  StepTime sum_t;
  std::vector<int64_t> chunked;  // per iteration: request ids with a prompt chunk
  std::vector<int64_t> chunk_len;
  while (done < n) {
    if (++iterations > kMaxIterations)
      throw LimitError(fmt::format("serving simulation passed {} iterations", kMaxIterations));
    const size_t g =
        static_cast<size_t>(std::min_element(ready.begin(), ready.end()) - ready.begin());
    double now = ready[g];
    while (!releases.empty() && releases.top().first <= now) {
      free_blocks += releases.top().second;
      releases.pop();
    }
    // Admit the group's arrived requests in order while blocks and max_num_seqs allow.
    std::deque<int64_t>& waiting = queues[g];
    while (!waiting.empty()) {
      Request& r = req[static_cast<size_t>(waiting.front())];
      if (r.arrival > now || r.blocks > free_blocks || in_system >= memory.max_batch) break;
      free_blocks -= r.blocks;
      r.admitted = now;
      running[g].push_back(waiting.front());
      waiting.pop_front();
      ++in_system;
      kv_tokens += static_cast<double>(r.input + r.output);
    }
    m.peak_kv_tokens = std::max(m.peak_kv_tokens, kv_tokens);
    // Compose the iteration: decodes first, then prompt chunks in the token budget left.
    StepBatch b;
    chunked.clear();
    chunk_len.clear();
    int64_t budget = st.max_num_batched_tokens;
    bool any_prefill = false;
    for (int64_t id : running[g])
      any_prefill |= req[static_cast<size_t>(id)].prefilled < req[static_cast<size_t>(id)].input;
    const bool prefill_only = !st.mixed_batches && any_prefill;
    if (!prefill_only)
      for (int64_t id : running[g]) {
        const Request& r = req[static_cast<size_t>(id)];
        if (r.prefilled < r.input) continue;
        ++b.decode_seqs;
        b.decode_context_tokens += static_cast<double>(r.input + r.generated);
        --budget;
      }
    for (int64_t id : running[g]) {
      const Request& r = req[static_cast<size_t>(id)];
      const int64_t left = r.input - r.prefilled;
      if (left <= 0 || budget <= 0) continue;
      if (!st.chunked_prefill && left > budget && !chunked.empty()) break;
      const int64_t c = st.chunked_prefill ? std::min(left, budget) : left;
      chunked.push_back(id);
      chunk_len.push_back(c);
      b.prefill_tokens += c;
      ++b.prefill_seqs;
      b.prefill_attention_pairs += static_cast<double>(c) * (r.prefilled + c / 2.0);
      if (c == left) ++b.logits_seqs;
      budget -= c;
    }
    b.logits_seqs += b.decode_seqs;
    if (b.tokens() == 0) {  // nothing to run: wait for the next arrival or release
      double next = std::numeric_limits<double>::infinity();
      if (!waiting.empty()) next = std::max(now, req[static_cast<size_t>(waiting.front())].arrival);
      if (!releases.empty()) next = std::min(next, std::max(now, releases.top().first));
      for (size_t k = 0; k < ready.size(); ++k)
        if (k != g && !running[k].empty()) next = std::min(next, std::max(now, ready[k]));
      if (!std::isfinite(next))
        throw InternalError("serving simulation: a request can never be admitted");
      ready[g] = next > now ? next : std::nextafter(now, next + 1.0);
      continue;
    }
    const StepTime t = step.time(b);
    const double start = std::max(now, pipe_free);
    pipe_free = start + t.stage_s;
    const double end = start + t.total_s;
    ready[g] = end;
    batch_sum += static_cast<double>(in_system);
    ++batch_count;
    sum_t.gemm_s += t.gemm_s;
    sum_t.attention_s += t.attention_s;
    sum_t.memory_bound_s += t.memory_bound_s;
    sum_t.tp_comm_s += t.tp_comm_s;
    sum_t.ep_comm_s += t.ep_comm_s;
    sum_t.pp_comm_s += t.pp_comm_s;
    sum_t.host_s += t.host_s;
    sum_t.stage_s += std::max(t.total_s, static_cast<double>(pp) * t.stage_s);
    // Outcomes at the iteration's end: a token for every decode and every finished prompt.
    auto emit = [&](Request& r) {
      if (r.first_token < 0) {
        r.first_token = end;
      } else {
        r.gaps.push_back(end - r.last_token);
      }
      r.last_token = end;
      ++r.generated;
    };
    for (size_t k = 0; k < chunked.size(); ++k) {
      Request& r = req[static_cast<size_t>(chunked[k])];
      r.prefilled += chunk_len[k];
      if (r.prefilled == r.input) emit(r);
    }
    if (!prefill_only)
      for (int64_t id : running[g]) {
        Request& r = req[static_cast<size_t>(id)];
        if (r.first_token >= 0 && r.last_token < end && r.generated < r.output) emit(r);
      }
    auto& group = running[g];
    for (size_t k = 0; k < group.size();) {
      Request& r = req[static_cast<size_t>(group[k])];
      if (r.generated < r.output) {
        ++k;
        continue;
      }
      r.done = end;
      releases.push({end, r.blocks});
      kv_tokens -= static_cast<double>(r.input + r.output);
      --in_system;
      ++done;
      if (!open && issued < n) {  // its client sends the next request at once
        req[static_cast<size_t>(issued)].arrival = end;
        queues[g].push_back(issued++);
      }
      group[k] = group.back();
      group.pop_back();
    }
  }
  // Steady state: leave out the first and last `skip` requests (the start-up burst and the
  // drain once clients stop), unless too few remain.
  const int64_t skip = open ? n / 10 : clients;
  const int64_t from = n > 3 * skip ? skip : 0, to = n > 3 * skip ? n - skip : n;
  std::vector<double> ttft, gaps;
  double itl[3] = {0, 0, 0}, e2e = 0, queue = 0, out_tokens = 0, in_tokens = 0;
  int64_t with_gaps = 0;
  for (int64_t i = from; i < to; ++i) {
    const Request& r = req[static_cast<size_t>(i)];
    ttft.push_back(r.first_token - r.arrival);
    e2e += r.done - r.arrival;
    queue += r.admitted - r.arrival;
    out_tokens += static_cast<double>(r.output);
    in_tokens += static_cast<double>(r.input);
    gaps.insert(gaps.end(), r.gaps.begin(), r.gaps.end());
    if (r.gaps.empty()) continue;
    const size_t ng = r.gaps.size(), tenth = std::max<size_t>(1, ng / 10);
    itl[0] += mean_of(r.gaps, 0, tenth);
    const size_t mid = ng / 2 - std::min(ng / 2, tenth / 2);
    itl[1] += mean_of(r.gaps, mid, std::min(ng, mid + tenth));
    itl[2] += mean_of(r.gaps, ng - tenth, ng);
    ++with_gaps;
  }
  const double count = static_cast<double>(to - from);
  m.requests = count;
  m.ttft_s = mean_of(ttft, 0, ttft.size());
  m.ttft_p99_s = percentile(ttft, 0.99);
  m.itl_s = mean_of(gaps, 0, gaps.size());
  m.itl_p99_s = percentile(gaps, 0.99);
  if (with_gaps > 0)
    for (int q = 0; q < 3; ++q)
      (q == 0   ? m.itl_start_s
       : q == 1 ? m.itl_mid_s
                : m.itl_end_s) = itl[q] / static_cast<double>(with_gaps);
  m.e2e_latency_s = e2e / count;
  m.queue_time_s = queue / count;
  // Throughput: the measured requests' work over the span they were in the system, scaled
  // by the mean number in flight over that span (Little: throughput = in flight / E2E).
  const double in_flight = open ? load * m.e2e_latency_s : static_cast<double>(clients);
  m.requests_per_s = open ? load : in_flight / m.e2e_latency_s;
  m.output_tokens_per_s = m.requests_per_s * out_tokens / count;
  m.total_tokens_per_s = m.requests_per_s * (out_tokens + in_tokens) / count;
  // Open loop: the replica keeps up when it finishes the requests about as fast as they
  // come; otherwise the queue grows without bound and no steady state exists.
  double last_done = 0;
  for (const Request& r : req) last_done = std::max(last_done, r.done);
  m.overloaded = open && static_cast<double>(n) / last_done < 0.9 * load;
  if (m.overloaded) {  // the queue grows with the run: report what the replica completes
    m.requests_per_s = static_cast<double>(n) / last_done;
    m.output_tokens_per_s = m.requests_per_s * out_tokens / count;
    m.total_tokens_per_s = m.requests_per_s * (out_tokens + in_tokens) / count;
    m.ttft_s = m.ttft_p99_s = m.itl_s = m.itl_p99_s = m.itl_start_s = m.itl_mid_s = m.itl_end_s =
        m.e2e_latency_s = m.queue_time_s = ReplicaMetrics::kNaN;
  }
  m.running_batch = batch_count > 0 ? batch_sum / batch_count : 0;
  m.decode_step_time_s = std::numeric_limits<double>::quiet_NaN();
  const double it = static_cast<double>(std::max<int64_t>(1, batch_count));
  m.gemm_s = sum_t.gemm_s / it;
  m.attention_s = sum_t.attention_s / it;
  m.memory_bound_s = sum_t.memory_bound_s / it;
  m.tp_comm_s = sum_t.tp_comm_s / it;
  m.ep_comm_s = sum_t.ep_comm_s / it;
  m.pp_comm_s = sum_t.pp_comm_s / it;
  m.host_s = sum_t.host_s / it;
  m.step_s = sum_t.stage_s / it;
  return m;
}

}  // namespace rapid
