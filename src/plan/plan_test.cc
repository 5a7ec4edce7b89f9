#include "plan/plan.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <iostream>
#include <map>
#include <set>
#include <sstream>
#include <tuple>

#include "common/csv.h"
#include "plan/ports.h"
#include "units/units.h"

namespace gf {
namespace {

Plan plan_of(const std::string& yaml) {
  auto s = parse_spec(yaml, "t.yaml");
  EXPECT_TRUE(s.ok()) << format_diagnostics(s.errors());
  auto cat = *builtin_catalog();
  auto errs = validate_spec(*s, cat);
  EXPECT_TRUE(errs.empty()) << format_diagnostics(errs);
  auto p = make_plan(*s, cat);
  EXPECT_TRUE(p.ok()) << format_diagnostics(p.errors());
  return p.ok() ? *p : Plan{};
}

std::vector<Diagnostic> plan_errors(const std::string& yaml) {
  auto s = parse_spec(yaml, "t.yaml");
  auto cat = *builtin_catalog();
  if (!s) return s.errors();
  auto errs = validate_spec(*s, cat);
  if (!errs.empty()) return errs;
  auto p = make_plan(*s, cat);
  return p.ok() ? std::vector<Diagnostic>{} : p.errors();
}

}  // namespace

// Published DGX SuperPOD counts (data/calibration/superpod-public.csv), reproduced from a
// rail-optimized spec of the same size.
TEST(PlanCalibration, ReproducesSuperPodCounts) {
  std::ifstream in(GPUFABRIC_SOURCE_DIR "/data/calibration/superpod-public.csv");
  ASSERT_TRUE(in) << "missing data/calibration/superpod-public.csv";
  std::string line;
  std::getline(in, line);
  int rows = 0;
  while (std::getline(in, line)) {
    if (line.empty()) continue;
    const auto f = split_csv(line);
    ASSERT_GE(f.size(), 11u);
    const std::string system = f[1];
    const int sus = std::stoi(f[2]), nodes = std::stoi(f[3]), gpus = std::stoi(f[4]);
    const std::string sw = f[5].find("QM9700") != std::string::npos ? "qm9700" : "sn5600";
    const bool twin_planar = f[11].find("twin-planar") != std::string::npos;
    // The UFM appliance's ports show as node-leaf cables beyond the GPUs' own.
    const int appliance = f[9].empty() ? 0 : std::stoi(f[9]) - gpus;
    const int su_nodes = (nodes + (appliance > 0 ? 1 : 0) + sus - 1) / sus;
    const std::string gpu = system.find("H100") != std::string::npos ? "h100-sxm" : "b200";
    // DGX B300 (Spectrum-X): each GPU has 2 x 400GbE, one into each of two planes; modelled
    // as an 800G NIC split over 2 planes.
    const std::string yaml = fmt::format(
        "cluster: {{gpu: {}, nodes: {}, nic: {}}}\n"
        "fabric: {{technology: {}, switch: {}, rail_optimized: true, planes: {}, "
        "scalable_unit: {}, appliance_ports: {}}}\n",
        gpu, nodes, twin_planar ? "cx8-800g" : "cx7-400g", sw == "qm9700" ? "infiniband" : "roce",
        sw, twin_planar ? 2 : 1, su_nodes, appliance);
    const Plan p = plan_of(yaml);
    SCOPED_TRACE(line);
    EXPECT_EQ(p.topo.kind, TopologyKind::kClos2);
    EXPECT_EQ(p.leaf_total, std::stoi(f[6]));
    EXPECT_EQ(p.spine_total, std::stoi(f[7]));
    EXPECT_EQ(p.core_total, std::stoi(f[8]));
    if (!f[9].empty()) {
      EXPECT_EQ(p.node_leaf_total, std::stoi(f[9]));
    }
    if (!f[10].empty()) {
      EXPECT_EQ(p.leaf_spine_total, std::stoi(f[10]));
    }
    ++rows;
  }
  EXPECT_GE(rows, 5);
}

TEST(Plan, TierLimitsFollowRadix) {
  // Radix 64: one switch <= 64 endpoints, 2 tiers <= k^2/2 = 2048, 3 tiers <= k^3/4 = 65536.
  const char* base =
      "cluster: {{gpu: h100-sxm, nodes: {}, nic: cx7-400g}}\nfabric: {{technology: infiniband, "
      "switch: qm9700}}\n";
  EXPECT_EQ(plan_of(fmt::format(fmt::runtime(base), 8)).topo.kind, TopologyKind::kSingle);
  EXPECT_EQ(plan_of(fmt::format(fmt::runtime(base), 9)).topo.kind, TopologyKind::kClos2);
  EXPECT_EQ(plan_of(fmt::format(fmt::runtime(base), 256)).topo.kind, TopologyKind::kClos2);
  const Plan p3 = plan_of(fmt::format(fmt::runtime(base), 257));
  EXPECT_EQ(p3.topo.kind, TopologyKind::kClos3);
  const Plan full = plan_of(fmt::format(fmt::runtime(base), 8192));  // 65,536 GPUs
  EXPECT_EQ(full.topo.kind, TopologyKind::kClos3);
  // Non-blocking 3-tier fat tree of radix k: 5 E / k switches.
  EXPECT_EQ(full.switch_total, 5 * 65536 / 64);
  EXPECT_EQ(full.link_total, 3LL * 65536);
  EXPECT_EQ(plan_of(fmt::format(fmt::runtime(base), 8193)).topo.kind, TopologyKind::kDragonfly);
}

TEST(Plan, ExplicitTopologyThatCannotHoldTheClusterIsAnError) {
  auto e = plan_errors(
      "cluster: {gpu: h100-sxm, nodes: 512, nic: cx7-400g}\nfabric: {technology: infiniband, "
      "switch: qm9700, topology: clos2}\n");
  ASSERT_FALSE(e.empty());
  EXPECT_NE(format_diagnostic(e[0]).find("clos2 with 64-port switches reaches at most 2048"),
            std::string::npos)
      << format_diagnostic(e[0]);
  EXPECT_EQ(e[0].line, 2);
  // A dragonfly on a cluster that fits in one group is too small for it, not too large (it said
  // "reaches at most 0 endpoints"): 1,024 endpoints are one group of qm9700 leaves.
  auto small = plan_errors(
      "cluster: {gpu: h100-sxm, nodes: 128, nic: cx7-400g}\nfabric: {technology: infiniband, "
      "switch: qm9700, topology: dragonfly}\n");
  ASSERT_FALSE(small.empty());
  EXPECT_NE(format_diagnostic(small[0]).find(
                "dragonfly with 64-port switches needs two groups or more, and the cluster's 1024 "
                "endpoints fit in one group of"),
            std::string::npos)
      << format_diagnostic(small[0]);
  EXPECT_EQ(small[0].key, "fabric.topology");
}

// A dragonfly that one group would hold needs more endpoints, or another topology: a larger
// switch, or more planes (more ports of a lower speed), only makes the group larger, so the hint
// no longer offers them (it said "or a larger switch"). Too large a cluster keeps its hint.
TEST(Plan, ADragonflyOfOneGroupIsHintedAnotherTopologyNotALargerSwitch) {
  const std::string base =
      "cluster: {{gpu: h100-sxm, nodes: {}, nic: cx7-400g}}\nfabric: {{technology: infiniband, "
      "switch: {}, topology: {}}}\n";
  for (const std::string sw : {"qm9700", "auto"}) {
    const auto e = plan_errors(fmt::format(fmt::runtime(base), 128, sw, "dragonfly"));
    ASSERT_FALSE(e.empty()) << sw;
    const std::string m = format_diagnostic(e[0]);
    EXPECT_EQ(e[0].key, "fabric.topology") << m;
    EXPECT_NE(m.find("fit in one group of"), std::string::npos) << m;
    EXPECT_EQ(m.find("larger switch"), std::string::npos) << m;
    EXPECT_EQ(m.find("more planes"), std::string::npos) << m;
    EXPECT_NE(m.find("use topology: auto"), std::string::npos) << m;
  }
  // One qm9700 group holds 4 units of 32 nodes: the hint names the size that makes two.
  EXPECT_NE(plan_errors(fmt::format(fmt::runtime(base), 128, "qm9700", "dragonfly"))[0].hint.find(
                "more nodes than the 128 one group holds"),
            std::string::npos);
  const auto large = plan_errors(fmt::format(fmt::runtime(base), 512, "qm9700", "clos2"));
  ASSERT_FALSE(large.empty());
  EXPECT_NE(large[0].hint.find("use a larger switch"), std::string::npos) << large[0].hint;
}

// Small scalable units leave their leaves part empty, and a spine port takes one leaf: the
// leaves, not the endpoints, fill the upper tier. The growth the plan reports and the limit the
// error states come out of the same count: 64 units of 4 two-rail nodes on 128-port spines.
TEST(Plan, SmallScalableUnitsReachWhatTheirLeavesAllow) {
  const std::string base =
      "cluster: {{gpu: h100-sxm, nodes: {}, gpus_per_node: 2, nic: cx7-400g, nics_per_node: 2}}\n"
      "fabric: {{technology: roce, switch: arista-7060x6, topology: clos2, scalable_unit: 4, "
      "oversubscription: 2}}\n";
  const Plan p = plan_of(fmt::format(fmt::runtime(base), 256));
  EXPECT_EQ(p.max_nodes_same_tiers, 256);
  const auto e = plan_errors(fmt::format(fmt::runtime(base), 257));
  ASSERT_FALSE(e.empty());
  const std::string m = format_diagnostic(e[0]);
  EXPECT_NE(m.find("reaches at most 512 endpoints per plane; the cluster needs 514"),
            std::string::npos)
      << m;
  EXPECT_NE(m.find("larger scalable units (fabric.scalable_unit: 4 nodes now)"), std::string::npos)
      << m;
  // As large a unit as a leaf allows: the endpoints fill the tier, as before.
  const Plan whole = plan_of(
      "cluster: {gpu: h100-sxm, nodes: 256, gpus_per_node: 2, nic: cx7-400g, nics_per_node: 2}\n"
      "fabric: {technology: roce, switch: arista-7060x6, topology: clos2, oversubscription: 2}\n");
  EXPECT_GT(whole.max_nodes_same_tiers, 5000);
}

// A scalable unit larger than the cluster is one partly filled unit, wired in full for growth
// (README: "a partly filled unit is wired in full"): the plan says so, with the unit, the
// cluster's nodes and what to set instead; on one switch the unit does not apply and the plan
// says that; and a unit too large to plan is told to be smaller, not larger.
TEST(Plan, AScalableUnitLargerThanTheClusterSaysWhatItBuilds) {
  auto notes = [](const Plan& p) {
    std::string all;
    for (const auto& n : p.notes) all += n + "\n";
    return all;
  };
  const Plan big = plan_of(
      "cluster: {gpu: h100-sxm, nodes: 128, nic: cx7-400g}\n"
      "fabric: {technology: infiniband, switch: qm9700, scalable_unit: 200}\n");
  const Plan fit = plan_of(
      "cluster: {gpu: h100-sxm, nodes: 128, nic: cx7-400g}\n"
      "fabric: {technology: infiniband, switch: qm9700}\n");
  EXPECT_EQ(big.topo.units, 1);
  EXPECT_GT(big.leaf_total, fit.leaf_total);  // wired for 200 nodes: 56 leaves, not 32
  EXPECT_NE(notes(big).find(fmt::format(
                "fabric.scalable_unit is 200 nodes, more than the cluster's 128: its one unit is "
                "partly filled and its {} leaves and their uplinks are built in full for growth "
                "to 200 nodes; set scalable_unit: auto (or at most 128)",
                big.leaf_total)),
            std::string::npos)
      << notes(big);
  EXPECT_EQ(notes(big).find("last scalable unit"), std::string::npos) << notes(big);
  EXPECT_EQ(notes(fit).find("scalable_unit"), std::string::npos) << notes(fit);
  const Plan single = plan_of(
      "cluster: {gpu: h100-sxm, nodes: 4, nic: cx7-400g}\n"
      "fabric: {technology: infiniband, switch: qm9700, scalable_unit: 32}\n");
  EXPECT_EQ(single.topo.kind, TopologyKind::kSingle);
  EXPECT_NE(notes(single).find("one switch holds every node, so fabric.scalable_unit (32 nodes) "
                               "does not apply; set topology: clos2"),
            std::string::npos)
      << notes(single);
  const auto huge = plan_errors(
      "cluster: {gpu: h100-sxm, nodes: 128, nic: cx7-400g}\n"
      "fabric: {technology: infiniband, switch: qm9700, scalable_unit: 100000}\n");
  ASSERT_FALSE(huge.empty());
  const std::string m = format_diagnostic(huge[0]);
  EXPECT_NE(m.find("a scalable unit no larger than the cluster's 128 nodes"), std::string::npos)
      << m;
  EXPECT_EQ(m.find("larger scalable units"), std::string::npos) << m;
}

TEST(Plan, OversubscriptionCutsUplinksAndSpines) {
  const char* base =
      "cluster: {{gpu: h100-sxm, nodes: 256, nic: cx7-400g}}\nfabric: {{technology: infiniband, "
      "switch: qm9700, oversubscription: {}}}\n";
  const Plan one = plan_of(fmt::format(fmt::runtime(base), 1));
  const Plan two = plan_of(fmt::format(fmt::runtime(base), "\"2:1\""));
  EXPECT_NEAR(two.topo.oversubscription, 2.0, 0.1);
  EXPECT_LT(two.leaf_spine_total * 1.6, one.leaf_spine_total);
  EXPECT_LT(two.spine_total, one.spine_total);
  EXPECT_LT(two.bisection_gbps, one.bisection_gbps * 0.6);
  EXPECT_LT(two.bom.network_capex_usd, one.bom.network_capex_usd);
  bool warned = false;
  const Plan three = plan_of(fmt::format(fmt::runtime(base), 3));
  for (const auto& w : three.warnings) warned = warned || w.find("2:1") != std::string::npos;
  EXPECT_TRUE(warned);
}

// What the leaves carry up to the tier above, counted from the cabling plan: each leaf sends up
// no more than its endpoints' links bring, nor more than its uplinks; both directions, Gbps.
double leaves_carry_gbps(const Plan& p) {
  auto cat = *builtin_catalog();
  std::map<long long, std::pair<long long, long long>> leaf;  // leaf -> {down, up} of plane 0
  for_each_link(
      p, cat,
      [&](const CableRun& r) {
        if (r.plane != 0) return;
        if (r.kind == LinkKind::kNodeLeaf || r.kind == LinkKind::kApplianceLeaf)
          ++leaf[r.b_index].first;
        else if (r.kind == LinkKind::kLeafSpine)
          ++leaf[r.a_index].second;
      },
      false);
  long long links = 0;
  for (const auto& [i, du] : leaf) links += std::min(du.first, du.second);
  return static_cast<double>(links) * p.topo.lane_gbps * p.topo.planes;
}

// Without fabric.scalable_unit the nodes spread evenly over as many units as they need: 256
// nodes on 7060X6 leaves of 85 at 2:1 are 4 units of 64, 2:1 at the leaf, 8 spines (it had
// built 3 units of 85 and one of a single node with a unit's leaves and uplinks: 1.98:1 and 11
// spines, $0.7M more). A unit the spec sizes is kept.
TEST(Plan, UnitsShareTheNodesEvenly) {
  const std::string base =
      "cluster: {{gpu: h200-sxm, nodes: 256, nic: cx7-400g}}\nfabric: {{technology: roce, "
      "switch: arista-7060x6, oversubscription: 2{}}}\n";
  const Plan even = plan_of(fmt::format(fmt::runtime(base), ""));
  EXPECT_EQ(even.topo.units, 4);
  EXPECT_EQ(even.topo.nodes_per_unit, 64);
  EXPECT_DOUBLE_EQ(even.topo.oversubscription, 2);
  EXPECT_EQ(even.spine_total, 8);
  for (const auto& n : even.notes)
    EXPECT_EQ(n.find("last scalable unit holds"), std::string::npos) << n;
  const Plan sized = plan_of(fmt::format(fmt::runtime(base), ", scalable_unit: 85"));
  EXPECT_EQ(sized.topo.nodes_per_unit, 85);
  EXPECT_EQ(sized.topo.units, 4);
  EXPECT_GT(sized.bom.network_capex_usd, even.bom.network_capex_usd);
}

// An oversubscribed fabric's last unit, partly filled (units of the spec's size), has its uplinks
// built in full for growth, but its leaves carry up only what their few nodes send: 128 nodes in
// units of 42 leave 2 nodes in the fourth, whose leaves carry 2 of their 21 uplinks (it said 672
// uplinks' 269 Tbps; the leaves carry 3 x 8 x 21 + 8 x 2 = 520 links, 208 Tbps). Full units, and a
// 1:1 fabric, are bound by their uplinks or endpoints as before.
TEST(Plan, BisectionIsWhatTheLeavesCarryNotTheUplinksBuiltForGrowth) {
  const std::string base =
      "cluster: {{gpu: h100-sxm, nodes: {}, nic: cx7-400g}}\nfabric: {{technology: infiniband, "
      "switch: qm9700, oversubscription: {}{}}}\n";
  auto plan = [&](int nodes, int over, const std::string& more = "") {
    return plan_of(fmt::format(fmt::runtime(base), nodes, over, more));
  };
  const Plan partial = plan(128, 2, ", scalable_unit: 42");
  ASSERT_EQ(partial.topo.kind, TopologyKind::kClos2);
  ASSERT_EQ(partial.topo.nodes_per_unit, 42);
  ASSERT_EQ(partial.topo.units, 4);
  EXPECT_EQ(partial.leaf_spine_total, 32 * 21);  // built in full
  EXPECT_DOUBLE_EQ(partial.bisection_gbps, 520 * 400.0);
  EXPECT_DOUBLE_EQ(partial.bisection_gbps, leaves_carry_gbps(partial));
  // Full units: every uplink carries.
  const Plan full = plan(126, 2);
  EXPECT_DOUBLE_EQ(full.bisection_gbps, full.leaf_spine_total * 400.0);
  // 1:1, partly filled: the endpoints bound it.
  const Plan one = plan(100, 1);
  EXPECT_DOUBLE_EQ(one.bisection_gbps, one.node_leaf_total * 400.0);
  // Three tiers (600 nodes: 15 units of 42, 12 nodes in the last), top of rack, two planes.
  for (const Plan& p : {plan(600, 2, ", scalable_unit: 42"), plan(97, 3, ", rail_optimized: false"),
                        plan_of("cluster: {gpu: b200, nodes: 100, nic: cx8-800g}\n"
                                "fabric: {technology: roce, switch: sn5600, planes: 2, "
                                "oversubscription: 2, scalable_unit: 85}\n")}) {
    SCOPED_TRACE(p.topo.kind == TopologyKind::kClos3 ? "clos3" : "clos2");
    EXPECT_LT(p.bisection_gbps, p.leaf_spine_total * p.topo.lane_gbps);
    EXPECT_DOUBLE_EQ(p.bisection_gbps, leaves_carry_gbps(p));
  }
  // A dragonfly's halves are whole groups, each bound by what its leaves bring up as well.
  const Plan df = plan_of(
      "cluster: {gpu: h100-sxm, nodes: 1100, nic: cx7-400g}\nfabric: {technology: infiniband, "
      "switch: qm9700, topology: dragonfly, oversubscription: 2}\n");
  ASSERT_EQ(df.topo.kind, TopologyKind::kDragonfly);
  EXPECT_LE(df.bisection_gbps, leaves_carry_gbps(df));
  EXPECT_DOUBLE_EQ(df.bisection_gbps, 3.0 * 4 * df.topo.global_links_per_pair * 2 * 400);
}

// A small fabric whose uplinks would fit one spine still gets two, so no spine is a single
// point of failure; a leaf with one uplink cannot use a second spine.
TEST(Plan, NeverASingleSpineWhenLeavesHaveTwoUplinks) {
  const char* base =
      "cluster: {{gpu: h100-sxm, nodes: 8, nic: cx7-400g, nics_per_node: 2}}\n"
      "fabric: {{technology: roce, topology: clos2, switch: arista-7060x6, "
      "oversubscription: {}}}\n";
  const Plan p = plan_of(fmt::format(fmt::runtime(base), 1));  // 2 leaves x 8 uplinks
  EXPECT_EQ(p.topo.leaves, 2);
  EXPECT_EQ(p.topo.spines, 2);
  EXPECT_EQ(p.topo.spine_down, 2 * 4);  // each leaf: 4 links to each spine
  const Plan one_up = plan_of(fmt::format(fmt::runtime(base), 8));  // 8:1: one uplink a leaf
  EXPECT_EQ(one_up.topo.leaf_up, 1);
  EXPECT_EQ(one_up.topo.spines, 1);
}

TEST(Plan, SpineHeadroomAddsSpinesAndIsReported) {
  const char* base =
      "cluster: {{gpu: h100-sxm, nodes: 64, nic: cx7-400g}}\nfabric: {{technology: infiniband, "
      "switch: qm9700, spine_headroom: {}}}\n";
  const Plan none = plan_of(fmt::format(fmt::runtime(base), 0));
  const Plan half = plan_of(fmt::format(fmt::runtime(base), 0.5));
  EXPECT_EQ(half.spine_total, 2 * none.spine_total);
  EXPECT_NEAR(half.spine_ports_free_fraction, 0.5, 0.01);
  // The headroom is kept for growth: growing into it needs no new tier, so the growth limit is
  // the switch's (qm9700: 32 nodes a leaf, 64 leaves under 64-port spines, 8 rails: 256 nodes).
  EXPECT_EQ(half.max_nodes_same_tiers, none.max_nodes_same_tiers);
  EXPECT_EQ(none.max_nodes_same_tiers, 256);
}

TEST(Plan, PlanesSplitTheNic) {
  const Plan p = plan_of(
      "cluster: {gpu: b200, nodes: 64, nic: cx8-800g}\nfabric: {technology: roce, switch: sn5600, "
      "planes: 2}\n");
  EXPECT_EQ(p.topo.lane_gbps, 400);
  EXPECT_EQ(p.topo.radix, 128);
  EXPECT_EQ(p.node_leaf_total, 2 * 64 * 8);
}

// 512 B200 with 400G NICs: InfiniBand takes two tiers of QM9700 ($3.46M); RoCE's fewest tiers
// is one modular chassis ($3.64M), but two tiers of 7060X6 perform as InfiniBand's do for less
// ($3.33M), and the guide finds RoCE's price/performance best at this size: RoCE, and the reason
// names both RoCE fabrics. (It had chosen InfiniBand as "RoCE's network costs more".) A budget
// the fewest-tier option of a technology breaks is met by another of it where one fits.
TEST(Plan, RoceAtInfinibandsTiersWhereItCostsNoMore) {
  const char* spec =
      "cluster: {{gpu: b200, gpus: 512, nic: cx7-400g}}\nconstraints: {{goal: time{}}}\n";
  const Plan p = plan_of(fmt::format(fmt::runtime(spec), ""));
  EXPECT_EQ(p.technology, Technology::kRoce) << p.technology_reason;
  EXPECT_EQ(p.topo.tiers, 2);
  EXPECT_NE(p.technology_reason.find("price/performance best"), std::string::npos);
  EXPECT_NE(p.technology_reason.find("RoCE fabric, arista-7800r3"), std::string::npos)
      << p.technology_reason;
  EXPECT_NE(p.switch_reason.find("no more tiers than InfiniBand's 2"), std::string::npos)
      << p.switch_reason;
  // Within a budget that the cheapest fabric alone meets.
  const Plan tight = plan_of(fmt::format(fmt::runtime(spec), ", budget: 34.25M"));
  EXPECT_LE(tight.bom.capex_usd, 34.25e6) << tight.technology_reason;
  for (const auto& w : tight.warnings)
    EXPECT_EQ(w.find("exceeds constraints.budget"), std::string::npos) << w;
}

// A dragonfly whose bisection carries all its injection bandwidth is not called tapered (it
// had said "carries 100% ..., so traffic between groups is tapered").
TEST(Plan, AnUntaperedDragonflyIsNotCalledTapered) {
  const Plan p = plan_of(
      "cluster: {gpu: h100-sxm, nodes: 256, nic: cx7-400g}\nfabric: {technology: infiniband, "
      "topology: dragonfly, switch: qm9700}\n");
  ASSERT_EQ(p.topo.kind, TopologyKind::kDragonfly);
  bool noted = false;
  for (const auto& n : p.notes)
    if (n.find("dragonfly+") != std::string::npos) {
      noted = true;
      EXPECT_NE(n.find("carries 100%"), std::string::npos) << n;
      EXPECT_EQ(n.find("so traffic between groups is tapered"), std::string::npos) << n;
    }
  EXPECT_TRUE(noted);
}

TEST(Plan, TechnologyAutoFollowsGoalAndBudget) {
  const char* base =
      "cluster: {{gpu: h100-sxm, gpus: {}, nic: cx7-400g}}\nconstraints: {{goal: {}{}}}\n";
  EXPECT_EQ(plan_of(fmt::format(fmt::runtime(base), 2048, "time", "")).technology,
            Technology::kInfiniband);
  // Up to 1,000 GPUs the guide finds RoCE's price/performance best: RoCE where its network
  // costs no more (128 GPUs: one 7060X6 against two tiers of InfiniBand), InfiniBand where the
  // catalog's RoCE costs more (256 GPUs: staying one tier takes a modular chassis, $2.8M against
  // one Q3400), which the reason says rather than contradicting its own figures.
  const Plan small = plan_of(fmt::format(fmt::runtime(base), 128, "time", ""));
  EXPECT_EQ(small.technology, Technology::kRoce) << small.technology_reason;
  EXPECT_NE(small.technology_reason.find("price/performance best;"), std::string::npos);
  const Plan chassis = plan_of(fmt::format(fmt::runtime(base), 256, "time", ""));
  EXPECT_EQ(chassis.technology, Technology::kInfiniband) << chassis.technology_reason;
  EXPECT_NE(chassis.technology_reason.find("RoCE's network costs more"), std::string::npos)
      << chassis.technology_reason;
  const Plan cost = plan_of(fmt::format(fmt::runtime(base), 2048, "cost", ""));
  EXPECT_NE(cost.technology_reason.find("cost"), std::string::npos);
  // A budget InfiniBand breaks but RoCE meets.
  const Plan ib = plan_of(fmt::format(fmt::runtime(base), 2048, "time", ""));
  double roce_capex = 0;
  for (const auto& c : ib.candidates)
    if (c.technology == Technology::kRoce && c.note.empty() &&
        (roce_capex == 0 || c.network_capex_usd < roce_capex))
      roce_capex = c.network_capex_usd;
  ASSERT_GT(roce_capex, 0);
  const double budget = ib.bom.capex_usd - 1;
  if (ib.bom.capex_usd - ib.bom.network_capex_usd + roce_capex < budget) {
    const Plan b =
        plan_of(fmt::format(fmt::runtime(base), 2048, "time", fmt::format(", budget: {}", budget)));
    EXPECT_EQ(b.technology, Technology::kRoce);
    EXPECT_NE(b.technology_reason.find("budget"), std::string::npos);
    for (const auto& w : b.warnings) EXPECT_EQ(w.find("budget"), std::string::npos) << w;
  }
  // A budget nothing meets is a warning the plan carries (it was chosen as if none were given).
  const Plan over = plan_of(fmt::format(fmt::runtime(base), 2048, "time", ", budget: 1000000"));
  std::string warned;
  for (const auto& w : over.warnings)
    if (w.find("constraints.budget") != std::string::npos) warned = w;
  EXPECT_NE(warned.find(fmt::format("capex {} exceeds constraints.budget $1M (so would ",
                                    units::format_usd(over.bom.capex_usd))),
            std::string::npos)
      << warned;
  EXPECT_NE(warned.find("fewer GPUs"), std::string::npos) << warned;
  const Plan forced = plan_of(
      "cluster: {gpu: h100-sxm, gpus: 2048, nic: cx7-400g}\nfabric: {technology: roce}\n"
      "constraints: {budget: 1000000}\n");
  EXPECT_FALSE(forced.warnings.empty());
  EXPECT_TRUE(std::any_of(forced.warnings.begin(), forced.warnings.end(), [](const std::string& w) {
    return w.find("exceeds constraints.budget $1M: fewer GPUs") != std::string::npos;
  }));
  // An Ethernet-only NIC leaves RoCE.
  EXPECT_EQ(plan_of("cluster: {gpu: h100-sxm, gpus: 2048, nic: thor2-400g}\n").technology,
            Technology::kRoce);
}

TEST(Plan, WarnsWhereThePlanContradictsTheGuide) {
  const Plan p = plan_of(
      "cluster: {gpu: h100-sxm, gpus: 8192, nic: cx7-400g}\nfabric: {technology: roce, switch: "
      "arista-7060x6, load_balancing: ecmp}\n");
  std::string all;
  for (const auto& w : p.warnings) all += w + "\n";
  EXPECT_NE(all.find("plain per-flow ECMP"), std::string::npos) << all;
  EXPECT_NE(all.find("recommends InfiniBand"), std::string::npos) << all;
  const Plan pcie = plan_of("cluster: {gpu: h100-sxm, nodes: 4, nic: cx8-800g}\n");
  bool warned = false;
  for (const auto& w : pcie.warnings) warned = warned || w.find("PCIe Gen5") != std::string::npos;
  EXPECT_TRUE(warned);
}

TEST(Plan, BomAddsUp) {
  const Plan p = plan_of("cluster: {gpu: h100-sxm, nodes: 128, nic: cx7-400g}\n");
  double capex = 0, net = 0;
  long long switches = 0;
  for (const auto& it : p.bom.items) {
    capex += it.unit_usd * it.qty;
    if (it.category != "compute") net += it.unit_usd * it.qty;
    if (it.category == "switch") switches += it.qty;
    EXPECT_FALSE(it.source.empty()) << it.id;
  }
  EXPECT_NEAR(capex, p.bom.capex_usd, 1);
  EXPECT_NEAR(net, p.bom.network_capex_usd, 1);
  EXPECT_EQ(switches, p.switch_total);
  EXPECT_NEAR(p.bom.network_usd_per_gpu * p.gpus, p.bom.network_capex_usd, 1);
  EXPECT_GT(p.bom.network_share, 0.05);
  EXPECT_LT(p.bom.network_share, 0.5);
}

// A DGX's datasheet figures include its eight ConnectX cards (catalog node.nics): the BOM lists
// the plan's NICs on their own line and takes the included ones out of the server's, so the
// cluster pays for each NIC once. A server whose figure says nothing of its NICs is as written.
TEST(Plan, TheServerLineLeavesOutTheNicsItsFigureIncludes) {
  auto cat = *builtin_catalog();
  for (const auto& [gpu, nic, nics] :
       {std::tuple{"h100-sxm", "cx7-400g", 8}, std::tuple{"h100-sxm", "cx8-800g", 4},
        std::tuple{"b200", "cx7-400g", 8}, std::tuple{"a100-sxm-40g", "cx6-200g", 8},
        std::tuple{"h200-sxm", "cx7-400g", 8}}) {
    const Plan p = plan_of(fmt::format(
        "cluster: {{gpu: {}, nodes: 16, nic: {}, nics_per_node: {}}}\n", gpu, nic, nics));
    const GpuModel& g = cat.gpus.at(gpu);
    double included_usd = 0, included_w = 0;
    for (const auto& [id, count] : g.node_nics) {
      if (id == g.networks.storage_nic) continue;  // stays in the server's line
      included_usd += count * cat.nics.at(id).cost.price_usd;
      included_w += count * cat.nics.at(id).cost.power_w;
    }
    EXPECT_EQ(g.node_nics.empty(), std::string(gpu) == "h200-sxm") << gpu;
    bool server = false, nic_line = false;
    for (const auto& it : p.bom.items) {
      if (it.category == "compute") {
        server = true;
        EXPECT_NEAR(it.unit_usd, g.node.price_usd - included_usd, 1e-6) << gpu;
        EXPECT_NEAR(it.unit_w, g.node.power_w - included_w, 1e-6) << gpu;
        EXPECT_EQ(it.source.find("less the NICs it includes") != std::string::npos,
                  !g.node_nics.empty())
            << it.source;
      }
      if (it.category == "nic") {
        nic_line = true;
        EXPECT_EQ(it.qty, 16LL * nics) << gpu;
        EXPECT_EQ(it.unit_usd, cat.nics.at(nic).cost.price_usd);
      }
    }
    EXPECT_TRUE(server && nic_line) << gpu;
  }
  // Eight of the server's own NICs: the two lines together are the datasheet server's figures.
  const Plan dgx = plan_of("cluster: {gpu: h100-sxm, nodes: 16, nic: cx7-400g}\n");
  double usd = 0, w = 0;
  for (const auto& it : dgx.bom.items)
    if (it.category == "compute" || it.category == "nic")
      usd += it.unit_usd * it.qty, w += it.unit_w * it.qty;
  EXPECT_NEAR(usd, 16 * cat.gpus.at("h100-sxm").node.price_usd, 1e-3);
  EXPECT_NEAR(w, 16 * cat.gpus.at("h100-sxm").node.power_w, 1e-3);
}

// Every cabling row is one link; no port is used twice; counts match the plan.
void check_cabling(const std::string& yaml) {
  const Plan p = plan_of(yaml);
  auto cat = *builtin_catalog();
  std::set<std::string> ports;
  long long rows = 0;
  bool dup = false;
  for_each_link(p, cat, [&](const CableRun& r) {
    ++rows;
    dup = dup || !ports.insert(r.a_device + "#" + r.a_port).second;
    dup = dup || !ports.insert(r.b_device + "#" + r.b_port).second;
    const int bp = std::atoi(r.b_port.c_str());
    EXPECT_GE(bp, 1);
    EXPECT_LE(bp, p.topo.radix) << r.b_device;
  });
  EXPECT_FALSE(dup) << yaml;
  EXPECT_EQ(rows, p.link_total) << yaml;
  // Every node and appliance port where leaf_endpoints (the bisection's count) places it, and
  // every unit holds nodes.
  std::vector<int> on_leaf(static_cast<size_t>(p.topo.leaves), 0);
  std::set<long long> units;
  for_each_link(
      p, cat,
      [&](const CableRun& r) {
        if (r.plane != 0 || (r.kind != LinkKind::kNodeLeaf && r.kind != LinkKind::kApplianceLeaf))
          return;
        ++on_leaf[static_cast<size_t>(r.b_index)];
        if (r.kind == LinkKind::kNodeLeaf)
          units.insert(p.topo.kind == TopologyKind::kSingle
                           ? 0
                           : r.b_index / std::max(1, p.topo.leaves_per_unit));
      },
      false);
  EXPECT_EQ(on_leaf, leaf_endpoints(p.topo, p.nodes, p.appliance_ports)) << yaml;
  if (p.topo.rail_optimized) {
    EXPECT_EQ(static_cast<int>(units.size()), p.topo.units) << yaml;
  }
  const std::string csv = cabling_csv(p, cat);
  EXPECT_EQ(csv, cabling_csv(p, cat));  // deterministic
  // The front-panel names are one-to-one with the port numbers on every device.
  std::set<std::string> names;
  std::istringstream in(csv);
  std::string line;
  std::getline(in, line);
  while (std::getline(in, line)) {
    const auto f = split_csv(line);
    ASSERT_EQ(f.size(), 9u) << line;
    EXPECT_EQ(f[8], "compute") << line;
    EXPECT_TRUE(names.insert(f[0] + "#" + f[6]).second) << line;
    EXPECT_TRUE(names.insert(f[2] + "#" + f[7]).second) << line;
    EXPECT_EQ(f[7], panel_port_name(p, std::atoi(f[3].c_str()))) << line;
  }
}

// A partly filled last pod keeps every spine but only the core uplinks its leaves need (1:1 at
// the spine): 19 units of 32 nodes in pods of 4 units leave 3 units in the fifth pod.
// What plugs into a switch cage serves every port the cage carries at the link speed (a
// Quantum-2 cage: two 400G ports; a 7060X6 800G cage broken out: two; a Q3400 cage at 400G:
// four): a twin-port transceiver, a splitter to that many NICs, or between switches one cable of
// the cage's speed; never a single-port part, which would leave a cage's other port unreachable
// and, counted per link, fill more cages than the switches have.
TEST(Plan, EverySwitchCageTakesOnePartForAllItsPorts) {
  auto cat = *builtin_catalog();
  const std::string h100 = "cluster: {gpu: h100-sxm, nodes: 128, nic: cx7-400g}\n";
  for (const std::string& fabric :
       {std::string("fabric: {technology: infiniband, switch: qm9700}\n"),
        std::string("fabric: {technology: infiniband, switch: q3400}\n"),
        std::string("fabric: {technology: roce, switch: arista-7060x6}\n"),
        std::string("fabric: {technology: roce, switch: arista-7060x6, rail_optimized: false}\n"),
        std::string("fabric: {technology: infiniband, switch: qm9700, planes: 2}\n")}) {
    const Plan p = plan_of(h100 + fabric);
    const int cage = p.sw.ports_per_cage_at(p.topo.lane_gbps);
    long long plugs = 0;
    for (const auto& [kind, links] : {std::pair{LinkKind::kNodeLeaf, p.node_leaf_total},
                                      std::pair{LinkKind::kLeafSpine, p.leaf_spine_total},
                                      std::pair{LinkKind::kSpineCore, p.spine_core_total}}) {
      if (links == 0) continue;
      const LinkMedium m = link_medium(p, cat, kind);
      const bool node_end = kind == LinkKind::kNodeLeaf;
      const int switch_ends = node_end ? 1 : 2;
      if (m.cable) {
        EXPECT_EQ(m.links_per_cable, cage) << fabric << link_kind_name(kind);
        if (node_end)
          EXPECT_EQ(m.cable->links, cage) << fabric << m.cable->id;
        else
          EXPECT_DOUBLE_EQ(m.cable->gbps, p.topo.lane_gbps * cage) << fabric << m.cable->id;
        plugs += switch_ends * ((links + cage - 1) / cage);
      } else {
        ASSERT_TRUE(m.xcvr_switch) << fabric << link_kind_name(kind);
        EXPECT_EQ(m.xcvr_switch->links, cage) << fabric << m.xcvr_switch->id;
        plugs += (switch_ends * links + cage - 1) / cage;
      }
    }
    EXPECT_LE(plugs, 1LL * p.switch_total * p.sw.cages()) << fabric;
    EXPECT_TRUE(p.warnings.empty() || p.warnings.front().find("no cable") == std::string::npos)
        << fabric << p.warnings.front();
  }
}

// The BOM's switch-side parts are the cages the cabling plan's ports use, cage by cage: 100 nodes
// on 4 units of 25 leave each leaf's 13th twin-port cage half used (416 parts, not 400), and a
// leaf of 85 node links (on 128 ports, 2 a cage) starts its uplinks on cage 44, not in cage 43
// beside a node link, so that no cage holds two kinds of link.
TEST(Plan, TheBomBuysAPartForEveryCageTheCablingUses) {
  auto cat = *builtin_catalog();
  for (const std::string& yaml :
       {std::string("cluster: {gpu: h100-sxm, nodes: 100, nic: cx7-400g}\n"
                    "fabric: {technology: infiniband, rail_optimized: true}\n"),
        std::string("cluster: {gpu: h100-sxm, nodes: 1000, nic: cx7-400g}\n"
                    "fabric: {technology: roce}\n"),
        std::string("cluster: {gpu: h100-sxm, nodes: 2048, nic: cx7-400g}\n"
                    "fabric: {technology: roce, switch: arista-7060x6, oversubscription: 2}\n")}) {
    const Plan p = plan_of(yaml);
    std::map<std::string, long long> bom;
    for (const auto& it : p.bom.items)
      if (it.role.find("switch side") != std::string::npos)
        bom[it.role.substr(0, it.role.find(" ("))] += it.qty;
    std::map<std::pair<std::string, int>, std::string> cage_kind;
    std::map<std::string, long long> cages;
    for_each_link(p, cat, [&](const CableRun& r) {
      const std::string kind =
          r.kind == LinkKind::kApplianceLeaf ? "node-leaf" : std::string(link_kind_name(r.kind));
      for (const auto& [dev, port] :
           {std::pair{r.a_device, r.a_port_no}, std::pair{r.b_device, r.b_port_no}}) {
        if (port <= 0) continue;
        const auto [it, fresh] = cage_kind.emplace(std::pair{dev, port_slot(p, port).cage}, kind);
        EXPECT_EQ(it->second, kind) << yaml << dev << " port " << port << ": a cage of two kinds";
        cages[kind] += fresh;
      }
    });
    for (const auto& [kind, n] : cages) EXPECT_EQ(bom[kind], n) << yaml << kind;
    if (p.nodes == 100) {
      EXPECT_EQ(bom["node-leaf"], 416);
    }
  }
}

// An InfiniBand link runs the same lanes at the same rate at both ends, and a switch's lanes run at
// its SerDes' rate or slower. A ConnectX-7's one 400G port is 4 x 100G lanes: split over 2 planes
// it is 2 links of 2 x 100G, which an HDR switch (50G lanes) cannot meet: forced, it is an error
// at fabric.switch that names the lane rate it needs; the automatic choice passes it over. A NIC
// of slower lanes (ConnectX-6, 4 x 50G) still plans on an NDR switch; Ethernet, whose optics carry
// gearboxes, is not checked.
// A node of 4 H100 is the 4-GPU board, linked directly (catalog direct_board_gpus): the plan
// says so in a note and marks it; 8 a node, or a spec that says nvswitch, is the switch board.
TEST(Plan, TheDirectLinkBoardIsNamed) {
  auto board = [](int gpn, const char* extra) {
    return plan_of(
        fmt::format("cluster: {{gpu: h100-sxm, nodes: 2, gpus_per_node: {}, nic: "
                    "cx7-400g, nics_per_node: {}{}}}\n",
                    gpn, gpn, extra));
  };
  auto noted = [](const Plan& p) {
    return std::any_of(p.notes.begin(), p.notes.end(), [](const std::string& n) {
      return n.find("links them directly, without NVSwitch") != std::string::npos;
    });
  };
  const Plan four = board(4, "");
  EXPECT_TRUE(four.scaleup_direct);
  EXPECT_TRUE(noted(four));
  for (const Plan& p : {board(8, ""), board(4, ", scaleup_board: nvswitch")}) {
    EXPECT_FALSE(p.scaleup_direct);
    EXPECT_FALSE(noted(p));
  }
  const Plan said = board(4, ", scaleup_board: direct");
  EXPECT_TRUE(said.scaleup_direct);
  EXPECT_FALSE(noted(said));  // the spec said it: nothing to point out
}

TEST(Plan, ANicsLanesMustMeetTheSwitchPorts) {
  const std::string h100 = "cluster: {gpu: h100-sxm, nodes: 64, nic: cx7-400g}\n";
  auto errs = plan_errors(h100 + "fabric: {technology: infiniband, switch: qm8700, planes: 2}\n");
  ASSERT_EQ(errs.size(), 1u);
  EXPECT_EQ(errs[0].key, "fabric.switch");
  EXPECT_NE(errs[0].message.find("qm8700's ports run lanes of at most 50G; a cx7-400g port split "
                                 "over 2 planes runs 2 lanes of 100G a link, so the two ends of a "
                                 "200G link cannot meet"),
            std::string::npos)
      << errs[0].message;
  EXPECT_EQ(errs[0].hint, "choose a switch of 100G lanes or faster: qm9700; or use fewer planes");
  EXPECT_EQ(plan_of(h100 + "fabric: {technology: infiniband, planes: 2}\n").sw.id, "qm9700");
  errs = plan_errors(h100 + "fabric: {technology: infiniband, switch: qm8700, planes: 4}\n");
  ASSERT_EQ(errs.size(), 1u);
  EXPECT_NE(errs[0].message.find("split over 4 planes runs 1 lane of 100G a link"),
            std::string::npos)
      << errs[0].message;
  EXPECT_EQ(errs[0].hint,
            "no catalog switch runs 100G ports on 100G lanes or faster: add one with a catalog "
            "file, or use fewer planes");
  EXPECT_EQ(plan_of("cluster: {gpu: a100-sxm-80g, nodes: 64, nic: cx6-200g}\nfabric: {technology: "
                    "infiniband, switch: qm9700}\n")
                .sw.id,
            "qm9700");
  EXPECT_EQ(
      plan_of(h100 + "fabric: {technology: roce, topology: clos2, switch: arista-7800r3}\n").sw.id,
      "arista-7800r3");
}

// fabric.planes splits each NIC's one port into a link per plane: the NIC's cage takes one part
// of the port's full speed (400G SR4 broken out to 2 x 200G), not one 200G part per link (which
// neither fits an OSFP NIC cage nor is one a link).
TEST(Plan, APortSplitOverPlanesTakesOnePartAtTheNic) {
  for (const int planes : {1, 2}) {
    const Plan p = plan_of(
        fmt::format("cluster: {{gpu: h100-sxm, nodes: 128, nic: cx7-400g}}\nfabric: {{technology: "
                    "infiniband, switch: qm9700, planes: {}}}\n",
                    planes));
    ASSERT_EQ(p.topo.planes, planes);
    long long nic_side = 0;
    for (const auto& it : p.bom.items) {
      if (it.role.find("NIC side") == std::string::npos) continue;
      nic_side += it.qty;
      EXPECT_EQ(it.id, "xcvr-400g-sr4") << planes;
    }
    EXPECT_EQ(nic_side, 128LL * 8) << planes;
    EXPECT_EQ(p.node_leaf_total, 128LL * 8 * planes);
  }
  // A fabric manager's ports are links of their own plane, not a NIC port split: a part each,
  // at the link's speed.
  const Plan p = plan_of(
      "cluster: {gpu: h100-sxm, nodes: 128, nic: cx7-400g}\nfabric: {technology: infiniband, "
      "switch: qm9700, planes: 2, appliance_ports: 2}\n");
  long long nic_side = 0, appliance_side = 0;
  for (const auto& it : p.bom.items) {
    if (it.role.find("NIC side") != std::string::npos) nic_side += it.qty;
    if (it.role.find("appliance side") != std::string::npos) {
      appliance_side += it.qty;
      EXPECT_EQ(it.id, "xcvr-200g-sr4");
    }
  }
  EXPECT_EQ(nic_side, 128LL * 8);
  EXPECT_EQ(appliance_side, p.node_leaf_total - 128LL * 8 * 2);
  EXPECT_GT(appliance_side, 0);
}

// A node of fewer GPUs than the catalog's server is priced and powered at its share of it,
// GPU for GPU, and says so; a full node keeps the server's figure.
TEST(Plan, ANodeOfFewerGpusTakesItsShareOfTheServer) {
  auto compute = [](const Plan& p) {
    for (const auto& it : p.bom.items)
      if (it.category == "compute") return it;
    return BomItem{};
  };
  const Plan full = plan_of(
      "cluster: {gpu: h100-sxm, nodes: 8, nic: cx7-400g}\nfabric: {technology: infiniband}\n");
  const Plan two = plan_of(
      "cluster: {gpu: h100-sxm, nodes: 8, gpus_per_node: 2, nic: cx7-400g, nics_per_node: 2}\n"
      "fabric: {technology: infiniband}\n");
  const BomItem f = compute(full), t = compute(two);
  ASSERT_GT(f.unit_usd, 0);
  EXPECT_NEAR(t.unit_usd, f.unit_usd * 2 / 8, 0.01);
  EXPECT_NEAR(t.unit_w, f.unit_w * 2 / 8, 0.01);
  EXPECT_NE(t.source.find("scaled to 2 of its 8 GPUs (estimate)"), std::string::npos) << t.source;
  EXPECT_EQ(f.source.find("scaled"), std::string::npos) << f.source;
}

// A link's optics and its fibre are of one medium: single-mode DR optics (800G DR8 at the NIC)
// over single-mode fibre, not the cheaper multimode cord; multimode SR optics over multimode.
TEST(Plan, ALinksOpticsAndFibreAreOfOneMedium) {
  auto cat = *builtin_catalog();
  int optical = 0;
  for (const std::string& spec :
       {std::string("cluster: {gpu: b200, nodes: 64, nic: cx8-800g}\nfabric: {technology: "
                    "infiniband}\n"),
        std::string("cluster: {gpu: h100-sxm, nodes: 128, nic: cx7-400g}\nfabric: {technology: "
                    "infiniband, switch: qm9700, planes: 2}\n"),
        std::string("cluster: {gpu: h100-sxm, nodes: 600, nic: cx7-400g}\nfabric: {technology: "
                    "infiniband, switch: qm9700}\n")}) {
    const Plan p = plan_of(spec);
    for (const LinkKind kind : {LinkKind::kNodeLeaf, LinkKind::kLeafSpine, LinkKind::kSpineCore}) {
      const LinkMedium m = link_medium(p, cat, kind);
      if (m.cable || !m.xcvr_switch) continue;
      ++optical;
      ASSERT_TRUE(m.fibre && m.xcvr_end) << spec;
      EXPECT_NE(m.fibre->media, FibreMedia::kAny) << m.fibre->id;
      EXPECT_EQ(m.xcvr_switch->media, m.fibre->media) << spec << m.label();
      EXPECT_EQ(m.xcvr_end->media, m.fibre->media) << spec << m.label();
    }
  }
  EXPECT_GE(optical, 4);
}

TEST(Plan, PartialLastPodTakesOnlyTheCoreUplinksItNeeds) {
  const Plan p = plan_of(
      "cluster: {gpu: h100-sxm, nodes: 600, nic: cx7-400g}\nfabric: {technology: infiniband, "
      "switch: qm9700}\n");
  const Topology& t = p.topo;
  ASSERT_EQ(t.kind, TopologyKind::kClos3);
  ASSERT_EQ(t.pods, 5);
  ASSERT_EQ(t.units, 19);
  EXPECT_EQ(t.last_pod_spine_up * 4, t.spine_up * 3);
  EXPECT_EQ(t.spine_core_links, 1LL * t.spines_per_pod * (4 * t.spine_up + t.last_pod_spine_up));
  auto cat = *builtin_catalog();
  std::map<std::string, int> ups;  // spine -> core uplinks in the cabling plan
  for_each_link(p, cat, [&](const CableRun& r) {
    if (r.kind == LinkKind::kSpineCore) ++ups[r.a_device];
  });
  EXPECT_EQ(ups["pod01-spine01"], t.spine_up);
  EXPECT_EQ(ups["pod05-spine01"], t.last_pod_spine_up);
  bool noted = false;
  for (const auto& n : p.notes)
    noted = noted || n.find("last pod holds 3 of 4") != std::string::npos;
  EXPECT_TRUE(noted);
}

TEST(Cabling, ConsistentForEveryTopology) {
  check_cabling(
      "cluster: {gpu: h100-sxm, nodes: 8, nic: cx7-400g}\nfabric: {technology: infiniband, switch: "
      "qm9700}\n");
  check_cabling(
      "cluster: {gpu: h100-sxm, nodes: 127, nic: cx7-400g}\nfabric: {technology: infiniband, "
      "switch: qm9700, scalable_unit: 32, appliance_ports: 4}\n");
  check_cabling(
      "cluster: {gpu: h100-sxm, nodes: 100, nic: cx7-400g}\nfabric: {technology: roce, switch: "
      "sn5600, oversubscription: 2}\n");
  check_cabling(
      "cluster: {gpu: h100-sxm, nodes: 40, nic: cx7-400g}\nfabric: {technology: roce, switch: "
      "sn5600, rail_optimized: false}\n");
  check_cabling(
      "cluster: {gpu: h100-sxm, nodes: 600, nic: cx7-400g}\nfabric: {technology: infiniband, "
      "switch: qm9700}\n");
  check_cabling(
      "cluster: {gpu: h100-sxm, nodes: 9000, nic: cx7-400g}\nfabric: {technology: infiniband, "
      "switch: qm9700}\n");
  check_cabling(
      "cluster: {gpu: b200, nodes: 64, nic: cx8-800g}\nfabric: {technology: roce, switch: sn5600, "
      "planes: 2}\n");
}

// Appliance ports (UFM's 4) that the nodes' units leave no room for take node slots instead, as
// the DGX SuperPOD's 127 nodes do in 4 units of 32: 128 nodes lay out as 4 units of 31 and a
// fifth of 4 (it built a fifth unit of 8 leaves and 256 uplinks that held the appliance alone).
// Where they fit, nothing changes.
TEST(Plan, AppliancePortsNeverMakeAUnitWithoutNodes) {
  auto cat = *builtin_catalog();
  const std::string base =
      "cluster: {{gpu: h100-sxm, nodes: {}, nic: cx7-400g}}\nfabric: {{technology: infiniband, "
      "switch: qm9700, appliance_ports: 4{}}}\n";
  for (const auto& [nodes, unit, npu, units] :
       {std::tuple{128, ", scalable_unit: 32", 31, 5}, std::tuple{96, ", scalable_unit: 32", 31, 4},
        std::tuple{128, "", 31, 5}, std::tuple{127, ", scalable_unit: 32", 32, 4}}) {
    const std::string yaml = fmt::format(fmt::runtime(base), nodes, unit);
    SCOPED_TRACE(yaml);
    const Plan p = plan_of(yaml);
    EXPECT_EQ(p.topo.nodes_per_unit, npu);
    EXPECT_EQ(p.topo.units, units);
    // The last unit holds nodes, and the appliance ports are all cabled.
    EXPECT_GT(p.nodes - (p.topo.units - 1) * p.topo.nodes_per_unit, 0);
    long long appliance = 0;
    for_each_link(
        p, cat, [&](const CableRun& r) { appliance += r.kind == LinkKind::kApplianceLeaf; }, false);
    EXPECT_EQ(appliance, 4);
    bool noted = false;
    for (const auto& n : p.notes)
      noted = noted || n.find(fmt::format("scalable units hold {} nodes, not {}", npu,
                                          p.topo.unit_slots)) != std::string::npos;
    EXPECT_EQ(noted, npu < p.topo.unit_slots);
  }
  check_cabling(fmt::format(fmt::runtime(base), 128, ", scalable_unit: 32"));
  // Top of rack a leaf holds whole nodes whatever the unit, so fewer nodes a unit would free no
  // port: where every leaf is full the appliances get leaves of their own, all their ports cabled
  // (40 ports over 32-port leaves took one leaf and left 8 uncabled).
  for (const auto& [ports, units] : {std::pair{4, 51}, std::pair{40, 52}}) {
    const std::string tor = fmt::format(
        "cluster: {{gpu: h100-sxm, nodes: 200, nic: cx7-400g}}\nfabric: {{technology: "
        "infiniband, switch: qm9700, rail_optimized: false, appliance_ports: {}}}\n",
        ports);
    SCOPED_TRACE(tor);
    const Plan p = plan_of(tor);
    EXPECT_EQ(p.topo.nodes_per_unit, 4);
    EXPECT_EQ(p.topo.units, units);
    check_cabling(tor);
  }
  // So do more appliance ports than even units of one node would leave free: 2 nodes' unit
  // leaves 240 of its 8 leaves' 256 ports, and 1000 ports need 3 units more, every port cabled
  // (it took one unit more and left 504 uncabled).
  const Plan tiny = plan_of(
      "cluster: {gpu: h100-sxm, nodes: 2, nic: cx7-400g}\nfabric: {technology: infiniband, "
      "switch: qm9700, topology: clos2, appliance_ports: 1000}\n");
  EXPECT_EQ(tiny.topo.nodes_per_unit, 2);
  EXPECT_EQ(tiny.topo.units, 4);
  long long cabled = 0;
  for_each_link(
      tiny, cat, [&](const CableRun& r) { cabled += r.kind == LinkKind::kApplianceLeaf; }, false);
  EXPECT_EQ(cabled, 1000);
  EXPECT_EQ(tiny.node_leaf_total, 2 * 8 + 1000);
}

TEST(Cabling, NamesAndMediaAreRealistic) {
  const Plan p = plan_of(
      "cluster: {gpu: h100-sxm, nodes: 64, nic: cx7-400g}\nfabric: {technology: infiniband, "
      "switch: qm9700}\n");
  auto cat = *builtin_catalog();
  const std::string csv = cabling_csv(p, cat);
  // The numbered columns first, as before the names were added, so their readers are unchanged.
  EXPECT_EQ(csv.substr(0, csv.find('\n')),
            "a_device,a_port,b_device,b_port,cable,length_class,a_port_name,b_port_name,network");
  EXPECT_NE(csv.find("node001,nic0,su01-r0-leaf,1,"), std::string::npos);
  EXPECT_NE(csv.find("node064,nic7,su02-r7-leaf,32,"), std::string::npos);
  EXPECT_NE(csv.find("su01-r0-leaf,33,spine01,1,"), std::string::npos);
  // Leaf-spine at hall distance on twin-port cages (the QM9700's 32 OSFP cages of two 400G
  // ports): twin-port transceivers + fibre, and port 33 is the second half of cage 17.
  EXPECT_NE(
      csv.find("su01-r0-leaf,33,spine01,1,xcvr-2x400g-sr8+fibre-mmf-mpo,hall,17/1,1/1,compute\n"),
      std::string::npos);
  EXPECT_NE(
      csv.find("su01-r0-leaf,34,spine02,1,xcvr-2x400g-sr8+fibre-mmf-mpo,hall,17/2,1/1,compute\n"),
      std::string::npos);
  EXPECT_NE(csv.find(",nic0,1/1,compute\n"), std::string::npos);  // a node's port keeps its name
}

// One port model names a port for the cabling plan and for every flavour: cabling port 65 of a
// 64 x 800G switch run at 400G is cage 33's first 400G port (lanes 1-4), 66 its second.
TEST(Ports, EveryFlavourNamesTheSameSubPortOfACage) {
  const Plan p = plan_of(
      "cluster: {gpu: h100-sxm, nodes: 8, nic: cx7-400g, nics_per_node: 2}\n"
      "fabric: {technology: roce, topology: clos2, switch: arista-7060x6}\n");
  ASSERT_EQ(p.topo.lane_gbps, 400);
  EXPECT_EQ(panel_port_name(p, 65), "33/1");
  EXPECT_EQ(eos_port_name(p, 65), "Ethernet33/1");
  EXPECT_EQ(sonic_port_name(p, 65), "Ethernet256");
  EXPECT_EQ(sonic_port_alias(p, 65), "etp33a");
  EXPECT_EQ(sonic_port_lanes(p, 65), "273,274,275,276");
  EXPECT_EQ(cumulus_port_name(p, 65), "swp33s0");
  EXPECT_EQ(panel_port_name(p, 66), "33/2");
  EXPECT_EQ(eos_port_name(p, 66), "Ethernet33/5");
  EXPECT_EQ(sonic_port_name(p, 66), "Ethernet260");
  EXPECT_EQ(sonic_port_alias(p, 66), "etp33b");
  EXPECT_EQ(cumulus_port_name(p, 66), "swp33s1");
  EXPECT_EQ(eos_speed(p), "400g-4");
  EXPECT_EQ(cumulus_breakout(p), "2x");
  EXPECT_EQ(cage_ports(p, {66}), (std::vector<int>{65, 66}));
  // Every port: each flavour's name says the cage the front-panel name says.
  for (int port = 1; port <= p.topo.radix; ++port) {
    const PortSlot s = port_slot(p, port);
    const std::string cage = std::to_string(s.cage);
    EXPECT_EQ(panel_port_name(p, port), cage + "/" + std::to_string(s.subport + 1));
    EXPECT_EQ(eos_port_name(p, port).rfind("Ethernet" + cage + "/", 0), 0u) << port;
    EXPECT_EQ(cumulus_port_name(p, port), "swp" + cage + "s" + std::to_string(s.subport));
  }
  // At the cages' own speed a port is a whole cage: no sub-port in any name.
  const Plan q = plan_of(
      "cluster: {gpu: b200, nodes: 8, nic: cx8-800g, nics_per_node: 2}\n"
      "fabric: {technology: roce, topology: clos2, switch: arista-7060x6}\n");
  ASSERT_EQ(q.topo.lane_gbps, 800);
  EXPECT_EQ(panel_port_name(q, 33), "33");
  EXPECT_EQ(eos_port_name(q, 33), "Ethernet33/1");
  EXPECT_EQ(cumulus_port_name(q, 33), "swp33");
  EXPECT_EQ(cumulus_breakout(q), "");
}

}  // namespace gf

namespace gf {
namespace {

const char* kDgx =
    "name: t\ncluster: {gpu: h100-sxm, nodes: 127, nic: cx7-400g}\n"
    "fabric: {technology: infiniband, switch: qm9700, scalable_unit: 32, appliance_ports: 4}\n";

std::map<std::string, long long> links_per_network(const Plan& p) {
  std::map<std::string, long long> out;
  std::istringstream in(cabling_csv(p, *builtin_catalog()));
  std::string line;
  std::getline(in, line);
  EXPECT_EQ(line,
            "a_device,a_port,b_device,b_port,cable,length_class,a_port_name,b_port_name,network");
  while (std::getline(in, line)) ++out[line.substr(line.rfind(',') + 1)];
  return out;
}

}  // namespace

TEST(Networks, WithoutTheSectionThePlanIsTheComputeFabricAlone) {
  const Plan p = plan_of(kDgx);
  EXPECT_FALSE(p.networks.has_value());
  const auto links = links_per_network(p);
  ASSERT_EQ(links.size(), 1u);
  EXPECT_EQ(links.at("compute"), p.link_total);
}

// DGX SuperPOD H100 RA, network fabrics, Figure 4 (DGX H100 network ports): each node has a
// pair of storage ports and a pair of in-band ports, one of each on either dual-port card, and
// one BMC port on the out-of-band network; the compute fabric's counts stay those of Table 4.
TEST(Networks, EveryDgxPortIsCabledAndTheComputeFiguresStayApart) {
  const Plan bare = plan_of(kDgx);
  const Plan p = plan_of(std::string(kDgx) + "networks:\n");
  ASSERT_TRUE(p.networks.has_value());
  EXPECT_EQ(p.switch_total, bare.switch_total);
  EXPECT_EQ(p.link_total, bare.link_total);
  EXPECT_DOUBLE_EQ(p.bom.capex_usd, bare.bom.capex_usd);
  EXPECT_DOUBLE_EQ(p.bom.network_power_w, bare.bom.network_power_w);
  const NetworksPlan& n = *p.networks;
  const NetworkPlan* st = n.find(NetworkKind::kStorage);
  const NetworkPlan* ib = n.find(NetworkKind::kInband);
  const NetworkPlan* oob = n.find(NetworkKind::kOob);
  ASSERT_TRUE(st && ib && oob);
  EXPECT_EQ(st->node_ports, 127 * 2);
  EXPECT_EQ(ib->node_ports, 127 * 2);
  EXPECT_EQ(oob->node_ports, 127);
  // 40 GB/s per node (the RA's GDS read figure) from storage servers of 8 x 200G (200 GB/s).
  EXPECT_EQ(n.storage_nodes, static_cast<int>(std::ceil(127 * 40.0 / 200)));
  // The OOB network reaches every server's BMC, every switch's management port, every PDU.
  long long switches = p.switch_total + st->switches() + ib->switches();
  EXPECT_EQ(oob->other_ports, n.storage_nodes + switches + n.pdus);
  EXPECT_EQ(n.racks, 32);  // 4 DGX a rack (an SU's 32 nodes in 8 racks)
  // The two ports of a node land on two different switches (NVIDIA HGX AI Factory enterprise
  // RA, network logical architecture: a node's two north-south ports go "to two separate
  // switches to provide redundancy").
  std::map<std::string, std::set<std::string>> leaves_of;
  for_each_network_link(p, [&](const NetworkLink& l) {
    if (l.a_device == "node001" && l.network != NetworkKind::kOob)
      leaves_of[network_kind_name(l.network)].insert(l.b_device);
  });
  EXPECT_EQ(leaves_of["storage"].size(), 2u);
  EXPECT_EQ(leaves_of["inband"].size(), 2u);
  // cabling.csv holds every link once, each network's count as planned.
  const auto links = links_per_network(p);
  EXPECT_EQ(links.at("compute"), p.link_total);
  for (const NetworkPlan* x : {st, ib, oob})
    EXPECT_EQ(links.at(network_kind_name(x->kind)), x->links()) << network_kind_name(x->kind);
  // Totals: each network's BOM adds up, and the networks' sum is reported apart.
  double sum = 0;
  for (const auto& x : n.nets) {
    double items = 0;
    for (const auto& it : x.bom.items) items += it.unit_usd * it.qty;
    EXPECT_NEAR(items, x.bom.capex_usd, 1e-6);
    sum += x.bom.capex_usd;
  }
  EXPECT_NEAR(sum, n.capex_usd, 1e-6);
  EXPECT_GT(n.capex_usd, 0);
}

// A DGX's figure also holds its two dual-port storage/in-band cards (DGX H100 datasheet; catalog
// node.nics): the storage network lists them, at no further cost, and the server line keeps
// them; a card the spec chooses instead is bought, at its own figure.
TEST(Networks, TheServersOwnStorageCardsArePaidForOnce) {
  auto cat = *builtin_catalog();
  const GpuModel& g = cat.gpus.at("h100-sxm");
  ASSERT_EQ(g.networks.storage_nic, "dual-cx7-400g");
  const Plan p = plan_of(std::string(kDgx) + "networks:\n");
  ASSERT_TRUE(p.networks.has_value());
  const NetworkPlan* st = p.networks->find(NetworkKind::kStorage);
  ASSERT_TRUE(st);
  EXPECT_EQ(st->nics, 127 * 2);
  EXPECT_EQ(st->nics_in_server, 127 * 2);
  long long cards = 0;
  for (const auto& it : st->bom.items)
    if (it.category == "nic") {
      cards += it.qty;
      EXPECT_EQ(it.unit_usd, 0) << it.role;
      EXPECT_EQ(it.unit_w, 0) << it.role;
      EXPECT_NE(it.source.find("h100-sxm server's figure"), std::string::npos) << it.source;
    }
  EXPECT_EQ(cards, 127 * 2);
  // The server line still holds them: only the compute NICs came out of it.
  for (const auto& it : p.bom.items) {
    if (it.category == "compute") {
      EXPECT_NEAR(it.unit_usd, g.node.price_usd - 8 * cat.nics.at("cx7-400g").cost.price_usd, 1e-6);
    }
  }
  // Another card than the server's own is bought.
  const Plan other = plan_of(std::string(kDgx) + "networks:\n  storage: {nic: cx7-400g}\n");
  const NetworkPlan* ost = other.networks->find(NetworkKind::kStorage);
  ASSERT_TRUE(ost);
  EXPECT_EQ(ost->nics_in_server, 0);
  double usd = 0;
  for (const auto& it : ost->bom.items)
    if (it.category == "nic") usd += it.unit_usd * it.qty;
  EXPECT_NEAR(usd, ost->nics * cat.nics.at("cx7-400g").cost.price_usd, 1e-6);
  // A server whose figure does not say (an estimate) pays for its cards.
  const Plan h200 = plan_of("cluster: {gpu: h200-sxm, nodes: 16, nic: cx7-400g}\nnetworks:\n");
  const NetworkPlan* hst = h200.networks->find(NetworkKind::kStorage);
  ASSERT_TRUE(hst);
  EXPECT_EQ(hst->nics_in_server, 0);
  EXPECT_GT(hst->bom.capex_usd, 0);
}

// An OOB network of one switch still reaches the in-band leaves over two of its 100G ports (the
// RA's "two uplinks per OOB to in-band"): alone, it was planned as one tier with no way out.
TEST(Networks, ALoneOobSwitchStillUplinksIntoTheInbandLeaves) {
  const Plan p = plan_of("cluster: {gpu: h100-sxm, nodes: 4, nic: cx7-400g}\nnetworks:\n");
  const NetworkPlan* oob = p.networks->find(NetworkKind::kOob);
  ASSERT_TRUE(oob);
  EXPECT_EQ(oob->leaves, 1);
  EXPECT_TRUE(oob->uplinks_to_inband);
  EXPECT_EQ(oob->leaf_up, 2);
  EXPECT_EQ(oob->leaf_spine_links, 2);
  EXPECT_EQ(oob->spines, 0);
  long long into_inband = 0;
  for_each_network_link(p, [&](const NetworkLink& l) {
    if (l.network == NetworkKind::kOob && l.a_device == "oob-leaf001" &&
        l.b_device.rfind("inband-leaf", 0) == 0)
      ++into_inband;
  });
  EXPECT_EQ(into_inband, 2);
}

TEST(Networks, OneTierWhileALeafPairHoldsEveryPortThenLeafSpine) {
  // 16 nodes: one SN4600C pair holds the in-band ports (DGX BasePOD deployment guide: the
  // in-band network is a pair of SN4600C, "SN4600 #1" and "#2", joined by an MLAG peer link).
  const std::string small =
      "cluster: {gpu: h100-sxm, nodes: 16, nic: cx7-400g}\n"
      "networks: {inband: {switch: sn4600c}, storage: {storage_nodes: 2}}\n";
  const Plan s = plan_of(small);
  const NetworkPlan* ib = s.networks->find(NetworkKind::kInband);
  ASSERT_TRUE(ib);
  EXPECT_EQ(ib->tiers, 1);
  EXPECT_EQ(ib->leaves, 2);
  EXPECT_EQ(ib->spines, 0);
  // The pair's MLAG peer link: two cables (DGX BasePOD deployment guide: peerlink bond members
  // swp57 and swp58), its last two ports.
  EXPECT_EQ(ib->isl_links, 2);
  long long peer = 0;
  for_each_network_link(s, [&](const NetworkLink& l) {
    if (!l.peer_link) return;
    ++peer;
    EXPECT_EQ(l.a_device, "inband-leaf-a01");
    EXPECT_EQ(l.b_device, "inband-leaf-b01");
    EXPECT_EQ(l.a_port, l.b_port);
    EXPECT_GT(std::stoi(l.a_port), 62);  // the last two of the 64 ports
  });
  EXPECT_EQ(peer, ib->isl_links);
  // 512 nodes: 512 ports a side, and the OOB switches' uplinks, on 64-port leaves less the two
  // peer-link ports at 3:1 (46 down, 16 up): 12 leaves a side, each port spread evenly and each
  // leaf's uplinks for the ports it uses (ceil(used / 3)).
  const std::string big =
      "cluster: {gpu: h100-sxm, nodes: 512, nic: cx7-400g}\n"
      "networks: {inband: {switch: sn4600c}, storage: {storage_nodes: 16}}\n";
  const Plan b = plan_of(big);
  const NetworkPlan* bi = b.networks->find(NetworkKind::kInband);
  const NetworkPlan* oob = b.networks->find(NetworkKind::kOob);
  ASSERT_TRUE(bi && oob);
  EXPECT_EQ(bi->tiers, 2);
  const long long side = 512 + (bi->reserved_ports + 1) / 2;
  EXPECT_EQ(bi->leaves, 2 * 12);
  EXPECT_EQ(bi->leaf_down, (side + 11) / 12);
  EXPECT_EQ(bi->leaf_up, (bi->leaf_down + 2) / 3);
  EXPECT_EQ(bi->isl_links, 12 * 2);
  EXPECT_GE(bi->spines, 2);
  // Every spine port holds at most one leaf uplink.
  EXPECT_LE(1LL * bi->leaves * bi->leaf_up, 1LL * bi->spines * bi->spine_sw.ports_at(100));
  // An OOB leaf's 48 x 1G ports uplink over two of its own 100G ports into the in-band leaves
  // (DGX SuperPOD H100 RA, Table 8: "Two uplinks per OOB to in-band"): no OOB spines, and the
  // in-band leaves keep a port for each. The OOB leaves are built per scalable unit.
  EXPECT_EQ(oob->sw.id, "sn2201");
  EXPECT_DOUBLE_EQ(oob->uplink_gbps, 100);
  EXPECT_TRUE(oob->uplinks_to_inband);
  EXPECT_EQ(oob->spines, 0);
  EXPECT_EQ(oob->leaf_up, 2);
  EXPECT_EQ(oob->leaf_spine_links, 2LL * oob->leaves);
  EXPECT_EQ(bi->reserved_ports, oob->leaf_spine_links);
  const long long units = std::max(1, b.topo.units);
  const long long per_unit = (512 + oob->other_ports + units - 1) / units;
  EXPECT_EQ(oob->leaves, units * ((per_unit + 47) / 48));
  // Every OOB uplink lands on an in-band leaf port that nothing else uses.
  std::set<std::pair<std::string, std::string>> inband_ports;
  long long up_links = 0;
  for_each_network_link(b, [&](const NetworkLink& l) {
    if (l.b_device.rfind("inband-leaf", 0) == 0) {
      EXPECT_TRUE(inband_ports.insert({l.b_device, l.b_port}).second) << l.b_device << l.b_port;
    }
    if (l.network == NetworkKind::kOob && l.a_device.rfind("oob-", 0) == 0) {
      EXPECT_EQ(l.b_device.rfind("inband-leaf", 0), 0u) << l.b_device;
      ++up_links;
    }
  });
  EXPECT_EQ(up_links, oob->leaf_spine_links);
}

TEST(Networks, VlanConvergesStorageOntoTheComputeFabric) {
  // 64 DGX on `fabric`, storage on the compute fabric (`storage`: more of networks.storage).
  auto vlan_spec = [](const std::string& fabric, const std::string& storage = "") {
    return "cluster: {gpu: h100-sxm, nodes: 64, nic: cx7-400g}\nfabric: {" + fabric +
           ", spine_headroom: 0.5}\nnetworks: {isolation: vlan, storage: {storage_nodes: 4" +
           storage + "}}\n";
  };
  const Plan p = plan_of(vlan_spec("technology: infiniband"));
  const NetworkPlan* st = p.networks->find(NetworkKind::kStorage);
  ASSERT_TRUE(st);
  EXPECT_TRUE(st->uplinks_to_compute);
  EXPECT_EQ(st->node_ports, 0);      // the GPU servers reach storage over their rails
  EXPECT_EQ(st->host_links, 4 * 8);  // only the storage servers' ports
  EXPECT_TRUE(st->nic_id.empty());   // the dual-port cards are counted with in-band
  EXPECT_FALSE(p.networks->find(NetworkKind::kInband)->nic_id.empty());
  // The storage leaves join the compute fabric: switches of its technology, InfiniBand here,
  // Ethernet beside a RoCE fabric (a QM9700 cannot uplink into an Ethernet spine).
  EXPECT_EQ(st->sw.technology, SwitchTechnology::kInfiniband);
  const std::string roce = "technology: roce, switch: arista-7060x6";
  const Plan r = plan_of(vlan_spec(roce));
  const NetworkPlan* rst = r.networks->find(NetworkKind::kStorage);
  ASSERT_TRUE(rst);
  EXPECT_EQ(rst->sw.technology, SwitchTechnology::kEthernet) << rst->sw.id;
  const auto named = plan_errors(vlan_spec(roce, ", switch: qm9700"));
  ASSERT_FALSE(named.empty());
  EXPECT_EQ(named[0].key, "networks.storage.switch");
  EXPECT_NE(named[0].message.find("qm9700 is an InfiniBand switch"), std::string::npos)
      << named[0].message;
  // Without free top-tier ports the storage leaves have nowhere to go.
  const auto errs = plan_errors(
      "cluster: {gpu: h100-sxm, nodes: 128, nic: cx7-400g}\n"
      "fabric: {technology: infiniband}\nnetworks: {isolation: vlan}\n");
  ASSERT_FALSE(errs.empty());
  EXPECT_EQ(errs[0].key, "networks.isolation");
  EXPECT_NE(errs[0].message.find("free ports"), std::string::npos) << errs[0].message;
}

// With isolation: vlan the storage leaves uplink into the compute spines, and those ports are not
// free for growth: examples/networks-dgx-256.yaml with vlan uses 256 + 32 of its 4 spines' 512
// ports, 43.75% free (it said 50%, the compute links' alone). The growth figure is what the
// cabling leaves free on the top tier, and the note says what took the guide's headroom.
TEST(Networks, GrowthCountsTheStorageUplinksOnTheComputeSpines) {
  std::ifstream in(GPUFABRIC_SOURCE_DIR "/examples/networks-dgx-256.yaml");
  ASSERT_TRUE(in);
  std::string yaml((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const auto at = yaml.find("isolation: physical");
  ASSERT_NE(at, std::string::npos);
  yaml.replace(at, std::string("isolation: physical").size(), "isolation: vlan");
  const Plan p = plan_of(yaml);
  ASSERT_TRUE(p.networks);
  ASSERT_EQ(p.topo.kind, TopologyKind::kClos2);
  auto cat = *builtin_catalog();
  std::set<std::string> top;
  for_each_compute_switch(p, [&](const std::string& name, bool top_tier) {
    if (top_tier) top.insert(name);
  });
  long long used = 0;
  for_each_link(p, cat, [&](const CableRun& r) { used += top.count(r.b_device); });
  const long long compute_used = used;
  std::map<std::string, int> per_top;
  for_each_network_link(p, [&](const NetworkLink& l) {
    used += top.count(l.b_device);
    if (top.count(l.b_device)) ++per_top[l.b_device];
  });
  EXPECT_EQ(used - compute_used, 32);
  ASSERT_EQ(per_top.size(), top.size());
  for (const auto& [name, ports] : per_top) EXPECT_EQ(ports, 8) << name;
  {
    // The storage leaves take the spines in turn: none gives up more ports than the others
    // (two planes, 64 nodes: 104 uplinks on 12 spines, 8 or 9 each; each leaf starting at the
    // first spine put 12 on two of them, which growth's share per switch did not count).
    std::string two = yaml;
    two.replace(two.find("nodes: 32"), 9, "nodes: 64");
    two.replace(two.find("spine_headroom: 0.5"), 19, "spine_headroom: 0.6\n  planes: 2");
    const Plan q = plan_of(two);
    std::set<std::string> q_top;
    for_each_compute_switch(q, [&](const std::string& name, bool top_tier) {
      if (top_tier) q_top.insert(name);
    });
    std::map<std::string, int> on;
    for_each_network_link(q, [&](const NetworkLink& l) {
      if (q_top.count(l.b_device)) ++on[l.b_device];
    });
    ASSERT_EQ(on.size(), 12u);
    int lo = 1 << 30, hi = 0;
    for (const auto& [name, ports] : on) {
      lo = std::min(lo, ports);
      hi = std::max(hi, ports);
    }
    EXPECT_LE(hi - lo, 1);
  }
  const double ports = static_cast<double>(top.size()) * p.topo.radix;
  EXPECT_DOUBLE_EQ(p.spine_ports_free_fraction, 1.0 - used / ports);
  EXPECT_DOUBLE_EQ(p.spine_ports_free_fraction, 0.4375);
  bool noted = false;
  for (const auto& n : p.notes)
    noted = noted || n.find(
                         "44% of top-tier ports are free, the storage leaves' uplinks "
                         "(isolation: vlan) taking 32") != std::string::npos;
  EXPECT_TRUE(noted);
  // Growth: each of the 4 spines' 128 ports serves a leaf, 8 rail leaves for 64 nodes; the
  // storage uplinks take 8 ports a spine, leaving 120 leaves, 15 x 64 = 960 nodes (not 1024).
  ASSERT_EQ(p.topo.spines, 4);
  EXPECT_EQ(p.max_nodes_same_tiers, 960);
  // Physically apart, the spines hold only the compute fabric's links.
  yaml.replace(at, std::string("isolation: vlan").size(), "isolation: physical");
  const Plan apart = plan_of(yaml);
  EXPECT_DOUBLE_EQ(apart.spine_ports_free_fraction, 0.5);
  EXPECT_EQ(apart.max_nodes_same_tiers, 1024);
}

TEST(Networks, AServerWithoutStorageFiguresNeedsThemFromTheSpec) {
  const auto errs = plan_errors("cluster: {gpu: mi300x, nodes: 4, nic: cx7-400g}\nnetworks:\n");
  ASSERT_FALSE(errs.empty());
  EXPECT_EQ(errs[0].key, "networks.storage.nic");
  const Plan p = plan_of(
      "cluster: {gpu: mi300x, nodes: 4, nic: cx7-400g}\n"
      "networks: {storage: {nic: dual-cx7-400g, ports_per_node: 2, storage_nodes: 1}}\n");
  EXPECT_EQ(p.networks->find(NetworkKind::kStorage)->node_ports, 8);
}

// A port speed no catalog switch of the network's role runs is the spec's error at that key,
// with the file and line, as every other spec error; a named switch without it, at the switch.
TEST(Networks, APortSpeedNoSwitchRunsNamesFileLineAndKey) {
  const std::string base =
      "cluster: {gpu: h100-sxm, nodes: 16, nic: cx7-400g}\n"
      "networks:\n"
      "  storage:\n";
  auto errs = plan_errors(base + "    port_speed: 150G\n");
  ASSERT_EQ(errs.size(), 1u);
  EXPECT_EQ(errs[0].file, "t.yaml");
  EXPECT_EQ(errs[0].line, 4);
  EXPECT_EQ(errs[0].key, "networks.storage.port_speed");
  EXPECT_NE(errs[0].message.find("no storage switch in the catalog runs 150 Gbps ports"),
            std::string::npos)
      << errs[0].message;
  EXPECT_NE(errs[0].hint.find("roles: [storage]"), std::string::npos) << errs[0].hint;
  errs = plan_errors(
      "cluster: {gpu: h100-sxm, nodes: 16, nic: cx7-400g}\n"
      "networks:\n"
      "  inband: {port_speed: 150G}\n");
  ASSERT_EQ(errs.size(), 1u);
  EXPECT_EQ(errs[0].file, "t.yaml");
  EXPECT_EQ(errs[0].line, 3);
  EXPECT_EQ(errs[0].key, "networks.inband.port_speed");
  errs = plan_errors(base + "    port_speed: 200G\n    switch: sn2201\n");
  ASSERT_EQ(errs.size(), 1u);
  EXPECT_EQ(errs[0].file, "t.yaml");
  EXPECT_EQ(errs[0].line, 5);
  EXPECT_EQ(errs[0].key, "networks.storage.switch");
}

TEST(Networks, ManagementSwitchesNeverEnterTheComputePlan) {
  // 100G NICs: SN4600C runs 100G ports, but it is an in-band/storage switch, not a fabric one.
  const Plan p = plan_of("cluster: {gpu: a100-sxm-80g, nodes: 16, nic: cx6-100g}\n");
  for (const auto& c : p.candidates) {
    EXPECT_NE(c.switch_id, "sn4600c");
    EXPECT_NE(c.switch_id, "sn4700");
  }
}

}  // namespace gf

namespace gf {

// Published storage, in-band and OOB switch and cable counts (data/calibration/
// networks-public.csv), reproduced from the spec each publication describes. A field the row
// names in not_reproduced is reported, with the planned figure, and must still differ: when the
// planner comes to match it, the row is to be updated.
TEST(NetworksCalibration, ReproducesPublishedStorageAndManagementCounts) {
  std::ifstream in(GPUFABRIC_SOURCE_DIR "/data/calibration/networks-public.csv");
  ASSERT_TRUE(in) << "missing data/calibration/networks-public.csv";
  std::stringstream text;
  text << in.rdbuf();
  const CsvTable t(text.str());
  for (const char* c :
       {"system", "scalable_units", "nodes", "network", "switch", "networks", "not_reproduced"})
    ASSERT_TRUE(t.has(c)) << c;
  std::string networks;  // "(same)": the row above's
  int compared = 0, reported = 0;
  for (size_t r = 0; r < t.rows(); ++r) {
    SCOPED_TRACE(fmt::format("networks-public.csv:{} ({})", t.line(r), t.at(r, "network")));
    if (t.at(r, "networks") != "(same)") networks = t.at(r, "networks");
    const std::string system = t.at(r, "system");
    ASSERT_NE(system.find("H100"), std::string::npos) << "no spec for " << system;
    const int sus = std::stoi(t.at(r, "scalable_units")), nodes = std::stoi(t.at(r, "nodes"));
    // The RA's compute fabric as superpod-public.csv reproduces it: full SUs of 32 node slots,
    // one slot of the last taken by the UFM appliance's 4 ports.
    const Plan p = plan_of(
        fmt::format("cluster: {{gpu: h100-sxm, nodes: {}, nic: cx7-400g}}\n"
                    "fabric: {{technology: infiniband, switch: qm9700, rail_optimized: true, "
                    "scalable_unit: {}, appliance_ports: 4}}\nnetworks: {}\n",
                    nodes, (nodes + 1 + sus - 1) / sus, networks));
    ASSERT_TRUE(p.networks.has_value());
    const NetworkKind kind = t.at(r, "network") == "storage"  ? NetworkKind::kStorage
                             : t.at(r, "network") == "inband" ? NetworkKind::kInband
                                                              : NetworkKind::kOob;
    const NetworkPlan* n = p.networks->find(kind);
    ASSERT_TRUE(n);
    std::string sw = t.at(r, "switch");
    for (auto& ch : sw) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
    EXPECT_EQ(n->sw.id, sw);
    const std::map<std::string, long long> planned = {
        {"leaf", n->leaves},
        {"spine", n->spines},
        {"switches", n->switches()},
        {"node_cables", n->node_ports},
        {"uplink_cables", n->leaf_spine_links},
        {"node_uplink_cables", n->node_ports + n->leaf_spine_links},
        {"isl_cables", n->isl_links},
        {"other_cables", n->other_ports}};
    const std::string differs = " " + t.at(r, "not_reproduced") + " ";
    for (const auto& [field, value] : planned) {
      const std::string published = t.at(r, field);
      if (published.empty()) continue;
      if (differs.find(" " + field + " ") != std::string::npos) {
        std::cout << fmt::format("[ NOT REPRODUCED ] {} {}: {} published {}, planned {}\n", system,
                                 t.at(r, "network"), field, published, value);
        RecordProperty(fmt::format("{}_{}", t.at(r, "network"), field),
                       fmt::format("published {} planned {}", published, value));
        EXPECT_NE(value, std::stoll(published)) << field << " now matches: update the row";
        ++reported;
      } else {
        EXPECT_EQ(value, std::stoll(published)) << field;
        ++compared;
      }
    }
  }
  EXPECT_GE(t.rows(), 3u);
  EXPECT_GE(compared, 8);
  EXPECT_LE(reported, 2);
}

// The storage fabric's rule (DGX SuperPOD H100 RA, storage fabric): storage devices at 1:1,
// the GPU servers' ports at the spec's oversubscription, so no leaf holds both.
TEST(Networks, OversubscribedStorageKeepsTheStorageServersOnLeavesAtOneToOne) {
  const Plan p = plan_of(
      "cluster: {gpu: h100-sxm, nodes: 127, nic: cx7-400g}\n"
      "networks: {storage: {switch: qm9700, port_speed: 400G, storage_nodes: 24, "
      "storage_node_ports: 2, oversubscription: \"4:3\"}}\n");
  const NetworkPlan* st = p.networks->find(NetworkKind::kStorage);
  ASSERT_TRUE(st);
  EXPECT_EQ(st->other_leaves_per_side, 1);
  EXPECT_EQ(st->other_up, st->other_down);           // 1:1
  EXPECT_EQ(st->leaf_down * 3, st->leaf_up * 4);     // 32 down, 24 up: 4:3
  EXPECT_EQ(st->leaf_spine_links, 8 * 24 + 2 * 24);  // 254 + 240 = the RA's 494
  std::map<std::string, std::set<char>> kinds;       // leaf -> 'n'ode / 's'torage ports
  for_each_network_link(p, [&](const NetworkLink& l) {
    if (l.network != NetworkKind::kStorage || l.b_device.rfind("stor-leaf", 0) != 0) return;
    kinds[l.b_device].insert(l.a_device.rfind("node", 0) == 0 ? 'n' : 's');
  });
  ASSERT_EQ(kinds.size(), 10u);
  for (const auto& [leaf, k] : kinds) EXPECT_EQ(k.size(), 1u) << leaf;
  // At 1:1 every port may share a leaf, as before.
  const Plan q = plan_of(
      "cluster: {gpu: h100-sxm, nodes: 127, nic: cx7-400g}\n"
      "networks: {storage: {switch: qm9700, port_speed: 400G, storage_nodes: 24, "
      "storage_node_ports: 2}}\n");
  EXPECT_EQ(q.networks->find(NetworkKind::kStorage)->other_leaves_per_side, 0);
}

// An oversubscription asked of a plan that one switch holds changes nothing, and says so.
TEST(Plan, OversubscribingOneSwitchIsNoted) {
  const Plan p = plan_of(
      "cluster: {gpu: h100-sxm, nodes: 4, nic: cx7-400g}\n"
      "fabric: {technology: roce, oversubscription: \"3:2\"}\n");
  ASSERT_EQ(p.topo.kind, TopologyKind::kSingle);
  bool noted = false;
  for (const auto& n : p.notes)
    noted = noted || n.find("fabric.oversubscription (1.5:1) does not apply") != std::string::npos;
  EXPECT_TRUE(noted);
  const Plan one = plan_of(
      "cluster: {gpu: h100-sxm, nodes: 4, nic: cx7-400g}\n"
      "fabric: {technology: roce}\n");
  for (const auto& n : one.notes) EXPECT_EQ(n.find("oversubscription"), std::string::npos) << n;
}

// One node's collectives never leave it: the plan says its scale-out fabric carries none of them
// (a user trial's 1 x 8 H100 bought an InfiniBand switch and SHARP with nothing said).
TEST(Plan, OneNodesFabricCarriesNoneOfTheJobsTraffic) {
  auto noted = [](const Plan& p) {
    for (const auto& n : p.notes)
      if (n.find("carries none of the job's traffic") != std::string::npos) return true;
    return false;
  };
  EXPECT_TRUE(noted(plan_of("cluster: {gpu: h100-sxm, nodes: 1, nic: cx7-400g}\n")));
  EXPECT_FALSE(noted(plan_of("cluster: {gpu: h100-sxm, nodes: 2, nic: cx7-400g}\n")));
}

}  // namespace gf
