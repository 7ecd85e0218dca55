// NeMo 2.0: `nemo llm pretrain --factory RECIPE key=value ... -y` (NeMo-Run overrides of the
// recipe's attributes). Sources, cited at each key:
//  [STRAT]   NVIDIA/NeMo nemo/lightning/pytorch/strategies/megatron_strategy.py @
//            c1a25db23cfed64c15d3a0ac6c37dc424a7db994 (MegatronStrategy's arguments)
//  [PAR2]    NVIDIA/NeMo docs/source/features/parallelisms.rst (NeMo 2.0 revision; CLI examples
//            `trainer.strategy.tensor_model_parallel_size=2`)
//  [BATCH]   NeMo's batching doc (data.micro_batch_size, data.global_batch_size)
//  [RREADME] NVIDIA/NeMo nemo/collections/llm/recipes/README.md @ e2de75c15ea5 (`nemo llm
//            <task> --factory <recipe> key=value`, `-y`)
//  [R8B]     NVIDIA/NeMo nemo/collections/llm/recipes/llama3_8b.py @ 00617962f84f
//            (MockDataModule(seq_length, global_batch_size, micro_batch_size), trainer
//            devices / num_nodes)
//  [PERF]    NVIDIA/NeMo scripts/performance/helpers.py @ 02a0e6a5dc42 (recompute, expert
//            tensor parallel, Megatron-FSDP keys)
//  [PLL70]   NVIDIA/NeMo scripts/performance/llm/finetune_llama3_70b.py @ cfb164d58dbf
//            (recipe.optim.config.use_distributed_optimizer)
// docs/launch.md has the table.
#include <fmt/format.h>

#include <algorithm>

#include "launch/launch_common.hpp"
#include "rapid/launch/launch_args.hpp"

namespace rapid {

namespace {

using launch_detail::add;
using launch_detail::num;

const char* py_bool(bool b) {
  return b ? "True" : "False";
}

/// NeMo's recipe module named after the model: "llama3-70b" -> "llama3_70b".
std::string recipe_name(const std::string& model) {
  std::string r = model;
  std::replace(r.begin(), r.end(), '-', '_');
  std::replace(r.begin(), r.end(), '.', '_');
  return r.empty() ? "RECIPE" : r;
}

/// [PERF] set_recompute_configs: model.config.recompute_granularity ('full'/'selective'),
/// recompute_method ('uniform'/'block'), recompute_num_layers.
void recompute_keys(const ParallelConfig& p, LaunchArgs& c) {
  if (p.recompute == Recompute::None) {
    add(c, "model.config.recompute_granularity", "None");
    return;
  }
  if (p.recompute == Recompute::Selective) {
    add(c, "model.config.recompute_granularity", "selective");
    return;
  }
  std::string method = p.recompute_method == RecomputeMethod::Block ? "block" : "uniform";
  int64_t layers = p.recompute_layers;
  if (p.recompute == Recompute::Op || p.recompute_method == RecomputeMethod::Every) {
    c.warnings.push_back(fmt::format(
        "recompute {} has no NeMo (Megatron-Core) equivalent: written as full recompute of "
        "every layer (more recompute, no more memory)",
        p.describe_recompute()));
    method = "uniform", layers = 1;
  }
  add(c, "model.config.recompute_granularity", "full");
  add(c, "model.config.recompute_method", method);
  add(c, "model.config.recompute_num_layers", num(layers));
}

}  // namespace

LaunchArgs nemo_launch(const LaunchInputs& in) {
  const ParallelConfig& p = in.par;
  LaunchArgs c;
  c.stack = LaunchStack::Nemo;
  c.separator = '=';
  c.suffix = "-y";  // [RREADME]: "avoid user confirmation prompts"
  c.sources = {
      "NVIDIA/NeMo nemo/lightning/pytorch/strategies/megatron_strategy.py @ c1a25db23cfe "
      "(trainer.strategy.*)",
      "NVIDIA/NeMo nemo/collections/llm/recipes/README.md @ e2de75c15ea5 (nemo llm pretrain "
      "--factory, -y); recipes/llama3_8b.py @ 00617962f84f (trainer.*, data.*)",
      "NVIDIA/NeMo scripts/performance/helpers.py @ 02a0e6a5dc42 (model.config.recompute_*, "
      "expert_tensor_parallel_size, Megatron-FSDP); scripts/performance/llm/"
      "finetune_llama3_70b.py @ cfb164d58dbf (optim.config.use_distributed_optimizer)"};
  const LaunchNodes nodes = launch_detail::nodes_of(in, c);
  const std::string recipe = recipe_name(in.model.name);
  c.program = "nemo llm pretrain --factory " + recipe;
  add(c, "trainer.num_nodes", num(nodes.nodes));   // [R8B] nl.Trainer(num_nodes=...)
  add(c, "trainer.devices", num(nodes.per_node));  // [R8B] nl.Trainer(devices=...)
  // [STRAT] MegatronStrategy(tensor_model_parallel_size, pipeline_model_parallel_size,
  // virtual_pipeline_model_parallel_size (virtual stages per rank, None: off),
  // context_parallel_size, sequence_parallel, expert_model_parallel_size); [PAR2] CLI form.
  add(c, "trainer.strategy.tensor_model_parallel_size", num(p.tp));
  add(c, "trainer.strategy.pipeline_model_parallel_size", num(p.pp));
  add(c, "trainer.strategy.virtual_pipeline_model_parallel_size",
      p.vpp > 1 ? num(p.vpp) : "None");  // [PERF]: None if vp_size == 1
  add(c, "trainer.strategy.context_parallel_size", num(p.cp));
  add(c, "trainer.strategy.sequence_parallel", py_bool(p.sp));
  if (in.model.moe.enabled()) {
    add(c, "trainer.strategy.expert_model_parallel_size", num(p.ep));
    add(c, "trainer.strategy.expert_tensor_parallel_size", num(p.etp));  // [PERF]
  }
  if (launch_detail::layers_per_chunk(in) == 0)
    c.warnings.push_back(fmt::format(
        "uneven pipeline split ({} layers on {} x {} stages): not written (Megatron-Core's "
        "first/last stage layer counts)",
        in.model.num_layers, p.pp, p.vpp));
  add(c, "data.micro_batch_size", num(p.mbs));                  // [BATCH], [R8B]
  add(c, "data.global_batch_size", num(in.global_batch_size));  // [BATCH], [R8B]
  add(c, "data.seq_length", num(in.seq_length));                // [R8B] MockDataModule(seq_length)
  recompute_keys(p, c);
  if (p.zero_stage <= 1) {
    // [PLL70] recipe.optim.config.use_distributed_optimizer; [PAR2]: the distributed optimizer
    // (ZeRO-1) is OptimizerConfig(use_distributed_optimizer=True).
    add(c, "optim.config.use_distributed_optimizer", py_bool(p.zero_stage == 1));
  } else {
    // [PERF] set_mcore_fsdp_configs: Megatron-FSDP.
    add(c, "trainer.strategy.fsdp", "megatron");
    add(c, "trainer.strategy.ddp.data_parallel_sharding_strategy",
        p.zero_stage == 2 ? "optim_grads" : "optim_grads_params");
    add(c, "model.config.init_model_with_meta_device", "True");
    add(c, "model.config.gradient_accumulation_fusion", "False");
    c.notes.push_back(fmt::format(
        "zero {} as Megatron-FSDP ({}; the names read as ZeRO stages): needs a NeMo whose "
        "MegatronStrategy takes fsdp (megatron_strategy.py @ c1a25db23cfe does not)",
        p.zero_stage, p.zero_stage == 2 ? "optim_grads" : "optim_grads_params"));
  }
  if (p.offload_layers > 0)
    c.warnings.push_back(fmt::format(
        "cpu offload of {} layers' activations: no NeMo key among those cited, not written",
        p.offload_layers));
  c.notes.push_back(fmt::format(
      "--factory {}: NeMo's recipe named after the model (nemo/collections/llm/recipes/{}.py); "
      "the model's shapes come from the recipe, these overrides set the layout and batch",
      recipe, recipe));
  return c;
}

}  // namespace rapid
