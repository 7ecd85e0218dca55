#include "rapid/des/stage_program.hpp"

#include <algorithm>

#include "rapid/common/error.hpp"

namespace rapid::des {

namespace {

struct Bucket {
  bool expert;
  double params;
  int32_t lo, hi;  // owner indices within the chunk (forward order)
};

// Buckets of one chunk in backward order (Megatron-core fills buckets in the reverse order
// of the parameters, i.e. the order gradients become ready), per parameter class.
// capacity <= 0: one bucket per owner (a ZeRO-3 / FSDP unit is one transformer layer;
// Zhao et al. 2023, "PyTorch FSDP", sec. 3.2).
void chunk_buckets(const StageProgram& sp, int32_t chunk, double capacity,
                   std::vector<Bucket>& out) {
  out.clear();
  const int32_t begin = sp.chunk_owners[static_cast<size_t>(chunk)];
  const int32_t n = sp.num_owners(chunk);
  for (bool expert : {false, true}) {
    double acc = 0;
    int32_t hi = -1, lo = -1;
    for (int32_t j = n - 1; j >= 0; --j) {
      const Owner& o = sp.owners[static_cast<size_t>(begin + j)];
      double p = expert ? o.expert_params : o.dense_params;
      if (p <= 0) continue;
      if (capacity <= 0) {
        out.push_back(Bucket{expert, p, j, j});
        continue;
      }
      if (hi < 0) hi = j;
      lo = j;
      while (acc + p >= capacity) {
        p -= capacity - acc;
        out.push_back(Bucket{expert, capacity, j, hi});
        acc = 0;
        hi = p > 0 ? j : -1;
      }
      acc += p;
    }
    if (acc > 0) out.push_back(Bucket{expert, acc, lo, hi});
  }
  // Interleave the classes by readiness: later-ready buckets (smaller lo) last.
  std::stable_sort(out.begin(), out.end(),
                   [](const Bucket& a, const Bucket& b) { return a.lo > b.lo; });
}

}  // namespace

void build_stage_program(const Workload& w, const ModelSpec& model, const TrainingSpec& training,
                         int64_t stage, StageProgram& sp) {
  const ParallelConfig& par = w.par;
  const StageInfo& st = w.stages[static_cast<size_t>(stage)];
  const int64_t vpp = par.vpp;
  pipeline_schedule(par.pp, vpp, w.num_microbatches, stage, sp.passes);

  // Owners, chunk by chunk.
  sp.owners.clear();
  sp.chunk_owners.assign(1, 0);
  int64_t layer = st.first_layer;
  for (int64_t c = 0; c < vpp; ++c) {
    if (st.has_embedding && c == 0)
      sp.owners.push_back(Owner{TemplateKind::EmbF, TemplateKind::EmbB, w.embedding_params, 0});
    for (int64_t k = 0; k < chunk_layers(st.num_layers, vpp, c); ++k, ++layer) {
      const bool replay = layer_recomputed(par, k);
      if (model.moe.is_moe_layer(layer))
        sp.owners.push_back(Owner{TemplateKind::MoeF,
                                  replay ? TemplateKind::MoeB : TemplateKind::MoeBPlain,
                                  w.moe_layer_params - w.moe_expert_params, w.moe_expert_params});
      else
        sp.owners.push_back(Owner{TemplateKind::DenseF,
                                  replay ? TemplateKind::DenseB : TemplateKind::DenseBPlain,
                                  w.layer_params, 0});
    }
    if (st.has_lm_head && c == vpp - 1)
      sp.owners.push_back(Owner{TemplateKind::HeadF, TemplateKind::HeadB, w.lm_head_params, 0});
    sp.chunk_owners.push_back(static_cast<int32_t>(sp.owners.size()));
  }

  // Segments per (chunk, dir): runs of owners with the same template, in pass order.
  sp.segments.clear();
  sp.segment_begin.assign(1, 0);
  for (int32_t c = 0; c < vpp; ++c)
    for (PassDir dir : {PassDir::Forward, PassDir::Backward}) {
      const int32_t b = sp.chunk_owners[static_cast<size_t>(c)], n = sp.num_owners(c);
      for (int32_t pos = 0; pos < n; ++pos) {
        const int32_t o = dir == PassDir::Forward ? b + pos : b + n - 1 - pos;
        const Owner& ow = sp.owners[static_cast<size_t>(o)];
        const TemplateKind t = dir == PassDir::Forward ? ow.fwd : ow.bwd;
        if (!sp.segments.empty() &&
            sp.segments.size() > static_cast<size_t>(sp.segment_begin.back()) &&
            sp.segments.back().tmpl == t) {
          ++sp.segments.back().count;
          continue;
        }
        sp.segments.push_back(Segment{t, pos, 1, o, dir == PassDir::Forward ? 1 : -1});
      }
      sp.segment_begin.push_back(static_cast<int32_t>(sp.segments.size()));
    }

  // DP streams (the ZeRO rules of src/analytical/data_parallel.cpp, as collectives).
  sp.dp_ops.clear();
  sp.hooks.clear();
  sp.hook_begin.assign(1, 0);
  sp.start_posts = 0;
  sp.tail_gate = -1;
  const int zero = par.zero_stage;
  const double grad_bytes = training.grad_reduce_bytes, param_bytes = 2.0;
  // Dense weights sync over data x context parallel ranks, routed experts over the expert
  // data-parallel group (src/analytical/data_parallel.hpp).
  const GroupShape& dp = w.group(CommGroup::DPCP);
  const GroupShape& edp = w.group(CommGroup::EDP);
  auto group_of = [&](bool expert) { return expert ? CommGroup::EDP : CommGroup::DPCP; };
  auto has_group = [&](bool expert) { return (expert ? edp.size : dp.size) > 1; };
  const CollectiveKind reduce =
      zero == 0 ? CollectiveKind::AllReduce : CollectiveKind::ReduceScatter;
  const bool overlap_grad = training.overlap_grad_reduce;
  const bool gather_start = (zero == 1 || zero == 2) && training.overlap_param_gather;
  const bool gather_end = (zero == 1 || zero == 2) && !training.overlap_param_gather;
  const bool every_pass = zero >= 2;
  const double capacity = training.grad_bucket_bytes / grad_bytes;
  std::vector<Bucket> buckets;
  auto add_op = [&](CollectiveKind k, bool expert, double bytes, bool grad) {
    sp.dp_ops.push_back(DpOpSpec{k, group_of(expert), bytes, grad});
    return static_cast<int32_t>(sp.dp_ops.size()) - 1;
  };
  std::vector<std::vector<int32_t>> start_need(static_cast<size_t>(vpp));
  if (gather_start)
    for (int32_t c = 0; c < vpp; ++c) {
      chunk_buckets(sp, c, capacity, buckets);
      std::vector<int32_t>& need = start_need[static_cast<size_t>(c)];
      need.assign(static_cast<size_t>(sp.num_owners(c)), -1);
      for (auto it = buckets.rbegin(); it != buckets.rend(); ++it) {
        if (!has_group(it->expert)) continue;
        const int32_t op =
            add_op(CollectiveKind::AllGather, it->expert, it->params * param_bytes, false);
        for (int32_t j = it->lo; j <= it->hi; ++j) need[static_cast<size_t>(j)] = op;
      }
    }
  sp.start_posts = static_cast<int32_t>(sp.dp_ops.size());
  std::vector<bool> first_forward_seen(static_cast<size_t>(vpp), false);
  std::vector<int32_t> last_backward(static_cast<size_t>(vpp), -1);
  for (size_t p = 0; p < sp.passes.size(); ++p)
    if (sp.passes[p].dir == PassDir::Backward)
      last_backward[static_cast<size_t>(sp.passes[p].chunk)] = static_cast<int32_t>(p);
  const bool any_dp = has_group(false) || has_group(true);
  for (size_t p = 0; p < sp.passes.size(); ++p) {
    const PassRef& pr = sp.passes[p];
    const int32_t n = sp.num_owners(pr.chunk);
    const bool fwd = pr.dir == PassDir::Forward;
    auto pos_of = [&](int32_t j) { return fwd ? j : n - 1 - j; };
    auto hook = [&](int32_t boundary, bool gate, int32_t op) {
      sp.hooks.push_back(Hook{boundary, gate, op});
    };
    const size_t first_hook = sp.hooks.size();
    if (gather_start && fwd && !first_forward_seen[static_cast<size_t>(pr.chunk)]) {
      first_forward_seen[static_cast<size_t>(pr.chunk)] = true;
      int32_t waited = -1;
      for (int32_t j = 0; j < n; ++j) {
        const int32_t op = start_need[static_cast<size_t>(pr.chunk)][static_cast<size_t>(j)];
        if (op > waited) hook(j, true, waited = op);
      }
    }
    if (zero == 3 && any_dp) {
      chunk_buckets(sp, pr.chunk, 0.0, buckets);
      if (fwd) std::reverse(buckets.begin(), buckets.end());
      std::vector<int32_t> need(static_cast<size_t>(n), -1);
      for (const Bucket& b : buckets) {
        if (!has_group(b.expert)) continue;
        const int32_t op =
            add_op(CollectiveKind::AllGather, b.expert, b.params * param_bytes, false);
        hook(0, false, op);
        for (int32_t j = b.lo; j <= b.hi; ++j) need[static_cast<size_t>(pos_of(j))] = op;
      }
      int32_t waited = -1;
      for (int32_t q = 0; q < n; ++q) {
        const int32_t op = training.overlap_param_gather
                               ? need[static_cast<size_t>(q)]
                               : static_cast<int32_t>(sp.dp_ops.size()) - 1;
        if (op > waited) hook(training.overlap_param_gather ? q : 0, true, waited = op);
      }
    }
    const bool reduce_now = !fwd && (every_pass || last_backward[static_cast<size_t>(pr.chunk)] ==
                                                       static_cast<int32_t>(p));
    if (reduce_now && any_dp) {
      chunk_buckets(sp, pr.chunk, zero == 3 ? 0.0 : capacity, buckets);
      if (overlap_grad) {
        for (const Bucket& b : buckets)
          if (has_group(b.expert))
            hook(pos_of(b.lo) + 1, false, add_op(reduce, b.expert, b.params * grad_bytes, true));
      } else if (every_pass) {
        for (bool expert : {false, true}) {
          double params = 0;
          for (const Bucket& b : buckets) params += b.expert == expert ? b.params : 0.0;
          if (params <= 0 || !has_group(expert)) continue;
          const int32_t op = add_op(reduce, expert, params * grad_bytes, true);
          hook(n, false, op);
          hook(n, true, op);
        }
      }
    }
    // ZeRO 0/1 without overlap: one reduction of all gradients after the last backward.
    if (p + 1 == sp.passes.size() && !overlap_grad && !every_pass && any_dp)
      for (bool expert : {false, true}) {
        double params = 0;
        for (const Owner& o : sp.owners) params += expert ? o.expert_params : o.dense_params;
        if (params > 0 && has_group(expert))
          hook(n, false, add_op(reduce, expert, params * grad_bytes, true));
      }
    std::stable_sort(sp.hooks.begin() + static_cast<std::ptrdiff_t>(first_hook), sp.hooks.end(),
                     [](const Hook& a, const Hook& b) {
                       return a.boundary < b.boundary ||
                              (a.boundary == b.boundary && !a.gate && b.gate);
                     });
    sp.hook_begin.push_back(static_cast<int32_t>(sp.hooks.size()));
  }
  for (int32_t i = static_cast<int32_t>(sp.dp_ops.size()) - 1; i >= 0 && sp.tail_gate < 0; --i)
    if (sp.dp_ops[static_cast<size_t>(i)].grad) sp.tail_gate = i;
  sp.end_posts_begin = static_cast<int32_t>(sp.dp_ops.size());
  if (gather_end)
    for (bool expert : {false, true}) {
      double params = 0;
      for (const Owner& o : sp.owners) params += expert ? o.expert_params : o.dense_params;
      if (params > 0 && has_group(expert))
        add_op(CollectiveKind::AllGather, expert, params * param_bytes, false);
    }
  // Adam over the local optimizer shard (workload.hpp).
  sp.optimizer_bytes = st.optimizer_params * kAdamStepBytesPerParam;
}

}  // namespace rapid::des
