// The ns-3 harness's input (docs/ns3.md "Harness"): `rapid netcheck`'s topology.csv and
// flows.csv, read into plain structs. Bad input throws BadInput naming the file, line,
// key and value (the harness exits 2 on it).
#pragma once

#include <cstdint>
#include <map>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace netref {

struct BadInput : std::runtime_error {
  using std::runtime_error::runtime_error;
};

struct Link {
  double rate_Bps = 0;  ///< line rate, bytes/s
  double delay_s = 0;   ///< propagation (wire) latency
};

struct Topology {
  double mtu_bytes = 0;
  std::vector<bool> is_host;                                           ///< by vertex id (dense)
  std::map<std::pair<int64_t, int64_t>, Link> links;                   ///< (from, to)
  std::map<std::pair<int64_t, int64_t>, std::vector<int64_t>> routes;  ///< (src, dst) host
};

struct Flow {
  int64_t src = 0, dst = 0;
  uint64_t bytes = 0;  ///< rounded to whole bytes (a TCP stream moves bytes)
  double start_s = 0;
  int32_t collective = 0;
  std::vector<int32_t> deps;
};

Topology read_topology(const std::string& path);
/// Flows must be numbered 0, 1, ... in order; deps refer to earlier or later flows of the
/// file; every (src, dst) must have a route in `topo`.
std::vector<Flow> read_flows(const std::string& path, const Topology& topo);

}  // namespace netref
