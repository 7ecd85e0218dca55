// Measurements CSV for `rapid calibrate` (include/rapid/cost/calibration.hpp) and the
// model's prediction of one row through the public cost API.
#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cmath>

#include "rapid/common/error.hpp"
#include "rapid/cost/calibration.hpp"
#include "rapid/cost/collective_cost.hpp"
#include "rapid/cost/compute_cost.hpp"
#include "rapid/spec/csv_table.hpp"
#include "rapid/spec/yaml_reader.hpp"

namespace rapid {

const char* measured_op_name(MeasuredOp op) {
  static const char* names[] = {"gemm", "all_reduce", "all_gather", "reduce_scatter"};
  return names[static_cast<int>(op)];
}

std::string Measurement::label() const {
  if (op == MeasuredOp::Gemm) return fmt::format("gemm {}x{}x{} {}", m, n, k, dtype_name(dtype));
  if (nodes > 1)
    return fmt::format("{} {:.0f}x{}x{}", measured_op_name(op), bytes, gpus_per_node, nodes);
  return fmt::format("{} {:.0f}x{}", measured_op_name(op), bytes, gpus_per_node);
}

namespace {

std::vector<std::string> split(const std::string& s, char sep) {
  std::vector<std::string> out;
  size_t b = 0;
  while (true) {
    const size_t e = s.find(sep, b);
    std::string part = s.substr(b, e == std::string::npos ? std::string::npos : e - b);
    const size_t f = part.find_first_not_of(" \t"), l = part.find_last_not_of(" \t");
    out.push_back(f == std::string::npos ? "" : part.substr(f, l - f + 1));
    if (e == std::string::npos) return out;
    b = e + 1;
  }
}

// Positive integers up to 2^40 (GEMM dimensions, bytes, GPU counts): larger ones would
// overflow the products the models form.
bool parse_int(const std::string& s, int64_t& v) {
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  return ec == std::errc() && end == s.data() + s.size() && v >= 1 && v <= (int64_t{1} << 40);
}

bool parse_positive(const std::string& s, double& v) {
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  return ec == std::errc() && end == s.data() + s.size() && std::isfinite(v) && v > 0;
}

const std::vector<std::string> kColumns = {"op",     "shape",      "dtype",  "time_s",
                                           "tflops", "busbw_gbps", "source", "note"};
const char* const kValueColumns[] = {"time_s", "tflops", "busbw_gbps"};

Measurement parse_row(const CsvTable& t, size_t i) {
  Measurement r;
  r.line = t.line(i);
  const std::string& op_text = t.text(i, "op");
  const std::string ops[] = {"gemm", "all_reduce", "all_gather", "reduce_scatter"};
  int op = -1;
  for (int k = 0; k < kNumMeasuredOps; ++k)
    if (op_text == ops[k]) op = k;
  if (op < 0) t.fail(i, "op", op_text, "gemm, all_reduce, all_gather or reduce_scatter");
  r.op = static_cast<MeasuredOp>(op);
  const bool gemm = r.op == MeasuredOp::Gemm;

  const std::string& dtype = t.text(i, "dtype");
  int dt = -1;
  for (int k = 0; k < kNumDTypes; ++k)
    if (dtype == dtype_name(static_cast<DType>(k))) dt = k;
  if (dt < 0) t.fail(i, "dtype", dtype, "fp32, tf32, fp16, bf16 or fp8");
  r.dtype = static_cast<DType>(dt);

  const std::string& shape = t.text(i, "shape");
  const std::vector<std::string> dims = split(shape, 'x');
  std::vector<int64_t> v(dims.size());
  bool ok = true;
  for (size_t k = 0; k < dims.size(); ++k) ok = ok && parse_int(dims[k], v[k]);
  if (gemm) {
    if (!ok || v.size() != 3) t.fail(i, "shape", shape, "MxNxK with integers from 1 to 2^40");
    r.m = v[0], r.n = v[1], r.k = v[2];
  } else {
    if (!ok || v.size() < 2 || v.size() > 3 || v[1] * (v.size() == 3 ? v[2] : 1) < 2)
      t.fail(i, "shape", shape, "BYTESxGPUS or BYTESxGPUSxNODES, at least 2 GPUs in all");
    r.bytes = static_cast<double>(v[0]);
    r.gpus_per_node = v[1];
    r.nodes = v.size() == 3 ? v[2] : 1;
  }

  // Exactly one value column filled.
  const MeasuredQuantity quantities[] = {MeasuredQuantity::TimeS, MeasuredQuantity::Tflops,
                                         MeasuredQuantity::BusbwGBps};
  const char* filled = nullptr;
  for (int k = 0; k < 3; ++k) {
    const char* name = kValueColumns[k];
    if (!t.has_column(name) || t.text(i, name).empty()) continue;
    const std::string& value = t.text(i, name);
    if (filled) t.fail(i, name, value, "one value per row (time_s, tflops or busbw_gbps)");
    filled = name;
    r.quantity = quantities[k];
    if (r.quantity == MeasuredQuantity::Tflops && !gemm)
      t.fail(i, name, value, "tflops on gemm rows only");
    if (r.quantity == MeasuredQuantity::BusbwGBps && gemm)
      t.fail(i, name, value, "busbw_gbps on collective rows only");
    if (!parse_positive(value, r.value)) t.fail(i, name, value, "a positive number");
  }
  if (!filled) {
    const char* first = "time_s";
    for (const char* name : kValueColumns)
      if (t.has_column(name)) {
        first = name;
        break;
      }
    t.fail(i, first, "", gemm ? "a time_s or tflops value" : "a time_s or busbw_gbps value");
  }
  return r;
}

}  // namespace

std::vector<Measurement> read_measurements(const std::string& path) {
  return read_measurements(CsvTable(path));
}

std::vector<Measurement> read_measurements(const CsvTable& t) {
  const std::string& path = t.path();
  const std::vector<std::string>& header = t.header();
  for (size_t c = 0; c < header.size(); ++c) {
    bool known = false;
    for (const auto& k : kColumns) known = known || header[c] == k;
    if (!known)
      throw InputError(path, fmt::format("column {}", c + 1), header[c],
                       "a column of op, shape, dtype, time_s, tflops, busbw_gbps, source, note",
                       t.line_of_header() - 1, static_cast<int>(c));
  }
  bool value_column = false;
  for (const char* k : kValueColumns) value_column = value_column || t.has_column(k);
  for (const char* k : {"op", "shape", "dtype"})
    if (!t.has_column(k))
      throw InputError(path, k, "<missing column>",
                       "columns op, shape, dtype and time_s, tflops or busbw_gbps",
                       t.line_of_header() - 1, 0);
  if (!value_column)
    throw InputError(path, "time_s, tflops or busbw_gbps", "<missing column>",
                     "columns op, shape, dtype and time_s, tflops or busbw_gbps",
                     t.line_of_header() - 1, 0);
  if (t.rows() > kMaxMeasurements)
    throw InputError(path, "<rows>", fmt::format("{} rows", t.rows()),
                     fmt::format("at most {} measurements", kMaxMeasurements));
  std::vector<Measurement> rows;
  for (size_t i = 0; i < t.rows(); ++i) rows.push_back(parse_row(t, i));
  if (rows.empty()) throw InputError(path, "<rows>", "", "a header and at least one measurement");
  return rows;
}

double predict_measurement(const Measurement& row, const HardwareSpec& hw, const NetworkSpec& net) {
  if (row.op == MeasuredOp::Gemm) {
    // The op the workload builds for a GEMM (src/workload/template_builder.cpp make_gemm).
    Op op;
    op.name = "gemm";
    op.kind = OpKind::Gemm;
    op.m = row.m, op.n = row.n, op.k = row.k, op.batch = 1;
    const double m = static_cast<double>(row.m), n = static_cast<double>(row.n);
    const double k = static_cast<double>(row.k);
    op.flops = 2.0 * m * n * k;
    op.bytes = dtype_bytes(row.dtype) * (m * k + k * n + m * n);
    const double t = ComputeCost(hw, row.dtype).time(op);
    return row.quantity == MeasuredQuantity::Tflops ? op.flops / t / 1e12 : t;
  }
  const CollectiveKind kinds[] = {CollectiveKind::None, CollectiveKind::AllReduce,
                                  CollectiveKind::AllGather, CollectiveKind::ReduceScatter};
  const CollectiveKind kind = kinds[static_cast<int>(row.op)];
  const GroupShape g{row.gpus_per_node * row.nodes, row.gpus_per_node, row.nodes};
  const CollectiveCost c(hw, net);
  return row.quantity == MeasuredQuantity::BusbwGBps ? c.busbw_Bps(kind, row.bytes, g) / 1e9
                                                     : c.time(kind, row.bytes, g);
}

}  // namespace rapid
