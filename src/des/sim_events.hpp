// The simulator's event kinds (docs/des.md "Events"): what an Event's `kind` means and what
// its `target` and `data` name.
#pragma once

#include <cstdint>

namespace rapid::des {

enum EventKind : uint32_t {
  kResume = 0,  ///< target: an instance; resume its program
  kDrain = 1,   ///< target: a bundle of the flow network; data: its version
  kOpDone = 2,  ///< target: a running op (OpSlots); data: its version
  kDpPost = 3,  ///< target: a stage; a DP op of its stream is posted
};

}  // namespace rapid::des
