#include "rapid/spec/training_spec.hpp"

#include "rapid/spec/yaml_reader.hpp"

namespace rapid {

TrainingSpec parse_training(const YamlMap& m, int64_t model_seq_length) {
  TrainingSpec t;
  t.global_batch_size = m.integer("global_batch_size", 1, 100000000);
  t.seq_length = m.integer_or("seq_length", model_seq_length, 1, 100000000);
  t.dtype = static_cast<DType>(
      m.choice_or("dtype", {"fp32", "tf32", "fp16", "bf16", "fp8"}, static_cast<int>(t.dtype)));
  t.flash_attention = m.boolean_or("flash_attention", t.flash_attention);
  // Gradient dtypes: bf16 (2 bytes) or fp32 (4 bytes, Megatron's default main grads).
  constexpr int kGradBytes[] = {2, 4};
  t.grad_bytes = kGradBytes[m.choice_or("main_grad_dtype", {"bf16", "fp32"}, 1)];
  t.grad_reduce_bytes = kGradBytes[m.choice_or("grad_reduce_dtype", {"bf16", "fp32"}, 1)];
  t.overlap_grad_reduce = m.boolean_or("overlap_grad_reduce", t.overlap_grad_reduce);
  t.overlap_param_gather = m.boolean_or("overlap_param_gather", t.overlap_param_gather);
  t.tp_comm_overlap = m.boolean_or("tp_comm_overlap", t.tp_comm_overlap);
  t.framework_efficiency = m.number_or("framework_efficiency", t.framework_efficiency, 0.05, 1.0);
  t.sp_keeps_gathered_inputs = m.boolean_or("sp_keeps_gathered_inputs", t.sp_keeps_gathered_inputs);
  t.balance_pipeline_stages = m.boolean_or("balance_pipeline_stages", t.balance_pipeline_stages);
  t.host_overhead_per_op_s =
      m.quantity_or("host_overhead_per_op", Dimension::Time, t.host_overhead_per_op_s);
  t.grad_bucket_bytes = m.quantity_or("grad_bucket_size", Dimension::Size, t.grad_bucket_bytes);
  // Default reserve: ~0.5 GiB CUDA context + cuBLAS/NCCL workspaces; PyTorch's caching
  // allocator fragmentation on top (PRODUCT.md section 7: keep a reserve and say how big).
  t.memory_reserve_bytes = m.quantity_or("memory_reserve", Dimension::Size, t.memory_reserve_bytes);
  t.fragmentation = m.number_or("fragmentation", t.fragmentation, 0.0, 1.0);
  m.finish();
  return t;
}

}  // namespace rapid
