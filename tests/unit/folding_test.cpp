// Dynamic folding (src/des/folding.hpp) on one link small enough to follow by hand.
#include "des/folding.hpp"

#include <gtest/gtest.h>

#include "des/sim_events.hpp"

namespace rapid::des {
namespace {

// One link of 1 GB/s; an op moving 1 MB over it alone takes 1 ms (1e6 B / 1e9 B/s), plus
// its latency of 10 us.
struct OneLink {
  FlowNetwork net;
  EventQueue queue;
  OpSlots ops;
  Folding folding{net, queue, ops};
  ResourceUse link{0, 1};
  OneLink() {
    net.add_resource(1e9);
    folding.reset(true, 1);
  }
  int32_t op_at(SimTime start) {
    ActiveOp op;
    op.start = start;
    op.latency = to_ps(10e-6);
    return ops.add(op);
  }
  std::span<const ResourceUse> uses() { return {&link, 1}; }
};

TEST(Folding, AnOpAloneOnItsLinkCompletesAtItsDrainPlusItsLatency) {
  OneLink f;
  const int32_t id = f.op_at(0);
  const OpBundle b{f.uses(), 1e6};
  ASSERT_TRUE(f.folding.try_fold(id, {&b, 1}, 0));
  EXPECT_TRUE(f.ops[id].folded);
  // Its kOpDone at 1 ms + 10 us, no drain event, nothing in the network.
  const Event e = f.queue.pop();
  EXPECT_EQ(e.kind, kOpDone);
  EXPECT_EQ(e.time, to_ps(1e-3) + to_ps(10e-6));
  EXPECT_TRUE(f.queue.empty());
  EXPECT_EQ(f.net.active_flows(0), 0);
  // Moving on the link until its drain, not after.
  EXPECT_EQ(f.folding.moving_on(0, to_ps(0.5e-3)), id);
  EXPECT_EQ(f.folding.moving_on(0, to_ps(1e-3)), -1);
}

TEST(Folding, AnOpMeetingAFoldedOneIsNotFoldedAndTheFoldedOneJoinsWithWhatItHasLeft) {
  OneLink f;
  const int32_t first = f.op_at(0);
  const OpBundle b{f.uses(), 1e6};
  ASSERT_TRUE(f.folding.try_fold(first, {&b, 1}, 0));
  f.queue.pop();
  // A second op at 0.25 ms finds the first still moving: not folded.
  const SimTime t = to_ps(0.25e-3);
  const int32_t second = f.op_at(t);
  EXPECT_FALSE(f.folding.try_fold(second, {&b, 1}, t));
  // The first joins the network: 1e6 - 1e9 x 0.25e-3 = 750,000 bytes left at 1 GB/s,
  // draining at 1 ms as it would have; a drain event for it, its old kOpDone stale.
  const uint32_t version = f.ops[first].version;
  f.folding.unfold(first, {&b, 1}, t);
  EXPECT_FALSE(f.ops[first].folded);
  EXPECT_EQ(f.ops[first].version, version + 1);
  EXPECT_EQ(f.ops[first].pending, 1);
  EXPECT_EQ(f.net.active_flows(0), 1);
  const Event drain = f.queue.pop();
  EXPECT_EQ(drain.kind, kDrain);
  EXPECT_EQ(drain.time, to_ps(1e-3));
  EXPECT_EQ(f.folding.moving_on(0, t), -1);  // no longer folded
}

TEST(Folding, TwoBundlesOfOneOpOnOneLinkAreNotFolded) {
  OneLink f;
  const int32_t id = f.op_at(0);
  const OpBundle two[] = {{f.uses(), 1e6}, {f.uses(), 1e6}};
  EXPECT_FALSE(f.folding.try_fold(id, two, 0));
  EXPECT_TRUE(f.queue.empty());
}

}  // namespace
}  // namespace rapid::des
