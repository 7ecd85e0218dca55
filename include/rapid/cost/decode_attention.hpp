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

namespace rapid {

struct DecodeAttentionShape {
  double cached_tokens = 0;          ///< KV cache tokens of all sequences of the batch
  int64_t sequences = 0;             ///< sequences (one query token each)
  int64_t query_heads = 0;           ///< query heads on this GPU
  double kv_elements_per_token = 0;  ///< cache elements per token on this GPU (one layer)
  int64_t score_dim = 0;             ///< per head: elements of q.k (head_dim; MLA kv_lora + rope)
  int64_t value_dim = 0;             ///< per head: elements of the value read (MLA: kv_lora)
};

struct DecodeAttentionTime {
  double time_s = 0;
  double memory_s = 0;
  double compute_s = 0;
  double bytes = 0;
  double flops = 0;
};

/// `element_bytes` of the cache (2 for bf16, 1 for fp8); `attention_efficiency` the kernel's
/// tensor-core efficiency (HardwareSpec attention efficiency forward).
DecodeAttentionTime decode_attention_time(const HardwareSpec& hw, const DecodeAttentionShape& s,
                                          double element_bytes, double attention_efficiency);

}  // namespace rapid
