// Our Chakra traces against the upstream conventions (issue 34, docs/chakra.md "Collective
// sizes", "COMP nodes", "Reading"), nothing converted on the way:
//  - comm_size as ASTRA-sim reads it: an ALL_GATHER's is each rank's input (astra-sim
//    system/collective/Ring.cc: final_data_size = data_size x nodes_in_ring; Chakra's PyTorch
//    converter records the kernel's input tensors); REDUCE_SCATTER, ALL_REDUCE and ALL_TO_ALL
//    carry the whole buffer (Ring.cc: final_data_size = data_size / nodes_in_ring for
//    reduce-scatter);
//  - every COMP node carries num_ops >= 1 and tensor_size >= 1 (ASTRA-sim's roofline time is
//    num_ops / min(peak, bw x num_ops / tensor_size): 0/0 otherwise);
//  - traces shaped like ASTRA-sim's shipped examples read, inspect and replay: collectives
//    without pg_name (all ranks), sizes in other integer kinds, a send without comm_src and
//    a recv without comm_dst (feeder_v3 fills in the file's rank).
#include <google/protobuf/util/delimited_message_util.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "chakra_et.pb.h"
#include "rapid/analytical/analytical_evaluator.hpp"
#include "rapid/des/event_queue.hpp"
#include "rapid/trace/trace_check.hpp"
#include "rapid/trace/trace_replay.hpp"
#include "rapid/trace/trace_writer.hpp"
#include "test_support.hpp"

namespace rapid {
namespace {

namespace pb = ChakraProtoMsg;
using trace::CommType;
using trace::NodeType;

TEST(TraceConvention, CollectiveSizesAndComputeCountsAreAstraSims) {
  // Llama 3 8B (hidden 4096), one 8192-token sequence per micro-batch, dp2 x tp4 with
  // sequence parallelism and ZeRO-1 on one DGX H100.
  const SweepSpec spec =
      test::spec_with("llama3-8b", "h100-sxm5-80gb", "dgx-h100-superpod", 8, 8192);
  ParallelConfig par;
  par.dp = 2, par.tp = 4, par.pp = 1, par.sp = true, par.zero_stage = 1;
  par.recompute = Recompute::Selective;
  const AnalyticalEvaluator eval(spec.model, spec.training, spec.hardware[0], spec.network);
  Workload w;
  build_workload(spec.model, spec.training, spec.network, par, w);
  const trace::TraceInputs in{&w,
                              &spec.model,
                              &spec.training,
                              &eval.compute_cost(),
                              &eval.collective_cost(),
                              eval.step_efficiency(),
                              spec.network.gpus_per_node};
  const std::string dir = test::fresh_dir("convention");
  trace::write_trace(in, trace::TraceMetadata{}, dir, "c", 0, 7);
  const trace::RankTrace r = trace::read_rank_trace(0, trace::et_path(dir, "c", 0));

  // Sequence parallelism: the TP group all-gathers the layer input, s x b x h x 2 bytes =
  // 8192 x 1 x 4096 x 2 = 67,108,864 gathered, 16,777,216 per rank (the comm_size), and
  // reduce-scatters the same 67,108,864-byte buffer (the comm_size: the whole buffer).
  int tp_gathers = 0, tp_scatters = 0, dp_colls = 0;
  for (const trace::TraceNode& n : r.et.nodes) {
    if (n.type == NodeType::Comp) {
      ASSERT_TRUE(n.num_ops && n.tensor_size) << n.name;
      EXPECT_GE(*n.num_ops, 1) << n.name;
      EXPECT_GE(*n.tensor_size, 1u) << n.name;
      continue;
    }
    if (n.type != NodeType::CommColl) continue;
    ASSERT_TRUE(n.comm_type && n.comm_size && n.rapid_bytes && n.rapid_group) << n.name;
    const auto type = static_cast<CommType>(*n.comm_type);
    const int64_t size = n.rapid_group->size;
    // The general rule on every collective: an all-gather's comm_size times the group is
    // our (nccl-tests) size, the others' is that size (each within the int64 rounding).
    const double ours = type == CommType::AllGather
                            ? static_cast<double>(*n.comm_size) * static_cast<double>(size)
                            : static_cast<double>(*n.comm_size);
    EXPECT_NEAR(ours, *n.rapid_bytes, 0.5 * static_cast<double>(size)) << n.name;
    if (size == 4 && type == CommType::AllGather) {
      ++tp_gathers;
      EXPECT_EQ(*n.comm_size, 16777216) << n.name;
    } else if (size == 4 && type == CommType::ReduceScatter) {
      ++tp_scatters;
      EXPECT_EQ(*n.comm_size, 67108864) << n.name;
    } else if (size == 2) {
      ++dp_colls;
    }
  }
  // 32 layers, each gathering before attention and before the MLP (and scattering after
  // each), on every micro-batch's forward and backward: at least 2 x 32 of each.
  EXPECT_GE(tp_gathers, 64);
  EXPECT_GE(tp_scatters, 64);
  EXPECT_GT(dp_colls, 0);  // ZeRO-1: the DP group's gradient reduce-scatter, parameter gather
}

// A node as ASTRA-sim's examples and feeder_v3 take them, built with the protobuf library.
struct RawNode {
  pb::Node n;
  RawNode(uint64_t id, pb::NodeType type) {
    n.set_id(id);
    n.set_name("n" + std::to_string(id));
    n.set_type(type);
    auto* a = n.add_attr();
    a->set_name("is_cpu_op");
    a->set_bool_val(false);
  }
  pb::AttributeProto& attr(const char* name) {
    auto* a = n.add_attr();
    a->set_name(name);
    return *a;
  }
};

void write_raw(const std::string& path, const std::vector<RawNode>& nodes) {
  std::ofstream out(path, std::ios::binary);
  pb::GlobalMetadata meta;
  meta.set_version("0.0.4");
  ASSERT_TRUE(google::protobuf::util::SerializeDelimitedToOstream(meta, &out));
  for (const RawNode& r : nodes)
    ASSERT_TRUE(google::protobuf::util::SerializeDelimitedToOstream(r.n, &out));
}

trace::ReplayResult replay_dir(const std::string& dir, const SweepSpec& spec) {
  const trace::TraceSet set = trace::scan_trace_dir(dir);
  std::vector<trace::RankTrace> ranks;
  for (const auto& [rank, file] : set.files) ranks.push_back(trace::read_rank_trace(rank, file));
  trace::check_traces(set, ranks);
  const AnalyticalEvaluator eval(spec.model, spec.training, spec.hardware[0], spec.network);
  trace::ReplayInputs ri;
  ri.compute = &eval.compute_cost();
  ri.collective = &eval.collective_cost();
  ri.step_efficiency = eval.step_efficiency();
  ri.network = &spec.network;
  return trace::replay_traces(ranks, set.groups ? &*set.groups : nullptr, ri);
}

TEST(TraceConvention, AstraSimMicrobenchmarkShapesReadAndReplay) {
  // ASTRA-sim's collective microbenchmarks: one COMM_COLL_NODE per rank file, its id the
  // rank, is_cpu_op false, comm_type and comm_size int64, no pg_name (every rank), no
  // involved_dim, no comm-group file. An all-gather of 1 MiB per rank on 4 ranks replays as
  // our all-gather of 4 MiB gathered (rapid_bytes), to the picosecond.
  const SweepSpec spec =
      test::spec_with("llama3-8b", "h100-sxm5-80gb", "dgx-h100-superpod", 8, 8192);
  const std::string theirs = test::fresh_dir("astra-micro"),
                    ours = test::fresh_dir("astra-micro-ours");
  for (int64_t rank = 0; rank < 4; ++rank) {
    RawNode a(static_cast<uint64_t>(rank), pb::COMM_COLL_NODE);
    a.attr("comm_type").set_int64_val(static_cast<int64_t>(CommType::AllGather));
    a.attr("comm_size").set_int64_val(1 << 20);
    write_raw(trace::et_path(theirs, "all_gather", rank), {a});
    RawNode b(static_cast<uint64_t>(rank), pb::COMM_COLL_NODE);
    b.attr("comm_type").set_int64_val(static_cast<int64_t>(CommType::AllGather));
    b.attr("comm_size").set_uint64_val(1 << 20);  // an integer kind Chakra's feeder takes
    b.attr("rapid_bytes").set_double_val(4.0 * (1 << 20));
    write_raw(trace::et_path(ours, "all_gather", rank), {b});
  }
  const trace::InspectReport report = trace::inspect_trace(theirs);
  EXPECT_EQ(report.ranks.size(), 4u);
  EXPECT_EQ(report.collectives_checked, 4u);
  const trace::ReplayResult a = replay_dir(theirs, spec), b = replay_dir(ours, spec);
  EXPECT_GT(a.step_time_s, 0.0);
  EXPECT_EQ(des::to_ps(a.step_time_s), des::to_ps(b.step_time_s));
}

TEST(TraceConvention, SendWithoutSourceAndRecvWithoutDestinationAreTheFilesRank) {
  // feeder_v3 (Workload::issue_comm): a send's comm_src defaults to the issuing rank, a
  // recv's comm_dst to the receiving rank. Rank 0 sends 64 MiB to rank 1 (tag 7, the size
  // in uint64), written without comm_src; rank 1's recv without comm_dst.
  const SweepSpec spec =
      test::spec_with("llama3-8b", "h100-sxm5-80gb", "dgx-h100-superpod", 8, 8192);
  const std::string dir = test::fresh_dir("astra-p2p");
  RawNode send(0, pb::COMM_SEND_NODE);
  send.attr("comm_dst").set_int32_val(1);
  send.attr("comm_tag").set_int32_val(7);
  send.attr("comm_size").set_uint64_val(64ull << 20);
  RawNode recv(0, pb::COMM_RECV_NODE);
  recv.attr("comm_src").set_int32_val(0);
  recv.attr("comm_tag").set_int32_val(7);
  recv.attr("comm_size").set_int64_val(64ll << 20);
  write_raw(trace::et_path(dir, "p2p", 0), {send});
  write_raw(trace::et_path(dir, "p2p", 1), {recv});
  const trace::InspectReport report = trace::inspect_trace(dir);
  EXPECT_EQ(report.p2p_checked, 1u);
  const trace::RankTrace r0 = trace::read_rank_trace(0, trace::et_path(dir, "p2p", 0));
  EXPECT_EQ(r0.et.nodes[0].comm_src.value_or(-1), 0);
  // 64 MiB over one NVLink path of the DGX H100 (450 GB/s x nvlink efficiency 0.8 = 360
  // GB/s): at least 67,108,864 / 360e9 = 186 us.
  const trace::ReplayResult res = replay_dir(dir, spec);
  EXPECT_GE(res.step_time_s, 67108864.0 / 360e9);
  EXPECT_LT(res.step_time_s, 2 * 67108864.0 / 360e9);
}

}  // namespace
}  // namespace rapid
