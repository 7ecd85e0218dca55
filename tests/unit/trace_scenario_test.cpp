// Replays on a job's system and scenario (trace/job_replay.hpp, docs/chakra.md "Replay on
// a job"): a straggler and link faults change a replayed step by what a hand derivation
// gives; our own trace of a layout, replayed on its job, gives predict's DES step time with
// the stack's hardware adjustments and with a straggler scenario.
#include <gtest/gtest.h>

#include <cstdio>
#include <string>

#include "rapid/analytical/analytical_evaluator.hpp"
#include "rapid/eval/point_evaluator.hpp"
#include "rapid/sweep/enumerator.hpp"
#include "rapid/trace/job_replay.hpp"
#include "rapid/trace/trace_writer.hpp"
#include "test_support.hpp"

namespace rapid {
namespace {

using trace::NodeType;
using trace::TraceNode;

// Llama 3 8B on one DGX H100 node, TP4 x PP2 (dp 1), 8 micro-batches of one 8192-token
// sequence, ZeRO 0, on the default stack (megatron-core-0.8: no TP overlap, no DP stream) with its
// host overhead off (a trace does not carry the host), `extra` appended; `gpus` 16 for the
// two-node cases.
SweepSpec job(const std::string& name, const std::string& extra, int gpus = 8) {
  const std::string text =
      "model: " + test::source_path("configs/models/llama3-8b.yaml") +
      "\nhardware: " + test::source_path("configs/hardware/h100-sxm5-80gb.yaml") +
      "\nnetwork: " + test::source_path("configs/networks/dgx-h100-superpod.yaml") +
      "\ngpus: " + std::to_string(gpus) +
      "\n"
      "training: {global_batch_size: 8, seq_length: 8192, host_overhead_per_op: 0us,\n"
      "           compute_efficiency: 0.9}\n"
      "search: {tp: [4], pp: [2], mbs: [1], recompute: [selective], sp: [true],\n"
      "         zero_stage: [0]}\n" +
      extra;
  return load_sweep_spec(test::write_temp(name + ".yaml", text));
}

TraceNode comp(uint64_t id, uint64_t micros, std::vector<uint64_t> deps) {
  TraceNode n;
  n.id = id, n.name = "kernel", n.type = NodeType::Comp, n.duration_micros = micros;
  n.data_deps = std::move(deps);
  return n;
}

// Ranks 0 and 1: a 100 us kernel, an all-reduce of 1 MB over both ranks, a 100 us kernel.
std::vector<trace::RankTrace> compute_allreduce_compute() {
  std::vector<trace::RankTrace> ranks;
  for (int64_t r = 0; r < 2; ++r) {
    TraceNode ar;
    ar.id = 1, ar.name = "all_reduce", ar.type = NodeType::CommColl, ar.data_deps = {0};
    ar.comm_type = 0, ar.comm_size = 1 << 20, ar.pg_name = "0";
    ranks.push_back({r, "hand." + std::to_string(r) + ".et",
                     trace::EtFile{{}, {comp(0, 100, {}), ar, comp(2, 100, {1})}}});
  }
  return ranks;
}

// Rank 0 (node 0) sends `bytes` to rank 8 (node 1, the same rail leaf).
std::vector<trace::RankTrace> cross_node_send(int64_t bytes) {
  TraceNode s, r;
  s.id = 0, s.name = "send", s.type = NodeType::CommSend;
  s.comm_src = 0, s.comm_dst = 8, s.comm_tag = 1, s.comm_size = bytes;
  r = s;
  r.name = "recv", r.type = NodeType::CommRecv;
  return {{0, "hand.0.et", trace::EtFile{{}, {s}}}, {8, "hand.8.et", trace::EtFile{{}, {r}}}};
}

trace::ReplayResult replay(const SweepSpec& spec, const std::vector<trace::RankTrace>& ranks,
                           int64_t world) {
  const trace::JobReplay on(spec, 0, 0, world);
  return trace::replay_traces(ranks, nullptr, on.inputs());
}

TEST(TraceScenario, HalfClockAndHbmStragglerDoublesItsKernels) {
  // Recorded durations are compute-bound (trace_replay.hpp): clock 0.5 makes each kernel on
  // rank 1 take 1/0.5 = 2x (Derate::slowdown(1, 0) = 1 / clock). Healthy, both ranks reach
  // the all-reduce at 100 us and the step is 100 + T_ar + 100 us. With rank 1 slowed its
  // first kernel ends at 200 us, rank 0 waits there, the all-reduce (on NVLink, unchanged)
  // ends at 200 + T_ar, and rank 1's second kernel ends 200 us later: the step grows by
  // exactly 2 x 100 us, and rank 1 ends 100 us after rank 0.
  const SweepSpec ideal = job("straggler-ideal", "");
  const SweepSpec slow = job(
      "straggler-slow", "nonideal: {stragglers: [{gpu: 1, clock_factor: 0.5, hbm_factor: 0.5}]}\n");
  const auto ranks = compute_allreduce_compute();
  const trace::ReplayResult a = replay(ideal, ranks, 2), b = replay(slow, ranks, 2);
  EXPECT_EQ(des::to_ps(b.step_time_s) - des::to_ps(a.step_time_s), 200'000'000);
  EXPECT_EQ(b.critical_rank, 1);
  EXPECT_EQ(des::to_ps(b.rank_end_s[1]) - des::to_ps(b.rank_end_s[0]), 100'000'000);
  EXPECT_EQ(trace::JobReplay(slow, 0, 0, 2).derated_ranks(), 1);
}

TEST(TraceScenario, HalfHealthNicAddsOneTransferTime) {
  // 0.9 GB from GPU 0 to GPU 8: NIC up of GPU 0 -> rail leaf 0 -> NIC down of GPU 8, each
  // link 400 Gbps x network_efficiency 0.9 = 45 GB/s (configs/networks/dgx-h100-superpod.yaml;
  // Fabric: nic_Bps = leaf_bandwidth x efficiency). Healthy the flow drains in 0.9 GB /
  // 45 GB/s = 20 ms; GPU 0's NIC at health 0.5 (22.5 GB/s) takes 40 ms; the latencies are
  // the same: the step grows by exactly 20 ms (1 ps of rounding of each drain time).
  const SweepSpec ideal = job("nic-ideal", "", 16);
  const SweepSpec half =
      job("nic-half", "nonideal: {link_faults: [{link: nic, gpu: 0, health: 0.5}]}\n", 16);
  const auto ranks = cross_node_send(900'000'000);
  const trace::ReplayResult a = replay(ideal, ranks, 9), b = replay(half, ranks, 9);
  EXPECT_NEAR(static_cast<double>(des::to_ps(b.step_time_s) - des::to_ps(a.step_time_s)), 20e9,
              2.0);
  // A degraded NIC of a straggler (nic_health) is the same fault.
  const SweepSpec nic =
      job("nic-straggler", "nonideal: {stragglers: [{gpu: 0, nic_health: 0.5}]}\n", 16);
  EXPECT_EQ(des::to_ps(replay(nic, ranks, 9).step_time_s), des::to_ps(b.step_time_s));
}

TEST(TraceScenario, FailedNicLeavesTheSendNoRoute) {
  const SweepSpec failed =
      job("nic-failed", "nonideal: {link_faults: [{link: nic, gpu: 0, failed: true}]}\n", 16);
  const trace::ReplayResult r = replay(failed, cross_node_send(1 << 20), 9);
  EXPECT_EQ(r.step_time_s, 0.0);
  EXPECT_NE(r.no_route.find("gpu 0 -> gpu 8"), std::string::npos) << r.no_route;
}

// Writes every rank of the job's only point the way `rapid trace` does (its stack's costs)
// and reads them back.
std::vector<trace::RankTrace> own_trace(const SweepSpec& spec, const Point& p,
                                        const std::string& name) {
  const AnalyticalEvaluator eval(spec.model, spec.training, spec.hardware[0], spec.network);
  Workload w;
  build_workload(spec.model, spec.training, spec.network, p.par, w);
  const trace::TraceInputs in{&w,
                              &spec.model,
                              &spec.training,
                              &eval.compute_cost(),
                              &eval.collective_cost(),
                              eval.step_efficiency(),
                              spec.network.gpus_per_node};
  const std::string dir = test::temp_path(name);
  trace::write_trace(in, trace::TraceMetadata{}, dir, "own", 0, p.par.num_gpus() - 1);
  const trace::TraceSet set = trace::scan_trace_dir(dir);
  std::vector<trace::RankTrace> ranks;
  for (const auto& [rank, file] : set.files) ranks.push_back(trace::read_rank_trace(rank, file));
  return ranks;
}

// predict --fidelity des --full's step (every micro-batch simulated: the steady-state
// extrapolation differs from it by up to 1.1e-9 relative, docs/des.md sec 11) and the
// replay of the point's own trace on its job, in picoseconds.
struct DesAndReplay {
  EvalResult des;
  DesReport report;
  trace::JobReplayResult replay;
  int64_t des_ps() const { return des::to_ps(des.step_time_s); }
  int64_t replay_ps() const { return des::to_ps(replay.replay.step_time_s); }
};
DesAndReplay run_both(const SweepSpec& spec, const std::string& name) {
  const Point p = Enumerator(spec).decode(0);
  DesOptions full;
  full.steady_state = false;
  const PointEvaluator eval(spec, Fidelity::Des, full);
  Workload w;
  DesAndReplay out;
  eval.evaluate(p, w, out.des);
  EXPECT_EQ(out.des.status, Status::Ok);
  EvalResult again = out.des;
  eval.simulate(p, w, again, {&out.report, nullptr, nullptr, false});
  const auto ranks = own_trace(spec, p, name);
  const trace::JobReplay on(spec, 0, 0, p.par.num_gpus());
  const trace::TraceSet set = trace::scan_trace_dir(test::temp_path(name));
  out.replay = on.run(ranks, &*set.groups);
  return out;
}
std::pair<int64_t, int64_t> des_and_replay(const SweepSpec& spec, const std::string& name) {
  const DesAndReplay r = run_both(spec, name);
  return {r.des_ps(), r.replay_ps()};
}

TEST(TraceScenario, OwnTraceOnItsJobGivesPredictsDesStep) {
  // The stack's adjustments: H100's end-to-end step factor on megatron-core-0.8 is 0.794
  // (configs/frameworks/megatron-core-0.8.yaml end_to_end), x the job's compute_efficiency
  // 0.9 = 0.7146. Both sides then time every op with the same costs on the same flow
  // network (the round trip, trace_roundtrip_test.cpp): equal to the picosecond.
  const SweepSpec spec = job("own-ideal", "");
  EXPECT_DOUBLE_EQ(trace::JobReplay(spec, 0, 0, 8).inputs().step_efficiency, 0.794 * 0.9);
  const auto [des_ps, replay_ps] = des_and_replay(spec, "own-ideal");
  EXPECT_GT(des_ps, 0);
  EXPECT_EQ(replay_ps, des_ps);
}

TEST(TraceScenario, OwnTraceWithAStragglerGivesPredictsDesStep) {
  // GPU 0 at half clock and HBM: the DES runs stage 0's instance (GPUs 0-3, in lock step)
  // at that derate under the TDP cap; the replay slows rank 0 alone by the same factors,
  // and ranks 1-3 wait for it at every TP collective and pipeline transfer, so stage 0
  // runs at rank 0's pace in both. Nothing throttles (no thermal model): one simulation.
  const SweepSpec spec =
      job("own-slow", "nonideal: {stragglers: [{gpu: 0, clock_factor: 0.5, hbm_factor: 0.5}]}\n");
  const auto [des_ps, replay_ps] = des_and_replay(spec, "own-slow");
  const auto [ideal_ps, unused] = des_and_replay(job("own-ideal2", ""), "own-ideal2");
  (void)unused;
  EXPECT_GT(des_ps, ideal_ps);
  EXPECT_EQ(replay_ps, des_ps);
}

TEST(TraceScenario, HotKernelThrottlesToFullDepth) {
  // One rank, one 100 us kernel of recorded duration: compute-bound, drawing TDP = 700 W
  // (replay_compute.hpp; configs/hardware/h100-sxm5-80gb.yaml tdp 700W, idle 130W), all of
  // it in the die (no HBM bytes). The scenario's cooling: alpha 0.015 C/J and beta 0.15 /s
  // set the sink, 1 / 0.015 = 66.67 J/C behind 1 / (0.15 x 66.67) = 0.1 C/W, at 67 C; the
  // die sits behind the file's 0.018 C/W, in parallel with 1.2 + 0.1 C/W through the HBM:
  // 0.018 || 1.3 = 0.017753 C/W. At 700 W: 67 + 70 + 12.4 = 149 C, past the die's full
  // depth at 89 C (GPU Slowdown Temp): clock 0.5. There the kernel draws idle + compute_W x
  // 0.5^2 / (1 / 0.5) = 130 + 570 x 0.125 = 201.25 W (WorkPower::at), holding the die at
  // 67 + 20.125 + 0.017753 x 201.25 = 90.70 C: above 89 C (the last level is released below
  // 88.875 C, thermal_replay.cpp) and below the 92 C shutdown, so the GPU stays at full
  // depth and its kernel takes 100 us / 0.5 = 200 us. The step doubles: +100%, throttled
  // all the time. The HBM, 67 + 20.1 + a share of the die's heat, stays under 95 C: its
  // bandwidth is kept.
  const SweepSpec hot = job("hot-kernel",
                            "nonideal: {thermal: true, cooling: {beta_per_s: 0.15, ambient_C: 67, "
                            "alpha_C_per_J: 0.015}}\n");
  const std::vector<trace::RankTrace> ranks = {
      {0, "hot.0.et", trace::EtFile{{}, {comp(0, 100, {})}}}};
  const trace::JobReplay on(hot, 0, 0, 1);
  EXPECT_TRUE(on.left_out().size() == 1 && on.left_out()[0] == "energy and power columns");
  const trace::JobReplayResult r = on.run(ranks, nullptr);
  ASSERT_TRUE(r.thermal.has_value());
  EXPECT_NEAR(static_cast<double>(des::to_ps(r.replay.step_time_s)), 200e6, 1.0);
  EXPECT_NEAR(r.row.thermal_slowdown, 1.0, 1e-9);
  EXPECT_DOUBLE_EQ(r.row.throttle_fraction, 1.0);
  EXPECT_NEAR(r.row.gpu_temperature_C, 67 + 20.125 + 0.018 * 1.3 / 1.318 * 201.25, 0.01);
  EXPECT_LT(r.row.hbm_temperature_C, 95.0);
  EXPECT_EQ(r.row.status, Status::Ok);  // not overheated
  EXPECT_NEAR(r.thermal->instances[0].effective.clock, 0.5, 1e-12);
  EXPECT_NEAR(r.thermal->instances[0].effective.hbm, 1.0, 1e-12);
}

TEST(TraceScenario, OwnTraceUnderThermalGivesPredictsDesStep) {
  // Ambient 75 C (the H100 file's air heatsink, 0.045 C/W, behind the die's 0.018 C/W:
  // docs/nonideal.md sec 2): the die's steady temperature, about 75 + 0.063 C/W x P,
  // passes its 87 C onset above P = 190 W, under the step's mean power: both sides
  // throttle.
  // The DES replays each stage instance's power trace, the replay each rank's; the same
  // ops at the same times, but the instance's spans fold its TP collectives where the
  // replay has gaps, so the profiles' 5 ms merge windows (merge_s) close at other points
  // and the steady states differ in the last digits. Both iterate to the fixed point,
  // which each side knows only to the loop's stop rule: successive steps within 1e-3
  // (thermal_feedback.hpp). Each of the two steps is within that of its own fixed point,
  // so they agree to twice that, 2e-3.
  const SweepSpec spec = job("own-thermal", "nonideal: {thermal: true, ambient_C: 75}\n");
  const DesAndReplay r = run_both(spec, "own-thermal");
  ASSERT_TRUE(r.replay.thermal.has_value());
  EXPECT_GT(r.des.thermal_slowdown, 0.0);
  EXPECT_GT(r.replay.row.thermal_slowdown, 0.0);
  EXPECT_NEAR(static_cast<double>(r.replay_ps()), static_cast<double>(r.des_ps()),
              2e-3 * static_cast<double>(r.des_ps()));
  EXPECT_NEAR(r.replay.row.gpu_temperature_C, r.des.gpu_temperature_C, 0.1);
  std::printf(
      "thermal at 75 C: replay %.6f s (%+.2f%%, die %.2f C), DES %.6f s (%+.2f%%, die "
      "%.2f C)\n",
      r.replay.replay.step_time_s, 100 * r.replay.row.thermal_slowdown,
      r.replay.row.gpu_temperature_C, r.des.step_time_s, 100 * r.des.thermal_slowdown,
      r.des.gpu_temperature_C);
}

// Rank 0 sends 0.9 GB to rank 8 and rank 1 0.45 GB to rank 9, at once, on their rails.
std::vector<trace::RankTrace> two_rail_sends() {
  std::vector<trace::RankTrace> ranks;
  for (int64_t src : {0, 1}) {
    TraceNode s;
    s.id = 0, s.name = "send", s.type = NodeType::CommSend;
    s.comm_src = src, s.comm_dst = src + 8, s.comm_tag = 1;
    s.comm_size = src == 0 ? 900'000'000 : 450'000'000;
    TraceNode r = s;
    r.name = "recv", r.type = NodeType::CommRecv;
    ranks.push_back({src, "rail." + std::to_string(src) + ".et", trace::EtFile{{}, {s}}});
    ranks.push_back({src + 8, "rail." + std::to_string(src + 8) + ".et", trace::EtFile{{}, {r}}});
  }
  return ranks;
}

TEST(TraceScenario, MostLoadedFaultHalvesTheBusiestRail) {
  // Fault-free, rail 0's links carry 0.9 GB (20 ms at 45 GB/s, HalfHealthNicAddsOneTransferTime)
  // and rail 1's 0.45 GB (10 ms): the scale-out links of most utilization are rail 0's,
  // NIC up of GPU 0 -> leaf 0 and leaf 0 -> NIC down of GPU 8, alike; the tie goes to the
  // up link (replay_network.hpp: the lowest kind, NicToLeaf). At health 0.5 it drains
  // 0.9 GB in 40 ms; rail 1 is untouched (10 ms): the step grows by exactly 20 ms (1 ps of
  // rounding per drain time), on rank 0 (the send) and rank 8 (its recv) alike.
  const SweepSpec ideal = job("ml-ideal", "", 16);
  const SweepSpec ml =
      job("ml-half", "nonideal: {link_faults: [{link: most_loaded, health: 0.5}]}\n", 16);
  const auto ranks = two_rail_sends();
  const trace::JobReplay a(ideal, 0, 0, 10), b(ml, 0, 0, 10);
  EXPECT_TRUE(b.left_out().empty());
  const trace::JobReplayResult ra = a.run(ranks, nullptr), rb = b.run(ranks, nullptr);
  EXPECT_EQ(ra.most_loaded_link, "");
  EXPECT_EQ(rb.most_loaded_link, "node 0 nic 0 -> leaf 0");
  EXPECT_EQ(des::to_ps(rb.replay.rank_end_s[0]), des::to_ps(rb.replay.step_time_s));
  EXPECT_NEAR(
      static_cast<double>(des::to_ps(rb.replay.step_time_s) - des::to_ps(ra.replay.step_time_s)),
      20e9, 2.0);
}

TEST(TraceScenario, OwnTraceWithMostLoadedFaultGivesPredictsDesStep) {
  // One node: no scale-out link, so most_loaded is the busiest link of any kind. Stage 1's
  // eight NVLink ports (GPUs 4-7, both ways) carry the same bytes, the most; the DES takes
  // the one its setup created first, GPU 4's up port, and so does the replay's tie rule
  // (the lowest kind, GpuToSwitch, then GPU). At health 0.5 it slows what crosses it; both
  // then run the same step: equal to the picosecond, and slower than without the fault.
  const SweepSpec spec =
      job("own-ml", "nonideal: {link_faults: [{link: most_loaded, health: 0.5}]}\n");
  const DesAndReplay r = run_both(spec, "own-ml");
  EXPECT_FALSE(r.report.most_loaded_link.empty());
  EXPECT_EQ(r.replay.most_loaded_link, r.report.most_loaded_link);
  const auto [ideal_ps, unused] = des_and_replay(job("own-ml-ideal", ""), "own-ml-ideal");
  (void)unused;
  EXPECT_GT(r.des_ps(), ideal_ps);
  EXPECT_EQ(r.replay_ps(), r.des_ps());
}

}  // namespace
}  // namespace rapid
