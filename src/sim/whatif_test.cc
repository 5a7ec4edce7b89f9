#include "sim/whatif.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "../../tests/support.h"
#include "sim/collective.h"
#include "topo/fabric.h"

namespace gf {
namespace {

struct WhatIfSetup {
  Catalog cat;
  Spec spec;
  Plan plan;
};

WhatIfSetup setup(const std::string& yaml) {
  WhatIfSetup s{*builtin_catalog(), {}, {}};
  auto sp = parse_spec(yaml, "t.yaml");
  EXPECT_TRUE(sp.ok()) << format_diagnostics(sp.errors());
  s.spec = *sp;
  EXPECT_TRUE(validate_spec(s.spec, s.cat).empty());
  auto p = make_plan(s.spec, s.cat);
  EXPECT_TRUE(p.ok());
  s.plan = *p;
  return s;
}

// The scenario's fabric with `fail` and `degrade` applied, as what-if, replay and jobs take them.
Result<ScenarioFabric> failed_scenario(const WhatIfSetup& s, std::vector<std::string> fail,
                                       std::vector<std::string> degrade = {}) {
  WhatIfOptions o;
  o.fail = std::move(fail);
  o.degrade = std::move(degrade);
  return scenario_fabric(s.spec, s.cat, s.plan, o);
}

// The indices of a fabric's failed links.
std::vector<size_t> failed(const Fabric& f) {
  std::vector<size_t> out;
  for (size_t i = 0; i < f.links().size(); ++i)
    if (f.links()[i].failed) out.push_back(i);
  return out;
}

const char* kSeed =
    "cluster: {gpu: h100-sxm, nodes: 128, nic: cx7-400g}\n"
    "fabric: {technology: infiniband, switch: qm9700}\n"
    "workload:\n  model: {params: 70B, layers: 80, hidden: 8192, heads: 64, seq_len: 4096}\n"
    "  parallelism: {tp: 8}\n  global_batch: 1024\n";

const CollectiveProbe& probe(const WhatIfSide& s, const std::string& op) {
  for (const auto& p : s.collectives)
    if (p.op == op) return p;
  throw std::runtime_error(op);
}

// The what-if's change lines, one a line.
std::string changes_text(const WhatIfResult& r) {
  std::string text;
  for (const auto& c : r.changes) text += c + "\n";
  return text;
}

}  // namespace

TEST(WhatIf, FailedRailLeafCutsItsNodesOffAndDroppingThemCosts) {
  const WhatIfSetup s = setup(kSeed);
  WhatIfOptions o;
  o.fail = {"switch:su01-r0-leaf"};
  auto r = what_if(s.spec, s.cat, s.plan, o);
  ASSERT_TRUE(r.ok()) << format_diagnostics(r.errors());
  EXPECT_EQ(r->affected.size(), 32u);  // the unit's 32 nodes lost rail 0
  for (const auto& a : r->affected) EXPECT_EQ(a.state, "cut off");
  EXPECT_FALSE(probe(r->scenario, "all_reduce").runs);
  EXPECT_FALSE(r->scenario.step.has_value());
  ASSERT_TRUE(r->dropped.has_value());
  EXPECT_EQ(r->dropped->gpus, 768);
  // The job shrinks, the network installed does not.
  EXPECT_EQ(r->dropped->network_capex_usd, r->scenario.network_capex_usd);
  EXPECT_EQ(r->dropped->switches, r->scenario.switches);
  EXPECT_TRUE(probe(*r->dropped, "all_reduce").runs);
  ASSERT_TRUE(r->dropped->step.has_value());
  EXPECT_GT(r->dropped->step->step_time_s, r->baseline.step->step_time_s * 1.1);
  EXPECT_NE(r->recommendation.find("take them out"), std::string::npos);
  // A restarted NCCL leaves the port that is down out and runs the node on its other NICs: rail
  // 0's GPU of each of the 32 nodes sends through nic1, whose PCIe link and leaf port then carry
  // two GPUs' traffic. NCCL splits the data evenly over its channels, and the ones through those
  // NICs pace the collective: about half the bandwidth, on every node kept.
  for (const auto& a : r->affected)
    EXPECT_EQ(a.sends_through, std::vector<std::string>{"nic0 -> nic1"});
  ASSERT_TRUE(r->restarted.has_value());
  EXPECT_EQ(r->restarted->gpus, 1024);
  const CollectiveProbe& ar = probe(*r->restarted, "all_reduce");
  ASSERT_TRUE(ar.runs) << ar.note;
  const double planned = probe(r->baseline, "all_reduce").busbw_gbs;
  EXPECT_LT(ar.busbw_gbs, 0.6 * planned);
  EXPECT_GT(ar.busbw_gbs, 0.4 * planned);
  ASSERT_TRUE(r->restarted->step.has_value());
  EXPECT_GT(r->restarted->step->step_time_s, r->baseline.step->step_time_s);
  EXPECT_NE(r->recommendation.find("on every node, with the ports that are down left out and "
                                   "their GPUs sending through another NIC of their nodes, "
                                   "all_reduce "),
            std::string::npos)
      << r->recommendation;
  // Both choices are priced: a step time and a throughput each.
  const std::string& rec = r->recommendation;
  size_t priced = 0;
  for (size_t at = rec.find(", throughput "); at != std::string::npos;
       at = rec.find(", throughput ", at + 1))
    ++priced;
  EXPECT_EQ(priced, 2u) << rec;
  // The throughput chooses between keeping the nodes and taking them out.
  const bool keep = r->restarted->step->tokens_per_s >= r->dropped->step->tokens_per_s;
  EXPECT_NE(r->recommendation.find(keep ? "Keeping the nodes trains faster"
                                        : "Taking them out trains faster"),
            std::string::npos)
      << r->recommendation;
  // The 96 replicas left take whole microbatches: the batch shrinks, and the recommendation says
  // so beside what the step's throughput loses (a shorter step of fewer tokens is no gain).
  const double gb = r->baseline.step->tokens_per_step / r->dropped->step->tokens_per_step;
  EXPECT_GT(gb, 1.0);
  EXPECT_NE(r->recommendation.find("global batch"), std::string::npos) << r->recommendation;
  EXPECT_NE(r->recommendation.find(fmt::format(
                "throughput {:+.1f}%",
                100 * (r->dropped->step->tokens_per_s / r->baseline.step->tokens_per_s - 1))),
            std::string::npos)
      << r->recommendation;
}

// The cluster's only node failed: no GPU is left, so the scenario has no figures (its NVLink
// ran the collectives and the step as if nothing had failed) and the recommendation says the job
// cannot run; the same when every node of a larger cluster failed.
TEST(WhatIf, EveryNodeFailedLeavesNoGpusToRunOn) {
  const WhatIfSetup one = setup(
      "cluster: {gpu: h100-sxm, nodes: 1, nic: cx7-400g}\n"
      "fabric: {technology: infiniband, switch: qm9700}\n"
      "workload:\n  model: {params: 70B, layers: 80, hidden: 8192, heads: 64, seq_len: 4096}\n"
      "  parallelism: {tp: 8}\n  global_batch: 8\n");
  WhatIfOptions o;
  o.fail = {"node:node001"};
  auto r = what_if(one.spec, one.cat, one.plan, o);
  ASSERT_TRUE(r.ok()) << format_diagnostics(r.errors());
  ASSERT_TRUE(r->baseline.step.has_value());
  for (const char* op : {"all_reduce", "alltoall"}) {
    EXPECT_TRUE(probe(r->baseline, op).runs) << op;
    EXPECT_FALSE(probe(r->scenario, op).runs) << op;
    EXPECT_NE(probe(r->scenario, op).note.find("no GPUs left"), std::string::npos) << op;
  }
  EXPECT_FALSE(r->scenario.step.has_value());
  EXPECT_NE(r->scenario.step_note.find("no GPUs left"), std::string::npos);
  EXPECT_EQ(r->scenario.gpus, 0);  // none left, not the plan's 8
  for (const auto& c : r->changes) EXPECT_EQ(c.find("on all 0 nodes"), std::string::npos) << c;
  EXPECT_EQ(r->baseline.gpus, 8);
  EXPECT_FALSE(r->dropped.has_value());
  EXPECT_NE(r->recommendation.find("the job cannot run: the cluster's only node (node001) failed"),
            std::string::npos)
      << r->recommendation;
  o.links = true;
  auto links = what_if(one.spec, one.cat, one.plan, o);
  ASSERT_FALSE(links.ok());
  EXPECT_EQ(links.errors()[0].key, "--links");

  const WhatIfSetup two = setup(
      "cluster: {gpu: h100-sxm, nodes: 2, nic: cx7-400g}\n"
      "fabric: {technology: infiniband, switch: qm9700}\n");
  WhatIfOptions both;
  both.fail = {"node:node001", "node:node002"};
  auto all = what_if(two.spec, two.cat, two.plan, both);
  ASSERT_TRUE(all.ok()) << format_diagnostics(all.errors());
  EXPECT_FALSE(probe(all->scenario, "all_reduce").runs);
  EXPECT_NE(all->recommendation.find("all 2 nodes failed, so no GPUs are left"), std::string::npos)
      << all->recommendation;
  // One of the two failed: the other still runs the job, as before.
  WhatIfOptions first;
  first.fail = {"node:node001"};
  auto half = what_if(two.spec, two.cat, two.plan, first);
  ASSERT_TRUE(half.ok()) << format_diagnostics(half.errors());
  ASSERT_TRUE(half->dropped.has_value());
  EXPECT_TRUE(probe(*half->dropped, "all_reduce").runs);
  EXPECT_EQ(half->recommendation.find("cannot run:"), std::string::npos) << half->recommendation;
}

// A spec sized by `gpus:` with replicas of 4 nodes (tp 8 x pp 4): losing one node keeps the
// whole replicas that remain (28 of 32 nodes), not a crash or the full cluster again.
TEST(WhatIf, DroppingANodeKeepsWholeReplicas) {
  const WhatIfSetup s = setup(
      "cluster: {gpu: h100-sxm, gpus: 256, nic: cx7-400g}\n"
      "fabric: {technology: infiniband, switch: qm9700}\n"
      "workload:\n  model: {params: 70B, layers: 80, hidden: 8192, heads: 64, seq_len: 4096}\n"
      "  parallelism: {tp: 8, pp: 4}\n  global_batch: 64\n");
  WhatIfOptions o;
  o.fail = {"node:node001"};
  auto r = what_if(s.spec, s.cat, s.plan, o);
  ASSERT_TRUE(r.ok()) << format_diagnostics(r.errors());
  ASSERT_TRUE(r->dropped.has_value());
  EXPECT_EQ(r->dropped->gpus, 224);
  ASSERT_TRUE(r->dropped->step.has_value());
  // A server that is down has no NIC to send through: the job restarts without it only.
  EXPECT_FALSE(r->restarted.has_value());
  ASSERT_EQ(r->affected.size(), 1u);
  EXPECT_TRUE(r->affected[0].sends_through.empty());
  EXPECT_EQ(r->recommendation.rfind("1 node is down: the running job stops (its ranks there are "
                                    "gone) and restarts (guide §7) without it: 224 GPUs remain",
                                    0),
            0u)
      << r->recommendation;
}

// Without rail optimization a node's NICs share its leaf: a failed leaf leaves its nodes no NIC
// to send through, and the job restarts without them only.
TEST(WhatIf, ALeafOfEveryNicLeavesItsNodesNoNicToSendThrough) {
  const WhatIfSetup s = setup(
      "cluster: {gpu: h100-sxm, nodes: 32, nic: cx7-400g}\n"
      "fabric: {technology: infiniband, switch: qm9700, rail_optimized: false}\n");
  WhatIfOptions o;
  o.fail = {"switch:leaf001"};
  auto r = what_if(s.spec, s.cat, s.plan, o);
  ASSERT_TRUE(r.ok()) << format_diagnostics(r.errors());
  ASSERT_EQ(r->affected.size(), 4u);
  for (const auto& a : r->affected) {
    EXPECT_EQ(a.lost.size(), 8u);
    EXPECT_TRUE(a.sends_through.empty());
  }
  EXPECT_FALSE(r->restarted.has_value());
  EXPECT_EQ(r->recommendation.rfind("4 nodes have no NIC left: the running job stops (its ranks "
                                    "there cannot be reached) and restarts (guide §7) without them",
                                    0),
            0u)
      << r->recommendation;
}

// Every node cut off from a rail: the job restarts with the ports left out, and dropping the
// nodes would leave nothing; with both rails' leaves down no node keeps a path, and nothing runs.
TEST(WhatIf, EveryNodeCutOffLeavesNothingToDropThemTo) {
  const char* lab =
      "cluster: {gpu: h100-sxm, nodes: 8, nic: cx7-400g, nics_per_node: 2}\n"
      "fabric: {technology: roce, topology: clos2, rail_optimized: true, switch: arista-7060x6}\n";
  const WhatIfSetup s = setup(lab);
  WhatIfOptions o;
  o.fail = {"switch:su01-r0-leaf"};
  auto one = what_if(s.spec, s.cat, s.plan, o);
  ASSERT_TRUE(one.ok()) << format_diagnostics(one.errors());
  EXPECT_EQ(one->affected.size(), 8u);
  ASSERT_TRUE(one->restarted.has_value());
  EXPECT_FALSE(one->dropped.has_value());
  EXPECT_NE(one->recommendation.find("; taking them out would leave no GPUs"), std::string::npos)
      << one->recommendation;
  EXPECT_EQ(one->recommendation.find("or take them out"), std::string::npos) << one->recommendation;
  o.fail.push_back("switch:su01-r1-leaf");
  auto both = what_if(s.spec, s.cat, s.plan, o);
  ASSERT_TRUE(both.ok()) << format_diagnostics(both.errors());
  EXPECT_FALSE(both->restarted.has_value());
  EXPECT_NE(both->recommendation.find("cannot run again until the failed parts are replaced"),
            std::string::npos)
      << both->recommendation;
  EXPECT_EQ(both->recommendation.find("restarts"), std::string::npos) << both->recommendation;
}

// Two NICs of a node down: their GPUs go to two different live NICs, the nearest free ones.
TEST(WhatIf, TwoDeadNicsOfANodeSendThroughTwoOthers) {
  const WhatIfSetup s = setup(kSeed);
  WhatIfOptions o;
  o.fail = {"link:node001:su01-r0-leaf", "link:node001:su01-r1-leaf"};
  auto r = what_if(s.spec, s.cat, s.plan, o);
  ASSERT_TRUE(r.ok()) << format_diagnostics(r.errors());
  ASSERT_EQ(r->affected.size(), 1u);
  EXPECT_EQ(r->affected[0].sends_through,
            (std::vector<std::string>{"nic0 -> nic2", "nic1 -> nic3"}));
  // One node's loss against every node's halved channels: here taking it out trains faster.
  EXPECT_NE(r->recommendation.find(". Taking it out trains faster"), std::string::npos)
      << r->recommendation;
  EXPECT_EQ(r->recommendation.find("-0.0%"), std::string::npos) << r->recommendation;
}

TEST(WhatIf, FailedSpineIsRoutedAround) {
  const WhatIfSetup s = setup(kSeed);
  WhatIfOptions o;
  o.fail = {"switch:spine01"};
  auto r = what_if(s.spec, s.cat, s.plan, o);
  ASSERT_TRUE(r.ok());
  EXPECT_TRUE(r->affected.empty());
  for (const auto& p : r->scenario.collectives) EXPECT_TRUE(p.runs) << p.op;
  EXPECT_LE(probe(r->scenario, "all_reduce").busbw_gbs,
            probe(r->baseline, "all_reduce").busbw_gbs * 1.001);
  // NVLS over SHARP runs again once restarted: the Aggregation Manager roots the trees of
  // spine01's rails on another spine, and the changes say so.
  EXPECT_EQ(probe(r->baseline, "all_reduce").algorithm, "nvls");
  EXPECT_EQ(probe(r->scenario, "all_reduce").algorithm, "nvls");
  const std::string text = changes_text(*r);
  EXPECT_NE(text.find("SHARP trees re-rooted"), std::string::npos) << text;
  EXPECT_NE(text.find("rail 0 spine01 -> spine02"), std::string::npos) << text;
  // The running job's in-network reductions on spine01's trees fail with it: the job stops, and
  // restarted gets the new roots (not "re-routes around the failure", which reads as no harm).
  EXPECT_NE(r->recommendation.find("the running job's in-network reductions on the trees rooted "
                                   "at the failed switch fail: it stops; restarted, it gets trees "
                                   "on roots that reach every leaf"),
            std::string::npos)
      << r->recommendation;
}

// Each probe's flows stay within the memory budget (as simulate's): one that would need more says
// so in its note, and the what-if still answers, instead of exhausting the machine.
TEST(WhatIf, AProbeBeyondTheMemoryBudgetSaysSo) {
  const WhatIfSetup s = setup(kSeed);
  WhatIfOptions o;
  o.fail = {"switch:spine01"};
  o.memory_budget_bytes = 1024;
  auto r = what_if(s.spec, s.cat, s.plan, o);
  ASSERT_TRUE(r.ok()) << format_diagnostics(r.errors());
  const CollectiveProbe& a2a = probe(r->scenario, "alltoall");
  EXPECT_FALSE(a2a.runs);
  EXPECT_NE(a2a.note.find("of memory"), std::string::npos) << a2a.note;
}

TEST(WhatIf, DualPlaneHalvesInsteadOfFailing) {
  const WhatIfSetup s = setup(
      "cluster: {gpu: h100-sxm, nodes: 64, nic: cx7-400g}\n"
      "fabric: {technology: roce, switch: sn5600, planes: 2}\n");
  WhatIfOptions o;
  o.fail = {"switch:p1-su01-r0-leaf"};
  auto r = what_if(s.spec, s.cat, s.plan, o);
  ASSERT_TRUE(r.ok()) << format_diagnostics(r.errors());
  ASSERT_FALSE(r->affected.empty());
  for (const auto& a : r->affected) EXPECT_EQ(a.state, "degraded");
  for (const auto& p : r->scenario.collectives) EXPECT_TRUE(p.runs) << p.op;
  // A rail-0 transfer between two nodes: both its planes before, one after.
  Fabric f = Fabric::build(s.plan, s.cat);
  auto send = [&](const Fabric& fab) {
    auto g = GroupCollective::build(fab, s.plan, Op::kSendRecv, {{0, 8}});
    EXPECT_TRUE(g.ok());
    return g->busbw_gbs(1e9);
  };
  const double before = send(f);
  f.fail_vertex(f.leaf_vertex(0, 0));
  const double after = send(f);
  EXPECT_NEAR(after / before, 0.5, 0.05);
}

// At 512 nodes alltoall's connections are one flow per leaf pair (alltoall_by_leaf); a plane's
// leaf lost, its NICs send their whole share over the other plane's port, which then paces the
// call at half its rate: the call runs, at about half (it had read "cannot run", beside "no node
// is cut off").
TEST(WhatIf, DualPlaneAlltoallAtScaleHalvesInsteadOfFailing) {
  const WhatIfSetup s = setup(
      "cluster: {gpu: h100-sxm, nodes: 512, nic: cx7-400g}\n"
      "fabric: {technology: roce, switch: arista-7060x6, planes: 2}\n");
  WhatIfOptions o;
  o.fail = {"switch:p1-su01-r0-leaf"};
  auto r = what_if(s.spec, s.cat, s.plan, o);
  ASSERT_TRUE(r.ok()) << format_diagnostics(r.errors());
  const CollectiveProbe &planned = probe(r->baseline, "alltoall"),
                        &failed = probe(r->scenario, "alltoall");
  EXPECT_TRUE(failed.runs);
  ASSERT_GT(planned.busbw_gbs, 0);
  EXPECT_NEAR(failed.busbw_gbs / planned.busbw_gbs, 0.5, 0.05);
}

// A plane's leaf lost under InfiniBand with SHARP: NVLS's reduction tree in that plane no longer
// reaches every rank's NIC, and the reason says so (not "the ranks are cut apart": no node is).
TEST(WhatIf, APlaneLeafLostTakesTheSharpTreeNotTheNodes) {
  const WhatIfSetup s = setup(
      "cluster: {gpu: h100-sxm, nodes: 128, nic: cx7-400g}\n"
      "fabric: {technology: infiniband, switch: qm9700, planes: 2}\n");
  WhatIfOptions o;
  o.fail = {"switch:p1-su01-r0-leaf"};
  auto r = what_if(s.spec, s.cat, s.plan, o);
  ASSERT_TRUE(r.ok()) << format_diagnostics(r.errors());
  for (const auto& a : r->affected) EXPECT_EQ(a.state, "degraded");
  const CollectiveProbe& ar = probe(r->scenario, "all_reduce");
  ASSERT_TRUE(ar.runs);
  bool said = false;
  for (const auto& [alg, why] : ar.unavailable)
    if (alg == "nvls") {
      EXPECT_EQ(why,
                "no path: failed parts leave its SHARP reduction tree short of some ranks' "
                "NICs");
      said = true;
    }
  EXPECT_EQ(probe(r->baseline, "all_reduce").algorithm, "nvls");
  EXPECT_TRUE(said);
}

TEST(WhatIf, GrowthUsesSpineHeadroom) {
  const WhatIfSetup s = setup(
      "cluster: {gpu: h100-sxm, nodes: 64, nic: cx7-400g}\n"
      "fabric: {technology: infiniband, switch: qm9700, spine_headroom: 0.5}\n");
  WhatIfOptions o;
  o.grow_nodes = 64;
  auto r = what_if(s.spec, s.cat, s.plan, o);
  ASSERT_TRUE(r.ok()) << format_diagnostics(r.errors());
  EXPECT_EQ(r->scenario.gpus, 1024);
  EXPECT_GT(r->scenario.switches, r->baseline.switches);
  EXPECT_EQ(r->scenario.tiers, 2);
  // Beyond what two tiers hold, growth needs another tier.
  WhatIfOptions big;
  big.grow_nodes = 512;
  auto b = what_if(s.spec, s.cat, s.plan, big);
  ASSERT_TRUE(b.ok());
  EXPECT_EQ(b->scenario.tiers, 3);
  EXPECT_NE(changes_text(*b).find("another tier"), std::string::npos) << changes_text(*b);
  // From one switch the reason is that switch, not spines the plan never had.
  const WhatIfSetup one = setup(
      "cluster: {gpu: h100-sxm, nodes: 2, nic: cx7-400g}\n"
      "fabric: {technology: infiniband, switch: qm9700}\n");
  ASSERT_EQ(one.plan.topo.tiers, 1);
  WhatIfOptions grow;
  grow.grow_nodes = 15;
  auto g = what_if(one.spec, one.cat, one.plan, grow);
  ASSERT_TRUE(g.ok()) << format_diagnostics(g.errors());
  const std::string text = changes_text(*g);
  EXPECT_NE(text.find("one switch no longer holds every node"), std::string::npos) << text;
  EXPECT_EQ(text.find("spines are full"), std::string::npos) << text;
}

TEST(WhatIf, FasterNicsAndBadNames) {
  const WhatIfSetup s = setup(kSeed);
  WhatIfOptions o;
  o.nic = "800G";
  auto r = what_if(s.spec, s.cat, s.plan, o);
  ASSERT_TRUE(r.ok()) << format_diagnostics(r.errors());
  EXPECT_GE(probe(r->scenario, "alltoall").busbw_gbs, probe(r->baseline, "alltoall").busbw_gbs);
  // The change states what the fabric costs with them, and the recommendation weighs it.
  const std::string text = changes_text(*r);
  EXPECT_NE(text.find("network capex"), std::string::npos) << text;
  EXPECT_NE(r->recommendation.find("network capex +$"), std::string::npos) << r->recommendation;
  WhatIfOptions bad;
  bad.fail = {"switch:spine1"};
  auto e = what_if(s.spec, s.cat, s.plan, bad);
  ASSERT_FALSE(e.ok());
  EXPECT_NE(format_diagnostic(e.errors()[0]).find("did you mean 'spine01'"), std::string::npos)
      << format_diagnostic(e.errors()[0]);
  bad.fail = {"cable:x"};
  EXPECT_FALSE(what_if(s.spec, s.cat, s.plan, bad).ok());
}

// One of a leaf's two cables to a spine failed: every node keeps its links and the fabric
// re-routes, but the leaf still sends that spine its share over the cable left; the
// recommendation names what that costs rather than reading as no harm.
TEST(WhatIf, ReRoutedIsNotUnchanged) {
  const WhatIfSetup s = setup(kSeed);
  WhatIfOptions o;
  o.fail = {"link:su04-r7-leaf:spine16"};
  auto r = what_if(s.spec, s.cat, s.plan, o);
  ASSERT_TRUE(r.ok()) << format_diagnostics(r.errors());
  EXPECT_LT(probe(r->scenario, "alltoall").busbw_gbs,
            0.9 * probe(r->baseline, "alltoall").busbw_gbs);
  EXPECT_EQ(r->recommendation.rfind(
                "no node lost a link: the fabric re-routes around the failure, at a cost: "
                "alltoall -",
                0),
            0u)
      << r->recommendation;
}

// Eight H100 nodes of 400G NICs on a RoCE Clos: the --nic tests' cluster.
static WhatIfSetup roce8() {
  return setup(
      "cluster: {gpu: h100-sxm, nodes: 8, nic: cx7-400g}\nfabric: {technology: roce, topology: "
      "clos2}\n");
}

// A faster NIC that the plan warns of (800G behind an H100's PCIe Gen5 x16) carries the
// warning into the change: why the bus bandwidth gains less than the rate.
TEST(WhatIf, AFasterNicCarriesThePlansNewWarning) {
  const WhatIfSetup s = roce8();
  WhatIfOptions o;
  o.nic = "800G";
  auto r = what_if(s.spec, s.cat, s.plan, o);
  ASSERT_TRUE(r.ok()) << format_diagnostics(r.errors());
  const std::string text = changes_text(*r);
  EXPECT_NE(text.find("; plan warns: cx8-800g behind PCIe Gen5 x16"), std::string::npos) << text;
}

// --nic at the plan's own rate keeps its NIC (the catalog's first 400G is a BlueField-3 DPU),
// and a change the catalog cannot plan is said as the flag's, not as a spec key's at a line.
TEST(WhatIf, NicAtThePlansRateKeepsItAndAFlagsFailureIsTheFlags) {
  const WhatIfSetup s = roce8();
  WhatIfOptions o;
  o.nic = "400G";
  auto r = what_if(s.spec, s.cat, s.plan, o);
  ASSERT_TRUE(r.ok()) << format_diagnostics(r.errors());
  const std::string text = changes_text(*r);
  EXPECT_NE(text.find("NICs cx7-400g kept (400 Gbps: the rate asked for is the plan's own)"),
            std::string::npos)
      << text;
  EXPECT_EQ(r->recommendation.rfind("nothing to weigh: cx7-400g is the plan's own NIC", 0), 0u)
      << r->recommendation;
  o.nic = "100G";
  auto slow = what_if(s.spec, s.cat, s.plan, o);
  ASSERT_FALSE(slow.ok());
  const std::string e = format_diagnostic(slow.errors()[0]);
  EXPECT_EQ(e.rfind("error: --nic: with 100G, fabric.switch: ", 0), 0u) << e;
  EXPECT_EQ(e.find("t.yaml"), std::string::npos) << e;
  // A straggler without a workload to slow changes nothing: refused.
  WhatIfOptions slow_only;
  slow_only.slow = {"node:node003=0.8"};
  auto idle = what_if(s.spec, s.cat, s.plan, slow_only);
  ASSERT_FALSE(idle.ok());
  EXPECT_EQ(idle.errors()[0].message,
            "a straggler slows the training step, and the spec has no workload: section");
  WhatIfOptions grow;
  grow.grow_nodes = 100000;
  auto big = what_if(s.spec, s.cat, s.plan, grow);
  ASSERT_FALSE(big.ok());
  EXPECT_EQ(format_diagnostic(big.errors()[0]).rfind("error: --grow: with nodes=+100000, ", 0), 0u)
      << format_diagnostic(big.errors()[0]);
}

}  // namespace gf

namespace gf {
// --nic with NICs whose lanes the plan's InfiniBand switch cannot meet chooses the switch again,
// as with a rate it has no ports for: a ConnectX-7 over 2 planes (2 x 100G a link) leaves an
// HDR switch, whose 200G ports it could otherwise fill.
TEST(WhatIf, NicsOfFasterLanesChooseTheSwitchAgain) {
  const WhatIfSetup s = setup(
      "cluster: {gpu: a100-sxm-80g, nodes: 16, nic: cx6-200g}\nfabric: {technology: infiniband, "
      "switch: qm8700, planes: 2}\n");
  ASSERT_EQ(s.plan.sw.id, "qm8700");
  WhatIfOptions o;
  o.nic = "cx7-400g";
  auto r = what_if(s.spec, s.cat, s.plan, o);
  ASSERT_TRUE(r.ok()) << format_diagnostics(r.errors());
  const std::string text = changes_text(*r);
  EXPECT_NE(text.find("switch qm8700 -> qm9700"), std::string::npos) << text;
  // A NIC the plan's switch still serves keeps it, and the change says so (not "X -> X").
  const WhatIfSetup same = setup(
      "cluster: {gpu: a100-sxm-80g, nodes: 16, nic: cx6-200g}\nfabric: {technology: infiniband, "
      "switch: qm9700}\n");
  auto kept = what_if(same.spec, same.cat, same.plan, o);
  ASSERT_TRUE(kept.ok()) << format_diagnostics(kept.errors());
  const std::string kept_text = changes_text(*kept);
  EXPECT_NE(kept_text.find("(200 -> 400 Gbps), switch qm9700 kept"), std::string::npos)
      << kept_text;
}

// Both spines of the two-unit lab failed: every node keeps its own links, but the units are
// cut apart. The recommendation says so, not that the fabric re-routes.
TEST(WhatIf, AFabricSplitApartIsNotReRoutedAround) {
  const PlannedSpec p = testing::load_example("roce-lab-16.yaml");
  WhatIfOptions o;
  o.fail = {"switch:spine01", "switch:spine02"};
  auto r = what_if(p.spec, p.catalog, p.plan, o);
  ASSERT_TRUE(r.ok()) << format_diagnostics(r.errors());
  EXPECT_TRUE(r->affected.empty());
  EXPECT_NE(r->recommendation.find("no longer connects every node"), std::string::npos)
      << r->recommendation;
  EXPECT_EQ(r->recommendation.find("re-routes around"), std::string::npos) << r->recommendation;
}

TEST(WhatIf, RoutesAroundADeadEndInThreeTiers) {
  // A failed leaf-spine cable in a 3-tier Clos: routes that would reach that spine from a core
  // must avoid it (the spine withdraws the leaf), so every collective still runs.
  auto s = *builtin_catalog();
  Spec spec;
  const Plan plan = testing::plan_of(
      "cluster: {gpu: h100-sxm, nodes: 512, nic: cx7-400g}\nfabric: {technology: infiniband, "
      "switch: qm9700}\n",
      s, &spec);
  ASSERT_EQ(plan.topo.kind, TopologyKind::kClos3);
  WhatIfOptions o;
  o.fail = {"link:su01-r0-leaf:pod01-spine01"};
  auto r = what_if(spec, s, plan, o);
  ASSERT_TRUE(r.ok()) << format_diagnostics(r.errors());
  for (const auto& p : r->scenario.collectives) EXPECT_TRUE(p.runs) << p.op << ": " << p.note;
  EXPECT_TRUE(r->affected.empty());
}
}  // namespace gf

namespace gf {

TEST(WhatIf, ADegradedNicLinkAndASlowNodeSlowTheStep) {
  const WhatIfSetup s = setup(kSeed);
  WhatIfOptions o;
  o.degrade = {"link:node003:su01-r0-leaf=200G"};
  o.slow = {"node:node005=0.8"};
  o.links = true;
  auto r = what_if(s.spec, s.cat, s.plan, o);
  ASSERT_TRUE(r.ok()) << format_diagnostics(r.errors());
  ASSERT_TRUE(r->baseline.step && r->scenario.step);
  EXPECT_GT(r->scenario.step->step_time_s, r->baseline.step->step_time_s);
  EXPECT_NEAR(r->scenario.step->compute_s, r->baseline.step->compute_s / 0.8,
              1e-9 * r->baseline.step->compute_s);
  EXPECT_EQ(r->scenario.step->straggler_node, 4);  // node005
  ASSERT_TRUE(r->links);
  // The degraded link runs at 200G in both directions in the scenario's fabric.
  const Fabric& f = r->links->fabric;
  int at_200 = 0;
  for (const auto& l : f.links())
    if (l.cls == LinkClass::kNicLeaf && l.bytes_per_s == 200e9 / 8) ++at_200;
  EXPECT_EQ(at_200, 2);
  EXPECT_GT(r->links->traffic.load.total_bytes(), 0);
}

TEST(WhatIf, BadDegradeAndSlowAreRefusedWithTheFlagAndTheForm) {
  const WhatIfSetup s = setup(kSeed);
  auto first = [&](WhatIfOptions o) {
    auto r = what_if(s.spec, s.cat, s.plan, o);
    EXPECT_FALSE(r.ok());
    return r.ok() ? Diagnostic{} : r.errors()[0];
  };
  WhatIfOptions o;
  o.degrade = {"link:node003:su01-r0-leef=200G"};
  auto d = first(o);
  EXPECT_EQ(d.key, "--degrade");
  EXPECT_NE(d.hint.find("su01-r0-leaf"), std::string::npos) << d.hint;
  o.degrade = {"link:node003:su01-r0-leaf"};  // no rate
  d = first(o);
  EXPECT_NE(d.hint.find("link:A:B=RATE"), std::string::npos);
  o.degrade = {"link:node003:su01-r0-leaf=800G"};  // faster than the link
  EXPECT_NE(first(o).message.find("faster"), std::string::npos);
  o.degrade = {"link:node003:su01-r0-leaf=400G"};  // the link's own rate: nothing degraded
  EXPECT_NE(first(o).message.find("is already the link's 400G"), std::string::npos)
      << first(o).message;
  o.degrade = {"link:node003:su01-r0-leaf=fast"};
  EXPECT_NE(first(o).message.find("not a rate"), std::string::npos);
  o.degrade = {"switch:spine01=1.5"};
  EXPECT_NE(first(o).message.find("fraction"), std::string::npos);
  o.degrade = {"link:node001:spine01=200G"};  // no such cable
  EXPECT_NE(first(o).message.find("no cable"), std::string::npos);
  o.degrade.clear();
  o.slow = {"node:node999=0.8"};
  d = first(o);
  EXPECT_EQ(d.key, "--slow");
  o.slow = {"switch:spine01=0.8"};
  EXPECT_NE(first(o).hint.find("node:NAME=SPEED"), std::string::npos);
  o.slow = {"node:node001=0"};
  EXPECT_NE(first(o).message.find("speed"), std::string::npos);
}

TEST(WhatIf, AHalfSpeedSwitchSlowsWhatCrossesIt) {
  const WhatIfSetup s = setup(kSeed);
  WhatIfOptions o;
  o.degrade = {"switch:su01-r0-leaf=0.5"};
  auto r = what_if(s.spec, s.cat, s.plan, o);
  ASSERT_TRUE(r.ok()) << format_diagnostics(r.errors());
  // Rail 0 of the first unit's nodes runs at half its rate: the rings through it are paced by
  // it, the all_reduce loses bandwidth.
  EXPECT_LT(probe(r->scenario, "all_reduce").busbw_gbs, probe(r->baseline, "all_reduce").busbw_gbs);
}

}  // namespace gf

namespace gf {
// A node's cable is one link whichever end is written first: link:LEAF:NODE fails and degrades
// what link:NODE:LEAF does (it said "unknown device 'node001' (did you mean 'node001'?)"), in
// what-if, replay (scenario_fabric) and jobs (fail_parts) alike; a name of the wrong kind says
// what it is rather than suggesting itself back.
TEST(WhatIf, ALinkNamesItsEndsInEitherOrder) {
  const WhatIfSetup s = setup(kSeed);
  auto scenario = [&](std::vector<std::string> fail, std::vector<std::string> degrade) {
    return failed_scenario(s, std::move(fail), std::move(degrade));
  };
  auto at_200g = [](const Fabric& f) {
    std::vector<size_t> out;
    for (size_t i = 0; i < f.links().size(); ++i)
      if (f.links()[i].bytes_per_s == 200e9 / 8) out.push_back(i);
    return out;
  };
  const auto node_first = scenario({"link:node001:su01-r0-leaf"}, {});
  const auto node_second = scenario({"link:su01-r0-leaf:node001"}, {});
  ASSERT_TRUE(node_first.ok()) << format_diagnostics(node_first.errors());
  ASSERT_TRUE(node_second.ok()) << format_diagnostics(node_second.errors());
  EXPECT_EQ(failed(node_first->fabric).size(), 2u);
  EXPECT_EQ(failed(node_second->fabric), failed(node_first->fabric));
  EXPECT_EQ(node_second->changes.back(), "link su01-r0-leaf - node001 failed");

  const auto slow_first = scenario({}, {"link:node003:su01-r0-leaf=200G"});
  const auto slow_second = scenario({}, {"link:su01-r0-leaf:node003=200G"});
  ASSERT_TRUE(slow_first.ok()) << format_diagnostics(slow_first.errors());
  ASSERT_TRUE(slow_second.ok()) << format_diagnostics(slow_second.errors());
  EXPECT_EQ(at_200g(slow_first->fabric).size(), 2u);
  EXPECT_EQ(at_200g(slow_second->fabric), at_200g(slow_first->fabric));

  // jobs --fail goes through fail_parts.
  Fabric f = Fabric::build(s.plan, s.cat);
  std::vector<std::string> changes;
  EXPECT_TRUE(fail_parts(s.plan, s.cat, f, {"link:su01-r0-leaf:node001"}, changes).empty());
  EXPECT_EQ(failed(f), failed(node_first->fabric));

  // A node's NIC port is not a device: the message says which cable the user means.
  for (const char* item : {"link:node001:nic0", "link:nic0:node001"}) {
    const auto port = scenario({item}, {});
    ASSERT_FALSE(port.ok()) << item;
    EXPECT_EQ(port.errors()[0].message,
              "'nic0' is a port of node001, not a device: a link names the devices at both ends "
              "of its cable")
        << item;
    EXPECT_EQ(port.errors()[0].hint,
              "use link:node001:LEAF, the leaf that cabling.csv's row for node001 nic0 names");
  }
  // One of two parallel leaf-spine cables, by its ports as cabling.csv numbers or names them
  // (su04-r7-leaf 48 -> spine16 63, 24/2 -> 32/1; and 64 -> 64, 32/2 -> 32/2): the one named,
  // either end first, where link:A:B takes the first.
  const auto first = scenario({"link:su04-r7-leaf:spine16"}, {});
  const auto by_port = scenario({"link:su04-r7-leaf:48:spine16:63"}, {});
  const auto by_panel = scenario({"link:su04-r7-leaf:24/2:spine16:32/1"}, {});
  const auto second = scenario({"link:spine16:64:su04-r7-leaf:64"}, {});
  const auto second_panel = scenario({"link:su04-r7-leaf:32/2:spine16:32/2"}, {});
  for (const auto* r : {&first, &by_port, &by_panel, &second, &second_panel})
    ASSERT_TRUE(r->ok()) << format_diagnostics(r->errors());
  EXPECT_EQ(failed(first->fabric).size(), 2u);
  EXPECT_EQ(failed(by_port->fabric), failed(first->fabric));
  EXPECT_EQ(failed(by_panel->fabric), failed(first->fabric));
  EXPECT_EQ(failed(second->fabric).size(), 2u);
  EXPECT_NE(failed(second->fabric), failed(first->fabric));
  EXPECT_EQ(failed(second_panel->fabric), failed(second->fabric));
  EXPECT_EQ(second->changes.back(), "link spine16:64 - su04-r7-leaf:64 failed");
  EXPECT_NE(first->changes.front().find("name one by its ports: "
                                        "link:su04-r7-leaf:PORT:spine16:PORT"),
            std::string::npos)
      << first->changes.front();
  const auto port_twice =
      scenario({"link:su04-r7-leaf:48:spine16:63", "link:spine16:32/1:su04-r7-leaf:24/2"}, {});
  ASSERT_FALSE(port_twice.ok());
  EXPECT_EQ(port_twice.errors()[0].message,
            "'link:spine16:32/1:su04-r7-leaf:24/2' names a cable an earlier --fail failed already");
  const auto crossed = scenario({"link:su04-r7-leaf:48:spine16:64"}, {});
  ASSERT_FALSE(crossed.ok());
  EXPECT_EQ(crossed.errors()[0].message, "no cable joins su04-r7-leaf port 48 and spine16 port 64");
  // One cable, one state: failed twice (the other end first), failed and degraded, or degraded
  // twice is refused, where it had been listed twice or compounded to the lower rate.
  const auto again = scenario({"link:node003:su01-r0-leaf", "link:su01-r0-leaf:node003"}, {});
  ASSERT_FALSE(again.ok());
  EXPECT_EQ(again.errors()[0].message,
            "'link:su01-r0-leaf:node003' names a cable an earlier --fail failed already");
  const auto both = scenario({"link:node003:su01-r0-leaf"}, {"link:node003:su01-r0-leaf=200G"});
  ASSERT_FALSE(both.ok());
  EXPECT_NE(both.errors()[0].message.find("a failed cable has no rate"), std::string::npos);
  const auto twice =
      scenario({}, {"link:node003:su01-r0-leaf=200G", "link:su01-r0-leaf:node003=100G"});
  ASSERT_FALSE(twice.ok());
  EXPECT_EQ(twice.errors()[0].message,
            "'link:su01-r0-leaf:node003=100G' names the cable 'link:node003:su01-r0-leaf=200G' "
            "names already");
  const auto two_nodes = scenario({"link:node001:node002"}, {});
  ASSERT_FALSE(two_nodes.ok());
  EXPECT_EQ(two_nodes.errors()[0].message,
            "node001 and node002 are both nodes: no cable joins two");
  const auto wrong_kind = scenario({"switch:node001"}, {});
  ASSERT_FALSE(wrong_kind.ok());
  EXPECT_EQ(wrong_kind.errors()[0].message, "'node001' is a node, not a switch");
  EXPECT_EQ(wrong_kind.errors()[0].hint, "use node:node001");
  const auto leaf_as_node = scenario({}, {"link:su01-r0-leaf:node001x=200G"});
  ASSERT_FALSE(leaf_as_node.ok());
  EXPECT_EQ(leaf_as_node.errors()[0].key, "--degrade");
  EXPECT_EQ(leaf_as_node.errors()[0].hint, "did you mean 'node001'?");
}
}  // namespace gf

namespace gf {
// On a single switch a node has all its cables to it: link:NODE:SWITCH fails the first NIC's
// and says so, and link:NODE:nicN:SWITCH:PORT (either end first, the port by number or
// front-panel name) fails the one named. It had been refused ("a node's cable is named
// link:NODE:LEAF"), so no other NIC's cable could fail.
TEST(WhatIf, ANodesCableByItsPortsOnASingleSwitch) {
  const WhatIfSetup s = setup(
      "cluster: {gpu: h100-sxm, nodes: 8, nic: cx7-400g}\n"
      "fabric: {technology: infiniband, topology: single, switch: qm9700}\n");
  ASSERT_EQ(s.plan.topo.kind, TopologyKind::kSingle);
  auto scenario = [&](std::vector<std::string> fail) {
    return failed_scenario(s, std::move(fail));
  };
  const auto first = scenario({"link:node001:switch1"});
  ASSERT_TRUE(first.ok()) << format_diagnostics(first.errors());
  EXPECT_NE(
      first->changes.front().find("node001 has 8 cables to switch1; its first NIC's failed "
                                  "(name another by its ports: link:node001:nicN:switch1:PORT"),
      std::string::npos)
      << first->changes.front();
  // cabling.csv: node001 nic0 -> switch1 port 1 (1/1), nic3 -> port 4 (2/2).
  const auto nic0 = scenario({"link:node001:nic0:switch1:1"});
  const auto nic3 = scenario({"link:node001:nic3:switch1:4"});
  const auto nic3_panel = scenario({"link:switch1:2/2:node001:nic3"});
  for (const auto* r : {&nic0, &nic3, &nic3_panel})
    ASSERT_TRUE(r->ok()) << format_diagnostics(r->errors());
  EXPECT_EQ(failed(nic0->fabric), failed(first->fabric));
  EXPECT_EQ(failed(nic3->fabric).size(), 2u);
  EXPECT_NE(failed(nic3->fabric), failed(nic0->fabric));
  EXPECT_EQ(failed(nic3_panel->fabric), failed(nic3->fabric));
  EXPECT_EQ(nic3->changes.back(), "link node001:nic3 - switch1:4 failed");
  // A NIC id of the catalog misspelt is suggested, as estimate --nic suggests it.
  WhatIfOptions nic;
  nic.nic = "cx7";
  const auto partial = what_if(s.spec, s.cat, s.plan, nic);
  ASSERT_FALSE(partial.ok());
  EXPECT_EQ(partial.errors()[0].hint, "did you mean 'cx7-400g'? Or give a rate such as 800G");
  const auto wrong = scenario({"link:node001:nic3:switch1:5"});
  ASSERT_FALSE(wrong.ok());
  EXPECT_EQ(wrong.errors()[0].message, "no cable joins node001 nic3 and switch1 port 5");
  const auto both = scenario({"link:node001:nic3:switch1:4", "link:switch1:4:node001:nic3"});
  ASSERT_FALSE(both.ok());
  EXPECT_NE(both.errors()[0].message.find("names a cable an earlier --fail failed already"),
            std::string::npos);
}
}  // namespace gf
