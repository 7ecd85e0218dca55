// How much state a discrete-event simulation keeps per pass of its step, estimated before
// anything is allocated (docs/des.md "Size"). Every pass of every micro-batch has its
// schedule entry and its arrival time; under ZeRO 2 and 3 its DP collectives too. A step of
// 1e8 micro-batches simulated in full (`--full`) would need gigabytes: it is refused with
// SimulationTooLarge (a LimitError: the point's row gets status error, error_code limit;
// `rapid predict` names the flag that asked for it and exits 2).
#pragma once

#include <cstdint>
#include <string>

#include "rapid/common/error.hpp"
#include "rapid/workload/workload.hpp"

namespace rapid::des {

/// Bytes per pass and stage instance: its arrival time (one SimTime).
inline constexpr double kSimBytesPerInstancePass = 8;
/// Bytes per pass and stage: its schedule entry (PassRef, 12) and its hook offset (4).
inline constexpr double kSimBytesPerStagePass = 16;
/// Bytes per DP collective a pass posts (ZeRO 2: the gradients each backward, ZeRO 3: the
/// weights each pass as well): its hook, its DpOpSpec and its descriptor on the DP stream,
/// with room to spare.
inline constexpr double kSimBytesPerDpOp = 256;
/// Largest per-pass state a simulation may need: 512 MiB.
inline constexpr double kMaxSimStateBytes = 512.0 * (1 << 20);

/// The size of one simulation of `w` (one replica per stage, or every replica).
struct SimSize {
  int64_t microbatches = 0;
  int64_t passes_per_stage = 0;  ///< 2 x vpp x micro-batches
  int64_t instances = 0;         ///< pp, or pp x dp with every replica
  double dp_ops_per_pass = 0;    ///< DP collectives per pass, summed over the stages (bound)
  double bytes = 0;              ///< the per-pass state

  /// "100000000 micro-batches x 2 passes x 1 stage instances: about 4.5 GiB of per-pass state"
  std::string describe() const;
};

/// passes x (instances x kSimBytesPerInstancePass + pp x kSimBytesPerStagePass + DP
/// collectives per pass x kSimBytesPerDpOp), in double (no overflow whatever the batch).
SimSize estimate_sim_size(const Workload& w, bool one_replica);

/// A simulation past kMaxSimStateBytes, refused before it allocates.
class SimulationTooLarge : public LimitError {
 public:
  explicit SimulationTooLarge(const SimSize& size);
  const SimSize& size() const { return size_; }

 private:
  SimSize size_;
};

/// Throws SimulationTooLarge when estimate_sim_size(w, one_replica) is past kMaxSimStateBytes.
void check_sim_size(const Workload& w, bool one_replica);

}  // namespace rapid::des
