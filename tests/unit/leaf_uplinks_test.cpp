// A fat tree's leaf uplinks and leaf count (NetworkSpec::leaf_uplinks, leaves), the one rule
// the DES's fabric and the closed form's faulted network build on, by hand.
#include <gtest/gtest.h>

#include "rapid/spec/network_spec.hpp"

namespace rapid {
namespace {

NetworkSpec small_fabric(Topology t) {
  NetworkSpec n;
  n.topology = t;
  n.nodes_per_leaf = 4;
  n.nics_per_node = 2;
  n.leaf_bandwidth_Bps = 100e9;
  n.spine_bandwidth_Bps = 200e9;
  n.oversubscription = 2;
  n.network_efficiency = 0.9;
  return n;
}

TEST(LeafUplinks, TheLeafsDownlinksOverTheOversubscriptionInSpineLinks) {
  // Fat tree: 4 nodes x 2 NICs = 8 downlinks of 100 GB/s, / 2 = 400 GB/s up, in links of
  // 200 GB/s: 2 uplinks of 400 / 2 x 0.9 = 180 GB/s.
  const NetworkSpec::LeafUplinks fat = small_fabric(Topology::FatTree).leaf_uplinks();
  EXPECT_EQ(fat.count, 2);
  EXPECT_DOUBLE_EQ(fat.link_Bps, 180e9);
  // Rail-optimized: a rail's leaf has one NIC per node: 4 x 100 / 2 = 200 GB/s, one uplink
  // of 200 x 0.9 = 180 GB/s.
  const NetworkSpec::LeafUplinks rail = small_fabric(Topology::RailOptimized).leaf_uplinks();
  EXPECT_EQ(rail.count, 1);
  EXPECT_DOUBLE_EQ(rail.link_Bps, 180e9);
}

TEST(LeafUplinks, LeavesPerNodesPerLeafAndPerRail) {
  // 10 nodes, 4 per leaf: ceil(10 / 4) = 3 leaves; rail-optimized, 3 per rail x 2 rails.
  EXPECT_EQ(small_fabric(Topology::FatTree).leaves(10), 3);
  EXPECT_EQ(small_fabric(Topology::RailOptimized).leaves(10), 6);
}

}  // namespace
}  // namespace rapid
