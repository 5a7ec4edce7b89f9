// gpufabric configs: the address plan and the switch configurations of a routed fabric.
#include <fmt/format.h>

#include <iostream>
#include <memory>

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
  std::string target = "frr";
};

int run(const ConfigsFlags& f) {
  auto loaded = load_and_plan(f.spec);
  if (!loaded) return fail(loaded.errors());
  if (loaded->plan.technology == "infiniband") {  // the subnet manager configures the fabric
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
  for (const auto& sw : a->switches)
    files.push_back({"frr/" + sw.name + ".conf", frr_conf(*a, sw)});
  for (const auto& sw : a->switches) {
    files.push_back({"sonic/" + sw.name + "/config_db.json",
                     sonic_config_db(loaded->plan, loaded->catalog, *a, sw).dump(2) + "\n"});
    files.push_back({"sonic/" + sw.name + "/frr.conf", sonic_frr_conf(loaded->plan, *a, sw)});
    files.push_back({"nvue/" + sw.name + ".sh", nvue_commands(*a, sw)});
    files.push_back({"eos/" + sw.name + ".cfg", eos_config(loaded->plan, *a, sw)});
  }
  for (auto& h : host_files(loaded->plan, *a)) files.push_back(std::move(h));
  files.push_back({"ansible/inventory.yml", ansible_inventory(loaded->plan, *a)});
  files.push_back({"ansible/hosts.yml", ansible_playbook()});
  auto written = write_outputs(f.out, files);
  if (!written) return fail(written.errors());
  // One folder per target, named once.
  std::cout << fmt::format(
      "{} switches, {} routed links, {} host addresses in {}: ip-plan.csv, "
      "frr/, eos/, sonic/, nvue/, hosts/, ansible/\n",
      a->switches.size(), a->links.size(), a->hosts.size(), f.out);
  return kExitOk;
}

}  // namespace

Command add_configs(CLI::App& root) {
  auto f = std::make_shared<ConfigsFlags>();
  CLI::App* c = root.add_subcommand(
      "configs",
      "The IP/ASN plan (ip-plan.csv) and switch configurations of a RoCE fabric: FRR frr.conf "
      "per switch (eBGP underlay, ECMP) and per-node host files (netplan, RoCE QoS, memlock, "
      "sysctl, "
      "NCCL environment, torchrun), from the spec's addressing section.");
  c->add_option("SPEC", f->spec, "the cluster spec (YAML)")->required();
  c->add_option("-o,--out", f->out, "folder for ip-plan.csv and the configurations")->required();
  c->add_option("--target", f->target, "configuration flavour (frr)")
      ->check(CLI::IsMember({"frr"}));
  return {c, [f] { return run(*f); }};
}

}  // namespace gf::cli
