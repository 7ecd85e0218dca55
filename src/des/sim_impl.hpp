// The simulator's state, shared by src/des/sim_setup.cpp (building the compiled program),
// sim_run.cpp (stage instances) and sim_comm.cpp (posting collectives, p2p and DP ops, and
// waking instances when they end). What is in flight is the Communicator's
// (communicator.hpp); the DP streams, folding and the steady-state probe have owners too.
// Internal to src/des.
#pragma once

#include <array>
#include <cstdint>
#include <span>
#include <utility>
#include <vector>

#include "active_op.hpp"
#include "communicator.hpp"
#include "dp_stream.hpp"
#include "folding.hpp"
#include "rapid/core/op_class.hpp"
#include "rapid/des/simulator.hpp"
#include "rapid/des/timeline.hpp"
#include "sim_events.hpp"
#include "steady_probe.hpp"
#include "unit_rendezvous.hpp"

namespace rapid::des {

/// One host-issued unit of a compute block: a compute op, a folded collective, or a
/// compute op with the folded collectives pipelined with it.
struct Entry {
  SimTime duration = 0, compute = 0;
  int32_t slots = 1;  ///< ops the host issues for it
  const Op* op = nullptr;
  int32_t comm = -1;  ///< folded collective (CommDesc), for the timeline and link stats
  int32_t comm2 = -1;
  SimTime interference = 0;  ///< compute lost to a pipelined TP-overlap kernel beside it
  SimTime dp_compute = 0;    ///< the compute's duration beside a DP collective
  OpEnergy energy{};         ///< the compute's full-speed work (in.power only)
  /// Classes (op_class.hpp) of its compute and of its exposed communication: its
  /// collective's group, the longest one's when two overlap.
  uint8_t op_class = 0, comm_class = 0;
  /// Communication time left exposed: what is neither compute nor interference.
  SimTime exposed_comm() const { return duration - compute - interference; }
};

/// A block of entries (GPU time `duration`, of which `compute`; `slots` host issues; host
/// slack: the host never delays the block when host clock - start <= slack), or one
/// unfolded communication unit (its collectives, maybe overlapping one compute op).
struct Item {
  bool block = true;
  int32_t begin = 0, count = 0;  ///< block: entries; unit: unit_comms
  SimTime duration = 0, compute = 0, slack = 0;
  SimTime interference = 0, dp_compute = 0;  ///< as Entry, summed
  OpEnergy energy;                           ///< as Entry, summed
  /// Block: its entries' compute and exposed communication by class (op_class.hpp).
  OpClassTimes<SimTime> compute_by_class{};
  CommClassTimes<SimTime> comm_by_class{};
  int32_t slots = 0;
  const Op* compute_op = nullptr;  ///< unit: the compute op it overlaps (if any)
  int64_t runs = 0;                ///< times executed (folded collectives' link stats)
};

/// A template compiled for one instance: its items.
struct Compiled {
  int32_t item_begin = 0, item_count = 0;
};

// A stage instance's progress: the phase of the step, within a pass where it is, and what
// it waits for (the handler that ends the wait resumes it).

enum class Phase : uint8_t { Start, BeforePass, InPass, Tail, Optimizer, EndGather, Done };
enum class Sub : uint8_t { AtBoundary, AtGate, InOwner, CommPosting, CommWaiting, PassEnd };
enum class Wait : uint8_t { None, Sends, Recv, Dp, Comm, Time };

struct Inst {
  int32_t stage = 0, replica = 0;
  Phase phase = Phase::Start;
  Sub sub = Sub::AtBoundary;
  Wait wait = Wait::None;
  int32_t pass = 0, pos = 0, item = 0, hook = 0, seg = 0;
  int32_t wait_arg = 0;
  SimTime t = 0, host = 0, post = 0;
  int32_t unit_pending = 0;  ///< collectives of the current unit not yet done
  SimTime unit_done = 0;
  int32_t sends = 0;  ///< outstanding p2p sends
  SimTime sends_done = 0, sends_start = 0;
  bool had_sends = false;  ///< the previous pass sent (its p2p call synchronizes the host)
  /// [0]: folding only what is always uncontended; [1]: also what is uncontended while
  /// the stage's DP stream is quiet (chosen at each owner boundary).
  std::array<std::array<Compiled, kNumTemplateKinds>, 2> compiled{};
  int32_t version = 0;
  int32_t p2p_desc[2] = {-1, -1};  ///< transfers to the next / previous stage
  int32_t p2p_wrap = -1;           ///< stage pp-1 -> 0 (forward) or 0 -> pp-1 (backward)
  std::vector<SimTime> arrived;    ///< per message (dir, chunk, mb)
  // The current pass: up to when its overlap with the DP stream is accounted, its compute
  // alone and beside a DP collective (interference.hpp), its compute alone up to `checked`,
  // the extension added there (compute of the interval after it).
  SimTime checked = 0, pass_compute = 0, pass_dp = 0, checked_compute = 0, carry = 0;
  SimTime pass_start = 0;  ///< when the current pass's compute began
  // Accounting (ps): compute by op class, the layers' exposed collectives by group
  // (op_class.hpp), the rest.
  OpClassTimes<SimTime> compute{};
  CommClassTimes<SimTime> layer_comm{};
  uint8_t unit_class = 0;  ///< group class of the current unit's last collective to finish
  SimTime interf = 0, pp = 0, host_wait = 0, dp_exposed = 0, opt = 0, offload = 0;
  SimTime end = 0;
};

struct Simulator::Impl {
  // Inputs of the current run.
  const Workload* w = nullptr;
  SimInputs in;
  SimOptions opt;
  Fabric* topo = nullptr;
  SimTime host_op = 0;
  bool one_replica = true;
  int64_t tpcp = 1, dp = 1, pp = 1, vpp = 1, m = 1;

  CommLayouts layouts;
  FlowNetwork alone_net;  ///< scratch: each collective's uncontended duration
  EventQueue queue;
  SimTime now = 0;
  uint64_t events = 0, folded = 0;

  std::vector<StageProgram> programs;  // per stage
  std::vector<Inst> inst;
  std::vector<Entry> entries;
  std::vector<Item> items;
  std::vector<int32_t> unit_comms;
  std::vector<DpStream> streams;      // per stage
  Communicator comm{queue, layouts};  ///< what is in flight (communicator.hpp)
  UnitRendezvous units;               ///< layer collectives of several instances
  SimTime step_end = 0;
  int32_t desc_cursor = 0;
  // Link faults (docs/faults.md): the link the `most_loaded` faults resolve to; whether
  // some flow has no route; per link class its faults; the classes timed faults change.
  LinkRef most_loaded;
  bool has_most_loaded = false, no_route = false;
  std::vector<uint64_t> class_faults;

  /// Buffers of one call each, kept from run to run so that a warm simulator allocates
  /// nothing; what they hold means nothing between calls.
  struct Buffers {
    std::vector<int32_t> tiers;                        ///< make_desc: one tier's flow layouts
    std::vector<int32_t> parts, bundles;               ///< finish_desc
    std::vector<const Op*> ops;                        ///< compile: the template's ops
    std::vector<int32_t> desc_of, partner;             ///< compile
    std::vector<int32_t> with;                         ///< compile: ops sharing the GPU with one
    std::vector<std::pair<size_t, int32_t>> dp_descs;  ///< setup: (spec index, desc)
    std::vector<int32_t> woken;                        ///< a DP op's waiters
    std::vector<std::pair<SimTime, SimTime>> spans;    ///< DpStream::cover
    Workload shorter;  ///< run_once: the step with the steady periods left out
  } buffers;

  SteadyProbe steady;  ///< steady-state extrapolation (steady_probe.hpp)
  /// Per link class: what the periods left out of the run carried (bytes per link) and
  /// were busy (ps); rate solves they would have taken.
  std::vector<double> extra_bytes;
  std::vector<SimTime> extra_busy;
  int64_t extra_solves = 0;

  /// A drain or completion event superseded since it was scheduled.
  bool stale(const Event& e) const { return comm.stale(e); }

  // simulator.cpp: the run's result
  /// Each instance's times and the critical one.
  void report_instances(SimResult& out) const;
  /// Per link class with traffic: what the network carried plus the folded collectives'
  /// uncontended flows, by utilization.
  void report_links(SimResult& out) const;

  // sim_steady.cpp: what the steady-state probe observes (steady_probe.hpp)
  void steady_begin(int32_t delta, int64_t periods);
  /// What an event is (kind and whom: instance, stage, the role and plan of a collective;
  /// not slot numbers, which differ from period to period).
  uint64_t event_shape(const Event& e) const;
  void steady_cut(const Inst& s0);
  void steady_apply();
  /// Calls f(int64_t&) on every accumulator of the step, in one fixed order.
  template <class F>
  void for_each_accumulator(F&& f);

  // sim_setup.cpp
  bool setup(const Workload& w, const SimInputs& in, const SimOptions& opt, Fabric& topo,
             bool one_replica);
  int32_t make_desc(const char* name, const Op* op, CollectiveKind kind, double bytes,
                    const GroupShape& g, int32_t inst_id, bool blocking, bool split,
                    int32_t dp_stage = -1);
  int32_t make_p2p_desc(int32_t inst_id, int64_t dst_stage);
  void finish_desc(CommDesc& d);
  void compile(int32_t inst_id, TemplateKind k, const std::vector<Op>* a, const std::vector<Op>* b,
               int version);
  void collect_comms(int32_t inst_id, const std::vector<Op>& ops);
  void compile_compute(int32_t inst_id, int32_t i, int32_t n, int version,
                       const ComputeCost* dp_cost, int32_t item_begin);
  /// Appends entry `e` to the open block of the items from item_begin on (a new block when
  /// the last item is not one).
  void add_entry(int32_t item_begin, const Entry& e);
  /// The step's n instances, fresh (their message buffers' storage kept).
  void reset_instances(int32_t n);
  /// The network's resources, one per link class of the layouts, with their faults.
  void build_link_classes();
  /// The timeline's row names: each instance's first GPU, stage and replica.
  void name_instances(Timeline& timeline) const;
  /// Each stage's DP stream from its program's DP ops: one desc per distinct (kind, group,
  /// bytes), the ops split into the reduction and gather lanes.
  void build_dp_streams(const Workload& wl, bool one);

  // sim_run.cpp
  void run_events();
  void resume(int32_t i);
  bool run_pass(Inst& s);  // false: the instance stopped (event scheduled or waiting)
  bool before_pass(Inst& s, const StageProgram& sp);
  void optimizer_step(Inst& s, const StageProgram& sp);
  /// What run_pass's steps read of the pass an instance is in.
  struct PassCursor {
    const StageProgram& sp;
    const PassRef& pr;
    int32_t n;         ///< owners of the pass's chunk
    int32_t hook_end;  ///< the pass's hooks end
    int32_t id;        ///< the instance
  };
  // run_pass's steps, one per Sub state: false, the instance stopped.
  bool at_boundary(Inst& s, const PassCursor& c);
  bool at_gate(Inst& s, const PassCursor& c);
  bool pass_end(Inst& s, const PassCursor& c);  ///< true: the pass ended (its send posted)
  bool in_owner(Inst& s, const PassCursor& c);
  bool comm_posting(Inst& s, const PassCursor& c);
  bool comm_waiting(Inst& s, const PassCursor& c);
  void run_block(Inst& s, Item& it, int64_t repeat);
  bool gate(Inst& s, int32_t dp_op, SimTime* exposed);
  /// The interference extension added at s.t (ps), or kDeferred: a resume at s.t is
  /// scheduled (the DP stream's overlap up to s.t is not known yet).
  static constexpr SimTime kDeferred = -1;
  SimTime dp_interference(Inst& s);
  void offload(Inst& s);
  void wake(int32_t i) {
    inst[static_cast<size_t>(i)].wait = Wait::None;
    resume(i);
  }
  void schedule_resume(Inst& s, SimTime at);
  /// Posts DP ops first .. first + count - 1 of s's stage at s.t (an event if later).
  void post_dp_at(Inst& s, int32_t first, int32_t count);

  // sim_comm.cpp: what the executor does when communication ends or must start
  void on_op_done(int32_t op);
  void post_unit(int32_t i);
  void send(int32_t i, const PassRef& pr);
  void post_dp(int32_t stage, int32_t op);
  void try_start_dp(int32_t stage);
  int32_t message(const PassRef& pr) const {
    return (static_cast<int32_t>(pr.dir) * static_cast<int32_t>(vpp) + pr.chunk) *
               static_cast<int32_t>(m) +
           pr.mb;
  }
};

}  // namespace rapid::des
