#include "rapid/common/suggest.hpp"

#include <algorithm>
#include <tuple>

namespace rapid {

size_t edit_distance(std::string_view a, std::string_view b) {
  // Three rows of the dynamic programme: d[i][j] is the distance of a[0, i) and b[0, j).
  const size_t n = b.size();
  std::vector<size_t> before(n + 1), prev(n + 1), cur(n + 1);
  for (size_t j = 0; j <= n; ++j) prev[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    cur[0] = i;
    for (size_t j = 1; j <= n; ++j) {
      const size_t cost = a[i - 1] == b[j - 1] ? 0 : 1;
      cur[j] = std::min({prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + cost});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1])
        cur[j] = std::min(cur[j], before[j - 2] + 1);  // adjacent swap
    }
    std::swap(before, prev);
    std::swap(prev, cur);
  }
  return prev[n];
}

size_t suggestion_threshold(std::string_view word) {
  return std::max<size_t>(1, word.size() / 3);
}

namespace {

size_t common_prefix(std::string_view a, std::string_view b) {
  size_t k = 0;
  while (k < a.size() && k < b.size() && a[k] == b[k]) ++k;
  return k;
}

}  // namespace

std::vector<std::string> suggest(std::string_view word, const std::vector<std::string>& candidates,
                                 size_t max_count) {
  if (std::find(candidates.begin(), candidates.end(), word) != candidates.end()) return {};
  // (distance, -common prefix, name): the nearest first.
  std::vector<std::tuple<size_t, long, std::string>> near;
  const size_t limit = suggestion_threshold(word);
  for (const std::string& c : candidates) {
    const size_t d = edit_distance(word, c);
    if (d <= limit && d < std::max(word.size(), c.size()))  // not all of it replaced
      near.emplace_back(d, -static_cast<long>(common_prefix(word, c)), c);
  }
  std::sort(near.begin(), near.end());
  std::vector<std::string> out;
  for (const auto& [d, prefix, name] : near) {
    // Only those as near as the nearest: "tpp" is tp (a common prefix of 2), not pp.
    if (out.size() == max_count || d != std::get<0>(near.front()) ||
        prefix != std::get<1>(near.front()))
      break;
    out.push_back(name);
  }
  if (!out.empty() || word.size() < 2) return out;
  std::vector<std::string> longer;  // "h100" for h100-sxm5-80gb: the word begins them
  for (const std::string& c : candidates)
    if (c.starts_with(word)) longer.push_back(c);
  std::sort(longer.begin(), longer.end());
  if (longer.size() > max_count) longer.resize(max_count);
  return longer;
}

std::string did_you_mean(const std::vector<std::string>& suggestions, std::string_view prefix) {
  if (suggestions.empty()) return "";
  std::string out = "did you mean ";
  for (size_t i = 0; i < suggestions.size(); ++i) {
    if (i > 0) out += i + 1 == suggestions.size() ? " or " : ", ";
    out += prefix;
    out += suggestions[i];
  }
  return out + "?";
}

std::string list_names(const std::vector<std::string>& names, size_t max_shown) {
  std::string out;
  for (size_t i = 0; i < names.size() && i < max_shown; ++i) out += (i > 0 ? ", " : "") + names[i];
  if (names.size() > max_shown) out += " and " + std::to_string(names.size() - max_shown) + " more";
  return out;
}

}  // namespace rapid
