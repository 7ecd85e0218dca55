#include "rapid/common/error.hpp"

#include <fmt/format.h>

#include "rapid/common/utf8.hpp"

namespace rapid {
namespace {
std::string format_input_error(const std::string& file, const std::string& key,
                               const std::string& value, const std::string& expected, int line,
                               int column) {
  // One line whatever the input holds: control characters and bytes that are not UTF-8
  // escaped, a long key or value cut (a 15 MiB scalar, a binary file's first line).
  std::string where = printable(file);
  if (line >= 0) where += fmt::format(":{}", line + 1);
  if (line >= 0 && column >= 0) where += fmt::format(":{}", column + 1);
  return fmt::format("{}: key '{}': value '{}': expected {}", where, printable(key, 200),
                     printable(value, 200), printable(expected));
}
}  // namespace

InputError::InputError(std::string file, std::string key, std::string value, std::string expected,
                       int line, int column)
    : Error(format_input_error(file, key, value, expected, line, column)),
      file_(std::move(file)),
      key_(std::move(key)),
      value_(std::move(value)),
      expected_(std::move(expected)) {}

namespace detail {
void assert_fail(const char* cond, const char* msg, const char* file, int line) {
  throw InternalError(fmt::format("internal error: {} ({}) at {}:{}", msg, cond, file, line));
}
}  // namespace detail
}  // namespace rapid
