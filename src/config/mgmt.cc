#include "config/mgmt.h"

#include <fmt/format.h>

#include <map>
#include <set>

#include "config/opensm.h"

namespace gf {
namespace {

const NetAddressing& addressing_of(const NetworksSpec& s, NetworkKind k) {
  return k == NetworkKind::kStorage  ? s.storage.addressing
         : k == NetworkKind::kInband ? s.inband.addressing
                                     : s.oob.addressing;
}

// The rail netdevs of a node, in cabling order (addressing.host_netdevs, else the cabling
// plan's names nicN / nicN.pM).
std::vector<std::string> rail_netdevs(const Plan& p, const AddressingSpec& a) {
  if (!a.host_netdevs.empty()) return a.host_netdevs;
  std::vector<std::string> out;
  for (int r = 0; r < p.nics_per_node; ++r)
    for (int q = 0; q < p.topo.planes; ++q)
      out.push_back(p.topo.planes > 1 ? fmt::format("nic{}.p{}", r, q + 1)
                                      : fmt::format("nic{}", r));
  return out;
}

bool is_server(const std::string& device) {
  return device.rfind("node", 0) == 0 || device.rfind("storage", 0) == 0;
}

// A link from an endpoint (a server's port, a BMC, a management port, a PDU) to its leaf, not
// one between two switches of the network.
bool is_host_link(const NetworkLink& l) {
  return l.network == NetworkKind::kOob ? l.a_device.rfind("oob-", 0) != 0 : is_server(l.a_device);
}

// Cumulus Linux's name of port `port` (from 1) of `sw` at `gbps`: swp<cage>, or swp<cage>s<sub>
// when the cage is broken out (Cumulus Linux 5.x, Switch Port Attributes); a management switch's
// separate uplinks follow its host ports.
std::string swp(const Switch& sw, double gbps, int port) {
  const int n = sw.ports_at(gbps);
  if (n <= 0 || port > n) return fmt::format("swp{}", port);
  const int per = std::max(1, n / sw.cages());
  if (per == 1) return fmt::format("swp{}", port);
  return fmt::format("swp{}s{}", (port - 1) / per + 1, (port - 1) % per);
}

}  // namespace

const NetAddressPlan::Net* NetAddressPlan::net(NetworkKind k) const {
  for (const auto& n : nets)
    if (n.kind == k) return &n;
  return nullptr;
}

const NetAddress* NetAddressPlan::mgmt_of(const std::string& device) const {
  for (const auto& a : addresses)
    if (a.network == NetworkKind::kOob && a.device == device) return &a;
  return nullptr;
}

Result<NetAddressPlan> plan_network_addresses(const Plan& p, const Spec& spec) {
  NetAddressPlan out;
  if (!p.networks || !spec.networks) return out;
  std::map<NetworkKind, uint32_t> next;
  for (const auto& n : p.networks->nets) {
    const NetAddressing& a = addressing_of(*spec.networks, n.kind);
    auto prefix = parse_prefix(a.subnet);
    if (!prefix) return prefix.errors();
    NetAddressPlan::Net net{n.kind, *prefix, a.vlan, prefix->addr + 1};
    out.nets.push_back(net);
    next[n.kind] = prefix->addr + 2;  // .0 the network, .1 the gateway
  }
  auto add = [&](NetworkKind k, std::string device, std::string iface, std::string sw,
                 std::string port) {
    out.addresses.push_back(
        {k, std::move(device), std::move(iface), std::move(sw), std::move(port), next[k]++});
  };
  std::set<std::string> bonded;
  for_each_network_link(p, [&](const NetworkLink& l) {
    if (!is_host_link(l)) return;  // leaf-spine links are bridged, not addressed
    if (l.network == NetworkKind::kInband) {
      // The two in-band ports are one LACP bond to the leaf pair (DGX BasePOD deployment guide:
      // a bonded interface of slot 1 and slot 2's ports): one address a server.
      if (bonded.insert(l.a_device).second) add(l.network, l.a_device, "bond0", "", "");
      return;
    }
    add(l.network, l.a_device, l.a_port, l.b_device, l.b_port);
  });
  // isolation: vlan: the servers reach storage over their rails, one storage address a rail.
  if (p.networks->isolation == Isolation::kVlan && p.networks->find(NetworkKind::kStorage) &&
      p.technology == Technology::kRoce) {
    const auto rails = rail_netdevs(p, spec.addressing);
    const int vlan = spec.networks->storage.addressing.vlan;
    for (long long n = 0; n < p.nodes; ++n)
      for (const auto& r : rails)
        add(NetworkKind::kStorage, node_name(p, n), fmt::format("{}.{}", r, vlan), "", "");
  }
  for (const auto& net : out.nets) {
    const uint64_t size = uint64_t{1} << (32 - net.prefix.len);
    const uint64_t used = next[net.kind] - net.prefix.addr + 1;  // the broadcast too
    if (used > size)
      return Diagnostic::at_key(
          fmt::format("networks.{}.subnet", network_kind_name(net.kind)),
          fmt::format("{} holds {} addresses; the {} network needs {}", net.prefix.str(), size - 3,
                      network_kind_name(net.kind), used - 3),
          "give it a larger subnet");
  }
  return out;
}

std::string network_ip_plan_rows(const NetAddressPlan& a) {
  std::string out;
  for (const auto& n : a.nets)
    out += fmt::format("{}-gateway,,vlan{},{}/{},,,\n", network_kind_name(n.kind), n.vlan,
                       ipv4_str(n.gateway), n.prefix.len);
  for (const auto& x : a.addresses) {
    const auto* n = a.net(x.network);
    out +=
        fmt::format("{},{},{},{}/{},{},{},\n", network_kind_name(x.network), x.device, x.interface,
                    ipv4_str(x.ip), n ? n->prefix.len : 32, x.switch_name, x.switch_port);
  }
  return out;
}

std::string eos_management(const NetAddressPlan& a, const NetAddress& m) {
  const auto* n = a.net(NetworkKind::kOob);
  // EOS User Manual, Management Interfaces / VRFs: Management1 in its own VRF, with the OOB
  // network's default route there so that management traffic never crosses the fabric.
  return fmt::format(
      "! out-of-band management (networks.oob)\n"
      "vrf instance MGMT\n!\n"
      "interface Management1\n   vrf MGMT\n   ip address {}/{}\n!\n"
      "ip route vrf MGMT 0.0.0.0/0 {}\n!\n",
      ipv4_str(m.ip), n->prefix.len, ipv4_str(n->gateway));
}

void sonic_management(const NetAddressPlan& a, const NetAddress& m, nlohmann::json& db) {
  const auto* n = a.net(NetworkKind::kOob);
  // sonic-mgmt_interface.yang: MGMT_INTERFACE "<port>|<ip/len>" with gwaddr; sonic-mgmt_port.yang:
  // MGMT_PORT eth0; sonic-mgmt_vrf.yang: MGMT_VRF_CONFIG vrf_global mgmtVrfEnabled.
  db["MGMT_INTERFACE"][fmt::format("eth0|{}/{}", ipv4_str(m.ip), n->prefix.len)] = {
      {"gwaddr", ipv4_str(n->gateway)}};
  db["MGMT_PORT"]["eth0"] = {{"admin_status", "up"}, {"alias", "eth0"}};
  db["MGMT_VRF_CONFIG"]["vrf_global"] = {{"mgmtVrfEnabled", "true"}};
}

std::string nvue_management(const NetAddressPlan& a, const NetAddress& m) {
  const auto* n = a.net(NetworkKind::kOob);
  // The DGX BasePOD deployment guide's switch configurations: eth0 in VRF mgmt with its gateway.
  return fmt::format(
      "# out-of-band management (networks.oob)\n"
      "nv set interface eth0 ip address {}/{}\n"
      "nv set interface eth0 ip gateway {}\n"
      "nv set interface eth0 ip vrf mgmt\n",
      ipv4_str(m.ip), n->prefix.len, ipv4_str(n->gateway));
}

// MLAG on one leaf of a pair: its peer link (a bond with the 4094 sub-interface NVUE's MLAG
// uses), the pair's shared system MAC and the peer's management address as the backup path,
// and one bond a dual-attached server, in its VLAN, with the id both leaves give it (the
// server's place among the pair's servers, by name). The first leaf (by name) is the primary.
std::string mlag_pair(const NetAddressPlan& a, const std::string& name, const std::string& peer,
                      const std::set<int>& peer_ports, const std::map<std::string, int>& bonded,
                      const std::map<std::string, int>& switch_bonds, const Switch& sw,
                      double host_gbps, int vlan, int oob_vlan) {
  std::string s =
      "# MLAG with " + peer + " (the servers' in-band bonds are LACP across the pair)\n";
  for (int port : peer_ports)
    s += fmt::format("nv set interface peerlink bond member {}\n", swp(sw, host_gbps, port));
  s += "nv set interface peerlink type peerlink\n"
       "nv set interface peerlink.4094 base-interface peerlink\n"
       "nv set interface peerlink.4094 type sub\n"
       "nv set interface peerlink.4094 vlan 4094\n";
  // One system MAC per pair, in Cumulus Linux's reserved range 44:38:39:ff:xx:xx above the VRR
  // MACs (44:38:39:ff:0v:vv, a VLAN each): 44:38:39:ff:8h:ll, from the pair's number (the
  // leaves' trailing digits, "inband-leaf-a07" is pair 7), unique among up to 4,096 pairs.
  const std::string& first = std::min(name, peer);
  int pair = 0;
  for (size_t i = first.find_last_not_of("0123456789") + 1; i < first.size(); ++i)
    pair = pair * 10 + (first[i] - '0');
  s += fmt::format("nv set mlag mac-address 44:38:39:ff:{:02x}:{:02x}\n",
                   0x80 | ((pair >> 8) & 0x0f), pair & 0xff);
  if (const NetAddress* m = a.mgmt_of(peer))
    s += fmt::format("nv set mlag backup {} vrf mgmt\n", ipv4_str(m->ip));
  s += "nv set mlag peer-ip linklocal\n";
  s += fmt::format("nv set mlag priority {}\n", name == first ? 1000 : 2000);
  s += "nv set mlag enable on\n";
  // One MLAG bond a dual-attached device, the same id on both leaves: a server's (LACP bypass
  // while it boots, an access port of its VLAN), then the OOB switches uplinked to both leaves
  // (a trunk of the OOB VLAN); in name order, so both leaves count them alike.
  int bond = 0;
  auto mlag_bond = [&](const std::string& device, int port, bool server) {
    ++bond;
    s += fmt::format(
        "nv set interface bond{0} description {1}\n"
        "nv set interface bond{0} bond member {2}\n"
        "nv set interface bond{0} bond mlag id {0}\n",
        bond, device, swp(sw, host_gbps, port));
    s += server ? fmt::format(
                      "nv set interface bond{0} bond lacp-bypass on\n"
                      "nv set interface bond{0} bridge domain br_default access {1}\n",
                      bond, vlan)
                : fmt::format("nv set interface bond{} bridge domain br_default vlan {}\n", bond,
                              oob_vlan);
  };
  for (const auto& [server, port] : bonded) mlag_bond(server, port, true);
  for (const auto& [oob_sw, port] : switch_bonds) mlag_bond(oob_sw, port, false);
  return s;
}

std::vector<OutputFile> network_files(const Plan& p, const NetAddressPlan& a, const Spec& spec) {
  std::vector<OutputFile> out;
  if (!p.networks) return out;
  // Each Ethernet switch of the other networks: its VLAN on the ports it uses, eth0. A port to a
  // server or a device is an access port of its network's VLAN; a link between two switches is
  // a trunk, tagged alike at both ends (a leaf's uplink and its spine's down port) with the
  // VLANs it carries.
  struct Ports {
    std::set<int> host;
    std::map<int, std::set<int>> up, down;    // trunk ports: the lower end's, the upper end's
    std::set<int> peer;                       // the MLAG peer link's ports
    std::map<std::string, int> bonded;        // a dual-attached server: its port here
    std::map<std::string, int> switch_bonds;  // an OOB switch uplinked to both leaves: its port
    std::set<int> uplink_bond;                // an OOB switch's uplinks to an MLAG pair: one bond
    std::string pair;                         // the other leaf of its pair
  };
  std::map<std::string, Ports> used;
  auto vlan_of = [&](NetworkKind k) {
    const auto* net = a.net(k);
    return net ? net->vlan : 0;
  };
  // OOB switches that uplink into the in-band network (SuperPOD RA: "two uplinks per OOB to
  // in-band") hand the OOB VLAN to it: the in-band switches carry it on their trunks, and its
  // gateway is on the in-band top tier, beside the in-band one.
  const NetworkPlan* oob_plan = p.networks->find(NetworkKind::kOob);
  const int oob_into_inband =
      oob_plan && oob_plan->uplinks_to_inband ? vlan_of(NetworkKind::kOob) : 0;
  // Servers whose in-band ports reach both leaves of a pair bond them with LACP (the hosts'
  // netplan bond0, 802.3ad): the pair runs MLAG over its peer link, and each such server's
  // ports are one MLAG bond, the same id on both leaves (NVUE, Cumulus Linux 5: interface
  // peerlink, mlag backup/mac-address/peer-ip, bond mlag id, "enable on" up to 5.14; DGX
  // BasePOD deployment guide, switch configurations, SN4600 in-band switches).
  std::map<std::string, std::map<std::string, int>> inband_ports;  // server -> leaf -> port
  // OOB switch -> in-band switch -> (its port, the in-band switch's port)
  std::map<std::string, std::map<std::string, std::pair<int, int>>> oob_ups;
  for_each_network_link(p, [&](const NetworkLink& l) {
    if (l.peer_link) {
      Ports& a_ports = used[l.a_device];
      Ports& b_ports = used[l.b_device];
      a_ports.peer.insert(std::stoi(l.a_port));
      b_ports.peer.insert(std::stoi(l.b_port));
      a_ports.pair = l.b_device;
      b_ports.pair = l.a_device;
      return;
    }
    if (is_host_link(l)) {
      used[l.b_device].host.insert(std::stoi(l.b_port));
      if (l.network == NetworkKind::kInband && is_server(l.a_device))
        inband_ports[l.a_device][l.b_device] = std::stoi(l.b_port);
      return;
    }
    if (l.network == NetworkKind::kOob && l.b_device.rfind("inband-", 0) == 0)
      oob_ups[l.a_device][l.b_device] = {std::stoi(l.a_port), std::stoi(l.b_port)};
    std::set<int> vlans{vlan_of(l.network)};
    if (l.network == NetworkKind::kInband && oob_into_inband) vlans.insert(oob_into_inband);
    used[l.a_device].up[std::stoi(l.a_port)].insert(vlans.begin(), vlans.end());
    used[l.b_device].down[std::stoi(l.b_port)].insert(vlans.begin(), vlans.end());
  });
  for (const auto& [server, leaves] : inband_ports) {
    if (leaves.size() != 2) continue;
    const auto& [x, px] = *leaves.begin();
    const auto& [y, py] = *leaves.rbegin();
    if (used[x].pair != y) continue;  // not the two leaves of one pair: no MLAG between them
    used[x].bonded[server] = px;
    used[y].bonded[server] = py;
  }
  // An OOB switch uplinked to both leaves of an MLAG pair: without a bond its two uplinks and
  // the peer link close a loop in the OOB VLAN. Its uplinks are one LACP bond, and the pair's
  // ends one MLAG bond, as a server's.
  for (const auto& [oob_sw, ends] : oob_ups) {
    if (ends.size() != 2) continue;
    const auto& [x, px] = *ends.begin();
    const auto& [y, py] = *ends.rbegin();
    if (used[x].pair != y || used[x].bonded.empty()) continue;  // no MLAG pair
    Ports& o = used[oob_sw];
    for (const auto& end : {px, py}) {
      o.uplink_bond.insert(end.first);
      o.up.erase(end.first);
    }
    used[x].switch_bonds[oob_sw] = px.second;
    used[x].down.erase(px.second);
    used[y].switch_bonds[oob_sw] = py.second;
    used[y].down.erase(py.second);
  }
  for (const NetworkPlan& n : p.networks->nets) {
    const auto* net = a.net(n.kind);
    if (!net) continue;
    // InfiniBand switches (a QM9700 storage fabric) take no per-switch configuration: the
    // network's own subnet manager routes it.
    // Leaves that uplink into an InfiniBand compute fabric (isolation: vlan) are of its subnet,
    // routed by its SM (opensm/opensm.conf says so).
    if (n.leaves > 0 && n.sw.technology == SwitchTechnology::kInfiniband && !n.uplinks_to_compute) {
      const std::string dir = fmt::format("networks/{}-opensm/", network_kind_name(n.kind));
      out.push_back({dir + "opensm.conf", opensm_network_conf(p, n)});
      out.push_back({dir + "partitions.conf", opensm_partitions()});
    }
    for (int spine = 0; spine < 2; ++spine) {
      const Switch& sw = spine ? n.spine_sw : n.sw;
      const int count = spine ? n.spines : n.leaves;
      if (count == 0 || sw.technology != SwitchTechnology::kEthernet) continue;
      const double host_gbps = spine ? n.uplink_gbps : n.port_gbps;
      for (int i = 0; i < count; ++i) {
        const std::string name = network_switch_name(n, spine == 1, i);
        std::string s = fmt::format(
            "# generated by gpufabric: {} ({}), a {} of the {} network\n"
            "nv set system hostname {}\n",
            name, sw.id, spine ? "spine" : (n.tiers > 1 ? "leaf" : "switch"),
            network_kind_name(n.kind), name);
        if (const NetAddress* m = a.mgmt_of(name)) s += nvue_management(a, *m);
        const Ports& ports = used[name];
        std::set<int> bridged{net->vlan};
        for (const auto* trunks : {&ports.up, &ports.down})
          for (const auto& [port, vlans] : *trunks) bridged.insert(vlans.begin(), vlans.end());
        if (!ports.switch_bonds.empty()) bridged.insert(oob_into_inband);
        for (int v : bridged) s += fmt::format("nv set bridge domain br_default vlan {}\n", v);
        std::set<int> in_bonds;
        for (const auto& [server, port] : ports.bonded) in_bonds.insert(port);
        for (int port : ports.host)
          if (!in_bonds.count(port))
            s += fmt::format("nv set interface {} bridge domain br_default access {}\n",
                             swp(sw, host_gbps, port), net->vlan);
        if (!ports.bonded.empty() && !ports.peer.empty())
          s += mlag_pair(a, name, ports.pair, ports.peer, ports.bonded, ports.switch_bonds, sw,
                         host_gbps, net->vlan, oob_into_inband);
        // An uplink port's name: a management switch's separate uplinks follow its host ports.
        auto up_iface = [&](int port) {
          return sw.uplink_ports > 0 && port > n.leaf_ports ? fmt::format("swp{}", port)
                                                            : swp(sw, n.uplink_gbps, port);
        };
        // An OOB switch's uplinks to an in-band MLAG pair: one LACP bond, the OOB VLAN tagged.
        if (!ports.uplink_bond.empty()) {
          for (int port : ports.uplink_bond)
            s += fmt::format("nv set interface uplink bond member {}\n", up_iface(port));
          s += fmt::format("nv set interface uplink bridge domain br_default vlan {}\n", net->vlan);
        }
        auto trunk = [&](const std::string& iface, const std::set<int>& vlans) {
          for (int v : vlans)
            s += fmt::format("nv set interface {} bridge domain br_default vlan {}\n", iface, v);
        };
        for (const auto& [port, vlans] : ports.down) trunk(swp(sw, host_gbps, port), vlans);
        for (const auto& [port, vlans] : ports.up) trunk(up_iface(port), vlans);
        // The subnet's gateway on the top tier: an anycast (VRR) address on every switch of it;
        // the OOB's there too where the OOB switches uplink into the in-band network.
        const bool top = spine == 1 || n.tiers == 1;
        auto gateway = [&](const NetAddressPlan::Net& g) {
          s += fmt::format(
              "nv set interface vlan{0} type svi\n"
              "nv set interface vlan{0} ip vrr address {1}/{2}\n"
              "nv set interface vlan{0} ip vrr mac-address 44:38:39:ff:{3:02x}:{4:02x}\n",
              g.vlan, ipv4_str(g.gateway), g.prefix.len, (g.vlan >> 8) & 0xff, g.vlan & 0xff);
        };
        if (top && n.kind != NetworkKind::kOob && !n.uplinks_to_compute) gateway(*net);
        if (top && n.kind == NetworkKind::kInband && oob_into_inband)
          if (const auto* oob = a.net(NetworkKind::kOob)) gateway(*oob);
        s += "nv config apply --assume-yes\nnv config save\n";
        out.push_back({"networks/" + name + ".sh", s});
      }
    }
  }
  // Each GPU server: its in-band bond and its storage ports (or storage VLANs on its rails).
  std::map<std::string, std::vector<const NetAddress*>> per_node;
  for (const auto& x : a.addresses)
    if (x.device.rfind("node", 0) == 0 && x.network != NetworkKind::kOob)
      per_node[x.device].push_back(&x);
  const auto* inband = a.net(NetworkKind::kInband);
  const auto* storage = a.net(NetworkKind::kStorage);
  for (const auto& [node, addrs] : per_node) {
    std::string eth, bonds, vlans;
    for (const NetAddress* x : addrs) {
      const auto* net = a.net(x->network);
      const std::string ip = fmt::format("{}/{}", ipv4_str(x->ip), net->prefix.len);
      if (x->interface == "bond0") {
        for (int q = 0; q < p.networks->find(NetworkKind::kInband)->ports_per_node; ++q)
          eth += fmt::format("    inband{}: {{}}\n", q);
        bonds += fmt::format(
            "  bonds:\n    bond0:\n      interfaces: [{}]\n"
            "      parameters: {{mode: 802.3ad, lacp-rate: fast}}\n"
            "      addresses: [{}]\n      routes:\n        - to: default\n          via: {}\n",
            p.networks->find(NetworkKind::kInband)->ports_per_node > 1 ? "inband0, inband1"
                                                                       : "inband0",
            ip, ipv4_str(inband->gateway));
      } else if (x->interface.find('.') != std::string::npos) {
        const std::string link = x->interface.substr(0, x->interface.rfind('.'));
        vlans += fmt::format("    {}:\n      id: {}\n      link: {}\n      addresses: [{}]\n",
                             x->interface, storage->vlan, link, ip);
      } else {
        eth += fmt::format("    {}:\n      mtu: 9000\n      addresses: [{}]\n", x->interface, ip);
      }
    }
    std::string f = fmt::format(
        "# generated by gpufabric: the other networks of {} (networks:)\n"
        "# inbandN and storN are the cabling plan's port names: rename them to the netdevs\n"
        "network:\n  version: 2\n",
        node);
    if (!eth.empty() || !vlans.empty()) {
      f += "  ethernets:\n" + eth;
      if (!vlans.empty())
        for (const auto& r : rail_netdevs(p, spec.addressing))
          if (eth.find("    " + r + ":") == std::string::npos) f += "    " + r + ": {}\n";
    }
    f += bonds;
    if (!vlans.empty()) f += "  vlans:\n" + vlans;
    out.push_back({"hosts/" + node + "/netplan-networks.yaml", f});
  }
  return out;
}

}  // namespace gf
