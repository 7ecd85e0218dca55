// The /points group of a result file (io/result_store.hpp): one 1-D dataset per column of
// result_columns(), the dimension scale /points/point (the point index of each row) and,
// for a file with one row per point, the done mask /points/done. Serial: only the writing
// rank (rank 0) holds a table, and only its writer thread calls it while the sweep runs.
//
// Storage (issue 13 part 2): chunks of kChunkRows rows, shuffle + deflate level 1 (the
// filters every HDF5 build has; h5py, netCDF-4 and h5dump read them), float64 columns with
// NaN as their fill value and the others 0 (HDF5's default), so a chunk never written reads
// as its fill value and write() skips the part of a column that holds only the fill value
// (the serving columns of a training sweep cost nothing). Each dataset's chunk cache holds
// a few chunks, so rows arriving in pieces are compressed once per chunk.
//
// Layouts: `fixed` (one row per point, row i = point i, N rows allocated on demand, the
// done mask: the resumable file) or appended (rows added at the end in the order given,
// /points/point saying which point each is: `--keep feasible` and `--keep top-K`).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "rapid/io/hdf5_handle.hpp"
#include "rapid/io/result_schema.hpp"
#include "rapid/io/row_block.hpp"

namespace rapid {

class PointsTable {
 public:
  static constexpr int64_t kChunkRows = 4096;

  PointsTable() = default;
  /// Creates /points in `file`: `fixed_rows` > 0 rows (fixed layout) or an appended table
  /// (`fixed_rows` == 0). Throws InternalError.
  static PointsTable create(hid_t file, int64_t fixed_rows);
  /// Opens the /points of a fixed-layout file with `fixed_rows` rows. Throws InternalError.
  static PointsTable open(hid_t file, int64_t fixed_rows);

  /// Writes the block's rows: fixed layout at their point indices (and marks them done),
  /// appended layout after the last row; its stored chunks (fixed layout) as they are.
  /// `first_write`: the rows were never written before, so a column run holding only the
  /// fill value is skipped. Throws InternalError.
  void write(const RowBlock& block, bool first_write = true);
  /// Rewrites rows already written, found by point index (appended: a binary search of
  /// /points/point; a point the table lacks is skipped). Throws InternalError.
  void update(const RowBlock& block);
  /// Rows [first, first + count) of column `name` (a schema column) as doubles.
  std::vector<double> read_column(std::string_view name, int64_t first, int64_t count);
  /// Copies every stored chunk of `from_file`'s /points (a table of the same schema and
  /// rows) into this one as it is: no decompression. Throws InternalError.
  void copy_stored(hid_t from_file);
  /// The done mask (fixed layout).
  std::vector<uint8_t> read_done();
  /// Reads every chunk holding a row `done` marks (fixed layout), through the filters: ""
  /// when all pass their Fletcher-32 checksum, decompress, and each done row holds its own
  /// point index; else what failed ("/points/mfu rows 4096-8191: ...").
  std::string verify(const std::vector<uint8_t>& done);
  int64_t rows() const { return rows_; }
  void close();

 private:
  struct ColumnData {
    const Column* column = nullptr;
    h5::Dataset dataset;
    h5::Datatype enum_type;  ///< owned type for Enum8 columns
    hid_t mem_type = H5I_INVALID_HID;
    size_t elem_size = 0;
  };
  void bind_columns(hid_t file, bool create);
  void define(ColumnData& cd, hid_t file);
  h5::Dataset make(const char* name, hid_t type, hid_t dcpl);
  void extend(int64_t rows);
  /// The block's stored chunks (io/chunk_encoder.hpp), each dataset's with H5Dwrite_chunk.
  void write_stored(const RowBlock& b);
  /// Dataset d in RowBlock::datasets()' order (the columns, /points/point, /points/done).
  hid_t dataset(size_t d) const;
  std::string dataset_name(size_t d) const;
  /// Writes `count` elements of `data` at rows [row, row + count) of `dataset`.
  void put(hid_t dataset, hid_t mem_type, int64_t row, int64_t count, const void* data);
  /// The row holding point `index` in an appended table, or -1.
  int64_t position_of(int64_t index);
  int64_t point_at(int64_t row);
  /// The block's rows [from, to) at rows [row, ...): every column, the index, done.
  void put_run(const RowBlock& b, size_t from, size_t to, int64_t row, bool skip_fill);

  bool fixed_ = true;
  int64_t rows_ = 0;  ///< the datasets' length
  h5::Group group_;
  h5::Dataset point_, done_;
  std::vector<ColumnData> columns_;
};

}  // namespace rapid
