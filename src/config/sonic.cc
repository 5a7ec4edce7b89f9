#include "config/sonic.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "config/frr.h"
#include "config/hosts.h"

namespace gf {
namespace {

const char* const kMap = "ROCE";
constexpr int kKiB = 1024;

std::string metres(double m) { return fmt::format("{:g}m", m); }

// The lossless and lossy queues of a port: 3 lossless (RoCE), CNPs in 6, the rest lossy.
constexpr const char* kLossyQueues[] = {"0-2", "4-6"};

struct Port {
  int port = 0;
  std::string description;
  double length_m = 0;
  bool used = true;
};

}  // namespace

Result<nlohmann::json> sonic_config_db(const Plan& plan, const Catalog& catalog,
                                       const AddressPlan& a, const SwitchAddress& sw) {
  using nlohmann::json;
  if (!plan.sw.sonic || !plan.sw.asic_vendor || plan.sw.serdes_lanes.empty())
    return Diagnostic::at_key(
        "fabric.switch",
        fmt::format("the catalog has no SONiC platform for {} (sonic, serdes_lanes, "
                    "asic_vendor)",
                    plan.sw.id),
        "add them to the switch's catalog entry from its sonic-buildimage device folder");
  const SonicPlatform& platform = *plan.sw.sonic;
  const BufferModel model = sonic_buffer_model(*plan.sw.asic_vendor);
  auto name = [&](int p) { return sonic_port_name(plan, p); };
  // Each routed port's cable: leaf-spine below a spine and on a leaf, spine-core above it.
  auto medium_m = [&](LinkKind k) { return link_medium(plan, catalog, k).length_m; };
  std::vector<Port> ports;
  const std::vector<SwitchPort> routed = a.ports_of(sw.name);
  for (const auto& r : routed) {
    const bool core_link = sw.role == "core" || (sw.role == "spine" && r.up);
    ports.push_back({r.port, "to " + r.peer + " " + name(r.peer_port),
                     medium_m(core_link ? LinkKind::kSpineCore : LinkKind::kLeafSpine)});
  }
  const HostSubnet* subnet = a.subnet_of(sw.name);
  for (const auto& h : a.hosts)
    if (h.leaf == sw.name)
      ports.push_back(
          {h.leaf_port, "to " + h.node + " " + h.netdev, medium_m(LinkKind::kNodeLeaf)});
  std::vector<int> used;
  for (const auto& p : ports) used.push_back(p.port);
  for (int p : cage_ports(plan, used))
    if (std::find(used.begin(), used.end(), p) == used.end())
      ports.push_back({p, "unused (a port of a broken-out cage)", 0, false});

  json db;
  json& meta = db["DEVICE_METADATA"]["localhost"];
  meta = {{"hostname", sw.name},
          {"bgp_asn", std::to_string(sw.asn)},
          {"type", sw.role == "leaf" ? "LeafRouter" : "SpineRouter"},
          {"docker_routing_config_mode", "split-unified"},
          {"buffer_model", buffer_model_name(model)},
          {"platform", platform.platform}};
  if (auto it = platform.hwsku.find(plan.topo.lane_gbps); it != platform.hwsku.end())
    meta["hwsku"] = it->second;
  // The seed the simulator hashed this switch with (fabric.ecmp_hash.seed). SONiC's orchagent
  // takes DEVICE_METADATA's ecmp_hash_seed over its per-role default (LeafRouter 10, SpineRouter
  // 25: one seed a tier) into SWITCH_TABLE's ecmp_hash_seed (sonic-buildimage
  // dockers/docker-orchagent/switch.json.j2@0860bc78, SAI_SWITCH_ATTR_ECMP_DEFAULT_HASH_SEED);
  // it is read when swss starts.
  meta["ecmp_hash_seed"] = std::to_string(sw.ecmp_seed);
  db["LOOPBACK_INTERFACE"]["Loopback0"] = json::object();
  db["LOOPBACK_INTERFACE"]["Loopback0|" + ipv4_str(sw.loopback) + "/32"] = json::object();
  const std::string speed = fmt::format("{:.0f}", plan.topo.lane_gbps * 1000);
  json dscp = json::object();
  for (int d = 0; d < 64; ++d) dscp[std::to_string(d)] = "0";
  dscp[std::to_string(kRoceDscp)] = std::to_string(kRocePriority);
  dscp[std::to_string(kCnpDscp)] = std::to_string(kCnpQueue);
  db["DSCP_TO_TC_MAP"][kMap] = dscp;
  // ECMP over the 5-tuple (SONiC generic hash, 202305+): RoCE v2 carries per-QP entropy in the
  // UDP source port (guide §4.2).
  db["SWITCH_HASH"]["GLOBAL"]["ecmp_hash"] =
      json::array({"SRC_IP", "DST_IP", "IP_PROTOCOL", "L4_SRC_PORT", "L4_DST_PORT"});
  json tcq = json::object(), tcpg = json::object(), pfcq = json::object();
  for (int tc = 0; tc < 8; ++tc) {
    tcq[std::to_string(tc)] = std::to_string(tc);
    tcpg[std::to_string(tc)] = tc == kRocePriority ? std::to_string(kRocePriority) : "0";
    pfcq[std::to_string(tc)] = std::to_string(tc);
  }
  db["TC_TO_QUEUE_MAP"][kMap] = tcq;
  db["TC_TO_PRIORITY_GROUP_MAP"][kMap] = tcpg;
  // The queue a received PFC frame of each priority pauses (SAI_PORT_ATTR_QOS_PFC_PRIORITY_TO_
  // QUEUE_MAP, sonic-swss qosorch.cpp): priority 3 pauses queue 3, where TC 3 is sent.
  db["MAP_PFC_PRIORITY_TO_QUEUE"][kMap] = pfcq;
  db["SCHEDULER"]["scheduler.strict"] = {{"type", "STRICT"}};
  db["SCHEDULER"]["scheduler.roce"] = {{"type", "DWRR"}, {"weight", "50"}};
  db["WRED_PROFILE"]["ROCE_LOSSLESS"] = {
      {"ecn", "ecn_all"},
      {"wred_green_enable", "true"},
      {"green_min_threshold", std::to_string(kEcnMinKiB * kKiB)},
      {"green_max_threshold", std::to_string(kEcnMaxKiB * kKiB)},
      {"green_drop_probability", std::to_string(kEcnMarkPercent)}};
  // Buffers: the platform's pools and profiles (catalog, from its buffers_defaults_t1.j2), and
  // the lossless PG by the platform's buffer model.
  for (const auto& [pool, o] : platform.pools) {
    json& j = db["BUFFER_POOL"][pool];
    j = {{"type", o.pool}, {"mode", "dynamic"}};
    if (o.size > 0) j["size"] = fmt::format("{:.0f}", o.size);
    if (o.xoff > 0) j["xoff"] = fmt::format("{:.0f}", o.xoff);
  }
  for (const auto& [profile, o] : platform.profiles) {
    json& j = db["BUFFER_PROFILE"][profile];
    j = {{"pool", o.pool}, {"size", fmt::format("{:.0f}", o.size)}};
    if (o.static_th > 0) j["static_th"] = fmt::format("{:.0f}", o.static_th);
    if (o.dynamic_th) j["dynamic_th"] = std::to_string(*o.dynamic_th);
  }
  if (model == BufferModel::kDynamic) {
    // buffermgrd computes each lossless PG ("NULL" profile) with the vendor's script, which
    // reads these two tables (buffers_config.j2's values; the lossless MTU is the port's).
    db["DEFAULT_LOSSLESS_BUFFER_PARAMETER"]["AZURE"] = {{"default_dynamic_th", "0"}};
    db["LOSSLESS_TRAFFIC_PATTERN"]["AZURE"] = {
        {"mtu", std::to_string(kSonicMtu)},
        {"small_packet_percentage", std::to_string(kSmallPacketPercentage)}};
  }
  for (const auto& p : ports) {
    const std::string n = name(p.port);
    json& port = db["PORT"][n];
    port = {{"admin_status", p.used ? "up" : "down"},
            {"alias", sonic_port_alias(plan, p.port)},
            {"description", p.description},
            {"index", std::to_string(port_slot(plan, p.port).cage)},
            {"lanes", sonic_port_lanes(plan, p.port)},
            {"mtu", std::to_string(kSonicMtu)},
            {"speed", speed}};
    if (!platform.fec.empty()) port["fec"] = platform.fec;
    if (!p.used) continue;
    const double cable = model == BufferModel::kDynamic ? std::ceil(p.length_m)
                                                        : sonic_cable_length(platform, p.length_m);
    db["CABLE_LENGTH"]["AZURE"][n] = metres(cable);
    db["PORT_QOS_MAP"][n] = {{"dscp_to_tc_map", kMap},
                             {"tc_to_queue_map", kMap},
                             {"tc_to_pg_map", kMap},
                             {"pfc_to_queue_map", kMap},
                             {"pfc_enable", std::to_string(kRocePriority)},
                             {"pfcwd_sw_enable", std::to_string(kRocePriority)}};
    std::string lossless = "NULL";
    if (model == BufferModel::kTraditional) {
      const LosslessProfile lp = sonic_lossless_profile(platform, plan.topo.lane_gbps, cable);
      db["BUFFER_PROFILE"][lp.name] = {{"pool", "ingress_lossless_pool"},
                                       {"xon", std::to_string(lp.xon)},
                                       {"xoff", std::to_string(lp.xoff)},
                                       {"size", std::to_string(lp.size)},
                                       {"dynamic_th", std::to_string(lp.dynamic_th)},
                                       {"xon_offset", std::to_string(lp.xon_offset)}};
      lossless = lp.name;
    }
    db["BUFFER_PG"][n + "|0"] = {{"profile", "ingress_lossy_profile"}};
    db["BUFFER_PG"][fmt::format("{}|{}", n, kRocePriority)] = {{"profile", lossless}};
    db["BUFFER_QUEUE"][fmt::format("{}|{}", n, kRocePriority)] = {
        {"profile", "egress_lossless_profile"}};
    for (const char* q : kLossyQueues)
      db["BUFFER_QUEUE"][n + "|" + q] = {{"profile", platform.queue_lossy_profile}};
    db["QUEUE"][fmt::format("{}|{}", n, kRocePriority)] = {{"scheduler", "scheduler.roce"},
                                                           {"wred_profile", "ROCE_LOSSLESS"}};
    db["QUEUE"][fmt::format("{}|{}", n, kCnpQueue)] = {{"scheduler", "scheduler.strict"}};
    db["PFC_WD"][n] = {{"action", "drop"},
                       {"detection_time", std::to_string(kPfcWatchdogMs)},
                       {"restoration_time", std::to_string(kPfcWatchdogMs)}};
  }
  for (const auto& r : routed) {
    const std::string n = name(r.port);
    if (a.unnumbered) {
      db["INTERFACE"][n] = {{"ipv6_use_link_local_only", "enable"}};
      continue;
    }
    db["INTERFACE"][n] = json::object();
    db["INTERFACE"][n + "|" + ipv4_str(r.ip) + "/31"] = json::object();
  }
  if (subnet) {
    const std::string vlan = fmt::format("Vlan{}", kSonicHostVlan);
    db["VLAN"][vlan] = {{"vlanid", std::to_string(kSonicHostVlan)}};
    for (const auto& h : a.hosts)
      if (h.leaf == sw.name)
        db["VLAN_MEMBER"][vlan + "|" + name(h.leaf_port)] = {{"tagging_mode", "untagged"}};
    db["VLAN_INTERFACE"][vlan] = json::object();
    db["VLAN_INTERFACE"][fmt::format("{}|{}/{}", vlan, ipv4_str(subnet->gateway),
                                     subnet->prefix.len)] = json::object();
  }
  return db;
}

std::string sonic_frr_conf(const Plan& plan, const AddressPlan& a, const SwitchAddress& sw) {
  return fmt::format("! {}: /etc/sonic/frr/frr.conf, docker_routing_config_mode split-unified\n",
                     kSonicTarget) +
         frr_conf(
             a, sw, [&](int p) { return sonic_port_name(plan, p); },
             fmt::format("Vlan{}", kSonicHostVlan));
}

}  // namespace gf
