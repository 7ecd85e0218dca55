// A step's power as the thermal model sees it, shared by the non-ideal evaluator's
// analytical and DES halves (src/eval/nonideal_evaluator.cpp, nonideal_des.cpp) and the
// periodic replay (thermal_replay.cpp).
#pragma once

#include <span>

#include "rapid/nonideal/thermal_model.hpp"
#include "rapid/nonideal/thermal_replay.hpp"

namespace rapid::nonideal_detail {

/// The whole step of `segments` as one WorkPower (the analytical closed form's input): the
/// work's dynamic power and roofline shares averaged over the step, the waits' power above
/// idle spread over it as energy that no derate stretches (dissipated in the die).
inline WorkPower whole_step(std::span<const PowerSegment> segments, double idle_W) {
  WorkPower w;
  w.idle_W = idle_W;
  double T = 0;
  for (const PowerSegment& s : segments) T += s.duration_s;
  if (T <= 0) return w;
  for (const PowerSegment& s : segments) {
    const double d = s.duration_s / T;
    if (s.stretches) {
      w.compute_W += s.work.compute_W * d;
      w.memory_W += s.work.memory_W * d;
      w.hbm_W += s.work.hbm_W * d;
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
  o.hbm_W = w.hbm_W / s;
  o.compute_share = w.compute_share / b.clock / s;
  o.memory_share = w.memory_share / b.hbm / s;
  return o;
}

}  // namespace rapid::nonideal_detail
