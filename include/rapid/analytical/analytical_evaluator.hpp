// Closed-form step time of a training workload (docs/architecture.md "Two fidelities": the
// analytical one):
//  - per-op roofline times (ComputeCost) and alpha-beta collectives (CollectiveCost);
//    TP/CP collectives sit on the critical path of each layer (no TP overlap);
//  - 1F1B / interleaved pipeline: step = m * t_max + (sum_s t_s - t_max) / vpp, i.e. the
//    bubble fraction (pp - 1) / (vpp * m) for equal stages (Narayanan et al. 2021, sec 2.2);
//    p2p send/recv of activations per micro-batch and virtual stage;
//  - DP gradient reduction (ZeRO 0: all-reduce; 1: reduce-scatter + parameter all-gather;
//    2: reduce-scatter every micro-batch; 3: also parameter all-gathers in forward and
//    backward of every micro-batch; Rajbhandari et al. 2020) overlapped with backward in
//    buckets when the framework does (Li et al. 2020, PyTorch DDP; Megatron-core
//    overlap_grad_reduce), exposing at least the last bucket;
//  - optimizer step as a memory-bound pass over the local optimizer shard.
#pragma once

#include <array>
#include <vector>

#include "rapid/core/evaluator.hpp"
#include "rapid/core/op_class.hpp"
#include "rapid/cost/collective_cost.hpp"
#include "rapid/cost/compute_cost.hpp"
#include "rapid/cost/interference.hpp"
#include "rapid/spec/model_spec.hpp"
#include "rapid/spec/training_spec.hpp"

namespace rapid {

class AnalyticalEvaluator final : public Evaluator {
 public:
  /// References must outlive the evaluator.
  AnalyticalEvaluator(const ModelSpec& model, const TrainingSpec& training, const HardwareSpec& hw,
                      const NetworkSpec& net);

  void evaluate(const Workload& w, EvalResult& r) const override;

  /// Step time `step_s` of workload `w` and the rates that follow from it: tokens/s,
  /// tokens/s/GPU, MFU and HFU (Chowdhery et al. 2022, App. B). Shared with the DES.
  void fill_rates(const Workload& w, double step_s, EvalResult& r) const;

  /// Compute and communication seconds of one pass over `ops`, serialized on one GPU.
  struct PassTime {
    double compute = 0;  ///< GPU compute seconds, every kernel at full speed
    /// Compute lost to TP-overlap kernels beside their GEMMs (interference.hpp).
    double interference = 0;
    double comm = 0;  ///< exposed communication seconds
    double ops = 0;   ///< ops issued by the host (kernels and collectives)
    /// The compute ops' seconds while a DP collective runs beside them (its NCCL channels
    /// and HBM traffic): the DP stream's interference is (dp_contended / compute - 1) of
    /// the time it overlaps.
    double dp_contended = 0;
    double total() const { return compute + interference + comm; }
    PassTime& add(const PassTime& o, double times = 1.0) {
      compute += times * o.compute;
      interference += times * o.interference;
      comm += times * o.comm;
      ops += times * o.ops;
      dp_contended += times * o.dp_contended;
      return *this;
    }
  };
  /// A pass's `compute` by op class and exposed `comm` by group (core/op_class.hpp): kept
  /// apart from PassTime, which evaluate() sums for every stage (the split is needed for
  /// the bottleneck stage only).
  struct PassClasses {
    OpClassTimes<> compute{};
    CommClassTimes<> comm{};
    PassClasses& add(const PassClasses& o, double times = 1.0) {
      add_scaled(compute, o.compute, times);
      add_scaled(comm, o.comm, times);
      return *this;
    }
  };
  /// A pass's collectives on the links a DP collective beside them uses (link_sharing.hpp);
  /// kept apart from PassTime (only overlapped ZeRO-3 units need it).
  struct PassLinks {
    /// What the pass's exposed comm would grow by if every collective's NVLink part
    /// ([0][.]) or NIC part ([1][.]), as its slowest tier, shared its links with one / two
    /// ([.][0] / [.][1]) flows of a DP collective the whole time: that tier takes (f + k) / f
    /// as long (f its own flows per link), its exposure grows by what then outlasts the
    /// kernel beside it.
    double contended[2][2] = {};
    /// Seconds the pass's collectives keep the busiest NVLink ([0]) and NIC ([1]) link busy
    /// alone (each collective's longest tier of that kind): time those links do not give to
    /// a DP collective beside them (max-min fair sharing is work-conserving).
    double busy[2] = {};
    PassLinks& add(const PassLinks& o, double times = 1.0) {
      for (int k = 0; k < 2; ++k) {
        contended[k][0] += times * o.contended[k][0];
        contended[k][1] += times * o.contended[k][1];
        busy[k] += times * o.busy[k];
      }
      return *this;
    }
  };
  /// `classes` and `links`, when given, receive the pass's split by class and its links.
  PassTime pass_time(const std::vector<Op>& ops, const Workload& w, PassClasses* classes = nullptr,
                     PassLinks* links = nullptr) const;

  /// The op templates' passes: the layer's, the MoE layer's (forward, backward, replayed
  /// forward), the embedding's and the LM head's (forward, backward).
  enum TemplatePass : size_t {
    kLayerF,
    kLayerB,
    kLayerR,
    kMoeF,
    kMoeB,
    kMoeR,
    kEmbeddingF,
    kEmbeddingB,
    kHeadF,
    kHeadB,
    kTemplatePasses
  };
  /// What evaluate() reads of the op templates: each template pass's PassTime and split by
  /// class, and the flops. They depend on the layout but not on its ZeRO stage (the DP
  /// traffic is not in the templates), vpp, full recompute's method and layer count or
  /// offloaded layers: a sweep's points that differ only in those share them.
  struct TemplateTimes {
    std::array<PassTime, kTemplatePasses> pass;        ///< by TemplatePass
    std::array<PassClasses, kTemplatePasses> classes;  ///< by TemplatePass
    std::array<PassLinks, kTemplatePasses> links;      ///< by TemplatePass
    TemplateFlops flops;
  };
  /// The template times of w.par when this thread computed them lately (a small cache),
  /// else nullptr: the caller then builds the ops and asks template_times().
  const TemplateTimes* cached_template_times(const ParallelConfig& par) const;
  /// Computes the template times of `w` (its ops built) and caches them.
  const TemplateTimes& template_times(const Workload& w) const;
  /// evaluate() with the template times of w.par (its ops need not be built).
  void evaluate(const Workload& w, const TemplateTimes& t, EvalResult& r) const;

  const ComputeCost& compute_cost() const { return compute_; }
  /// The GPU as the stack runs it (stack_hardware).
  const HardwareSpec& hardware() const { return hw_; }
  const InterferenceModel& interference() const { return interference_; }
  const CollectiveCost& collective_cost() const { return collective_; }
  /// Compute ops take compute_cost().time(op) / step_efficiency() (shared with the DES).
  double step_efficiency() const { return step_efficiency_; }

 private:
  const ModelSpec& model_;
  const TrainingSpec& training_;
  HardwareSpec hw_;  // with the stack's end-to-end factors (stack_hardware)
  ComputeCost compute_;
  InterferenceModel interference_;
  CollectiveCost collective_;
  double model_flops_per_token_;
  double step_efficiency_;  // end-to-end compute efficiency: hardware's x framework's
  uint64_t id_;             // this evaluator in the template-times cache
  void fill_rates(const Workload& w, const TemplateFlops& f, double step_s, EvalResult& r) const;
  /// ZeRO-3 with overlapped gathers: what chunk c's forward and backward of stage st wait
  /// for their units' gathers (unit_pass.hpp).
  /// `p2p_s`: the pipeline transfer between a backward and the pass after it (0 without
  /// pipeline stages); `follow`: the share of the passes that follow a backward.
  /// The floors: the first unit's gather (behind what a backward left), what no window hides.
  /// `dp_fwd`, `dp_bwd`: the DP traffic's seconds on the links during each pass (the
  /// gathers, the reductions but the last's, which outlasts the pass, the pending one);
  /// `flows_*` their NVLink ([0]) and NIC ([1]) tiers' seconds times their flows on a
  /// GPU's link.
  struct UnitWaits {
    double fwd = 0, bwd = 0, fwd_floor = 0, bwd_floor = 0, dp_fwd = 0, dp_bwd = 0;
    /// The part of `bwd` a backward waits for what the backward before it left (the
    /// cool-down's, in a pipeline's drain: each stage's delay reaches the stages before it
    /// as a later input, which the DES counts as their bubble).
    double bwd_after = 0;
    double flows_fwd[2] = {}, flows_bwd[2] = {};  ///< the same traffic's flow-seconds
  };
  /// The shares of a stage's forwards and of its backwards that follow a backward.
  struct UnitFollow {
    double forwards = 0, backwards = 0;
  };
  UnitWaits unit_waits(const Workload& w, const TemplateTimes& tt, const StageInfo& st, int64_t c,
                       double p2p_s, const UnitFollow& follow) const;
  /// Overlapped per-micro-batch reductions (ZeRO-2/3): the one a middle stage's backward
  /// starts as it ends (its last unit's or the buckets its chunk's first owner completes), which
  /// the pipeline transfer leaving then meets on the links.
  CollectivePlan trailing_reduction(const Workload& w) const;
  /// Overlapped ZeRO-2/3: the gradient reduction of `group` posted at the end of stage st's
  /// last backward (chunk 0's), which the optimizer waits for.
  double last_reduction(const Workload& w, const StageInfo& st, CommGroup group) const;
  /// Its parameters: ZeRO-3 the last unit of chunk 0's backward (the embedding, else its
  /// first layer), ZeRO-2 the buckets posted as chunk 0's backward ends
  /// (grads_posted_at_end).
  double last_reduced_params(const Workload& w, const StageInfo& st, CommGroup group) const;
};

}  // namespace rapid
