// What this binary is: its release and the git revision it was built from, for --version and
// for the outputs that record it (plan.json, sweep.json, report.html), so a result can be traced
// to the build that made it. The values come from a source the build writes (cmake/version.cmake).
#pragma once

#include <string>
#include <string_view>

namespace gf::cli {

/// The release, from project() in CMakeLists.txt: "0.1.0".
std::string_view version();
/// `git describe --always --dirty` of the checkout built ("2e841d9", "2e841d9-dirty",
/// "v0.1.0-3-g2e841d9"), or "unknown" when built outside a git checkout.
std::string_view revision();

/// What the outputs record (the "gpufabric_version" key) and --version prints after the name:
/// "0.1.0 (revision 2e841d9)".
inline std::string build_version() {
  return std::string(version()) + " (revision " + std::string(revision()) + ")";
}

}  // namespace gf::cli
