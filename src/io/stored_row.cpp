#include "rapid/io/stored_row.hpp"

#include <fmt/format.h>
#include <hdf5.h>

#include <algorithm>
#include <filesystem>
#include <vector>

#include "rapid/common/error.hpp"
#include "rapid/io/hdf5_handle.hpp"

namespace rapid {

namespace {

/// A variable-length string attribute of the root group ("" when it is absent).
std::string string_attribute(hid_t file, const char* name, const std::string& path) {
  if (H5Aexists(file, name) <= 0) return "";
  h5::Attribute a(H5Aopen(file, name, H5P_DEFAULT), "H5Aopen");
  h5::Datatype t = h5::vlen_string_type();
  char* value = nullptr;
  if (H5Aread(a.get(), t.get(), &value) < 0 || !value)
    throw InputError(path, fmt::format("attribute {}", name), "unreadable",
                     "a rapid-sweep result file (a variable-length string)");
  std::string s(value);
  H5free_memory(value);
  return s;
}

/// Element `row` of dataset `name` as a double.
double read_element(hid_t file, const std::string& name, hsize_t row, const std::string& path) {
  if (H5Lexists(file, name.c_str(), H5P_DEFAULT) <= 0)
    throw InputError(path, name, "missing", "a rapid-sweep result file with this column");
  h5::Dataset ds(H5Dopen2(file, name.c_str(), H5P_DEFAULT), "H5Dopen2");
  h5::Dataspace space(H5Dget_space(ds.get()), "H5Dget_space");
  const hsize_t count = 1;
  h5::Dataspace one(H5Screate_simple(1, &count, nullptr), "H5Screate_simple");
  double v = 0;
  if (H5Sselect_hyperslab(space.get(), H5S_SELECT_SET, &row, nullptr, &count, nullptr) < 0 ||
      H5Dread(ds.get(), H5T_NATIVE_DOUBLE, one.get(), space.get(), H5P_DEFAULT, &v) < 0)
    throw InputError(path, name, fmt::format("row {}", row),
                     "a readable dataset (the file is damaged)");
  return v;
}

}  // namespace

StoredRow read_stored_row(const std::string& path, int64_t point,
                          std::initializer_list<const char*> columns) {
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec))
    throw InputError("<command line>", "--result", path, "a rapid-sweep result file");
  h5::silence_error_printing();
  const hid_t id = H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
  if (id < 0) throw InputError(path, "file", path, "an HDF5 file written by rapid-sweep");
  h5::File file(id, "H5Fopen");
  StoredRow r;
  if (string_attribute(file.get(), "format", path) != "rapid-sweep results")
    throw InputError(path, "attribute format", "missing", "a rapid-sweep result file");
  r.job_path = string_attribute(file.get(), "job_path", path);
  r.job_yaml = string_attribute(file.get(), "job_yaml", path);
  r.model_yaml = string_attribute(file.get(), "model_yaml", path);
  r.network_yaml = string_attribute(file.get(), "network_yaml", path);
  r.mode = string_attribute(file.get(), "mode", path);
  // The row holding the point: under --keep all row i is point i; otherwise search the
  // point column (kept rows are few).
  h5::Dataset ds(H5Dopen2(file.get(), "/points/point", H5P_DEFAULT), "H5Dopen2");
  h5::Dataspace space(H5Dget_space(ds.get()), "H5Dget_space");
  const hssize_t n = H5Sget_simple_extent_npoints(space.get());
  std::vector<int64_t> points(static_cast<size_t>(std::max<hssize_t>(n, 0)));
  if (n > 0 &&
      H5Dread(ds.get(), H5T_NATIVE_INT64, H5S_ALL, H5S_ALL, H5P_DEFAULT, points.data()) < 0)
    throw InputError(path, "/points/point", "unreadable", "a readable dataset (damaged file)");
  const auto it = std::find(points.begin(), points.end(), point);
  if (it == points.end())
    throw InputError("<command line>", "--point", std::to_string(point),
                     fmt::format("a point the file holds ({} rows kept; `rapid-analyze top {}` "
                                 "lists the best)",
                                 points.size(), path));
  r.point = point;
  r.row = it - points.begin();
  for (const char* c : columns)
    r.values[c] =
        read_element(file.get(), fmt::format("/points/{}", c), static_cast<hsize_t>(r.row), path);
  return r;
}

}  // namespace rapid
