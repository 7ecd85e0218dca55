#include "rapid/io/result_store.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <numeric>
#include <system_error>
#include <variant>

#include "rapid/common/error.hpp"
#include "rapid/common/version.hpp"
#include "rapid/io/netcdf_layout.hpp"
#include "rapid/io/variant_table.hpp"

namespace fs = std::filesystem;

namespace rapid {

namespace {}  // namespace

// Temporary file, unique per run (the Slurm job when there is one, and rank 0's pid), with
// a short name in the output's directory: MPI-IO (ROMIO) aborts on file names of more than
// about 240 characters, so the file's own name, which may be up to NAME_MAX long, only
// appears in the final rename.
std::string ResultStore::temp_path_for(const std::string& output) {
  // The partial file of an output: the same name for every run writing it (so a later run
  // can resume it), short (a 64-bit FNV-1a hash of the output's absolute path).
  std::error_code ec;
  const std::string abs = fs::absolute(output, ec).lexically_normal().string();
  uint64_t h = 0xcbf29ce484222325ull;  // FNV-1a 64-bit offset basis (Fowler, Noll, Vo)
  for (unsigned char c : abs) h = (h ^ c) * 1099511628211ull;
  return (fs::path(output).parent_path() / fmt::format(".rapid-sweep.partial-{:016x}.h5", h))
      .string();
}

namespace {

std::string utc_now_iso8601() {
  const std::time_t now = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&now, &tm);
  char text[32];
  std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return text;
}

// Converts one column of `rows` to storage type T into `out` (memcpy: `out` is raw bytes).
template <typename T>
void convert(std::span<const ResultRow> rows, double (*get)(const ResultRow&), std::byte* out) {
  for (size_t k = 0; k < rows.size(); ++k) {
    const T v = static_cast<T>(get(rows[k]));
    std::memcpy(out + k * sizeof(T), &v, sizeof(T));
  }
}

template <typename T>
void widen(const std::byte* in, size_t n, std::vector<double>& out) {
  for (size_t k = 0; k < n; ++k) {
    T v;
    std::memcpy(&v, in + k * sizeof(T), sizeof(T));
    out[k] = static_cast<double>(v);
  }
}

// What differs between a partial file's /resume/key and this run's (resume_key() in
// rapid_sweep_main.cpp: line 1 the version, 2 the fidelity, 3 the point count, then the
// job, model, network and hardware texts), for the refusal's message.
std::string key_difference(const std::string& file_key, const std::string& run_key) {
  static constexpr const char* kWhat[] = {"rapid-sweep version", "fidelity", "point count"};
  size_t a = 0, b = 0;
  for (int line = 0;; ++line) {
    const size_t ea = std::min(file_key.find('\n', a), file_key.size());
    const size_t eb = std::min(run_key.find('\n', b), run_key.size());
    const std::string la = file_key.substr(a, ea - a), lb = run_key.substr(b, eb - b);
    if (la != lb) {
      if (line >= 3) return "another job, model, hardware or network file text";
      return fmt::format("another {} ('{}' in the file, '{}' now)", kWhat[line], la, lb);
    }
    if (ea == file_key.size() || eb == run_key.size()) return "another key";
    a = ea + 1;
    b = eb + 1;
  }
}

}  // namespace

ResultStore::ResultStore(const MpiEnv& mpi, std::string output_path, const SweepSpec& spec,
                         int64_t num_points, int64_t baseline_index, const std::string& resume_key,
                         ResumeMode resume)
    : mpi_(mpi),
      spec_(spec),
      output_path_(std::move(output_path)),
      num_points_(num_points),
      baseline_index_(baseline_index) {
  RAPID_ASSERT(num_points_ > 0, "a sweep has at least one point");
  h5::silence_error_printing();
  temp_path_ = mpi_.broadcast(mpi_.is_root() ? temp_path_for(output_path_) : std::string());
  if (resume != ResumeMode::No && open_partial(resume_key, resume)) return;
  try {
    // The string tables and enum types first, by rank 0 through a serial handle (variable-
    // length strings), then every rank opens the file with MPI-IO and lays out /points.
    create_tables(resume_key);
    open_file();
    hardware_ = h5::Group(H5Gopen2(file_.get(), "hardware", H5P_DEFAULT), "H5Gopen2");
    scenarios_ = h5::Group(H5Gopen2(file_.get(), "scenarios", H5P_DEFAULT), "H5Gopen2");
    create_points(false);
    // The metadata on disk once: from here on only raw data is written, at offsets fixed at
    // creation, so a killed job leaves a readable file.
    h5::check(H5Fflush(file_.get(), H5F_SCOPE_GLOBAL), "H5Fflush");
    missing_ = {{0, num_points_}};
  } catch (...) {
    abandon();
    throw;
  }
}

bool ResultStore::open_partial(const std::string& resume_key, ResumeMode mode) {
  std::error_code ec;
  const bool exists = mpi_.broadcast(
      static_cast<int64_t>(mpi_.is_root() && fs::is_regular_file(temp_path_, ec) ? 1 : 0));
  if (!exists) return false;
  h5::PropertyList fapl(H5Pcreate(H5P_FILE_ACCESS), "H5Pcreate");
  h5::check(H5Pset_fapl_mpio(fapl.get(), mpi_.comm(), MPI_INFO_NULL), "H5Pset_fapl_mpio");
  const hid_t id = H5Fopen(temp_path_.c_str(), H5F_ACC_RDWR, fapl.get());
  if (id < 0)
    throw InputError(temp_path_, "<file>", temp_path_,
                     "a partial result file rapid-sweep can reopen (delete it to start again)");
  file_ = h5::File(id, "H5Fopen");
  dxpl_ = h5::PropertyList(H5Pcreate(H5P_DATASET_XFER), "H5Pcreate");
  h5::check(H5Pset_dxpl_mpio(dxpl_.get(), H5FD_MPIO_INDEPENDENT), "H5Pset_dxpl_mpio");
  // The key (rank 0 reads, every rank compares the same broadcast text).
  std::string key;
  std::string mask;
  if (mpi_.is_root()) {
    const std::vector<std::string> keys = h5::read_strings(file_.get(), "/resume/key");
    key = keys.empty() ? std::string() : keys.front();
    h5::Dataset done(H5Dopen2(file_.get(), "/points/done", H5P_DEFAULT), "H5Dopen2");
    mask.resize(static_cast<size_t>(num_points_));
    h5::check(H5Dread(done.get(), H5T_NATIVE_UINT8, H5S_ALL, H5S_ALL, dxpl_.get(), mask.data()),
              "H5Dread");
  }
  key = mpi_.broadcast(key);
  if (key != resume_key && mode == ResumeMode::IfSameKey) {
    file_.close();
    dxpl_.reset();
    if (mpi_.is_root())
      std::fprintf(stderr,
                   "rapid-sweep: note: %s is the partial file of another job, config, fidelity "
                   "or version: starting again\n",
                   temp_path_.c_str());
    return false;
  }
  if (key != resume_key)
    throw InputError(temp_path_, "resume/key", key_difference(key, resume_key),
                     "the job, configs, fidelity and rapid-sweep version of the run that wrote "
                     "it (run without --resume, or with --overwrite, to start again)");
  mask = mpi_.broadcast(mask);
  points_ = h5::Group(H5Gopen2(file_.get(), "points", H5P_DEFAULT), "H5Gopen2");
  hardware_ = h5::Group(H5Gopen2(file_.get(), "hardware", H5P_DEFAULT), "H5Gopen2");
  scenarios_ = h5::Group(H5Gopen2(file_.get(), "scenarios", H5P_DEFAULT), "H5Gopen2");
  const hsize_t dims = static_cast<hsize_t>(num_points_);
  file_space_ = h5::Dataspace(H5Screate_simple(1, &dims, nullptr), "H5Screate_simple");
  create_points(true);
  for (int64_t i = 0; i < num_points_;) {  // runs of rows not done
    if (mask[static_cast<size_t>(i)]) {
      ++i;
      continue;
    }
    int64_t j = i;
    while (j < num_points_ && !mask[static_cast<size_t>(j)]) ++j;
    missing_.push_back({i, j});
    i = j;
  }
  resumed_ = true;
  return true;
}

ResultStore::~ResultStore() {
  if (!committed_) abandon();
}

void ResultStore::abandon() noexcept {
  if (mpi_.size() == 1) {
    columns_.clear();
    done_.reset();
    file_space_.reset();
    dxpl_.reset();
    points_.reset();
    hardware_.reset();
    scenarios_.reset();
    file_.reset();
  } else {
    // Closing is collective (H5Fclose ends in MPI_File_close): leave the handles open.
    for (ColumnData& c : columns_) {
      c.dataset.release();
      c.enum_type.release();
    }
    done_.release();
    file_space_.release();
    dxpl_.release();
    points_.release();
    hardware_.release();
    scenarios_.release();
    file_.release();
  }
  // Any rank may get here first (a failing rank aborts the job right after): removing is
  // idempotent.
  // A resumed run keeps its partial file whatever happens: it holds earlier runs' rows.
  std::error_code ec;
  if (!temp_path_.empty() && !resumed_) fs::remove(temp_path_, ec);
}

void ResultStore::open_file() {
  h5::PropertyList fapl(H5Pcreate(H5P_FILE_ACCESS), "H5Pcreate");
  h5::check(H5Pset_fapl_mpio(fapl.get(), mpi_.comm(), MPI_INFO_NULL), "H5Pset_fapl_mpio");
  file_ = h5::File(H5Fopen(temp_path_.c_str(), H5F_ACC_RDWR, fapl.get()), "H5Fopen");
  dxpl_ = h5::PropertyList(H5Pcreate(H5P_DATASET_XFER), "H5Pcreate");
  h5::check(H5Pset_dxpl_mpio(dxpl_.get(), H5FD_MPIO_INDEPENDENT), "H5Pset_dxpl_mpio");
}

void ResultStore::create_points(bool open_existing) {
  const hsize_t dims = static_cast<hsize_t>(num_points_);
  if (!open_existing) {
    points_ = h5::Group(H5Gcreate2(file_.get(), "points", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT),
                        "H5Gcreate2");
    file_space_ = h5::Dataspace(H5Screate_simple(1, &dims, nullptr), "H5Screate_simple");
  }
  h5::PropertyList dcpl(H5Pcreate(H5P_DATASET_CREATE), "H5Pcreate");
  h5::check(H5Pset_layout(dcpl.get(), H5D_CONTIGUOUS), "H5Pset_layout");
  h5::check(H5Pset_alloc_time(dcpl.get(), H5D_ALLOC_TIME_EARLY), "H5Pset_alloc_time");
  h5::check(H5Pset_fill_time(dcpl.get(), H5D_FILL_TIME_NEVER), "H5Pset_fill_time");

  // The dimension of every column (netcdf_layout.hpp): /points/point, the row index.
  h5::Dataset point;
  if (!open_existing) point = create_point_scale(dcpl.get());

  const auto columns = result_columns();
  columns_.resize(columns.size());
  for (size_t i = 0; i < columns.size(); ++i) {
    const Column& col = columns[i];
    ColumnData& cd = columns_[i];
    cd.column = &col;
    switch (col.type) {
      case ColumnType::Int32:
        cd.mem_type = H5T_NATIVE_INT32;
        cd.elem_size = sizeof(int32_t);
        break;
      case ColumnType::UInt8:
        cd.mem_type = H5T_NATIVE_UINT8;
        cd.elem_size = sizeof(uint8_t);
        break;
      case ColumnType::UInt32:
        cd.mem_type = H5T_NATIVE_UINT32;
        cd.elem_size = sizeof(uint32_t);
        break;
      case ColumnType::Float64:
        cd.mem_type = H5T_NATIVE_DOUBLE;
        cd.elem_size = sizeof(double);
        break;
      case ColumnType::Enum8:
        // The committed type in the root group (netCDF-4 reads it as an NC_ENUM type).
        cd.enum_type = open_enum_type(file_.get(), col);
        cd.mem_type = cd.enum_type.get();
        cd.elem_size = sizeof(uint8_t);
        break;
    }
    if (open_existing) {
      cd.dataset = h5::Dataset(H5Dopen2(points_.get(), col.name, H5P_DEFAULT), "H5Dopen2");
      continue;
    }
    cd.dataset = h5::Dataset(H5Dcreate2(points_.get(), col.name, cd.mem_type, file_space_.get(),
                                        H5P_DEFAULT, dcpl.get(), H5P_DEFAULT),
                             "H5Dcreate2");
    h5::write_attribute(cd.dataset.get(), "unit", std::string_view(col.unit));
    h5::write_attribute(cd.dataset.get(), "description", std::string_view(col.description));
    write_cf_attributes(cd.dataset.get(), col);
    h5::attach_scale(cd.dataset.get(), point.get());
  }
  if (open_existing) {
    done_ = h5::Dataset(H5Dopen2(points_.get(), "done", H5P_DEFAULT), "H5Dopen2");
    return;
  }
  // The done mask: 0 (the fill value, written at allocation) until the row is written.
  h5::PropertyList done_dcpl(H5Pcopy(dcpl.get()), "H5Pcopy");
  const uint8_t zero = 0;
  h5::check(H5Pset_fill_value(done_dcpl.get(), H5T_NATIVE_UINT8, &zero), "H5Pset_fill_value");
  h5::check(H5Pset_fill_time(done_dcpl.get(), H5D_FILL_TIME_ALLOC), "H5Pset_fill_time");
  done_ = h5::Dataset(H5Dcreate2(points_.get(), "done", H5T_NATIVE_UINT8, file_space_.get(),
                                 H5P_DEFAULT, done_dcpl.get(), H5P_DEFAULT),
                      "H5Dcreate2");
  h5::write_attribute(done_.get(), "unit", std::string_view(""));
  h5::write_attribute(done_.get(), "description",
                      std::string_view("1: the row is written (a stopped sweep resumes the 0s)"));
  const uint8_t done_values[] = {0, 1};  // CF sec 3.5 flags
  h5::write_attribute(done_.get(), "flag_values", std::span<const uint8_t>(done_values));
  h5::write_attribute(done_.get(), "flag_meanings", std::string_view("missing written"));
  h5::write_attribute(done_.get(), "long_name",
                      std::string_view("row written (a stopped sweep resumes the missing rows)"));
  h5::attach_scale(done_.get(), point.get());
  point.close();
}

h5::Dataset ResultStore::create_point_scale(hid_t dcpl) {
  h5::Dataset point(H5Dcreate2(points_.get(), kPointDimension, H5T_NATIVE_INT64, file_space_.get(),
                               H5P_DEFAULT, dcpl, H5P_DEFAULT),
                    "H5Dcreate2");
  h5::make_scale(point.get(), kPointDimension);
  h5::write_attribute(point.get(), "unit", std::string_view(""));
  h5::write_attribute(point.get(), "description",
                      std::string_view("row index: row i is point i of the sweep"));
  h5::write_attribute(point.get(), "units", std::string_view("1"));
  h5::write_attribute(point.get(), "long_name", std::string_view("point of the sweep (row index)"));
  // Its values 0..N-1: each rank writes its share, in pieces of at most 1 Mi rows.
  const int64_t per_rank = (num_points_ + mpi_.size() - 1) / mpi_.size();
  const int64_t first = std::min(num_points_, per_rank * mpi_.rank());
  const int64_t last = std::min(num_points_, first + per_rank);
  constexpr int64_t kPiece = int64_t{1} << 20;
  std::vector<int64_t> values;
  for (int64_t at = first; at < last; at += kPiece) {
    const int64_t n = std::min(kPiece, last - at);
    values.resize(static_cast<size_t>(n));
    std::iota(values.begin(), values.end(), at);
    const h5::Dataspace mem_space = select_rows(at, n);
    h5::check(H5Dwrite(point.get(), H5T_NATIVE_INT64, mem_space.get(), file_space_.get(),
                       dxpl_.get(), values.data()),
              "H5Dwrite");
  }
  return point;
}

void ResultStore::create_tables(const std::string& resume_key) {
  // Rank 0 creates the file through a serial handle: the string tables are variable-length
  // strings (netCDF-4's NC_STRING), which HDF5 1.10 does not write through MPI-IO; the other
  // ranks wait for its outcome.
  std::string error;
  if (mpi_.is_root()) {
    try {
      const size_t n = spec_.hardware.size();
      RAPID_ASSERT(spec_.hardware_sources.size() == n, "one source per hardware variant");
      std::vector<std::string> names, yamls;
      for (size_t i = 0; i < n; ++i) {
        names.push_back(spec_.hardware[i].name);
        yamls.push_back(spec_.hardware_sources[i].yaml);
      }
      // The scenarios (docs/nonideal.md): names and what each turns on.
      std::vector<std::string> scenario_names, what;
      for (const NonIdealSpec& s : spec_.scenarios) {
        scenario_names.push_back(s.name);
        what.push_back(describe_scenario(s));
      }
      h5::File f(H5Fcreate(temp_path_.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT),
                 "H5Fcreate");
      commit_enum_types(f.get());
      // The dimensions are named after the /points columns that index them.
      write_string_table(f.get(), "hardware", "hardware_index", "hardware variant",
                         {{"names", "name of the hardware variant", names},
                          {"yaml", "the variant's YAML text", yamls}});
      write_variant_table(f.get(), spec_);
      write_string_table(f.get(), "scenarios", "scenario", "non-ideal scenario",
                         {{"names", "name of the scenario", scenario_names},
                          {"description", "what the scenario turns on (docs/nonideal.md)", what}});
      // What a resumed run must match.
      write_string_table(f.get(), "resume", "entry", "entry",
                         {{"key", "what a resumed run must match", {resume_key}}});
      f.close();
    } catch (const std::exception& e) {
      error = e.what();
    }
  }
  error = mpi_.broadcast(error);
  if (!error.empty()) throw InternalError(error);
}

h5::Dataspace ResultStore::select_rows(int64_t first_index, int64_t count) {
  const hsize_t start = static_cast<hsize_t>(first_index);
  const hsize_t n = static_cast<hsize_t>(count);
  h5::check(H5Sselect_hyperslab(file_space_.get(), H5S_SELECT_SET, &start, nullptr, &n, nullptr),
            "H5Sselect_hyperslab");
  return h5::Dataspace(H5Screate_simple(1, &n, nullptr), "H5Screate_simple");
}

void ResultStore::write(int64_t first_index, std::span<const ResultRow> rows) {
  if (rows.empty()) return;
  const auto n = static_cast<int64_t>(rows.size());
  RAPID_ASSERT(first_index >= 0 && first_index + n <= num_points_, "rows inside [0, N)");
  const h5::Dataspace mem_space = select_rows(first_index, n);
  if (buffer_.size() < rows.size() * sizeof(double)) buffer_.resize(rows.size() * sizeof(double));
  for (ColumnData& cd : columns_) {
    std::byte* out = buffer_.data();
    switch (cd.column->type) {
      case ColumnType::Int32:
        convert<int32_t>(rows, cd.column->get, out);
        break;
      case ColumnType::UInt8:
      case ColumnType::Enum8:
        convert<uint8_t>(rows, cd.column->get, out);
        break;
      case ColumnType::UInt32:
        convert<uint32_t>(rows, cd.column->get, out);
        break;
      case ColumnType::Float64:
        convert<double>(rows, cd.column->get, out);
        break;
    }
    h5::check(H5Dwrite(cd.dataset.get(), cd.mem_type, mem_space.get(), file_space_.get(),
                       dxpl_.get(), out),
              "H5Dwrite");
  }
  // The rows first, then their done marks (a job killed in between redoes them).
  std::vector<uint8_t> ones(rows.size(), 1);
  h5::check(H5Dwrite(done_.get(), H5T_NATIVE_UINT8, mem_space.get(), file_space_.get(), dxpl_.get(),
                     ones.data()),
            "H5Dwrite");
}

std::vector<double> ResultStore::read_column(std::string_view name, int64_t first_index,
                                             int64_t count) {
  RAPID_ASSERT(first_index >= 0 && count >= 0 && first_index + count <= num_points_,
               "rows inside [0, N)");
  const auto it = std::find_if(columns_.begin(), columns_.end(),
                               [&](const ColumnData& cd) { return name == cd.column->name; });
  RAPID_ASSERT(it != columns_.end(), "a column of the schema");
  std::vector<double> out(static_cast<size_t>(count));
  if (count == 0) return out;
  const h5::Dataspace mem_space = select_rows(first_index, count);
  std::vector<std::byte> raw(static_cast<size_t>(count) * it->elem_size);
  h5::check(H5Dread(it->dataset.get(), it->mem_type, mem_space.get(), file_space_.get(),
                    dxpl_.get(), raw.data()),
            "H5Dread");
  switch (it->column->type) {
    case ColumnType::Int32:
      widen<int32_t>(raw.data(), out.size(), out);
      break;
    case ColumnType::UInt8:
    case ColumnType::Enum8:
      widen<uint8_t>(raw.data(), out.size(), out);
      break;
    case ColumnType::UInt32:
      widen<uint32_t>(raw.data(), out.size(), out);
      break;
    case ColumnType::Float64:
      widen<double>(raw.data(), out.size(), out);
      break;
  }
  return out;
}

std::string mpi_library_version() {
  char text[MPI_MAX_LIBRARY_VERSION_STRING] = {};
  int len = 0;
  if (MPI_Get_library_version(text, &len) != MPI_SUCCESS) return "unknown";
  std::string v(text, static_cast<size_t>(std::max(0, len)));
  const size_t nl = v.find_first_of("\n,");
  return nl == std::string::npos ? v : v.substr(0, nl);
}

std::string hdf5_library_version() {
  unsigned major = 0, minor = 0, release = 0;
  if (H5get_libversion(&major, &minor, &release) < 0) return "unknown";
  return fmt::format("{}.{}.{}", major, minor, release);
}

void ResultStore::write_root_attributes(const RunProvenance& run) {
  using Value = std::variant<std::string, int64_t, double>;
  const double points_per_s =
      run.wall_time_s > 0 ? static_cast<double>(num_points_) / run.wall_time_s : 0.0;
  std::vector<std::pair<const char*, Value>> attrs = {
      {"format", std::string("rapid-sweep results")},
      {"format_version", int64_t{2}},
      {"version", std::string(version())},
      {"git_revision", std::string(git_revision())},
      {"command_line", run.command_line},
      {"job_name", spec_.name},
      {"mode", std::string(kJobModeNames[static_cast<int>(spec_.mode)])},
      {"serving_stack", spec_.mode == JobMode::Inference ? spec_.serving.stack.name : ""},
      {"serving_stack_path", spec_.mode == JobMode::Inference ? spec_.serving.stack.path : ""},
      {"job_path", spec_.job.path},
      {"job_yaml", spec_.job.yaml},
      {"model_name", spec_.model.name},
      {"model_path", spec_.model_source.path},
      {"model_yaml", spec_.model_source.yaml},
      {"network_name", spec_.network.name},
      {"network_path", spec_.network_source.path},
      {"network_yaml", spec_.network_source.yaml},
      {"fidelity", run.fidelity},
      {"slurm_job_id", std::string(std::getenv("SLURM_JOB_ID") ? std::getenv("SLURM_JOB_ID") : "")},
      {"hostnames", run.hostnames},
      {"mpi_library_version", mpi_library_version()},
      {"hdf5_library_version", hdf5_library_version()},
      {"ranks", int64_t{mpi_.size()}},
      {"threads_per_rank", run.threads_per_rank},
      {"num_points", num_points_},
      {"baseline_index", baseline_index_},
      {"wall_time_s", run.wall_time_s},
      {"points_per_s", points_per_s},
      {"peak_rss_bytes", run.peak_rss_bytes},
      {"created", utc_now_iso8601()},
  };
  // Attribute writes are collective metadata operations: every rank writes rank 0's values.
  // (A pair, not a structured binding: clang 14 cannot capture bindings in a lambda.)
  for (auto& attr : attrs) {
    std::visit([&](auto& v) { v = mpi_.broadcast(v); }, attr.second);
    std::visit([&](const auto& v) { h5::write_attribute(file_.get(), attr.first, v); },
               attr.second);
  }
}

void ResultStore::close_all() {
  for (ColumnData& cd : columns_) {
    cd.dataset.close();
    cd.enum_type.close();
  }
  columns_.clear();
  done_.close();
  file_space_.close();
  dxpl_.close();
  points_.close();
  hardware_.close();
  scenarios_.close();
  file_.close();
}

void ResultStore::keep_partial() {
  RAPID_ASSERT(!committed_, "keep_partial() instead of commit()");
  close_all();
  mpi_.barrier();
  committed_ = true;  // the partial file stays where it is
}

void ResultStore::commit(const RunProvenance& run) {
  RAPID_ASSERT(!committed_, "commit() once");
  write_root_attributes(run);
  close_all();
  mpi_.barrier();  // every rank's data is on disk before the file appears under its name

  std::string error;
  if (mpi_.is_root()) {
    std::error_code ec;
    fs::rename(temp_path_, output_path_, ec);
    if (ec)
      error = fmt::format("cannot rename {} to {}: {}", temp_path_, output_path_, ec.message());
  }
  error = mpi_.broadcast(error);
  if (!error.empty()) throw InternalError(error);
  committed_ = true;
}

}  // namespace rapid
