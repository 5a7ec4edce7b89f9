#include "plan/networks.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <optional>
#include <tuple>
#include <utility>
#include <vector>

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

// The MLAG peer link of an Ethernet leaf pair: two ports of each leaf, two cables a pair (DGX
// BasePOD deployment guide, DGX A100, switch configurations: "nv set interface peerlink bond
// member swp57" and "swp58"; DGX SuperPOD H100 RA RA-11333-001 V11, Table 8: 6 "ISL Cables" for
// the in-band network's 8 SN4600C).
constexpr int kPeerLinkPorts = 2;

// Storage servers' leaves: "The storage devices are connected at a 1:1 port to uplink ratio"
// while the DGX connections are "slightly oversubscribed with a ratio near 4:3" (DGX SuperPOD
// H100 RA RA-11333-001 V11, storage fabric): a leaf has one ratio, so an oversubscribed storage
// network puts the storage servers on leaves of their own.
constexpr double kStorageServerOversubscription = 1.0;

// Rounds of planning the in-band and OOB networks around each other before giving up (each
// round adds at most a few switches; two or three settle every cluster this tool plans).
constexpr int kMaxNetworkRounds = 16;

long long ceil_div(long long a, long long b) { return (a + b - 1) / b; }

// The fewest upper switches of `ports` ports over which groups of `count` lower switches with
// `up` links each spread their links evenly (a lower switch's links to one upper switch differ
// by at most one); -1 when none up to the most links of one lower switch do.
struct LowerGroup {
  long long count = 0;
  int up = 0;
};
int uppers_needed(const std::vector<LowerGroup>& groups, int ports) {
  long long links = 0;
  int max_up = 0;
  for (const auto& g : groups) {
    if (g.count <= 0 || g.up <= 0) continue;
    links += g.count * g.up;
    max_up = std::max(max_up, g.up);
  }
  if (links == 0 || ports <= 0) return 0;
  const long long floor = std::min(max_up, kMinUplinks);
  for (long long n = std::max(floor, ceil_div(links, ports)); n <= max_up; ++n) {
    long long on_one = 0;  // links the most loaded upper switch takes
    for (const auto& g : groups)
      if (g.count > 0 && g.up > 0) on_one += g.count * ceil_div(g.up, n);
    if (on_one <= ports) return static_cast<int>(n);
  }
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
  // A fibre of the transceiver's medium.
  m.fibre = m.xcvr ? cat.fibre_for(length_m, m.xcvr->media) : nullptr;
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
  /// The switches' technology where it is bound: storage leaves that uplink into the compute
  /// fabric's top tier (isolation: vlan) are of the compute fabric's own.
  std::optional<SwitchTechnology> technology;
  long long reserved_ports = 0;  ///< in-band: ports the OOB switches' uplinks take
  int units = 1;                 ///< OOB: sized per scalable unit of the compute fabric
  double inband_gbps = 0;        ///< OOB: the in-band leaves' port speed; 0: no in-band network
  std::string nic_id;            ///< the servers' card counted with this network
  long long nics = 0;
  long long nics_in_server = 0;  ///< of them, those the server's figure includes (node.nics)
  std::string nics_in_server_source;
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

// Down and up ports of a leaf of `ports` ports at `os` down:up.
std::pair<int, int> split_ports(int ports, double os) {
  const int down = static_cast<int>(std::floor(ports * os / (os + 1) + 1e-9));
  return {down, ports - down};
}

// One group of leaves on a side: `endpoints` ports spread evenly over the fewest leaves of
// `down` ports, each with the uplinks its used ports need at `os`, never fewer than two.
struct LeafGroup {
  int leaves = 0, used = 0, up = 0;
};
LeafGroup leaf_group(long long endpoints, int down, int up, double gbps, double up_gbps,
                     double os) {
  LeafGroup g;
  if (endpoints <= 0) return g;
  g.leaves = static_cast<int>(ceil_div(endpoints, down));
  g.used = static_cast<int>(ceil_div(endpoints, g.leaves));
  const double need = g.used * gbps / (os * up_gbps);
  g.up = std::min(up, std::max(kMinUplinks, static_cast<int>(std::ceil(need - 1e-9))));
  return g;
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
  n.reserved_ports = d.reserved_ports;
  n.uplinks_to_compute = d.uplinks_to_compute;
  n.nic_id = d.nic_id;
  n.nics = d.nics;
  n.nics_in_server = d.nics_in_server;
  n.nics_in_server_source = d.nics_in_server_source;
  const int P = sw.ports_at(d.gbps);
  if (P == 0)
    return Diagnostic::at_key(key_of(d.kind),
                              fmt::format("{} has no {:g} Gbps ports", sw.id, d.gbps));
  n.leaf_ports = P;
  // An Ethernet leaf pair (two sides) is an MLAG pair joined by its peer link.
  const bool pairs = d.sides == 2 && sw.technology == SwitchTechnology::kEthernet;
  const int peer = pairs ? kPeerLinkPorts : 0;
  const int units = std::max(1, d.units);
  // Endpoints of one side: the GPU servers' ports, then the others' (storage servers, BMCs,
  // switch management ports, PDUs) and the ports reserved for another network's uplinks. The
  // OOB network is built per scalable unit, each unit with its share ("the fabric should be
  // designed to support the full SU", DGX SuperPOD H100 RA, network fabrics).
  const long long node_side = d.nodes * (d.ports_per_node / std::max(1, d.sides));
  const long long other_side = ceil_div(d.other_ports, d.sides);
  const long long reserved_side = ceil_div(d.reserved_ports, d.sides);
  const long long per_side = ceil_div(node_side + other_side + reserved_side, units);
  n.host_links = n.node_ports + n.other_ports;
  n.units = units;
  // One switch a side holds every port: one tier, unless it is an OOB switch that uplinks into
  // the in-band leaves (its own 100G ports at their speed), which even alone it does.
  const bool oob_into_inband = d.kind == NetworkKind::kOob && d.inband_gbps > 0 &&
                               sw.uplink_ports > 0 &&
                               std::abs(sw.uplink_gbps - d.inband_gbps) < 1e-9;
  if (per_side <= P - peer && units == 1 && !d.uplinks_to_compute && !oob_into_inband) {
    n.tiers = 1;
    n.leaves_per_unit = d.sides;
    n.leaves = d.sides * units;
    n.leaf_down = static_cast<int>(per_side);
    n.uplink_gbps = d.gbps;
    n.isl_links = pairs ? kPeerLinkPorts : 0;
    return n;
  }
  int down = P - peer, up = 0;
  if (sw.uplink_ports > 0) {
    up = sw.uplink_ports;
    n.uplink_gbps = sw.uplink_gbps;
  } else {
    std::tie(down, up) = split_ports(P - peer, d.oversubscription);
    n.uplink_gbps = d.gbps;
  }
  if (down < 1 || up < 1)
    return Diagnostic::at_key(key_of(d.kind),
                              fmt::format("{} leaves have no ports left for uplinks", sw.id));
  // Storage servers on leaves of their own at 1:1 when the GPU servers' are oversubscribed.
  const bool apart = d.kind == NetworkKind::kStorage && sw.uplink_ports == 0 &&
                     d.oversubscription > kStorageServerOversubscription + 1e-9 && other_side > 0 &&
                     node_side > 0;
  LeafGroup nodes_g, other_g;
  if (apart) {
    const auto [down_o, up_o] = split_ports(P - peer, kStorageServerOversubscription);
    nodes_g = leaf_group(node_side, down, up, d.gbps, n.uplink_gbps, d.oversubscription);
    other_g = leaf_group(other_side + reserved_side, down_o, up_o, d.gbps, n.uplink_gbps,
                         kStorageServerOversubscription);
  } else {
    nodes_g = leaf_group(per_side, down, up, d.gbps, n.uplink_gbps, d.oversubscription);
  }
  n.leaves_per_unit = d.sides * (nodes_g.leaves + other_g.leaves);
  n.leaves = n.leaves_per_unit * units;
  n.other_leaves_per_side = other_g.leaves;
  n.leaf_down = nodes_g.used;
  n.leaf_up = nodes_g.up;
  n.other_down = other_g.used;
  n.other_up = other_g.up;
  n.leaf_spine_links = 1LL * units * d.sides *
                       (1LL * nodes_g.leaves * nodes_g.up + 1LL * other_g.leaves * other_g.up);
  n.isl_links = pairs ? 1LL * (n.leaves / 2) * kPeerLinkPorts : 0;
  n.tiers = 2;
  if (d.uplinks_to_compute) return n;  // the compute fabric's top tier is the spine
  // The OOB leaves uplink into the in-band network ("Two uplinks per OOB to in-band", DGX
  // SuperPOD H100 RA RA-11333-001 V11, Table 8; "the OOB network is connected to the in-band
  // network", in-band management network): no OOB spines where the speeds match.
  if (d.kind == NetworkKind::kOob && d.inband_gbps > 0 &&
      std::abs(d.inband_gbps - n.uplink_gbps) < 1e-9) {
    n.uplinks_to_inband = true;
    return n;
  }
  const Switch* spine = sw.uplink_ports > 0 ? spine_for(cat, role_of(d.kind), n.uplink_gbps) : &sw;
  if (!spine)
    return Diagnostic::at_key(
        key_of(d.kind),
        fmt::format("no spine switch in the catalog runs {:g} Gbps ports for {}'s "
                    "uplinks",
                    n.uplink_gbps, sw.id),
        "add one with roles: [mgmt-spine] in a catalog file");
  n.spine_sw = *spine;
  n.spines = uppers_needed({{1LL * units * d.sides * nodes_g.leaves, nodes_g.up},
                            {1LL * units * d.sides * other_g.leaves, other_g.up}},
                           spine->ports_at(n.uplink_gbps));
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
    const std::string role = net == "storage" ? "storage + inband" : net;
    add_item(b, "nic", nic.id, nic.name, role, n.nics - n.nics_in_server, nic.cost);
    // The cards the servers' figure already includes (a DGX's two dual-port cards): listed, at
    // no further cost, so the cluster pays for them once.
    add_item(b, "nic", nic.id, nic.name, role + " (in the server)", n.nics_in_server,
             CostFigure{0, 0, n.nics_in_server_source, false});
  }
  const Medium hm = host_medium(cat, n), um = uplink_medium(cat, n);
  n.host_cable = hm.label();
  n.host_length_class = hm.length_class;
  n.uplink_cable = um.label();
  n.uplink_length_class = um.length_class;
  add_links(b, hm, net + " host-leaf", n.host_links, warnings, n.port_gbps);
  add_links(b, um,
            net + (n.uplinks_to_compute  ? " leaf-compute-spine"
                   : n.uplinks_to_inband ? " leaf-inband-leaf"
                                         : " leaf-spine"),
            n.leaf_spine_links, warnings, n.uplink_gbps);
  // The two leaves of a pair share a rack: their peer link is a rack run at the host speed.
  const Medium im = medium(cat, n.port_gbps, kRackRunM, "rack");
  n.isl_cable = n.isl_links > 0 ? im.label() : "";
  add_links(b, im, net + " leaf peer link", n.isl_links, warnings, n.port_gbps);
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
  const auto tech_name = [](SwitchTechnology t) {
    return t == SwitchTechnology::kInfiniband ? "InfiniBand" : "Ethernet";
  };
  for (const auto& [id, sw] : cat.switches) {
    if (switch_id != "auto" ? id != switch_id : !sw.has_role(role)) continue;
    if (d.technology && sw.technology != *d.technology) {
      if (switch_id == "auto") continue;
      return Diagnostic::at_key(
          key_of(d.kind) + ".switch",
          fmt::format("isolation: vlan joins the {} leaves to the compute fabric, which is an {} "
                      "fabric; {} is an {} switch",
                      network_kind_name(d.kind), tech_name(*d.technology), id,
                      tech_name(sw.technology)),
          fmt::format("choose an {} switch (or switch: auto), or isolation: physical",
                      tech_name(*d.technology)));
    }
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
    if (switch_id != "auto")
      return Diagnostic::at_key(
          key_of(d.kind) + ".switch",
          fmt::format("switch '{}' has no {:g} Gbps ports", switch_id, d.gbps),
          "choose a switch that runs them, or switch: auto");
    // No catalog switch runs the speed: the port speed is what to change, where the spec sets
    // it (the OOB network's is its BMCs' 1G; isolation: vlan's, the compute fabric's).
    const bool has_speed_key = d.kind != NetworkKind::kOob && !d.uplinks_to_compute;
    return Diagnostic::at_key(
        key_of(d.kind) + (has_speed_key ? ".port_speed" : ""),
        fmt::format("no {}{} switch in the catalog runs {:g} Gbps ports",
                    d.technology ? std::string(tech_name(*d.technology)) + " " : "",
                    name_of(kSwitchRoleNames, role), d.gbps),
        fmt::format("add one with roles: [{}] in a catalog file{}", name_of(kSwitchRoleNames, role),
                    has_speed_key ? ", or give another port_speed" : ""));
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
  // plan_one() names the key; the spec says where it is written (file, line; else its section).
  auto located = [&](const std::vector<Diagnostic>& errs) {
    std::vector<Diagnostic> out;
    for (const auto& d : errs) out.push_back(spec.at(d.key, d.message, d.hint));
    return out;
  };
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
  // Those of the server's own cards that its catalog figure includes (node.nics).
  const int included = nic_id == server.storage_nic && !nic_id.empty()
                           ? std::min(cards, cat.included_nics(compute.gpu).storage_cards)
                           : 0;
  auto count_cards = [&](Demand& d) {
    d.nic_id = nic->id;
    d.nics = nodes * cards;
    d.nics_in_server = nodes * included;
    d.nics_in_server_source =
        fmt::format("in the {} server's figure (catalog node.nics: {} a server), counted there",
                    compute.gpu.id, included);
  };

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
    if (vlan) d.technology = compute.sw.technology;
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
    if (!vlan && nic) count_cards(d);
    auto n = plan_one(cat, d, s.switch_id, warnings);
    if (!n) return located(n.errors());
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
  std::optional<Demand> inband;
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
    if (nic && (!ns.storage.enabled || vlan)) count_cards(d);
    if (d.gbps > nic_port_gbps && nic)
      warnings.push_back(fmt::format("networks.inband: {:g} Gbps ports on {} ports of {:g} Gbps",
                                     d.gbps, nic->id, nic_port_gbps));
    inband = d;
  }
  out.racks = static_cast<int>(ceil_div(nodes, ns.oob.nodes_per_rack));
  if (ns.oob.enabled) out.pdus = out.racks * ns.oob.pdus_per_rack;
  // The OOB switches uplink into the in-band leaves, whose switches the OOB network manages in
  // turn: plan both again until the ports the uplinks take and the switches to manage agree
  // (the counts only grow, a few rounds at most).
  std::optional<NetworkPlan> inband_plan, oob_plan;
  std::vector<std::string> inband_warnings, oob_warnings;
  long long reserved = 0;
  bool settled = false;
  for (int round = 0; round < kMaxNetworkRounds && !settled; ++round) {
    if (inband) {
      Demand d = *inband;
      d.reserved_ports = reserved;
      inband_warnings.clear();
      auto n = plan_one(cat, d, ns.inband.switch_id, inband_warnings);
      if (!n) return located(n.errors());
      inband_plan = std::move(*n);
    }
    if (!ns.oob.enabled) break;
    Demand d;
    d.kind = NetworkKind::kOob;
    // 1000BASE-T BMC ports (DGX SuperPOD RA: the OOB port is used for BMC access).
    d.gbps = 1;
    d.ports_per_node = 1;
    d.sides = 1;
    d.nodes = nodes;
    long long mgmt_ports = compute.switch_total;
    for (const auto& n : out.nets) mgmt_ports += n.switches();
    if (inband_plan) mgmt_ports += inband_plan->switches();
    d.other_ports = out.storage_nodes + mgmt_ports + out.pdus;
    d.oversubscription = 48.0;
    d.units = std::max(1, compute.topo.units);
    d.inband_gbps = inband_plan ? inband_plan->port_gbps : 0;
    oob_warnings.clear();
    auto n = plan_one(cat, d, ns.oob.switch_id, oob_warnings);
    if (!n) return located(n.errors());
    oob_plan = std::move(*n);
    const long long need = oob_plan->uplinks_to_inband ? oob_plan->leaf_spine_links : 0;
    settled = need == reserved;
    reserved = need;
  }
  if (ns.oob.enabled && !settled)
    return spec.at("networks.oob",
                   fmt::format("the out-of-band uplinks into the in-band leaves did not settle "
                               "in {} rounds",
                               kMaxNetworkRounds),
                   "give networks.oob.switch or networks.inband.switch");
  warnings.insert(warnings.end(), inband_warnings.begin(), inband_warnings.end());
  warnings.insert(warnings.end(), oob_warnings.begin(), oob_warnings.end());
  if (inband_plan) out.nets.push_back(std::move(*inband_plan));
  if (oob_plan) out.nets.push_back(std::move(*oob_plan));
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
  auto node = [&](long long i) { return node_name(p, i); };
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
  // The in-band leaf ports the OOB leaves' uplinks take, in the order they are handed out.
  std::vector<std::pair<std::string, int>> inband_slots;
  for (const NetworkPlan& n : nets.nets) {
    NetworkLink l;
    l.network = n.kind;
    const int per_side = std::max(1, n.leaves / std::max(1, n.sides));
    const int node_leaves = n.node_leaves_per_side();
    const int down = std::max(1, n.tiers > 1 ? n.leaf_down : n.leaf_ports);
    const int other_down = std::max(1, n.other_down);
    const bool apart = n.other_leaves_per_side > 0;
    // Endpoint k of side s and group g (0: the GPU servers' ports; 1: the others', on leaves of
    // their own when `apart`) goes to leaf (s, k / down), port k % down + 1.
    std::vector<std::array<long long, 2>> next(static_cast<size_t>(std::max(1, n.sides)),
                                               std::array<long long, 2>{0, 0});
    auto place = [&](int side, int group) {
      const int g = apart ? group : 0;
      const long long k = next[static_cast<size_t>(side)][static_cast<size_t>(g)]++;
      const int d = g == 1 ? other_down : down;
      const int leaf = side * per_side + (g == 1 ? node_leaves : 0) + static_cast<int>(k / d);
      return std::pair<int, int>{leaf, static_cast<int>(k % d + 1)};
    };
    auto attach = [&](int side, int group, std::string dev, std::string port,
                      const std::string& cable, const std::string& length_class) {
      const auto [leaf, leaf_port] = place(side, group);
      l.a_device = std::move(dev);
      l.a_port = std::move(port);
      l.b_device = network_switch_name(n, false, leaf);
      l.b_port = std::to_string(leaf_port);
      l.cable = cable;
      l.length_class = length_class;
      visit(l);
    };
    const std::string host_cable = n.host_cable, host_class = n.host_length_class;
    const char* port_prefix = n.kind == NetworkKind::kStorage ? "stor" : "inband";
    if (n.kind == NetworkKind::kOob) {
      for (long long i = 0; i < p.nodes; ++i) attach(0, 0, node(i), "bmc", host_cable, host_class);
      for (int i = 0; i < nets.storage_nodes; ++i)
        attach(0, 0, storage_node_name(i), "bmc", host_cable, host_class);
      for_each_compute_switch(p, [&](const std::string& name, bool) {
        attach(0, 0, name, "mgmt0", host_cable, host_class);
      });
      for (const NetworkPlan& o : nets.nets) {
        if (o.kind == NetworkKind::kOob) continue;
        for (int i = 0; i < o.leaves; ++i)
          attach(0, 0, network_switch_name(o, false, i), "mgmt0", host_cable, host_class);
        for (int i = 0; i < o.spines; ++i)
          attach(0, 0, network_switch_name(o, true, i), "mgmt0", host_cable, host_class);
      }
      for (int r = 0; r < nets.racks; ++r)
        for (int q = 0; q < nets.pdus / std::max(1, nets.racks); ++q)
          attach(0, 0, fmt::format("rack{:03}-pdu{}", r + 1, q + 1), "mgmt", host_cable,
                 host_class);
    } else {
      for (long long i = 0; i < p.nodes; ++i)
        for (int q = 0; q < n.ports_per_node; ++q)
          attach(q % n.sides, 0, node(i), fmt::format("{}{}", port_prefix, q), host_cable,
                 host_class);
      if (n.kind == NetworkKind::kStorage) {
        long long port = 0;
        for (int i = 0; i < nets.storage_nodes; ++i)
          for (long long q = 0; q < n.other_ports / std::max(1, nets.storage_nodes); ++q)
            attach(static_cast<int>(port++ % n.sides), 1, storage_node_name(i),
                   fmt::format("data{}", q), host_cable, host_class);
      }
      if (n.kind == NetworkKind::kInband)
        for (long long r = 0; r < n.reserved_ports; ++r) {
          const auto [leaf, leaf_port] = place(static_cast<int>(r % n.sides), 1);
          inband_slots.emplace_back(network_switch_name(n, false, leaf), leaf_port);
        }
    }
    // The peer link of each leaf pair: the last ports of the two leaves of the same number.
    if (n.isl_links > 0)
      for (int i = 0; i < per_side; ++i)
        for (long long q = 0; q < n.isl_links / std::max(1, per_side); ++q) {
          const std::string port = std::to_string(n.leaf_ports - q);
          l.a_device = network_switch_name(n, false, i);
          l.a_port = port;
          l.b_device = network_switch_name(n, false, per_side + i);
          l.b_port = port;
          l.cable = n.isl_cable;
          l.length_class = "rack";
          l.peer_link = true;
          visit(l);
          l.peer_link = false;
        }
    // Leaf uplink j goes to spine j mod S; on the spine, leaf l's links take ports in turn. The
    // OOB leaves' uplinks take the in-band leaves' reserved ports in turn instead.
    auto up_port = [&](int leaf, int j) {
      const bool other = apart && leaf % per_side >= node_leaves;
      const int used = other ? n.other_down : down;
      return std::to_string(n.sw.uplink_ports > 0 ? n.leaf_ports + j + 1 : used + j + 1);
    };
    if (n.uplinks_to_inband) {
      size_t slot = 0;
      for (int leaf = 0; leaf < n.leaves; ++leaf)
        for (int j = 0; j < n.leaf_up && slot < inband_slots.size(); ++j, ++slot) {
          l.a_device = network_switch_name(n, false, leaf);
          l.a_port = up_port(leaf, j);
          l.b_device = inband_slots[slot].first;
          l.b_port = std::to_string(inband_slots[slot].second);
          l.cable = n.uplink_cable;
          l.length_class = n.uplink_length_class;
          visit(l);
        }
      continue;
    }
    const int spines = n.uplinks_to_compute ? static_cast<int>(top.size()) : n.spines;
    if (spines <= 0) continue;
    std::vector<int> spine_next(static_cast<size_t>(spines), 1);  // each spine's next port
    // Uplinks on the compute fabric's top tier take its switches in turn across the leaves, so
    // that none gives up more ports than the rest (growth counts ceil(uplinks / switches) a
    // switch); a network's own spines take each leaf's uplinks from the first.
    int next_top = 0;
    for (int leaf = 0; leaf < n.leaves; ++leaf) {
      const bool other = apart && leaf % per_side >= node_leaves;
      const int ups = other ? n.other_up : n.leaf_up;
      for (int j = 0; j < ups; ++j) {
        const int s = n.uplinks_to_compute ? next_top++ % spines : j % spines;
        l.a_device = network_switch_name(n, false, leaf);
        l.a_port = up_port(leaf, j);
        if (n.uplinks_to_compute) {
          l.b_device = top[static_cast<size_t>(s)].first;
          l.b_port = std::to_string(top[static_cast<size_t>(s)].second++);
        } else {
          l.b_device = network_switch_name(n, true, s);
          l.b_port = std::to_string(spine_next[static_cast<size_t>(s)]++);
        }
        l.cable = n.uplink_cable;
        l.length_class = n.uplink_length_class;
        visit(l);
      }
    }
  }
}

}  // namespace gf
