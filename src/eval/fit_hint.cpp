#include "rapid/eval/fit_hint.hpp"

#include <limits>

#include "rapid/memory/memory_model.hpp"
#include "rapid/spec/legality.hpp"

namespace rapid {

namespace {

constexpr double kIllegal = std::numeric_limits<double>::infinity();

// The smallest value in [lo, hi] whose layout fits (memory falls as the value grows: more
// layers recomputed or offloaded), by bisection; -1 when none does.
template <class Set>
int32_t smallest_fitting(int32_t lo, int32_t hi, const Set& fits) {
  if (lo > hi || !fits(hi)) return -1;
  while (lo < hi) {
    const int32_t mid = lo + (hi - lo) / 2;
    if (fits(mid))
      hi = mid;
    else
      lo = mid + 1;
  }
  return lo;
}

}  // namespace

FitHintResult find_fit_hint(const SweepSpec& spec, const Workload& w, double capacity_bytes,
                            PeakCache* cache) {
  const ParallelConfig& base = w.par;
  FitHintResult out;
  // The layout's peak memory, infinite when it is illegal.
  auto peak = [&](const ParallelConfig& c) {
    auto compute = [&] {
      return illegal_reason(spec, c) ? kIllegal
                                     : estimate_memory(spec.model, spec.training, w, &c).peak_bytes;
    };
    if (!cache) return compute();
    // Two ways of a set chosen by the hash: the older one is replaced.
    const uint64_t h = layout_hash(c) | 1;  // never 0
    const size_t set = (h >> 17) % (PeakCache::kEntries / 2) * 2;
    for (size_t way = set; way < set + 2; ++way)
      if (cache->hash[way] == h && cache->layout[way] == c) return cache->peak_bytes[way];
    const size_t e = set + (cache->next++ & 1);
    cache->hash[e] = h;
    cache->layout[e] = c;
    cache->peak_bytes[e] = compute();
    return cache->peak_bytes[e];
  };
  auto fits = [&](const ParallelConfig& c) {
    const double p = peak(c);
    if (p > capacity_bytes) return false;
    out.peak_bytes = p;
    return true;
  };
  auto found = [&](FitHint h, int32_t v) {
    out.hint = h;
    out.value = v;
    return out;
  };
  ParallelConfig c = base;
  for (int z = base.zero_stage + 1; z <= 2; ++z) {
    c = base;
    c.zero_stage = static_cast<int8_t>(z);
    if (fits(c)) return found(FitHint::ZeroStage, z);
  }
  if (base.tp > 1 && !base.sp) {
    c = base;
    c.sp = true;
    if (fits(c)) return found(FitHint::SequenceParallel, 1);
  }
  if (base.recompute == Recompute::None && base.offload_layers == 0) {
    c = base;
    c.recompute = Recompute::Selective;
    if (fits(c)) return found(FitHint::SelectiveRecompute, 1);
  }
  // Block recompute of k layers per chunk, the fewest that fit.
  const int64_t stage_layers = max_stage_layers(spec.model, base);
  const auto chunk = static_cast<int32_t>(max_chunk_layers(spec.model, base));
  if (!base.partial_recompute() && base.recompute != Recompute::Full && base.offload_layers == 0) {
    c = base;
    c.recompute = Recompute::Full;
    c.recompute_method = RecomputeMethod::Block;
    const int32_t k = smallest_fitting(1, chunk - 1, [&](int32_t v) {
      c.recompute_layers = v;
      return fits(c);
    });
    if (k > 0) {
      c.recompute_layers = k;
      fits(c);
      return found(FitHint::RecomputeNumLayers, k);
    }
  }
  if (base.zero_stage < 3) {
    c = base;
    c.zero_stage = 3;
    if (fits(c)) return found(FitHint::ZeroStage, 3);
  }
  if (base.recompute == Recompute::None && base.offload_layers == 0) {
    c = base;
    const int32_t k = smallest_fitting(1, static_cast<int32_t>(stage_layers) - 1, [&](int32_t v) {
      c.offload_layers = v;
      return fits(c);
    });
    if (k > 0) {
      c.offload_layers = k;
      fits(c);
      return found(FitHint::CpuOffload, k);
    }
  }
  if (base.recompute != Recompute::Full || base.partial_recompute()) {
    c = base;
    c.recompute = Recompute::Full;
    c.recompute_method = RecomputeMethod::Uniform;
    c.recompute_layers = 1;
    c.offload_layers = 0;
    if (fits(c)) return found(FitHint::FullRecompute, 1);
  }
  for (int32_t mbs = base.mbs / 2; mbs >= 1; mbs /= 2) {
    c = base;
    c.mbs = mbs;
    if (fits(c)) return found(FitHint::MicroBatch, mbs);
  }
  return out;
}

}  // namespace rapid
