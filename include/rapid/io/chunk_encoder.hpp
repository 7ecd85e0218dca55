// The stored form of whole /points chunks, made on the rank that evaluated their rows
// (issue 35 part 1: the write path spread over the ranks). The writing rank then stores
// each chunk as it is (PointsTable::write, H5Dwrite_chunk): it neither converts nor
// compresses, so its work per row no longer grows with the ranks feeding it.
//
// A /points dataset's chunk is stored through the filter pipeline PointsTable sets
// (points_table.cpp bind_columns), in its order:
//  1. shuffle (HDF5 H5Zshuffle.c): byte j of element i goes to position j * n + i, for
//     elements of more than one byte;
//  2. deflate (HDF5 H5Zdeflate.c): a zlib stream of the shuffled bytes (RFC 1950), which
//     HDF5 inflates whoever wrote it; HDF5 writes it with zlib's compress2 at level 1, we
//     with libdeflate at level 1 (the same format, 28% faster on our rows);
//  3. Fletcher-32 (HDF5 H5Zfletcher32.c, H5checksum.c H5_checksum_fletcher32): the checksum
//     of the compressed bytes (16-bit big-endian words, sums reduced every 360 words, an
//     odd last byte as a high byte), appended as 4 little-endian bytes.
// tests/unit/points_table_test.cpp checks our chunks against those HDF5 itself stores
// (H5Dread_chunk): the same bytes once inflated, the same checksum function; and that HDF5
// reads ours back through its filters.
//
// A chunk holds min(kChunkRows, N) elements; the last one of a table whose N is not a
// multiple holds the fill value past row N - 1, as HDF5 writes it. A column whose rows in a
// chunk are all its fill value (NaN for float64, 0 otherwise) is not stored: it reads as
// the fill value (the serving columns of a training sweep cost nothing).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "rapid/io/row_block.hpp"

struct libdeflate_compressor;

namespace rapid {

/// HDF5's Fletcher-32 checksum of `data` (H5checksum.c H5_checksum_fletcher32).
uint32_t fletcher32(std::span<const std::byte> data);

class ChunkEncoder {
 public:
  /// For a fixed-layout table of `table_rows` rows (its chunks: min(kChunkRows, N) rows).
  explicit ChunkEncoder(int64_t table_rows);

  /// Moves the rows of every chunk that `block` holds whole (each of the chunk's rows, as
  /// consecutive point indices) into the block's stored chunks (RowBlock::stored); the
  /// other rows stay as they are. OpenMP threads share the datasets of a chunk. Returns the
  /// rows moved.
  int64_t encode(RowBlock& block);

 private:
  struct Deflater {
    void operator()(libdeflate_compressor* c) const;
  };
  struct Scratch {  ///< one OpenMP thread's: a padded raw chunk, the shuffled bytes
    ByteBuffer pad, shuffled;
    std::unique_ptr<libdeflate_compressor, Deflater> deflater;
  };
  /// The stored form of one chunk of a dataset whose elements are `element_bytes` wide:
  /// `raw` (a whole chunk) shuffled, deflated and checksummed into `out` (resized).
  static void filter(std::span<const std::byte> raw, size_t element_bytes, ByteBuffer& out,
                     Scratch& s);

  /// Dataset d's raw chunk (columns, then the point index, then done) of the rows at block
  /// positions [from, from + count), padded with the fill value to a whole chunk; empty
  /// when every row holds the fill value.
  std::span<const std::byte> raw_chunk(const RowBlock& block, size_t d, size_t from, size_t count,
                                       ByteBuffer& pad) const;

  int64_t table_rows_;
  int64_t chunk_rows_;
  std::vector<ByteBuffer> stored_;  ///< per dataset: its stored chunk (reused)
  std::vector<Scratch> scratch_;    ///< per OpenMP thread (reused)
  ByteBuffer section_;              ///< the block's stored chunks being built (reused)
};

}  // namespace rapid
