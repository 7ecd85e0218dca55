#include "rapid/common/output_sink.hpp"

#include <fmt/format.h>

#include <cerrno>
#include <cstring>

#include "rapid/common/error.hpp"

namespace rapid {

OutputSink::OutputSink(const std::string& path, bool gz, std::string option, std::string target)
    : gz_(gz), option_(std::move(option)), target_(std::move(target)) {
  if (gz_)
    z_ = gzopen(path.c_str(), "wb6");
  else
    f_ = std::fopen(path.c_str(), "wb");
  if (!(gz_ ? static_cast<void*>(z_) : static_cast<void*>(f_)))
    throw InputError(
        "<command line>", option_, target_,
        fmt::format("a writable path (cannot create {}: {})", path, std::strerror(errno)));
}

OutputSink::~OutputSink() {
  if (z_) gzclose(z_);
  if (f_) std::fclose(f_);
}

void OutputSink::write(std::string_view s) {
  if (s.empty()) return;
  const bool ok =
      gz_ ? gzwrite(z_, s.data(), static_cast<unsigned>(s.size())) == static_cast<int>(s.size())
          : std::fwrite(s.data(), 1, s.size(), f_) == s.size();
  if (!ok) fail();
}

void OutputSink::close() {
  const int rc = gz_ ? gzclose(z_) : std::fclose(f_);
  z_ = nullptr;
  f_ = nullptr;
  if (rc != 0) fail();
}

void OutputSink::fail() const {
  throw InputError("<command line>", option_, target_,
                   "room to write the file (writing failed: disk full, quota or file size "
                   "limit?)");
}

}  // namespace rapid
