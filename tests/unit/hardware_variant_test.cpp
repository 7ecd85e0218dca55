// Hardware variants (docs/variants.md): an override changes exactly the fields it names,
// grids expand as written, and bad variants are input errors naming file and key.
#include <gtest/gtest.h>

#include <cstdlib>

#include "rapid/common/error.hpp"
#include "rapid/spec/sweep_spec.hpp"
#include "test_support.hpp"

namespace rapid {
namespace {

// A job on the A100 whose hardware axis is `hardware` (YAML) plus `extra` lines.
SweepSpec load_job(const std::string& name, const std::string& hardware,
                   const std::string& extra = "") {
  setenv("RAPID_CONFIG_DIR", test::source_path("configs").c_str(), 1);
  const std::string path =
      test::write_temp(name, "model: llama3-8b\nhardware: " + hardware +
                                 "\nnetwork: dgx-a100-superpod\ngpus: 16\n"
                                 "training: {global_batch_size: 64, seq_length: 4096}\n" +
                                 extra);
  return load_sweep_spec(path);
}

InputError load_error(const std::string& name, const std::string& hardware,
                      const std::string& extra = "") {
  try {
    load_job(name, hardware, extra);
  } catch (const InputError& e) {
    return e;
  }
  ADD_FAILURE() << "no InputError for " << name;
  return InputError("", "", "", "");
}

TEST(HardwareVariant, OverrideChangesExactlyTheFieldsItNames) {
  const SweepSpec s =
      load_job("variants.yaml",
               "[a100-sxm4-80gb, a100-b-hbm-160gb, a100-c-3d-hbm, a100-d-3d-hbm-thermal, "
               "a100-e-3d-hbm-2x-nvlink, a100-f-3d-hbm-2x-network, a100-a-stacked-l2]");
  ASSERT_EQ(s.hardware.size(), 7u);
  const HardwareSpec& base = s.hardware[0];
  // Each expected spec is the base file's with only the fields the variant names changed
  // (configs/hardware/variants/*.yaml); operator== compares every field.
  HardwareSpec b = base;  // B: hbm_capacity {scale: 2}: 80 GiB -> 160 GiB
  b.name = "a100-b-hbm-160gb";
  b.hbm_capacity_bytes = 160.0 * (1 << 30);
  EXPECT_EQ(s.hardware[1], b);
  HardwareSpec c = base;  // C: hbm_bandwidth {scale: 4}: 2039 GB/s -> 8156 GB/s
  c.name = "a100-c-3d-hbm";
  c.hbm_bandwidth_Bps = 8156e9;
  EXPECT_EQ(s.hardware[2], c);
  HardwareSpec d = c;  // D on C: thermal_derate hbm_bandwidth 0.73 -> 0.73 x 8156 GB/s
  d.name = "a100-d-3d-hbm-thermal";
  d.hbm_bandwidth_Bps = 0.73 * 8156e9;
  d.hbm_thermal_keep = 0.73;
  EXPECT_EQ(s.hardware[3], d);
  HardwareSpec e = c;  // E on C: nvlink_bandwidth {scale: 2}: 300 GB/s -> 600 GB/s
  e.name = "a100-e-3d-hbm-2x-nvlink";
  e.nvlink_bandwidth_Bps = 600e9;
  EXPECT_EQ(s.hardware[4], e);
  HardwareSpec f = c;  // F on C: only the network changes
  f.name = "a100-f-3d-hbm-2x-network";
  EXPECT_EQ(s.hardware[5], f);
  HardwareSpec a = base;  // A: l2_size 60 MiB
  a.name = "a100-a-stacked-l2";
  a.l2_size_bytes = 60.0 * (1 << 20);
  EXPECT_EQ(s.hardware[6], a);

  // F's network: leaf and spine links {scale: 2}: HDR 200 Gb/s -> 400 Gb/s = 50 GB/s; the
  // rest of the job's network as it is; every other entry runs on the job's network.
  NetworkSpec net = s.network;
  net.leaf_bandwidth_Bps = net.spine_bandwidth_Bps = 400e9 / 8;
  EXPECT_EQ(s.network_of(5), net);
  for (size_t h : {0u, 1u, 2u, 3u, 4u, 6u}) EXPECT_EQ(s.network_of(h), s.network) << h;

  // The record of what each changes, relative to the plain file at the root of its bases.
  EXPECT_TRUE(s.variants[0].is_base);
  EXPECT_EQ(s.variants[0].overrides, "");
  EXPECT_EQ(s.variants[3].base, "a100-sxm4-80gb");
  EXPECT_EQ(s.variants[3].overrides,
            "{hbm_bandwidth: 8156GB/s, thermal_derate: {hbm_bandwidth: 0.73}}");
  EXPECT_EQ(s.variants[5].overrides,
            "{hbm_bandwidth: 8156GB/s, network: {leaf_bandwidth: 400Gbps, spine_bandwidth: "
            "400Gbps}}");
}

TEST(HardwareVariant, InlineVariantAndGridExpand) {
  // An inline variant, then a grid of 3 bandwidths (2, 3, 4 TB/s: from 2 to 4 in steps of
  // 1) x 3 L2 sizes (8, 16, 32 MiB: factor 2) = 9 variants, the last axis fastest.
  const SweepSpec s = load_job(
      "grid.yaml",
      "[a100-sxm4-80gb, {name: a100-fast-clock, base: a100-sxm4-80gb, overrides: {sm_clock: "
      "{scale: 1.1}}}]",
      "hardware_grid:\n  base: a100-sxm4-80gb\n  name: a100\n  axes:\n"
      "    hbm_bandwidth: {from: 2TB/s, to: 4TB/s, step: 1TB/s}\n"
      "    l2_size: {from: 8MiB, to: 32MiB, factor: 2}\n");
  ASSERT_EQ(s.hardware.size(), 11u);
  EXPECT_DOUBLE_EQ(s.hardware[1].sm_clock_Hz, 1.1 * 1410e6);
  EXPECT_EQ(s.hardware[2].name, "a100@hbm_bandwidth=2TB/s,l2_size=8MiB");
  EXPECT_EQ(s.hardware[10].name, "a100@hbm_bandwidth=4TB/s,l2_size=32MiB");
  for (int i = 0; i < 9; ++i) {
    const HardwareSpec& h = s.hardware[static_cast<size_t>(2 + i)];
    EXPECT_DOUBLE_EQ(h.hbm_bandwidth_Bps, (2.0 + i / 3) * 1e12) << h.name;
    EXPECT_DOUBLE_EQ(h.l2_size_bytes, (8 << (i % 3)) * double(1 << 20)) << h.name;
    EXPECT_FALSE(s.variants[static_cast<size_t>(2 + i)].is_base);
  }
}

TEST(HardwareVariant, PeaksFollowTheClockAndSmsUnlessSet) {
  // Peak = SMs x FLOP/clk/SM x clock (A100 whitepaper: 108 x 4 x 512 x 1.41 GHz = 312
  // TFLOP/s): a 1.5x clock gives 468 TFLOP/s bf16 and 1.5 x 7.2 TB/s of L2 bandwidth
  // (bytes per clock x clock); 2x SMs give 624 TFLOP/s and the same L2 bandwidth; a
  // variant that sets its peak keeps it.
  const SweepSpec s = load_job(
      "clock.yaml",
      "[a100-sxm4-80gb, {name: fast, base: a100-sxm4-80gb, overrides: {sm_clock: {scale: "
      "1.5}}}, {name: wide, base: a100-sxm4-80gb, overrides: {num_sms: 216}}, {name: set, "
      "base: a100-sxm4-80gb, overrides: {sm_clock: 2GHz, tensor_peak: {bf16: 400TFLOPS}}}]");
  const auto bf16 = [&](size_t h) {
    return s.hardware[h].tensor_peak_FLOPs[static_cast<int>(DType::BF16)];
  };
  EXPECT_DOUBLE_EQ(bf16(1), 468e12);
  EXPECT_DOUBLE_EQ(s.hardware[1].vector_peak_FLOPs, 1.5 * 19.5e12);
  EXPECT_DOUBLE_EQ(s.hardware[1].l2_bandwidth_Bps, 1.5 * 7.2e12);
  EXPECT_DOUBLE_EQ(bf16(2), 624e12);
  EXPECT_DOUBLE_EQ(s.hardware[2].l2_bandwidth_Bps, 7.2e12);
  EXPECT_DOUBLE_EQ(bf16(3), 400e12);
  EXPECT_DOUBLE_EQ(s.hardware[3].sm_clock_Hz, 2e9);
}

TEST(HardwareVariant, BadVariantsNameFileAndKey) {
  const std::string variant = test::write_temp(
      "bad-variant.yaml", "name: v\nbase: a100-sxm4-80gb\noverrides: {l2_multicast: {scale: 2}}\n");
  // The A100 file sets no l2_multicast: nothing to scale.
  InputError e = load_error("bad1.yaml", "[a100-sxm4-80gb, " + variant + "]");
  EXPECT_EQ(e.file(), variant);
  EXPECT_EQ(e.key(), "overrides.l2_multicast");
  // The network's structure is the job's.
  const std::string topo =
      test::write_temp("topo-variant.yaml",
                       "name: v\nbase: a100-sxm4-80gb\noverrides: {network: {gpus_per_node: 4}}\n");
  e = load_error("bad2.yaml", topo);
  EXPECT_EQ(e.key(), "overrides.network.gpus_per_node");
  // A variant that is its own base.
  const std::string self = test::temp_path("self-variant.yaml");
  test::write_temp("self-variant.yaml", "name: self\nbase: " + self + "\n");
  e = load_error("bad3.yaml", self);
  EXPECT_EQ(e.key(), "base");
  // Two entries with one name.
  e = load_error("bad4.yaml", "[a100-sxm4-80gb, a100-sxm4-80gb]");
  EXPECT_EQ(e.key(), "name");
  // A grid step in another unit than its range.
  e = load_error("bad5.yaml", "a100-sxm4-80gb",
                 "hardware_grid: {base: a100-sxm4-80gb, axes: {hbm_bandwidth: {from: 2TB/s, "
                 "to: 4TB/s, step: 500GB/s}}}\n");
  EXPECT_EQ(e.key(), "hardware_grid.axes.hbm_bandwidth.step");
  // A missing base names the variant's key.
  const std::string orphan =
      test::write_temp("orphan-variant.yaml", "name: o\nbase: no-such-gpu\n");
  e = load_error("bad6.yaml", orphan);
  EXPECT_EQ(e.file(), orphan);
  EXPECT_EQ(e.key(), "base");
  EXPECT_EQ(e.value(), "no-such-gpu");
}

}  // namespace
}  // namespace rapid
