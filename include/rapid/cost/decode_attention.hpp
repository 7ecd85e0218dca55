// Time of decode attention on one GPU: each running sequence's one new query token attends
// to its whole KV cache (paged attention, Kwon et al. 2023; split-KV "Flash-Decoding", Dao
// et al. 2023). The kernel splits every sequence's keys over thread blocks so that all SMs
// stream the cache whatever the batch, then a second kernel reduces the partial softmaxes:
//   bytes   = cached tokens x KV elements per token x element size   (the cache, read once)
//   flops   = 2 x cached tokens x query heads x (score dim + value dim)  (QK^T and PV)
//   time    = max(bytes / (HBM bandwidth x efficiency), flops / (tensor peak x attention
//             efficiency)) + 2 launches
// GQA: the query heads sharing a K/V head read it once (packed into one tile's rows);
// MLA (DeepSeek-V2 sec 2.1.2, weights absorbed): every head reads the one compressed latent
// (kv_lora_rank + rope dims) as keys and its first kv_lora_rank dims as values.
#pragma once

#include <cstdint>

#include "rapid/spec/hardware_spec.hpp"
#include "rapid/workload/op.hpp"

namespace rapid {

struct DecodeAttentionTime {
  double time_s = 0;
  double memory_s = 0;
  double compute_s = 0;
  double bytes = 0;
  double flops = 0;
};

/// `op` a DecodeAttention op of the layer graph (its bytes and flops as above, set by
/// workload/layer_graph.hpp); `attention_efficiency` the kernel's tensor-core efficiency
/// (HardwareSpec attention efficiency forward).
DecodeAttentionTime decode_attention_time(const HardwareSpec& hw, const Op& op,
                                          double attention_efficiency);

}  // namespace rapid
