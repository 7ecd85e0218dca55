// The one field list that describes a result row (Calculon's "one field list drives search
// and output"): every column of the HDF5 file, its type, unit and description, and how to
// read it from a (Point, EvalResult) pair. The HDF5 writer, the Python analysis and the
// docs all follow this table.
#pragma once

#include <cstdint>
#include <span>

#include "rapid/core/eval_result.hpp"
#include "rapid/core/point.hpp"
#include "rapid/spec/sweep_spec.hpp"

namespace rapid {

/// Storage type of a column. Enum columns are stored as HDF5 enum types whose member names
/// are given by `enum_names` (so h5dump and h5py show "oom", "selective", ...).
enum class ColumnType : uint8_t { Int32, UInt8, UInt32, Float64, Enum8 };

/// One evaluated row: the point and its result.
struct ResultRow {
  Point point;
  EvalResult result;
};

struct Column {
  const char* name;  ///< dataset name under /points
  ColumnType type;
  const char* unit;  ///< "s", "B", "tokens/s", "1" (dimensionless), "" (label)
  const char* description;
  std::span<const char* const> enum_names;  ///< member names for Enum8, value = position
  double (*get)(const ResultRow&);          ///< value as double (exact for the int types)
};

/// All columns, in file order.
std::span<const Column> result_columns();

/// One bit of the warning_flags column (EvalResult::flags, core/eval_result.hpp Flag): its
/// mask and its name (CF flag_meanings in the file; analysis/rapid_results.py makes the
/// boolean column warn_<name> of it).
struct FlagBit {
  uint32_t mask;
  const char* name;
};
std::span<const FlagBit> warning_flag_bits();

}  // namespace rapid
