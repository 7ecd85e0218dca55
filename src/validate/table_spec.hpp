// A published table described by data (docs/architecture.md "Validation"): data/reference/NAME.yaml
// beside NAME.csv says what the table measured, on which GPU, network and software stack,
// which columns hold the model, the layout and the measurement, which knobs the publisher
// did not give (searched for the fastest feasible setting, as publishers tune their runs),
// and where it was published. One loop (table_runner.hpp) predicts every table from these
// descriptions; docs/validation.md lists the schema.
#pragma once

#include <map>
#include <string>
#include <vector>

namespace rapid {

/// Where a value comes from: a literal, a column of the table (its text mapped through
/// `values` when given), a column of the row's run-settings row, or the product of
/// columns. An empty field is "not given": the default applies.
struct ValueRef {
  enum class From { None, Literal, Column, Settings, Product };
  From from = From::None;
  std::string literal;
  std::vector<std::string> columns;
  std::map<std::string, std::string> values;  ///< field text -> literal
  bool given() const { return from != From::None; }
};

/// One measured column and the quantity the model predicts for it.
struct Measure {
  std::string column;    ///< the measured value
  std::string quantity;  ///< training_quantity / memory_quantity in table_runner.cpp
  std::string unit;      ///< for printing
  std::map<std::string, ValueRef> layout;  ///< knob overrides for this measure only
  std::string stage = "worst";             ///< memory: first | middle | worst
};

struct TableSpec {
  std::string path;  ///< the description file
  std::string csv;   ///< the table (path)
  std::string name;  ///< the table's file name
  std::string title, source;
  /// The source it belongs to: tables of one publisher's runs (one cluster, one software
  /// release) share it and are held out together by the cross-validation. Default: the
  /// description's file name without extension.
  std::string source_id;
  std::string kind = "training";  ///< training | memory | gemm | collective | attention | inference
  std::string suite = "default";  ///< default (rapid validate) | hf-ultrascale
  bool end_to_end = false;        ///< fitted and cross-validated (--fit-end-to-end)
  ValueRef hardware, network, framework, dtype;
  std::string label;  ///< row label, "{column}" replaced by the row's field

  // Training and memory tables.
  ValueRef model;            ///< a named model config (configs/models)
  std::string architecture;  ///< or built from columns: gpt | llama
  std::map<std::string, ValueRef> model_fields;
  std::vector<std::string> fill_match;  ///< empty model fields filled from a row matching these
  std::map<std::string, std::string> fill_where;  ///< ... whose columns have these values
  std::map<std::string, ValueRef> training;       ///< training keys (as in a job)
  std::map<std::string, ValueRef> layout;         ///< parallel knobs
  std::string cases_column;                       ///< a column naming a set of knobs
  std::map<std::string, std::map<std::string, std::string>> cases;
  std::map<std::string, std::vector<std::string>> search;  ///< unpublished knobs: candidates
  bool allow_tp_across_nodes = false, allow_uneven_pp = false;
  std::string settings_file, settings_key;  ///< run settings, matched on a column
  std::string status_column, status_ok;     ///< runs that failed (out of memory) are rows too

  // Inference tables: the serving stack (configs/serving) and the request mix and load
  // (input_tokens, output_tokens, concurrency); `layout` gives tp, pp, ep and dp (replicas).
  ValueRef stack;
  std::map<std::string, ValueRef> serving;
  /// `fidelity: des`: rows predicted by the serving simulation (a table of medians needs
  /// it); `analytical` (the default): by the closed form.
  bool simulate = false;

  // Kernel tables: shape fields (gemm m n k; collective bytes gpus_per_node nodes;
  // attention impl direction head_dim seq batch heads causal).
  std::map<std::string, ValueRef> shape;

  std::vector<Measure> measures;
};

/// Reads one description. Throws InputError naming the file and key.
TableSpec load_table_spec(const std::string& path);

/// Every description (*.yaml) in `dir`, in file-name order.
std::vector<TableSpec> load_table_specs(const std::string& dir);

}  // namespace rapid
