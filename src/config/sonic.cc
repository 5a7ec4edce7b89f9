#include "config/sonic.h"

#include <fmt/format.h>

#include "config/frr.h"
#include "config/hosts.h"

namespace gf {
namespace {

const char* const kMap = "ROCE";
constexpr int kKiB = 1024;

struct Port {
  int port = 0;
  std::string peer, kind;  // kind: fabric | host
  double length_m = 0;
};

}  // namespace

nlohmann::json sonic_config_db(const Plan& plan, const Catalog& catalog, const AddressPlan& a,
                               const SwitchAddress& sw) {
  using nlohmann::json;
  auto name = [&](int p) { return sonic_port_name(plan, p); };
  std::vector<Port> ports;
  const double fabric_m =
      link_medium(plan, catalog,
                  sw.role == "core" || sw.role == "spine" ? LinkKind::kSpineCore
                                                          : LinkKind::kLeafSpine)
          .length_m;
  const std::vector<SwitchPort> routed = a.ports_of(sw.name);
  for (const auto& r : routed) ports.push_back({r.port, r.peer, "fabric", fabric_m});
  const double host_m = link_medium(plan, catalog, LinkKind::kNodeLeaf).length_m;
  const HostSubnet* subnet = a.subnet_of(sw.name);
  for (const auto& h : a.hosts)
    if (h.leaf == sw.name) ports.push_back({h.leaf_port, h.node + ":" + h.netdev, "host", host_m});

  json db;
  db["DEVICE_METADATA"]["localhost"] = {{"hostname", sw.name},
                                        {"bgp_asn", std::to_string(sw.asn)},
                                        {"type", sw.role == "leaf" ? "LeafRouter" : "SpineRouter"},
                                        {"docker_routing_config_mode", "split"},
                                        {"buffer_model", "dynamic"}};
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
  json tcq = json::object(), tcpg = json::object();
  for (int tc = 0; tc < 8; ++tc) {
    tcq[std::to_string(tc)] = std::to_string(tc);
    tcpg[std::to_string(tc)] = tc == kRocePriority ? std::to_string(kRocePriority) : "0";
  }
  db["TC_TO_QUEUE_MAP"][kMap] = tcq;
  db["TC_TO_PRIORITY_GROUP_MAP"][kMap] = tcpg;
  db["SCHEDULER"]["scheduler.strict"] = {{"type", "STRICT"}};
  db["SCHEDULER"]["scheduler.roce"] = {{"type", "DWRR"}, {"weight", "50"}};
  db["WRED_PROFILE"]["ROCE_LOSSLESS"] = {
      {"ecn", "ecn_all"},
      {"wred_green_enable", "true"},
      {"green_min_threshold", std::to_string(kEcnMinKiB * kKiB)},
      {"green_max_threshold", std::to_string(kEcnMaxKiB * kKiB)},
      {"green_drop_probability", std::to_string(kEcnMarkPercent)}};
  // Dynamic buffer model: SONiC computes each lossless PG's headroom from the port speed and
  // the cable length below ("NULL" profile = calculated).
  db["BUFFER_POOL"]["ingress_lossless_pool"] = {{"type", "ingress"}, {"mode", "dynamic"}};
  db["BUFFER_POOL"]["egress_lossless_pool"] = {{"type", "egress"}, {"mode", "dynamic"}};
  db["BUFFER_PROFILE"]["egress_lossless_profile"] = {
      {"pool", "egress_lossless_pool"}, {"size", "0"}, {"dynamic_th", "7"}};
  db["DEFAULT_LOSSLESS_BUFFER_PARAMETER"]["AZURE"] = {{"default_dynamic_th", "0"}};
  for (const auto& p : ports) {
    const std::string n = name(p.port);
    db["PORT"][n] = {{"admin_status", "up"},
                     {"mtu", std::to_string(kSonicMtu)},
                     {"speed", speed},
                     {"description", "to " + p.peer}};
    db["CABLE_LENGTH"]["AZURE"][n] = fmt::format("{:.0f}m", p.length_m);
    db["PORT_QOS_MAP"][n] = {{"dscp_to_tc_map", kMap},
                             {"tc_to_queue_map", kMap},
                             {"tc_to_pg_map", kMap},
                             {"pfc_enable", std::to_string(kRocePriority)},
                             {"pfcwd_sw_enable", std::to_string(kRocePriority)}};
    db["BUFFER_PG"][fmt::format("{}|{}", n, kRocePriority)] = {{"profile", "NULL"}};
    db["BUFFER_QUEUE"][fmt::format("{}|{}", n, kRocePriority)] = {
        {"profile", "egress_lossless_profile"}};
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
    const SwitchAddress* peer = a.find(r.peer);
    db["INTERFACE"][n] = json::object();
    db["INTERFACE"][n + "|" + ipv4_str(r.ip) + "/31"] = json::object();
    db["BGP_NEIGHBOR"][ipv4_str(r.peer_ip)] = {{"asn", std::to_string(peer ? peer->asn : 0)},
                                               {"name", r.peer},
                                               {"local_addr", ipv4_str(r.ip)},
                                               {"admin_status", "up"}};
  }
  if (subnet) {
    const std::string vlan = fmt::format("Vlan{}", kSonicHostVlan);
    db["VLAN"][vlan] = {{"vlanid", std::to_string(kSonicHostVlan)}};
    for (const auto& p : ports)
      if (p.kind == "host")
        db["VLAN_MEMBER"][vlan + "|" + name(p.port)] = {{"tagging_mode", "untagged"}};
    db["VLAN_INTERFACE"][vlan] = json::object();
    db["VLAN_INTERFACE"][fmt::format("{}|{}/{}", vlan, ipv4_str(subnet->gateway),
                                     subnet->prefix.len)] = json::object();
  }
  return db;
}

std::string sonic_frr_conf(const Plan& plan, const AddressPlan& a, const SwitchAddress& sw) {
  return frr_conf(
      a, sw, [&](int p) { return sonic_port_name(plan, p); },
      fmt::format("Vlan{}", kSonicHostVlan));
}

}  // namespace gf
