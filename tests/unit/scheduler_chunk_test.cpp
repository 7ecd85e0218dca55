// Guided chunk sizes of the sweep scheduler (sweep/scheduler.hpp):
// chunk = clamp(remaining / (4 * ranks), 64, 8192), capped by what remains.
#include <gtest/gtest.h>

#include "rapid/sweep/scheduler.hpp"

namespace rapid {
namespace {

TEST(SchedulerChunks, GuidedSizesShrinkTowardsTheEnd) {
  // 1e6 points on 4 ranks: 1e6 / 16 = 62500 -> capped at 8192.
  EXPECT_EQ(next_chunk_size(1'000'000, 4, 0), 8192);
  // 100000 on 4 ranks: 100000 / 16 = 6250 (between the bounds).
  EXPECT_EQ(next_chunk_size(100'000, 4, 0), 6250);
  // 1000 on 4 ranks: 1000 / 16 = 62 -> raised to the floor of 64.
  EXPECT_EQ(next_chunk_size(1000, 4, 0), 64);
  // Fewer points left than the floor: all of them, then nothing.
  EXPECT_EQ(next_chunk_size(10, 4, 0), 10);
  EXPECT_EQ(next_chunk_size(0, 4, 0), 0);
  // One rank: 400 / 4 = 100.
  EXPECT_EQ(next_chunk_size(400, 1, 0), 100);
}

TEST(SchedulerChunks, AlignedToTheFilesChunks) {
  // align 4096: one file chunk whatever the guided size (1e6 / 16 = 62500, 1000 / 16 = 62),
  // capped by what remains (the table's last, partial chunk: 1000 rows).
  EXPECT_EQ(next_chunk_size(1'000'000, 4, 0, 4096), 4096);
  EXPECT_EQ(next_chunk_size(20'000, 4, 0, 4096), 4096);
  EXPECT_EQ(next_chunk_size(1000, 4, 0, 4096), 1000);
  // --chunk wins over the alignment.
  EXPECT_EQ(next_chunk_size(1'000'000, 4, 100, 4096), 100);
}

TEST(SchedulerChunks, FixedSizeOverridesGuided) {
  EXPECT_EQ(next_chunk_size(1'000'000, 4, 7), 7);
  EXPECT_EQ(next_chunk_size(5, 4, 7), 5);
  EXPECT_EQ(next_chunk_size(0, 4, 7), 0);
}

TEST(SchedulerChunks, ChunksCoverTheIndexSpaceExactlyOnce) {
  // Handing out chunks until nothing remains visits every index once (N = 400 on 3 ranks:
  // 400/12 = 33 -> 64 each until fewer than 64 remain: 6 x 64 = 384, then 16).
  int64_t next = 0, chunks = 0;
  while (int64_t n = next_chunk_size(400 - next, 3, 0)) {
    next += n;
    ++chunks;
  }
  EXPECT_EQ(next, 400);
  EXPECT_EQ(chunks, 7);
}

}  // namespace
}  // namespace rapid
