#include "reference_net.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <deque>
#include <map>
#include <memory>
#include <set>
#include <unordered_map>

#include "ns3/core-module.h"
#include "ns3/internet-module.h"
#include "ns3/network-module.h"
#include "ns3/point-to-point-module.h"
#include "ns3/traffic-control-module.h"
#include "path_routing.hpp"

namespace netref {

namespace {

using ns3::Ptr;

// Pure ACKs (an IPv4 packet of at most 20 + 20 + 12 header bytes) go to the hosts' first
// band: an RDMA NIC's responder generates ACKs in its receive pipeline and its transmit
// arbiter sends them without waiting behind the send queue's data, whereas one FIFO puts a
// GPU's ACKs for its incoming ring flow behind its own outgoing ring data.
class AckFirstFilter : public ns3::Ipv4PacketFilter {
 public:
  static ns3::TypeId GetTypeId() {
    static ns3::TypeId tid = ns3::TypeId("netref::AckFirstFilter")
                                 .SetParent<ns3::Ipv4PacketFilter>()
                                 .AddConstructor<AckFirstFilter>();
    return tid;
  }

 private:
  int32_t DoClassify(Ptr<ns3::QueueDiscItem> item) const override {
    return item->GetSize() <= 52 ? 0 : 1;
  }
};

constexpr uint16_t kPort = 5000;
constexpr uint32_t kSendBufferBytes = 1U << 31;  // every flow of a connection fits
// Wire bytes of a frame: the IP packet (MTU) plus the 2-byte PPP header ns-3's
// PointToPointNetDevice adds (RFC 1661).
double frame_bytes(const Topology& t) {
  return t.mtu_bytes + 2.0;
}
// TCP payload per segment: MTU - IPv4 20 - TCP 20 (RFC 791, 793) - timestamps 12 (RFC 7323).
uint32_t segment_bytes(const Topology& t) {
  return static_cast<uint32_t>(t.mtu_bytes) - 52;
}

// One-way base time of a route: wire delays plus one frame's serialization per hop.
double one_way_s(const Topology& t, const std::vector<int64_t>& path) {
  double s = 0;
  for (size_t i = 1; i < path.size(); ++i) {
    const Link& l = t.links.at({path[i - 1], path[i]});
    s += l.delay_s + frame_bytes(t) / l.rate_Bps;
  }
  return s;
}

struct Conn {
  int64_t src = 0, dst = 0;
  Ptr<ns3::Socket> tx;
  uint64_t submitted = 0, received = 0;
  std::deque<std::pair<uint64_t, int32_t>> pending;  // (end offset, flow), FIFO like a QP
  bool connected = false;
};

class Run {
 public:
  Run(const Topology& t, const std::vector<Flow>& f, const Options& o)
      : topo_(t), flows_(f), opt_(o) {}
  Result go();

 private:
  void build_links();
  void open_connections();
  void start_roots();
  void start(int32_t f);
  void complete(int32_t f);
  void on_connected(Ptr<ns3::Socket> s) {
    conns_[tx_conn_.at(ns3::PeekPointer(s))].connected = true;
  }
  void on_failed(Ptr<ns3::Socket>) { throw std::runtime_error("a connection was refused"); }
  void on_accept(Ptr<ns3::Socket> s, const ns3::Address& from);
  void on_recv(Ptr<ns3::Socket> s);
  void on_window(Ptr<ns3::Socket> s) {
    while (s->Recv()) ++windows_;
  }
  void on_cong_state(size_t conn, ns3::TcpSocketState::TcpCongState_t,
                     ns3::TcpSocketState::TcpCongState_t now);

  const Topology& topo_;
  const std::vector<Flow>& flows_;
  const Options& opt_;
  ns3::NodeContainer nodes_;
  std::shared_ptr<PathTables> tables_ = std::make_shared<PathTables>();
  std::map<std::pair<int64_t, int64_t>, std::pair<uint32_t, ns3::Ipv4Address>> hop_;  // iface, gw
  std::map<std::pair<int64_t, int64_t>, double> rtt_;  // per link: largest RTT of its routes
  std::vector<Conn> conns_;
  std::map<std::pair<int64_t, int64_t>, size_t> conn_of_pair_;
  std::unordered_map<ns3::Socket*, size_t> tx_conn_, rx_conn_;
  std::map<std::pair<uint32_t, uint16_t>, size_t> conn_of_endpoint_;
  std::vector<int32_t> waiting_;
  std::vector<std::vector<int32_t>> dependents_;
  std::vector<double> finish_;
  size_t done_ = 0, windows_ = 0;
  uint64_t timeouts_ = 0;
  uint64_t done_bytes_ = 0;
  std::chrono::steady_clock::time_point wall0_ = std::chrono::steady_clock::now();
  double next_progress_s_ = 0;
  ns3::Time t0_;
  ns3::QueueDiscContainer qdiscs_;
};

void Run::build_links() {
  AckFirstFilter::GetTypeId();  // registers the name the helper looks up
  // RTT of each route pair (data one way, ACKs back); each link keeps its largest.
  for (const auto& [sd, path] : topo_.routes) {
    const auto back = topo_.routes.find({sd.second, sd.first});
    if (back == topo_.routes.end()) continue;
    const double rtt = one_way_s(topo_, path) + one_way_s(topo_, back->second);
    for (size_t i = 1; i < path.size(); ++i) {
      double& r = rtt_[{path[i - 1], path[i]}];
      r = std::max(r, rtt);
    }
  }
  ns3::Ipv4AddressHelper addr("10.0.0.0", "255.255.255.252");
  std::set<std::pair<int64_t, int64_t>> seen;
  for (const auto& [ab, link] : topo_.links) {
    const auto [a, b] = ab;
    if (seen.count({std::min(a, b), std::max(a, b)})) continue;
    seen.insert({std::min(a, b), std::max(a, b)});
    const auto rev = topo_.links.find({b, a});
    if (rev != topo_.links.end() && rev->second.delay_s != link.delay_s)
      throw BadInput("topology: link " + std::to_string(a) + "<->" + std::to_string(b) +
                     " delay_s differs by direction: expected one wire delay per channel");
    ns3::PointToPointHelper p2p;
    p2p.SetDeviceAttribute("Mtu", ns3::UintegerValue(static_cast<uint32_t>(topo_.mtu_bytes)));
    p2p.SetChannelAttribute("Delay", ns3::TimeValue(ns3::Seconds(link.delay_s)));
    // One frame in the device: the queue (and its ECN marking) is the queue disc's.
    p2p.SetQueue("ns3::DropTailQueue<Packet>", "MaxSize", ns3::StringValue("1p"));
    ns3::NetDeviceContainer devs = p2p.Install(nodes_.Get(a), nodes_.Get(b));
    const double rate_ab = link.rate_Bps;
    const double rate_ba = rev != topo_.links.end() ? rev->second.rate_Bps : link.rate_Bps;
    for (int side = 0; side < 2; ++side) {
      const double rate = side == 0 ? rate_ab : rate_ba;
      ns3::DynamicCast<ns3::PointToPointNetDevice>(devs.Get(side))
          ->SetDataRate(ns3::DataRate(static_cast<uint64_t>(std::llround(rate * 8.0))));
      // DCTCP's step marking at K packets on the instantaneous queue (RED with QW = 1,
      // MinTh = K, MaxTh = K + 1, no gentle region; Alizadeh et al. 2010, sec. 3.1). K =
      // k_bdp * C * RTT, RTT the largest of the routes through the link: the default 1 BDP
      // is above the paper's lower bound C * RTT / 7 (sec. 3.3) and is what keeps a link
      // busy in ns-3 (docs/ns3.md "Calibration of the reference"). Buffers never drop: RoCE
      // with PFC and InfiniBand with credits are lossless.
      const std::pair<int64_t, int64_t> dir = side == 0 ? ab : std::make_pair(b, a);
      const auto r = rtt_.find(dir);
      const double rtt = r == rtt_.end() ? 0.0 : r->second;
      const double k = std::max(2.0, std::ceil(rate * rtt * opt_.k_bdp / frame_bytes(topo_)));
      ns3::TrafficControlHelper tch;
      const int64_t from = side == 0 ? a : b;
      if (topo_.is_host[static_cast<size_t>(from)] && !opt_.mark_at_hosts && opt_.ack_first) {
        const uint16_t h = tch.SetRootQueueDisc(
            "ns3::PrioQueueDisc", "Priomap", ns3::StringValue("1 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1"));
        tch.AddPacketFilter(h, "netref::AckFirstFilter");
        const auto cls = tch.AddQueueDiscClasses(h, 2, "ns3::QueueDiscClass");
        for (uint16_t band = 0; band < 2; ++band)
          tch.AddChildQueueDisc(h, cls[band], "ns3::FifoQueueDisc", "MaxSize",
                                ns3::QueueSizeValue(ns3::QueueSize("1000000p")));
      } else if (topo_.is_host[static_cast<size_t>(from)] && !opt_.mark_at_hosts) {
        tch.SetRootQueueDisc("ns3::FifoQueueDisc", "MaxSize",
                             ns3::QueueSizeValue(ns3::QueueSize("1000000p")));
      } else {
        tch.SetRootQueueDisc("ns3::RedQueueDisc", "MinTh", ns3::DoubleValue(k), "MaxTh",
                             ns3::DoubleValue(k + 1), "QW", ns3::DoubleValue(1.0), "LInterm",
                             ns3::DoubleValue(1.0), "Gentle", ns3::BooleanValue(false), "UseEcn",
                             ns3::BooleanValue(true), "UseHardDrop", ns3::BooleanValue(false),
                             "MeanPktSize",
                             ns3::UintegerValue(static_cast<uint32_t>(topo_.mtu_bytes)), "MaxSize",
                             ns3::QueueSizeValue(ns3::QueueSize("1000000p")), "LinkBandwidth",
                             ns3::DataRateValue(ns3::DataRate(static_cast<uint64_t>(rate * 8))),
                             "LinkDelay", ns3::TimeValue(ns3::Seconds(link.delay_s)));
      }
      qdiscs_.Add(tch.Install(devs.Get(side)));
    }
    const ns3::Ipv4InterfaceContainer ifs = addr.Assign(devs);
    addr.NewNetwork();
    for (int side = 0; side < 2; ++side) {
      const int64_t self = side == 0 ? a : b, peer = side == 0 ? b : a;
      hop_[{self, peer}] = {ifs.Get(static_cast<uint32_t>(side)).second,
                            ifs.GetAddress(static_cast<uint32_t>(1 - side))};
    }
  }
  // Hosts answer to their first interface's address (ns-3's weak host model delivers a
  // packet for any of a node's addresses on any interface).
  tables_->host_addr.assign(topo_.is_host.size(), ns3::Ipv4Address());
  for (size_t v = 0; v < topo_.is_host.size(); ++v)
    if (topo_.is_host[v] &&
        nodes_.Get(static_cast<uint32_t>(v))->GetObject<ns3::Ipv4>()->GetNInterfaces() > 1) {
      tables_->host_addr[v] =
          nodes_.Get(static_cast<uint32_t>(v))->GetObject<ns3::Ipv4>()->GetAddress(1, 0).GetLocal();
      tables_->host_of[tables_->host_addr[v].Get()] = static_cast<int64_t>(v);
    }
  tables_->next.assign(topo_.is_host.size(), {});
  for (const auto& [sd, path] : topo_.routes)
    for (size_t i = 0; i + 1 < path.size(); ++i) {
      const auto& [iface, gw] = hop_.at({path[i], path[i + 1]});
      tables_->next[static_cast<size_t>(path[i])][PathTables::key(sd.first, sd.second)] = {iface,
                                                                                           gw};
    }
}

void Run::open_connections() {
  std::set<int64_t> listening;
  std::map<int64_t, uint16_t> next_port;
  for (const Flow& f : flows_) {
    if (conn_of_pair_.count({f.src, f.dst})) continue;
    conn_of_pair_[{f.src, f.dst}] = conns_.size();
    Conn c;
    c.src = f.src;
    c.dst = f.dst;
    if (listening.insert(f.dst).second) {
      Ptr<ns3::Socket> l = ns3::Socket::CreateSocket(nodes_.Get(static_cast<uint32_t>(f.dst)),
                                                     ns3::TcpSocketFactory::GetTypeId());
      l->Bind(ns3::InetSocketAddress(tables_->host_addr[static_cast<size_t>(f.dst)], kPort));
      l->Listen();
      l->SetAcceptCallback(ns3::MakeNullCallback<bool, Ptr<ns3::Socket>, const ns3::Address&>(),
                           ns3::MakeCallback(&Run::on_accept, this));
    }
    uint16_t& port = next_port.emplace(f.src, 10000).first->second;
    // The sender is paced at its NIC's line rate, in payload bytes (ns-3 paces segments
    // without headers): an RDMA NIC's rate limiter sends at line rate (DCQCN lowers it on
    // congestion; here DCTCP's window, through the pacing rate cwnd / RTT, does). Without
    // it a window beyond the BDP queues at the sender and the ACKs of the flow arriving at
    // that host wait behind it, which an RDMA NIC's ACKs do not.
    const auto& first = topo_.links.at({f.src, topo_.routes.at({f.src, f.dst})[1]});
    ns3::Config::SetDefault(
        "ns3::TcpSocketState::MaxPacingRate",
        ns3::DataRateValue(ns3::DataRate(static_cast<uint64_t>(
            first.rate_Bps * segment_bytes(topo_) / (frame_bytes(topo_) + 0.0) * 8.0))));
    c.tx = ns3::Socket::CreateSocket(nodes_.Get(static_cast<uint32_t>(f.src)),
                                     ns3::TcpSocketFactory::GetTypeId());
    const auto& fwd = topo_.routes.at({f.src, f.dst});
    const auto& back = topo_.routes.at({f.dst, f.src});
    double bottleneck = 1e300;
    for (size_t i = 1; i < fwd.size(); ++i)
      bottleneck = std::min(bottleneck, topo_.links.at({fwd[i - 1], fwd[i]}).rate_Bps);
    const double bdp_segments =
        bottleneck * (one_way_s(topo_, fwd) + one_way_s(topo_, back)) / segment_bytes(topo_);
    const uint32_t iw = opt_.initial_window_segments > 0
                            ? opt_.initial_window_segments
                            : static_cast<uint32_t>(std::ceil(opt_.window_bdp * bdp_segments)) + 1;
    c.tx->SetAttribute("InitialCwnd", ns3::UintegerValue(iw));
    // Slow start ends at the initial window: a line-rate sender does not probe above it.
    c.tx->SetAttribute("InitialSlowStartThreshold", ns3::UintegerValue(iw * segment_bytes(topo_)));
    c.tx->Bind(ns3::InetSocketAddress(tables_->host_addr[static_cast<size_t>(f.src)], port));
    conn_of_endpoint_[{tables_->host_addr[static_cast<size_t>(f.src)].Get(), port}] = conns_.size();
    ++port;
    c.tx->SetConnectCallback(ns3::MakeCallback(&Run::on_connected, this),
                             ns3::MakeCallback(&Run::on_failed, this));
    tx_conn_[ns3::PeekPointer(c.tx)] = conns_.size();
    c.tx->SetRecvCallback(ns3::MakeCallback(&Run::on_window, this));
    c.tx->TraceConnectWithoutContext(
        "CongState", ns3::MakeCallback(&Run::on_cong_state, this).Bind(conns_.size()));
    c.tx->Connect(ns3::InetSocketAddress(tables_->host_addr[static_cast<size_t>(f.dst)], kPort));
    conns_.push_back(std::move(c));
  }
}

void Run::on_accept(Ptr<ns3::Socket> s, const ns3::Address& from) {
  const ns3::InetSocketAddress a = ns3::InetSocketAddress::ConvertFrom(from);
  rx_conn_[ns3::PeekPointer(s)] = conn_of_endpoint_.at({a.GetIpv4().Get(), a.GetPort()});
  s->SetRecvCallback(ns3::MakeCallback(&Run::on_recv, this));
  // The receiver's window in a SYN is unscaled (at most 65535 bytes, RFC 7323 sec. 2.2):
  // one byte back gives the sender the scaled window before the workload, as a queue
  // pair's first transfer is not window-limited.
  s->Send(ns3::Create<ns3::Packet>(1));
}

void Run::on_recv(Ptr<ns3::Socket> s) {
  Conn& c = conns_[rx_conn_.at(ns3::PeekPointer(s))];
  while (Ptr<ns3::Packet> p = s->Recv()) c.received += p->GetSize();
  while (!c.pending.empty() && c.pending.front().first <= c.received) {
    const int32_t f = c.pending.front().second;
    c.pending.pop_front();
    complete(f);
  }
}

void Run::on_cong_state(size_t conn, ns3::TcpSocketState::TcpCongState_t,
                        ns3::TcpSocketState::TcpCongState_t now) {
  if (now != ns3::TcpSocketState::CA_LOSS) return;
  // The first few timeouts go to stderr with what a reader needs to see why: the
  // connection, when, and the bytes it has not had acknowledged (sent or not).
  if (++timeouts_ <= 20) {
    const Conn& c = conns_[conn];
    std::fprintf(
        stderr, "timeout,sim_s,%.9g,src,%lld,dst,%lld,unacked_bytes,%u,pending_flows,%zu\n",
        (ns3::Simulator::Now() - t0_).GetSeconds(), static_cast<long long>(c.src),
        static_cast<long long>(c.dst), kSendBufferBytes - c.tx->GetTxAvailable(), c.pending.size());
  }
}

void Run::start(int32_t f) {
  const Flow& fl = flows_[static_cast<size_t>(f)];
  Conn& c = conns_[conn_of_pair_.at({fl.src, fl.dst})];
  c.submitted += fl.bytes;
  c.pending.emplace_back(c.submitted, f);
  if (c.tx->Send(ns3::Create<ns3::Packet>(static_cast<uint32_t>(fl.bytes))) < 0)
    throw std::runtime_error("send buffer full on connection " + std::to_string(fl.src) + " -> " +
                             std::to_string(fl.dst));
}

void Run::complete(int32_t f) {
  const ns3::Time now = ns3::Simulator::Now();
  finish_[static_cast<size_t>(f)] = (now - t0_).GetSeconds();
  done_bytes_ += flows_[static_cast<size_t>(f)].bytes;
  if (++done_ == flows_.size()) ns3::Simulator::Stop();
  if (opt_.progress_s > 0) {
    const double wall =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - wall0_).count();
    if (wall >= next_progress_s_ || done_ == flows_.size()) {
      next_progress_s_ = wall + opt_.progress_s;
      std::fprintf(stderr, "progress,wall_s,%.1f,sim_s,%.9g,flows,%zu,of,%zu,bytes,%llu\n", wall,
                   (now - t0_).GetSeconds(), done_, flows_.size(),
                   static_cast<unsigned long long>(done_bytes_));
    }
  }
  for (int32_t d : dependents_[static_cast<size_t>(f)])
    if (--waiting_[static_cast<size_t>(d)] == 0) {
      const ns3::Time at = t0_ + ns3::Seconds(flows_[static_cast<size_t>(d)].start_s);
      if (at > now)
        ns3::Simulator::Schedule(at - now, &Run::start, this, d);
      else
        start(d);
    }
}

void Run::start_roots() {
  for (const Conn& c : conns_)
    if (!c.connected || !rx_conn_.size())
      throw std::runtime_error("connections not open at the workload's start");
  if (rx_conn_.size() != conns_.size() || windows_ != conns_.size())
    throw std::runtime_error("connections not accepted at the workload's start");
  t0_ = ns3::Simulator::Now();
  for (size_t f = 0; f < flows_.size(); ++f)
    if (waiting_[f] == 0)
      ns3::Simulator::Schedule(ns3::Seconds(flows_[f].start_s), &Run::start, this,
                               static_cast<int32_t>(f));
}

Result Run::go() {
  using namespace ns3;
  Config::SetDefault("ns3::TcpL4Protocol::SocketType", TypeIdValue(TcpDctcp::GetTypeId()));
  Config::SetDefault("ns3::TcpSocket::SegmentSize", UintegerValue(segment_bytes(topo_)));
  Config::SetDefault("ns3::TcpSocket::SndBufSize", UintegerValue(kSendBufferBytes));
  Config::SetDefault("ns3::TcpSocket::RcvBufSize", UintegerValue(1U << 27));
  // No loss is expected (lossless buffers); a retransmission timeout would only come from
  // a stall, and 10 ms keeps one from hiding (ns-3's default minimum is 1 s).
  Config::SetDefault("ns3::TcpSocketBase::MinRto", TimeValue(MilliSeconds(10)));
  Config::SetDefault("ns3::TcpSocketState::EnablePacing", BooleanValue(opt_.pacing));
  Config::SetDefault("ns3::TcpSocketState::PaceInitialWindow", BooleanValue(opt_.pacing));
  // ns-3 paces at cwnd / RTT times these ratios, capped at MaxPacingRate; high ratios leave
  // the cap (line rate) binding unless DCTCP has cut the window.
  if (opt_.pacing_ratio > 0) {
    Config::SetDefault("ns3::TcpSocketState::PacingSsRatio", UintegerValue(opt_.pacing_ratio));
    Config::SetDefault("ns3::TcpSocketState::PacingCaRatio", UintegerValue(opt_.pacing_ratio));
  }
  Config::SetDefault("ns3::TcpDctcp::DctcpAlphaOnInit", DoubleValue(opt_.alpha_on_init));
  Config::SetDefault("ns3::TcpSocket::DelAckCount", UintegerValue(opt_.ack_every_segments));
  nodes_.Create(static_cast<uint32_t>(topo_.is_host.size()));
  InternetStackHelper stack;
  stack.SetRoutingHelper(PathRoutingHelper(tables_));
  stack.Install(nodes_);
  build_links();

  const size_t F = flows_.size();
  waiting_.assign(F, 0);
  dependents_.assign(F, {});
  finish_.assign(F, -1.0);
  for (size_t f = 0; f < F; ++f)
    for (int32_t d : flows_[f].deps) {
      ++waiting_[f];
      dependents_[static_cast<size_t>(d)].push_back(static_cast<int32_t>(f));
    }
  // Sockets send once the nodes (and their queue discs) are initialized, at time 0; the
  // handshakes take microseconds and the workload starts at 1 ms on open connections.
  Simulator::Schedule(NanoSeconds(1), &Run::open_connections, this);
  Simulator::Schedule(MilliSeconds(1), &Run::start_roots, this);
  Simulator::Run();
  Result r;
  r.finish_s = finish_;
  r.connections = conns_.size();
  r.incomplete = F - done_;
  r.timeouts = timeouts_;
  for (uint32_t i = 0; i < qdiscs_.GetN(); ++i) {
    const QueueDisc::Stats& st = qdiscs_.Get(i)->GetStats();
    r.marked += st.nTotalMarkedPackets;
    r.dropped += st.nTotalDroppedPackets;
  }
  Simulator::Destroy();
  return r;
}

}  // namespace

Result simulate(const Topology& topo, const std::vector<Flow>& flows, const Options& opt) {
  ns3::Time::SetResolution(ns3::Time::PS);
  // ns-3's default future-event set is a std::map (MapScheduler: a node allocated per
  // event); a binary heap over a vector (PriorityQueueScheduler) runs the same events in
  // the same order, since every scheduler orders by (time, event uid) (ns-3 manual,
  // "Events and Simulator"): 9.1 s instead of 14.7 s on ring-8-64MB under the same load,
  // flow times byte-identical on eight cases (docs/ns3.md "Run time").
  ns3::ObjectFactory scheduler;
  scheduler.SetTypeId("ns3::PriorityQueueScheduler");
  ns3::Simulator::SetScheduler(scheduler);
  return Run(topo, flows, opt).go();
}

}  // namespace netref
