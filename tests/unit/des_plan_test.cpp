// One decomposition for both fidelities: CollectiveCost::time() is the plan's latency plus
// its slowest tier, and the DES lays each tier out as flows between the actual GPUs whose
// uncontended rate is the tier's bandwidth, so on links a collective has to itself the DES
// takes exactly CollectiveCost::time() (docs/des.md "Collectives as flows").
#include <gtest/gtest.h>

#include <algorithm>
#include <limits>
#include <string>
#include <vector>

#include "rapid/cost/collective_cost.hpp"
#include "rapid/des/comm_layouts.hpp"
#include "rapid/des/fabric.hpp"
#include "test_support.hpp"

namespace rapid {
namespace {

TEST(CollectivePlan, TimeIsTheLatencyPlusTheSlowestTier) {
  SweepSpec s = test::spec_with("llama3-8b", "h100-sxm5-80gb", "dgx-h100-superpod", 8, 4096);
  const CollectiveCost cc(s.hardware[0], s.network);
  for (CollectiveKind k :
       {CollectiveKind::AllReduce, CollectiveKind::AllGather, CollectiveKind::ReduceScatter,
        CollectiveKind::AllToAll, CollectiveKind::SendRecv})
    for (const GroupShape& g : {GroupShape{8, 8, 1, 1}, GroupShape{16, 8, 2, 1},
                                GroupShape{32, 1, 32, 8}, GroupShape{64, 4, 16, 2}}) {
      const CollectivePlan p = cc.plan(k, 1e9, g);
      double slowest = 0;
      for (int t = 0; t < p.num_tiers; ++t) slowest = std::max(slowest, p.tiers[t].time_s());
      EXPECT_EQ(cc.time(k, 1e9, g), p.latency_s + slowest);
      EXPECT_EQ(cc.estimate(k, 1e9, g).algorithm, p.algorithm);
    }
}

// For layouts of one stage of tp x dp GPUs (pp = 1) of `hardware` on `network`: every
// tier's flows, alone on the network, move at the tier's bandwidth.
void expect_des_flows_take_the_plans_time(const std::string& hardware, const std::string& network) {
  SweepSpec s = test::spec_with("llama3-8b", hardware, network, 8, 4096);
  const CollectiveCost cc(s.hardware[0], s.network);
  des::Fabric fabric;
  des::CommLayouts layouts;
  for (int64_t tp : {1, 2, 4, 8})
    for (int64_t dp : {2, 4, 16, 32}) {
      ASSERT_TRUE(fabric.reset(s.network, cc.nvlink_Bps(), tp * dp));
      const GroupShape groups[] = {group_shape(tp, 1, 8), group_shape(dp, tp, 8)};
      for (const GroupShape& g : groups)
        for (CollectiveKind k : {CollectiveKind::AllReduce, CollectiveKind::AllGather,
                                 CollectiveKind::ReduceScatter, CollectiveKind::AllToAll})
          for (double bytes : {1e6, 1e9}) {
            if (g.size == 1) continue;
            layouts.reset(&fabric, tp, dp, 1, true, false);
            const CollectivePlan p = cc.plan(k, bytes, g);
            std::vector<std::vector<int32_t>> tier_layouts(static_cast<size_t>(p.num_tiers));
            for (int t = 0; t < p.num_tiers; ++t)
              ASSERT_TRUE(layouts.collective(g, p.tiers[t].pattern, 0, false, false,
                                             tier_layouts[static_cast<size_t>(t)]));
            layouts.finalize();
            for (int t = 0; t < p.num_tiers; ++t)
              for (int32_t l : tier_layouts[static_cast<size_t>(t)]) {
                double rate = std::numeric_limits<double>::infinity();
                for (const des::ResourceUse& u : layouts.uses(l))
                  rate = std::min(rate, layouts.class_capacity(u.res) / u.mult);
                const double des_time = p.tiers[t].flow_bytes / rate;
                EXPECT_NEAR(des_time, p.tiers[t].time_s(), 1e-12 * p.tiers[t].time_s())
                    << network << " " << collective_name(k) << " tp" << tp << " dp" << dp
                    << " group " << g.size << "/" << g.per_node << "/" << g.nodes << " tier " << t;
              }
          }
    }
}

// The DGX H100 SuperPOD (rail-optimized, 32 nodes per rail leaf, NVSwitch nodes).
TEST(CollectivePlan, DesFlowsAloneTakeTheCollectiveModelsTime) {
  expect_des_flows_take_the_plans_time("h100-sxm5-80gb", "dgx-h100-superpod");
}

// MI300X nodes on their Infinity Fabric full mesh: a group of l GPUs of a node gets the
// links among its members in both fidelities (TP2 one of 7, TP8 all 7), the one rule of
// NetworkSpec::scale_up_share: the DES's MeshShare link carries it.
TEST(CollectivePlan, DesFlowsOnAFullMeshTakeTheCollectiveModelsTime) {
  expect_des_flows_take_the_plans_time("mi300x-oam-192gb", "mi300x-roce-cluster");
}

}  // namespace
}  // namespace rapid
