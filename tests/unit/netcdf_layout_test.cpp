// The netCDF-4 side of the result file (io/netcdf_layout.hpp): every column has CF units or
// flags, string tables round-trip as variable-length strings over their dimension scale,
// enum types are committed (serial HDF5: no MPI needed).
#include "rapid/io/netcdf_layout.hpp"

#include <H5DSpublic.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <set>
#include <string>
#include <string_view>

#include "rapid/io/hdf5_handle.hpp"
#include "rapid/io/result_schema.hpp"
#include "test_support.hpp"

namespace rapid {
namespace {

TEST(NetcdfLayout, EveryColumnHasUdunitsOrFlags) {
  // The spellings `udunits2 -H` accepts (udunits-bin 2.2.28); "B" and "C" are not among them.
  const std::set<std::string_view> udunits = {"1", "s", "byte", "s-1", "J-1",
                                              "W", "J", "MW",   "degC"};
  for (const Column& c : result_columns()) {
    const char* u = cf_units(c);
    if (c.type == ColumnType::Enum8 || std::string_view(c.name) == "warning_flags") {
      EXPECT_EQ(u, nullptr) << c.name;
    } else {
      ASSERT_NE(u, nullptr) << c.name;
      EXPECT_TRUE(udunits.count(u)) << c.name << ": " << u;
    }
  }
  for (const Column& c : result_columns()) {
    if (std::string_view(c.name) == "peak_memory_bytes") {
      EXPECT_STREQ(cf_units(c), "byte");
    }
  }
}

TEST(NetcdfLayout, WarningBitsAreTheFlagsOfEvalResult) {
  uint32_t all = 0;
  for (const FlagBit& b : warning_flag_bits()) {
    EXPECT_EQ(b.mask & (b.mask - 1), 0u) << b.name << " is one bit";
    EXPECT_EQ(all & b.mask, 0u) << b.name << " is its own bit";
    all |= b.mask;
  }
  EXPECT_EQ(all, kFlagSmallMicrobatch | kFlagLatencyBoundComm | kFlagClosedFormRisk |
                     kFlagPipelineBubble | kFlagNearCapacity | kFlagPromptOverBudget);
}

TEST(NetcdfLayout, StringTableRoundTripsOverItsScale) {
  const std::string path = test::temp_path("netcdf_layout_test.h5");
  {
    h5::File f(H5Fcreate(path.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT), "H5Fcreate");
    commit_enum_types(f.get());
    write_string_table(f.get(), "hardware", "hardware_index", "hardware variant",
                       {{"names", "name", {"h100-sxm5-80gb", "a100 \xc3\xa9"}},
                        {"yaml", "text", {"name: h100\n", ""}}});
    f.close();
  }
  h5::File f(H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT), "H5Fopen");
  EXPECT_EQ(h5::read_strings(f.get(), "/hardware/names"),
            (std::vector<std::string>{"h100-sxm5-80gb", "a100 \xc3\xa9"}));
  EXPECT_EQ(h5::read_strings(f.get(), "/hardware/yaml"),
            (std::vector<std::string>{"name: h100\n", ""}));
  EXPECT_TRUE(h5::read_strings(f.get(), "/hardware/none").empty());
  h5::Dataset names(H5Dopen2(f.get(), "/hardware/names", H5P_DEFAULT), "H5Dopen2");
  h5::Dataset scale(H5Dopen2(f.get(), "/hardware/hardware_index", H5P_DEFAULT), "H5Dopen2");
  EXPECT_GT(H5DSis_scale(scale.get()), 0);
  EXPECT_GT(H5DSis_attached(names.get(), scale.get(), 0), 0);
  h5::Datatype type(H5Dget_type(names.get()), "H5Dget_type");
  EXPECT_GT(H5Tis_variable_str(type.get()), 0);  // netCDF-4's NC_STRING
  for (const Column& c : result_columns()) {
    if (c.type != ColumnType::Enum8) continue;
    h5::Datatype t = open_enum_type(f.get(), c);
    EXPECT_GT(H5Tcommitted(t.get()), 0) << c.name;
    EXPECT_EQ(H5Tget_nmembers(t.get()), static_cast<int>(c.enum_names.size())) << c.name;
  }
  f.close();
  std::filesystem::remove(path);
}

}  // namespace
}  // namespace rapid
