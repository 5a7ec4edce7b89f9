#include "sim/flow_model.h"
#include "sim/flow_builder.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>
#include <string>

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

// A link's peak is its highest load over the run, not the first round's: the second flow's
// own link carries 5 B/s while it shares the first link, 10 B/s once the other flow is done,
// and its mean over the run (100 B in 11 s on 10 B/s: 0.91) lies above the first round (0.5).
TEST(Fluid, PeakLoadIsTheHighestAtAnyTime) {
  FlowSet fs;
  fs.add(10, {{0, 1}});
  fs.add(100, {{0, 1}, {1, 1}});
  const FluidResult r = run_fluid(fs, {10.0, 10.0}, 0);
  EXPECT_NEAR(r.time_s, 11.0, 1e-9);
  EXPECT_DOUBLE_EQ(r.load_Bps[1], 5.0);
  EXPECT_DOUBLE_EQ(r.peak_load_Bps[1], 10.0);
  EXPECT_DOUBLE_EQ(r.peak_load_Bps[0], 10.0);
}

TEST(Fluid, ZeroCapacityNeverFinishes) {
  FlowSet fs;
  fs.add(10, {{0, 1}});
  EXPECT_FALSE(std::isfinite(run_fluid(fs, {0.0}).time_s));
}

}  // namespace gf

namespace gf {

TEST(FlowSet, TruncateDropsTheLastFlows) {
  FlowSet fs;
  fs.add(1, {Hop{0, 1}});
  fs.add(2, {Hop{1, 1}, Hop{2, 1}});
  fs.add(3, {Hop{3, 1}});
  fs.truncate(1);
  ASSERT_EQ(fs.size(), 1);
  EXPECT_EQ(fs.hop_count(), 1u);
  EXPECT_EQ(fs.add(4, {Hop{5, 2}}), 1);
  EXPECT_EQ(fs.bytes(1), 4);
  EXPECT_EQ(fs.begin(1)->link, 5);
  EXPECT_EQ(fs.end(1) - fs.begin(1), 1);
}

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

namespace gf {
namespace {

// The reference: max-min by water-filling in its textbook form (raise every unfrozen flow's
// rate together until a link saturates, freeze the flows on it, repeat), and an event loop that
// finishes the flow(s) with the least time left, one event at a time, re-solving everything.
// Slow and obviously right.
std::vector<double> reference_completions(const FlowSet& fs, const std::vector<double>& cap) {
  const int F = fs.size();
  std::vector<double> left(F), done(F, 0);
  std::vector<uint8_t> active(F, 0);
  for (int f = 0; f < F; ++f) {
    left[f] = fs.bytes(f);
    active[f] = left[f] > 0 && fs.begin(f) != fs.end(f);
  }
  double now = 0;
  for (;;) {
    std::vector<double> rate(F, 0);
    std::vector<uint8_t> frozen(F, 0);
    for (int f = 0; f < F; ++f) frozen[f] = !active[f];
    for (;;) {
      // Each link's headroom per unit of rate added to every unfrozen flow crossing it.
      double step = std::numeric_limits<double>::infinity();
      for (size_t l = 0; l < cap.size(); ++l) {
        double used = 0, c = 0;
        for (int f = 0; f < F; ++f)
          for (const auto* h = fs.begin(f); h != fs.end(f); ++h)
            if (static_cast<size_t>(h->link) == l) {
              used += rate[f] * h->coef;
              if (!frozen[f]) c += h->coef;
            }
        if (c > 0) step = std::min(step, (cap[l] - used) / c);
      }
      if (!std::isfinite(step)) break;
      for (int f = 0; f < F; ++f)
        if (!frozen[f]) rate[f] += step;
      // Freeze the flows on every saturated link.
      bool any = false;
      for (size_t l = 0; l < cap.size(); ++l) {
        double used = 0;
        for (int f = 0; f < F; ++f)
          for (const auto* h = fs.begin(f); h != fs.end(f); ++h)
            if (static_cast<size_t>(h->link) == l) used += rate[f] * h->coef;
        if (used >= cap[l] * (1 - 1e-12))
          for (int f = 0; f < F; ++f)
            for (const auto* h = fs.begin(f); h != fs.end(f); ++h)
              if (static_cast<size_t>(h->link) == l && !frozen[f]) frozen[f] = 1, any = true;
      }
      if (!any) break;
    }
    double dt = std::numeric_limits<double>::infinity();
    for (int f = 0; f < F; ++f)
      if (active[f] && rate[f] > 0) dt = std::min(dt, left[f] / rate[f]);
    if (!std::isfinite(dt)) break;
    now += dt;
    for (int f = 0; f < F; ++f) {
      if (!active[f]) continue;
      left[f] -= rate[f] * dt;
      if (left[f] <= 1e-9 * fs.bytes(f)) {
        active[f] = 0;
        done[f] = now;
      }
    }
  }
  return done;
}

TEST(Fluid, ExactAgainstABruteForceReferenceOnRandomCases) {
  std::mt19937_64 rng(20261201);
  std::uniform_real_distribution<double> u(0, 1);
  double worst = 0;
  for (int trial = 0; trial < 300; ++trial) {
    const int L = 1 + static_cast<int>(rng() % 6), F = 1 + static_cast<int>(rng() % 10);
    std::vector<double> cap(static_cast<size_t>(L));
    for (double& c : cap) c = 1 + 9 * u(rng);
    FlowSet fs;
    for (int f = 0; f < F; ++f) {
      std::vector<Hop> path;
      const int hops = 1 + static_cast<int>(rng() % 3);
      for (int h = 0; h < hops; ++h)
        path.push_back({static_cast<int32_t>(rng() % L), static_cast<float>(0.25 + u(rng))});
      // Unequal sizes, some equal (ties), some 100x larger.
      const double bytes = rng() % 4 == 0 ? 10.0 : (1 + 99 * u(rng)) * (rng() % 5 == 0 ? 100 : 1);
      fs.add(bytes, path);
    }
    const FluidResult r = run_fluid(fs, cap);
    const std::vector<double> ref = reference_completions(fs, cap);
    double makespan = 0;
    for (int f = 0; f < F; ++f) {
      makespan = std::max(makespan, ref[f]);
      ASSERT_NEAR(r.completion_s[f], ref[f], 1e-6 * ref[f] + 1e-12) << "trial " << trial;
    }
    ASSERT_NEAR(r.time_s, makespan, 1e-6 * makespan);
    worst = std::max(worst, std::fabs(r.time_s - makespan) / makespan);
  }
  RecordProperty("worst_relative_error", std::to_string(worst));
}

TEST(Fluid, IndependentGroupsKeepTheirRates) {
  // Two components: a short flow finishing does not disturb the other link's flows.
  FlowSet fs;
  fs.add(10, {{0, 1}});
  fs.add(40, {{0, 1}});
  fs.add(30, {{1, 1}});
  fs.add(30, {{1, 1}});
  const FluidResult r = run_fluid(fs, {10.0, 10.0});
  EXPECT_NEAR(r.completion_s[0], 2.0, 1e-12);  // 5 B/s each until 10 B are moved
  EXPECT_NEAR(r.completion_s[1], 5.0, 1e-12);  // then alone at 10 B/s for its last 30 B
  EXPECT_NEAR(r.completion_s[2], 6.0, 1e-12);  // 5 B/s throughout
  EXPECT_NEAR(r.time_s, 6.0, 1e-12);
}

}  // namespace

// ECMP beyond the routes hashed one by one: a leaf pair's connections split over its ways as
// ideal independent hashes split them, a multinomial draw. Its shares sum to one, repeat for a
// seed, and spread as the multinomial's variance (1/k)(1 - 1/k)/n says, in both regimes: every
// connection drawn (few a way) and the normal approximation (many a way).
TEST(MultinomialShares, SpreadAsIndependentHashes) {
  for (long long n : {120LL, 4000LL, 2000000LL}) {
    const int k = 16;
    double sum_var = 0;
    const int draws = 400;
    for (int seed = 1; seed <= draws; ++seed) {
      const auto s = multinomial_shares(n, k, static_cast<uint64_t>(seed));
      ASSERT_EQ(s.size(), static_cast<size_t>(k));
      double total = 0;
      for (double x : s) {
        EXPECT_GE(x, 0);
        total += x;
        sum_var += (x - 1.0 / k) * (x - 1.0 / k);
      }
      EXPECT_NEAR(total, 1.0, 1e-9);
    }
    const double var = sum_var / (draws * k);
    const double expect = (1.0 / k) * (1 - 1.0 / k) / static_cast<double>(n);
    EXPECT_NEAR(var / expect, 1.0, 0.15) << n;
    EXPECT_EQ(multinomial_shares(n, k, 7), multinomial_shares(n, k, 7));
    EXPECT_NE(multinomial_shares(n, k, 7), multinomial_shares(n, k, 8));
  }
  EXPECT_EQ(multinomial_shares(5, 1, 3), std::vector<double>{1.0});
}

}  // namespace gf
