#include "rapid/cost/interference.hpp"

#include <algorithm>

namespace rapid {

namespace {

Contention profile(const HardwareSpec& hw, const NetworkSpec& net, const TrainingSpec& t,
                   InterferenceModel::Profile p) {
  const double nvlink =
      (net.nvlink_bandwidth_Bps > 0 ? net.nvlink_bandwidth_Bps : hw.nvlink_bandwidth_Bps) *
      hw.nvlink_efficiency;
  const double nic = net.nic_bandwidth_per_gpu_Bps() * net.network_efficiency;
  // HBM traffic of the collective: 2 bytes per byte sent, but, shared max-min fairly with
  // an HBM-bound kernel beside it, never more than half of what HBM delivers (the share
  // comm_slowdown() grants the collective; the collective then runs HBM-bound, slower than
  // its links). Without the cap, links faster than half of HBM (a 2x-NVLink variant: 2 x
  // 1440 GB/s on a 2.85 TB/s H100) would take all of HBM from the kernel.
  const double hbm_half = 0.5 * hw.hbm_bandwidth_Bps * hw.memory_efficiency;
  const auto taken = [&](double link_Bps) {
    return std::min(net.nccl_hbm_bytes_per_byte * link_Bps, hbm_half);
  };
  switch (p) {
    case InterferenceModel::TpGather:
      return {t.framework.tp_overlap_sms_gather, taken(nvlink)};
    case InterferenceModel::TpScatter:
      return {t.framework.tp_overlap_sms_scatter, taken(nvlink)};
    case InterferenceModel::DpNvlink:
      return {net.nccl_channels_nvlink, taken(nvlink)};
    case InterferenceModel::DpNetwork:
      return {net.nccl_channels_network, taken(nic)};
  }
  return {};
}

/// The compute cost under profile `p`: the GEMMs marked fp8 in the recipe's dtype.
ComputeCost profiled_cost(const HardwareSpec& hw, const NetworkSpec& net,
                          const TrainingSpec& training, AttentionImpl attention,
                          InterferenceModel::Profile p) {
  return ComputeCost(hw, training.dtype, attention, profile(hw, net, training, p),
                     quantized_gemm_dtype(training.framework.fp8.recipe));
}

}  // namespace

InterferenceModel::InterferenceModel(const HardwareSpec& hw, const NetworkSpec& net,
                                     const TrainingSpec& training, AttentionImpl attention)
    : costs_{profiled_cost(hw, net, training, attention, TpGather),
             profiled_cost(hw, net, training, attention, TpScatter),
             profiled_cost(hw, net, training, attention, DpNvlink),
             profiled_cost(hw, net, training, attention, DpNetwork)},
      hbm_Bps_(hw.hbm_bandwidth_Bps * hw.memory_efficiency) {}

double InterferenceModel::comm_slowdown(Profile p, const Op& op, double op_s) const {
  const double need = contention(p).hbm_Bps;
  if (need <= 0 || op_s <= 0) return 1.0;
  const double op_rate = op.bytes / op_s;
  // Max-min fair: the collective gets what the op leaves, at least half of HBM.
  const double granted = std::max(0.5 * hbm_Bps_, hbm_Bps_ - op_rate);
  return std::max(1.0, need / granted);
}

}  // namespace rapid
