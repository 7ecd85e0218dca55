// The DES's communication owner (src/des/communicator.hpp) on two GPUs of one NVLink node,
// small enough to follow by hand: transfers from stage 0 to stage 1 share the one path.
#include "des/communicator.hpp"

#include <gtest/gtest.h>

#include <vector>

#include "test_support.hpp"

namespace rapid::des {
namespace {

// Two GPUs, NVLink at 100 GB/s a direction; one p2p layout GPU 0 -> GPU 1; transfers of
// 1 MB with a latency of 5 us.
struct TwoGpus {
  Fabric fabric;
  CommLayouts layouts;
  EventQueue queue;
  Communicator comm{queue, layouts};
  TwoGpus() {
    const NetworkSpec net = test::shipped_network("dgx-h100-superpod");
    EXPECT_TRUE(fabric.reset(net, 100e9, 2, {}, nullptr));
    layouts.reset(&fabric, 1, 1, 2, true, false);
    const int32_t l = layouts.p2p(0, 1);
    layouts.finalize();
    comm.clear(&fabric);
    for (int32_t c = 0; c < layouts.num_classes(); ++c)
      comm.net.add_resource(layouts.class_capacity(c));
    CommDesc d;
    d.ntiers = 1;
    d.bytes[0] = 1e6;
    d.layout_begin[0] = 0;
    d.layout_count[0] = 1;
    d.latency = to_ps(5e-6);
    comm.desc_layouts.push_back(l);
    comm.descs.push_back(d);
  }
  /// Runs the events; the kOpDone times of the ops, by slot.
  std::vector<SimTime> run() {
    std::vector<SimTime> done(8, -1);
    while (!queue.empty()) {
      const Event e = queue.pop();
      if (comm.stale(e)) continue;
      if (e.kind == kDrain) comm.on_drain(e.time, e.target);
      if (e.kind == kOpDone) done[static_cast<size_t>(e.target)] = e.time;
    }
    return done;
  }
};

TEST(Communicator, ATransferAloneTakesItsBytesOverTheLinkPlusItsLatency) {
  TwoGpus g;
  const int32_t id = g.comm.start(0, Transfer{0, 1, 0}, 0);
  // 1e6 B / 100e9 B/s = 10 us, then 5 us of latency.
  EXPECT_EQ(g.run()[static_cast<size_t>(id)], to_ps(10e-6) + to_ps(5e-6));
  EXPECT_EQ(g.comm.flows_started, 1u);
}

TEST(Communicator, TwoTransfersOnOnePathShareItAndFinishTogether) {
  TwoGpus g;
  const int32_t a = g.comm.start(0, Transfer{0, 1, 0}, 0);
  const int32_t b = g.comm.start(0, Transfer{0, 1, 1}, 0);
  // Max-min: 50 GB/s each, 1e6 B in 20 us; both done at 20 + 5 us.
  const std::vector<SimTime> done = g.run();
  EXPECT_EQ(done[static_cast<size_t>(a)], to_ps(20e-6) + to_ps(5e-6));
  EXPECT_EQ(done[static_cast<size_t>(b)], to_ps(20e-6) + to_ps(5e-6));
}

TEST(Communicator, ALaterTransferSlowsTheFirstForTheTimeTheyShare) {
  TwoGpus g;
  const int32_t a = g.comm.start(0, Transfer{0, 1, 0}, 0);
  // At 4 us the first has moved 400 kB; a second starts. Sharing at 50 GB/s, the first's
  // 600 kB take 12 us (done moving at 16 us); the second has moved 600 kB by then and its
  // last 400 kB take 4 us alone (20 us).
  // (The first's drain event at 10 us goes stale: its rate is re-solved.)
  const int32_t b = g.comm.start(to_ps(4e-6), Transfer{0, 1, 1}, 0);
  const std::vector<SimTime> done = g.run();
  EXPECT_NEAR(static_cast<double>(done[static_cast<size_t>(a)]), to_ps(16e-6) + to_ps(5e-6), 2);
  EXPECT_NEAR(static_cast<double>(done[static_cast<size_t>(b)]), to_ps(20e-6) + to_ps(5e-6), 2);
}

}  // namespace
}  // namespace rapid::des
