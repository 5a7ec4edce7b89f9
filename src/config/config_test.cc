// The address plan and the FRR configurations; every frr.conf is checked by real FRR.
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include "../../tests/support.h"
#include "common/csv.h"
#include "config/addressing.h"
#include "config/ansible.h"
#include "config/config_set.h"
#include "config/eos.h"
#include "config/frr.h"
#include "config/hosts.h"
#include "config/mgmt.h"
#include "config/nvue.h"
#include "config/opensm.h"
#include "config/sonic.h"
#include "lab/process.h"
#include "plan/ports.h"
#include "topo/fabric.h"

namespace gf {
namespace {

// How often `what` occurs in `s`.
int occurrences(const std::string& s, const std::string& what) {
  int n = 0;
  for (size_t at = s.find(what); at != std::string::npos; at = s.find(what, at + 1)) ++n;
  return n;
}

using testing::load_example;

// `vtysh --dryrun` of Debian's FRR on the file: its exit status and what it said.
std::pair<int, std::string> frr_dryrun(const std::string& conf) {
  const auto path =
      std::filesystem::temp_directory_path() / ("gf_frr_" + std::to_string(getpid()) + ".conf");
  std::ofstream(path) << conf;
  const CommandResult r = run_command({"vtysh", "--dryrun", "--inputfile", path.string()});
  std::filesystem::remove(path);
  return {r.exit_code, r.out + r.err};
}

// `sh -n` (syntax only) of a generated script.
int sh_syntax(const std::string& script) {
  const auto path =
      std::filesystem::temp_directory_path() / ("gf_sh_" + std::to_string(getpid()) + ".sh");
  std::ofstream(path) << script;
  const int status = std::system(("sh -n " + path.string()).c_str());
  std::filesystem::remove(path);
  return WEXITSTATUS(status);
}

TEST(Addressing, Prefixes) {
  auto p = parse_prefix("10.1.0.0/16");
  ASSERT_TRUE(p.ok());
  EXPECT_EQ(p->str(), "10.1.0.0/16");
  EXPECT_FALSE(parse_prefix("10.1.0.1/16").ok());  // host bits set
  EXPECT_FALSE(parse_prefix("10.1.0.0").ok());
  EXPECT_FALSE(parse_prefix("300.1.0.0/8").ok());
}

TEST(Addressing, LabFabricIsAddressedUniquely) {
  const PlannedSpec lab = load_example("roce-lab-64.yaml");
  auto a = plan_addresses(lab.plan, lab.catalog, lab.spec.addressing);
  ASSERT_TRUE(a.ok()) << format_diagnostics(a.errors());
  EXPECT_EQ(static_cast<int>(a->switches.size()), lab.plan.switch_total);
  EXPECT_EQ(static_cast<long long>(a->links.size()), lab.plan.leaf_spine_total);
  EXPECT_EQ(static_cast<long long>(a->hosts.size()), lab.plan.node_leaf_total);
  std::set<uint32_t> ips;
  std::set<long long> leaf_asns;
  for (const auto& s : a->switches) {
    EXPECT_TRUE(ips.insert(s.loopback).second);
    if (s.role == "leaf") {
      EXPECT_TRUE(leaf_asns.insert(s.asn).second);
    }
    if (s.role == "spine") {
      EXPECT_EQ(s.asn, 65000);
    }
  }
  for (const auto& l : a->links) {
    EXPECT_EQ(l.a_ip % 2, 0u);
    EXPECT_EQ(l.b_ip, l.a_ip + 1);
    EXPECT_TRUE(ips.insert(l.a_ip).second);
    EXPECT_TRUE(ips.insert(l.b_ip).second);
  }
  for (const auto& h : a->hosts) {
    EXPECT_TRUE(ips.insert(h.ip).second);
    EXPECT_EQ(h.ip >> (32 - h.prefix_len), h.gateway >> (32 - h.prefix_len));  // same subnet
  }
  const std::string csv = ip_plan_csv(lab.plan, *a);
  EXPECT_NE(csv.find("loopback,spine01,lo,10.0.0."), std::string::npos) << csv.substr(0, 400);
  EXPECT_NE(csv.find("host,node001,nic0,10.128.0.2/"), std::string::npos);
  // Switch ports as frr/ names them (Cumulus: cage 33's first 400G port), not port 65.
  EXPECT_NE(csv.find("link,su01-r0-leaf,swp33s0,10.1.0.0/31,spine01,swp1s0,\n"), std::string::npos)
      << csv;
  EXPECT_NE(csv.find(",su01-r0-leaf,swp1s0,\n"), std::string::npos) << csv;
  EXPECT_EQ(csv.find("swp65"), std::string::npos);
}

TEST(Addressing, ErrorsNameTheKey) {
  const PlannedSpec lab = load_example("roce-lab-64.yaml");
  AddressingSpec small = lab.spec.addressing;
  small.links = "10.1.0.0/28";  // 8 /31s for 32 links
  auto a = plan_addresses(lab.plan, lab.catalog, small);
  ASSERT_FALSE(a.ok());
  EXPECT_EQ(a.errors()[0].key, "addressing.links");
  const PlannedSpec ib = load_example("seed-70b-1024.yaml");
  auto b = plan_addresses(ib.plan, ib.catalog, ib.spec.addressing);
  ASSERT_FALSE(b.ok());
  EXPECT_EQ(b.errors()[0].key, "fabric.technology");
  auto bad = parse_spec(
      "cluster: {gpu: h100-sxm, nodes: 2, nic: cx7-400g}\n"
      "addressing:\n  links: 10.1.0.1/16\n",
      "a.yaml");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(format_diagnostics(bad.errors()).find("a.yaml:3:10: error: addressing.links"),
            std::string::npos)
      << format_diagnostics(bad.errors());
}

// What address_needs counts without building an address is what plan_addresses hands out, in
// the same order, on two-tier and three-tier fabrics, a partial unit and unnumbered links; and
// each pool at the prefix its error suggests holds the fabric, one bit shorter does not.
TEST(Addressing, PoolNeedsAreWhatThePlanTakes) {
  for (const char* name : {"roce-lab-16.yaml", "roce-lab-64.yaml", "roce-16k.yaml",
                           "networks-dgx-256.yaml", "jobs-trace.yaml"}) {
    for (const long long nodes : {0LL, 37LL}) {  // 0: as the example; 37: a partial unit
      PlannedSpec ex = load_example(name);
      if (nodes > 0) {
        ex.spec.cluster.nodes = nodes;
        auto p = make_plan(ex.spec, ex.catalog);
        ASSERT_TRUE(p.ok()) << name << format_diagnostics(p.errors());
        ex.plan = std::move(*p);
      }
      for (const bool unnumbered : {false, true}) {
        AddressingSpec spec = ex.spec.addressing;
        spec.unnumbered = unnumbered;
        auto a = plan_addresses(ex.plan, ex.catalog, spec);
        ASSERT_TRUE(a.ok()) << name << format_diagnostics(a.errors());
        const AddressNeeds n = address_needs(ex.plan, ex.catalog, unnumbered);
        const std::string at = fmt::format("{} nodes {} unnumbered {}", name, nodes, unnumbered);
        EXPECT_EQ(n.switches, static_cast<long long>(a->switches.size())) << at;
        EXPECT_EQ(n.routed_links, unnumbered ? 0 : static_cast<long long>(a->links.size())) << at;
        EXPECT_EQ(n.spines, std::count_if(a->switches.begin(), a->switches.end(),
                                          [](const SwitchAddress& s) { return s.role == "spine"; }))
            << at;
        std::vector<int> lens;
        for (const auto& sn : a->subnets) lens.push_back(sn.prefix.len);
        EXPECT_EQ(n.host_lens, lens) << at;
      }
    }
  }
  const PlannedSpec lab = load_example("roce-lab-64.yaml");
  for (const char* key : {"addressing.loopbacks", "addressing.links", "addressing.hosts"}) {
    AddressingSpec a = lab.spec.addressing;
    std::string& pool = std::string(key) == "addressing.loopbacks" ? a.loopbacks
                        : std::string(key) == "addressing.links"   ? a.links
                                                                   : a.hosts;
    const std::string base = pool.substr(0, pool.find('/'));
    pool = base + "/31";
    auto small = plan_addresses(lab.plan, lab.catalog, a);
    ASSERT_FALSE(small.ok()) << key;
    const Diagnostic& d = small.errors()[0];
    EXPECT_EQ(d.key, key);
    EXPECT_NE(d.message.find("holds 2 addresses"), std::string::npos) << d.message;
    const int len = std::stoi(d.hint.substr(d.hint.find('/') + 1));
    EXPECT_NE(d.hint.find(fmt::format("e.g. {}/{}", base, len)), std::string::npos) << d.hint;
    pool = fmt::format("{}/{}", base, len);
    EXPECT_TRUE(plan_addresses(lab.plan, lab.catalog, a).ok()) << key << " " << pool;
    pool = fmt::format("{}/{}", base, len + 1);
    EXPECT_FALSE(plan_addresses(lab.plan, lab.catalog, a).ok()) << key << " " << pool;
    // The plan command's check names the same key (the spec writes none of these, so plan itself
    // would leave them to configs; the check still names them).
    PlannedSpec spec = lab;
    spec.spec.addressing = a;
    const auto errs = address_pool_errors(spec.plan, spec.catalog, spec.spec);
    ASSERT_EQ(errs.size(), 1U) << key;
    EXPECT_EQ(errs[0].key, key);
  }
  // A pool whose start is aligned to its own size only: the refusal counts from its start, the
  // hint names an aligned prefix that holds the fabric.
  AddressingSpec odd = lab.spec.addressing;
  odd.hosts = "10.128.0.4/30";
  auto refused = plan_addresses(lab.plan, lab.catalog, odd);
  ASSERT_FALSE(refused.ok());
  const std::string hint = refused.errors()[0].hint;
  const size_t eg = hint.find("e.g. ");
  ASSERT_NE(eg, std::string::npos) << hint;
  odd.hosts = hint.substr(eg + 5, hint.find(',', eg) - eg - 5);
  EXPECT_TRUE(plan_addresses(lab.plan, lab.catalog, odd).ok()) << odd.hosts;
}

// No switch takes an ASN the registries reserve: leaves counted up from asn_leaf across 65535
// (reserved) into 65536-65551 (documentation) are refused at the key, as is a spine on AS_TRANS.
TEST(Addressing, ReservedAsnsAreRefused) {
  const PlannedSpec lab = load_example("roce-lab-64.yaml");
  AddressingSpec a = lab.spec.addressing;
  a.asn_leaf = 65534;
  auto r = plan_addresses(lab.plan, lab.catalog, a);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.errors()[0].key, "addressing.asn_leaf");
  EXPECT_NE(r.errors()[0].message.find("include 65535, reserved (RFC 7300)"), std::string::npos)
      << r.errors()[0].message;
  a = lab.spec.addressing;
  a.asn_spine = 23456;
  r = plan_addresses(lab.plan, lab.catalog, a);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.errors()[0].key, "addressing.asn_spine");
  a = lab.spec.addressing;
  a.asn_leaf = 4200000000LL;  // the 4-byte private range
  EXPECT_TRUE(plan_addresses(lab.plan, lab.catalog, a).ok());
  // The plan's check finds the same, without building an address: reserved ASNs, and leaf ASNs
  // over the spines' (clos2: asn_spine; clos3: one a pod above it).
  for (const char* name : {"roce-lab-64.yaml", "roce-16k.yaml"}) {
    PlannedSpec ex = load_example(name);
    for (const auto& [leaf, spine] :
         {std::pair{65534LL, 65000LL}, std::pair{65000LL, 23456LL}, std::pair{64999LL, 65000LL},
          std::pair{65001LL, 65000LL}, std::pair{4200000000LL, 65000LL}}) {
      ex.spec.addressing.asn_leaf = leaf;
      ex.spec.addressing.asn_spine = spine;
      auto full = plan_addresses(ex.plan, ex.catalog, ex.spec.addressing);
      const auto quick = address_pool_errors(ex.plan, ex.catalog, ex.spec);
      const std::string at = fmt::format("{} leaf {} spine {}", name, leaf, spine);
      ASSERT_EQ(full.ok(), quick.empty()) << at;
      if (!full.ok()) {
        EXPECT_EQ(quick[0].key, full.errors()[0].key) << at;
        EXPECT_EQ(quick[0].message, full.errors()[0].message) << at;
      }
    }
  }
}

TEST(Frr, EveryLabConfigIsAcceptedByRealFrr) {
  const PlannedSpec lab = load_example("roce-lab-64.yaml");
  for (bool unnumbered : {false, true}) {
    AddressingSpec spec = lab.spec.addressing;
    spec.unnumbered = unnumbered;
    auto a = plan_addresses(lab.plan, lab.catalog, spec);
    ASSERT_TRUE(a.ok());
    for (const auto& sw : a->switches) {
      const std::string conf = frr_conf(lab.plan, *a, sw);
      EXPECT_NE(conf.find("maximum-paths 64"), std::string::npos);
      EXPECT_NE(conf.find("router bgp " + std::to_string(sw.asn)), std::string::npos);
      // ECMP members must come back after a link flap (gpufabric lab check proves it).
      EXPECT_NE(conf.find("no zebra nexthop kernel enable"), std::string::npos);
      const auto [rc, said] = frr_dryrun(conf);
      EXPECT_EQ(rc, 0) << sw.name << (unnumbered ? " (unnumbered)" : "") << ":\n" << said << conf;
    }
  }
}

TEST(Frr, ThreeTierFabricHasPodAsnsAndValidConfigs) {
  const PlannedSpec big = load_example("roce-16k.yaml");
  auto a = plan_addresses(big.plan, big.catalog, big.spec.addressing);
  ASSERT_TRUE(a.ok()) << format_diagnostics(a.errors());
  std::set<long long> spine_asns;
  const SwitchAddress *leaf = nullptr, *spine = nullptr, *core = nullptr;
  for (const auto& s : a->switches) {
    if (s.role == "spine") spine_asns.insert(s.asn), spine = spine ? spine : &s;
    if (s.role == "leaf" && !leaf) leaf = &s;
    if (s.role == "core" && !core) core = &s;
  }
  EXPECT_EQ(static_cast<int>(spine_asns.size()), big.plan.topo.pods);
  ASSERT_TRUE(leaf && spine && core);
  for (const SwitchAddress* s : {leaf, spine, core}) {
    const auto [rc, said] = frr_dryrun(frr_conf(big.plan, *a, *s));
    EXPECT_EQ(rc, 0) << s->name << ":\n" << said;
  }
}

TEST(Sonic, ConfigDbHoldsTheRoceTablesAndItsFrrConfIsValid) {
  const PlannedSpec lab = load_example("roce-lab-64.yaml");
  auto a = plan_addresses(lab.plan, lab.catalog, lab.spec.addressing);
  ASSERT_TRUE(a.ok());
  for (const auto& sw : a->switches) {
    auto made = sonic_config_db(lab.plan, lab.catalog, *a, sw);
    ASSERT_TRUE(made.ok()) << format_diagnostics(made.errors());
    const auto db = nlohmann::json::parse(made->dump());
    for (const char* table :
         {"DEVICE_METADATA", "LOOPBACK_INTERFACE", "PORT", "INTERFACE", "DSCP_TO_TC_MAP",
          "TC_TO_QUEUE_MAP", "TC_TO_PRIORITY_GROUP_MAP", "MAP_PFC_PRIORITY_TO_QUEUE",
          "PORT_QOS_MAP", "WRED_PROFILE", "SCHEDULER", "QUEUE", "BUFFER_POOL", "BUFFER_PROFILE",
          "BUFFER_PG", "BUFFER_QUEUE", "CABLE_LENGTH", "PFC_WD"})
      EXPECT_TRUE(db.contains(table)) << sw.name << " lacks " << table;
    // frr.conf is authoritative: bgpcfgd would add BGP_NEIGHBOR's peers beside it.
    EXPECT_FALSE(db.contains("BGP_NEIGHBOR")) << sw.name;
    EXPECT_EQ(db["DEVICE_METADATA"]["localhost"]["docker_routing_config_mode"], "split-unified");
    EXPECT_EQ(db["DEVICE_METADATA"]["localhost"]["bgp_asn"], std::to_string(sw.asn));
    EXPECT_EQ(db["DSCP_TO_TC_MAP"]["ROCE"]["26"], "3");
    EXPECT_EQ(db["DSCP_TO_TC_MAP"]["ROCE"]["48"], "6");
    // ECMP hashes the L4 ports too: RoCE v2's entropy is in the UDP source port.
    EXPECT_EQ(db["SWITCH_HASH"]["GLOBAL"]["ecmp_hash"].size(), 5u);
    EXPECT_EQ(db["SWITCH_HASH"]["GLOBAL"]["ecmp_hash"][3], "L4_SRC_PORT");
    for (const auto& [port, cfg] : db["PORT"].items()) {
      EXPECT_EQ(cfg["mtu"], "9100") << port;
      // sonic-port.yang: lanes and speed are mandatory; 4 of the cage's 8 lanes at 400G.
      const std::string lanes = cfg["lanes"].get<std::string>();
      EXPECT_EQ(std::count(lanes.begin(), lanes.end(), ','), 3) << port << ": " << lanes;
      EXPECT_EQ(cfg["speed"], "400000") << port;
      EXPECT_EQ(db["PORT_QOS_MAP"][port]["pfc_enable"], "3") << port;
      EXPECT_EQ(db["PORT_QOS_MAP"][port]["pfc_to_queue_map"], "ROCE") << port;
      EXPECT_TRUE(db["BUFFER_PG"].contains(port + "|3")) << port;
      EXPECT_EQ(db["BUFFER_PG"][port + "|0"]["profile"], "ingress_lossy_profile") << port;
    }
    int neighbours = 0;
    for (const auto& l : a->links) neighbours += l.a_device == sw.name || l.b_device == sw.name;
    EXPECT_EQ(static_cast<int>(db["INTERFACE"].size()), 2 * neighbours) << sw.name;
    EXPECT_EQ(db.contains("VLAN_INTERFACE"), sw.role == "leaf");
    const std::string frr = sonic_frr_conf(lab.plan, *a, sw);
    size_t peers = 0;
    for (size_t at = frr.find(" peer-group UPLINKS\n"); at != std::string::npos;
         at = frr.find(" peer-group UPLINKS\n", at + 1))
      ++peers;
    for (size_t at = frr.find(" peer-group DOWNLINKS\n"); at != std::string::npos;
         at = frr.find(" peer-group DOWNLINKS\n", at + 1))
      ++peers;
    EXPECT_EQ(static_cast<int>(peers), neighbours) << frr;
    // The gateway sits on the host VLAN's interface, the one config_db.json creates.
    EXPECT_EQ(frr.find("interface Vlan1000\n") != std::string::npos, sw.role == "leaf") << frr;
    const auto [rc, said] = frr_dryrun(frr);
    EXPECT_EQ(rc, 0) << sw.name << ":\n" << said;
  }
  EXPECT_EQ(sonic_port_name(lab.plan, 1), "Ethernet0");
  EXPECT_EQ(sonic_port_name(lab.plan, 2), "Ethernet4");  // 128 x 400G on 64 x 8 lanes
}

TEST(Eos, RoutedPortsCarryTheRoceProfileAndEveryNeighbour) {
  const PlannedSpec lab = load_example("roce-lab-64.yaml");
  auto a = plan_addresses(lab.plan, lab.catalog, lab.spec.addressing);
  ASSERT_TRUE(a.ok());
  for (const auto& sw : a->switches) {
    const std::string cfg = eos_config(lab.plan, *a, sw);
    int links = 0, hosts = 0;
    for (const auto& l : a->links) links += l.a_device == sw.name || l.b_device == sw.name;
    for (const auto& h : a->hosts) hosts += h.leaf == sw.name;
    EXPECT_EQ(occurrences(cfg, "   no switchport\n"), links) << sw.name;
    EXPECT_EQ(occurrences(cfg, "   service-profile ROCE\n"), links + hosts) << sw.name;
    EXPECT_EQ(occurrences(cfg, " remote-as "), links) << sw.name;
    EXPECT_EQ(occurrences(cfg, "   mtu 9214\n"), links + hosts + (hosts > 0)) << sw.name;
    EXPECT_NE(cfg.find("qos map dscp 26 to traffic-class 3"), std::string::npos);
    EXPECT_NE(cfg.find("priority-flow-control priority 3 no-drop"), std::string::npos);
    EXPECT_NE(cfg.find("router bgp " + std::to_string(sw.asn)), std::string::npos);
  }
  EXPECT_EQ(eos_port_name(lab.plan, 1), "Ethernet1/1");
  EXPECT_EQ(eos_port_name(lab.plan, 2), "Ethernet1/5");  // 2 x 400G per 800G cage
  EXPECT_EQ(eos_port_name(lab.plan, 3), "Ethernet2/1");
  // Both 400G ports of a cage need the 4-lane speed: /5 exists only when /1 runs 400g-4.
  for (const auto& sw : a->switches) {
    const std::string cfg = eos_config(lab.plan, *a, sw);
    int links = 0, hosts = 0;
    for (const auto& l : a->links) links += l.a_device == sw.name || l.b_device == sw.name;
    for (const auto& h : a->hosts) hosts += h.leaf == sw.name;
    EXPECT_EQ(occurrences(cfg, "   speed 400g-4\n"), links + hosts) << sw.name;
    EXPECT_EQ(occurrences(cfg, "   speed "), links + hosts) << sw.name;
  }
  const SwitchAddress* leaf = a->find("su01-r0-leaf");
  ASSERT_NE(leaf, nullptr);
  const std::string cfg = eos_config(lab.plan, *a, *leaf);
  EXPECT_NE(cfg.find("interface Ethernet33/5\n   description to spine02 Ethernet1/1\n   mtu "
                     "9214\n   speed 400g-4\n   no switchport\n"),
            std::string::npos)
      << cfg;
}

// A cage whose first port is unused still runs the breakout: its /1 gets the speed and is shut.
TEST(Eos, UnusedPortsOfAUsedCageKeepTheBreakout) {
  const char* spec =
      "cluster: {gpu: h100-sxm, nodes: 3, gpus_per_node: 1, nic: cx7-400g, nics_per_node: 1}\n"
      "fabric: {technology: roce, topology: clos2, scalable_unit: 3, switch: arista-7060x6}\n";
  const Catalog cat = *builtin_catalog();
  Spec s;
  const Plan plan = testing::plan_of(spec, cat, &s);
  auto a = plan_addresses(plan, cat, s.addressing);
  ASSERT_TRUE(a.ok()) << format_diagnostics(a.errors());
  for (const auto& sw : a->switches) {
    if (sw.role != "leaf") continue;
    const std::string cfg = eos_config(plan, *a, sw);
    // Hosts on ports 1-3: port 4 (Ethernet2/5) is the unused half of cage 2.
    EXPECT_NE(cfg.find("interface Ethernet2/5\n   description unused (its cage runs 400g-4)\n"
                       "   shutdown\n   speed 400g-4\n"),
              std::string::npos)
        << cfg;
  }
}

// Unnumbered: the fabric ports have no IPv4 address but IPv6 (link-local), BGP peers by
// interface and carries IPv4 with IPv6 next hops (RFC 8950), as AVD's underlay_rfc5549 writes
// it. Was: `ip address 0.0.0.0/31` on every routed port and `neighbor 0.0.0.0` for every peer.
TEST(Eos, UnnumberedPortsPeerByInterfaceOverIpv6) {
  const PlannedSpec lab = load_example("roce-lab-64.yaml");
  AddressingSpec un = lab.spec.addressing;
  un.unnumbered = true;
  auto a = plan_addresses(lab.plan, lab.catalog, un);
  ASSERT_TRUE(a.ok());
  for (const auto& sw : a->switches) {
    const std::string cfg = eos_config(lab.plan, *a, sw);
    EXPECT_EQ(cfg.find(" 0.0.0.0"), std::string::npos) << sw.name << "\n" << cfg;
    const std::vector<SwitchPort> ports = a->ports_of(sw.name);
    const bool leaf = a->subnet_of(sw.name) != nullptr;
    EXPECT_EQ(occurrences(cfg, "   ipv6 enable\n"), static_cast<int>(ports.size())) << sw.name;
    // IPv4 addresses: the loopback and a leaf's host gateway only.
    EXPECT_EQ(occurrences(cfg, "   ip address "), 1 + leaf) << sw.name << "\n" << cfg;
    EXPECT_NE(cfg.find("\nip routing ipv6 interfaces\n!\nipv6 unicast-routing\n"),
              std::string::npos)
        << cfg;
    EXPECT_EQ(cfg.find("\nip routing\n"), std::string::npos) << cfg;
    EXPECT_EQ(occurrences(cfg, "   neighbor interface "), static_cast<int>(ports.size()))
        << sw.name;
    bool up = false, down = false;
    for (const auto& p : ports) {
      (p.up ? up : down) = true;
      EXPECT_NE(cfg.find(fmt::format("interface {}\n   description to {} {}\n   mtu 9214\n"
                                     "   speed 400g-4\n   no switchport\n   ipv6 enable\n"
                                     "   service-profile ROCE\n!\n",
                                     eos_port_name(lab.plan, p.port), p.peer,
                                     eos_port_name(lab.plan, p.peer_port))),
                std::string::npos)
          << cfg;
      EXPECT_NE(cfg.find(fmt::format("   neighbor interface {} peer-group {} remote-as {}\n",
                                     eos_port_name(lab.plan, p.port),
                                     p.up ? "UPLINKS" : "DOWNLINKS", a->find(p.peer)->asn)),
                std::string::npos)
          << cfg;
    }
    // IPv4 over the IPv6 sessions, with IPv6 next hops, after the networks in router bgp.
    const size_t af = cfg.find("   !\n   address-family ipv4\n");
    ASSERT_NE(af, std::string::npos) << cfg;
    EXPECT_LT(cfg.find("   network "), af);
    for (const auto& [group, used] : {std::pair{"UPLINKS", up}, std::pair{"DOWNLINKS", down}}) {
      const std::string lines = fmt::format(
          "      neighbor {0} next-hop address-family ipv6 originate\n"
          "      neighbor {0} activate\n",
          group);
      EXPECT_EQ(cfg.find(lines, af) != std::string::npos, used) << group << "\n" << cfg;
    }
    EXPECT_TRUE(cfg.ends_with("      neighbor UPLINKS activate\n!\nend\n") ||
                cfg.ends_with("      neighbor DOWNLINKS activate\n!\nend\n"))
        << cfg;
  }
  const std::string leaf = eos_config(lab.plan, *a, *a->find("su01-r0-leaf"));
  EXPECT_NE(leaf.find("   neighbor interface Ethernet33/1 peer-group UPLINKS remote-as 65000\n"),
            std::string::npos)
      << leaf;
  // Numbered fabrics keep their /31s, IPv4 neighbours and plain `ip routing`.
  auto numbered = plan_addresses(lab.plan, lab.catalog, lab.spec.addressing);
  ASSERT_TRUE(numbered.ok());
  const std::string n = eos_config(lab.plan, *numbered, *numbered->find("su01-r0-leaf"));
  EXPECT_NE(n.find("\nip routing\n!\n"), std::string::npos) << n;
  for (const char* gone : {"ipv6", "neighbor interface", "address-family"})
    EXPECT_EQ(n.find(gone), std::string::npos) << gone << "\n" << n;
}

// Rails named in the spec replace the nicN / mlx5_N placeholders everywhere a host is named.
TEST(Hosts, RailNamesFromTheSpec) {
  PlannedSpec lab = load_example("roce-lab-64.yaml");
  AddressingSpec spec = lab.spec.addressing;
  spec.host_netdevs = {"ens1f0np0", "ens2f0np0"};
  spec.host_rdma_devices = {"mlx5_0", "mlx5_3"};
  auto a = plan_addresses(lab.plan, lab.catalog, spec);
  ASSERT_TRUE(a.ok());
  std::map<std::string, std::string> files;
  for (auto& [name, text] : host_files(lab.plan, *a)) files[name] = text;
  const std::string& np = files["hosts/node001/netplan.yaml"];
  EXPECT_NE(np.find("    ens2f0np0:\n      mtu: 9000"), std::string::npos) << np;
  EXPECT_EQ(np.find("nic"), std::string::npos) << np;
  const std::string& env = files["hosts/node001/nccl.env"];
  EXPECT_NE(env.find("NCCL_IB_HCA==mlx5_0:1,mlx5_3:1\n"), std::string::npos) << env;
  // Bootstrap over the management interface only; the placeholder until the spec names it.
  EXPECT_NE(env.find("NCCL_SOCKET_IFNAME==mgmt0\nGLOO_SOCKET_IFNAME=mgmt0\n"), std::string::npos)
      << env;
  EXPECT_NE(env.find("# mgmt0 is a placeholder"), std::string::npos) << env;
  EXPECT_NE(files["hosts/node001/roce-qos.sh"].find("mlnx_qos -i ens2f0np0 --trust dscp"),
            std::string::npos);
  EXPECT_NE(ip_plan_csv(lab.plan, *a).find("host,node001,ens2f0np0,"), std::string::npos);
  const SwitchAddress* leaf = a->find("su01-r1-leaf");
  ASSERT_NE(leaf, nullptr);
  EXPECT_NE(eos_config(lab.plan, *a, *leaf).find("node001 ens2f0np0"), std::string::npos);
}

// Two planes: every rail port of a node gets its own policy-routing table (one table per rail
// would hold two routes to the same prefix, and netplan / ip would refuse the second).
TEST(Hosts, EveryPlanePortHasItsOwnRoutingTable) {
  const char* spec =
      "cluster: {gpu: h100-sxm, nodes: 4, gpus_per_node: 2, nic: cx8-800g, nics_per_node: 1}\n"
      "fabric: {technology: roce, topology: clos2, scalable_unit: 2, switch: arista-7060x6, "
      "planes: 2}\n";
  const Catalog cat = *builtin_catalog();
  Spec s;
  const Plan plan = testing::plan_of(spec, cat, &s);
  auto a = plan_addresses(plan, cat, s.addressing);
  ASSERT_TRUE(a.ok());
  std::map<std::string, std::string> files;
  for (auto& [name, text] : host_files(plan, *a)) files[name] = text;
  const YAML::Node np = YAML::Load(files["hosts/node001/netplan.yaml"]);
  std::set<int> tables;
  for (const auto& eth : np["network"]["ethernets"])
    for (const auto& r : eth.second["routing-policy"]) tables.insert(r["table"].as<int>());
  EXPECT_EQ(tables, (std::set<int>{100, 101}));
}

// Broadcom (the 7060X6's Tomahawk 5) has no headroom script in sonic-swss: the traditional
// model, with a static lossless profile per speed and cable length named as buffermgrd names
// them, so that buffermgrd reuses it instead of writing its own.
TEST(Sonic, TraditionalBuffersOnATomahawk) {
  const PlannedSpec lab = load_example("roce-lab-64.yaml");
  auto a = plan_addresses(lab.plan, lab.catalog, lab.spec.addressing);
  ASSERT_TRUE(a.ok());
  const SwitchAddress* leaf = a->find("su01-r0-leaf");
  ASSERT_NE(leaf, nullptr);
  auto made = sonic_config_db(lab.plan, lab.catalog, *a, *leaf);
  ASSERT_TRUE(made.ok());
  const nlohmann::json& db = *made;
  const auto& meta = db["DEVICE_METADATA"]["localhost"];
  EXPECT_EQ(meta["buffer_model"], "traditional");
  EXPECT_EQ(meta["platform"], "x86_64-arista_7060x6_64pe");
  EXPECT_EQ(meta["hwsku"], "Arista-7060X6-64PE-O128S2");
  // Port 65, the first uplink: cage 33's first 400G port, on its ASIC lanes (platform.json).
  const auto& up = db["PORT"]["Ethernet256"];
  EXPECT_EQ(up["lanes"], "273,274,275,276");
  EXPECT_EQ(up["alias"], "etp33a");
  EXPECT_EQ(up["index"], "33");
  EXPECT_EQ(up["fec"], "rs");
  EXPECT_EQ(db["PORT"]["Ethernet260"]["lanes"], "277,278,279,280");
  EXPECT_EQ(db["PORT"]["Ethernet0"]["lanes"], "17,18,19,20");
  // Uplinks are hall runs (50 m), hosts row runs (20 m): the next pg_profile_lookup.ini lengths.
  EXPECT_EQ(db["CABLE_LENGTH"]["AZURE"]["Ethernet256"], "150m");
  EXPECT_EQ(db["CABLE_LENGTH"]["AZURE"]["Ethernet0"], "40m");
  EXPECT_EQ(db["BUFFER_PG"]["Ethernet256|3"]["profile"], "pg_lossless_400000_150m_profile");
  EXPECT_EQ(db["BUFFER_PG"]["Ethernet0|3"]["profile"], "pg_lossless_400000_40m_profile");
  const auto& far = db["BUFFER_PROFILE"]["pg_lossless_400000_150m_profile"];
  EXPECT_EQ(far["pool"], "ingress_lossless_pool");
  EXPECT_EQ(far["xoff"], "579584");
  EXPECT_EQ(far["size"], "18796");
  EXPECT_EQ(far["xon"], "0");
  EXPECT_EQ(far["xon_offset"], "3556");
  EXPECT_EQ(db["BUFFER_PROFILE"]["pg_lossless_400000_40m_profile"]["xoff"], "359424");
  EXPECT_EQ(db["BUFFER_POOL"]["egress_lossless_pool"]["size"], "166115492");
  EXPECT_EQ(db["BUFFER_POOL"]["ingress_lossless_pool"]["xoff"], "29423360");
  EXPECT_EQ(db["BUFFER_QUEUE"]["Ethernet256|4-6"]["profile"], "egress_lossy_profile");
  EXPECT_FALSE(db.contains("LOSSLESS_TRAFFIC_PATTERN"));
}

// The headroom of SONiC's formula (buffer_headroom_mellanox.lua) with the Tomahawk 5's 254-byte
// cells: 400G on 150 m needs 566 KiB, just under the 612140 bytes the platform's own
// pg_profile_lookup.ini gives every length up to 150 m; shorter and slower need less.
TEST(Sonic, HeadroomFollowsSpeedAndCable) {
  const Catalog cat = *builtin_catalog();
  const SonicPlatform& tomahawk = *cat.switches.at("arista-7060x6").sonic;
  const LosslessProfile far = sonic_lossless_profile(tomahawk, 400, 150);
  EXPECT_EQ(far.xoff, 579584);
  EXPECT_LT(far.xoff, 612140);
  EXPECT_GT(far.xoff, 0.9 * 612140);
  EXPECT_EQ(far.name, "pg_lossless_400000_150m_profile");
  EXPECT_LT(sonic_lossless_profile(tomahawk, 400, 40).xoff, far.xoff);
  EXPECT_LT(sonic_lossless_profile(tomahawk, 200, 150).xoff, far.xoff);
  EXPECT_EQ(sonic_lossless_profile(tomahawk, 400, 5).xoff % 1024, 0);
  EXPECT_EQ(sonic_cable_length(tomahawk, 2.5), 5);
  EXPECT_EQ(sonic_cable_length(tomahawk, 20), 40);
  EXPECT_EQ(sonic_cable_length(tomahawk, 50), 150);
  EXPECT_EQ(sonic_cable_length(tomahawk, 300), 300);  // longer than the table: as it is
}

// Spectrum: the dynamic model, whose Mellanox script computes the headroom from the tables it
// reads (LOSSLESS_TRAFFIC_PATTERN, DEFAULT_LOSSLESS_BUFFER_PARAMETER) and the platform name.
TEST(Sonic, DynamicBuffersOnASpectrum) {
  const char* spec =
      "cluster: {gpu: h100-sxm, nodes: 8, nic: cx7-400g, nics_per_node: 2}\n"
      "fabric: {technology: roce, topology: clos2, switch: sn5600}\n";
  const Catalog cat = *builtin_catalog();
  Spec s;
  const Plan plan = testing::plan_of(spec, cat, &s);
  ASSERT_EQ(plan.topo.lane_gbps, 400);
  auto a = plan_addresses(plan, cat, s.addressing);
  ASSERT_TRUE(a.ok());
  auto made = sonic_config_db(plan, cat, *a, a->switches.front());
  ASSERT_TRUE(made.ok());
  const nlohmann::json& db = *made;
  EXPECT_EQ(db["DEVICE_METADATA"]["localhost"]["buffer_model"], "dynamic");
  EXPECT_EQ(db["DEVICE_METADATA"]["localhost"]["platform"], "x86_64-nvidia_sn5600-r0");
  EXPECT_EQ(db["DEVICE_METADATA"]["localhost"]["hwsku"], "Mellanox-SN5600-O128");
  EXPECT_EQ(db["PORT"]["Ethernet4"]["lanes"], "4,5,6,7");
  EXPECT_FALSE(db["PORT"]["Ethernet4"].contains("fec"));  // left to the Spectrum firmware
  for (const auto& [key, pg] : db["BUFFER_PG"].items())
    if (key.ends_with("|3")) {
      EXPECT_EQ(pg["profile"], "NULL") << key;
    }
  EXPECT_EQ(db["LOSSLESS_TRAFFIC_PATTERN"]["AZURE"]["mtu"], "9100");
  EXPECT_EQ(db["LOSSLESS_TRAFFIC_PATTERN"]["AZURE"]["small_packet_percentage"], "100");
  EXPECT_EQ(db["DEFAULT_LOSSLESS_BUFFER_PARAMETER"]["AZURE"]["default_dynamic_th"], "0");
  EXPECT_FALSE(db["BUFFER_POOL"]["ingress_lossless_pool"].contains("size"));
  EXPECT_EQ(db["BUFFER_POOL"]["egress_lossless_pool"]["size"], "158229504");
  EXPECT_EQ(db["BUFFER_QUEUE"]["Ethernet0|0-2"]["profile"], "q_lossy_profile");
  for (const auto& [port, len] : db["CABLE_LENGTH"]["AZURE"].items()) {
    const std::string m = len.get<std::string>();
    EXPECT_EQ(m.find('.'), std::string::npos) << port << " " << m;  // YANG: [0-9]+m
  }
}

// A switch the catalog has no SONiC platform (or no fixed-port model) for: asked for by name,
// the target is an error naming fabric.switch; with all targets it is left out.
TEST(ConfigSet, TargetsTheSwitchCannotTakeAreRefusedOrLeftOut) {
  Catalog cat = *builtin_catalog();
  const std::string mine = R"(
switches:
  - id: my-800g
    technology: ethernet
    ports: 64
    port_speed: 800G
    breakout: [{ports: 128, port_speed: 400G}]
    latency_ns: 600
    price_usd: 50000
    power_w: 1300
    estimate: true
)";
  ASSERT_TRUE(merge_catalog(cat, mine, "mine.yaml").empty());
  PlannedSpec p;
  p.catalog = cat;
  p.plan = testing::plan_of(
      "cluster: {gpu: h100-sxm, nodes: 8, nic: cx7-400g, nics_per_node: 2}\n"
      "fabric: {technology: roce, topology: clos2, switch: my-800g}\n",
      cat, &p.spec);
  auto all = config_files(p, {});
  ASSERT_TRUE(all.ok()) << format_diagnostics(all.errors());
  EXPECT_EQ(std::count(all->folders.begin(), all->folders.end(), "sonic/"), 0);
  EXPECT_EQ(std::count(all->folders.begin(), all->folders.end(), "eos/"), 1);
  for (const auto& [path, text] : all->files) EXPECT_FALSE(path.starts_with("sonic/")) << path;
  auto sonic = config_files(p, {"sonic"});
  ASSERT_FALSE(sonic.ok());
  EXPECT_EQ(sonic.errors()[0].key, "fabric.switch");
  EXPECT_NE(sonic.errors()[0].message.find("no SONiC platform for my-800g"), std::string::npos);
  // `configs` skips a target it was asked for that does not fit, and says so; only when none
  // fits is it an error. By default every target left out is named, with why.
  auto some = config_targets(p, {"eos", "sonic", "hosts"});
  ASSERT_TRUE(some.ok()) << format_diagnostics(some.errors());
  EXPECT_TRUE(some->asked);
  EXPECT_EQ(some->targets, (std::set<std::string>{"eos", "host"}));
  ASSERT_EQ(some->skipped.size(), 1u);
  EXPECT_EQ(some->skipped[0].target, "sonic");
  EXPECT_EQ(some->skipped[0].key, "fabric.switch");
  EXPECT_NE(some->skipped[0].reason.find("no SONiC platform for my-800g"), std::string::npos);
  auto none = config_targets(p, {"sonic", "opensm"});
  ASSERT_FALSE(none.ok());
  ASSERT_EQ(none.errors().size(), 2u);
  EXPECT_EQ(none.errors()[0].key, "fabric.switch");
  EXPECT_EQ(none.errors()[1].key, "fabric.technology");
  EXPECT_NE(none.errors()[1].message.find("--target opensm: configures an InfiniBand subnet "
                                          "manager; the fabric is RoCE"),
            std::string::npos)
      << none.errors()[1].message;
  for (const std::vector<std::string>& every :
       {std::vector<std::string>{}, std::vector<std::string>{"all"}}) {
    auto d = config_targets(p, every);
    ASSERT_TRUE(d.ok());
    EXPECT_FALSE(d->asked);
    EXPECT_TRUE(d->targets.empty());
    ASSERT_EQ(d->skipped.size(), 2u);
    EXPECT_EQ(d->skipped[0].target, "sonic");
    EXPECT_EQ(d->skipped[1].target, "opensm");
  }
  EXPECT_FALSE(config_targets(p, {"junos"}).ok());
  // A modular chassis: its EOS names have a line card, which the port model lacks.
  PlannedSpec m;
  m.catalog = cat;
  m.plan = testing::plan_of(
      "cluster: {gpu: h100-sxm, nodes: 8, nic: cx7-400g, nics_per_node: 2}\n"
      "fabric: {technology: roce, topology: clos2, switch: arista-7800r3}\n",
      cat, &m.spec);
  auto chassis = config_files(m, {});
  ASSERT_TRUE(chassis.ok()) << format_diagnostics(chassis.errors());
  EXPECT_EQ(std::count(chassis->folders.begin(), chassis->folders.end(), "eos/"), 0);
  auto eos = config_files(m, {"eos"});
  ASSERT_FALSE(eos.ok());
  EXPECT_NE(eos.errors()[0].message.find("arista-7800r3 is modular"), std::string::npos);
}

// NVUE breaks out the cages it uses (Cumulus 5.4+: `link breakout 2x`) and names the ports
// swp<cage>s<n>, the same cages EOS and SONiC use.
TEST(Nvue, BreakoutCagesAndCumulusNames) {
  const PlannedSpec lab = load_example("roce-lab-64.yaml");
  auto a = plan_addresses(lab.plan, lab.catalog, lab.spec.addressing);
  ASSERT_TRUE(a.ok());
  const SwitchAddress* leaf = a->find("su01-r0-leaf");
  ASSERT_NE(leaf, nullptr);
  const std::string nv = nvue_commands(lab.plan, *a, *leaf);
  auto count = [&](const std::string& what) {
    int n = 0;
    for (size_t at = nv.find(what); at != std::string::npos; at = nv.find(what, at + 1)) ++n;
    return n;
  };
  EXPECT_EQ(count("nv set interface swp33 link breakout 2x\n"), 1) << nv;
  EXPECT_EQ(count(" link breakout 2x\n"), 8);  // cages 1-4 (hosts) and 33-36 (uplinks)
  EXPECT_LT(nv.find("swp33 link breakout"), nv.find("swp33s0 link state up"));
  EXPECT_NE(nv.find("nv set interface swp33s0 description \"to spine01 swp1s0\"\n"),
            std::string::npos);
  EXPECT_NE(nv.find("nv set interface swp33s0 ip address 10.1.0.0/31\n"), std::string::npos);
  EXPECT_NE(nv.find("nv set interface swp33s1 ip address 10.1.0.2/31\n"), std::string::npos);
  EXPECT_NE(nv.find("nv set interface swp1s1 bridge domain br_default access 1000\n"),
            std::string::npos);
  EXPECT_EQ(nv.find("swp65"), std::string::npos);  // no logical numbering
  // The flavours agree: cabling port 65 is EOS Ethernet33/1, SONiC Ethernet256, Cumulus swp33s0.
  EXPECT_EQ(cumulus_port_name(lab.plan, 65), "swp33s0");
  EXPECT_EQ(eos_port_name(lab.plan, 65), "Ethernet33/1");
  EXPECT_EQ(sonic_port_name(lab.plan, 65), "Ethernet256");
  EXPECT_EQ(cumulus_port_name(lab.plan, 66), "swp33s1");
  EXPECT_EQ(eos_port_name(lab.plan, 66), "Ethernet33/5");
  EXPECT_EQ(sonic_port_name(lab.plan, 66), "Ethernet260");
  // Unnumbered: BGP on the interfaces, by the same names.
  AddressingSpec un = lab.spec.addressing;
  un.unnumbered = true;
  auto b = plan_addresses(lab.plan, lab.catalog, un);
  ASSERT_TRUE(b.ok());
  const std::string nu = nvue_commands(lab.plan, *b, *b->find("su01-r0-leaf"));
  EXPECT_NE(nu.find("nv set vrf default router bgp neighbor swp33s0 remote-as external\n"),
            std::string::npos)
      << nu;
  EXPECT_EQ(sh_syntax(nu), 0);
}

// Every switch hashes with the seed the simulator gave it (fabric.ecmp_hash.seed): its own by
// default, one per tier, or one for all.
TEST(Configs, EachSwitchGetsTheSeedItWasSimulatedWith) {
  PlannedSpec lab = load_example("roce-lab-64.yaml");
  for (EcmpSeedPolicy policy :
       {EcmpSeedPolicy::kPerSwitch, EcmpSeedPolicy::kPerTier, EcmpSeedPolicy::kSame}) {
    lab.plan.ecmp_seed = policy;
    auto a = plan_addresses(lab.plan, lab.catalog, lab.spec.addressing);
    ASSERT_TRUE(a.ok());
    std::set<uint32_t> seeds;
    for (const auto& sw : a->switches) {
      const std::string nv = nvue_commands(lab.plan, *a, sw);
      const std::string line = fmt::format("nv set system forwarding hash-seed {}\n", sw.ecmp_seed);
      EXPECT_NE(nv.find(line), std::string::npos) << sw.name << "\n" << nv;
      // SONiC takes the same seed from DEVICE_METADATA; EOS's comment names it.
      const auto db = sonic_config_db(lab.plan, lab.catalog, *a, sw);
      ASSERT_TRUE(db.ok());
      EXPECT_EQ((*db)["DEVICE_METADATA"]["localhost"]["ecmp_hash_seed"],
                std::to_string(sw.ecmp_seed))
          << sw.name;
      EXPECT_NE(eos_config(lab.plan, *a, sw)
                    .find(fmt::format("hashed this switch with seed {} (fabric.ecmp_hash.seed\n! {})",
                                      sw.ecmp_seed, ecmp_seed_policy_name(policy))),
                std::string::npos)
          << sw.name;
      const int tier = sw.role == "leaf" ? 1 : sw.role == "spine" ? 2 : 3;
      if (policy != EcmpSeedPolicy::kPerSwitch) {  // neither depends on the switch's index
        EXPECT_EQ(sw.ecmp_seed, ecmp_hash_seed(policy, 0, tier, 0)) << sw.name;
      }
      seeds.insert(sw.ecmp_seed);
    }
    const size_t want = policy == EcmpSeedPolicy::kPerSwitch ? a->switches.size()
                        : policy == EcmpSeedPolicy::kPerTier ? 2
                                                             : 1;
    EXPECT_EQ(seeds.size(), want) << ecmp_seed_policy_name(policy);
  }
}

// Cumulus 5.15 writes enabled/disabled for NVUE's booleans and `ipv4 address` for an interface's
// address (its "New and Changed NVUE Commands"); 5.14 and earlier on/off and `ip address`.
TEST(Nvue, TheReleaseDecidesTheWords) {
  const PlannedSpec lab = load_example("roce-lab-64.yaml");
  auto a = plan_addresses(lab.plan, lab.catalog, lab.spec.addressing);
  ASSERT_TRUE(a.ok());
  const SwitchAddress& leaf = *a->find("su01-r0-leaf");
  const std::string old = nvue_commands(lab.plan, *a, leaf, parse_cumulus_release("5.14"));
  const std::string now = nvue_commands(lab.plan, *a, leaf, parse_cumulus_release("5.15"));
  EXPECT_NE(old.find("(Cumulus Linux 5.14)"), std::string::npos);
  EXPECT_NE(old.find("nv set system forwarding ecmp-hash source-port on\n"), std::string::npos);
  EXPECT_NE(old.find("path-selection multipath aspath-ignore on\n"), std::string::npos);
  EXPECT_NE(old.find("nv set interface lo ip address 10.0.0.0/32\n"), std::string::npos);
  EXPECT_NE(now.find("(Cumulus Linux 5.15)"), std::string::npos);
  EXPECT_NE(now.find("nv set system forwarding ecmp-hash source-port enabled\n"),
            std::string::npos);
  EXPECT_NE(now.find("path-selection multipath aspath-ignore enabled\n"), std::string::npos);
  EXPECT_NE(now.find("nv set interface lo ipv4 address 10.0.0.0/32\n"), std::string::npos);
  EXPECT_NE(now.find("nv set interface swp33s0 ipv4 address 10.1.0.0/31\n"), std::string::npos);
  EXPECT_NE(now.find("nv set interface vlan1000 ipv4 address "), std::string::npos);
  EXPECT_EQ(now.find(" on\n"), std::string::npos) << now;
  EXPECT_EQ(now.find(" ip address "), std::string::npos) << now;
  EXPECT_EQ(parse_cumulus_release("5.10").minor, 10);
  EXPECT_TRUE(parse_cumulus_release("5.15").at_least(5, 15));
  EXPECT_FALSE(parse_cumulus_release("5.9").at_least(5, 15));
}

// Where the plan balances adaptively (a Spectrum-4 fabric's default), the NVUE scripts turn
// adaptive routing on, globally and on every routed port, in the release's words; a hashing plan
// gets none. EOS written for a switch that is not Arista's says so, and that it hashes where the
// plan is adaptive. (The simulator had run adaptive routing that no configuration turned on.)
TEST(Nvue, AdaptiveRoutingWhereThePlanIsAdaptive) {
  PlannedSpec lab = load_example("roce-lab-64.yaml");
  auto a = plan_addresses(lab.plan, lab.catalog, lab.spec.addressing);
  ASSERT_TRUE(a.ok());
  const SwitchAddress& leaf = *a->find("su01-r0-leaf");
  ASSERT_NE(lab.plan.load_balancing, LoadBalancing::kAdaptive);
  EXPECT_EQ(nvue_commands(lab.plan, *a, leaf, parse_cumulus_release("5.14")).find("adaptive"),
            std::string::npos);
  Plan adaptive = lab.plan;
  adaptive.load_balancing = LoadBalancing::kAdaptive;
  const std::string old = nvue_commands(adaptive, *a, leaf, parse_cumulus_release("5.14"));
  const std::string now = nvue_commands(adaptive, *a, leaf, parse_cumulus_release("5.15"));
  EXPECT_NE(old.find("nv set router adaptive-routing enable on\n"), std::string::npos);
  EXPECT_NE(old.find("nv set interface swp33s0 router adaptive-routing enable on\n"),
            std::string::npos)
      << old;
  EXPECT_NE(now.find("nv set router adaptive-routing state enabled\n"), std::string::npos);
  // Every routed port, no host port (those are bridged: adaptive routing is for routed ECMP).
  size_t routed = 0, ar = 0;
  for (const auto& p : a->ports_of(leaf.name)) {
    (void)p;
    ++routed;
  }
  for (size_t at = now.find("router adaptive-routing state enabled"); at != std::string::npos;
       at = now.find("router adaptive-routing state enabled", at + 1))
    ++ar;
  EXPECT_EQ(ar, routed + 1);  // and the global one
  // EOS on a non-Arista switch says so, and that it hashes.
  adaptive.sw.name = "NVIDIA Spectrum-4 SN5600";
  const std::string eos = eos_config(adaptive, *a, leaf);
  EXPECT_NE(eos.find("! EOS runs on Arista switches;"), std::string::npos);
  EXPECT_NE(eos.find("this configuration hashes flows (ECMP)"), std::string::npos);
  EXPECT_EQ(eos_config(lab.plan, *a, leaf).find("EOS runs on Arista"), std::string::npos);
}

// The RoCE queue marks ECN at the thresholds EOS, SONiC and the qos simulator use (150 KiB,
// 1.5 MiB, 20 %: plan/roce_qos.h), set after the RoCE profile, in every release. Was: only
// `nv set qos roce mode lossless`, which keeps Cumulus' own 150000 B / 1500000 B / 100 %.
TEST(Nvue, EcnThresholdsAreTheOtherFlavours) {
  const PlannedSpec lab = load_example("roce-lab-64.yaml");
  auto a = plan_addresses(lab.plan, lab.catalog, lab.spec.addressing);
  ASSERT_TRUE(a.ok());
  const std::string ecn = "nv set qos congestion-control default-global traffic-class 3 ";
  for (const char* release : {"5.4", "5.14", "5.15"})
    for (const auto& sw : a->switches) {
      const std::string nv = nvue_commands(lab.plan, *a, sw, parse_cumulus_release(release));
      const size_t roce = nv.find("nv set qos roce mode lossless\n");
      ASSERT_NE(roce, std::string::npos) << nv;
      EXPECT_NE(nv.find("\n" + ecn + "min-threshold 153600\n", roce), std::string::npos) << nv;
      EXPECT_NE(nv.find("\n" + ecn + "max-threshold 1572864\n", roce), std::string::npos) << nv;
      EXPECT_NE(nv.find("\n" + ecn + "probability 20\n", roce), std::string::npos) << nv;
      EXPECT_EQ(sh_syntax(nv), 0) << release;
    }
  // The same numbers as SONiC's WRED profile (bytes) and EOS's ECN line (kbytes, percent).
  const SwitchAddress& leaf = *a->find("su01-r0-leaf");
  auto db = sonic_config_db(lab.plan, lab.catalog, *a, leaf);
  ASSERT_TRUE(db.ok());
  const auto& wred = (*db)["WRED_PROFILE"]["ROCE_LOSSLESS"];
  EXPECT_EQ(wred["green_min_threshold"], "153600");
  EXPECT_EQ(wred["green_max_threshold"], "1572864");
  EXPECT_EQ(wred["green_drop_probability"], "20");
  EXPECT_NE(eos_config(lab.plan, *a, leaf)
                .find("random-detect ecn minimum-threshold 150 kbytes maximum-threshold 1536 "
                      "kbytes max-mark-probability 20\n"),
            std::string::npos);
}

// The FRR that Cumulus runs (NVUE writes /etc/frr/frr.conf from the commands) with the
// Cumulus port names, numbered and unnumbered: real FRR accepts it. The standalone frr/ files
// name the ports the same way, so that they and nvue/ agree port by port.
TEST(Frr, CumulusPortNamesAreAcceptedByRealFrr) {
  const PlannedSpec lab = load_example("roce-lab-64.yaml");
  for (bool unnumbered : {false, true}) {
    AddressingSpec spec = lab.spec.addressing;
    spec.unnumbered = unnumbered;
    auto a = plan_addresses(lab.plan, lab.catalog, spec);
    ASSERT_TRUE(a.ok());
    for (const auto& sw : a->switches) {
      const std::string conf = frr_conf(
          *a, sw, [&](int p) { return cumulus_port_name(lab.plan, p); }, "vlan1000");
      EXPECT_EQ(conf.find("swp6"), std::string::npos) << conf;  // no logical port 65-72
      const auto [rc, said] = frr_dryrun(conf);
      EXPECT_EQ(rc, 0) << sw.name << ":\n" << said << conf;
      const std::string standalone = frr_conf(lab.plan, *a, sw);
      EXPECT_EQ(conf.substr(0, conf.find("interface vlan1000")),
                standalone.substr(0, standalone.find("interface hosts")))
          << standalone;
    }
    // Every routed port of the leaf's frr/ file is a port of its NVUE script, by the same name.
    const SwitchAddress& leaf = *a->find("su01-r0-leaf");
    const std::string frr = frr_conf(lab.plan, *a, leaf);
    const std::string nv = nvue_commands(lab.plan, *a, leaf);
    int ports = 0;
    for (const auto& p : a->ports_of(leaf.name)) {
      const std::string name = frr_port_name(lab.plan, p.port);
      EXPECT_NE(frr.find("interface " + name + "\n description to " + p.peer + " " +
                         frr_port_name(lab.plan, p.peer_port) + "\n"),
                std::string::npos)
          << frr;
      EXPECT_NE(nv.find("nv set interface " + name + " description \"to " + p.peer + " " +
                        frr_port_name(lab.plan, p.peer_port) + "\"\n"),
                std::string::npos)
          << nv;
      ++ports;
    }
    EXPECT_EQ(ports, lab.plan.topo.leaf_up);
    if (unnumbered) {
      EXPECT_NE(frr.find(" neighbor swp33s0 interface peer-group UPLINKS\n"), std::string::npos)
          << frr;
    }
  }
}

// NCCL's and Gloo's bootstrap and torchrun's rendezvous run over the management interface the
// spec names, never a rail; the HCA list matches names exactly, which matters from ten RDMA
// devices a node (mlx5_1 would also select mlx5_10 ... mlx5_15).
TEST(Hosts, BootstrapOverTheManagementInterface) {
  const char* spec =
      "cluster: {gpu: h100-sxm, nodes: 2, nic: cx7-400g, nics_per_node: 8}\n"
      "fabric: {technology: roce, topology: clos2, switch: arista-7060x6, planes: 2}\n"
      "addressing: {mgmt_netdev: eno1}\n";
  const Catalog cat = *builtin_catalog();
  Spec s;
  const Plan plan = testing::plan_of(spec, cat, &s);
  auto a = plan_addresses(plan, cat, s.addressing);
  ASSERT_TRUE(a.ok()) << format_diagnostics(a.errors());
  std::map<std::string, std::string> files;
  for (auto& [name, text] : host_files(plan, *a)) files[name] = text;
  const std::string& env = files["hosts/node001/nccl.env"];
  EXPECT_NE(env.find("\nNCCL_SOCKET_IFNAME==eno1\nGLOO_SOCKET_IFNAME=eno1\n"), std::string::npos)
      << env;
  EXPECT_EQ(env.find("placeholder"), std::string::npos) << env;
  const auto at = env.find("NCCL_IB_HCA==mlx5_0:1,");
  ASSERT_NE(at, std::string::npos) << env;
  const std::string hca = env.substr(at, env.find('\n', at) - at);
  for (int d = 0; d < 16; ++d)  // 8 NICs x 2 planes, each named once and exactly
    EXPECT_NE((hca + ",").find(fmt::format("mlx5_{}:1,", d)), std::string::npos) << d << hca;
  const std::string& run = files["hosts/node002/torchrun.sh"];
  EXPECT_NE(run.find("--rdzv-endpoint=\"${MASTER_ADDR:-node001}:29500\""), std::string::npos)
      << run;
  EXPECT_EQ(run.find("10.128."), std::string::npos) << run;  // no rail address
  EXPECT_EQ(sh_syntax(run), 0) << run;
}

TEST(Ansible, InventoryGroupsEverySwitchAndNode) {
  const PlannedSpec lab = load_example("roce-lab-64.yaml");
  auto a = plan_addresses(lab.plan, lab.catalog, lab.spec.addressing);
  ASSERT_TRUE(a.ok());
  const YAML::Node inv = YAML::Load(ansible_inventory(lab.plan, *a));
  const YAML::Node groups = inv["all"]["children"];
  EXPECT_EQ(groups["leaves"]["hosts"].size(), 2u);
  EXPECT_EQ(groups["spines"]["hosts"].size(), 2u);  // never a single spine
  size_t nodes = 0;
  for (const auto& unit : groups["gpu_nodes"]["children"]) {
    for (const auto& node : unit.second["hosts"]) {
      ++nodes;
      EXPECT_EQ(static_cast<int>(node.second["rails"].size()), lab.plan.nics_per_node);
    }
  }
  EXPECT_EQ(static_cast<int>(nodes), lab.plan.nodes);
  const YAML::Node play = YAML::Load(ansible_playbook());
  ASSERT_TRUE(play.IsSequence());
  EXPECT_EQ(play[0]["hosts"].as<std::string>(), "gpu_nodes");
  EXPECT_GE(play[0]["tasks"].size(), 5u);
}

TEST(OpenSm, RoutingEngineFitsTheTopology) {
  const PlannedSpec seed = load_example("seed-70b-1024.yaml");  // clos2, adaptive routing on QM9700
  EXPECT_EQ(opensm_routing_engine(seed.plan), "ar_ftree,ftree,updn");
  Plan ecmp = seed.plan;
  ecmp.load_balancing = LoadBalancing::kEcmp;
  EXPECT_EQ(opensm_routing_engine(ecmp), "ftree,updn");
  Plan dfly = seed.plan;
  dfly.topo.kind = TopologyKind::kDragonfly;
  EXPECT_EQ(opensm_routing_engine(dfly), "dfp,updn");
  const std::string conf = opensm_conf(seed.plan);
  EXPECT_NE(conf.find("routing_engine ar_ftree,ftree,updn\n"), std::string::npos) << conf;
  EXPECT_NE(conf.find("partition_config_file /etc/opensm/partitions.conf\n"), std::string::npos);
  EXPECT_NE(opensm_partitions().find("Default=0x7fff, ipoib, mtu=5 : ALL=full;"),
            std::string::npos);
}

TEST(Hosts, EveryNodeGetsItsRailsAndNcclEnvironment) {
  const PlannedSpec lab = load_example("roce-lab-64.yaml");
  auto a = plan_addresses(lab.plan, lab.catalog, lab.spec.addressing);
  ASSERT_TRUE(a.ok());
  const auto files = host_files(lab.plan, *a);
  EXPECT_EQ(static_cast<int>(files.size()), 6 * lab.plan.nodes);
  int netplans = 0;
  for (const auto& [name, text] : files) {
    if (name.ends_with("netplan.yaml")) {
      ++netplans;
      const YAML::Node n = YAML::Load(text);
      const YAML::Node eth = n["network"]["ethernets"];
      ASSERT_EQ(static_cast<int>(eth.size()), lab.plan.nics_per_node) << name;
      for (const auto& e : eth) {
        EXPECT_EQ(e.second["mtu"].as<int>(), kHostMtu);
        EXPECT_EQ(e.second["routes"].size(), 2u);
        EXPECT_EQ(e.second["routing-policy"][0]["table"].as<int>(),
                  e.second["routes"][1]["table"].as<int>());
      }
    }
    if (name.ends_with("nccl.env")) {
      // '=': exact names, or mlx5_1 would also select mlx5_10 ... mlx5_19.
      EXPECT_NE(text.find("NCCL_IB_HCA==mlx5_0:1,mlx5_1:1\n"), std::string::npos) << text;
      EXPECT_NE(text.find("NCCL_IB_TC=106\n"), std::string::npos);
      EXPECT_EQ(text.find("NCCL_IB_QPS_PER_CONNECTION"), std::string::npos);  // lab is ecmp
    }
    if (name.ends_with("roce-qos.sh")) {
      EXPECT_NE(text.find("--trust dscp --pfc 0,0,0,1,0,0,0,0"), std::string::npos) << text;
    }
    if (name.ends_with(".sh")) {
      EXPECT_EQ(sh_syntax(text), 0) << name << ":\n" << text;
    }
  }
  EXPECT_EQ(netplans, lab.plan.nodes);
  // NVUE scripts: valid shell, one BGP neighbour per routed link, lossless RoCE.
  for (const auto& sw : a->switches) {
    const std::string nv = nvue_commands(lab.plan, *a, sw);
    EXPECT_EQ(sh_syntax(nv), 0) << nv;
    int links = 0;
    for (const auto& l : a->links) links += l.a_device == sw.name || l.b_device == sw.name;
    size_t n = 0;
    for (size_t at = nv.find("remote-as external"); at != std::string::npos;
         at = nv.find("remote-as external", at + 1))
      ++n;
    EXPECT_EQ(static_cast<int>(n), links) << sw.name;
    EXPECT_NE(nv.find("nv set qos roce mode lossless"), std::string::npos);
    EXPECT_NE(nv.find("nv set system forwarding ecmp-hash source-port on"), std::string::npos);
    EXPECT_NE(nv.find("nv set router bgp autonomous-system " + std::to_string(sw.asn)),
              std::string::npos);
    // Saved to the startup configuration whatever auto save is set to.
    EXPECT_TRUE(nv.ends_with("nv config apply --assume-yes\nnv config save\n")) << nv;
  }
  // ecmp-multi-qp spreads a connection over more QPs (more UDP source ports to hash).
  Plan multi = lab.plan;
  multi.load_balancing = LoadBalancing::kEcmpMultiQp;
  for (const auto& [name, text] : host_files(multi, *a)) {
    if (name.ends_with("nccl.env")) {
      EXPECT_NE(text.find("NCCL_IB_QPS_PER_CONNECTION=4"), std::string::npos);
    }
  }
}

}  // namespace
}  // namespace gf

namespace gf {

// networks: every OOB endpoint of cabling.csv gets one address in networks.oob.subnet; each
// compute switch's configuration in every flavour holds its own management address.
TEST(Networks, EveryEndpointIsAddressedAndEverySwitchHasItsManagementInterface) {
  const PlannedSpec ex = testing::load_example("networks-dgx-256.yaml");
  ASSERT_TRUE(ex.plan.networks.has_value());
  auto set = config_files(ex, {});
  ASSERT_TRUE(set.ok()) << format_diagnostics(set.errors());
  std::map<std::string, std::string> files;
  for (const auto& [path, content] : set->files) files[path] = content;
  long long oob_links = 0;
  for_each_network_link(ex.plan, [&](const NetworkLink& l) {
    if (l.network == NetworkKind::kOob && l.a_device.rfind("oob-", 0) != 0) ++oob_links;
  });
  // ip-plan.csv: one oob row per OOB endpoint, every address unique within its network.
  std::istringstream ip(files.at("ip-plan.csv"));
  std::set<std::string> seen;
  std::map<std::string, std::string> mgmt;
  long long oob_rows = 0;
  for (std::string line; std::getline(ip, line);) {
    const auto f = split_csv(line);
    if (f.size() < 4) continue;
    if (f[0] == "oob" || f[0] == "inband" || f[0] == "storage") {
      EXPECT_TRUE(seen.insert(f[3]).second) << "address used twice: " << line;
    }
    if (f[0] == "oob") {
      ++oob_rows;
      EXPECT_EQ(f[3].rfind("10.16.", 0), 0u) << line;
      if (f[2] == "mgmt0") mgmt[f[1]] = f[3];
    }
  }
  EXPECT_EQ(oob_rows, oob_links);
  ASSERT_EQ(set->addresses.switches.size(), static_cast<size_t>(ex.plan.switch_total));
  for (const auto& sw : set->addresses.switches) {
    ASSERT_TRUE(mgmt.count(sw.name)) << sw.name;
    const std::string& a = mgmt[sw.name];
    const std::string eos = files.at("eos/" + sw.name + ".cfg");
    EXPECT_NE(eos.find("interface Management1\n   vrf MGMT\n   ip address " + a + "\n"),
              std::string::npos)
        << eos;
    EXPECT_EQ(eos.substr(eos.size() - 4), "end\n");
    const auto db = nlohmann::json::parse(files.at("sonic/" + sw.name + "/config_db.json"));
    EXPECT_EQ(db["MGMT_INTERFACE"]["eth0|" + a]["gwaddr"], "10.16.0.1");
    EXPECT_EQ(db["MGMT_PORT"]["eth0"]["admin_status"], "up");
    const std::string nv = files.at("nvue/" + sw.name + ".sh");
    EXPECT_LT(nv.find("nv set interface eth0 ip address " + a), nv.find("nv config apply"));
    EXPECT_EQ(sh_syntax(nv), 0);
  }
  // The in-band switches bridge their VLAN; every server has its bond and storage addresses.
  const std::string ib = files.at("networks/inband-leaf-a01.sh");
  EXPECT_NE(ib.find("nv set bridge domain br_default vlan 20"), std::string::npos);
  // node001's in-band port is half of its LACP bond, an MLAG bond of the leaf pair.
  EXPECT_NE(ib.find("nv set interface bond1 bond member swp1\n"), std::string::npos) << ib;
  EXPECT_NE(ib.find("nv set interface bond1 bridge domain br_default access 20"),
            std::string::npos);
  EXPECT_EQ(sh_syntax(ib), 0);
  const auto np = YAML::Load(files.at("hosts/node001/netplan-networks.yaml"));
  EXPECT_EQ(np["network"]["bonds"]["bond0"]["interfaces"].size(), 2u);
  EXPECT_EQ(
      np["network"]["ethernets"]["stor0"]["addresses"][0].as<std::string>().rfind("10.64.", 0), 0u);
}

// A storage fabric of InfiniBand switches gets its own subnet manager's configuration, not the
// NVUE scripts an Ethernet network's switches get.
TEST(Networks, AnInfinibandStorageFabricGetsItsOwnSubnetManager) {
  const PlannedSpec planned =
      testing::load_example_edited("networks-dgx-256.yaml", "    switch: auto\n    vlan: 30",
                                   "    switch: qm9700\n    vlan: 30");
  ASSERT_TRUE(planned.plan.networks.has_value());
  auto set = config_files(planned, {});
  ASSERT_TRUE(set.ok()) << format_diagnostics(set.errors());
  std::map<std::string, std::string> files;
  for (const auto& [path, content] : set->files) files[path] = content;
  ASSERT_TRUE(files.count("networks/storage-opensm/opensm.conf"));
  const std::string& sm = files.at("networks/storage-opensm/opensm.conf");
  EXPECT_NE(sm.find("OpenSM for the storage network"), std::string::npos) << sm;
  EXPECT_NE(sm.find("routing_engine "), std::string::npos);
  EXPECT_TRUE(files.count("networks/storage-opensm/partitions.conf"));
  for (const auto& [path, content] : files) {
    const bool storage_script =
        path.rfind("networks/storage-", 0) == 0 && path.find(".sh") != std::string::npos;
    EXPECT_FALSE(storage_script) << path << " is an NVUE script for an InfiniBand switch";
  }
  EXPECT_TRUE(files.count("networks/inband-leaf-a01.sh"));  // the Ethernet ones still get theirs
}

// With isolation: vlan on an InfiniBand fabric the storage leaves are switches of the compute
// subnet: its SM routes them (opensm.conf says so), and they get no subnet manager of their own.
TEST(Networks, VlanStorageLeavesJoinTheComputeSubnet) {
  const PlannedSpec vlan = testing::load_example_edited(
      "networks-dgx-256.yaml", {{"  technology: roce\n  switch: arista-7060x6\n",
                                 "  technology: infiniband\n  switch: qm9700\n"},
                                {"  isolation: physical", "  isolation: vlan"}});
  ASSERT_EQ(vlan.plan.technology, Technology::kInfiniband);
  ASSERT_TRUE(vlan.plan.networks.has_value());
  auto set = config_files(vlan, {});
  ASSERT_TRUE(set.ok()) << format_diagnostics(set.errors());
  std::map<std::string, std::string> files;
  for (const auto& [path, content] : set->files) files[path] = content;
  EXPECT_FALSE(files.count("networks/storage-opensm/opensm.conf"));
  ASSERT_TRUE(files.count("opensm/opensm.conf"));
  EXPECT_NE(files.at("opensm/opensm.conf").find("storage network's 2 qm9700 leaves"),
            std::string::npos)
      << files.at("opensm/opensm.conf");
}

// A cable between two switches of the other networks is a trunk tagged alike at both ends (a
// leaf's uplink and its spine's down port), never an access port at one end; OOB switches that
// uplink into the in-band network hand their VLAN to it, whose top tier holds the OOB gateway
// the switches' eth0 routes through (DGX SuperPOD H100 RA, "two uplinks per OOB to in-band").
TEST(Networks, SwitchToSwitchLinksAreTrunksTaggedAlikeAtBothEnds) {
  const PlannedSpec ex = testing::load_example("networks-superpod-h100-4su.yaml");
  ASSERT_TRUE(ex.plan.networks.has_value());
  const NetworkPlan* oob = ex.plan.networks->find(NetworkKind::kOob);
  ASSERT_TRUE(oob && oob->uplinks_to_inband);
  auto set = config_files(ex, {});
  ASSERT_TRUE(set.ok()) << format_diagnostics(set.errors());
  long long inband_trunks = 0, oob_uplinks = 0;
  for_each_network_link(ex.plan, [&](const NetworkLink& l) {
    const bool switches = l.a_device.rfind("inband-", 0) == 0 || l.a_device.rfind("oob-", 0) == 0;
    if (l.peer_link || !switches) return;
    if (l.network == NetworkKind::kInband && l.b_device.rfind("inband-", 0) == 0) ++inband_trunks;
    if (l.network == NetworkKind::kOob && l.b_device.rfind("inband-", 0) == 0) ++oob_uplinks;
  });
  ASSERT_GT(inband_trunks, 0);
  ASSERT_GT(oob_uplinks, 0);
  long long tagged20 = 0, tagged10 = 0, uplink_bonds = 0;
  std::map<std::string, int> oob_bond_ends;  // OOB switch -> in-band MLAG bonds naming it
  bool oob_gateway = false;
  for (const auto& [path, content] : set->files) {
    if (path.rfind("networks/", 0) != 0 || path.find(".sh") == std::string::npos) continue;
    std::istringstream in(content);
    for (std::string line; std::getline(in, line);) {
      if (line == "nv set interface uplink bridge domain br_default vlan 10") ++uplink_bonds;
      if (line.rfind("nv set interface bond", 0) == 0 &&
          line.find(" description oob-") != std::string::npos)
        ++oob_bond_ends[line.substr(line.find("oob-"))];
      if (line.rfind("nv set interface swp", 0) != 0) continue;
      tagged20 += line.ends_with("bridge domain br_default vlan 20");
      tagged10 += line.ends_with("bridge domain br_default vlan 10");
    }
    if (path.find("inband-spine") != std::string::npos) {
      EXPECT_EQ(content.find(" access "), std::string::npos) << path << ": a spine faces leaves";
      oob_gateway =
          oob_gateway ||
          content.find("nv set interface vlan10 ip vrr address 10.16.0.1/") != std::string::npos;
    }
  }
  // Each cable tagged at both ends; the in-band trunks carry the OOB VLAN too. An OOB switch's
  // two uplinks to an MLAG pair are one LACP bond, and one MLAG bond on each leaf of the pair
  // (two plain trunks and the peer link would close a loop in the OOB VLAN).
  EXPECT_EQ(tagged20, 2 * inband_trunks);
  // (Two uplinks a bonded OOB switch, each tagged at both ends, are its bonds instead.)
  EXPECT_EQ(tagged10 + 4 * static_cast<long long>(oob_bond_ends.size()),
            2 * (inband_trunks + oob_uplinks));
  EXPECT_GT(uplink_bonds, 0);
  EXPECT_EQ(static_cast<long long>(oob_bond_ends.size()), uplink_bonds);
  for (const auto& [sw, ends] : oob_bond_ends) EXPECT_EQ(ends, 2) << sw;
  EXPECT_TRUE(oob_gateway);
}

// The servers' in-band bond is LACP across a leaf pair (netplan bond0, 802.3ad): both leaves
// run MLAG over their peer link with one system MAC, each names the other's management address
// as its backup, and give every dual-attached server a bond with the same MLAG id.
TEST(Networks, InbandLeafPairsRunMlagForTheServersBonds) {
  const PlannedSpec ex = testing::load_example("networks-superpod-h100-4su.yaml");
  auto set = config_files(ex, {});
  ASSERT_TRUE(set.ok()) << format_diagnostics(set.errors());
  std::map<std::string, std::string> files;
  for (const auto& [path, content] : set->files) files[path] = content;
  auto lines = [](const std::string& text, const std::string& prefix) {
    std::vector<std::string> out;
    std::istringstream in(text);
    for (std::string l; std::getline(in, l);)
      if (l.rfind(prefix, 0) == 0) out.push_back(l);
    return out;
  };
  int pairs = 0;
  for (int i = 1; files.count(fmt::format("networks/inband-leaf-a{:02}.sh", i)); ++i) {
    const std::string a = fmt::format("inband-leaf-a{:02}", i),
                      b = fmt::format("inband-leaf-b{:02}", i);
    const std::string& fa = files.at("networks/" + a + ".sh");
    const std::string& fb = files.at("networks/" + b + ".sh");
    const auto mac_a = lines(fa, "nv set mlag mac-address "),
               mac_b = lines(fb, "nv set mlag mac-address ");
    ASSERT_EQ(mac_a.size(), 1u) << a;
    EXPECT_EQ(mac_a, mac_b) << a;
    // Each leaf's own management address, as its script sets eth0.
    auto eth0 = [&](const std::string& text) {
      const auto l = lines(text, "nv set interface eth0 ip address ");
      return l.empty() ? std::string() : l[0].substr(33, l[0].find('/') - 33);
    };
    const std::string ip_a = eth0(fa), ip_b = eth0(fb);
    ASSERT_FALSE(ip_a.empty() || ip_b.empty()) << a;
    EXPECT_NE(fa.find("nv set mlag backup " + ip_b + " vrf mgmt\n"), std::string::npos) << fa;
    EXPECT_NE(fb.find("nv set mlag backup " + ip_a + " vrf mgmt\n"), std::string::npos) << fb;
    EXPECT_EQ(lines(fa, "nv set interface peerlink bond member ").size(), 2u);
    // The same servers, in the same bonds, on both leaves.
    const auto da = lines(fa, "nv set interface bond"), db = lines(fb, "nv set interface bond");
    std::vector<std::string> ida, idb;
    for (const auto& l : da)
      if (l.find(" description ") != std::string::npos ||
          l.find(" bond mlag id ") != std::string::npos)
        ida.push_back(l);
    for (const auto& l : db)
      if (l.find(" description ") != std::string::npos ||
          l.find(" bond mlag id ") != std::string::npos)
        idb.push_back(l);
    EXPECT_FALSE(ida.empty()) << a;
    EXPECT_EQ(ida, idb) << a;
    EXPECT_EQ(sh_syntax(fa), 0);
    ++pairs;
  }
  EXPECT_GT(pairs, 0);
}

TEST(Networks, ASubnetTooSmallIsAnErrorAtItsKey) {
  const PlannedSpec ex = testing::load_example("networks-dgx-256.yaml");
  PlannedSpec small = ex;
  small.spec.networks->oob.addressing.subnet = "10.16.0.0/27";
  auto set = config_files(small, {});
  ASSERT_FALSE(set.ok());
  EXPECT_EQ(set.errors()[0].key, "networks.oob.subnet");
  EXPECT_NE(set.errors()[0].message.find("holds 29 addresses"), std::string::npos)
      << set.errors()[0].message;
  // With a fabric pool too small as well, both are named, the fabric's first, as plan lists them.
  small.spec.addressing.loopbacks = "10.0.0.0/31";
  set = config_files(small, {});
  ASSERT_FALSE(set.ok());
  ASSERT_EQ(set.errors().size(), 2U) << format_diagnostics(set.errors());
  EXPECT_EQ(set.errors()[0].key, "addressing.loopbacks");
  EXPECT_EQ(set.errors()[1].key, "networks.oob.subnet");
}

}  // namespace gf
