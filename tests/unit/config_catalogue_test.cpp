// `rapid list` (spec/config_catalogue.hpp) and the messages for a config name that is not
// known (did you mean, the known names): a config directory of the test's own beside the
// shipped ones.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "rapid/common/error.hpp"
#include "rapid/spec/config_catalogue.hpp"
#include "rapid/spec/sweep_spec.hpp"
#include "rapid/spec/yaml_reader.hpp"
#include "test_support.hpp"

namespace rapid {
namespace {

namespace fs = std::filesystem;

/// A job path whose <dir>/configs holds a model of round numbers, a broken model and a
/// training stack with a description (config_search_dirs: <job dir>/configs, then the
/// source tree's).
std::string catalogue_anchor() {
  unsetenv("RAPID_CONFIG_DIR");  // other tests point it at the source tree
  const fs::path dir = fs::path(test::temp_path("catalogue"));
  fs::create_directories(dir / "configs" / "models");
  fs::create_directories(dir / "configs" / "frameworks");
  std::ofstream(dir / "configs" / "models" / "aaa-tiny.yaml")
      << "name: aaa-tiny\nnum_layers: 2\nhidden_size: 64\nnum_attention_heads: 4\n"
         "num_kv_heads: 4\nffn_hidden_size: 128\nvocab_size: 1000\nseq_length: 128\n"
         "activation: swiglu\nnorm: rmsnorm\ntied_embeddings: false\n";
  std::ofstream(dir / "configs" / "models" / "aab-broken.yaml")
      << "name: aab-broken\nnum_layers: -1\n";
  std::ofstream(dir / "configs" / "frameworks" / "aaa-stack.yaml")
      << "# the first comment line\nname: aaa-stack\nbase: megatron-core-0.8\n"
         "description: a stack of the test\n";
  return (dir / "job.yaml").string();
}

const CatalogueEntry& entry(const std::vector<CatalogueEntry>& list, const std::string& name) {
  for (const CatalogueEntry& e : list)
    if (e.name == name) return e;
  static const CatalogueEntry none;
  ADD_FAILURE() << name << " not listed";
  return none;
}

TEST(ConfigCatalogue, KindsInOrder) {
  std::vector<std::string> names;
  for (const ConfigKind& k : config_kinds()) names.push_back(k.name);
  EXPECT_EQ(names,
            (std::vector<std::string>{"models", "hardware", "networks", "frameworks", "serving"}));
  EXPECT_EQ(find_config_kind("networks")->dir, std::string("networks"));
  EXPECT_EQ(find_config_kind("modls"), nullptr);
}

TEST(ConfigCatalogue, ModelsSortedWithFactsAndUnreadableFiles) {
  const std::string anchor = catalogue_anchor();
  const std::vector<CatalogueEntry> models = list_configs(*find_config_kind("models"), anchor);
  ASSERT_GE(models.size(), 3u);
  EXPECT_EQ(models[0].name, "aaa-tiny");  // sorted by name, the test's before the shipped
  EXPECT_EQ(models[1].name, "aab-broken");
  for (size_t i = 1; i < models.size(); ++i) EXPECT_LT(models[i - 1].name, models[i].name);
  // Per layer: attention 4 h^2 = 16384 (q, k, v, o; MHA), SwiGLU 3 h f = 24576, two norms
  // 128: 41088; two layers 82176; embeddings untied 2 V h = 128000, final norm 64:
  // 210240 parameters.
  EXPECT_EQ(models[0].facts, "210K params, 2 layers, hidden 64, 4 heads, seq 128");
  EXPECT_TRUE(models[0].readable);
  EXPECT_EQ(fs::path(models[0].path).filename(), "aaa-tiny.yaml");
  EXPECT_FALSE(models[1].readable);
  EXPECT_TRUE(models[1].facts.starts_with("(unreadable: ")) << models[1].facts;
  EXPECT_NE(models[1].facts.find("num_layers"), std::string::npos) << models[1].facts;
  // A shipped MoE model: its experts.
  EXPECT_NE(entry(models, "mixtral-8x7b").facts.find("MoE 8 experts, top-2"), std::string::npos);
}

TEST(ConfigCatalogue, HardwareNetworksAndStacks) {
  const std::string anchor = catalogue_anchor();
  const auto hw = list_configs(*find_config_kind("hardware"), anchor);
  // configs/hardware/h100-sxm5-80gb.yaml: bf16 989.4TFLOPS, 81559MiB (79.65 GiB), 3.35TB/s.
  EXPECT_EQ(entry(hw, "h100-sxm5-80gb").facts,
            "989.4 TFLOPS bf16, 79.65 GiB HBM at 3.35 TB/s, 132 SMs");
  // A variant (configs/hardware/variants) with its base and description: HBM bandwidth x4.
  EXPECT_EQ(entry(hw, "h100-c-3d-hbm").facts,
            "989.4 TFLOPS bf16, 79.65 GiB HBM at 13.4 TB/s, 132 SMs; variant of h100-sxm5-80gb: "
            "3D-stacked HBM with 4x the bandwidth");
  // 8 NICs of 400 Gb/s per 8-GPU node: 50 GB/s per GPU.
  EXPECT_EQ(entry(list_configs(*find_config_kind("networks"), anchor), "dgx-h100-superpod").facts,
            "rail_optimized, 8 GPUs per node, scale-up NVSwitch at the GPU's bandwidth, "
            "scale-out 50 GB/s per GPU (8 NICs per node)");
  const auto stacks = list_configs(*find_config_kind("frameworks"), anchor);
  EXPECT_EQ(entry(stacks, "aaa-stack").facts, "base megatron-core-0.8: a stack of the test");
  EXPECT_EQ(stacks[0].name, "aaa-stack");
  const auto serving = list_configs(*find_config_kind("serving"), anchor);
  EXPECT_EQ(entry(serving, "vllm-a100").facts.substr(0, 10), "base vllm:");
}

TEST(ConfigCatalogue, DescriptionIsTheKeyElseTheFirstComment) {
  EXPECT_EQ(config_description(test::write_temp("d1.yaml", "# one\n# two\nname: x\n")), "one");
  EXPECT_EQ(config_description(test::write_temp("d2.yaml", "# one\nname: x\ndescription: d\n")),
            "d");
  EXPECT_EQ(config_description(test::write_temp("d3.yaml", "name: x\n# late\n")), "");
}

/// The InputError of loading a job of `model`, `hardware` and `network` names.
InputError name_error(const std::string& model, const std::string& hardware,
                      const std::string& network) {
  const std::string path = test::write_temp(
      "names.yaml", "model: " + model + "\nhardware: " + hardware + "\nnetwork: " + network +
                        "\ngpus: 8\ntraining: {global_batch_size: 8, seq_length: 4096}\n");
  setenv("RAPID_CONFIG_DIR", test::source_path("configs").c_str(), 1);
  try {
    load_sweep_spec(path);
  } catch (const InputError& e) {
    return e;
  }
  ADD_FAILURE() << "no InputError";
  return InputError("", "", "", "");
}

TEST(UnknownNames, ModelHardwareNetworkSuggestTheNearestAndListTheKnown) {
  InputError m = name_error("lama3-8b", "h100-sxm5-80gb", "dgx-h100-superpod");
  EXPECT_EQ(m.key(), "model");
  EXPECT_EQ(m.value(), "lama3-8b");
  EXPECT_TRUE(m.expected().starts_with(
      "a name in configs/models/ (did you mean llama3-8b?); known: deepseek-v3, "
      "deepseek-v3-like, gpt3-175b,"))
      << m.expected();
  EXPECT_NE(m.expected().find("`rapid list models` shows them"), std::string::npos);

  InputError h = name_error("llama3-8b", "h100-sxm5-80g", "dgx-h100-superpod");
  EXPECT_EQ(h.key(), "hardware");
  EXPECT_NE(h.expected().find("(did you mean h100-sxm5-80gb?)"), std::string::npos) << h.expected();
  // Names and variants in one sorted list, the first 16 then how many more.
  EXPECT_NE(h.expected().find("known: a100-a-stacked-l2, a100-a-stacked-l2-128mb,"),
            std::string::npos)
      << h.expected();
  EXPECT_NE(h.expected().find(" and 11 more"), std::string::npos) << h.expected();

  InputError n = name_error("llama3-8b", "h100-sxm5-80gb", "dgx-h100-superpd");
  EXPECT_EQ(n.key(), "network");
  EXPECT_NE(n.expected().find("(did you mean dgx-h100-superpod?)"), std::string::npos)
      << n.expected();
  // Not a typo of anything: the known names alone.
  InputError far = name_error("llama3-8b", "h100-sxm5-80gb", "zzzzzzzz");
  EXPECT_EQ(far.expected().find("did you mean"), std::string::npos) << far.expected();
  EXPECT_NE(far.expected().find("known: azure-nd-h100-v5, dgx-a100-superpod"), std::string::npos);
}

TEST(UnknownNames, TrainingStackSuggestsTheNearest) {
  const std::string path =
      test::write_temp("stack-typo.yaml",
                       "model: llama3-8b\nhardware: h100-sxm5-80gb\nnetwork: dgx-h100-superpod\n"
                       "gpus: 8\ntraining: {global_batch_size: 8, framework: megatron-core-0.9}\n");
  setenv("RAPID_CONFIG_DIR", test::source_path("configs").c_str(), 1);
  try {
    load_sweep_spec(path);
    FAIL() << "accepted";
  } catch (const InputError& e) {
    EXPECT_EQ(e.key(), "training.framework");
    EXPECT_NE(e.expected().find("(did you mean megatron-core-0.8?)"), std::string::npos)
        << e.expected();
  }
}

TEST(UnknownKeys, JobKeySuggestsTheNearestKnownKey) {
  // The shipped catalogue case: search.tpp is search.tp (issue 34).
  setenv("RAPID_CONFIG_DIR", test::source_path("configs").c_str(), 1);
  try {
    load_sweep_spec(test::source_path("tests/bad_inputs/job/unknown-key-search.yaml"));
    FAIL() << "accepted";
  } catch (const InputError& e) {
    EXPECT_EQ(e.key(), "search.tpp");
    EXPECT_EQ(e.expected(), "a known key (unknown key; did you mean search.tp?)");
  }
  // A mapping's own keys (those asked for): at the top level no prefix.
  YamlMap top(YAML::Load("{gpus: 8, gpu: 8}"), "f.yaml");
  top.integer("gpus");
  top.has("model");
  try {
    top.finish();
    FAIL() << "accepted";
  } catch (const InputError& e) {
    EXPECT_EQ(e.expected(), "a known key (unknown key; did you mean gpus?)");
  }
  // Nothing near: the message as before.
  YamlMap far(YAML::Load("{gpus: 8, zzzzzz: 1}"), "f.yaml");
  far.integer("gpus");
  try {
    far.finish();
    FAIL() << "accepted";
  } catch (const InputError& e) {
    EXPECT_EQ(e.expected(), "a known key (unknown key)");
  }
}

}  // namespace
}  // namespace rapid
