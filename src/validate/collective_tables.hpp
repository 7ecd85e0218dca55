// Collective model against measured nccl-tests bus bandwidth (../shared/reference).
#pragma once

#include <string>

#include "validation_tables.hpp"

namespace rapid {

/// nccl_allreduce_busbw_dgx_a100.csv: all-reduce busbw (GB/s) of 2, 4 and 8 A100 GPUs in
/// one DGX A100 (configs/networks/dgx-a100-superpod.yaml, configs/hardware/
/// a100-sxm4-80gb.yaml). Rows in file order; labels "<bytes> B x <gpus> GPUs (<algorithm>)".
ValidationTable validate_nccl_dgx_a100(const ReferenceContext& ctx);

/// nccl_allreduce_busbw_2node.csv: all-reduce busbw (GB/s) of 2 nodes x 8 H100 on GCP A3
/// Mega (not a DGX: the network is the inline spec a3_mega_network_yaml(), the GPU
/// configs/hardware/h100-sxm5-80gb.yaml). Reported, not bounded.
ValidationTable validate_nccl_2node_h100(const ReferenceContext& ctx);

/// The inline network of GCP A3 Mega used by validate_nccl_2node_h100 (YAML text with its
/// sources; every NCCL curve parameter left at its default).
const std::string& a3_mega_network_yaml();

}  // namespace rapid
