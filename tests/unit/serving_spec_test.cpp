// Serving stacks (configs/serving/*.yaml) and the job's `serving:` mapping
// (docs/inference.md "Serving stacks", "Job keys"): the shipped stacks load with the values
// their files cite, `base:` chains override, every form of the request mix parses, and bad
// input names the file, the key, the value and what was expected.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "rapid/common/error.hpp"
#include "rapid/spec/serving_spec.hpp"
#include "rapid/spec/yaml_reader.hpp"
#include "test_support.hpp"

namespace rapid {
namespace {

ServingStack shipped(const std::string& name) {
  return load_serving_stack(name, RAPID_SOURCE_DIR, "test", "stack");
}

// Parses the `serving:` mapping of the job text `text`, written to a temp file `name`.
ServingSpec parse_job(const std::string& name, const std::string& text) {
  const std::string path = test::write_temp(name, text);
  const YamlMap top(load_yaml_file(path), path);
  return parse_serving(top.map("serving"), path);
}

// The InputError of parsing the job; checks that it names the job file unless `file` says
// which file it must name.
InputError job_error(const std::string& name, const std::string& text,
                     const std::string& file = "") {
  const std::string path = test::temp_path(name);
  try {
    parse_job(name, text);
  } catch (const InputError& e) {
    EXPECT_EQ(e.file(), file.empty() ? path : file) << e.what();
    return e;
  }
  ADD_FAILURE() << "no InputError for " << name;
  return InputError("", "", "", "");
}

// Writes configs/serving/NAME.yaml beside the temp jobs (found from them: config_search_dirs
// looks in the job's directory's configs/).
std::string write_stack(const std::string& name, const std::string& text) {
  const std::filesystem::path dir = std::filesystem::path(test::temp_path("configs")) / "serving";
  std::filesystem::create_directories(dir);
  const std::string path = (dir / (name + ".yaml")).string();
  std::ofstream(path) << text;
  return path;
}

constexpr const char* kRequests = "  requests: {input_tokens: 128, output_tokens: 64}\n";

TEST(ServingSpec, ShippedStacksListed) {
  const auto names = known_serving_stacks(RAPID_SOURCE_DIR);
  for (const char* n : {"vllm", "vllm-a100", "tensorrt-llm", "sglang", "nemo-inference-2023"})
    EXPECT_NE(std::find(names.begin(), names.end(), n), names.end()) << n;
}

TEST(ServingSpec, VllmCitedDefaults) {
  // configs/serving/vllm.yaml: vLLM v0.11 `vllm serve` on an H100-class GPU.
  const ServingStack s = shipped("vllm");
  EXPECT_EQ(s.name, "vllm");
  EXPECT_EQ(s.kv_block_tokens, 16);           // CacheConfig block size on CUDA
  EXPECT_EQ(s.max_num_seqs, 1024);            // arg_utils: >= 70 GiB, not A100
  EXPECT_EQ(s.max_num_batched_tokens, 8192);  // same
  EXPECT_TRUE(s.chunked_prefill);             // always on in V1
  EXPECT_TRUE(s.mixed_batches);
  EXPECT_TRUE(s.cuda_graphs);
  EXPECT_EQ(s.cuda_graph_max_batch, 512);  // min(2 max_num_seqs, 512)
  EXPECT_DOUBLE_EQ(s.gpu_memory_utilization, 0.9);
  EXPECT_EQ(s.memory_budget, MemoryBudget::Total);
  EXPECT_EQ(s.attention, (std::vector<AttentionImpl>{AttentionImpl::FA3, AttentionImpl::FA2}));
  EXPECT_TRUE(s.custom_all_reduce);
  EXPECT_DOUBLE_EQ(s.custom_all_reduce_max_bytes, 8.0 * 1024 * 1024);  // 8192 * 1024
  EXPECT_DOUBLE_EQ(s.custom_all_reduce_latency_s, 5e-6);
  EXPECT_DOUBLE_EQ(s.host_overhead_per_step_s, 0.5e-3);
  EXPECT_DOUBLE_EQ(s.host_overhead_per_seq_s, 20e-6);
  EXPECT_DOUBLE_EQ(s.workspace_bytes, 1024.0 * 1024 * 1024);
  EXPECT_NE(s.path.find("configs/serving/vllm.yaml"), std::string::npos) << s.path;
}

TEST(ServingSpec, VllmA100OverridesItsBase) {
  const ServingStack s = shipped("vllm-a100");
  EXPECT_EQ(s.name, "vllm-a100");
  EXPECT_EQ(s.max_num_seqs, 256);  // the A100 branch of arg_utils
  EXPECT_EQ(s.max_num_batched_tokens, 2048);
  EXPECT_EQ(s.kv_block_tokens, 16);  // inherited from vllm.yaml
  EXPECT_DOUBLE_EQ(s.gpu_memory_utilization, 0.9);
  // The file, then its bases ("a.yaml <- b.yaml").
  EXPECT_NE(s.path.find("vllm-a100.yaml <- "), std::string::npos) << s.path;
  EXPECT_TRUE(s.path.ends_with("configs/serving/vllm.yaml")) << s.path;
}

TEST(ServingSpec, TensorRtLlmCitedDefaults) {
  const ServingStack s = shipped("tensorrt-llm");
  EXPECT_EQ(s.kv_block_tokens, 64);           // tokens_per_block
  EXPECT_EQ(s.max_num_seqs, 2048);            // max_batch_size
  EXPECT_EQ(s.max_num_batched_tokens, 8192);  // max_num_tokens
  EXPECT_FALSE(s.chunked_prefill);            // enable_chunked_prefill False
  EXPECT_TRUE(s.mixed_batches);               // inflight batching
  EXPECT_TRUE(s.cuda_graphs);
  EXPECT_EQ(s.cuda_graph_max_batch, 128);           // CudaGraphConfig max_batch_size 0 -> 128
  EXPECT_DOUBLE_EQ(s.host_overhead_per_step_s, 0);  // overlap scheduler
  EXPECT_DOUBLE_EQ(s.gpu_memory_utilization, 0.9);  // free_gpu_memory_fraction
  EXPECT_EQ(s.memory_budget, MemoryBudget::Free);
  EXPECT_DOUBLE_EQ(s.custom_all_reduce_max_bytes, 8e6);  // 8,000,000 B at TP > 2
}

TEST(ServingSpec, SglangCitedDefaults) {
  const ServingStack s = shipped("sglang");
  EXPECT_EQ(s.kv_block_tokens, 1);            // page_size 1
  EXPECT_EQ(s.max_num_seqs, 2048);            // max_running_requests floor
  EXPECT_EQ(s.max_num_batched_tokens, 8192);  // chunked_prefill_size on 80 GB
  EXPECT_TRUE(s.chunked_prefill);
  EXPECT_FALSE(s.mixed_batches);           // enable_mixed_chunk False
  EXPECT_EQ(s.cuda_graph_max_batch, 256);  // 60-90 GB, TP < 4
  EXPECT_DOUBLE_EQ(s.gpu_memory_utilization, 0.835);
  EXPECT_EQ(s.memory_budget, MemoryBudget::Static);
  EXPECT_DOUBLE_EQ(s.host_overhead_per_step_s, 0);  // zero-overhead scheduler
  EXPECT_DOUBLE_EQ(s.custom_all_reduce_max_bytes, 8.0 * 1024 * 1024);
}

TEST(ServingSpec, NemoInference2023OverTensorRtLlm) {
  const ServingStack s = shipped("nemo-inference-2023");
  EXPECT_EQ(s.max_num_seqs, 1);  // batch-1 measurements
  EXPECT_FALSE(s.chunked_prefill);
  EXPECT_FALSE(s.mixed_batches);
  EXPECT_FALSE(s.cuda_graphs);
  EXPECT_FALSE(s.custom_all_reduce);
  EXPECT_DOUBLE_EQ(s.gpu_memory_utilization, 0.85);  // freeGpuMemoryFraction before 0.8
  EXPECT_EQ(s.attention, std::vector<AttentionImpl>{AttentionImpl::FA2});
  EXPECT_EQ(s.kv_block_tokens, 64);  // inherited from tensorrt-llm.yaml
  EXPECT_EQ(s.memory_budget, MemoryBudget::Free);
  EXPECT_NE(s.path.find("nemo-inference-2023.yaml <- "), std::string::npos) << s.path;
  EXPECT_TRUE(s.path.ends_with("configs/serving/tensorrt-llm.yaml")) << s.path;
}

TEST(ServingSpec, JobStackFileWithBaseOverrides) {
  write_stack("test-child",
              "name: test-child\nbase: sglang\nkv_block_tokens: 16\n"
              "cuda_graphs: false\n");
  const ServingSpec s =
      parse_job("child.yaml", std::string("serving:\n  stack: test-child\n") + kRequests);
  EXPECT_EQ(s.stack.name, "test-child");
  EXPECT_EQ(s.stack.kv_block_tokens, 16);
  EXPECT_FALSE(s.stack.cuda_graphs);
  EXPECT_FALSE(s.stack.mixed_batches);                      // from sglang.yaml
  EXPECT_DOUBLE_EQ(s.stack.gpu_memory_utilization, 0.835);  // from sglang.yaml
}

TEST(ServingSpec, BaseCycleIsNamed) {
  write_stack("test-loop-a", "name: test-loop-a\nbase: test-loop-b\n");
  const std::string b = write_stack("test-loop-b", "name: test-loop-b\nbase: test-loop-a\n");
  const InputError e =
      job_error("loop.yaml", std::string("serving:\n  stack: test-loop-a\n") + kRequests,
                std::filesystem::path(b).lexically_normal().string());
  EXPECT_EQ(e.key(), "base");
  EXPECT_EQ(e.value(), "test-loop-a");
  EXPECT_NE(e.expected().find("cycle"), std::string::npos) << e.what();
}

TEST(ServingSpec, JobDefaults) {
  const ServingSpec s = parse_job("defaults.yaml", std::string("serving:\n") + kRequests);
  EXPECT_EQ(s.stack.name, "vllm");
  EXPECT_EQ(s.load_kind, LoadKind::Concurrency);
  EXPECT_EQ(s.loads, std::vector<double>{1});
  EXPECT_EQ(s.num_requests, 256);
  EXPECT_EQ(s.seed, 1u);
  EXPECT_EQ(s.dtype, DType::BF16);
  EXPECT_EQ(s.kv_dtype, DType::BF16);
  EXPECT_EQ(s.input_tokens.distribution, LengthDistribution::Fixed);
  EXPECT_EQ(s.input_tokens.min, 128);
  EXPECT_EQ(s.input_tokens.max, 128);
  EXPECT_DOUBLE_EQ(s.input_tokens.mean, 128);
  EXPECT_EQ(s.max_seq_tokens(), 192);
}

TEST(ServingSpec, JobEveryForm) {
  const ServingSpec s =
      parse_job("forms.yaml",
                "serving:\n"
                "  stack: tensorrt-llm\n"
                "  max_num_seqs: 64\n"  // a stack key overrides the file's value
                "  host_overhead_per_step: 2ms\n"
                "  attention: fa2\n"
                "  dtype: fp8\n"
                "  requests:\n"
                "    input_tokens: {distribution: uniform, min: 100, max: 300}\n"
                "    output_tokens: {distribution: normal, mean: 200, stddev: 50, max: 400}\n"
                "    count: 1000\n"
                "    seed: 7\n"
                "  concurrency: [8, 1, 4, 4, 16, 1]\n");
  EXPECT_EQ(s.stack.name, "tensorrt-llm");
  EXPECT_EQ(s.stack.max_num_seqs, 64);
  EXPECT_EQ(s.stack.kv_block_tokens, 64);
  EXPECT_DOUBLE_EQ(s.stack.host_overhead_per_step_s, 2e-3);
  EXPECT_EQ(s.stack.attention, std::vector<AttentionImpl>{AttentionImpl::FA2});
  EXPECT_EQ(s.dtype, DType::FP8);
  EXPECT_EQ(s.kv_dtype, DType::FP8);  // defaults to dtype
  EXPECT_EQ(s.input_tokens.distribution, LengthDistribution::Uniform);
  EXPECT_DOUBLE_EQ(s.input_tokens.mean, 200);
  EXPECT_EQ(s.input_tokens.min, 100);
  EXPECT_EQ(s.input_tokens.max, 300);
  EXPECT_EQ(s.output_tokens.distribution, LengthDistribution::Normal);
  EXPECT_DOUBLE_EQ(s.output_tokens.mean, 200);
  EXPECT_DOUBLE_EQ(s.output_tokens.stddev, 50);
  EXPECT_EQ(s.output_tokens.min, 1);
  EXPECT_EQ(s.output_tokens.max, 400);
  EXPECT_EQ(s.num_requests, 1000);
  EXPECT_EQ(s.seed, 7u);
  EXPECT_EQ(s.load_kind, LoadKind::Concurrency);
  EXPECT_EQ(s.loads, (std::vector<double>{1, 4, 8, 16}));  // sorted, duplicates removed
  EXPECT_EQ(s.max_seq_tokens(), 700);
}

TEST(ServingSpec, ExponentialFixedMappingAndRates) {
  const ServingSpec s =
      parse_job("rates.yaml",
                "serving:\n"
                "  stack: sglang\n"
                "  dtype: fp16\n"
                "  kv_dtype: fp8\n"
                "  requests:\n"
                "    input_tokens: {distribution: fixed, value: 512}\n"
                "    output_tokens: {distribution: exponential, mean: 128, min: 4, max: 2048}\n"
                "  arrival_rate: [\"2/s\", 0.5, 30/min, 2, \"4 /s\"]\n");
  EXPECT_EQ(s.input_tokens.distribution, LengthDistribution::Fixed);
  EXPECT_EQ(s.input_tokens.min, 512);
  EXPECT_EQ(s.input_tokens.max, 512);
  EXPECT_DOUBLE_EQ(s.input_tokens.mean, 512);
  EXPECT_EQ(s.output_tokens.distribution, LengthDistribution::Exponential);
  EXPECT_DOUBLE_EQ(s.output_tokens.mean, 128);
  EXPECT_EQ(s.output_tokens.min, 4);
  EXPECT_EQ(s.output_tokens.max, 2048);
  EXPECT_EQ(s.dtype, DType::FP16);
  EXPECT_EQ(s.kv_dtype, DType::FP8);
  EXPECT_EQ(s.load_kind, LoadKind::ArrivalRate);
  EXPECT_EQ(s.loads, (std::vector<double>{0.5, 2, 4}));  // 30/min = 0.5/s
  // A single rate is a one-value list.
  const ServingSpec one =
      parse_job("rate1.yaml", std::string("serving:\n") + kRequests + "  arrival_rate: 2/s\n");
  EXPECT_EQ(one.loads, std::vector<double>{2});
}

TEST(ServingSpecErrors, UnknownJobKey) {
  const InputError e = job_error("typo.yaml", std::string("serving:\n  max_seqs: 8\n") + kRequests);
  EXPECT_EQ(e.key(), "serving.max_seqs");
  EXPECT_EQ(e.value(), "max_seqs");
  EXPECT_NE(e.expected().find("unknown key"), std::string::npos) << e.what();
}

TEST(ServingSpecErrors, UnknownKeyInStackFileNamesThatFile) {
  const std::string path =
      write_stack("test-typo", "name: test-typo\nbase: vllm\nblock_size: 32\n");
  const InputError e =
      job_error("stacktypo.yaml", std::string("serving:\n  stack: test-typo\n") + kRequests,
                std::filesystem::path(path).lexically_normal().string());
  EXPECT_EQ(e.key(), "block_size");
  EXPECT_NE(e.expected().find("unknown key"), std::string::npos) << e.what();
}

TEST(ServingSpecErrors, BothConcurrencyAndArrivalRate) {
  const InputError e = job_error("both.yaml", std::string("serving:\n") + kRequests +
                                                  "  concurrency: 4\n  arrival_rate: 2/s\n");
  EXPECT_EQ(e.key(), "serving.arrival_rate");
  EXPECT_EQ(e.value(), "2/s");
  EXPECT_NE(e.expected().find("not both"), std::string::npos) << e.what();
}

TEST(ServingSpecErrors, MinAboveMax) {
  const InputError e = job_error("minmax.yaml",
                                 "serving:\n  requests:\n"
                                 "    input_tokens: {distribution: uniform, min: 300, max: 100}\n"
                                 "    output_tokens: 64\n");
  EXPECT_EQ(e.key(), "serving.requests.input_tokens.max");
  EXPECT_EQ(e.value(), "100");
  EXPECT_NE(e.expected().find("at least min (300)"), std::string::npos) << e.what();
}

TEST(ServingSpecErrors, NormalWithoutStddev) {
  const InputError e =
      job_error("nostddev.yaml",
                "serving:\n  requests:\n    input_tokens: 128\n"
                "    output_tokens: {distribution: normal, mean: 100, max: 400}\n");
  EXPECT_EQ(e.key(), "serving.requests.output_tokens.stddev");
  EXPECT_EQ(e.value(), "<missing>");
  EXPECT_NE(e.expected().find("standard deviation"), std::string::npos) << e.what();
}

TEST(ServingSpecErrors, MeanOutsideMinMax) {
  const InputError e =
      job_error("mean.yaml",
                "serving:\n  requests:\n    input_tokens: 128\n"
                "    output_tokens: {distribution: exponential, mean: 500, max: 400}\n");
  EXPECT_EQ(e.key(), "serving.requests.output_tokens.mean");
  EXPECT_EQ(e.value(), "500");
}

TEST(ServingSpecErrors, KeyOfAnotherDistribution) {
  const InputError e = job_error("fixedstd.yaml",
                                 "serving:\n  requests:\n    output_tokens: 64\n"
                                 "    input_tokens: {distribution: fixed, value: 10, stddev: 2}\n");
  EXPECT_EQ(e.key(), "serving.requests.input_tokens.stddev");
  EXPECT_NE(e.expected().find("distribution fixed"), std::string::npos) << e.what();
}

TEST(ServingSpecErrors, UnknownStackListsTheKnownOnes) {
  const InputError e =
      job_error("nostack.yaml", std::string("serving:\n  stack: vllm-9\n") + kRequests);
  EXPECT_EQ(e.key(), "serving.stack");
  EXPECT_EQ(e.value(), "vllm-9");
  for (const char* known : {"vllm", "tensorrt-llm", "sglang", "nemo-inference-2023"})
    EXPECT_NE(e.expected().find(known), std::string::npos) << e.what();
}

TEST(ServingSpecErrors, MemoryUtilizationAboveOne) {
  const InputError e =
      job_error("util.yaml", std::string("serving:\n  gpu_memory_utilization: 1.5\n") + kRequests);
  EXPECT_EQ(e.key(), "serving.gpu_memory_utilization");
  EXPECT_EQ(e.value(), "1.5");
  EXPECT_NE(e.expected().find("(0, 1]"), std::string::npos) << e.what();
}

TEST(ServingSpecErrors, NegativeTime) {
  const InputError e = job_error(
      "negtime.yaml", std::string("serving:\n  host_overhead_per_step: -1ms\n") + kRequests);
  EXPECT_EQ(e.key(), "serving.host_overhead_per_step");
  EXPECT_EQ(e.value(), "-1ms");
  EXPECT_NE(e.expected().find("non-negative"), std::string::npos) << e.what();
}

TEST(ServingSpecErrors, BadRateAndConcurrency) {
  const InputError r =
      job_error("rate.yaml", std::string("serving:\n") + kRequests + "  arrival_rate: [1, 2/q]\n");
  EXPECT_EQ(r.key(), "serving.arrival_rate");
  EXPECT_EQ(r.value(), "2/q");
  EXPECT_NE(r.expected().find("requests"), std::string::npos) << r.what();
  const InputError z =
      job_error("zero.yaml", std::string("serving:\n") + kRequests + "  arrival_rate: 0\n");
  EXPECT_EQ(z.value(), "0");
  const InputError c =
      job_error("conc.yaml", std::string("serving:\n") + kRequests + "  concurrency: [4, 0]\n");
  EXPECT_EQ(c.key(), "serving.concurrency");
  EXPECT_EQ(c.value(), "0");
}

TEST(ServingSpecErrors, MissingRequests) {
  const InputError e = job_error("noreq.yaml", "serving:\n  stack: vllm\n");
  EXPECT_EQ(e.key(), "serving.requests");
  const InputError l = job_error("nolen.yaml", "serving:\n  requests: {input_tokens: 128}\n");
  EXPECT_EQ(l.key(), "serving.requests.output_tokens");
}

}  // namespace
}  // namespace rapid
