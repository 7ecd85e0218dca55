// A constant-time TcpTxBuffer::NextSeg for the lossless case (docs/ns3.md "Run time").
//
// ns-3.37's TcpTxBuffer::NextSeg (src/internet/model/tcp-tx-buffer.cc) implements RFC 6675
// sec. 4's NextSeg: rule 1 returns the first sent segment that is lost and neither SACKed nor
// retransmitted, rule 2 the next unsent segment if the receiver's window allows, rule 3 (only
// in recovery) the first unSACKed, unretransmitted one. It finds rule 1's segment by walking
// the whole sent-but-unacknowledged list, and TcpSocketBase::SendPendingData calls it once per
// segment sent, so a segment costs time in proportion to the bytes in flight. DCTCP's window
// keeps growing while no switch marks (a ring's only queue is the sender's own, which does not
// mark), so over a 1 GB ring the walk was most of the run and the packet rate fell with the
// flow size (profile in docs/ns3.md).
//
// The walk can only return something when an item is marked lost or in recovery: rule 1
// needs an item with m_lost set, and TcpTxBuffer keeps m_lostOut equal to the bytes of the
// items with m_lost set (the invariant its ConsistencyCheck asserts); rule 3 needs isRecovery.
// So when m_lostOut == 0 and not in recovery the answer is rule 2's, which reads counters only,
// and this definition computes it as the library does (same expressions, same receive-window
// callback). In every other case it calls the library's own NextSeg. The lossless runs of
// docs/ns3.md never leave the first case (the harness prints both counts).
//
// How it takes effect: this definition is in the executable, and libns3-internet calls NextSeg
// through its PLT (two call sites in Debian's libns3-internet.so.37, `objdump -d`), so the
// dynamic linker binds those calls to the executable's definition, which comes first in the
// global lookup scope (ELF symbol interposition; System V ABI, "Shared Object Dependencies").
// The library's definition is reached with dlsym(RTLD_NEXT). Were the library linked with
// -Bsymbolic, its own NextSeg would be used and the run would only be slower, not different.
#include <dlfcn.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>

#include "ns3/tcp-tx-buffer.h"
#include "tcp_fast_path.hpp"

namespace netref {

FastPathStats& fast_path_stats() {
  static FastPathStats s;
  return s;
}

}  // namespace netref

namespace ns3 {

namespace {

// The library's NextSeg, called as the Itanium C++ ABI calls a non-virtual member function:
// `this` as the first argument.
using NextSegFn = bool (*)(const TcpTxBuffer*, SequenceNumber32*, SequenceNumber32*, bool);

NextSegFn library_next_seg() {
  static const NextSegFn f = [] {
    void* sym = dlsym(RTLD_NEXT, "_ZNK3ns311TcpTxBuffer7NextSegEPNS_14SequenceNumberIjiEES3_b");
    if (sym == nullptr) {
      std::fprintf(stderr, "ns3-harness: libns3-internet's TcpTxBuffer::NextSeg not found: %s\n",
                   dlerror());
      std::abort();
    }
    return reinterpret_cast<NextSegFn>(sym);
  }();
  return f;
}

}  // namespace

bool TcpTxBuffer::NextSeg(SequenceNumber32* seq, SequenceNumber32* seqHigh, bool isRecovery) const {
  netref::FastPathStats& stats = netref::fast_path_stats();
  if (isRecovery || m_lostOut != 0) {
    ++stats.next_seg_library;
    return library_next_seg()(this, seq, seqHigh, isRecovery);
  }
  ++stats.next_seg_fast;
  bool found = false;
  SequenceNumber32 s, high;
  // Rule 2, as in the library: unsent data, and the receiver's window allows it.
  if (SizeFromSequence(m_firstByteSeq + m_sentSize) > 0 && m_sentSize <= m_rWndCallback()) {
    s = m_firstByteSeq + m_sentSize;
    high = s + std::min<uint32_t>(m_segmentSize, (m_rWndCallback() - m_sentSize));
    found = true;
  }
  if (stats.verify) {
    SequenceNumber32 ls, lhigh;
    const bool lfound = library_next_seg()(this, &ls, &lhigh, isRecovery);
    if (lfound != found || (found && (ls != s || lhigh != high))) {
      std::fprintf(stderr, "ns3-harness: NextSeg fast path differs from the library's\n");
      std::abort();
    }
    ++stats.verified;
  }
  if (found) {
    *seq = s;
    *seqHigh = high;
  }
  return found;
}

}  // namespace ns3
