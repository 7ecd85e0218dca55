// `rapid model import config.json -o model.yaml`: a Hugging Face config to our model file.
#pragma once

#include <CLI/CLI.hpp>
#include <string>

namespace rapid {

class ModelCommand {
 public:
  /// Registers `model` and its `import` subcommand on `app`.
  explicit ModelCommand(CLI::App& app);
  bool parsed() const;
  /// Reads the JSON, maps it (InputError: exit 2 naming the field), writes the YAML via a
  /// temporary file (no partial output), prints a one-line summary. Returns 0.
  int run() const;

 private:
  CLI::App* import_ = nullptr;
  std::string input_, output_, name_;
};

}  // namespace rapid
