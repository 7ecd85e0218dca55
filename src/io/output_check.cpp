#include "rapid/io/output_check.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/resource.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <random>

#include "rapid/common/error.hpp"
#include "rapid/io/result_schema.hpp"
#include "rapid/spec/yaml_reader.hpp"

namespace fs = std::filesystem;

namespace rapid {

namespace {

std::string directory_of(const std::string& path) {
  const fs::path dir = fs::path(path).parent_path();
  return dir.empty() ? "." : dir.string();
}

[[noreturn]] void bad(const std::string& option, const std::string& path,
                      const std::string& expected) {
  throw InputError("<command line>", option, path, expected);
}

std::string human_bytes(uint64_t b) {
  return b >= (1ull << 20) ? fmt::format("{:.1f} MiB", static_cast<double>(b) / (1 << 20))
                           : fmt::format("{} bytes", b);
}

}  // namespace

uint64_t room_in_directory(const std::string& dir) {
  uint64_t room = UINT64_MAX;
  struct statvfs st {};
  if (::statvfs(dir.c_str(), &st) == 0 && st.f_frsize > 0)
    room = static_cast<uint64_t>(st.f_bavail) * static_cast<uint64_t>(st.f_frsize);
  rlimit lim{};
  if (::getrlimit(RLIMIT_FSIZE, &lim) == 0 && lim.rlim_cur != RLIM_INFINITY)
    room = std::min<uint64_t>(room, static_cast<uint64_t>(lim.rlim_cur));
  return room;
}

std::string temporary_path_beside(const std::string& path) {
  static std::atomic<unsigned> serial{0};
  const fs::path dir = fs::path(path).parent_path();
  return (dir / fmt::format(".rapid-tmp-{}-{}", static_cast<long>(::getpid()), serial++)).string();
}

void check_output_file(const std::string& path, const std::string& option, uint64_t bytes,
                       const std::vector<std::string>& inputs) {
  if (path.empty()) bad(option, path, "a file path");
  if (!is_utf8(path)) bad(option, "<not UTF-8>", "a UTF-8 path");
  const std::string dir = directory_of(path);
  std::error_code ec;
  if (!fs::is_directory(dir, ec))
    bad(option, path, fmt::format("a file in an existing directory ({} does not exist)", dir));
  const fs::file_status st = fs::symlink_status(path, ec);
  if (fs::is_directory(st)) bad(option, path, "a file name, not a directory");
  if (fs::exists(st) && !fs::is_regular_file(st))
    bad(option, path, "a new or regular file (not a FIFO, device, socket or symlink)");
  if (fs::exists(st))
    for (const std::string& in : inputs)
      if (fs::equivalent(path, in, ec))
        bad(option, path, fmt::format("a path other than the input {}", in));
  if (fs::path(path).filename().string().size() > 255)
    bad(option, path, "a file name of at most 255 bytes");
  // Whether a file can be created there, tried (access() says yes to root everywhere).
  const std::string probe = temporary_path_beside(path);
  const int fd = ::open(probe.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  if (fd < 0)
    bad(option, path,
        fmt::format("a file in a directory where one can be created ({}: {})", dir,
                    std::strerror(errno)));
  ::close(fd);
  ::unlink(probe.c_str());
  const uint64_t room = room_in_directory(dir);
  if (bytes > 0 && room < bytes)
    bad(option, path,
        fmt::format("room for the file (about {} needed, {} free in {} or allowed by the "
                    "file size limit)",
                    human_bytes(bytes), human_bytes(room), dir));
}

void write_file_atomically(const std::string& path, const std::string& text,
                           const std::string& option) {
  const std::string tmp = temporary_path_beside(path);
  std::FILE* f = std::fopen(tmp.c_str(), "wb");
  if (!f) bad(option, path, fmt::format("a writable path ({})", std::strerror(errno)));
  int err = 0;
  if (std::fwrite(text.data(), 1, text.size(), f) != text.size()) err = errno;
  if (std::fflush(f) != 0 && err == 0) err = errno;
  if (std::fclose(f) != 0 && err == 0) err = errno;
  std::error_code ec;
  if (err == 0) {
    fs::rename(tmp, path, ec);
    err = ec.value();
  }
  if (err != 0) {
    fs::remove(tmp, ec);
    bad(option, path,
        fmt::format("room to write {} ({}: disk full, quota or file size limit?)",
                    human_bytes(text.size()), std::strerror(err)));
  }
}

uint64_t result_file_bytes(int64_t points, const SweepSpec& spec) {
  uint64_t row = 1 + 8;  // /points/done and the row index
  for (const Column& c : result_columns())
    row += c.type == ColumnType::Float64                                 ? 8
           : c.type == ColumnType::Int32 || c.type == ColumnType::UInt32 ? 4
                                                                         : 1;
  uint64_t text =
      spec.job.yaml.size() + spec.model_source.yaml.size() + spec.network_source.yaml.size();
  for (const Source& h : spec.hardware_sources) text += 2 * h.yaml.size();
  // HDF5 object headers and attributes of every column: about 60 kB measured; 1 MiB margin.
  // The columns are compressed (shuffle + deflate, io/points_table.hpp): measured 10x
  // smaller than raw on a GPT-3 sweep (docs/output.md); a quarter of raw leaves margin.
  return static_cast<uint64_t>(points) * row / 4 + 2 * text + (1u << 20);
}

}  // namespace rapid
