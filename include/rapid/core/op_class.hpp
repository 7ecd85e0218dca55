// Per-operator-class attribution of a point's time (docs/model.md section 8): the
// bottleneck stage's compute split by OpKind and its exposed layer collectives by process
// group. One table for the analytical evaluator, the DES and the non-ideal path: each
// accumulates an array indexed by class and writes it to the EvalResult columns below.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>

#include "rapid/core/eval_result.hpp"
#include "rapid/workload/op.hpp"

namespace rapid {

/// The compute OpKinds.
enum class OpClass : uint8_t { Gemm, Attention, MemoryBound };
inline constexpr size_t kNumOpClasses = 3;
inline constexpr const char* kOpClassNames[kNumOpClasses] = {"gemm", "attention", "memory_bound"};
/// The EvalResult column of each class (`<name>_time_s`); they sum to compute_time_s.
inline constexpr double EvalResult::*kOpClassColumns[kNumOpClasses] = {
    &EvalResult::gemm_time_s, &EvalResult::attention_time_s, &EvalResult::memory_bound_time_s};

/// Class index of a compute op's kind (communication kinds are not compute: MemoryBound).
constexpr size_t op_class(OpKind k) {
  switch (k) {
    case OpKind::Gemm:
      return static_cast<size_t>(OpClass::Gemm);
    case OpKind::Attention:
    case OpKind::DecodeAttention:
      return static_cast<size_t>(OpClass::Attention);
    default:
      return static_cast<size_t>(OpClass::MemoryBound);
  }
}

/// The groups of the collectives inside the layers (the op templates'; DP and PP traffic
/// has its own columns). TP holds the expert layers' tensor-parallel group (ETP) too.
enum class CommClass : uint8_t { TP, CP, EP };
inline constexpr size_t kNumCommClasses = 3;
inline constexpr const char* kCommClassNames[kNumCommClasses] = {"tp", "cp", "ep"};
/// The EvalResult column of each class (`<name>_comm_time_s`); they sum to
/// EvalResult::layer_comm_time_s().
inline constexpr double EvalResult::*kCommClassColumns[kNumCommClasses] = {
    &EvalResult::tp_comm_time_s, &EvalResult::cp_comm_time_s, &EvalResult::ep_comm_time_s};

/// Class index of a template collective's group. The templates hold TP, ETP, CP and EP
/// collectives only; any other group would count as TP.
constexpr size_t comm_class(CommGroup g) {
  switch (g) {
    case CommGroup::CP:
      return static_cast<size_t>(CommClass::CP);
    case CommGroup::EP:
      return static_cast<size_t>(CommClass::EP);
    default:
      return static_cast<size_t>(CommClass::TP);
  }
}

/// Time per class (seconds; the DES keeps picoseconds).
template <typename T = double>
using OpClassTimes = std::array<T, kNumOpClasses>;
template <typename T = double>
using CommClassTimes = std::array<T, kNumCommClasses>;

/// a += k * b, class by class.
template <typename T, size_t N, typename K>
constexpr void add_scaled(std::array<T, N>& a, const std::array<T, N>& b, K k) {
  for (size_t i = 0; i < N; ++i) a[i] += k * b[i];
}

/// The classes' total.
template <typename T, size_t N>
constexpr T class_sum(const std::array<T, N>& a) {
  T s{};
  for (const T& x : a) s += x;
  return s;
}

/// Writes `scale` x each class's time to its column.
template <typename T, size_t N>
void set_class_columns(EvalResult& r, double EvalResult::*const (&columns)[N],
                       const std::array<T, N>& t, double scale = 1.0) {
  for (size_t k = 0; k < N; ++k) r.*columns[k] = scale * static_cast<double>(t[k]);
}

}  // namespace rapid
