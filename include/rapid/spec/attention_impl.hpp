// Fused attention implementations (docs/attention.md): FlashAttention-2 (Dao 2023),
// FlashAttention-3 (Shah et al. 2024, Hopper only), cuDNN fused attention (cuDNN 9 flash
// SDPA, Transformer Engine's FusedAttention backend), or unfused softmax attention (Q K^T
// and P V as batched GEMMs around a softmax kernel).
#pragma once

#include <cstdint>

namespace rapid {

enum class AttentionImpl : uint8_t { Unfused, FA2, FA3, CuDNN };
inline constexpr int kNumAttentionImpls = 4;
inline constexpr const char* kAttentionImplNames[] = {"unfused", "fa2", "fa3", "cudnn"};
inline const char* attention_impl_name(AttentionImpl a) {
  return kAttentionImplNames[static_cast<int>(a)];
}

}  // namespace rapid
