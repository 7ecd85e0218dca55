// Small RAII owners of HDF5 C API identifiers (file, group, dataset, dataspace, datatype,
// property list, attribute) and checked calls (docs/architecture.md "Libraries": wrap handles in
// small RAII types, check every return). Every failed call throws rapid::InternalError naming the
// HDF5 function and the innermost messages of HDF5's error stack.
//
// Strings (what h5py 3.x gives back):
//  - attributes are scalar variable-length UTF-8 strings -> h5py returns `str`;
//  - string datasets are variable-length UTF-8 (netCDF-4's NC_STRING), written through a
//    serial (non-MPI-IO) handle because parallel HDF5 1.10 cannot write variable-length
//    dataset data -> h5py returns `bytes` objects, and `ds.asstr()[...]` returns `str`.
//    (Fixed-length string arrays are still read: read_strings(); netCDF-C 4.9.0, Debian
//    12's, crashes reading them: Unidata/netcdf-c#2159, fixed after 4.9.0 by PR #2466.)
#pragma once

#ifndef OMPI_SKIP_MPICXX
#define OMPI_SKIP_MPICXX 1  // hdf5.h (parallel) includes mpi.h: the C API only
#endif
#include <hdf5.h>

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace rapid::h5 {

/// Throws InternalError "HDF5 <call> failed: <messages from HDF5's error stack>" and clears
/// the stack.
[[noreturn]] void fail(const char* call);

/// Returns `id` when it is a valid identifier (>= 0); otherwise fail(call).
inline hid_t check_id(hid_t id, const char* call) {
  if (id < 0) fail(call);
  return id;
}

/// Checks an herr_t/htri_t result: negative -> fail(call). Returns the value (htri_t: 0/1).
inline int check(int status, const char* call) {
  if (status < 0) fail(call);
  return status;
}
/// Identifiers go through check_id (this overload would truncate a hid_t to int).
int check(hid_t id, const char* call) = delete;

/// Turns off HDF5's automatic printing of its error stack to stderr (the messages go into
/// the exceptions instead). Idempotent; call before the first HDF5 call that may fail.
void silence_error_printing();

enum class Kind : uint8_t { File, Group, Dataset, Dataspace, Datatype, PropertyList, Attribute };

/// Closes `id` with the close function of `kind` (H5Fclose, H5Gclose, ...). Returns its herr_t.
herr_t close_id(Kind kind, hid_t id) noexcept;
/// Name of that close function, for error messages.
const char* close_name(Kind kind) noexcept;

/// Owns one HDF5 identifier of kind K; closes it on destruction. Move-only.
template <Kind K>
class Handle {
 public:
  Handle() = default;
  /// Takes ownership of `id` returned by HDF5 function `call`; throws InternalError (naming
  /// `call`) when `id` is negative.
  Handle(hid_t id, const char* call) : id_(check_id(id, call)) {}
  ~Handle() { reset(); }

  Handle(const Handle&) = delete;
  Handle& operator=(const Handle&) = delete;
  Handle(Handle&& o) noexcept : id_(std::exchange(o.id_, H5I_INVALID_HID)) {}
  Handle& operator=(Handle&& o) noexcept {
    if (this != &o) {
      reset();
      id_ = std::exchange(o.id_, H5I_INVALID_HID);
    }
    return *this;
  }

  hid_t get() const { return id_; }
  bool valid() const { return id_ >= 0; }

  /// Closes now and checks the result (throws InternalError). No-op when empty.
  void close() {
    if (id_ < 0) return;
    const hid_t id = std::exchange(id_, H5I_INVALID_HID);
    check(close_id(K, id), close_name(K));
  }
  /// Closes now, ignoring errors (destructor path).
  void reset() noexcept {
    if (id_ >= 0) close_id(K, std::exchange(id_, H5I_INVALID_HID));
  }
  /// Gives up ownership without closing (used when closing would be a collective call that
  /// other MPI ranks will never join).
  hid_t release() noexcept { return std::exchange(id_, H5I_INVALID_HID); }

 private:
  hid_t id_ = H5I_INVALID_HID;
};

using File = Handle<Kind::File>;
using Group = Handle<Kind::Group>;
using Dataset = Handle<Kind::Dataset>;
using Dataspace = Handle<Kind::Dataspace>;
using Datatype = Handle<Kind::Datatype>;
using PropertyList = Handle<Kind::PropertyList>;
using Attribute = Handle<Kind::Attribute>;

/// Variable-length UTF-8 string type (used for attributes).
Datatype vlen_string_type();
/// Fixed-length null-padded UTF-8 string type of `size` bytes (at least 1).
Datatype fixed_string_type(size_t size);

/// The strings of a 1-D string dataset (fixed- or variable-length) at `path` of `file`
/// (empty when it does not exist). Independent read. Throws InternalError.
std::vector<std::string> read_strings(hid_t file, const char* path);

/// Writes `values` as a 1-D variable-length UTF-8 string dataset `name` of `loc` over
/// `space`. Not in a file opened with the MPI-IO driver (HDF5 1.10 refuses variable-length
/// data there). Returns the dataset. Throws InternalError.
Dataset write_string_dataset(hid_t loc, const char* name, hid_t space,
                             const std::vector<std::string>& values);

/// Dimension scales (HDF5 High-Level H5DS API; what netCDF-4 reads as a dimension and its
/// coordinate variable): `scale` becomes the scale named `name`, and is attached to
/// dimension 0 of `dataset`. In a file opened with the MPI-IO driver every rank must make
/// the same calls (they write attributes). Throw InternalError.
void make_scale(hid_t scale, const char* name);
void attach_scale(hid_t dataset, hid_t scale);

/// Scalar attribute `name` on object `obj` (file, group or dataset). Strings are stored as
/// variable-length UTF-8. In a file opened with the MPI-IO driver, every rank must make the
/// same calls with the same values (attribute writes are collective metadata operations).
/// Throws InternalError.
void write_attribute(hid_t obj, const char* name, std::string_view value);
void write_attribute(hid_t obj, const char* name, int64_t value);
void write_attribute(hid_t obj, const char* name, double value);
/// 1-D array attributes (CF flag_values, flag_masks).
void write_attribute(hid_t obj, const char* name, std::span<const uint8_t> values);
void write_attribute(hid_t obj, const char* name, std::span<const uint32_t> values);

}  // namespace rapid::h5
