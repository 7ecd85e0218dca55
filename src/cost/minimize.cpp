#include "rapid/cost/minimize.hpp"

#include <algorithm>
#include <cmath>

#include "rapid/common/error.hpp"

namespace rapid {

namespace {

// The free coordinates of the box and the map between them and x.
struct BoxMap {
  std::vector<double> lower, upper, base;  // base: x with the fixed coordinates
  std::vector<size_t> free;                // indices with lower < upper

  std::vector<double> to_x(const std::vector<double>& u) const {
    std::vector<double> x = base;
    for (size_t j = 0; j < free.size(); ++j) {
      const size_t i = free[j];
      x[i] = lower[i] + (upper[i] - lower[i]) * 0.5 * (1.0 + std::sin(u[j]));
      x[i] = std::clamp(x[i], lower[i], upper[i]);
    }
    return x;
  }
  std::vector<double> to_u(const std::vector<double>& x) const {
    std::vector<double> u(free.size());
    for (size_t j = 0; j < free.size(); ++j) {
      const size_t i = free[j];
      const double s = 2.0 * (x[i] - lower[i]) / (upper[i] - lower[i]) - 1.0;
      u[j] = std::asin(std::clamp(s, -1.0, 1.0));
    }
    return u;
  }
};

struct Vertex {
  std::vector<double> u;
  double f = 0;
};

// u + t (v - u)
std::vector<double> along(const std::vector<double>& u, const std::vector<double>& v, double t) {
  std::vector<double> r(u.size());
  for (size_t i = 0; i < u.size(); ++i) r[i] = u[i] + t * (v[i] - u[i]);
  return r;
}

double diameter(const std::vector<Vertex>& s) {
  double d = 0;
  for (size_t k = 1; k < s.size(); ++k)
    for (size_t i = 0; i < s[0].u.size(); ++i) d = std::max(d, std::abs(s[k].u[i] - s[0].u[i]));
  return d;
}

}  // namespace

MinimizeResult minimize_bounded(const std::function<double(const std::vector<double>&)>& f,
                                std::vector<double> x0, const std::vector<double>& lower,
                                const std::vector<double>& upper, const MinimizeOptions& opt) {
  RAPID_ASSERT(x0.size() == lower.size() && x0.size() == upper.size(), "bounds per coordinate");
  BoxMap map{lower, upper, {}, {}};
  for (size_t i = 0; i < x0.size(); ++i) {
    RAPID_ASSERT(lower[i] <= upper[i], "lower <= upper");
    x0[i] = std::clamp(x0[i], lower[i], upper[i]);
    if (lower[i] < upper[i]) map.free.push_back(i);
  }
  map.base = x0;
  MinimizeResult best{x0, f(x0), 1};
  const size_t d = map.free.size();
  if (d == 0) return best;

  auto eval = [&](const std::vector<double>& u) {
    ++best.evaluations;
    return f(map.to_x(u));
  };
  std::vector<Vertex> s(d + 1);
  for (int restart = 0; restart <= opt.max_restarts; ++restart) {
    const double start_f = best.value;
    // A fresh simplex around the best point: one edge per free coordinate.
    s[0] = {map.to_u(best.x), best.value};
    for (size_t j = 0; j < d; ++j) {
      s[j + 1].u = s[0].u;
      s[j + 1].u[j] += opt.initial_step;
      s[j + 1].f = eval(s[j + 1].u);
    }
    while (best.evaluations < opt.max_evaluations) {
      std::sort(s.begin(), s.end(), [](const Vertex& a, const Vertex& b) { return a.f < b.f; });
      const double spread = s[d].f - s[0].f;
      const double diam = diameter(s);
      if (diam <= opt.u_tolerance ||
          (spread <= opt.f_tolerance * std::max(1.0, std::abs(s[0].f)) && diam <= 1e-4))
        break;
      std::vector<double> c(d, 0.0);  // centroid of all but the worst
      for (size_t k = 0; k < d; ++k)
        for (size_t i = 0; i < d; ++i) c[i] += s[k].u[i] / static_cast<double>(d);
      const Vertex& worst = s[d];
      Vertex r{along(c, worst.u, -1.0), 0};
      r.f = eval(r.u);
      if (r.f < s[0].f) {
        Vertex e{along(c, worst.u, -2.0), 0};
        e.f = eval(e.u);
        s[d] = e.f < r.f ? e : r;
        continue;
      }
      if (r.f < s[d - 1].f) {
        s[d] = r;
        continue;
      }
      // Contract: outside when the reflection beat the worst, inside otherwise.
      const bool outside = r.f < worst.f;
      Vertex k{outside ? along(c, r.u, 0.5) : along(c, worst.u, 0.5), 0};
      k.f = eval(k.u);
      if (k.f < (outside ? r.f : worst.f)) {
        s[d] = k;
        continue;
      }
      for (size_t v = 1; v <= d; ++v) {  // shrink towards the best vertex
        s[v].u = along(s[0].u, s[v].u, 0.5);
        s[v].f = eval(s[v].u);
      }
    }
    const auto it = std::min_element(s.begin(), s.end(),
                                     [](const Vertex& a, const Vertex& b) { return a.f < b.f; });
    if (it->f < best.value) {
      best.value = it->f;
      best.x = map.to_x(it->u);
    }
    const bool improved =
        start_f - best.value > opt.f_tolerance * std::max(1.0, std::abs(best.value));
    if ((restart > 0 && !improved) || best.evaluations >= opt.max_evaluations) break;
  }
  return best;
}

}  // namespace rapid
