// An exclusive advisory lock (flock(2), LOCK_EX | LOCK_NB) on a small lock file, held while
// the object lives: what keeps two sweeps from writing one output (the partial file's
// `<partial>.lock`). The file holds its holder's description (host, pid, start time), which
// a refused second process reports. flock locks are released by the kernel when the
// holder dies, so a killed sweep never leaves a stale lock.
#pragma once

#include <string>

namespace rapid {

class FileLock {
 public:
  /// Tries to lock `path` (created if missing) and, on success, writes `holder` into it.
  /// locked() says whether it succeeded; holder() then or otherwise is the text in the file.
  FileLock(std::string path, const std::string& holder);
  ~FileLock();
  FileLock(const FileLock&) = delete;
  FileLock& operator=(const FileLock&) = delete;

  bool locked() const { return locked_; }
  /// The lock file's text: ours when locked, the running holder's when refused.
  const std::string& holder() const { return holder_; }
  const std::string& path() const { return path_; }
  /// Removes the lock file, then releases the lock (the output is committed).
  void release_and_remove();

 private:
  std::string path_, holder_;
  int fd_ = -1;
  bool locked_ = false;
};

}  // namespace rapid
