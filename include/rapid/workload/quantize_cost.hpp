// The HBM traffic of Transformer Engine's quantization ("cast") kernels around one
// low-precision GEMM operand, per element, under each scaling recipe (Fp8Scaling;
// docs/model.md sec 12 derives every term). A cast reads the 16-bit tensor and writes
// the two copies the three GEMMs of a linear layer use (row-wise for fprop/dgrad,
// column-wise, i.e. transposed, for wgrad), each with its block scales.
#pragma once

#include "rapid/spec/framework_spec.hpp"

namespace rapid {

/// What the operand is: activations and output gradients are scaled in 1-D blocks along
/// each copy's rows; weights in 2-D blocks under rowwise (128x128) and nvfp4 (16x16).
enum class QuantOperand : uint8_t { Activation, Weight, Gradient };

/// Bytes moved per element of the operand by its cast kernel(s), reading `in_bytes` per
/// element (2 for bf16): the passes that read it (a current-scaling recipe reads it once
/// more for its per-tensor amax), the two quantized copies and their scales.
double quantize_bytes_per_element(Fp8Scaling recipe, QuantOperand operand, double in_bytes);

/// Whether the recipe's cast can be written by the norm before the linear (TE
/// LayerNormLinear): only when no per-tensor amax of the current tensor must be known
/// before the first element is cast (not tensorwise, not nvfp4).
bool cast_fuses_into_norm(Fp8Scaling recipe);

}  // namespace rapid
