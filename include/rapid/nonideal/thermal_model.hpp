// The thermal model of one GPU (docs/nonideal.md sec 2): the three-node network of
// thermal_network.hpp (die, HBM, heatsink or cold plate) under a cooling, and the two nodes
// that throttle, each with its own limit and its own slowdown: the die lowers the SM clock
// above NVIDIA's "GPU Max Operating Temp" (SW thermal slowdown) to its HW slowdown depth at
// "GPU Slowdown Temp"; the HBM loses bandwidth above "Memory Max Operating Temp".
#pragma once

#include <cstdint>

#include "rapid/nonideal/thermal_network.hpp"

namespace rapid {

/// How a hot node derates (hardware file `thermal: law:`).
///  Linear: the derate grows linearly from none at onset_C to its full depth at
///          onset_C + span_C (firmware steps clocks down progressively: NVIDIA's "SW
///          thermal slowdown"); a unique steady state above the onset.
///  Step:   full depth at onset_C, released below onset_C - hysteresis_C.
enum class ThrottleLaw : uint8_t { Linear, Step };

/// One throttling node's limit and the fraction of its resource it keeps at full depth
/// (the die: SM clock; the HBM: bandwidth).
struct NodeLimit {
  double onset_C = 95;
  double span_C = 5;
  double keep = 1.0;
  double shutdown_C = 102;  ///< hotter at the steady state: the GPU cannot run (overheat)
  bool operator==(const NodeLimit&) const = default;
  /// Linear law's depth in [0, 1] at temperature T (0 at and below the onset).
  double depth(double T_C) const;
};

struct ThermalParams {
  ThermalParams() : net_(circuit_) {}
  double ambient_C = 27;  ///< inlet air / facility water
  NodeLimit die{87, 2, 0.5, 92}, hbm{95, 5, 0.73, 102};
  ThrottleLaw law = ThrottleLaw::Linear;
  double hysteresis_C = 2;  ///< Step: release below onset - hysteresis

  const ThermalCircuit& circuit() const { return circuit_; }
  const ThermalNetwork& network() const { return net_; }
  void set_circuit(const ThermalCircuit& c) { circuit_ = c, net_ = ThermalNetwork(c); }
  /// Steady node temperatures (C) under constant node powers.
  NodeVector steady_C(const NodeVector& power_W) const;
  /// The die's steady temperature with all of `power_W` dissipated in the die (the
  /// hottest a GPU drawing that much can be: how GPUs are ranked by their cooling).
  double die_steady_C(double power_W) const { return steady_C({power_W, 0, 0})[kDie]; }
  /// The lumped form's rates (docs/nonideal.md sec 2): alpha = 1 / C_sink (C/J), beta =
  /// 1 / (R_sink C_sink) (1/s).
  double alpha_C_per_J() const { return 1 / circuit_.sink_J_per_C; }
  double beta_per_s() const { return 1 / (circuit_.sink_coolant_C_per_W * circuit_.sink_J_per_C); }
  /// The cooling and the limits alike (two GPUs heat and throttle the same).
  bool same_as(const ThermalParams& o) const {
    return circuit_ == o.circuit_ && ambient_C == o.ambient_C && die == o.die && hbm == o.hbm &&
           law == o.law && hysteresis_C == o.hysteresis_C;
  }

 private:
  ThermalCircuit circuit_;
  ThermalNetwork net_;
};

/// What a GPU keeps of its SM clock and HBM bandwidth.
struct Derate {
  double clock = 1.0, hbm = 1.0;
  bool operator==(const Derate&) const = default;
  /// Time multiplier of work whose full-speed time is `compute_share` compute-bound and
  /// `memory_share` memory-bound (the rest unaffected): shares / what is kept.
  double slowdown(double compute_share, double memory_share) const {
    return (1.0 - compute_share - memory_share) + compute_share / clock + memory_share / hbm;
  }
};
/// The die's law at depth `die_depth` (clock) and the HBM's at `hbm_depth` (bandwidth).
Derate derate_at_depth(const ThermalParams& p, double die_depth, double hbm_depth);

/// Power of work under a derate: the idle part stays, the compute-bound dynamic part's
/// energy scales with the square of the clock (dynamic power C V^2 f with the voltage
/// tracking the clock, docs/nonideal.md sec 2), the memory part's energy stays, and the
/// work takes `slowdown` times longer. The HBM stacks dissipate `hbm_W` of the memory part
/// (the energy of the bytes they move); the die the rest.
struct WorkPower {
  double idle_W = 0;     ///< static power, drawn whatever runs (dissipated in the die)
  double compute_W = 0;  ///< dynamic power of the compute-bound part at full clock
  double memory_W = 0;   ///< dynamic power of the data movement (HBM, L2, links)
  double compute_share = 0, memory_share = 0;  ///< of the full-speed time (roofline)
  double hbm_W = 0;                            ///< of memory_W: the HBM stacks' own
  double full_W() const { return idle_W + compute_W + memory_W; }
  bool operator==(const WorkPower&) const = default;
  double at(const Derate& d) const {
    const double s = d.slowdown(compute_share, memory_share);
    return idle_W + (compute_W * d.clock * d.clock + memory_W) / s;
  }
  /// The same power split between the die and the HBM (the sink dissipates none).
  NodeVector nodes_at(const Derate& d) const {
    const double hbm = hbm_W / d.slowdown(compute_share, memory_share);
    return {at(d) - hbm, hbm, 0.0};
  }
};

/// The closed form of the analytical mode (docs/nonideal.md sec 2): the steady state of a
/// GPU whose step draws `w` on average. Each throttling node settles where its temperature
/// meets its law: Linear, T = onset + depth x span inside the span; Step, a sliding mode at
/// the onset, derated a fraction `depth` of the time (hysteresis neglected). The two nodes'
/// depths are solved together (nested bisections: each node's temperature falls as either
/// depth grows); their derates are taken as independent (Step: the four combinations).
struct ThermalSteadyState {
  double die_C = 0, hbm_C = 0, sink_C = 0;  ///< time-average temperatures
  double die_depth = 0, hbm_depth = 0;
  /// Share of the time under any thermal slowdown (die or HBM): the one "throttled" figure
  /// (docs/nonideal.md sec 2). Linear law: a node at depth d steps its clock bins like the
  /// DES replay, whose first of `levels` bins then engages min(1, d x levels) of the time.
  double throttle_fraction = 0;
  double slowdown = 1.0;  ///< time of the work / its time unthrottled
  double power_W = 0;     ///< average power at the steady state
  Derate derate;          ///< time-averaged clock and HBM kept
};
ThermalSteadyState steady_state(const ThermalParams& p, const WorkPower& w, int levels = 20);

}  // namespace rapid
