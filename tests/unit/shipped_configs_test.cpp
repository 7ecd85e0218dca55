// Every shipped hardware and network file loads (issue 32: each new GPU's file must), a
// hardware file names itself after its file, and a GPU's `stack_factors_from` names a shipped GPU
// that borrows from no one (the factors are a calibrated GPU's, one step away).
#include <gtest/gtest.h>

#include <filesystem>
#include <set>
#include <string>

#include "test_support.hpp"

namespace rapid {
namespace {

/// The names of the top-level *.yaml files of configs/<dir> (variants live in a subfolder).
std::set<std::string> shipped(const std::string& dir) {
  std::set<std::string> names;
  for (const auto& e : std::filesystem::directory_iterator(test::source_path("configs/" + dir)))
    if (e.is_regular_file() && e.path().extension() == ".yaml") names.insert(e.path().stem());
  return names;
}

TEST(ShippedConfigs, EveryHardwareFileLoadsAndBorrowsFromACalibratedGpu) {
  const std::set<std::string> gpus = shipped("hardware");
  for (const char* added : {"b200-sxm-180gb", "gb200-nvl72-186gb", "h100-pcie-80gb",
                            "h100-nvl-94gb", "mi300x-oam-192gb", "mi325x-oam-256gb"})
    EXPECT_TRUE(gpus.contains(added)) << added;
  for (const std::string& name : gpus) {
    const HardwareSpec hw = test::shipped_hardware(name);
    EXPECT_EQ(hw.name, name);
    EXPECT_GT(hw.hbm_capacity_bytes, 0.0) << name;
    if (hw.stack_factors_from.empty()) continue;
    ASSERT_TRUE(gpus.contains(hw.stack_factors_from)) << name;
    EXPECT_TRUE(test::shipped_hardware(hw.stack_factors_from).stack_factors_from.empty()) << name;
  }
}

TEST(ShippedConfigs, EveryNetworkFileLoads) {
  for (const std::string& name : shipped("networks")) {
    const NetworkSpec net = test::shipped_network(name);  // throws on a bad file
    EXPECT_GE(net.gpus_per_node, 1) << name;
  }
  // The rack-scale domain and the mesh, as their files say.
  EXPECT_EQ(test::shipped_network("gb200-nvl72-superpod").gpus_per_node, 72);
  EXPECT_EQ(test::shipped_network("mi300x-roce-cluster").scale_up, ScaleUp::FullMesh);
}

}  // namespace
}  // namespace rapid
