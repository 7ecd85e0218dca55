// A replay on a job's system (`rapid predict JOB.yaml --from-chakra DIR [--scenario S]
// [--hardware-index H]`, docs/chakra.md "Replay on a job"): the trace is the workload, the
// job gives what `rapid predict --fidelity des` runs it on.
//  - Compute costs: the AnalyticalEvaluator's, the ones the DES times ops with: the hardware
//    as the job's stack runs it (stack_hardware: its end-to-end step and elementwise
//    factors), the stack's attention kernel (attention_kernel), step efficiency = the
//    stack's step factor x training.compute_efficiency; the job's dtype.
//  - The scenario (default the job's first, as predict): its stragglers as per-rank states
//    (thermal_feedback.hpp: clock_factor and hbm_factor as Derates, their cooling; a rank
//    covered twice merged as a DES stage instance's GPUs; ranks beyond the trace's ignored,
//    as beyond a point's GPU count), the power model (the TDP cap) where the scenario needs
//    one (NonIdealSpec::needs_power_model, as the DES), the network's and the scenario's
//    link faults (a straggler's nic_health is among them: SweepSpec).
//  - run(): `most_loaded` faults as the DES's (des/simulator.cpp): each replay is preceded
//    by a fault-free one whose busiest link (ReplayResult::busiest) they then go on. The
//    thermal model as the DES's (nonideal_des.cpp, docs/nonideal.md sec 2): the replay
//    records each rank's compute as power spans; each rank's profile
//    (profile_from_spans) is replayed to its periodic steady state (replay_periodic, the
//    rank's own derate and cooling, DVFS when the mitigation asks); the steady states'
//    time-averaged derates are the next replay's per-rank Derates, until the step repeats
//    within 1e-3 or after 8 replays (thermal_feedback.hpp). Every rank is its own GPU
//    (the DES's stage instance is its TP x CP GPUs at their worst).
//  - Left out, listed by left_out(): mitigations other than DVFS (the trace's dependencies
//    fix what overlaps), failures (goodput is not a step time) and the energy and power
//    columns.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "rapid/analytical/analytical_evaluator.hpp"
#include "rapid/eval/nonideal_evaluator.hpp"
#include "rapid/nonideal/power_model.hpp"
#include "rapid/nonideal/thermal_feedback.hpp"
#include "rapid/spec/sweep_spec.hpp"
#include "rapid/trace/trace_replay.hpp"

namespace rapid::trace {

struct JobReplayResult {
  ReplayResult replay;           ///< the last replay's
  std::string most_loaded_link;  ///< where `most_loaded` faults went ("" when none was asked)
  /// With the thermal model: the steady states (one per rank) of the last iteration, the
  /// replays to the fixed point and the step before and after it.
  std::optional<ThermalReport> thermal;
  /// The thermal columns a sweep row of the replay would carry (the hottest rank's:
  /// gpu_temperature_C ... time_to_throttle_s, thermal_slowdown; status Overheat when a
  /// rank ends hotter than a shutdown temperature).
  EvalResult row;
};

class JobReplay {
 public:
  /// `spec` must outlive this. `hardware` indexes spec.hardware, `scenario` spec.scenarios
  /// (ignored when the job has none); `world` is the trace's rank count. Throws InputError
  /// (the network file, link_faults) for more than kMaxLinkFaults faults.
  JobReplay(const SweepSpec& spec, size_t hardware, size_t scenario, int64_t world);
  JobReplay(const JobReplay&) = delete;
  JobReplay& operator=(const JobReplay&) = delete;

  /// Replays `ranks` (every rank of the trace) on the job: most_loaded faults and the
  /// thermal fixed point as above; `groups` as replay_traces.
  JobReplayResult run(const std::vector<RankTrace>& ranks, const ProcessGroups* groups) const;

  /// The inputs of one replay (without most_loaded's link and the thermal derates).
  const ReplayInputs& inputs() const { return in_; }
  /// The GPU as the job's stack runs it.
  const HardwareSpec& hardware() const { return eval_.hardware(); }
  const NetworkSpec& network() const { return net_; }
  /// The scenario applied ("" when the job has none).
  const std::string& scenario_name() const { return scenario_name_; }
  int64_t derated_ranks() const { return derated_ranks_; }
  bool thermal() const { return thermal_; }
  /// What of the scenario the replay does not apply ("failures", "interleave mitigation",
  /// ...), empty when it applies all of it.
  const std::vector<std::string>& left_out() const { return left_out_; }

 private:
  /// One replay of `in`; with most_loaded faults after a fault-free one that finds the
  /// link (its name into `link`).
  ReplayResult once(const std::vector<RankTrace>& ranks, const ProcessGroups* groups,
                    ReplayInputs in, std::string* link) const;
  /// The thermal fixed point from out.replay, the first replay (with its power spans).
  void fixed_point(const std::vector<RankTrace>& ranks, const ProcessGroups* groups,
                   JobReplayResult& out) const;

  const NetworkSpec& net_;
  AnalyticalEvaluator eval_;
  const NonIdealSpec* scenario_ = nullptr;
  std::optional<PowerModel> power_;
  ReplayInputs in_;
  std::vector<GpuState> states_;  ///< per rank, with the thermal model or stragglers
  std::string scenario_name_;
  int64_t derated_ranks_ = 0;
  bool most_loaded_ = false, thermal_ = false;
  std::vector<std::string> left_out_;
};

}  // namespace rapid::trace
