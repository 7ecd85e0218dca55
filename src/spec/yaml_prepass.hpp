// The event pass load_yaml_text makes over a YAML text before yaml-cpp builds any node
// (docs/bad-input.md "Limits"): it counts the values, refuses a key given twice in one
// mapping (yaml-cpp would keep one of them silently: no reader downstream can see the
// other) and refuses a second document (yaml-cpp's Load reads the first and drops the rest).
#pragma once

#include <yaml-cpp/eventhandler.h>
#include <yaml-cpp/mark.h>

#include "rapid/common/error.hpp"

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace rapid {

/// Feed it every document of a text (YAML::Parser::HandleNextDocument until false); it
/// throws InputError naming `origin`, the key path (`scenarios[1].name`), the value and the
/// line and column at the first value past kMaxYamlValues, at the end of a document with a
/// key given twice in one mapping (the first such key; a syntax error before the end wins)
/// and at the start of a second document.
class YamlPrePass : public YAML::EventHandler {
 public:
  explicit YamlPrePass(std::string origin) : origin_(std::move(origin)) {}

  void OnDocumentStart(const YAML::Mark& m) override;
  /// Throws the first duplicate key of the document: a syntax error further on is told first.
  void OnDocumentEnd() override;
  void OnNull(const YAML::Mark& m, YAML::anchor_t) override { node(m, nullptr, false, false); }
  void OnAlias(const YAML::Mark& m, YAML::anchor_t) override { node(m, nullptr, false, false); }
  void OnScalar(const YAML::Mark& m, const std::string&, YAML::anchor_t,
                const std::string& value) override {
    node(m, &value, false, false);
  }
  void OnSequenceStart(const YAML::Mark& m, const std::string&, YAML::anchor_t,
                       YAML::EmitterStyle::value) override {
    node(m, nullptr, true, false);
  }
  void OnSequenceEnd() override { stack_.pop_back(); }
  void OnMapStart(const YAML::Mark& m, const std::string&, YAML::anchor_t,
                  YAML::EmitterStyle::value) override {
    node(m, nullptr, true, true);
  }
  void OnMapEnd() override { stack_.pop_back(); }

  uint64_t values() const { return values_; }
  int documents() const { return documents_; }

 private:
  /// An open list or mapping: its key path, the next item's index (a list) or the key
  /// whose value comes next and the keys seen with where (a mapping).
  struct Frame {
    bool map = false;
    bool at_key = true;
    int64_t index = 0;
    std::string path, key;
    std::map<std::string, YAML::Mark> keys;
  };

  /// One value starts: counted; in a mapping, a key or the value of the last key.
  void node(const YAML::Mark& m, const std::string* scalar, bool collection, bool map);
  void check_key(const YAML::Mark& m, Frame& f, const std::string& key);

  std::string origin_;
  std::optional<InputError> duplicate_;  ///< the document's first key given twice
  uint64_t values_ = 0;
  int documents_ = 0;
  std::vector<Frame> stack_;
};

}  // namespace rapid
