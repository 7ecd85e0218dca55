// JobReplay::run (job_replay.hpp): most_loaded faults and the thermal fixed point of a
// replay on a job, as the DES's (des/simulator.cpp, eval/nonideal_des.cpp).
#include <algorithm>
#include <unordered_map>

#include "rapid/common/fnv1a.hpp"
#include "rapid/eval/step_profile.hpp"
#include "rapid/trace/job_replay.hpp"

namespace rapid::trace {

namespace {

// The ranks talk over NVLink while they wait (waiting_power_W): one node, or a collective
// group all on one node (TP and CP groups; DP groups span nodes).
bool nvlink_groups(const ProcessGroups* groups, int64_t world, int64_t per_node) {
  if (world <= per_node) return true;
  if (!groups) return false;
  for (const auto& [id, ranks] : groups->groups())
    if (ranks.size() > 1 && std::all_of(ranks.begin(), ranks.end(), [&](int64_t r) {
          return r / per_node == ranks.front() / per_node;
        }))
      return true;
  return false;
}

// Ranks with the same profile and state reach the same steady state: replayed once.
uint64_t profile_hash(const std::vector<PowerSegment>& segs, const GpuState& g) {
  uint64_t h = kFnvOffsetBasis;
  for (double x : {g.base.clock, g.base.hbm, g.thermal.beta_per_s(), g.thermal.ambient_C})
    h = fnv1a(h, x);
  for (const PowerSegment& s : segs) h = fnv1a(fnv1a(h, s.duration_s), s.work.full_W());
  return h;
}

}  // namespace

ReplayResult JobReplay::once(const std::vector<RankTrace>& ranks, const ProcessGroups* groups,
                             ReplayInputs in, std::string* link) const {
  if (most_loaded_) {
    // docs/faults.md "most_loaded": the busiest link of the fault-free step.
    ReplayInputs clean = in;
    clean.link_faults.clear();
    clean.record_power = false;
    const ReplayResult c = replay_traces(ranks, groups, clean);
    if (!c.busiest_link.empty()) in.most_loaded = c.busiest;
    *link = c.busiest_link;
  }
  return replay_traces(ranks, groups, in);
}

JobReplayResult JobReplay::run(const std::vector<RankTrace>& ranks,
                               const ProcessGroups* groups) const {
  JobReplayResult out;
  ReplayInputs in = in_;
  in.record_power = thermal_;
  out.replay = once(ranks, groups, in, &out.most_loaded_link);
  if (thermal_ && out.replay.no_route.empty()) fixed_point(ranks, groups, out);
  return out;
}

void JobReplay::fixed_point(const std::vector<RankTrace>& ranks, const ProcessGroups* groups,
                            JobReplayResult& out) const {
  const PowerModel& pm = *power_;
  int64_t world = 0;
  for (const RankTrace& r : ranks) world = std::max(world, r.rank + 1);
  const double idle_W = pm.idle_W();
  const double wait_W =
      waiting_power_W(pm, net_, world, nvlink_groups(groups, world, net_.gpus_per_node));
  const DvfsPolicy policy = dvfs_policy(*scenario_);
  const GpuState normal = normal_gpu_state(eval_.hardware(), *scenario_);
  auto state = [&](int64_t rank) -> const GpuState& {
    return static_cast<size_t>(rank) < states_.size() ? states_[static_cast<size_t>(rank)] : normal;
  };
  ReplayInputs in = in_;
  in.record_power = true;
  in.derate.assign(static_cast<size_t>(world), Derate{});
  ReplayResult& r = out.replay;
  const double unthrottled_s = r.step_time_s;
  ThermalReport tr;
  StepProfile prof;
  for (int iteration = 1;; ++iteration) {
    tr.iterations = iteration;
    tr.instances.clear(), tr.first_gpu.clear(), tr.inst.clear(), tr.waits.clear();
    // Each rank's steady state (nonideal_des.cpp's per instance), once per distinct
    // (profile, state).
    struct Replayed {
      std::vector<PowerSegment> segments;
      const GpuState* state;
      size_t at;  // in tr.instances
    };
    std::unordered_multimap<uint64_t, Replayed> seen;
    bool any = false;
    for (size_t p = 0; p < ranks.size(); ++p) {
      const GpuState& g = state(ranks[p].rank);
      profile_from_spans(r.power[p], des::to_ps(r.step_time_s), idle_W, wait_W,
                         merge_s(r.step_time_s), prof);
      const uint64_t h = profile_hash(prof.segments, g);
      const auto range = seen.equal_range(h);
      const auto it = std::find_if(range.first, range.second, [&](const auto& x) {
        return x.second.state->runs_like(g) && x.second.segments == prof.segments;
      });
      if (it == range.second) {
        ReplayOptions o;
        o.base = g.base;
        seen.emplace(h, Replayed{prof.segments, &g, tr.instances.size()});
        tr.instances.push_back(replay_periodic(g.thermal, prof.segments, policy, o));
        tr.periods += tr.instances.back().periods;
      } else {
        tr.instances.push_back(tr.instances[it->second.at]);
      }
      tr.first_gpu.push_back(ranks[p].rank);
      tr.inst.push_back(static_cast<int32_t>(p));
      tr.waits.push_back(false);
      any = any || throttled(tr.instances.back(), g.base);
    }
    if (!any || iteration >= kMaxThermalSimulations) break;
    // The next replay: each rank at the derate of its steady state.
    for (size_t p = 0; p < ranks.size(); ++p)
      in.derate[static_cast<size_t>(ranks[p].rank)] = tr.instances[p].effective;
    const double before = r.step_time_s;
    r = once(ranks, groups, in, &out.most_loaded_link);
    if (!r.no_route.empty()) return;
    if (thermal_settled(before, r.step_time_s)) break;
  }
  size_t hot = 0;
  for (size_t p = 1; p < tr.instances.size(); ++p)
    if (tr.instances[p].die_avg_C > tr.instances[hot].die_avg_C) hot = p;
  // The hottest rank's heating from idle (a job's start).
  const GpuState& g = state(ranks[hot].rank);
  ReplayOptions o;
  o.base = g.base;
  profile_from_spans(r.power[hot], des::to_ps(r.step_time_s), idle_W, wait_W,
                     merge_s(r.step_time_s), prof);
  tr.cold.assign(tr.instances.size(), ColdStart{});
  tr.cold[hot] = heating_from_idle(g.thermal, prof.segments, policy, idle_W, o,
                                   tr.instances[hot].throttle_fraction > 0);
  const rapid::ReplayResult& h = tr.instances[hot];
  out.row.status = Status::Ok;
  set_thermal_columns(g.thermal, h.die_avg_C, h.hbm_avg_C, h.throttle_fraction, h.dvfs_fraction,
                      tr.cold[hot], out.row);
  out.row.thermal_slowdown = r.step_time_s / unthrottled_s - 1.0;
  tr.unthrottled_step_s = unthrottled_s;
  tr.step_s = r.step_time_s;
  out.thermal = std::move(tr);
}

}  // namespace rapid::trace
