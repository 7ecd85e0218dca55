#include "rapid/des/timeline.hpp"

#include <nlohmann/json.hpp>

namespace rapid::des {

void Timeline::write_chrome_trace(std::ostream& out) const {
  static const char* tracks[] = {"compute", "tp/cp comm", "pp p2p", "dp comm"};
  out << "{\"displayTimeUnit\":\"ms\",\"traceEvents\":[\n";
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
            {"args", {{"name", tracks[t]}}}});
  }
  for (const Slice& s : slices_) {
    nlohmann::json e = {{"ph", "X"},
                        {"name", s.name},
                        {"cat", tracks[s.track]},
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
  for (const Counter& c : counters_)  // Trace Event Format counter ("C") events
    emit({{"ph", "C"},
          {"name", c.name},
          {"pid", c.inst},
          {"ts", c.t_s * 1e6},
          {"args", {{c.name, c.value}}}});
  out << "\n]}\n";
}

}  // namespace rapid::des
