// A file written in one go, plain or gzip-compressed (a name ending in ".gz"), with every
// write and the close checked: a failure (disk full, quota, file size limit) is bad input
// naming the command-line option and the path the user gave (`rapid export --csv`,
// `rapid predict --timeline`).
#pragma once

#include <zlib.h>

#include <cstdio>
#include <string>
#include <string_view>

namespace rapid {

class OutputSink {
 public:
  /// Opens `path` (gzip when `gz`); `option` and `target` name it in messages.
  OutputSink(const std::string& path, bool gz, std::string option, std::string target);
  ~OutputSink();
  OutputSink(const OutputSink&) = delete;
  OutputSink& operator=(const OutputSink&) = delete;

  void write(std::string_view s);
  /// Flushes and closes; throws InputError when that fails.
  void close();

 private:
  [[noreturn]] void fail() const;

  bool gz_;
  std::string option_, target_;
  gzFile z_ = nullptr;
  std::FILE* f_ = nullptr;
};

}  // namespace rapid
