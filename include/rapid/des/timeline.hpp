// A record of what a simulation did, written as a Chrome trace (the JSON "Trace Event
// Format" that chrome://tracing and Perfetto load; docs/des.md "Timeline"): one process per
// simulated GPU (a stage instance: its TP/CP ranks run in lock step), one track per stream
// (compute, TP/CP communication, pipeline p2p, DP communication), ops and flows as complete
// ("X") events in microseconds, with bytes, flows and micro-batch as arguments; flow events
// ("s"/"f") from each pipeline send to the receiver's next compute op and from each DP
// collective to the compute op that waited for it; counter ("C") tracks per GPU of the HBM
// bandwidth its compute ops draw and of the utilisation of the busiest NVLink and network
// (NIC, switch) link its communication crosses
// (each op's average over its span, summed where ops overlap), plus the thermal model's;
// provenance in "otherData".
#pragma once

#include <cstdint>
#include <ostream>
#include <string>
#include <utility>
#include <vector>

#include "rapid/des/event_queue.hpp"

namespace rapid::des {

class Timeline {
 public:
  enum Track : uint8_t { kCompute = 0, kTpComm = 1, kPpComm = 2, kDpComm = 3 };

  struct Slice {
    int32_t inst = 0;
    Track track = kCompute;
    const char* name = "";  ///< static string (op names of the workload)
    SimTime start = 0, end = 0;
    double bytes = 0;   ///< per flow (communication)
    int32_t flows = 0;  ///< member flows (communication)
    int32_t mb = -1;    ///< micro-batch (-1: none)
    bool backward = false;
    double hbm_bytes = 0;  ///< compute: the op's HBM traffic (its bandwidth counter)
    /// Communication: seconds of its busiest NVLink and network link's capacity it used
    /// (bytes on that link / its capacity): over the span, the links' utilisation.
    double nvlink_busy_s = 0, network_busy_s = 0;
  };

  /// A dependency drawn as a flow arrow: from the slice of `from_inst`'s track `from_track`
  /// around `from_t` to the next slice of `to_inst`'s `to_track` from `to_t` on.
  struct Flow {
    int32_t from_inst = 0;
    Track from_track = kCompute;
    SimTime from_t = 0;
    int32_t to_inst = 0;
    Track to_track = kCompute;
    SimTime to_t = 0;
    const char* name = "";  ///< static string
  };

  /// A sample of a counter track of instance `inst` (temperature, power, clock: the
  /// thermal model's, docs/nonideal.md sec 7), at `t_s` seconds.
  struct Counter {
    int32_t inst = 0;
    const char* name = "";  ///< static string
    double t_s = 0, value = 0;
  };

  void clear() {
    slices_.clear();
    names_.clear();
    counters_.clear();
    flows_.clear();
  }
  void add_flow(const Flow& f) { flows_.push_back(f); }
  const std::vector<Flow>& flows() const { return flows_; }
  /// A provenance entry ("producer", "job", "layout", ...) written in "otherData".
  void set_metadata(std::string key, std::string value) {
    metadata_.emplace_back(std::move(key), std::move(value));
  }
  void add_counter(const Counter& c) { counters_.push_back(c); }
  const std::vector<Counter>& counters() const { return counters_; }
  /// Names the processes: names[i] for stage instance i.
  void set_instance_names(std::vector<std::string> names) { names_ = std::move(names); }
  /// Renames process `pid` (an instance's name set by the simulator).
  void rename_process(int32_t pid, std::string name) {
    if (pid >= 0 && static_cast<size_t>(pid) < names_.size())
      names_[static_cast<size_t>(pid)] = std::move(name);
  }
  /// A further process (counter tracks of GPUs no instance stands for); returns its id.
  int32_t add_process(std::string name) {
    names_.push_back(std::move(name));
    return static_cast<int32_t>(names_.size()) - 1;
  }
  void add(const Slice& s) { slices_.push_back(s); }
  const std::vector<Slice>& slices() const { return slices_; }

  /// Writes the Chrome trace JSON (object form with "traceEvents"). Throws nothing; the
  /// caller checks the stream.
  void write_chrome_trace(std::ostream& out) const;
  /// Writes it to `path`, gzip-compressed when the name ends in ".gz"; a failure is an
  /// InputError naming `option` and the path.
  void write_file(const std::string& path, const std::string& option) const;

 private:
  std::vector<Slice> slices_;
  std::vector<std::string> names_;
  std::vector<Counter> counters_;
  std::vector<Flow> flows_;
  std::vector<std::pair<std::string, std::string>> metadata_;
};

}  // namespace rapid::des
