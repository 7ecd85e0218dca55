// Model FLOPs per token for MFU (Chowdhery et al. 2022, PaLM, Appendix B; Narayanan et al.
// 2021, eq. 3): 6 * (matmul parameters of the layers + LM head) + 12 * L * s * a * d
// (attention scores and context, forward + backward, counted without the causal mask, as
// Megatron-LM and PaLM do). The input embedding is a lookup and costs no FLOPs.
// Multi-head latent attention (DeepSeek-V2 sec 2.1): the matmul parameters are the MLA
// projections (ModelSpec::attention_matmul_params), and the core is
// 6 * L * s * a * (d_qk + d_v) with d_qk = nope + rope and d_v the value head dim (QK^T
// over d_qk, PV over d_v: 2 s a (d_qk + d_v) forward per token, x3 with the backward).
#pragma once

#include <cstdint>

#include "rapid/spec/model_spec.hpp"

namespace rapid {

/// Training FLOPs per token (forward + backward, no recompute) at sequence length `seq`.
double model_flops_per_token(const ModelSpec& model, int64_t seq);

/// The attention core's share of it in one layer (forward + backward, full s x s):
/// 6 s a (d_qk + d_v), i.e. 12 s a d with one head dim.
double attention_core_flops_per_token(const ModelSpec& model, int64_t seq);

/// Megatron-LM's reported FLOPs per iteration with full recomputation (Narayanan et al.
/// 2021, eq. 3): 96 B s l h^2 (1 + s/(6h) + V/(16 l h)); GPT shapes (f = 4h, MHA).
double megatron_sc21_flops(int64_t batch, int64_t seq, int64_t layers, int64_t hidden,
                           int64_t vocab);

}  // namespace rapid
