// Output paths are input too (docs/architecture.md "Errors"): before a program writes its output it
// checks that the path can take the file, and every write and close of a text output is
// checked, so that a bad path, a read-only directory or a full disk is one InputError
// naming the option and the path (exit 2) and never a crash, a partial file or exit 0 with
// an empty file (docs/bad-input.md).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "rapid/spec/sweep_spec.hpp"

namespace rapid {

/// Checks that `path`, the value of the command-line option `option`, can take a new file
/// of about `bytes` bytes: a UTF-8 path whose directory exists and lets this process create
/// a file (tried: read-only file systems and directories, /proc, ACLs), not a directory, a
/// FIFO, a device or a symlink, none of `inputs` (the files the program reads), and room
/// for `bytes` (free space and RLIMIT_FSIZE). Throws InputError("<command line>", option,
/// path, ...); creates nothing that stays.
void check_output_file(const std::string& path, const std::string& option, uint64_t bytes = 0,
                       const std::vector<std::string>& inputs = {});

/// Bytes a new file in `dir` may take: the free space an unprivileged user may use, at most
/// the soft RLIMIT_FSIZE (UINT64_MAX when neither is known).
uint64_t room_in_directory(const std::string& dir);

/// A short temporary path beside `path` for writing it before a rename (unique per process,
/// shorter than any file name the OS allows, so that `path` may be up to NAME_MAX long).
std::string temporary_path_beside(const std::string& path);

/// Writes `text` to `path` through temporary_path_beside(path): written, flushed, closed
/// (each checked), then renamed over `path`. On a failure (disk full, quota, file size
/// limit) the temporary file is removed and InputError names `option` and `path`.
void write_file_atomically(const std::string& path, const std::string& text,
                           const std::string& option);

/// Upper bound of the size of the result file of `points` rows of `spec` (the /points
/// columns laid out at creation, the provenance texts and the HDF5 metadata).
uint64_t result_file_bytes(int64_t points, const SweepSpec& spec);

}  // namespace rapid
