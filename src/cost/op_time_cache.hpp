// A small per-thread memo of op times keyed by shape. Sweeps evaluate the same GEMM and
// attention shapes for many points (dp, pp, ZeRO change, the layer does not), and the tiled
// models search several tile shapes per op: the memo keeps the per-point path cheap.
// Direct-mapped, fixed size, one table per call site in the thread's evaluation context
// (eval_context.hpp); entries carry the id of the model that computed them, so two models
// never share an entry.
#pragma once

#include <array>
#include <atomic>
#include <cstdint>

#include "rapid/common/eval_context.hpp"

namespace rapid::detail {

struct ShapeKey {
  uint64_t model_id;
  int64_t m, n, k, batch;
  uint32_t extra;  ///< op kind, direction, flags
  bool operator==(const ShapeKey&) const = default;
};

class OpTimeCache {
 public:
  /// A fresh id for a model instance (never reused within the process).
  static uint64_t next_model_id() {
    static std::atomic<uint64_t> next{1};
    return next.fetch_add(1, std::memory_order_relaxed);
  }

  /// Returns the cached value for `key`, or computes it with `f()` and stores it.
  template <class F>
  static double get(const ShapeKey& key, F&& f) {
    Entry& e = EvalContext::current().get<Table<F>>().entries[hash(key) & (kSize - 1)];
    if (e.valid && e.key == key) return e.value;
    e.key = key;
    e.value = f();
    e.valid = true;
    return e.value;
  }

 private:
  static constexpr size_t kSize = 4096;
  struct Entry {
    ShapeKey key{};
    double value = 0;
    bool valid = false;
  };
  template <class F>
  struct Table {
    std::array<Entry, kSize> entries{};
  };
  static uint64_t hash(const ShapeKey& k) {
    uint64_t h = k.model_id * 0x9E3779B97F4A7C15ull;
    for (uint64_t v :
         {static_cast<uint64_t>(k.m), static_cast<uint64_t>(k.n), static_cast<uint64_t>(k.k),
          static_cast<uint64_t>(k.batch), static_cast<uint64_t>(k.extra)})
      h = (h ^ v) * 0x100000001B3ull + (h >> 29);
    return h;
  }
};

}  // namespace rapid::detail
