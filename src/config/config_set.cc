#include "config/config_set.h"

#include <fmt/format.h>

#include <algorithm>

#include "config/ansible.h"
#include "config/eos.h"
#include "config/frr.h"
#include "config/hosts.h"
#include "config/nvue.h"
#include "config/opensm.h"
#include "config/sonic.h"

namespace gf {

const std::vector<std::string>& ethernet_config_targets() {
  static const std::vector<std::string> targets{"frr", "eos", "sonic", "nvue", "host", "ansible"};
  return targets;
}

Result<std::set<std::string>> config_targets(const PlannedSpec& planned,
                                             const std::vector<std::string>& targets) {
  std::vector<std::string> all = ethernet_config_targets();
  all.push_back(kInfinibandConfigTarget);
  all.push_back("all");
  const bool ib = planned.plan.technology == "infiniband";
  std::set<std::string> want;
  for (std::string t : targets) {
    if (t == "hosts") t = "host";
    if (std::find(all.begin(), all.end(), t) == all.end())
      return Diagnostic{
          "",
          0,
          0,
          "--target",
          "unknown target '" + t + "': one of frr, eos, sonic, nvue, host, ansible, opensm or all",
          did_you_mean(t, all)};
    if (t == "all") return std::set<std::string>{};
    const bool ib_target = t == kInfinibandConfigTarget;
    if (ib_target != ib)
      return planned.spec.at(
          "fabric.technology",
          fmt::format(
              "--target {} configures {}, but this fabric is {}", t,
              ib_target ? "an InfiniBand subnet manager" : "Ethernet (RoCE) switches or hosts",
              ib ? "InfiniBand" : "RoCE"),
          ib ? "use --target opensm, or leave --target out"
             : "use one of frr, eos, sonic, nvue, host, ansible, or leave --target out");
    want.insert(t);
  }
  return want;
}

Result<ConfigSet> config_files(const PlannedSpec& planned, const std::set<std::string>& targets) {
  const Plan& plan = planned.plan;
  ConfigSet set;
  if (plan.technology == "infiniband") {  // the subnet manager configures the fabric
    set.files = {{"opensm/opensm.conf", opensm_conf(plan)},
                 {"opensm/partitions.conf", opensm_partitions()},
                 {"cabling.csv", cabling_csv(plan, planned.catalog)}};
    set.folders = {"opensm/", "cabling.csv"};
    return set;
  }
  auto a = plan_addresses(plan, planned.catalog, planned.spec.addressing);
  if (!a) {
    std::vector<Diagnostic> errs;
    for (const auto& d : a.errors()) errs.push_back(planned.spec.at(d.key, d.message, d.hint));
    return errs;
  }
  set.addresses = std::move(*a);
  const AddressPlan& ap = set.addresses;
  auto wanted = [&](const std::string& t) { return targets.empty() || targets.count(t) > 0; };
  set.files.push_back({"ip-plan.csv", ip_plan_csv(ap)});
  set.folders.push_back("ip-plan.csv");
  for (const auto& [t, folder] :
       {std::pair{"frr", "frr/"}, std::pair{"eos", "eos/"}, std::pair{"sonic", "sonic/"},
        std::pair{"nvue", "nvue/"}, std::pair{"host", "hosts/"}, std::pair{"ansible", "ansible/"}})
    if (wanted(t)) set.folders.push_back(folder);
  for (const auto& sw : ap.switches) {
    if (wanted("frr")) set.files.push_back({"frr/" + sw.name + ".conf", frr_conf(ap, sw)});
    if (wanted("eos")) set.files.push_back({"eos/" + sw.name + ".cfg", eos_config(plan, ap, sw)});
    if (wanted("sonic")) {
      set.files.push_back({"sonic/" + sw.name + "/config_db.json",
                           sonic_config_db(plan, planned.catalog, ap, sw).dump(2) + "\n"});
      set.files.push_back({"sonic/" + sw.name + "/frr.conf", sonic_frr_conf(plan, ap, sw)});
    }
    if (wanted("nvue")) set.files.push_back({"nvue/" + sw.name + ".sh", nvue_commands(ap, sw)});
  }
  if (wanted("host"))
    for (auto& h : host_files(plan, ap)) set.files.push_back(std::move(h));
  if (wanted("ansible")) {
    set.files.push_back({"ansible/inventory.yml", ansible_inventory(plan, ap)});
    set.files.push_back({"ansible/hosts.yml", ansible_playbook()});
  }
  return set;
}

}  // namespace gf
