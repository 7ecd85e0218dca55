#include "rapid/trace/et_file.hpp"

#include <fmt/format.h>
#include <google/protobuf/io/zero_copy_stream_impl.h>
#include <google/protobuf/util/delimited_message_util.h>

#include <cstdio>
#include <filesystem>

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

EtFile read_et_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError(path, "file", path, "a readable Chakra ET file");
  google::protobuf::io::IstreamInputStream stream(&in);
  EtFile f;
  ChakraProtoMsg::GlobalMetadata meta;
  bool clean_eof = false;
  if (!pbu::ParseDelimitedFromZeroCopyStream(&meta, &stream, &clean_eof))
    throw InputError(path, "GlobalMetadata", clean_eof ? "an empty file" : "truncated or corrupt",
                     "a length-prefixed GlobalMetadata message first (Chakra ET)");
  decode_metadata(meta, f.meta);
  ChakraProtoMsg::Node node;
  while (true) {
    node.Clear();  // the delimited parser merges into the message it is given
    if (!pbu::ParseDelimitedFromZeroCopyStream(&node, &stream, &clean_eof)) {
      if (clean_eof) break;
      const std::string after =
          f.nodes.empty() ? "the metadata" : fmt::format("node {}", f.nodes.back().id);
      throw InputError(path, fmt::format("node {} (after {})", f.nodes.size(), after),
                       "truncated or corrupt message",
                       "a complete length-prefixed Node message (the file is cut short)");
    }
    decode_node(node, path, f.nodes.emplace_back());
  }
  return f;
}

}  // namespace rapid::trace
