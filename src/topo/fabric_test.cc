#include "topo/fabric.h"

#include <gtest/gtest.h>

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
  // Across units: NIC -> leaf -> spine -> leaf -> NIC, over different spines for different hashes.
  std::set<int> spines;
  for (uint64_t h = 0; h < 64; ++h) {
    path.clear();
    ASSERT_TRUE(f.route(f.nic(0, 0), f.nic(40, 0), 0, h, path));
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

}  // namespace gf
