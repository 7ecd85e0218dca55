#include "rapid/io/row_block.hpp"
#include "rapid/common/eval_context.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "rapid/common/error.hpp"

namespace rapid {

namespace {

// Column offsets (in bytes, after the header and the indices) per element: the prefix sums
// of the storage sizes, so column c of an n-row block starts at 24 + 8 n + n * prefix[c].
constexpr size_t kHeader = 3 * sizeof(int64_t);  // count, tag, stored-section bytes
constexpr size_t kStoredAt = 2 * sizeof(int64_t);
const std::vector<size_t>& prefix() {
  static const std::vector<size_t> p = [] {
    std::vector<size_t> out{0};
    for (const Column& c : result_columns()) out.push_back(out.back() + column_element_bytes(c));
    return out;
  }();
  return p;
}

template <typename T>
void store(std::byte* out, double v) {
  const T x = static_cast<T>(v);
  std::memcpy(out, &x, sizeof(T));
}

template <typename T>
double load(const std::byte* in) {
  T x;
  std::memcpy(&x, in, sizeof(T));
  return static_cast<double>(x);
}

}  // namespace

size_t column_element_bytes(const Column& c) {
  switch (c.type) {
    case ColumnType::Int32:
    case ColumnType::UInt32:
      return 4;
    case ColumnType::UInt8:
    case ColumnType::Enum8:
      return 1;
    case ColumnType::Float64:
      break;
  }
  return 8;
}

size_t RowBlock::row_bytes() {
  return sizeof(int64_t) + prefix().back();
}

int64_t RowBlock::tag() const {
  if (bytes_.empty()) return 0;
  int64_t t;
  std::memcpy(&t, bytes_.data() + sizeof(int64_t), sizeof t);
  return t;
}

void RowBlock::start(int64_t n, int64_t tag) {
  bytes_.resize(kHeader + static_cast<size_t>(n) * row_bytes());
  const int64_t stored = 0;
  std::memcpy(bytes_.data(), &n, sizeof n);
  std::memcpy(bytes_.data() + sizeof(int64_t), &tag, sizeof tag);
  std::memcpy(bytes_.data() + kStoredAt, &stored, sizeof stored);
}

RowBlock::RowBlock(ByteBuffer bytes) : bytes_(std::move(bytes)) {
  RAPID_ASSERT(
      bytes_.empty() ||
          (bytes_.size() >= kHeader &&
           bytes_.size() == kHeader + static_cast<size_t>(count()) * row_bytes() + stored_bytes()),
      "a row block of the schema's size");
}

size_t RowBlock::datasets() {
  return result_columns().size() + 2;
}

size_t RowBlock::dataset_element_bytes(size_t d) {
  const size_t columns = result_columns().size();
  if (d < columns) return column_element_bytes(result_columns()[d]);
  return d == columns ? sizeof(int64_t) : 1;  // /points/point, /points/done
}

size_t RowBlock::stored_bytes() const {
  if (bytes_.empty()) return 0;
  int64_t s;
  std::memcpy(&s, bytes_.data() + kStoredAt, sizeof s);
  return static_cast<size_t>(s);
}

std::span<const std::byte> RowBlock::stored_section() const {
  const size_t s = stored_bytes();
  return {bytes_.data() + bytes_.size() - s, s};
}

std::vector<RowBlock::StoredChunk> RowBlock::stored() const {
  std::vector<StoredChunk> out;
  const std::span<const std::byte> section = stored_section();
  const size_t d = datasets();
  std::vector<int64_t> head(2 + d);
  for (size_t at = 0; at < section.size();) {
    RAPID_ASSERT(at + head.size() * sizeof(int64_t) <= section.size(), "a whole chunk header");
    std::memcpy(head.data(), section.data() + at, head.size() * sizeof(int64_t));
    at += head.size() * sizeof(int64_t);
    StoredChunk c{head[0], head[1], {}};
    c.data.reserve(d);
    for (size_t k = 0; k < d; ++k) {
      const auto n = static_cast<size_t>(head[2 + k]);
      RAPID_ASSERT(at + n <= section.size(), "a chunk's bytes inside the block");
      c.data.emplace_back(section.data() + at, n);
      at += n;
    }
    out.push_back(std::move(c));
  }
  return out;
}

int64_t RowBlock::stored_rows() const {
  int64_t rows = 0;
  for (const StoredChunk& c : stored()) rows += c.rows;
  return rows;
}

void RowBlock::set_stored(std::span<const size_t> keep, std::span<const std::byte> section) {
  RAPID_ASSERT(stored_bytes() == 0, "stored chunks set once");
  if (bytes_.empty()) start(0, 0);
  if (keep.size() != static_cast<size_t>(count())) {
    if (keep.empty())
      start(0, tag());  // the same storage, no rows
    else
      *this = select(keep);
  }
  const size_t rows_end = bytes_.size();
  bytes_.resize(rows_end + section.size());
  if (!section.empty()) std::memcpy(bytes_.data() + rows_end, section.data(), section.size());
  const auto s = static_cast<int64_t>(section.size());
  std::memcpy(bytes_.data() + kStoredAt, &s, sizeof s);
}

int64_t RowBlock::count() const {
  if (bytes_.empty()) return 0;
  int64_t n;
  std::memcpy(&n, bytes_.data(), sizeof n);
  return n;
}

size_t RowBlock::column_offset(size_t c, int64_t n) const {
  const auto rows = static_cast<size_t>(n);
  return kHeader + sizeof(int64_t) * rows + rows * prefix()[c];
}

int64_t RowBlock::index(size_t k) const {
  int64_t v;
  std::memcpy(&v, bytes_.data() + kHeader + sizeof(int64_t) * k, sizeof v);
  return v;
}

std::span<const std::byte> RowBlock::column(size_t c) const {
  const int64_t n = count();
  const size_t size = static_cast<size_t>(n) * (prefix()[c + 1] - prefix()[c]);
  return {bytes_.data() + column_offset(c, n), size};
}

std::span<const std::byte> RowBlock::index_bytes() const {
  return {bytes_.data() + kHeader, static_cast<size_t>(count()) * sizeof(int64_t)};
}

bool RowBlock::fill_only(size_t c, size_t from, size_t to) const {
  const size_t width = column_element_bytes(result_columns()[c]);
  const std::byte* p = column(c).data() + from * width;
  if (result_columns()[c].type == ColumnType::Float64) {
    for (size_t k = from; k < to; ++k, p += sizeof(double)) {
      double v;
      std::memcpy(&v, p, sizeof v);
      if (!std::isnan(v)) return false;
    }
    return true;
  }
  return std::all_of(p, p + (to - from) * width, [](std::byte b) { return b == std::byte{0}; });
}

double RowBlock::value(size_t c, size_t k) const {
  const Column& col = result_columns()[c];
  const std::byte* at = column(c).data() + k * column_element_bytes(col);
  switch (col.type) {
    case ColumnType::Int32:
      return load<int32_t>(at);
    case ColumnType::UInt32:
      return load<uint32_t>(at);
    case ColumnType::UInt8:
    case ColumnType::Enum8:
      return load<uint8_t>(at);
    case ColumnType::Float64:
      break;
  }
  return load<double>(at);
}

void RowBlock::pack(std::span<const ResultRow> rows,
                    const std::function<bool(const ResultRow&)>& keep, int64_t tag) {
  std::vector<const ResultRow*> kept;
  kept.reserve(rows.size());
  for (const ResultRow& r : rows)
    if (!keep || keep(r)) kept.push_back(&r);
  pack(kept, tag);
}

void RowBlock::pack(std::span<const ResultRow* const> kept, int64_t tag) {
  const auto n = static_cast<int64_t>(kept.size());
  start(n, tag);
  const auto columns = result_columns();
  // Row by row (each row read once; the columns' runs written as streams).
  struct OutSite;  // this call's buffer, in the thread's evaluation context
  std::vector<std::byte*>& out = EvalContext::current().buffer<OutSite, std::vector<std::byte*>>();
  out.resize(columns.size());
  for (size_t c = 0; c < columns.size(); ++c) out[c] = bytes_.data() + column_offset(c, n);
  std::byte* index = bytes_.data() + kHeader;
  for (const ResultRow* r : kept) {
    std::memcpy(index, &r->point.index, sizeof(int64_t));
    index += sizeof(int64_t);
    for (size_t c = 0; c < columns.size(); ++c) {
      const Column& col = columns[c];
      const double v = col.get(*r);
      switch (col.type) {
        case ColumnType::Int32:
          store<int32_t>(out[c], v);
          out[c] += 4;
          break;
        case ColumnType::UInt32:
          store<uint32_t>(out[c], v);
          out[c] += 4;
          break;
        case ColumnType::UInt8:
        case ColumnType::Enum8:
          store<uint8_t>(out[c], v);
          out[c] += 1;
          break;
        case ColumnType::Float64:
          store<double>(out[c], v);
          out[c] += 8;
          break;
      }
    }
  }
}

RowBlock RowBlock::select(std::span<const size_t> take) const {
  RAPID_ASSERT(stored_bytes() == 0, "rows without stored chunks");
  RowBlock out;
  const auto n = static_cast<int64_t>(take.size());
  out.start(n, tag());
  for (size_t k = 0; k < take.size(); ++k) {
    const int64_t idx = index(take[k]);
    std::memcpy(out.bytes_.data() + kHeader + sizeof(int64_t) * k, &idx, sizeof idx);
  }
  const size_t columns = prefix().size() - 1;
  for (size_t c = 0; c < columns; ++c) {
    const size_t w = prefix()[c + 1] - prefix()[c];
    const std::byte* in = column(c).data();
    std::byte* o = out.bytes_.data() + out.column_offset(c, n);
    for (size_t k = 0; k < take.size(); ++k) std::memcpy(o + k * w, in + take[k] * w, w);
  }
  return out;
}

void RowBlock::append(const RowBlock& other) {
  RAPID_ASSERT(stored_bytes() == 0 && other.stored_bytes() == 0, "rows without stored chunks");
  if (other.empty()) return;
  if (empty()) {  // its rows under this block's tag
    const int64_t t = tag();
    bytes_ = other.bytes_;
    std::memcpy(bytes_.data() + sizeof(int64_t), &t, sizeof t);
    return;
  }
  const auto a = static_cast<size_t>(count()), b = static_cast<size_t>(other.count());
  RowBlock merged;
  const auto n = static_cast<int64_t>(a + b);
  merged.start(n, tag());
  std::memcpy(merged.bytes_.data() + kHeader, bytes_.data() + kHeader, a * sizeof(int64_t));
  std::memcpy(merged.bytes_.data() + kHeader + a * sizeof(int64_t), other.bytes_.data() + kHeader,
              b * sizeof(int64_t));
  const size_t columns = prefix().size() - 1;
  for (size_t c = 0; c < columns; ++c) {
    std::byte* o = merged.bytes_.data() + merged.column_offset(c, n);
    const auto x = column(c), y = other.column(c);
    std::memcpy(o, x.data(), x.size());
    std::memcpy(o + x.size(), y.data(), y.size());
  }
  *this = std::move(merged);
}

}  // namespace rapid
