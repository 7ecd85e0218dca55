#include "rapid/spec/training_spec.hpp"

#include "rapid/spec/yaml_reader.hpp"
#include "stack_keys.hpp"

namespace rapid {

void apply_framework_defaults(TrainingSpec& t) {
  const FrameworkSpec& f = t.framework;
  t.grad_bytes = f.grad_bytes;
  t.grad_reduce_bytes = f.grad_reduce_bytes;
  t.overlap_grad_reduce = f.overlap_grad_reduce;
  t.overlap_param_gather = f.overlap_param_gather;
  t.tp_comm_overlap = f.tp_comm_overlap;
  t.host_overhead_per_op_s = f.host_overhead_per_op_s;
  t.compute_efficiency = f.compute_efficiency;
  t.sp_keeps_gathered_inputs = f.sp_keeps_gathered_inputs;
  t.grad_bucket_bytes = f.grad_bucket_bytes;
  t.memory_reserve_bytes = f.memory_reserve_bytes;
  t.fragmentation = f.fragmentation;
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
  detail::read_stack_keys(m, t);
  t.balance_pipeline_stages = m.boolean_or("balance_pipeline_stages", t.balance_pipeline_stages);
  m.finish();
}

}  // namespace rapid

namespace rapid {

HardwareSpec stack_hardware(const HardwareSpec& hw, const TrainingSpec& t) {
  HardwareSpec out = hw;
  // A variant runs the stack its base GPU runs (docs/variants.md).
  const EndToEndFactors f = t.framework.factors_for(hw.base_name.empty() ? hw.name : hw.base_name);
  out.step_efficiency = f.step;
  out.elementwise_efficiency = f.elementwise;
  return out;
}

AttentionImpl attention_kernel(const HardwareSpec& hw, const TrainingSpec& t) {
  if (!t.fused_attention()) return AttentionImpl::Unfused;
  const AttentionImpl a = t.framework.pick_attention(hw.attention_kernels());
  return a == AttentionImpl::Unfused ? AttentionImpl::FA2 : a;
}

}  // namespace rapid
