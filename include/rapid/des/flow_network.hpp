// Flow-level network with max-min fair rates (docs/des.md "Flow-level network").
//
// A *resource* is a link, or a class of links that every flow loads alike (the simulator
// merges those; one constraint stands for all of them). A *bundle* is a set of member flows
// that move at one common rate r: the flows of one tier of one collective (a ring's hops
// progress at the pace of the slowest, NCCL's chunks being pipelined around the ring), or
// of one point-to-point transfer. A bundle puts `mult` member flows on each resource it
// uses, so its load there is mult * r; resource capacity C bounds sum(mult * r).
//
// Rates are max-min fair per member flow (Bertsekas & Gallager, "Data Networks", 2nd ed.,
// sec. 6.5.2: progressive filling): all rates grow together until a resource saturates;
// the bundles crossing it are frozen at that level; repeat on the rest. With integer
// coefficients this is the linear max-min system of SimGrid's flow model (Casanova,
// Legrand & Quinson, "SimGrid", 2008; Velho et al., "On the validity of flow-level TCP
// network models for grid and cloud simulations", TOMACS 2013). Rates are recomputed on
// every bundle arrival and departure, only over the connected component of bundles that
// share resources with it (transitively): the rest of the network is untouched.
//
// Units: bytes, bytes/s, SimTime (ps). A bundle *drains* when its per-flow bytes have
// moved; the caller adds latency and schedules the drain event (drain_time()).
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "rapid/des/event_queue.hpp"

namespace rapid::des {

/// `mult` member flows of a bundle cross resource `res`.
struct ResourceUse {
  int32_t res = 0;
  int32_t mult = 1;
};

class FlowNetwork {
 public:
  /// Removes every resource and bundle (keeps the memory for the next simulation).
  void clear();
  /// Adds a resource of `capacity_Bps` (> 0); returns its id (0, 1, ...).
  int32_t add_resource(double capacity_Bps);

  /// Starts a bundle at `now` whose member flows each carry `bytes` (> 0) over `uses`
  /// (each resource at most once, mult >= 1). Recomputes the rates of its component.
  /// Returns the bundle id; `tag` is the caller's. Throws nothing.
  int32_t start(SimTime now, std::span<const ResourceUse> uses, double bytes, uint64_t tag);
  /// start() without the rate computation, for bundles that start together: add() each,
  /// then commit() once (one solve over their components).
  int32_t add(SimTime now, std::span<const ResourceUse> uses, double bytes, uint64_t tag);
  void commit(SimTime now);

  /// Batch mode (off by default): start(), commit() and finish() only record what changed
  /// (changed() is empty after them), and flush(now) computes the rates once for every
  /// arrival and departure since the last flush: the caller flushes before its clock moves
  /// on, so the changes of one instant cost one solve over the union of their components,
  /// not one each (issue 35: 128 DP replicas starting their transfers at the same picosecond
  /// solved one component 128 times). The rates are those of the last of the unbatched
  /// solves (max-min fairness depends only on the bundles present), to rounding; rates that
  /// would have held for no time are never computed. set_capacity() flushes.
  void set_batch(bool on) { batch_ = on; }
  /// Arrivals or departures wait for flush().
  bool pending() const { return !seeds_.empty(); }
  void flush(SimTime now);
  /// Removes bundle `b` (drained at `now`) and recomputes its former neighbours' rates. Its
  /// id and storage are reused by a later start() (with a higher version()).
  void finish(SimTime now, int32_t b);
  /// Changes resource `r`'s capacity at `now` (> 0; a link fault starting or ending,
  /// docs/faults.md): the bundles crossing it (and their component) move at their old rates
  /// up to `now`, then at the re-solved ones; changed() lists those whose drain moved.
  void set_capacity(SimTime now, int32_t r, double capacity_Bps);

  // Bundles run outside the network while nothing meets them (the simulator's dynamic
  // folding, docs/des.md "Dynamic folding"): where no bundle is on any of its resources, a
  // bundle's rate is the lowest capacity / member flows of them (what insert_locally() and
  // solve() give a bundle alone), so its drain is known at its start and the caller need not
  // add it; account_alone() records at its start what it will carry; when another bundle is
  // about to meet it, add_running() puts it in with the bytes it has left (and
  // account_alone() takes back what the network will now count).

  /// A bundle's rate on `uses` with nothing else on them (B/s per member flow).
  double alone_rate(std::span<const ResourceUse> uses) const;
  /// Records a bundle moving `bytes` per member flow alone on `uses` over [from, to] outside
  /// the network: carried bytes, busy time and peak flows as finish() would. Negative bytes
  /// with to < from take back part of what was recorded.
  void account_alone(std::span<const ResourceUse> uses, double bytes, SimTime from, SimTime to);
  /// Adds, at `now`, a bundle that has moved alone since earlier and has `remaining` bytes
  /// per member flow left at `rate`, draining at `drain` (the caller computed both as
  /// alone_rate() and its start + to_ps_ceil(bytes / rate)). Not a seed of the next
  /// commit(): its rate stays unless a later arrival's solve changes it. Returns its id; its
  /// version() is new (the caller schedules its drain event).
  int32_t add_running(SimTime now, std::span<const ResourceUse> uses, double remaining, double rate,
                      SimTime drain, uint64_t tag);

  /// Bundles whose drain time changed in the last start()/finish() (batch mode: flush()),
  /// in a deterministic order; each has a new version() (events carrying an older version are
  /// stale).
  std::span<const int32_t> changed() const { return changed_; }
  SimTime drain_time(int32_t b) const { return bundles_[static_cast<size_t>(b)].drain; }
  uint32_t version(int32_t b) const { return bundles_[static_cast<size_t>(b)].version; }
  uint64_t tag(int32_t b) const { return bundles_[static_cast<size_t>(b)].tag; }
  bool active(int32_t b) const { return bundles_[static_cast<size_t>(b)].active; }
  /// Current rate of one member flow, B/s.
  double rate(int32_t b) const { return bundles_[static_cast<size_t>(b)].rate; }

  int32_t num_resources() const { return static_cast<int32_t>(res_.size()); }
  double capacity(int32_t r) const { return res_[static_cast<size_t>(r)].cap; }
  /// Bytes carried by (each link of) resource r by bundles finished so far.
  double carried_bytes(int32_t r) const { return res_[static_cast<size_t>(r)].carried; }
  /// Time with at least one flow on r up to `now`.
  SimTime busy_time(int32_t r, SimTime now) const;
  /// Most member flows on r at once.
  int32_t peak_flows(int32_t r) const { return res_[static_cast<size_t>(r)].peak; }
  /// Member flows on r now.
  int32_t active_flows(int32_t r) const { return res_[static_cast<size_t>(r)].active_mult; }
  /// Rate computations (component solves) since clear().
  int64_t solves() const { return solves_; }
  /// Of those, arrivals given their rate by insert_locally() without a solve.
  int64_t local_updates() const { return local_updates_; }
  /// Off: every arrival and departure re-solves its component (progressive filling), never
  /// the local updates of insert_locally() and an unsaturated departure; the same rates,
  /// for the tests that compare the two (default on).
  void set_local_updates(bool on) { local_ = on; }

 private:
  struct Resource {
    double cap = 0;
    double residual = 0;  // solver scratch
    double carried = 0;
    SimTime busy_since = 0, busy = 0;
    int32_t head = -1;  // first incidence of its list
    int32_t active_mult = 0, peak = 0;
    int32_t weight = 0;  // solver scratch: unfrozen member flows
    int32_t pos = 0;     // solver scratch: order in which solve() reached it
    uint32_t mark = 0;
    uint64_t stamp = 0;  // solver scratch: round of its last change (its heap entry's)
  };
  struct Incidence {
    int32_t bundle = 0, res = 0, mult = 0;
    int32_t prev = -1, next = -1;  // in the resource's list
  };
  struct Bundle {
    double bytes = 0, remaining = 0, rate = 0, next_rate = 0;
    SimTime last = 0, drain = kNever;
    uint64_t tag = 0;
    int32_t first_inc = 0, num_inc = 0;
    uint32_t version = 0, mark = 0;
    bool active = false, frozen = false, fresh = false;
  };

  void solve(SimTime now);  // over the component reachable from seeds_ (flow_network_solve.cpp)
  /// solve()'s component into comp_bundles_, its initial levels into heap_.
  void collect_component();
  /// The seeds' rates without a solve, where the others' rates stay (false: solve).
  bool insert_locally(SimTime now);
  /// What r's bundles other than `except` load it with (sum of mult x rate), the fastest.
  struct Load {
    double sum = 0, fastest = 0;
  };
  Load load(int32_t r, int32_t except) const;
  struct Tight {
    double level = 0, fastest = 0;  // insert_locally() scratch: per link of a new bundle
  };
  std::vector<Tight> tight_;
  /// A resource with at most this fraction of its capacity left counts as saturated: a
  /// saturated one is left with rounding (~1e-16), an unsaturated one with far more.
  static constexpr double kSaturated = 1e-9;

  std::vector<Resource> res_;
  std::vector<Incidence> inc_;
  std::vector<Bundle> bundles_;
  // Slots of finished bundles; per size, first incidences of released blocks.
  std::vector<int32_t> free_bundles_;
  std::vector<std::vector<int32_t>> free_inc_;
  /// solve()'s heap entry: resource `res`'s saturation level when pushed.
  struct Level {
    double level = 0;
    int32_t pos = 0, res = 0;  // pos: Resource::pos (of equal levels, the first)
    uint64_t stamp = 0;        // Resource::stamp when pushed (else stale)
    struct Later {
      bool operator()(const Level& a, const Level& b) const {
        return a.level > b.level || (a.level == b.level && a.pos > b.pos);
      }
    };
  };
  std::vector<Level> heap_;
  std::vector<int32_t> seeds_, comp_bundles_, changed_, touched_;
  uint32_t epoch_ = 0;
  uint64_t touch_ = 1;  // solve()'s freezing round (stamps below it are past rounds')
  bool batch_ = false;
  bool departed_ = false;  // batch mode: a departure (or capacity change) awaits flush()
  int64_t solves_ = 0, local_updates_ = 0;
  bool local_ = true;
};

}  // namespace rapid::des
