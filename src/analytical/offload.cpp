#include "rapid/analytical/offload.hpp"

#include <algorithm>

#include "rapid/memory/memory_model.hpp"

namespace rapid {

OffloadTime offload_time(const ModelSpec& model, const TrainingSpec& training,
                         const HardwareSpec& hw, const ParallelConfig& par, const StageInfo& st,
                         double fwd_s, double bwd_s) {
  OffloadTime t;
  if (par.offload_layers <= 0 || st.num_layers < 2 || hw.host_link_bandwidth_Bps <= 0) return t;
  const double k = static_cast<double>(std::min<int64_t>(par.offload_layers, st.num_layers - 1));
  const double L = static_cast<double>(st.num_layers);
  // Offload needs recompute off (Megatron-Core raises otherwise): all activations kept.
  const double moe = static_cast<double>(st.num_moe_layers) / L;
  const double per_layer =
      (1.0 - moe) * layer_activation_bytes(model, training, par, false) +
      (moe > 0 ? moe * layer_activation_bytes(model, training, par, true) : 0.0);
  t.copy_s = k * per_layer / hw.host_link_bandwidth_Bps;  // PCIe, or NVLink-C2C on Grace
  t.fwd_exposed = offload_exposed(t.copy_s, fwd_s, L);
  t.bwd_exposed = offload_exposed(t.copy_s, bwd_s, L);
  return t;
}

double offload_exposed(double copy_s, double pass_s, double layers) {
  if (copy_s <= 0 || layers < 2) return 0.0;
  return std::max(0.0, copy_s - pass_s * (layers - 1.0) / layers);
}

}  // namespace rapid
