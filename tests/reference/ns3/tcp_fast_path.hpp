// Counters of the harness's constant-time TcpTxBuffer::NextSeg (tcp_fast_path.cpp).
#pragma once

#include <cstdint>

namespace netref {

struct FastPathStats {
  uint64_t next_seg_fast = 0;     ///< calls answered without walking the sent list
  uint64_t next_seg_library = 0;  ///< calls handed to ns-3's own NextSeg (loss or recovery)
  uint64_t verified = 0;          ///< fast answers checked against the library's
  bool verify = false;            ///< check every fast answer against the library's
};

FastPathStats& fast_path_stats();

}  // namespace netref
