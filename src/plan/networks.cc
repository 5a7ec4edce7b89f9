#include "plan/networks.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include "plan/plan.h"

namespace gf {
namespace {

// Run lengths (m). Storage and in-band leaves sit in the scalable unit's network rack, a row
// away from the servers, as the compute leaves do (bom.cc); an out-of-band switch sits at the top
// of its rack (DGX SuperPOD RA, management rack figure: one SN2201 per rack row position);
// management spines sit in the management rack of the same row. Storage leaves that uplink into
// the compute fabric's top tier (isolation: vlan) reach it across the hall.
constexpr double kRackRunM = 2.5;
constexpr double kRowRunM = 20;
constexpr double kHallRunM = 50;

// Two uplinks per leaf at least, to two upper switches: losing one never cuts a leaf off (RFC
// 7938 §3.1, as the compute fabric's kMinUpperSwitches).
constexpr int kMinUplinks = 2;

long long ceil_div(long long a, long long b) { return (a + b - 1) / b; }

// The fewest upper switches of `ports` ports over which `lowers` switches spread `up` links each.
int uppers_needed(long long lowers, int up, int ports) {
  if (lowers <= 0 || up <= 0 || ports <= 0) return 0;
  const long long floor = std::min(up, kMinUplinks);
  for (long long n = std::max(floor, ceil_div(lowers * up, ports)); n <= up; ++n)
    if (lowers * ceil_div(up, n) <= ports) return static_cast<int>(n);
  return -1;
}

SwitchRole role_of(NetworkKind k) {
  return k == NetworkKind::kStorage  ? SwitchRole::kStorage
         : k == NetworkKind::kInband ? SwitchRole::kInband
                                     : SwitchRole::kOob;
}

std::string key_of(NetworkKind k) { return fmt::format("networks.{}", network_kind_name(k)); }

// The medium of a link of `gbps` over `length_m`: the cheapest copper or active cable that
// reaches, else a transceiver at each end and a fibre.
struct Medium {
  std::string length_class;
  double length_m = 0;
  const CablePart* cable = nullptr;
  const CablePart* xcvr = nullptr;
  const CablePart* fibre = nullptr;
  std::string label() const {
    if (cable) return cable->id;
    if (xcvr) return fmt::format("{}+{}", xcvr->id, fibre ? fibre->id : "fibre");
    return "unavailable";
  }
};

Medium medium(const Catalog& cat, double gbps, double length_m, std::string length_class) {
  Medium m;
  m.length_class = std::move(length_class);
  m.length_m = length_m;
  for (const CableKind kind : {CableKind::kRj45, CableKind::kDac, CableKind::kAoc}) {
    const CablePart* c = cat.cable_for(kind, gbps, length_m);
    if (c && (!m.cable || c->cost.price_usd < m.cable->cost.price_usd)) m.cable = c;
  }
  if (m.cable) return m;
  m.xcvr = cat.cable_for(CableKind::kTransceiver, gbps, length_m, 1);
  for (const auto& [id, c] : cat.cables)
    if (c.kind == CableKind::kFibre && c.max_length_m >= length_m &&
        (!m.fibre || c.cost.price_usd < m.fibre->cost.price_usd))
      m.fibre = &c;
  if (!m.fibre) m.xcvr = nullptr;
  return m;
}

Medium host_medium(const Catalog& cat, const NetworkPlan& n) {
  return n.kind == NetworkKind::kOob ? medium(cat, n.port_gbps, kRackRunM, "rack")
                                     : medium(cat, n.port_gbps, kRowRunM, "row");
}
Medium uplink_medium(const Catalog& cat, const NetworkPlan& n) {
  return n.uplinks_to_compute ? medium(cat, n.uplink_gbps, kHallRunM, "hall")
                              : medium(cat, n.uplink_gbps, kRowRunM, "row");
}

// What one network needs, before a switch is chosen.
struct Demand {
  NetworkKind kind = NetworkKind::kStorage;
  double gbps = 0;
  int sides = 1;
  int ports_per_node = 0;
  long long nodes = 0;
  long long other_ports = 0;
  double oversubscription = 1.0;
  bool uplinks_to_compute = false;
  std::string nic_id;  ///< the servers' card counted with this network
  long long nics = 0;
};

// The spine switch for uplinks of `gbps`: a mgmt-spine (or the network's own role) switch with
// the most ports at that speed, the cheaper on a tie.
const Switch* spine_for(const Catalog& cat, SwitchRole role, double gbps) {
  const Switch* best = nullptr;
  for (const auto& [id, s] : cat.switches) {
    if (!(s.has_role(SwitchRole::kMgmtSpine) || s.has_role(role)) || s.uplink_ports > 0) continue;
    const int p = s.ports_at(gbps);
    if (p < 2) continue;
    if (!best || p > best->ports_at(gbps) ||
        (p == best->ports_at(gbps) && s.cost.price_usd < best->cost.price_usd))
      best = &s;
  }
  return best;
}

// Sizes one network on leaf switch `sw`; the error says why it cannot be built.
Result<NetworkPlan> size_on(const Catalog& cat, const Demand& d, const Switch& sw) {
  NetworkPlan n;
  n.kind = d.kind;
  n.sw = sw;
  n.port_gbps = d.gbps;
  n.sides = d.sides;
  n.ports_per_node = d.ports_per_node;
  n.node_ports = d.nodes * d.ports_per_node;
  n.other_ports = d.other_ports;
  n.uplinks_to_compute = d.uplinks_to_compute;
  n.nic_id = d.nic_id;
  n.nics = d.nics;
  const int P = sw.ports_at(d.gbps);
  if (P == 0)
    return Diagnostic::at_key(key_of(d.kind),
                              fmt::format("{} has no {:g} Gbps ports", sw.id, d.gbps));
  n.leaf_ports = P;
  const long long per_side =
      d.nodes * (d.ports_per_node / std::max(1, d.sides)) + ceil_div(d.other_ports, d.sides);
  n.host_links = n.node_ports + n.other_ports;
  if (per_side <= P && !d.uplinks_to_compute) {
    n.tiers = 1;
    n.leaves = d.sides;
    n.leaf_down = static_cast<int>(per_side);
    n.uplink_gbps = d.gbps;
    return n;
  }
  int down = P, up = 0;
  if (sw.uplink_ports > 0) {
    up = sw.uplink_ports;
    n.uplink_gbps = sw.uplink_gbps;
  } else {
    down = static_cast<int>(std::floor(P * d.oversubscription / (d.oversubscription + 1) + 1e-9));
    up = P - down;
    n.uplink_gbps = d.gbps;
  }
  if (down < 1 || up < 1)
    return Diagnostic::at_key(key_of(d.kind),
                              fmt::format("{} leaves have no ports left for uplinks", sw.id));
  const long long per_leaf_side = ceil_div(per_side, down);
  n.leaves = static_cast<int>(d.sides * per_leaf_side);
  n.leaf_down = static_cast<int>(std::min<long long>(down, per_side));
  // Uplinks for the down ports a leaf uses, at the down:up ratio, never fewer than two.
  const double need = n.leaf_down * d.gbps / (d.oversubscription * n.uplink_gbps);
  n.leaf_up = std::min(up, std::max(kMinUplinks, static_cast<int>(std::ceil(need - 1e-9))));
  n.leaf_spine_links = 1LL * n.leaves * n.leaf_up;
  n.tiers = 2;
  if (d.uplinks_to_compute) return n;  // the compute fabric's top tier is the spine
  const Switch* spine = sw.uplink_ports > 0 ? spine_for(cat, role_of(d.kind), n.uplink_gbps) : &sw;
  if (!spine)
    return Diagnostic::at_key(
        key_of(d.kind),
        fmt::format("no spine switch in the catalog runs {:g} Gbps ports for {}'s "
                    "uplinks",
                    n.uplink_gbps, sw.id),
        "add one with roles: [mgmt-spine] in a catalog file");
  n.spine_sw = *spine;
  n.spines = uppers_needed(n.leaves, n.leaf_up, spine->ports_at(n.uplink_gbps));
  if (n.spines <= 0)
    return Diagnostic::at_key(
        key_of(d.kind),
        fmt::format("{} leaves of {} are more than one tier of {} spines can join", n.leaves, sw.id,
                    spine->id),
        "choose a switch with more ports");
  return n;
}

void add_item(Bom& b, std::string category, const std::string& id, const std::string& name,
              std::string role, long long qty, const CostFigure& cost) {
  if (qty <= 0) return;
  b.items.push_back({std::move(category), id, name, std::move(role), qty, cost.price_usd,
                     cost.power_w, cost.provenance()});
}

void add_links(Bom& b, const Medium& m, const std::string& what, long long links,
               std::vector<std::string>& warnings, double gbps) {
  if (links <= 0) return;
  const std::string role = fmt::format("{} ({}, {} m)", what, m.length_class, m.length_m);
  if (m.cable) {
    add_item(b, "cable", m.cable->id, m.cable->name, role, links, m.cable->cost);
  } else if (m.xcvr) {
    add_item(b, "transceiver", m.xcvr->id, m.xcvr->name, role, 2 * links, m.xcvr->cost);
    add_item(b, "fibre", m.fibre->id, m.fibre->name, role, links, m.fibre->cost);
  } else {
    warnings.push_back(
        fmt::format("no cable or optic in the catalog carries {:g} Gbps over {} m "
                    "({}, {} links); add one with a catalog file",
                    gbps, m.length_m, what, links));
  }
}

void build_network_bom(NetworkPlan& n, const Catalog& cat, std::vector<std::string>& warnings) {
  Bom b;
  const std::string net = network_kind_name(n.kind);
  add_item(b, "switch", n.sw.id, n.sw.name, net + (n.tiers > 1 ? " leaf" : " switch"), n.leaves,
           n.sw.cost);
  add_item(b, "switch", n.spine_sw.id, n.spine_sw.name, net + " spine", n.spines, n.spine_sw.cost);
  if (!n.nic_id.empty()) {
    const Nic& nic = cat.nics.at(n.nic_id);
    add_item(b, "nic", nic.id, nic.name, net == "storage" ? "storage + inband" : net, n.nics,
             nic.cost);
  }
  const Medium hm = host_medium(cat, n), um = uplink_medium(cat, n);
  n.host_cable = hm.label();
  n.host_length_class = hm.length_class;
  n.uplink_cable = um.label();
  n.uplink_length_class = um.length_class;
  add_links(b, hm, net + " host-leaf", n.host_links, warnings, n.port_gbps);
  add_links(b, um, net + (n.uplinks_to_compute ? " leaf-compute-spine" : " leaf-spine"),
            n.leaf_spine_links, warnings, n.uplink_gbps);
  for (const auto& it : b.items) {
    b.capex_usd += it.unit_usd * it.qty;
    b.power_w += it.unit_w * it.qty;
  }
  b.network_capex_usd = b.capex_usd;
  b.network_power_w = b.power_w;
  n.bom = std::move(b);
}

// Plans one network: on the spec's switch, or on the cheapest catalog switch of its role.
Result<NetworkPlan> plan_one(const Catalog& cat, const Demand& d, const std::string& switch_id,
                             std::vector<std::string>& warnings) {
  const SwitchRole role = role_of(d.kind);
  std::optional<NetworkPlan> best;
  std::vector<Diagnostic> why;
  int tried = 0;
  for (const auto& [id, sw] : cat.switches) {
    if (switch_id != "auto" ? id != switch_id : !sw.has_role(role)) continue;
    if (sw.ports_at(d.gbps) == 0) continue;
    ++tried;
    auto n = size_on(cat, d, sw);
    if (!n) {
      why.push_back(n.errors().front());
      continue;
    }
    std::vector<std::string> w;
    build_network_bom(*n, cat, w);
    if (!best || n->bom.capex_usd < best->bom.capex_usd) best = std::move(*n);
  }
  if (!best) {
    if (!why.empty()) return why.front();
    return Diagnostic::at_key(
        key_of(d.kind) + (switch_id != "auto" ? ".switch" : ""),
        switch_id != "auto" ? fmt::format("switch '{}' has no {:g} Gbps ports", switch_id, d.gbps)
                            : fmt::format("no {} switch in the catalog runs {:g} Gbps ports",
                                          name_of(kSwitchRoleNames, role), d.gbps),
        "add one with a catalog file (roles: [...]), or change port_speed");
  }
  best->switch_reason =
      switch_id != "auto"
          ? "as the spec requires"
          : fmt::format("lowest capex of the {} {} switch{} that run {:g} Gbps ports", tried,
                        name_of(kSwitchRoleNames, role), tried == 1 ? "" : "es", d.gbps);
  build_network_bom(*best, cat, warnings);
  return *best;
}

}  // namespace

const NetworkPlan* NetworksPlan::find(NetworkKind k) const {
  for (const auto& n : nets)
    if (n.kind == k) return &n;
  return nullptr;
}

Result<NetworksPlan> plan_networks(const Spec& spec, const Catalog& cat, const Plan& compute) {
  NetworksPlan out;
  if (!spec.networks) return out;
  const NetworksSpec& ns = *spec.networks;
  const GpuModel::Networks& server = compute.gpu.networks;
  out.isolation = ns.isolation;
  const long long nodes = compute.nodes;
  std::vector<std::string>& warnings = out.warnings;
  const bool vlan = ns.isolation == Isolation::kVlan;

  // The card that carries the storage and in-band ports (one card, two roles, as on a DGX).
  const std::string nic_id = !ns.storage.nic.empty() ? ns.storage.nic : server.storage_nic;
  const Nic* nic = nullptr;
  if ((ns.storage.enabled && !vlan) || ns.inband.enabled) {
    if (nic_id.empty())
      return spec.at(
          "networks.storage.nic",
          fmt::format("the catalog's {} server names no storage/in-band NIC", compute.gpu.id),
          "give networks.storage.nic (e.g. dual-cx7-400g)");
    nic = &cat.nics.at(nic_id);  // validate_spec checked the id
  }
  const double nic_port_gbps = nic ? nic->rate_gbps / std::max(1, nic->ports) : 0;
  const int cards = server.storage_nic.empty() || nic_id != server.storage_nic
                        ? std::max(1, ns.storage.ports_per_node > 0 ? ns.storage.ports_per_node
                                                                    : server.storage_ports)
                        : server.storage_nics;

  if (ns.storage.enabled) {
    const auto& s = ns.storage;
    Demand d;
    d.kind = NetworkKind::kStorage;
    d.gbps = s.port_gbps > 0                ? s.port_gbps
             : nic_id == server.storage_nic ? server.storage_gbps
                                            : nic_port_gbps;
    if (vlan) d.gbps = compute.topo.lane_gbps;
    d.ports_per_node = vlan ? 0 : (s.ports_per_node > 0 ? s.ports_per_node : server.storage_ports);
    d.sides = std::max(1, std::min(2, std::max(d.ports_per_node, s.storage_node_ports)));
    d.nodes = nodes;
    d.oversubscription = s.oversubscription;
    d.uplinks_to_compute = vlan;
    // Storage servers: as many as the spec says, or enough ports for the target bandwidth.
    out.storage_node_gbps = s.storage_node_ports * d.gbps;
    out.storage_target_gbs_per_node =
        s.target_gbs_per_node > 0 ? s.target_gbs_per_node : server.storage_read_gbs;
    if (s.storage_nodes > 0) {
      out.storage_nodes = s.storage_nodes;
    } else if (out.storage_target_gbs_per_node > 0) {
      out.storage_nodes = static_cast<int>(
          std::ceil(nodes * out.storage_target_gbs_per_node * 8 / out.storage_node_gbps - 1e-9));
    } else {
      return spec.at(
          "networks.storage",
          fmt::format("the catalog's {} server has no storage bandwidth figure", compute.gpu.id),
          "give networks.storage.storage_nodes or target_bandwidth (e.g. 40GB/s)");
    }
    if (out.storage_nodes > kMaxStorageNodes)
      return spec.at(
          "networks.storage.target_bandwidth",
          fmt::format("{:g} GB/s for each of {} servers needs {} storage servers, more "
                      "than the {} this tool plans",
                      out.storage_target_gbs_per_node, nodes, out.storage_nodes, kMaxStorageNodes),
          "give a lower target_bandwidth or storage_nodes");
    d.other_ports = 1LL * out.storage_nodes * s.storage_node_ports;
    if (!vlan && nic) {
      d.nic_id = nic->id;
      d.nics = nodes * cards;
    }
    auto n = plan_one(cat, d, s.switch_id, warnings);
    if (!n) return n.errors();
    out.storage_system_Bps = out.storage_nodes * out.storage_node_gbps * 1e9 / 8;
    out.node_storage_Bps = vlan ? compute.nics_per_node * compute.nic.rate_gbps * 1e9 / 8
                                : d.ports_per_node * d.gbps * 1e9 / 8;
    if (vlan) {
      // The storage leaves' uplinks take free ports of the compute fabric's top tier.
      const Topology& t = compute.topo;
      long long free = 0;
      if (t.kind == TopologyKind::kSingle)
        free = t.radix - t.node_leaf_links;
      else if (t.kind == TopologyKind::kClos2)
        free = 1LL * t.spines * (t.radix - t.spine_down) * t.planes;
      else
        return spec.at("networks.isolation",
                       fmt::format("isolation: vlan attaches the storage leaves to the compute "
                                   "fabric's top tier, which gpufabric does for single and clos2 "
                                   "fabrics, not {}",
                                   topology_kind_name(t.kind)),
                       "use isolation: physical");
      if (n->leaf_spine_links > free)
        return spec.at("networks.isolation",
                       fmt::format("the storage leaves need {} uplinks into the compute fabric's "
                                   "top tier, which has {} free ports",
                                   n->leaf_spine_links, free),
                       "set fabric.spine_headroom to keep ports free, or use isolation: physical");
    }
    out.nets.push_back(std::move(*n));
  }
  if (ns.inband.enabled) {
    const auto& s = ns.inband;
    Demand d;
    d.kind = NetworkKind::kInband;
    d.gbps = s.port_gbps > 0 ? s.port_gbps : server.inband_gbps;
    d.ports_per_node = s.ports_per_node > 0 ? s.ports_per_node : server.inband_ports;
    d.sides = std::max(1, std::min(2, d.ports_per_node));
    d.nodes = nodes;
    d.other_ports = 0;
    // In-band carries provisioning and user traffic, not bulk data: its leaves uplink at the
    // down:up ratio of their own ports (a 64-port leaf: 48 down, 16 up, 3:1).
    d.oversubscription = 3.0;
    if (nic && (!ns.storage.enabled || vlan)) {
      d.nic_id = nic->id;
      d.nics = nodes * cards;
    }
    auto n = plan_one(cat, d, s.switch_id, warnings);
    if (!n) return n.errors();
    if (d.gbps > nic_port_gbps && nic)
      warnings.push_back(fmt::format("networks.inband: {:g} Gbps ports on {} ports of {:g} Gbps",
                                     d.gbps, nic->id, nic_port_gbps));
    out.nets.push_back(std::move(*n));
  }
  out.racks = static_cast<int>(ceil_div(nodes, ns.oob.nodes_per_rack));
  if (ns.oob.enabled) {
    Demand d;
    d.kind = NetworkKind::kOob;
    // 1000BASE-T BMC ports (DGX SuperPOD RA: the OOB port is used for BMC access).
    d.gbps = 1;
    d.ports_per_node = 1;
    d.sides = 1;
    d.nodes = nodes;
    out.pdus = out.racks * ns.oob.pdus_per_rack;
    long long mgmt_ports = compute.switch_total;
    for (const auto& n : out.nets) mgmt_ports += n.switches();
    d.other_ports = out.storage_nodes + mgmt_ports + out.pdus;
    d.oversubscription = 48.0;
    auto n = plan_one(cat, d, ns.oob.switch_id, warnings);
    if (!n) return n.errors();
    out.nets.push_back(std::move(*n));
  }
  for (const auto& n : out.nets) {
    out.capex_usd += n.bom.capex_usd;
    out.power_w += n.bom.power_w;
  }
  return out;
}

std::string network_switch_name(const NetworkPlan& n, bool spine, int index) {
  const char* prefix = n.kind == NetworkKind::kStorage  ? "stor"
                       : n.kind == NetworkKind::kInband ? "inband"
                                                        : "oob";
  if (spine) return fmt::format("{}-spine{:02}", prefix, index + 1);
  if (n.kind == NetworkKind::kOob) return fmt::format("{}-leaf{:03}", prefix, index + 1);
  const int per_side = std::max(1, n.leaves / std::max(1, n.sides));
  return fmt::format("{}-leaf-{}{:02}", prefix, static_cast<char>('a' + index / per_side),
                     index % per_side + 1);
}

std::string storage_node_name(int index) { return fmt::format("storage{:03}", index + 1); }

void for_each_network_link(const Plan& p, const std::function<void(const NetworkLink&)>& visit) {
  if (!p.networks) return;
  const NetworksPlan& nets = *p.networks;
  const int node_w = std::max(3, static_cast<int>(std::to_string(p.nodes).size()));
  auto node = [&](long long i) { return fmt::format("node{:0{}}", i + 1, node_w); };
  // The compute fabric's top tier, for storage leaves that uplink into it (isolation: vlan).
  std::vector<std::pair<std::string, int>> top;  // device, its first free port
  {
    std::vector<std::string> names;
    for_each_compute_switch(p, [&](const std::string& name, bool top_tier) {
      if (top_tier) names.push_back(name);
    });
    const Topology& t = p.topo;
    const int first_free = t.kind == TopologyKind::kSingle ? static_cast<int>(t.node_leaf_links) + 1
                                                           : t.spine_down + 1;
    for (auto& n : names) top.emplace_back(std::move(n), first_free);
  }
  for (const NetworkPlan& n : nets.nets) {
    NetworkLink l;
    l.network = n.kind;
    const int per_side = std::max(1, n.leaves / std::max(1, n.sides));
    const int down = std::max(1, n.tiers > 1 ? n.leaf_down : n.leaf_ports);
    std::vector<long long> next(static_cast<size_t>(std::max(1, n.sides)), 0);
    // Endpoint k of side s goes to leaf (s, k / down), port k % down + 1.
    auto attach = [&](int side, std::string dev, std::string port, const std::string& cable,
                      const std::string& length_class) {
      const long long k = next[static_cast<size_t>(side)]++;
      const int leaf = side * per_side + static_cast<int>(k / down);
      l.a_device = std::move(dev);
      l.a_port = std::move(port);
      l.b_device = network_switch_name(n, false, leaf);
      l.b_port = std::to_string(k % down + 1);
      l.cable = cable;
      l.length_class = length_class;
      visit(l);
    };
    const std::string host_cable = n.host_cable, host_class = n.host_length_class;
    const char* port_prefix = n.kind == NetworkKind::kStorage ? "stor" : "inband";
    if (n.kind == NetworkKind::kOob) {
      for (long long i = 0; i < p.nodes; ++i) attach(0, node(i), "bmc", host_cable, host_class);
      for (int i = 0; i < nets.storage_nodes; ++i)
        attach(0, storage_node_name(i), "bmc", host_cable, host_class);
      for_each_compute_switch(p, [&](const std::string& name, bool) {
        attach(0, name, "mgmt0", host_cable, host_class);
      });
      for (const NetworkPlan& o : nets.nets) {
        if (o.kind == NetworkKind::kOob) continue;
        for (int i = 0; i < o.leaves; ++i)
          attach(0, network_switch_name(o, false, i), "mgmt0", host_cable, host_class);
        for (int i = 0; i < o.spines; ++i)
          attach(0, network_switch_name(o, true, i), "mgmt0", host_cable, host_class);
      }
      for (int r = 0; r < nets.racks; ++r)
        for (int q = 0; q < nets.pdus / std::max(1, nets.racks); ++q)
          attach(0, fmt::format("rack{:03}-pdu{}", r + 1, q + 1), "mgmt", host_cable, host_class);
    } else {
      for (long long i = 0; i < p.nodes; ++i)
        for (int q = 0; q < n.ports_per_node; ++q)
          attach(q % n.sides, node(i), fmt::format("{}{}", port_prefix, q), host_cable, host_class);
      if (n.kind == NetworkKind::kStorage) {
        long long port = 0;
        for (int i = 0; i < nets.storage_nodes; ++i)
          for (long long q = 0; q < n.other_ports / std::max(1, nets.storage_nodes); ++q)
            attach(static_cast<int>(port++ % n.sides), storage_node_name(i),
                   fmt::format("data{}", q), host_cable, host_class);
      }
    }
    // Leaf uplink j goes to spine j mod S; on the spine, leaf l's links take ports in turn.
    const int spines = n.uplinks_to_compute ? static_cast<int>(top.size()) : n.spines;
    if (spines <= 0) continue;
    const int per_pair = (n.leaf_up + spines - 1) / spines;
    for (int leaf = 0; leaf < n.leaves; ++leaf)
      for (int j = 0; j < n.leaf_up; ++j) {
        const int s = j % spines;
        l.a_device = network_switch_name(n, false, leaf);
        l.a_port = std::to_string(n.sw.uplink_ports > 0 ? n.leaf_ports + j + 1 : down + j + 1);
        if (n.uplinks_to_compute) {
          l.b_device = top[static_cast<size_t>(s)].first;
          l.b_port = std::to_string(top[static_cast<size_t>(s)].second++);
        } else {
          l.b_device = network_switch_name(n, true, s);
          l.b_port = std::to_string(leaf * per_pair + j / spines + 1);
        }
        l.cable = n.uplink_cable;
        l.length_class = n.uplink_length_class;
        visit(l);
      }
  }
}

}  // namespace gf
