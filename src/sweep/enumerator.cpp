#include "rapid/sweep/enumerator.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>

#include "rapid/common/error.hpp"
#include "rapid/spec/legality.hpp"

namespace rapid {

namespace {

// The knobs of a layout other than dp (derived) and the recompute options (the innermost
// axis), each with its candidate list; an odometer walks their Cartesian product.
struct Axis {
  const std::vector<int64_t>* values;
  int32_t ParallelConfig::*field;
};

}  // namespace

std::vector<Enumerator::RecomputeOption> Enumerator::recompute_options(const SearchSpace& s) {
  std::vector<RecomputeOption> out;
  for (Recompute r : s.recompute) {
    if (r != Recompute::Full) {
      out.push_back({r, RecomputeMethod::Uniform, 1});
      continue;
    }
    for (RecomputeMethod m : s.recompute_method)
      for (int64_t k : s.recompute_layers) out.push_back({r, m, static_cast<int32_t>(k)});
  }
  return out;
}

Enumerator::Enumerator(const SweepSpec& spec) : options_(recompute_options(spec.search)) {
  const SearchSpace& S = spec.search;
  if (options_.size() > 32)
    throw InputError(spec.job.path, "search.recompute_num_layers",
                     fmt::format("{} recompute options", options_.size()),
                     "at most 32 recompute options (recompute x method x num_layers)");
  // The candidates walked below, counted first (in double: the product may pass int64).
  const double candidates =
      static_cast<double>(spec.hardware.size()) * static_cast<double>(S.num_gpus.size()) *
      static_cast<double>(S.pp.size() * S.tp.size() * S.cp.size()) *
      static_cast<double>(S.ep.size() * S.etp.size() * S.vpp.size()) *
      static_cast<double>(S.mbs.size() * S.offload_layers.size() * S.sp.size()) *
      static_cast<double>(S.zero_stage.size() * options_.size());
  if (candidates > S.max_candidates)
    throw InputError(spec.job.path, "search",
                     // Exact below 1e15 (a double holds such integers exactly).
                     candidates < 1e15 ? fmt::format("{:.0f} candidate points", candidates)
                                       : fmt::format("{:.3g} candidate points", candidates),
                     fmt::format("at most {:.3g} candidates (the product of every search list "
                                 "with the GPU counts and hardware variants; rapid-sweep "
                                 "--max-points raises it)",
                                 S.max_candidates));
  const std::vector<int64_t> sp_values(S.sp.begin(), S.sp.end());
  const std::array<Axis, 8> axes{{{&S.pp, &ParallelConfig::pp},
                                  {&S.tp, &ParallelConfig::tp},
                                  {&S.cp, &ParallelConfig::cp},
                                  {&S.ep, &ParallelConfig::ep},
                                  {&S.etp, &ParallelConfig::etp},
                                  {&S.vpp, &ParallelConfig::vpp},
                                  {&S.mbs, &ParallelConfig::mbs},
                                  {&S.offload_layers, &ParallelConfig::offload_layers}}};
  int64_t total = 0;
  const char* first_why = nullptr;  // why the first rejected candidate is not a point
  for (size_t hw = 0; hw < spec.hardware.size(); ++hw)
    for (int64_t gpus : S.num_gpus) {
      std::array<size_t, 8> at{};
      while (true) {
        ParallelConfig c;
        for (size_t k = 0; k < axes.size(); ++k)
          c.*(axes[k].field) = static_cast<int32_t>((*axes[k].values)[at[k]]);
        if (const int64_t dp = data_parallel_degree(gpus, c.tp, c.pp, c.cp); dp > 0) {
          c.dp = static_cast<int32_t>(dp);
          for (int64_t sp : sp_values)
            for (int64_t zero : S.zero_stage) {
              c.sp = sp != 0;
              c.zero_stage = static_cast<int8_t>(zero);
              Block b{c, static_cast<int32_t>(hw), total, 0};
              for (size_t r = 0; r < options_.size(); ++r) {
                ParallelConfig x = apply(c, r);
                const char* why = spec.mode == JobMode::Inference ? serving_illegal_reason(spec, x)
                                                                  : illegal_reason(spec, x);
                if (!why) b.options |= 1u << r;
                if (why && !first_why) first_why = why;
              }
              if (b.options == 0) continue;
              total += std::popcount(b.options);
              blocks_.push_back(b);
            }
        }
        size_t k = 0;  // odometer: advance the first axis that has values left
        while (k < axes.size() && ++at[k] == axes[k].values->size()) at[k++] = 0;
        if (k == axes.size()) break;
      }
    }
  // Scenarios (non-ideal conditions) are the outermost axis, then the serving loads: the
  // pair (scenario s, load l) holds the indices [(s * loads + l) * layouts, ... + layouts).
  layouts_ = total;
  scenarios_ = std::max<int64_t>(1, static_cast<int64_t>(spec.scenarios.size()));
  loads_ = spec.mode == JobMode::Inference
               ? std::max<int64_t>(1, static_cast<int64_t>(spec.serving.loads.size()))
               : 1;
  size_ = total * scenarios_ * loads_;
  if (blocks_.empty() && spec.mode == JobMode::Inference)
    throw InputError(spec.job.path, "search", "<no legal point>",
                     fmt::format("at least one legal serving layout (tp*pp dividing gpus; {})",
                                 first_why ? first_why : "no candidate divides the GPU count"));
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

std::vector<std::string> Enumerator::unused_recompute_options() const {
  uint32_t used = 0;
  for (const Block& b : blocks_) used |= b.options;
  std::vector<std::string> out;
  for (size_t r = 0; r < options_.size(); ++r) {
    if (used & (1u << r)) continue;
    ParallelConfig c;
    c.recompute = options_[r].recompute;
    c.recompute_method = options_[r].method;
    c.recompute_layers = options_[r].layers;
    out.push_back(c.describe_recompute());
  }
  return out;
}

ParallelConfig Enumerator::apply(const ParallelConfig& c, size_t option) const {
  ParallelConfig x = c;
  const RecomputeOption& o = options_[option];
  x.recompute = o.recompute;
  x.recompute_method = o.method;
  x.recompute_layers = o.layers;
  return x;
}

Point Enumerator::decode(int64_t index) const {
  // One scenario and load (every training job without non-ideal scenarios): no division on
  // the hot path.
  const int64_t outer = scenarios_ * loads_ == 1 ? 0 : index / layouts_;
  const int64_t scenario = outer / loads_, load = outer % loads_;
  const int64_t i = index - outer * layouts_;
  // The block holding i: the last one whose first index is <= i.
  auto it = std::upper_bound(blocks_.begin(), blocks_.end(), i,
                             [](int64_t v, const Block& b) { return v < b.first; });
  const Block& b = *(it - 1);
  int64_t j = i - b.first;  // the j-th legal option of the block
  uint32_t mask = b.options;
  while (j-- > 0) mask &= mask - 1;
  Point p;
  p.index = index;
  p.hardware = b.hardware;
  p.scenario = static_cast<int32_t>(scenario);
  p.load = static_cast<int32_t>(load);
  p.par = apply(b.par, static_cast<size_t>(std::countr_zero(mask)));
  return p;
}

std::optional<int64_t> Enumerator::encode(int32_t hardware, const ParallelConfig& par,
                                          int32_t scenario, int32_t load) const {
  for (const Block& b : blocks_) {
    if (b.hardware != hardware) continue;
    int64_t idx = b.first + (scenario * loads_ + load) * layouts_;
    for (size_t r = 0; r < options_.size(); ++r) {
      if (!(b.options & (1u << r))) continue;
      if (apply(b.par, r) == par) return idx;
      ++idx;
    }
  }
  return std::nullopt;
}

}  // namespace rapid
