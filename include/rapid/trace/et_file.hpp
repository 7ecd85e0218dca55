// One Chakra ET file: a stream of messages, each prefixed by its byte length as a varint,
// first one GlobalMetadata, then one Node per operator (MLCommons Chakra, et_def.proto and
// its feeder's reader, et_feeder/protoio; docs/chakra.md "File"). One file per rank,
// `<prefix>.<rank>.et` (ASTRA-sim's naming rule for --workload-configuration).
#pragma once

#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "rapid/trace/trace_node.hpp"

namespace rapid::trace {

/// `dir/prefix.rank.et`.
std::string et_path(const std::string& dir, const std::string& prefix, int64_t rank);

/// Writes one file: the metadata at open, then nodes. The file appears under its name
/// only at close() (written as NAME.part, renamed); a writer destroyed before close()
/// removes its partial file.
class EtWriter {
 public:
  EtWriter(const std::string& path, const TraceMetadata& meta);
  ~EtWriter();
  EtWriter(const EtWriter&) = delete;
  EtWriter& operator=(const EtWriter&) = delete;

  void write(const TraceNode& node);
  /// Flushes and renames; throws InputError (the path, not writable) on a failed write.
  void close();
  uint64_t bytes_written() const { return bytes_; }

 private:
  struct Impl;
  std::string path_, part_;
  std::ofstream out_;
  std::unique_ptr<Impl> impl_;
  uint64_t bytes_ = 0;
  bool closed_ = false;
};

struct EtFile {
  TraceMetadata meta;
  std::vector<TraceNode> nodes;
};

/// Reads a whole file. Throws InputError naming the file (and the node after which it
/// broke off) for a missing file, a truncated or corrupt message, and what decode_node
/// refuses.
EtFile read_et_file(const std::string& path);

}  // namespace rapid::trace
