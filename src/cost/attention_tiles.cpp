#include "attention_tiles.hpp"

#include <algorithm>

namespace rapid::detail {

// Let S(n, m, a, b) = sum_{i<n} floor((a i + b) / m).
//  - a >= m: floor((a i + b)/m) = (a/m) i + floor(((a%m) i + b)/m), adding (a/m) n(n-1)/2;
//  - b >= m: likewise adding (b/m) n;
//  - now a, b < m: with y = a n + b, the sum counts lattice points (i, j), 1 <= j, under the
//    line j <= (a i + b)/m; counted by rows j instead it is S(floor(y/m), a, m, y % m),
//    the same problem with (m, a) swapped, so the loop ends after O(log m) steps.
int64_t floor_sum(int64_t n, int64_t m, int64_t a, int64_t b) {
  int64_t sum = 0;
  while (n > 0) {
    if (a >= m) {
      sum += (a / m) * (n * (n - 1) / 2);
      a %= m;
    }
    if (b >= m) {
      sum += (b / m) * n;
      b %= m;
    }
    const int64_t y = a * n + b;
    if (y < m) break;
    n = y / m;
    b = y % m;
    std::swap(m, a);
  }
  return sum;
}

TilePairs count_tile_pairs(const AttentionShape& s, int64_t br, int64_t bc) {
  TilePairs p;
  p.q_tiles = (s.seq_q + br - 1) / br;
  p.kv_tiles = (s.seq_kv + bc - 1) / bc;
  if (!s.causal) {
    p.per_head = p.q_tiles * p.kv_tiles;
    p.max_per_q_tile = p.kv_tiles;
    p.max_per_kv_tile = p.q_tiles;
    return p;
  }
  // Query tile i ends at row r_i = min((i+1) Br, Sq) - 1 and sees keys up to r_i + off,
  // off = Skv - Sq, i.e. n_i = floor((r_i + off) / Bc) + 1 K/V tiles (0 when negative;
  // never more than Tc since r_i + off <= Skv - 1). Tiles before i0 see no key at all:
  // i0 = the first i with (i+1) Br - 1 + off >= 0 = max(0, ceil((1 - off) / Br) - 1).
  const int64_t off = s.seq_kv - s.seq_q;
  const int64_t full = s.seq_q / br;  // tiles of exactly Br rows
  const int64_t i0 = std::max<int64_t>(0, (1 - off + br - 1) / br - 1);
  if (full > i0) {
    // sum_{i=i0}^{full-1} (floor((Br i + Br - 1 + off) / Bc) + 1), shifted to start at 0.
    const int64_t n = full - i0;
    p.per_head = floor_sum(n, bc, br, br * i0 + br - 1 + off) + n;
  }
  if (s.seq_q % br != 0) p.per_head += p.kv_tiles;  // partial last tile: r = Sq - 1, all keys
  p.max_per_q_tile = p.kv_tiles;                    // the last query tile sees every key
  p.max_per_kv_tile = p.q_tiles - std::min(i0, p.q_tiles - 1);  // K/V tile 0: all with keys
  return p;
}

}  // namespace rapid::detail
