// Failures at job scale (docs/goodput.md sec 6): per-component interruption rates, the
// checkpoint write bandwidth and the restart time, from a job's `nonideal: failures:`.
#pragma once

#include <yaml-cpp/yaml.h>

#include <string>

namespace rapid {

/// The defaults' source: the Llama 3 405B pre-training snapshot (Dubey et al. 2024, "The
/// Llama 3 Herd of Models", sec 3.3.4 and Table 5): 419 unexpected interruptions in 54 days
/// on 16,384 H100 GPUs in 2,048 Grand Teton servers of 8 GPUs (sec 3.3.1). The 47 planned
/// interruptions of the same snapshot are left out (scheduled maintenance, not failures).
/// Table 5's 18 root causes (count, the paper's category) map to our components:
///  - gpu  196: faulty GPU 148, GPU SRAM 19, GPU system processor 17, silent data
///    corruption 6, GPU thermal interface + sensor 6 (the paper's "GPU" rows but HBM3);
///  - hbm   72: GPU HBM3 memory;
///  - nic   42: network switch/cable 35, NIC 7 (one NIC per GPU: the links and switch
///    ports a job uses grow with its NICs);
///  - host 109: host maintenance 32, SSD 3, power supply 3, server chassis 2, IO expansion
///    board 2, CPU 2, system memory 2, and the job-wide causes software bug 54, dependency
///    2, NCCL watchdog timeouts 7 (charged per node: they grow with the processes).
/// 196 + 72 + 42 + 109 = 419: at 16,384 GPUs the defaults give back 54 d / 419 = 3.09 h.
inline constexpr double kLlama3SnapshotHours = 54.0 * 24.0;
inline constexpr double kLlama3Gpus = 16384;
inline constexpr double kLlama3Nodes = 2048;
inline constexpr double kDefaultGpuPerHour = 196 / (kLlama3Gpus * kLlama3SnapshotHours);
inline constexpr double kDefaultHbmPerHour = 72 / (kLlama3Gpus * kLlama3SnapshotHours);
inline constexpr double kDefaultNicPerHour = 42 / (kLlama3Gpus * kLlama3SnapshotHours);
inline constexpr double kDefaultHostPerHour = 109 / (kLlama3Nodes * kLlama3SnapshotHours);
/// Llama 3 sec 3.3.1: the Tectonic store sustains 2 TB/s (7 TB/s peak) for the checkpoint
/// writes of the 16K-GPU job; shared by its 2,048 nodes that is 2e12 / 2048 B/s per node.
inline constexpr double kDefaultCheckpointWriteBps = 2e12 / kLlama3Nodes;
/// Detect, reschedule, re-initialize and reload: an assumption (docs/goodput.md), no figure
/// for it is published with the Llama 3 counts; FlashRecovery (2025) reports 150 s on 4,800
/// devices as an optimized best case.
inline constexpr double kDefaultRestartS = 10 * 60.0;

struct FailureSpec {
  bool enabled = false;
  // Unexpected interruptions per component-hour (parse_failures: the Llama 3 defaults).
  double gpu_per_hour = 0;          ///< GPU (SM, SRAM, system processor, SDC) failures per GPU-hour
  double hbm_per_hour = 0;          ///< HBM failures per GPU-hour
  double nic_per_hour = 0;          ///< network (NIC, cable, switch) failures per NIC-hour
  double host_per_hour = 0;         ///< host (CPU, memory, disk, software) failures per node-hour
  double checkpoint_write_Bps = 0;  ///< per node, to the checkpoint store
  double restart_s = 0;             ///< detect, reschedule, reload after a failure
};

/// Reads `failures:` (a mapping at dotted key `path` of `file`, e.g.
/// "nonideal.failures"): `enabled` (default true: the mapping's presence asks for it),
/// gpu_per_hour, hbm_per_hour, nic_per_hour, host_per_hour (numbers >= 0, per
/// component-hour), checkpoint_write (a bandwidth per node, > 0), restart (a time); every
/// key optional, defaults above. Throws InputError naming file, key, value, expectation.
FailureSpec parse_failures(const YAML::Node& node, const std::string& file,
                           const std::string& path);

}  // namespace rapid
