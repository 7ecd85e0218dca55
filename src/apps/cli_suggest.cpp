#include "apps/cli_suggest.hpp"

#include <algorithm>

#include "rapid/common/suggest.hpp"

namespace rapid {

const CLI::App& reached_command(const CLI::App& app) {
  const CLI::App* cmd = &app;
  for (;;) {
    const std::vector<const CLI::App*> subs =
        cmd->get_subcommands([](const CLI::App* s) { return s->parsed(); });
    if (subs.empty()) return *cmd;
    cmd = subs.front();
  }
}

std::vector<std::string> long_option_names(const CLI::App& cmd) {
  std::vector<std::string> names;
  for (const CLI::App* c = &cmd; c != nullptr; c = c->get_parent())
    for (const CLI::Option* o : c->get_options())
      for (const std::string& l : o->get_lnames()) names.push_back(l);
  return names;
}

std::vector<std::string> subcommand_names(const CLI::App& cmd) {
  std::vector<std::string> names;
  for (const CLI::App* s : cmd.get_subcommands([](const CLI::App*) { return true; }))
    if (!s->get_name().empty()) names.push_back(s->get_name());
  return names;
}

std::string flag_suggestions(const CLI::App& cmd, const std::vector<std::string>& unexpected) {
  const std::vector<std::string> flags = long_option_names(cmd);
  const std::vector<std::string> subcommands = subcommand_names(cmd);
  std::string out;
  for (const std::string& w : unexpected) {
    const bool flag = w.starts_with('-');
    const size_t begin = flag ? w.find_first_not_of('-') : 0;
    if (begin == std::string::npos) continue;  // "-", "--"
    const std::string bare = w.substr(begin, flag ? w.find('=') - begin : std::string::npos);
    const std::vector<std::string>& known = flag ? flags : subcommands;
    const bool exact = flag && std::find(known.begin(), known.end(), bare) != known.end();
    const std::string hint =  // "-threads" is --threads with one dash
        did_you_mean(exact ? std::vector<std::string>{bare} : suggest(bare, known),
                     flag ? "--" : "");
    if (!hint.empty()) out += (out.empty() ? "" : "; ") + hint;
  }
  return out;
}

std::string parse_error_hint(const CLI::App& app, const CLI::ParseError& e) {
  if (dynamic_cast<const CLI::ExtrasError*>(&e) == nullptr) return "";
  return flag_suggestions(reached_command(app), app.remaining(true));
}

}  // namespace rapid
