// ns3-harness TOPOLOGY.csv FLOWS.csv OUT.csv [--initial-window bdp|N] [--ecn-k-bdp X]
//             [--alpha-init A] [--ack-every N]
//
// The packet-level reference of docs/ns3.md: `rapid netcheck`'s topology and flows through
// ns-3 3.37. Every directed link is one PointToPointNetDevice at our rate (both devices of
// a channel carry their own direction's rate; the channel carries the wire delay), frames
// of the file's MTU; every node forwards along netcheck's route lines (PathRouting); the
// transport is ns-3's TcpDctcp over RED queues that ECN-mark at K (DCTCP, Alizadeh et al.,
// SIGCOMM 2010), connections opened before the workload (like RDMA queue pairs) and each
// flow a send on its (src, dst) connection, started when its dependencies have arrived.
// Writes each flow's completion time (its last byte at the receiver's application), in
// seconds from the workload's start. Exit 2 on bad input (one message naming file, line,
// key and value), 1 when the simulation leaves a flow incomplete.
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <fstream>
#include <string>

#include "case_io.hpp"
#include "reference_net.hpp"
#include "tcp_fast_path.hpp"

namespace {

constexpr const char* kUsage =
    "usage: ns3-harness TOPOLOGY.csv FLOWS.csv OUT.csv [--initial-window bdp|N] "
    "[--window-bdp W] [--ack-first 0|1] [--pacing 0|1] [--pacing-ratio PCT] [--mark-at-hosts 0|1] "
    "[--ecn-k-bdp X] "
    "[--alpha-init A] [--ack-every N] [--progress S] [--verify-fast-path 0|1]\n";

double number(const char* key, const char* v, double lo, double hi) {
  char* end = nullptr;
  const double x = std::strtod(v, &end);
  if (end == v || *end != '\0' || !(x >= lo && x <= hi))
    throw netref::BadInput(std::string("<command line>: ") + key + " '" + v +
                           "': expected a number in [" + std::to_string(lo) + ", " +
                           std::to_string(hi) + "]");
  return x;
}

netref::Options options(int argc, char** argv) {
  netref::Options opt;
  for (int i = 4; i < argc; i += 2) {
    const std::string key = argv[i];
    if (i + 1 >= argc)
      throw netref::BadInput("<command line>: " + key + ": expected a value after it");
    const char* v = argv[i + 1];
    if (key == "--initial-window") {
      if (std::strcmp(v, "bdp") != 0)
        opt.initial_window_segments = static_cast<uint32_t>(number(key.c_str(), v, 1, 1e6));
    } else if (key == "--window-bdp") {
      opt.window_bdp = number(key.c_str(), v, 0.01, 1e3);
    } else if (key == "--pacing-ratio") {
      opt.pacing_ratio = static_cast<uint32_t>(number(key.c_str(), v, 1, 65535));
    } else if (key == "--ack-first") {
      opt.ack_first = number(key.c_str(), v, 0, 1) != 0;
    } else if (key == "--pacing") {
      opt.pacing = number(key.c_str(), v, 0, 1) != 0;
    } else if (key == "--mark-at-hosts") {
      opt.mark_at_hosts = number(key.c_str(), v, 0, 1) != 0;
    } else if (key == "--ecn-k-bdp") {
      opt.k_bdp = number(key.c_str(), v, 0, 1e3);
    } else if (key == "--alpha-init") {
      opt.alpha_on_init = number(key.c_str(), v, 0, 1);
    } else if (key == "--ack-every") {
      opt.ack_every_segments = static_cast<uint32_t>(number(key.c_str(), v, 1, 64));
    } else if (key == "--progress") {
      opt.progress_s = number(key.c_str(), v, 0, 1e6);
    } else if (key == "--verify-fast-path") {
      // Check every answer of tcp_fast_path.cpp's NextSeg against ns-3's own (slow).
      netref::fast_path_stats().verify = number(key.c_str(), v, 0, 1) != 0;
    } else {
      throw netref::BadInput(
          "<command line>: option '" + key +
          "': expected --initial-window, --window-bdp, --ack-first, --pacing, --mark-at-hosts, "
          "--pacing-ratio, --ecn-k-bdp, --alpha-init, --ack-every, --progress or "
          "--verify-fast-path");
    }
  }
  return opt;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 4) {
    std::fprintf(stderr, "%s", kUsage);
    return 2;
  }
  try {
    const netref::Options opt = options(argc, argv);
    const netref::Topology topo = netref::read_topology(argv[1]);
    const std::vector<netref::Flow> flows = netref::read_flows(argv[2], topo);
    const auto t0 = std::chrono::steady_clock::now();
    const netref::Result r = netref::simulate(topo, flows, opt);
    const double wall_s =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    std::ofstream out(argv[3]);
    out << "flow,finish_s\n";
    char buf[64];
    for (size_t f = 0; f < r.finish_s.size(); ++f) {
      std::snprintf(buf, sizeof buf, "%zu,%.17g\n", f, r.finish_s[f]);
      out << buf;
    }
    if (!out) throw std::runtime_error(std::string("cannot write ") + argv[3]);
    std::printf(
        "flows,%zu\nconnections,%zu\nmarked,%llu\ndropped,%llu\ntimeouts,%llu\nwall_s,%.6f\n",
        flows.size(), r.connections, static_cast<unsigned long long>(r.marked),
        static_cast<unsigned long long>(r.dropped), static_cast<unsigned long long>(r.timeouts),
        wall_s);
    const netref::FastPathStats& fp = netref::fast_path_stats();
    std::printf("next_seg_fast,%llu\nnext_seg_library,%llu\nnext_seg_verified,%llu\n",
                static_cast<unsigned long long>(fp.next_seg_fast),
                static_cast<unsigned long long>(fp.next_seg_library),
                static_cast<unsigned long long>(fp.verified));
    if (r.incomplete > 0) {
      std::fprintf(stderr, "ns3-harness: %zu of %zu flows did not complete\n", r.incomplete,
                   flows.size());
      return 1;
    }
  } catch (const netref::BadInput& e) {
    std::fprintf(stderr, "ns3-harness: %s\n", e.what());
    return 2;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "ns3-harness: %s\n", e.what());
    return 1;
  }
  return 0;
}
