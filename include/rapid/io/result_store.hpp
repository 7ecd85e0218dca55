// The HDF5 result file of a sweep (docs/architecture.md "Data flow": one HDF5 file, row i = point
// i).
//
// Layout (format_version 3; it is also a netCDF-4 file: io/netcdf_layout.hpp):
//   /                root attributes: provenance of the run (see commit()); the committed
//                    enum types <column>_t of the enum columns
//   /points/point    the dimension scale of every /points dataset: the point index of each
//                    row (row i = point i with --keep all; the kept points, ascending,
//                    otherwise)
//   /points/<col>    one chunked, compressed 1-D dataset per column of result_columns()
//                    (io/points_table.hpp), attributes `unit`, `description` and the CF ones
//   /points/done     --keep all: 1 for the rows written (what a resumed run skips)
//   /dropped/...     --keep feasible / top-K: the rows not kept, counted by status and by
//                    step time (write_dropped())
//   /hardware/names  variable-length UTF-8 strings, one per hardware variant, over the
//                    dimension scale /hardware/hardware_index
//   /hardware/yaml   the variant's YAML text, same order (hardware_index points here)
//   /scenarios/names, /scenarios/description over /scenarios/scenario; /resume/key
// Strings: attributes and string datasets are variable-length UTF-8 (h5py returns str for
// attributes, bytes for dataset elements: ds.asstr()[...] gives str).
//
// One writer, many compressors (issue 13 part 2, issue 35): rank 0 alone holds the file
// (HDF5's serial driver), and a thread of its own (io/background_writer.hpp) writes the row
// blocks the ranks send it, so neither the evaluating threads nor rank 0's answers to work
// requests wait for the disk. Under --keep all each evaluating rank sends the /points
// chunks its rows fill whole already filtered (io/chunk_encoder.hpp: shuffle, deflate,
// Fletcher-32), which the writer stores as they are (H5Dwrite_chunk); only the rows of
// chunks split between ranks (a resumed range's edges, a stopped chunk, a DES sweep's small
// chunks) go through HDF5's filters on the writer. Parallel HDF5 (MPI-IO) is not used: 1.10
// filters only collective writes, which a dynamic schedule has not (docs/production.md
// sec 5).
//
// Crash safety of a resumable (--keep all) file: the metadata cache never evicts (dirty
// metadata reaches the disk only at a flush, every kFlushInterval or so and at the end),
// and rows are written before their done marks, so a killed job leaves the file of the last
// flush, which a resumed run opens, with every row its done mask claims.
//
// Atomicity: the file is written at a temporary path and renamed to the output path by
// commit(). A store destroyed without commit() removes the temporary file, so no partial
// file is ever left at the output path.
#pragma once

#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <memory>

#include "rapid/common/file_lock.hpp"
#include "rapid/common/mpi_env.hpp"
#include "rapid/io/background_writer.hpp"
#include "rapid/io/hdf5_handle.hpp"
#include "rapid/io/points_table.hpp"
#include "rapid/io/result_schema.hpp"
#include "rapid/io/row_block.hpp"
#include "rapid/spec/sweep_spec.hpp"

namespace rapid {

/// Provenance values known only at the end of the run (written by commit()).
struct RunProvenance {
  std::string command_line;  ///< argv joined by spaces
  std::string fidelity;      ///< "analytical"
  int64_t threads_per_rank = 1;
  double wall_time_s = 0;      ///< sweep wall time (rank 0's clock)
  int64_t peak_rss_bytes = 0;  ///< maximum over ranks (the caller reduces it)
  std::string hostnames;       ///< the ranks' hosts (MPI processor names), distinct, sorted
  std::string keep = "all";    ///< --keep: all, feasible or top-K
  int64_t points_swept = 0;    ///< points evaluated (every point unless resumed)
  /// --keep top-K: the baseline's row is in the file besides the best K of its group
  /// (root attribute baseline_kept_extra).
  bool baseline_kept_extra = false;
  /// Seconds per phase, summed over the ranks (enumerate, evaluate, write, wait, ...):
  /// written as root attributes time_<phase>_s.
  std::vector<std::pair<std::string, double>> phase_s;
};

/// The rows a --keep feasible / top-K sweep left out of its file.
struct DroppedRows {
  std::vector<int64_t> by_status;         ///< per Status code
  std::vector<double> step_time_edges_s;  ///< histogram bin edges (size bins + 1)
  std::vector<int64_t> step_time_counts;  ///< feasible dropped rows per bin
};

/// The MPI and HDF5 libraries this binary runs with (MPI_Get_library_version's first line,
/// H5get_libversion), for the provenance and `--version`.
std::string mpi_library_version();
std::string hdf5_library_version();

/// What a store does with an existing partial file of its output.
enum class ResumeMode : uint8_t {
  No,         ///< replace it (start again)
  IfSameKey,  ///< resume it when its /resume/key matches, else replace it (say so)
  Yes,        ///< resume it; InputError when its key differs (`--resume`)
};

class ResultStore {
 public:
  /// Collective over `mpi`'s ranks. Rank 0 creates the temporary file: the /points table
  /// for `num_points` rows (fixed layout) or, `appended`, an extendible one (--keep
  /// feasible / top-K), and the /hardware, /scenarios and /resume tables of `spec` (which
  /// must outlive the store). `baseline_index` is written at commit (-1 when the job has
  /// none). The output directory must exist (main() checks it before, as bad input).
  /// Throws InternalError on every rank on an HDF5 failure; the temporary file is removed
  /// then.
  ///
  /// Resumable (fixed layout only; README "Resuming"): the file is the output's partial file
  /// (temp_path_for); /points/done marks the rows written; /resume/key holds `resume_key`
  /// (what must not change between the runs). With an existing partial file and `resume` Yes,
  /// or IfSameKey and the same key, the store opens it instead (Yes and another key:
  /// InputError); missing() then lists the rows still to compute. IfSameKey and another key:
  /// rank 0 notes on stderr that the file is replaced.
  ResultStore(const MpiEnv& mpi, std::string output_path, const SweepSpec& spec, int64_t num_points,
              int64_t baseline_index, const std::string& resume_key = "",
              ResumeMode resume = ResumeMode::No, bool appended = false);
  /// Without commit(): removes the temporary file. With one rank the HDF5 handles are
  /// closed first; with several they are abandoned, because closing the file is collective
  /// and the other ranks are not there (the caller must end the job with MpiEnv::abort()).
  ~ResultStore();
  ResultStore(const ResultStore&) = delete;
  ResultStore& operator=(const ResultStore&) = delete;

  /// Rank 0: queues the block's rows for the writer thread (fixed layout: at their point
  /// indices; appended: after the rows written so far, so blocks must come in point order).
  /// Blocks while the writer is more than 64 MiB behind. Rethrows an earlier write's
  /// InternalError.
  void write(RowBlock block);
  /// Rank 0: queues a rewrite of rows already written, by point index (`--fidelity auto`'s
  /// simulated rows).
  void update(RowBlock block);
  /// Rank 0: rows first_index .. first_index + count - 1 of column `name` (of the schema)
  /// as doubles (enums as their codes), after every queued write. Throws InternalError.
  std::vector<double> read_column(std::string_view name, int64_t first_index, int64_t count);
  /// Rank 0: what --keep left out, as /dropped (before commit()).
  void write_dropped(const DroppedRows& dropped);
  /// Rank 0: seconds its writer thread has spent writing.
  double write_busy_s() const;

  /// Collective. Writes the root attributes (values from rank 0): format, format_version,
  /// Conventions (CF-1.8), title, source, history, version, git_revision, command_line,
  /// job/model/network name, path and YAML, fidelity, ranks, threads_per_rank, num_points,
  /// num_rows, keep, baseline_index, baseline_kept_extra, wall_time_s,
  /// points_per_s, peak_rss_bytes, time_<phase>_s, created (UTC, ISO 8601); closes the file
  /// and renames it to the output path on rank 0. Throws InternalError (on every rank when
  /// it fails).
  void commit(const RunProvenance& run);

  const std::string& output_path() const { return output_path_; }
  const std::string& temp_path() const { return temp_path_; }
  /// The temporary file a run writing `output` uses (rank 0's pid): a short name in the
  /// output's directory. Its length is what MPI-IO sees (check_output_path bounds it).
  static std::string temp_path_for(const std::string& output);
  /// The index ranges [first, last) not yet written (all of them in a new file).
  const std::vector<std::pair<int64_t, int64_t>>& missing() const { return missing_; }
  bool resumed() const { return resumed_; }
  /// Collective: closes the file and keeps it as the partial file (a stopped sweep), for a
  /// later run with resume; an appended file (--keep feasible / top-K) cannot be resumed and
  /// is removed instead. Returns whether it was kept. Throws InternalError.
  bool keep_partial();
  int64_t num_points() const { return num_points_; }

 private:
  /// Collective: rank 0 takes the output's lock; InputError on every rank when another
  /// sweep holds it.
  void lock_output();
  /// false: no partial file to resume (or another key and IfSameKey).
  bool open_partial(const std::string& resume_key, ResumeMode mode);
  /// Collective: rank 0 creates a new temporary file (create_file) and its writer.
  void create(const std::string& resume_key);
  /// Rank 0: creates the file with the enum types, the string tables and /points.
  void create_file(const std::string& resume_key);
  void write_root_attributes(const RunProvenance& run);
  /// Rank 0, a resumed file at commit: a new file with fresh tables and the old one's
  /// /points chunks as stored; the partial file is removed.
  void rebuild();
  /// Rank 0: hands the block to the writer thread (`rewrite`: rows written before).
  void queue(RowBlock block, bool rewrite);
  /// Rank 0: after each write, a flush when the last is kFlushInterval old.
  void maybe_flush();
  void close_all();
  void abandon() noexcept;

  const MpiEnv& mpi_;
  const SweepSpec& spec_;
  std::string output_path_;
  std::string temp_path_;
  int64_t num_points_ = 0;
  int64_t baseline_index_ = -1;
  bool appended_ = false;
  bool committed_ = false;
  bool resumed_ = false;
  std::vector<std::pair<int64_t, int64_t>> missing_;

  // Rank 0 only.
  std::unique_ptr<FileLock> lock_;  ///< the output's lock, held for the run
  h5::File file_;
  PointsTable table_;
  std::unique_ptr<BackgroundWriter> writer_;
  double last_flush_s_ = 0;      ///< writer thread's clock of the last flush
  int64_t rows_since_open_ = 0;  ///< rows written since the file was (re)opened
};

}  // namespace rapid
