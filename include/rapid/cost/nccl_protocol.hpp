// NCCL's three protocols as its tuning model describes them (docs/collectives.md sec 6b):
// what each costs per call and per step, what share of a link it moves, how many channels
// a message of a given size runs on. Sources:
//  [TU]  NVIDIA/nccl src/graph/tuning.cc: v2.20.3 (commit b6475625) for baseLat, hwLat,
//        the thread thresholds and the per-channel LL128 caps; v2.28.7-1 (the Ring/LL busBw
//        factor 0.5 and the Hopper/Blackwell llMaxBws rows 141/45/35 and 2x, lines 304-305).
//  [EQ]  NVIDIA/nccl src/enqueue.cc (2.1x-2.2x, "Ring/Tree channel tuning"): a call runs on
//        the largest channel count nc <= the communicator's with bytes >= nc * nt *
//        threshold, nt the protocol's threads per channel (halved below one channel).
//  [CH]  src/include/comm.h / device.h: NCCL_LL_THREAD_THRESHOLD 8, LL128 8, SIMPLE 64
//        bytes per thread; NCCL_LL_MAX_NTHREADS 512, NCCL_LL128_MAX_NTHREADS 640,
//        NCCL_SIMPLE_MAX_NTHREADS 512; the ring LL threshold is multiplied by nRanks [TU].
#pragma once

#include <cstdint>

namespace rapid {

/// NCCL's protocols: LL (8-byte stores, 4 bytes of data and a 4-byte flag), LL128
/// (128-byte lines, 120 bytes of data), Simple (bulk copies behind a memory fence).
enum class CollectiveProtocol : uint8_t { Simple, LL, LL128 };
const char* protocol_name(CollectiveProtocol p);

/// The GPU generations NCCL's per-architecture tables distinguish [TU].
enum class NcclArch : uint8_t { Volta, Ampere, Hopper, Blackwell };
/// The row for a CUDA compute capability (MI300X's 9.4 reads as Hopper: RCCL's own tuning
/// tables are not modelled, docs/collectives.md).
NcclArch nccl_arch(double compute_capability);

/// The algorithms whose protocols differ (the others run Simple only).
enum class ProtocolAlgorithm : uint8_t { Ring, Tree };

struct ProtocolCosts {
  /// Start-up of one call relative to Simple's: baseLat[a][p] - baseLat[a][Simple] [TU].
  double base_offset_s = 0;
  /// One step inside a node over NVLink (PCIe when the node has no NVLink) and one through
  /// the NICs: hwLat [TU]. Unused for Simple, whose steps the network file gives.
  double intra_step_s = 0;
  double net_step_s = 0;
  /// Payload bytes per byte a link carries: LL 0.5 [TU v2.28], LL128 0.92 (~120/128),
  /// Simple 1; trees: LL 1/3.8, LL128 120/128 between nodes [TU].
  double link_share = 1;
  /// Bus bandwidth one channel moves at most (B/s); 0: a channel's share of the links.
  /// LL128: perChMaxRingLL128Bws / perChMaxTreeLL128Bws [TU]; LL: LL128's times 0.5/0.92
  /// (the same line stores carrying half the data instead of 120/128: our derivation).
  double per_channel_Bps = 0;
  /// Bus bandwidth of the whole call at most (B/s); 0: none. LL: llMaxBws [TU].
  double total_cap_Bps = 0;
};

/// NCCL's row of its per-node-count tables: 0 for one node, 1 for two, 2 for more.
int nccl_node_row(int64_t nodes);

/// The protocol's costs for `arch`, `nodes` nodes (NCCL's rows: 1, 2, more), inside nodes
/// wired by NVLink or not; `nvlink_ring_step_s` is p's ring step over NVLink (the network
/// file's nvlink_step_latency_ll / _ll128), at least NCCL's 1 us once a call spans nodes.
ProtocolCosts protocol_costs(CollectiveProtocol p, ProtocolAlgorithm a, NcclArch arch,
                             int64_t nodes, bool nvlink, double nvlink_ring_step_s);

/// Whether NCCL enables `p` by default: LL and Simple always; LL128 only on sm_70/80/90/100
/// GPUs with NVLink inside the node ("other cases are not tested and may cause silent data
/// corruption" [TU]).
bool protocol_enabled(CollectiveProtocol p, double compute_capability, bool nvlink);

/// Channels a call of `bytes` runs on out of the communicator's `channels` [EQ]: the
/// largest nc with bytes >= nc * threads * threshold, at least one. Threads per channel: LL
/// 512, LL128 640, Simple 512; bytes per thread: LL 8 (times the ranks on a ring), LL128 8,
/// Simple 64 [CH]. Inline: every collective of a sweep asks it.
inline int64_t channels_used(CollectiveProtocol p, ProtocolAlgorithm a, double bytes, int64_t ranks,
                             int64_t channels) {
  double threshold = p == CollectiveProtocol::Simple ? 64.0 : 8.0;
  if (p == CollectiveProtocol::LL && a == ProtocolAlgorithm::Ring)
    threshold *= static_cast<double>(ranks);
  const double per_channel = (p == CollectiveProtocol::LL128 ? 640.0 : 512.0) * threshold;
  if (bytes >= per_channel * static_cast<double>(channels)) return channels;
  const int64_t fits = static_cast<int64_t>(bytes / per_channel);  // floor: both positive
  return fits < 1 ? 1 : fits;
}

}  // namespace rapid
