#include "table_spec.hpp"

#include <algorithm>
#include <filesystem>

#include "rapid/common/error.hpp"
#include "rapid/spec/yaml_reader.hpp"

namespace fs = std::filesystem;

namespace rapid {

namespace {

// A scalar is a literal; a mapping {column: C [, values: {...}]}, {settings: C} or
// {product: [C1, C2, ...]}.
ValueRef parse_ref(const YamlMap& m, const std::string& key) {
  ValueRef r;
  const YAML::Node n = m.node(key);
  if (n.IsScalar()) {
    r.from = ValueRef::From::Literal;
    r.literal = n.Scalar();
    return r;
  }
  if (!n.IsMap()) m.fail(key, "<list>", "a value or {column|settings|product: ...}");
  const YamlMap v = m.map(key);
  if (v.has("column")) {
    r.from = ValueRef::From::Column;
    r.columns = {v.string("column")};
  } else if (v.has("settings")) {
    r.from = ValueRef::From::Settings;
    r.columns = {v.string("settings")};
  } else if (v.has("product")) {
    r.from = ValueRef::From::Product;
    const YAML::Node p = v.node("product");
    if (!p.IsSequence() || p.size() == 0) v.fail("product", "<not a list>", "a list of columns");
    for (const auto& c : p) r.columns.push_back(c.Scalar());
  } else {
    m.fail(key, "<mapping>", "one of column, settings or product");
  }
  if (v.has("values")) {
    const YamlMap vals = v.map("values");
    for (const std::string& k : vals.keys()) r.values[k] = vals.string(k);
  }
  v.finish();
  return r;
}

std::map<std::string, ValueRef> parse_refs(const YamlMap& m, const std::string& key) {
  std::map<std::string, ValueRef> out;
  if (!m.has(key)) return out;
  const YamlMap s = m.map(key);
  for (const std::string& k : s.keys()) out[k] = parse_ref(s, k);
  s.finish();
  return out;
}

std::vector<std::string> strings(const YamlMap& m, const std::string& key) {
  std::vector<std::string> out;
  const YAML::Node n = m.node(key);
  if (n.IsScalar()) return {n.Scalar()};
  if (!n.IsSequence()) m.fail(key, "<mapping>", "a value or a list");
  for (const auto& x : n) out.push_back(x.Scalar());
  return out;
}

}  // namespace

TableSpec load_table_spec(const std::string& path) {
  YamlMap m(load_yaml_file(path), path);
  TableSpec t;
  t.path = path;
  t.name = m.string("file");
  t.csv = (fs::path(path).parent_path() / t.name).string();
  t.title = m.string("title");
  t.source = m.string("source");
  t.source_id = m.string_or("source_id", fs::path(path).stem().string());
  if (t.source_id.empty()) m.fail("source_id", t.source_id, "a non-empty name");
  const std::vector<std::string> kinds = {"training",   "memory",    "gemm",
                                          "collective", "attention", "inference"};
  t.kind = kinds[static_cast<size_t>(m.choice_or("kind", kinds, 0))];
  t.suite =
      m.choice_or("suite", {"default", "hf-ultrascale"}, 0) == 0 ? "default" : "hf-ultrascale";
  t.end_to_end = m.boolean_or("end_to_end", false);
  for (auto [key, ref] : {std::pair{"hardware", &t.hardware}, std::pair{"network", &t.network},
                          std::pair{"framework", &t.framework}, std::pair{"dtype", &t.dtype},
                          std::pair{"stack", &t.stack}})
    if (m.has(key)) *ref = parse_ref(m, key);
  t.label = m.string_or("label", "");
  if (m.has("model")) {
    const YamlMap mm = m.map("model");
    if (mm.has("name")) t.model = parse_ref(mm, "name");
    t.architecture = mm.string_or("architecture", "");
    if (!t.model.given() && t.architecture != "gpt" && t.architecture != "llama")
      mm.fail("architecture", t.architecture, "gpt or llama (or a name: for a config)");
    if (mm.has("fill_from")) {
      const YamlMap f = mm.map("fill_from");
      t.fill_match = strings(f, "match");
      if (f.has("where")) {
        const YamlMap w = f.map("where");
        for (const std::string& k : w.keys()) t.fill_where[k] = w.string(k);
      }
      f.finish();
    }
    for (const std::string& k : mm.keys())
      if (k != "name" && k != "architecture" && k != "fill_from")
        t.model_fields[k] = parse_ref(mm, k);
    mm.finish();
  }
  t.training = parse_refs(m, "training");
  t.layout = parse_refs(m, "layout");
  t.shape = parse_refs(m, "shape");
  t.serving = parse_refs(m, "serving");
  t.simulate = m.choice_or("fidelity", {"analytical", "des"}, 0) == 1;
  if (m.has("cases")) {
    const YamlMap c = m.map("cases");
    t.cases_column = c.string("column");
    const YamlMap v = c.map("values");
    for (const std::string& k : v.keys()) {
      const YamlMap knobs = v.map(k);
      for (const std::string& kk : knobs.keys()) t.cases[k][kk] = knobs.string(kk);
      knobs.finish();
    }
    c.finish();
  }
  if (m.has("search")) {
    const YamlMap s = m.map("search");
    for (const std::string& k : s.keys()) t.search[k] = strings(s, k);
    t.allow_tp_across_nodes =
        s.has("allow_tp_across_nodes") && s.boolean_or("allow_tp_across_nodes", false);
    t.allow_uneven_pp = s.has("allow_uneven_pp") && s.boolean_or("allow_uneven_pp", false);
    t.search.erase("allow_tp_across_nodes");
    t.search.erase("allow_uneven_pp");
    s.finish();
  }
  if (m.has("settings")) {
    const YamlMap s = m.map("settings");
    t.settings_file = (fs::path(path).parent_path() / s.string("file")).string();
    t.settings_key = s.string("key");
    s.finish();
  }
  if (m.has("status")) {
    const YamlMap s = m.map("status");
    t.status_column = s.string("column");
    t.status_ok = s.string("ok");
    s.finish();
  }
  const YAML::Node ms = m.node("measures");
  if (!ms.IsSequence() || ms.size() == 0) m.fail("measures", "<not a list>", "a list of measures");
  for (size_t i = 0; i < ms.size(); ++i) {
    const YamlMap e(ms[i], path, "measures[" + std::to_string(i) + "]");
    Measure x;
    x.column = e.string("column");
    x.quantity = e.string("quantity");
    x.unit = e.string_or("unit", "");
    x.stage = e.string_or("stage", x.stage);
    x.layout = parse_refs(e, "layout");
    e.finish();
    t.measures.push_back(std::move(x));
  }
  m.finish();
  return t;
}

std::vector<TableSpec> load_table_specs(const std::string& dir) {
  std::vector<std::string> files;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(dir, ec))
    if (e.path().extension() == ".yaml") files.push_back(e.path().string());
  if (ec || files.empty())
    throw InputError(dir, "<directory>", dir,
                     "a directory of table descriptions (*.yaml beside *.csv; data/reference)");
  std::sort(files.begin(), files.end());
  std::vector<TableSpec> out;
  for (const std::string& f : files) out.push_back(load_table_spec(f));
  return out;
}

}  // namespace rapid
