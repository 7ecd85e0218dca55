#include "rapid/analytical/unit_pass.hpp"

#include "rapid/common/eval_context.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

namespace rapid {

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

// The links as the two streams use them: the gather stream's current gather and the
// reduction stream's reductions, one after the other, each posted as its unit's compute
// ends; a reduction moves its bytes, then its start-up latency passes (the links are free
// for the gathers meanwhile: src/des/communicator.cpp) before the next one starts.
struct Links {
  struct Reduction {
    double arrival = 0, transfer = 0, latency = 0;
  };
  double t = 0;                  // simulated up to here
  std::vector<Reduction> queue;  // by arrival
  size_t cur = 0;                // the first reduction not done
  double left = 0;               // its transfer left (alone seconds)
  double free_at = 0;            // the reduction stream waits for a latency until then

  void reset(double pending) {
    t = 0;
    queue.clear();
    cur = 0;
    left = 0;
    free_at = 0;
    post({0.0, std::max(0.0, pending), 0.0});
  }
  void post(const Reduction& r) {
    if (r.transfer <= 0) return;
    queue.push_back(r);
    if (queue.size() == cur + 1) left = r.transfer;
  }
  bool reducing() const { return cur < queue.size() && queue[cur].arrival <= t && free_at <= t; }
  // Moves on until the gather's transfer `*gather` is done (none: nullptr) or until `until`:
  // beside a reduction each moves at half its alone speed (one flow each on the shared
  // links, max-min fair).
  void advance(double* gather, double until) {
    while (t < until && (gather == nullptr || *gather > 0)) {
      const bool red = reducing(), gat = gather != nullptr;
      const double slow_r = gat ? 2.0 : 1.0, slow_g = red ? 2.0 : 1.0;
      double next = until;
      int what = 0;  // 0: until, 1: the reduction's transfer ends, 2: the gather's, 3: a start
      if (red && t + left * slow_r < next) next = t + left * slow_r, what = 1;
      if (gat && t + *gather * slow_g < next) next = t + *gather * slow_g, what = 2;
      if (!red && cur < queue.size()) {
        const double start = std::max(queue[cur].arrival, free_at);
        if (start < next) next = start, what = 3;
      }
      const double dt = next - t;
      if (red) left -= dt / slow_r;
      if (gat) *gather -= dt / slow_g;
      t = next;
      if (what == 1) {
        free_at = t + queue[cur].latency;
        left = ++cur < queue.size() ? queue[cur].transfer : 0.0;
      }
      if (what == 2) *gather = 0;
    }
  }
  // Runs one gather of `g` seconds alone from t, its last `lat` its latency (the
  // reductions have the links then).
  void gather(double g, double lat) {
    double transfer = g - lat;
    advance(&transfer, kInf);
    advance(nullptr, t + lat);
  }
  // The reduction seconds (transfers, alone) not done by `when` (no gather left).
  double drain_until(double when) {
    advance(nullptr, when);
    double rest = cur < queue.size() ? left : 0.0;
    for (size_t q = cur + 1; q < queue.size(); ++q) rest += queue[q].transfer;
    return rest;
  }
  // An upper bound of the time from t until every reduction posted is done: all of them
  // one after the other, alone.
  double queued() const {
    double q = std::max(0.0, free_at - t);
    for (size_t k = cur; k < queue.size(); ++k)
      q += (k == cur ? left : queue[k].transfer) + queue[k].latency;
    return q;
  }
  // Every reduction done by `when`, the links idle from then (no gather left).
  void idle_at(double when) {
    t = when;
    free_at = when;
    queue.clear();
    cur = 0;
    left = 0;
  }
  // What the periodic regime compares: the reductions not done (at most two), relative to t.
  struct State {
    size_t outstanding = 0;
    double left = 0, wait = 0, lead[2] = {0, 0}, transfer[2] = {0, 0};
  };
  State state() const {
    State s;
    s.outstanding = queue.size() - cur;
    s.left = cur < queue.size() ? left : 0.0;
    s.wait = std::max(0.0, free_at - t);
    for (size_t k = 0; k < 2 && cur + k < queue.size(); ++k) {
      s.lead[k] = std::max(0.0, queue[cur + k].arrival - t);
      s.transfer[k] = queue[cur + k].transfer;
    }
    return s;
  }
  void shift(double by) {
    t += by;
    free_at += by;
    for (size_t k = cur; k < queue.size(); ++k) queue[k].arrival += by;
  }
};

bool same(double a, double b) {
  return std::fabs(a - b) <= 1e-12 * std::max({1.0, std::fabs(a), std::fabs(b)});
}

bool same(const Links::State& a, const Links::State& b) {
  return a.outstanding == b.outstanding && a.outstanding <= 2 && same(a.left, b.left) &&
         same(a.wait, b.wait) && same(a.lead[0], b.lead[0]) && same(a.lead[1], b.lead[1]) &&
         same(a.transfer[0], b.transfer[0]) && same(a.transfer[1], b.transfer[1]);
}

UnitPass run(const UnitRun* runs, size_t n, bool backward, double pending, bool extrapolate) {
  Links& links = EvalContext::current().get<Links>();  // the thread's, reused
  links.reset(pending);
  double end = 0, computed = 0;  // the compute stream: its last unit's end, its work
  size_t last_run = n;           // the last run with units
  while (last_run > 0 && runs[last_run - 1].count <= 0) --last_run;
  double gathers_left = 0;  // alone, the units' not gathered yet
  for (size_t i = 0; i < n; ++i) gathers_left += std::round(runs[i].count) * runs[i].gather_s;
  // The rest of a backward from unit k of run i on with no gather left to meet: its compute
  // and the reduction stream alone.
  auto reductions_only = [&](size_t i, int64_t k) {
    for (size_t r = i; r < n; ++r) {
      const UnitRun& u = runs[r];
      const auto count = static_cast<int64_t>(std::llround(u.count));
      for (int64_t j = r == i ? k : 0; j < count; ++j) {
        if (r != i || j != k) {
          end += u.compute_s;
          computed += u.compute_s;
          links.advance(nullptr, end);
        }
        links.post({end, u.reduce_s, std::max(0.0, u.reduce_latency_s)});
      }
    }
    UnitPass out;
    out.exposed = std::max(0.0, end - computed);
    out.trailing = links.drain_until(end);
    return out;
  };
  for (size_t i = 0; i < n; ++i) {
    const UnitRun& u = runs[i];
    const auto count = static_cast<int64_t>(std::llround(u.count));
    const double reduce_lat = std::max(0.0, u.reduce_latency_s);
    double prev_end = 0, prev_t = 0, d_end = -1, d_t = -1;
    Links::State prev;
    for (int64_t k = 0; k < count; ++k) {
      links.gather(u.gather_s, std::clamp(u.gather_latency_s, 0.0, u.gather_s));
      end = std::max(end, links.t) + u.compute_s;
      computed += u.compute_s;
      gathers_left -= u.gather_s;
      // Every gather left and every reduction queued done by this unit's end even one
      // after the other (the links are work-conserving; latencies counted as work): no
      // later unit waits for its gather, no gather meets a later reduction.
      if (extrapolate && backward && k + 1 < count &&
          links.t + gathers_left + links.queued() <= end) {
        links.idle_at(end);
        return reductions_only(i, k);
      }
      if (backward) links.post({end, u.reduce_s, reduce_lat});
      // The pass's last run, compute-bound (g + r + its latency <= c) with the gathers
      // ahead: the next gather and all the reduction work queued fit before this unit ends.
      // Then every later unit finds its gather done (each unit brings g + r of link work
      // and c of compute) and all but the last unit's reduction are done by the pass's end.
      if (extrapolate && i + 1 == last_run && k + 1 < count &&
          u.gather_s + u.reduce_s + reduce_lat <= u.compute_s &&
          links.t + u.gather_s + links.queued() <= end) {
        const double rest = static_cast<double>(count - k - 1);
        end += rest * u.compute_s;
        computed += rest * u.compute_s;
        UnitPass out;
        out.exposed = std::max(0.0, end - computed);
        out.trailing = backward ? u.reduce_s : 0.0;
        return out;
      }
      // Periodic: the compute stream and the links moved on by the same time as for the
      // unit before, with the same reductions outstanding at the same distances: the
      // run's other units repeat it.
      const double de = end - prev_end, dt = links.t - prev_t;
      const Links::State now = links.state();
      if (extrapolate && k >= 2 && k + 1 < count && same(de, d_end) && same(dt, d_t) &&
          same(de, dt) && same(now, prev)) {
        const double rest = static_cast<double>(count - k - 1);
        end += rest * de;
        links.shift(rest * de);
        computed += rest * u.compute_s;
        break;
      }
      d_end = de;
      d_t = dt;
      prev_end = end;
      prev_t = links.t;
      prev = now;
    }
  }
  UnitPass out;
  out.exposed = std::max(0.0, end - computed);
  out.trailing = links.drain_until(std::max(end, links.t));
  return out;
}

// A forward pass, in closed form: no reductions arrive, the gathers run one after the
// other from the start beside the pending reduction B. A gather of a alone (transfer) plus
// l (latency) takes 2 min(a, B') + (a - min(a, B')) + l with B' the reduction left: B
// drains at half speed beside the transfers and alone during the latencies, a + l per
// gather. So within a run with B_r left at its start, with q = floor(B_r / (a + l)) and
// the rest r = B_r - q (a + l), the first n gathers are delayed by d(n) = min(n a, q a +
// min(a, r)). Unit k ends at E_k = max(E_{k-1}, G_k) + c_k with G_k its gather's end, so
// the pass waits max_k (G_k - C_{<k}), C_{<k} the compute before unit k: linear in k
// within a run but for the step from n = q to n = q + 1; its ends and that step decide.
UnitPass forward_pass(const UnitRun* runs, size_t n, double pending) {
  double left = std::max(0.0, pending);  // B not drained yet
  double gathered = 0, delayed = 0, computed = 0, exposed = 0;
  for (size_t i = 0; i < n; ++i) {
    const UnitRun& u = runs[i];
    if (u.count <= 0) continue;
    const double units = std::round(u.count), last = units - 1.0;
    const double l = std::clamp(u.gather_latency_s, 0.0, u.gather_s), a = u.gather_s - l;
    const double q = u.gather_s > 0 ? std::floor(left / u.gather_s) : kInf;
    const double cap = q * a + std::min(a, left - q * u.gather_s);
    auto delay = [&](double done) { return u.gather_s > 0 ? std::min(done * a, cap) : 0.0; };
    auto at = [&](double j) {
      return gathered + (j + 1.0) * u.gather_s + delayed + delay(j + 1.0) - computed -
             j * u.compute_s;
    };
    exposed = std::max({exposed, at(0.0), at(last)});
    for (double j : {q - 1.0, q})
      if (j > 0 && j < last) exposed = std::max(exposed, at(j));
    delayed += delay(units);
    left -= std::min(left, units * u.gather_s);
    gathered += units * u.gather_s;
    computed += units * u.compute_s;
  }
  UnitPass out;
  out.exposed = exposed;
  // B drained beside the gathers and alone after them until the end.
  const double gathers_end = gathered + delayed;
  const double end = computed + exposed;
  out.trailing = std::max(0.0, left - std::max(0.0, end - gathers_end));
  return out;
}

}  // namespace

UnitPass unit_pass(const UnitRun* runs, size_t n, bool backward, double pending) {
  if (!backward) return forward_pass(runs, n, pending);
  return run(runs, n, backward, pending, true);
}

UnitPass unit_pass_exhaustive(const UnitRun* runs, size_t n, bool backward, double pending) {
  return run(runs, n, backward, pending, false);
}

}  // namespace rapid
