// The compact thermal model of one GPU (docs/nonideal.md sec 2): three lumped nodes, the
// GPU die (SMs, L2, NVLink), the HBM stacks beside it on the interposer, and the heatsink
// (air) or cold plate (liquid) above both, joined by thermal resistances:
//
//        die --R_dm-- HBM          C dT/dt = P - G (T - T_coolant 1)
//          \         /
//         R_ds     R_ms            (C the heat capacities, G the conductance matrix of the
//            \     /              resistances, P the heat each node dissipates; the sink
//             sink                 dissipates none)
//               |
//             R_sc
//               |
//            coolant (inlet air or facility water, T_coolant)
//
// A linear system: for constant powers it is solved exactly through its modes (the
// eigenvectors of C^-1/2 G C^-1/2, symmetric positive definite): each node's temperature
// is T_inf + sum_k c_k e^{-lambda_k t}, a sum of three exponentials. The lumped form
// dT/dt = alpha P - beta (T - T_ambient) of PRODUCT.md sec 3 is the limit of vanishing die
// and HBM capacities and resistances: alpha = 1 / C_sink, beta = 1 / (R_sc C_sink).
#pragma once

#include <array>
#include <cstddef>

namespace rapid {

/// The nodes, in this order in every NodeVector.
inline constexpr size_t kDie = 0, kHbm = 1, kSink = 2, kThermalNodes = 3;
/// One value per node (temperatures in C, rises in C, powers in W).
using NodeVector = std::array<double, kThermalNodes>;

/// Heat capacities and resistances of the network (the hardware file's `thermal:` and the
/// cooling's sink; docs/nonideal.md sec 2 derives each). All positive and finite.
struct ThermalCircuit {
  double die_J_per_C = 1.5;
  double hbm_J_per_C = 0.7;
  double sink_J_per_C = 1000;
  double die_sink_C_per_W = 0.018;     ///< die -> sink: silicon, TIM, heatsink base
  double hbm_sink_C_per_W = 0.06;      ///< HBM stacks -> sink (all stacks in parallel)
  double die_hbm_C_per_W = 1.4;        ///< die <-> HBM laterally through the interposer
  double sink_coolant_C_per_W = 0.05;  ///< sink -> inlet air / facility water
  bool operator==(const ThermalCircuit&) const = default;
};

/// The temperature rises over the coolant from a start under constant node powers:
/// rise_i(t) = inf_i + sum_k coef[i][k] e^{-lambda_k t}.
struct ThermalPath {
  NodeVector inf{};
  std::array<NodeVector, kThermalNodes> coef{};
};

class ThermalNetwork {
 public:
  explicit ThermalNetwork(const ThermalCircuit& c = {});

  /// Steady rises over the coolant under constant powers: G^-1 P.
  NodeVector steady_rise(const NodeVector& power_W) const;
  /// The trajectory from rises `rise0` under constant `power_W`.
  ThermalPath path(const NodeVector& rise0, const NodeVector& power_W) const;
  /// Node `i`'s rise `t_s` seconds along `p`; every node's.
  double at(const ThermalPath& p, size_t i, double t_s) const;
  NodeVector at(const ThermalPath& p, double t_s) const;
  /// Integral of node `i`'s rise over [0, t_s] (time averages).
  double integral(const ThermalPath& p, size_t i, double t_s) const;
  /// The first time in (0, t_max_s] at which node `i`'s rise equals `target`; infinity when
  /// it does not get there.
  double first_crossing(const ThermalPath& p, size_t i, double target, double t_max_s) const;
  /// The modes' decay rates, ascending (1/s): 1 / rates()[0] is the slowest time constant.
  const NodeVector& rates() const { return lambda_; }
  /// The part of `rise` carried by the modes whose time constant is at least `tau_s` (the
  /// slowest alone when none is): what is left of a transient once the faster modes have
  /// followed the power.
  NodeVector slow_part(const NodeVector& rise, double tau_s) const;

 private:
  NodeVector lambda_{};
  std::array<NodeVector, kThermalNodes> to_node_{};  ///< C^-1/2 V: mode -> node
  std::array<NodeVector, kThermalNodes> to_mode_{};  ///< V^T C^1/2: node -> mode
  std::array<NodeVector, kThermalNodes> inverse_{};  ///< G^-1
};

}  // namespace rapid
