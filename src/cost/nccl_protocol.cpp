// NCCL's protocol tables; header for the sources ([TU], [EQ], [CH]).
#include "rapid/cost/nccl_protocol.hpp"

#include <algorithm>
#include <cmath>

namespace rapid {

namespace {

constexpr double kUs = 1e-6;
constexpr double kGBps = 1e9;

// baseLat [TU], microseconds, {LL, LL128, Simple}: Tree {6.8, 14.0, 8.4}, Ring {6.6, 14.0,
// 8.4}. Only the offsets from Simple are used: the network file's collective_latency is
// the measured start-up of a Simple call (docs/collectives.md sec 7).
constexpr double kBase[2][3] = {{6.6, 14.0, 8.4}, {6.8, 14.0, 8.4}};  // Ring, Tree

// hwLat [TU], microseconds per step, {LL, LL128} of the NVLINK, PCI and NET rows. The ring's
// NVLINK row comes from the network file (nvlink_step_latency_ll/_ll128, NCCL's 0.6 / 1.9
// us by default), so it is not repeated here.
constexpr double kRingStep[3][2] = {{0, 0}, {1.0, 2.5}, {2.7, 4.0}};
constexpr double kTreeStep[3][2] = {{0.6, 1.25}, {1.0, 1.9}, {5.0, 8.5}};

// NCCL_NET_OVERHEAD's default on x86 Intel hosts, 1 us per network post: the floor of an
// intra-node step once a call spans nodes [TU getNetOverhead].
constexpr double kNetOverheadUs = 1.0;

// llMaxBws [TU v2.28], GB/s: one node by GPU generation (Volta 39.0, Ampere 87.7, Hopper
// 141.0, Blackwell 2 x 141.0); several nodes by host CPU, Intel's row {39.0 for 2 nodes,
// 20.4 beyond} taken (the CPU vendor is not in our inputs).
constexpr double kLlMaxSingle[4] = {39.0, 87.7, 141.0, 282.0};
constexpr double kLlMaxTwoNodes = 39.0;
constexpr double kLlMaxMoreNodes = 20.4;

// perChMaxRingLL128Bws and perChMaxTreeLL128Bws [TU], GB/s per channel, rows {1, 2, more
// nodes}; Blackwell twice Hopper (v2.28).
constexpr double kRingLl128PerCh[4][3] = {
    {20.0, 20.0, 20.0}, {20.0, 20.0, 20.0}, {36.7, 36.7, 36.7}, {73.4, 73.4, 73.4}};
constexpr double kTreeLl128PerCh[4][3] = {
    {20.0, 20.0, 20.0}, {20.0, 20.0, 20.0}, {36.7, 36.7, 29.0}, {73.4, 73.4, 58.0}};

// LL moves 4 data bytes per 8-byte store where LL128 moves 120 per 128: a channel issuing
// the same stores carries 0.5 / 0.92 of LL128's payload (our derivation, docs/collectives.md).
constexpr double kLlPerLl128 = 0.5 / 0.92;

}  // namespace

int nccl_node_row(int64_t nodes) {
  return nodes <= 1 ? 0 : nodes == 2 ? 1 : 2;
}

const char* protocol_name(CollectiveProtocol p) {
  static const char* names[] = {"Simple", "LL", "LL128"};
  return names[static_cast<int>(p)];
}

NcclArch nccl_arch(double cc) {
  if (cc >= 10.0) return NcclArch::Blackwell;
  if (cc >= 9.0) return NcclArch::Hopper;
  if (cc >= 8.0) return NcclArch::Ampere;
  return NcclArch::Volta;
}

ProtocolCosts protocol_costs(CollectiveProtocol p, ProtocolAlgorithm a, NcclArch arch,
                             int64_t nodes, bool nvlink, double nvlink_ring_step_s) {
  ProtocolCosts c;
  if (p == CollectiveProtocol::Simple) return c;
  const int ai = a == ProtocolAlgorithm::Ring ? 0 : 1;
  const int pi = p == CollectiveProtocol::LL ? 0 : 1;
  const int row = nccl_node_row(nodes);
  const auto& step = a == ProtocolAlgorithm::Ring ? kRingStep : kTreeStep;
  c.base_offset_s = (kBase[ai][pi] - kBase[ai][2]) * kUs;
  c.intra_step_s =
      a == ProtocolAlgorithm::Ring && nvlink ? nvlink_ring_step_s : step[nvlink ? 0 : 1][pi] * kUs;
  if (nodes > 1) c.intra_step_s = std::max(c.intra_step_s, kNetOverheadUs * kUs);
  c.net_step_s = step[2][pi] * kUs;
  const int gi = static_cast<int>(arch);
  const double ll128_per_ch =
      (a == ProtocolAlgorithm::Ring ? kRingLl128PerCh : kTreeLl128PerCh)[gi][row] * kGBps;
  if (p == CollectiveProtocol::LL128) {
    c.link_share = a == ProtocolAlgorithm::Ring ? 0.92 : 120.0 / 128.0;
    c.per_channel_Bps = ll128_per_ch;
    return c;
  }
  c.link_share = a == ProtocolAlgorithm::Ring ? 0.5 : 1.0 / 3.8;
  c.per_channel_Bps = ll128_per_ch * kLlPerLl128;
  c.total_cap_Bps = (row == 0   ? kLlMaxSingle[gi]
                     : row == 1 ? kLlMaxTwoNodes
                                : kLlMaxMoreNodes) *
                    kGBps;
  return c;
}

bool protocol_enabled(CollectiveProtocol p, double cc, bool nvlink) {
  if (p != CollectiveProtocol::LL128) return true;
  const double major_minor = std::round(cc * 10.0);
  return nvlink &&
         (major_minor == 70 || major_minor == 80 || major_minor == 90 || major_minor == 100);
}

}  // namespace rapid
