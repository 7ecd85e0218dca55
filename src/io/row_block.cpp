#include "rapid/io/row_block.hpp"
#include "rapid/common/eval_context.hpp"

#include <cstring>

#include "rapid/common/error.hpp"

namespace rapid {

namespace {

// Column offsets (in bytes, after the header and the indices) per element: the prefix sums
// of the storage sizes, so column c of an n-row block starts at 16 + 8 n + n * prefix[c].
constexpr size_t kHeader = 2 * sizeof(int64_t);  // count, tag
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
  std::memcpy(bytes_.data(), &n, sizeof n);
  std::memcpy(bytes_.data() + sizeof(int64_t), &tag, sizeof tag);
}

RowBlock::RowBlock(ByteBuffer bytes) : bytes_(std::move(bytes)) {
  RAPID_ASSERT(
      bytes_.empty() || (bytes_.size() >= kHeader &&
                         bytes_.size() == kHeader + static_cast<size_t>(count()) * row_bytes()),
      "a row block of the schema's size");
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
