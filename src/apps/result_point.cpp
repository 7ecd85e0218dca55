#include "apps/result_point.hpp"

#include <fmt/format.h>

#include <cmath>
#include <filesystem>
#include <iterator>

#include "rapid/common/error.hpp"
#include "rapid/io/stored_row.hpp"
#include "rapid/spec/yaml_reader.hpp"

namespace rapid {

ResultPoint load_result_point(const std::string& result, int64_t point) {
  const StoredRow row =
      read_stored_row(result, point,
                      {"tp", "pp", "cp", "ep", "etp", "vpp", "mbs", "zero_stage", "sp", "recompute",
                       "recompute_method", "recompute_num_layers", "cpu_offload_layers", "num_gpus",
                       "hardware_index", "scenario", "step_time_s", "fidelity"});
  if (row.job_yaml.empty())
    throw InputError(result, "attribute job_yaml", "missing",
                     "a result file that records its job (rapid-sweep writes it)");
  ResultPoint rp;
  rp.spec = load_sweep_spec_text(row.job_path, row.job_yaml);
  auto v = [&](const char* c) { return static_cast<int>(std::lround(row.values.at(c))); };
  LayoutOptions& o = rp.layout;
  o.tp = v("tp"), o.pp = v("pp"), o.ep = v("ep"), o.gpus = v("num_gpus");
  o.hardware = v("hardware_index");
  if (rp.spec.mode == JobMode::Training) {
    o.cp = v("cp"), o.etp = v("etp"), o.vpp = v("vpp"), o.mbs = v("mbs"), o.zero = v("zero_stage");
    o.sp = v("sp") != 0;
    const int rc = v("recompute"), rm = v("recompute_method");
    if (rc < 0 || rc >= static_cast<int>(std::size(kRecomputeNames)) || rm < 0 ||
        rm >= static_cast<int>(std::size(kRecomputeMethodNames)))
      throw InputError(result, "/points/recompute", fmt::format("codes {} {}", rc, rm),
                       "recompute and recompute_method codes of the file's enums (damaged file)");
    o.recompute = kRecomputeNames[rc];
    o.recompute_method = kRecomputeMethodNames[rm];
    o.recompute_layers = v("recompute_num_layers");
    o.offload_layers = v("cpu_offload_layers");
    rp.scenario = v("scenario");
  }
  const double step = row.values.at("step_time_s");
  rp.lines.push_back(fmt::format(
      "result      point {} of {} (row {}): as swept, {}{}", point, result, row.row,
      std::isfinite(step) ? fmt::format("step {:.4f} s", step) : std::string("no step time"),
      row.values.at("fidelity") > 0 ? " (des)" : " (analytical)"));
  // What differs from the sweep's inputs: said, and the prediction uses today's.
  namespace fs = std::filesystem;
  if (!fs::exists(row.job_path))
    rp.lines.push_back(fmt::format(
        "note        {} no longer exists: the job as the sweep read it (stored in the file) is "
        "used",
        row.job_path));
  else if (read_text_file(row.job_path) != row.job_yaml)
    rp.lines.push_back(
        fmt::format("note        {} changed since the sweep: the job as the sweep read it is used",
                    row.job_path));
  if (!row.model_yaml.empty() && rp.spec.model_source.yaml != row.model_yaml)
    rp.lines.push_back(
        fmt::format("note        the model config {} changed since the sweep: "
                    "today's is used (the row may differ)",
                    rp.spec.model_source.path));
  if (!row.network_yaml.empty() && rp.spec.network_source.yaml != row.network_yaml)
    rp.lines.push_back(
        fmt::format("note        the network config {} changed since the sweep: "
                    "today's is used (the row may differ)",
                    rp.spec.network_source.path));
  return rp;
}

}  // namespace rapid
