// What makes a result file a netCDF-4 file as well as an HDF5 one, so that
// `xarray.open_dataset(path, group="points")` opens it with no options (README "Reading it
// with xarray"). Conventions, each with its source:
//  - Dimensions are HDF5 dimension scales (H5DS): netCDF-4 stores a dimension as a
//    dimension-scale dataset and reads HDF5 scales as dimensions (netCDF Users Guide, "The
//    NetCDF-4 Format" and "HDF5 interoperability"); a dataset without one gets a "phony"
//    dimension per dataset from netCDF-C and an error from h5netcdf. /points/point (the row
//    index 0..N-1) is the one dimension of every column; /hardware/hardware_index,
//    /scenarios/scenario and /resume/entry index the string tables.
//  - Enum columns use committed (named) HDF5 enum types in the root group, "<column>_t":
//    netCDF-C reads named datatypes as netCDF-4 user-defined types (NC_ENUM) and skips, as
//    an unknown type, any dataset whose enum type is anonymous (libhdf5/hdf5open.c,
//    nc4_rec_read_metadata_cb: NC_EBADTYPID datasets are skipped).
//  - Attributes after the CF Conventions (CF 1.11): `units` in UDUNITS-2 spelling (sec 3.1;
//    "1" for dimensionless quantities, sec 3.1.1), `long_name` (sec 3.2), and on enum and
//    bit-field columns, instead of units, `flag_values` or `flag_masks` with
//    `flag_meanings` (sec 3.5), so a netCDF reader that does not map enums still has the
//    names. The older rapid attributes `unit` and `description` stay.
//  - String datasets are variable-length UTF-8 (netCDF-4's NC_STRING; hdf5_handle.hpp says
//    why they are written through a serial handle).
#pragma once

#include <initializer_list>
#include <string>
#include <vector>

#include "rapid/io/hdf5_handle.hpp"
#include "rapid/io/result_schema.hpp"

namespace rapid {

/// Name of the dimension (and coordinate) of the /points columns: the row index.
inline constexpr const char* kPointDimension = "point";

/// CF `units` (UDUNITS-2 spelling) of column `c`; nullptr for enum and bit-field columns,
/// which carry CF flag attributes instead. Asserts that the schema's unit has a spelling.
const char* cf_units(const Column& c);

/// Name of the committed enum type of Enum8 column `c` in the root group ("status_t").
std::string enum_type_name(const Column& c);

/// Commits one named enum type per Enum8 column in the root group of `file`. Serial handle
/// or collective. Throws InternalError.
void commit_enum_types(hid_t file);

/// Opens the committed enum type of Enum8 column `c` of `file`. Throws InternalError.
h5::Datatype open_enum_type(hid_t file, const Column& c);

/// Writes the CF attributes of column `c` on `dataset`: units (or flag_values / flag_masks
/// and flag_meanings) and long_name. Collective in a file opened with MPI-IO.
void write_cf_attributes(hid_t dataset, const Column& c);

/// One column of a table of strings.
struct StringColumn {
  const char* name;
  const char* long_name;
  std::vector<std::string> values;
};

/// One column of numbers (float64, or int8 when `flag`), with its CF units.
struct NumberColumn {
  const char* name;
  const char* long_name;
  const char* units;
  std::vector<double> values;
  bool flag = false;
};

/// Creates group `group` of `file` with one variable-length string dataset per string
/// column and one dataset per number column (all of the same length n), and the dimension
/// scale `dimension` (int64 0..n-1, long name `dimension_long_name`) attached to each.
/// Serial handle only (variable-length data). Throws InternalError.
void write_table(hid_t file, const char* group, const char* dimension,
                 const char* dimension_long_name, const std::vector<StringColumn>& strings,
                 const std::vector<NumberColumn>& numbers = {});
/// write_table() with string columns only.
inline void write_string_table(hid_t file, const char* group, const char* dimension,
                               const char* dimension_long_name,
                               std::initializer_list<StringColumn> columns) {
  write_table(file, group, dimension, dimension_long_name, columns);
}

}  // namespace rapid
