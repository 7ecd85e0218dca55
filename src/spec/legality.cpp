#include "rapid/spec/legality.hpp"

namespace rapid {

const char* illegal_reason(const ModelSpec& model, const TrainingSpec& training,
                           const NetworkSpec& network, const SearchSpace& space,
                           const ParallelConfig& c) {
  if (c.dp < 1 || c.tp < 1 || c.pp < 1 || c.cp < 1 || c.ep < 1 || c.vpp < 1 || c.mbs < 1)
    return "every degree must be >= 1";
  if (model.num_attention_heads % c.tp != 0) return "tp must divide num_attention_heads";
  if (model.num_kv_heads % c.tp != 0) return "tp must divide num_kv_heads";
  if (!space.allow_tp_across_nodes &&
      (c.tp > network.gpus_per_node || network.gpus_per_node % c.tp != 0))
    return "tp must divide gpus_per_node (tp inside one NVLink domain)";
  if (space.allow_uneven_pp ? c.pp > model.num_layers : model.num_layers % c.pp != 0)
    return "pp must divide num_layers";
  if (c.vpp > 1) {
    if (c.pp == 1) return "vpp > 1 needs pp > 1";
    if (space.allow_uneven_pp ? model.num_layers < int64_t{c.pp} * c.vpp
                              : (model.num_layers / c.pp) % c.vpp != 0)
      return "vpp must divide the layers per stage";
  }
  if (training.global_batch_size % (int64_t{c.dp} * c.mbs) != 0)
    return "global_batch_size must be divisible by dp*mbs";
  if (c.sp && c.tp == 1) return "sp needs tp > 1";
  if (c.sp && training.seq_length % c.tp != 0) return "sp needs seq_length divisible by tp";
  if (c.cp > 1 && training.seq_length % (2 * c.cp) != 0)
    return "cp needs seq_length divisible by 2*cp";
  if (c.ep != 1) return "ep > 1 needs a mixture-of-experts model";
  if (c.zero_stage < 0 || c.zero_stage > 3) return "zero_stage must be 0-3";
  if (c.zero_stage > 0 && c.dp == 1) return "ZeRO needs dp > 1";
  return nullptr;
}

}  // namespace rapid
