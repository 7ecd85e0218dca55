#include "calibrate_command.hpp"

#include <fmt/format.h>

#include <cmath>
#include <ctime>
#include <filesystem>
#include <fstream>

#include "rapid/common/error.hpp"
#include "rapid/cost/calibration.hpp"
#include "rapid/cost/calibration_yaml.hpp"
#include "rapid/io/output_check.hpp"
#include "rapid/spec/yaml_reader.hpp"

namespace fs = std::filesystem;

namespace rapid {

void add_calibrate_options(CLI::App& cmd, CalibrateOptions& o) {
  cmd.add_option("--hardware", o.hardware, "hardware YAML to calibrate")->required();
  cmd.add_option("--network", o.network, "network YAML (required for collective rows)");
  cmd.add_option("--measurements", o.measurements,
                 "CSV: op, shape, dtype and time_s, tflops or busbw_gbps")
      ->required();
  cmd.add_option("-o,--output", o.output, "calibrated hardware YAML to write")->required();
  cmd.add_option("--network-out", o.network_output,
                 "calibrated network YAML (default: <network stem>.calibrated.yaml next to -o)");
  cmd.add_option("--params", o.params, "parameters to fit (default: all the rows inform)")
      ->delimiter(',');
}

namespace {

std::string today() {
  std::time_t now = std::time(nullptr);
  std::tm tm{};
  localtime_r(&now, &tm);
  char buf[16];
  std::strftime(buf, sizeof buf, "%Y-%m-%d", &tm);
  return buf;
}

// Writes `text` next to `path` as a temporary file (renamed by commit_files once every
// output is written), so that no output is left half-done.
std::string write_temp(const std::string& path, const std::string& text,
                       const std::string& option) {
  const std::string tmp = temporary_path_beside(path);
  std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
  out << text;
  out.close();  // the last write and the close checked too (a full disk fails there)
  if (!out) {
    std::error_code ec;
    fs::remove(tmp, ec);
    throw InputError("<command line>", option, path,
                     "a writable file path with room for the file (disk full?)");
  }
  return tmp;
}

void commit_file(const std::string& tmp, const std::string& path, const std::string& option) {
  std::error_code ec;
  fs::rename(tmp, path, ec);
  if (ec) {
    fs::remove(tmp, ec);
    throw InputError("<command line>", option, path, "a writable file path");
  }
}

void check_output_dir(const std::string& path, const std::string& option) {
  const fs::path dir = fs::path(path).parent_path();
  std::error_code ec;
  if (!dir.empty() && !fs::is_directory(dir, ec))
    throw InputError("<command line>", option, path, "a path in an existing directory");
  if (fs::exists(fs::symlink_status(path, ec)) &&
      !fs::is_regular_file(fs::symlink_status(path, ec)))
    throw InputError("<command line>", option, path,
                     "a regular file path (not a directory or device)");
}

// The written file must read back to the fitted values (a bug otherwise).
void check_round_trip(const CalibrationResult& r, const HardwareSpec& hw, const NetworkSpec& net,
                      ParamFile file) {
  for (const FittedParam& f : r.fitted) {
    if (f.param->file != file) continue;
    const double v = f.param->get(hw, net);
    RAPID_ASSERT(std::abs(v - f.after) <= 1e-5 * std::abs(f.after) + 1e-15,
                 "calibrated file reads back the fitted value");
  }
}

std::string summary(const CalibrationResult& r, const std::string& measurements) {
  std::string per_op;
  for (const OpError& e : r.errors)
    per_op += fmt::format("{}{} {:.1f}% -> {:.1f}%", per_op.empty() ? "" : ", ",
                          measured_op_name(e.op), e.mape_before, e.mape_after);
  return fmt::format(
      "calibrated by rapid calibrate from {} on {}: MAPE before {:.1f}%, after "
      "{:.1f}% ({})",
      fs::path(measurements).filename().string(), today(), r.mape_before, r.mape_after, per_op);
}

}  // namespace

int run_calibrate(const CalibrateOptions& o) {
  const std::string hw_text = read_text_file(o.hardware);
  const HardwareSpec hw = parse_hardware(load_yaml_text(hw_text, o.hardware), o.hardware);
  std::string net_text;
  NetworkSpec net;
  if (!o.network.empty()) {
    net_text = read_text_file(o.network);
    net = parse_network(load_yaml_text(net_text, o.network), o.network);
  }
  const std::vector<Measurement> rows = read_measurements(o.measurements);
  for (const Measurement& m : rows)
    if (m.op != MeasuredOp::Gemm && o.network.empty())
      throw InputError(o.measurements, "op", measured_op_name(m.op),
                       fmt::format("gemm rows only without --network (line {})", m.line));
  // A GEMM cannot beat the tensor-core peak: such a row is a unit or shape mistake.
  for (const Measurement& m : rows) {
    if (m.op != MeasuredOp::Gemm) continue;
    const double flops =
        2.0 * static_cast<double>(m.m) * static_cast<double>(m.n) * static_cast<double>(m.k);
    const double rate = m.quantity == MeasuredQuantity::Tflops ? m.value * 1e12 : flops / m.value;
    const double peak = hw.tensor_peak_FLOPs[static_cast<int>(m.dtype)];
    if (peak > 0 && rate > peak)
      throw InputError(o.measurements, fmt::format("line {}", m.line), m.label(),
                       fmt::format("at most the {} tensor peak of {} ({:.1f} TFLOP/s)",
                                   dtype_name(m.dtype), hw.name, peak / 1e12));
  }
  check_output_dir(o.output, "-o");
  if (!o.network_output.empty()) check_output_dir(o.network_output, "--network-out");

  const CalibrationResult r = calibrate(hw, net, rows, o.params);
  // An underdetermined fit is refused, not written: the values along the directions the rows
  // do not see would be wherever the minimizer stopped (docs/collectives.md sec 8).
  for (const Underdetermined& u : r.underdetermined) {
    std::string names;
    for (const CalibrationParam* p : u.params)
      names += (names.empty() ? "" : ", ") + std::string(p->name);
    throw InputError(
        o.measurements, "rows",
        fmt::format("{} {} row{}", u.rows, u.gemm ? "gemm" : "collective", u.rows == 1 ? "" : "s"),
        fmt::format("rows that determine the {} parameters they fit ({}), but they determine {}: "
                    "add rows of other {}, or fit fewer with --params",
                    u.params.size(), names, u.rank, u.gemm ? "shapes" : "sizes or GPU counts"));
  }
  fmt::print("{} rows from {}\n", rows.size(), o.measurements);
  fmt::print("  {:<22} {:>12} {:>12}\n", "parameter", "before", "after");
  for (const FittedParam& f : r.fitted)
    fmt::print("  {:<22} {:>12} {:>12}\n", f.param->name, format_param_value(*f.param, f.before),
               format_param_value(*f.param, f.after));
  fmt::print("  {:<22} {:>5} {:>12} {:>12}\n", "MAPE", "rows", "before", "after");
  for (const OpError& e : r.errors)
    fmt::print("  {:<22} {:>5} {:>11.1f}% {:>11.1f}%\n", measured_op_name(e.op), e.rows,
               e.mape_before, e.mape_after);
  fmt::print("  {:<22} {:>5} {:>11.1f}% {:>11.1f}%\n", "all", rows.size(), r.mape_before,
             r.mape_after);

  // Build and check every output before writing any.
  const std::string comment = summary(r, o.measurements);
  const std::string hw_out = calibrated_hardware_yaml(hw_text, o.hardware, r, comment);
  check_round_trip(r, parse_hardware(load_yaml_text(hw_out, o.output), o.output), net,
                   ParamFile::Hardware);
  bool net_fitted = false;
  for (const FittedParam& f : r.fitted)
    net_fitted = net_fitted || f.param->file == ParamFile::Network;
  std::string net_path, net_out;
  if (net_fitted) {
    net_path = o.network_output.empty()
                   ? (fs::path(o.output).parent_path() /
                      (fs::path(o.network).stem().string() + ".calibrated.yaml"))
                         .string()
                   : o.network_output;
    net_out = calibrated_network_yaml(net_text, o.network, r, comment);
    check_round_trip(r, hw, parse_network(load_yaml_text(net_out, net_path), net_path),
                     ParamFile::Network);
  }
  if (net_fitted) check_output_dir(net_path, "--network-out");
  const std::string hw_tmp = write_temp(o.output, hw_out, "-o");
  const std::string net_tmp = net_fitted ? write_temp(net_path, net_out, "--network-out") : "";
  commit_file(hw_tmp, o.output, "-o");
  fmt::print("wrote {}\n", o.output);
  if (net_fitted) {
    commit_file(net_tmp, net_path, "--network-out");
    fmt::print("wrote {}\n", net_path);
  }
  return 0;
}

}  // namespace rapid
