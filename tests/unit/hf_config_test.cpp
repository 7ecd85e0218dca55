#include "rapid/spec/hf_config.hpp"

#include <gtest/gtest.h>

#include "rapid/common/error.hpp"
#include "rapid/spec/yaml_reader.hpp"
#include "test_support.hpp"

namespace rapid {
namespace {

nlohmann::json load(const std::string& name) {
  return nlohmann::json::parse(read_text_file(test::source_path("tests/data/hf/" + name)));
}

TEST(HfImport, MixtralMapsExpertsAndRoundTripsThroughYaml) {
  ModelSpec m = import_hf_config(load("mixtral-8x7b-config.json"), "mixtral.json", "mixtral");
  EXPECT_EQ(m.num_layers, 32);
  EXPECT_EQ(m.num_kv_heads, 8);
  EXPECT_EQ(m.moe.num_experts, 8);
  EXPECT_EQ(m.moe.top_k, 2);
  EXPECT_EQ(m.moe.expert_ffn_hidden_size, 14336);
  // The same model as configs/models/mixtral-8x7b.yaml: 46,702,792,704 parameters
  // (derived in parallelism_test.cpp).
  EXPECT_EQ(m.total_params(), 46702792704);
  ModelSpec back =
      parse_model(load_yaml_text(model_to_yaml(m, "mixtral.json"), "x.yaml"), "x.yaml");
  EXPECT_EQ(back.total_params(), m.total_params());
  EXPECT_EQ(back.moe.top_k, 2);
}

TEST(HfImport, Llama3_70BMatchesTheShippedModel) {
  ModelSpec m = import_hf_config(load("llama3-70b-config.json"), "llama.json", "llama3-70b");
  // 70,553,706,496 parameters, derived in model_flops_test.cpp.
  EXPECT_EQ(m.total_params(), 70553706496);
  EXPECT_EQ(m.activation, Activation::SwiGlu);
  EXPECT_FALSE(m.moe.enabled());
}

TEST(HfImport, DeepSeekV3MoeFields) {
  ModelSpec m = import_hf_config(load("deepseek-v3-config.json"), "ds.json", "dsv3");
  EXPECT_EQ(m.moe.num_experts, 256);
  EXPECT_EQ(m.moe.top_k, 8);
  EXPECT_EQ(m.moe.num_shared_experts, 1);
  EXPECT_EQ(m.moe.first_dense_layers, 3);
  EXPECT_EQ(m.moe.moe_layers_in(0, 61), 58);
  EXPECT_EQ(m.head_dim, 128);  // MLA modeled with the value head dim
}

TEST(HfImport, UnknownArchitectureNamesTheField) {
  nlohmann::json j = load("llama3-70b-config.json");
  j["model_type"] = "mamba";
  try {
    import_hf_config(j, "mamba.json", "x");
    FAIL() << "no error";
  } catch (const InputError& e) {
    EXPECT_EQ(e.key(), "model_type");
    EXPECT_EQ(e.value(), "mamba");
    EXPECT_EQ(e.file(), "mamba.json");
  }
  j = load("llama3-70b-config.json");
  j.erase("num_hidden_layers");
  try {
    import_hf_config(j, "x.json", "x");
    FAIL() << "no error";
  } catch (const InputError& e) {
    EXPECT_EQ(e.key(), "num_hidden_layers");
  }
}

}  // namespace
}  // namespace rapid
