#include "rapid/io/points_table.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

#include "rapid/common/error.hpp"
#include "rapid/io/netcdf_layout.hpp"

namespace rapid {

namespace {

// Chunks kept in each dataset's cache: enough that rows arriving out of order in small
// pieces (a DES sweep's 64-point chunks) meet their chunk there, not on disk.
constexpr size_t kCachedChunks = 4;

}  // namespace

PointsTable PointsTable::create(hid_t file, int64_t fixed_rows) {
  PointsTable t;
  t.fixed_ = fixed_rows > 0;
  t.rows_ = std::max<int64_t>(fixed_rows, 0);
  t.group_ =
      h5::Group(H5Gcreate2(file, "points", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT), "H5Gcreate2");
  t.bind_columns(file, true);
  return t;
}

PointsTable PointsTable::open(hid_t file, int64_t fixed_rows) {
  PointsTable t;
  t.fixed_ = true;
  t.rows_ = fixed_rows;
  t.group_ = h5::Group(H5Gopen2(file, "points", H5P_DEFAULT), "H5Gopen2");
  t.bind_columns(file, false);
  return t;
}

h5::Dataset PointsTable::make(const char* name, hid_t type, hid_t dcpl) {
  const hsize_t dims = static_cast<hsize_t>(rows_);
  const hsize_t max = fixed_ ? dims : H5S_UNLIMITED;
  h5::Dataspace space(H5Screate_simple(1, &dims, &max), "H5Screate_simple");
  h5::PropertyList dapl(H5Pcreate(H5P_DATASET_ACCESS), "H5Pcreate");
  const size_t chunk_bytes = static_cast<size_t>(kChunkRows) * H5Tget_size(type);
  h5::check(H5Pset_chunk_cache(dapl.get(), 521, kCachedChunks * chunk_bytes, 1.0),
            "H5Pset_chunk_cache");
  return h5::Dataset(
      H5Dcreate2(group_.get(), name, type, space.get(), H5P_DEFAULT, dcpl, dapl.get()),
      "H5Dcreate2");
}

void PointsTable::bind_columns(hid_t file, bool create) {
  // Chunked, shuffled, deflated (level 1: the fastest; measured 10x smaller than the raw
  // columns on a GPT-3 sweep, docs/output.md).
  h5::PropertyList dcpl(H5Pcreate(H5P_DATASET_CREATE), "H5Pcreate");
  const hsize_t chunk =
      static_cast<hsize_t>(fixed_ ? std::min<int64_t>(kChunkRows, rows_) : kChunkRows);
  h5::check(H5Pset_chunk(dcpl.get(), 1, &chunk), "H5Pset_chunk");
  h5::check(H5Pset_shuffle(dcpl.get()), "H5Pset_shuffle");
  h5::check(H5Pset_deflate(dcpl.get(), 1), "H5Pset_deflate");
  // A Fletcher-32 checksum of each stored (compressed) chunk, after the compression filters
  // (HDF5 H5Pset_fletcher32: filters run in the order added): a read of a damaged chunk
  // fails instead of returning wrong rows; a resumed sweep reads every chunk it keeps
  // (verify()).
  h5::check(H5Pset_fletcher32(dcpl.get()), "H5Pset_fletcher32");
  h5::PropertyList float_dcpl(H5Pcopy(dcpl.get()), "H5Pcopy");
  const double nan = std::numeric_limits<double>::quiet_NaN();
  h5::check(H5Pset_fill_value(float_dcpl.get(), H5T_NATIVE_DOUBLE, &nan), "H5Pset_fill_value");

  auto open = [&](const char* name) {
    h5::PropertyList dapl(H5Pcreate(H5P_DATASET_ACCESS), "H5Pcreate");
    h5::check(H5Pset_chunk_cache(dapl.get(), 521, kCachedChunks * kChunkRows * 8, 1.0),
              "H5Pset_chunk_cache");
    return h5::Dataset(H5Dopen2(group_.get(), name, dapl.get()), "H5Dopen2");
  };
  if (create) {
    point_ = make(kPointDimension, H5T_NATIVE_INT64, dcpl.get());
    h5::make_scale(point_.get(), kPointDimension);
    h5::write_attribute(point_.get(), "unit", std::string_view(""));
    h5::write_attribute(point_.get(), "description",
                        std::string_view(fixed_ ? "row index: row i is point i of the sweep"
                                                : "the point of the sweep this row holds "
                                                  "(--keep: the rows kept, in point order)"));
    h5::write_attribute(point_.get(), "units", std::string_view("1"));
    h5::write_attribute(point_.get(), "long_name", std::string_view("point of the sweep"));
  } else {
    point_ = open(kPointDimension);
  }
  const auto columns = result_columns();
  columns_.resize(columns.size());
  for (size_t i = 0; i < columns.size(); ++i) {
    ColumnData& cd = columns_[i];
    cd.column = &columns[i];
    define(cd, file);
    if (!create) {
      cd.dataset = open(cd.column->name);
      continue;
    }
    cd.dataset = make(cd.column->name, cd.mem_type,
                      cd.column->type == ColumnType::Float64 ? float_dcpl.get() : dcpl.get());
    h5::write_attribute(cd.dataset.get(), "unit", std::string_view(cd.column->unit));
    h5::write_attribute(cd.dataset.get(), "description", std::string_view(cd.column->description));
    write_cf_attributes(cd.dataset.get(), *cd.column);
    h5::attach_scale(cd.dataset.get(), point_.get());
  }
  if (!fixed_) return;
  if (!create) {
    done_ = open("done");
    return;
  }
  // The done mask: 0 (the fill value) until the row is written.
  done_ = make("done", H5T_NATIVE_UINT8, dcpl.get());
  h5::write_attribute(done_.get(), "unit", std::string_view(""));
  h5::write_attribute(done_.get(), "description",
                      std::string_view("1: the row is written (a stopped sweep resumes the 0s)"));
  const uint8_t done_values[] = {0, 1};  // CF sec 3.5 flags
  h5::write_attribute(done_.get(), "flag_values", std::span<const uint8_t>(done_values));
  h5::write_attribute(done_.get(), "flag_meanings", std::string_view("missing written"));
  h5::write_attribute(done_.get(), "long_name",
                      std::string_view("row written (a stopped sweep resumes the missing rows)"));
  h5::attach_scale(done_.get(), point_.get());
}

void PointsTable::define(ColumnData& cd, hid_t file) {
  cd.elem_size = column_element_bytes(*cd.column);
  switch (cd.column->type) {
    case ColumnType::Int32:
      cd.mem_type = H5T_NATIVE_INT32;
      break;
    case ColumnType::UInt8:
      cd.mem_type = H5T_NATIVE_UINT8;
      break;
    case ColumnType::UInt32:
      cd.mem_type = H5T_NATIVE_UINT32;
      break;
    case ColumnType::Float64:
      cd.mem_type = H5T_NATIVE_DOUBLE;
      break;
    case ColumnType::Enum8:
      // The committed type in the root group (netCDF-4 reads it as an NC_ENUM type).
      cd.enum_type = open_enum_type(file, *cd.column);
      cd.mem_type = cd.enum_type.get();
      break;
  }
}

void PointsTable::extend(int64_t rows) {
  const hsize_t dims = static_cast<hsize_t>(rows);
  h5::check(H5Dset_extent(point_.get(), &dims), "H5Dset_extent");
  for (ColumnData& cd : columns_)
    h5::check(H5Dset_extent(cd.dataset.get(), &dims), "H5Dset_extent");
  rows_ = rows;
}

void PointsTable::put(hid_t dataset, hid_t mem_type, int64_t row, int64_t count, const void* data) {
  h5::Dataspace file_space(H5Dget_space(dataset), "H5Dget_space");
  const hsize_t start = static_cast<hsize_t>(row), n = static_cast<hsize_t>(count);
  h5::check(H5Sselect_hyperslab(file_space.get(), H5S_SELECT_SET, &start, nullptr, &n, nullptr),
            "H5Sselect_hyperslab");
  h5::Dataspace mem_space(H5Screate_simple(1, &n, nullptr), "H5Screate_simple");
  h5::check(H5Dwrite(dataset, mem_type, mem_space.get(), file_space.get(), H5P_DEFAULT, data),
            "H5Dwrite");
}

void PointsTable::put_run(const RowBlock& b, size_t from, size_t to, int64_t row, bool skip_fill) {
  const auto n = static_cast<int64_t>(to - from);
  for (size_t c = 0; c < columns_.size(); ++c) {
    const ColumnData& cd = columns_[c];
    const std::span<const std::byte> data = b.column(c);
    if (skip_fill && b.fill_only(c, from, to)) continue;
    put(cd.dataset.get(), cd.mem_type, row, n, data.data() + from * cd.elem_size);
  }
  std::vector<int64_t> index(static_cast<size_t>(n));
  for (size_t k = from; k < to; ++k) index[k - from] = b.index(k);
  put(point_.get(), H5T_NATIVE_INT64, row, n, index.data());
  // The rows first, then their done marks (a job killed in between redoes them).
  if (fixed_) {
    const std::vector<uint8_t> ones(static_cast<size_t>(n), 1);
    put(done_.get(), H5T_NATIVE_UINT8, row, n, ones.data());
  }
}

void PointsTable::write_stored(const RowBlock& b) {
  // Each dataset's chunk as the evaluating rank filtered it (io/chunk_encoder.hpp), written
  // past the filters and the chunk cache (H5Dwrite_chunk, HDF5 1.10.3; filter mask 0: every
  // filter applied); /points/done last, after the rows it marks.
  for (const RowBlock::StoredChunk& c : b.stored()) {
    RAPID_ASSERT(fixed_ && c.first_row >= 0 && c.first_row + c.rows <= rows_ &&
                     c.data.size() == RowBlock::datasets(),
                 "a stored chunk of the fixed table");
    const hsize_t offset = static_cast<hsize_t>(c.first_row);
    for (size_t d = 0; d < c.data.size(); ++d) {
      if (c.data[d].empty()) continue;  // the fill value throughout
      h5::check(
          H5Dwrite_chunk(dataset(d), H5P_DEFAULT, 0, &offset, c.data[d].size(), c.data[d].data()),
          "H5Dwrite_chunk");
    }
  }
}

hid_t PointsTable::dataset(size_t d) const {
  const size_t columns = columns_.size();
  return d < columns ? columns_[d].dataset.get() : d == columns ? point_.get() : done_.get();
}

std::string PointsTable::dataset_name(size_t d) const {
  const size_t columns = columns_.size();
  return d < columns ? columns_[d].column->name : d == columns ? kPointDimension : "done";
}

void PointsTable::copy_stored(hid_t from_file) {
  // Every allocated chunk of each dataset as stored (filter mask and bytes): H5Dread_chunk,
  // H5Dwrite_chunk (HDF5 1.10.3; the chunk index through H5Dget_chunk_info, 1.10.5).
  std::vector<std::byte> buffer;
  for (size_t d = 0; d < RowBlock::datasets(); ++d) {
    const std::string path = "/points/" + dataset_name(d);
    h5::Dataset from(H5Dopen2(from_file, path.c_str(), H5P_DEFAULT), "H5Dopen2");
    h5::Dataspace space(H5Dget_space(from.get()), "H5Dget_space");
    hsize_t chunks = 0;
    h5::check(H5Dget_num_chunks(from.get(), space.get(), &chunks), "H5Dget_num_chunks");
    for (hsize_t i = 0; i < chunks; ++i) {
      hsize_t offset = 0, size = 0;
      haddr_t address = 0;
      unsigned mask = 0;
      h5::check(H5Dget_chunk_info(from.get(), space.get(), i, &offset, &mask, &address, &size),
                "H5Dget_chunk_info");
      buffer.resize(size);
      uint32_t read_mask = 0;
      h5::check(H5Dread_chunk(from.get(), H5P_DEFAULT, &offset, &read_mask, buffer.data()),
                "H5Dread_chunk");
      h5::check(H5Dwrite_chunk(dataset(d), H5P_DEFAULT, read_mask, &offset, size, buffer.data()),
                "H5Dwrite_chunk");
    }
  }
}

void PointsTable::write(const RowBlock& b, bool first_write) {
  write_stored(b);
  const auto n = static_cast<size_t>(b.count());
  if (n == 0) return;
  if (!fixed_) {
    const int64_t at = rows_;
    extend(rows_ + static_cast<int64_t>(n));
    put_run(b, 0, n, at, first_write);
    return;
  }
  // Runs of consecutive point indices, each at its rows.
  for (size_t a = 0; a < n;) {
    size_t e = a + 1;
    while (e < n && b.index(e) == b.index(e - 1) + 1) ++e;
    RAPID_ASSERT(b.index(a) >= 0 && b.index(e - 1) < rows_, "rows inside [0, N)");
    put_run(b, a, e, b.index(a), first_write);
    a = e;
  }
}

int64_t PointsTable::point_at(int64_t row) {
  int64_t v = 0;
  h5::Dataspace file_space(H5Dget_space(point_.get()), "H5Dget_space");
  const hsize_t start = static_cast<hsize_t>(row), one = 1;
  h5::check(H5Sselect_hyperslab(file_space.get(), H5S_SELECT_SET, &start, nullptr, &one, nullptr),
            "H5Sselect_hyperslab");
  h5::Dataspace mem_space(H5Screate_simple(1, &one, nullptr), "H5Screate_simple");
  h5::check(
      H5Dread(point_.get(), H5T_NATIVE_INT64, mem_space.get(), file_space.get(), H5P_DEFAULT, &v),
      "H5Dread");
  return v;
}

int64_t PointsTable::position_of(int64_t index) {
  int64_t lo = 0, hi = rows_;  // /points/point ascends in an appended table
  while (lo < hi) {
    const int64_t mid = lo + (hi - lo) / 2;
    if (point_at(mid) < index)
      lo = mid + 1;
    else
      hi = mid;
  }
  return lo < rows_ && point_at(lo) == index ? lo : -1;
}

void PointsTable::update(const RowBlock& b) {
  if (fixed_) return write(b, false);
  for (size_t k = 0; k < static_cast<size_t>(b.count()); ++k) {
    // A point the table does not hold (--keep top-K and --fidelity auto simulating more
    // points per group than were kept) is not written.
    const int64_t at = position_of(b.index(k));
    if (at >= 0) put_run(b, k, k + 1, at, false);
  }
}

std::vector<double> PointsTable::read_column(std::string_view name, int64_t first, int64_t count) {
  RAPID_ASSERT(first >= 0 && count >= 0 && first + count <= rows_, "rows inside the table");
  const auto it = std::find_if(columns_.begin(), columns_.end(),
                               [&](const ColumnData& cd) { return name == cd.column->name; });
  RAPID_ASSERT(it != columns_.end(), "a column of the schema");
  std::vector<double> out(static_cast<size_t>(count));
  if (count == 0) return out;
  h5::Dataspace file_space(H5Dget_space(it->dataset.get()), "H5Dget_space");
  const hsize_t start = static_cast<hsize_t>(first), n = static_cast<hsize_t>(count);
  h5::check(H5Sselect_hyperslab(file_space.get(), H5S_SELECT_SET, &start, nullptr, &n, nullptr),
            "H5Sselect_hyperslab");
  h5::Dataspace mem_space(H5Screate_simple(1, &n, nullptr), "H5Screate_simple");
  std::vector<std::byte> raw(static_cast<size_t>(count) * it->elem_size);
  h5::check(H5Dread(it->dataset.get(), it->mem_type, mem_space.get(), file_space.get(), H5P_DEFAULT,
                    raw.data()),
            "H5Dread");
  for (size_t k = 0; k < out.size(); ++k) {
    const std::byte* p = raw.data() + k * it->elem_size;
    switch (it->column->type) {
      case ColumnType::Int32: {
        int32_t v;
        std::memcpy(&v, p, sizeof v);
        out[k] = v;
        break;
      }
      case ColumnType::UInt32: {
        uint32_t v;
        std::memcpy(&v, p, sizeof v);
        out[k] = v;
        break;
      }
      case ColumnType::UInt8:
      case ColumnType::Enum8:
        out[k] = static_cast<double>(static_cast<uint8_t>(*p));
        break;
      case ColumnType::Float64:
        std::memcpy(&out[k], p, sizeof(double));
        break;
    }
  }
  return out;
}

std::string PointsTable::verify(const std::vector<uint8_t>& done) {
  // Each chunk's rows that hold a done row, every dataset read through its filters (the
  // checksum is checked on each chunk read); a done row must hold its own point index (an
  // unwritten chunk reads as the fill value 0).
  const size_t n = done.size();
  std::vector<std::byte> buffer;
  std::vector<int64_t> points;
  for (size_t first = 0; first < n; first += static_cast<size_t>(kChunkRows)) {
    const size_t last = std::min(n, first + static_cast<size_t>(kChunkRows));
    if (std::none_of(done.begin() + static_cast<std::ptrdiff_t>(first),
                     done.begin() + static_cast<std::ptrdiff_t>(last),
                     [](uint8_t d) { return d != 0; }))
      continue;
    const hsize_t start = first, count = last - first;
    auto read = [&](hid_t ds, hid_t type, void* out) {
      h5::Dataspace file_space(H5Dget_space(ds), "H5Dget_space");
      h5::Dataspace mem_space(H5Screate_simple(1, &count, nullptr), "H5Screate_simple");
      return H5Sselect_hyperslab(file_space.get(), H5S_SELECT_SET, &start, nullptr, &count,
                                 nullptr) >= 0 &&
             H5Dread(ds, type, mem_space.get(), file_space.get(), H5P_DEFAULT, out) >= 0;
    };
    const std::string rows = fmt::format("rows {}-{}", first, last - 1);
    for (const ColumnData& cd : columns_) {
      buffer.resize(count * cd.elem_size);
      if (!read(cd.dataset.get(), cd.mem_type, buffer.data()))
        return fmt::format("/points/{} {}: a chunk fails its checksum or does not decompress",
                           cd.column->name, rows);
    }
    points.resize(count);
    if (!read(point_.get(), H5T_NATIVE_INT64, points.data()))
      return fmt::format("/points/point {}: a chunk fails its checksum or does not decompress",
                         rows);
    for (size_t k = first; k < last; ++k)
      if (done[k] && points[k - first] != static_cast<int64_t>(k))
        return fmt::format("/points/done row {}: marked written, but its row holds point {}", k,
                           points[k - first]);
  }
  return "";
}

std::vector<uint8_t> PointsTable::read_done() {
  std::vector<uint8_t> mask(static_cast<size_t>(rows_));
  if (rows_ > 0)
    h5::check(H5Dread(done_.get(), H5T_NATIVE_UINT8, H5S_ALL, H5S_ALL, H5P_DEFAULT, mask.data()),
              "H5Dread");
  return mask;
}

void PointsTable::close() {
  for (ColumnData& cd : columns_) {
    cd.dataset.close();
    cd.enum_type.close();
  }
  columns_.clear();
  point_.close();
  done_.close();
  group_.close();
}

}  // namespace rapid
