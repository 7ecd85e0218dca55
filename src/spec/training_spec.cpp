#include "rapid/spec/training_spec.hpp"

#include "rapid/spec/yaml_reader.hpp"

namespace rapid {

void apply_framework_defaults(TrainingSpec& t) {
  const FrameworkSpec& f = t.framework;
  t.grad_bytes = f.main_grad_bytes;
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
  t.seq_length = m.integer_or("seq_length", model_seq_length, 1, 100000000);
  t.dtype = static_cast<DType>(
      m.choice_or("dtype", {"fp32", "tf32", "fp16", "bf16", "fp8"}, static_cast<int>(t.dtype)));
  const std::vector<std::string> impls(std::begin(kAttentionImplNames),
                                       std::end(kAttentionImplNames));
  const std::vector<int> attention = m.choice_list_or("attention", impls, {});
  if (!attention.empty()) {
    t.framework.attention.clear();
    for (int a : attention) t.framework.attention.push_back(static_cast<AttentionImpl>(a));
  }
  // Gradient dtypes: bf16 (2 bytes), fp32 (4), or a bf16 .grad with an fp32 accumulator (6).
  constexpr int kGradBytes[] = {2, 4, 6};
  auto grad_choice = [](int bytes) { return bytes == 2 ? 0 : bytes == 4 ? 1 : 2; };
  t.grad_bytes = kGradBytes[m.choice_or("main_grad_dtype", {"bf16", "fp32", "bf16+fp32"},
                                        grad_choice(t.grad_bytes))];
  t.grad_reduce_bytes = kGradBytes[m.choice_or("grad_reduce_dtype", {"bf16", "fp32"},
                                               grad_choice(t.grad_reduce_bytes))];
  t.overlap_grad_reduce = m.boolean_or("overlap_grad_reduce", t.overlap_grad_reduce);
  t.overlap_param_gather = m.boolean_or("overlap_param_gather", t.overlap_param_gather);
  t.tp_comm_overlap = m.boolean_or("tp_comm_overlap", t.tp_comm_overlap);
  t.compute_efficiency = m.number_or("compute_efficiency", t.compute_efficiency, 0.05, 1.5);
  t.sp_keeps_gathered_inputs = m.boolean_or("sp_keeps_gathered_inputs", t.sp_keeps_gathered_inputs);
  t.balance_pipeline_stages = m.boolean_or("balance_pipeline_stages", t.balance_pipeline_stages);
  t.host_overhead_per_op_s =
      m.quantity_or("host_overhead_per_op", Dimension::Time, t.host_overhead_per_op_s);
  t.grad_bucket_bytes = m.quantity_or("grad_bucket_size", Dimension::Size, t.grad_bucket_bytes);
  // Reserve: CUDA context + cuBLAS/NCCL workspaces; the caching allocator's fragmentation
  // on top (PRODUCT.md section 7: keep a reserve and say how big).
  t.memory_reserve_bytes = m.quantity_or("memory_reserve", Dimension::Size, t.memory_reserve_bytes);
  t.fragmentation = m.number_or("fragmentation", t.fragmentation, 0.0, 3.0);
  m.finish();
}

}  // namespace rapid

namespace rapid {

HardwareSpec stack_hardware(const HardwareSpec& hw, const TrainingSpec& t) {
  HardwareSpec out = hw;
  const EndToEndFactors f = t.framework.factors_for(hw.name);
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
