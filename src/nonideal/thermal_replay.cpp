#include "rapid/nonideal/thermal_replay.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

namespace rapid {

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

/// The replay's state and its accumulators.
class Replayer {
 public:
  Replayer(const ThermalParams& p, const DvfsPolicy& dvfs, const ReplayOptions& opt)
      : p_(p), dvfs_(dvfs), opt_(opt) {
    // Linear law: a staircase of `levels` derate steps across the span, each released a
    // quarter step below where it engages (a small hysteresis keeps the crossings finite);
    // Step law: one level, released hysteresis_C below the threshold.
    levels_ = p.law == ThrottleLaw::Step ? 1 : std::max(1, opt.linear_levels);
    step_C_ = p.law == ThrottleLaw::Step ? 0.0 : p.span_C / levels_;
    release_C_ = p.law == ThrottleLaw::Step ? p.hysteresis_C : 0.25 * step_C_;
  }

  void start(double T0) {
    T_ = T_before_ = T0;
    level_ = 0;
    while (level_ < levels_ && T_ >= up_C(level_)) ++level_;
    low_clock_ = false;
    last_sample_T_ = T0;
    next_sample_ = dvfs_.sample_s;
    t_ = 0;
  }

  /// Replays one period; accumulates into the sums when `measure`.
  void period(std::span<const PowerSegment> profile, bool measure) {
    for (const PowerSegment& seg : profile) {
      double remaining = seg.duration_s;  // full-speed seconds of this segment
      int guard = 0;
      while (remaining > 1e-15 && ++guard < 100000) {
        const Derate d = derate();
        const double slow =
            seg.stretches ? d.slowdown(seg.work.compute_share, seg.work.memory_share) : 1.0;
        const double P = seg.stretches ? seg.work.at(d) : seg.work.full_W();
        const double t_end = remaining * slow;
        const double t_up = level_ < levels_ ? p_.time_to(T_, P, up_C(level_)) : kInf;
        const double t_down = level_ > 0 ? p_.time_to(T_, P, down_C(level_)) : kInf;
        const double t_sample = dvfs_.enabled ? std::max(0.0, next_sample_ - t_) : kInf;
        const double dt = std::min({t_end, t_up, t_down, t_sample});
        if (measure) {
          sum_.time += dt;
          sum_.T += p_.integral(T_, P, dt);
          sum_.energy += P * dt;
          sum_.peak_W = std::max(sum_.peak_W, P);
          if (level_ > 0) sum_.throttled += dt;
          if (low_clock_) sum_.dvfs += dt;
          if (seg.stretches) {
            sum_.work_time += dt;
            sum_.clock += d.clock * dt;
            sum_.hbm += d.hbm * dt;
          }
        }
        T_ = p_.after(T_, P, dt);
        if (measure) sum_.T_max = std::max(sum_.T_max, T_);
        touched_ = touched_ || level_ > 0 || low_clock_;
        t_ += dt;
        remaining = dt == t_end ? 0.0 : remaining - dt / slow;
        if (dt == t_up) {
          T_ = up_C(level_);
          ++level_;
        } else if (dt == t_down) {
          T_ = down_C(level_);
          --level_;
        }
        if (dvfs_.enabled && t_ >= next_sample_) {
          const double rate = (T_ - last_sample_T_) / dvfs_.sample_s;
          low_clock_ = rate > dvfs_.rate_C_per_s;  // restored once the rate falls back
          last_sample_T_ = T_;
          next_sample_ += dvfs_.sample_s;
        }
        if (trace_) record(dt, P, d);
      }
    }
  }

  /// The trace in windows of trace_step_: each sample the window's start, its starting
  /// temperature and its average power, clock and bandwidth kept (time-weighted).
  void record(double dt, double P, const Derate& d) {
    if (win_len_ == 0) win_T_ = T_before_;
    win_len_ += dt;
    win_E_ += P * dt;
    win_clock_ += d.clock * dt;
    win_hbm_ += d.hbm * dt;
    T_before_ = T_;
    if (win_len_ < trace_step_) return;
    trace_->push_back(
        {t_ - win_len_, win_T_, win_E_ / win_len_, win_clock_ / win_len_, win_hbm_ / win_len_});
    win_len_ = win_E_ = win_clock_ = win_hbm_ = 0;
  }

  struct Sums {
    double time = 0, T = 0, T_max = -kInf, energy = 0, peak_W = 0, throttled = 0, dvfs = 0;
    double work_time = 0, clock = 0, hbm = 0;
  };
  Sums sum_;
  double T_ = 0, t_ = 0;
  bool touched_ = false;  ///< a throttle level or the DVFS clock engaged this period
  double T_before_ = 0, win_T_ = 0, win_len_ = 0, win_E_ = 0, win_clock_ = 0, win_hbm_ = 0;
  std::vector<ThermalSample>* trace_ = nullptr;
  double trace_step_ = 0;

 private:
  double up_C(int level) const { return p_.throttle_C + level * step_C_; }
  double down_C(int level) const { return p_.throttle_C + (level - 1) * step_C_ - release_C_; }
  Derate derate() const {
    Derate d = derate_at_depth(p_, static_cast<double>(level_) / levels_);
    if (low_clock_) d.clock *= dvfs_.clock;
    d.clock *= opt_.base.clock;
    d.hbm *= opt_.base.hbm;
    return d;
  }

  const ThermalParams& p_;
  const DvfsPolicy& dvfs_;
  const ReplayOptions& opt_;
  int levels_ = 1, level_ = 0;
  double step_C_ = 0, release_C_ = 0;
  bool low_clock_ = false;
  double last_sample_T_ = 0, next_sample_ = 0;
};

}  // namespace

ReplayResult replay_periodic(const ThermalParams& p, std::span<const PowerSegment> profile,
                             const DvfsPolicy& dvfs, const ReplayOptions& opt) {
  ReplayResult out;
  // The period at this GPU's own derate (before any throttling) and its average power.
  double full_s = 0, own_s = 0, energy = 0;
  for (const PowerSegment& s : profile) {
    const double slow =
        s.stretches ? opt.base.slowdown(s.work.compute_share, s.work.memory_share) : 1.0;
    full_s += s.duration_s;
    own_s += s.duration_s * slow;
    energy += (s.stretches ? s.work.at(opt.base) : s.work.full_W()) * s.duration_s * slow;
  }
  if (full_s <= 0) return out;
  // Start at the closed-form steady state of the average power (capped at the threshold's
  // neighbourhood: a throttled GPU hovers there), so that the transient is short.
  const double avg_W = energy / own_s;
  const double T0 = std::min(p.steady_C(avg_W), p.throttle_C + p.span_C);
  Replayer r(p, dvfs, opt);
  r.start(T0);
  // Warm-up: until the period's start temperature repeats within 0.01 C; when the state is
  // more than the temperature (a throttle level or a DVFS clock was touched), also until
  // 5 / beta has passed (five thermal time constants: e^-5 < 1% of any transient left).
  const double settle_s = 5.0 / p.beta_per_s;
  int periods = 0;
  for (; periods < opt.max_periods; ++periods) {
    const double before = r.T_;
    r.touched_ = false;
    r.period(profile, false);
    if (std::abs(r.T_ - before) < 0.01 && (r.t_ >= settle_s || !r.touched_)) break;
  }
  // Measurement: whole periods covering at least window_s (averages over throttle cycles
  // and DVFS samples that are not in step with the period); one period when no throttle
  // level and no DVFS clock engaged (it then repeats exactly).
  int measured = 0;
  bool touched = r.touched_;
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
  out.temperature_avg_C = s.T / s.time;
  out.temperature_max_C = s.T_max;
  out.throttle_fraction = s.throttled / s.time;
  out.dvfs_fraction = s.dvfs / s.time;
  out.avg_power_W = s.energy / s.time;
  out.peak_power_W = s.peak_W;
  if (s.work_time > 0) out.effective = Derate{s.clock / s.work_time, s.hbm / s.work_time};
  if (opt.record) {  // the heating transient from an idle GPU, for the timeline
    double idle_W = profile.front().work.idle_W;
    Replayer cold(p, dvfs, opt);
    cold.start(p.steady_C(idle_W));
    cold.trace_ = &out.trace;
    cold.trace_step_ = opt.record_s / 2000;
    while (cold.t_ < opt.record_s) cold.period(profile, false);
  }
  return out;
}

}  // namespace rapid
