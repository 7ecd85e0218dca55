#include "rapid/analytical/unit_pass.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

namespace rapid {

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

// The links as the two streams use them: the gather stream's current gather, the
// reductions that arrived (a backlog, one after the other on their stream) and the ones
// posted for later (the compute stream posts a unit's reduction as its compute ends).
struct Links {
  double t = 0;                                  // simulated up to here
  double backlog = 0;                            // reduction seconds (alone) arrived and not done
  std::vector<std::pair<double, double>> later;  // (arrival, seconds), by arrival
  size_t next = 0;                               // first of `later` not arrived

  void arrive_until(double when) {
    while (next < later.size() && later[next].first <= when) backlog += later[next++].second;
  }
  // Runs one gather of `g` seconds alone from t: beside a reduction each moves at half its
  // alone speed (one flow each on the shared links, max-min fair).
  void gather(double g) {
    double rem = g;
    while (rem > 0) {
      arrive_until(t);
      const double arrival = next < later.size() ? later[next].first : kInf;
      if (backlog > 0) {
        const double both = 2.0 * std::min(rem, backlog);
        if (both <= arrival - t) {
          t += both;
          rem -= both / 2.0;
          backlog -= both / 2.0;
          if (rem <= 1e-15 * g) rem = 0;
        } else {
          const double dt = arrival - t;
          rem -= dt / 2.0;
          backlog -= dt / 2.0;
          t = arrival;
        }
      } else if (rem <= arrival - t) {
        t += rem;
        rem = 0;
      } else {
        rem -= arrival - t;
        t = arrival;
      }
    }
  }
  // The reductions alone up to `when` (no gather left): what is left then.
  double drain_until(double when) {
    while (t < when) {
      arrive_until(t);
      const double arrival = next < later.size() ? std::min(later[next].first, when) : when;
      backlog = std::max(0.0, backlog - (arrival - t));
      t = arrival;
    }
    arrive_until(when);
    return backlog;
  }
  size_t queued() const { return later.size() - next; }
  void shift_later(double by) {
    for (size_t i = next; i < later.size(); ++i) later[i].first += by;
  }
};

bool same(double a, double b) {
  return std::fabs(a - b) <= 1e-12 * std::max({1.0, std::fabs(a), std::fabs(b)});
}

UnitPass run(const UnitRun* runs, size_t n, bool backward, double pending, bool extrapolate) {
  thread_local Links links;
  links.t = 0;
  links.backlog = std::max(0.0, pending);
  links.later.clear();
  links.next = 0;
  double end = 0, computed = 0;  // the compute stream: its last unit's end, its work
  size_t last_run = n;           // the last run with units
  while (last_run > 0 && runs[last_run - 1].count <= 0) --last_run;
  for (size_t i = 0; i < n; ++i) {
    const UnitRun& u = runs[i];
    const auto count = static_cast<int64_t>(std::llround(u.count));
    double prev_end = 0, prev_t = 0, d_end = -1, d_t = -1, prev_backlog = -1, prev_lead = -1;
    size_t prev_queued = 0;
    for (int64_t k = 0; k < count; ++k) {
      links.gather(u.gather_s);
      end = std::max(end, links.t) + u.compute_s;
      computed += u.compute_s;
      if (backward && u.reduce_s > 0) links.later.emplace_back(end, u.reduce_s);
      // The pass's last run, compute-bound (g + r <= c) with the gathers ahead: the next
      // gather and all the reduction work queued fit before this unit ends. Then every
      // later unit finds its gather done (each unit brings g + r of link work and c of
      // compute) and all but the last unit's reduction are done by the pass's end.
      if (extrapolate && i + 1 == last_run && k + 1 < count &&
          u.gather_s + u.reduce_s <= u.compute_s) {
        double queued = links.backlog;
        for (size_t q = links.next; q < links.later.size(); ++q) queued += links.later[q].second;
        if (links.t + u.gather_s + queued <= end) {
          const double rest = static_cast<double>(count - k - 1);
          end += rest * u.compute_s;
          computed += rest * u.compute_s;
          UnitPass out;
          out.exposed = std::max(0.0, end - computed);
          out.trailing = u.reduce_s;
          return out;
        }
      }
      // Periodic: the compute stream and the links moved on by the same time as for the
      // unit before, with the same reduction work arrived and the same one (at most)
      // posted for later at the same distance: the run's other units repeat it.
      const double de = end - prev_end, dt = links.t - prev_t;
      const double lead = links.queued() > 0 ? links.later[links.next].first - links.t : 0.0;
      if (extrapolate && k >= 2 && k + 1 < count && same(de, d_end) && same(dt, d_t) &&
          same(de, dt) && links.queued() == prev_queued && links.queued() <= 1 &&
          same(links.backlog, prev_backlog) && same(lead, prev_lead)) {
        const double rest = static_cast<double>(count - k - 1);
        end += rest * de;
        links.t += rest * de;
        links.shift_later(rest * de);
        computed += rest * u.compute_s;
        break;
      }
      d_end = de;
      d_t = dt;
      prev_end = end;
      prev_t = links.t;
      prev_queued = links.queued();
      prev_backlog = links.backlog;
      prev_lead = lead;
    }
  }
  UnitPass out;
  out.exposed = std::max(0.0, end - computed);
  out.trailing = links.drain_until(std::max(end, links.t));
  return out;
}

// A forward pass, in closed form: no reductions arrive, the gathers run one after the
// other from the start beside the pending reduction B (each at half speed until B is done,
// which takes as much gather work as B): gather k is done at G_k = X_k + min(B, X_k), X_k
// the gathers' work up to it. Unit k ends at E_k = max(E_{k-1}, G_k) + c_k, so the pass
// waits max_k (G_k - C_{<k}), C_{<k} the compute before unit k. Within a run G_k - C_{<k}
// is linear in k but for the kink where X_k passes B: its ends and the kink decide.
UnitPass forward_pass(const UnitRun* runs, size_t n, double pending) {
  const double b = std::max(0.0, pending);
  double gathered = 0, computed = 0, exposed = 0;
  auto at = [&](const UnitRun& u, double j) {
    const double x = gathered + (j + 1.0) * u.gather_s;
    return x + std::min(b, x) - computed - j * u.compute_s;
  };
  for (size_t i = 0; i < n; ++i) {
    const UnitRun& u = runs[i];
    if (u.count <= 0) continue;
    const double last = std::round(u.count) - 1.0;
    exposed = std::max({exposed, at(u, 0.0), at(u, last)});
    if (u.gather_s > 0) {
      const double kink = (b - gathered) / u.gather_s - 1.0;
      for (double j : {std::floor(kink), std::ceil(kink)})
        if (j > 0 && j < last) exposed = std::max(exposed, at(u, j));
    }
    gathered += std::round(u.count) * u.gather_s;
    computed += std::round(u.count) * u.compute_s;
  }
  UnitPass out;
  out.exposed = exposed;
  // B drained beside the gathers (as much as they moved) and alone after them until the end.
  const double gathers_end = gathered + std::min(b, gathered);
  const double end = computed + exposed;
  out.trailing = std::max(0.0, b - std::min(b, gathered) - std::max(0.0, end - gathers_end));
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
