#include "rapid/trace/et_file.hpp"

#include <fmt/format.h>
#include <google/protobuf/util/delimited_message_util.h>

#include <cstdio>
#include <filesystem>
#include <iterator>
#include <limits>

#include "chakra_et.pb.h"
#include "rapid/common/error.hpp"
#include "rapid/trace/chakra_codec.hpp"

namespace rapid::trace {

namespace pbu = google::protobuf::util;

std::string et_path(const std::string& dir, const std::string& prefix, int64_t rank) {
  return (std::filesystem::path(dir) / fmt::format("{}.{}.et", prefix, rank)).string();
}

struct EtWriter::Impl {
  ChakraProtoMsg::Node node;  // reused: no allocation per node once warm
};

EtWriter::EtWriter(const std::string& path, const TraceMetadata& meta)
    : path_(path), part_(path + ".part"), impl_(std::make_unique<Impl>()) {
  out_.open(part_, std::ios::binary | std::ios::trunc);
  if (!out_) throw InputError(path_, "-o", path_, "a writable directory");
  ChakraProtoMsg::GlobalMetadata m;
  encode_metadata(meta, m);
  bytes_ += m.ByteSizeLong();
  // The length prefix of every message is a varint (SerializeDelimitedToOstream).
  if (!pbu::SerializeDelimitedToOstream(m, &out_))
    throw InputError(path_, "-o", path_, "a writable file");
}

EtWriter::~EtWriter() {
  if (!closed_) {
    out_.close();
    std::remove(part_.c_str());
  }
}

void EtWriter::write(const TraceNode& node) {
  encode_node(node, impl_->node);
  bytes_ += impl_->node.ByteSizeLong();
  if (!pbu::SerializeDelimitedToOstream(impl_->node, &out_))
    throw InputError(path_, "-o", path_, "a writable file (the write failed)");
}

void EtWriter::close() {
  out_.close();
  if (!out_) throw InputError(path_, "-o", path_, "a writable file (the write failed)");
  std::error_code ec;
  std::filesystem::rename(part_, path_, ec);
  if (ec) throw InputError(path_, "-o", path_, "a writable directory (" + ec.message() + ")");
  closed_ = true;
}

namespace {

/// The messages of one file, framed as Chakra's feeder frames them (a varint length, then
/// that many bytes), with every framing fault named: a length prefix longer than 10 bytes
/// or above 2^64 (not a varint), a length past the end of the file (a cut-off message or
/// bytes that are not a message), a message protobuf cannot parse.
class Framing {
 public:
  Framing(const std::string& path, std::string bytes) : path_(path), bytes_(std::move(bytes)) {}

  bool done() const { return at_ >= bytes_.size(); }

  /// The next message into `msg`; `what` names it in messages ("node 12 (after node 11)").
  void next(google::protobuf::MessageLite& msg, const std::string& what) {
    const size_t begin = at_;
    uint64_t len = 0;
    int shift = 0;
    while (true) {
      if (at_ >= bytes_.size())
        fail(what, begin, "a length prefix cut off by the end of the file",
             "a complete varint length prefix (the file is cut short)");
      const auto b = static_cast<uint8_t>(bytes_[at_++]);
      if (shift == 63 && b > 1)
        fail(what, begin, "a length prefix above 2^64", "a varint length of at most 10 bytes");
      len |= static_cast<uint64_t>(b & 0x7f) << shift;
      if (!(b & 0x80)) break;
      shift += 7;
      if (shift > 63)
        fail(what, begin, "a length prefix longer than 10 bytes", "a varint length prefix");
    }
    const uint64_t left = bytes_.size() - at_;
    if (len > left)
      fail(what, begin, fmt::format("a length prefix of {} bytes with {} bytes left", len, left),
           "a message that fits in the file (the file is cut short, or bytes after the last "
           "message are not a message)");
    if (!msg.ParseFromArray(bytes_.data() + at_, static_cast<int>(len)))
      fail(what, begin, fmt::format("{} bytes that are not a {} message", len, msg.GetTypeName()),
           "a well-formed Chakra ET message");
    at_ += static_cast<size_t>(len);
  }

 private:
  [[noreturn]] void fail(const std::string& what, size_t offset, const std::string& value,
                         const std::string& expected) const {
    throw InputError(path_, fmt::format("{} at byte {}", what, offset), value, expected);
  }

  const std::string& path_;
  std::string bytes_;
  size_t at_ = 0;
};

}  // namespace

EtFile read_et_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError(path, "file", path, "a readable Chakra ET file");
  std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (in.bad()) throw InputError(path, "file", path, "a readable Chakra ET file (read failed)");
  if (bytes.size() > static_cast<size_t>(std::numeric_limits<int>::max()))
    throw InputError(path, "file", fmt::format("{} bytes", bytes.size()),
                     "at most 2 GiB per rank's file (protobuf's message limit)");
  if (bytes.empty())
    throw InputError(path, "GlobalMetadata", "an empty file",
                     "a length-prefixed GlobalMetadata message first (Chakra ET)");
  Framing frames(path, std::move(bytes));
  EtFile f;
  ChakraProtoMsg::GlobalMetadata meta;
  frames.next(meta, "GlobalMetadata");
  decode_metadata(meta, f.meta);
  ChakraProtoMsg::Node node;
  while (!frames.done()) {
    const std::string what =
        fmt::format("node {} (after {})", f.nodes.size(),
                    f.nodes.empty() ? "the metadata" : fmt::format("node {}", f.nodes.back().id));
    node.Clear();
    frames.next(node, what);
    decode_node(node, path, f.nodes.emplace_back());
  }
  return f;
}

}  // namespace rapid::trace
