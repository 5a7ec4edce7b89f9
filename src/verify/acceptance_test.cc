#include "verify/acceptance.h"

#include <gtest/gtest.h>

#include <map>
#include <set>

#include "../../tests/acceptance_results.h"
#include "../../tests/support.h"

namespace gf {
namespace {

using testing::acceptance_results;
using testing::load_example;

AcceptancePlan plan_of(const PlannedSpec& p, int passes = 3) {
  AcceptanceOptions o;
  o.burn_in_passes = passes;
  auto a = plan_acceptance(p, o);
  EXPECT_TRUE(a.ok()) << format_diagnostics(a.errors());
  return a.ok() ? *a : AcceptancePlan{};
}

// Every pass crosses every cable in both directions; no round uses a cable direction twice;
// each test's path runs from its source's cable up to its destination's cable down, each cable
// meeting the next at a switch.
void expect_schedule_sound(const AcceptancePlan& a) {
  std::map<int, std::set<int>> seen;                  // pass -> crossings
  std::map<std::pair<int, int>, std::set<int>> busy;  // (pass, round) -> crossings
  for (const auto& t : a.tests) {
    ASSERT_GE(t.crossings.size(), 2u) << t.id;
    const auto& first = a.cables[static_cast<size_t>(t.crossings.front() / 2)];
    const auto& last = a.cables[static_cast<size_t>(t.crossings.back() / 2)];
    EXPECT_EQ(t.crossings.front() % 2, 0) << t.id;
    EXPECT_EQ(first.a_device, t.src_node) << t.id;
    EXPECT_EQ(first.a_port, t.src_port) << t.id;
    EXPECT_EQ(t.crossings.back() % 2, 1) << t.id;
    EXPECT_EQ(last.a_device, t.dst_node) << t.id;
    for (size_t i = 0; i + 1 < t.crossings.size(); ++i) {
      const auto& c = a.cables[static_cast<size_t>(t.crossings[i] / 2)];
      const auto& n = a.cables[static_cast<size_t>(t.crossings[i + 1] / 2)];
      const std::string at = t.crossings[i] % 2 ? c.a_device : c.b_device;
      const std::string from = t.crossings[i + 1] % 2 ? n.b_device : n.a_device;
      EXPECT_EQ(at, from) << t.id << " hop " << i;
    }
    for (int x : t.crossings) {
      seen[t.pass].insert(x);
      auto& round = busy[std::make_pair(t.pass, t.round)];
      EXPECT_TRUE(round.insert(x).second)
          << t.id << " shares a cable direction with another test of round " << t.round;
    }
    EXPECT_EQ(t.switches + 1, static_cast<int>(t.crossings.size()));
    EXPECT_GT(t.latency_floor_us, 0);
  }
  for (const auto& [pass, xs] : seen)
    EXPECT_EQ(xs.size(), 2 * a.cables.size()) << "pass " << pass << " misses cable directions";
  EXPECT_EQ(a.uncovered, 0);
  EXPECT_GE(a.rounds, a.lower_bound_rounds);
}

TEST(Acceptance, RoceLabCoversEveryCableInOneRound) {
  const auto p = load_example("roce-lab-16.yaml");
  const auto a = plan_of(p);
  EXPECT_EQ(a.cables.size(), 24u);  // 16 node-leaf + 8 leaf-spine, as plan says
  expect_schedule_sound(a);
  // 2:1 at the leaf: two of a leaf's four NICs go up, two stay on the leaf; one round does it.
  EXPECT_EQ(a.lower_bound_rounds, 1);
  EXPECT_EQ(a.rounds, 1);
  EXPECT_NEAR(a.expected_gbps, 380, 1e-9);  // the guide's ~380 of 400 Gbps
  EXPECT_EQ(a.gid_index, 3);
  for (const auto& t : a.tests) EXPECT_GT(t.flow_label, 0) << t.id;
  // NCCL's environment comes from the host configs' nccl.env.
  bool hca = false;
  for (const auto& e : a.nccl_env) hca = hca || e.rfind("NCCL_IB_HCA==mlx5_0:1,mlx5_1:1", 0) == 0;
  EXPECT_TRUE(hca);
  // nccl-tests at 2 nodes, a unit (4) and the cluster (8), each with the simulated busbw.
  std::set<int> scales;
  for (const auto& st : a.nccl) {
    scales.insert(st.nodes);
    ASSERT_FALSE(st.expected.empty());
    for (const auto& [b, bw] : st.expected) EXPECT_GT(bw, 0) << st.name << " " << b;
  }
  EXPECT_EQ(scales, (std::set<int>{2, 4, 8}));
}

// Nodes with more NICs than GPUs put PCIe-switch links before the cables in the fabric graph;
// the cable index starts where the graph says, not at a count of the host links.
TEST(Acceptance, MoreNicsThanGpusStillIndexesTheCables) {
  const auto p =
      testing::load_example_edited("roce-lab-16.yaml", "gpus_per_node: 2", "gpus_per_node: 1");
  AcceptanceOptions o;
  auto a = plan_acceptance(p, o);
  ASSERT_TRUE(a.ok()) << format_diagnostics(a.errors());
  EXPECT_EQ(a->cables.size(), 24u);
  expect_schedule_sound(*a);
}

TEST(Acceptance, SuperpodMeetsItsLowerBound) {
  const auto p = load_example("superpod-h100-4su.yaml");
  const auto a = plan_of(p, 0);
  expect_schedule_sound(a);
  // The last unit's leaves have 31 nodes and 32 uplinks: two rounds at least.
  EXPECT_EQ(a.lower_bound_rounds, 2);
  EXPECT_LE(a.rounds, a.lower_bound_rounds + 1);
  EXPECT_LT(a.gid_index, 0);  // InfiniBand: no GID index
}

// A three-tier fabric: the links from the spines to the cores need a sender in one pod and a
// receiver in another. Receivers tried beside the sender alone (its own pod) had left one such
// link untested after 5 rounds; spread over the fabric, every cable is covered in 3.
TEST(Acceptance, ThreeTierFabricCoversTheCoreLinksInFewRounds) {
  const auto p = testing::load_example_edited("superpod-h100-4su.yaml",
                                              {{"  nodes: 127 ", "  nodes: 1024 "},
                                               {"  topology: auto\n", "  topology: clos3\n"},
                                               {"  scalable_unit: 32\n", ""},
                                               {"  appliance_ports: 4\n", ""}});
  ASSERT_EQ(p.plan.topo.kind, TopologyKind::kClos3);
  const auto a = plan_of(p, 0);
  EXPECT_EQ(a.uncovered, 0) << (a.uncovered_directions.empty() ? "" : a.uncovered_directions[0]);
  EXPECT_LE(a.rounds, 3);
  expect_schedule_sound(a);
}

// One NIC port in the whole fabric: no pair to test, and no round needed for it; its two cable
// directions are named (summary, runbook, expected.json), and the burn-in says it has no test
// to repeat rather than "3 passes, 0 tests".
TEST(Acceptance, OneNicPortNamesItsUntestableCable) {
  const auto p = testing::load_example_edited(
      "roce-lab-16.yaml", {{"  nodes: 8\n  gpus_per_node: 2\n", "  nodes: 1\n  gpus_per_node: 1\n"},
                           {"  nics_per_node: 2\n", "  nics_per_node: 1\n"},
                           {"  scalable_unit: 4 ", "  scalable_unit: 1 "}});
  const auto a = plan_of(p);
  EXPECT_TRUE(a.tests.empty());
  EXPECT_EQ(a.lower_bound_rounds, 0);
  // Its own cable, and the leaf's uplinks to the spines, each way.
  ASSERT_EQ(a.uncovered, 2 * static_cast<long long>(a.cables.size()));
  ASSERT_EQ(a.uncovered_directions.size(), 2 * a.cables.size());
  EXPECT_EQ(a.uncovered_directions[0].substr(0, 16), "node001:nic0 -> ");
  EXPECT_EQ(a.uncovered_directions[1].substr(a.uncovered_directions[1].size() - 16),
            " -> node001:nic0");
  const std::string text = acceptance_text(a);
  EXPECT_NE(text.find("(lower bound 0: one NIC port, and a link test runs between two)"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find(fmt::format("{} cable directions uncovered: {}, {}, {}, ... (the runbook "
                                  "lists them)",
                                  a.uncovered, a.uncovered_directions[0], a.uncovered_directions[1],
                                  a.uncovered_directions[2])),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("burn-in        no link test to repeat"), std::string::npos) << text;
  std::string runbook;
  for (const auto& [path, content] : acceptance_files(p, a))
    if (path == "runbook.md") runbook = content;
  EXPECT_NE(runbook.find("(the fabric has one NIC port, and a link test needs two): check the "
                         "link's state and rate"),
            std::string::npos)
      << runbook;
  EXPECT_NE(runbook.find("- `" + a.uncovered_directions[1] + "`\n"), std::string::npos);
  EXPECT_EQ(runbook.find("The 3 passes"), std::string::npos) << runbook;
  EXPECT_EQ(acceptance_json(a)["uncovered"].size(), a.uncovered_directions.size());
}

// Without burn-in passes the summary and the runbook say so, not "0 passes, 0 tests".
TEST(Acceptance, NoBurnInPassesSaySo) {
  const auto p = load_example("roce-lab-16.yaml");
  const auto none = plan_of(p, 0);
  const std::string text = acceptance_text(none);
  EXPECT_NE(text.find("burn-in        none (--burn-in-passes 0)"), std::string::npos) << text;
  EXPECT_EQ(text.find("0 passes"), std::string::npos) << text;
  std::string runbook;
  for (const auto& [path, content] : acceptance_files(p, none))
    if (path == "runbook.md") runbook = content;
  EXPECT_NE(runbook.find("No burn-in passes (`--burn-in-passes 0`)"), std::string::npos);
  // The counters are read around the link tests, not back to back after them.
  EXPECT_NE(runbook.find("counters.sh before` (before section 2's link tests)"), std::string::npos)
      << runbook;
  EXPECT_EQ(runbook.find("The 0 pass"), std::string::npos);
  EXPECT_NE(acceptance_text(plan_of(p, 1)).find("burn-in        1 pass, "), std::string::npos);
}

// The names the scripts take from the spec's addressing are said to be stand-ins where the spec
// gives none, in the summary, the runbook's top and the JSON: the lab spec's comments name its
// rails only in comments, so its burn-in would run ethtool -S nic0 on real hosts.
TEST(Acceptance, StandInNamesAreSaid) {
  const auto lab = load_example("roce-lab-16.yaml");
  const auto a = plan_of(lab, 1);
  ASSERT_EQ(a.placeholders.size(), 3u);
  EXPECT_EQ(a.placeholders[0].rfind("addressing.host_netdevs:", 0), 0u);
  EXPECT_NE(acceptance_text(a).find("placeholder    addressing.mgmt_netdev"), std::string::npos);
  EXPECT_EQ(acceptance_json(a)["placeholders"].size(), 3u);
  for (const auto& [path, text] : acceptance_files(lab, a))
    if (path == "runbook.md") {
      EXPECT_NE(text.find("**Names to set first.**"), std::string::npos);
    }
  // A spec that names them has none: roce-16k names its management interface only.
  const auto big = load_example("roce-16k.yaml");
  AcceptanceOptions o;
  o.burn_in_passes = 0;
  auto b = plan_acceptance(big, o);
  ASSERT_TRUE(b.ok());
  for (const auto& p : b->placeholders) EXPECT_EQ(p.find("mgmt_netdev"), std::string::npos) << p;
}

TEST(Acceptance, ResultsAllGoodPass) {
  const auto p = load_example("roce-lab-16.yaml");
  const auto a = plan_of(p);
  auto r = check_acceptance(p, a, acceptance_results(p, a));
  ASSERT_TRUE(r.ok()) << format_diagnostics(r.errors());
  EXPECT_TRUE(r->pass) << acceptance_result_text(*r);
  EXPECT_EQ(r->missing, 0);
  EXPECT_EQ(r->failed_links, 0);
  EXPECT_TRUE(r->suspects.empty());
}

TEST(Acceptance, SlowCableIsNamedByElimination) {
  const auto p = load_example("roce-lab-16.yaml");
  const auto a = plan_of(p);
  for (int slow : {3, 17, 22}) {  // a node-leaf cable and two leaf-spine cables
    testing::ResultsRecipe recipe;
    recipe.slow_cable = slow;
    auto r = check_acceptance(p, a, acceptance_results(p, a, recipe));
    ASSERT_TRUE(r.ok()) << format_diagnostics(r.errors());
    EXPECT_FALSE(r->pass);
    EXPECT_GT(r->failed_links, 0);
    ASSERT_EQ(r->suspects.size(), 1u) << acceptance_result_text(*r);
    EXPECT_EQ(r->suspects[0].cable, a.cables[static_cast<size_t>(slow)].name());
    EXPECT_EQ(r->suspects[0].direction, "both");
  }
}

// A link test above the port's line rate is not that link's test (another port's, a bond, an
// edited output): it fails, and says why, instead of passing as fast.
TEST(Acceptance, ALinkTestAboveTheLineRateFails) {
  const auto p = load_example("roce-lab-16.yaml");
  const auto a = plan_of(p);
  testing::ResultsRecipe recipe;
  recipe.slow_cable = 3;
  recipe.slow_gbps = 8000;
  auto r = check_acceptance(p, a, acceptance_results(p, a, recipe));
  ASSERT_TRUE(r.ok()) << format_diagnostics(r.errors());
  EXPECT_FALSE(r->pass);
  EXPECT_GT(r->failed_links, 0);
  bool said = false;
  for (const auto& row : r->rows)
    said = said || row.detail.find("above the port's 400 Gb/s line rate") != std::string::npos;
  EXPECT_TRUE(said) << acceptance_result_text(*r);
}

TEST(Acceptance, OnePassAloneNamesTheCandidates) {
  // Without the burn-in's other pairings each cable is crossed by one test a direction: the
  // failing tests' other cables cannot be ruled out, and check says so.
  const auto p = load_example("roce-lab-16.yaml");
  const auto a = plan_of(p, 0);
  testing::ResultsRecipe recipe;
  recipe.slow_cable = 17;
  recipe.with_counters = false;
  auto files = acceptance_results(p, a, recipe);
  auto r = check_acceptance(p, a, files);
  ASSERT_TRUE(r.ok());
  bool named = false;
  for (const auto& s : r->suspects) named = named || s.cable == a.cables[17].name();
  EXPECT_TRUE(named) << acceptance_result_text(*r);
  if (r->suspects.size() > 1) {
    EXPECT_NE(r->suspect_note.find("candidates"), std::string::npos);
  }
  EXPECT_GT(r->missing, 0);  // the counters were not read
}

TEST(Acceptance, InfinibandResultsWithPerfqueryCounters) {
  const auto p = load_example("seed-70b-1024.yaml");
  const auto a = plan_of(p, 2);
  ASSERT_FALSE(a.roce);
  auto good = check_acceptance(p, a, acceptance_results(p, a));
  ASSERT_TRUE(good.ok()) << format_diagnostics(good.errors());
  EXPECT_TRUE(good->pass) << acceptance_result_text(*good);
  // A leaf-spine cable planted slow: named among the candidates (InfiniBand paths are not
  // chosen, so the passes may leave several).
  size_t slow = 0;
  while (a.cables[slow].kind != LinkKind::kLeafSpine) ++slow;
  slow += 7;
  testing::ResultsRecipe recipe;
  recipe.slow_cable = static_cast<int>(slow);
  auto bad = check_acceptance(p, a, acceptance_results(p, a, recipe));
  ASSERT_TRUE(bad.ok());
  EXPECT_FALSE(bad->pass);
  bool named = false;
  for (const auto& s : bad->suspects) named = named || s.cable == a.cables[slow].name();
  EXPECT_TRUE(named) << acceptance_result_text(*bad);
}

TEST(Acceptance, MissingAndBadFiles) {
  const auto p = load_example("roce-lab-16.yaml");
  const auto a = plan_of(p, 1);
  auto files = acceptance_results(p, a);
  // A truncated ib_write_bw output: bad input, naming the file and line.
  for (auto& f : files)
    if (f.path == "link-tests/T0002-bw.txt") f.text = f.text.substr(0, f.text.find("#bytes") + 90);
  auto r = check_acceptance(p, a, files);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.errors()[0].file, "link-tests/T0002-bw.txt");
  EXPECT_GT(r.errors()[0].line, 0);
  // A folder of other files: the wrong folder, bad input.
  auto none = check_acceptance(p, a, {{"notes.txt", "hello\n"}});
  ASSERT_FALSE(none.ok());
  EXPECT_EQ(none.errors()[0].key, "RESULTS");
  // A missing one: a FAIL row, not an error.
  files = acceptance_results(p, a);
  files.erase(files.begin());
  auto m = check_acceptance(p, a, files);
  ASSERT_TRUE(m.ok());
  EXPECT_FALSE(m->pass);
  EXPECT_EQ(m->missing, 1);
}

// A link test that printed no result is a failed test, not bad input: perftest's own error on a
// dead link (its banner and table header, then "Completion with error"), ssh's, an empty file.
// Each is a FAIL row that says why, counted among the failed link tests for the suspect's
// search; it had stopped the whole verdict with exit 2.
TEST(Acceptance, ALinkTestWithoutAResultFailsAndSaysWhy) {
  const auto p = load_example("roce-lab-16.yaml");
  const auto a = plan_of(p, 1);
  auto files = acceptance_results(p, a);
  for (auto& f : files) {
    if (f.path == "link-tests/T0002-bw.txt")
      f.text = f.text.substr(0, f.text.find('\n', f.text.find("#bytes")) + 1) +
               "Completion with error at client\nFailed status 12: wr_id 0 syndrom 0x81\n"
               "scnt=128, ccnt=0\n Failed to complete run_iter_bw function successfully\n";
    if (f.path == "link-tests/T0003-bw.txt") f.text = "";
    if (f.path == "link-tests/T0002-lat.txt")
      f.text = "ssh: connect to host node002 port 22: No route to host\n";
  }
  auto r = check_acceptance(p, a, files);
  ASSERT_TRUE(r.ok()) << format_diagnostics(r.errors());
  EXPECT_FALSE(r->pass);
  EXPECT_EQ(r->failed_links, 2);
  std::map<std::string, std::string> why;
  for (const auto& row : r->rows)
    if (!row.ok) why[row.file] = row.detail;
  EXPECT_NE(why["link-tests/T0002-bw.txt"].find("no result, Completion with error at client"),
            std::string::npos)
      << acceptance_result_text(*r);
  EXPECT_NE(why["link-tests/T0003-bw.txt"].find("no result, the output is empty"),
            std::string::npos);
  EXPECT_NE(why["link-tests/T0002-lat.txt"].find("No route to host"), std::string::npos);
  EXPECT_FALSE(r->suspect_note.empty());
}

TEST(Acceptance, BurnInCountersJudged) {
  const auto p = load_example("roce-lab-16.yaml");
  const auto a = plan_of(p, 1);
  auto files = acceptance_results(p, a);
  for (auto& f : files)
    if (f.path == "counters/after/node001/mlx5_0.txt")
      f.text = testing::ethtool_output(1e12 + 3e13, 5000);  // 1e-12 x 2.4e14 bits = 240 allowed
  auto r = check_acceptance(p, a, files);
  ASSERT_TRUE(r.ok());
  EXPECT_FALSE(r->pass);
  int failed = 0;
  for (const auto& row : r->rows)
    if (row.what == "counter" && !row.ok) {
      ++failed;
      EXPECT_EQ(row.id, "node001:mlx5_0");
      EXPECT_NEAR(row.expected, 240, 1);
    }
  EXPECT_EQ(failed, 1);
  // Counters that went backwards (cleared during the burn-in, or the readings swapped) judge
  // nothing: an error naming the file, not a pass on negative differences.
  for (auto& f : files)
    if (f.path == "counters/after/node001/mlx5_0.txt") f.text = testing::ethtool_output(1e11, 0);
  auto back = check_acceptance(p, a, files);
  ASSERT_FALSE(back.ok());
  EXPECT_EQ(back.errors()[0].file, "counters/after/node001/mlx5_0.txt");
  EXPECT_NE(back.errors()[0].message.find("node001:mlx5_0's counters went backwards since "
                                          "counters/before/node001/mlx5_0.txt (received bytes "
                                          "went down from 1e+12 to 1e+11)"),
            std::string::npos)
      << back.errors()[0].message;
}

TEST(Acceptance, NcclStageBelowSimulationFails) {
  const auto p = load_example("roce-lab-16.yaml");
  const auto a = plan_of(p, 1);
  auto files = acceptance_results(p, a);
  for (auto& f : files)
    if (f.path == "nccl/cluster/all_reduce_perf.txt")
      for (const auto& st : a.nccl)
        if (nccl_result_path(st) == f.path) f.text = testing::nccl_tests_output(st, 2, 0.6);
  auto r = check_acceptance(p, a, files);
  ASSERT_TRUE(r.ok());
  EXPECT_FALSE(r->pass);
  for (const auto& row : r->rows)
    if (!row.ok && row.judged) {
      EXPECT_EQ(row.file, "nccl/cluster/all_reduce_perf.txt");
    }
  EXPECT_EQ(r->failed_links, 0);
}

}  // namespace
}  // namespace gf
