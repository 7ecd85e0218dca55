// The pipeline schedule (workload/schedule.hpp) against its definition written out: the
// k-th forward of an interleaved stage runs chunk (k mod pp vpp) / pp of micro-batch
// (k / pp vpp) pp + k mod pp, backwards the chunks in reverse (Megatron-LM schedules.py,
// get_model_chunk_id and the micro-batch id of forward_backward_pipelining_with_interleaving).
#include "rapid/workload/schedule.hpp"

#include <gtest/gtest.h>

#include <algorithm>

namespace rapid {
namespace {

PassRef defined(int64_t pp, int64_t vpp, int64_t k, PassDir dir) {
  const int64_t group = pp * vpp, in = k % group;
  const int64_t chunk = dir == PassDir::Forward ? in / pp : vpp - 1 - in / pp;
  return PassRef{dir, static_cast<int32_t>(chunk), static_cast<int32_t>((k / group) * pp + k % pp)};
}

TEST(PipelineSchedule, FollowsItsDefinition) {
  std::vector<PassRef> got;
  for (int64_t pp : {1, 2, 3, 4, 8})
    for (int64_t vpp : {1, 2, 3, 5})
      for (int64_t groups : {1, 2, 3}) {
        const int64_t m = pp * groups + (vpp == 1 ? 1 : 0);  // 1F1B: any m
        for (int64_t stage = 0; stage < pp; ++stage) {
          pipeline_schedule(pp, vpp, m, stage, got);
          const int64_t total = m * vpp;
          const int64_t warm = vpp == 1 ? std::min(pp - stage - 1, m)
                                        : std::min((pp - stage - 1) * 2 + (vpp - 1) * pp, total);
          std::vector<PassRef> want;
          for (int64_t k = 0; k < warm; ++k) want.push_back(defined(pp, vpp, k, PassDir::Forward));
          for (int64_t k = 0; k < total - warm; ++k) {
            want.push_back(defined(pp, vpp, warm + k, PassDir::Forward));
            want.push_back(defined(pp, vpp, k, PassDir::Backward));
          }
          for (int64_t k = total - warm; k < total; ++k)
            want.push_back(defined(pp, vpp, k, PassDir::Backward));
          ASSERT_EQ(got.size(), want.size());
          for (size_t i = 0; i < got.size(); ++i) {
            EXPECT_EQ(got[i].dir, want[i].dir) << pp << " " << vpp << " " << m << " " << i;
            EXPECT_EQ(got[i].chunk, want[i].chunk) << pp << " " << vpp << " " << m << " " << i;
            EXPECT_EQ(got[i].mb, want[i].mb) << pp << " " << vpp << " " << m << " " << i;
          }
        }
      }
}

}  // namespace
}  // namespace rapid
