// Where an installed rapid-sweep finds its data (README "Installing"): `cmake --install`
// puts the programs in <prefix>/bin and configs/, jobs/ and analysis/ in
// <prefix>/share/rapid-sweep; a program finds that directory from its own path, so the
// prefix can be moved or chosen at install time (`cmake --install build --prefix DIR`).
#pragma once

#include <string>

namespace rapid {

/// <prefix>/share/rapid-sweep for the running executable: its directory (/proc/self/exe)
/// joined with the bin-to-data path compiled in (GNUInstallDirs: "../share/rapid-sweep").
/// "" when /proc/self/exe cannot be read. The directory need not exist (a program run from
/// its build tree has none).
std::string installed_data_dir();

/// Sets what installed_data_dir() returns, for a process that is not an installed program
/// (the Python module inside python3 finds <prefix>/share/rapid-sweep from its own path).
void set_installed_data_dir(std::string dir);

}  // namespace rapid
