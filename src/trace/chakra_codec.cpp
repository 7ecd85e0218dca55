#include "rapid/trace/chakra_codec.hpp"

#include <fmt/format.h>

#include <limits>

#include "chakra_et.pb.h"
#include "rapid/common/error.hpp"

namespace rapid::trace {

namespace pb = ChakraProtoMsg;
using Kind = pb::AttributeProto::ValueCase;

const char* node_type_name(NodeType t) {
  static const char* const names[] = {"INVALID_NODE",   "METADATA_NODE", "MEM_LOAD_NODE",
                                      "MEM_STORE_NODE", "COMP_NODE",     "COMM_SEND_NODE",
                                      "COMM_RECV_NODE", "COMM_COLL_NODE"};
  const auto i = static_cast<size_t>(t);
  return i < std::size(names) ? names[i] : "unknown";
}

namespace {

pb::AttributeProto& attr(pb::Node& n, const char* name) {
  pb::AttributeProto* a = n.add_attr();
  a->set_name(name);
  return *a;
}

void add_int64_list(pb::Node& n, const char* name, std::initializer_list<int64_t> v) {
  auto* l = attr(n, name).mutable_int64_list();
  for (int64_t x : v) l->add_values(x);
}

/// The value-kind field name of a oneof case, for messages ("uint64_val").
std::string kind_name(const pb::AttributeProto& a) {
  if (a.value_case() == pb::AttributeProto::VALUE_NOT_SET) return "no value";
  const auto* f = pb::AttributeProto::descriptor()->FindFieldByNumber(a.value_case());
  return f ? f->name() : fmt::format("field {}", static_cast<int>(a.value_case()));
}

class NodeDecoder {
 public:
  NodeDecoder(const pb::Node& in, const std::string& file) : in_(in), file_(file) {}

  [[noreturn]] void fail(const std::string& key, const std::string& value,
                         const std::string& expected) const {
    throw InputError(file_, fmt::format("node {} ({}) {}", in_.id(), in_.name(), key), value,
                     expected);
  }
  void expect(const pb::AttributeProto& a, Kind kind, const char* kind_text) const {
    if (a.value_case() != kind)
      fail("attribute " + a.name(), kind_name(a),
           fmt::format("{} (the kind Chakra's feeder reads, docs/chakra.md)", kind_text));
  }
  double count(const pb::AttributeProto& a, double v) const {
    if (!(v >= 0) || v > kMaxExactCount)
      fail("attribute " + a.name(), fmt::format("{}", v),
           "a count from 0 to 2^53 (a size that fits a double exactly)");
    return v;
  }
  /// An integer attribute in any of protobuf's integer kinds, as ASTRA-sim's current
  /// feeder reads them (feeder_v3 converts every integer kind; a double or a string is
  /// refused there too; docs/chakra.md "Attributes").
  long double integer(const pb::AttributeProto& a, const char* kind_text) const {
    switch (a.value_case()) {
      case pb::AttributeProto::kInt32Val:
        return a.int32_val();
      case pb::AttributeProto::kInt64Val:
        return static_cast<long double>(a.int64_val());
      case pb::AttributeProto::kUint32Val:
        return a.uint32_val();
      case pb::AttributeProto::kUint64Val:
        return static_cast<long double>(a.uint64_val());
      case pb::AttributeProto::kSint32Val:
        return a.sint32_val();
      case pb::AttributeProto::kSint64Val:
        return static_cast<long double>(a.sint64_val());
      case pb::AttributeProto::kFixed32Val:
        return a.fixed32_val();
      case pb::AttributeProto::kFixed64Val:
        return static_cast<long double>(a.fixed64_val());
      case pb::AttributeProto::kSfixed32Val:
        return a.sfixed32_val();
      case pb::AttributeProto::kSfixed64Val:
        return static_cast<long double>(a.sfixed64_val());
      default:
        fail("attribute " + a.name(), kind_name(a),
             fmt::format("an integer kind ({} as we write it; any integer kind is read, as "
                         "ASTRA-sim's feeder reads it; docs/chakra.md)",
                         kind_text));
    }
  }
  /// A count (FLOPs, bytes) in any integer kind, from 0 to 2^53.
  int64_t count(const pb::AttributeProto& a, const char* kind_text) const {
    return static_cast<int64_t>(count(a, static_cast<double>(integer(a, kind_text))));
  }
  int32_t rank(const pb::AttributeProto& a) const {
    const long double v = integer(a, "int32_val");
    if (v < 0 || v > std::numeric_limits<int32_t>::max())
      fail("attribute " + a.name(), fmt::format("{}", static_cast<double>(v)),
           "a rank from 0 to 2^31 - 1");
    return static_cast<int32_t>(v);
  }
  int32_t tag(const pb::AttributeProto& a) const {
    const long double v = integer(a, "int32_val");
    if (v < std::numeric_limits<int32_t>::min() || v > std::numeric_limits<int32_t>::max())
      fail("attribute " + a.name(), fmt::format("{}", static_cast<double>(v)), "an int32 value");
    return static_cast<int32_t>(v);
  }
  std::vector<int64_t> int64s(const pb::AttributeProto& a, int size) const {
    expect(a, pb::AttributeProto::kInt64List, "int64_list");
    if (a.int64_list().values_size() != size)
      fail("attribute " + a.name(), fmt::format("{} values", a.int64_list().values_size()),
           fmt::format("{} values", size));
    return {a.int64_list().values().begin(), a.int64_list().values().end()};
  }

  void decode(TraceNode& out) const {
    out = TraceNode{};
    out.id = in_.id();
    out.name = in_.name();
    if (in_.type() < 0 || in_.type() >= kNumNodeTypes)
      fail("type", std::to_string(in_.type()), "a NodeType 0-7 (et_def.proto)");
    out.type = static_cast<NodeType>(in_.type());
    out.ctrl_deps.assign(in_.ctrl_deps().begin(), in_.ctrl_deps().end());
    out.data_deps.assign(in_.data_deps().begin(), in_.data_deps().end());
    out.duration_micros = in_.duration_micros();
    for (const pb::AttributeProto& a : in_.attr()) decode_attr(a, out);
  }

 private:
  void decode_attr(const pb::AttributeProto& a, TraceNode& out) const {
    const std::string& k = a.name();
    if (k == "is_cpu_op") {
      expect(a, pb::AttributeProto::kBoolVal, "bool_val");
      out.is_cpu_op = a.bool_val();
    } else if (k == "num_ops") {
      out.num_ops = count(a, "int64_val");
    } else if (k == "tensor_size") {
      out.tensor_size = static_cast<uint64_t>(count(a, "uint64_val"));
    } else if (k == "comm_type") {
      const long double v = integer(a, "int64_val");
      if (v < 0 || v > kMaxCommType)
        fail("attribute comm_type", fmt::format("{}", static_cast<double>(v)),
             "a CollectiveCommType 0-9 (et_def.proto)");
      out.comm_type = static_cast<int64_t>(v);
    } else if (k == "comm_size") {
      out.comm_size = count(a, "int64_val");
    } else if (k == "comm_src") {
      out.comm_src = rank(a);
    } else if (k == "comm_dst") {
      out.comm_dst = rank(a);
    } else if (k == "comm_tag") {
      out.comm_tag = tag(a);
    } else if (k == "comm_priority") {
      out.comm_priority = tag(a);
    } else if (k == "pg_name") {
      expect(a, pb::AttributeProto::kStringVal, "string_val");
      out.pg_name = a.string_val();
    } else if (k == "involved_dim") {
      expect(a, pb::AttributeProto::kBoolList, "bool_list");
      out.involved_dim.assign(a.bool_list().values().begin(), a.bool_list().values().end());
    } else if (k == "rapid_op_kind") {
      expect(a, pb::AttributeProto::kInt64Val, "int64_val");
      const int64_t v = a.int64_val();
      if (v != 0 && v != 1 && v != 2 && v != 5)
        fail("attribute rapid_op_kind", std::to_string(v),
             "0 (GEMM), 1 (attention), 2 (memory-bound) or 5 (optimizer)");
      if (!out.rapid_op) out.rapid_op.emplace();
      out.rapid_op->kind = static_cast<RapidOpKind>(v);
    } else if (k == "rapid_shape") {
      const auto v = int64s(a, 4);
      if (!out.rapid_op) out.rapid_op.emplace();
      out.rapid_op->m = v[0], out.rapid_op->n = v[1], out.rapid_op->k = v[2];
      out.rapid_op->batch = v[3];
    } else if (k == "rapid_flags") {
      const auto v = int64s(a, 3);
      if (!out.rapid_op) out.rapid_op.emplace();
      out.rapid_op->causal = v[0] != 0, out.rapid_op->fp8 = v[1] != 0;
      out.rapid_op->gqa_group = v[2];
    } else if (k == "rapid_flops" || k == "rapid_bytes") {
      expect(a, pb::AttributeProto::kDoubleVal, "double_val");
      const double v = count(a, a.double_val());
      if (out.type == NodeType::Comp) {
        if (!out.rapid_op) out.rapid_op.emplace();
        (k == "rapid_flops" ? out.rapid_op->flops : out.rapid_op->bytes) = v;
      } else if (k == "rapid_bytes") {
        out.rapid_bytes = v;
      }
    } else if (k == "rapid_group") {
      const auto v = int64s(a, 4);
      if (v[0] < 1 || v[1] < 1 || v[2] < 1 || v[3] < 1)
        fail("attribute rapid_group", fmt::format("{} {} {} {}", v[0], v[1], v[2], v[3]),
             "size, per_node, nodes and stride, each >= 1");
      out.rapid_group = RapidGroup{v[0], v[1], v[2], v[3]};
    }
  }

  const pb::Node& in_;
  const std::string& file_;
};

}  // namespace

void encode_node(const TraceNode& n, pb::Node& out) {
  out.Clear();
  out.set_id(n.id);
  out.set_name(n.name);
  out.set_type(static_cast<pb::NodeType>(n.type));
  for (uint64_t d : n.ctrl_deps) out.add_ctrl_deps(d);
  for (uint64_t d : n.data_deps) out.add_data_deps(d);
  out.set_duration_micros(n.duration_micros);
  attr(out, "is_cpu_op").set_bool_val(n.is_cpu_op);
  if (n.num_ops) attr(out, "num_ops").set_int64_val(*n.num_ops);
  if (n.tensor_size) attr(out, "tensor_size").set_uint64_val(*n.tensor_size);
  if (n.rapid_op) {
    const RapidOp& o = *n.rapid_op;
    attr(out, "rapid_op_kind").set_int64_val(static_cast<int64_t>(o.kind));
    add_int64_list(out, "rapid_shape", {o.m, o.n, o.k, o.batch});
    add_int64_list(out, "rapid_flags", {o.causal ? 1 : 0, o.fp8 ? 1 : 0, o.gqa_group});
    attr(out, "rapid_flops").set_double_val(o.flops);
    attr(out, "rapid_bytes").set_double_val(o.bytes);
  }
  if (n.comm_type) attr(out, "comm_type").set_int64_val(*n.comm_type);
  if (n.comm_size) attr(out, "comm_size").set_int64_val(*n.comm_size);
  if (n.comm_src) attr(out, "comm_src").set_int32_val(*n.comm_src);
  if (n.comm_dst) attr(out, "comm_dst").set_int32_val(*n.comm_dst);
  if (n.comm_tag) attr(out, "comm_tag").set_int32_val(*n.comm_tag);
  if (n.comm_priority) attr(out, "comm_priority").set_int32_val(*n.comm_priority);
  if (n.pg_name) attr(out, "pg_name").set_string_val(*n.pg_name);
  if (!n.involved_dim.empty()) {
    auto* l = attr(out, "involved_dim").mutable_bool_list();
    for (bool b : n.involved_dim) l->add_values(b);
  }
  if (n.rapid_bytes) attr(out, "rapid_bytes").set_double_val(*n.rapid_bytes);
  if (n.rapid_group) {
    const RapidGroup& g = *n.rapid_group;
    add_int64_list(out, "rapid_group", {g.size, g.per_node, g.nodes, g.stride});
  }
}

void encode_metadata(const TraceMetadata& m, pb::GlobalMetadata& out) {
  out.Clear();
  out.set_version(m.version);
  auto add = [&](const char* name) -> pb::AttributeProto& {
    pb::AttributeProto* a = out.add_attr();
    a->set_name(name);
    return *a;
  };
  add("producer").set_string_val(m.producer);
  add("rank").set_int64_val(m.rank);
  add("world_size").set_int64_val(m.world_size);
  add("gpus_per_node").set_int64_val(m.gpus_per_node);
  add("job").set_string_val(m.job);
  add("layout").set_string_val(m.layout);
  add("dtype").set_string_val(m.dtype);
}

void decode_node(const pb::Node& in, const std::string& file, TraceNode& out) {
  NodeDecoder(in, file).decode(out);
}

void decode_metadata(const pb::GlobalMetadata& in, TraceMetadata& out) {
  out = TraceMetadata{};
  out.version = in.version();
  for (const pb::AttributeProto& a : in.attr()) {
    if (a.name() == "producer" && a.has_string_val()) out.producer = a.string_val();
    if (a.name() == "rank" && a.has_int64_val()) out.rank = a.int64_val();
    if (a.name() == "world_size" && a.has_int64_val()) out.world_size = a.int64_val();
    if (a.name() == "gpus_per_node" && a.has_int64_val()) out.gpus_per_node = a.int64_val();
    if (a.name() == "job" && a.has_string_val()) out.job = a.string_val();
    if (a.name() == "layout" && a.has_string_val()) out.layout = a.string_val();
    if (a.name() == "dtype" && a.has_string_val()) out.dtype = a.string_val();
  }
}

}  // namespace rapid::trace
