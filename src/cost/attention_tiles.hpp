// Counting the (query tile, K/V tile) pairs a FlashAttention kernel computes, with and
// without a causal mask (docs/attention.md "Tiling"). Closed form, O(log) time, no
// allocation: it runs on the per-point path of every sweep.
#pragma once

#include <cstdint>

#include "rapid/cost/attention_model.hpp"

namespace rapid::detail {

/// sum_{i=0}^{n-1} floor((a*i + b) / m) for n >= 0, m >= 1, a >= 0, b >= 0, by the
/// Euclid-like reduction (docs/attention.md "Tiling"). Exact in 64-bit integers as long as
/// a*n + b and n*n*a/m stay below 2^63.
int64_t floor_sum(int64_t n, int64_t m, int64_t a, int64_t b);

/// Tiles and pairs of one head. Tiles are Br (query) and Bc (key) rows; the last tile of a
/// sequence may be partial and counts as a whole tile (its MMAs run on padded registers).
struct TilePairs {
  int64_t q_tiles = 0;          ///< Tq = ceil(seq_q / Br)
  int64_t kv_tiles = 0;         ///< Tc = ceil(seq_kv / Bc)
  int64_t per_head = 0;         ///< pairs computed for one query head
  int64_t max_per_q_tile = 0;   ///< K/V tiles visited by the busiest query tile
  int64_t max_per_kv_tile = 0;  ///< query tiles visiting the busiest K/V tile
};

/// Causal: query row r sees keys 0 .. r + seq_kv - seq_q (bottom-right aligned mask, as in
/// FlashAttention >= 2.1); a pair is computed when the tile has at least one visible key.
TilePairs count_tile_pairs(const AttentionShape& s, int64_t br, int64_t bc);

}  // namespace rapid::detail
