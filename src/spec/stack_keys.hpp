// The training keys a stack file sets and a job's training: may override (the stack's
// defaults): one reader for both, over a FrameworkSpec or a TrainingSpec (same field names).
#pragma once

#include <iterator>
#include <string>
#include <vector>

#include "rapid/spec/attention_impl.hpp"
#include "rapid/spec/yaml_reader.hpp"

namespace rapid::detail {

/// `attention:` as a list of kernels in order of preference, else `fallback`.
inline std::vector<AttentionImpl> read_attention(const YamlMap& m,
                                                 std::vector<AttentionImpl> fallback) {
  const std::vector<std::string> names(std::begin(kAttentionImplNames),
                                       std::end(kAttentionImplNames));
  const std::vector<int> picks = m.choice_list_or("attention", names, {});
  if (picks.empty()) return fallback;
  std::vector<AttentionImpl> out;
  for (int p : picks) out.push_back(static_cast<AttentionImpl>(p));
  return out;
}

/// Overlaps, gradient dtypes and buckets, host issue time, kernel speed, SP inputs kept,
/// memory reserve and fragmentation, over the values `s` has.
template <class S>
void read_stack_keys(const YamlMap& m, S& s) {
  // Bytes per gradient element: bf16, fp32, or a bf16 .grad with an fp32 accumulation
  // buffer beside it (nanotron's accumulate_grad_in_fp32).
  constexpr int kGradBytes[] = {2, 4, 6};
  auto grad_choice = [](int bytes) { return bytes == 2 ? 0 : bytes == 4 ? 1 : 2; };
  s.grad_bytes = kGradBytes[m.choice_or("main_grad_dtype", {"bf16", "fp32", "bf16+fp32"},
                                        grad_choice(s.grad_bytes))];
  s.grad_reduce_bytes = kGradBytes[m.choice_or("grad_reduce_dtype", {"bf16", "fp32"},
                                               grad_choice(s.grad_reduce_bytes))];
  // Where the master weights live (docs/model.md sec 3): `fp32`, a copy in the optimizer
  // (Megatron-Core's distributed optimizer, DeepSpeed); `bf16_remainder`, the low 16 bits of
  // the fp32 value kept beside the bf16 weight (Apex DistributedFusedAdam
  // store_param_remainders, which NeMo 1.x selects for bf16 models); `params`, fp32 sharded
  // parameters that are the master weights themselves (FSDP2 MixedPrecisionPolicy). Adam's
  // m + v (8 bytes) + 4, 2, or 4 held by the parameters (memory_model.cpp).
  const int master = m.choice_or("master_weights", {"fp32", "bf16_remainder", "params"},
                                 s.master_weights_in_params ? 2
                                 : s.optimizer_bytes == 10  ? 1
                                                            : 0);
  s.optimizer_bytes = master == 1 ? 10 : 12;
  s.master_weights_in_params = master == 2;
  s.overlap_grad_reduce = m.boolean_or("overlap_grad_reduce", s.overlap_grad_reduce);
  s.overlap_param_gather = m.boolean_or("overlap_param_gather", s.overlap_param_gather);
  s.tp_comm_overlap = m.boolean_or("tp_comm_overlap", s.tp_comm_overlap);
  s.compute_efficiency = m.number_or("compute_efficiency", s.compute_efficiency, 0.05, 1.5);
  s.sp_keeps_gathered_inputs = m.boolean_or("sp_keeps_gathered_inputs", s.sp_keeps_gathered_inputs);
  s.host_overhead_per_op_s =
      m.quantity_or("host_overhead_per_op", Dimension::Time, s.host_overhead_per_op_s);
  s.grad_bucket_bytes = m.quantity_or("grad_bucket_size", Dimension::Size, s.grad_bucket_bytes);
  // Reserve: CUDA context + cuBLAS/NCCL workspaces; the caching allocator's fragmentation
  // on top (PRODUCT.md section 7: keep a reserve and say how big).
  s.memory_reserve_bytes = m.quantity_or("memory_reserve", Dimension::Size, s.memory_reserve_bytes);
  s.fragmentation = m.number_or("fragmentation", s.fragmentation, 0.0, 3.0);
  // Which communication buffers the stack allocates (docs/model.md sec 3).
  s.fp32_grad_copy = m.boolean_or("fp32_grad_copy", s.fp32_grad_copy);
  s.zero3_prefetch_units =
      static_cast<int>(m.integer_or("zero3_prefetch_units", s.zero3_prefetch_units, 0, 64));
  s.zero3_grad_buffers = m.boolean_or("zero3_grad_buffers", s.zero3_grad_buffers);
  s.grad_bucket_buffers =
      static_cast<int>(m.integer_or("grad_bucket_buffers", s.grad_bucket_buffers, 0, 8));
  s.compile = m.boolean_or("compile", s.compile);
}

}  // namespace rapid::detail
