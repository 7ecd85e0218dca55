#include "rapid/analytical/pipeline_program.hpp"

#include "rapid/common/eval_context.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <memory>

#include "rapid/common/error.hpp"
#include "rapid/workload/schedule.hpp"

namespace rapid {

PipelineProgram::PipelineProgram(int64_t pp, int64_t vpp, int64_t m) : pp_(pp), vpp_(vpp), m_(m) {
  const int64_t P = pp * vpp;
  RAPID_ASSERT(2 * P <= 0xffff, "pipeline program: at most 32767 virtual stages");
  std::vector<std::vector<PassRef>> order(static_cast<size_t>(pp));
  size_t total = 0;
  for (int64_t j = 0; j < pp; ++j) {
    pipeline_schedule(pp, vpp, m, j, order[static_cast<size_t>(j)]);
    total += order[static_cast<size_t>(j)].size();
  }
  RAPID_ASSERT(total < 0xffffffffu, "pipeline program: fewer than 2^32 passes");
  // producer[(dir * P + q) * m + mb]: 1 + the index in passes_ of the pass whose output is
  // the input of pass (dir, virtual stage q, mb); 0 while that pass has not been placed.
  std::vector<uint32_t> producer(static_cast<size_t>(2 * P * m), 0);
  auto input_of = [&](bool fwd, int64_t q, int32_t mb) -> uint32_t& {
    return producer[static_cast<size_t>(((fwd ? 0 : 1) * P + q) * m + mb)];
  };
  std::vector<size_t> next(static_cast<size_t>(pp), 0);
  passes_.reserve(total);
  std::vector<uint32_t> position;  // each placed pass's place in its device's order
  position.reserve(total);
  // Place each device's passes in its order as far as their inputs are placed, device after
  // device, until all are (the walk's own order: every pass after the one it waits for).
  while (passes_.size() < total) {
    const size_t placed = passes_.size();
    for (int64_t j = 0; j < pp; ++j) {
      const std::vector<PassRef>& o = order[static_cast<size_t>(j)];
      for (size_t& k = next[static_cast<size_t>(j)]; k < o.size(); ++k) {
        const bool fwd = o[k].dir == PassDir::Forward;
        const int64_t q = o[k].chunk * pp + j;
        const bool starts = fwd && q == 0;  // the first virtual stage's forward: no input
        const uint32_t in = starts ? 0 : input_of(fwd, q, o[k].mb);
        if (!starts && in == 0) break;
        passes_.push_back(Pass{in, static_cast<uint16_t>(j),
                               static_cast<uint16_t>(2 * (j * vpp + o[k].chunk) + (fwd ? 0 : 1))});
        position.push_back(static_cast<uint32_t>(k));
        const auto self = static_cast<uint32_t>(passes_.size());
        // Its output: the next virtual stage's forward, the previous one's backward, or (the
        // last virtual stage's forward: the loss) its own backward.
        if (fwd)
          input_of(q + 1 < P, q + 1 < P ? q + 1 : q, o[k].mb) = self;
        else if (q > 0)
          input_of(false, q - 1, o[k].mb) = self;
      }
    }
    RAPID_ASSERT(passes_.size() > placed, "pipeline schedule without a deadlock");
  }
  const std::vector<uint32_t> placed = order_by_depth();
  if (vpp > 1) find_rounds(position, placed);
}

std::vector<uint32_t> PipelineProgram::order_by_depth() {
  // A pass's depth: 1 + that of the latest of the device's previous pass and its input's.
  // Passes of one depth do not wait for one another: run level by level, the devices'
  // chains of max and add overlap in the CPU instead of following each other (stable: each
  // device's passes keep their order, every input comes before its pass).
  const size_t n = passes_.size();
  std::vector<uint32_t> depth(n), on_device(static_cast<size_t>(pp_), 0);
  uint32_t deepest = 0;
  for (size_t i = 0; i < n; ++i) {
    const Pass& p = passes_[i];
    uint32_t& d = on_device[p.device];
    d = 1 + std::max(d, p.input ? depth[p.input - 1] : 0u);
    depth[i] = d;
    deepest = std::max(deepest, d);
  }
  std::vector<uint32_t> start(static_cast<size_t>(deepest) + 2, 0);
  for (uint32_t d : depth) ++start[d + 1];
  for (size_t d = 1; d < start.size(); ++d) start[d] += start[d - 1];
  std::vector<uint32_t> position(n);
  for (size_t i = 0; i < n; ++i) position[i] = start[depth[i]]++;
  std::vector<Pass> ordered(n);
  for (size_t i = 0; i < n; ++i) {
    Pass p = passes_[i];
    if (p.input) p.input = position[p.input - 1] + 1;
    ordered[position[i]] = p;
  }
  passes_ = std::move(ordered);
  return position;
}

void PipelineProgram::find_rounds(const std::vector<uint32_t>& position,
                                  const std::vector<uint32_t>& placed) {
  // Positions per round on every device: pp micro-batches x vpp chunks, forward and backward.
  const int64_t round = 2 * pp_ * vpp_, total = m_ * vpp_;
  // Cuts just before a forward, past the longest warm-up (device 0's: schedule.hpp) and
  // before device 0's cool-down, where every device is in its steady state.
  const int64_t warm0 = std::min(2 * (pp_ - 1) + (vpp_ - 1) * pp_, total);
  const size_t n = passes_.size();
  std::vector<uint32_t> pos(n);
  for (size_t i = 0; i < n; ++i) pos[placed[i]] = position[i];
  struct Crossing {
    uint32_t device, position, pass;
    bool operator<(const Crossing& o) const {
      return device != o.device ? device < o.device : position < o.position;
    }
  };
  std::vector<Crossing> before;  // the previous cut's crossing passes
  for (int64_t cut = warm0 + 2; cut + 2 <= 2 * total - warm0; cut += round) {
    const auto c = static_cast<uint32_t>(cut);
    std::vector<Crossing> crossing;
    bool closed = true;  // no pass before the cut waits for one after it
    for (size_t i = 0; i < n; ++i) {
      const Pass& p = passes_[i];
      const bool after = pos[i] >= c;
      if (p.input) {
        const uint32_t x = p.input - 1;
        if (after && pos[x] < c) crossing.push_back({passes_[x].device, pos[x], x});
        if (!after && pos[x] >= c) closed = false;
      }
      if (pos[i] + 1 == c) crossing.push_back({p.device, pos[i], static_cast<uint32_t>(i)});
    }
    std::sort(crossing.begin(), crossing.end());
    crossing.erase(std::unique(crossing.begin(), crossing.end(),
                               [](const Crossing& a, const Crossing& b) {
                                 return a.device == b.device && a.position == b.position;
                               }),
                   crossing.end());
    if (!closed) crossing.clear();
    // Successive cuts compared pass for pass: the same crossings a round on.
    bool aligned = !crossing.empty() && crossing.size() == before.size();
    for (size_t i = 0; aligned && i < crossing.size(); ++i)
      aligned = crossing[i].device == before[i].device &&
                crossing[i].position == before[i].position + round;
    if (aligned) {
      Round r;
      for (size_t i = 0; i < crossing.size(); ++i) {
        r.from.push_back(before[i].pass + 1);
        r.to.push_back(crossing[i].pass + 1);
      }
      rounds_.push_back(std::move(r));
    }
    before = std::move(crossing);
  }
}

bool PipelineProgram::runnable(const PipelineInput& in) {
  auto ok = [](double t) { return std::isfinite(t) && t >= 0; };
  return ok(in.p2p_s) && std::all_of(in.fwd.begin(), in.fwd.end(), ok) &&
         std::all_of(in.bwd.begin(), in.bwd.end(), ok) &&
         in.fwd.size() == static_cast<size_t>(in.pp * in.vpp) && in.fwd.size() == in.bwd.size();
}

namespace {

// Per slot: the pass's duration and the send it waits for after it (none after the last
// virtual stage's forward and the first one's backward): the walk's free_at = end + p2p_s,
// and end + 0.0 == end.
// The thread's buffers and programs, in its evaluation context (eval_context.hpp).
struct ProgramScratch {
  std::vector<double> duration, sends;
  std::vector<double> run_times, run_clock;  // run_passes()
};
// This thread's programs (of()).
struct KeptProgram {
  std::unique_ptr<PipelineProgram> program;
  uint64_t used = 0;
};
struct KeptPrograms {
  std::array<KeptProgram, 32> kept;
  uint64_t tick = 0;
};

ProgramScratch& scratch() {
  return EvalContext::current().get<ProgramScratch>();
}

}  // namespace

void PipelineProgram::run(const PipelineInput& in, PipelineTimes& out) const {
  RAPID_ASSERT(is(in.pp, in.vpp, in.m), "pipeline program of another shape");
  run_passes(in, out);
}

bool PipelineProgram::extend(const PipelineInput& in, PipelineTimes& out) const {
  RAPID_ASSERT(in.pp == pp_ && in.vpp == vpp_ && in.m >= m_ && (in.m - m_) % pp_ == 0,
               "pipeline program extended to another shape");
  const double* const t = run_passes(in, out);
  const double g = static_cast<double>((in.m - m_) / pp_);
  if (g == 0) return true;
  const ProgramScratch& buf = scratch();
  for (const Round& r : rounds_) {
    // The crossing times a round on, all moved on by the same lambda (up to rounding).
    const double lambda = t[r.to[0]] - t[r.from[0]];
    bool repeats = true;
    for (size_t i = 0; repeats && i < r.to.size(); ++i)
      repeats = std::abs(t[r.to[i]] - t[r.from[i]] - lambda) <= 1e-12 * t[r.to[i]];
    if (!repeats) continue;
    // Each of the g rounds more: lambda later, and on every device pp micro-batches of each
    // chunk's passes and their sends more.
    out.makespan += g * lambda;
    for (int64_t j = 0; j < pp_; ++j) {
      double busy = 0;
      for (size_t k = 2 * static_cast<size_t>(j * vpp_);
           k < 2 * static_cast<size_t>((j + 1) * vpp_); ++k)
        busy += buf.duration[k] + buf.sends[k];
      out.busy[static_cast<size_t>(j)] += g * static_cast<double>(pp_) * busy;
      out.end[static_cast<size_t>(j)] += g * lambda;
    }
    return true;
  }
  return false;
}

void PipelineProgram::walk(const PipelineInput& in, PipelineTimes& out) {
  const int64_t short_m = kShortGroups * in.pp;
  if (in.vpp > 1 && in.m > short_m && of(in.pp, in.vpp, short_m).extend(in, out)) return;
  of(in.pp, in.vpp, in.m).run(in, out);
}

const double* PipelineProgram::run_passes(const PipelineInput& in, PipelineTimes& out) const {
  const int64_t P = pp_ * vpp_;
  auto& [duration, sends, times, clock] = scratch();
  duration.resize(static_cast<size_t>(2 * P));
  sends.resize(static_cast<size_t>(2 * P));
  for (int64_t j = 0; j < pp_; ++j)
    for (int64_t c = 0; c < vpp_; ++c) {
      const auto s = static_cast<size_t>(2 * (j * vpp_ + c));
      const int64_t q = c * pp_ + j;
      duration[s] = in.f(j, c);
      duration[s + 1] = in.b(j, c);
      sends[s] = q + 1 < P ? in.p2p_s : 0.0;
      sends[s + 1] = q > 0 ? in.p2p_s : 0.0;
    }
  // times[1 + i]: when pass i's output is on the device that waits for it; times[0] = 0 for
  // the passes that wait for none (max(clock, 0) == clock: clocks are never negative).
  times.resize(passes_.size() + 1);
  times[0] = 0.0;
  clock.assign(static_cast<size_t>(pp_), 0.0);
  out.busy.assign(static_cast<size_t>(pp_), 0.0);
  out.end.assign(static_cast<size_t>(pp_), 0.0);
  double* const t = times.data();
  double* const clk = clock.data();
  double* const busy = out.busy.data();
  double* const last = out.end.data();
  const double* const d = duration.data();
  const double* const s = sends.data();
  const size_t n = passes_.size();
  for (size_t i = 0; i < n; ++i) {
    const Pass p = passes_[i];
    const double ready = std::max(clk[p.device], t[p.input]);
    const double end = ready + d[p.slot];
    const double free_at = end + s[p.slot];
    busy[p.device] += free_at - ready;
    last[p.device] = end;
    clk[p.device] = free_at;
    t[i + 1] = free_at;
  }
  // Passes end in order on each device (durations are non-negative): the last pass of each
  // ends latest on it.
  out.makespan = 0;
  for (double e : out.end) out.makespan = std::max(out.makespan, e);
  return t;
}

const PipelineProgram& PipelineProgram::of(int64_t pp, int64_t vpp, int64_t m) {
  // A sweep has a few hundred shapes; a block of points cycles through a few dozen (its
  // vpp x mbs x GPU counts). Kept: 32 programs, at most 2^22 passes (32 MiB) in all, the
  // least recently used replaced.
  constexpr size_t kPassBudget = size_t{1} << 22;
  auto& [kept, tick] = EvalContext::current().get<KeptPrograms>();
  ++tick;
  KeptProgram* oldest = &kept[0];
  size_t passes = 0;
  for (KeptProgram& e : kept) {
    if (!e.program) {
      oldest = e.used <= oldest->used ? &e : oldest;
      continue;
    }
    if (e.program->is(pp, vpp, m)) {
      e.used = tick;
      return *e.program;
    }
    passes += e.program->passes_.size();
    if (e.used < oldest->used) oldest = &e;
  }
  auto program = std::make_unique<PipelineProgram>(pp, vpp, m);
  if (oldest->program) passes -= oldest->program->passes_.size();
  oldest->program.reset();
  // Over the budget: drop the least recently used others too.
  while (passes + program->passes_.size() > kPassBudget) {
    KeptProgram* drop = nullptr;
    for (KeptProgram& e : kept)
      if (e.program && (!drop || e.used < drop->used)) drop = &e;
    if (!drop) break;
    passes -= drop->program->passes_.size();
    drop->program.reset();
    drop->used = 0;
  }
  oldest->program = std::move(program);
  oldest->used = tick;
  return *oldest->program;
}

}  // namespace rapid
