// The cabling plan: every link with deterministic device names and port numbers.
//
// Names: node0001..; leaves "su01-r3-leaf" (rail-optimized unit 1, rail 3) or "leaf001" (top of
// rack); spines "spine01" (2 tiers) or "pod02-spine03" (3 tiers) / "g02-spine03" (dragonfly);
// cores "core001". With several planes every switch name starts with "p1-", "p2-", ... and a
// host port is "nic3.p1". Switch ports are numbered from 1: down ports first, then up ports;
// cabling.csv gives each its front-panel name too (plan/ports.h: "33/2", cage 33's second port).
#include <fmt/format.h>

#include <algorithm>

#include "plan/plan.h"
#include "plan/ports.h"

namespace gf {
namespace {

int digits(long long n) {
  int d = 1;
  while (n >= 10) {
    n /= 10;
    ++d;
  }
  return d;
}

struct Namer {
  const Topology& t;
  int node_w, unit_w, leaf_w, spine_w, pod_w, core_w;
  std::string plane_prefix(int plane) const {
    return t.planes > 1 ? fmt::format("p{}-", plane + 1) : std::string();
  }
  std::string node(long long n) const { return fmt::format("node{:0{}}", n + 1, node_w); }
  std::string nic_port(int rail, int plane) const {
    return t.planes > 1 ? fmt::format("nic{}.p{}", rail, plane + 1) : fmt::format("nic{}", rail);
  }
  // Leaf index inside a plane, 0-based.
  std::string leaf(int plane, long long leaf) const {
    if (t.kind == TopologyKind::kSingle) return plane_prefix(plane) + "switch1";
    if (!t.rail_optimized)
      return fmt::format("{}leaf{:0{}}", plane_prefix(plane), leaf + 1, leaf_w);
    const long long unit = leaf / t.leaves_per_unit, in_unit = leaf % t.leaves_per_unit;
    const int per_rail = t.leaves_per_unit / t.rails;
    const long long rail = in_unit / per_rail, sub = in_unit % per_rail;
    std::string name = fmt::format("{}su{:0{}}-r{}", plane_prefix(plane), unit + 1, unit_w, rail);
    if (per_rail > 1) name += fmt::format("{}", static_cast<char>('a' + sub));
    return name + "-leaf";
  }
  std::string spine(int plane, long long s) const {
    if (t.kind == TopologyKind::kClos2)
      return fmt::format("{}spine{:0{}}", plane_prefix(plane), s + 1, spine_w);
    const long long pod = s / t.spines_per_pod, in_pod = s % t.spines_per_pod;
    return fmt::format("{}{}{:0{}}-spine{:0{}}", plane_prefix(plane),
                       t.kind == TopologyKind::kDragonfly ? "g" : "pod", pod + 1, pod_w, in_pod + 1,
                       digits(t.spines_per_pod));
  }
  std::string core(int plane, long long c) const {
    return fmt::format("{}core{:0{}}", plane_prefix(plane), c + 1, core_w);
  }
};

// The first up port of a switch with `down` ports down and `up` up: on a cage of its own where
// the switch has the room, so that one cage holds one kind of link. A cage's ports share one
// part (a twin-port transceiver, a splitter cable), and a node link's short-reach optic is not a
// spine link's long-reach one: a cage split between them would need both in one part.
int first_up_port(const Plan& p, int down, int up) {
  const int cage = std::max(1, p.sw.ports_per_cage_at(p.topo.lane_gbps));
  const int aligned = (down + cage - 1) / cage * cage;
  return (aligned + up <= p.topo.radix ? aligned : down) + 1;
}

// The names of a plan's compute switches and nodes, zero-padded to the widest of each kind.
Namer namer_of(const Plan& p) {
  const Topology& t = p.topo;
  return {t,
          std::max(3, digits(p.nodes)),
          std::max(2, digits(t.units)),
          std::max(3, digits(t.leaves)),
          std::max(2, digits(t.spines)),
          std::max(2, digits(t.pods)),
          std::max(3, digits(t.cores))};
}

}  // namespace

std::string node_name(const Plan& plan, long long n) { return namer_of(plan).node(n); }

std::vector<int> leaf_endpoints(const Topology& t, long long nodes, int appliance_ports) {
  std::vector<int> on(static_cast<size_t>(std::max(0, t.leaves)), 0);
  if (on.empty()) return on;
  auto clamp_to = [](long long n, long long hi) {
    return static_cast<int>(std::clamp<long long>(n, 0, hi));
  };
  if (t.kind == TopologyKind::kSingle) {
    on[0] = clamp_to(nodes * t.rails, t.radix);
  } else if (t.rail_optimized) {
    // Node slot s of a unit takes port s % leaf_down of the unit's (s / leaf_down)-th leaf of
    // every rail.
    const int per_rail = t.leaves_per_unit / t.rails;
    for (long long leaf = 0; leaf < t.leaves; ++leaf) {
      const long long unit = leaf / t.leaves_per_unit, sub = leaf % t.leaves_per_unit % per_rail;
      const long long in_unit =
          std::clamp<long long>(nodes - unit * t.nodes_per_unit, 0, t.nodes_per_unit);
      on[static_cast<size_t>(leaf)] = clamp_to(in_unit - sub * t.leaf_down, t.leaf_down);
    }
  } else {
    const int per_leaf = t.leaf_down / t.rails;
    for (long long leaf = 0; leaf < t.leaves; ++leaf)
      on[static_cast<size_t>(leaf)] = clamp_to(nodes - leaf * per_leaf, per_leaf) * t.rails;
  }
  // Appliances (e.g. UFM) on the free down ports of the last leaves.
  const int cap = t.kind == TopologyKind::kSingle ? t.radix : t.leaf_down;
  int left = appliance_ports;
  for (auto leaf = on.rbegin(); leaf != on.rend() && left > 0; ++leaf) {
    const int take = std::min(left, cap - *leaf);
    *leaf += take;
    left -= take;
  }
  return on;
}

void for_each_link(const Plan& p, const Catalog& cat,
                   const std::function<void(const CableRun&)>& visit, bool with_names) {
  const Topology& t = p.topo;
  const Namer nm = namer_of(p);
  const LinkMedium m_nl = link_medium(p, cat, LinkKind::kNodeLeaf);
  const LinkMedium m_ls = link_medium(p, cat, LinkKind::kLeafSpine);
  const LinkMedium m_sc = link_medium(p, cat, LinkKind::kSpineCore);
  const std::string c_nl = m_nl.label(), c_ls = m_ls.label(), c_sc = m_sc.label();
  CableRun r;
  // The names of a switch-to-switch link: both ends' devices and port numbers, the medium.
  auto name_switch_link = [&r](std::string lower, std::string upper, const std::string& cable,
                               const std::string& length_class) {
    r.a_device = std::move(lower);
    r.a_port = std::to_string(r.a_port_no);
    r.b_device = std::move(upper);
    r.b_port = std::to_string(r.b_port_no);
    r.cable = cable;
    r.length_class = length_class;
  };
  for (int plane = 0; plane < t.planes; ++plane) {
    // Node to leaf. Rail-optimized: node slot s of unit u, rail r -> leaf (u, r), port s+1.
    // Top of rack: node i of its leaf, rail r -> port i*rails + r + 1.
    const std::vector<int> used_down = leaf_endpoints(t, p.nodes, 0);
    for (long long n = 0; n < p.nodes; ++n) {
      for (int rail = 0; rail < t.rails; ++rail) {
        long long leaf = 0;
        int port = 0;
        if (t.kind == TopologyKind::kSingle) {
          leaf = 0;
          port = static_cast<int>(n * t.rails + rail + 1);
        } else if (t.rail_optimized) {
          const long long unit = n / t.nodes_per_unit, slot = n % t.nodes_per_unit;
          const int per_rail = t.leaves_per_unit / t.rails;
          leaf = unit * t.leaves_per_unit + 1LL * rail * per_rail + slot / t.leaf_down;
          port = static_cast<int>(slot % t.leaf_down + 1);
        } else {
          const int per_leaf = t.leaf_down / t.rails;
          leaf = n / per_leaf;
          port = static_cast<int>((n % per_leaf) * t.rails + rail + 1);
        }
        r.kind = LinkKind::kNodeLeaf;
        r.plane = plane;
        r.a_index = n;
        r.rail = rail;
        r.b_index = leaf;
        r.a_port_no = 0;
        r.b_port_no = port;
        if (with_names) {
          r.a_device = nm.node(n);
          r.a_port = nm.nic_port(rail, plane);
          r.b_device = nm.leaf(plane, leaf);
          r.b_port = std::to_string(port);
          r.cable = c_nl;
          r.length_class = m_nl.length_class;
        }
        visit(r);
      }
    }
    // Appliances (e.g. UFM) on the free down ports of the last leaves.
    int left = p.appliance_ports;
    for (long long leaf = t.leaves - 1; leaf >= 0 && left > 0; --leaf) {
      const int cap = t.kind == TopologyKind::kSingle ? t.radix : t.leaf_down;
      for (int port = used_down[static_cast<size_t>(leaf)] + 1; port <= cap && left > 0; ++port) {
        r.kind = LinkKind::kApplianceLeaf;
        r.plane = plane;
        r.a_index = p.appliance_ports - left;
        r.b_index = leaf;
        r.a_port_no = 0;
        r.b_port_no = port;
        if (with_names) {
          r.a_device = fmt::format("{}fabric-manager", nm.plane_prefix(plane));
          r.a_port = fmt::format("port{}", p.appliance_ports - left + 1);
          r.b_device = nm.leaf(plane, leaf);
          r.b_port = std::to_string(port);
          r.cable = c_nl;
          r.length_class = m_nl.length_class;
        }
        visit(r);
        --left;
      }
    }
    if (t.kind == TopologyKind::kSingle) continue;
    // Leaf to spine: uplink j of a leaf goes to spine j mod S (of its pod), spread evenly.
    const long long leaves_per_pod =
        t.kind == TopologyKind::kClos2 ? t.leaves : 1LL * t.units_per_pod * t.leaves_per_unit;
    const int spines_per = t.kind == TopologyKind::kClos2 ? t.spines : t.spines_per_pod;
    const long long per_pair = (t.leaf_up + spines_per - 1) / spines_per;
    const int leaf_first_up = first_up_port(p, t.leaf_down, t.leaf_up);
    for (long long leaf = 0; leaf < t.leaves; ++leaf) {
      const long long pod = leaf / leaves_per_pod, local = leaf % leaves_per_pod;
      for (int j = 0; j < t.leaf_up; ++j) {
        const long long s = pod * spines_per + j % spines_per;
        r.kind = LinkKind::kLeafSpine;
        r.plane = plane;
        r.a_index = leaf;
        r.b_index = s;
        r.a_port_no = leaf_first_up + j;
        r.b_port_no = static_cast<int>(local * per_pair + j / spines_per + 1);
        if (with_names)
          name_switch_link(nm.leaf(plane, leaf), nm.spine(plane, s), c_ls, m_ls.length_class);
        visit(r);
      }
    }
    if (t.kind == TopologyKind::kClos3) {
      // Spine s of every pod to the cores of group s; spine uplink j -> core j mod Cg of the group.
      const long long per = (t.spine_up + t.cores_per_group - 1) / t.cores_per_group;
      const int spine_first_up = first_up_port(p, t.spine_down, t.spine_up);
      for (long long s = 0; s < t.spines; ++s) {
        const long long pod = s / t.spines_per_pod, idx = s % t.spines_per_pod;
        const int up = pod == t.pods - 1 ? t.last_pod_spine_up : t.spine_up;
        for (int j = 0; j < up; ++j) {
          const long long c = idx * t.cores_per_group + j % t.cores_per_group;
          r.kind = LinkKind::kSpineCore;
          r.plane = plane;
          r.a_index = s;
          r.b_index = c;
          r.a_port_no = spine_first_up + j;
          r.b_port_no = static_cast<int>(pod * per + j / t.cores_per_group + 1);
          if (with_names)
            name_switch_link(nm.spine(plane, s), nm.core(plane, c), c_sc, m_sc.length_class);
          visit(r);
        }
      }
    } else if (t.kind == TopologyKind::kDragonfly) {
      // Global links: each group's global ports taken in turn, spine by spine.
      std::vector<long long> next(static_cast<size_t>(t.pods), 0);
      const long long per_spine =
          (1LL * (t.pods - 1) * t.global_links_per_pair + t.spines_per_pod - 1) / t.spines_per_pod;
      const int global_first = first_up_port(p, t.spine_down, static_cast<int>(per_spine));
      auto take = [&](long long g, long long& spine, int& port) {
        const long long k = next[static_cast<size_t>(g)]++;
        spine = g * t.spines_per_pod + k % t.spines_per_pod;
        port = static_cast<int>(global_first + k / t.spines_per_pod);
      };
      for (long long a = 0; a < t.pods; ++a)
        for (long long b = a + 1; b < t.pods; ++b)
          for (int l = 0; l < t.global_links_per_pair; ++l) {
            r.kind = LinkKind::kGlobal;
            r.plane = plane;
            take(a, r.a_index, r.a_port_no);
            take(b, r.b_index, r.b_port_no);
            if (with_names)
              name_switch_link(nm.spine(plane, r.a_index), nm.spine(plane, r.b_index), c_sc,
                               m_sc.length_class);
            visit(r);
          }
    }
  }
}

void for_each_compute_switch(const Plan& p,
                             const std::function<void(const std::string&, bool)>& visit) {
  const Topology& t = p.topo;
  const Namer nm = namer_of(p);
  for (int plane = 0; plane < t.planes; ++plane) {
    for (long long l = 0; l < t.leaves; ++l)
      visit(nm.leaf(plane, l), t.kind == TopologyKind::kSingle);
    for (long long s = 0; s < t.spines; ++s)
      visit(nm.spine(plane, s), t.kind == TopologyKind::kClos2);
    for (long long c = 0; c < t.cores; ++c) visit(nm.core(plane, c), false);
  }
}

std::string cabling_csv(const Plan& p, const Catalog& cat) {
  fmt::memory_buffer out;
  // The name columns come after the first six, and `network` last, so that a reader of the
  // earlier columns is unchanged.
  fmt::format_to(
      std::back_inserter(out),
      "a_device,a_port,b_device,b_port,cable,length_class,a_port_name,b_port_name,network\n");
  // A switch port's front-panel name; a node's or an appliance's port keeps its own name.
  auto name = [&p](int port_no, const std::string& port) {
    return port_no > 0 ? panel_port_name(p, port_no) : port;
  };
  for_each_link(p, cat, [&](const CableRun& r) {
    fmt::format_to(std::back_inserter(out), "{},{},{},{},{},{},{},{},compute\n", r.a_device,
                   r.a_port, r.b_device, r.b_port, r.cable, r.length_class,
                   name(r.a_port_no, r.a_port), name(r.b_port_no, r.b_port));
  });
  // The other networks' switches are not in the port model (plan/ports.h): their port names are
  // the port numbers.
  for_each_network_link(p, [&](const NetworkLink& l) {
    fmt::format_to(std::back_inserter(out), "{},{},{},{},{},{},{},{},{}\n", l.a_device, l.a_port,
                   l.b_device, l.b_port, l.cable, l.length_class, l.a_port, l.b_port,
                   network_kind_name(l.network));
  });
  return fmt::to_string(out);
}

}  // namespace gf
