// Heartbeats between rank 0 and every worker, so that a rank that dies, is stopped
// (SIGSTOP, a hung node) or becomes unreachable ends the job within a timeout instead of
// hanging it (issue 10 part 4). A background thread per rank sends a heartbeat every
// interval on a private duplicate of MPI_COMM_WORLD and watches its peers: rank 0 watches
// every worker, each worker watches rank 0 (a star: 2 (P - 1) small messages per interval,
// not P^2). The thread keeps beating while the main thread is busy in a long point, an
// HDF5 write or a collective, so only a rank whose process no longer runs falls silent.
//
// A peer silent for longer than the timeout is reported once on stderr (rank, host, seconds,
// and the context the sweep set: where its partial file is) and the job is ended with
// MPI_Abort(lost_exit_code): mpirun or srun then kill every rank, the stopped one included.
//
// Shutdown is a handshake, so a rank that finishes early is never taken for a lost one:
// stop() on a worker sends BYE to rank 0 and waits for rank 0's BYE; rank 0 sends its BYE
// to all once every worker's BYE has arrived. Every message is received before the thread
// ends, so MPI_Finalize finds no pending communication. The thread calls MPI, which needs
// MPI_THREAD_MULTIPLE: where the library provides less, the watchdog does nothing (and
// says so once).
#pragma once

#include <atomic>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "rapid/common/mpi_env.hpp"

namespace rapid {

struct WatchdogOptions {
  double timeout_s = 60.0;  ///< a peer silent this long is lost (`--heartbeat-timeout`); 0: off
  int lost_exit_code = 3;   ///< MPI_Abort's code when a peer is lost
};

class Watchdog {
 public:
  /// Collective over MPI_COMM_WORLD (duplicates it, gathers host names) and starts the
  /// thread; does nothing on one rank, with timeout 0, or without MPI_THREAD_MULTIPLE.
  Watchdog(const MpiEnv& mpi, WatchdogOptions options);
  /// stop(); frees the communicator.
  ~Watchdog();
  Watchdog(const Watchdog&) = delete;
  Watchdog& operator=(const Watchdog&) = delete;

  /// Appended to the lost-rank message (e.g. "; the rows done are in P: ...").
  void set_context(std::string context);
  /// The shutdown handshake; returns once every message is received. Idempotent.
  void stop();

 private:
  void loop();
  void beat(int peer);
  void drain();
  void check_peers();
  [[noreturn]] void lost(int peer, double silent_s);

  const MpiEnv& mpi_;
  WatchdogOptions options_;
  double interval_s_ = 1.0;  ///< between heartbeats: a quarter of the timeout, at most 1 s
  MPI_Comm comm_ = MPI_COMM_NULL;
  std::vector<std::string> hosts_;
  std::vector<int> peers_;            ///< ranks this one watches and beats to
  std::vector<double> last_seen_s_;   ///< per rank: monotonic seconds of its last message
  std::vector<char> said_bye_;        ///< per rank: its BYE arrived
  std::vector<MPI_Request> sending_;  ///< per rank: the heartbeat or BYE in flight
  std::atomic<bool> stopping_{false};
  std::mutex context_mutex_;
  std::string context_;
  std::thread thread_;
};

}  // namespace rapid
