// gpufabric configs: the address plan and the switch configurations of a routed fabric.
#include <fmt/format.h>

#include <iostream>
#include <memory>

#include "cli/commands.h"
#include "cli/resources.h"
#include "common/output.h"
#include "config/config_set.h"
#include "config/opensm.h"
#include "plan/plan.h"

namespace gf::cli {
namespace {

struct ConfigsFlags {
  std::string spec, out;
  std::vector<std::string> targets;
};

int run(const ConfigsFlags& f) {
  Heartbeat alive("configs");
  auto loaded = load_and_plan(f.spec, load_limits(false));
  if (!loaded) return fail(loaded.errors());
  auto targets = config_targets(*loaded, f.targets);
  if (!targets) return fail(targets.errors());
  auto set = config_files(*loaded, *targets);
  if (!set) return fail(set.errors());
  auto written = write_outputs(f.out, set->files);
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
                "opensm (InfiniBand); default all that fit the fabric")
      ->delimiter(',');
  return {c, [f] { return run(*f); }};
}

}  // namespace gf::cli
