// The HDF5 result file of a sweep (DESIGN.md "Data flow": one HDF5 file, row i = point i).
//
// Layout (format_version 2; it is also a netCDF-4 file: io/netcdf_layout.hpp):
//   /                root attributes: provenance of the run (see commit()); the committed
//                    enum types <column>_t of the enum columns
//   /points/point    the dimension scale of every /points dataset: int64 row index 0..N-1
//   /points/<col>    one contiguous 1-D dataset of length N per column of result_columns(),
//                    attributes `unit`, `description` and the CF ones (units or flag_values
//                    / flag_masks with flag_meanings, long_name); Enum8 columns use the
//                    committed enum types, the others native int32/uint8/uint32/float64
//   /points/done     1 for the rows written
//   /hardware/names  variable-length UTF-8 strings, one per hardware variant, over the
//                    dimension scale /hardware/hardware_index
//   /hardware/yaml   the variant's YAML text, same order (hardware_index points here)
//   /scenarios/names, /scenarios/description over /scenarios/scenario; /resume/key
// Strings: attributes and string datasets are variable-length UTF-8 (h5py returns str for
// attributes, bytes for dataset elements: ds.asstr()[...] gives str). Rank 0 writes the
// string tables through a serial handle before every rank opens the file with MPI-IO,
// because parallel HDF5 1.10 cannot write variable-length dataset data.
//
// Atomicity: the file is written at a temporary path `<output>.tmp-<id>` (id = rank 0's
// SLURM_JOB_ID-pid or pid) and renamed to the output path by commit(). A store destroyed
// without commit() removes the temporary file, so no partial file is ever left at the
// output path.
#pragma once

#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "rapid/io/hdf5_handle.hpp"
#include "rapid/io/result_schema.hpp"
#include "rapid/spec/sweep_spec.hpp"
#include "rapid/sweep/mpi_env.hpp"

namespace rapid {

/// Provenance values known only at the end of the run (written by commit()).
struct RunProvenance {
  std::string command_line;  ///< argv joined by spaces
  std::string fidelity;      ///< "analytical"
  int64_t threads_per_rank = 1;
  double wall_time_s = 0;      ///< sweep wall time (rank 0's clock)
  int64_t peak_rss_bytes = 0;  ///< maximum over ranks (the caller reduces it)
  std::string hostnames;       ///< the ranks' hosts (MPI processor names), distinct, sorted
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
  /// Collective over `mpi`'s ranks. Creates the temporary file with the MPI-IO driver, the
  /// /points datasets for `num_points` rows (allocated, never filled) and the /hardware
  /// group of `spec` (which must outlive the store). `baseline_index` is written at commit
  /// (-1 when the job has none). The output directory must exist (main() checks it before,
  /// as bad input). Throws InternalError on an HDF5/MPI failure; the temporary file is
  /// removed then.
  ///
  /// Resumable (docs: README "Resuming"): the file is the output's partial file
  /// (partial_path_for), its datasets contiguous and allocated at creation and its metadata
  /// flushed once, so rows written later survive a killed job; /points/done marks the rows
  /// written; /resume/key holds `resume_key` (what must not change between the runs).
  /// With an existing partial file and `resume` Yes, or IfSameKey and the same key, the
  /// store opens it instead (Yes and another key: InputError); missing() then lists the
  /// rows still to compute. IfSameKey and another key: rank 0 notes on stderr that the
  /// file is replaced.
  ResultStore(const MpiEnv& mpi, std::string output_path, const SweepSpec& spec, int64_t num_points,
              int64_t baseline_index, const std::string& resume_key = "",
              ResumeMode resume = ResumeMode::No);
  /// Without commit(): removes the temporary file. With one rank the HDF5 handles are
  /// closed first; with several they are abandoned, because closing the file is collective
  /// and the other ranks are not there (the caller must end the job with MpiEnv::abort()).
  ~ResultStore();
  ResultStore(const ResultStore&) = delete;
  ResultStore& operator=(const ResultStore&) = delete;

  /// Writes rows first_index .. first_index + rows.size() - 1 (rows[k] is point
  /// first_index + k) with independent I/O: any rank, any order, not collective. Main
  /// thread only. Requires the rows to lie in [0, num_points). Throws InternalError.
  void write(int64_t first_index, std::span<const ResultRow> rows);

  /// Reads rows first_index .. first_index + count - 1 of column `name` (of the schema) as
  /// doubles (enums as their codes), independent I/O, any rank (a resumed `--fidelity auto`
  /// run ranks the rows earlier runs wrote). Throws InternalError.
  std::vector<double> read_column(std::string_view name, int64_t first_index, int64_t count);

  /// Collective. Writes the root attributes (values from rank 0): format, format_version,
  /// version, git_revision, command_line, job/model/network name, path and YAML, fidelity,
  /// ranks, threads_per_rank, num_points, baseline_index, wall_time_s, points_per_s,
  /// peak_rss_bytes, created (UTC, ISO 8601); closes the file and, after a barrier, renames
  /// it to the output path on rank 0. Throws InternalError (on every rank when the rename
  /// fails).
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
  /// later run with resume. Throws InternalError.
  void keep_partial();
  int64_t num_points() const { return num_points_; }

 private:
  struct ColumnData {
    const Column* column = nullptr;
    h5::Dataset dataset;
    h5::Datatype enum_type;  ///< owned type for Enum8 columns
    hid_t mem_type = H5I_INVALID_HID;
    size_t elem_size = 0;
  };

  void open_file();  ///< every rank, MPI-IO
  void create_points(bool open_existing);
  h5::Dataset create_point_scale(hid_t dcpl);  ///< /points/point and its values
  /// false: no partial file to resume (or another key and IfSameKey).
  bool open_partial(const std::string& resume_key, ResumeMode mode);
  void close_all();
  /// Rank 0, serial: creates the file with the enum types and the string tables
  /// (/hardware, /scenarios, /resume); the other ranks get its outcome. Throws InternalError.
  void create_tables(const std::string& resume_key);
  void write_root_attributes(const RunProvenance& run);
  /// Selects rows [first_index, first_index + count) of file_space_; returns the matching
  /// memory dataspace.
  h5::Dataspace select_rows(int64_t first_index, int64_t count);
  void abandon() noexcept;

  const MpiEnv& mpi_;
  const SweepSpec& spec_;
  std::string output_path_;
  std::string temp_path_;
  int64_t num_points_ = 0;
  int64_t baseline_index_ = -1;
  bool committed_ = false;
  bool resumed_ = false;
  std::vector<std::pair<int64_t, int64_t>> missing_;
  h5::Dataset done_;  ///< /points/done: 1 for the rows written

  h5::File file_;
  h5::Group points_;
  h5::Group hardware_;
  h5::Group scenarios_;
  h5::Dataspace file_space_;  ///< [num_points], reused for every hyperslab selection
  h5::PropertyList dxpl_;     ///< independent transfers
  std::vector<ColumnData> columns_;
  std::vector<std::byte> buffer_;  ///< one column of a chunk, converted to its storage type
};

}  // namespace rapid
