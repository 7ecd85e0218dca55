// The ns-3 network the harness simulates a case on (docs/ns3.md "Harness").
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "case_io.hpp"

namespace netref {

struct Options {
  /// 0: each connection's window (initial and slow-start threshold) is window_bdp times its
  /// path's bandwidth-delay product (a RoCE/IB sender starts at line rate, and its rate does
  /// not depend on when ACKs return); otherwise this many segments.
  uint32_t initial_window_segments = 0;
  double window_bdp = 2.0;
  /// ECN-mark at the hosts' own egress queues too (default: switches only, DCQCN's
  /// congestion points; a NIC's own queue is its send queue).
  bool mark_at_hosts = false;
  /// Hosts send pure ACKs ahead of their queued data (an RDMA NIC's ACKs do not wait
  /// behind its send queue).
  bool ack_first = true;
  /// Pace each sender at its NIC's line rate (an RDMA NIC's rate limiter). Off by default:
  /// with ns-3's pacing (rate cwnd / RTT x ratio) incast and the degraded ring are far from
  /// both our model and the unpaced run (docs/ns3.md "Calibration of the reference").
  bool pacing = false;
  uint32_t pacing_ratio = 0;  ///< percent of cwnd / RTT; 0: ns-3's (200 slow start, 120)
  /// ECN marking threshold in bandwidth-delay products of the link (DCTCP's K).
  double k_bdp = 1.0;
  /// DCTCP's alpha at the start (ns-3 and Linux default 1: the first mark halves the
  /// window). 0: the first reaction is to the marks seen, as a line-rate RDMA sender that
  /// has seen no congestion (docs/ns3.md).
  double alpha_on_init = 0.0;
  /// The receiver acknowledges every this many segments (ns-3's DelAckCount). 1: every
  /// segment at once, as an RC responder acknowledges a message's last packet at once
  /// (docs/ns3.md "Acknowledgments"); ns-3's default 2 holds a lone segment's ACK for its
  /// 200 ms delayed-ACK timer, which a window of one segment turns into a timeout.
  uint32_t ack_every_segments = 1;
  /// Every this many seconds of wall time (checked when a flow completes, so no event is
  /// added), one line `progress,wall_s,...,sim_s,...,flows,...,bytes,...` on stderr; 0: none.
  double progress_s = 0.0;
};

struct Result {
  std::vector<double> finish_s;  ///< per flow, from the workload's start
  size_t connections = 0;
  size_t incomplete = 0;
  uint64_t marked = 0, dropped = 0;  ///< ECN marks and drops over every queue
  /// Retransmission timeouts over every sender (entries into TCP's Loss state, RFC 5681
  /// sec. 3.1 / RFC 6298 sec. 5); a lossless run should have none.
  uint64_t timeouts = 0;
};

Result simulate(const Topology& topo, const std::vector<Flow>& flows, const Options& opt);

}  // namespace netref
