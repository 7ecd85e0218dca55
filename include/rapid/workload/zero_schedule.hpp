// What a ZeRO stage synchronizes over the data-parallel group, and when: the one statement
// of the rule that the closed form (analytical/data_parallel.cpp), the DES's stage programs
// (des/stage_program.cpp) and through them the Chakra traces read.
//  ZeRO 0: all-reduce of the gradients once per step (PyTorch DDP; Li et al. 2020);
//  ZeRO 1: reduce-scatter of the gradients and all-gather of the updated weights, per step
//          (Rajbhandari et al. 2020, "ZeRO", sec. 5; Megatron-Core's distributed optimizer);
//  ZeRO 2: the gradients reduce-scattered every micro-batch, the weights gathered per step
//          (ZeRO sec. 5.2: gradients are reduced as they are produced);
//  ZeRO 3: the weights gathered before every forward and every backward pass, the gradients
//          reduce-scattered every micro-batch (ZeRO sec. 5.3; PyTorch FSDP, Zhao et al. 2023).
#pragma once

#include "rapid/workload/op.hpp"
#include "rapid/workload/workload.hpp"

namespace rapid {

/// Bytes of one gathered weight: the 16-bit copy the passes compute with (bf16/fp16 mixed
/// precision; Micikevicius et al. 2018).
inline constexpr double kGatheredParamBytes = 2.0;

struct ZeroSchedule {
  /// The gradients' collective: all-reduce (ZeRO 0) or reduce-scatter.
  CollectiveKind reduce = CollectiveKind::AllReduce;
  bool reduce_every_microbatch = false;  ///< ZeRO >= 2; else once per step
  bool gather_per_step = false;          ///< ZeRO 1 and 2: the updated weights, once
  bool gather_per_pass = false;          ///< ZeRO 3: before every forward and backward
};

constexpr ZeroSchedule zero_schedule(int zero_stage) {
  ZeroSchedule z;
  z.reduce = zero_stage == 0 ? CollectiveKind::AllReduce : CollectiveKind::ReduceScatter;
  z.reduce_every_microbatch = zero_stage >= 2;
  z.gather_per_step = zero_stage == 1 || zero_stage == 2;
  z.gather_per_pass = zero_stage >= 3;
  return z;
}

/// A stage's ZeRO-3 / FSDP units over one DP group (a unit's weights are gathered and its
/// gradients reduced as one collective; PyTorch FSDP wraps each transformer layer, Zhao et
/// al. 2023 sec 3.2): of the dense parameters (DP x CP group) each layer, the embedding and
/// the LM head; of the experts (expert-DP group) each MoE layer's. The closed form's unit
/// count and the DES stage program's owners (des/stage_program.cpp build_owners).
constexpr int64_t zero3_units(const StageInfo& st, bool experts) {
  return experts ? st.num_moe_layers
                 : st.num_layers + (st.has_embedding ? 1 : 0) + (st.has_lm_head ? 1 : 0);
}

}  // namespace rapid
