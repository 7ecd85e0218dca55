#include "path_routing.hpp"

#include "ns3/ipv4-route.h"
#include "ns3/ipv4.h"
#include "ns3/node.h"

namespace netref {

ns3::Ptr<ns3::Ipv4Route> PathRouting::route(int64_t src, ns3::Ipv4Address dst) const {
  const auto h = tables_->host_of.find(dst.Get());
  if (h == tables_->host_of.end()) return nullptr;
  const auto& next = tables_->next[static_cast<size_t>(vertex_)];
  const auto hop = next.find(PathTables::key(src, h->second));
  if (hop == next.end()) return nullptr;
  ns3::Ptr<ns3::Ipv4Route> r = ns3::Create<ns3::Ipv4Route>();
  r->SetDestination(dst);
  r->SetSource(tables_->host_addr[static_cast<size_t>(src)]);
  r->SetGateway(hop->second.gateway);
  r->SetOutputDevice(ipv4_->GetNetDevice(hop->second.iface));
  return r;
}

ns3::Ptr<ns3::Ipv4Route> PathRouting::RouteOutput(ns3::Ptr<ns3::Packet>,
                                                  const ns3::Ipv4Header& header,
                                                  ns3::Ptr<ns3::NetDevice>,
                                                  ns3::Socket::SocketErrno& sockerr) {
  // Locally sent packets leave hosts only; the source is this host.
  ns3::Ptr<ns3::Ipv4Route> r = route(vertex_, header.GetDestination());
  sockerr = r ? ns3::Socket::ERROR_NOTERROR : ns3::Socket::ERROR_NOROUTETOHOST;
  return r;
}

bool PathRouting::RouteInput(ns3::Ptr<const ns3::Packet> p, const ns3::Ipv4Header& header,
                             ns3::Ptr<const ns3::NetDevice> idev, UnicastForwardCallback ucb,
                             MulticastForwardCallback, LocalDeliverCallback lcb,
                             ErrorCallback ecb) {
  const uint32_t iif = static_cast<uint32_t>(ipv4_->GetInterfaceForDevice(idev));
  if (ipv4_->IsDestinationAddress(header.GetDestination(), iif)) {
    if (!lcb.IsNull()) lcb(p, header, iif);
    return true;
  }
  const auto s = tables_->host_of.find(header.GetSource().Get());
  ns3::Ptr<ns3::Ipv4Route> r =
      s == tables_->host_of.end() ? nullptr : route(s->second, header.GetDestination());
  if (!r) {
    if (!ecb.IsNull()) ecb(p, header, ns3::Socket::ERROR_NOROUTETOHOST);
    return false;
  }
  ucb(r, p, header);
  return true;
}

}  // namespace netref
