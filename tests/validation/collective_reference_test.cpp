// The collective model against measured nccl-tests bus bandwidth (data/reference): every
// row printed, bounded per row. Bounds are the acceptance bounds (15% from 4 MiB
// up, 30% below), not fitted to our output.
#include <gtest/gtest.h>

#include "rapid/spec/csv_table.hpp"
#include "validation/validation_support.hpp"

namespace rapid {
namespace {

TEST(CollectiveReference, DgxA100AllReduceBusbwEveryRowWithinBounds) {
  const ValidationTable t = test::table("nccl_allreduce_busbw_dgx_a100");
  test::print_table(t);
  const CsvTable ref(test::table_spec("nccl_allreduce_busbw_dgx_a100").csv);
  ASSERT_EQ(t.rows.size(), 24u);
  ASSERT_EQ(ref.rows(), t.rows.size());
  for (size_t i = 0; i < t.rows.size(); ++i) {
    const double bound = ref.number(i, "size_bytes") >= 4.0 * 1024 * 1024 ? 15.0 : 30.0;
    EXPECT_LE(t.rows[i].abs_pct_error(), bound) << t.rows[i].label;
  }
}

TEST(CollectiveReference, DgxH100SmallAllReduceTimeEveryRowWithin15Percent) {
  // Issue 33's bound: 8 B to 1 MiB on 8 GPUs within 15% of the published time per call.
  // Nothing is fitted to this table: NCCL's protocol tables (nccl_protocol.cpp) and the
  // network file's start-up of 8 us (docs/collectives.md sec 6b).
  const ValidationTable t = test::table("nccl_allreduce_small_h100");
  test::print_table(t);
  ASSERT_EQ(t.rows.size(), 18u);
  for (const auto& r : t.rows) EXPECT_LE(r.abs_pct_error(), 15.0) << r.label;
}

TEST(CollectiveReference, TwoNodeH100AllReduceBusbwIsReported) {
  // GCP A3 Mega (GPUDirect-TCPXO), not a DGX: configs/networks/gcp-a3-mega.yaml with default
  // NCCL curve parameters. No bound: printed for the record (docs/collectives.md).
  const ValidationTable t = test::table("nccl_allreduce_busbw_2node");
  test::print_table(t);
  ASSERT_EQ(t.rows.size(), 6u);
  for (const auto& r : t.rows) EXPECT_GT(r.predicted, 0.0) << r.label;
}

}  // namespace
}  // namespace rapid
