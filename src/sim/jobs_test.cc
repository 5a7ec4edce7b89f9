#include "sim/jobs.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>

#include "../../tests/support.h"
#include "sim/whatif.h"
#include "sweep/sweep.h"
#include "verify/trace_readers.h"

namespace gf {
namespace {

// 16 servers of 8 GPUs in 4 scalable units of 4 on a two-tier RoCE Clos; `over` the leaf's
// oversubscription (4: one spine, every leaf's uplinks a quarter of its host ports).
std::string cluster(double over = 1, const std::string& lb = "ecmp") {
  return fmt::format(
      "name: t\ncluster: {{gpu: h100-sxm, nodes: 16, gpus_per_node: 8, nic: cx7-400g}}\n"
      "fabric: {{technology: roce, topology: clos2, scalable_unit: 4, switch: arista-7060x6, "
      "oversubscription: {}, load_balancing: {}}}\n",
      over, lb);
}

// A job of an 8B model on `nodes` servers, data parallel across them (tp 8 fills a server),
// 8 sequences per replica a step.
std::string job(const std::string& name, int nodes, const std::string& placement,
                const std::string& extra = "") {
  return fmt::format(
      "  - name: {}\n    nodes: {}\n    placement: {}\n{}    workload:\n"
      "      model: {{params: 8B, layers: 32, hidden: 4096, heads: 32, seq_len: 4096, vocab: "
      "128256}}\n"
      "      parallelism: {{tp: 8, pp: 1, dp: auto}}\n      global_batch: {}\n",
      name, nodes, placement, extra, 8 * nodes);
}

struct JobsSetup {
  Catalog cat = *builtin_catalog();
  Spec spec;
  Plan plan;
};

JobsSetup setup(const std::string& yaml) {
  JobsSetup s;
  s.plan = testing::plan_of(yaml, s.cat, &s.spec);
  return s;
}

std::vector<Diagnostic> spec_errors(const std::string& yaml) {
  auto spec = parse_spec(yaml, "t.yaml");
  if (!spec) return spec.errors();
  return validate_spec(*spec, *builtin_catalog());
}

std::vector<std::vector<int>> placed(const JobsSetup& s, std::optional<Placement> policy = {}) {
  const Fabric fab = Fabric::build(s.plan, s.cat);
  auto r = place_jobs(s.spec, s.plan, node_names(s.plan, s.cat, fab), policy);
  EXPECT_TRUE(r.ok()) << format_diagnostics(r.errors());
  return r.ok() ? *r : std::vector<std::vector<int>>{};
}

}  // namespace

TEST(JobsSpec, ReadsJobsWithTheirWorkloadSizeAndPlacement) {
  auto spec =
      parse_spec(cluster() + "jobs:\n" + job("a", 4, "spread") +
                     job("b", 2, "random", "    seed: 9\n") + job("c", 2, "[node009, node011]"),
                 "t.yaml");
  ASSERT_TRUE(spec.ok()) << format_diagnostics(spec.errors());
  ASSERT_EQ(spec->jobs.size(), 3u);
  EXPECT_EQ(spec->jobs[0].name, "a");
  EXPECT_EQ(spec->jobs[0].placement, Placement::kSpread);
  EXPECT_EQ(spec->jobs[0].workload.model.params, 8e9);
  EXPECT_EQ(spec->jobs[1].placement, Placement::kRandom);
  EXPECT_EQ(spec->jobs[1].seed, 9u);
  EXPECT_FALSE(spec->jobs[2].placement.has_value());
  EXPECT_EQ(spec->jobs[2].nodes_listed, (std::vector<std::string>{"node009", "node011"}));
  EXPECT_TRUE(validate_spec(*spec, *builtin_catalog()).empty());
  EXPECT_EQ(spec->jobs[0].workload.parallelism.dp, 4);  // dp: auto from the job's 32 GPUs
}

TEST(JobsSpec, BadJobsNameTheLineAndKey) {
  // An unknown placement: the enum's names in the message.
  auto e = spec_errors(cluster() + "jobs:\n" + job("a", 4, "packd"));
  ASSERT_FALSE(e.empty());
  EXPECT_EQ(e[0].key, "jobs[0].placement");
  EXPECT_EQ(e[0].line, 7);
  EXPECT_NE(e[0].hint.find("packed"), std::string::npos) << e[0].hint;
  // Overlapping node lists: the second listing of the node is pointed at.
  e = spec_errors(cluster() + "jobs:\n" + job("a", 2, "[node001, node002]") +
                  job("b", 2, "[node003, node002]"));
  ASSERT_EQ(e.size(), 1u) << format_diagnostics(e);
  EXPECT_EQ(e[0].key, "jobs[1].placement[1]");
  EXPECT_EQ(e[0].line, 14);
  EXPECT_NE(e[0].message.find("already job 'a'"), std::string::npos) << e[0].message;
  // More GPUs than the fabric.
  e = spec_errors(cluster() + "jobs:\n" + job("a", 12, "packed") + job("b", 8, "packed"));
  ASSERT_EQ(e.size(), 1u) << format_diagnostics(e);
  EXPECT_EQ(e[0].key, "jobs");
  EXPECT_NE(e[0].message.find("160 GPUs (20 nodes)"), std::string::npos) << e[0].message;
  // A job's parallelism against its own GPUs.
  e = spec_errors(cluster() + "jobs:\n" +
                  "  - name: a\n    gpus: 32\n    workload:\n      model: {params: 8B}\n"
                  "      parallelism: {tp: 8, dp: 8}\n");
  ASSERT_EQ(e.size(), 1u) << format_diagnostics(e);
  EXPECT_EQ(e[0].key, "jobs[0].workload.parallelism.dp");
  EXPECT_NE(e[0].message.find("the job has 32 GPUs"), std::string::npos) << e[0].message;
  // A trace job reads (its file is read by the commands); a duplicate name and a missing size
  // are refused; so are a workload beside a trace, a step without one, an empty trace list.
  e = spec_errors(cluster() +
                  "jobs:\n  - {name: a, gpus: 8, trace: rank0.json}\n"
                  "  - {name: a, workload: {model: {params: 8B}}}\n"
                  "  - {name: c, gpus: 8, trace: r.json, workload: {model: {params: 8B}}}\n"
                  "  - {name: d, gpus: 8, step: ProfilerStep#2, workload: {model: {params: 8B}}}\n"
                  "  - {name: e, gpus: 8, trace: []}\n");
  ASSERT_EQ(e.size(), 5u) << format_diagnostics(e);
  EXPECT_EQ(e[0].key, "jobs[1].name");
  EXPECT_EQ(e[1].key, "jobs[1].gpus");
  EXPECT_EQ(e[2].key, "jobs[2].trace");
  EXPECT_EQ(e[2].line, 7);
  EXPECT_NE(e[2].message.find("either workload or trace"), std::string::npos) << e[2].message;
  EXPECT_EQ(e[3].key, "jobs[3].step");
  EXPECT_EQ(e[4].key, "jobs[4].trace");
  // Not a list.
  e = spec_errors(cluster() + "jobs: {name: a}\n");
  ASSERT_EQ(e.size(), 1u);
  EXPECT_EQ(e[0].key, "jobs");
}

TEST(JobsPlacement, PackedFillsUnitsInOrder) {
  const JobsSetup s = setup(cluster() + "jobs:\n" + job("a", 6, "packed") + job("b", 4, "packed"));
  const auto p = placed(s);
  EXPECT_EQ(p[0], (std::vector<int>{0, 1, 2, 3, 4, 5}));  // unit 1, then half of unit 2
  EXPECT_EQ(p[1], (std::vector<int>{6, 7, 8, 9}));
}

TEST(JobsPlacement, SpreadRoundRobinsAcrossUnits) {
  const JobsSetup s = setup(cluster() + "jobs:\n" + job("a", 4, "spread") + job("b", 6, "spread"));
  const auto p = placed(s);
  EXPECT_EQ(p[0], (std::vector<int>{0, 4, 8, 12}));  // one node of each unit
  EXPECT_EQ(p[1], (std::vector<int>{1, 2, 5, 6, 9, 13}));
}

TEST(JobsPlacement, RandomIsReproducibleBySeed) {
  auto with_seed = [](int seed) {
    return placed(setup(cluster() + "jobs:\n" +
                        job("a", 6, "random", fmt::format("    seed: {}\n", seed))))[0];
  };
  const auto a = with_seed(3), b = with_seed(3), c = with_seed(4);
  EXPECT_EQ(a, b);
  EXPECT_NE(a, c);
  ASSERT_EQ(a.size(), 6u);
  EXPECT_TRUE(std::is_sorted(a.begin(), a.end()));
  EXPECT_EQ(std::adjacent_find(a.begin(), a.end()), a.end());  // six distinct nodes
  EXPECT_NE(a, (std::vector<int>{0, 1, 2, 3, 4, 5}));
}

TEST(JobsPlacement, ExplicitListIsHonouredAndPlacedFirst) {
  // b's list is placed before a, whatever the order: a packs around it.
  const JobsSetup s =
      setup(cluster() + "jobs:\n" + job("a", 4, "packed") + job("b", 2, "[node003, node001]"));
  const auto p = placed(s);
  EXPECT_EQ(p[1], (std::vector<int>{2, 0}));  // ranks in the listed order
  EXPECT_EQ(p[0], (std::vector<int>{1, 3, 4, 5}));
  // --placement overrides the policies, never a list.
  const auto q = placed(s, Placement::kSpread);
  EXPECT_EQ(q[1], (std::vector<int>{2, 0}));
  EXPECT_EQ(q[0], (std::vector<int>{1, 4, 8, 12}));
}

TEST(JobsPlacement, UnknownNodeSaysDidYouMean) {
  const JobsSetup s = setup(cluster() + "jobs:\n" + job("a", 2, "[node001, node12]"));
  const Fabric fab = Fabric::build(s.plan, s.cat);
  auto r = place_jobs(s.spec, s.plan, node_names(s.plan, s.cat, fab), std::nullopt);
  ASSERT_FALSE(r.ok());
  const Diagnostic& d = r.errors().front();
  EXPECT_EQ(d.key, "jobs[0].placement[1]");
  EXPECT_EQ(d.file, "test.yaml");
  EXPECT_EQ(d.line, 7);
  EXPECT_NE(d.hint.find("node012"), std::string::npos) << d.hint;
}

TEST(Jobs, DisjointUnitsOfANonBlockingFabricDoNotSlowEachOther) {
  // Each job fills a scalable unit of its own; 1:1 leaves: no link in common.
  const JobsSetup s = setup(cluster(1) + "jobs:\n" + job("a", 4, "packed") + job("b", 4, "packed"));
  auto r = simulate_jobs(s.spec, s.cat, s.plan, JobsOptions{});
  ASSERT_TRUE(r.ok()) << format_diagnostics(r.errors());
  ASSERT_EQ(r->run.jobs.size(), 2u);
  for (const auto& j : r->run.jobs) {
    EXPECT_EQ(j.slowdown, 1.0) << j.name;
    EXPECT_EQ(j.step_together_s, j.step_alone_s);
    EXPECT_TRUE(j.meets.empty());
    EXPECT_EQ(j.units, 1);
    EXPECT_GT(j.step_alone_s, 0);
  }
  EXPECT_TRUE(r->run.meetings.empty());
  // Alone at its placement a job's step is the step model's on those nodes.
  EXPECT_EQ(r->run.jobs[1].nodes, (std::vector<int>{4, 5, 6, 7}));
  // 1 asked + 3 policies x 3 load balancings - the asked one.
  EXPECT_EQ(r->compared.size(), 9u);
  // Nothing to gain beyond what the table shows: the run as asked stays the advice, whichever
  // other row is a hair shorter.
  EXPECT_EQ(r->best, 0) << r->advice;
  EXPECT_NE(r->advice.find("keeps the worst slowdown lowest of the 9 compared"), std::string::npos)
      << r->advice;
}

// A change is advised for a gain the comparison table shows, not for one within its rounding.
TEST(Jobs, AdviceWeighsOnlyGainsTheTableShows) {
  JobsComparison asked;
  asked.worst_slowdown = 1.0;
  asked.mean_step_together_s = 1.69;
  JobsComparison hair = asked;
  hair.worst_slowdown = 1.0 - 1e-4;      // 1.000x either way
  hair.mean_step_together_s = 1.689;     // 1.69 s either way
  EXPECT_FALSE(improves_on(hair, asked));
  JobsComparison worst = asked;
  worst.worst_slowdown = 0.998;          // 0.998x: shown
  EXPECT_TRUE(improves_on(worst, asked));
  JobsComparison step = asked;
  step.mean_step_together_s = 1.66;      // 1.8 % shorter at the same worst
  EXPECT_TRUE(improves_on(step, asked));
  EXPECT_FALSE(improves_on(asked, step));
}

TEST(Jobs, JobsSharingAnOversubscribedSpineAreSlowedWhereTheyMeet) {
  // 4:1 leaves, one spine: spread across the units, both jobs' DP rings cross the same
  // leaf uplinks, each getting half of them.
  const JobsSetup s = setup(cluster(4) + "jobs:\n" + job("a", 8, "spread") + job("b", 8, "spread"));
  auto r = simulate_jobs(s.spec, s.cat, s.plan, JobsOptions{});
  ASSERT_TRUE(r.ok()) << format_diagnostics(r.errors());
  for (const auto& j : r->run.jobs) {
    EXPECT_GT(j.slowdown, 1.05) << j.name;
    ASSERT_EQ(j.meets.size(), 1u);
    EXPECT_GT(j.meeting_links, 0);
    bool dp = false;
    for (const auto& c : j.comms)
      if (c.kind == "dp_allreduce") {
        dp = true;
        EXPECT_NEAR(c.factor, 2.0, 0.01);  // two equal rings on the same uplinks: half each
        EXPECT_GT(c.exposed_together_s, c.exposed_s);
      }
    EXPECT_TRUE(dp);
  }
  EXPECT_EQ(r->run.jobs[0].meets[0], "b");
  ASSERT_FALSE(r->run.meetings.empty());
  const LinkNames names(s.plan, s.cat, *r->fabric);
  const MeetingLink& hot = r->run.meetings.front();
  EXPECT_EQ(hot.jobs, (std::vector<int>{0, 1}));
  const std::string ends = names.from(hot.link).device + " " + names.to(hot.link).device;
  EXPECT_NE(ends.find("leaf"), std::string::npos) << ends;
  EXPECT_NE(ends.find("spine01"), std::string::npos) << ends;
  EXPECT_GT(hot.use.mean_util, 0.5);
  // The advice: packed keeps each job in its own units, where they do not meet.
  ASSERT_GE(r->best, 1);
  EXPECT_EQ(r->compared[static_cast<size_t>(r->best)].policy, Placement::kPacked);
  EXPECT_LT(r->compared[static_cast<size_t>(r->best)].worst_slowdown, 1 + 1e-9);
  EXPECT_NE(r->advice.find("packed placement"), std::string::npos) << r->advice;
}

TEST(Jobs, FailuresAreAvoidedOrNamed) {
  const std::string yaml = cluster(4) + "jobs:\n" + job("a", 8, "packed");
  const JobsSetup s = setup(yaml);
  JobsOptions o;
  o.compare = false;
  o.fail = {"node:node002"};
  auto r = simulate_jobs(s.spec, s.cat, s.plan, o);
  ASSERT_TRUE(r.ok()) << format_diagnostics(r.errors());
  EXPECT_EQ(r->run.jobs[0].nodes, (std::vector<int>{0, 2, 3, 4, 5, 6, 7, 8}));  // around it
  ASSERT_EQ(r->changes.size(), 1u);
  // The only spine down: the job's rings between its two units have no way left.
  o.fail = {"switch:spine01"};
  auto cut = simulate_jobs(s.spec, s.cat, s.plan, o);
  ASSERT_FALSE(cut.ok());
  EXPECT_NE(cut.errors()[0].message.find("job 'a': failed links cut a group apart"),
            std::string::npos)
      << cut.errors()[0].message;
  // An unknown part is the flag's error; a listed node that failed is the spec's.
  o.fail = {"switch:spine9"};
  auto bad = simulate_jobs(s.spec, s.cat, s.plan, o);
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.errors()[0].key, "--fail");
  const JobsSetup l = setup(cluster(4) + "jobs:\n" + job("a", 2, "[node001, node002]"));
  o.fail = {"node:node002"};
  bad = simulate_jobs(l.spec, l.cat, l.plan, o);
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.errors()[0].key, "jobs[0].placement[1]");
}

TEST(Jobs, TooFewNodesLeftNamesTheJob) {
  const JobsSetup s = setup(cluster() + "jobs:\n" + job("a", 8, "packed") + job("b", 8, "packed"));
  JobsOptions o;
  o.fail = {"node:node016"};
  auto r = simulate_jobs(s.spec, s.cat, s.plan, o);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.errors()[0].key, "jobs[1].nodes");
  EXPECT_NE(r.errors()[0].message.find("7 are left"), std::string::npos) << r.errors()[0].message;
}

TEST(Jobs, SweepVariesThePlacement) {
  const auto path = std::filesystem::temp_directory_path() / "gf_jobs_sweep.yaml";
  {
    std::ofstream out(path);
    out << cluster(4) << "jobs:\n" << job("a", 8, "packed") << job("b", 8, "packed");
  }
  const DesignResult packed = evaluate_design(path.string(), {{"placement", "packed"}}, 0);
  const DesignResult spread = evaluate_design(path.string(), {{"placement", "spread"}}, 1);
  const DesignResult bad = evaluate_design(path.string(), {{"placement", "pakced"}}, 2);
  std::filesystem::remove(path);
  ASSERT_TRUE(packed.ok) << packed.error;
  ASSERT_TRUE(spread.ok) << spread.error;
  EXPECT_TRUE(packed.has_jobs);
  EXPECT_EQ(packed.jobs_worst_slowdown, 1.0);
  EXPECT_GT(spread.jobs_worst_slowdown, 1.05);
  EXPECT_FALSE(bad.ok);
  EXPECT_NE(bad.error.find("unknown placement"), std::string::npos) << bad.error;
  EXPECT_GT(spread.jobs_mean_step_s, packed.jobs_mean_step_s);
  // Without a workload the designs' time is the jobs' mean step: packed is the best.
  const SweepResult sr =
      summarise_sweep({{"placement", {"packed", "spread"}}}, {spread, packed}, Goal::kTime, 0);
  EXPECT_EQ(sr.best, 0);
  const DesignResult back = design_from_json(design_to_json(spread));
  EXPECT_EQ(back.jobs_worst_slowdown, spread.jobs_worst_slowdown);
  EXPECT_EQ(back.jobs_worst, spread.jobs_worst);
  EXPECT_EQ(back.jobs_mean_step_s, spread.jobs_mean_step_s);
}

namespace {

std::string fixture_trace(const std::string& name = "kineto-torch2.5-tp8-dp2-rank0.json") {
  return std::string(GPUFABRIC_SOURCE_DIR) + "/tests/data/replay/" + name;
}

// A job replayed from the fixtures' 16-rank trace (tp=8 in a node, dp=2 across two nodes).
std::string trace_job(const std::string& name, const std::string& placement,
                      const std::string& extra = "") {
  return fmt::format("  - name: {}\n    nodes: 2\n    placement: {}\n    trace: {}\n{}", name,
                     placement, fixture_trace(), extra);
}

struct TraceJobs {
  JobsSetup s;
  std::vector<std::vector<TracedRank>> traces;
  Result<JobsResult> r = Diagnostic::error("not run");
};

TraceJobs run_trace_jobs(const std::string& yaml, bool compare = false) {
  TraceJobs t{setup(yaml), {}};
  auto traces = read_job_traces(t.s.spec);
  EXPECT_TRUE(traces) << format_diagnostics(traces.errors());
  if (traces) t.traces = *traces;
  JobsOptions o;
  o.compare = compare;
  o.traces = &t.traces;
  t.r = simulate_jobs(t.s.spec, t.s.cat, t.s.plan, o);
  return t;
}

}  // namespace

TEST(TraceJobs, AloneATraceJobIsTheReplayOfItsTraceOnItsPlacement) {
  // Across two units of a 4:1 fabric, beside nobody.
  const TraceJobs t =
      run_trace_jobs(cluster(4) + "jobs:\n" + trace_job("rec", "[node002, node006]"));
  ASSERT_TRUE(t.r) << format_diagnostics(t.r.errors());
  const JobResult& j = t.r->run.jobs[0];
  ASSERT_TRUE(j.replay.has_value());
  EXPECT_EQ(j.nodes, (std::vector<int>{1, 5}));
  EXPECT_EQ(j.gpus, 16);
  // replay_step on the same GPUs (node002's 8..15, node006's 40..47), the job's plan.
  Plan pj = t.s.plan;
  pj.gpus = 16;
  pj.nodes = 2;
  const Fabric fab = Fabric::build(t.s.plan, t.s.cat);
  ReplayOptions o;
  for (int r = 0; r < 16; ++r) o.gpu_of_rank.push_back(r < 8 ? 8 + r : 40 + r - 8);
  auto rep = replay_step(t.traces[0], pj, fab, o);
  ASSERT_TRUE(rep) << format_diagnostics(rep.errors());
  EXPECT_EQ(j.step_alone_s, rep->predicted.step_s);
  EXPECT_EQ(j.replay->predicted.exposed_comm_s, rep->predicted.exposed_comm_s);
  EXPECT_EQ(j.slowdown, 1.0);
  EXPECT_EQ(j.step_together_s, j.step_alone_s);
  // Its communication: TP on NVLink, the DP all-reduce on the network; each simulated group.
  ASSERT_EQ(j.comms.size(), 3u);
  int network = 0;
  for (const auto& c : j.comms) {
    network += c.network;
    EXPECT_EQ(c.network, c.kind.find("all_reduce") != std::string::npos) << c.kind;
  }
  EXPECT_EQ(network, 1);
  EXPECT_EQ(j.traces, (std::vector<std::string>{fixture_trace()}));
}

TEST(TraceJobs, BesideAWorkloadJobOnAnOversubscribedSpineBothSlowAsTheFluidModelImplies) {
  // 4:1 leaves, one spine: the trace job's DP pairs (node001-node005) and the workload job's DP
  // ring (node002-node006) cross the same leaf uplinks on every rail. The recorded job reduces
  // bf16 gradients (its calls' dtype "BFloat16"); the workload job alike.
  std::string w = job("w", 2, "[node002, node006]");
  w.insert(w.find("      global_batch"), "      grad_reduce: bf16\n");
  const TraceJobs t =
      run_trace_jobs(cluster(4) + "jobs:\n" + trace_job("rec", "[node001, node005]") + w);
  ASSERT_TRUE(t.r) << format_diagnostics(t.r.errors());
  ASSERT_EQ(t.r->run.jobs.size(), 2u);
  for (const auto& j : t.r->run.jobs) {
    ASSERT_EQ(j.meets.size(), 1u) << j.name;
    EXPECT_EQ(j.meets[0], j.name == "rec" ? "w" : "rec");
    double added = 0;
    bool slowed = false;
    for (const auto& c : j.comms) {
      // Each communication's factor is its flows' completion together over alone, at least 1,
      // and NVLink traffic is nobody else's.
      EXPECT_NEAR(c.factor, std::max(1.0, c.fluid_together_s / c.fluid_alone_s), 1e-12)
          << j.name << c.kind;
      if (!c.network) {
        EXPECT_EQ(c.factor, 1.0) << j.name << " " << c.kind;
      }
      slowed = slowed || (c.network && c.factor > 1.2);
      added += c.exposed_together_s - c.exposed_s;
      EXPECT_GE(c.exposed_together_s, c.exposed_s);
    }
    EXPECT_TRUE(slowed) << j.name;
    EXPECT_NEAR(j.step_together_s, j.step_alone_s + added, 1e-12) << j.name;
  }
  EXPECT_GT(t.r->run.jobs[0].slowdown, 1.0);
  ASSERT_FALSE(t.r->run.meetings.empty());
  EXPECT_EQ(t.r->run.meetings.front().jobs, (std::vector<int>{0, 1}));
  // Packed, the two jobs keep to their own leaf ports and do not meet.
  const TraceJobs packed =
      run_trace_jobs(cluster(4) + "jobs:\n" + trace_job("rec", "[node001, node002]") +
                     job("w", 2, "[node003, node004]"));
  ASSERT_TRUE(packed.r) << format_diagnostics(packed.r.errors());
  for (const auto& j : packed.r->run.jobs) EXPECT_EQ(j.slowdown, 1.0) << j.name;
}

TEST(TraceJobs, TwoCopiesOfATraceHalveTheirSharedUplinks) {
  // The same recorded job twice across the 4:1 spine: two equal DP rings on the same uplinks,
  // each getting half of them: the fluid model's factor 2.
  const TraceJobs t = run_trace_jobs(cluster(4) + "jobs:\n" + trace_job("a", "[node001, node005]") +
                                     trace_job("b", "[node002, node006]"));
  ASSERT_TRUE(t.r) << format_diagnostics(t.r.errors());
  for (const auto& j : t.r->run.jobs) {
    bool dp = false;
    for (const auto& c : j.comms)
      if (c.network) {
        dp = true;
        EXPECT_NEAR(c.factor, 2.0, 0.01) << j.name << " " << c.kind;
      }
    EXPECT_TRUE(dp);
  }
  EXPECT_NEAR(t.r->run.jobs[0].slowdown, t.r->run.jobs[1].slowdown, 1e-9);
}

TEST(TraceJobs, PerRankFilesAreOneJob) {
  // The NCCL log of ranks 0 and 8 split into one file per process, as NCCL_DEBUG_FILE=%h.%p
  // writes them: the same job as the merged log, its two traced ranks synchronised.
  std::ifstream in(fixture_trace("nccl-2.29.7-coll.log"));
  std::string line, version;
  std::map<std::string, std::string> per_host;
  while (std::getline(in, line)) {
    if (line.rfind("NCCL version", 0) == 0)
      version = line + "\n";
    else
      per_host[line.substr(0, line.find(':'))] += line + "\n";
  }
  ASSERT_EQ(per_host.size(), 2u);
  std::vector<std::string> files;
  for (const auto& [host, text] : per_host) {
    files.push_back((std::filesystem::temp_directory_path() / ("gf_" + host + ".log")).string());
    std::ofstream(files.back()) << version << text;
  }
  const std::string list = fmt::format("[{}, {}]", files[0], files[1]);
  const TraceJobs split = run_trace_jobs(
      cluster(4) + "jobs:\n  - {name: s, nodes: 2, placement: spread, trace: " + list + "}\n");
  const TraceJobs merged = run_trace_jobs(cluster(4) +
                                          "jobs:\n  - {name: m, nodes: 2, placement: "
                                          "spread, trace: " +
                                          fixture_trace("nccl-2.29.7-coll.log") + "}\n");
  for (const auto& f : files) std::filesystem::remove(f);
  ASSERT_TRUE(split.r) << format_diagnostics(split.r.errors());
  ASSERT_TRUE(merged.r) << format_diagnostics(merged.r.errors());
  const JobResult& a = split.r->run.jobs[0];
  const JobResult& b = merged.r->run.jobs[0];
  EXPECT_EQ(a.replay->traced_ranks, 2);
  EXPECT_EQ(a.traces.size(), 2u);
  EXPECT_FALSE(a.replay->timed);
  EXPECT_GT(a.step_alone_s, 0);
  EXPECT_EQ(a.step_alone_s, b.step_alone_s);
  EXPECT_EQ(a.comms.size(), b.comms.size());
}

TEST(TraceJobs, ATraceThatDoesNotFitTheJobNamesItsKey) {
  // 16 traced ranks on one node of 8 GPUs: the trace's groups exceed the job.
  TraceJobs t =
      run_trace_jobs(cluster() + "jobs:\n" +
                     "  - name: small\n    nodes: 1\n    trace: " + fixture_trace() + "\n");
  ASSERT_FALSE(t.r);
  EXPECT_EQ(t.r.errors()[0].key, "jobs[0].trace");
  EXPECT_EQ(t.r.errors()[0].line, 7);
  EXPECT_NE(t.r.errors()[0].message.find("16 ranks but the job has 8 GPUs"), std::string::npos)
      << t.r.errors()[0].message;
  // On more GPUs than it ran on: the job's size is the trace's.
  t = run_trace_jobs(cluster() + "jobs:\n" +
                     "  - name: big\n    gpus: 32\n    trace: " + fixture_trace() + "\n");
  ASSERT_FALSE(t.r);
  EXPECT_EQ(t.r.errors()[0].key, "jobs[0].gpus");
  EXPECT_NE(t.r.errors()[0].hint.find("gpus: 16"), std::string::npos) << t.r.errors()[0].hint;
  // A step the trace does not mark names the job's step key.
  t = run_trace_jobs(cluster() + "jobs:\n" +
                     trace_job("s", "packed", "    step: ProfilerStep#9\n"));
  ASSERT_FALSE(t.r);
  EXPECT_EQ(t.r.errors()[0].key, "jobs[0].step");
  // A missing file names the spec's line and key.
  auto spec = parse_spec(cluster() + "jobs:\n  - {name: m, nodes: 2, trace: [" + fixture_trace() +
                             ", /nonexistent/rank1.json]}\n",
                         "t.yaml");
  ASSERT_TRUE(spec) << format_diagnostics(spec.errors());
  auto read = read_job_traces(*spec);
  ASSERT_FALSE(read);
  EXPECT_EQ(read.errors()[0].key, "jobs[0].trace[1]");
  EXPECT_EQ(read.errors()[0].file, "t.yaml");
  EXPECT_NE(read.errors()[0].message.find("/nonexistent/rank1.json"), std::string::npos);
  // Traces not read: refused, not skipped.
  const JobsSetup s = setup(cluster() + "jobs:\n" + trace_job("x", "packed"));
  auto none = simulate_jobs(s.spec, s.cat, s.plan, JobsOptions{});
  ASSERT_FALSE(none);
  EXPECT_EQ(none.errors()[0].key, "jobs[0].trace");
}

}  // namespace gf
