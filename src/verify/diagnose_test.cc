#include "verify/diagnose.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include "../../tests/support.h"
#include "verify/check.h"
#include "verify/doctor.h"

namespace gf {
namespace {

ToolOutput load(const std::string& name) {
  const std::string path = std::string(GPUFABRIC_SOURCE_DIR) + "/tests/data/outputs/" + name;
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  ToolOutput t{path, ss.str(), OutputKind::kUnknown};
  t.kind = detect_output_kind(t.text);
  return t;
}

std::set<std::string> ids(const std::vector<Finding>& fs) {
  std::set<std::string> out;
  for (const auto& f : fs) out.insert(f.id + ":" + std::string(severity_name(f.severity)));
  return out;
}

}  // namespace

TEST(Diagnose, GuideTroubleshootingTable) {
  auto r = diagnose({load("nccl-debug-socket-fallback.log"), load("nccl-debug-ib-retry.log"),
                     load("nvidia-smi-topo.txt"), load("ibv_devinfo.txt"), load("ip-d-link.txt"),
                     load("ethtool-S-pfc-storm.txt"), load("ib_write_bw-slow-mb.txt")},
                    400);
  ASSERT_TRUE(r.ok()) << format_diagnostics(r.errors());
  const auto got = ids(*r);
  for (const char* want :
       {"nccl-socket-fallback:error", "nccl-transport-retry:error", "gpudirect-missing:warning",
        "gpu-nic-affinity:warning", "rdma-port-down:error", "rdma-mtu-small:warning",
        "mtu-mismatch:warning", "pfc-pause-storm:error", "nic-discards:warning",
        "rdma-below-line-rate:error"})
    EXPECT_TRUE(got.count(want)) << want;
  for (const auto& f : *r) {
    EXPECT_FALSE(f.cause.empty()) << f.id;
    if (f.severity != Severity::kInfo) {
      EXPECT_FALSE(f.fix.empty()) << f.id;
      ASSERT_FALSE(f.evidence.empty()) << f.id;
    }
  }
}

// NCCL's IB async thread warning of a port error is the port going down under the job: an error
// finding of its own (it was one of "NCCL reported warnings", exit 0).
TEST(Diagnose, AnIbAsyncPortErrorIsAnError) {
  ToolOutput t{"nccl.log",
               "host1:1234:1234 [0] NCCL INFO NCCL version 2.21.5+cuda12.4\n"
               "host1:1234:1240 [0] NCCL WARN NET/IB : Got async event : port error\n"
               "host1:1234:1240 [0] NCCL INFO Channel 00/0 : 0[0] -> 8[0] [send] via "
               "NET/IB/0/GDRDMA\n",
               OutputKind::kUnknown};
  t.kind = detect_output_kind(t.text);
  auto r = diagnose({t}, 0);
  ASSERT_TRUE(r.ok()) << format_diagnostics(r.errors());
  EXPECT_TRUE(ids(*r).count("nccl-ib-async-event:error")) << findings_text(*r);
  EXPECT_FALSE(ids(*r).count("nccl-warnings:warning")) << findings_text(*r);
  EXPECT_NE(findings_text(*r).find("nccl.log:2: "), std::string::npos) << findings_text(*r);
}

// mlx5's own storm protection firing and its physical link going down are findings whatever
// the pause rate; counters are quoted as the dump prints them, whole.
TEST(Diagnose, PauseStormProtectionAndLinkFlapsFromEthtool) {
  ToolOutput t = load("ethtool-S-pfc-storm.txt");
  auto base = diagnose({t}, 400);
  ASSERT_TRUE(base.ok());
  std::string quoted;
  for (const auto& f : *base)
    if (f.id == "pfc-pause-storm") quoted = f.evidence.front().text;
  EXPECT_EQ(quoted.rfind("rx_prio3_pause: 8811209 (", 0), 0u) << quoted;  // had read 8.81121e+06
  EXPECT_FALSE(ids(*base).count("link-flaps:warning"));
  // A quiet port (no pause frames to speak of) whose NIC stopped a storm and whose link flapped.
  t.text =
      "NIC statistics:\n     rx_packets: 1000000\n     rx_prio3_pause: 0\n"
      "     tx_pause_storm_error_events: 1\n     link_down_events_phy: 3\n";
  auto r = diagnose({t}, 400);
  ASSERT_TRUE(r.ok()) << format_diagnostics(r.errors());
  EXPECT_TRUE(ids(*r).count("pfc-pause-storm:error")) << findings_text(*r);
  EXPECT_TRUE(ids(*r).count("link-flaps:warning")) << findings_text(*r);
  EXPECT_NE(findings_text(*r).find("link_down_events_phy: 3"), std::string::npos);
  EXPECT_NE(findings_text(*r).find("tx_pause_storm_error_events: 1"), std::string::npos);
}

// NCCL's own tuning table says when LL128 is off (NCCL 2.29.7 over Socket: no NVLink path); a
// log whose table rates it is not flagged.
TEST(Diagnose, Ll128OffFromTheTunersTable) {
  auto r = diagnose({load("nccl-2.29.7-tuning-socket-2rank.log")}, 400);
  ASSERT_TRUE(r.ok()) << format_diagnostics(r.errors());
  const Finding* off = nullptr;
  for (const auto& f : *r)
    if (f.id == "nccl-ll128-off") off = &f;
  ASSERT_TRUE(off);
  EXPECT_EQ(off->severity, Severity::kWarning);
  ASSERT_EQ(off->evidence.size(), 1u);
  EXPECT_EQ(off->evidence[0].line, 12);
  EXPECT_NE(off->evidence[0].text.find("Ring/LL128 31.0/0.0"), std::string::npos);
  ToolOutput on = load("nccl-2.29.7-tuning-socket-2rank.log");
  const std::string cell = "    31.0/   0.0 |    36.4/   2.4 |     5.0";
  const size_t at = on.text.find(cell);
  ASSERT_NE(at, std::string::npos);
  on.text.replace(at, 15, "    31.0/   1.8");
  auto rated = diagnose({on}, 400);
  ASSERT_TRUE(rated.ok());
  for (const auto& f : *rated) EXPECT_NE(f.id, "nccl-ll128-off");
}

TEST(Diagnose, HealthyOutputsHaveNoErrors) {
  auto r = diagnose({load("ib_write_bw-400g.txt"), load("nccl-tests-2node-allreduce.txt")}, 400);
  ASSERT_TRUE(r.ok());
  for (const auto& f : *r) EXPECT_NE(f.severity, Severity::kError) << f.id;
}

// Without --line-rate or a spec the reference is guessed, the nearest standard rate at or above
// the result: the finding says so (a 400G port at 200G would pass unnoticed); given, it does not.
TEST(Diagnose, AGuessedLineRateIsNamed) {
  ToolOutput half = load("ib_write_bw-400g.txt");
  const size_t at = half.text.find("391.24");
  ASSERT_NE(at, std::string::npos);
  half.text.replace(at, 6, "190.00");
  auto guessed = diagnose({half}, 0);
  ASSERT_TRUE(guessed.ok()) << format_diagnostics(guessed.errors());
  const Finding* f = nullptr;
  for (const auto& g : *guessed)
    if (g.id == "rdma-line-rate-guessed") f = &g;
  ASSERT_TRUE(f);
  ASSERT_EQ(f->evidence.size(), 1u);
  EXPECT_EQ(f->evidence[0].text, "190.0 Gb/s judged against 200 Gb/s (guessed)");
  EXPECT_GT(f->evidence[0].line, 0);
  auto given = diagnose({half}, 400);
  ASSERT_TRUE(given.ok());
  const auto got = ids(*given);
  EXPECT_FALSE(got.count("rdma-line-rate-guessed:info"));
  EXPECT_TRUE(got.count("rdma-below-line-rate:error"));
}

// With a RoCE plan and named rails, ip link output is judged against the plan: ens2np0 runs
// at 1500 (the planned 9000 does not fit), ens9np0 is missing, ens1np0 is as planned.
TEST(Diagnose, PlannedRailsInIpLink) {
  auto cat = *builtin_catalog();
  const Plan plan = testing::plan_of(
      "cluster: {gpu: h100-sxm, nodes: 8, nic: cx7-400g, nics_per_node: 3}\n"
      "fabric: {technology: roce, topology: clos2}\n",
      cat);
  auto r = diagnose({load("ip-d-link.txt")}, 400, &plan, &cat, {"ens1np0", "ens2np0", "ens9np0"});
  ASSERT_TRUE(r.ok()) << format_diagnostics(r.errors());
  const auto got = ids(*r);
  EXPECT_TRUE(got.count("rail-mtu-below-plan:error"));
  EXPECT_TRUE(got.count("rail-missing:warning"));
  EXPECT_FALSE(got.count("rail-down:error"));
  for (const auto& f : *r)
    if (f.id == "rail-mtu-below-plan") {
      ASSERT_EQ(f.evidence.size(), 1u);
      EXPECT_EQ(f.evidence[0].line, 7);
      EXPECT_EQ(f.evidence[0].text, "ens2np0 state UP mtu 1500");
    }
  // With the rails named, only they are held to the plan's MTU: the other interfaces' MTUs
  // (a management interface at 1500 beside jumbo rails, the usual set-up) are no mismatch.
  EXPECT_FALSE(got.count("mtu-mismatch:warning"));
  // Without names (or without a RoCE plan) the rails are not known: no rail findings, and the
  // MTUs of every interface that is up are compared.
  auto plain = diagnose({load("ip-d-link.txt")}, 400, &plan, &cat);
  ASSERT_TRUE(plain.ok());
  for (const auto& f : *plain) EXPECT_EQ(f.id.rfind("rail-", 0), std::string::npos) << f.id;
  EXPECT_TRUE(ids(*plain).count("mtu-mismatch:warning"));
}

// A jumbo interface that is down is no jumbo path: "no interface that is up uses jumbo frames"
// names the ones that are up, and an interface that is down is shown (info) where no plan
// names the rails to judge it.
TEST(Diagnose, InterfacesThatAreDownAreShownAndNotCountedAsJumbo) {
  const std::string text =
      "4: ens1f0np0: <BROADCAST,MULTICAST,UP,LOWER_UP> mtu 1500 qdisc mq state UP mode DEFAULT "
      "group default qlen 1000\n"
      "    link/ether b8:3f:d2:11:22:33 brd ff:ff:ff:ff:ff:ff promiscuity 0 minmtu 68 maxmtu 9978\n"
      "5: ens2f0np0: <BROADCAST,MULTICAST> mtu 9000 qdisc mq state DOWN mode DEFAULT group "
      "default qlen 1000\n"
      "    link/ether b8:3f:d2:11:22:34 brd ff:ff:ff:ff:ff:ff promiscuity 0 minmtu 68 maxmtu "
      "9978\n";
  ToolOutput t{"ip-link.txt", text, OutputKind::kUnknown};
  t.kind = detect_output_kind(t.text);
  auto r = diagnose({t}, 0);
  ASSERT_TRUE(r.ok()) << format_diagnostics(r.errors());
  std::map<std::string, std::string> evidence;
  for (const auto& f : *r)
    if (!f.evidence.empty()) evidence[f.id] = f.evidence.front().text;
  EXPECT_EQ(evidence["mtu-not-jumbo"], "ens1f0np0 mtu 1500");
  EXPECT_EQ(evidence["interface-down"], "ens2f0np0 state DOWN mtu 9000");
}

// A bandwidth above one port's line rate (the given one, or the fastest standard port) is not
// one port's: a finding, not "no findings".
TEST(Diagnose, RdmaAboveOnePortsLineRateIsAFinding) {
  auto t = load("ib_write_bw-400g.txt");
  const auto at = t.text.find("391.24");
  ASSERT_NE(at, std::string::npos);
  auto found = [&](const std::string& bw, double line_rate) {
    ToolOutput e = t;
    e.text.replace(at, 6, bw);
    auto r = diagnose({e}, line_rate);
    EXPECT_TRUE(r.ok());
    std::set<std::string> ids;
    if (r.ok())
      for (const auto& f : *r) ids.insert(f.id);
    return ids;
  };
  EXPECT_TRUE(found("8000.00", 0).count("rdma-above-line-rate"));
  EXPECT_TRUE(found("450.00", 400).count("rdma-above-line-rate"));
  EXPECT_FALSE(found("391.24", 400).count("rdma-above-line-rate"));
}

// Without a spec a nccl-tests run's bandwidth is not judged, and diagnose says so with the run's
// largest size (a run at 60 % of the plan had read "No findings."); with one, it is judged.
TEST(Diagnose, ANcclTestsRunWithoutASpecSaysItsBandwidthWasNotJudged) {
  const ToolOutput t = load("nccl-tests-2node-allreduce.txt");
  auto r = diagnose({t}, 0);
  ASSERT_TRUE(r.ok()) << format_diagnostics(r.errors());
  ASSERT_EQ(r->size(), 1u) << findings_text(*r);
  EXPECT_EQ((*r)[0].id, "busbw-not-judged");
  EXPECT_EQ((*r)[0].severity, Severity::kInfo);
  EXPECT_NE((*r)[0].evidence.front().text.find("at 8589934592 B, not compared: no --spec"),
            std::string::npos)
      << (*r)[0].evidence.front().text;
  EXPECT_NE(findings_text(*r).find("gpufabric diagnose --spec SPEC FILE"), std::string::npos);
}

// nccl-tests ends a run that failed with "HOST: Test NCCL failure FILE:LINE 'reason'": after
// some sizes it is a finding (it gave "No findings"), before any it is the file's error.
TEST(Diagnose, ANcclTestsRunThatFailedIsAFinding) {
  const std::string failure =
      "gpu-node-01: Test NCCL failure common.cu:1005 'unhandled system error (run with "
      "NCCL_DEBUG=INFO for details) / '\n";
  ToolOutput t = load("nccl-tests-2node-allreduce.txt");
  const size_t cut = t.text.find("   268435456");
  ASSERT_NE(cut, std::string::npos);
  t.text = t.text.substr(0, cut) + failure;
  auto r = diagnose({t}, 0);
  ASSERT_TRUE(r.ok()) << format_diagnostics(r.errors());
  std::string evidence;
  for (const auto& f : *r)
    if (f.id == "nccl-tests-failed") evidence = f.evidence.front().text;
  EXPECT_NE(evidence.find("Test NCCL failure common.cu:1005"), std::string::npos) << evidence;
  ToolOutput none = t;
  none.text = t.text.substr(0, t.text.find("           8 ")) + failure;
  auto e = diagnose({none}, 0);
  ASSERT_FALSE(e.ok());
  EXPECT_NE(e.errors()[0].message.find("the run failed before any size was timed"),
            std::string::npos)
      << e.errors()[0].message;
}

TEST(Diagnose, UnknownAndTruncatedFilesAreBadInput) {
  auto r = diagnose({{"x.txt", "what is this", OutputKind::kUnknown}}, 0);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.errors()[0].file, "x.txt");
  auto t = load("ib_write_bw-400g.txt");
  t.text = t.text.substr(0, t.text.find(" 65536"));
  EXPECT_FALSE(diagnose({t}, 400).ok());
}

namespace {
// 128 H100 servers on an InfiniBand fabric, the plan check's files are judged against.
Plan h100_ib_plan(const Catalog& cat) {
  return testing::plan_of(
      "cluster: {gpu: h100-sxm, nodes: 128, nic: cx7-400g}\nfabric: {technology: infiniband, "
      "switch: qm9700}\n",
      cat);
}

// An all_reduce_perf output as nccl-tests prints it: `nodes` x `gpus_per_node` rank lines on
// node00.. naming `device`, then each of `sizes` at `busbw` GB/s (algbw and time to match).
ToolOutput all_reduce_output(int nodes, int gpus_per_node, const std::string& device,
                             const std::vector<double>& sizes, double busbw) {
  const int ranks = nodes * gpus_per_node;
  std::string t =
      "# nThread 1 nGpus 1 minBytes 8 maxBytes 8589934592 step: 2(factor) warmup iters: 5 "
      "iters: 20 agg iters: 1 validation: 1 graph: 0\n#\n# Using devices\n";
  for (int r = 0; r < ranks; ++r)
    t += fmt::format("#  Rank {:2} Group  0 Pid {:6} on     node{:02} device  {} [0x18] {}\n", r,
                     1000 + r, r / gpus_per_node, r % gpus_per_node, device);
  t += "#\n#                                                              out-of-place       "
       "                in-place          \n"
       "#       size         count      type   redop    root     time   algbw   busbw #wrong "
       "    time   algbw   busbw #wrong\n"
       "#        (B)    (elements)                               (us)  (GB/s)  (GB/s)         "
       "   (us)  (GB/s)  (GB/s)       \n";
  for (double bytes : sizes) {
    const double alg = busbw * ranks / (2.0 * (ranks - 1)), us = bytes / alg / 1e3;
    t += fmt::format(
        "{:>12.0f} {:>13.0f}     float     sum      -1 {:8.1f} {:7.2f} {:7.2f}      0 "
        "{:8.1f} {:7.2f} {:7.2f}      0\n",
        bytes, bytes / 4, us, alg, busbw, us, alg, busbw);
  }
  ToolOutput o{"all_reduce_perf.out", t, OutputKind::kUnknown};
  o.kind = detect_output_kind(o.text);
  return o;
}
}  // namespace

TEST(Check, MeasurementsAgainstThePlan) {
  auto cat = *builtin_catalog();
  const Plan plan = h100_ib_plan(cat);
  auto r = check_measurements(plan, cat,
                              {load("nccl-tests-2node-allreduce.txt"), load("ib_write_bw-400g.txt"),
                               load("ib_write_bw-slow-mb.txt"), load("iperf3-tcp.json")},
                              0.15);
  ASSERT_TRUE(r.ok()) << format_diagnostics(r.errors());
  EXPECT_FALSE(r->pass());  // the slow RDMA link
  bool two_node_note = false, slow_flagged = false, fast_ok = false;
  for (const auto& c : r->rows) {
    if (c.collective == "all_reduce" && c.bytes >= 1e9) {
      EXPECT_TRUE(c.ok()) << c.bytes;
      two_node_note = two_node_note || c.note.find("2-node") != std::string::npos;
    }
    if (c.file.find("slow") != std::string::npos) slow_flagged = !c.ok();
    if (c.file.find("400g") != std::string::npos) fast_ok = c.ok();
  }
  EXPECT_TRUE(two_node_note);
  EXPECT_TRUE(slow_flagged);
  EXPECT_TRUE(fast_ok);
  // Rows of several tools' units say which (they had mixed GB/s and Gb/s in one column).
  EXPECT_NE(check_text(*r).find("units: busbw GB/s (nccl-tests); Gb/s (perftest bandwidth); Gb/s "
                                "(iperf3)\n"),
            std::string::npos)
      << check_text(*r);
  // A latency test beside them is shown, not judged and not dropped; its expectation and
  // ratio are "-".
  auto lat =
      check_measurements(plan, cat, {load("ib_write_bw-400g.txt"), load("ib_write_lat.txt")}, 0.15);
  ASSERT_TRUE(lat.ok()) << format_diagnostics(lat.errors());
  ASSERT_EQ(lat->rows.size(), 2u);
  EXPECT_FALSE(lat->rows[1].judged);
  EXPECT_EQ(lat->rows[1].what, "lat_us");
  EXPECT_TRUE(lat->pass());
  const std::string lat_text = check_text(*lat);
  EXPECT_NE(lat_text.find("          - -                         -  -  (t_typical, us: latency "
                          "is not judged without its path"),
            std::string::npos)
      << lat_text;
  EXPECT_TRUE(check_json(*lat)["rows"][1]["ratio"].is_null());
  EXPECT_TRUE(check_json(*lat)["rows"][1].contains("measured_latency_us"));
  // The same output twice would count its rows twice: refused.
  auto twice = check_measurements(
      plan, cat, {load("ib_write_bw-400g.txt"), load("ib_write_bw-400g.txt")}, 0.15);
  ASSERT_FALSE(twice.ok());
  EXPECT_NE(twice.errors()[0].message.find("the same output as"), std::string::npos);
  // A log is not a measurement check compares.
  EXPECT_FALSE(check_measurements(plan, cat, {load("nccl-debug-ib-retry.log")}, 0.15).ok());
}

// A run is judged by the NCCL release it printed where the spec names none (its tuner picks
// algorithms by its own terms), and the first row says so; where the spec names another, the
// spec's is kept and the row says which the run had.
TEST(Check, TheRunsNcclReleaseIsSimulatedUnlessTheSpecNamesOne) {
  auto cat = *builtin_catalog();
  Plan plan = h100_ib_plan(cat);
  ASSERT_FALSE(plan.nccl_given);
  ToolOutput run = load("nccl-tests-2node-allreduce.txt");
  run.text = "NCCL version 2.18.5+cuda12.2\n" + run.text;
  auto judged = check_measurements(plan, cat, {run}, 0.15);
  ASSERT_TRUE(judged.ok()) << format_diagnostics(judged.errors());
  ASSERT_FALSE(judged->rows.empty());
  EXPECT_NE(judged->rows[0].note.find("simulated with NCCL 2.18 as the run ran (" + run.file +
                                      ":1's 'NCCL version' 2.18.5; the spec names no "
                                      "cluster.nccl)"),
            std::string::npos)
      << judged->rows[0].note;
  for (size_t i = 1; i < judged->rows.size(); ++i)
    EXPECT_EQ(judged->rows[i].note.find("simulated with"), std::string::npos);
  // The same expectations as a spec naming 2.18.
  Plan named = plan;
  named.nccl = NcclRelease::kV2_18;
  named.nccl_given = true;
  auto as_named = check_measurements(named, cat, {run}, 0.15);
  ASSERT_TRUE(as_named.ok());
  ASSERT_EQ(as_named->rows.size(), judged->rows.size());
  for (size_t i = 0; i < judged->rows.size(); ++i)
    EXPECT_DOUBLE_EQ(as_named->rows[i].expected, judged->rows[i].expected) << i;
  EXPECT_EQ(as_named->rows[0].note.find("simulated with"), std::string::npos);
  // A spec naming another release keeps it, and says what the run had.
  Plan other = plan;
  other.nccl_given = true;
  auto kept = check_measurements(other, cat, {run}, 0.15);
  ASSERT_TRUE(kept.ok());
  EXPECT_NE(kept->rows[0].note.find("simulated with the spec's cluster.nccl 2.30; the run ran "
                                    "NCCL 2.18.5"),
            std::string::npos)
      << kept->rows[0].note;
}

// nccl-tests run with NCCL_DEBUG set prints NCCL's lines among its own: the file is a log and
// holds a table. check judges its rows (it had refused the file as a log), and diagnose reads
// both the log's warnings and the rows against the plan (it had read the log alone, and a run at
// 62 % of the plan gave a warning and exit 0). The same run with a slow 1 GiB row.
TEST(Check, ANcclTestsRunWithNcclDebugLinesIsJudged) {
  auto cat = *builtin_catalog();
  const Plan plan = h100_ib_plan(cat);
  ToolOutput run = load("nccl-tests-2node-allreduce.txt");
  const std::string rank15 = "#  Rank 15";
  const size_t after_ranks = run.text.find('\n', run.text.find(rank15)) + 1;
  ASSERT_NE(after_ranks, std::string::npos);
  run.text.insert(after_ranks,
                  "gpu-node-01:41823:41823 [0] NCCL INFO NET/IB : Using [0]mlx5_0:1/IB ; OOB "
                  "ens1:10.0.0.1<0>\n"
                  "gpu-node-02:39102:39200 [0] transport/net_ib.cc:1234 NCCL WARN NET/IB : Got "
                  "async event : port error\n");
  run.kind = detect_output_kind(run.text);
  EXPECT_EQ(run.kind, OutputKind::kNcclLog);
  EXPECT_TRUE(holds_nccl_tests_table(run));
  auto c = check_measurements(plan, cat, {run}, 0.15);
  ASSERT_TRUE(c.ok()) << format_diagnostics(c.errors());
  EXPECT_EQ(c->rows.size(), 5u);
  EXPECT_TRUE(c->pass());
  // The 1 GiB row at 62 % of what it had measured.
  const std::string gib = "  1073741824     268435456     float     sum      -1   4212.6  254.89  477.91";
  const size_t at = run.text.find(gib);
  ASSERT_NE(at, std::string::npos);
  run.text.replace(at, gib.size(),
                   "  1073741824     268435456     float     sum      -1   6794.5  158.03  296.30");
  auto slow = check_measurements(plan, cat, {run}, 0.15);
  ASSERT_TRUE(slow.ok()) << format_diagnostics(slow.errors());
  EXPECT_FALSE(slow->pass());
  auto d = diagnose({run}, 0, &plan, &cat);
  ASSERT_TRUE(d.ok()) << format_diagnostics(d.errors());
  // The log's port error (its own finding, no longer one of "NCCL reported warnings").
  EXPECT_TRUE(ids(*d).count("nccl-ib-async-event:error")) << ::testing::PrintToString(ids(*d));
  EXPECT_TRUE(ids(*d).count("busbw-below-expectation:error")) << ::testing::PrintToString(ids(*d));
  // A log without a table is still not a measurement.
  EXPECT_FALSE(holds_nccl_tests_table(load("nccl-debug-ib-retry.log")));
}

// perftest -b reports both directions' sum: judged against twice the port's line rate, a
// direction at a time (782 Gb/s on a 400G port had been ABOVE its line rate, and 600 Gb/s, 75 %
// a direction, ABOVE rather than BELOW).
TEST(Check, ABidirectionalPerftestIsJudgedADirectionAtATime) {
  auto cat = *builtin_catalog();
  const Plan plan = h100_ib_plan(cat);
  ToolOutput bi = load("ib_write_bw-400g.txt");
  const std::string test = "RDMA_Write BW Test";
  bi.text.replace(bi.text.find(test), test.size(), "RDMA_Write Bidirectional BW Test");
  auto c = check_measurements(plan, cat, {bi}, 0.15);
  ASSERT_TRUE(c.ok()) << format_diagnostics(c.errors());
  ASSERT_FALSE(c->rows.empty());
  const double uni = c->rows.back().measured;
  EXPECT_DOUBLE_EQ(c->rows.back().expected, 2 * 400 * 0.95);
  // The same figure bidirectional is half a direction's line rate: BELOW, not ABOVE.
  EXPECT_EQ(c->rows.back().mark, CheckMark::kBelow) << check_text(*c) << uni;
  auto d = diagnose({bi}, 400, nullptr, nullptr);
  ASSERT_TRUE(d.ok());
  EXPECT_TRUE(ids(*d).count("rdma-below-line-rate:error")) << ::testing::PrintToString(ids(*d));
  EXPECT_FALSE(ids(*d).count("rdma-above-line-rate:error"));
}

// nccl-tests times every size out of place and in place: a slow in-place run fails the row
// (it had passed behind its out-of-place twin), and the row says which run it judged.
TEST(Check, TheInPlaceRunIsJudgedToo) {
  auto cat = *builtin_catalog();
  const Plan plan = h100_ib_plan(cat);
  ToolOutput run = load("nccl-tests-2node-allreduce.txt");
  const std::string in_place = "4209.8  255.06  478.23";
  const size_t at = run.text.find(in_place);
  ASSERT_NE(at, std::string::npos);
  run.text.replace(at, in_place.size(), "6794.5  158.03  296.30");
  auto c = check_measurements(plan, cat, {run}, 0.15);
  ASSERT_TRUE(c.ok()) << format_diagnostics(c.errors());
  EXPECT_FALSE(c->pass());
  bool said = false;
  for (const auto& row : c->rows)
    if (row.bytes == 1073741824) {
      EXPECT_DOUBLE_EQ(row.measured, 296.30);
      said = row.note.find("the in-place run's; out of place 477.9") != std::string::npos;
    }
  EXPECT_TRUE(said) << check_text(*c);
}

// Every judged nccl-tests row says what it was expected as; where the plan reduces in the
// switches (SHARP: NVLS across nodes runs over CollNet) and a run reaches only what the fabric
// gives without them, the row says that SHARP is what is missing and how NCCL turns it on.
TEST(Check, ARunWithoutSharpIsToldSo) {
  auto cat = *builtin_catalog();
  const Plan plan = h100_ib_plan(cat);
  ASSERT_TRUE(plan.in_network_reduction);
  // 8 nodes of 8, 1 GiB and 8 GiB at `busbw`.
  auto run = [](double busbw) {
    return all_reduce_output(8, 8, "NVIDIA H100 80GB HBM3", {1073741824.0, 8589934592.0}, busbw);
  };
  // 360 GB/s: a ring or NVLS Tree over 8 x 400G, below NVLS over SHARP.
  auto r = check_measurements(plan, cat, {run(360)}, 0.15);
  ASSERT_TRUE(r.ok()) << format_diagnostics(r.errors());
  EXPECT_FALSE(r->pass());
  ASSERT_EQ(r->rows.size(), 2u);
  for (const auto& c : r->rows) {
    EXPECT_EQ(c.mark, CheckMark::kBelow);
    EXPECT_NE(c.expected_as.find("+SHARP"), std::string::npos) << c.expected_as;
    EXPECT_NE(c.note.find("NCCL_COLLNET_ENABLE=1"), std::string::npos) << c.note;
  }
  // Far below both: no such guess.
  auto slow = check_measurements(plan, cat, {run(150)}, 0.15);
  ASSERT_TRUE(slow.ok());
  for (const auto& c : slow->rows) EXPECT_EQ(c.note.find("SHARP"), std::string::npos) << c.note;
  // Without in-network reduction planned the same run is as expected, and said to be a plain one.
  Plan bare = plan;
  bare.in_network_reduction = false;
  auto plain = check_measurements(bare, cat, {run(360)}, 0.15);
  ASSERT_TRUE(plain.ok());
  EXPECT_TRUE(plain->pass());
  for (const auto& c : plain->rows) EXPECT_EQ(c.expected_as.find("SHARP"), std::string::npos);
  // diagnose --spec finds what check fails, at check's tolerance: 400 GB/s is 79 % of NVLS
  // over SHARP (diagnose once flagged only below 75 %), and its evidence says why.
  const ToolOutput between = run(400);
  auto judged = check_measurements(plan, cat, {between}, kDefaultBusbwTolerance);
  ASSERT_TRUE(judged.ok());
  EXPECT_FALSE(judged->pass());
  auto found = diagnose({between}, 0, &plan, &cat);
  ASSERT_TRUE(found.ok()) << format_diagnostics(found.errors());
  std::string evidence;
  for (const auto& f : *found)
    if (f.id == "busbw-below-expectation") evidence = f.evidence.front().text;
  EXPECT_NE(evidence.find("NCCL_COLLNET_ENABLE=1"), std::string::npos) << evidence;
}

// An NVL72 rack's 18 trays are one NVLink domain: NVLS there stays in the rack's switches, not
// over CollNet, so the expectation is not SHARP's though the plan has in-network reduction.
TEST(Check, NvlsInsideOneRackIsNotSharp) {
  auto cat = *builtin_catalog();
  const PlannedSpec p = testing::load_example("llama3-405b-gb200-576.yaml");
  ASSERT_TRUE(p.plan.in_network_reduction);
  const ToolOutput o = all_reduce_output(18, 4, "NVIDIA GB200", {8589934592.0}, 750);
  auto r = check_measurements(p.plan, cat, {o}, 0.15);
  ASSERT_TRUE(r.ok()) << format_diagnostics(r.errors());
  ASSERT_EQ(r->rows.size(), 1u);
  EXPECT_EQ(r->rows[0].expected_as.rfind("nvls/", 0), 0u) << r->rows[0].expected_as;
  EXPECT_EQ(r->rows[0].expected_as.find("SHARP"), std::string::npos) << r->rows[0].expected_as;
}

// check simulates the run as it ran, or says why it cannot: an output that does not say which
// collective (an all_gather once judged as an all_reduce failed at 0.6), whose rank lines are
// gone (its nodes unknown), or that used part of each node's GPUs is an error naming the file.
TEST(Check, RunsItCannotSimulateAsTheyRanAreErrors) {
  auto cat = *builtin_catalog();
  const Plan plan = h100_ib_plan(cat);
  const ToolOutput nccl = load("nccl-tests-2node-allreduce.txt");
  auto error_of = [&](ToolOutput t) {
    auto r = check_measurements(plan, cat, {t}, 0.15);
    EXPECT_FALSE(r.ok()) << t.file;
    return r.ok() ? std::string() : format_diagnostics(r.errors());
  };
  ToolOutput unnamed = nccl;
  unnamed.file = "run.txt";
  // The reduction column and the whole count say all_reduce (nccl-tests 2.x layout, root -1).
  EXPECT_TRUE(check_measurements(plan, cat, {unnamed}, 0.15).ok());
  // The same table with the part counts of all_gather (or alltoall): not guessed.
  ToolOutput part = unnamed;
  part.text.clear();
  std::istringstream rows(unnamed.text);
  for (std::string l; std::getline(rows, l);) {
    std::istringstream w(l);
    double bytes = 0, count = 0;
    std::string type, redop, rest;
    if (l.empty() || l[0] == '#' || !(w >> bytes >> count >> type >> redop)) {
      part.text += l + "\n";
      continue;
    }
    std::getline(w, rest);
    part.text += std::to_string(static_cast<long long>(bytes)) + " " +
                 std::to_string(static_cast<long long>(bytes / 4 / 16)) + " float none" + rest +
                 "\n";
  }
  std::string e = error_of(part);
  EXPECT_NE(e.find("run.txt: error: the output does not say which collective it ran"),
            std::string::npos)
      << e;
  // No rank lines: the nodes are unknown.
  ToolOutput bare = nccl;
  std::string kept;
  std::istringstream in(nccl.text);
  for (std::string l; std::getline(in, l);)
    if (l.find("#  Rank") == std::string::npos) kept += l + "\n";
  bare.text = kept;
  e = error_of(bare);
  EXPECT_NE(e.find("no rank lines"), std::string::npos) << e;
  // Four GPUs of each node: the 16 ranks on four hosts.
  ToolOutput four = nccl;
  for (int r = 0; r < 16; ++r) {
    const std::string from = r < 8 ? "on gpu-node-01" : "on gpu-node-02";
    const size_t at = four.text.find(from);
    ASSERT_NE(at, std::string::npos);
    four.text.replace(at, from.size(), "on gpu-host-" + std::to_string(r / 4));
  }
  e = error_of(four);
  EXPECT_NE(e.find("the run used 4 GPUs per node; the spec's nodes have 8"), std::string::npos)
      << e;
}

// A nccl-tests row that counted wrong results fails at any size, and so does a figure faster
// than the plan's links or one port can carry (the spec is not this cluster's, or the output was
// edited): each marked, and the verdict says why.
TEST(Check, WrongResultsAndFiguresAboveTheLinksFail) {
  auto cat = *builtin_catalog();
  const Plan plan = h100_ib_plan(cat);
  auto edit = [](ToolOutput t, const std::string& from, const std::string& to) {
    const size_t at = t.text.find(from);
    EXPECT_NE(at, std::string::npos) << from;
    if (at != std::string::npos) t.text.replace(at, from.size(), to);
    return t;
  };
  auto check = [&](const ToolOutput& t) {
    auto r = check_measurements(plan, cat, {t}, 0.15);
    EXPECT_TRUE(r.ok()) << format_diagnostics(r.errors());
    return r.ok() ? *r : CheckResult{};
  };
  const ToolOutput nccl = load("nccl-tests-2node-allreduce.txt");
  const CheckResult clean = check(nccl);
  EXPECT_TRUE(clean.pass()) << check_text(clean);

  // In place, at 1 KiB: below the judged sizes, still a failure.
  const CheckResult wrong =
      check(edit(nccl, "58.12    0.02    0.03      0", "58.12    0.02    0.03     12"));
  EXPECT_FALSE(wrong.pass());
  ASSERT_FALSE(wrong.rows.empty());
  EXPECT_EQ(wrong.rows.front().bytes, 1024);
  EXPECT_EQ(wrong.rows.front().mark, CheckMark::kWrong);
  std::string text = check_text(wrong);
  EXPECT_NE(text.find("WRONG"), std::string::npos) << text;
  EXPECT_NE(text.find("Verdict: FAIL (nccl-tests counted wrong results)"), std::string::npos)
      << text;
  EXPECT_EQ(check_json(wrong)["rows"][0]["mark"], "wrong");

  // Ten times the 1 GiB row's bandwidth, its time a tenth: consistent, and beyond the links.
  const CheckResult fast = check(edit(nccl, "4212.6  254.89  477.91", "421.26  2548.9  4779.1"));
  EXPECT_FALSE(fast.pass());
  text = check_text(fast);
  EXPECT_NE(text.find("ABOVE"), std::string::npos) << text;
  EXPECT_NE(text.find("(measurements above what the plan's links carry)"), std::string::npos)
      << text;
  // The 2-node note ("expected") is not beside an ABOVE it would contradict.
  for (const auto& c : fast.rows)
    if (c.mark == CheckMark::kAbove) {
      EXPECT_EQ(c.note.find("2-node"), std::string::npos) << c.note;
    }

  // perftest: one port at 100 times its line rate.
  const CheckResult port = check(edit(load("ib_write_bw-400g.txt"), "391.24", "39124.00"));
  ASSERT_EQ(port.rows.size(), 1u);
  EXPECT_EQ(port.rows[0].mark, CheckMark::kAbove);
  EXPECT_NE(port.rows[0].note.find("line rate"), std::string::npos);
}

// A log line or a file name need not be UTF-8, and JSON must be: diagnose --json and
// check --json once ended in nlohmann's type_error 316 (an internal error, exit 3).
TEST(Diagnose, JsonOfNonUtf8InputIsUtf8) {
  const std::string log =
      "gpu-node-02:1:1 [0] NCCL INFO NET/Socket : Using eth0\n"
      "gpu-node-02:1:1 [0] NCCL WARN Net : Connect to 10.0.0.\xff failed \xc3\n";
  auto r = diagnose({{"log-\xfe.txt", log, detect_output_kind(log)}}, 400);
  ASSERT_TRUE(r.ok()) << format_diagnostics(r.errors());
  std::string dumped;
  ASSERT_NO_THROW(dumped = findings_json(*r).dump());
  EXPECT_NE(dumped.find("10.0.0.\xEF\xBF\xBD failed \xEF\xBF\xBD\""), std::string::npos) << dumped;
  EXPECT_NE(dumped.find("log-\xEF\xBF\xBD.txt"), std::string::npos) << dumped;

  auto cat = *builtin_catalog();
  const Plan plan = h100_ib_plan(cat);
  auto t = load("ib_write_bw-400g.txt");
  t.file = "bw-\x80.txt";
  auto c = check_measurements(plan, cat, {t}, 0.15);
  ASSERT_TRUE(c.ok()) << format_diagnostics(c.errors());
  ASSERT_NO_THROW(dumped = check_json(*c).dump());
  EXPECT_NE(dumped.find("bw-\xEF\xBF\xBD.txt"), std::string::npos) << dumped;
}

TEST(Doctor, ReadsARecordedHost) {
  const auto fs = doctor(std::string(GPUFABRIC_SOURCE_DIR) + "/tests/data/sysfs");
  const auto got = ids(fs);
  EXPECT_TRUE(got.count("mtu-mismatch:warning"));
  EXPECT_TRUE(got.count("rdma-port-down:error"));
  // A machine without RDMA hardware: absent is information, not failure.
  const auto empty = doctor("/nonexistent-sysfs");
  for (const auto& f : empty) EXPECT_NE(f.severity, Severity::kError) << f.id;
  EXPECT_TRUE(ids(empty).count("rdma-absent:info"));
  // What doctor reads from the running host beside a recorded tree (tools on PATH, limits,
  // environment) says so: it is not the recorded host's.
  bool marked = false;
  for (const auto& f : fs)
    if (f.id == "tool-absent" || f.id == "tool-present")
      for (const auto& e : f.evidence) {
        EXPECT_NE(e.file.find("(this host, not the recorded tree)"), std::string::npos) << e.file;
        marked = true;
      }
  EXPECT_TRUE(marked);
}

// NCCL variables whose values can be checked on the host: algorithm and protocol names (a typo
// is NCCL's warning and ignored, or its refusal), and NCCL_IB_HCA / NCCL_SOCKET_IFNAME naming no
// device there. The evidence of NCCL_IB_DISABLE=1 is that variable, not every NCCL_* set.
TEST(Doctor, NcclVariablesAreCheckedAgainstNcclAndTheHost) {
  const std::string sysfs = std::string(GPUFABRIC_SOURCE_DIR) + "/tests/data/sysfs-mlx5";
  auto text_of = [](const std::vector<Finding>& fs, const std::string& id) {
    std::string t;
    for (const auto& f : fs)
      if (f.id == id)
        for (const auto& e : f.evidence) t += e.text + "\n";
    return t;
  };
  const auto bad = doctor(sysfs, {"NCCL_ALGO=Rnig", "NCCL_PROTO=LL129", "NCCL_IB_HCA=mlx5_7",
                                  "NCCL_SOCKET_IFNAME=eth9", "NCCL_IB_DISABLE=1", "PATH=/x"});
  const std::string invalid = text_of(bad, "nccl-variable-invalid");
  EXPECT_NE(invalid.find("'Rnig' is not one"), std::string::npos) << invalid;
  EXPECT_NE(invalid.find("'LL129' is not one"), std::string::npos) << invalid;
  const std::string absent = text_of(bad, "nccl-device-absent");
  EXPECT_NE(absent.find("NCCL_IB_HCA=mlx5_7: names none of this host's HCAs, mlx5_0, mlx5_1"),
            std::string::npos)
      << absent;
  // An exclusion list that leaves nothing: every HCA by prefix, or each by name.
  for (const std::string hca : {"^mlx5", "^mlx5_0,mlx5_1", "^=mlx5_0,mlx5_1"}) {
    const std::string all = text_of(doctor(sysfs, {"NCCL_IB_HCA=" + hca}), "nccl-device-absent");
    EXPECT_NE(all.find("NCCL_IB_HCA=" + hca + ": excludes every one of this host's HCAs"),
              std::string::npos)
        << hca << ": " << all;
  }
  EXPECT_NE(absent.find("NCCL_SOCKET_IFNAME=eth9"), std::string::npos) << absent;
  EXPECT_EQ(text_of(bad, "nccl-ib-disabled"), "NCCL_IB_DISABLE=1\n");
  // What NCCL takes: lists, exclusions, per-collective algorithms, prefixes, exact names, ports.
  const auto good =
      doctor(sysfs, {"NCCL_ALGO=allreduce:tree,ring;allgather:NVLS", "NCCL_PROTO=^LL128",
                     "NCCL_IB_HCA==mlx5_0:1,mlx5_1:1", "NCCL_SOCKET_IFNAME=ens", "NCCL_ALGO=PAT"});
  // Exclusions that leave a device: one HCA of two, one port of each, an exact name not there.
  for (const std::string hca : {"^mlx5_1", "^mlx5_0:1,mlx5_1:1", "^=mlx5"})
    EXPECT_EQ(text_of(doctor(sysfs, {"NCCL_IB_HCA=" + hca}), "nccl-device-absent"), "") << hca;
  for (const auto& f : good) {
    EXPECT_NE(f.id, "nccl-variable-invalid") << text_of(good, f.id);
    EXPECT_NE(f.id, "nccl-device-absent") << text_of(good, f.id);
  }
  EXPECT_FALSE(text_of(good, "nccl-variables").empty());
}

}  // namespace gf

namespace gf {
// With the plan, an NCCL log whose network uses fewer RDMA devices than a node's rail ports is
// an error naming them (a log using 2 of 8 had given no finding). The retry log's 4 RoCE
// devices against plans of 8 and of 4 NICs a node.
TEST(Diagnose, NcclUsingFewerNicsThanPlanned) {
  auto cat = *builtin_catalog();
  const ToolOutput log = load("nccl-debug-ib-retry.log");
  auto ids_with = [&](int nics) {
    const Plan plan = testing::plan_of(
        fmt::format("cluster: {{gpu: h100-sxm, nodes: 2, nic: cx7-400g, nics_per_node: {}}}\n"
                    "fabric: {{technology: roce}}\n",
                    nics),
        cat);
    auto r = diagnose({log}, 0, &plan, &cat);
    EXPECT_TRUE(r.ok());
    return r.ok() ? *r : std::vector<Finding>{};
  };
  const auto eight = ids_with(8);
  bool said = false;
  for (const auto& f : eight)
    if (f.id == "nccl-fewer-nics") {
      said = true;
      EXPECT_EQ(f.evidence.front().line, 3);
      EXPECT_NE(f.evidence.front().text.find("4 devices (mlx5_0, mlx5_1, mlx5_2, mlx5_3); the plan "
                                             "has 8 rail ports a node"),
                std::string::npos)
          << f.evidence.front().text;
    }
  EXPECT_TRUE(said);
  for (const auto& f : ids_with(4)) EXPECT_NE(f.id, "nccl-fewer-nics");
  auto alone = diagnose({log}, 0);  // no plan: nothing to compare with
  ASSERT_TRUE(alone.ok());
  for (const auto& f : *alone) EXPECT_NE(f.id, "nccl-fewer-nics");
}

TEST(Diagnose, BusbwAgainstTheSimulatedFabric) {
  auto cat = *builtin_catalog();
  // The file's rank lines name A100-SXM4-40GB, two on each of three hosts: the plan is of those.
  const Plan plan = testing::plan_of(
      "cluster: {gpu: a100-sxm-40g, nodes: 4, gpus_per_node: 2, nic: cx7-400g}\n"
      "fabric: {technology: infiniband}\n",
      cat);
  const std::string path =
      std::string(GPUFABRIC_SOURCE_DIR) + "/tests/data/outputs/all_reduce_perf-old-tagged.txt";
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  ToolOutput t{path, ss.str(), OutputKind::kNcclTests};
  auto r = diagnose({t}, 0, &plan, &cat);
  ASSERT_TRUE(r.ok()) << format_diagnostics(r.errors());
  bool found = false;
  for (const auto& f : *r) found = found || f.id == "busbw-below-expectation";
  EXPECT_TRUE(found);
  auto without = diagnose({t}, 0);  // no plan: no expectation to compare with
  ASSERT_TRUE(without.ok());
  for (const auto& f : *without) EXPECT_NE(f.id, "busbw-below-expectation");
  // The same output under a name that does not say which test it is: its layout (no root column)
  // does not tell all_reduce from reduce, so it is not compared, and the finding says why.
  ToolOutput unnamed{"run.txt", t.text, OutputKind::kNcclTests};
  auto r2 = diagnose({unnamed}, 0, &plan, &cat);
  ASSERT_TRUE(r2.ok());
  std::string why;
  for (const auto& f : *r2) {
    EXPECT_NE(f.id, "busbw-below-expectation");
    if (f.id == "busbw-not-compared") why = f.evidence.front().text;
  }
  EXPECT_NE(why.find("does not say which collective"), std::string::npos) << why;
  // A run 4x faster than the plan carries is a finding too, as check marks it.
  std::string fast = t.text;
  for (const auto& [from, to] : {std::pair{"56816   18.90   31.50", "14204   75.59  125.99"}}) {
    const size_t at = fast.find(from);
    ASSERT_NE(at, std::string::npos);
    fast.replace(at, std::string(from).size(), to);
  }
  auto r3 = diagnose({ToolOutput{path, fast, OutputKind::kNcclTests}}, 0, &plan, &cat);
  ASSERT_TRUE(r3.ok()) << format_diagnostics(r3.errors());
  bool above = false;
  for (const auto& f : *r3) above = above || f.id == "busbw-above-expectation";
  EXPECT_TRUE(above);
}
}  // namespace gf
