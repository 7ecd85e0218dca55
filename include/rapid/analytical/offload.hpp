// Activation offload to host memory (Megatron-Core cpu_offloading, transformer_block.py:
// cpu_offloading_num_layers; issue 8 part 5): the first `offload_layers` layers of a stage
// copy their saved activations to pinned host memory over PCIe (device to host) while the
// forward runs on, and copy them back (host to device) ahead of their backward. Copies run
// on their own stream beside the compute; what the pass cannot hide is exposed. Both
// evaluators charge it with these rules (docs/model.md "Activation offload").
#pragma once

#include "rapid/spec/hardware_spec.hpp"
#include "rapid/spec/model_spec.hpp"
#include "rapid/spec/parallel_config.hpp"
#include "rapid/spec/training_spec.hpp"
#include "rapid/workload/workload.hpp"

namespace rapid {

struct OffloadTime {
  double copy_s = 0;       ///< one direction's copies of one micro-batch
  double fwd_exposed = 0;  ///< per micro-batch: beyond the forward that hides them
  double bwd_exposed = 0;  ///< per micro-batch: beyond the backward
};

/// Stage `st` of layout `par` whose forward and backward of one micro-batch take `fwd_s`
/// and `bwd_s`: k = min(offload_layers, layers - 1) layers' activations (as kept without
/// recompute, memory_model.hpp) cross PCIe at the GPU's per-direction bandwidth once each
/// way. The copy of layer i starts when its forward ends and the reload of layer i must
/// land before its backward: all but the first layer's forward (the last's backward) can
/// hide them, so exposed = max(0, copies - pass x (L - 1) / L).
/// Of `copy_s` seconds of copies beside a pass of `pass_s` over `layers` layers, what the
/// pass does not hide: max(0, copy - pass (L - 1) / L).
double offload_exposed(double copy_s, double pass_s, double layers);

OffloadTime offload_time(const ModelSpec& model, const TrainingSpec& training,
                         const HardwareSpec& hw, const ParallelConfig& par, const StageInfo& st,
                         double fwd_s, double bwd_s);

}  // namespace rapid
