// Link faults (docs/faults.md): a degraded link (bandwidth health factor), a hard failure
// (routes recomputed around it), packet loss (goodput and retransmission timeouts), each
// with an optional start time and duration. Given in a network file (`faults:`) or in a
// job's `nonideal:` / `scenarios:` (`link_faults:`).
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

/// Retransmission protocol of lossy links: RoCE NICs and InfiniBand RC both retransmit
/// go-back-N from the first lost packet (docs/faults.md cites the defaults).
enum class Transport : uint8_t { RoCE, InfiniBand };

struct LinkFault {
  LinkSelector selector = LinkSelector::Nic;
  int64_t index = 0, index2 = 0;
  double health = 1.0;     ///< bandwidth factor in (0, 1]
  bool failed = false;     ///< hard failure: no flow may use the link
  double loss_rate = 0.0;  ///< packet loss probability in [0, 1)
  Transport transport = Transport::RoCE;
  double start_s = 0.0;  ///< from the start of the step
  double duration_s = std::numeric_limits<double>::infinity();
};

/// Reads a list of faults (`node` a sequence of mappings) found at `path` of `file`.
/// Throws InputError naming file, key, value and expectation.
std::vector<LinkFault> parse_link_faults(const YAML::Node& node, const std::string& file,
                                         const std::string& path);

}  // namespace rapid
