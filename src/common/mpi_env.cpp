#include "rapid/common/mpi_env.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <set>
#include <thread>
#include <vector>

#include "rapid/common/error.hpp"

namespace rapid {

void mpi_check(int rc, const char* call) {
  if (rc == MPI_SUCCESS) return;
  char text[MPI_MAX_ERROR_STRING] = {};
  int len = 0;
  if (MPI_Error_string(rc, text, &len) != MPI_SUCCESS) len = 0;
  throw InternalError(fmt::format(
      "MPI {} failed: {} (error code {})", call,
      len > 0 ? std::string(text, static_cast<size_t>(len)) : std::string("unknown error"), rc));
}

namespace {

// A process no launcher started (mpirun sets OMPI_COMM_WORLD_SIZE, PMIx and PMI-2 launchers
// such as srun set PMIX_RANK or PMI_RANK): Open MPI's defaults would start an orted for it
// and probe every network transport (UCX, OFI, PSM) before settling on shared memory,
// 0.4 s of a small sweep's start-up (measured with `rapid-sweep --version`: 0.46 s, 0.08 s
// with these). Values the environment sets win (setenv without overwrite).
void singleton_defaults() {
  for (const char* launched : {"OMPI_COMM_WORLD_SIZE", "PMIX_RANK", "PMI_RANK", "PMI_SIZE"})
    if (std::getenv(launched)) return;
  setenv("OMPI_MCA_ess_singleton_isolated", "1", 0);
  setenv("OMPI_MCA_pml", "ob1", 0);
  setenv("OMPI_MCA_btl", "self,vader", 0);
}

}  // namespace

MpiEnv::MpiEnv(int& argc, char**& argv) {
  singleton_defaults();
  // MULTIPLE for the heartbeat thread (watchdog.hpp); FUNNELED is the least the sweep needs.
  int provided = MPI_THREAD_SINGLE;
  mpi_check(MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided), "MPI_Init_thread");
  try {
    mpi_check(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN),
              "MPI_Comm_set_errhandler");
    if (provided < MPI_THREAD_FUNNELED)
      throw InternalError(fmt::format(
          "MPI_Init_thread provided thread level {} below MPI_THREAD_FUNNELED ({}): the OpenMP "
          "threads of a rank need it",
          provided, MPI_THREAD_FUNNELED));
    mpi_check(MPI_Comm_rank(MPI_COMM_WORLD, &rank_), "MPI_Comm_rank");
    mpi_check(MPI_Comm_size(MPI_COMM_WORLD, &size_), "MPI_Comm_size");
  } catch (...) {
    MPI_Finalize();
    throw;
  }
}

void MpiEnv::finalize_within(int exit_code, double timeout_s) {
  int finalized = 0;
  if (MPI_Finalized(&finalized) != MPI_SUCCESS || finalized) return;
  auto done = std::make_shared<std::atomic<bool>>(false);
  const int rank = rank_;
  std::thread([done, exit_code, timeout_s, rank] {
    const auto until = std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout_s);
    while (!*done && std::chrono::steady_clock::now() < until)
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    if (*done) return;
    std::fprintf(stderr,
                 "rapid-sweep: rank %d: MPI_Finalize has not returned after %.0f s (mpirun "
                 "stopped, or a rank lost?): exiting with code %d; the output was written "
                 "before\n",
                 rank, timeout_s, exit_code);
    std::fflush(stderr);
    std::_Exit(exit_code);
  }).detach();
  MPI_Finalize();
  *done = true;
}

MpiEnv::~MpiEnv() {
  int finalized = 0;
  if (MPI_Finalized(&finalized) == MPI_SUCCESS && !finalized) MPI_Finalize();
}

void MpiEnv::barrier() const {
  mpi_check(MPI_Barrier(MPI_COMM_WORLD), "MPI_Barrier");
}

int64_t MpiEnv::allreduce_max(int64_t v) const {
  int64_t out = 0;
  mpi_check(MPI_Allreduce(&v, &out, 1, MPI_INT64_T, MPI_MAX, MPI_COMM_WORLD), "MPI_Allreduce");
  return out;
}

void MpiEnv::allreduce_sum(std::span<int64_t> v) const {
  mpi_check(MPI_Allreduce(MPI_IN_PLACE, v.data(), static_cast<int>(v.size()), MPI_INT64_T, MPI_SUM,
                          MPI_COMM_WORLD),
            "MPI_Allreduce");
}

void MpiEnv::allreduce_sum(std::span<double> v) const {
  mpi_check(MPI_Allreduce(MPI_IN_PLACE, v.data(), static_cast<int>(v.size()), MPI_DOUBLE, MPI_SUM,
                          MPI_COMM_WORLD),
            "MPI_Allreduce");
}

int64_t MpiEnv::allreduce_min(int64_t v) const {
  int64_t out = 0;
  mpi_check(MPI_Allreduce(&v, &out, 1, MPI_INT64_T, MPI_MIN, MPI_COMM_WORLD), "MPI_Allreduce");
  return out;
}

int64_t MpiEnv::broadcast(int64_t v, int root) const {
  mpi_check(MPI_Bcast(&v, 1, MPI_INT64_T, root, MPI_COMM_WORLD), "MPI_Bcast");
  return v;
}

double MpiEnv::broadcast(double v, int root) const {
  mpi_check(MPI_Bcast(&v, 1, MPI_DOUBLE, root, MPI_COMM_WORLD), "MPI_Bcast");
  return v;
}

std::string MpiEnv::broadcast(const std::string& v, int root) const {
  const int64_t len = broadcast(static_cast<int64_t>(v.size()), root);
  std::string out = rank_ == root ? v : std::string(static_cast<size_t>(len), '\0');
  // MPI counts are int: send long strings (a job's YAML) in pieces of at most 1 GiB.
  constexpr int64_t kPiece = int64_t{1} << 30;
  for (int64_t off = 0; off < len; off += kPiece) {
    const int n = static_cast<int>(std::min(kPiece, len - off));
    mpi_check(MPI_Bcast(out.data() + off, n, MPI_CHAR, root, MPI_COMM_WORLD), "MPI_Bcast");
  }
  return out;
}

void MpiEnv::abort(int code) const {
  MPI_Abort(MPI_COMM_WORLD, code);
  std::_Exit(code);  // MPI_Abort should not return; make sure the process ends regardless
}

std::vector<std::string> MpiEnv::hostnames_by_rank() const {
  char name[MPI_MAX_PROCESSOR_NAME] = {};
  int len = 0;
  mpi_check(MPI_Get_processor_name(name, &len), "MPI_Get_processor_name");
  std::vector<char> all(static_cast<size_t>(size_) * MPI_MAX_PROCESSOR_NAME, '\0');
  mpi_check(MPI_Allgather(name, MPI_MAX_PROCESSOR_NAME, MPI_CHAR, all.data(),
                          MPI_MAX_PROCESSOR_NAME, MPI_CHAR, MPI_COMM_WORLD),
            "MPI_Allgather");
  std::vector<std::string> out;
  for (int r = 0; r < size_; ++r)
    out.emplace_back(all.data() + static_cast<size_t>(r) * MPI_MAX_PROCESSOR_NAME);
  return out;
}

std::string MpiEnv::hostnames() const {
  const std::vector<std::string> all = hostnames_by_rank();
  const std::set<std::string> hosts(all.begin(), all.end());
  std::string out;
  for (const std::string& h : hosts) out += (out.empty() ? "" : ",") + h;
  return out;
}

}  // namespace rapid
