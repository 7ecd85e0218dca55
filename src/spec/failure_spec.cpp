// `nonideal: failures:` of a job (docs/goodput.md sec 6); defaults in failure_spec.hpp.
#include "rapid/spec/failure_spec.hpp"

#include "rapid/spec/units.hpp"
#include "rapid/spec/yaml_reader.hpp"

namespace rapid {

namespace {

// A rate above one failure per component-hour is a typo (the defaults are ~1e-5).
constexpr double kMaxPerHour = 1.0;

double rate(const YamlMap& m, const std::string& key, double fallback) {
  return m.number_or(key, fallback, 0.0, kMaxPerHour);
}

}  // namespace

FailureSpec parse_failures(const YAML::Node& node, const std::string& file,
                           const std::string& path) {
  YamlMap m(node, file, path);
  FailureSpec f;
  f.enabled = m.boolean_or("enabled", true);
  f.gpu_per_hour = rate(m, "gpu_per_hour", kDefaultGpuPerHour);
  f.hbm_per_hour = rate(m, "hbm_per_hour", kDefaultHbmPerHour);
  f.nic_per_hour = rate(m, "nic_per_hour", kDefaultNicPerHour);
  f.host_per_hour = rate(m, "host_per_hour", kDefaultHostPerHour);
  f.checkpoint_write_Bps =
      m.quantity_or("checkpoint_write", Dimension::Bandwidth, kDefaultCheckpointWriteBps);
  if (!(f.checkpoint_write_Bps > 0))
    m.fail("checkpoint_write", m.node("checkpoint_write").Scalar(),
           std::string("a positive bandwidth per node: ") + dimension_units(Dimension::Bandwidth));
  f.restart_s = m.quantity_or("restart", Dimension::Time, kDefaultRestartS);
  m.finish();
  return f;
}

}  // namespace rapid
