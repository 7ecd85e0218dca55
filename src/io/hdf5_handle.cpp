#include "rapid/io/hdf5_handle.hpp"

#include <H5DSpublic.h>  // dimension scales: the HDF5 High-Level library (hdf5_hl)

#include <cstring>

#include <fmt/format.h>

#include <string>

#include "rapid/common/error.hpp"

namespace rapid::h5 {

namespace {

struct StackText {
  std::string text;
  int entries = 0;
};

// Collects "function: description" of the first few entries of HDF5's error stack, from the
// API call down to the innermost cause (which usually names the system error).
herr_t collect_entry(unsigned n, const H5E_error2_t* err, void* data) {
  auto* out = static_cast<StackText*>(data);
  if (n >= 6) return 0;
  if (!out->text.empty()) out->text += "; ";
  out->text +=
      fmt::format("{}: {}", err->func_name ? err->func_name : "?", err->desc ? err->desc : "?");
  ++out->entries;
  return 0;
}

}  // namespace

void fail(const char* call) {
  StackText stack;
  H5Ewalk2(H5E_DEFAULT, H5E_WALK_DOWNWARD, collect_entry, &stack);
  H5Eclear2(H5E_DEFAULT);
  if (stack.text.empty()) stack.text = "no message on the HDF5 error stack";
  throw InternalError(fmt::format("HDF5 {} failed: {}", call, stack.text));
}

void silence_error_printing() {
  check(H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr), "H5Eset_auto2");
}

herr_t close_id(Kind kind, hid_t id) noexcept {
  switch (kind) {
    case Kind::File:
      return H5Fclose(id);
    case Kind::Group:
      return H5Gclose(id);
    case Kind::Dataset:
      return H5Dclose(id);
    case Kind::Dataspace:
      return H5Sclose(id);
    case Kind::Datatype:
      return H5Tclose(id);
    case Kind::PropertyList:
      return H5Pclose(id);
    case Kind::Attribute:
      return H5Aclose(id);
  }
  return -1;
}

const char* close_name(Kind kind) noexcept {
  switch (kind) {
    case Kind::File:
      return "H5Fclose";
    case Kind::Group:
      return "H5Gclose";
    case Kind::Dataset:
      return "H5Dclose";
    case Kind::Dataspace:
      return "H5Sclose";
    case Kind::Datatype:
      return "H5Tclose";
    case Kind::PropertyList:
      return "H5Pclose";
    case Kind::Attribute:
      return "H5Aclose";
  }
  return "H5?close";
}

Datatype vlen_string_type() {
  Datatype t(H5Tcopy(H5T_C_S1), "H5Tcopy");
  check(H5Tset_size(t.get(), H5T_VARIABLE), "H5Tset_size");
  check(H5Tset_cset(t.get(), H5T_CSET_UTF8), "H5Tset_cset");
  return t;
}

Datatype fixed_string_type(size_t size) {
  Datatype t(H5Tcopy(H5T_C_S1), "H5Tcopy");
  check(H5Tset_size(t.get(), size > 0 ? size : 1), "H5Tset_size");
  check(H5Tset_strpad(t.get(), H5T_STR_NULLPAD), "H5Tset_strpad");
  check(H5Tset_cset(t.get(), H5T_CSET_UTF8), "H5Tset_cset");
  return t;
}

namespace {

void write_scalar_attribute(hid_t obj, const char* name, hid_t type, const void* value) {
  Dataspace space(H5Screate(H5S_SCALAR), "H5Screate");
  Attribute attr(H5Acreate2(obj, name, type, space.get(), H5P_DEFAULT, H5P_DEFAULT), "H5Acreate2");
  check(H5Awrite(attr.get(), type, value), "H5Awrite");
  attr.close();
}

}  // namespace

void write_attribute(hid_t obj, const char* name, std::string_view value) {
  // A variable-length string is written from a char* to a NUL-terminated copy.
  const std::string copy(value);
  const char* ptr = copy.c_str();
  Datatype t = vlen_string_type();
  write_scalar_attribute(obj, name, t.get(), &ptr);
}

void write_attribute(hid_t obj, const char* name, int64_t value) {
  write_scalar_attribute(obj, name, H5T_NATIVE_INT64, &value);
}

void write_attribute(hid_t obj, const char* name, double value) {
  write_scalar_attribute(obj, name, H5T_NATIVE_DOUBLE, &value);
}

namespace {

void write_array_attribute(hid_t obj, const char* name, hid_t type, size_t n, const void* data) {
  const hsize_t dims = n;
  Dataspace space(H5Screate_simple(1, &dims, nullptr), "H5Screate_simple");
  Attribute attr(H5Acreate2(obj, name, type, space.get(), H5P_DEFAULT, H5P_DEFAULT), "H5Acreate2");
  check(H5Awrite(attr.get(), type, data), "H5Awrite");
  attr.close();
}

}  // namespace

void write_attribute(hid_t obj, const char* name, std::span<const uint8_t> values) {
  write_array_attribute(obj, name, H5T_NATIVE_UINT8, values.size(), values.data());
}

void write_attribute(hid_t obj, const char* name, std::span<const uint32_t> values) {
  write_array_attribute(obj, name, H5T_NATIVE_UINT32, values.size(), values.data());
}

Dataset write_string_dataset(hid_t loc, const char* name, hid_t space,
                             const std::vector<std::string>& values) {
  Datatype type = vlen_string_type();
  Dataset ds(H5Dcreate2(loc, name, type.get(), space, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT),
             "H5Dcreate2");
  std::vector<const char*> ptrs;
  ptrs.reserve(values.size());
  for (const std::string& v : values) ptrs.push_back(v.c_str());
  if (!ptrs.empty())
    check(H5Dwrite(ds.get(), type.get(), H5S_ALL, H5S_ALL, H5P_DEFAULT, ptrs.data()), "H5Dwrite");
  return ds;
}

void make_scale(hid_t scale, const char* name) {
  check(H5DSset_scale(scale, name), "H5DSset_scale");
}

void attach_scale(hid_t dataset, hid_t scale) {
  check(H5DSattach_scale(dataset, scale, 0), "H5DSattach_scale");
}

std::vector<std::string> read_strings(hid_t file, const char* path) {
  std::vector<std::string> out;
  if (H5Lexists(file, path, H5P_DEFAULT) <= 0) return out;
  Dataset ds(H5Dopen2(file, path, H5P_DEFAULT), "H5Dopen2");
  Datatype type(H5Dget_type(ds.get()), "H5Dget_type");
  Dataspace space(H5Dget_space(ds.get()), "H5Dget_space");
  const hssize_t n = H5Sget_simple_extent_npoints(space.get());
  if (n <= 0 || H5Tget_class(type.get()) != H5T_STRING) return out;
  if (H5Tis_variable_str(type.get()) > 0) {
    Datatype mem = vlen_string_type();
    std::vector<char*> ptrs(static_cast<size_t>(n), nullptr);
    check(H5Dread(ds.get(), mem.get(), H5S_ALL, H5S_ALL, H5P_DEFAULT, ptrs.data()), "H5Dread");
    for (char* p : ptrs) out.emplace_back(p ? p : "");
    // Frees what the read allocated (the library's allocator, as H5Dvlen_reclaim would).
    for (char* p : ptrs) H5free_memory(p);
    return out;
  }
  const size_t width = H5Tget_size(type.get());
  if (width == 0) return out;
  std::vector<char> buf(static_cast<size_t>(n) * width);
  check(H5Dread(ds.get(), type.get(), H5S_ALL, H5S_ALL, H5P_DEFAULT, buf.data()), "H5Dread");
  for (hssize_t i = 0; i < n; ++i) {
    const char* s = buf.data() + static_cast<size_t>(i) * width;
    out.emplace_back(s, strnlen(s, width));
  }
  return out;
}

}  // namespace rapid::h5
