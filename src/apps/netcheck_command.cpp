#include "apps/netcheck_command.hpp"

#include <fmt/format.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>

#include "rapid/common/error.hpp"
#include "rapid/spec/hardware_variant.hpp"
#include "rapid/spec/yaml_reader.hpp"

namespace rapid {

namespace {

// The harness's input (tests/reference/ns3/README in docs/ns3.md): one line per record,
//   mtu,BYTES
//   node,ID,host|switch,NAME        (hosts are the GPUs, ID = GPU id)
//   link,FROM,TO,RATE_Bps,DELAY_s   (one direction)
//   route,SRC,DST,V0 V1 ... Vk      (the nodes a packet from host SRC to host DST visits)
std::string topology_csv(const NetCase& c, const des::Fabric& fabric, double mtu_bytes) {
  const int64_t gpus = fabric.num_links() > 0 ? [&] {
    int64_t g = 0;
    for (const NetRoute& r : c.routes) g = std::max({g, r.src + 1, r.dst + 1});
    return g;
  }() : 0;
  // Vertices: GPUs 0 .. gpus-1, then NVSwitches, leaves, spines in order of first use.
  std::map<std::pair<int, int64_t>, int64_t> id;
  std::string nodes, links, routes;
  for (int64_t g = 0; g < gpus; ++g) nodes += fmt::format("node,{},host,gpu{}\n", g, g);
  auto vertex = [&](int kind, int64_t index) {  // kind 0 gpu, 1 nvswitch, 2 leaf, 3 spine
    if (kind == 0) return index;
    auto [it, fresh] = id.insert({{kind, index}, gpus + static_cast<int64_t>(id.size())});
    if (fresh)
      nodes += fmt::format("node,{},switch,{}{}\n", it->second,
                           kind == 1   ? "nvswitch"
                           : kind == 2 ? "leaf"
                                       : "spine",
                           index);
    return it->second;
  };
  auto ends = [&](const des::Link& l) -> std::pair<int64_t, int64_t> {
    switch (l.kind) {
      case des::LinkKind::GpuToSwitch:
        return {l.a, vertex(1, fabric.node_of(l.a))};
      case des::LinkKind::SwitchToGpu:
        return {vertex(1, fabric.node_of(l.a)), l.a};
      case des::LinkKind::NicToLeaf:
        return {l.a, vertex(2, l.b)};
      case des::LinkKind::LeafToNic:
        return {vertex(2, l.b), l.a};
      case des::LinkKind::LeafToSpine:
        return {vertex(2, l.a), vertex(3, l.b)};
      case des::LinkKind::SpineToLeaf:
        return {vertex(3, l.a), vertex(2, l.b)};
      default:
        throw Error("netcheck: torus and full-mesh links are not exported");
    }
  };
  for (int32_t k = 0; k < fabric.num_links(); ++k) {
    const des::Link& l = fabric.link(k);
    const auto [a, b] = ends(l);
    links += fmt::format("link,{},{},{:.17g},{:.17g}\n", a, b, l.capacity_Bps, l.latency_s);
  }
  for (const NetRoute& r : c.routes) {
    std::string path = std::to_string(r.src);
    for (int32_t k : r.links) path += " " + std::to_string(ends(fabric.link(k)).second);
    routes += fmt::format("route,{},{},{}\n", r.src, r.dst, path);
  }
  return fmt::format("mtu,{}\n", mtu_bytes) + nodes + links + routes;
}

std::string flows_csv(const NetCase& c) {
  std::string s = "flow,src,dst,bytes,start_s,deps,collective\n";
  for (size_t f = 0; f < c.flows.size(); ++f) {
    const NetFlow& fl = c.flows[f];
    std::string deps;
    for (int32_t d : fl.deps) deps += (deps.empty() ? "" : " ") + std::to_string(d);
    s += fmt::format("{},{},{},{:.17g},{:.17g},{},{}\n", f, fl.src, fl.dst, fl.bytes, fl.start_s,
                     deps, fl.collective);
  }
  return s;
}

void write_file(const std::filesystem::path& p, const std::string& text) {
  std::ofstream out(p);
  out << text;
  if (!out) throw Error(fmt::format("netcheck: cannot write {}", p.string()));
}

}  // namespace

NetcheckCommand::NetcheckCommand(CLI::App& app) {
  cmd_ = app.add_subcommand("netcheck",
                            "write a communication workload for the ns-3 reference and our flow "
                            "network's completion times for it (docs/ns3.md)");
  cmd_->add_option("--workload", spec_.workload,
                   "ring, tree, two-rings, alltoall, pipeline, incast or degraded")
      ->required();
  cmd_->add_option("--ranks", spec_.ranks, "GPUs (pipeline: stages; incast: senders + 1)");
  cmd_->add_option("--bytes", spec_.bytes, "collective buffer or p2p message, bytes");
  cmd_->add_option("--network", network_, "network YAML file")->required();
  cmd_->add_option("--hardware", hardware_, "hardware YAML file (NVLink bandwidth)")->required();
  cmd_->add_option("--mtu", framing_.mtu_bytes, "IP MTU of the links, bytes (default 4096)");
  cmd_->add_flag("--no-framing", no_framing_,
                 "our side without the header overhead and store-and-forward terms");
  cmd_->add_option("-o,--out", out_, "directory for topology.csv, flows.csv, ours.csv")->required();
}

int NetcheckCommand::run() const {
  if (!(framing_.mtu_bytes >= 576 && framing_.mtu_bytes <= 65535))
    throw InputError("<command line>", "--mtu", fmt::format("{}", framing_.mtu_bytes),
                     "an IPv4 MTU in [576, 65535] bytes (RFC 791)");
  const HardwareSpec hw = load_hardware_file(hardware_);
  const NetworkSpec net =
      netcheck_network(spec_, parse_network(load_yaml_file(network_), network_));
  des::Fabric fabric;
  const NetCase c = build_case(spec_, net, hw, fabric);
  FramingModel framing = framing_;
  framing.enabled = !no_framing_;
  const auto t0 = std::chrono::steady_clock::now();
  const std::vector<double> finish = replay_case(c, fabric, framing);
  const double wall_s =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();

  std::filesystem::create_directories(out_);
  std::string ours = "flow,finish_s\n";
  for (size_t f = 0; f < finish.size(); ++f) ours += fmt::format("{},{:.17g}\n", f, finish[f]);
  write_file(std::filesystem::path(out_) / "topology.csv",
             topology_csv(c, fabric, framing.mtu_bytes));
  write_file(std::filesystem::path(out_) / "flows.csv", flows_csv(c));
  write_file(std::filesystem::path(out_) / "ours.csv", ours);
  std::vector<double> done(c.collectives.size(), 0.0);
  for (size_t f = 0; f < finish.size(); ++f) {
    double& d = done[static_cast<size_t>(c.flows[f].collective)];
    d = std::max(d, finish[f]);
  }
  for (size_t k = 0; k < done.size(); ++k)
    std::printf("collective,%s,%.9g\n", c.collectives[k].c_str(), done[k]);
  std::printf("flows,%zu\nwall_s,%.6f\n", c.flows.size(), wall_s);
  return 0;
}

}  // namespace rapid
