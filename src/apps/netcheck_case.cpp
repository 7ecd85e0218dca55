#include "apps/netcheck_case.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <set>
#include <utility>

#include "rapid/common/error.hpp"
#include "rapid/des/comm_layouts.hpp"

namespace rapid {

namespace {

constexpr const char* kCli = "<command line>";

// Appends the flows of `plan` on `members`: each tier's member flows (pattern_flows, as the
// DES routes them) cut into steps of about one ring chunk S/n each (Thakur, Rabenseifner &
// Gropp 2005: a ring moves S/n per step), `passes` times over (ring all-reduce =
// reduce-scatter + all-gather). Step k of a flow a -> b waits for step k-1 of a -> b (the
// sender's order) and for step k-1 of the flow into a (the chunk a forwards). Patterns with
// several flows into one member (pairs, chains) are one step without dependencies.
void add_plan(NetCase& c, const CollectivePlan& plan, const std::vector<int64_t>& members,
              double bytes, int passes, const des::Fabric& fabric, int32_t coll) {
  const double n = static_cast<double>(members.size());
  for (int t = 0; t < plan.num_tiers; ++t) {
    const CollectiveTier& tier = plan.tiers[static_cast<size_t>(t)];
    std::vector<int64_t> src, dst;
    des::pattern_flows(fabric, tier.pattern, members, src, dst);
    const bool ring = tier.pattern == FlowPattern::IntraRing ||
                      tier.pattern == FlowPattern::InterRing || tier.pattern == FlowPattern::Peer;
    const int64_t steps =
        ring ? std::max<int64_t>(1, std::llround(tier.flow_bytes * n / bytes)) : 1;
    const size_t F = src.size();
    std::vector<int64_t> into(F, -1);  // the flow into each flow's source
    for (size_t f = 0; f < F; ++f)
      for (size_t g = 0; g < F && ring; ++g)
        if (dst[g] == src[f]) into[f] = static_cast<int64_t>(g);
    const int32_t first = static_cast<int32_t>(c.flows.size());
    for (int64_t k = 0; k < steps * passes; ++k)
      for (size_t f = 0; f < F; ++f) {
        NetFlow fl{src[f], dst[f], tier.flow_bytes / static_cast<double>(steps), 0.0, coll, {}};
        if (k > 0) {
          const int32_t prev = first + static_cast<int32_t>((k - 1) * static_cast<int64_t>(F));
          fl.deps.push_back(prev + static_cast<int32_t>(f));
          if (into[f] >= 0) fl.deps.push_back(prev + static_cast<int32_t>(into[f]));
        }
        c.flows.push_back(std::move(fl));
      }
  }
}

GroupShape shape(int64_t size, int64_t stride, int64_t gpus_per_node) {
  const int64_t per_node = stride >= gpus_per_node ? 1 : std::min(size, gpus_per_node / stride);
  return GroupShape{size, per_node, (size + per_node - 1) / per_node, stride};
}

std::vector<int64_t> members_of(int64_t base, const GroupShape& g) {
  std::vector<int64_t> m;
  for (int64_t i = 0; i < g.size; ++i) m.push_back(base + i * g.stride);
  return m;
}

void ring_allreduce(NetCase& c, const CollectiveCost& cost, double bytes, int64_t base,
                    const GroupShape& g, const des::Fabric& fabric, const std::string& name) {
  c.collectives.push_back(name);
  // One all-gather pass per half: the ring all-reduce's reduce-scatter has the same flows.
  const CollectivePlan p = cost.plan(CollectiveKind::AllGather, bytes, g);
  add_plan(c, p, members_of(base, g), bytes, 2, fabric,
           static_cast<int32_t>(c.collectives.size() - 1));
}

void add_routes(NetCase& c, des::Fabric& fabric) {
  std::set<std::pair<int64_t, int64_t>> pairs;
  for (const NetFlow& f : c.flows) {
    pairs.insert({f.src, f.dst});
    pairs.insert({f.dst, f.src});
  }
  for (auto [s, d] : pairs) {
    NetRoute r{s, d, {}};
    if (!fabric.route(s, d, r.links))
      throw InputError(
          kCli, "--workload", c.workload,
          fmt::format("routable flows (gpu {} -> gpu {}: {})", s, d, fabric.route_failure()));
    c.routes.push_back(std::move(r));
  }
}

}  // namespace

NetworkSpec netcheck_network(const NetcheckSpec& spec, const NetworkSpec& base) {
  NetworkSpec n = base;
  n.network_efficiency = 1.0;
  n.nvlink_ring_bubble = 0.0;
  n.network_ring_bubble = 0.0;
  n.faults.clear();
  if (spec.workload == "two-rings") {
    // 2 nodes (16 NICs) per leaf; oversubscription 16 leaves one uplink of the spine's
    // rate per leaf (Fabric: U = downlinks * leaf_bw / (oversubscription * spine_bw)).
    n.nodes_per_leaf = 2;
    n.oversubscription = 16.0 * n.leaf_bandwidth_Bps / n.spine_bandwidth_Bps;
  }
  return n;
}

NetCase build_case(const NetcheckSpec& spec, const NetworkSpec& net, const HardwareSpec& hw,
                   des::Fabric& fabric) {
  HardwareSpec h = hw;
  h.nvlink_efficiency = 1.0;  // line rate (see netcheck_network)
  const CollectiveCost cost(h, net);
  const int64_t gpn = net.gpus_per_node, n = spec.ranks;
  if (net.nics_per_node != gpn || net.topology != Topology::FatTree)
    throw InputError(kCli, "--network", net.name,
                     "a fat tree with one NIC per GPU (the harness has no NIC shared by GPUs)");
  const std::string& w = spec.workload;
  const bool one_per_node = w == "two-rings" || w == "degraded" || w == "pipeline" || w == "incast";
  const int64_t gpus = one_per_node ? n * gpn : n;
  std::vector<LinkFault> faults;
  if (w == "degraded") {
    LinkFault f;  // the NIC link of the ring's second GPU at half its bandwidth
    f.selector = LinkSelector::Nic;
    f.index = gpn;
    f.health = 0.5;
    faults.push_back(f);
  }
  if (n < 2) throw InputError(kCli, "--ranks", std::to_string(n), "at least 2");
  if (!(spec.bytes > 0)) throw InputError(kCli, "--bytes", fmt::format("{}", spec.bytes), "> 0");
  fabric.reset(net, cost.nvlink_Bps(), gpus, faults);
  NetCase c;
  c.workload = w;
  if (w == "ring" || w == "degraded") {
    const GroupShape g = shape(n, w == "ring" ? 1 : gpn, gpn);
    ring_allreduce(c, cost, spec.bytes, 0, g, fabric, fmt::format("ring all-reduce {} ranks", n));
  } else if (w == "two-rings") {
    if (n % 2 != 0) throw InputError(kCli, "--ranks", std::to_string(n), "even (two rings)");
    const GroupShape g = shape(n / 2, gpn, gpn);
    // Rings on GPU 0 and GPU 1 of n / 2 nodes: different NICs, the same leaf uplinks.
    // Both rings span the nodes 0 .. n/2 - 1, so with 2 nodes per leaf each leaf's one
    // uplink carries one hop of each ring.
    ring_allreduce(c, cost, spec.bytes, 0, g, fabric, "ring A");
    ring_allreduce(c, cost, spec.bytes, 1, g, fabric, "ring B");
  } else if (w == "tree") {
    const GroupShape g = shape(n, 1, gpn);
    const CollectivePlan p = cost.plan(CollectiveKind::AllReduce, spec.bytes, g);
    if (p.algorithm != CollectiveAlgorithm::Tree)
      throw InputError(kCli, "--bytes", fmt::format("{}", spec.bytes),
                       "a size at which NCCL's choice is the tree for this group");
    c.collectives.push_back(fmt::format("tree all-reduce {} ranks", n));
    add_plan(c, p, members_of(0, g), spec.bytes, 1, fabric, 0);
  } else if (w == "alltoall") {
    const GroupShape g = shape(n, 1, gpn);
    c.collectives.push_back(fmt::format("all-to-all {} ranks", n));
    add_plan(c, cost.plan(CollectiveKind::AllToAll, spec.bytes, g), members_of(0, g), spec.bytes, 1,
             fabric, 0);
  } else if (w == "pipeline" || w == "incast") {
    // GPU 0 of each node; pipeline: stage i -> i + 1 after i - 1 -> i; incast: nodes 1 ..
    // n-1 -> node 0 at once. Each transfer is the send/recv plan's one Peer flow.
    const GroupShape pair = shape(2, gpn, gpn);
    const double flow_bytes =
        cost.plan(CollectiveKind::SendRecv, spec.bytes, pair).tiers[0].flow_bytes;
    c.collectives.push_back(w == "pipeline" ? fmt::format("pipeline p2p chain {} stages", n)
                                            : fmt::format("incast {} -> 1", n - 1));
    for (int64_t i = 0; i + 1 < n; ++i) {
      NetFlow f{w == "pipeline" ? i * gpn : (i + 1) * gpn,
                w == "pipeline" ? (i + 1) * gpn : 0,
                flow_bytes,
                0.0,
                0,
                {}};
      if (w == "pipeline" && i > 0) f.deps.push_back(static_cast<int32_t>(i - 1));
      c.flows.push_back(std::move(f));
    }
  } else {
    throw InputError(kCli, "--workload", w,
                     "ring, tree, two-rings, alltoall, pipeline, incast or degraded");
  }
  add_routes(c, fabric);
  return c;
}

}  // namespace rapid
