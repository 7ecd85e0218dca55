// The result file's /variants table (docs/variants.md, README "Result file"): one entry per
// hardware entry of the sweep (the /points column hardware_index indexes it), with its
// base, the fields it overrides and the full parameter set the model used.
#pragma once

#include <hdf5.h>

#include "rapid/spec/sweep_spec.hpp"

namespace rapid {

/// Writes /variants into `file` (a serial handle: variable-length strings). Throws
/// InternalError.
void write_variant_table(hid_t file, const SweepSpec& spec);

}  // namespace rapid
