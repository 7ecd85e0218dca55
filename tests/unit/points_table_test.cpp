// The compressed /points table (io/points_table.hpp) read back through HDF5: rows written in
// pieces, out of order and across chunk boundaries come back bit for bit; a column run of
// fill values is not stored and still reads back as its fill value; an appended table finds
// its rows by point index.
#include "rapid/io/points_table.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

#include "rapid/io/netcdf_layout.hpp"
#include "test_support.hpp"

namespace rapid {
namespace {

// Rows of point indices first..first+n-1 with values that depend on the index: step time
// first * 1e-3 + k / 7 (not a short binary fraction: deflate sees real mantissas), tp a power
// of two, status oom on every third row; the serving columns stay NaN.
std::vector<ResultRow> rows(int64_t first, int64_t n) {
  std::vector<ResultRow> out(static_cast<size_t>(n));
  for (int64_t k = 0; k < n; ++k) {
    ResultRow& r = out[static_cast<size_t>(k)];
    r.point.index = first + k;
    r.point.par.tp = 1 << ((first + k) % 4);
    r.result.step_time_s = 1e-3 * static_cast<double>(first) + static_cast<double>(k) / 7.0;
    r.result.status = (first + k) % 3 == 0 ? Status::OutOfMemory : Status::Ok;
  }
  return out;
}

size_t column_of(const char* name) {
  const auto cols = result_columns();
  for (size_t c = 0; c < cols.size(); ++c)
    if (std::string_view(cols[c].name) == name) return c;
  return cols.size();
}

h5::File new_file(const char* name) {
  h5::File f(H5Fcreate(test::temp_path(name).c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT),
             "H5Fcreate");
  commit_enum_types(f.get());
  return f;
}

TEST(PointsTable, RowsWrittenInPiecesReadBackBitForBit) {
  // 10,000 rows (chunks of 4096: two full ones and a partial one), written as 3 blocks in
  // the order [5000, 10000), [0, 3000), [3000, 5000).
  constexpr int64_t N = 10'000;
  h5::File f = new_file("points-fixed.h5");
  PointsTable t = PointsTable::create(f.get(), N);
  for (auto [a, b] : {std::pair<int64_t, int64_t>{5000, 10000}, {0, 3000}, {3000, 5000}}) {
    RowBlock blk;
    const std::vector<ResultRow> r = rows(a, b - a);
    blk.pack(r);
    t.write(blk);
  }
  const std::vector<double> step = t.read_column("step_time_s", 0, N);
  const std::vector<double> tp = t.read_column("tp", 0, N);
  const std::vector<double> status = t.read_column("status", 0, N);
  const std::vector<double> ttft = t.read_column("ttft_s", 0, N);
  const std::vector<uint8_t> done = t.read_done();
  for (int64_t i = 0; i < N; ++i) {
    const auto k = static_cast<size_t>(i);
    const int64_t block_first = i >= 5000 ? 5000 : i >= 3000 ? 3000 : 0;
    const double expected =
        1e-3 * static_cast<double>(block_first) + static_cast<double>(i - block_first) / 7.0;
    ASSERT_EQ(std::memcmp(&step[k], &expected, sizeof(double)), 0) << "row " << i;
    ASSERT_EQ(tp[k], static_cast<double>(1 << (i % 4)));
    ASSERT_EQ(status[k], i % 3 == 0 ? 1.0 : 0.0);
    ASSERT_TRUE(std::isnan(ttft[k]));  // never written: the fill value
    ASSERT_EQ(done[k], 1);
  }
  // The NaN-only serving column takes no storage; the step times do, compressed.
  h5::Dataset ttft_ds(H5Dopen2(f.get(), "/points/ttft_s", H5P_DEFAULT), "H5Dopen2");
  h5::Dataset step_ds(H5Dopen2(f.get(), "/points/step_time_s", H5P_DEFAULT), "H5Dopen2");
  EXPECT_EQ(H5Dget_storage_size(ttft_ds.get()), 0u);
  EXPECT_GT(H5Dget_storage_size(step_ds.get()), 0u);
  EXPECT_LT(H5Dget_storage_size(step_ds.get()), static_cast<hsize_t>(N) * 8u);
  t.close();
}

TEST(PointsTable, AnAppendedTableFindsItsRowsByPoint) {
  h5::File f = new_file("points-appended.h5");
  PointsTable t = PointsTable::create(f.get(), 0);
  // Points 10..19 and 40..44 appended in two blocks.
  for (auto [a, n] : {std::pair<int64_t, int64_t>{10, 10}, {40, 5}}) {
    RowBlock blk;
    const std::vector<ResultRow> r = rows(a, n);
    blk.pack(r);
    t.write(blk);
  }
  ASSERT_EQ(t.rows(), 15);
  // Rewrite point 42 (row 12) with step time 99 s; point 30 is not in the table: skipped.
  std::vector<ResultRow> again = rows(42, 1);
  again[0].result.step_time_s = 99.0;
  std::vector<ResultRow> absent = rows(30, 1);
  again.push_back(absent[0]);
  RowBlock upd;
  upd.pack(again);
  t.update(upd);
  const std::vector<double> step = t.read_column("step_time_s", 0, 15);
  EXPECT_EQ(step[12], 99.0);
  EXPECT_EQ(step[11], 1e-3 * 40 + 1.0 / 7.0);  // point 41 unchanged
  EXPECT_EQ(step[0], 1e-3 * 10);
  EXPECT_EQ(column_of("point"), result_columns().size());  // the index is not a column
  t.close();
}

}  // namespace
}  // namespace rapid
