// Cast traffic per recipe (docs/model.md sec 12). Sources, Transformer Engine 2.x:
// transformer_engine/common/recipe/__init__.py (the recipes), docs/features/
// low_precision_training/{fp8_current_scaling, fp8_blockwise_scaling, mxfp8, nvfp4}.
#include "rapid/workload/quantize_cost.hpp"

namespace rapid {

namespace {

/// Bytes of one quantized element: E4M3/E5M2 one byte, E2M1 half of one (two per byte).
double payload_bytes(Fp8Scaling recipe) {
  return recipe == Fp8Scaling::Nvfp4 ? 0.5 : 1.0;
}

/// Scale bytes per element of one copy: the scale's size over its block's elements.
double scale_bytes(Fp8Scaling recipe, QuantOperand operand) {
  const bool weight = operand == QuantOperand::Weight;
  switch (recipe) {
    case Fp8Scaling::Delayed:
    case Fp8Scaling::Tensorwise:
      return 0.0;  // one FP32 scale for the whole tensor
    case Fp8Scaling::Rowwise:
      // Float8BlockScaling: FP32 scales per 1x128 block (activations, gradients) and per
      // 128x128 block (weights).
      return weight ? 4.0 / (128.0 * 128.0) : 4.0 / 128.0;
    case Fp8Scaling::Mxfp8:
      return 1.0 / 32.0;  // one E8M0 byte per 32 consecutive elements, weights too
    case Fp8Scaling::Nvfp4:
      // One E4M3 byte per 16 elements; weights in 16x16 blocks (NVFP4BlockScaling
      // fp4_quant_fwd_weight: 2D quantization).
      return weight ? 1.0 / 256.0 : 1.0 / 16.0;
  }
  return 0.0;
}

/// Passes reading the 16-bit input: current per-tensor scaling (tensorwise, and nvfp4's
/// FP32 second-level scale) needs the tensor's amax before its first element is cast.
/// NVFP4's random Hadamard transform of the wgrad copy is computed in the same two passes
/// (TE fuses the RHT with the amax and with the cast), and its stochastic rounding of
/// gradients is arithmetic in the cast: neither adds traffic.
double input_reads(Fp8Scaling recipe) {
  return recipe == Fp8Scaling::Tensorwise || recipe == Fp8Scaling::Nvfp4 ? 2.0 : 1.0;
}

}  // namespace

double quantize_bytes_per_element(Fp8Scaling recipe, QuantOperand operand, double in_bytes) {
  // Two copies (row-wise and column-wise), each its payload and its scales.
  return input_reads(recipe) * in_bytes +
         2.0 * (payload_bytes(recipe) + scale_bytes(recipe, operand));
}

bool cast_fuses_into_norm(Fp8Scaling recipe) {
  return recipe != Fp8Scaling::Tensorwise && recipe != Fp8Scaling::Nvfp4;
}

}  // namespace rapid
