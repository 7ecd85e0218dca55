#include "rapid/nonideal/thermal_network.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <utility>

namespace rapid {

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
using Matrix = std::array<NodeVector, kThermalNodes>;

// Eigen-decomposition of a symmetric matrix by cyclic Jacobi rotations (Golub & Van Loan,
// "Matrix Computations", 4th ed., sec 8.5): a = v diag(w) v^T, columns of v the vectors.
void symmetric_eigen(Matrix a, NodeVector& w, Matrix& v) {
  constexpr size_t n = kThermalNodes;
  for (size_t i = 0; i < n; ++i)
    for (size_t j = 0; j < n; ++j) v[i][j] = i == j ? 1.0 : 0.0;
  for (int sweep = 0; sweep < 64; ++sweep) {
    double off = 0, scale = 0;
    for (size_t i = 0; i < n; ++i)
      for (size_t j = 0; j < n; ++j) (i == j ? scale : off) += a[i][j] * a[i][j];
    if (off <= 1e-30 * scale) break;
    for (size_t p = 0; p < n; ++p)
      for (size_t q = p + 1; q < n; ++q) {
        if (a[p][q] == 0) continue;
        // The rotation that zeroes a[p][q]: tan 2 theta = 2 a_pq / (a_qq - a_pp).
        const double theta = (a[q][q] - a[p][p]) / (2 * a[p][q]);
        const double t = (theta >= 0 ? 1.0 : -1.0) / (std::abs(theta) + std::hypot(theta, 1.0));
        const double c = 1 / std::hypot(t, 1.0), s = t * c;
        for (size_t k = 0; k < n; ++k) {  // columns p, q
          const double akp = a[k][p], akq = a[k][q];
          a[k][p] = c * akp - s * akq;
          a[k][q] = s * akp + c * akq;
        }
        for (size_t k = 0; k < n; ++k) {  // rows p, q
          const double apk = a[p][k], aqk = a[q][k];
          a[p][k] = c * apk - s * aqk;
          a[q][k] = s * apk + c * aqk;
        }
        for (size_t k = 0; k < n; ++k) {
          const double vkp = v[k][p], vkq = v[k][q];
          v[k][p] = c * vkp - s * vkq;
          v[k][q] = s * vkp + c * vkq;
        }
      }
  }
  for (size_t i = 0; i < n; ++i) w[i] = a[i][i];
}

// f(t) = c + sum_k a_k e^{-l_k t} with up to three terms.
struct ExpSum {
  double c = 0;
  std::array<double, kThermalNodes> a{}, l{};
  size_t n = 0;
  double operator()(double t) const {
    double s = c;
    for (size_t k = 0; k < n; ++k) s += a[k] * std::exp(-l[k] * t);
    return s;
  }
  double slope(double t) const {
    double s = 0;
    for (size_t k = 0; k < n; ++k) s -= l[k] * a[k] * std::exp(-l[k] * t);
    return s;
  }
};

// The zero of f in [u, v], where f is monotone and changes sign (f(u) = fu): Newton's
// method kept inside the bracket, bisecting whenever a step would leave it.
double bracketed_zero(const ExpSum& f, double u, double fu, double v) {
  double t = 0.5 * (u + v);
  for (int it = 0; it < 100; ++it) {
    const double ft = f(t);
    if (ft == 0) return t;
    if ((ft > 0) == (fu > 0))
      u = t, fu = ft;
    else
      v = t;
    const double d = f.slope(t);
    double next = d != 0 ? t - ft / d : 0.5 * (u + v);
    if (!(next > u && next < v)) next = 0.5 * (u + v);
    if (std::abs(next - t) <= 1e-14 * std::max(1.0, t) || v - u <= 1e-14 * std::max(1.0, v))
      return next;
    t = next;
  }
  return 0.5 * (u + v);
}

// Up to n zeros of f in (lo, hi), ascending, into z (count returned). A single
// exponential has its zero in closed form; otherwise f is monotone between the zeros of
// f' (Rolle), and f' e^{l_0 t} is an ExpSum of one term fewer.
size_t zeros(const ExpSum& f, double lo, double hi, std::array<double, kThermalNodes + 1>& z) {
  if (f.n == 0) return 0;
  if (f.n == 1) {  // c + a e^{-l t} = 0: t = ln(-a / c) / l
    const double r = -f.a[0] / f.c;
    if (!(r > 0)) return 0;
    const double t = std::log(r) / f.l[0];
    if (!(t > lo && t <= hi)) return 0;
    z[0] = t;
    return 1;
  }
  std::array<double, kThermalNodes + 2> cuts{};
  size_t m = 0;
  cuts[m++] = lo;
  ExpSum d;  // f'(t) e^{l_0 t}
  d.c = -f.l[0] * f.a[0];
  for (size_t k = 1; k < f.n; ++k) {
    const double rate = f.l[k] - f.l[0], coef = -f.l[k] * f.a[k];
    if (std::abs(rate) <= 1e-12 * f.l[k])
      d.c += coef;  // the same rate: one term
    else
      d.a[d.n] = coef, d.l[d.n++] = rate;
  }
  std::array<double, kThermalNodes + 1> crit{};
  const size_t nc = zeros(d, lo, hi, crit);
  for (size_t k = 0; k < nc; ++k) cuts[m++] = crit[k];
  cuts[m++] = hi;
  size_t count = 0;
  for (size_t k = 0; k + 1 < m; ++k) {
    const double u = cuts[k], v = cuts[k + 1];
    const double fu = f(u), fv = f(v);
    if (fv == 0) {
      if (v < hi) continue;  // a touch at a critical point: not a crossing
      z[count++] = v;
      continue;
    }
    if (fu == 0 || (fu > 0) == (fv > 0)) continue;
    z[count++] = bracketed_zero(f, u, fu, v);
  }
  return count;
}

}  // namespace

ThermalNetwork::ThermalNetwork(const ThermalCircuit& c) {
  const double gds = 1 / c.die_sink_C_per_W, gms = 1 / c.hbm_sink_C_per_W,
               gdm = 1 / c.die_hbm_C_per_W, gsc = 1 / c.sink_coolant_C_per_W;
  Matrix g{};
  g[kDie] = {gds + gdm, -gdm, -gds};
  g[kHbm] = {-gdm, gms + gdm, -gms};
  g[kSink] = {-gds, -gms, gds + gms + gsc};
  const NodeVector cap = {c.die_J_per_C, c.hbm_J_per_C, c.sink_J_per_C};
  // G^-1 by cofactors (G is symmetric positive definite: the sink's path to the coolant
  // grounds every node).
  const double det = g[0][0] * (g[1][1] * g[2][2] - g[1][2] * g[2][1]) -
                     g[0][1] * (g[1][0] * g[2][2] - g[1][2] * g[2][0]) +
                     g[0][2] * (g[1][0] * g[2][1] - g[1][1] * g[2][0]);
  for (size_t i = 0; i < kThermalNodes; ++i)
    for (size_t j = 0; j < kThermalNodes; ++j) {
      const size_t r0 = (j + 1) % 3, r1 = (j + 2) % 3, c0 = (i + 1) % 3, c1 = (i + 2) % 3;
      inverse_[i][j] = (g[r0][c0] * g[r1][c1] - g[r0][c1] * g[r1][c0]) / det;
    }
  // The modes: A = C^-1/2 G C^-1/2 = V diag(lambda) V^T; x(t) = C^-1/2 V e^{-lambda t} V^T
  // C^1/2 (x0 - x_inf) + x_inf.
  Matrix a{}, v{};
  for (size_t i = 0; i < kThermalNodes; ++i)
    for (size_t j = 0; j < kThermalNodes; ++j) a[i][j] = g[i][j] / std::sqrt(cap[i] * cap[j]);
  symmetric_eigen(a, lambda_, v);
  std::array<size_t, kThermalNodes> order = {0, 1, 2};
  std::sort(order.begin(), order.end(),
            [&](size_t x, size_t y) { return lambda_[x] < lambda_[y]; });
  const NodeVector w = lambda_;
  for (size_t k = 0; k < kThermalNodes; ++k) {
    const size_t m = order[k];
    lambda_[k] = w[m];
    for (size_t i = 0; i < kThermalNodes; ++i) {
      to_node_[i][k] = v[i][m] / std::sqrt(cap[i]);
      to_mode_[k][i] = v[i][m] * std::sqrt(cap[i]);
    }
  }
}

NodeVector ThermalNetwork::steady_rise(const NodeVector& power_W) const {
  NodeVector x{};
  for (size_t i = 0; i < kThermalNodes; ++i)
    for (size_t j = 0; j < kThermalNodes; ++j) x[i] += inverse_[i][j] * power_W[j];
  return x;
}

ThermalPath ThermalNetwork::path(const NodeVector& rise0, const NodeVector& power_W) const {
  ThermalPath p;
  p.inf = steady_rise(power_W);
  NodeVector mode{};
  for (size_t k = 0; k < kThermalNodes; ++k)
    for (size_t j = 0; j < kThermalNodes; ++j) mode[k] += to_mode_[k][j] * (rise0[j] - p.inf[j]);
  for (size_t i = 0; i < kThermalNodes; ++i)
    for (size_t k = 0; k < kThermalNodes; ++k) p.coef[i][k] = to_node_[i][k] * mode[k];
  return p;
}

double ThermalNetwork::at(const ThermalPath& p, size_t i, double t_s) const {
  double x = p.inf[i];
  for (size_t k = 0; k < kThermalNodes; ++k) x += p.coef[i][k] * std::exp(-lambda_[k] * t_s);
  return x;
}

NodeVector ThermalNetwork::at(const ThermalPath& p, double t_s) const {
  NodeVector e{}, x = p.inf;
  for (size_t k = 0; k < kThermalNodes; ++k) e[k] = std::exp(-lambda_[k] * t_s);
  for (size_t i = 0; i < kThermalNodes; ++i)
    for (size_t k = 0; k < kThermalNodes; ++k) x[i] += p.coef[i][k] * e[k];
  return x;
}

NodeVector ThermalNetwork::slow_part(const NodeVector& rise, double tau_s) const {
  NodeVector x{};
  for (size_t k = 0; k < kThermalNodes; ++k) {
    if (k > 0 && lambda_[k] * tau_s > 1) break;  // ascending rates: the rest are faster
    double mode = 0;
    for (size_t j = 0; j < kThermalNodes; ++j) mode += to_mode_[k][j] * rise[j];
    for (size_t i = 0; i < kThermalNodes; ++i) x[i] += to_node_[i][k] * mode;
  }
  return x;
}

// Integral of inf + sum_k c_k e^{-l_k t}: inf t + sum_k c_k (1 - e^{-l_k t}) / l_k.
double ThermalNetwork::integral(const ThermalPath& p, size_t i, double t_s) const {
  double s = p.inf[i] * t_s;
  for (size_t k = 0; k < kThermalNodes; ++k)
    s += p.coef[i][k] * -std::expm1(-lambda_[k] * t_s) / lambda_[k];
  return s;
}

double ThermalNetwork::first_crossing(const ThermalPath& p, size_t i, double target,
                                      double t_max_s) const {
  if (!(t_max_s > 0)) return kInf;
  ExpSum f;
  f.c = p.inf[i] - target;
  // Each term moves monotonically between its values at 0 and t_max: their sums bound f
  // on the interval, which settles most calls without a search.
  double lo = f.c, hi = f.c;
  for (size_t k = 0; k < kThermalNodes; ++k) {
    const double a = p.coef[i][k];
    if (a == 0) continue;
    const double end = std::isfinite(t_max_s) ? a * std::exp(-lambda_[k] * t_max_s) : 0.0;
    lo += std::min(a, end), hi += std::max(a, end);
    f.a[f.n] = a, f.l[f.n++] = lambda_[k];
  }
  if (lo > 0 || hi < 0) return kInf;
  std::array<double, kThermalNodes + 1> z{};
  // An infinite horizon: past 40 slowest time constants every transient is below e^-40.
  const double end = std::isfinite(t_max_s) ? t_max_s : 40 / lambda_[0];
  return zeros(f, 0.0, end, z) > 0 ? z[0] : kInf;
}

}  // namespace rapid
