// Link faults (docs/faults.md): a degraded link (bandwidth health factor), a hard failure
// (routes recomputed around it), packet loss (goodput and retransmission timeouts), each
// with an optional start time and duration. Given in a network file (`faults:`) or in a
// job's `nonideal:` / `scenarios:` (`link_faults:`). YAML, a list of mappings:
//   - {link: nic, gpu: 17, health: 0.5}
//   - {link: leaf_spine, leaf: 0, spine: 3, failed: true}
//   - {link: most_loaded, health: 0.25}
//   - {link: nic_up, gpu: 3, loss_rate: 1e-4, transport: roce, start: 2s, duration: 500ms}
#pragma once

#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include <yaml-cpp/yaml.h>

namespace rapid {

/// Which links a fault applies to (Fabric's link names and tiers).
enum class LinkSelector : uint8_t {
  NicUp,      ///< GPU `index`'s NIC -> its leaf
  NicDown,    ///< leaf -> GPU `index`'s NIC
  Nic,        ///< both directions of GPU `index`'s NIC link
  LeafSpine,  ///< leaf `index` <-> spine `index2`, both directions
  Nvlink,     ///< GPU `index`'s NVLink port, both directions
  MostLoaded  ///< the link the fault-free simulation loads most (resolved per point)
};
/// YAML names of the selectors, indexed by value.
inline constexpr const char* kLinkSelectorNames[] = {"nic_up",     "nic_down", "nic",
                                                     "leaf_spine", "nvlink",   "most_loaded"};

/// Retransmission protocol of lossy links: RoCE NICs and InfiniBand RC both retransmit
/// go-back-N from the first lost packet (docs/faults.md cites the defaults).
enum class Transport : uint8_t { RoCE, InfiniBand };
inline constexpr const char* kTransportNames[] = {"roce", "infiniband"};

/// Most faults one point may carry (the simulator keeps a link's faults as a 64-bit set).
inline constexpr size_t kMaxLinkFaults = 64;

struct LinkFault {
  LinkSelector selector = LinkSelector::Nic;
  int64_t index = 0, index2 = 0;
  double health = 1.0;     ///< bandwidth factor in (0, 1]
  bool failed = false;     ///< hard failure: no flow may use the link (the whole step)
  double loss_rate = 0.0;  ///< packet loss probability in [0, 1)
  Transport transport = Transport::RoCE;
  double start_s = 0.0;  ///< from the start of the step
  double duration_s = std::numeric_limits<double>::infinity();

  /// In effect for the whole step (start 0, no end).
  bool permanent() const {
    return start_s <= 0.0 && duration_s == std::numeric_limits<double>::infinity();
  }
  /// In effect at `t_s` seconds into the step: t in [start, start + duration).
  bool active_at(double t_s) const { return t_s >= start_s && t_s - start_s < duration_s; }
  bool operator==(const LinkFault&) const = default;
};

/// Reads a list of faults (`node` a sequence of mappings) found at `path` of `file`.
/// Throws InputError naming file, key (`path[i].key`), value and expectation.
std::vector<LinkFault> parse_link_faults(const YAML::Node& node, const std::string& file,
                                         const std::string& path);

/// "nic of gpu 17: health 0.5", "leaf 0 <-> spine 3: failed", "most loaded link: loss 0.0001
/// (roce) from 2 s for 0.5 s".
std::string describe_link_fault(const LinkFault& f);

}  // namespace rapid
