#include "rapid/eval/step_profile.hpp"

#include <algorithm>

namespace rapid {

void StepProfile::add_work(const OpEnergy& e, double idle_W) {
  if (e.time_s <= 0) return;
  PowerSegment s;
  s.duration_s = e.time_s;
  s.work = e.power(idle_W);
  s.stretches = true;
  segments.push_back(s);
  work_s += e.time_s;
  hbm_bytes += e.hbm_bytes;
  energy_J += s.work.full_W() * e.time_s;
  peak_W = std::max(peak_W, s.work.full_W());
}

void StepProfile::add_wait(double duration_s, double power_W) {
  if (duration_s <= 0) return;
  PowerSegment s;
  s.duration_s = duration_s;
  s.work.idle_W = power_W;
  s.stretches = false;
  segments.push_back(s);
  wait_s += duration_s;
  energy_J += power_W * duration_s;
  peak_W = std::max(peak_W, power_W);
}

double waiting_power_W(const PowerModel& pm, const Workload& w, const NetworkSpec& net) {
  return waiting_power_W(pm, net, w.par.num_gpus(), w.par.tp * w.par.cp > 1);
}

double waiting_power_W(const PowerModel& pm, const NetworkSpec& net, int64_t num_gpus,
                       bool nvlink_groups) {
  const HardwareSpec& hw = pm.hardware();
  const bool multi_node = num_gpus > net.gpus_per_node;
  const double sms =
      static_cast<double>(multi_node ? net.nccl_channels_network : net.nccl_channels_nvlink);
  double links_W = 0;
  if (nvlink_groups || !multi_node) links_W += hw.nvlink_bandwidth_Bps * hw.power.nvlink_J_per_byte;
  if (multi_node) links_W += net.nic_bandwidth_per_gpu_Bps() * hw.power.nic_J_per_byte;
  return pm.waiting_W(sms) + links_W;
}

void profile_from_spans(std::span<const des::PowerSpan> spans, des::SimTime step_end, double idle_W,
                        double wait_W, double merge_s, StepProfile& out) {
  out.clear();
  des::SimTime t = 0;
  OpEnergy pending;  // merged work not yet emitted
  double pending_wait = 0;
  auto flush = [&]() {
    out.add_work(pending, idle_W);
    out.add_wait(pending_wait, wait_W);
    pending = OpEnergy{};
    pending_wait = 0;
  };
  double peak_W = 0;  // over the spans themselves, before merging
  for (const des::PowerSpan& sp : spans) {
    if (sp.work.time_s > 0)
      peak_W = std::max(peak_W, idle_W + (sp.work.compute_J + sp.work.memory_J) / sp.work.time_s);
    // The gap before the span and the span's folded communication are waits.
    pending_wait += des::to_seconds(sp.start - t) + des::to_seconds(sp.end - sp.start - sp.busy);
    pending += sp.work;
    t = sp.end;
    if (pending.time_s + pending_wait >= merge_s) flush();
  }
  pending_wait += des::to_seconds(std::max<des::SimTime>(0, step_end - t));
  flush();
  out.peak_W = std::max(out.peak_W, peak_W);
}

OpEnergy total_work(const ClassWork& work) {
  OpEnergy e;
  for (const OpEnergy& x : work) e += x;
  return e;
}

std::vector<ClassWork> stage_work_by_class(const ModelSpec& model, const Workload& w,
                                           const PowerModel& pm, const ComputeCost& cost,
                                           double step_efficiency) {
  auto sum = [&](const std::vector<Op>& ops) {
    ClassWork e{};
    for (const Op& op : ops)
      if (op.kind != OpKind::Collective && op.kind != OpKind::P2P)
        e[op_class(op.kind)] += pm.op_energy(op, cost.time(op) / step_efficiency);
    return e;
  };
  struct Passes {
    ClassWork f, b, r;
  };
  auto passes = [&](const OpTemplate& t) {
    return Passes{sum(t.forward), sum(t.backward), sum(t.recompute)};
  };
  auto add = [](ClassWork& e, const ClassWork& x, int64_t times) {
    for (size_t k = 0; k < kNumOpClasses; ++k) e[k] += x[k].scaled(static_cast<double>(times));
  };
  const Passes dense = passes(w.layer), moe = passes(w.moe_layer), emb = passes(w.embedding),
               head = passes(w.lm_head);
  const double m = static_cast<double>(w.num_microbatches);
  std::vector<ClassWork> out;
  for (const StageInfo& st : w.stages) {
    ClassWork e{};
    for (int64_t c = 0; c < w.par.vpp; ++c) {
      const ChunkLayers L = chunk_layers_of(model, w.par, st, c);
      add(e, dense.f, L.dense);
      add(e, dense.b, L.dense);
      add(e, dense.r, L.dense_rc);
      add(e, moe.f, L.moe);
      add(e, moe.b, L.moe);
      add(e, moe.r, L.moe_rc);
    }
    if (st.has_embedding) add(e, emb.f, 1), add(e, emb.b, 1);
    if (st.has_lm_head) add(e, head.f, 1), add(e, head.b, 1);
    for (OpEnergy& x : e) x = x.scaled(m);
    out.push_back(e);
  }
  return out;
}

std::vector<OpEnergy> stage_work(const ModelSpec& model, const Workload& w, const PowerModel& pm,
                                 const ComputeCost& cost, double step_efficiency) {
  std::vector<OpEnergy> out;
  for (const ClassWork& c : stage_work_by_class(model, w, pm, cost, step_efficiency))
    out.push_back(total_work(c));
  return out;
}

void profile_from_breakdown(const EvalResult& r, const OpEnergy& work, const OpEnergy& optimizer,
                            double idle_W, double wait_W, StepProfile& out) {
  out.clear();
  // The interference time stretches the work (same energy over a longer time).
  OpEnergy stretched = work;
  if (work.time_s > 0 && r.interference_time_s > 0) {
    stretched.time_s += r.interference_time_s;
    stretched.memory_bound_s += r.interference_time_s;
  }
  out.add_work(stretched, idle_W);
  out.add_wait(r.layer_comm_time_s() + r.pp_comm_time_s + r.dp_exposed_time_s +
                   r.host_bound_time_s + r.offload_time_s,
               wait_W);
  out.add_work(optimizer, idle_W);
  out.add_wait(r.bubble_time_s, wait_W);
}

}  // namespace rapid
