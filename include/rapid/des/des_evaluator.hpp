// The discrete-event fidelity (`--fidelity des`, docs/architecture.md "Two fidelities"): the same
// inputs and EvalResult as the analytical evaluator, from a simulation of one training
// step (des/simulator.hpp; docs/des.md). Op times come from the analytical evaluator's own
// cost objects (ComputeCost / step efficiency, CollectiveCost plans), so on uncontended
// links the two agree op by op; they differ where the simulation captures what the closed
// form cannot (flows sharing links, the schedule's actual critical path, buckets).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "rapid/analytical/analytical_evaluator.hpp"
#include "rapid/des/simulator.hpp"
#include "rapid/des/timeline.hpp"

namespace rapid {

struct DesOptions {
  des::ReplicaMode replicas = des::ReplicaMode::Auto;  ///< `--full`: All
  bool coalesce = true;  ///< fold collectives that cannot be contended (exact; tests only)
  /// The scenario's link faults (NonIdealSpec::link_faults, docs/faults.md); the network's
  /// own `faults:` are added to them.
  std::vector<LinkFault> link_faults;
  uint64_t max_events = des::SimOptions{}.max_events;  ///< the DES event budget (SimOptions)
  /// Extrapolate a long step's periodic middle (SimOptions::steady_state); false: simulate
  /// every micro-batch (`--full`, tests).
  bool steady_state = true;
  bool fold_alone = true;    ///< SimOptions::fold_alone (false: tests and benchmarks only)
  bool batch_solves = true;  ///< SimOptions::batch_solves (false: tests and benchmarks only)
};

/// What the non-ideal model adds to one simulation (eval/nonideal_evaluator.hpp): op
/// energies and their power trace, per-instance derates (stage * dp + replica).
struct DesRun {
  const PowerModel* power = nullptr;
  std::vector<Derate> derate;
  des::PowerTrace* trace = nullptr;
  bool all_replicas = false;  ///< the derates differ between replicas: simulate them all
};

/// A link (or a class of links loaded alike) in the congestion report.
struct DesLink {
  std::string name;            ///< one link of the class ("leaf 0 -> spine 5")
  int32_t similar = 0;         ///< other links of the class
  double utilization = 0;      ///< bytes / (capacity x step time)
  double active_fraction = 0;  ///< fraction of the step with at least one flow
  int32_t peak_flows = 0;
  double capacity_Bps = 0;
};

/// What a simulation reports beyond EvalResult (`rapid predict --fidelity des`).
struct DesReport {
  bool ok = false;
  int64_t replicas = 1, replicas_simulated = 1;
  bool symmetric = true;
  std::string asymmetry;         ///< why every replica was simulated
  std::string no_route;          ///< the flow a failed link leaves without a path (Status::NoRoute)
  std::string most_loaded_link;  ///< where `most_loaded` faults went
  uint64_t events = 0, flows = 0, solves = 0, folded_ops = 0;
  int64_t extrapolated_periods = 0;  ///< steady-state periods added, not simulated
  int32_t period_microbatches = 1;   ///< micro-batches per period
  double wall_s = 0;                 ///< simulation wall time
  int32_t critical_stage = 0, critical_replica = 0;
  std::vector<DesLink> hot_spots;  ///< busier than 90%
  std::vector<DesLink> busiest;    ///< the busiest classes (up to 8)
  int64_t hot_spot_links = 0;
  double max_utilization = 0;
};

/// Hot spot threshold: links busier than this fraction of the step.
inline constexpr double kHotSpotUtilization = 0.9;

class DesEvaluator final : public Evaluator {
 public:
  /// References must outlive the evaluator. Throws InputError when the network's and the
  /// scenario's faults together exceed kMaxLinkFaults.
  DesEvaluator(const ModelSpec& model, const TrainingSpec& training, const HardwareSpec& hw,
               const NetworkSpec& net, DesOptions options = {});

  /// Simulates one step of `w`; fills the time fields of `r` and the DES columns.
  /// Thread-safe (one simulator per thread). A network that cannot host the job (a torus
  /// grid smaller than its nodes) gives status Infeasible; link faults that leave some flow
  /// without a path give status NoRoute.
  void evaluate(const Workload& w, EvalResult& r) const override;

  /// evaluate() plus the congestion report and, when `timeline` is given, the record of
  /// every op and flow.
  void simulate(const Workload& w, EvalResult& r, DesReport* report, des::Timeline* timeline,
                const DesRun* run = nullptr) const;

  const AnalyticalEvaluator& analytical() const { return analytical_; }

 private:
  const ModelSpec& model_;
  const TrainingSpec& training_;
  const NetworkSpec& network_;
  AnalyticalEvaluator analytical_;
  DesOptions options_;
  std::vector<LinkFault> faults_;  ///< the network's faults, then the scenario's
};

/// Text of a report: replicas simulated and why, events, hot spots, busiest links.
std::string describe_des_report(const DesReport& report);

}  // namespace rapid
