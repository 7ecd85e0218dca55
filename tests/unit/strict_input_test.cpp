// Issue 35's inputs, at the one place each is now refused: a key given twice in any YAML
// mapping and in any JSON object, a second YAML document (load_yaml_text's event pass,
// src/spec/yaml_prepass.hpp; parse_hf_config), and integers in another notation than plain
// decimal (YamlMap::integer: yaml-cpp reads 010 as octal 8).
#include <gtest/gtest.h>

#include <string>

#include "rapid/common/error.hpp"
#include "rapid/spec/hf_config.hpp"
#include "rapid/spec/yaml_reader.hpp"
#include "test_support.hpp"

namespace rapid {
namespace {

bool contains(const std::string& s, const std::string& part) {
  return s.find(part) != std::string::npos;
}

TEST(YamlStrict, DuplicateKeyAnywhereIsRefusedAtLoad) {
  // The second l2_size is on line 6 (1-based), column 7: the path names the list entry.
  const std::string text =
      "hardware:\n"
      "  - h100\n"
      "  - name: v\n"
      "    overrides:\n"
      "      l2_size: 60MiB\n"
      "      l2_size: 120MiB\n";
  const InputError e = test::input_error([&] { load_yaml_text(text, "job.yaml"); });
  EXPECT_EQ(e.key(), "hardware[1].overrides.l2_size");
  EXPECT_EQ(e.value(), "l2_size");
  EXPECT_TRUE(contains(e.expected(), "a key given once")) << e.what();
  EXPECT_TRUE(contains(e.expected(), "first given at line 5")) << e.what();
  EXPECT_TRUE(contains(e.what(), "job.yaml:6:7")) << e.what();
  // Flow mappings inside a list (a scenarios entry), and the top level.
  EXPECT_EQ(test::input_error([] {
              load_yaml_text("scenarios: [{name: a}, {name: b, name: c}]\n", "j");
            }).key(),
            "scenarios[1].name");
  EXPECT_EQ(test::input_error([] { load_yaml_text("gpus: 8\ngpus: 16\n", "j"); }).key(), "gpus");
  // A syntax error further on is told first (the duplicate waits for the document's end).
  EXPECT_EQ(test::input_error([] { load_yaml_text("a: 1\na: 2\nb: [1\n", "j"); }).expected(),
            "valid YAML");
  // The same key in different mappings, or as a value, is fine.
  EXPECT_NO_THROW(load_yaml_text("a: {x: 1}\nb: {x: 1}\nc: [x, x]\nx: x\n", "j"));
}

TEST(YamlStrict, SecondDocumentIsRefused) {
  const InputError e =
      test::input_error([] { load_yaml_text("gpus: 8\n---\ngpus: 16\n", "job.yaml"); });
  EXPECT_EQ(e.key(), "<file>");
  EXPECT_TRUE(contains(e.expected(), "one YAML document per file")) << e.what();
  EXPECT_TRUE(contains(e.value(), "line 2")) << e.what();
  // One document, with or without its start and end markers, is one document.
  EXPECT_NO_THROW(load_yaml_text("---\ngpus: 8\n...\n", "j"));
  EXPECT_NO_THROW(load_yaml_text("# only a comment\n", "j"));
}

TEST(YamlStrict, IntegersArePlainDecimal) {
  const YamlMap m(load_yaml_text("a: 010\nb: 016\nc: 0x10\nd: +8\ne: 0\nf: 10\ng: 08\nh: -3\n"
                                 "l: [4, 010]\n",
                                 "j.yaml"),
                  "j.yaml");
  for (const char* key : {"a", "b", "c", "d", "g"}) {
    const InputError e = test::input_error([&] { m.integer(key, 0, 100); });
    EXPECT_TRUE(contains(e.expected(), "a decimal integer without leading zeros")) << e.what();
  }
  EXPECT_EQ(test::input_error([&] { m.integer("a", 0, 100); }).value(), "010");  // as written
  EXPECT_EQ(m.integer("e", 0, 100), 0);
  EXPECT_EQ(m.integer("f", 0, 100), 10);
  EXPECT_EQ(m.integer("h", -5, 5), -3);
  const InputError l = test::input_error([&] { m.integer_list_or("l", {}, 1, 100); });
  EXPECT_EQ(l.key(), "l");
  EXPECT_EQ(l.value(), "010");
  EXPECT_TRUE(contains(l.expected(), "without leading zeros")) << l.what();
}

TEST(HfImportDuplicateKeys, RefusedWithTheirPathAndLine) {
  // The second hidden_size starts on line 3 (1-based), column 2.
  const std::string text = "{\n \"hidden_size\": 8192,\n \"hidden_size\": 4096\n}\n";
  const InputError e = test::input_error([&] { parse_hf_config(text, "config.json"); });
  EXPECT_EQ(e.key(), "hidden_size");
  EXPECT_TRUE(contains(e.expected(), "a key given once")) << e.what();
  EXPECT_TRUE(contains(e.what(), "config.json:3:2")) << e.what();
  const InputError n = test::input_error([] {
    parse_hf_config(R"({"rope_scaling": {"factor": 8, "factor": 16}, "factor": 1})", "c.json");
  });
  EXPECT_EQ(n.key(), "rope_scaling.factor");
  EXPECT_TRUE(contains(n.what(), "c.json:1:32")) << n.what();
  // An escaped quote inside the key still finds its start; objects in arrays are apart.
  EXPECT_EQ(test::input_error([] { parse_hf_config(R"({"a\"b": 1, "a\"b": 2})", "c"); }).key(),
            "a\"b");
  EXPECT_NO_THROW(parse_hf_config(R"({"l": [{"k": 1}, {"k": 2}], "k": 3})", "c"));
}

}  // namespace
}  // namespace rapid
