#include "sim/replay.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <sstream>

#include "sim/collective.h"
#include "sim/whatif.h"
#include "spec/spec.h"
#include "verify/trace_readers.h"

namespace gf {
namespace {

struct TwoNodes {
  LoadedSpec s;
  Plan plan;
  Fabric fabric;
};

TwoNodes two_nodes() {
  auto s = load_spec(std::string(GPUFABRIC_SOURCE_DIR) + "/tests/data/replay/two-nodes.yaml");
  EXPECT_TRUE(s) << format_diagnostics(s.errors());
  auto p = make_plan(s->spec, s->catalog);
  EXPECT_TRUE(p) << format_diagnostics(p.errors());
  Fabric f = Fabric::build(*p, s->catalog);
  return {*s, *p, std::move(f)};
}

TracedRank fixture(const std::string& name) {
  std::ifstream in(std::string(GPUFABRIC_SOURCE_DIR) + "/tests/data/replay/" + name);
  auto r = read_kineto_trace(in, name);
  EXPECT_TRUE(r) << format_diagnostics(r.errors());
  return *r;
}

std::vector<int> iota(int n, int from = 0, int stride = 1) {
  std::vector<int> v;
  for (int i = 0; i < n; ++i) v.push_back(from + i * stride);
  return v;
}

/// A rank whose one group is `size` ranks `ranks`, with kernels added by the test.
TracedRank rank_with_group(int size, std::vector<int> ranks, int rank = 0) {
  TracedRank r;
  r.file = "r.json";
  r.rank = rank;
  r.groups.push_back({"g", "", size, std::move(ranks)});
  return r;
}

void add_kernel(TracedRank& r, double start, double dur, int stream, int collective = -1) {
  r.kernels.push_back({start, dur, stream, collective});
}

int add_call(TracedRank& r, const std::string& name, double bytes) {
  r.collectives.push_back({name, collective_op(name), bytes, 0});
  return static_cast<int>(r.collectives.size()) - 1;
}

TEST(Replay, OneAllReduceIsRecordedComputePlusTheSimulatedAllReduce) {
  const TwoNodes t = two_nodes();
  const TracedRank r = fixture("kineto-one-allreduce.json");
  auto out = replay_step({r}, t.plan, t.fabric, {});
  ASSERT_TRUE(out) << format_diagnostics(out.errors());
  // By hand: 1000 us of GEMM, the all-reduce 2 us after it ends, the next GEMM 3 us after the
  // all-reduce ends and 500 us long; the all-reduce of 512 MiB on all 16 GPUs of both nodes as
  // the collective simulator runs it.
  auto ar = GroupCollective::build(t.fabric, t.plan, Op::kAllReduce, {iota(16)});
  ASSERT_TRUE(ar);
  const double sim_us = ar->seconds(268435456.0 * 2) * 1e6;
  EXPECT_NEAR(out->predicted.step_s * 1e6, 1000 + 2 + sim_us + 3 + 500, 1e-6);
  EXPECT_NEAR(out->recorded.step_s * 1e6, 1000 + 2 + 800 + 3 + 500, 1e-6);
  EXPECT_NEAR(out->predicted.compute_s * 1e6, 1500, 1e-6);
  EXPECT_NEAR(out->predicted.exposed_comm_s * 1e6, sim_us, 1e-6);
  EXPECT_EQ(out->world, 16);
  EXPECT_EQ(out->step, "ProfilerStep#1");
  ASSERT_EQ(out->breakdown.size(), 1u);
  EXPECT_EQ(out->breakdown[0].op, "all_reduce");
  EXPECT_NEAR(out->breakdown[0].simulated_s * 1e6, sim_us, 1e-6);
  EXPECT_GT(out->breakdown[0].busbw_gbs, 0);
}

TEST(Replay, RecordedDurationsReproduceTheRecordedStep) {
  // Three streams with waits between them; the collectives are gathers, which the simulator
  // does not model, so they keep their recorded times: the graph must give back the trace.
  const TwoNodes t = two_nodes();
  TracedRank r = rank_with_group(16, iota(16));
  double ts = 100;
  for (int i = 0; i < 50; ++i) {
    add_kernel(r, ts, 40 + i % 7, 7);
    const int c = add_call(r, "gather", 1e6);
    add_kernel(r, ts + 45 + i % 7, 30, 20, c);  // woken by the compute kernel
    add_kernel(r, ts + 20, 15, 24);             // a copy beside it
    ts += 45 + i % 7 + 30 + 4;                  // the next compute waits for the gather
  }
  auto out = replay_step({r}, t.plan, t.fabric, {});
  ASSERT_TRUE(out) << format_diagnostics(out.errors());
  EXPECT_NEAR(out->predicted.step_s, out->recorded.step_s, 1e-12);
  EXPECT_NEAR(out->predicted.exposed_comm_s, out->recorded.exposed_comm_s, 1e-12);
  ASSERT_FALSE(out->notes.empty());
  EXPECT_NE(out->notes[0].find("gather"), std::string::npos);
  ASSERT_EQ(out->breakdown.size(), 1u);
  EXPECT_FALSE(out->breakdown[0].simulated);
}

TEST(Replay, OverlapAsRecorded) {
  // Compute [0, 9000) on one stream, a gather [1000, 12000) beside it: 3000 us exposed.
  const TwoNodes t = two_nodes();
  TracedRank r = rank_with_group(16, iota(16));
  add_kernel(r, 0, 9000, 7);
  add_kernel(r, 1000, 11000, 24, add_call(r, "gather", 1e9));
  auto out = replay_step({r}, t.plan, t.fabric, {});
  ASSERT_TRUE(out);
  EXPECT_NEAR(out->recorded.exposed_comm_s * 1e6, 3000, 1e-6);
  EXPECT_NEAR(out->recorded.compute_s * 1e6, 9000, 1e-6);
  EXPECT_NEAR(out->recorded.step_s * 1e6, 12000, 1e-6);
}

TEST(Replay, ACollectiveOfSeveralTracedRanksWaitsForTheLastOfThem) {
  const TwoNodes t = two_nodes();
  auto ar = GroupCollective::build(t.fabric, t.plan, Op::kAllReduce, {iota(16)});
  ASSERT_TRUE(ar);
  const double sim_us = ar->seconds(1e9) * 1e6;
  std::vector<TracedRank> ranks;
  for (int rank : {0, 8}) {
    TracedRank r = rank_with_group(16, iota(16), rank);
    const double compute = rank == 0 ? 1000 : 1500;  // rank 8 is slower
    add_kernel(r, 0, compute, 7);
    add_kernel(r, compute + 2, 700, 20, add_call(r, "allreduce", 1e9));
    add_kernel(r, compute + 705, 100, 7);
    ranks.push_back(r);
  }
  auto out = replay_step(ranks, t.plan, t.fabric, {});
  ASSERT_TRUE(out) << format_diagnostics(out.errors());
  EXPECT_EQ(out->traced_ranks, 2);
  // Both ranks leave the all-reduce together, after the slower one's compute.
  EXPECT_NEAR(out->predicted.step_s * 1e6, 1500 + 2 + sim_us + 3 + 100, 1e-6);

  // Traces whose calls do not pair up: rank 8 has one more all-reduce.
  ranks[1].kernels.push_back({3000, 10, 20, add_call(ranks[1], "allreduce", 1e9)});
  auto bad = replay_step(ranks, t.plan, t.fabric, {});
  ASSERT_FALSE(bad);
  EXPECT_NE(bad.errors()[0].message.find("do not match"), std::string::npos);
}

TEST(Replay, GroupsWithoutRanksTakeTheLayout) {
  const TwoNodes t = two_nodes();
  TracedRank r;
  r.file = "old.json";
  r.groups = {{"size-8", "", 8, {}}, {"size-2", "", 2, {}}};
  r.collectives.push_back({"allreduce", Op::kAllReduce, 1e9, 1});
  r.collectives.push_back({"_allgather_base", Op::kAllGather, 1e7, 0});
  r.collectives.push_back({"_reduce_scatter_base", Op::kReduceScatter, 1e7, 0});
  add_kernel(r, 0, 30, 20, 1);
  add_kernel(r, 32, 100, 7);
  add_kernel(r, 134, 30, 20, 2);
  add_kernel(r, 166, 500, 24, 0);
  ReplayOptions o;
  o.layout = {8, 1, 2};
  auto out = replay_step({r}, t.plan, t.fabric, o);
  ASSERT_TRUE(out) << format_diagnostics(out.errors());
  EXPECT_EQ(out->world, 16);
  ASSERT_EQ(out->groups.size(), 2u);
  EXPECT_EQ(out->groups[1].role, "dp");
  EXPECT_EQ(out->groups[1].stride, 8);
  EXPECT_EQ(out->groups[1].siblings, 8);
  // The data-parallel all-reduce crosses the network: one NIC per pair of GPUs.
  auto dp = GroupCollective::build(
      t.fabric, t.plan, Op::kAllReduce,
      {{0, 8}, {1, 9}, {2, 10}, {3, 11}, {4, 12}, {5, 13}, {6, 14}, {7, 15}});
  ASSERT_TRUE(dp);
  bool seen = false;
  for (const auto& b : out->breakdown)
    if (b.op == "all_reduce") {
      EXPECT_NEAR(b.simulated_s, dp->seconds(1e9), 1e-12);
      seen = true;
    }
  EXPECT_TRUE(seen);

  // Inferred without the layout: the group with most calls is innermost, dp strided by it.
  auto inferred = replay_step({r}, t.plan, t.fabric, {});
  ASSERT_TRUE(inferred);
  EXPECT_EQ(inferred->world, 16);
  EXPECT_EQ(inferred->groups[1].stride, 8);

  o.layout = {3, 1, 2};  // 6 ranks: but the traced groups make 16
  auto bad = replay_step({r}, t.plan, t.fabric, o);
  EXPECT_FALSE(bad);
  // A layout with a dimension left out must still divide the job (its largest group here, 8
  // ranks, the traces naming no world): tp 3 x dp 2 leaves no whole pp (it was taken as 1, 6
  // ranks, and the groups laid out on them), nor does tp 3 alone.
  for (ReplayLayout partial : {ReplayLayout{3, 0, 2}, ReplayLayout{3, 0, 0}}) {
    o.layout = partial;
    auto odd = replay_step({r}, t.plan, t.fabric, o);
    ASSERT_FALSE(odd) << partial.tp << " " << partial.dp;
    EXPECT_EQ(odd.errors()[0].key, "--tp");
    EXPECT_NE(odd.errors()[0].message.find("does not divide the traces' job of 8 ranks"),
              std::string::npos)
        << odd.errors()[0].message;
  }
  o.layout = {8, 0, 2};  // pp left out, filled: 16 ranks
  auto no_pp = replay_step({r}, t.plan, t.fabric, o);
  ASSERT_TRUE(no_pp) << format_diagnostics(no_pp.errors());
  EXPECT_EQ(no_pp->world, 16);
}

// Four nodes of 4 GPUs in two scalable units of two (an InfiniBand Clos with adaptive routing, so
// that no hash collision blurs the ratio): the fixtures' 16 ranks span both units, and
// re-planned at 2:1 each leaf keeps one uplink for its two nodes.
namespace {
const char* const kFourByFour =
    "name: four-by-four\n"
    "cluster: {gpu: h100-sxm, nodes: 4, gpus_per_node: 4, nic: cx7-400g, nics_per_node: 4}\n"
    "fabric: {technology: infiniband, topology: clos2, scalable_unit: 2, switch: qm9700, "
    "load_balancing: adaptive}\n";

struct Planned {
  Spec spec;
  Catalog cat;
  Plan plan;
};

Planned four_by_four() {
  Planned p{*parse_spec(kFourByFour, "t.yaml"), *builtin_catalog(), {}};
  EXPECT_TRUE(validate_spec(p.spec, p.cat).empty());
  auto plan = make_plan(p.spec, p.cat);
  EXPECT_TRUE(plan) << format_diagnostics(plan.errors());
  p.plan = *plan;
  return p;
}
}  // namespace

TEST(ReplayAlternatives, TwoToOneSlowsADataParallelPairAcrossTheSpine) {
  const Planned p = four_by_four();
  ASSERT_EQ(p.plan.topo.oversubscription, 1.0);
  // tp=8 over two nodes of a unit, dp=2 pairs rank r with r+8: both nodes of a unit send up at
  // once, on every rail.
  const TracedRank r = fixture("kineto-torch2.5-tp8-dp2-rank0.json");
  const Fabric fab = Fabric::build(p.plan, p.cat);
  auto base = replay_step({r}, p.plan, fab, {});
  auto same = replay_at_oversubscription({r}, p.spec, p.cat, p.plan, 1, {});
  auto two = replay_at_oversubscription({r}, p.spec, p.cat, p.plan, 2, {});
  ASSERT_TRUE(base && same && two) << format_diagnostics(two.errors());
  EXPECT_EQ(same->result.predicted.step_s, base->predicted.step_s);  // 1:1 is this fabric
  EXPECT_EQ(two->built, 2.0);
  EXPECT_EQ(two->label, "2:1 oversubscription");
  EXPECT_NE(two->fabric.find("clos2"), std::string::npos) << two->fabric;  // topology kept
  EXPECT_GT(two->result.predicted.step_s, base->predicted.step_s * 1.05);
  EXPECT_GT(two->result.predicted.exposed_comm_s, base->predicted.exposed_comm_s);
  // Half the uplinks for the DP all-reduce's two flows a rail: its time at least 1.5x.
  double dp1 = 0, dp2 = 0;
  for (const auto& b : base->breakdown)
    if (b.op == "all_reduce") dp1 = b.simulated_s;
  for (const auto& b : two->result.breakdown)
    if (b.op == "all_reduce") dp2 = b.simulated_s;
  EXPECT_GT(dp2, 1.5 * dp1) << dp1 << " " << dp2;
  EXPECT_EQ(two->result.predicted.compute_s, base->predicted.compute_s);
}

TEST(ReplayAlternatives, AnNvlinkOnlyStepIsTheSameAtTwoToOne) {
  const Planned p = four_by_four();
  // One node's four GPUs: a TP group on NVLink, never on a leaf.
  TracedRank r = rank_with_group(4, iota(4));
  add_kernel(r, 0, 300, 7);
  add_kernel(r, 310, 200, 20, add_call(r, "allreduce", 256e6));
  add_kernel(r, 520, 300, 7);
  add_kernel(r, 830, 150, 20, add_call(r, "_allgather_base", 64e6));
  const Fabric fab = Fabric::build(p.plan, p.cat);
  auto base = replay_step({r}, p.plan, fab, {});
  auto two = replay_at_oversubscription({r}, p.spec, p.cat, p.plan, 2, {});
  ASSERT_TRUE(base && two) << format_diagnostics(two.errors());
  EXPECT_EQ(two->built, 2.0);
  EXPECT_GT(base->predicted.exposed_comm_s, 0);
  EXPECT_EQ(two->result.predicted.step_s, base->predicted.step_s);
  EXPECT_EQ(two->result.predicted.exposed_comm_s, base->predicted.exposed_comm_s);
}

TEST(ReplayAlternatives, ARankMapPlacesTheGroupsOnThoseGpus) {
  const Planned p = four_by_four();
  const TracedRank r = fixture("kineto-one-allreduce.json");
  const Fabric fab = Fabric::build(p.plan, p.cat);
  // Ranks in reverse: the same rings on the same fabric, so the same time; too few GPUs for the
  // world is refused with the job's size.
  ReplayOptions o;
  for (int g = 15; g >= 0; --g) o.gpu_of_rank.push_back(g);
  auto rev = replay_step({r}, p.plan, fab, o);
  auto base = replay_step({r}, p.plan, fab, {});
  ASSERT_TRUE(rev && base) << format_diagnostics(rev.errors());
  EXPECT_NEAR(rev->predicted.step_s, base->predicted.step_s, 1e-9);
  ASSERT_FALSE(rev->breakdown.empty());
  ASSERT_EQ(rev->breakdown[0].gpu_groups.size(), 1u);
  EXPECT_EQ(rev->breakdown[0].gpu_groups[0].front(), 15);
  o.gpu_of_rank.resize(8);
  auto small = replay_step({r}, p.plan, fab, o);
  ASSERT_FALSE(small);
  EXPECT_NE(small.errors()[0].message.find("16 ranks but the job has 8 GPUs"), std::string::npos)
      << small.errors()[0].message;
}

TEST(Replay, AJobLargerThanTheFabricIsRefused) {
  const TwoNodes t = two_nodes();
  TracedRank r = rank_with_group(64, iota(64));
  add_kernel(r, 0, 10, 7, add_call(r, "allreduce", 1e6));
  auto out = replay_step({r}, t.plan, t.fabric, {});
  ASSERT_FALSE(out);
  EXPECT_NE(out.errors()[0].message.find("64 ranks"), std::string::npos);
}

TEST(Replay, FasterNicsShortenTheExposedAllReduce) {
  const TwoNodes t = two_nodes();
  const TracedRank r = fixture("kineto-one-allreduce.json");
  WhatIfOptions w;
  w.nic = "800G";
  auto alt = scenario_fabric(t.s.spec, t.s.catalog, t.plan, w);
  ASSERT_TRUE(alt) << format_diagnostics(alt.errors());
  auto base = replay_step({r}, t.plan, t.fabric, {});
  auto fast = replay_step({r}, alt->plan, alt->fabric, {});
  ASSERT_TRUE(base && fast);
  EXPECT_LT(fast->predicted.exposed_comm_s, base->predicted.exposed_comm_s);
  EXPECT_NEAR(fast->predicted.compute_s, base->predicted.compute_s, 1e-12);
}

TEST(Replay, LinksHoldTheStepsBytes) {
  const TwoNodes t = two_nodes();
  const TracedRank r = fixture("kineto-one-allreduce.json");
  ReplayOptions o;
  o.links = true;
  auto out = replay_step({r}, t.plan, t.fabric, o);
  ASSERT_TRUE(out);
  ASSERT_TRUE(out->load);
  // A ring all-reduce of S bytes on 16 GPUs sends 2(n-1)/n S out of every GPU, over NVLink or
  // the network: the links carry at least 16 x that.
  const double s = 268435456.0 * 2;
  EXPECT_GE(out->load->total_bytes(), 16 * 2.0 * 15 / 16 * s * 0.999);
}

TEST(Replay, TheStepFlagPicksAWindow) {
  const TwoNodes t = two_nodes();
  const TracedRank r = fixture("kineto-torch2.5-tp8-dp2-rank0.json");
  ReplayOptions o;
  o.step = "ProfilerStep#1";
  auto first = replay_step({r}, t.plan, t.fabric, o);
  ASSERT_TRUE(first) << format_diagnostics(first.errors());
  EXPECT_EQ(first->step, "ProfilerStep#1");
  EXPECT_EQ(first->kernels, 19);
  auto last = replay_step({r}, t.plan, t.fabric, {});
  ASSERT_TRUE(last);
  EXPECT_EQ(last->step, "ProfilerStep#2");
  // The two steps are alike: the same times.
  EXPECT_NEAR(first->predicted.step_s, last->predicted.step_s, 1e-9);
  o.step = "ProfilerStep#3";
  auto none = replay_step({r}, t.plan, t.fabric, o);
  ASSERT_FALSE(none);
  EXPECT_EQ(none.errors()[0].key, "--step");
  // The hint lists the steps it could take (it suggested ProfilerStep#1 for #9).
  EXPECT_EQ(none.errors()[0].hint,
            "its steps with GPU kernels: ProfilerStep#1, ProfilerStep#2 (a number N is "
            "ProfilerStep#N)");
  // A bare number is the step of that number.
  o.step = "1";
  auto number = replay_step({r}, t.plan, t.fabric, o);
  ASSERT_TRUE(number) << format_diagnostics(number.errors());
  EXPECT_EQ(number->step, "ProfilerStep#1");
  EXPECT_EQ(number->kernels, 19);
}

TEST(Replay, NcclLogsOfTwoProcessesSynchroniseOnTheirWorldCommunicator) {
  const TwoNodes t = two_nodes();
  std::ifstream in(std::string(GPUFABRIC_SOURCE_DIR) + "/tests/data/replay/nccl-2.29.7-coll.log");
  auto logs = read_nccl_coll_log(in, "n.log");
  ASSERT_TRUE(logs) << format_diagnostics(logs.errors());
  auto out = replay_step(*logs, t.plan, t.fabric, {});
  ASSERT_TRUE(out) << format_diagnostics(out.errors());
  EXPECT_FALSE(out->timed);
  EXPECT_EQ(out->world, 16);
  EXPECT_EQ(out->traced_ranks, 2);
  // The world all-reduce runs on its own stream beside the TP calls: the step is the longer.
  auto ar = GroupCollective::build(t.fabric, t.plan, Op::kAllReduce, {iota(16)});
  ASSERT_TRUE(ar);
  EXPECT_GE(out->predicted.step_s, ar->seconds(268435456.0 * 2) - 1e-12);
  for (const auto& n : out->notes) EXPECT_EQ(n.find("cudaDev"), std::string::npos) << n;
  // Exposed at once on two streams is exposed once: the collectives' shares add up to the step's
  // exposed time (each counting its own whole call gave 4.39 ms against 2.86).
  double shares = 0;
  for (const auto& c : out->breakdown) shares += c.predicted_exposed_s;
  EXPECT_NEAR(shares, out->predicted.exposed_comm_s, 1e-9);
  EXPECT_GT(out->predicted.exposed_comm_s, 0);

  // Rank 8 on cudaDev 3: the log and the placement disagree, and the replay says so.
  auto moved = *logs;
  moved[1].cuda_dev = 3;
  auto noted = replay_step(moved, t.plan, t.fabric, {});
  ASSERT_TRUE(noted);
  bool said = false;
  for (const auto& n : noted->notes) said = said || n.find("cudaDev 3") != std::string::npos;
  EXPECT_TRUE(said);
}

// The ranks' calls on one communicator pair up in order: rank 8's world call recorded as another
// size or another operation is an error naming both ranks' lines, not rank 0's call replayed.
TEST(Replay, NcclLogsWhoseRanksDisagreeOnACallAreRefused) {
  const TwoNodes t = two_nodes();
  std::ifstream in(std::string(GPUFABRIC_SOURCE_DIR) + "/tests/data/replay/nccl-2.29.7-coll.log");
  std::stringstream ss;
  ss << in.rdbuf();
  const std::string log = ss.str();
  const std::string rank8 = "node002:61234:61234 [0] NCCL INFO AllReduce: opCount 0";
  const size_t at = log.find(rank8);
  ASSERT_NE(at, std::string::npos);
  const size_t line = static_cast<size_t>(std::count(log.begin(), log.begin() + at, '\n')) + 1;
  for (const auto& [from, to] : std::vector<std::pair<std::string, std::string>>{
           {"count 268435456", "count 134217728"}, {"AllReduce:", "Broadcast:"}}) {
    std::string bad = log;
    const size_t x = bad.find(from, at);
    ASSERT_NE(x, std::string::npos);
    bad.replace(x, from.size(), to);
    std::istringstream is(bad);
    auto logs = read_nccl_coll_log(is, "n.log");
    ASSERT_TRUE(logs) << format_diagnostics(logs.errors());
    auto out = replay_step(*logs, t.plan, t.fabric, {});
    ASSERT_FALSE(out) << to;
    const Diagnostic& d = out.errors()[0];
    EXPECT_EQ(d.file, "n.log");
    EXPECT_EQ(d.line, static_cast<int>(line)) << d.message;
    EXPECT_NE(d.message.find("does not pair up across the ranks: rank 0 records all_reduce"),
              std::string::npos)
        << d.message;
    EXPECT_NE(d.message.find("(n.log:" + std::to_string(line) + ")"), std::string::npos)
        << d.message;
  }
}

// Profiler traces pair up too: a call without a recorded size (0: kept as recorded) is no
// mismatch; another size is, at the trace's events.
TEST(Replay, ProfilerTracesPairUpTheirCallsWhereSizesAreKnown) {
  const TwoNodes t = two_nodes();
  const TracedRank r0 = fixture("kineto-one-allreduce.json");
  ASSERT_FALSE(r0.collectives.empty());
  TracedRank r8 = r0;
  r8.rank = 8;
  r8.file = "rank8.json";
  ASSERT_TRUE(replay_step({r0, r8}, t.plan, t.fabric, {})) << "the same call on both ranks";
  for (auto& c : r8.collectives) c.bytes = 0;
  auto unsized = replay_step({r0, r8}, t.plan, t.fabric, {});
  EXPECT_TRUE(unsized) << format_diagnostics(unsized.errors());
  for (auto& c : r8.collectives) c.bytes = r0.collectives[0].bytes / 2;
  auto halved = replay_step({r0, r8}, t.plan, t.fabric, {});
  ASSERT_FALSE(halved);
  EXPECT_EQ(halved.errors()[0].file, "rank8.json");
  EXPECT_EQ(halved.errors()[0].key, "traceEvents");
  EXPECT_NE(halved.errors()[0].message.find("does not pair up"), std::string::npos);
}

TEST(Replay, Names) {
  EXPECT_EQ(collective_op("_allgather_base"), Op::kAllGather);
  EXPECT_EQ(collective_op("allgather_into_tensor_coalesced"), Op::kAllGather);
  EXPECT_EQ(collective_op("reduce_scatter_tensor_coalesced"), Op::kReduceScatter);
  EXPECT_EQ(collective_op("_reduce_scatter_base"), Op::kReduceScatter);
  EXPECT_EQ(collective_op("allreduce_coalesced"), Op::kAllReduce);
  EXPECT_EQ(collective_op("all_to_allv"), Op::kAlltoall);
  EXPECT_EQ(collective_op("AlltoAll"), Op::kAlltoall);
  EXPECT_EQ(collective_op("_broadcast_oop"), Op::kBroadcast);
  EXPECT_EQ(collective_op("Send"), Op::kSendRecv);
  EXPECT_EQ(collective_op("ncclDevKernel_ReduceScatter_Sum_bf16_RING_LL(x)"), Op::kReduceScatter);
  EXPECT_EQ(collective_op("ncclKernel_AllReduce_RING_LL_Sum_bfloat16(ncclDevComm*)"),
            Op::kAllReduce);
  EXPECT_EQ(collective_op("gather"), std::nullopt);
  EXPECT_DOUBLE_EQ(torch_dtype_bytes("BFloat16"), 2);
  EXPECT_DOUBLE_EQ(torch_dtype_bytes("Float"), 4);
  EXPECT_DOUBLE_EQ(torch_dtype_bytes("Float8_e4m3fn"), 1);
  EXPECT_DOUBLE_EQ(torch_dtype_bytes("Quaternion"), 0);
  // Kineto cuts a long list after 30 ranks: the stride fills it in.
  std::vector<int> known;
  for (int i = 0; i < 30; ++i) known.push_back(3 + 8 * i);
  const auto all = complete_ranks(known, 64);
  ASSERT_EQ(all.size(), 64u);
  EXPECT_EQ(all.back(), 3 + 8 * 63);
  EXPECT_TRUE(complete_ranks({5}, 4).empty());
}

}  // namespace
}  // namespace gf
