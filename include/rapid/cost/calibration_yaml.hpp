// Writing calibrated values back into hardware and network YAML files: the original text
// is kept (keys, order, comments) and only the fitted keys' lines are rewritten, each with
// a "# calibrated, was OLD" comment; keys the file did not have are added to their block.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "rapid/cost/calibration.hpp"

namespace rapid {

/// `value` as written in YAML: efficiencies and ratios as plain numbers, latencies in
/// microseconds ("3.3us"); six significant digits.
std::string format_param_value(const CalibrationParam& p, double value);

/// Rewrites `key: value` lines of one block mapping of `text`: the top level when
/// `section` is empty, else the block under the top-level key `section` (created at the
/// end of the file when missing). Throws InputError naming `origin` when the section is a
/// flow mapping ({...}) that cannot be rewritten line by line.
std::string rewrite_yaml_block(const std::string& text, const std::string& section,
                               const std::vector<std::pair<std::string, std::string>>& values,
                               const std::string& origin);

/// The hardware file `original` (read from `origin`) with the fitted hardware parameters
/// of `r` under `efficiency:` and `comment` (without '#') as its first line.
std::string calibrated_hardware_yaml(const std::string& original, const std::string& origin,
                                     const CalibrationResult& r, const std::string& comment);

/// The network file with the fitted network parameters of `r` (top-level keys, or under
/// `network:` for the job-snippet form) and `comment` as its first line.
std::string calibrated_network_yaml(const std::string& original, const std::string& origin,
                                    const CalibrationResult& r, const std::string& comment);

}  // namespace rapid
