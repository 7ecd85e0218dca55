// Refuses a key given twice in one JSON object while nlohmann::json parses (its parser keeps
// the last of them silently: `"hidden_size": 4096, ..., "hidden_size": 8192` read as 8192).
#pragma once

#include <nlohmann/json.hpp>

#include <istream>
#include <set>
#include <string>
#include <vector>

namespace rapid {

/// Fed every parser callback event of one parse of `text` read through `in` (an
/// std::istringstream over `text`: where it stands gives the duplicate's line and column).
/// Throws InputError naming `file`, the key's path (`rope_scaling.type`; `[]` for an
/// array's items) and where its second occurrence starts.
class JsonKeyGuard {
 public:
  JsonKeyGuard(const std::string& text, std::istream& in, std::string file)
      : text_(text), in_(in), file_(std::move(file)) {}

  void on_event(nlohmann::json::parse_event_t event, const nlohmann::json& parsed);

 private:
  struct Frame {
    bool object = false;
    std::string path, key;
    std::set<std::string> keys;
  };
  [[noreturn]] void duplicate(const std::string& key) const;

  const std::string& text_;
  std::istream& in_;
  std::string file_;
  std::vector<Frame> stack_;
};

}  // namespace rapid
