// Failures at job scale (docs/nonideal.md sec 6): per-component interruption rates, the
// checkpoint write bandwidth and the restart time, from a job's `nonideal: failures:`.
#pragma once

#include <yaml-cpp/yaml.h>

#include <string>

namespace rapid {

struct FailureSpec {
  bool enabled = false;
  // Unexpected interruptions per component-hour (defaults cited in docs/nonideal.md).
  double gpu_per_hour = 0;   ///< GPU (SM, NVLink, driver) failures per GPU-hour
  double hbm_per_hour = 0;   ///< HBM failures per GPU-hour
  double nic_per_hour = 0;   ///< network (NIC, cable, switch) failures per NIC-hour
  double host_per_hour = 0;  ///< host (CPU, memory, disk, software) failures per node-hour
  double checkpoint_write_Bps = 0;  ///< per node, to the checkpoint store
  double restart_s = 0;             ///< detect, reschedule, reload after a failure
};

/// Reads `failures:` (a mapping at `path` of `file`). Throws InputError.
FailureSpec parse_failures(const YAML::Node& node, const std::string& file,
                           const std::string& path);

}  // namespace rapid
