#include "rapid/io/variant_table.hpp"

#include "rapid/io/netcdf_layout.hpp"

namespace rapid {

void write_variant_table(hid_t file, const SweepSpec& spec) {
  const size_t n = spec.hardware.size();
  std::vector<std::string> names, bases, overrides;
  std::vector<double> is_base;
  for (size_t i = 0; i < n; ++i) {
    const HardwareSpec& h = spec.hardware[i];
    names.push_back(h.name);
    const bool plain = i >= spec.variants.size() || spec.variants[i].is_base;
    bases.push_back(plain ? h.name : spec.variants[i].base);
    overrides.push_back(plain ? "" : spec.variants[i].overrides);
    is_base.push_back(plain ? 1.0 : 0.0);
  }
  // The parameters the model used, in SI base units (thermal derates applied: docs/variants.md).
  auto column = [&](const char* name, const char* long_name, const char* units, auto get) {
    NumberColumn c{name, long_name, units, {}};
    for (size_t i = 0; i < n; ++i) c.values.push_back(get(spec.hardware[i], spec.network_of(i)));
    return c;
  };
  using H = const HardwareSpec&;
  using N = const NetworkSpec&;
  const auto peak = [](H h, DType t) { return h.tensor_peak_FLOPs[static_cast<int>(t)]; };
  std::vector<NumberColumn> numbers{
      {"is_base", "1: a hardware file, 0: a variant of one", "1", is_base, true},
      column("num_sms", "streaming multiprocessors", "1",
             [](H h, N) { return static_cast<double>(h.num_sms); }),
      column("tensor_peak_bf16_FLOPs", "dense bf16 tensor-core peak", "s-1",
             [&](H h, N) { return peak(h, DType::BF16); }),
      column("tensor_peak_fp8_FLOPs", "dense fp8 tensor-core peak (0: none)", "s-1",
             [&](H h, N) { return peak(h, DType::FP8); }),
      column("hbm_thermal_keep", "fraction of its HBM bandwidth the GPU sustains", "1",
             [](H h, N) { return h.hbm_thermal_keep; }),
      column("nvlink_bandwidth_Bps", "NVLink bandwidth per GPU per direction", "byte s-1",
             [](H h, N net) {
               return net.nvlink_bandwidth_Bps > 0 ? net.nvlink_bandwidth_Bps
                                                   : h.nvlink_bandwidth_Bps;
             }),
      column("nic_bandwidth_Bps", "scale-out bandwidth per GPU per direction", "byte s-1",
             [](H, N net) { return net.nic_bandwidth_per_gpu_Bps(); }),
  };
  // Every hardware-file key with a column (hardware_spec.hpp kHardwareFields).
  for (const HardwareField& f : kHardwareFields)
    if (*f.column)
      numbers.push_back(column(f.column, f.meaning, f.units, [&f](H h, N) { return h.*f.member; }));
  write_table(file, "variants", "hardware_index", "hardware variant",
              {{"names", "name of the hardware variant", names},
               {"base", "the hardware file the variant derives from (its own name for one)", bases},
               {"overrides", "fields that differ from the base, as YAML", overrides}},
              numbers);
}

}  // namespace rapid
