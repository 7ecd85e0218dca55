// torchtitan, the job_config.py era ("era B" of docs/launch.md): `NGPU=G CONFIG_FILE=...
// ./run_train.sh --section.key value ...` on one node, the same trainer under torchrun on
// several. Sources, cited at each key:
//  [JC-B] pytorch/torchtitan torchtitan/config/job_config.py @
//         000204a4a8bf3d0f31adc44fc29855fbb6ea13d8 (every --section.key name: dataclass
//         Parallelism, Training, ActivationCheckpoint)
//  [RT-B] pytorch/torchtitan run_train.sh @ 47f63f4ba5d38e6095eec3b74a9eba916255c73b
//         (NGPU, CONFIG_FILE; torchrun --nproc_per_node=${NGPU} with a localhost rendezvous
//         -m torchtitan.train --job.config_file ${CONFIG_FILE})
//  [PZ-B] pytorch/torchtitan torchtitan/models/llama3/infra/parallelize.py @
//         81c1243395b46ce693a0681cfe1bb20e9b9433fb (sequence parallel with every TP; DDP
//         raises "DDP has not supported > 1D parallelism"; AC modes full / selective "op" or
//         an integer)
// docs/launch.md has the table.
#include <fmt/format.h>

#include "launch/launch_common.hpp"
#include "rapid/launch/launch_args.hpp"

namespace rapid {

namespace {

using launch_detail::add;
using launch_detail::num;

/// [JC-B] pipeline_parallel_split_points: "comma-separated names of modules to use as the
/// beginning of a split point", e.g. "layers.0,layers.2"; stages = points + 1. The layers
/// split evenly over pp * vpp stages (earlier stages one layer fewer when uneven).
std::string split_points(int64_t layers, int64_t stages) {
  std::string s;
  for (int64_t k = 1; k < stages; ++k)
    s += fmt::format("{}layers.{}", k > 1 ? "," : "", k * layers / stages);
  return s;
}

/// [JC-B] data_parallel_replicate_degree (DDP) and data_parallel_shard_degree (FSDP2):
/// ZeRO-3 is FSDP2 over dp; without ZeRO-3, DDP where dp is the only dimension, FSDP2
/// otherwise ([PZ-B]: DDP refuses a mesh of more than one dimension).
void data_parallel_keys(const ParallelConfig& p, LaunchArgs& c) {
  const bool one_dim = p.tp == 1 && p.pp == 1 && p.cp == 1;
  const bool shard = p.zero_stage == 3 || !one_dim;
  add(c, "--parallelism.data_parallel_replicate_degree", num(shard ? 1 : p.dp));
  add(c, "--parallelism.data_parallel_shard_degree", num(shard ? p.dp : 1));
  if (p.dp == 1 || p.zero_stage == 3) return;
  if (shard)
    c.warnings.push_back(fmt::format(
        "zero {}: torchtitan's DDP (replicate degree) refuses TP/PP/CP meshes (parallelize.py: "
        "\"DDP has not supported > 1D parallelism\"), so dp {} is FSDP2 (ZeRO-3: parameters and "
        "gradients sharded too)",
        p.zero_stage, p.dp));
  else if (p.zero_stage > 0)
    c.warnings.push_back(fmt::format(
        "zero {}: torchtitan has no ZeRO-1/2 (DDP, FSDP2 or HSDP only): written as DDP, optimizer "
        "states replicated; data_parallel_shard_degree {} (FSDP2, ZeRO-3) shards them",
        p.zero_stage, p.dp));
}

/// [JC-B] ActivationCheckpoint: mode "selective", "full" or "none"; selective_ac_option an
/// integer n (every n-th layer) or "op" (per-op). The nearest mode that keeps no more
/// memory when there is no exact one.
void checkpoint_keys(const ParallelConfig& p, LaunchArgs& c) {
  if (p.recompute == Recompute::None) {
    add(c, "--activation_checkpoint.mode", "none");
  } else if (p.recompute == Recompute::Op || p.recompute == Recompute::Selective) {
    if (p.recompute == Recompute::Selective)
      c.warnings.push_back(
          "recompute=selective (Megatron's attention core only) has no torchtitan mode: written "
          "as per-op selective checkpointing (\"op\": more recomputed, no more memory)");
    add(c, "--activation_checkpoint.mode", "selective");
    add(c, "--activation_checkpoint.selective_ac_option", "op");
  } else if (p.recompute_method == RecomputeMethod::Every) {
    add(c, "--activation_checkpoint.mode", "selective");
    add(c, "--activation_checkpoint.selective_ac_option", num(p.recompute_layers));
  } else {
    if (p.partial_recompute())
      c.warnings.push_back(fmt::format(
          "recompute {}: torchtitan checkpoints whole layers, every layer or every n-th: written "
          "as full (every layer)",
          p.describe_recompute()));
    add(c, "--activation_checkpoint.mode", "full");
  }
}

}  // namespace

LaunchArgs torchtitan_launch(const LaunchInputs& in) {
  const ParallelConfig& p = in.par;
  LaunchArgs c;
  c.stack = LaunchStack::Torchtitan;
  c.sources = {
      "pytorch/torchtitan torchtitan/config/job_config.py @ 000204a4a8bf (every --section.key "
      "name; the dataclass config era, before torchtitan/config/configs/)",
      "pytorch/torchtitan run_train.sh @ 47f63f4ba5d3 (NGPU, CONFIG_FILE, -m torchtitan.train "
      "--job.config_file)",
      "pytorch/torchtitan torchtitan/models/llama3/infra/parallelize.py @ 81c1243395b4 (SP with "
      "TP, DDP only on one dimension, AC modes)"};
  const LaunchNodes nodes = launch_detail::nodes_of(in, c);
  if (nodes.nodes == 1) {
    c.program = fmt::format("NGPU={} CONFIG_FILE=CONFIG.toml ./run_train.sh", nodes.per_node);
  } else {
    // [RT-B]'s torchrun is one node (localhost rendezvous): the same trainer module on each.
    c.program = launch_detail::torchrun(nodes) + " -m torchtitan.train";
    add(c, "--job.config_file", "CONFIG.toml");
    c.notes.push_back(launch_detail::multinode_note(nodes) + "; run_train.sh starts one node only");
  }
  data_parallel_keys(p, c);
  add(c, "--parallelism.tensor_parallel_degree", num(p.tp));
  if (p.tp > 1 && !p.sp)
    c.warnings.push_back(
        "sp false: torchtitan applies sequence parallel with every TP degree "
        "(parallelize.py apply_tp; no flag in job_config.py), so it is on");
  add(c, "--parallelism.pipeline_parallel_degree", num(p.pp));
  if (p.pp > 1) {
    // [JC-B]: "Looped schedules (e.g. Interleaved1F1B) require ... split_points = number of
    // stages - 1"; microbatches = local_batch_size / pipeline_parallel_microbatch_size.
    add(c, "--parallelism.pipeline_parallel_schedule", p.vpp > 1 ? "Interleaved1F1B" : "1F1B");
    add(c, "--parallelism.pipeline_parallel_split_points",
        split_points(in.model.num_layers, int64_t{p.pp} * p.vpp));
    add(c, "--parallelism.pipeline_parallel_microbatch_size", num(p.mbs));
    if (launch_detail::layers_per_chunk(in) == 0)
      c.warnings.push_back(fmt::format("uneven pipeline split: {} layers on {} stages",
                                       in.model.num_layers, p.pp * p.vpp));
  }
  add(c, "--parallelism.context_parallel_degree", num(p.cp));
  if (in.model.moe.enabled()) {
    add(c, "--parallelism.expert_parallel_degree", num(p.ep));
    if (p.ep > 1 && (p.ep < p.cp || p.ep > int64_t{p.dp} * p.cp))
      c.warnings.push_back(fmt::format(
          "ep {}: torchtitan's dp2ep wants context_parallel_degree <= expert_parallel_degree <= "
          "data_parallel_shard_degree * context_parallel_degree (job_config.py)",
          p.ep));
    if (p.etp > 1)
      c.warnings.push_back(fmt::format(
          "etp {}: no expert tensor parallel key in job_config.py, not written", p.etp));
  }
  // [JC-B] Training: local_batch_size "per-device batch size"; global_batch_size "defaults to
  // local_batch_size * data-parallel degree" (more: gradient accumulation). With PP the
  // device batch is the step's share, split into micro-batches of mbs.
  const int64_t local = p.pp > 1 ? in.global_batch_size / p.dp : p.mbs;
  add(c, "--training.local_batch_size", num(local));
  add(c, "--training.global_batch_size", num(in.global_batch_size));
  add(c, "--training.seq_len", num(in.seq_length));
  checkpoint_keys(p, c);
  if (p.offload_layers > 0)
    c.warnings.push_back(fmt::format(
        "cpu offload of {} layers' activations: torchtitan's training.enable_cpu_offload moves "
        "FSDP parameters, gradients and optimizer states instead, not written",
        p.offload_layers));
  c.notes.push_back(fmt::format(
      "CONFIG.toml: a torchtitan train config whose [model] is {} (name and flavor); its "
      "parallelism and batch keys are overridden here",
      in.model.name));
  return c;
}

}  // namespace rapid
