// Bill of materials: servers, NICs, switches per tier, cables and optics by length class.
#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <map>

#include "plan/plan.h"
#include "plan/ports.h"

namespace gf {
namespace {

// Typical run lengths of each link kind (m). A rack holds a server and its top-of-rack leaf;
// rail-optimized leaves sit in the scalable unit's network racks in the same row; spines sit in
// a central network row; cores may be a hall away (single-mode optics).
constexpr double kRackRunM = 2.5;
constexpr double kRowRunM = 20;
constexpr double kHallRunM = 50;
constexpr double kCoreRunM = 150;
// A single switch with this few servers sits in their rack (the guide's <= 8-node lab).
constexpr int kSingleRackMaxNodes = 4;

double part_cost_per_link(const CablePart* p) { return p ? p->cost.price_usd / p->links : 0; }

// The switch cages each kind of link plugs into, as the cabling plan numbers their ports: node
// links (an appliance's too), leaf-spine links, and the top tier's (spine-core, a dragonfly's
// global links). A part in a cage serves every port of it, whether the links fill the cage or
// not: a leaf with 25 node links on twin-port cages takes 13 parts, not 12.5. A cage that two
// kinds share (only where a switch had no room to start its up ports on a cage of their own)
// counts once, for the first kind.
std::array<long long, 3> switch_cages(const Plan& p, const Catalog& cat) {
  std::array<long long, 3> out{0, 0, 0};
  const Topology& t = p.topo;
  const long long per_plane = 1LL * t.leaves + t.spines + t.cores;
  const int cages = std::max(1, p.sw.cages());
  // The kind (1-3) that took each switch's cage first; 0 free.
  std::vector<uint8_t> taken(static_cast<size_t>(per_plane * std::max(1, t.planes) * cages), 0);
  auto take = [&](int plane, long long tier_base, long long index, int port, int kind) {
    if (port <= 0) return;
    const int cage = std::clamp(port_slot(p, port).cage, 1, cages) - 1;
    const size_t at = static_cast<size_t>(((plane * per_plane) + tier_base + index) * cages + cage);
    if (at >= taken.size() || taken[at]) return;
    taken[at] = static_cast<uint8_t>(kind + 1);
    ++out[static_cast<size_t>(kind)];
  };
  const long long spines = t.leaves, cores = 1LL * t.leaves + t.spines;  // tier bases
  for_each_link(
      p, cat,
      [&](const CableRun& r) {
        switch (r.kind) {
          case LinkKind::kNodeLeaf:
          case LinkKind::kApplianceLeaf:
            take(r.plane, 0, r.b_index, r.b_port_no, 0);
            break;
          case LinkKind::kLeafSpine:
            take(r.plane, 0, r.a_index, r.a_port_no, 1);
            take(r.plane, spines, r.b_index, r.b_port_no, 1);
            break;
          case LinkKind::kSpineCore:
            take(r.plane, spines, r.a_index, r.a_port_no, 2);
            take(r.plane, cores, r.b_index, r.b_port_no, 2);
            break;
          case LinkKind::kGlobal:
            take(r.plane, spines, r.a_index, r.a_port_no, 2);
            take(r.plane, spines, r.b_index, r.b_port_no, 2);
            break;
        }
      },
      false);
  return out;
}

}  // namespace

std::string LinkMedium::label() const {
  if (cable) return cable->id;
  if (!xcvr_switch) return "unavailable";
  if (xcvr_end && xcvr_end != xcvr_switch)
    return fmt::format("{}+{}+{}", xcvr_end->id, fibre ? fibre->id : "fibre", xcvr_switch->id);
  return fmt::format("{}+{}", xcvr_switch->id, fibre ? fibre->id : "fibre");
}

LinkMedium link_medium(const Plan& plan, const Catalog& cat, LinkKind link_kind) {
  LinkMedium m;
  const Topology& t = plan.topo;
  const bool node_end = link_kind == LinkKind::kNodeLeaf || link_kind == LinkKind::kApplianceLeaf;
  if (node_end) {
    const bool in_rack = (t.kind == TopologyKind::kSingle && plan.nodes <= kSingleRackMaxNodes) ||
                         (!t.rail_optimized && t.kind != TopologyKind::kSingle);
    m.length_class = in_rack ? "rack" : "row";
    m.length_m = in_rack ? kRackRunM : kRowRunM;
  } else if (link_kind == LinkKind::kLeafSpine) {
    m.length_class = "hall";
    m.length_m = kHallRunM;
  } else {
    m.length_class = "hall";
    m.length_m = kCoreRunM;
  }
  const double gbps = t.lane_gbps;
  // The ports of the link speed one switch cage carries (the 7060X6's 128 x 400G on 64 cages:
  // 2). Whatever plugs into a cage serves them all: a twin-port transceiver, a splitter cable to
  // that many NICs, or between two switches one cable of the cage's speed.
  const int cage = plan.sw.ports_per_cage_at(gbps);
  // With planes, a NIC's one port is split into a link per plane (t.planes x lane_gbps): its
  // cage takes one part of the port's full speed, whose lanes a breakout fibre (or a splitter
  // cable) takes to a switch of each plane.
  const int nic_split = node_end ? std::max(1, t.planes) : 1;
  // Optical: a transceiver at each end (twin-port parts on switch cages that need them) and a
  // fibre, all of one medium (multimode SR optics over multimode fibre, single-mode DR/FR over
  // single-mode): the cheapest such set.
  const CablePart *x_single = nullptr, *x_switch = nullptr, *fibre = nullptr;
  double optical = std::numeric_limits<double>::infinity();
  for (const FibreMedia media : {FibreMedia::kMultimode, FibreMedia::kSingleMode}) {
    const CablePart* xs = cat.cable_for(CableKind::kTransceiver, gbps, m.length_m, cage, media);
    const CablePart* xe =
        node_end ? cat.cable_for(CableKind::kTransceiver, gbps * nic_split, m.length_m, 1, media)
                 : xs;
    if (!xs || !xe) continue;
    // A fibre of the medium both ends' parts run over (either may leave it unsaid).
    const FibreMedia run = xs->media != FibreMedia::kAny   ? xs->media
                           : xe->media != FibreMedia::kAny ? xe->media
                                                           : media;
    const CablePart* f = cat.fibre_for(m.length_m, run);
    if (!f) continue;
    const double cost = (node_end ? part_cost_per_link(xe) / nic_split : part_cost_per_link(xs)) +
                        part_cost_per_link(xs) + f->cost.price_usd;
    if (cost < optical) {
      optical = cost;
      x_single = xe;
      x_switch = xs;
      fibre = f;
    }
  }
  double best = optical;
  for (const CableKind kind : {CableKind::kDac, CableKind::kAoc}) {
    // To a node: a part with one end a cage of `cage` ports and `cage` NIC ends (a splitter);
    // between switches: one cable of the cage's speed carrying `cage` links. A NIC port split
    // over planes takes a splitter from its own cage, which then must reach one port a switch
    // cage (no catalog part splits at both ends).
    if (nic_split > 1 && cage > 1) continue;
    const CablePart* c = node_end ? cat.cable_for(kind, gbps, m.length_m, cage * nic_split)
                                  : cat.cable_for(kind, gbps * cage, m.length_m, 1);
    if (!c) continue;
    const int links = node_end ? c->links : cage;
    if (c->cost.price_usd / links < best) {
      best = c->cost.price_usd / links;
      m.cable = c;
      m.links_per_cable = links;
    }
  }
  if (!m.cable && std::isfinite(optical)) {
    m.xcvr_switch = x_switch;
    m.xcvr_end = node_end ? x_single : x_switch;
    m.links_per_end = nic_split;
    m.fibre = fibre;
  }
  return m;
}

void build_bom(Plan& p, const Catalog& cat) {
  Bom b;
  auto add = [&](std::string category, std::string id, std::string name, std::string role,
                 long long qty, const CostFigure& cost) {
    if (qty <= 0) return;
    b.items.push_back({std::move(category), std::move(id), std::move(name), std::move(role), qty,
                       cost.price_usd, cost.power_w, cost.provenance()});
  };
  // The server's figure less the compute NICs it includes (node.nics): the BOM lists the plan's
  // NICs at their own figures, so a DGX's are not counted twice. Its storage/in-band cards stay
  // in it (a networks: plan lists them at no further cost).
  CostFigure server = p.gpu.node;
  const Catalog::IncludedNics included = cat.included_nics(p.gpu);
  if (!included.list.empty()) {
    server.price_usd -= included.price_usd;
    server.power_w -= included.power_w;
    // The figure's own provenance ("estimate" or its source) leads the new source.
    server.source = fmt::format("{}; less the NICs it includes ({}), listed as NICs",
                                server.provenance(), included.list);
    server.estimate = false;
  }
  // A node of fewer GPUs than the catalog's server (cluster.gpus_per_node): its share of the
  // server's figure, GPU for GPU. An estimate: a smaller server's chassis, CPUs and memory are
  // not that share of the larger one's.
  if (p.gpu.gpus_per_node > 0 && p.gpus_per_node > 0 && p.gpus_per_node < p.gpu.gpus_per_node) {
    const double share = static_cast<double>(p.gpus_per_node) / p.gpu.gpus_per_node;
    server.price_usd *= share;
    server.power_w *= share;
    server.source = fmt::format("{}; scaled to {} of its {} GPUs (estimate)", server.provenance(),
                                p.gpus_per_node, p.gpu.gpus_per_node);
    server.estimate = false;
  }
  add("compute", p.gpu.id + "-node", p.gpu.name + " server", "compute", p.nodes, server);
  add("nic", p.nic.id, p.nic.name, "compute", 1LL * p.nodes * p.nics_per_node, p.nic.cost);
  add("switch", p.sw.id, p.sw.name, p.topo.kind == TopologyKind::kSingle ? "switch" : "leaf",
      p.leaf_total, p.sw.cost);
  add("switch", p.sw.id, p.sw.name,
      p.topo.kind == TopologyKind::kDragonfly ? "group spine" : "spine", p.spine_total, p.sw.cost);
  add("switch", p.sw.id, p.sw.name, "core", p.core_total, p.sw.cost);

  struct Kind {
    LinkKind kind;
    long long links;
    bool switch_both_ends;
  };
  const Kind kinds[] = {{LinkKind::kNodeLeaf, p.node_leaf_total, false},
                        {LinkKind::kLeafSpine, p.leaf_spine_total, true},
                        {LinkKind::kSpineCore, p.spine_core_total, true}};
  std::optional<std::array<long long, 3>> cages;  // counted once, where a part serves a cage
  for (size_t ki = 0; ki < std::size(kinds); ++ki) {
    const Kind& k = kinds[ki];
    if (k.links == 0) continue;
    const LinkMedium m = link_medium(p, cat, k.kind);
    const std::string role =
        fmt::format("{} ({}, {} m)", link_kind_name(k.kind), m.length_class, m.length_m);
    if (m.cable) {
      add("cable", m.cable->id, m.cable->name, role,
          (k.links + m.links_per_cable - 1) / m.links_per_cable, m.cable->cost);
    } else if (m.xcvr_switch) {
      // Switch-side cages: a multi-port part serves its cage's ports, one part a cage the links
      // use (switch_cages); a single-port part one end.
      const long long switch_ends = k.switch_both_ends ? 2 * k.links : k.links;
      long long parts = switch_ends;
      if (m.xcvr_switch->links > 1) {
        if (!cages) cages = switch_cages(p, cat);
        parts = (*cages)[ki];
      }
      add("transceiver", m.xcvr_switch->id, m.xcvr_switch->name, role + " switch side", parts,
          m.xcvr_switch->cost);
      if (!k.switch_both_ends) {
        // The NICs' ports, split over the planes, take a part a port; an appliance's port (a
        // fabric manager's, one link of its plane) a part of the link's speed.
        const long long appliance = 1LL * p.appliance_ports * p.topo.planes;
        const CablePart* single = appliance > 0 && m.links_per_end > 1
                                      ? cat.cable_for(CableKind::kTransceiver, p.topo.lane_gbps,
                                                      m.length_m, 1, m.xcvr_switch->media)
                                      : nullptr;
        const long long nic_links = single ? k.links - appliance : k.links;
        add("transceiver", m.xcvr_end->id, m.xcvr_end->name, role + " NIC side",
            (nic_links + m.links_per_end - 1) / m.links_per_end, m.xcvr_end->cost);
        if (single)
          add("transceiver", single->id, single->name, role + " appliance side", appliance,
              single->cost);
      }
      add("fibre", m.fibre->id, m.fibre->name, role, k.links, m.fibre->cost);
    } else {
      p.warnings.push_back(
          fmt::format("no cable or optic in the catalog carries {} Gbps over {} m "
                      "({} links); add one with a catalog file",
                      p.topo.lane_gbps, m.length_m, link_kind_name(k.kind)));
    }
  }
  for (const auto& it : b.items) {
    const double usd = it.unit_usd * it.qty, w = it.unit_w * it.qty;
    b.capex_usd += usd;
    b.power_w += w;
    if (it.category == "compute") {
      b.compute_capex_usd += usd;
    } else {
      b.network_capex_usd += usd;
      b.network_power_w += w;
    }
  }
  b.network_usd_per_gpu = p.gpus > 0 ? b.network_capex_usd / p.gpus : 0;
  b.network_share = b.capex_usd > 0 ? b.network_capex_usd / b.capex_usd : 0;
  p.bom = std::move(b);
}

}  // namespace gf
