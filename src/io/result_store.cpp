#include "rapid/io/result_store.hpp"

#include "rapid/common/fnv1a.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <numeric>
#include <system_error>
#include <variant>

#include "rapid/common/error.hpp"
#include "rapid/common/file_lock.hpp"
#include "rapid/common/version.hpp"
#include "rapid/io/netcdf_layout.hpp"
#include "rapid/io/variant_table.hpp"

namespace fs = std::filesystem;

namespace rapid {

// Temporary file, unique per run (the Slurm job when there is one, and rank 0's pid), with
// a short name in the output's directory: MPI-IO (ROMIO) aborts on file names of more than
// about 240 characters, so the file's own name, which may be up to NAME_MAX long, only
// appears in the final rename.
std::string ResultStore::temp_path_for(const std::string& output) {
  // The partial file of an output: the same name for every run writing it (so a later run
  // can resume it), short (a 64-bit FNV-1a hash of the output's absolute path).
  std::error_code ec;
  const std::string abs = fs::absolute(output, ec).lexically_normal().string();
  const uint64_t h = fnv1a_bytes(kFnvOffsetBasis, abs.data(), abs.size());
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
      if (line >= 3)
        return "another job or config file text (job, model, network, hardware, intervals, "
               "training or serving stack)";
      return fmt::format("another {} ('{}' in the file, '{}' now)", kWhat[line], la, lb);
    }
    if (ea == file_key.size() || eb == run_key.size()) return "another key";
    a = ea + 1;
    b = eb + 1;
  }
}

}  // namespace

namespace {

// Longest time between flushes of a resumable file: what a killed job may lose.
constexpr double kFlushInterval = 2.0;
// Rows after which a flush reopens the file instead (empties the metadata cache).
constexpr int64_t kReopenRows = int64_t{1} << 21;

double now_s() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

// Serial access with a metadata cache that never evicts: dirty metadata reaches the file
// only at a flush, so the file on disk is always the last flush's (rows written after it
// sit in space the flushed metadata does not reference).
h5::PropertyList file_access() {
  h5::PropertyList fapl(H5Pcreate(H5P_FILE_ACCESS), "H5Pcreate");
  H5AC_cache_config_t cfg;
  cfg.version = H5AC__CURR_CACHE_CONFIG_VERSION;
  h5::check(H5Pget_mdc_config(fapl.get(), &cfg), "H5Pget_mdc_config");
  cfg.evictions_enabled = false;
  cfg.incr_mode = H5C_incr__off;
  cfg.flash_incr_mode = H5C_flash_incr__off;
  cfg.decr_mode = H5C_decr__off;
  h5::check(H5Pset_mdc_config(fapl.get(), &cfg), "H5Pset_mdc_config");
  // No flock: the temporary file is this run's alone, and a reader (h5py on a stopped
  // sweep's partial file) must not be refused while a stopped rank still exists.
  h5::check(H5Pset_file_locking(fapl.get(), false, true), "H5Pset_file_locking");
  return fapl;
}

// Missing ranges as text (for the broadcast): "a b\n" per range.
std::string ranges_text(const std::vector<std::pair<int64_t, int64_t>>& r) {
  std::string out;
  for (const auto& [a, b] : r) out += fmt::format("{} {}\n", a, b);
  return out;
}

std::vector<std::pair<int64_t, int64_t>> parse_ranges(const std::string& text) {
  std::vector<std::pair<int64_t, int64_t>> out;
  size_t at = 0;
  while (at < text.size()) {
    const size_t nl = text.find('\n', at);
    long long a = 0, b = 0;
    std::sscanf(text.c_str() + at, "%lld %lld", &a, &b);
    out.push_back({a, b});
    at = nl == std::string::npos ? text.size() : nl + 1;
  }
  return out;
}

}  // namespace

ResultStore::ResultStore(const MpiEnv& mpi, std::string output_path, const SweepSpec& spec,
                         int64_t num_points, int64_t baseline_index, const std::string& resume_key,
                         ResumeMode resume, bool appended)
    : mpi_(mpi),
      spec_(spec),
      output_path_(std::move(output_path)),
      num_points_(num_points),
      baseline_index_(baseline_index),
      appended_(appended) {
  RAPID_ASSERT(num_points_ > 0, "a sweep has at least one point");
  h5::silence_error_printing();
  // A --keep feasible / top-K file is not resumable: a temporary path of its own, so that a
  // resumable partial file of the same output survives it.
  temp_path_ = mpi_.broadcast(
      mpi_.is_root() ? temp_path_for(output_path_) + (appended ? ".keep" : "") : std::string());
  lock_output();
  try {
    if (!appended_ && resume != ResumeMode::No && open_partial(resume_key, resume)) return;
    create(resume_key);
  } catch (...) {
    // Refused (a damaged or foreign partial file) or failed: nothing is written to the
    // output, so its lock goes too (a lock held by another sweep was never ours to remove).
    if (lock_) lock_->release_and_remove();
    throw;
  }
}

void ResultStore::create(const std::string& resume_key) {
  std::string error;
  if (mpi_.is_root()) {
    try {
      create_file(resume_key);
      // The metadata on disk once, before any row.
      h5::check(H5Fflush(file_.get(), H5F_SCOPE_LOCAL), "H5Fflush");
      last_flush_s_ = now_s();
      writer_ = std::make_unique<BackgroundWriter>(size_t{8} << 20);  // docs/production.md sec 4
    } catch (const std::exception& e) {
      error = e.what();
      abandon();
    }
  }
  error = mpi_.broadcast(error);
  if (!error.empty()) throw InternalError(error);
  missing_ = {{0, num_points_}};
}

// One sweep per output: rank 0 holds an exclusive flock on the partial file's
// `.lock` for the whole run (a second sweep on the same output, resumed or not, is refused
// naming the running one; the kernel drops the lock when its holder dies).
void ResultStore::lock_output() {
  std::string refused;
  if (mpi_.is_root()) {
    char host[256] = "?";
    ::gethostname(host, sizeof host - 1);
    lock_ =
        std::make_unique<FileLock>(temp_path_for(output_path_) + ".lock",
                                   fmt::format("rapid-sweep pid {} on {} since {}, writing {}",
                                               ::getpid(), host, utc_now_iso8601(), output_path_));
    if (!lock_->locked()) refused = lock_->holder();
  }
  refused = mpi_.broadcast(refused);
  if (!refused.empty())
    throw InputError(output_path_, "-o", output_path_,
                     fmt::format("an output no other sweep is writing ({}; its lock is {}): "
                                 "wait for it or stop it, or write another output",
                                 refused, temp_path_for(output_path_) + ".lock"));
}

bool ResultStore::open_partial(const std::string& resume_key, ResumeMode mode) {
  std::error_code ec;
  const bool exists = mpi_.broadcast(
      static_cast<int64_t>(mpi_.is_root() && fs::is_regular_file(temp_path_, ec) ? 1 : 0));
  if (!exists) return false;
  // Rank 0 opens it, reads the key and the done mask and verifies every chunk the mask
  // keeps (PointsTable::verify: checksums, decompression, each done row's point); every
  // rank decides on the same broadcast key and damage.
  std::string key, missing, damage;
  if (mpi_.is_root()) {
    // The signature first, read-only: HDF5 1.10 opens an empty file for writing as a new one
    // (and writes a superblock into it).
    const hid_t id = H5Fis_hdf5(temp_path_.c_str()) > 0
                         ? H5Fopen(temp_path_.c_str(), H5F_ACC_RDWR, file_access().get())
                         : H5I_INVALID_HID;
    if (id < 0) {
      damage = "not a file HDF5 can open (empty, cut short or overwritten)";
    } else {
      try {
        file_ = h5::File(id, "H5Fopen");
        const std::vector<std::string> keys = h5::read_strings(file_.get(), "/resume/key");
        if (keys.empty()) damage = "no /resume/key (not a partial file rapid-sweep wrote)";
        key = keys.empty() ? std::string() : keys.front();
        // A key is text: a NUL in it is a damaged string heap (a zeroed page), not a change.
        if (key.find('\0') != std::string::npos)
          damage = "its /resume/key does not read back whole (NUL bytes in its text)";
        if (damage.empty() && key == resume_key) {
          table_ = PointsTable::open(file_.get(), num_points_);
          const std::vector<uint8_t> mask = table_.read_done();
          damage = table_.verify(mask);
          std::vector<std::pair<int64_t, int64_t>> runs;
          for (int64_t i = 0; i < num_points_;) {  // runs of rows not done
            if (mask[static_cast<size_t>(i)]) {
              ++i;
              continue;
            }
            int64_t j = i;
            while (j < num_points_ && !mask[static_cast<size_t>(j)]) ++j;
            runs.push_back({i, j});
            i = j;
          }
          missing = ranges_text(runs);
        }
      } catch (const std::exception& e) {
        damage = fmt::format("its tables do not read back ({})", e.what());
      }
    }
  }
  damage = mpi_.broadcast(damage);
  key = mpi_.broadcast(key);
  if (!damage.empty() || key != resume_key) {
    if (mpi_.is_root()) {
      table_.close();
      file_.close();
    }
  }
  if (!damage.empty()) {
    if (mode == ResumeMode::IfSameKey) {
      if (mpi_.is_root())
        std::fprintf(stderr,
                     "rapid-sweep: note: the partial file %s is damaged (%s): starting "
                     "again\n",
                     temp_path_.c_str(), damage.c_str());
      return false;
    }
    throw InputError(temp_path_, "<partial file>", damage,
                     "a partial file whose rows read back whole (delete it, or run without "
                     "--resume or with --overwrite, to start again)");
  }
  if (key != resume_key) {
    if (mode == ResumeMode::IfSameKey) {
      if (mpi_.is_root())
        std::fprintf(stderr,
                     "rapid-sweep: note: %s is the partial file of another job, config, "
                     "fidelity or version: starting again\n",
                     temp_path_.c_str());
      return false;
    }
    throw InputError(temp_path_, "resume/key", key_difference(key, resume_key),
                     "the job, configs, fidelity and rapid-sweep version of the run that wrote "
                     "it (run without --resume, or with --overwrite, to start again)");
  }
  missing_ = parse_ranges(mpi_.broadcast(missing));
  if (mpi_.is_root()) {
    last_flush_s_ = now_s();
    writer_ = std::make_unique<BackgroundWriter>(size_t{8} << 20);  // docs/production.md sec 4
  }
  resumed_ = true;
  return true;
}

ResultStore::~ResultStore() {
  if (!committed_) abandon();
  if (lock_) lock_->release_and_remove();  // nothing is written to the output any more
}

void ResultStore::abandon() noexcept {
  if (mpi_.is_root()) {
    writer_.reset();  // runs what is queued (a failed writer drops it), then joins
    table_ = PointsTable();
    file_.reset();
  }
  // Any rank may get here first (a failing rank aborts the job right after): removing is
  // idempotent. A resumed run keeps its partial file whatever happens: it holds earlier
  // runs' rows.
  std::error_code ec;
  if (!temp_path_.empty() && !resumed_) fs::remove(temp_path_, ec);
}

void ResultStore::create_file(const std::string& resume_key) {
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
  file_ = h5::File(H5Fcreate(temp_path_.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, file_access().get()),
                   "H5Fcreate");
  const hid_t f = file_.get();
  commit_enum_types(f);
  // The dimensions are named after the /points columns that index them.
  write_string_table(f, "hardware", "hardware_index", "hardware variant",
                     {{"names", "name of the hardware variant", names},
                      {"yaml", "the variant's YAML text", yamls}});
  write_variant_table(f, spec_);
  write_string_table(f, "scenarios", "scenario", "non-ideal scenario",
                     {{"names", "name of the scenario", scenario_names},
                      {"description", "what the scenario turns on (docs/nonideal.md)", what}});
  // What a resumed run must match.
  write_string_table(f, "resume", "entry", "entry",
                     {{"key", "what a resumed run must match", {resume_key}}});
  table_ = PointsTable::create(file_.get(), appended_ ? 0 : num_points_);
}

void ResultStore::maybe_flush() {
  // Testing hook: RAPID_SWEEP_TEST_REOPEN_ROWS=N flushes after every write and reopens
  // after N rows (the tests' sweeps are far smaller than kReopenRows and take under 2 s).
  static const char* test_rows = std::getenv("RAPID_SWEEP_TEST_REOPEN_ROWS");
  static const int64_t reopen_rows =
      test_rows ? std::max<int64_t>(1, std::atoll(test_rows)) : kReopenRows;
  if (appended_ || (!test_rows && now_s() - last_flush_s_ < kFlushInterval)) return;
  if (rows_since_open_ < reopen_rows) {
    h5::check(H5Fflush(file_.get(), H5F_SCOPE_LOCAL), "H5Fflush");
  } else {
    // The never-evicting metadata cache keeps every chunk-index node it has loaded: closing
    // and reopening the file (which flushes it) empties it, so a rank's memory stays
    // bounded however many rows the file has (measured: 124 MiB at 10^7 rows without).
    table_.close();
    file_.close();
    file_ = h5::File(H5Fopen(temp_path_.c_str(), H5F_ACC_RDWR, file_access().get()), "H5Fopen");
    table_ = PointsTable::open(file_.get(), num_points_);
    rows_since_open_ = 0;
  }
  last_flush_s_ = now_s();
}

void ResultStore::queue(RowBlock block, bool rewrite) {
  RAPID_ASSERT(mpi_.is_root() && writer_, "rank 0 writes");
  const size_t bytes = block.bytes().size();
  auto shared = std::make_shared<RowBlock>(std::move(block));
  writer_->submit(
      [this, shared, rewrite] {
        rows_since_open_ += shared->count() + shared->stored_rows();
        if (rewrite)
          table_.update(*shared);
        else
          table_.write(*shared);
        maybe_flush();
      },
      bytes);
}

void ResultStore::write(RowBlock block) {
  queue(std::move(block), false);
}

void ResultStore::update(RowBlock block) {
  queue(std::move(block), true);
}

std::vector<double> ResultStore::read_column(std::string_view name, int64_t first_index,
                                             int64_t count) {
  RAPID_ASSERT(mpi_.is_root() && writer_, "rank 0 reads");
  writer_->wait();  // the writer idle: this thread may call HDF5
  return table_.read_column(name, first_index, count);
}

double ResultStore::write_busy_s() const {
  return writer_ ? writer_->busy_s() : 0.0;
}

void ResultStore::write_dropped(const DroppedRows& d) {
  RAPID_ASSERT(mpi_.is_root() && writer_, "rank 0 writes");
  writer_->wait();
  h5::Group g(H5Gcreate2(file_.get(), "dropped", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT),
              "H5Gcreate2");
  // Each dataset over a named dimension: an index dimension scale (int64 0..n-1, as
  // netcdf_layout.hpp's write_table makes them), so netCDF readers show `status_code`,
  // `step_time_bin` and `step_time_edge` instead of phony dimensions (netcdf_layout.hpp).
  auto dimension = [&](const char* name, size_t n, const char* long_name) {
    const hsize_t dims = n;
    h5::Dataspace space(H5Screate_simple(1, &dims, nullptr), "H5Screate_simple");
    h5::Dataset scale(H5Dcreate2(g.get(), name, H5T_NATIVE_INT64, space.get(), H5P_DEFAULT,
                                 H5P_DEFAULT, H5P_DEFAULT),
                      "H5Dcreate2");
    std::vector<int64_t> index(n);
    std::iota(index.begin(), index.end(), int64_t{0});
    if (n > 0)
      h5::check(
          H5Dwrite(scale.get(), H5T_NATIVE_INT64, H5S_ALL, H5S_ALL, H5P_DEFAULT, index.data()),
          "H5Dwrite");
    h5::make_scale(scale.get(), name);
    h5::write_attribute(scale.get(), "units", std::string_view("1"));
    h5::write_attribute(scale.get(), "long_name", std::string_view(long_name));
    return scale;
  };
  // `unit` and `description` as on /points (the rapid names), `units` and `long_name` as CF
  // 1.8 sections 3.1 and 3.2 spell them ("1": a count, sec 3.1.1).
  auto put = [&](const char* name, const h5::Dataset& scale, hid_t type, size_t n, const void* data,
                 const char* what, const char* unit, const char* cf_unit) {
    const hsize_t dims = n;
    h5::Dataspace space(H5Screate_simple(1, &dims, nullptr), "H5Screate_simple");
    h5::Dataset ds(
        H5Dcreate2(g.get(), name, type, space.get(), H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT),
        "H5Dcreate2");
    if (n > 0) h5::check(H5Dwrite(ds.get(), type, H5S_ALL, H5S_ALL, H5P_DEFAULT, data), "H5Dwrite");
    h5::attach_scale(ds.get(), scale.get());
    h5::write_attribute(ds.get(), "description", std::string_view(what));
    h5::write_attribute(ds.get(), "unit", std::string_view(unit));
    h5::write_attribute(ds.get(), "long_name", std::string_view(what));
    h5::write_attribute(ds.get(), "units", std::string_view(cf_unit));
  };
  const h5::Dataset status =
      dimension("status_code", d.by_status.size(), "code of the status column");
  put("status_counts", status, H5T_NATIVE_INT64, d.by_status.size(), d.by_status.data(),
      "rows left out of /points, per status code (index = the status column's code)", "", "1");
  // The code's name beside it (the status column's enum names, core/eval_result.hpp).
  std::vector<std::string> names;
  for (size_t i = 0; i < d.by_status.size(); ++i)
    names.push_back(i < std::size(kStatusNames) ? kStatusNames[i] : "");
  {
    const hsize_t dims = names.size();
    h5::Dataspace space(H5Screate_simple(1, &dims, nullptr), "H5Screate_simple");
    h5::Dataset ds = h5::write_string_dataset(g.get(), "status_names", space.get(), names);
    h5::attach_scale(ds.get(), status.get());
    h5::write_attribute(ds.get(), "long_name", std::string_view("name of the status code"));
  }
  const h5::Dataset edge =
      dimension("step_time_edge", d.step_time_edges_s.size(), "index of a bin edge");
  put("step_time_edges_s", edge, H5T_NATIVE_DOUBLE, d.step_time_edges_s.size(),
      d.step_time_edges_s.data(), "bin edges of step_time_counts", "s", "s");
  const h5::Dataset bin =
      dimension("step_time_bin", d.step_time_counts.size(),
                "step-time bin: from step_time_edges_s[i] to step_time_edges_s[i + 1]");
  put("step_time_counts", bin, H5T_NATIVE_INT64, d.step_time_counts.size(),
      d.step_time_counts.data(),
      "feasible (status ok) rows left out, per step-time bin (log-spaced edges)", "", "1");
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
      run.wall_time_s > 0 ? static_cast<double>(run.points_swept) / run.wall_time_s : 0.0;
  const std::string created = utc_now_iso8601();
  std::vector<std::pair<const char*, Value>> attrs = {
      // CF 1.8 sec 2.6.1: the conventions the file follows. 1.8 is the first CF version
      // with groups (sec 2.7) and variable-length strings (sec 2.2), which the file uses;
      // units, long_name and flag attributes (secs 3.1, 3.2, 3.5) are as in CF 1.0 on.
      {"Conventions", std::string("CF-1.8")},
      // CF 1.8 sec 2.6.2's description of the contents (title, source, history).
      {"title", fmt::format("rapid-sweep results of job {}", spec_.name)},
      {"source", fmt::format("rapid-sweep {} ({})", version(), git_revision())},
      {"history", fmt::format("{} {}", created, run.command_line)},
      {"format", std::string("rapid-sweep results")},
      {"format_version", int64_t{3}},
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
      // Prediction intervals (docs/validation.md): their coverage and file.
      {"interval_coverage",
       spec_.intervals.empty() ? EvalResult::kNaN : spec_.intervals.front().coverage},
      {"intervals_path", spec_.intervals_source.path},
      {"intervals_yaml", spec_.intervals_source.yaml},
      {"fidelity", run.fidelity},
      {"slurm_job_id", std::string(std::getenv("SLURM_JOB_ID") ? std::getenv("SLURM_JOB_ID") : "")},
      {"hostnames", run.hostnames},
      {"mpi_library_version", mpi_library_version()},
      {"hdf5_library_version", hdf5_library_version()},
      {"ranks", int64_t{mpi_.size()}},
      {"threads_per_rank", run.threads_per_rank},
      {"num_points", num_points_},
      {"num_rows", appended_ ? table_.rows() : num_points_},
      {"keep", run.keep},
      {"baseline_index", baseline_index_},
      {"baseline_kept_extra", int64_t{run.baseline_kept_extra ? 1 : 0}},
      {"wall_time_s", run.wall_time_s},
      {"points_per_s", points_per_s},
      {"peak_rss_bytes", run.peak_rss_bytes},
      {"created", created},
  };
  for (const auto& [name, seconds] : run.phase_s)
    h5::write_attribute(file_.get(), fmt::format("time_{}_s", name).c_str(), seconds);
  // (A pair, not a structured binding: clang 14 cannot capture bindings in a lambda.)
  for (auto& attr : attrs)
    std::visit([&](const auto& v) { h5::write_attribute(file_.get(), attr.first, v); },
               attr.second);
}

void ResultStore::rebuild() {
  // A resumed file becomes the output only rewritten: a new file, every table made afresh
  // from the job (create_file; the resume key vouches that the configs are the ones the
  // rows were computed with), and each stored /points chunk copied as it is (no
  // decompression; PointsTable::verify read every one through its checksum at the start).
  // Damage to the old file's metadata that no resume reads stays behind with it: HDF5 1.10
  // does not checksum its heap of variable-length strings, and reading a zeroed page of it
  // hangs HDF5 (docs/production.md sec 2.1). A run killed while rebuilding keeps its partial
  // file; the half-built one is removed by the next run (H5F_ACC_TRUNC) or by abandon().
  const std::string partial = temp_path_;
  table_.close();
  file_.close();
  h5::File old(H5Fopen(partial.c_str(), H5F_ACC_RDONLY, file_access().get()), "H5Fopen");
  temp_path_ = partial + ".rebuilt";
  resumed_ = false;  // from here a failure removes the new file, never the partial one
  create_file(h5::read_strings(old.get(), "/resume/key").front());
  table_.copy_stored(old.get());
  old.close();
  std::error_code ec;
  fs::remove(partial, ec);  // its rows are in the new file (renamed to the output next)
}

void ResultStore::close_all() {
  if (!mpi_.is_root()) return;
  if (writer_) writer_->wait();
  writer_.reset();
  table_.close();
  file_.close();
}

bool ResultStore::keep_partial() {
  RAPID_ASSERT(!committed_, "keep_partial() instead of commit()");
  std::string error;
  if (mpi_.is_root()) {
    try {
      close_all();
    } catch (const std::exception& e) {
      error = e.what();
    }
  }
  error = mpi_.broadcast(error);
  if (!error.empty()) throw InternalError(error);
  if (appended_) {  // not resumable: no done mask
    if (mpi_.is_root()) {
      std::error_code ec;
      fs::remove(temp_path_, ec);
    }
    committed_ = true;
    return false;
  }
  committed_ = true;  // the partial file stays where it is
  return true;
}

void ResultStore::commit(const RunProvenance& run) {
  RAPID_ASSERT(!committed_, "commit() once");
  std::string error;
  if (mpi_.is_root()) {
    try {
      writer_->wait();
      if (resumed_) rebuild();
      write_root_attributes(run);
      close_all();
      std::error_code ec;
      fs::rename(temp_path_, output_path_, ec);
      if (ec)
        error = fmt::format("cannot rename {} to {}: {}", temp_path_, output_path_, ec.message());
      else if (lock_)
        lock_->release_and_remove();  // the output is whole: nothing left to guard
    } catch (const std::exception& e) {
      error = e.what();
    }
  }
  error = mpi_.broadcast(error);
  if (!error.empty()) throw InternalError(error);
  committed_ = true;
}

}  // namespace rapid
