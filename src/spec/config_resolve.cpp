#include "config_resolve.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <filesystem>

#include "rapid/common/utf8.hpp"

namespace fs = std::filesystem;

namespace rapid::detail {

std::pair<YAML::Node, Source> resolve_config(const YamlMap& job, const YAML::Node& value,
                                             const std::string& key, const std::string& kind,
                                             const std::string& also, const std::string& anchor) {
  if (value.IsMap()) {
    Source src{fmt::format("<inline in {}>", job.file()), YAML::Dump(value)};
    return {value, src};
  }
  if (!value.IsScalar() || value.Scalar().empty())
    job.fail(key, "<not a name>",
             fmt::format("a name from configs/{}/, a path or a mapping", kind));
  const std::string ref = value.Scalar();
  std::string path;
  std::string tried;
  if (ref.find('/') != std::string::npos || ref.ends_with(".yaml")) {
    fs::path job_dir = fs::path(job.file()).parent_path();
    for (const fs::path& c : {job_dir / ref, fs::path(ref)}) {
      std::error_code ec;
      if (path.empty() && fs::is_regular_file(c, ec)) path = c.lexically_normal().string();
      tried += (tried.empty() ? "" : ", ") + c.string();
    }
  } else {
    const std::string& where = anchor.empty() ? job.file() : anchor;
    path = find_named_config(kind, ref, where);
    if (path.empty() && !also.empty()) path = find_named_config(also, ref, where);
    const fs::path here = fs::path(job.file()).parent_path();
    if (!also.empty() && !job.file().starts_with("<"))
      for (const fs::path& c : {here / (ref + ".yaml"), here / ".." / (ref + ".yaml")}) {
        std::error_code ec;
        if (path.empty() && fs::is_regular_file(c, ec)) path = c.lexically_normal().string();
      }
    tried = fmt::format("{}/{}.yaml{} under {}{}", kind, ref,
                        also.empty() ? "" : fmt::format(" and {}/{}.yaml", also, ref),
                        fmt::join(config_search_dirs(where), ", "),
                        also.empty() || job.file().starts_with("<")
                            ? ""
                            : fmt::format(", and {}.yaml beside {}", ref, job.file()));
  }
  if (path.empty()) job.fail(key, ref, fmt::format("an existing config (looked for {})", tried));
  if (!is_utf8(path))
    job.fail(key, "<not UTF-8>", "a config path in UTF-8 (it is stored in the result file)");
  std::string text = read_text_file(path);
  return {load_yaml_text(text, path), Source{path, text}};
}

}  // namespace rapid::detail
