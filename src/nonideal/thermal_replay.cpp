#include "rapid/nonideal/thermal_replay.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include "rapid/nonideal/step_power.hpp"

namespace rapid {

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

/// One throttling node's derate levels. Linear law: a staircase of `levels` steps across
/// the span, each released a quarter step below where it engages (a small hysteresis keeps
/// the crossings finite); Step law: one level, released hysteresis_C below the onset. A
/// level, once changed, holds for the controller's period (ReplayOptions): the die's own
/// pole (tens of ms) would otherwise undo each step at once and chatter at its rate.
struct Staircase {
  size_t node = kDie;
  int levels = 1, level = 0;
  double onset_C = 0, step_C = 0, release_C = 0;
  double hold_until_s = -kInf;
  Staircase(size_t n, const NodeLimit& lim, const ThermalParams& p, int linear_levels)
      : node(n), onset_C(lim.onset_C) {
    const bool step = p.law == ThrottleLaw::Step;
    levels = step ? 1 : std::max(1, linear_levels);
    step_C = step ? 0.0 : lim.span_C / levels;
    release_C = step ? p.hysteresis_C : 0.25 * step_C;
  }
  double up_C() const { return onset_C + level * step_C; }
  double down_C() const { return onset_C + (level - 1) * step_C - release_C; }
  double depth() const { return static_cast<double>(level) / levels; }
  void settle(double T_C) {  // the level a node at T_C starts at
    level = 0;
    hold_until_s = -kInf;
    while (level < levels && T_C >= up_C()) ++level;
  }
};

/// The replay's state and its accumulators.
class Replayer {
 public:
  Replayer(const ThermalParams& p, const DvfsPolicy& dvfs, const ReplayOptions& opt)
      : p_(p),
        net_(p.network()),
        dvfs_(dvfs),
        opt_(opt),
        stairs_{Staircase(kDie, p.die, p, opt.linear_levels),
                Staircase(kHbm, p.hbm, p, opt.linear_levels)} {}

  void start(const NodeVector& T_C) {
    for (size_t i = 0; i < kThermalNodes; ++i) x_[i] = T_C[i] - p_.ambient_C;
    for (Staircase& s : stairs_) s.settle(T_C[s.node]);
    low_clock_ = false;
    first_throttle_s_ = throttling() ? 0.0 : kInf;
    before_die_ = T_C[kDie], before_hbm_ = T_C[kHbm];
    last_sample_C_ = T_C[kDie];
    next_sample_ = dvfs_.sample_s;
    t_ = 0;
  }
  double T(size_t node) const { return x_[node] + p_.ambient_C; }
  const NodeVector& rises() const { return x_; }
  bool throttling() const { return stairs_[0].level > 0 || stairs_[1].level > 0; }

  /// Replays one period; accumulates into the sums when `measure`.
  void period(std::span<const PowerSegment> profile, bool measure) {
    for (const PowerSegment& seg : profile) {
      double remaining = seg.duration_s;  // full-speed seconds of this segment
      int guard = 0;
      while (remaining > 1e-15 && ++guard < 100000) {
        const Derate d = derate();
        const double slow =
            seg.stretches ? d.slowdown(seg.work.compute_share, seg.work.memory_share) : 1.0;
        const NodeVector P =
            seg.stretches ? seg.work.nodes_at(d) : NodeVector{seg.work.full_W(), 0.0, 0.0};
        const ThermalPath path = net_.path(x_, P);
        // The next event: the segment's end, a DVFS sample, a level crossing of either node.
        const double t_end = remaining * slow;
        double dt = std::min(t_end, dvfs_.enabled ? std::max(0.0, next_sample_ - t_) : kInf);
        Staircase* moved = nullptr;
        int dir = 0;  // +1, -1: a crossing; 0: a hold ends
        for (Staircase& s : stairs_) {
          if (t_ < s.hold_until_s) {
            if (s.hold_until_s - t_ < dt) dt = s.hold_until_s - t_, moved = &s, dir = 0;
            continue;
          }
          if (s.level < s.levels) {
            const double tc = net_.first_crossing(path, s.node, s.up_C() - p_.ambient_C, dt);
            if (tc < dt) dt = tc, moved = &s, dir = +1;
          }
          if (s.level > 0) {
            const double tc = net_.first_crossing(path, s.node, s.down_C() - p_.ambient_C, dt);
            if (tc < dt) dt = tc, moved = &s, dir = -1;
          }
        }
        const double W = P[kDie] + P[kHbm];
        if (measure) accumulate(path, dt, W, d, seg.stretches);
        x_ = net_.at(path, dt);
        if (measure) {
          sum_.die_max = std::max(sum_.die_max, T(kDie));
          sum_.hbm_max = std::max(sum_.hbm_max, T(kHbm));
        }
        touched_ = touched_ || throttling() || low_clock_;
        t_ += dt;
        remaining = moved || dt < t_end ? remaining - dt / slow : 0.0;
        if (moved) step(*moved, dir);
        if (dvfs_.enabled && t_ >= next_sample_) sample();
        if (trace_) record(dt, W, d);
      }
    }
  }

  struct Sums {
    double time = 0, die = 0, hbm = 0, die_max = -kInf, hbm_max = -kInf, energy = 0, peak_W = 0;
    double throttled = 0, die_throttled = 0, hbm_throttled = 0, dvfs = 0;
    double work_time = 0, clock = 0, bandwidth = 0;
  };
  Sums sum_;
  double t_ = 0;
  bool touched_ = false;  ///< a throttle level or the DVFS clock engaged this period
  double first_throttle_s_ = kInf, first_dvfs_s_ = kInf;
  int dvfs_engagements_ = 0;
  std::vector<ThermalSample>* trace_ = nullptr;
  double trace_step_ = 0;

 private:
  // A level change: at a crossing, on the threshold exactly and one level on; at the end
  // of a hold, one level towards the node's temperature when it is past a threshold.
  void step(Staircase& s, int dir) {
    s.hold_until_s = -kInf;
    if (dir != 0) {
      x_[s.node] = (dir > 0 ? s.up_C() : s.down_C()) - p_.ambient_C;
    } else if (s.level < s.levels && T(s.node) >= s.up_C()) {
      dir = +1;
    } else if (s.level > 0 && T(s.node) <= s.down_C()) {
      dir = -1;
    }
    if (dir == 0) return;
    s.level += dir;
    s.hold_until_s = t_ + opt_.throttle_period_s;
    if (dir > 0 && !std::isfinite(first_throttle_s_)) first_throttle_s_ = t_;
  }

  void accumulate(const ThermalPath& path, double dt, double W, const Derate& d, bool work) {
    sum_.time += dt;
    sum_.die += net_.integral(path, kDie, dt) + p_.ambient_C * dt;
    sum_.hbm += net_.integral(path, kHbm, dt) + p_.ambient_C * dt;
    sum_.energy += W * dt;
    sum_.peak_W = std::max(sum_.peak_W, W);
    if (throttling()) sum_.throttled += dt;
    if (stairs_[0].level > 0) sum_.die_throttled += dt;
    if (stairs_[1].level > 0) sum_.hbm_throttled += dt;
    if (low_clock_) sum_.dvfs += dt;
    if (work) {
      sum_.work_time += dt;
      sum_.clock += d.clock * dt;
      sum_.bandwidth += d.hbm * dt;
    }
  }

  // Predictive DVFS: the die's rate over the last interval against the threshold.
  void sample() {
    const double rate = (T(kDie) - last_sample_C_) / dvfs_.sample_s;
    low_clock_ = rate > dvfs_.rate_C_per_s;                 // restored once the rate falls back
    if (low_clock_ && !std::isfinite(first_throttle_s_)) {  // counted before any throttle
      ++dvfs_engagements_;
      if (!std::isfinite(first_dvfs_s_)) first_dvfs_s_ = t_;
    }
    last_sample_C_ = T(kDie);
    next_sample_ += dvfs_.sample_s;
  }

  /// The trace in windows of trace_step_: each sample the window's start, its starting
  /// temperatures and its average power, clock and bandwidth kept (time-weighted).
  void record(double dt, double W, const Derate& d) {
    if (win_len_ == 0) win_die_ = before_die_, win_hbm_ = before_hbm_;
    win_len_ += dt;
    win_E_ += W * dt;
    win_clock_ += d.clock * dt;
    win_bw_ += d.hbm * dt;
    before_die_ = T(kDie), before_hbm_ = T(kHbm);
    if (win_len_ < trace_step_) return;
    trace_->push_back({t_ - win_len_, win_die_, win_hbm_, win_E_ / win_len_, win_clock_ / win_len_,
                       win_bw_ / win_len_});
    win_len_ = win_E_ = win_clock_ = win_bw_ = 0;
  }

  Derate derate() const {
    Derate d = derate_at_depth(p_, stairs_[0].depth(), stairs_[1].depth());
    if (low_clock_) d.clock *= dvfs_.clock;
    d.clock *= opt_.base.clock;
    d.hbm *= opt_.base.hbm;
    return d;
  }

  const ThermalParams& p_;
  const ThermalNetwork& net_;
  const DvfsPolicy& dvfs_;
  const ReplayOptions& opt_;
  std::array<Staircase, 2> stairs_;
  NodeVector x_{};  ///< rises over the coolant
  bool low_clock_ = false;
  double last_sample_C_ = 0, next_sample_ = 0;
  double before_die_ = 0, before_hbm_ = 0;
  double win_die_ = 0, win_hbm_ = 0, win_len_ = 0, win_E_ = 0, win_clock_ = 0, win_bw_ = 0;
};

}  // namespace

ReplayResult replay_periodic(const ThermalParams& p, std::span<const PowerSegment> profile,
                             const DvfsPolicy& dvfs, const ReplayOptions& opt) {
  ReplayResult out;
  double full_s = 0;
  for (const PowerSegment& s : profile) full_s += s.duration_s;
  if (full_s <= 0) return out;
  // Start at the closed form's steady state of the step's average at this GPU's own derate
  // (a throttled GPU hovers at its limit), so that the transient is short.
  const auto work = std::find_if(profile.begin(), profile.end(),
                                 [](const PowerSegment& s) { return s.stretches; });
  const double idle_W = (work != profile.end() ? *work : profile.front()).work.idle_W;
  const ThermalSteadyState ss = steady_state(
      p, nonideal_detail::under(nonideal_detail::whole_step(profile, idle_W), opt.base),
      opt.linear_levels);
  Replayer r(p, dvfs, opt);
  r.start({ss.die_C, ss.hbm_C, ss.sink_C});
  // Warm-up: until the slow part of the temperatures (the modes of 1 s and more: the sink's)
  // at the period's start repeats within 0.01 C (the die's and HBM's own poles, tens of
  // ms, follow the power and the throttle level the period starts at); once a throttle
  // level or the DVFS clock has engaged, the state never repeats exactly (the levels
  // dither out of step with the period), and the warm-up is five slowest time constants
  // from the closed form's start instead (e^-5 < 1% of the transient left).
  const ThermalNetwork& net = p.network();
  const double settle_s = 5.0 / net.rates()[0];
  int periods = 0;
  bool engaged = false;
  for (; periods < opt.max_periods; ++periods) {
    const NodeVector before = net.slow_part(r.rises(), 1.0);
    r.touched_ = false;
    r.period(profile, false);
    engaged = engaged || r.touched_;
    const NodeVector after = net.slow_part(r.rises(), 1.0);
    double moved = 0;
    for (size_t i = 0; i < kThermalNodes; ++i)
      moved = std::max(moved, std::abs(after[i] - before[i]));
    if (engaged ? r.t_ >= settle_s : moved < 0.01) break;
  }
  // Measurement: whole periods covering at least window_s (averages over throttle cycles
  // and DVFS samples that are not in step with the period); one period when no throttle
  // level and no DVFS clock engaged (it then repeats exactly).
  int measured = 0;
  bool touched = engaged;
  while (measured < opt.max_periods) {
    r.touched_ = false;
    r.period(profile, true);
    ++measured;
    touched = touched || r.touched_;
    if (!touched || (r.sum_.time >= opt.window_s && measured >= 3)) break;
  }
  out.periods = periods + 1 + measured;
  const Replayer::Sums& s = r.sum_;
  out.period_s = s.time / measured;
  out.slowdown = out.period_s / full_s;
  out.die_avg_C = s.die / s.time;
  out.die_max_C = s.die_max;
  out.hbm_avg_C = s.hbm / s.time;
  out.hbm_max_C = s.hbm_max;
  out.throttle_fraction = s.throttled / s.time;
  out.die_throttle_fraction = s.die_throttled / s.time;
  out.hbm_throttle_fraction = s.hbm_throttled / s.time;
  out.dvfs_fraction = s.dvfs / s.time;
  out.avg_power_W = s.energy / s.time;
  out.peak_power_W = s.peak_W;
  if (s.work_time > 0) out.effective = Derate{s.clock / s.work_time, s.bandwidth / s.work_time};
  return out;
}

ColdStart replay_cold_start(const ThermalParams& p, std::span<const PowerSegment> profile,
                            const DvfsPolicy& dvfs, double idle_W, const ReplayOptions& opt) {
  ColdStart out;
  double full_s = 0;
  for (const PowerSegment& s : profile) full_s += s.duration_s;
  const double length_s = std::max(5.0 / p.network().rates()[0], opt.record ? opt.record_s : 0.0);
  Replayer r(p, dvfs, opt);
  const NodeVector idle = p.steady_C({idle_W, 0, 0});
  r.start(idle);
  if (opt.record) {
    r.trace_ = &out.trace;
    r.trace_step_ = length_s / 2000;
  }
  // Without a trace to keep, the replay ends at the first throttle: what comes after it
  // (the throttled approach to the periodic state) is the periodic replay's.
  while (full_s > 0 && r.t_ < length_s && (opt.record || !std::isfinite(r.first_throttle_s_)))
    r.period(profile, false);
  out.first_throttle_s = r.first_throttle_s_;
  out.first_dvfs_s = r.first_dvfs_s_;
  out.dvfs_engagements = r.dvfs_engagements_;
  out.length_s = r.t_;
  return out;
}

}  // namespace rapid
