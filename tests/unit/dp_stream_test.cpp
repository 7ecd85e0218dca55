// A stage's DP stream in the simulator (src/des/dp_stream.hpp), by hand: ops start in lane
// order once every simulated replica posted them, one at a time per lane, the two lanes side
// by side; cover() is the union of the time ops ran.
#include <gtest/gtest.h>

#include <utility>
#include <vector>

#include "des/dp_stream.hpp"

namespace rapid::des {
namespace {

// Two replicas; ops 0 and 2 reductions (lane 0, descs 10 and 12), op 1 a gather (lane 1,
// desc 11).
DpStream two_replicas() {
  DpStream ds;
  ds.needed = 2;
  ds.add_op(10, 0);
  ds.add_op(11, 1);
  ds.add_op(12, 0);
  return ds;
}

TEST(DpStream, AnOpStartsWhenEveryReplicaPostedItAndItsLaneIsFree) {
  DpStream ds = two_replicas();
  std::vector<std::pair<int32_t, int32_t>> started;  // (op, desc)
  auto start = [&](int32_t k, int32_t d) { started.push_back({k, d}); };
  EXPECT_FALSE(ds.post(0));  // one replica of two
  ds.start_ready(5, start);
  EXPECT_TRUE(started.empty());
  EXPECT_TRUE(ds.post(0));  // the second
  EXPECT_FALSE(ds.post(2));
  EXPECT_TRUE(ds.post(2));  // op 2 posted, but behind op 0 on lane 0
  ds.start_ready(5, start);
  EXPECT_EQ(started, (std::vector<std::pair<int32_t, int32_t>>{{0, 10}}));
  EXPECT_FALSE(ds.quiet());
  // Op 0 ends at 15: lane 0 moves on to op 2, which starts; op 1 (lane 1) is not posted.
  ds.finish(0, 5, 15);
  ds.start_ready(15, start);
  EXPECT_EQ(started.back(), (std::pair<int32_t, int32_t>{2, 12}));
  EXPECT_EQ(ds.done[0], 15);
  EXPECT_EQ(ds.busy_ps, 10);
  ds.finish(2, 15, 30);
  EXPECT_TRUE(ds.quiet());  // nothing running, op 1 not posted
}

TEST(DpStream, CoverIsTheUnionOfTheOpsSpans) {
  DpStream ds = two_replicas();
  ds.needed = 1;
  auto none = [](int32_t, int32_t) {};
  // Op 0 ran [10, 40], op 1 (the other lane) [30, 60]; op 2 runs since 70.
  ds.post(0);
  ds.start_ready(10, none);
  ds.post(1);
  ds.start_ready(30, none);
  ds.finish(0, 10, 40);
  ds.finish(1, 30, 60);
  ds.post(2);
  ds.start_ready(70, none);
  std::vector<std::pair<SimTime, SimTime>> spans;
  // Over [0, 100] at now = 100: [10, 60] and [70, 100]: 50 + 30 = 80.
  EXPECT_EQ(ds.cover(0, 100, 100, spans), 80);
  // Over [35, 75]: [35, 60] and [70, 75]: 25 + 5 = 30.
  EXPECT_EQ(ds.cover(35, 75, 100, spans), 30);
  EXPECT_EQ(ds.cover(75, 75, 100, spans), 0);  // an empty interval
}

}  // namespace
}  // namespace rapid::des
