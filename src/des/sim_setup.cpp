// Building a simulation: stage programs, collectives with their plans and layouts, and
// the op templates compiled into blocks (folded collectives) and communication units.
#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <bit>
#include <limits>

#include "rapid/common/error.hpp"
#include "rapid/des/sim_size.hpp"
#include "sim_impl.hpp"

namespace rapid::des {

namespace {

bool is_comm(const Op& op) {
  return op.kind == OpKind::Collective || op.kind == OpKind::P2P;
}

}  // namespace

int32_t Simulator::Impl::make_desc(const char* name, const Op* op, CollectiveKind kind,
                                   double bytes, const GroupShape& g, int32_t inst_id,
                                   bool blocking, bool split, int32_t dp_stage) {
  CommDesc d;
  d.op = op;
  d.name = name;
  d.plan = in.collective->plan(kind, bytes, g);
  std::vector<int32_t>& tmp = buffers.tiers;
  for (int t = 0; t < d.plan.num_tiers; ++t) {
    const CollectiveTier& tier = d.plan.tiers[static_cast<size_t>(t)];
    tmp.clear();
    if (!layouts.collective(g, tier.pattern, inst_id, blocking, split, tmp, dp_stage)) continue;
    d.bytes[static_cast<size_t>(d.ntiers)] = tier.flow_bytes;
    d.layout_begin[static_cast<size_t>(d.ntiers)] = static_cast<int32_t>(comm.desc_layouts.size());
    d.layout_count[static_cast<size_t>(d.ntiers)] = static_cast<int32_t>(tmp.size());
    comm.desc_layouts.insert(comm.desc_layouts.end(), tmp.begin(), tmp.end());
    ++d.ntiers;
  }
  comm.descs.push_back(d);
  return static_cast<int32_t>(comm.descs.size()) - 1;
}

int32_t Simulator::Impl::make_p2p_desc(int32_t inst_id, int64_t dst_stage) {
  const int32_t layout = layouts.p2p(inst_id, dst_stage);
  if (layout < 0) return -1;
  // The workload's PP group places neighbouring stages; a wrap-around transfer (stage
  // pp-1 <-> 0, interleaved schedule) gets the shape of where its GPUs actually are.
  GroupShape g = w->group(CommGroup::PP);
  const int64_t src = layouts.first_gpu(inst_id);
  const int64_t dst = src + (dst_stage - layouts.stage_of(inst_id)) * tpcp * dp;
  const bool same_node = topo->node_of(src) == topo->node_of(dst);
  if (same_node != (g.per_node > 1)) g = GroupShape{2, same_node ? 2 : 1, same_node ? 1 : 2, 1};
  CommDesc d;
  d.name = w->p2p.name;
  d.plan = in.collective->plan(CollectiveKind::SendRecv, w->p2p.bytes, g);
  d.ntiers = 1;
  d.bytes[0] = w->p2p.bytes;
  d.layout_begin[0] = static_cast<int32_t>(comm.desc_layouts.size());
  d.layout_count[0] = 1;
  comm.desc_layouts.push_back(layout);
  comm.descs.push_back(d);
  return static_cast<int32_t>(comm.descs.size()) - 1;
}

void Simulator::Impl::finish_desc(CommDesc& d) {
  // Latency: the plan's (NCCL start-up and per-step latencies, which include one
  // NIC-leaf-NIC or leaf-spine-leaf route per step) plus the wire latency of the links a
  // route has beyond that, on each network step of the critical path.
  int32_t net_links = 0;
  std::vector<int32_t>& parts = buffers.parts;
  std::vector<int32_t>& bundles = buffers.bundles;
  parts.clear();
  bundles.clear();
  d.foldable = d.quiet_foldable = opt.coalesce && d.op != nullptr;
  uint64_t faults = 0, lossy = 0;  // of its links; of its network links
  // Uncontended duration: the collective's bundles alone on an empty network, solved by
  // the same code and in the same order as Communicator::start() does (its tiers may share links,
  // as PXN's NVLink hops with the NVLink tier), so a folded collective ends at the very picosecond
  // a simulated one would.
  comm.for_each_layout(d, [&](int32_t l, double bytes) {
    net_links = std::max(net_links, layouts.network_links(l));
    for (const ResourceUse& u : layouts.uses(l)) {
      faults |= class_faults[static_cast<size_t>(u.res)];
      const int32_t link = layouts.class_links(u.res).front();
      if (topo->link(link).network()) lossy |= class_faults[static_cast<size_t>(u.res)];
    }
    if (!layouts.uses(l).empty() && bytes > 0)
      bundles.push_back(alone_net.add(0, layouts.uses(l), bytes, 0));
    for (int32_t p : layouts.participants(l)) parts.push_back(p);
    d.foldable = d.foldable && layouts.foldable(l);
    d.quiet_foldable = d.quiet_foldable && layouts.quiet_foldable(l);
  });
  SimTime drain = 0;
  if (!bundles.empty()) {
    alone_net.commit(0);
    for (int32_t b : bundles) drain = std::max(drain, alone_net.drain_time(b));
    for (int32_t b : bundles) alone_net.finish(0, b);
  }
  std::sort(parts.begin(), parts.end());
  d.participants = static_cast<int32_t>(std::unique(parts.begin(), parts.end()) - parts.begin());
  // Lossy links (docs/faults.md): each network step of the critical path may lose a
  // message's last packet and wait for the RC timeout: p x timeout per step (spec/go_back_n.hpp).
  const double loss_s = topo->permanent_loss_s(lossy);
  for (uint64_t f = lossy & topo->timed_faults(); f; f &= f - 1)
    if (topo->loss_delay_s(std::countr_zero(f)) > 0) d.timed_loss |= f & -f;
  d.latency = to_ps(start_latency_s(d.plan, net_links, in.network->link_latency_s, loss_s));
  d.alone = drain + d.latency;
  // A timed fault changes its links' capacity during the step: never folded.
  const bool untimed = (faults & topo->timed_faults()) == 0;
  d.foldable = d.foldable && d.participants <= 1 && untimed;
  d.quiet_foldable = d.quiet_foldable && d.participants <= 1 && untimed;
}

void Simulator::Impl::collect_comms(int32_t inst_id, const std::vector<Op>& list) {
  for (const Op& op : list)
    if (is_comm(op))
      make_desc(op.name, &op, op.collective, op.bytes, w->group(op.group), inst_id, true, false);
}

namespace {

// One compute op's time on an instance. With a power model (docs/nonideal.md) the op runs
// under the TDP cap and the instance's derate (`derate`, null: none): one factor `scale` on
// every time of the op (alone, beside a TP-overlap kernel, beside the DP stream).
struct OpTiming {
  SimTime duration = 0;
  double scale = 1.0;
  OpEnergy energy;
};
OpTiming time_op(const Op& op, const SimInputs& in, const Derate* derate) {
  const double alone_s = in.compute->time(op) / in.step_efficiency;
  OpTiming t;
  if (in.power) {
    t.energy = in.power->op_energy(op, alone_s);
    const double capped = in.power->capped_time(t.energy);
    t.energy.compute_bound_s += capped - alone_s;
    t.energy.time_s = capped;
    t.scale = capped / alone_s;
    if (derate)
      t.scale *=
          derate->slowdown(t.energy.compute_bound_s / capped, t.energy.memory_bound_s / capped);
  }
  t.duration = to_ps(alone_s * t.scale);
  return t;
}

// The ops of template kind `kind` (TemplateKind) of `wl`: a, then b (null: none).
void template_ops(const Workload& wl, int32_t kind, const std::vector<Op>*& a,
                  const std::vector<Op>*& b) {
  const OpTemplate* tt[] = {&wl.layer, &wl.moe_layer, &wl.embedding, &wl.lm_head};
  if (kind >= static_cast<int32_t>(TemplateKind::DenseBPlain)) {  // backward, no replay
    a = &tt[kind - static_cast<int32_t>(TemplateKind::DenseBPlain)]->backward;
    b = nullptr;
    return;
  }
  const OpTemplate& x = *tt[kind / 2];
  if (kind % 2 == 0) {
    a = &x.forward;
    b = nullptr;
  } else {
    a = &x.recompute;
    b = &x.backward;
  }
}

// A collective runs folded into its block in compile version `version` (0: only what is
// always uncontended; 1: also what is uncontended while the DP stream is quiet).
bool fold_ok(int version, const CommDesc& d) {
  return version ? d.quiet_foldable : d.foldable;
}

// A block's summary from its entries: duration D, compute, host slots Q and host slack
// S = min_i (P_i - Q_i h) with P_i the GPU time before entry i and Q_i the slots issued up
// to entry i: the host never delays the block when (host clock - block start) <= S.
void summarize_block(Item& it, const std::vector<Entry>& entries, SimTime host_op) {
  SimTime P = 0, S = kNever;
  int32_t Q = 0;
  for (int32_t e = it.begin; e < it.begin + it.count; ++e) {
    const Entry& en = entries[static_cast<size_t>(e)];
    Q += en.slots;
    S = std::min(S, P - Q * host_op);
    P += en.duration;
    it.compute += en.compute;
    it.compute_by_class[en.op_class] += en.compute;
    it.comm_by_class[en.comm_class] += en.exposed_comm();
    it.interference += en.interference;
    it.dp_compute += en.dp_compute;
    it.energy += en.energy;
  }
  it.duration = P;
  it.slots = Q;
  it.slack = S;
}

}  // namespace

// Compute op i of the template being compiled (of n ops; buffers.ops, desc_of, partner):
// its time alone, beside its TP-overlap collectives and beside the DP stream (`dp_cost`),
// as a block entry with them when they all fold, else as an item of its own.
void Simulator::Impl::compile_compute(int32_t inst_id, int32_t i, int32_t n, int version,
                                      const ComputeCost* dp_cost, int32_t item_begin) {
  const Op& op = *buffers.ops[static_cast<size_t>(i)];
  const std::vector<int32_t>& desc_of = buffers.desc_of;
  const std::vector<int32_t>& partner = buffers.partner;
  const Inst& me = inst[static_cast<size_t>(inst_id)];
  const OpTiming timing = time_op(
      op, in,
      in.derate.empty() ? nullptr : &in.derate[static_cast<size_t>(me.stage * dp + me.replica)]);
  const double scale = timing.scale;
  const OpEnergy& energy = timing.energy;
  const SimTime dur = timing.duration;
  std::vector<int32_t>& with = buffers.with;
  with.clear();
  bool fold = true;
  // A TP-overlap kernel beside the op takes SMs and HBM from it (interference.hpp, as the
  // analytical pass_time): the op runs for `beside`, the collective `slow` times longer.
  SimTime beside = dur;
  double slow = 1.0;
  for (int32_t j = 0; j < n; ++j)
    if (partner[static_cast<size_t>(j)] == i) {
      with.push_back(desc_of[static_cast<size_t>(j)]);
      fold = fold &&
             fold_ok(version, comm.descs[static_cast<size_t>(desc_of[static_cast<size_t>(j)])]);
      const Op& beside_op = *buffers.ops[static_cast<size_t>(j)];
      if (in.interference) {
        const InterferenceModel::Profile p = InterferenceModel::profile_of(beside_op, *w);
        const double t = in.interference->cost(p).time(op) / in.step_efficiency * scale;
        beside = std::max(beside, to_ps(t));
        slow = std::max(slow, in.interference->comm_slowdown(p, op, t));
      }
    }
  const SimTime dp_dur = dp_cost ? to_ps(dp_cost->time(op) / in.step_efficiency * scale) : dur;
  if (fold) {
    // The entry lasts as long as the op or its longest collective: what outlasts the op
    // is that collective's group's exposed time.
    SimTime d = beside, longest = -1;
    uint8_t cls = 0;
    for (int32_t x : with) {
      const CommDesc& cd = comm.descs[static_cast<size_t>(x)];
      const auto t = static_cast<SimTime>(static_cast<double>(cd.alone) * slow);
      d = std::max(d, t);
      if (t > longest) longest = t, cls = static_cast<uint8_t>(comm_class(cd.op->group));
    }
    Entry e{d,
            dur,
            1 + static_cast<int32_t>(with.size()),
            &op,
            with.empty() ? -1 : with[0],
            with.size() > 1 ? with[1] : -1};
    e.interference = beside - dur;
    e.dp_compute = dp_dur;
    e.energy = energy;
    e.op_class = static_cast<uint8_t>(op_class(op.kind));
    e.comm_class = cls;
    add_entry(item_begin, e);
  } else {
    Item it;
    it.block = false;
    it.begin = static_cast<int32_t>(unit_comms.size());
    it.count = static_cast<int32_t>(with.size());
    it.slots = 1 + it.count;
    it.compute_op = &op;
    it.compute = dur;
    it.interference = beside - dur;
    it.dp_compute = dp_dur;
    it.energy = energy;
    unit_comms.insert(unit_comms.end(), with.begin(), with.end());
    items.push_back(it);
  }
}

void Simulator::Impl::add_entry(int32_t item_begin, const Entry& e) {
  if (items.size() == static_cast<size_t>(item_begin) || !items.back().block) {
    Item it;
    it.begin = static_cast<int32_t>(entries.size());
    items.push_back(it);
  }
  entries.push_back(e);
  ++items.back().count;
}

// Compiles ops a (+ b) of one template for one instance. `next_desc` (via desc_cursor)
// walks the descs made by collect_comms in the same order.
void Simulator::Impl::compile(int32_t inst_id, TemplateKind k, const std::vector<Op>* a,
                              const std::vector<Op>* b, int version) {
  std::vector<const Op*>& list = buffers.ops;
  std::vector<int32_t>& desc_of = buffers.desc_of;
  std::vector<int32_t>& partner = buffers.partner;
  list.clear();
  for (const std::vector<Op>* v : {a, b})
    if (v)
      for (const Op& op : *v) list.push_back(&op);
  const auto n = static_cast<int32_t>(list.size());
  desc_of.assign(static_cast<size_t>(n), -1);
  partner.assign(static_cast<size_t>(n), -1);
  bool differs = false;
  for (int32_t i = 0; i < n; ++i) {
    if (!is_comm(*list[static_cast<size_t>(i)])) continue;
    desc_of[static_cast<size_t>(i)] = desc_cursor++;
    const CommDesc& d = comm.descs[static_cast<size_t>(desc_of[static_cast<size_t>(i)])];
    differs = differs || d.foldable != d.quiet_foldable;
    const int32_t j = i + list[static_cast<size_t>(i)]->overlap;
    if (list[static_cast<size_t>(i)]->overlap != 0 && j >= 0 && j < n &&
        !is_comm(*list[static_cast<size_t>(j)]))
      partner[static_cast<size_t>(i)] = j;
  }
  Compiled& c = inst[static_cast<size_t>(inst_id)]
                    .compiled[static_cast<size_t>(version)][static_cast<size_t>(k)];
  c.item_begin = static_cast<int32_t>(items.size());
  if (version == 1 && !differs) {  // the same as version 0
    c = inst[static_cast<size_t>(inst_id)].compiled[0][static_cast<size_t>(k)];
    return;
  }
  // Compute beside the stage's DP stream (interference.hpp): one cost model for the template.
  const ComputeCost* dp_cost =
      in.interference
          ? &in.interference->cost(InterferenceModel::dp_profile(w->group(CommGroup::DPCP)))
          : nullptr;
  for (int32_t i = 0; i < n; ++i) {
    const Op& op = *list[static_cast<size_t>(i)];
    if (is_comm(op)) {
      if (partner[static_cast<size_t>(i)] >= 0) continue;  // with its compute op
      const int32_t d = desc_of[static_cast<size_t>(i)];
      if (fold_ok(version, comm.descs[static_cast<size_t>(d)])) {
        Entry e{comm.descs[static_cast<size_t>(d)].alone, 0, 1, &op, d, -1};
        e.comm_class = static_cast<uint8_t>(comm_class(op.group));
        add_entry(c.item_begin, e);
      } else {
        Item it;
        it.block = false;
        it.begin = static_cast<int32_t>(unit_comms.size());
        it.count = 1;
        it.slots = 1;
        unit_comms.push_back(d);
        items.push_back(it);
      }
      continue;
    }
    compile_compute(inst_id, i, n, version, dp_cost, c.item_begin);
  }
  c.item_count = static_cast<int32_t>(items.size()) - c.item_begin;
  for (int32_t x = c.item_begin; x < c.item_begin + c.item_count; ++x)
    if (items[static_cast<size_t>(x)].block)
      summarize_block(items[static_cast<size_t>(x)], entries, host_op);
}

bool Simulator::Impl::setup(const Workload& wl, const SimInputs& inputs, const SimOptions& o,
                            Fabric& t, bool one) {
  // Before anything is sized by the micro-batches (sim_size.hpp): 1e8 of them would not fit.
  check_sim_size(wl, one);
  w = &wl;
  in = inputs;
  opt = o;
  topo = &t;
  one_replica = one;
  const ParallelConfig& par = wl.par;
  tpcp = int64_t{par.tp} * par.cp;
  dp = par.dp;
  pp = par.pp;
  vpp = par.vpp;
  m = wl.num_microbatches;
  host_op = to_ps(in.training->host_overhead_per_op_s);
  no_route = false;
  const std::span<const LinkFault> faults =
      in.link_faults ? std::span<const LinkFault>(*in.link_faults) : std::span<const LinkFault>();
  if (!t.reset(*in.network, in.collective->nvlink_Bps(), tpcp * dp * pp, faults,
               has_most_loaded ? &most_loaded : nullptr))
    return false;
  layouts.reset(&t, tpcp, dp, pp, one, o.replicas == ReplicaMode::Auto && one && dp > 1);
  comm.clear(&t);
  queue.clear();
  now = 0;
  events = folded = 0;
  step_end = 0;
  entries.clear();
  items.clear();
  unit_comms.clear();
  programs.resize(static_cast<size_t>(pp));
  for (int64_t s = 0; s < pp; ++s)
    build_stage_program(wl, *in.model, *in.training, s, programs[static_cast<size_t>(s)]);

  const int32_t n = layouts.num_instances();
  reset_instances(n);
  // 1. Collectives and their layouts.
  // Only the templates some owner runs (a backward with or without replay: both only under
  // block recompute) get collectives and blocks.
  std::array<bool, kNumTemplateKinds> used{};
  for (const StageProgram& sp : programs)
    for (const Owner& owner : sp.owners) {
      used[static_cast<size_t>(owner.fwd)] = true;
      used[static_cast<size_t>(owner.bwd)] = true;
    }
  for (int32_t i = 0; i < n; ++i)
    for (int32_t k = 0; k < kNumTemplateKinds; ++k) {
      if (!used[static_cast<size_t>(k)]) continue;
      const std::vector<Op>*a, *b;
      template_ops(wl, k, a, b);
      collect_comms(i, *a);
      if (b) collect_comms(i, *b);
    }
  for (int32_t i = 0; i < n; ++i) {
    Inst& s = inst[static_cast<size_t>(i)];
    if (s.stage + 1 < pp) s.p2p_desc[0] = make_p2p_desc(i, s.stage + 1);
    if (s.stage > 0) s.p2p_desc[1] = make_p2p_desc(i, s.stage - 1);
    if (vpp > 1 && s.stage == pp - 1) s.p2p_wrap = make_p2p_desc(i, 0);
    if (vpp > 1 && s.stage == 0) s.p2p_wrap = make_p2p_desc(i, pp - 1);
  }
  build_dp_streams(wl, one);
  // A flow without an alive path (failed links): the point cannot run (Status::NoRoute).
  if (layouts.no_route()) {
    no_route = true;
    return false;
  }
  // 2. Link classes, resources, durations, foldability.
  build_link_classes();
  for (CommDesc& d : comm.descs) finish_desc(d);
  comm.schedule_fault_changes();
  // Timed faults change capacities during the step (a folded bundle's rate would change).
  comm.folding.reset(opt.fold_alone && comm.timed_classes.empty(),
                     static_cast<size_t>(layouts.num_classes()));
  comm.net.set_batch(opt.batch_solves);  // run_events() flushes before the clock moves on
  // 3. Templates -> blocks and units.
  for (int version = 0; version < 2; ++version) {
    desc_cursor = 0;
    for (int32_t i = 0; i < n; ++i)
      for (int32_t k = 0; k < kNumTemplateKinds; ++k) {
        if (!used[static_cast<size_t>(k)]) continue;
        const std::vector<Op>*a, *b;
        template_ops(wl, k, a, b);
        compile(i, static_cast<TemplateKind>(k), a, b, version);
      }
  }
  if (opt.timeline) name_instances(*opt.timeline);
  return true;
}

void Simulator::Impl::reset_instances(int32_t n) {
  inst.resize(static_cast<size_t>(n));
  units.reset(n);
  for (int32_t i = 0; i < n; ++i) {
    Inst& s = inst[static_cast<size_t>(i)];
    std::vector<SimTime> arrived = std::move(s.arrived);  // its storage kept
    s = Inst{};
    s.stage = static_cast<int32_t>(layouts.stage_of(i));
    s.replica = static_cast<int32_t>(layouts.replica_of(i));
    s.arrived = std::move(arrived);
    s.arrived.assign(static_cast<size_t>(2 * vpp * m), kNever);
  }
}

void Simulator::Impl::build_link_classes() {
  layouts.finalize();
  alone_net.clear();
  class_faults.assign(static_cast<size_t>(layouts.num_classes()), 0);
  for (int32_t c = 0; c < layouts.num_classes(); ++c) {
    comm.net.add_resource(layouts.class_capacity(c));
    alone_net.add_resource(layouts.class_capacity(c));
    // Links of one class share their faults (CommLayouts never merges others).
    class_faults[static_cast<size_t>(c)] = topo->link(layouts.class_links(c).front()).faults;
    if (class_faults[static_cast<size_t>(c)] & topo->timed_faults())
      comm.timed_classes.push_back(c);
  }
}

void Simulator::Impl::name_instances(Timeline& timeline) const {
  std::vector<std::string> names;
  for (int32_t i = 0; i < layouts.num_instances(); ++i)
    names.push_back(fmt::format("GPU {} (stage {}, replica {}{})", layouts.first_gpu(i),
                                layouts.stage_of(i), layouts.replica_of(i),
                                one_replica ? fmt::format(" standing for all {}", dp) : ""));
  timeline.set_instance_names(std::move(names));
}

void Simulator::Impl::build_dp_streams(const Workload& wl, bool one) {
  streams.resize(static_cast<size_t>(pp));
  for (int64_t s = 0; s < pp; ++s) {
    DpStream& ds = streams[static_cast<size_t>(s)];
    const StageProgram& sp = programs[static_cast<size_t>(s)];
    ds = DpStream{};
    ds.needed = one ? 1 : static_cast<int32_t>(dp);
    std::vector<std::pair<size_t, int32_t>>& cache = buffers.dp_descs;  // (spec index, desc)
    cache.clear();
    for (size_t k = 0; k < sp.dp_ops.size(); ++k) {
      const DpOpSpec& x = sp.dp_ops[k];
      int32_t d = -1;
      for (auto [j, id] : cache) {
        const DpOpSpec& y = sp.dp_ops[j];
        if (y.kind == x.kind && y.group == x.group && y.bytes == x.bytes) d = id;
      }
      if (d < 0) {
        d = make_desc(x.grad ? collective_name(x.kind) : "param_all_gather", nullptr, x.kind,
                      x.bytes, wl.group(x.group), layouts.instance(s, 0), false, !one,
                      static_cast<int32_t>(s));
        cache.push_back({k, d});
      }
      ds.add_op(d, x.grad ? 0 : 1);
    }
  }
}

}  // namespace rapid::des
