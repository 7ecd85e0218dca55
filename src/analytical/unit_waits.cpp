// Per-micro-batch ZeRO-2/3 traffic as the passes meet it (docs/model.md section 7): the
// waits of a ZeRO-3 pass for its units' gathers, and the reduction left after a stage's
// last backward. The DES's stage program (src/des/stage_program.cpp) posts the same
// collectives at the same boundaries: ZeRO-3 gathers every unit of a pass at its start on
// the gather stream, each unit waiting for its own; gradient reductions follow each unit's
// (bucket's) backward on the reduction stream and are waited for only before the optimizer.
#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>
#include <utility>

#include "rapid/analytical/analytical_evaluator.hpp"
#include "rapid/analytical/data_parallel.hpp"
#include "rapid/analytical/unit_pass.hpp"
#include "rapid/common/eval_context.hpp"
#include "rapid/cost/link_sharing.hpp"

namespace rapid {

namespace {

// One unit's DP traffic: its gather (16-bit weights, latency included) and that latency,
// its reduction's time on the links (gradients) and its start-up latency (the links are
// free during both latencies), the flow-seconds of each on NVLink and on the NICs (each
// tier's seconds times the flows it puts on a GPU's link: what the layers' collectives
// there meet) and the kind of link the gather is bound by. The dense part syncs over data
// x context parallel ranks, routed experts over expert data parallel, one after the other
// on the stage's stream.
struct UnitTraffic {
  double gather = 0, reduce = 0, gather_latency = 0, reduce_latency = 0;
  double flows_gather[2] = {}, flows_reduce[2] = {};  // NVLink, NICs
  int bound = 0;  // the gather's slowest tier: NVLink (0) or the NICs (1)
};
enum UnitKind : size_t { kEmb, kDense, kMoe, kHead, kUnitKinds };

// A ZeRO-3 chunk's (dense, expert) parameters with `bytes` each, one collective per group
// of the two, summed: (time, links-only time, flow-seconds by kind, the longer of the
// two collectives' tiers of each kind).
struct Traffic {
  double time = 0, links = 0, flows[2] = {};  // flow-seconds on NVLink, on the NICs
  double tier[2] = {};                        // seconds of its tier of each kind
};
Traffic traffic(const CollectiveCost& cost, CollectiveKind k, double bytes, double dense,
                double experts, const GroupShape& dp, const GroupShape& edp) {
  Traffic t;
  for (const auto& [params, g] : {std::pair{dense, &dp}, std::pair{experts, &edp}}) {
    if (params <= 0 || g->size <= 1) continue;
    const CollectivePlan p = cost.plan(k, bytes * params, *g);
    t.time += p.time_s();
    t.links += p.time_s() - p.latency_s;
    for (int i = 0; i < p.num_tiers; ++i) {
      const CollectiveTier& tier = p.tiers[static_cast<size_t>(i)];
      t.flows[tier.network ? 1 : 0] += tier.time_s() * tier.flows_per_link;
    }
    for (int net = 0; net < 2; ++net) t.tier[net] = std::max(t.tier[net], tier_time(p, net == 1));
  }
  return t;
}

}  // namespace

AnalyticalEvaluator::UnitWaits AnalyticalEvaluator::unit_waits(const Workload& w,
                                                               const TemplateTimes& tt,
                                                               const StageInfo& st, int64_t c,
                                                               double p2p_s,
                                                               const UnitFollow& follow) const {
  const ParallelConfig& par = w.par;
  const ChunkLayers L = chunk_layers_of(model_, par, st, c);
  const GroupShape &dp = w.group(CommGroup::DPCP), &edp = w.group(CommGroup::EDP);
  const double grad_bytes = training_.grad_reduce_bytes;
  const bool overlap_grad = training_.overlap_grad_reduce;
  const double moe_dense = w.moe_layer_params - w.moe_expert_params;
  // The units' traffic depends on the parameters a GPU holds and where its DP peers are
  // (tp, cp, ep, etp, dp, pp), not on the stage, chunk, micro-batch, recompute or ZeRO
  // options: computed once for those (the thread's last one is kept; a sweep's innermost
  // axes vary the others).
  struct Memo {
    uint64_t evaluator = 0;
    ParallelConfig key;
    std::array<UnitTraffic, kUnitKinds> units{};
  };
  Memo& memo = EvalContext::current().get<Memo>();
  ParallelConfig key;
  key.dp = par.dp, key.tp = par.tp, key.pp = par.pp, key.cp = par.cp, key.ep = par.ep,
  key.etp = par.etp;
  if (memo.evaluator != id_ || !(memo.key == key)) {
    const std::array<std::pair<double, double>, kUnitKinds> params = {
        {{w.embedding_params, 0.0},
         {w.layer_params, 0.0},
         {moe_dense, w.moe_expert_params},
         {w.lm_head_params, 0.0}}};
    for (size_t k = 0; k < kUnitKinds; ++k) {
      const auto [dense, experts] = params[k];
      const Traffic g =
          traffic(collective_, CollectiveKind::AllGather, 2.0, dense, experts, dp, edp);
      const Traffic r = overlap_grad ? traffic(collective_, CollectiveKind::ReduceScatter,
                                               grad_bytes, dense, experts, dp, edp)
                                     : Traffic{};
      memo.units[k] = {g.time,
                       r.links,
                       g.time - g.links,
                       r.time - r.links,
                       {g.flows[0], g.flows[1]},
                       {r.flows[0], r.flows[1]},
                       g.tier[1] > g.tier[0] ? 1 : 0};
    }
    memo.evaluator = id_;
    memo.key = key;
  }
  const std::array<UnitTraffic, kUnitKinds>& u = memo.units;
  const bool emb = st.has_embedding && c == 0, head = st.has_lm_head && c == par.vpp - 1;
  auto per_layer = [](double total, int64_t n) {
    return n > 0 ? total / static_cast<double>(n) : 0.0;
  };
  // A quantity `of` each unit's forward and backward (a layer's backward with its share of
  // the recomputed forwards), by unit kind.
  using ByKind = std::array<double, kUnitKinds>;
  auto units_of = [&](auto&& of, ByKind& fwd, ByKind& bwd) {
    fwd = {of(kEmbeddingF), of(kLayerF), of(kMoeF), of(kHeadF)};
    bwd = {of(kEmbeddingB),
           per_layer(static_cast<double>(L.dense) * of(kLayerB) +
                         static_cast<double>(L.dense_rc) * of(kLayerR),
                     L.dense),
           per_layer(
               static_cast<double>(L.moe) * of(kMoeB) + static_cast<double>(L.moe_rc) * of(kMoeR),
               L.moe),
           of(kHeadB)};
  };
  ByKind compute_f, compute_b, busy_f, busy_b;
  units_of([&](size_t p) { return tt.pass[p].total(); }, compute_f, compute_b);
  // The layers' own collectives keep the links the unit's gather is bound by busy for their
  // time there: the gather gets that much less of them (link_sharing.hpp).
  const int bound = u[kDense].gather > 0 ? u[kDense].bound : u[kMoe].bound;
  units_of([&](size_t p) { return tt.links[p].busy[bound]; }, busy_f, busy_b);
  const double count[kUnitKinds] = {emb ? 1.0 : 0.0, static_cast<double>(L.dense),
                                    static_cast<double>(L.moe), head ? 1.0 : 0.0};
  // The units in pass order: forward embedding, layers, LM head; backward the reverse.
  constexpr size_t fwd_kind[kUnitKinds] = {kEmb, kDense, kMoe, kHead};
  constexpr size_t bwd_kind[kUnitKinds] = {kHead, kMoe, kDense, kEmb};
  UnitRun fwd[kUnitKinds], bwd[kUnitKinds];
  for (size_t i = 0; i < kUnitKinds; ++i) {
    const size_t f = fwd_kind[i], b = bwd_kind[i];
    const double gf = u[f].gather > 0 ? u[f].gather + busy_f[f] : 0.0;
    const double gb = u[b].gather > 0 ? u[b].gather + busy_b[b] : 0.0;
    fwd[i] = {count[f], gf, u[f].reduce, compute_f[f], u[f].gather_latency, u[f].reduce_latency};
    bwd[i] = {count[b], gb, u[b].reduce, compute_b[b], u[b].gather_latency, u[b].reduce_latency};
  }
  UnitWaits out;
  // A pass that follows a backward (follow's share of them) finds what that backward's
  // reductions left, less what they did while its output was sent (p2p_s; none without
  // pipeline stages): this chunk's backward stands for the one before. Stages alike run the
  // same backward and leave the same: the thread's last ones are kept.
  struct BackwardMemo {
    bool valid = false, after_valid = false;
    UnitRun runs[kUnitKinds];
    double p2p_s = 0;
    UnitPass alone, after;  // with nothing pending, with what the backward before it left
  };
  BackwardMemo& bmemo = EvalContext::current().get<BackwardMemo>();
  if (!bmemo.valid || bmemo.p2p_s != p2p_s || std::memcmp(bmemo.runs, bwd, sizeof bwd) != 0) {
    std::memcpy(bmemo.runs, bwd, sizeof bwd);
    bmemo.p2p_s = p2p_s;
    bmemo.alone = unit_pass(bwd, kUnitKinds, true, 0.0);
    bmemo.valid = true;
    bmemo.after_valid = false;
  }
  const double left = std::max(0.0, bmemo.alone.trailing - p2p_s);
  const double pending = follow.forwards * left;
  const UnitPass f = unit_pass(fwd, kUnitKinds, false, pending);
  out.fwd = f.exposed;
  // The backwards: follow.backwards of them wait as the one after a backward does.
  if (follow.backwards > 0 && left > 0 && !bmemo.after_valid) {
    bmemo.after = unit_pass(bwd, kUnitKinds, true, left);
    bmemo.after_valid = true;
  }
  out.bwd_after = follow.backwards > 0 && left > 0
                      ? follow.backwards * std::max(0.0, bmemo.after.exposed - bmemo.alone.exposed)
                      : 0.0;
  out.bwd = bmemo.alone.exposed + out.bwd_after;
  auto first = [](const UnitRun* runs) {
    for (size_t i = 0; i < kUnitKinds; ++i)
      if (runs[i].count > 0) return i;
    return size_t{0};
  };
  out.fwd_floor = pending + fwd[first(fwd)].gather_s;
  const double pending_b = follow.backwards * left;
  out.bwd_floor = bwd[first(bwd)].gather_s;
  // The traffic on the links during each pass: the gathers, the pending reduction, the
  // backward's reductions but its last (which outlasts the pass).
  size_t last = kUnitKinds - 1;
  while (last > 0 && bwd[last].count <= 0) --last;
  out.dp_fwd = pending;
  for (size_t k = 0; k < kUnitKinds; ++k) {
    out.dp_fwd += count[k] * u[k].gather;
    out.dp_bwd += count[k] * (u[k].gather + u[k].reduce);
    for (int net = 0; net < 2; ++net) {
      out.flows_fwd[net] += count[k] * u[k].flows_gather[net];
      out.flows_bwd[net] += count[k] * (u[k].flows_gather[net] + u[k].flows_reduce[net]);
    }
  }
  out.dp_bwd += pending_b - bwd[last].reduce_s;
  for (int net = 0; net < 2; ++net) out.flows_bwd[net] -= u[bwd_kind[last]].flows_reduce[net];
  if (!overlap_grad) {
    // One reduction of the chunk's gradients per group, waited for at the pass's end.
    const double dense = (emb ? w.embedding_params : 0.0) + count[kDense] * w.layer_params +
                         count[kMoe] * moe_dense + (head ? w.lm_head_params : 0.0);
    out.bwd += traffic(collective_, CollectiveKind::ReduceScatter, grad_bytes, dense,
                       count[kMoe] * w.moe_expert_params, dp, edp)
                   .time;
  }
  return out;
}

double AnalyticalEvaluator::last_reduced_params(const Workload& w, const StageInfo& st,
                                                CommGroup group) const {
  const ParallelConfig& par = w.par;
  const bool experts = group == CommGroup::EDP;
  const ChunkLayers L = chunk_layers_of(model_, par, st, 0);
  const double moe_dense = w.moe_layer_params - w.moe_expert_params;
  // Chunk 0's first owner: the embedding, else its first layer (of the experts, the first
  // MoE layer's); its backward ends the chunk's.
  const double first = experts ? (L.moe > 0 ? w.moe_expert_params : 0.0)
                               : (st.has_embedding                          ? w.embedding_params
                                  : model_.moe.is_moe_layer(st.first_layer) ? moe_dense
                                                                            : w.layer_params);
  // ZeRO-3: that unit is reduced last, alone.
  if (par.zero_stage >= 3) return first;
  // ZeRO-2: every bucket that holds any of its gradients.
  const double chunk = experts ? static_cast<double>(L.moe) * w.moe_expert_params
                               : (st.has_embedding ? w.embedding_params : 0.0) +
                                     static_cast<double>(L.dense) * w.layer_params +
                                     static_cast<double>(L.moe) * moe_dense +
                                     (st.has_lm_head && par.vpp == 1 ? w.lm_head_params : 0.0);
  return grads_posted_at_end(chunk, first,
                             training_.grad_bucket_bytes / training_.grad_reduce_bytes);
}

double AnalyticalEvaluator::last_reduction(const Workload& w, const StageInfo& st,
                                           CommGroup group) const {
  const GroupShape& g = w.group(group);
  const double params = g.size > 1 ? last_reduced_params(w, st, group) : 0.0;
  return params > 0 ? collective_.time(CollectiveKind::ReduceScatter,
                                       params * training_.grad_reduce_bytes, g)
                    : 0.0;
}

CollectivePlan AnalyticalEvaluator::trailing_reduction(const Workload& w) const {
  const ParallelConfig& par = w.par;
  if (par.zero_stage < 2 || !training_.overlap_grad_reduce) return {};
  // A middle stage's backward ends with the reduction of its last unit or of the buckets its
  // chunk's first owner completes (last_reduced_params); of the dense and the expert part,
  // the longer.
  const StageInfo& st = w.stages[static_cast<size_t>(par.pp / 2)];
  CollectivePlan out;
  for (CommGroup group : {CommGroup::DPCP, CommGroup::EDP}) {
    const GroupShape& g = w.group(group);
    const double params = g.size > 1 ? last_reduced_params(w, st, group) : 0.0;
    if (params <= 0) continue;
    const CollectivePlan p =
        collective_.plan(CollectiveKind::ReduceScatter, params * training_.grad_reduce_bytes, g);
    if (p.time_s() > out.time_s()) out = p;
  }
  return out;
}

}  // namespace rapid
