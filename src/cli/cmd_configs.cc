// gpufabric configs: the address plan and the switch configurations of a routed fabric.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <iostream>
#include <memory>

#include "cli/commands.h"
#include "cli/flags.h"
#include "cli/resources.h"
#include "common/output.h"
#include "common/text.h"
#include "config/config_set.h"
#include "config/opensm.h"
#include "plan/plan.h"

namespace gf::cli {
namespace {

struct ConfigsFlags {
  std::string spec, out;
  std::vector<std::string> targets;
};

// "frr, eos, sonic (configures ...; the fabric is InfiniBand)": targets with one reason together,
// in the listed order.
std::string skipped_summary(const std::vector<UnfitTarget>& skipped) {
  std::vector<std::pair<std::string, std::string>> groups;  // targets, reason
  for (const auto& u : skipped) {
    auto it = std::find_if(groups.begin(), groups.end(),
                           [&](const auto& g) { return g.second == u.reason; });
    if (it == groups.end())
      groups.push_back({u.target, u.reason});
    else
      it->first += ", " + u.target;
  }
  std::string s;
  for (const auto& [targets, reason] : groups)
    s += fmt::format("{}{} ({})", s.empty() ? "" : "; ", targets, reason);
  return s;
}

int run(const ConfigsFlags& f) {
  Heartbeat alive("configs");
  // Split here, not by CLI11's delimiter, which drops empty items: "--target frr," is a list
  // with an item missing, not a list of frr.
  std::vector<std::string> targets;
  for (const std::string& given : f.targets)
    for (std::string& item : split(given, ',')) {
      if (item.empty())
        return fail({Diagnostic::flag(
            "--target", fmt::format("'{}' has an empty item: name each target, comma-separated "
                                    "with nothing between (frr,eos)",
                                    given))});
      targets.push_back(std::move(item));
    }
  auto loaded = load_planned_spec(f.spec, load_limits(false));
  if (!loaded) return fail(loaded.errors());
  auto choice = config_targets(*loaded, targets);
  if (!choice) return fail(choice.errors());
  // A target asked for that the fabric cannot take is a warning (all of them: an error, above).
  if (choice->asked)
    for (const auto& u : choice->skipped)
      std::cerr << fmt::format("warning: --target {} skipped ({}): {}\n", u.target, u.key,
                               u.reason);
  auto set = config_files(*loaded, choice->targets);
  if (!set) return fail(set.errors());
  // Each target's folder is this run's whole: a switch or host an earlier run wrote a config
  // for that this fabric no longer has loses it (unless edited since), so that a playbook or a
  // loop over the folder pushes this fabric alone. Another target's folder is left as it is.
  std::vector<std::string> retired;
  auto written = write_outputs(f.out, set->files, top_folders(set->files), &retired);
  if (!written) return fail(written.errors());
  std::string folders;
  for (const auto& d : set->folders) folders += (folders.empty() ? "" : ", ") + d;
  if (loaded->plan.technology == Technology::kInfiniband)
    std::cout << fmt::format("InfiniBand, routing engine {}, in {}: {}\n",
                             opensm_routing_engine(loaded->plan), f.out, folders);
  else
    std::cout << fmt::format("{} switches, {} routed links, {} host addresses in {}: {}\n",
                             set->addresses.switches.size(), set->addresses.links.size(),
                             set->addresses.hosts.size(), f.out, folders);
  if (!choice->asked && !choice->skipped.empty())
    std::cout << "not written: " << skipped_summary(choice->skipped) << "\n";
  // The plan's adaptive routing is the switches' own: NVUE's scripts turn it on; the other
  // flavours hash flows, which the simulator's adaptive figures are not.
  if (loaded->plan.technology == Technology::kRoce &&
      loaded->plan.load_balancing == LoadBalancing::kAdaptive) {
    std::vector<std::string> hashing;
    for (const char* t : {"frr", "eos", "sonic"})
      if (std::find(set->folders.begin(), set->folders.end(), std::string(t) + "/") !=
          set->folders.end())
        hashing.push_back(t);
    if (!hashing.empty())
      std::cerr << fmt::format(
          "note: the plan balances adaptively (what simulate and step assume): the nvue scripts "
          "turn the switches' adaptive routing on; the {} configurations hash flows (ECMP): set "
          "fabric.load_balancing: ecmp-multi-qp to plan and simulate what they deliver\n",
          fmt::join(hashing, hashing.size() == 2 ? " and " : ", "));
  }
  note_retired(std::cerr, f.out, retired);
  // Files left in the folders that this run did not write: another target's folder's, files
  // edited since gpufabric wrote them, and files gpufabric did not write: named, never deleted.
  const FilesLeft left = files_left_from_before(
      f.out, {"frr", "eos", "sonic", "nvue", "hosts", "ansible", "networks", "opensm"}, set->files,
      3);
  if (left.count > 0) {
    std::vector<std::string> parts;
    if (!left.earlier_runs.empty())
      parts.push_back(fmt::format("an earlier run's: {}", fmt::join(left.earlier_runs, ", ")));
    if (!left.not_gpufabrics.empty())
      parts.push_back(fmt::format("not gpufabric's: {}", fmt::join(left.not_gpufabrics, ", ")));
    const std::size_t listed = left.earlier_runs.size() + left.not_gpufabrics.size();
    std::cerr << fmt::format(
        "note: {} file{} in {} {} not this run's ({}{}), left as {} {}; remove {}, or write "
        "each fabric's configs to a folder of its own\n",
        left.count, left.count == 1 ? "" : "s", f.out, left.count == 1 ? "is" : "are",
        fmt::join(parts, "; "), left.count > listed ? ", ..." : "", left.count == 1 ? "it" : "they",
        left.count == 1 ? "was" : "were", left.count == 1 ? "it" : "them");
  }
  return kExitOk;
}

}  // namespace

Command add_configs(CLI::App& root) {
  auto f = std::make_shared<ConfigsFlags>();
  CLI::App* c = root.add_subcommand(
      "configs",
      "The IP/ASN plan (ip-plan.csv) and the configurations of a RoCE fabric: per switch FRR "
      "frr.conf (eBGP underlay, ECMP), Arista EOS, SONiC config_db.json + frr.conf and Cumulus "
      "NVUE (RoCE QoS: DSCP 26 lossless with PFC 3, ECN, CNP queue); per node host files "
      "(netplan, RoCE QoS, memlock, sysctl, NCCL environment, torchrun); an Ansible inventory "
      "and playbook. For InfiniBand: OpenSM configuration and the cabling plan. Addresses and "
      "ASNs come from the spec's addressing section.");
  c->add_option("SPEC", f->spec, "the cluster spec (YAML)")->required();
  c->add_option("-o,--out", f->out, "folder for ip-plan.csv and the configurations")->required();
  c->add_option("--target", f->targets,
                "what to write, comma-separated: frr, eos, sonic, nvue, host, ansible (RoCE) or "
                "opensm (InfiniBand); default all that fit the fabric (the others are named "
                "after the summary). A target named that does not fit is skipped with a warning; "
                "exit 2 when none fits")
      ->check(non_empty());
  return {c, [f] { return run(*f); }};
}

}  // namespace gf::cli
