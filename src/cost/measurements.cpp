// Measurements CSV for `rapid calibrate` (include/rapid/cost/calibration.hpp) and the
// model's prediction of one row through the public cost API.
#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <sstream>

#include "rapid/common/error.hpp"
#include "rapid/cost/calibration.hpp"
#include "rapid/cost/collective_cost.hpp"
#include "rapid/cost/compute_cost.hpp"
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

std::string trim(const std::string& s) {
  const size_t b = s.find_first_not_of(" \t");
  if (b == std::string::npos) return "";
  return s.substr(b, s.find_last_not_of(" \t") - b + 1);
}

std::vector<std::string> split(const std::string& line, char sep) {
  std::vector<std::string> out;
  std::string field;
  std::istringstream ss(line);
  while (std::getline(ss, field, sep)) out.push_back(trim(field));
  if (!line.empty() && line.back() == sep) out.emplace_back();
  return out;
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

// Where a row is: file, line, and the header for column names.
struct Cursor {
  const std::string& file;
  const std::vector<std::string>& header;
  int line;
  [[noreturn]] void fail(size_t col, const std::string& value, const std::string& expected) const {
    const std::string key = col < header.size() ? header[col] : fmt::format("column {}", col + 1);
    throw InputError(file, key, value, expected, line - 1, static_cast<int>(col));
  }
};

const std::vector<std::string> kColumns = {"op",     "shape",      "dtype",  "time_s",
                                           "tflops", "busbw_gbps", "source", "note"};

size_t column_of(const std::vector<std::string>& header, const std::string& name) {
  for (size_t i = 0; i < header.size(); ++i)
    if (header[i] == name) return i;
  return header.size();
}

Measurement parse_row(const Cursor& at, const std::vector<std::string>& f) {
  const auto& h = at.header;
  Measurement r;
  r.line = at.line;
  const size_t c_op = column_of(h, "op"), c_shape = column_of(h, "shape");
  const size_t c_dtype = column_of(h, "dtype");
  const std::string ops[] = {"gemm", "all_reduce", "all_gather", "reduce_scatter"};
  int op = -1;
  for (int i = 0; i < kNumMeasuredOps; ++i)
    if (f[c_op] == ops[i]) op = i;
  if (op < 0) at.fail(c_op, f[c_op], "gemm, all_reduce, all_gather or reduce_scatter");
  r.op = static_cast<MeasuredOp>(op);
  const bool gemm = r.op == MeasuredOp::Gemm;

  int dt = -1;
  for (int i = 0; i < kNumDTypes; ++i)
    if (f[c_dtype] == dtype_name(static_cast<DType>(i))) dt = i;
  if (dt < 0) at.fail(c_dtype, f[c_dtype], "fp32, tf32, fp16, bf16 or fp8");
  r.dtype = static_cast<DType>(dt);

  const std::vector<std::string> dims = split(f[c_shape], 'x');
  std::vector<int64_t> v(dims.size());
  bool ok = true;
  for (size_t i = 0; i < dims.size(); ++i) ok = ok && parse_int(dims[i], v[i]);
  if (gemm) {
    if (!ok || v.size() != 3) at.fail(c_shape, f[c_shape], "MxNxK with integers from 1 to 2^40");
    r.m = v[0], r.n = v[1], r.k = v[2];
  } else {
    if (!ok || v.size() < 2 || v.size() > 3 || v[1] * (v.size() == 3 ? v[2] : 1) < 2)
      at.fail(c_shape, f[c_shape], "BYTESxGPUS or BYTESxGPUSxNODES, at least 2 GPUs in all");
    r.bytes = static_cast<double>(v[0]);
    r.gpus_per_node = v[1];
    r.nodes = v.size() == 3 ? v[2] : 1;
  }

  // Exactly one value column filled.
  const std::pair<const char*, MeasuredQuantity> values[] = {
      {"time_s", MeasuredQuantity::TimeS},
      {"tflops", MeasuredQuantity::Tflops},
      {"busbw_gbps", MeasuredQuantity::BusbwGBps}};
  size_t filled = h.size();
  for (const auto& [name, q] : values) {
    const size_t c = column_of(h, name);
    if (c == h.size() || f[c].empty()) continue;
    if (filled != h.size()) at.fail(c, f[c], "one value per row (time_s, tflops or busbw_gbps)");
    filled = c;
    r.quantity = q;
    if (q == MeasuredQuantity::Tflops && !gemm) at.fail(c, f[c], "tflops on gemm rows only");
    if (q == MeasuredQuantity::BusbwGBps && gemm)
      at.fail(c, f[c], "busbw_gbps on collective rows only");
    if (!parse_positive(f[c], r.value)) at.fail(c, f[c], "a positive number");
  }
  if (filled == h.size()) {
    size_t first = h.size();
    for (const auto& [name, q] : values) first = std::min(first, column_of(h, name));
    at.fail(first, "", gemm ? "a time_s or tflops value" : "a time_s or busbw_gbps value");
  }
  return r;
}

}  // namespace

std::vector<Measurement> read_measurements(const std::string& path) {
  std::string text = read_text_file(path);
  if (text.rfind("\xEF\xBB\xBF", 0) == 0) text.erase(0, 3);  // UTF-8 byte order mark
  std::istringstream in(text);
  std::vector<std::string> header;
  std::vector<Measurement> rows;
  std::string line;
  for (int n = 1; std::getline(in, line); ++n) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    const std::string t = trim(line);
    if (t.empty() || t[0] == '#') continue;
    if (header.empty()) {
      header = split(line, ',');
      for (size_t c = 0; c < header.size(); ++c) {
        bool known = false;
        for (const auto& k : kColumns) known = known || header[c] == k;
        if (!known || column_of(header, header[c]) != c)
          throw InputError(path, fmt::format("column {}", c + 1), header[c],
                           "a distinct column of op, shape, dtype, time_s, tflops, busbw_gbps, "
                           "source, note",
                           n - 1, static_cast<int>(c));
      }
      bool value_column = false;
      for (const char* k : {"time_s", "tflops", "busbw_gbps"})
        value_column = value_column || column_of(header, k) != header.size();
      for (const char* k : {"op", "shape", "dtype", "time_s, tflops or busbw_gbps"})
        if ((k[0] == 't' && !value_column) ||
            (k[0] != 't' && column_of(header, k) == header.size()))
          throw InputError(path, k, "<missing column>",
                           "columns op, shape, dtype and time_s, tflops or busbw_gbps", n - 1, 0);
      continue;
    }
    const std::vector<std::string> f = split(line, ',');
    const Cursor at{path, header, n};
    if (f.size() != header.size())
      at.fail(std::min(f.size(), header.size()), line,
              fmt::format("{} comma-separated fields", header.size()));
    rows.push_back(parse_row(at, f));
  }
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
