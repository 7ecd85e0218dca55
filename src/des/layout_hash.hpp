// The hash step CommLayouts uses for link signatures and class sequences (FNV-1a's prime
// 0x100000001B3 with a shift mixing the high bits back; Fowler, Noll & Vo, "FNV hash",
// IETF draft-eastlake-fnv). Equal hashes are always confirmed by comparing the values.
// Internal to src/des.
#pragma once

#include <cstdint>

namespace rapid::des {

inline uint64_t hash_step(uint64_t h, uint64_t v) {
  return (h ^ v) * 0x100000001B3ull + (h >> 29);
}

}  // namespace rapid::des
