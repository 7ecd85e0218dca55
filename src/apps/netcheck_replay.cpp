#include "apps/netcheck_replay.hpp"

#include <algorithm>
#include <functional>
#include <map>
#include <queue>
#include <tuple>
#include <utility>

#include "rapid/des/flow_network.hpp"

namespace rapid {

namespace {

struct Event {
  des::SimTime t;
  int kind;  // 0: bundle drained (id = bundle, v = version), 1: flow done (id = flow),
             // 2: a held flow joins (id = flow)
  int32_t id;
  uint32_t v;
  bool operator>(const Event& o) const {
    return std::tie(t, kind, id) > std::tie(o.t, o.kind, o.id);
  }
};

}  // namespace

std::vector<double> replay_case(const NetCase& c, const des::Fabric& fabric,
                                const FramingModel& framing) {
  des::FlowNetwork net;
  for (int32_t l = 0; l < fabric.num_links(); ++l)
    net.add_resource(fabric.link(l).capacity_Bps * framing.payload_fraction());
  std::map<std::pair<int64_t, int64_t>, const NetRoute*> route;
  for (const NetRoute& r : c.routes) route[{r.src, r.dst}] = &r;

  const size_t F = c.flows.size();
  std::vector<int32_t> waiting(F, 0);
  std::vector<std::vector<int32_t>> dependents(F);
  for (size_t f = 0; f < F; ++f)
    for (int32_t d : c.flows[f].deps) {
      ++waiting[f];
      dependents[static_cast<size_t>(d)].push_back(static_cast<int32_t>(f));
    }
  std::vector<double> finish(F, 0.0);
  std::vector<des::SimTime> latency(F, 0);
  std::vector<std::vector<des::ResourceUse>> uses(F);
  for (size_t f = 0; f < F; ++f) {
    double wire_s = 0, store_s = 0, slowest_s = 0;
    for (int32_t l : route.at({c.flows[f].src, c.flows[f].dst})->links) {
      const des::Link& k = fabric.link(l);
      uses[f].push_back({l, 1});
      wire_s += k.latency_s;
      const double ser_s = framing.frame_bytes() / k.capacity_Bps;
      store_s += ser_s;
      slowest_s = std::max(slowest_s, ser_s);
    }
    latency[f] = des::to_ps(wire_s + store_s - slowest_s);
  }

  std::priority_queue<Event, std::vector<Event>, std::greater<>> q;
  std::vector<int32_t> flow_of;  // bundle -> flow
  auto push_changed = [&] {
    for (int32_t b : net.changed())
      if (net.active(b) && net.drain_time(b) != des::kNever)
        q.push({net.drain_time(b), 0, b, net.version(b)});
  };
  // One frame's serialization on each link (FramingModel).
  std::vector<des::SimTime> frame_ps(static_cast<size_t>(fabric.num_links()));
  for (int32_t l = 0; l < fabric.num_links(); ++l)
    frame_ps[static_cast<size_t>(l)] =
        des::to_ps(framing.frame_bytes() / fabric.link(l).capacity_Bps);
  auto join = [&](des::SimTime now, int32_t f) {
    const int32_t b = net.add(now, uses[static_cast<size_t>(f)],
                              c.flows[static_cast<size_t>(f)].bytes, static_cast<uint64_t>(f));
    if (flow_of.size() <= static_cast<size_t>(b)) flow_of.resize(static_cast<size_t>(b) + 1);
    flow_of[static_cast<size_t>(b)] = f;
  };
  // Non-preemptive frames (FramingModel): a flow whose first frame finds a link of its
  // route transmitting another flow's frame joins the sharing once that frame is out, one
  // frame time later (the longest such wait on the route); nothing to wait for: at once.
  auto begin = [&](des::SimTime now, int32_t f) {
    des::SimTime hold = 0;
    for (const des::ResourceUse& u : uses[static_cast<size_t>(f)])
      if (net.active_flows(u.res) > 0) hold = std::max(hold, frame_ps[static_cast<size_t>(u.res)]);
    if (hold == 0) return join(now, f);
    q.push({now + hold, 2, f, 0});
  };
  // Flows without dependencies start at their start times (ties: one commit).
  std::vector<int32_t> roots;
  for (size_t f = 0; f < F; ++f)
    if (waiting[f] == 0) roots.push_back(static_cast<int32_t>(f));
  std::sort(roots.begin(), roots.end(), [&](int32_t a, int32_t b) {
    return c.flows[static_cast<size_t>(a)].start_s < c.flows[static_cast<size_t>(b)].start_s;
  });
  for (size_t i = 0; i < roots.size();) {
    const des::SimTime t = des::to_ps(c.flows[static_cast<size_t>(roots[i])].start_s);
    for (; i < roots.size() && des::to_ps(c.flows[static_cast<size_t>(roots[i])].start_s) == t; ++i)
      begin(t, roots[i]);
    net.commit(t);  // start times are 0 in every workload: one commit at t = 0
    push_changed();
  }
  while (!q.empty()) {
    const Event e = q.top();
    q.pop();
    if (e.kind == 2) {
      join(e.t, e.id);
      net.commit(e.t);
      push_changed();
      continue;
    }
    if (e.kind == 0) {
      if (!net.active(e.id) || net.version(e.id) != e.v) continue;  // stale drain
      const int32_t f = flow_of[static_cast<size_t>(e.id)];
      net.finish(e.t, e.id);
      push_changed();
      q.push({e.t + latency[static_cast<size_t>(f)], 1, f, 0});
      continue;
    }
    finish[static_cast<size_t>(e.id)] = des::to_seconds(e.t);
    bool started = false;
    for (int32_t d : dependents[static_cast<size_t>(e.id)])
      if (--waiting[static_cast<size_t>(d)] == 0) {
        begin(std::max(e.t, des::to_ps(c.flows[static_cast<size_t>(d)].start_s)), d);
        started = true;
      }
    if (started) {
      net.commit(e.t);
      push_changed();
    }
  }
  return finish;
}

}  // namespace rapid
