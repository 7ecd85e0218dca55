// The stacks' `fitted_overlaps:` (docs/model.md sec 9) say what the runs behind each GPU's
// end-to-end factors overlapped. Checked against those runs themselves, as the tables
// describe them (data/reference/*.yaml): no table the factors are fitted on asks for an
// overlap its GPU's entry leaves out (the rule would silently change the fitted rows), and
// every overlap an entry lists is asked for by some row of that GPU's tables (it claims no
// overlap the data never had). A refit on new tables that changes what they overlap fails
// here until the stack file says so.
#include <gtest/gtest.h>

#include <map>
#include <string>

#include "rapid/spec/training_spec.hpp"
#include "validate/cross_validation.hpp"
#include "validation/validation_support.hpp"

namespace rapid {
namespace {

TEST(FittedOverlaps, StackFilesStateWhatTheFittedRunsOverlapped) {
  const ReferenceContext ctx = test::reference_context();
  std::map<std::string, unsigned> seen, listed;  // by GPU type
  for (const FitTable& t : prepare_fit_tables(load_table_specs(ctx.reference_dir), ctx))
    for (const PreparedRow& row : t.rows) {
      const TrainingSpec& tr = row.spec.training;
      const unsigned fitted = tr.framework.factors_for(t.gpu).fitted_overlaps;
      const unsigned asks = requested_overlaps(tr);
      // The A100 tables: DDP gradient overlap in four SC21 rows, nothing else; the H100
      // tables: all three overlaps.
      EXPECT_EQ(asks & ~fitted, 0u)
          << t.spec->name << ": asks for " << overlap_names(asks & ~fitted) << ", which "
          << tr.framework.name << "'s " << t.gpu << " entry does not list";
      seen[t.gpu] |= asks;
      listed[t.gpu] = fitted;
    }
  ASSERT_EQ(seen.size(), 2u);  // A100 and H100
  for (const auto& [gpu, bits] : listed)
    EXPECT_EQ(bits, seen[gpu]) << gpu << " lists " << overlap_names(bits)
                               << "; its tables overlapped " << overlap_names(seen[gpu]);
  EXPECT_EQ(listed["a100-sxm4-80gb"], unsigned{kOverlapGradReduce});
  EXPECT_EQ(listed["h100-sxm5-80gb"], unsigned{kOverlapAll});
}

}  // namespace
}  // namespace rapid
