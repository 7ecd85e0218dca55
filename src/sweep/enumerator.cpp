#include "rapid/sweep/enumerator.hpp"
#include "rapid/common/eval_context.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <atomic>

#include "rapid/common/error.hpp"
#include "rapid/spec/legality.hpp"

namespace rapid {

namespace {

std::atomic<uint64_t> g_next_id{1};

// The inner axes in index order (vpp slowest, zero fastest), by their list sizes.
struct InnerRadix {
  size_t vpp, mbs, offload, sp, zero;
  uint32_t combos() const { return static_cast<uint32_t>(vpp * mbs * offload * sp * zero); }
};

InnerRadix inner_radix(const SearchSpace& s) {
  return {s.vpp.size(), s.mbs.size(), s.offload_layers.size(), s.sp.size(), s.zero_stage.size()};
}

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

const char* Enumerator::illegal(const ParallelConfig& c) const {
  return spec_.mode == JobMode::Inference ? serving_illegal_reason(spec_, c)
                                          : illegal_reason(spec_, c);
}

Enumerator::Enumerator(const SweepSpec& spec, const EnumerationShare& share)
    : spec_(spec), id_(g_next_id.fetch_add(1)), options_(recompute_options(spec.search)) {
  const SearchSpace& S = spec.search;
  if (options_.size() > 32)
    throw InputError(spec.job.path, "search.recompute_num_layers",
                     fmt::format("{} recompute options", options_.size()),
                     "at most 32 recompute options (recompute x method x num_layers)");
  // The candidates of the space, counted first (in double: the product may pass int64).
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
  inner_combos_ = inner_radix(S).combos();
  // The frames: every (GPU count, tp, pp, cp, ep, etp) with an integer dp, in index order.
  for (int64_t gpus : S.num_gpus)
    for (int64_t tp : S.tp)
      for (int64_t pp : S.pp)
        for (int64_t cp : S.cp) {
          const int64_t dp = data_parallel_degree(gpus, tp, pp, cp);
          if (dp <= 0) continue;
          for (int64_t ep : S.ep)
            for (int64_t etp : S.etp) {
              Frame f;
              f.par.dp = static_cast<int32_t>(dp);
              f.par.tp = static_cast<int32_t>(tp);
              f.par.pp = static_cast<int32_t>(pp);
              f.par.cp = static_cast<int32_t>(cp);
              f.par.ep = static_cast<int32_t>(ep);
              f.par.etp = static_cast<int32_t>(etp);
              frames_.push_back(f);
            }
        }
  // Points per frame, this rank's part counted here; the last options_.size() entries
  // count the frames each recompute option is legal in (summed, they say which are used).
  const size_t F = frames_.size();
  const int parts = std::max(share.parts, 1);
  const size_t lo = F * static_cast<size_t>(share.part) / static_cast<size_t>(parts);
  const size_t hi = F * static_cast<size_t>(share.part + 1) / static_cast<size_t>(parts);
  std::vector<int64_t> counts(F + options_.size(), 0);
  {
    std::vector<Inner> scratch;
    for (size_t f = share.sum ? lo : 0; f < (share.sum ? hi : F); ++f) {
      uint32_t used = 0;
      counts[f] = build_inner(frames_[f], scratch, used);
      for (size_t r = 0; r < options_.size(); ++r)
        if (used & (1u << r)) ++counts[F + r];
    }
  }
  if (share.sum) share.sum(counts);
  for (size_t r = 0; r < options_.size(); ++r)
    if (counts[F + r] > 0) used_options_ |= 1u << r;
  int64_t total = 0;
  for (size_t f = 0; f < F; ++f) {
    frames_[f].first = total;
    total += counts[f];
  }
  if (total == 0) {
    // The reason the first candidate fails, for the message (the error path only).
    const char* first_why = nullptr;
    std::vector<Inner> scratch;
    uint32_t used = 0;
    for (const Frame& f : frames_)
      if (!first_why) build_inner(f, scratch, used, &first_why);
    if (spec.mode == JobMode::Inference)
      throw InputError(spec.job.path, "search", "<no legal point>",
                       fmt::format("at least one legal serving layout (tp*pp dividing gpus; {})",
                                   first_why ? first_why : "no candidate divides the GPU count"));
    throw InputError(spec.job.path, "search", "<no legal point>",
                     "at least one legal layout: check that tp*pp*cp divides gpus, tp divides the "
                     "heads, pp divides the layers and global_batch_size is divisible by dp*mbs");
  }
  // Frames without a legal point are dropped (decode's binary search needs none empty).
  size_t kept = 0;
  for (size_t f = 0; f < F; ++f)
    if (counts[f] > 0) frames_[kept++] = frames_[f];
  frames_.resize(kept);
  frames_.shrink_to_fit();

  per_hardware_ = total;
  hardware_ = static_cast<int64_t>(spec.hardware.size());
  // Scenarios (non-ideal conditions) are the outermost axis, then the serving loads: the
  // pair (scenario s, load l) holds the indices [(s * loads + l) * layouts, ... + layouts).
  layouts_ = total * hardware_;
  scenarios_ = std::max<int64_t>(1, static_cast<int64_t>(spec.scenarios.size()));
  loads_ = spec.mode == JobMode::Inference
               ? std::max<int64_t>(1, static_cast<int64_t>(spec.serving.loads.size()))
               : 1;
  size_ = layouts_ * scenarios_ * loads_;
  if (spec.baseline) {
    auto idx = encode(0, *spec.baseline);
    if (!idx)
      throw InputError(spec.job.path, "baseline", spec.baseline->describe(),
                       "a point of the search space (every baseline value must appear in the "
                       "corresponding search list)");
    baseline_index_ = *idx;
  }
}

ParallelConfig Enumerator::layout(const Frame& f, uint32_t combo, size_t option) const {
  const SearchSpace& S = spec_.search;
  const InnerRadix R = inner_radix(S);
  ParallelConfig c = f.par;
  // combo, slowest axis first: mbs, sp, offload layers, vpp, zero stage (the axes the op
  // templates do not read innermost: points that share template times come close).
  size_t k = combo;
  c.zero_stage = static_cast<int8_t>(S.zero_stage[k % R.zero]);
  k /= R.zero;
  c.vpp = static_cast<int32_t>(S.vpp[k % R.vpp]);
  k /= R.vpp;
  c.offload_layers = static_cast<int32_t>(S.offload_layers[k % R.offload]);
  k /= R.offload;
  c.sp = S.sp[k % R.sp];
  k /= R.sp;
  c.mbs = static_cast<int32_t>(S.mbs[k]);
  set_option(c, option);
  return c;
}

void Enumerator::set_option(ParallelConfig& c, size_t option) const {
  const RecomputeOption& o = options_[option];
  c.recompute = o.recompute;
  c.recompute_method = o.method;
  c.recompute_layers = o.layers;
}

int64_t Enumerator::build_inner(const Frame& f, std::vector<Inner>& out, uint32_t& used,
                                const char** why) const {
  out.clear();
  int64_t total = 0;
  for (uint32_t combo = 0; combo < inner_combos_; ++combo) {
    Inner b{total, combo, 0};
    // The combination's layout once; each recompute option sets its own fields (layout()).
    ParallelConfig c = layout(f, combo, 0);
    for (size_t r = 0; r < options_.size(); ++r) {
      set_option(c, r);
      const char* reason = illegal(c);
      if (!reason) b.options |= 1u << r;
      if (reason && why && !*why) *why = reason;
    }
    if (b.options == 0) continue;
    used |= b.options;
    total += std::popcount(b.options);
    out.push_back(b);
  }
  return total;
}

std::vector<std::string> Enumerator::unused_recompute_options() const {
  std::vector<std::string> out;
  for (size_t r = 0; r < options_.size(); ++r) {
    if (used_options_ & (1u << r)) continue;
    ParallelConfig c;
    c.recompute = options_[r].recompute;
    c.recompute_method = options_[r].method;
    c.recompute_layers = options_[r].layers;
    out.push_back(c.describe_recompute());
  }
  return out;
}

Point Enumerator::decode(int64_t index) const {
  // One scenario and load (every training job without non-ideal scenarios): no division on
  // the hot path.
  const int64_t outer = scenarios_ * loads_ == 1 ? 0 : index / layouts_;
  const int64_t scenario = outer / loads_, load = outer % loads_;
  const int64_t in_outer = index - outer * layouts_;
  const int64_t i = hardware_ == 1 ? in_outer : in_outer / hardware_;
  const int64_t hw = in_outer - i * hardware_;
  Point p;
  p.index = index;
  p.hardware = static_cast<int32_t>(hw);
  p.scenario = static_cast<int32_t>(scenario);
  p.load = static_cast<int32_t>(load);
  // The layout this thread decoded last (the hardware variants of one layout are
  // consecutive indices).
  struct Last {
    uint64_t owner = 0;
    int64_t layout = -1;
    ParallelConfig par;
  };
  Last& last = EvalContext::current().get<Last>();
  if (last.owner == id_ && last.layout == i) {
    p.par = last.par;
    return p;
  }
  // The frame holding i: the last one whose first index is <= i.
  auto fit = std::upper_bound(frames_.begin(), frames_.end(), i,
                              [](int64_t v, const Frame& f) { return v < f.first; });
  const Frame& f = *(fit - 1);
  const auto frame = static_cast<size_t>(fit - 1 - frames_.begin());
  // This thread's table of the frame it decoded last.
  struct Cache {
    uint64_t owner = 0;
    size_t frame = 0;
    std::vector<Inner> table;
  };
  Cache& cache = EvalContext::current().get<Cache>();
  if (cache.owner != id_ || cache.frame != frame) {
    uint32_t used = 0;
    build_inner(f, cache.table, used);
    cache.owner = id_;
    cache.frame = frame;
  }
  const int64_t in_frame = i - f.first;
  auto bit = std::upper_bound(cache.table.begin(), cache.table.end(), in_frame,
                              [](int64_t v, const Inner& b) { return v < b.first; });
  const Inner& b = *(bit - 1);
  int64_t j = in_frame - b.first;  // the j-th legal option of the block
  uint32_t mask = b.options;
  while (j-- > 0) mask &= mask - 1;
  p.par = layout(f, b.combo, static_cast<size_t>(std::countr_zero(mask)));
  last = {id_, i, p.par};
  return p;
}

std::optional<int64_t> Enumerator::encode(int32_t hardware, const ParallelConfig& par,
                                          int32_t scenario, int32_t load) const {
  if (hardware < 0 || hardware >= hardware_) return std::nullopt;
  std::vector<Inner> table;
  for (const Frame& f : frames_) {
    if (f.par.dp != par.dp || f.par.tp != par.tp || f.par.pp != par.pp || f.par.cp != par.cp ||
        f.par.ep != par.ep || f.par.etp != par.etp)
      continue;
    uint32_t used = 0;
    build_inner(f, table, used);
    for (const Inner& b : table) {
      int64_t layout_index = f.first + b.first;
      for (size_t r = 0; r < options_.size(); ++r) {
        if (!(b.options & (1u << r))) continue;
        if (layout(f, b.combo, r) == par)
          return (scenario * loads_ + load) * layouts_ + layout_index * hardware_ + hardware;
        ++layout_index;
      }
    }
  }
  return std::nullopt;
}

}  // namespace rapid
