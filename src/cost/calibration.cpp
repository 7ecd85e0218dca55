// Fitting the model's efficiency parameters to measured rows (calibration.hpp).
#include "rapid/cost/calibration.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "rapid/common/error.hpp"
#include "rapid/cost/minimize.hpp"

namespace rapid {

double CalibrationParam::get(const HardwareSpec& hw, const NetworkSpec& net) const {
  return file == ParamFile::Hardware ? hw.*hw_field : net.*net_field;
}

void CalibrationParam::set(HardwareSpec& hw, NetworkSpec& net, double v) const {
  if (file == ParamFile::Hardware)
    hw.*hw_field = v;
  else
    net.*net_field = v;
}

const std::vector<CalibrationParam>& calibration_params() {
  // Bounds: efficiencies are fractions of a peak; latencies span NVLink steps (us) to
  // TCP-based fabrics (ms); the ring bubble is a few chunk transfers at most.
  using H = HardwareSpec;
  using N = NetworkSpec;
  constexpr auto hw = ParamFile::Hardware;
  constexpr auto net = ParamFile::Network;
  static const std::vector<CalibrationParam> params = {
      {"gemm", hw, &H::gemm_efficiency, nullptr, 0.05, 1.0, false, true},
      {"gemm_tile_overhead", hw, &H::gemm_tile_overhead_s, nullptr, 0.0, 20e-6, true, true},
      {"nvlink", hw, &H::nvlink_efficiency, nullptr, 0.05, 1.0, false, false},
      {"collective_latency", net, nullptr, &N::collective_latency_s, 0.0, 500e-6, true, false},
      {"nvlink_step_latency", net, nullptr, &N::nvlink_step_latency_s, 0.0, 50e-6, true, false},
      {"nvlink_ring_bubble", net, nullptr, &N::nvlink_ring_bubble, 0.0, 8.0, false, false},
      {"nvlink_step_latency_ll", net, nullptr, &N::nvlink_step_latency_ll_s, 0.0, 50e-6, true,
       false},
      {"nvlink_step_latency_ll128", net, nullptr, &N::nvlink_step_latency_ll128_s, 0.0, 50e-6, true,
       false},
      {"network_efficiency", net, nullptr, &N::network_efficiency, 0.05, 1.0, false, false},
      {"network_step_latency", net, nullptr, &N::network_step_latency_s, 0.0, 5e-3, true, false},
      {"network_ring_bubble", net, nullptr, &N::network_ring_bubble, 0.0, 8.0, false, false},
  };
  return params;
}

namespace {

double sum_sq_log_error(const std::vector<const Measurement*>& rows, const HardwareSpec& hw,
                        const NetworkSpec& net) {
  double s = 0;
  for (const Measurement* r : rows) {
    const double p = predict_measurement(*r, hw, net);
    // A non-positive or non-finite prediction is a model failure at these values: make it
    // the worst point so the simplex walks away from it.
    if (!(p > 0) || !std::isfinite(p)) return 1e300;
    const double e = std::log(p / r->value);
    s += e * e;
  }
  return s;
}

// Fits `params` on `rows`, updating hw and net in place.
void fit(const std::vector<const CalibrationParam*>& params,
         const std::vector<const Measurement*>& rows, HardwareSpec& hw, NetworkSpec& net) {
  if (params.empty() || rows.empty()) return;
  std::vector<double> x0, lo, hi;
  for (const CalibrationParam* p : params) {
    x0.push_back(p->get(hw, net));
    lo.push_back(p->lower);
    hi.push_back(p->upper);
  }
  HardwareSpec h = hw;
  NetworkSpec n = net;
  auto objective = [&](const std::vector<double>& x) {
    for (size_t i = 0; i < params.size(); ++i) params[i]->set(h, n, x[i]);
    return sum_sq_log_error(rows, h, n);
  };
  MinimizeResult r = minimize_bounded(objective, x0, lo, hi);
  for (size_t i = 0; i < params.size(); ++i) params[i]->set(hw, net, r.x[i]);
}

// How many of `params` the rows determine: the rank of the Jacobian of the rows' log
// predictions by the parameters (each scaled by its range) at the current values. A fit of
// k parameters needs rank k: fewer rows than parameters, rows that do not move a parameter
// (a zero column) or rows that move two parameters alike (dependent columns) leave a
// direction along which the objective is flat, so the fitted values along it are whatever
// the minimizer stopped at (Nocedal & Wright, "Numerical Optimization", 2nd ed., sec 10.3:
// the linear least-squares subproblem has a unique solution only for a full-rank Jacobian).
size_t determined(const std::vector<const CalibrationParam*>& params,
                  const std::vector<const Measurement*>& rows, const HardwareSpec& hw,
                  const NetworkSpec& net) {
  // Central differences of ln(prediction) at 1e-4 of each range (one-sided at a bound).
  std::vector<std::vector<double>> cols;
  for (const CalibrationParam* p : params) {
    const double x = p->get(hw, net), h = 1e-4 * (p->upper - p->lower);
    const double lo = std::max(p->lower, x - h), hi = std::min(p->upper, x + h);
    HardwareSpec a = hw, b = hw;
    NetworkSpec na = net, nb = net;
    p->set(a, na, lo);
    p->set(b, nb, hi);
    std::vector<double> col;
    for (const Measurement* r : rows) {
      const double d = std::log(predict_measurement(*r, b, nb) / predict_measurement(*r, a, na));
      col.push_back(std::isfinite(d) ? d / (hi - lo) * (p->upper - p->lower) : 0.0);
    }
    cols.push_back(std::move(col));
  }
  // Modified Gram-Schmidt: a column whose part outside the span of the ones kept is below
  // 1e-6 of its own length (or that is zero) adds no direction.
  std::vector<std::vector<double>> basis;
  for (std::vector<double>& c : cols) {
    double norm = 0;
    for (double v : c) norm += v * v;
    norm = std::sqrt(norm);
    for (const std::vector<double>& q : basis) {
      double dot = 0;
      for (size_t i = 0; i < c.size(); ++i) dot += c[i] * q[i];
      for (size_t i = 0; i < c.size(); ++i) c[i] -= dot * q[i];
    }
    double rest = 0;
    for (double v : c) rest += v * v;
    rest = std::sqrt(rest);
    if (!(norm > 0) || rest <= 1e-6 * norm) continue;
    for (double& v : c) v /= rest;
    basis.push_back(c);
  }
  return basis.size();
}

double mape(const std::vector<const Measurement*>& rows, const HardwareSpec& hw,
            const NetworkSpec& net) {
  double s = 0;
  for (const Measurement* r : rows)
    s += std::abs(predict_measurement(*r, hw, net) - r->value) / r->value * 100.0;
  return rows.empty() ? 0.0 : s / static_cast<double>(rows.size());
}

}  // namespace

CalibrationResult calibrate(const HardwareSpec& hw, const NetworkSpec& net,
                            const std::vector<Measurement>& rows,
                            const std::vector<std::string>& only) {
  for (const std::string& name : only) {
    bool known = false;
    for (const auto& p : calibration_params()) known = known || name == p.name;
    if (!known)
      throw InputError("<command line>", "--params", name,
                       "names of gemm, gemm_tile_overhead, nvlink, collective_latency, "
                       "nvlink_step_latency, nvlink_ring_bubble, nvlink_step_latency_ll, "
                       "nvlink_step_latency_ll128, network_efficiency, "
                       "network_step_latency, network_ring_bubble");
  }
  CalibrationResult out{hw, net, {}, {}, 0, 0, {}};
  std::vector<const Measurement*> gemm_rows, coll_rows, all_rows;
  for (const Measurement& r : rows) {
    (r.op == MeasuredOp::Gemm ? gemm_rows : coll_rows).push_back(&r);
    all_rows.push_back(&r);
  }
  out.mape_before = mape(all_rows, hw, net);

  for (bool from_gemm : {true, false}) {
    const auto& family_rows = from_gemm ? gemm_rows : coll_rows;
    if (family_rows.empty()) continue;
    const double f0 = sum_sq_log_error(family_rows, out.hw, out.net);
    std::vector<const CalibrationParam*> chosen;
    for (const CalibrationParam& p : calibration_params()) {
      if (p.from_gemm != from_gemm) continue;
      bool wanted = only.empty();
      for (const std::string& name : only) wanted = wanted || name == p.name;
      if (!wanted) continue;
      // A parameter the rows cannot see (same objective at both bounds) stays as it is,
      // unless --params named it: then the rows leave it undetermined (below).
      HardwareSpec h = out.hw;
      NetworkSpec n = out.net;
      p.set(h, n, p.lower);
      const double at_lo = sum_sq_log_error(family_rows, h, n);
      p.set(h, n, p.upper);
      const double at_hi = sum_sq_log_error(family_rows, h, n);
      if (only.empty() && std::abs(at_lo - f0) + std::abs(at_hi - f0) <= 1e-12 * (1.0 + f0))
        continue;
      chosen.push_back(&p);
    }
    const size_t rank = determined(chosen, family_rows, out.hw, out.net);
    if (rank < chosen.size()) {  // not fitted: calibrate's caller refuses or reports it
      out.underdetermined.push_back({from_gemm, family_rows.size(), rank, chosen});
      continue;
    }
    std::vector<double> before;
    for (const CalibrationParam* p : chosen) before.push_back(p->get(out.hw, out.net));
    fit(chosen, family_rows, out.hw, out.net);
    for (size_t i = 0; i < chosen.size(); ++i)
      out.fitted.push_back({chosen[i], before[i], chosen[i]->get(out.hw, out.net)});
  }

  for (int op = 0; op < kNumMeasuredOps; ++op) {
    std::vector<const Measurement*> of_op;
    for (const Measurement* r : all_rows)
      if (static_cast<int>(r->op) == op) of_op.push_back(r);
    if (of_op.empty()) continue;
    out.errors.push_back({static_cast<MeasuredOp>(op), static_cast<int>(of_op.size()),
                          mape(of_op, hw, net), mape(of_op, out.hw, out.net)});
  }
  out.mape_after = mape(all_rows, out.hw, out.net);
  return out;
}

}  // namespace rapid
