// A replay on a job's system (`rapid predict JOB.yaml --from-chakra DIR [--scenario S]
// [--hardware-index H]`, docs/chakra.md "Replay on a job"): the trace is the workload, the
// job gives what `rapid predict --fidelity des` runs it on.
//  - Compute costs: the AnalyticalEvaluator's, the ones the DES times ops with: the hardware
//    as the job's stack runs it (stack_hardware: its end-to-end step and elementwise
//    factors), the stack's attention kernel (attention_kernel), step efficiency = the
//    stack's step factor x training.compute_efficiency; the job's dtype.
//  - The scenario (default the job's first, as predict): its stragglers as per-rank Derates
//    (clock_factor, hbm_factor; a rank covered twice keeps the lower of each; ranks beyond
//    the trace's ignored, as beyond a point's GPU count), the power model (the TDP cap) where
//    the scenario needs one (NonIdealSpec::needs_power_model, as the DES), the network's and
//    the scenario's link faults (a straggler's nic_health is among them: SweepSpec).
//  - Left out, listed by left_out(): the thermal model, mitigations (the trace's
//    dependencies fix what overlaps), `most_loaded` faults (they need a fault-free run of a
//    workload to find the link) and failures (goodput is not a step time).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "rapid/analytical/analytical_evaluator.hpp"
#include "rapid/nonideal/power_model.hpp"
#include "rapid/spec/sweep_spec.hpp"
#include "rapid/trace/trace_replay.hpp"

namespace rapid::trace {

class JobReplay {
 public:
  /// `spec` must outlive this. `hardware` indexes spec.hardware, `scenario` spec.scenarios
  /// (ignored when the job has none); `world` is the trace's rank count. Throws InputError
  /// (the network file, link_faults) for more than kMaxLinkFaults faults.
  JobReplay(const SweepSpec& spec, size_t hardware, size_t scenario, int64_t world);
  JobReplay(const JobReplay&) = delete;
  JobReplay& operator=(const JobReplay&) = delete;

  const ReplayInputs& inputs() const { return in_; }
  /// The GPU as the job's stack runs it.
  const HardwareSpec& hardware() const { return eval_.hardware(); }
  const NetworkSpec& network() const { return net_; }
  /// The scenario applied ("" when the job has none).
  const std::string& scenario_name() const { return scenario_name_; }
  int64_t derated_ranks() const { return derated_ranks_; }
  /// What of the scenario the replay does not apply ("thermal", "most_loaded link fault",
  /// ...), empty when it applies all of it.
  const std::vector<std::string>& left_out() const { return left_out_; }

 private:
  const NetworkSpec& net_;
  AnalyticalEvaluator eval_;
  std::optional<PowerModel> power_;
  ReplayInputs in_;
  std::string scenario_name_;
  int64_t derated_ranks_ = 0;
  std::vector<std::string> left_out_;
};

}  // namespace rapid::trace
