#include "rapid/analytical/analytical_evaluator.hpp"

#include "rapid/common/eval_context.hpp"
#include "rapid/common/fnv1a.hpp"

#include <algorithm>
#include <array>
#include <atomic>

#include "rapid/analytical/data_parallel.hpp"
#include "rapid/analytical/offload.hpp"
#include "rapid/analytical/pipeline_timing.hpp"
#include "rapid/core/bottleneck.hpp"
#include "rapid/cost/link_sharing.hpp"
#include "rapid/workload/model_flops.hpp"
#include "rapid/workload/schedule.hpp"

namespace rapid {

namespace {

uint64_t next_evaluator_id() {
  static std::atomic<uint64_t> next{1};
  return next.fetch_add(1, std::memory_order_relaxed);
}

}  // namespace

AnalyticalEvaluator::AnalyticalEvaluator(const ModelSpec& model, const TrainingSpec& training,
                                         const HardwareSpec& hw, const NetworkSpec& net)
    : model_(model),
      training_(training),
      hw_(stack_hardware(hw, training)),
      compute_(hw_, training.dtype, attention_kernel(hw, training), {},
               quantized_gemm_dtype(training.framework.fp8.recipe)),
      interference_(hw_, net, training, attention_kernel(hw, training)),
      collective_(hw_, net),
      model_flops_per_token_(model_flops_per_token(model, training.seq_length)),
      step_efficiency_(hw_.step_efficiency * training.compute_efficiency),
      id_(next_evaluator_id()) {}

namespace {

// The template times of the layouts this thread evaluated lately, per evaluator: a
// two-way set-associative table hashed on (evaluator, layout as the templates see it).
// A sweep's innermost axes are the recompute option and the hardware variant (one
// evaluator each): the layouts that share templates (the ZeRO stages of a recompute option
// on a variant, its vpp values, the methods of full recompute) come up to
// (recompute options x variants) points apart within one (mbs, sp) block of the index
// (enumerator.hpp). 2048 entries (2 MiB per thread, allocated on first use): on the
// 100-variant 10^8-point job 1.83 M points/s per core against 1.55 M with 8192 entries
// (which miss the CPU's caches) and 1.77 M with 1024. The ways' tags sit apart from the
// times (48 KiB): a lookup reads one cache line of them.
struct TemplateTag {
  uint64_t evaluator = 0;  // 0: empty
  uint64_t hash = 0;
  uint64_t used = 0;  // this thread's tick of its last use: the older way is replaced
};
struct TemplateCacheEntry {
  ParallelConfig key;
  AnalyticalEvaluator::TemplateTimes times;
};
constexpr size_t kTemplateCacheSets = 1024;
// The thread's template-time cache, in its evaluation context (eval_context.hpp).
struct TemplateCache {
  std::vector<std::array<TemplateTag, 2>> tags;
  std::vector<std::array<TemplateCacheEntry, 2>> entries;
  uint64_t tick = 0;

  size_t set_of(uint64_t hash) {
    if (entries.empty()) {
      tags.resize(kTemplateCacheSets);
      entries.resize(kTemplateCacheSets);
    }
    return (hash ^ (hash >> 29)) % kTemplateCacheSets;
  }
};

// The layout as the op templates and their times see it: not its ZeRO stage (the DP
// traffic is not in the templates), vpp, recompute method and layer count (how many layers
// replay, chunk_layers_of, not what one replays) or offloaded layers (offload.hpp).
ParallelConfig template_key(const ParallelConfig& par) {
  ParallelConfig k = par;
  k.zero_stage = 0;
  k.vpp = 1;
  if (k.recompute == Recompute::Full) {
    k.recompute_method = RecomputeMethod::Uniform;
    k.recompute_layers = 1;
  }
  k.offload_layers = 0;
  return k;
}

uint64_t template_hash(uint64_t evaluator, const ParallelConfig& k) {
  return layout_hash(k, fnv1a(kFnvOffsetBasis, evaluator));
}

}  // namespace

const AnalyticalEvaluator::TemplateTimes* AnalyticalEvaluator::cached_template_times(
    const ParallelConfig& par) const {
  const ParallelConfig key = template_key(par);
  const uint64_t h = template_hash(id_, key);
  TemplateCache& cache = EvalContext::current().get<TemplateCache>();
  const size_t set = cache.set_of(h);
  for (size_t way = 0; way < 2; ++way) {
    TemplateTag& tag = cache.tags[set][way];
    if (tag.evaluator != id_ || tag.hash != h) continue;
    TemplateCacheEntry& e = cache.entries[set][way];
    if (!(e.key == key)) continue;
    tag.used = ++cache.tick;
    return &e.times;
  }
  return nullptr;
}

const AnalyticalEvaluator::TemplateTimes& AnalyticalEvaluator::template_times(
    const Workload& w) const {
  const ParallelConfig key = template_key(w.par);
  const uint64_t h = template_hash(id_, key);
  TemplateCache& cache = EvalContext::current().get<TemplateCache>();
  const size_t set = cache.set_of(h);
  std::array<TemplateTag, 2>& tags = cache.tags[set];
  const size_t way = tags[0].used <= tags[1].used ? 0 : 1;
  tags[way] = {id_, h, ++cache.tick};
  TemplateCacheEntry& e = cache.entries[set][way];
  e.key = key;
  TemplateTimes& t = e.times;
  const std::vector<Op>* const ops[kTemplatePasses] = {
      &w.layer.forward,      &w.layer.backward,      &w.layer.recompute,   &w.moe_layer.forward,
      &w.moe_layer.backward, &w.moe_layer.recompute, &w.embedding.forward, &w.embedding.backward,
      &w.lm_head.forward,    &w.lm_head.backward};
  for (size_t p = 0; p < kTemplatePasses; ++p)
    t.pass[p] = pass_time(*ops[p], w, &t.classes[p], &t.links[p]);
  t.flops = template_flops(w);
  return t;
}

AnalyticalEvaluator::PassTime AnalyticalEvaluator::pass_time(const std::vector<Op>& ops,
                                                             const Workload& w,
                                                             PassClasses* classes,
                                                             PassLinks* links) const {
  PassTime t;
  PassLinks l;  // of the collectives
  PassClasses split;
  const size_t n = ops.size();
  t.ops = static_cast<double>(n);
  auto compute_time = [&](const Op& op) { return compute_.time(op) / step_efficiency_; };
  const ComputeCost& dp_cost =
      interference_.cost(InterferenceModel::dp_profile(w.group(CommGroup::DPCP)));
  for (size_t i = 0; i < n; ++i) {
    const Op& op = ops[i];
    if (op.kind != OpKind::Collective && op.kind != OpKind::P2P) {
      const double c = compute_time(op);
      t.compute += c;
      split.compute[op_class(op.kind)] += c;
      t.dp_contended += dp_cost.time(op) / step_efficiency_;
      continue;
    }
    const CollectivePlan plan = collective_.plan(op.collective, op.bytes, w.group(op.group));
    double comm = plan.time_s(), beside = 0;
    // Communication pipelined with a neighbouring kernel (TP overlap: Megatron-Core
    // --tp-comm-overlap with Transformer Engine userbuffers; CP ring attention) is exposed
    // only for the part that outlasts that kernel, which itself runs slower beside it: the
    // overlap kernel's SMs and HBM traffic (interference.hpp); the collective slows when
    // the two ask more of HBM than it has.
    const size_t j = i + static_cast<size_t>(op.overlap);
    if (op.overlap != 0 && j < n && ops[j].kind != OpKind::Collective &&
        ops[j].kind != OpKind::P2P) {
      const InterferenceModel::Profile p = InterferenceModel::profile_of(op, w);
      const double alone = compute_time(ops[j]);
      beside = interference_.cost(p).time(ops[j]) / step_efficiency_;
      t.interference += beside - alone;
      comm *= interference_.comm_slowdown(p, ops[j], beside);
    }
    // Exposed: what outlasts the kernel beside it; with k flows of a DP collective on the
    // links of its slowest tier (NVLink or the NICs) the whole time, that tier's part takes
    // (f + k) / f as long, f its own flows per link (tier_share).
    const double alone_exposed = std::max(0.0, comm - beside);
    l.busy[0] += tier_time(plan, false);
    l.busy[1] += tier_time(plan, true);
    for (int net = 0; net < 2; ++net) {
      const double share = tier_share(plan, net == 1);
      if (share <= 0) continue;
      for (int k = 1; k <= 2; ++k)
        l.contended[net][k - 1] += std::max(0.0, comm * (1.0 + k * share) - beside) - alone_exposed;
    }
    comm = alone_exposed;
    t.comm += comm;
    split.comm[comm_class(op.group)] += comm;
  }
  if (classes) *classes = split;
  if (links) *links = l;
  return t;
}

void AnalyticalEvaluator::fill_rates(const Workload& w, double step_s, EvalResult& r) const {
  fill_rates(w, template_flops(w), step_s, r);
}

void AnalyticalEvaluator::fill_rates(const Workload& w, const TemplateFlops& f, double step_s,
                                     EvalResult& r) const {
  const double gpus = static_cast<double>(w.par.num_gpus());
  const double tokens = static_cast<double>(w.tokens_per_step());
  r.step_time_s = step_s;
  r.tokens_per_s = tokens / step_s;
  r.tokens_per_s_per_gpu = r.tokens_per_s / gpus;
  const double peak = compute_.peak_FLOPs() * gpus * step_s;
  r.mfu = model_flops_per_token_ * tokens / peak;
  // HFU adds the recomputed forward work to the model FLOPs (Chowdhery et al. 2022, App. B).
  const double recompute_flops = step_flops(w, f, true) - step_flops(w, f, false);
  r.hfu = (model_flops_per_token_ * tokens + recompute_flops) / peak;
}

namespace {

// One pass of a chunk on one GPU: its time and what it is made of.
struct ChunkPass {
  double time = 0;  // GPU time: compute, interference, exposed comm, host waits
  double compute = 0, interference = 0, host = 0;
  double contended[2][2] = {};  // PassLinks::contended (overlapped ZeRO-3 units only)
  /// What the pass's collectives bound by NVLink (`net` 0) or the NICs (1) add beside
  /// `flows` DP flows on those links on average (PassLinks::contended, linear in between,
  /// the second slope beyond).
  double contention(int net, double flows) const {
    const double one = contended[net][0], two = contended[net][1];
    if (flows <= 0) return 0.0;
    return flows <= 1 ? flows * one : one + (flows - 1.0) * (two - one);
  }
};

// A stage's data-parallel traffic: per step (total, exposed after its last pass or before
// its first), per micro-batch (total, exposed beyond the passes).
struct StageDp {
  double total = 0, mb_total = 0, mb_exposed = 0;
  // Per step: the gradient reduction left after the last backward (exposed) and what it
  // slows the last backward by (interference); the weight gather's wait before the first
  // forward and what it slows that forward by (both delay the pipeline's fill), or, without
  // overlap, its whole time after the optimizer.
  double reduce_exposed = 0, reduce_interference = 0;
  double gather_exposed = 0, gather_interference = 0, gather_after = 0;
  // Compute lost to the DP collectives beside each micro-batch's passes (ZeRO 2/3).
  double mb_interference_f = 0, mb_interference_b = 0;
  // Per micro-batch: activation offload copies the passes do not hide (offload.hpp).
  double offload_exposed = 0;
  // Per micro-batch: what TP/CP/EP collectives lose sharing NVLink with the DP traffic.
  double mb_link_contention = 0;
  double exposed() const { return reduce_exposed + gather_exposed + gather_after; }
  double interference() const { return reduce_interference + gather_interference; }
};

// Whether stage b runs what stage a runs, for a dense model (evaluate() reads these fields
// of a stage; a MoE model's chunks also depend on which layers are MoE layers).
bool same_stage_work(const StageInfo& a, const StageInfo& b) {
  return a.num_layers == b.num_layers && a.num_moe_layers == b.num_moe_layers &&
         a.has_embedding == b.has_embedding && a.has_lm_head == b.has_lm_head &&
         a.params == b.params && a.expert_params == b.expert_params &&
         a.recompute_dense == b.recompute_dense && a.recompute_moe == b.recompute_moe;
}

// Extra compute time when `overlap` seconds of a collective run beside compute that takes
// `contended / alone` times as long there: the compute progresses at alone / contended.
double overlap_cost(double overlap, double alone, double contended) {
  if (overlap <= 0 || alone <= 0 || contended <= alone) return 0.0;
  return overlap * (1.0 - alone / contended);
}

}  // namespace

void AnalyticalEvaluator::evaluate(const Workload& w, EvalResult& r) const {
  evaluate(w, template_times(w), r);
}

void AnalyticalEvaluator::evaluate(const Workload& w, const TemplateTimes& tt,
                                   EvalResult& r) const {
  const ParallelConfig& par = w.par;
  const double m = static_cast<double>(w.num_microbatches);
  const int64_t pp = par.pp, vpp = par.vpp;
  // A pipeline transfer leaves as a pass ends; under 1F1B every exchange between two stages
  // comes at the end of a backward on one of them, where overlapped per-micro-batch
  // reductions (ZeRO-2/3) start the last unit's or bucket's gradients: the two share the
  // links they both use (link_sharing.hpp), and what the reduction has left when the
  // transfer is done delays the next pass's gathers (ZeRO-3).
  const CollectivePlan p2p_plan =
      pp > 1 ? collective_.plan(CollectiveKind::SendRecv, w.p2p.bytes, w.group(CommGroup::PP))
             : CollectivePlan{};
  const CollectivePlan trailing = trailing_reduction(w);
  double p2p_one = p2p_plan.time_s();
  if (pp > 1 && trailing.num_tiers > 0) p2p_one = plan_time_beside(p2p_plan, trailing);

  const double host_op = training_.host_overhead_per_op_s;
  // The host issues ops one by one (Python + launch); when a pass's GPU work is shorter
  // than its issue time, the GPU waits (launch-bound small micro-batches).
  auto pass = [&](const PassTime& t) {
    ChunkPass c;
    c.compute = t.compute;
    c.interference = t.interference;
    c.time = std::max(t.total(), t.ops * host_op);
    c.host = c.time - t.total();
    return c;
  };
  // Chunk c of stage st: its layers' template passes (with their recompute), the
  // embedding's before chunk 0 of stage 0, the LM head's after the last chunk of the last
  // stage; add(forward?, template pass, times) for each.
  auto chunk_passes = [&](const StageInfo& st, int64_t c, auto&& add) {
    const ChunkLayers L = chunk_layers_of(model_, par, st, c);
    add(true, kLayerF, L.dense), add(true, kMoeF, L.moe);
    add(false, kLayerB, L.dense), add(false, kLayerR, L.dense_rc);
    add(false, kMoeB, L.moe), add(false, kMoeR, L.moe_rc);
    if (st.has_embedding && c == 0) add(true, kEmbeddingF, 1), add(false, kEmbeddingB, 1);
    if (st.has_lm_head && c == vpp - 1) add(true, kHeadF, 1), add(false, kHeadB, 1);
    return L;
  };

  // The step's buffers, kept in the thread's evaluation context (no allocation once warm).
  struct StepScratch {
    PipelineInput pipe;
    std::vector<ChunkPass> fwd_pass, bwd_pass;
    std::vector<double> chunk_share;  // the chunk's share of its stage's parameters
    // Per chunk and micro-batch: its backward's wait for what the backward before it left
    // (UnitWaits::bwd_after).
    std::vector<double> drain_of;
    std::vector<StageDp> dp;
    std::vector<double> stage_compute;  // per micro-batch: the bottleneck's pick
    PipelineTimes pt;
  };
  StepScratch& scratch = EvalContext::current().get<StepScratch>();
  auto& [pipe, fwd_pass, bwd_pass, chunk_share, drain_of, dp, stage_compute, pt] = scratch;
  pipe.pp = pp;
  pipe.vpp = vpp;
  pipe.m = w.num_microbatches;
  pipe.p2p_s = p2p_one;
  pipe.fwd.assign(static_cast<size_t>(pp * vpp), 0.0);
  pipe.bwd.assign(static_cast<size_t>(pp * vpp), 0.0);
  // Every chunk's passes are set below (computed, or copied from the stage before).
  fwd_pass.resize(static_cast<size_t>(pp * vpp));
  bwd_pass.resize(static_cast<size_t>(pp * vpp));
  chunk_share.assign(static_cast<size_t>(pp * vpp), 0.0);
  drain_of.assign(static_cast<size_t>(pp * vpp), 0.0);

  stage_compute.assign(static_cast<size_t>(pp), 0.0);
  dp.assign(static_cast<size_t>(pp), StageDp{});
  struct DpMemo {
    bool valid = false;
    double params = 0, units = 0, sf = 0, sb = 0;
    DpTime d;
  };
  DpMemo dp_memo[2];  // dense, experts
  double optimizer_max = 0;
  double lead = 0;  // when the stage's first forward can start: the fill ahead of it
  // The weight gather's wait before stage k0 / vpp's first forward: its chunks' weights
  // arrive in order, chunk c needed after the fill ahead and the warm-up's c x pp forwards.
  auto gather_wait = [&](double gather, double bucket_share, size_t k0) {
    double wait = gather * std::min(1.0, bucket_share);
    double done = 0;
    for (int64_t c = 0; c < vpp; ++c) {
      const size_t k = k0 + static_cast<size_t>(c);
      done += gather * chunk_share[k];
      const double need =
          lead + static_cast<double>(c * pp) * (fwd_pass[k].time + p2p_one) + fwd_pass[k].time;
      wait = std::max(wait, done - need);
    }
    return wait;
  };
  // Per DP group (dense, experts) of the last stage computed: its overlapped gather.
  struct Gather {
    bool waits = false;
    double gather = 0, bucket_share = 0;
  } gathers[2];
  // Parameter gathers beside the compute (TrainingSpec::param_gather_overlapped: ZeRO-3's
  // per-unit prefetch also where only the stack's own prefetch is credited, docs/model.md
  // sec 9); overlapped ZeRO-3 gathers: unit by unit in each pass (unit_waits.cpp).
  const bool gather_overlap = training_.param_gather_overlapped(par.zero_stage);
  const bool units = par.zero_stage >= 3 && gather_overlap;
  for (int64_t j = 0; j < pp; ++j) {
    const StageInfo& st = w.stages[static_cast<size_t>(j)];
    const size_t k0 = static_cast<size_t>(j * vpp);
    if (j > 0 && !model_.moe.enabled() &&
        same_stage_work(w.stages[static_cast<size_t>(j) - 1], st)) {
      // A stage like the one before it (the middle stages of an even split): the same
      // passes, DP traffic, offload and optimizer shard; only the wait for its weights
      // (after the longer fill ahead of it) differs.
      const auto v = static_cast<size_t>(vpp), p0 = k0 - v;
      std::copy_n(fwd_pass.begin() + p0, v, fwd_pass.begin() + k0);
      std::copy_n(bwd_pass.begin() + p0, v, bwd_pass.begin() + k0);
      std::copy_n(chunk_share.begin() + p0, v, chunk_share.begin() + k0);
      std::copy_n(drain_of.begin() + p0, v, drain_of.begin() + k0);
      std::copy_n(pipe.fwd.begin() + p0, v, pipe.fwd.begin() + k0);
      std::copy_n(pipe.bwd.begin() + p0, v, pipe.bwd.begin() + k0);
      stage_compute[static_cast<size_t>(j)] = stage_compute[static_cast<size_t>(j) - 1];
      StageDp& sync = dp[static_cast<size_t>(j)];
      sync = dp[static_cast<size_t>(j) - 1];
      if (gathers[0].waits || gathers[1].waits) {
        sync.gather_exposed = 0;
        for (const Gather& g : gathers)
          if (g.waits) sync.gather_exposed += gather_wait(g.gather, g.bucket_share, k0);
      }
      lead += fwd_pass[k0].time + p2p_one;
      continue;
    }
    gathers[0] = gathers[1] = Gather{};
    PassTime stage_f, stage_b;
    for (int64_t c = 0; c < vpp; ++c) {
      PassTime f, b;
      PassLinks lf, lb;
      const ChunkLayers L = chunk_passes(st, c, [&](bool fwd, size_t t, int64_t n) {
        if (n <= 0) return;
        const auto times = static_cast<double>(n);
        (fwd ? f : b).add(tt.pass[t], times);
        if (units) (fwd ? lf : lb).add(tt.links[t], times);
      });
      const size_t k = static_cast<size_t>(j * vpp + c);
      chunk_share[k] = static_cast<double>(L.dense) * w.layer_params +
                       static_cast<double>(L.moe) * w.moe_layer_params +
                       (st.has_embedding && c == 0 ? w.embedding_params : 0.0) +
                       (st.has_lm_head && c == vpp - 1 ? w.lm_head_params : 0.0);
      fwd_pass[k] = pass(f);
      bwd_pass[k] = pass(b);
      std::copy_n(&lf.contended[0][0], 4, &fwd_pass[k].contended[0][0]);
      std::copy_n(&lb.contended[0][0], 4, &bwd_pass[k].contended[0][0]);
      stage_f.add(f);
      stage_b.add(b);
    }

    stage_compute[static_cast<size_t>(j)] = stage_f.compute + stage_b.compute;
    // Gradients and weights: dense ones over data x context parallel, routed experts over
    // the expert data-parallel group.
    const double sf = pass(stage_f).time, sb = pass(stage_b).time;
    double stage_params = 0;
    for (int64_t c = 0; c < vpp; ++c) stage_params += chunk_share[static_cast<size_t>(j * vpp + c)];
    for (int64_t c = 0; c < vpp; ++c)
      chunk_share[static_cast<size_t>(j * vpp + c)] /= std::max(stage_params, 1.0);
    StageDp& sync = dp[static_cast<size_t>(j)];
    sync = StageDp{};
    const struct {
      double params;
      CommGroup group;
    } groups[2] = {{st.params - st.expert_params, CommGroup::DPCP},
                   {st.expert_params, CommGroup::EDP}};
    for (const auto& [params, group] : groups) {
      if (params <= 0) continue;
      DpTraffic traffic =
          dp_traffic(params, par.zero_stage, training_.grad_reduce_bytes, kGatheredParamBytes);
      traffic.units = static_cast<double>(zero3_units(st, group == CommGroup::EDP));
      // Stages alike (same parameters, units and pass times) have the same DP times.
      DpMemo& memo = dp_memo[group == CommGroup::EDP ? 1 : 0];
      if (!(memo.valid && memo.params == params && memo.units == traffic.units && memo.sf == sf &&
            memo.sb == sb)) {
        memo = {true,
                params,
                traffic.units,
                sf,
                sb,
                dp_time(traffic, w.group(group), collective_, sf, sb, training_.grad_bucket_bytes,
                        training_.overlap_grad_reduce, gather_overlap)};
      }
      const DpTime& d = memo.d;
      sync.total += d.step_total();
      sync.mb_total += d.mb_total;
      // Overlapped DP traffic takes SMs and bandwidth from the passes it runs beside.
      const bool og = training_.overlap_grad_reduce, op = gather_overlap;
      const double mb_beside_b = (par.zero_stage >= 3 && op ? d.mb_gather : 0.0) +
                                 (par.zero_stage >= 2 && og ? d.mb_reduce : 0.0);
      // (Overlapped ZeRO-3 units: pass by pass, below.)
      const bool streamed = par.zero_stage == 2 && og;
      const double ext_b =
          units ? 0.0
                : overlap_cost(std::min(mb_beside_b, sb), stage_b.compute, stage_b.dp_contended);
      sync.mb_interference_b += ext_b;
      // A streamed reduction longer than the backward that posted it runs on beside the
      // forward after it (the DES's reduction stream has no gate in the passes).
      if (streamed)
        sync.mb_interference_f +=
            overlap_cost(std::min(std::max(0.0, d.mb_reduce - sb - ext_b), sf), stage_f.compute,
                         stage_f.dp_contended);
      // The passes run longer beside the traffic: the traffic has that much more to hide in.
      // Overlapped ZeRO-3 gathers are waited for unit by unit in each pass (below); an
      // overlapped ZeRO-2 reduction runs on its stream into the passes after it, waited for
      // only after the last backward (the DES's stage program: no gate in the passes).
      if (!units && !streamed) sync.mb_exposed += d.mb_exposed_extended(0.0, ext_b);
      if (units || streamed) sync.reduce_exposed += last_reduction(w, st, group);
      // Step-level traffic, chunk by chunk (the DES's buckets, stage_program.cpp): the
      // reduction of the gradients left after the stage's last backward, chunk 0's (its last
      // backward ends the stage; the other chunks reduce during the cool-down behind it);
      // the weight gather posted at the step's start, chunk c needed at its first forward,
      // after the warm-up's c x pp forwards of the earlier chunks and the fill ahead.
      const double bucket_share = std::min(
          1.0, training_.grad_bucket_bytes / std::max(params * training_.grad_reduce_bytes, 1.0));
      const double share0 = chunk_share[k0];
      sync.reduce_exposed += dp_exposed(d.reduce * share0, bwd_pass[k0].time,
                                        std::min(1.0, bucket_share / share0), og);
      const double c0 = static_cast<double>(vpp);  // chunk 0's share of the stage's compute
      if (og)
        sync.reduce_interference += overlap_cost(std::min(d.reduce * share0, bwd_pass[k0].time),
                                                 stage_b.compute / c0, stage_b.dp_contended / c0);
      Gather& gather = gathers[group == CommGroup::EDP ? 1 : 0];
      gather = {op && d.gather > 0, d.gather, bucket_share};
      if (!op) {
        sync.gather_after += d.gather;
      } else if (d.gather > 0) {
        sync.gather_exposed += gather_wait(d.gather, bucket_share, k0);
        sync.gather_interference += overlap_cost(std::min(d.gather, fwd_pass[k0].time),
                                                 stage_f.compute / c0, stage_f.dp_contended / c0);
      }
    }
    // ZeRO-2/3's per-micro-batch traffic that outlasts the passes, spread over its chunks;
    // ZeRO-3's overlapped gathers where each pass waits for them.
    const double spread_f = sync.mb_interference_f / static_cast<double>(vpp),
                 spread_b = (sync.mb_exposed + sync.mb_interference_b) / static_cast<double>(vpp);
    // A chunk's additions: its passes' waits, the compute the traffic beside them slows,
    // and its collectives' slowdown on NVLink; a chunk like the one before (the same layers,
    // no extras) adds the same.
    struct Adds {
      double f = 0, b = 0, ext_f = 0, ext_b = 0, tp_f = 0, tp_b = 0, drain = 0;
    } adds;
    ChunkLayers before{};
    const double passes = static_cast<double>(w.num_microbatches * vpp);
    // The passes that follow a backward meet its reduction (schedule.cpp: w warm-up
    // forwards, 1F1B pairs, w cool-down backwards): every forward but the warm-up's and the
    // first after it; the cool-down's backwards (but the first, when no pair comes before).
    const double warm = static_cast<double>(warmup_forwards(pp, vpp, w.num_microbatches, j));
    const UnitFollow follow = {units ? std::max(0.0, passes - warm - 1.0) / passes : 0.0,
                               units ? (warm - (warm == passes ? 1.0 : 0.0)) / passes : 0.0};
    for (int64_t c = 0; c < vpp; ++c) {
      const size_t k = k0 + static_cast<size_t>(c);
      pipe.fwd[k] = fwd_pass[k].time + spread_f;
      pipe.bwd[k] = bwd_pass[k].time + spread_b;
      if (!units) continue;
      const ChunkLayers L = chunk_layers_of(model_, par, st, c);
      const bool extras = (st.has_embedding && c <= 1) || (st.has_lm_head && c == vpp - 1);
      if (c == 0 || extras || L.dense != before.dense || L.moe != before.moe ||
          L.dense_rc != before.dense_rc || L.moe_rc != before.moe_rc) {
        const UnitWaits u = unit_waits(w, tt, st, c, p2p_plan.time_s(), follow);
        // The DP traffic overlaps the compute for the part of its time the pass does not
        // wait for it; over that part the compute runs slower beside it (interference.hpp),
        // which leaves the traffic that much more to hide in.
        adds.ext_f = overlap_cost(std::clamp(u.dp_fwd - u.fwd, 0.0, fwd_pass[k].compute),
                                  stage_f.compute, stage_f.dp_contended);
        adds.ext_b = overlap_cost(std::clamp(u.dp_bwd - u.bwd, 0.0, bwd_pass[k].compute),
                                  stage_b.compute, stage_b.dp_contended);
        // TP/EP collectives on NVLink share it with the DP traffic's NVLink tier while that
        // runs (link_sharing.hpp): the pass takes that much longer, again window for the
        // gathers.
        adds.tp_f = adds.tp_b = 0;
        for (int net = 0; net < 2; ++net) {
          adds.tp_f += fwd_pass[k].contention(
              net, u.flows_fwd[net] / std::max(fwd_pass[k].time + u.fwd, 1e-12));
          adds.tp_b += bwd_pass[k].contention(
              net, u.flows_bwd[net] / std::max(bwd_pass[k].time + u.bwd, 1e-12));
        }
        adds.f = std::max(u.fwd_floor, u.fwd - adds.ext_f - adds.tp_f);
        adds.b = std::max(u.bwd_floor, u.bwd - adds.ext_b - adds.tp_b);
        adds.drain = std::min(adds.b, u.bwd_after);
      }
      before = L;
      pipe.fwd[k] += adds.f + adds.ext_f + adds.tp_f;
      pipe.bwd[k] += adds.b + adds.ext_b + adds.tp_b;
      sync.mb_exposed += adds.f + adds.b;
      drain_of[k] = adds.drain;
      sync.mb_link_contention += adds.tp_f + adds.tp_b;
      sync.mb_interference_f += adds.ext_f;
      sync.mb_interference_b += adds.ext_b;
    }
    // Activations offloaded to the host: the first layers' copies beyond what the stage's
    // passes hide (offload.hpp), on its first chunk (where those layers are).
    const OffloadTime off = offload_time(model_, training_, hw_, par, st, sf, sb);
    pipe.fwd[k0] += off.fwd_exposed;
    pipe.bwd[k0] += off.bwd_exposed;
    sync.offload_exposed = off.fwd_exposed + off.bwd_exposed;

    // Adam over the local optimizer shard (workload.hpp).
    optimizer_max =
        std::max(optimizer_max, compute_.memory_time(st.optimizer_params * kAdamStepBytesPerParam));
    lead += fwd_pass[k0].time + p2p_one;
  }

  // The schedule's critical path (pipeline_timing.hpp); then the step-level DP traffic
  // not hidden behind the last backward / the next forward, and the optimizer.
  // Each stage ends with its last pass, its DP traffic left (the gradient reduction that
  // outlasts its last backward) and its optimizer step; the step ends with the last stage
  // to do so (the first stage's last backward ends the pipeline's drain).
  pipeline_timing(pipe, pt);
  // The first micro-batch's forward runs through every stage (the fill) and the last one's
  // backward back through every stage (the drain): what the step's DP traffic adds to those
  // passes (gather waits and slowdown before the first forwards, reduction slowdown of the
  // last backwards) delays everything after it.
  double fill = 0;
  for (const StageDp& d : dp) fill += d.gather_exposed + d.gather_interference;
  double dp_total = 0, step = 0, drain = 0;
  for (size_t j = dp.size(); j-- > 0;) {
    const StageDp& d = dp[j];
    dp_total = std::max(dp_total, d.total + m * d.mb_total);
    drain += d.reduce_interference;  // the drain reaches stage j after the stages behind it
    step = std::max(step,
                    pt.end[j] + fill + drain + d.reduce_exposed + d.gather_after + optimizer_max);
  }
  fill_rates(w, tt.flops, step, r);
  r.step_time_analytical_s = step;

  // Breakdown of the bottleneck stage (core/bottleneck.hpp: the most compute, then the most
  // sends; docs/model.md "Breakdown"): its compute (by op class), exposed TP/CP/EP comm (by
  // group), sends, exposed DP, host waits and optimizer; the bubble is the rest of the step.
  size_t b = 0;
  for (size_t j = 1; j < static_cast<size_t>(pp); ++j)
    if (heavier_stage(stage_compute[j], stage_sends(static_cast<int64_t>(j), pp, vpp),
                      stage_compute[b], stage_sends(static_cast<int64_t>(b), pp, vpp)))
      b = j;
  double compute = 0, interference = 0, host = 0, sends = 0;
  double runs[kTemplatePasses] = {};  // of each template pass on the stage
  for (int64_t c = 0; c < vpp; ++c) {
    const size_t k = b * static_cast<size_t>(vpp) + static_cast<size_t>(c);
    compute += fwd_pass[k].compute + bwd_pass[k].compute;
    interference += fwd_pass[k].interference + bwd_pass[k].interference;
    host += fwd_pass[k].host + bwd_pass[k].host;
    chunk_passes(w.stages[b], c,
                 [&](bool, size_t t, int64_t n) { runs[t] += static_cast<double>(n); });
    const bool last = b + 1 == static_cast<size_t>(pp) && c == vpp - 1, first = b == 0 && c == 0;
    sends += (last ? 0.0 : p2p_one) + (first ? 0.0 : p2p_one);
  }
  PassClasses classes;  // the stage's compute and exposed comm by class
  for (size_t t = 0; t < kTemplatePasses; ++t)
    if (runs[t] > 0) classes.add(tt.classes[t], runs[t]);
  const StageDp& db = dp[b];
  r.compute_time_s = m * compute;
  set_class_columns(r, kOpClassColumns, classes.compute, m);
  r.interference_time_s =
      m * (interference + db.mb_interference_f + db.mb_interference_b) + db.interference();
  // The layers' collectives slowed beside the DP traffic, by each group's share.
  double layer_comm = 0;
  for (double c : classes.comm) layer_comm += c;
  if (db.mb_link_contention > 0 && layer_comm > 0)
    for (double& c : classes.comm) c *= 1.0 + db.mb_link_contention / layer_comm;
  set_class_columns(r, kCommClassColumns, classes.comm, m);
  r.host_bound_time_s = m * host;
  r.pp_comm_time_s = m * sends;
  r.dp_comm_time_s = dp_total;
  // A backward that follows a backward (the cool-down's) waits for what that one left; where
  // its input comes from a virtual stage whose backward takes at least as long, the stage
  // waits for that input meanwhile and the delay reaches it through the drain: its bubble
  // (as the DES counts it), not its DP wait.
  double drained = 0;
  for (int64_t c = 0; c < vpp; ++c) {
    const int64_t q = c * pp + static_cast<int64_t>(b) + 1;  // the virtual stage after it
    if (q >= pp * vpp) continue;
    const size_t k = b * static_cast<size_t>(vpp) + static_cast<size_t>(c);
    const size_t ku = static_cast<size_t>((q % pp) * vpp + q / pp);  // device q % pp, chunk q / pp
    if (pipe.bwd[ku] >= pipe.bwd[k]) drained += drain_of[k];
  }
  r.dp_exposed_time_s = db.exposed() + m * (db.mb_exposed - drained);
  r.optimizer_time_s = optimizer_max;
  r.offload_time_s = m * db.offload_exposed;
  derive_totals(r);
}

}  // namespace rapid
