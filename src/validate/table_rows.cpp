#include "table_rows.hpp"

#include <fmt/format.h>

#include <charconv>
#include <cmath>
#include <limits>

#include "rapid/common/error.hpp"
#include "rapid/spec/legality.hpp"
#include "rapid/spec/yaml_reader.hpp"

namespace rapid {

RowValues::RowValues(const TableSpec& spec, const CsvTable& table, const CsvTable* settings)
    : spec_(spec), t_(table), settings_(settings) {}

void RowValues::select(size_t row) {
  row_ = row;
  settings_row_.reset();
  fill_row_.reset();
  if (settings_) {
    const std::string& key = t_.text(row, spec_.settings_key);
    for (size_t i = 0; i < settings_->rows() && !settings_row_; ++i)
      if (settings_->text(i, spec_.settings_key) == key) settings_row_ = i;
    if (!settings_row_)
      throw InputError(settings_->path(), spec_.settings_key, key,
                       fmt::format("a row for every row of {}", t_.path()));
  }
  if (!spec_.fill_match.empty()) {
    for (size_t i = 0; i < t_.rows() && !fill_row_; ++i) {
      bool match = true;
      for (const std::string& c : spec_.fill_match)
        match = match && t_.text(i, c) == t_.text(row, c);
      for (const auto& [c, v] : spec_.fill_where) match = match && t_.text(i, c) == v;
      if (match) fill_row_ = i;
    }
  }
}

std::string RowValues::where() const {
  return fmt::format("{} (row on line {})", t_.path(), t_.line(row_));
}

std::optional<std::string> RowValues::get(const ValueRef& ref, bool fill) const {
  std::string text;
  switch (ref.from) {
    case ValueRef::From::None:
      return std::nullopt;
    case ValueRef::From::Literal:
      return ref.literal;
    case ValueRef::From::Column:
      text = t_.text(row_, ref.columns.front());
      if (text.empty() && fill && fill_row_) text = t_.text(*fill_row_, ref.columns.front());
      break;
    case ValueRef::From::Settings:
      if (!settings_ || !settings_row_)
        throw InputError(spec_.path, ref.columns.front(), "<settings>",
                         "a settings: file for a {settings: ...} value");
      text = settings_->text(*settings_row_, ref.columns.front());
      break;
    case ValueRef::From::Product: {
      double p = 1;  // columns, and numbers as constant factors
      for (const std::string& c : ref.columns)
        p *= t_.has_column(c) ? t_.number(row_, c) : number(c, c);
      text = fmt::format("{}", p);
      break;
    }
  }
  if (text.empty()) return std::nullopt;
  if (ref.values.empty()) return text;
  auto it = ref.values.find(text);
  if (it == ref.values.end()) {
    std::string known;
    for (const auto& [k, v] : ref.values) known += (known.empty() ? "" : ", ") + k;
    t_.fail(row_, ref.columns.front(), text, "one of " + known);
  }
  return it->second;
}

std::string RowValues::label() const {
  std::string out;
  const std::string& s = spec_.label;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] != '{') {
      out += s[i];
      continue;
    }
    const size_t end = s.find('}', i);
    if (end == std::string::npos) throw InputError(spec_.path, "label", s, "balanced {column}");
    out += t_.text(row_, s.substr(i + 1, end - i - 1));
    i = end;
  }
  return out;
}

int64_t RowValues::integer(const std::string& key, const std::string& text) const {
  if (const auto v = parse_integer(text)) return *v;
  throw InputError(where(), key, text, "an integer");
}

double RowValues::number(const std::string& key, const std::string& text) const {
  if (const auto v = parse_number(text)) return *v;
  throw InputError(where(), key, text, "a number");
}

bool RowValues::boolean(const std::string& key, const std::string& text) const {
  if (const auto v = parse_boolean(text)) return *v;
  throw InputError(where(), key, text, "true or false");
}

ModelSpec named_model(const TableSpec& s, const RowValues& v, const ReferenceContext& ctx) {
  const std::string name = *v.get(s.model);
  if (auto it = ctx.models_read.find(name); it != ctx.models_read.end()) return it->second;
  const std::string path = find_named_config("models", name, ctx.config_anchor);
  if (path.empty()) throw InputError(v.where(), "model", name, "a config in configs/models");
  return ctx.models_read.emplace(name, parse_model(load_yaml_file(path), path)).first->second;
}

void set_knob(ParallelConfig& c, const std::string& key, const std::string& text,
              const RowValues& at) {
  auto degree = [&](int32_t ParallelConfig::*f) {
    c.*f = static_cast<int32_t>(at.integer(key, text));
    if (c.*f < 1 || c.*f > (1 << 24)) throw InputError(at.where(), key, text, "1 to 2^24");
  };
  if (key == "tp") return degree(&ParallelConfig::tp);
  if (key == "pp") return degree(&ParallelConfig::pp);
  if (key == "dp") return degree(&ParallelConfig::dp);
  if (key == "cp") return degree(&ParallelConfig::cp);
  if (key == "ep") return degree(&ParallelConfig::ep);
  if (key == "etp") return degree(&ParallelConfig::etp);
  if (key == "vpp") return degree(&ParallelConfig::vpp);
  if (key == "mbs") return degree(&ParallelConfig::mbs);
  if (key == "sp") {
    c.sp = at.boolean(key, text);
    return;
  }
  if (key == "zero_stage") {
    const int64_t z = at.integer(key, text);
    if (z < 0 || z > 3) throw InputError(at.where(), key, text, "0 to 3");
    c.zero_stage = static_cast<int8_t>(z);
    return;
  }
  // An enum knob by its names (the HDF5 enum member names).
  auto named = [&](auto& field, const auto& names, const char* expected) {
    for (size_t r = 0; r < std::size(names); ++r)
      if (text == names[r]) {
        field = static_cast<std::remove_reference_t<decltype(field)>>(r);
        return;
      }
    throw InputError(at.where(), key, text, expected);
  };
  if (key == "recompute") return named(c.recompute, kRecomputeNames, "none, selective, full or op");
  if (key == "recompute_method")
    return named(c.recompute_method, kRecomputeMethodNames, "uniform, block or every");
  if (key == "recompute_num_layers") return degree(&ParallelConfig::recompute_layers);
  throw InputError(at.where(), key, text,
                   "a layout knob: tp, pp, dp, cp, ep, etp, vpp, mbs, sp, zero_stage, recompute, "
                   "recompute_method, recompute_num_layers, gpus");
}

namespace {

// A decoder built from columns (architecture gpt: 4h GELU MLP, LayerNorm, biases, learned
// positions, dropout and tied embeddings unless the table says; llama: SwiGLU, RMSNorm, rotary,
// no biases or dropout, untied unless the table says).
ModelSpec model_from_columns(const TableSpec& s, const RowValues& v) {
  auto field = [&](const std::string& k) -> std::optional<std::string> {
    auto it = s.model_fields.find(k);
    return it == s.model_fields.end() ? std::nullopt : v.get(it->second, true);
  };
  auto required = [&](const std::string& k) {
    const auto text = field(k);
    if (!text) throw InputError(s.path, "model." + k, "<not given>", "a column for this field");
    return v.integer(k, *text);
  };
  const bool gpt = s.architecture == "gpt";
  ModelSpec m;
  m.num_layers = required("num_layers");
  m.hidden_size = required("hidden_size");
  m.num_attention_heads = required("num_attention_heads");
  m.vocab_size = required("vocab_size");
  m.seq_length = required("seq_length");
  m.num_kv_heads = field("num_kv_heads") ? v.integer("num_kv_heads", *field("num_kv_heads"))
                                         : m.num_attention_heads;
  m.head_dim = m.hidden_size / m.num_attention_heads;
  m.ffn_hidden_size = field("ffn_hidden_size")
                          ? v.integer("ffn_hidden_size", *field("ffn_hidden_size"))
                          : 4 * m.hidden_size;
  m.activation = gpt ? Activation::Gelu : Activation::SwiGlu;
  m.norm = gpt ? NormKind::LayerNorm : NormKind::RmsNorm;
  m.position_embedding = gpt ? PositionEmbedding::Learned : PositionEmbedding::Rope;
  m.linear_bias = gpt;
  // A table may say dropout: false (models trained with dropout probability 0, which saves
  // no mask: PyTorch's _dropout_impl returns its input when p == 0,
  // aten/src/ATen/native/Dropout.cpp).
  m.dropout = field("dropout") ? v.boolean("dropout", *field("dropout")) : gpt;
  m.tied_embeddings =
      field("tied_embeddings") ? v.boolean("tied_embeddings", *field("tied_embeddings")) : gpt;
  if (m.num_layers < 1 || m.hidden_size < 1 || m.num_attention_heads < 1 || m.num_kv_heads < 1 ||
      m.hidden_size % m.num_attention_heads != 0 || m.num_attention_heads % m.num_kv_heads != 0)
    throw InputError(v.where(), "model", v.label(),
                     "consistent shapes (heads divide the hidden size)");
  m.name = v.label();
  return m;
}

std::string required_text(const TableSpec& s, const ValueRef& ref, const RowValues& v,
                          const char* key) {
  const auto text = v.get(ref);
  if (!text) throw InputError(s.path, key, "<not given>", "a value for every row");
  return *text;
}

// Training keys as a job would write them, over the stack's defaults.
TrainingSpec row_training(const TableSpec& s, const RowValues& v, const ReferenceContext& ctx,
                          const ModelSpec& model) {
  TrainingSpec t;
  t.framework = load_stack(ctx, required_text(s, s.framework, v, "framework"), s.path);
  apply_framework_defaults(t);
  YAML::Node node(YAML::NodeType::Map);
  if (s.dtype.given()) node["dtype"] = required_text(s, s.dtype, v, "dtype");
  for (const auto& [key, ref] : s.training)
    if (const auto text = v.get(ref)) node[key] = *text;
  read_training_keys(YamlMap(node, v.where(), "training"), model.seq_length, t);
  return t;
}

// The candidate layouts: given knobs fixed, unpublished ones from their search lists.
std::vector<ParallelConfig> candidates(const TableSpec& s, const RowValues& v,
                                       const SweepSpec& spec, size_t measure) {
  std::map<std::string, std::string> fixed;
  for (const auto& [key, ref] : s.layout)
    if (const auto text = v.get(ref)) fixed[key] = *text;
  if (!s.cases_column.empty()) {
    const std::string& c =
        v.get(ValueRef{ValueRef::From::Column, "", {s.cases_column}, {}}).value_or("");
    auto it = s.cases.find(c);
    if (it == s.cases.end()) throw InputError(v.where(), s.cases_column, c, "one of the cases");
    for (const auto& [k, x] : it->second) fixed[k] = x;
  }
  if (measure < s.measures.size())
    for (const auto& [key, ref] : s.measures[measure].layout)
      if (const auto text = v.get(ref)) fixed[key] = *text;
  std::vector<std::pair<std::string, std::vector<std::string>>> axes;
  for (const auto& [key, values] : s.search)
    if (!fixed.count(key)) axes.emplace_back(key, values);
  std::vector<ParallelConfig> out;
  std::vector<size_t> at(axes.size(), 0);
  while (true) {
    ParallelConfig c;
    std::optional<int64_t> gpus;
    auto apply = [&](const std::string& k, const std::string& x) {
      if (k == "gpus")
        gpus = v.integer(k, x);
      else
        set_knob(c, k, x, v);
    };
    for (const auto& [k, x] : fixed) apply(k, x);
    for (size_t i = 0; i < axes.size(); ++i) apply(axes[i].first, axes[i].second[at[i]]);
    if (gpus) {
      c.dp = static_cast<int32_t>(data_parallel_degree(*gpus, c.tp, c.pp, c.cp));
    }
    if (c.tp == 1) c.sp = false;  // sequence parallelism is a no-op without TP
    if (c.dp >= 1 && !illegal_reason(spec, c) && std::find(out.begin(), out.end(), c) == out.end())
      out.push_back(c);
    size_t k = 0;
    while (k < axes.size() && ++at[k] == axes[k].second.size()) at[k++] = 0;
    if (k == axes.size()) break;
  }
  return out;
}

}  // namespace

std::vector<PreparedRow> prepare_rows(const TableSpec& s, const ReferenceContext& ctx) {
  const CsvTable t(s.csv);
  std::optional<CsvTable> settings;
  if (!s.settings_file.empty()) settings.emplace(s.settings_file);
  RowValues v(s, t, settings ? &*settings : nullptr);
  std::vector<PreparedRow> rows;
  for (size_t i = 0; i < t.rows(); ++i) {
    v.select(i);
    PreparedRow r;
    r.csv_row = i;
    r.label = v.label();
    SweepSpec& spec = r.spec;
    spec.name = s.name;
    spec.model = s.model.given() ? named_model(s, v, ctx) : model_from_columns(s, v);
    spec.training = row_training(s, v, ctx, spec.model);
    spec.hardware.push_back(
        load_hardware(ctx, required_text(s, s.hardware, v, "hardware"), s.path));
    spec.network = load_network(ctx, required_text(s, s.network, v, "network"), s.path);
    spec.search.allow_tp_across_nodes = s.allow_tp_across_nodes;
    spec.search.allow_uneven_pp = s.allow_uneven_pp;
    r.candidates = candidates(s, v, spec, s.measures.size());
    if (s.kind == "memory")
      for (size_t k = 0; k < s.measures.size(); ++k)
        r.measure_candidates.push_back(candidates(s, v, spec, k));
    if (!s.status_column.empty()) r.run_ok = t.text(i, s.status_column) == s.status_ok;
    for (const Measure& m : s.measures) {
      const std::string& x = t.text(i, m.column);
      r.measured.push_back(x.empty() ? std::numeric_limits<double>::quiet_NaN()
                                     : t.number(i, m.column));
    }
    rows.push_back(std::move(r));
  }
  return rows;
}

}  // namespace rapid
