#include "rapid/io/netcdf_layout.hpp"

#include <cstring>
#include <numeric>
#include <string_view>

#include "rapid/common/error.hpp"

namespace rapid {

namespace {

bool is_bit_field(const Column& c) {
  return std::string_view(c.name) == "warning_flags";
}

std::string join(std::span<const char* const> words) {
  std::string out;
  for (const char* w : words) {
    if (!out.empty()) out += ' ';
    out += w;
  }
  return out;
}

}  // namespace

const char* cf_units(const Column& c) {
  if (c.type == ColumnType::Enum8 || is_bit_field(c)) return nullptr;
  // The schema's units (human spellings) -> UDUNITS-2 (CF 1.11 sec 3.1: units "recognized
  // by the UDUNITS package"; every spelling here checked with `udunits2 -H`, udunits-bin
  // 2.2.28). udunits2-common.xml defines byte = octet = 8 (bit being 1): "B" is not a
  // UDUNITS unit; "C" is the coulomb (udunits2-derived.xml), a temperature is "degC"
  // (degree_Celsius; CF sec 3.1.2); tokens are a count (dimensionless), so tokens/s is
  // "s-1" and tokens/J "J-1"; counts, degrees and indices are "1" (CF sec 3.1.1). Not
  // "seconds": xarray decodes a variable whose units name a time unit as timedelta64.
  struct Spelling {
    std::string_view schema;
    const char* udunits;
  };
  static constexpr Spelling kSpellings[] = {
      {"", "1"},  {"1", "1"}, {"s", "s"},   {"B", "byte"}, {"tokens/s", "s-1"},
      {"W", "W"}, {"J", "J"}, {"MW", "MW"}, {"C", "degC"}, {"tokens/J", "J-1"},
      {"1/s", "s-1"}, {"tokens", "1"},
  };
  for (const Spelling& s : kSpellings)
    if (s.schema == c.unit) return s.udunits;
  RAPID_ASSERT(false, "every unit of the schema has a UDUNITS spelling (netcdf_layout.cpp)");
  return nullptr;
}

std::string enum_type_name(const Column& c) {
  return std::string(c.name) + "_t";  // netCDF's convention for type names (ncgen, CDL)
}

void commit_enum_types(hid_t file) {
  for (const Column& c : result_columns()) {
    if (c.type != ColumnType::Enum8) continue;
    h5::Datatype t(H5Tenum_create(H5T_NATIVE_UINT8), "H5Tenum_create");
    for (size_t v = 0; v < c.enum_names.size(); ++v) {
      const auto value = static_cast<uint8_t>(v);
      h5::check(H5Tenum_insert(t.get(), c.enum_names[v], &value), "H5Tenum_insert");
    }
    h5::check(
        H5Tcommit2(file, enum_type_name(c).c_str(), t.get(), H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT),
        "H5Tcommit2");
    t.close();
  }
}

h5::Datatype open_enum_type(hid_t file, const Column& c) {
  RAPID_ASSERT(c.type == ColumnType::Enum8, "an enum column");
  return h5::Datatype(H5Topen2(file, enum_type_name(c).c_str(), H5P_DEFAULT), "H5Topen2");
}

void write_cf_attributes(hid_t dataset, const Column& c) {
  if (c.type == ColumnType::Enum8) {
    // CF sec 3.5: flag_values, one per member, and their blank-separated flag_meanings.
    std::vector<uint8_t> values(c.enum_names.size());
    std::iota(values.begin(), values.end(), uint8_t{0});
    h5::write_attribute(dataset, "flag_values", std::span<const uint8_t>(values));
    h5::write_attribute(dataset, "flag_meanings", std::string_view(join(c.enum_names)));
  } else if (is_bit_field(c)) {
    // CF sec 3.5: independent bits are flag_masks, with their flag_meanings.
    std::vector<uint32_t> masks;
    std::vector<const char*> names;
    for (const FlagBit& b : warning_flag_bits()) {
      masks.push_back(b.mask);
      names.push_back(b.name);
    }
    h5::write_attribute(dataset, "flag_masks", std::span<const uint32_t>(masks));
    h5::write_attribute(dataset, "flag_meanings", std::string_view(join(names)));
  } else {
    h5::write_attribute(dataset, "units", std::string_view(cf_units(c)));
  }
  h5::write_attribute(dataset, "long_name", std::string_view(c.description));  // CF sec 3.2
}

void write_table(hid_t file, const char* group, const char* dimension,
                 const char* dimension_long_name, const std::vector<StringColumn>& columns,
                 const std::vector<NumberColumn>& numbers) {
  RAPID_ASSERT(!columns.empty(), "a table has a string column");
  const size_t n = columns.begin()->values.size();
  h5::Group g(H5Gcreate2(file, group, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT), "H5Gcreate2");
  const hsize_t dims = n;
  h5::Dataspace space(H5Screate_simple(1, &dims, nullptr), "H5Screate_simple");
  h5::Dataset scale(H5Dcreate2(g.get(), dimension, H5T_NATIVE_INT64, space.get(), H5P_DEFAULT,
                               H5P_DEFAULT, H5P_DEFAULT),
                    "H5Dcreate2");
  std::vector<int64_t> index(n);
  std::iota(index.begin(), index.end(), int64_t{0});
  if (n > 0)
    h5::check(H5Dwrite(scale.get(), H5T_NATIVE_INT64, H5S_ALL, H5S_ALL, H5P_DEFAULT, index.data()),
              "H5Dwrite");
  h5::make_scale(scale.get(), dimension);
  h5::write_attribute(scale.get(), "units", std::string_view("1"));
  h5::write_attribute(scale.get(), "long_name", std::string_view(dimension_long_name));
  for (const StringColumn& c : columns) {
    RAPID_ASSERT(c.values.size() == n, "the columns of a table have one length");
    h5::Dataset ds = h5::write_string_dataset(g.get(), c.name, space.get(), c.values);
    h5::attach_scale(ds.get(), scale.get());
    h5::write_attribute(ds.get(), "long_name", std::string_view(c.long_name));
    ds.close();
  }
  for (const NumberColumn& c : numbers) {
    RAPID_ASSERT(c.values.size() == n, "the columns of a table have one length");
    const hid_t type = c.flag ? H5T_NATIVE_INT8 : H5T_NATIVE_DOUBLE;
    h5::Dataset ds(
        H5Dcreate2(g.get(), c.name, type, space.get(), H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT),
        "H5Dcreate2");
    std::vector<int8_t> flags(c.values.begin(), c.values.end());
    if (n > 0)
      h5::check(H5Dwrite(ds.get(), type, H5S_ALL, H5S_ALL, H5P_DEFAULT,
                         c.flag ? static_cast<const void*>(flags.data())
                                : static_cast<const void*>(c.values.data())),
                "H5Dwrite");
    h5::attach_scale(ds.get(), scale.get());
    h5::write_attribute(ds.get(), "units", std::string_view(c.units));
    h5::write_attribute(ds.get(), "long_name", std::string_view(c.long_name));
    ds.close();
  }
  scale.close();
  g.close();
}

}  // namespace rapid
