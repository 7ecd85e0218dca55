// The bounded minimizer, the calibration fit and the measurements reader.
#include "rapid/cost/calibration.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <string>

#include "apps/calibrate_command.hpp"
#include "rapid/common/error.hpp"
#include "rapid/cost/minimize.hpp"
#include "rapid/spec/yaml_reader.hpp"
#include "test_support.hpp"

namespace rapid {
namespace {

HardwareSpec h100() {
  const std::string path = test::source_path("configs/hardware/h100-sxm5-80gb.yaml");
  return parse_hardware(load_yaml_file(path), path);
}

TEST(Minimize, FindsTheRosenbrockValley) {
  // f = (1 - x)^2 + 100 (y - x^2)^2 >= 0, and 0 only where x = 1 and y = x^2 = 1: the
  // minimum (1, 1) is inside the box [-2, 2] x [-1, 3]. Start at the usual (-1.2, 1).
  auto f = [](const std::vector<double>& v) {
    return (1 - v[0]) * (1 - v[0]) + 100 * (v[1] - v[0] * v[0]) * (v[1] - v[0] * v[0]);
  };
  MinimizeResult r = minimize_bounded(f, {-1.2, 1.0}, {-2, -1}, {2, 3});
  EXPECT_NEAR(r.x[0], 1.0, 1e-4);
  EXPECT_NEAR(r.x[1], 1.0, 2e-4);
  EXPECT_LT(r.value, 1e-8);
}

TEST(Minimize, StopsAtTheBoundWhenTheOptimumIsOutside) {
  // f = (x - 3)^2 + (y + 1)^2 on [0, 2]^2 is separable; on [0, 2] the first parabola
  // (vertex 3) decreases and the second (vertex -1) increases, so the constrained minimum
  // is the corner (2, 0) where the parabolas give 1 + 1; the third coordinate is fixed
  // (lower = upper = 7) and adds 7: f = 9.
  auto f = [](const std::vector<double>& v) {
    return (v[0] - 3) * (v[0] - 3) + (v[1] + 1) * (v[1] + 1) + v[2];
  };
  MinimizeResult r = minimize_bounded(f, {0.5, 1.5, 7.0}, {0, 0, 7}, {2, 2, 7});
  EXPECT_NEAR(r.x[0], 2.0, 1e-6);
  EXPECT_NEAR(r.x[1], 0.0, 1e-6);
  EXPECT_EQ(r.x[2], 7.0);
  EXPECT_NEAR(r.value, 9.0, 1e-9);
}

TEST(Calibrate, RecoversTheGemmEfficiencyOfRowsTheModelMade) {
  // Rows made by the model itself at gemm efficiency 0.7 are fitted exactly (objective 0)
  // by 0.7 and by no other value of a compute-bound GEMM's rate: the fit must return it.
  HardwareSpec truth = h100();
  truth.gemm_efficiency = 0.7;
  std::vector<Measurement> rows;
  for (int64_t s : {1024, 2048, 4096, 8192}) {
    Measurement m;
    m.op = MeasuredOp::Gemm;
    m.m = s, m.n = s, m.k = s;
    m.quantity = MeasuredQuantity::Tflops;
    m.value = predict_measurement(m, truth, NetworkSpec{});
    rows.push_back(m);
  }
  HardwareSpec start = truth;
  start.gemm_efficiency = 0.9;
  CalibrationResult r = calibrate(start, NetworkSpec{}, rows, {"gemm"});
  ASSERT_EQ(r.fitted.size(), 1u);
  EXPECT_STREQ(r.fitted[0].param->name, "gemm");
  EXPECT_NEAR(r.hw.gemm_efficiency, 0.7, 1e-4);
  EXPECT_GT(r.mape_before, 1.0);
  EXPECT_LT(r.mape_after, 0.01);
}

TEST(Calibrate, RecoversTheNcclCurveOfRowsTheModelMade) {
  // All-reduce busbw on 2, 4 and 8 GPUs of one node, 64 KB to 1 GB, made at known values.
  // The four parameters are identifiable: the plateau per GPU count gives the efficiency
  // and the bubble (busbw_max = B eff 2(n-1) / (2(n-1) + k)), the half-size per GPU count
  // the start-up and the step latency (L + 2(n-1) a). Network-tier parameters are not
  // seen by single-node rows and must stay as they were.
  HardwareSpec hw = h100();
  NetworkSpec truth;
  // The Simple protocol's curve (NCCL_PROTO=Simple): the low-latency protocols' own step
  // latencies would be further parameters these rows cannot separate.
  truth.nccl_ll = false;
  truth.nccl_ll128 = false;
  truth.leaf_bandwidth_Bps = 50e9;
  truth.collective_latency_s = 20e-6;
  truth.nvlink_step_latency_s = 4e-6;
  truth.nvlink_ring_bubble = 0.8;
  hw.nvlink_efficiency = 0.75;
  std::vector<Measurement> rows;
  for (int64_t gpus : {2, 4, 8})
    for (double bytes = 65536; bytes <= 1 << 30; bytes *= 4) {
      Measurement m;
      m.op = MeasuredOp::AllReduce;
      m.bytes = bytes;
      m.gpus_per_node = gpus;
      m.quantity = MeasuredQuantity::BusbwGBps;
      m.value = predict_measurement(m, hw, truth);
      rows.push_back(m);
    }
  NetworkSpec start = truth;
  start.collective_latency_s = 8e-6;
  start.nvlink_step_latency_s = 1e-6;
  start.nvlink_ring_bubble = 0.0;
  HardwareSpec hw_start = hw;
  hw_start.nvlink_efficiency = 0.9;
  CalibrationResult r = calibrate(hw_start, start, rows);
  EXPECT_EQ(r.fitted.size(), 4u);  // nvlink, collective_latency, nvlink_step_latency, bubble
  EXPECT_NEAR(r.hw.nvlink_efficiency, 0.75, 1e-3);
  EXPECT_NEAR(r.net.collective_latency_s, 20e-6, 0.1e-6);
  EXPECT_NEAR(r.net.nvlink_step_latency_s, 4e-6, 0.02e-6);
  EXPECT_NEAR(r.net.nvlink_ring_bubble, 0.8, 0.01);
  EXPECT_EQ(r.net.network_step_latency_s, start.network_step_latency_s);
  EXPECT_EQ(r.net.network_efficiency, start.network_efficiency);
}

// A GEMM row of shape s x s x s, predicted by the model on `hw` (a row the model made).
Measurement gemm_row(const HardwareSpec& hw, int64_t s) {
  Measurement m;
  m.op = MeasuredOp::Gemm;
  m.m = s, m.n = s, m.k = s;
  m.quantity = MeasuredQuantity::Tflops;
  m.value = predict_measurement(m, hw, NetworkSpec{});
  return m;
}

TEST(Calibrate, OneGemmRowDoesNotDetermineTwoParameters) {
  // One row gives one equation: its Jacobian (1 row x 2 parameters) has rank 1 at most, so
  // gemm and gemm_tile_overhead trade off along a line of equal objective. Nothing is
  // fitted and the family is reported (the command refuses it); with --params gemm the
  // same row determines its one parameter.
  HardwareSpec truth = h100();
  truth.gemm_efficiency = 0.7;
  const std::vector<Measurement> rows = {gemm_row(truth, 4096)};
  const CalibrationResult r = calibrate(h100(), NetworkSpec{}, rows);
  ASSERT_EQ(r.underdetermined.size(), 1u);
  EXPECT_TRUE(r.underdetermined[0].gemm);
  EXPECT_EQ(r.underdetermined[0].rows, 1u);
  EXPECT_EQ(r.underdetermined[0].rank, 1u);
  ASSERT_EQ(r.underdetermined[0].params.size(), 2u);
  EXPECT_STREQ(r.underdetermined[0].params[0]->name, "gemm");
  EXPECT_STREQ(r.underdetermined[0].params[1]->name, "gemm_tile_overhead");
  EXPECT_TRUE(r.fitted.empty());
  EXPECT_EQ(r.hw.gemm_efficiency, h100().gemm_efficiency);
  const CalibrationResult one = calibrate(h100(), NetworkSpec{}, rows, {"gemm"});
  EXPECT_TRUE(one.underdetermined.empty());
  EXPECT_NEAR(one.hw.gemm_efficiency, 0.7, 1e-3);
}

TEST(Calibrate, RowsOfOneShapeAreOneRow) {
  // Three measurements of the same shape are three equal Jacobian rows: rank 1 < 2.
  const HardwareSpec hw = h100();
  const Measurement row = gemm_row(hw, 2048);
  const CalibrationResult r = calibrate(hw, NetworkSpec{}, {row, row, row});
  ASSERT_EQ(r.underdetermined.size(), 1u);
  EXPECT_EQ(r.underdetermined[0].rows, 3u);
  EXPECT_EQ(r.underdetermined[0].rank, 1u);
}

TEST(Calibrate, ShapesOfDifferentSizesDetermineBothGemmParameters) {
  // 256^3 (a few tiles: the per-tile overhead weighs) and 8192^3 (many full waves: the
  // efficiency does) move the two parameters differently: rank 2, both fitted back to the
  // values the rows were made with.
  HardwareSpec truth = h100();
  truth.gemm_efficiency = 0.7;
  truth.gemm_tile_overhead_s = 2e-6;
  std::vector<Measurement> rows;
  for (int64_t s : {256, 1024, 8192}) rows.push_back(gemm_row(truth, s));
  const CalibrationResult r = calibrate(h100(), NetworkSpec{}, rows);
  EXPECT_TRUE(r.underdetermined.empty());
  EXPECT_EQ(r.fitted.size(), 2u);
  EXPECT_NEAR(r.hw.gemm_efficiency, 0.7, 1e-3);
  EXPECT_NEAR(r.hw.gemm_tile_overhead_s, 2e-6, 0.02e-6);
}

TEST(Calibrate, ANamedParameterTheRowsDoNotMoveIsUndetermined) {
  // All-reduce rows inside one node never touch the network tier: --params
  // network_efficiency names a parameter whose Jacobian column is zero (rank 0 of 1).
  HardwareSpec hw = h100();
  NetworkSpec net;
  net.leaf_bandwidth_Bps = 50e9;
  std::vector<Measurement> rows;
  for (double bytes : {1e6, 1e8}) {
    Measurement m;
    m.op = MeasuredOp::AllReduce;
    m.bytes = bytes;
    m.gpus_per_node = 8;
    m.quantity = MeasuredQuantity::BusbwGBps;
    m.value = predict_measurement(m, hw, net);
    rows.push_back(m);
  }
  const CalibrationResult r = calibrate(hw, net, rows, {"network_efficiency"});
  ASSERT_EQ(r.underdetermined.size(), 1u);
  EXPECT_FALSE(r.underdetermined[0].gemm);
  EXPECT_EQ(r.underdetermined[0].rank, 0u);
  EXPECT_TRUE(r.fitted.empty());
}

TEST(Calibrate, RejectsAnUnknownParameterName) {
  EXPECT_THROW(calibrate(h100(), NetworkSpec{}, {}, {"gemm_efficency"}), InputError);
}

// Expects read_measurements to fail on `csv` with a message holding every text of `want`.
void expect_bad(const std::string& name, const std::string& csv,
                const std::vector<std::string>& want) {
  const std::string path = test::write_temp(name, csv);
  try {
    read_measurements(path);
    ADD_FAILURE() << "no error for " << name;
  } catch (const InputError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find(path), std::string::npos) << what;
    for (const std::string& w : want) EXPECT_NE(what.find(w), std::string::npos) << what;
  }
}

TEST(Measurements, ReadsGemmAndCollectiveRows) {
  const std::string path =
      test::write_temp("good.csv",
                       "# a comment\nop,shape,dtype,time_s,tflops,busbw_gbps\n"
                       "gemm,4096x2048x1024,bf16,,700.5,\n\nall_reduce,4194304x8,fp32,,,76.6\n"
                       "all_gather,1048576x8x2,bf16,1.5e-4,,\n");
  std::vector<Measurement> rows = read_measurements(path);
  ASSERT_EQ(rows.size(), 3u);
  EXPECT_EQ(rows[0].n, 2048);
  EXPECT_EQ(rows[0].quantity, MeasuredQuantity::Tflops);
  EXPECT_EQ(rows[1].line, 5);
  EXPECT_EQ(rows[1].gpus_per_node, 8);
  EXPECT_EQ(rows[1].nodes, 1);
  EXPECT_DOUBLE_EQ(rows[1].value, 76.6);
  EXPECT_EQ(rows[2].nodes, 2);
  EXPECT_EQ(rows[2].quantity, MeasuredQuantity::TimeS);
}

TEST(Measurements, BadRowsNameFileLineAndColumn) {
  const std::string head = "op,shape,dtype,tflops,busbw_gbps\n";
  // Line 3, column 2 (1-based), printed as FILE:3:2 by InputError.
  expect_bad("shape.csv", head + "gemm,1x1x1,bf16,1,\ngemm,4096x,bf16,1,\n",
             {":3:2", "'shape'", "'4096x'", "MxNxK"});
  expect_bad("op.csv", head + "allreduce,4x8,fp32,,1\n", {":2:1", "'op'", "'allreduce'"});
  expect_bad("dtype.csv", head + "gemm,1x1x1,bf17,1,\n", {":2:3", "'dtype'"});
  expect_bad("value.csv", head + "gemm,1x1x1,bf16,fast,\n", {":2:4", "'tflops'", "'fast'"});
  expect_bad("none.csv", head + "gemm,1x1x1,bf16,,\n", {":2:4", "a time_s or tflops value"});
  expect_bad("two.csv", head + "all_reduce,4x8,fp32,1,2\n", {":2:4", "'tflops'"});
  expect_bad("busbw.csv", head + "gemm,1x1x1,bf16,,2\n", {":2:5", "'busbw_gbps'"});
  expect_bad("gpus.csv", head + "all_reduce,4x1,fp32,,2\n", {":2:2", "at least 2 GPUs"});
  expect_bad("fields.csv", head + "gemm,1x1x1,bf16\n", {":2:4", "5 comma-separated fields"});
  expect_bad("column.csv", "op,shape,dtype,tflop\n", {":1:4", "'tflop'"});
  expect_bad("novalue.csv", "op,shape,dtype\n", {":1:1", "time_s, tflops or busbw_gbps"});
  expect_bad("empty.csv", "# nothing\n", {"a CSV header row"});
  expect_bad("rowless.csv", "op,shape,dtype,tflops\n", {"at least one measurement"});
}

TEST(CalibrateCommand, MalformedCsvThrowsBeforeWritingAnything) {
  namespace fs = std::filesystem;
  CalibrateOptions o;
  o.hardware = test::source_path("configs/hardware/h100-sxm5-80gb.yaml");
  o.measurements = test::write_temp("cmd-bad.csv", "op,shape,dtype,tflops\ngemm,1x2,bf16,3\n");
  o.output = test::write_temp("cmd-out.yaml", "");
  fs::remove(o.output);
  EXPECT_THROW(run_calibrate(o), InputError);
  EXPECT_FALSE(fs::exists(o.output));
}

TEST(CalibrateCommand, RefusesAnUnderdeterminedFitNamingTheFile) {
  namespace fs = std::filesystem;
  CalibrateOptions o;
  o.hardware = test::source_path("configs/hardware/h100-sxm5-80gb.yaml");
  o.measurements =
      test::write_temp("cmd-one.csv", "op,shape,dtype,tflops\ngemm,4096x4096x4096,bf16,700\n");
  o.output = test::write_temp("cmd-one.yaml", "");
  fs::remove(o.output);
  try {
    run_calibrate(o);
    ADD_FAILURE() << "no error";
  } catch (const InputError& e) {
    EXPECT_EQ(e.file(), o.measurements);
    EXPECT_EQ(e.key(), "rows");
    EXPECT_EQ(e.value(), "1 gemm row");
    EXPECT_NE(e.expected().find("determine 1"), std::string::npos) << e.what();
  }
  EXPECT_FALSE(fs::exists(o.output));
}

TEST(CalibrateCommand, WritesAHardwareFileThatReadsBackTheFit) {
  CalibrateOptions o;
  o.hardware = test::source_path("configs/hardware/h100-sxm5-80gb.yaml");
  o.measurements = test::write_temp("cmd-good.csv",
                                    "op,shape,dtype,tflops\ngemm,4096x4096x4096,bf16,700\n"
                                    "gemm,8192x8192x8192,bf16,720\n");
  o.output = test::write_temp("cmd-good.yaml", "");
  o.params = {"gemm"};
  ASSERT_EQ(run_calibrate(o), 0);
  const std::string text = read_text_file(o.output);
  EXPECT_EQ(text.rfind("# calibrated by rapid calibrate from cmd-good.csv on ", 0), 0u) << text;
  EXPECT_NE(text.find("# calibrated, was "), std::string::npos);
  HardwareSpec fitted = parse_hardware(load_yaml_text(text, o.output), o.output);
  EXPECT_NE(fitted.gemm_efficiency, h100().gemm_efficiency);
  EXPECT_EQ(fitted.attention_efficiency, h100().attention_efficiency);
}

}  // namespace
}  // namespace rapid
