// Replays Chakra ET files (ours or another tool's) as a discrete-event simulation of one
// step (docs/chakra.md "Replay"). Time is integer picoseconds, as the DES's
// (des/event_queue.hpp); events run in (time, sequence) order, so a replay is deterministic.
//  - A node starts when all its ctrl and data dependencies have ended. Compute nodes of a
//    rank run one at a time in the order they become ready (one compute stream, as
//    ASTRA-sim's HardwareResource); communication nodes run beside them.
//  - Compute time: our cost model on the node's exact op when it carries rapid_op_kind
//    (ComputeCost::time / step efficiency; the optimizer step ComputeCost::memory_time),
//    else a roofline on num_ops and tensor_size (max of FLOPs at the dtype's peak and the
//    bytes through HBM, / step efficiency), else its duration_micros. is_cpu_op nodes
//    take their duration_micros. With a power model a rapid op runs under the TDP cap
//    (PowerModel::capped_time, as the DES with one). A rank's Derate (a straggler's clock
//    and HBM factors, docs/nonideal.md sec 4) stretches its GPU compute nodes by
//    Derate::slowdown of their roofline split (PowerModel::op_energy of the capped op for
//    rapid ops, as the DES; compute-bound time flops / peak for num_ops nodes, the rest
//    memory-bound; recorded durations: compute-bound; the optimizer step: memory-bound).
//  - Communication runs on the DES's flow network (replay_network.hpp): a collective
//    (ALL_REDUCE, ALL_GATHER, REDUCE_SCATTER(_BLOCK), ALL_TO_ALL) starts when every member of
//    its group has reached its k-th collective of that group, as the flows of its
//    CollectivePlan on the group's placement (rapid_group, else the ranks of the comm-group
//    file) among the group's ranks; flows of concurrent communications that cross one link
//    share it max-min fairly; it ends when its flows have drained plus its latency. Other
//    collective types take their duration_micros.
//  - A send starts its flow comm_src -> comm_dst at its start and ends when the data is in;
//    its recv (the k-th with the same source, destination and tag) ends when both it has
//    started and the data is in.
//  - Link faults (docs/faults.md) degrade, fail or make lossy the fabric's links as in the
//    DES (`most_loaded` ones on ReplayInputs::most_loaded); a flow with no alive path ends
//    the replay with no_route set.
//  - With record_power, each rank's GPU compute nodes as power spans (the DES's power
//    trace, des/power_trace.hpp): what the thermal model of a replay on a job reads
//    (job_replay.hpp).
// What the DES adds and a replay does not: host issue overhead, compute slowed beside
// communication kernels (interference) (docs/chakra.md "What a replay leaves out").
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "rapid/cost/collective_cost.hpp"
#include "rapid/cost/compute_cost.hpp"
#include "rapid/des/fabric.hpp"
#include "rapid/des/power_trace.hpp"
#include "rapid/nonideal/power_model.hpp"
#include "rapid/nonideal/thermal_model.hpp"
#include "rapid/spec/link_fault.hpp"
#include "rapid/spec/network_spec.hpp"
#include "rapid/trace/trace_set.hpp"

namespace rapid::trace {

struct ReplayInputs {
  const ComputeCost* compute = nullptr;
  const CollectiveCost* collective = nullptr;
  double step_efficiency = 1.0;
  /// The cluster the flows run on (rank = GPU id; its gpus_per_node places the ranks).
  const NetworkSpec* network = nullptr;
  /// Per rank (index = rank): the clock and HBM bandwidth it keeps (a
  /// straggler: Derate{clock_factor, hbm_factor}); empty: all full speed. Needs `power`.
  std::vector<Derate> derate;
  /// The TDP cap and the roofline split of rapid ops: set it where the DES has one (the
  /// scenario needs_power_model()); null: no cap, and no derates.
  const PowerModel* power = nullptr;
  /// Link faults of the network file and the scenario (at most kMaxLinkFaults); `most_loaded`
  /// ones apply to `most_loaded` (nothing when it is empty: JobReplay finds it).
  std::vector<LinkFault> link_faults;
  std::optional<des::LinkRef> most_loaded;
  /// Record ReplayResult::power (needs `power`).
  bool record_power = false;
};

struct ReplayResult {
  double step_time_s = 0;
  int64_t critical_rank = 0;  ///< the rank whose last node ends last
  uint64_t nodes = 0, events = 0;
  uint64_t by_model = 0, by_roofline = 0, by_duration = 0;  ///< compute nodes timed so
  uint64_t bundles = 0;            ///< flow bundles started (a tier of a collective, a send)
  int32_t peak_flows = 0;          ///< the most flows one link carried at once
  std::vector<double> rank_end_s;  ///< by position in `ranks`
  /// A failed link leaves a flow no path ("gpu 3 -> gpu 11: ..."): step_time_s is 0.
  std::string no_route;
  /// The link `most_loaded` faults go on, by the DES's rule (des/simulator.cpp: the highest
  /// utilization, bytes / capacity, of the scale-out links, of any link when no scale-out
  /// link carried a byte; exact ties: the lowest (kind, a, b), replay_network.hpp) and its
  /// name ("" when no flow crossed a link).
  des::LinkRef busiest{};
  std::string busiest_link;
  /// With ReplayInputs::record_power, per rank (by position in `ranks`): its GPU compute
  /// nodes in time order, each [start, end) with busy = end - start and its full-speed work
  /// (ReplayCompute, replay_compute.hpp).
  std::vector<std::vector<des::PowerSpan>> power;
};

/// Replays `ranks` (every rank of the job: a collective or transfer with a peer outside
/// them is an InputError naming the node). `groups` may be null when no collective names a
/// group other than "0"/"" (all ranks). Throws InputError for a deadlock (nodes that never
/// start: a recv without its send), naming the first such node.
ReplayResult replay_traces(const std::vector<RankTrace>& ranks, const ProcessGroups* groups,
                           const ReplayInputs& in);

}  // namespace rapid::trace
