// What the three stacks' launch builders share (private to src/launch).
#pragma once

#include <fmt/format.h>

#include <string>
#include <utility>

#include "rapid/launch/launch_args.hpp"

namespace rapid::launch_detail {

inline std::string num(int64_t v) {
  return std::to_string(v);
}

/// Appends an argument (an empty value: a switch).
inline void add(LaunchArgs& c, std::string name, std::string value = {}) {
  c.args.push_back({std::move(name), std::move(value)});
}

/// The nodes of the layout's GPUs, with a warning when they do not fill whole nodes.
inline LaunchNodes nodes_of(const LaunchInputs& in, LaunchArgs& c) {
  const int64_t gpus = in.par.num_gpus();
  const LaunchNodes n = launch_nodes(gpus, in.gpus_per_node);
  if (n.nodes * n.per_node != gpus)
    c.warnings.push_back(fmt::format(
        "{} GPUs do not fill {} nodes of {} GPUs: the launcher starts {} processes on each node",
        gpus, n.nodes, n.per_node, n.per_node));
  return n;
}

/// torchrun's rendezvous on several nodes (Lightning docs, "Run on an on-prem cluster
/// (intermediate)", lightning.ai/docs/pytorch/latest/clouds/cluster_intermediate_2.html:
/// `torchrun --nproc_per_node=<GPUS_PER_NODE> --nnodes=<NUM_NODES> --node_rank <NODE_RANK>
/// --master_addr <MASTER_ADDR> --master_port <MASTER_PORT>`); one node needs none.
inline std::string torchrun(const LaunchNodes& n) {
  std::string s = fmt::format("torchrun --nproc_per_node {} --nnodes {}", n.per_node, n.nodes);
  if (n.nodes > 1)
    s += " --node_rank $NODE_RANK --master_addr $MASTER_ADDR --master_port $MASTER_PORT";
  return s;
}

inline std::string multinode_note(const LaunchNodes& n) {
  return fmt::format(
      "run the command on each of the {} nodes with NODE_RANK 0..{} and MASTER_ADDR, "
      "MASTER_PORT of node 0 (torchrun's rendezvous)",
      n.nodes, n.nodes - 1);
}

/// Transformer layers per (virtual) pipeline stage when pp * vpp divides them, else 0.
inline int64_t layers_per_chunk(const LaunchInputs& in) {
  const int64_t chunks = int64_t{in.par.pp} * in.par.vpp;
  return in.model.num_layers % chunks == 0 ? in.model.num_layers / chunks : 0;
}

}  // namespace rapid::launch_detail
