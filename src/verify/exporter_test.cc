#include "verify/exporter.h"

#include <gtest/gtest.h>

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
  const Plan plan = testing::plan_of("cluster: {gpu: h100-sxm, nodes: 4, nic: cx7-400g}\n", cat);
  const std::string rules = prometheus_rules(plan);
  for (const char* a :
       {"GpufabricPfcPauseStorm", "GpufabricLinkFlapping", "GpufabricPortErrors",
        "GpufabricCnpSurge", "GpufabricBusbwBelowBaseline", "GpufabricPortNotAsPlanned"})
    EXPECT_NE(rules.find(a), std::string::npos) << a;
  const auto dash = grafana_dashboard(plan);
  EXPECT_EQ(dash["panels"].size(), 6u);
}

}  // namespace gf
