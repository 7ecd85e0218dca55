// `rapid`: one point at a time. Subcommands:
//   predict JOB [--tp N --pp N ...]   evaluate one layout of a job (default: its baseline);
//   predict --from-chakra DIR --hardware H --network N   replay a Chakra trace (docs/chakra.md)
//   predict JOB --from-chakra DIR [--scenario S]   replay it on the job's system and scenario
//   trace JOB [--tp N ...] -o DIR [--ranks A-B]   per-rank Chakra ET files; trace inspect DIR
//            [--fidelity des [--timeline T.json] [--full]]  by discrete-event simulation
//   validate [--reference-dir D]      predictions vs published measurements, MAPE per table
//   calibrate --hardware H --measurements M -o OUT   fit efficiencies to measured rows
//   op attention --hardware F ...     one operator's time per candidate tile (op_command.hpp)
//   list [models|hardware|networks|frameworks|serving]   what a job may name (list_command.hpp)
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <CLI/CLI.hpp>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <optional>

#include "apps/calibrate_command.hpp"
#include "apps/cli_suggest.hpp"
#include "apps/launch_command.hpp"
#include "apps/layout_options.hpp"
#include "apps/list_command.hpp"
#include "apps/model_command.hpp"
#include "apps/netcheck_command.hpp"
#include "apps/op_command.hpp"
#include "apps/replay_command.hpp"
#include "apps/result_point.hpp"
#include "apps/trace_command.hpp"
#include "rapid/analytical/analytical_evaluator.hpp"
#include "rapid/common/error.hpp"
#include "rapid/common/version.hpp"
#include "rapid/des/sim_size.hpp"
#include "rapid/eval/point_evaluator.hpp"
#include "rapid/eval/report.hpp"
#include "rapid/eval/thermal_report.hpp"
#include "rapid/inference/serving_evaluator.hpp"
#include "rapid/inference/serving_report.hpp"
#include "rapid/io/csv_export.hpp"
#include "rapid/spec/legality.hpp"
#include "rapid/spec/sweep_spec.hpp"
#include "rapid/sweep/enumerator.hpp"
#include "validate/validate_command.hpp"

namespace {

struct PredictOptions {
  std::string job;
  rapid::LayoutOptions layout;  ///< --tp, --pp, ... (shared with `rapid trace`)
  bool ops = false;
  std::string fidelity = "analytical";
  std::optional<std::string> precision;
  std::optional<std::string> timeline;
  bool full = false;
  std::optional<std::string> scenario;
  bool power = false;
  rapid::ChakraReplayOptions replay;  ///< --from-chakra DIR --hardware H --network N
  std::optional<std::string> result;  ///< --result F.h5 --point N: a sweep's row
  std::optional<int64_t> point;
};

// `--fidelity analytical|des` (`--precision high` is `des`, `standard` is `analytical`).
rapid::Fidelity predict_fidelity(const PredictOptions& o) {
  std::string f = o.fidelity;
  if (o.precision) {
    if (*o.precision != "high" && *o.precision != "standard")
      throw rapid::InputError("<command line>", "--precision", *o.precision, "high or standard");
    const std::string alias = *o.precision == "high" ? "des" : "analytical";
    if (f != "analytical" && f != alias)
      throw rapid::InputError("<command line>", "--precision", *o.precision,
                              fmt::format("a precision agreeing with --fidelity {}", f));
    f = alias;
  }
  if (f == "analytical") return rapid::Fidelity::Analytical;
  if (f == "des") return rapid::Fidelity::Des;
  throw rapid::InputError("<command line>", "--fidelity", f, "analytical or des");
}

/// A serving job's layout is tp, pp, ep (and the GPU count): the training knobs are refused.
void refuse_training_flags(const PredictOptions& o) {
  const std::pair<const char*, bool> flags[] = {
      {"--cp", o.layout.cp.has_value()},
      {"--etp", o.layout.etp.has_value()},
      {"--vpp", o.layout.vpp.has_value()},
      {"--mbs", o.layout.mbs.has_value()},
      {"--zero", o.layout.zero.has_value()},
      {"--sp", o.layout.sp.has_value()},
      {"--recompute", o.layout.recompute.has_value()},
      {"--recompute-method", o.layout.recompute_method.has_value()},
      {"--recompute-num-layers", o.layout.recompute_layers.has_value()},
      {"--cpu-offload-layers", o.layout.offload_layers.has_value()},
      {"--scenario", o.scenario.has_value()},
      {"--power", o.power},
      {"--timeline", o.timeline.has_value()},
      {"--full", o.full},
      {"--ops", o.ops}};
  for (const auto& [flag, given] : flags)
    if (given)
      throw rapid::InputError("<command line>", flag, "<given>",
                              fmt::format("--tp, --pp, --ep, --gpus, --hardware-index or "
                                          "--fidelity ({} is a serving job: mode: inference)",
                                          o.job));
}

/// A simulation past the DES's size bound (des/sim_size.hpp): the request cannot run as
/// asked. The flag that made it simulate every micro-batch is named (--full; --timeline
/// records every one), else the fidelity; exit 2 like any bad input.
[[noreturn]] void refuse_too_large(const PredictOptions& o,
                                   const rapid::des::SimulationTooLarge& e) {
  if (o.full)
    throw rapid::InputError("<command line>", "--full", "true",
                            fmt::format("a step small enough for --full: {}; drop --full (the "
                                        "steady state extrapolates the middle of the step)",
                                        e.what()));
  if (o.timeline)
    throw rapid::InputError("<command line>", "--timeline", *o.timeline,
                            fmt::format("a step small enough to record micro-batch by "
                                        "micro-batch: {}; drop --timeline",
                                        e.what()));
  throw rapid::InputError("<command line>", "--fidelity", "des",
                          fmt::format("a step the simulation can hold: {}; use --fidelity "
                                      "analytical",
                                      e.what()));
}

int run_predict(PredictOptions o) {
  rapid::SweepSpec spec;
  std::optional<int> row_scenario;
  if (o.result) {  // the job and the layout come from the result file's row
    rapid::ResultPoint rp = rapid::load_result_point(*o.result, *o.point);
    for (const std::string& line : rp.lines) std::printf("%s\n", line.c_str());
    spec = std::move(rp.spec);
    o.job = spec.job.path;
    o.layout = rp.layout;
    if (spec.mode == rapid::JobMode::Training) row_scenario = rp.scenario;
  } else {
    spec = rapid::load_sweep_spec(o.job);
    if (spec.mode == rapid::JobMode::Inference) refuse_training_flags(o);
  }
  if (o.power)  // the power columns for this prediction whatever the job says
    for (rapid::NonIdealSpec& s : spec.scenarios) s.power = true;
  rapid::Point p = rapid::resolve_layout(spec, o.layout);
  const bool serving = spec.mode == rapid::JobMode::Inference;
  if (row_scenario) p.scenario = *row_scenario;
  if (o.scenario) p.scenario = rapid::resolve_scenario(spec, *o.scenario);
  const rapid::Fidelity fidelity = predict_fidelity(o);
  if (o.timeline && fidelity != rapid::Fidelity::Des)
    throw rapid::InputError("<command line>", "--timeline", *o.timeline,
                            "--fidelity des (the timeline is the simulation's)");
  if (o.full && fidelity != rapid::Fidelity::Des)
    throw rapid::InputError("<command line>", "--full", "true",
                            "--fidelity des (it simulates every DP replica)");
  if (o.timeline) {  // before any output: a bad path fails alone
    const std::filesystem::path dir = std::filesystem::path(*o.timeline).parent_path();
    std::error_code ec;
    if (!dir.empty() && !std::filesystem::is_directory(dir, ec))
      throw rapid::InputError(
          "<command line>", "--timeline", *o.timeline,
          "a file in an existing directory (" + dir.string() + " does not exist)");
  }
  if (serving) {  // the layout's throughput-latency curve over the job's loads
    // Each load on its own (a load the evaluator fails on is an error row, as in a sweep).
    const rapid::PointEvaluator eval(spec, fidelity);
    rapid::Workload w;
    std::vector<rapid::EvalResult> by_load(spec.serving.loads.size());
    for (size_t k = 0; k < by_load.size(); ++k) {
      p.load = static_cast<int32_t>(k);
      eval.evaluate_guarded(p, w, by_load[k], fidelity);
    }
    std::fputs(rapid::describe_serving(spec, p, by_load).c_str(), stdout);
    std::printf("fidelity    %s\n", fidelity == rapid::Fidelity::Des
                                        ? "des (simulated continuous batching)"
                                        : "analytical (steady-state closed form)");
    return 0;
  }
  rapid::DesOptions des;
  if (o.full) {
    des.replicas = rapid::des::ReplicaMode::All;
    des.steady_state = false;
  }
  rapid::PointEvaluator eval(spec, fidelity, des);
  rapid::Workload w;
  rapid::EvalResult r;
  // One simulation for every line printed: the row, the DES report and the thermal steady
  // states (one "throttled" figure per GPU whichever line shows it).
  rapid::des::Timeline timeline;
  rapid::DesReport report;
  rapid::ThermalReport thermal;
  const bool des_run = fidelity == rapid::Fidelity::Des;
  try {
    eval.evaluate(p, w, r, fidelity,
                  des_run
                      ? rapid::PointEvaluator::DesOutputs{&report, o.timeline ? &timeline : nullptr,
                                                          &thermal, o.timeline.has_value()}
                      : rapid::PointEvaluator::DesOutputs{});
  } catch (const rapid::des::SimulationTooLarge& e) {
    refuse_too_large(o, e);
  }
  // The layer's TP collective as this run's collective model times it (the latency warning
  // quotes it); the op templates built when `w` lacks them (cached template times).
  if (w.layer.forward.empty()) rapid::build_workload_ops(spec.model, spec.training, w);
  const std::optional<rapid::TpCollectiveCost> tp =
      rapid::tp_collective_cost(w, eval.evaluator(p.hardware, p.scenario));
  std::fputs(rapid::describe_result(spec, p, r, tp ? &*tp : nullptr).c_str(), stdout);
  if (o.timeline && r.status != rapid::Status::Ok)
    std::printf("timeline    not written: the layout is %s\n", rapid::status_name(r.status));
  if (des_run && r.status == rapid::Status::Ok) {
    const auto cause = static_cast<rapid::GapCause>(r.fidelity_gap_cause);
    std::printf(
        "fidelity    des (discrete-event simulation); the analytical model gives %.4f s "
        "(DES %+.2f%%)%s\n",
        r.step_time_analytical_s, 100.0 * r.fidelity_gap,
        cause == rapid::GapCause::None
            ? ", every breakdown column within 2% of the step"
            : fmt::format(": they part by more than 2% of the step, most in {} (docs/des.md "
                          "section 10)",
                          rapid::kGapCauseNames[r.fidelity_gap_cause])
                  .c_str());
    std::fputs(rapid::describe_des_report(report).c_str(), stdout);
    if (thermal.periods > 0) {
      std::fputs(rapid::describe_thermal(thermal).c_str(), stdout);
      if (o.timeline)
        rapid::add_thermal_counters(
            thermal, spec.hardware[static_cast<size_t>(p.hardware)].hbm_bandwidth_Bps, timeline);
    }
    if (o.timeline) {
      // Provenance (Trace Event Format "otherData"): what made the timeline.
      timeline.set_metadata(
          "producer", fmt::format("rapid-sweep {} ({})", rapid::version(), rapid::git_revision()));
      timeline.set_metadata("job", o.job);
      timeline.set_metadata("job_name", spec.name);
      timeline.set_metadata("layout", p.par.describe());
      timeline.set_metadata("hardware", spec.hardware[static_cast<size_t>(p.hardware)].name);
      timeline.set_metadata("network", spec.network_of(static_cast<size_t>(p.hardware)).name);
      timeline.set_metadata("scenario", spec.scenarios.empty()
                                            ? std::string("healthy")
                                            : spec.scenarios[static_cast<size_t>(p.scenario)].name);
      timeline.set_metadata("fidelity", o.full ? "des --full" : "des");
      timeline.set_metadata("step_time_s", fmt::format("{:.6g}", r.step_time_s));
      timeline.set_metadata("time_unit", "microseconds (ts, dur); counters per GPU");
      timeline.write_file(*o.timeline, "--timeline");
      std::printf("timeline    %zu events written to %s (chrome://tracing or ui.perfetto.dev)\n",
                  timeline.slices().size(), o.timeline->c_str());
    }
  }
  if (o.ops) {
    const auto& analytical =
        dynamic_cast<const rapid::AnalyticalEvaluator&>(eval.evaluator(p.hardware));
    std::fputs(rapid::describe_ops(w, analytical).c_str(), stdout);
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"rapid: predict one point, validate against published measurements"};
  app.require_subcommand(0, 1);  // --version alone, or one subcommand
  app.set_version_flag("--version",
                       fmt::format("rapid {} ({})", rapid::version(), rapid::git_revision()));

  PredictOptions po;
  CLI::App* predict = app.add_subcommand("predict", "evaluate one layout of a job file");
  predict->add_option("job", po.job,
                      "job YAML file (with --from-chakra: the system and scenario to replay on)");
  rapid::add_layout_options(*predict, po.layout);
  rapid::add_replay_options(*predict, po.replay);
  predict->add_flag("--power", po.power,
                    "energy and power of the step (the power model on, as `nonideal: {power: "
                    "true}`)");
  predict->add_option("--scenario", po.scenario,
                      "non-ideal scenario of the job: its name or index (default the first)");
  predict->add_flag("--ops", po.ops, "print every op of a layer with its time");
  predict->add_option("--fidelity", po.fidelity,
                      "analytical (default) or des (discrete-event simulation, docs/des.md)");
  predict->add_option("--precision", po.precision, "high (= --fidelity des) or standard");
  predict->add_option("--timeline", po.timeline,
                      "with --fidelity des: write a Chrome trace (Perfetto) of the step");
  predict->add_option("--result", po.result,
                      "a rapid-sweep result file: predict its row --point (the job, layout, "
                      "GPU count, hardware and scenario the row was swept with)");
  predict->add_option("--point", po.point, "with --result: the row's point index (its `point`)")
      ->check(CLI::NonNegativeNumber);
  predict->add_flag("--full", po.full,
                    "with --fidelity des: simulate every DP replica and every micro-batch (no "
                    "replica-equivalence or steady-state shortcut)");

  rapid::ValidateOptions vo;
  CLI::App* validate =
      app.add_subcommand("validate", "compare predictions with published measurements");
  rapid::add_validate_options(*validate, vo);

  rapid::OpCommand op(app);              // `rapid op attention ...` (src/apps/op_command.hpp)
  rapid::ModelCommand model(app);        // `rapid model import ...` (src/apps/model_command.hpp)
  rapid::TraceCommand trace(app);        // `rapid trace JOB -o DIR`, `rapid trace inspect DIR`
  rapid::NetcheckCommand netcheck(app);  // `rapid netcheck --workload W ... -o DIR` (docs/ns3.md)
  rapid::ListCommand list(app);          // `rapid list [KIND]`: what a job may name
  rapid::LaunchCommand launch(app);      // `rapid launch JOB --stack S` (docs/launch.md)

  rapid::CalibrateOptions co;
  CLI::App* calibrate = app.add_subcommand(
      "calibrate", "fit efficiency parameters to measured GEMMs and collectives");
  rapid::add_calibrate_options(*calibrate, co);

  std::string export_file, export_csv;
  CLI::App* exporter = app.add_subcommand(
      "export", "write a result file's rows as CSV (enums as names; FILE.gz compressed)");
  exporter->add_option("file", export_file, "HDF5 result file written by rapid-sweep")->required();
  exporter->add_option("--csv", export_csv, "CSV file to write (.gz: gzip)")->required();

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    // CLI11's message with what an unknown word was likely meant to be, on its one line.
    const std::string hint = rapid::parse_error_hint(app, e);
    if (hint.empty()) return app.exit(e) == 0 ? 0 : rapid::kExitBadInput;
    std::fprintf(stderr, "%s (%s)\nRun with --help for more information.\n", e.what(),
                 hint.c_str());
    return rapid::kExitBadInput;
  }
  if (app.get_subcommands().empty()) {
    const std::vector<std::string> names = rapid::subcommand_names(app);
    std::fprintf(stderr, "rapid: a subcommand is required: %s (--help for more)\n",
                 fmt::format("{}", fmt::join(names, ", ")).c_str());
    return rapid::kExitBadInput;
  }
  try {
    if (predict->parsed() && po.replay.dir) {
      po.replay.job = po.job;
      po.replay.scenario = po.scenario;
      return rapid::run_replay(po.replay, po.layout);
    }
    if (predict->parsed() && (po.result.has_value() != po.point.has_value()))
      throw rapid::InputError("<command line>", po.result ? "--point" : "--result", "<none>",
                              "--result F.h5 and --point N together");
    if (predict->parsed() && po.result) {
      if (!po.job.empty() || !rapid::given_flags(po.layout).empty())
        throw rapid::InputError("<command line>", "--result", *po.result,
                                "no job file and no layout option beside it (the row gives "
                                "them; --fidelity, --timeline, --scenario and --power apply)");
    }
    if (predict->parsed() && po.job.empty() && !po.result)
      throw rapid::InputError("<command line>", "job", "<none>", "a job YAML file");
    if (predict->parsed()) return run_predict(po);
    if (trace.parsed()) return trace.run();
    if (netcheck.parsed()) return netcheck.run();
    if (list.parsed()) return list.run();
    if (launch.parsed()) return launch.run();
    if (exporter->parsed()) {
      const int64_t rows = rapid::export_csv(export_file, export_csv);
      std::printf("%lld rows written to %s\n", static_cast<long long>(rows), export_csv.c_str());
      return 0;
    }
    if (validate->parsed()) return rapid::run_validate(vo);
    if (calibrate->parsed()) return rapid::run_calibrate(co);
    if (op.parsed()) return op.run();
    if (model.parsed()) return model.run();
  } catch (const rapid::InputError& e) {
    std::fprintf(stderr, "rapid: %s\n", e.what());
    return rapid::kExitBadInput;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "rapid: %s\n", e.what());
    return 1;
  }
  return 0;
}
