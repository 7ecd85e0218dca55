// The MPI environment of rapid-sweep (docs/architecture.md "Libraries": MPI_Init_thread; the
// sweep's MPI calls are on the main thread (FUNNELED), the heartbeat thread (watchdog.hpp) needs
// MPI_THREAD_MULTIPLE where the library has it). MPI_COMM_WORLD is switched to
// MPI_ERRORS_RETURN so that every failed call becomes a rapid::InternalError carrying MPI's
// error string instead of an abort without context.
#pragma once

#ifndef OMPI_SKIP_MPICXX
#define OMPI_SKIP_MPICXX 1  // the C API only (no deprecated C++ bindings)
#endif
#include <mpi.h>

#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace rapid {

/// Throws InternalError "MPI <call> failed: <MPI_Error_string(rc)>" unless rc == MPI_SUCCESS.
void mpi_check(int rc, const char* call);

/// Owns MPI initialisation: MPI_Init_thread(MULTIPLE, at least FUNNELED) in the constructor,
/// MPI_Finalize in the destructor. One per process, created by main() before anything else uses
/// MPI. All collective helpers use MPI_COMM_WORLD and must be called by every rank in the same
/// order.
class MpiEnv {
 public:
  /// Initialises MPI with `argc`/`argv` from main(). A process started without a launcher
  /// (no mpirun/srun in its environment: a singleton) gets Open MPI's single-process
  /// defaults unless the environment sets them (no orted, the ob1 messaging layer, shared
  /// memory and self transports): 0.08 s to MPI_Init instead of 0.46 s probing networks. Throws
  /// InternalError when MPI cannot be initialised or provides less than MPI_THREAD_FUNNELED (MPI is
  /// finalised first).
  MpiEnv(int& argc, char**& argv);
  /// Finalises MPI (unless already finalised). Errors are ignored.
  /// MPI_Finalize, bounded: past `timeout_s` (mpirun stopped, a peer lost) the process
  /// says so on stderr and exits with `exit_code` without it (_exit: the caller's output is
  /// already closed). Later calls and the destructor do nothing.
  void finalize_within(int exit_code, double timeout_s);
  ~MpiEnv();
  MpiEnv(const MpiEnv&) = delete;
  MpiEnv& operator=(const MpiEnv&) = delete;

  MPI_Comm comm() const { return MPI_COMM_WORLD; }
  int rank() const { return rank_; }
  int size() const { return size_; }
  bool is_root() const { return rank_ == 0; }

  /// Collective barrier. Throws InternalError.
  void barrier() const;
  /// Collective maximum / minimum of `v` over all ranks. Throws InternalError.
  int64_t allreduce_max(int64_t v) const;
  int64_t allreduce_min(int64_t v) const;
  /// Collective elementwise sums over all ranks, in place. Throw InternalError.
  void allreduce_sum(std::span<int64_t> v) const;
  void allreduce_sum(std::span<double> v) const;
  /// Collective broadcast from `root`: every rank returns root's value. Throws InternalError.
  int64_t broadcast(int64_t v, int root = 0) const;
  double broadcast(double v, int root = 0) const;
  std::string broadcast(const std::string& v, int root = 0) const;
  /// Collective: the distinct host names (MPI_Get_processor_name) of all ranks, sorted and
  /// joined by commas. Throws InternalError.
  std::string hostnames() const;
  /// Collective: every rank's host name, in rank order. Throws InternalError.
  std::vector<std::string> hostnames_by_rank() const;

  /// MPI_Abort(MPI_COMM_WORLD, code): ends every rank of the job (used after a failure on one
  /// rank, so that the others do not wait forever). Does not return.
  [[noreturn]] void abort(int code) const;

 private:
  int rank_ = 0;
  int size_ = 1;
};

}  // namespace rapid
