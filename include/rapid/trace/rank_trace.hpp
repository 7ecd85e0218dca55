// One rank's Chakra nodes from the workload graph (docs/architecture.md "Expanding
// to a per-rank trace"; docs/chakra.md "What a rank's trace holds"). The stage programs are the
// DES's (des/stage_program.hpp): the same pass order (1F1B / interleaved), owners, DP buckets and
// hooks, so that the trace encodes the schedule the simulator runs:
//  - the compute stream: each op's node depends (data_deps) on the one before; a
//    collective pipelined with a compute op (Op::overlap) shares its predecessors and both
//    precede the next op;
//  - a pass begins after the recv of its input (a COMM_RECV node, posted when the previous
//    pass ends) and after the previous pass's sends (Megatron's blocking batched p2p);
//    its output is a COMM_SEND at its end; send and recv share comm_tag
//    2 * (mb * vpp + chunk) + dir of the receiving pass and the message size;
//  - DP collectives (COMM_COLL) hang off the point where the DES posts them (ctrl_deps on
//    the node before that boundary and on the previous collective of their DP stream) and
//    the node after a gate waits for them (data_deps); the optimizer step is a compute node
//    after the tail gate.
// Ranks are materialized one at a time: build() reuses `out`.
#pragma once

#include <cstdint>
#include <vector>

#include "rapid/cost/collective_cost.hpp"
#include "rapid/cost/compute_cost.hpp"
#include "rapid/des/stage_program.hpp"
#include "rapid/trace/process_groups.hpp"
#include "rapid/trace/trace_node.hpp"
#include "rapid/workload/workload.hpp"

namespace rapid::trace {

struct TraceInputs {
  const Workload* workload = nullptr;
  const ModelSpec* model = nullptr;
  const TrainingSpec* training = nullptr;
  const ComputeCost* compute = nullptr;
  const CollectiveCost* collective = nullptr;
  double step_efficiency = 1.0;  ///< compute ops take ComputeCost::time / step_efficiency
  int64_t gpus_per_node = 8;
};

class RankTraceBuilder {
 public:
  explicit RankTraceBuilder(const TraceInputs& in);

  int64_t world_size() const { return world_; }
  /// The nodes of `rank` (0 <= rank < world_size()) into `out`; the groups its collectives
  /// name are added to `groups`.
  void build(int64_t rank, std::vector<TraceNode>& out, ProcessGroups& groups);

 private:
  struct Cursor;
  void emit_ops(const std::vector<const Op*>& ops, Cursor& c);
  uint64_t emit_compute(const Op& op, std::vector<uint64_t> deps);
  uint64_t emit_collective(const char* name, CollectiveKind kind, CommGroup group, double bytes,
                           std::vector<uint64_t> deps, std::vector<uint64_t> ctrl);
  uint64_t emit_p2p(NodeType type, const char* name, int64_t peer, int32_t tag, double bytes,
                    const GroupShape& g, std::vector<uint64_t> deps);
  uint64_t push(TraceNode&& n);
  GroupShape pipeline_shape(int64_t peer) const;

  TraceInputs in_;
  int64_t world_ = 0, tpcp_ = 1, dp_ = 1, pp_ = 1, vpp_ = 1;
  std::vector<des::StageProgram> programs_;
  // The rank being built.
  int64_t rank_ = 0;
  std::vector<TraceNode>* out_ = nullptr;
  ProcessGroups* groups_ = nullptr;
  int32_t template_p2p_ = 0;  ///< template send/recv pairs so far (their tags)
};

}  // namespace rapid::trace
