// The serving side of a job (`mode: inference`, docs/inference.md): the serving stack
// (configs/serving/NAME.yaml: vllm, tensorrt-llm, sglang) and the request workload (a mix of
// input and output lengths, offered as a concurrency or an arrival rate).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <yaml-cpp/yaml.h>

#include "rapid/spec/attention_impl.hpp"
#include "rapid/spec/hardware_spec.hpp"

namespace rapid {

class YamlMap;

/// What gpu_memory_utilization is a fraction of and what that share must hold: each stack
/// sizes its KV cache by its own rule (docs/inference.md "Serving stacks").
enum class MemoryBudget : uint8_t {
  /// util x HBM holds weights, activations, workspace and the KV cache (vLLM
  /// gpu_memory_utilization).
  Total,
  /// util x HBM holds weights and the KV pool only; activations, CUDA graphs and workspace
  /// live in the rest (SGLang mem_fraction_static).
  Static,
  /// The KV cache takes util x the memory left after weights, activations and workspace
  /// (TensorRT-LLM KvCacheConfig.free_gpu_memory_fraction).
  Free,
};
inline constexpr const char* kMemoryBudgetNames[] = {"total", "static", "free"};

/// What a stack does, with chunked prefill off, with a request longer than its
/// per-iteration token budget (max_num_batched_tokens); docs/inference.md "Serving stacks".
enum class OverBudgetPrompt : uint8_t {
  /// Admitted whole as the first prompt of an iteration, past the budget (SGLang
  /// PrefillAdder without chunking); the rows say so (warning prompt_over_budget).
  Alone,
  /// A prompt longer than the budget is refused (TensorRT-LLM LLM API RequestError).
  RefusePrompt,
  /// The engine refuses to start when the budget is below max_model_len, the longest
  /// prompt + output (vLLM SchedulerConfig.verify_max_model_len).
  RefuseSequence,
};
inline constexpr const char* kOverBudgetPromptNames[] = {"alone", "refuse_prompt",
                                                         "refuse_sequence"};

/// What a serving engine does per iteration (one forward over the running batch). Every
/// field is a key of configs/serving/NAME.yaml of the same name; each shipped file cites the
/// stack's documentation for each value (docs/inference.md "Serving stacks").
struct ServingStack {
  std::string name;
  std::string path;  ///< file it was read from (with its bases: "a.yaml <- b.yaml")

  // Paged attention (Kwon et al. 2023, "vLLM"): the KV cache lives in blocks of
  // kv_block_tokens tokens; a sequence holds ceil(tokens / block) blocks.
  int64_t kv_block_tokens = 16;

  // Continuous (iteration-level) batching (Yu et al. 2022, "Orca"): each iteration runs at
  // most max_num_seqs sequences and max_num_batched_tokens tokens (decode tokens count 1).
  int64_t max_num_seqs = 256;
  int64_t max_num_batched_tokens = 8192;
  /// Long prompts are split into chunks that fill the token budget left by decodes
  /// (Agrawal et al. 2024, "Sarathi-Serve"); off: a prompt is prefilled whole in one step.
  bool chunked_prefill = true;
  /// With chunked prefill off: what happens to a request longer than the budget.
  OverBudgetPrompt over_budget_prompt = OverBudgetPrompt::Alone;
  /// Prefill tokens share an iteration with decode tokens; off: an iteration is either all
  /// prefill (run first when any waits) or all decode (vLLM V0 default scheduler).
  bool mixed_batches = true;

  /// Decode iterations replay a captured CUDA graph (no per-kernel launch from the host) up
  /// to this batch size; larger batches and prefill run eagerly.
  bool cuda_graphs = true;
  int64_t cuda_graph_max_batch = 512;
  /// Host time per iteration that the GPU waits for (scheduling, input preparation,
  /// sampling, detokenization not overlapped with the forward).
  double host_overhead_per_step_s = 0;
  /// Host time per running sequence per iteration, on top of host_overhead_per_step (Python
  /// bookkeeping of each request: scheduling, input preparation, output processing).
  double host_overhead_per_seq_s = 0;
  /// Per kernel issued eagerly (host launch, Python dispatch): the GPU idles when a
  /// kernel is shorter than this.
  double eager_launch_s = 5e-6;
  /// The GPU's own gap between consecutive kernels (inside a replayed CUDA graph, and
  /// between eager kernels already queued): added to every kernel.
  double graph_launch_s = 1.5e-6;
  /// Per request, outside the engine: the API server (HTTP, OpenAI protocol), tokenizing
  /// the prompt and detokenizing and streaming the first token, added to the time to first
  /// token and the end-to-end latency a client sees (a closed-loop client waits it too).
  double frontend_latency_s = 0;

  /// Fraction of HBM the engine claims (weights + KV cache + activations + workspace).
  double gpu_memory_utilization = 0.9;
  /// How gpu_memory_utilization is applied (which memory it is a fraction of).
  MemoryBudget memory_budget = MemoryBudget::Total;
  /// CUDA context, cuBLAS/attention workspaces, NCCL and sampler buffers, per GPU.
  double workspace_bytes = 1.0 * (1ull << 30);

  /// Attention kernels in order of preference (the first the GPU has runs prefill and
  /// decode attention); `unfused` is always available.
  std::vector<AttentionImpl> attention{AttentionImpl::FA2};

  /// TP all-reduces below custom_all_reduce_max_bytes run the stack's own NVLink kernel
  /// (one-shot: every GPU reads every peer's buffer; vLLM custom_all_reduce, TensorRT-LLM
  /// AllReduce plugin) instead of NCCL, inside one NVLink domain.
  bool custom_all_reduce = true;
  double custom_all_reduce_max_bytes = 8.0 * (1 << 20);
  /// Start-up of one custom all-reduce (its two flag barriers over NVLink and the launch).
  double custom_all_reduce_latency_s = 6e-6;
  /// One-shot (every GPU reads every peer: (tp - 1) S) below these sizes, two-shot
  /// (reduce-scatter then all-gather, each behind its barrier: 2 (tp - 1) / tp S, twice the
  /// start-up) from them: at TP 3-4 and at TP above 4; TP 2 always one-shot.
  double custom_all_reduce_one_shot_max_tp4_bytes = 512.0 * 1024;
  double custom_all_reduce_one_shot_max_tp8_bytes = 256.0 * 1024;
};

/// A length of the request mix: fixed, or drawn per request (the DES draws it; the
/// analytical model uses the mean).
enum class LengthDistribution : uint8_t { Fixed, Uniform, Normal, Exponential };
inline constexpr const char* kLengthDistributionNames[] = {"fixed", "uniform", "normal",
                                                           "exponential"};

struct LengthSpec {
  LengthDistribution distribution = LengthDistribution::Fixed;
  double mean = 0;    ///< tokens (fixed: the value; uniform: (min + max) / 2)
  double stddev = 0;  ///< normal only
  int64_t min = 1;    ///< draws are clamped to [min, max]
  int64_t max = 0;
};

/// How load is offered to the deployment (all replicas together, split evenly over them).
enum class LoadKind : uint8_t { Concurrency, ArrivalRate };

/// The requests the simulation's metrics cover: the steady state (without the start-up
/// burst and the drain), or all of them from the first arrival to the last token as a
/// benchmark client's run reports them (vLLM benchmarks/benchmark_serving.py: every request,
/// throughput over the run's duration).
enum class MetricsWindow : uint8_t { Steady, All };
inline constexpr const char* kMetricsWindowNames[] = {"steady", "all"};

struct ServingSpec {
  ServingStack stack;
  LengthSpec input_tokens;
  LengthSpec output_tokens;
  LoadKind load_kind = LoadKind::Concurrency;
  /// The swept load values: requests in flight (closed loop: a finished request is replaced
  /// at once), or requests per second (open loop, Poisson arrivals).
  std::vector<double> loads{1};
  /// Requests the DES simulates per replica (at least 4 x its concurrency: start-up burst,
  /// steady state, drain).
  int64_t num_requests = 256;
  uint64_t seed = 1;                                     ///< the DES's length and arrival draws
  MetricsWindow metrics_window = MetricsWindow::Steady;  ///< the simulation's metrics
  DType dtype = DType::BF16;                             ///< weights and GEMMs
  DType kv_dtype = DType::BF16;
  /// The longest sequence a request can reach (input max + output max): the KV cache must
  /// hold one such sequence for a point to run.
  int64_t max_seq_tokens() const { return input_tokens.max + output_tokens.max; }
  /// The tokens the stack compares with its budget when chunked prefill is off (the longest
  /// prompt, or under RefuseSequence the longest sequence), and whether they exceed it.
  int64_t budget_checked_tokens() const {
    return stack.over_budget_prompt == OverBudgetPrompt::RefuseSequence ? max_seq_tokens()
                                                                        : input_tokens.max;
  }
  bool over_budget() const {
    return !stack.chunked_prefill && budget_checked_tokens() > stack.max_num_batched_tokens;
  }
  /// The stack refuses this job's requests: no point of it can run (status infeasible).
  bool refused_over_budget() const {
    return over_budget() && stack.over_budget_prompt != OverBudgetPrompt::Alone;
  }
};

/// Names of the stacks in configs/serving/ found from `anchor` (config_search_dirs).
std::vector<std::string> known_serving_stacks(const std::string& anchor);

/// Loads configs/serving/NAME.yaml (found from `anchor`) with its `base:` chain. Throws
/// InputError naming `referrer`/`key` and listing the known stacks when NAME is unknown,
/// and the stack file and key for a bad value.
ServingStack load_serving_stack(const std::string& name, const std::string& anchor,
                                const std::string& referrer, const std::string& key);

/// Parses one stack mapping over `base`. `file` names it in errors.
ServingStack parse_serving_stack(const YAML::Node& node, const std::string& file,
                                 const ServingStack& base);

/// Reads the job's `serving:` mapping (stack, requests {input_tokens, output_tokens, count,
/// seed}, concurrency | arrival_rate, dtype, kv_dtype; docs/inference.md "Job keys"). Stack
/// keys given in the job override the stack file's. Throws InputError.
ServingSpec parse_serving(const YamlMap& m, const std::string& anchor);

}  // namespace rapid
