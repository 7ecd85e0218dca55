#include "rapid/io/chunk_encoder.hpp"

#include <libdeflate.h>
#include <omp.h>

#include <algorithm>
#include <bit>
#include <cstring>
#include <limits>

#include "rapid/common/error.hpp"
#include "rapid/io/points_table.hpp"

namespace rapid {

namespace {

// libdeflate's level 1, its fastest: on this project's GPT-3 sweep rows, 1.29 us per row
// and 63.9 bytes against zlib level 1's 1.82 us and 65.6 bytes (docs/production.md sec 5).
constexpr int kDeflateLevel = 1;

// Transposes the 8 x 8 byte matrix whose row k is x[k] (byte c of x[k] is column c): byte
// k of x[j] becomes byte j of the old x[k] (three rounds of swapping blocks across the
// diagonal: 4 x 4, 2 x 2, 1 x 1; Warren, Hacker's Delight, sec 7-3).
void transpose8(uint64_t x[8]) {
  for (int k = 0; k < 4; ++k) {
    const uint64_t t = ((x[k] >> 32) ^ x[k + 4]) & 0x00000000ffffffffULL;
    x[k] ^= t << 32;
    x[k + 4] ^= t;
  }
  for (int k : {0, 1, 4, 5}) {
    const uint64_t t = ((x[k] >> 16) ^ x[k + 2]) & 0x0000ffff0000ffffULL;
    x[k] ^= t << 16;
    x[k + 2] ^= t;
  }
  for (int k = 0; k < 8; k += 2) {
    const uint64_t t = ((x[k] >> 8) ^ x[k + 1]) & 0x00ff00ff00ff00ffULL;
    x[k] ^= t << 8;
    x[k + 1] ^= t;
  }
}

// HDF5's shuffle (H5Zshuffle.c) of n = raw.size() / w elements into `out`: byte j of
// element i goes to j * n + i. Eight elements at a time through transpose8 (w <= 8, on a
// little-endian host: an element's bytes are the low bytes of its row), the rest by byte.
void shuffle(std::span<const std::byte> raw, size_t w, std::byte* out) {
  const size_t n = raw.size() / w;
  size_t i = 0;
  if (w <= 8 && std::endian::native == std::endian::little) {
    uint64_t x[8];
    for (; i + 8 <= n; i += 8) {
      for (size_t k = 0; k < 8; ++k) {
        x[k] = 0;
        std::memcpy(&x[k], raw.data() + (i + k) * w, w);
      }
      transpose8(x);
      for (size_t j = 0; j < w; ++j) std::memcpy(out + j * n + i, &x[j], 8);
    }
  }
  for (; i < n; ++i)
    for (size_t j = 0; j < w; ++j) out[j * n + i] = raw[i * w + j];
}

}  // namespace

uint32_t fletcher32(std::span<const std::byte> data) {
  // HDF5 H5checksum.c H5_checksum_fletcher32: 16-bit words, most significant byte first;
  // both sums folded to 16 bits every 360 words (the most that cannot overflow 32 bits);
  // an odd last byte counts as a word's high byte.
  const auto* p = reinterpret_cast<const uint8_t*>(data.data());
  size_t words = data.size() / 2;
  uint32_t sum1 = 0, sum2 = 0;
  while (words > 0) {
    size_t n = std::min<size_t>(words, 360);
    words -= n;
    for (; n > 0; --n, p += 2) {
      sum1 += (static_cast<uint32_t>(p[0]) << 8) | p[1];
      sum2 += sum1;
    }
    sum1 = (sum1 & 0xffff) + (sum1 >> 16);
    sum2 = (sum2 & 0xffff) + (sum2 >> 16);
  }
  if (data.size() % 2 != 0) {
    sum1 += static_cast<uint32_t>(*p) << 8;
    sum2 += sum1;
    sum1 = (sum1 & 0xffff) + (sum1 >> 16);
    sum2 = (sum2 & 0xffff) + (sum2 >> 16);
  }
  sum1 = (sum1 & 0xffff) + (sum1 >> 16);
  sum2 = (sum2 & 0xffff) + (sum2 >> 16);
  return (sum2 << 16) | sum1;
}

ChunkEncoder::ChunkEncoder(int64_t table_rows)
    : table_rows_(table_rows),
      chunk_rows_(std::min(PointsTable::kChunkRows, table_rows)),
      stored_(RowBlock::datasets()),
      scratch_(static_cast<size_t>(std::max(omp_get_max_threads(), 1))) {
  RAPID_ASSERT(table_rows > 0, "a table of at least one row");
}

void ChunkEncoder::Deflater::operator()(libdeflate_compressor* c) const {
  libdeflate_free_compressor(c);
}

void ChunkEncoder::filter(std::span<const std::byte> raw, size_t element_bytes, ByteBuffer& out,
                          Scratch& s) {
  // 1. Shuffle (H5Zshuffle.c; elements of one byte, or a single element, stay as they are).
  std::span<const std::byte> shuffled = raw;
  const size_t n = raw.size() / element_bytes;
  if (element_bytes > 1 && n > 1) {
    s.shuffled.resize(raw.size());
    shuffle(raw, element_bytes, s.shuffled.data());
    shuffled = s.shuffled;
  }
  // 2. Deflate: a zlib stream (RFC 1950), which HDF5's filter inflates whoever wrote it
  // (H5Zdeflate.c); 3. the checksum of the compressed bytes after it.
  if (!s.deflater) {
    s.deflater.reset(libdeflate_alloc_compressor(kDeflateLevel));
    if (!s.deflater) throw InternalError("libdeflate could not allocate a compressor");
  }
  const size_t bound = libdeflate_zlib_compress_bound(s.deflater.get(), shuffled.size());
  out.resize(bound + 4);
  const size_t size = libdeflate_zlib_compress(s.deflater.get(), shuffled.data(), shuffled.size(),
                                               out.data(), bound);
  if (size == 0) throw InternalError("libdeflate could not compress a /points chunk");
  const uint32_t sum = fletcher32({out.data(), size});
  for (size_t b = 0; b < 4; ++b)  // little-endian (H5Zfletcher32.c UINT32ENCODE)
    out[size + b] = static_cast<std::byte>((sum >> (8 * b)) & 0xff);
  out.resize(size + 4);
}

std::span<const std::byte> ChunkEncoder::raw_chunk(const RowBlock& block, size_t d, size_t from,
                                                   size_t count, ByteBuffer& pad) const {
  const size_t columns = result_columns().size();
  const auto whole = static_cast<size_t>(chunk_rows_);
  const size_t width = RowBlock::dataset_element_bytes(d);
  std::span<const std::byte> rows;
  if (d < columns) {
    if (block.fill_only(d, from, from + count)) return {};
    rows = block.column(d).subspan(from * width, count * width);
  } else if (d == columns) {  // /points/point
    rows = block.index_bytes().subspan(from * width, count * width);
  } else {  // /points/done: 1 for each row, the fill value 0 past the table's end
    pad.resize(whole);
    std::fill(pad.begin(), pad.begin() + static_cast<std::ptrdiff_t>(count), std::byte{1});
    std::fill(pad.begin() + static_cast<std::ptrdiff_t>(count), pad.end(), std::byte{0});
    return pad;
  }
  if (count == whole) return rows;
  // The table's last chunk: the fill value past its last row, as HDF5 stores it.
  pad.resize(whole * width);
  std::memcpy(pad.data(), rows.data(), rows.size());
  const bool is_float = d < columns && result_columns()[d].type == ColumnType::Float64;
  if (is_float) {
    const double nan = std::numeric_limits<double>::quiet_NaN();
    for (size_t k = count; k < whole; ++k) std::memcpy(pad.data() + k * width, &nan, width);
  } else {
    std::fill(pad.begin() + static_cast<std::ptrdiff_t>(rows.size()), pad.end(), std::byte{0});
  }
  return pad;
}

int64_t ChunkEncoder::encode(RowBlock& block) {
  // The chunks the block holds whole: each of the chunk's rows, consecutively.
  struct Whole {
    size_t from;
    int64_t first_row, rows;
  };
  std::vector<Whole> whole;
  std::vector<size_t> keep;
  const auto n = static_cast<size_t>(block.count());
  for (size_t k = 0; k < n;) {
    const int64_t first = block.index(k);
    const int64_t rows = std::min(chunk_rows_, table_rows_ - first);
    bool holds = first % chunk_rows_ == 0 && k + static_cast<size_t>(rows) <= n;
    for (int64_t r = 1; holds && r < rows; ++r)
      holds = block.index(k + static_cast<size_t>(r)) == first + r;
    if (holds) {
      whole.push_back({k, first, rows});
      k += static_cast<size_t>(rows);
    } else {
      keep.push_back(k++);
    }
  }
  if (whole.empty()) return 0;

  const size_t datasets = RowBlock::datasets();
  std::vector<int64_t> head(2 + datasets);
  section_.clear();
  int64_t moved = 0;
  for (const Whole& w : whole) {
#pragma omp parallel for schedule(dynamic)
    for (size_t d = 0; d < datasets; ++d) {
      Scratch& s = scratch_[static_cast<size_t>(omp_get_thread_num())];
      const std::span<const std::byte> raw =
          raw_chunk(block, d, w.from, static_cast<size_t>(w.rows), s.pad);
      if (raw.empty()) {
        stored_[d].clear();
        continue;
      }
      filter(raw, RowBlock::dataset_element_bytes(d), stored_[d], s);
    }
    head[0] = w.first_row;
    head[1] = w.rows;
    size_t bytes = 0;
    for (size_t d = 0; d < datasets; ++d) {
      head[2 + d] = static_cast<int64_t>(stored_[d].size());
      bytes += stored_[d].size();
    }
    const size_t at = section_.size();
    section_.resize(at + head.size() * sizeof(int64_t) + bytes);
    std::byte* out = section_.data() + at;
    std::memcpy(out, head.data(), head.size() * sizeof(int64_t));
    out += head.size() * sizeof(int64_t);
    for (const ByteBuffer& b : stored_) {
      if (!b.empty()) std::memcpy(out, b.data(), b.size());
      out += b.size();
    }
    moved += w.rows;
  }
  block.set_stored(keep, section_);
  return moved;
}

}  // namespace rapid
