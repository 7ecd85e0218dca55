#include "rapid/cost/link_sharing.hpp"

#include <algorithm>

namespace rapid {

double shared_link_time(double fg_s, double fg_flows, double bg_s, double bg_flows) {
  if (fg_s <= 0 || bg_s <= 0 || fg_flows <= 0 || bg_flows <= 0) return std::max(0.0, fg_s);
  return std::min(fg_s * (1.0 + bg_flows / fg_flows), fg_s + bg_s);
}

const CollectiveTier* tier_of(const CollectivePlan& p, bool network) {
  for (int i = 0; i < p.num_tiers; ++i)
    if (p.tiers[static_cast<size_t>(i)].network == network) return &p.tiers[static_cast<size_t>(i)];
  return nullptr;
}

double tier_time(const CollectivePlan& p, bool network) {
  const CollectiveTier* t = tier_of(p, network);
  return t ? t->time_s() : 0.0;
}

double plan_time_beside(const CollectivePlan& fg, const CollectivePlan& bg) {
  double slowest = 0;
  for (int i = 0; i < fg.num_tiers; ++i) {
    const CollectiveTier& t = fg.tiers[static_cast<size_t>(i)];
    const CollectiveTier* b = tier_of(bg, t.network);
    slowest = std::max(
        slowest, b ? shared_link_time(t.time_s(), t.flows_per_link, b->time_s(), b->flows_per_link)
                   : t.time_s());
  }
  return fg.latency_s + slowest;
}

double tier_share(const CollectivePlan& p, bool network) {
  const CollectiveTier* t = tier_of(p, network);
  const double kind = t ? t->time_s() : 0.0, total = p.time_s();
  if (kind <= 0 || kind < tier_time(p, !network) || total <= 0) return 0.0;
  return kind / total / std::max(1.0, t->flows_per_link);
}

}  // namespace rapid
