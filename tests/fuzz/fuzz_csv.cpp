// libFuzzer target: the CSV reader (CsvTable) and the `rapid calibrate` measurements on top
// of it (docs/bad-input.md). Every field is also read as a number, an integer and a
// boolean. Bad input must end in rapid::InputError; anything else is a finding.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <string>

#include "rapid/common/error.hpp"
#include "rapid/cost/calibration.hpp"
#include "rapid/spec/csv_table.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  try {
    const rapid::CsvTable t = rapid::CsvTable::from_text(text, "fuzz.csv");
    for (size_t r = 0; r < t.rows() && r < 64; ++r)
      for (const std::string& column : t.header()) {
        for (auto read :
             {+[](const rapid::CsvTable&x, size_t i, const std::string&c) { x.number(i, c); },
              +[](const rapid::CsvTable&x, size_t i, const std::string&c) { x.integer(i, c); },
              +[](const rapid::CsvTable&x, size_t i, const std::string&c) { x.boolean(i, c); }}) {
          try {
            read(t, r, column);
          } catch (const rapid::InputError&) {
          }
        }
      }
    rapid::read_measurements(t);
  } catch (const rapid::InputError&) {  // the expected outcome of bad input
  } catch (const std::exception& e) {
    std::fprintf(stderr, "fuzz_csv: threw something other than InputError: %s\n", e.what());
    std::abort();
  }
  return 0;
}
