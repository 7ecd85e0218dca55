// Version and source revision of this build (recorded in every result file).
#pragma once

namespace rapid {

/// Project version from CMakeLists.txt, e.g. "0.1.0".
const char* version();
/// `git describe --always --dirty` of the source tree at build time, or "unknown".
const char* git_revision();

}  // namespace rapid
