// Bad input gets one clear message naming the file, the key, the value and what was
// expected (docs/architecture.md "Errors").
#include <gtest/gtest.h>

#include "rapid/common/error.hpp"
#include "rapid/spec/sweep_spec.hpp"
#include "rapid/spec/yaml_reader.hpp"

#include <sys/stat.h>
#include <unistd.h>
#include "test_support.hpp"

namespace rapid {
namespace {

std::string job(const std::string& model_line, const std::string& extra = "") {
  return model_line +
         "\nhardware: h100-sxm5-80gb\nnetwork: dgx-h100-superpod\ngpus: 16\n"
         "training: {global_batch_size: 64}\n" +
         extra;
}

// Loads `text` as a job next to the source tree's configs and returns the InputError.
InputError load_error(const std::string& name, const std::string& text) {
  std::string path = test::write_temp(name, text);
  setenv("RAPID_CONFIG_DIR", test::source_path("configs").c_str(), 1);
  try {
    load_sweep_spec(path);
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find(path), std::string::npos) << e.what();
    return e;
  }
  ADD_FAILURE() << "no InputError for " << name;
  return InputError("", "", "", "");
}

TEST(SpecErrors, UnknownFrameworkListsTheKnownStacks) {
  // training.framework names a file of configs/frameworks; an unknown one is an input error
  // (exit 2) naming the key and value and listing the stacks shipped.
  InputError e =
      load_error("stack.yaml",
                 "model: llama3-8b\nhardware: h100-sxm5-80gb\nnetwork: dgx-h100-superpod\n"
                 "gpus: 16\ntraining: {global_batch_size: 64, framework: megatron-9}\n");
  EXPECT_EQ(e.key(), "training.framework");
  EXPECT_EQ(e.value(), "megatron-9");
  const std::string what = e.what();
  for (const char* known : {"megatron-core-0.8", "nemo-24.07", "nanotron"})
    EXPECT_NE(what.find(known), std::string::npos) << what;
}

TEST(SpecErrors, StackFactorsFromMustNameAHardwareFile) {
  // A misspelt stack_factors_from would leave the GPU on the bare default factors: refused,
  // naming the key and the value.
  InputError e = load_error(
      "factors-from.yaml",
      "model: llama3-8b\nhardware: {name: h200-mine, base: h200-sxm-141gb, overrides: "
      "{stack_factors_from: "
      "h100-sxm-80gb}}\nnetwork: dgx-h100-superpod\ngpus: 16\ntraining: {global_batch_size: "
      "64}\n");
  EXPECT_EQ(e.key(), "stack_factors_from");
  EXPECT_EQ(e.value(), "h100-sxm-80gb");
}

TEST(SpecErrors, UnknownKeyIsNamed) {
  InputError e = load_error("typo.yaml", job("model: llama3-8b", "gpu_count: 8\n"));
  EXPECT_EQ(e.key(), "gpu_count");
}

TEST(SpecErrors, ModelWithoutSeqLengthNeedsTheJobs) {
  // An imported model file has no seq_length (max_position_embeddings is a context limit,
  // not a training length): the job must give training.seq_length.
  const std::string model =
      test::write_temp("no-seq-model.yaml",
                       "name: m\nnum_layers: 2\nhidden_size: 1024\nnum_attention_heads: 8\n"
                       "ffn_hidden_size: 4096\nvocab_size: 32000\nactivation: swiglu\n");
  const std::string job_text = "model: " + model +
                               "\nhardware: h100-sxm5-80gb\nnetwork: dgx-h100-superpod\n"
                               "gpus: 16\ntraining: {global_batch_size: 64";
  const std::string path = test::temp_path("no-seq.yaml");
  InputError e = load_error("no-seq.yaml", job_text + "}\n");
  EXPECT_EQ(e.file(), path);
  EXPECT_EQ(e.key(), "training.seq_length");
  EXPECT_EQ(e.value(), "<missing>");
  EXPECT_EQ(e.expected(), "a sequence length (the model file sets none)");
  const std::string ok = test::write_temp("with-seq.yaml", job_text + ", seq_length: 2048}\n");
  EXPECT_EQ(load_sweep_spec(ok).training.seq_length, 2048);
}

TEST(SpecErrors, MissingModelIsNamed) {
  InputError e = load_error("nomodel.yaml", job("name: x"));
  EXPECT_EQ(e.key(), "model");
}

TEST(SpecErrors, UnresolvableModelSaysWhereItLooked) {
  InputError e = load_error("badmodel.yaml", job("model: llama9-1t"));
  EXPECT_EQ(e.key(), "model");
  EXPECT_EQ(e.value(), "llama9-1t");
  EXPECT_NE(e.expected().find("models/llama9-1t.yaml"), std::string::npos) << e.what();
}

TEST(SpecErrors, GpuCountNotDivisibleByTheNode) {
  std::string text = job("model: llama3-8b");
  text.replace(text.find("gpus: 16"), 8, "gpus: 12");
  InputError e = load_error("gpus.yaml", text);
  EXPECT_EQ(e.key(), "gpus");
  EXPECT_EQ(e.value(), "12");
}

TEST(SpecErrors, BadUnitNamesTheNestedKeyAndItsLine) {
  InputError e = load_error("unit.yaml",
                            "model: llama3-8b\nhardware: h100-sxm5-80gb\ngpus: 8\n"
                            "network: {topology: fat_tree, leaf_bandwidth: 400 parsecs}\n"
                            "training: {global_batch_size: 64}\n");
  EXPECT_EQ(e.key(), "leaf_bandwidth");
  EXPECT_EQ(e.value(), "400 parsecs");
  EXPECT_NE(std::string(e.what()).find(":4:"), std::string::npos) << e.what();
}

TEST(SpecErrors, OperatorNetworkFormLoadsAsIs) {
  std::string path = test::write_temp("opnet.yaml",
                                      "model: llama3-8b\nhardware: h100-sxm5-80gb\ngpus: 8\n"
                                      "network:\n  topology: fat_tree\n  spine_bandwidth: 400Gbps\n"
                                      "  leaf_bandwidth: 200Gbps\n  link_latency: 0.5us\n"
                                      "training: {global_batch_size: 64}\n");
  setenv("RAPID_CONFIG_DIR", test::source_path("configs").c_str(), 1);
  SweepSpec s = load_sweep_spec(path);
  EXPECT_DOUBLE_EQ(s.network.leaf_bandwidth_Bps, 25e9);   // 200 Gb/s
  EXPECT_DOUBLE_EQ(s.network.spine_bandwidth_Bps, 50e9);  // 400 Gb/s
  EXPECT_DOUBLE_EQ(s.network.link_latency_s, 0.5e-6);
  EXPECT_EQ(s.network.gpus_per_node, 8);
  EXPECT_DOUBLE_EQ(s.network.oversubscription, 1.0);  // more up than down bandwidth
}

// Only regular files are read (a FIFO would block the reader for ever, /dev/zero never end),
// and only up to kMaxInputFileBytes.
TEST(SpecErrors, FifosDevicesAndHugeFilesAreRefused) {
  const std::string fifo = test::write_temp("fifo-base.yaml", "") + ".fifo";
  ::unlink(fifo.c_str());
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  for (const std::string& path : {fifo, std::string("/dev/zero")}) {
    try {
      read_text_file(path);
      ADD_FAILURE() << "no InputError for " << path;
    } catch (const InputError& e) {
      EXPECT_EQ(e.file(), path);
      EXPECT_NE(std::string(e.what()).find("a regular file"), std::string::npos) << e.what();
    }
  }
  ::unlink(fifo.c_str());
  // One byte over the cap: 16 MiB + 1.
  const std::string big = test::write_temp("huge.yaml", std::string(kMaxInputFileBytes + 1, '#'));
  try {
    read_text_file(big);
    ADD_FAILURE() << "no InputError for a file over the cap";
  } catch (const InputError& e) {
    EXPECT_EQ(e.value(), std::to_string(kMaxInputFileBytes + 1) + " bytes");
  }
}

// Names end up as UTF-8 strings in the HDF5 file: bytes that are not UTF-8 are bad input
// (0xFF never occurs in UTF-8; a lone continuation byte 0x80 neither; U+00E9 and U+20AC
// encoded properly load).
TEST(SpecErrors, NamesMustBeUtf8) {
  // The whole text must be UTF-8 (it goes into the result file): the first bad byte is
  // named with its line and column (docs/bad-input.md).
  InputError e = load_error("utf8.yaml", "name: \"bad\xff\xfe\"\n" + job("model: llama3-8b"));
  EXPECT_EQ(e.key(), "<file>");
  EXPECT_EQ(e.value(), "byte 0xFF");
  EXPECT_NE(std::string(e.what()).find("utf8.yaml:1:11"), std::string::npos) << e.what();
  e = load_error("utf8b.yaml", "name: \"x\x80\"\n" + job("model: llama3-8b"));
  EXPECT_EQ(e.value(), "byte 0x80");
  setenv("RAPID_CONFIG_DIR", test::source_path("configs").c_str(), 1);
  EXPECT_EQ(load_sweep_spec(test::write_temp("utf8ok.yaml", "name: \"caf\xc3\xa9-\xe2\x82\xac\"\n" +
                                                                job("model: llama3-8b")))
                .name,
            "caf\xc3\xa9-\xe2\x82\xac");
}

}  // namespace
}  // namespace rapid
