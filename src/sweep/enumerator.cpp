#include "rapid/sweep/enumerator.hpp"

#include <fmt/format.h>

#include <array>

#include "rapid/common/error.hpp"
#include "rapid/spec/legality.hpp"

namespace rapid {

namespace {

// The knobs of a layout other than dp (derived) and recompute (the innermost axis), each
// with its candidate list; an odometer walks their Cartesian product.
struct Axis {
  const std::vector<int64_t>* values;
  int32_t ParallelConfig::*field;
};

}  // namespace

Enumerator::Enumerator(const SweepSpec& spec) : recompute_(spec.search.recompute) {
  const SearchSpace& S = spec.search;
  radix_ = static_cast<int64_t>(recompute_.size());
  const std::vector<int64_t> sp_values(S.sp.begin(), S.sp.end());
  const std::array<Axis, 7> axes{{{&S.pp, &ParallelConfig::pp},
                                  {&S.tp, &ParallelConfig::tp},
                                  {&S.cp, &ParallelConfig::cp},
                                  {&S.ep, &ParallelConfig::ep},
                                  {&S.etp, &ParallelConfig::etp},
                                  {&S.vpp, &ParallelConfig::vpp},
                                  {&S.mbs, &ParallelConfig::mbs}}};
  for (size_t hw = 0; hw < spec.hardware.size(); ++hw)
    for (int64_t gpus : S.num_gpus) {
      std::array<size_t, 7> at{};
      while (true) {
        ParallelConfig c;
        for (size_t k = 0; k < axes.size(); ++k)
          c.*(axes[k].field) = static_cast<int32_t>((*axes[k].values)[at[k]]);
        const int64_t denom = int64_t{c.tp} * c.pp * c.cp;
        if (gpus % denom == 0) {
          c.dp = static_cast<int32_t>(gpus / denom);
          c.recompute = recompute_.front();
          for (int64_t sp : sp_values)
            for (int64_t zero : S.zero_stage) {
              c.sp = sp != 0;
              c.zero_stage = static_cast<int8_t>(zero);
              // Recompute never changes legality, so one check covers the block.
              if (!illegal_reason(spec, c)) blocks_.push_back(Block{c, static_cast<int32_t>(hw)});
            }
        }
        size_t k = 0;  // odometer: advance the first axis that has values left
        while (k < axes.size() && ++at[k] == axes[k].values->size()) at[k++] = 0;
        if (k == axes.size()) break;
      }
    }
  if (blocks_.empty())
    throw InputError(spec.job.path, "search", "<no legal point>",
                     "at least one legal layout: check that tp*pp*cp divides gpus, tp divides the "
                     "heads, pp divides the layers and global_batch_size is divisible by dp*mbs");
  if (spec.baseline) {
    auto idx = encode(0, *spec.baseline);
    if (!idx)
      throw InputError(spec.job.path, "baseline", spec.baseline->describe(),
                       "a point of the search space (every baseline value must appear in the "
                       "corresponding search list)");
    baseline_index_ = *idx;
  }
}

Point Enumerator::decode(int64_t i) const {
  const Block& b = blocks_[static_cast<size_t>(i / radix_)];
  Point p;
  p.index = i;
  p.hardware = b.hardware;
  p.par = b.par;
  p.par.recompute = recompute_[static_cast<size_t>(i % radix_)];
  return p;
}

std::optional<int64_t> Enumerator::encode(int32_t hardware, const ParallelConfig& par) const {
  for (size_t bi = 0; bi < blocks_.size(); ++bi) {
    ParallelConfig c = blocks_[bi].par;
    c.recompute = par.recompute;
    if (blocks_[bi].hardware != hardware || !(c == par)) continue;
    for (size_t r = 0; r < recompute_.size(); ++r)
      if (recompute_[r] == par.recompute)
        return static_cast<int64_t>(bi) * radix_ + static_cast<int64_t>(r);
  }
  return std::nullopt;
}

}  // namespace rapid
