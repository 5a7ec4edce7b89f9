#include "sim/whatif.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <map>
#include <regex>
#include <set>

#include "sim/collective.h"
#include "sim/link_load.h"
#include "topo/fabric.h"
#include "units/units.h"

namespace gf {
namespace {

// Collectives compared between baseline and scenario: data parallelism's and expert
// parallelism's.
const Op kProbeOps[] = {Op::kAllReduce, Op::kAlltoall};

// Device names of the cabling plan mapped to what the fabric graph knows.
struct Names {
  std::map<std::string, int> node;    ///< node name -> node index
  std::map<std::string, int> vertex;  ///< switch name -> vertex
  std::vector<std::string> all;       ///< every name, for "did you mean"
};

Names names_of(const Plan& plan, const Catalog& cat, const Fabric& f) {
  Names n;
  auto sw = [&](const std::string& name, int v) {
    if (n.vertex.emplace(name, v).second) n.all.push_back(name);
  };
  for_each_link(plan, cat, [&](const CableRun& r) {
    switch (r.kind) {
      case LinkKind::kNodeLeaf:
        if (n.node.emplace(r.a_device, static_cast<int>(r.a_index)).second)
          n.all.push_back(r.a_device);
        sw(r.b_device, f.leaf_vertex(r.plane, static_cast<int>(r.b_index)));
        break;
      case LinkKind::kApplianceLeaf:
        break;
      case LinkKind::kLeafSpine:
        sw(r.a_device, f.leaf_vertex(r.plane, static_cast<int>(r.a_index)));
        sw(r.b_device, f.spine_vertex(r.plane, static_cast<int>(r.b_index)));
        break;
      case LinkKind::kSpineCore:
        sw(r.a_device, f.spine_vertex(r.plane, static_cast<int>(r.a_index)));
        sw(r.b_device, f.core_vertex(r.plane, static_cast<int>(r.b_index)));
        break;
      case LinkKind::kGlobal:
        sw(r.a_device, f.spine_vertex(r.plane, static_cast<int>(r.a_index)));
        sw(r.b_device, f.spine_vertex(r.plane, static_cast<int>(r.b_index)));
        break;
    }
  });
  return n;
}

Diagnostic unknown(const std::string& what, const std::string& name, const Names& n,
                   const std::string& flag = "--fail") {
  // A name of the other kind (a node where a switch is wanted) is known: say what it is.
  if (n.node.count(name) || n.vertex.count(name)) {
    const bool node = n.node.count(name) > 0;
    return Diagnostic::flag(
        flag, fmt::format("'{}' is a {}, not a {}", name, node ? "node" : "switch", what),
        fmt::format("use {}:{}", node ? "node" : "switch", name));
  }
  const std::string hint = did_you_mean(name, n.all);
  return Diagnostic::flag(
      flag, fmt::format("unknown {} '{}'", what, name),
      hint.empty() ? "use the device names of cabling.csv (gpufabric plan -o DIR)" : hint);
}

// A collective slower than this share in a scenario that re-routes is named as its cost
// (figures are printed to 0.1 GB/s and a percent; a few percent is more than rounding).
constexpr double kWhatIfSlower = 0.02;

// The two ends of "link:A:B" as the fabric knows them: a node and its leaf, written in either
// order, or two switches.
struct LinkEnds {
  int node = -1;  ///< the node's index where one end is a node; -1 between two switches
  int a = -1;     ///< the node's leaf, or the first switch written
  int b = -1;     ///< the second switch written; -1 with a node
};

Result<LinkEnds> link_ends(const std::string& a, const std::string& b, const Names& n,
                           const std::string& flag) {
  // A node's port named for its cable's far end (link:node001:nic0): say which cable that is.
  static const std::regex port(R"(^nic[0-9]+(\.p[0-9]+)?$)");
  for (const auto& [node, other] : {std::pair{a, b}, std::pair{b, a}})
    if (n.node.count(node) && std::regex_match(other, port))
      return Diagnostic::flag(
          flag,
          fmt::format("'{}' is a port of {}, not a device: a link names the devices at "
                      "both ends of its cable",
                      other, node),
          fmt::format("use link:{}:LEAF, the leaf that cabling.csv's row for {} {} names", node,
                      node, other));
  for (const std::string& end : {a, b})
    if (!n.node.count(end) && !n.vertex.count(end)) return unknown("device", end, n, flag);
  const auto node_a = n.node.find(a), node_b = n.node.find(b);
  if (node_a != n.node.end() && node_b != n.node.end())
    return Diagnostic::flag(flag, fmt::format("{} and {} are both nodes: no cable joins two", a, b),
                            "a node's cables run to its leaves: link:NODE:LEAF (see cabling.csv)");
  if (node_a != n.node.end()) return LinkEnds{node_a->second, n.vertex.at(b), -1};
  if (node_b != n.node.end()) return LinkEnds{node_b->second, n.vertex.at(a), -1};
  return LinkEnds{-1, n.vertex.at(a), n.vertex.at(b)};
}

// The first of `node`'s NIC ports cabled to `leaf`: (NIC, plane), or nullopt.
std::optional<std::pair<int, int>> nic_on_leaf(const Fabric& f, int node, int leaf) {
  for (int r = 0; r < f.nics_per_node(); ++r)
    for (int p = 0; p < f.planes(); ++p)
      if (const int nic = f.nic(node, r); f.leaf_of_nic(nic, p) == leaf)
        return std::make_pair(nic, p);
  return std::nullopt;
}

// The --nic change: the NICs, the switch, which the new rate keeps or replaces, and what the
// fabric then takes and costs.
std::string nic_change(const Plan& from, const Plan& to) {
  if (from.nic.id == to.nic.id && from.sw.id == to.sw.id)
    return fmt::format("NICs {} kept ({:g} Gbps: the rate asked for is the plan's own)",
                       from.nic.id, from.nic.rate_gbps);
  // What the new plan warns of that the old did not (a NIC its host's PCIe cannot feed): the
  // reason a faster NIC gains less than its rate.
  std::string new_warnings;
  for (const auto& w : to.warnings)
    if (std::find(from.warnings.begin(), from.warnings.end(), w) == from.warnings.end())
      new_warnings += "; plan warns: " + w;
  return fmt::format(
             "NICs {} -> {} ({:g} -> {:g} Gbps), {}: {} -> {} switches, network capex "
             "{} -> {} ({:+.0f}%)",
             from.nic.id, to.nic.id, from.nic.rate_gbps, to.nic.rate_gbps,
             from.sw.id == to.sw.id ? fmt::format("switch {} kept", from.sw.id)
                                    : fmt::format("switch {} -> {}", from.sw.id, to.sw.id),
             from.switch_total, to.switch_total, units::format_usd(from.bom.network_capex_usd),
             units::format_usd(to.bom.network_capex_usd),
             from.bom.network_capex_usd > 0
                 ? 100 * (to.bom.network_capex_usd / from.bom.network_capex_usd - 1)
                 : 0.0) +
         new_warnings;
}

// Applies "--fail" items to the fabric; `ports` names the switch ports of its cables (a cable
// of parallel ones failed by its ports).
std::vector<Diagnostic> apply_failures(const std::vector<std::string>& items, const Names& n,
                                       const LinkNames& ports, Fabric& f,
                                       std::vector<std::string>& changes) {
  std::vector<Diagnostic> errs;
  // One cable (`link` and its reverse) failed once: named again (the other end first), or its
  // switch or node failed already, it is an error; false then.
  auto fail_cable = [&](int32_t link, const std::string& item) {
    if (f.links()[static_cast<size_t>(link)].failed) {
      errs.push_back(Diagnostic::flag(
          "--fail", fmt::format("'{}' names a cable an earlier --fail failed already", item),
          "name each failed part once"));
      return false;
    }
    f.fail_link(link);
    f.fail_link(Fabric::reverse(link));
    return true;
  };
  for (const auto& item : items) {
    std::vector<std::string> parts;
    size_t start = 0;
    for (size_t i = 0; i <= item.size(); ++i)
      if (i == item.size() || item[i] == ':') {
        parts.push_back(item.substr(start, i - start));
        start = i + 1;
      }
    const std::string kind = parts[0];
    if (kind == "switch" && parts.size() == 2) {
      auto it = n.vertex.find(parts[1]);
      if (it == n.vertex.end()) {
        errs.push_back(unknown("switch", parts[1], n));
        continue;
      }
      f.fail_vertex(it->second);
      changes.push_back(fmt::format("switch {} failed: all its links are down", parts[1]));
    } else if (kind == "node" && parts.size() == 2) {
      auto it = n.node.find(parts[1]);
      if (it == n.node.end()) {
        errs.push_back(unknown("node", parts[1], n));
        continue;
      }
      for (int r = 0; r < f.nics_per_node(); ++r)
        for (int p = 0; p < f.planes(); ++p) {
          const int nic = f.nic(it->second, r);
          f.fail_link(f.nic_to_leaf(nic, p));
          f.fail_link(f.leaf_to_nic(nic, p));
        }
      changes.push_back(fmt::format("node {} failed: its NICs are down", parts[1]));
    } else if (kind == "link" && parts.size() == 3) {
      // Node to leaf (either end first), or between two switches (the first of parallel cables).
      const auto ends = link_ends(parts[1], parts[2], n, "--fail");
      if (!ends) {
        errs.push_back(ends.errors().front());
        continue;
      }
      bool done = false;
      if (ends->node >= 0) {
        if (const auto at = nic_on_leaf(f, ends->node, ends->a)) {
          if (!fail_cable(f.nic_to_leaf(at->first, at->second), item)) continue;
          done = true;
          // A node with several cables to this switch (a single switch, top of rack): say
          // which one failed and how to name another.
          int cables = 0;
          for (int r = 0; r < f.nics_per_node(); ++r)
            for (int p = 0; p < f.planes(); ++p)
              cables += f.leaf_of_nic(f.nic(ends->node, r), p) == ends->a ? 1 : 0;
          const bool node_first = n.node.count(parts[1]) > 0;
          const std::string& node = node_first ? parts[1] : parts[2];
          const std::string& sw = node_first ? parts[2] : parts[1];
          if (cables > 1)
            changes.push_back(fmt::format(
                "{} has {} cables to {}; its first NIC's failed (name another by its ports: "
                "link:{}:nicN:{}:PORT, as cabling.csv names them)",
                node, cables, sw, node, sw));
        }
      } else {
        int parallel = 0;
        for (size_t i = 0; i < f.links().size(); ++i) {
          const Link& l = f.links()[i];
          const bool match = l.from == ends->a && l.to == ends->b;
          if (!match || l.failed) continue;
          if (!done) {
            f.fail_link(static_cast<int>(i));
            f.fail_link(Fabric::reverse(static_cast<int>(i)));
            done = true;
          }
          ++parallel;
        }
        if (done && parallel > 1)
          changes.push_back(
              fmt::format("{} has {} parallel cables to {}; one failed (name one by its ports: "
                          "link:{}:PORT:{}:PORT, as cabling.csv numbers them)",
                          parts[1], parallel, parts[2], parts[1], parts[2]));
      }
      if (!done) {
        errs.push_back(Diagnostic::flag("--fail",
                                        fmt::format("no cable joins {} and {}", parts[1], parts[2]),
                                        "see cabling.csv for the links that exist"));
        continue;
      }
      changes.push_back(fmt::format("link {} - {} failed", parts[1], parts[2]));
    } else if (kind == "link" && parts.size() == 5 &&
               (n.node.count(parts[1]) > 0) != (n.node.count(parts[3]) > 0)) {
      // One of a node's cables by its ports (link:NODE:nic3:SWITCH:PORT, either end first):
      // one of several a node has to one switch (a single switch, top of rack).
      const bool node_first = n.node.count(parts[1]) > 0;
      const std::string &node = node_first ? parts[1] : parts[3],
                        &nic = node_first ? parts[2] : parts[4],
                        &sw = node_first ? parts[3] : parts[1],
                        &port = node_first ? parts[4] : parts[2];
      if (!n.vertex.count(sw)) {
        errs.push_back(unknown("switch", sw, n));
        continue;
      }
      const int32_t link = ports.node_cable(n.node.at(node), nic, n.vertex.at(sw), port);
      if (link < 0) {
        errs.push_back(Diagnostic::flag(
            "--fail", fmt::format("no cable joins {} {} and {} port {}", node, nic, sw, port),
            "see cabling.csv: a_device, a_port (nic3), b_device, b_port (or b_port_name)"));
        continue;
      }
      if (fail_cable(link, item))
        changes.push_back(fmt::format("link {}:{} - {}:{} failed", node, nic, sw, port));
    } else if (kind == "link" && parts.size() == 5) {
      // One cable between two switches by its ports (link:A:PORT:B:PORT): one of parallel ones.
      for (const std::string& end : {parts[1], parts[3]})
        if (!n.vertex.count(end)) {
          errs.push_back(n.node.count(end)
                             ? Diagnostic::flag("--fail",
                                                fmt::format("{} is a node: a node's cable is "
                                                            "named link:NODE:LEAF, or "
                                                            "link:NODE:nicN:SWITCH:PORT",
                                                            end),
                                                "see cabling.csv")
                             : unknown("switch", end, n));
        }
      if (!n.vertex.count(parts[1]) || !n.vertex.count(parts[3])) continue;
      const int32_t link =
          ports.cable_between(n.vertex.at(parts[1]), parts[2], n.vertex.at(parts[3]), parts[4]);
      if (link < 0) {
        errs.push_back(Diagnostic::flag(
            "--fail",
            fmt::format("no cable joins {} port {} and {} port {}", parts[1], parts[2], parts[3],
                        parts[4]),
            "see cabling.csv: a_device, a_port (or a_port_name), b_device, b_port"));
        continue;
      }
      if (fail_cable(link, item))
        changes.push_back(
            fmt::format("link {}:{} - {}:{} failed", parts[1], parts[2], parts[3], parts[4]));
    } else {
      errs.push_back(
          Diagnostic::flag("--fail", fmt::format("cannot read '{}'", item),
                           "use link:A:B, link:A:PORT:B:PORT, switch:NAME or node:NAME"));
    }
  }
  return errs;
}

// "kind:a[:b]=value" split at ':' and the last '='; false when there is no '=' or a part is empty.
bool split_item(const std::string& item, std::vector<std::string>& parts, std::string& value) {
  const size_t eq = item.rfind('=');
  if (eq == std::string::npos) return false;
  value = item.substr(eq + 1);
  parts.clear();
  size_t start = 0;
  const std::string head = item.substr(0, eq);
  for (size_t i = 0; i <= head.size(); ++i)
    if (i == head.size() || head[i] == ':') {
      parts.push_back(head.substr(start, i - start));
      start = i + 1;
    }
  for (const auto& p : parts)
    if (p.empty()) return false;
  return !value.empty();
}

// A fraction in (0, 1] from `text`, or nullopt.
std::optional<double> fraction_of(const std::string& text) {
  char* end = nullptr;
  const double v = std::strtod(text.c_str(), &end);
  if (end == text.c_str() || *end != '\0' || !std::isfinite(v) || v <= 0 || v > 1)
    return std::nullopt;
  return v;
}

// Applies "--degrade" items to the fabric: a cable's two directions set to the rate it trained
// at, or every link of a switch scaled to a fraction of its capacity.
std::vector<Diagnostic> apply_degrades(const std::vector<std::string>& items, const Names& n,
                                       Fabric& f, std::vector<std::string>& changes) {
  std::vector<Diagnostic> errs;
  std::map<int, std::string> degraded;  // a link's lower direction -> the item that slowed it
  const std::string form =
      "use link:A:B=RATE (e.g. link:node001:su01-r0-leaf=200G) or "
      "switch:NAME=FRACTION (e.g. switch:spine01=0.5)";
  for (const auto& item : items) {
    std::vector<std::string> parts;
    std::string value;
    if (!split_item(item, parts, value) || !((parts[0] == "link" && parts.size() == 3) ||
                                             (parts[0] == "switch" && parts.size() == 2))) {
      errs.push_back(Diagnostic::flag("--degrade", fmt::format("cannot read '{}'", item), form));
      continue;
    }
    if (parts[0] == "switch") {
      auto it = n.vertex.find(parts[1]);
      if (it == n.vertex.end()) {
        errs.push_back(unknown("switch", parts[1], n, "--degrade"));
        continue;
      }
      const auto frac = fraction_of(value);
      if (!frac) {
        errs.push_back(Diagnostic::flag(
            "--degrade",
            fmt::format("'{}' in '{}' is not a fraction above 0 and at most 1", value, item),
            "e.g. switch:" + parts[1] + "=0.5 (half its capacity)"));
        continue;
      }
      for (int32_t l : f.links_of_vertex(it->second))
        f.set_capacity(l, f.links()[l].bytes_per_s * *frac);
      changes.push_back(fmt::format("switch {} at {:g}% of its capacity: every port slowed",
                                    parts[1], 100 * *frac));
      continue;
    }
    // A link: node to leaf, or the first cable between two switches (as --fail takes it).
    const auto rate = units::parse_bitrate(value);
    if (!rate || *rate <= 0) {
      errs.push_back(Diagnostic::flag("--degrade",
                                      fmt::format("'{}' in '{}' is not a rate", value, item),
                                      "give the speed the link trained at, e.g. =200G"));
      continue;
    }
    const auto ends = link_ends(parts[1], parts[2], n, "--degrade");
    if (!ends) {
      errs.push_back(ends.errors().front());
      continue;
    }
    int link = -1;
    if (ends->node >= 0) {
      if (const auto at = nic_on_leaf(f, ends->node, ends->a))
        link = f.nic_to_leaf(at->first, at->second);
    } else {
      for (size_t i = 0; i < f.links().size() && link < 0; ++i)
        if (f.links()[i].from == ends->a && f.links()[i].to == ends->b) link = static_cast<int>(i);
    }
    if (link < 0) {
      errs.push_back(Diagnostic::flag("--degrade",
                                      fmt::format("no cable joins {} and {}", parts[1], parts[2]),
                                      "see cabling.csv for the links that exist"));
      continue;
    }
    // One cable, one state: named twice (either end first), or also failed, is a contradiction.
    const int key = std::min(link, Fabric::reverse(link));
    if (f.links()[link].failed) {
      errs.push_back(Diagnostic::flag(
          "--degrade",
          fmt::format("'{}' names a cable --fail fails: a failed cable has no rate", item),
          "give the cable to --fail or to --degrade, not both"));
      continue;
    }
    if (const auto seen = degraded.find(key); seen != degraded.end()) {
      errs.push_back(Diagnostic::flag(
          "--degrade", fmt::format("'{}' names the cable '{}' names already", item, seen->second),
          "give each cable one rate"));
      continue;
    }
    degraded.emplace(key, item);
    const double was = f.links()[link].bytes_per_s * 8;
    if (*rate >= was * (1 - 1e-9)) {
      errs.push_back(Diagnostic::flag(
          "--degrade",
          fmt::format("{} is {} the link's {:g}G: a degraded link trains slower", value,
                      *rate > was * (1 + 1e-9) ? "faster than" : "already", was / 1e9),
          "give a rate below the link's, e.g. =" + fmt::format("{:g}G", was / 2e9)));
      continue;
    }
    f.set_capacity(link, *rate / 8);
    f.set_capacity(Fabric::reverse(link), *rate / 8);
    changes.push_back(fmt::format("link {} - {} trained at {:g}G instead of {:g}G", parts[1],
                                  parts[2], *rate / 1e9, was / 1e9));
  }
  return errs;
}

// "--slow node:NAME=0.8": per node, the speed its GPUs compute at (1 for the others).
std::vector<Diagnostic> parse_slow(const std::vector<std::string>& items, const Names& n, int nodes,
                                   std::vector<double>& speed, std::vector<std::string>& changes) {
  std::vector<Diagnostic> errs;
  if (!items.empty()) speed.assign(static_cast<size_t>(nodes), 1.0);
  for (const auto& item : items) {
    std::vector<std::string> parts;
    std::string value;
    if (!split_item(item, parts, value) || parts.size() != 2 || parts[0] != "node") {
      errs.push_back(Diagnostic::flag("--slow", fmt::format("cannot read '{}'", item),
                                      "use node:NAME=SPEED, e.g. node:node001=0.8 (computes at "
                                      "0.8x the others' speed)"));
      continue;
    }
    auto it = n.node.find(parts[1]);
    if (it == n.node.end()) {
      errs.push_back(unknown("node", parts[1], n, "--slow"));
      continue;
    }
    const auto frac = fraction_of(value);
    if (!frac) {
      errs.push_back(Diagnostic::flag(
          "--slow", fmt::format("'{}' in '{}' is not a speed above 0 and at most 1", value, item),
          "e.g. node:" + parts[1] + "=0.8"));
      continue;
    }
    speed[static_cast<size_t>(it->second)] = *frac;
    changes.push_back(
        fmt::format("node {} computes at {:g}x the others' speed (a straggler)", parts[1], *frac));
  }
  return errs;
}

// One side's plan figures, before anything runs on it.
WhatIfSide side_of(const std::string& label, const Plan& plan) {
  WhatIfSide s;
  s.label = label;
  s.gpus = plan.gpus;
  s.nodes = plan.nodes;
  s.switches = plan.switch_total;
  s.network_capex_usd = plan.bom.network_capex_usd;
  s.top_tier_free = plan.spine_ports_free_fraction;
  s.max_nodes_same_tiers = plan.max_nodes_same_tiers;
  s.tiers = plan.topo.tiers;
  return s;
}

// A side where nothing runs, and why (every node failed: no GPUs are left).
WhatIfSide not_run(const std::string& label, const Spec& spec, const Plan& plan,
                   const std::string& why) {
  WhatIfSide s = side_of(label, plan);
  s.gpus = 0;  // none left to run on
  s.nodes = 0;
  for (Op op : kProbeOps) {
    CollectiveProbe p;
    p.op = op_name(op);
    p.runs = false;
    p.note = why;
    s.collectives.push_back(p);
  }
  if (spec.workload) s.step_note = why;
  return s;
}

// The nodes that --fail node:NAME items name (the servers that are down, not only cut off).
std::set<int> failed_nodes(const std::vector<std::string>& items, const Names& n) {
  std::set<int> out;
  for (const auto& item : items)
    if (item.rfind("node:", 0) == 0)
      if (auto it = n.node.find(item.substr(5)); it != n.node.end()) out.insert(it->second);
  return out;
}

// A change from a ratio, in percent with its sign: "+0.0%" where it rounds to nothing, not
// "-0.0%".
std::string percent_change(double ratio) {
  const double pct = 100 * (ratio - 1);
  return fmt::format("{:+.1f}%", std::fabs(pct) < 0.05 ? 0.0 : pct);
}

WhatIfSide measure(const std::string& label, const Spec& spec, const Plan& plan, const Fabric& f,
                   double bytes, size_t memory_budget_bytes,
                   const std::vector<double>& node_speed = {}) {
  WhatIfSide s = side_of(label, plan);
  for (Op op : kProbeOps) {
    CollectiveProbe p;
    p.op = op_name(op);
    SimOptions o;
    o.op = op;
    o.memory_budget_bytes = memory_budget_bytes;
    auto m = CollectiveModel::build(f, plan, o);
    if (!m) {
      p.runs = false;
      p.note = m.errors()[0].message;
    } else {
      const SizeResult r = m->at(bytes);
      if (!std::isfinite(r.time_us)) {
        p.runs = false;
        p.note = "some ranks have no path to the others";
      } else {
        p.busbw_gbs = r.busbw_gbs;
        p.algorithm = algorithm_name(r.algorithm);
        for (const auto& a : m->algorithms())
          if (!a.available && !a.unavailable_reason.empty())
            p.unavailable.push_back({algorithm_name(a.algorithm), a.unavailable_reason});
      }
    }
    s.collectives.push_back(p);
  }
  if (spec.workload) {
    auto st = simulate_step(spec, plan, f, node_speed);
    if (st)
      s.step = *st;
    else
      s.step_note = st.errors()[0].message;
  }
  return s;
}

// A NIC id of the catalog for --nic: an id as is, or a rate matched to a NIC speaking the
// plan's technology: the plan's own NIC where the rate is its own (a 400G asked of a cx7-400g
// plan is not a BlueField-3 DPU), else the first of the catalog at that rate.
std::optional<std::string> nic_for(const std::string& want, const Catalog& cat, const Plan& plan) {
  if (cat.nics.count(want)) return want;
  auto rate = units::parse_bitrate(want);
  if (!rate) return std::nullopt;
  const Technology tech = plan.technology;
  if (plan.nic.rate_gbps * 1e9 == *rate && cat.nics.count(plan.nic.id)) return plan.nic.id;
  for (const auto& [id, n] : cat.nics)
    if (n.rate_gbps * 1e9 == *rate && (tech == Technology::kInfiniband ? n.infiniband : n.roce))
      return id;
  return std::nullopt;
}

// Spec errors that a flag's change to the spec (--nic, --grow) brought about, said as the
// flag's: the spec's file and line name a key the user did not write.
std::vector<Diagnostic> as_flag_errors(const std::vector<Diagnostic>& errs, const std::string& flag,
                                       const std::string& value) {
  std::vector<Diagnostic> out;
  for (const auto& e : errs)
    out.push_back(Diagnostic::flag(
        flag, fmt::format("with {}, {}{}", value, e.key.empty() ? "" : e.key + ": ", e.message),
        e.hint.empty() ? "choose another " + flag.substr(2) : e.hint));
  return out;
}

// `s2` (a copy of the spec) with the NIC `nic` names (a rate or a catalog id) as its servers'
// NICs, as many a node as the plan has; the switch is chosen again where the plan's has no port
// at the new rate. --nic of what-if and of the replay's scenario.
std::optional<Diagnostic> swap_nic(Spec& s2, const Catalog& cat, const Plan& plan,
                                   const std::string& nic) {
  auto id = nic_for(nic, cat, plan);
  if (!id) {
    std::vector<std::string> ids;
    for (const auto& [nic_id, n] : cat.nics) ids.push_back(nic_id);
    const std::string close = did_you_mean(nic, ids);
    return Diagnostic::flag(
        "--nic",
        fmt::format("no {} NIC in the catalog matches '{}'", technology_name(plan.technology), nic),
        close.empty() ? "give a rate such as 800G or a catalog id such as cx8-800g"
                      : close + " Or give a rate such as 800G");
  }
  s2.cluster.nic = *id;
  s2.cluster.nics_per_node = plan.nics_per_node;
  // The switch is chosen again where the plan's has no port at the new rate, or, on InfiniBand,
  // where its lanes are slower than the new NIC's (the planner's lane check).
  const Nic& n = cat.nics.at(*id);
  if (plan.sw.ports_at(n.rate_gbps / s2.fabric.planes) == 0 ||
      !nic_meets_switch_lanes(n, plan.sw, plan.technology, s2.fabric.planes))
    s2.fabric.switch_id = "auto";
  return std::nullopt;
}

// The in-network reduction's tree root of every rail (rail by rail; a rail's plane is rail %
// planes, as the collectives' builder takes it).
std::vector<int> reduction_roots(const Fabric& f) {
  std::vector<int> out;
  for (int rail = 0; rail < f.nics_per_node(); ++rail)
    out.push_back(f.reduction_root(rail % std::max(1, f.planes()), rail));
  return out;
}

// After failures: the rails whose SHARP tree the Aggregation Manager now roots on another switch
// (Fabric::reduction_root), one change line.
bool note_rerooted_trees(const std::vector<int>& before, const Fabric& f, const Names& n,
                         std::vector<std::string>& changes) {
  std::map<int, std::string> name;
  for (const auto& [device, v] : n.vertex) name.emplace(v, device);
  auto device = [&](int v) {
    auto it = name.find(v);
    return it == name.end() ? fmt::format("switch {}", v) : it->second;
  };
  const std::vector<int> after = reduction_roots(f);
  std::string moved;
  for (size_t rail = 0; rail < before.size() && rail < after.size(); ++rail)
    if (before[rail] >= 0 && after[rail] != before[rail])
      moved += fmt::format("{}rail {} {} -> {}", moved.empty() ? "" : ", ", rail,
                           device(before[rail]), device(after[rail]));
  if (!moved.empty())
    changes.push_back(
        "SHARP trees re-rooted (the Aggregation Manager builds a new job's tree on a root that "
        "still reaches every leaf): " +
        moved);
  return !moved.empty();
}

}  // namespace

std::vector<std::string> node_names(const Plan& plan, const Catalog& catalog,
                                    const Fabric& fabric) {
  const Names n = names_of(plan, catalog, fabric);
  std::vector<std::string> out(static_cast<size_t>(std::max(0, plan.nodes)));
  for (const auto& [name, index] : n.node)
    if (index >= 0 && index < plan.nodes) out[static_cast<size_t>(index)] = name;
  return out;
}

std::vector<Diagnostic> fail_parts(const Plan& plan, const Catalog& catalog, Fabric& fabric,
                                   const std::vector<std::string>& items,
                                   std::vector<std::string>& changes) {
  if (items.empty()) return {};
  const LinkNames ports(plan, catalog, fabric);
  return apply_failures(items, names_of(plan, catalog, fabric), ports, fabric, changes);
}

Result<WhatIfResult> what_if(const Spec& spec, const Catalog& cat, const Plan& plan,
                             const WhatIfOptions& o) {
  WhatIfResult out;
  const Fabric base = Fabric::build(plan, cat);
  out.baseline = measure("as planned", spec, plan, base, o.probe_bytes, o.memory_budget_bytes);

  // The scenario's plan: grown and/or with other NICs, same technology and switch if it fits.
  Spec s2 = spec;
  s2.fabric.technology = plan.technology;
  if (o.grow_nodes > 0) s2.cluster.nodes += o.grow_nodes;
  // The flag a plan of the changed spec that fails is said against: --nic, else --grow.
  const std::pair<std::string, std::string> changed_by =
      o.nic.empty() ? std::pair{std::string("--grow"), fmt::format("nodes=+{}", o.grow_nodes)}
                    : std::pair{std::string("--nic"), o.nic};
  if (!o.nic.empty())
    if (auto bad = swap_nic(s2, cat, plan, o.nic)) return *bad;
  if (o.grow_nodes > 0 || !o.nic.empty()) {
    if (s2.fabric.switch_id == "auto" && o.nic.empty()) s2.fabric.switch_id = plan.sw.id;
    s2.cluster.gpus_requested = 0;
    if (s2.workload) {
      auto& w = *s2.workload;
      w.parallelism.dp = 0;  // the extra GPUs join data parallelism
      const long long model = 1LL * w.parallelism.tp * w.parallelism.pp * w.parallelism.cp;
      const long long gpus = 1LL * s2.cluster.nodes * s2.cluster.gpus_per_node;
      if (w.global_batch > 0 && gpus % model == 0) {
        // Keep whole microbatches per replica: the batch rounds up to the new data parallelism.
        const long long unit = gpus / model * w.micro_batch;
        const long long gb = (w.global_batch + unit - 1) / unit * unit;
        if (gb != w.global_batch)
          out.changes.push_back(
              fmt::format("global batch {} -> {} (whole microbatches on {} "
                          "replicas)",
                          w.global_batch, gb, gpus / model));
        w.global_batch = static_cast<int>(gb);
      }
    }
    auto errs = validate_spec(s2, cat);
    if (!errs.empty()) return as_flag_errors(errs, changed_by.first, changed_by.second);
  }
  auto p2 = (o.grow_nodes > 0 || !o.nic.empty()) ? make_plan(s2, cat) : Result<Plan>(plan);
  if (!p2) return as_flag_errors(p2.errors(), changed_by.first, changed_by.second);
  Fabric f2 = Fabric::build(*p2, cat);
  if (o.grow_nodes > 0)
    out.changes.push_back(fmt::format(
        "grow by {} node{}: {} -> {} switches, network capex {} -> {}, top-tier ports free "
        "{:.0f}% -> {:.0f}%{}",
        o.grow_nodes, o.grow_nodes == 1 ? "" : "s", plan.switch_total, p2->switch_total,
        units::format_usd(plan.bom.network_capex_usd), units::format_usd(p2->bom.network_capex_usd),
        100 * plan.spine_ports_free_fraction, 100 * p2->spine_ports_free_fraction,
        p2->topo.tiers <= plan.topo.tiers ? ""
        : plan.topo.tiers == 1
            ? " (needs another tier: one switch no longer holds every node; the share free is "
              "the new top tier's)"
            : " (needs another tier: the top tier is full; the share free is the new top "
              "tier's)"));
  if (!o.nic.empty()) out.changes.push_back(nic_change(plan, *p2));
  const Names names = names_of(*p2, cat, f2);
  const std::vector<int> roots =
      p2->in_network_reduction ? reduction_roots(f2) : std::vector<int>{};
  const LinkNames ports(*p2, cat, f2);
  auto errs = apply_failures(o.fail, names, ports, f2, out.changes);
  const bool rerooted =
      !roots.empty() && errs.empty() && note_rerooted_trees(roots, f2, names, out.changes);
  auto more = apply_degrades(o.degrade, names, f2, out.changes);
  errs.insert(errs.end(), more.begin(), more.end());
  std::vector<double> speed;
  more = parse_slow(o.slow, names, p2->nodes, speed, out.changes);
  errs.insert(errs.end(), more.begin(), more.end());
  // A straggler slows the training step: without one to time, --slow would change nothing.
  if (!o.slow.empty() && !spec.workload)
    errs.push_back(Diagnostic::flag(
        "--slow", "a straggler slows the training step, and the spec has no workload: section",
        "add workload: (as in examples/seed-70b-1024.yaml), or leave --slow out"));
  if (!errs.empty()) return errs;
  // Every node down leaves no GPU to run the job on: the scenario has no figures (its one
  // node's NVLink would otherwise run the collectives as if nothing had failed).
  const std::set<int> down = failed_nodes(o.fail, names);
  const bool none_left = !down.empty() && static_cast<int>(down.size()) >= p2->nodes;
  const std::string none_left_why =
      p2->nodes == 1 ? "no GPUs left: the cluster's only node failed"
                     : fmt::format("no GPUs left: all {} nodes failed", p2->nodes);
  if (none_left && o.links)
    return Diagnostic::flag("--links",
                            none_left_why + ", so the scenario carries no traffic to write",
                            "leave --links out, or fail fewer nodes");
  out.scenario =
      none_left ? not_run("scenario", s2, *p2, none_left_why)
                : measure("scenario", s2, *p2, f2, o.probe_bytes, o.memory_budget_bytes, speed);
  if (out.scenario.step && !o.slow.empty() && out.scenario.step->straggler_node >= 0)
    for (const auto& [name, node] : names.node)
      if (node == out.scenario.step->straggler_node)
        out.changes.push_back(fmt::format(
            "the step waits for its slowest member: {} (pipeline stage {}) paces the step, "
            "+{} of compute",
            name, out.scenario.step->straggler_stage + 1,
            units::format_seconds(out.scenario.step->straggler_s)));
  // Which nodes lost what: a rail with no plane left cuts the node off from it (the running
  // job's connections through it fail); a lost plane only degrades it.
  std::vector<int> cut;
  // Restarted, NCCL leaves the ports that are down out (net_ib/init.cc@v2.29.7-1:280) and its
  // search maps their GPUs to the node's NICs that are up: each dead NIC's traffic goes through
  // one of them (Fabric::send_through), chosen below. A node with no NIC up has no network at all.
  std::vector<std::pair<int, int>> through;  // (dead NIC, the NIC it sends through)
  size_t downed = 0, bare = 0;  // cut-off nodes that are down, and those with no NIC left
  for (const auto& [name, node] : names.node) {
    AffectedNode a{name, "", {}, {}};
    std::vector<int> dead_rails, live_rails;
    for (int r = 0; r < f2.nics_per_node(); ++r) {
      int alive = 0;
      for (int p = 0; p < f2.planes(); ++p) {
        const int nic = f2.nic(node, r);
        const int up = f2.nic_to_leaf(nic, p);
        const bool dead = up < 0 || f2.links()[up].failed || f2.links()[Fabric::reverse(up)].failed;
        if (dead)
          a.lost.push_back(f2.planes() > 1 ? fmt::format("nic{}.p{}", r, p + 1)
                                           : fmt::format("nic{}", r));
        else
          ++alive;
      }
      (alive == 0 ? dead_rails : live_rails).push_back(r);
    }
    if (a.lost.empty()) continue;
    const bool cut_off = !dead_rails.empty();
    a.state = cut_off ? "cut off" : "degraded";
    if (cut_off) {
      cut.push_back(node);
      if (down.count(node))
        ++downed;
      else if (live_rails.empty())
        ++bare;
      else {
        // Spread over the live NICs: the one carrying the fewest dead NICs' GPUs so far, then
        // the nearest by index, the lower first (two dead NICs do not both land on one).
        std::map<int, int> carried;
        for (int r : dead_rails) {
          int best = live_rails.front();
          for (int l : live_rails)
            if (std::make_pair(carried[l], std::abs(l - r)) <
                std::make_pair(carried[best], std::abs(best - r)))
              best = l;
          ++carried[best];
          through.emplace_back(f2.nic(node, r), f2.nic(node, best));
          a.sends_through.push_back(fmt::format("nic{} -> nic{}", r, best));
        }
      }
    }
    out.affected.push_back(a);
  }
  // The job restarted on every node, each dead NIC's GPUs sending through another NIC.
  std::optional<Fabric> f_restart;
  if (!through.empty() && downed == 0 && bare == 0) {
    f_restart = f2;
    for (const auto& [nic, via] : through) f_restart->send_through(nic, via);
    out.restarted = measure("restarted, ports left out", s2, *p2, *f_restart, o.probe_bytes,
                            o.memory_budget_bytes, speed);
  }
  // --links: the scenario's all_reduce traffic; where the scenario cannot run (a node cut off
  // from a rail), the restarted job's, said so; where neither runs, nothing, with the reason.
  if (o.links) {
    SimOptions so;
    so.memory_budget_bytes = o.memory_budget_bytes;
    auto traffic_on = [&](const Fabric& f) -> Result<CollectiveTraffic> {
      auto m = CollectiveModel::build(f, *p2, so);
      if (!m) return m.errors();
      return collective_traffic(f, *p2, so, *m, o.probe_bytes);
    };
    auto t = traffic_on(f2);
    if (t) {
      out.links = std::make_shared<const WhatIfLinks>(WhatIfLinks{*p2, f2, std::move(*t)});
    } else if (f_restart) {
      auto r = traffic_on(*f_restart);
      if (!r) return r.errors();
      out.links = std::make_shared<const WhatIfLinks>(WhatIfLinks{*p2, *f_restart, std::move(*r)});
      out.links_note =
          "the scenario's all_reduce cannot run (nodes cut off from a rail): the links are the "
          "restarted job's, its ports left out";
    } else {
      out.links_note =
          "not written: the scenario's all_reduce cannot run (" + t.errors().front().message + ")";
    }
  }
  // Dropping the cut-off nodes: the job on the others (data parallelism shrinks).
  std::string dropped_batch;  // the global batch's change, where whole microbatches move it
  if (!cut.empty() && p2->nodes - static_cast<int>(cut.size()) >= 1) {
    Spec s3 = s2;
    s3.cluster.nodes = p2->nodes - static_cast<int>(cut.size());
    s3.cluster.gpus_requested = 0;  // a spec that gave `gpus:` would otherwise restore them
    s3.fabric.switch_id = p2->sw.id;
    if (s3.workload) {
      s3.workload->parallelism.dp = 0;
      const auto& par = s3.workload->parallelism;
      const long long model = 1LL * par.tp * par.pp * par.cp;
      auto gpus = [&] { return 1LL * s3.cluster.nodes * s3.cluster.gpus_per_node; };
      // Keep whole model replicas: drop nodes until the GPUs divide by tp*pp*cp.
      while (s3.cluster.nodes > 1 && gpus() % model != 0) --s3.cluster.nodes;
      const long long unit = gpus() / model * s3.workload->micro_batch;
      if (unit > 0 && s3.workload->global_batch > 0) {
        // The largest batch of whole microbatches per replica.
        const int before = s3.workload->global_batch;
        s3.workload->global_batch =
            static_cast<int>(std::max<long long>(unit, s3.workload->global_batch / unit * unit));
        if (s3.workload->global_batch != before)
          dropped_batch = fmt::format("global batch {} -> {} (whole microbatches on {} replicas)",
                                      before, s3.workload->global_batch, gpus() / model);
      }
    }
    if (validate_spec(s3, cat).empty()) {
      if (auto p3 = make_plan(s3, cat)) {
        const Fabric f3 = Fabric::build(*p3, cat);
        out.dropped =
            measure("without the cut-off nodes", s3, *p3, f3, o.probe_bytes, o.memory_budget_bytes);
        // The job shrinks, the network does not: its switches and their price stay the
        // scenario's (a plan of fewer nodes would price a smaller network nobody bought).
        out.dropped->switches = out.scenario.switches;
        out.dropped->network_capex_usd = out.scenario.network_capex_usd;
        out.dropped->top_tier_free = out.scenario.top_tier_free;
        out.dropped->max_nodes_same_tiers = out.scenario.max_nodes_same_tiers;
        out.dropped->tiers = out.scenario.tiers;
      }
    }
  }
  // Differences worth a line.
  for (size_t i = 0; i < out.baseline.collectives.size(); ++i) {
    const auto& a = out.baseline.collectives[i];
    const auto& b = out.scenario.collectives[i];
    if (!b.runs)
      out.changes.push_back(fmt::format(
          "{}: cannot run{} ({})", b.op,
          out.scenario.nodes <= 1 ? "" : fmt::format(" on all {} nodes", out.scenario.nodes),
          b.note));
    else if (a.runs && std::fabs(b.busbw_gbs - a.busbw_gbs) > 0.005 * a.busbw_gbs) {
      // Where NCCL's choice changed, that is the cause to name: the algorithm the plan ran and
      // why it no longer can (a failed spine leaves an in-network tree without its switch).
      std::string why;
      if (!a.algorithm.empty() && a.algorithm != b.algorithm) {
        why = fmt::format("; NCCL's choice {} -> {}", a.algorithm, b.algorithm);
        for (const auto& [alg, reason] : b.unavailable)
          if (alg == a.algorithm) why += fmt::format(" ({} {})", alg, reason);
      }
      out.changes.push_back(fmt::format("{} busbw at {}: {:.1f} -> {:.1f} GB/s ({:+.0f}%){}", b.op,
                                        units::format_bytes(o.probe_bytes), a.busbw_gbs,
                                        b.busbw_gbs, 100 * (b.busbw_gbs / a.busbw_gbs - 1), why));
    }
  }
  if (out.baseline.step && !out.scenario.step)
    out.changes.push_back(fmt::format("training step: cannot run{} ({})",
                                      out.scenario.nodes <= 1 ? "" : " on all nodes",
                                      out.scenario.step_note));
  if (out.baseline.step && out.scenario.step)
    out.changes.push_back(fmt::format(
        "step time {} -> {} ({})", units::format_seconds(out.baseline.step->step_time_s),
        units::format_seconds(out.scenario.step->step_time_s),
        percent_change(out.scenario.step->step_time_s / out.baseline.step->step_time_s)));
  if (none_left) {
    std::string which;
    for (const auto& [name, node] : names.node)
      if (down.count(node)) which += (which.empty() ? "" : ", ") + name;
    out.recommendation = fmt::format(
        "the job cannot run: {}, so no GPUs are left; replace {} (or plan more nodes) before it "
        "can run again (guide §7)",
        p2->nodes == 1 ? "the cluster's only node (" + which + ") failed"
                       : fmt::format("all {} nodes failed", p2->nodes),
        p2->nodes == 1 ? "it" : "them");
  } else if (!cut.empty()) {
    // A port that goes down fails the running job's connections through it (NCCL aborts the
    // communicator): the job restarts, either on every node with the ports left out (NCCL keeps
    // only active ports, transport/net_ib/init.cc@v2.29.7-1:280, and those GPUs send through
    // another NIC: out.restarted) or without the nodes (out.dropped). Each is priced; the
    // throughput (tokens/s) chooses, as a smaller batch makes a shorter step of fewer tokens.
    const StepResult* base_step = out.baseline.step ? &*out.baseline.step : nullptr;
    auto step_terms = [&](const WhatIfSide& side, const std::string& batch) {
      std::string t;
      if (!side.step || !base_step) return t;
      const StepResult& b = *side.step;
      t += fmt::format(", step time {} ({})", units::format_seconds(b.step_time_s),
                       percent_change(b.step_time_s / base_step->step_time_s));
      if (!batch.empty()) t += ", " + batch;
      if (base_step->tokens_per_s > 0 && b.tokens_per_s > 0)
        t += fmt::format(", throughput {} ({} -> {} tokens/s)",
                         percent_change(b.tokens_per_s / base_step->tokens_per_s),
                         units::format_count(base_step->tokens_per_s),
                         units::format_count(b.tokens_per_s));
      return t;
    };
    // What happened to the nodes: down (--fail node:), without any NIC, or cut off from a rail.
    const size_t railed = cut.size() - downed - bare;
    std::vector<std::string> what;
    if (railed > 0)
      what.push_back(
          fmt::format("{} node{} cut off from a rail", railed, railed > 1 ? "s are" : " is"));
    if (downed > 0)
      what.push_back(fmt::format("{} node{} down", downed, downed > 1 ? "s are" : " is"));
    if (bare > 0)
      what.push_back(fmt::format("{} node{} no NIC left", bare, bare > 1 ? "s have" : " has"));
    const char* why_stops = railed > 0   ? "NCCL aborts on the port's errors"
                            : downed > 0 ? "its ranks there are gone"
                                         : "its ranks there cannot be reached";
    // Every node cut off: dropping them leaves nothing to run on.
    const bool all_cut = static_cast<int>(cut.size()) >= p2->nodes;
    const char* them = cut.size() > 1 ? "them" : "it";
    std::string rec =
        fmt::format("{}: the running job stops ({})", fmt::join(what, ", "), why_stops);
    if (all_cut && !out.restarted) {
      rec +=
          " and cannot run again until the failed parts are replaced: no node keeps a path to "
          "the others (guide §7)";
    } else if (out.restarted) {
      rec += " and restarts (guide §7)";
      std::string bw;
      for (size_t i = 0; i < out.baseline.collectives.size(); ++i) {
        const auto& a = out.baseline.collectives[i];
        const auto& b = out.restarted->collectives[i];
        if (a.runs && b.runs && a.op == "all_reduce")
          bw = fmt::format(", all_reduce {:.1f} -> {:.1f} GB/s", a.busbw_gbs, b.busbw_gbs);
      }
      const bool ports = through.size() > 1;
      rec += fmt::format(
          ": on every node, with the port{} that {} down left out and {} GPUs sending through "
          "another NIC of {} node{}{}{}",
          ports ? "s" : "", ports ? "are" : "is", ports ? "their" : "its",
          cut.size() > 1 ? "their" : "its", cut.size() > 1 ? "s" : "", bw,
          step_terms(*out.restarted, ""));
      if (all_cut)
        rec += fmt::format("; taking {} out would leave no GPUs", them);
      else
        rec += fmt::format("; or take {} out of the job", them);
    } else {
      rec += fmt::format(" and restarts (guide §7) without {}", them);
      if (railed > 0)
        rec += fmt::format(
            " (the {} cut off from a rail could stay on {} other NICs: not priced beside a node "
            "that is down or has no NIC)",
            railed > 1 ? "nodes" : "node", railed > 1 ? "their" : "its");
    }
    if (out.dropped) {
      rec += fmt::format(": {} GPUs remain ({:.1f}% fewer)", out.dropped->gpus,
                         100.0 * (1 - static_cast<double>(out.dropped->gpus) / out.scenario.gpus));
      rec += step_terms(*out.dropped, dropped_batch);
    }
    if (out.restarted && out.dropped && out.restarted->step && out.dropped->step &&
        out.restarted->step->tokens_per_s > 0 && out.dropped->step->tokens_per_s > 0)
      rec += out.restarted->step->tokens_per_s >= out.dropped->step->tokens_per_s
                 ? fmt::format(". Keeping the node{} trains faster", cut.size() > 1 ? "s" : "")
                 : fmt::format(". Taking {} out trains faster", them);
    out.recommendation = rec;
  } else if (!out.affected.empty()) {
    out.recommendation =
        "no node is cut off: the job keeps running on fewer paths (degraded bandwidth above)";
  } else if (!o.fail.empty()) {
    // A collective that ran and no longer can, with every node's own links up: the fabric
    // between them is split (every path between some units failed).
    std::string stopped;
    for (size_t i = 0; i < out.baseline.collectives.size() && i < out.scenario.collectives.size();
         ++i)
      if (out.baseline.collectives[i].runs && !out.scenario.collectives[i].runs)
        stopped += (stopped.empty() ? "" : ", ") + out.baseline.collectives[i].op;
    // An algorithm the plan ran that no longer has a path (NVLS over SHARP without its spine)
    // is the loss to name: re-routing keeps every node, not that algorithm.
    std::string lost;
    for (size_t i = 0; i < out.baseline.collectives.size(); ++i) {
      const auto& a = out.baseline.collectives[i];
      const auto& b = out.scenario.collectives[i];
      if (b.runs && !a.algorithm.empty() && a.algorithm != b.algorithm &&
          lost.find(a.algorithm) == std::string::npos)
        lost += (lost.empty() ? "" : ", ") + a.algorithm;
    }
    // Whether the plan's job ran its reductions in the switches (SHARP: CollNet, NVLS across
    // nodes), whose trees a failed root takes with it.
    const bool uses_sharp =
        plan.in_network_reduction && plan.nodes > 1 &&
        std::any_of(out.baseline.collectives.begin(), out.baseline.collectives.end(),
                    [](const CollectiveProbe& a) {
                      return a.algorithm == "collnet" || a.algorithm == "collnet_chain" ||
                             a.algorithm == "nvls";
                    });
    // Re-routed is not unchanged: a collective the failure slows by more than the noise of
    // the figures is named, and why (the switches the failed links joined keep sending their
    // share over the links left: per-flow ECMP and the model's adaptive routing alike).
    std::string slower;
    for (size_t i = 0; i < out.baseline.collectives.size(); ++i) {
      const auto& a = out.baseline.collectives[i];
      const auto& b = out.scenario.collectives[i];
      if (a.runs && b.runs && a.busbw_gbs > 0 && b.busbw_gbs < a.busbw_gbs * (1 - kWhatIfSlower))
        slower += fmt::format("{}{} {}", slower.empty() ? "" : ", ", a.op,
                              percent_change(b.busbw_gbs / a.busbw_gbs));
    }
    if (!slower.empty())
      slower = fmt::format(
          ", at a cost: {} busbw (the switches the failed links joined keep their share of the "
          "traffic on the links left); replace the part to get it back",
          slower);
    out.recommendation =
        !stopped.empty()
            ? fmt::format(
                  "no node lost its own link, but the fabric no longer connects every node to "
                  "every other ({} cannot run, see above): the failed switches or links were "
                  "every path between some of them; replace them before the job can run on all "
                  "nodes",
                  stopped)
        : lost.empty() && rerooted && uses_sharp
            ? "no node lost a link and the fabric re-routes, but the running job's in-network "
              "reductions on the trees rooted at the failed switch fail: it stops; restarted, it "
              "gets trees on roots that reach every leaf (the figures above)"
        : lost.empty()
            ? "no node lost a link: the fabric re-routes around the failure" + slower
            : fmt::format(
                  "no node lost a link and the fabric re-routes, but NCCL falls back from "
                  "{} (see above): replace the failed part to get it back",
                  lost);
  } else if (!o.nic.empty() && o.degrade.empty() && o.slow.empty() && p2->nic.id == plan.nic.id &&
             p2->sw.id == plan.sw.id) {
    out.recommendation = fmt::format(
        "nothing to weigh: {} is the plan's own NIC; give another rate or a catalog id "
        "(e.g. --nic 800G)",
        plan.nic.id);
  } else if (!o.nic.empty() && o.degrade.empty() && o.slow.empty()) {
    // Faster NICs alone: what they cost against what they buy, in the run's money where the spec
    // says how long it trains (the GPU-hours saved), else in the step.
    const double capex = p2->bom.network_capex_usd - plan.bom.network_capex_usd;
    std::string rec = fmt::format("{} NICs: network capex {}{}", p2->nic.id, capex >= 0 ? "+" : "-",
                                  units::format_usd(std::abs(capex)));
    if (out.baseline.step && out.scenario.step) {
      const StepResult &a = *out.baseline.step, &b = *out.scenario.step;
      rec += " for a step " + percent_change(b.step_time_s / a.step_time_s);
      if (a.cost_to_train_usd > 0 && b.cost_to_train_usd > 0) {
        const double saved = a.cost_to_train_usd - b.cost_to_train_usd;
        rec += fmt::format("; the training run's GPU time {} {} ({} to train): {}",
                           saved >= 0 ? "saves" : "costs", units::format_usd(std::abs(saved)),
                           units::format_seconds_pair(a.time_to_train_s, b.time_to_train_s),
                           saved > capex ? "they pay for themselves in one run"
                                         : "they do not pay for themselves in one run");
      } else {
        rec +=
            " (give workload.steps or workload.tokens to weigh it against the training run's GPU "
            "time)";
      }
    }
    out.recommendation = rec;
  } else if (!o.degrade.empty() || !o.slow.empty()) {
    std::string rec;
    if (!o.degrade.empty())
      rec =
          "a degraded part slows every collective that crosses it (a ring is paced by its "
          "slowest hop): reseat or replace the optic or cable of a link that trained low, "
          "drain a slow switch (guide §6)";
    if (!o.slow.empty())
      rec += std::string(rec.empty() ? "" : "; ") +
             "a synchronous step waits for its slowest rank: find the straggler (its GPU "
             "clocks, thermals, HBM errors) and take it out of the job or replace it";
    if (out.baseline.step && out.scenario.step)
      rec += " (step time " +
             percent_change(out.scenario.step->step_time_s / out.baseline.step->step_time_s) + ")";
    out.recommendation = rec;
  }
  return out;
}

}  // namespace gf

namespace gf {

Result<ScenarioFabric> scenario_fabric(const Spec& spec, const Catalog& cat, const Plan& plan,
                                       const WhatIfOptions& o) {
  // The same changes what_if() makes for --nic, --fail and --degrade, without the measuring.
  ScenarioFabric out{plan, Fabric::build(plan, cat), {}};
  if (!o.nic.empty()) {
    Spec s2 = spec;
    s2.fabric.technology = plan.technology;
    if (auto bad = swap_nic(s2, cat, plan, o.nic)) return *bad;
    auto errs = validate_spec(s2, cat);
    if (!errs.empty()) return as_flag_errors(errs, "--nic", o.nic);
    auto p2 = make_plan(s2, cat);
    if (!p2) return as_flag_errors(p2.errors(), "--nic", o.nic);
    out.changes.push_back(nic_change(plan, *p2));
    out.plan = *p2;
    out.fabric = Fabric::build(out.plan, cat);
  }
  const Names names = names_of(out.plan, cat, out.fabric);
  const LinkNames ports(out.plan, cat, out.fabric);
  auto errs = apply_failures(o.fail, names, ports, out.fabric, out.changes);
  auto more = apply_degrades(o.degrade, names, out.fabric, out.changes);
  errs.insert(errs.end(), more.begin(), more.end());
  if (!errs.empty()) return errs;
  return out;
}

}  // namespace gf
