#include "rapid/common/file_lock.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <utility>

namespace rapid {

FileLock::FileLock(std::string path, const std::string& holder) : path_(std::move(path)) {
  fd_ = ::open(path_.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (fd_ < 0) {
    holder_ = "(cannot open the lock file)";
    return;
  }
  if (::flock(fd_, LOCK_EX | LOCK_NB) == 0) {
    locked_ = true;
    holder_ = holder;
    if (::ftruncate(fd_, 0) == 0) {
      const ssize_t n = ::pwrite(fd_, holder.data(), holder.size(), 0);
      (void)n;  // the text is informative: the lock holds whether it was written or not
    }
    return;
  }
  char text[512];
  const ssize_t n = ::pread(fd_, text, sizeof text - 1, 0);
  holder_ = n > 0 ? std::string(text, static_cast<size_t>(n)) : "(another process)";
  ::close(fd_);
  fd_ = -1;
}

FileLock::~FileLock() {
  if (fd_ >= 0) ::close(fd_);  // closing the last descriptor releases the flock
}

void FileLock::release_and_remove() {
  if (fd_ < 0) return;
  ::unlink(path_.c_str());
  ::close(fd_);
  fd_ = -1;
  locked_ = false;
}

}  // namespace rapid
