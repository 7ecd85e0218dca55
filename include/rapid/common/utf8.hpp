// UTF-8 checks for text that goes into result files and messages (names, YAML text, paths).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace rapid {

/// Length of the well-formed UTF-8 sequence at the start of `s` (1-4), 0 when there is none
/// (RFC 3629: no overlong forms, no surrogates, at most U+10FFFF).
size_t utf8_sequence_length(std::string_view s);

/// Whether all of `s` is well-formed UTF-8.
bool is_utf8(std::string_view s);

/// `s` as it may appear in a one-line message: control characters and bytes that are not
/// UTF-8 written as \xNN, cut after `max_bytes` with the full length said.
std::string printable(std::string_view s, size_t max_bytes = SIZE_MAX);

}  // namespace rapid
