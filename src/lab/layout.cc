// The lab of a planned spec (`lab_layout`): its devices, namespaces, veth pairs and the
// configurations it runs. Pure: nothing on the machine is touched.
#include <fmt/format.h>

#include <filesystem>

#include "config/config_set.h"
#include "config/frr.h"
#include "lab/lab.h"
#include "lab/lab_internal.h"

namespace gf {
namespace fs = std::filesystem;
using lab_internal::netns_prefix;

const LabDevice* LabLayout::device(const std::string& n) const {
  for (const auto& d : devices)
    if (d.name == n) return &d;
  return nullptr;
}

Result<LabLayout> lab_layout(const PlannedSpec& planned) {
  const Spec& spec = planned.spec;
  const Plan& plan = planned.plan;
  if (plan.technology == Technology::kInfiniband)
    return spec.at("fabric.technology",
                   "the lab emulates a routed (RoCE) fabric; InfiniBand has no IP underlay",
                   "plan the lab with fabric.technology: roce");
  if (plan.topo.kind == TopologyKind::kSingle)
    return spec.at("fabric.topology",
                   "the lab checks ECMP across spines and needs at least two tiers",
                   "set fabric.topology: clos2");
  const long long devices = plan.switch_total + plan.nodes;
  if (devices > kLabMaxDevices)
    return spec.at("cluster.nodes",
                   fmt::format("the lab emulates at most {} switches and hosts; this spec has {} "
                               "({} switches, {} nodes)",
                               kLabMaxDevices, devices, plan.switch_total, plan.nodes),
                   "run the lab on a small spec of the same design, e.g. "
                   "examples/roce-lab-16.yaml");
  // Exactly the files `gpufabric configs --target frr,host` writes.
  auto set = config_files(planned, {"frr", "host"});
  if (!set) return set.errors();
  LabLayout lab;
  lab.name = spec.name.empty() ? fs::path(spec.path).stem().string() : spec.name;
  lab.addresses = std::move(set->addresses);
  lab.configs = std::move(set->files);
  const std::string prefix = netns_prefix(lab.name);
  for (const auto& sw : lab.addresses.switches)
    lab.devices.push_back({sw.name, sw.role, prefix + sw.name});
  for (const auto& n : lab.addresses.nodes())
    lab.devices.push_back({n.node, "host", prefix + n.node});
  // The veth ends carry the names frr/ gives the ports. They fit a Linux interface name
  // (kLabMaxInterfaceName): swp<cage>s<n> is 8 characters up to cage 999, and a lab of
  // kLabMaxDevices uses a few dozen cages; host rails are the spec's netdev names, which the
  // spec reader keeps within 15.
  auto port = [&plan](int p) { return frr_port_name(plan, p); };
  for (const auto& l : lab.addresses.links)
    lab.links.push_back(
        {l.a_device, port(l.a_port), l.b_device, port(l.b_port), true, l.a_port, l.b_port});
  for (const auto& h : lab.addresses.hosts)
    lab.links.push_back({h.node, h.netdev, h.leaf, port(h.leaf_port), false, 0, h.leaf_port});
  return lab;
}

}  // namespace gf
