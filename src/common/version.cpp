#include "rapid/common/version.hpp"

#include "rapid_git_revision.hpp"  // generated in the build tree

#ifndef RAPID_VERSION
#define RAPID_VERSION "unknown"
#endif

namespace rapid {

const char* version() {
  return RAPID_VERSION;
}
const char* git_revision() {
  return RAPID_GIT_REVISION;
}

}  // namespace rapid
