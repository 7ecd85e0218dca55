// The sweep's shortcuts on its innermost axes against the direct computation, on every
// legal point of two shipped jobs (a dense model with uneven stage extras, and an MoE
// model): set_layout_knobs on a neighbour's workload equals build_workload_layout, and
// estimate_memory (skipping stages that cannot peak higher) equals the largest stage_memory over
// every stage, the earliest on a tie.
#include <gtest/gtest.h>

#include "rapid/memory/memory_model.hpp"
#include "rapid/spec/sweep_spec.hpp"
#include "rapid/sweep/enumerator.hpp"
#include "rapid/workload/workload.hpp"
#include "test_support.hpp"

namespace rapid {
namespace {

void expect_same_stages(const Workload& a, const Workload& b, const std::string& what) {
  ASSERT_EQ(a.stages.size(), b.stages.size()) << what;
  EXPECT_TRUE(a.par == b.par) << what;
  for (size_t i = 0; i < a.stages.size(); ++i) {
    const StageInfo &x = a.stages[i], &y = b.stages[i];
    EXPECT_EQ(x.num_layers, y.num_layers) << what << " stage " << i;
    EXPECT_EQ(x.params, y.params) << what << " stage " << i;
    EXPECT_EQ(x.optimizer_params, y.optimizer_params) << what << " stage " << i;
    EXPECT_EQ(x.recompute_dense, y.recompute_dense) << what << " stage " << i;
    EXPECT_EQ(x.recompute_moe, y.recompute_moe) << what << " stage " << i;
    EXPECT_EQ(x.chunks_in_flight, y.chunks_in_flight) << what << " stage " << i;
  }
}

void check_job(const std::string& job) {
  const SweepSpec spec = load_sweep_spec(test::source_path(job));
  const Enumerator e(spec);
  Workload fresh, reused;
  ParallelConfig frame_of_reused;
  bool have_reused = false;
  int64_t reuses = 0;
  for (int64_t i = 0; i < e.size(); ++i) {
    const ParallelConfig par = e.decode(i).par;
    const std::string what = job + " " + par.describe();
    build_workload_layout(spec.model, spec.training, spec.network, par, fresh);
    if (have_reused && same_layout_frame(frame_of_reused, par)) {
      set_layout_knobs(spec.model, par, reused);
      ++reuses;
    } else {
      build_workload_layout(spec.model, spec.training, spec.network, par, reused);
    }
    frame_of_reused = par;
    have_reused = true;
    expect_same_stages(fresh, reused, what);

    // Every stage, the first largest peak.
    MemoryBreakdown every;
    for (size_t s = 0; s < fresh.stages.size(); ++s) {
      const MemoryBreakdown m = stage_memory(spec.model, spec.training, fresh, s);
      if (s == 0 || m.peak_bytes > every.peak_bytes) every = m;
    }
    const MemoryBreakdown direct = estimate_memory(spec.model, spec.training, fresh);
    EXPECT_EQ(direct.peak_bytes, every.peak_bytes) << what;
    EXPECT_EQ(direct.stage, every.stage) << what;
    EXPECT_EQ(direct.activations_bytes, every.activations_bytes) << what;
  }
  // The shortcut was taken (the enumerator puts ZeRO and recompute innermost).
  EXPECT_GT(reuses, e.size() / 2) << job;
}

TEST(LayoutReuse, DenseJobEveryPoint) {
  check_job("jobs/llama3-70b-256xh100.yaml");
}

TEST(LayoutReuse, MoeJobEveryPoint) {
  check_job("jobs/deepseek-v3-256xb200.yaml");
}

}  // namespace
}  // namespace rapid
