// The system input, part 1: one GPU (configs/hardware/*.yaml). Numbers come from vendor
// datasheets (cited in each YAML file); efficiency factors are calibration values.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <yaml-cpp/yaml.h>

#include "rapid/spec/attention_impl.hpp"
#include "rapid/spec/units.hpp"

namespace rapid {

/// FP4 (E2M1, Blackwell's NVFP4/MXFP4 tensor-core operands) is never a training dtype: the
/// GEMMs of an `nvfp4` recipe run in it (framework_spec.hpp Fp8Recipe).
enum class DType : uint8_t { FP32, TF32, FP16, BF16, FP8, FP4 };
inline constexpr int kNumDTypes = 6;

/// Whole bytes per element of a dtype (TF32 is stored as 4 bytes; FP4 packs two elements
/// into a byte, so 1 here: use dtype_size_bytes for operand traffic).
int dtype_bytes(DType t);
/// Bytes per element, fractional: 0.5 for FP4 (E2M1, two per byte), else dtype_bytes.
double dtype_size_bytes(DType t);
/// "fp32", "tf32", "fp16", "bf16", "fp8", "fp4".
const char* dtype_name(DType t);
/// The dtype of a dtype_name(), or nullopt.
std::optional<DType> dtype_from_name(std::string_view name);

struct HardwareSpec {
  std::string name;
  /// The plain hardware file a variant derives from (docs/variants.md; its own name for a
  /// plain file, empty when built by hand): the software stack's per-GPU factors
  /// (configs/frameworks end_to_end:) are the base GPU's.
  std::string base_name;
  /// The GPU type whose stack factors (configs/frameworks end_to_end:) this one runs when
  /// no stack lists it: the same die and kernels, as its hardware file says (key
  /// `stack_factors_from`; empty: none). Its predictions stay `extrapolated` until a
  /// published table runs it (docs/model.md sec 9).
  std::string stack_factors_from;
  int64_t num_sms = 0;
  double sm_clock_Hz = 0;                              ///< boost clock the peaks refer to
  std::array<double, kNumDTypes> tensor_peak_FLOPs{};  ///< dense tensor-core peak, 0 = none
  double vector_peak_FLOPs = 0;                        ///< FP32 non-tensor peak
  double hbm_capacity_bytes = 0;
  double hbm_bandwidth_Bps = 0;
  double l2_size_bytes = 0;
  double l2_bandwidth_Bps = 0;  ///< aggregate L2 -> SM read bandwidth
  double l2_multicast = 1;      ///< SMs sharing one operand load (Hopper TMA multicast: 2)
  double smem_per_sm_bytes = 0;
  double nvlink_bandwidth_Bps = 0;  ///< per GPU, per direction, all links together
  double pcie_bandwidth_Bps = 0;    ///< per direction
  /// The CPU-GPU link per direction, which activation offload crosses (docs/model.md sec 15):
  /// PCIe on HGX boards (the default: pcie_bandwidth), NVLink-C2C on Grace superchips
  /// (GB200: 900 GB/s bidirectional, NVIDIA GB200 NVL72 datasheet).
  double host_link_bandwidth_Bps = 0;
  double kernel_launch_s = 0;  ///< host-to-kernel launch overhead per kernel
  double tdp_W = 0;
  /// Special-function (exp2, rcp) results per clock per SM (CUDA C++ Programming Guide,
  /// "Arithmetic Instructions" throughput table: 16 for compute capability 8.x and 9.0).
  double sfu_per_sm_per_clock = 16;

  // Calibration factors (fraction of peak reached by well-shaped work).
  double gemm_efficiency = 0.8;          ///< large bf16 GEMM TFLOP/s / tensor peak
  double gemm_tile_overhead_s = 0.7e-6;  ///< per output tile: pipeline fill (~DRAM latency)
  /// A fused attention kernel on this GPU: its tensor-core efficiency in the main loop
  /// (forward, backward) and the share of each score element's softmax work (one
  /// exponential on the special-function units and its FP32 ops) that the kernel's
  /// scheduling does not hide behind the MMAs (FA3 ping-pong hides more than FA2).
  struct KernelEfficiency {
    double forward = 0, backward = 0;
    double softmax_forward = 1, softmax_backward = 1;
    bool operator==(const KernelEfficiency&) const = default;
  };
  /// The kernels this GPU runs (attention_kernels: in the file), indexed by AttentionImpl;
  /// forward efficiency 0 = not available.
  std::array<KernelEfficiency, kNumAttentionImpls> attention_efficiency{};
  /// CUDA compute capability (8.0 A100, 9.0 H100): picks the kernels' tile shapes.
  double compute_capability = 8.0;
  double gemm_fp8_efficiency = 0;  ///< large FP8 GEMM TFLOP/s / FP8 peak (0: as bf16)
  /// Large FP4 (NVFP4) GEMM TFLOP/s / FP4 peak (0: as FP8, else as bf16).
  double gemm_fp4_efficiency = 0;
  double memory_efficiency = 0.8;  ///< streaming-kernel bandwidth / HBM peak
  /// Memory-bound elementwise ops of a training step (norms, activations, residuals,
  /// softmax, optimizer): their achieved fraction of HBM bandwidth. Not in the hardware
  /// file: the stack's end-to-end factor for this GPU (stack_hardware()).
  double elementwise_efficiency = 0.8;
  double nvlink_efficiency = 0.8;  ///< NCCL busbw / NVLink peak for large messages
  /// Fraction of isolated-kernel speed a training step sustains on its compute (kernel
  /// gaps, stream syncs, power-limited clocks): the stack's end-to-end factor for this GPU.
  double step_efficiency = 1.0;

  /// Board power (docs/nonideal.md sec 1; the file's `power:`). Energies in joules per FLOP
  /// or byte; a zero J/FLOP is derived so that the dtype's largest GEMM draws TDP.
  struct Power {
    double idle_W = 0;    ///< board power with nothing running (clocks up, drivers loaded)
    double active_W = 0;  ///< SMs busy on any kernel at full occupancy, beyond idle
    std::array<double, kNumDTypes> J_per_flop{};
    double hbm_J_per_byte = 0, l2_J_per_byte = 0;
    double nvlink_J_per_byte = 0, nic_J_per_byte = 0;
    bool given() const { return idle_W > 0; }
    bool operator==(const Power&) const = default;
  } power;
  /// The GPU's thermal network, limits and throttle laws (docs/nonideal.md sec 2; the
  /// file's `thermal:`): the die and the HBM stacks, each with its own limit and slowdown,
  /// coupled to each other and to the heatsink (air) or cold plate (liquid) above them.
  struct Thermal {
    double die_slowdown_C = 87;     ///< SW thermal slowdown begins ("GPU Max Operating Temp")
    double die_hw_slowdown_C = 89;  ///< full depth: HW slowdown ("GPU Slowdown Temp")
    double die_clock_keep = 0.5;    ///< SM clock fraction at the full depth
    double die_shutdown_C = 92;     ///< "GPU Shutdown Temp"
    double hbm_throttle_C = 95;     ///< "Memory Max Operating Temp"
    double hbm_span_C = 5;          ///< linear law: degrees to the full HBM derate
    double hbm_keep = 0.73;         ///< HBM bandwidth fraction at the full depth
    double hbm_shutdown_C = 102;    ///< the HBM cannot run hotter
    double hysteresis_C = 2;        ///< step law: release below onset - hysteresis_C
    uint8_t law = 0;                ///< ThrottleLaw (nonideal/thermal_model.hpp): 0 linear, 1 step
    double die_J_per_C = 1.0, hbm_J_per_C = 0.7;
    double die_sink_C_per_W = 0.018, hbm_sink_C_per_W = 0.1, die_hbm_C_per_W = 1.2;
    /// The sink of each cooling preset: heat capacity and resistance to the coolant.
    struct Sink {
      double J_per_C = 0, coolant_C_per_W = 0;
      bool operator==(const Sink&) const = default;
    };
    Sink air{1134, 0.045}, liquid{260, 0.025};
    bool operator==(const Thermal&) const = default;
  } thermal;
  /// A fixed, sustained derate (the file's `thermal_derate:`; docs/variants.md): the
  /// fraction of its HBM bandwidth and of its SM clock a GPU keeps whatever the job, e.g. a
  /// 3D-stacked HBM held at 73% of its bandwidth by its heat (PRODUCT.md section 2, case D).
  /// Applied once at parse time: hbm_bandwidth_Bps, sm_clock_Hz and the peaks above are the
  /// derated figures; these keep the factors for the result file.
  double hbm_thermal_keep = 1.0;
  double clock_thermal_keep = 1.0;

  bool operator==(const HardwareSpec&) const = default;

  /// The fused attention kernels this GPU has (attention_efficiency > 0).
  std::vector<AttentionImpl> attention_kernels() const;
  /// Efficiency of `impl`'s main loop on this GPU; FA2's when the GPU lacks `impl`.
  KernelEfficiency attention_kernel_efficiency(AttentionImpl impl) const;
};

/// One scalar key of a hardware file: the one place a plain hardware number is declared
/// (CONTRIBUTING.md "Adding a hardware field"). parse_hardware reads every row, with the
/// member's default initializer above as the default of an optional key; the result file's
/// /variants gets a column for each row with a `column` (src/io/variant_table.cpp), which the
/// Python analysis picks up from the file. The sources of the values are in each hardware
/// file (configs/hardware) and of the defaults in the member's comment.
struct HardwareField {
  const char* key;
  double HardwareSpec::*member;
  const char* meaning;       ///< one line; the /variants column's long_name
  const char* section = "";  ///< "" at the top level, else the mapping holding the key
  bool required = false;     ///< else optional, with the member's default initializer
  /// An optional key's default when it is another key's value (read before it), not the
  /// member's initializer.
  double HardwareSpec::*default_from = nullptr;
  /// A quantity's dimension (units.hpp); none: a plain number in [min, max].
  std::optional<Dimension> dimension{};
  double min = 0, max = 0;
  bool positive = false;    ///< a rate or size a time divides by: at least 1e3 base units
  const char* column = "";  ///< its /variants column ("" none) and the column's UDUNITS unit
  const char* units = "";
};

// clang-format off
inline constexpr HardwareField kHardwareFields[] = {
    {.key = "sm_clock", .member = &HardwareSpec::sm_clock_Hz, .meaning = "SM clock (sustained)",
     .required = true, .dimension = Dimension::Frequency, .positive = true, .column = "sm_clock_Hz",
     .units = "Hz"},
    {.key = "vector_peak_fp32", .member = &HardwareSpec::vector_peak_FLOPs,
     .meaning = "FP32 non-tensor peak", .required = true, .dimension = Dimension::FlopRate,
     .positive = true},
    {.key = "hbm_capacity", .member = &HardwareSpec::hbm_capacity_bytes, .meaning = "HBM capacity",
     .required = true, .dimension = Dimension::Size, .positive = true,
     .column = "hbm_capacity_bytes", .units = "byte"},
    {.key = "hbm_bandwidth", .member = &HardwareSpec::hbm_bandwidth_Bps,
     .meaning = "HBM bandwidth (sustained: nominal x hbm_thermal_keep)", .required = true,
     .dimension = Dimension::Bandwidth, .positive = true, .column = "hbm_bandwidth_Bps",
     .units = "byte s-1"},
    {.key = "l2_size", .member = &HardwareSpec::l2_size_bytes, .meaning = "L2 cache size",
     .required = true, .dimension = Dimension::Size, .positive = true, .column = "l2_size_bytes",
     .units = "byte"},
    {.key = "l2_bandwidth", .member = &HardwareSpec::l2_bandwidth_Bps,
     .meaning = "L2 to SM bandwidth", .required = true, .dimension = Dimension::Bandwidth,
     .positive = true, .column = "l2_bandwidth_Bps", .units = "byte s-1"},
    {.key = "l2_multicast", .member = &HardwareSpec::l2_multicast,
     .meaning = "SMs sharing one operand load", .min = 1, .max = 16},
    {.key = "smem_per_sm", .member = &HardwareSpec::smem_per_sm_bytes,
     .meaning = "shared memory per SM", .required = true, .dimension = Dimension::Size,
     .positive = true},
    {.key = "nvlink_bandwidth", .member = &HardwareSpec::nvlink_bandwidth_Bps,
     .meaning = "NVLink bandwidth per GPU per direction", .required = true,
     .dimension = Dimension::Bandwidth, .positive = true},
    {.key = "pcie_bandwidth", .member = &HardwareSpec::pcie_bandwidth_Bps,
     .meaning = "PCIe bandwidth per direction", .required = true, .dimension = Dimension::Bandwidth,
     .positive = true},
    {.key = "host_link_bandwidth", .member = &HardwareSpec::host_link_bandwidth_Bps,
     .meaning = "CPU-GPU link bandwidth per direction",
     .default_from = &HardwareSpec::pcie_bandwidth_Bps, .dimension = Dimension::Bandwidth,
     .positive = true, .column = "host_link_bandwidth_Bps", .units = "byte s-1"},
    {.key = "kernel_launch", .member = &HardwareSpec::kernel_launch_s,
     .meaning = "host-to-kernel launch overhead", .required = true, .dimension = Dimension::Time},
    {.key = "tdp", .member = &HardwareSpec::tdp_W, .meaning = "board power limit",
     .dimension = Dimension::Power, .column = "tdp_W", .units = "W"},
    {.key = "compute_capability", .member = &HardwareSpec::compute_capability,
     .meaning = "CUDA compute capability", .min = 1, .max = 99},
    {.key = "sfu_per_sm_per_clock", .member = &HardwareSpec::sfu_per_sm_per_clock,
     .meaning = "special-function results per clock per SM", .min = 1, .max = 1024},
    {.key = "gemm", .member = &HardwareSpec::gemm_efficiency,
     .meaning = "large bf16 GEMM / tensor peak", .section = "efficiency", .min = 0.01, .max = 1},
    {.key = "gemm_tile_overhead", .member = &HardwareSpec::gemm_tile_overhead_s,
     .meaning = "GEMM pipeline fill per output tile", .section = "efficiency",
     .dimension = Dimension::Time},
    {.key = "gemm_fp8", .member = &HardwareSpec::gemm_fp8_efficiency,
     .meaning = "large FP8 GEMM / FP8 peak", .section = "efficiency", .min = 0.01, .max = 1},
    {.key = "gemm_fp4", .member = &HardwareSpec::gemm_fp4_efficiency,
     .meaning = "large FP4 GEMM / FP4 peak", .section = "efficiency", .min = 0.01, .max = 1},
    {.key = "memory", .member = &HardwareSpec::memory_efficiency,
     .meaning = "streaming-kernel bandwidth / HBM peak", .section = "efficiency", .min = 0.01,
     .max = 1},
    {.key = "nvlink", .member = &HardwareSpec::nvlink_efficiency,
     .meaning = "NCCL busbw / NVLink peak", .section = "efficiency", .min = 0.01, .max = 1},
};
// clang-format on

/// Reads a hardware mapping (configs/hardware/NAME.yaml or an inline `hardware:`).
/// Throws InputError on a missing/invalid/unknown key.
HardwareSpec parse_hardware(const YAML::Node& node, const std::string& file);

}  // namespace rapid
