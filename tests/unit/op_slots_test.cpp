// The DES's running ops live in slots that finished ops leave to the next; an op's events
// carry its slot's version, so a reused slot turns the finished op's pending events stale.
#include <gtest/gtest.h>

#include "des/active_op.hpp"

namespace rapid::des {
namespace {

TEST(OpSlots, AFinishedOpsSlotIsReusedOneVersionLater) {
  OpSlots ops;
  ActiveOp a;
  a.target = Transfer{1, 2, 7};
  const int32_t first = ops.add(a);
  const int32_t second = ops.add(a);
  EXPECT_EQ(first, 0);
  EXPECT_EQ(second, 1);
  EXPECT_EQ(ops[first].version, 0u);
  EXPECT_EQ(ops[first].role(), CommRole::P2P);
  // The first is done; the next op takes its slot with version 1: an event of the first
  // (version 0) no longer matches.
  ops.release(first);
  ActiveOp b;
  b.target = DpRun{3, 4};
  const int32_t third = ops.add(b);
  EXPECT_EQ(third, first);
  EXPECT_EQ(ops[third].version, 1u);
  EXPECT_EQ(ops[third].role(), CommRole::Dp);
  EXPECT_EQ(std::get<DpRun>(ops[third].target).op, 4);
  // With no slot free, a new one.
  EXPECT_EQ(ops.add(b), 2);
}

}  // namespace
}  // namespace rapid::des
