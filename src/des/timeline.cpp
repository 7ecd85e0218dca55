#include "rapid/des/timeline.hpp"

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

#include "rapid/common/output_sink.hpp"

namespace rapid::des {

namespace {

constexpr const char* kTracks[] = {"compute", "tp/cp comm", "pp p2p", "dp comm"};

/// Counter tracks derived from the slices (Trace Event Format "C" events).
enum Derived : uint8_t { kHbm = 0, kNvlink = 1, kNetwork = 2 };
constexpr const char* kDerivedNames[] = {"HBM bandwidth (GB/s)",
                                         "NVLink utilisation, busiest link (%)",
                                         "network link utilisation, busiest link (%)"};

/// A derived counter's change: +v where a slice starts, -v where it ends.
struct Step {
  int32_t inst;
  uint8_t counter;
  SimTime t;
  double dv;
};

/// Each slice's average rate over its span, summed where slices overlap: compute ops' HBM
/// bytes / span, communication ops' busiest-link busy time / span.
std::vector<Step> derived_steps(const std::vector<Timeline::Slice>& slices) {
  std::vector<Step> steps;
  for (const Timeline::Slice& s : slices) {
    if (s.end <= s.start) continue;
    const double span_s = static_cast<double>(s.end - s.start) * 1e-12;
    auto add = [&](uint8_t counter, double v) {
      if (!(v > 0)) return;
      steps.push_back({s.inst, counter, s.start, v});
      steps.push_back({s.inst, counter, s.end, -v});
    };
    add(kHbm, s.hbm_bytes / span_s / 1e9);
    add(kNvlink, 100.0 * s.nvlink_busy_s / span_s);
    add(kNetwork, 100.0 * s.network_busy_s / span_s);
  }
  std::sort(steps.begin(), steps.end(), [](const Step& a, const Step& b) {
    return std::tie(a.inst, a.counter, a.t) < std::tie(b.inst, b.counter, b.t);
  });
  return steps;
}

}  // namespace

void Timeline::write_chrome_trace(std::ostream& out) const {
  nlohmann::json other = nlohmann::json::object();
  for (const auto& [k, v] : metadata_) other[k] = v;
  out << "{\"displayTimeUnit\":\"ms\",\"otherData\":" << other.dump() << ",\"traceEvents\":[\n";
  bool first = true;
  auto emit = [&](const nlohmann::json& e) {
    out << (first ? "" : ",\n") << e.dump();
    first = false;
  };
  for (size_t i = 0; i < names_.size(); ++i) {
    emit({{"ph", "M"}, {"name", "process_name"}, {"pid", i}, {"args", {{"name", names_[i]}}}});
    emit({{"ph", "M"}, {"name", "process_sort_index"}, {"pid", i}, {"args", {{"sort_index", i}}}});
    for (int t = 0; t < 4; ++t)
      emit({{"ph", "M"},
            {"name", "thread_name"},
            {"pid", i},
            {"tid", t},
            {"args", {{"name", kTracks[t]}}}});
  }
  for (const Slice& s : slices_) {
    nlohmann::json e = {{"ph", "X"},
                        {"name", s.name},
                        {"cat", kTracks[s.track]},
                        {"pid", s.inst},
                        {"tid", static_cast<int>(s.track)},
                        {"ts", static_cast<double>(s.start) * 1e-6},
                        {"dur", static_cast<double>(s.end - s.start) * 1e-6}};
    nlohmann::json args = nlohmann::json::object();
    if (s.mb >= 0) {
      args["micro_batch"] = s.mb;
      args["pass"] = s.backward ? "backward" : "forward";
    }
    if (s.flows > 0) {
      args["bytes_per_flow"] = s.bytes;
      args["flows"] = s.flows;
    }
    if (!args.empty()) e["args"] = args;
    emit(e);
  }
  // Flow events: "s" binds to the slice enclosing its time on its track, "f" (no binding
  // point given) to the next slice that starts on its track (Trace Event Format, "Flow
  // events").
  for (size_t k = 0; k < flows_.size(); ++k) {
    const Flow& f = flows_[k];
    emit({{"ph", "s"},
          {"id", k},
          {"name", f.name},
          {"cat", "dependency"},
          {"pid", f.from_inst},
          {"tid", static_cast<int>(f.from_track)},
          {"ts", static_cast<double>(f.from_t) * 1e-6}});
    emit({{"ph", "f"},
          {"id", k},
          {"name", f.name},
          {"cat", "dependency"},
          {"pid", f.to_inst},
          {"tid", static_cast<int>(f.to_track)},
          {"ts", static_cast<double>(f.to_t) * 1e-6}});
  }
  // HBM: the compute stream's ops' bandwidths summed (they follow each other). Links: the
  // most any op in flight takes of its busiest link (each op's average is at most 100%;
  // two ops' busiest links may differ, so their sum would not be a link's utilisation).
  const std::vector<Step> steps = derived_steps(slices_);
  for (size_t i = 0; i < steps.size();) {
    double level = 0;
    std::multiset<double> active;
    size_t j = i;
    for (; j < steps.size() && steps[j].inst == steps[i].inst &&
           steps[j].counter == steps[i].counter;) {
      const SimTime t = steps[j].t;
      for (; j < steps.size() && steps[j].inst == steps[i].inst &&
             steps[j].counter == steps[i].counter && steps[j].t == t;
           ++j) {
        level += steps[j].dv;
        if (steps[j].dv > 0)
          active.insert(steps[j].dv);
        else
          active.erase(active.find(-steps[j].dv));
      }
      if (std::abs(level) < 1e-9) level = 0;  // the sum's rounding where every op ended
      if (steps[i].counter != kHbm) level = active.empty() ? 0.0 : *active.rbegin();
      const char* name = kDerivedNames[steps[i].counter];
      emit({{"ph", "C"},
            {"name", name},
            {"pid", steps[i].inst},
            {"ts", static_cast<double>(t) * 1e-6},
            {"args", {{name, level}}}});
    }
    i = j;
  }
  for (const Counter& c : counters_)  // the thermal model's counters
    emit({{"ph", "C"},
          {"name", c.name},
          {"pid", c.inst},
          {"ts", c.t_s * 1e6},
          {"args", {{c.name, c.value}}}});
  out << "\n]}\n";
}

void Timeline::write_file(const std::string& path, const std::string& option) const {
  std::ostringstream text;
  write_chrome_trace(text);
  OutputSink sink(path, path.ends_with(".gz"), option, path);
  sink.write(text.view());
  sink.close();
}

}  // namespace rapid::des
