// A layer collective of several simulated instances starts when the last participant posts
// (NCCL collectives wait for every rank of the communicator), wakes exactly its
// participants, and the k-th posts of the instances on a layout meet each other.
#include "des/unit_rendezvous.hpp"

#include <gtest/gtest.h>

namespace rapid::des {
namespace {

TEST(UnitRendezvous, StartsOnTheLastPostAndWakesItsParticipants) {
  UnitRendezvous r;
  r.reset(4);
  // Instances 2 and 0 post layout 5 of 3 participants: still open.
  EXPECT_FALSE(r.post(2, 5, 3));
  EXPECT_FALSE(r.post(0, 5, 3));
  // Instance 3 posts its first collective on another layout (2 participants): open too.
  EXPECT_FALSE(r.post(3, 7, 2));
  // Instance 1 completes layout 5: its waiters are 2, 0, 1 in posting order.
  const auto u = r.post(1, 5, 3);
  ASSERT_TRUE(u);
  ASSERT_EQ(u->count, 3);
  EXPECT_EQ(r.waiter(*u, 0), 2);
  EXPECT_EQ(r.waiter(*u, 1), 0);
  EXPECT_EQ(r.waiter(*u, 2), 1);
  // Layout 7 is still open: the pool (3 + 2 slots) stays when layout 5 ends.
  r.finished(*u);
  EXPECT_EQ(r.pool_size(), 5u);
  const auto v = r.post(0, 7, 2);
  ASSERT_TRUE(v);
  EXPECT_EQ(r.waiter(*v, 0), 3);
  EXPECT_EQ(r.waiter(*v, 1), 0);
  // Nothing open or running: the pool is emptied.
  r.finished(*v);
  EXPECT_EQ(r.pool_size(), 0u);
}

TEST(UnitRendezvous, AnInstancesSecondPostMeetsTheOthersSecond) {
  UnitRendezvous r;
  r.reset(2);
  // Instance 0 runs ahead: its first and second collectives on layout 1 are both open.
  EXPECT_FALSE(r.post(0, 1, 2));
  EXPECT_FALSE(r.post(0, 1, 2));
  // Instance 1's first post completes the first collective, not the second.
  const auto first = r.post(1, 1, 2);
  ASSERT_TRUE(first);
  EXPECT_EQ(first->pool_begin, 0);
  const auto second = r.post(1, 1, 2);
  ASSERT_TRUE(second);
  EXPECT_EQ(second->pool_begin, 2);
  EXPECT_EQ(r.waiter(*second, 0), 0);
  EXPECT_EQ(r.waiter(*second, 1), 1);
}

TEST(UnitRendezvous, OneInstanceNeedsNoPool) {
  UnitRendezvous r;
  r.reset(1);
  const UnitWaiters alone{-1, 1, 0};
  EXPECT_EQ(r.waiter(alone, 0), 0);
  r.finished(alone);  // not pooled: nothing to count down
  EXPECT_EQ(r.pool_size(), 0u);
}

}  // namespace
}  // namespace rapid::des
