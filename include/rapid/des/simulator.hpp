// The discrete-event simulation of one training step of one workload (docs/des.md).
//
// Stage instances (one per pipeline stage, or per stage and DP replica) execute their
// StageProgram on a compute stream: forward/backward passes in Megatron's schedule, each
// pass the owners' op templates; ops are issued by a host thread at host_overhead_per_op
// each (the GPU waits when the host falls behind). Communication:
//  - TP/CP/EP collectives of the templates block the compute stream (or overlap the
//    compute op they are pipelined with, Op::overlap); pipeline activations/gradients go
//    as p2p transfers (a stage waits for its sends and for the data of its next pass,
//    Megatron's blocking batched p2p); DP/ZeRO collectives run on a DP stream per stage.
//  - every communication is the CollectivePlan of collective_cost.hpp: after the plan's
//    latency, each tier's flows (CommLayouts) share links with max-min fair rates
//    (FlowNetwork); a collective completes when its last flow has drained plus latency.
//  - collectives that no concurrent flow can ever touch (CommLayouts::foldable) take their
//    uncontended time inside compute blocks: a run of such ops is one event, with the
//    same result to the picosecond as simulating each op (tested).
// Errors: none for legal workloads (assertions guard invariants) within its bounds: the
// event budget (SimOptions::max_events) and the per-pass state (SimulationTooLarge,
// sim_size.hpp), both LimitErrors.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "rapid/core/op_class.hpp"
#include "rapid/cost/collective_cost.hpp"
#include "rapid/cost/compute_cost.hpp"
#include "rapid/cost/interference.hpp"
#include "rapid/des/comm_layouts.hpp"
#include "rapid/des/event_queue.hpp"
#include "rapid/des/fabric.hpp"
#include "rapid/des/flow_network.hpp"
#include "rapid/des/power_trace.hpp"
#include "rapid/des/stage_program.hpp"
#include "rapid/nonideal/power_model.hpp"
#include "rapid/nonideal/thermal_model.hpp"
#include "rapid/spec/link_fault.hpp"
#include "rapid/spec/model_spec.hpp"
#include "rapid/spec/network_spec.hpp"
#include "rapid/spec/training_spec.hpp"
#include "rapid/workload/workload.hpp"

namespace rapid::des {

class Timeline;

/// The models a simulation reads (all must outlive the simulator's run()).
struct SimInputs {
  const ModelSpec* model = nullptr;
  const TrainingSpec* training = nullptr;
  const NetworkSpec* network = nullptr;
  const ComputeCost* compute = nullptr;
  const CollectiveCost* collective = nullptr;
  double step_efficiency = 1.0;  ///< compute ops take ComputeCost::time / step_efficiency
  /// Compute beside communication kernels (TP overlap, the DP stream); nullptr: none.
  const InterferenceModel* interference = nullptr;
  /// Per stage: one direction's activation-offload copies of a micro-batch (offload.hpp);
  /// empty: no offload.
  std::vector<double> offload_copy_s;
  /// Energy of the ops (power trace) and their compute/memory-bound split (derates);
  /// nullptr: neither (docs/nonideal.md).
  const PowerModel* power = nullptr;
  /// Per stage instance (stage * dp + replica): the clock and HBM bandwidth it keeps
  /// (throttling, stragglers); its compute ops take derate.slowdown(their roofline split)
  /// times longer. Empty: none. Needs `power`.
  std::vector<Derate> derate;
  /// Every link fault of the point (docs/faults.md): the caller passes the union of the
  /// network file's `faults:` (NetworkSpec::faults, which the simulator does not read) and
  /// the scenario's `link_faults:`, at most kMaxLinkFaults (DesEvaluator does this). nullptr or
  /// empty: none. Degraded and lossy links get capacity x health x go-back-N goodput while
  /// in effect (timed faults change it by events); failed links are routed around for the
  /// whole step, and a flow with no alive path makes the run report no_route; `most_loaded`
  /// faults apply to the busiest scale-out link of a first, fault-free run of the point.
  const std::vector<LinkFault>* link_faults = nullptr;
};

enum class ReplicaMode : uint8_t {
  Auto,  ///< one replica when every replica sees the same network, else all
  One,   ///< one replica stands for all (their flows are all on the network)
  All,   ///< every DP replica simulated
};

struct SimOptions {
  ReplicaMode replicas = ReplicaMode::Auto;
  bool coalesce = true;  ///< fold uncontendable collectives into compute blocks
  /// Extrapolate the periodic middle of a long step from a shorter run (docs/des.md
  /// "Steady state"); false: simulate every micro-batch.
  bool steady_state = true;
  /// Run a collective or transfer that starts alone on its links outside the flow network
  /// until another flow is about to meet it (docs/des.md "Dynamic folding"); false: every
  /// one in the network from its start (the same times; tests compare the two).
  bool fold_alone = true;
  /// Compute the flow network's rates once per instant, for every collective and transfer
  /// that started or drained at it (FlowNetwork::set_batch; docs/des.md "Speed"); false:
  /// once per arrival and departure (the same rates to rounding; tests compare the two).
  bool batch_solves = true;
  Timeline* timeline = nullptr;  ///< record ops and flows (forces op-level blocks)
  PowerTrace* power = nullptr;   ///< record each instance's compute spans (needs in.power)
  /// Events one run may process; more throw LimitError (the point's row: status error,
  /// error_code limit). 1e9 events are minutes of one core (the 16,384-GPU Llama 3 405B
  /// step takes about 1e8), so only a runaway or absurdly large point reaches it.
  uint64_t max_events = 1'000'000'000;
};

/// Where one stage instance's time went (seconds); the critical instance's fill EvalResult.
/// compute and layer_comm (the templates' TP/CP/EP collectives) are the sums of their
/// splits by class (op_class.hpp).
struct InstanceTimes {
  int64_t stage = 0;
  double end = 0, compute = 0, interference = 0, layer_comm = 0, pp_comm = 0, host = 0;
  double dp_exposed = 0, dp_busy = 0, optimizer = 0, offload = 0;
  OpClassTimes<> compute_by_class{};
  CommClassTimes<> comm_by_class{};
};

/// One class of links that the simulation loaded alike.
struct LinkStat {
  int32_t first_link = 0;      ///< a representative link (Fabric id)
  int32_t links = 0;           ///< links in the class
  double utilization = 0;      ///< bytes carried / (capacity x step time): the busy fraction
  double active_fraction = 0;  ///< fraction of the step with at least one flow
  int32_t peak_flows = 0;
  double bytes = 0;  ///< per link
  double capacity_Bps = 0;
};

struct SimResult {
  bool ok = false;  ///< false: the network cannot host the job (torus too small, no route)
  /// A hard link failure leaves some flow without a path (docs/faults.md): ok is false.
  bool no_route = false;
  std::string no_route_reason;  ///< "gpu 3 -> gpu 11: node 0 nic 3 -> leaf 0 failed"
  /// The link `most_loaded` faults were applied to ("" when none was asked for).
  std::string most_loaded_link;
  double step_time_s = 0;
  int32_t critical = 0;  ///< instance that finished last
  std::vector<InstanceTimes> instances;
  bool symmetric = true;  ///< replicas equivalent (Auto) / assumed (One)
  int64_t replicas_simulated = 1;
  std::string asymmetry;  ///< why all replicas were simulated (Auto)
  uint64_t events = 0, flows = 0, solves = 0, folded_ops = 0;
  /// Periods of the steady state added to a shorter run instead of simulated (0: none;
  /// docs/des.md "Steady state"). events counts what was simulated, flows and solves the
  /// whole step.
  int64_t extrapolated_periods = 0;
  int32_t period_microbatches = 1;
  std::vector<LinkStat> links;  ///< by descending utilization
};

/// Runs one step. Reusable: keep one per thread and call run() per point (the vectors
/// keep their memory).
class Simulator {
 public:
  Simulator();
  ~Simulator();
  Simulator(const Simulator&) = delete;
  Simulator& operator=(const Simulator&) = delete;

  /// Simulates workload `w` under `in`; fills `out`. `topo` is reused across calls.
  void run(const Workload& w, const SimInputs& in, const SimOptions& opt, SimResult& out);

  const Fabric& topology() const { return topo_; }

  struct Impl;  // the simulation state (src/des/sim_*.cpp)

 private:
  void run_once(const Workload& w, const SimInputs& in, const SimOptions& opt, SimResult& out);
  /// One simulation of `w`; with periods > 0 a shortened step to extrapolate by that many
  /// periods of `delta` micro-batches: false when it was not periodic (out is not filled).
  bool simulate(const Workload& w, const SimInputs& in, const SimOptions& opt, SimResult& out,
                int32_t delta, int64_t periods);

  Fabric topo_;
  Impl* impl_;
};

}  // namespace rapid::des
