// `import rapid` (python/rapid/__init__.py wraps this extension, rapid._core): the same
// core as the programs, in the calling process. predict() is `rapid predict`'s evaluation of
// one layout, every result column by name (result_columns(): the table that also drives the
// HDF5, CSV and netCDF output); evaluate() many layouts, sweep() every point of a job's
// search, both as columns (a dict of lists the wrapper turns into a pandas DataFrame).
// Bad input raises rapid.InputError (a ValueError) with the message the programs print.
#include <fmt/format.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <string>
#include <vector>

#include "apps/layout_options.hpp"
#include "rapid/common/error.hpp"
#include "rapid/common/install_dirs.hpp"
#include "rapid/common/suggest.hpp"
#include "rapid/common/version.hpp"
#include "rapid/eval/point_evaluator.hpp"
#include "rapid/io/result_schema.hpp"
#include "rapid/sweep/enumerator.hpp"
#include "rapid/workload/workload.hpp"

namespace py = pybind11;

namespace rapid {
namespace {

/// The layout keys a dict may give (the flags of `rapid predict` without their dashes).
const std::vector<std::string> kLayoutKeys = {"tp",
                                              "pp",
                                              "cp",
                                              "ep",
                                              "etp",
                                              "vpp",
                                              "mbs",
                                              "zero",
                                              "sp",
                                              "recompute",
                                              "recompute_method",
                                              "recompute_num_layers",
                                              "cpu_offload_layers",
                                              "gpus",
                                              "hardware_index"};

LayoutOptions layout_of(const py::dict& d) {
  LayoutOptions o;
  for (const auto& [k, v] : d) {
    const std::string key = py::str(k);
    auto integer = [&]() -> int {
      if (!py::isinstance<py::int_>(v) || py::isinstance<py::bool_>(v))
        throw InputError("<layout>", key, py::str(py::repr(v)), "an integer");
      return v.cast<int>();
    };
    if (key == "tp")
      o.tp = integer();
    else if (key == "pp")
      o.pp = integer();
    else if (key == "cp")
      o.cp = integer();
    else if (key == "ep")
      o.ep = integer();
    else if (key == "etp")
      o.etp = integer();
    else if (key == "vpp")
      o.vpp = integer();
    else if (key == "mbs")
      o.mbs = integer();
    else if (key == "zero")
      o.zero = integer();
    else if (key == "gpus")
      o.gpus = integer();
    else if (key == "hardware_index")
      o.hardware = integer();
    else if (key == "recompute_num_layers")
      o.recompute_layers = integer();
    else if (key == "cpu_offload_layers")
      o.offload_layers = integer();
    else if (key == "sp") {
      if (!py::isinstance<py::bool_>(v))
        throw InputError("<layout>", key, py::str(py::repr(v)), "True or False");
      o.sp = v.cast<bool>();
    } else if (key == "recompute" || key == "recompute_method") {
      if (!py::isinstance<py::str>(v))
        throw InputError("<layout>", key, py::str(py::repr(v)), "a name (a string)");
      (key == "recompute" ? o.recompute : o.recompute_method) = v.cast<std::string>();
    } else {
      const std::string hint = did_you_mean(suggest(key, kLayoutKeys));
      throw InputError(
          "<layout>", key, "<unknown key>",
          fmt::format("one of {}{}", list_names(kLayoutKeys, 20), hint.empty() ? "" : "; " + hint));
    }
  }
  return o;
}

Fidelity fidelity_of(const std::string& f) {
  if (f == "analytical") return Fidelity::Analytical;
  if (f == "des") return Fidelity::Des;
  throw InputError("<argument>", "fidelity", f, "analytical or des");
}

/// One column value as Python takes it (enums as their names).
py::object cell(const Column& c, double v) {
  if (c.type == ColumnType::Enum8) {
    const auto i = static_cast<size_t>(v);
    return py::str(i < c.enum_names.size() ? c.enum_names[i] : "?");
  }
  if (c.type == ColumnType::Float64) return py::float_(v);
  return py::int_(static_cast<int64_t>(v));
}

/// Rows gathered column by column (one Python list per column, made once).
class ColumnLists {
 public:
  ColumnLists() : lists_(result_columns().size() + 1) {}
  void add(const ResultRow& row) {
    const auto columns = result_columns();
    for (size_t c = 0; c < columns.size(); ++c)
      lists_[c].append(cell(columns[c], columns[c].get(row)));
    lists_.back().append(row.point.par.describe());
  }
  py::dict dict() const {
    py::dict out;
    const auto columns = result_columns();
    for (size_t c = 0; c < columns.size(); ++c) out[columns[c].name] = lists_[c];
    out["layout"] = lists_.back();
    return out;
  }

 private:
  std::vector<py::list> lists_;  ///< result_columns() in order, then `layout`
};

/// One row as a dict of scalars.
py::dict row_dict(const ResultRow& row) {
  py::dict out;
  for (const Column& c : result_columns()) out[c.name] = cell(c, c.get(row));
  out["layout"] = row.point.par.describe();
  return out;
}

/// The points a layout names: every serving load for a serving job, else one.
std::vector<Point> points_of(const SweepSpec& spec, const LayoutOptions& o,
                             const py::object& scenario) {
  Point p = resolve_layout(spec, o);
  if (!scenario.is_none()) {
    if (py::isinstance<py::int_>(scenario)) {
      const int s = scenario.cast<int>();
      if (s < 0 || s >= static_cast<int>(spec.scenarios.size()))
        throw InputError("<argument>", "scenario", std::to_string(s),
                         fmt::format("an index below {}", spec.scenarios.size()));
      p.scenario = s;
    } else {
      p.scenario = resolve_scenario(spec, py::str(scenario));
    }
  }
  std::vector<Point> pts;
  if (spec.mode == JobMode::Inference) {
    for (size_t k = 0; k < spec.serving.loads.size(); ++k) {
      p.load = static_cast<int32_t>(k);
      pts.push_back(p);
    }
  } else {
    pts.push_back(p);
  }
  return pts;
}

py::object predict(const std::string& job, const py::dict& layout, const std::string& fidelity,
                   const py::object& scenario) {
  const SweepSpec spec = load_sweep_spec(job);
  const Fidelity f = fidelity_of(fidelity);
  const PointEvaluator eval(spec, f);
  Workload w;
  py::list rows;
  for (const Point& p : points_of(spec, layout_of(layout), scenario)) {
    ResultRow row{p, {}};
    eval.evaluate_guarded(p, w, row.result, f);
    rows.append(row_dict(row));
  }
  if (spec.mode == JobMode::Training) return rows[0];
  return rows;  // one row per serving load
}

py::dict evaluate(const std::string& job, const std::vector<py::dict>& layouts,
                  const std::string& fidelity) {
  const SweepSpec spec = load_sweep_spec(job);
  const Fidelity f = fidelity_of(fidelity);
  const PointEvaluator eval(spec, f);
  Workload w;
  ColumnLists cols;
  for (const py::dict& d : layouts)
    for (const Point& p : points_of(spec, layout_of(d), py::none())) {
      ResultRow row{p, {}};
      eval.evaluate_guarded(p, w, row.result, f);
      cols.add(row);
    }
  return cols.dict();
}

py::dict sweep(const std::string& job, const std::string& fidelity, int64_t max_points) {
  const SweepSpec spec = load_sweep_spec(job);
  const Fidelity f = fidelity_of(fidelity);
  const Enumerator points(spec);
  if (points.size() > max_points)
    throw InputError(job, "search", fmt::format("{} points", points.size()),
                     fmt::format("at most max_points = {} in one process (rapid-sweep with "
                                 "MPI for more, then rapid.load)",
                                 max_points));
  const PointEvaluator eval(spec, f);
  Workload w;
  ColumnLists cols;
  for (int64_t i = 0; i < points.size(); ++i) {
    ResultRow row{points.decode(i), {}};
    eval.evaluate_guarded(row.point, w, row.result, f);
    cols.add(row);
  }
  return cols.dict();
}

py::list columns() {
  py::list out;
  for (const Column& c : result_columns())
    out.append(py::make_tuple(c.name, c.unit, c.description));
  return out;
}

}  // namespace
}  // namespace rapid

PYBIND11_MODULE(_core, m) {
  m.doc() = "rapid-sweep's core: predict, evaluate and sweep training and serving layouts";
  py::register_exception<rapid::InputError>(m, "InputError", PyExc_ValueError);
  m.def("predict", &rapid::predict, py::arg("job"), py::arg("layout"),
        py::arg("fidelity") = "analytical", py::arg("scenario") = py::none());
  m.def("evaluate", &rapid::evaluate, py::arg("job"), py::arg("layouts"),
        py::arg("fidelity") = "analytical");
  m.def("sweep", &rapid::sweep, py::arg("job"), py::arg("fidelity") = "analytical",
        py::arg("max_points") = 1000000);
  m.def("columns", &rapid::columns);
  m.def("version", [] { return std::string(rapid::version()); });
  m.def(
      "source_dir", [] { return std::string(RAPID_SOURCE_DIR); },
      "the source tree the module was built from (its analysis/ in a build tree)");
  m.def(
      "set_data_dir", [](const std::string& d) { rapid::set_installed_data_dir(d); },
      "where the installed configs live (<prefix>/share/rapid-sweep): the package sets it");
}
