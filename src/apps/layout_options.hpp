// The layout options `rapid predict` and `rapid trace` share (--tp, --pp, ..., --gpus,
// --hardware-index): their CLI11 declarations and how they turn a job's baseline into the
// point they name.
#pragma once

#include <CLI/CLI.hpp>

#include <optional>
#include <string>
#include <vector>

#include "rapid/spec/sweep_spec.hpp"
#include "rapid/sweep/enumerator.hpp"

namespace rapid {

struct LayoutOptions {
  std::optional<int> tp, pp, cp, ep, etp, vpp, mbs, zero, gpus, hardware, recompute_layers,
      offload_layers;
  std::optional<bool> sp;
  std::optional<std::string> recompute, recompute_method;
};

/// Declares the layout options on `cmd` (stored in `o`).
void add_layout_options(CLI::App& cmd, LayoutOptions& o);

/// The point the options name in `spec`: its baseline layout (without one: the search's
/// value on every axis that has one value, the defaults elsewhere) with the options applied,
/// dp from the GPU count (--gpus, default the job's first), the hardware variant
/// --hardware-index. `origin`, when given, says where the layout came from (the line a
/// command prints with it). Throws InputError naming the option, its value and what was
/// expected for a value out of range or an illegal layout (serving jobs: their legality).
Point resolve_layout(const SweepSpec& spec, const LayoutOptions& o, std::string* origin = nullptr);

/// The layout options given on the command line, as their flags ("--tp", ...).
std::vector<std::string> given_flags(const LayoutOptions& o);

/// The index of the job's scenario `name` (`--scenario`): a scenario name first, then an
/// index. Throws InputError listing the job's scenarios.
int resolve_scenario(const SweepSpec& spec, const std::string& name);

}  // namespace rapid
