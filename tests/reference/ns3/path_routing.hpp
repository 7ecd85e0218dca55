// Source routing for the ns-3 harness (docs/ns3.md "Harness"): every node forwards a packet
// from host S to host D to the next vertex of netcheck's route line (S, D), the path our
// Fabric chose (ECMP hash included), so both sides put each flow on the same links. An
// Ipv4RoutingProtocol because ns-3's static routing keys on the destination only, and an
// ECMP fabric's path depends on the source too.
#pragma once

#include <cstdint>
#include <memory>
#include <unordered_map>
#include <vector>

#include "ns3/ipv4-routing-helper.h"
#include "ns3/ipv4-routing-protocol.h"
#include "ns3/node.h"

namespace netref {

/// What every node's PathRouting reads: host addresses and each node's next hops.
struct PathTables {
  std::unordered_map<uint32_t, int64_t> host_of;  ///< canonical IPv4 address -> host vertex
  std::vector<ns3::Ipv4Address> host_addr;        ///< host vertex -> canonical address
  struct Hop {
    uint32_t iface = 0;        ///< output interface at this node
    ns3::Ipv4Address gateway;  ///< the neighbour's address on that link
  };
  /// per vertex: (src host << 32 | dst host) -> hop
  std::vector<std::unordered_map<uint64_t, Hop>> next;
  static uint64_t key(int64_t s, int64_t d) {
    return (static_cast<uint64_t>(s) << 32) | static_cast<uint64_t>(d);
  }
};

class PathRouting : public ns3::Ipv4RoutingProtocol {
 public:
  PathRouting(std::shared_ptr<const PathTables> tables, int64_t vertex)
      : tables_(std::move(tables)), vertex_(vertex) {}
  ns3::Ptr<ns3::Ipv4Route> RouteOutput(ns3::Ptr<ns3::Packet> p, const ns3::Ipv4Header& header,
                                       ns3::Ptr<ns3::NetDevice> oif,
                                       ns3::Socket::SocketErrno& sockerr) override;
  bool RouteInput(ns3::Ptr<const ns3::Packet> p, const ns3::Ipv4Header& header,
                  ns3::Ptr<const ns3::NetDevice> idev, UnicastForwardCallback ucb,
                  MulticastForwardCallback mcb, LocalDeliverCallback lcb,
                  ErrorCallback ecb) override;
  void NotifyInterfaceUp(uint32_t) override {}
  void NotifyInterfaceDown(uint32_t) override {}
  void NotifyAddAddress(uint32_t, ns3::Ipv4InterfaceAddress) override {}
  void NotifyRemoveAddress(uint32_t, ns3::Ipv4InterfaceAddress) override {}
  void SetIpv4(ns3::Ptr<ns3::Ipv4> ipv4) override { ipv4_ = ipv4; }
  void PrintRoutingTable(ns3::Ptr<ns3::OutputStreamWrapper>, ns3::Time::Unit) const override {}

 private:
  ns3::Ptr<ns3::Ipv4Route> route(int64_t src, ns3::Ipv4Address dst) const;
  std::shared_ptr<const PathTables> tables_;
  int64_t vertex_;
  ns3::Ptr<ns3::Ipv4> ipv4_;
};

/// Installs a PathRouting on each node (InternetStackHelper::SetRoutingHelper); node i is
/// vertex i.
class PathRoutingHelper : public ns3::Ipv4RoutingHelper {
 public:
  explicit PathRoutingHelper(std::shared_ptr<const PathTables> t) : tables_(std::move(t)) {}
  PathRoutingHelper* Copy() const override { return new PathRoutingHelper(*this); }
  ns3::Ptr<ns3::Ipv4RoutingProtocol> Create(ns3::Ptr<ns3::Node> node) const override {
    return ns3::Create<PathRouting>(tables_, static_cast<int64_t>(node->GetId()));
  }

 private:
  std::shared_ptr<const PathTables> tables_;
};

}  // namespace netref
