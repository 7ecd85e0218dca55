// The compressed /points table (io/points_table.hpp) read back through HDF5: rows written in
// pieces, out of order and across chunk boundaries come back bit for bit; a column run of
// fill values is not stored and still reads back as its fill value; an appended table finds
// its rows by point index. Chunks stored by the evaluating rank (io/chunk_encoder.hpp) are
// byte for byte the chunks HDF5 stores itself, and read back through HDF5's filters.
#include "rapid/io/points_table.hpp"

#include <gtest/gtest.h>
#include <zlib.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

#include "rapid/io/chunk_encoder.hpp"
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

TEST(ChunkEncoder, Fletcher32IsHdf5sChecksum) {
  // "abcde" by hand (H5checksum.c: big-endian 16-bit words, sums from 0): words 0x6162,
  // 0x6364: sum1 = 0xc4c6, sum2 = 0x6162 + 0xc4c6 = 0x12628 -> folded 0x2629; the odd byte
  // 0x65 as 0x6500: sum1 = 0x129c6, sum2 = 0x2629 + 0x129c6 = 0x14fef; folded: sum1 0x29c7,
  // sum2 0x4ff0 -> 0x4ff029c7.
  const char text[] = "abcde";
  EXPECT_EQ(fletcher32(std::as_bytes(std::span(text, 5))), 0x4ff029c7u);
  // 0xff bytes: 1000 words of 0xffff; with a fold every 360 words the sums stay below 2^32
  // and reduce mod 65535: sum1 = 1000 * 65535 = 0 mod 65535 (folds to 0xffff), sum2 =
  // 65535 * 500500 = 0 mod 65535 (0xffff) -> 0xffffffff.
  const std::vector<std::byte> ones(2000, std::byte{0xff});
  EXPECT_EQ(fletcher32(ones), 0xffffffffu);
}

// Each dataset's chunk as HDF5 stores it (H5Dread_chunk: the filtered bytes and mask).
std::vector<std::byte> stored_chunk(hid_t file, const std::string& dataset, hsize_t first) {
  h5::Dataset ds(H5Dopen2(file, ("/points/" + dataset).c_str(), H5P_DEFAULT), "H5Dopen2");
  hsize_t size = 0;
  h5::check(H5Dget_chunk_storage_size(ds.get(), &first, &size), "H5Dget_chunk_storage_size");
  std::vector<std::byte> out(size);
  uint32_t mask = 1;
  if (size > 0)
    h5::check(H5Dread_chunk(ds.get(), H5P_DEFAULT, &first, &mask, out.data()), "H5Dread_chunk");
  EXPECT_EQ(size == 0 || mask == 0, true) << dataset << ": every filter applied";
  return out;
}

// A stored chunk's Fletcher-32 trailer (little-endian, H5Zfletcher32.c).
uint32_t trailer(const std::vector<std::byte>& chunk) {
  uint32_t v = 0;
  for (size_t b = 0; b < 4; ++b) v |= static_cast<uint32_t>(chunk[chunk.size() - 4 + b]) << (8 * b);
  return v;
}

// A stored chunk's zlib stream (before its trailer) inflated, by zlib.
std::vector<std::byte> inflated(const std::vector<std::byte>& chunk) {
  std::vector<std::byte> out(PointsTable::kChunkRows * 8);
  uLongf size = out.size();
  EXPECT_EQ(uncompress(reinterpret_cast<Bytef*>(out.data()), &size,
                       reinterpret_cast<const Bytef*>(chunk.data()), chunk.size() - 4),
            Z_OK);
  out.resize(size);
  return out;
}

// HDF5 writing the rows of `raw` itself (through its filter pipeline, into a table of N
// rows) stores the same chunks as `received` holds: the same bytes once inflated (the
// shuffled rows), each with its Fletcher-32 trailer (ours computed on HDF5's bytes gives
// HDF5's trailer), the same all-fill columns left out. Returns the chunks compared.
size_t compare_with_hdf5(const RowBlock& raw, const RowBlock& received, int64_t N,
                         const char* file_name) {
  h5::File by_hdf5 = new_file(file_name);
  PointsTable t = PointsTable::create(by_hdf5.get(), N);
  t.write(raw);
  t.close();
  const auto cols = result_columns();
  size_t stored = 0;
  for (const RowBlock::StoredChunk& c : received.stored()) {
    for (size_t d = 0; d < RowBlock::datasets(); ++d) {
      const std::string name = d < cols.size() ? cols[d].name : d == cols.size() ? "point" : "done";
      const std::vector<std::byte> ours(c.data[d].begin(), c.data[d].end());
      const std::vector<std::byte> theirs =
          stored_chunk(by_hdf5.get(), name, static_cast<hsize_t>(c.first_row));
      EXPECT_EQ(ours.empty(), theirs.empty()) << name << " chunk at row " << c.first_row;
      if (ours.empty() || theirs.empty()) continue;
      ++stored;
      EXPECT_EQ(trailer(theirs), fletcher32(std::span(theirs).first(theirs.size() - 4))) << name;
      EXPECT_EQ(trailer(ours), fletcher32(std::span(ours).first(ours.size() - 4))) << name;
      EXPECT_EQ(inflated(ours), inflated(theirs)) << name << " chunk at row " << c.first_row;
    }
  }
  return stored;
}

TEST(ChunkEncoder, StoresChunksAsHdf5DoesAndTheyReadBack) {
  // N = 8292 rows: chunks [0, 4096), [4096, 8192) and the last [8192, 8292) of 100 rows
  // (stored as 4096 elements, NaN or 0 past row 8291). The block holds rows [4000, 8292):
  // chunks 1 and 2 whole, rows 4000-4095 of chunk 0 not.
  constexpr int64_t N = 8292, first = 4000;
  const std::vector<ResultRow> r = rows(first, N - first);
  RowBlock raw;
  raw.pack(r);
  RowBlock encoded = raw;
  ChunkEncoder encoder(N);
  EXPECT_EQ(encoder.encode(encoded), 4096 + 100);
  EXPECT_EQ(encoded.count(), 96);  // rows 4000-4095, as rows
  EXPECT_EQ(encoded.index(0), 4000);
  EXPECT_EQ(encoded.stored_rows(), 4196);
  const RowBlock received{ByteBuffer(encoded.bytes())};  // as a worker sends it
  ASSERT_EQ(received.stored().size(), 2u);
  EXPECT_EQ(received.stored()[1].first_row, 8192);
  EXPECT_EQ(received.stored()[1].rows, 100);

  const size_t stored = compare_with_hdf5(raw, received, N, "points-by-hdf5.h5");
  // Not vacuous: at least point, done, step_time_s, tp and status are stored in both chunks.
  EXPECT_GE(stored, 2 * 5u);

  // The stored chunks written as they are read back through HDF5's filters (checksums
  // pass), every row whole; verify() passes; the rows before 4096 came as rows.
  h5::File by_us = new_file("points-stored.h5");
  PointsTable u = PointsTable::create(by_us.get(), N);
  u.write(received);
  const std::vector<uint8_t> done = u.read_done();
  EXPECT_EQ(u.verify(done), "");
  const std::vector<double> step = u.read_column("step_time_s", first, N - first);
  const std::vector<double> tp = u.read_column("tp", first, N - first);
  const std::vector<double> ttft = u.read_column("ttft_s", first, N - first);
  for (int64_t i = 0; i < N; ++i) ASSERT_EQ(done[static_cast<size_t>(i)], i >= first ? 1 : 0);
  for (int64_t i = first; i < N; ++i) {
    const auto k = static_cast<size_t>(i - first);
    const double expected = 1e-3 * static_cast<double>(first) + static_cast<double>(k) / 7.0;
    ASSERT_EQ(std::memcmp(&step[k], &expected, sizeof(double)), 0) << "row " << i;
    ASSERT_EQ(tp[k], static_cast<double>(1 << (i % 4)));
    ASSERT_TRUE(std::isnan(ttft[k]));
  }
  u.close();
}

TEST(ChunkEncoder, ATableShorterThanAChunk) {
  // N = 13 rows: one chunk of 13 elements (PointsTable: min(4096, N)), not a multiple of
  // the 8 elements the shuffle takes at a time; the block holds all of them.
  constexpr int64_t N = 13;
  const std::vector<ResultRow> r = rows(0, N);
  RowBlock raw;
  raw.pack(r);
  RowBlock encoded = raw;
  ChunkEncoder encoder(N);
  EXPECT_EQ(encoder.encode(encoded), N);
  EXPECT_EQ(encoded.count(), 0);
  const RowBlock received{ByteBuffer(encoded.bytes())};
  EXPECT_GE(compare_with_hdf5(raw, received, N, "points-short-by-hdf5.h5"), 5u);
}

}  // namespace
}  // namespace rapid
