// Every row of kHardwareFields (include/rapid/spec/hardware_spec.hpp) as parse_hardware
// reads it: a value outside the row's range is refused naming the key, a required key is
// required, an optional one takes its default, and a given value lands in the row's member.
// Run on configs/hardware/h100-sxm5-80gb.yaml with one key changed at a time.
#include <gtest/gtest.h>

#include <string>

#include "rapid/common/error.hpp"
#include "rapid/spec/hardware_spec.hpp"
#include "rapid/spec/yaml_reader.hpp"
#include "test_support.hpp"

namespace rapid {
namespace {

const std::string kFile = test::source_path("configs/hardware/h100-sxm5-80gb.yaml");

// The row's key in `node` (inside its section when it has one).
YAML::Node key_of(YAML::Node& node, const HardwareField& f) {
  return *f.section ? node[f.section][f.key] : node[f.key];
}

// The dotted key an error names: "efficiency.gemm", "hbm_bandwidth".
std::string dotted(const HardwareField& f) {
  return *f.section ? std::string(f.section) + "." + f.key : std::string(f.key);
}

// The InputError parsing `node` throws, or an empty one when it parses.
InputError error_of(const YAML::Node& node) {
  try {
    parse_hardware(node, kFile);
  } catch (const InputError& e) {
    return e;
  }
  return InputError("", "", "", "");
}

TEST(HardwareFields, AValueOutsideTheRowsRangeIsRefusedNamingTheKey) {
  for (const HardwareField& f : kHardwareFields) {
    YAML::Node node = load_yaml_file(kFile);
    if (*f.section && !node[f.section]) node[f.section] = YAML::Node(YAML::NodeType::Map);
    // A quantity beyond dimension_max (1e30 of the base unit is beyond every dimension's:
    // units.hpp); a plain number twice its row's maximum.
    key_of(node, f) = f.dimension ? "1e30" + std::string(dimension_base_unit(*f.dimension))
                                  : std::to_string(2 * f.max);
    EXPECT_EQ(error_of(node).key(), dotted(f)) << f.key;
  }
}

TEST(HardwareFields, ARateOrSizeBelowOneThousandBaseUnitsIsRefused) {
  // Rows marked positive divide a time: 999 base units (999 B/s, 999 B, 999 Hz) would give
  // times a thousand-fold off on "ok" points.
  for (const HardwareField& f : kHardwareFields) {
    if (!f.positive) continue;
    YAML::Node node = load_yaml_file(kFile);
    key_of(node, f) = "999" + std::string(dimension_base_unit(*f.dimension));
    EXPECT_EQ(error_of(node).key(), f.key) << f.key;
  }
}

TEST(HardwareFields, ARequiredKeyIsRequiredAndAnOptionalOneTakesItsDefault) {
  const HardwareSpec defaults;  // the members' initializers
  for (const HardwareField& f : kHardwareFields) {
    YAML::Node node = load_yaml_file(kFile);
    node.remove("power");  // its rule tdp > idle + active would refuse the file without tdp
    if (*f.section)
      node[f.section].remove(f.key);
    else
      node.remove(f.key);
    if (f.required) {
      EXPECT_EQ(error_of(node).key(), f.key) << f.key;
      continue;
    }
    const HardwareSpec h = parse_hardware(node, kFile);
    // default_from: the other key's value as parsed (host_link_bandwidth: the file's
    // pcie_bandwidth, 64 GB/s); else the member's initializer.
    const double expected = f.default_from ? h.*f.default_from : defaults.*f.member;
    EXPECT_EQ(h.*f.member, expected) << f.key;
  }
}

TEST(HardwareFields, AGivenValueLandsInTheRowsMember) {
  // One value inside every row's range, in base units: 5e3 (a quantity: 5e3 B/s, B, Hz, s,
  // FLOP/s or W; a number: the middle of its range).
  for (const HardwareField& f : kHardwareFields) {
    YAML::Node node = load_yaml_file(kFile);
    if (*f.section && !node[f.section]) node[f.section] = YAML::Node(YAML::NodeType::Map);
    const double value = f.dimension ? 5e3 : 0.5 * (f.min + f.max);
    key_of(node, f) = f.dimension ? "5e3" + std::string(dimension_base_unit(*f.dimension))
                                  : std::to_string(value);
    const HardwareSpec h = parse_hardware(node, kFile);
    EXPECT_DOUBLE_EQ(h.*f.member, value) << f.key;
  }
}

}  // namespace
}  // namespace rapid
