// Helpers shared by the non-ideal evaluator's analytical and DES halves
// (nonideal_evaluator.cpp, nonideal_des.cpp). Internal to src/nonideal.
#pragma once

#include <algorithm>

#include "rapid/nonideal/step_profile.hpp"
#include "rapid/nonideal/thermal_model.hpp"

namespace rapid::nonideal_detail {

/// The whole step of `prof` as one WorkPower (the analytical closed form's input): the
/// work's dynamic power and roofline shares averaged over the step, the waits' power above
/// idle spread over it as energy that no derate stretches.
inline WorkPower whole_step(const StepProfile& prof, double idle_W) {
  WorkPower w;
  w.idle_W = idle_W;
  const double T = prof.step_s();
  if (T <= 0) return w;
  for (const PowerSegment& s : prof.segments) {
    const double d = s.duration_s / T;
    if (s.stretches) {
      w.compute_W += s.work.compute_W * d;
      w.memory_W += s.work.memory_W * d;
      w.compute_share += s.work.compute_share * d;
      w.memory_share += s.work.memory_share * d;
    } else {
      w.memory_W += (s.work.full_W() - idle_W) * d;
    }
  }
  return w;
}

/// `w` running under derate `b` for good: what the thermal model then sees.
inline WorkPower under(const WorkPower& w, const Derate& b) {
  const double s = b.slowdown(w.compute_share, w.memory_share);
  WorkPower o = w;
  o.compute_W = w.compute_W * b.clock * b.clock / s;
  o.memory_W = w.memory_W / s;
  o.compute_share = w.compute_share / b.clock / s;
  o.memory_share = w.memory_share / b.hbm / s;
  return o;
}

/// Two GPUs heat alike (the hardware's throttle law is common to all).
inline bool same_cooling(const ThermalParams& a, const ThermalParams& b) {
  return a.alpha_C_per_J == b.alpha_C_per_J && a.beta_per_s == b.beta_per_s &&
         a.ambient_C == b.ambient_C && a.throttle_C == b.throttle_C;
}

}  // namespace rapid::nonideal_detail
