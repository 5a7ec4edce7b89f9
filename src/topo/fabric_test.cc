#include "topo/fabric.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <map>
#include <set>

namespace gf {
namespace {

struct Built {
  Catalog cat;
  Plan plan;
};

Built plan_of(const std::string& yaml) {
  Built b{*builtin_catalog(), {}};
  auto s = parse_spec(yaml, "t.yaml");
  EXPECT_TRUE(s.ok());
  EXPECT_TRUE(validate_spec(*s, b.cat).empty());
  auto p = make_plan(*s, b.cat);
  EXPECT_TRUE(p.ok()) << format_diagnostics(p.errors());
  b.plan = *p;
  return b;
}

}  // namespace

TEST(Fabric, GraphMatchesThePlan) {
  auto b = plan_of(
      "cluster: {gpu: h100-sxm, nodes: 64, nic: cx7-400g}\nfabric: {technology: infiniband, "
      "switch: qm9700}\n");
  const Fabric f = Fabric::build(b.plan, b.cat);
  long long nic_leaf = 0, leaf_spine = 0, nvlink = 0;
  for (size_t i = 0; i < f.links().size(); ++i) {
    const Link& l = f.links()[i];
    EXPECT_EQ(f.links()[Fabric::reverse(static_cast<int>(i))].from, l.to);  // built in pairs
    if (l.cls == LinkClass::kNicLeaf) ++nic_leaf;
    if (l.cls == LinkClass::kLeafSpine) ++leaf_spine;
    if (l.cls == LinkClass::kScaleUp) ++nvlink;
  }
  EXPECT_EQ(nic_leaf, 2 * b.plan.node_leaf_total);
  EXPECT_EQ(leaf_spine, 2 * b.plan.leaf_spine_total);
  EXPECT_EQ(nvlink, 2 * b.plan.gpus);
  EXPECT_DOUBLE_EQ(f.links()[f.gpu_up(0)].bytes_per_s, 450e9);
}

TEST(Fabric, RoutesAreShortestAndHashSpreadsThem) {
  auto b = plan_of(
      "cluster: {gpu: h100-sxm, nodes: 64, nic: cx7-400g}\nfabric: {technology: infiniband, "
      "switch: qm9700}\n");
  const Fabric f = Fabric::build(b.plan, b.cat);
  std::vector<int32_t> path;
  // Same rail, same unit: NIC -> leaf -> NIC.
  ASSERT_TRUE(f.route(f.nic(0, 0), f.nic(1, 0), 0, 7, path));
  EXPECT_EQ(path.size(), 2u);
  // Across units: NIC -> leaf -> spine -> leaf -> NIC, over different spines for different QPs
  // (QP numbers of both ends, 24 bits each).
  std::set<int> spines;
  for (uint64_t h = 0; h < 64; ++h) {
    path.clear();
    ASSERT_TRUE(f.route(f.nic(0, 0), f.nic(40, 0), 0, (h + 1) | (h + 77) << 24, path));
    ASSERT_EQ(path.size(), 4u);
    EXPECT_EQ(f.links()[path[1]].to, f.links()[path[2]].from);
    spines.insert(f.links()[path[1]].to);
  }
  EXPECT_GT(spines.size(), 4u);
  // Same hash, same path.
  std::vector<int32_t> a, c;
  f.route(f.nic(0, 3), f.nic(50, 3), 0, 99, a);
  f.route(f.nic(0, 3), f.nic(50, 3), 0, 99, c);
  EXPECT_EQ(a, c);
}

TEST(Fabric, ThreeTierAndDragonflyRoutes) {
  auto b = plan_of(
      "cluster: {gpu: h100-sxm, nodes: 512, nic: cx7-400g}\nfabric: {technology: infiniband, "
      "switch: qm9700}\n");
  ASSERT_EQ(b.plan.topo.kind, TopologyKind::kClos3);
  const Fabric f = Fabric::build(b.plan, b.cat);
  std::vector<int32_t> path;
  ASSERT_TRUE(f.route(f.nic(0, 0), f.nic(511, 0), 0, 5, path));
  EXPECT_EQ(path.size(), 6u);  // NIC, leaf-spine, spine-core, core-spine, spine-leaf, NIC
  auto d = plan_of(
      "cluster: {gpu: h100-sxm, nodes: 9000, nic: cx7-400g}\nfabric: {technology: infiniband, "
      "switch: qm9700}\n");
  ASSERT_EQ(d.plan.topo.kind, TopologyKind::kDragonfly);
  const Fabric g = Fabric::build(d.plan, d.cat);
  path.clear();
  ASSERT_TRUE(g.route(g.nic(0, 0), g.nic(8999, 0), 0, 5, path));
  EXPECT_EQ(path.size(), 5u);  // NIC, leaf-spine, global, spine-leaf, NIC
  EXPECT_EQ(g.links()[path[2]].cls, LinkClass::kGlobal);
}

// A round-robin counter moved by its period (the lcm of the choices it has) chooses as before:
// what lets alltoall_by_leaf route one rail for many.
TEST(Fabric, RoundRobinCountersRepeatAfterTheirPeriod) {
  auto b = plan_of(
      "cluster: {gpu: h100-sxm, nodes: 512, nic: cx7-400g}\nfabric: {technology: infiniband, "
      "switch: qm9700}\n");
  const Fabric f = Fabric::build(b.plan, b.cat);
  auto routes = [&](std::vector<uint32_t> turn) {
    std::vector<int32_t> all, path;
    for (int a = 0; a < 512; a += 37)
      for (int d = 0; d < 512; d += 29) {
        path.clear();
        EXPECT_TRUE(f.route_round_robin(f.nic(a, 0), f.nic(d, 0), 0, turn, path));
        all.insert(all.end(), path.begin(), path.end());
      }
    return all;
  };
  std::vector<uint32_t> start(f.round_robin_slots());
  for (size_t s = 0; s < start.size(); ++s) start[s] = static_cast<uint32_t>(s * 7919 % 1000);
  std::vector<uint32_t> moved = start, off_by_one = start;
  bool some_choice = false;
  for (size_t s = 0; s < start.size(); ++s) {
    const uint64_t period = f.round_robin_period(s);
    ASSERT_GT(period, 0u);
    moved[s] += static_cast<uint32_t>(3 * period);
    if (period > 1) {
      some_choice = true;
      off_by_one[s] += 1;
    }
  }
  EXPECT_TRUE(some_choice);
  EXPECT_EQ(routes(moved), routes(start));
  EXPECT_NE(routes(off_by_one), routes(start));  // the test can tell a different turn
}

TEST(Fabric, FailedLinksAreAvoided) {
  auto b = plan_of(
      "cluster: {gpu: h100-sxm, nodes: 64, nic: cx7-400g}\nfabric: {technology: infiniband, "
      "switch: qm9700}\n");
  Fabric f = Fabric::build(b.plan, b.cat);
  std::vector<int32_t> path;
  ASSERT_TRUE(f.route(f.nic(0, 0), f.nic(40, 0), 0, 1, path));
  const int leaf = f.links()[path[0]].to;
  // Fail every uplink of the source leaf but one: every route uses the survivor.
  int survivor = -1;
  for (size_t i = 0; i < f.links().size(); ++i)
    if (f.links()[i].from == leaf && f.links()[i].cls == LinkClass::kLeafSpine) {
      if (survivor < 0)
        survivor = static_cast<int>(i);
      else
        f.fail_link(static_cast<int>(i));
    }
  for (uint64_t h = 0; h < 16; ++h) {
    path.clear();
    ASSERT_TRUE(f.route(f.nic(0, 0), f.nic(40, 0), 0, h, path));
    EXPECT_EQ(path[1], survivor);
  }
  f.fail_link(survivor);
  path.clear();
  EXPECT_FALSE(f.route(f.nic(0, 0), f.nic(40, 0), 0, 1, path));
}

// NCCL restarted without a NIC whose port is down: that NIC's GPU sends through another NIC of
// its node, over that NIC's PCIe link and leaf port, and reaches the dead rail's NICs of other
// nodes across the spines.
TEST(Fabric, ANicCutOffSendsThroughAnotherOfItsNode) {
  auto b = plan_of(
      "cluster: {gpu: h100-sxm, nodes: 64, nic: cx7-400g}\nfabric: {technology: infiniband, "
      "switch: qm9700}\n");
  Fabric f = Fabric::build(b.plan, b.cat);
  std::vector<int32_t> path;
  const int dead = f.nic(0, 0), via = f.nic(0, 1);
  f.fail_link(f.nic_to_leaf(dead, 0));
  f.fail_link(Fabric::reverse(f.nic_to_leaf(dead, 0)));
  EXPECT_FALSE(f.route(dead, f.nic(1, 0), 0, 1, path));
  f.send_through(dead, via);
  EXPECT_EQ(f.pcie_to_nic(dead), f.pcie_to_nic(via));
  EXPECT_EQ(f.pcie_from_nic(dead), f.pcie_from_nic(via));
  EXPECT_EQ(f.leaf_of_nic(dead, 0), f.leaf_of_nic(via, 0));
  path.clear();
  ASSERT_TRUE(f.route(dead, f.nic(1, 0), 0, 1, path));
  EXPECT_EQ(path.front(), f.nic_to_leaf(via, 0));
  EXPECT_EQ(path.back(), f.leaf_to_nic(f.nic(1, 0), 0));
  EXPECT_EQ(f.links()[static_cast<size_t>(path[1])].cls, LinkClass::kLeafSpine);  // rail 1 -> 0
  // Into it, the same way back.
  path.clear();
  ASSERT_TRUE(f.route(f.nic(1, 0), dead, 0, 1, path));
  EXPECT_EQ(path.back(), f.leaf_to_nic(via, 0));
}

// The in-network reduction's tree root of a rail: its own spine while the fabric is whole; with
// failures, the first spine from there that still reaches every leaf of the rail's NICs (the
// Aggregation Manager builds a new job's tree so); with none left, its own, which its NICs then
// cannot reach.
TEST(Fabric, AReductionTreeTakesARootThatReachesEveryLeaf) {
  auto b = plan_of(
      "cluster: {gpu: h100-sxm, nodes: 128, nic: cx7-400g}\nfabric: {technology: infiniband, "
      "switch: qm9700, in_network_reduction: on}\n");
  Fabric f = Fabric::build(b.plan, b.cat);
  ASSERT_EQ(b.plan.topo.kind, TopologyKind::kClos2);
  const int spines = b.plan.topo.spines;
  ASSERT_GE(spines, 4);
  EXPECT_EQ(f.reduction_root(0, 0), f.spine_vertex(0, 0));
  EXPECT_EQ(f.reduction_root(0, 1), f.spine_vertex(0, 1));
  // Rail 0's leaves (one a scalable unit).
  std::set<int> leaves;
  for (int node = 0; node < f.nodes(); ++node) leaves.insert(f.leaf_of_nic(f.nic(node, 0), 0));
  ASSERT_GE(leaves.size(), 2u);
  auto cut = [&](int leaf, int spine) {  // every cable between them, both ways
    for (size_t i = 0; i < f.links().size(); ++i) {
      const auto& l = f.links()[i];
      if ((l.from == leaf && l.to == spine) || (l.from == spine && l.to == leaf))
        f.fail_link(static_cast<int>(i));
    }
  };
  // Spine 0 loses one of rail 0's leaves: the tree moves to spine 1; rail 1's stays.
  cut(*leaves.begin(), f.spine_vertex(0, 0));
  EXPECT_EQ(f.reduction_root(0, 0), f.spine_vertex(0, 1));
  EXPECT_EQ(f.reduction_root(0, 1), f.spine_vertex(0, 1));
  // Every spine loses one of them, a different one in turn: no tree, the rail's own root.
  int k = 0;
  for (int s = 1; s < spines; ++s, ++k) {
    auto it = leaves.begin();
    std::advance(it, k % leaves.size());
    cut(*it, f.spine_vertex(0, s));
  }
  EXPECT_EQ(f.reduction_root(0, 0), f.spine_vertex(0, 0));
  // A failed leaf cuts its nodes off; it does not hold the tree on a failed root.
  Fabric g = Fabric::build(b.plan, b.cat);
  for (size_t i = 0; i < g.links().size(); ++i) {
    const auto& l = g.links()[i];
    if (l.from == *leaves.begin() || l.to == *leaves.begin() || l.from == g.spine_vertex(0, 0) ||
        l.to == g.spine_vertex(0, 0))
      g.fail_link(static_cast<int>(i));
  }
  EXPECT_EQ(g.reduction_root(0, 0), g.spine_vertex(0, 1));
  // A communicator of the first nodes counts only its own leaves: the last node's leaf cut off
  // from spine 0 moves the whole cluster's tree, not that of the first scalable unit's nodes.
  Fabric h = Fabric::build(b.plan, b.cat);
  const int last_leaf = h.leaf_of_nic(h.nic(h.nodes() - 1, 0), 0);
  const int first_leaf = h.leaf_of_nic(h.nic(0, 0), 0);
  ASSERT_NE(last_leaf, first_leaf);
  int unit = 0;  // the nodes on the first node's leaf
  while (unit < h.nodes() && h.leaf_of_nic(h.nic(unit, 0), 0) == first_leaf) ++unit;
  for (size_t i = 0; i < h.links().size(); ++i) {
    const auto& l = h.links()[i];
    if ((l.from == last_leaf && l.to == h.spine_vertex(0, 0)) ||
        (l.from == h.spine_vertex(0, 0) && l.to == last_leaf))
      h.fail_link(static_cast<int>(i));
  }
  EXPECT_EQ(h.reduction_root(0, 0), h.spine_vertex(0, 1));
  EXPECT_EQ(h.reduction_root(0, 0, unit), h.spine_vertex(0, 0));
  EXPECT_EQ(h.reduction_root(0, 0, h.nodes()), h.spine_vertex(0, 1));
  std::vector<int32_t> path;
  bool all = true;
  for (int node = 0; node < f.nodes(); ++node) {
    path.clear();
    all = all && f.route_to_switch(f.nic(node, 0), 0, f.reduction_root(0, 0), 1, path);
  }
  EXPECT_FALSE(all);
}

// Microsoft's RSS specification, "Verifying the RSS Hash Calculation": with its sample key,
// 66.9.149.187:2794 -> 161.142.100.80:1766 hashes (IPv4 with ports) to 0x51ccc178.
TEST(Fabric, EcmpHashIsToeplitzAsRssSpecifiesIt) {
  const EcmpHash h = EcmpHash::from_key(0x6d5a56da255b0ec2ULL, 0x4167253d43a38fb0ULL);
  const FlowTuple t{66u << 24 | 9u << 16 | 149u << 8 | 187u,
                    161u << 24 | 142u << 16 | 100u << 8 | 80u, 2794, 1766};
  EXPECT_EQ(h(t), 0x51ccc178u);
  // The RoCE v2 source port comes from both QP numbers, in 0xC000-0xFFFF.
  EXPECT_GE(roce_udp_source_port(0x123, 0x456), 0xC000);
  EXPECT_NE(roce_udp_source_port(0x123, 0x456), roce_udp_source_port(0x124, 0x457));
  // Seeds: one per switch, one per tier (SONiC's by role), or one for all.
  EXPECT_NE(ecmp_hash_seed(EcmpSeedPolicy::kPerSwitch, 0, 1, 0),
            ecmp_hash_seed(EcmpSeedPolicy::kPerSwitch, 0, 1, 1));
  EXPECT_EQ(ecmp_hash_seed(EcmpSeedPolicy::kPerTier, 0, 1, 0),
            ecmp_hash_seed(EcmpSeedPolicy::kPerTier, 0, 1, 5));
  EXPECT_NE(ecmp_hash_seed(EcmpSeedPolicy::kPerTier, 0, 1, 0),
            ecmp_hash_seed(EcmpSeedPolicy::kPerTier, 0, 2, 0));
  EXPECT_EQ(ecmp_hash_seed(EcmpSeedPolicy::kSame, 0, 1, 0),
            ecmp_hash_seed(EcmpSeedPolicy::kSame, 0, 3, 7));
}

// Polarization: when a spine hashes with its leaf's seed, the flows the leaf sent it are
// confined to a few of the spine's uplinks to the cores (the leaf chose spine h mod 16, which
// fixes h mod 4, so of the spine's 20 uplinks, h mod 20, only 5 are reachable); with a seed
// per switch or per tier they spread over most of them.
TEST(Fabric, OneSeedForTwoTiersPolarizesTheSecond) {
  auto uplinks_used = [](const char* seed) {
    auto b = plan_of(fmt::format(
        "cluster: {{gpu: h100-sxm, nodes: 64, nic: cx6-200g}}\nfabric: {{technology: "
        "infiniband, switch: qm8700, topology: clos3, rail_optimized: false, ecmp_hash: {{seed: "
        "{}}}}}\n",
        seed));
    EXPECT_EQ(b.plan.topo.kind, TopologyKind::kClos3);
    const Fabric f = Fabric::build(b.plan, b.cat);
    // From the NICs of node 0 to those of the last node (another pod): two switch tiers hash.
    std::map<int, std::set<int>> ups;  // spine -> spine-core links used
    std::vector<int32_t> path;
    for (int rail = 0; rail < 8; ++rail)
      for (uint64_t qp = 1; qp <= 64; ++qp) {
        path.clear();
        EXPECT_TRUE(f.route(f.nic(0, rail), f.nic(63, rail), 0, qp | (qp * 7 + 3) << 24, path));
        EXPECT_EQ(path.size(), 6u);  // NIC, leaf-spine, spine-core, core-spine, spine-leaf, NIC
        ups[f.links()[path[2]].from].insert(path[2]);
      }
    double links = 0;
    for (const auto& [spine, used] : ups) links += static_cast<double>(used.size());
    return links / static_cast<double>(ups.size());  // uplinks used per spine
  };
  EXPECT_LE(uplinks_used("same"), 5.0);
  EXPECT_GT(uplinks_used("per_switch"), 10.0);
  EXPECT_GT(uplinks_used("per_tier"), 10.0);
}

}  // namespace gf
