// RAII HDF5 handles: checked calls throw InternalError naming the HDF5 function, handles
// close exactly once, attributes round-trip (serial HDF5: no MPI needed).
#include "rapid/io/hdf5_handle.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "rapid/common/error.hpp"
#include "test_support.hpp"

namespace rapid {
namespace {

TEST(Hdf5Handle, FailedCallThrowsInternalErrorNamingTheCall) {
  h5::silence_error_printing();
  try {
    h5::File f(H5Fopen("/nonexistent-dir/none.h5", H5F_ACC_RDONLY, H5P_DEFAULT), "H5Fopen");
    FAIL() << "no exception";
  } catch (const InternalError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("HDF5 H5Fopen failed"), std::string::npos) << what;
    // The HDF5 error stack contributes the reason.
    EXPECT_GT(what.size(), std::string("HDF5 H5Fopen failed: ").size()) << what;
  }
  EXPECT_THROW(h5::check(-1, "H5Dwrite"), InternalError);
  EXPECT_EQ(h5::check(1, "H5Tequal"), 1);  // htri_t true passes through
}

TEST(Hdf5Handle, ClosesOnceAndMoves) {
  hid_t raw = H5I_INVALID_HID;
  {
    h5::Dataspace a(H5Screate(H5S_SCALAR), "H5Screate");
    raw = a.get();
    EXPECT_GT(H5Iis_valid(raw), 0);
    h5::Dataspace b(std::move(a));
    EXPECT_FALSE(a.valid());  // NOLINT(bugprone-use-after-move): moved-from is empty
    EXPECT_EQ(b.get(), raw);
    h5::Dataspace c;
    c = std::move(b);
    EXPECT_EQ(c.get(), raw);
    EXPECT_GT(H5Iis_valid(raw), 0);
  }
  EXPECT_LE(H5Iis_valid(raw), 0);  // closed by c's destructor

  h5::PropertyList p(H5Pcreate(H5P_FILE_ACCESS), "H5Pcreate");
  const hid_t kept = p.release();
  EXPECT_FALSE(p.valid());
  EXPECT_GT(H5Iis_valid(kept), 0);  // release() does not close
  EXPECT_GE(H5Pclose(kept), 0);
}

TEST(Hdf5Handle, AttributesAndStringTypesRoundTrip) {
  const std::string path = test::temp_path("handle_test.h5");
  {
    h5::File f(H5Fcreate(path.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT), "H5Fcreate");
    h5::write_attribute(f.get(), "text", std::string_view("llama3-8b\non two lines"));
    h5::write_attribute(f.get(), "count", int64_t{-7});
    h5::write_attribute(f.get(), "rate", 2.5);
    f.close();
  }
  h5::File f(H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT), "H5Fopen");

  h5::Attribute text(H5Aopen(f.get(), "text", H5P_DEFAULT), "H5Aopen");
  h5::Datatype type(H5Aget_type(text.get()), "H5Aget_type");
  EXPECT_GT(H5Tis_variable_str(type.get()), 0);
  EXPECT_EQ(H5Tget_cset(type.get()), H5T_CSET_UTF8);
  h5::Datatype vlen = h5::vlen_string_type();
  char* value = nullptr;
  ASSERT_GE(H5Aread(text.get(), vlen.get(), &value), 0);
  EXPECT_STREQ(value, "llama3-8b\non two lines");
  H5free_memory(value);

  int64_t count = 0;
  h5::Attribute ca(H5Aopen(f.get(), "count", H5P_DEFAULT), "H5Aopen");
  ASSERT_GE(H5Aread(ca.get(), H5T_NATIVE_INT64, &count), 0);
  EXPECT_EQ(count, -7);
  double rate = 0;
  h5::Attribute ra(H5Aopen(f.get(), "rate", H5P_DEFAULT), "H5Aopen");
  ASSERT_GE(H5Aread(ra.get(), H5T_NATIVE_DOUBLE, &rate), 0);
  EXPECT_EQ(rate, 2.5);

  h5::Datatype fixed = h5::fixed_string_type(0);  // at least one byte
  EXPECT_EQ(H5Tget_size(fixed.get()), 1u);
  EXPECT_EQ(H5Tget_strpad(fixed.get()), H5T_STR_NULLPAD);
  std::filesystem::remove(path);
}

}  // namespace
}  // namespace rapid
