// FNV-1a, 64-bit (Fowler, Noll & Vo, "The FNV Non-Cryptographic Hash Algorithm", IETF
// draft-eastlake-fnv): the one hash of memo keys, template caches and file names. Every
// user confirms a hit by comparing the values, so collisions cost a miss, never a wrong
// answer.
#pragma once

#include <cstdint>
#include <cstring>

namespace rapid {

inline constexpr uint64_t kFnvOffsetBasis = 0xcbf29ce484222325ull;
inline constexpr uint64_t kFnvPrime = 0x100000001b3ull;

/// One FNV-1a step: `h` with `v` folded in (a byte, or a whole 64-bit word).
inline uint64_t fnv1a(uint64_t h, uint64_t v) {
  return (h ^ v) * kFnvPrime;
}

/// FNV-1a over `n` bytes from `p`, one byte per step.
inline uint64_t fnv1a_bytes(uint64_t h, const void* p, size_t n) {
  const auto* b = static_cast<const unsigned char*>(p);
  for (size_t i = 0; i < n; ++i) h = fnv1a(h, b[i]);
  return h;
}

/// A double's bits as one word step.
inline uint64_t fnv1a(uint64_t h, double x) {
  uint64_t b;
  std::memcpy(&b, &x, sizeof b);
  return fnv1a(h, b);
}

}  // namespace rapid
