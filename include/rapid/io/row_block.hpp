// A block of result rows in storage form (issue 13 part 2): a tag (the scheduler's chunk),
// the rows' point indices, then
// each column of result_columns() converted to its storage type (int32, uint8, uint32,
// float64; enums as uint8), one contiguous run per column; then the block's stored chunks
// (issue 35: whole /points chunks already filtered as the file stores them, by
// io/chunk_encoder.hpp). It is what a worker rank sends the writing rank (one MPI message:
// bytes()), and what the result file's writer takes, so rows are converted and compressed
// once, on the rank that evaluated them.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <span>
#include <vector>

#include "rapid/common/default_init_allocator.hpp"
#include "rapid/io/result_schema.hpp"

namespace rapid {

/// A row block's storage: bytes that resize() does not zero (every byte is written).
using ByteBuffer = std::vector<std::byte, DefaultInitAllocator<std::byte>>;

/// Storage bytes of one element of a column.
size_t column_element_bytes(const Column& c);

class RowBlock {
 public:
  RowBlock() = default;
  /// A block received as bytes (a message of another rank's bytes()).
  explicit RowBlock(ByteBuffer bytes);

  /// Replaces the contents with the rows `keep` accepts (all when empty), in order; `tag`
  /// travels with them (the scheduler's chunk). The storage is reused (no allocation when
  /// the block held as many bytes before, no zero-fill).
  void pack(std::span<const ResultRow> rows, const std::function<bool(const ResultRow&)>& keep = {},
            int64_t tag = 0);
  /// The same for the rows `rows` points to, in order (no copies of them).
  void pack(std::span<const ResultRow* const> rows, int64_t tag = 0);
  /// Appends another block's rows (same schema).
  void append(const RowBlock& other);
  /// The block's rows whose positions `take` lists (ascending or not), in that order.
  RowBlock select(std::span<const size_t> take) const;

  int64_t count() const;
  int64_t tag() const;
  /// Point index of row k.
  int64_t index(size_t k) const;
  /// Column c's storage bytes (count() elements of column_element_bytes()).
  std::span<const std::byte> column(size_t c) const;
  /// The point indices (count() int64 elements).
  std::span<const std::byte> index_bytes() const;
  /// Whether rows [from, to) of column c all hold the column's fill value in the file (NaN
  /// for float64, 0 otherwise: points_table.hpp).
  bool fill_only(size_t c, size_t from, size_t to) const;
  /// Column c as doubles (the codes for enums; exact for the integer types).
  double value(size_t c, size_t k) const;
  const ByteBuffer& bytes() const { return bytes_; }
  bool empty() const { return count() == 0 && stored_bytes() == 0; }

  /// Storage bytes of one row: its index and every column.
  static size_t row_bytes();

  /// Datasets of a stored chunk: every column of result_columns(), then /points/point,
  /// then /points/done.
  static size_t datasets();
  /// Storage bytes of one element of dataset d (in datasets()' order).
  static size_t dataset_element_bytes(size_t d);
  /// One stored chunk: rows [first_row, first_row + rows) of the table, and per dataset
  /// (datasets() of them) its stored bytes; empty: not stored (it reads as the fill value).
  struct StoredChunk {
    int64_t first_row = 0;
    int64_t rows = 0;
    std::vector<std::span<const std::byte>> data;
  };
  std::vector<StoredChunk> stored() const;
  /// Rows held as stored chunks (count() holds the others).
  int64_t stored_rows() const;
  /// Keeps the rows at positions `keep` (ascending) and puts `section` (stored chunks in
  /// the layout ChunkEncoder writes: per chunk int64 first row, int64 rows, int64 bytes per
  /// dataset, then the datasets' bytes) after them, in the same storage.
  void set_stored(std::span<const size_t> keep, std::span<const std::byte> section);

 private:
  size_t column_offset(size_t c, int64_t n) const;
  void start(int64_t n, int64_t tag);  ///< sized for n rows, the header written
  ByteBuffer bytes_;  ///< int64 count, int64 tag, int64 stored-section bytes, int64
                      ///< index[count], columns, stored chunks (reused: pack() keeps the
                      ///< capacity of a block packed before)
  size_t stored_bytes() const;
  std::span<const std::byte> stored_section() const;
};

}  // namespace rapid
