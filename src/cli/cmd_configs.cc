// gpufabric configs: the address plan and the switch configurations of a routed fabric.
#include <fmt/format.h>

#include <algorithm>
#include <iostream>
#include <memory>
#include <set>

#include "cli/commands.h"
#include "config/addressing.h"
#include "config/ansible.h"
#include "config/eos.h"
#include "config/frr.h"
#include "config/hosts.h"
#include "config/nvue.h"
#include "config/opensm.h"
#include "config/sonic.h"
#include "plan/plan.h"
#include "report/output.h"

namespace gf::cli {
namespace {

struct ConfigsFlags {
  std::string spec, out;
  std::vector<std::string> targets;
};

/// What --target takes (DESIGN.md §1); "host" and "hosts" name the same files.
const std::vector<std::string> kEthernetTargets{"frr", "eos", "sonic", "nvue", "host", "ansible"};
const std::string kInfinibandTarget = "opensm";

int run(const ConfigsFlags& f) {
  std::set<std::string> want;
  for (std::string t : f.targets) {
    if (t == "hosts") t = "host";
    std::vector<std::string> all = kEthernetTargets;
    all.push_back(kInfinibandTarget);
    all.push_back("all");
    if (std::find(all.begin(), all.end(), t) == all.end())
      return fail({{"", 0, 0, "--target",
                    "unknown target '" + t +
                        "': one of frr, eos, sonic, nvue, host, ansible, "
                        "opensm or all",
                    did_you_mean(t, all)}});
    want.insert(t);
  }
  auto loaded = load_and_plan(f.spec);
  if (!loaded) return fail(loaded.errors());
  const bool ib = loaded->plan.technology == "infiniband";
  const bool everything = want.empty() || want.count("all");
  for (const auto& t : want) {
    const bool ib_target = t == kInfinibandTarget;
    if (t != "all" && ib_target != ib)
      return fail({loaded->spec.at(
          "fabric.technology",
          fmt::format(
              "--target {} configures {}, but this fabric is {}", t,
              ib_target ? "an InfiniBand subnet manager" : "Ethernet (RoCE) switches or hosts",
              ib ? "InfiniBand" : "RoCE"),
          ib ? "use --target opensm, or leave --target out"
             : "use one of frr, eos, sonic, nvue, host, ansible, or leave --target out")});
  }
  auto wanted = [&](const std::string& t) { return everything || want.count(t) > 0; };
  if (ib) {  // the subnet manager configures the fabric
    auto written =
        write_outputs(f.out, {{"opensm/opensm.conf", opensm_conf(loaded->plan)},
                              {"opensm/partitions.conf", opensm_partitions()},
                              {"cabling.csv", cabling_csv(loaded->plan, loaded->catalog)}});
    if (!written) return fail(written.errors());
    std::cout << fmt::format("InfiniBand, routing engine {}, in {}: opensm/, cabling.csv\n",
                             opensm_routing_engine(loaded->plan), f.out);
    return kExitOk;
  }
  auto a = plan_addresses(loaded->plan, loaded->catalog, loaded->spec.addressing);
  if (!a) {
    std::vector<Diagnostic> errs;
    for (const auto& d : a.errors()) errs.push_back(loaded->spec.at(d.key, d.message, d.hint));
    return fail(errs);
  }
  std::vector<OutputFile> files{{"ip-plan.csv", ip_plan_csv(*a)}};
  std::string folders = "ip-plan.csv";
  auto folder = [&](const std::string& t, const std::string& name) {
    if (wanted(t)) folders += ", " + name;
  };
  folder("frr", "frr/");
  folder("eos", "eos/");
  folder("sonic", "sonic/");
  folder("nvue", "nvue/");
  folder("host", "hosts/");
  folder("ansible", "ansible/");
  for (const auto& sw : a->switches) {
    if (wanted("frr")) files.push_back({"frr/" + sw.name + ".conf", frr_conf(*a, sw)});
    if (wanted("eos"))
      files.push_back({"eos/" + sw.name + ".cfg", eos_config(loaded->plan, *a, sw)});
    if (wanted("sonic")) {
      files.push_back({"sonic/" + sw.name + "/config_db.json",
                       sonic_config_db(loaded->plan, loaded->catalog, *a, sw).dump(2) + "\n"});
      files.push_back({"sonic/" + sw.name + "/frr.conf", sonic_frr_conf(loaded->plan, *a, sw)});
    }
    if (wanted("nvue")) files.push_back({"nvue/" + sw.name + ".sh", nvue_commands(*a, sw)});
  }
  if (wanted("host"))
    for (auto& h : host_files(loaded->plan, *a)) files.push_back(std::move(h));
  if (wanted("ansible")) {
    files.push_back({"ansible/inventory.yml", ansible_inventory(loaded->plan, *a)});
    files.push_back({"ansible/hosts.yml", ansible_playbook()});
  }
  auto written = write_outputs(f.out, files);
  if (!written) return fail(written.errors());
  std::cout << fmt::format("{} switches, {} routed links, {} host addresses in {}: {}\n",
                           a->switches.size(), a->links.size(), a->hosts.size(), f.out, folders);
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
