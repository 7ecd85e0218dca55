// Job MTBF, checkpoint cost, Young/Daly interval and expected goodput (docs/goodput.md
// sec 6; sources in goodput.hpp).
#include "rapid/nonideal/goodput.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include "rapid/common/error.hpp"

namespace rapid {

double job_mtbf_s(const FailureSpec& f, int64_t gpus, int64_t gpus_per_node) {
  RAPID_ASSERT(gpus > 0 && gpus_per_node > 0, "a job has GPUs and nodes");
  const double nodes = static_cast<double>((gpus + gpus_per_node - 1) / gpus_per_node);
  const double g = static_cast<double>(gpus), nics = g;  // one NIC per GPU
  const double per_hour =
      g * (f.gpu_per_hour + f.hbm_per_hour) + nics * f.nic_per_hour + nodes * f.host_per_hour;
  if (!(per_hour > 0)) return std::numeric_limits<double>::infinity();
  return 3600.0 / per_hour;
}

double young_interval_s(double write_s, double mtbf_s) {
  return std::sqrt(2.0 * write_s * mtbf_s);
}

double daly_interval_s(double write_s, double mtbf_s) {
  if (write_s >= 2.0 * mtbf_s) return mtbf_s;
  const double x = write_s / (2.0 * mtbf_s);
  return young_interval_s(write_s, mtbf_s) * (1.0 + std::sqrt(x) / 3.0 + x / 9.0) - write_s;
}

double daly_goodput(double interval_s, double write_s, double restart_s, double mtbf_s) {
  if (std::isinf(mtbf_s)) return 1.0;
  // tau -> 0 with delta = 0: (e^{tau/M} - 1) / tau -> 1/M, T_s / T_w -> e^{-R/M}.
  if (interval_s <= 0 && write_s <= 0) return std::exp(-restart_s / mtbf_s);
  // expm1 keeps e^{x} - 1 exact for the small (tau + delta) / M of a reliable job.
  const double wall_per_solve = mtbf_s * std::exp(restart_s / mtbf_s) *
                                std::expm1((interval_s + write_s) / mtbf_s) / interval_s;
  return 1.0 / wall_per_solve;
}

double checkpoint_bytes(const ModelSpec& model, const TrainingSpec& training) {
  return static_cast<double>(model.total_params()) *
         (kCheckpointWeightBytes + training.optimizer_bytes);
}

int64_t checkpoint_writer_nodes(const ParallelConfig& par, int64_t gpus_per_node) {
  const int64_t job_nodes = (par.num_gpus() + gpus_per_node - 1) / gpus_per_node;
  if (par.zero_stage >= 1) return job_nodes;
  const int64_t stage_nodes = (int64_t{par.tp} + gpus_per_node - 1) / gpus_per_node;
  return std::min(job_nodes, int64_t{par.pp} * stage_nodes);
}

void fill_goodput(const FailureSpec& f, const ModelSpec& model, const TrainingSpec& training,
                  const Workload& w, int64_t gpus_per_node, EvalResult& r) {
  if (!f.enabled || r.status != Status::Ok) return;
  RAPID_ASSERT(f.checkpoint_write_Bps > 0, "parse_failures checks the write bandwidth");
  const double mtbf_s = job_mtbf_s(f, w.par.num_gpus(), gpus_per_node);
  const double bytes = checkpoint_bytes(model, training);
  const double write_s =
      bytes /
      (static_cast<double>(checkpoint_writer_nodes(w.par, gpus_per_node)) * f.checkpoint_write_Bps);
  const double interval_s = daly_interval_s(write_s, mtbf_s);
  r.job_mtbf_s = mtbf_s;
  r.checkpoint_bytes = bytes;
  r.checkpoint_write_s = write_s;
  r.checkpoint_interval_s = interval_s;
  r.goodput = daly_goodput(interval_s, write_s, f.restart_s, mtbf_s);
  r.goodput_tokens_per_s = r.tokens_per_s * r.goodput;
}

}  // namespace rapid
