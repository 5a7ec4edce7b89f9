// The FRR JSON parsers on outputs recorded verbatim (stdout only) from `gpufabric lab up
// examples/roce-lab-16.yaml` with FRR 8.4.4 (Debian 12's frr 8.4.4-1.1~deb12u2) and iproute2
// 6.1.0, by the command lines the lab runs, on the leaf su01-r0-leaf (uplinks swp86 to spine01,
// swp87 to spine02):
//   vtysh -N NETNS -c 'show bgp ipv4 unicast summary json'
//     frr-bgp-summary-numbered.json                 both sessions up (numbered /31s)
//     frr-bgp-summary-numbered-link-down.json       4 s after `ip -n NETNS link set dev swp86 down`
//     frr-bgp-summary-unnumbered[-link-down].json   the same with addressing.unnumbered: true
//   ip -j -n NETNS route show exact 10.128.0.16/29  (su02-r0-leaf's hosts: a remote host subnet)
//     frr-ip-route-2-nexthops.json, frr-ip-route-1-nexthop.json (swp86 down), and the
//     frr-ip-route-unnumbered-* pair; frr-ip-route-none.json: 10.99.0.0/24, which has no route.
// Then truncated, mistyped and empty input, which must be errors, never exceptions.
#include "verify/frr_json.h"

#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <sstream>
#include <string>

#include "../../tests/support.h"

namespace gf {
namespace {

std::string fixture(const std::string& name) { return testing::output_fixture(name); }

using Peers = std::map<std::string, std::string>;

}  // namespace

TEST(FrrJson, BgpSummaryNumberedAllEstablished) {
  auto r = parse_bgp_summary_json(fixture("frr-bgp-summary-numbered.json"), "f");
  ASSERT_TRUE(r.ok()) << format_diagnostics(r.errors());
  EXPECT_EQ(*r, (Peers{{"10.1.0.1", "Established"}, {"10.1.0.3", "Established"}}));
}

TEST(FrrJson, BgpSummaryNumberedLinkDown) {
  auto r = parse_bgp_summary_json(fixture("frr-bgp-summary-numbered-link-down.json"), "f");
  ASSERT_TRUE(r.ok()) << format_diagnostics(r.errors());
  EXPECT_EQ(*r, (Peers{{"10.1.0.1", "Active"}, {"10.1.0.3", "Established"}}));
}

TEST(FrrJson, BgpSummaryUnnumberedPeersAreInterfaces) {
  auto up = parse_bgp_summary_json(fixture("frr-bgp-summary-unnumbered.json"), "f");
  ASSERT_TRUE(up.ok()) << format_diagnostics(up.errors());
  EXPECT_EQ(*up, (Peers{{"swp86", "Established"}, {"swp87", "Established"}}));
  auto down = parse_bgp_summary_json(fixture("frr-bgp-summary-unnumbered-link-down.json"), "f");
  ASSERT_TRUE(down.ok()) << format_diagnostics(down.errors());
  EXPECT_EQ(*down, (Peers{{"swp86", "Idle"}, {"swp87", "Established"}}));
}

// `show bgp summary json` (every family) nests the same object under "ipv4Unicast"; a summary
// without neighbours has no "peers"; a neighbour without a state is "?". Written by hand.
TEST(FrrJson, BgpSummaryOtherShapes) {
  auto nested = parse_bgp_summary_json(
      R"({"ipv4Unicast": {"routerId": "10.0.0.4", "peers": {"10.1.0.0": {"state": "Connect"}}}})",
      "f");
  ASSERT_TRUE(nested.ok()) << format_diagnostics(nested.errors());
  EXPECT_EQ(*nested, (Peers{{"10.1.0.0", "Connect"}}));
  auto none = parse_bgp_summary_json("{}\n", "f");
  ASSERT_TRUE(none.ok());
  EXPECT_TRUE(none->empty());
  auto stateless = parse_bgp_summary_json(R"({"peers": {"swp1": {"remoteAs": 65000}}})", "f");
  ASSERT_TRUE(stateless.ok());
  EXPECT_EQ(*stateless, (Peers{{"swp1", "?"}}));
}

TEST(FrrJson, BgpSummaryBadInputIsAnError) {
  const std::string whole = fixture("frr-bgp-summary-numbered.json");
  for (const std::string& text :
       {whole.substr(0, whole.size() / 2), std::string(), std::string("\n"),
        std::string("% Unknown command: show bgp ipv4 unicast summary json\n"), std::string("[]"),
        std::string(R"("peers")"), std::string(R"({"peers": []})"),
        std::string(R"({"peers": {"10.1.0.1": "Established"}})"),
        std::string(R"({"peers": {"10.1.0.1": {"state": 6}}})"),
        std::string(R"({"ipv4Unicast": "peers"})")}) {
    auto r = parse_bgp_summary_json(text, "vtysh.json");
    ASSERT_FALSE(r.ok()) << text;
    EXPECT_EQ(r.errors()[0].file, "vtysh.json");
    EXPECT_NE(r.errors()[0].message.find("BGP summary JSON"), std::string::npos)
        << r.errors()[0].message;
  }
  EXPECT_EQ(
      parse_bgp_summary_json(R"({"peers": {"swp86": {"state": null}}})", "f").errors()[0].message,
      "BGP summary JSON: peers.swp86.state is not a string");
}

TEST(FrrJson, RouteWithTwoNextHops) {
  auto r = parse_ip_route_json(fixture("frr-ip-route-2-nexthops.json"), "f");
  ASSERT_TRUE(r.ok()) << format_diagnostics(r.errors());
  ASSERT_EQ(r->size(), 2u);
  EXPECT_EQ((*r)[0].gateway, "10.1.0.1");
  EXPECT_EQ((*r)[0].dev, "swp86");
  EXPECT_EQ((*r)[1].gateway, "10.1.0.3");
  EXPECT_EQ((*r)[1].dev, "swp87");
}

TEST(FrrJson, RouteWithOneNextHop) {
  auto r = parse_ip_route_json(fixture("frr-ip-route-1-nexthop.json"), "f");
  ASSERT_TRUE(r.ok()) << format_diagnostics(r.errors());
  ASSERT_EQ(r->size(), 1u);
  EXPECT_EQ((*r)[0].gateway, "10.1.0.3");
  EXPECT_EQ((*r)[0].dev, "swp87");
}

// Unnumbered BGP: zebra installs FRR's placeholder 169.254.0.1 "onlink" on each interface.
TEST(FrrJson, UnnumberedRoutesGoThroughTheLinkLocalPlaceholder) {
  auto two = parse_ip_route_json(fixture("frr-ip-route-unnumbered-2-nexthops.json"), "f");
  ASSERT_TRUE(two.ok()) << format_diagnostics(two.errors());
  ASSERT_EQ(two->size(), 2u);
  EXPECT_EQ((*two)[0].gateway, "169.254.0.1");
  EXPECT_EQ((*two)[0].dev, "swp86");
  EXPECT_EQ((*two)[1].dev, "swp87");
  auto one = parse_ip_route_json(fixture("frr-ip-route-unnumbered-1-nexthop.json"), "f");
  ASSERT_TRUE(one.ok()) << format_diagnostics(one.errors());
  ASSERT_EQ(one->size(), 1u);
  EXPECT_EQ((*one)[0].dev, "swp87");
}

TEST(FrrJson, NoRouteHasNoNextHops) {
  auto none = parse_ip_route_json(fixture("frr-ip-route-none.json"), "f");
  ASSERT_TRUE(none.ok()) << format_diagnostics(none.errors());
  EXPECT_TRUE(none->empty());
  // A connected subnet (as `ip -j route` prints one) leaves by an interface, through no router.
  auto connected = parse_ip_route_json(
      R"([{"dst":"10.1.0.0/31","dev":"swp86","protocol":"kernel","scope":"link",)"
      R"("prefsrc":"10.1.0.0","flags":[]}])",
      "f");
  ASSERT_TRUE(connected.ok());
  EXPECT_TRUE(connected->empty());
  // A next hop of another family (RTA_VIA), written by hand in iproute2's form.
  auto via = parse_ip_route_json(
      R"([{"dst":"10.0.0.4","via":{"family":"inet6","host":"fe80::1"},"dev":"swp86"}])", "f");
  ASSERT_TRUE(via.ok()) << format_diagnostics(via.errors());
  ASSERT_EQ(via->size(), 1u);
  EXPECT_EQ((*via)[0].gateway, "fe80::1");
}

TEST(FrrJson, RouteBadInputIsAnError) {
  const std::string whole = fixture("frr-ip-route-2-nexthops.json");
  for (const std::string& text :
       {whole.substr(0, whole.size() - 10), std::string(),
        std::string("Error: any valid prefix is expected"), std::string("{}"), std::string("[1]"),
        std::string(R"([{"nexthops": {"gateway": "10.1.0.1"}}])"),
        std::string(R"([{"nexthops": [1, 2]}])"), std::string(R"([{"gateway": 167837697}])"),
        std::string(R"([{"gateway": "10.1.0.1", "dev": ["swp86"]}])"),
        std::string(R"([{"via": "fe80::1"}])"), std::string(R"([{"via": {"family": "inet6"}}])")}) {
    auto r = parse_ip_route_json(text, "route.json");
    ASSERT_FALSE(r.ok()) << text;
    EXPECT_EQ(r.errors()[0].file, "route.json");
    EXPECT_NE(r.errors()[0].message.find("ip route JSON"), std::string::npos)
        << r.errors()[0].message;
  }
  EXPECT_EQ(parse_ip_route_json(R"([{"nexthops": [{"gateway": "10.1.0.1"}, {"dev": 3}]}])", "f")
                .errors()[0]
                .message,
            "ip route JSON: nexthops[1].dev is not a string");
}

}  // namespace gf
