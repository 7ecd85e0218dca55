// One pass of ZeRO-3 (FSDP) units as the DES runs it (src/des/stage_program.cpp), in closed
// form: every unit's parameter gather is posted at the pass's start on the gather stream,
// one after the other (FSDP's prefetch; Zhao et al. 2023, "PyTorch FSDP", sec. 3.2); each
// unit computes when its own gather and the unit before it are done; in backward each
// unit's gradient reduce-scatter is posted as its compute ends, on the reduction stream.
// Both streams share the same links max-min fair (link_sharing.hpp): while a reduction
// runs beside a gather each moves at half its alone speed (one flow each per link).
// docs/model.md section 7, "ZeRO-3 units".
#pragma once

#include <cstddef>

namespace rapid {

/// A run of alike units: `count` units, each waiting for its own gather (`gather_s` alone,
/// its latency included), reducing its gradients after its compute in backward
/// (`reduce_s` alone on the links, no latency: the links are free meanwhile), computing
/// `compute_s`. The last `gather_latency_s` of a gather are its start-up latency, which the
/// DES charges after the gather's bytes have moved (src/des/communicator.cpp: an op is done
/// its latency after its last bundle drains): the links are free for the reductions then;
/// likewise a reduction's `reduce_latency_s` follows its `reduce_s` on the links, and the
/// next reduction starts after it.
struct UnitRun {
  double count = 0, gather_s = 0, reduce_s = 0, compute_s = 0, gather_latency_s = 0,
         reduce_latency_s = 0;
};

struct UnitPass {
  double exposed = 0;   ///< the pass's end minus its start minus its compute
  double trailing = 0;  ///< reduction seconds (alone) still queued at the pass's end
};

/// The pass over `runs` (in pass order) with `pending` seconds of reduction work queued on
/// the links at its start (what the pass before left). A forward pass (no reductions of its
/// own) in closed form; a backward pass as a fluid simulation of the two streams, unit by
/// unit, where within a run, once two consecutive units repeat the same increments (the
/// periodic regime of a max-plus system: Baccelli et al. 1992), the rest of the run is
/// extrapolated.
UnitPass unit_pass(const UnitRun* runs, size_t n, bool backward, double pending);

/// The same as a fluid simulation of every unit, forward and backward (the reference of the
/// tests).
UnitPass unit_pass_exhaustive(const UnitRun* runs, size_t n, bool backward, double pending);

}  // namespace rapid
