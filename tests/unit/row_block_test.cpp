// Row blocks (io/row_block.hpp) and the writer thread (io/background_writer.hpp) of the
// result file (issue 13 part 2).
#include "rapid/io/row_block.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <cmath>
#include <stdexcept>
#include <thread>
#include <vector>

#include "rapid/common/error.hpp"
#include "rapid/io/background_writer.hpp"

namespace rapid {
namespace {

size_t column_of(const char* name) {
  const auto cols = result_columns();
  for (size_t c = 0; c < cols.size(); ++c)
    if (std::string_view(cols[c].name) == name) return c;
  throw std::logic_error(name);
}

std::vector<ResultRow> rows(int n) {
  std::vector<ResultRow> out(static_cast<size_t>(n));
  for (int k = 0; k < n; ++k) {
    out[static_cast<size_t>(k)].point.index = 100 + k;
    out[static_cast<size_t>(k)].point.par.tp = 1 << (k % 4);
    out[static_cast<size_t>(k)].result.step_time_s = 0.5 * k;
    out[static_cast<size_t>(k)].result.status = k % 3 == 0 ? Status::OutOfMemory : Status::Ok;
  }
  return out;
}

TEST(RowBlock, PacksIndicesAndColumnsInStorageTypes) {
  const std::vector<ResultRow> r = rows(5);
  RowBlock b;
  b.pack(r);
  ASSERT_EQ(b.count(), 5);
  // 24 bytes of count, tag and stored-chunk bytes (none), then per row its index and every
  // column's storage bytes.
  EXPECT_EQ(b.bytes().size(), 24 + 5 * RowBlock::row_bytes());
  const size_t tp = column_of("tp"), step = column_of("step_time_s"), st = column_of("status");
  EXPECT_EQ(b.column(tp).size(), 5u * 4u);    // int32
  EXPECT_EQ(b.column(step).size(), 5u * 8u);  // float64
  EXPECT_EQ(b.column(st).size(), 5u * 1u);    // enum8
  for (size_t k = 0; k < 5; ++k) {
    EXPECT_EQ(b.index(k), 100 + static_cast<int64_t>(k));
    EXPECT_EQ(b.value(tp, k), static_cast<double>(1 << (k % 4)));
    EXPECT_EQ(b.value(step, k), 0.5 * static_cast<double>(k));
    EXPECT_EQ(b.value(st, k), k % 3 == 0 ? 1.0 : 0.0);  // oom = 1
  }
}

TEST(RowBlock, KeepsSelectsAndAppendsRowsWhole) {
  const std::vector<ResultRow> r = rows(7);
  RowBlock ok;
  ok.pack(r, [](const ResultRow& x) { return x.result.status == Status::Ok; });
  // Rows 1, 2, 4, 5 are ok (k % 3 != 0).
  ASSERT_EQ(ok.count(), 4);
  EXPECT_EQ(ok.index(0), 101);
  EXPECT_EQ(ok.index(3), 105);
  const size_t step = column_of("step_time_s");
  const std::vector<size_t> take = {3, 0};
  const RowBlock picked = ok.select(take);
  ASSERT_EQ(picked.count(), 2);
  EXPECT_EQ(picked.index(0), 105);
  EXPECT_EQ(picked.value(step, 0), 2.5);
  EXPECT_EQ(picked.index(1), 101);
  RowBlock all = picked;
  all.append(ok);
  ASSERT_EQ(all.count(), 6);
  EXPECT_EQ(all.index(2), 101);
  EXPECT_EQ(all.value(step, 5), 2.5);
  const RowBlock copy{ByteBuffer(all.bytes())};  // as received over MPI
  EXPECT_EQ(copy.bytes(), all.bytes());
}

TEST(RowBlock, RepackingReusesItsStorage) {
  // A block packed again with as many rows keeps its buffer (the scheduler reuses a
  // worker's last sent block: no allocation, no zero-fill per chunk), and the new rows
  // replace the old ones entirely.
  std::vector<ResultRow> rows(64);
  for (size_t k = 0; k < rows.size(); ++k) rows[k].point.index = static_cast<int64_t>(k);
  RowBlock block;
  block.pack(rows, {}, 1);
  const std::byte* storage = block.bytes().data();
  for (size_t k = 0; k < rows.size(); ++k) rows[k].point.index = static_cast<int64_t>(1000 + k);
  block.pack(rows, {}, 2);
  EXPECT_EQ(block.bytes().data(), storage);
  EXPECT_EQ(block.tag(), 2);
  EXPECT_EQ(block.count(), 64);
  EXPECT_EQ(block.index(63), 1063);
}

TEST(BackgroundWriter, RunsTasksInOrderOnOneThread) {
  BackgroundWriter w(64);  // a tiny limit: submit() waits for room
  std::vector<int> order;
  const std::thread::id me = std::this_thread::get_id();
  std::atomic<bool> elsewhere{true};
  for (int i = 0; i < 50; ++i)
    w.submit(
        [&, i] {
          if (std::this_thread::get_id() == me) elsewhere = false;
          order.push_back(i);
        },
        40);
  w.wait();
  ASSERT_EQ(order.size(), 50u);
  for (int i = 0; i < 50; ++i) EXPECT_EQ(order[static_cast<size_t>(i)], i);
  EXPECT_TRUE(elsewhere);
}

TEST(BackgroundWriter, AFailedTaskIsRethrownAndStopsTheRest) {
  BackgroundWriter w;
  int ran = 0;
  w.submit([] { throw InternalError("disk full"); });
  EXPECT_THROW(w.wait(), InternalError);
  EXPECT_THROW(w.submit([&] { ++ran; }), InternalError);
  EXPECT_EQ(ran, 0);
}

}  // namespace
}  // namespace rapid
