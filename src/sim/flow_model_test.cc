#include "sim/flow_model.h"

#include <gtest/gtest.h>

#include <cmath>

namespace gf {

using Hop = FlowSet::Hop;

TEST(MaxMin, TextbookExample) {
  // Links A (cap 1) and B (cap 2); f1 on A, f2 on A and B, f3 on B.
  FlowSet fs;
  fs.add(1, {{0, 1}});
  fs.add(1, {{0, 1}, {1, 1}});
  fs.add(1, {{1, 1}});
  std::vector<double> rate;
  std::vector<int32_t> limit;
  max_min_rates(fs, {1.0, 2.0}, {1, 1, 1}, rate, limit);
  EXPECT_DOUBLE_EQ(rate[0], 0.5);
  EXPECT_DOUBLE_EQ(rate[1], 0.5);
  EXPECT_DOUBLE_EQ(rate[2], 1.5);
  EXPECT_EQ(limit[0], 0);
  EXPECT_EQ(limit[2], 1);
}

TEST(MaxMin, CoefficientsCountEveryCrossing) {
  // A ring that crosses link 0 twice gets half its capacity; a flow split over two paths gets
  // both.
  FlowSet fs;
  fs.add(1, {{0, 1}, {0, 1}});
  std::vector<double> rate;
  std::vector<int32_t> limit;
  max_min_rates(fs, {10.0}, {1}, rate, limit);
  EXPECT_DOUBLE_EQ(rate[0], 5.0);
  FlowSet split;
  split.add(1, {{0, 0.5f}, {1, 0.5f}});
  max_min_rates(split, {10.0, 10.0}, {1}, rate, limit);
  EXPECT_DOUBLE_EQ(rate[0], 20.0);
}

TEST(Fluid, FreedCapacityIsReshared) {
  // Two flows share a 10 B/s link: 10 B and 20 B. At t=2 the first ends; the second then runs
  // alone at 10 B/s for its last 10 B: done at t=3.
  FlowSet fs;
  fs.add(10, {{0, 1}});
  fs.add(20, {{0, 1}});
  const FluidResult r = run_fluid(fs, {10.0}, 0);
  EXPECT_NEAR(r.time_s, 3.0, 1e-9);
  EXPECT_EQ(r.rounds, 2);
  EXPECT_DOUBLE_EQ(r.load_Bps[0], 10.0);
}

TEST(Fluid, ZeroCapacityNeverFinishes) {
  FlowSet fs;
  fs.add(10, {{0, 1}});
  EXPECT_FALSE(std::isfinite(run_fluid(fs, {0.0}).time_s));
}

}  // namespace gf

namespace gf {

TEST(FlowSet, StopsGrowingAtItsMemoryBudget) {
  const size_t budget = 64 * 1024;
  FlowSet fs(budget);
  const std::vector<Hop> path(10, Hop{0, 1});
  int added = 0;
  for (int i = 0; i < 100000 && fs.add(1, path) >= 0; ++i) ++added;
  EXPECT_TRUE(fs.over_budget());
  EXPECT_GT(added, 100);
  EXPECT_LE(FlowSet::memory_bytes(fs.size(), fs.hop_count()), budget);
  EXPECT_EQ(fs.add(1, {}), -1);  // once over, it stays over
  FlowSet unlimited;
  for (int i = 0; i < 1000; ++i) unlimited.add(1, path);
  EXPECT_FALSE(unlimited.over_budget());
}

}  // namespace gf
