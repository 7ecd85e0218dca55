// Leave-one-source-out (docs/validation.md "Honest figures"): a source's tables are held out
// together, and a GPU type with no other source takes the factors fitted on the tables of
// the chip its hardware file names in `stack_factors_from`. Tables copied from
// data/reference into a temporary directory, their descriptions edited as a new table's
// author would write them.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "validate/cross_validation.hpp"
#include "validation/validation_support.hpp"

namespace rapid {
namespace {

namespace fs = std::filesystem;

// A fresh directory holding the CSVs of `tables` (data/reference names without extension)
// and their descriptions, each description with `extra` appended and every `from` in it
// replaced by `to`.
struct ReferenceCopy {
  fs::path dir;
  explicit ReferenceCopy(const std::string& name) {
    dir = fs::temp_directory_path() / ("rapid_source_holdout_" + name);
    fs::remove_all(dir);
    fs::create_directories(dir);
  }
  ~ReferenceCopy() { fs::remove_all(dir); }
  void add(const std::string& table, const std::string& extra = "", const std::string& from = "",
           const std::string& to = "") const {
    const fs::path src = test::reference_context().reference_dir;
    fs::copy_file(src / (table + ".csv"), dir / (table + ".csv"));
    std::ifstream in(src / (table + ".yaml"));
    std::stringstream text;
    text << in.rdbuf();
    std::string yaml = text.str();
    if (!from.empty())
      for (size_t at = yaml.find(from); at != std::string::npos; at = yaml.find(from, at))
        yaml.replace(at, from.size(), to), at += to.size();
    std::ofstream(dir / (table + ".yaml")) << yaml << extra;
  }
  CrossValidation run(std::vector<TableSpec>& specs, std::vector<FitTable>& tables) const {
    ReferenceContext ctx = test::reference_context();
    ctx.reference_dir = dir.string();
    specs = load_table_specs(ctx.reference_dir);
    tables = prepare_fit_tables(specs, ctx);
    return cross_validate(tables);
  }
};

const HeldOut& held(const CrossValidation& cv, const std::string& table) {
  for (const HeldOut& h : cv.tables)
    if (h.table == table) return h;
  throw std::runtime_error(table + " not held out");
}

TEST(SourceHoldout, TablesOfOneSourceAreHeldOutTogether) {
  // Two H100 tables. Each its own source: each is predicted with the factors fitted on the
  // other. One source_id for both: no other source of H100 is left, and the H100 file names
  // no stack_factors_from, so neither has an out-of-sample figure.
  {
    ReferenceCopy copy("apart");
    copy.add("dgxc_benchmarking_h100");
    copy.add("nemo_2407_h100_fp8");
    std::vector<TableSpec> specs;
    std::vector<FitTable> tables;
    const CrossValidation cv = copy.run(specs, tables);
    ASSERT_EQ(cv.sources.size(), 2u);
    EXPECT_EQ(held(cv, "dgxc_benchmarking_h100.csv").trained_on,
              std::vector<std::string>{"nemo_2407_h100_fp8.csv"});
    EXPECT_EQ(held(cv, "nemo_2407_h100_fp8.csv").trained_on,
              std::vector<std::string>{"dgxc_benchmarking_h100.csv"});
    // The source's figure pools its one table's rows.
    EXPECT_DOUBLE_EQ(cv.sources[0].out_of_sample_mape, cv.tables[0].out_of_sample.mape());
  }
  ReferenceCopy copy("together");
  copy.add("dgxc_benchmarking_h100", "source_id: nvidia-h100-nemo\n");
  // (the NeMo table names its source already: the NeMo performance summary)
  copy.add("nemo_2407_h100_fp8", "", "source_id: nemo_performance_summary",
           "source_id: nvidia-h100-nemo");
  std::vector<TableSpec> specs;
  std::vector<FitTable> tables;
  const CrossValidation cv = copy.run(specs, tables);
  ASSERT_EQ(cv.sources.size(), 1u);
  EXPECT_EQ(cv.sources[0].source, "nvidia-h100-nemo");
  EXPECT_EQ(cv.sources[0].tables.size(), 2u);
  EXPECT_FALSE(cv.sources[0].held_out);
  for (const HeldOut& h : cv.tables) EXPECT_TRUE(h.trained_on.empty()) << h.table;
  EXPECT_EQ(cv.rows, 0u);  // nothing out of sample
}

TEST(SourceHoldout, SingleSourceGpuTakesItsStackFactorsFromChip) {
  // The NeMo 24.07 table as if run on H200 (configs/hardware/h200-sxm-141gb.yaml names
  // stack_factors_from: h100-sxm5-80gb): no other H200 source, so it is predicted with the
  // factors fitted on the H100 tables (here dgxc only), exactly as fit_factors on those
  // tables gives them; the H100 table has no other H100 source and no stack_factors_from.
  ReferenceCopy copy("h200");
  copy.add("dgxc_benchmarking_h100");
  copy.add("nemo_2407_h100_fp8", "", "hardware: h100-sxm5-80gb", "hardware: h200-sxm-141gb");
  std::vector<TableSpec> specs;
  std::vector<FitTable> tables;
  const CrossValidation cv = copy.run(specs, tables);
  const HeldOut& h200 = held(cv, "nemo_2407_h100_fp8.csv");
  EXPECT_EQ(h200.gpu, "h200-sxm-141gb");
  EXPECT_EQ(h200.factors_gpu, "h100-sxm5-80gb");
  EXPECT_EQ(h200.trained_on, std::vector<std::string>{"dgxc_benchmarking_h100.csv"});
  const FitTable* dgxc = nullptr;
  for (const FitTable& t : tables)
    if (t.gpu == "h100-sxm5-80gb") dgxc = &t;
  ASSERT_NE(dgxc, nullptr);
  const EndToEndFit h100 = fit_factors({dgxc}, "h100-sxm5-80gb");
  EXPECT_DOUBLE_EQ(h200.fitted.step, h100.after.step);
  EXPECT_DOUBLE_EQ(h200.fitted.elementwise, h100.after.elementwise);
  EXPECT_FALSE(h200.out_of_sample.rows.empty());
  EXPECT_TRUE(held(cv, "dgxc_benchmarking_h100.csv").trained_on.empty());
  EXPECT_EQ(cv.worst_source, "nemo_performance_summary");  // the NeMo table's source_id
}

}  // namespace
}  // namespace rapid
