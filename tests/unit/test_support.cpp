#include "test_support.hpp"

#include "rapid/spec/yaml_reader.hpp"

namespace rapid::test {

SweepSpec spec_with(const std::string& model, const std::string& hardware,
                    const std::string& network, int64_t gbs, int64_t seq) {
  SweepSpec s;
  std::string mp = source_path("configs/models/" + model + ".yaml");
  s.model = parse_model(load_yaml_file(mp), mp);
  std::string hp = source_path("configs/hardware/" + hardware + ".yaml");
  s.hardware.push_back(parse_hardware(load_yaml_file(hp), hp));
  std::string np = source_path("configs/networks/" + network + ".yaml");
  s.network = parse_network(load_yaml_file(np), np);
  s.training.global_batch_size = gbs;
  s.training.seq_length = seq;
  return s;
}

}  // namespace rapid::test
