// Broken Chakra traces (issue 14 "Done when"): a dangling dependency, a send without its
// recv, a size that overflows, a truncated file, a wrong attribute kind, a cycle and a
// deadlocked replay each raise InputError (exit 2 in `rapid`) naming the file and the node.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include <fmt/format.h>

#include "rapid/common/error.hpp"
#include "rapid/trace/et_file.hpp"
#include "rapid/trace/trace_check.hpp"
#include "rapid/trace/trace_replay.hpp"
#include "test_support.hpp"

namespace rapid {
namespace {

using trace::NodeType;
using trace::TraceNode;

TraceNode comp(uint64_t id, std::vector<uint64_t> deps = {}) {
  TraceNode n;
  n.id = id, n.name = "gemm", n.type = NodeType::Comp, n.data_deps = std::move(deps);
  n.duration_micros = 10;
  return n;
}

TraceNode p2p(uint64_t id, NodeType t, int32_t src, int32_t dst, int32_t tag, int64_t size) {
  TraceNode n;
  n.id = id, n.name = t == NodeType::CommSend ? "send" : "recv", n.type = t;
  n.comm_src = src, n.comm_dst = dst, n.comm_tag = tag, n.comm_size = size;
  return n;
}

void write(const std::string& dir, int64_t rank, const std::vector<TraceNode>& nodes) {
  trace::EtWriter w(trace::et_path(dir, "bad", rank), trace::TraceMetadata{});
  for (const TraceNode& n : nodes) w.write(n);
  w.close();
}

// The message of the InputError `f` throws ("" when it throws none).
template <class F>
std::string error_of(F f) {
  try {
    f();
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

TEST(TraceBad, DanglingDependencyNamesFileAndNode) {
  const std::string dir = test::fresh_dir("dangling");
  write(dir, 0, {comp(0), comp(1, {7})});
  const std::string msg = error_of([&] { trace::inspect_trace(dir); });
  EXPECT_NE(msg.find("bad.0.et"), std::string::npos) << msg;
  EXPECT_NE(msg.find("node 1"), std::string::npos) << msg;
  EXPECT_NE(msg.find("node 7"), std::string::npos) << msg;
}

TEST(TraceBad, CycleNamesANodeOnIt) {
  const std::string dir = test::fresh_dir("cycle");
  write(dir, 0, {comp(0), comp(1, {0, 2}), comp(2, {1})});
  const std::string msg = error_of([&] { trace::inspect_trace(dir); });
  EXPECT_NE(msg.find("cycle"), std::string::npos) << msg;
  EXPECT_NE(msg.find("node 1"), std::string::npos) << msg;
}

TEST(TraceBad, SendWithoutItsRecv) {
  // Rank 0 sends to rank 1 with tag 3; rank 1 receives from rank 0 with tag 4 only.
  const std::string dir = test::fresh_dir("unmatched");
  write(dir, 0, {comp(0), p2p(1, NodeType::CommSend, 0, 1, 3, 1024)});
  write(dir, 1, {p2p(0, NodeType::CommRecv, 0, 1, 4, 1024)});
  const std::string msg = error_of([&] { trace::inspect_trace(dir); });
  EXPECT_NE(msg.find("bad.0.et"), std::string::npos) << msg;
  EXPECT_NE(msg.find("node 1 (send)"), std::string::npos) << msg;
  EXPECT_NE(msg.find("without its recv"), std::string::npos) << msg;
  // The replay deadlocks on the recv and says so instead of a silent zero.
  std::vector<trace::RankTrace> ranks;
  for (int r = 0; r < 2; ++r)
    ranks.push_back(
        {r, trace::et_path(dir, "bad", r), trace::read_et_file(trace::et_path(dir, "bad", r))});
  const HardwareSpec hw = test::shipped_hardware("h100-sxm5-80gb");
  const NetworkSpec net = test::shipped_network("dgx-h100-superpod");
  const ComputeCost compute(hw, DType::BF16);
  const CollectiveCost collective(hw, net);
  trace::ReplayInputs in;
  in.compute = &compute, in.collective = &collective, in.network = &net;
  const std::string replay = error_of([&] { trace::replay_traces(ranks, nullptr, in); });
  EXPECT_NE(replay.find("bad.1.et"), std::string::npos) << replay;
  EXPECT_NE(replay.find("never starts"), std::string::npos) << replay;
}

TEST(TraceBad, SendAndRecvOfDifferentSizes) {
  const std::string dir = test::fresh_dir("sizes");
  write(dir, 0, {p2p(0, NodeType::CommSend, 0, 1, 3, 1024)});
  write(dir, 1, {p2p(0, NodeType::CommRecv, 0, 1, 3, 2048)});
  const std::string msg = error_of([&] { trace::inspect_trace(dir); });
  EXPECT_NE(msg.find("comm_size 1024"), std::string::npos) << msg;
}

TEST(TraceBad, SizeThatOverflowsADouble) {
  // 2^60 bytes cannot be held exactly by a double (53-bit mantissa): refused, not rounded.
  const std::string dir = test::fresh_dir("overflow");
  TraceNode n = p2p(4, NodeType::CommSend, 0, 1, 3, int64_t{1} << 60);
  write(dir, 0, {n});
  const std::string msg = error_of([&] { trace::inspect_trace(dir); });
  EXPECT_NE(msg.find("node 4"), std::string::npos) << msg;
  EXPECT_NE(msg.find("comm_size"), std::string::npos) << msg;
  EXPECT_NE(msg.find("2^53"), std::string::npos) << msg;
  // The same for tensor_size at the largest uint64.
  TraceNode c = comp(2);
  c.tensor_size = ~uint64_t{0};
  write(dir, 0, {c});
  EXPECT_NE(error_of([&] { trace::inspect_trace(dir); }).find("node 2"), std::string::npos);
}

TEST(TraceBad, TruncatedFileNamesTheLastWholeNode) {
  const std::string dir = test::fresh_dir("truncated");
  write(dir, 0, {comp(0), comp(1, {0}), comp(2, {1})});
  const std::string path = trace::et_path(dir, "bad", 0);
  std::filesystem::resize_file(path, std::filesystem::file_size(path) - 3);  // into node 2
  const std::string msg = error_of([&] { trace::read_et_file(path); });
  EXPECT_NE(msg.find("bad.0.et"), std::string::npos) << msg;
  EXPECT_NE(msg.find("after node 1"), std::string::npos) << msg;
  EXPECT_NE(msg.find("truncated"), std::string::npos) << msg;
}

TEST(TraceBad, CollectiveOfDifferentSizesOnItsGroup) {
  const std::string dir = test::fresh_dir("collective");
  auto coll = [](int64_t size) {
    TraceNode n;
    n.id = 0, n.name = "all_reduce", n.type = NodeType::CommColl;
    n.comm_type = 0, n.comm_size = size, n.pg_name = "1";
    return n;
  };
  write(dir, 0, {coll(4096)});
  write(dir, 1, {coll(8192)});
  trace::ProcessGroups g;
  g.insert(1, {0, 1}, "test");
  g.write_json((std::filesystem::path(dir) / "bad.comm_groups.json").string());
  const std::string msg = error_of([&] { trace::inspect_trace(dir); });
  EXPECT_NE(msg.find("node 0 (all_reduce)"), std::string::npos) << msg;
  EXPECT_NE(msg.find("group 1"), std::string::npos) << msg;
}

// Bytes after the last message (issue 34): ten 0xff bytes are no varint (a length prefix
// above 2^64); a length prefix of 2^62 is past the end of the file. Each names the file,
// the message position and its byte offset.
TEST(TraceBad, TrailingBytesAndImpossibleLengthsAreNamed) {
  const std::string dir = test::fresh_dir("trailing");
  write(dir, 0, {comp(0), comp(1, {0})});
  const std::string path = trace::et_path(dir, "bad", 0);
  const auto size = std::filesystem::file_size(path);
  {
    std::ofstream out(path, std::ios::binary | std::ios::app);
    out << std::string(10, '\xff');
  }
  std::string msg = error_of([&] { trace::read_et_file(path); });
  EXPECT_NE(msg.find("bad.0.et"), std::string::npos) << msg;
  EXPECT_NE(msg.find(fmt::format("node 2 (after node 1) at byte {}", size)), std::string::npos)
      << msg;
  EXPECT_NE(msg.find("above 2^64"), std::string::npos) << msg;
  // 2^62 as a varint: nine bytes, 0x80 x 8 then 0x40 (62 = 8 x 7 + 6).
  std::filesystem::resize_file(path, size);
  {
    std::ofstream out(path, std::ios::binary | std::ios::app);
    out << std::string(8, '\x80') << '\x40';
  }
  msg = error_of([&] { trace::inspect_trace(dir); });
  EXPECT_NE(msg.find("a length prefix of 4611686018427387904 bytes with 0 bytes left"),
            std::string::npos)
      << msg;
}

// A duration past the replay's clock (2^62 ps = 4.6e12 us per rank) is named as such, in
// inspect and before a replay.
TEST(TraceBad, DurationBeyondTheReplaysClockIsNamed) {
  const std::string dir = test::fresh_dir("duration");
  TraceNode n = comp(0);
  n.duration_micros = 10000000000000ull;  // 1e13 us
  write(dir, 0, {n});
  const std::string msg = error_of([&] { trace::inspect_trace(dir); });
  EXPECT_NE(msg.find("node 0 (gemm)"), std::string::npos) << msg;
  EXPECT_NE(msg.find("duration_micros 10000000000000"), std::string::npos) << msg;
  EXPECT_NE(msg.find("4.612e+12 us per rank"), std::string::npos) << msg;
}

// The checks a replay runs first are inspect's: a collective whose size differs between
// ranks gets the same message from both.
TEST(TraceBad, ReplayRefusesWhatInspectRefusesWithTheSameMessage) {
  const std::string dir = test::fresh_dir("same-message");
  auto coll = [](int64_t size) {
    TraceNode n;
    n.id = 0, n.name = "all_reduce", n.type = NodeType::CommColl;
    n.comm_type = 0, n.comm_size = size;  // no pg_name: every rank
    return n;
  };
  write(dir, 0, {coll(4096)});
  write(dir, 1, {coll(8192)});
  const std::string inspect = error_of([&] { trace::inspect_trace(dir); });
  const trace::TraceSet set = trace::scan_trace_dir(dir);
  std::vector<trace::RankTrace> ranks;
  for (const auto& [rank, file] : set.files) ranks.push_back(trace::read_rank_trace(rank, file));
  const std::string replay = error_of([&] { trace::check_traces(set, ranks); });
  EXPECT_NE(inspect.find("comm_size 4096"), std::string::npos) << inspect;
  EXPECT_EQ(inspect, replay);
}

}  // namespace
}  // namespace rapid
