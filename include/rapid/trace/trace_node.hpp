// One node of a Chakra execution trace (ET) in memory: what rapid-sweep writes and reads
// of the MLCommons Chakra schema (schema/protobuf/et_def.proto, package ChakraProtoMsg;
// docs/chakra.md). The attributes ASTRA-sim's feeder reads are typed fields here, each
// written in exactly one value kind (chakra_attrs.hpp); rapid's own `rapid_*` attributes
// carry what lets our cost model time a node exactly as the in-memory workload (an op's
// shape, its double-precision FLOPs and bytes, the placement of its group).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace rapid::trace {

/// et_def.proto NodeType (the values used here).
enum class NodeType : uint8_t {
  Invalid = 0,
  Metadata = 1,
  MemLoad = 2,
  MemStore = 3,
  Comp = 4,
  CommSend = 5,
  CommRecv = 6,
  CommColl = 7
};
inline constexpr int kNumNodeTypes = 8;
const char* node_type_name(NodeType t);  ///< "COMP_NODE", ... (et_def.proto names)

/// et_def.proto CollectiveCommType, the value of `comm_type`.
enum class CommType : uint8_t {
  AllReduce = 0,
  Reduce = 1,
  AllGather = 2,
  Gather = 3,
  Scatter = 4,
  Broadcast = 5,
  AllToAll = 6,
  ReduceScatter = 7,
  ReduceScatterBlock = 8,
  Barrier = 9
};
inline constexpr int64_t kMaxCommType = 9;

/// rapid_op_kind of a compute node: OpKind's Gemm, Attention, MemoryBound, or the
/// optimizer step (HBM streaming without the step efficiency, as the DES's).
enum class RapidOpKind : uint8_t { Gemm = 0, Attention = 1, MemoryBound = 2, Optimizer = 5 };

/// The exact op of a compute node (rapid_op_kind, rapid_shape, rapid_flags, rapid_flops,
/// rapid_bytes): with it the replay's cost model gives the workload's time to the bit.
struct RapidOp {
  RapidOpKind kind = RapidOpKind::MemoryBound;
  int64_t m = 0, n = 0, k = 0, batch = 1;
  bool causal = false, fp8 = false;
  int64_t gqa_group = 1;
  double flops = 0, bytes = 0;
};

/// A group's placement as GroupShape (rapid_group: size, per_node, nodes, stride).
struct RapidGroup {
  int64_t size = 1, per_node = 1, nodes = 1, stride = 1;
};

struct TraceNode {
  uint64_t id = 0;
  std::string name;
  NodeType type = NodeType::Invalid;
  std::vector<uint64_t> ctrl_deps, data_deps;
  uint64_t duration_micros = 0;  ///< our predicted duration, rounded to the microsecond

  // Compute nodes (ASTRA-sim's roofline: num_ops / tensor_size).
  bool is_cpu_op = false;
  std::optional<int64_t> num_ops;       ///< FLOPs (int64)
  std::optional<uint64_t> tensor_size;  ///< bytes touched (uint64)
  std::optional<RapidOp> rapid_op;

  // Communication nodes.
  std::optional<int64_t> comm_type;  ///< CollectiveCommType (int64)
  std::optional<int64_t> comm_size;  ///< bytes (int64)
  std::optional<int32_t> comm_src, comm_dst, comm_tag;
  std::optional<int32_t> comm_priority;
  std::optional<std::string> pg_name;  ///< process group (the comm-group JSON's key)
  std::vector<bool> involved_dim;      ///< network dimensions spanned: NVLink, scale-out
  std::optional<double> rapid_bytes;   ///< the exact (double) buffer size
  std::optional<RapidGroup> rapid_group;

  bool is_comm() const {
    return type == NodeType::CommColl || type == NodeType::CommSend || type == NodeType::CommRecv;
  }
};

/// The GlobalMetadata rapid-sweep writes (version and what the trace was made from).
struct TraceMetadata {
  std::string version = "0.0.4";  ///< the Chakra schema version the feeder expects
  std::string producer;           ///< "rapid-sweep 0.1.0 (rev)"
  int64_t rank = 0, world_size = 0, gpus_per_node = 0;
  std::string job, layout;
  std::string dtype = "bf16";  ///< the training dtype (the replay's tensor peak)
};

}  // namespace rapid::trace
