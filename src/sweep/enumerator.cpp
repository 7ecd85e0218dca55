#include "rapid/sweep/enumerator.hpp"

#include <fmt/format.h>

#include "rapid/common/error.hpp"
#include "rapid/spec/legality.hpp"

namespace rapid {

Enumerator::Enumerator(const SweepSpec& spec) : recompute_(spec.search.recompute) {
  const SearchSpace& S = spec.search;
  radix_ = static_cast<int64_t>(recompute_.size());
  for (size_t hw = 0; hw < spec.hardware.size(); ++hw)
    for (int64_t gpus : S.num_gpus)
      for (int64_t pp : S.pp)
        for (int64_t tp : S.tp)
          for (int64_t cp : S.cp) {
            if (gpus % (tp * pp * cp) != 0) continue;
            const int64_t dp = gpus / (tp * pp * cp);
            for (int64_t ep : S.ep)
              for (int64_t vpp : S.vpp)
                for (int64_t mbs : S.mbs)
                  for (bool sp : S.sp)
                    for (int64_t zero : S.zero_stage) {
                      ParallelConfig c;
                      c.dp = static_cast<int32_t>(dp);
                      c.tp = static_cast<int32_t>(tp);
                      c.pp = static_cast<int32_t>(pp);
                      c.cp = static_cast<int32_t>(cp);
                      c.ep = static_cast<int32_t>(ep);
                      c.vpp = static_cast<int32_t>(vpp);
                      c.mbs = static_cast<int32_t>(mbs);
                      c.sp = sp;
                      c.zero_stage = static_cast<int8_t>(zero);
                      c.recompute = recompute_.front();
                      // Recompute never changes legality, so one check covers the block.
                      if (illegal_reason(spec, c)) continue;
                      blocks_.push_back(Block{c.dp, static_cast<int16_t>(hw),
                                              static_cast<int16_t>(tp), static_cast<int16_t>(pp),
                                              static_cast<int16_t>(cp), static_cast<int16_t>(ep),
                                              static_cast<int16_t>(vpp), static_cast<int16_t>(mbs),
                                              sp, static_cast<int8_t>(zero)});
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
  p.par.dp = b.dp;
  p.par.tp = b.tp;
  p.par.pp = b.pp;
  p.par.cp = b.cp;
  p.par.ep = b.ep;
  p.par.vpp = b.vpp;
  p.par.mbs = b.mbs;
  p.par.sp = b.sp;
  p.par.zero_stage = b.zero_stage;
  p.par.recompute = recompute_[static_cast<size_t>(i % radix_)];
  return p;
}

std::optional<int64_t> Enumerator::encode(int32_t hardware, const ParallelConfig& par) const {
  for (size_t bi = 0; bi < blocks_.size(); ++bi) {
    const Block& b = blocks_[bi];
    if (b.hardware != hardware || b.dp != par.dp || b.tp != par.tp || b.pp != par.pp ||
        b.cp != par.cp || b.ep != par.ep || b.vpp != par.vpp || b.mbs != par.mbs ||
        b.sp != par.sp || b.zero_stage != par.zero_stage)
      continue;
    for (size_t r = 0; r < recompute_.size(); ++r)
      if (recompute_[r] == par.recompute)
        return static_cast<int64_t>(bi) * radix_ + static_cast<int64_t>(r);
  }
  return std::nullopt;
}

}  // namespace rapid
