// Calibration: fit the model's efficiency parameters to measured GEMM and collective rows
// (`rapid calibrate`, docs/collectives.md "Calibration"). The model is reached through its
// public cost API only (ComputeCost::time of a GEMM op, CollectiveCost::busbw_Bps and
// time), so the fit follows whatever GEMM or collective model is compiled in.
//
// Objective: the sum over rows of (ln(predicted / measured))^2, symmetric in over- and
// under-prediction and independent of units; minimized by minimize_bounded (Nelder-Mead)
// over the parameters of calibration_params() that the rows can see.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "rapid/spec/hardware_spec.hpp"
#include "rapid/spec/network_spec.hpp"

namespace rapid {

class CsvTable;

/// Measured operation kinds (the `op` column).
enum class MeasuredOp : uint8_t { Gemm, AllReduce, AllGather, ReduceScatter };
inline constexpr int kNumMeasuredOps = 4;
const char* measured_op_name(MeasuredOp op);  ///< "gemm", "all_reduce", ...

/// What a row measured (the column holding its value).
enum class MeasuredQuantity : uint8_t { TimeS, Tflops, BusbwGBps };

/// One row of a measurements CSV.
struct Measurement {
  MeasuredOp op = MeasuredOp::Gemm;
  DType dtype = DType::BF16;
  int64_t m = 0, n = 0, k = 0;  ///< GEMM: C[m,n] += A[m,k] B[k,n]
  double bytes = 0;             ///< collectives: nccl-tests buffer size
  int64_t gpus_per_node = 0;    ///< collectives: GPUs of the group in each node
  int64_t nodes = 1;
  MeasuredQuantity quantity = MeasuredQuantity::TimeS;
  double value = 0;           ///< seconds, TFLOP/s or GB/s
  int line = 0;               ///< 1-based line in the file
  std::string label() const;  ///< "gemm 4096x4096x4096 bf16", "all_reduce 4194304x8"
};

/// Most rows a measurements file may have (the fit predicts every row at every step: half a
/// million rows ran for minutes).
inline constexpr size_t kMaxMeasurements = 10000;

/// Reads a measurements CSV: header with op, shape, dtype and at least one of time_s,
/// tflops (GEMM only), busbw_gbps (collectives only); optional source/note columns; lines
/// starting with '#' and blank lines are skipped. Each row holds exactly one value. Shapes:
/// GEMM "MxNxK"; collectives "BYTESxGPUS" (one node) or "BYTESxGPUSxNODES".
/// Throws InputError naming the file, line, column and what was expected, and for more
/// than kMaxMeasurements rows.
std::vector<Measurement> read_measurements(const std::string& path);
/// The same from a table already read (`table.path()` names it in errors).
std::vector<Measurement> read_measurements(const CsvTable& table);

/// The model's prediction of a row, in the row's quantity.
double predict_measurement(const Measurement& row, const HardwareSpec& hw, const NetworkSpec& net);

/// Which file a fitted parameter is written to.
enum class ParamFile : uint8_t { Hardware, Network };

/// One fittable parameter: a field of HardwareSpec (key under `efficiency:`) or of
/// NetworkSpec (top-level key), its bounds, and which rows inform it.
struct CalibrationParam {
  const char* name;  ///< YAML key
  ParamFile file;
  double HardwareSpec::*hw_field;  ///< set when file == Hardware
  double NetworkSpec::*net_field;  ///< set when file == Network
  double lower, upper;             ///< SI units (seconds for latencies)
  bool is_time;                    ///< written as microseconds ("3.3us")
  bool from_gemm;                  ///< fitted on GEMM rows (else on collective rows)

  double get(const HardwareSpec& hw, const NetworkSpec& net) const;
  void set(HardwareSpec& hw, NetworkSpec& net, double v) const;
};

/// Every fittable parameter: gemm, gemm_tile_overhead, nvlink (hardware); collective_latency,
/// nvlink_step_latency, nvlink_ring_bubble, network_efficiency, network_step_latency,
/// network_ring_bubble (network).
const std::vector<CalibrationParam>& calibration_params();

/// MAPE of the rows of one op kind.
struct OpError {
  MeasuredOp op;
  int rows = 0;
  double mape_before = 0, mape_after = 0;  ///< percent
};

struct FittedParam {
  const CalibrationParam* param;
  double before = 0, after = 0;
};

/// A family of rows (GEMM or collective) too few or too alike for the parameters it would
/// fit: the rank of their Jacobian is below the parameter count. Nothing of it is fitted.
struct Underdetermined {
  bool gemm = true;                             ///< GEMM rows (else collective rows)
  size_t rows = 0;                              ///< rows of the family
  size_t rank = 0;                              ///< parameters they determine
  std::vector<const CalibrationParam*> params;  ///< the ones they would fit
};

struct CalibrationResult {
  HardwareSpec hw;  ///< input with the fitted values
  NetworkSpec net;  ///< input with the fitted values
  std::vector<FittedParam> fitted;
  std::vector<OpError> errors;                   ///< op kinds present, in MeasuredOp order
  double mape_before = 0, mape_after = 0;        ///< all rows, percent
  std::vector<Underdetermined> underdetermined;  ///< families left unfitted (empty: none)
};

/// Fits the parameters named in `only` (all of calibration_params() when empty; an unknown
/// name is an InputError) that the rows inform: GEMM parameters need GEMM rows, collective
/// parameters collective rows, and a parameter is kept when moving it across its bounds
/// changes no prediction (e.g. network parameters on single-node rows). GEMM and collective
/// parameters are fitted separately (their objectives do not share a parameter). A family
/// whose rows do not determine its parameters (fewer rows than parameters, or rows that
/// move no parameter or two alike: Jacobian rank below the parameter count) is not fitted
/// and is listed in `underdetermined`.
CalibrationResult calibrate(const HardwareSpec& hw, const NetworkSpec& net,
                            const std::vector<Measurement>& rows,
                            const std::vector<std::string>& only = {});

}  // namespace rapid
