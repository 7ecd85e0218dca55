// Compute and communication on the same GPU slow each other down (docs/architecture.md
// "Overlap"; docs/model.md "Interference"). A communication kernel running beside a
// compute kernel holds SMs (NCCL: one thread block per channel; Transformer Engine's TP
// overlap: its configured SMs) and HBM bandwidth (about 2 bytes of local traffic per byte
// it moves), so the compute kernel runs on fewer SMs (its waves re-quantize: a GEMM whose
// tiles filled the GPU needs an extra wave) and with less bandwidth; the collective slows
// when the two together ask more of HBM than it has. Measured: GEMMs overlapped with
// NCCL collectives run 18.9% slower on average, 40% at most (arXiv 2507.03114); 30-40%
// (pytorch/pytorch PR 179937); a 132-CTA GEMM beside a 24-block all-gather on H100 nearly
// doubles (NVIDIA developer forum: wave quantization).
#pragma once

#include <array>
#include <cstdint>

#include "rapid/cost/compute_cost.hpp"
#include "rapid/spec/network_spec.hpp"
#include "rapid/spec/training_spec.hpp"
#include "rapid/workload/workload.hpp"

namespace rapid {

class InterferenceModel {
 public:
  /// What may run beside compute: a TP-overlap all-gather or reduce-scatter (TE
  /// userbuffers), or an NCCL collective of the DP stream within one node (NVLink) or
  /// across nodes.
  enum Profile : uint8_t { TpGather, TpScatter, DpNvlink, DpNetwork };
  static constexpr int kProfiles = 4;

  /// `hw` as the stack runs it (stack_hardware). Builds one ComputeCost per profile.
  InterferenceModel(const HardwareSpec& hw, const NetworkSpec& net, const TrainingSpec& training,
                    AttentionImpl attention);

  /// The cost model of compute ops while profile `p`'s kernel runs.
  const ComputeCost& cost(Profile p) const { return costs_[p]; }
  /// What profile `p` holds (SMs, HBM bandwidth).
  const Contention& contention(Profile p) const { return costs_[p].contention(); }

  static Profile tp_profile(CollectiveKind k) {
    return k == CollectiveKind::AllGather ? TpGather : TpScatter;
  }
  static Profile dp_profile(const GroupShape& g) { return g.nodes > 1 ? DpNetwork : DpNvlink; }
  /// The profile of collective `comm` of workload `w`: TP overlap or the DP stream's.
  static Profile profile_of(const Op& comm, const Workload& w) {
    return comm.group == CommGroup::TP ? tp_profile(comm.collective)
                                       : dp_profile(w.group(comm.group));
  }

  /// Factor (>= 1) on a collective's time when it overlaps `op`, which takes `op_s`
  /// seconds beside it: HBM shared max-min fairly between the op's traffic (op.bytes /
  /// op_s) and the collective's (contention(p).hbm_Bps).
  double comm_slowdown(Profile p, const Op& op, double op_s) const;

 private:
  std::array<ComputeCost, kProfiles> costs_;
  double hbm_Bps_;  // achievable HBM bandwidth
};

}  // namespace rapid
