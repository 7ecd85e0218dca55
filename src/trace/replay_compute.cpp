#include "replay_compute.hpp"

#include <algorithm>

#include "rapid/common/error.hpp"

namespace rapid::trace {

des::SimTime ReplayCompute::time(const TraceNode& n, int64_t rank, OpEnergy* work) {
  if (work) *work = OpEnergy{};
  if (!in_.power) work = nullptr;
  if (n.type != NodeType::Comp || n.is_cpu_op) {
    ++res_.by_duration;
    return static_cast<des::SimTime>(n.duration_micros) * 1'000'000;
  }
  if (n.rapid_op) {
    ++res_.by_model;
    const RapidOp& r = *n.rapid_op;
    if (r.kind == RapidOpKind::Optimizer) {
      const double t = in_.compute->memory_time(r.bytes);
      if (work) {  // a streaming kernel over the optimizer states, as the DES's
        Op o;
        o.bytes = r.bytes;
        *work = in_.power->op_energy(o, t);
      }
      return des::to_ps(t * slowdown(rank, t, 0));
    }
    Op op;
    op.name = n.name.c_str();
    op.kind = static_cast<OpKind>(r.kind);
    op.m = r.m, op.n = r.n, op.k = r.k, op.batch = r.batch;
    op.causal = r.causal, op.fp8 = r.fp8, op.gqa_group = static_cast<uint16_t>(r.gqa_group);
    op.flops = r.flops, op.bytes = r.bytes;
    const double t = in_.compute->time(op) / in_.step_efficiency;
    return des::to_ps(t * op_scale(rank, op, t, work));
  }
  if (n.num_ops || n.tensor_size) {
    ++res_.by_roofline;
    const double flops = static_cast<double>(n.num_ops.value_or(0));
    const double bytes = static_cast<double>(n.tensor_size.value_or(0));
    const double t = std::max(flops / in_.compute->peak_FLOPs(), in_.compute->memory_time(bytes));
    const double full = t / in_.step_efficiency;
    if (work) {
      Op o;
      o.kind = flops > 0 ? OpKind::Gemm : OpKind::MemoryBound;
      o.flops = flops, o.bytes = bytes;
      *work = in_.power->op_energy(o, full);
      work->compute_bound_s = compute_share(t, flops) * full;
      work->memory_bound_s = full - work->compute_bound_s;
    }
    return des::to_ps(full * slowdown(rank, t, flops));
  }
  ++res_.by_duration;
  const double t = static_cast<double>(n.duration_micros) * 1e-6;
  if (work) {
    const PowerModel& pm = *in_.power;
    work->time_s = work->compute_bound_s = t;
    work->compute_J = (pm.hardware().tdp_W - pm.idle_W()) * t;
  }
  return des::to_ps(t * slowdown(rank, t, -1));
}

const Derate* ReplayCompute::derate(int64_t rank) const {
  if (static_cast<size_t>(rank) >= in_.derate.size()) return nullptr;
  const Derate& d = in_.derate[static_cast<size_t>(rank)];
  return d == Derate{} ? nullptr : &d;
}

// A rapid op with the power model runs as in the DES (des/sim_setup.cpp, docs/nonideal.md
// secs 1 and 4): under the TDP cap (PowerModel::capped_time; the time it adds is
// compute-bound), then its rank's Derate::slowdown of the capped op's roofline split.
double ReplayCompute::op_scale(int64_t rank, const Op& op, double alone_s, OpEnergy* work) const {
  const Derate* d = derate(rank);
  if (!in_.power) {
    RAPID_ASSERT(!d, "a derated replay needs the power model's roofline split");
    return 1.0;
  }
  OpEnergy e = in_.power->op_energy(op, alone_s);
  const double capped = in_.power->capped_time(e);
  e.compute_bound_s += capped - alone_s;
  e.time_s = capped;
  if (work) *work = e;
  const double scale = capped / alone_s;
  if (!d) return scale;
  return scale * d->slowdown(e.compute_bound_s / capped, e.memory_bound_s / capped);
}

// A roofline node's compute-bound share of its full-speed time `full_s`: flops / peak.
double ReplayCompute::compute_share(double full_s, double flops) const {
  return full_s > 0 ? std::min(1.0, flops / in_.compute->peak_FLOPs() / full_s) : 0;
}

// Derate::slowdown of a node's roofline split (docs/nonideal.md sec 4): a roofline node's
// compute_share (flops >= 0), the rest memory-bound; a recorded duration (flops < 0) all
// compute-bound; the optimizer step (flops 0) memory-bound, as the DES's (time / hbm).
double ReplayCompute::slowdown(int64_t rank, double full_s, double flops) const {
  const Derate* dp = derate(rank);
  if (!dp) return 1.0;
  if (flops < 0) return dp->slowdown(1.0, 0.0);
  const double cs = compute_share(full_s, flops);
  return dp->slowdown(cs, 1.0 - cs);
}

}  // namespace rapid::trace
