// "Did you mean": the closest of a list of known words (names, job keys, flags) to a word
// that is none of them, for the messages of bad input (docs/architecture.md "Errors").
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace rapid {

/// Optimal string alignment distance between `a` and `b` (Damerau-Levenshtein without
/// editing a substring twice): the fewest insertions, deletions, substitutions and swaps of
/// two adjacent bytes that turn `a` into `b`. Case-sensitive, byte-wise.
size_t edit_distance(std::string_view a, std::string_view b);

/// Largest distance at which a word of `word`'s length is taken for a typo of another: a
/// third of its length, at least 1 ("tpp" 1, "thredas" 2, "llama3-7b" 3).
size_t suggestion_threshold(std::string_view word);

/// The candidates `word` is most likely a typo of: those nearest it within
/// suggestion_threshold(word) (ties broken by the longest common prefix, then by name),
/// else, when none is that near, the candidates `word` (two bytes or more) begins, by name.
/// At most `max_count`; empty when nothing is close, or when `word` is itself a candidate.
std::vector<std::string> suggest(std::string_view word, const std::vector<std::string>& candidates,
                                 size_t max_count = 3);

/// "did you mean X?" / "did you mean X or Y?" / "did you mean X, Y or Z?" with `prefix`
/// before each suggestion ("--", "search."); "" when `suggestions` is empty.
std::string did_you_mean(const std::vector<std::string>& suggestions, std::string_view prefix = "");

/// "a, b, c" of `names`, cut after `max_shown` with "and N more".
std::string list_names(const std::vector<std::string>& names, size_t max_shown = 12);

}  // namespace rapid
