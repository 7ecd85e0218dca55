// splitmix64's finalizer (Steele, Lea & Flood, "Fast splittable pseudorandom number
// generators", OOPSLA 2014): a well-mixed 64-bit hash of a 64-bit value. Internal to
// src/des (the ECMP hash of a flow, the steady-state digests).
#pragma once

#include <cstdint>

namespace rapid::des {

inline uint64_t splitmix64(uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

/// An order-dependent digest of a record's fields (the steady-state probe's shapes).
struct Digest {
  uint64_t h = 0;
  Digest& operator<<(int64_t v) {
    h = splitmix64(h ^ static_cast<uint64_t>(v));
    return *this;
  }
};

}  // namespace rapid::des
