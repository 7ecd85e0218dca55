// The network of a trace replay (docs/chakra.md "Replay"): the DES's flow-level network
// (des/fabric.hpp, des/flow_network.hpp) with the communication nodes of a trace as flows.
//
// A collective of a group becomes, per tier of its CollectivePlan, one bundle of the member
// flows of the tier's pattern among the group's ranks (des::pattern_flows, the flows the DES
// routes for a group copy), each carrying the tier's flow_bytes; a send becomes one flow
// comm_src -> comm_dst of its bytes. Each fabric link a flow crosses is one max-min
// resource of its achievable capacity (link faults in): links that two communications load
// at once share bandwidth as in the DES (FlowNetwork's progressive filling). A communication
// ends when its last bundle has drained plus its latency: the plan's, the wire latency of its
// longest route beyond the plan's (des::extra_route_latency_s) and the RC-timeout waits of
// lossy links (docs/faults.md), computed as the DES's sim_setup.cpp/communicator.cpp do.
// Timed link faults change the capacity of the links they cover at their start and end times.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "rapid/cost/collective_cost.hpp"
#include "rapid/des/fabric.hpp"
#include "rapid/des/flow_network.hpp"

namespace rapid::trace {

class ReplayNetwork {
 public:
  /// GPUs 0 .. num_gpus - 1 of `net` (rank = GPU); `nvlink_Bps` the collective model's.
  /// False (nothing built) when a torus grid is too small for the job.
  /// `most_loaded`: the link `most_loaded` faults apply to (nullptr: to nothing).
  bool reset(const NetworkSpec& net, double nvlink_Bps, int64_t num_gpus,
             std::span<const LinkFault> faults, const des::LinkRef* most_loaded = nullptr);

  /// Starts communication `tag` at `now`: the tiers of `plan` among `members` (rank order),
  /// or, with `members` empty, one flow `src` -> `dst` of the plan's first tier. Returns its
  /// bundles (0: it ends after `latency_ps` alone); -1 when a failed link leaves some flow no
  /// path (no_route_reason()).
  int32_t start(des::SimTime now, const CollectivePlan& plan, const std::vector<int64_t>& members,
                int64_t src, int64_t dst, uint64_t tag, des::SimTime* latency_ps);
  /// Bundle `b` drained at `now`: removes it; returns its communication's tag.
  uint64_t finish(des::SimTime now, int32_t b);
  /// Bundles whose drain time moved in the last start()/finish()/fault change.
  std::span<const int32_t> changed() const { return changed_; }
  des::SimTime drain_time(int32_t b) const { return net_.drain_time(b); }
  uint32_t version(int32_t b) const { return net_.version(b); }
  /// A drain event of bundle b with `version` is still current.
  bool current(int32_t b, uint32_t version) const {
    return net_.active(b) && net_.version(b) == version;
  }

  /// Times (s) at which a timed fault starts or ends, ascending.
  const std::vector<double>& fault_times() const { return fabric_.fault_times(); }
  /// The k-th of fault_times() is now: the links timed faults cover take their capacity up
  /// to the next change (probed mid-interval, as the DES's on_fault_change).
  void fault_change(des::SimTime now, size_t k);

  const std::string& no_route_reason() const { return no_route_; }
  /// The most flows one link carried at once.
  int32_t peak_flows() const;
  uint64_t bundles_started() const { return started_; }
  /// The fabric link `most_loaded` faults go on (trace_replay.hpp ReplayResult::busiest;
  /// exact ties: the lowest LinkRef (kind, a, b)); -1 when no flow crossed a link.
  int32_t busiest_link() const;
  const des::Link& link(int32_t l) const { return fabric_.link(l); }
  std::string link_name(int32_t l) const { return fabric_.link_name(l); }

 private:
  int32_t resource(int32_t link);

  des::Fabric fabric_;
  des::FlowNetwork net_;
  double link_latency_s_ = 0;
  std::vector<int32_t> res_of_link_;  // -1 until a flow crosses the link
  std::vector<int32_t> link_of_res_;
  std::string no_route_;
  uint64_t started_ = 0;
  std::vector<int32_t> changed_;
  // Scratch.
  std::vector<int64_t> src_, dst_;
  std::vector<int32_t> route_, count_, touched_;
  std::vector<des::ResourceUse> uses_;
};

}  // namespace rapid::trace
