#include "collective_tables.hpp"

#include <fmt/format.h>

#include "csv_table.hpp"
#include "rapid/cost/collective_cost.hpp"
#include "rapid/spec/yaml_reader.hpp"

namespace rapid {

namespace {

// One all-reduce row: predicted busbw (GB/s) of `bytes` over `nodes` x `per_node` GPUs.
ValidationRow allreduce_row(const CollectiveCost& c, double bytes, int64_t per_node, int64_t nodes,
                            double measured_GBps) {
  const GroupShape g{per_node * nodes, per_node, nodes};
  const CollectiveEstimate e = c.estimate(CollectiveKind::AllReduce, bytes, g);
  const std::string where = nodes > 1 ? fmt::format("{} nodes x {} GPUs", nodes, per_node)
                                      : fmt::format("{} GPUs", per_node);
  return {fmt::format("{:.0f} B x {} ({})", bytes, where, algorithm_name(e.algorithm)),
          c.busbw_Bps(CollectiveKind::AllReduce, bytes, g) / 1e9, measured_GBps};
}

}  // namespace

const std::string& a3_mega_network_yaml() {
  // Google Cloud, "GPU machine types" (A3 Mega: a3-megagpu-8g, 8 H100 80GB on NVLink4 /
  // NVSwitch, 8 NICs of 200 Gbps for GPU traffic, GPUDirect-TCPXO, 1,800 Gbps per VM with
  // the host NIC) and "Maximize GPU network bandwidth with GPUDirect-TCPXO". The fabric
  // behind the NICs is not published: one leaf, non-blocking, is assumed; latencies and
  // the NCCL curve keep their defaults (NCCL tuning.cc figures, measured on InfiniBand).
  static const std::string text = R"(name: gcp-a3-mega
gpus_per_node: 8
nics_per_node: 8
leaf_bandwidth: 200Gbps
nodes_per_leaf: 32
)";
  return text;
}

ValidationTable validate_nccl_dgx_a100(const ReferenceContext& ctx) {
  const std::string file = "nccl_allreduce_busbw_dgx_a100.csv";
  CsvTable t(reference_file(ctx, file));
  const CollectiveCost c(load_hardware(ctx, "a100-sxm4-80gb"),
                         load_network(ctx, "dgx-a100-superpod"));
  ValidationTable out{file, "all_reduce busbw GB/s", {}};
  for (size_t i = 0; i < t.rows(); ++i)
    out.rows.push_back(allreduce_row(c, t.number(i, "size_bytes"), t.integer(i, "gpus"), 1,
                                     t.number(i, "busbw_gbps")));
  return out;
}

ValidationTable validate_nccl_2node_h100(const ReferenceContext& ctx) {
  const std::string file = "nccl_allreduce_busbw_2node.csv";
  CsvTable t(reference_file(ctx, file));
  const NetworkSpec net =
      parse_network(load_yaml_text(a3_mega_network_yaml(), "<inline A3 Mega network>"),
                    "<inline A3 Mega network>");
  const CollectiveCost c(load_hardware(ctx, "h100-sxm5-80gb"), net);
  ValidationTable out{file, "all_reduce busbw GB/s", {}};
  for (size_t i = 0; i < t.rows(); ++i)
    out.rows.push_back(allreduce_row(c, t.number(i, "size_bytes"), t.integer(i, "gpus_per_node"),
                                     t.integer(i, "nodes"), t.number(i, "busbw_gbps")));
  return out;
}

}  // namespace rapid
