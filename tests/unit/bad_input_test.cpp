// Hostile input (docs/bad-input.md, issue 10 part 6): the general mechanisms behind the
// catalogue's cases, each tested where its logic lives. Bad input is an InputError naming
// the file, the key and the value; nothing crashes, overflows or is left on disk.
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>

#include "rapid/common/error.hpp"
#include "rapid/common/utf8.hpp"
#include "rapid/io/output_check.hpp"
#include "rapid/spec/hf_config.hpp"
#include "rapid/spec/model_spec.hpp"
#include "rapid/spec/parallel_config.hpp"
#include "rapid/spec/units.hpp"
#include "rapid/spec/yaml_reader.hpp"
#include "test_support.hpp"

namespace fs = std::filesystem;

namespace rapid {
namespace {

TEST(BadInput, DegreeProductsDoNotOverflow) {
  // dp = gpus / (tp pp cp): 16 / (2 * 2 * 1) = 4; a product that does not divide gives 0.
  EXPECT_EQ(data_parallel_degree(16, 2, 2, 1), 4);
  EXPECT_EQ(data_parallel_degree(16, 3, 1, 1), 0);
  // 2^24 each: tp pp cp = 2^72, which wraps to 0 in int64 (the SIGFPE of gpus % 0); it
  // divides no GPU count.
  const int64_t d = int64_t{1} << 24;
  EXPECT_EQ(data_parallel_degree(d, d, d, d), 0);
  EXPECT_EQ(data_parallel_degree(d, d, 1, 1), 1);
  EXPECT_EQ(data_parallel_degree(8, 0, 1, 1), 0);
}

TEST(BadInput, YamlTextMustBeUtf8WithoutControlCharacters) {
  // "name: caf\xe9" on line 2 has the bad byte at its offset 9: reported as 2:10 (1-based).
  InputError e = test::input_error([] { load_yaml_text("a: 1\nname: caf\xe9\n", "x.yaml"); });
  EXPECT_EQ(e.key(), "<file>");
  EXPECT_EQ(e.value(), "byte 0xE9");
  EXPECT_NE(std::string(e.what()).find("x.yaml:2:10"), std::string::npos) << e.what();
  EXPECT_EQ(test::input_error([] {
              load_yaml_text(
                  "name: a\x01"
                  "b\n",
                  "x.yaml");
            }).value(),
            "byte 0x01");
  EXPECT_EQ(
      test::input_error([] { load_yaml_text(std::string("name: a\0b", 9), "x.yaml"); }).value(),
      "byte 0x00");
  // UTF-16 (its byte order mark is no UTF-8), an overlong '/', a surrogate.
  for (const char* bad : {"\xff\xfen\0", "a: \xc0\xaf", "a: \xed\xa0\x80"})
    EXPECT_EQ(test::input_error([&] { load_yaml_text(bad, "x.yaml"); }).key(), "<file>") << bad;
  // Tabs in values, CRLF line ends, a UTF-8 byte order mark and non-ASCII letters are text.
  EXPECT_EQ(
      load_yaml_text("\xef\xbb\xbfname: \"caf\xc3\xa9\tx\"\r\nb: 2\r\n", "x.yaml")["b"].as<int>(),
      2);
}

TEST(BadInput, DeepYamlNestingIsAnInputError) {
  const std::string deep = std::string(100000, '[') + std::string(100000, ']');
  InputError e = test::input_error([&] { load_yaml_text(deep, "deep.yaml"); });
  EXPECT_EQ(e.key(), "<yaml>");
  EXPECT_NE(e.value().find("nested"), std::string::npos) << e.what();
}

TEST(BadInput, YamlValueCountIsCapped) {
  // kMaxYamlValues values parse; one more (the list itself is a value too) does not.
  std::string list = "[";
  for (uint64_t i = 0; i + 1 < kMaxYamlValues; ++i) list += i ? ",1" : "1";
  EXPECT_EQ(load_yaml_text(list + "]", "ok.yaml").size(), kMaxYamlValues - 1);
  InputError e = test::input_error([&] { load_yaml_text(list + ",1]", "big.yaml"); });
  EXPECT_EQ(e.key(), "<file>");
  EXPECT_NE(e.value().find("more than"), std::string::npos) << e.what();
}

TEST(BadInput, QuantitiesAreBoundedPerDimension) {
  // 1e300 s of kernel launch would make an `ok` row with an infinite step time.
  const YamlMap m(load_yaml_text("t: 1e300s\nok: 1e7s\nbw: 1e296TB/s\n", "q.yaml"), "q.yaml");
  EXPECT_EQ(m.quantity("ok", Dimension::Time), 1e7);
  InputError e = test::input_error([&] { m.quantity("t", Dimension::Time); });
  EXPECT_EQ(e.key(), "t");
  EXPECT_EQ(e.value(), "1e300s");
  EXPECT_EQ(test::input_error([&] { m.quantity("bw", Dimension::Bandwidth); }).value(),
            "1e296TB/s");
  for (Dimension d : {Dimension::Bandwidth, Dimension::Size, Dimension::Time, Dimension::Frequency,
                      Dimension::FlopRate, Dimension::Power})
    EXPECT_LT(dimension_max(d) * dimension_max(d) * dimension_max(d), 1e300);
}

TEST(BadInput, StringsAreBounded) {
  const std::string text = "name: " + std::string(YamlMap::kMaxStringBytes + 1, 'x') + "\n";
  const YamlMap m(load_yaml_text(text, "s.yaml"), "s.yaml");
  EXPECT_EQ(test::input_error([&] { m.string("name"); }).key(), "name");
}

TEST(BadInput, Utf8Sequences) {
  EXPECT_EQ(utf8_sequence_length("a"), 1u);
  EXPECT_EQ(utf8_sequence_length("\xc3\xa9"), 2u);
  EXPECT_EQ(utf8_sequence_length("\xe2\x82\xac"), 3u);
  EXPECT_EQ(utf8_sequence_length("\xf0\x9f\x98\x80"), 4u);
  EXPECT_EQ(utf8_sequence_length("\xe2\x82"), 0u);          // truncated
  EXPECT_EQ(utf8_sequence_length("\xc0\xaf"), 0u);          // overlong
  EXPECT_EQ(utf8_sequence_length("\xf4\x90\x80\x80"), 0u);  // above U+10FFFF
  EXPECT_TRUE(is_utf8("caf\xc3\xa9"));
  EXPECT_FALSE(is_utf8("caf\xe9"));
}

TEST(BadInput, MessagesStayOneLine) {
  // Control characters and bytes that are not UTF-8 are escaped, UTF-8 letters kept, a long
  // value cut at 200 bytes with its length said.
  const InputError e("f.csv", "op", std::string("a\nb\0c\xff\xc3\xa9", 8), "gemm");
  EXPECT_EQ(std::string(e.what()),
            "f.csv: key 'op': value 'a\\x0Ab\\x00c\\xFF\xc3\xa9': expected gemm");
  EXPECT_EQ(e.value().size(), 8u);  // the accessor keeps the bytes
  const InputError l("f", "k", std::string(1 << 20, 'x'), "y");
  EXPECT_LT(std::string(l.what()).size(), 300u);
  EXPECT_NE(std::string(l.what()).find("... (1048576 bytes)"), std::string::npos);
}

TEST(BadInput, DeepJsonIsAnInputErrorNotACrash) {
  // 100000 nested arrays parsed, then printed by the error message: a stack overflow.
  const std::string deep = std::string(100000, '[') + std::string(100000, ']');
  InputError e = test::input_error([&] { parse_hf_config(deep, "config.json"); });
  EXPECT_EQ(e.key(), "<json>");
  EXPECT_NE(e.value().find("nested"), std::string::npos) << e.what();
  // kMaxJsonDepth levels parse.
  const std::string ok = std::string(kMaxJsonDepth, '[') + std::string(kMaxJsonDepth, ']');
  EXPECT_TRUE(parse_hf_config(ok, "config.json").is_array());
}

TEST(BadInput, JsonNumberPastDoubleIsAnInputError) {
  // nlohmann throws out_of_range (not parse_error) for 1e400: it was exit 1.
  InputError e = test::input_error([] { parse_hf_config("{\"hidden_size\": 1e400}", "c.json"); });
  EXPECT_EQ(e.key(), "<json>");
  EXPECT_NE(e.value().find("1e400"), std::string::npos) << e.what();
}

nlohmann::json llama() {
  return nlohmann::json::parse(R"({"model_type": "llama", "hidden_size": 4096,
    "intermediate_size": 14336, "num_hidden_layers": 32, "num_attention_heads": 32,
    "num_key_value_heads": 8, "vocab_size": 128256})");
}

TEST(BadInput, HfFieldsTakeTheModelFilesBounds) {
  // The written model file must load: a field outside parse_model's bounds is named by its
  // config.json key (before, by the model YAML's key in the output file).
  nlohmann::json c = llama();
  c["num_hidden_layers"] = 20000;
  InputError e = test::input_error([&] { import_hf_config(c, "config.json", "m"); });
  EXPECT_EQ(e.file(), "config.json");
  EXPECT_EQ(e.key(), "num_hidden_layers");
  EXPECT_EQ(e.value(), "20000");
  c = llama();
  c["hidden_size"] = nlohmann::json::parse("18446744073709551615");  // wraps to -1 as int64
  EXPECT_EQ(test::input_error([&] { import_hf_config(c, "config.json", "m"); }).key(),
            "hidden_size");
  c = llama();
  c["head_dim"] = 0;
  EXPECT_EQ(test::input_error([&] { import_hf_config(c, "config.json", "m"); }).key(), "head_dim");
  // Mixtral with zero experts was imported as a dense model.
  c = llama();
  c["model_type"] = "mixtral";
  c["num_local_experts"] = 0;
  c["num_experts_per_tok"] = 0;
  EXPECT_EQ(test::input_error([&] { import_hf_config(c, "config.json", "m"); }).key(),
            "num_local_experts");
  const ModelSpec m = import_hf_config(llama(), "config.json", "m");
  EXPECT_EQ(m.num_layers, 32);
}

TEST(BadInput, ModelParameterCountIsBounded) {
  // 1e4 layers x 1e5 experts x 3 x 1e6 x 1e7 = 3e22 parameters: past int64 (9.2e18).
  const std::string text =
      "name: m\nnum_layers: 10000\nhidden_size: 1000000\nnum_attention_heads: 100000\n"
      "ffn_hidden_size: 10000000\nvocab_size: 1000\nseq_length: 4096\nactivation: swiglu\n"
      "moe: {num_experts: 100000, top_k: 2}\n";
  InputError e = test::input_error([&] { parse_model(load_yaml_text(text, "m.yaml"), "m.yaml"); });
  EXPECT_EQ(e.key(), "<model>");
  // The bound is an upper bound of the exact count on a real model.
  const ModelSpec llama3 = import_hf_config(llama(), "config.json", "m");
  EXPECT_GE(params_upper_bound(llama3), static_cast<double>(llama3.total_params()));
  EXPECT_LT(params_upper_bound(llama3), 1.01 * static_cast<double>(llama3.total_params()));
}

TEST(BadInput, OutputPathsAreChecked) {
  const fs::path dir = fs::temp_directory_path() / fmt::format("rapid-out-{}", ::getpid());
  fs::remove_all(dir);
  fs::create_directories(dir / "sub");
  const std::string in = (dir / "in.json").string();
  { std::ofstream(in) << "{}"; }
  ::mkfifo((dir / "fifo").c_str(), 0600);
  auto key_value = [](const InputError& e) { return e.key() + "=" + e.value(); };
  EXPECT_EQ(key_value(test::input_error([&] { check_output_file((dir / "no/x").string(), "-o"); })),
            "-o=" + (dir / "no/x").string());
  EXPECT_EQ(test::input_error([&] { check_output_file((dir / "sub").string(), "-o"); }).key(),
            "-o");
  EXPECT_EQ(test::input_error([&] { check_output_file((dir / "fifo").string(), "-o"); }).key(),
            "-o");
  EXPECT_EQ(test::input_error([&] { check_output_file(in, "--output", 0, {in}); }).key(),
            "--output");
  EXPECT_EQ(test::input_error([&] {
              check_output_file((dir / std::string(300, 'x')).string(), "-o");
            }).key(),
            "-o");
  EXPECT_EQ(test::input_error([&] { check_output_file("/proc/rapid-test-x", "-o"); }).key(), "-o");
  EXPECT_EQ(test::input_error([&] {
              check_output_file((dir / "x").string(), "-o", UINT64_MAX - 1);
            }).key(),
            "-o");
  check_output_file((dir / "x").string(), "-o", 1000, {in});
  // Written whole through a temporary file that never stays.
  write_file_atomically((dir / "x").string(), "hello\n", "-o");
  EXPECT_EQ(fs::file_size(dir / "x"), 6u);
  EXPECT_EQ(
      test::input_error([&] { write_file_atomically((dir / "no/x").string(), "a", "-o"); }).key(),
      "-o");
  size_t entries = 0;
  for ([[maybe_unused]] const auto& e : fs::directory_iterator(dir)) ++entries;
  EXPECT_EQ(entries, 4u);  // sub, in.json, fifo, x
  fs::remove_all(dir);
}

TEST(BadInput, ResultFileEstimateGrowsWithThePoints) {
  // The columns are compressed (io/points_table.hpp): the demo job's file measured 496 kB
  // for 4128 rows (120 bytes a row, metadata included), a GPT-3 sweep's 63 bytes a row; 63
  // kB of metadata: the estimate must cover both (1 MiB margin).
  const SweepSpec spec;
  EXPECT_GE(result_file_bytes(1, spec), 63'000u);
  EXPECT_GE(result_file_bytes(4128, spec) - result_file_bytes(0, spec), 4128u * 120u);
}

}  // namespace
}  // namespace rapid
