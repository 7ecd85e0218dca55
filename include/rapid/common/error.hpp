// One exception hierarchy for rapid-sweep (docs/architecture.md "Errors": three kinds, kept apart).
//  - InputError: bad input (file, key, value, what was expected). Apps print it and exit 2.
//  - InternalError: a bug or a failed library call (HDF5, MPI). Apps print it and exit 1.
// A legal point that does not fit or cannot run is never an exception: it is a status in
// its result row (see core/eval_result.hpp).
#pragma once

#include <stdexcept>
#include <string>

namespace rapid {

/// Base of every exception rapid-sweep throws on purpose.
class Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// Bad user input. what() reads "FILE: key 'KEY': value 'VALUE': expected EXPECTED"
/// (line:column after FILE when known). Exit code 2 at the application boundary.
class InputError : public Error {
 public:
  InputError(std::string file, std::string key, std::string value, std::string expected,
             int line = -1, int column = -1);

  const std::string& file() const { return file_; }
  const std::string& key() const { return key_; }
  const std::string& value() const { return value_; }
  const std::string& expected() const { return expected_; }

 private:
  std::string file_, key_, value_, expected_;
};

/// A failed call into a library (HDF5, MPI, filesystem) or a broken invariant.
class InternalError : public Error {
 public:
  using Error::Error;
};

/// An evaluator ran past one of its own bounds on a legal point (the DES's event budget):
/// the point's row gets status error with error_code limit, the sweep goes on.
class LimitError : public InternalError {
 public:
  using InternalError::InternalError;
};

/// Exit code the applications use for InputError (docs/architecture.md "Errors", kind 2: bad input
/// exits 2).
inline constexpr int kExitBadInput = 2;

}  // namespace rapid

/// Assertion that stays on in every build type (docs/architecture.md "Errors", kind 1: a bug).
#define RAPID_ASSERT(cond, msg)                                                \
  do {                                                                         \
    if (!(cond)) ::rapid::detail::assert_fail(#cond, msg, __FILE__, __LINE__); \
  } while (0)

namespace rapid::detail {
[[noreturn]] void assert_fail(const char* cond, const char* msg, const char* file, int line);
}
