#include "rapid/des/stage_program.hpp"

#include <algorithm>

#include "rapid/common/error.hpp"
#include "rapid/workload/zero_schedule.hpp"

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

// The stage's owners, chunk by chunk: the embedding before chunk 0's layers, the LM head
// after the last chunk's, each layer with the backward template its recompute calls for.
void build_owners(const Workload& w, const ModelSpec& model, const StageInfo& st,
                  StageProgram& sp) {
  const ParallelConfig& par = w.par;
  const int64_t vpp = par.vpp;
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
}

// Segments per (chunk, dir): runs of owners with the same template, in pass order.
void build_segments(int64_t vpp, StageProgram& sp) {
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
}

// The stage's DP stream: its collectives (dp_ops), in buckets or units, and the points of
// the passes that post and wait for them (hooks), by the ZeRO stage's schedule
// (workload/zero_schedule.hpp). Dense weights sync over data x context parallel ranks,
// routed experts over the expert data-parallel group.
class DpStreamBuilder {
 public:
  DpStreamBuilder(const Workload& w, const TrainingSpec& training, StageProgram& sp)
      : training_(training),
        sp_(sp),
        z_(zero_schedule(w.par.zero_stage)),
        // The analytical evaluator's rule (TrainingSpec::param_gather_overlapped).
        gather_overlap_(training.param_gather_overlapped(w.par.zero_stage)),
        vpp_(w.par.vpp),
        grad_bytes_(training.grad_reduce_bytes),
        capacity_(training.grad_bucket_bytes / grad_bytes_),
        dp_size_(w.group(CommGroup::DPCP).size),
        edp_size_(w.group(CommGroup::EDP).size) {}

  void build() {
    sp_.dp_ops.clear();
    sp_.hooks.clear();
    sp_.hook_begin.assign(1, 0);
    sp_.tail_gate = -1;
    step_start_gathers();
    sp_.start_posts = static_cast<int32_t>(sp_.dp_ops.size());
    first_forward_seen_.assign(static_cast<size_t>(vpp_), false);
    last_backward_.assign(static_cast<size_t>(vpp_), -1);
    for (size_t p = 0; p < sp_.passes.size(); ++p)
      if (sp_.passes[p].dir == PassDir::Backward)
        last_backward_[static_cast<size_t>(sp_.passes[p].chunk)] = static_cast<int32_t>(p);
    for (size_t p = 0; p < sp_.passes.size(); ++p) pass_hooks(p);
    for (int32_t i = static_cast<int32_t>(sp_.dp_ops.size()) - 1; i >= 0 && sp_.tail_gate < 0; --i)
      if (sp_.dp_ops[static_cast<size_t>(i)].grad) sp_.tail_gate = i;
    sp_.end_posts_begin = static_cast<int32_t>(sp_.dp_ops.size());
    // Without overlap_param_gather, the updated weights gathered after the optimizer.
    if (z_.gather_per_step && !gather_overlap_)
      for (bool expert : {false, true}) {
        const double params = all_params(expert);
        if (params > 0 && has_group(expert))
          add_op(CollectiveKind::AllGather, expert, params * kGatheredParamBytes, false);
      }
  }

 private:
  bool has_group(bool expert) const { return (expert ? edp_size_ : dp_size_) > 1; }
  bool any_dp() const { return has_group(false) || has_group(true); }
  double all_params(bool expert) const {
    double params = 0;
    for (const Owner& o : sp_.owners) params += expert ? o.expert_params : o.dense_params;
    return params;
  }
  int32_t add_op(CollectiveKind k, bool expert, double bytes, bool grad) {
    sp_.dp_ops.push_back(DpOpSpec{k, expert ? CommGroup::EDP : CommGroup::DPCP, bytes, grad});
    return static_cast<int32_t>(sp_.dp_ops.size()) - 1;
  }
  void hook(int32_t boundary, bool gate, int32_t op) {
    sp_.hooks.push_back(Hook{boundary, gate, op});
  }

  // With overlap_param_gather (ZeRO 1/2), the weights updated by the previous step are
  // gathered from its start, bucket by bucket; chunk c's first forward waits for each
  // owner's bucket.
  void step_start_gathers() {
    start_need_.assign(static_cast<size_t>(vpp_), {});
    if (!(z_.gather_per_step && gather_overlap_)) return;
    for (int32_t c = 0; c < vpp_; ++c) {
      chunk_buckets(sp_, c, capacity_, buckets_);
      std::vector<int32_t>& need = start_need_[static_cast<size_t>(c)];
      need.assign(static_cast<size_t>(sp_.num_owners(c)), -1);
      for (auto it = buckets_.rbegin(); it != buckets_.rend(); ++it) {
        if (!has_group(it->expert)) continue;
        const int32_t op =
            add_op(CollectiveKind::AllGather, it->expert, it->params * kGatheredParamBytes, false);
        for (int32_t j = it->lo; j <= it->hi; ++j) need[static_cast<size_t>(j)] = op;
      }
    }
  }

  void pass_hooks(size_t p) {
    const PassRef& pr = sp_.passes[p];
    const int32_t n = sp_.num_owners(pr.chunk);
    const bool fwd = pr.dir == PassDir::Forward;
    const size_t first_hook = sp_.hooks.size();
    if (z_.gather_per_step && gather_overlap_ && fwd &&
        !first_forward_seen_[static_cast<size_t>(pr.chunk)]) {
      first_forward_seen_[static_cast<size_t>(pr.chunk)] = true;
      int32_t waited = -1;
      for (int32_t j = 0; j < n; ++j) {
        const int32_t op = start_need_[static_cast<size_t>(pr.chunk)][static_cast<size_t>(j)];
        if (op > waited) hook(j, true, waited = op);
      }
    }
    if (z_.gather_per_pass && any_dp()) unit_gathers(pr, n);
    const bool reduce_now =
        !fwd && (z_.reduce_every_microbatch ||
                 last_backward_[static_cast<size_t>(pr.chunk)] == static_cast<int32_t>(p));
    if (reduce_now && any_dp()) reductions(pr, n);
    // Without overlap_grad_reduce, once per step: one reduction of all gradients after the
    // last backward.
    if (p + 1 == sp_.passes.size() && !training_.overlap_grad_reduce &&
        !z_.reduce_every_microbatch && any_dp())
      for (bool expert : {false, true}) {
        const double params = all_params(expert);
        if (params > 0 && has_group(expert))
          hook(n, false, add_op(z_.reduce, expert, params * grad_bytes_, true));
      }
    std::stable_sort(sp_.hooks.begin() + static_cast<std::ptrdiff_t>(first_hook), sp_.hooks.end(),
                     [](const Hook& a, const Hook& b) {
                       return a.boundary < b.boundary ||
                              (a.boundary == b.boundary && !a.gate && b.gate);
                     });
    sp_.hook_begin.push_back(static_cast<int32_t>(sp_.hooks.size()));
  }

  // ZeRO 3: each unit's weights gathered before the pass (all posted at its start, in the
  // order the pass needs them); prefetched (overlap_param_gather, or the stack's own
  // prefetch: TrainingSpec::param_gather_overlapped) each owner waits for its own,
  // else the pass waits for all of them before it starts.
  void unit_gathers(const PassRef& pr, int32_t n) {
    const bool fwd = pr.dir == PassDir::Forward;
    chunk_buckets(sp_, pr.chunk, 0.0, buckets_);
    if (fwd) std::reverse(buckets_.begin(), buckets_.end());
    std::vector<int32_t> need(static_cast<size_t>(n), -1);
    for (const Bucket& b : buckets_) {
      if (!has_group(b.expert)) continue;
      const int32_t op =
          add_op(CollectiveKind::AllGather, b.expert, b.params * kGatheredParamBytes, false);
      hook(0, false, op);
      for (int32_t j = b.lo; j <= b.hi; ++j) need[static_cast<size_t>(fwd ? j : n - 1 - j)] = op;
    }
    int32_t waited = -1;
    for (int32_t q = 0; q < n; ++q) {
      const int32_t op = gather_overlap_ ? need[static_cast<size_t>(q)]
                                         : static_cast<int32_t>(sp_.dp_ops.size()) - 1;
      if (op > waited) hook(gather_overlap_ ? q : 0, true, waited = op);
    }
  }

  // A backward that reduces its chunk's gradients: with overlap_grad_reduce each bucket (a
  // ZeRO-3 unit) posted as its last owner's backward ends; without, per micro-batch
  // (ZeRO >= 2) one collective per group at the pass's end, waited for there.
  void reductions(const PassRef& pr, int32_t n) {
    chunk_buckets(sp_, pr.chunk, z_.gather_per_pass ? 0.0 : capacity_, buckets_);
    if (training_.overlap_grad_reduce) {
      for (const Bucket& b : buckets_)
        if (has_group(b.expert))
          hook(n - 1 - b.lo + 1, false, add_op(z_.reduce, b.expert, b.params * grad_bytes_, true));
    } else if (z_.reduce_every_microbatch) {
      for (bool expert : {false, true}) {
        double params = 0;
        for (const Bucket& b : buckets_) params += b.expert == expert ? b.params : 0.0;
        if (params <= 0 || !has_group(expert)) continue;
        const int32_t op = add_op(z_.reduce, expert, params * grad_bytes_, true);
        hook(n, false, op);
        hook(n, true, op);
      }
    }
  }

  const TrainingSpec& training_;
  StageProgram& sp_;
  const ZeroSchedule z_;
  const bool gather_overlap_;  // the parameter gathers prefetched beside the passes
  const int64_t vpp_;
  const double grad_bytes_, capacity_;
  const int64_t dp_size_, edp_size_;
  std::vector<Bucket> buckets_;
  std::vector<std::vector<int32_t>> start_need_;
  std::vector<bool> first_forward_seen_;
  std::vector<int32_t> last_backward_;
};

}  // namespace

void build_stage_program(const Workload& w, const ModelSpec& model, const TrainingSpec& training,
                         int64_t stage, StageProgram& sp) {
  const StageInfo& st = w.stages[static_cast<size_t>(stage)];
  pipeline_schedule(w.par.pp, w.par.vpp, w.num_microbatches, stage, sp.passes);
  build_owners(w, model, st, sp);
  build_segments(w.par.vpp, sp);
  DpStreamBuilder(w, training, sp).build();
  // Adam over the local optimizer shard (workload.hpp).
  sp.optimizer_bytes = st.optimizer_params * kAdamStepBytesPerParam;
}

}  // namespace rapid::des
