// `rapid export OUT.h5 --csv FILE[.gz]` (README "The HDF5 file"): every row of a result
// file as CSV, for spreadsheets and Calculon-style scripts. One header line: `point` (the row
// index), `hardware` and `scenario_name` (the names the indices stand for), then the
// schema's column names (io/result_schema.hpp); enums as their member names; numbers in the
// shortest form that reads back to the same double; gzip-compressed when FILE ends in .gz.
#pragma once

#include <cstdint>
#include <string>

namespace rapid {

/// Writes `h5_path`'s rows to `csv_path` (through a temporary file renamed at the end: a
/// failure leaves nothing at `csv_path`). Returns the rows written. Throws InputError when
/// `h5_path` is missing or not a rapid-sweep result file, or `csv_path`'s directory does not
/// exist; InternalError on a failed read or write.
int64_t export_csv(const std::string& h5_path, const std::string& csv_path);

}  // namespace rapid
