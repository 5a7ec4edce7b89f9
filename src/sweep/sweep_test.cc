// The design sweep: --vary parsing, the cross-product, evaluation, the frontier and the best.
#include "sweep/sweep.h"

#include <gtest/gtest.h>

#include "report/sweep_report.h"

namespace gf {
namespace {

const std::string kSeed = GPUFABRIC_SOURCE_DIR "/examples/seed-70b-1024.yaml";

TEST(Sweep, ParsesVary) {
  auto a = parse_vary("cluster.nic=cx7-400g,cx8-800g");
  ASSERT_TRUE(a.ok());
  EXPECT_EQ(a->key, "cluster.nic");
  EXPECT_EQ(a->values, (std::vector<std::string>{"cx7-400g", "cx8-800g"}));
  for (const char* bad : {"cluster.nic", "=a,b", "cluster.nic=a,,b", "cluster.nic=a,a", ".nic=a",
                          "cluster..nic=a", "cluster.nic="}) {
    auto r = parse_vary(bad);
    ASSERT_FALSE(r.ok()) << bad;
    EXPECT_EQ(r.errors()[0].key, "--vary");
  }
  // The sweep's own axis is a closed set: a slip is bad input with a suggestion, not a design.
  EXPECT_TRUE(parse_vary("placement=packed,spread,random").ok());
  auto slip = parse_vary("placement=packed,spred");
  ASSERT_FALSE(slip.ok());
  EXPECT_NE(slip.errors()[0].message.find("unknown placement 'spred'"), std::string::npos);
  EXPECT_NE(slip.errors()[0].hint.find("spread"), std::string::npos);
}

TEST(Sweep, CrossProductLastAxisFastest) {
  const std::vector<SweepAxis> axes{{"a", {"1", "2"}}, {"b", {"x", "y", "z"}}};
  EXPECT_EQ(design_count(axes), 6);
  EXPECT_EQ(design_count({}), 0);
  const auto v = design_values(axes, 4);  // a=2, b=y
  ASSERT_EQ(v.size(), 2u);
  EXPECT_EQ(v[0].value, "2");
  EXPECT_EQ(v[1].value, "y");
}

TEST(Sweep, OverridesAreValidatedLikeTheFile) {
  auto ok = load_spec(kSeed, {{"cluster.nodes", "64"}, {"workload.parallelism.dp", "auto"}});
  ASSERT_TRUE(ok.ok()) << format_diagnostics(ok.errors());
  EXPECT_EQ(ok->spec.cluster.nodes, 64);
  auto typo = load_spec(kSeed, {{"cluster.nicc", "cx8-800g"}});
  ASSERT_FALSE(typo.ok());
  const std::string msg = format_diagnostics(typo.errors());
  EXPECT_NE(msg.find("[cluster.nicc=cx8-800g]"), std::string::npos) << msg;
  EXPECT_NE(msg.find("did you mean 'nic'"), std::string::npos) << msg;
  auto unknown = load_spec(kSeed, {{"cluster.nic", "cx9-9000g"}});
  ASSERT_FALSE(unknown.ok());
  auto not_a_map = load_spec(kSeed, {{"name.x", "1"}});
  ASSERT_FALSE(not_a_map.ok());
  EXPECT_EQ(not_a_map.errors()[0].key, "name.x");
}

TEST(Sweep, FasterNicsRaiseBusbwAndCost) {
  // Without SHARP: with it NCCL's tuner picks CollNet at 1 GiB on 128 H100 nodes, bound by NVLink
  // on both NICs alike.
  const DesignResult slow = evaluate_design(
      kSeed, {{"cluster.nic", "cx7-400g"}, {"fabric.in_network_reduction", "off"}}, 0);
  const DesignResult fast = evaluate_design(
      kSeed, {{"cluster.nic", "cx8-800g"}, {"fabric.in_network_reduction", "off"}}, 1);
  ASSERT_TRUE(slow.ok) << slow.error;
  ASSERT_TRUE(fast.ok) << fast.error;
  // At the quoted 1 GiB on 128 nodes latency and the pipeline's fill take a share of the time,
  // and the algorithm NCCL's tuner picks changes with the NIC: faster, not twice as fast.
  EXPECT_GT(fast.busbw_gbs, slow.busbw_gbs);
  EXPECT_GT(fast.capex_usd, slow.capex_usd);
  EXPECT_TRUE(slow.has_step);
  EXPECT_LE(fast.step_time_s, slow.step_time_s);
  const DesignResult bad = evaluate_design(kSeed, {{"cluster.nodes", "96"}}, 2);
  EXPECT_FALSE(bad.ok);
  EXPECT_NE(bad.error.find("workload.parallelism.dp"), std::string::npos) << bad.error;
}

TEST(Sweep, ThreadsGiveTheSameAnswer) {
  const std::vector<SweepAxis> axes{{"cluster.nic", {"cx7-400g", "cx8-800g"}},
                                    {"fabric.oversubscription", {"1", "2"}}};
  long long calls = 0;
  const auto one = evaluate_designs(kSeed, axes, 0, 4, 1, [&](long long) { ++calls; });
  const auto two = evaluate_designs(kSeed, axes, 0, 4, 2, {});
  EXPECT_EQ(calls, 4);
  ASSERT_EQ(one.size(), two.size());
  for (size_t i = 0; i < one.size(); ++i) {
    EXPECT_EQ(one[i].index, static_cast<int>(i));
    EXPECT_DOUBLE_EQ(one[i].capex_usd, two[i].capex_usd);
    EXPECT_DOUBLE_EQ(one[i].busbw_gbs, two[i].busbw_gbs);
  }
}

TEST(Sweep, DesignsRoundTripThroughJsonAndSharesCoverAll) {
  const DesignResult d = evaluate_design(kSeed, {{"cluster.nic", "cx8-800g"}}, 3);
  ASSERT_TRUE(d.ok);
  const DesignResult back = design_from_json(nlohmann::json::parse(design_to_json(d).dump()));
  EXPECT_EQ(design_to_json(back), design_to_json(d));
  EXPECT_EQ(back.capex_usd, d.capex_usd);  // exactly
  EXPECT_EQ(back.step_time_s, d.step_time_s);
  long long covered = 0, next = 0;
  for (int p = 0; p < 4; ++p) {
    const auto [first, last] = design_share(10, p, 4);
    EXPECT_EQ(first, next);
    covered += last - first;
    next = last;
  }
  EXPECT_EQ(covered, 10);
}

DesignResult design(int index, double capex, double days, bool constraints = true) {
  DesignResult d;
  d.index = index;
  d.values = {{"k", std::to_string(index)}};
  d.ok = d.has_step = true;
  d.capex_usd = capex;
  d.time_to_train_s = days * 86400;
  d.constraints_met = constraints;
  d.within_budget = true;
  return d;
}

TEST(Sweep, FrontierAndBestForTheGoal) {
  // 0: cheap and slow; 1: dear and fast; 2: dominated by 0; 3: fastest but misses constraints.
  std::vector<DesignResult> ds{design(2, 12e6, 12), design(0, 10e6, 10), design(1, 20e6, 5),
                               design(3, 30e6, 4, false)};
  DesignResult invalid;
  invalid.index = 4;
  invalid.error = "no";
  ds.push_back(invalid);
  auto time = summarise_sweep({}, ds, Goal::kTime, 0);
  ASSERT_EQ(time.designs.size(), 5u);
  EXPECT_EQ(time.designs[0].index, 0);  // sorted
  EXPECT_TRUE(time.designs[0].pareto);
  EXPECT_TRUE(time.designs[1].pareto);
  EXPECT_FALSE(time.designs[2].pareto);
  EXPECT_TRUE(time.designs[3].pareto);  // on the frontier, though it misses the constraints
  EXPECT_FALSE(time.designs[4].pareto);
  EXPECT_EQ(time.best, 1);  // fastest that meets the constraints
  EXPECT_NE(time.why.find("design 2 (k=1)"), std::string::npos) << time.why;
  EXPECT_NE(time.why.find("runner-up"), std::string::npos);
  auto cost = summarise_sweep({}, ds, Goal::kCost, 0);
  EXPECT_EQ(cost.best, 0);
  // A budget that only the cheapest meets.
  for (auto& d : ds) d.within_budget = d.capex_usd <= 11e6;
  EXPECT_EQ(summarise_sweep({}, ds, Goal::kTime, 11e6).best, 0);
  for (auto& d : ds) d.within_budget = false;
  auto none = summarise_sweep({}, ds, Goal::kTime, 1e6);
  EXPECT_EQ(none.best, -1);
  EXPECT_NE(none.why.find("none of the 4 valid designs"), std::string::npos) << none.why;
}

// Designs without a workload are judged by their busbw: the best's line names it once.
TEST(Sweep, ABusbwOnlyBestNamesItsBusbwOnce) {
  std::vector<DesignResult> ds{design(0, 10e6, 0), design(1, 12e6, 0)};
  for (auto& d : ds) {
    d.has_step = false;
    d.busbw_gbs = 92;
  }
  const auto r = summarise_sweep({}, ds, Goal::kCost, 0);
  const size_t first = r.why.find("92 GB/s all_reduce busbw");
  ASSERT_NE(first, std::string::npos) << r.why;
  const size_t runner = r.why.find("runner-up");
  EXPECT_EQ(r.why.find("92 GB/s all_reduce busbw", first + 1) > runner, true) << r.why;
  // Ranked by busbw for goal time, and said to be: no step, no constraint judged.
  ds[1].busbw_gbs = 95;
  const auto fast = summarise_sweep({}, ds, Goal::kTime, 0);
  EXPECT_EQ(fast.best, 1);
  EXPECT_NE(fast.why.find("design 2 (k=1): the highest all_reduce busbw of the 2 valid designs "
                          "(95 GB/s all_reduce busbw, capex $12M, goal: time); the spec has no "
                          "workload, so no step was timed and no constraint judged"),
            std::string::npos)
      << fast.why;
  EXPECT_EQ(fast.why.find("meet the constraints"), std::string::npos) << fast.why;
  // The table shows no communication share for them.
  const std::string table = sweep_table(fast);
  EXPECT_EQ(table.find("0.0%"), std::string::npos) << table;
  // With a step, the time first and the busbw beside it.
  const auto t = summarise_sweep({}, {design(0, 10e6, 10)}, Goal::kTime, 0);
  EXPECT_NE(t.why.find("to train, capex $10M, 0 GB/s all_reduce busbw, goal: time"),
            std::string::npos)
      << t.why;
}

}  // namespace
}  // namespace gf
