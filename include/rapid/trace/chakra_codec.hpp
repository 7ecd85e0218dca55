// TraceNode <-> the protobuf messages of our Chakra schema (src/trace/chakra_et.proto,
// the field numbers of MLCommons Chakra's et_def.proto; docs/chakra.md "Attributes").
// Each attribute has one value kind, as ASTRA-sim's feeder reads it: is_cpu_op bool,
// num_ops int64, tensor_size uint64, comm_type int64, comm_size int64, comm_src/comm_dst/
// comm_tag/comm_priority int32, pg_name string, involved_dim bool_list; rapid's own:
// rapid_op_kind int64, rapid_shape int64_list (m, n, k, batch), rapid_flags int64_list
// (causal, fp8, gqa_group), rapid_flops/rapid_bytes double, rapid_group int64_list
// (size, per_node, nodes, stride).
#pragma once

#include <string>

#include "rapid/trace/trace_node.hpp"

namespace ChakraProtoMsg {
class Node;
class GlobalMetadata;
}  // namespace ChakraProtoMsg

namespace rapid::trace {

/// Largest byte or FLOP count a trace may carry: 2^53, the largest integer every double
/// holds exactly (our sizes are doubles); more is an overflow, never a silent rounding.
inline constexpr double kMaxExactCount = 9007199254740992.0;

void encode_node(const TraceNode& n, ChakraProtoMsg::Node& out);
void encode_metadata(const TraceMetadata& m, ChakraProtoMsg::GlobalMetadata& out);

/// Decodes `in` (read from `file`) into `out`. Throws InputError naming the file, the node
/// id and attribute, its value and what was expected when a known attribute has another
/// value kind, a size is negative or beyond kMaxExactCount, a type or comm_type is unknown.
/// Unknown attributes are ignored.
void decode_node(const ChakraProtoMsg::Node& in, const std::string& file, TraceNode& out);
void decode_metadata(const ChakraProtoMsg::GlobalMetadata& in, TraceMetadata& out);

}  // namespace rapid::trace
