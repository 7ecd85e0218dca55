// The pipeline schedule both evaluators run (Megatron-LM schedules.py; Narayanan et al.
// 2021, sec. 2.2 and 2.3): the order of a stage's forward and backward passes under 1F1B
// and interleaved 1F1B.
#pragma once

#include <cstdint>
#include <vector>

namespace rapid {

enum class PassDir : uint8_t { Forward, Backward };

/// One pass of one micro-batch through one model chunk of the stage.
struct PassRef {
  PassDir dir = PassDir::Forward;
  int32_t chunk = 0;
  int32_t mb = 0;
};

/// Megatron-LM's order of passes on `stage` of `pp` with `vpp` model chunks and `m`
/// micro-batches: warm-up forwards, then one forward one backward, then the remaining
/// backwards. vpp == 1: warm-up min(pp - stage - 1, m); vpp > 1: warm-up
/// min((pp - stage - 1) * 2 + (vpp - 1) * pp, m * vpp), the k-th forward running chunk
/// (k mod (pp vpp)) / pp of micro-batch (k / (pp vpp)) pp + k mod pp, backwards the chunks
/// in reverse. Replaces `out`.
void pipeline_schedule(int64_t pp, int64_t vpp, int64_t m, int64_t stage,
                       std::vector<PassRef>& out);

/// The warm-up forwards of `stage` in that order (before its first backward but one).
int64_t warmup_forwards(int64_t pp, int64_t vpp, int64_t m, int64_t stage);

}  // namespace rapid
