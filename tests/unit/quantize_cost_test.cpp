// Transformer Engine's scaling recipes (Fp8Scaling; docs/model.md sec 11.3): the bytes of
// the cast kernels around one GEMM operand, the layer graph's casts, the GEMM dtype of
// nvfp4 and the recipes a Hopper GPU cannot run. Every expectation derived by hand from the
// recipe's format: payload bytes per element, block scale bytes, passes over the input.
#include <gtest/gtest.h>

#include <string>

#include "rapid/cost/compute_cost.hpp"
#include "rapid/cost/gemm_model.hpp"
#include "rapid/eval/point_evaluator.hpp"
#include "rapid/workload/quantize_cost.hpp"
#include "rapid/workload/workload.hpp"
#include "test_support.hpp"

namespace rapid {
namespace {

constexpr QuantOperand kAct = QuantOperand::Activation;
constexpr QuantOperand kWeight = QuantOperand::Weight;
constexpr QuantOperand kGrad = QuantOperand::Gradient;

TEST(QuantizeCost, CastBytesPerElementOfEachRecipe) {
  // A bf16 operand (2 B read per pass); two quantized copies (row-wise for fprop/dgrad,
  // column-wise for wgrad), each its payload and its scales.
  // delayed: one read, 2 x 1 B of E4M3/E5M2, one FP32 scale per tensor: 2 + 2 = 4 B.
  EXPECT_DOUBLE_EQ(quantize_bytes_per_element(Fp8Scaling::Delayed, kAct, 2.0), 4.0);
  // tensorwise (current scaling): an amax pass reads it first: 2 x 2 + 2 = 6 B.
  EXPECT_DOUBLE_EQ(quantize_bytes_per_element(Fp8Scaling::Tensorwise, kGrad, 2.0), 6.0);
  // rowwise (Float8BlockScaling): an FP32 scale per 1 x 128 block in each copy:
  // 2 + 2 x (1 + 4/128) = 4.0625 B; weights per 128 x 128 block: 2 + 2 x (1 + 4/16384).
  EXPECT_DOUBLE_EQ(quantize_bytes_per_element(Fp8Scaling::Rowwise, kAct, 2.0), 4.0625);
  EXPECT_DOUBLE_EQ(quantize_bytes_per_element(Fp8Scaling::Rowwise, kWeight, 2.0),
                   2.0 + 2.0 * (1.0 + 4.0 / 16384.0));
  // mxfp8: E4M3 and one E8M0 byte per 32 elements in each copy, weights too:
  // 2 + 2 x (1 + 1/32) = 4.0625 B.
  EXPECT_DOUBLE_EQ(quantize_bytes_per_element(Fp8Scaling::Mxfp8, kAct, 2.0), 4.0625);
  EXPECT_DOUBLE_EQ(quantize_bytes_per_element(Fp8Scaling::Mxfp8, kWeight, 2.0), 4.0625);
  // nvfp4: the per-tensor FP32 scale needs the amax first (two reads: 4 B), E2M1 half a
  // byte and one E4M3 byte per 16 elements in each copy: 4 + 2 x (0.5 + 1/16) = 5.125 B;
  // weights in 16 x 16 blocks: 4 + 2 x (0.5 + 1/256) = 5.0078125 B.
  EXPECT_DOUBLE_EQ(quantize_bytes_per_element(Fp8Scaling::Nvfp4, kAct, 2.0), 5.125);
  EXPECT_DOUBLE_EQ(quantize_bytes_per_element(Fp8Scaling::Nvfp4, kWeight, 2.0), 5.0078125);
  // One GEMM input of 4096 x 8192 bf16 elements (33,554,432): delayed 134,217,728 B,
  // nvfp4 171,966,464 B.
  const double elems = 4096.0 * 8192.0;
  EXPECT_DOUBLE_EQ(elems * quantize_bytes_per_element(Fp8Scaling::Delayed, kAct, 2.0), 134217728.0);
  EXPECT_DOUBLE_EQ(elems * quantize_bytes_per_element(Fp8Scaling::Nvfp4, kAct, 2.0), 171966464.0);
}

TEST(QuantizeCost, OnlyRecipesWithoutACurrentAmaxFuseIntoTheNorm) {
  EXPECT_TRUE(cast_fuses_into_norm(Fp8Scaling::Delayed));
  EXPECT_TRUE(cast_fuses_into_norm(Fp8Scaling::Mxfp8));
  EXPECT_TRUE(cast_fuses_into_norm(Fp8Scaling::Rowwise));
  EXPECT_FALSE(cast_fuses_into_norm(Fp8Scaling::Tensorwise));
  EXPECT_FALSE(cast_fuses_into_norm(Fp8Scaling::Nvfp4));
  EXPECT_EQ(quantized_gemm_dtype(Fp8Scaling::Nvfp4), DType::FP4);
  EXPECT_EQ(quantized_gemm_dtype(Fp8Scaling::Mxfp8), DType::FP8);
}

SweepSpec fp8_job(const std::string& hardware, const std::string& network, Fp8Scaling recipe) {
  SweepSpec s =
      test::spec_with_stack("llama3-8b", hardware, network, 64, 4096, "megatron-core-0.8");
  s.training.dtype = DType::FP8;
  s.training.framework.fp8.recipe = recipe;
  return s;
}

/// The forward ops of one layer named `name`, in order.
std::vector<Op> named(const Workload& w, const std::string& name) {
  std::vector<Op> out;
  for (const Op& op : w.layer.forward)
    if (name == op.name) out.push_back(op);
  return out;
}

TEST(QuantizeCost, TheLayerGraphCastsEachLinearInputAsItsRecipeSays) {
  // Llama 3 8B, TP 1, micro-batch 1 of 4096 tokens: out_proj's input is 4096 x 4096 bf16
  // (16,777,216 elements). Megatron-Core's norms write the FP8 input of qkv_proj and mlp_up
  // themselves (LayerNormLinear) under delayed scaling: two input casts per layer (out_proj,
  // mlp_down). Under nvfp4 the norm cannot (the per-tensor amax comes first): four.
  ParallelConfig par;
  par.tp = par.pp = par.dp = par.mbs = 1;
  for (const auto& [recipe, casts, per_elem] : {std::tuple{Fp8Scaling::Delayed, size_t{2}, 4.0},
                                                std::tuple{Fp8Scaling::Nvfp4, size_t{4}, 5.125}}) {
    const SweepSpec s = fp8_job("b200-sxm-180gb", "dgx-b200-superpod", recipe);
    Workload w;
    build_workload(s.model, s.training, s.network, par, w);
    const std::vector<Op> in = named(w, "fp8_cast_transpose_input");
    ASSERT_EQ(in.size(), casts);
    // out_proj's cast: the first under delayed, the second under nvfp4 (after qkv_proj's).
    const Op& out_proj = in[recipe == Fp8Scaling::Delayed ? 0 : 1];
    EXPECT_DOUBLE_EQ(out_proj.bytes, 4096.0 * 4096.0 * per_elem);
  }
}

TEST(QuantizeCost, Nvfp4GemmsRunAtTheFp4PeakWhereTheGpuHasOne) {
  // A GEMM marked fp8 under nvfp4 is timed by the FP4 GEMM model on the B200 (9 PFLOP/s
  // dense), by the FP8 one on the H100 (no FP4 peak).
  Op op;
  op.kind = OpKind::Gemm;
  op.fp8 = true;
  op.m = op.n = op.k = 8192;
  const HardwareSpec b200 = test::shipped_hardware("b200-sxm-180gb");
  EXPECT_DOUBLE_EQ(ComputeCost(b200, DType::FP8, AttentionImpl::FA2, {}, DType::FP4).time(op),
                   GemmModel(b200, DType::FP4).time(8192, 8192, 8192).time_s);
  const HardwareSpec h100 = test::shipped_hardware("h100-sxm5-80gb");
  EXPECT_DOUBLE_EQ(ComputeCost(h100, DType::FP8, AttentionImpl::FA2, {}, DType::FP4).time(op),
                   GemmModel(h100, DType::FP8).time(8192, 8192, 8192).time_s);
}

TEST(QuantizeCost, BlockScaledRecipesAreInfeasibleBeforeBlackwell) {
  // MXFP8 needs sm_100's block-scaled MMAs: on the H100 (compute capability 9.0) the point
  // is legal but cannot run (status infeasible); on the B200 it runs. Delayed scaling runs
  // on both.
  const Point p = test::flat_point(8, 1, true, 1);
  for (const auto& [hw, net, recipe, status] :
       {std::tuple{"h100-sxm5-80gb", "dgx-h100-superpod", Fp8Scaling::Mxfp8, Status::Infeasible},
        std::tuple{"b200-sxm-180gb", "dgx-b200-superpod", Fp8Scaling::Mxfp8, Status::Ok},
        std::tuple{"h100-sxm5-80gb", "dgx-h100-superpod", Fp8Scaling::Delayed, Status::Ok}}) {
    const SweepSpec s = fp8_job(hw, net, recipe);
    Workload w;
    EvalResult r;
    PointEvaluator(s).evaluate(p, w, r);
    EXPECT_EQ(r.status, status) << hw << " " << kFp8ScalingNames[static_cast<int>(recipe)];
  }
}

}  // namespace
}  // namespace rapid
