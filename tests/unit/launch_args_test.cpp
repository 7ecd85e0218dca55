// `rapid launch`'s argument builders (include/rapid/launch/launch_args.hpp): a hand-written
// Llama 3 70B layout, dp4 tp8 pp4 vpp2 mbs1 sp zero1 selective recompute, with the demo job's
// 512 x 8192-token step, as each stack's flags; every value derived by hand in the comments.
#include <gtest/gtest.h>

#include <string>

#include "rapid/common/error.hpp"
#include "rapid/launch/launch_args.hpp"
#include "rapid/spec/sweep_spec.hpp"

namespace rapid {
namespace {

LaunchInputs llama70b_inputs() {
  const SweepSpec spec =
      load_sweep_spec(std::string(RAPID_SOURCE_DIR) + "/jobs/llama3-70b-256xh100.yaml");
  LaunchInputs in;
  in.model = spec.model;                                   // 80 layers, h 8192, 64 heads, 8 kv
  in.global_batch_size = spec.training.global_batch_size;  // 512
  in.seq_length = spec.training.seq_length;                // 8192
  in.gpus_per_node = spec.network.gpus_per_node;           // 8 (DGX H100)
  ParallelConfig& p = in.par;
  p.dp = 4, p.tp = 8, p.pp = 4, p.vpp = 2, p.mbs = 1, p.sp = true, p.zero_stage = 1;
  p.recompute = Recompute::Selective;
  return in;
}

/// The value of `name` in `c`; "<absent>" when it is not there.
std::string value(const LaunchArgs& c, const char* name) {
  const LaunchArg* a = c.find(name);
  return a ? a->value : "<absent>";
}

TEST(LaunchArgs, MegatronFlagsOfTheLlama70bLayout) {
  const LaunchArgs c = megatron_launch(llama70b_inputs());
  // 4 * 8 * 4 = 128 GPUs: 16 nodes of 8; TP > 1 without FSDP: one CUDA connection.
  EXPECT_EQ(c.program.rfind("CUDA_DEVICE_MAX_CONNECTIONS=1 torchrun --nproc_per_node 8 "
                            "--nnodes 16 --node_rank $NODE_RANK",
                            0),
            0u)
      << c.program;
  EXPECT_NE(c.program.find(" pretrain_gpt.py"), std::string::npos);
  EXPECT_EQ(value(c, "--tensor-model-parallel-size"), "8");
  EXPECT_EQ(value(c, "--pipeline-model-parallel-size"), "4");
  EXPECT_EQ(value(c, "--num-layers-per-virtual-pipeline-stage"), "10");  // 80 / (4 * 2)
  EXPECT_EQ(value(c, "--context-parallel-size"), "1");
  EXPECT_EQ(value(c, "--sequence-parallel"), "");  // a switch
  EXPECT_EQ(value(c, "--micro-batch-size"), "1");
  EXPECT_EQ(value(c, "--global-batch-size"), "512");
  EXPECT_EQ(value(c, "--recompute-granularity"), "selective");
  EXPECT_EQ(value(c, "--recompute-method"), "<absent>");  // asserted None for selective
  EXPECT_EQ(value(c, "--use-distributed-optimizer"), "");
  EXPECT_EQ(value(c, "--num-layers"), "80");
  EXPECT_EQ(value(c, "--hidden-size"), "8192");
  EXPECT_EQ(value(c, "--ffn-hidden-size"), "28672");
  EXPECT_EQ(value(c, "--num-attention-heads"), "64");
  EXPECT_EQ(value(c, "--group-query-attention"), "");
  EXPECT_EQ(value(c, "--num-query-groups"), "8");
  EXPECT_EQ(value(c, "--kv-channels"), "<absent>");  // 8192 / 64 = 128, the default
  EXPECT_EQ(value(c, "--seq-length"), "8192");
  EXPECT_EQ(value(c, "--swiglu"), "");
  EXPECT_EQ(value(c, "--expert-model-parallel-size"), "<absent>");  // dense
  EXPECT_TRUE(c.warnings.empty()) << c.warnings.front();
}

TEST(LaunchArgs, NemoOverridesOfTheLlama70bLayout) {
  const LaunchArgs c = nemo_launch(llama70b_inputs());
  EXPECT_EQ(c.program, "nemo llm pretrain --factory llama3_70b");
  EXPECT_EQ(c.separator, '=');
  EXPECT_EQ(c.suffix, "-y");
  EXPECT_EQ(value(c, "trainer.num_nodes"), "16");
  EXPECT_EQ(value(c, "trainer.devices"), "8");
  EXPECT_EQ(value(c, "trainer.strategy.tensor_model_parallel_size"), "8");
  EXPECT_EQ(value(c, "trainer.strategy.pipeline_model_parallel_size"), "4");
  EXPECT_EQ(value(c, "trainer.strategy.virtual_pipeline_model_parallel_size"), "2");  // per rank
  EXPECT_EQ(value(c, "trainer.strategy.context_parallel_size"), "1");
  EXPECT_EQ(value(c, "trainer.strategy.sequence_parallel"), "True");
  EXPECT_EQ(value(c, "data.micro_batch_size"), "1");
  EXPECT_EQ(value(c, "data.global_batch_size"), "512");
  EXPECT_EQ(value(c, "data.seq_length"), "8192");
  EXPECT_EQ(value(c, "model.config.recompute_granularity"), "selective");
  EXPECT_EQ(value(c, "optim.config.use_distributed_optimizer"), "True");
  EXPECT_TRUE(c.warnings.empty()) << c.warnings.front();
}

TEST(LaunchArgs, TorchtitanOverridesOfTheLlama70bLayout) {
  const LaunchArgs c = torchtitan_launch(llama70b_inputs());
  // 16 nodes: the trainer under torchrun on each (run_train.sh is one node).
  EXPECT_NE(c.program.find("-m torchtitan.train"), std::string::npos) << c.program;
  EXPECT_EQ(value(c, "--job.config_file"), "CONFIG.toml");
  // zero 1 with TP: DDP refuses a 2-D mesh, so FSDP2 over dp 4 (a warning says so).
  EXPECT_EQ(value(c, "--parallelism.data_parallel_replicate_degree"), "1");
  EXPECT_EQ(value(c, "--parallelism.data_parallel_shard_degree"), "4");
  EXPECT_EQ(value(c, "--parallelism.tensor_parallel_degree"), "8");
  EXPECT_EQ(value(c, "--parallelism.pipeline_parallel_degree"), "4");
  EXPECT_EQ(value(c, "--parallelism.pipeline_parallel_schedule"), "Interleaved1F1B");
  // 8 stages of 10 layers: 7 split points.
  EXPECT_EQ(value(c, "--parallelism.pipeline_parallel_split_points"),
            "layers.10,layers.20,layers.30,layers.40,layers.50,layers.60,layers.70");
  EXPECT_EQ(value(c, "--parallelism.pipeline_parallel_microbatch_size"), "1");
  EXPECT_EQ(value(c, "--parallelism.context_parallel_degree"), "1");
  EXPECT_EQ(value(c, "--training.local_batch_size"), "128");  // 512 / dp 4, in micro-batches of 1
  EXPECT_EQ(value(c, "--training.global_batch_size"), "512");
  EXPECT_EQ(value(c, "--training.seq_len"), "8192");
  EXPECT_EQ(value(c, "--activation_checkpoint.mode"), "selective");
  EXPECT_EQ(value(c, "--activation_checkpoint.selective_ac_option"), "op");
  ASSERT_EQ(c.warnings.size(), 2u);  // zero 1 as FSDP2; selective as per-op
  EXPECT_NE(c.warnings[0].find("zero 1"), std::string::npos) << c.warnings[0];
  EXPECT_NE(c.warnings[1].find("recompute=selective"), std::string::npos) << c.warnings[1];
}

TEST(LaunchArgs, RecomputeMethodsPerStack) {
  LaunchInputs in = llama70b_inputs();
  in.par.recompute = Recompute::Full;
  in.par.recompute_method = RecomputeMethod::Block;
  in.par.recompute_layers = 3;
  LaunchArgs m = megatron_launch(in);
  EXPECT_EQ(value(m, "--recompute-granularity"), "full");
  EXPECT_EQ(value(m, "--recompute-method"), "block");
  EXPECT_EQ(value(m, "--recompute-num-layers"), "3");
  EXPECT_EQ(value(nemo_launch(in), "model.config.recompute_method"), "block");
  // torchtitan checkpoints whole layers only: full, with a warning.
  LaunchArgs t = torchtitan_launch(in);
  EXPECT_EQ(value(t, "--activation_checkpoint.mode"), "full");
  EXPECT_NE(t.warnings.back().find("full(block 3)"), std::string::npos) << t.warnings.back();
  // Every 2nd layer: torchtitan's layer SAC; Megatron has no such method.
  in.par.recompute_method = RecomputeMethod::Every;
  in.par.recompute_layers = 2;
  t = torchtitan_launch(in);
  EXPECT_EQ(value(t, "--activation_checkpoint.mode"), "selective");
  EXPECT_EQ(value(t, "--activation_checkpoint.selective_ac_option"), "2");
  m = megatron_launch(in);
  EXPECT_EQ(value(m, "--recompute-method"), "uniform");
  EXPECT_EQ(value(m, "--recompute-num-layers"), "1");
  ASSERT_EQ(m.warnings.size(), 1u);
  EXPECT_NE(m.warnings[0].find("every 2"), std::string::npos) << m.warnings[0];
}

TEST(LaunchArgs, ZeroStagesPerStack) {
  LaunchInputs in = llama70b_inputs();
  in.par.zero_stage = 3;
  const LaunchArgs m = megatron_launch(in);
  EXPECT_EQ(value(m, "--use-distributed-optimizer"), "<absent>");
  EXPECT_EQ(value(m, "--use-megatron-fsdp"), "");
  EXPECT_EQ(value(m, "--data-parallel-sharding-strategy"), "optim_grads_params");
  EXPECT_EQ(m.program.find("CUDA_DEVICE_MAX_CONNECTIONS=1"), std::string::npos);  // FSDP: not 1
  EXPECT_EQ(value(nemo_launch(in), "trainer.strategy.fsdp"), "megatron");
  const LaunchArgs t = torchtitan_launch(in);
  EXPECT_EQ(value(t, "--parallelism.data_parallel_shard_degree"), "4");
  EXPECT_EQ(t.warnings.size(), 1u);  // only the selective recompute
  // Pure data parallelism without ZeRO-3: torchtitan's DDP (replicate degree).
  in.par = ParallelConfig{};
  in.par.dp = 16, in.par.zero_stage = 0;
  const LaunchArgs d = torchtitan_launch(in);
  EXPECT_EQ(value(d, "--parallelism.data_parallel_replicate_degree"), "16");
  EXPECT_EQ(value(d, "--parallelism.data_parallel_shard_degree"), "1");
  EXPECT_EQ(value(d, "--parallelism.pipeline_parallel_schedule"), "<absent>");  // pp 1
  EXPECT_EQ(value(d, "--training.local_batch_size"), "1");  // mbs; 512 / 16 = 32 accumulated
  EXPECT_TRUE(d.warnings.empty()) << d.warnings.front();
}

TEST(LaunchArgs, MoeFlagsAndOneNode) {
  LaunchInputs in;
  in.model = llama70b_inputs().model;
  in.model.name = "mixtral-8x7b";
  in.model.num_layers = 32;
  in.model.moe.num_experts = 8, in.model.moe.top_k = 2, in.model.moe.expert_ffn_hidden_size = 14336;
  in.global_batch_size = 64, in.seq_length = 4096;
  in.par.dp = 4, in.par.tp = 2, in.par.ep = 4, in.par.sp = true;  // 8 GPUs, one node
  const LaunchArgs m = megatron_launch(in);
  EXPECT_EQ(m.program,
            "CUDA_DEVICE_MAX_CONNECTIONS=1 torchrun --nproc_per_node 8 --nnodes 1 pretrain_gpt.py");
  EXPECT_EQ(value(m, "--num-experts"), "8");
  EXPECT_EQ(value(m, "--moe-router-topk"), "2");
  EXPECT_EQ(value(m, "--expert-model-parallel-size"), "4");
  EXPECT_EQ(value(m, "--expert-tensor-parallel-size"), "1");
  EXPECT_EQ(value(m, "--moe-layer-freq"), "<absent>");  // every layer
  EXPECT_EQ(value(nemo_launch(in), "trainer.strategy.expert_model_parallel_size"), "4");
  const LaunchArgs t = torchtitan_launch(in);
  EXPECT_EQ(t.program, "NGPU=8 CONFIG_FILE=CONFIG.toml ./run_train.sh");
  EXPECT_EQ(value(t, "--parallelism.expert_parallel_degree"), "4");
}

TEST(LaunchArgs, RenderedLinesAndBadStack) {
  const LaunchArgs n = nemo_launch(llama70b_inputs());
  const std::string text = render_launch(n, {"layout test"});
  EXPECT_EQ(text.rfind("# layout test\n# source: ", 0), 0u) << text;
  EXPECT_NE(text.find(" \\\n    data.micro_batch_size=1 \\\n"), std::string::npos) << text;
  EXPECT_EQ(text.substr(text.size() - 10), " \\\n    -y\n");
  EXPECT_NE(render_launch(megatron_launch(llama70b_inputs()), {}).find("--micro-batch-size 1 \\"),
            std::string::npos);
  EXPECT_EQ(parse_launch_stack("torchtitan"), LaunchStack::Torchtitan);
  try {
    parse_launch_stack("deepspeed");
    FAIL() << "no InputError";
  } catch (const InputError& e) {
    EXPECT_EQ(e.key(), "--stack");
    EXPECT_EQ(e.value(), "deepspeed");
    EXPECT_EQ(e.expected(), "megatron, nemo or torchtitan");
  }
  EXPECT_EQ(launch_nodes(256, 8).nodes, 32);
  EXPECT_EQ(launch_nodes(4, 8).per_node, 4);
  EXPECT_EQ(launch_nodes(12, 8).nodes, 2);  // 12 GPUs start 8 per node (a warning)
}

}  // namespace
}  // namespace rapid
