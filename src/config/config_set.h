// Every configuration file of a fabric, by target, as `gpufabric configs` writes them and the
// lab runs them: one place that names the files.
#pragma once

#include <set>
#include <string>
#include <vector>

#include "common/output.h"
#include "config/addressing.h"
#include "plan/plan.h"

namespace gf {

/// The target of an InfiniBand fabric (the subnet manager). RoCE fabrics have frr, eos, sonic,
/// nvue, host and ansible (docs/ARCHITECTURE.md).
inline constexpr const char* kInfinibandConfigTarget = "opensm";

/// Checks `targets` (as typed: "hosts" is "host", "all" is every target) against the fabric.
/// Returns the normalised set (empty: all that fit). Errors name --target (unknown) or
/// fabric.technology (a target for the other kind of fabric).
Result<std::set<std::string>> config_targets(const PlannedSpec& planned,
                                             const std::vector<std::string>& targets);

struct ConfigSet {
  std::vector<OutputFile> files;
  std::vector<std::string> folders;  ///< what was written, for people: "ip-plan.csv", "frr/", ...
  AddressPlan addresses;             ///< empty for InfiniBand
};

/// The files of `targets` (from config_targets; empty = all that fit). RoCE: ip-plan.csv and
/// the targets' folders; InfiniBand: opensm/ and cabling.csv. Errors: the address plan's,
/// pointing into the spec.
Result<ConfigSet> config_files(const PlannedSpec& planned, const std::set<std::string>& targets);

}  // namespace gf
