#include "rapid/des/sim_size.hpp"

#include <fmt/format.h>

#include "rapid/workload/zero_schedule.hpp"

namespace rapid::des {

SimSize estimate_sim_size(const Workload& w, bool one_replica) {
  SimSize s;
  const int64_t pp = w.par.pp, dp = w.par.dp;
  s.microbatches = w.num_microbatches;
  s.passes_per_stage = 2 * int64_t{w.par.vpp} * w.num_microbatches;
  s.instances = one_replica ? pp : pp * dp;
  // Per pass under ZeRO 2 and 3: at most one reduction (and under ZeRO 3 one gather) per
  // unit of the stage (zero3_units bounds the buckets too: a bucket holds one unit or more).
  const ZeroSchedule z = zero_schedule(w.par.zero_stage);
  if (z.reduce_every_microbatch || z.gather_per_pass)
    for (const StageInfo& st : w.stages)
      s.dp_ops_per_pass += static_cast<double>(zero3_units(st, false) + zero3_units(st, true)) *
                           (z.gather_per_pass ? 2 : 1);
  const auto passes = static_cast<double>(s.passes_per_stage);
  s.bytes = passes * (static_cast<double>(s.instances) * kSimBytesPerInstancePass +
                      static_cast<double>(pp) * kSimBytesPerStagePass +
                      s.dp_ops_per_pass * kSimBytesPerDpOp);
  return s;
}

std::string SimSize::describe() const {
  return fmt::format(
      "{} micro-batches x {} passes x {} stage instances: about {:.3g} GiB of per-pass state",
      microbatches, microbatches > 0 ? passes_per_stage / microbatches : 0, instances,
      bytes / (1 << 30));
}

SimulationTooLarge::SimulationTooLarge(const SimSize& size)
    : LimitError(fmt::format("step too large to simulate pass by pass: {} (at most {} MiB)",
                             size.describe(), kMaxSimStateBytes / (1 << 20))),
      size_(size) {}

void check_sim_size(const Workload& w, bool one_replica) {
  const SimSize s = estimate_sim_size(w, one_replica);
  if (s.bytes > kMaxSimStateBytes) throw SimulationTooLarge(s);
}

}  // namespace rapid::des
