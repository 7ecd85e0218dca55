#include "json_key_guard.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "rapid/common/error.hpp"

namespace rapid {

void JsonKeyGuard::on_event(nlohmann::json::parse_event_t event, const nlohmann::json& parsed) {
  using Event = nlohmann::json::parse_event_t;
  if (event == Event::object_start || event == Event::array_start) {
    Frame f;
    f.object = event == Event::object_start;
    if (!stack_.empty()) {
      const Frame& up = stack_.back();
      f.path = up.object ? (up.path.empty() ? up.key : up.path + "." + up.key) : up.path + "[]";
    }
    stack_.push_back(std::move(f));
  } else if (event == Event::object_end || event == Event::array_end) {
    stack_.pop_back();
  } else if (event == Event::key && !stack_.empty()) {
    Frame& f = stack_.back();
    f.key = parsed.get<std::string>();
    if (!f.keys.insert(f.key).second) duplicate(f.key);
  }
}

void JsonKeyGuard::duplicate(const std::string& key) const {
  const Frame& f = stack_.back();
  const std::string path = f.path.empty() ? key : f.path + "." + key;
  // The parser has read the key's closing quote: its opening quote is the last one before
  // it that no backslash escapes.
  int line = -1, column = -1;
  const std::streamoff end = in_.tellg();
  if (end >= 2 && static_cast<size_t>(end) <= text_.size()) {
    size_t q = static_cast<size_t>(end) - 1;
    while (q > 0) {
      --q;
      if (text_[q] != '"') continue;
      size_t slashes = 0;
      while (slashes < q && text_[q - 1 - slashes] == '\\') ++slashes;
      if (slashes % 2 == 0) break;
    }
    const auto begin = text_.begin() + static_cast<std::ptrdiff_t>(q);
    line = static_cast<int>(std::count(text_.begin(), begin, '\n'));
    const size_t bol = q == 0 ? std::string::npos : text_.rfind('\n', q - 1);
    column = static_cast<int>(bol == std::string::npos ? q : q - bol - 1);
  }
  throw InputError(file_, path, key, "a key given once (duplicate key in one JSON object)", line,
                   column);
}

}  // namespace rapid
