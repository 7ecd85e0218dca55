// `rapid-sweep JOB.yaml -o OUT.h5 [--threads N] [--chunk N] [--quiet] [--progress-interval S]
//              [--fidelity analytical|des|auto] [--precision high] [--des-top-k K] [--full]
//              [--resume] [--overwrite] [--max-points N] [--keep all|feasible|top-K]`
// The MPI driver (docs/architecture.md "Data flow"): every point of a job's search space evaluated
// once, one HDF5 row per point. `des` simulates every point (docs/des.md); `auto` runs the
// analytical model everywhere, then the simulator on the best K points of each (GPU
// count, hardware variant), K from --des-top-k or the job's simulation.des_top_k.
//
// Order: MPI init -> command line -> (validation phase, every rank) spec, enumerator,
// evaluator, output path -> agreement on the outcome -> (sweep phase) ResultStore on a
// temporary path -> scheduler -> provenance -> commit (rename to OUT.h5).
//
// Exit codes (docs/architecture.md "Errors"): 0 success; 2 bad input (command line, job, configs,
// output directory), found before any file is created, on every rank alike, so every rank
// exits 2 cleanly and only one prints; 1 anything else. A failure during the sweep removes
// the temporary file and ends every rank with MPI_Abort, so no rank waits forever and no
// file is left at the output path.
//
// Testing hook: RAPID_SWEEP_TEST_FAIL_RANK=R makes rank R throw an InternalError after
// writing its first chunk (the integration tests check the failure path with it).
#include <fmt/format.h>
#include <omp.h>
#include <signal.h>
#include <sys/resource.h>
#include <unistd.h>
#include <CLI/CLI.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <memory>
#include <numeric>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "apps/cli_suggest.hpp"
#include "rapid/common/error.hpp"
#include "rapid/common/mpi_env.hpp"
#include "rapid/common/version.hpp"
#include "rapid/eval/point_evaluator.hpp"
#include "rapid/io/output_check.hpp"
#include "rapid/io/points_table.hpp"
#include "rapid/io/result_store.hpp"
#include "rapid/spec/sweep_spec.hpp"
#include "rapid/spec/yaml_reader.hpp"
#include "rapid/sweep/enumerator.hpp"
#include "rapid/sweep/scheduler.hpp"
#include "rapid/sweep/stored_candidates.hpp"
#include "rapid/sweep/watchdog.hpp"

namespace fs = std::filesystem;

namespace {

struct Options {
  std::string job;
  std::string output;
  int threads = 0;  // 0: OpenMP's default (OMP_NUM_THREADS or the cores of the rank)
  int64_t chunk = 0;
  bool quiet = false;
  // A log file's longest gap between progress lines (SchedulerOptions::progress_interval_s).
  double progress_interval_s = 30;
  std::string fidelity = "analytical";
  std::string precision;
  int64_t des_top_k = 0;  // 0: the job's simulation.des_top_k
  bool full = false;
  bool resume = false;
  bool overwrite = false;
  double max_points = 0;  // 0: the default cap (SearchSpace::max_candidates)
  std::string keep = "all";
  // A rank silent this long ends the job (watchdog.hpp). 300 s as Slurm's SlurmdTimeout
  // default (slurm.conf(5)): a node that busy is not declared dead by Slurm either.
  double heartbeat_timeout_s = 300;
};

// Everything the sweep needs, built in the validation phase.
struct Prepared {
  rapid::Fidelity fidelity = rapid::Fidelity::Analytical;
  int64_t top_k = 0;
  rapid::Keep keep = rapid::Keep::All;
  int64_t keep_k = 0;
  double enumerate_s = 0;
  rapid::SweepSpec spec;
  std::unique_ptr<rapid::Enumerator> enumerator;
  std::unique_ptr<rapid::PointEvaluator> evaluator;
};

// Exit code of a sweep stopped by a signal or by a lost rank (its partial file kept for
// --resume).
constexpr int kExitStopped = 3;

// Longest path of the temporary file MPI-IO is given (ROMIO aborts a little above 240).
constexpr size_t kMaxMpiIoPath = 220;

// Bad output paths are bad input: the directory must exist and be writable, and the path
// must not be a directory. An existing result file is replaced only with --overwrite.
void check_output_path(const std::string& output, const std::string& job, bool overwrite) {
  if (output.empty()) throw rapid::InputError("<command line>", "-o", output, "a file path");
  const fs::path out(output);
  fs::path dir = out.parent_path();
  if (dir.empty()) dir = ".";
  std::error_code ec;
  if (!fs::is_directory(dir, ec))
    throw rapid::InputError(
        "<command line>", "-o", output,
        fmt::format("a file in an existing directory ({} does not exist)", dir.string()));
  if (fs::is_directory(out, ec))
    throw rapid::InputError("<command line>", "-o", output, "a file name, not a directory");
  // The result replaces the path: only a regular file may be replaced (never a device,
  // FIFO or symlink, never the job file itself).
  const fs::file_status st = fs::symlink_status(out, ec);
  if (fs::exists(st) && !fs::is_regular_file(st))
    throw rapid::InputError("<command line>", "-o", output,
                            "a new or regular file (not a device, FIFO, socket or symlink)");
  if (fs::exists(st) && fs::equivalent(out, fs::path(job), ec))
    throw rapid::InputError("<command line>", "-o", output, "a path other than the job file");
  if (fs::exists(st) && !overwrite)
    throw rapid::InputError("<command line>", "-o", output,
                            "a new file (it exists: pass --overwrite to replace it)");
  // The file's own name is the OS's affair (NAME_MAX); MPI-IO opens the temporary file in
  // its directory and aborts on paths of more than about 240 characters (ROMIO).
  if (out.filename().string().size() > 255)
    throw rapid::InputError("<command line>", "-o", output, "a file name of at most 255 bytes");
  const std::string temp = fs::absolute(rapid::ResultStore::temp_path_for(output), ec).string();
  if (temp.size() > kMaxMpiIoPath)
    throw rapid::InputError(
        "<command line>", "-o", output,
        fmt::format("a file in a directory whose absolute path is short enough for MPI-IO ({} "
                    "characters for {})",
                    kMaxMpiIoPath, temp));
  if (::access(dir.c_str(), W_OK | X_OK) != 0)
    throw rapid::InputError("<command line>", "-o", output,
                            fmt::format("a file in a writable directory ({})", dir.string()));
}

// --fidelity analytical|des|auto; --precision high is another name for des.
rapid::Fidelity parse_fidelity(const Options& o) {
  std::string f = o.fidelity;
  if (!o.precision.empty()) {
    if (o.precision != "high" && o.precision != "standard")
      throw rapid::InputError("<command line>", "--precision", o.precision, "high or standard");
    const std::string alias = o.precision == "high" ? "des" : "analytical";
    if (f != "analytical" && f != alias)
      throw rapid::InputError("<command line>", "--precision", o.precision,
                              fmt::format("a precision agreeing with --fidelity {}", f));
    f = alias;
  }
  if (f == "analytical") return rapid::Fidelity::Analytical;
  if (f == "des") return rapid::Fidelity::Des;
  if (f == "auto") return rapid::Fidelity::Auto;
  throw rapid::InputError("<command line>", "--fidelity", f, "analytical, des or auto");
}

// --keep all | feasible | top-K (K >= 1).
void parse_keep(const Options& o, Prepared& p) {
  if (o.keep == "all") return;
  if (o.keep == "feasible") {
    p.keep = rapid::Keep::Feasible;
  } else {
    char* end = nullptr;
    const char* k = o.keep.c_str() + 4;
    const long long v = o.keep.rfind("top-", 0) == 0 ? std::strtoll(k, &end, 10) : 0;
    if (v < 1 || !end || *end != '\0' || end == k || v > (1ll << 30))
      throw rapid::InputError("<command line>", "--keep", o.keep,
                              "all, feasible or top-K with K a whole number from 1 to 2^30 "
                              "(top-10)");
    p.keep = rapid::Keep::TopK;
    p.keep_k = v;
  }
  if (o.resume)
    throw rapid::InputError("<command line>", "--keep", o.keep,
                            "--keep all with --resume (only a file with every row resumes)");
}

// Every rank alike: the command line and the job's files (nothing collective).
void prepare_spec(const Options& o, Prepared& p) {
  if (std::isnan(o.max_points))  // CLI11's range check lets NaN through
    throw rapid::InputError("<command line>", "--max-points", "nan", "a number from 1 to 1e15");
  p.fidelity = parse_fidelity(o);
  parse_keep(o, p);
  p.spec = rapid::load_sweep_spec(o.job);
  p.top_k = o.des_top_k > 0 ? o.des_top_k : p.spec.simulation.des_top_k;
  if (o.max_points > 0) p.spec.search.max_candidates = o.max_points;
}

// Collective (the enumeration's counting is split over the ranks), once every rank's spec
// loaded: the index space, the evaluator and the output checks.
void prepare_sweep(const rapid::MpiEnv& mpi, const Options& o, Prepared& p) {
  const auto t0 = std::chrono::steady_clock::now();
  rapid::EnumerationShare share;
  share.part = mpi.rank();
  share.parts = mpi.size();
  share.sum = [&mpi](std::span<int64_t> v) { mpi.allreduce_sum(v); };
  p.enumerator = std::make_unique<rapid::Enumerator>(p.spec, share);
  p.enumerate_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  rapid::DesOptions des;
  if (o.full || p.spec.simulation.des_full) des.replicas = rapid::des::ReplicaMode::All;
  if (o.full) des.steady_state = false;
  p.evaluator = std::make_unique<rapid::PointEvaluator>(p.spec, p.fidelity, des);
  check_output_path(o.output, o.job, o.overwrite);
  // Where no file can be created (/proc, a read-only directory) or with no room for the
  // result file (a full disk, RLIMIT_FSIZE): bad input, before any file exists
  // (docs/bad-input.md). Rows: every point (all, and at most that for feasible), none to
  // speak of for top-K.
  // A resumed run (or one that may resume the partial file it finds) needs room for what
  // the partial file does not hold yet (the whole file's bound less the partial's size) and
  // for the file it is rebuilt into at the end (the bound again: ResultStore::rebuild).
  const int64_t rows = p.keep == rapid::Keep::TopK ? 0 : p.enumerator->size();
  uint64_t bytes = rapid::result_file_bytes(rows, p.spec);
  std::error_code ec;
  const std::string partial = rapid::ResultStore::temp_path_for(o.output);
  if (!o.overwrite && std::filesystem::is_regular_file(partial, ec)) {
    const uintmax_t have = std::filesystem::file_size(partial, ec);
    bytes = ec ? bytes : 2 * bytes - std::min<uint64_t>(bytes, have);
  }
  rapid::check_output_file(o.output, "-o", bytes, {o.job});
}

/// The texts of every config file a row depends on: the job, model, network, hardware
/// variants, prediction intervals, and the training and serving stack files with their
/// `base:` chains ("a.yaml <- b.yaml"), as they are now.
std::string config_texts(const rapid::SweepSpec& spec) {
  std::string all = spec.job.yaml + "\n" + spec.model_source.yaml + "\n" + spec.network_source.yaml;
  for (const rapid::Source& h : spec.hardware_sources) all += "\n" + h.yaml;
  all += "\n" + spec.intervals_source.yaml;  // the rows' prediction intervals
  for (const std::string& chain : {spec.training.framework.path, spec.serving.stack.path}) {
    for (size_t at = 0; at < chain.size();) {
      const size_t end = std::min(chain.find(" <- ", at), chain.size());
      const std::string file = chain.substr(at, end - at);
      all += "\n" + file + "\n" + rapid::read_text_file(file);
      at = end + 4;
    }
  }
  return all;
}

// Fingerprint of what a rank loaded (job, model, hardware and network text, point count):
// ranks must agree, else they would sweep different spaces into one file.
int64_t fingerprint(const Prepared& p) {
  const std::string all = config_texts(p.spec) + std::to_string(p.enumerator->size());
  return static_cast<int64_t>(std::hash<std::string>{}(all)&0x7fffffffffffffffull);
}

// SIGTERM/SIGINT/SIGHUP/SIGUSR1 (Slurm's time-limit warning with --signal, scancel,
// Ctrl-C): every rank stops after the point each thread is on, writing the rows of its
// chunk done so far, and the partial file is kept for --resume (request_stop() only stores
// a flag: async-signal-safe).
extern "C" void stop_on_signal(int) {
  rapid::request_stop();
}

void stop_on_signals() {
  struct sigaction sa {};
  sa.sa_handler = stop_on_signal;
  sigemptyset(&sa.sa_mask);
  for (int sig : {SIGTERM, SIGINT, SIGHUP, SIGUSR1}) sigaction(sig, &sa, nullptr);
}

/// Seconds MPI_Finalize may take: 60, or RAPID_FINALIZE_TIMEOUT_S (tests).
double finalize_timeout_s() {
  const char* env = std::getenv("RAPID_FINALIZE_TIMEOUT_S");
  const double v = env ? std::atof(env) : 0.0;
  return v > 0 ? v : 60.0;
}

/// What a resumed run must share with the run that wrote the partial file.
std::string resume_key(const Prepared& p, const std::string& fidelity) {
  return fmt::format("rapid-sweep {} {}\nfidelity {}\npoints {}\n", rapid::version(),
                     rapid::git_revision(), fidelity, p.enumerator->size()) +
         config_texts(p.spec);
}

std::string fidelity_text(const Prepared& p) {
  switch (p.fidelity) {
    case rapid::Fidelity::Analytical:
      return "analytical";
    case rapid::Fidelity::Des:
      return "des";
    case rapid::Fidelity::Auto:
      break;
  }
  return fmt::format("auto (des on the best {} per GPU count, hardware and scenario)", p.top_k);
}

int64_t peak_rss_bytes() {
  rusage ru{};
  if (getrusage(RUSAGE_SELF, &ru) != 0) return 0;
  return static_cast<int64_t>(ru.ru_maxrss) * 1024;  // Linux reports KiB
}

std::string join_args(int argc, char** argv) {
  std::string s;
  for (int i = 0; i < argc; ++i) s += (i ? " " : "") + std::string(argv[i]);
  return s;
}

// The same command again resumes its stopped sweep (the partial file's key matches, else it
// starts again); --resume insists (another key is bad input); --overwrite starts again.
rapid::ResumeMode resume_mode(const Options& o) {
  if (o.resume) return rapid::ResumeMode::Yes;
  return o.overwrite ? rapid::ResumeMode::No : rapid::ResumeMode::IfSameKey;
}

// A sweep stopped by a signal: the partial file kept for --resume, exit 3.
int stopped(const rapid::MpiEnv& mpi, rapid::ResultStore& store) {
  if (!store.keep_partial()) {
    if (mpi.is_root())
      std::fprintf(stderr,
                   "rapid-sweep: stopped by a signal; a --keep feasible / top-K sweep cannot "
                   "be resumed: nothing was written\n");
    return kExitStopped;
  }
  if (mpi.is_root())
    std::fprintf(stderr,
                 "rapid-sweep: stopped by a signal; the rows done are in %s: run the same "
                 "command with --resume to compute the rest\n",
                 store.temp_path().c_str());
  return kExitStopped;
}

int run_sweep(const rapid::MpiEnv& mpi, const Options& o, Prepared& p,
              const std::string& command_line, rapid::Watchdog& watchdog) {
  const auto t0 = std::chrono::steady_clock::now();
  // Opening a partial file to resume can be refused (another job, version, fidelity): bad
  // input found by every rank alike (the key is broadcast), so one message and exit 2.
  std::optional<rapid::ResultStore> opened;
  try {
    opened.emplace(mpi, o.output, p.spec, p.enumerator->size(), p.enumerator->baseline_index(),
                   resume_key(p, fidelity_text(p)), resume_mode(o), p.keep != rapid::Keep::All);
  } catch (const rapid::InputError& e) {
    if (mpi.is_root()) std::fprintf(stderr, "rapid-sweep: %s\n", e.what());
    return rapid::kExitBadInput;
  }
  rapid::ResultStore& store = *opened;
  watchdog.set_context(fmt::format(
      "; the rows done are in {}: run the same command with --resume to compute the rest",
      store.temp_path()));
  if (mpi.is_root() && !o.quiet && store.resumed()) {
    int64_t left = 0;
    for (const auto& [a, b] : store.missing()) left += b - a;
    std::fprintf(stderr, "rapid-sweep: resuming %s: %lld of %lld points left\n",
                 store.temp_path().c_str(), static_cast<long long>(left),
                 static_cast<long long>(store.num_points()));
  }
  if (mpi.is_root() && o.resume && !store.resumed())
    std::fprintf(stderr,
                 "rapid-sweep: note: --resume: no partial file of %s (%s): computing every "
                 "point\n",
                 o.output.c_str(), store.temp_path().c_str());
  std::optional<int> fail_rank;
  if (const char* env = std::getenv("RAPID_SWEEP_TEST_FAIL_RANK")) fail_rank = std::atoi(env);
  rapid::SchedulerOptions so;
  so.fixed_chunk = o.chunk;
  so.progress = !o.quiet;
  so.progress_interval_s = o.progress_interval_s;
  so.todo = store.missing();
  if (so.todo.empty()) so.todo = {{0, 0}};  // resumed with every row written: none to do
  if (p.fidelity == rapid::Fidelity::Auto) so.top_k = p.top_k;
  so.keep = p.keep;
  so.keep_k = p.keep_k;
  // --keep all: each evaluating rank stores the file chunks its chunks hold whole, and an
  // analytical sweep's chunks are whole file chunks (a DES point takes milliseconds: 4096 of
  // them would unbalance the ranks' ends, so its few rows go as rows).
  // RAPID_SWEEP_COMPRESS_ON_RANK0=1: the write path before issue 35 (rank 0's writer thread
  // filters every row through HDF5), for the comparison in docs/production.md sec 5.
  so.store_chunks =
      p.keep == rapid::Keep::All && std::getenv("RAPID_SWEEP_COMPRESS_ON_RANK0") == nullptr;
  if (p.keep == rapid::Keep::All && p.fidelity != rapid::Fidelity::Des)
    so.align = rapid::PointsTable::kChunkRows;
  std::vector<int64_t> simulated_before;  // a resumed auto sweep: rows simulated earlier
  if (so.top_k > 0 && store.resumed())
    so.simulated_before = [&simulated_before](int64_t i) {
      return std::binary_search(simulated_before.begin(), simulated_before.end(), i);
    };
  if (mpi.is_root()) {
    so.write = [&store](rapid::RowBlock b) { store.write(std::move(b)); };
    so.update = [&store](rapid::RowBlock b) { store.update(std::move(b)); };
  }
  // Testing hooks: a failure after the rank's first chunk went out, or a stop (as SIGTERM
  // does) once this rank has evaluated N chunks (a partial file made without timing).
  const char* stop_env = std::getenv("RAPID_SWEEP_TEST_STOP_AFTER_CHUNKS");
  const int64_t stop_after = stop_env ? std::atoll(stop_env) : 0;
  int64_t chunks_done = 0;
  so.after_chunk = [&] {
    if (fail_rank && *fail_rank == mpi.rank())
      throw rapid::InternalError("injected failure (RAPID_SWEEP_TEST_FAIL_RANK)");
    if (stop_after > 0 && ++chunks_done >= stop_after) rapid::request_stop();
  };
  if (mpi.is_root() && !o.quiet)
    for (const std::string& r : p.enumerator->unused_recompute_options())
      std::fprintf(stderr,
                   "rapid-sweep: note: search recompute option %s is legal for no layout "
                   "(recompute_num_layers larger than a model chunk, or the stack lacks it)\n",
                   r.c_str());
  rapid::Scheduler scheduler(mpi, *p.enumerator, *p.evaluator, so);
  const rapid::SweepStats stats = scheduler.run();
  if (mpi.allreduce_max(stats.interrupted ? 1 : 0) > 0) return stopped(mpi, store);
  if (so.top_k > 0 && store.resumed())
    simulated_before = rapid::offer_stored_rows(
        mpi, store, *p.enumerator, rapid::done_ranges(store.missing(), store.num_points()),
        scheduler);
  // --keep top-K: the kept rows first (refine() then rewrites those it simulates).
  if (p.keep == rapid::Keep::TopK) scheduler.finish_keep();
  const int64_t simulated = so.top_k > 0 ? scheduler.refine() : 0;
  if (mpi.allreduce_max(scheduler.stats().interrupted ? 1 : 0) > 0) return stopped(mpi, store);

  // What --keep left out, summed over the ranks.
  std::vector<int64_t> census;
  for (const rapid::RowCensus* c : {&scheduler.seen(), &scheduler.kept()}) {
    census.insert(census.end(), c->by_status.begin(), c->by_status.end());
    census.insert(census.end(), c->by_step.begin(), c->by_step.end());
  }
  mpi.allreduce_sum(census);
  rapid::DroppedRows dropped;
  int64_t kept_rows = 0;
  {
    const size_t S = rapid::RowCensus::kStatuses, B = rapid::RowCensus::kBins, half = S + B;
    for (size_t i = 0; i < S; ++i) {
      dropped.by_status.push_back(census[i] - census[half + i]);
      kept_rows += census[half + i];
    }
    for (size_t j = 0; j < B; ++j)
      dropped.step_time_counts.push_back(census[S + j] - census[half + S + j]);
    for (int j = 0; j <= static_cast<int>(B); ++j)
      dropped.step_time_edges_s.push_back(rapid::RowCensus::edge(j));
  }
  if (p.keep != rapid::Keep::All && mpi.is_root()) store.write_dropped(dropped);

  // Per-phase seconds, summed over the ranks (rank 0's writer thread for write).
  const rapid::SweepStats& st = scheduler.stats();
  const std::vector<const char*> phase_names = {"enumerate", "evaluate", "pack",
                                                "compress",  "wait",     "write"};
  std::vector<double> phases = {p.enumerate_s, st.evaluate_s,
                                st.pack_s,     st.compress_s,
                                st.wait_s,     mpi.is_root() ? store.write_busy_s() : 0.0};
  const size_t F = phases.size();
  // The same per rank (docs/production.md sec 4: what rank 0 carries beside the others).
  std::vector<double> per_rank(F * static_cast<size_t>(mpi.size()), 0.0);
  std::copy(phases.begin(), phases.end(),
            per_rank.begin() + static_cast<std::ptrdiff_t>(F * static_cast<size_t>(mpi.rank())));
  mpi.allreduce_sum(per_rank);
  mpi.allreduce_sum(phases);
  // The simulator's rate counts the points it simulated (rows whose DES ran: not those that
  // ended at the memory check).
  std::vector<int64_t> des_rows = {st.simulated_rows};
  mpi.allreduce_sum(des_rows);
  const double wall =
      mpi.broadcast(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());

  int64_t n = 0;  // the points this run computed (resumed: of the file's)
  for (const auto& [a, b] : so.todo) n += b - a;
  rapid::RunProvenance run;
  run.command_line = command_line;
  run.fidelity = fidelity_text(p);
  run.threads_per_rank = omp_get_max_threads();
  run.wall_time_s = wall;
  run.peak_rss_bytes = mpi.allreduce_max(peak_rss_bytes());
  run.hostnames = mpi.hostnames();
  run.keep = o.keep;
  run.points_swept = n;
  run.baseline_kept_extra = p.keep == rapid::Keep::TopK && scheduler.baseline_kept_extra();
  for (size_t k = 0; k < F; ++k) run.phase_s.emplace_back(phase_names[k], phases[k]);
  store.commit(run);

  if (mpi.is_root() && !o.quiet) {
    const std::string of = n == store.num_points() ? "" : fmt::format(" of {}", store.num_points());
    std::printf(
        "rapid-sweep: %lld%s points in %.3f s (%.0f points/s) on %d rank%s x %lld thread%s, "
        "peak RSS %.1f MiB (max over ranks); fidelity %s%s; wrote %s\n",
        static_cast<long long>(n), of.c_str(), wall, wall > 0 ? static_cast<double>(n) / wall : 0.0,
        mpi.size(), mpi.size() == 1 ? "" : "s", static_cast<long long>(run.threads_per_rank),
        run.threads_per_rank == 1 ? "" : "s",
        static_cast<double>(run.peak_rss_bytes) / (1024.0 * 1024.0), run.fidelity.c_str(),
        simulated > 0 ? fmt::format(", {} points simulated", simulated).c_str() : "",
        o.output.c_str());
    const auto threads = static_cast<double>(run.threads_per_rank);
    if (des_rows[0] > 0)
      std::printf(
          "rapid-sweep: discrete-event simulation: %lld points simulated, %.1f points/s "
          "per core (%.2f core-s of evaluation)\n",
          static_cast<long long>(des_rows[0]),
          // evaluate is each rank's time in its OpenMP loops: x threads = core-seconds
          // (the points that ended at the memory check included)
          phases[1] > 0 ? static_cast<double>(des_rows[0]) / (phases[1] * threads) : 0.0,
          phases[1] * threads);
    // The phases, summed over the ranks; then per rank: the first 8 (rank 0 first: it also
    // writes), then the others' maxima.
    auto phase_line = [&](const double* v, size_t from) {
      std::string line;
      for (size_t k = from; k < F; ++k)
        line += fmt::format("{}{} {:.2f}", k > from ? ", " : "", phase_names[k], v[k]);
      return line;
    };
    std::printf("rapid-sweep: seconds over the ranks: %s (write: rank 0's writer thread)\n",
                phase_line(phases.data(), 0).c_str());
    const auto P = static_cast<size_t>(mpi.size());
    std::vector<double> others_max(F, 0.0);
    for (size_t r = 0; r < P; ++r) {
      const double* v = per_rank.data() + F * r;
      if (r < 8)
        std::printf("rapid-sweep: rank %zu: %s s\n", r, phase_line(v, 1).c_str());
      else
        for (size_t k = 0; k < F; ++k) others_max[k] = std::max(others_max[k], v[k]);
    }
    if (P > 8)
      std::printf("rapid-sweep: ranks 8-%zu, most: %s s\n", P - 1,
                  phase_line(others_max.data(), 1).c_str());
    if (p.keep != rapid::Keep::All)
      std::printf("rapid-sweep: --keep %s: %lld rows kept, %lld dropped\n", o.keep.c_str(),
                  static_cast<long long>(kept_rows),
                  static_cast<long long>(std::accumulate(dropped.by_status.begin(),
                                                         dropped.by_status.end(), int64_t{0})));
    std::fflush(stdout);
  }
  return 0;
}

}  // namespace

int sweep_main(int argc, char** argv, std::unique_ptr<rapid::MpiEnv>& mpi);

int main(int argc, char** argv) {
  std::unique_ptr<rapid::MpiEnv> mpi;
  const int rc = sweep_main(argc, argv, mpi);
  // MPI_Finalize waits for every rank and for mpirun: a stopped mpirun (SIGSTOP) or a lost
  // node would hold the ranks there for ever, after their work is written. Past the timeout
  // a rank exits with its code (docs/production.md "Ending").
  if (mpi) mpi->finalize_within(rc, finalize_timeout_s());
  return rc;
}

int sweep_main(int argc, char** argv, std::unique_ptr<rapid::MpiEnv>& mpi) {
  // Before anything slow (MPI_Init, which under srun --mpi=pmix on a loaded node took
  // seconds; parsing, loading, enumerating): a stop request that comes early (Slurm's
  // time-limit warning, scancel) ends the sweep cleanly instead of by the signal's default
  // action. Open MPI installs handlers only for SIGSEGV, SIGBUS, SIGFPE and SIGILL (its
  // opal_signal parameter), so these stay.
  stop_on_signals();
  try {
    mpi = std::make_unique<rapid::MpiEnv>(argc, argv);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "rapid-sweep: %s\n", e.what());
    return 1;
  }
  const std::string command_line = join_args(argc, argv);

  Options o;
  CLI::App app{"rapid-sweep: predict the step time of every parallel layout of a job"};
  app.add_option("job", o.job, "job YAML file (jobs/*.yaml)")->required();
  app.add_option("-o,--output", o.output, "HDF5 result file to write")->required();
  app.add_option("--threads", o.threads, "OpenMP threads per rank (default: OpenMP's)")
      ->check(CLI::Range(1, 4096));
  app.add_option("--chunk", o.chunk, "fixed chunk size in points (default: guided sizes)")
      ->check(CLI::Range(int64_t{1}, int64_t{1} << 20));
  app.add_flag("--quiet", o.quiet, "no progress line and no summary");
  app.add_option("--progress-interval", o.progress_interval_s,
                 "stderr not a terminal (mpirun, a log file): seconds between progress lines "
                 "at most (default 30; also a line after each 5% of the points, and the last "
                 "one always); a terminal gets the line redrawn once a second")
      ->check(CLI::Range(0.01, 1e6));
  app.add_option("--fidelity", o.fidelity,
                 "analytical (default), des (discrete-event simulation of every point) or auto "
                 "(analytical, then des on the best points)");
  app.add_option("--precision", o.precision, "high: another name for --fidelity des");
  app.add_option(
         "--des-top-k", o.des_top_k,
         "auto: simulate the best K points per GPU count, hardware and scenario (default: the "
         "job's simulation.des_top_k, 4)")
      ->check(CLI::Range(int64_t{1}, int64_t{1} << 30));
  app.add_flag("--full", o.full,
               "des/auto: simulate every DP replica and every micro-batch (no symmetry or "
               "steady-state shortcut)");
  app.add_flag("--resume", o.resume,
               "continue the stopped sweep of the same command, computing only the rows its "
               "partial file lacks, and refuse one of another job, config, fidelity or "
               "version (without --resume the same command resumes too, and another one starts "
               "again)");
  app.add_flag("--overwrite", o.overwrite,
               "replace OUT.h5 if it exists (refused without), and start again rather than "
               "resume a stopped sweep");
  app.add_option("--max-points", o.max_points,
                 "largest search space walked, in candidate points before the legality filter "
                 "(default 1e9)")
      ->check(CLI::Range(1.0, 1e15));
  app.add_option("--keep", o.keep,
                 "rows of the file: all (default: one per point, resumable), feasible (status "
                 "ok only) or top-K (the best K per GPU count, hardware, scenario and load, "
                 "e.g. top-10); the file counts what it dropped (/dropped)");
  app.add_option("--heartbeat-timeout", o.heartbeat_timeout_s,
                 "seconds without a heartbeat after which a rank counts as lost (killed, "
                 "stopped, unreachable) and the job ends with exit 3, its partial file kept for "
                 "--resume (default 300; 0: no watchdog)")
      ->check(CLI::Range(0.0, 1e6));
  app.set_version_flag(
      "--version",
      fmt::format("rapid-sweep {} ({}); {}; HDF5 {}", rapid::version(), rapid::git_revision(),
                  rapid::mpi_library_version(), rapid::hdf5_library_version()));
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    // Every rank parses the same argv; only rank 0 prints: --help and --version as CLI11
    // does, a bad command line as one line like every other bad input.
    if (e.get_exit_code() == 0) return mpi->is_root() ? app.exit(e) : 0;
    if (mpi->is_root()) {
      const std::string hint = rapid::parse_error_hint(app, e);  // "did you mean --threads?"
      std::fprintf(stderr, "rapid-sweep: <command line>: %s (%srapid-sweep --help lists them)\n",
                   e.what(), hint.empty() ? "" : (hint + "; ").c_str());
    }
    return rapid::kExitBadInput;
  }
  if (o.threads > 0) omp_set_num_threads(o.threads);
  std::unique_ptr<rapid::Watchdog> watchdog;
  try {
    watchdog = std::make_unique<rapid::Watchdog>(
        *mpi, rapid::WatchdogOptions{o.heartbeat_timeout_s, kExitStopped});
  } catch (const std::exception& e) {
    std::fprintf(stderr, "rapid-sweep: rank %d: %s\n", mpi->rank(), e.what());
    mpi->abort(1);
  }

  // Validation phase: nothing is created yet, so any failure exits cleanly on every rank.
  // Two steps, each agreed over the ranks: the spec (loaded by every rank alone), then the
  // enumeration (collective: its counting is shared) and the output checks.
  Prepared prepared;
  auto agree = [&](const std::function<void()>& step) -> int {
    int code = 0;
    std::string message;
    try {
      step();
    } catch (const rapid::InputError& e) {
      code = rapid::kExitBadInput;
      message = e.what();
    } catch (const std::exception& e) {
      code = 1;
      message = e.what();
    }
    const int64_t worst = mpi->allreduce_max(code);
    const int64_t first_failing = mpi->allreduce_min(code != 0 ? mpi->rank() : mpi->size());
    if (worst != 0 && mpi->rank() == first_failing)
      std::fprintf(stderr, "rapid-sweep: %s\n", message.c_str());
    return static_cast<int>(worst);
  };
  try {
    if (const int rc = agree([&] { prepare_spec(o, prepared); })) return rc;
    if (const int rc = agree([&] { prepare_sweep(*mpi, o, prepared); })) return rc;
    const int64_t mine = fingerprint(prepared);
    if (mpi->allreduce_min(mine) != mpi->allreduce_max(mine)) {
      if (mpi->is_root())
        std::fprintf(stderr,
                     "rapid-sweep: %s: the ranks loaded different job/model/hardware/network "
                     "files (check that every node sees the same files and RAPID_CONFIG_DIR)\n",
                     o.job.c_str());
      return rapid::kExitBadInput;
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "rapid-sweep: rank %d: %s\n", mpi->rank(), e.what());
    mpi->abort(1);
  }

  // Sweep phase: a failure here may leave other ranks waiting, so it ends the whole job.
  try {
    return run_sweep(*mpi, o, prepared, command_line, *watchdog);
  } catch (const std::exception& e) {
    const int rc = dynamic_cast<const rapid::InputError*>(&e) ? rapid::kExitBadInput : 1;
    std::fprintf(stderr, "rapid-sweep: rank %d: %s\n", mpi->rank(), e.what());
    std::fflush(stderr);
    if (mpi->size() > 1) mpi->abort(rc);
    return rc;
  }
}
