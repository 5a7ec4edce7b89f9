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

/// A target the fabric cannot take, and why.
struct UnfitTarget {
  std::string target;  ///< "opensm", "eos", ...
  std::string key;     ///< the spec key that rules it out: fabric.technology or fabric.switch
  std::string reason;  ///< "configures an InfiniBand subnet manager; the fabric is RoCE"
  std::string hint;    ///< what to do instead
};

/// Every target, in the order `--target` lists them, that the fabric cannot take: those of the
/// other kind of fabric (fabric.technology), EOS on a modular chassis and SONiC on a switch
/// without a SONiC platform in the catalog (fabric.switch).
std::vector<UnfitTarget> unfit_targets(const PlannedSpec& planned);

/// The targets `configs` writes and those it leaves out.
struct TargetChoice {
  std::set<std::string> targets;     ///< for config_files; empty: all that fit
  std::vector<UnfitTarget> skipped;  ///< asked for, or (by default) any, that do not fit
  bool asked = false;                ///< --target named them (neither left out nor "all")
};

/// Checks `targets` (as typed: "hosts" is "host", "all" is every target) against the fabric.
/// A target asked for that does not fit is skipped (TargetChoice::skipped, for a warning);
/// by default (no targets, or "all") every unfit target is listed there. Errors: an unknown
/// target (--target), and every asked target unfit (one error each, naming its key).
Result<TargetChoice> config_targets(const PlannedSpec& planned,
                                    const std::vector<std::string>& targets);

struct ConfigSet {
  std::vector<OutputFile> files;
  std::vector<std::string> folders;  ///< what was written, for people: "ip-plan.csv", "frr/", ...
  AddressPlan addresses;             ///< empty for InfiniBand
};

/// The files of `targets` (from config_targets; empty = all that fit). RoCE: ip-plan.csv and
/// the targets' folders; InfiniBand: opensm/ and cabling.csv. Errors: a target named that does
/// not fit (unfit_targets), and the address plan's, pointing into the spec.
Result<ConfigSet> config_files(const PlannedSpec& planned, const std::set<std::string>& targets);

}  // namespace gf
