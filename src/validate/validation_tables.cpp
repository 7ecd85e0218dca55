#include "validation_tables.hpp"

#include <fmt/format.h>
#include <cmath>

#include "collective_tables.hpp"
#include "csv_table.hpp"
#include "framework_tables.hpp"
#include "gemm_tables.hpp"
#include "rapid/common/error.hpp"
#include "rapid/memory/memory_model.hpp"
#include "rapid/workload/model_flops.hpp"

namespace rapid {

double ValidationRow::abs_pct_error() const {
  return std::abs(predicted - measured) / measured * 100.0;
}

double ValidationTable::mape() const {
  double sum = 0;
  for (const auto& r : rows) sum += r.abs_pct_error();
  return rows.empty() ? 0.0 : sum / static_cast<double>(rows.size());
}

namespace {

constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;

// Megatron-LM of 2021-22 on Selene: fp16 mixed precision, unfused softmax attention, fp32
// main gradients reduced in fp32, GPT dropout.
SweepSpec selene_spec(const ReferenceContext& ctx, ModelSpec model, int64_t gbs, bool dp_overlap) {
  SweepSpec spec = reference_spec(ctx, std::move(model), "a100-sxm4-80gb", "dgx-a100-superpod", gbs,
                                  DType::FP16, false);
  spec.training.grad_bytes = 4;
  spec.training.grad_reduce_bytes = 4;
  spec.training.overlap_grad_reduce = dp_overlap;
  spec.training.overlap_param_gather = false;
  return spec;
}

ParallelConfig layout(const CsvTable& t, size_t i, int64_t mbs, int64_t vpp) {
  ParallelConfig c;
  c.tp = static_cast<int32_t>(t.integer(i, "tp"));
  c.pp = static_cast<int32_t>(t.integer(i, "pp"));
  c.dp = static_cast<int32_t>(t.integer(i, "dp"));
  c.mbs = static_cast<int32_t>(mbs);
  c.vpp = static_cast<int32_t>(vpp);
  return c;
}

// Row of a settings file (configs/validation) whose `key` column equals `value`.
size_t settings_row(const CsvTable& s, const std::string& key, const std::string& value) {
  for (size_t i = 0; i < s.rows(); ++i)
    if (s.text(i, key) == value) return i;
  throw InputError(s.path(), key, value, "a row for every reference row");
}

CsvTable settings(const ReferenceContext& ctx, const std::string& file) {
  std::string path = find_named_config("validation", file, ctx.config_anchor);
  if (path.empty())
    throw InputError("configs/validation/" + file, "<file>", file, "the run settings file");
  return CsvTable(path);
}

}  // namespace

ValidationTable validate_sc21_table1(const ReferenceContext& ctx) {
  const std::string file = "megatron_sc21_table1_a100.csv";
  CsvTable t(reference_file(ctx, file));
  CsvTable s = settings(ctx, "sc21_table1_settings.csv");
  ValidationTable out{file, "model TFLOP/s per GPU", {}};
  for (size_t i = 0; i < t.rows(); ++i) {
    const size_t j = settings_row(s, "params_billion", t.text(i, "params_billion"));
    const int64_t layers = t.integer(i, "num_layers"), hidden = t.integer(i, "hidden_size");
    const int64_t seq = t.integer(i, "seq_len"), vocab = t.integer(i, "vocab_size");
    const int64_t gbs = t.integer(i, "gbs"), gpus = t.integer(i, "gpus");
    SweepSpec spec = selene_spec(ctx,
                                 gpt_model("gpt-" + t.text(i, "params_billion") + "b", layers,
                                           hidden, t.integer(i, "num_heads"), vocab, seq),
                                 gbs, s.integer(j, "ddp_overlap") != 0);
    ParallelConfig c = layout(t, i, s.integer(j, "mbs"), s.integer(j, "vpp"));
    c.recompute = Recompute::Full;
    EvalResult r = predict_layout(spec, c);
    // Narayanan et al. 2021 eq. 3 counts the recomputed forward pass.
    const double tflops = megatron_sc21_flops(gbs, seq, layers, hidden, vocab) /
                          (r.step_time_s * static_cast<double>(gpus)) / 1e12;
    out.rows.push_back({fmt::format("{}B tp{} pp{} dp{} mbs{} vpp{}", t.text(i, "params_billion"),
                                    c.tp, c.pp, c.dp, c.mbs, c.vpp),
                        tflops, t.number(i, "tflops_per_gpu")});
  }
  return out;
}

ValidationTable validate_korthikanti_table5(const ReferenceContext& ctx) {
  const std::string file = "korthikanti_2022_table5_a100.csv";
  CsvTable t(reference_file(ctx, file));
  CsvTable s = settings(ctx, "korthikanti_2022_settings.csv");
  ValidationTable out{file, "iteration time (s)", {}};
  for (size_t i = 0; i < t.rows(); ++i) {
    const std::string& name = t.text(i, "model");
    SweepSpec spec = selene_spec(
        ctx,
        gpt_model(name, t.integer(i, "num_layers"), t.integer(i, "hidden_size"),
                  t.integer(i, "num_heads"), t.integer(i, "vocab_size"), t.integer(i, "seq_len")),
        t.integer(i, "gbs"), false);
    ParallelConfig c =
        layout(t, i, t.integer(i, "mbs"), s.integer(settings_row(s, "model", name), "vpp"));
    const std::string& setting = t.text(i, "setting");
    if (setting == "full_recompute") {
      c.recompute = Recompute::Full;
    } else if (setting == "sp_selective_recompute") {
      c.recompute = Recompute::Selective;
      c.sp = true;
    } else {
      throw InputError(t.path(), "setting", setting, "full_recompute or sp_selective_recompute");
    }
    EvalResult r = predict_layout(spec, c);
    out.rows.push_back(
        {fmt::format("{} {}", name, setting), r.step_time_s, t.number(i, "iteration_time_s")});
  }
  return out;
}

ValidationTable validate_korthikanti_memory(const ReferenceContext& ctx) {
  const std::string file = "korthikanti_2022_memory_a100.csv";
  CsvTable t(reference_file(ctx, file));
  CsvTable s = settings(ctx, "korthikanti_2022_settings.csv");
  ValidationTable out{file, "GiB per GPU", {}};
  // Each model name of the memory table also appears in Table 5 (same runs).
  const std::vector<std::pair<std::string, ModelSpec>> models = {
      {"Megatron-22B", gpt_model("Megatron-22B", 48, 6144, 64, 51200, 2048)},
      {"GPT-3-175B", gpt_model("GPT-3-175B", 96, 12288, 96, 51200, 2048)},
      {"Turing-530B", gpt_model("Turing-530B", 105, 20480, 128, 51200, 2048)},
      {"Megatron-1T", gpt_model("Megatron-1T", 128, 25600, 160, 51200, 2048)}};
  for (size_t i = 0; i < t.rows(); ++i) {
    const std::string& name = t.text(i, "model");
    const ModelSpec* model = nullptr;
    for (const auto& [n, m] : models)
      if (n == name) model = &m;
    if (!model) throw InputError(t.path(), "model", name, "one of the Korthikanti models");
    ParallelConfig c;
    c.tp = static_cast<int32_t>(t.integer(i, "tp"));
    c.pp = static_cast<int32_t>(t.integer(i, "pp"));
    c.mbs = static_cast<int32_t>(t.integer(i, "mbs"));
    c.vpp = static_cast<int32_t>(s.integer(settings_row(s, "model", name), "vpp"));
    // Enough micro-batches that the first stage holds its full 1F1B warm-up.
    SweepSpec spec = selene_spec(ctx, *model, int64_t{64} * c.pp * c.mbs, false);
    spec.training.seq_length = t.integer(i, "seq_len");
    Workload w;
    auto memory_of = [&](Recompute rc, bool sp, size_t stage) {
      c.recompute = rc;
      c.sp = sp;
      build_workload(spec.model, spec.training, spec.network, c, w);
      return stage_memory(spec.model, spec.training, w, stage);
    };
    // Activations: stage 0 holds the most micro-batches. Parameters: Figure 1 counts the
    // transformer layers only (12 l h^2 / t at 18 B per parameter), which is a middle stage
    // when there is one (pp > 2); with pp = 1 the embedding adds ~1.5%.
    MemoryBreakdown none = memory_of(Recompute::None, false, 0);
    MemoryBreakdown sel = memory_of(Recompute::Selective, true, 0);
    MemoryBreakdown middle = memory_of(Recompute::None, false, c.pp > 2 ? 1 : 0);
    out.rows.push_back({name + " params+optimizer",
                        (middle.weights_bytes + middle.grads_bytes + middle.optimizer_bytes) / kGiB,
                        t.number(i, "params_and_optimizer_gib")});
    out.rows.push_back({name + " activations, no recompute", none.layer_activations_bytes / kGiB,
                        t.number(i, "activations_no_recompute_gib")});
    out.rows.push_back({name + " activations, SP + selective", sel.layer_activations_bytes / kGiB,
                        t.number(i, "activations_sp_selective_gib")});
  }
  return out;
}

std::vector<ValidationTable> validate_all(const ReferenceContext& ctx) {
  return {validate_sc21_table1(ctx),        validate_korthikanti_table5(ctx),
          validate_megatron_core_h100(ctx), validate_korthikanti_memory(ctx),
          validate_gemm_h100_grid(ctx),     validate_gemm_mamf(ctx),
          validate_nccl_dgx_a100(ctx),      validate_nccl_2node_h100(ctx)};
}

}  // namespace rapid
