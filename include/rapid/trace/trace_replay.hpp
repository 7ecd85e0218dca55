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
//    take their duration_micros.
//  - A collective (ALL_REDUCE, ALL_GATHER, REDUCE_SCATTER(_BLOCK), ALL_TO_ALL) starts when
//    every member of its group has reached its k-th collective of that group and lasts
//    CollectiveCost's plan on the group's placement (rapid_group, else the ranks of the
//    comm-group file): the plan's latency plus its slowest tier rounded up to the
//    picosecond. Other collective types take their duration_micros.
//  - A send lasts the send/recv time of its size from its start; its recv (the k-th with
//    the same source, destination and tag) ends when both it has started and the data is in.
// What the DES adds and a replay does not: host issue overhead, compute slowed beside
// communication kernels (interference), flows sharing links (a replay's network is
// uncontended), thermal derating, link faults (docs/chakra.md "What a replay leaves out").
#pragma once

#include <cstdint>
#include <vector>

#include "rapid/cost/collective_cost.hpp"
#include "rapid/cost/compute_cost.hpp"
#include "rapid/trace/trace_set.hpp"

namespace rapid::trace {

struct ReplayInputs {
  const ComputeCost* compute = nullptr;
  const CollectiveCost* collective = nullptr;
  double step_efficiency = 1.0;
  int64_t gpus_per_node = 8;
  /// Per rank (index = rank): compute nodes take this many times longer (a straggler or a
  /// throttled GPU: Derate::slowdown); empty: 1.
  std::vector<double> slowdown;
};

struct ReplayResult {
  double step_time_s = 0;
  int64_t critical_rank = 0;  ///< the rank whose last node ends last
  uint64_t nodes = 0, events = 0;
  uint64_t by_model = 0, by_roofline = 0, by_duration = 0;  ///< compute nodes timed so
  std::vector<double> rank_end_s;                           ///< by position in `ranks`
};

/// Replays `ranks` (every rank of the job: a collective or transfer with a peer outside
/// them is an InputError naming the node). `groups` may be null when no collective names a
/// group other than "0"/"" (all ranks). Throws InputError for a deadlock (nodes that never
/// start: a recv without its send), naming the first such node.
ReplayResult replay_traces(const std::vector<RankTrace>& ranks, const ProcessGroups* groups,
                           const ReplayInputs& in);

}  // namespace rapid::trace
