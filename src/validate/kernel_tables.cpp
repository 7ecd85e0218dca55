// Kernel tables of the one validation loop: GEMM throughput, NCCL bus bandwidth and
// attention kernel throughput, each row predicted by the cost model alone.
#include <fmt/format.h>

#include "rapid/common/error.hpp"
#include "rapid/cost/attention_model.hpp"
#include "rapid/cost/collective_cost.hpp"
#include "rapid/cost/gemm_model.hpp"
#include "table_runner.hpp"

namespace rapid {

namespace {

DType parse_dtype(const std::string& text, const RowValues& v) {
  if (const auto d = dtype_from_name(text)) return *d;
  throw InputError(v.where(), "dtype", text, "fp32, tf32, fp16, bf16 or fp8");
}

AttentionImpl parse_impl(const std::string& text, const RowValues& v) {
  for (int i = 1; i < kNumAttentionImpls; ++i)
    if (text == kAttentionImplNames[i]) return static_cast<AttentionImpl>(i);
  throw InputError(v.where(), "impl", text, "fa2, fa3 or cudnn");
}

}  // namespace

std::vector<ValidationTable> run_kernel_table(const TableSpec& spec, const ReferenceContext& ctx) {
  const CsvTable t(spec.csv);
  RowValues v(spec, t, nullptr);
  auto text = [&](const ValueRef& r, const char* key) {
    const auto x = v.get(r);
    if (!x) throw InputError(spec.path, key, "<not given>", "a value for every row");
    return *x;
  };
  auto shape = [&](const char* key) {
    auto it = spec.shape.find(key);
    if (it == spec.shape.end())
      throw InputError(spec.path, std::string("shape.") + key, "<missing>", "this field");
    return text(it->second, key);
  };
  std::vector<ValidationTable> out;
  for (const Measure& m : spec.measures) out.push_back(measure_table(spec, m));
  for (size_t i = 0; i < t.rows(); ++i) {
    v.select(i);
    const HardwareSpec hw = load_hardware(ctx, text(spec.hardware, "hardware"), spec.path);
    const DType dtype =
        spec.dtype.given() ? parse_dtype(text(spec.dtype, "dtype"), v) : DType::BF16;
    for (size_t k = 0; k < spec.measures.size(); ++k) {
      const Measure& m = spec.measures[k];
      double predicted = 0;
      std::string label = v.label();
      if (m.quantity == "gemm_tflops") {
        const int64_t gm = v.integer("m", shape("m")), gn = v.integer("n", shape("n"));
        const int64_t gk = v.integer("k", shape("k"));
        const GemmModel g(hw, dtype);
        const GemmTiming timing = g.time(gm, gn, gk);
        predicted = 2.0 * static_cast<double>(gm) * static_cast<double>(gn) *
                    static_cast<double>(gk) / timing.time_s / 1e12;
        label += fmt::format(" (tile {}x{}, split-K {}, {} waves)", timing.tile_m, timing.tile_n,
                             timing.split_k, timing.waves);
      } else if (m.quantity == "all_reduce_busbw_gbps" || m.quantity == "all_reduce_time_us") {
        const CollectiveCost c(hw, load_network(ctx, text(spec.network, "network"), spec.path));
        const double bytes = v.number("bytes", shape("bytes"));
        const int64_t per_node = v.integer("gpus_per_node", shape("gpus_per_node"));
        const int64_t nodes = v.integer("nodes", shape("nodes"));
        const GroupShape g{per_node * nodes, per_node, nodes};
        const CollectiveEstimate e = c.estimate(CollectiveKind::AllReduce, bytes, g);
        predicted = m.quantity == "all_reduce_time_us"
                        ? e.time_s * 1e6
                        : c.busbw_Bps(CollectiveKind::AllReduce, bytes, g) / 1e9;
        label += fmt::format(" ({}/{})", algorithm_name(e.algorithm), protocol_name(e.protocol));
      } else if (m.quantity == "attention_tflops") {
        // The FlashAttention benchmarks' FLOPs: 4 B S^2 H D forward, halved when causal,
        // 2.5x for the backward (hopper/benchmark_flash_attention.py).
        const AttentionImpl impl = parse_impl(shape("impl"), v);
        const bool bwd = shape("direction") == "backward";
        AttentionShape a;
        a.head_dim = v.integer("head_dim", shape("head_dim"));
        a.seq_q = a.seq_kv = v.integer("seq", shape("seq"));
        a.batch_heads = v.integer("batch", shape("batch")) * v.integer("heads", shape("heads"));
        a.causal = v.boolean("causal", shape("causal"));
        const AttentionModel model(hw, dtype, impl);
        const AttentionTiming at = bwd ? model.backward(a) : model.forward(a);
        predicted = a.useful_flops(bwd) / at.time_s / 1e12;
        label += fmt::format(" (tile {}x{})", at.block_q, at.block_kv);
      } else {
        throw InputError(
            spec.path, "quantity", m.quantity,
            "gemm_tflops, all_reduce_busbw_gbps, all_reduce_time_us or attention_tflops");
      }
      out[k].rows.push_back({label, predicted, t.number(i, m.column), i});
    }
  }
  return out;
}

}  // namespace rapid
