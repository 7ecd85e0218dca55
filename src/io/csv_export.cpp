#include "rapid/io/csv_export.hpp"

#include <fmt/format.h>
#include <hdf5.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <string_view>
#include <vector>

#include "rapid/common/error.hpp"
#include "rapid/common/output_sink.hpp"
#include "rapid/io/hdf5_handle.hpp"
#include "rapid/io/output_check.hpp"
#include "rapid/io/result_schema.hpp"

namespace fs = std::filesystem;

namespace rapid {

namespace {

/// One column of the file, read whole: numbers as doubles, enums as their values.
struct ColumnValues {
  const Column* column = nullptr;
  std::vector<double> numbers;
  std::vector<uint8_t> codes;
};

/// CSV field: quoted when it holds a comma, quote or newline (RFC 4180).
std::string field(std::string_view s) {
  if (s.find_first_of(",\"\n") == std::string_view::npos) return std::string(s);
  std::string q = "\"";
  for (char c : s) q += c == '"' ? std::string("\"\"") : std::string(1, c);
  return q + "\"";
}

/// Whether `ds` holds the storage `c` reads: numbers (integer or float) or, for an enum
/// column, a one-byte enum (read into one byte per row).
bool readable_as(hid_t ds, const Column& c) {
  h5::Datatype type(H5Dget_type(ds), "H5Dget_type");
  const H5T_class_t cls = H5Tget_class(type.get());
  if (c.type == ColumnType::Enum8) return cls == H5T_ENUM && H5Tget_size(type.get()) == 1;
  return cls == H5T_INTEGER || cls == H5T_FLOAT;
}

}  // namespace

int64_t export_csv(const std::string& h5_path, const std::string& csv_path) {
  std::error_code ec;
  if (!fs::is_regular_file(h5_path, ec))
    throw InputError("<command line>", "file", h5_path, "an existing rapid-sweep result file");
  check_output_file(csv_path, "--csv", 0, {h5_path});
  h5::silence_error_printing();
  const hid_t fid = H5Fopen(h5_path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
  if (fid < 0) throw InputError(h5_path, "<file>", h5_path, "an HDF5 file written by rapid-sweep");
  h5::File file(fid, "H5Fopen");
  std::vector<ColumnValues> cols;
  hssize_t rows = -1;
  std::vector<int64_t> point;
  std::vector<std::string> hardware, scenarios;
  // A dataset that does not read back (a chunk failing its Fletcher-32 checksum, one that
  // does not decompress, a cut-off file): bad input naming the file and the dataset.
  std::string current = "/";
  try {
    for (const Column& c : result_columns()) {
      const std::string path = fmt::format("/points/{}", c.name);
      current = path;
      if (H5Lexists(file.get(), "/points", H5P_DEFAULT) <= 0 ||
          H5Lexists(file.get(), path.c_str(), H5P_DEFAULT) <= 0)
        throw InputError(h5_path, path, "<missing>",
                         "a result file of this version of rapid-sweep (every column of "
                         "src/io/result_schema.cpp)");
      h5::Dataset ds(H5Dopen2(file.get(), path.c_str(), H5P_DEFAULT), "H5Dopen2");
      h5::Dataspace space(H5Dget_space(ds.get()), "H5Dget_space");
      const hssize_t n = H5Sget_simple_extent_npoints(space.get());
      if (rows >= 0 && n != rows)
        throw InputError(h5_path, path, fmt::format("{} rows", n), fmt::format("{} rows", rows));
      rows = n;
      if (!readable_as(ds.get(), c))
        throw InputError(
            h5_path, path, "<another type>",
            c.type == ColumnType::Enum8 ? "a one-byte enum column" : "a column of numbers");
      ColumnValues v;
      v.column = &c;
      if (c.type == ColumnType::Enum8) {
        v.codes.resize(static_cast<size_t>(n));
        h5::Datatype type(H5Dget_type(ds.get()), "H5Dget_type");  // its own enum type
        h5::check(H5Dread(ds.get(), type.get(), H5S_ALL, H5S_ALL, H5P_DEFAULT, v.codes.data()),
                  "H5Dread");
      } else {
        v.numbers.resize(static_cast<size_t>(n));
        h5::check(
            H5Dread(ds.get(), H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, v.numbers.data()),
            "H5Dread");
      }
      cols.push_back(std::move(v));
    }
    // The point of each row (/points/point: i with --keep all, the kept points otherwise).
    point.resize(static_cast<size_t>(std::max<hssize_t>(rows, 0)));
    current = "/points/point";
    for (size_t i = 0; i < point.size(); ++i) point[i] = static_cast<int64_t>(i);
    if (H5Lexists(file.get(), "/points/point", H5P_DEFAULT) > 0 && !point.empty()) {
      h5::Dataset ds(H5Dopen2(file.get(), "/points/point", H5P_DEFAULT), "H5Dopen2");
      h5::Dataspace space(H5Dget_space(ds.get()), "H5Dget_space");
      if (H5Sget_simple_extent_npoints(space.get()) == rows)
        h5::check(H5Dread(ds.get(), H5T_NATIVE_INT64, H5S_ALL, H5S_ALL, H5P_DEFAULT, point.data()),
                  "H5Dread");
    }
    current = "/hardware/names";
    hardware = h5::read_strings(file.get(), "/hardware/names");
    current = "/scenarios/names";
    scenarios = h5::read_strings(file.get(), "/scenarios/names");
  } catch (const InternalError& e) {
    const std::string why = e.what();
    throw InputError(h5_path, current,
                     why.find("Fletcher32") != std::string::npos
                         ? "unreadable (a chunk fails its Fletcher-32 checksum)"
                         : "unreadable (a chunk does not decompress or the file is cut short)",
                     "a whole result file (it is damaged: rerun the sweep that wrote it)");
  }
  auto name_of = [](const std::vector<std::string>& names, double i) {
    return i >= 0 && static_cast<size_t>(i) < names.size() ? names[static_cast<size_t>(i)]
                                                           : std::string();
  };
  size_t hw_col = 0, sc_col = 0;
  for (size_t k = 0; k < cols.size(); ++k) {
    if (std::string_view(cols[k].column->name) == "hardware_index") hw_col = k;
    if (std::string_view(cols[k].column->name) == "scenario") sc_col = k;
  }

  const std::string temp = temporary_path_beside(csv_path);
  try {
    OutputSink out(temp, csv_path.ends_with(".gz"), "--csv", csv_path);
    // `point` first: the file's /points/point (netcdf_layout.hpp): the point of the row.
    std::string line = "point,hardware,scenario_name";
    for (const ColumnValues& c : cols) line += fmt::format(",{}", c.column->name);
    out.write(line + "\n");
    for (hssize_t i = 0; i < rows; ++i) {
      const auto r = static_cast<size_t>(i);
      line = fmt::format("{},", point[r]) + field(name_of(hardware, cols[hw_col].numbers[r])) +
             "," + field(name_of(scenarios, cols[sc_col].numbers[r]));
      for (const ColumnValues& c : cols) {
        line += ',';
        if (c.column->type == ColumnType::Enum8) {
          const auto& names = c.column->enum_names;
          line += c.codes[r] < names.size() ? names[c.codes[r]] : "?";
        } else {
          line += fmt::format("{}", c.numbers[r]);  // shortest round-trip form; nan, inf
        }
      }
      out.write(line + "\n");
    }
    out.close();
    fs::rename(temp, csv_path, ec);
    if (ec)
      throw InputError("<command line>", "--csv", csv_path,
                       fmt::format("a path the file can be renamed to ({})", ec.message()));
  } catch (...) {
    fs::remove(temp, ec);
    throw;
  }
  return rows;
}

}  // namespace rapid
