#include "plan/plan.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>

#include "common/file.h"
#include "units/units.h"

namespace gf {
namespace {

// Guide §2/§3.3: "peak performance at > 1000 GPUs -> InfiniBand; cost, cloud or ~hundreds of
// GPUs -> RoCE".
constexpr long long kInfinibandPreferredAboveGpus = 1000;
// Guide §3.3: oversubscription 1:1, "at most ~2:1".
constexpr double kMaxAdvisedOversubscription = 2.0;
// Guide §8: keep at least half of the spine ports free for growth.
constexpr double kAdvisedSpineHeadroom = 0.5;
// Per-flow ECMP on RoCE loses bandwidth to hash collisions at scale (Meta SIGCOMM'24;
// Alibaba HPN SIGCOMM'24); beyond this many GPUs plain ECMP deserves a warning.
constexpr long long kPlainEcmpWarnAboveGpus = 2048;
long long ceil_div(long long a, long long b) { return (a + b - 1) / b; }

int usable(int ports, double headroom) {
  return std::max(1, static_cast<int>(std::floor(ports * (1.0 - headroom) + 1e-9)));
}

// Leaf down/up split for a down:up ratio r on `k` ports.
void split_leaf(int k, double r, int& down, int& up) {
  down = static_cast<int>(std::floor(k * r / (r + 1) + 1e-9));
  up = k - down;
}

// A lower switch with two or more uplinks spreads them over at least this many upper switches,
// so that losing one upper switch never cuts a leaf (or a pod) off: the redundant spine layer of
// a Clos fabric (RFC 7938 §3.1 builds every tier of at least two switches).
constexpr int kMinUpperSwitches = 2;

// The smallest number of upper switches (each `ports` wide) such that each of `lowers`
// switches spreads `up` links over all of them and no upper switch runs out of ports; at least
// kMinUpperSwitches when a lower switch has that many uplinks.
int uppers_needed(long long lowers, int up, int ports) {
  if (lowers <= 0 || up <= 0) return 0;
  const long long floor = std::min(up, kMinUpperSwitches);
  for (long long n = std::max(floor, ceil_div(lowers * up, ports)); n <= up; ++n)
    if (lowers * ceil_div(up, n) <= ports) return static_cast<int>(n);
  return -1;  // more lower switches than an upper switch can reach
}

}  // namespace

std::optional<Topology> size_topology(TopologyKind kind, int nodes, int rails, int radix,
                                      double lane_gbps, const FabricSpec& f, int appliance_ports) {
  Topology t;
  t.rail_optimized = f.rail_optimized;
  t.planes = f.planes;
  t.lane_gbps = lane_gbps;
  t.radix = radix;
  t.rails = rails;
  const long long endpoints = 1LL * nodes * rails + appliance_ports;
  const int k = radix;
  if (kind == TopologyKind::kSingle) {
    t.kind = kind;
    t.tiers = 1;
    t.max_endpoints = t.max_endpoints_grown = k;
    if (endpoints > k) return std::nullopt;
    t.leaves = 1;
    t.leaf_down = k;
    t.nodes_per_unit = nodes;
    t.leaves_per_unit = 1;
    t.units = 1;
    t.node_leaf_links = endpoints;
    return t;
  }
  split_leaf(k, f.oversubscription, t.leaf_down, t.leaf_up);
  // A scalable unit: rail-optimized, one leaf per rail takes one port from every node of the
  // unit (DGX SuperPOD); otherwise a leaf is a top-of-rack switch holding whole nodes. By
  // default a unit is as large as a leaf allows, or the whole cluster when that is smaller.
  int down_used = 0;
  // The nodes a leaf holds: one port of each (rail-optimized) or whole nodes.
  const int per_leaf = f.rail_optimized ? t.leaf_down : t.leaf_down / rails;
  if (per_leaf < 1) return std::nullopt;
  auto leaves_for = [&](int unit_nodes) {
    return static_cast<int>(ceil_div(unit_nodes, per_leaf)) * (f.rail_optimized ? rails : 1);
  };
  // Units a leaf's worth at most, as many as the nodes need, the nodes spread evenly over them:
  // 256 nodes on leaves of 85 are 4 units of 64, not 3 of 85 and one of a single node whose
  // leaves and uplinks are a unit's (which also left the asked ratio unmet, 1.98:1 for 2:1).
  t.unit_slots = f.scalable_unit > 0 ? f.scalable_unit
                                     : static_cast<int>(ceil_div(nodes, ceil_div(nodes, per_leaf)));
  // Appliances (e.g. UFM) take free leaf down ports. Where the units the nodes fill leave too
  // few, a rail-optimized unit holds fewer nodes (as a DGX SuperPOD's UFM takes a node's slot)
  // and one unit more the rest: a unit of no nodes would be a unit's leaves and uplinks for a few
  // appliance ports.
  auto free_ports = [&](int unit_nodes) {
    return ceil_div(nodes, unit_nodes) * leaves_for(unit_nodes) * t.leaf_down - 1LL * nodes * rails;
  };
  t.nodes_per_unit = t.unit_slots;
  if (f.rail_optimized) {
    int unit_nodes = t.unit_slots;
    while (unit_nodes > 1 && free_ports(unit_nodes) < appliance_ports) --unit_nodes;
    if (free_ports(unit_nodes) >= appliance_ports) t.nodes_per_unit = unit_nodes;
  }
  t.leaves_per_unit = leaves_for(t.nodes_per_unit);
  down_used = std::min(t.nodes_per_unit, per_leaf) * (f.rail_optimized ? 1 : rails);
  // What the fabric reaches grows by its units: the spec's, else as large as a leaf allows.
  // Small units leave leaves part empty, so they, not the endpoints, fill the upper tier.
  const int grow_nodes = f.scalable_unit > 0 ? f.scalable_unit : per_leaf;
  const int grow_leaves = leaves_for(grow_nodes);
  auto endpoints_of = [&](long long leaves) { return leaves / grow_leaves * grow_nodes * rails; };
  t.grow_nodes = grow_nodes;
  t.grow_leaves = grow_leaves;
  // Uplinks for the ports a unit's leaf uses, at the asked down:up ratio (never more than fit).
  t.leaf_up =
      std::min(t.leaf_up, static_cast<int>(std::ceil(down_used / f.oversubscription - 1e-9)));
  t.oversubscription = static_cast<double>(down_used) / t.leaf_up;
  t.units = static_cast<int>(ceil_div(nodes, t.nodes_per_unit));
  // Top of rack, fewer nodes a unit would free no port (cabling fills each leaf with whole nodes);
  // nor, with more appliance ports than a unit a node would leave, rail-optimized: there the
  // appliances get units of their own, as many as they fill.
  if (free_ports(t.nodes_per_unit) < appliance_ports)
    t.units += static_cast<int>(ceil_div(appliance_ports - free_ports(t.nodes_per_unit),
                                         1LL * t.leaves_per_unit * t.leaf_down));
  t.leaves = t.units * t.leaves_per_unit;
  t.node_leaf_links = endpoints;
  t.leaf_spine_links = 1LL * t.leaves * t.leaf_up;

  if (kind == TopologyKind::kClos2) {
    t.kind = kind;
    t.tiers = 2;
    const int ks = usable(k, f.spine_headroom);
    t.max_endpoints = endpoints_of(ks);  // a spine port a leaf
    t.max_endpoints_grown = endpoints_of(k);
    t.spines = uppers_needed(t.leaves, t.leaf_up, ks);
    if (t.spines <= 0) return std::nullopt;
    t.spine_down = static_cast<int>(t.leaves * ceil_div(t.leaf_up, t.spines));
    return t;
  }
  // Three tiers and dragonfly: pods (groups) of leaves under pod spines with half their ports
  // down and half up (to cores, or to other groups).
  const int spine_down = k / 2, spine_up = k - k / 2;
  t.units_per_pod = spine_down / t.leaves_per_unit;
  if (t.units_per_pod < 1) return std::nullopt;
  const int leaves_per_pod = t.units_per_pod * t.leaves_per_unit;
  t.spines_per_pod = uppers_needed(leaves_per_pod, t.leaf_up, spine_down);
  if (t.spines_per_pod <= 0) return std::nullopt;
  t.pods = static_cast<int>(ceil_div(t.units, t.units_per_pod));
  t.spines = t.pods * t.spines_per_pod;
  t.spine_down = spine_down;
  t.spine_up = spine_up;
  const long long pod_endpoints = endpoints_of(spine_down);  // a pod spine's down port a leaf
  if (kind == TopologyKind::kClos3) {
    t.kind = kind;
    t.tiers = 3;
    const int kc = usable(k, f.spine_headroom);
    t.max_endpoints = pod_endpoints * kc;
    t.max_endpoints_grown = pod_endpoints * k;
    if (t.pods > kc) return std::nullopt;
    // A spine is 1:1: as many uplinks to the cores as links down from its pod's leaves. A
    // partly filled last pod keeps every spine (each leaf spreads its uplinks over all of them)
    // but needs fewer core uplinks.
    const long long per_pair = ceil_div(t.leaf_up, t.spines_per_pod);
    const long long last_leaves = t.leaves - 1LL * (t.pods - 1) * leaves_per_pod;
    t.spine_up = static_cast<int>(std::min<long long>(spine_up, leaves_per_pod * per_pair));
    t.last_pod_spine_up = static_cast<int>(std::min<long long>(t.spine_up, last_leaves * per_pair));
    // Core group s serves spine s of every pod.
    t.core_groups = t.spines_per_pod;
    t.cores_per_group = uppers_needed(t.pods, t.spine_up, kc);
    if (t.cores_per_group <= 0) return std::nullopt;
    t.cores = t.core_groups * t.cores_per_group;
    t.spine_core_links =
        1LL * t.spines_per_pod * ((t.pods - 1LL) * t.spine_up + t.last_pod_spine_up);
    return t;
  }
  if (kind == TopologyKind::kDragonfly) {
    // Dragonfly+: every pair of groups joined by the same number of global links.
    t.kind = kind;
    t.tiers = 3;
    const long long global_ports = 1LL * t.spines_per_pod * spine_up;
    t.max_endpoints = t.max_endpoints_grown = pod_endpoints * (global_ports + 1);
    if (t.pods < 2) return std::nullopt;
    if (t.pods - 1 > global_ports) return std::nullopt;
    t.global_links_per_pair = static_cast<int>(global_ports / (t.pods - 1));
    t.spine_core_links = 1LL * t.pods * (t.pods - 1) / 2 * t.global_links_per_pair;
    return t;
  }
  return std::nullopt;
}

namespace {

struct Sized {
  std::optional<Topology> topo;
  std::string error;
  /// Where the error points and what helps, where not the switch's size (make_compute_plan's
  /// default): empty otherwise.
  std::string key, hint;
};

// Sizes the requested kind, or under `auto` the flattest kind that fits.
Sized size_for(const Spec& spec, int radix, double lane, int appliance_ports) {
  const auto& f = spec.fabric;
  const int nodes = spec.cluster.nodes, rails = spec.cluster.nics_per_node;
  std::vector<TopologyKind> kinds;
  if (f.topology)
    kinds = {*f.topology};
  else
    for (const auto& k : kTopologyKindNames) kinds.push_back(k.value);  // flattest first
  for (const TopologyKind kind : kinds)
    if (auto t = size_topology(kind, nodes, rails, radix, lane, f, appliance_ports))
      return {*t, "", "", ""};
  const long long endpoints = 1LL * nodes * rails + appliance_ports;
  // A dragonfly joins two groups or more: a cluster that fits in one is too small for it, not
  // too large, and a larger switch (or more planes, whose slower ports a switch has more of)
  // only makes the group larger. Its groups are the three-tier Clos's pods, sized alike.
  if (kinds.back() == TopologyKind::kDragonfly)
    if (const auto pods =
            size_topology(TopologyKind::kClos3, nodes, rails, radix, lane, f, appliance_ports);
        pods && pods->pods < 2)
      return {std::nullopt,
              fmt::format("dragonfly with {}-port switches needs two groups or more, and the "
                          "cluster's {} endpoints fit in one group of {} leaves",
                          radix, endpoints, pods->leaves),
              "fabric.topology",
              fmt::format("use topology: auto, the flattest topology that holds the cluster; a "
                          "dragonfly needs more nodes than the {} one group holds",
                          1LL * pods->units_per_pod * pods->nodes_per_unit)};
  // One node always fits: what the largest kind tried reaches, for the message.
  const auto probe = size_topology(kinds.back(), 1, rails, radix, lane, f, 0);
  return {std::nullopt,
          fmt::format("{} with {}-port switches reaches at most {} endpoints per plane; the "
                      "cluster needs {}",
                      topology_kind_name(kinds.back()), radix, probe ? probe->max_endpoints : 0,
                      endpoints),
          "", ""};
}

// Links' worth of traffic that cross a half/half cut of one plane, both directions: the least
// that a tier carries. A leaf carries up what its endpoints fill of its uplinks, no more: the
// uplinks of a partly filled unit, built in full for growth, stay part idle.
double bisection_links(const Topology& t, long long nodes, int appliance_ports) {
  const double endpoints = static_cast<double>(t.node_leaf_links);
  if (t.kind == TopologyKind::kSingle) return endpoints;
  const std::vector<int> on_leaf = leaf_endpoints(t, nodes, appliance_ports);
  // What each pod's (group's) leaves carry up to its spines; clos2 is one pod.
  const long long leaves_per_pod =
      t.kind == TopologyKind::kClos2 ? t.leaves : 1LL * t.units_per_pod * t.leaves_per_unit;
  std::vector<double> pod_up(static_cast<size_t>(ceil_div(t.leaves, leaves_per_pod)), 0);
  for (size_t leaf = 0; leaf < on_leaf.size(); ++leaf)
    pod_up[leaf / static_cast<size_t>(leaves_per_pod)] += std::min(on_leaf[leaf], t.leaf_up);
  double leaves_carry = 0;
  for (const double up : pod_up) leaves_carry += up;
  double cut = std::min(endpoints, leaves_carry);
  const int pods = static_cast<int>(pod_up.size());
  if (t.kind == TopologyKind::kClos3 && pods > 1) {
    // Between pods the spines' core uplinks carry it too (the last pod's are fewer).
    double spines_carry = 0;
    for (int pod = 0; pod < pods; ++pod)
      spines_carry +=
          std::min(pod_up[static_cast<size_t>(pod)],
                   1.0 * t.spines_per_pod * (pod + 1 < pods ? t.spine_up : t.last_pod_spine_up));
    cut = std::min(cut, spines_carry);
  }
  if (t.kind == TopologyKind::kDragonfly) {
    // Half the groups on each side, the partly filled last one among the second half. Each
    // direction: what one side's groups send over their global links to the other side's, a
    // group taking no more than its leaves bring up.
    const int half = pods / 2;
    const double gl = t.global_links_per_pair;
    double a_sends = 0, b_takes = 0;
    for (int g = 0; g < pods; ++g) {
      const double up = pod_up[static_cast<size_t>(g)];
      if (g < half)
        a_sends += std::min(up, (pods - half) * gl);
      else
        b_takes += std::min(up, half * gl);
    }
    cut = std::min(cut, 2 * std::min(a_sends, b_takes));
  }
  return cut;
}

// Ports of the compute fabric's top tier that the storage leaves' uplinks take (isolation: vlan),
// all planes together.
long long storage_ports_on_top_tier(const Plan& p) {
  long long ports = 0;
  if (p.networks)
    for (const NetworkPlan& n : p.networks->nets)
      if (n.uplinks_to_compute) ports += n.leaf_spine_links;
  return ports;
}

// The fraction of the top tier's ports that nothing of the plan uses: the compute fabric's links
// and the storage leaves' uplinks that end there. 0 for a dragonfly, whose top ports are global.
// The switches of one plane's top tier: the single switch, clos2's spines, clos3's cores; none
// for a dragonfly.
long long top_switches(const Topology& t) {
  return t.kind == TopologyKind::kSingle  ? 1
         : t.kind == TopologyKind::kClos2 ? t.spines
         : t.kind == TopologyKind::kClos3 ? t.cores
                                          : 0;
}

double top_tier_free_fraction(const Plan& p) {
  const Topology& t = p.topo;
  // One plane's links into the top tier, and its ports.
  const long long used = t.kind == TopologyKind::kSingle  ? t.node_leaf_links
                         : t.kind == TopologyKind::kClos2 ? t.leaf_spine_links
                                                          : t.spine_core_links;
  const long long ports = top_switches(t) * t.radix;
  if (ports <= 0) return 0;
  return 1.0 - static_cast<double>(used * t.planes + storage_ports_on_top_tier(p)) /
                   static_cast<double>(ports * t.planes);
}

// Endpoints a plane reaches without a new tier once growth takes the top tier's free ports: as
// the topology was sized, less the ports the storage leaves' uplinks (isolation: vlan) hold on
// each top switch, spread over them as the cabling spreads them.
long long grown_endpoints(const Plan& p) {
  const Topology& t = p.topo;
  const long long storage = storage_ports_on_top_tier(p);
  const long long tops = top_switches(t);
  if (storage <= 0 || tops <= 0 || t.radix <= 0) return t.max_endpoints_grown;
  const long long k = std::max(0LL, t.radix - ceil_div(storage, tops * std::max(1, t.planes)));
  if (t.kind == TopologyKind::kSingle) return k;
  if (t.kind == TopologyKind::kClos2)
    return k / std::max(1, t.grow_leaves) * t.grow_nodes * t.rails;  // a spine port a leaf
  return t.max_endpoints_grown / t.radix * k;  // clos3: a pod's endpoints a core port
}

// Growth (seed §8): the top tier's free ports, and the nodes the tiers can hold once growth
// takes them (the headroom the spec kept free for it), both less what the storage leaves'
// uplinks hold there.
void finish_growth(Plan& p) {
  p.spine_ports_free_fraction = top_tier_free_fraction(p);
  p.max_nodes_same_tiers = grown_endpoints(p) / std::max(1, p.topo.rails);
}

// Counts, totals, bisection and growth of a sized plan.
void finish_counts(Plan& p) {
  const Topology& t = p.topo;
  const int planes = t.planes;
  p.leaf_total = t.leaves * planes;
  p.spine_total = t.spines * planes;
  p.core_total = t.cores * planes;
  p.switch_total = p.leaf_total + p.spine_total + p.core_total;
  p.node_leaf_total = t.node_leaf_links * planes;
  p.leaf_spine_total = t.leaf_spine_links * planes;
  p.spine_core_total = t.spine_core_links * planes;
  p.link_total = p.node_leaf_total + p.leaf_spine_total + p.spine_core_total;
  p.bisection_gbps = bisection_links(t, p.nodes, p.appliance_ports) * t.lane_gbps * planes;
  finish_growth(p);
}

Technology tech_of(const Switch& s) {
  return s.technology == SwitchTechnology::kInfiniband ? Technology::kInfiniband
                                                       : Technology::kRoce;
}

struct Option {
  Plan plan;
  bool ok = false;
  std::string error;
  std::string error_key, hint;  ///< Sized's, where the switch's size is not what fails
};

// Plans the cluster on one switch model; fills topology, counts and the BOM.
Option plan_on(const Spec& spec, const Catalog& cat, const Switch& sw, Technology tech) {
  Option o;
  Plan& p = o.plan;
  p.name = spec.name;
  p.nodes = spec.cluster.nodes;
  p.gpus_per_node = spec.cluster.gpus_per_node;
  p.gpus = 1LL * p.nodes * p.gpus_per_node;
  p.nics_per_node = spec.cluster.nics_per_node;
  p.gpu = cat.gpus.at(spec.cluster.gpu);
  // The catalog's direct-link board where the node has its GPUs (the catalog names one only for a
  // domain of a server's own), unless the spec says which board it is.
  p.scaleup_direct =
      spec.cluster.scaleup_board == ScaleupBoard::kDirect ||
      (spec.cluster.scaleup_board == ScaleupBoard::kAuto && p.gpu.scaleup_direct_board_gpus > 0 &&
       p.gpus_per_node == p.gpu.scaleup_direct_board_gpus);
  p.host_amd = spec.cluster.host_cpu == HostCpuVendor::kAmd;
  p.nic = cat.nics.at(spec.cluster.nic);
  p.sw = sw;
  p.technology = tech;
  p.appliance_ports = spec.fabric.appliance_ports;
  const double lane = p.nic.rate_gbps / spec.fabric.planes;
  const int radix = sw.ports_at(lane);
  if (radix == 0 || sw.port_gbps < lane) {
    o.error = fmt::format("{} has no {} Gbps ports", sw.id, lane);
    return o;
  }
  Sized s = size_for(spec, radix, lane, p.appliance_ports);
  if (!s.topo) {
    o.error = s.error;
    o.error_key = s.key;
    o.hint = s.hint;
    return o;
  }
  p.topo = *s.topo;
  finish_counts(p);
  build_bom(p, cat);
  o.ok = true;
  return o;
}

}  // namespace

bool nic_meets_switch_lanes(const Nic& nic, const Switch& sw, Technology tech, int planes) {
  return tech != Technology::kInfiniband || nic.ports != 1 ||
         nic.lanes_meet(planes, sw.lane_gbps());
}

namespace {

// Why the NIC's ports, split over `planes`, cannot meet `sw`'s ports of `gbps` (where
// nic_meets_switch_lanes says they do not): a port whose lanes do not split over the planes, or
// modes that each run faster lanes than the switch's SerDes.
std::string lanes_mismatch(const Nic& nic, const Switch& sw, double gbps, int planes) {
  const double sw_lane = sw.lane_gbps();
  const int split = std::max(1, planes);
  if (std::none_of(nic.lanes.begin(), nic.lanes.end(), [&](int l) { return l % split == 0; }))
    return fmt::format("a {} port's lanes ({}) do not split into {} links of whole lanes", nic.id,
                       fmt::join(nic.lanes, " or "), split);
  std::string nic_side;
  for (const int l : nic.lanes) {
    if (l < split) continue;
    nic_side += fmt::format("{}{} lane{} of {:g}G", nic_side.empty() ? "" : " or ", l / split,
                            l / split == 1 ? "" : "s", nic.port_gbps() / l);
  }
  return fmt::format(
      "{}'s ports run lanes of at most {:g}G; a {} port{} runs {}{}, so the two "
      "ends of a {:g}G link cannot meet",
      sw.id, sw_lane, nic.id, split > 1 ? fmt::format(" split over {} planes", split) : "",
      nic_side, split > 1 ? " a link" : "", gbps);
}

// What to do where no switch meets the NIC's lanes: the catalog's InfiniBand fabric switches that
// run `gbps` ports on lanes the NIC reaches, else a switch whose SerDes reach the slowest lane rate
// the NIC's port (its share over `planes`) runs; or fewer planes.
std::string lanes_hint(const Nic& nic, int planes, double gbps, const Catalog& cat) {
  double slowest = 0;
  for (const int l : nic.lanes)
    if (l % std::max(1, planes) == 0) {
      const double r = nic.port_gbps() / l;
      slowest = slowest > 0 ? std::min(slowest, r) : r;
    }
  const std::string fewer = planes > 1 ? "fewer planes" : "another NIC";
  if (!(slowest > 0))
    return fmt::format("use {}: the NIC's {} do not split over {} planes", fewer,
                       nic.lanes.size() == 1 ? "lanes" : "lane modes", planes);
  std::vector<std::string> fits;
  for (const auto& [id, sw] : cat.switches)
    if (tech_of(sw) == Technology::kInfiniband && sw.has_role(SwitchRole::kFabric) &&
        sw.ports_at(gbps) > 0 && nic_meets_switch_lanes(nic, sw, Technology::kInfiniband, planes))
      fits.push_back(id);
  return fits.empty() ? fmt::format(
                            "no catalog switch runs {:g}G ports on {:g}G lanes or faster: add one "
                            "with a catalog file, or use {}",
                            gbps, slowest, fewer)
                      : fmt::format("choose a switch of {:g}G lanes or faster: {}; or use {}",
                                    slowest, fmt::join(fits, ", "), fewer);
}

Result<Plan> make_compute_plan(const Spec& spec, const Catalog& cat) {
  // validate_spec() guarantees these; a caller that skipped it still gets an error, not a crash.
  if (!cat.gpus.count(spec.cluster.gpu) || !cat.nics.count(spec.cluster.nic) ||
      spec.cluster.nodes < 1 || spec.cluster.nics_per_node < 1)
    return spec.at("cluster",
                   "the cluster is not valid against the catalog; validate the spec first");
  const Nic& nic = cat.nics.at(spec.cluster.nic);
  const auto& f = spec.fabric;
  const double lane = nic.rate_gbps / f.planes;
  std::vector<Technology> techs;
  if (!f.technology) {
    if (nic.infiniband) techs.push_back(Technology::kInfiniband);
    if (nic.roce) techs.push_back(Technology::kRoce);
  } else {
    techs.push_back(*f.technology);
  }

  // Every usable switch of every technology in play, each planned.
  std::vector<Option> options;
  std::vector<Candidate> candidates;
  std::vector<std::string> lane_skipped;  // switches of the speed whose lanes do not meet the NIC's
  for (const auto& [id, sw] : cat.switches) {
    const Technology tech = tech_of(sw);
    if (std::find(techs.begin(), techs.end(), tech) == techs.end()) continue;
    if (f.switch_id != "auto" && id != f.switch_id) continue;
    if (sw.ports_at(lane) == 0) continue;
    // Only compute-fabric switches: a storage or management switch is planned with its network.
    if (!sw.has_role(SwitchRole::kFabric) && id != f.switch_id) continue;
    // A switch whose lanes the NIC's port (its share over the planes) cannot meet
    // (nic_meets_switch_lanes: an HDR switch's 50G lanes, a ConnectX-7's 2 x 100G a plane).
    if (!nic_meets_switch_lanes(nic, sw, tech, f.planes)) {
      const std::string why = lanes_mismatch(nic, sw, lane, f.planes);
      if (f.switch_id != "auto")
        return spec.at("fabric.switch", why, lanes_hint(nic, f.planes, lane, cat));
      lane_skipped.push_back(why);
      continue;
    }
    Option o = plan_on(spec, cat, sw, tech);
    Candidate c{tech,
                id,
                o.ok ? topology_kind_name(o.plan.topo.kind) : "",
                o.ok ? o.plan.topo.tiers : 0,
                o.ok ? o.plan.switch_total : 0,
                o.ok ? o.plan.bom.network_capex_usd : 0,
                o.ok ? o.plan.bom.network_power_w : 0,
                false,
                o.error};
    candidates.push_back(c);
    options.push_back(std::move(o));
  }
  // Best switch per technology: fewest tiers first when the goal is time (latency, hops),
  // cheapest first when it is cost.
  const bool time_goal = spec.constraints.goal == Goal::kTime;
  // Fraction of full injection bandwidth that crosses the bisection (1 = non-blocking).
  auto bisection_share = [](const Plan& p) {
    const double inject = static_cast<double>(p.node_leaf_total) * p.topo.lane_gbps;
    return inject > 0 ? std::round(100 * std::min(1.0, p.bisection_gbps / inject)) : 0;
  };
  // Within the budget first, where the spec sets one: the fewest tiers that break it are no
  // plan to buy.
  const double budget = spec.constraints.budget_usd;
  auto fits = [&](const Option& o) { return budget <= 0 || o.plan.bom.capex_usd <= budget; };
  auto better = [&](const Option& a, const Option& b) {
    if (fits(a) != fits(b)) return fits(a);
    if (time_goal && a.plan.topo.tiers != b.plan.topo.tiers)
      return a.plan.topo.tiers < b.plan.topo.tiers;
    if (time_goal && bisection_share(a.plan) != bisection_share(b.plan))
      return bisection_share(a.plan) > bisection_share(b.plan);
    return a.plan.bom.network_capex_usd < b.plan.bom.network_capex_usd;
  };
  std::map<Technology, const Option*> best;
  std::string last_error;
  const Option* last_failed = nullptr;
  for (const auto& o : options) {
    if (!o.ok) {
      last_error = o.error;
      last_failed = &o;
      continue;
    }
    auto& b = best[o.plan.technology];
    if (!b || better(o, *b)) b = &o;
  }
  if (best.empty()) {
    // Small scalable units fill the upper tier with part-empty leaves: larger ones reach more.
    // One larger than the cluster is wired in full for nodes it does not have: a smaller one.
    const int nodes = spec.cluster.nodes;
    const std::string units =
        f.scalable_unit <= 0 || f.scalable_unit == nodes ? ""
        : f.scalable_unit < nodes
            ? fmt::format("larger scalable units (fabric.scalable_unit: {} nodes now), ",
                          f.scalable_unit)
            : fmt::format(
                  "a scalable unit no larger than the cluster's {} nodes "
                  "(fabric.scalable_unit: {} now), ",
                  nodes, f.scalable_unit);
    // A cluster too small for its topology: not the switch's size.
    if (last_failed && !last_failed->hint.empty())
      return spec.at(last_failed->error_key, last_error, last_failed->hint);
    if (f.switch_id != "auto" && !last_error.empty())
      return spec.at(!f.topology ? "fabric.switch" : "fabric.topology", last_error,
                     "use a larger switch, " + units + "topology: auto, or more planes");
    if (!last_error.empty())
      return spec.at("fabric.topology", last_error,
                     "use topology: auto, " + units + "or a larger switch");
    if (!lane_skipped.empty())
      return spec.at("fabric.switch", lane_skipped.front(), lanes_hint(nic, f.planes, lane, cat));
    return spec.at("fabric.switch",
                   fmt::format("no {} switch in the catalog runs {} Gbps ports",
                               f.technology ? technology_name(*f.technology) : "", lane),
                   "add one with a catalog file, or change the NIC or planes");
  }

  // Technology: the guide's rule of thumb, weighed against the cost of each option.
  const Option* ib = best.count(Technology::kInfiniband) ? best[Technology::kInfiniband] : nullptr;
  const Option* roce = best.count(Technology::kRoce) ? best[Technology::kRoce] : nullptr;
  const long long gpus = 1LL * spec.cluster.nodes * spec.cluster.gpus_per_node;
  const Option* chosen = nullptr;
  std::string reason;
  auto capex = [](const Option* o) { return units::format_usd(o->plan.bom.network_capex_usd); };
  if (f.technology || !ib || !roce) {
    chosen = ib ? ib : roce;
    if (f.technology)
      reason = fmt::format("{} as the spec requires", technology_name(*f.technology));
    else
      reason = fmt::format("NIC {} supports only {}", nic.id, ib ? "InfiniBand" : "RoCE");
  } else {
    const double ib_total = ib->plan.bom.capex_usd, roce_total = roce->plan.bom.capex_usd;
    const std::string costs = fmt::format("network capex InfiniBand {} ({}) vs RoCE {} ({})",
                                          capex(ib), ib->plan.sw.id, capex(roce), roce->plan.sw.id);
    if (budget > 0 && ib_total > budget && roce_total <= budget) {
      chosen = roce;
      reason = fmt::format("RoCE: InfiniBand ({}) would exceed the {} budget; {}",
                           units::format_usd(ib_total), units::format_usd(budget), costs);
    } else if (time_goal && gpus > kInfinibandPreferredAboveGpus) {
      chosen = ib;
      reason = fmt::format(
          "InfiniBand: goal is time-to-solution at {} GPUs (> {}), where the guide "
          "recommends InfiniBand for peak performance, congestion control and "
          "adaptive routing; {}",
          gpus, kInfinibandPreferredAboveGpus, costs);
    } else if (const Option* level = [&]() -> const Option* {
                 // The RoCE fabric that performs as InfiniBand's does (no more tiers, as much
                 // bisection) for no more network capex: the guide's price/performance.
                 const Option* r = nullptr;
                 for (const auto& o : options)
                   if (o.ok && o.plan.technology == Technology::kRoce && fits(o) == fits(*ib) &&
                       o.plan.topo.tiers <= ib->plan.topo.tiers &&
                       bisection_share(o.plan) >= bisection_share(ib->plan) &&
                       o.plan.bom.network_capex_usd <= ib->plan.bom.network_capex_usd &&
                       (!r || better(o, *r)))
                     r = &o;
                 return r;
               }();
               time_goal && level) {
      chosen = level;
      // Named where the fewest-tier RoCE fabric is another, dearer than InfiniBand's.
      const std::string fewer =
          level == roce ? ""
                        : fmt::format(" (the {}-tier RoCE fabric, {} at {}, costs more)",
                                      roce->plan.topo.tiers, roce->plan.sw.id, capex(roce));
      reason = fmt::format(
          "RoCE: {} GPUs is within the size where the guide finds RoCE's "
          "price/performance best; network capex InfiniBand {} ({}) vs RoCE {} ({}){}",
          gpus, capex(ib), ib->plan.sw.id, capex(level), level->plan.sw.id, fewer);
    } else if (time_goal) {
      // The guide's rule rests on RoCE costing less; where the catalog's RoCE fabric costs more
      // (a modular chassis to stay one tier), InfiniBand is both the faster and the cheaper.
      chosen = ib;
      reason = fmt::format(
          "InfiniBand: at {} GPUs the guide finds RoCE's price/performance best, but here "
          "RoCE's network costs more and InfiniBand performs at least as well; {}",
          gpus, costs);
    } else {
      chosen = roce->plan.bom.network_capex_usd <= ib->plan.bom.network_capex_usd ? roce : ib;
      reason = fmt::format("{}: goal is cost-to-solution and it is the cheaper fabric; {}",
                           chosen == roce ? "RoCE" : "InfiniBand", costs);
    }
  }
  Plan p = chosen->plan;
  p.technology_reason = reason;
  // The budget can only be told, not met: the plan is the cheapest it can be for what the spec
  // asks, and a user needs to know it does not fit before buying (sweep's within_budget too).
  if (budget > 0 && p.bom.capex_usd > budget) {
    const Option* other = chosen == ib ? roce : ib;
    const std::string advice = ": fewer GPUs, cheaper NICs or switches, or oversubscription";
    std::string tail = advice;
    if (other) {
      const std::string name = other == ib ? "InfiniBand" : "RoCE";
      const std::string usd = units::format_usd(other->plan.bom.capex_usd);
      tail = other->plan.bom.capex_usd <= budget
                 ? fmt::format(" ({} would fit, at {})", name, usd)
                 : fmt::format(" (so would {} at {}){}", name, usd, advice);
    }
    p.warnings.push_back(fmt::format("capex {} exceeds constraints.budget {}{}",
                                     units::format_usd(p.bom.capex_usd), units::format_usd(budget),
                                     tail));
  }
  p.switch_reason =
      f.switch_id != "auto" ? "as the spec requires"
      : chosen != best[p.technology]
          ? fmt::format(
                "the RoCE switch whose fabric has no more tiers than InfiniBand's {} ({}) "
                "and costs no more: {}",
                ib->plan.topo.tiers, ib->plan.sw.id, p.sw.id)
          : fmt::format(
                "{} of the {} {} switches that run {} Gbps ports: {}",
                time_goal ? "fewest tiers, then lowest network capex," : "lowest network capex",
                std::count_if(candidates.begin(), candidates.end(),
                              [&](const Candidate& c) { return c.technology == p.technology; }),
                technology_name(p.technology), lane, p.sw.id);
  for (auto& c : candidates)
    c.chosen = c.technology == p.technology && c.switch_id == p.sw.id && c.note.empty();
  p.candidates = candidates;

  p.nccl = spec.cluster.nccl;
  p.nccl_given = spec.cluster.nccl_given;
  if (spec.calibration) p.calibration = *spec.calibration;
  // Resolved fabric features.
  p.ecmp_seed = f.ecmp_seed;
  if (f.load_balancing)
    p.load_balancing = *f.load_balancing;
  else if (p.technology == Technology::kInfiniband)
    p.load_balancing = p.sw.adaptive_routing ? LoadBalancing::kAdaptive : LoadBalancing::kEcmp;
  else
    p.load_balancing =
        p.sw.adaptive_routing ? LoadBalancing::kAdaptive : LoadBalancing::kEcmpMultiQp;
  const bool inr_hw = !p.sw.in_network_reduction.empty();
  p.in_network_reduction = f.in_network_reduction.value_or(inr_hw);

  // Warnings: where the plan contradicts the guide or the hardware.
  auto warn = [&](std::string w) { p.warnings.push_back(std::move(w)); };
  if (f.in_network_reduction == true && !inr_hw)
    warn(
        fmt::format("in_network_reduction: on, but {} has no in-network reduction; collectives "
                    "will run without it",
                    p.sw.id));
  if (p.technology == Technology::kRoce && p.load_balancing == LoadBalancing::kEcmp &&
      gpus > kPlainEcmpWarnAboveGpus)
    warn(
        fmt::format("plain per-flow ECMP on RoCE at {} GPUs: training flows are few and large, so "
                    "hash collisions cost bandwidth; use ecmp-multi-qp, adaptive routing or more "
                    "planes",
                    gpus));
  if (f.technology == Technology::kRoce && time_goal && gpus > kInfinibandPreferredAboveGpus &&
      nic.infiniband)
    warn(
        fmt::format("RoCE at {} GPUs with a time-to-solution goal: the guide recommends "
                    "InfiniBand above {} GPUs for peak performance",
                    gpus, kInfinibandPreferredAboveGpus));
  if (f.technology == Technology::kInfiniband && spec.constraints.goal == Goal::kCost && roce &&
      roce->plan.bom.network_capex_usd < ib->plan.bom.network_capex_usd)
    warn(fmt::format(
        "InfiniBand with a cost goal: RoCE would cost {} less in network capex",
        units::format_usd(ib->plan.bom.network_capex_usd - roce->plan.bom.network_capex_usd)));
  if (p.topo.oversubscription > kMaxAdvisedOversubscription + 1e-9)
    warn(
        fmt::format("oversubscription {:.2g}:1 exceeds the guide's ~2:1 maximum for training "
                    "fabrics; all-reduce across units will slow down accordingly",
                    p.topo.oversubscription));
  const double nic_gbs = p.nic.rate_gbps / 8;
  const int pcie = std::min(p.gpu.pcie_gen, p.nic.pcie_gen);
  if (pcie_x16_gbs(pcie) < nic_gbs * 0.99)
    warn(
        fmt::format("{} behind PCIe Gen{} x16 ({:.0f} GB/s) cannot reach its {:.0f} GB/s line "
                    "rate on {}",
                    p.nic.id, pcie, pcie_x16_gbs(pcie), nic_gbs, p.gpu.id));
  if (!p.nic.gpudirect)
    warn(fmt::format("{} lacks GPUDirect RDMA: GPU data crosses host memory", p.nic.id));
  if (p.nics_per_node < p.gpus_per_node)
    warn(
        fmt::format("{} NIC{} for {} GPUs per node: each NIC is shared by {} GPUs, so per-GPU "
                    "scale-out bandwidth is {:.0f} Gbps",
                    p.nics_per_node, p.nics_per_node == 1 ? "" : "s", p.gpus_per_node,
                    (p.gpus_per_node + p.nics_per_node - 1) / p.nics_per_node,
                    p.nic.rate_gbps * p.nics_per_node / p.gpus_per_node));
  if (p.topo.kind == TopologyKind::kDragonfly && p.technology == Technology::kRoce)
    warn("dragonfly on RoCE needs non-minimal (adaptive) routing to use global links well");
  return p;
}

// The notes of a plan, its networks planned: what a reader should know that is not wrong.
void add_notes(const Spec& spec, Plan& p) {
  const auto& f = spec.fabric;
  // One node: its GPUs' collectives never leave it.
  if (p.nodes == 1)
    p.notes.push_back(fmt::format(
        "one node: its GPUs' collectives stay inside it ({}), so the scale-out fabric planned "
        "here ({} of network capex) carries none of the job's traffic; keep it only for storage "
        "or for nodes to come",
        p.gpu.scaleup_tech == ScaleUpTech::kPcie             ? "over PCIe"
        : p.gpu.scaleup_tech == ScaleUpTech::kInfinityFabric ? "over Infinity Fabric"
                                                             : "over NVLink",
        units::format_usd(p.bom.network_capex_usd)));
  if (p.topo.kind != TopologyKind::kSingle) {
    const long long filled = 1LL * p.nodes;
    const long long slots = 1LL * p.topo.units * p.topo.nodes_per_unit;
    // A partly filled unit is wired in full (README, planner); a unit larger than the whole
    // cluster is one such unit, which the spec asked for: say what it costs and how to drop it.
    if (f.scalable_unit > p.nodes)
      p.notes.push_back(fmt::format(
          "fabric.scalable_unit is {} nodes, more than the cluster's {}: its one unit is partly "
          "filled and its {} leaves and their uplinks are built in full for growth to {} nodes; "
          "set scalable_unit: auto (or at most {}) to build only what the nodes use",
          f.scalable_unit, p.nodes, p.leaf_total, f.scalable_unit, p.nodes));
    else if (filled < slots)
      p.notes.push_back(
          fmt::format("last scalable unit holds {} of {} nodes; its leaves and "
                      "uplinks are built in full for growth",
                      p.topo.nodes_per_unit - (slots - filled), p.topo.nodes_per_unit));
  } else if (f.scalable_unit > 0) {
    p.notes.push_back(fmt::format(
        "one switch holds every node, so fabric.scalable_unit ({} nodes) does not apply; set "
        "topology: clos2 to build the unit's leaves and spines{}",
        f.scalable_unit, f.scalable_unit > p.nodes ? " for growth" : ""));
  }
  // One switch has no uplinks to oversubscribe: the ratio asked for changes nothing.
  if (p.topo.kind == TopologyKind::kSingle && f.oversubscription > 1 + 1e-9)
    p.notes.push_back(fmt::format(
        "one switch holds every node, so fabric.oversubscription ({:g}:1) does not apply: there "
        "are no uplinks to oversubscribe; set topology: clos2 to plan leaves with fewer uplinks",
        f.oversubscription));
  // Below the guide's headroom where the spec kept less, or where the storage leaves took some
  // of what it kept.
  const long long storage_ports = storage_ports_on_top_tier(p);
  if ((f.spine_headroom + 1e-9 < kAdvisedSpineHeadroom || storage_ports > 0) &&
      p.spine_ports_free_fraction + 1e-9 < kAdvisedSpineHeadroom &&
      (p.topo.kind == TopologyKind::kClos2 || p.topo.kind == TopologyKind::kClos3))
    p.notes.push_back(fmt::format(
        "{:.0f}% of top-tier ports are free{}; the guide (§8) keeps >= 50% free for growth: {}",
        100 * p.spine_ports_free_fraction,
        storage_ports > 0 ? fmt::format(", the storage leaves' uplinks (isolation: vlan) taking {}",
                                        storage_ports)
                          : "",
        f.spine_headroom + 1e-9 < kAdvisedSpineHeadroom
            ? "set fabric.spine_headroom: 0.5 to plan it"
            : fmt::format("raise fabric.spine_headroom ({:g} now) to keep it", f.spine_headroom)));
  if (p.topo.nodes_per_unit < p.topo.unit_slots)
    p.notes.push_back(fmt::format(
        "scalable units hold {} nodes, not {}: in units of {} the nodes leave too few free leaf "
        "ports for the {} appliance ports, and a unit more would hold no node",
        p.topo.nodes_per_unit, p.topo.unit_slots, p.topo.unit_slots, p.appliance_ports));
  if (p.topo.kind == TopologyKind::kClos3 && p.topo.last_pod_spine_up < p.topo.spine_up) {
    const int last_units = p.topo.units - (p.topo.pods - 1) * p.topo.units_per_pod;
    p.notes.push_back(fmt::format(
        "the last pod holds {} of {} scalable units: it has all {} spines (every leaf spreads its "
        "uplinks over them) but each takes {} of the {} core uplinks a full pod's spine does",
        last_units, p.topo.units_per_pod, p.topo.spines_per_pod, p.topo.last_pod_spine_up,
        p.topo.spine_up));
  }
  if (p.scaleup_direct && spec.cluster.scaleup_board == ScaleupBoard::kAuto)
    p.notes.push_back(fmt::format(
        "the {} {} of a node sit on a {}-GPU board that links them directly, without NVSwitch: "
        "no NVLink SHARP (NVLS); if they are part of a larger board's, set "
        "cluster.scaleup_board: nvswitch",
        p.gpus_per_node, p.gpu.id, p.gpus_per_node));
  if (p.topo.kind == TopologyKind::kSingle && p.nodes > 1 && p.topo.planes <= 1)
    p.notes.push_back(
        "one switch holds every node: a single point of failure (its loss stops every job until "
        "it is replaced); two planes or two tiers keep the nodes reachable when a switch fails");
  if (p.topo.kind == TopologyKind::kDragonfly) {
    const double share =
        100 * p.bisection_gbps / (static_cast<double>(p.node_leaf_total) * p.topo.lane_gbps);
    p.notes.push_back(fmt::format(
        "dragonfly+: {} groups joined pairwise by {} global links; the bisection carries {:.0f}% "
        "of injection bandwidth{}",
        p.topo.pods, p.topo.global_links_per_pair, share,
        share < 99.5 ? ", so traffic between groups is tapered"
                     : ": traffic between groups is not tapered, though each pair of groups has "
                       "only its own global links"));
  }
}

}  // namespace

Result<Plan> make_plan(const Spec& spec, const Catalog& cat) {
  auto compute = make_compute_plan(spec, cat);
  if (!compute) return compute;
  Plan p = std::move(*compute);
  if (spec.networks) {
    auto n = plan_networks(spec, cat, p);
    if (!n) return n.errors();
    for (const auto& w : n->warnings) p.warnings.push_back(w);
    p.networks = std::move(*n);
    // The storage leaves' uplinks may take ports of the compute fabric's top tier.
    finish_growth(p);
  }
  add_notes(spec, p);
  return p;
}

double estimated_memory_bytes(long long nodes, int gpus_per_node, bool simulates) {
  const double plan_bytes = kPlanBytesPerNode * static_cast<double>(nodes);
  return simulates ? plan_bytes + kSimBytesPerGpu * static_cast<double>(nodes) * gpus_per_node
                   : plan_bytes;
}

size_t flows_budget_bytes(const LoadLimits& limits, long long nodes, int gpus_per_node,
                          int fabrics) {
  if (!(limits.memory_bytes > 0)) return 0;
  return static_cast<size_t>(std::max(
      0.0, limits.memory_bytes - fabrics * estimated_memory_bytes(nodes, gpus_per_node, true)));
}

Result<PlannedSpec> load_and_plan(const std::string& path, const LoadLimits& limits) {
  auto loaded = load_spec(path);
  if (!loaded) return loaded.errors();
  const auto& c = loaded->spec.cluster;
  const double need = estimated_memory_bytes(c.nodes, c.gpus_per_node, limits.simulates);
  if (limits.memory_bytes > 0 && need > limits.memory_bytes)
    return loaded->spec.at(
        "cluster.nodes",
        fmt::format("{} nodes x {} GPUs need about {} of memory{}; {} is available", c.nodes,
                    c.gpus_per_node, human_bytes(need),
                    limits.simulates ? " to plan and simulate" : " to plan",
                    human_bytes(limits.memory_bytes)),
        "plan a smaller cluster, or run on a machine with more memory");
  auto plan = make_plan(loaded->spec, loaded->catalog);
  if (!plan) return plan.errors();
  return PlannedSpec{std::move(loaded->spec), std::move(loaded->catalog), std::move(*plan)};
}

}  // namespace gf
