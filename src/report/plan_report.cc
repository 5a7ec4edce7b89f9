#include "report/plan_report.h"

#include <fmt/format.h>

#include <cmath>

#include "common/output.h"
#include "units/units.h"

namespace gf {
namespace {

using units::format_power;
using units::format_usd;

// Rounds for stable, readable JSON (money to cents, ratios to 4 decimals).
double round_to(double v, double step) { return std::round(v / step) * step; }

std::string topology_line(const Plan& p) {
  const Topology& t = p.topo;
  std::string s =
      fmt::format("{} ({} tier{})", topology_kind_name(t.kind), t.tiers, t.tiers > 1 ? "s" : "");
  if (t.rail_optimized && t.kind != TopologyKind::kSingle) s += ", rail-optimized";
  if (t.planes > 1) s += fmt::format(", {} planes", t.planes);
  if (t.kind != TopologyKind::kSingle)
    s += fmt::format(", {} scalable unit{} of {} nodes", t.units, t.units > 1 ? "s" : "",
                     t.nodes_per_unit);
  if (t.kind == TopologyKind::kClos3) s += fmt::format(", {} pods", t.pods);
  if (t.kind == TopologyKind::kDragonfly) s += fmt::format(", {} groups", t.pods);
  if (t.kind != TopologyKind::kSingle)
    s += fmt::format(", {:.3g}:1 at the leaf", t.oversubscription);
  return s;
}

}  // namespace

nlohmann::json items_json(const std::vector<BomItem>& bom) {
  nlohmann::json items = nlohmann::json::array();
  for (const auto& it : bom)
    items.push_back({{"category", it.category},
                     {"id", it.id},
                     {"name", it.name},
                     {"role", it.role},
                     {"qty", it.qty},
                     {"unit_usd", it.unit_usd},
                     {"unit_w", it.unit_w},
                     {"source", it.source}});
  return items;
}

nlohmann::json networks_json(const Plan& p) {
  if (!p.networks) return nullptr;
  const NetworksPlan& n = *p.networks;
  nlohmann::json nets = nlohmann::json::array();
  for (const auto& x : n.nets)
    nets.push_back({{"network", network_kind_name(x.kind)},
                    {"switch", x.sw.id},
                    {"switch_reason", x.switch_reason},
                    {"spine_switch", x.spines > 0 ? x.spine_sw.id : ""},
                    {"port_gbps", x.port_gbps},
                    {"uplink_gbps", x.uplink_gbps},
                    {"ports_per_node", x.ports_per_node},
                    {"tiers", x.tiers},
                    {"leaves", x.leaves},
                    {"spines", x.spines},
                    {"switches", x.switches()},
                    {"host_links", x.host_links},
                    {"leaf_spine_links", x.leaf_spine_links},
                    {"isl_links", x.isl_links},
                    {"uplinks_to_compute", x.uplinks_to_compute},
                    {"uplinks_to_inband", x.uplinks_to_inband},
                    {"capex_usd", round_to(x.bom.capex_usd, 0.01)},
                    {"power_w", round_to(x.bom.power_w, 0.1)},
                    {"items", items_json(x.bom.items)}});
  return {{"isolation", isolation_name(n.isolation)},
          {"storage_nodes", n.storage_nodes},
          {"storage_node_gbps", n.storage_node_gbps},
          {"storage_target_gbs_per_node", round_to(n.storage_target_gbs_per_node, 1e-3)},
          {"racks", n.racks},
          {"pdus", n.pdus},
          {"capex_usd", round_to(n.capex_usd, 0.01)},
          {"power_w", round_to(n.power_w, 0.1)},
          {"cluster_capex_usd", round_to(p.bom.capex_usd + n.capex_usd, 0.01)},
          {"cluster_power_w", round_to(p.bom.power_w + n.power_w, 0.1)},
          {"nets", nets}};
}

std::string networks_text(const Plan& p) {
  if (!p.networks) return "";
  const NetworksPlan& n = *p.networks;
  std::vector<std::vector<std::string>> cols;
  cols.push_back({"", "switch", "ports", "tiers", "switches", "links", "capex", "power"});
  std::string sw = fmt::format("{}", p.leaf_total);
  if (p.spine_total) sw += fmt::format("+{}", p.spine_total);
  if (p.core_total) sw += fmt::format("+{}", p.core_total);
  cols.push_back({"compute", p.sw.id, fmt::format("{:g}G", p.topo.lane_gbps),
                  std::to_string(p.topo.tiers), sw, std::to_string(p.link_total),
                  format_usd(p.bom.network_capex_usd), format_power(p.bom.network_power_w)});
  for (const auto& x : n.nets) {
    std::string xs = std::to_string(x.leaves);
    if (x.spines) xs += fmt::format("+{}", x.spines);
    std::string id = x.sw.id;
    if (x.spines && x.spine_sw.id != x.sw.id) id += "/" + x.spine_sw.id;
    cols.push_back({network_kind_name(x.kind), id, fmt::format("{:g}G", x.port_gbps),
                    std::to_string(x.tiers), xs, std::to_string(x.links()),
                    format_usd(x.bom.capex_usd), format_power(x.bom.power_w)});
  }
  std::string s =
      fmt::format("  networks (isolation: {}{})\n", isolation_name(n.isolation),
                  n.storage_nodes ? fmt::format(", {} storage servers", n.storage_nodes) : "");
  for (size_t row = 0; row < cols[0].size(); ++row) {
    s += fmt::format("    {:<10}", cols[0][row]);
    for (size_t c = 1; c < cols.size(); ++c) s += fmt::format(" {:>16}", cols[c][row]);
    s += "\n";
  }
  s += fmt::format("  {:<14} {} capex, {} (compute fabric and servers {}, other networks {})\n",
                   "cluster+nets", format_usd(p.bom.capex_usd + n.capex_usd),
                   format_power(p.bom.power_w + n.power_w), format_usd(p.bom.capex_usd),
                   format_usd(n.capex_usd));
  return s;
}

nlohmann::json checkpoint_json(const CheckpointEstimate& c) {
  nlohmann::json j = {{"bytes", c.bytes},           {"bytes_per_param", c.bytes_per_param},
                      {"write_s", c.write_s},       {"write_gbs", c.write_Bps / 1e9},
                      {"bottleneck", c.bottleneck}, {"converged", c.converged}};
  if (c.converged) {
    j["allreduce_alone_s"] = c.allreduce_alone_s;
    j["allreduce_shared_s"] = c.allreduce_shared_s;
    j["allreduce_bandwidth_share"] = round_to(c.allreduce_share, 1e-4);
    j["dp_traffic"] = c.dp_traffic;
    j["write_shared_s"] = c.write_shared_s;
    j["step_cost_s"] = c.step_cost_s;
  }
  return j;
}

std::string checkpoint_text(const CheckpointEstimate& c) {
  if (c.write_Bps <= 0) return "";
  std::string s =
      fmt::format("  {:<14} {} ({:g} B/param) written in {} at {:.0f} GB/s, bound by the {}\n",
                  "checkpoint", units::format_bytes(c.bytes), c.bytes_per_param,
                  units::format_seconds(c.write_s), c.write_Bps / 1e9, c.bottleneck);
  if (c.converged)
    s += fmt::format(
        "  {:<14} on the compute NICs (vlan), {}: {:.0f}% of the bandwidth it has alone "
        "while the checkpoint is written ({} -> {}), the write takes {}; +{} a step meanwhile\n",
        "", c.dp_traffic, 100 * c.allreduce_share, units::format_seconds(c.allreduce_alone_s),
        units::format_seconds(c.allreduce_shared_s), units::format_seconds(c.write_shared_s),
        units::format_seconds(c.step_cost_s));
  return s;
}

nlohmann::json plan_json(const Plan& p) {
  using nlohmann::json;
  const Topology& t = p.topo;
  json items = items_json(p.bom.items);
  json cands = json::array();
  for (const auto& c : p.candidates) {
    json j = {{"technology", technology_name(c.technology)},
              {"switch", c.switch_id},
              {"chosen", c.chosen}};
    if (c.note.empty()) {
      j["topology"] = c.topology;
      j["tiers"] = c.tiers;
      j["switches"] = c.switches;
      j["network_capex_usd"] = round_to(c.network_capex_usd, 0.01);
      j["network_power_w"] = round_to(c.network_power_w, 0.1);
    } else {
      j["unusable"] = c.note;
    }
    cands.push_back(j);
  }
  json out = {
      {"name", p.name},
      {"gpus", p.gpus},
      {"nodes", p.nodes},
      {"gpus_per_node", p.gpus_per_node},
      {"gpu", p.gpu.id},
      {"nic", {{"id", p.nic.id}, {"per_node", p.nics_per_node}, {"gbps", p.nic.rate_gbps}}},
      {"technology", technology_name(p.technology)},
      {"technology_reason", p.technology_reason},
      {"load_balancing", load_balancing_name(p.load_balancing)},
      {"in_network_reduction", p.in_network_reduction},
      {"topology",
       {{"kind", topology_kind_name(t.kind)},
        {"tiers", t.tiers},
        {"rail_optimized", t.rail_optimized},
        {"planes", t.planes},
        {"oversubscription", round_to(t.oversubscription, 1e-4)},
        {"scalable_units", t.units},
        {"nodes_per_unit", t.nodes_per_unit},
        {"leaves_per_unit", t.leaves_per_unit},
        {"lane_gbps", t.lane_gbps},
        {"radix", t.radix},
        {"leaf_down_ports", t.leaf_down},
        {"leaf_up_ports", t.leaf_up},
        {"pods", t.pods},
        {"spines_per_pod", t.spines_per_pod},
        {"global_links_per_group_pair", t.global_links_per_pair},
        {"max_endpoints_per_plane", t.max_endpoints}}},
      {"switch",
       {{"id", p.sw.id},
        {"radix", t.radix},
        {"port_gbps", t.lane_gbps},
        {"native_ports", p.sw.ports},
        {"native_port_gbps", p.sw.port_gbps},
        {"reason", p.switch_reason}}},
      {"switches",
       {{"leaf", p.leaf_total},
        {"spine", p.spine_total},
        {"core", p.core_total},
        {"total", p.switch_total}}},
      {"links",
       {{"node_leaf", p.node_leaf_total},
        {"leaf_spine", p.leaf_spine_total},
        {"spine_core", p.spine_core_total},
        {"total", p.link_total}}},
      {"bisection_gbps", p.bisection_gbps},
      {"growth",
       {{"top_tier_ports_free_fraction", round_to(p.spine_ports_free_fraction, 1e-4)},
        {"max_nodes_same_tiers", p.max_nodes_same_tiers}}},
      {"bom",
       {{"capex_usd", round_to(p.bom.capex_usd, 0.01)},
        {"power_w", round_to(p.bom.power_w, 0.1)},
        {"network_capex_usd", round_to(p.bom.network_capex_usd, 0.01)},
        {"network_power_w", round_to(p.bom.network_power_w, 0.1)},
        {"compute_capex_usd", round_to(p.bom.compute_capex_usd, 0.01)},
        {"network_usd_per_gpu", round_to(p.bom.network_usd_per_gpu, 0.01)},
        {"network_share_of_capex", round_to(p.bom.network_share, 1e-4)},
        {"items", items}}},
      {"candidates", cands},
      {"warnings", p.warnings},
      {"notes", p.notes},
  };
  // Only with a networks: section, so that a compute-only plan.json is what it always was.
  if (p.networks) out["networks"] = networks_json(p);
  return out;
}

std::string bom_csv(const Plan& p) {
  std::string out = "category,id,name,role,qty,unit_usd,unit_w,total_usd,total_w,source\n";
  for (const auto& it : p.bom.items)
    out += fmt::format("{},{},{},{},{},{:.2f},{:.1f},{:.2f},{:.1f},{}\n", it.category, it.id,
                       csv_field(it.name), csv_field(it.role), it.qty, it.unit_usd, it.unit_w,
                       it.unit_usd * it.qty, it.unit_w * it.qty, csv_field(it.source));
  // The other networks' lines follow the compute fabric's (their roles name the network).
  if (p.networks)
    for (const auto& x : p.networks->nets)
      for (const auto& it : x.bom.items)
        out += fmt::format("{},{},{},{},{},{:.2f},{:.1f},{:.2f},{:.1f},{}\n", it.category, it.id,
                           csv_field(it.name), csv_field(it.role), it.qty, it.unit_usd, it.unit_w,
                           it.unit_usd * it.qty, it.unit_w * it.qty, csv_field(it.source));
  return out;
}

std::string plan_text(const Plan& p) {
  std::string s;
  auto line = [&](const std::string& k, const std::string& v) {
    s += fmt::format("  {:<14} {}\n", k, v);
  };
  s += fmt::format("Plan {}: {} x {} GPUs = {} {} GPUs\n", p.name, p.nodes, p.gpus_per_node, p.gpus,
                   p.gpu.id);
  line("technology", technology_title(p.technology));
  line("why", p.technology_reason);
  line("NICs", fmt::format("{} x {} per node ({:g} Gbps each)", p.nics_per_node, p.nic.id,
                           p.nic.rate_gbps));
  line("topology", topology_line(p));
  line("switch",
       fmt::format("{} ({} x {:g}G ports as used)", p.sw.id, p.topo.radix, p.topo.lane_gbps));
  std::string sw = fmt::format("{} leaf", p.leaf_total);
  if (p.spine_total) sw += fmt::format(" + {} spine", p.spine_total);
  if (p.core_total) sw += fmt::format(" + {} core", p.core_total);
  line("switches", fmt::format("{} = {}", sw, p.switch_total));
  std::string ln = fmt::format("{} node-leaf", p.node_leaf_total);
  if (p.leaf_spine_total) ln += fmt::format(" + {} leaf-spine", p.leaf_spine_total);
  if (p.spine_core_total)
    ln += fmt::format(" + {} {}", p.spine_core_total,
                      p.topo.kind == TopologyKind::kDragonfly ? "global" : "spine-core");
  line("links", fmt::format("{} = {}", ln, p.link_total));
  // Both directions across the cut into halves (each half sending to the other at once): a
  // non-blocking fabric's equals every endpoint's line rate added up.
  line("bisection", units::format_bitrate(p.bisection_gbps * 1e9) + " (both directions)");
  line("load balance", load_balancing_name(p.load_balancing));
  line("in-network", p.in_network_reduction ? p.sw.in_network_reduction : "off");
  line("network",
       fmt::format("{} capex, {} ({} per GPU, {:.1f}% of cluster capex)",
                   format_usd(p.bom.network_capex_usd), format_power(p.bom.network_power_w),
                   format_usd(p.bom.network_usd_per_gpu), 100 * p.bom.network_share));
  line("cluster",
       fmt::format("{} capex, {}", format_usd(p.bom.capex_usd), format_power(p.bom.power_w)));
  if (p.topo.kind != TopologyKind::kSingle)
    line("growth", fmt::format("{:.0f}% of top-tier ports free; up to {} nodes without a new tier",
                               100 * p.spine_ports_free_fraction, p.max_nodes_same_tiers));
  s += networks_text(p);
  for (const auto& w : p.warnings) s += "  warning: " + w + "\n";
  for (const auto& n : p.notes) s += "  note: " + n + "\n";
  return s;
}

std::string plan_markdown(const Plan& p) {
  std::string s = fmt::format("# Fabric plan: {}\n\n", p.name);
  s += fmt::format("**{} x {} = {} {} GPUs**, {} x {} per node, **{}**, {}.\n\n", p.nodes,
                   p.gpus_per_node, p.gpus, p.gpu.id, p.nics_per_node, p.nic.id,
                   technology_title(p.technology), topology_line(p));
  s += "## Why\n\n";
  s += fmt::format(
      "- Technology: {}\n- Switch: {}\n- Load balancing: {}; in-network reduction: "
      "{}\n\n",
      p.technology_reason, p.switch_reason, load_balancing_name(p.load_balancing),
      p.in_network_reduction ? p.sw.in_network_reduction : "off");
  s += "## Fabric\n\n| | count |\n|---|---:|\n";
  s += fmt::format("| leaf switches | {} |\n| spine switches | {} |\n| core switches | {} |\n",
                   p.leaf_total, p.spine_total, p.core_total);
  s += fmt::format("| node-leaf links | {} |\n| leaf-spine links | {} |\n| {} links | {} |\n",
                   p.node_leaf_total, p.leaf_spine_total,
                   p.topo.kind == TopologyKind::kDragonfly ? "global" : "spine-core",
                   p.spine_core_total);
  s += fmt::format("| bisection bandwidth (both directions) | {} |\n\n",
                   units::format_bitrate(p.bisection_gbps * 1e9));
  s += "## Bill of materials\n\n| category | item | role | qty | unit | total | power | source |\n"
       "|---|---|---|---:|---:|---:|---:|---|\n";
  for (const auto& it : p.bom.items)
    s += fmt::format("| {} | {} | {} | {} | {} | {} | {} | {} |\n", it.category, it.id, it.role,
                     it.qty, format_usd(it.unit_usd), format_usd(it.unit_usd * it.qty),
                     format_power(it.unit_w * it.qty), it.source);
  s += fmt::format(
      "\nNetwork: **{}** ({} per GPU, {:.1f}% of cluster capex), {}. Cluster: **{}**, "
      "{}.\n\n",
      format_usd(p.bom.network_capex_usd), format_usd(p.bom.network_usd_per_gpu),
      100 * p.bom.network_share, format_power(p.bom.network_power_w), format_usd(p.bom.capex_usd),
      format_power(p.bom.power_w));
  if (p.networks) {
    s +=
        fmt::format("## Other networks (isolation: {})\n\n", isolation_name(p.networks->isolation));
    s += "| network | switch | ports | tiers | leaves | spines | links | capex | power |\n"
         "|---|---|---:|---:|---:|---:|---:|---:|---:|\n";
    for (const auto& x : p.networks->nets)
      s += fmt::format("| {} | {} | {:g}G | {} | {} | {} | {} | {} | {} |\n",
                       network_kind_name(x.kind), x.sw.id, x.port_gbps, x.tiers, x.leaves, x.spines,
                       x.links(), format_usd(x.bom.capex_usd), format_power(x.bom.power_w));
    s += "\n| category | item | role | qty | unit | total | power | source |\n"
         "|---|---|---|---:|---:|---:|---:|---|\n";
    for (const auto& x : p.networks->nets)
      for (const auto& it : x.bom.items)
        s += fmt::format("| {} | {} | {} | {} | {} | {} | {} | {} |\n", it.category, it.id, it.role,
                         it.qty, format_usd(it.unit_usd), format_usd(it.unit_usd * it.qty),
                         format_power(it.unit_w * it.qty), it.source);
    s += fmt::format("\nOther networks: **{}**, {}. Cluster with them: **{}**, {}.\n\n",
                     format_usd(p.networks->capex_usd), format_power(p.networks->power_w),
                     format_usd(p.bom.capex_usd + p.networks->capex_usd),
                     format_power(p.bom.power_w + p.networks->power_w));
  }
  s += "## Options evaluated\n\n| technology | switch | topology | switches | network capex |\n"
       "|---|---|---|---:|---:|\n";
  for (const auto& c : p.candidates) {
    if (!c.note.empty()) {
      s += fmt::format("| {} | {} | cannot: {} | | |\n", technology_name(c.technology), c.switch_id,
                       c.note);
      continue;
    }
    s += fmt::format("| {} | {}{} | {} | {} | {} |\n", technology_name(c.technology), c.switch_id,
                     c.chosen ? " (chosen)" : "", c.topology, c.switches,
                     format_usd(c.network_capex_usd));
  }
  if (!p.warnings.empty() || !p.notes.empty()) {
    s += "\n## Warnings and notes\n\n";
    for (const auto& w : p.warnings) s += "- **warning:** " + w + "\n";
    for (const auto& n : p.notes) s += "- " + n + "\n";
  }
  s += "\nCabling: `cabling.csv` (one row per link). Bill of materials: `bom.csv`.\n";
  return s;
}

nlohmann::json estimate_json(const Estimate& e) {
  // What was not asked for is null, not a 0 a script would read as a figure: the step's share
  // without a compute time, the run's hours without a number of steps.
  auto given = [](bool has, double v) { return has ? nlohmann::json(v) : nlohmann::json(nullptr); };
  const bool compute = e.compute_time_s > 0, run = e.steps > 0;
  return {{"params", e.params},
          {"bytes_per_param", e.bytes_per_param},
          {"gpus", e.gpus},
          {"collective", e.collective},
          {"payload_bytes", e.payload_bytes},
          {"traffic_factor", e.traffic_factor},
          {"traffic_bytes", e.traffic_bytes},
          {"traffic_bytes_simple", e.traffic_bytes_simple},
          {"link_bytes_per_s", e.link_bytes_per_s},
          {"comm_time_s", e.comm_time_s},
          {"comm_time_simple_s", e.comm_time_simple_s},
          {"comm_time_given", e.comm_time_given},
          {"link_comm_time_s", given(e.link_comm_time_s > 0, e.link_comm_time_s)},
          {"link_comm_time_simple_s", given(e.link_comm_time_s > 0, e.link_comm_time_simple_s)},
          {"compute_time_s", given(compute, e.compute_time_s)},
          {"comm_fraction", given(compute, e.comm_fraction)},
          {"steps", given(run, e.steps)},
          {"comm_hours", given(run, e.comm_hours)},
          {"total_hours", given(run && compute, e.total_hours)},
          {"notes", e.notes}};
}

std::string estimate_text(const Estimate& e) {
  std::string s;
  auto line = [&](const std::string& k, const std::string& v) {
    s += fmt::format("  {:<16} {}\n", k, v);
  };
  s += fmt::format("Communication estimate: {} of a {}-parameter model over {} GPUs\n",
                   e.collective, units::format_count(e.params), e.gpus);
  line("payload", fmt::format("{} ({} params x {:g} byte{})", units::format_bytes(e.payload_bytes),
                              units::format_count(e.params), e.bytes_per_param,
                              e.bytes_per_param == 1 ? "" : "s"));
  // The guide's rule of thumb is all_reduce's; the others' is their factor's limit.
  const bool guide = e.collective == "all_reduce";
  const std::string rule = guide ? "guide's rule" : "many GPUs' rule";
  // GB to a tenth, as the guide writes them; below a tenth of one, in the unit that shows it.
  auto gb = [](double bytes) {
    return bytes >= 0.05e9 ? fmt::format("{:.1f} GB", bytes / 1e9) : units::format_bytes(bytes);
  };
  line("traffic per GPU",
       fmt::format("{} (exact factor {} = {:.4f}); {} {:g} x payload = {}", gb(e.traffic_bytes),
                   traffic_factor_formula(e.collective), e.traffic_factor, rule,
                   traffic_factor_limit(e.collective), gb(e.traffic_bytes_simple)));
  if (e.link_bytes_per_s > 0)
    line("link", e.link_efficiency < 1 ? fmt::format("{} x {:g} = {:.3g} GB/s usable",
                                                     units::format_bitrate(e.link_bits_per_s),
                                                     e.link_efficiency, e.link_bytes_per_s / 1e9)
                                       : fmt::format("{} = {:.3g} GB/s usable",
                                                     units::format_bitrate(e.link_bits_per_s),
                                                     e.link_bytes_per_s / 1e9));
  if (!e.comm_time_given)
    line("comm per step",
         fmt::format("{:.3g} s ({}: {:.3g} s)", e.comm_time_s, rule, e.comm_time_simple_s));
  else
    line("comm per step", fmt::format("{:.3g} s (given with --comm-time)", e.comm_time_s));
  // Both a time and a link: the link's own time beside the given one, and the rate the given
  // time needs, so that neither figure is silently dropped.
  if (e.comm_time_given && e.link_comm_time_s > 0)
    line("at the link",
         fmt::format("{:.3g} s ({}: {:.3g} s); the given {:.3g} s needs {:.3g} GB/s a GPU, "
                     "{:.2g}x the link's usable {:.3g} GB/s",
                     e.link_comm_time_s, rule, e.link_comm_time_simple_s, e.comm_time_s,
                     e.traffic_bytes / e.comm_time_s / 1e9,
                     e.traffic_bytes / e.comm_time_s / e.link_bytes_per_s,
                     e.link_bytes_per_s / 1e9));
  if (e.compute_time_s > 0) {
    line("compute", fmt::format("{:.3g} s per step", e.compute_time_s));
    line("comm share", fmt::format("{:.1f}% of the step (no overlap)", 100 * e.comm_fraction));
  }
  if (e.steps > 0) {
    line("over the run", fmt::format("{} of communication in {} steps",
                                     e.comm_hours >= 1 ? fmt::format("{:.1f} h", e.comm_hours)
                                                       : units::format_seconds(e.comm_hours * 3600),
                                     units::format_count(e.steps)));
    if (e.compute_time_s > 0)
      line("total", fmt::format("{:.1f} h ({:.1f} days)", e.total_hours, e.total_hours / 24));
  }
  for (const auto& n : e.notes) s += "  note: " + n + "\n";
  return s;
}

}  // namespace gf
