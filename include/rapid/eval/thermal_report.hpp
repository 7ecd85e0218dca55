// Text and timeline tracks of a DES run's thermal steady states (`rapid predict --fidelity
// des [--timeline]`, docs/nonideal.md sec 7).
#pragma once

#include <string>

#include "rapid/des/timeline.hpp"
#include "rapid/eval/nonideal_evaluator.hpp"

namespace rapid {

/// Simulations and replayed periods to the fixed point, and each simulated GPU's steady
/// state (die and HBM temperatures, throttled share, clock and bandwidth kept, power) and
/// its heating from idle (first throttled, DVFS engagements).
std::string describe_thermal(const ThermalReport& t);

/// The one "throttled" figure of every output line (docs/nonideal.md sec 2): the share of
/// the time under any thermal slowdown, then the die's and the HBM's own shares.
std::string describe_throttling(double any, double die, double hbm);

/// Counter tracks per simulated GPU from its heating trace (recorded from an idle start):
/// temperature_C (the die), hbm_temperature_C, power_W, sm_clock (fraction kept) and
/// hbm_bandwidth_TBps (what is kept of `hbm_bandwidth_Bps`).
void add_thermal_counters(const ThermalReport& t, double hbm_bandwidth_Bps,
                          des::Timeline& timeline);

}  // namespace rapid
