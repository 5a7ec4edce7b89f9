#include "verify/exporter.h"

#include <gtest/gtest.h>
#include <sys/resource.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>

#include "../../tests/support.h"
#include "spec/spec.h"

namespace gf {
namespace {

const std::string kSys = std::string(GPUFABRIC_SOURCE_DIR) + "/tests/data/sysfs-mlx5";

// The value of the first sample line that starts with `prefix`, or -1.
double sample(const std::string& text, const std::string& prefix) {
  const auto p = text.find("\n" + prefix);
  if (p == std::string::npos) return -1;
  const auto end = text.find('\n', p + 1);
  const std::string line = text.substr(p + 1, end - p - 1);
  return std::stod(line.substr(line.rfind(' ') + 1));
}

// A copy of the recorded host in a fresh temporary folder, to be changed by a test.
std::filesystem::path copy_of_recorded_host(const std::string& name) {
  namespace fs = std::filesystem;
  const fs::path d =
      fs::temp_directory_path() / ("gf_exporter_" + name + "_" + std::to_string(getpid()));
  fs::remove_all(d);
  fs::copy(kSys, d, fs::copy_options::recursive);
  return d;
}

// Peak resident memory of this process so far, in bytes.
double peak_rss_bytes() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return static_cast<double>(u.ru_maxrss) * 1024;  // Linux reports KiB
}

}  // namespace

TEST(Exporter, CountersFromARecordedHost) {
  ExporterOptions o;
  o.sysfs = kSys;
  o.ethtool_dir = kSys + "/ethtool";
  std::vector<std::string> log;
  const std::string t = collect_metrics(o, log);
  // port_xmit_data counts 4-byte words.
  EXPECT_DOUBLE_EQ(sample(t, "gpufabric_rdma_port_transmit_bytes_total{device=\"mlx5_0\""), 4e9);
  EXPECT_DOUBLE_EQ(sample(t, "gpufabric_rdma_cnp_handled_total{device=\"mlx5_0\""), 5678);
  EXPECT_DOUBLE_EQ(sample(t, "gpufabric_rdma_port_rate_bytes{device=\"mlx5_0\""), 400e9 / 8);
  EXPECT_DOUBLE_EQ(sample(t, "gpufabric_net_mtu_bytes{interface=\"ens1np0\""), 1500);
  EXPECT_DOUBLE_EQ(sample(t,
                          "gpufabric_net_pfc_pause_frames_total{interface=\"ens0np0\",priority="
                          "\"3\",direction=\"rx\""),
                   8811209);
  // The malformed counter is skipped with a log line, the others still exported.
  ASSERT_EQ(log.size(), 1u);
  EXPECT_NE(log[0].find("port_rcv_errors"), std::string::npos);
  EXPECT_EQ(sample(t, "gpufabric_rdma_port_receive_errors_total{device=\"mlx5_1\""), -1);
  EXPECT_DOUBLE_EQ(sample(t, "gpufabric_exporter_skipped_sources"), 1);
  // No tree at all: an empty scrape, never a crash.
  ExporterOptions none;
  none.sysfs = "/nonexistent";
  none.ethtool_dir = "/nonexistent";
  std::vector<std::string> log2;
  EXPECT_NE(collect_metrics(none, log2).find("gpufabric_exporter_skipped_sources"),
            std::string::npos);
}

// A device an earlier scrape read that is gone (a NIC off the bus, a driver unloaded) keeps
// its port's series at port_up 0 and is a skipped source, logged once; its malformed counter
// does not "recover". (Its series had vanished, and the log said the counter had recovered.)
TEST(Exporter, ADeviceThatDisappearsIsDownNotRecovered) {
  namespace fs = std::filesystem;
  const fs::path d = copy_of_recorded_host("gone");
  ExporterOptions o;
  o.sysfs = d.string();
  o.ethtool_dir = (d / "ethtool").string();
  SourceHealth health;
  std::vector<std::string> log;
  const std::string before = collect_metrics(o, health, log);
  EXPECT_DOUBLE_EQ(sample(before, "gpufabric_rdma_port_up{device=\"mlx5_1\""), 1);
  ASSERT_EQ(log.size(), 1u);  // the recorded host's malformed counter of mlx5_1
  fs::remove_all(d / "class/infiniband/mlx5_1");
  log.clear();
  const std::string after = collect_metrics(o, health, log);
  EXPECT_DOUBLE_EQ(sample(after, "gpufabric_rdma_port_up{device=\"mlx5_1\""), 0);
  EXPECT_DOUBLE_EQ(sample(after, "gpufabric_rdma_port_up{device=\"mlx5_0\""), 1);
  ASSERT_EQ(log.size(), 1u) << log.back();
  EXPECT_EQ(log[0].rfind("skipped device mlx5_1: no longer in ", 0), 0u) << log[0];
  log.clear();
  collect_metrics(o, health, log);  // still gone: said once
  EXPECT_TRUE(log.empty());
  fs::remove_all(d);
}

// An interface whose speed the kernel does not know (a virtual one, a link down) reads -1: no
// speed series, and no skipped source (a fleet of VMs had read a failed source on every host).
TEST(Exporter, AnUnknownSpeedIsNoSkippedSource) {
  namespace fs = std::filesystem;
  const fs::path d = copy_of_recorded_host("unknown-speed");
  ExporterOptions o;
  o.sysfs = d.string();
  o.ethtool_dir = (d / "ethtool").string();
  std::vector<std::string> before_log;
  const std::string before = collect_metrics(o, before_log);
  fs::path net;
  for (const auto& e : fs::directory_iterator(d / "class/net"))
    if (fs::exists(e.path() / "speed") && e.path().filename() != "lo") net = e.path();
  ASSERT_FALSE(net.empty());
  std::ofstream(net / "speed") << "-1\n";
  std::vector<std::string> log;
  const std::string t = collect_metrics(o, log);
  EXPECT_EQ(log.size(), before_log.size()) << (log.empty() ? "" : log.back());
  EXPECT_EQ(sample(t, "gpufabric_exporter_skipped_sources"),
            sample(before, "gpufabric_exporter_skipped_sources"));
  const std::string series =
      "gpufabric_net_speed_bytes{interface=\"" + net.filename().string() + "\"";
  EXPECT_NE(before.find(series), std::string::npos);
  EXPECT_EQ(t.find(series), std::string::npos) << t;
  fs::remove_all(d);
}

TEST(Exporter, EndlessAndHugeFilesAreSkippedPromptly) {
  // A counter that is a link to /dev/zero, a sparse 1 GiB counter, a port state and an ethtool
  // dump that never end, a baseline that is a device: each is skipped with its log line, the
  // scrape returns promptly, memory stays flat, and every other counter is still exported.
  namespace fs = std::filesystem;
  const fs::path d = copy_of_recorded_host("endless");
  const fs::path port0 = d / "class/infiniband/mlx5_0/ports/1";
  for (const fs::path& p :
       {port0 / "counters/port_xmit_data", port0 / "state", d / "ethtool/ens0np0.txt"}) {
    fs::remove(p);
    fs::create_symlink("/dev/zero", p);
  }
  const fs::path huge = d / "class/infiniband/mlx5_1/ports/1/counters/symbol_error";
  fs::resize_file(huge, std::uintmax_t{1} << 30);  // sparse: no disk used
  ExporterOptions o;
  o.sysfs = d.string();
  o.ethtool_dir = (d / "ethtool").string();
  o.baseline_file = "/dev/zero";
  const double rss_before = peak_rss_bytes();
  const auto start = std::chrono::steady_clock::now();
  std::vector<std::string> log;
  const std::string t = collect_metrics(o, log);
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_LT(seconds, 2.0);  // a few ms of reading; before, the scrape never returned
  EXPECT_LT(peak_rss_bytes() - rss_before, 64.0 * 1024 * 1024);  // before: gigabytes
  std::string all;
  for (const auto& l : log) all += l + "\n";
  for (const fs::path& p :
       {port0 / "counters/port_xmit_data", port0 / "state", d / "ethtool/ens0np0.txt"})
    EXPECT_NE(all.find("skipped " + p.string() + ": file goes on past the limit"),
              std::string::npos)
        << all;
  EXPECT_NE(all.find("skipped " + huge.string() + ": file is 1 GiB"), std::string::npos) << all;
  EXPECT_NE(all.find("skipped baseline /dev/zero"), std::string::npos) << all;
  EXPECT_EQ(sample(t, "gpufabric_rdma_port_transmit_bytes_total{device=\"mlx5_0\""), -1);
  EXPECT_EQ(sample(t, "gpufabric_rdma_port_up{device=\"mlx5_0\""), -1);
  EXPECT_EQ(sample(t, "gpufabric_rdma_port_symbol_errors_total{device=\"mlx5_1\""), -1);
  EXPECT_EQ(sample(t, "gpufabric_net_pfc_pause_frames_total{interface=\"ens0np0\""), -1);
  EXPECT_DOUBLE_EQ(sample(t, "gpufabric_rdma_port_transmit_bytes_total{device=\"mlx5_1\""),
                   4000000004);
  EXPECT_DOUBLE_EQ(sample(t, "gpufabric_rdma_cnp_handled_total{device=\"mlx5_0\""), 5678);
  // The malformed counter of the recorded host, and the five above.
  EXPECT_DOUBLE_EQ(sample(t, "gpufabric_exporter_skipped_sources"), 6);
  fs::remove_all(d);
}

TEST(Exporter, BaselineMustBeACheckResult) {
  namespace fs = std::filesystem;
  const fs::path p = fs::temp_directory_path() / ("gf_bad_baseline_" + std::to_string(getpid()));
  auto message_of = [&](const std::string& text) {
    std::ofstream(p) << text;
    auto r = read_baseline(p.string(), "--baseline");
    return r ? std::string("ok") : format_diagnostics(r.errors());
  };
  EXPECT_NE(message_of("{\"rows\": [").find("not valid JSON: parse error at line 1"),
            std::string::npos);
  EXPECT_NE(message_of("[1, 2]").find("no \"rows\" list"), std::string::npos);
  EXPECT_NE(message_of(R"({"rows": [{"collective": "all_reduce", "bytes": 1,
      "measured_busbw_gbs": "fast", "expected_busbw_gbs": 1, "ratio": 1}]})")
                .find("rows[0].measured_busbw_gbs: expected a number"),
            std::string::npos);
  // Rows of bandwidth tests (no bus bandwidth) beside an nccl-tests row are not exported; a
  // result of them alone has nothing to export, and the below-baseline alert could never fire:
  // refused (it had been taken silently), as an acceptance results folder's result is.
  const std::string ib_row = R"({"file": "ib.txt", "collective": "ib_write_bw", "bytes": 65536,
      "measured_gbps": 390, "expected_gbps": 400, "ratio": 0.97})";
  const std::string nccl_row = R"({"collective": "all_reduce", "bytes": 1073741824,
      "measured_busbw_gbs": 470, "expected_busbw_gbs": 480, "ratio": 0.98})";
  EXPECT_EQ(message_of("{\"verdict\": \"pass\", \"rows\": [" + ib_row + ", " + nccl_row + "]}"),
            "ok");
  EXPECT_NE(message_of("{\"verdict\": \"pass\", \"rows\": [" + ib_row + "]}")
                .find("no nccl-tests row (measured_busbw_gbs)"),
            std::string::npos);
  EXPECT_NE(message_of(R"({"verdict": "pass", "suspects": [], "rows": [{"what": "link", "id":
      "T0001", "measured": 390, "expected": 380, "ok": true, "judged": true}]})")
                .find("check's result of an acceptance results folder"),
            std::string::npos);
  fs::remove(p);
  const std::string missing =
      format_diagnostics(read_baseline("/nonexistent", "--baseline").errors());
  EXPECT_EQ(missing.find("json"), std::string::npos) << missing;
  EXPECT_NE(missing.find("/nonexistent: error: --baseline: cannot read the file"),
            std::string::npos)
      << missing;
}

TEST(Exporter, AFailingSourceIsLoggedWhenItFailsAndWhenItRecovers) {
  namespace fs = std::filesystem;
  const fs::path d = copy_of_recorded_host("health");
  const fs::path bad = d / "class/infiniband/mlx5_1/ports/1/counters/port_rcv_errors";
  ExporterOptions o;
  o.sysfs = d.string();
  o.ethtool_dir = (d / "ethtool").string();
  SourceHealth health;
  std::vector<std::string> log;
  for (int i = 0; i < 50; ++i) {
    const std::string t = collect_metrics(o, health, log);
    EXPECT_DOUBLE_EQ(sample(t, "gpufabric_exporter_skipped_sources"), 1);  // every scrape
  }
  ASSERT_EQ(log.size(), 1u);  // but one log line, not 50
  EXPECT_EQ(log[0], "skipped " + bad.string() + ": 'garbage' is not a counter");
  std::ofstream(bad) << "7\n";
  log.clear();
  for (int i = 0; i < 10; ++i) {
    const std::string t = collect_metrics(o, health, log);
    EXPECT_DOUBLE_EQ(sample(t, "gpufabric_exporter_skipped_sources"), 0);
  }
  ASSERT_EQ(log.size(), 1u);
  EXPECT_EQ(log[0], bad.string() + " recovered");
  // Failing again is news again; a second source failing is logged on its own.
  std::ofstream(bad) << "-1\n";
  fs::remove(d / "ethtool/ens0np0.txt");
  fs::create_symlink("/dev/zero", d / "ethtool/ens0np0.txt");
  log.clear();
  for (int i = 0; i < 10; ++i) collect_metrics(o, health, log);
  ASSERT_EQ(log.size(), 2u);
  EXPECT_EQ(log[0], "skipped " + bad.string() + ": '-1' is not a counter");
  EXPECT_NE(log[1].find("ens0np0.txt: file goes on past the limit"), std::string::npos);
  fs::remove_all(d);
}

TEST(Exporter, AnInterfaceNameIsNoShellCommand) {
  // Without --ethtool-dir the exporter runs 'ethtool -S IFACE'; a name from a recorded tree
  // must reach ethtool as one word, never run as a command.
  namespace fs = std::filesystem;
  const fs::path d = copy_of_recorded_host("quote");
  fs::create_directories(d / "class/net/x';touch ran;'");  // a name holds no '/'
  ExporterOptions o;
  o.sysfs = d.string();
  const fs::path cwd = fs::current_path();
  fs::current_path(d);  // where the command would run
  std::vector<std::string> log;
  collect_metrics(o, log);
  fs::current_path(cwd);
  EXPECT_FALSE(fs::exists(d / "ran"));
  fs::remove_all(d);
}

TEST(Exporter, PortsAgainstThePlan) {
  auto cat = *builtin_catalog();
  const Plan plan = testing::plan_of(
      "cluster: {gpu: h100-sxm, nodes: 64, nic: cx7-400g}\nfabric: {technology: roce, switch: "
      "sn5600}\n",
      cat);
  ExporterOptions o;
  o.sysfs = kSys;
  o.ethtool_dir = kSys + "/ethtool";
  o.plan = &plan;
  o.catalog = &cat;
  o.node = "node001";
  std::vector<std::string> log;
  const std::string t = collect_metrics(o, log);
  EXPECT_NE(
      t.find("gpufabric_port_info{device=\"mlx5_1\",port=\"1\",rail=\"1\",leaf=\"su01-r1-leaf\""),
      std::string::npos)
      << t;
  EXPECT_DOUBLE_EQ(sample(t, "gpufabric_port_speed_as_planned{device=\"mlx5_0\""), 1);
  EXPECT_DOUBLE_EQ(sample(t, "gpufabric_port_mtu_as_planned{interface=\"ens0np0\""), 1);
  EXPECT_DOUBLE_EQ(sample(t, "gpufabric_port_mtu_as_planned{interface=\"ens1np0\""), 0);
}

TEST(Exporter, BaselineAndRules) {
  const std::string path = (std::filesystem::temp_directory_path() / "gf_baseline.json").string();
  std::ofstream(path) << R"({"verdict": "fail", "rows": [{"collective": "all_reduce",
      "bytes": 1073741824, "measured_busbw_gbs": 300, "expected_busbw_gbs": 375, "ratio": 0.8,
      "ok": false}]})";
  ExporterOptions o;
  o.sysfs = "/nonexistent";
  o.ethtool_dir = "/nonexistent";
  o.baseline_file = path;
  std::vector<std::string> log;
  const std::string t = collect_metrics(o, log);
  EXPECT_DOUBLE_EQ(sample(t, "gpufabric_check_ratio{collective=\"all_reduce\""), 0.8);
  EXPECT_DOUBLE_EQ(sample(t, "gpufabric_baseline_busbw_bytes_per_second{"), 300e9);
  std::filesystem::remove(path);
  auto cat = *builtin_catalog();
  const Plan plan = testing::plan_of(
      "cluster: {gpu: h100-sxm, nodes: 4, nic: cx7-400g}\nfabric: {technology: roce}\n", cat);
  const std::string rules = prometheus_rules(plan);
  for (const char* a :
       {"GpufabricPfcPauseStorm", "GpufabricLinkFlapping", "GpufabricPortErrors",
        "GpufabricCnpSurge", "GpufabricBusbwBelowBaseline", "GpufabricPortNotAsPlanned"})
    EXPECT_NE(rules.find(a), std::string::npos) << a;
  EXPECT_NE(rules.find("[5m])) > 1000\n"), std::string::npos) << rules;
  EXPECT_NE(rules.find("cnp_handled_total[5m]) > 100000\n"), std::string::npos) << rules;
  const auto dash = grafana_dashboard(plan);
  EXPECT_EQ(dash["panels"].size(), 6u);
  // InfiniBand has no PFC pause frames and no DCQCN: neither their rules nor their panels.
  const Plan ib = testing::plan_of(
      "cluster: {gpu: h100-sxm, nodes: 4, nic: cx7-400g}\nfabric: {technology: infiniband}\n", cat);
  const std::string ib_rules = prometheus_rules(ib);
  EXPECT_EQ(ib_rules.find("GpufabricPfcPauseStorm"), std::string::npos);
  EXPECT_EQ(ib_rules.find("GpufabricCnpSurge"), std::string::npos);
  EXPECT_NE(ib_rules.find("GpufabricPortErrors"), std::string::npos);
  const auto ib_dash = grafana_dashboard(ib);
  ASSERT_EQ(ib_dash["panels"].size(), 4u);
  for (const auto& p : ib_dash["panels"]) {
    EXPECT_EQ(p["title"].get<std::string>().find("PFC"), std::string::npos);
    EXPECT_EQ(p["title"].get<std::string>().find("CNP"), std::string::npos);
  }
}

// dashboard on RoCE: the congestion rules' thresholds are twice the rates one NIC port saw in the
// packet-level run (at least one a second), each rule with the comment that says so; the basis
// comes from the run qos makes by default; InfiniBand has none, and the rules say why.
TEST(Exporter, RoceRulesFromThePacketLevelRun) {
  auto cat = *builtin_catalog();
  QosAlertBasis b;
  b.traffic = "alltoall of 64 MiB per rank over 64 GPUs (8 nodes)";
  b.settings = "ECN ...";
  b.run_s = 0.005;
  b.pause_rx_per_s = 1234;
  b.ecn_marked_per_s = 0.2;
  b.cnp_sent_per_s = 50000;
  const Plan plan = testing::plan_of(
      "cluster: {gpu: h100-sxm, nodes: 8, nic: cx7-400g}\nfabric: {technology: roce, topology: "
      "clos2, switch: arista-7060x6}\n",
      cat);
  const std::string rules = prometheus_rules(plan, b);
  EXPECT_NE(rules.find("priority=\"3\"}[5m])) > 2468\n"), std::string::npos) << rules;
  // 2 x 0.2 is under the floor, which for DCQCN's own signals scales with the port's packets.
  EXPECT_NE(rules.find("(rate(gpufabric_rdma_ecn_marked_packets_total[5m])) > 1\n"),
            std::string::npos);  // no line rate given: kAlertFloorPerS alone
  QosAlertBasis line = b;
  line.line_packets_per_s = 12e6;  // a 400G port's full-MTU packets
  const std::string scaled = prometheus_rules(plan, line);
  EXPECT_NE(scaled.find("(rate(gpufabric_rdma_ecn_marked_packets_total[5m])) > 1200\n"),
            std::string::npos)
      << scaled;
  EXPECT_NE(scaled.find("at least 1200/s (0.0001 of the 12000000 full-MTU packets a second"),
            std::string::npos)
      << scaled;
  EXPECT_NE(scaled.find("priority=\"3\"}[5m])) > 2468\n"), std::string::npos);  // PFC: as before
  EXPECT_NE(scaled.find("(rate(gpufabric_rdma_cnp_sent_total[5m])) > 100000\n"),
            std::string::npos);  // 2 x 50000 is above the floor
  EXPECT_NE(rules.find("(rate(gpufabric_rdma_cnp_sent_total[5m])) > 100000\n"), std::string::npos);
  EXPECT_NE(rules.find("at most 1234/s on one NIC port at the planned load"), std::string::npos);
  // The storm rule's fixed 1000/s sits below the derived rule's 2 x 1234/s: raised to twice
  // that, so it fires neither at the plan's own load nor with the derived warning; the CNP
  // surge's 100000/s likewise to 2 x (2 x 50000).
  EXPECT_NE(rules.find("[5m])) > 4936\n        for: 2m"), std::string::npos) << rules;
  EXPECT_NE(rules.find("cnp_handled_total[5m]) > 200000\n"), std::string::npos) << rules;
  QosAlertBasis busy = b;
  busy.cnp_sent_per_s = 671208;
  EXPECT_NE(prometheus_rules(plan, busy).find("cnp_handled_total[5m]) > 2684832\n"),
            std::string::npos);
  EXPECT_NE(rules.find("alltoall of 64 MiB per rank over 64 GPUs (8 nodes)"), std::string::npos);
  EXPECT_DOUBLE_EQ(alert_threshold(0), kAlertFloorPerS);
  EXPECT_DOUBLE_EQ(alert_threshold(10), 20);
  // The basis of a real plan: the default run, no pause on a non-blocking rail fabric.
  const Fabric fab = Fabric::build(plan, cat);
  auto basis = qos_alert_basis(plan, cat, fab);
  ASSERT_TRUE(basis.ok()) << format_diagnostics(basis.errors());
  EXPECT_GT(basis->run_s, 0);
  EXPECT_EQ(basis->pause_rx_per_s, 0);
  // 400 Gb/s of 4096-byte payloads with RoCE's headers and the Ethernet gap: ~12M a second.
  EXPECT_NEAR(basis->line_packets_per_s, 11.97e6, 0.01e6);
  EXPECT_NE(basis->traffic.find("alltoall of 64 MiB per rank"), std::string::npos);
  const Plan ib = testing::plan_of(
      "cluster: {gpu: h100-sxm, nodes: 4, nic: cx7-400g}\nfabric: {technology: infiniband}\n", cat);
  auto none = qos_alert_basis(ib, cat, Fabric::build(ib, cat));
  ASSERT_FALSE(none.ok());
  const std::string ib_rules = prometheus_rules(ib, std::nullopt, none.errors().front().message);
  EXPECT_EQ(ib_rules.find("AbovePlan"), std::string::npos);
  EXPECT_NE(ib_rules.find("# No thresholds from the packet-level run: infiniband"),
            std::string::npos);
}

}  // namespace gf
