#include "rapid/spec/training_spec.hpp"

#include <iterator>
#include <string>
#include <utility>

#include <fmt/format.h>

#include "rapid/spec/yaml_reader.hpp"
#include "stack_keys.hpp"

namespace rapid {

void apply_framework_defaults(TrainingSpec& t) {
  const FrameworkSpec& f = t.framework;
  t.grad_bytes = f.grad_bytes;
  t.grad_reduce_bytes = f.grad_reduce_bytes;
  t.optimizer_bytes = f.optimizer_bytes;
  t.overlap_grad_reduce = f.overlap_grad_reduce;
  t.overlap_param_gather = f.overlap_param_gather;
  t.tp_comm_overlap = f.tp_comm_overlap;
  t.host_overhead_per_op_s = f.host_overhead_per_op_s;
  t.compute_efficiency = f.compute_efficiency;
  t.sp_keeps_gathered_inputs = f.sp_keeps_gathered_inputs;
  t.grad_bucket_bytes = f.grad_bucket_bytes;
  t.memory_reserve_bytes = f.memory_reserve_bytes;
  t.fragmentation = f.fragmentation;
  t.master_weights_in_params = f.master_weights_in_params;
  t.fp32_grad_copy = f.fp32_grad_copy;
  t.zero3_prefetch_units = f.zero3_prefetch_units;
  t.zero3_grad_buffers = f.zero3_grad_buffers;
  t.grad_bucket_buffers = f.grad_bucket_buffers;
  t.compile = f.compile;
}

TrainingSpec parse_training(const YamlMap& m, int64_t model_seq_length, const std::string& anchor) {
  TrainingSpec t;
  t.framework = load_framework(m.string_or("framework", kDefaultFramework), anchor, m.file(),
                               m.key_path("framework"));
  apply_framework_defaults(t);
  read_training_keys(m, model_seq_length, t);
  return t;
}

void read_training_keys(const YamlMap& m, int64_t model_seq_length, TrainingSpec& t) {
  t.global_batch_size = m.integer("global_batch_size", 1, 100000000);
  // A model file may leave seq_length out (an imported one does: max_position_embeddings is
  // a context limit, not a training length); the job must then give it.
  if (model_seq_length <= 0 && !m.has("seq_length"))
    m.fail("seq_length", "<missing>", "a sequence length (the model file sets none)");
  t.seq_length = m.integer_or("seq_length", model_seq_length, 1, 100000000);
  t.dtype = static_cast<DType>(
      m.choice_or("dtype", {"fp32", "tf32", "fp16", "bf16", "fp8"}, static_cast<int>(t.dtype)));
  t.framework.attention = detail::read_attention(m, t.framework.attention);
  // The stack's scaling recipe (its fp8: {recipe:}), which a job may override.
  t.framework.fp8.recipe = static_cast<Fp8Scaling>(
      m.choice_or("fp8_recipe", {std::begin(kFp8ScalingNames), std::end(kFp8ScalingNames)},
                  static_cast<int>(t.framework.fp8.recipe)));
  detail::read_stack_keys(m, t);
  t.balance_pipeline_stages = m.boolean_or("balance_pipeline_stages", t.balance_pipeline_stages);
  // torchtitan's async TP is an Inductor pass (torchtitan/config/job_config.py: async TP
  // "requires torch.compile"); a stack saying so refuses TP overlap without compile.
  if (t.tp_comm_overlap && !t.compile && !t.framework.tp_comm_overlap_without_compile)
    m.fail("tp_comm_overlap", "true",
           fmt::format("compile: true (stack {} overlaps TP only under torch.compile)",
                       t.framework.name));
  m.finish();
}

}  // namespace rapid

namespace rapid {

namespace {

// The stack's end-to-end factors for `hw`: a variant runs the stack its base GPU runs
// (docs/variants.md); a GPU no stack lists runs those of the GPU its file names in
// `stack_factors_from` (the same die and kernels), before the stack's `default`.
EndToEndFactors stack_factors(const HardwareSpec& hw, const TrainingSpec& t) {
  const std::string& own = hw.base_name.empty() ? hw.name : hw.base_name;
  if (!hw.stack_factors_from.empty() && !t.framework.end_to_end.contains(own))
    return t.framework.factors_for(hw.stack_factors_from);
  return t.framework.factors_for(own);
}

}  // namespace

unsigned requested_overlaps(const TrainingSpec& t) {
  return (t.tp_comm_overlap ? kOverlapTpComm : 0u) |
         (t.overlap_grad_reduce ? kOverlapGradReduce : 0u) |
         (t.overlap_param_gather ? kOverlapParamGather : 0u);
}

HardwareSpec stack_hardware(const HardwareSpec& hw, const TrainingSpec& t) {
  HardwareSpec out = hw;
  const EndToEndFactors f = stack_factors(hw, t);
  out.step_efficiency = f.step;
  out.elementwise_efficiency = f.elementwise;
  return out;
}

unsigned uncredited_overlaps(const HardwareSpec& hw, const TrainingSpec& t) {
  return requested_overlaps(t) & ~stack_factors(hw, t).fitted_overlaps;
}

TrainingSpec stack_training(const HardwareSpec& hw, const TrainingSpec& t) {
  // The end-to-end factors and the overlaps the model credits are fitted as one pair: on
  // the runs the factors come from, whatever the model gets wrong about their overlaps is
  // absorbed in the factors (docs/model.md sec 9). An overlap those runs did not have has
  // no such correction on this GPU, so it is not credited: its collectives run exposed, as
  // in the runs the factors were fitted on.
  TrainingSpec out = t;
  const unsigned drop = uncredited_overlaps(hw, t);
  if (drop & kOverlapTpComm) out.tp_comm_overlap = false;
  if (drop & kOverlapGradReduce) out.overlap_grad_reduce = false;
  if (drop & kOverlapParamGather) {
    out.overlap_param_gather = false;
    // ZeRO-3/FSDP's prefetch of the next unit is not an opt-in overlap whose error the
    // factors absorbed: it is how those stacks run, in every run of them. PyTorch FSDP2
    // issues the next block's all-gather on its own stream before the current block computes
    // (torch/distributed/fsdp/_fully_shard/_fsdp_state.py, implicit prefetch; FSDP1's
    // BackwardPrefetch.BACKWARD_PRE is its default), DeepSpeed ZeRO-3 fetches ahead up to
    // stage3_prefetch_bucket_size (deepspeed/runtime/zero/partitioned_param_coordinator.py
    // fetch_sub_module), Megatron-FSDP prefetches in pass order up to
    // suggested_AG_prefetch_size (megatron/core/distributed/fsdp/src/megatron_fsdp/
    // megatron_fsdp.py, AllGatherPipeline.all_gather_params). So a stack that prefetches
    // (zero3_prefetch_units > 0) keeps it whatever the fitted runs had; only the ZeRO-1/2
    // gather of the updated weights (the distributed optimizer's) follows fitted_overlaps.
    out.zero3_prefetch_credited = t.zero3_prefetch_units > 0;
  }
  return out;
}

std::string overlap_names(unsigned bits) {
  std::string out;
  const std::pair<unsigned, const char*> names[] = {{kOverlapTpComm, "tp_comm_overlap"},
                                                    {kOverlapGradReduce, "overlap_grad_reduce"},
                                                    {kOverlapParamGather, "overlap_param_gather"}};
  for (const auto& [bit, name] : names)
    if (bits & bit) out += (out.empty() ? "" : ", ") + std::string(name);
  return out;
}

AttentionImpl attention_kernel(const HardwareSpec& hw, const TrainingSpec& t) {
  if (!t.fused_attention()) return AttentionImpl::Unfused;
  const AttentionImpl a = t.framework.pick_attention(hw.attention_kernels());
  return a == AttentionImpl::Unfused ? AttentionImpl::FA2 : a;
}

}  // namespace rapid
