// One row of a result file read back with what made it (`rapid predict --result F.h5
// --point N`): the job's path and text as the sweep read them, the model's and network's
// texts (to say when they changed since), and the row's layout columns. A file that is
// not a rapid-sweep result, a point the file does not hold or a damaged dataset is an
// InputError naming the file (and the dataset).
#pragma once

#include <cstdint>
#include <map>
#include <string>

namespace rapid {

struct StoredRow {
  std::string job_path, job_yaml, model_yaml, network_yaml, mode;
  int64_t point = -1, row = -1;
  /// The row's values of the columns asked for, as doubles (enums as their codes).
  std::map<std::string, double> values;
};

/// Reads point `point` (the `point` column's value; row = point under --keep all) of
/// `path`, with the columns `columns`.
StoredRow read_stored_row(const std::string& path, int64_t point,
                          std::initializer_list<const char*> columns);

}  // namespace rapid
