// The DES timeline's derived tracks (docs/des.md "Timeline"), on slices whose values are
// checked by hand: HBM bandwidth is each compute op's bytes over its span, summed where
// ops overlap; link utilisation the most any op in flight takes of its busiest link; flow
// events come as "s"/"f" pairs; provenance lands in "otherData".
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <sstream>

#include "rapid/des/timeline.hpp"

namespace rapid::des {
namespace {

constexpr SimTime kUs = 1000000;  // picoseconds per microsecond

nlohmann::json written(const Timeline& t) {
  std::ostringstream out;
  t.write_chrome_trace(out);
  return nlohmann::json::parse(out.str());
}

// The counter samples of `name`, (ts in us, value).
std::vector<std::pair<double, double>> samples(const nlohmann::json& doc, const std::string& name) {
  std::vector<std::pair<double, double>> v;
  for (const auto& e : doc["traceEvents"])
    if (e["ph"] == "C" && e["name"] == name)
      v.emplace_back(e["ts"].get<double>(), e["args"][name].get<double>());
  return v;
}

TEST(Timeline, CountersFromSlicesByHand) {
  Timeline t;
  t.set_instance_names({"gpu 0"});
  // A GEMM reading 2 MB in 1 us: 2e6 B / 1e-6 s = 2000 GB/s, from 0 to 1 us; then an
  // elementwise op of 0.5 MB over 1 us (1 to 2 us): 500 GB/s.
  Timeline::Slice a{0, Timeline::kCompute, "gemm", 0, 1 * kUs};
  a.hbm_bytes = 2e6;
  Timeline::Slice b{0, Timeline::kCompute, "add", 1 * kUs, 2 * kUs};
  b.hbm_bytes = 0.5e6;
  // Two collectives on NVLink: 0-4 us taking 2 us of its busiest link (50%), 1-2 us taking
  // 0.8 us of its own (80%): 50% from 0, 80% from 1 us (the larger in flight), 50% again
  // from 2 us, 0 at 4 us.
  Timeline::Slice c{0, Timeline::kTpComm, "all_reduce", 0, 4 * kUs};
  c.nvlink_busy_s = 2e-6;
  Timeline::Slice d{0, Timeline::kDpComm, "reduce_scatter", 1 * kUs, 2 * kUs};
  d.nvlink_busy_s = 0.8e-6;
  for (const auto& s : {a, b, c, d}) t.add(s);
  t.add_flow({0, Timeline::kDpComm, 1 * kUs, 0, Timeline::kCompute, 2 * kUs, "grads"});
  t.set_metadata("job", "jobs/x.yaml");
  const nlohmann::json doc = written(t);

  const auto hbm = samples(doc, "HBM bandwidth (GB/s)");
  ASSERT_EQ(hbm.size(), 3u);
  EXPECT_DOUBLE_EQ(hbm[0].first, 0.0);
  EXPECT_NEAR(hbm[0].second, 2000.0, 1e-9);
  EXPECT_NEAR(hbm[1].second, 500.0, 1e-9);  // at 1 us: -2000 + 500
  EXPECT_DOUBLE_EQ(hbm[2].second, 0.0);     // at 2 us
  const auto nv = samples(doc, "NVLink utilisation, busiest link (%)");
  ASSERT_EQ(nv.size(), 4u);
  EXPECT_NEAR(nv[0].second, 50.0, 1e-9);
  EXPECT_NEAR(nv[1].second, 80.0, 1e-9);
  EXPECT_NEAR(nv[2].second, 50.0, 1e-9);
  EXPECT_DOUBLE_EQ(nv[3].first, 4.0);
  EXPECT_DOUBLE_EQ(nv[3].second, 0.0);
  EXPECT_TRUE(samples(doc, "network link utilisation, busiest link (%)").empty());

  int s = 0, f = 0;
  for (const auto& e : doc["traceEvents"]) {
    if (e["ph"] == "s") {
      ++s;
      EXPECT_DOUBLE_EQ(e["ts"].get<double>(), 1.0);
    }
    if (e["ph"] == "f") {
      ++f;
      EXPECT_DOUBLE_EQ(e["ts"].get<double>(), 2.0);
    }
  }
  EXPECT_EQ(s, 1);
  EXPECT_EQ(f, 1);
  EXPECT_EQ(doc["otherData"]["job"], "jobs/x.yaml");
}

}  // namespace
}  // namespace rapid::des
