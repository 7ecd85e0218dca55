#include "case_io.hpp"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <sstream>

namespace netref {

namespace {

std::vector<std::string> split(const std::string& s, char sep) {
  std::vector<std::string> out;
  std::string cur;
  std::istringstream in(s);
  while (std::getline(in, cur, sep)) out.push_back(cur);
  if (!s.empty() && s.back() == sep) out.emplace_back();
  return out;
}

struct Where {
  const std::string& file;
  int line;
  [[noreturn]] void fail(const std::string& key, const std::string& value,
                         const std::string& expected) const {
    throw BadInput(file + ":" + std::to_string(line) + ": " + key + " '" + value + "': expected " +
                   expected);
  }
  double number(const std::string& key, const std::string& v, double lo) const {
    size_t used = 0;
    double x = 0;
    try {
      x = std::stod(v, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (used == 0 || used != v.size() || !std::isfinite(x) || x < lo)
      fail(key, v, "a number >= " + std::to_string(lo));
    return x;
  }
  int64_t integer(const std::string& key, const std::string& v, int64_t lo, int64_t hi) const {
    const double x = number(key, v, static_cast<double>(lo));
    if (x != std::floor(x) || x > static_cast<double>(hi))
      fail(key, v, "an integer in [" + std::to_string(lo) + ", " + std::to_string(hi) + "]");
    return static_cast<int64_t>(x);
  }
};

std::ifstream open(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw BadInput(path + ": cannot be read (expected rapid netcheck's output)");
  return in;
}

}  // namespace

Topology read_topology(const std::string& path) {
  std::ifstream in = open(path);
  Topology t;
  std::string line;
  std::vector<std::vector<std::string>> routes;
  std::vector<int> route_lines;
  for (int n = 1; std::getline(in, line); ++n) {
    if (line.empty()) continue;
    const Where w{path, n};
    const std::vector<std::string> f = split(line, ',');
    const std::string& kind = f[0];
    if (kind == "mtu" && f.size() == 2) {
      t.mtu_bytes = w.number("mtu", f[1], 576);  // RFC 791's minimum datagram every host takes
    } else if (kind == "node" && f.size() == 4) {
      const int64_t id = w.integer("node id", f[1], 0, 1 << 24);
      if (id != static_cast<int64_t>(t.is_host.size()))
        w.fail("node id", f[1], "the next id, " + std::to_string(t.is_host.size()));
      if (f[2] != "host" && f[2] != "switch") w.fail("node kind", f[2], "host or switch");
      t.is_host.push_back(f[2] == "host");
    } else if (kind == "link" && f.size() == 5) {
      const int64_t a = w.integer("link from", f[1], 0, 1 << 24);
      const int64_t b = w.integer("link to", f[2], 0, 1 << 24);
      if (a >= static_cast<int64_t>(t.is_host.size()) ||
          b >= static_cast<int64_t>(t.is_host.size()) || a == b)
        w.fail("link", f[1] + "->" + f[2], "two different declared nodes");
      Link l{w.number("link rate_Bps", f[3], 1), w.number("link delay_s", f[4], 0)};
      if (!t.links.emplace(std::make_pair(a, b), l).second)
        w.fail("link", f[1] + "->" + f[2], "one line per direction");
    } else if (kind == "route" && f.size() == 4) {
      routes.push_back(f);
      route_lines.push_back(n);
    } else {
      w.fail("record", line,
             "mtu,B | node,ID,host|switch,NAME | link,A,B,RATE,DELAY | route,S,D,PATH");
    }
  }
  if (t.mtu_bytes == 0) throw BadInput(path + ": mtu missing (expected a line mtu,BYTES)");
  for (size_t r = 0; r < routes.size(); ++r) {
    const Where w{path, route_lines[r]};
    const std::vector<std::string>& f = routes[r];
    const int64_t s = w.integer("route src", f[1], 0, 1 << 24),
                  d = w.integer("route dst", f[2], 0, 1 << 24);
    std::vector<int64_t> path_v;
    for (const std::string& v : split(f[3], ' '))
      if (!v.empty()) path_v.push_back(w.integer("route vertex", v, 0, 1 << 24));
    if (path_v.size() < 2 || path_v.front() != s || path_v.back() != d)
      w.fail("route path", f[3], "vertices from src to dst");
    for (size_t i = 0; i < path_v.size(); ++i) {
      if (path_v[i] >= static_cast<int64_t>(t.is_host.size()))
        w.fail("route vertex", std::to_string(path_v[i]), "a declared node");
      if (t.is_host[static_cast<size_t>(path_v[i])] != (i == 0 || i + 1 == path_v.size()))
        w.fail("route vertex", std::to_string(path_v[i]), "hosts at the ends, switches between");
      if (i > 0 && !t.links.count({path_v[i - 1], path_v[i]}))
        w.fail("route hop", std::to_string(path_v[i - 1]) + "->" + std::to_string(path_v[i]),
               "a declared link");
    }
    t.routes[{s, d}] = path_v;
  }
  return t;
}

std::vector<Flow> read_flows(const std::string& path, const Topology& topo) {
  std::ifstream in = open(path);
  std::string line;
  std::vector<Flow> flows;
  const std::string header = "flow,src,dst,bytes,start_s,deps,collective";
  if (!std::getline(in, line) || line != header)
    throw BadInput(path + ":1: header '" + line + "': expected " + header);
  for (int n = 2; std::getline(in, line); ++n) {
    if (line.empty()) continue;
    const Where w{path, n};
    const std::vector<std::string> f = split(line, ',');
    if (f.size() != 7) w.fail("record", line, "7 comma-separated fields");
    if (w.integer("flow", f[0], 0, 1LL << 40) != static_cast<int64_t>(flows.size()))
      w.fail("flow", f[0], "the next flow number, " + std::to_string(flows.size()));
    Flow fl;
    fl.src = w.integer("src", f[1], 0, 1 << 24);
    fl.dst = w.integer("dst", f[2], 0, 1 << 24);
    const double bytes = w.number("bytes", f[3], 0);
    fl.bytes = static_cast<uint64_t>(std::max<long long>(1, std::llround(bytes)));
    if (fl.bytes >= (1ULL << 32)) w.fail("bytes", f[3], "below 4 GiB (one TCP send)");
    fl.start_s = w.number("start_s", f[4], 0);
    for (const std::string& d : split(f[5], ' '))
      if (!d.empty()) fl.deps.push_back(static_cast<int32_t>(w.integer("deps", d, 0, 1LL << 31)));
    fl.collective = static_cast<int32_t>(w.integer("collective", f[6], 0, 1 << 20));
    if (!topo.routes.count({fl.src, fl.dst}) || !topo.routes.count({fl.dst, fl.src}))
      w.fail("src,dst", f[1] + "," + f[2], "a route each way in the topology file");
    flows.push_back(std::move(fl));
  }
  for (size_t i = 0; i < flows.size(); ++i)
    for (int32_t d : flows[i].deps)
      if (static_cast<size_t>(d) >= flows.size() || static_cast<size_t>(d) == i)
        throw BadInput(path + ": flow " + std::to_string(i) + " deps '" + std::to_string(d) +
                       "': expected another flow of the file");
  return flows;
}

}  // namespace netref
