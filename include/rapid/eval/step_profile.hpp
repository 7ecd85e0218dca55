// One GPU's training step as a power profile (docs/nonideal.md sec 1): its own work at
// full speed (segments that stretch when the GPU is derated) and its waits on the network
// or on other GPUs (fixed durations at the waiting power), from the DES's power trace or,
// in the analytical mode, from the step's breakdown.
#pragma once

#include <array>
#include <span>
#include <vector>

#include "rapid/core/eval_result.hpp"
#include "rapid/core/op_class.hpp"
#include "rapid/des/power_trace.hpp"
#include "rapid/nonideal/power_model.hpp"
#include "rapid/nonideal/thermal_replay.hpp"
#include "rapid/workload/workload.hpp"

namespace rapid {

struct StepProfile {
  std::vector<PowerSegment> segments;
  double work_s = 0;     ///< this GPU's work at full speed
  double wait_s = 0;     ///< waiting
  double hbm_bytes = 0;  ///< HBM traffic of its work
  double energy_J = 0;   ///< at full speed
  double peak_W = 0;
  double step_s() const { return work_s + wait_s; }
  void clear() { *this = StepProfile{}; }
  void add_work(const OpEnergy& e, double idle_W);
  void add_wait(double duration_s, double power_W);
};

/// Power drawn while a GPU waits on communication: NCCL's polling SMs plus the links it
/// drives at their rate (docs/nonideal.md sec 1; an upper bound in pipeline bubbles).
double waiting_power_W(const PowerModel& pm, const Workload& w, const NetworkSpec& net);
/// The same for a job of `num_gpus` GPUs whose GPUs talk over NVLink when `nvlink_groups`
/// (TP or CP groups within a node; on one node always).
double waiting_power_W(const PowerModel& pm, const NetworkSpec& net, int64_t num_gpus,
                       bool nvlink_groups);

/// Profile of one DES stage instance over [0, step_end): each span's work, the span's
/// folded communication and the gaps between spans as waits. Spans shorter than
/// `merge_s` are merged with their neighbours (energy kept: the thermal mass filters out
/// what is far shorter than its time constant); peak_W is over the spans themselves.
void profile_from_spans(std::span<const des::PowerSpan> spans, des::SimTime step_end, double idle_W,
                        double wait_W, double merge_s, StepProfile& out);

/// Work split by op class (core/op_class.hpp), indexed by class.
using ClassWork = std::array<OpEnergy, kNumOpClasses>;
/// The classes' sum.
OpEnergy total_work(const ClassWork& work);

/// Full-speed work of one GPU of each pipeline stage in one step, by op class: its passes'
/// compute ops (forward, backward and the replayed forward per micro-batch), timed as the
/// analytical evaluator times them (`time_s` = ComputeCost time / step efficiency).
std::vector<ClassWork> stage_work_by_class(const ModelSpec& model, const Workload& w,
                                           const PowerModel& pm, const ComputeCost& cost,
                                           double step_efficiency);
/// The same, each stage's classes summed.
std::vector<OpEnergy> stage_work(const ModelSpec& model, const Workload& w, const PowerModel& pm,
                                 const ComputeCost& cost, double step_efficiency);

/// Analytical profile of the bottleneck stage: its work (`work`, with the interference time
/// of r), then exposed communication, host and offload time at the waiting power, the
/// optimizer step (streaming, `optimizer` its work) and the bubble.
void profile_from_breakdown(const EvalResult& r, const OpEnergy& work, const OpEnergy& optimizer,
                            double idle_W, double wait_W, StepProfile& out);

}  // namespace rapid
