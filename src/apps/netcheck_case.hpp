// `rapid netcheck`'s flow lists (docs/ns3.md): one communication workload of issue 15 as the
// flows the DES would put on the fabric, each split into the steps of its algorithm with the
// data dependencies between them, together with the routes the fabric gives them. The same
// case is written for the ns-3 reference harness (tests/reference/ns3/) and replayed through
// our FlowNetwork (netcheck_replay.cpp).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "rapid/cost/collective_cost.hpp"
#include "rapid/des/fabric.hpp"
#include "rapid/spec/network_spec.hpp"

namespace rapid {

/// One flow: `bytes` from GPU src to GPU dst, started when every flow of `deps` has
/// completed (and not before start_s).
struct NetFlow {
  int64_t src = 0, dst = 0;
  double bytes = 0;
  double start_s = 0;
  int32_t collective = 0;  ///< index into NetCase::collectives
  std::vector<int32_t> deps;
};

/// A route: the fabric's link ids from GPU src to GPU dst.
struct NetRoute {
  int64_t src = 0, dst = 0;
  std::vector<int32_t> links;
};

struct NetCase {
  std::string workload;
  std::vector<std::string> collectives;  ///< "ring all-reduce 64 ranks", ...
  std::vector<NetFlow> flows;
  std::vector<NetRoute> routes;  ///< every (src, dst) of the flows and its reverse (ACKs)
};

/// What to build: `workload` is ring, tree, two-rings, alltoall, pipeline, incast or
/// degraded; `ranks` GPUs, `bytes` the collective's buffer (nccl-tests convention) or the
/// message of a p2p/incast flow.
struct NetcheckSpec {
  std::string workload = "ring";
  int64_t ranks = 8;
  double bytes = 1 << 20;
};

/// The network the workload runs on: `base` with efficiencies 1 (the links at line rate:
/// the framing overhead is the replay's, from the MTU, and ns-3's own) and no ring bubble
/// (the flows carry the algorithm's bytes), plus what the workload needs (two-rings: 2
/// nodes per leaf, oversubscription 4).
NetworkSpec netcheck_network(const NetcheckSpec& spec, const NetworkSpec& base);

/// Builds the case on `fabric` (reset by the call) for `spec`. Throws InputError (key
/// --workload / --ranks / --bytes) for a combination that does not make the workload.
NetCase build_case(const NetcheckSpec& spec, const NetworkSpec& net, const HardwareSpec& hw,
                   des::Fabric& fabric);

}  // namespace rapid
