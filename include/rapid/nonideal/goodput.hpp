// Failures at job scale (docs/nonideal.md sec 6): job MTBF from per-component rates, the
// checkpoint's size and write time, the Young/Daly checkpoint interval and the expected
// goodput (useful fraction of wall time) of one point.
#pragma once

#include "rapid/eval/eval_result.hpp"
#include "rapid/spec/failure_spec.hpp"
#include "rapid/spec/model_spec.hpp"
#include "rapid/spec/training_spec.hpp"
#include "rapid/workload/workload.hpp"

namespace rapid {

/// Fills job_mtbf_s, checkpoint_bytes, checkpoint_write_s, checkpoint_interval_s, goodput
/// and goodput_tokens_per_s of an ok row `r` (its step_time_s and tokens_per_s set) of
/// workload `w` on nodes of `gpus_per_node` GPUs.
void fill_goodput(const FailureSpec& f, const ModelSpec& model, const TrainingSpec& training,
                  const Workload& w, int64_t gpus_per_node, EvalResult& r);

}  // namespace rapid
