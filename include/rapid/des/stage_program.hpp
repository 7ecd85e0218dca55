// What one pipeline stage does in a training step, independent of timing (docs/des.md
// "Stage program"): the order of its forward and backward passes (Megatron-LM's 1F1B and
// interleaved 1F1B schedules, Narayanan et al. 2021, sec. 2.2 and 2.3), the owners of
// parameters each pass runs through (embedding, layers, LM head per model chunk), and the
// data-parallel traffic of the step as an ordered list of collectives on the stage's DP
// stream with the points of the passes where each is posted or waited for (gradient
// buckets reduced during backward, ZeRO parameter gathers prefetched; Li et al. 2020,
// PyTorch DDP; Rajbhandari et al. 2020, ZeRO; Megatron-core's distributed optimizer).
#pragma once

#include <array>
#include <cstdint>
#include <vector>

#include "rapid/spec/model_spec.hpp"
#include "rapid/spec/training_spec.hpp"
#include "rapid/workload/schedule.hpp"
#include "rapid/workload/workload.hpp"

namespace rapid::des {

using rapid::PassDir;
using rapid::PassRef;
using rapid::pipeline_schedule;

/// The templates a pass runs: a dense or MoE layer, or a stage extra; forward or backward
/// (the backward template is the layer's recompute followed by its backward; the *Plain
/// kinds are the backward of a layer that block recompute leaves stored).
enum class TemplateKind : uint8_t {
  DenseF,
  DenseB,
  MoeF,
  MoeB,
  EmbF,
  EmbB,
  HeadF,
  HeadB,
  DenseBPlain,
  MoeBPlain
};
inline constexpr int kNumTemplateKinds = 10;

/// A holder of parameters that a pass runs through: one layer or one stage extra.
struct Owner {
  TemplateKind fwd = TemplateKind::DenseF, bwd = TemplateKind::DenseB;
  double dense_params = 0;   ///< synced over data x context parallel (DPCP)
  double expert_params = 0;  ///< routed experts, synced over expert data parallel (EDP)
};

/// Consecutive owners of a pass running the same template: positions first_pos ..
/// first_pos + count - 1 of the pass, owners first_owner + k * owner_step.
struct Segment {
  TemplateKind tmpl = TemplateKind::DenseF;
  int32_t first_pos = 0, count = 0, first_owner = 0, owner_step = 1;
};

/// A collective of the DP stream (in stream order).
struct DpOpSpec {
  CollectiveKind kind = CollectiveKind::None;
  CommGroup group = CommGroup::DP;
  double bytes = 0;   ///< nccl-tests buffer size
  bool grad = false;  ///< a gradient reduction (false: a parameter gather)
};

/// At boundary `boundary` of a pass (before its owner at that position; the number of
/// owners = the pass's end): post DP op `dp_op` (ready at that time), or wait for it.
struct Hook {
  int32_t boundary = 0;
  bool gate = false;
  int32_t dp_op = 0;
};

struct StageProgram {
  std::vector<PassRef> passes;
  std::vector<Owner> owners;           ///< all chunks, chunk-major, forward order
  std::vector<int32_t> chunk_owners;   ///< vpp + 1 offsets into owners
  std::vector<Segment> segments;       ///< per (chunk, dir), see segment_range
  std::vector<int32_t> segment_begin;  ///< 2 * vpp + 1 offsets
  std::vector<DpOpSpec> dp_ops;        ///< the DP stream's collectives, in order
  std::vector<Hook> hooks;             ///< sorted by (pass, boundary, post before gate)
  std::vector<int32_t> hook_begin;     ///< passes + 1 offsets
  int32_t start_posts = 0;             ///< DP ops [0, start_posts) posted at step start
  int32_t tail_gate = -1;              ///< DP op to wait for before the optimizer
  int32_t end_posts_begin = 0;         ///< DP ops [end_posts_begin, size) after it
  double optimizer_bytes = 0;          ///< HBM bytes of the optimizer step

  int32_t num_owners(int32_t chunk) const {
    return chunk_owners[static_cast<size_t>(chunk) + 1] - chunk_owners[static_cast<size_t>(chunk)];
  }
  std::pair<int32_t, int32_t> segment_range(int32_t chunk, PassDir dir) const {
    const size_t k = static_cast<size_t>(chunk) * 2 + (dir == PassDir::Backward ? 1 : 0);
    return {segment_begin[k], segment_begin[k + 1]};
  }
};

/// Builds stage `stage`'s program of workload `w` into `out` (reusing its memory).
/// Owners: the stage's layers (StageInfo first_layer .. + num_layers, MoE ones by
/// `model.moe`), split over the vpp chunks as evenly as possible (the first chunks take
/// the remainder), the embedding before chunk 0 of stage 0, the LM head after the last
/// chunk of the last stage. DP traffic mirrors the analytical evaluator's
/// (analytical/data_parallel.hpp; dense weights over DPCP, routed experts over EDP; ZeRO 0:
/// all-reduce of the gradients; >= 1: reduce-scatter, every micro-batch from ZeRO 2; ZeRO
/// 1/2 gather the parameters at step start when overlap_param_gather (each chunk's first
/// forward waits for its buckets) or after the optimizer otherwise; ZeRO 3 gathers before
/// every pass), in buckets of grad_bucket_size bytes formed in backward order and posted
/// when their last owner's backward ends (overlap_grad_reduce; otherwise one collective
/// per pass or step, waited for at once).
void build_stage_program(const Workload& w, const ModelSpec& model, const TrainingSpec& training,
                         int64_t stage, StageProgram& out);

}  // namespace rapid::des
