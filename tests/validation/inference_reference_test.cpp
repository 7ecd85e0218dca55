// The serving model against published inference latencies and throughputs (data/reference):
// the error per row and the MAPE are printed and bounded. The bounds are the issues'
// acceptance bounds (NeMo latency 8%, serving throughput 12%), not fitted to our output; no
// model constant was tuned on these tables.
#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

#include "rapid/common/error.hpp"

#include "validation/validation_support.hpp"

namespace rapid {
namespace {

// Table `name` predicted and printed: every one of its `rows` rows feasible and its MAPE at
// most `bound` percent (the acceptance bound).
ValidationTable bounded(const std::string& name, size_t rows, double bound) {
  const ValidationTable t = test::table(name);
  test::print_table(t);
  EXPECT_EQ(t.rows.size(), rows) << name;
  EXPECT_TRUE(t.infeasible.empty()) << name;
  EXPECT_LE(t.mape(), bound) << name;
  return t;
}

TEST(ReferenceInference, NemoLlama2A100LatencyMapeAtMostEightPercent) {
  bounded("inference_llama2_a100_nemo", 11, 8.0);  // 7B and 13B at TP 1-8, 70B at TP 2-8
}

// Issue 33's throughput bound (12%, out of sample: nothing was fitted on these tables).
// Maximum output throughput of TensorRT-LLM v0.17, Llama 3.1 8B and 70B, TP 1-8, every
// request queued at once (a closed loop of that many clients here): A100 FP16, and the same
// page's H100 FP8 column (the second GPU type).
TEST(ReferenceInference, TrtllmV017A100ThroughputMapeAtMostTwelvePercent) {
  bounded("trtllm_v017_a100_fp16_throughput", 31, 12.0);
}

TEST(ReferenceInference, TrtllmV017H100Fp8ThroughputMapeAtMostTwelvePercent) {
  bounded("trtllm_v017_h100_fp8_throughput", 31, 12.0);
}

TEST(ReferenceInference, SglangV030OfflineThroughputMapeAtMostTwelvePercent) {
  // The second source, on both GPU types: SGLang v0.3.0, 5000 ShareGPT prompts at once,
  // Llama 3.1 8B on one A100 and 70B on four H100 (a closed loop of 5000 clients here).
  const ValidationTable t = bounded("sglang_v030_sharegpt_offline", 2, 12.0);
  // Issue 33's throughput rows together: 64 rows, two sources, two GPU types.
  size_t rows = 0;
  const double pooled = pooled_mape({t, test::table("trtllm_v017_a100_fp16_throughput"),
                                     test::table("trtllm_v017_h100_fp8_throughput")},
                                    &rows);
  std::printf("serving throughput, both sources: MAPE %.1f%% over %zu rows\n", pooled, rows);
  EXPECT_EQ(rows, 64u);
  EXPECT_LE(pooled, 12.0);
}

TEST(ReferenceInference, SglangV030OnlineMediansAreSimulatedForEveryRow) {
  // SGLang v0.3.0 at 4 and 8 ShareGPT requests/s (A100 8B, H100 70B TP 4): the medians of
  // TTFT, ITL and E2E come from the serving simulation (fidelity: des), every request of the
  // run counted. Each measure predicts all 4 rows, and doubling the rate lengthens every
  // median as it does in the table (rows: 8B at 4/s, 8/s, then 70B at 4/s, 8/s): more
  // running requests per iteration and more prompts between a request's tokens. Issue
  // 33's bounds (TTFT 15%, ITL 12%) are not met on this table yet (docs/inference.md
  // sec 6); the MAPEs are printed for the record, not bounded.
  for (size_t measure = 0; measure < 3; ++measure) {
    const ValidationTable t = test::table("sglang_v030_sharegpt_online", measure);
    const double mape = test::print_table(t);
    ASSERT_EQ(t.rows.size(), 4u);
    EXPECT_TRUE(t.infeasible.empty());
    for (size_t i : {0u, 2u}) {
      EXPECT_GT(t.rows[i + 1].measured, t.rows[i].measured);
      EXPECT_GT(t.rows[i + 1].predicted, t.rows[i].predicted) << t.rows[i + 1].label;
    }
    std::printf("%s: MAPE %.1f%%\n", t.metric.c_str(), mape);
  }
}

// An inference table's request mix and load, refused where they are wrong: the message
// names the description and the key. Built from the shipped SGLang description, one key
// changed at a time, in a scratch copy beside its CSV.
std::string refusal(const std::string& from, const std::string& to) {
  const ReferenceContext ctx = test::reference_context();
  const std::string dir = ::testing::TempDir() + "/rapid_inference_table";
  std::filesystem::create_directories(dir);
  for (const char* ext : {".csv", ".yaml"})
    std::filesystem::copy_file(ctx.reference_dir + "/sglang_v030_sharegpt_online" + ext,
                               dir + "/sglang_v030_sharegpt_online" + ext,
                               std::filesystem::copy_options::overwrite_existing);
  const std::string path = dir + "/sglang_v030_sharegpt_online.yaml";
  std::ifstream in(path);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const size_t at = text.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  text.replace(at, from.size(), to);
  std::ofstream(path) << text;
  try {
    run_table(load_table_spec(path), ctx);
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

TEST(InferenceTableSpec, RefusesAnUnknownLengthDistributionAMedianWithoutTheSimulation) {
  EXPECT_NE(refusal("input_tokens_distribution: exponential", "input_tokens_distribution: zipf")
                .find("serving.input_tokens_distribution"),
            std::string::npos);
  // A median has no closed form: a table asking for one must say fidelity: des.
  EXPECT_NE(refusal("fidelity: des", "fidelity: analytical").find("fidelity: des"),
            std::string::npos);
  EXPECT_NE(refusal("  metrics_window: all", "  metrics_window: warm").find("steady or all"),
            std::string::npos);
  EXPECT_NE(refusal("  requests: {column: num_prompts}", "  request: {column: num_prompts}")
                .find("serving.request"),
            std::string::npos);
}

}  // namespace
}  // namespace rapid
