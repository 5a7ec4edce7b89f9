#include "config/config_set.h"

#include <fmt/format.h>

#include <algorithm>

#include "config/ansible.h"
#include "config/eos.h"
#include "config/frr.h"
#include "config/hosts.h"
#include "config/mgmt.h"
#include "config/nvue.h"
#include "config/opensm.h"
#include "config/sonic.h"

namespace gf {

namespace {

/// The targets of a RoCE fabric and the folder each writes, in the order they are listed.
struct EthernetTarget {
  const char* name;
  const char* folder;
};
constexpr EthernetTarget kEthernetTargets[] = {{"frr", "frr/"},     {"eos", "eos/"},
                                               {"sonic", "sonic/"}, {"nvue", "nvue/"},
                                               {"host", "hosts/"},  {"ansible", "ansible/"}};

/// "frr, eos, sonic, nvue, host, ansible".
std::string ethernet_target_list() {
  std::string s;
  for (const auto& t : kEthernetTargets) s += (s.empty() ? "" : ", ") + std::string(t.name);
  return s;
}

}  // namespace

std::vector<UnfitTarget> unfit_targets(const PlannedSpec& planned) {
  const Plan& plan = planned.plan;
  const bool ib = plan.technology == Technology::kInfiniband;
  std::vector<UnfitTarget> out;
  for (const auto& t : kEthernetTargets) {
    if (ib) {
      out.push_back(
          {t.name, "fabric.technology",
           "configures Ethernet (RoCE) switches or hosts; the fabric is InfiniBand",
           fmt::format("use --target {}, or leave --target out", kInfinibandConfigTarget)});
      continue;
    }
    // What the switch model allows: EOS names the ports of fixed switches (a modular chassis has
    // Ethernet<card>/<port>/<lane>, which the catalog does not model); SONiC needs the catalog's
    // platform (lanes, HWSKU, buffers).
    const std::string name = t.name;
    if (name == "eos" && plan.sw.modular)
      out.push_back({t.name, "fabric.switch",
                     fmt::format("{} is modular: its EOS port names (Ethernet<card>/<port>/<lane>) "
                                 "are not in the catalog's port model",
                                 plan.sw.id),
                     "choose another switch or target"});
    if (name == "sonic" && !plan.sw.sonic)
      out.push_back({t.name, "fabric.switch",
                     fmt::format("the catalog has no SONiC platform for {} (its lanes, HWSKU and "
                                 "buffers: sonic, serdes_lanes, asic_vendor)",
                                 plan.sw.id),
                     "choose another switch or target"});
  }
  if (!ib)
    out.push_back({kInfinibandConfigTarget, "fabric.technology",
                   "configures an InfiniBand subnet manager; the fabric is RoCE",
                   fmt::format("use one of {}, or leave --target out", ethernet_target_list())});
  return out;
}

Result<TargetChoice> config_targets(const PlannedSpec& planned,
                                    const std::vector<std::string>& targets) {
  std::vector<std::string> all;
  for (const auto& t : kEthernetTargets) all.push_back(t.name);
  all.push_back(kInfinibandConfigTarget);
  all.push_back("all");
  const std::vector<UnfitTarget> unfit = unfit_targets(planned);
  auto unfit_one = [&unfit](const std::string& t) -> const UnfitTarget* {
    for (const auto& u : unfit)
      if (u.target == t) return &u;
    return nullptr;
  };
  TargetChoice choice;
  std::set<std::string> asked;
  bool every = targets.empty();
  for (std::string t : targets) {
    if (t == "hosts") t = "host";
    if (std::find(all.begin(), all.end(), t) == all.end())
      return Diagnostic::flag("--target",
                              fmt::format("unknown target '{}': one of {}, {} or all", t,
                                          ethernet_target_list(), kInfinibandConfigTarget),
                              did_you_mean(t, all));
    if (t == "all")
      every = true;
    else
      asked.insert(t);
  }
  if (every) {  // all that fit: config_files leaves the others out, the summary names them
    choice.skipped = unfit;
    return choice;
  }
  choice.asked = true;
  for (const std::string& t : all)  // in the listed order
    if (asked.count(t)) {
      if (const UnfitTarget* u = unfit_one(t))
        choice.skipped.push_back(*u);
      else
        choice.targets.insert(t);
    }
  if (choice.targets.empty()) {  // nothing asked for can be written
    std::vector<Diagnostic> errs;
    for (const auto& u : choice.skipped)
      errs.push_back(
          planned.spec.at(u.key, fmt::format("--target {}: {}", u.target, u.reason), u.hint));
    return errs;
  }
  return choice;
}

Result<ConfigSet> config_files(const PlannedSpec& planned, const std::set<std::string>& targets) {
  const Plan& plan = planned.plan;
  // Asked for by name, a target that does not fit is an error (config_targets skips those);
  // with all targets it is left out.
  std::set<std::string> unfit;
  for (const auto& u : unfit_targets(planned)) {
    if (targets.count(u.target))
      return planned.spec.at(u.key, fmt::format("--target {}: {}", u.target, u.reason), u.hint);
    unfit.insert(u.target);
  }
  ConfigSet set;
  // The other networks (spec networks:): their addresses, VLANs and management interfaces.
  NetAddressPlan nets;
  if (plan.networks) {
    auto n = plan_network_addresses(plan, planned.spec);
    if (!n) {
      // Every pool, subnet and ASN that does not fit, as plan lists them (the fabric's first).
      std::vector<Diagnostic> all = address_pool_errors(plan, planned.catalog, planned.spec);
      if (all.empty()) all = n.errors();
      std::vector<Diagnostic> errs;
      for (const auto& d : all) errs.push_back(addressing_diagnostic(planned.spec, d));
      return errs;
    }
    nets = std::move(*n);
  }
  auto add_networks = [&](bool ip_plan_written) {
    if (!plan.networks) return;
    if (!ip_plan_written) {
      set.files.push_back(
          {"ip-plan.csv", "kind,device,interface,address,peer_device,peer_interface,asn\n" +
                              network_ip_plan_rows(nets)});
      set.folders.push_back("ip-plan.csv");
    }
    for (auto& f : network_files(plan, nets, planned.spec)) set.files.push_back(std::move(f));
    set.folders.push_back("networks/");
  };
  if (plan.technology == Technology::kInfiniband) {  // the subnet manager configures the fabric
    set.files = {{"opensm/opensm.conf", opensm_conf(plan)},
                 {"opensm/partitions.conf", opensm_partitions()},
                 {"cabling.csv", cabling_csv(plan, planned.catalog)}};
    set.folders = {"opensm/", "cabling.csv"};
    add_networks(false);
    return set;
  }
  auto a = plan_addresses(plan, planned.catalog, planned.spec.addressing);
  if (!a) {
    std::vector<Diagnostic> errs;
    for (const auto& d : a.errors()) errs.push_back(addressing_diagnostic(planned.spec, d));
    return errs;
  }
  set.addresses = std::move(*a);
  const AddressPlan& ap = set.addresses;
  auto wanted = [&](const std::string& t) {
    return (targets.empty() || targets.count(t) > 0) && !unfit.count(t);
  };
  set.files.push_back({"ip-plan.csv", ip_plan_csv(plan, ap) + network_ip_plan_rows(nets)});
  set.folders.push_back("ip-plan.csv");
  for (const auto& t : kEthernetTargets)
    if (wanted(t.name)) set.folders.push_back(t.folder);
  const CumulusRelease cumulus = parse_cumulus_release(planned.spec.addressing.cumulus_version);
  // A compute switch's management interface goes before its configuration's last line.
  auto before_last = [](std::string text, const std::string& last, const std::string& block) {
    const auto at = text.rfind(last);
    if (at != std::string::npos) text.insert(at, block);
    return text;
  };
  for (const auto& sw : ap.switches) {
    const NetAddress* mgmt = nets.mgmt_of(sw.name);
    if (wanted("frr")) set.files.push_back({"frr/" + sw.name + ".conf", frr_conf(plan, ap, sw)});
    if (wanted("eos"))
      set.files.push_back(
          {"eos/" + sw.name + ".cfg",
           mgmt ? before_last(eos_config(plan, ap, sw), "end\n", eos_management(nets, *mgmt))
                : eos_config(plan, ap, sw)});
    if (wanted("sonic")) {
      auto db = sonic_config_db(plan, planned.catalog, ap, sw);
      if (!db)
        return planned.spec.at(db.errors()[0].key, db.errors()[0].message, db.errors()[0].hint);
      if (mgmt) sonic_management(nets, *mgmt, *db);
      set.files.push_back({"sonic/" + sw.name + "/config_db.json", db->dump(2) + "\n"});
      set.files.push_back({"sonic/" + sw.name + "/frr.conf", sonic_frr_conf(plan, ap, sw)});
    }
    if (wanted("nvue"))
      set.files.push_back({"nvue/" + sw.name + ".sh",
                           mgmt ? before_last(nvue_commands(plan, ap, sw, cumulus),
                                              "nv config apply", nvue_management(nets, *mgmt))
                                : nvue_commands(plan, ap, sw, cumulus)});
  }
  if (wanted("host"))
    for (auto& h : host_files(plan, ap)) set.files.push_back(std::move(h));
  if (wanted("ansible")) {
    set.files.push_back({"ansible/inventory.yml", ansible_inventory(plan, ap)});
    set.files.push_back({"ansible/hosts.yml", ansible_playbook()});
  }
  add_networks(true);
  return set;
}

}  // namespace gf
