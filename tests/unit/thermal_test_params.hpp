// Thermal parameters with round numbers for the thermal tests (docs/nonideal.md sec 2).
#pragma once

#include "rapid/nonideal/thermal_model.hpp"

namespace rapid::test {

/// The lumped form dT/dt = alpha P - beta (T - T_amb) with alpha 0.015 C/J, beta 0.15 /s,
/// ambient 25 C, carried by the die: 1 / alpha = 66.667 J/C behind alpha / beta = 0.1 C/W
/// to the coolant (die -> sink 0.1 - 1e-6 C/W, sink -> coolant 1e-6 C/W), so T_die = 25 +
/// 0.1 P at a steady state; the sink and HBM (1e-3 J/C, 1e-6 C/W) sit at the coolant's
/// temperature, 1e7 C/W from the die. The die's law: SW slowdown from 87 C, full depth
/// (clock 0.5) at 89 C; the HBM's is never reached.
inline ThermalParams lumped_die() {
  ThermalParams p;
  ThermalCircuit c;
  c.die_J_per_C = 1 / 0.015;
  c.die_sink_C_per_W = 0.1 - 1e-6;
  c.sink_coolant_C_per_W = 1e-6;
  c.sink_J_per_C = c.hbm_J_per_C = 1e-3;
  c.hbm_sink_C_per_W = 1e-6;
  c.die_hbm_C_per_W = 1e7;
  p.set_circuit(c);
  p.ambient_C = 25;
  p.die = NodeLimit{87, 2, 0.5, 92};
  p.hbm = NodeLimit{95, 5, 0.73, 102};
  return p;
}

/// lumped_die() with other resistances (C/W): die -> sink, HBM -> sink, die <-> HBM,
/// sink -> coolant (for the closed form: the capacities do not matter at a steady state).
inline ThermalParams with_resistances(double die_sink, double hbm_sink, double die_hbm,
                                      double sink) {
  ThermalParams p = lumped_die();
  ThermalCircuit c = p.circuit();
  c.die_sink_C_per_W = die_sink;
  c.hbm_sink_C_per_W = hbm_sink;
  c.die_hbm_C_per_W = die_hbm;
  c.sink_coolant_C_per_W = sink;
  p.set_circuit(c);
  return p;
}

/// Work drawing `idle_W` plus `compute_W` (a `compute_share` of its time compute-bound) and
/// `memory_W` of data movement (a `memory_share` memory-bound), `hbm_W` of it the HBM's.
inline WorkPower work(double idle_W, double compute_W, double memory_W, double compute_share,
                      double memory_share, double hbm_W) {
  return WorkPower{.idle_W = idle_W,
                   .compute_W = compute_W,
                   .memory_W = memory_W,
                   .compute_share = compute_share,
                   .memory_share = memory_share,
                   .hbm_W = hbm_W};
}

/// A compute-bound op: idle 100 W plus `compute_W` of dynamic power.
inline WorkPower compute_bound(double compute_W) {
  WorkPower w{.idle_W = 100, .compute_W = compute_W, .compute_share = 1.0};
  return w;
}

}  // namespace rapid::test
