// Goodput and retransmission delay of a lossy RDMA link (docs/faults.md "Packet loss").
//
// RoCE NICs and InfiniBand reliable connections (RC) recover from loss go-back-N: the
// receiver drops every packet after a missing one and NAKs, the sender resends from the
// missing packet (R. Mittal et al., "Revisiting Network Support for RDMA", SIGCOMM 2018,
// sec. 2: ConnectX NICs' go-back-N; InfiniBand Architecture Specification vol. 1, ch. 9.7,
// the reliable service's sequence-error NAK). By the time the NAK is back the sender has a window
// of
//   W = ceil(bandwidth x RTT / MTU)  packets  (the bandwidth-delay product)
// in flight, all resent. With each packet lost independently with probability p, a packet
// needs p / (1 - p) failed attempts on average, each costing W packet times, plus the one
// that gets through: E[transmissions] = 1 + W p / (1 - p), so the link's goodput is
//   goodput = (1 - p) / (1 + (W - 1) p)
// (the go-back-N efficiency of Bertsekas & Gallager, "Data Networks", 2nd ed., sec. 2.4.2,
// with a window of W frames per round trip).
// A lost *last* packet of a message has no successor to trigger the NAK: the sender waits
// for the RC local ACK timeout, 4.096 us x 2^timeout (InfiniBand spec vol. 1, ch. 9.7; the
// formula NCCL's documentation gives for NCCL_IB_TIMEOUT), with NCCL's NCCL_IB_TIMEOUT = 20 (NCCL
// documentation, "Environment Variables"; src/transport/net_ib.cc: NCCL_PARAM(IbTimeout,
// "IB_TIMEOUT", 20)): 4.29 s. Expected delay per message: p x timeout.
#pragma once

#include <algorithm>
#include <cmath>

namespace rapid {

/// Path MTU of RDMA traffic: InfiniBand's largest MTU and the RoCE MTU NCCL clusters use
/// (the InfiniBand spec's MTUs run from 256 B to 4096 B).
inline constexpr double kRdmaMtu_B = 4096;
/// NCCL_IB_TIMEOUT's default (NCCL >= 2.14; 18 and 14 before).
inline constexpr int kNcclIbTimeout = 20;
/// Network links of a round trip between two leaves: NIC -> leaf -> spine -> leaf -> NIC
/// and back (the RTT the window covers; docs/faults.md).
inline constexpr int kRoundTripLinks = 8;

/// RC local ACK timeout: 4.096 us x 2^timeout (InfiniBand spec vol. 1, ch. 9.7).
inline double rc_ack_timeout_s(int timeout = kNcclIbTimeout) {
  return 4.096e-6 * std::ldexp(1.0, timeout);
}

struct GoBackN {
  double window_packets = 1;  ///< W = ceil(bandwidth x RTT / MTU), >= 1
  double goodput = 1;         ///< (1 - p) / (1 + (W - 1) p)
  double timeout_s = 0;       ///< RC local ACK timeout
  double tail_delay_s = 0;    ///< expected timeout wait per message: p x timeout
};

/// Go-back-N recovery at loss rate `p` in [0, 1) on a link of `capacity_Bps` whose flows'
/// round trip takes `rtt_s`.
inline GoBackN go_back_n(double p, double capacity_Bps, double rtt_s, double mtu_B = kRdmaMtu_B,
                         int timeout = kNcclIbTimeout) {
  GoBackN g;
  g.window_packets = std::max(1.0, std::ceil(capacity_Bps * rtt_s / mtu_B));
  g.goodput = (1.0 - p) / (1.0 + (g.window_packets - 1.0) * p);
  g.timeout_s = rc_ack_timeout_s(timeout);
  g.tail_delay_s = p * g.timeout_s;
  return g;
}

}  // namespace rapid
