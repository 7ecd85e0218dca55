// Two transfers on the same links at once, max-min fair (Bertsekas & Gallager 1992,
// "Data Networks", sec. 6.5.2): the closed form of what the DES's flow network does when
// a pipeline transfer or a TP collective meets a data-parallel collective (docs/model.md
// section 7, "Streams that share links").
#pragma once

#include "rapid/cost/collective_cost.hpp"

namespace rapid {

/// Seconds a foreground transfer needing `fg_s` alone (its `fg_flows` flows on the link)
/// takes when a background one needing `bg_s` alone (`bg_flows` flows) starts on the same
/// link at the same instant. Each flow gets an equal share while both run: the foreground
/// moves at fg_flows / (fg_flows + bg_flows) of the link until one of them ends, so it takes
/// min(fg_s (1 + bg_flows / fg_flows), fg_s + bg_s): twice as long beside an equal,
/// longer transfer, fg_s + bg_s beside a shorter one.
double shared_link_time(double fg_s, double fg_flows, double bg_s, double bg_flows);

/// `p`'s tier on NVLink (`network` false) or on the NICs (true), or nullptr: a plan has at
/// most one of each kind (CollectiveCost::plan).
const CollectiveTier* tier_of(const CollectivePlan& p, bool network);
/// That tier's seconds, 0 without one.
double tier_time(const CollectivePlan& p, bool network);

/// `fg`'s time (latency and its slowest tier) when `bg` starts beside it: each tier of fg
/// shares the links of bg's tier of the same kind (NVLink or the NICs); tiers bg does not
/// use run alone.
double plan_time_beside(const CollectivePlan& fg, const CollectivePlan& bg);

/// How much of `p`'s time one more flow on every link of its NVLink tier (`network` false)
/// or NIC tier (true) adds, when that tier is its slowest (0 when the other kind sets its
/// pace or it has no such tier): the tier's share of the time over its own flows per link
/// (max-min fair: with f flows of its own and k others, each of its flows gets f / (f + k)
/// of what it had, the tier takes (f + k) / f as long).
double tier_share(const CollectivePlan& p, bool network);

}  // namespace rapid
