#include "dp_stream.hpp"

#include <algorithm>

namespace rapid::des {

void DpStream::add_op(int32_t d, int32_t l) {
  const auto k = static_cast<int32_t>(desc.size());
  desc.push_back(d);
  lane.push_back(l);
  lanes[static_cast<size_t>(l)].ops.push_back(k);
  posts.push_back(0);
  done.push_back(kNever);
}

void DpStream::finish(int32_t k, SimTime start, SimTime now) {
  done[static_cast<size_t>(k)] = now;
  const auto l = static_cast<size_t>(lane[static_cast<size_t>(k)]);
  lanes[l].busy = false;
  ++lanes[l].next;
  span_start.push_back(start);
  span_end.push_back(now);
  since[l] = kNever;
  busy_ps += now - start;
}

SimTime DpStream::cover(SimTime a, SimTime b, SimTime now,
                        std::vector<std::pair<SimTime, SimTime>>& spans) const {
  if (b <= a) return 0;
  spans.clear();
  // Finished ops end in order: the ones ending after a are at the back.
  for (size_t i = span_end.size(); i-- > 0 && span_end[i] > a;)
    if (span_start[i] < b) spans.emplace_back(std::max(a, span_start[i]), std::min(b, span_end[i]));
  for (SimTime s : since)
    if (s != kNever && s < b) spans.emplace_back(std::max(a, s), std::min(b, now));
  std::sort(spans.begin(), spans.end());
  SimTime covered = 0, reach = a;
  for (const auto& [x, y] : spans) {
    if (y <= reach) continue;
    covered += y - std::max(x, reach);
    reach = y;
  }
  return covered;
}

}  // namespace rapid::des
