// The one CSV reader (issue 8, part 8): RFC 4180 quoting, comments, and errors that name
// the file, line and column.
#include "rapid/spec/csv_table.hpp"

#include <gtest/gtest.h>

#include "rapid/common/error.hpp"

namespace rapid {
namespace {

TEST(CsvTable, QuotedFieldsHoldCommasQuotesAndNewlines) {
  const CsvTable t = CsvTable::from_text(
      "\xEF\xBB\xBF# a comment line\r\n"
      "model,note,tflops\r\n"
      "\"GPT-3, 175B\",\"says \"\"hi\"\"\", 153.5 \r\n"
      "\n"
      "llama,\"two\nlines\",42\n",
      "inline.csv");
  ASSERT_EQ(t.rows(), 2u);
  EXPECT_EQ(t.text(0, "model"), "GPT-3, 175B");
  EXPECT_EQ(t.text(0, "note"), "says \"hi\"");
  EXPECT_DOUBLE_EQ(t.number(0, "tflops"), 153.5);  // unquoted: trimmed
  EXPECT_EQ(t.text(1, "note"), "two\nlines");
  EXPECT_EQ(t.integer(1, "tflops"), 42);
  EXPECT_EQ(t.line(1), 5);  // the comment, header, first row and blank line come before
}

TEST(CsvTable, ErrorsNameLineAndColumn) {
  try {
    CsvTable::from_text("a,b\n1,2\n3\n", "short.csv");
    ADD_FAILURE() << "a row with one field";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("short.csv"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("3"), std::string::npos) << e.what();
  }
  EXPECT_THROW(CsvTable::from_text("a,b\n\"open,2\n", "quote.csv"), InputError);
  const CsvTable t = CsvTable::from_text("a,b\n1,x\n", "num.csv");
  EXPECT_THROW(t.number(0, "b"), InputError);
  EXPECT_THROW(t.text(0, "c"), InputError);
}

}  // namespace
}  // namespace rapid
