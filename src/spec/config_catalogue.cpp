#include "rapid/spec/config_catalogue.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <fstream>
#include <functional>

#include "config_resolve.hpp"
#include "rapid/common/error.hpp"
#include "rapid/spec/framework_spec.hpp"
#include "rapid/spec/hardware_variant.hpp"
#include "rapid/spec/model_spec.hpp"
#include "rapid/spec/network_spec.hpp"
#include "rapid/spec/serving_spec.hpp"
#include "rapid/spec/sweep_spec.hpp"
#include "rapid/spec/yaml_reader.hpp"

namespace rapid {

const std::vector<ConfigKind>& config_kinds() {
  static const std::vector<ConfigKind> kinds = {
      {"models", "models", "model architectures (model:)"},
      {"hardware", "hardware", "GPUs and their variants (hardware:)"},
      {"networks", "networks", "clusters: scale-up domain and scale-out fabric (network:)"},
      {"frameworks", "frameworks", "training stacks (training.framework:)"},
      {"serving", "serving", "serving stacks (serving.stack:)"}};
  return kinds;
}

const ConfigKind* find_config_kind(const std::string& name) {
  for (const ConfigKind& k : config_kinds())
    if (name == k.name) return &k;
  return nullptr;
}

std::string config_description(const std::string& path) {
  const YAML::Node node = load_yaml_file(path);
  if (node.IsMap() && node["description"] && node["description"].IsScalar())
    return node["description"].Scalar();
  std::ifstream in(path);
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty()) continue;
    if (!line.starts_with("#")) break;
    const size_t text = line.find_first_not_of("# ");
    if (text != std::string::npos) return line.substr(text);
  }
  return "";
}

namespace {

constexpr size_t kMaxDescription = 72;  // bytes of a description kept on the line

std::string shorten(std::string s) {
  if (s.size() <= kMaxDescription) return s;
  size_t cut = s.rfind(' ', kMaxDescription - 3);
  if (cut == std::string::npos || cut < kMaxDescription / 2) cut = kMaxDescription - 3;
  while (cut > 0 && (static_cast<unsigned char>(s[cut]) & 0xC0) == 0x80) --cut;  // UTF-8
  return s.substr(0, cut) + "...";
}

/// "70.6B", "1.01T", "125M", "210K": a parameter count.
std::string count_text(double n) {
  if (n >= 1e12) return fmt::format("{:.3g}T", n / 1e12);
  if (n >= 1e9) return fmt::format("{:.3g}B", n / 1e9);
  if (n >= 1e6) return fmt::format("{:.3g}M", n / 1e6);
  return fmt::format("{:.3g}K", n / 1e3);
}

std::string model_facts(const std::string& path) {
  const ModelSpec m = parse_model(load_yaml_file(path), path);
  std::string out = fmt::format("{} params", count_text(static_cast<double>(m.total_params())));
  if (m.moe.enabled())
    out += fmt::format(" ({} active; MoE {} experts, top-{})",
                       count_text(static_cast<double>(m.active_params())), m.moe.num_experts,
                       m.moe.top_k);
  out += fmt::format(", {} layers, hidden {}, {} heads", m.num_layers, m.hidden_size,
                     m.num_attention_heads);
  if (m.num_kv_heads != m.num_attention_heads) out += fmt::format(" ({} KV)", m.num_kv_heads);
  return out + fmt::format(", seq {}", m.seq_length);
}

std::string hardware_facts(const std::string& path) {
  const HardwareSpec h = load_hardware_file(path);
  std::string out = fmt::format("{:g} TFLOPS bf16, {:.4g} GiB HBM at {:.3g} TB/s, {} SMs",
                                h.tensor_peak_FLOPs[static_cast<int>(DType::BF16)] / 1e12,
                                h.hbm_capacity_bytes / static_cast<double>(1ull << 30),
                                h.hbm_bandwidth_Bps / 1e12, h.num_sms);
  const YAML::Node node = load_yaml_file(path);
  if (node.IsMap() && node["base"] && node["base"].IsScalar())
    out += fmt::format("; variant of {}: {}", node["base"].Scalar(),
                       shorten(config_description(path)));
  return out;
}

std::string network_facts(const std::string& path) {
  const NetworkSpec n = parse_network(load_yaml_file(path), path);
  std::string out =
      fmt::format("{}, {} GPUs per node, scale-up ", topology_name(n.topology), n.gpus_per_node);
  out += n.scale_up == ScaleUp::FullMesh ? "full mesh" : "NVSwitch";
  out += n.nvlink_bandwidth_Bps > 0
             ? fmt::format(" {:g} GB/s per GPU", n.nvlink_bandwidth_Bps / 1e9)
             : std::string(" at the GPU's bandwidth");
  if (!n.torus_dims.empty())
    return out + fmt::format(", torus links {:g} GB/s", n.torus_link_bandwidth_Bps / 1e9);
  return out + fmt::format(", scale-out {:g} GB/s per GPU ({} NICs per node)",
                           n.nic_bandwidth_per_gpu_Bps() / 1e9, n.nics_per_node);
}

/// Base and description of a stack file (its chain loaded by `load`, to check it).
std::string stack_facts(const std::string& path, const std::function<void()>& load) {
  load();
  const YAML::Node node = load_yaml_file(path);
  std::string out;
  if (node.IsMap() && node["base"] && node["base"].IsScalar())
    out = "base " + node["base"].Scalar() + ": ";
  return out + shorten(config_description(path));
}

}  // namespace

std::vector<CatalogueEntry> list_configs(const ConfigKind& kind, const std::string& anchor) {
  const std::string dir = kind.dir;
  std::vector<std::pair<std::string, std::string>> files;  // name, its directory
  for (const std::string& name : detail::known_configs(dir, anchor)) files.emplace_back(name, dir);
  if (dir == "hardware")
    for (const std::string& name : detail::known_configs("hardware/variants", anchor))
      if (find_named_config("hardware", name, anchor).empty())  // a plain file comes first
        files.emplace_back(name, "hardware/variants");
  std::sort(files.begin(), files.end());

  std::vector<CatalogueEntry> out;
  for (const auto& [name, sub] : files) {
    CatalogueEntry e;
    e.name = name;
    e.path = find_named_config(sub, name, anchor);
    try {
      if (dir == "models") e.facts = model_facts(e.path);
      if (dir == "hardware") e.facts = hardware_facts(e.path);
      if (dir == "networks") e.facts = network_facts(e.path);
      if (dir == "frameworks")
        e.facts = stack_facts(e.path, [&] { load_framework(name, anchor, e.path, "name"); });
      if (dir == "serving")
        e.facts = stack_facts(e.path, [&] { load_serving_stack(name, anchor, e.path, "name"); });
    } catch (const std::exception& err) {  // listed, not fatal: one bad file hides no other
      e.readable = false;
      e.facts = fmt::format("(unreadable: {})", err.what());
    }
    out.push_back(std::move(e));
  }
  return out;
}

}  // namespace rapid
