#include "rapid/inference/serving_des.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <deque>
#include <limits>
#include <queue>
#include <random>
#include <vector>

#include "rapid/common/error.hpp"
#include "rapid/common/percentiles.hpp"

namespace rapid {

namespace {

constexpr int64_t kMaxIterations = 50'000'000;
constexpr int64_t kMaxOpenRequests = 1 << 16;  // longest open-loop run, in requests
constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

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

double mean_of(const std::vector<double>& v, size_t from, size_t to) {
  if (to <= from) return kNaN;
  double s = 0;
  for (size_t i = from; i < to; ++i) s += v[i];
  return s / static_cast<double>(to - from);
}

struct Request {
  int64_t input = 0, output = 0;
  double arrival = 0, admitted = -1, first_token = -1, last_token = -1, done = -1;
  int64_t prefilled = 0, generated = 0;
  int64_t blocks = 0;
  std::vector<double> gaps;  // between consecutive output tokens
};

/// What a request gives back when it ends: its blocks, its slot and its tokens.
struct Release {
  double time;
  int64_t blocks;
  double tokens;
  bool operator>(const Release& o) const { return time > o.time; }
};

/// The iterations that started while the first k requests had arrived (bucket k): summed,
/// so that the steady state's window (in requests, known after the run) selects them
/// without keeping every iteration (storing them cost 40% of a run in fresh pages).
struct IterationSums {
  double count = 0;
  double in_system = 0;
  double period = 0;  // max(latency through the stages, pp x slowest stage)
  StepTime time;
};

class Simulation {
 public:
  Simulation(const StepModel& step, const ServingSpec& s, const ServingMemory& memory, int64_t pp,
             double load, uint64_t stream, int64_t requests)
      : step_(step),
        st_(s.stack),
        memory_(memory),
        pp_(pp),
        load_(load),
        open_(s.load_kind == LoadKind::ArrivalRate),
        whole_(s.metrics_window == MetricsWindow::All),
        clients_(open_ ? 0 : std::max<int64_t>(1, std::llround(load))),
        n_(requests),
        queues_(static_cast<size_t>(pp)),
        running_(static_cast<size_t>(pp)),
        ready_(static_cast<size_t>(pp), 0.0),
        free_blocks_(memory.kv_blocks),
        buckets_(static_cast<size_t>(requests) + 1) {
    std::mt19937_64 rng(s.seed * 0x9E3779B97F4A7C15ull + stream);
    req_.resize(static_cast<size_t>(n_));
    for (Request& r : req_) {
      r.input = draw(s.input_tokens, rng);
      r.output = std::max<int64_t>(1, draw(s.output_tokens, rng));
      r.blocks = (r.input + r.output + st_.kv_block_tokens - 1) / st_.kv_block_tokens;
    }
    // Each pipeline group (vLLM's virtual engine) schedules its own requests: request k goes
    // to group k mod pp, a client's next request to its last one's group.
    if (open_) {
      double t = 0;
      std::exponential_distribution<double> gap(load);
      for (; issued_ < n_; ++issued_) {
        t += gap(rng);
        req_[static_cast<size_t>(issued_)].arrival = t;
        queues_[static_cast<size_t>(issued_ % pp)].push_back(issued_);
      }
    } else {
      for (; issued_ < std::min(clients_, n_); ++issued_) {
        req_[static_cast<size_t>(issued_)].arrival = st_.frontend_latency_s;
        queues_[static_cast<size_t>(issued_ % pp)].push_back(issued_);
      }
    }
  }

  void run() {
    int64_t iterations = 0;
    while (done_ < n_) {
      if (++iterations > kMaxIterations)
        throw LimitError(fmt::format("serving simulation passed {} iterations", kMaxIterations));
      const size_t g =
          static_cast<size_t>(std::min_element(ready_.begin(), ready_.end()) - ready_.begin());
      const double now = ready_[g];
      if (!std::isfinite(now))
        throw InternalError("serving simulation: requests left that no group can run");
      apply_releases(now);
      admit(g, now);
      StepBatch b = compose(g);
      if (b.tokens() == 0) {
        ready_[g] = idle_until(g, now);
        continue;
      }
      const StepTime t = step_.time(b);
      const double start = std::max(now, pipe_free_);
      pipe_free_ = start + t.stage_s;
      const double end = start + t.total_s;
      ready_[g] = end;
      while (arrived_ < issued_ && req_[static_cast<size_t>(arrived_)].arrival <= start) ++arrived_;
      IterationSums& bucket = buckets_[static_cast<size_t>(arrived_)];
      bucket.count += 1;
      bucket.in_system += static_cast<double>(in_system_);
      bucket.period += std::max(t.total_s, static_cast<double>(pp_) * t.stage_s);
      bucket.time.add(t);
      finish_iteration(g, end);
    }
  }

  /// Metrics over the steady state: requests `skip` to n - skip (and the iterations that
  /// start while they arrive); under MetricsWindow::All every request, with the throughput
  /// over the run (first arrival to last token), as a benchmark client reports it.
  ReplicaMetrics metrics(int64_t skip) const;
  /// Mean arrival-to-last-token time over every request.
  double mean_e2e() const {
    double sum = 0;
    for (const Request& r : req_) sum += r.done - r.arrival;
    return sum / static_cast<double>(n_);
  }

 private:
  void apply_releases(double now) {
    while (!releases_.empty() && releases_.top().time <= now) {
      free_blocks_ += releases_.top().blocks;
      kv_tokens_ -= releases_.top().tokens;
      --in_system_;
      releases_.pop();
    }
  }

  /// The group's arrived requests, in order, while KV blocks for their whole length and
  /// max_num_seqs (the memory model's largest batch) allow.
  void admit(size_t g, double now) {
    std::deque<int64_t>& waiting = queues_[g];
    while (!waiting.empty()) {
      Request& r = req_[static_cast<size_t>(waiting.front())];
      if (r.arrival > now || r.blocks > free_blocks_ || in_system_ >= memory_.max_batch) break;
      free_blocks_ -= r.blocks;
      r.admitted = now;
      running_[g].push_back(waiting.front());
      waiting.pop_front();
      ++in_system_;
      kv_tokens_ += static_cast<double>(r.input + r.output);
    }
    peak_kv_tokens_ = std::max(peak_kv_tokens_, kv_tokens_);
  }

  /// The iteration of group g: decodes first, then prompt chunks in the token budget left
  /// (or prompts alone, without mixed batches).
  StepBatch compose(size_t g) {
    StepBatch b;
    chunked_.clear();
    chunk_len_.clear();
    int64_t budget = st_.max_num_batched_tokens;
    bool any_prefill = false;
    for (int64_t id : running_[g]) {
      const Request& r = req_[static_cast<size_t>(id)];
      any_prefill |= r.prefilled < r.input;
    }
    prefill_only_ = !st_.mixed_batches && any_prefill;
    if (!prefill_only_)
      for (int64_t id : running_[g]) {
        const Request& r = req_[static_cast<size_t>(id)];
        if (r.prefilled < r.input) continue;
        ++b.decode_seqs;
        b.decode_context_tokens += static_cast<double>(r.input + r.generated);
        --budget;
      }
    for (int64_t id : running_[g]) {
      const Request& r = req_[static_cast<size_t>(id)];
      const int64_t left = r.input - r.prefilled;
      if (left <= 0 || budget <= 0) continue;
      if (!st_.chunked_prefill && left > budget && !chunked_.empty()) break;
      const int64_t c = st_.chunked_prefill ? std::min(left, budget) : left;
      chunked_.push_back(id);
      chunk_len_.push_back(c);
      b.prefill_tokens += c;
      ++b.prefill_seqs;
      b.prefill_attention_pairs += static_cast<double>(c) * (r.prefilled + c / 2.0);
      if (c == left) ++b.logits_seqs;
      budget -= c;
    }
    b.logits_seqs += b.decode_seqs;
    return b;
  }

  /// When a group with nothing to run looks again: its next request's arrival, or, when
  /// that request has arrived but no room is free, the next release or the next iteration
  /// of another group (which may finish requests); never when it has no request left (a
  /// closed-loop group whose clients are done, an open-loop group whose queue is empty).
  double idle_until(size_t g, double now) const {
    const std::deque<int64_t>& waiting = queues_[g];
    if (waiting.empty()) return kInf;
    const double arrival = req_[static_cast<size_t>(waiting.front())].arrival;
    if (arrival > now) return arrival;
    double next = releases_.empty() ? kInf : releases_.top().time;
    for (size_t h = 0; h < running_.size(); ++h)
      if (h != g && !running_[h].empty()) next = std::min(next, ready_[h]);
    if (!std::isfinite(next))
      throw InternalError("serving simulation: a request waits for room no request will free");
    // Strictly later: a group ready at the same time runs first (ties go to the lowest).
    return std::max(next, std::nextafter(now, kInf));
  }

  /// Outcomes at the iteration's end: a token for every decode and every finished prompt;
  /// finished requests give their room back at `end` and their clients send the next.
  void finish_iteration(size_t g, double end) {
    auto emit = [&](Request& r) {
      if (r.first_token < 0)
        r.first_token = end;
      else
        r.gaps.push_back(end - r.last_token);
      r.last_token = end;
      ++r.generated;
    };
    for (size_t k = 0; k < chunked_.size(); ++k) {
      Request& r = req_[static_cast<size_t>(chunked_[k])];
      r.prefilled += chunk_len_[k];
      if (r.prefilled == r.input) emit(r);
    }
    if (!prefill_only_)
      for (int64_t id : running_[g]) {
        Request& r = req_[static_cast<size_t>(id)];
        if (r.first_token >= 0 && r.last_token < end && r.generated < r.output) emit(r);
      }
    std::vector<int64_t>& group = running_[g];
    for (size_t k = 0; k < group.size();) {
      Request& r = req_[static_cast<size_t>(group[k])];
      if (r.generated < r.output) {
        ++k;
        continue;
      }
      r.done = end;
      releases_.push({end, r.blocks, static_cast<double>(r.input + r.output)});
      ++done_;
      if (!open_ && issued_ < n_) {  // its client sends the next request at once: the
        // engine sees it after the front end's time
        req_[static_cast<size_t>(issued_)].arrival = end + st_.frontend_latency_s;
        queues_[g].push_back(issued_++);
      }
      group[k] = group.back();
      group.pop_back();
    }
  }

  const StepModel& step_;
  const ServingStack& st_;
  const ServingMemory& memory_;
  const int64_t pp_;
  const double load_;
  const bool open_;
  const bool whole_;  // metrics over every request (MetricsWindow::All)
  const int64_t clients_, n_;
  std::vector<Request> req_;
  int64_t issued_ = 0, done_ = 0, in_system_ = 0;
  std::vector<std::deque<int64_t>> queues_;
  std::vector<std::vector<int64_t>> running_;
  std::vector<double> ready_;
  std::priority_queue<Release, std::vector<Release>, std::greater<>> releases_;
  int64_t free_blocks_;
  double kv_tokens_ = 0, peak_kv_tokens_ = 0, pipe_free_ = 0;
  std::vector<IterationSums> buckets_;  // by requests arrived when the iteration starts
  int64_t arrived_ = 0;
  std::vector<int64_t> chunked_, chunk_len_;  // the iteration's prompt chunks
  bool prefill_only_ = false;
};

ReplicaMetrics Simulation::metrics(int64_t skip) const {
  ReplicaMetrics m;
  if (whole_) skip = 0;
  const int64_t from = n_ > 3 * skip ? skip : 0, to = n_ > 3 * skip ? n_ - skip : n_;
  const double t_lo = req_[static_cast<size_t>(from)].arrival;
  const double t_hi = req_[static_cast<size_t>(to - 1)].arrival;
  std::vector<double> ttft, gaps, queue, e2es;
  double itl[3] = {0, 0, 0}, out_tokens = 0, in_tokens = 0;
  int64_t with_gaps = 0;
  for (int64_t i = from; i < to; ++i) {
    const Request& r = req_[static_cast<size_t>(i)];
    // As a client sees them: the front end's time before the engine (docs/inference.md).
    ttft.push_back(st_.frontend_latency_s + r.first_token - r.arrival);
    e2es.push_back(st_.frontend_latency_s + r.done - r.arrival);
    queue.push_back(r.admitted - r.arrival);
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
  m.ttft_s = mean_of(ttft, 0, ttft.size());
  m.itl_s = mean_of(gaps, 0, gaps.size());
  m.e2e_latency_s = mean_of(e2es, 0, e2es.size());
  // The distributions (after the means: sorting reorders their sums).
  const Percentiles t = nearest_rank_percentiles(ttft), g = nearest_rank_percentiles(gaps),
                    e = nearest_rank_percentiles(e2es);
  m.ttft_p50_s = t.p50, m.ttft_p90_s = t.p90, m.ttft_p99_s = t.p99;
  m.itl_p50_s = g.p50, m.itl_p90_s = g.p90, m.itl_p99_s = g.p99;
  m.e2e_p50_s = e.p50, m.e2e_p90_s = e.p90, m.e2e_p99_s = e.p99;
  if (with_gaps > 0) {
    m.itl_start_s = itl[0] / static_cast<double>(with_gaps);
    m.itl_mid_s = itl[1] / static_cast<double>(with_gaps);
    m.itl_end_s = itl[2] / static_cast<double>(with_gaps);
  }
  m.queue_time_s = mean_of(queue, 0, queue.size());
  m.peak_kv_tokens = peak_kv_tokens_;
  // The steady state's iterations: their batch (requests on the replica) and period.
  // (Those that start once request `from` has arrived and before request to - 1 has.)
  StepTime sum;
  double period = 0, in_system = 0, k = 0;
  for (int64_t i = from + 1; i < to; ++i) {
    const IterationSums& b = buckets_[static_cast<size_t>(i)];
    in_system += b.in_system;
    period += b.period;
    sum.add(b.time);
    k += b.count;
  }
  const double iters = std::max(1.0, k);
  m.running_batch = in_system / iters;
  m.step_s = period / iters;
  m.set_classes(sum, 1.0 / iters);
  m.decode_step_time_s = kNaN;
  // Throughput by Little's law: clients / E2E (closed loop), the arrival rate (open loop);
  // over the whole run, the requests over its duration (first arrival to last token).
  m.requests_per_s = open_ ? load_ : static_cast<double>(clients_) / m.e2e_latency_s;
  if (whole_) {
    double end = 0;
    for (const Request& r : req_) end = std::max(end, r.done);
    m.requests_per_s = count / (end - req_.front().arrival);
  }
  if (open_) {
    // Overloaded: over the arrival window (many times the requests in flight long, see
    // serving_simulate) fewer than 90% as many requests finish as arrive.
    int64_t finished = 0;
    for (const Request& r : req_) finished += r.done >= t_lo && r.done <= t_hi ? 1 : 0;
    const double arrived = count - 1;
    if (t_hi > t_lo && finished < 0.9 * arrived) {
      m.overloaded = true;
      m.requests_per_s = static_cast<double>(finished) / (t_hi - t_lo);
      m.ttft_s = m.itl_s = m.itl_start_s = m.itl_mid_s = m.itl_end_s = m.e2e_latency_s =
          m.queue_time_s = kNaN;
      for (double* x : {&m.ttft_p50_s, &m.ttft_p90_s, &m.ttft_p99_s, &m.itl_p50_s, &m.itl_p90_s,
                        &m.itl_p99_s, &m.e2e_p50_s, &m.e2e_p90_s, &m.e2e_p99_s})
        *x = kNaN;
    }
  }
  m.output_tokens_per_s = m.requests_per_s * out_tokens / count;
  m.total_tokens_per_s = m.requests_per_s * (out_tokens + in_tokens) / count;
  return m;
}

}  // namespace

ReplicaMetrics serving_simulate(const StepModel& step, const ServingSpec& serving,
                                const ServingMemory& memory, int64_t pp, double load,
                                uint64_t stream) {
  const bool open = serving.load_kind == LoadKind::ArrivalRate;
  if (!open) {
    // Closed loop: the first c requests arrive together (the start-up burst) and the last c
    // run while clients stop (the drain); at least 2 c more run between them.
    const int64_t clients = std::max<int64_t>(1, std::llround(load));
    Simulation sim(step, serving, memory, pp, load, stream,
                   std::max(serving.num_requests, 4 * clients));
    sim.run();
    return sim.metrics(clients);
  }
  // Open loop: the system fills for about one E2E (lambda x E2E requests in flight), so the
  // start-up left out is twice that and the run at least ten times it; a replica that
  // cannot keep up makes E2E grow with the run, which doubles until kMaxOpenRequests.
  int64_t n = serving.num_requests;
  while (true) {
    Simulation sim(step, serving, memory, pp, load, stream, n);
    sim.run();
    const int64_t warm =
        std::max<int64_t>(n / 10, static_cast<int64_t>(std::ceil(2.0 * load * sim.mean_e2e())));
    if (10 * warm <= n || n >= kMaxOpenRequests) return sim.metrics(std::min(warm, n / 4));
    n = std::min(kMaxOpenRequests, std::max(2 * n, 10 * warm));
  }
}

}  // namespace rapid
