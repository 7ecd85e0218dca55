#include "rapid/common/error.hpp"

#include <fmt/format.h>

namespace rapid {
namespace {
std::string format_input_error(const std::string& file, const std::string& key,
                               const std::string& value, const std::string& expected, int line,
                               int column) {
  std::string where = file;
  if (line >= 0) where += fmt::format(":{}", line + 1);
  if (line >= 0 && column >= 0) where += fmt::format(":{}", column + 1);
  return fmt::format("{}: key '{}': value '{}': expected {}", where, key, value, expected);
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
