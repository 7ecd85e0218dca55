// Our Chakra schema against the public facts (MLCommons Chakra et_def.proto; issue 14),
// independently of our own reader: a written file decoded with the protobuf library, the
// field numbers and attribute value kinds checked against the numbers of et_def.proto, and
// one small node's bytes written out by hand from the protobuf wire format
// (protobuf.dev "Encoding": tag = field_number << 3 | wire_type; varint 0, length 2).
#include <google/protobuf/io/zero_copy_stream_impl.h>
#include <google/protobuf/util/delimited_message_util.h>
#include <gtest/gtest.h>

#include <fstream>
#include <iterator>
#include <map>

#include "chakra_et.pb.h"
#include "rapid/trace/chakra_codec.hpp"
#include "rapid/trace/et_file.hpp"
#include "test_support.hpp"

namespace rapid {
namespace {

namespace pb = ChakraProtoMsg;

int number(const google::protobuf::Descriptor* d, const char* field) {
  const auto* f = d->FindFieldByName(field);
  return f ? f->number() : -1;
}

TEST(TraceSchema, FieldNumbersAreEtDefProtos) {
  const auto* node = pb::Node::descriptor();
  EXPECT_EQ(number(node, "id"), 1);
  EXPECT_EQ(number(node, "name"), 2);
  EXPECT_EQ(number(node, "type"), 3);
  EXPECT_EQ(number(node, "ctrl_deps"), 4);
  EXPECT_EQ(number(node, "data_deps"), 5);
  EXPECT_EQ(number(node, "start_time_micros"), 6);
  EXPECT_EQ(number(node, "duration_micros"), 7);
  EXPECT_EQ(number(node, "inputs"), 8);
  EXPECT_EQ(number(node, "outputs"), 9);
  EXPECT_EQ(number(node, "attr"), 10);
  const auto* meta = pb::GlobalMetadata::descriptor();
  EXPECT_EQ(number(meta, "version"), 1);
  EXPECT_EQ(number(meta, "attr"), 2);
  const auto* a = pb::AttributeProto::descriptor();
  const std::map<std::string, int> kinds = {
      {"name", 1},          {"doc_string", 2},     {"double_val", 3},    {"double_list", 4},
      {"float_val", 5},     {"float_list", 6},     {"int32_val", 7},     {"int32_list", 8},
      {"int64_val", 9},     {"int64_list", 10},    {"uint32_val", 11},   {"uint32_list", 12},
      {"uint64_val", 13},   {"uint64_list", 14},   {"sint32_val", 15},   {"sint32_list", 16},
      {"sint64_val", 17},   {"sint64_list", 18},   {"fixed32_val", 19},  {"fixed32_list", 20},
      {"fixed64_val", 21},  {"fixed64_list", 22},  {"sfixed32_val", 23}, {"sfixed32_list", 24},
      {"sfixed64_val", 25}, {"sfixed64_list", 26}, {"bool_val", 27},     {"bool_list", 28},
      {"string_val", 29},   {"string_list", 30},   {"bytes_val", 31},    {"bytes_list", 32}};
  for (const auto& [field, n] : kinds) EXPECT_EQ(number(a, field.c_str()), n) << field;
  EXPECT_EQ(number(pb::BoolList::descriptor(), "values"), 1);
  EXPECT_EQ(number(pb::Int64List::descriptor(), "values"), 1);
  const std::map<std::string, int> types = {
      {"INVALID_NODE", 0}, {"METADATA_NODE", 1},  {"MEM_LOAD_NODE", 2},  {"MEM_STORE_NODE", 3},
      {"COMP_NODE", 4},    {"COMM_SEND_NODE", 5}, {"COMM_RECV_NODE", 6}, {"COMM_COLL_NODE", 7}};
  for (const auto& [name, v] : types)
    EXPECT_EQ(pb::NodeType_descriptor()->FindValueByName(name)->number(), v) << name;
  const std::map<std::string, int> comms = {
      {"ALL_REDUCE", 0}, {"REDUCE", 1},         {"ALL_GATHER", 2},
      {"GATHER", 3},     {"SCATTER", 4},        {"BROADCAST", 5},
      {"ALL_TO_ALL", 6}, {"REDUCE_SCATTER", 7}, {"REDUCE_SCATTER_BLOCK", 8},
      {"BARRIER", 9}};
  for (const auto& [name, v] : comms)
    EXPECT_EQ(pb::CollectiveCommType_descriptor()->FindValueByName(name)->number(), v) << name;
}

// The attribute kinds ASTRA-sim's feeder reads (issue 14), as oneof field numbers.
const std::map<std::string, int> kFeederKinds = {
    {"is_cpu_op", 27},    {"num_ops", 9},  {"tensor_size", 13}, {"comm_type", 9},
    {"comm_size", 9},     {"comm_src", 7}, {"comm_dst", 7},     {"comm_tag", 7},
    {"comm_priority", 7}, {"pg_name", 29}, {"involved_dim", 28}};

TEST(TraceSchema, WrittenFileDecodesWithTheProtobufLibraryInTheFeedersKinds) {
  const std::string path = test::temp_path("schema.0.et");
  trace::TraceMetadata meta;
  meta.job = "j";
  {
    trace::EtWriter w(path, meta);
    trace::TraceNode c;  // a GEMM
    c.id = 0, c.name = "qkv_proj", c.type = trace::NodeType::Comp, c.duration_micros = 12;
    c.num_ops = 1000, c.tensor_size = 64;
    w.write(c);
    trace::TraceNode ar;  // an all-reduce of 4096 bytes on group 3
    ar.id = 1, ar.name = "tp_all_reduce", ar.type = trace::NodeType::CommColl;
    ar.data_deps = {0};
    ar.comm_type = 0, ar.comm_size = 4096, ar.pg_name = "3", ar.involved_dim = {true, false};
    w.write(ar);
    trace::TraceNode s;  // a send to rank 1, tag 5
    s.id = 2, s.name = "send_forward", s.type = trace::NodeType::CommSend, s.data_deps = {1};
    s.comm_src = 0, s.comm_dst = 1, s.comm_tag = 5, s.comm_size = 2048;
    w.write(s);
    w.close();
  }
  std::ifstream in(path, std::ios::binary);
  google::protobuf::io::IstreamInputStream stream(&in);
  bool eof = false;
  pb::GlobalMetadata m;
  ASSERT_TRUE(google::protobuf::util::ParseDelimitedFromZeroCopyStream(&m, &stream, &eof));
  EXPECT_FALSE(m.version().empty());
  std::vector<pb::Node> nodes;
  while (true) {
    pb::Node n;
    if (!google::protobuf::util::ParseDelimitedFromZeroCopyStream(&n, &stream, &eof)) break;
    nodes.push_back(n);
  }
  EXPECT_TRUE(eof);
  ASSERT_EQ(nodes.size(), 3u);
  EXPECT_EQ(nodes[0].type(), pb::COMP_NODE);
  EXPECT_EQ(nodes[1].type(), pb::COMM_COLL_NODE);
  EXPECT_EQ(nodes[2].type(), pb::COMM_SEND_NODE);
  ASSERT_EQ(nodes[1].data_deps_size(), 1);
  EXPECT_EQ(nodes[1].data_deps(0), 0u);
  std::map<std::string, const pb::AttributeProto*> seen;
  for (const pb::Node& n : nodes)
    for (const pb::AttributeProto& a : n.attr()) {
      const auto k = kFeederKinds.find(a.name());
      if (k != kFeederKinds.end()) {
        EXPECT_EQ(static_cast<int>(a.value_case()), k->second) << n.name() << " " << a.name();
        seen[a.name()] = &a;
      }
    }
  for (const char* want : {"is_cpu_op", "num_ops", "tensor_size", "comm_type", "comm_size",
                           "comm_src", "comm_dst", "comm_tag", "pg_name", "involved_dim"})
    EXPECT_TRUE(seen.count(want)) << want;
  EXPECT_EQ(seen["comm_size"]->int64_val(), 2048);  // the last one written: the send's
  EXPECT_EQ(seen["pg_name"]->string_val(), "3");
  ASSERT_EQ(seen["involved_dim"]->bool_list().values_size(), 2);
  EXPECT_TRUE(seen["involved_dim"]->bool_list().values(0));
  EXPECT_EQ(seen["comm_tag"]->int32_val(), 5);
}

uint64_t read_varint(const std::string& s, size_t& at) {
  uint64_t v = 0;
  for (int shift = 0;; shift += 7) {
    const auto b = static_cast<uint8_t>(s.at(at++));
    v |= static_cast<uint64_t>(b & 0x7f) << shift;
    if (!(b & 0x80)) return v;
  }
}

TEST(TraceSchema, OneSmallNodeByteForByte) {
  // Node {id 1, name "x", type COMP_NODE, data_deps [0], duration_micros 5,
  //       attr {name "is_cpu_op", bool_val false}, attr {name "num_ops", int64_val 300}}.
  // By the wire format, fields in number order:
  //   08 01                 id (field 1, varint) = 1
  //   12 01 78              name (field 2, length 1) "x"
  //   18 04                 type (field 3, varint) = 4 (COMP_NODE)
  //   2a 01 00              data_deps (field 5, packed: length 1) [0]
  //   38 05                 duration_micros (field 7, varint) = 5
  //   52 0e                 attr (field 10, length 14):
  //     0a 09 "is_cpu_op"     name (field 1, length 9)
  //     d8 01 00              bool_val: tag 27 << 3 | 0 = 216 = varint d8 01; false (a oneof
  //                           member is written even when it holds its default)
  //   52 0c                 attr (field 10, length 12):
  //     0a 07 "num_ops"       name
  //     48 ac 02              int64_val: tag 9 << 3 | 0 = 0x48; 300 = 0b10_0101100 -> ac 02
  // 42 bytes in all; in the file the node is prefixed by its length as a varint: 2a.
  std::string want = {0x08, 0x01, 0x12, 0x01, 0x78, 0x18, 0x04, 0x2a, 0x01, 0x00, 0x38, 0x05};
  want += std::string{0x52, 0x0e, 0x0a, 0x09} + "is_cpu_op" + std::string{char(0xd8), 0x01, 0x00};
  want += std::string{0x52, 0x0c, 0x0a, 0x07} + "num_ops" + std::string{0x48, char(0xac), 0x02};
  ASSERT_EQ(want.size(), 42u);

  const std::string path = test::temp_path("bytes.0.et");
  {
    trace::EtWriter w(path, trace::TraceMetadata{});
    trace::TraceNode n;
    n.id = 1, n.name = "x", n.type = trace::NodeType::Comp, n.data_deps = {0};
    n.duration_micros = 5, n.num_ops = 300;
    w.write(n);
    w.close();
  }
  std::ifstream in(path, std::ios::binary);
  const std::string file{std::istreambuf_iterator<char>(in), {}};
  size_t at = 0;
  const uint64_t meta_len = read_varint(file, at);  // skip the GlobalMetadata message
  at += meta_len;
  ASSERT_LT(at, file.size());
  EXPECT_EQ(read_varint(file, at), 42u);
  EXPECT_EQ(file.substr(at), want);
  // And our reader gives the node back.
  const trace::EtFile back = trace::read_et_file(path);
  ASSERT_EQ(back.nodes.size(), 1u);
  EXPECT_EQ(back.nodes[0].num_ops.value_or(-1), 300);
  EXPECT_EQ(back.nodes[0].data_deps, std::vector<uint64_t>{0});
}

}  // namespace
}  // namespace rapid
