// Parsers on outputs of the real tools (tests/data/outputs), truncated and garbage input.
#include "verify/parsers.h"

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

namespace gf {
namespace {

std::string fixture(const std::string& name) {
  std::ifstream in(std::string(GPUFABRIC_SOURCE_DIR) + "/tests/data/outputs/" + name);
  EXPECT_TRUE(in) << name;
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// The first `n` lines of a text: a run cut short.
std::string head(const std::string& s, int n) {
  size_t p = 0;
  for (int i = 0; i < n && p != std::string::npos; ++i) p = s.find('\n', p + 1);
  return s.substr(0, p);
}

}  // namespace

TEST(Parsers, DetectsEveryKind) {
  EXPECT_EQ(detect_output_kind(fixture("nccl-tests-2node-allreduce.txt")), OutputKind::kNcclTests);
  EXPECT_EQ(detect_output_kind(fixture("nccl-tests-old-tagged.txt")), OutputKind::kNcclTests);
  EXPECT_EQ(detect_output_kind(fixture("ib_write_bw-400g.txt")), OutputKind::kPerftest);
  EXPECT_EQ(detect_output_kind(fixture("ib_write_lat.txt")), OutputKind::kPerftest);
  EXPECT_EQ(detect_output_kind(fixture("iperf3-tcp.json")), OutputKind::kIperf3);
  EXPECT_EQ(detect_output_kind(fixture("nccl-debug-ib-retry.log")), OutputKind::kNcclLog);
  EXPECT_EQ(detect_output_kind(fixture("nvidia-smi-topo.txt")), OutputKind::kTopo);
  EXPECT_EQ(detect_output_kind(fixture("ibv_devinfo.txt")), OutputKind::kIbvDevinfo);
  EXPECT_EQ(detect_output_kind(fixture("ethtool-S-pfc-storm.txt")), OutputKind::kEthtool);
  EXPECT_EQ(detect_output_kind(fixture("ip-d-link.txt")), OutputKind::kIpLink);
  EXPECT_EQ(detect_output_kind("hello world"), OutputKind::kUnknown);
}

TEST(Parsers, NcclTestsCurrentLayout) {
  auto r = parse_nccl_tests(fixture("nccl-tests-2node-allreduce.txt"), "f");
  ASSERT_TRUE(r.ok()) << format_diagnostics(r.errors());
  EXPECT_EQ(r->ranks, 16);
  EXPECT_EQ(r->nodes, 2);
  ASSERT_EQ(r->rows.size(), 8u);
  EXPECT_DOUBLE_EQ(r->rows.back().bytes, 8589934592.0);
  EXPECT_DOUBLE_EQ(r->rows.back().time_us, 32017);  // %.0f width
  EXPECT_DOUBLE_EQ(r->rows.back().busbw_gbs, 503.04);
  EXPECT_TRUE(r->has_avg);
  EXPECT_DOUBLE_EQ(r->avg_busbw_gbs, 189.283);
}

TEST(Parsers, NcclTestsOldLayoutWithMpirunTags) {
  auto r = parse_nccl_tests(fixture("nccl-tests-old-tagged.txt"), "f");
  ASSERT_TRUE(r.ok()) << format_diagnostics(r.errors());
  EXPECT_EQ(r->ranks, 6);
  EXPECT_EQ(r->nodes, 3);
  ASSERT_EQ(r->rows.size(), 6u);
  EXPECT_EQ(r->rows[0].wrong, "5e-07");  // the float error column
  EXPECT_DOUBLE_EQ(r->rows[3].time_us, 14233);
}

TEST(Parsers, NcclTestsDuplicatedBlocksAndTruncation) {
  const std::string one = fixture("nccl-tests-2node-allreduce.txt");
  auto twice = parse_nccl_tests(one + one, "f");  // two ranks printed the table
  ASSERT_TRUE(twice.ok());
  EXPECT_EQ(twice->rows.size(), 8u);
  // Cut in the middle of a row: an error naming the line.
  const std::string cut = one.substr(0, one.find("1390.5") + 3);
  auto bad = parse_nccl_tests(cut, "run.out");
  ASSERT_FALSE(bad.ok());
  EXPECT_GT(bad.errors()[0].line, 20);
  EXPECT_NE(format_diagnostic(bad.errors()[0]).find("truncated"), std::string::npos);
  // Header only.
  EXPECT_FALSE(parse_nccl_tests(head(one, 22), "f").ok());
  EXPECT_FALSE(parse_nccl_tests("garbage\n\x01\x02", "f").ok());
}

TEST(Parsers, Perftest) {
  auto bw = parse_perftest(fixture("ib_write_bw-400g.txt"), "f");
  ASSERT_TRUE(bw.ok()) << format_diagnostics(bw.errors());
  EXPECT_EQ(bw->device, "mlx5_0");
  EXPECT_EQ(bw->link_type, "IB");
  EXPECT_EQ(bw->mtu, 4096);
  ASSERT_EQ(bw->rows.size(), 1u);
  EXPECT_DOUBLE_EQ(bw->rows[0].bw_avg_gbps, 391.24);
  EXPECT_EQ(bw->warnings.size(), 2u);  // "BW peak won't be measured", CPU frequency
  auto mb = parse_perftest(fixture("ib_write_bw-slow-mb.txt"), "f");
  ASSERT_TRUE(mb.ok());
  EXPECT_NEAR(mb->rows[0].bw_avg_gbps, 24302.17 * 8 * 1.048576 / 1000, 1e-6);  // MiB/s
  auto lat = parse_perftest(fixture("ib_write_lat.txt"), "f");
  ASSERT_TRUE(lat.ok());
  EXPECT_TRUE(lat->latency);
  EXPECT_DOUBLE_EQ(lat->rows[0].t_typical_us, 1.07);
  auto json = parse_perftest(
      R"({"results": {"MsgSize": 65536, "n_iterations": 5000, "BW_peak": 0, "BW_average": 392.5, "MsgRate": 0.74}})",
      "f");
  ASSERT_TRUE(json.ok());
  EXPECT_DOUBLE_EQ(json->rows[0].bw_avg_gbps, 392.5);
  EXPECT_FALSE(parse_perftest(head(fixture("ib_write_bw-400g.txt"), 19), "f").ok());
}

TEST(Parsers, Iperf3) {
  auto r = parse_iperf3(fixture("iperf3-tcp.json"), "f");
  ASSERT_TRUE(r.ok()) << format_diagnostics(r.errors());
  EXPECT_EQ(r->protocol, "TCP");
  EXPECT_EQ(r->streams, 8);
  EXPECT_NEAR(r->received_bps, 158.96e9, 0.01e9);
  EXPECT_DOUBLE_EQ(r->retransmits, 1432);
  auto udp = parse_iperf3(
      R"({"start": {"test_start": {"protocol": "UDP", "num_streams": 1}}, "end": {"sum": {"bits_per_second": 9.4e9, "lost_percent": 0.3}}})",
      "f");
  ASSERT_TRUE(udp.ok());
  EXPECT_DOUBLE_EQ(udp->lost_percent, 0.3);
  EXPECT_FALSE(parse_iperf3(fixture("iperf3-tcp.json").substr(0, 500), "f").ok());
  EXPECT_FALSE(parse_iperf3(R"({"error": "unable to connect to server"})", "f").ok());
}

TEST(Parsers, NcclDebugLogs) {
  auto s = parse_nccl_log(fixture("nccl-debug-socket-fallback.log"), "f");
  ASSERT_TRUE(s.ok());
  EXPECT_EQ(s->version, "2.18.5+cuda12.2");
  EXPECT_EQ(s->nranks, 16);
  EXPECT_EQ(s->network, "Socket");
  EXPECT_EQ(s->net_socket, 2);
  EXPECT_EQ(s->p2p, 2);
  EXPECT_EQ(s->no_ib_device.size(), 1u);
  auto ib = parse_nccl_log(fixture("nccl-debug-ib-retry.log"), "f");
  ASSERT_TRUE(ib.ok());
  EXPECT_EQ(ib->network, "IB");
  EXPECT_EQ(ib->ib_devices.size(), 4u);
  EXPECT_EQ(ib->ib_devices[0], "mlx5_0:1/RoCE");
  EXPECT_EQ(ib->net_ib, 2);
  EXPECT_EQ(ib->net_ib_gdr, 1);
  EXPECT_TRUE(ib->nvls);
  EXPECT_GE(ib->errors.size(), 2u);
  EXPECT_FALSE(parse_nccl_log("just text\n", "f").ok());
}

TEST(Parsers, SystemOutputs) {
  auto t = parse_topo(fixture("nvidia-smi-topo.txt"), "f");
  ASSERT_TRUE(t.ok()) << format_diagnostics(t.errors());
  EXPECT_EQ(t->gpus.size(), 4u);
  EXPECT_EQ(t->nics.size(), 4u);
  EXPECT_EQ(t->link["GPU0"]["NIC0"], "PIX");
  EXPECT_EQ(t->link["GPU2"]["NIC2"], "PXB");
  EXPECT_EQ(t->nic_device["NIC1"], "mlx5_1");
  auto d = parse_ibv_devinfo(fixture("ibv_devinfo.txt"), "f");
  ASSERT_TRUE(d.ok());
  ASSERT_EQ(d->size(), 2u);
  EXPECT_EQ((*d)[0].ports[0].state, "PORT_ACTIVE");
  EXPECT_EQ((*d)[1].ports[0].active_mtu, 1024);
  EXPECT_EQ((*d)[1].ports[0].link_layer, "Ethernet");
  auto e = parse_ethtool(fixture("ethtool-S-pfc-storm.txt"), "f");
  ASSERT_TRUE(e.ok());
  EXPECT_DOUBLE_EQ(e->counters["rx_prio3_pause"], 8811209);
  EXPECT_FALSE(parse_ethtool("NIC statistics:\n  rx_packets: lots\n", "f").ok());
  auto ip = parse_ip_link(fixture("ip-d-link.txt"), "f");
  ASSERT_TRUE(ip.ok());
  ASSERT_EQ(ip->size(), 4u);
  EXPECT_EQ((*ip)[2].name, "ens1np0");
  EXPECT_EQ((*ip)[2].mtu, 9000);
  EXPECT_EQ((*ip)[2].state, "UP");
}

}  // namespace gf

namespace gf {
TEST(Parsers, NcclTestsNumberFormatsAndNA) {
  const std::string t =
      "# Collective test starting: all_gather_perf\n"
      "#       size         count      type   redop    root     time   algbw   busbw #wrong     "
      "time   algbw   busbw #wrong\n"
      " 17179869184    268435456     float    none      -1  1.3e+05  131.92  123.67    N/A  "
      "1.3e+05  132.01  123.76    N/A\n"
      "# Avg bus bandwidth    : 123.67 \n";
  auto r = parse_nccl_tests(t, "f");
  ASSERT_TRUE(r.ok()) << format_diagnostics(r.errors());
  EXPECT_EQ(r->collective, "all_gather");
  EXPECT_DOUBLE_EQ(r->rows[0].time_us, 1.3e5);
  EXPECT_EQ(r->rows[0].wrong, "N/A");
}
}  // namespace gf
