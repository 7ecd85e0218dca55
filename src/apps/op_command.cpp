#include "op_command.hpp"

#include <fmt/format.h>

#include <cstdio>
#include <string_view>

#include "rapid/common/error.hpp"
#include "rapid/cost/attention_model.hpp"
#include "rapid/spec/hardware_spec.hpp"
#include "rapid/spec/hardware_variant.hpp"
#include "rapid/spec/yaml_reader.hpp"

namespace rapid {
namespace {

constexpr const char* kCli = "<command line>";

DType parse_dtype(const std::string& name) {
  if (const auto d = dtype_from_name(name)) return *d;
  throw InputError(kCli, "--dtype", name, "fp32, tf32, fp16, bf16 or fp8");
}

// "BRxBC" -> a candidate tile; anything else is an InputError.
TileChoice parse_tile(const std::string& text) {
  const std::string expected = "BRxBC with BR in 32, 64, 128, 256 and BC in 32, 64, 128";
  const size_t x = text.find('x');
  if (x == std::string::npos) throw InputError(kCli, "--tile", text, expected);
  TileChoice t;
  try {
    size_t used_q = 0, used_kv = 0;
    t.block_q = std::stoi(text.substr(0, x), &used_q);
    t.block_kv = std::stoi(text.substr(x + 1), &used_kv);
    if (used_q != x || used_kv != text.size() - x - 1) throw std::invalid_argument(text);
  } catch (const std::exception&) {
    throw InputError(kCli, "--tile", text, expected);
  }
  for (const TileChoice& c : AttentionModel::candidates())
    if (c.block_q == t.block_q && c.block_kv == t.block_kv) return t;
  throw InputError(kCli, "--tile", text, expected);
}

std::string why_not_fitting(const AttentionTiming& t, const HardwareSpec& hw) {
  if (t.smem_bytes > hw.smem_per_sm_bytes)
    return fmt::format("SMEM {:.0f} KiB > {:.0f} KiB per SM", t.smem_bytes / 1024,
                       hw.smem_per_sm_bytes / 1024);
  return fmt::format("registers {:.0f} KiB > 256 KiB per SM", t.register_bytes / 1024);
}

void print_row(const AttentionTiming& t, bool chosen, const HardwareSpec& hw) {
  const std::string tile = fmt::format("{} x {}", t.block_q, t.block_kv);
  if (!t.fits) {
    fmt::print("  {:>9}  does not fit: {}\n", tile, why_not_fitting(t, hw));
    return;
  }
  fmt::print(
      "{} {:>9} {:>6.0f} {:>6} {:>7} {:>5} {:>6.1f}% {:>8.1f} {:>6.1f}% {:>8.2f} {:>8.3f} "
      "{:>10.2f} {:>9.2f} {:>7.2f} {:>7.2f} {:>9.2f}\n",
      chosen ? '*' : ' ', tile, t.smem_bytes / 1024, t.blocks_per_sm, t.blocks, t.waves,
      100 * t.sm_utilization, t.reloads, 100 * t.l2_hit_rate, t.effective_bandwidth_Bps / 1e12,
      t.hbm_bytes / 1e9, t.compute_s * 1e6, t.memory_s * 1e6, t.fill_s * 1e6,
      (t.aux_s + t.launch_s) * 1e6, t.time_s * 1e6);
}

// --impl: a fused kernel the hardware file gives efficiencies for.
AttentionImpl parse_impl(const std::string& name, const HardwareSpec& hw) {
  std::string listed;
  for (AttentionImpl a : hw.attention_kernels()) {
    if (name == attention_impl_name(a)) return a;
    listed += std::string(listed.empty() ? "" : ", ") + attention_impl_name(a);
  }
  throw InputError(kCli, "--impl", name,
                   fmt::format("a kernel of {}'s attention_kernels: {}", hw.name,
                               listed.empty() ? "none listed" : listed));
}

// Shape arguments: 1 to 2^24 (larger ones overflow the products the model forms).
void check_positive(int64_t v, const char* key) {
  if (v < 1 || v > (int64_t{1} << 24))
    throw InputError(kCli, key, std::to_string(v), "an integer between 1 and 16777216");
}

}  // namespace

OpCommand::OpCommand(CLI::App& app) {
  op_ = app.add_subcommand("op", "time of one operator on one GPU, with the model's details");
  op_->require_subcommand(1);
  AttentionOpOptions& o = attention_options_;
  attention_ = op_->add_subcommand(
      "attention",
      "a fused attention kernel (FA2, FA3, cuDNN): every candidate tile (Br x Bc), the chosen "
      "one marked *");
  attention_->add_option("--hardware", o.hardware, "hardware YAML file (or a variant file)")
      ->required();
  attention_->add_option("--seq", o.seq, "query tokens per sequence")->required();
  attention_->add_option("--seq-kv", o.seq_kv, "key/value tokens (default: --seq)");
  attention_->add_option("--heads", o.heads, "query heads on this GPU")->required();
  attention_->add_option("--kv-heads", o.kv_heads, "K/V heads on this GPU (default: --heads)");
  attention_->add_option("--head-dim", o.head_dim, "head dimension d (default 128)");
  attention_->add_option("--batch", o.batch, "sequences per micro-batch (default 1)");
  attention_->add_option("--causal", o.causal, "causal mask: true or false (default false)");
  attention_->add_flag("--backward", o.backward, "the backward pass (default: forward)");
  attention_->add_option("--tile", o.tile,
                         "force a tile BRxBC, e.g. 128x64 (default: the kernel's own)");
  attention_->add_option("--dtype", o.dtype, "element type: fp16, bf16, fp8, ... (default bf16)");
  attention_->add_option("--impl", o.impl,
                         "kernel: fa2, fa3 or cudnn, one of the hardware file's "
                         "attention_kernels (default fa2)");
}

bool OpCommand::parsed() const {
  return op_->parsed();
}

int OpCommand::run() const {
  if (attention_->parsed()) return run_attention_op(attention_options_);
  return 0;
}

int run_attention_op(const AttentionOpOptions& o) {
  check_positive(o.seq, "--seq");
  check_positive(o.heads, "--heads");
  check_positive(o.head_dim, "--head-dim");
  check_positive(o.batch, "--batch");
  if (o.seq_kv != 0) check_positive(o.seq_kv, "--seq-kv");
  const int64_t kv_heads = o.kv_heads == 0 ? o.heads : o.kv_heads;
  check_positive(kv_heads, "--kv-heads");
  if (o.heads % kv_heads != 0)
    throw InputError(kCli, "--kv-heads", std::to_string(kv_heads),
                     fmt::format("a divisor of --heads ({})", o.heads));
  const DType dtype = parse_dtype(o.dtype);
  const HardwareSpec hw = load_hardware_file(o.hardware);  // a hardware or a variant file
  if (hw.tensor_peak_FLOPs[static_cast<int>(dtype)] <= 0)
    throw InputError(o.hardware, "tensor_peak", o.dtype,
                     fmt::format("a {} tensor peak, since --dtype is {}", o.dtype, o.dtype));
  const TileChoice forced = o.tile.empty() ? TileChoice{} : parse_tile(o.tile);
  const AttentionImpl impl = parse_impl(o.impl, hw);

  AttentionShape s;
  s.batch_heads = o.batch * o.heads;
  s.seq_q = o.seq;
  s.seq_kv = o.seq_kv == 0 ? o.seq : o.seq_kv;
  s.head_dim = o.head_dim;
  s.gqa_group = o.heads / kv_heads;
  s.causal = o.causal;
  const AttentionModel model(hw, dtype, impl);
  auto eval = [&](TileChoice t) { return o.backward ? model.backward(s, t) : model.forward(s, t); };
  const AttentionTiming automatic = eval({});
  const AttentionTiming chosen = forced.automatic() ? automatic : eval(forced);
  if (!chosen.fits) {
    if (forced.automatic())  // the kernel's tile does not fit: the head dim is too large
      throw InputError(kCli, "--head-dim", std::to_string(o.head_dim),
                       fmt::format("a head dim whose smallest tile fits on an SM ({})",
                                   why_not_fitting(chosen, hw)));
    throw InputError(kCli, "--tile", o.tile,
                     fmt::format("a tile that fits on an SM ({})", why_not_fitting(chosen, hw)));
  }

  fmt::print(
      "{} attention{} on {} ({}): batch {} x {} heads ({} K/V heads, GQA group {}), "
      "seq {} x {}, head dim {}, {}\n",
      attention_impl_name(impl), o.backward ? " backward" : "", hw.name, o.dtype, o.batch, o.heads,
      kv_heads, s.gqa_group, s.seq_q, s.seq_kv, s.head_dim, s.causal ? "causal" : "no mask");
  fmt::print(
      "{} {:>9} {:>6} {:>6} {:>7} {:>5} {:>7} {:>8} {:>7} {:>8} {:>8} {:>10} {:>9} "
      "{:>7} {:>7} {:>9}\n",
      ' ', "Br x Bc", "SMEM", "blk/SM", "blocks", "waves", "SM use", "re-reads", "L2 hit",
      "eff TB/s", "HBM GB", "compute us", "memory us", "fill us", "aux us", "time us");
  for (const TileChoice& c : AttentionModel::candidates()) {
    const AttentionTiming t = eval(c);
    print_row(t, t.block_q == chosen.block_q && t.block_kv == chosen.block_kv, hw);
  }
  fmt::print("* {} x {}{}: {:.2f} us, {:.1f} TFLOP/s ({:.1f} TFLOP/s of useful work){}\n",
             chosen.block_q, chosen.block_kv,
             forced.automatic()
                 ? " (automatic: the kernel's own tile for this head dim, as it ships)"
                 : " (--tile)",
             chosen.time_s * 1e6, chosen.flops / chosen.time_s / 1e12,
             s.useful_flops(o.backward) / chosen.time_s / 1e12,
             forced.automatic() ? ""
                                : fmt::format("; automatic: {} x {}, {:.2f} us", automatic.block_q,
                                              automatic.block_kv, automatic.time_s * 1e6));
  fmt::print(
      "  (time = max(compute, memory) + fill + aux; SM use: mean / busiest SM load; re-reads: "
      "extra reads per element of the streamed operand; fill: one tile pair per wave before "
      "loads and MMAs overlap; aux: {}launches)\n",
      o.backward ? "pre-processing, dQ conversion and GQA dK/dV sum kernels, " : "");
  return 0;
}

}  // namespace rapid
