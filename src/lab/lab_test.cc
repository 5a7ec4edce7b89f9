// The lab's pure parts: its layout from a plan, the netplan applier and the command runner.
// The lab itself (namespaces, FRR, traffic) runs as root in tests/lab_test.sh.
#include "lab/lab.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <set>

#include "../../tests/support.h"
#include "lab/netplan.h"
#include "lab/process.h"

namespace gf {
namespace {

using testing::load_example;

const std::string* config(const LabLayout& lab, const std::string& name) {
  for (const auto& [n, text] : lab.configs)
    if (n == name) return &text;
  return nullptr;
}

}  // namespace

TEST(LabLayout, SixteenGpuLabHasTwoSpinesFourLeavesEightHosts) {
  const PlannedSpec p = load_example("roce-lab-16.yaml");
  auto lab = lab_layout(p);
  ASSERT_TRUE(lab.ok()) << format_diagnostics(lab.errors());
  std::map<std::string, int> roles;
  std::set<std::string> spaces;
  for (const auto& d : lab->devices) {
    ++roles[d.role];
    spaces.insert(d.netns);
    EXPECT_EQ(d.netns, "gf-roce-lab-16-" + d.name);
  }
  EXPECT_EQ(roles["spine"], 2);
  EXPECT_EQ(roles["leaf"], 4);
  EXPECT_EQ(roles["host"], 8);
  EXPECT_EQ(spaces.size(), lab->devices.size());
  // One veth pair per cabling link: 8 leaf-spine (one per leaf and spine), 16 host rails.
  int fabric = 0;
  std::map<std::pair<std::string, std::string>, int> per_pair;
  for (const auto& l : lab->links) {
    if (!l.fabric) {
      EXPECT_EQ(lab->device(l.a)->role, "host");
      EXPECT_EQ(l.a_if.rfind("nic", 0), 0u) << l.a_if;
      continue;
    }
    ++fabric;
    ++per_pair[{l.a, l.b}];
    EXPECT_EQ(lab->device(l.a)->role, "leaf");
    EXPECT_EQ(lab->device(l.b)->role, "spine");
  }
  // Every veth end is a valid Linux interface name, and the switch ends are the ports frr/
  // names: the 7060X6's 800G cages broken out into two 400G ports each, swp<cage>s<n>.
  for (const auto& l : lab->links)
    for (const std::string& name : {l.a_if, l.b_if}) {
      EXPECT_LE(name.size(), kLabMaxInterfaceName) << name;
      EXPECT_EQ(name.find_first_of("/: "), std::string::npos) << name;
    }
  const LabLink& up = lab->links.front();
  EXPECT_EQ(up.a, "su01-r0-leaf");
  EXPECT_EQ(up.a_if, "swp" + std::to_string((up.a_port + 1) / 2) + "s" +
                         std::to_string((up.a_port - 1) % 2));
  EXPECT_EQ(up.b_if, "swp1s0");
  EXPECT_NE(config(*lab, "frr/su01-r0-leaf.conf")->find("interface " + up.a_if + "\n"),
            std::string::npos);
  EXPECT_NE(config(*lab, "frr/spine01.conf")->find("interface swp1s0\n"), std::string::npos);
  EXPECT_EQ(fabric, 8);
  EXPECT_EQ(lab->links.size(), 24u);
  for (const auto& [pair, n] : per_pair) EXPECT_EQ(n, 1) << pair.first << "-" << pair.second;
  // It runs the files `gpufabric configs` writes.
  ASSERT_NE(config(*lab, "frr/spine01.conf"), nullptr);
  ASSERT_NE(config(*lab, "hosts/node001/netplan.yaml"), nullptr);
  ASSERT_NE(config(*lab, "hosts/node001/99-roce.conf"), nullptr);
  EXPECT_NE(config(*lab, "frr/su01-r0-leaf.conf")->find("interface hosts"), std::string::npos);
}

TEST(LabLayout, RefusesWhatItCannotEmulate) {
  const PlannedSpec ib = load_example("seed-70b-1024.yaml");  // InfiniBand: no IP fabric
  auto a = lab_layout(ib);
  ASSERT_FALSE(a.ok());
  EXPECT_EQ(a.errors()[0].key, "fabric.technology");
  const PlannedSpec big = load_example("roce-16k.yaml");  // thousands of switches and hosts
  auto b = lab_layout(big);
  ASSERT_FALSE(b.ok());
  EXPECT_EQ(b.errors()[0].key, "cluster.nodes");
  EXPECT_GT(b.errors()[0].line, 0);
  EXPECT_NE(b.errors()[0].hint.find("roce-lab-16"), std::string::npos);
}

TEST(Netplan, GeneratedHostFileBecomesIpCommands) {
  const PlannedSpec p = load_example("roce-lab-16.yaml");
  auto lab = lab_layout(p);
  ASSERT_TRUE(lab.ok());
  auto ifaces = parse_netplan(*config(*lab, "hosts/node001/netplan.yaml"), "netplan.yaml");
  ASSERT_TRUE(ifaces.ok()) << format_diagnostics(ifaces.errors());
  ASSERT_EQ(ifaces->size(), 2u);  // two rails
  const NetplanInterface& nic0 = (*ifaces)[0];
  EXPECT_EQ(nic0.name, "nic0");
  EXPECT_EQ(nic0.mtu, 9000);
  ASSERT_EQ(nic0.addresses.size(), 1u);
  EXPECT_EQ(nic0.addresses[0], "10.128.0.2/29");
  ASSERT_EQ(nic0.rules.size(), 1u);
  EXPECT_EQ(nic0.rules[0].table, 100);
  const auto cmds = netplan_ip_commands("ns1", nic0);
  auto joined = [](const std::vector<std::string>& c) {
    std::string s;
    for (const auto& a : c) s += (s.empty() ? "" : " ") + a;
    return s;
  };
  std::vector<std::string> text;
  for (const auto& c : cmds) text.push_back(joined(c));
  EXPECT_EQ(text.front(), "ip -n ns1 link set dev nic0 mtu 9000");
  EXPECT_NE(std::find(text.begin(), text.end(), "ip -n ns1 address add 10.128.0.2/29 dev nic0"),
            text.end());
  EXPECT_NE(std::find(text.begin(), text.end(),
                      "ip -n ns1 route add 10.128.0.0/9 via 10.128.0.1 dev nic0 table 100"),
            text.end());
  EXPECT_EQ(text.back(), "ip -n ns1 rule add from 10.128.0.2 table 100");
}

TEST(Netplan, ErrorsNameFileLineAndKey) {
  auto bad = parse_netplan("network:\n  ethernets:\n    nic0:\n      dhcp4: true\n", "n.yaml");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.errors()[0].file, "n.yaml");
  EXPECT_EQ(bad.errors()[0].line, 4);
  EXPECT_EQ(bad.errors()[0].key, "network.ethernets.nic0.dhcp4");
  EXPECT_FALSE(parse_netplan("network: [", "n.yaml").ok());
  EXPECT_FALSE(parse_netplan("version: 2\n", "n.yaml").ok());
  EXPECT_FALSE(parse_netplan("network:\n  ethernets:\n    nic0:\n      mtu: big\n", "n.yaml").ok());
  EXPECT_FALSE(parse_netplan("network:\n  ethernets:\n    nic0:\n      mtu: 70000\n", "n").ok());
  // Hostile shapes are errors, not crashes.
  for (const char* text : {"just text", "network: 3", "network:\n  ethernets: [1, 2]",
                           "network:\n  ethernets:\n    nic0:\n      routes: [1, {to: [x]}]",
                           "network:\n  ethernets:\n    nic0:\n      routes: {a: b}",
                           "network:\n  ethernets:\n    ? [a]\n    : {mtu: 9000}"})
    EXPECT_FALSE(parse_netplan(text, "n.yaml").ok()) << text;
}

TEST(Process, CapturesOutputExitCodeAndDeadline) {
  const CommandResult ok = run_command({"sh", "-c", "echo out; echo err >&2; exit 3"});
  EXPECT_EQ(ok.exit_code, 3);
  EXPECT_EQ(ok.out, "out\n");
  EXPECT_EQ(ok.err, "err\n");
  EXPECT_EQ(ok.describe({"sh"}), "sh: err");
  const CommandResult missing = run_command({"gf-no-such-program"});
  EXPECT_FALSE(missing.ok());
  EXPECT_NE(missing.err.find("cannot run"), std::string::npos);
  const CommandResult slow = run_command({"sleep", "10"}, 0.2);
  EXPECT_TRUE(slow.timed_out);
  // A background child that keeps the pipe open does not hold the call up.
  const CommandResult daemonish = run_command({"sh", "-c", "sleep 1 & echo started"}, 3);
  EXPECT_TRUE(daemonish.ok());
  EXPECT_EQ(daemonish.out, "started\n");
  BackgroundCommand bg({"sh", "-c", "echo hi; sleep 10"});
  ASSERT_TRUE(bg.started());
  const CommandResult ended = bg.finish(0.2);
  EXPECT_TRUE(ended.timed_out);
  EXPECT_EQ(ended.out, "hi\n");
  EXPECT_TRUE(end_process(-1));
}

}  // namespace gf
