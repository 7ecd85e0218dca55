#include "rapid/sweep/watchdog.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>

#include "rapid/common/error.hpp"

namespace rapid {

namespace {

enum Tag : int { kTagBeat = 1, kTagBye = 2 };

double now_s() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

// How often the thread wakes: often enough that a BYE or a lost peer is seen promptly.
constexpr auto kTick = std::chrono::milliseconds(20);

int thread_level() {
  int provided = MPI_THREAD_SINGLE;
  return MPI_Query_thread(&provided) == MPI_SUCCESS ? provided : MPI_THREAD_SINGLE;
}

}  // namespace

Watchdog::Watchdog(const MpiEnv& mpi, WatchdogOptions options) : mpi_(mpi), options_(options) {
  if (mpi_.size() < 2 || !(options_.timeout_s > 0)) return;
  // Every rank takes the same branch (the level is the library's, the options come from the
  // same command line), so the collectives below are entered by all or by none.
  if (thread_level() < MPI_THREAD_MULTIPLE) {
    if (mpi_.is_root())
      std::fprintf(stderr,
                   "rapid-sweep: note: the MPI library lacks MPI_THREAD_MULTIPLE: no heartbeat "
                   "watchdog (a stopped rank is not detected)\n");
    return;
  }
  interval_s_ = std::min(1.0, options_.timeout_s / 4);
  mpi_check(MPI_Comm_dup(mpi_.comm(), &comm_), "MPI_Comm_dup");
  mpi_check(MPI_Comm_set_errhandler(comm_, MPI_ERRORS_RETURN), "MPI_Comm_set_errhandler");
  hosts_ = mpi_.hostnames_by_rank();
  const auto n = static_cast<size_t>(mpi_.size());
  last_seen_s_.assign(n, now_s());
  said_bye_.assign(n, 0);
  sending_.assign(n, MPI_REQUEST_NULL);
  if (mpi_.is_root())
    for (int r = 1; r < mpi_.size(); ++r) peers_.push_back(r);
  else
    peers_.push_back(0);
  thread_ = std::thread([this] { loop(); });
}

Watchdog::~Watchdog() {
  stop();
  if (comm_ != MPI_COMM_NULL) MPI_Comm_free(&comm_);
}

void Watchdog::set_context(std::string context) {
  const std::lock_guard<std::mutex> lock(context_mutex_);
  context_ = std::move(context);
}

void Watchdog::stop() {
  if (!thread_.joinable()) return;
  stopping_.store(true);
  thread_.join();
}

void Watchdog::loop() {
  bool bye_sent = false;
  double last_beat_s = 0;
  double last_tick_s = now_s();
  while (true) {
    // A gap in this thread's own ticks means this process was not running (SIGSTOP and
    // SIGCONT, a suspended node): its peers' silence over that gap says nothing about them.
    const double tick_s = now_s();
    if (tick_s - last_tick_s > options_.timeout_s / 2)
      std::fill(last_seen_s_.begin(), last_seen_s_.end(), tick_s);
    last_tick_s = tick_s;
    drain();
    if (stopping_.load()) {
      const bool peers_done = std::all_of(peers_.begin(), peers_.end(), [&](int p) {
        return said_bye_[static_cast<size_t>(p)] != 0;
      });
      // A worker says BYE first and leaves on rank 0's; rank 0 answers once all said it.
      if (!bye_sent && (!mpi_.is_root() || peers_done)) {
        for (int p : peers_) {
          MPI_Wait(&sending_[static_cast<size_t>(p)], MPI_STATUS_IGNORE);
          static const int payload = 0;
          if (MPI_Isend(&payload, 1, MPI_INT, p, kTagBye, comm_,
                        &sending_[static_cast<size_t>(p)]) != MPI_SUCCESS)
            lost(p, now_s() - last_seen_s_[static_cast<size_t>(p)]);
        }
        bye_sent = true;
      }
      if (bye_sent && peers_done) break;
    }
    if (!bye_sent && now_s() - last_beat_s >= interval_s_) {
      for (int p : peers_) beat(p);
      last_beat_s = now_s();
    }
    check_peers();
    std::this_thread::sleep_for(kTick);
  }
  for (int p : peers_) MPI_Wait(&sending_[static_cast<size_t>(p)], MPI_STATUS_IGNORE);
}

void Watchdog::beat(int peer) {
  MPI_Request& req = sending_[static_cast<size_t>(peer)];
  int done = 1;
  if (req != MPI_REQUEST_NULL && MPI_Test(&req, &done, MPI_STATUS_IGNORE) != MPI_SUCCESS)
    lost(peer, now_s() - last_seen_s_[static_cast<size_t>(peer)]);
  if (!done) return;  // the last heartbeat is not out yet: no pile-up behind a silent peer
  static const int payload = 0;
  if (MPI_Isend(&payload, 1, MPI_INT, peer, kTagBeat, comm_, &req) != MPI_SUCCESS)
    lost(peer, now_s() - last_seen_s_[static_cast<size_t>(peer)]);
}

void Watchdog::drain() {
  while (true) {
    int flag = 0;
    MPI_Status st;
    if (MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, comm_, &flag, &st) != MPI_SUCCESS || !flag) return;
    int payload = 0;
    if (MPI_Recv(&payload, 1, MPI_INT, st.MPI_SOURCE, st.MPI_TAG, comm_, MPI_STATUS_IGNORE) !=
        MPI_SUCCESS)
      return;
    const auto r = static_cast<size_t>(st.MPI_SOURCE);
    last_seen_s_[r] = now_s();
    if (st.MPI_TAG == kTagBye) said_bye_[r] = 1;
  }
}

void Watchdog::check_peers() {
  const double t = now_s();
  for (int p : peers_) {
    const auto r = static_cast<size_t>(p);
    if (!said_bye_[r] && t - last_seen_s_[r] > options_.timeout_s) lost(p, t - last_seen_s_[r]);
  }
}

void Watchdog::lost(int peer, double silent_s) {
  std::string context;
  {
    const std::lock_guard<std::mutex> lock(context_mutex_);
    context = context_;
  }
  std::fprintf(stderr,
               "rapid-sweep: rank %d (host %s) sent no heartbeat for %.1f s (killed, stopped "
               "or unreachable; --heartbeat-timeout %g): ending the job%s\n",
               peer, hosts_[static_cast<size_t>(peer)].c_str(), silent_s, options_.timeout_s,
               context.c_str());
  std::fflush(stderr);
  MPI_Abort(MPI_COMM_WORLD, options_.lost_exit_code);
  std::_Exit(options_.lost_exit_code);
}

}  // namespace rapid
