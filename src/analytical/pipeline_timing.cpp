#include "rapid/analytical/pipeline_timing.hpp"

#include "rapid/common/eval_context.hpp"
#include "rapid/common/fnv1a.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>

#include "rapid/analytical/pipeline_program.hpp"
#include "rapid/common/error.hpp"
#include "rapid/workload/schedule.hpp"

namespace rapid {

PipelineTimes simulate_pipeline(const PipelineInput& in) {
  const int64_t pp = in.pp, vpp = in.vpp, m = in.m, P = pp * vpp;
  constexpr double kNone = -1.0;
  // arrival[(dir * P + q) * m + mb]: when the input of pass (dir, virtual stage q, mb) is
  // on its device (forward q = chunk * pp + device). The schedule depends on (pp, vpp, m)
  // only: built once per thread for a run of points with the same shape.
  struct Simulated {  // in the thread's evaluation context (eval_context.hpp)
    std::vector<double> arrival;
    std::vector<std::vector<PassRef>> order;
    int64_t key[3] = {0, 0, 0};
    std::vector<size_t> next;
    std::vector<double> clock;
  };
  auto& [arrival, order, key, next, clock] = EvalContext::current().get<Simulated>();
  arrival.assign(static_cast<size_t>(2 * P * m), kNone);
  if (key[0] != pp || key[1] != vpp || key[2] != m) {
    order.resize(static_cast<size_t>(pp));
    for (int64_t j = 0; j < pp; ++j)
      pipeline_schedule(pp, vpp, m, j, order[static_cast<size_t>(j)]);
    key[0] = pp;
    key[1] = vpp;
    key[2] = m;
  }
  next.assign(static_cast<size_t>(pp), 0);
  clock.assign(static_cast<size_t>(pp), 0.0);
  PipelineTimes out;
  out.busy.assign(static_cast<size_t>(pp), 0.0);
  out.end.assign(static_cast<size_t>(pp), 0.0);
  auto slot = [&](int dir, int64_t q, int64_t mb) {
    return static_cast<size_t>((dir * P + q) * m + mb);
  };
  size_t left = 0;
  for (int64_t j = 0; j < pp; ++j) left += order[static_cast<size_t>(j)].size();
  while (left > 0) {
    bool progress = false;
    for (int64_t j = 0; j < pp; ++j) {
      auto& o = order[static_cast<size_t>(j)];
      size_t& k = next[static_cast<size_t>(j)];
      while (k < o.size()) {
        const PassRef& p = o[k];
        const bool fwd = p.dir == PassDir::Forward;
        const int64_t q = p.chunk * pp + j;
        double ready = clock[static_cast<size_t>(j)];
        // Every pass but the first virtual stage's forward waits for its input (the last
        // virtual stage's backward for its own forward's loss).
        if (!fwd || q > 0) {
          const double a = arrival[slot(fwd ? 0 : 1, q, p.mb)];
          if (a < 0) break;
          ready = std::max(ready, a);
        }
        const double d = fwd ? in.f(j, p.chunk) : in.b(j, p.chunk);
        const double end = ready + d;
        double free_at = end;
        if (fwd) {
          if (q + 1 < P) {
            free_at = end + in.p2p_s;
            arrival[slot(0, q + 1, p.mb)] = free_at;
          } else {
            arrival[slot(1, q, p.mb)] = end;  // the loss: backward starts on this device
          }
        } else if (q > 0) {
          free_at = end + in.p2p_s;
          arrival[slot(1, q - 1, p.mb)] = free_at;
        }
        out.busy[static_cast<size_t>(j)] += free_at - ready;
        out.end[static_cast<size_t>(j)] = end;
        clock[static_cast<size_t>(j)] = free_at;
        out.makespan = std::max(out.makespan, end);
        ++k;
        --left;
        progress = true;
      }
    }
    RAPID_ASSERT(progress, "pipeline schedule without a deadlock");
  }
  return out;
}

}  // namespace rapid

namespace rapid {

namespace {

// A device's busy time over the step: every pass and the sends it waits for (no send
// after the last virtual stage's forward or the first one's backward).
double device_busy(const PipelineInput& in, int64_t j) {
  const int64_t pp = in.pp, vpp = in.vpp;
  double busy = 0;
  for (int64_t c = 0; c < vpp; ++c) {
    const bool last = j == pp - 1 && c == vpp - 1, first = j == 0 && c == 0;
    busy += in.f(j, c) + (last ? 0.0 : in.p2p_s) + in.b(j, c) + (first ? 0.0 : in.p2p_s);
  }
  return busy * static_cast<double>(in.m);
}

// Interleaved: do all devices run the same chunk times (but for the first device's first
// chunk and the last device's last)? The closed form's round trip assumes it: with one
// device slower the interleaved schedule's steady state idles around it (tests:
// pipeline_timing_test.cpp, up to 7% over the walk with one device 25% slower).
// Alike within 3% of a chunk's forward + backward: the closed form's error grows with the
// difference (6.6% at 25%): at 3% (a device carrying the embedding or the head's DP
// traffic) it is within 3.6% of the walk at m = pp, 2.1% at m = 2 pp (pipeline_timing_test).
constexpr double kAlike = 0.03;

bool devices_alike(const PipelineInput& in) {
  const int64_t pp = in.pp, vpp = in.vpp;
  const int64_t rj = pp > 2 ? 1 : 0, rc = pp > 2 ? 0 : 1;  // a chunk without extras
  const double f = in.f(rj, rc), b = in.b(rj, rc), tol = kAlike * (f + b);
  for (int64_t j = 0; j < pp; ++j)
    for (int64_t c = 0; c < vpp; ++c) {
      if ((j == 0 && c == 0) || (j == pp - 1 && c == vpp - 1)) continue;
      if (std::abs(in.f(j, c) + in.b(j, c) - f - b) > tol) return false;
    }
  return true;
}

// 1F1B: device j's idle time between its first and last pass, R the round trip of a
// micro-batch through the devices after it, f and b its forward and backward with their
// sends. Megatron's schedule runs w = min(pp - j - 1, m) warm-up forwards, then 1F1B pairs,
// then w cool-down backwards (schedules.py). With two pairs or more (m >= w + 2) the
// device's first backward and its last forward's round trip are in different places: the
// first waits R beyond the w forwards run meanwhile, the last R beyond the w backwards
// (max(0, R - w f) + max(0, R - w b)). With fewer (m <= pp - j) every forward comes before
// the first backward: one wait covers both round trips. The first backward cannot start
// before f + R after the first forward starts and the last before the last forward ends
// plus R, with the m - 1 other forwards (backwards) of the device in between; the larger
// of the two is the idle time. The step is the largest device's bound: in a uniform
// pipeline the last device's, (pp - 1) f + m (f + b) + (pp - 1) b = (m + pp - 1)(f + b) for
// every m, as GPipe's (Huang et al. 2019, sec. 2.3), where the double wait gave device 0
// (2 pp - 2 - m)(f + b) of idle time.
double one_f_one_b_idle(double R, double f, double b, int64_t later_devices, int64_t m) {
  const int64_t w = std::min(later_devices, m);
  if (m >= w + 2)
    return std::max(0.0, R - static_cast<double>(w) * f) +
           std::max(0.0, R - static_cast<double>(w) * b);
  const double others = static_cast<double>(m - 1);
  return std::max({0.0, R - others * f, R - others * b});
}

bool same_bits(const std::vector<double>& a, const std::vector<double>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(double)) == 0;
}

// The walk, compiled for the schedule's shape (pipeline_program.hpp): the same numbers.
// Layouts that differ only where the pipeline does not see it (ZeRO 0 and 1: no traffic per
// micro-batch) give the same pass times bit for bit: their walk is not run again. The
// thread's walks are kept in a two-way table hashed on their inputs' bits: the points of
// ZeRO 0 and 1 of one layout and hardware variant come 6 x variants points apart (the
// recompute options and variants are the innermost axes).
struct Walked {
  uint64_t hash = 0, used = 0;  // used 0: empty
  PipelineInput in;
  PipelineTimes out;
};
struct WalkMemo {  // in the thread's evaluation context (eval_context.hpp)
  std::vector<std::array<Walked, 2>> walked;
  uint64_t tick = 0;
};

void walk(const PipelineInput& in, PipelineTimes& out) {
  if (!PipelineProgram::runnable(in)) {
    out = simulate_pipeline(in);
    return;
  }
  constexpr size_t kSets = 512;
  auto& [walked, tick] = EvalContext::current().get<WalkMemo>();
  if (walked.empty()) walked.resize(kSets);
  uint64_t h = kFnvOffsetBasis;
  auto mix = [&h](const void* p, size_t n) {
    const auto* b = static_cast<const unsigned char*>(p);
    for (size_t i = 0; i < n; i += 8) {
      uint64_t v = 0;
      std::memcpy(&v, b + i, std::min<size_t>(8, n - i));
      h = fnv1a(h, v);
    }
  };
  const int64_t shape[3] = {in.pp, in.vpp, in.m};
  mix(shape, sizeof shape);
  mix(&in.p2p_s, sizeof(double));
  mix(in.fwd.data(), in.fwd.size() * sizeof(double));
  mix(in.bwd.data(), in.bwd.size() * sizeof(double));
  std::array<Walked, 2>& set = walked[(h ^ (h >> 31)) % kSets];
  for (Walked& w : set)
    if (w.used && w.hash == h && w.in.pp == in.pp && w.in.vpp == in.vpp && w.in.m == in.m &&
        std::memcmp(&w.in.p2p_s, &in.p2p_s, sizeof(double)) == 0 && same_bits(w.in.fwd, in.fwd) &&
        same_bits(w.in.bwd, in.bwd)) {
      w.used = ++tick;
      out = w.out;
      return;
    }
  PipelineProgram::walk(in, out);
  Walked& w = set[0].used <= set[1].used ? set[0] : set[1];
  w.hash = h;
  w.used = ++tick;
  w.in = in;
  w.out = out;
}

}  // namespace

PipelineTimes pipeline_timing(const PipelineInput& in) {
  PipelineTimes out;
  pipeline_timing(in, out);
  return out;
}

void pipeline_timing(const PipelineInput& in, PipelineTimes& out) {
  if (in.vpp > 1 && !devices_alike(in)) {
    walk(in, out);
    return;
  }
  const int64_t pp = in.pp, vpp = in.vpp, m = in.m;
  const double d = in.p2p_s;
  out.makespan = 0;
  out.busy.assign(static_cast<size_t>(pp), 0.0);
  out.end.assign(static_cast<size_t>(pp), 0.0);
  // Before device j's first pass: the first micro-batch's forward through the devices
  // before it (chunk 0); after its last: the last backward's drain through them.
  double S = 0, E = 0;
  // Round trip of a micro-batch through the devices after j (below), as suffix sums.
  struct AfterSite;  // this call's buffer, in the thread's evaluation context
  std::vector<double>& after = EvalContext::current().buffer<AfterSite, std::vector<double>>();
  after.assign(static_cast<size_t>(pp) + 1, 0.0);
  for (int64_t i = pp - 1; i >= 0; --i) {
    double unit = 0;
    for (int64_t c = 0; c < vpp; ++c)
      unit += (in.f(i, c) + in.b(i, c) + 2.0 * d) / static_cast<double>(vpp);
    after[static_cast<size_t>(i)] = after[static_cast<size_t>(i) + 1] + unit;
  }
  for (int64_t j = 0; j < pp; ++j) {
    const double busy = device_busy(in, j);
    out.busy[static_cast<size_t>(j)] = busy;
    // Idle between its first and last pass: the round trip R of a micro-batch through the
    // devices after it. 1F1B: before its first backward it runs w = pp - j - 1 more
    // forwards, so it waits max(0, R - w f); at the end it runs w backwards while the last
    // micro-batch makes the round trip: max(0, R - w b). Interleaved (alike devices):
    // the round trip through the later devices, one chunk unit each, exposed once (the
    // warm-up keeps the device busy meanwhile in the other chunks; Narayanan et al. 2021,
    // sec. 2.2.1: bubble (pp - 1) / vpp of a stage's work per micro-batch).
    const double R = after[static_cast<size_t>(j) + 1];
    double idle = R;
    if (vpp == 1) {
      const double fj = in.f(j, 0) + (j == pp - 1 ? 0.0 : d), bj = in.b(j, 0) + (j == 0 ? 0.0 : d);
      idle = one_f_one_b_idle(R, fj, bj, pp - j - 1, m);
    }
    out.end[static_cast<size_t>(j)] = E;  // drain after its last pass (below)
    out.makespan = std::max(out.makespan, S + busy + idle + E);
    S += in.f(j, 0) + d;
    E += in.b(j, 0) + d;
  }
  // The last backward (chunk 0) drains through devices j-1 .. 0: device j ends that much
  // before the step's last pass.
  for (double& e : out.end) e = out.makespan - e;
}

}  // namespace rapid
